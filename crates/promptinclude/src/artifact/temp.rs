//! Temporary files and directories, registered while they exist.
//!
//! Artifacts are written to a temporary name and renamed into place
//! ([`super::write_atomic`], [`super::bundle::write_bundle`]), so no reader
//! ever sees a half-written file under its final name. What an interrupted
//! process could leave is the temporary itself. So each one is created (a new
//! random name [`TEMP_PREFIX`]…, in the target's directory, never an existing
//! file or a symlink) and registered under one lock ([`create_file`],
//! [`create_dir`]), and renamed into place and unregistered under the same
//! lock ([`Tracked::commit`]). [`remove_all`] takes that lock for good and
//! removes what is registered: each temporary either exists and is
//! registered (and is removed), or is already in place. A temporary
//! directory is first renamed aside, so that files other threads are still
//! creating inside it by path cannot land in it, then removed.
//!
//! The command line calls [`remove_all`] from its signal thread on Ctrl-C,
//! `SIGTERM` and `SIGHUP`; a host embedding the library can do the same.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

/// Prefix of temporary files; anything left with it is from an interrupted run.
pub const TEMP_PREFIX: &str = ".promptinclude-tmp-";

/// Temporaries that exist right now, with whether each is a directory.
static REGISTRY: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());

fn registry() -> MutexGuard<'static, Vec<(PathBuf, bool)>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// The registry, locked for good: while this value lives, no temporary can
/// be registered or committed. [`remove_all`] returns it.
#[must_use = "the lock is what keeps new temporaries from appearing"]
pub struct Removed {
    _held: MutexGuard<'static, Vec<(PathBuf, bool)>>,
}

/// Removes every registered temporary and keeps the registry locked, for a
/// process about to end (hold the value until it does).
pub fn remove_all() -> Removed {
    let temps = registry();
    for (path, is_dir) in temps.iter() {
        if *is_dir {
            remove_dir_aside(path);
        } else {
            let _ = fs::remove_file(path);
        }
    }
    Removed { _held: temps }
}

/// Renames a directory aside (so no new file can be created in it by path),
/// then removes it, retrying for files whose creation was already under way.
fn remove_dir_aside(path: &Path) {
    let mut aside = OsString::from(path.as_os_str());
    aside.push(".removing");
    let target = if fs::rename(path, &aside).is_ok() {
        PathBuf::from(aside)
    } else {
        path.to_path_buf()
    };
    for _ in 0..20 {
        match fs::remove_dir_all(&target) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                std::thread::sleep(std::time::Duration::from_millis(5))
            }
            _ => return,
        }
    }
}

/// A registered temporary: removed if the process is interrupted while this
/// value is alive, and removed when it is dropped without being committed
/// (an error on the way). [`Tracked::commit`] moves it into place instead.
#[derive(Debug)]
pub struct Tracked {
    path: PathBuf,
    is_dir: bool,
}

impl Tracked {
    /// The temporary's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `publish` (typically the rename into place) and unregisters the
    /// temporary, both under the registry lock, so an interrupt sees either
    /// the temporary or the published result, never a state in between. If
    /// `publish` fails, the temporary is removed.
    pub fn commit<T, E>(self, publish: impl FnOnce(&Path) -> Result<T, E>) -> Result<T, E> {
        let mut temps = registry();
        let result = publish(&self.path);
        if result.is_ok() {
            unregister(&mut temps, &self.path);
            drop(temps);
            // Published: there is nothing left for Drop to remove.
            std::mem::forget(self);
        }
        result
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        let mut temps = registry();
        if self.is_dir {
            let _ = fs::remove_dir_all(&self.path);
        } else {
            let _ = fs::remove_file(&self.path);
        }
        unregister(&mut temps, &self.path);
    }
}

fn unregister(temps: &mut Vec<(PathBuf, bool)>, path: &Path) {
    if let Some(i) = temps.iter().rposition(|(p, _)| p == path) {
        temps.swap_remove(i);
    }
}

