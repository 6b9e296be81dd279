//! What a change does to each agent's chains (`diff --agents`).
//!
//! Each side is a [`TreeAudit`] of one tree: a revision checked out in a
//! temporary directory and seen at the tree's own place
//! ([`crate::agents::disk::Rebased`]: the agents name and count its files
//! by the tree's paths, so an unchanged file counts the same on both sides),
//! or the work tree itself. They are compared directory by directory, every
//! path relative to the root. The directories whose
//! chain changed the same way (from one chain before to one chain after)
//! make one [`ChainChange`].
//!
//! What is compared is the files' own, which does not depend on where the
//! tree is: each sent file's text (by its SHA-256: an edit that keeps the
//! size is a change), bytes and tokens, and the agent's byte limit
//! (Codex). The framing the agent adds around them (headers naming paths)
//! follows from the paths, which are compared relative to the root; Gemini
//! CLI's private memory (kept by the project's path) is left out, with the
//! warnings about it. A file whose text changed is shown once, as a unified
//! diff ([`AgentsDiff::texts`]), however many chains send it. The files above the root
//! are not looked at (Claude Code and pi read every directory up to `/`;
//! a checkout elsewhere has other directories above it): the caller audits
//! both sides through [`crate::agents::disk::Confined`], which shows only
//! the tree and the user's own directories, the same on both sides.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::agents::disk::Disk;
use crate::agents::report::status;
use crate::agents::{Agent, ByteLimit, ContextFile, Outcome, Role, Skip};
use crate::audit::agents::{shown_path, AgentWarning, Chain, TreeAudit};
use crate::visible::{visible, visible_lines};

use super::cut::{cut_at_line, MARKDOWN_AGENT_TEXTS_LIMIT};

/// One file of a chain, as the diff compares it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileState {
    /// Relative to the root (absolute outside it: a global file).
    pub path: String,
    /// For an import: the file that imports it (a file may be in a chain
    /// both as itself and as an import, or imported by several).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// The status word of `context --json` (`loaded`, `truncated`, ...).
    pub status: &'static str,
    /// What the status means where the word does not say it all
    /// (`cut at byte 12768 of 36000`, `by AGENTS.override.md`).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// Its size in bytes, when it could be read.
    pub bytes: Option<u64>,
    /// cl100k tokens of what is sent from it.
    pub tokens: usize,
    /// The SHA-256 (hex) of the text sent from it: its bytes, up to the
    /// cut when it is cut; `None` when nothing is sent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent_sha256: Option<String>,
}

/// One chain, told apart from others by what the agent loads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChainState {
    /// Tokens of the files sent (whole or cut).
    pub tokens: usize,
    /// The agent's byte limit and how much the files use of it (Codex).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<ByteLimit>,
    /// Its files in the agent's order.
    pub files: Vec<FileState>,
}

/// Directories whose chain changed the same way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChainChange {
    /// The directories, relative to the root (`.` for it), in tree order.
    pub dirs: Vec<String>,
    /// Their chain before (`None`: the directories did not exist).
    pub before: Option<ChainState>,
    /// Their chain after (`None`: the directories are gone).
    pub after: Option<ChainState>,
    /// The files whose state changed, by path (`None` on a side: not in
    /// the chain there).
    pub files: Vec<FileChange>,
}

/// One file of a changed chain.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileChange {
    /// Relative to the root (absolute outside it).
    pub path: String,
    /// For an import: the file that imports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
    /// Before.
    pub before: Option<FileState>,
    /// After.
    pub after: Option<FileState>,
}

/// What changed for one agent.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentDiff {
    /// The agent.
    #[serde(serialize_with = "agent_name")]
    pub agent: Agent,
    /// Why it would not start, on each side where it would not.
    pub errors: (Option<String>, Option<String>),
    /// Its changed chains, in the order of their first directory.
    pub changes: Vec<ChainChange>,
}

fn agent_name<S: serde::Serializer>(agent: &Agent, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(agent.name())
}

/// A warning, its paths relative to the root.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct WarningLine {
    /// Its kind's stable name.
    pub kind: &'static str,
    /// The agent or linter.
    pub agent: &'static str,
    /// The file it is about.
    pub path: String,
    /// The 1-based line, where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// A file under the root whose sent text changed: once, whatever chains
