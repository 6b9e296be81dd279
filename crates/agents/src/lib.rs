//! What other agents load as context files: each agent's loader modelled
//! exactly (checked against the real agent in `tests/agents`), with what
//! became of every file it considered and the text it puts into its model
//! request.
//!
//! One function per agent returns an [`AgentContext`]; [`report`] renders it
//! as text or JSON (schema [`report::SCHEMA`]). The rules of each model,
//! the version it was checked on and what could not be checked are in
//! `docs/agents-context.md`.
//!
//! Agent Zero is listed here too, but its loader is the scan it reuses:
//! the program that has the scan hands it in as a [`Host`].
#![deny(missing_docs)]

pub mod advice;
pub(crate) mod claude_code;
pub mod codex;
pub(crate) mod copilot;
pub mod disk;
mod engine;
pub mod gemini;
mod js;
mod markdown;
pub use markdown::code_span_close;
pub(crate) mod opencode;
pub mod pi;
pub(crate) mod qwen;
pub mod report;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde::Serialize;

/// An agent whose context loading is modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    /// Agent Zero's Prompt Include plugin (`*.promptinclude.md`).
    AgentZero,
    /// Anthropic Claude Code (`CLAUDE.md`, `.claude/rules/`).
    ClaudeCode,
    /// OpenAI Codex CLI (`AGENTS.md`).
    Codex,
    /// GitHub Copilot CLI (custom instructions, `AGENTS.md`, instruction files).
    CopilotCli,
    /// Google Gemini CLI (`GEMINI.md`).
    Gemini,
    /// opencode (`AGENTS.md`, else `CLAUDE.md`, else `CONTEXT.md`).
    Opencode,
    /// The pi coding agent (`AGENTS.md` or `CLAUDE.md`).
    Pi,
    /// Qwen Code (`QWEN.md`, `AGENTS.md`, `.qwen/rules`).
    QwenCode,
}

impl Agent {
    /// Every modelled agent, in the one order every output lists them in:
    /// by [`name`](Agent::name), which is also the variants' order.
    pub const ALL: [Agent; 8] = [
        Agent::AgentZero,
        Agent::ClaudeCode,
        Agent::Codex,
        Agent::CopilotCli,
        Agent::Gemini,
        Agent::Opencode,
        Agent::Pi,
        Agent::QwenCode,
    ];

    /// The agent with this [`name`](Agent::name).
    pub fn from_name(name: &str) -> Option<Agent> {
        Agent::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The names of every modelled agent, for messages (`codex, claude-code`).
    pub fn names() -> String {
        Agent::ALL.map(Agent::name).join(", ")
    }

    /// The name on the command line and in JSON.
    pub fn name(self) -> &'static str {
        self.registered().name
    }

