//! The file system as the agent models look at it: [`Live`] asks the
//! system each time; [`Remembered`] asks it once per question and keeps the
//! answer, so that the contexts of every directory of a tree
//! ([`super::contexts_under`]) look at each file and directory once, as one
//! walk does, whatever the number of directories that share it.

use std::any::Any;
use std::collections::HashMap;
use std::ffi::OsStr;
use std::fs::{self, FileType, Metadata};
use std::hash::BuildHasherDefault;
use std::io::{self, Read as _};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rustc_hash::FxHasher;

/// What a model asks of the file system (the `std::fs` calls of the same
/// names; `readable` is `access(R_OK)`).
pub trait Disk: Sync {
    /// `stat`: links followed.
    fn metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// `lstat`.
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// `realpath`.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// The whole file (shared: a remembered file is not copied for each
    /// directory that reads it).
    fn read(&self, path: &Path) -> io::Result<Arc<[u8]>>;
    /// The file's first `limit` bytes.
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>>;
    /// A directory's entries in the system's order, with their types (links
    /// not followed).
    fn read_dir(&self, path: &Path) -> io::Result<Listing>;
    /// A link's target.
    fn read_link(&self, path: &Path) -> io::Result<PathBuf>;
    /// Whether the current user may read it (a directory too).
    fn readable(&self, path: &Path) -> bool;
    /// `lstat` as path resolution sees the file system: what
    /// [`canonicalize`](Disk::canonicalize) finds at each step (a view that
    /// hides paths from the models, like [`Confined`], hides nothing here).
    fn resolution_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.symlink_metadata(path)
    }
    /// A value about `path` (named `what`) that follows from this file
    /// system alone, as `derive` finds it ([`Remembered`] derives each
    /// once; typed by `derived`).
    fn derived(&self, what: &'static str, path: &Path, derive: &dyn Fn() -> Derived) -> Derived {
        let _ = (what, path);
        derive()
    }
    /// cl100k_base tokens of `text` (a text read through this file
    /// system; [`Remembered`] counts what repeats once).
    fn count_tokens(&self, text: &str) -> usize {
        promptinclude_tokenize::count(text)
    }
    /// [`Disk::count_tokens`], with the count of the text's middle
    /// ([`Split`](promptinclude_tokenize::Split)).
    fn count_split(&self, text: &str) -> promptinclude_tokenize::Split {
        promptinclude_tokenize::Memo::with_limit(0).count_split(text)
    }
    /// The names a lookup in the directory `dir` can find, when that is
    /// known without asking (`None` when not): a name that is not among
    /// them is not there (`absent_from`), nor anything below it. A
    /// [`Remembered`] listing where lookups match names exactly, or none
    /// for a directory that is not there.
    fn exact_listing(&self, dir: &Path) -> Option<Listing> {
        let _ = dir;
        None
    }
}

/// Whether `dir.join(name)`, the relative path `name` below a directory
/// whose [exact listing](Disk::exact_listing) is `listing` (if known), is
/// known not to be there: `name` is made of plain parts, and its first is
/// not listed. (The path is not made: the models ask this of a handful of
/// names in every directory, and most are not there.)
pub fn absent_below(listing: Option<&Listing>, dir: &Path, name: &str) -> bool {
    let Some(listing) = listing else {
        return false;
    };
    // Split by bytes: `str::split` sets up a searcher for each name, which
    // cost more than the rest of the question.
    let mut parts = name.as_bytes().split(|&b| b == b'/');
    let first = parts.next().unwrap_or_default();
    let dir = key(dir);
    !matches!(first, b"" | b"." | b"..")
        && parts.all(|part| !matches!(part, b"" | b"." | b"..") && !part.contains(&0))
        && absent_from(listing, first, dir.len() + separator(dir) + name.len())
}

/// The separator `Path::join` puts between `dir` and a relative name: one,
/// unless `dir` is empty or ends in one.
fn separator(dir: &[u8]) -> usize {
    usize::from(dir.last().is_some_and(|&b| b != b'/'))
}

/// Whether `path` is [`joined(dir, name)`](joined) byte for byte, for a
/// relative `name`, without making it.
pub(crate) fn is_joined(path: &[u8], dir: &Path, name: &str) -> bool {
    let dir = key(dir);
    let separator = separator(dir);
    path.len() == dir.len() + separator + name.len()
        && path.starts_with(dir)
        && path.ends_with(name.as_bytes())
        && (separator == 0 || path[dir.len()] == b'/')
}

/// Whether looking up a path of `len` bytes whose first part below a
/// directory is `name` answers "no such file" as that directory's
/// [exact listing](Disk::exact_listing) `listing` says: `name` is not in
/// it, and neither it nor the path is too long for the system to look up
/// (which says "name too long" instead).
pub(crate) fn absent_from(listing: &Listing, name: &[u8], len: usize) -> bool {
    answerable(name, len) && !listing.contains(name)
}

/// Whether a lookup of a path of `len` bytes whose first part below a
/// listed directory is `name` can be answered from the listing: the system
/// would not say "name too long" instead, the name is ASCII (the
/// listing's names are compared by bytes), and it holds no NUL (a path
/// with one is refused before any lookup: "invalid input", not "not
/// found"; an import's path may hold one).
fn answerable(name: &[u8], len: usize) -> bool {
    // ASCII without NUL, in one pass: 1..=0x7f.
    name.len() <= 255 && len < 4096 && name.iter().all(|&b| b.wrapping_sub(1) < 0x7f)
}

/// `dir.join(name)` in one allocation: `Path::join` copies `dir` into a
/// buffer of its own length, then grows it (copying again) to add `name`,
/// and the models join a few names in every directory.
pub(crate) fn joined(dir: &Path, name: impl AsRef<Path>) -> PathBuf {
    let name = name.as_ref();
    let mut path = PathBuf::with_capacity(dir.as_os_str().len() + 1 + name.as_os_str().len());
    path.push(dir);
    path.push(name);
    path
}

/// A value [`Disk::derived`] keeps.
pub(crate) type Derived = Arc<dyn Any + Send + Sync>;

/// [`Disk::derived`] for a value of type `T` (one type per `what`).
pub(crate) fn derived<T: Any + Send + Sync>(
    disk: &dyn Disk,
    what: &'static str,
    path: &Path,
    derive: impl Fn() -> T,
) -> Arc<T> {
    disk.derived(what, path, &|| Arc::new(derive()))
        .downcast()
        .unwrap_or_else(|_| Arc::new(derive()))
}

/// A directory's entries, in the order it lists them (shared: a
/// remembered listing is not copied for each question about the
/// directory). The names are kept in one buffer: the listings of a tree
/// name every file in it, and a string each was a tenth of the
/// allocations of `audit --agents`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing(Arc<Packed>);

