//! The pi coding agent (`VERSION`): `AGENTS.md` or `CLAUDE.md` per
//! directory, in its system prompt.
//!
//! The rules, read in its source (`dist/core/resource-loader.js`,
//! `dist/core/system-prompt.js`, `dist/config.js`) and checked against it:
//!
//! * **One file per directory**: the first of `AGENTS.md`, `AGENTS.MD`,
//!   `CLAUDE.md`, `CLAUDE.MD` that exists (links followed) and can be read;
//!   one that exists but cannot be read (a directory) passes to the next.
//! * **Order**: the agent directory's file (`$PI_CODING_AGENT_DIR`, else
//!   `~/.pi/agent`), then every directory from `/` down to the working
//!   directory; a path named twice is sent once.
//! * **Sent as read**: decoded with replacement, not trimmed, blank files
//!   too, no size limit.
//! * **The section**: `# Project Context`, a line of text, then
//!   `## <path>`, a blank line and the file's text for each file.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::disk::{absent_below, Disk, Listing, Live};
use super::engine::{Layered, Likeness};
use super::{
    Agent, AgentContext, ContextError, ContextFile, Outcome, PartWriter, Place, Role, Skip, Writing,
};
use promptinclude_tokenize::Split;

/// The pi version this model reproduces (`tests/pi/package.json`).
pub(crate) const VERSION: &str = "0.73.1";

const CANDIDATES: [&str; 4] = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];

const HEADER: &str = "# Project Context\n\nProject-specific instructions and guidelines:\n\n";

/// How pi is started.
#[derive(Clone, Copy, Debug)]
pub struct Start<'a> {
    /// The working directory (pi names it by its physical path).
    pub cwd: &'a Path,
    /// `$HOME`.
    pub home: &'a Path,
    /// `$PI_CODING_AGENT_DIR`, when set.
    pub agent_dir: Option<&'a OsStr>,
}

/// What pi loads when started as `start` says.
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
    crate::engine::context(&Model::of(start), cwd, disk, writing)
}

/// pi in the registry: `$PI_CODING_AGENT_DIR` read from the start's
/// environment.
pub(crate) struct Registered;

impl crate::Modelled for Registered {
    fn context(
        &self,
        start: &crate::Start<'_>,
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let agent_dir = (start.env)("PI_CODING_AGENT_DIR");
        let start = Start::of(start, agent_dir.as_deref());
        context_writing(&start, disk, writing)
    }

    fn contexts(
        &self,
        tree: &crate::Tree,
        start: &crate::Start<'_>,
        disk: &crate::disk::Remembered<'_>,
    ) -> Result<Vec<crate::Shared>, ContextError> {
        let agent_dir = (start.env)("PI_CODING_AGENT_DIR");
        let start = Start::of(start, agent_dir.as_deref());
        crate::engine::contexts(&Model::of(&start), tree, disk)
    }
}

impl<'a> Start<'a> {
    /// pi started as `start` says, with `$PI_CODING_AGENT_DIR` as given.
    fn of(start: &crate::Start<'a>, agent_dir: Option<&'a OsStr>) -> Start<'a> {
        Start {
            cwd: start.cwd,
            home: start.home,
            agent_dir,
        }
    }
}

/// pi as the engine runs it: what it finds in each directory, and how
/// that makes its section.
pub(crate) struct Model {
    /// pi's own directory, as pi names it (relative to the start, if
    /// `$PI_CODING_AGENT_DIR` is).
    agent_dir: String,
    /// The names pi looks for.
    names: Vec<String>,
}

impl Model {
    /// pi started as `start` says (but for its directory).
    pub(crate) fn of(start: &Start<'_>) -> Model {
        let home = start.home.to_string_lossy();
        let agent_dir = match start.agent_dir.map(OsStr::to_string_lossy) {
            Some(dir) if dir == "~" => home.into_owned(),
            Some(dir) if dir.starts_with("~/") => format!("{home}{}", &dir[1..]),
            Some(dir) if !dir.is_empty() => dir.into_owned(),
            _ => join(&home, ".pi/agent"),
        };
        Model {
            agent_dir,
            names: CANDIDATES.map(String::from).to_vec(),
        }
    }
}

