//! Anthropic Claude Code (`VERSION`): `CLAUDE.md` files, `.claude/rules/`,
//! `@path` imports and `AGENTS.md` where no `CLAUDE.md` loads.
//!
//! The rules, read from the shipped program and checked against it
//! (`docs/agents-context.md` has them in full):
//!
//! * **Order.** The user's `CLAUDE.md` and `rules/**/*.md` (in
//!   `$CLAUDE_CONFIG_DIR`, else `~/.claude`); then every directory from
//!   the outermost ancestor of the working directory (not `/`) down to it:
//!   `CLAUDE.md`, `.claude/CLAUDE.md`, `.claude/rules/**/*.md` (directory
//!   order, as the system lists it), `CLAUDE.local.md`. Each file is
//!   followed by its imports.
//! * **A file** is read when it is a regular file (links followed) of at
//!   most 4 MiB whose extension, if any, is a text one; its front matter is
//!   cut, top-level HTML comments are stripped, and it is sent trimmed
//!   unless that leaves nothing. Each path is taken once.
//! * **Rules** whose front matter's `paths:` names files are left out at
//!   start. A project rule linked from outside the working directory is
//!   left out.
//! * **Imports** (`@path` outside code) up to four deep; a project file's
//!   imports must resolve inside the working directory (`claude -p` never
//!   approves others); the user's may go anywhere.
//! * **`AGENTS.md`** and `.claude/AGENTS.md` in the same directories load
//!   only when no `CLAUDE.md`, `.claude/CLAUDE.md` or `CLAUDE.local.md`
//!   there loads, each placed before the first project file below its
//!   directory (else after the last one).
//! * **The message**: one text part, `<system-reminder>`, the header, then
//!   `Contents of <path> (<kind>):` and the text of each file.

use crate::markdown::{self, never_matches, scope as rule_scope};

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::advice::{Advice, PatternSyntax, ScopedRules, SizeAdvice};
use super::disk::{
    absent_below, ancestors, derived, is_joined, joined, parent, Disk, EntryType, Listing,
};
use super::engine::{Layered, Likeness};
use super::js::{resolve as normalize, trim as js_trim};
use super::{
    Agent, AgentContext, Below, ContextError, ContextFile, Outcome, PartWriter, Place, Role, Skip,
    Writing,
};
use promptinclude_tokenize::Split;

/// The Claude Code version this model reproduces (`tests/agents/package.json`).
pub(crate) const VERSION: &str = "2.1.332";

/// The size past which Claude Code warns that an instruction file "will
/// impact performance", in characters (JavaScript's: UTF-16 code units) of
/// its text without front matter and comments; each file on its own. It is
/// `max(40000, 5% of the model's context window in characters)`: 40,000
/// for the 200k-token models.
pub(crate) const RECOMMENDED_MAX_CHARS: usize = 40_000;

/// The length Claude Code measures the file at `path` by against
/// [`RECOMMENDED_MAX_CHARS`]: UTF-16 code units of the text it loads. Read
/// and parsed through `disk` as the model does it (so a file the model
/// loaded through the same `disk` is not parsed again); `None` when it
/// cannot be read.
pub(crate) fn measured_chars(disk: &dyn Disk, path: &Path) -> Option<usize> {
    let bytes = disk.read(path).ok()?;
    let content = &parse(disk, path, &bytes).parsed.content;
    // UTF-16 code units: one per character, two for one past U+FFFF (whose
    // UTF-8 starts with a byte from 0xF0).
    Some(content.chars().count() + content.bytes().filter(|&b| b >= 0xF0).count())
}

/// The parse of the file at `path`, whose bytes are `bytes`, and the tokens
/// of the text it sends: found once (through `disk`) for all the starts
/// that load it.
fn parse(disk: &dyn Disk, path: &Path, bytes: &[u8]) -> Arc<Parse> {
    derived(disk, "claude-code markdown", path, || {
        let parsed = markdown::parse(&super::lossy(bytes), true);
        Parse {
            tokens: disk.count_split(js_trim(&parsed.content)),
            parsed: Arc::new(parsed),
        }
    })
}

/// The largest file Claude Code reads as instructions.
pub(crate) const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// How deep imports go: the file itself is depth 0, its imports 1, up to 4.
const MAX_DEPTH: usize = 5;

const HEADER: &str = "Codebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.";

/// File extensions Claude Code reads as text (any other extension is
/// skipped; no extension is read).
const TEXT_EXTENSIONS: &[&str] = &[
    ".md",
    ".txt",
    ".text",
    ".json",
    ".yaml",
    ".yml",
    ".toml",
    ".xml",
    ".csv",
    ".html",
    ".htm",
    ".css",
    ".scss",
    ".sass",
    ".less",
    ".js",
    ".ts",
    ".tsx",
    ".jsx",
    ".mjs",
    ".cjs",
    ".mts",
    ".cts",
    ".py",
    ".pyi",
    ".pyw",
    ".rb",
    ".erb",
    ".rake",
    ".go",
    ".rs",
    ".java",
    ".kt",
    ".kts",
    ".scala",
    ".c",
    ".cpp",
    ".cc",
    ".cxx",
    ".h",
    ".hpp",
    ".hxx",
    ".cs",
    ".swift",
    ".sh",
    ".bash",
    ".zsh",
    ".fish",
    ".ps1",
    ".bat",
    ".cmd",
    ".env",
    ".ini",
    ".cfg",
    ".conf",
    ".config",
    ".properties",
    ".sql",
    ".graphql",
    ".gql",
    ".proto",
    ".vue",
    ".svelte",
    ".astro",
    ".ejs",
    ".hbs",
    ".pug",
    ".jade",
    ".php",
    ".pl",
    ".pm",
    ".lua",
    ".r",
    ".dart",
    ".ex",
    ".exs",
    ".erl",
    ".hrl",
    ".clj",
    ".cljs",
    ".cljc",
    ".edn",
    ".hs",
    ".lhs",
    ".elm",
    ".ml",
    ".mli",
    ".f",
    ".f90",
    ".f95",
    ".for",
    ".cmake",
    ".make",
    ".makefile",
    ".gradle",
    ".sbt",
    ".rst",
    ".adoc",
    ".asciidoc",
    ".org",
    ".tex",
    ".latex",
    ".lock",
    ".log",
    ".diff",
    ".patch",
];

