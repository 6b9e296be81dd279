//! The audit: everything worth knowing about a root's rule files, on top of
//! the very scan that produces the prompt section (same candidates, same
//! budget pass, same numbers).
//!
//! Beyond the scan's result it counts the tokens of *every* discovered rule
//! file, including those the budget never read (what they would cost), and
//! collects [`warnings`]: host-side expansions, symlinks leaving the root,
//! nested repositories, rule files the scan never discovers
//! (`undiscovered`), blank and invalid files, cropping and skipping, and
//! limits outside the host's settings range. The JSON form is documented in
//! `docs/audit-schema.md` (schema [`SCHEMA`]).

pub mod agents;
pub mod hidden;
pub mod html;
mod references;
pub mod sarif;
pub mod summary;
pub mod text;
pub(crate) mod undiscovered;
pub mod warnings;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;

use crate::agents::disk::Listings;
use crate::budget::path_cost;
use crate::config::env::EnvValue;
use crate::config::{Config, Key, LoadNotes, Number};
use crate::discover::Candidate;
use crate::error::Error;
pub use crate::model::{tokens_included, FileStatus};
use crate::model::{Disposition, ScanResult};
use crate::project::ConfigSource;
use crate::read::ReadOutcome;
use crate::scan::{RootScan, Scanner};
use crate::tokenize;
use crate::trust::Withheld;
use undiscovered::{walk_for_audit, Exhaustive, Missed, Reason, UnreadableDir};
use warnings::{
    host_expansions, host_expansions_in_path, LinkCheck, LinkChecker, NestedRepos, Warning,
    WarningKind,
};

/// The schema name carried by every JSON record of `promptinclude audit --json`.
pub const SCHEMA: &str = "promptinclude.audit/2";

/// One record of `audit --json` (JSON Lines): the schema and the record
/// type (`root`, `error`, `summary`), then the data's fields.
#[derive(Serialize)]
pub struct Record<'a, T: Serialize> {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// The record type.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// The record's own fields.
    #[serde(flatten)]
    pub data: &'a T,
}

impl<'a, T: Serialize> Record<'a, T> {
    /// A record of type `kind` holding `data`.
    pub fn new(kind: &'static str, data: &'a T) -> Record<'a, T> {
        Record {
            schema: SCHEMA,
            kind,
            data,
        }
    }
}

/// Writes one `audit --json` record of type `kind` (a JSON line).
pub fn write_record<T: Serialize>(
    out: &mut impl std::io::Write,
    kind: &'static str,
    data: &T,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &Record::new(kind, data))?;
    out.write_all(b"\n")
}

/// One discovered rule file.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileAudit {
    /// Full path, as the scan prints it.
    pub path: String,
    /// What became of it.
    pub status: FileStatus,
    /// Tokens of its whole text (also when the budget did not read it);
    /// 0 for a blank file, `None` when it cannot be read.
    pub tokens_counted: Option<i64>,
    /// Tokens of the text included (the scan's `token_count`; 0 when not included).
    pub tokens_included: i64,
    /// What listing its path costs the budget (its tokens + 5).
    pub path_tokens: i64,
    /// Share of `max_total_tokens` it used (path and text), 0 to 1.
    pub budget_share: f64,
}