    /// The product, as its makers name it (`OpenAI Codex CLI`).
    pub fn product(self) -> &'static str {
        self.registered().product
    }

    /// The SHA-256 of the source the model reproduces, where the agent's
    /// own source is what is reproduced (Agent Zero's plugin), not one of
    /// its releases.
    pub fn reference_sha256(self) -> Option<&'static str> {
        (self == Agent::AgentZero).then_some(AGENT_ZERO_REFERENCE_SHA256)
    }

    /// The version of the agent the model reproduces (the one the e2e tests
    /// run).
    pub fn version(self) -> &'static str {
        self.registered().version
    }

    /// The variable that moves the agent's own directory away from the
    /// home (`CODEX_HOME`), if it has one.
    pub fn directory_variable(self) -> Option<&'static str> {
        self.registered().directory_variable
    }

    /// For an agent with folder trust, which loads no project file in a
    /// folder the user has not trusted: the environment variable and value
    /// that trust the working folder (`GEMINI_CLI_TRUST_WORKSPACE=true`), as
    /// the project's own developers have it.
    pub fn trust_variable(self) -> Option<(&'static str, &'static str)> {
        self.registered().trust_variable
    }

    /// Whether its context files are of the kind other agents read too
    /// (`AGENTS.md`, `CLAUDE.md`, ...), so that what one sends and another
    /// does not is worth a word: Agent Zero's `*.promptinclude.md` are its
    /// own.
    pub fn shares_files(self) -> bool {
        self.registered().shares_files
    }

    /// How the text report's header says where the agent looks, given the
    /// project root it found (`None`: none).
    pub(crate) fn scope_words(self, root: Option<&Path>) -> Option<String> {
        match (self.registered().scope, root) {
            (Scope::Always(words), _) | (Scope::RootElse(words), None) => Some(words.to_string()),
            (Scope::RootElse(_), Some(_)) => None,
        }
    }

    /// What the agent itself warns of in the files it loads (its model's;
    /// Agent Zero's own warnings are the audit's).
    pub fn advice(self) -> advice::Advice {
        self.registered()
            .model
            .map_or_else(advice::Advice::default, Modelled::advice)
    }

    /// The one registry of agents: what every output names each by, and
    /// its model.
    fn registered(self) -> Registered {
        let registered = |name, product, version, directory_variable, model| Registered {
            name,
            product,
            version,
            directory_variable,
            trust_variable: None,
            shares_files: self != Agent::AgentZero,
            scope: Scope::RootElse("no project root: only this directory"),
            model,
        };
        match self {
            Agent::AgentZero => Registered {
                scope: Scope::Always("the project is this directory"),
                ..registered(
                    "agent-zero",
                    "Agent Zero's Prompt Include plugin",
                    AGENT_ZERO_VERSION,
                    None,
                    None,
                )
            },
            Agent::ClaudeCode => Registered {
                scope: Scope::Always("it reads every directory above it"),
                ..registered(
                    "claude-code",
                    "Anthropic Claude Code",
                    claude_code::VERSION,
                    Some("CLAUDE_CONFIG_DIR"),
                    Some(&claude_code::Registered),
                )
            },
            Agent::Codex => registered(
                "codex",
                "OpenAI Codex CLI",
                codex::VERSION,
                Some("CODEX_HOME"),
                Some(&codex::Registered),
            ),
            Agent::CopilotCli => registered(
                "copilot-cli",
                "GitHub Copilot CLI",
                copilot::VERSION,
                None,
                Some(&copilot::Registered),
            ),
            Agent::Gemini => Registered {
                trust_variable: Some(("GEMINI_CLI_TRUST_WORKSPACE", "true")),
                ..registered(
                    "gemini",
                    "Google Gemini CLI",
                    gemini::VERSION,
                    Some("GEMINI_CLI_HOME"),
                    Some(&gemini::Registered),
                )
            },
            Agent::Opencode => Registered {
                scope: Scope::RootElse("no git repository: it reads every directory above it"),
                ..registered(
                    "opencode",
                    "opencode, the open source coding agent",
                    opencode::VERSION,
                    Some("XDG_CONFIG_HOME"),
                    Some(&opencode::Registered),
                )
            },
            Agent::Pi => Registered {
                scope: Scope::Always("it reads every directory above it"),
                ..registered(
                    "pi",
                    "The pi coding agent",
                    pi::VERSION,
                    Some("PI_CODING_AGENT_DIR"),
                    Some(&pi::Registered),
                )
            },
            Agent::QwenCode => Registered {
                scope: Scope::RootElse(
                    "no project root: it reads every directory up to the one above the home",
                ),
                ..registered(
                    "qwen-code",
                    "Qwen Code",
                    qwen::VERSION,
                    Some("QWEN_HOME"),
                    Some(&qwen::Registered),
                )
            },
        }
    }
}

/// What the registry holds of one agent.
struct Registered {
    name: &'static str,
    product: &'static str,
    version: &'static str,
    directory_variable: Option<&'static str>,
    /// See [`Agent::trust_variable`].
    trust_variable: Option<(&'static str, &'static str)>,
    shares_files: bool,
    /// How the text report's header says where it looks.
    scope: Scope,
    /// Its model (`None`: Agent Zero, whose loader is the [`Host`]'s).
    model: Option<&'static dyn Modelled>,
}

