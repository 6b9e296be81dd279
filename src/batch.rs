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

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

use crate::config::{Config, LoadNotes};
use crate::discover::path::abspath_of;
use crate::error::{Error, RootError};
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
    /// What loading that file found (unknown keys, lines, `A0_SET_` values).
    pub notes: LoadNotes,
    /// The index of its scanner, or why it has none.
    scanner: Result<usize, RootError>,
}

impl PlannedRoot {
    /// Why this root cannot be scanned (a broken project configuration), if so.
    pub fn error(&self) -> Option<&RootError> {
        self.scanner.as_ref().err()
    }
}

/// Roots with their resolved configurations and compiled scanners.
#[derive(Debug)]
pub struct Batch {
    scanners: Vec<Scanner>,
    roots: Vec<PlannedRoot>,
}

impl Batch {
    /// Resolves each root's configuration with `resolver` and compiles the
    /// distinct ones. Fails, before anything is walked, only when the
    /// configuration every root starts from (defaults, `--config`, flags)
    /// is one the reference rejects; a root whose own project file is
    /// broken gets a [`RootError`] and the others go on.
    pub fn plan<P: AsRef<Path> + Sync>(roots: &[P], resolver: &Resolver) -> Result<Batch, Error> {
        let mut scanners: Vec<Scanner> = Vec::new();
        let mut index: HashMap<Config, usize> = HashMap::new();
        let mut base = resolver.base.clone();
        resolver.overrides.apply(&mut base);
        scanner_index(&mut scanners, &mut index, base)?;
        let cwd = std::env::current_dir().ok().map(PathBuf::into_os_string);
        let resolved: Vec<Result<Resolved, Error>> = roots
            .par_iter()
            .map(|root| {
                let abs = abspath_of(root.as_ref(), cwd.as_deref().map(|c| c.as_bytes()));
                resolver.resolve(abs.as_deref())
            })
            .collect();
        let mut planned = Vec::with_capacity(roots.len());
        for (root, resolved) in roots.iter().zip(resolved) {
            let root = root.as_ref().to_path_buf();
            planned.push(match resolved {
                Ok(resolved) => PlannedRoot {
                    root,
                    scanner: scanner_index(&mut scanners, &mut index, resolved.config)
                        .map_err(|e| RootError::from(&e).in_file(&resolved.source)),
                    source: resolved.source,
                    notes: resolved.notes,
                },
                Err(e) => PlannedRoot {
                    root,
                    source: ConfigSource::Default,
                    notes: LoadNotes::default(),
                    scanner: Err(RootError::from(&e)),
                },
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

    /// The scanner (and so the configuration) of `root`, unless its
    /// configuration is broken.
    pub fn scanner<'a>(&'a self, root: &'a PlannedRoot) -> Result<&'a Scanner, &'a RootError> {
        root.scanner.as_ref().map(|&i| &self.scanners[i])
    }

    /// Runs `work` for every root that has a scanner on the rayon pool and
    /// hands each outcome to `sink` with the root's index, in input order.
    /// When `sink` returns `false` (its output is gone), no further root is
    /// started and the run ends as soon as the ones in flight finish.
    pub fn run<R: Send>(
        &self,
        work: impl Fn(usize, &PlannedRoot, &Scanner) -> Result<R, RootError> + Sync,
        mut sink: impl FnMut(usize, &PlannedRoot, Result<R, RootError>) -> bool,
    ) {
        in_input_order(
            &self.roots,
            |i, root| match self.scanner(root) {
                Ok(scanner) => work(i, root, scanner),
                Err(e) => Err(e.clone()),
            },
            |i, root, result| sink(i, root, result),
        );
    }

    /// Scans every root with its own configuration, in input order (see
    /// [`Batch::run`] for `sink`'s return value).
    pub fn scan(&self, sink: impl FnMut(usize, &PlannedRoot, Result<RootScan, RootError>) -> bool) {
        self.run(
            |_, root, scanner| {
                scanner
                    .scan_detailed(&root.root)
                    .map_err(|e| RootError::from(&e))
            },
            sink,
        );
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
        // The base configuration's scanner, and the project file's.
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
        batch.scan(|i, root, scan| {
            seen.push((i, root.root.clone(), scan.unwrap().is_dir));
            true
        });
        assert_eq!(seen, vec![(0, a, true), (1, b, true), (2, c, true)]);
    }
}

#[cfg(test)]
mod stop_tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn a_sink_that_gives_up_stops_new_work() {
        let started = AtomicUsize::new(0);
        let items: Vec<usize> = (0..20_000).collect();
        let mut seen = 0;
        in_input_order(
            &items,
            |_, &item| {
                started.fetch_add(1, AtomicOrdering::SeqCst);
                item
            },
            |_, _, _| {
                seen += 1;
                seen < 3
            },
        );
        assert_eq!(seen, 3);
        // At most the first window (plus the items it spawned) ever ran.
        assert!(started.load(AtomicOrdering::SeqCst) <= 2 * WINDOW, "{}", started.load(AtomicOrdering::SeqCst));
    }

    #[test]
    fn a_broken_project_file_fails_only_its_root() {
        let dir = tempfile::tempdir().unwrap();
        let roots: Vec<PathBuf> = (0..3).map(|i| dir.path().join(format!("r{i}"))).collect();
        for root in &roots {
            std::fs::create_dir_all(root).unwrap();
        }
        let file = crate::project::project_config_path(&roots[1], None);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{\n  \"max_depth\": \"deep\"\n}").unwrap();
        let batch = Batch::plan(&roots, &Resolver::default()).unwrap();
        let mut outcomes = Vec::new();
        batch.scan(|i, _, scan| {
            outcomes.push((i, scan.map(|s| s.is_dir).map_err(|e| (e.kind, e.line, e.key))));
            true
        });
        assert_eq!(
            outcomes,
            vec![
                (0, Ok(true)),
                (1, Err(("config".to_string(), Some(2), Some("max_depth".to_string())))),
                (2, Ok(true))
            ]
        );
    }
}
