//! The parallel directory walk.
//!
//! Each directory is one work item on the shared rayon pool, so many roots
//! and wide trees keep every thread busy. A directory costs one `openat`,
//! the `getdents64` calls and one `close` (see [`crate::sys`]). The `openat`
//! is relative to the parent's handle, which stays open until its last
//! subdirectory has been opened, so the kernel resolves one name instead of
//! the whole path (path resolution fell from 5.5% to 1.4% of W2's profile);
//! at most [`MAX_HELD_PARENTS`] handles are held this way, and past that a
//! directory is opened by its full path. Entry types
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

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::{path::join_rel, sort_candidates, Candidate, Matchers};
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
    /// The parent directory's open handle, to open this one relative to
    /// (its name is the last component of `full`); `None` for the root and
    /// when no handle could be held.
    parent: Option<Arc<HeldParent>>,
}

/// Most directory handles held open for opening subdirectories relative to
/// them, across all walks in the process. Well below common descriptor
/// limits (1024), and more than the walk's frontier needs on two cores.
pub const MAX_HELD_PARENTS: usize = 256;

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
        parent: None,
    };
    rayon::scope(|scope| walk.visit(scope, root));
    let mut found = walk.found.into_inner().unwrap_or_else(|e| e.into_inner());
    sort_candidates(&mut found);
    found
}

impl<'m> Walk<'m> {
    fn visit<'s>(&'s self, scope: &rayon::Scope<'s>, mut dir: DirItem) {
        let opened = match dir.parent.take() {
            Some(parent) => {
                let name_start = dir
                    .full
                    .iter()
                    .rposition(|&b| b == b'/')
                    .map_or(0, |i| i + 1);
                sys::open_dir_at(&parent.0, &dir.full[name_start..])
            }
            None => sys::open(&dir.full, libc::O_RDONLY | libc::O_DIRECTORY),
        };
        let Ok(fd) = opened else {
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
                    parent: None,
                });
            } else if self.matchers.name.is_match_bytes(name) {
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
        // os.walk abandons the whole directory when listing fails midway.
        if listed.is_err() {
            return;
        }
        if !subdirs.is_empty() {
            if let Some(held) = HeldParent::try_hold(fd) {
                for sub in &mut subdirs {
                    sub.parent = Some(Arc::clone(&held));
                }
            }
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
fn is_dir_following(dir: &OwnedFd, name: &[u8]) -> bool {
    sys::stat_at(dir, name, true).is_ok_and(|st| sys::is_dir_mode(&st))
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
        while let Some(held) = HeldParent::try_hold(sys::open(b"/", libc::O_RDONLY).unwrap()) {
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
