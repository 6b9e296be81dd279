//! GitHub Copilot CLI (`VERSION`, `copilot-cli`: the lint named `copilot`
//! checks VS Code's documented rules): custom instructions, `AGENTS.md`,
//! `CLAUDE.md`, `GEMINI.md` and instruction files, in its system prompt.
//!
//! Its loader is compiled into the package's native runtime, so the rules
//! were found by running it (offline, its model a mocked endpoint) and are
//! proven by the differential in `tests/agents/context-copilot.test.mjs`:
//!
//! * **The repository root**: the nearest directory at or above the
//!   working directory whose `.git` is a file starting `gitdir: `, or a
//!   directory with a `HEAD` naming a ref or an object, `objects` and
//!   `refs`; a `.git` directory that is not one is passed over, and any
//!   other `.git` file means there is no repository.
//! * **Custom instructions**, in this order: `~/.copilot/copilot-instructions.md`
//!   (left out unless it is valid UTF-8);
//!   `.github/copilot-instructions.md` of the root, then of the working
//!   directory; `AGENTS.md`, `CLAUDE.md`, `GEMINI.md` of the root, then of
//!   the working directory; then for each directory between them, nearest
//!   first, its `.github/copilot-instructions.md`, `AGENTS.md`, `CLAUDE.md`,
//!   `.claude/CLAUDE.md` and `GEMINI.md`. Outside a repository: the working
//!   directory's alone. Each but `GEMINI.md` has its `@path` imports
//!   inlined ([`imports`]); a text already sent (byte for byte, imports
//!   inlined) is sent once. Each is
//!   `<custom_instruction>\n<text>\n</custom_instruction>`, one blank line
//!   apart.
//! * **Instruction files**: the root's, then the working directory's,
//!   `.github/instructions/**/*.instructions.md` and `.claude/rules/**/*.md`,
//!   each set sorted by path. One whose front matter's `applyTo` (`paths`
//!   for a rule) is missing, `**` or `**/*` is sent whole, front matter
//!   and all; the others are listed in a table of their patterns, paths
//!   and descriptions for the model to read when it works on such files.
//! * **Names** are found without regard to ASCII case: `AGENTS.md`, else
//!   the first readable `agents.md`, `Agents.md`, ... in byte order.
//! * **Sent as read**: decoded as UTF-8 with replacement, every U+FEFF
//!   (byte order mark) dropped, empty and blank files too; one that cannot
//!   be read (a directory, a dangling link) is left out.

mod imports;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use promptinclude_tokenize::Split;
use yaml_rust2::{Yaml, YamlLoader};

use super::disk::{absent_below, joined, Disk, Listing};
use super::engine::{Layered, Likeness};
use super::{
    Agent, AgentContext, ContextError, ContextFile, Outcome, PartWriter, Place, Role, Skip, Writing,
};

/// The Copilot CLI version this model reproduces (`tests/agents/package.json`).
pub(crate) const VERSION: &str = "1.0.102";

/// The custom instruction files of a directory that is the root or the
/// working directory, in Copilot's order.
const AT_ENDS: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "GEMINI.md"];

/// Those of a directory between them.
const BETWEEN: [&str; 5] = [
    ".github/copilot-instructions.md",
    "AGENTS.md",
    "CLAUDE.md",
    ".claude/CLAUDE.md",
    "GEMINI.md",
];

/// The repository's own custom instructions file.
const REPOSITORY_FILE: &str = ".github/copilot-instructions.md";

/// The one custom instruction file whose `@path` imports Copilot leaves
/// as text.
const NOT_IMPORTING: &str = "GEMINI.md";

/// The instruction file sets of a directory: where, and which names.
const INSTRUCTION_SETS: [(&str, &str, &str); 2] = [
    (".github/instructions", ".instructions.md", "applyTo"),
    (".claude/rules", ".md", "paths"),
];