/// [`Listing`]'s entries, packed.
#[derive(Debug, Default)]
struct Packed {
    /// The names, one after another.
    names: Vec<u8>,
    /// Where each name ends in `names`, and what it is.
    ends: Vec<(usize, EntryType)>,
    /// Whether a lookup in the listed directory finds exactly the names
    /// listed, once asked ([`Listing::is_exact`]): kept with the listing,
    /// which every tree of a batch that reaches the directory shares.
    exact: OnceLock<bool>,
    /// The entries' indices in name order, made the first time a long
    /// listing is searched ([`Listing::find`]): the models look up a few
    /// names in every directory above each start, and those include
    /// directories of hundreds of entries (`/tmp`, `~/src`).
    by_name: OnceLock<Box<[u32]>>,
    /// The [`name_bit`] of every name: a name whose bit is not set is not
    /// listed. The models look a handful of names up in every directory,
    /// and most are not there: this answers most lookups without a search.
    name_bits: u64,
    /// The same of every name with its ASCII letters lowered, for lookups
    /// that ignore case ([`Listing::may_hold_ignoring_case`]).
    folded_bits: u64,
}

/// One of 64 bits for a name, from its length and its first and last bytes
/// (which tell apart the names the models look for: `CLAUDE.md`,
/// `AGENTS.md`, `.claude`, `GEMINI.md`, ... from most others).
fn name_bit(name: &[u8]) -> u64 {
    bit_of(name.len(), name.first().copied(), name.last().copied())
}

/// [`name_bit`] of `name` with its ASCII letters lowered.
fn folded_bit(name: &[u8]) -> u64 {
    let lower = |b: Option<&u8>| b.map(u8::to_ascii_lowercase);
    bit_of(name.len(), lower(name.first()), lower(name.last()))
}

/// One of 64 bits for a name's length and first and last bytes.
fn bit_of(len: usize, first: Option<u8>, last: Option<u8>) -> u64 {
    let mixed = len ^ (usize::from(first.unwrap_or(0)) * 7) ^ (usize::from(last.unwrap_or(0)) * 13);
    1 << (mixed % 64)
}

/// Listings up to this long are searched entry by entry.
const SEARCHED_IN_ORDER: usize = 16;

impl Packed {
    /// Entry `i`'s name.
    fn name(&self, i: usize) -> &[u8] {
        let start = i.checked_sub(1).map_or(0, |before| self.ends[before].0);
        &self.names[start..self.ends[i].0]
    }
}

/// Listings are equal by their entries.
impl PartialEq for Packed {
    fn eq(&self, other: &Packed) -> bool {
        self.names == other.names && self.ends == other.ends
    }
}

impl Eq for Packed {}

impl Listing {
    /// The listing whose names are `names` one after another, each ending
    /// where `ends` says (in order, within `names`; the walk packs them so).
    pub fn packed(names: Vec<u8>, ends: Vec<(usize, EntryType)>) -> Listing {
        debug_assert!(ends.windows(2).all(|w| w[0].0 <= w[1].0));
        debug_assert!(ends.last().is_none_or(|&(end, _)| end <= names.len()));
        let (mut name_bits, mut folded_bits) = (0, 0);
        let mut start = 0;
        for &(end, _) in &ends {
            name_bits |= name_bit(&names[start..end]);
            folded_bits |= folded_bit(&names[start..end]);
            start = end;
        }
        Listing(Arc::new(Packed {
            names,
            ends,
            exact: OnceLock::new(),
            by_name: OnceLock::new(),
            name_bits,
            folded_bits,
        }))
    }

    /// Each entry's name and type, in order.
    pub fn iter(&self) -> ListingIter<'_> {
        ListingIter {
            names: &self.0.names,
            ends: self.0.ends.iter(),
            start: 0,
        }
    }

    /// Whether a lookup in the listed directory finds exactly the names
    /// listed, as `probe` tells (asked once for the listing, however many
    /// trees share it).
    pub(crate) fn is_exact(&self, probe: impl FnOnce() -> bool) -> bool {
        *self.0.exact.get_or_init(probe)
    }

    /// Whether an entry may be named `name` but for the case of its ASCII
    /// letters (`false`: none is).
    pub(crate) fn may_hold_ignoring_case(&self, name: &[u8]) -> bool {
        self.0.folded_bits & folded_bit(name) != 0
    }

    /// Whether an entry is named `name`, byte for byte.
    pub fn contains(&self, name: &[u8]) -> bool {
        self.find(name).is_some()
    }

    /// The type of the entry named `name` (byte for byte), if there is one.
    pub fn find(&self, name: &[u8]) -> Option<EntryType> {
        let packed = &*self.0;
        if packed.name_bits & name_bit(name) == 0 {
            return None;
        }
        let entries = packed.ends.len();
        if entries <= SEARCHED_IN_ORDER {
            // By length first: most names differ in it.
            let mut start = 0;
            return packed.ends.iter().find_map(|&(end, kind)| {
                let found = end - start == name.len() && packed.names[start..end] == *name;
                start = end;
                found.then_some(kind)
            });
        }
        let by_name = packed.by_name.get_or_init(|| {
            // A listing has fewer entries than a u32 counts (a directory's
            // entries are bounded far below it by every file system).
            let mut order: Vec<u32> = (0..entries as u32).collect();
            order.sort_unstable_by(|&a, &b| packed.name(a as usize).cmp(packed.name(b as usize)));
            order.into()
        });
        let at = by_name
            .binary_search_by(|&i| packed.name(i as usize).cmp(name))
            .ok()?;
        Some(packed.ends[by_name[at] as usize].1)
    }
}

/// [`Listing::iter`].
pub struct ListingIter<'a> {
    names: &'a [u8],
    ends: std::slice::Iter<'a, (usize, EntryType)>,
    /// Where the next name starts.
    start: usize,
}

impl<'a> Iterator for ListingIter<'a> {
    type Item = (&'a OsStr, EntryType);

    fn next(&mut self) -> Option<Self::Item> {
        let &(end, kind) = self.ends.next()?;
        let name = OsStr::from_bytes(&self.names[self.start..end]);
        self.start = end;
        Some((name, kind))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.ends.size_hint()
    }
}

impl ExactSizeIterator for ListingIter<'_> {}

impl<N: AsRef<OsStr>> FromIterator<(N, EntryType)> for Listing {
    fn from_iter<I: IntoIterator<Item = (N, EntryType)>>(entries: I) -> Listing {
        let (mut names, mut ends) = (Vec::new(), Vec::new());
        for (name, kind) in entries {
            names.extend_from_slice(name.as_ref().as_encoded_bytes());
            ends.push((names.len(), kind));
        }
        Listing::packed(names, ends)
    }
}

/// Directories' listings by the bytes of their paths, made by another walk
/// of the same tree ([`Remembered::knowing`]).
pub type Listings = Vec<(Vec<u8>, Listing)>;

/// The listings of the directories above a batch's trees (`/`, `/home`,
/// `~/src`, ...), each made once for the batch: every tree's models look up
/// to `/`, and a tree's [`Remembered`] would list them again, in one
/// repository after another. A listing is made the first time a tree asks,
/// the way [`Live::read_dir`] makes it.
pub struct ListingsAbove(Answers<Listing>);

impl Default for ListingsAbove {
    fn default() -> ListingsAbove {
        ListingsAbove(Answers::new())
    }
}

impl ListingsAbove {
    /// The listings of the directories above `root` (a physical path), to
    /// give the tree's [`Remembered::knowing`]; those that cannot be listed
    /// are left for the tree to ask about.
    pub fn of(&self, root: &Path) -> Listings {
        root.ancestors()
            .skip(1)
            .filter_map(|dir| {
                let listing = self.0.get(key(dir), || Live.read_dir(dir)).ok()?;
                Some((key(dir).to_vec(), listing))
            })
            .collect()
    }
}

/// What a directory entry is, as listing its directory says (links not
/// followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryType {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link.
    Symlink,
    /// A fifo, socket or device.
    Other,
}

