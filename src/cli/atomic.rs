//! Writing output files so that a reader never sees half of one: write a
//! temporary file in the same directory, flush it to disk, then rename it
//! over the final name.

use std::fs;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};

use super::interrupt;

/// Prefix of temporary files; anything left with it is from an interrupted run.
pub const TEMP_PREFIX: &str = ".promptinclude-tmp-";

/// Atomically replaces `path` with `bytes`.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let temp = dir.join(format!("{TEMP_PREFIX}{}-{name}", std::process::id()));
    // The temporary is removed on any error, and on an interrupt (see `cli::interrupt`).
    let result = (|| -> std::io::Result<()> {
        let (mut file, tracked) = interrupt::create_file(&temp)?;
        file.write_all(bytes)?;
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
