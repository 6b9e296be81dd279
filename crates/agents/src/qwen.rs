//! Qwen Code (`VERSION`, `qwen-code`): `QWEN.md` and `AGENTS.md` from its
//! own directory and from the working directory up to one above the
//! project's root, its output-language rule, `QWEN.local.md` and the rules
//! of `.qwen/rules`, at the end of its system prompt.
//!
//! The rules, read in its bundled source (`loadServerHierarchicalMemory`,
//! `getMemoryFilePathsInternalForEachDir`, `processImports`, `loadRules`,
//! `initializeLlmOutputLanguage`) and proven by the differential in
//! `tests/agents/context-qwen.test.mjs`:
//!
//! * **Its directory** is `$QWEN_HOME`, else `~/.qwen`.
//! * **The context files**, for each name (`QWEN.md`, then `AGENTS.md`;
//!   the settings' `context.fileName` replaces them): the one in its
//!   directory; then, from the farthest to the working directory, the one
//!   of each directory from the working directory up to the directory
//!   above the project's root (the nearest directory with a `.git`
//!   directory or file; without one, up to the directory above the home),
//!   not `/`, and stopping below its own directory. Started in the home
//!   itself, the home's file instead of that walk. A file counts when it
//!   can be read (a directory counts, and is left out when read).
//! * **Then** its output-language rule (`.qwen/output-language.md` of the
//!   working directory, else the one in its directory, which Qwen Code
//!   writes on start: see [`output_language`]), then the project root's
//!   `.qwen/QWEN.local.md`. A file reached twice (links resolved) is read
//!   once.
//! * **Read** as UTF-8 with replacement, `@path` imports inlined (Gemini
//!   CLI's tree format and scan, outside marked's code; inside the
//!   project's root of the file's directory; five deep; a missing file
//!   left as `@path`), trimmed; empty ones are left out. Each is
//!   `--- Context from: <path from the working directory> ---`, its text,
//!   `--- End of Context from: <path> ---`, a blank line apart.
//! * **The rules**: `.md` files at any depth of `rules` in its directory,
//!   then of the project root's `.qwen/rules` (without a root, the working
//!   directory's), each set sorted; links are not followed. One whose
//!   front matter names `paths:` loads only when a matching file is read;
//!   the others load at start, front matter and HTML comments stripped,
//!   trimmed, as `--- Rule from: <path from the root> ---` blocks.
//! * **The text**: `\n\n---\n\n` and the whole, trimmed, after the system
//!   prompt's instructions.
//!
//! Not modelled (noted when the settings hold them): folder trust
//! (`security.folderTrust`), `context.includeDirectories`,
//! `context.importFormat`, rule excludes, a `general.outputLanguage`; nor
//! extensions' context files and rules.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use promptinclude_tokenize::Split;
use serde_json::Value;
use yaml_rust2::{Yaml, YamlLoader};

use super::disk::{absent_below, derived, joined, Disk, EntryType};
use super::engine::{Layered, Likeness};
use super::js::{relative, resolve as normalize, trim as js_trim, utf16_order};
use super::{
    Agent, AgentContext, ContextError, ContextFile, Outcome, PartWriter, Place, Role, Skip, Writing,
};

/// The Qwen Code version this model reproduces (`tests/agents/package.json`).
pub(crate) const VERSION: &str = "0.24.4";

/// The context file names unless the settings name others.
const NAMES: [&str; 2] = ["QWEN.md", "AGENTS.md"];

/// How deep imports are followed.
const MAX_DEPTH: usize = 5;

/// How Qwen Code is started.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The working directory (named by its physical path).
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// `$QWEN_HOME`, when set.
    pub qwen_home: Option<&'a OsStr>,
}

/// What Qwen Code loads when started as `start` says, looking at the files
/// through `disk`, its text written as `writing` says.
pub(crate) fn context_writing(
    start: &Start<'_>,
    disk: &dyn Disk,
    writing: Writing,
) -> Result<AgentContext, ContextError> {
    let cwd = super::physical_cwd(disk, start.cwd)?;
    crate::engine::context(&Model::of(start, &cwd, disk), cwd, disk, writing)
}

/// Qwen Code in the registry: `$QWEN_HOME` read from the start's
/// environment.
pub(crate) struct Registered;

impl crate::Modelled for Registered {
    fn context(
        &self,
        start: &crate::Start<'_>,
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let qwen_home = variable(start);
        let start = Start::of(start, qwen_home.as_deref());
        context_writing(&start, disk, writing)
    }

