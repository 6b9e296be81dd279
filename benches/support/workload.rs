//! Deterministic benchmark workloads (fixed seeds, no network), shared by
//! the criterion benches and `examples/gen_workload.rs`, which the
//! side-by-side script `scripts/bench-vs-reference` calls.
//!
//! * W1 — one monorepo: ≥ 150k files in ≥ 15k directories, some deeper than
//!   10 levels, big ignored directories (node_modules, .git, build, dist,
//!   venv, __pycache__), ~30 rule files.
//! * W2 — many repositories: 200 roots of ~2k files each.
//! * W3 — big rule files: 1–2 MB of mixed prose, code, CJK and emoji.
//! * W4 — pathological text: 50–100 KB runs of one character class.
//! * W5 — every agent's rules: 7 repositories of 300 to 4k files, each with
//!   `AGENTS.md`, `CLAUDE.md`, `GEMINI.md`, `.claude/rules`, Cursor and
//!   Copilot rules and `*.promptinclude.md` files at the root and nested
//!   (`audit --agents` against plain `audit`).
#![allow(dead_code)]

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// xorshift64*: small, seeded, reproducible. The one generator of the
/// benches and the tests (tests/common re-exports it).
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// True with the given percentage.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const DIRS: &[&str] = &[
    "src",
    "lib",
    "components",
    "utils",
    "tests",
    "internal",
    "api",
    "core",
    "models",
    "views",
    "handlers",
    "services",
    "config",
    "scripts",
    "docs",
    "assets",
    "styles",
    "hooks",
    "store",
    "common",
    "shared",
    "pkg",
    "cmd",
    "server",
    "client",
    "migrations",
    "fixtures",
    "i18n",
];
const FILES: &[&str] = &[
    "index.ts",
    "index.js",
    "main.rs",
    "mod.rs",
    "lib.rs",
    "README.md",
    "__init__.py",
    "app.py",
    "utils.py",
    "test_app.py",
    "Button.tsx",
    "styles.css",
    "package.json",
    "Cargo.toml",
    "handler.go",
    "main.go",
    "schema.sql",
    "config.yaml",
    "Makefile",
    ".gitignore",
    "notes.md",
];

const RULE_TEXT: &str =
    "# Team rules\n- Prefer small pure functions; document every public item.\n\
- Run the formatter and the linter before committing.\n- Never log secrets or tokens.\n";

fn write(path: &Path, bytes: &[u8]) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(path, bytes).unwrap();
}

/// Fills `dir` with a random source tree of about `files` files spread over
/// about `files / 10` directories, growing some chains past depth 10.
fn source_tree(rng: &mut Rng, dir: &Path, files: usize) -> Vec<PathBuf> {
    let mut dirs = vec![dir.to_path_buf()];
    let n_dirs = (files / 10).max(1);
    while dirs.len() < n_dirs {
        // Bias to recent (deeper) directories so that some chains get deep.
        let i = if rng.below(3) == 0 {
            dirs.len() - 1 - rng.below(dirs.len().min(4))
        } else {
            rng.below(dirs.len())
        };
        let child = dirs[i].join(format!("{}{}", rng.pick(DIRS), rng.below(4)));
        fs::create_dir_all(&child).unwrap();
        dirs.push(child);
    }
    for i in 0..files {
        let d = &dirs[rng.below(dirs.len())];
        let name = format!("{}{}", i % 97, rng.pick(FILES));
        let _ = fs::write(d.join(name), b"x\n");
    }
    dirs
}

/// A package-manager style ignored directory with `files` files.
fn ignored_tree(rng: &mut Rng, dir: &Path, files: usize) {
    let mut made = 0;
    let mut pkg = 0;
    while made < files {
        let p = dir
            .join(format!("pkg{pkg}"))
            .join(rng.pick(&["lib", "dist", "src", "esm"]));
        fs::create_dir_all(&p).unwrap();
        let n = 5 + rng.below(20);
        for j in 0..n {
            let _ = fs::write(p.join(format!("f{j}.js")), b"module.exports = 1;\n");
        }
        if rng.below(40) == 0 {
            let _ = fs::write(p.join("vendor.promptinclude.md"), RULE_TEXT);
        }
        made += n;
        pkg += 1;
    }
}

