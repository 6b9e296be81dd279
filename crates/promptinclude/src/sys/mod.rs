//! The few file-system calls the walk and the reader need, on `rustix`
//! (no `unsafe` here), with two backends for listing a directory:
//!
//! * **Linux fast path** (`linux.rs`): `getdents64` into a buffer reused per
//!   thread (`rustix::fs::RawDir`). `std::fs::read_dir` goes through glibc's
//!   `opendir`, which adds an `fstat` to every directory (to size its
//!   buffer) — about a fifth more system calls on a large tree. Here a
//!   directory costs exactly `openat` + `getdents64` (until it returns 0, or
//!   the file system marks the end) + `close`.
//! * **Portable Unix** (`portable.rs`, `rustix::fs::Dir`: `readdir` on
//!   macOS and the BSDs): used on every other Unix system, and on Linux with
//!   the cargo feature `portable-walk` so that it is tested there too. It
//!   costs one `dup` more per directory.
//!
//! Paths are handed to the kernel whole, as the reference's Python does, so a
//! path of [`PATH_MAX`] bytes or more fails with `ENAMETOOLONG` exactly where
//! it fails for the reference — unless the caller asks for a *piecewise*
//! open, which cuts the path into pieces of whole components, each opened
//! relative to the directory handle of the previous piece. The walk only does
//! that where the reference raises instead of returning (see
//! [`crate::discover::walk`]).

#[cfg(not(unix))]
compile_error!("promptinclude supports Linux and other Unix systems");

#[cfg(all(target_os = "linux", not(feature = "portable-walk")))]
mod linux;
#[cfg(all(target_os = "linux", not(feature = "portable-walk")))]
pub use linux::read_dir;

#[cfg(any(not(target_os = "linux"), feature = "portable-walk"))]
mod portable;
#[cfg(any(not(target_os = "linux"), feature = "portable-walk"))]
pub use portable::read_dir;

use std::io;
use std::os::fd::OwnedFd;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat, CWD};

/// The system's `PATH_MAX`, counting the terminating NUL: a path of this many
/// bytes or more cannot be handed to the kernel in one call (4096 on Linux).
pub const PATH_MAX: usize = libc::PATH_MAX as usize;

/// Whether the kernel accepts `path` (without its NUL) in one call.
pub(crate) fn fits_path_max(path: &[u8]) -> bool {
    path.len() < PATH_MAX
}

fn too_long() -> io::Error {
    io::Error::from_raw_os_error(libc::ENAMETOOLONG)
}

/// Flags for a directory handle used only to resolve names below it.
#[cfg(any(target_os = "linux", target_os = "android"))]
const LOOKUP_DIR: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const LOOKUP_DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// Flags for a directory handle to list.
const LIST_DIR: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// Opens the directory at `path` for listing. Without `piecewise`, a path of
/// [`PATH_MAX`] bytes or more fails with `ENAMETOOLONG`, as for the reference.
pub fn open_dir(path: &[u8], piecewise: bool) -> io::Result<OwnedFd> {
    open_path(path, LIST_DIR, piecewise)
}

/// Opens the directory `name` (one path component) inside the open
/// directory `dir`, for listing.
pub(crate) fn open_dir_at(dir: &OwnedFd, name: &[u8]) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(dir, name, LIST_DIR, Mode::empty())?)
}

/// Opens `path` with `flags` (`O_CLOEXEC` is added). With `piecewise`, a path
/// of [`PATH_MAX`] bytes or more is opened in pieces of whole components,
/// each relative to the directory handle of the previous piece.
fn open_path(path: &[u8], flags: OFlags, piecewise: bool) -> io::Result<OwnedFd> {
    let flags = flags | OFlags::CLOEXEC;
    if fits_path_max(path) {
        return Ok(rustix::fs::openat(CWD, path, flags, Mode::empty())?);
    }
    if !piecewise {
        return Err(too_long());
    }
    let (dir, name) = open_parent_piecewise(path)?;
    Ok(rustix::fs::openat(&dir, name, flags, Mode::empty())?)
}

/// For a path of [`PATH_MAX`] bytes or more: a handle on its parent directory
/// (opened piecewise) and its last component.
fn open_parent_piecewise(path: &[u8]) -> io::Result<(OwnedFd, &[u8])> {
    // Longest piece handed to the kernel in one call.
    const CHUNK: usize = PATH_MAX - 96;
    let mut dir: Option<OwnedFd> = None;
    let mut rest = path;
    loop {
        let cut = |limit: usize| {
            rest[..limit]
                .iter()
                .rposition(|&b| b == b'/')
                .filter(|&i| i > 0)
                .ok_or_else(too_long)
        };
        // The last component stays for the caller; pieces before it are
        // at most CHUNK bytes of whole components (no name exceeds NAME_MAX).
        let last = rest.iter().rposition(|&b| b == b'/').ok_or_else(too_long)?;
        let piece_end = if last < CHUNK { last } else { cut(CHUNK)? };
        let piece = if piece_end == 0 {
            &b"/"[..]
        } else {
            &rest[..piece_end]
        };
        let next = match &dir {
            Some(d) => rustix::fs::openat(d, piece, LOOKUP_DIR, Mode::empty())?,
            None => rustix::fs::openat(CWD, piece, LOOKUP_DIR, Mode::empty())?,
        };
        dir = Some(next);
        rest = &rest[piece_end + 1..];
        if !rest.contains(&b'/') {
            // `dir` was just set.
            return dir.map(|d| (d, rest)).ok_or_else(too_long);
        }
    }
}

