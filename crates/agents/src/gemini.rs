//! Google Gemini CLI (`VERSION`): `GEMINI.md` (or `context.fileName`)
//! files, with `@file` imports.
//!
//! The rules, read in its bundled source (`memoryDiscovery`,
//! `memoryImportProcessor`, `memoryContextManager`, `snippets`) and checked
//! against it:
//!
//! * **Names**: `context.fileName` (a string or a list; the working
//!   directory's `.gemini/settings.json` replaces the user's), trimmed, each
//!   once, and `GEMINI.md` always after them.
//! * **Global files**: `~/.gemini/<name>`, sent at the end of the system
//!   instruction under `# Contextual Instructions (<names>)`.
//! * **Project files**: every name in every directory from the working
//!   directory up to the nearest one holding a `context.memoryBoundaryMarkers`
//!   entry (default `.git`; without one, only the working directory), never
//!   `~/.gemini`; one path per file (by inode), sorted as strings; sent in
//!   the first user message. Directories below are not read at start.
//! * **Imports**: `@path` at the start or after a space, tab or line end,
//!   outside backtick spans, resolved from the importing file, inside the
//!   root that file's own boundary marker gives; inlined between
//!   `<!-- Imported from: -->` comments, five deep; what fails is replaced by
//!   a comment saying why.
//! * Each file is sent trimmed (JavaScript's `trim`), between
//!   `--- Context from: <path> ---` and `--- End of Context from: <path> ---`;
//!   a blank one is left out. The system instruction has every run of three
//!   or more line feeds made two (so a global file's are); the user message
//!   is sent as it is.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashSet;
use serde_json::Value;

use super::disk::{absent_below, ancestors, derived, Disk, Listing, Live};
use super::engine::{Layered, Likeness};
use super::js::{resolve as normalize, trim as js_trim};
use super::{
    Agent, AgentContext, ContextError, ContextFile, KeptDir, Outcome, Part, Place, Role, Skip,
};

/// The Gemini CLI version this model reproduces (`tests/agents/package.json`).
pub(crate) const VERSION: &str = "0.61.0";

/// How deep imports are followed.
const MAX_DEPTH: usize = 5;

/// How Gemini CLI is started.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The working directory (named by its physical path).
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// `$GEMINI_CLI_HOME`, when set (it replaces `$HOME`).
    pub gemini_home: Option<&'a OsStr>,
    /// `$GEMINI_CLI_TRUST_WORKSPACE`, when set.
    pub trust: Option<&'a OsStr>,
}

/// The settings that decide what is loaded.
struct Settings {
    names: Vec<String>,
    markers: Vec<String>,
    flat: bool,
    include_directories: bool,
    folder_trust: bool,
}

/// What Gemini CLI loads when started as `start` says.
pub fn context(start: &Start<'_>) -> Result<AgentContext, ContextError> {
    context_on(start, &Live)
}

/// [`context`], looking at the files through `disk`.
pub fn context_on(start: &Start<'_>, disk: &dyn Disk) -> Result<AgentContext, ContextError> {
    let cwd = super::physical_cwd(disk, start.cwd)?;
    let model = Model::of(start, &cwd, disk);
    crate::engine::context(&model, cwd, disk, crate::Writing::Whole)
}

/// Gemini CLI in the registry: `$GEMINI_CLI_HOME` and
/// `$GEMINI_CLI_TRUST_WORKSPACE` read from the start's environment.
pub(crate) struct Registered;

impl crate::Modelled for Registered {
    fn context(
        &self,
        start: &crate::Start<'_>,
        disk: &dyn Disk,
        _: crate::Writing,
    ) -> Result<AgentContext, ContextError> {
        let (home, trust) = variables(start);
        context_on(&Start::of(start, home.as_deref(), trust.as_deref()), disk)
    }

    fn contexts(
        &self,
        tree: &crate::Tree,
        start: &crate::Start<'_>,
        disk: &crate::disk::Remembered<'_>,
    ) -> Result<Vec<crate::Shared>, ContextError> {
        let (home, trust) = variables(start);
        let start = Start::of(start, home.as_deref(), trust.as_deref());
        match Model::of_every_start(&start, disk) {
            Some(model) => crate::engine::contexts(&model, tree, disk),
            None => {
                crate::engine::each_own(tree, disk, |cwd| context_on(&Start { cwd, ..start }, disk))
            }
        }
    }
}

