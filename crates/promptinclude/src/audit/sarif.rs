//! The audit's warnings, and with `--agents` the agents', as one SARIF 2.1.0
//! log (`audit --sarif FILE`), for code scanning: each warning a result
//! whose rule is its kind (with its help), at the file and line it is
//! about, with a level and a fingerprint that stays the same from run to
//! run, so that an alert persists.
//!
//! GitHub keeps at most [`MAX_RESULTS`] results of a run; beyond that the
//! log keeps the most severe ones, and says in the run's notifications how
//! many it left out.

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest as _, Sha256};

use super::agents::AgentWarningKind;
use super::warnings::WarningKind;
use super::RootAudit;

/// The most results a run keeps: what GitHub code scanning stores of one
/// run (it accepts 25,000, and keeps the 5,000 most severe).
pub const MAX_RESULTS: usize = 5000;

/// How much a result matters, as SARIF says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Error,
    Warning,
    Note,
}

impl Level {
    fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Note => "note",
        }
    }
}

/// A rule: a warning kind of the plain audit or of the agents (`hidden_text`
/// is one rule for both).
#[derive(Clone, Copy)]
struct Rule {
    id: &'static str,
    help: &'static str,
    level: Level,
}

/// Every rule, in a stable order (a result names its rule by index).
fn rules() -> Vec<Rule> {
    let mut rules: Vec<Rule> = WarningKind::ALL
        .iter()
        .map(|&k| Rule {
            id: k.as_str(),
            help: k.help(),
            level: plain_level(k),
        })
        .collect();
    for k in AgentWarningKind::ALL {
        if rules.iter().all(|r| r.id != k.as_str()) {
            rules.push(Rule {
                id: k.as_str(),
                help: k.help(),
                level: agent_level(k),
            });
        }
    }
    rules
}

/// The level of a plain audit warning: text hidden from a reviewer and
/// files from outside what is committed are errors; what the prompt loses
/// is a warning; the rest is a note.
fn plain_level(kind: WarningKind) -> Level {
    use WarningKind as K;
    match kind {
        K::HiddenText | K::SymlinkOutsideRoot | K::SymlinkToUncommitted => Level::Error,
        K::Cropped
        | K::Skipped
        | K::Unreadable
        | K::Withheld
        | K::BrokenSymlink
        | K::SymlinkLoop
        | K::UnreadableDir
        | K::InvalidUtf8
        | K::NestedRepository
        | K::LimitOutOfRange
        | K::InvalidEnvValue
        | K::RootNotDirectory => Level::Warning,
        K::HostInclude
        | K::HostIncludeOriginal
        | K::HostPlaceholder
        | K::UndiscoveredTooDeep
        | K::UndiscoveredPruned
        | K::UndiscoveredIgnored
        | K::UndiscoveredCase
        | K::BlankFile
        | K::UnknownConfigKey
        | K::SurprisingValue => Level::Note,
    }
}

/// The level of an agents' warning, by the same measure.
fn agent_level(kind: AgentWarningKind) -> Level {
    use AgentWarningKind as K;
    match kind {
        K::HiddenText => Level::Error,
        K::LinkAsText
        | K::Truncated
        | K::Shadowed
        | K::UnresolvedImport
        | K::ImportTooDeep
        | K::DeadScope
        | K::NotShared
        | K::StaleReference => Level::Warning,
        K::BadFrontMatter | K::ImportCycle | K::Duplicate | K::OverRecommended => Level::Note,
    }
}

/// One result, before it is written.
struct Finding {
    rule: usize,
    level: Level,
    /// The file (or, for a warning about no file, the root).
    path: PathBuf,
    line: Option<usize>,
    column: Option<usize>,
    message: String,
    /// The agent, for an agents' warning.
    agent: Option<&'static str>,
    /// What names the problem across runs (not its wording, which holds
    /// counts that change): kind, agent, file, line or cause.
    key: String,
}

/// The log in the making: results gathered root by root.
pub struct SarifLog {
    rules: Vec<Rule>,
    findings: Vec<Finding>,
    /// Paths below it are written relative to it (where code scanning
    /// expects them: the repository's checkout).
    base: PathBuf,
}

impl SarifLog {
    /// An empty log whose paths below `base` are written relative to it.
    pub fn new(base: PathBuf) -> SarifLog {
        SarifLog {
            rules: rules(),
            findings: Vec::new(),
            base,
        }
    }

    fn rule(&self, id: &str) -> usize {
        self.rules.iter().position(|r| r.id == id).unwrap_or(0)
    }

