//! A live index: scans that answer again and again without listing what
//! has not changed, and stay exact.
//!
//! An [`Index`] walks its roots once, watching every directory the walk
//! lists (inotify; `index/watch.rs` says why not the `notify` crate), and keeps
//! what each listing gave and what each rule file read gave. A later
//! [`Index::scan`] first takes every change notification queued so far,
//! forgets what they touch, and then
//!
//! * answers with no listing and no read when nothing changed (one `read`
//!   of the notification queue, one `stat` of each root and of each link
//!   named like a rule file, one `poll` of the mount table);
//! * lists only the directories that changed and reads only the files that
//!   changed, and counts tokens only for texts it has not counted before.
//!
//! The budget pass runs as in every scan, so the answer is the one a fresh
//! scan gives. Where notifications cannot vouch for something, it is
//! looked at again on every scan, never taken from memory
//! ([`IndexStats::fallbacks`] counts each case; `docs/live-index.md`):
//!
//! | case | what the index does |
//! |---|---|
//! | the kernel's event queue overflowed (`IN_Q_OVERFLOW`) | forgets everything: a full scan |
//! | the watch limit (`max_user_watches`, or [`IndexOptions::max_watches`]) is reached | the directories left unwatched are listed, and their files read, on every scan |
//! | a network or FUSE file system (changes made by another machine or a daemon) | its directories are listed, and files read, on every scan |
//! | a symbolic link named like a rule file (its target may change elsewhere) | one `stat` through it per scan; listed and read again when it differs (links with other names change no answer and cost nothing) |
//! | such a link whose target changed too lately for its times to tell, or any link at the reference's recursion depth | its directory listed on every scan |
//! | a file with several hard links | each kept file is watched itself |
//! | a root that is, or lies below, a link that is retargeted; a root moved, removed or replaced | each scan `stat`s the root: a different directory is a full scan |
//! | a file system mounted or unmounted anywhere | a full scan |
//! | a change of the root's configuration (a project file created, edited, removed) | [`BatchIndex`] decides the configuration on every scan: a different one is a full scan |
//! | the process forked (the child shares the parent's queue) | the child starts over with a queue of its own: a full scan |
//! | a tree so deep that the reference raises | a full scan every time, until the index is opened again |
//! | no inotify (another system, or the instance limit reached) | a full scan every time |
//!
//! A directory is watched *before* it is listed, so a change made while it
//! is being listed is either in the listing or in the queue for the next
//! scan (or both): there is no window in which it is in neither.

mod watch;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;

use crate::batch::Batch;
use crate::budget::{allocate_with, path_cost, TokenCounts};
use crate::config::Config;
use crate::discover::walk::{
    discover, discover_with_memo, DecidingLink, DirMemo, KeptListing, ListingLinks,
};
use crate::discover::Candidate;
use crate::error::{Error, RootError};
use crate::model::ScanResult;
use crate::project::ConfigSource;
use crate::read::ReadOutcome;
use crate::scan::{RootScan, Scanner};
use crate::sys;
use crate::tokenize;
use watch::{mask, Mounts, Watcher};

/// How an index may use the system's notification resources.
#[derive(Clone, Debug, Default)]
pub struct IndexOptions {
    /// Watch at most this many directories (the system's own limit,
    /// `max_user_watches`, is shared by every program of the user). Past
    /// it, directories are listed on every scan.
    pub max_watches: Option<usize>,
}

/// Why a scan could not take something from the index's memory, each
/// counted once per scan it affected.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Fallbacks {
    /// The event queue overflowed: everything was looked at again.
    pub overflow: u64,
    /// Some directories could not be watched (the watch limit, or
    /// permission), so they were listed again.
    pub watch_limit: u64,
    /// Directories on network or FUSE file systems were listed again.
    pub remote_fs: u64,
    /// Directories were listed again for a symbolic link's sake: its
    /// target changed too lately for its times to vouch for it or lies on a
    /// network file system, or the link lies at the depth of the
    /// reference's recursion limit.
    pub links: u64,
    /// A root was moved, removed, replaced or reached through a retargeted
    /// link.
    pub root_changed: u64,
    /// The mount table changed.
    pub mounts: u64,
    /// A root's configuration changed.
    pub config_changed: u64,
    /// The process forked since the last scan.
    pub forked: u64,
    /// The tree is so deep that the reference raises: walked in full.
    pub deep_tree: u64,
    /// No notifications here (another system, or the instance limit): every
    /// scan is a full scan.
    pub unsupported: u64,
}

/// What an index has done so far.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IndexStats {
    /// Scans answered (each root's scan counts).
    pub scans: u64,
    /// Of those, answered from memory with no listing and no read.
    pub unchanged: u64,
    /// Directories listed, over all scans.
    pub dirs_listed: u64,
    /// Rule files read, over all scans.
    pub files_read: u64,
    /// Texts whose tokens were counted (the others came from memory).
    pub texts_counted: u64,
    /// Directories listed by the last scan (of every root).
    pub last_dirs_listed: u64,
    /// Rule files read by the last scan (of every root).
    pub last_files_read: u64,
    /// Directories watched now.
    pub watches: usize,
    /// Directories whose listing is kept now.
    pub kept_dirs: usize,
    /// Directories the last scan listed only because notifications cannot
    /// vouch for them (links, network file systems, past the watch limit):
    /// listed on every scan.
    pub listed_every_scan: u64,
    /// Rule files the last scan read for the same reasons: read on every
    /// scan.
    pub read_every_scan: u64,
    /// Symbolic links the last scan `stat`ed: links named like rule files,
    /// whose targets decide what their directories give (one `stat` each
    /// per scan; other links cost nothing).
    pub links_checked: u64,
    /// Notification events taken.
    pub events: u64,
    /// Why scans looked again at what they could have remembered.
    pub fallbacks: Fallbacks,
}

