//! OpenAI Codex CLI (`VERSION`): `AGENTS.md` files.
//!
//! The rules, found by experiment against the real binary (its source for
//! this version is not public in full; see `docs/agents-context.md`):
//!
//! * **Global file.** In `$CODEX_HOME` (else `~/.codex`; a relative
//!   `CODEX_HOME` is taken from the working directory): `AGENTS.override.md`,
//!   then `AGENTS.md`. The first that is a regular file (links followed),
//!   can be read and is not blank wins; its text is sent trimmed (Rust's
//!   `str::trim`). It does not count against the byte limit.
//! * **Project root.** The nearest directory, from the working directory up,
//!   holding one of `project_root_markers` (default `.git`; a file counts,
//!   anything `stat` finds). Without one, only the working directory is
//!   searched.
//! * **One file per directory**, from the root down to the working
//!   directory: the first of `AGENTS.override.md`, `AGENTS.md` and
//!   `project_doc_fallback_filenames` that is a regular file. It is chosen
//!   before it is read, so a blank override still takes its directory. A
//!   candidate that cannot be inspected (other than "not found") or read
//!   drops every project file.
//! * **One byte limit for the chain**, `project_doc_max_bytes` (default
//!   32768; 0 turns project files off): root first, each file is cut to what
//!   remains, at any byte, and decoded with replacement; a file that is
//!   blank after the cut costs nothing and is not sent; once nothing remains
//!   the deeper files are not read.
//! * **The message**: `# AGENTS.md instructions for <cwd>` (only `# AGENTS.md
//!   instructions` when no project file is sent), a blank line,
//!   `<INSTRUCTIONS>`, the global text, `--- project-doc ---` between it and
//!   the project files (each separated by a blank line, sent as they are),
//!   and `</INSTRUCTIONS>`.
//! * `trust_level = "untrusted"` in `config.toml`'s `[projects."<path>"]`
//!   entry for the working directory, else for the nearest git repository
//!   above it, sends no project file.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use super::disk::{absent_below, ancestors, joined, Disk, Listing, Live};
use super::engine::{Layered, Likeness};
use super::{
    Agent, AgentContext, ByteLimit, ContextError, ContextFile, Outcome, PartWriter, Place, Role,
    Skip, Writing,
};

/// The Codex CLI version this model reproduces (`tests/agents/package.json`).
pub(crate) const VERSION: &str = "0.171.0";

/// `project_doc_max_bytes` when `config.toml` does not set it.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 32 * 1024;

const OVERRIDE: &str = "AGENTS.override.md";
const AGENTS: &str = "AGENTS.md";

/// How Codex is started.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The working directory Codex is started in (it names it by its
    /// physical path, links resolved).
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// `$CODEX_HOME`, when set.
    pub codex_home: Option<&'a OsStr>,
}

/// The settings of `config.toml` that decide what is loaded.
#[derive(Debug)]
struct Settings {
    max_bytes: u64,
    fallbacks: Vec<String>,
    markers: Vec<String>,
    trust: HashMap<String, String>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            max_bytes: DEFAULT_MAX_BYTES,
            fallbacks: Vec::new(),
            markers: vec![".git".to_string()],
            trust: HashMap::new(),
        }
    }
}

/// What Codex loads when started as `start` says.
pub fn context(start: &Start<'_>) -> Result<AgentContext, ContextError> {
    context_on(start, &Live)
}

/// [`context`], looking at the files through `disk`.
pub fn context_on(start: &Start<'_>, disk: &dyn Disk) -> Result<AgentContext, ContextError> {
    context_writing(start, disk, Writing::Whole)
}

/// [`context_on`], its text written as `writing` says.
pub(crate) fn context_writing(
    start: &Start<'_>,
    disk: &dyn Disk,
    writing: Writing,
) -> Result<AgentContext, ContextError> {
    let cwd = super::physical_cwd(disk, start.cwd)?;
    let model = Model::of(start, &cwd, disk)?;
    crate::engine::context(&model, cwd, disk, writing)
}

/// Codex in the registry: `$CODEX_HOME` read from the start's environment.
pub(crate) struct Registered;

impl crate::Modelled for Registered {
    fn context(
        &self,
        start: &crate::Start<'_>,
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let codex_home = (start.env)("CODEX_HOME");
        context_writing(&Start::of(start, codex_home.as_deref()), disk, writing)
    }