/// The text before the table of scoped instruction files.
const TABLE_HEAD: &str =
    "Here is a list of instruction files that contain rules for modifying or creating new code.\n\
These files are important for ensuring that the code is modified or created correctly.\n\
Please make sure to follow the rules specified in these files when working with the codebase.\n\
If you have not already read the file, use the `view` tool to acquire it.\n\
Make sure to acquire the instructions before making any changes to the code.\n\
| Pattern | File Path | Description |\n\
| ------- | --------- | ----------- |\n";

/// How Copilot CLI is started.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The working directory (named by its physical path).
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
}

/// What Copilot CLI loads when started as `start` says, looking at the
/// files through `disk`, its text written as `writing` says.
pub(crate) fn context_writing(
    start: &Start<'_>,
    disk: &dyn Disk,
    writing: Writing,
) -> Result<AgentContext, ContextError> {
    let cwd = super::physical_cwd(disk, start.cwd)?;
    crate::engine::context(&Model::of(start), cwd, disk, writing)
}

/// Copilot CLI in the registry.
pub(crate) struct Registered;

impl crate::Modelled for Registered {
    fn context(
        &self,
        start: &crate::Start<'_>,
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let start = Start {
            cwd: start.cwd,
            home: start.home,
        };
        context_writing(&start, disk, writing)
    }

    fn contexts(
        &self,
        tree: &crate::Tree,
        start: &crate::Start<'_>,
        disk: &crate::disk::Remembered<'_>,
    ) -> Result<Vec<crate::Shared>, ContextError> {
        let start = Start {
            cwd: start.cwd,
            home: start.home,
        };
        crate::engine::contexts(&Model::of(&start), tree, disk)
    }
}

/// Copilot CLI as the engine runs it.
pub(crate) struct Model {
    /// `~/.copilot/copilot-instructions.md`.
    global: PathBuf,
    /// What the engine screens directories by.
    names: Vec<String>,
}

impl Model {
    pub(crate) fn of(start: &Start<'_>) -> Model {
        let names = [
            "AGENTS.md",
            "CLAUDE.md",
            "GEMINI.md",
            ".github",
            ".claude",
            ".git",
        ]
        .map(String::from)
        .to_vec();
        Model {
            global: start.home.join(".copilot/copilot-instructions.md"),
            names,
        }
    }
}

/// What one directory gives Copilot CLI.
pub(crate) struct Found {
    /// Its custom instruction files that can be read, by name.
    custom: Vec<(&'static str, Read)>,
    /// Its instruction files, in Copilot's order.
    instructions: Vec<Instruction>,
    /// What its `.git` is to the search for the root.
    git: Option<Git>,
}

/// A file read as Copilot reads it.
#[derive(Clone)]
struct Read {
    path: PathBuf,
    text: Arc<str>,
    bytes: u64,
    tokens: Split,
}

/// An instruction file and how Copilot sends it.
#[derive(Clone)]
struct Instruction {
    read: Read,
    /// `None`: sent whole; else its patterns and description, listed.
    scope: Option<(String, String)>,
    /// Its path as the table shows it (from the directory it is found in).
    shown: String,
}

/// `path` read as Copilot reads it; `None` when it cannot be.
fn read(disk: &dyn Disk, path: &Path) -> Option<Read> {
    let meta = disk.metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let bytes = disk.read(path).ok()?;
    let decoded = super::lossy(&bytes);
    let text = match decoded.contains('\u{feff}') {
        true => std::borrow::Cow::Owned(decoded.replace('\u{feff}', "")),
        false => decoded,
    };
    Some(Read {
        path: path.to_path_buf(),
        tokens: disk.count_split(&text),
        text: Arc::from(text.as_ref()),
        bytes: bytes.len() as u64,
    })
}

/// The file `name` (a name, or a name below a directory) of `dir` as
/// Copilot finds it: by that name, else by the first name that differs
/// from it in ASCII case alone (in byte order) that can be read.
fn find(disk: &dyn Disk, dir: &Path, name: &str) -> Option<Read> {
    let (below, file) = name.rsplit_once('/').unwrap_or(("", name));
    let parent = match below {
        "" => dir.to_path_buf(),
        below => joined(dir, below),
    };
    if let Some(found) = read(disk, &joined(&parent, file)) {
        return Some(found);
    }
    let listing = disk.read_dir(&parent).ok()?;
    let mut others: Vec<&OsStr> = listing
        .iter()
        .map(|(n, _)| n)
        .filter(|n| {
            let n = n.as_encoded_bytes();
            n != file.as_bytes() && n.eq_ignore_ascii_case(file.as_bytes())
        })
        .collect();
    others.sort();
    others
        .into_iter()
        .find_map(|n| read(disk, &joined(&parent, n)))
}

/// What a directory's `.git` is to Copilot CLI's search for the
/// repository's root.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Git {
    /// The root: a `gitdir: ` file, or a repository directory.
    Root,
    /// Another file: there is no repository.
    Stop,
}

