//! What may be read into an agent's prompt: the reading policy.
//!
//! The reference opens every rule file it finds and follows symbolic links
//! wherever they lead, so a committed `notes.promptinclude.md ->
//! ~/.ssh/id_rsa` (or `-> /proc/self/environ`) puts a secret of whoever
//! runs the scan into the prompt. The exact commands (`scan`, `render`,
//! `bundle`, the Python drop-in) must keep doing what the reference does;
//! the commands agents run unattended (the hooks, the MCP server) must not.
//! A [`ReadPolicy`] says which; a [`Guard`] applies it to one root, file by
//! file, and says why it withheld a file ([`Withheld`]).
//!
//! The policy for unattended runs ([`ReadPolicy::unattended`]):
//!
//! * a file is read only when the file actually opened lies inside the
//!   root's real path: a link to a file or a directory outside the root,
//!   `/proc`, `/dev` and the like are withheld;
//! * nothing inside a `.git` directory is read, whatever the patterns say;
//! * a file larger than a size cap is withheld without being read;
//! * when the repository's own configuration (`.a0proj`) widens
//!   `name_pattern` beyond the user's, a file the widened pattern adds is
//!   read only when git tracks it (it is in the index): a repository can
//!   point the scan at what it committed, never at a gitignored `.env`.
//!
//! The check is made on the opened handle (its path from `/proc/self/fd`
//! on Linux; elsewhere the resolved path, checked to be the same file), so
//! what is read is what was checked. See `docs/security.md`.

use std::collections::HashSet;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::discover::fnmatch::NamePattern;
use crate::discover::Candidate;
pub use crate::read::Withheld;
use crate::read::{outcome_of, read_candidate_bytes, ReadOutcome};

/// Which symbolic links a scan follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Links {
    /// Wherever they lead, as the reference does.
    #[default]
    Follow,
    /// Only while the file opened stays inside the root (and outside `.git`).
    Inside,
}

impl Links {
    /// The command-line spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Links::Follow => "follow",
            Links::Inside => "inside",
        }
    }
}

/// How the rule files of a root may be read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReadPolicy {
    /// Which links are followed.
    pub links: Links,
    /// Withhold files that resolve into `/proc`, `/sys` or `/dev`, whose
    /// content belongs to the process reading them (its environment, its
    /// memory), never to the repository.
    pub refuse_special: bool,
    /// Withhold files larger than this many bytes, unread.
    pub max_file_bytes: Option<u64>,
    /// Read the files that a repository's own configuration adds to the
    /// user's `name_pattern` only when git tracks them.
    pub committed_only_when_widened: bool,
}

/// The size cap of unattended runs: far above any real rule file (the
/// default budget is 20,000 tokens, about 80 KB), far below what costs
/// seconds or gigabytes.
const UNATTENDED_MAX_FILE_BYTES: u64 = 4 << 20;

impl ReadPolicy {
    /// Exactly what the reference reads.
    pub fn reference() -> ReadPolicy {
        ReadPolicy::default()
    }

    /// What the hooks and the MCP server read (see the module docs).
    pub fn unattended() -> ReadPolicy {
        ReadPolicy {
            links: Links::Inside,
            refuse_special: true,
            max_file_bytes: Some(UNATTENDED_MAX_FILE_BYTES),
            committed_only_when_widened: true,
        }
    }

    /// What `bundle` reads by default: what the reference reads, except
    /// files that resolve into `/proc`, `/sys` or `/dev`. Their content is the
    /// reading process's own (`/proc/self/environ` is the CI job's
    /// environment, tokens included), so it can never be what the host would
    /// read, and it must not end up in an artifact.
    pub fn bundle() -> ReadPolicy {
        ReadPolicy {
            refuse_special: true,
            ..ReadPolicy::reference()
        }
    }

    /// Whether this is [`ReadPolicy::bundle`] (left out of manifests).
    pub(crate) fn is_bundle_default(&self) -> bool {
        *self == ReadPolicy::bundle()
    }

    /// Whether this policy reads exactly what the reference reads.
    pub(crate) fn is_reference(&self) -> bool {
        *self == ReadPolicy::reference()
    }
}

/// A [`ReadPolicy`] applied to one root.
#[derive(Debug)]
pub struct Guard {
    policy: ReadPolicy,
    /// The root's real path (`None`: it cannot be resolved, and with
    /// [`Links::Inside`] nothing is read).
    real_root: Option<PathBuf>,
    /// The root made absolute lexically, as candidates start.
    abs_root: PathBuf,
    /// With a widened pattern: the user's pattern, and the paths git tracks.
    widened: Option<Widened>,
}

#[derive(Debug)]
struct Widened {
    /// `None` when the user's pattern does not compile: nothing is trusted.
    trusted: Option<NamePattern>,
    tracked: HashSet<Vec<u8>>,
}