/// Where an agent looks, as the text report's header says it.
#[derive(Clone, Copy)]
enum Scope {
    /// These words, whatever root it finds.
    Always(&'static str),
    /// The project root it finds, else these words.
    RootElse(&'static str),
}

/// An agent modelled in this crate, as the registry runs it (each module
/// reads its own variables from the start's environment).
pub(crate) trait Modelled: Sync {
    /// What it loads when started as `start` says, its text written as
    /// `writing` says.
    fn context(
        &self,
        start: &Start<'_>,
        disk: &dyn disk::Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError>;

    /// What it loads started in each directory of `tree` ([`contexts_shared`]),
    /// `start` giving the home and the environment.
    fn contexts(
        &self,
        tree: &Tree,
        start: &Start<'_>,
        disk: &disk::Remembered<'_>,
    ) -> Result<Vec<Shared>, ContextError>;

    /// What it warns of in the files it loads (nothing, unless its
    /// module says).
    fn advice(&self) -> advice::Advice {
        advice::Advice::default()
    }
}

/// The Prompt Include plugin version the Agent Zero loader reproduces (its
/// `plugin.yaml`; the whole reference is proven by the oracle tests).
pub(crate) const AGENT_ZERO_VERSION: &str = "1.0.0";

/// The SHA-256 of the Agent Zero source the Prompt Include loader
/// reproduces, exactly: the plugin and its host helpers (there is no
/// upstream commit to name), as the oracle tests compute it
/// (`promptinclude::agents::agent_zero::reference_digest`).
pub const AGENT_ZERO_REFERENCE_SHA256: &str =
    "c540687fc8894ebea123cb4fc6a70bf01389a0e1d9d7dd3e8ae48021cb8629b2";

/// What the program using this crate provides: the loaders of the agents
/// modelled outside it. Agent Zero's is the scan itself, which this crate
/// does not depend on.
pub trait Host: Sync {
    /// What Agent Zero loads when started as `start` says.
    fn agent_zero(&self, start: &Start<'_>) -> Result<AgentContext, ContextError>;
}

/// How an agent is started: where, for which user, with which of its own
/// environment variables.
pub struct Start<'a> {
    /// The directory it is started in.
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// The environment as the agent reads it (only its own variables are
    /// asked for: `CODEX_HOME`, `CLAUDE_CONFIG_DIR`, ...).
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
}

/// What `agent` loads when started as `start` says.
pub fn context(
    agent: Agent,
    start: &Start<'_>,
    host: &dyn Host,
) -> Result<AgentContext, ContextError> {
    context_on(agent, start, &disk::Live, host)
}

/// The contexts `agent` loads when started in each directory of the tree at
/// `root`: the root first, then its directories depth first, each
/// directory's entries in name order (links to directories and `.git` not
/// entered). They are computed together, in parallel, over `disk`, which
/// asks the system each question once however many chains share a file
/// (one [`disk::Remembered`] can serve every agent of one look at a tree).
/// Agent Zero's project is a whole tree, so for it only the root's context
/// is given.
pub fn contexts_under(
    agent: Agent,
    root: &Path,
    home: &Path,
    env: &(dyn Fn(&str) -> Option<OsString> + Sync),
    disk: &disk::Remembered<'_>,
    host: &dyn Host,
) -> Result<Vec<AgentContext>, ContextError> {
    use rayon::prelude::*;
    let tree = Tree::of(root, disk)?;
    let env = |name: &str| env(name);
    tree.starts(agent)
        .par_iter()
        .map(|dir| {
            let start = Start {
                cwd: dir,
                home,
                env: &env,
            };
            context_on(agent, &start, disk, host)
        })
        .collect()
}

/// Every directory of a tree by its physical path, in
/// [`contexts_under`]'s order, each with its parent and its listing.
pub struct Tree {
    /// The directories, the root first.
    pub dirs: Vec<PathBuf>,
    /// The index in `dirs` of each one's parent (`None` for the root).
    parents: Vec<Option<usize>>,
    /// Each directory's listing, as the tree was made from it (empty where
    /// it could not be listed).
    listings: Vec<disk::Listing>,
    /// Whether each directory could be listed.
    listed: Vec<bool>,
    /// The index in `dirs` after each one's last directory below it: in
    /// depth-first order, the directories below one are those between.
    ends: Vec<usize>,
}

impl Tree {
    /// The tree at `root`, as listing its directories through `disk` finds
    /// it.
    pub fn of(root: &Path, disk: &dyn disk::Disk) -> Result<Tree, ContextError> {
        let mut tree = Tree {
            dirs: Vec::new(),
            parents: Vec::new(),
            listings: Vec::new(),
            listed: Vec::new(),
            ends: Vec::new(),
        };
        // Depth first without recursion (a tree may be deeper than a
        // thread's stack): a directory's entries are pushed last first.
        let mut next = vec![(physical_cwd(disk, root)?, None)];
        while let Some((dir, parent)) = next.pop() {
            let index = tree.dirs.len();
            let listing = disk.read_dir(&dir);
            tree.listed.push(listing.is_ok());
            let listing = listing.unwrap_or_default();
            let mut below: Vec<&OsStr> = listing
                .iter()
                .filter(|(name, kind)| kind.is_dir() && *name != ".git")
                .map(|(name, _)| name)
                .collect();
            // By name, which for one directory's entries is `Path`'s order
            // (by components) without parsing them.
            below.sort_unstable();
            next.extend(
                below
                    .into_iter()
                    .rev()
                    .map(|d| (disk::joined(&dir, d), Some(index))),
            );
            tree.dirs.push(dir);
            tree.parents.push(parent);
            tree.listings.push(listing);
        }
        // A directory's subtree ends where its last directory's does (the
        // directories come after their parents).
        tree.ends = (1..=tree.dirs.len()).collect();
        for i in (1..tree.dirs.len()).rev() {
            if let Some(p) = tree.parents[i] {
                tree.ends[p] = tree.ends[p].max(tree.ends[i]);
            }
        }
        Ok(tree)
    }

    /// Directory `i`'s listing (empty where it could not be listed).
    pub fn listing(&self, i: usize) -> &disk::Listing {
        &self.listings[i]
    }

    /// Directory `i`'s listing as `disk.read_dir` gave it to [`Tree::of`],
    /// or `None` where it could not be listed.
    pub fn listed(&self, i: usize) -> Option<&disk::Listing> {
        self.listed[i].then(|| &self.listings[i])
    }

    /// The index in [`dirs`](Tree::dirs) of directory `i`'s parent (`None`
    /// for the root).
    pub fn parent(&self, i: usize) -> Option<usize> {
        self.parents[i]
    }

    /// The index after directory `i`'s last directory below it: those
    /// below it are the ones from `i + 1` up to this.
    pub fn end(&self, i: usize) -> usize {
        self.ends[i]
    }

    /// The directories whose contexts [`contexts_under`] and
    /// [`contexts_shared`] give: every one, or for Agent Zero (whose
    /// project is the whole tree) the root alone.
    pub fn starts(&self, agent: Agent) -> &[PathBuf] {
        if agent == Agent::AgentZero {
            &self.dirs[..1]
        } else {
            &self.dirs
        }
    }
}

/// What the agent loads in one directory of a tree, from [`contexts_shared`].
#[derive(Debug)]
pub enum Shared {
    /// The context computed there, measured.
    Own(Measured),
    /// The same root, files, limit and notes as the directory at this
    /// earlier index, whose context is [`Shared::Own`]: an ancestor, when
    /// the agent finds nothing more here and nothing it found there depends
    /// on being started above; or a sibling, when both add nothing and
    /// nothing found from their parent depends on being started in either
    /// (Claude Code). (The parts differ: they may name the directory.)
    As(usize),
}

/// [`contexts_under`] for what the chains need, over a tree already
/// listed through `disk`: one for each of [`Tree::starts`]. A directory
/// that adds nothing for the agent is not computed again but given as its
/// nearest computed ancestor's ([`Shared::As`]), and one that is like its
/// siblings as the first of them. Each agent's model decides, with the
/// rules that make its context depend on the start directory (`Likeness`,
/// from each module's `ParentFacts`, found once per parent and asked with
/// each directory's listing from the tree); where it cannot be sure, the
/// context is computed, and [measured](Measured). Levels of the tree are
/// done one after another, each level's contexts in parallel when there
/// are enough of them.
pub fn contexts_shared(
    agent: Agent,
    tree: &Tree,
    home: &Path,
    env: &(dyn Fn(&str) -> Option<OsString> + Sync),
    disk: &disk::Remembered<'_>,
    host: &dyn Host,
) -> Result<Vec<Shared>, ContextError> {
    let env = |name: &str| env(name);
    let start = Start {
        cwd: &tree.dirs[0],
        home,
        env: &env,
    };
    match agent.registered().model {
        Some(model) => model.contexts(tree, &start, disk),
        // Agent Zero's project is the whole tree: its root alone.
        None => {
            let context = host.agent_zero(&start)?;
            Ok(vec![Shared::Own(Measured::of(context, disk))])
        }
    }
}

/// The indices of `tree`'s directories by depth, the root's level first,
/// each level in the tree's order (a parent comes before its directories,
/// so its depth is known).
fn levels(tree: &Tree) -> Vec<Vec<usize>> {
    let mut depth = vec![0usize; tree.dirs.len()];
    let mut levels: Vec<Vec<usize>> = Vec::new();
    for i in 0..tree.dirs.len() {
        depth[i] = tree.parents[i].map_or(0, |p| depth[p] + 1);
        if levels.len() <= depth[i] {
            levels.push(Vec::new());
        }
        levels[depth[i]].push(i);
    }
    levels
}

/// A context with what it sends measured, and its [parts](AgentContext::parts)
/// let go: a tree's chains send megabytes that nothing reads again once
/// counted, and each one let go as soon as it is counted is memory the
/// next one reuses (kept until the tree's chains were grouped, they were
/// a fifth of `audit --agents`' page faults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured {
    /// The context, without its parts.
    pub context: AgentContext,
    /// The bytes of its [raw](AgentContext::raw) text (0 when it sends
    /// nothing).
    pub bytes: usize,
    /// The tokens of that text.
    pub tokens: usize,
}

impl Measured {
    /// `context` measured, its tokens counted through `disk`.
    pub fn of(mut context: AgentContext, disk: &dyn disk::Disk) -> Measured {
        let (bytes, tokens) = match context.parts.as_slice() {
            [one] => (one.len(), one.tokens(disk)),
            _ => context
                .raw()
                .map_or((0, 0), |raw| (raw.len(), disk.count_tokens(&raw))),
        };
        context.parts = Vec::new();
        Measured {
            context,
            bytes,
            tokens,
        }
    }
}

/// Whether `dir` can be listed and has no entry with one of `names`
/// (compared without ASCII case, as a case-insensitive file system
/// would match them).
fn holds_none(disk: &dyn disk::Disk, dir: &Path, names: &[impl AsRef<str>]) -> bool {
    holds_none_in(disk.read_dir(dir).ok().as_ref(), names)
}

/// [`holds_none`] of a directory listed as `listing` (`None`: it could not
/// be listed).
fn holds_none_in(listing: Option<&disk::Listing>, names: &[impl AsRef<str>]) -> bool {
    listing.is_some_and(|entries| {
        // Mostly told from the listing's mask, without comparing names.
        let maybe = |n: &str| entries.may_hold_ignoring_case(n.as_bytes());
        !names.iter().any(|n| maybe(n.as_ref()))
            || entries.iter().all(|(name, _)| {
                let name = name.as_encoded_bytes();
                !names
                    .iter()
                    .any(|n| n.as_ref().as_bytes().eq_ignore_ascii_case(name))
            })
    })
}

/// Whether `name` is one directory entry's name (not empty, `.`, `..`, and
/// without `/`), so that [`holds_none`] can look for it.
fn plain_name(name: &str) -> bool {
    !matches!(name, "" | "." | "..") && !name.contains(['/', '\0'])
}

/// Whether `path` is `dir` or below it, as `Path::starts_with` says (by
/// components), by bytes where both are plain paths: the models ask it
/// of every file for every start.
pub(crate) fn is_below(path: &Path, dir: &Path) -> bool {
    Below::new(dir).holds(path)
}

/// A directory asked [`is_below`] of many paths, whether its parts are
/// plain found once (Claude Code's likeness asks it of each import of a
/// parent's context, for the start and for the parent).
pub(crate) struct Below<'a> {
    dir: &'a Path,
    plain: bool,
}

impl<'a> Below<'a> {
    pub(crate) fn new(dir: &'a Path) -> Below<'a> {
        Below {
            dir,
            plain: disk::is_plain(dir.as_os_str().as_encoded_bytes()),
        }
    }

    /// Whether `path` is the directory (`Path`'s `==`, by components): a
    /// path that does not start with it by bytes, as most do not, is
    /// answered without parsing either.
    pub(crate) fn is(&self, path: &Path) -> bool {
        self.holds(path) && path == self.dir
    }

    /// Whether `path` is the directory or below it ([`is_below`]).
    pub(crate) fn holds(&self, path: &Path) -> bool {
        let dir = self.dir;
        if !self.plain {
            return path.starts_with(dir);
        }
        let (p, d) = (
            path.as_os_str().as_encoded_bytes(),
            dir.as_os_str().as_encoded_bytes(),
        );
        // `dir`'s parts are plain, and `path` has the same bytes up to
        // `same`: its parts are `dir`'s up to the part that holds `same`.
        // `path` is below `dir` when `dir` ends there and `path` goes on
        // with a separator. Else only where that part of `path` is empty or
        // `.` (`//`, `/./`, `/./...` against `/...`), which `Path` skips:
        // asked of `Path` then; any other part differs from `dir`'s.
        let same = same_bytes(p, d);
        if same == d.len() && p.get(same).is_none_or(|&b| b == b'/') {
            return true;
        }
        let Some(slash) = p[..same].iter().rposition(|&b| b == b'/') else {
            return false;
        };
        let part = p[slash + 1..]
            .split(|&b| b == b'/')
            .next()
            .unwrap_or_default();
        matches!(part, b"" | b".") && path.starts_with(dir)
    }
}

/// A directory kept to be asked [`Below`]'s questions again and again
/// (once per directory of a tree), with whether it is plain found once.
pub(crate) struct KeptDir {
    path: PathBuf,
    plain: bool,
}

impl KeptDir {
    pub(crate) fn new(path: PathBuf) -> KeptDir {
        let plain = disk::is_plain(path.as_os_str().as_encoded_bytes());
        KeptDir { path, plain }
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// [`Below::new`] of the directory.
    pub(crate) fn below(&self) -> Below<'_> {
        Below {
            dir: &self.path,
            plain: self.plain,
        }
    }
}

/// How many bytes `a` and `b` start with alike: sixteen at a time (one
/// comparison of two registers), then byte by byte.
fn same_bytes(a: &[u8], b: &[u8]) -> usize {
    let whole = a
        .chunks_exact(16)
        .zip(b.chunks_exact(16))
        .take_while(|(x, y)| x == y)
        .count()
        * 16;
    whole
        + a[whole..]
            .iter()
            .zip(&b[whole..])
            .take_while(|(x, y)| x == y)
            .count()
}

/// `String::from_utf8_lossy`, checking first (a word at a time, where the
/// standard lossy decoder goes byte by byte) whether `bytes` are valid
/// UTF-8, as the files of a tree mostly are.
pub fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// [`lossy`] for bytes of its own: valid UTF-8 becomes the text without a
/// copy (Codex decodes each file it sends again for every chain).
pub(crate) fn lossy_owned(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned())
}

/// The working directory by its physical path (links resolved), as every
/// modelled agent names it; the agent would not start where this fails.
fn physical_cwd(disk: &dyn disk::Disk, cwd: &Path) -> Result<PathBuf, ContextError> {
    disk.canonicalize(cwd).map_err(|source| ContextError::Cwd {
        path: cwd.to_path_buf(),
        source,
    })
}

/// [`context`], looking at the files through `disk`.
pub fn context_on(
    agent: Agent,
    start: &Start<'_>,
    disk: &dyn disk::Disk,
    host: &dyn Host,
) -> Result<AgentContext, ContextError> {
    match agent.registered().model {
        Some(model) => model.context(start, disk, Writing::Whole),
        None => host.agent_zero(start),
    }
}

/// Where a context file comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The user's own file (Codex: `$CODEX_HOME/AGENTS.md`).
    Global,
    /// A file of the project, on the way from its root to the working directory.
    Project,
    /// The user's own file for one project, not checked in (Claude Code:
    /// `CLAUDE.local.md`).
    Local,
}