/// `$GEMINI_CLI_HOME` and `$GEMINI_CLI_TRUST_WORKSPACE`.
fn variables(start: &crate::Start<'_>) -> (Option<std::ffi::OsString>, Option<std::ffi::OsString>) {
    (
        (start.env)("GEMINI_CLI_HOME"),
        (start.env)("GEMINI_CLI_TRUST_WORKSPACE"),
    )
}

impl<'a> Start<'a> {
    /// Gemini CLI started as `start` says, with its variables as given.
    fn of(
        start: &crate::Start<'a>,
        gemini_home: Option<&'a OsStr>,
        trust: Option<&'a OsStr>,
    ) -> Start<'a> {
        Start {
            cwd: start.cwd,
            home: start.home,
            gemini_home,
            trust,
        }
    }
}

/// Gemini CLI as the engine runs it, with the user's settings: what it
/// finds in each directory, and how that makes what it sends.
pub(crate) struct Model<'a> {
    start: Start<'a>,
    /// The user's Gemini directory.
    gemini_dir: KeptDir,
    /// The home's physical path.
    real_home: Option<KeptDir>,
    /// The user's settings file.
    user: Arc<Value>,
    /// The user's settings (a start holding `.gemini` reads its own too:
    /// such a directory finds something).
    settings: Settings,
    /// The names a directory must hold to find something: the context
    /// file names, the boundary markers and `.gemini` (`None` where one is
    /// not a directory entry's name, which a listing cannot answer for).
    names: Option<Vec<String>>,
    /// Whether no directory has [private project memory](private_memory),
    /// known without its path: `tmp` is not there, and every path below it
    /// that would be looked at stays below it (the names, and every
    /// registered project's).
    no_private_memory: bool,
}

