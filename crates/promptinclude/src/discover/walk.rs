//! The parallel directory walk, shared by the scan and the audit.
//!
//! Each directory is one work item on the shared rayon pool, so many roots
//! and wide trees keep every thread busy. A directory costs one `openat`,
//! the directory reads and one `close` (see `crate::sys`). The `openat`
//! is relative to the parent's handle, which stays open until its last
//! subdirectory has been opened, so the kernel resolves one name instead of
//! the whole path (path resolution fell from 5.5% to 1.4% of W2's profile);
//! at most `MAX_HELD_PARENTS` handles are held this way, and past that a
//! directory is opened by its full path. Entry types
//! come from `d_type`, and only symlinks (and file systems without `d_type`)
//! are `stat`ed, relative to the open directory, to learn whether they point
//! at a directory, as `os.walk`'s `is_dir()` does. The walk keeps no
//! recursion on the stack: each directory is a task.
//!
//! Semantics reproduced from `os.walk(root, topdown=True)` on CPython 3.11
//! plus the reference's pruning:
//! * a directory whose depth is `>= max_depth` contributes nothing (so it is
//!   never opened);
//! * a symlink to a directory is a directory (it can be pruned) but is never
//!   entered;
//! * an unreadable directory is silently skipped, and an error while listing
//!   one drops the whole directory, as `os.walk` returns early;
//! * a subdirectory is pruned if the spec matches `rel` or `rel + "/"`;
//!   a non-directory is a candidate if its name matches `name_pattern` and
//!   the spec does not match `rel`.
//!
//! **`PATH_MAX`.** The reference hands whole paths to the kernel, so (with
//! `PATH_MAX` = 4096 counting the NUL) a directory whose path has 4096 bytes
//! or more is listed by its parent as a directory but never walked
//! (`scandir` fails, `os.walk` drops it silently); a symlink or an entry
//! without `d_type` whose path is that long is not a directory (`is_dir()`
//! cannot `stat` it), so it is a candidate if its name matches; and a
//! candidate that long is unreadable. The walk reproduces each of these.
//!
//! **Recursion.** CPython 3.11's `os.walk` recurses once per directory
//! level, so the reference raises `RecursionError` on deep trees. Measured
//! with the real scanner called from a top-level script (the default
//! recursion limit of 1000; see `tests/path_max.rs`), it raises exactly when
//! a directory at depth `RECURSION_DIR_DEPTH` (995) that `os.walk` lists
//! (its depth is `<= max_depth`) holds either
//! * an entry whose `is_dir()` must `stat` and fails (a broken or looping
//!   symlink, one whose path is too long), or
//! * when `995 < max_depth`, a directory or symlink to one that the patterns
//!   do not prune (so `os.walk` goes on to it).
//!
//! Where the reference raises it defines no answer, and we finish the walk
//! as its algorithm would without the limits: the tree is walked again with
//! paths of any length opened piecewise through directory handles, and the
//! candidates are read the same way (`Candidate::reads_piecewise`).
//!
//! **One walk for the audit.** A [`Visitor`] with `EXHAUSTIVE = true` makes
//! the same walk also go where the scan does not (pruned and too-deep
//! subtrees, except `.git` directories there) and report every file the
//! scan did not take and every directory it could not list. With the scan's
//! `NoVisitor` all of that compiles away.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::rules::{self, DirRules, DirState};
use super::{path::join_rel, sort_candidates, Candidate, Matchers};
use crate::sys::{self, Entries, EntryKind, Stamp};

thread_local! {
    /// A directory's entries as the walk lists them for a visitor that keeps
    /// listings ([`Visitor::listed`]): one buffer per thread, reused.
    static ENTRIES: std::cell::Cell<Entries> = std::cell::Cell::new(Entries::default());
}

/// The most name bytes [`ENTRIES`] keeps between directories.
const KEPT_ENTRIES_BYTES: usize = 1 << 20;

