//! Scanning a git revision (`--rev`): a [`RevSnapshot`] of the revision's
//! tree (see [`crate::git`]) put through the same budget pass as a walk.

use std::io;
use std::path::Path;

use crate::discover::Candidate;
use crate::error::Error;
use crate::git::{GitError, RevSnapshot};
use crate::read::{outcome_of, ReadOutcome};

use super::{RootScan, Scanner};

impl Scanner {
    /// Scans revision `rev` of the git repository at `root` (a work tree or
    /// a bare repository) without a checkout: the reference's result on a
    /// fresh checkout of `rev` at `root`'s path. Fails with [`Error::Git`]
    /// when `root` is not a repository, `rev` does not resolve or an object
    /// is missing.
    pub fn scan_rev(&self, root: &Path, rev: &str) -> Result<RootScan, Error> {
        self.scan_rev_with_reader(root, rev, |_, bytes| outcome_of(bytes))
    }

    /// [`Scanner::scan_rev`], handing the bytes of each file the budget pass
    /// reaches to `read` (for callers that also hash them).
    pub(crate) fn scan_rev_with_reader(
        &self,
        root: &Path,
        rev: &str,
        read: impl FnMut(&Candidate, io::Result<Vec<u8>>) -> ReadOutcome,
    ) -> Result<RootScan, Error> {
        let mut snapshot = self.open_rev(root, rev)?;
        self.scan_snapshot(&mut snapshot, root, read)
    }

    /// Opens revision `rev` of the repository at `root` and discovers its
    /// candidates, for callers that scan it and then read more of its files
    /// (the audit reads the files the budget pass never reached).
    pub(crate) fn open_rev(&self, root: &Path, rev: &str) -> Result<RevSnapshot, Error> {
        let abs = self
            .abs_root(root)
            .ok_or_else(|| Error::Git("the current directory is gone".into()))?;
        Ok(RevSnapshot::open(&abs, rev, self.matchers())?)
    }

    /// Scans `snapshot` (opened by [`Scanner::open_rev`] on this scanner),
    /// handing the bytes of each file the budget pass reaches to `read`.
    pub(crate) fn scan_snapshot(
        &self,
        snapshot: &mut RevSnapshot,
        root: &Path,
        mut read: impl FnMut(&Candidate, io::Result<Vec<u8>>) -> ReadOutcome,
    ) -> Result<RootScan, Error> {
        snapshot.read_ahead()?;
        let mut failure: Option<GitError> = None;
        let candidates = snapshot.candidates().to_vec();
        let scan = self.scan_discovered(root, Some(candidates), |candidate| {
            let bytes = match snapshot.read(candidate) {
                Ok(bytes) => bytes,
                Err(e) => {
                    failure.get_or_insert(e);
                    Err(io::Error::other("missing object"))
                }
            };
            read(candidate, bytes)
        })?;
        match failure {
            Some(e) => Err(e.into()),
            None => Ok(scan),
        }
    }
}