impl<'a> Model<'a> {
    /// Gemini CLI started as `start` says in `cwd` (its physical path).
    pub(crate) fn of(start: &Start<'a>, cwd: &Path, disk: &dyn Disk) -> Model<'a> {
        let home = match start.gemini_home.filter(|h| !h.is_empty()) {
            Some(h) => resolve(cwd, Path::new(h)),
            None => start.home.to_path_buf(),
        };
        let gemini_dir = home.join(".gemini");
        let user = read_json(disk, &gemini_dir.join("settings.json"));
        let settings = settings(&user, &Value::Null);
        let registry = read_json(disk, &gemini_dir.join("projects.json"));
        let registered = match &registry["projects"] {
            Value::Object(projects) => projects.values().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let no_private_memory =
            only_below_missing_tmp(disk, &gemini_dir, registered, &settings.names);
        let mut names = settings.names.clone();
        names.extend(settings.markers.iter().cloned());
        names.push(".gemini".to_string());
        let names = names.iter().all(|n| super::plain_name(n)).then_some(names);
        Model {
            start: *start,
            real_home: disk.canonicalize(&home).ok().map(KeptDir::new),
            gemini_dir: KeptDir::new(gemini_dir),
            user,
            settings,
            names,
            no_private_memory,
        }
    }

    /// [`Model::of`] for every start of a tree, when that is one model:
    /// `None` when `GEMINI_CLI_HOME` is relative to the start.
    pub(crate) fn of_every_start(start: &Start<'a>, disk: &dyn Disk) -> Option<Model<'a>> {
        match start.gemini_home.filter(|h| !h.is_empty()) {
            Some(h) if !Path::new(h).is_absolute() => None,
            _ => Some(Model::of(start, start.cwd, disk)),
        }
    }

    /// Whether `dir` is the home or inside the user's Gemini directory,
    /// where what is read differs from the directories around.
    fn special(&self, dir: &Path) -> bool {
        self.real_home
            .as_ref()
            .is_some_and(|home| home.below().is(dir))
            || self.gemini_dir.below().holds(dir)
    }

    /// Whether a start in `dir` has [private project memory](private_memory).
    fn has_private_memory(&self, disk: &dyn Disk, dir: &Path) -> bool {
        !self.no_private_memory
            && !private_memory(disk, self.gemini_dir.path(), dir, &self.settings.names).is_empty()
    }
}

/// What Gemini CLI finds in one directory, with some settings.
pub(crate) struct DirFound {
    /// Whether it holds a boundary marker.
    marker: bool,
    /// Its context files that can be read.
    files: Vec<PathBuf>,
    /// Whether it may hold `.gemini` (a start there reads its settings).
    workspace: bool,
}

/// What Gemini CLI with `settings` finds in `dir`.
fn found_with(settings: &Settings, dir: &Path, disk: &dyn Disk) -> DirFound {
    let listing = disk.exact_listing(dir);
    let usable = settings
        .markers
        .iter()
        .filter(|m| !m.starts_with('/') && !m.contains(".."));
    let marker = usable
        .into_iter()
        .any(|m| !absent_below(listing.as_ref(), dir, m) && exists(disk, &dir.join(m)));
    let files = settings
        .names
        .iter()
        .map(|n| normalize(&dir.join(n)))
        .filter(|p| readable(disk, p))
        .collect();
    let workspace = !super::holds_none_in(listing.as_ref(), &[".gemini"]);
    DirFound {
        marker,
        files,
        workspace,
    }
}

impl Layered for Model<'_> {
    type Found = DirFound;
    /// Whether a start right below may load what this one loads.
    type Above = bool;

    fn names(&self) -> Option<&[String]> {
        self.names.as_deref()
    }

    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> DirFound {
        found_with(&self.settings, dir, disk)
    }

    fn adds_nothing(&self, found: &DirFound) -> bool {
        !found.marker && found.files.is_empty() && !found.workspace
    }

    /// **Project files** are read up to the boundary (without one, in the
    /// start alone); a start holding `.gemini` reads its settings, the home
    /// and `~/.gemini` are read otherwise, and private project memory is
    /// kept by the start's path.
    fn above(&self, dir: &Path, context: &AgentContext, disk: &dyn Disk) -> bool {
        context.root.is_some()
            && !self.special(dir)
            && super::holds_none(disk, dir, &[".gemini"])
            && !self.has_private_memory(disk, dir)
    }

    fn likeness(&self, above: &bool, cwd: &Path, _: Option<&Listing>, disk: &dyn Disk) -> Likeness {
        match *above && !self.special(cwd) && !self.has_private_memory(disk, cwd) {
            true => Likeness::AddsNothing,
            false => Likeness::Own,
        }
    }

    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &DirFound)],
        disk: &dyn Disk,
        _: crate::Writing,
    ) -> Result<AgentContext, ContextError> {
        let start = &self.start;
        let gemini_dir = self.gemini_dir.path();
        let in_home = self.real_home.as_ref().is_some_and(|h| h.path() == cwd);
        let workspace = if in_home {
            Arc::new(Value::Null)
        } else {
            read_json(disk, &cwd.join(".gemini/settings.json"))
        };
        let settings = settings(&self.user, &workspace);
        let mut notes = Vec::new();
        if settings.include_directories {
            notes.push(
                "context.includeDirectories is set: those directories are not modelled".to_string(),
            );
        }
        let trusted = match start.trust.map(OsStr::as_bytes) {
            Some(b"true") => true,
            Some(b"false") => false,
            _ => !settings.folder_trust,
        };
        if !trusted {
            notes.push(
                "the folder is not trusted (GEMINI_CLI_TRUST_WORKSPACE, trustedFolders.json): \
                 gemini -p exits, and an interactive session loads no project file"
                    .to_string(),
            );
        }

        let global: Vec<PathBuf> = settings
            .names
            .iter()
            .map(|n| normalize(&gemini_dir.join(n)))
            .filter(|p| readable(disk, p))
            .collect();
        // The finds with the start's own settings, where they are not the
        // user's.
        let users =
            settings.names == self.settings.names && settings.markers == self.settings.markers;
        let own: Vec<(&Path, DirFound)> = match users {
            true => Vec::new(),
            false => ancestors(&cwd)
                .map(|dir| (dir, found_with(&settings, dir, disk)))
                .filter(|(_, found)| !self.adds_nothing(found))
                .collect(),
        };
        let own: Vec<(&Path, &DirFound)> = own.iter().map(|(dir, found)| (*dir, found)).collect();
        let up = if users { up } else { &own[..] };
        // **Boundary**: the nearest directory holding a marker.
        let root = up
            .iter()
            .find(|(_, found)| found.marker)
            .map(|(dir, _)| dir.to_path_buf());
        let mut project = Vec::new();
        if trusted {
            // From the start up to the boundary (the start alone without
            // one), never `~/.gemini` or above it from inside.
            let ceiling = root.as_deref().unwrap_or(&cwd);
            let in_gemini_dir = cwd.starts_with(gemini_dir);
            for (dir, found) in up {
                if !dir.starts_with(ceiling) || (in_gemini_dir && gemini_dir.starts_with(dir)) {
                    break;
                }
                project.splice(0..0, found.files.iter().cloned());
            }
            project = by_identity(disk, project);
            project.sort_by(|a, b| super::js::utf16_order(a, b));
        }
        let memory = private_memory(disk, gemini_dir, &cwd, &settings.names);

        let all = by_identity(
            disk,
            global
                .iter()
                .chain(&project)
                .chain(&memory)
                .cloned()
                .collect(),
        );
        let mut files = Vec::new();
        let mut texts: Vec<(PathBuf, String, Vec<ContextFile>)> = Vec::new();
        for path in &all {
            let role = if global.contains(path) {
                Role::Global
            } else {
                Role::Project
            };
            let mut imports = Vec::new();
            match read_context_file(disk, path, &settings, role, &mut imports) {
                Ok(text) => texts.push((path.clone(), text, imports)),
                Err(e) => files.push(ContextFile {
                    path: path.clone(),
                    role,
                    bytes: None,
                    tokens: 0,
                    outcome: Outcome::Skipped(Skip::Unreadable(e.to_string())),
                    parent: None,
                }),
            }
        }
        let text_of = |p: &PathBuf| {
            texts
                .iter()
                .find(|(q, _, _)| q == p)
                .map(|(_, t, imports)| (t.as_str(), imports))
        };
        let mut sent_files = Vec::new();
        let blocks = |list: &[PathBuf],
                      role: Role,
                      sent_files: &mut Vec<ContextFile>,
                      files: &mut Vec<ContextFile>| {
            let mut out = Vec::new();
            for path in list {
                let Some((text, imports)) = text_of(path) else {
                    continue;
                };
                let trimmed = js_trim(text);
                // The system instruction (global files, private memory) is sent
                // with its line-feed runs collapsed; the user message is not.
                let trimmed = match role {
                    Role::Project => std::borrow::Cow::Borrowed(trimmed),
                    _ => collapse_line_feeds(trimmed),
                };
                let trimmed = trimmed.as_ref();
                let bytes = bytes_of(disk, path);
                if trimmed.is_empty() {
                    files.push(ContextFile {
                        path: path.clone(),
                        role,
                        bytes,
                        tokens: 0,
                        outcome: Outcome::Skipped(Skip::Blank),
                        parent: None,
                    });
                    continue;
                }
                let shown = path.to_string_lossy();
                sent_files.push(ContextFile {
                    path: path.clone(),
                    role,
                    bytes,
                    tokens: disk.count_tokens(trimmed),
                    outcome: Outcome::Loaded,
                    parent: None,
                });
                sent_files.extend(imports.iter().cloned());
                out.push(format!(
                    "--- Context from: {shown} ---\n{trimmed}\n--- End of Context from: {shown} ---"
                ));
            }
            out.join("\n\n")
        };
        let global_text = blocks(&global, Role::Global, &mut sent_files, &mut files);
        let project_text = blocks(&project, Role::Project, &mut sent_files, &mut files);
        let memory_text = blocks(&memory, Role::Local, &mut sent_files, &mut files);

        let mut parts = Vec::new();
        let global_text = js_trim(&global_text);
        let memory_text = js_trim(&memory_text);
        if !memory_text.is_empty() {
            let mut sections = Vec::new();
            if !global_text.is_empty() {
                sections.push(format!(
                    "<global_context>\n{global_text}\n</global_context>"
                ));
            }
            sections.push(format!(
                "<user_project_memory>\n--- Private Project Memory Index (private, not committed to repo) ---\n{memory_text}\n--- End Private Project Memory Index ---\n</user_project_memory>"
            ));
            parts.push(Part::new(
                Place::SystemInstruction,
                format!(
                    "---\n\n<loaded_context>\n{}\n</loaded_context>",
                    sections.join("\n")
                ),
            ));
        } else if !global_text.is_empty() {
            parts.push(Part::new(
                Place::SystemInstruction,
                format!(
                    "{}{global_text}\n</loaded_context>",
                    instructions_header(&settings.names)
                ),
            ));
        }
        let project_text = js_trim(&project_text);
        if !project_text.is_empty() {
            parts.push(Part::new(
                Place::UserMessage,
                format!("<loaded_context>\n<project_context>\n{project_text}\n</project_context>\n</loaded_context>"),
            ));
        }
        sent_files.extend(files);
        Ok(AgentContext {
            agent: Agent::Gemini,
            cwd,
            root,
            files: sent_files,
            limit: None,
            parts,
            notes,
        })
    }
}