/// Why a directory's files are out of the scan's reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Blocked {
    /// It is (or is below) the directory `dir` (relative to the root; `""`
    /// is the root), whose depth `depth` is `>= max_depth`.
    TooDeep {
        /// The outermost directory that is too deep.
        dir: String,
        /// Its depth (root = 0).
        depth: i64,
    },
    /// It is (or is below) the directory `dir`, which the patterns prune.
    Pruned {
        /// The pruned directory, relative to the root.
        dir: String,
    },
}

/// A listed directory, as a [`Visitor`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct DirView<'a> {
    /// Its full path.
    pub full: &'a [u8],
    /// Its path relative to the root, as the patterns see it.
    pub rel: &'a str,
    /// Why the scan does not take its files, if it does not.
    pub blocked: Option<&'a Blocked>,
}

impl DirView<'_> {
    /// The full path of the entry `name` in this directory.
    pub(crate) fn child_full(&self, name: &[u8]) -> Vec<u8> {
        let separator: &[u8] = if self.full.ends_with(b"/") { b"" } else { b"/" };
        [self.full, separator, name].concat()
    }
}

/// What the walk reports beyond the candidates. Only called when
/// `EXHAUSTIVE`; the scan's `NoVisitor` pays nothing.
pub trait Visitor: Sync {
    /// Whether the walk also goes where the scan does not look and reports.
    const EXHAUSTIVE: bool;

