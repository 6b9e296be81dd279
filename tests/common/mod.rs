//! Shared helpers for integration tests: a seeded random generator, random
//! rule-file trees and configurations, finding the binary and the oracle, and
//! running them with an environment that cannot change their behaviour.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use libtest_mimic::{Arguments, Completion, Failed, Trial};

pub mod git;

#[path = "../../benches/support/workload.rs"]
mod workload;
pub use workload::Rng;

/// Runs the promptinclude binary with `args` in `cwd`.
pub fn promptinclude(args: &[&str], cwd: &Path) -> std::process::Output {
    command(binary())
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// The promptinclude binary under test.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_promptinclude"))
}

/// Variables that would make the binary or the oracle behave differently from
/// what a test expects: colour switches, the host's `A0_SET_*` overrides, the
/// agents' own variables (`context`), and Python's own import and encoding
/// switches.
const CLEARED: &[&str] = &[
    "NO_COLOR",
    "CODEX_HOME",
    "CLAUDE_CONFIG_DIR",
    "CLAUDE_CODE_DISABLE_CLAUDE_MDS",
    "GEMINI_CLI_HOME",
    "GEMINI_CLI_TRUST_WORKSPACE",
    "PI_CODING_AGENT_DIR",
    "TERM",
    "COLORTERM",
    "FORCE_COLOR",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONIOENCODING",
    "PYTHONUTF8",
    "PYTHONWARNINGS",
    "PYTHONSTARTUP",
    "TIKTOKEN_CACHE_DIR",
];

/// `PROMPTINCLUDE_*` variables that only say where the oracle's environment lives.
const KEPT: &[&str] = &[
    "PROMPTINCLUDE_ORACLE_HOME",
    "PROMPTINCLUDE_CL100K",
    "PROMPTINCLUDE_ORACLE_PYTHON",
];

/// A `Command` for `program` (our binary or the oracle) with every variable that
/// changes behaviour removed: `CLEARED`, `CLICOLOR*`, `A0_SET_*` and `PROMPTINCLUDE_*`
/// except `KEPT`. Tests set what they need on top.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (name, _) in std::env::vars_os() {
        let Some(text) = name.to_str() else { continue };
        if CLEARED.contains(&text)
            || text.starts_with("CLICOLOR")
            || text.starts_with("A0_SET_")
            || (text.starts_with("PROMPTINCLUDE_") && !KEPT.contains(&text))
        {
            cmd.env_remove(&name);
        }
    }
    cmd
}

/// The project's oracle, `tests/oracle/oracle` (or `PROMPTINCLUDE_ORACLE`), if it
/// runs here; the first call builds its environment.
pub fn oracle() -> Option<PathBuf> {
    find_oracle().ok()
}

/// The oracle, or why it cannot run here. Probed once per test process.
pub fn find_oracle() -> Result<PathBuf, String> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let path = std::env::var_os("PROMPTINCLUDE_ORACLE")
                .map(PathBuf::from)
                .unwrap_or_else(|| {
                    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/oracle")
                });
            if !path.exists() {
                return Err(format!("no oracle at {}", path.display()));
            }
            let probe = "/nonexistent-promptinclude-probe";
            let out = command(&path)
                .arg(probe)
                .output()
                .map_err(|e| format!("cannot run {}: {e}", path.display()))?;
            let want = format!("{{\"root\": \"{probe}\", \"files\": [], \"skipped_count\": 0}}\n");
            if out.status.success() && out.stdout == want.as_bytes() {
                Ok(path)
            } else {
                let stderr = String::from_utf8_lossy(&out.stderr);
                let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
                Err(format!(
                    "{} does not run here ({}): {}",
                    path.display(),
                    out.status,
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                ))
            }
        })
        .clone()
}