/// How Claude Code is started.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The working directory (Claude Code names it by its physical path).
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// `$CLAUDE_CONFIG_DIR`, when set.
    pub config_dir: Option<&'a OsStr>,
    /// Whether `$CLAUDE_CODE_DISABLE_CLAUDE_MDS` is set (not empty).
    pub disabled: bool,
}

/// Who a file speaks for, as Claude Code labels it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    User,
    Project,
    Local,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::User => " (user's private global instructions for all projects)",
            Kind::Project => " (project instructions, checked into the codebase)",
            Kind::Local => " (user's private project instructions, not checked in)",
        }
    }

    fn role(self) -> Role {
        match self {
            Kind::User => Role::Global,
            Kind::Project => Role::Project,
            Kind::Local => Role::Local,
        }
    }
}

/// A file that is sent.
#[derive(Clone, Debug)]
struct Item {
    path: PathBuf,
    kind: Kind,
    /// What it says (its parse, shared by every start that loads it).
    parsed: Arc<markdown::Parsed>,
    /// The tokens of its text as sent.
    tokens: Split,
    bytes: u64,
    parent: Option<PathBuf>,
}

/// A file's parse and the tokens of the text it sends, found once for all
/// the starts that load it.
struct Parse {
    parsed: Arc<markdown::Parsed>,
    tokens: Split,
}

/// One walk's state: the paths taken, what became of files not sent.
struct Walk<'a> {
    disk: &'a dyn Disk,
    cwd: &'a Path,
    home: &'a Path,
    /// By their bytes (each in its one normal form: plain, or real).
    taken: FxHashSet<OsString>,
    /// Candidates taken that their directory's listing says are not there,
    /// by directory and name: taken like the others, but their paths are
    /// not made (a start looks for four names in every directory up to
    /// `/`, and most are not there).
    absent: Vec<(&'a Path, &'static str)>,
    skipped: Vec<ContextFile>,
    /// Whether the user approved imports outside the working directory for
    /// this project ([`external_imports_approved`]).
    external: bool,
}

/// What Claude Code loads when started as `start` says, looking at the
/// files through `disk`, its text written as `writing` says.
pub(crate) fn context_writing(
    start: &Start<'_>,
    disk: &dyn Disk,
    writing: Writing,
) -> Result<AgentContext, ContextError> {
    let cwd = super::physical_cwd(disk, start.cwd)?;
    crate::engine::context(&Model::new(*start), cwd, disk, writing)
}

/// Claude Code in the registry: `$CLAUDE_CONFIG_DIR` and
/// `$CLAUDE_CODE_DISABLE_CLAUDE_MDS` read from the start's environment.
pub(crate) struct Registered;

impl crate::Modelled for Registered {
    fn context(
        &self,
        start: &crate::Start<'_>,
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let config_dir = config_dir(start);
        context_writing(&Start::of(start, config_dir.as_deref()), disk, writing)
    }

    fn contexts(
        &self,
        tree: &crate::Tree,
        start: &crate::Start<'_>,
        disk: &crate::disk::Remembered<'_>,
    ) -> Result<Vec<crate::Shared>, ContextError> {
        let config_dir = config_dir(start);
        let start = Start::of(start, config_dir.as_deref());
        crate::engine::contexts(&Model::new(start), tree, disk)
    }

    /// Files past [`RECOMMENDED_MAX_CHARS`]; rules whose `paths:` scopes
    /// them; imports the user may approve outside the working directory.
    fn advice(&self) -> Advice {
        Advice {
            size: Some(SizeAdvice {
                max: RECOMMENDED_MAX_CHARS,
                measure: measured_chars,
                words: |chars, max| {
                    format!(
                        "{chars} characters: an interactive Claude Code session warns past {max} (on 200k-token models) that a file this large will impact performance (`claude -p` does not)"
                    )
                },
            }),
            scoped_rules: Some(ScopedRules {
                key: "paths:",
                is_rule: |f| {
                    f.role == Role::Project
                        // By bytes: ASCII is in a path's bytes as in its lossy text.
                        && f.path
                            .as_os_str()
                            .as_encoded_bytes()
                            .windows(RULES.len())
                            .any(|w| w == RULES)
                        && matches!(
                            f.outcome,
                            Outcome::Loaded | Outcome::Skipped(Skip::ScopedOut)
                        )
                },
                scope: rule_scope,
                never_matches,
                base: rule_base,
                syntax: PatternSyntax::Gitignore,
            }),
            approves_imports: true,
        }
    }
}

/// What a project rule's path holds.
const RULES: &[u8] = b"/.claude/rules/";

/// The directory a rule speaks for: the one holding its `.claude/`.
fn rule_base(rule: &Path) -> &Path {
    rule.ancestors()
        .find(|a| a.file_name().is_some_and(|n| n == ".claude"))
        .and_then(Path::parent)
        .unwrap_or(rule)
}

