//! PATH_MAX and recursion depth, against the reference itself.
//!
//! Paths of 4096 bytes or more (Linux `PATH_MAX`, counting the NUL) at depth
//! 1–2 (names of up to 255 bytes reach it at shallow depth): `promptinclude
//! scan` must print byte for byte what the project's oracle (`tests/oracle`)
//! prints. The recursion level is checked against the real scanner
//! (`../shared/reference/agent-zero`, run with the oracle's Python) where it
//! is checked out. Where the oracle cannot run, the tests print SKIPPED, and
//! fail if `PROMPTINCLUDE_REQUIRE_ORACLE=1`.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;

use rustix::fs::{Mode, OFlags, CWD};

use crate::common;

const RULE: &str = ".promptinclude.md";

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn skip(what: &str) {
    eprintln!("SKIPPED {what}: the reference oracle cannot run here");
    assert!(
        std::env::var("PROMPTINCLUDE_REQUIRE_ORACLE").as_deref() != Ok("1"),
        "PROMPTINCLUDE_REQUIRE_ORACLE=1 but the oracle cannot run"
    );
}

/// The real scanner's source, where the reference is checked out beside
/// the repository.
fn reference_scanner() -> PathBuf {
    manifest().join("../shared/reference/agent-zero/plugins/_promptinclude/helpers/scanner.py")
}

fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_promptinclude"))
}

