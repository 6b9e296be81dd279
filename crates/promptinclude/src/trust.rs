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
//! The policy for unattended runs ([`ReadPolicy::unattended`]): nothing
//! reaches the agent that the repository's committer did not commit, and
//! git is the judge of "committed" (in `HEAD`, with the content `HEAD`
//! holds, as git would judge a clean file: `committed.rs`):
//!
//! * a file is read only when the file actually opened lies inside the
//!   root's real path: a link to a file or a directory outside the root,
//!   `/proc`, `/dev` and the like are withheld;
//! * a rule file reached through a link is read only when every link on the
//!   way is the link `HEAD` holds at its path, and the file it reaches is a
//!   file `HEAD` holds with the content `HEAD` holds; outside a repository
//!   no link is read;
//! * when the repository's own configuration (`.a0proj`) widens
//!   `name_pattern` beyond the user's, a file the widened pattern adds is
//!   read only when `HEAD` holds it with that content: a repository can
//!   point the scan at what it committed, never at a gitignored `.env` or a
//!   committed template the user filled in;
//! * a regular file the user's own pattern matches is read as it is,
//!   committed or not (a local `private.promptinclude.md` is the user's);
//! * nothing inside a `.git` directory is read, whatever the patterns say;
//! * a file larger than a size cap is withheld without being read.
//!
//! The check is made on the opened handle (its path from `/proc/self/fd`
//! on Linux; elsewhere the resolved path, checked to be the same file), and
//! the content compared with `HEAD` is the content read, so what is read is
//! what was checked. See `docs/security.md`.

use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::committed::{Committed, HeadFile};
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
    /// user's `name_pattern` only when `HEAD` holds them as they are.
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
    /// With a widened pattern: the user's pattern.
    widened: Option<Widened>,
    /// `HEAD` of the repository holding the root, opened when a file first
    /// needs it (`None`: there is none).
    committed: OnceLock<Option<Committed>>,
}

#[derive(Debug)]
struct Widened {
    /// `None` when the user's pattern does not compile: nothing is trusted.
    trusted: Option<NamePattern>,
}