/// and agents send it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextChange {
    /// Relative to the root.
    pub path: String,
    /// The unified diff of its text (what is sent of it) before and after;
    /// a side that sends nothing of it counts as empty.
    pub diff: String,
}

/// What a change does to every chosen agent's chains.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgentsDiff {
    /// Each agent, in the order asked for.
    pub agents: Vec<AgentDiff>,
    /// The files whose sent text changed, in tree order.
    pub texts: Vec<TextChange>,
    /// Warnings only after.
    pub warnings_added: Vec<WarningLine>,
    /// Warnings only before.
    pub warnings_removed: Vec<WarningLine>,
}

impl AgentsDiff {
    /// Compares the audits of the two sides (the same agents, in the same
    /// order, on each), reading the texts their files send through
    /// `files_before` and `files_after` (the views each side was audited
    /// through: a checkout is seen at the tree's place).
    pub fn between(
        (before, files_before): (&TreeAudit, &dyn Disk),
        (after, files_after): (&TreeAudit, &dyn Disk),
    ) -> AgentsDiff {
        let (mut sent_before, mut sent_after) =
            (SentTexts::new(files_before), SentTexts::new(files_after));
        let agents = before
            .agents
            .iter()
            .zip(&after.agents)
            .map(|(b, a)| AgentDiff {
                agent: a.agent,
                errors: (b.error.clone(), a.error.clone()),
                changes: changes(
                    &Side::of(before, &b.chains, &mut sent_before),
                    &Side::of(after, &a.chains, &mut sent_after),
                ),
            })
            .collect();
        let texts = text_changes(
            &sent_before.under(&before.root),
            &sent_after.under(&after.root),
        );
        let (old, new) = (
            warning_lines(&before.root, &before.warnings),
            warning_lines(&after.root, &after.warnings),
        );
        AgentsDiff {
            agents,
            texts,
            warnings_added: new.iter().filter(|w| !old.contains(w)).cloned().collect(),
            warnings_removed: old.iter().filter(|w| !new.contains(w)).cloned().collect(),
        }
    }

    /// Whether anything changed for any agent.
    pub fn changed(&self) -> bool {
        !self.texts.is_empty()
            || !self.warnings_added.is_empty()
            || !self.warnings_removed.is_empty()
            || self
                .agents
                .iter()
                .any(|a| !a.changes.is_empty() || a.errors.0 != a.errors.1)
    }
}

/// One side's chains, path-independent, and which one each directory is on.
struct Side {
    states: Vec<ChainState>,
    /// Each directory (relative) and its chain, in tree order.
    dirs: Vec<(String, usize)>,
}

impl Side {
    fn of(tree: &TreeAudit, chains: &[Chain], sent: &mut SentTexts<'_>) -> Side {
        let root = &tree.root;
        let states = chains.iter().map(|c| chain_state(root, c, sent)).collect();
        let mut dirs: Vec<(String, usize)> = chains
            .iter()
            .enumerate()
            .flat_map(|(i, c)| {
                tree.dirs_of(c)
                    .map(move |d| (shown_path(root, d).into_owned(), i))
            })
            .collect();
        dirs.sort_by(|a, b| tree_order(&a.0, &b.0));
        Side { states, dirs }
    }
}

/// The root first, then depth first with names sorted (as the chains list
/// their directories).
fn tree_order(a: &str, b: &str) -> std::cmp::Ordering {
    let parts = |p: &str| -> Vec<String> {
        if p == "." {
            Vec::new()
        } else {
            p.split('/').map(str::to_string).collect()
        }
    };
    parts(a).cmp(&parts(b))
}

/// A chain's state: the user's global files and the files under the
/// root. The others are left out: a side checked out elsewhere has other
/// directories above it, and Gemini CLI's private memory is kept by the
/// project's path.
fn chain_state(root: &Path, chain: &Chain, sent: &mut SentTexts<'_>) -> ChainState {
    let files: Vec<FileState> = chain
        .context
        .files
        .iter()
        .filter(|f| f.role == Role::Global || f.path.starts_with(root))
        .map(|f| file_state(root, f, sent))
        .collect();
    ChainState {
        tokens: files.iter().map(|f| f.tokens).sum(),
        limit: chain.context.limit,
        files,
    }
}

