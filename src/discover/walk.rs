//! The parallel directory walk.
//!
//! Each directory is one work item on the shared rayon pool, so many roots
//! and wide trees keep every thread busy. A directory costs one `openat`,
//! the `getdents64` calls and one `close` (see [`crate::sys`]): entry types
//! come from `d_type`, and only symlinks (and file systems without `d_type`)
//! are `stat`ed, relative to the open directory, to learn whether they point
//! at a directory, as `os.walk`'s `is_dir()` does. Paths longer than
//! `PATH_MAX` are opened through directory handles, so depth is unlimited
//! (the walk keeps no recursion on the stack: each directory is a task).
//!
//! Semantics reproduced from `os.walk(root, topdown=True)` plus the
//! reference's pruning:
//! * a directory whose depth is `>= max_depth` contributes nothing (so it is
//!   never opened);
//! * a symlink to a directory is a directory (it can be pruned) but is never
//!   entered;
//! * an unreadable directory is silently skipped, and an error while listing
//!   one drops the whole directory, as `os.walk` returns early;
//! * a subdirectory is pruned if the spec matches `rel` or `rel + "/"`;
//!   a non-directory is a candidate if its name matches `name_pattern` and
//!   the spec does not match `rel`.

use std::sync::Mutex;

use super::{path::join_rel, sort_candidates, Candidate, Matchers};
use crate::pystr::matching_str;
use crate::sys::{self, EntryKind};

/// One directory to visit.
struct DirItem {
    /// Full path bytes.
    full: Vec<u8>,
    /// Path relative to the root with `/` separators, in the form the
    /// matchers see (undecodable bytes replaced by stand-in characters).
    rel: String,
    /// `dirpath[len(root):].count("/")` in the reference.
    depth: i64,
}

struct Walk<'m> {
    matchers: &'m Matchers,
    found: Mutex<Vec<Candidate>>,
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
    let walk = Walk {
        matchers,
        found: Mutex::new(Vec::new()),
    };
    let root = DirItem {
        full: root.to_vec(),
        rel: String::new(),
        depth: 0,
    };
    rayon::scope(|scope| walk.visit(scope, root));
    let mut found = walk.found.into_inner().unwrap_or_else(|e| e.into_inner());
    sort_candidates(&mut found);
    found
}

impl<'m> Walk<'m> {
    fn visit<'s>(&'s self, scope: &rayon::Scope<'s>, dir: DirItem) {
        let Ok(fd) = sys::open(&dir.full, libc::O_RDONLY | libc::O_DIRECTORY) else {
            return;
        };
        let separator: &[u8] = if dir.full.ends_with(b"/") { b"" } else { b"/" };
        let child_depth = dir.depth + separator.len() as i64;
        let descend = child_depth < self.matchers.max_depth;
        let mut files = Vec::new();
        let mut subdirs = Vec::new();
        let listed = sys::read_dir(&fd, |name, kind| {
            let (is_dir, is_link) = match kind {
                EntryKind::Dir => (true, false),
                EntryKind::Symlink => (is_dir_following(&fd, name), true),
                EntryKind::Other => (false, false),
                EntryKind::Unknown => match sys::stat_at(&fd, name, false) {
                    Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFLNK => {
                        (is_dir_following(&fd, name), true)
                    }
                    Ok(st) => (sys::is_dir_mode(&st), false),
                    Err(_) => (false, false),
                },
            };
            if is_dir {
                // A link is never entered, and a directory at
                // `child_depth >= max_depth` would contribute nothing: in
                // both cases whether it is pruned makes no difference.
                if is_link || !descend {
                    return;
                }
                let rel = join_rel(&dir.rel, name);
                if self
                    .matchers
                    .ignore
                    .as_ref()
                    .is_some_and(|spec| spec.is_dir_ignored(&rel))
                {
                    return;
                }
                subdirs.push(DirItem {
                    full: [&dir.full[..], separator, name].concat(),
                    rel,
                    depth: child_depth,
                });
            } else if self.matchers.name.is_match(&matching_str(name)) {
                let ignored = self
                    .matchers
                    .ignore
                    .as_ref()
                    .is_some_and(|spec| spec.is_file_ignored(&join_rel(&dir.rel, name)));
                if !ignored {
                    files.push(Candidate::new([&dir.full[..], separator, name].concat()));
                }
            }
        });
        drop(fd);
        // os.walk abandons the whole directory when listing fails midway.
        if listed.is_err() {
            return;
        }
        if !files.is_empty() {
            self.found
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .append(&mut files);
        }
        for sub in subdirs {
            scope.spawn(move |scope| self.visit(scope, sub));
        }
    }
}

/// `os.DirEntry.is_dir()` for a link: does it point at a directory?
fn is_dir_following(dir: &std::os::fd::OwnedFd, name: &[u8]) -> bool {
    sys::stat_at(dir, name, true).is_ok_and(|st| sys::is_dir_mode(&st))
}