/// Where a root's configuration comes from.
enum Source {
    /// One configuration for the index's life.
    Fixed(Arc<Scanner>),
    /// Decided on every scan, as the host decides it (project files).
    Planned(Arc<Batch>),
}

/// What listing a directory gave, kept while it is unchanged.
struct KeptDir {
    listing: KeptListing,
    /// Its links whose targets decide what the listing gives, each `stat`ed
    /// again on every scan.
    links: Vec<DecidingLink>,
    /// Its links that change nothing.
    free_links: usize,
    /// The walk that last used it.
    generation: u64,
}

/// What reading a rule file gave, kept while it is unchanged.
struct KeptRead {
    outcome: ReadOutcome,
    /// `count(text)`, once counted.
    tokens: Option<usize>,
}

/// One root and everything the index keeps about it.
struct LiveRoot {
    root: PathBuf,
    /// The configuration of the last scan.
    scanner: Option<Arc<Scanner>>,
    /// `(st_dev, st_ino)` of the root (links followed) at the last scan;
    /// `None`: not a directory.
    identity: Option<(u64, u64)>,
    kept: BTreeMap<Vec<u8>, KeptDir>,
    /// Kept directories holding links that decide their listings.
    linked: BTreeSet<Vec<u8>>,
    /// Directories the last walk listed and did not keep for their links'
    /// sake.
    volatile_link_dirs: Vec<Vec<u8>>,
    /// Links that change nothing in the directories the last walk listed
    /// and did not keep.
    free_links: u64,
    /// Directories the last walk listed.
    visited: HashSet<Vec<u8>>,
    /// Something kept about a directory was forgotten since the last walk.
    walk_needed: bool,
    /// Directories the last walk listed without keeping.
    volatile_dirs: u64,
    /// The candidates of the last walk.
    candidates: Option<Vec<Candidate>>,
    reads: BTreeMap<Vec<u8>, KeptRead>,
    /// What listing each candidate's path costs (a path's cost never
    /// changes).
    path_costs: HashMap<Vec<u8>, i64>,
    /// Files watched themselves (`Watcher::add_file`) since their name last
    /// changed: the watch is on the file the name names now.
    watched_files: HashSet<Vec<u8>>,
    /// A kept read was forgotten since the last budget pass.
    reads_needed: bool,
    /// Files the last pass read without keeping.
    volatile_reads: u64,
    /// Every scan is a full scan (the reference raises on this tree).
    deep: bool,
    /// What the root reaches may have shrunk since its watches were last
    /// pruned.
    prune_needed: bool,
    last: Option<RootScan>,
}

impl LiveRoot {
    fn new(root: PathBuf) -> LiveRoot {
        LiveRoot {
            root,
            scanner: None,
            identity: None,
            kept: BTreeMap::new(),
            linked: BTreeSet::new(),
            volatile_link_dirs: Vec::new(),
            free_links: 0,
            visited: HashSet::new(),
            walk_needed: true,
            volatile_dirs: 0,
            candidates: None,
            reads: BTreeMap::new(),
            path_costs: HashMap::new(),
            watched_files: HashSet::new(),
            reads_needed: true,
            volatile_reads: 0,
            deep: false,
            prune_needed: false,
            last: None,
        }
    }

    /// Forgets everything about the tree.
    fn forget(&mut self) {
        self.watched_files.clear();
        self.kept.clear();
        self.linked.clear();
        self.reads.clear();
        self.candidates = None;
        self.walk_needed = true;
        self.reads_needed = true;
        self.last = None;
    }

    /// `stat`s again every link that decides a kept listing: where a target
    /// is no longer what it was, the listing is forgotten (and with it the
    /// reads through its links). Returns how many links it `stat`ed.
    fn check_links(&mut self) -> u64 {
        let mut checked = 0;
        let mut changed = Vec::new();
        self.linked.retain(|dir| {
            let Some(kept) = self.kept.get(dir) else {
                return false;
            };
            checked += kept.links.len() as u64;
            if kept
                .links
                .iter()
                .all(|link| sys::stamp(&link.full) == link.target)
            {
                return true;
            }
            changed.push(dir.clone());
            false
        });
        for dir in changed {
            self.dir_changed(&dir);
        }
        checked
    }

