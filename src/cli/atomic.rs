//! Writing output files so that a reader never sees half of one: write a
//! temporary file in the same directory, flush it to disk, then rename it
//! over the final name.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use super::interrupt;

/// Prefix of temporary files; anything left with it is from an interrupted run.
pub const TEMP_PREFIX: &str = ".promptinclude-tmp-";

/// Atomically replaces `path` with `bytes`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_with(path, |out| out.write_all(bytes))
}

/// A temporary path beside `path` (same directory, so a rename can publish it).
pub fn temp_beside(path: &Path, tag: &str) -> PathBuf {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    dir.join(format!("{TEMP_PREFIX}{}{tag}-{name}", std::process::id()))
}

/// Atomically replaces `path` with what `write` writes (buffered), for
/// output too big to hold in memory.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let temp = temp_beside(path, "");
    // The temporary is removed on any error, and on an interrupt (see `cli::interrupt`).
    let result = (|| -> std::io::Result<()> {
        let (file, tracked) = interrupt::create_file(&temp)?;
        let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        tracked.commit(|temp| fs::rename(temp, path))
    })();
    result.with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_file_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.md");
        fs::write(&target, "old content that is longer").unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.md")]);
    }

    #[test]
    fn failure_names_the_path() {
        let err = write_atomic(Path::new("/nonexistent-dir/x.md"), b"x").unwrap_err();
        assert!(format!("{err:#}").contains("/nonexistent-dir/x.md"));
    }
}
