//! The change notifications a live index trusts: one inotify instance
//! read without blocking, and the mount table's change signal.
//!
//! **Why inotify itself, not the `notify` crate.** `notify` reads its
//! events on a thread of its own and hands them over a channel, so when
//! `scan()` is called there is no way to know whether a change made just
//! before has reached the channel yet: an answer could be stale. Reading
//! the inotify descriptor in `scan()` until it would block takes every
//! event the kernel queued before the call (inotify queues an event in the
//! system call that makes the change), which is the barrier exactness
//! needs. It also costs one `read` on an unchanged tree and no thread.
//! Other systems have no such barrier in `notify` either (FSEvents is
//! batched with a latency), so there every scan is a full scan
//! ([`Watcher::open`] fails and the index says so).

use std::io;
use std::os::fd::OwnedFd;

/// One event, as the index needs it.
#[derive(Debug)]
pub(crate) struct Event<'a> {
    /// The watch it came on.
    pub wd: i32,
    /// What happened (`IN_*` bits).
    pub mask: u32,
    /// The entry of the watched directory it is about, if any.
    pub name: Option<&'a [u8]>,
}

/// `IN_*` bits, named as the kernel names them.
pub(crate) mod mask {
    pub(crate) const MODIFY: u32 = libc::IN_MODIFY;
    pub(crate) const ATTRIB: u32 = libc::IN_ATTRIB;
    pub(crate) const CLOSE_WRITE: u32 = libc::IN_CLOSE_WRITE;
    pub(crate) const MOVED_FROM: u32 = libc::IN_MOVED_FROM;
    pub(crate) const MOVED_TO: u32 = libc::IN_MOVED_TO;
    pub const CREATE: u32 = libc::IN_CREATE;
    pub(crate) const DELETE: u32 = libc::IN_DELETE;
    pub(crate) const UNMOUNT: u32 = libc::IN_UNMOUNT;
    pub(crate) const Q_OVERFLOW: u32 = libc::IN_Q_OVERFLOW;
    pub(crate) const IGNORED: u32 = libc::IN_IGNORED;
    /// What makes a name mean another file (or none).
    pub(crate) const ENTRY: u32 = MOVED_FROM | MOVED_TO | CREATE | DELETE;
    /// What changes a file's content or whether it can be read.
    pub(crate) const CONTENT: u32 = MODIFY | CLOSE_WRITE | ATTRIB;
    /// The watched file or directory itself is gone, moved, or no longer
    /// watched.
    pub(crate) const GONE: u32 = libc::IN_DELETE_SELF | libc::IN_MOVE_SELF | IGNORED;
}

/// An inotify instance, read without blocking.
pub(crate) struct Watcher {
    #[cfg(target_os = "linux")]
    fd: OwnedFd,
    #[cfg(target_os = "linux")]
    buf: Vec<std::mem::MaybeUninit<u8>>,
}

#[cfg(target_os = "linux")]
impl Watcher {
    /// A new instance (fails where the user's instance limit is reached).
    pub fn open() -> io::Result<Watcher> {
        use rustix::fs::inotify::{init, CreateFlags};
        let fd = init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
        Ok(Watcher {
            fd,
            buf: vec![std::mem::MaybeUninit::uninit(); 64 * 1024],
        })
    }

    /// Watches the directory at `path` (following a final link only when
    /// `follow`: the root may be one, nothing below it is entered through
    /// one). Returns the watch's number, the same for the same directory.
    pub fn add(&self, path: &[u8], follow: bool) -> io::Result<i32> {
        use rustix::fs::inotify::{add_watch, WatchFlags};
        let mut flags = WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::ONLYDIR
            | WatchFlags::EXCL_UNLINK;
        if !follow {
            flags |= WatchFlags::DONT_FOLLOW;
        }
        Ok(add_watch(&self.fd, path, flags)?)
    }

    /// Watches the file at `path` itself (not through a link): a write to
    /// it through any of its hard links is seen.
    pub(crate) fn add_file(&self, path: &[u8]) -> io::Result<i32> {
        use rustix::fs::inotify::{add_watch, WatchFlags};
        let flags = WatchFlags::MODIFY
            | WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::DELETE_SELF
            | WatchFlags::MOVE_SELF
            | WatchFlags::DONT_FOLLOW;
        Ok(add_watch(&self.fd, path, flags)?)
    }

    /// Stops watching `wd` (already gone is fine).
    pub fn remove(&self, wd: i32) {
        let _ = rustix::fs::inotify::remove_watch(&self.fd, wd);
    }

