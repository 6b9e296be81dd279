//! Scanning a git revision without a checkout (`--rev`).
//!
//! A root is read as a git repository (a work tree or a bare repository);
//! the revision is resolved there and its tree is walked in the object
//! database, applying exactly the rules of the filesystem walk
//! ([`crate::discover::walk`]), so that the result is what the reference
//! gives on a fresh checkout of the revision at the root's path:
//!
//! * depth, the pruning of directories (`rel` or `rel + "/"`), `name_pattern`
//!   on file names and the patterns on files are those of the walk;
//! * a submodule (gitlink) is an empty directory: it can be pruned, it holds
//!   nothing;
//! * a symlink stored in the tree is resolved inside the tree as the kernel
//!   would resolve it in a checkout: a link to a directory is a directory
//!   (it can be pruned, it is never entered), a link to a file reads that
//!   file's blob, and a dangling link, a loop, a path through a file or a
//!   target outside the repository is a non-directory that cannot be read;
//! * executable bits make no difference;
//! * `PATH_MAX` and the reference's recursion limit are applied to the paths
//!   the checkout would have, as the filesystem walk applies them;
//! * blobs are decoded by [`crate::read::decode`] (UTF-8 with replacement,
//!   universal newlines), as the checkout's files would be (no filters:
//!   `.gitattributes` conversions such as `eol=crlf` are not applied).
//!
//! In a work tree only the committed revision is seen: uncommitted changes
//! and untracked files are not. An object missing from the repository (a
//! blob left out of a partial clone) fails the whole root with a clear
//! [`GitError`]; nothing is written to disk.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::path::Path;
use std::sync::Arc;

use gix::hash::ObjectId;
use gix::objs::tree::EntryKind;
use rayon::prelude::*;

use crate::discover::path::join_rel;
use crate::discover::rules::{self, DirRules, DirState};
use crate::discover::{sort_candidates, Candidate, Matchers};
use crate::sys::fits_path_max;

/// Most symbolic links followed while resolving one path (Linux's limit).
const MAX_LINK_HOPS: u32 = 40;

/// How many of a root's first candidates are read ahead in parallel;
/// the budget pass reads any others as it reaches them.
const READ_AHEAD: usize = 256;

/// Largest blob (bytes) read ahead: bigger ones are read only when the
/// budget pass reaches them, so read-ahead holds at most 16 MiB and a scan
/// holds one big file at a time, as on disk.
const READ_AHEAD_MAX: u64 = 64 * 1024;

/// Where a candidate's text comes from.
#[derive(Clone, Debug)]
enum Source {
    /// This blob (a file, or the file a symlink resolves to).
    Blob(ObjectId),
    /// It cannot be read in a checkout; why.
    Unreadable(String),
}

/// An entry of a tree, decoded once.
#[derive(Clone, Debug)]
struct Entry {
    name: Vec<u8>,
    kind: Kind,
    id: ObjectId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Tree,
    Gitlink,
    File,
    Link,
}

/// What a symlink resolves to inside the tree.
#[derive(Clone, Debug)]
enum Resolved {
    /// A directory (a tree, a submodule, the root).
    Dir,
    /// A file: its blob.
    File(ObjectId),
    /// A checkout could not `stat` it; why (as the error a checkout would give).
    Fails(String),
}

/// A revision's tree, opened for scanning.
pub struct RevTree {
    repo: gix::ThreadSafeRepository,
    tree: ObjectId,
}

impl std::fmt::Debug for RevTree {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RevTree").field("tree", &self.tree).finish()
    }
}

/// Whether `path` is a bare git repository (one with no work tree).
pub fn is_bare_repository(path: &Path) -> bool {
    gix::open_opts(path, gix::open::Options::isolated()).is_ok_and(|repo| repo.is_bare())
}

fn git_error(what: impl std::fmt::Display) -> GitError {
    GitError {
        message: what.to_string(),
        cause: None,
    }
}