    fn contexts(
        &self,
        tree: &crate::Tree,
        start: &crate::Start<'_>,
        disk: &crate::disk::Remembered<'_>,
    ) -> Result<Vec<crate::Shared>, ContextError> {
        let qwen_home = variable(start);
        let start = Start::of(start, qwen_home.as_deref());
        // Workspace settings, or a `$QWEN_HOME` relative to the start, make
        // each start's model its own; else one model runs every start.
        let relative_home = qwen_home.as_deref().is_some_and(|h| {
            !Path::new(h).is_absolute() && !h.as_encoded_bytes().starts_with(b"~")
        });
        let workspace_settings = tree.dirs.iter().any(|dir| {
            !absent_below(disk.exact_listing(dir).as_ref(), dir, ".qwen")
                && disk.metadata(&dir.join(".qwen/settings.json")).is_ok()
        });
        if relative_home || workspace_settings {
            return crate::engine::each_own(tree, disk, |dir| {
                context_writing(&Start { cwd: dir, ..start }, disk, Writing::ToMeasure)
            });
        }
        let model = Model::of(&start, &tree.dirs[0], disk);
        crate::engine::contexts(&model, tree, disk)
    }
}

/// `$QWEN_HOME`, when not empty.
fn variable(start: &crate::Start<'_>) -> Option<OsString> {
    (start.env)("QWEN_HOME").filter(|v| !v.is_empty())
}

impl<'a> Start<'a> {
    fn of(start: &crate::Start<'a>, qwen_home: Option<&'a OsStr>) -> Self {
        Start {
            cwd: start.cwd,
            home: start.home,
            qwen_home,
        }
    }
}

/// Qwen Code as the engine runs it, for one working directory.
pub(crate) struct Model {
    /// `$HOME`, as given.
    home: PathBuf,
    /// Its own directory.
    dir: PathBuf,
    /// The context file names, in order.
    names: Vec<String>,
    /// What the engine screens directories by.
    screen: Vec<String>,
    /// What the settings hold that the model does not follow.
    notes: Vec<String>,
}

impl Model {
    fn of(start: &Start<'_>, cwd: &Path, disk: &dyn Disk) -> Model {
        let dir = match start.qwen_home {
            Some(home) => qwen_home(start.home, cwd, home),
            None => start.home.join(".qwen"),
        };
        let user = settings(disk, &dir.join("settings.json"));
        let workspace = settings(disk, &cwd.join(".qwen/settings.json"));
        let file_name = |s: &Value| s.pointer("/context/fileName").cloned();
        let names = match file_name(&workspace).or_else(|| file_name(&user)) {
            Some(Value::Array(items)) if !items.is_empty() => items
                .iter()
                .map(|i| i.as_str().unwrap_or_default().trim().to_string())
                .collect(),
            Some(Value::String(s)) if !s.trim().is_empty() => vec![s.trim().to_string()],
            _ => NAMES.map(String::from).to_vec(),
        };
        let mut notes = Vec::new();
        for (key, what) in [
            ("/security/folderTrust/enabled", "folder trust"),
            ("/context/includeDirectories", "context.includeDirectories"),
            ("/context/importFormat", "context.importFormat"),
            ("/context/ruleExcludes", "rule excludes"),
            ("/general/outputLanguage", "general.outputLanguage"),
        ] {
            if user.pointer(key).is_some() || workspace.pointer(key).is_some() {
                notes.push(format!(
                    "its settings set {what}, which this model does not follow"
                ));
            }
        }
        let screen = names
            .iter()
            .cloned()
            .chain([".git".to_string(), ".qwen".to_string()])
            .collect();
        Model {
            home: start.home.to_path_buf(),
            dir,
            names,
            screen,
            notes,
        }
    }
}

/// `$QWEN_HOME` as Qwen Code resolves it (`~` and `~/` from the home).
fn qwen_home(home: &Path, cwd: &Path, value: &OsStr) -> PathBuf {
    let bytes = value.as_encoded_bytes();
    let path = match bytes {
        b"~" => home.to_path_buf(),
        _ if bytes.starts_with(b"~/") => home.join(OsStr::new(&value.to_string_lossy()[2..])),
        _ => cwd.join(value),
    };
    normalize(&path)
}

/// A settings file as JSON (nothing when missing or broken).
fn settings(disk: &dyn Disk, path: &Path) -> Value {
    disk.read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null)
}

/// What one directory gives Qwen Code.
pub(crate) struct Found {
    /// Each context file name that can be read here, as a path.
    readable: Vec<Option<PathBuf>>,
    /// Whether it has a `.git` directory or file (not a link).
    git: bool,
    /// Whether it has a `.qwen` (a start there may read its
    /// output-language rule or rules).
    qwen: bool,
}

impl Layered for Model {
    type Found = Found;
    type Above = Option<PathBuf>;