/// The text sent from a file, and its SHA-256 (hex).
struct Sent {
    bytes: Vec<u8>,
    sha256: String,
}

/// The text each sent file sends, read once per side (a file is in many
/// chains) through the side's view of the files.
struct SentTexts<'d> {
    files: &'d dyn Disk,
    /// By the file's path and how much of it is sent (`None`: all); `None`
    /// where it cannot be read now.
    texts: HashMap<(PathBuf, Option<u64>), Option<Sent>>,
}

impl<'d> SentTexts<'d> {
    fn new(files: &'d dyn Disk) -> SentTexts<'d> {
        SentTexts {
            files,
            texts: HashMap::new(),
        }
    }

    /// The text sent from `file`; `None` when nothing is sent, or the file
    /// cannot be read now.
    fn of(&mut self, file: &ContextFile) -> Option<&Sent> {
        let cut = match file.outcome {
            Outcome::Loaded => None,
            Outcome::Truncated { at, .. } => Some(at),
            _ => return None,
        };
        self.texts
            .entry((file.path.clone(), cut))
            .or_insert_with(|| {
                let mut bytes = self.files.read(&file.path).ok()?.to_vec();
                if let Some(at) = cut {
                    bytes.truncate(usize::try_from(at).unwrap_or(usize::MAX));
                }
                let sha256 = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                Some(Sent { bytes, sha256 })
            })
            .as_ref()
    }

    /// The texts of the files below `root`, by relative path (a file sent
    /// whole by one chain and cut by another: the whole).
    fn under(&self, root: &Path) -> BTreeMap<String, &[u8]> {
        let mut under: BTreeMap<String, &[u8]> = BTreeMap::new();
        for ((path, _), text) in &self.texts {
            let Some(Sent { bytes, .. }) = text else {
                continue;
            };
            if !path.starts_with(root) {
                continue;
            }
            let kept = under
                .entry(shown_path(root, path).into_owned())
                .or_insert(bytes);
            if bytes.len() > kept.len() {
                *kept = bytes;
            }
        }
        under
    }
}

/// The files whose sent text differs between the sides, in tree order.
fn text_changes(
    before: &BTreeMap<String, &[u8]>,
    after: &BTreeMap<String, &[u8]>,
) -> Vec<TextChange> {
    let mut paths: Vec<&String> = before.keys().chain(after.keys()).collect();
    paths.sort_by(|a, b| tree_order(a, b));
    paths.dedup();
    paths
        .into_iter()
        .filter_map(|path| {
            let (old, new) = (before.get(path), after.get(path));
            if old == new {
                return None;
            }
            let text = |side: Option<&&[u8]>| {
                String::from_utf8_lossy(side.copied().unwrap_or_default()).into_owned()
            };
            let labels = (format!("a/{path}"), format!("b/{path}"));
            Some(TextChange {
                path: path.clone(),
                diff: crate::diff::unified_diff(&text(old), &text(new), 3, (&labels.0, &labels.1)),
            })
        })
        .collect()
}

fn file_state(root: &Path, file: &ContextFile, sent: &mut SentTexts<'_>) -> FileState {
    let detail = match &file.outcome {
        Outcome::Truncated { at, of } => format!("cut at byte {at} of {of}"),
        Outcome::Shadowed { by } => format!("by {}", shown_path(root, by)),
        Outcome::Skipped(Skip::Unreadable(e)) => e.clone(),
        _ => String::new(),
    };
    FileState {
        path: shown_path(root, &file.path).into_owned(),
        via: file
            .parent
            .as_ref()
            .map(|p| shown_path(root, p).into_owned()),
        status: status(&file.outcome),
        detail,
        bytes: file.bytes,
        tokens: file.tokens,
        sent_sha256: sent.of(file).map(|sent| sent.sha256.clone()),
    }
}

/// The directories whose chain differs, grouped by (chain before, chain
/// after).
fn changes(before: &Side, after: &Side) -> Vec<ChainChange> {
    let was: HashMap<&str, usize> = before.dirs.iter().map(|(d, i)| (d.as_str(), *i)).collect();
    let is: HashMap<&str, usize> = after.dirs.iter().map(|(d, i)| (d.as_str(), *i)).collect();
    let mut all: Vec<&str> = after.dirs.iter().map(|(d, _)| d.as_str()).collect();
    all.extend(
        before
            .dirs
            .iter()
            .map(|(d, _)| d.as_str())
            .filter(|d| !is.contains_key(d)),
    );
    all.sort_by(|a, b| tree_order(a, b));
    let mut groups: Vec<ChainChange> = Vec::new();
    let mut index: HashMap<(Option<usize>, Option<usize>), usize> = HashMap::new();
    for dir in all {
        let key = (was.get(dir).copied(), is.get(dir).copied());
        let old = key.0.map(|i| &before.states[i]);
        let new = key.1.map(|i| &after.states[i]);
        if old == new {
            continue;
        }
        match index.get(&key) {
            Some(&g) => groups[g].dirs.push(dir.to_string()),
            None => {
                index.insert(key, groups.len());
                groups.push(ChainChange {
                    dirs: vec![dir.to_string()],
                    before: old.cloned(),
                    after: new.cloned(),
                    files: file_changes(old, new),
                });
            }
        }
    }
    groups
}

/// The files of a chain whose state differs, in the after side's order,
/// then those only before. A file is the same on both sides when its path
/// and importer are, and it is as many times there before (the n-th on one
/// side is the n-th on the other).
fn file_changes(before: Option<&ChainState>, after: Option<&ChainState>) -> Vec<FileChange> {
    type Key<'a> = (&'a str, Option<&'a str>, usize);
    fn keyed(state: Option<&ChainState>) -> Vec<(Key<'_>, &FileState)> {
        let mut seen: HashMap<(&str, Option<&str>), usize> = HashMap::new();
        state
            .map_or(&[][..], |s| &s.files[..])
            .iter()
            .map(|f| {
                let id = (f.path.as_str(), f.via.as_deref());
                let n = seen.entry(id).or_default();
                *n += 1;
                ((id.0, id.1, *n), f)
            })
            .collect()
    }
    let (old, new) = (keyed(before), keyed(after));
    let find = |list: &[(Key<'_>, &FileState)], key: &Key<'_>| {
        list.iter()
            .find(|(k, _)| k == key)
            .map(|(_, f)| (*f).clone())
    };
    let change = |f: &FileState, before: Option<FileState>, after: Option<FileState>| FileChange {
        path: f.path.clone(),
        via: f.via.clone(),
        before,
        after,
    };
    let mut out = Vec::new();
    for (key, f) in &new {
        let was = find(&old, key);
        if was.as_ref() != Some(*f) {
            out.push(change(f, was, Some((*f).clone())));
        }
    }
    for (_, f) in old.iter().filter(|(key, _)| find(&new, key).is_none()) {
        out.push(change(f, Some((*f).clone()), None));
    }
    out
}

/// A file's name in a report: `a.md`, or `a.md (imported by CLAUDE.md)`.
fn file_name(path: &str, via: Option<&str>) -> String {
    match via {
        Some(via) => format!("{path} (imported by {via})"),
        None => path.to_string(),
    }
}

/// The warnings about files under the root, their paths (and the root in
/// their messages) shown relative to it, sorted. (Those about other files
/// are left out: a checkout elsewhere has other directories above it, and
/// the home is the same on both sides.)
fn warning_lines(root: &Path, warnings: &[AgentWarning]) -> Vec<WarningLine> {
    let prefix = format!("{}/", root.display());
    let mut lines: Vec<WarningLine> = warnings
        .iter()
        .filter(|w| w.path.starts_with(root))
        .map(|w| WarningLine {
            kind: w.kind.as_str(),
            agent: w.agent,
            path: shown_path(root, &w.path).into_owned(),
            line: w.line,
            message: w.message.replace(&prefix, ""),
        })
        .collect();
    lines.sort();
    lines.dedup();
    lines
}

/// A chain's numbers: `7000 tokens, 32768 of 32768 bytes`, or `-` where
/// the directories are not.
fn chain_numbers(state: Option<&ChainState>) -> String {
    let Some(state) = state else {
        return "-".to_string();
    };
    match state.limit {
        Some(l) => format!("{} tokens, {} of {} bytes", state.tokens, l.used, l.max),
        None => format!("{} tokens", state.tokens),
    }
}

/// A file's state: `loaded, 16004 bytes, 4001 tokens`, `truncated (cut at
/// byte 32741 of 36000), 36000 bytes, 6821 tokens`, or `-` where the chain
/// does not have it.
fn file_words(state: Option<&FileState>) -> String {
    let Some(state) = state else {
        return "-".to_string();
    };
    let mut words = state.status.to_string();
    if !state.detail.is_empty() {
        words.push_str(&format!(" ({})", state.detail));
    }
    if let Some(bytes) = state.bytes {
        words.push_str(&format!(", {bytes} bytes"));
    }
    words.push_str(&format!(", {} tokens", state.tokens));
    words
}

/// `services/payments`, or `services/payments and 3 more`.
fn dirs_words(dirs: &[String]) -> String {
    match dirs.len() {
        1 => dirs[0].clone(),
        n => format!("{} and {} more", dirs[0], n - 1),
    }
}

impl AgentsDiff {
    /// The text report's part: every agent's changed chains with their
    /// changed files, the warnings that came and went, then each changed
    /// file's text diff, once. `escape` (a terminal) shows control
    /// characters visibly, in names and in the texts' lines.
    pub fn text(&self, escape: bool) -> String {
        use std::fmt::Write as _;
        let shown = |s: &str| {
            if escape {
                visible(s).into_owned()
            } else {
                s.to_string()
            }
        };
        let mut out = String::from("agents:\n");
        for agent in &self.agents {
            let name = agent.agent.name();
            if agent.errors.0 != agent.errors.1 {
                let error = |e: &Option<String>| e.clone().unwrap_or_else(|| "starts".into());
                let _ = writeln!(
                    out,
                    "  {name}: {} → {}",
                    error(&agent.errors.0),
                    error(&agent.errors.1)
                );
            }
            if agent.changes.is_empty() {
                if agent.errors.0 == agent.errors.1 {
                    let _ = writeln!(out, "  {name}: unchanged");
                }
                continue;
            }
            let _ = writeln!(out, "  {name}: {} chain change(s)", agent.changes.len());
            for change in &agent.changes {
                let _ = writeln!(
                    out,
                    "    {}: {} → {}",
                    shown(&dirs_words(&change.dirs)),
                    chain_numbers(change.before.as_ref()),
                    chain_numbers(change.after.as_ref())
                );
                for file in &change.files {
                    let _ = writeln!(
                        out,
                        "      {}: {} → {}{}",
                        shown(&file_name(&file.path, file.via.as_deref())),
                        file_words(file.before.as_ref()),
                        file_words(file.after.as_ref()),
                        text_changed_words(file)
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            "agent warnings: +{} -{}",
            self.warnings_added.len(),
            self.warnings_removed.len()
        );
        for (sign, list) in [("+", &self.warnings_added), ("-", &self.warnings_removed)] {
            for w in list.iter() {
                let line = w.line.map(|l| format!(":{l}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  {sign} {} {} {}{line}: {}",
                    w.kind,
                    w.agent,
                    shown(&w.path),
                    shown(&w.message)
                );
            }
        }
        if !self.texts.is_empty() {
            let _ = writeln!(out, "agent files whose text changed: {}", self.texts.len());
            for text in &self.texts {
                out.push_str(&shown_diff(&text.diff, escape));
            }
        }
        out
    }

    /// The Markdown report's part (a pull-request comment): a table of the
    /// changed chains, their changed files, the warnings that came and
    /// went, and each changed file's text diff, once. `md` makes a text
    /// safe inside Markdown; `fence` gives the code fence for a text;
    /// `escape` (a terminal) shows control characters in the texts' lines.
    pub fn markdown(
        &self,
        md: &dyn Fn(&str) -> String,
        fence: &dyn Fn(&str) -> String,
        escape: bool,
    ) -> String {
        use std::fmt::Write as _;
        let mut out = String::from("#### Agents\n\n");
        let changed: Vec<&AgentDiff> = self
            .agents
            .iter()
            .filter(|a| !a.changes.is_empty() || a.errors.0 != a.errors.1)
            .collect();
        let unchanged: Vec<&str> = self
            .agents
            .iter()
            .filter(|a| a.changes.is_empty() && a.errors.0 == a.errors.1)
            .map(|a| a.agent.name())
            .collect();
        if !changed.is_empty() {
            let _ = writeln!(out, "| Agent | Directories | Before | After |");
            let _ = writeln!(out, "|---|---|---|---|");
            for agent in &changed {
                if agent.errors.0 != agent.errors.1 {
                    let error =
                        |e: &Option<String>| e.as_deref().map_or_else(|| "starts".to_string(), md);
                    let _ = writeln!(
                        out,
                        "| {} | (all) | {} | {} |",
                        agent.agent.name(),
                        error(&agent.errors.0),
                        error(&agent.errors.1)
                    );
                }
                for change in &agent.changes {
                    let _ = writeln!(
                        out,
                        "| {} | {} | {} | {} |",
                        agent.agent.name(),
                        md(&dirs_words(&change.dirs)),
                        chain_numbers(change.before.as_ref()),
                        chain_numbers(change.after.as_ref())
                    );
                }
            }
            out.push('\n');
            for agent in &changed {
                for change in &agent.changes {
                    for file in &change.files {
                        let _ = writeln!(
                            out,
                            "- {} in {}, {}: {} → {}{}",
                            agent.agent.name(),
                            md(&dirs_words(&change.dirs)),
                            md(&file_name(&file.path, file.via.as_deref())),
                            md(&file_words(file.before.as_ref())),
                            md(&file_words(file.after.as_ref())),
                            text_changed_words(file)
                        );
                    }
                }
            }
            if changed
                .iter()
                .any(|a| a.changes.iter().any(|c| !c.files.is_empty()))
            {
                out.push('\n');
            }
        }
        if !unchanged.is_empty() {
            let _ = writeln!(out, "Unchanged: {}.\n", unchanged.join(", "));
        }
        let _ = writeln!(
            out,
            "**Agent warnings:** +{} −{}\n",
            self.warnings_added.len(),
            self.warnings_removed.len()
        );
        for (sign, list) in [
            ("added", &self.warnings_added),
            ("gone", &self.warnings_removed),
        ] {
            for w in list.iter() {
                let line = w.line.map(|l| format!(":{l}")).unwrap_or_default();
                let _ = writeln!(
                    out,
                    "- {sign}: `{}` {} {}{line}: {}",
                    w.kind,
                    w.agent,
                    md(&w.path),
                    md(&w.message)
                );
            }
        }
        let mut room = MARKDOWN_AGENT_TEXTS_LIMIT;
        for text in &self.texts {
            let diff = shown_diff(&text.diff, escape);
            let (shown, cut) = cut_at_line(&diff, room);
            room -= shown.len();
            let fence = fence(shown);
            let _ = writeln!(
                out,
                "\n<details><summary>{}: text changed</summary>\n\n{fence}diff\n{shown}{fence}\n",
                md(&text.path)
            );
            if cut > 0 {
                let _ = writeln!(
                    out,
                    "{cut} more lines not shown; run `promptinclude diff --agents` to see them all.\n"
                );
            }
            out.push_str("</details>\n");
        }
        out
    }
}

/// ` (text changed)` when a file is sent on both sides with other text.
fn text_changed_words(file: &FileChange) -> &'static str {
    let hash = |side: &Option<FileState>| side.as_ref().and_then(|f| f.sent_sha256.clone());
    match (hash(&file.before), hash(&file.after)) {
        (Some(old), Some(new)) if old != new => " (text changed)",
        _ => "",
    }
}

/// A text diff as a person sees it: with `escape` (a terminal), every
/// character that could hide a line or the line above it made visible
/// (tabs and line ends kept).
fn shown_diff(diff: &str, escape: bool) -> String {
    if escape {
        visible_lines(diff).into_owned()
    } else {
        diff.to_string()
    }
}
