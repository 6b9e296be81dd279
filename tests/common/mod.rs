//! Shared helpers for integration tests: a seeded random generator, random
//! rule-file trees and configurations, and finding the binary and the oracle.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../benches/support/workload.rs"]
mod workload;
pub use workload::Rng;

/// Runs the promptinclude binary with `args` in `cwd`.
pub fn promptinclude(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(binary())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// The promptinclude binary under test.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_promptinclude"))
}

/// The reference oracle, if it is there (`PROMPTINCLUDE_ORACLE` or `../shared/oracle/oracle`).
pub fn oracle() -> Option<PathBuf> {
    let path = std::env::var_os("PROMPTINCLUDE_ORACLE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/oracle/oracle"));
    if !path.exists() {
        return None;
    }
    // The first call builds its environment; a failure means it cannot run here.
    let ok = Command::new(&path)
        .arg("/nonexistent-promptinclude-probe")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    ok.then_some(path)
}

const WORDS: &[&str] = &[
    "rule",
    "always",
    "never",
    "use",
    "tabs",
    "the",
    "project",
    "fn",
    "main()",
    "{",
    "}",
    "=>",
    "12345",
    "3.14159",
    "'s",
    "'ll",
    "don't",
    "日本語",
    "の",
    "ルール",
    "中文",
    "😀",
    "👍🏽",
    "é",
    "ñ",
    "Ω",
    "<|endoftext|>",
    "{{content}}",
    "{{path}}",
    "{{ include \"x.md\" }}",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\r",
    "\n\n",
    "\u{3000}",
    "\u{a0}",
    "\u{1c}",
    "\u{2028}",
    "!!!",
    "```",
    "#",
    "-",
    "*",
    "http://example.com/a?b=c",
    "snake_case_name",
    "CamelCaseWord",
    "0x1F",
    "αβγ",
    "\u{feff}",
];

/// Random rule-file text: words, whitespace oddities, sometimes long.
pub fn random_text(rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    match rng.below(20) {
        0 => return Vec::new(),
        1 => {
            return rng
                .pick(&[
                    " \n\t",
                    "\u{1c}\u{1d}\u{1e}\u{1f}",
                    "\u{3000}\n",
                    "\r\n\r\n",
                    "\u{85}",
                ])
                .as_bytes()
                .to_vec()
        }
        2 => {
            // one long word, no spaces
            let unit = *rng.pick(&["a", "ab1", "語", "_", "9"]);
            for _ in 0..(200 + rng.below(3000)) {
                out.extend_from_slice(unit.as_bytes());
            }
            return out;
        }
        _ => {}
    }
    if rng.chance(10) {
        out.extend_from_slice("\u{feff}".as_bytes());
    }
    let words = match rng.below(10) {
        0..=5 => 1 + rng.below(60),
        6..=8 => 100 + rng.below(900),
        _ => 2000 + rng.below(4000),
    };
    for _ in 0..words {
        out.extend_from_slice(rng.pick(WORDS).as_bytes());
        if rng.chance(60) {
            out.push(b' ');
        }
        if rng.chance(2) {
            // invalid UTF-8 bytes
            let bad: &[&[u8]] = &[b"\xff", b"\xe2\x82", b"\xc3", b"\xed\xa0\x80", b"\x80\x80"];
            out.extend_from_slice(bad[rng.below(bad.len())]);
        }
    }
    out
}

const DIR_NAMES: &[&str] = &[
    "src",
    "docs",
    "a",
    "a-b",
    "a.b",
    "b",
    "node_modules",
    ".git",
    "build",
    "dist",
    "venv",
    "__pycache__",
    "x.egg-info",
    "lib",
    "deep",
    "Ünïcode",
    "日本",
    "sp ace",
    "a!b",
    "[x]",
    ".cache",
    "keep",
    "rules",
];
const FILE_NAMES: &[&str] = &[
    "a.promptinclude.md",
    "b.promptinclude.md",
    "z.promptinclude.md",
    ".promptinclude.md",
    "README.promptinclude.md",
    "rule.md",
    "notes.txt",
    "A.PROMPTINCLUDE.md",
    "日本.promptinclude.md",
    "x y.promptinclude.md",
    "a-b.promptinclude.md",
    "a.b.promptinclude.md",
    "a.promptinclude.md.bak",
    "[1].promptinclude.md",
    "new\nline.promptinclude.md",
    "back\\slash.promptinclude.md",
];