    /// What each symbolic link the last scan saw costs on every scan.
    fn link_costs(&self) -> LinkCosts {
        let text = |path: &[u8]| String::from_utf8_lossy(path).into_owned();
        let mut costs = LinkCosts {
            root: self.root.to_string_lossy().into_owned(),
            free: self.free_links + self.kept.values().map(|k| k.free_links as u64).sum::<u64>(),
            listed: self.volatile_link_dirs.iter().map(|d| text(d)).collect(),
            ..LinkCosts::default()
        };
        let candidates: HashSet<&[u8]> = self
            .candidates
            .iter()
            .flatten()
            .map(Candidate::as_bytes)
            .collect();
        for dir in &self.linked {
            for link in self.kept.get(dir).map_or(&[][..], |k| &k.links) {
                let kept = self.reads.contains_key(&link.full);
                if candidates.contains(link.full.as_slice()) && !kept {
                    costs.stat_and_read.push(text(&link.full));
                } else {
                    costs.stat.push(text(&link.full));
                }
            }
        }
        costs
    }

    /// `dir`'s entries changed. A read through one of its deciding links
    /// goes with its listing: only the listing's `stat` vouched for it.
    fn dir_changed(&mut self, dir: &[u8]) {
        if let Some(kept) = self.kept.remove(dir) {
            self.walk_needed = true;
            for link in kept.links {
                self.file_changed(&link.full);
            }
        }
    }

    /// What `path` names changed: forget it and everything below it.
    fn subtree_changed(&mut self, path: &[u8]) {
        self.walk_needed |= remove_below(&mut self.kept, path);
        self.reads_needed |= remove_below(&mut self.reads, path);
        if !self.watched_files.is_empty() {
            self.watched_files.retain(|file| !is_below(file, path));
        }
    }

    /// The file at `path` changed (content, mode).
    fn file_changed(&mut self, path: &[u8]) {
        if self.reads.remove(path).is_some() {
            self.reads_needed = true;
        }
    }
}

/// Whether `key` is `path` or lies below it.
fn is_below(key: &[u8], path: &[u8]) -> bool {
    key.starts_with(path)
        && (key.len() == path.len() || path.ends_with(b"/") || key[path.len()] == b'/')
}

/// Removes the entries of `map` at `path` or below it; whether there were
/// any.
fn remove_below<T>(map: &mut BTreeMap<Vec<u8>, T>, path: &[u8]) -> bool {
    let from = (std::ops::Bound::Included(path), std::ops::Bound::Unbounded);
    let keys: Vec<Vec<u8>> = map
        .range::<[u8], _>(from)
        .take_while(|(k, _)| k.starts_with(path))
        .filter(|(k, _)| is_below(k, path))
        .map(|(k, _)| k.clone())
        .collect();
    for key in &keys {
        map.remove(key);
    }
    !keys.is_empty()
}

/// Which root watches a directory, by which path.
type Watches = HashMap<i32, Vec<(usize, Vec<u8>)>>;

/// A live index of one or more roots (see the module docs).
///
/// ```
/// use promptinclude::{index::Index, Config};
///
/// let root = tempfile::tempdir()?;
/// std::fs::write(root.path().join("a.promptinclude.md"), "Use tabs.\n")?;
/// let mut index = Index::open(root.path(), Config::default())?;
/// let first = index.scan()?;
/// assert_eq!(index.scan()?, first); // answered from memory
/// assert_eq!(index.stats().last_dirs_listed, 0);
/// std::fs::write(root.path().join("b.promptinclude.md"), "Use spaces.\n")?;
/// assert_eq!(index.scan()?.files.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Index {
    source: Source,
    roots: Vec<LiveRoot>,
    watcher: Option<Watcher>,
    watches: Watches,
    mounts: Mounts,
    options: IndexOptions,
    stats: IndexStats,
    /// The process the watcher belongs to.
    pid: u32,
    generation: u64,
    /// Counted texts, by content.
    counted: HashMap<Arc<str>, usize>,
}

impl Index {
    /// An index of `root` scanned with `config`, reading as the reference
    /// reads. Fails, before anything is walked, where the reference rejects
    /// the configuration.
    pub fn open(root: impl AsRef<Path>, config: Config) -> Result<Index, Error> {
        Ok(Index::with_scanner(root, Scanner::new(config)?))
    }

    /// An index of `root` scanned by `scanner` (its configuration and
    /// reading policy).
    pub(crate) fn with_scanner(root: impl AsRef<Path>, scanner: Scanner) -> Index {
        Index::with_shared_scanner(root, Arc::new(scanner))
    }

    /// [`Index::with_scanner`] with a scanner shared with others (a
    /// [`crate::batch::PlannedRoot`]'s).
    pub(crate) fn with_shared_scanner(root: impl AsRef<Path>, scanner: Arc<Scanner>) -> Index {
        Index::new(
            Source::Fixed(scanner),
            vec![root.as_ref().to_path_buf()],
            IndexOptions::default(),
        )
    }

    /// The same index with `options`.
    pub fn with_options(mut self, options: IndexOptions) -> Index {
        self.options = options;
        self
    }

    fn new(source: Source, roots: Vec<PathBuf>, options: IndexOptions) -> Index {
        Index {
            source,
            roots: roots.into_iter().map(LiveRoot::new).collect(),
            watcher: Watcher::open().ok(),
            watches: HashMap::new(),
            mounts: Mounts::open(),
            options,
            stats: IndexStats::default(),
            pid: std::process::id(),
            generation: 0,
            counted: HashMap::new(),
        }
    }

    /// The roots, in the order given.
    pub fn roots(&self) -> Vec<&Path> {
        self.roots.iter().map(|r| r.root.as_path()).collect()
    }

    /// What the index has done so far.
    pub fn stats(&self) -> &IndexStats {
        &self.stats
    }