    fn contexts(
        &self,
        tree: &crate::Tree,
        start: &crate::Start<'_>,
        disk: &crate::disk::Remembered<'_>,
    ) -> Result<Vec<crate::Shared>, ContextError> {
        let codex_home = (start.env)("CODEX_HOME");
        let start = Start::of(start, codex_home.as_deref());
        match Model::of_every_start(&start, disk)? {
            Some(model) => crate::engine::contexts(&model, tree, disk),
            None => crate::engine::each_own(tree, disk, |cwd| {
                context_writing(&Start { cwd, ..start }, disk, Writing::ToMeasure)
            }),
        }
    }
}

impl<'a> Start<'a> {
    /// Codex started as `start` says, with `$CODEX_HOME` as given.
    fn of(start: &crate::Start<'a>, codex_home: Option<&'a OsStr>) -> Start<'a> {
        Start {
            cwd: start.cwd,
            home: start.home,
            codex_home,
        }
    }
}

/// Codex as the engine runs it, its settings read: what it finds in each
/// directory, and how that makes its message.
pub(crate) struct Model {
    codex_home: PathBuf,
    settings: Settings,
    /// A directory's candidate names, in Codex's order.
    candidates: Vec<String>,
    /// The names a directory must hold to find something: the candidates
    /// and each marker's first part (`None` where a marker is not made of
    /// plain parts, which a listing cannot answer for).
    names: Option<Vec<String>>,
}

impl Model {
    /// Codex started as `start` says in `cwd` (its physical path), its
    /// settings read.
    pub(crate) fn of(
        start: &Start<'_>,
        cwd: &Path,
        disk: &dyn Disk,
    ) -> Result<Model, ContextError> {
        let codex_home = match start.codex_home {
            Some(dir) => {
                let dir = cwd.join(dir);
                if disk.metadata(&dir).is_err() {
                    return Err(ContextError::MissingHome {
                        variable: "CODEX_HOME",
                        value: PathBuf::from(start.codex_home.unwrap_or_default()),
                    });
                }
                dir
            }
            None => start.home.join(".codex"),
        };
        let settings = read_settings(disk, &codex_home.join("config.toml"))?;
        let candidates = candidate_names(&settings.fallbacks);
        let names = settings
            .markers
            .iter()
            .map(|marker| {
                let plain = marker.split('/').all(super::plain_name);
                plain.then(|| marker.split('/').next().unwrap_or_default().to_string())
            })
            .collect::<Option<Vec<String>>>()
            .map(|mut names| {
                names.extend(candidates.iter().cloned());
                names
            });
        Ok(Model {
            codex_home,
            settings,
            candidates,
            names,
        })
    }

    /// [`Model::of`] for every start of a tree, when that is one model:
    /// `None` when `CODEX_HOME` is relative to the start.
    pub(crate) fn of_every_start(
        start: &Start<'_>,
        disk: &dyn Disk,
    ) -> Result<Option<Model>, ContextError> {
        match start.codex_home {
            Some(dir) if !Path::new(dir).is_absolute() => Ok(None),
            _ => Model::of(start, start.cwd, disk).map(Some),
        }
    }
}

/// What Codex finds in one directory.
pub(crate) struct Found {
    /// Whether it holds a project root marker.
    marker: bool,
    /// Its file, if one is chosen.
    chosen: Option<Chosen>,
    /// The first candidate that could not be inspected, after which Codex
    /// looks no further.
    failed: Option<(PathBuf, String)>,
}

impl Layered for Model {
    type Found = Found;

    fn names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> Found {
        let listing = disk.exact_listing(dir);
        let listing = listing.as_ref();
        let marker = self
            .settings
            .markers
            .iter()
            .any(|m| !absent_below(listing, dir, m) && disk.metadata(&joined(dir, m)).is_ok());
        let (chosen, failed) = choose(disk, dir, listing, &self.candidates);
        Found {
            marker,
            chosen,
            failed,
        }
    }

    fn adds_nothing(&self, found: &Found) -> bool {
        !found.marker && found.chosen.is_none() && found.failed.is_none()
    }

    /// Whether the start found a project root.
    type Above = bool;

    fn above(&self, _: &Path, context: &AgentContext, _: &dyn Disk) -> bool {
        context.root.is_some()
    }

