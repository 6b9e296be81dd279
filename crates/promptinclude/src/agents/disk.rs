//! The file system as the agent models look at it: [`Live`] asks the
//! system each time; [`Remembered`] asks it once per question and keeps the
//! answer, so that the contexts of every directory of a tree
//! ([`super::contexts_under`]) look at each file and directory once, as one
//! walk does, whatever the number of directories that share it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, FileType, Metadata};
use std::hash::Hash;
use std::io::{self, Read as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// What a model asks of the file system (the `std::fs` calls of the same
/// names; `readable` is `access(R_OK)`).
pub trait Disk: Sync {
    /// `stat`: links followed.
    fn metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// `lstat`.
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata>;
    /// `realpath`.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;
    /// The whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The file's first `limit` bytes.
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>>;
    /// A directory's entries in the system's order, with their types (links
    /// not followed).
    fn read_dir(&self, path: &Path) -> io::Result<Vec<(OsString, FileType)>>;
    /// A link's target.
    fn read_link(&self, path: &Path) -> io::Result<PathBuf>;
    /// Whether the current user may read it (a directory too).
    fn readable(&self, path: &Path) -> bool;
}

/// The file system itself.
pub struct Live;

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
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        fs::read(path)
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        fs::File::open(path)?.take(limit).read_to_end(&mut bytes)?;
        Ok(bytes)
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<(OsString, FileType)>> {
        let mut entries = Vec::new();
        for entry in fs::read_dir(path)? {
            let entry = entry?;
            entries.push((entry.file_name(), entry.file_type()?));
        }
        Ok(entries)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        fs::read_link(path)
    }
    fn readable(&self, path: &Path) -> bool {
        rustix::fs::access(path, rustix::fs::Access::READ_OK).is_ok()
    }
}

/// An error kept to be given again (`io::Error` is not `Clone`).
#[derive(Clone, Copy)]
struct Kept {
    code: Option<i32>,
    kind: io::ErrorKind,
}

impl Kept {
    fn of(e: &io::Error) -> Kept {
        Kept {
            code: e.raw_os_error(),
            kind: e.kind(),
        }
    }
    fn again(self) -> io::Error {
        self.code
            .map_or_else(|| io::Error::from(self.kind), io::Error::from_raw_os_error)
    }
}

/// One question's answers, by path: each asked of the system once, even
/// when several threads ask at the same time (the others wait for it).
struct Answers<K, T>(Mutex<HashMap<K, Arc<Answer<T>>>>);

/// One answer, once it is known.
type Answer<T> = OnceLock<Result<T, Kept>>;

impl<K: Hash + Eq, T: Clone> Answers<K, T> {
    fn new() -> Answers<K, T> {
        Answers(Mutex::new(HashMap::new()))
    }
    fn get(&self, key: K, ask: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
        // A poisoned lock only means another thread panicked mid-insert.
        let cell = {
            let mut answers = self.0.lock().unwrap_or_else(|p| p.into_inner());
            Arc::clone(answers.entry(key).or_default())
        };
        cell.get_or_init(|| ask().map_err(|e| Kept::of(&e)))
            .clone()
            .map_err(Kept::again)
    }
}

/// The file system (`inner`), each answer asked once and kept (for one
/// look at a tree whose files do not change meanwhile).
pub struct Remembered<'a> {
    inner: &'a dyn Disk,
    metadata: Answers<PathBuf, Metadata>,
    symlink_metadata: Answers<PathBuf, Metadata>,
    canonicalize: Answers<PathBuf, PathBuf>,
    read: Answers<PathBuf, Vec<u8>>,
    read_prefix: Answers<(PathBuf, u64), Vec<u8>>,
    read_dir: Answers<PathBuf, Vec<(OsString, FileType)>>,
    read_link: Answers<PathBuf, PathBuf>,
    readable: Answers<PathBuf, bool>,
}

impl<'a> Remembered<'a> {
    /// Remembers what `inner` answers.
    pub fn over(inner: &'a dyn Disk) -> Remembered<'a> {
        Remembered {
            inner,
            metadata: Answers::new(),
            symlink_metadata: Answers::new(),
            canonicalize: Answers::new(),
            read: Answers::new(),
            read_prefix: Answers::new(),
            read_dir: Answers::new(),
            read_link: Answers::new(),
            readable: Answers::new(),
        }
    }
}

impl Disk for Remembered<'_> {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.metadata
            .get(path.to_path_buf(), || self.inner.metadata(path))
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.symlink_metadata
            .get(path.to_path_buf(), || self.inner.symlink_metadata(path))
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.canonicalize
            .get(path.to_path_buf(), || self.inner.canonicalize(path))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.read.get(path.to_path_buf(), || self.inner.read(path))
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        self.read_prefix.get((path.to_path_buf(), limit), || {
            self.inner.read_prefix(path, limit)
        })
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<(OsString, FileType)>> {
        self.read_dir
            .get(path.to_path_buf(), || self.inner.read_dir(path))
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.read_link
            .get(path.to_path_buf(), || self.inner.read_link(path))
    }
    fn readable(&self, path: &Path) -> bool {
        self.readable
            .get(path.to_path_buf(), || Ok(self.inner.readable(path)))
            .unwrap_or(false)
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
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.hidden(path, || self.inner.read(path))
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        self.hidden(path, || self.inner.read_prefix(path, limit))
    }
    fn read_dir(&self, path: &Path) -> io::Result<Vec<(OsString, FileType)>> {
        self.hidden(path, || self.inner.read_dir(path))
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.hidden(path, || self.inner.read_link(path))
    }
    fn readable(&self, path: &Path) -> bool {
        self.visible(path) && self.inner.readable(path)
    }
}