/// What became of one file the agent considered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Sent whole.
    Loaded,
    /// Sent up to byte `at` of its `of` bytes (the agent's byte limit).
    Truncated {
        /// Bytes sent.
        at: u64,
        /// Bytes in the file.
        of: u64,
    },
    /// Never read: another file wins its place.
    Shadowed {
        /// The file that wins.
        by: PathBuf,
    },
    /// Read but not sent, or not read at all.
    Skipped(Skip),
}

/// Why a file is not sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Skip {
    /// Empty, or only whitespace (after the agent's cut).
    Blank,
    /// It cannot be read (the agent's own consequence is in [`AgentContext::notes`]).
    Unreadable(String),
    /// The agent's byte limit was used up by the files before it.
    LimitReached,
    /// Another file of the same set could not be read, and the agent then
    /// drops the whole set.
    DroppedWithSet,
    /// Its front matter limits it to some paths: never loaded at start.
    ScopedOut,
    /// Larger than the agent reads.
    TooLarge,
    /// Its extension is not one the agent reads as text.
    NotText,
    /// An import that does not name a readable file.
    NotFound,
    /// An import deeper than the agent follows.
    TooDeep,
    /// An import the agent already loaded (a cycle, or a repeat).
    Repeated,
    /// An import outside where the agent follows imports
    /// ([`report::outside_words`] says where, for each agent).
    Outside,
    /// The agent reads it, but the unattended policy keeps what was read
    /// from it out of this report (`promptinclude::agents::unattended`); why.
    Withheld(String),
}

