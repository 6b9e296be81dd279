//! The `summary` record of `audit --json`: sums over roots, and the gate
//! failures in input order. Summaries of disjoint sets of roots combine
//! (`Summary::absorb`) into the summary of their union, which is how the
//! outputs of a sharded or distributed audit merge into what one run prints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Record, RootAudit};

/// A failed gate (`--fail-on`, `--max-tokens`): one line on stderr, one
/// entry in the summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    /// The root as given.
    pub root: String,
    /// The rule file at fault, when the failure is about one.
    pub path: Option<String>,
    /// Why the gate failed.
    pub reason: String,
}

/// Sums over all roots (the fields of the `summary` record, in its order).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Roots audited (not counting those with errors).
    pub roots: usize,
    /// Rule files discovered.
    pub rule_files: usize,
    /// Entries in the scans' `files`.
    pub files: usize,
    /// Tokens of every readable rule file's whole text.
    pub tokens_counted: i64,
    /// Tokens included.
    pub tokens_included: i64,
    /// Files cropped.
    pub cropped: usize,
    /// Files the budget left out.
    pub skipped: usize,
    /// Blank files.
    pub blank: usize,
    /// Unreadable files.
    pub unreadable: usize,
    /// Warnings.
    pub warnings: usize,
    /// Warnings per kind (sorted by kind).
    pub warnings_by_kind: BTreeMap<String, usize>,
    /// With `audit --agents`: the agents' warnings.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub agent_warnings: usize,
    /// The agents' warnings per kind (sorted by kind).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agent_warnings_by_kind: BTreeMap<String, usize>,
    /// Roots that could not be audited (see the `error` records).
    pub errors: usize,
    /// Gate failures, in input order of their roots.
    pub failures: Vec<Failure>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Summary {
    /// Counts one root's audit in.
    pub fn add(&mut self, report: &RootAudit) {
        let t = &report.totals;
        self.roots += 1;
        self.rule_files += t.rule_files;
        self.files += t.files;
        self.tokens_counted += t.tokens_counted;
        self.tokens_included += t.tokens_included;
        self.cropped += t.cropped;
        self.skipped += t.skipped;
        self.blank += t.blank;
        self.unreadable += t.unreadable;
        self.warnings += t.warnings;
        for w in &report.warnings {
            *self
                .warnings_by_kind
                .entry(w.kind.as_str().to_string())
                .or_default() += 1;
        }
        for w in report.agents.iter().flat_map(|a| &a.warnings) {
            self.agent_warnings += 1;
            *self
                .agent_warnings_by_kind
                .entry(w.kind.as_str().to_string())
                .or_default() += 1;
        }
    }

    /// Adds the sums of `other`, a summary of other roots, and appends its
    /// failures: for roots that come after this summary's roots in input
    /// order, the result is the summary of both sets of roots.
    pub(crate) fn absorb(&mut self, other: Summary) {
        self.roots += other.roots;
        self.rule_files += other.rule_files;
        self.files += other.files;
        self.tokens_counted += other.tokens_counted;
        self.tokens_included += other.tokens_included;
        self.cropped += other.cropped;
        self.skipped += other.skipped;
        self.blank += other.blank;
        self.unreadable += other.unreadable;
        self.warnings += other.warnings;
        for (kind, n) in other.warnings_by_kind {
            *self.warnings_by_kind.entry(kind).or_default() += n;
        }
        self.agent_warnings += other.agent_warnings;
        for (kind, n) in other.agent_warnings_by_kind {
            *self.agent_warnings_by_kind.entry(kind).or_default() += n;
        }
        self.errors += other.errors;
        self.failures.extend(other.failures);
    }

    /// Merges the `summary` records (JSON lines, as `audit --json` prints
    /// them) of runs over consecutive slices of one root list, in list
    /// order, into the summary record one run over the whole list prints
    /// (without the newline). An error names the record (from 1) that is
    /// not a summary.
    pub fn merge_records<B: AsRef<[u8]>>(records: &[B]) -> Result<String, MergeError> {
        let mut merged = Summary::default();
        for (i, record) in records.iter().enumerate() {
            let summary: Summary = serde_json::from_slice(record.as_ref()).map_err(|cause| {
                MergeError::NotASummary {
                    record: i + 1,
                    cause,
                }
            })?;
            merged.absorb(summary);
        }
        serde_json::to_string(&Record::new("summary", &merged)).map_err(MergeError::Unwritable)
    }
}

/// Why [`Summary::merge_records`] cannot merge its records.
#[derive(Debug)]
pub enum MergeError {
    /// A record (numbered from 1) that does not read as an audit summary.
    NotASummary {
        /// The record's number, from 1.
        record: usize,
        /// Why it does not read as a summary.
        cause: serde_json::Error,
    },
    /// The merged summary could not be written as JSON.
    Unwritable(serde_json::Error),
}

impl std::fmt::Display for MergeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MergeError::NotASummary { record, cause } => {
                write!(f, "summary record {record}: not an audit summary ({cause})")
            }
            MergeError::Unwritable(cause) => write!(f, "{cause}"),
        }
    }
}

impl std::error::Error for MergeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MergeError::NotASummary { cause, .. } | MergeError::Unwritable(cause) => Some(cause),
        }
    }
}