/// Sums over one root.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Rule files discovered.
    pub rule_files: usize,
    /// Entries in the scan's `files`.
    pub files: usize,
    /// The scan's `skipped_count`.
    pub skipped_count: i64,
    /// Tokens of every readable rule file's whole text.
    pub tokens_counted: i64,
    /// Tokens included (sum of the scan's `token_count`).
    pub tokens_included: i64,
    /// Budget used: paths and included text.
    pub budget_used: i64,
    /// `budget_used / max_total_tokens`, 0 to 1.
    pub budget_share: f64,
    /// Files included whole.
    pub ok: usize,
    /// Files cropped.
    pub cropped: usize,
    /// Files the budget left out (`skipped`, `not_reached`, `over_budget`).
    pub skipped: usize,
    /// Blank files.
    pub blank: usize,
    /// Unreadable files.
    pub unreadable: usize,
    /// Files the reading policy withheld (never under the reference's policy,
    /// so absent from the reference's reports).
    #[serde(skip_serializing_if = "is_zero")]
    pub withheld: usize,
    /// Warnings.
    pub warnings: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The audit of one root.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RootAudit {
    /// The root as given.
    pub root: String,
    /// Its bytes, when they are not UTF-8 (see [`crate::rootname`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_hex: Option<String>,
    /// The root made absolute, as the scan does.
    pub abs_root: String,
    /// Its bytes, when they are not UTF-8.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abs_root_hex: Option<String>,
    /// Whether the root is a directory.
    pub is_dir: bool,
    /// Which configuration file applied.
    pub config_source: ConfigSource,
    /// The configuration used.
    pub config: Config,
    /// The `A0_SET_` environment values the defaults consulted (empty when a
    /// file applied or none was set).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvValue>,
    /// Every discovered rule file, in the scan's order.
    pub files: Vec<FileAudit>,
    /// Sums.
    pub totals: Totals,
    /// Warnings: about the root first, then per file in order, then files never discovered.
    pub warnings: Vec<Warning>,
    /// How many of the summary's gate failures are about this root (set
    /// by whoever applies the gates; written only when not 0). A merge of
    /// shard outputs hands each record its own failures by this count,
    /// also when a root is listed more than once.
    #[serde(skip_serializing_if = "is_zero")]
    pub gate_failures: usize,
    /// With `audit --agents`: what each chosen agent loads across the tree.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agents: Option<agents::TreeAudit>,
    /// With `audit --live-index`: what a live index of the root would keep,
    /// and what it would look at again on every scan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live_index: Option<crate::index::LiveIndexFacts>,
}

/// What the audit learned from reading one file.
#[derive(Default)]
struct Reading {
    tokens: Option<i64>,
    replaced: usize,
    blank: bool,
    unreadable: Option<String>,
    withheld: Option<Withheld>,
}

/// Audits `root` with `scanner`, whose configuration came from `source`.
pub fn audit_root(
    scanner: &Scanner,
    root: &Path,
    source: &ConfigSource,
    notes: &LoadNotes,
) -> Result<RootAudit, Error> {
    audit_root_at(scanner, root, source, notes, None, false).map(|(audit, _, _)| audit)
}

/// [`audit_root`], or with `rev` the git revision `rev` of `root` read as a
/// repository (see [`Scanner::scan_rev`]); also hands back the scan the
/// audit is built on (for example to render the section with
/// [`crate::render()`]). A revision has no directories on disk to look into,
/// so its audit leaves out what only the filesystem can tell: rule files
/// never discovered, unlistable directories, nested repositories and
/// symlink checks (a link a checkout could not read is reported as
/// unreadable, with the reason).
///
/// With `keep_listings` (and no `rev`), also hands back every directory's
/// listing the audit's walk made, for the agents' audit of the same tree
/// ([`agents::Known`]).
pub fn audit_root_at(
    scanner: &Scanner,
    root: &Path,
    source: &ConfigSource,
    notes: &LoadNotes,
    rev: Option<&str>,
    keep_listings: bool,
) -> Result<(RootAudit, RootScan, Listings), Error> {
    // Without the git feature there is never a snapshot to read from.
    #[cfg_attr(not(feature = "git"), allow(unused_mut))]
    let AuditScan {
        scan,
        mut exhaustive,
        expansions,
        mut snapshot,
    } = scan_for_audit(scanner, root, rev, keep_listings)?;
    let config = scanner.config();
    let mut warnings = root_warnings(&scan, config, source, notes, root);
    let mut context = FileContext {
        scan: &scan,
        config,
        on_disk: rev.is_none(),
        links: LinkChecker::new(std::fs::canonicalize(&scan.abs_root).ok()),
        committed_links: crate::trust::Guard::for_links(&scan.abs_root),
        nested: NestedRepos::default(),
        expansions,
    };
    let mut files = Vec::with_capacity(scan.candidates.len());
    let guard = scanner.guard(root);
    for (i, candidate) in scan.candidates.iter().enumerate() {
        let disposition = &scan.allocation.dispositions[i];
        let reading = context.reading(i, candidate, disposition, |candidate| {
            Ok(match &mut snapshot {
                #[cfg(feature = "git")]
                Some(snap) => crate::read::outcome_of(snap.read(candidate)?),
                _ => guard.read(candidate),
            })
        })?;
        files.push(context.audit_file(candidate, disposition, &reading, &mut warnings));
    }
    warnings.extend(
        exhaustive
            .unreadable_dirs
            .iter()
            .map(unreadable_dir_warning),
    );
    warnings.extend(exhaustive.missed.iter().map(|m| missed_warning(m, config)));
    let totals = totals(&files, scan.result(), warnings.len(), config);
    let audit = RootAudit {
        root: scan.result().root.clone(),
        root_hex: crate::rootname::hex_of(root),
        abs_root: scan.abs_root.to_string_lossy().into_owned(),
        abs_root_hex: crate::rootname::hex_of(&scan.abs_root),
        is_dir: scan.is_dir,
        config_source: source.clone(),
        env: notes.env.clone(),
        config: config.clone(),
        files,
        totals,
        warnings,
        gate_failures: 0,
        agents: None,
        live_index: None,
    };
    Ok((audit, scan, std::mem::take(&mut exhaustive.listings)))
}