    fn names(&self) -> Option<&[String]> {
        Some(&self.screen)
    }

    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> Found {
        let readable = self
            .names
            .iter()
            .map(|name| Some(joined(dir, name)).filter(|p| disk.readable(p)))
            .collect();
        let git = disk
            .symlink_metadata(&joined(dir, ".git"))
            .is_ok_and(|m| m.is_dir() || m.is_file());
        let qwen = disk.metadata(&joined(dir, ".qwen")).is_ok();
        Found {
            readable,
            git,
            qwen,
        }
    }

    fn adds_nothing(&self, found: &Found) -> bool {
        !found.git && !found.qwen && found.readable.iter().all(Option::is_none)
    }

    /// The project root of the start above.
    fn above(&self, _: &Path, context: &AgentContext, _: &dyn Disk) -> Option<PathBuf> {
        context.root.clone()
    }

    /// A start that adds nothing loads the files the start above loads
    /// (their paths shown from it: a chain's text is its first
    /// directory's), unless the walk ends there or it is the home or in
    /// Qwen Code's own directory.
    fn likeness(
        &self,
        root: &Option<PathBuf>,
        cwd: &Path,
        _: Option<&crate::disk::Listing>,
        _: &dyn Disk,
    ) -> Likeness {
        let stop = match root {
            Some(root) => root.parent(),
            None => self.home.parent(),
        };
        let own = cwd == self.home
            || Some(cwd) == stop
            || cwd.starts_with(&self.dir)
            || cwd.starts_with(self.home.join(".qwen"));
        match own {
            true => Likeness::Own,
            false => Likeness::AddsNothing,
        }
    }

    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &Found)],
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let root = up.iter().find(|(_, f)| f.git).map(|(d, _)| d.to_path_buf());
        let effective_root = root.clone().unwrap_or_else(|| cwd.clone());

        // **The context files**.
        let mut paths: Vec<(PathBuf, Role)> = Vec::new();
        let add = |path: PathBuf, role: Role, paths: &mut Vec<(PathBuf, Role)>| {
            if !paths.iter().any(|(p, _)| *p == path) {
                paths.push((path, role));
            }
        };
        let stop = match &root {
            Some(root) => root.parent().unwrap_or(root).to_path_buf(),
            None => self.home.parent().unwrap_or(&self.home).to_path_buf(),
        };
        let home_qwen = self.home.join(".qwen");
        for (n, name) in self.names.iter().enumerate() {
            let global = joined(&self.dir, name);
            if disk.readable(&global) {
                add(global.clone(), Role::Global, &mut paths);
            }
            if cwd == self.home {
                let own = joined(&self.home, name);
                if own != global && disk.readable(&own) {
                    add(own, Role::Global, &mut paths);
                }
                continue;
            }
            let mut upward = Vec::new();
            for (dir, found) in up {
                if dir.parent().is_none() || !walked(&cwd, dir, &stop, &self.dir, &home_qwen) {
                    continue;
                }
                if let Some(path) = &found.readable[n] {
                    if *path != global {
                        upward.push(path.clone());
                    }
                }
            }
            for path in upward.into_iter().rev() {
                add(path, Role::Project, &mut paths);
            }
        }
        if let Some((path, role)) = output_language(disk, &cwd, &self.dir) {
            add(path, role, &mut paths);
        }
        if let Some(root) = &root {
            let local = root.join(".qwen/QWEN.local.md");
            if disk.readable(&local) {
                add(local, Role::Project, &mut paths);
            }
        }
        let mut identities = Vec::new();
        paths.retain(|(path, _)| {
            let identity = disk.canonicalize(path).unwrap_or_else(|_| path.clone());
            let first = !identities.contains(&identity);
            identities.push(identity);
            first
        });

        let mut files = Vec::new();
        let mut notes = self.notes.clone();
        let mut blocks: Vec<(String, Arc<str>, Split)> = Vec::new();
        let own_rule = self.dir.join("output-language.md");
        for (path, role) in paths {
            let read = read_context(disk, &path, role, path == own_rule);
            if read.written {
                notes.push(format!(
                    "Qwen Code writes its own rule into {} on start (for the `auto` output language): the text shown is that rule",
                    path.display()
                ));
            }
            match &read.text {
                Err(why) => files.push(file(
                    path,
                    role,
                    None,
                    0,
                    Outcome::Skipped(Skip::Unreadable(why.clone())),
                )),
                Ok(None) => files.push(file(
                    path,
                    role,
                    read.bytes,
                    0,
                    Outcome::Skipped(Skip::Blank),
                )),
                Ok(Some((text, tokens))) => {
                    files.push(file(
                        path.clone(),
                        role,
                        read.bytes,
                        tokens.tokens,
                        Outcome::Loaded,
                    ));
                    files.extend(read.imports.iter().cloned());
                    let shown = strip_control(&relative(&cwd, &path));
                    blocks.push((shown, Arc::clone(text), *tokens));
                }
            }
        }

        // **The rules**.
        let mut rules: Vec<(String, Arc<str>, Split)> = Vec::new();
        let global_rules = self.dir.join("rules");
        let project_rules = effective_root.join(".qwen/rules");
        let mut sets = vec![(global_rules.clone(), Role::Global)];
        if normalize(&project_rules) != normalize(&global_rules) {
            sets.push((project_rules, Role::Project));
        }
        for (set, role) in sets {
            for rule in read_rules(disk, &set).iter() {
                let (tokens, outcome) = match &rule.kind {
                    Rule::Scoped => (0, Outcome::Skipped(Skip::ScopedOut)),
                    Rule::Empty => (0, Outcome::Skipped(Skip::Blank)),
                    Rule::AtStart(content, tokens) => {
                        let shown = relative(&effective_root, &rule.path);
                        rules.push((shown, Arc::clone(content), *tokens));
                        (tokens.tokens, Outcome::Loaded)
                    }
                };
                files.push(file(
                    rule.path.clone(),
                    role,
                    Some(rule.bytes),
                    tokens,
                    outcome,
                ));
            }
        }

        // **The text**.
        let part = (!blocks.is_empty() || !rules.is_empty()).then(|| {
            let mut part = PartWriter::new(writing, 0);
            part.push("\n\n---\n\n");
            let all = blocks
                .iter()
                .map(|b| (b, "Context"))
                .chain(rules.iter().map(|r| (r, "Rule")));
            for (i, ((shown, text, tokens), kind)) in all.enumerate() {
                if i > 0 {
                    part.push("\n\n");
                }
                for piece in ["--- ", kind, " from: ", shown, " ---\n"] {
                    part.push(piece);
                }
                part.push_counted(text, *tokens);
                for piece in ["\n--- End of ", kind, " from: ", shown, " ---"] {
                    part.push(piece);
                }
            }
            part.finish(Place::SystemPrompt)
        });
        Ok(AgentContext {
            agent: Agent::QwenCode,
            cwd,
            root,
            files,
            limit: None,
            parts: part.into_iter().collect(),
            notes,
        })
    }
}