impl Guard {
    /// The guard that reads as the reference does.
    pub fn reference() -> Guard {
        Guard {
            policy: ReadPolicy::reference(),
            real_root: None,
            abs_root: PathBuf::new(),
            widened: None,
            committed: OnceLock::new(),
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
            });
        Guard {
            policy: policy.clone(),
            real_root: std::fs::canonicalize(abs_root).ok(),
            abs_root: abs_root.to_path_buf(),
            widened,
            committed: OnceLock::new(),
        }
    }

    /// The guard that asks of a link what the unattended policy asks,
    /// for the audit of a root read by another policy.
    pub(crate) fn for_links(abs_root: &Path) -> Guard {
        let policy = ReadPolicy {
            links: Links::Inside,
            ..ReadPolicy::reference()
        };
        Guard::new(abs_root, &policy, None)
    }

    /// `policy` for the root at `abs_root`, where every file must be as
    /// `HEAD` holds it, as a file only a widened `name_pattern` reaches
    /// (with [`ReadPolicy::committed_only_when_widened`]): for files the
    /// repository names itself, such as an import in a committed file.
    pub(crate) fn committed_only(abs_root: &Path, policy: &ReadPolicy) -> Guard {
        let mut guard = Guard::new(abs_root, policy, None);
        if policy.committed_only_when_widened {
            guard.widened = Some(Widened { trusted: None });
        }
        guard
    }

    /// Why the policy withholds `candidate`, if it does (the file is read
    /// to know, and dropped).
    pub(crate) fn withheld(&self, candidate: &Candidate) -> Option<Withheld> {
        self.read_bytes(candidate).err()
    }

    /// Why [`Links::Inside`] withholds `candidate` for git's sake (a link on
    /// the way, the file it reaches, or that file's content is not what
    /// `HEAD` commits), if it does.
    pub(crate) fn uncommitted(&self, candidate: &Candidate) -> Option<Withheld> {
        match self.withheld(candidate) {
            Some(
                why @ (Withheld::LinkWithoutRepository
                | Withheld::LinkNotCommitted(_)
                | Withheld::TargetNotCommitted(_)
                | Withheld::ChangedSinceCommit(_)),
            ) => Some(why),
            _ => None,
        }
    }

    /// Whether `candidate` is a file only a widened `name_pattern` reaches,
    /// read only as `HEAD` holds it.
    fn widened_only(&self, candidate: &Candidate) -> bool {
        self.widened.as_ref().is_some_and(|widened| {
            let name = candidate.as_path().file_name().unwrap_or_default();
            let trusted = widened.trusted.as_ref();
            !trusted.is_some_and(|p| p.is_match_bytes(name.as_bytes()))
        })
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
        let rel = candidate.as_path().strip_prefix(&self.abs_root).ok();
        let inside = self.policy.links == Links::Inside;
        if inside && rel.is_some_and(has_git_component) {
            return Err(Withheld::InsideGitDir);
        }
        let widened_only = self.widened_only(candidate);
        let (file, len) = match crate::sys::open_regular_file(
            candidate.as_bytes(),
            candidate.reads_piecewise(),
        ) {
            Ok(opened) => opened,
            Err(e) => return Ok(Err(e)),
        };
        let real = opened_path(&file, candidate.as_path()).map_err(Withheld::Unresolved)?;
        self.check_real_path(&real)?;
        // A link on the way: the file opened is not where the path's own
        // directories put it (the root itself may be reached through one).
        let through_link = inside
            && match (&self.real_root, rel) {
                (Some(root), Some(rel)) => root.join(rel) != real,
                _ => true,
            };
        let in_head = if through_link || widened_only {
            Some(self.committed_file(rel, &real, through_link)?)
        } else {
            None
        };
        let cap = self.policy.max_file_bytes;
        if let Some(cap) = cap.filter(|&cap| len > cap) {
            return Err(Withheld::TooLarge { bytes: len, cap });
        }
        let bytes = read_capped(file, len, cap)?;
        if let (Some((head, in_head)), Ok(bytes)) = (in_head, &bytes) {
            if !head.matches(&in_head, bytes) {
                return Err(Withheld::ChangedSinceCommit(real));
            }
        }
        Ok(bytes)
    }

    /// `HEAD` of the repository holding the root.
    fn committed(&self) -> Option<&Committed> {
        self.committed
            .get_or_init(|| {
                let top = repository_top(self.real_root.as_deref()?)?;
                Committed::open(&top)
            })
            .as_ref()
    }

    /// For a file that must be the committer's (opened at `real`, its path
    /// `rel` below the root): `HEAD`, and the file it holds there, once
    /// every link on the way (`through_link`) is the link `HEAD` holds. Its
    /// content is compared once read.
    fn committed_file(
        &self,
        rel: Option<&Path>,
        real: &Path,
        through_link: bool,
    ) -> Result<(&Committed, HeadFile), Withheld> {
        let Some(head) = self.committed() else {
            return Err(if through_link {
                Withheld::LinkWithoutRepository
            } else {
                Withheld::NotCommitted
            });
        };
        if through_link {
            let (Some(root), Some(rel)) = (&self.real_root, rel) else {
                return Err(Withheld::Unresolved(
                    "the file is not below the root".to_string(),
                ));
            };
            if follow_committed_links(head, root, rel)? != real {
                return Err(Withheld::Unresolved(
                    "the file changed while its links were checked".to_string(),
                ));
            }
        }
        let in_head = real
            .strip_prefix(head.top())
            .ok()
            .and_then(|in_repo| head.file(in_repo));
        match in_head {
            Some(file) => Ok((head, file)),
            None => Err(not_committed(real.to_path_buf(), through_link)),
        }
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

/// Why a file that must be the committer's is withheld when `HEAD` does
/// not hold it.
fn not_committed(real: PathBuf, through_link: bool) -> Withheld {
    if through_link {
        Withheld::TargetNotCommitted(real)
    } else {
        Withheld::NotCommitted
    }
}

/// Most symbolic links followed while resolving one path (Linux's limit).
const MAX_LINK_HOPS: u32 = 40;

/// Resolves `rel` below the real root `root` as the kernel would, one
/// component at a time, and returns the real path it reaches, provided
/// every symbolic link on the way is the one `head` holds at its path (a
/// link outside the repository is held by no `HEAD`).
fn follow_committed_links(head: &Committed, root: &Path, rel: &Path) -> Result<PathBuf, Withheld> {
    let mut at = root.to_path_buf();
    let mut pending: Vec<PathBuf> = rel
        .components()
        .rev()
        .map(|c| PathBuf::from(c.as_os_str()))
        .collect();
    let mut hops = 0;
    while let Some(component) = pending.pop() {
        match component.components().next() {
            Some(Component::RootDir) => at = PathBuf::from("/"),
            Some(Component::ParentDir) => {
                at.pop();
            }
            Some(Component::Normal(name)) => {
                at.push(name);
                let meta = std::fs::symlink_metadata(&at)
                    .map_err(|e| Withheld::Unresolved(format!("{}: {e}", at.display())))?;
                if !meta.file_type().is_symlink() {
                    continue;
                }
                hops += 1;
                if hops > MAX_LINK_HOPS {
                    return Err(Withheld::Unresolved(
                        "too many levels of symbolic links".to_string(),
                    ));
                }
                let target = std::fs::read_link(&at)
                    .map_err(|e| Withheld::Unresolved(format!("{}: {e}", at.display())))?;
                let committed = at
                    .strip_prefix(head.top())
                    .is_ok_and(|in_repo| head.holds_link(in_repo, target.as_os_str().as_bytes()));
                if !committed {
                    return Err(Withheld::LinkNotCommitted(at));
                }
                at.pop();
                pending.extend(
                    target
                        .components()
                        .rev()
                        .map(|c| PathBuf::from(c.as_os_str())),
                );
            }
            _ => {}
        }
    }
    Ok(at)
}

/// Whether `dir` is `/`, the home directory `home`, or a directory that
/// holds it (all resolved; `/home`): a root that would walk every project
/// on the disk, or the user's own files (`~/.ssh`), which nothing run
/// unattended scans.
pub fn is_too_wide(dir: &Path, home: Option<&Path>) -> bool {
    let real = |path: &Path| std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = real(dir);
    dir.parent().is_none() || home.is_some_and(|home| real(home).starts_with(&dir))
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
        // `.git` here is no repository: no link can be shown to be committed.
        assert_eq!(
            read("inner.md").err(),
            Some(Withheld::LinkWithoutRepository)
        );
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

    /// `git ARGS` in `dir`, with no system or user configuration.
    fn git(dir: &Path, args: &[&str]) {
        let status = std::process::Command::new("git")
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env_remove("GIT_DIR")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "core.autocrlf=false",
            ])
            .args(["-c", "init.defaultBranch=main"])
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    #[test]
    fn links_are_read_only_when_head_commits_every_link_and_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(root.join("docs/real")).unwrap();
        std::fs::write(root.join(".gitignore"), ".env\n").unwrap();
        std::fs::write(root.join("docs/rules.md"), "COMMITTED\n").unwrap();
        std::fs::write(root.join("docs/real/deep.md"), "DEEP\n").unwrap();
        std::fs::write(root.join("template.md"), "TEMPLATE\n").unwrap();
        symlink(".env", root.join("env.md")).unwrap();
        symlink("docs/rules.md", root.join("good.md")).unwrap();
        symlink("template.md", root.join("filled.md")).unwrap();
        symlink("docs/real/deep.md", root.join("deep.md")).unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "x"]);
        // After the commit: the secret, a filled-in template (staged, still
        // not the committer's), links of the user's own, and a directory
        // link on the way of a committed link.
        std::fs::write(root.join(".env"), "SECRET").unwrap();
        std::fs::write(root.join("template.md"), "SECRET").unwrap();
        git(&root, &["add", "template.md"]);
        symlink("docs/rules.md", root.join("local.md")).unwrap();
        std::fs::write(root.join("plain.md"), "PLAIN").unwrap();
        std::fs::remove_dir_all(root.join("docs/real")).unwrap();
        std::fs::create_dir(root.join("elsewhere")).unwrap();
        std::fs::write(root.join("elsewhere/deep.md"), "DEEP\n").unwrap();
        symlink("../elsewhere", root.join("docs/real")).unwrap();

        let guard = Guard::new(&root, &ReadPolicy::unattended(), None);
        let read = |rel: &str| guard.read_bytes(&candidate(&root.join(rel)));
        let real = |rel: &str| std::fs::canonicalize(root.join(rel)).unwrap();
        assert_eq!(read("good.md").unwrap().unwrap(), b"COMMITTED\n");
        assert_eq!(read("plain.md").unwrap().unwrap(), b"PLAIN");
        assert_eq!(
            read("env.md").err(),
            Some(Withheld::TargetNotCommitted(real(".env")))
        );
        assert_eq!(
            read("filled.md").err(),
            Some(Withheld::ChangedSinceCommit(real("template.md")))
        );
        assert_eq!(
            read("local.md").err(),
            Some(Withheld::LinkNotCommitted(real("").join("local.md")))
        );
        assert_eq!(
            read("deep.md").err(),
            Some(Withheld::LinkNotCommitted(real("docs").join("real")))
        );
        // Outside a repository no link is read; a regular file still is.
        std::fs::remove_dir_all(root.join(".git")).unwrap();
        let guard = Guard::new(&root, &ReadPolicy::unattended(), None);
        let read = |rel: &str| guard.read_bytes(&candidate(&root.join(rel)));
        assert_eq!(read("good.md").err(), Some(Withheld::LinkWithoutRepository));
        assert_eq!(read("plain.md").unwrap().unwrap(), b"PLAIN");
        // The reference policy reads them all.
        let reference = Guard::reference();
        let env = reference.read_bytes(&candidate(&root.join("env.md")));
        assert_eq!(env.unwrap().unwrap(), b"SECRET");
    }

    #[test]
    fn widened_files_are_read_only_as_head_holds_them_converted_as_git_add_would() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(
            root.join(".gitattributes"),
            "*.crlf text eol=crlf\n*.lfs filter=lfs\n",
        )
        .unwrap();
        std::fs::write(root.join("app.env"), "API_KEY=\n").unwrap();
        std::fs::write(root.join("same.env"), "KEPT\n").unwrap();
        std::fs::write(root.join("lines.crlf"), "one\ntwo\n").unwrap();
        // What an LFS clean filter commits: a pointer, not the content.
        std::fs::write(
            root.join("big.lfs"),
            "version https://git-lfs.github.com/spec/v1\n",
        )
        .unwrap();
        git(&root, &["init", "-q"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-qm", "x"]);
        std::fs::write(root.join("app.env"), "API_KEY=REAL\n").unwrap();
        std::fs::write(root.join("new.env"), "NEW\n").unwrap();
        // A checkout with eol=crlf writes CRLF: git judges it clean.
        std::fs::write(root.join("lines.crlf"), "one\r\ntwo\r\n").unwrap();
        std::fs::write(root.join("big.lfs"), "the large content\n").unwrap();

        let guard = Guard::new(&root, &ReadPolicy::unattended(), Some("*.promptinclude.md"));
        let read = |rel: &str| guard.read_bytes(&candidate(&root.join(rel)));
        let real = |rel: &str| std::fs::canonicalize(root.join(rel)).unwrap();
        assert_eq!(read("same.env").unwrap().unwrap(), b"KEPT\n");
        assert_eq!(read("lines.crlf").unwrap().unwrap(), b"one\r\ntwo\r\n");
        assert_eq!(
            read("app.env").err(),
            Some(Withheld::ChangedSinceCommit(real("app.env")))
        );
        assert_eq!(read("new.env").err(), Some(Withheld::NotCommitted));
        assert_eq!(
            read("big.lfs").err(),
            Some(Withheld::ChangedSinceCommit(real("big.lfs")))
        );
        // A file the user's own pattern matches is the user's.
        std::fs::write(root.join("mine.promptinclude.md"), "MINE").unwrap();
        assert_eq!(read("mine.promptinclude.md").unwrap().unwrap(), b"MINE");
    }

    #[test]
    fn roots_that_hold_the_home_directory_are_too_wide() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home/user");
        std::fs::create_dir_all(home.join("project")).unwrap();
        assert!(is_too_wide(Path::new("/"), Some(&home)));
        assert!(is_too_wide(&home, Some(&home)));
        assert!(is_too_wide(&dir.path().join("home"), Some(&home)));
        assert!(is_too_wide(dir.path(), Some(&home)));
        assert!(!is_too_wide(&home.join("project"), Some(&home)));
        assert!(!is_too_wide(&home.join("project"), None));
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