/// A root scanned for the audit: the scan, what its walk missed, the host
/// expansions in the text it read, and for a revision the snapshot to read
/// the files the budget pass never reached from.
struct AuditScan {
    scan: RootScan,
    exhaustive: Exhaustive,
    expansions: HashMap<Vec<u8>, Vec<Warning>>,
    snapshot: Option<Snapshot>,
}

/// A git revision's snapshot (nothing without the `git` feature).
#[cfg(feature = "git")]
type Snapshot = crate::git::RevSnapshot;
#[cfg(not(feature = "git"))]
type Snapshot = std::convert::Infallible;

fn scan_for_audit(
    scanner: &Scanner,
    root: &Path,
    rev: Option<&str>,
    keep_listings: bool,
) -> Result<AuditScan, Error> {
    // Host expansions are looked for in the text the budget pass reads, so
    // no file is read twice.
    let mut expansions: HashMap<Vec<u8>, Vec<Warning>> = HashMap::new();
    // One walk finds the scan's candidates and what the scan misses.
    let mut exhaustive = Exhaustive::default();
    let walk = |abs: &[u8], matchers: &_| {
        let (candidates, found) = walk_for_audit(abs, matchers, keep_listings);
        exhaustive = found;
        candidates
    };
    let mut note_expansions = |candidate: &Candidate, outcome: ReadOutcome| {
        if let ReadOutcome::Text(decoded) = &outcome {
            let mut found = host_expansions(&candidate.display(), &decoded.text);
            found.extend(hidden::warnings(&candidate.display(), &decoded.text));
            if !found.is_empty() {
                expansions.insert(candidate.as_bytes().to_vec(), found);
            }
        }
        outcome
    };
    #[cfg_attr(not(feature = "git"), allow(unused_mut))]
    let mut snapshot = None;
    let scan = match rev {
        None => {
            let guard = scanner.guard(root);
            scanner.scan_with_walk(root, walk, |candidate| {
                note_expansions(candidate, guard.read(candidate))
            })?
        }
        #[cfg(feature = "git")]
        Some(rev) => {
            let snap = snapshot.insert(scanner.open_rev(root, rev)?);
            scanner.scan_snapshot(snap, root, |candidate, bytes| {
                note_expansions(candidate, crate::read::outcome_of(bytes))
            })?
        }
        #[cfg(not(feature = "git"))]
        Some(_) => return Err(crate::scan::no_git()),
    };
    Ok(AuditScan {
        scan,
        exhaustive,
        expansions,
        snapshot,
    })
}

/// What auditing each file of a root needs.
struct FileContext<'s> {
    scan: &'s RootScan,
    config: &'s Config,
    /// The root is a directory on disk (not a git revision): links and
    /// nested repositories can be looked at.
    on_disk: bool,
    links: LinkChecker,
    /// Asks of a link inside the root whether `HEAD` commits it.
    committed_links: crate::trust::Guard,
    nested: NestedRepos,
    /// Host expansions found in the text read so far, by full path.
    expansions: HashMap<Vec<u8>, Vec<Warning>>,
}