/// Whether the upward walk from `cwd` reaches `dir` (an ancestor of it or
/// itself): at or below `stop`, and below Qwen Code's own directories,
/// where the walk stops.
fn walked(cwd: &Path, dir: &Path, stop: &Path, own: &Path, home_qwen: &Path) -> bool {
    let below_stop = dir.starts_with(stop) || !cwd.starts_with(stop);
    let before_own = super::disk::ancestors(cwd)
        .take_while(|d| *d != dir)
        .chain(std::iter::once(dir))
        .all(|d| d != own && d != home_qwen);
    below_stop && before_own
}

/// The nearest directory from `dir` up with a `.git` directory or file.
fn nearest_git(disk: &dyn Disk, dir: &Path) -> Option<PathBuf> {
    super::disk::ancestors(dir)
        .find(|d| {
            disk.symlink_metadata(&joined(d, ".git"))
                .is_ok_and(|m| m.is_dir() || m.is_file())
        })
        .map(Path::to_path_buf)
}

fn file(
    path: PathBuf,
    role: Role,
    bytes: Option<u64>,
    tokens: usize,
    outcome: Outcome,
) -> ContextFile {
    ContextFile {
        path,
        role,
        bytes,
        tokens,
        outcome,
        parent: None,
    }
}

/// A path as Qwen Code shows it: control characters removed.
fn strip_control(shown: &str) -> String {
    shown
        .chars()
        .filter(|c| !matches!(*c as u32, 0..=0x1f | 0x7f..=0x9f))
        .collect()
}

/// The output-language rule Qwen Code loads started in `cwd`: the working
/// directory's `.qwen/output-language.md` when it exists, else the one in
/// its directory (which it writes on start when missing).
fn output_language(disk: &dyn Disk, cwd: &Path, dir: &Path) -> Option<(PathBuf, Role)> {
    let project = cwd.join(".qwen/output-language.md");
    if disk.metadata(&project).is_ok() {
        return Some((project, Role::Project));
    }
    Some((dir.join("output-language.md"), Role::Global))
}