impl EntryType {
    /// The type `std` gives.
    pub fn of(file_type: FileType) -> EntryType {
        if file_type.is_file() {
            EntryType::File
        } else if file_type.is_dir() {
            EntryType::Dir
        } else if file_type.is_symlink() {
            EntryType::Symlink
        } else {
            EntryType::Other
        }
    }
    /// A directory (not a link to one).
    pub fn is_dir(self) -> bool {
        self == EntryType::Dir
    }
    /// A regular file (not a link to one).
    pub fn is_file(self) -> bool {
        self == EntryType::File
    }
    /// A symbolic link.
    pub fn is_symlink(self) -> bool {
        self == EntryType::Symlink
    }
}

/// The file system itself.
pub struct Live;

thread_local! {
    /// Where [`Live::read`] reads a file before it is shared.
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The room [`READ_BUFFER`] starts with: most rule files fit, so that one
/// `read` fills it with the file and a second finds the end.
const READ_CHUNK: usize = 16 << 10;

/// The most room [`READ_BUFFER`] keeps after a read.
const READ_KEPT: usize = 1 << 20;

impl Disk for Live {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        fs::metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        fs::symlink_metadata(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }
    fn read(&self, path: &Path) -> io::Result<Arc<[u8]>> {
        // `fs::read` asks the file's size first (an `fstat`) to size a
        // buffer that `Arc::from` then copies and frees. A buffer each
        // thread keeps serves instead: the same reads, one system call
        // and one allocation fewer per file.
        let mut file = fs::File::open(path)?;
        READ_BUFFER.with_borrow_mut(|buffer| {
            let mut filled = 0;
            let read = loop {
                if filled == buffer.len() {
                    buffer.resize((2 * filled).max(READ_CHUNK), 0);
                }
                match file.read(&mut buffer[filled..]) {
                    Ok(0) => break Ok(Arc::from(&buffer[..filled])),
                    Ok(n) => filled += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            };
            // A thread does not hold on to a huge file's room.
            if buffer.len() > READ_KEPT {
                *buffer = Vec::new();
            }
            read
        })
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        // Room for the whole prefix up front (up to 64 KiB): from an empty
        // buffer `read_to_end` probes with 32 bytes and grows by doubling,
        // a system call each time (five to ten for a rule file of a few
        // kilobytes, where two do).
        let mut bytes = Vec::with_capacity(limit.min(1 << 16) as usize);
        fs::File::open(path)?.take(limit).read_to_end(&mut bytes)?;
        bytes.shrink_to_fit();
        Ok(bytes)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Listing> {
        fs::read_dir(path)?
            .map(|entry| {
                let entry = entry?;
                Ok((entry.file_name(), EntryType::of(entry.file_type()?)))
            })
            .collect()
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        fs::read_link(path)
    }
    fn readable(&self, path: &Path) -> bool {
        rustix::fs::access(path, rustix::fs::Access::READ_OK).is_ok()
    }
}

/// An error kept to be given again (`io::Error` is not `Clone`).
#[derive(Clone)]
enum Kept {
    /// The system's error code.
    Os(i32),
    /// An error made without asking the system (a path with a NUL is
    /// refused whole), by its kind and message: the models report the
    /// message, which must read as the first time.
    Made(io::ErrorKind, Arc<str>),
}

impl Kept {
    fn of(e: &io::Error) -> Kept {
        match e.raw_os_error() {
            Some(code) => Kept::Os(code),
            None => Kept::Made(e.kind(), e.to_string().into()),
        }
    }
    fn again(self) -> io::Error {
        match self {
            Kept::Os(code) => io::Error::from_raw_os_error(code),
            Kept::Made(kind, message) => io::Error::new(kind, &*message),
        }
    }
}

/// One question's answers, by the bytes of the path (and any other key
/// parts): each asked of the system once, even when several threads ask
/// at the same time (the others wait for it). Keys are bytes hashed with
/// Fx: `Path`'s own `Hash` parses components, which was a tenth of an
/// `audit --agents` run. Two spellings of one path are two keys, which
/// only costs a second question.
struct Answers<T>(Mutex<ByPath<Arc<Answer<T>>>>);

/// A map keyed by path bytes.
type ByPath<V> = HashMap<Vec<u8>, V, BuildHasherDefault<FxHasher>>;

/// One answer, once it is known.
type Answer<T> = OnceLock<Result<T, Kept>>;

impl<T: Clone> Answers<T> {
    fn new() -> Answers<T> {
        Answers(Mutex::new(HashMap::default()))
    }
    /// The answer for `key` if it is known already (nothing is asked).
    fn known(&self, key: &[u8]) -> Option<io::Result<T>> {
        // Copied under the lock: the cell itself is not shared further.
        let answer = self
            .0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)?
            .get()?
            .clone();
        Some(answer.map_err(Kept::again))
    }
    fn get(&self, key: &[u8], ask: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        // A poisoned lock only means another thread panicked mid-insert.
        let cell = {
            let mut answers = self.0.lock().unwrap_or_else(|p| p.into_inner());
            match answers.get(key) {
                // Known: copied under the lock (most questions are asked
                // again).
                Some(cell) => match cell.get() {
                    Some(answer) => return answer.clone().map_err(Kept::again),
                    None => Arc::clone(cell),
                },
                None => Arc::clone(answers.entry(key.to_vec()).or_default()),
            }
        };
        cell.get_or_init(|| ask().map_err(|e| Kept::of(&e)))
            .clone()
            .map_err(Kept::again)
    }
}

/// The longest prefix of each file read so far (Codex reads each file up
/// to what is left of its budget, which differs from chain to chain). A
/// whole file read answers for its prefixes, and a prefix that ends
/// before its limit for the whole file; what neither answers is asked
/// once per limit, as every question is ([`Answers`]).
#[derive(Default)]
struct Prefixes(Mutex<ByPath<Prefix>>);

/// A file's first bytes, read up to `limit`.
#[derive(Clone)]
struct Prefix {
    bytes: Arc<[u8]>,
    limit: u64,
}

impl Prefix {
    /// Whether reading up to `limit` gives this read's bytes up to
    /// `limit`: it read as far, or it stopped short of its own limit at
    /// the file's end.
    fn answers(&self, limit: u64) -> bool {
        self.limit >= limit || (self.bytes.len() as u64) < self.limit
    }
}

impl Prefixes {
    fn known(&self, key: &[u8]) -> Option<Prefix> {
        let prefixes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        prefixes.get(key).cloned()
    }
    /// Keeps `prefix` unless a longer read of the file is kept already.
    fn keep(&self, key: &[u8], prefix: Prefix) {
        let mut prefixes = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match prefixes.get_mut(key) {
            Some(kept) if kept.limit >= prefix.limit => {}
            Some(kept) => *kept = prefix,
            None => {
                prefixes.insert(key.to_vec(), prefix);
            }
        }
    }
}

/// A path's bytes, as an [`Answers`] key.
fn key(path: &Path) -> &[u8] {
    path.as_os_str().as_encoded_bytes()
}

/// The file system (`inner`), each answer asked once and kept (for one
/// look at a tree whose files do not change meanwhile).
pub struct Remembered<'a> {
    inner: &'a dyn Disk,
    metadata: Answers<Metadata>,
    symlink_metadata: Answers<Metadata>,
    resolution_metadata: Answers<Metadata>,
    canonicalize: Answers<PathBuf>,
    read: Answers<Arc<[u8]>>,
    read_prefix: Answers<Vec<u8>>,
    prefixes: Prefixes,
    read_dir: Answers<Listing>,
    read_link: Answers<PathBuf>,
    readable: Answers<bool>,
    derived: Answers<Derived>,
    counts: Arc<promptinclude_tokenize::Memo>,
}

impl<'a> Remembered<'a> {
    /// Remembers what `inner` answers.
    pub fn over(inner: &'a dyn Disk) -> Remembered<'a> {
        Remembered {
            inner,
            metadata: Answers::new(),
            symlink_metadata: Answers::new(),
            resolution_metadata: Answers::new(),
            canonicalize: Answers::new(),
            read: Answers::new(),
            read_prefix: Answers::new(),
            prefixes: Prefixes::default(),
            read_dir: Answers::new(),
            read_link: Answers::new(),
            readable: Answers::new(),
            derived: Answers::new(),
            counts: Arc::new(promptinclude_tokenize::Memo::new()),
        }
    }
}

impl Remembered<'_> {
    /// The same, with `listings` (made by another look at the same tree)
    /// remembered as what listing those directories gives. A listing keeps
    /// the answer to whether lookups in its directory are exact once it is
    /// probed, so one listing is given only to trees over the same file
    /// system (the batch's are all [`Live`]).
    pub fn knowing(self, listings: Listings) -> Self {
        {
            let mut known = self.read_dir.0.lock().unwrap_or_else(|p| p.into_inner());
            known.reserve(listings.len());
            for (path, listing) in listings {
                known.insert(path, Arc::new(OnceLock::from(Ok(listing))));
            }
        }
        self
    }

    /// The same, counting tokens with `counts`: a text's count depends on
    /// nothing but the text, so one memo can serve every tree of a batch,
    /// whose rule files and framing repeat from repository to repository.
    pub fn counting_with(mut self, counts: Arc<promptinclude_tokenize::Memo>) -> Self {
        self.counts = counts;
        self
    }

    /// `realpath` of an absolute path without `.`, `..`, doubled or
    /// trailing slashes: the parent's real path (remembered) and one
    /// remembered `lstat` of the name under it, so that the paths of a
    /// tree share their ancestors' steps instead of each `realpath`
    /// reading a link at every component again (that was 21k `readlink`
    /// calls for 14k files). The same calls in the same order as
    /// `realpath`'s own walk, so the same answer and the same error; a
    /// link (but one to a plain name beside it), and any other path, is
    /// left to `inner`: a path with a NUL too, which `realpath` refuses
    /// whole before its walk.
    fn resolve(&self, path: &Path) -> io::Result<PathBuf> {
        let split = plain_split(path).filter(|_| !key(path).contains(&0));
        let Some((parent, name)) = split else {
            return self.inner.canonicalize(path);
        };
        let real_parent = self.canonicalize(parent)?;
        let real = joined(&real_parent, name);
        if self.listed_as_no_link(&real) {
            return Ok(real);
        }
        if !self.resolution_metadata(&real)?.file_type().is_symlink() {
            return Ok(real);
        }
        // A link to a name beside it that is no link itself (`CLAUDE.md`
        // -> `AGENTS.md`): `realpath` reads the link and finds that name
        // in the same directory, which is all `readlink` and one `lstat`
        // say here, where `realpath` would read a link at every part of
        // the path again. Any other link is left to it.
        let target = self.read_link(&real).ok();
        let beside = target
            .as_deref()
            .map(|t| t.as_os_str().as_encoded_bytes())
            .filter(|t| !matches!(*t, b"" | b"." | b"..") && !t.contains(&b'/'))
            .map(|t| joined(&real_parent, OsStr::from_bytes(t)));
        match beside {
            Some(beside)
                if self.listed_as_no_link(&beside)
                    || self
                        .resolution_metadata(&beside)
                        .is_ok_and(|m| !m.file_type().is_symlink()) =>
            {
                Ok(beside)
            }
            _ => self.inner.canonicalize(&real),
        }
    }

    /// Whether the system would answer "no such file" for `path` whatever
    /// is asked about it, known without asking: its parent directory's
    /// listing is remembered already and lacks its name, and looking up a
    /// name in that directory is an exact byte match ([`Self::exact_lookup`]).
    /// The agents look for a handful of names in every directory of a tree
    /// (`CLAUDE.md`, `.claude`, `GEMINI.md`, ...), and most are not there:
    /// that was a third of an `audit --agents` run's system calls.
    fn known_absent(&self, path: &Path) -> bool {
        // A name with a NUL is not answerable: the system refuses such a
        // path whole. One in the parent is never "not found" either: no
        // such parent is listed, and asking about it comes here again
        // until its name with the NUL is asked of the system.
        let Some((parent, name)) = plain_split(path) else {
            return false;
        };
        let name = name.as_encoded_bytes();
        if !answerable(name, key(path).len()) {
            return false;
        }
        match self.read_dir.known(key(parent)) {
            Some(Ok(listing)) => {
                absent_from(&listing, name, key(path).len()) && self.is_exact(parent, &listing)
            }
            Some(Err(e)) if e.raw_os_error() == Some(NOT_FOUND) => true,
            // Nothing is below a directory that is not there (its own
            // `lstat` is remembered, and known without asking where its
            // parent is listed).
            _ => self
                .symlink_metadata(parent)
                .is_err_and(|e| e.raw_os_error() == Some(NOT_FOUND)),
        }
    }

    /// Whether `path`'s parent is listed already, lookups in it are exact
    /// (so it can be searched), and it lists `path`'s name as a file or
    /// directory: then `lstat` finds it and it is not a link, which is
    /// all [`Self::resolve`] asks `lstat` (a tree's every directory is
    /// resolved as an agent's start).
    fn listed_as_no_link(&self, path: &Path) -> bool {
        let Some((parent, name)) = plain_split(path) else {
            return false;
        };
        self.listing_known(parent).is_some_and(|listing| {
            listing
                .find(name.as_encoded_bytes())
                .is_some_and(|kind| kind.is_dir() || kind.is_file())
        })
    }

    /// [`Disk::exact_listing`] of a plain directory path from what is
    /// remembered: its listing where lookups in it are exact
    /// ([`Self::exact_lookup`]), or none when listing it found nothing
    /// there.
    fn listing_known(&self, dir: &Path) -> Option<Listing> {
        match self.read_dir.known(key(dir))? {
            Ok(listing) => self.is_exact(dir, &listing).then_some(listing),
            Err(e) if e.raw_os_error() == Some(NOT_FOUND) => Some(Listing::default()),
            Err(_) => None,
        }
    }

    /// [`Self::exact_lookup`], asked once per listing.
    fn is_exact(&self, dir: &Path, listing: &Listing) -> bool {
        listing.is_exact(|| self.exact_lookup(dir, listing))
    }

    /// Whether a name is found in directory `dir` (listed as `listing`)
    /// exactly when it is one of the listing's names byte for byte, for
    /// names in ASCII. Not so in a directory that cannot be searched (the
    /// answer is "permission denied"), one whose file system folds case
    /// (vfat, a case-folding ext4, f2fs or tmpfs directory, XFS made
    /// `ascii-ci`, a share from a case-insensitive host), or one that
    /// normalises Unicode, where a name outside ASCII can match an ASCII
    /// one (`U+212A KELVIN SIGN` is `K`). So: every name listed is ASCII,
    /// and one listed name with its case swapped (a name not listed) is
    /// asked for and not found. Case folding and searchability hold for a
    /// whole directory, so one question answers for all its names; where
    /// no name can be swapped, nothing is assumed.
    fn exact_lookup(&self, dir: &Path, listing: &Listing) -> bool {
        let names: Vec<&[u8]> = listing
            .iter()
            .map(|(name, _)| name.as_encoded_bytes())
            .collect();
        if !names.iter().all(|name| name.is_ascii()) {
            return false;
        }
        let swapped = names.iter().find_map(|name| {
            let swapped: Vec<u8> = name
                .iter()
                .map(|&b| match b {
                    b'a'..=b'z' => b.to_ascii_uppercase(),
                    b'A'..=b'Z' => b.to_ascii_lowercase(),
                    _ => b,
                })
                .collect();
            (swapped != *name && !names.contains(&swapped.as_slice())).then_some(swapped)
        });
        swapped.is_some_and(|swapped| {
            let probe = joined(dir, OsStr::from_bytes(&swapped));
            self.inner
                .symlink_metadata(&probe)
                .is_err_and(|e| e.raw_os_error() == Some(NOT_FOUND))
        })
    }

    /// Asks `ask` unless `path` is [known absent](Self::known_absent).
    fn unless_absent<T>(&self, path: &Path, ask: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        if self.known_absent(path) {
            Err(io::Error::from_raw_os_error(NOT_FOUND))
        } else {
            ask()
        }
    }
}

/// `ENOENT`.
const NOT_FOUND: i32 = rustix::io::Errno::NOENT.raw_os_error();

/// A [plain](is_plain) path's parent and name (`None` for any other path).
fn plain_split(path: &Path) -> Option<(&Path, &OsStr)> {
    is_plain(key(path)).then(|| split_at_last_slash(key(path)))
}

/// A plain path's parent and name, split at its last `/` by bytes: what
/// `Path::parent` and `Path::file_name` give it without parsing its
/// components from the end (the models ask it of thousands of paths).
fn split_at_last_slash(path: &[u8]) -> (&Path, &OsStr) {
    let slash = path.iter().rposition(|&b| b == b'/').unwrap_or(0);
    let parent = if slash == 0 {
        &path[..1]
    } else {
        &path[..slash]
    };
    (
        Path::new(OsStr::from_bytes(parent)),
        OsStr::from_bytes(&path[slash + 1..]),
    )
}

/// `path.parent()`, by bytes where the path is [plain](is_plain).
pub(crate) fn parent(path: &Path) -> Option<&Path> {
    match is_plain(key(path)) {
        true => Some(split_at_last_slash(key(path)).0),
        false => path.parent(),
    }
}

/// `path.ancestors()`, by bytes where the path is [plain](is_plain) (its
/// ancestors then are too, but for `/`, which has no parent).
pub(crate) fn ancestors(path: &Path) -> impl Iterator<Item = &Path> {
    let plain = is_plain(key(path));
    std::iter::successors(Some(path), move |dir| match plain {
        true if key(dir) == b"/" => None,
        true => Some(split_at_last_slash(key(dir)).0),
        false => dir.parent(),
    })
}

/// Whether a path (its bytes) is absolute, not `/`, and without `.`, `..`,
/// doubled or trailing slashes: its own normal form by any rule (`Path`'s
/// components, Node's `path.join`), which the models can take as it is.
pub fn is_plain(path: &[u8]) -> bool {
    path.len() > 1
        && path[0] == b'/'
        && path[1..]
            .split(|&b| b == b'/')
            .all(|name| !matches!(name, b"" | b"." | b".."))
}

impl Disk for Remembered<'_> {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.metadata.get(key(path), || {
            self.unless_absent(path, || self.inner.metadata(path))
        })
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.symlink_metadata.get(key(path), || {
            self.unless_absent(path, || self.inner.symlink_metadata(path))
        })
    }
    fn resolution_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.resolution_metadata.get(key(path), || {
            self.unless_absent(path, || self.inner.resolution_metadata(path))
        })
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.canonicalize.get(key(path), || self.resolve(path))
    }
    fn read(&self, path: &Path) -> io::Result<Arc<[u8]>> {
        self.read.get(key(path), || {
            // A prefix read that stopped at the file's end is the file.
            let prefix = self.prefixes.known(key(path));
            if let Some(whole) = prefix.filter(|p| (p.bytes.len() as u64) < p.limit) {
                return Ok(whole.bytes);
            }
            self.unless_absent(path, || self.inner.read(path))
        })
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        let cut = |bytes: &[u8]| bytes[..bytes.len().min(limit as usize)].to_vec();
        // Reading nothing does not read a directory (and fail): not
        // answered from another read.
        if limit > 0 {
            if let Some(Ok(whole)) = self.read.known(key(path)) {
                return Ok(cut(&whole));
            }
            if let Some(prefix) = self.prefixes.known(key(path)).filter(|p| p.answers(limit)) {
                return Ok(cut(&prefix.bytes));
            }
        }
        let mut with_limit = key(path).to_vec();
        with_limit.extend_from_slice(&limit.to_le_bytes());
        let bytes = self.read_prefix.get(&with_limit, || {
            self.unless_absent(path, || self.inner.read_prefix(path, limit))
        })?;
        if limit > 0 {
            let prefix = Prefix {
                bytes: Arc::from(&bytes[..]),
                limit,
            };
            self.prefixes.keep(key(path), prefix);
        }
        Ok(bytes)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Listing> {
        self.read_dir.get(key(path), || {
            self.unless_absent(path, || self.inner.read_dir(path))
        })
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.read_link.get(key(path), || {
            self.unless_absent(path, || self.inner.read_link(path))
        })
    }
    fn readable(&self, path: &Path) -> bool {
        self.readable
            .get(key(path), || {
                Ok(!self.known_absent(path) && self.inner.readable(path))
            })
            .unwrap_or(false)
    }
    fn derived(&self, what: &'static str, path: &Path, derive: &dyn Fn() -> Derived) -> Derived {
        // The key, `what`, a NUL and the path, is made on the stack where
        // it fits: every agent asks for some value of every directory.
        let path = key(path);
        let len = what.len() + 1 + path.len();
        let (mut stack, mut heap) = ([0u8; 256], Vec::new());
        let named: &mut [u8] = match stack.get_mut(..len) {
            Some(named) => named,
            None => {
                heap.resize(len, 0);
                &mut heap
            }
        };
        named[..what.len()].copy_from_slice(what.as_bytes());
        named[what.len()] = 0;
        named[what.len() + 1..].copy_from_slice(path);
        // Deriving never fails: the error side is never taken.
        self.derived
            .get(named, || Ok(derive()))
            .unwrap_or_else(|_| derive())
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.counts.count(text)
    }
    fn count_split(&self, text: &str) -> promptinclude_tokenize::Split {
        self.counts.count_split(text)
    }
    fn exact_listing(&self, dir: &Path) -> Option<Listing> {
        if is_plain(key(dir)) {
            self.listing_known(dir)
        } else {
            None
        }
    }
}

