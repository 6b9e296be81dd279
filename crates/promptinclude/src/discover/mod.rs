//! Discovery: which files of a root are rule-file candidates, in the
//! reference's order.
//!
//! [`Matchers`] holds the compiled `name_pattern` ([`fnmatch`]) and
//! `gitignore` ([`gitwildmatch`]); [`walk`] visits the tree in parallel and
//! [`Candidate`]s come back sorted by their full path string in code points,
//! as Python's `sorted()` orders them.

pub mod rules;
pub mod walk;

use std::cmp::Ordering;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::config::Config;
use fnmatch::NamePattern;
use gitwildmatch::{IgnoreSpec, PatternError};
pub use promptinclude_pycompat::{fnmatch, gitwildmatch, path};

/// The compiled filters of a configuration.
#[derive(Debug)]
pub struct Matchers {
    /// The `name_pattern` a file name must match.
    pub name: NamePattern,
    /// The `gitignore` spec; `None` when the text has no pattern lines (no filtering).
    pub ignore: Option<IgnoreSpec>,
    /// Directories at this depth or deeper contribute nothing: the smallest
    /// depth `d` with `d >= max_depth` in Python (`i64::MAX` when none is,
    /// as for `nan` or `inf`).
    pub max_depth: i64,
}

impl Matchers {
    /// Whether the non-directory `name` in the directory `parent_rel`
    /// (relative, in matching form) is a rule-file candidate: its name
    /// matches `name_pattern` and the spec does not drop `rel`. Every walk
    /// (the filesystem's and a git tree's) decides with this.
    pub(crate) fn takes_file(&self, parent_rel: &str, name: &[u8]) -> bool {
        self.name.is_match_bytes(name) && !self.is_file_ignored(parent_rel, name)
    }

    /// Whether the spec prunes the directory `rel` (relative, in matching
    /// form): it matches `rel` or `rel + "/"` (no spec, no).
    pub(crate) fn is_dir_pruned(&self, rel: &str) -> bool {
        self.ignore
            .as_ref()
            .is_some_and(|spec| spec.is_dir_ignored(rel))
    }

    /// Whether the spec drops the file `name` in `parent_rel` (no spec, no).
    pub fn is_file_ignored(&self, parent_rel: &str, name: &[u8]) -> bool {
        self.ignore
            .as_ref()
            .is_some_and(|spec| spec.is_file_ignored(&path::join_rel(parent_rel, name)))
    }

    /// Compiles the filters of `config`. Fails exactly where the reference
    /// raises (a bad gitignore line), before anything is walked.
    pub fn new(config: &Config) -> Result<Matchers, MatcherError> {
        let ignore =
            IgnoreSpec::from_gitignore_text(&config.gitignore).map_err(MatcherError::Pattern)?;
        let name = NamePattern::new(&config.name_pattern).map_err(MatcherError::NamePattern)?;
        Ok(Matchers {
            name,
            ignore,
            max_depth: config
                .max_depth
                .integer_threshold()
                .map_or(i64::MAX, |d| i64::try_from(d).unwrap_or(i64::MAX)),
        })
    }
}

/// Why the filters of a configuration cannot be compiled.
#[derive(Debug)]
pub enum MatcherError {
    /// A `gitignore` line that makes the reference (pathspec) raise.
    Pattern(PatternError),
    /// The `name_pattern` could not be compiled (only regex size limits can do this).
    NamePattern(regex::Error),
}

impl std::fmt::Display for MatcherError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MatcherError::Pattern(_) => f.write_str("invalid gitignore pattern"),
            MatcherError::NamePattern(_) => f.write_str("invalid name_pattern"),
        }
    }
}

impl std::error::Error for MatcherError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MatcherError::Pattern(e) => Some(e),
            MatcherError::NamePattern(e) => Some(e),
        }
    }
}

/// A discovered rule-file candidate: its full path (root made absolute
/// lexically, joined with the names below it), as raw bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    path: Vec<u8>,
    piecewise: bool,
}

impl Candidate {
    /// Wraps a full path.
    pub fn new(path: Vec<u8>) -> Candidate {
        Candidate {
            path,
            piecewise: false,
        }
    }

    /// Wraps a full path found where the reference raises instead of
    /// returning (see [`walk`]): it is read even past `PATH_MAX`.
    pub(crate) fn new_piecewise(path: Vec<u8>) -> Candidate {
        Candidate {
            path,
            piecewise: true,
        }
    }

    /// Whether it is read piecewise past `PATH_MAX` (found by a walk that
    /// went on where the reference raises) rather than as the reference's
    /// `open` would (which fails with `ENAMETOOLONG` there).
    pub(crate) fn reads_piecewise(&self) -> bool {
        self.piecewise
    }

    /// The full path as bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.path
    }

    /// The full path as a filesystem path.
    pub fn as_path(&self) -> &Path {
        Path::new(OsStr::from_bytes(&self.path))
    }

    /// The path as the reference prints it. Names that are not UTF-8 are shown
    /// with U+FFFD (the reference itself cannot print them).
    pub fn display(&self) -> String {
        String::from_utf8_lossy(&self.path).into_owned()
    }

    /// The path as the tokenizer sees it: each undecodable byte is one U+FFFD,
    /// as tiktoken sees Python's surrogate-escaped `str`.
    pub(crate) fn token_text(&self) -> std::borrow::Cow<'_, str> {
        path::surrogate_replaced(&self.path)
    }
}

/// Orders full paths as Python orders their `str`s: by code point, where an
/// undecodable byte `b` is the lone surrogate U+DC00+`b`.
pub fn python_path_order(a: &[u8], b: &[u8]) -> Ordering {
    if let (Ok(_), Ok(_)) = (std::str::from_utf8(a), std::str::from_utf8(b)) {
        // UTF-8 byte order is code point order.
        return a.cmp(b);
    }
    path::code_points(a).cmp(path::code_points(b))
}

/// Sorts candidates into the reference's order.
pub(crate) fn sort_candidates(candidates: &mut [Candidate]) {
    candidates.sort_unstable_by(|a, b| python_path_order(&a.path, &b.path));
}
