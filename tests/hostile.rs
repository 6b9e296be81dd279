//! Hostile trees: every case the scanner may meet in a tree nobody checked.
//! Each runs the binary as a child under a watchdog (a hang fails the test),
//! or drives the library where a race has to be staged.
//!
//! The guarantees these tests pin down are listed in `docs/guarantees.md`.

use crate::child;
use crate::common;

use std::ffi::{CString, OsStr};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use child::{run, Outcome};
use promptinclude::model::Disposition;
use promptinclude::read::read_candidate;
use promptinclude::{Config, Scanner};
use serde_json::Value;

/// Runs `promptinclude scan ROOT ARGS...` and parses its one JSON line.
fn scan_json(root: &Path, args: &[&str], timeout: Duration) -> (Outcome, Value) {
    let out = run(
        Command::new(common::binary())
            .arg("scan")
            .arg(root)
            .args(args),
        timeout,
    );
    out.assert_code(0);
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", out.stdout_text()));
    (out, value)
}

/// The `path` of every entry of a scan's `files`.
fn paths(result: &Value) -> Vec<String> {
    result["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

fn skipped(result: &Value) -> i64 {
    result["skipped_count"].as_i64().unwrap()
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

#[test]
fn symlink_loops_and_a_symlink_to_the_file_system_root() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("ok.promptinclude.md"), "rule\n").unwrap();
    // A rule-file name that points at itself, and a two-link cycle.
    symlink("self.promptinclude.md", root.join("self.promptinclude.md")).unwrap();
    symlink("b.promptinclude.md", root.join("a.promptinclude.md")).unwrap();
    symlink("a.promptinclude.md", root.join("b.promptinclude.md")).unwrap();
    // Directory links: to `/`, to the root itself, to the parent; one named like a rule file.
    fs::create_dir(root.join("sub")).unwrap();
    symlink("/", root.join("sub/slash")).unwrap();
    symlink("/", root.join("slash.promptinclude.md")).unwrap();
    symlink("..", root.join("sub/up")).unwrap();
    symlink(root, root.join("sub/again")).unwrap();
    let (_, result) = scan_json(root, &["--max-depth", "50"], Duration::from_secs(60));
    assert_eq!(paths(&result), vec![s(&root.join("ok.promptinclude.md"))]);
    // The three looping links are candidates that cannot be read; the link
    // to `/` is a directory (never entered, never a candidate).
    assert_eq!(skipped(&result), 3);
    if let Some(oracle) = common::oracle() {
        let out = run(
            Command::new(oracle)
                .arg("--config")
                .arg(write_config(
                    root.parent().unwrap(),
                    "depth50.json",
                    r#"{"max_depth": 50}"#,
                ))
                .arg(root),
            Duration::from_secs(120),
        );
        out.assert_code(0);
        let want: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result, want, "differs from the reference");
    }
}

fn write_config(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    path
}

fn mkfifo(path: &Path) {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// Creates a character device like `/dev/null` (1, 3); false where not permitted.
fn mknod_null(path: &Path) -> bool {
    let c = CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: valid NUL-terminated path.
    unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) == 0 }
}

#[test]
fn fifo_socket_and_devices_named_like_rule_files_never_block() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("ok.promptinclude.md"), "rule\n").unwrap();
    // The reference blocks forever in open() on the fifo (nobody writes to it).
    mkfifo(&root.join("fifo.promptinclude.md"));
    let _socket =
        std::os::unix::net::UnixListener::bind(root.join("socket.promptinclude.md")).unwrap();
    // Devices that would block (a terminal) or never end (/dev/zero) if read.
    symlink("/dev/zero", root.join("zero.promptinclude.md")).unwrap();
    symlink("/dev/tty", root.join("tty.promptinclude.md")).unwrap();
    symlink(
        "fifo.promptinclude.md",
        root.join("to-fifo.promptinclude.md"),
    )
    .unwrap();
    let mut special = 5;
    if mknod_null(&root.join("chardev.promptinclude.md")) {
        special += 1;
    } else {
        eprintln!("note: mknod not permitted here; the device case uses symlinks only");
    }
    let (out, result) = scan_json(root, &[], Duration::from_secs(30));
    assert!(out.elapsed < Duration::from_secs(20), "{:?}", out.elapsed);
    assert_eq!(paths(&result), vec![s(&root.join("ok.promptinclude.md"))]);
    assert_eq!(skipped(&result), special);
}