impl Layered for Model {
    type Found = DirFile;

    /// **One file per directory**: the first of these that exists.
    fn names(&self) -> Option<&[String]> {
        Some(&self.names)
    }

    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> DirFile {
        // pi names the directory by its text: a name that is not UTF-8 is
        // another path, which its listing does not answer for.
        let listing = dir.to_str().and_then(|_| disk.exact_listing(dir));
        let (mut files, mut notes) = (Vec::new(), Vec::new());
        let found = from_dir(
            disk,
            &dir.to_string_lossy(),
            listing.as_ref(),
            dir,
            Role::Project,
            &mut files,
            &mut notes,
        );
        let sent = found.map(|(path, text)| Sent {
            tokens: disk.count_split(&text),
            path,
            text,
        });
        DirFile { files, notes, sent }
    }

    fn adds_nothing(&self, found: &DirFile) -> bool {
        found.files.is_empty() && found.notes.is_empty() && found.sent.is_none()
    }

    type Above = ();

    fn above(&self, _: &Path, _: &AgentContext, _: &dyn Disk) {}

    /// pi reads every directory up to `/` by its absolute path: a start
    /// that adds nothing loads what the one above it loads, unless pi's
    /// own directory is named relative to the start.
    fn likeness(&self, _: &(), _: &Path, _: Option<&Listing>, _: &dyn Disk) -> Likeness {
        match self.agent_dir.starts_with('/') {
            true => Likeness::AddsNothing,
            false => Likeness::Own,
        }
    }

    /// **Order**: the agent directory's file, then every directory's from
    /// `/` down to the start; a path named twice is sent once.
    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &DirFile)],
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError> {
        let mut files = Vec::new();
        let mut notes = Vec::new();
        let mut sent: Vec<Sent> = Vec::new();
        let mut seen = FxHashSet::default();
        if let Some((path, text)) = from_dir(
            disk,
            &self.agent_dir,
            None,
            &cwd,
            Role::Global,
            &mut files,
            &mut notes,
        ) {
            let tokens = disk.count_split(&text);
            seen.insert(path.clone());
            sent.push(Sent { path, text, tokens });
        }
        let mut above = Vec::new();
        for (_, here) in up {
            files.extend(here.files.iter().cloned());
            notes.extend(here.notes.iter().cloned());
            if let Some(found) = &here.sent {
                if seen.insert(found.path.clone()) {
                    above.push(found.clone());
                }
            }
        }
        above.reverse();
        sent.extend(above);

        // Files in the order they are sent, then those that are not.
        let mut ordered: Vec<ContextFile> = sent
            .iter()
            .filter_map(|found| {
                let index = files.iter().position(|f: &ContextFile| {
                    f.outcome == Outcome::Loaded && f.path.as_os_str() == found.path.as_str()
                })?;
                let mut file = files.remove(index);
                file.tokens = found.tokens.tokens;
                Some(file)
            })
            .collect();
        ordered.extend(files.into_iter().filter(|f| f.outcome != Outcome::Loaded));
        let section = (!sent.is_empty()).then(|| {
            // Sized first: growing it would copy the files' texts again and again.
            let len = sent
                .iter()
                .map(|s| s.path.len() + s.text.len() + 7)
                .sum::<usize>();
            let mut text = PartWriter::new(writing, HEADER.len() + len);
            text.push(HEADER);
            for Sent {
                path,
                text: content,
                tokens,
            } in &sent
            {
                for piece in ["## ", path, "\n\n"] {
                    text.push(piece);
                }
                text.push_counted(content, *tokens);
                text.push("\n\n");
            }
            text.finish(Place::SystemPrompt)
        });
        Ok(AgentContext {
            agent: Agent::Pi,
            cwd,
            root: None,
            files: ordered,
            limit: None,
            parts: section.into_iter().collect(),
            notes,
        })
    }
}

/// A file pi sends: its path as pi names it, its text, and the text's
/// tokens.
#[derive(Clone)]
struct Sent {
    path: String,
    text: Arc<str>,
    tokens: Split,
}