/// One file the agent considered, in the order it considers them.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ContextFile {
    /// The path as the agent opens it.
    pub path: PathBuf,
    /// Global or project.
    pub role: Role,
    /// Its size in bytes, when it could be read.
    pub bytes: Option<u64>,
    /// cl100k_base tokens of the text sent from it (0 when none is).
    pub tokens: usize,
    /// What became of it.
    pub outcome: Outcome,
    /// For an import: the file that imports it.
    pub parent: Option<PathBuf>,
}

impl ContextFile {
    /// Whether the agent sends text from it (whole or cut).
    pub fn is_sent(&self) -> bool {
        matches!(self.outcome, Outcome::Loaded | Outcome::Truncated { .. })
    }
}

/// An agent's byte limit, and how much of it is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct ByteLimit {
    /// The limit (Codex: `project_doc_max_bytes`, for the project files together).
    pub max: u64,
    /// What the sent files count against it.
    pub used: u64,
}

/// Where in its model request an agent puts a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A part of a user message.
    UserMessage,
    /// The system prompt (a system message).
    SystemPrompt,
    /// Gemini's `systemInstruction`.
    SystemInstruction,
}

/// One contiguous text of the agent's model request made from the files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Where it goes.
    pub place: Place,
    /// Byte for byte what is sent, framing included (but for a part
    /// written only to be measured, as `audit --agents` measures the
    /// contexts it computes, whose counted stretches' middles are left out).
    pub text: String,
    /// The stretches of `text` that are a file's text whose tokens the
    /// model counted, in order ([`Part::tokens`] sums them).
    pub(crate) counted: Vec<Counted>,
    /// The bytes of the middles left out of `text` (0 but for a part
    /// written to be measured).
    pub(crate) elided: usize,
}