/// Three rule files; returns the scanner and the root.
fn abc_tree(root: &Path) -> Scanner {
    for name in ["a", "b", "c"] {
        fs::create_dir_all(root.join(name)).unwrap();
        fs::write(
            root.join(name).join("x.promptinclude.md"),
            format!("rule {name}\n"),
        )
        .unwrap();
    }
    Scanner::new(Config::default()).unwrap()
}

/// Scans `root`, running `sabotage` on `b/x.promptinclude.md` just before it is read.
fn scan_sabotaged(
    scanner: &Scanner,
    root: &Path,
    sabotage: impl Fn(&Path),
) -> promptinclude::RootScan {
    let victim = root.join("b/x.promptinclude.md");
    scanner
        .scan_with_reader(root, |candidate| {
            if candidate.as_path() == victim {
                sabotage(&victim);
            }
            read_candidate(candidate)
        })
        .expect("default limits never raise")
}

fn assert_b_unreadable(scan: &promptinclude::RootScan, root: &Path) {
    let result = scan.result();
    let got: Vec<&str> = result.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        got,
        vec![
            s(&root.join("a/x.promptinclude.md")),
            s(&root.join("c/x.promptinclude.md"))
        ]
    );
    assert_eq!(result.skipped_count, 1);
    assert!(
        matches!(scan.allocation.dispositions[1], Disposition::Unreadable(_)),
        "{:?}",
        scan.allocation.dispositions
    );
}

#[test]
fn file_deleted_between_discovery_and_reading_counts_as_unreadable() {
    let dir = tempfile::tempdir().unwrap();
    let scanner = abc_tree(dir.path());
    let scan = scan_sabotaged(&scanner, dir.path(), |p| fs::remove_file(p).unwrap());
    assert_b_unreadable(&scan, dir.path());
}

#[test]
fn directory_replaced_by_a_file_between_discovery_and_reading() {
    let dir = tempfile::tempdir().unwrap();
    let scanner = abc_tree(dir.path());
    let scan = scan_sabotaged(&scanner, dir.path(), |p| {
        let parent = p.parent().unwrap();
        fs::remove_dir_all(parent).unwrap();
        fs::write(parent, "now a file\n").unwrap();
    });
    assert_b_unreadable(&scan, dir.path());
}

#[test]
fn file_replaced_by_a_directory_or_a_fifo_between_discovery_and_reading() {
    let dir = tempfile::tempdir().unwrap();
    let scanner = abc_tree(dir.path());
    let scan = scan_sabotaged(&scanner, dir.path(), |p| {
        fs::remove_file(p).unwrap();
        fs::create_dir(p).unwrap();
    });
    assert_b_unreadable(&scan, dir.path());

    let dir = tempfile::tempdir().unwrap();
    let scanner = abc_tree(dir.path());
    let scan = scan_sabotaged(&scanner, dir.path(), |p| {
        fs::remove_file(p).unwrap();
        mkfifo(p);
    });
    assert_b_unreadable(&scan, dir.path());
}