impl FileContext<'_> {
    /// What is known of the text of candidate `i`; a file the budget pass
    /// never reached is read now, with `read_unreached`.
    fn reading(
        &mut self,
        i: usize,
        candidate: &Candidate,
        disposition: &Disposition,
        read_unreached_file: impl FnOnce(&Candidate) -> Result<ReadOutcome, Error>,
    ) -> Result<Reading, Error> {
        let facts = &self.scan.allocation.facts[i];
        Ok(match disposition {
            Disposition::NotReached => read_unreached(
                candidate,
                read_unreached_file(candidate)?,
                &mut self.expansions,
            ),
            Disposition::Blank => Reading {
                tokens: Some(0),
                blank: true,
                ..Reading::default()
            },
            Disposition::Unreadable(reason) => Reading {
                unreadable: Some(reason.clone()),
                ..Reading::default()
            },
            Disposition::Withheld(why) => Reading {
                withheld: Some(why.clone()),
                ..Reading::default()
            },
            Disposition::Included(_) | Disposition::PathOverBudget { .. } => Reading {
                tokens: Some(facts.tokens),
                replaced: facts.replaced,
                ..Reading::default()
            },
        })
    }

    /// One file's line of the report; its warnings go to `warnings`.
    fn audit_file(
        &mut self,
        candidate: &Candidate,
        disposition: &Disposition,
        reading: &Reading,
        warnings: &mut Vec<Warning>,
    ) -> FileAudit {
        let (scan, config) = (self.scan, self.config);
        let path = candidate.display();
        let status = FileStatus::of(disposition, scan.result());
        let included = tokens_included(disposition, scan.result());
        let path_tokens = path_cost(candidate);
        let used = match status {
            FileStatus::Ok | FileStatus::Cropped => path_tokens + included,
            _ => 0,
        };
        // A revision's files are not on disk: only a checkout could be looked at.
        let link = if self.on_disk {
            self.links.check(candidate.as_path())
        } else {
            LinkCheck::Fine
        };
        warnings.extend(link.warning(&path));
        if link == LinkCheck::Inside {
            if let Some(why) = self.committed_links.uncommitted(candidate) {
                warnings.push(Warning::file(
                    WarningKind::SymlinkToUncommitted,
                    &path,
                    format!(
                        "the hooks and the MCP server withhold this link: {why} ({})",
                        why.kind()
                    ),
                ));
            }
        }
        let nested_repo = if self.on_disk {
            self.nested.containing(&scan.abs_root, candidate.as_path())
        } else {
            None
        };
        if let Some(repo) = nested_repo {
            warnings.push(Warning::file(
                WarningKind::NestedRepository,
                &path,
                format!(
                    "inside the nested repository {}: text the project does not own reaches the prompt",
                    repo.display()
                ),
            ));
        }
        warnings.extend(host_expansions_in_path(&path));
        warnings.extend(
            self.expansions
                .remove(candidate.as_bytes())
                .unwrap_or_default(),
        );
        let file = FileAudit {
            path,
            status,
            tokens_counted: reading.tokens,
            tokens_included: included,
            path_tokens,
            budget_share: share(used, &config.max_total_tokens),
        };
        file_warnings(
            warnings,
            &file,
            reading,
            matches!(link, LinkCheck::Fine | LinkCheck::Inside),
            config,
            scan.result(),
        );
        file
    }
}

/// `path` relative to the root when it is below it (for reports).
pub fn relative<'a>(path: &'a str, abs_root: &str) -> &'a str {
    let prefix = abs_root.trim_end_matches('/');
    path.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path)
}

/// `text.to_lowercase()`, borrowed where nothing changes: most names and
/// paths of a tree are lower case already, and the checks that compare them
/// without case ask for every one.
pub(crate) fn lower_case(text: &str) -> Cow<'_, str> {
    if text
        .bytes()
        .all(|b| b.is_ascii() && !b.is_ascii_uppercase())
    {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.to_lowercase())
    }
}