/// What Qwen Code's own output-language rule holds once it has started
/// (the `auto` setting): a file naming a language (its marker, or an older
/// heading) is kept, unless it is one Qwen Code wrote for a fixed language;
/// any other, or none, becomes the text for `auto` (`true`: written on
/// start). `None`: it cannot be read.
fn global_output_language(disk: &dyn Disk, path: &Path) -> Option<(String, bool)> {
    let current = match disk.metadata(path) {
        Err(_) => None,
        Ok(meta) if meta.is_dir() => return None,
        Ok(_) => Some(super::lossy(&disk.read(path).ok()?).into_owned()),
    };
    let kept = current.filter(|text| match language_of(text) {
        None => false,
        Some(language) => {
            language.eq_ignore_ascii_case("auto") || !generated_fixed(text, &language)
        }
    });
    Some(match kept {
        Some(text) => (text, false),
        None => (AUTO_LANGUAGE.to_string(), true),
    })
}

/// The language an output-language rule names.
fn language_of(text: &str) -> Option<String> {
    const MARKER: &str = "qwen-code:llm-output-language:";
    let lower = text.to_ascii_lowercase();
    let mut from = 0;
    while let Some(open) = lower[from..].find("<!--").map(|i| from + i) {
        let rest = &lower[open + 4..];
        let after = rest.trim_start_matches(|c: char| crate::js::is_space(c));
        if let Some(value) = after.strip_prefix(MARKER) {
            let start = text.len() - value.len();
            if let Some(close) = text[start..].find("-->") {
                let language = js_trim(&text[start..start + close]);
                if !language.is_empty() {
                    return Some(language.to_string());
                }
            }
            return None;
        }
        from = open + 4;
    }
    for line in text.split('\n') {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if !line.starts_with('#') {
            continue;
        }
        let Some(at) = line.find("CRITICAL:") else {
            continue;
        };
        let rest = js_trim(&line[at + "CRITICAL:".len()..]);
        if let Some(end) = rest.find(" Output Language Rule") {
            let language = js_trim(&rest[..end]);
            if !language.is_empty() {
                return Some(language.to_string());
            }
        }
    }
    None
}

/// Whether `text` is the rule Qwen Code writes for the fixed `language`.
fn generated_fixed(text: &str, language: &str) -> bool {
    let text = text.replace("\r\n", "\n");
    let headings: Vec<&str> = text
        .split('\n')
        .filter(|l| {
            let hashes = l.len() - l.trim_start_matches('#').len();
            (1..=2).contains(&hashes)
                && l[hashes..].starts_with(|c: char| crate::js::is_space(c))
                && !js_trim(&l[hashes..]).is_empty()
        })
        .collect();
    let marker_language: String = language
        .replace(['\r', '\n'], " ")
        .replace("--!>", "")
        .replace("-->", "")
        .replace("--", "");
    text.contains(&format!(
        "<!-- qwen-code:llm-output-language: {marker_language} -->"
    )) && headings.len() == 5
        && headings[0] == format!("# Output language preference: {language}")
        && [
            "## Rule",
            "## Exception",
            "## Keep technical artifacts unchanged",
            "## Tool / system outputs",
        ]
        .iter()
        .all(|h| headings.contains(h))
        && text.contains(&format!("**{language}**"))
        && text.contains("You MUST always respond")
}

/// The rule Qwen Code writes for the `auto` output language.
const AUTO_LANGUAGE: &str = "# Output language preference: auto
<!-- qwen-code:llm-output-language: auto -->

## Rule
Respond in the same language as the user's input.