    /// Hands every event queued so far to `each`, until none is left.
    pub fn drain(&mut self, mut each: impl FnMut(Event<'_>)) -> io::Result<()> {
        use rustix::fs::inotify::Reader;
        let mut reader = Reader::new(&self.fd, &mut self.buf);
        loop {
            match reader.next() {
                Ok(event) => each(Event {
                    wd: event.wd(),
                    mask: event.events().bits(),
                    name: event
                        .file_name()
                        .map(|n| n.to_bytes())
                        .filter(|n| !n.is_empty()),
                }),
                Err(rustix::io::Errno::AGAIN) => return Ok(()),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Waits up to `timeout` for an event to be queued; whether one is.
    pub fn wait(&self, timeout: std::time::Duration) -> io::Result<bool> {
        poll_one(&self.fd, rustix::event::PollFlags::IN, timeout)
    }
}

#[cfg(not(target_os = "linux"))]
impl Watcher {
    pub fn open() -> io::Result<Watcher> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the live index needs inotify (Linux)",
        ))
    }
    pub fn add(&self, _: &[u8], _: bool) -> io::Result<i32> {
        unreachable!("no watcher is opened here")
    }
    pub(crate) fn add_file(&self, _: &[u8]) -> io::Result<i32> {
        unreachable!("no watcher is opened here")
    }
    pub fn remove(&self, _: i32) {}
    pub fn drain(&mut self, _: impl FnMut(Event<'_>)) -> io::Result<()> {
        Ok(())
    }
    pub fn wait(&self, timeout: std::time::Duration) -> io::Result<bool> {
        std::thread::sleep(timeout);
        Ok(true)
    }
}

/// `poll` on one descriptor; whether any of `flags` (or an error) is ready.
fn poll_one(
    fd: &OwnedFd,
    flags: rustix::event::PollFlags,
    timeout: std::time::Duration,
) -> io::Result<bool> {
    use rustix::event::{poll, PollFd, Timespec};
    let mut fds = [PollFd::new(fd, flags)];
    let timeout = Timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    loop {
        match poll(&mut fds, Some(&timeout)) {
            Ok(n) => return Ok(n > 0),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// The mount table's change signal: `/proc/self/mountinfo` polls with
/// `POLLPRI` once a file system is mounted or unmounted anywhere, which
/// inotify does not report (a mount over a watched directory changes what
/// its path shows with no event).
pub(crate) struct Mounts {
    fd: Option<OwnedFd>,
}

impl Mounts {
    /// Starts listening (`fd` is `None` where there is no `/proc`: then
    /// every check says the table may have changed).
    pub fn open() -> Mounts {
        let fd = std::fs::File::open("/proc/self/mountinfo")
            .ok()
            .map(OwnedFd::from);
        let mut mounts = Mounts { fd };
        mounts.rearm();
        mounts
    }

    /// Whether the table changed since the last check (reading it again
    /// re-arms the signal).
    pub fn changed(&mut self) -> bool {
        let Some(fd) = &self.fd else { return true };
        let ready = poll_one(
            fd,
            rustix::event::PollFlags::PRI | rustix::event::PollFlags::ERR,
            std::time::Duration::ZERO,
        )
        .unwrap_or(true);
        if ready {
            self.rearm();
        }
        ready
    }

    fn rearm(&mut self) {
        use std::io::{Read, Seek};
        let Some(fd) = self.fd.take() else { return };
        let mut file = std::fs::File::from(fd);
        let mut sink = Vec::new();
        let ok = file.rewind().is_ok() && file.read_to_end(&mut sink).is_ok();
        self.fd = ok.then(|| OwnedFd::from(file));
    }
}

/// File systems whose changes can be made where this kernel never sees
/// them (another client of a network file system, a FUSE daemon): no
/// notification covers them, so their directories are listed on every
/// scan. `statfs` magic numbers from `linux/magic.h` and `statfs(2)`.
pub(crate) fn is_remote(fd: &OwnedFd) -> bool {
    #[cfg(target_os = "linux")]
    return is_remote_type(rustix::fs::fstatfs(fd));
    #[cfg(not(target_os = "linux"))]
    {
        let _ = fd;
        true
    }
}

/// [`is_remote`] of the file system `path` leads to (links followed). Its
/// times are then the server's, whose clock is not this machine's.
pub(crate) fn is_remote_path(path: &[u8]) -> bool {
    #[cfg(target_os = "linux")]
    return is_remote_type(rustix::fs::statfs(path));
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        true
    }
}

#[cfg(target_os = "linux")]
fn is_remote_type(statfs: rustix::io::Result<rustix::fs::StatFs>) -> bool {
    const REMOTE: [i64; 12] = [
        0x6969,      // NFS
        0x517B,      // SMB
        0xFF53_4D42, // CIFS
        0xFE53_4D42, // SMB2
        0x6573_5546, // FUSE
        0x0102_1997, // 9P (V9FS)
        0x00C3_6400, // CEPH
        0x5346_414F, // AFS
        0x6B41_4653, // kAFS
        0x7375_7245, // CODA
        0x564C,      // NCP
        0x0BD0_0BD0, // Lustre
    ];
    match statfs {
        // `f_type`'s type differs between architectures.
        #[allow(clippy::unnecessary_cast)]
        Ok(st) => REMOTE.contains(&(st.f_type as i64)),
        Err(_) => true,
    }
}
