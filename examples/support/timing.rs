//! Timing helpers shared by the examples that benchmark (`#[path]`-included:
//! a directory without `main.rs` is not an example of its own).

use std::time::{Duration, Instant};

/// The wall time of each of `runs` calls of `f`.
pub fn timed(runs: usize, mut f: impl FnMut()) -> Vec<Duration> {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect()
}

/// The median of `times` (not empty).
pub fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted[sorted.len() / 2]
}