/// What one directory on the way up gives pi: the same for every start
/// below it (the directory is named by its absolute path).
pub(crate) struct DirFile {
    /// The candidates looked at ([`from_dir`]'s records).
    files: Vec<ContextFile>,
    /// What pi does about them that the files do not show.
    notes: Vec<String>,
    /// The file it sends, if any.
    sent: Option<Sent>,
}

/// A directory's file (its path as pi names it, its text), recording what
/// became of each candidate looked at (none that the directory's
/// [exact listing](Disk::exact_listing), when known, lacks).
fn from_dir(
    disk: &dyn Disk,
    dir: &str,
    listing: Option<&Listing>,
    cwd: &Path,
    role: Role,
    files: &mut Vec<ContextFile>,
    notes: &mut Vec<String>,
) -> Option<(String, Arc<str>)> {
    for name in CANDIDATES {
        // A listing is known only for a plain directory path, below which
        // pi's name for the file is the same path joined.
        if absent_below(listing, Path::new(dir), name) {
            continue;
        }
        let named = join(dir, name);
        // A name is mostly absolute (pi's own directory may not be).
        let path = if named.starts_with('/') {
            Cow::Borrowed(Path::new(&named))
        } else {
            Cow::Owned(cwd.join(&named))
        };
        let Ok(meta) = disk.metadata(&path) else {
            continue;
        };
        let record = |outcome, bytes| ContextFile {
            path: PathBuf::from(&named),
            role,
            bytes,
            tokens: 0,
            outcome,
            parent: None,
        };
        if meta.file_type().is_fifo() || meta.file_type().is_char_device() {
            notes.push(format!(
                "{named} is not a regular file: pi blocks reading it and never starts"
            ));
            files.push(record(
                Outcome::Skipped(Skip::Unreadable("not a regular file".into())),
                None,
            ));
            return None;
        }
        match disk.read(&path) {
            Ok(bytes) => {
                files.push(record(Outcome::Loaded, Some(bytes.len() as u64)));
                return Some((named, Arc::from(super::lossy(&bytes))));
            }
            Err(e) => files.push(record(
                Outcome::Skipped(Skip::Unreadable(e.to_string())),
                None,
            )),
        }
    }
    None
}

/// Node's `path.posix.join(dir, name)`: joined, then `.`, `..`, doubled
/// and trailing slashes resolved by the string.
fn join(dir: &str, name: &str) -> String {
    let mut joined = String::with_capacity(dir.len() + 1 + name.len());
    for piece in [dir, "/", name] {
        joined.push_str(piece);
    }
    // As pi joins its names to every directory up to `/`, mostly there is
    // nothing to resolve.
    if super::disk::is_plain(joined.as_bytes()) {
        return joined;
    }
    node_normalize(&joined)
}

/// Node's `path.posix.normalize`, as `join` applies it.
fn node_normalize(path: &str) -> String {
    let absolute = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            ".." if absolute => {}
            part => parts.push(part),
        }
    }
    let body = parts.join("/");
    match (absolute, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".to_string(),
        (false, false) => body,
    }
}

#[cfg(test)]
mod tests {
    use super::join;

    #[test]
    fn joins_as_node_does() {
        assert_eq!(join("/home/u", ".pi/agent"), "/home/u/.pi/agent");
        assert_eq!(join("/", "AGENTS.md"), "/AGENTS.md");
        assert_eq!(join("rel//x/../a/", "AGENTS.md"), "rel/a/AGENTS.md");
        assert_eq!(join("../..", "AGENTS.md"), "../../AGENTS.md");
        assert_eq!(join("/a/../..", "AGENTS.md"), "/AGENTS.md");
        assert_eq!(join(".", "AGENTS.md"), "AGENTS.md");
    }

    /// Node leaves a plain path as it is, so `join` may too.
    #[test]
    fn a_plain_path_is_nodes_normal_form() {
        for path in promptinclude_testkit::small_paths(5) {
            if crate::disk::is_plain(path.as_bytes()) {
                assert_eq!(super::node_normalize(&path), path);
            }
        }
    }
}