    /// What each root's symbolic links cost on every scan, as of its last
    /// scan, in the order of the roots.
    pub fn link_costs(&self) -> Vec<LinkCosts> {
        self.roots.iter().map(LiveRoot::link_costs).collect()
    }

    /// The first root's scan: exactly what [`crate::scan`] returns now.
    pub fn scan(&mut self) -> Result<ScanResult, Error> {
        self.scan_detailed().map(RootScan::into_result)
    }

    /// The root's scan, with candidates and per-candidate facts.
    pub fn scan_detailed(&mut self) -> Result<RootScan, Error> {
        self.take_events();
        let scanner = match &self.source {
            Source::Fixed(scanner) => Arc::clone(scanner),
            Source::Planned(_) => unreachable!("a batch's index is a BatchIndex"),
        };
        self.scan_root(0, scanner)
    }

    /// Every root's scan, in the order given; a root whose configuration is
    /// broken gets its error (as `Batch::scan` gives it).
    fn scan_all(&mut self) -> Vec<Result<RootScan, RootError>> {
        self.take_events();
        (0..self.roots.len())
            .map(|i| {
                let (scanner, source, notes) = match &self.source {
                    Source::Fixed(scanner) => (
                        Arc::clone(scanner),
                        ConfigSource::Default,
                        Default::default(),
                    ),
                    Source::Planned(batch) => {
                        let planned = batch.plan_root(&self.roots[i].root);
                        match planned.shared_scanner() {
                            Ok(s) => (s, planned.source, planned.notes),
                            Err(e) => return Err(e.clone()),
                        }
                    }
                };
                self.scan_root(i, scanner)
                    .map_err(|e| RootError::new(&e, &source, &notes))
            })
            .collect()
    }

    /// Waits up to `timeout` for a change notification; whether one came
    /// (then a scan may give another answer). Without notifications it
    /// sleeps and says yes.
    pub fn wait(&self, timeout: Duration) -> std::io::Result<bool> {
        match &self.watcher {
            Some(watcher) => watcher.wait(timeout),
            None => {
                std::thread::sleep(timeout);
                Ok(true)
            }
        }
    }

    /// Takes every queued notification and forgets what it touches (at the
    /// start of each scan).
    fn take_events(&mut self) {
        self.stats.last_dirs_listed = 0;
        self.stats.last_files_read = 0;
        self.stats.listed_every_scan = 0;
        self.stats.read_every_scan = 0;
        self.stats.links_checked = 0;
        if std::process::id() != self.pid {
            // The queue is the parent's too: start over with our own.
            self.pid = std::process::id();
            self.watcher = Watcher::open().ok();
            self.watches.clear();
            self.mounts = Mounts::open();
            self.stats.fallbacks.forked += 1;
            self.roots.iter_mut().for_each(LiveRoot::forget);
        }
        if self.mounts.changed() && self.stats.scans > 0 {
            self.stats.fallbacks.mounts += 1;
            self.roots.iter_mut().for_each(LiveRoot::forget);
        }
        let Index {
            watcher: Some(watcher),
            watches,
            roots,
            stats,
            ..
        } = self
        else {
            return;
        };
        // Forgetting as the events come is the same as after them all: an
        // overflow forgets everything anyway.
        let mut overflow = false;
        let drained = watcher.drain(|event| {
            stats.events += 1;
            let bits = event.mask;
            overflow |= bits & (mask::Q_OVERFLOW | mask::UNMOUNT) != 0;
            let Some(paths) = watches.get(&event.wd) else {
                return;
            };
            for (root, dir) in paths {
                let live = &mut roots[*root];
                match event.name {
                    Some(name) => {
                        let path = join(dir, name);
                        if bits & mask::ENTRY != 0 {
                            live.dir_changed(dir);
                            live.subtree_changed(&path);
                        }
                        if bits & mask::CONTENT != 0 {
                            live.file_changed(&path);
                            if bits & libc::IN_ISDIR != 0 {
                                live.subtree_changed(&path);
                            }
                        }
                    }
                    // A file watched itself: its content or mode, while it
                    // is still the file (a write through another hard link).
                    None if bits & mask::GONE == 0 && live.watched_files.contains(dir) => {
                        live.file_changed(dir)
                    }
                    // The watched directory itself (its mode), or the watched
                    // directory or file is gone.
                    None => live.subtree_changed(dir),
                }
            }
            if bits & mask::IGNORED != 0 {
                watches.remove(&event.wd);
            }
        });
        if drained.is_err() || overflow {
            stats.fallbacks.overflow += 1;
            roots.iter_mut().for_each(LiveRoot::forget);
        }
    }

    /// One root's scan with `scanner`, from memory where it can be.
    fn scan_root(&mut self, i: usize, scanner: Arc<Scanner>) -> Result<RootScan, Error> {
        let scan = self.scan_root_once(i, scanner);
        let live = &self.roots[i];
        self.stats.listed_every_scan += live.volatile_dirs;
        self.stats.read_every_scan += live.volatile_reads;
        scan
    }