/// Adds `count` rule files at random places in `dirs`.
fn rule_files(rng: &mut Rng, dirs: &[PathBuf], count: usize) {
    for i in 0..count {
        let d = &dirs[rng.below(dirs.len())];
        let mut text = String::from(RULE_TEXT);
        for _ in 0..rng.below(60) {
            text.push_str("Keep functions short; prefer composition over inheritance. ");
        }
        let _ = fs::write(d.join(format!("rules{i}.promptinclude.md")), text);
    }
}

/// W1: a monorepo at `root`.
pub fn w1(root: &Path) {
    let mut rng = Rng::new(1);
    let mut dirs = Vec::new();
    for p in 0..60 {
        let pkg = root.join("packages").join(format!("pkg{p:02}"));
        dirs.extend(source_tree(&mut rng, &pkg, 1300));
        if p % 6 == 0 {
            ignored_tree(&mut rng, &pkg.join("node_modules"), 5000);
        }
        if p % 10 == 0 {
            ignored_tree(&mut rng, &pkg.join("dist"), 800);
            ignored_tree(&mut rng, &pkg.join("build"), 800);
        }
        for d in dirs.iter().rev().take(3).cloned().collect::<Vec<_>>() {
            ignored_tree(&mut rng, &d.join("__pycache__"), 10);
        }
    }
    for i in 0..256 {
        let d = root.join(".git/objects").join(format!("{i:02x}"));
        fs::create_dir_all(&d).unwrap();
        for j in 0..20 {
            let _ = fs::write(d.join(format!("{j:038x}")), b"blob");
        }
    }
    ignored_tree(
        &mut rng,
        &root.join("venv/lib/python3.11/site-packages"),
        6000,
    );
    rule_files(&mut rng, &dirs, 30);
    write(&root.join("AGENTS.promptinclude.md"), RULE_TEXT.as_bytes());
}

/// W2: `count` mid-size repositories under `base` (`repo000`, ...); returns their roots.
pub fn w2(base: &Path, count: usize) -> Vec<PathBuf> {
    (0..count)
        .map(|i| {
            let mut rng = Rng::new(1000 + i as u64);
            let root = base.join(format!("repo{i:03}"));
            let dirs = source_tree(&mut rng, &root, 1800);
            ignored_tree(&mut rng, &root.join("node_modules"), 200);
            rule_files(&mut rng, &dirs, 5);
            root
        })
        .collect()
}

/// Mixed text: prose, code, CJK and emoji, `bytes` long (roughly).
pub fn mixed_text(seed: u64, bytes: usize) -> String {
    let mut rng = Rng::new(seed);
    let pieces = [
        "The quick brown fox jumps over the lazy dog. ",
        "fn main() { let x: Vec<u32> = (0..10).collect(); println!(\"{x:?}\"); }\n",
        "def f(a, b=2):\n    return a ** b  # power\n",
        "日本語のテキストです。東京は大きい都市です。",
        "中文文本，包括标点符号。",
        "😀🎉👍🏽🚀 ",
        "Numbers 1234567890 and 3.14159, dates 2026-11-30. ",
        "\n\n## Heading\n\n",
        "    indented code block\n",
        "don't won't it's we'll they've I'm ",
    ];
    let mut out = String::with_capacity(bytes + 128);
    while out.len() < bytes {
        out.push_str(pieces[rng.below(pieces.len())]);
    }
    out
}

/// W3: big rule files at `root`.
pub fn w3(root: &Path) {
    for (i, mb) in [1.0f64, 2.0, 1.5, 1.0].iter().enumerate() {
        let text = mixed_text(30 + i as u64, (mb * 1024.0 * 1024.0) as usize);
        write(
            &root.join(format!("big{i}.promptinclude.md")),
            text.as_bytes(),
        );
    }
}

