//! The few Linux file-system calls the walk and the reader need, written
//! against `libc` directly.
//!
//! Why by hand: the walk is kernel-bound, and `std::fs::read_dir` goes
//! through glibc's `opendir`, which adds an `fstat` to every directory (to
//! size its buffer) — about a fifth more system calls on a large tree. Here a
//! directory costs exactly `openat` + `getdents64` (until it returns 0, or
//! the file system marks the end) + `close`, into a buffer reused per thread. Paths longer than `PATH_MAX`
//! are opened piecewise with `openat` from directory handles, so trees
//! deeper than the kernel's path limit are still walked and read.

use std::cell::RefCell;
use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Longest path handed to the kernel in one call (`PATH_MAX` is 4096 with the NUL).
const MAX_PATH_CHUNK: usize = 4000;

/// Opens `path` with `flags` (`O_CLOEXEC` is added), even when it is longer
/// than `PATH_MAX`: the path is then opened in pieces of whole components,
/// each relative to the directory handle of the previous piece.
pub fn open(path: &[u8], flags: libc::c_int) -> io::Result<OwnedFd> {
    let flags = flags | libc::O_CLOEXEC;
    if path.len() <= MAX_PATH_CHUNK {
        return openat(None, path, flags);
    }
    let mut dir: Option<OwnedFd> = None;
    let mut rest = path;
    while rest.len() > MAX_PATH_CHUNK {
        // Cut at the last '/' within the chunk; a single component longer
        // than the chunk cannot exist (NAME_MAX is 255).
        let cut = rest[..MAX_PATH_CHUNK]
            .iter()
            .rposition(|&b| b == b'/')
            .filter(|&i| i > 0)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENAMETOOLONG))?;
        let next = openat(
            dir.as_ref(),
            &rest[..cut],
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )?;
        dir = Some(next);
        rest = &rest[cut + 1..];
    }
    openat(dir.as_ref(), rest, flags)
}

/// Calls `f` with `path` as a C string: on the stack for names and short
/// paths (one per directory in the walk: no allocation), else in a `CString`.
/// A path containing NUL is an `InvalidInput` error.
fn with_c_path<T>(path: &[u8], f: impl FnOnce(&CStr) -> T) -> io::Result<T> {
    let invalid = || io::Error::from(io::ErrorKind::InvalidInput);
    let mut buffer = [0u8; 384];
    if path.len() < buffer.len() {
        buffer[..path.len()].copy_from_slice(path);
        let c_path = CStr::from_bytes_with_nul(&buffer[..=path.len()]).map_err(|_| invalid())?;
        Ok(f(c_path))
    } else {
        let c_path = CString::new(path).map_err(|_| invalid())?;
        Ok(f(&c_path))
    }
}

/// Opens the directory `name` (one path component) inside the open
/// directory `dir`, for listing.
pub fn open_dir_at(dir: &OwnedFd, name: &[u8]) -> io::Result<OwnedFd> {
    openat(
        Some(dir),
        name,
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    )
}

fn openat(dir: Option<&OwnedFd>, path: &[u8], flags: libc::c_int) -> io::Result<OwnedFd> {
    let dir_fd = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: a valid NUL-terminated path and flags; the result is checked.
    let fd = with_c_path(path, |c_path| unsafe {
        libc::openat(dir_fd, c_path.as_ptr(), flags, 0o666)
    })?;
    if fd < 0 {
        Err(io::Error::last_os_error())
    } else {
        // SAFETY: `fd` is a freshly opened descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// Opens `path` for reading only if, following links, it is a regular file,
/// and returns it with its size: the type is checked with `fstatat` before
/// opening (a device or fifo is never opened) and again with `fstat` on the
/// handle, which is opened non-blocking so that a fifo swapped in between
/// cannot block. Three system calls for a path within `PATH_MAX`; longer
/// paths go through a handle on the parent directory.
pub fn open_regular_file(path: &[u8]) -> io::Result<(std::fs::File, u64)> {
    let flags = libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    let not_regular = || io::Error::other("not a regular file");
    let (dir, name) = if path.len() <= MAX_PATH_CHUNK {
        (None, path)
    } else {
        // A path this long has a '/': no single name exceeds NAME_MAX.
        let cut = path
            .iter()
            .rposition(|&b| b == b'/')
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENAMETOOLONG))?;
        let dir = open(&path[..cut.max(1)], libc::O_PATH | libc::O_DIRECTORY)?;
        (Some(dir), &path[cut + 1..])
    };
    let st = stat_at_or_cwd(dir.as_ref(), name, true)?;
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err(not_regular());
    }
    let file = std::fs::File::from(openat(dir.as_ref(), name, flags)?);
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    Ok((file, metadata.len()))
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
    /// Anything else: regular file, fifo, socket, device.
    Other,
}

const BUFFER_SIZE: usize = 32 * 1024;

thread_local! {
    static BUFFER: RefCell<Vec<u64>> = RefCell::new(vec![0u64; BUFFER_SIZE / 8]);
}