/// A [`GitError`] saying `what`, with `cause` kept as its
/// [`source`](std::error::Error::source) (printed after it, as every error
/// chain is: [`crate::error::full_message`]).
fn caused(
    what: impl std::fmt::Display,
    cause: impl std::error::Error + Send + Sync + 'static,
) -> GitError {
    GitError {
        message: what.to_string(),
        cause: Some(Box::new(cause)),
    }
}

/// A git repository, revision or object that cannot be used (`--rev`):
/// not a repository, an unknown revision, an object missing (as in a
/// partial clone) or corrupt. The message says which, naming the
/// repository and the object; the error from git (gix) or the system, where
/// there is one, is its [`source`](std::error::Error::source).
#[derive(Debug)]
pub struct GitError {
    message: String,
    cause: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl std::fmt::Display for GitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for GitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.cause
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

impl RevTree {
    /// Opens the repository at `repo_path` (a work tree or a bare
    /// repository; not searched for upwards) and resolves `rev` to a tree.
    pub fn open(repo_path: &Path, rev: &str) -> Result<RevTree, GitError> {
        let repo = gix::open_opts(repo_path, gix::open::Options::isolated())
            .map_err(|e| caused(format!("{}: not a git repository", repo_path.display()), e))?;
        let id = repo.rev_parse_single(rev).map_err(|e| {
            // gix says "The rev-spec is malformed and misses a ref name" for
            // a HEAD that points at a branch with no commit yet.
            let unborn = repo.head().ok().filter(|head| head.is_unborn());
            match unborn {
                Some(head) => git_error(format!(
                    "{}: cannot resolve revision `{rev}`: the repository has no commits yet \
                     (HEAD is the unborn branch {})",
                    repo_path.display(),
                    head.referent_name()
                        .map_or_else(|| "?".into(), |n| n.shorten().to_string())
                )),
                None => caused(
                    format!("{}: cannot resolve revision `{rev}`", repo_path.display()),
                    e,
                ),
            }
        })?;
        let tree = id
            .object()
            .map_err(|e| missing(repo_path, e))?
            .peel_to_tree()
            .map_err(|e| {
                caused(
                    format!("{}: revision `{rev}` has no tree", repo_path.display()),
                    e,
                )
            })?
            .id;
        Ok(RevTree {
            repo: repo.into_sync(),
            tree,
        })
    }

    /// Walks the tree as the filesystem walk would walk a checkout of it at
    /// `abs_root` (absolute, lexically normalised), and returns the
    /// candidates in the reference's order with where each one's text is.
    fn discover(&self, abs_root: &[u8], matchers: &Matchers) -> Result<Discovered, GitError> {
        if matchers.max_depth <= 0 {
            return Ok(Discovered::default());
        }
        let repo = self.repo.to_thread_local();
        let mut walk = TreeWalk {
            repo: &repo,
            matchers,
            root_tree: self.tree,
            root_components: components(abs_root),
            trees: HashMap::new(),
            links: HashMap::new(),
            limits: true,
        };
        walk.prefetch(&self.repo);
        match walk.run(abs_root)? {
            Some(found) => Ok(found),
            None => {
                // The reference raises RecursionError on this tree: finish
                // the walk as its algorithm would without the limits.
                walk.limits = false;
                Ok(walk.run(abs_root)?.unwrap_or_default())
            }
        }
    }