/// What `dir`'s `.git` is to Copilot CLI (`None`: it looks further up).
fn git_in(disk: &dyn Disk, dir: &Path, listing: Option<&Listing>) -> Option<Git> {
    if absent_below(listing, dir, ".git") {
        return None;
    }
    let git = joined(dir, ".git");
    let meta = disk.metadata(&git).ok()?;
    if meta.is_file() {
        let gitdir = disk.read(&git).is_ok_and(|b| b.starts_with(b"gitdir: "));
        return Some(if gitdir { Git::Root } else { Git::Stop });
    }
    let head_ok = disk.read(&joined(&git, "HEAD")).is_ok_and(|bytes| {
        let bytes = &bytes[..bytes.len().min(255)];
        match bytes.strip_prefix(b"ref:") {
            Some(rest) => rest.trim_ascii_start().starts_with(b"refs/"),
            None => bytes.len() >= 40 && bytes[..40].iter().all(u8::is_ascii_hexdigit),
        }
    });
    let is_dir = |name: &str| disk.metadata(&joined(&git, name)).is_ok_and(|m| m.is_dir());
    (meta.is_dir() && head_ok && is_dir("objects") && is_dir("refs")).then_some(Git::Root)
}

/// The instruction files of `dir`, in Copilot's order.
fn instructions(disk: &dyn Disk, dir: &Path, listing: Option<&Listing>) -> Vec<Instruction> {
    let mut out = Vec::new();
    for (set, suffix, key) in INSTRUCTION_SETS {
        if absent_below(listing, dir, set) {
            continue;
        }
        let base = joined(dir, set);
        let mut files = Vec::new();
        collect(disk, &base, suffix, &mut files);
        files.sort();
        for path in files {
            let Some(read) = read(disk, &path) else {
                continue;
            };
            // Shown by where it really is (a link's target), from `dir`.
            let real = disk.canonicalize(&path).unwrap_or_else(|_| path.clone());
            let shown = super::js::relative(dir, &real);
            out.push(Instruction {
                scope: scope(&read.text, key),
                read,
                shown,
            });
        }
    }
    out
}

/// The files named `*suffix` at any depth below `dir` (links followed).
fn collect(disk: &dyn Disk, dir: &Path, suffix: &str, out: &mut Vec<PathBuf>) {
    let Ok(listing) = disk.read_dir(dir) else {
        return;
    };
    for (name, _) in listing.iter() {
        let path = joined(dir, name);
        match disk.metadata(&path) {
            Ok(meta) if meta.is_dir() => collect(disk, &path, suffix, out),
            Ok(meta) if meta.is_file() && name.as_encoded_bytes().ends_with(suffix.as_bytes()) => {
                out.push(path)
            }
            _ => {}
        }
    }
}

