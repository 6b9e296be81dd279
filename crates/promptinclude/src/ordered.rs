//! Parallel work whose results are handed out in input order.
//!
//! Batches of roots run on the shared rayon pool; output (JSON Lines,
//! reports, bundle files) must come out in the order the roots were given,
//! as soon as possible, in bounded memory, and stop early when the output
//! is gone (`| head`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use rayon::prelude::*;

/// Items worked on concurrently before their results are handed out.
pub const WINDOW: usize = 256;

/// Runs `work` on every item on the rayon pool and hands the results to
/// `sink` in input order (until `sink` returns `false`), as soon as each result and all before it are
/// ready; memory holds at most `WINDOW` results.
///
/// Called from outside the pool (the command-line tool's main thread), the
/// calling thread only hands results to `sink` while the pool keeps working,
/// so output streams and `sink`'s own work (rendering, writing, progress)
/// overlaps the scanning: at most `WINDOW` items past the oldest unsunk
/// one are in flight. Called from a pool thread, which must not block
/// waiting, it works through windows of `WINDOW` items instead. A panic
/// in `work` is re-raised here.
pub fn in_input_order<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(usize, &T) -> R + Sync,
    mut sink: impl FnMut(usize, &T, R) -> bool,
) {
    if rayon::current_thread_index().is_some() {
        for (w, window) in items.chunks(WINDOW).enumerate() {
            let start = w * WINDOW;
            let results: Vec<R> = window
                .par_iter()
                .enumerate()
                .map(|(k, item)| work(start + k, item))
                .collect();
            for (k, (item, result)) in window.iter().zip(results).enumerate() {
                if !sink(start + k, item, result) {
                    return;
                }
            }
        }
        return;
    }
    let work = &work;
    // Set when the sink gives up: items spawned but not yet started skip their work.
    let stopped = &AtomicBool::new(false);
    let (sender, receiver) = std::sync::mpsc::channel();
    rayon::in_place_scope(|scope| {
        let mut ready: HashMap<usize, R> = HashMap::new();
        let (mut spawned, mut next) = (0, 0);
        while next < items.len() {
            while spawned < items.len() && spawned < next + WINDOW {
                let (i, sender) = (spawned, sender.clone());
                scope.spawn(move |_| {
                    if stopped.load(AtomicOrdering::Relaxed) {
                        return;
                    }
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        work(i, &items[i])
                    }));
                    // The receiver outlives the scope, so this cannot fail.
                    let _ = sender.send((i, result));
                });
                spawned += 1;
            }
            // Every spawned item sends exactly once, and `next` is spawned
            // and not yet received, so a message is due.
            let Ok((i, result)) = receiver.recv() else {
                unreachable!("a spawned item did not report")
            };
            match result {
                Ok(result) => ready.insert(i, result),
                Err(panic) => std::panic::resume_unwind(panic),
            };
            while let Some(result) = ready.remove(&next) {
                if !sink(next, &items[next], result) {
                    stopped.store(true, AtomicOrdering::Relaxed);
                    return;
                }
                next += 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    #[test]
    fn results_stream_in_order_while_later_items_run() {
        // Item 1 finishes only after the sink has seen item 0: with all
        // results held back until the end this would time out.
        let sunk_first = AtomicBool::new(false);
        let items: Vec<usize> = (0..600).collect();
        let mut seen = Vec::new();
        in_input_order(
            &items,
            |i, &item| {
                if i == 1 {
                    let deadline = Instant::now() + Duration::from_secs(20);
                    while !sunk_first.load(Ordering::SeqCst) {
                        assert!(Instant::now() < deadline, "item 0 was not handed out early");
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
                item * 2
            },
            |i, &item, result| {
                assert_eq!(result, item * 2);
                seen.push(i);
                sunk_first.store(true, Ordering::SeqCst);
                true
            },
        );
        assert_eq!(seen, items);
    }

    #[test]
    fn a_panic_in_work_reaches_the_caller() {
        let items: Vec<usize> = (0..50).collect();
        let outcome = std::panic::catch_unwind(|| {
            in_input_order(&items, |i, _| assert!(i != 7, "boom"), |_, _, _| true)
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn a_sink_that_gives_up_stops_new_work() {
        let started = AtomicUsize::new(0);
        let items: Vec<usize> = (0..20_000).collect();
        let mut seen = 0;
        in_input_order(
            &items,
            |_, &item| {
                started.fetch_add(1, Ordering::SeqCst);
                item
            },
            |_, _, _| {
                seen += 1;
                seen < 3
            },
        );
        assert_eq!(seen, 3);
        // At most the first window (plus the items it spawned) ever ran.
        assert!(
            started.load(Ordering::SeqCst) <= 2 * WINDOW,
            "{}",
            started.load(Ordering::SeqCst)
        );
    }
}