    fn scan_root_once(&mut self, i: usize, scanner: Arc<Scanner>) -> Result<RootScan, Error> {
        self.stats.scans += 1;
        let abs = scanner.abs_root(&self.roots[i].root);
        let identity = abs.as_deref().and_then(dir_identity);
        let live = &mut self.roots[i];
        let same_config = live
            .scanner
            .as_ref()
            .is_some_and(|s| Arc::ptr_eq(s, &scanner) || s.config() == scanner.config());
        if live.scanner.is_some() && !same_config {
            self.stats.fallbacks.config_changed += 1;
            live.forget();
        }
        if live.scanner.is_some() && live.identity != identity {
            self.stats.fallbacks.root_changed += 1;
            live.forget();
        }
        live.scanner = Some(Arc::clone(&scanner));
        live.identity = identity;
        if self.watcher.is_none() {
            self.stats.fallbacks.unsupported += 1;
            live.forget();
        }
        if live.deep {
            self.stats.fallbacks.deep_tree += 1;
            live.walk_needed = true;
        }
        self.stats.links_checked += live.check_links();
        let unchanged = !live.walk_needed
            && live.volatile_dirs == 0
            && !live.reads_needed
            && live.volatile_reads == 0;
        if let (true, Some(last)) = (unchanged, &live.last) {
            self.stats.unchanged += 1;
            return Ok(last.clone());
        }
        let (Some(abs), Some(_)) = (abs, identity) else {
            // Not a directory (or no current directory): an empty result.
            live.forget();
            live.walk_needed = false;
            live.reads_needed = false;
            let scan = scanner.scan_discovered(&live.root, None, |_| ReadOutcome::Blank)?;
            live.last = Some(scan.clone());
            return Ok(scan);
        };
        if live.walk_needed || live.volatile_dirs > 0 || live.candidates.is_none() {
            self.walk(i, &scanner, abs.as_os_str().as_bytes());
        }
        self.allocate(i, &scanner)
    }

    /// Walks root `i` with what is kept, keeping what it lists.
    fn walk(&mut self, i: usize, scanner: &Scanner, abs: &[u8]) {
        self.generation += 1;
        let live = &mut self.roots[i];
        if live.deep {
            // The reference raises on this tree: walked in full each time.
            let candidates = discover(abs, scanner.matchers());
            live.candidates = Some(candidates);
            live.walk_needed = false;
            live.reads_needed = true;
            return;
        }
        let memo = WalkMemo {
            root: i,
            root_path: abs,
            watcher: self.watcher.as_ref(),
            watches: Mutex::new(&mut self.watches),
            kept: Mutex::new(&mut live.kept),
            generation: self.generation,
            max_watches: self.options.max_watches,
            visited: Mutex::new(HashSet::new()),
            listed: AtomicU64::new(0),
            unwatched: AtomicBool::new(false),
            remote: AtomicBool::new(false),
            deciding: Mutex::new(Vec::new()),
            volatile_links: Mutex::new(Vec::new()),
            free_links: AtomicU64::new(0),
            started: std::time::SystemTime::now(),
        };
        let found = discover_with_memo(abs, scanner.matchers(), &memo);
        let WalkMemo {
            visited,
            listed,
            unwatched,
            remote,
            deciding,
            volatile_links,
            free_links,
            ..
        } = memo;
        live.volatile_link_dirs = volatile_links
            .into_inner()
            .unwrap_or_else(|e| e.into_inner());
        live.free_links = free_links.into_inner();
        live.linked
            .extend(deciding.into_inner().unwrap_or_else(|e| e.into_inner()));
        let mut visited = visited.into_inner().unwrap_or_else(|e| e.into_inner());
        let listed = listed.into_inner();
        self.stats.dirs_listed += listed;
        self.stats.last_dirs_listed += listed;
        let fallbacks = &mut self.stats.fallbacks;
        fallbacks.watch_limit += u64::from(unwatched.into_inner());
        fallbacks.remote_fs += u64::from(remote.into_inner());
        fallbacks.links += u64::from(!live.volatile_link_dirs.is_empty());
        let candidates = match found {
            Some(found) => found,
            None => {
                live.deep = true;
                self.stats.fallbacks.deep_tree += 1;
                live.kept.clear();
                visited.clear();
                discover(abs, scanner.matchers())
            }
        };
        let generation = self.generation;
        live.kept.retain(|_, kept| kept.generation == generation);
        live.volatile_dirs = visited
            .iter()
            .filter(|dir| !live.kept.contains_key(*dir))
            .count() as u64;
        live.visited = visited;
        live.prune_needed = true;
        if live.candidates.as_ref() != Some(&candidates) {
            live.reads_needed = true;
        }
        live.candidates = Some(candidates);
        live.walk_needed = false;
        self.stats.kept_dirs = self.roots.iter().map(|r| r.kept.len()).sum();
    }

    /// Stops watching what root `i` no longer reaches: directories its last
    /// walk did not list, files whose reads are not kept.
    fn prune_watches(&mut self, i: usize) {
        let live = &self.roots[i];
        let watcher = self.watcher.as_ref();
        self.watches.retain(|&wd, paths| {
            paths.retain(|(root, path)| {
                *root != i
                    || live.kept.contains_key(path)
                    || live.visited.contains(path)
                    || live.reads.contains_key(path)
            });
            if paths.is_empty() {
                if let Some(watcher) = watcher {
                    watcher.remove(wd);
                }
            }
            !paths.is_empty()
        });
        let live = &mut self.roots[i];
        let reads = &live.reads;
        live.watched_files.retain(|file| reads.contains_key(file));
        self.stats.watches = self.watches.len();
    }

