//! opencode (`VERSION`): `AGENTS.md`, else `CLAUDE.md`, else `CONTEXT.md`,
//! from the working directory up to its project's root, in its system
//! prompt.
//!
//! The rules, read in its bundled source (`Instruction.systemPaths`,
//! `Instruction.system`, `FileSystem.findUp`, `Git.repo.discover`) and
//! checked against it:
//!
//! * **The global file**: the first of `$XDG_CONFIG_HOME/opencode/AGENTS.md`
//!   (`~/.config/opencode/AGENTS.md`) and `~/.claude/CLAUDE.md` that exists
//!   (links followed; a directory exists too).
//! * **The project's files**: the first of the names `AGENTS.md`,
//!   `CLAUDE.md`, `CONTEXT.md` that exists in any directory from the
//!   working directory up to the project's root wins alone, and every
//!   directory's file of that name loads, nearest first.
//! * **The project's root**: where git finds the repository's top level,
//!   asked in the directory of the nearest `.git` at or above the working
//!   directory (a `.git` that is no repository is passed over, as git
//!   passes it; a `.git` file git refuses is no repository at all). Outside
//!   a repository the walk goes up to `/`.
//! * **Sent as read**: decoded as UTF-8 with replacement, a byte order
//!   mark dropped, not trimmed; a file that reads as nothing (empty, a
//!   directory, unreadable) is left out. A path named twice is sent once.
//! * **The text**: `Instructions from: <path>` and the file's text on the
//!   next line, the files one line apart, in the system prompt after its
//!   environment block.
//! * `OPENCODE_DISABLE_CLAUDE_CODE` or `OPENCODE_DISABLE_CLAUDE_CODE_PROMPT`
//!   set true: neither `CLAUDE.md` is looked for.
//!
//! Not modelled: the configuration's `instructions` (more files, by glob
//! or URL), `OPENCODE_DISABLE_PROJECT_CONFIG`, and git's own limits on
//! finding a repository (another owner's, across file systems).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use promptinclude_tokenize::Split;

use super::disk::{absent_below, joined, Disk, Listing};
use super::engine::{Layered, Likeness};
use super::js::resolve as normalize;
use super::{
    Agent, AgentContext, ContextError, ContextFile, Outcome, PartWriter, Place, Role, Skip, Writing,
};

/// The opencode version this model reproduces (`tests/agents/package.json`).
pub(crate) const VERSION: &str = "1.18.33";

/// The project's names, in the order opencode tries them.
const NAMES: [&str; 3] = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"];

/// How opencode is started.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The working directory (opencode names it by its physical path).
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// `$XDG_CONFIG_HOME`, when set.
    pub config_home: Option<&'a OsStr>,
    /// Whether `OPENCODE_DISABLE_CLAUDE_CODE` or
    /// `OPENCODE_DISABLE_CLAUDE_CODE_PROMPT` is set true.
    pub without_claude: bool,
}

/// What opencode loads when started as `start` says, looking at the
/// files through `disk`, its text written as `writing` says.
pub(crate) fn context_writing(
    start: &Start<'_>,
    disk: &dyn Disk,
    writing: Writing,
) -> Result<AgentContext, ContextError> {
    let cwd = super::physical_cwd(disk, start.cwd)?;
    crate::engine::context(&Model::of(start, &cwd), cwd, disk, writing)
}

/// opencode in the registry: `$XDG_CONFIG_HOME` and its switches read
/// from the start's environment.
pub(crate) struct Registered;

impl crate::Modelled for Registered {
    fn context(
        &self,
        start: &crate::Start<'_>,
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let (config_home, without_claude) = variables(start);
        let start = Start::of(start, config_home.as_deref(), without_claude);
        context_writing(&start, disk, writing)
    }

    fn contexts(
        &self,
        tree: &crate::Tree,
        start: &crate::Start<'_>,
        disk: &crate::disk::Remembered<'_>,
    ) -> Result<Vec<crate::Shared>, ContextError> {
        let (config_home, without_claude) = variables(start);
        let start = Start::of(start, config_home.as_deref(), without_claude);
        // A configuration directory relative to the start is each start's own.
        if config_home
            .as_deref()
            .is_some_and(|dir| !Path::new(dir).is_absolute())
        {
            return crate::engine::each_own(tree, disk, |dir| {
                context_writing(&Start { cwd: dir, ..start }, disk, Writing::ToMeasure)
            });
        }
        let model = Model::of(&start, &tree.dirs[0]);
        crate::engine::contexts(&model, tree, disk)
    }
}