/// `$CLAUDE_CONFIG_DIR`, where it is not empty.
fn config_dir(start: &crate::Start<'_>) -> Option<OsString> {
    (start.env)("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty())
}

impl<'a> Start<'a> {
    /// Claude Code started as `start` says, with `$CLAUDE_CONFIG_DIR` as
    /// given.
    fn of(start: &crate::Start<'a>, config_dir: Option<&'a OsStr>) -> Start<'a> {
        Start {
            cwd: start.cwd,
            home: start.home,
            config_dir,
            disabled: (start.env)("CLAUDE_CODE_DISABLE_CLAUDE_MDS").is_some_and(|v| !v.is_empty()),
        }
    }
}

/// Claude Code as the engine runs it: what it finds in each directory,
/// and how that makes its message.
pub(crate) struct Model<'a> {
    /// How it is started (but for the working directory, which is each
    /// start's own).
    start: Start<'a>,
    /// [`NAMES`].
    names: Vec<String>,
}

impl<'a> Model<'a> {
    /// Claude Code started as `start` says.
    pub(crate) fn new(start: Start<'a>) -> Model<'a> {
        let names = NAMES.map(String::from).to_vec();
        Model { start, names }
    }
}

/// The names whose absence from a directory's listing says it finds
/// nothing: the first parts of every candidate (`CLAUDE.md`,
/// `.claude/CLAUDE.md`, `.claude/rules`, `CLAUDE.local.md`, `AGENTS.md`,
/// `.claude/AGENTS.md`).
const NAMES: [&str; 4] = ["CLAUDE.md", "CLAUDE.local.md", ".claude", "AGENTS.md"];

/// What Claude Code finds in a directory: its [exact
/// listing](Disk::exact_listing), which says which candidates are not
/// there (`None`: each is asked for).
pub(crate) struct Found(Option<Listing>);

impl Layered for Model<'_> {
    type Found = Found;
    type Above = ParentFacts;

    fn names(&self) -> Option<&[String]> {
        Some(&self.names)
    }

    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> Found {
        Found(disk.exact_listing(dir))
    }

    fn adds_nothing(&self, Found(listing): &Found) -> bool {
        listing
            .as_ref()
            .is_some_and(|l| NAMES.iter().all(|n| !l.contains(n.as_bytes())))
    }

    fn above(&self, dir: &Path, context: &AgentContext, disk: &dyn Disk) -> ParentFacts {
        ParentFacts::of(&self.start, dir, context, disk)
    }

    fn likeness(
        &self,
        above: &ParentFacts,
        cwd: &Path,
        listing: Option<&Listing>,
        _: &dyn Disk,
    ) -> Likeness {
        above.likeness(cwd, listing)
    }

    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &Found)],
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let start = &self.start;
        let mut notes = Vec::new();
        if start.disabled {
            notes.push(
                "CLAUDE_CODE_DISABLE_CLAUDE_MDS is set: Claude Code loads no instruction file"
                    .to_string(),
            );
            return Ok(finish(cwd, Vec::new(), Vec::new(), notes, writing));
        }
        let config = match start.config_dir {
            Some(dir) => normalize(&cwd.join(dir)),
            None => start.home.join(".claude"),
        };
        let user_md = config.join("CLAUDE.md");
        let external = external_imports_approved(start, disk, &cwd);
        let dirs: Vec<&Path> = {
            let mut dirs: Vec<&Path> = ancestors(&cwd).filter(|d| parent(d).is_some()).collect();
            dirs.reverse();
            dirs
        };

        let mut walk = Walk {
            disk,
            cwd: &cwd,
            home: start.home,
            taken: FxHashSet::default(),
            absent: Vec::new(),
            skipped: Vec::new(),
            external,
        };
        // What each directory's listing says is not there is not asked for;
        // a directory that finds nothing lists none of the names.
        let listings: Vec<Option<Listing>> = {
            let mut found = up.iter().peekable();
            let mut listings: Vec<Option<Listing>> = dirs
                .iter()
                .rev()
                .map(|dir| match found.peek() {
                    Some((at, Found(listing))) if at.as_os_str() == dir.as_os_str() => {
                        found.next();
                        listing.clone()
                    }
                    _ => Some(Listing::default()),
                })
                .collect();
            listings.reverse();
            listings
        };
        let mut items = walk.file(&user_md, Kind::User, 0, None, true);
        items.extend(walk.rules(
            &config.join("rules"),
            Kind::User,
            None,
            &mut FxHashSet::default(),
        ));
        for (dir, listing) in dirs.iter().zip(&listings) {
            let listing = listing.as_ref();
            items.extend(walk.candidate(dir, "CLAUDE.md", Kind::Project, listing));
            items.extend(walk.candidate(dir, ".claude/CLAUDE.md", Kind::Project, listing));
            if !absent_below(listing, dir, ".claude/rules") {
                let rules = joined(dir, ".claude/rules");
                items.extend(walk.rules(&rules, Kind::Project, None, &mut FxHashSet::default()));
            }
            items.extend(walk.candidate(dir, "CLAUDE.local.md", Kind::Local, listing));
        }
        let mut skipped = std::mem::take(&mut walk.skipped);

        // The AGENTS.md plugin. It first asks whether a CLAUDE.md loads: one of
        // the walk's files answers that; only without one does it walk the
        // directories again, then for AGENTS.md, with only the user's file taken.
        const CLAUDE_NAMES: [&str; 3] = ["/CLAUDE.md", "/.claude/CLAUDE.md", "/CLAUDE.local.md"];
        let fresh = || Walk {
            disk,
            cwd: &cwd,
            home: start.home,
            taken: FxHashSet::from_iter([strip_trailing_slashes(&user_md).into_os_string()]),
            absent: Vec::new(),
            skipped: Vec::new(),
            external,
        };
        let claude_file = items.iter().find(|i| {
            i.kind != Kind::User
                && i.parent.is_none()
                && CLAUDE_NAMES.iter().any(|n| {
                    i.path
                        .as_os_str()
                        .as_encoded_bytes()
                        .ends_with(n.as_bytes())
                })
        });
        let claude_project = claude_file.is_some() || {
            let mut probe = fresh();
            dirs.iter().zip(&listings).any(|(dir, listing)| {
                CLAUDE_NAMES.iter().any(|name| {
                    !probe
                        .candidate(dir, &name[1..], Kind::Project, listing.as_ref())
                        .is_empty()
                })
            })
        };
        if claude_project {
            // Not read: listed as shadowed when they are there.
            let by = claude_file.map(|i| i.path.clone());
            for (dir, listing) in dirs.iter().zip(&listings) {
                for name in ["AGENTS.md", ".claude/AGENTS.md"] {
                    if absent_below(listing.as_ref(), dir, name) {
                        continue;
                    }
                    let path = joined(dir, name);
                    if let Some(meta) = disk.metadata(&path).ok().filter(|m| m.is_file()) {
                        skipped.push(ContextFile {
                            path: path.clone(),
                            role: Role::Project,
                            bytes: Some(meta.len()),
                            tokens: 0,
                            outcome: Outcome::Shadowed {
                                by: by.clone().unwrap_or_else(|| path.clone()),
                            },
                            parent: None,
                        });
                    }
                }
            }
        } else {
            let mut agents = fresh();
            let mut found = Vec::new();
            for (dir, listing) in dirs.iter().zip(&listings) {
                for name in ["AGENTS.md", ".claude/AGENTS.md"] {
                    found.extend(agents.candidate(dir, name, Kind::Project, listing.as_ref()));
                }
            }
            skipped.extend(agents.skipped);
            let unseen = unseen(found, &items);
            items = with_agents_files(items, unseen);
        }
        Ok(finish(cwd, items, skipped, notes, writing))
    }
}