/// For a `libtest-mimic` trial that needs the oracle: the oracle, or the trial's
/// outcome without it: ignored with the reason, or failed when
/// `PROMPTINCLUDE_REQUIRE_ORACLE=1` (as in CI), so it never passes silently.
pub fn oracle_or_skip() -> Result<PathBuf, Result<Completion, Failed>> {
    match find_oracle() {
        Ok(path) => Ok(path),
        Err(reason) if std::env::var("PROMPTINCLUDE_REQUIRE_ORACLE").as_deref() == Ok("1") => {
            Err(Err(format!(
                "the oracle is required (PROMPTINCLUDE_REQUIRE_ORACLE=1) but {reason}"
            )
            .into()))
        }
        Err(reason) => {
            eprintln!("SKIPPED: {reason}");
            Err(Ok(Completion::ignored_with(reason)))
        }
    }
}

/// Runs `trials` under libtest-mimic with the command-line arguments (for the
/// test files with `harness = false`).
pub fn run_trials(trials: Vec<Trial>) -> ! {
    libtest_mimic::run(&Arguments::from_args(), trials).exit()
}

/// One oracle process answering many requests (`oracle --batch`): saves the
/// interpreter's start-up per call.
pub struct OracleBatch {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: std::io::BufReader<std::process::ChildStdout>,
}

impl OracleBatch {
    pub fn start(oracle: &Path) -> Self {
        use std::process::Stdio;
        let mut child = command(oracle)
            .arg("--batch")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the oracle starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        OracleBatch {
            child,
            stdin,
            stdout,
        }
    }

    /// The oracle's standard output for `argv`, with exactly the `A0_SET_*`
    /// variables of `env`.
    pub fn call(&mut self, argv: &[String], env: &[(String, String)]) -> Vec<u8> {
        use std::io::{BufRead, Write};
        let env: serde_json::Map<String, serde_json::Value> = env
            .iter()
            .map(|(k, v)| (k.clone(), v.clone().into()))
            .collect();
        let request = serde_json::json!({ "argv": argv, "env": env });
        writeln!(self.stdin, "{request}").unwrap();
        self.stdin.flush().unwrap();
        let mut out = Vec::new();
        loop {
            let mut line = Vec::new();
            let n = self.stdout.read_until(b'\n', &mut line).unwrap();
            assert!(n > 0, "the oracle stopped answering");
            if line == b"\x04\n" {
                return out;
            }
            out.extend_from_slice(&line);
        }
    }
}

impl Drop for OracleBatch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

/// Host template directives and pieces of them, in every form the host's
/// `process_includes` and `read_prompt_file` treat (Python `\s` includes
/// U+001C–U+001F and U+0085; U+200B is not whitespace), plus pieces that
/// form a directive once their neighbours are joined or removed.
pub const DIRECTIVES: &[&str] = &[
    "{{ include original }}",
    "{{include original}}",
    "{{\tinclude\noriginal\r\n}}",
    "{{\u{1c}include\u{85}original\u{3000}}}",
    "{{\u{1f}include\u{a0}original\u{2028}}}",
    "{{ include\u{200b}original }}",
    "{{ Include original }}",
    "{{ include {{ include original }}original }}",
    "{{include {{include original}}'x.md'}}",
    "{{{ include original }}}",
    "{{ include \"x.md\" }}",
    "{{include 'a/b.md'}}",
    "{{include \"mixed'}}",
    "{{ include '/abs/path.md' }}",
    "{{include ''}}",
    "{{include \"unterminated",
    "{{ include original",
    "{{include 'a\nb'}}",
    "{{path}}",
    "{{content}}",
    "{{suffix}}",
    "{{_agent}}",
    "{{name_pattern}}",
    "{{includes}}",
    "{{if includes}}kept{{endif}}",
    "{{if x}}",
    "{{endif}}",
    "{{",
    "}}",
    "include",
    "original",
    " original }}",
];

/// The seed in the environment variable `var`, else a fresh one from the
/// clock; printed either way, with the variable that repeats the run.
pub fn fresh_seed(var: &str) -> u64 {
    let seed = std::env::var(var)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("seed {seed} ({var}={seed} repeats it)");
    seed
}

/// Random rule-file text: words, whitespace oddities, sometimes long.
pub fn random_text(rng: &mut Rng) -> Vec<u8> {
    random_text_with(rng, false)
}