/// `$XDG_CONFIG_HOME` (when not empty), and whether the `CLAUDE.md` files
/// are switched off.
fn variables(start: &crate::Start<'_>) -> (Option<OsString>, bool) {
    let config_home = (start.env)("XDG_CONFIG_HOME").filter(|v| !v.is_empty());
    let on = |name: &str| (start.env)(name).is_some_and(|v| is_true(&v));
    let without_claude =
        on("OPENCODE_DISABLE_CLAUDE_CODE") || on("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT");
    (config_home, without_claude)
}

/// Whether opencode reads a switch's value as true (its configuration
/// library's booleans: `true`, `yes`, `on`, `1`, `y`).
fn is_true(value: &OsStr) -> bool {
    matches!(
        value.as_encoded_bytes(),
        b"true" | b"yes" | b"on" | b"1" | b"y"
    )
}

impl<'a> Start<'a> {
    fn of(start: &crate::Start<'a>, config_home: Option<&'a OsStr>, without_claude: bool) -> Self {
        Start {
            cwd: start.cwd,
            home: start.home,
            config_home,
            without_claude,
        }
    }
}

/// opencode as the engine runs it.
pub(crate) struct Model {
    /// The global files, in the order opencode tries them.
    global: Vec<PathBuf>,
    /// The project's names, in the order opencode tries them.
    project: Vec<&'static str>,
    /// What the engine screens directories by: the project's names and
    /// `.git`.
    names: Vec<String>,
}

impl Model {
    /// opencode started as `start` says, in `cwd` (its physical path; a
    /// relative `$XDG_CONFIG_HOME` is taken from there).
    pub(crate) fn of(start: &Start<'_>, cwd: &Path) -> Model {
        let config = match start.config_home {
            Some(dir) => normalize(&cwd.join(dir)),
            None => start.home.join(".config"),
        };
        let mut global = vec![config.join("opencode/AGENTS.md")];
        let project: Vec<&'static str> = match start.without_claude {
            true => NAMES.into_iter().filter(|n| *n != "CLAUDE.md").collect(),
            false => {
                global.push(start.home.join(".claude/CLAUDE.md"));
                NAMES.to_vec()
            }
        };
        let names = project
            .iter()
            .copied()
            .chain([".git"])
            .map(String::from)
            .collect();
        Model {
            global: global.iter().map(|p| normalize(p)).collect(),
            project,
            names,
        }
    }
}

/// What one directory gives opencode: the same for every start below it.
pub(crate) struct Found {
    /// The project's names that exist here, each as read.
    files: Vec<Candidate>,
    /// What its `.git` is to git.
    git: Option<Git>,
}

/// What a `.git` that exists is to git's search for a repository.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Git {
    /// The repository: this directory is its top level.
    Repository,
    /// A `.git` file git refuses: it stops, and there is no repository.
    Refused,
    /// No repository (a directory without one): git looks further up.
    PassedOver,
}

/// A file opencode's `exists` finds, as reading it goes.
#[derive(Clone)]
struct Candidate {
    /// Its index in [`NAMES`].
    name: usize,
    path: PathBuf,
    read: Read,
}

/// What reading a file gives opencode.
#[derive(Clone)]
enum Read {
    /// Its text (not empty), its bytes and its tokens.
    Text {
        text: Arc<str>,
        bytes: u64,
        tokens: Split,
    },
    /// It reads as nothing: left out.
    Nothing { bytes: Option<u64>, why: Skip },
}