## Exception
If the user **explicitly** requests a response in a specific language (e.g., \"please reply in English\"), switch to the user's requested language for the remainder of the conversation.

## Mixed-language input
If the user mixes languages, use the language that best matches the user's main request.

## Keep technical artifacts unchanged
Do **not** translate or rewrite:
- Code blocks, CLI commands, file paths, stack traces, logs, JSON keys, identifiers
- Exact quoted text from the user (keep quotes verbatim)

## Tool / system outputs
Raw tool/system outputs may contain fixed-format English. Preserve them verbatim, and if needed, add a short explanation in the user's language below.
";

/// The `.md` files at any depth below `dir`, as a directory listing's
/// entry types tell (links are neither files nor directories).
fn collect_md(disk: &dyn Disk, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(listing) = disk.read_dir(dir) else {
        return;
    };
    for (name, kind) in listing.iter() {
        let path = joined(dir, name);
        match kind {
            EntryType::Dir => collect_md(disk, &path, out),
            EntryType::File if name.as_encoded_bytes().ends_with(b".md") => out.push(path),
            _ => {}
        }
    }
}

/// What a rule file is to Qwen Code.
enum Rule {
    /// Its front matter names `paths:`: loaded when a matching file is read.
    Scoped,
    /// Nothing is left of it.
    Empty,
    /// Loaded at start, as this text (of these tokens).
    AtStart(Arc<str>, Split),
}

/// A rule file as read.
struct RuleFile {
    path: PathBuf,
    bytes: u64,
    kind: Rule,
}

/// The rules of the directory `dir`, in order: found once for all the
/// starts that read them.
fn read_rules(disk: &dyn Disk, dir: &Path) -> Arc<Vec<RuleFile>> {
    derived(disk, "qwen-code rules", dir, || {
        let mut found = Vec::new();
        collect_md(disk, dir, &mut found);
        found.sort_by(|a, b| utf16_order(a, b));
        found
            .into_iter()
            .filter_map(|path| {
                let bytes = disk.read(&path).ok()?;
                let kind = match parse_rule(&super::lossy(&bytes)) {
                    Some(content) if content.is_empty() => Rule::Empty,
                    Some(content) => {
                        let tokens = disk.count_split(&content);
                        Rule::AtStart(Arc::from(content), tokens)
                    }
                    None => Rule::Scoped,
                };
                Some(RuleFile {
                    path,
                    bytes: bytes.len() as u64,
                    kind,
                })
            })
            .collect()
    })
}

/// A context file as Qwen Code reads it, the same from every start.
struct Read {
    /// Its text with its imports inlined, trimmed, and its tokens (`None`:
    /// nothing is left); else Node's message for why it cannot be read.
    text: Result<Option<(Arc<str>, Split)>, String>,
    bytes: Option<u64>,
    /// What became of its imports.
    imports: Vec<ContextFile>,
    /// Its text is the rule Qwen Code writes on start.
    written: bool,
}

/// The file at `path` (of `role`; `own_rule`: Qwen Code's own
/// output-language rule) as read: found once for all the starts that read
/// it.
fn read_context(disk: &dyn Disk, path: &Path, role: Role, own_rule: bool) -> Arc<Read> {
    let what = match (own_rule, role) {
        (true, _) => "qwen-code output-language rule",
        (false, Role::Global) => "qwen-code user file",
        (false, _) => "qwen-code project file",
    };
    derived(disk, what, path, || {
        let (text, written) = match own_rule {
            true => match global_output_language(disk, path) {
                Some((text, written)) => (Ok(text), written),
                None => (
                    Err(super::js::read_file(disk, path).err().unwrap_or_default()),
                    false,
                ),
            },
            false => (super::js::read_file(disk, path), false),
        };
        let bytes = disk.metadata(path).map(|m| m.len()).ok();
        let text = match text {
            Ok(text) => text,
            Err(why) => {
                return Read {
                    text: Err(why),
                    bytes: None,
                    imports: Vec::new(),
                    written,
                }
            }
        };
        let base = path.parent().unwrap_or(Path::new("/"));
        let import_root = nearest_git(disk, base).unwrap_or_else(|| base.to_path_buf());
        let mut imports = Vec::new();
        let mut imported = Imported {
            disk,
            root: &import_root,
            role,
            importer: path.to_path_buf(),
            files: &mut imports,
        };
        let processed = imported.process(&text, base, &[normalize(path)], 0);
        let trimmed = js_trim(&processed);
        let text = (!trimmed.is_empty()).then(|| (Arc::from(trimmed), disk.count_split(trimmed)));
        Read {
            text: Ok(text),
            bytes,
            imports,
            written,
        }
    })
}

/// A rule file's text read as Qwen Code reads it (`parseRuleFile`): what
/// it loads at start (empty: nothing), or `None` when `paths:` makes it
/// wait for a matching file.
fn parse_rule(raw: &str) -> Option<String> {
    let text = raw.strip_prefix('\u{feff}').unwrap_or(raw);
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let (scoped, body) = match split_front_matter(&text) {
        Some((yaml, body)) => (scoped(yaml), body),
        None => (false, text.as_str()),
    };
    let content = js_trim(&strip_html_comments(body)).to_string();
    match scoped && !content.is_empty() {
        true => None,
        false => Some(content),
    }
}

/// `/^---\n([\s\S]*?)\n---(?:\n|$)([\s\S]*)$/`: the front matter and the body.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text.strip_prefix("---\n")?;
    let mut from = 0;
    while let Some(at) = rest[from..].find("\n---").map(|i| from + i) {
        let after = &rest[at + 4..];
        if after.is_empty() {
            return Some((&rest[..at], ""));
        }
        if let Some(body) = after.strip_prefix('\n') {
            return Some((&rest[..at], body));
        }
        from = at + 1;
    }
    None
}

/// Whether front matter names paths a rule is limited to: a non-empty
/// `paths` string, or a list with an item that is not empty as a string;
/// YAML first, else Qwen Code's line by line reading.
fn scoped(yaml: &str) -> bool {
    match YamlLoader::load_from_str(yaml)
        .ok()
        .and_then(|d| d.into_iter().next())
    {
        Some(Yaml::Hash(map)) => match map.get(&Yaml::String("paths".to_string())) {
            Some(Yaml::String(s)) => !s.is_empty(),
            Some(Yaml::Array(items)) => items.iter().any(|i| !js_string(i).is_empty()),
            _ => false,
        },
        _ => scoped_simply(yaml),
    }
}

