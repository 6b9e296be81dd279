//! The README and docs/ cannot drift from the program.
//!
//! * Every ```console block in README.md and docs/*.md is run: each `$ CMD` line runs
//!   with `sh -c` in a sandbox at /tmp/promptinclude-docs (a copy of fixtures/ and of
//!   fixtures/docs/sandbox/), with the built `promptinclude` first on PATH and a
//!   cleared environment, and its stdout then stderr must match the lines
//!   that follow it. In the expected text `[..]` matches anything within a line, a
//!   line `...` matches any number of lines, and `[ROOT]` stands for the sandbox
//!   (absolute paths are redacted to it). A line `? N` right after the command
//!   sets the expected exit status (0 otherwise).
//! * A `$ promptinclude` line outside a ```console block fails (it would be untested).
//! * Every intra-repository link (`[text](path#anchor)`) must point at an existing
//!   file, and an anchor at a heading of that file.
//!
//! `cargo test --release --test docs`; it prints how many commands it ran.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Case {
    file: String,
    line: usize,
    cmd: String,
    status: i32,
    expected: Vec<String>,
}

fn docs(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut d: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    d.sort();
    files.extend(d);
    files
}

/// Parses the console blocks of one file; records untested `$ promptinclude` lines.
fn parse(rel: &str, text: &str, cases: &mut Vec<Case>, errors: &mut Vec<String>) {
    let mut fence: Option<String> = None;
    let mut current: Option<Case> = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let trimmed = line.trim_start();
        if let Some(f) = &fence {
            if trimmed.starts_with("```") && trimmed.trim_end() == "```" {
                if f == "console" {
                    cases.extend(current.take());
                }
                fence = None;
                continue;
            }
            if f == "console" {
                if let Some(cmd) = line.strip_prefix("$ ") {
                    cases.extend(current.take());
                    current = Some(Case {
                        file: rel.to_string(),
                        line: n,
                        cmd: cmd.to_string(),
                        status: 0,
                        expected: Vec::new(),
                    });
                } else if let Some(c) = current.as_mut() {
                    if c.expected.is_empty() && line.starts_with("? ") {
                        c.status = line[2..].trim().parse().unwrap_or_else(|_| {
                            panic!("{rel}:{n}: `? N` needs a number");
                        });
                    } else {
                        c.expected.push(line.to_string());
                    }
                } else {
                    errors.push(format!(
                        "{rel}:{n}: console block text before any `$ ` line"
                    ));
                }
            } else if trimmed.starts_with("$ promptinclude") {
                errors.push(format!(
                    "{rel}:{n}: `$ promptinclude` in a ```{f} block: use ```console so it is tested"
                ));
            }
        } else if let Some(info) = trimmed.strip_prefix("```") {
            fence = Some(info.split([' ', ',']).next().unwrap_or("").to_string());
        } else if trimmed.starts_with("$ promptinclude") {
            errors.push(format!(
                "{rel}:{n}: `$ promptinclude` outside a ```console block"
            ));
        }
    }
}

/// Matches one line with `[..]` wildcards.
fn line_matches(pat: &str, actual: &str) -> bool {
    let parts: Vec<&str> = pat.split("[..]").collect();
    if parts.len() == 1 {
        return pat == actual;
    }
    let mut rest = actual;
    for (k, part) in parts.iter().enumerate() {
        if k == 0 {
            match rest.strip_prefix(part) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if k == parts.len() - 1 {
            return rest.ends_with(part);
        } else {
            match rest.find(part) {
                Some(p) => rest = &rest[p + part.len()..],
                None => return false,
            }
        }
    }
    true
}

/// Matches lines with `...` lines standing for any number of lines.
fn lines_match(pat: &[String], actual: &[&str]) -> bool {
    match pat.first() {
        None => actual.is_empty(),
        Some(p) if p.trim() == "..." => {
            (0..=actual.len()).any(|k| lines_match(&pat[1..], &actual[k..]))
        }
        Some(p) => {
            !actual.is_empty() && line_matches(p, actual[0]) && lines_match(&pat[1..], &actual[1..])
        }
    }
}

/// GitHub's anchor for a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| {
            if c == ' ' {
                Some('-')
            } else if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c)
            } else {
                None
            }
        })
        .collect()
}

fn anchors(text: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        if !fence && line.starts_with('#') {
            let h = line.trim_start_matches('#');
            if h.starts_with(' ') {
                let mut s = slug(h);
                let base = s.clone();
                let mut k = 1;
                while set.contains(&s) {
                    s = format!("{base}-{k}");
                    k += 1;
                }
                set.insert(s);
            }
        }
    }
    set
}