/// What tells how what Claude Code loads started in a directory relates to
/// what it loads in the parent directory, found once for the parent.
/// It reads every directory up to `/` whatever the start; only imports and
/// linked rules are followed inside the working directory alone. So when
/// the start holds none of its names, its configuration directory is not
/// relative to the start, and no `.claude`, rules directory or rule on the
/// way is a link, the imports found from the parent (and where they lead)
/// decide:
/// * none inside the parent but outside the start: it loads what the
///   parent does ([`Likeness::AddsNothing`]);
/// * else, none inside the start: none is followed from it, nor from any
///   other such directory of the parent, and they all load alike
///   ([`Likeness::LikeSiblings`]; the directories below a root whose
///   `CLAUDE.md` imports its `AGENTS.md`, which the root follows and they
///   do not, are the common case).
pub(crate) struct ParentFacts {
    /// The likeness of every directory below, where the parent alone
    /// decides it.
    every: Option<Likeness>,
    /// The parent's imports, as imported and as resolved, each with
    /// whether it is inside the parent.
    imports: Vec<(PathBuf, bool)>,
    /// The projects the user approved external imports for.
    approvals: Arc<Vec<PathBuf>>,
    /// Whether they are approved for the parent's project
    /// ([`external_imports_approved`]).
    approved: bool,
    /// Whether the parent's project is a repository at or above it (so a
    /// directory below without `.git` belongs to it too), not the parent
    /// alone.
    in_repository: bool,
}

impl ParentFacts {
    /// The facts of `parent`, whose context is `context`, for a `start`
    /// below it.
    pub(crate) fn of(
        start: &Start<'_>,
        parent: &Path,
        context: &AgentContext,
        disk: &dyn Disk,
    ) -> ParentFacts {
        let decided = |every| ParentFacts {
            every: Some(every),
            imports: Vec::new(),
            approvals: Arc::default(),
            approved: false,
            in_repository: false,
        };
        if start.disabled {
            return decided(Likeness::AddsNothing);
        }
        let relative_config = start
            .config_dir
            .is_some_and(|d| !Path::new(d).is_absolute());
        if relative_config || !rules_unlinked_up_from(disk, parent) {
            return decided(Likeness::Own);
        }
        let approvals = approved_projects(disk, &global_config(start, parent));
        let (approved, in_repository) = approval(disk, &approvals, parent);
        let in_parent = Below::new(parent);
        let mut imports = Vec::new();
        let mut note = |path: PathBuf| {
            let real = disk.canonicalize(&path).ok();
            for path in std::iter::once(path).chain(real) {
                let inside = in_parent.holds(&path);
                imports.push((path, inside));
            }
        };
        for f in context.files.iter().filter(|f| f.parent.is_some()) {
            note(f.path.clone());
        }
        // What every file sent imports, listed or not: an import whose text
        // was sent already (an `AGENTS.md` import repeating a rule's text)
        // is not in the parent's files, yet a start below may find it
        // outside its directory and list it so.
        for f in context
            .files
            .iter()
            .filter(|f| f.outcome == Outcome::Loaded)
        {
            let Ok(bytes) = disk.read(&f.path) else {
                continue;
            };
            let real = disk
                .canonicalize(&f.path)
                .unwrap_or_else(|_| f.path.clone());
            let base = real.parent().unwrap_or(Path::new("/"));
            for import in &parse(disk, &f.path, &bytes).parsed.imports {
                note(match import.strip_prefix("~/") {
                    Some(rest) => normalize(&start.home.join(rest)),
                    None => normalize(&base.join(import)),
                });
            }
        }
        ParentFacts {
            every: None,
            imports,
            approvals,
            approved,
            in_repository,
        }
    }

