//! What the library crates' unit tests share (a dev-dependency only).
//!
//! Random numbers for randomized tests (a fresh seed each run, printed, so
//! that a failure can be replayed: `PROMPTINCLUDE_TEST_SEED`), and small
//! path alphabets for the rules that normalise paths.
#![deny(missing_docs)]

/// `next(n)`: a number below `n` (> 0), from xorshift64 over a fresh seed
/// (or `PROMPTINCLUDE_TEST_SEED`'s), which is printed first.
pub fn seeded() -> impl FnMut(usize) -> usize {
    let seed = std::env::var("PROMPTINCLUDE_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
        })
        | 1;
    eprintln!("seed {seed} (PROMPTINCLUDE_TEST_SEED replays it)");
    let mut state = seed;
    move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}

/// Every path of up to `n` parts from a small alphabet of names, dots
/// and slashes (for the rules that normalise paths).
pub fn small_paths(n: usize) -> Vec<String> {
    const PARTS: [&str; 6] = ["", "/", "a", ".", "..", "b.md"];
    let mut paths = vec![String::new()];
    for _ in 0..n {
        let longer: Vec<String> = paths
            .iter()
            .flat_map(|p| PARTS.iter().map(move |part| format!("{p}{part}")))
            .collect();
        paths.extend(longer);
        paths.sort();
        paths.dedup();
    }
    paths
}