impl Guard {
    /// The guard that reads as the reference does.
    pub fn reference() -> Guard {
        Guard {
            policy: ReadPolicy::reference(),
            real_root: None,
            abs_root: PathBuf::new(),
            widened: None,
        }
    }

    /// `policy` for the root whose lexical absolute path is `abs_root`.
    /// `trusted_pattern` is the user's `name_pattern` when the root's own
    /// configuration replaced it with another (see
    /// [`ReadPolicy::committed_only_when_widened`]).
    pub fn new(abs_root: &Path, policy: &ReadPolicy, trusted_pattern: Option<&str>) -> Guard {
        let widened = trusted_pattern
            .filter(|_| policy.committed_only_when_widened)
            .map(|pattern| Widened {
                trusted: NamePattern::new(pattern).ok(),
                tracked: tracked_paths(abs_root),
            });
        Guard {
            policy: policy.clone(),
            real_root: std::fs::canonicalize(abs_root).ok(),
            abs_root: abs_root.to_path_buf(),
            widened,
        }
    }

    /// The policy applied.
    pub fn policy(&self) -> &ReadPolicy {
        &self.policy
    }

    /// Reads and decodes `candidate` under the policy.
    pub fn read(&self, candidate: &Candidate) -> ReadOutcome {
        match self.read_bytes(candidate) {
            Ok(read) => outcome_of(read),
            Err(withheld) => ReadOutcome::Withheld(withheld),
        }
    }

    /// The bytes of `candidate` under the policy, or why it is withheld.
    pub(crate) fn read_bytes(
        &self,
        candidate: &Candidate,
    ) -> Result<io::Result<Vec<u8>>, Withheld> {
        if self.policy.is_reference() {
            return Ok(read_candidate_bytes(candidate));
        }
        if self.policy.links == Links::Inside {
            let rel = candidate.as_path().strip_prefix(&self.abs_root).ok();
            if rel.is_some_and(has_git_component) {
                return Err(Withheld::InsideGitDir);
            }
        }
        if let Some(widened) = &self.widened {
            let name = candidate.as_path().file_name().unwrap_or_default();
            let trusted = widened.trusted.as_ref();
            if !trusted.is_some_and(|p| p.is_match_bytes(name.as_bytes()))
                && !widened.tracked.contains(candidate.as_bytes())
            {
                return Err(Withheld::NotCommitted);
            }
        }
        let (file, len) = match crate::sys::open_regular_file(
            candidate.as_bytes(),
            candidate.reads_piecewise(),
        ) {
            Ok(opened) => opened,
            Err(e) => return Ok(Err(e)),
        };
        let real = opened_path(&file, candidate.as_path()).map_err(Withheld::Unresolved)?;
        self.check_real_path(&real)?;
        let cap = self.policy.max_file_bytes;
        if let Some(cap) = cap.filter(|&cap| len > cap) {
            return Err(Withheld::TooLarge { bytes: len, cap });
        }
        read_capped(file, len, cap)
    }

    /// Where the file opened may be, by the policy.
    fn check_real_path(&self, real: &Path) -> Result<(), Withheld> {
        if self.policy.links == Links::Inside {
            let Some(root) = &self.real_root else {
                return Err(Withheld::Unresolved(
                    "the root's real path cannot be resolved".to_string(),
                ));
            };
            match real.strip_prefix(root) {
                Ok(rel) if has_git_component(rel) => return Err(Withheld::InsideGitDir),
                Ok(_) => {}
                Err(_) => return Err(Withheld::OutsideRoot(real.to_path_buf())),
            }
        }
        if self.policy.refuse_special && is_special(real) {
            return Err(Withheld::Special(real.to_path_buf()));
        }
        Ok(())
    }
}

/// Reads an opened file whole, or at most `cap` bytes (one more shows it grew past the cap).
fn read_capped(
    mut file: std::fs::File,
    len: u64,
    cap: Option<u64>,
) -> Result<io::Result<Vec<u8>>, Withheld> {
    let limit = cap.map_or(u64::MAX, |cap| cap.saturating_add(1));
    let mut bytes = Vec::with_capacity(usize::try_from(len.min(limit)).unwrap_or(0));
    if let Err(e) = (&mut file).take(limit).read_to_end(&mut bytes) {
        return Ok(Err(e));
    }
    match cap {
        Some(cap) if bytes.len() as u64 > cap => Err(Withheld::TooLarge {
            bytes: bytes.len() as u64,
            cap,
        }),
        _ => Ok(Ok(bytes)),
    }
}

/// Whether a relative path has a `.git` component.
fn has_git_component(rel: &Path) -> bool {
    rel.components()
        .any(|c| matches!(c, Component::Normal(name) if name == ".git"))
}

/// Whether a real path is in a pseudo file system of the kernel's.
fn is_special(real: &Path) -> bool {
    ["/proc", "/sys", "/dev"]
        .iter()
        .any(|dir| real.starts_with(dir))
}