/// The file system (`inner`) as if nothing were above one tree but the
/// user's own settings: a path outside `root` is seen only under one of
/// the `user` directories (the agents' configuration, e.g.
/// `$CODEX_HOME`), or under `home` past a name that starts with `.`
/// (`~/.claude`, `~/.gemini`). Everything else answers "not found".
///
/// `diff --agents` compares a revision checked out elsewhere with the tree
/// at its own place. Claude Code and pi read every directory up to `/`,
/// and what lies above the two places differs; seen through this, both
/// sides have the same (nothing) above them, and the user's files alike.
pub struct Confined<'a> {
    inner: &'a dyn Disk,
    root: PathBuf,
    home: Vec<PathBuf>,
    user: Vec<PathBuf>,
}

impl<'a> Confined<'a> {
    /// `inner` seen from the tree at `root` (a physical path) for the user
    /// whose home is `home`, with the agents' own directories `user`.
    pub fn new(inner: &'a dyn Disk, root: &Path, home: &Path, user: Vec<PathBuf>) -> Confined<'a> {
        let mut homes = vec![home.to_path_buf()];
        homes.extend(inner.canonicalize(home).ok().filter(|h| h != home));
        let mut users = user.clone();
        users.extend(user.iter().filter_map(|u| inner.canonicalize(u).ok()));
        Confined {
            inner,
            root: root.to_path_buf(),
            home: homes,
            user: users,
        }
    }

    fn visible(&self, path: &Path) -> bool {
        path.starts_with(&self.root)
            || self.user.iter().any(|u| path.starts_with(u))
            || self.home.iter().any(|home| {
                path.strip_prefix(home).ok().is_some_and(|rest| {
                    rest.components()
                        .next()
                        .is_some_and(|first| first.as_os_str().as_encoded_bytes().starts_with(b"."))
                })
            })
    }

    fn hidden<T>(&self, path: &Path, ask: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        if self.visible(path) {
            ask()
        } else {
            // Not the system's `ENOENT`: `Remembered` takes that to mean
            // nothing is below the path either, which holds on a file
            // system and not in this view (`~` is hidden, `~/.claude` not).
            Err(io::Error::from(io::ErrorKind::NotFound))
        }
    }
}

impl Disk for Confined<'_> {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.hidden(path, || self.inner.metadata(path))
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.hidden(path, || self.inner.symlink_metadata(path))
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        // Where a path leads (a link inside the tree to a file outside it
        // is followed, as the agent follows it on either side).
        self.inner.canonicalize(path)
    }
    fn read(&self, path: &Path) -> io::Result<Arc<[u8]>> {
        self.hidden(path, || self.inner.read(path))
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        self.hidden(path, || self.inner.read_prefix(path, limit))
    }
    fn read_dir(&self, path: &Path) -> io::Result<Listing> {
        self.hidden(path, || self.inner.read_dir(path))
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.hidden(path, || self.inner.read_link(path))
    }
    fn readable(&self, path: &Path) -> bool {
        self.visible(path) && self.inner.readable(path)
    }
    fn resolution_metadata(&self, path: &Path) -> io::Result<Metadata> {
        // As `canonicalize`: where a path leads is not hidden.
        self.inner.resolution_metadata(path)
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
    fn count_split(&self, text: &str) -> promptinclude_tokenize::Split {
        self.inner.count_split(text)
    }
}

