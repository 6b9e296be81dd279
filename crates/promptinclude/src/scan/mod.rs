//! Putting the stages together for one root: walk, read, count, allocate.
//! Many roots share a [`Scanner`] through [`crate::batch::Batch`], which
//! runs them on the shared rayon pool (every directory of every root is a
//! work item) and hands results back in input order.

#[cfg(feature = "git")]
mod rev;

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::budget::{allocate, Allocation};
use crate::config::Config;
use crate::discover::{path::abspath_of, walk::discover, Candidate, Matchers};
use crate::error::Error;
use crate::model::ScanResult;
use crate::read::ReadOutcome;
use crate::trust::{Guard, ReadPolicy};

/// Everything known about one scanned root.
#[derive(Clone, Debug)]
pub struct RootScan {
    /// The root made absolute lexically, as the reference does.
    pub abs_root: PathBuf,
    /// Whether the root is a directory (following links). If not, the result is empty.
    pub is_dir: bool,
    /// All candidates, in the reference's order.
    pub candidates: Vec<Candidate>,
    /// The budget pass's outcome (result, dispositions, facts).
    pub allocation: Allocation,
}

impl RootScan {
    /// The reference's result.
    pub fn result(&self) -> &ScanResult {
        &self.allocation.result
    }

    /// Takes the reference's result.
    pub fn into_result(self) -> ScanResult {
        self.allocation.result
    }
}

/// A compiled configuration, ready to scan any number of roots, and the
/// policy its rule files are read under.
#[derive(Debug)]
pub struct Scanner {
    config: Config,
    matchers: Matchers,
    cwd: Option<Vec<u8>>,
    policy: ReadPolicy,
    /// The user's `name_pattern`, when `config` (a project's own) replaced it.
    trusted_pattern: Option<String>,
}

impl Scanner {
    /// Compiles `config`, to read as the reference reads. Fails where the
    /// reference raises, before any walking.
    pub fn new(config: Config) -> Result<Scanner, Error> {
        Scanner::with_policy(config, ReadPolicy::reference(), None)
    }

    /// Compiles `config`, to read under `policy`. `trusted_pattern` is the
    /// user's `name_pattern` when `config` is a project's own that replaced
    /// it (see [`ReadPolicy::committed_only_when_widened`]).
    pub(crate) fn with_policy(
        config: Config,
        policy: ReadPolicy,
        trusted_pattern: Option<String>,
    ) -> Result<Scanner, Error> {
        let matchers = Matchers::new(&config)?;
        let cwd = std::env::current_dir()
            .ok()
            .map(|p| p.into_os_string().into_encoded_bytes());
        Ok(Scanner {
            config,
            matchers,
            cwd,
            policy,
            trusted_pattern,
        })
    }

    /// The reading policy for the root `root`: reads a candidate the way
    /// this scanner's scans do.
    pub fn guard(&self, root: &Path) -> Guard {
        if self.policy.is_reference() {
            return Guard::reference();
        }
        let abs = self.abs_root(root).unwrap_or_else(|| root.to_path_buf());
        Guard::new(&abs, &self.policy, self.trusted_pattern.as_deref())
    }

    /// The configuration this scanner applies.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Whether what a read gives depends on git's index (files a widened
    /// `name_pattern` adds are read only when tracked), which no change
    /// notification of the tree covers.
    pub(crate) fn reads_depend_on_git(&self) -> bool {
        self.policy.committed_only_when_widened && self.trusted_pattern.is_some()
    }

    /// Whether a rule file reached through a symbolic link may be read
    /// depends on git (the unattended policy reads one only when `HEAD`
    /// holds every link on the way).
    pub(crate) fn link_reads_depend_on_git(&self) -> bool {
        self.policy.links == crate::trust::Links::Inside
    }

    /// The compiled matchers.
    pub fn matchers(&self) -> &Matchers {
        &self.matchers
    }

