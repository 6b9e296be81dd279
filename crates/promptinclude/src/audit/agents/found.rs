//! A warning of `audit --agents`: its stable kind names and its record, and
//! [`Found`], which gathers the warnings the finders in [`super::warnings`]
//! and [`super::lint`] find.

use std::collections::hash_map::Entry;
use std::fmt;
use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use serde::{Serialize, Serializer};

/// What a warning is about. The names ([`AgentWarningKind::as_str`]) are
/// stable: `--fail-on` and the JSON use them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AgentWarningKind {
    /// A file cut (or left out whole) by the agent's byte limit.
    Truncated,
    /// A file the agent never reads because another one wins its place.
    Shadowed,
    /// A path-scoped rule whose patterns match no file of the tree.
    DeadScope,
    /// Front matter the agent cannot parse or reads differently from how
    /// it is written.
    BadFrontMatter,
    /// An import that names no file the agent follows.
    UnresolvedImport,
    /// An import nested deeper than the agent follows.
    ImportTooDeep,
    /// An import of a file that (through its imports) imports it.
    ImportCycle,
    /// The same text sent twice by one agent.
    Duplicate,
    /// A file past the agent's own documented size guidance.
    OverRecommended,
    /// A project file that reaches one agent and not another started in the
    /// same place.
    NotShared,
    /// Characters a reader does not see (tag characters, bidirectional
    /// controls, zero-width and format characters) in a file an agent sends.
    HiddenText,
    /// A context file whose whole text is the path of a file beside it: a
    /// symbolic link that a checkout without links wrote as text.
    LinkAsText,
    /// A path a context file names (a relative link, a code span holding a
    /// path) that is not in the repository.
    StaleReference,
}

impl AgentWarningKind {
    /// Every kind.
    pub const ALL: [AgentWarningKind; 13] = [
        AgentWarningKind::Truncated,
        AgentWarningKind::Shadowed,
        AgentWarningKind::DeadScope,
        AgentWarningKind::BadFrontMatter,
        AgentWarningKind::UnresolvedImport,
        AgentWarningKind::ImportTooDeep,
        AgentWarningKind::ImportCycle,
        AgentWarningKind::Duplicate,
        AgentWarningKind::OverRecommended,
        AgentWarningKind::NotShared,
        AgentWarningKind::HiddenText,
        AgentWarningKind::LinkAsText,
        AgentWarningKind::StaleReference,
    ];

    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            AgentWarningKind::Truncated => "truncated",
            AgentWarningKind::Shadowed => "shadowed",
            AgentWarningKind::DeadScope => "dead_scope",
            AgentWarningKind::BadFrontMatter => "bad_front_matter",
            AgentWarningKind::UnresolvedImport => "unresolved_import",
            AgentWarningKind::ImportTooDeep => "import_too_deep",
            AgentWarningKind::ImportCycle => "import_cycle",
            AgentWarningKind::Duplicate => "duplicate",
            AgentWarningKind::OverRecommended => "over_recommended",
            AgentWarningKind::NotShared => "not_shared",
            AgentWarningKind::HiddenText => "hidden_text",
            AgentWarningKind::LinkAsText => "link_as_text",
            AgentWarningKind::StaleReference => "stale_reference",
        }
    }

    /// What it means and what to do, in a sentence or two (the help of
    /// its SARIF rule).
    pub fn help(self) -> &'static str {
        match self {
            AgentWarningKind::Truncated => "The agent's byte limit cuts this context file, or leaves it out: the rest never reaches the model. Shorten the files the agent reads before it, or raise the limit.",
            AgentWarningKind::Shadowed => "The agent never reads this file: another one wins its place (AGENTS.override.md over AGENTS.md, CLAUDE.md over AGENTS.md, ...). Import or link it from the file that wins, or remove it.",
            AgentWarningKind::DeadScope => "A path-scoped rule whose patterns match no file of the tree: it never loads at start.",
            AgentWarningKind::BadFrontMatter => "Front matter the agent cannot parse, or reads otherwise than it is written.",
            AgentWarningKind::UnresolvedImport => "An import that names no file the agent follows (missing, or outside where it follows imports): its text is not sent.",
            AgentWarningKind::ImportTooDeep => "An import nested deeper than the agent follows: its text is not sent.",
            AgentWarningKind::ImportCycle => "An import of a file that, through its imports, imports this one.",
            AgentWarningKind::Duplicate => "The agent sends the same text twice (the same file under two names, or two files with one text): it costs tokens twice.",
            AgentWarningKind::OverRecommended => "A file past the size the agent itself warns about.",
            AgentWarningKind::NotShared => "A project context file that one agent loads and another, started in the same directory, does not: the agents work from different rules.",
            AgentWarningKind::HiddenText => crate::audit::warnings::HIDDEN_TEXT_HELP,
            AgentWarningKind::StaleReference => "A context file names a repository path that does not exist (a relative Markdown link, or a code span holding a path), neither from its directory nor from the root: the rules point the agent at something that is gone. Fix or remove the reference.",
            AgentWarningKind::LinkAsText => "A context file whose whole text is the path of a file beside it: a symbolic link (CLAUDE.md -> AGENTS.md) that a checkout with core.symlinks=false (Windows, some CI) wrote as a small text file. The agent reads the path, not the rules. Enable symbolic links in that checkout, or replace the link with an import or a copy.",
        }
    }
}