/// The tree at `actual` seen at `shown` (both physical paths): every path
/// at or below `shown` asked of it is asked of the same place below
/// `actual`, and the paths it answers with (`realpath`, a link's target)
/// come back below `shown`. Paths are replaced by their bytes (a path's
/// trailing `/` or `.` parts mean something to the system and are kept).
///
/// `diff --agents` audits a revision checked out in a temporary directory
/// seen at the tree's own place, so the agents frame and count its files
/// with the paths the tree has: the base side's numbers do not depend on
/// the checkout's random name, and equal files count the same on both
/// sides.
pub struct Rebased<'a> {
    inner: &'a dyn Disk,
    shown: PathBuf,
    actual: PathBuf,
}

impl<'a> Rebased<'a> {
    /// `inner`'s tree at `actual`, shown at `shown`.
    pub fn new(inner: &'a dyn Disk, shown: &Path, actual: &Path) -> Rebased<'a> {
        Rebased {
            inner,
            shown: shown.to_path_buf(),
            actual: actual.to_path_buf(),
        }
    }

    /// `path` with its leading `from` (a whole part of it) replaced by `to`.
    fn moved(path: &Path, from: &Path, to: &Path) -> Option<PathBuf> {
        let (path, from) = (key(path), key(from));
        let rest = path.strip_prefix(from)?;
        if !(rest.is_empty() || rest[0] == b'/' || from.ends_with(b"/")) {
            return None;
        }
        let mut moved = key(to).to_vec();
        moved.extend_from_slice(rest);
        Some(PathBuf::from(OsStr::from_bytes(&moved)))
    }

    fn to_actual<'p>(&self, path: &'p Path) -> std::borrow::Cow<'p, Path> {
        Self::moved(path, &self.shown, &self.actual).map_or(path.into(), Into::into)
    }

    fn to_shown(&self, path: PathBuf) -> PathBuf {
        Self::moved(&path, &self.actual, &self.shown).unwrap_or(path)
    }
}