/// `os.path.isdir(path)`: following links; `false` for a path of
/// [`PATH_MAX`] bytes or more, as for the reference.
pub fn is_dir(path: &[u8]) -> bool {
    fits_path_max(path)
        && rustix::fs::statat(CWD, path, AtFlags::empty()).is_ok_and(|st| is_dir_mode(&st))
}

/// Opens `path` for reading only if, following links, it is a regular file,
/// and returns it with its size: the type is checked with `fstatat` before
/// opening (a device or fifo is never opened) and again with `fstat` on the
/// handle, which is opened non-blocking so that a fifo swapped in between
/// cannot block. Three system calls. A path of [`PATH_MAX`] bytes or more
/// fails with `ENAMETOOLONG`, as the reference's `open` does, unless
/// `piecewise` (then it is reached through a handle on its parent).
pub(crate) fn open_regular_file(path: &[u8], piecewise: bool) -> io::Result<(std::fs::File, u64)> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    let not_regular = || io::Error::other("not a regular file");
    let parent;
    let (dir, name) = if fits_path_max(path) {
        (None, path)
    } else if piecewise {
        let (d, name) = open_parent_piecewise(path)?;
        parent = d;
        (Some(&parent), name)
    } else {
        return Err(too_long());
    };
    let st = match dir {
        Some(d) => rustix::fs::statat(d, name, AtFlags::empty())?,
        None => rustix::fs::statat(CWD, name, AtFlags::empty())?,
    };
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(not_regular());
    }
    let fd = match dir {
        Some(d) => rustix::fs::openat(d, name, flags, Mode::empty())?,
        None => rustix::fs::openat(CWD, name, flags, Mode::empty())?,
    };
    let file = std::fs::File::from(fd);
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    Ok((file, metadata.len()))
}

/// Reads the whole of `path` if, following links, it is a regular file
/// (its type is checked before it is opened and again on the handle: a fifo
/// or a device is never opened, so the read cannot block); anything else fails with "not a regular file". For the
/// files a command edits (`init`'s settings), which must never hang it.
pub fn read_regular_file(path: &std::path::Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    let (mut file, len) = open_regular_file(path.as_os_str().as_bytes(), false)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// What a directory entry's `d_type` says it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EntryKind {
    /// A directory (not a link to one).
    Dir,
    /// A symbolic link.
    Symlink,
    /// The file system did not say (`DT_UNKNOWN`).
    Unknown,
    /// A regular file.
    File,
    /// Anything else: fifo, socket, device.
    Other,
}

impl EntryKind {
    fn of(file_type: FileType) -> EntryKind {
        match file_type {
            FileType::Directory => EntryKind::Dir,
            FileType::Symlink => EntryKind::Symlink,
            FileType::Unknown => EntryKind::Unknown,
            FileType::RegularFile => EntryKind::File,
            _ => EntryKind::Other,
        }
    }
}

/// Every entry of one directory, in the system's order: the names one
/// after another in one buffer (not a string each: a walk that keeps its
/// listings lists every file of the tree), each with where it ends and
/// its `d_type`.
#[derive(Debug, Default)]
pub struct Entries {
    /// The names, one after another.
    pub names: Vec<u8>,
    /// Where each name ends in `names`, and what `d_type` says it is.
    pub ends: Vec<(usize, EntryKind)>,
}

impl Entries {
    /// Forgets every entry, keeping the memory.
    pub fn clear(&mut self) {
        self.names.clear();
        self.ends.clear();
    }

    /// Adds the entry `name` of kind `kind`.
    pub fn push(&mut self, name: &[u8], kind: EntryKind) {
        self.names.extend_from_slice(name);
        self.ends.push((self.names.len(), kind));
    }
}

/// `fstatat(dir, name)`: the entry's status, following a symlink when
/// `follow` (errors: broken link, loop, permission, ...).
pub(crate) fn stat_at(dir: &OwnedFd, name: &[u8], follow: bool) -> io::Result<Stat> {
    let flags = if follow {
        AtFlags::empty()
    } else {
        AtFlags::SYMLINK_NOFOLLOW
    };
    Ok(rustix::fs::statat(dir, name, flags)?)
}

/// Whether a `stat` mode is a directory.
pub(crate) fn is_dir_mode(st: &Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::Directory
}

/// Whether a `stat` mode is a symbolic link.
pub(crate) fn is_symlink_mode(st: &Stat) -> bool {
    FileType::from_raw_mode(st.st_mode) == FileType::Symlink
}

