//! What a change does to the prompt: two scans of one root (two git
//! revisions, or a revision and the files on disk) compared rule file by
//! rule file, with the rendered sections compared line by line.
//!
//! A rule file is matched across the two scans by its full path (both
//! scans read the same ROOT path, so the paths agree). Only what the budget
//! pass looked at can be compared: a file it never reached on either side
//! is listed only when it appears, disappears or changes status.

pub mod agents;
mod cut;
pub mod report;

use std::time::Duration;

use serde::Serialize;
use similar::TextDiff;

use crate::config::{Config, Number};
use crate::discover::{python_path_order, Candidate};
use crate::model::{tokens_included, Disposition, FileStatus};
use crate::render::render;
use crate::scan::RootScan;
pub use report::{Report, SCHEMA};

/// How long the line diff may search for the shortest edit script.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);

/// How one rule file differs between the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// Only on the new side.
    Added,
    /// Only on the old side.
    Removed,
    /// Same status, different text or token count.
    Changed,
    /// A different status (`ok` → `cropped`, `cropped` → `skipped`, ...).
    StatusChanged,
}

impl Change {
    /// The stable name (as in JSON), with a space for `status changed`.
    pub fn label(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Changed => "changed",
            Change::StatusChanged => "status changed",
        }
    }
}

/// One side's view of a rule file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FileState {
    /// What the budget pass did with it.
    pub status: FileStatus,
    /// Tokens of its text in the section (0 unless `ok` or `cropped`).
    pub tokens: i64,
}

/// A rule file that differs between the two sides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// Its full path, as in the scan result.
    pub path: String,
    /// What kind of difference.
    pub change: Change,
    /// The old side (`None` when added).
    pub before: Option<FileState>,
    /// The new side (`None` when removed).
    pub after: Option<FileState>,
}

impl FileChange {
    /// Tokens the file adds to the section (negative when it takes some away).
    pub(crate) fn token_delta(&self) -> i64 {
        self.after.map_or(0, |s| s.tokens) - self.before.map_or(0, |s| s.tokens)
    }
}

/// Totals of one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Rule files discovered (any status).
    pub rule_files: usize,
    /// Tokens of rule-file text included in the section (the budget's use).
    pub included_tokens: i64,
    /// The scan's `skipped_count`.
    pub skipped_count: i64,
    /// The total budget used, as the reference counts it: each included
    /// file's path (its tokens + 5) and text (`ok` and `cropped` files).
    pub budget_used: i64,
}

/// The comparison of two scans of one root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptDiff {
    /// The rule files that differ, in the reference's path order.
    pub files: Vec<FileChange>,
    /// The old side's totals.
    pub before: Totals,
    /// The new side's totals.
    pub after: Totals,
    /// The total budget both sides were scanned with (`max_total_tokens`).
    pub max_total_tokens: Number,
    /// The old side's rendered section.
    pub section_before: String,
    /// The new side's rendered section.
    pub section_after: String,
}

/// One side's rule files: path, state, and what the prompt shows of it.
struct Seen<'a> {
    candidate: &'a Candidate,
    state: FileState,
    /// The included text (for `ok`/`cropped`; empty otherwise): with equal
    /// states, equal texts mean "no visible change". (A file's full token
    /// count is not shown: a skipped file that grew is not a change.)
    text: &'a str,
}

fn seen(scan: &RootScan) -> Vec<Seen<'_>> {
    let allocation = &scan.allocation;
    let result = &allocation.result;
    scan.candidates
        .iter()
        .zip(&allocation.dispositions)
        .map(|(candidate, disposition)| {
            let text = match disposition {
                Disposition::Included(i) => result.files.get(*i).map_or("", |f| &f.content),
                _ => "",
            };
            Seen {
                candidate,
                state: FileState {
                    status: FileStatus::of(disposition, result),
                    tokens: tokens_included(disposition, result),
                },
                text,
            }
        })
        .collect()
}