    /// **Project root**: without one, only the start is read; `[projects]`
    /// trust is looked up by the start's own path.
    fn likeness(&self, rooted: &bool, _: &Path, _: Option<&Listing>, _: &dyn Disk) -> Likeness {
        match *rooted && self.settings.trust.is_empty() {
            true => Likeness::AddsNothing,
            false => Likeness::Own,
        }
    }

    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &Found)],
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let settings = &self.settings;
        let mut files = Vec::new();
        let mut notes = Vec::new();
        let global = global_text(disk, &self.codex_home, &mut files);

        // **Project root**: the nearest directory holding a marker.
        let root = up.iter().position(|(_, found)| found.marker);
        let mut remaining = settings.max_bytes;
        let mut parts = Vec::new();
        if let Some((key, "untrusted")) = trust_level(disk, &cwd, &settings.trust) {
            notes.push(format!(
                "{key} is untrusted in config.toml: Codex sends no project file"
            ));
        } else if settings.max_bytes == 0 {
            notes.push("project_doc_max_bytes = 0: Codex sends no project file".to_string());
        } else {
            // From the root down to the start; the start alone without one.
            let dirs: Vec<&Found> = match root {
                Some(root) => up[..=root].iter().rev().map(|(_, f)| *f).collect(),
                None => up
                    .first()
                    .filter(|(dir, _)| *dir == cwd)
                    .map(|(_, f)| *f)
                    .into_iter()
                    .collect(),
            };
            parts = project_texts(disk, &dirs, &mut remaining, &mut files, &mut notes);
        }
        let root = root.map(|r| up[r].0.to_path_buf());

        // Written in one piece: the files' texts are most of it.
        let message = (global.is_some() || !parts.is_empty()).then(|| {
            // Sized first: growing it would copy the files' texts again and again.
            let len = global.as_ref().map_or(0, String::len)
                + parts.iter().map(|(p, _)| p.len() + 2).sum::<usize>()
                + cwd.as_os_str().len()
                + 96;
            let mut text = PartWriter::new(writing, len);
            text.push("# AGENTS.md instructions");
            if !parts.is_empty() {
                text.push(" for ");
                text.push(&cwd.to_string_lossy());
            }
            text.push("\n\n<INSTRUCTIONS>\n");
            if let Some(global) = &global {
                text.push(global);
                if !parts.is_empty() {
                    text.push("\n\n--- project-doc ---\n\n");
                }
            }
            for (k, (part, tokens)) in parts.iter().enumerate() {
                if k > 0 {
                    text.push("\n\n");
                }
                text.push_counted(part, *tokens);
            }
            text.push("\n</INSTRUCTIONS>");
            text.finish(Place::UserMessage)
        });
        Ok(AgentContext {
            agent: Agent::Codex,
            cwd,
            root,
            files,
            limit: Some(ByteLimit {
                max: settings.max_bytes,
                used: settings.max_bytes - remaining,
            }),
            parts: message.into_iter().collect(),
            notes,
        })
    }
}