/// Builds a chain of `levels` directories named `d` under `root` with `mkdirat`
/// on directory handles (the path soon exceeds `PATH_MAX`), putting a rule file
/// in every directory whose level is in `rule_levels`. Returns the full paths
/// of the rule files.
fn deep_chain(root: &Path, levels: usize, rule_levels: &[usize]) -> Vec<String> {
    let c = CString::new(root.as_os_str().as_bytes()).unwrap();
    // SAFETY: plain syscalls on NUL-terminated names; every fd is closed.
    let mut fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY) };
    assert!(fd >= 0);
    let mut path = s(root);
    let mut rules = Vec::new();
    for level in 1..=levels {
        let d = c"d";
        // SAFETY: `fd` is an open directory and `d` a NUL-terminated name;
        // the old descriptor is closed once the new one is open.
        unsafe {
            assert_eq!(
                libc::mkdirat(fd, d.as_ptr(), 0o755),
                0,
                "mkdirat at {level}"
            );
            let next = libc::openat(fd, d.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY);
            assert!(next >= 0, "openat at {level}");
            libc::close(fd);
            fd = next;
        }
        path.push_str("/d");
        if rule_levels.contains(&level) {
            let name = c"r.promptinclude.md";
            let text = format!("rule at level {level}\n");
            // SAFETY: `fd` is an open directory, `name` NUL-terminated and
            // `text` valid for its length; the file is closed.
            unsafe {
                let f = libc::openat(fd, name.as_ptr(), libc::O_WRONLY | libc::O_CREAT, 0o644);
                assert!(f >= 0);
                assert_eq!(
                    libc::write(f, text.as_ptr().cast(), text.len()),
                    text.len() as isize
                );
                libc::close(f);
            }
            rules.push(format!("{path}/r.promptinclude.md"));
        }
    }
    // SAFETY: `fd` is the last directory opened, closed once.
    unsafe { libc::close(fd) };
    rules
}

fn assert_deep_scan(levels: usize, rule_levels: &[usize]) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("deep");
    fs::create_dir(&root).unwrap();
    let mut rules: Vec<(String, usize)> = deep_chain(&root, levels, rule_levels)
        .into_iter()
        .zip(rule_levels.iter().copied())
        .collect();
    // Deeper files sort first: "d/d/..." < "d/r.promptinclude.md".
    rules
        .sort_by(|a, b| promptinclude::discover::python_path_order(a.0.as_bytes(), b.0.as_bytes()));
    let (_, result) = scan_json(
        &root,
        &[
            "--max-depth",
            "5000",
            "--max-total-tokens",
            "1000000",
            "--max-file-tokens",
            "100",
        ],
        Duration::from_secs(300),
    );
    // Compare levels, not the (huge) paths, so a failure message stays readable.
    let root_len = s(&root).len();
    let level_of = |p: &str| p[root_len..].matches("/d").count();
    let got: Vec<usize> = paths(&result).iter().map(|p| level_of(p)).collect();
    let want: Vec<usize> = rules.iter().map(|r| r.1).collect();
    assert_eq!(got, want, "levels of the rule files found");
    assert!(paths(&result).iter().zip(&rules).all(|(p, r)| *p == r.0));
    assert_eq!(skipped(&result), 0);
    for (entry, (_, level)) in result["files"].as_array().unwrap().iter().zip(&rules) {
        assert_eq!(entry["content"], format!("rule at level {level}\n"));
        assert_eq!(entry["status"], "ok");
    }
}

/// Deeper than the reference can go (it dies of Python's recursion limit near
/// 1,000 levels), but every path still fits in `PATH_MAX`.
#[test]
fn tree_1500_levels_deep_is_walked_completely() {
    assert_deep_scan(1500, &[1, 999, 1000, 1500]);
}

/// 3,000 levels: paths reach 6,000+ bytes, past `PATH_MAX`; the walk and the
/// reads must go on from directory handles.
#[test]
fn tree_3000_levels_deep_past_path_max_is_walked_completely() {
    assert_deep_scan(3000, &[1, 2000, 2047, 2048, 3000]);
}

/// A root that is itself longer than `PATH_MAX` is empty, as for the
/// reference (`os.path.isdir` fails with `ENAMETOOLONG`); tests/path_max.rs
/// checks it against the real scanner.
#[test]
fn root_longer_than_path_max_is_empty_as_for_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let rules = deep_chain(dir.path(), 2100, &[2100]);
    let root = rules[0].strip_suffix("/r.promptinclude.md").unwrap();
    assert!(root.len() > 4096);
    // Exit 1: a root that is not a directory gets the empty record and a warning.
    let out = run(
        Command::new(common::binary()).arg("scan").arg(root),
        Duration::from_secs(60),
    );
    out.assert_code(1);
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(paths(&result), Vec::<String>::new());
    assert_eq!(skipped(&result), 0);
}