fn open_dir(path: &[u8]) -> OwnedFd {
    // Opened one component at a time: the paths here exceed PATH_MAX.
    let mut fd =
        rustix::fs::openat(CWD, "/", OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    for part in path.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
        fd = rustix::fs::openat(&fd, part, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
            .unwrap();
    }
    fd
}

fn mkdir(parent: &str, name: &str) -> String {
    rustix::fs::mkdirat(
        open_dir(parent.as_bytes()),
        name,
        Mode::from_raw_mode(0o755),
    )
    .unwrap();
    format!("{parent}/{name}")
}

fn write(parent: &str, name: &str, text: &str) {
    let fd = rustix::fs::openat(
        open_dir(parent.as_bytes()),
        name,
        OFlags::WRONLY | OFlags::CREATE,
        Mode::from_raw_mode(0o644),
    )
    .unwrap();
    rustix::io::write(&fd, text.as_bytes()).unwrap();
}

fn symlink(parent: &str, name: &str, target: &str) {
    rustix::fs::symlinkat(target, open_dir(parent.as_bytes()), name).unwrap();
}

/// Directories below `base` so that the result is exactly `len` bytes long.
fn chain_to(base: &str, len: usize) -> String {
    let mut path = base.to_string();
    while path.len() < len {
        let room = len - path.len() - 1;
        let n = if room > 250 { 200 } else { room };
        path = mkdir(&path, &"p".repeat(n));
    }
    assert_eq!(path.len(), len);
    path
}

/// A name `prefix` + filler + `suffix` making `parent/name` exactly `len` bytes.
fn name_for(parent: &str, len: usize, prefix: &str, suffix: &str) -> String {
    let filler = len - parent.len() - 1 - prefix.len() - suffix.len();
    format!("{prefix}{}{suffix}", "x".repeat(filler))
}

fn ours(args: &[&str], root: &str) -> Vec<u8> {
    let out = Command::new(binary())
        .args(args)
        .arg(root)
        .output()
        .unwrap();
    out.stdout
}

fn theirs(oracle: &Path, args: &[&str], root: &str) -> Vec<u8> {
    let out = Command::new(oracle).args(args).arg(root).output().unwrap();
    assert!(
        out.status.success(),
        "oracle failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn assert_same_as_oracle(oracle: &Path, root: &str) {
    for args in [&["scan"][..], &["render"][..]] {
        let oracle_args: &[&str] = if args[0] == "render" {
            &["--render"]
        } else {
            &[]
        };
        let a = match args[0] {
            "scan" => common::as_oracle_prints(&ours(args, root)),
            _ => ours(args, root),
        };
        let b = theirs(oracle, oracle_args, root);
        assert!(
            a == b,
            "{} differs from the oracle for {} bytes root:\n ours: {}\n oracle: {}",
            args[0],
            root.len(),
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
    }
}

/// The tree of the PATH_MAX facts: a root of 3900 bytes holding, at depth
/// 1 and 2, files, directories and symlinks whose paths are 4094–4096 bytes.
fn path_max_tree(base: &Path) -> String {
    let root = chain_to(base.to_str().unwrap(), 3900);
    for len in [4095, 4096] {
        // A rule file whose full path is `len` bytes.
        write(
            &root,
            &name_for(&root, len, &format!("f{len}"), RULE),
            "file\n",
        );
        // A symlink to a directory, named like a rule file.
        symlink(&root, &name_for(&root, len, &format!("s{len}"), RULE), "k");
    }
    // Directories whose own path is 4094–4096 bytes, each with a rule file.
    for len in [4094, 4095, 4096] {
        let dir = mkdir(&root, &name_for(&root, len, &format!("d{len}"), ""));
        write(&dir, &format!("a{RULE}"), "in a long directory\n");
    }
    // Depth 2.
    let k = mkdir(&root, "k");
    write(&k, &format!("k{RULE}"), "short\n");
    for len in [4095, 4096] {
        let dir = mkdir(&k, &name_for(&k, len, &format!("e{len}"), ""));
        write(&dir, &format!("b{RULE}"), "deeper\n");
    }
    root
}

#[test]
fn too_long_files_directories_and_symlinks_match_the_oracle() {
    let Some(oracle) = common::oracle() else {
        return skip("too_long_files_directories_and_symlinks_match_the_oracle");
    };
    let dir = tempfile::tempdir().unwrap();
    let root = path_max_tree(dir.path());
    assert_same_as_oracle(&oracle, &root);
    // What the reference does there, spelled out: the readable 4095-byte
    // file and k's rule file are included; the 4096-byte file, the 4096-byte
    // symlink (a non-directory to os.walk), and the files inside the 4094-
    // and 4095-byte directories and k/e4095 are candidates it cannot open.
    let result: serde_json::Value = serde_json::from_slice(&ours(&["scan"], &root)).unwrap();
    assert_eq!(result["files"].as_array().unwrap().len(), 2);
    assert_eq!(result["skipped_count"], 5);
}

#[test]
fn too_long_root_matches_the_oracle() {
    let Some(oracle) = common::oracle() else {
        return skip("too_long_root_matches_the_oracle");
    };
    let dir = tempfile::tempdir().unwrap();
    let base = chain_to(dir.path().to_str().unwrap(), 3900);
    for len in [4094, 4095, 4096, 4097] {
        let root = mkdir(&base, &name_for(&base, len, &format!("r{len}"), ""));
        write(&root, &format!("x{RULE}"), "in the root\n");
        assert_same_as_oracle(&oracle, &root);
    }
}

/// Runs the real scanner on `root`; `None` when it raises `RecursionError`.
fn real_scan(oracle: &Path, root: &str) -> Option<serde_json::Value> {
    let script = r#"
import sys, json, importlib.util
spec = importlib.util.spec_from_file_location("scanner", sys.argv[1])
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
try:
    r = m.scan_promptinclude_files(sys.argv[2], max_depth=5000, gitignore="")
except RecursionError:
    print("RecursionError"); sys.exit(0)
print(json.dumps(r))
"#;
    let reference = manifest().join("../shared/reference/agent-zero");
    // The oracle's Python environment has the reference's pinned
    // dependencies and the cl100k_base vocabulary offline.
    let out = Command::new(oracle)
        .env("PYTHONPATH", &reference)
        .arg("--python")
        .arg("-c")
        .arg(script)
        .arg(reference.join("plugins/_promptinclude/helpers/scanner.py"))
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    (text.trim() != "RecursionError").then(|| serde_json::from_str(&text).unwrap())
}

/// A root with a directory past PATH_MAX (with a rule file) at depth 17 and
/// a chain of 995 directories, whose last one holds `bottom`.
fn recursion_tree(base: &Path, bottom: impl Fn(&str)) -> String {
    let root = mkdir(base.to_str().unwrap(), "root");
    let mut long = root.clone();
    while long.len() < 4096 {
        long = mkdir(&long, &"n".repeat(250));
    }
    write(&long, &format!("long{RULE}"), "past PATH_MAX\n");
    let mut deep = mkdir(&root, "a");
    for _ in 1..995 {
        deep = mkdir(&deep, "a");
    }
    bottom(&deep);
    root
}

#[test]
fn recursion_level_matches_the_real_scanner() {
    if !reference_scanner().exists() {
        // Only where the reference is checked out (CI) can it be run; a
        // clone on its own says so and goes on, even under
        // PROMPTINCLUDE_REQUIRE_ORACLE (which is about our own oracle).
        eprintln!(
            "SKIPPED recursion_level_matches_the_real_scanner: no reference at {}",
            reference_scanner().display()
        );
        return;
    }
    let Some(oracle) = common::oracle() else {
        return skip("recursion_level_matches_the_real_scanner");
    };
    type Bottom = Box<dyn Fn(&str)>;
    let cases: [(&str, bool, Bottom); 4] = [
        (
            "a file at depth 996",
            false,
            Box::new(|d| write(d, &format!("r{RULE}"), "deep\n")),
        ),
        (
            "a link to a directory at depth 996",
            true,
            Box::new(|d| symlink(d, "s", "..")),
        ),
        (
            "a broken link at depth 996",
            true,
            Box::new(|d| symlink(d, "s", "nowhere")),
        ),
        (
            "a directory at depth 996",
            true,
            Box::new(|d| {
                mkdir(d, "s");
            }),
        ),
    ];
    for (what, raises, bottom) in cases {
        let dir = tempfile::tempdir().unwrap();
        let root = recursion_tree(dir.path(), bottom);
        let reference = real_scan(&oracle, &root);
        assert_eq!(
            reference.is_none(),
            raises,
            "does the reference raise with {what}?"
        );
        let out = ours(&["scan", "--max-depth", "5000"], &root);
        let ours: serde_json::Value = serde_json::from_slice(&out).unwrap();
        match reference {
            // Where it returns, we return the same.
            Some(reference) => {
                assert_eq!(ours["files"], reference["files"], "{what}");
                assert_eq!(ours["skipped_count"], reference["skipped_count"], "{what}");
            }
            // Where it raises, we finish the walk past PATH_MAX and read there.
            None => {
                let files = ours["files"].as_array().unwrap();
                assert!(
                    files.iter().any(|f| f["content"] == "past PATH_MAX\n"),
                    "{what}: {ours}"
                );
            }
        }
    }
}

#[test]
fn unreadable_dir_is_an_audit_warning() {
    let dir = tempfile::tempdir().unwrap();
    // A directory past PATH_MAX cannot be listed, for the reference or for
    // anyone handing whole paths to the kernel; root may read any directory,
    // so this is the unreadable directory every user can make.
    let root = chain_to(dir.path().to_str().unwrap(), 3900);
    write(&root, &format!("ok{RULE}"), "fine\n");
    let long = mkdir(&root, &"n".repeat(250));
    write(&long, &format!("hidden{RULE}"), "never seen\n");
    let out = Command::new(binary())
        .args(["audit", "--json"])
        .arg(&root)
        .output()
        .unwrap();
    let first = out.stdout.split(|&b| b == b'\n').next().unwrap();
    let record: serde_json::Value = serde_json::from_slice(first).unwrap();
    let warnings = record["warnings"].as_array().unwrap();
    let unreadable: Vec<_> = warnings
        .iter()
        .filter(|w| w["kind"] == "unreadable_dir")
        .collect();
    assert_eq!(unreadable.len(), 1, "{warnings:?}");
    assert_eq!(unreadable[0]["path"].as_str().unwrap(), long);
    assert!(unreadable[0]["message"]
        .as_str()
        .unwrap()
        .contains("File name too long"));
}