/// [`random_text`], with a quarter of the words taken from [`DIRECTIVES`]
/// when `directives` is set.
fn random_text_with(rng: &mut Rng, directives: bool) -> Vec<u8> {
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
        let word = if directives && rng.chance(25) {
            rng.pick(DIRECTIVES)
        } else {
            rng.pick(WORDS)
        };
        out.extend_from_slice(word.as_bytes());
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
/// Directory names with directives, for [`random_tree_with_directives`]
/// (`{{include 'a` + `/` + `b.md'}}…` forms a named include with a folder).
const DIRECTIVE_DIR_NAMES: &[&str] = &["{{include original}}", "{{include 'a", "x{{content}}"];
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
/// File names with directives, for [`random_tree_with_directives`].
const DIRECTIVE_FILE_NAMES: &[&str] = &[
    "{{ include original }}.promptinclude.md",
    "b.md'}}.promptinclude.md",
    "{{content}}{{suffix}}.promptinclude.md",
    "{{\u{1c}include\toriginal\u{85}}}.promptinclude.md",
    "{{ include \"x.md\" }}.promptinclude.md",
];

/// Builds a random tree under `root` (which must not exist yet).
pub fn random_tree(rng: &mut Rng, root: &Path) {
    random_tree_with(rng, root, false)
}

/// [`random_tree`] whose names and texts also carry host template
/// directives ([`DIRECTIVES`]), for the render comparisons.
pub fn random_tree_with_directives(rng: &mut Rng, root: &Path) {
    random_tree_with(rng, root, true)
}

fn random_tree_with(rng: &mut Rng, root: &Path, directives: bool) {
    let joined = |base: &[&'static str], extra: &[&'static str]| -> Vec<&'static str> {
        let mut names = base.to_vec();
        if directives {
            names.extend_from_slice(extra);
        }
        names
    };
    let (dir_names, file_names) = (
        joined(DIR_NAMES, DIRECTIVE_DIR_NAMES),
        joined(FILE_NAMES, DIRECTIVE_FILE_NAMES),
    );
    fs::create_dir_all(root).unwrap();
    let mut dirs = vec![root.to_path_buf()];
    let n_dirs = 1 + rng.below(14);
    for _ in 0..n_dirs {
        let parent = rng.pick(&dirs).clone();
        let dir = parent.join(rng.pick(&dir_names));
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
        let path = dir.join(rng.pick(&file_names));
        if path.is_dir() {
            continue;
        }
        let _ = fs::write(&path, random_text_with(rng, directives));
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
                let _ = fs::write(&t, random_text_with(rng, directives));
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

/// Our `scan` output as the oracle prints it: each record without the two
/// fields we add about its root, which the reference's result has no place
/// for (`"root_hex"` after a root that is not UTF-8, `"is_dir": false` for
/// one that is not a directory). Everything else is kept byte for byte.
pub fn as_oracle_prints(out: &[u8]) -> Vec<u8> {
    let mut kept = Vec::with_capacity(out.len());
    for line in out.split_inclusive(|&b| b == b'\n') {
        let Some(after_root) = line
            .strip_prefix(b"{\"root\": \"")
            .and_then(|rest| json_string_end(rest).map(|end| line.len() - rest.len() + end))
        else {
            kept.extend_from_slice(line);
            continue;
        };
        let (head, mut rest) = line.split_at(after_root);
        kept.extend_from_slice(head);
        if let Some(hex) = rest.strip_prefix(b", \"root_hex\": \"") {
            let end = json_string_end(hex).expect("root_hex ends");
            rest = &hex[end..];
        }
        if let Some(after) = rest.strip_prefix(b", \"is_dir\": false") {
            rest = after;
        }
        kept.extend_from_slice(rest);
    }
    kept
}

/// Where the JSON string whose contents start `s` ends: the index just
/// past its closing quote.
fn json_string_end(s: &[u8]) -> Option<usize> {
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// Copies a directory tree of files and directories (no links).
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