    /// How what Claude Code loads started in `cwd`, a directory below the
    /// parent that finds nothing ([`Model`]), listed as `listing`, relates
    /// to what it loads in the parent.
    pub(crate) fn likeness(&self, cwd: &Path, listing: Option<&Listing>) -> Likeness {
        if let Some(every) = self.every {
            return every;
        }
        // A directory holding `.git` is a project of its own, and so is one
        // outside any repository: its approval is looked up under its own
        // key. Where that answer differs from the parent's, it loads its own.
        if !self.approvals.is_empty()
            && (!self.in_repository || !super::holds_none_in(listing, &[".git"]))
            && self.approvals.iter().any(|p| p == cwd) != self.approved
        {
            return Likeness::Own;
        }
        // Approved, imports are followed wherever they lie.
        if self.approved {
            return Likeness::AddsNothing;
        }
        let (mut between, mut below) = (false, false);
        let in_start = Below::new(cwd);
        for (path, in_parent) in &self.imports {
            if in_start.holds(path) {
                below = true;
            } else if *in_parent {
                between = true;
            }
        }
        if !between {
            Likeness::AddsNothing
        } else if !below {
            Likeness::LikeSiblings
        } else {
            Likeness::Own
        }
    }
}

/// Claude Code's global configuration file: `.claude.json` in
/// `$CLAUDE_CONFIG_DIR`, else in the home directory.
fn global_config(start: &Start<'_>, cwd: &Path) -> PathBuf {
    match start.config_dir {
        Some(dir) => normalize(&cwd.join(dir)).join(".claude.json"),
        None => start.home.join(".claude.json"),
    }
}

/// Whether the user approved imports outside the working directory for the
/// project Claude Code started in `cwd` belongs to (the approval an
/// interactive session asks for once): `projects[KEY]
/// .hasClaudeMdExternalIncludesApproved` in [`global_config`], `KEY` being
/// the nearest directory at or above `cwd` holding `.git`, else `cwd`.
/// (A worktree's key is its main repository's in Claude Code: not
/// modelled.)
fn external_imports_approved(start: &Start<'_>, disk: &dyn Disk, cwd: &Path) -> bool {
    let approvals = approved_projects(disk, &global_config(start, cwd));
    approval(disk, &approvals, cwd).0
}

/// Whether `approvals` (the approved projects) hold the project Claude Code
/// files a start in `cwd` under, and whether that project is a repository
/// (the nearest directory at or above `cwd` holding `.git`) rather than
/// `cwd` alone. Without an approval anywhere no key is looked for.
fn approval(disk: &dyn Disk, approvals: &[PathBuf], cwd: &Path) -> (bool, bool) {
    if approvals.is_empty() {
        return (false, false);
    }
    match ancestors(cwd).find(|d| disk.symlink_metadata(&joined(d, ".git")).is_ok()) {
        Some(root) => (approvals.iter().any(|p| p == root), true),
        None => (approvals.iter().any(|p| p == cwd), false),
    }
}

/// The projects of Claude Code's global configuration `file` whose
/// `hasClaudeMdExternalIncludesApproved` is set (JavaScript truthy), parsed
/// once for all starts.
fn approved_projects(disk: &dyn Disk, file: &Path) -> Arc<Vec<PathBuf>> {
    derived(disk, "claude-code approvals", file, || {
        let Ok(bytes) = disk.read(file) else {
            return Vec::new();
        };
        let Ok(serde_json::Value::Object(config)) = serde_json::from_slice(&bytes) else {
            return Vec::new();
        };
        let Some(serde_json::Value::Object(projects)) = config.get("projects") else {
            return Vec::new();
        };
        let truthy = |v: &serde_json::Value| match v {
            serde_json::Value::Null => false,
            serde_json::Value::Bool(b) => *b,
            serde_json::Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
            serde_json::Value::String(s) => !s.is_empty(),
            _ => true,
        };
        projects
            .iter()
            .filter(|(_, p)| {
                p.get("hasClaudeMdExternalIncludesApproved")
                    .is_some_and(truthy)
            })
            .map(|(key, _)| PathBuf::from(key))
            .collect()
    })
}

/// Whether no `.claude/rules` of `dir` or above is reached through a link
/// or holds one (a fact of each directory, kept for the directories below).
fn rules_unlinked_up_from(disk: &dyn Disk, dir: &Path) -> bool {
    *derived(disk, "claude-code rules unlinked", dir, || {
        let linked = |path: &Path| {
            disk.symlink_metadata(path)
                .is_ok_and(|m| m.file_type().is_symlink())
        };
        let rules = joined(dir, ".claude/rules");
        // Most directories hold no `.claude` (in any case) at all: one
        // look at the listing instead of three questions.
        let here = super::holds_none(disk, dir, &[".claude"])
            || (!linked(&joined(dir, ".claude")) && !linked(&rules) && !links_below(disk, &rules));
        here && parent(dir).is_none_or(|above| rules_unlinked_up_from(disk, above))
    })
}

