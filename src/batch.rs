//! Many roots, each with the configuration the host would give it.
//!
//! [`Batch::plan`] resolves every root's configuration (see
//! [`crate::project`]) and compiles one [`Scanner`] per distinct
//! configuration, so a thousand roots without project files still share one
//! set of compiled patterns. [`Batch::run`] then does any per-root work on
//! the shared rayon pool and hands results out in input order as soon as
//! they are ready, with at most a window of roots in flight, so memory grows
//! with the window, not with the number of roots.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::config::{Config, UnknownKey};
use crate::discover::path::abspath_of;
use crate::error::Error;
use crate::project::{ConfigSource, Resolved, Resolver};
use crate::scan::{RootScan, Scanner};

/// Roots worked on concurrently before their results are handed out.
const WINDOW: usize = 256;

/// One root of a batch and the configuration decided for it.
#[derive(Clone, Debug)]
pub struct PlannedRoot {
    /// The root as given.
    pub root: PathBuf,
    /// Which configuration file applied.
    pub source: ConfigSource,
    /// That file's unknown keys.
    pub unknown_keys: Vec<UnknownKey>,
    scanner: usize,
}

/// Roots with their resolved configurations and compiled scanners.
#[derive(Debug)]
pub struct Batch {
    scanners: Vec<Scanner>,
    roots: Vec<PlannedRoot>,
}

impl Batch {
    /// Resolves each root's configuration with `resolver` and compiles the
    /// distinct ones. Fails, before anything is walked, on the first root
    /// whose configuration file is broken or whose patterns the reference
    /// would reject.
    pub fn plan<P: AsRef<Path> + Sync>(roots: &[P], resolver: &Resolver) -> Result<Batch, Error> {
        let cwd = std::env::current_dir().ok().map(PathBuf::into_os_string);
        let resolved: Vec<Resolved> = roots
            .par_iter()
            .map(|root| {
                let abs = abspath_of(root.as_ref(), cwd.as_deref().map(|c| c.as_bytes()));
                resolver.resolve(abs.as_deref())
            })
            .collect::<Result<_, Error>>()?;
        let mut scanners: Vec<Scanner> = Vec::new();
        let mut index: HashMap<Config, usize> = HashMap::new();
        let mut planned = Vec::with_capacity(roots.len());
        for (root, resolved) in roots.iter().zip(resolved) {
            let scanner = scanner_index(&mut scanners, &mut index, resolved.config)?;
            planned.push(PlannedRoot {
                root: root.as_ref().to_path_buf(),
                source: resolved.source,
                unknown_keys: resolved.unknown_keys,
                scanner,
            });
        }
        Ok(Batch {
            scanners,
            roots: planned,
        })
    }

    /// The planned roots, in input order.
    pub fn roots(&self) -> &[PlannedRoot] {
        &self.roots
    }

    /// The scanner (and so the configuration) of `root`.
    pub fn scanner(&self, root: &PlannedRoot) -> &Scanner {
        &self.scanners[root.scanner]
    }

    /// Runs `work` for every root (with its index) on the rayon pool and
    /// hands each result to `sink` with the root's index, in input order.
    pub fn run<R: Send>(
        &self,
        work: impl Fn(usize, &PlannedRoot, &Scanner) -> R + Sync,
        mut sink: impl FnMut(usize, &PlannedRoot, R),
    ) {
        in_input_order(
            &self.roots,
            |i, root| work(i, root, self.scanner(root)),
            |i, root, result| sink(i, root, result),
        );
    }

    /// Scans every root with its own configuration, in input order.
    pub fn scan(&self, sink: impl FnMut(usize, &PlannedRoot, RootScan)) {
        self.run(|_, root, scanner| scanner.scan_detailed(&root.root), sink);
    }
}

/// Runs `work` on every item on the rayon pool and hands the results to
/// `sink` in input order, as soon as each result and all before it are
/// ready; memory holds at most [`WINDOW`] results.
///
/// Called from outside the pool (the command-line tool's main thread), the
/// calling thread only hands results to `sink` while the pool keeps working,
/// so output streams and `sink`'s own work (rendering, writing, progress)
/// overlaps the scanning: at most [`WINDOW`] items past the oldest unsunk
/// one are in flight. Called from a pool thread, which must not block
/// waiting, it works through windows of [`WINDOW`] items instead. A panic
/// in `work` is re-raised here.
pub fn in_input_order<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(usize, &T) -> R + Sync,
    mut sink: impl FnMut(usize, &T, R),
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
                sink(start + k, item, result);
            }
        }
        return;
    }
    let work = &work;
    let (sender, receiver) = std::sync::mpsc::channel();
    rayon::in_place_scope(|scope| {
        let mut ready: HashMap<usize, R> = HashMap::new();
        let (mut spawned, mut next) = (0, 0);
        while next < items.len() {
            while spawned < items.len() && spawned < next + WINDOW {
                let (i, sender) = (spawned, sender.clone());
                scope.spawn(move |_| {
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
                sink(next, &items[next], result);
                next += 1;
            }
        }
    });
}

/// The index of the scanner for `config`, compiling it on first use.
fn scanner_index(
    scanners: &mut Vec<Scanner>,
    index: &mut HashMap<Config, usize>,
    config: Config,
) -> Result<usize, Error> {
    if let Some(&i) = index.get(&config) {
        return Ok(i);
    }
    scanners.push(Scanner::new(config.clone())?);
    index.insert(config, scanners.len() - 1);
    Ok(scanners.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
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
            },
        );
        assert_eq!(seen, items);
    }

    #[test]
    fn a_panic_in_work_reaches_the_caller() {
        let items: Vec<usize> = (0..50).collect();
        let outcome = std::panic::catch_unwind(|| {
            in_input_order(&items, |i, _| assert!(i != 7, "boom"), |_, _, _| {})
        });
        assert!(outcome.is_err());
    }

    #[test]
    fn shares_scanners_and_keeps_order() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        for root in [&a, &b, &c] {
            std::fs::create_dir_all(root).unwrap();
        }
        let file = crate::project::project_config_path(&b, None);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, r#"{"max_file_count": 1}"#).unwrap();
        let batch = Batch::plan(&[&a, &b, &c], &Resolver::default()).unwrap();
        assert_eq!(batch.scanners.len(), 2);
        let sources: Vec<_> = batch.roots().iter().map(|r| r.source.clone()).collect();
        assert_eq!(
            sources,
            vec![
                ConfigSource::Default,
                ConfigSource::File(file),
                ConfigSource::Default
            ]
        );
        let mut seen = Vec::new();
        batch.scan(|i, root, scan| seen.push((i, root.root.clone(), scan.is_dir)));
        assert_eq!(seen, vec![(0, a, true), (1, b, true), (2, c, true)]);
    }
}
