//! The budget pass: the reference's sequential, alphabetical allocation of
//! the per-file and total token budgets.
//!
//! It runs over the candidates in sorted order and reads a file only when
//! the pass reaches it, so files past the point where the budget is
//! exhausted (or `max_file_count` is reached) are never read or tokenized.

use serde::Serialize;

use crate::config::Config;
use crate::discover::Candidate;
use crate::read::ReadOutcome;
use crate::tokenize;

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
    /// Read and counted, but its path alone no longer fit (`tokens` is its full count).
    PathOverBudget {
        /// Full token count of the file.
        tokens: i64,
    },
    /// Never read: the budget was exhausted or `max_file_count` reached before it.
    NotReached,
}

/// Facts about a candidate the pass read, for reports (not part of the reference output).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadFacts {
    /// Full token count of the file's text (0 when not read or blank).
    pub tokens: i64,
    /// U+FFFD characters inserted by decoding.
    pub replaced: usize,
}

/// The budget pass's full outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// The reference's result.
    pub result: ScanResult,
    /// One disposition per candidate.
    pub dispositions: Vec<Disposition>,
    /// One entry per candidate.
    pub facts: Vec<ReadFacts>,
}

/// Token cost of listing a path: its own tokens plus 5.
pub fn path_cost(candidate: &Candidate) -> i64 {
    tokenize::count(&candidate.token_text()) as i64 + 5
}

/// The reference's `trim_start(raw, max)` and the tokens of what it keeps.
fn crop(raw: &str, full_count: i64, max: i64) -> (String, i64, Status) {
    let text = tokenize::trim_counted(raw, full_count as usize, max as usize).into_owned();
    let tokens = tokenize::count(&text) as i64;
    (text, tokens, Status::Cropped)
}

/// Runs the reference's budget pass over `candidates` (already sorted),
/// calling `read` for each candidate the pass reaches, in order.
pub fn allocate(
    root: String,
    candidates: &[Candidate],
    config: &Config,
    mut read: impl FnMut(&Candidate) -> ReadOutcome,
) -> Allocation {
    let total = config.max_total_tokens;
    let mut files: Vec<FileEntry> = Vec::new();
    let mut dispositions = Vec::with_capacity(candidates.len());
    let mut facts = vec![ReadFacts::default(); candidates.len()];
    let (mut used, mut skipped, mut exhausted) = (0i64, 0i64, false);
    for (i, candidate) in candidates.iter().enumerate() {
        if exhausted || files.len() as i64 >= config.max_file_count {
            skipped += 1;
            dispositions.push(Disposition::NotReached);
            continue;
        }
        let decoded = match read(candidate) {
            ReadOutcome::Text(decoded) => decoded,
            ReadOutcome::Blank => {
                dispositions.push(Disposition::Blank);
                continue;
            }
            ReadOutcome::Unreadable(reason) => {
                skipped += 1;
                dispositions.push(Disposition::Unreadable(reason));
                continue;
            }
        };
        let raw = decoded.text;
        let n = tokenize::count(&raw) as i64;
        facts[i] = ReadFacts {
            tokens: n,
            replaced: decoded.replaced,
        };
        let p = path_cost(candidate);
        let path = candidate.display();
        if used + p > total {
            skipped += 1;
            exhausted = true;
            dispositions.push(Disposition::PathOverBudget { tokens: n });
            continue;
        }
        let capped = n.min(config.max_file_tokens);
        dispositions.push(Disposition::Included(files.len()));
        let (content, token_count, status) = if used + p + capped > total {
            exhausted = true;
            let remaining = total - used - p;
            if remaining > 50 {
                crop(&raw, n, remaining)
            } else {
                (String::new(), 0, Status::Skipped)
            }
        } else if capped < n {
            crop(&raw, n, config.max_file_tokens)
        } else {
            (raw, n, Status::Ok)
        };
        if status != Status::Skipped {
            used += p + token_count;
        }
        files.push(FileEntry {
            path,
            content,
            token_count,
            status,
        });
    }
    // Reconciliation: blank files end up counted here.
    let unaccounted = candidates.len() as i64 - files.len() as i64 - skipped;
    if unaccounted > 0 {
        skipped += unaccounted;
    }
    Allocation {
        result: ScanResult {
            root,
            files,
            skipped_count: skipped,
        },
        dispositions,
        facts,
    }
}