/// How much of the text it sends a model writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Writing {
    /// All of it, byte for byte (what `context` shows).
    Whole,
    /// What measuring it takes ([`Part::len`], [`Part::tokens`]): the
    /// middle of a counted stretch, whose tokens are known, is left out.
    /// [`contexts_shared`] measures each context it computes and reads no
    /// text: copying the files' texts into each chain's was 4 MB of copies
    /// over the benchmark's seven trees.
    ToMeasure,
}

/// A stretch of a [`Part`]'s text: one placed at `start` whose count
/// ([`Split`](promptinclude_tokenize::Split)) is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Counted {
    start: usize,
    tokens: promptinclude_tokenize::Split,
}

impl Part {
    /// A part with no counted stretch.
    pub fn new(place: Place, text: String) -> Part {
        Part {
            place,
            text,
            counted: Vec::new(),
            elided: 0,
        }
    }

    /// The bytes it sends.
    pub(crate) fn len(&self) -> usize {
        self.text.len() + self.elided
    }

    /// The tokens of what it sends (exactly `tokenize::count(&self.text)`
    /// for a part written whole; a part written to be measured counts the
    /// same), counted through `disk` but for the middle of each counted stretch,
    /// whose tokens are known ([`Split`](promptinclude_tokenize::Split) says why
    /// that is exact): a chain's text is mostly its files' texts, counted
    /// already, and counting it again walked every byte.
    pub fn tokens(&self, disk: &dyn disk::Disk) -> usize {
        let mut total = 0;
        // Counted up to here.
        let mut from = 0;
        for c in &self.counted {
            let Some((first, last, middle)) = c.tokens.middle else {
                continue;
            };
            let (first, last) = (c.start + first, c.start + last);
            total += disk.count_tokens(&self.text[from..first]) + middle;
            from = last;
        }
        total + disk.count_tokens(&self.text[from..])
    }
}

