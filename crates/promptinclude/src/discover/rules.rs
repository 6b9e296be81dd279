//! The walk's rules, decided in one place: which subdirectories are
//! entered, listed or passed over, and where the reference's limits
//! (`PATH_MAX`, its recursion depth) apply. The filesystem walk
//! ([`super::walk`]) and the walk of a git revision's tree (`crate::git`)
//! both decide with these, so a revision is walked exactly as its checkout
//! would be (the rules themselves are explained in `walk`'s documentation).

use crate::sys::PATH_MAX;

use super::Matchers;

/// The depth of the directories whose listing can make the reference raise
/// `RecursionError` (see `walk`'s documentation).
pub(crate) const RECURSION_DIR_DEPTH: i64 = 995;

/// What a walk knows about a directory before listing it.
#[derive(Clone, Copy, Debug)]
pub struct DirState<'a> {
    /// Its full path.
    pub full: &'a [u8],
    /// Its depth (the root is 0).
    pub depth: i64,
    /// Whether nothing below it is a candidate (too deep, or pruned).
    pub blocked: bool,
    /// Whether the reference's `os.walk` lists it.
    pub listed_by_reference: bool,
}

/// What is decided once per directory, before listing it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DirRules {
    /// `/`, or nothing when the directory's path already ends with one.
    pub separator: &'static [u8],
    /// The depth of its entries.
    pub child_depth: i64,
    /// Whether its subdirectories are walked (not blocked, not too deep).
    pub descend: bool,
    /// Whether the reference's recursion limit can be reached here.
    pub check_recursion: bool,
    /// Whether subdirectories at exactly `max_depth` are still looked at.
    pub probe_depth_cut: bool,
}

impl DirRules {
    /// The rules for `dir` under `matchers`. `limits`: whether `PATH_MAX`
    /// and the recursion limit apply (off when walking past them, after the
    /// reference would have raised); `exhaustive`: whether the walk also
    /// looks at what the scan never reaches (the audit).
    pub fn new(matchers: &Matchers, dir: DirState<'_>, limits: bool, exhaustive: bool) -> DirRules {
        let max_depth = matchers.max_depth;
        let separator: &'static [u8] = if dir.full.ends_with(b"/") { b"" } else { b"/" };
        let child_depth = dir.depth + separator.len() as i64;
        DirRules {
            separator,
            child_depth,
            descend: !dir.blocked && child_depth < max_depth,
            check_recursion: limits && dir.listed_by_reference && dir.depth == RECURSION_DIR_DEPTH,
            // A directory at exactly max_depth is listed by os.walk; only its
            // recursion check needs it (and an exhaustive walk).
            probe_depth_cut: !dir.blocked
                && child_depth == max_depth
                && (exhaustive || (limits && child_depth == RECURSION_DIR_DEPTH)),
        }
    }

    /// Whether a subdirectory (`is_link`: a link to one) of an unblocked
    /// directory matters to the scan: one to enter, one whose listing the
    /// recursion check needs, or one at exactly `max_depth` to probe. A link
    /// is never entered.
    pub(crate) fn visits_subdir(&self, is_link: bool) -> bool {
        self.descend && (self.check_recursion || !is_link) || (!is_link && self.probe_depth_cut)
    }
}

/// Whether `os.walk` can `stat` the entry `name` of the directory whose
/// path is `dir_full`: a path too long for the kernel cannot be (always
/// when the limits are off).
pub fn fits(dir_full: &[u8], name: &[u8], limits: bool) -> bool {
    !limits || dir_full.len() + 1 + name.len() < PATH_MAX
}