    /// The budget pass over root `i`'s candidates, reading what is not kept.
    fn allocate(&mut self, i: usize, scanner: &Scanner) -> Result<RootScan, Error> {
        let live = &mut self.roots[i];
        let candidates = live.candidates.take().unwrap_or_default();
        let keep_reads = !live.deep && !scanner.reads_depend_on_git();
        let guard = scanner.guard(&live.root);
        let mut pass = Pass {
            root: i,
            watcher: self.watcher.as_ref(),
            watches: &mut self.watches,
            max_watches: self.options.max_watches,
            reads: &mut live.reads,
            path_costs: &mut live.path_costs,
            watched_files: &mut live.watched_files,
            kept_dirs: &live.kept,
            counted: &mut self.counted,
            keep_reads,
            keep_link_reads: !scanner.link_reads_depend_on_git(),
            volatile: 0,
            read: 0,
            texts_counted: 0,
        };
        let reads = std::cell::RefCell::new(&mut pass);
        let result = {
            let mut counts = Counts(&reads);
            allocate_with(
                live.root.to_string_lossy().into_owned(),
                &candidates,
                scanner.config(),
                |candidate| reads.borrow_mut().read(candidate, &guard),
                &mut counts,
            )
        };
        let Pass {
            volatile,
            read,
            texts_counted,
            ..
        } = pass;
        self.stats.files_read += read;
        self.stats.last_files_read += read;
        self.stats.texts_counted += texts_counted;
        live.volatile_reads = volatile;
        live.reads_needed = false;
        // Forget reads of files that are no longer candidates.
        if live.reads.len() > candidates.len() || live.path_costs.len() > candidates.len() {
            let names: HashSet<&[u8]> = candidates.iter().map(Candidate::as_bytes).collect();
            live.reads.retain(|path, _| names.contains(path.as_slice()));
            live.path_costs
                .retain(|path, _| names.contains(path.as_slice()));
            live.prune_needed = true;
        }
        if self.counted.len() > 2 * live.reads.len().max(1024) {
            self.counted.clear();
        }
        // Going over every watch costs as much as an unchanged scan of
        // every root: only after what this root reaches may have shrunk.
        if std::mem::take(&mut live.prune_needed) {
            self.prune_watches(i);
        }
        let live = &mut self.roots[i];
        let allocation = match result {
            Ok(allocation) => allocation,
            Err(raised) => {
                live.candidates = Some(candidates);
                live.last = None;
                return Err(raised.into());
            }
        };
        let scan = RootScan {
            abs_root: scanner
                .abs_root(&live.root)
                .unwrap_or_else(|| live.root.clone()),
            is_dir: true,
            candidates: candidates.clone(),
            allocation,
        };
        live.candidates = Some(candidates);
        live.last = Some(scan.clone());
        Ok(scan)
    }
}

/// What the symbolic links of one root cost a live index on every scan
/// (`docs/live-index.md`, "Symbolic links").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LinkCosts {
    /// The root.
    pub root: String,
    /// Links that change no answer whatever they point at (their names are
    /// never rule files): they cost nothing.
    pub free: u64,
    /// Links named like rule files, `stat`ed once per scan (and read again
    /// only when that `stat` differs).
    pub stat: Vec<String>,
    /// Links named like rule files, `stat`ed and read on every scan (the
    /// unattended policy reads a link only as `HEAD` holds it, which git
    /// changes unseen).
    pub stat_and_read: Vec<String>,
    /// Directories listed on every scan for a link's sake (at the depth of
    /// the reference's recursion limit, or with a target on a network file
    /// system or changed so lately that its times cannot vouch for it yet).
    pub listed: Vec<String>,
}

/// What a live index of one root would have to look at again on every
/// scan (`audit --live-index`): its first scan's account.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LiveIndexFacts {
    /// Directories it watches and keeps.
    pub kept_dirs: usize,
    /// Directories it would list on every scan (see
    /// [`IndexStats::listed_every_scan`]).
    pub listed_every_scan: u64,
    /// Rule files it would read on every scan.
    pub read_every_scan: u64,
    /// Why (each counted once, for this first scan).
    pub fallbacks: Fallbacks,
    /// What its symbolic links cost.
    pub links: LinkCosts,
}

impl LiveIndexFacts {
    /// Opens an index of `root` with `scanner`, scans it once, and tells
    /// what it kept and what it could not.
    pub fn of(root: &Path, scanner: Arc<Scanner>) -> LiveIndexFacts {
        let mut index = Index::with_shared_scanner(root, scanner);
        let _ = index.scan_detailed();
        let stats = index.stats();
        LiveIndexFacts {
            kept_dirs: stats.kept_dirs,
            listed_every_scan: stats.listed_every_scan,
            read_every_scan: stats.read_every_scan,
            fallbacks: stats.fallbacks.clone(),
            links: index.link_costs().swap_remove(0),
        }
    }
}

/// A live index of every root of a [`Batch`], each with the configuration
/// the host would give it, decided again on every scan (a project file
/// created, changed or removed is seen at once).
pub struct BatchIndex(Index);