/// A [`Part`]'s text as a model writes it, keeping where the file texts
/// whose tokens it knows go.
pub(crate) struct PartWriter {
    text: String,
    counted: Vec<Counted>,
    elided: usize,
    writing: Writing,
}

impl PartWriter {
    /// An empty text, written as `writing` says, with room for `bytes` (the
    /// whole text's: a text measured only holds less, and growing it cost
    /// more than the room left unused).
    pub(crate) fn new(writing: Writing, bytes: usize) -> PartWriter {
        PartWriter {
            text: String::with_capacity(bytes),
            counted: Vec::new(),
            elided: 0,
            writing,
        }
    }

    /// Appends framing.
    pub(crate) fn push(&mut self, text: &str) {
        self.text.push_str(text);
    }

    /// Appends a text counted on its own as `tokens` says.
    pub(crate) fn push_counted(&mut self, text: &str, tokens: promptinclude_tokenize::Split) {
        let start = self.text.len();
        match (self.writing, tokens.middle) {
            (Writing::ToMeasure, Some((first, last, middle))) => {
                // The middle is left out, as an empty one at the first cut:
                // `Part::tokens` counts the same texts around it.
                let middle = Some((first, first, middle));
                self.counted.push(Counted {
                    start,
                    tokens: promptinclude_tokenize::Split { middle, ..tokens },
                });
                self.text.push_str(&text[..first]);
                self.text.push_str(&text[last..]);
                self.elided += last - first;
            }
            _ => {
                self.counted.push(Counted { start, tokens });
                self.text.push_str(text);
            }
        }
    }

    /// The part, going to `place`.
    pub(crate) fn finish(self, place: Place) -> Part {
        Part {
            place,
            text: self.text,
            counted: self.counted,
            elided: self.elided,
        }
    }
}

/// What an agent loads when started in a directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentContext {
    /// The agent.
    pub agent: Agent,
    /// The directory the agent works in, as it names it.
    pub cwd: PathBuf,
    /// The project root it found (where its walk starts), if any.
    pub root: Option<PathBuf>,
    /// Every file it considered, in its order.
    pub files: Vec<ContextFile>,
    /// Its byte limit, when it has one.
    pub limit: Option<ByteLimit>,
    /// Byte for byte what it puts into its model request for these files,
    /// framing included, in request order (empty when it sends nothing;
    /// Gemini CLI sends two parts, the others one).
    pub parts: Vec<Part>,
    /// What the agent does that the files alone do not show (a set dropped
    /// because one file is unreadable, project files off by configuration).
    pub notes: Vec<String>,
}

impl AgentContext {
    /// The parts as one text (`context --raw`): each as sent, separated by a
    /// blank line; `None` when nothing is sent. One part (what every agent
    /// but Gemini CLI sends) is its own text, not copied.
    pub fn raw(&self) -> Option<std::borrow::Cow<'_, str>> {
        match self.parts.as_slice() {
            [] => None,
            [one] => Some(std::borrow::Cow::Borrowed(&one.text)),
            parts => {
                // Only a part with no counted stretch is one of several.
                debug_assert!(parts.iter().all(|p| p.elided == 0));
                let texts: Vec<&str> = parts.iter().map(|p| p.text.as_str()).collect();
                Some(std::borrow::Cow::Owned(texts.join("\n\n")))
            }
        }
    }
}

/// Why a context could not be computed: where the agent itself would not
/// start.
#[derive(Debug)]
pub enum ContextError {
    /// The start directory cannot be entered.
    Cwd {
        /// The directory as given.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The agent's home directory variable names nothing (Codex: `CODEX_HOME`).
    MissingHome {
        /// The variable.
        variable: &'static str,
        /// Its value.
        value: PathBuf,
    },
    /// The agent's configuration file cannot be read.
    ConfigUnreadable {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// The scan of the project fails (Agent Zero: its configuration).
    Scan {
        /// The project.
        path: PathBuf,
        /// What failed.
        message: String,
    },
    /// The agent refuses its configuration file.
    Config {
        /// The file.
        path: PathBuf,
        /// The 1-based line, where known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
}

impl std::fmt::Display for ContextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ContextError::Cwd { path, .. } => write!(f, "cannot enter {}", path.display()),
            ContextError::MissingHome { variable, value } => write!(
                f,
                "{variable} points to {value:?}, but that path does not exist (the agent exits)"
            ),
            ContextError::ConfigUnreadable { path, .. } => {
                write!(f, "cannot read {}", path.display())
            }
            ContextError::Scan { path, message } => write!(f, "{}: {message}", path.display()),
            ContextError::Config {
                path,
                line,
                message,
            } => {
                let line = line.map_or(String::new(), |line| format!(":{line}"));
                write!(f, "{}{line}: {message} (the agent exits)", path.display())
            }
        }
    }
}