fn totals(scan: &RootScan) -> Totals {
    let result = scan.result();
    Totals {
        rule_files: scan.candidates.len(),
        included_tokens: result
            .files
            .iter()
            .map(|f| f.token_count)
            .fold(0i64, i64::saturating_add),
        budget_used: scan.allocation.budget_used,
        skipped_count: result.skipped_count,
    }
}

impl PromptDiff {
    /// Compares `before` with `after`, both scanned with `config`.
    pub fn between(before: &RootScan, after: &RootScan, config: &Config) -> PromptDiff {
        let ((section_before, section_after), files) = rayon::join(
            || {
                rayon::join(
                    || render(before.result(), &config.name_pattern),
                    || render(after.result(), &config.name_pattern),
                )
            },
            || compare(seen(before), seen(after)),
        );
        PromptDiff {
            files,
            before: totals(before),
            after: totals(after),
            max_total_tokens: config.max_total_tokens.clone(),
            section_before,
            section_after,
        }
    }

    /// Whether the rendered section, and so the prompt, differs.
    pub fn prompt_changed(&self) -> bool {
        self.section_before != self.section_after
    }

    /// The unified diff of the rendered sections (empty when they are
    /// equal), with `context` lines around each change and the two
    /// labels in its `---`/`+++` header.
    pub fn unified(&self, context: usize, labels: (&str, &str)) -> String {
        if !self.prompt_changed() {
            return String::new();
        }
        unified_diff(&self.section_before, &self.section_after, context, labels)
    }
}

/// The unified diff of two texts, with `context` lines around each change
/// and the two labels in its `---`/`+++` header. Lines end at '\n' only (a
/// '\r' in a file name stays inside its line). Myers' algorithm can take
/// quadratic time on huge, very different texts; past a deadline it
/// settles for a longer (still correct) diff.
pub fn unified_diff(old: &str, new: &str, context: usize, labels: (&str, &str)) -> String {
    let old: Vec<&str> = old.split_terminator('\n').collect();
    let new: Vec<&str> = new.split_terminator('\n').collect();
    TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_slices(&old, &new)
        .unified_diff()
        .context_radius(context)
        .header(labels.0, labels.1)
        .to_string()
}

/// Walks both sides' files (each in the reference's path order) together.
fn compare(before: Vec<Seen<'_>>, after: Vec<Seen<'_>>) -> Vec<FileChange> {
    let mut changes = Vec::new();
    let mut old = before.into_iter().peekable();
    let mut new = after.into_iter().peekable();
    loop {
        let order = match (old.peek(), new.peek()) {
            (None, None) => break,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(a), Some(b)) => python_path_order(a.candidate.as_bytes(), b.candidate.as_bytes()),
        };
        let (a, b) = match order {
            std::cmp::Ordering::Less => (old.next(), None),
            std::cmp::Ordering::Greater => (None, new.next()),
            std::cmp::Ordering::Equal => (old.next(), new.next()),
        };
        let change = match (&a, &b) {
            (Some(_), None) => Change::Removed,
            (None, Some(_)) => Change::Added,
            (Some(a), Some(b)) if a.state.status != b.state.status => Change::StatusChanged,
            (Some(a), Some(b)) if a.state != b.state || a.text != b.text => Change::Changed,
            _ => continue,
        };
        let path = b.as_ref().or(a.as_ref()).map(|s| s.candidate.display());
        changes.push(FileChange {
            path: path.unwrap_or_default(),
            change,
            before: a.map(|s| s.state),
            after: b.map(|s| s.state),
        });
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::unified_diff;

    #[test]
    fn unified_diff_marks_changed_lines_and_keeps_crs_inside_lines() {
        let d = unified_diff("a\nb\r c\nd\n", "a\nB\r c\nd\ne\n", 1, ("old", "new"));
        assert_eq!(
            d,
            "--- old\n+++ new\n@@ -1,3 +1,4 @@\n a\n-b\r c\n+B\r c\n d\n+e\n"
        );
        assert_eq!(unified_diff("same\n", "same\n", 3, ("a", "b")), "");
    }
}