    /// Adds the warnings of one root's audit.
    pub fn add_root(&mut self, report: &RootAudit) {
        let root = Path::new(&report.abs_root);
        for w in &report.warnings {
            let rule = self.rule(w.kind.as_str());
            let path = w.path.as_deref().map_or(root.to_path_buf(), PathBuf::from);
            let key = format!("{}\0{}\0{:?}", w.kind.as_str(), path.display(), w.line);
            self.findings.push(Finding {
                rule,
                level: plain_level(w.kind),
                path,
                line: w.line,
                column: w.column,
                message: w.message.clone(),
                agent: None,
                key,
            });
        }
        let agents = report.agents.iter().flat_map(|t| &t.warnings);
        for w in agents {
            let rule = self.rule(w.kind.as_str());
            let key = format!(
                "{}\0{}\0{}\0{}\0{:?}",
                w.kind.as_str(),
                w.agent,
                w.path.display(),
                w.cause,
                w.line
            );
            self.findings.push(Finding {
                rule,
                level: agent_level(w.kind),
                path: w.path.clone(),
                line: w.line,
                column: w.column,
                message: format!("{}: {}", w.agent, w.message),
                agent: Some(w.agent),
                key,
            });
        }
    }

    /// Writes the log to `out`; how many results it left out.
    pub fn write(mut self, out: &mut dyn Write) -> io::Result<usize> {
        // The most severe first when some must go; else in the order found.
        let total = self.findings.len();
        if total > MAX_RESULTS {
            self.findings.sort_by_key(|f| f.level);
            self.findings.truncate(MAX_RESULTS);
        }
        let left_out = total - self.findings.len();
        // Equal keys (two warnings of one kind on one line) are told apart
        // by their order.
        let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let results: Vec<Value> = self
            .findings
            .iter()
            .map(|f| {
                let n = seen.entry(&f.key).or_default();
                *n += 1;
                let fingerprint = hex(&Sha256::digest(format!("{}\0{n}", f.key).as_bytes()));
                let mut result = json!({
                    "ruleId": self.rules[f.rule].id,
                    "ruleIndex": f.rule,
                    "level": f.level.as_str(),
                    "message": {"text": f.message},
                    "locations": [{"physicalLocation": {
                        "artifactLocation": {"uri": uri(&self.base, &f.path)},
                        "region": {"startLine": f.line.unwrap_or(1)},
                    }}],
                    "partialFingerprints": {"promptincludeFinding/v1": fingerprint},
                });
                if let (Some(column), Some(_)) = (f.column, f.line) {
                    result["locations"][0]["physicalLocation"]["region"]["startColumn"] =
                        json!(column);
                }
                if let Some(agent) = f.agent {
                    result["properties"] = json!({"agent": agent});
                }
                result
            })
            .collect();
        let rules: Vec<Value> = self
            .rules
            .iter()
            .map(|r| {
                json!({
                    "id": r.id,
                    "shortDescription": {"text": r.id.replace('_', " ")},
                    "fullDescription": {"text": r.help},
                    "help": {"text": r.help},
                    "defaultConfiguration": {"level": r.level.as_str()},
                })
            })
            .collect();
        let mut notifications = Vec::new();
        if left_out > 0 {
            notifications.push(json!({
                "level": "warning",
                "message": {"text": format!(
                    "{left_out} of {total} results left out: code scanning keeps {MAX_RESULTS} of a run; the most severe are kept (every warning: audit --json)"
                )},
            }));
        }
        let log = json!({
            "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "version": "2.1.0",
            "runs": [{
                "tool": {"driver": {
                    "name": "promptinclude",
                    "version": env!("CARGO_PKG_VERSION"),
                    "semanticVersion": env!("CARGO_PKG_VERSION"),
                    "rules": rules,
                }},
                "invocations": [{
                    "executionSuccessful": true,
                    "toolExecutionNotifications": notifications,
                }],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }],
        });
        serde_json::to_writer(&mut *out, &log).map_err(io::Error::other)?;
        out.write_all(b"\n")?;
        Ok(left_out)
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// `path` as a SARIF URI: relative to `base` when below it (percent-encoded
/// as a relative reference), else a `file:` URI.
fn uri(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if !rel.as_os_str().is_empty() => encode(rel.as_os_str().as_bytes()),
        Ok(_) => "./".to_string(),
        Err(_) => format!("file://{}", encode(path.as_os_str().as_bytes())),
    }
}

/// Percent-encodes every byte but the unreserved characters of RFC 3986 and `/`.
fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{rules, uri};

    #[test]
    fn uris_are_relative_below_the_base_and_encoded() {
        let base = Path::new("/work/repo");
        assert_eq!(
            uri(base, Path::new("/work/repo/a b/c%.md")),
            "a%20b/c%25.md"
        );
        assert_eq!(uri(base, Path::new("/work/repo/日.md")), "%E6%97%A5.md");
        assert_eq!(
            uri(base, Path::new("/work/other/x.md")),
            "file:///work/other/x.md"
        );
        assert_eq!(uri(base, Path::new("/work/repo")), "./");
    }

    #[test]
    fn every_kind_is_one_rule() {
        let rules = rules();
        let mut ids: Vec<&str> = rules.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), rules.len());
        let kinds = super::WarningKind::ALL.len() + super::AgentWarningKind::ALL.len();
        assert_eq!(rules.len(), kinds - 1, "hidden_text is one rule for both");
    }
}