    /// A non-directory entry `name` of `dir` that the scan does not take
    /// (it does not match, a pattern drops it, or `dir` is blocked). Not
    /// called inside `.git` directories.
    fn file(&self, dir: DirView<'_>, name: &[u8]);

    /// A directory the scan would walk but cannot list (`error` says why:
    /// permission, a path of `PATH_MAX` bytes or more, an I/O error).
    fn unreadable_dir(&self, full: &[u8], rel: &str, error: &io::Error);

    /// Whether the walk hands each listing to [`Visitor::listed`].
    fn wants_listings(&self) -> bool {
        false
    }

    /// Every entry of the directory `full` with its `d_type`, in the
    /// system's order, when it was listed whole (only if
    /// [`Visitor::wants_listings`]).
    fn listed(&self, full: &[u8], entries: &Entries) {
        let _ = (full, entries);
    }
}

/// The scan's visitor: reports nothing.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct NoVisitor;

impl Visitor for NoVisitor {
    const EXHAUSTIVE: bool = false;
    fn file(&self, _: DirView<'_>, _: &[u8]) {}
    fn unreadable_dir(&self, _: &[u8], _: &str, _: &io::Error) {}
}

/// One directory to visit.
#[derive(Clone)]
pub(crate) struct DirItem {
    /// Full path bytes.
    full: Vec<u8>,
    /// Path relative to the root with `/` separators, in the form the
    /// matchers see (undecodable bytes replaced by stand-in characters).
    rel: String,
    /// `dirpath[len(root):].count("/")` in the reference.
    depth: i64,
    /// The parent directory's open handle, to open this one relative to
    /// (its name is the last component of `full`); `None` for the root and
    /// when no handle could be held.
    parent: Option<Arc<HeldParent>>,
    /// Why its files are not candidates; `None` where the scan looks.
    blocked: Option<Arc<Blocked>>,
    /// Whether `os.walk` lists it (the scan's directories, and those at
    /// exactly `max_depth` that are not pruned).
    listed_by_reference: bool,
    /// Inside a `.git` directory: nothing is reported.
    quiet: bool,
}

/// Most directory handles held open for opening subdirectories relative to
/// them, across all walks in the process. Well below common descriptor
/// limits (1024), and more than the walk's frontier needs on two cores.
const MAX_HELD_PARENTS: usize = 256;

/// Handles currently held as [`HeldParent`]s.
static HELD_PARENTS: AtomicUsize = AtomicUsize::new(0);

/// An open directory kept for its subdirectories' relative opens; closed,
/// and its slot in [`HELD_PARENTS`] given back, when the last one is opened.
struct HeldParent(OwnedFd);

impl HeldParent {
    /// Holds `fd` if fewer than [`MAX_HELD_PARENTS`] handles are held.
    fn try_hold(fd: OwnedFd) -> Option<Arc<HeldParent>> {
        let held = HELD_PARENTS.fetch_add(1, Ordering::Relaxed);
        if held >= MAX_HELD_PARENTS {
            HELD_PARENTS.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        Some(Arc::new(HeldParent(fd)))
    }
}

impl Drop for HeldParent {
    fn drop(&mut self) {
        HELD_PARENTS.fetch_sub(1, Ordering::Relaxed);
    }
}

struct Walk<'m, V> {
    matchers: &'m Matchers,
    visitor: V,
    /// What a live index remembers of directories listed before.
    memo: Option<&'m dyn DirMemo>,
    /// Walking past `PATH_MAX` (after the reference would have raised).
    piecewise: bool,
    /// The reference raises `RecursionError` on this tree.
    raises: AtomicBool,
    found: Mutex<Vec<Candidate>>,
}

/// What listing one directory gave the scan's walk: its candidates and
/// the subdirectories to visit next.
#[derive(Clone)]
pub(crate) struct KeptListing {
    pub(crate) files: Vec<Candidate>,
    subdirs: Vec<DirItem>,
}

/// The memory of a live index ([`crate::index`]): directories listed by an
/// earlier walk whose listing it still vouches for. The walk asks it before
/// opening a directory, and hands it every listing it makes.
pub(crate) trait DirMemo: Sync {
    /// The listing of `full` kept from an earlier walk, if nothing changed
    /// in it since.
    fn recall(&self, full: &[u8]) -> Option<KeptListing>;
    /// Called before `full` is opened and listed, so that a change made
    /// while it is listed is not missed (it is watched first). Whether
    /// what the listing gives may be kept at all.
    fn before_listing(&self, full: &[u8]) -> bool;
    /// What listing `full` (open as `fd`) gave, when `before_listing` said
    /// it may be kept, and what its symbolic links mean to it (a link's
    /// target can change with no event in `full`).
    fn listed(&self, full: &[u8], fd: &OwnedFd, listing: KeptListing, links: ListingLinks);
}

/// A symbolic link whose target decides what its directory's listing
/// gives. Its name is one the scan takes as a candidate, so it is a
/// candidate while its target is a file or nothing at all, and not one
/// while its target is a directory (the walk never enters a link).
#[derive(Clone, Debug)]
pub(crate) struct DecidingLink {
    /// The link's full path.
    pub(crate) full: Vec<u8>,
    /// What `stat` through it gave when the directory was listed.
    pub(crate) target: Result<Stamp, i32>,
}

/// What the symbolic links of a listed directory mean to its listing.
///
/// A link whose name the scan would not take (`name_pattern`, or a pattern
/// that drops it) changes nothing, whatever it points at: as a directory
/// it is never entered, as a file it is not taken, and a failed `stat`
/// matters only to the recursion check. Only the links named here can.
#[derive(Debug, Default)]
pub(crate) struct ListingLinks {
    /// Links whose targets decide what the listing gives, each vouched for
    /// by one `stat`.
    pub(crate) deciding: Vec<DecidingLink>,
    /// Links that change nothing, whatever they point at.
    pub(crate) free: usize,
    /// A link at the depth where the reference's recursion limit applies:
    /// whether it makes the reference raise depends on its target, and the
    /// walk does not keep that to compare.
    pub(crate) unverifiable: bool,
}

/// What the walk learns of one directory entry.
struct EntryType {
    is_dir: bool,
    is_link: bool,
    /// `os.walk`'s `is_dir()` raised inside (a `stat` that failed).
    stat_failed: bool,
    /// For a link, what `stat` through it gave (`None` when its path is
    /// too long to `stat`: what it is then cannot change).
    target: Option<Result<Stamp, i32>>,
}

/// [`discover`] for a live index: directories `memo` recalls are not
/// listed again, and every listing is handed to it. `None` where the
/// reference raises on this tree (the caller walks it with [`discover`]).
pub(crate) fn discover_with_memo(
    root: &[u8],
    matchers: &Matchers,
    memo: &dyn DirMemo,
) -> Option<Vec<Candidate>> {
    if matchers.max_depth <= 0 {
        return Some(Vec::new());
    }
    walk_once(root, matchers, NoVisitor, false, Some(memo))
        .ok()
        .map(|(found, _)| found)
}

/// Walks the tree under `root` (an absolute, lexically normalised directory
/// path) and returns its candidates in the reference's order.
///
/// Runs on the current rayon pool; call it from inside `ThreadPool::install`
/// to choose the pool.
pub fn discover(root: &[u8], matchers: &Matchers) -> Vec<Candidate> {
    if matchers.max_depth <= 0 {
        return Vec::new();
    }
    walk_with(root, matchers, || NoVisitor).0
}

/// [`discover`], also reporting to a visitor made by `make_visitor` (made
/// again if the walk must be redone piecewise; the one of the final walk is
/// returned).
pub(crate) fn walk_with<V: Visitor>(
    root: &[u8],
    matchers: &Matchers,
    make_visitor: impl Fn() -> V,
) -> (Vec<Candidate>, V) {
    let first = walk_once(root, matchers, make_visitor(), false, None);
    match first {
        Ok(done) => done,
        Err(()) => walk_once(root, matchers, make_visitor(), true, None)
            .unwrap_or_else(|()| unreachable!("a piecewise walk never gives up")),
    }
}

/// One walk; `Err` when it finds that the reference raises (only when not
/// `piecewise`).
fn walk_once<V: Visitor>(
    root: &[u8],
    matchers: &Matchers,
    visitor: V,
    piecewise: bool,
    memo: Option<&dyn DirMemo>,
) -> Result<(Vec<Candidate>, V), ()> {
    let walk = Walk {
        matchers,
        visitor,
        memo,
        piecewise,
        raises: AtomicBool::new(false),
        found: Mutex::new(Vec::new()),
    };
    let blocked = (matchers.max_depth <= 0).then(|| {
        Arc::new(Blocked::TooDeep {
            dir: String::new(),
            depth: 0,
        })
    });
    if blocked.is_some() && !V::EXHAUSTIVE {
        return Ok((Vec::new(), walk.visitor));
    }
    let root = DirItem {
        full: root.to_vec(),
        rel: String::new(),
        depth: 0,
        parent: None,
        listed_by_reference: blocked.is_none() || matchers.max_depth == 0,
        blocked,
        quiet: false,
    };
    rayon::scope(|scope| walk.visit(scope, root));
    if walk.raises.load(Ordering::Relaxed) {
        return Err(());
    }
    let mut found = walk.found.into_inner().unwrap_or_else(|e| e.into_inner());
    sort_candidates(&mut found);
    Ok((found, walk.visitor))
}

/// What [`Walk::visit`] decides once per directory, before listing it.
struct DirPlan<'d> {
    dir: &'d DirItem,
    rules: DirRules,
}

/// What listing one directory collected.
#[derive(Default)]
struct Listing {
    /// The reference would raise (RecursionError) here.
    raises: bool,
    files: Vec<Candidate>,
    subdirs: Vec<DirItem>,
}

impl<'m, V: Visitor> Walk<'m, V> {
    fn open(&self, dir: &mut DirItem) -> io::Result<OwnedFd> {
        if !self.piecewise && !sys::fits_path_max(&dir.full) {
            return Err(io::Error::from_raw_os_error(libc::ENAMETOOLONG));
        }
        match dir.parent.take() {
            Some(parent) => {
                let name_start = dir
                    .full
                    .iter()
                    .rposition(|&b| b == b'/')
                    .map_or(0, |i| i + 1);
                sys::open_dir_at(&parent.0, &dir.full[name_start..])
            }
            None => sys::open_dir(&dir.full, self.piecewise),
        }
    }