/// The settings in `path` (the defaults when there is no such file).
fn read_settings(disk: &dyn Disk, path: &Path) -> Result<Settings, ContextError> {
    let text = match disk.read(path).and_then(|b| {
        String::from_utf8(b.to_vec()).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Settings::default()),
        Err(source) => {
            return Err(ContextError::ConfigUnreadable {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let bad = |what: &str| ContextError::Config {
        path: path.to_path_buf(),
        line: None,
        message: what.to_string(),
    };
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let before = e.span().and_then(|span| text.get(..span.start));
        let line = before.map(|t| t.matches('\n').count() + 1);
        ContextError::Config {
            path: path.to_path_buf(),
            line,
            message: e.message().to_string(),
        }
    })?;
    let mut settings = Settings::default();
    if let Some(value) = table.get("project_doc_max_bytes") {
        settings.max_bytes = value
            .as_integer()
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| bad("project_doc_max_bytes is not a non-negative integer"))?;
    }
    if let Some(value) = table.get("project_doc_fallback_filenames") {
        settings.fallbacks = strings(value)
            .ok_or_else(|| bad("project_doc_fallback_filenames is not a list of strings"))?;
    }
    if let Some(value) = table.get("project_root_markers") {
        settings.markers =
            strings(value).ok_or_else(|| bad("project_root_markers is not a list of strings"))?;
    }
    if let Some(projects) = table.get("projects").and_then(toml::Value::as_table) {
        for (dir, project) in projects {
            if let Some(level) = project.get("trust_level").and_then(toml::Value::as_str) {
                settings.trust.insert(dir.clone(), level.to_string());
            }
        }
    }
    Ok(settings)
}

/// A TOML list of strings.
fn strings(value: &toml::Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// The global file's text, trimmed, recording what became of each candidate.
fn global_text(disk: &dyn Disk, codex_home: &Path, files: &mut Vec<ContextFile>) -> Option<String> {
    let mut winner: Option<PathBuf> = None;
    let mut text = None;
    for name in [OVERRIDE, AGENTS] {
        let path = codex_home.join(name);
        if !disk.metadata(&path).is_ok_and(|m| m.is_file()) {
            continue;
        }
        if let Some(by) = &winner {
            files.push(not_sent(
                path,
                Role::Global,
                None,
                Outcome::Shadowed { by: by.clone() },
            ));
            continue;
        }
        match disk.read(&path) {
            Err(e) => files.push(not_sent(
                path,
                Role::Global,
                None,
                Outcome::Skipped(Skip::Unreadable(e.to_string())),
            )),
            Ok(bytes) => {
                let len = bytes.len() as u64;
                let decoded = super::lossy(&bytes);
                let trimmed = decoded.trim();
                if trimmed.is_empty() {
                    files.push(not_sent(
                        path,
                        Role::Global,
                        Some(len),
                        Outcome::Skipped(Skip::Blank),
                    ));
                    continue;
                }
                files.push(ContextFile {
                    path: path.clone(),
                    role: Role::Global,
                    bytes: Some(len),
                    tokens: disk.count_tokens(trimmed),
                    outcome: Outcome::Loaded,
                    parent: None,
                });
                text = Some(trimmed.to_string());
                winner = Some(path);
            }
        }
    }
    text
}

/// The `[projects."<path>"]` entry that applies, and its trust level: the
/// one for the working directory itself, else the one for its git
/// repository ([`git_repository`]). Entries for other directories (the
/// marker root, one in between) are not consulted.
fn trust_level<'a>(
    disk: &dyn Disk,
    cwd: &Path,
    trust: &'a HashMap<String, String>,
) -> Option<(&'a str, &'a str)> {
    if trust.is_empty() {
        return None;
    }
    let entry = |dir: &Path| trust.get_key_value(dir.to_string_lossy().as_ref());
    entry(cwd)
        .or_else(|| entry(git_repository(disk, cwd)?))
        .map(|(key, level)| (key.as_str(), level.as_str()))
}

/// The git repository Codex finds for `cwd`'s trust: the nearest directory
/// whose `.git` (links followed) is a directory holding `HEAD`; a `.git`
/// directory without one is passed over, a `.git` file ends the search
/// without a repository (a linked worktree's main repository is not
/// modelled).
fn git_repository<'a>(disk: &dyn Disk, cwd: &'a Path) -> Option<&'a Path> {
    for dir in ancestors(cwd) {
        let git = joined(dir, ".git");
        match disk.metadata(&git) {
            Ok(meta) if meta.is_dir() && disk.metadata(&git.join("HEAD")).is_ok() => {
                return Some(dir)
            }
            Ok(meta) if meta.is_file() => return None,
            _ => {}
        }
    }
    None
}