/// What reading `path` gives opencode (which catches every error as an
/// empty text).
fn read(disk: &dyn Disk, path: &Path) -> Read {
    match disk.metadata(path) {
        Ok(meta) if meta.file_type().is_fifo() || meta.file_type().is_char_device() => {
            return Read::Nothing {
                bytes: None,
                why: Skip::Unreadable("not a regular file (not modelled)".into()),
            }
        }
        _ => {}
    }
    match disk.read(path) {
        Ok(bytes) if bytes.is_empty() => Read::Nothing {
            bytes: Some(0),
            why: Skip::Blank,
        },
        Ok(bytes) => {
            let decoded = super::lossy(&bytes);
            let text = decoded.strip_prefix('\u{feff}').unwrap_or(&decoded);
            match text.is_empty() {
                true => Read::Nothing {
                    bytes: Some(bytes.len() as u64),
                    why: Skip::Blank,
                },
                false => Read::Text {
                    text: Arc::from(text),
                    bytes: bytes.len() as u64,
                    tokens: disk.count_split(text),
                },
            }
        }
        Err(e) => Read::Nothing {
            bytes: None,
            why: Skip::Unreadable(e.to_string()),
        },
    }
}

/// What `.git` in `dir` is to git, if it exists (links followed).
fn git_in(disk: &dyn Disk, dir: &Path, listing: Option<&Listing>) -> Option<Git> {
    if absent_below(listing, dir, ".git") {
        return None;
    }
    let git = joined(dir, ".git");
    let meta = disk.metadata(&git).ok()?;
    if !meta.is_file() {
        return Some(match is_git_directory(disk, &git) {
            true => Git::Repository,
            false => Git::PassedOver,
        });
    }
    // A `gitdir: <path>` file naming a repository, else refused.
    let bytes = disk.read(&git).ok();
    let target = bytes
        .as_deref()
        .and_then(|b| b.strip_prefix(b"gitdir: "))
        .map(|rest| rest.trim_ascii_end())
        .filter(|rest| !rest.is_empty())
        .map(|rest| normalize(&dir.join(OsStr::from_bytes(rest))));
    Some(match target.is_some_and(|t| is_git_directory(disk, &t)) {
        true => Git::Repository,
        false => Git::Refused,
    })
}

/// git's test of a repository directory: a `HEAD` naming a ref or an
/// object, and `objects` and `refs` there.
fn is_git_directory(disk: &dyn Disk, dir: &Path) -> bool {
    let head = joined(dir, "HEAD");
    let head_ok = match disk.symlink_metadata(&head) {
        Ok(meta) if meta.file_type().is_symlink() => disk
            .read_link(&head)
            .is_ok_and(|t| t.as_os_str().as_bytes().starts_with(b"refs/")),
        Ok(_) => disk.read(&head).is_ok_and(|bytes| {
            let bytes = &bytes[..bytes.len().min(255)];
            match bytes.strip_prefix(b"ref:") {
                Some(rest) => rest.trim_ascii_start().starts_with(b"refs/"),
                None => bytes.len() >= 40 && bytes[..40].iter().all(u8::is_ascii_hexdigit),
            }
        }),
        Err(_) => false,
    };
    let is_dir = |name: &str| disk.metadata(&joined(dir, name)).is_ok_and(|m| m.is_dir());
    head_ok && is_dir("objects") && is_dir("refs")
}

impl Layered for Model {
    type Found = Found;
    type Above = ();

    fn names(&self) -> Option<&[String]> {
        Some(&self.names)
    }

    /// **The project's files** and **the project's root**: what `exists`
    /// finds of the names here, and what git makes of a `.git`.
    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> Found {
        let listing = disk.exact_listing(dir);
        let files = self
            .project
            .iter()
            .enumerate()
            .filter(|(_, name)| !absent_below(listing.as_ref(), dir, name))
            .map(|(name, file)| (name, joined(dir, file)))
            .filter(|(_, path)| disk.metadata(path).is_ok())
            .map(|(name, path)| Candidate {
                name,
                read: read(disk, &path),
                path,
            })
            .collect();
        Found {
            files,
            git: git_in(disk, dir, listing.as_ref()),
        }
    }

    fn adds_nothing(&self, found: &Found) -> bool {
        found.files.is_empty() && found.git.is_none_or(|g| g == Git::PassedOver)
    }

    fn above(&self, _: &Path, _: &AgentContext, _: &dyn Disk) {}