/// Creates a new temporary file with a random name in `dir` and registers
/// it. It is opened with `O_CREAT | O_EXCL | O_NOFOLLOW` (`tempfile`'s names,
/// retried on a clash), so nothing already at that name, a planted symlink
/// above all, is ever opened or followed; `mode` is the creation mode (the
/// umask applies).
pub fn create_file(dir: &Path, mode: u32) -> io::Result<(File, Tracked)> {
    let mut temps = registry();
    let (file, path) = temp_builder()
        .make_in(dir, |path| {
            fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(mode)
                .custom_flags(libc::O_NOFOLLOW)
                .open(path)
        })?
        .keep()
        .map_err(|e| e.error)?;
    temps.push((path.clone(), false));
    Ok((
        file,
        Tracked {
            path,
            is_dir: false,
        },
    ))
}

/// Creates a new temporary directory with a random name in `dir` (`mkdir`,
/// which never follows a symlink, retried on a clash) and registers it;
/// `mode` is the creation mode (the umask applies).
pub fn create_dir(dir: &Path, mode: u32) -> io::Result<Tracked> {
    let mut temps = registry();
    let path = temp_builder()
        .permissions(fs::Permissions::from_mode(mode))
        .tempdir_in(dir)?
        .keep();
    temps.push((path.clone(), true));
    Ok(Tracked { path, is_dir: true })
}

/// Names [`TEMP_PREFIX`] and random characters; the caller removes what it
/// creates (our registry, not `tempfile`'s drop, owns the cleanup).
fn temp_builder() -> tempfile::Builder<'static, 'static> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX);
    builder
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(path: &Path) -> bool {
        registry().iter().any(|(p, _)| p == path)
    }

    #[test]
    fn commit_publishes_and_unregisters() {
        let dir = tempfile::tempdir().unwrap();
        let (_file, tracked) = create_file(dir.path(), 0o600).unwrap();
        let temp = tracked.path().to_path_buf();
        assert!(registered(&temp) && temp.is_file());
        assert_eq!(temp.parent(), Some(dir.path()));
        let name = temp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with(TEMP_PREFIX) && name.len() > TEMP_PREFIX.len() + 4,
            "{name}"
        );
        tracked
            .commit(|p| fs::rename(p, dir.path().join("a")))
            .unwrap();
        assert!(!registered(&temp));
        assert!(dir.path().join("a").exists());
    }

    #[test]
    fn failed_commit_and_drop_remove_and_unregister() {
        let dir = tempfile::tempdir().unwrap();
        let tracked = create_dir(dir.path(), 0o777).unwrap();
        let temp = tracked.path().to_path_buf();
        fs::write(temp.join("inside"), "x").unwrap();
        assert!(registered(&temp));
        let err = tracked
            .commit(|_| Err::<(), _>(io::Error::other("no")))
            .unwrap_err();
        assert_eq!(err.to_string(), "no");
        assert!(!registered(&temp) && !temp.exists());
        let (_file, tracked) = create_file(dir.path(), 0o600).unwrap();
        let temp = tracked.path().to_path_buf();
        drop(tracked);
        assert!(!registered(&temp) && !temp.exists());
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn temporaries_get_fresh_names_and_the_mode_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let (_a, a) = create_file(dir.path(), 0o600).unwrap();
        let (_b, b) = create_file(dir.path(), 0o600).unwrap();
        let c = create_dir(dir.path(), 0o700).unwrap();
        assert!(a.path() != b.path() && b.path() != c.path());
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(a.path()), mode(c.path())), (0o600, 0o700));
    }

    #[test]
    fn a_directory_is_removed_aside() {
        let dir = tempfile::tempdir().unwrap();
        let temp = dir.path().join(".tmp-c");
        fs::create_dir_all(temp.join("x/y")).unwrap();
        fs::write(temp.join("x/y/z"), "z").unwrap();
        remove_dir_aside(&temp);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