fn check_links(root: &Path, file: &Path, text: &str, errors: &mut Vec<String>) -> usize {
    let rel = file.strip_prefix(root).unwrap().display().to_string();
    let mut count = 0;
    let mut fence = false;
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        if fence {
            continue;
        }
        let mut rest = line;
        while let Some(p) = rest.find("](") {
            rest = &rest[p + 2..];
            let Some(end) = rest.find(')') else { break };
            let target = &rest[..end];
            rest = &rest[end..];
            if target.contains("://") || target.starts_with("mailto:") || target.contains(' ') {
                continue;
            }
            count += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target, None),
            };
            let dest = if path.is_empty() {
                file.to_path_buf()
            } else {
                file.parent().unwrap().join(path)
            };
            if !dest.exists() {
                errors.push(format!("{rel}:{}: link to a missing file: {target}", i + 1));
                continue;
            }
            if let Some(a) = anchor {
                let t = std::fs::read_to_string(&dest).unwrap_or_default();
                if !anchors(&t).contains(a) {
                    errors.push(format!(
                        "{rel}:{}: link to a missing anchor: {target}",
                        i + 1
                    ));
                }
            }
        }
    }
    count
}

fn main() {
    let started = std::time::Instant::now();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_promptinclude"));
    let bin_dir = bin.parent().unwrap();
    let root_str = root.display().to_string();
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut links = 0;
    let files = docs(&root);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let rel = f.strip_prefix(&root).unwrap().display().to_string();
        parse(&rel, &text, &mut cases, &mut errors);
        links += check_links(&root, f, &text, &mut errors);
    }
    // The commands run in a sandbox at a fixed path holding a copy of the fixtures:
    // token counts and budgets include the rule files' absolute paths, so they must
    // not depend on where the repository is checked out, and commands that write
    // (bundles, HTML pages) must not write into the repository.
    let sandbox = PathBuf::from("/tmp/promptinclude-docs");
    let _ = std::fs::remove_dir_all(&sandbox);
    std::fs::create_dir_all(sandbox.join("fixtures")).unwrap();
    for dir in ["trees", "agents", "docs", "config", "configs"] {
        let ok = Command::new("cp")
            .arg("-a")
            .arg(root.join("fixtures").join(dir))
            .arg(sandbox.join("fixtures"))
            .status()
            .expect("cp runs")
            .success();
        assert!(ok, "copying fixtures/{dir} into the sandbox");
    }
    // fixtures/docs/sandbox/ holds the trees the docs name at the top level (`app`,
    // `repos.txt`); a file named `dot-git` becomes `.git` (git cannot store that name),
    // which makes its directory a nested repository.
    let ok = Command::new("cp")
        .arg("-a")
        .arg(root.join("fixtures/docs/sandbox/."))
        .arg(&sandbox)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "copying fixtures/docs/sandbox into the sandbox");
    let ok = Command::new("sh")
        .arg("-c")
        .arg("find . -name dot-git -exec sh -c 'mv \"$1\" \"${1%dot-git}.git\"' _ {} \\;")
        .current_dir(&sandbox)
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "renaming dot-git files");
    let sandbox_str = sandbox.display().to_string();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into())
    );
    for case in &cases {
        let out = Command::new("sh")
            .arg("-c")
            .arg(&case.cmd)
            .current_dir(&sandbox)
            .env_clear()
            .env("PATH", &path)
            .env("HOME", sandbox.join("fixtures/docs/home"))
            .env("LC_ALL", "C.UTF-8")
            .env("COLUMNS", "100")
            .output()
            .expect("sh runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
        .replace(&sandbox_str, "[ROOT]")
        .replace(&root_str, "[ROOT]");
        let actual: Vec<&str> = text.lines().collect();
        let status = out.status.code().unwrap_or(-1);
        if status != case.status || !lines_match(&case.expected, &actual) {
            errors.push(format!(
                "{}:{}: `$ {}` (exit {status}, expected {})\n--- expected\n{}\n--- actual\n{}\n",
                case.file,
                case.line,
                case.cmd,
                case.status,
                case.expected.join("\n"),
                text.trim_end()
            ));
        }
    }
    eprintln!(
        "docs: {} files, {} console commands run, {} intra-repository links checked, {:.1}s",
        files.len(),
        cases.len(),
        links,
        started.elapsed().as_secs_f64()
    );
    if !errors.is_empty() {
        for e in &errors {
            eprintln!("{e}");
        }
        eprintln!("docs: {} failure(s)", errors.len());
        std::process::exit(1);
    }
    println!("test result: ok. {} doc commands passed", cases.len());
}
