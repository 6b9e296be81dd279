//! What a repository's `HEAD` commits, asked of files on disk: whether a
//! symbolic link is the one committed, and whether a file's content is the
//! committer's.
//!
//! The unattended reading policy ([`crate::trust`]) reads a link, or a file
//! only a repository's own widened `name_pattern` reaches, only when git
//! says the committer put it there. "Committed" means in `HEAD`: the index
//! holds what the user staged, which is the user's, not the committer's.
//! A file's content equals `HEAD`'s when git would judge the file clean:
//! its bytes, converted as `git add` converts them (`core.autocrlf`,
//! `core.eol`, `text`/`eol`/`ident`/`working-tree-encoding` attributes),
//! hash to the blob `HEAD` holds at its path. Filter drivers (`filter=…`,
//! such as Git LFS) are never run: a hook must not start programs, and a
//! file a driver would turn into a pointer is not the pointer committed,
//! so it is never equal.
//!
//! The repository is opened isolated (no user or system configuration, no
//! environment), as [`crate::git`] opens it.

use std::path::{Path, PathBuf};

/// `HEAD` of the repository whose work tree holds a directory.
pub(crate) struct Committed {
    /// The work tree's top, resolved.
    top: PathBuf,
    #[cfg(feature = "git")]
    head: std::sync::Mutex<Head>,
}

impl std::fmt::Debug for Committed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Committed").field("top", &self.top).finish()
    }
}

impl Committed {
    /// `HEAD` of the repository whose work tree's top (resolved) is `top`;
    /// `None` when there is no repository there, or no commit yet, or
    /// without the `git` feature.
    pub(crate) fn open(top: &Path) -> Option<Committed> {
        #[cfg(feature = "git")]
        {
            let head = Head::open(top)?;
            Some(Committed {
                top: top.to_path_buf(),
                head: std::sync::Mutex::new(head),
            })
        }
        #[cfg(not(feature = "git"))]
        {
            let _ = top;
            None
        }
    }

    /// The work tree's top, resolved: paths asked about are relative to it.
    pub(crate) fn top(&self) -> &Path {
        &self.top
    }

    /// Whether `HEAD` holds, at `rel`, a symbolic link whose target is
    /// `target` (as `readlink` gives it).
    pub(crate) fn holds_link(&self, rel: &Path, target: &[u8]) -> bool {
        #[cfg(feature = "git")]
        {
            self.head().holds_link(rel, target)
        }
        #[cfg(not(feature = "git"))]
        {
            let _ = (rel, target);
            false
        }
    }

    /// The regular file `HEAD` holds at `rel`, if it holds one there (not
    /// nothing, a link, a directory or a submodule).
    pub(crate) fn file(&self, rel: &Path) -> Option<HeadFile> {
        #[cfg(feature = "git")]
        {
            let blob = self.head().file_blob(rel)?;
            Some(HeadFile {
                rel: rel.to_path_buf(),
                blob,
            })
        }
        #[cfg(not(feature = "git"))]
        {
            let _ = rel;
            None
        }
    }

    /// Whether `bytes`, converted as `git add` would convert them, are
    /// `file`'s blob: the content is the committer's.
    pub(crate) fn matches(&self, file: &HeadFile, bytes: &[u8]) -> bool {
        #[cfg(feature = "git")]
        {
            self.head().matches(&file.rel, file.blob, bytes)
        }
        #[cfg(not(feature = "git"))]
        {
            let _ = (file, bytes);
            false
        }
    }

    /// The repository, locked (a panic elsewhere leaves nothing half-done
    /// in it that a later question could trust less: it only reads).
    #[cfg(feature = "git")]
    fn head(&self) -> std::sync::MutexGuard<'_, Head> {
        self.head
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A regular file `HEAD` holds: its path in the repository, and its blob.
pub(crate) struct HeadFile {
    /// Relative to the work tree's top.
    #[cfg_attr(not(feature = "git"), allow(dead_code))]
    rel: PathBuf,
    #[cfg(feature = "git")]
    blob: gix::hash::ObjectId,
}

#[cfg(feature = "git")]
use head::Head;

#[cfg(feature = "git")]
mod head {
    use std::path::Path;

