//! `render --watch --out-dir` and `bundle --watch`: after each change under
//! the roots (a rule file edited, added, removed; a project configuration
//! file written) one update line on stderr, and then the output is byte for
//! byte what a fresh run writes; SIGTERM ends the command with status 0 and
//! no temporary left. Every wait is bounded; nothing is asserted by sleeping.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one update may take on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(20);

/// The project configuration file of a root.
const PROJECT: &str = ".a0proj/plugins/_promptinclude/config.json";

/// A running `--watch` command and its stderr, line by line.
struct Watching {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Watching {
    /// Starts `promptinclude ARGS` in `cwd` and waits for its first output.
    fn start(args: &[&str], cwd: &Path) -> Watching {
        let mut child = common::command(common::binary())
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { return };
                if sender.send(line).is_err() {
                    return;
                }
            }
        });
        let mut watching = Watching {
            child,
            lines,
            seen: Vec::new(),
        };
        watching.line_with("watching for changes");
        watching
    }

    /// Waits for the next stderr line holding `text`; returns it.
    fn line_with(&mut self, text: &str) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(text) {
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no line with {text:?} within {PATIENCE:?}; stderr so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Sends SIGTERM and waits for the exit; its code.
    fn terminate(mut self) -> Option<i32> {
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: `kill` only sends a signal to our own child, which has not
        // been waited for (so the pid is still its own).
        assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "no exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir`, by path relative to it, with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).unwrap().to_path_buf();
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Asserts that `dir` holds exactly the files `fresh` holds, byte for byte.
fn assert_same_files(dir: &Path, fresh: &Path, after: &str) {
    let (watched, fresh) = (files(dir), files(fresh));
    assert_eq!(
        watched.keys().collect::<Vec<_>>(),
        fresh.keys().collect::<Vec<_>>(),
        "after {after}: the files differ"
    );
    for (name, bytes) in &fresh {
        assert!(
            watched[name] == *bytes,
            "after {after}: {} differs:\n{}\n--- fresh:\n{}",
            name.display(),
            String::from_utf8_lossy(&watched[name]),
            String::from_utf8_lossy(bytes)
        );
    }
}

/// Replaces `path` (in a root) by `text` in one step: written next to the
/// work directory's roots, then renamed into place, so the command sees
/// the whole change in one update.
fn put(work: &Path, path: &Path, text: &str) {
    let staged = work.join("staged");
    fs::write(&staged, text).unwrap();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::rename(&staged, path).unwrap();
}

/// A work directory with two roots, `r0` and `r1`, each with rule files.
fn work() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..2 {
        let root = dir.path().join(format!("r{i}"));
        fs::create_dir_all(root.join("docs")).unwrap();
        fs::write(
            root.join("a.promptinclude.md"),
            format!("root {i}: use tabs\r\n"),
        )
        .unwrap();
        fs::write(
            root.join("docs/b.promptinclude.md"),
            "words and more words ".repeat(30),
        )
        .unwrap();
        fs::write(root.join("z.promptinclude.md"), "last\n").unwrap();
    }
    dir
}

/// A change under the roots, and what it is.
type Change = (&'static str, Box<dyn Fn()>);

/// The changes each test makes, in turn.
fn changes(work: &Path) -> Vec<Change> {
    let (r0, r1) = (work.join("r0"), work.join("r1"));
    let w = work.to_path_buf();
    vec![
        ("an edit", {
            let (w, r0) = (w.clone(), r0.clone());
            Box::new(move || put(&w, &r0.join("a.promptinclude.md"), "root 0: use spaces\n"))
        }),
        ("a new rule file", {
            let (w, r1) = (w.clone(), r1.clone());
            Box::new(move || {
                put(
                    &w,
                    &r1.join("docs/new.promptinclude.md"),
                    "Brand new rule.\n",
                )
            })
        }),
        ("a removal", {
            let r0 = r0.clone();
            Box::new(move || fs::remove_file(r0.join("z.promptinclude.md")).unwrap())
        }),
        ("a project configuration", {
            let (w, r1) = (w.clone(), r1.clone());
            Box::new(move || put(&w, &r1.join(PROJECT), r#"{"max_file_count": 1}"#))
        }),
        ("an edit of the project configuration", {
            let (w, r1) = (w.clone(), r1.clone());
            Box::new(move || put(&w, &r1.join(PROJECT), r#"{"max_file_count": 2}"#))
        }),
    ]
}

/// No temporary of ours (`.promptinclude-…`, see the artifact writers) is
/// left in `dir` or below it.
fn assert_no_temporaries(dir: &Path) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(
            !name.starts_with(".promptinclude") && !name.starts_with(".tmp"),
            "a temporary is left: {}",
            entry.path().display()
        );
        if entry.file_type().unwrap().is_dir() {
            assert_no_temporaries(&entry.path());
        }
    }
}

#[test]
fn render_watch_keeps_the_out_dir_equal_to_a_fresh_render() {
    let dir = work();
    let work = dir.path();
    let roots = ["r0", "r1"];
    let mut args = vec!["render", "--watch", "--debounce", "50", "--out-dir", "out"];
    args.extend(roots);
    let mut watching = Watching::start(&args, work);
    let fresh = |n: usize| {
        let out = format!("fresh{n}");
        let mut args = vec!["render", "--out-dir", &out];
        args.extend(roots);
        let o = common::promptinclude(&args, work);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        work.join(out)
    };
    assert_same_files(&work.join("out"), &fresh(0), "the start");
    for (n, (what, change)) in changes(work).iter().enumerate() {
        change();
        let line = watching.line_with("updated");
        assert!(line.contains("1 of 2 roots changed"), "{line}");
        assert_same_files(&work.join("out"), &fresh(n + 1), what);
    }
    assert_eq!(watching.terminate(), Some(0));
    assert_no_temporaries(work);
}

#[test]
fn bundle_watch_keeps_the_bundle_equal_to_a_fresh_bundle() {
    let dir = work();
    let work = dir.path();
    let roots = ["r0", "r1"];
    let mut args = vec!["bundle", "--watch", "--debounce", "50", "--out", "bundle"];
    args.extend(roots);
    let mut watching = Watching::start(&args, work);
    let fresh = |n: usize| {
        let out = format!("fresh{n}");
        let mut args = vec!["bundle", "--out", &out];
        args.extend(roots);
        let o = common::promptinclude(&args, work);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        work.join(out)
    };
    assert_same_files(&work.join("bundle"), &fresh(0), "the start");
    for (n, (what, change)) in changes(work).iter().enumerate() {
        change();
        watching.line_with("updated");
        assert_same_files(&work.join("bundle"), &fresh(n + 1), what);
        let verify = common::promptinclude(&["verify", "bundle"], work);
        assert_eq!(verify.status.code(), Some(0), "after {what}: {verify:?}");
    }
    assert_eq!(watching.terminate(), Some(0));
    assert_no_temporaries(work);
}

#[test]
fn watch_needs_an_out_dir_and_no_rev() {
    let dir = work();
    let o = common::promptinclude(&["render", "--watch", "r0"], dir.path());
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("--watch needs --out-dir"), "{stderr}");
    let o = common::promptinclude(
        &["render", "--watch", "--out-dir", "o", "--rev", "HEAD", "r0"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("--rev"), "{stderr}");
    let o = common::promptinclude(&["render", "--debounce", "5", "r0"], dir.path());
    assert_eq!(o.status.code(), Some(2), "--debounce needs --watch: {o:?}");
}

/// A change no notification covers (the target, outside the root, of a
/// linked rule file) still reaches the out dir: the watch loop scans again
/// every few seconds, and the index reads that file on every scan.
#[test]
fn render_watch_sees_a_change_behind_a_link() {
    let dir = work();
    let work = dir.path();
    fs::write(work.join("outside.md"), "before\n").unwrap();
    std::os::unix::fs::symlink(
        work.join("outside.md"),
        work.join("r0/linked.promptinclude.md"),
    )
    .unwrap();
    let args = [
        "render",
        "--watch",
        "--debounce",
        "50",
        "--out-dir",
        "out",
        "r0",
    ];
    let mut watching = Watching::start(&args, work);
    // Written in place: the only event is in the work directory, unwatched.
    fs::write(work.join("outside.md"), "after\n").unwrap();
    watching.line_with("updated");
    let o = common::promptinclude(&["render", "--out-dir", "fresh", "r0"], work);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_same_files(
        &work.join("out"),
        &work.join("fresh"),
        "a change behind a link",
    );
    assert!(fs::read_dir(work.join("out"))
        .unwrap()
        .any(|e| fs::read_to_string(e.unwrap().path()).is_ok_and(|t| t.contains("after"))));
    assert_eq!(watching.terminate(), Some(0));
}