    /// Whether `os.walk` (given the full path `len` bytes long) can `stat`
    /// the entry: a path too long for the kernel cannot be.
    fn fits(&self, dir: &DirItem, name: &[u8]) -> bool {
        rules::fits(&dir.full, name, !self.piecewise)
    }

    fn visit<'s>(&'s self, scope: &rayon::Scope<'s>, mut dir: DirItem) {
        if self.raises.load(Ordering::Relaxed) {
            return;
        }
        if let Some(memo) = self.memo {
            if let Some(kept) = memo.recall(&dir.full) {
                self.found_files(kept.files);
                for sub in kept.subdirs {
                    scope.spawn(move |scope| self.visit(scope, sub));
                }
                return;
            }
        }
        let keep = self.memo.is_some_and(|memo| memo.before_listing(&dir.full));
        let fd = match self.open(&mut dir) {
            Ok(fd) => fd,
            Err(e) => {
                if V::EXHAUSTIVE && dir.blocked.is_none() {
                    self.visitor.unreadable_dir(&dir.full, &dir.rel, &e);
                }
                return;
            }
        };
        let plan = self.plan(&dir);
        let mut found = Listing::default();
        let mut links = ListingLinks::default();
        // The thread's buffer, taken (a visit that runs while this one waits
        // finds it empty and grows its own): a listing is then copied once
        // at its size, not grown entry by entry in every directory.
        let mut entries = (V::EXHAUSTIVE && self.visitor.wants_listings()).then(|| {
            let mut entries = ENTRIES.take();
            entries.clear();
            entries
        });
        let listed = sys::read_dir(&fd, |name, kind| {
            if let Some(entries) = &mut entries {
                entries.push(name, kind);
            }
            let entry = self.classify(&fd, &dir, name, kind);
            if plan.rules.check_recursion && entry.stat_failed {
                found.raises = true;
            }
            if entry.is_link && self.memo.is_some() {
                self.on_link(&plan, name, &entry, &mut links);
            }
            if entry.is_dir {
                self.on_subdir(&plan, name, entry.is_link, &mut found);
            } else {
                self.on_file(&plan, name, &mut found.files);
            }
        });
        let Listing {
            raises,
            files,
            mut subdirs,
        } = found;
        if raises {
            self.raises.store(true, Ordering::Relaxed);
            return;
        }
        // os.walk abandons the whole directory when listing fails midway.
        if let Err(e) = listed {
            if V::EXHAUSTIVE && dir.blocked.is_none() {
                self.visitor.unreadable_dir(&dir.full, &dir.rel, &e);
            }
            return;
        }
        if let Some(entries) = entries {
            self.visitor.listed(&dir.full, &entries);
            // Kept for the next directory, unless a huge one grew it.
            if entries.names.capacity() <= KEPT_ENTRIES_BYTES {
                ENTRIES.set(entries);
            }
        }
        if let Some(memo) = self.memo.filter(|_| keep) {
            let listing = KeptListing {
                files: files.clone(),
                subdirs: subdirs.clone(),
            };
            memo.listed(&dir.full, &fd, listing, links);
        }
        if !subdirs.is_empty() {
            if let Some(held) = HeldParent::try_hold(fd) {
                for sub in &mut subdirs {
                    sub.parent = Some(Arc::clone(&held));
                }
            }
        }
        self.found_files(files);
        for sub in subdirs {
            scope.spawn(move |scope| self.visit(scope, sub));
        }
    }