/// Whether a rules directory holds a link at any depth (an unreadable or
/// missing one holds none).
fn links_below(disk: &dyn Disk, dir: &Path) -> bool {
    disk.read_dir(dir).is_ok_and(|entries| {
        entries.iter().any(|(name, kind)| {
            kind.is_symlink() || (kind.is_dir() && links_below(disk, &joined(dir, name)))
        })
    })
}

impl<'a> Walk<'a> {
    /// Records a file that is not sent.
    fn skip(
        &mut self,
        path: &Path,
        kind: Kind,
        bytes: Option<u64>,
        parent: Option<&Path>,
        why: Skip,
    ) {
        self.skipped.push(ContextFile {
            path: path.to_path_buf(),
            role: kind.role(),
            bytes,
            tokens: 0,
            outcome: Outcome::Skipped(why),
            parent: parent.map(Path::to_path_buf),
        });
    }

    /// The project file `name` (a path below `dir`) and its imports, as
    /// [`Walk::file`] finds them; where `listing` (the directory's
    /// [exact listing](Disk::exact_listing)) says it is not there, what
    /// that finds for a missing file without asking: the path taken,
    /// nothing sent.
    fn candidate(
        &mut self,
        dir: &'a Path,
        name: &'static str,
        kind: Kind,
        listing: Option<&Listing>,
    ) -> Vec<Item> {
        if absent_below(listing, dir, name) {
            self.absent.push((dir, name));
            return Vec::new();
        }
        self.file(&joined(dir, name), kind, 0, None, self.external)
    }

    /// Whether `path` is taken.
    fn is_taken(&self, path: &OsStr) -> bool {
        let bytes = path.as_encoded_bytes();
        self.taken.contains(path)
            || self
                .absent
                .iter()
                .any(|&(dir, name)| is_joined(bytes, dir, name))
    }

    /// One file and its imports, in Claude Code's order (`anywhere`: its
    /// imports may leave the working directory).
    fn file(
        &mut self,
        path: &Path,
        kind: Kind,
        depth: usize,
        parent: Option<&Path>,
        anywhere: bool,
    ) -> Vec<Item> {
        let key = strip_trailing_slashes(path);
        if self.is_taken(key.as_os_str()) {
            if parent.is_some() {
                self.skip(path, kind, None, parent, Skip::Repeated);
            }
            return Vec::new();
        }
        if depth >= MAX_DEPTH {
            self.skip(path, kind, None, parent, Skip::TooDeep);
            return Vec::new();
        }
        let resolved = self.disk.canonicalize(path).ok();
        let linked = resolved.as_deref().filter(|r| *r != path);
        if depth > 0 && !anywhere && !inside(resolved.as_deref().unwrap_or(path), self.cwd) {
            self.skip(path, kind, None, parent, Skip::Outside);
            return Vec::new();
        }
        if linked.is_some_and(|r| self.is_taken(r.as_os_str())) {
            if parent.is_some() {
                self.skip(path, kind, None, parent, Skip::Repeated);
            }
            return Vec::new();
        }
        self.taken.insert(key.into_os_string());
        if let Some(r) = linked {
            self.taken.insert(r.as_os_str().to_os_string());
        }
        let bytes = match read(self.disk, path) {
            Read::Text(bytes) => bytes,
            Read::Missing => {
                if parent.is_some() {
                    self.skip(path, kind, None, parent, Skip::NotFound);
                }
                return Vec::new();
            }
            Read::NotFile => {
                if parent.is_some() {
                    self.skip(path, kind, None, parent, Skip::NotFound);
                }
                return Vec::new();
            }
            Read::TooLarge(len) => {
                self.skip(path, kind, Some(len), parent, Skip::TooLarge);
                return Vec::new();
            }
            Read::Failed(e) => {
                self.skip(path, kind, None, parent, Skip::Unreadable(e));
                return Vec::new();
            }
        };
        let len = bytes.len() as u64;
        if !is_text(path) {
            self.skip(path, kind, Some(len), parent, Skip::NotText);
            return Vec::new();
        }
        // A file is decoded, parsed and counted once for all the starts
        // that load it.
        let read = parse(self.disk, path, &bytes);
        let parsed = &read.parsed;
        if js_trim(&parsed.content).is_empty() {
            self.skip(path, kind, Some(len), parent, Skip::Blank);
            return Vec::new();
        }
        let mut items = vec![Item {
            path: path.to_path_buf(),
            kind,
            parsed: Arc::clone(parsed),
            tokens: read.tokens,
            bytes: len,
            parent: parent.map(Path::to_path_buf),
        }];
        // Imports are resolved from the real file's directory (through a link too).
        let real = resolved.as_deref().unwrap_or(path);
        let base = real.parent().unwrap_or(Path::new("/"));
        for import in &parsed.imports {
            let target = self.resolve(import, base);
            if !anywhere && !inside(&target, self.cwd) {
                self.skip(&target, kind, None, Some(path), Skip::Outside);
                continue;
            }
            items.extend(self.file(&target, kind, depth + 1, Some(path), anywhere));
        }
        items
    }

    /// An import's path: `~/` from the home directory, else from the
    /// importing file's directory, normalized as Node's `path.resolve`.
    fn resolve(&self, import: &str, base: &Path) -> PathBuf {
        match import.strip_prefix("~/") {
            Some(rest) => normalize(&self.home.join(rest)),
            None => normalize(&base.join(import)),
        }
    }