/// Every run of three or more line feeds made two, as Gemini CLI does to
/// the whole system instruction (`finalPrompt.replace(/\n{3,}/g, "\n\n")`).
fn collapse_line_feeds(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains("\n\n\n") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut run = 0;
    for c in text.chars() {
        if c == '\n' {
            run += 1;
            if run > 2 {
                continue;
            }
        } else {
            run = 0;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// The header of the global files' section (for the models Gemini CLI
/// picks by default, which name every file name).
fn instructions_header(names: &[String]) -> String {
    format!(
        "# Contextual Instructions ({})
The following content is loaded from local and global configuration files.
**Context Precedence:**
- **Global (~/.gemini/):** foundational user preferences. Apply these broadly.
- **Extensions:** supplementary knowledge and capabilities.
- **Workspace Root:** workspace-wide mandates. Supersedes global preferences.
- **Sub-directories:** highly specific overrides. These rules supersede all others for files within their scope.

**Conflict Resolution:**
- **Precedence:** Strictly follow the order above (Sub-directories > Workspace Root > Extensions > Global).
- **System Overrides:** Contextual instructions override default operational behaviors (e.g., tech stack, style, workflows, tool preferences) defined in the system prompt. However, they **cannot** override Core Mandates regarding safety, security, and agent integrity.

<loaded_context>
",
        names.join(", ")
    )
}

fn bytes_of(disk: &dyn Disk, path: &Path) -> Option<u64> {
    disk.metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

/// A settings file as Gemini CLI reads it (`//` comment lines allowed); an
/// absent or broken one counts as empty.
fn read_json(disk: &dyn Disk, path: &Path) -> Arc<Value> {
    // Parsed once for every start that reads it.
    derived(disk, "gemini json", path, || {
        let Ok(text) = disk
            .read(path)
            .map(|b| String::from_utf8(b.to_vec()).unwrap_or_default())
        else {
            return Value::Null;
        };
        let without_comments: String = text
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        serde_json::from_str(&without_comments).unwrap_or(Value::Null)
    })
}

/// The `context` settings (the workspace's keys replace the user's).
fn settings(user: &Value, workspace: &Value) -> Settings {
    let get = |key: &str| {
        workspace["context"]
            .get(key)
            .or_else(|| user["context"].get(key))
    };
    let mut names = Vec::new();
    let listed: Vec<&Value> = match get("fileName") {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(v) if !v.is_null() && v.as_str() != Some("") => vec![v],
        _ => Vec::new(),
    };
    for name in listed {
        let name = match name {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let name = js_trim(&name);
        if !name.is_empty() {
            let name = normalize_relative(name);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    if !names.iter().any(|n| n == "GEMINI.md") {
        names.push("GEMINI.md".to_string());
    }
    let markers = match get("memoryBoundaryMarkers") {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => vec![".git".to_string()],
    };
    let folder_trust = [workspace, user]
        .iter()
        .find_map(|s| s["security"]["folderTrust"]["enabled"].as_bool())
        .unwrap_or(true);
    Settings {
        names,
        markers,
        flat: get("importFormat").and_then(Value::as_str) == Some("flat"),
        include_directories: get("includeDirectories")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty()),
        folder_trust,
    }
}

/// Node's `path.normalize` of a relative name.
fn normalize_relative(name: &str) -> String {
    let absolute = name.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            p => parts.push(p),
        }
    }
    let body = parts.join("/");
    let trailing = if name.ends_with('/') && !body.is_empty() {
        "/"
    } else {
        ""
    };
    match (absolute, body.is_empty()) {
        (true, _) => format!("/{body}{trailing}"),
        (false, true) => ".".to_string(),
        (false, false) => format!("{body}{trailing}"),
    }
}

/// `access(path, R_OK)`: the current user may read it (a directory too).
fn readable(disk: &dyn Disk, path: &Path) -> bool {
    disk.readable(path)
}

/// `access(path, F_OK)`: it exists (links followed).
fn exists(disk: &dyn Disk, path: &Path) -> bool {
    disk.metadata(path).is_ok()
}

/// The nearest directory from `start` up holding one of `markers` (an
/// import's root, from the importing file's directory).
fn boundary(disk: &dyn Disk, start: &Path, markers: &[String]) -> Option<PathBuf> {
    let usable: Vec<&String> = markers
        .iter()
        .filter(|m| !m.starts_with('/') && !m.contains(".."))
        .collect();
    if markers.is_empty() {
        return None;
    }
    ancestors(start)
        .find(|dir| {
            let listing = disk.exact_listing(dir);
            usable
                .iter()
                .any(|m| !absent_below(listing.as_ref(), dir, m) && exists(disk, &dir.join(m)))
        })
        .map(Path::to_path_buf)
}

/// The paths in order, each file once (the first path to it wins).
fn by_identity(disk: &dyn Disk, paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut seen_paths = FxHashSet::default();
    let mut seen_files = FxHashSet::default();
    let mut out = Vec::new();
    for path in paths {
        if !seen_paths.insert(path.clone()) {
            continue;
        }
        match disk.metadata(&path) {
            Ok(meta) if !seen_files.insert((meta.dev(), meta.ino())) => {}
            _ => out.push(path),
        }
    }
    out
}

/// Whether a relative path joined to a directory stays below it.
fn stays_below(path: &str) -> bool {
    !path.starts_with('/') && path.split('/').all(|part| part != "..")
}

/// Whether every path [`private_memory`] would look at, for a project
/// registered as any of `ids` (or not registered), lies below
/// `~/.gemini/tmp` and that is not there: then nothing is found, with no
/// question but one (the unregistered name is a slug, which stays below).
fn only_below_missing_tmp<'a>(
    disk: &dyn Disk,
    gemini_dir: &Path,
    ids: impl IntoIterator<Item = &'a str>,
    names: &[String],
) -> bool {
    ids.into_iter().all(stays_below)
        && names.iter().all(|n| stays_below(n))
        && disk
            .metadata(&gemini_dir.join("tmp"))
            .is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
}

/// The private project memory: `~/.gemini/tmp/<project>/memory/MEMORY.md`,
/// else the context file names there.
fn private_memory(
    disk: &dyn Disk,
    gemini_dir: &Path,
    cwd: &Path,
    names: &[String],
) -> Vec<PathBuf> {
    let registry = read_json(disk, &gemini_dir.join("projects.json"));
    let registered = registry["projects"][cwd.to_string_lossy().as_ref()].as_str();
    if only_below_missing_tmp(disk, gemini_dir, registered, names) {
        return Vec::new();
    }
    let id = registered.map_or_else(|| slug(cwd), str::to_string);
    let dir = gemini_dir.join("tmp").join(id).join("memory");
    let index = dir.join("MEMORY.md");
    if readable(disk, &index) {
        return vec![index];
    }
    names
        .iter()
        .map(|n| normalize(&dir.join(n)))
        .filter(|p| readable(disk, p))
        .collect()
}

/// The directory name as Gemini CLI names a project it has not registered.
fn slug(cwd: &Path) -> String {
    let name = cwd
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    let out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "project".to_string()
    } else {
        out
    }
}

/// A context file's text with its imports processed (what became of each
/// import recorded in `imports`, as of `role`).
fn read_context_file(
    disk: &dyn Disk,
    path: &Path,
    settings: &Settings,
    role: Role,
    imports: &mut Vec<ContextFile>,
) -> io::Result<String> {
    let bytes = disk.read(path)?;
    let text = super::lossy(&bytes).into_owned();
    let base = path.parent().unwrap_or(Path::new("/"));
    let root = boundary(disk, base, &settings.markers).unwrap_or_else(|| base.to_path_buf());
    let processed = if settings.flat {
        flat(disk, &text, base, &root)
    } else {
        let mut found = Found {
            role,
            importer: path.to_path_buf(),
            files: imports,
        };
        tree(
            disk,
            &text,
            base,
            0,
            &FxHashSet::default(),
            &root,
            &mut found,
        )
    };
    Ok(processed)
}

/// An `@path` in `text`: its byte range and path.
pub(crate) struct Import<'a> {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) path: &'a str,
}

/// Gemini CLI's import scan: `@` at the start or after a space, tab or line
/// end, up to the next of those; the path starts with `.`, `/` or a letter
/// (Qwen Code, a fork, scans alike).
pub(crate) fn find_imports(text: &str) -> Vec<Import<'_>> {
    let bytes = text.as_bytes();
    let ws = |b: u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(found) = text[i..].find('@') {
        let at = i + found;
        if at > 0 && !ws(bytes[at - 1]) {
            i = at + 1;
            continue;
        }
        let mut j = at + 1;
        while j < bytes.len() && !ws(bytes[j]) {
            j += 1;
        }
        let path = &text[at + 1..j];
        if path
            .bytes()
            .next()
            .is_some_and(|b| b == b'.' || b == b'/' || b.is_ascii_alphabetic())
        {
            out.push(Import {
                start: at,
                end: j,
                path,
            });
        }
        i = (j + 1).min(text.len());
        if j >= bytes.len() {
            break;
        }
    }
    out
}