    /// `os.path.abspath(root)`, or `None` for a relative root when the
    /// current directory is gone.
    pub fn abs_root(&self, root: &Path) -> Option<PathBuf> {
        abspath_of(root, self.cwd.as_deref())
    }

    /// Scans one root: the reference's result for it, or the error where
    /// the reference's own arithmetic raises for this configuration
    /// ([`Error::Raised`]).
    pub fn scan(&self, root: &Path) -> Result<ScanResult, Error> {
        self.scan_detailed(root).map(RootScan::into_result)
    }

    /// Scans one root on disk, or with `rev` that revision of it read as a
    /// git repository ([`Scanner::scan_rev`]).
    pub fn scan_at(&self, root: &Path, rev: Option<&str>) -> Result<RootScan, Error> {
        match rev {
            None => self.scan_detailed(root),
            #[cfg(feature = "git")]
            Some(rev) => self.scan_rev(root, rev),
            #[cfg(not(feature = "git"))]
            Some(_) => Err(no_git()),
        }
    }

    /// Scans one root, keeping candidates and per-candidate facts.
    pub fn scan_detailed(&self, root: &Path) -> Result<RootScan, Error> {
        let guard = self.guard(root);
        self.scan_with_reader(root, |candidate| guard.read(candidate))
    }

    /// Scans one root, reading each file the budget pass reaches with `read`
    /// (for callers that also hash or inspect the bytes).
    pub fn scan_with_reader(
        &self,
        root: &Path,
        read: impl FnMut(&Candidate) -> ReadOutcome,
    ) -> Result<RootScan, Error> {
        self.scan_with_walk(root, discover, read)
    }

    /// [`Scanner::scan_with_reader`], discovering the candidates of a root
    /// that is a directory with `walk` (which must return what [`discover`]
    /// does; the audit's walk also reports what the scan misses).
    pub(crate) fn scan_with_walk(
        &self,
        root: &Path,
        walk: impl FnOnce(&[u8], &Matchers) -> Vec<Candidate>,
        read: impl FnMut(&Candidate) -> ReadOutcome,
    ) -> Result<RootScan, Error> {
        let abs = self.abs_root(root);
        // os.path.isdir (links followed; false past PATH_MAX, as for the reference).
        let is_dir = abs
            .as_ref()
            .is_some_and(|a| crate::sys::is_dir(a.as_os_str().as_bytes()));
        let candidates = match (&abs, is_dir) {
            (Some(abs), true) => Some(walk(abs.as_os_str().as_bytes(), &self.matchers)),
            _ => None,
        };
        self.scan_discovered(root, candidates, read)
    }

    /// The sibling of [`Scanner::scan_with_walk`] for a tree that is not
    /// on the filesystem (such as a git revision): `candidates` are what a
    /// walk of the root found, in the reference's order, or `None` when the
    /// root is not a directory (the result is empty). Nothing is checked on
    /// the filesystem; `read` reads each file the budget pass reaches.
    pub(crate) fn scan_discovered(
        &self,
        root: &Path,
        candidates: Option<Vec<Candidate>>,
        read: impl FnMut(&Candidate) -> ReadOutcome,
    ) -> Result<RootScan, Error> {
        let given = root.to_string_lossy().into_owned();
        let abs = self.abs_root(root);
        let is_dir = candidates.is_some();
        let candidates = candidates.unwrap_or_default();
        let allocation = allocate(given, &candidates, &self.config, read)?;
        Ok(RootScan {
            abs_root: abs.unwrap_or_else(|| root.to_path_buf()),
            is_dir,
            candidates,
            allocation,
        })
    }
}

/// Scans `root` with `config`: the reference's result.
pub fn scan(root: impl AsRef<Path>, config: &Config) -> Result<ScanResult, Error> {
    Scanner::new(config.clone())?.scan(root.as_ref())
}

/// The error of a revision scan in a build without the `git` feature.
#[cfg(not(feature = "git"))]
pub(crate) fn no_git() -> Error {
    Error::Git("--rev needs promptinclude built with the `git` feature".into())
}