    /// Adds one directory's candidates to the walk's.
    fn found_files(&self, mut files: Vec<Candidate>) {
        if !files.is_empty() {
            self.found
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .append(&mut files);
        }
    }

    /// What is decided once per directory, before listing it.
    fn plan<'d>(&self, dir: &'d DirItem) -> DirPlan<'d> {
        let state = DirState {
            full: &dir.full,
            depth: dir.depth,
            blocked: dir.blocked.is_some(),
            listed_by_reference: dir.listed_by_reference,
        };
        DirPlan {
            dir,
            rules: DirRules::new(self.matchers, state, !self.piecewise, V::EXHAUSTIVE),
        }
    }

    /// What an entry of `dir` is, with a `stat` only where its type needs
    /// one (a link, or no `d_type`).
    fn classify(&self, fd: &OwnedFd, dir: &DirItem, name: &[u8], kind: EntryKind) -> EntryType {
        let plain = |is_dir, stat_failed| EntryType {
            is_dir,
            is_link: false,
            stat_failed,
            target: None,
        };
        let link = |followed: io::Result<rustix::fs::Stat>| match followed {
            Ok(st) => EntryType {
                is_dir: sys::is_dir_mode(&st),
                is_link: true,
                stat_failed: false,
                target: Some(Ok(Stamp::of(&st))),
            },
            Err(e) => EntryType {
                is_dir: false,
                is_link: true,
                stat_failed: true,
                target: Some(Err(e.raw_os_error().unwrap_or(0))),
            },
        };
        match kind {
            EntryKind::Dir => plain(true, false),
            EntryKind::File | EntryKind::Other => plain(false, false),
            _ if !self.fits(dir, name) => EntryType {
                is_dir: false,
                is_link: kind == EntryKind::Symlink,
                stat_failed: true,
                target: None,
            },
            EntryKind::Symlink => link(sys::stat_at(fd, name, true)),
            EntryKind::Unknown => match sys::stat_at(fd, name, false) {
                Ok(st) if sys::is_symlink_mode(&st) => link(sys::stat_at(fd, name, true)),
                Ok(st) => plain(sys::is_dir_mode(&st), false),
                Err(_) => plain(false, true),
            },
        }
    }

    /// A symbolic link of `plan.dir`, for a live index: whether its target
    /// can change what the listing gives (see [`ListingLinks`]).
    fn on_link(
        &self,
        plan: &DirPlan<'_>,
        name: &[u8],
        entry: &EntryType,
        links: &mut ListingLinks,
    ) {
        let dir = plan.dir;
        match entry.target {
            _ if plan.rules.check_recursion => links.unverifiable = true,
            Some(target) if dir.blocked.is_none() && self.matchers.takes_file(&dir.rel, name) => {
                links.deciding.push(DecidingLink {
                    full: [&dir.full[..], plan.rules.separator, name].concat(),
                    target,
                });
            }
            _ => links.free += 1,
        }
    }

    /// A subdirectory (or a link to one) of `plan.dir`: entered, kept for
    /// what is reported about it, or passed over.
    fn on_subdir(&self, plan: &DirPlan<'_>, name: &[u8], is_link: bool, found: &mut Listing) {
        let (dir, separator, child_depth) =
            (plan.dir, plan.rules.separator, plan.rules.child_depth);
        if let Some(blocked) = &dir.blocked {
            if V::EXHAUSTIVE && !dir.quiet && !is_link && name != b".git" {
                let item = self.child(dir, separator, name, Some(Arc::clone(blocked)));
                found.subdirs.push(item);
            }
            return;
        }
        // A link is never entered, and a directory at `child_depth >=
        // max_depth` contributes nothing: unless something is reported
        // about them, whether they are pruned makes no difference.
        let max_depth = self.matchers.max_depth;
        let needed = plan.rules.visits_subdir(is_link)
            || (V::EXHAUSTIVE && !is_link && child_depth > max_depth);
        if !needed {
            return;
        }
        let rel = join_rel(&dir.rel, name);
        if !plan.rules.descend {
            // Too deep: the audit's exhaustive pass goes on, and a
            // directory at exactly max_depth is listed by os.walk unless
            // pruned.
            let pruned = self.matchers.is_dir_pruned(&rel);
            let blocked = Blocked::TooDeep {
                dir: rel.clone(),
                depth: child_depth,
            };
            let mut item = self.child(dir, separator, name, Some(Arc::new(blocked)));
            item.rel = rel;
            item.listed_by_reference = child_depth == max_depth && !pruned;
            // Nothing is reported inside `.git`.
            item.quiet = dir.quiet || (V::EXHAUSTIVE && name == b".git");
            if (V::EXHAUSTIVE && !item.quiet) || item.listed_by_reference {
                found.subdirs.push(item);
            }
            return;
        }
        if self.matchers.is_dir_pruned(&rel) {
            if V::EXHAUSTIVE && !is_link && name != b".git" {
                let blocked = Blocked::Pruned { dir: rel.clone() };
                let mut item = self.child(dir, separator, name, Some(Arc::new(blocked)));
                item.rel = rel;
                item.listed_by_reference = false;
                found.subdirs.push(item);
            }
            return;
        }
        if plan.rules.check_recursion {
            // os.walk goes on to it: one level too many.
            found.raises = true;
        }
        if !is_link {
            let mut item = self.child(dir, separator, name, None);
            item.rel = rel;
            item.quiet = dir.quiet || (V::EXHAUSTIVE && name == b".git");
            found.subdirs.push(item);
        }
    }

    /// A file of `plan.dir`: a candidate, or reported to the visitor.
    fn on_file(&self, plan: &DirPlan<'_>, name: &[u8], files: &mut Vec<Candidate>) {
        let dir = plan.dir;
        if dir.blocked.is_none() && self.matchers.takes_file(&dir.rel, name) {
            let full = [&dir.full[..], plan.rules.separator, name].concat();
            files.push(if self.piecewise {
                Candidate::new_piecewise(full)
            } else {
                Candidate::new(full)
            });
            return;
        }
        if V::EXHAUSTIVE && !dir.quiet {
            self.visitor.file(self.view(dir), name);
        }
    }

    fn view<'d>(&self, dir: &'d DirItem) -> DirView<'d> {
        DirView {
            full: &dir.full,
            rel: &dir.rel,
            blocked: dir.blocked.as_deref(),
        }
    }

    /// A subdirectory item; `rel` is filled in here only for blocked parents.
    fn child(
        &self,
        dir: &DirItem,
        separator: &[u8],
        name: &[u8],
        blocked: Option<Arc<Blocked>>,
    ) -> DirItem {
        DirItem {
            full: [&dir.full[..], separator, name].concat(),
            rel: if dir.blocked.is_some() {
                join_rel(&dir.rel, name)
            } else {
                String::new()
            },
            depth: dir.depth + separator.len() as i64,
            parent: None,
            listed_by_reference: dir.blocked.is_none(),
            blocked,
            quiet: dir.quiet,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    /// A tree of nested directories, each with a rule file and another file.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for a in 0..6 {
            for b in 0..4 {
                for c in 0..3 {
                    let d = dir.path().join(format!("a{a}/b{b}/c{c}"));
                    std::fs::create_dir_all(&d).unwrap();
                    std::fs::write(d.join("x.promptinclude.md"), "x").unwrap();
                    std::fs::write(d.join("y.txt"), "y").unwrap();
                }
                std::fs::write(
                    dir.path().join(format!("a{a}/b{b}/r.promptinclude.md")),
                    "r",
                )
                .unwrap();
            }
        }
        dir
    }

    #[test]
    fn walk_without_held_parents_finds_the_same() {
        let dir = tree();
        let root = dir.path().as_os_str().as_encoded_bytes();
        let matchers = Matchers::new(&Config::default()).unwrap();
        let relative = discover(root, &matchers);
        assert_eq!(relative.len(), 6 * 4 * 4);
        // Take every slot, so that each directory is opened by its full path.
        let mut taken = Vec::new();
        while let Some(held) = HeldParent::try_hold(sys::open_dir(b"/", false).unwrap()) {
            taken.push(held);
        }
        assert!(taken.len() <= MAX_HELD_PARENTS);
        let by_full_path = discover(root, &matchers);
        drop(taken);
        assert_eq!(
            by_full_path
                .iter()
                .map(Candidate::as_bytes)
                .collect::<Vec<_>>(),
            relative.iter().map(Candidate::as_bytes).collect::<Vec<_>>()
        );
        assert!(HELD_PARENTS.load(Ordering::Relaxed) <= MAX_HELD_PARENTS);
    }
}
