//! Running the binary as a child process under a watchdog, so that a hang
//! fails the test instead of blocking the suite, and measuring the child's own
//! peak memory (`wait4`'s `ru_maxrss`, which is per child, unlike
//! `RUSAGE_CHILDREN`, which mixes every child of the test process).
//!
//! One catch: the child is spawned with `vfork` semantics, and at `exec` the
//! kernel folds the *test process's* peak RSS into the child's `ru_maxrss`.
//! When that peak is the larger (other tests in this process held big
//! buffers), `ru_maxrss` says nothing about the child, so the watchdog also
//! samples the child's own `VmHWM` every few milliseconds and that is used.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a child ended.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
    /// Peak resident set size, in KiB.
    pub max_rss_kib: i64,
    /// Wall-clock time from spawn to exit.
    pub elapsed: Duration,
    /// Whether the watchdog had to kill it.
    pub timed_out: bool,
}

impl Outcome {
    /// stderr as text.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// stdout as text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Panics with the child's stderr unless it exited with `code` in time and
    /// without a panic message.
    pub fn assert_code(&self, code: i32) {
        assert!(!self.timed_out, "timed out after {:?}", self.elapsed);
        assert_eq!(
            self.code,
            Some(code),
            "signal {:?}; stderr:\n{}",
            self.signal,
            self.stderr_text()
        );
        assert!(
            !self.stderr_text().contains("panicked"),
            "{}",
            self.stderr_text()
        );
    }
}

/// A started child whose output is being collected.
pub struct Running {
    child: Child,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
    started: Instant,
    /// This test process's peak RSS (KiB) once the child had exec'd.
    parent_peak_kib: i64,
}

/// `VmHWM` (peak resident set, KiB) of `/proc/<who>/status`, if readable.
fn peak_rss_kib(who: &str) -> Option<i64> {
    let status = std::fs::read_to_string(format!("/proc/{who}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn collect(mut from: impl Read + Send + 'static) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = from.read_to_end(&mut out);
        out
    })
}

impl Running {
    /// Spawns `cmd` with stdin from `input` (or nothing), stdout and stderr collected.
    pub fn start(cmd: &mut Command, input: Option<Vec<u8>>) -> Running {
        Self::start_with(cmd, input, true)
    }

    /// Like [`Running::start`], but leaves stdout to the caller when `collect_stdout` is false.
    pub fn start_with(cmd: &mut Command, input: Option<Vec<u8>>, collect_stdout: bool) -> Running {
        cmd.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let started = Instant::now();
        let mut child = cmd.spawn().expect("the binary starts");
        if let Some(input) = input {
            let mut stdin = child.stdin.take().expect("piped stdin");
            std::thread::spawn(move || {
                let _ = stdin.write_all(&input);
            });
        }
        let stdout = if collect_stdout {
            Some(collect(child.stdout.take().expect("piped stdout")))
        } else {
            None
        };
        let stderr = Some(collect(child.stderr.take().expect("piped stderr")));
        Running {
            child,
            stdout,
            stderr,
            started,
            parent_peak_kib: peak_rss_kib("self").unwrap_or(0),
        }
    }

    /// Spawns `cmd` with stdout collected and stderr going to `stderr` (not
    /// collected), e.g. a pseudo-terminal.
    pub fn start_with_stderr(cmd: &mut Command, stderr: Stdio) -> Running {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let started = Instant::now();
        let mut child = cmd.spawn().expect("the binary starts");
        let stdout = Some(collect(child.stdout.take().expect("piped stdout")));
        Running {
            child,
            stdout,
            stderr: None,
            started,
            parent_peak_kib: peak_rss_kib("self").unwrap_or(0),
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> libc::pid_t {
        self.child.id() as libc::pid_t
    }

    /// Takes the child's stdout (only when not collected).
    pub fn take_stdout(&mut self) -> std::process::ChildStdout {
        self.child.stdout.take().expect("stdout not collected")
    }

    /// Waits for the child, killing it if it runs longer than `timeout` in all.
    pub fn finish(mut self, timeout: Duration) -> Outcome {
        let pid = self.pid();
        // `exited` is set, under the lock, once the child has exited but before it
        // is reaped, so the watchdog can never signal a recycled pid.
        let state = Arc::new(Mutex::new((false, false, 0i64))); // (exited, timed_out, sampled peak)
        let watchdog = {
            let state = Arc::clone(&state);
            let deadline = self.started + timeout;
            std::thread::spawn(move || loop {
                std::thread::sleep(Duration::from_millis(2));
                let mut s = state.lock().unwrap();
                if s.0 {
                    return;
                }
                if let Some(kib) = peak_rss_kib(&pid.to_string()) {
                    s.2 = s.2.max(kib);
                }
                if Instant::now() >= deadline {
                    // SAFETY: plain syscall on a child that has not been reaped.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                    s.1 = true;
                    return;
                }
            })
        };
        loop {
            // SAFETY: zeroed siginfo is a valid out-parameter.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: `info` is a valid, writable siginfo_t; WNOWAIT leaves
            // the child to be reaped by wait4 below.
            let rc = unsafe {
                libc::waitid(
                    libc::P_PID,
                    pid as libc::id_t,
                    &mut info,
                    libc::WEXITED | libc::WNOWAIT,
                )
            };
            if rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break;
            }
        }
        state.lock().unwrap().0 = true;
        let mut status = 0;
        // SAFETY: zeroed rusage is a valid out-parameter.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `usage` are valid, writable out-parameters.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        assert_eq!(rc, pid, "wait4: {}", std::io::Error::last_os_error());
        let elapsed = self.started.elapsed();
        watchdog.join().unwrap();
        let (_, timed_out, sampled_peak_kib) = *state.lock().unwrap();
        // ru_maxrss is the child's own peak only if it exceeds what exec
        // folded in from this process.
        let max_rss_kib = if usage.ru_maxrss > self.parent_peak_kib {
            usage.ru_maxrss
        } else {
            sampled_peak_kib
        };
        let stdout = self
            .stdout
            .take()
            .map(|h| h.join().unwrap())
            .unwrap_or_default();
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap())
            .unwrap_or_default();
        Outcome {
            code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
            signal: libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status)),
            stdout,
            stderr,
            max_rss_kib,
            elapsed,
            timed_out,
        }
    }
}

/// Runs `cmd` to completion (no stdin) under a watchdog of `timeout`.
pub fn run(cmd: &mut Command, timeout: Duration) -> Outcome {
    Running::start(cmd, None).finish(timeout)
}