/// The W4 runs: (name, unit repeated, bytes).
pub const W4_RUNS: &[(&str, &str, usize)] = &[
    ("spaces", " ", 100_000),
    ("letters", "a", 100_000),
    ("cjk", "中", 99_999),
    ("punct", "!", 100_000),
    ("emoji", "😀", 100_000),
];

/// W4: pathological single-class runs at `root`.
pub fn w4(root: &Path) {
    for (name, unit, bytes) in W4_RUNS {
        let mut f = {
            fs::create_dir_all(root).unwrap();
            fs::File::create(root.join(format!("{name}.promptinclude.md"))).unwrap()
        };
        f.write_all(unit.repeat(bytes / unit.len()).as_bytes())
            .unwrap();
    }
}

/// W5: seven repositories under `base` (`agents0` ... `agents6`), each
/// with every agent's rule files as real monorepos carry them; returns
/// their roots.
pub fn w5(base: &Path) -> Vec<PathBuf> {
    [4000, 2500, 1800, 1200, 900, 600, 300]
        .iter()
        .enumerate()
        .map(|(i, &files)| {
            let mut rng = Rng::new(5000 + i as u64);
            let root = base.join(format!("agents{i}"));
            fs::create_dir_all(root.join(".git")).unwrap();
            let dirs = source_tree(&mut rng, &root, files);
            ignored_tree(&mut rng, &root.join("node_modules"), files / 10);
            rule_files(&mut rng, &dirs, 5);
            agent_files(&mut rng, &root, &dirs);
            root
        })
        .collect()
}

/// The root's files of every agent, and nested `AGENTS.md` (some under an
/// `AGENTS.override.md`, some with a `CLAUDE.md` linked to them) in about
/// one directory in eight, one of them past Codex's 32 KiB.
fn agent_files(rng: &mut Rng, root: &Path, dirs: &[PathBuf]) {
    let at = |p: &str| root.join(p);
    write(&at("AGENTS.md"), RULE_TEXT.as_bytes());
    write(
        &at("CLAUDE.md"),
        format!("@AGENTS.md\n{RULE_TEXT}").as_bytes(),
    );
    write(
        &at("GEMINI.md"),
        format!("{RULE_TEXT}@./docs/style.md\n").as_bytes(),
    );
    write(&at("docs/style.md"), RULE_TEXT.as_bytes());
    write(
        &at(".claude/rules/api.md"),
        format!("---\npaths:\n  - \"src/**/*.ts\"\n---\n{RULE_TEXT}").as_bytes(),
    );
    write(&at(".claude/rules/style.md"), RULE_TEXT.as_bytes());
    write(
        &at(".cursor/rules/general.mdc"),
        format!("---\ndescription: General rules\nglobs: src/**/*.ts\nalwaysApply: false\n---\n{RULE_TEXT}").as_bytes(),
    );
    write(&at(".github/copilot-instructions.md"), RULE_TEXT.as_bytes());
    write(
        &at(".github/instructions/ts.instructions.md"),
        format!("---\napplyTo: \"**/*.ts\"\n---\n{RULE_TEXT}").as_bytes(),
    );
    let mut big = true;
    for dir in dirs.iter().skip(1) {
        if rng.below(8) != 0 {
            continue;
        }
        let mut text = String::from(RULE_TEXT);
        if std::mem::take(&mut big) {
            text.push_str(&"Keep every handler small and every error named. ".repeat(800));
        }
        write(&dir.join("AGENTS.md"), text.as_bytes());
        match rng.below(6) {
            0 => write(&dir.join("AGENTS.override.md"), RULE_TEXT.as_bytes()),
            1 | 2 => {
                let _ = std::os::unix::fs::symlink("AGENTS.md", dir.join("CLAUDE.md"));
            }
            _ => {}
        }
    }
}