/// An instruction file's patterns and description, unless it applies to
/// every file (its front matter's `key` missing, `**` or `**/*`).
fn scope(text: &str, key: &str) -> Option<(String, String)> {
    let yaml = front_matter(text)?;
    // YAML forbids a tab that indents, which `yaml_rust2` lets pass.
    let tab_indented = yaml.lines().any(|line| line.starts_with('\t'));
    let Some(documents) = YamlLoader::load_from_str(yaml)
        .ok()
        .filter(|_| !tab_indented)
    else {
        return scope_of_broken(yaml, key);
    };
    let Yaml::Hash(map) = documents.into_iter().next()? else {
        return None;
    };
    let patterns = match map.get(&Yaml::String(key.to_string()))? {
        Yaml::String(s) => s.clone(),
        Yaml::Array(items) => items
            .iter()
            .filter_map(|i| i.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        _ => return None,
    };
    if matches!(patterns.as_str(), "" | "**" | "**/*") {
        return None;
    }
    let description = match map.get(&Yaml::String("description".to_string())) {
        Some(Yaml::String(s)) => s.clone(),
        _ => String::new(),
    };
    Some((patterns, description))
}

/// [`scope`] of front matter that is not YAML, as Copilot reads it line by
/// line: the first line `key: value` (the key at the line's start), the
/// value trimmed, then unquoted or else less a ` #` comment; no
/// description.
fn scope_of_broken(yaml: &str, key: &str) -> Option<(String, String)> {
    let value = yaml.lines().find_map(|line| {
        let rest = line.strip_prefix(key)?.strip_prefix(':')?;
        (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some(rest)
    })?;
    let value = value.trim();
    // A value quoted whole is unquoted; any other loses a ` #` comment.
    let unquoted = ['"', '\'']
        .into_iter()
        .find_map(|q| value.strip_prefix(q)?.strip_suffix(q))
        .unwrap_or_else(|| {
            let comment = value.find(" #").or_else(|| value.find("\t#"));
            comment.map_or(value, |at| &value[..at]).trim_end()
        });
    (!matches!(unquoted, "" | "**" | "**/*")).then(|| (unquoted.to_string(), String::new()))
}

/// A file's front matter: between a first line `---` and the next.
fn front_matter(text: &str) -> Option<&str> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\n', '\r']) == "---" {
            return Some(&rest[..at]);
        }
        at += line.len();
    }
    None
}

impl Layered for Model {
    type Found = Found;
    type Above = ();

    fn names(&self) -> Option<&[String]> {
        Some(&self.names)
    }

    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> Found {
        let listing = disk.exact_listing(dir);
        let custom = BETWEEN
            .iter()
            .filter_map(|name| Some((*name, find(disk, dir, name)?)))
            .collect();
        Found {
            custom,
            instructions: instructions(disk, dir, listing.as_ref()),
            git: git_in(disk, dir, listing.as_ref()),
        }
    }

    fn adds_nothing(&self, found: &Found) -> bool {
        found.custom.is_empty() && found.instructions.is_empty() && found.git.is_none()
    }

    fn above(&self, _: &Path, _: &AgentContext, _: &dyn Disk) {}