impl Disk for Rebased<'_> {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.metadata(&self.to_actual(path))
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.symlink_metadata(&self.to_actual(path))
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner
            .canonicalize(&self.to_actual(path))
            .map(|p| self.to_shown(p))
    }
    fn read(&self, path: &Path) -> io::Result<Arc<[u8]>> {
        self.inner.read(&self.to_actual(path))
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        self.inner.read_prefix(&self.to_actual(path), limit)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Listing> {
        self.inner.read_dir(&self.to_actual(path))
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner
            .read_link(&self.to_actual(path))
            .map(|p| self.to_shown(p))
    }
    fn readable(&self, path: &Path) -> bool {
        self.inner.readable(&self.to_actual(path))
    }
    fn resolution_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.resolution_metadata(&self.to_actual(path))
    }
    fn count_tokens(&self, text: &str) -> usize {
        self.inner.count_tokens(text)
    }
    fn count_split(&self, text: &str) -> promptinclude_tokenize::Split {
        self.inner.count_split(text)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::is_plain;
    use std::path::{Path, PathBuf};

    /// `absent_below` without the joined path answers as the joined path's
    /// lookup would: by its first part, up to the system's path length
    /// (directories of every shape, names of several parts, lengths either
    /// side of 4096).
    #[test]
    fn absent_below_measures_the_path_it_does_not_make() {
        use super::{absent_below, answerable, key, EntryType, Listing};
        let listing: Listing = [("here", EntryType::File)].into_iter().collect();
        let joined = |dir: &Path, name: &str| {
            let mut parts = name.split('/');
            let first = parts.next().unwrap_or_default();
            !matches!(first, "" | "." | "..")
                && parts.all(|part| !matches!(part, "" | "." | ".."))
                && answerable(first.as_bytes(), key(&dir.join(name)).len())
                && first != "here"
                && !name.contains('\0')
        };
        let long = |n: usize| format!("/{}", "d".repeat(n));
        let mut dirs: Vec<String> = promptinclude_testkit::small_paths(3);
        for n in 4070..4096 {
            dirs.push(long(n));
            dirs.push(format!("{}/", long(n)));
        }
        let names = [
            "CLAUDE.md",
            "here",
            ".claude/rules",
            "here/x",
            "a//b",
            "./x",
            "x/..",
            "",
            "CLAUDE.md\0x",
            "x/a\0b",
        ];
        for dir in &dirs {
            for name in names {
                let dir = Path::new(dir);
                assert_eq!(
                    absent_below(Some(&listing), dir, name),
                    joined(dir, name),
                    "{dir:?} {name:?}"
                );
            }
        }
        assert!(!absent_below(None, Path::new("/a"), "CLAUDE.md"));
    }

    /// `joined` is `Path::join`, byte for byte: names relative or absolute,
    /// empty, with dots and with trailing or doubled slashes, on
    /// directories of the same shapes.
    #[test]
    fn joined_is_path_join() {
        let paths = promptinclude_testkit::small_paths(3);
        for dir in &paths {
            for name in &paths {
                let (dir_path, name_path) = (Path::new(dir), Path::new(name));
                let joined = super::joined(dir_path, name_path);
                let bytes = dir_path
                    .join(name_path)
                    .into_os_string()
                    .into_encoded_bytes();
                assert_eq!(
                    joined.as_os_str().as_encoded_bytes(),
                    bytes,
                    "{dir:?} {name:?}"
                );
                // `is_joined` knows it without making it (a relative name),
                // and only it: not with any one byte changed.
                if !name.starts_with('/') {
                    assert!(super::is_joined(&bytes, dir_path, name), "{dir:?} {name:?}");
                    for i in 0..bytes.len() {
                        let mut other = bytes.clone();
                        other[i] ^= 1;
                        assert!(
                            !super::is_joined(&other, dir_path, name),
                            "{dir:?} {name:?} {i}"
                        );
                    }
                }
            }
        }
    }

    /// A listing gives back its entries in order, and finds a name only
    /// where one is that name byte for byte (names that are prefixes and
    /// suffixes of each other, names outside UTF-8, no names at all).
    #[test]
    fn a_listing_keeps_its_entries_in_order() {
        use super::{EntryType, Listing};
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt as _;
        let names: [&[u8]; 6] = [b"ab", b"a", b"abc", b"\xff\xfe", b"b", b"CLAUDE.md"];
        let kinds = [
            EntryType::File,
            EntryType::Dir,
            EntryType::Symlink,
            EntryType::Other,
        ];
        let entries: Vec<(&OsStr, EntryType)> = names
            .iter()
            .zip(kinds.iter().cycle())
            .map(|(name, &kind)| (OsStr::from_bytes(name), kind))
            .collect();
        let listing: Listing = entries.iter().copied().collect();
        assert_eq!(listing.iter().collect::<Vec<_>>(), entries);
        assert_eq!(listing.iter().len(), 6);
        for name in names {
            assert!(listing.contains(name), "{name:?}");
        }
        for name in [&b""[..], b"abcd", b"c", b"\xff", b"claude.md", b"bab"] {
            assert!(!listing.contains(name), "{name:?}");
        }
        let empty = Listing::default();
        assert!(empty.iter().next().is_none() && !empty.contains(b""));
    }

    /// `find` is a search of the entries in order, for listings short
    /// enough to be searched so and long enough to be sorted first: every
    /// name listed, and names that are not (prefixes, extensions, other
    /// cases, bytes outside UTF-8).
    #[test]
    fn a_listing_finds_what_a_search_in_order_finds() {
        use super::{EntryType, Listing, SEARCHED_IN_ORDER};
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt as _;
        let kinds = [EntryType::File, EntryType::Dir, EntryType::Symlink];
        let pool: Vec<Vec<u8>> = promptinclude_testkit::small_paths(2)
            .into_iter()
            .map(String::into_bytes)
            .chain([b"\xff".to_vec(), b"\xffa".to_vec(), b"A".to_vec()])
            .filter(|n| !n.is_empty())
            .collect();
        for len in 0..=3 * SEARCHED_IN_ORDER {
            // A different set and order for each length: every third name
            // of the pool from `len` on.
            let mut names: Vec<&[u8]> = (0..len)
                .map(|i| pool[(len + 3 * i) % pool.len()].as_slice())
                .collect();
            let mut seen = std::collections::HashSet::new();
            names.retain(|n| seen.insert(*n));
            let listing: Listing = names
                .iter()
                .zip(kinds.iter().cycle())
                .map(|(n, &kind)| (OsStr::from_bytes(n), kind))
                .collect();
            for name in &names {
                let swapped: Vec<u8> = name
                    .iter()
                    .map(|b| b.to_ascii_uppercase() ^ b.to_ascii_lowercase() ^ b)
                    .collect();
                assert!(listing.may_hold_ignoring_case(&swapped), "{swapped:?}");
            }
            for probe in &pool {
                let in_order = listing
                    .iter()
                    .find(|(n, _)| n.as_encoded_bytes() == probe.as_slice())
                    .map(|(_, kind)| kind);
                assert_eq!(listing.find(probe), in_order, "{len} {probe:?}");
            }
        }
    }

    /// `Live::read_prefix` gives the file's first `limit` bytes, for sizes
    /// and limits on either side of the room it reads into (64 KiB) and of
    /// `read_to_end`'s first probe (32 bytes), and random ones.
    #[test]
    fn read_prefix_is_the_files_first_bytes() {
        use super::{Disk, Live};
        let mut next = promptinclude_testkit::seeded();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        let edges = [0, 1, 31, 32, 33, 4096, 65_535, 65_536, 65_537, 200_000];
        let mut sizes = edges.to_vec();
        sizes.extend((0..6).map(|_| next(140_000)));
        for size in sizes {
            let bytes: Vec<u8> = (0..size).map(|_| next(256) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            let mut limits: Vec<usize> = edges.to_vec();
            limits.extend([size.saturating_sub(1), size, size + 1, next(size + 2)]);
            for limit in limits {
                let prefix = Live.read_prefix(&path, limit as u64).unwrap();
                assert_eq!(
                    prefix,
                    bytes[..size.min(limit)],
                    "size {size}, limit {limit}"
                );
            }
        }
        // A whole-file limit, as no file is that long.
        let whole = Live.read_prefix(&path, u64::MAX).unwrap();
        assert_eq!(whole, std::fs::read(&path).unwrap());
    }

    /// `Live::read` reads what `fs::read` reads, on either side of the room
    /// its buffer starts with and of the room it keeps, one file after
    /// another on one thread (a short file after a long one is not given
    /// the long one's tail), and fails as it does.
    #[test]
    fn read_is_fs_read() {
        use super::{Disk, Live, READ_CHUNK, READ_KEPT};
        let mut next = promptinclude_testkit::seeded();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file");
        let mut sizes = vec![
            0,
            1,
            READ_CHUNK - 1,
            READ_CHUNK,
            READ_CHUNK + 1,
            3 * READ_CHUNK,
        ];
        sizes.extend([READ_KEPT, READ_KEPT + 1, 2, 2 * READ_KEPT + 5, 7]);
        sizes.extend((0..8).map(|_| next(4 * READ_CHUNK)));
        for size in sizes {
            let bytes: Vec<u8> = (0..size).map(|_| next(256) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            assert_eq!(&Live.read(&path).unwrap()[..], &bytes[..], "size {size}");
        }
        for missing in [dir.path().join("absent"), dir.path().to_path_buf()] {
            let ours = Live.read(&missing).unwrap_err();
            let std = std::fs::read(&missing).unwrap_err();
            assert_eq!(
                ours.raw_os_error(),
                std.raw_os_error(),
                "{}",
                missing.display()
            );
        }
    }

    /// The listings above a tree are what listing each directory gives, up
    /// to `/`, and each is made once for every tree below it.
    #[test]
    fn listings_above_list_each_directory_once() {
        use super::{Disk, ListingsAbove, Live};
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        let (one, two) = (base.join("repos/one"), base.join("repos/two"));
        std::fs::create_dir_all(&one).unwrap();
        std::fs::create_dir_all(&two).unwrap();
        let above = ListingsAbove::default();
        let listed = above.of(&one);
        let dirs: Vec<&Path> = one.ancestors().skip(1).collect();
        assert_eq!(listed.len(), dirs.len());
        for ((key, listing), dir) in listed.iter().zip(&dirs) {
            assert_eq!(key.as_slice(), dir.as_os_str().as_encoded_bytes());
            assert_eq!(listing, &Live.read_dir(dir).unwrap(), "{dir:?}");
        }
        // A file made since is not in what the second tree is given: its
        // parent was listed once, for the first.
        std::fs::write(base.join("repos/new.md"), "x").unwrap();
        let again = above.of(&two);
        assert_eq!(again, listed);
        let fresh = ListingsAbove::default().of(&two);
        assert_ne!(fresh, listed);
    }

    /// Whether lookups in a listed directory are exact is asked of the
    /// system once for the listing, however many trees' remembered answers
    /// share it (the directories above a batch's trees).
    #[test]
    fn a_shared_listing_is_probed_once() {
        use super::{Disk, Listing, Live, Metadata, Remembered};
        use std::io;
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        /// `Live`, counting the `lstat`s of names not listed (the probes).
        struct Probes<'a>(&'a Listing, AtomicUsize);
        impl Disk for Probes<'_> {
            fn metadata(&self, path: &Path) -> io::Result<Metadata> {
                Live.metadata(path)
            }
            fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
                let name = path.file_name().unwrap_or_default();
                if !self.0.contains(name.as_encoded_bytes()) {
                    self.1.fetch_add(1, Ordering::Relaxed);
                }
                Live.symlink_metadata(path)
            }
            fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
                Live.canonicalize(path)
            }
            fn read(&self, path: &Path) -> io::Result<Arc<[u8]>> {
                Live.read(path)
            }
            fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
                Live.read_prefix(path, limit)
            }
            fn read_dir(&self, path: &Path) -> io::Result<Listing> {
                Live.read_dir(path)
            }
            fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
                Live.read_link(path)
            }
            fn readable(&self, path: &Path) -> bool {
                Live.readable(path)
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(base.join("CLAUDE.md"), "x").unwrap();
        let listing = Live.read_dir(&base).unwrap();
        let probes = Probes(&listing, AtomicUsize::new(0));
        let key = base.as_os_str().as_encoded_bytes().to_vec();
        let exact: Vec<Option<Listing>> = (0..2)
            .map(|_| {
                let tree = Remembered::over(&probes).knowing(vec![(key.clone(), listing.clone())]);
                tree.exact_listing(&base)
            })
            .collect();
        // A case-folding file system answers `None` both times; either way
        // the directory was probed once.
        assert_eq!(exact[0], exact[1]);
        assert_eq!(probes.1.load(Ordering::Relaxed), 1);
    }

    /// A plain path is its components' normal form.
    #[test]
    fn a_plain_path_is_its_own_normal_form() {
        for path in promptinclude_testkit::small_paths(5) {
            let normal: PathBuf = Path::new(&path).components().collect();
            if is_plain(path.as_bytes()) {
                assert_eq!(Path::new(&path), normal, "{path:?}");
            }
        }
        assert!(is_plain(b"/a/b.md") && !is_plain(b"/") && !is_plain(b"/a/../b"));
    }

    /// `parent`, `ancestors` and a plain path's split, by bytes, are what
    /// `Path` gives, for every path of a few parts (plain or not).
    #[test]
    fn parents_by_bytes_are_paths_parents() {
        use super::{ancestors, parent, plain_split};
        for path in promptinclude_testkit::small_paths(5) {
            let path = Path::new(&path);
            assert_eq!(parent(path), path.parent(), "{path:?}");
            let by_bytes: Vec<&Path> = ancestors(path).collect();
            let by_parts: Vec<&Path> = path.ancestors().collect();
            // The same paths, and the same bytes (not only equal by parts).
            let bytes = |v: &[&Path]| -> Vec<Vec<u8>> {
                v.iter()
                    .map(|p| p.as_os_str().as_encoded_bytes().to_vec())
                    .collect()
            };
            assert_eq!(bytes(&by_bytes), bytes(&by_parts), "{path:?}");
            if let Some((dir, name)) = plain_split(path) {
                assert_eq!(Some(dir), path.parent(), "{path:?}");
                assert_eq!(Some(name), path.file_name(), "{path:?}");
            }
        }
        assert_eq!(
            plain_split(Path::new("/a")),
            Some((Path::new("/"), "a".as_ref()))
        );
        assert_eq!(plain_split(Path::new("/")), None);
    }
}