/// The path of the file an open handle refers to: on Linux the kernel's own
/// answer (`/proc/self/fd/N`); elsewhere, or without `/proc`, the resolved
/// path of `path`, accepted only when it is the same file as the handle.
fn opened_path(file: &std::fs::File, path: &Path) -> Result<PathBuf, String> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let link = format!("/proc/self/fd/{}", file.as_raw_fd());
        if let Ok(real) = std::fs::read_link(link) {
            if real.is_absolute() {
                return Ok(real);
            }
        }
    }
    let real = std::fs::canonicalize(path).map_err(|e| e.to_string())?;
    let (opened, resolved) = (
        file.metadata().map_err(|e| e.to_string())?,
        std::fs::metadata(&real).map_err(|e| e.to_string())?,
    );
    if (opened.dev(), opened.ino()) == (resolved.dev(), resolved.ino()) {
        Ok(real)
    } else {
        Err("the file changed while it was opened".to_string())
    }
}

/// The full paths (as candidates spell them, below `abs_root`) of the files
/// git tracks in the repository whose work tree is `abs_root` or contains
/// it; empty outside a repository or without the `git` feature.
fn tracked_paths(abs_root: &Path) -> HashSet<Vec<u8>> {
    #[cfg(feature = "git")]
    {
        if let Some(top) = repository_top(abs_root) {
            return crate::git::tracked_files(&top)
                .into_iter()
                .map(|rel| {
                    let mut full = top.as_os_str().as_bytes().to_vec();
                    full.push(b'/');
                    full.extend_from_slice(&rel);
                    full
                })
                .filter(|full| full.starts_with(abs_root.as_os_str().as_bytes()))
                .collect();
        }
    }
    let _ = abs_root;
    HashSet::new()
}

/// Whether `dir` is `/` or the home directory `home` (both resolved): a
/// root that would walk every project on the disk, which nothing run
/// unattended scans.
pub fn is_too_wide(dir: &Path, home: Option<&Path>) -> bool {
    let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real(dir);
    dir.parent().is_none() || home.is_some_and(|home| real(home) == dir)
}

/// The nearest directory at or above `dir` that holds `.git` (a directory,
/// or a file as in worktrees and submodules): its work tree's top.
pub fn repository_top(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn candidate(path: &Path) -> Candidate {
        Candidate::new(path.as_os_str().as_bytes().to_vec())
    }

    #[test]
    fn inside_links_withhold_what_leaves_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("secret"));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(&outside, "SECRET").unwrap();
        std::fs::write(root.join("sub/ok.md"), "fine").unwrap();
        std::fs::write(root.join(".git/config"), "token").unwrap();
        symlink(&outside, root.join("link.md")).unwrap();
        symlink("sub/ok.md", root.join("inner.md")).unwrap();
        symlink(dir.path(), root.join("up")).unwrap();
        symlink(".git/config", root.join("git.md")).unwrap();
        symlink("/proc/self/environ", root.join("env.md")).unwrap();
        let guard = Guard::new(&root, &ReadPolicy::unattended(), None);
        let read = |rel: &str| guard.read_bytes(&candidate(&root.join(rel)));
        assert_eq!(read("sub/ok.md").unwrap().unwrap(), b"fine");
        assert_eq!(read("inner.md").unwrap().unwrap(), b"fine");
        let real_secret = std::fs::canonicalize(&outside).unwrap();
        assert_eq!(
            read("link.md").err(),
            Some(Withheld::OutsideRoot(real_secret.clone()))
        );
        // A linked directory is never walked, but a path through it is still checked.
        assert_eq!(
            read("up/secret").err(),
            Some(Withheld::OutsideRoot(real_secret))
        );
        assert_eq!(read("git.md").err(), Some(Withheld::InsideGitDir));
        assert_eq!(read(".git/config").err(), Some(Withheld::InsideGitDir));
        assert!(matches!(read("env.md"), Err(Withheld::OutsideRoot(_))));
        // The reference policy reads them all.
        let reference = Guard::reference();
        assert_eq!(
            reference
                .read_bytes(&candidate(&root.join("link.md")))
                .unwrap()
                .unwrap(),
            b"SECRET"
        );
    }

    #[test]
    fn special_files_and_the_size_cap() {
        let dir = tempfile::tempdir().unwrap();
        symlink("/proc/self/environ", dir.path().join("env.md")).unwrap();
        let big = dir.path().join("big.md");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(10 << 20)
            .unwrap();
        let policy = ReadPolicy {
            refuse_special: true,
            max_file_bytes: Some(1 << 20),
            ..ReadPolicy::reference()
        };
        let guard = Guard::new(dir.path(), &policy, None);
        assert!(matches!(
            guard.read_bytes(&candidate(&dir.path().join("env.md"))),
            Err(Withheld::Special(p)) if p.starts_with("/proc")
        ));
        assert_eq!(
            guard.read_bytes(&candidate(&big)).err(),
            Some(Withheld::TooLarge {
                bytes: 10 << 20,
                cap: 1 << 20
            })
        );
    }
}