    /// The unconditional `.md` files under a rules directory, in directory
    /// order, with their imports.
    fn rules(
        &mut self,
        dir: &Path,
        kind: Kind,
        discovered: Option<&Path>,
        visited: &mut FxHashSet<PathBuf>,
    ) -> Vec<Item> {
        if visited.contains(dir) {
            return Vec::new();
        }
        let resolved = self.disk.canonicalize(dir).ok();
        let anywhere = kind == Kind::User;
        visited.insert(dir.to_path_buf());
        if let Some(r) = resolved.as_deref().filter(|r| *r != dir) {
            visited.insert(r.to_path_buf());
        }
        let is_link = self
            .disk
            .symlink_metadata(dir)
            .is_ok_and(|m| m.file_type().is_symlink());
        // A rules directory linked from outside the working directory is
        // followed with the user's approval of external imports alone.
        if !anywhere
            && !self.external
            && is_link
            && !inside(resolved.as_deref().unwrap_or(dir), self.cwd)
        {
            return Vec::new();
        }
        let listed = resolved.as_deref().unwrap_or(dir);
        let Ok(entries) = self.disk.read_dir(listed) else {
            return Vec::new();
        };
        let mut items = Vec::new();
        for (name, kind_of) in entries.iter() {
            let path = joined(dir, name);
            let named = joined(discovered.unwrap_or(dir), name);
            // Claude Code names every entry by its real path (through a
            // linked rules directory too) and follows links to their type.
            let (target, meta) = if kind_of.is_symlink() {
                match (self.disk.canonicalize(&path), self.disk.metadata(&path)) {
                    (Ok(t), Ok(m)) => (t, EntryType::of(m.file_type())),
                    _ => continue,
                }
            } else {
                (self.disk.canonicalize(&path).unwrap_or(path), kind_of)
            };
            let elsewhere = resolved.as_ref().is_some_and(|r| target != joined(r, name))
                && !inside(&target, self.cwd);
            // Approved imports outside the working directory let rules
            // linked there in too.
            if elsewhere && !anywhere && !self.external {
                continue;
            }
            if meta.is_dir() {
                let found = (named != target).then_some(named.as_path());
                items.extend(self.rules(&target, kind, found, visited));
            } else if meta.is_file() && name.as_encoded_bytes().ends_with(b".md") {
                let loaded = self.file(&target, kind, 0, None, anywhere || self.external);
                for item in loaded {
                    if item.parsed.scoped {
                        self.skipped
                            .push(not_sent(&item, Outcome::Skipped(Skip::ScopedOut)));
                    } else {
                        items.push(item);
                    }
                }
            }
        }
        items
    }
}

/// AGENTS.md files not already sent, by path or by (trimmed) text.
fn unseen(found: Vec<Item>, items: &[Item]) -> Vec<Item> {
    let mut paths: FxHashSet<PathBuf> = items.iter().map(|i| i.path.clone()).collect();
    let texts: FxHashSet<&str> = items
        .iter()
        .filter(|i| i.kind != Kind::User)
        .map(|i| js_trim(&i.parsed.content))
        .collect();
    let mut out = Vec::new();
    for item in found {
        let text = js_trim(&item.parsed.content);
        if paths.contains(&item.path) || (!text.is_empty() && texts.contains(text)) {
            continue;
        }
        paths.insert(item.path.clone());
        out.push(item);
    }
    out
}

/// The directory a file speaks for: the one holding its `.claude/`, else
/// its own.
fn project_dir(path: &Path) -> String {
    let s = path.to_string_lossy();
    let cut = s.rfind("/.claude/").or_else(|| s.rfind('/'));
    match cut {
        Some(i) if i > 0 => s[..i].to_string(),
        _ => "/".to_string(),
    }
}

/// The first file of the import chain `item` belongs to.
fn chain_root<'a>(item: &'a Item, all: &'a [Item]) -> &'a Path {
    let mut path = item.path.as_path();
    let mut parent = item.parent.as_deref();
    let mut seen = FxHashSet::from_iter([path]);
    while let Some(p) = parent {
        if !seen.insert(p) {
            break;
        }
        path = p;
        parent = all
            .iter()
            .find(|i| i.path == p)
            .and_then(|i| i.parent.as_deref());
    }
    path
}

/// `AGENTS.md` files put among the others: each directory's group before
/// the first project file whose directory is below it, else after the last
/// project file.
fn with_agents_files(mut items: Vec<Item>, agents: Vec<Item>) -> Vec<Item> {
    let mut groups: Vec<(String, Vec<Item>)> = Vec::new();
    for item in &agents {
        let dir = project_dir(chain_root(item, &agents));
        match groups.iter_mut().find(|(d, _)| *d == dir) {
            Some((_, group)) => group.push(item.clone()),
            None => groups.push((dir, vec![item.clone()])),
        }
    }
    for (dir, group) in groups {
        let below = format!("{}/", dir.trim_end_matches('/'));
        let first_below = items.iter().position(|i| {
            i.kind != Kind::User && project_dir(chain_root(i, &items)).starts_with(&below)
        });
        let at = first_below
            .or_else(|| {
                items
                    .iter()
                    .rposition(|i| i.kind != Kind::User)
                    .map(|i| i + 1)
            })
            .unwrap_or(items.len());
        items.splice(at..at, group);
    }
    items
}