/// What `stat` says of a file, as much as tells whether it is still the
/// same file with the same content: which file it is (device, inode), its
/// type and permissions, its size and its modification and change times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    mode: u32,
    size: i64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of a `stat` result (whose field types differ between
    /// systems, hence the casts).
    #[allow(clippy::unnecessary_cast)]
    pub(crate) fn of(st: &Stat) -> Stamp {
        Stamp {
            dev: st.st_dev as u64,
            ino: st.st_ino as u64,
            mode: st.st_mode as u32,
            size: st.st_size as i64,
            mtime: (st.st_mtime as i64, st.st_mtime_nsec as i64),
            ctime: (st.st_ctime as i64, st.st_ctime_nsec as i64),
        }
    }

    /// Whether the file was modified or changed (content, mode, links) at
    /// or after `since - window`, where `window` is what its timestamps
    /// cannot tell apart: a later change could then leave them as they are
    /// (git's "racily clean" files). Timestamps in whole seconds or
    /// hundredths (a coarse file system) get two seconds; others, whose
    /// clock is the kernel's tick, 100 ms.
    pub(crate) fn changed_lately(&self, since: std::time::SystemTime) -> bool {
        let coarse = |(_, ns): (i64, i64)| ns % 10_000_000 == 0;
        let window_ns: i128 = if coarse(self.mtime) || coarse(self.ctime) {
            2_000_000_000
        } else {
            100_000_000
        };
        let since_ns = match since.duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(_) => return true,
        };
        let at = |(s, ns): (i64, i64)| i128::from(s) * 1_000_000_000 + i128::from(ns);
        at(self.mtime).max(at(self.ctime)) >= since_ns - window_ns
    }
}

/// The [`Stamp`] of what `path` names, following links, or the error
/// number of the failed `stat`.
pub(crate) fn stamp(path: &[u8]) -> Result<Stamp, i32> {
    match rustix::fs::statat(CWD, path, AtFlags::empty()) {
        Ok(st) => Ok(Stamp::of(&st)),
        Err(e) => Err(e.raw_os_error()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_entries_with_kinds() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("f"), "x").unwrap();
        std::os::unix::fs::symlink("sub", dir.path().join("l")).unwrap();
        let fd = open_dir(dir.path().as_os_str().as_encoded_bytes(), false).unwrap();
        let mut seen = Vec::new();
        read_dir(&fd, |name, kind| seen.push((name.to_vec(), kind))).unwrap();
        seen.sort();
        assert_eq!(
            seen,
            vec![
                (b"f".to_vec(), EntryKind::File),
                (b"l".to_vec(), EntryKind::Symlink),
                (b"sub".to_vec(), EntryKind::Dir)
            ]
        );
        assert!(is_dir_mode(&stat_at(&fd, b"l", true).unwrap()));
        assert!(is_symlink_mode(&stat_at(&fd, b"l", false).unwrap()));
    }

    #[test]
    fn lists_directories_larger_than_one_buffer() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..3000 {
            std::fs::write(dir.path().join(format!("{i:05}-{}", "n".repeat(60))), "").unwrap();
        }
        let fd = open_dir(dir.path().as_os_str().as_encoded_bytes(), false).unwrap();
        let mut count = 0;
        read_dir(&fd, |_, _| count += 1).unwrap();
        assert_eq!(count, 3000);
    }

    #[test]
    fn long_paths_fail_as_for_the_reference_unless_piecewise() {
        let dir = tempfile::tempdir().unwrap();
        let mut path = dir.path().as_os_str().as_encoded_bytes().to_vec();
        let component = "d".repeat(200);
        // Build with relative steps so that no single call exceeds PATH_MAX.
        let mut current = open_dir(&path, false).unwrap();
        for _ in 0..30 {
            rustix::fs::mkdirat(&current, component.as_str(), Mode::from_raw_mode(0o755)).unwrap();
            current = open_dir_at(&current, component.as_bytes()).unwrap();
            path.push(b'/');
            path.extend_from_slice(component.as_bytes());
        }
        let file = rustix::fs::openat(
            &current,
            "f",
            OFlags::WRONLY | OFlags::CREATE,
            Mode::from_raw_mode(0o644),
        )
        .unwrap();
        drop(file);
        assert!(path.len() > 6000);
        let err = open_dir(&path, false).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ENAMETOOLONG));
        assert!(open_dir(&path, true).is_ok());
        assert!(!is_dir(&path));
        let file_path = [&path[..], b"/f"].concat();
        assert_eq!(
            open_regular_file(&file_path, false)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ENAMETOOLONG)
        );
        assert_eq!(open_regular_file(&file_path, true).unwrap().1, 0);
    }

    #[test]
    fn path_max_boundary() {
        assert!(fits_path_max(&vec![b'a'; PATH_MAX - 1]));
        assert!(!fits_path_max(&vec![b'a'; PATH_MAX]));
    }
}
