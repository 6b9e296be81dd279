//! The walk's floor: list the directories a default-config scan lists, with
//! nothing but `openat` (relative to the parent) + `getdents64` + `close`
//! per directory, on the current rayon pool — no matching, no paths, no
//! reading. promptinclude's wall time over this one's is what its own work
//! costs on top of the kernel's.
//!
//! Pruning is by name: a directory is skipped if its name is one of the
//! default `gitignore`'s `**/NAME/**` names (or ends in `.egg-info`), or it
//! is `venv` directly under the root, and nothing at depth `MAX_DEPTH` or
//! deeper is opened. For trees without negations or slashes in names (all
//! generated workloads) these are exactly the directories the default spec
//! lets a scan list.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Directories at this depth (root = 0) or deeper are not opened (the default `max_depth`).
const MAX_DEPTH: usize = 10;

thread_local! {
    /// The `getdents64` buffer, 32 KiB per thread.
    static BUFFER: std::cell::RefCell<Vec<u64>> = std::cell::RefCell::new(vec![0; 4096]);
}

/// `**/NAME/**` names of the default `gitignore`.
const PRUNED: [&[u8]; 10] = [
    b"__pycache__",
    b"node_modules",
    b".npm",
    b".git",
    b".conda",
    b".cache",
    b"dist",
    b"build",
    b".tox",
    b".eggs",
];

fn pruned(name: &[u8], depth: usize) -> bool {
    PRUNED.contains(&name) || name.ends_with(b".egg-info") || (depth == 1 && name == b"venv")
}

/// Lists every directory under `roots` as above; returns how many were listed.
pub fn walk_floor(roots: &[Vec<u8>]) -> usize {
    let listed = AtomicUsize::new(0);
    rayon::scope(|scope| {
        for root in roots {
            let listed = &listed;
            scope.spawn(move |scope| visit(scope, None, root.clone(), 0, listed));
        }
    });
    listed.into_inner()
}

fn visit<'s>(
    scope: &rayon::Scope<'s>,
    parent: Option<Arc<OwnedFd>>,
    name: Vec<u8>,
    depth: usize,
    listed: &'s AtomicUsize,
) {
    let Ok(c_name) = std::ffi::CString::new(name) else {
        return;
    };
    let dir_fd = parent.as_ref().map_or(libc::AT_FDCWD, |p| p.as_raw_fd());
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;
    // SAFETY: a NUL-terminated name; the result is checked.
    let fd = unsafe { libc::openat(dir_fd, c_name.as_ptr(), flags) };
    drop(parent);
    if fd < 0 {
        return;
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    listed.fetch_add(1, Ordering::Relaxed);
    let mut subdirs = Vec::new();
    BUFFER.with_borrow_mut(|buffer| loop {
        // SAFETY: the buffer is valid for its length in bytes and 8-aligned.
        let n = unsafe {
            libc::syscall(
                libc::SYS_getdents64,
                fd.as_raw_fd(),
                buffer.as_mut_ptr(),
                buffer.len() * 8,
            )
        };
        if n <= 0 {
            break;
        }
        // SAFETY: the kernel wrote `n` bytes.
        let bytes = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), n as usize) };
        let (mut offset, mut next_position) = (0, 0i64);
        while offset + 19 <= bytes.len() {
            next_position = i64::from_ne_bytes(bytes[offset + 8..offset + 16].try_into().unwrap());
            let reclen = usize::from(u16::from_ne_bytes([bytes[offset + 16], bytes[offset + 17]]));
            let field = &bytes[offset + 19..offset + reclen];
            let name = std::ffi::CStr::from_bytes_until_nul(field).map_or(field, |c| c.to_bytes());
            if bytes[offset + 18] == libc::DT_DIR
                && name != b"."
                && name != b".."
                && depth + 1 < MAX_DEPTH
                && !pruned(name, depth + 1)
            {
                subdirs.push(name.to_vec());
            }
            offset += reclen;
        }
        if next_position == i64::MAX {
            break;
        }
    });
    if subdirs.is_empty() {
        return;
    }
    let fd = Arc::new(fd);
    for sub in subdirs {
        let fd = Arc::clone(&fd);
        scope.spawn(move |scope| visit(scope, Some(fd), sub, depth + 1, listed));
    }
}
