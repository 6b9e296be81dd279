//! Many roots, each with the configuration the host would give it.
//!
//! [`Batch::plan`] compiles the configuration every root starts from (the
//! defaults, `--config`, the flags); [`Batch::run`] then works on the roots
//! on the shared rayon pool, resolving each root's own configuration (see
//! [`crate::project`]) as it starts, sharing one compiled [`Scanner`] per
//! distinct configuration, and hands results out in input order as soon as
//! they are ready. At most a window of roots is in flight, so memory grows
//! with the window, not with the number of roots, and a sink that stops
//! (its output is gone) stops the batch without resolving the rest.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::config::{Config, LoadNotes};
use crate::discover::path::abspath_of;
use crate::error::{Error, RootError};
use crate::ordered::in_input_order;
use crate::project::{ConfigSource, Resolver};
use crate::scan::{RootScan, Scanner};
use crate::trust::ReadPolicy;

/// One root of a batch and the configuration decided for it.
#[derive(Clone, Debug)]
pub struct PlannedRoot {
    /// The root as given.
    pub root: PathBuf,
    /// Which configuration file applied.
    pub source: ConfigSource,
    /// What loading that file found (unknown keys, lines, `A0_SET_` values).
    pub notes: LoadNotes,
    /// Its compiled scanner, or why it has none.
    scanner: Result<Arc<Scanner>, RootError>,
}

impl PlannedRoot {
    /// The scanner (and so the configuration) of this root, unless its
    /// configuration is broken.
    pub fn scanner(&self) -> Result<&Scanner, &RootError> {
        self.scanner.as_deref()
    }

    /// [`PlannedRoot::scanner`], shared.
    pub fn shared_scanner(&self) -> Result<Arc<Scanner>, &RootError> {
        self.scanner.as_ref().map(Arc::clone)
    }
}

/// Roots, the rule that decides their configurations, and the scanners
/// compiled so far.
#[derive(Debug)]
pub struct Batch {
    roots: Vec<PathBuf>,
    resolver: Resolver,
    cwd: Option<OsString>,
    policy: ReadPolicy,
    /// The `name_pattern` every root starts from (defaults, `--config`, flags).
    base_pattern: String,
    scanners: Mutex<HashMap<Config, Arc<Scanner>>>,
}

impl Batch {
    /// Prepares `roots` with `resolver`. Fails, before anything is walked,
    /// only when the configuration every root starts from (defaults,
    /// `--config`, flags) is one the reference rejects; the error names the
    /// configuration file and line, or the environment variable, the bad
    /// value came from. A root whose own project file is broken gets a
    /// [`RootError`] when its turn comes, and the others go on.
    pub fn plan<P: AsRef<Path>>(roots: &[P], resolver: &Resolver) -> Result<Batch, RootError> {
        Batch::plan_with_policy(roots, resolver, ReadPolicy::reference())
    }

    /// [`Batch::plan`], reading every root's rule files under `policy`.
    pub fn plan_with_policy<P: AsRef<Path>>(
        roots: &[P],
        resolver: &Resolver,
        policy: ReadPolicy,
    ) -> Result<Batch, RootError> {
        let mut base = resolver.base.clone();
        resolver.overrides.apply(&mut base);
        let scanner = Scanner::with_policy(base.clone(), policy.clone(), None)
            .map_err(|e| RootError::new(&e, &resolver.base_source, &resolver.base_notes))?;
        Ok(Batch {
            roots: roots.iter().map(|r| r.as_ref().to_path_buf()).collect(),
            resolver: resolver.clone(),
            cwd: std::env::current_dir().ok().map(PathBuf::into_os_string),
            policy,
            base_pattern: base.name_pattern.clone(),
            scanners: Mutex::new(HashMap::from([(base, Arc::new(scanner))])),
        })
    }

    /// The roots, in input order.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Decides `root`'s configuration and finds (or compiles) its scanner.
    pub fn plan_root(&self, root: &Path) -> PlannedRoot {
        let abs = abspath_of(root, self.cwd.as_deref().map(|c| c.as_bytes()));
        let resolved = match self.resolver.resolve(abs.as_deref(), &self.policy) {
            Ok(resolved) => resolved,
            Err(e) => {
                return PlannedRoot {
                    root: root.to_path_buf(),
                    source: ConfigSource::Default,
                    notes: LoadNotes::default(),
                    scanner: Err(RootError::new(
                        &Error::Config(e),
                        &ConfigSource::Default,
                        &LoadNotes::default(),
                    )),
                }
            }
        };
        let scanner = self
            .scanner_for(resolved.config)
            .map_err(|e| RootError::new(&e, &resolved.source, &resolved.notes));
        PlannedRoot {
            root: root.to_path_buf(),
            source: resolved.source,
            notes: resolved.notes,
            scanner,
        }
    }

    /// One root's scan and rendered section with the configuration the host
    /// would give it, from one walk, `scan` doing the scanning (on disk, at a
    /// revision, or with a reader of its own); or why the root has none.
    /// `render ROOT`, the agent hooks and `context --agent agent-zero` share it.
    pub fn render_root(
        &self,
        root: &Path,
        scan: impl FnOnce(&Scanner, &Path) -> Result<RootScan, Error>,
    ) -> Result<(RootScan, String), RootError> {
        let planned = self.plan_root(root);
        let scanner = planned.scanner().map_err(Clone::clone)?;
        let scan = scan(scanner, &planned.root)
            .map_err(|e| RootError::new(&e, &planned.source, &planned.notes))?;
        let section = crate::render::render(scan.result(), &scanner.config().name_pattern);
        Ok((scan, section))
    }

    /// The scanner for `config`, compiled on first use.
    fn scanner_for(&self, config: Config) -> Result<Arc<Scanner>, Error> {
        // A poisoned lock only means another root panicked mid-insert; the map is intact.
        let mut scanners = self.scanners.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(scanner) = scanners.get(&config) {
            return Ok(Arc::clone(scanner));
        }
        // A project's own configuration that changes `name_pattern` reads
        // what it adds under the policy's rule for widened patterns.
        let trusted = (config.name_pattern != self.base_pattern).then(|| self.base_pattern.clone());
        let scanner = Arc::new(Scanner::with_policy(
            config.clone(),
            self.policy.clone(),
            trusted,
        )?);
        scanners.insert(config, Arc::clone(&scanner));
        Ok(scanner)
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
            |i, root| {
                let planned = self.plan_root(root);
                let outcome = match planned.scanner() {
                    Ok(scanner) => work(i, &planned, scanner)
                        .map_err(|e| RootError::new(&e, &planned.source, &planned.notes)),
                    Err(e) => Err(e.clone()),
                };
                (planned, outcome)
            },
            |i, _, (planned, outcome)| sink(i, &planned, outcome),
        );
    }

    /// Scans every root with its own configuration, in input order (see
    /// [`Batch::run`] for `sink`'s return value).
    pub fn scan(&self, sink: impl FnMut(usize, &PlannedRoot, Result<RootScan, RootError>) -> bool) {
        self.run(|_, root, scanner| scanner.scan_detailed(&root.root), sink);
    }
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
        let mut sources = Vec::new();
        batch.scan(|_, root, _| {
            sources.push(root.source.clone());
            true
        });
        // The base configuration's scanner, and the project file's.
        assert_eq!(batch.scanners.lock().unwrap().len(), 2);
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
                    Err((
                        crate::error::RootErrorKind::Config,
                        Some(2),
                        Some("max_depth".to_string())
                    ))
                ),
                (2, Ok(true))
            ]
        );
    }
}