#[test]
fn two_hundred_thousand_entries_in_one_directory() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("wide");
    fs::create_dir(&root).unwrap();
    let (entries, rules) = (200_000, 20_000);
    for i in 0..entries {
        let path = if i % (entries / rules) == 0 {
            root.join(format!("f{i:06}.promptinclude.md"))
        } else {
            root.join(format!("f{i:06}.txt"))
        };
        fs::File::create(path).unwrap();
    }
    fs::write(root.join("a.promptinclude.md"), "first\n").unwrap();
    let (_, result) = scan_json(&root, &[], Duration::from_secs(300));
    // Every candidate but `a` is blank: listed nowhere, counted as skipped.
    assert_eq!(paths(&result), vec![s(&root.join("a.promptinclude.md"))]);
    assert_eq!(skipped(&result), rules as i64);
}

#[test]
fn names_with_newlines_backslashes_invalid_utf8_and_255_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("names");
    fs::create_dir(&root).unwrap();
    let suffix = ".promptinclude.md";
    let long_ascii = format!("{}{suffix}", "a".repeat(255 - suffix.len()));
    let long_cjk = format!("a{}{suffix}", "日".repeat((255 - suffix.len()) / 3));
    assert_eq!((long_ascii.len(), long_cjk.len()), (255, 255));
    let names: Vec<Vec<u8>> = vec![
        b"new\nline.promptinclude.md".to_vec(),
        b"back\\slash.promptinclude.md".to_vec(),
        b"bad\xff\xfe.promptinclude.md".to_vec(),
        b"cr\rtab\t.promptinclude.md".to_vec(),
        b"{{path}}{{suffix}}.promptinclude.md".to_vec(),
        long_ascii.into_bytes(),
        long_cjk.into_bytes(),
    ];
    let dirs: Vec<&[u8]> = vec![b".", b"dir\nwith newline", b"dir\xc3(bad", b"back\\dir"];
    let mut want: Vec<(Vec<u8>, String)> = Vec::new();
    for d in &dirs {
        let parent = root.join(OsStr::from_bytes(d));
        fs::create_dir_all(&parent).unwrap();
        for name in &names {
            let path = parent.join(OsStr::from_bytes(name));
            let text = format!("rule {}\n", want.len());
            fs::write(&path, &text).unwrap();
            let full = if *d == b"." {
                root.join(OsStr::from_bytes(name))
            } else {
                path
            };
            want.push((full.as_os_str().as_bytes().to_vec(), text));
        }
    }
    want.sort_by(|a, b| promptinclude::discover::python_path_order(&a.0, &b.0));
    let (out, result) = scan_json(
        &root,
        &["--max-file-count", "1000", "--max-total-tokens", "1000000"],
        Duration::from_secs(60),
    );
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 1);
    let want_paths: Vec<String> = want
        .iter()
        .map(|(p, _)| String::from_utf8_lossy(p).into_owned())
        .collect();
    assert_eq!(paths(&result), want_paths);
    for (entry, (_, text)) in result["files"].as_array().unwrap().iter().zip(&want) {
        assert_eq!(entry["content"].as_str(), Some(text.as_str()));
    }
    // The rendered section lists them too, and its placeholders are not confused.
    let section = run(
        Command::new(common::binary())
            .args([
                "render",
                "--max-file-count",
                "1000",
                "--max-total-tokens",
                "1000000",
            ])
            .arg(&root),
        Duration::from_secs(60),
    );
    section.assert_code(0);
    // (A `{{suffix}}` inside a path is replaced when rendering, as in the host.)
    for p in want_paths.iter().filter(|p| !p.contains("{{")) {
        assert!(section.stdout_text().contains(p.as_str()), "{p:?} missing");
    }
}