/// Builds a random tree under `root` (which must not exist yet).
pub fn random_tree(rng: &mut Rng, root: &Path) {
    fs::create_dir_all(root).unwrap();
    let mut dirs = vec![root.to_path_buf()];
    let n_dirs = 1 + rng.below(14);
    for _ in 0..n_dirs {
        let parent = rng.pick(&dirs).clone();
        let dir = parent.join(rng.pick(DIR_NAMES));
        if fs::create_dir_all(&dir).is_ok() {
            dirs.push(dir);
        }
    }
    if rng.chance(30) {
        // a chain deeper than most max_depth values
        let mut dir = root.join("deep");
        for i in 0..(4 + rng.below(10)) {
            dir = dir.join(format!("d{i}"));
        }
        fs::create_dir_all(&dir).unwrap();
        dirs.push(dir);
    }
    let n_files = 1 + rng.below(25);
    for _ in 0..n_files {
        let dir = rng.pick(&dirs).clone();
        let path = dir.join(rng.pick(FILE_NAMES));
        if path.is_dir() {
            continue;
        }
        let _ = fs::write(&path, random_text(rng));
    }
    // symlinks: to files, to directories, to nowhere, loops
    for _ in 0..rng.below(4) {
        let dir = rng.pick(&dirs).clone();
        let name = format!("link{}.promptinclude.md", rng.below(5));
        let link = dir.join(name);
        if link.exists() || link.symlink_metadata().is_ok() {
            continue;
        }
        let target: PathBuf = match rng.below(5) {
            0 => PathBuf::from("nowhere.promptinclude.md"),
            1 => link.clone(),
            2 => rng.pick(&dirs).clone(),
            _ => {
                let t = rng.pick(&dirs).join("target.promptinclude.md");
                let _ = fs::write(&t, random_text(rng));
                t
            }
        };
        let _ = symlink(&target, &link);
    }
    if rng.chance(20) {
        let dir = rng.pick(&dirs).clone();
        let _ = symlink(root, dir.join("uplink"));
    }
}

/// A random configuration as JSON (keys the oracle merges over its defaults).
pub fn random_config(rng: &mut Rng, i: usize) -> serde_json::Value {
    let mut cfg = serde_json::Map::new();
    // Config 0 is always the defaults.
    if i == 0 {
        return serde_json::Value::Object(cfg);
    }
    // Configs 1 and 2 always make the rare statuses likely: a budget so tight
    // that a file after the first gets the `skipped` status, and one file at most.
    if i == 1 {
        cfg.insert("max_total_tokens".into(), (70 + rng.below(60)).into());
        cfg.insert("max_file_tokens".into(), 40.into());
    }
    if i == 2 {
        cfg.insert("max_file_count".into(), 1.into());
    }
    if rng.chance(30) {
        cfg.insert(
            "name_pattern".into(),
            (*rng.pick(&[
                "*.md",
                "*rule*",
                "[a-c]*.promptinclude.md",
                "?*.promptinclude.md",
                "*.PROMPTINCLUDE.md",
                "*.promptinclude.md*",
                "*[!z].promptinclude.md",
            ]))
            .into(),
        );
    }
    if rng.chance(50) {
        cfg.insert(
            "max_depth".into(),
            (*rng.pick(&[1, 2, 3, 5, 12, 50])).into(),
        );
    }
    if rng.chance(60) {
        cfg.insert(
            "max_file_tokens".into(),
            (*rng.pick(&[0, 1, 10, 60, 100, 500, 2000, 20000])).into(),
        );
    }
    if rng.chance(50) {
        cfg.insert(
            "max_file_count".into(),
            (*rng.pick(&[0, 1, 2, 3, 50, 200])).into(),
        );
    }
    if rng.chance(60) {
        cfg.insert(
            "max_total_tokens".into(),
            (*rng.pick(&[0, 20, 60, 120, 300, 500, 1500, 8000, 50000])).into(),
        );
    }
    if rng.chance(50) {
        let lines = [
            "venv/**",
            "**/node_modules/**",
            "**/.git/**",
            "build/",
            "!build/",
            "*.md",
            "!a.promptinclude.md",
            "a-b",
            "a/",
            "/src",
            "docs/**",
            "!docs/keep*",
            "**/deep/**/d3",
            "[ab]*",
            "# comment",
            "",
            "  spaced  ",
            "*[!x]",
            "!/",
            "**/",
            "rules/*.md",
            "\\#x",
            "日本/",
            "a[",
            "**/*.egg-info/**",
        ];
        let n = rng.below(6);
        let text: Vec<&str> = (0..n).map(|_| *rng.pick(&lines)).collect();
        cfg.insert(
            "gitignore".into(),
            text.join(if rng.chance(20) { "\r\n" } else { "\n" }).into(),
        );
    }
    serde_json::Value::Object(cfg)
}