/// A share (0 to 1) as a percentage with one decimal (for reports).
pub fn percent(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// Reads and counts a file the budget pass never reached (what it would cost).
fn read_unreached(
    candidate: &Candidate,
    outcome: ReadOutcome,
    expansions: &mut HashMap<Vec<u8>, Vec<Warning>>,
) -> Reading {
    match outcome {
        ReadOutcome::Text(decoded) => {
            let mut found = host_expansions(&candidate.display(), &decoded.text);
            found.extend(hidden::warnings(&candidate.display(), &decoded.text));
            if !found.is_empty() {
                expansions.insert(candidate.as_bytes().to_vec(), found);
            }
            Reading {
                tokens: Some(tokenize::count(&decoded.text) as i64),
                replaced: decoded.replaced,
                ..Reading::default()
            }
        }
        ReadOutcome::Blank => Reading {
            tokens: Some(0),
            blank: true,
            ..Reading::default()
        },
        ReadOutcome::Unreadable(reason) => Reading {
            unreadable: Some(reason),
            ..Reading::default()
        },
        ReadOutcome::Withheld(why) => Reading {
            withheld: Some(why),
            ..Reading::default()
        },
    }
}

/// Warnings about the root and its configuration.
fn root_warnings(
    scan: &RootScan,
    config: &Config,
    source: &ConfigSource,
    notes: &LoadNotes,
    root: &Path,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if !scan.is_dir {
        warnings.push(Warning::file(
            WarningKind::RootNotDirectory,
            &root.to_string_lossy(),
            "not a directory: nothing is included".to_string(),
        ));
    }
    let config_file = match source {
        ConfigSource::File(path) => Some(path.to_string_lossy().into_owned()),
        ConfigSource::Default => None,
    };
    let line_of = |key: Key| match source {
        ConfigSource::File(_) => notes.line_of(key),
        ConfigSource::Default => None,
    };
    for (key, value, low, high) in config.out_of_host_range() {
        warnings.push(Warning {
            kind: WarningKind::LimitOutOfRange,
            path: config_file.clone(),
            line: line_of(key),
            message: format!(
                "{} = {value} is outside the host's settings range {low}–{high}",
                key.name()
            ),
            class: None,
            column: None,
        });
    }
    warnings.extend(surprising_values(config, config_file.as_deref(), &line_of));
    for unknown in &notes.unknown_keys {
        warnings.push(Warning {
            kind: WarningKind::UnknownConfigKey,
            path: config_file.clone(),
            line: unknown.line,
            message: format!(
                "unknown key `{}` is ignored (known: {})",
                unknown.key,
                Key::known_names()
            ),
            class: None,
            column: None,
        });
    }
    for env in notes.env.iter().filter(|e| !e.applied) {
        warnings.push(Warning {
            kind: WarningKind::InvalidEnvValue,
            path: None,
            line: None,
            message: format!(
                "{}={:?} is not an integer: the default {} stays (the host prints a warning)",
                env.variable,
                env.raw,
                config.get(env.key)
            ),
            class: None,
            column: None,
        });
    }
    warnings
}

/// `surprising_value` warnings: limits that are legal but a float, a boolean
/// or negative.
fn surprising_values(
    config: &Config,
    config_file: Option<&str>,
    line_of: &dyn Fn(Key) -> Option<usize>,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    for key in Key::ALL {
        let Some(value) = config.number(key) else {
            continue;
        };
        let surprise = if value.is_bool() {
            Some("a boolean, which Python counts as 0 or 1")
        } else if value.is_float() {
            Some("a float: Python compares it with the integer counts as it is (no rounding)")
        } else if value.is_negative() {
            Some("negative: nothing can fit under it")
        } else {
            None
        };
        if let Some(why) = surprise {
            warnings.push(Warning {
                kind: WarningKind::SurprisingValue,
                path: config_file.map(str::to_string),
                line: line_of(key),
                message: format!("{} = {value} is {why}", key.name()),
                class: None,
                column: None,
            });
        }
    }
    warnings
}

/// Warnings about one file's reading and budget outcome.
fn file_warnings(
    warnings: &mut Vec<Warning>,
    file: &FileAudit,
    reading: &Reading,
    link_fine: bool,
    config: &Config,
    result: &ScanResult,
) {
    let path = file.path.as_str();
    let (included, path_tokens) = (file.tokens_included, file.path_tokens);
    if reading.blank {
        warnings.push(Warning::file(
            WarningKind::BlankFile,
            path,
            "empty or only whitespace: passed over".to_string(),
        ));
    }
    if reading.replaced > 0 {
        warnings.push(Warning::file(
            WarningKind::InvalidUtf8,
            path,
            format!(
                "not valid UTF-8: {} invalid sequence(s) replaced by U+FFFD",
                reading.replaced
            ),
        ));
    }
    // A broken or looping link is reported as such.
    if let (Some(reason), true) = (&reading.unreadable, link_fine) {
        warnings.push(Warning::file(
            WarningKind::Unreadable,
            path,
            format!("cannot be read ({reason})"),
        ));
    }
    if let Some(why) = &reading.withheld {
        warnings.push(Warning::file(
            WarningKind::Withheld,
            path,
            format!("withheld ({}): {why}", why.kind()),
        ));
    }
    let cost = reading
        .tokens
        .map_or(String::new(), |n| format!(" (would cost {n} tokens)"));
    let message = match file.status {
        FileStatus::Cropped => Some((
            WarningKind::Cropped,
            format!(
                "cropped to fit: {included} of {} tokens included",
                reading.tokens.unwrap_or(included)
            ),
        )),
        FileStatus::Skipped => Some((
            WarningKind::Skipped,
            format!("skipped to fit: fewer than 51 tokens of budget were left{cost}"),
        )),
        FileStatus::OverBudget => Some((
            WarningKind::Skipped,
            format!("skipped to fit: its path alone ({path_tokens} tokens) no longer fit the budget{cost}"),
        )),
        FileStatus::NotReached if config.max_file_count.is_le_int(result.files.len() as i64) => Some((
            WarningKind::Skipped,
            format!(
                "not read: max_file_count ({}) was reached before it{cost}",
                config.max_file_count
            ),
        )),
        FileStatus::NotReached => Some((
            WarningKind::Skipped,
            format!("not read: the budget ({} tokens) was exhausted before it{cost}", config.max_total_tokens),
        )),
        _ => None,
    };
    if let Some((kind, message)) = message {
        warnings.push(Warning::file(kind, path, message));
    }
}

/// The warning for a directory the scan cannot list.
fn unreadable_dir_warning(dir: &UnreadableDir) -> Warning {
    let path = String::from_utf8_lossy(&dir.path).into_owned();
    Warning::file(
        WarningKind::UnreadableDir,
        &path,
        format!(
            "directory cannot be listed ({}): skipped silently, with any rule files below it",
            dir.error
        ),
    )
}

/// The warning for a rule file the scan never discovers.
fn missed_warning(missed: &Missed, config: &Config) -> Warning {
    let path = String::from_utf8_lossy(&missed.path).into_owned();
    let pattern = |p: &Option<(String, usize)>| match p {
        Some((text, line)) => format!(" by pattern `{text}` (gitignore line {line})"),
        None => String::new(),
    };
    let (kind, message) = match &missed.reason {
        Reason::TooDeep { dir, depth } => (
            WarningKind::UndiscoveredTooDeep,
            format!(
                "never discovered: {} is at depth {depth}, and only directories shallower than max_depth {} are scanned",
                if dir.is_empty() { "the root".to_string() } else { format!("{dir}/") },
                config.max_depth,
            ),
        ),
        Reason::Pruned { dir, pattern: p } => (
            WarningKind::UndiscoveredPruned,
            format!("never discovered: inside {dir}/, pruned{}", pattern(p)),
        ),
        Reason::Ignored { pattern: p } => (
            WarningKind::UndiscoveredIgnored,
            format!("never discovered: dropped{}", pattern(p)),
        ),
        Reason::Case => (
            WarningKind::UndiscoveredCase,
            format!(
                "never discovered: the name matches `{}` only if letter case is ignored",
                config.name_pattern
            ),
        ),
    };
    Warning::file(kind, &path, message)
}

/// A share of the budget, rounded to 4 decimals (0 when there is no budget).
/// `used / total` rounded to 4 places; 0 for a limit that is not a
/// positive finite number.
fn share(used: i64, total: &Number) -> f64 {
    let total = total.to_f64();
    if !(total > 0.0 && total.is_finite()) {
        return 0.0;
    }
    (used as f64 / total * 10_000.0).round() / 10_000.0
}

fn totals(files: &[FileAudit], result: &ScanResult, warnings: usize, config: &Config) -> Totals {
    let mut t = Totals {
        rule_files: files.len(),
        files: result.files.len(),
        skipped_count: result.skipped_count,
        warnings,
        ..Totals::default()
    };
    for f in files {
        t.tokens_counted += f.tokens_counted.unwrap_or(0);
        t.tokens_included += f.tokens_included;
        if matches!(f.status, FileStatus::Ok | FileStatus::Cropped) {
            t.budget_used += f.path_tokens + f.tokens_included;
        }
        match f.status {
            FileStatus::Ok => t.ok += 1,
            FileStatus::Cropped => t.cropped += 1,
            FileStatus::Blank => t.blank += 1,
            FileStatus::Unreadable => t.unreadable += 1,
            FileStatus::Withheld => t.withheld += 1,
            s if s.is_budget_skip() => t.skipped += 1,
            _ => {}
        }
    }
    t.budget_share = share(t.budget_used, &config.max_total_tokens);
    t
}