/// `String(value)` of a YAML value in a list (a null is dropped first).
fn js_string(value: &Yaml) -> String {
    match value {
        Yaml::Null | Yaml::BadValue => String::new(),
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Array(items) => items.iter().map(js_string).collect::<Vec<_>>().join(","),
        _ => "[object Object]".to_string(),
    }
}

/// A value of Qwen Code's simple front matter reader (`parseSimple`).
enum Simple {
    /// A string (`parseValue`'s), truthy when not empty.
    Text(String),
    /// A list of values (`null`s dropped).
    List(Vec<Simple>),
    /// A number, a boolean or a map.
    Other,
}

/// Whether Qwen Code's simple reader (for front matter that is not YAML)
/// finds `paths` to limit the rule to: a port of `parseSimple`, whose
/// last `paths` wins.
fn scoped_simply(yaml: &str) -> bool {
    let lines: Vec<&str> = yaml
        .split('\n')
        .filter(|l| !js_trim(l).is_empty() && !js_trim(l).starts_with('#'))
        .collect();
    let mut paths: Option<Simple> = None;
    // `None`: `null`, dropped.
    let mut set = |key: &str, value: Option<Simple>| {
        if key == "paths" {
            paths = value;
        }
    };
    let (mut current_key, mut in_array, mut in_object) = (String::new(), false, false);
    let (mut array, mut object_key): (Vec<Simple>, String) = (Vec::new(), String::new());
    for (i, line) in lines.iter().enumerate() {
        if let Some(item) = line.strip_prefix("  - ") {
            if !in_array {
                in_array = true;
                array = Vec::new();
            }
            array.extend(simple_value(js_trim(item)));
            continue;
        }
        if in_array {
            set(&current_key, Some(Simple::List(std::mem::take(&mut array))));
            in_array = false;
            current_key.clear();
        }
        if line.starts_with("  ") && in_object {
            continue;
        }
        if in_object {
            set(&object_key, Some(Simple::Other));
            in_object = false;
            object_key.clear();
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = js_trim(value);
        if value.is_empty() {
            current_key = js_trim(key).to_string();
            if let Some(next) = lines.get(i + 1) {
                if next.starts_with("  - ") {
                    continue;
                } else if next.starts_with("  ") {
                    in_object = true;
                    object_key = std::mem::take(&mut current_key);
                    continue;
                }
            }
        } else {
            set(js_trim(key), simple_value(value));
        }
    }
    if in_array {
        set(&current_key, Some(Simple::List(array)));
    }
    if in_object {
        set(&object_key, Some(Simple::Other));
    }
    match paths {
        Some(Simple::Text(s)) => !s.is_empty(),
        Some(Simple::List(items)) => items.iter().any(|i| match i {
            Simple::Text(s) => !s.is_empty(),
            _ => true,
        }),
        _ => false,
    }
}

/// `parseValue`: `None` for `null`.
fn simple_value(value: &str) -> Option<Simple> {
    Some(match value {
        "null" => return None,
        "true" | "false" => Simple::Other,
        _ if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') => {
            let inner = &value[1..value.len() - 1];
            Simple::Text(inner.replace("\\\"", "\"").replace("\\\\", "\\"))
        }
        _ if !value.is_empty() && value.parse::<f64>().is_ok_and(f64::is_finite) => Simple::Other,
        _ => Simple::Text(value.to_string()),
    })
}

/// `stripHtmlComments`: `<!--…-->` removed until none is left, then any
/// `<!--` left.
fn strip_html_comments(text: &str) -> String {
    let mut out = text.to_string();
    loop {
        let mut next = String::with_capacity(out.len());
        let mut rest = out.as_str();
        while let Some(open) = rest.find("<!--") {
            match rest[open + 4..].find("-->") {
                Some(close) => {
                    next.push_str(&rest[..open]);
                    rest = &rest[open + 4 + close + 3..];
                }
                None => break,
            }
        }
        next.push_str(rest);
        if next == out {
            return out.replace("<!--", "");
        }
        out = next;
    }
}

/// One context file's imports being inlined (Gemini CLI's tree format, as
/// Qwen Code forked it).
struct Imported<'a> {
    disk: &'a dyn Disk,
    /// Imports inline files below this directory only.
    root: &'a Path,
    role: Role,
    /// The file whose text holds the import being looked at.
    importer: PathBuf,
    files: &'a mut Vec<ContextFile>,
}