    /// Writes the revision into the empty directory `dir` as a checkout
    /// would lay it out: files with their blobs' bytes (no filters), links
    /// with their stored targets, a submodule as an empty directory, and a
    /// `.git` directory at the top, where the agents look for the
    /// repository's root: the least git counts as a repository (a `HEAD`
    /// naming a branch, `objects`, `refs`), which Copilot CLI and opencode
    /// ask of it. For the looks only a real tree can answer (the
    /// agents' models, `diff --agents`). The checkout stands for the tree
    /// at its own `place` (its path, each spelling of it): a link whose
    /// absolute target lies in `place` is written to the same path in
    /// `dir`, as it resolves in a checkout at `place`. A name no checkout
    /// would write (`.`, `..`, `.git`, one holding `/` or NUL) is an error:
    /// nothing is ever written outside `dir`.
    pub fn write_checkout(&self, dir: &Path, place: &[&Path]) -> Result<(), GitError> {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt as _;
        let repo = self.repo.to_thread_local();
        let failed = |path: &Path, e: io::Error| {
            caused(format!("{}: cannot write the checkout", path.display()), e)
        };
        let top = dir.join(".git");
        std::fs::create_dir(&top).map_err(|e| failed(&top, e))?;
        for name in ["objects", "refs"] {
            let path = top.join(name);
            std::fs::create_dir(&path).map_err(|e| failed(&path, e))?;
        }
        let head = top.join("HEAD");
        std::fs::write(&head, "ref: refs/heads/main\n").map_err(|e| failed(&head, e))?;
        let mut pending = vec![(self.tree, dir.to_path_buf())];
        while let Some((tree, at)) = pending.pop() {
            for entry in decode_tree(&repo, tree)? {
                let name = entry.name.as_slice();
                if matches!(name, b"" | b"." | b"..")
                    || name.eq_ignore_ascii_case(b".git")
                    || name.contains(&b'/')
                    || name.contains(&0)
                {
                    return Err(git_error(format!(
                        "tree {tree}: an entry named {:?} cannot be checked out",
                        String::from_utf8_lossy(name)
                    )));
                }
                let path = at.join(OsStr::from_bytes(name));
                match entry.kind {
                    Kind::Tree => {
                        std::fs::create_dir(&path).map_err(|e| failed(&path, e))?;
                        pending.push((entry.id, path));
                    }
                    Kind::Gitlink => std::fs::create_dir(&path).map_err(|e| failed(&path, e))?,
                    Kind::File => {
                        let bytes = Self::read_blob(&repo, entry.id)?;
                        std::fs::write(&path, bytes).map_err(|e| failed(&path, e))?;
                    }
                    Kind::Link => {
                        let target = Self::read_blob(&repo, entry.id)?;
                        let target = Path::new(OsStr::from_bytes(&target));
                        let moved = place
                            .iter()
                            .find_map(|p| target.strip_prefix(p).ok())
                            .map(|rest| dir.join(rest));
                        std::os::unix::fs::symlink(moved.as_deref().unwrap_or(target), &path)
                            .map_err(|e| failed(&path, e))?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Reads a blob's bytes; a missing object is an error for the root.
    fn read_blob(repo: &gix::Repository, id: ObjectId) -> Result<Vec<u8>, GitError> {
        let object = repo.find_object(id).map_err(|e| missing(repo.path(), e))?;
        if object.kind != gix::objs::Kind::Blob {
            return Err(git_error(format!(
                "{}: object {id} is a {}, not a blob",
                repo.path().display(),
                object.kind
            )));
        }
        Ok(object.detach().data)
    }
}

/// The entries of tree object `id`.
fn decode_tree(repo: &gix::Repository, id: ObjectId) -> Result<Vec<Entry>, GitError> {
    let object = repo.find_object(id).map_err(|e| missing(repo.path(), e))?;
    let tree = gix::objs::TreeRef::from_bytes(&object.data, repo.object_hash())
        .map_err(|e| caused(format!("tree {id}"), e))?;
    Ok(tree
        .entries
        .iter()
        .map(|e| Entry {
            name: e.filename.to_vec(),
            kind: match e.mode.kind() {
                EntryKind::Tree => Kind::Tree,
                EntryKind::Commit => Kind::Gitlink,
                EntryKind::Link => Kind::Link,
                EntryKind::Blob | EntryKind::BlobExecutable => Kind::File,
            },
            id: e.oid.to_owned(),
        })
        .collect())
}

fn missing(repo: &Path, e: impl std::error::Error + Send + Sync + 'static) -> GitError {
    caused(
        format!(
            "{}: cannot read an object (missing from a partial or shallow clone, or corrupt)",
            repo.display()
        ),
        e,
    )
}

/// The candidates of a tree and where their text is.
#[derive(Default)]
struct Discovered {
    candidates: Vec<Candidate>,
    sources: HashMap<Vec<u8>, Source>,
}

/// Starts following `target` from the directory `current`: an absolute
/// target starts from `/`; its parts come before the `rest` still to follow.
fn start(current: &mut Vec<Vec<u8>>, rest: &mut VecDeque<Vec<u8>>, target: &[u8]) {
    if target.starts_with(b"/") {
        current.clear();
    }
    for part in target.split(|&b| b == b'/').rev() {
        rest.push_front(part.to_vec());
    }
}

/// The components of an absolute path (`/` is none).
fn components(path: &[u8]) -> Vec<Vec<u8>> {
    path.split(|&b| b == b'/')
        .filter(|c| !c.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

struct TreeWalk<'r, 'm> {
    repo: &'r gix::Repository,
    matchers: &'m Matchers,
    root_tree: ObjectId,
    root_components: Vec<Vec<u8>>,
    trees: HashMap<ObjectId, Arc<Vec<Entry>>>,
    links: HashMap<ObjectId, Vec<u8>>,
    /// Whether `PATH_MAX` and the recursion limit apply (off when the
    /// reference raises and the walk is redone).
    limits: bool,
}

/// One directory to visit.
struct DirItem {
    /// The tree, or `None` for a submodule (an empty directory).
    tree: Option<ObjectId>,
    full: Vec<u8>,
    /// Relative to the root, as the matchers see it.
    rel: String,
    /// Relative to the root, raw components.
    components: Vec<Vec<u8>>,
    depth: i64,
    /// Only listed (a directory at exactly `max_depth`, for the recursion
    /// check): its entries are not taken.
    blocked: bool,
}

impl TreeWalk<'_, '_> {
    fn entries(&mut self, id: ObjectId) -> Result<Arc<Vec<Entry>>, GitError> {
        if let Some(entries) = self.trees.get(&id) {
            return Ok(Arc::clone(entries));
        }
        let entries = Arc::new(decode_tree(self.repo, id)?);
        self.trees.insert(id, Arc::clone(&entries));
        Ok(entries)
    }

    /// Decodes the trees the walk will enter (below `max_depth`, not pruned
    /// by the patterns) level by level, each level in parallel with one
    /// repository handle per rayon job, so that the walk, which must go in
    /// order, finds them decoded. Only a cache: a tree that cannot be read
    /// here is left for the walk to report.
    fn prefetch(&mut self, repo: &gix::ThreadSafeRepository) {
        let max_depth = self.matchers.max_depth;
        let mut level = vec![(self.root_tree, String::new(), 0i64)];
        while !level.is_empty() {
            let decoded: Vec<Option<Vec<Entry>>> = level
                .par_iter()
                .map_init(
                    || repo.to_thread_local(),
                    |repo, (id, _, _)| decode_tree(repo, *id).ok(),
                )
                .collect();
            let mut next = Vec::new();
            for ((id, rel, depth), entries) in level.into_iter().zip(decoded) {
                let Some(entries) = entries else { continue };
                for entry in entries.iter().filter(|e| e.kind == Kind::Tree) {
                    if depth + 1 >= max_depth || self.trees.contains_key(&entry.id) {
                        continue;
                    }
                    let child = join_rel(&rel, &entry.name);
                    if !self.matchers.is_dir_pruned(&child) {
                        next.push((entry.id, child, depth + 1));
                    }
                }
                self.trees.insert(id, Arc::new(entries));
            }
            next.sort_unstable_by_key(|(id, _, _)| *id);
            next.dedup_by_key(|(id, _, _)| *id);
            level = next;
        }
    }

    fn link_target(&mut self, id: ObjectId) -> Result<Vec<u8>, GitError> {
        if let Some(target) = self.links.get(&id) {
            return Ok(target.clone());
        }
        let target = RevTree::read_blob(self.repo, id)?;
        self.links.insert(id, target.clone());
        Ok(target)
    }

    /// The entries of the directory at `components` below the root (all
    /// of them trees or submodules), or `None` if it is not one.
    fn dir_entries(&mut self, components: &[Vec<u8>]) -> Result<Option<Arc<Vec<Entry>>>, GitError> {
        let mut entries = self.entries(self.root_tree)?;
        for name in components {
            let Some(entry) = entries.iter().find(|e| &e.name == name).cloned() else {
                return Ok(None);
            };
            entries = match entry.kind {
                Kind::Tree => self.entries(entry.id)?,
                Kind::Gitlink => Arc::new(Vec::new()),
                _ => return Ok(None),
            };
        }
        Ok(Some(entries))
    }

    /// Resolves the symlink whose target is `target`, stored in the
    /// directory at `dir` (components below the root), as the kernel would
    /// in a checkout at the root's path.
    fn resolve(&mut self, dir: &[Vec<u8>], target: &[u8]) -> Result<Resolved, GitError> {
        let root_len = self.root_components.len();
        let mut current: Vec<Vec<u8>> = self.root_components.clone();
        current.extend(dir.iter().cloned());
        let mut rest: VecDeque<Vec<u8>> = VecDeque::new();
        let mut hops = 1;
        if target.is_empty() {
            return Ok(Resolved::Fails(
                "No such file or directory (empty link)".into(),
            ));
        }
        start(&mut current, &mut rest, target);
        while let Some(part) = rest.pop_front() {
            match &part[..] {
                b"" | b"." => continue,
                b".." => {
                    current.pop();
                    continue;
                }
                _ => {}
            }
            let inside =
                current.len() >= root_len && current[..root_len] == self.root_components[..];
            if !inside {
                current.push(part);
                continue;
            }
            let Some(entries) = self.dir_entries(&current[root_len..])? else {
                return Ok(Resolved::Fails("Not a directory".into()));
            };
            let Some(entry) = entries.iter().find(|e| e.name == part).cloned() else {
                return Ok(Resolved::Fails(
                    "No such file or directory (dangling symlink)".into(),
                ));
            };
            match entry.kind {
                Kind::Tree | Kind::Gitlink => current.push(part),
                Kind::File => {
                    return Ok(if rest.is_empty() {
                        Resolved::File(entry.id)
                    } else {
                        Resolved::Fails("Not a directory".into())
                    });
                }
                Kind::Link => {
                    hops += 1;
                    if hops > MAX_LINK_HOPS {
                        return Ok(Resolved::Fails("Too many levels of symbolic links".into()));
                    }
                    let target = self.link_target(entry.id)?;
                    if target.is_empty() {
                        return Ok(Resolved::Fails(
                            "No such file or directory (empty link)".into(),
                        ));
                    }
                    start(&mut current, &mut rest, &target);
                }
            }
        }
        let inside = current.len() >= root_len && current[..root_len] == self.root_components[..];
        if inside {
            Ok(Resolved::Dir)
        } else {
            Ok(Resolved::Fails(
                "symbolic link to outside the repository: not read".into(),
            ))
        }
    }

    /// The walk; `None` when the reference raises `RecursionError` on this
    /// tree (only with the limits on).
    fn run(&mut self, abs_root: &[u8]) -> Result<Option<Discovered>, GitError> {
        let mut found = Discovered::default();
        let mut stack = vec![DirItem {
            tree: Some(self.root_tree),
            full: abs_root.to_vec(),
            rel: String::new(),
            components: Vec::new(),
            depth: 0,
            blocked: false,
        }];
        while let Some(dir) = stack.pop() {
            // A directory whose path is too long is listed by its parent
            // but never walked.
            if self.limits && !fits_path_max(&dir.full) {
                continue;
            }
            let entries = match dir.tree {
                Some(id) => self.entries(id)?,
                None => Arc::new(Vec::new()),
            };
            // Every directory on the stack is one os.walk lists: walked, or
            // at exactly max_depth and not pruned.
            let state = DirState {
                full: &dir.full,
                depth: dir.depth,
                blocked: dir.blocked,
                listed_by_reference: true,
            };
            let rules = DirRules::new(self.matchers, state, self.limits, false);
            let (separator, descend, check_recursion) =
                (rules.separator, rules.descend, rules.check_recursion);
            for entry in entries.iter() {
                let name = &entry.name[..];
                let (is_dir, is_link, stat_failed, resolved) = self.classify(&dir, entry)?;
                if check_recursion && stat_failed {
                    return Ok(None);
                }
                if is_dir {
                    if dir.blocked {
                        continue;
                    }
                    if !rules.visits_subdir(is_link) {
                        continue;
                    }
                    let rel = join_rel(&dir.rel, name);
                    let pruned = self.matchers.is_dir_pruned(&rel);
                    if !descend {
                        // Listed by os.walk (exactly max_depth), for the
                        // recursion check only.
                        if !pruned {
                            stack.push(self.child(&dir, separator, entry, rel, true));
                        }
                        continue;
                    }
                    if pruned {
                        continue;
                    }
                    if check_recursion {
                        return Ok(None);
                    }
                    if !is_link {
                        stack.push(self.child(&dir, separator, entry, rel, false));
                    }
                } else if !dir.blocked && self.matchers.takes_file(&dir.rel, name) {
                    let full = [&dir.full[..], separator, name].concat();
                    let source = self.source_of(entry, resolved, &full);
                    let candidate = if self.limits {
                        Candidate::new(full.clone())
                    } else {
                        Candidate::new_piecewise(full.clone())
                    };
                    found.candidates.push(candidate);
                    found.sources.insert(full, source);
                }
            }
        }
        sort_candidates(&mut found.candidates);
        Ok(Some(found))
    }

    /// `(is a directory, is a link, stat failed, resolved target)` for an
    /// entry of `dir`, as `os.walk` and `open` would see it in a checkout.
    fn classify(
        &mut self,
        dir: &DirItem,
        entry: &Entry,
    ) -> Result<(bool, bool, bool, Option<Resolved>), GitError> {
        let fits = rules::fits(&dir.full, &entry.name, self.limits);
        Ok(match entry.kind {
            Kind::Tree | Kind::Gitlink => (true, false, false, None),
            Kind::File => (false, false, false, None),
            Kind::Link if !fits => (
                false,
                true,
                true,
                Some(Resolved::Fails("File name too long".into())),
            ),
            Kind::Link => {
                let target = self.link_target(entry.id)?;
                match self.resolve(&dir.components, &target)? {
                    Resolved::Dir => (true, true, false, None),
                    r @ Resolved::File(_) => (false, true, false, Some(r)),
                    r @ Resolved::Fails(_) => (false, true, true, Some(r)),
                }
            }
        })
    }

    /// Where the text of the candidate `entry` (full path `full`) is.
    fn source_of(&self, entry: &Entry, resolved: Option<Resolved>, full: &[u8]) -> Source {
        if self.limits && !fits_path_max(full) {
            return Source::Unreadable(
                io::Error::from_raw_os_error(libc::ENAMETOOLONG).to_string(),
            );
        }
        match (entry.kind, resolved) {
            (Kind::File, _) => Source::Blob(entry.id),
            (_, Some(Resolved::File(id))) => Source::Blob(id),
            (_, Some(Resolved::Fails(why))) => Source::Unreadable(why),
            _ => Source::Unreadable("not a regular file".into()),
        }
    }

    fn child(
        &self,
        dir: &DirItem,
        separator: &[u8],
        entry: &Entry,
        rel: String,
        blocked: bool,
    ) -> DirItem {
        let mut components = dir.components.clone();
        components.push(entry.name.clone());
        DirItem {
            tree: (entry.kind == Kind::Tree).then_some(entry.id),
            full: [&dir.full[..], separator, &entry.name[..]].concat(),
            rel,
            components,
            depth: dir.depth + separator.len() as i64,
            blocked,
        }
    }
}

/// A revision's candidates, discovered, with the repository to read them from.
pub struct RevSnapshot {
    tree: RevTree,
    discovered: Discovered,
    repo: gix::Repository,
    blobs: HashMap<ObjectId, Vec<u8>>,
}

impl std::fmt::Debug for RevSnapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RevSnapshot")
            .field("tree", &self.tree)
            .field("candidates", &self.discovered.candidates.len())
            .finish()
    }
}

impl RevSnapshot {
    /// Opens revision `rev` of the repository at `abs_root` (made absolute
    /// as the scan makes roots absolute) and discovers its candidates with
    /// `matchers`, applying the walk's rules (see the module docs).
    pub fn open(abs_root: &Path, rev: &str, matchers: &Matchers) -> Result<RevSnapshot, GitError> {
        let tree = RevTree::open(abs_root, rev)?;
        let discovered = tree.discover(abs_root.as_os_str().as_encoded_bytes(), matchers)?;
        let repo = tree.repo.to_thread_local();
        Ok(RevSnapshot {
            tree,
            discovered,
            repo,
            blobs: HashMap::new(),
        })
    }

    /// The candidates, in the reference's order.
    pub fn candidates(&self) -> &[Candidate] {
        &self.discovered.candidates
    }

    /// Reads the first candidates' blobs in parallel, one repository
    /// handle per rayon job, for [`RevSnapshot::read`] to hand out; a blob
    /// over READ_AHEAD_MAX is left to be read when asked for (a missing or
    /// non-blob object is read, to fail as it would then).
    pub(crate) fn read_ahead(&mut self) -> Result<(), GitError> {
        let sources = &self.discovered.sources;
        let blob_of = |c: &Candidate| match sources.get(c.as_bytes()) {
            Some(Source::Blob(id)) => Some(*id),
            _ => None,
        };
        let candidates = &self.discovered.candidates;
        let ahead: Vec<Result<Option<Vec<u8>>, GitError>> = candidates
            .par_iter()
            .take(READ_AHEAD)
            .filter_map(blob_of)
            .map_init(
                || self.tree.repo.to_thread_local(),
                |repo, id| match repo.find_header(id) {
                    Ok(h) if h.kind() == gix::objs::Kind::Blob && h.size() > READ_AHEAD_MAX => {
                        Ok(None)
                    }
                    _ => RevTree::read_blob(repo, id).map(Some),
                },
            )
            .collect();
        let ids = candidates.iter().take(READ_AHEAD).filter_map(blob_of);
        for (id, bytes) in ids.zip(ahead) {
            if let Some(bytes) = bytes? {
                self.blobs.insert(id, bytes);
            }
        }
        Ok(())
    }

    /// The bytes of a candidate, as reading it in a checkout would give
    /// them (`Err` for what a checkout could not read); a missing object
    /// is a [`GitError`].
    pub fn read(&mut self, candidate: &Candidate) -> Result<io::Result<Vec<u8>>, GitError> {
        Ok(match self.discovered.sources.get(candidate.as_bytes()) {
            // Taken, not copied, out of the read-ahead: a candidate is read
            // once (another one with the same blob reads it again).
            Some(Source::Blob(id)) => match self.blobs.remove(id) {
                Some(bytes) => Ok(bytes),
                None => Ok(RevTree::read_blob(&self.repo, *id)?),
            },
            Some(Source::Unreadable(why)) => Err(io::Error::other(why.clone())),
            None => Err(io::Error::other("not in the tree")),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::error::Error as _;

    use super::RevTree;

    /// The message names the repository and what failed; gix's own error
    /// is its cause, printed after it once.
    #[test]
    fn an_error_keeps_gixs_error_as_its_source() {
        let dir = tempfile::tempdir().unwrap();
        let e = RevTree::open(dir.path(), "HEAD").unwrap_err();
        assert!(e.to_string().ends_with(": not a git repository"), "{e}");
        let cause = e.source().expect("a cause").to_string();
        let full = crate::error::full_message(&e);
        assert!(full.starts_with(&format!("{e}: {cause}")), "{full}");
        assert_eq!(full.matches(&cause).count(), 1, "{full}");
    }
}