/// The context: the files sent, in order, then those not sent (its text
/// written as `writing` says).
fn finish(
    cwd: PathBuf,
    items: Vec<Item>,
    skipped: Vec<ContextFile>,
    notes: Vec<String>,
    writing: Writing,
) -> AgentContext {
    // Written in place: the files' texts are most of it.
    let sent = (!items.is_empty()).then(|| {
        // Sized first: a chain's text is mostly its files', and growing it
        // copies them over and over (each file's framing is under 128 bytes).
        let len = items
            .iter()
            .map(|i| i.path.as_os_str().len() + js_trim(&i.parsed.content).len() + 128)
            .sum::<usize>();
        let mut text = PartWriter::new(writing, HEADER.len() + 64 + len);
        text.push("<system-reminder>\n");
        text.push(HEADER);
        text.push("\n\n");
        for (k, i) in items.iter().enumerate() {
            if k > 0 {
                text.push("\n\n");
            }
            text.push("Contents of ");
            text.push(&i.path.to_string_lossy());
            text.push(i.kind.suffix());
            text.push(":\n\n");
            // `tokens` counts this text.
            text.push_counted(js_trim(&i.parsed.content), i.tokens);
        }
        text.push("\n</system-reminder>");
        text.finish(Place::UserMessage)
    });
    let mut files: Vec<ContextFile> = items
        .iter()
        .map(|i| ContextFile {
            path: i.path.clone(),
            role: i.kind.role(),
            bytes: Some(i.bytes),
            tokens: i.tokens.tokens,
            outcome: Outcome::Loaded,
            parent: i.parent.clone(),
        })
        .collect();
    files.extend(skipped);
    AgentContext {
        agent: Agent::ClaudeCode,
        cwd,
        root: None,
        files,
        limit: None,
        parts: sent.into_iter().collect(),
        notes,
    }
}

/// A file that was read but is not sent.
fn not_sent(item: &Item, outcome: Outcome) -> ContextFile {
    ContextFile {
        path: item.path.clone(),
        role: item.kind.role(),
        bytes: Some(item.bytes),
        tokens: 0,
        outcome,
        parent: item.parent.clone(),
    }
}

/// What reading a candidate gave.
enum Read {
    Text(std::sync::Arc<[u8]>),
    Missing,
    NotFile,
    TooLarge(u64),
    Failed(String),
}

/// A regular file (links followed) of at most [`MAX_FILE_BYTES`], read whole.
fn read(disk: &dyn Disk, path: &Path) -> Read {
    let meta = match disk.metadata(path) {
        Ok(meta) => meta,
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            return Read::Missing
        }
        Err(e) => return Read::Failed(e.to_string()),
    };
    if !meta.is_file() {
        return Read::NotFile;
    }
    if meta.len() > MAX_FILE_BYTES {
        return Read::TooLarge(meta.len());
    }
    match disk.read(path) {
        Ok(bytes) => Read::Text(bytes),
        Err(e) => Read::Failed(e.to_string()),
    }
}

/// Whether Claude Code reads `path` as text: it has no extension (Node's
/// `path.extname`: from the last `.` of the name, unless the name starts
/// with it or is `..`), or one of [`TEXT_EXTENSIONS`] in any case
/// (JavaScript's `toLowerCase`, which for ASCII is ASCII's; a name outside
/// ASCII is lowered in full, as `U+212A KELVIN SIGN` lowers to `k`).
fn is_text(path: &Path) -> bool {
    let Some(name) = path.file_name().map(OsStr::to_string_lossy) else {
        return true;
    };
    let ext = match name.rfind('.') {
        Some(i) if i > 0 && name != ".." => &name[i..],
        _ => return true,
    };
    if ext.is_ascii() {
        TEXT_EXTENSIONS.iter().any(|t| t.eq_ignore_ascii_case(ext))
    } else {
        TEXT_EXTENSIONS.contains(&ext.to_lowercase().as_str())
    }
}

/// Whether `path` is `dir` or below it.
fn inside(path: &Path, dir: &Path) -> bool {
    super::is_below(path, dir)
}

fn strip_trailing_slashes(path: &Path) -> PathBuf {
    // A plain path (as the loader builds them) is its own normal form: no
    // need to parse and rebuild it.
    if super::disk::is_plain(path.as_os_str().as_encoded_bytes()) {
        path.to_path_buf()
    } else {
        path.components().collect()
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::Path;

    /// `is_text` is the extension lowered in full and looked up, for names
    /// in ASCII (any case), out of it (`U+212A KELVIN SIGN` lowers to `k`)
    /// and not UTF-8 at all.
    #[test]
    fn is_text_lowers_the_extension_in_full() {
        let in_full = |path: &Path| {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let ext = match name.rfind('.') {
                Some(i) if i > 0 && name != ".." => name[i..].to_lowercase(),
                _ => String::new(),
            };
            ext.is_empty() || super::TEXT_EXTENSIONS.contains(&ext.as_str())
        };
        let mut names: Vec<Vec<u8>> = [
            "CLAUDE.md",
            "x.MD",
            "x.mD",
            "a.b.PY",
            "a.exe",
            "noext",
            ".hidden",
            "..",
            "a.",
            "a.\u{212A}t",
            "a.\u{212A}",
            "a.\u{130}",
            "a.T\u{130}",
            "r.Json",
            "r.JSONX",
        ]
        .iter()
        .map(|n| n.as_bytes().to_vec())
        .collect();
        names.push(b"a.m\xffd".to_vec());
        names.push(b"a.\xff".to_vec());
        for ext in super::TEXT_EXTENSIONS {
            names.push(format!("f{}", ext.to_uppercase()).into_bytes());
            names.push(format!("f{ext}x").into_bytes());
        }
        for name in names {
            let path = Path::new("/d").join(OsStr::from_bytes(&name));
            assert_eq!(super::is_text(&path), in_full(&path), "{path:?}");
        }
    }
}