impl BatchIndex {
    /// Indexes `batch`'s roots (nothing is walked before the first scan).
    pub fn new(batch: Arc<Batch>, options: IndexOptions) -> BatchIndex {
        let roots = batch.roots().to_vec();
        BatchIndex(Index::new(Source::Planned(batch), roots, options))
    }

    /// Every root's scan, in the batch's order; a root whose configuration
    /// is broken gets its error, as [`Batch::scan`] gives it.
    pub fn scan(&mut self) -> Vec<Result<RootScan, RootError>> {
        self.0.scan_all()
    }

    /// See [`Index::wait`].
    pub fn wait(&self, timeout: Duration) -> std::io::Result<bool> {
        self.0.wait(timeout)
    }

    /// See [`Index::stats`].
    pub fn stats(&self) -> &IndexStats {
        &self.0.stats
    }

    /// See [`Index::link_costs`].
    pub fn link_costs(&self) -> Vec<LinkCosts> {
        self.0.link_costs()
    }
}

/// One budget pass's reading: kept reads first, the file system for the rest.
struct Pass<'a> {
    root: usize,
    watcher: Option<&'a Watcher>,
    watches: &'a mut Watches,
    max_watches: Option<usize>,
    reads: &'a mut BTreeMap<Vec<u8>, KeptRead>,
    path_costs: &'a mut HashMap<Vec<u8>, i64>,
    watched_files: &'a mut HashSet<Vec<u8>>,
    kept_dirs: &'a BTreeMap<Vec<u8>, KeptDir>,
    counted: &'a mut HashMap<Arc<str>, usize>,
    keep_reads: bool,
    /// Whether reads through deciding links can be kept: under the
    /// unattended policy whether one may be read depends on git's `HEAD`,
    /// which changes with no event in the tree.
    keep_link_reads: bool,
    volatile: u64,
    read: u64,
    texts_counted: u64,
}

impl Pass<'_> {
    fn read(&mut self, candidate: &Candidate, guard: &crate::trust::Guard) -> ReadOutcome {
        let path = candidate.as_bytes();
        if let Some(kept) = self.reads.get(path) {
            return kept.outcome.clone();
        }
        self.read += 1;
        let outcome = guard.read(candidate);
        if self.keep_reads && self.may_keep(path) {
            self.reads.insert(
                path.to_vec(),
                KeptRead {
                    outcome: outcome.clone(),
                    tokens: None,
                },
            );
        } else {
            self.volatile += 1;
        }
        outcome
    }

    /// Whether a read of `path` can be kept: its directory's listing is
    /// kept (watched, local), and the file itself is watched (before it is
    /// read), so that a write through another hard link, which its
    /// directory's watch does not see, is seen.
    ///
    /// A link that decides its directory's listing is `stat`ed on every
    /// scan instead, which sees its target's content change through its
    /// times (a change made after the walk's `stat`, as this read is, moves
    /// them); its read goes with the listing (`LiveRoot::dir_changed`).
    fn may_keep(&mut self, path: &[u8]) -> bool {
        let Some(kept) = parent_dir(path).and_then(|dir| self.kept_dirs.get(dir)) else {
            return false;
        };
        if kept.links.iter().any(|link| link.full == path) {
            return self.keep_link_reads;
        }
        let Some(watcher) = self.watcher else {
            return false;
        };
        if self.watched_files.contains(path) {
            return true;
        }
        if self
            .max_watches
            .is_some_and(|max| self.watches.len() >= max)
        {
            return false;
        }
        let Ok(wd) = watcher.add_file(path) else {
            return false;
        };
        let paths = self.watches.entry(wd).or_default();
        if !paths.iter().any(|(r, p)| *r == self.root && p == path) {
            paths.push((self.root, path.to_vec()));
        }
        self.watched_files.insert(path.to_vec());
        true
    }

    fn count(&mut self, candidate: &Candidate, text: &str) -> usize {
        let path = candidate.as_bytes();
        if let Some(tokens) = self.reads.get(path).and_then(|k| k.tokens) {
            return tokens;
        }
        let tokens = match self.counted.get(text) {
            Some(&tokens) => tokens,
            None => {
                self.texts_counted += 1;
                let tokens = tokenize::count(text);
                self.counted.insert(Arc::from(text), tokens);
                tokens
            }
        };
        if let Some(kept) = self.reads.get_mut(path) {
            kept.tokens = Some(tokens);
        }
        tokens
    }
}

/// The budget pass's token counts, from the pass's memory.
struct Counts<'p, 'a>(&'p std::cell::RefCell<&'p mut Pass<'a>>);

impl TokenCounts for Counts<'_, '_> {
    fn text(&mut self, candidate: &Candidate, text: &str) -> usize {
        self.0.borrow_mut().count(candidate, text)
    }
    fn path(&mut self, candidate: &Candidate) -> i64 {
        let mut pass = self.0.borrow_mut();
        if let Some(&cost) = pass.path_costs.get(candidate.as_bytes()) {
            return cost;
        }
        let cost = path_cost(candidate);
        pass.path_costs.insert(candidate.as_bytes().to_vec(), cost);
        cost
    }
}

/// What one walk of one root tells the index and asks of it.
struct WalkMemo<'a> {
    root: usize,
    root_path: &'a [u8],
    watcher: Option<&'a Watcher>,
    watches: Mutex<&'a mut Watches>,
    kept: Mutex<&'a mut BTreeMap<Vec<u8>, KeptDir>>,
    generation: u64,
    max_watches: Option<usize>,
    /// Directories listed by this walk.
    visited: Mutex<HashSet<Vec<u8>>>,
    listed: AtomicU64,
    unwatched: AtomicBool,
    remote: AtomicBool,
    /// Kept directories holding links that decide their listings.
    deciding: Mutex<Vec<Vec<u8>>>,
    /// Directories not kept for their links' sake.
    volatile_links: Mutex<Vec<Vec<u8>>>,
    /// Links that change nothing, in the directories listed and not kept.
    free_links: AtomicU64,
    /// When the walk started: a link whose target changed since (or just
    /// before) cannot be vouched for by its times.
    started: std::time::SystemTime,
}