/// The candidate names of a directory, in Codex's order.
fn candidate_names(fallbacks: &[String]) -> Vec<String> {
    let mut names = vec![OVERRIDE.to_string(), AGENTS.to_string()];
    for name in fallbacks {
        let name = name.trim();
        let usable = !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\0']);
        if usable && !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

/// A directory's file, chosen by type before anything is read, with the
/// regular files of the later names, which it shadows.
struct Chosen {
    path: PathBuf,
    len: u64,
    shadows: Vec<(PathBuf, u64)>,
}

/// The project files' texts as Codex sends them, from the finds of the
/// directories from the root down, recording what became of each file (a
/// chosen one, then those it shadows).
fn project_texts(
    disk: &dyn Disk,
    dirs: &[&Found],
    remaining: &mut u64,
    files: &mut Vec<ContextFile>,
    notes: &mut Vec<String>,
) -> Vec<(String, promptinclude_tokenize::Split)> {
    let mut chosen: Vec<&Chosen> = Vec::new();
    let mut failed = None;
    for found in dirs {
        chosen.extend(found.chosen.as_ref());
        if found.failed.is_some() {
            failed = found.failed.as_ref();
            break;
        }
    }
    if let Some((path, error)) = failed {
        emit(files, &chosen, |_| {
            (Outcome::Skipped(Skip::DroppedWithSet), 0)
        });
        files.push(not_sent(
            path.clone(),
            Role::Project,
            None,
            Outcome::Skipped(Skip::Unreadable(error.clone())),
        ));
        notes.push(dropped_note(path, "inspected"));
        return Vec::new();
    }
    let mut parts = Vec::new();
    let mut outcomes = Vec::new();
    for file in &chosen {
        if *remaining == 0 {
            outcomes.push((Outcome::Skipped(Skip::LimitReached), 0));
            continue;
        }
        // Codex reads the whole file and then cuts it; what it sends is the
        // same, and a huge file costs only what is sent.
        let bytes = match disk.read_prefix(&file.path, *remaining) {
            Ok(bytes) => bytes,
            Err(e) => {
                let unreadable = Outcome::Skipped(Skip::Unreadable(e.to_string()));
                emit(files, &chosen, |f| {
                    if f.path == file.path {
                        (unreadable.clone(), 0)
                    } else {
                        (Outcome::Skipped(Skip::DroppedWithSet), 0)
                    }
                });
                notes.push(dropped_note(&file.path, "read"));
                return Vec::new();
            }
        };
        let at = bytes.len() as u64;
        let of = file.len.max(at);
        let text = super::lossy_owned(bytes);
        if text.trim().is_empty() {
            outcomes.push((Outcome::Skipped(Skip::Blank), 0));
            continue;
        }
        *remaining -= at;
        let outcome = if at < of {
            Outcome::Truncated { at, of }
        } else {
            Outcome::Loaded
        };
        let tokens = disk.count_split(&text);
        outcomes.push((outcome, tokens.tokens));
        parts.push((text, tokens));
    }
    let mut outcomes = outcomes.into_iter();
    emit(files, &chosen, |_| {
        outcomes.next().unwrap_or((Outcome::Loaded, 0))
    });
    parts
}

/// The file of directory `dir` (listed exactly as `listing`, if known),
/// with the regular files of the later names, which it shadows; or the
/// first candidate that could not be inspected, after which Codex looks
/// no further.
fn choose(
    disk: &dyn Disk,
    dir: &Path,
    listing: Option<&Listing>,
    names: &[String],
) -> (Option<Chosen>, Option<(PathBuf, String)>) {
    let mut winner: Option<Chosen> = None;
    for name in names {
        if absent_below(listing, dir, name) {
            continue;
        }
        let path = joined(dir, name);
        match (disk.metadata(&path), &mut winner) {
            (Ok(meta), Some(w)) if meta.is_file() => w.shadows.push((path, meta.len())),
            (Ok(meta), None) if meta.is_file() => {
                winner = Some(Chosen {
                    path,
                    len: meta.len(),
                    shadows: Vec::new(),
                })
            }
            (Ok(_), _) => {}
            (Err(e), _) if e.kind() == io::ErrorKind::NotFound => {}
            // Codex stops looking once it has this directory's file.
            (Err(_), Some(_)) => {}
            (Err(e), None) => return (None, Some((path, e.to_string()))),
        }
    }
    (winner, None)
}

/// Records each chosen file with the outcome and tokens `of` gives it,
/// followed by the files it shadows.
fn emit(
    files: &mut Vec<ContextFile>,
    chosen: &[&Chosen],
    mut of: impl FnMut(&Chosen) -> (Outcome, usize),
) {
    for file in chosen {
        let (outcome, tokens) = of(file);
        files.push(ContextFile {
            path: file.path.clone(),
            role: Role::Project,
            bytes: Some(file.len),
            tokens,
            outcome,
            parent: None,
        });
        for (path, len) in &file.shadows {
            let by = Outcome::Shadowed {
                by: file.path.clone(),
            };
            files.push(not_sent(path.clone(), Role::Project, Some(*len), by));
        }
    }
}

/// The note for a project file that cannot be `inspected` or `read`.
fn dropped_note(path: &Path, what: &str) -> String {
    format!(
        "{} cannot be {what}: Codex drops every project file (it only logs \
         `error trying to find AGENTS.md docs`)",
        path.display()
    )
}

/// A file none of whose text is sent.
fn not_sent(path: PathBuf, role: Role, bytes: Option<u64>, outcome: Outcome) -> ContextFile {
    ContextFile {
        path,
        role,
        bytes,
        tokens: 0,
        outcome,
        parent: None,
    }
}