/// The byte ranges `/(`+)([\s\S]*?)\1/g` matches (a backreference, which
/// the `regex` crate does not do): at each backtick, the longest run that
/// recurs later, else a shorter one, else the next position.
fn code_regions(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
        let matched = (1..=run).rev().find_map(|n| {
            let ticks = &text[i..i + n];
            text[i + n..].find(ticks).map(|at| i + n + at + n)
        });
        match matched {
            Some(end) => {
                out.push((i, end));
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// What became of the imports of one context file (for the report).
struct Found<'a> {
    role: Role,
    /// The file whose text holds the import being looked at.
    importer: PathBuf,
    files: &'a mut Vec<ContextFile>,
}

impl Found<'_> {
    fn record(&mut self, path: PathBuf, bytes: Option<u64>, outcome: Outcome) {
        self.files.push(ContextFile {
            path,
            role: self.role,
            bytes,
            tokens: 0,
            outcome,
            parent: Some(self.importer.clone()),
        });
    }
}

/// Imports inlined (Gemini CLI's default "tree" format); `seen` holds the
/// files above this one in the chain.
fn tree(
    disk: &dyn Disk,
    text: &str,
    base: &Path,
    depth: usize,
    seen: &FxHashSet<PathBuf>,
    root: &Path,
    found: &mut Found<'_>,
) -> String {
    if depth >= MAX_DEPTH {
        // Sent as it is: its imports are not followed.
        let regions = code_regions(text);
        for import in find_imports(text) {
            if !regions
                .iter()
                .any(|(s, e)| import.start >= *s && import.start < *e)
            {
                found.record(
                    resolve(base, Path::new(import.path)),
                    None,
                    Outcome::Skipped(Skip::TooDeep),
                );
            }
        }
        return text.to_string();
    }
    let regions = code_regions(text);
    let mut out = String::new();
    let mut last = 0;
    for import in find_imports(text) {
        out.push_str(&text[last..import.start]);
        last = import.end;
        let ip = import.path;
        if regions
            .iter()
            .any(|(s, e)| import.start >= *s && import.start < *e)
        {
            out.push('@');
            out.push_str(ip);
            continue;
        }
        let full = resolve(base, Path::new(ip));
        if !valid_import(disk, ip, base, root) {
            out.push_str(&format!(
                "<!-- Import failed: {ip} - Path traversal attempt -->"
            ));
            found.record(full, None, Outcome::Skipped(Skip::Outside));
            continue;
        }
        if seen.contains(&full) {
            out.push_str(&format!("<!-- File already processed: {ip} -->"));
            found.record(full, None, Outcome::Skipped(Skip::Repeated));
            continue;
        }
        match super::js::read_file(disk, &full) {
            Ok(inner) => {
                let mut below = seen.clone();
                below.insert(full.clone());
                let dir = full.parent().unwrap_or(Path::new("/"));
                found.record(full.clone(), Some(inner.len() as u64), Outcome::Loaded);
                let importer = std::mem::replace(&mut found.importer, full.clone());
                let inner = tree(disk, &inner, dir, depth + 1, &below, root, found);
                found.importer = importer;
                out.push_str(&format!(
                    "<!-- Imported from: {ip} -->\n{inner}\n<!-- End of import from: {ip} -->"
                ));
            }
            Err(message) => {
                out.push_str(&format!("<!-- Import failed: {ip} - {message} -->"));
                found.record(full, None, Outcome::Skipped(Skip::NotFound));
            }
        }
    }
    out.push_str(&text[last..]);
    out
}

/// Imports listed as files of their own ("flat" format).
fn flat(disk: &dyn Disk, text: &str, base: &Path, root: &Path) -> String {
    fn visit(
        disk: &dyn Disk,
        text: String,
        base: &Path,
        file: PathBuf,
        root: &Path,
        seen: &mut FxHashSet<PathBuf>,
        files: &mut Vec<(PathBuf, String)>,
    ) {
        if !seen.insert(file.clone()) {
            return;
        }
        let regions = code_regions(&text);
        let imports: Vec<(usize, String)> = find_imports(&text)
            .iter()
            .map(|i| (i.start, i.path.to_string()))
            .collect();
        files.push((file, text.clone()));
        for (start, ip) in imports.iter().rev() {
            if regions.iter().any(|(s, e)| start >= s && start < e)
                || !valid_import(disk, ip, base, root)
            {
                continue;
            }
            let full = resolve(base, Path::new(ip));
            if seen.contains(&full) {
                continue;
            }
            if let Ok(inner) = super::js::read_file(disk, &full) {
                let dir = full.parent().unwrap_or(Path::new("/")).to_path_buf();
                visit(disk, inner, &dir, full, root, seen, files);
            }
        }
    }
    let mut files = Vec::new();
    visit(
        disk,
        text.to_string(),
        base,
        base.to_path_buf(),
        root,
        &mut FxHashSet::default(),
        &mut files,
    );
    files
        .iter()
        .map(|(p, t)| {
            let p = p.to_string_lossy();
            format!(
                "--- File: {p} ---\n{}\n--- End of File: {p} ---",
                js_trim(t)
            )
        })
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Whether an import stays inside `root` once links are resolved.
fn valid_import(disk: &dyn Disk, ip: &str, base: &Path, root: &Path) -> bool {
    if ["file://", "http://", "https://"]
        .iter()
        .any(|p| ip.starts_with(p))
    {
        return false;
    }
    let Some(resolved) = real_path(
        disk,
        &resolve(base, Path::new(&decode_uri(ip))),
        &mut FxHashSet::default(),
    ) else {
        return false;
    };
    let Some(root) = real_path(disk, root, &mut FxHashSet::default()) else {
        return false;
    };
    resolved.starts_with(&root)
}

/// `decodeURIComponent`, or the text unchanged where that would throw.
fn decode_uri(s: &str) -> String {
    if !s.contains('%') {
        return s.to_string();
    }
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return s.to_string(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Gemini CLI's `robustRealpath`: the real path, or for a path that does
/// not exist, its link followed or its parent's real path and its name;
/// `None` where that fails (a loop).
fn real_path(disk: &dyn Disk, path: &Path, visited: &mut FxHashSet<PathBuf>) -> Option<PathBuf> {
    if !visited.insert(path.to_path_buf()) {
        return None;
    }
    match disk.canonicalize(path) {
        Ok(real) => Some(real),
        Err(e) if matches!(e.raw_os_error(), Some(2 | 21 | 36 | 20)) => {
            if let Ok(meta) = disk.symlink_metadata(path) {
                if meta.file_type().is_symlink() {
                    let target = disk.read_link(path).ok()?;
                    let dir = path.parent().unwrap_or(Path::new("/"));
                    return real_path(disk, &resolve(dir, &target), visited);
                }
            }
            let parent = path.parent()?;
            Some(real_path(disk, parent, visited)?.join(path.file_name()?))
        }
        Err(_) => None,
    }
}

/// Node's `path.resolve(base, path)`.
fn resolve(base: &Path, path: &Path) -> PathBuf {
    normalize(&base.join(path))
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::private_memory;
    use crate::disk::{Live, Remembered};

    fn write(path: &Path, text: &str) {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }

    /// Without `~/.gemini/tmp` there is no project memory, unless a name
    /// or a registered project leads out of it: those are still found.
    #[test]
    fn private_memory_outside_a_missing_tmp_is_still_found() {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let gemini = base.join("home/.gemini");
        let cwd = base.join("work/proj");
        fs::create_dir_all(&cwd).unwrap();
        fs::create_dir_all(&gemini).unwrap();
        let names = |list: &[&str]| -> Vec<String> { list.iter().map(|s| s.to_string()).collect() };
        let found = |names: &[String]| {
            let disk = Remembered::over(&Live);
            private_memory(&disk, &gemini, &cwd, names)
        };
        assert!(found(&names(&["GEMINI.md"])).is_empty());
        // A name that climbs out of the memory directory.
        write(&gemini.join("escape.md"), "E");
        assert_eq!(
            found(&names(&["GEMINI.md", "../../../escape.md"])),
            vec![gemini.join("escape.md")]
        );
        // A registered project named by an absolute path.
        let elsewhere = base.join("elsewhere");
        write(&elsewhere.join("memory/MEMORY.md"), "M");
        let registry = serde_json::json!({ "projects": { cwd.to_str().unwrap(): elsewhere.to_str().unwrap() } });
        write(&gemini.join("projects.json"), &registry.to_string());
        assert_eq!(
            found(&names(&["GEMINI.md"])),
            vec![elsewhere.join("memory/MEMORY.md")]
        );
        // With `tmp`, the project's own memory.
        fs::remove_file(gemini.join("projects.json")).unwrap();
        write(&gemini.join("tmp/proj/memory/GEMINI.md"), "G");
        assert_eq!(
            found(&names(&["GEMINI.md"])),
            vec![gemini.join("tmp/proj/memory/GEMINI.md")]
        );
    }
}
