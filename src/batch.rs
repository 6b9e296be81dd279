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

use crate::ordered::in_input_order;

use crate::config::{Config, LoadNotes};
use crate::discover::path::abspath_of;
use crate::error::{Error, RootError};
use crate::project::{ConfigSource, Resolved, Resolver};
use crate::scan::{RootScan, Scanner};

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
                        .map_err(|e| RootError::new(&e, &resolved.source, &resolved.notes)),
                    source: resolved.source,
                    notes: resolved.notes,
                },
                Err(e) => PlannedRoot {
                    root,
                    source: ConfigSource::Default,
                    notes: LoadNotes::default(),
                    scanner: Err(RootError::new(
                        &e,
                        &ConfigSource::Default,
                        &LoadNotes::default(),
                    )),
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
        work: impl Fn(usize, &PlannedRoot, &Scanner) -> Result<R, Error> + Sync,
        mut sink: impl FnMut(usize, &PlannedRoot, Result<R, RootError>) -> bool,
    ) {
        in_input_order(
            &self.roots,
            |i, root| match self.scanner(root) {
                Ok(scanner) => work(i, root, scanner)
                    .map_err(|e| RootError::new(&e, &root.source, &root.notes)),
                Err(e) => Err(e.clone()),
            },
            |i, root, result| sink(i, root, result),
        );
    }

    /// Scans every root with its own configuration, in input order (see
    /// [`Batch::run`] for `sink`'s return value).
    pub fn scan(&self, sink: impl FnMut(usize, &PlannedRoot, Result<RootScan, RootError>) -> bool) {
        self.run(|_, root, scanner| scanner.scan_detailed(&root.root), sink);
    }
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
mod error_tests {
    use super::*;

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
            outcomes.push((
                i,
                scan.map(|s| s.is_dir).map_err(|e| (e.kind, e.line, e.key)),
            ));
            true
        });
        assert_eq!(
            outcomes,
            vec![
                (0, Ok(true)),
                (
                    1,
                    Err(("config".to_string(), Some(2), Some("max_depth".to_string())))
                ),
                (2, Ok(true))
            ]
        );
    }
}