    /// opencode names every file by its absolute path: a start that adds
    /// nothing loads what the one above it loads.
    fn likeness(&self, _: &(), _: &Path, _: Option<&Listing>, _: &dyn Disk) -> Likeness {
        Likeness::AddsNothing
    }

    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &Found)],
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        // **The project's root**: the nearest repository, unless git
        // refuses a `.git` file first; else the walk goes up to `/`.
        let stop = up
            .iter()
            .position(|(_, found)| matches!(found.git, Some(Git::Repository | Git::Refused)))
            .filter(|&i| up[i].1.git == Some(Git::Repository));
        let root = stop.map(|i| up[i].0.to_path_buf());
        let within = &up[..stop.map_or(up.len(), |i| i + 1)];
        let mut files = Vec::new();
        let mut sent: Vec<(PathBuf, Arc<str>, Split)> = Vec::new();
        let mut take = |path: &Path, read: &Read, role: Role, files: &mut Vec<ContextFile>| {
            let (bytes, tokens, outcome) = match read {
                Read::Text {
                    text,
                    bytes,
                    tokens,
                } => {
                    if sent.iter().any(|(p, _, _)| p == path) {
                        return;
                    }
                    sent.push((path.to_path_buf(), Arc::clone(text), *tokens));
                    (Some(*bytes), tokens.tokens, Outcome::Loaded)
                }
                Read::Nothing { bytes, why } => (*bytes, 0, Outcome::Skipped(why.clone())),
            };
            files.push(ContextFile {
                path: path.to_path_buf(),
                role,
                bytes,
                tokens,
                outcome,
                parent: None,
            });
        };

        // **The global file**: the first that exists; the others shadowed.
        let mut global_by: Option<&Path> = None;
        for path in &self.global {
            if disk.metadata(path).is_err() {
                continue;
            }
            match global_by {
                None => {
                    take(path, &read(disk, path), Role::Global, &mut files);
                    global_by = Some(path);
                }
                Some(by) => files.push(shadowed(path, Role::Global, by)),
            }
        }

        // **The project's files**: the first name found anywhere wins.
        let chosen = (0..self.project.len()).find(|&name| {
            within
                .iter()
                .any(|(_, f)| f.files.iter().any(|c| c.name == name))
        });
        if let Some(name) = chosen {
            let mut by: Option<&Path> = None;
            for (_, found) in within {
                for candidate in found.files.iter().filter(|c| c.name == name) {
                    take(&candidate.path, &candidate.read, Role::Project, &mut files);
                    by.get_or_insert(&candidate.path);
                }
            }
            let by = by.expect("the chosen name is found");
            for (_, found) in within {
                for candidate in found.files.iter().filter(|c| c.name != name) {
                    files.push(shadowed(&candidate.path, Role::Project, by));
                }
            }
        }

        // **The text**: each file under its path, one line apart.
        let part = (!sent.is_empty()).then(|| {
            const HEADER: &str = "Instructions from: ";
            let len = sent
                .iter()
                .map(|(path, text, _)| HEADER.len() + path.as_os_str().len() + 2 + text.len())
                .sum();
            let mut part = PartWriter::new(writing, len);
            for (i, (path, text, tokens)) in sent.iter().enumerate() {
                if i > 0 {
                    part.push("\n");
                }
                part.push(HEADER);
                part.push(&path.to_string_lossy());
                part.push("\n");
                part.push_counted(text, *tokens);
            }
            part.finish(Place::SystemPrompt)
        });
        Ok(AgentContext {
            agent: Agent::Opencode,
            cwd,
            root,
            files,
            limit: None,
            parts: part.into_iter().collect(),
            notes: Vec::new(),
        })
    }
}

/// A file opencode never reads because `by` wins.
fn shadowed(path: &Path, role: Role, by: &Path) -> ContextFile {
    ContextFile {
        path: path.to_path_buf(),
        role,
        bytes: None,
        tokens: 0,
        outcome: Outcome::Shadowed {
            by: by.to_path_buf(),
        },
        parent: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_read_true_as_opencode_does() {
        for on in ["true", "yes", "on", "1", "y"] {
            assert!(is_true(OsStr::new(on)), "{on}");
        }
        for off in ["", "0", "false", "no", "2"] {
            assert!(!is_true(OsStr::new(off)), "{off}");
        }
    }
}