    use gix::hash::ObjectId;
    use gix::objs::tree::EntryKind;

    /// The repository opened at `HEAD`'s tree, with the conversion `git
    /// add` applies (its drivers removed).
    pub(super) struct Head {
        repo: gix::Repository,
        tree: ObjectId,
        to_git: gix::filter::plumbing::Pipeline,
        attributes: gix::worktree::Stack,
    }

    impl Head {
        pub(super) fn open(top: &Path) -> Option<Head> {
            let repo = gix::open_opts(top, gix::open::Options::isolated()).ok()?;
            let tree = repo.head_commit().ok()?.tree_id().ok()?.detach();
            let (pipeline, _index) = repo.filter_pipeline(None).ok()?;
            let (mut to_git, attributes) = pipeline.into_parts();
            // Never start a program: a driver's output is not what was read.
            to_git.options_mut().drivers.clear();
            Some(Head {
                repo,
                tree,
                to_git,
                attributes,
            })
        }

        /// `HEAD`'s entry at `rel`.
        fn entry(&self, rel: &Path) -> Option<(EntryKind, ObjectId)> {
            let tree = self.repo.find_tree(self.tree).ok()?;
            let entry = tree.lookup_entry_by_path(rel).ok()??;
            Some((entry.mode().kind(), entry.object_id()))
        }

        pub(super) fn holds_link(&self, rel: &Path, target: &[u8]) -> bool {
            match self.entry(rel) {
                Some((EntryKind::Link, id)) => self
                    .repo
                    .find_blob(id)
                    .is_ok_and(|blob| blob.data == target),
                _ => false,
            }
        }

        /// The blob of the regular file `HEAD` holds at `rel`.
        pub(super) fn file_blob(&self, rel: &Path) -> Option<ObjectId> {
            match self.entry(rel) {
                Some((EntryKind::Blob | EntryKind::BlobExecutable, id)) => Some(id),
                _ => None,
            }
        }

        /// Whether `bytes` at `rel`, converted as `git add` would, are `blob`.
        pub(super) fn matches(&mut self, rel: &Path, blob: ObjectId, bytes: &[u8]) -> bool {
            self.clean_id(rel, bytes, blob) == Some(blob)
        }

        /// The blob id `git add` would give `bytes` at `rel` (`None`: the
        /// conversion failed). `committed` is the blob the auto-CRLF rule
        /// looks at to learn whether the file was committed with CRLF.
        fn clean_id(&mut self, rel: &Path, bytes: &[u8], committed: ObjectId) -> Option<ObjectId> {
            use gix::filter::plumbing::pipeline::convert::ToGitOutcome;
            use std::io::Read;
            let platform = self
                .attributes
                .at_path(rel, None, &self.repo.objects)
                .ok()?;
            let repo = &self.repo;
            let outcome = self
                .to_git
                .convert_to_git(
                    bytes,
                    rel,
                    &mut |_, attrs| {
                        platform.matching_attributes(attrs);
                    },
                    &mut |buf| -> Result<Option<()>, gix::objs::find::Error> {
                        use gix::objs::Find;
                        let found = repo.objects.try_find(&committed, buf)?;
                        Ok(found
                            .filter(|o| o.kind == gix::objs::Kind::Blob)
                            .map(|_| ()))
                    },
                )
                .ok()?;
            let converted: Vec<u8>;
            let clean = match outcome {
                ToGitOutcome::Unchanged(bytes) => bytes,
                ToGitOutcome::Buffer(buffer) => buffer,
                ToGitOutcome::Process(mut read) => {
                    let mut all = Vec::new();
                    read.read_to_end(&mut all).ok()?;
                    converted = all;
                    &converted
                }
            };
            gix::objs::compute_hash(repo.object_hash(), gix::objs::Kind::Blob, clean).ok()
        }
    }
}