impl fmt::Display for AgentWarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AgentWarningKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentWarning {
    /// What it is about.
    pub kind: AgentWarningKind,
    /// The agent (`codex`, …, or the linted `cursor`, `copilot`).
    pub agent: &'static str,
    /// The file it is about.
    pub path: PathBuf,
    /// The 1-based line in it, where there is one.
    pub line: Option<usize>,
    /// What is wrong, in words.
    pub message: String,
    /// Why, in a few words that name no path: the warnings of one kind and
    /// agent with one cause are one finding of the report's summary.
    pub cause: &'static str,
    /// For `hidden_text`: the class of characters (as in the plain audit's
    /// warnings).
    pub class: Option<&'static str>,
    /// The 1-based column (in characters) on `line`, where there is one.
    pub column: Option<usize>,
    /// The directories the agent may be started in where it happens (the
    /// first of each chain; empty when it does not depend on that).
    pub dirs: Vec<PathBuf>,
    /// Found from the agent's documentation only, not from a model checked
    /// against the agent (Cursor, Copilot).
    pub lint_only: bool,
}

impl Serialize for AgentWarning {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Json<'a> {
            kind: AgentWarningKind,
            agent: &'static str,
            path: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            line: Option<usize>,
            message: &'a str,
            cause: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            class: Option<&'static str>,
            #[serde(skip_serializing_if = "Option::is_none")]
            column: Option<usize>,
            dirs: Vec<String>,
            lint_only: bool,
        }
        Json {
            kind: self.kind,
            agent: self.agent,
            path: self.path.to_string_lossy().into_owned(),
            line: self.line,
            message: &self.message,
            cause: self.cause,
            class: self.class,
            column: self.column,
            dirs: self
                .dirs
                .iter()
                .map(|d| d.to_string_lossy().into_owned())
                .collect(),
            lint_only: self.lint_only,
        }
        .serialize(serializer)
    }
}

/// Warnings as they are found: one per (kind, agent, file, message), the
/// directories where it happens gathered.
pub(super) struct Found {
    /// The tree's root: messages name paths below it from it.
    pub(super) root: PathBuf,
    list: Vec<AgentWarning>,
    /// The first warning with each hash of (kind, agent, file, message),
    /// compared in full on a match: most warnings found add a directory to
    /// one found before, and looking it up copies nothing. (Where two
    /// differ with one hash, the list is searched.)
    index: FxHashMap<u64, usize>,
    /// Each warning's directories, by its index and a hash of the path's
    /// bytes: where the first with that hash is in its `dirs` (a warning
    /// about a file near the root has as many as the tree has chains).
    dirs: FxHashMap<(usize, u64), usize>,
}

/// A path's bytes: how warnings' paths and directories are compared and
/// keyed (`Path`'s equality parses components).
pub(super) fn bytes(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// An Fx hash of `value`.
fn fx_hash(value: impl std::hash::Hash) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = rustc_hash::FxHasher::default();
    value.hash(&mut hasher);
    hasher.finish()
}

impl Found {
    pub(super) fn new(root: &Path) -> Found {
        Found {
            root: root.to_path_buf(),
            list: Vec::new(),
            index: FxHashMap::default(),
            dirs: FxHashMap::default(),
        }
    }