    /// A start that adds nothing loads what its root and the directories
    /// between load, the same from every such directory of one parent.
    fn likeness(&self, _: &(), _: &Path, _: Option<&Listing>, _: &dyn Disk) -> Likeness {
        Likeness::LikeSiblings
    }

    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &Found)],
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let root = up
            .iter()
            .position(|(_, f)| f.git.is_some())
            .filter(|&r| up[r].1.git == Some(Git::Root));
        let here = up
            .first()
            .filter(|(dir, _)| *dir == cwd.as_path())
            .map(|(_, f)| *f);
        let file = |found: Option<&Found>, name: &str| -> Option<(&str, Read)> {
            found?
                .custom
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(n, r)| (*n, r.clone()))
        };
        let mut custom: Vec<(&str, Read)> = Vec::new();
        // The user's own file is read as strict UTF-8: one that is not is
        // left out.
        let global = read(disk, &self.global).filter(|_| {
            disk.read(&self.global)
                .is_ok_and(|b| std::str::from_utf8(&b).is_ok())
        });
        custom.extend(global.map(|r| ("~/.copilot/copilot-instructions.md", r)));
        let mut sets: Vec<&[Instruction]> = Vec::new();
        match root {
            Some(r) => {
                let (_, top) = up[r];
                let cwd_found = here.filter(|_| r != 0);
                custom.extend(file(Some(top), REPOSITORY_FILE));
                custom.extend(file(cwd_found, REPOSITORY_FILE));
                for name in AT_ENDS {
                    custom.extend(file(Some(top), name));
                }
                for name in AT_ENDS {
                    custom.extend(file(cwd_found, name));
                }
                let first_between = usize::from(cwd_found.is_some());
                for (_, found) in &up[first_between..r] {
                    for name in BETWEEN {
                        custom.extend(file(Some(found), name));
                    }
                }
                sets.push(&top.instructions);
                if let Some(found) = cwd_found {
                    sets.push(&found.instructions);
                }
            }
            None => {
                custom.extend(file(here, REPOSITORY_FILE));
                for name in AT_ENDS {
                    custom.extend(file(here, name));
                }
                if let Some(found) = here {
                    sets.push(&found.instructions);
                }
            }
        }

        // Imports are inlined (from the repository, else the working
        // directory; the user's file from its own directory), then a text
        // sent already is not sent again.
        let project = root.map_or(cwd.as_path(), |r| up[r].0);
        let user = self.global.parent().unwrap_or(Path::new("/"));
        let home = user.parent().unwrap_or(Path::new("/"));
        let mut files = Vec::new();
        let mut sent: Vec<(Arc<str>, Split)> = Vec::new();
        for (name, r) in custom {
            let role = if r.path == self.global {
                Role::Global
            } else {
                Role::Project
            };
            let within = if role == Role::Global { user } else { project };
            let expanded = (name != NOT_IMPORTING).then(|| {
                imports::expand(
                    disk,
                    &r.path,
                    &r.text,
                    imports::Bounds { within, home },
                    role,
                )
            });
            let (text, tokens, imported) = match expanded {
                Some(imports::Expanded {
                    text: Some(text),
                    files,
                }) => {
                    let tokens = disk.count_split(&text);
                    (Arc::from(text), tokens, files)
                }
                Some(imports::Expanded { text: None, files }) => (r.text.clone(), r.tokens, files),
                None => (r.text.clone(), r.tokens, Vec::new()),
            };
            let repeated = sent.iter().any(|(s, _)| *s == text);
            files.push(ContextFile {
                path: r.path.clone(),
                role,
                bytes: Some(r.bytes),
                tokens: if repeated { 0 } else { tokens.tokens },
                outcome: if repeated {
                    Outcome::Skipped(Skip::Repeated)
                } else {
                    Outcome::Loaded
                },
                parent: None,
            });
            if !repeated {
                files.extend(imported);
                sent.push((text, tokens));
            }
        }
        let mut whole: Vec<&Instruction> = sets
            .iter()
            .flat_map(|s| s.iter())
            .filter(|i| i.scope.is_none())
            .collect();
        let listed: Vec<&Instruction> = sets
            .iter()
            .flat_map(|s| s.iter())
            .filter(|i| i.scope.is_some())
            .collect();
        // What follows the custom instructions is the files sent whole and
        // the table, joined by blank lines: when that is empty (one empty
        // file alone), nothing follows them, not even the blank line.
        if listed.is_empty() && whole.len() == 1 && whole[0].read.text.is_empty() {
            whole.clear();
        }
        for i in sets.iter().flat_map(|s| s.iter()) {
            let (tokens, outcome) = match &i.scope {
                Some(_) => (0, Outcome::Skipped(Skip::ScopedOut)),
                None if whole.is_empty() => (0, Outcome::Skipped(Skip::Blank)),
                None => (i.read.tokens.tokens, Outcome::Loaded),
            };
            files.push(ContextFile {
                path: i.read.path.clone(),
                role: Role::Project,
                bytes: Some(i.read.bytes),
                tokens,
                outcome,
                parent: None,
            });
        }

        // **The text**: the custom instructions, then the files sent
        // whole and the table, as Copilot lays them out.
        let part = (!sent.is_empty() || !whole.is_empty() || !listed.is_empty()).then(|| {
            let mut part = PartWriter::new(writing, 0);
            for (i, (text, tokens)) in sent.iter().enumerate() {
                if i > 0 {
                    part.push("\n\n");
                }
                part.push("<custom_instruction>\n");
                part.push_counted(text, *tokens);
                part.push("\n</custom_instruction>");
            }
            let mut rest = false;
            let mut next = |part: &mut PartWriter| {
                if rest || !sent.is_empty() {
                    part.push("\n\n");
                }
                rest = true;
            };
            for i in &whole {
                next(&mut part);
                part.push_counted(&i.read.text, i.read.tokens);
            }
            if !listed.is_empty() {
                next(&mut part);
                part.push(TABLE_HEAD);
                for (k, i) in listed.iter().enumerate() {
                    let (patterns, description) = i.scope.as_ref().expect("listed");
                    if k > 0 {
                        part.push("\n");
                    }
                    for piece in ["| ", patterns, " | '", &i.shown, "' | ", description, " |"] {
                        part.push(piece);
                    }
                }
            }
            if !sent.is_empty() && rest {
                part.push("\n");
            }
            part.finish(Place::SystemPrompt)
        });
        Ok(AgentContext {
            agent: Agent::CopilotCli,
            cwd,
            root: root.map(|r| up[r].0.to_path_buf()),
            files,
            limit: None,
            parts: part.into_iter().collect(),
            notes: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_matter_is_between_the_first_two_rulers() {
        assert_eq!(front_matter("---\na: 1\n---\nbody"), Some("a: 1\n"));
        assert_eq!(front_matter("body\n---\n"), None);
        assert_eq!(front_matter("---\nunclosed\n"), None);
    }

    #[test]
    fn front_matter_that_is_not_yaml_is_read_line_by_line() {
        let broken = |rest: &str| scope(&format!("---\nbad: a: b\n{rest}---\nx"), "paths");
        let found = |p: &str| Some((p.to_string(), String::new()));
        assert_eq!(broken("paths: 'a/**'\ndescription: D\n"), found("a/**"));
        assert_eq!(broken("paths: 'a/**' # c\n"), found("'a/**'"));
        assert_eq!(broken("paths: a/** # c\n"), found("a/**"));
        assert_eq!(
            broken("paths: [bad\npaths: second\n"),
            Some(("[bad".to_string(), String::new()))
        );
        assert_eq!(
            broken("paths: \"b/**\n"),
            Some(("\"b/**".to_string(), String::new()))
        );
        for whole in [
            "paths:\n",
            "paths: \"**\"\n",
            "paths:x/**\n",
            "  paths: y/**\n",
            "paths : z/**\n",
            "PATHS: z/**\n",
        ] {
            assert_eq!(broken(whole), None, "{whole:?}");
        }
    }

    #[test]
    fn every_file_patterns_are_sent_whole() {
        assert_eq!(scope("---\napplyTo: '**'\n---\nx", "applyTo"), None);
        assert_eq!(scope("---\napplyTo: \"**/*\"\n---\nx", "applyTo"), None);
        assert_eq!(scope("no front matter", "applyTo"), None);
        assert_eq!(
            scope(
                "---\napplyTo:\n  - a/**\n  - b/**\ndescription: D\n---\n",
                "applyTo"
            ),
            Some(("a/**, b/**".to_string(), "D".to_string()))
        );
    }
}
