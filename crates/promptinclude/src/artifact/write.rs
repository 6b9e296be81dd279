//! Writing output files so that a reader never sees half of one, and so
//! that nobody else's file can be written in their place.
//!
//! * The bytes go to a new temporary file in the target's directory, named
//!   [`temp::TEMP_PREFIX`] and random characters and opened with
//!   `O_CREAT | O_EXCL | O_NOFOLLOW` ([`super::temp::create_file`]): a
//!   symlink or file planted at a name we might use is never opened, so a
//!   local attacker cannot make us write through it. The temporary is
//!   flushed to disk, then renamed over the target, so the target is either
//!   the old file or the whole new one.
//! * The temporary gets the permission bits of the file it replaces (a 0600
//!   file holding API keys stays 0600); a new file gets the default mode
//!   (0666 less the umask), as `File::create` would give it.
//! * [`write_atomic`] replaces whatever is at the path, a symlink included
//!   (the link, not its target, is replaced: output paths in a directory
//!   someone else filled must not write into their link's target).
//!   [`write_through`] is for a file the user keeps as a symlink (a settings
//!   file linked into a dotfiles repository): it follows the whole chain of
//!   links and replaces the final file atomically in *its* directory, so the
//!   link stays a link. A dangling link's target is created.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::temp;
use super::{Context, Result};

/// Links followed at most by [`write_through`] (Linux's own limit).
const MAX_LINKS: usize = 40;

/// Atomically replaces `path` with `bytes`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// Atomically replaces the file that `path` ends at, following symlinks
/// (a link stays a link; a dangling link's target is created), with
/// `bytes`; returns the path of the file written.
pub fn write_through(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let target = resolve_links(path).with_context(|| format!("cannot write {}", path.display()))?;
    write_atomic(&target, bytes)?;
    Ok(target)
}

/// The directory of `path` (`.` for a bare name), where its temporaries go
/// so that a rename can publish them.
pub fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The permission bits of the regular file or directory at `path` (not
/// following a symlink there); `None` when there is none.
pub(crate) fn existing_mode(path: &Path) -> io::Result<Option<u32>> {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() || meta.is_dir() => Ok(Some(meta.permissions().mode() & 0o777)),
        Ok(_) => Ok(None),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Atomically replaces `path` with what `write` writes (buffered), for
/// output too big to hold in memory.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    // The temporary is removed on any error, and on an interrupt (see [`super::temp`]).
    let result = (|| -> io::Result<()> {
        let mode = existing_mode(path)?;
        let (file, tracked) = temp::create_file(parent_dir(path), mode.unwrap_or(0o666))?;
        if let Some(mode) = mode {
            // Exactly the old bits: the creation mode above went through the umask.
            file.set_permissions(fs::Permissions::from_mode(mode))?;
        }
        let mut out = io::BufWriter::with_capacity(1 << 16, file);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        tracked.commit(|temp| fs::rename(temp, path))
    })();
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// The file that `path` ends at after following every symlink (relative
/// links from their own directory); the first missing name when the chain
/// dangles.
fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&current) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let link = fs::read_link(&current)?;
                current = parent_dir(&current).join(link);
            }
            Ok(_) => return Ok(current),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(current),
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

#[cfg(test)]
mod tests {
    use super::*;

    use std::os::unix::fs::symlink;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.md");
        fs::write(&target, "old content that is longer").unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["out.md"]);
    }

    #[test]
    fn failure_names_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.md"), b"x").unwrap_err();
        assert!(crate::full_message(&err).contains("/nonexistent-dir/x.md"));
    }

    #[test]
    fn keeps_the_mode_of_the_file_it_replaces() {
        let dir = tempfile::tempdir().unwrap();
        for old in [0o600, 0o640, 0o755, 0o444] {
            let target = dir.path().join(format!("f{old:o}"));
            fs::write(&target, "old").unwrap();
            fs::set_permissions(&target, fs::Permissions::from_mode(old)).unwrap();
            write_atomic(&target, b"new").unwrap();
            assert_eq!(mode(&target), old, "{old:o}");
            assert_eq!(fs::read(&target).unwrap(), b"new");
        }
    }

    #[test]
    fn a_new_file_gets_the_default_mode() {
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("reference");
        fs::File::create(&reference).unwrap();
        let target = dir.path().join("new");
        write_atomic(&target, b"x").unwrap();
        assert_eq!(mode(&target), mode(&reference));
    }

    #[test]
    fn never_writes_through_a_planted_temporary_name() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "precious").unwrap();
        // Names the old scheme (`.promptinclude-tmp-<pid>-NAME`) would have used.
        let out = dir.path().join("out");
        fs::create_dir(&out).unwrap();
        let pid = std::process::id();
        for p in pid.saturating_sub(5)..pid + 5 {
            symlink(
                &victim,
                out.join(format!("{}{p}-index.json", temp::TEMP_PREFIX)),
            )
            .unwrap();
        }
        write_atomic(&out.join("index.json"), b"{}").unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"precious");
        assert!(fs::symlink_metadata(out.join("index.json"))
            .unwrap()
            .is_file());
    }

    #[test]
    fn write_atomic_replaces_a_link_and_write_through_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let real_dir = dir.path().join("dotfiles");
        fs::create_dir(&real_dir).unwrap();
        let real = real_dir.join("settings.json");
        fs::write(&real, "old").unwrap();
        fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
        // A chain: link -> ../middle (relative) -> dotfiles/settings.json.
        let home = dir.path().join("home");
        fs::create_dir(&home).unwrap();
        symlink(&real, dir.path().join("middle")).unwrap();
        let link = home.join("settings.json");
        symlink("../middle", &link).unwrap();

        assert_eq!(write_through(&link, b"new").unwrap(), real);
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&real).unwrap(), b"new");
        assert_eq!(mode(&real), 0o600);
        assert_eq!(names(&real_dir), ["settings.json"]);
        assert_eq!(names(&home), ["settings.json"]);

        write_atomic(&link, b"own").unwrap();
        assert!(fs::symlink_metadata(&link).unwrap().is_file());
        assert_eq!(fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn write_through_creates_a_dangling_links_target_and_stops_on_a_loop() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("settings.json");
        symlink("missing.json", &link).unwrap();
        assert_eq!(
            write_through(&link, b"{}").unwrap(),
            dir.path().join("missing.json")
        );
        assert_eq!(fs::read(&link).unwrap(), b"{}");

        let a = dir.path().join("a");
        symlink("b", &a).unwrap();
        symlink("a", dir.path().join("b")).unwrap();
        let err = write_through(&a, b"x").unwrap_err();
        assert!(
            crate::full_message(&err).contains("symbolic links"),
            "{}",
            crate::full_message(&err)
        );
    }
}