    /// A path as messages name it: from the root when it is below it.
    pub(super) fn name(&self, path: &Path) -> String {
        super::shown_path(&self.root, path).into_owned()
    }

    /// Adds a warning, or the directories to the same one found before.
    pub(super) fn add(&mut self, mut warning: AgentWarning) {
        let same = |w: &AgentWarning| {
            w.kind == warning.kind
                && w.agent == warning.agent
                && w.path == warning.path
                && w.message == warning.message
        };
        // The file as `Path` compares it (by components), as the list does.
        let key = fx_hash((warning.kind, warning.agent, &warning.path, &warning.message));
        let found = match self.index.entry(key) {
            Entry::Vacant(first) => {
                first.insert(self.list.len());
                None
            }
            Entry::Occupied(first) if same(&self.list[*first.get()]) => Some(*first.get()),
            // Another warning with the same hash.
            Entry::Occupied(_) => self.list.iter().position(same),
        };
        let dirs = std::mem::take(&mut warning.dirs);
        let i = found.unwrap_or_else(|| {
            self.list.push(warning);
            self.list.len() - 1
        });
        for dir in dirs {
            let known = &mut self.list[i].dirs;
            let seen = match self.dirs.entry((i, fx_hash(bytes(&dir)))) {
                Entry::Vacant(first) => {
                    first.insert(known.len());
                    false
                }
                Entry::Occupied(first) if bytes(&known[*first.get()]) == bytes(&dir) => true,
                // Another directory with the same hash.
                Entry::Occupied(_) => known.iter().any(|k| bytes(k) == bytes(&dir)),
            };
            if !seen {
                known.push(dir);
            }
        }
    }

    /// Adds the warnings found apart in `other`, in their order.
    pub(super) fn absorb(&mut self, other: Found) {
        for warning in other.list {
            self.add(warning);
        }
    }

    /// The warnings by kind, then agent, then path (each kind's finding
    /// order kept among equals).
    pub(super) fn sorted(mut self) -> Vec<AgentWarning> {
        self.list
            .sort_by(|a, b| (a.kind, a.agent, &a.path).cmp(&(b.kind, b.agent, &b.path)));
        self.list
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::{AgentWarning, AgentWarningKind, Found};

    fn warning(kind: AgentWarningKind, path: &str, message: &str, dirs: &[&str]) -> AgentWarning {
        AgentWarning {
            kind,
            agent: "codex",
            path: PathBuf::from(path),
            line: None,
            message: message.to_string(),
            cause: "a cause",
            class: None,
            column: None,
            dirs: dirs.iter().map(PathBuf::from).collect(),
            lint_only: false,
        }
    }

    /// One warning per (kind, agent, file, message), in the order first
    /// found, its directories gathered once each in the order first seen:
    /// the same file spelled with a doubled `/` is the same file (as
    /// `Path` compares), the same directory spelled so is another.
    #[test]
    fn the_same_warning_found_again_adds_only_new_directories() {
        use AgentWarningKind::{Shadowed, Truncated};
        let mut found = Found::new(Path::new("/r"));
        found.add(warning(Truncated, "/r/a", "cut", &["/r/x", "/r/y", "/r/x"]));
        found.add(warning(Truncated, "/r/a", "other", &["/r/x"]));
        found.add(warning(
            Truncated,
            "/r//a",
            "cut",
            &["/r/y", "/r/z", "/r//z"],
        ));
        found.add(warning(Shadowed, "/r/a", "cut", &["/r/x"]));
        let mut other = Found::new(Path::new("/r"));
        other.add(warning(Truncated, "/r/a", "cut", &["/r/w", "/r/x"]));
        found.absorb(other);
        let got: Vec<(AgentWarningKind, &str, Vec<&Path>)> = found
            .list
            .iter()
            .map(|w| {
                (
                    w.kind,
                    w.message.as_str(),
                    w.dirs.iter().map(PathBuf::as_path).collect(),
                )
            })
            .collect();
        let p = Path::new;
        assert_eq!(
            got,
            vec![
                (
                    Truncated,
                    "cut",
                    vec![p("/r/x"), p("/r/y"), p("/r/z"), p("/r//z"), p("/r/w")]
                ),
                (Truncated, "other", vec![p("/r/x")]),
                (Shadowed, "cut", vec![p("/r/x")]),
            ]
        );
    }
}
