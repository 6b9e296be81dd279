//! The output model: what a scan gives for a root (the reference's result,
//! [`ScanResult`]) and what became of each discovered rule file
//! ([`Disposition`], [`FileStatus`]). Every report (the section, the
//! scan's JSON, the audit, bundles, diffs) is built from these types; the
//! budget pass ([`crate::budget`]) produces them.

use serde::Serialize;

/// The status of an entry in [`ScanResult::files`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Included whole.
    Ok,
    /// Included, cut to fit (content ends with `...`).
    Cropped,
    /// Listed with empty content: fewer than 51 tokens of budget were left.
    Skipped,
}

impl Status {
    /// The reference's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Cropped => "cropped",
            Status::Skipped => "skipped",
        }
    }
}

/// One entry of the result, with the reference's keys in its order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileEntry {
    /// Full path of the rule file.
    pub path: String,
    /// The text included (possibly cropped; empty for `skipped`).
    pub content: String,
    /// Tokens of `content`.
    pub token_count: i64,
    /// How the file was included.
    pub status: Status,
}

/// What the reference returns for one root, plus the root as the caller gave it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScanResult {
    /// The root exactly as given (not made absolute).
    pub root: String,
    /// The included entries, in path order.
    pub files: Vec<FileEntry>,
    /// Candidates not in `files`: unreadable, blank, or beyond the budget.
    pub skipped_count: i64,
}

/// What the budget pass did with one candidate (same order as the candidates).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// In `files` at this index (any status).
    Included(usize),
    /// Read, but blank: left out, counted by the final reconciliation.
    Blank,
    /// Could not be read; the reason.
    Unreadable(String),
    /// Not read: the reading policy withheld it (never under the reference's policy).
    Withheld(crate::read::Withheld),
    /// Read and counted, but its path alone no longer fit (`tokens` is its full count).
    PathOverBudget {
        /// Full token count of the file.
        tokens: i64,
    },
    /// Never read: the budget was exhausted or `max_file_count` reached before it.
    NotReached,
}

/// What became of one discovered rule file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// Included whole.
    Ok,
    /// Included, cut to fit.
    Cropped,
    /// Listed as skipped (fewer than 51 tokens of budget were left).
    Skipped,
    /// Empty or only whitespace: passed over.
    Blank,
    /// Could not be read.
    Unreadable,
    /// Not read: the reading policy keeps it out of the prompt (`--links inside`, the hooks).
    Withheld,
    /// Never read: the budget was exhausted or `max_file_count` reached before it.
    NotReached,
    /// Read and counted, but its path alone no longer fit the budget.
    OverBudget,
}

impl FileStatus {
    /// The status of the candidate the budget pass gave `disposition`.
    pub fn of(disposition: &Disposition, result: &ScanResult) -> FileStatus {
        match disposition {
            Disposition::Included(i) => match result.files.get(*i).map(|f| f.status) {
                Some(Status::Ok) => FileStatus::Ok,
                Some(Status::Cropped) => FileStatus::Cropped,
                Some(Status::Skipped) | None => FileStatus::Skipped,
            },
            Disposition::Blank => FileStatus::Blank,
            Disposition::Unreadable(_) => FileStatus::Unreadable,
            Disposition::Withheld(_) => FileStatus::Withheld,
            Disposition::PathOverBudget { .. } => FileStatus::OverBudget,
            Disposition::NotReached => FileStatus::NotReached,
        }
    }

    /// The stable name (as in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            FileStatus::Ok => "ok",
            FileStatus::Cropped => "cropped",
            FileStatus::Skipped => "skipped",
            FileStatus::Blank => "blank",
            FileStatus::Unreadable => "unreadable",
            FileStatus::Withheld => "withheld",
            FileStatus::NotReached => "not_reached",
            FileStatus::OverBudget => "over_budget",
        }
    }

    /// Whether the budget left the file out (`skipped`, `not_reached`, `over_budget`).
    pub fn is_budget_skip(self) -> bool {
        matches!(
            self,
            FileStatus::Skipped | FileStatus::NotReached | FileStatus::OverBudget
        )
    }
}

/// Tokens of a candidate's text in the section: the scan's `token_count`,
/// 0 when it is not in `files`.
pub fn tokens_included(disposition: &Disposition, result: &ScanResult) -> i64 {
    match disposition {
        Disposition::Included(i) => result.files.get(*i).map_or(0, |f| f.token_count),
        _ => 0,
    }
}