impl Imported<'_> {
    /// `text` (in `base`, `depth` imports deep, below the files `above`)
    /// with its imports inlined.
    fn process(&mut self, text: &str, base: &Path, above: &[PathBuf], depth: usize) -> String {
        if depth >= MAX_DEPTH {
            for import in super::gemini::find_imports(text) {
                let path = normalize(&base.join(import.path));
                self.record(path, None, Outcome::Skipped(Skip::TooDeep));
            }
            return text.to_string();
        }
        // marked finds code in the text with its line ends made `\n`; the
        // offsets are then taken in the text as it is.
        let code = crate::markdown::code_ranges(&text.replace("\r\n", "\n").replace('\r', "\n"));
        let mut out = String::new();
        let mut last = 0;
        for import in super::gemini::find_imports(text) {
            out.push_str(&text[last..import.start]);
            last = import.end;
            let ip = import.path;
            if code
                .iter()
                .any(|(s, e)| import.start >= *s && import.start < *e)
            {
                out.push('@');
                out.push_str(ip);
                continue;
            }
            let full = normalize(&base.join(ip));
            let web = ["file://", "http://", "https://"]
                .iter()
                .any(|p| ip.starts_with(p));
            if web || !full.starts_with(self.root) {
                out.push_str(&format!(
                    "<!-- Import failed: {ip} - Path traversal attempt -->"
                ));
                self.record(full, None, Outcome::Skipped(Skip::Outside));
                continue;
            }
            if above.contains(&full) {
                out.push_str(&format!("<!-- File already processed: {ip} -->"));
                self.record(full, None, Outcome::Skipped(Skip::Repeated));
                continue;
            }
            if self
                .disk
                .metadata(&full)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
            {
                out.push('@');
                out.push_str(ip);
                self.record(full, None, Outcome::Skipped(Skip::NotFound));
                continue;
            }
            match super::js::read_file(self.disk, &full) {
                Ok(inner) => {
                    let bytes = inner.len() as u64;
                    self.record(full.clone(), Some(bytes), Outcome::Loaded);
                    let importer = std::mem::replace(&mut self.importer, full.clone());
                    let mut below = above.to_vec();
                    below.push(full.clone());
                    let dir = full.parent().unwrap_or(Path::new("/"));
                    let inner = self.process(&inner, dir, &below, depth + 1);
                    self.importer = importer;
                    out.push_str(&format!(
                        "<!-- Imported from: {ip} -->\n{inner}\n<!-- End of import from: {ip} -->"
                    ));
                }
                Err(message) => {
                    out.push_str(&format!("<!-- Import failed: {ip} - {message} -->"));
                    self.record(full, None, Outcome::Skipped(Skip::Unreadable(message)));
                }
            }
        }
        out.push_str(&text[last..]);
        out
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_ends_at_the_first_ruler_line() {
        assert_eq!(
            split_front_matter("---\na: 1\n---\nbody"),
            Some(("a: 1", "body"))
        );
        assert_eq!(split_front_matter("---\na: 1\n---"), Some(("a: 1", "")));
        assert_eq!(split_front_matter("---\n---\nbody"), None);
        assert_eq!(
            split_front_matter("---\na\n----\nb\n---\nc"),
            Some(("a\n----\nb", "c"))
        );
    }

    #[test]
    fn rules_scoped_by_paths_wait() {
        assert!(scoped("paths: src/**"));
        assert!(scoped("paths:\n  - a/**\n  - b"));
        assert!(!scoped("paths: []"));
        assert!(!scoped("paths: 5"));
        assert!(!scoped("description: x"));
        // Not YAML: read line by line.
        assert!(scoped("bad: a: b\npaths: src/**"));
        assert!(!scoped("bad: a: b\npaths: true"));
        assert!(scoped("bad: a: b\n  paths: x"));
        assert!(scoped("bad: a: b\npaths:\n  - \"\"\n  - 0"));
        assert!(!scoped("bad: a: b\npaths:\n  - null\n  - \"\""));
        assert!(!scoped("bad: a: b\npaths: x\npaths: 5"));
    }

    #[test]
    fn comments_are_stripped_until_none_is_left() {
        assert_eq!(
            strip_html_comments("a<!-- x -->b<!--<!-- y -->-->c<!-- open"),
            "ab-->c open"
        );
    }

    #[test]
    fn an_output_language_rule_names_its_language() {
        assert_eq!(language_of(AUTO_LANGUAGE).as_deref(), Some("auto"));
        assert_eq!(
            language_of("<!--qwen-code:llm-output-language:  French -->").as_deref(),
            Some("French")
        );
        assert_eq!(
            language_of("# CRITICAL: Chinese Output Language Rule").as_deref(),
            Some("Chinese")
        );
        assert_eq!(language_of("# my own rules"), None);
    }
}
