//! Listing a directory on Linux: `getdents64` into a buffer reused per
//! thread, through `rustix::fs::RawDir` (which parses the records safely).

use std::cell::RefCell;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::RawDir;

use super::EntryKind;

const BUFFER_SIZE: usize = 32 * 1024;

thread_local! {
    static BUFFER: RefCell<Vec<MaybeUninit<u8>>> =
        RefCell::new(vec![MaybeUninit::uninit(); BUFFER_SIZE]);
}

/// Lists the directory open as `dir`, calling `visit(name, kind)` for each
/// entry except `.` and `..`. An error while listing is returned after the
/// entries seen so far were visited.
pub fn read_dir(dir: &OwnedFd, mut visit: impl FnMut(&[u8], EntryKind)) -> io::Result<()> {
    BUFFER.with(|buffer| {
        let mut buffer = buffer.borrow_mut();
        let mut entries = RawDir::new(dir.as_fd(), &mut buffer[..]);
        loop {
            let at_end = match entries.next() {
                None => return Ok(()),
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(entry)) => {
                    let name = entry.file_name().to_bytes();
                    if name != b"." && name != b".." {
                        visit(name, EntryKind::of(entry.file_type()));
                    }
                    // ext4 (and btrfs) mark the end of a directory with a
                    // next position of i64::MAX, which no entry can have.
                    entry.next_entry_cookie() == i64::MAX as u64
                }
            };
            // When that was the last entry read, the call that would only
            // say "end" is skipped: one system call less per directory.
            if at_end && entries.is_buffer_empty() {
                return Ok(());
            }
        }
    })
}