/// Lists the directory open as `dir`, calling `visit(name, kind)` for each
/// entry except `.` and `..`. An error while listing is returned after the
/// entries seen so far were visited.
pub fn read_dir(dir: &OwnedFd, mut visit: impl FnMut(&[u8], EntryKind)) -> io::Result<()> {
    BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        loop {
            // SAFETY: the buffer is valid for BUFFER_SIZE bytes and 8-aligned.
            let n = unsafe {
                libc::syscall(
                    libc::SYS_getdents64,
                    dir.as_raw_fd(),
                    buffer.as_mut_ptr().cast::<u8>(),
                    BUFFER_SIZE,
                )
            };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            if n == 0 {
                return Ok(());
            }
            // SAFETY: the kernel wrote `n` bytes of the buffer.
            let bytes =
                unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), n as usize) };
            let mut offset = 0;
            let mut next_position = 0i64;
            // struct linux_dirent64 { u64 d_ino; i64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
            while offset + 19 <= bytes.len() {
                let mut d_off = [0u8; 8];
                d_off.copy_from_slice(&bytes[offset + 8..offset + 16]);
                next_position = i64::from_ne_bytes(d_off);
                let reclen =
                    usize::from(u16::from_ne_bytes([bytes[offset + 16], bytes[offset + 17]]));
                if reclen < 19 || offset + reclen > bytes.len() {
                    return Err(io::Error::other("malformed directory entry"));
                }
                let d_type = bytes[offset + 18];
                let name_field = &bytes[offset + 19..offset + reclen];
                let name =
                    CStr::from_bytes_until_nul(name_field).map_or(name_field, CStr::to_bytes);
                offset += reclen;
                if name == b"." || name == b".." {
                    continue;
                }
                let kind = match d_type {
                    libc::DT_DIR => EntryKind::Dir,
                    libc::DT_LNK => EntryKind::Symlink,
                    libc::DT_UNKNOWN => EntryKind::Unknown,
                    _ => EntryKind::Other,
                };
                visit(name, kind);
            }
            // The last entry's `d_off` is where the next call would start.
            // ext4 (and btrfs) mark the end of a directory with i64::MAX, a
            // position no entry can have, so the call that would only say
            // "end" is skipped: one system call less per directory.
            if next_position == i64::MAX {
                return Ok(());
            }
        }
    })
}

/// `fstatat(dir, name)`: the entry's status, following a symlink when
/// `follow` (errors: broken link, loop, permission, ...).
pub fn stat_at(dir: &OwnedFd, name: &[u8], follow: bool) -> io::Result<libc::stat> {
    stat_at_or_cwd(Some(dir), name, follow)
}

/// [`stat_at`], relative to the working directory when `dir` is `None`.
fn stat_at_or_cwd(dir: Option<&OwnedFd>, name: &[u8], follow: bool) -> io::Result<libc::stat> {
    let flags = if follow { 0 } else { libc::AT_SYMLINK_NOFOLLOW };
    let dir_fd = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: zeroed `stat` is a valid out-parameter; the result is checked.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    let rc = with_c_path(name, |c_name| unsafe {
        libc::fstatat(dir_fd, c_name.as_ptr(), &mut st, flags)
    })?;
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(st)
    }
}

/// Whether a `stat` mode is a directory.
pub fn is_dir_mode(st: &libc::stat) -> bool {
    st.st_mode & libc::S_IFMT == libc::S_IFDIR
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
        let fd = open(
            dir.path().as_os_str().as_encoded_bytes(),
            libc::O_RDONLY | libc::O_DIRECTORY,
        )
        .unwrap();
        let mut seen = Vec::new();
        read_dir(&fd, |name, kind| seen.push((name.to_vec(), kind))).unwrap();
        seen.sort();
        assert_eq!(
            seen,
            vec![
                (b"f".to_vec(), EntryKind::Other),
                (b"l".to_vec(), EntryKind::Symlink),
                (b"sub".to_vec(), EntryKind::Dir)
            ]
        );
        assert!(is_dir_mode(&stat_at(&fd, b"l", true).unwrap()));
        assert!(!is_dir_mode(&stat_at(&fd, b"l", false).unwrap()));
    }

    #[test]
    fn lists_directories_larger_than_one_buffer() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..3000 {
            std::fs::write(dir.path().join(format!("{i:05}-{}", "n".repeat(60))), "").unwrap();
        }
        let fd = open(
            dir.path().as_os_str().as_encoded_bytes(),
            libc::O_RDONLY | libc::O_DIRECTORY,
        )
        .unwrap();
        let mut count = 0;
        read_dir(&fd, |_, _| count += 1).unwrap();
        assert_eq!(count, 3000);
    }

    #[test]
    fn opens_paths_longer_than_path_max() {
        let dir = tempfile::tempdir().unwrap();
        let mut path = dir.path().to_path_buf();
        let component = "d".repeat(200);
        // Build with relative steps so that no single call exceeds PATH_MAX.
        let base = open(
            path.as_os_str().as_encoded_bytes(),
            libc::O_RDONLY | libc::O_DIRECTORY,
        )
        .unwrap();
        let mut current = base;
        for _ in 0..30 {
            let c = CString::new(component.as_str()).unwrap();
            assert_eq!(
                unsafe { libc::mkdirat(current.as_raw_fd(), c.as_ptr(), 0o755) },
                0
            );
            current = openat(
                Some(&current),
                component.as_bytes(),
                libc::O_RDONLY | libc::O_DIRECTORY,
            )
            .unwrap();
            path.push(&component);
        }
        let bytes = path.as_os_str().as_encoded_bytes();
        assert!(bytes.len() > 6000);
        assert!(open(bytes, libc::O_RDONLY | libc::O_DIRECTORY).is_ok());
        // Clean up from the inside out, which remove_dir_all can do too.
        drop(current);
    }
}