impl std::error::Error for ContextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ContextError::Cwd { source, .. } | ContextError::ConfigUnreadable { source, .. } => {
                Some(source)
            }
            ContextError::MissingHome { .. }
            | ContextError::Config { .. }
            | ContextError::Scan { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{disk, Agent, PartWriter, Place, Writing};

    /// The registry's order is the variants' order and the names' order,
    /// so a sort by agent, by name or by the registry agrees everywhere.
    #[test]
    fn the_registry_lists_agents_in_one_order() {
        let mut by_variant = Agent::ALL;
        by_variant.sort();
        assert_eq!(by_variant, Agent::ALL);
        let names = Agent::ALL.map(Agent::name);
        let mut sorted = names;
        sorted.sort_unstable();
        assert_eq!(sorted, names);
        for agent in Agent::ALL {
            assert_eq!(Agent::from_name(agent.name()), Some(agent));
        }
    }

    /// A part's tokens summed over its counted stretches are its text's
    /// count, whatever framing is around them (blank lines, spaces, words
    /// and digits running on across the seams, text outside ASCII), with a
    /// memo and without; and a part written only to be measured, its
    /// stretches' middles left out, measures the same bytes and tokens.
    /// Fails when a stretch is split where its framing runs into it, or
    /// when a measured part's seams are not the whole text's.
    #[test]
    fn a_part_counted_in_stretches_is_counted_exactly() {
        let mut next = promptinclude_testkit::seeded();
        let pieces = [
            "\n",
            "\n\n",
            " ",
            "  ",
            "\t",
            "word",
            "Word",
            "'s",
            "123",
            "4",
            ".",
            "## ",
            "- rule: keep it short",
            "\u{00e9}t\u{00e9}",
            "\u{4e2d}\u{6587}",
            "\u{1f600}",
            "\r\n",
            "x",
            "ab cd",
            "}\n",
        ];
        let remembered = disk::Remembered::over(&disk::Live);
        let text = |next: &mut dyn FnMut(usize) -> usize| -> String {
            (0..next(12)).map(|_| pieces[next(pieces.len())]).collect()
        };
        let mut elided = 0;
        for round in 0..2000 {
            let on: &dyn disk::Disk = if round % 2 == 0 {
                &disk::Live
            } else {
                &remembered
            };
            let mut part = PartWriter::new(Writing::Whole, 0);
            let mut measured = PartWriter::new(Writing::ToMeasure, 0);
            let mut both = |text: &str, counted: bool| {
                if counted {
                    let split = on.count_split(text);
                    part.push_counted(text, split);
                    measured.push_counted(text, split);
                } else {
                    part.push(text);
                    measured.push(text);
                }
            };
            for _ in 0..1 + next(4) {
                both(&text(&mut next), false);
                both(&text(&mut next), true);
            }
            both(&text(&mut next), false);
            let (part, measured) = (
                part.finish(Place::SystemPrompt),
                measured.finish(Place::SystemPrompt),
            );
            let tokens = promptinclude_tokenize::count(&part.text);
            assert_eq!(part.tokens(on), tokens, "round {round}: {:?}", part.text);
            assert_eq!(part.len(), part.text.len(), "round {round}");
            assert_eq!(
                (measured.len(), measured.tokens(on)),
                (part.text.len(), tokens),
                "round {round}: {:?} measured as {:?}",
                part.text,
                measured.text
            );
            elided += usize::from(measured.elided > 0);
        }
        // The measured parts did leave middles out.
        assert!(elided > 200, "{elided} of 2000 parts elided");
    }

    /// `is_below` by bytes is `Path::starts_with`, and `Below::is` is `==`,
    /// for every pair of paths made of a few parts (plain or not), alone and
    /// after a long part the same in both or differing in one byte (their
    /// bytes compared sixteen at a time, then one by one).
    #[test]
    fn is_below_is_starts_with() {
        let paths = promptinclude_testkit::small_paths(4);
        let long = [
            "",
            "/0123456789abcdefghijklmnopqrstu",
            "/0123456789abcdefghijklmnopqrstu/",
        ];
        let differing = "/0123456789abcdefghijklmnopqrstU";
        for dir in &paths {
            for path in &paths {
                for (before_dir, before_path) in
                    long.iter().map(|l| (*l, *l)).chain([(long[1], differing)])
                {
                    let (dir, path) =
                        (format!("{before_dir}{dir}"), format!("{before_path}{path}"));
                    let (dir, path) = (Path::new(&dir), Path::new(&path));
                    assert_eq!(
                        super::is_below(path, dir),
                        path.starts_with(dir),
                        "{path:?} below {dir:?}"
                    );
                    assert_eq!(
                        super::Below::new(dir).is(path),
                        path == dir,
                        "{path:?} is {dir:?}"
                    );
                }
            }
        }
    }
}