impl DirMemo for WalkMemo<'_> {
    fn recall(&self, full: &[u8]) -> Option<KeptListing> {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        let dir = kept.get_mut(full)?;
        dir.generation = self.generation;
        Some(dir.listing.clone())
    }

    fn before_listing(&self, full: &[u8]) -> bool {
        self.listed.fetch_add(1, Ordering::Relaxed);
        self.visited
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(full.to_vec());
        let Some(watcher) = self.watcher else {
            return false;
        };
        let mut watches = self.watches.lock().unwrap_or_else(|e| e.into_inner());
        if self.max_watches.is_some_and(|max| watches.len() >= max) {
            self.unwatched.store(true, Ordering::Relaxed);
            return false;
        }
        match watcher.add(full, full == self.root_path) {
            Ok(wd) => {
                let paths = watches.entry(wd).or_default();
                if !paths.iter().any(|(r, p)| *r == self.root && p == full) {
                    paths.push((self.root, full.to_vec()));
                }
                true
            }
            Err(_) => {
                self.unwatched.store(true, Ordering::Relaxed);
                false
            }
        }
    }

    fn listed(&self, full: &[u8], fd: &OwnedFd, listing: KeptListing, links: ListingLinks) {
        // A target changed so lately that a later change could leave its
        // times as they are: listed again next scan, when they can tell. A
        // target on a network file system has the server's times, which
        // this machine's clock cannot judge: listed on every scan.
        let unvouched = |link: &DecidingLink| {
            link.target.is_ok_and(|t| t.changed_lately(self.started))
                || (link.target.is_ok() && watch::is_remote_path(&link.full))
        };
        if links.unverifiable || links.deciding.iter().any(unvouched) {
            self.free_links
                .fetch_add(links.free as u64, Ordering::Relaxed);
            self.volatile_links
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(full.to_vec());
            return;
        }
        let free_links = links.free;
        let links = links.deciding;
        if watch::is_remote(fd) {
            self.remote.store(true, Ordering::Relaxed);
            return;
        }
        if !links.is_empty() {
            self.deciding
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(full.to_vec());
        }
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).insert(
            full.to_vec(),
            KeptDir {
                listing,
                links,
                free_links,
                generation: self.generation,
            },
        );
    }
}

/// The directory holding `path` (`None` for a bare name).
fn parent_dir(path: &[u8]) -> Option<&[u8]> {
    match path.iter().rposition(|&b| b == b'/') {
        Some(0) => Some(&path[..1]),
        Some(i) => Some(&path[..i]),
        None => None,
    }
}

/// `dir/name`.
fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    let mut path = dir.to_vec();
    if !path.ends_with(b"/") {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    path
}

/// `(st_dev, st_ino)` of the directory at `path` (links followed), or
/// `None` when it is not one.
fn dir_identity(path: &Path) -> Option<(u64, u64)> {
    let st = rustix::fs::stat(path).ok()?;
    (rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory)
        .then_some((st.st_dev as u64, st.st_ino as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trust::ReadPolicy;

    /// Under the unattended policy a read through a link depends on git's
    /// `HEAD`, which changes with no event in the tree: the link is `stat`ed
    /// and read on every scan, its directory is not listed again, and every
    /// answer is a fresh scan's.
    #[test]
    fn unattended_reads_through_links_are_read_every_scan() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("src")).unwrap();
        std::fs::write(root.join("src/r.promptinclude.md"), "rules\n").unwrap();
        std::fs::write(root.join("shared.md"), "shared\n").unwrap();
        std::os::unix::fs::symlink("../shared.md", root.join("src/s.promptinclude.md")).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let scanner =
            || Scanner::with_policy(Config::default(), ReadPolicy::unattended(), None).unwrap();
        let mut index = Index::with_scanner(root, scanner());
        let fresh = scanner().scan_detailed(root).unwrap().into_result();
        assert_eq!(index.scan().unwrap(), fresh);
        assert_eq!(index.scan().unwrap(), fresh);
        let stats = index.stats();
        assert_eq!(
            (
                stats.last_dirs_listed,
                stats.last_files_read,
                stats.links_checked
            ),
            (0, 1, 1),
            "{stats:?}"
        );
        let costs = index.link_costs().remove(0);
        let link = root.join("src/s.promptinclude.md");
        assert_eq!(costs.stat_and_read, [link.to_string_lossy()], "{costs:?}");
        assert!(
            costs.stat.is_empty() && costs.listed.is_empty(),
            "{costs:?}"
        );
    }
}
