//! Listing a directory on any Unix: `rustix::fs::Dir` (`readdir` where the
//! system has no `getdents64` interface rustix can call directly).

use std::io;
use std::os::fd::OwnedFd;

use rustix::fs::Dir;

use super::EntryKind;

/// Lists the directory open as `dir`, calling `visit(name, kind)` for each
/// entry except `.` and `..`. An error while listing is returned after the
/// entries seen so far were visited.
pub fn read_dir(dir: &OwnedFd, mut visit: impl FnMut(&[u8], EntryKind)) -> io::Result<()> {
    // `Dir` takes a handle of its own (`fdopendir` owns it); the caller keeps
    // `dir` to open and `stat` entries relative to it meanwhile.
    let own = rustix::io::fcntl_dupfd_cloexec(dir, 0)?;
    let mut entries = Dir::new(own)?;
    while let Some(entry) = entries.read() {
        let entry = entry?;
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            visit(name, EntryKind::of(entry.file_type()));
        }
    }
    Ok(())
}
