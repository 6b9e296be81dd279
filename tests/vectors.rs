// Runs every recorded reference vector (pathspec 1.1.1 and CPython 3.11 `fnmatch`)
// against the Rust pattern matchers.
//
// Files live in `fixtures/vectors/`:
// * `gitwildmatch.jsonl`: `{patterns, path, is_dir, ignored}`; `ignored` is the 1.1.1
//   verdict under the scanner's rule (`match(rel)`, plus `match(rel + "/")` for dirs);
// * `invalid_patterns.jsonl`: `{patterns, error}`; the list must fail, with the same
//   exception kind, on the right line;
// * `fnmatch.jsonl`: `{pattern, name, match}`;
// * `gitignore_lines.jsonl`: `{text, lines, spec_error?}`, the text→lines→spec step.

use std::collections::HashMap;
use std::path::PathBuf;

use promptinclude::discover::fnmatch::NamePattern;
use promptinclude::discover::gitwildmatch::{
    gitignore_lines, IgnoreSpec, PatternError, PatternErrorKind,
};
use serde_json::Value;

/// How many mismatches are listed in a failure message.
const SHOW: usize = 25;

fn read_vectors(name: &str) -> Vec<Value> {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "fixtures", "vectors", name]
        .iter()
        .collect();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}:{}: bad JSON: {e}", i + 1))
        })
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn report(what: &str, ran: usize, failures: &[String]) {
    println!("{what}: {ran} vectors ran, {} failed", failures.len());
    if !failures.is_empty() {
        let shown: Vec<&str> = failures.iter().take(SHOW).map(String::as_str).collect();
        panic!(
            "{what}: {} of {ran} vectors failed; first {}:\n  {}",
            failures.len(),
            shown.len(),
            shown.join("\n  ")
        );
    }
}

/// Maps the reference's exception text (`"<Type>: <message>"`) to our kind.
fn expected_kind(error: &str) -> Option<PatternErrorKind> {
    if error.starts_with("GitIgnorePatternError:") {
        Some(PatternErrorKind::InvalidPattern)
    } else if error.starts_with("error:") {
        Some(PatternErrorKind::BadCharacterRange)
    } else {
        None
    }
}

/// Python `repr()` of a string, for the printable-ASCII-ish cases the vectors use.
fn py_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[test]
fn gitwildmatch_vectors() {
    let vectors = read_vectors("gitwildmatch.jsonl");
    let mut specs: HashMap<Vec<String>, Result<IgnoreSpec, PatternError>> = HashMap::new();
    let mut failures = Vec::new();
    for v in &vectors {
        let patterns = strings(&v["patterns"]);
        let path = v["path"].as_str().unwrap_or_default();
        let is_dir = v["is_dir"].as_bool().unwrap_or(false);
        let want = v["ignored"].as_bool().unwrap_or(false);
        let spec = specs
            .entry(patterns.clone())
            .or_insert_with(|| IgnoreSpec::from_lines(&patterns));
        let spec = match spec {
            Ok(spec) => spec,
            Err(e) => {
                failures.push(format!("{patterns:?}: unexpected error {e}"));
                continue;
            }
        };
        let got = if is_dir {
            spec.is_dir_ignored(path)
        } else {
            spec.is_file_ignored(path)
        };
        let (explained, by) = spec.explain(path, is_dir);
        if got != want || explained != want {
            failures.push(format!(
                "{patterns:?} {} {path:?}: want ignored={want}, got {got} (explain: {explained}, by {:?})",
                if is_dir { "dir" } else { "file" },
                by.map(|p| &p.text)
            ));
        }
        if !is_dir && spec.decide(path).is_some_and(|p| !p.negated) != want {
            failures.push(format!("{patterns:?} {path:?}: decide disagrees"));
        }
    }
    // The same lists through the scanner's text step give the same patterns.
    for (patterns, spec) in &specs {
        let via_text = IgnoreSpec::from_gitignore_text(&patterns.join("\n"));
        let (Ok(spec), Ok(Some(via_text))) = (spec, via_text) else {
            failures.push(format!("{patterns:?}: text step failed"));
            continue;
        };
        let a: Vec<(usize, &str, Option<&str>)> = spec
            .patterns()
            .iter()
            .map(|p| (p.line_number, p.text.as_str(), p.regex()))
            .collect();
        let b: Vec<(usize, &str, Option<&str>)> = via_text
            .patterns()
            .iter()
            .map(|p| (p.line_number, p.text.as_str(), p.regex()))
            .collect();
        if a != b {
            failures.push(format!("{patterns:?}: text step gives other patterns"));
        }
    }
    println!("gitwildmatch: {} distinct pattern lists", specs.len());
    report("gitwildmatch", vectors.len(), &failures);
}

#[test]
fn invalid_pattern_vectors() {
    let vectors = read_vectors("invalid_patterns.jsonl");
    let mut failures = Vec::new();
    for v in &vectors {
        let patterns = strings(&v["patterns"]);
        let error = v["error"].as_str().unwrap_or_default();
        let Some(want) = expected_kind(error) else {
            failures.push(format!("{patterns:?}: unknown expected error {error:?}"));
            continue;
        };
        let err = match IgnoreSpec::from_lines(&patterns) {
            Ok(_) => {
                failures.push(format!("{patterns:?}: no error, want {error}"));
                continue;
            }
            Err(e) => e,
        };
        if err.kind != want {
            failures.push(format!(
                "{patterns:?}: got {:?} ({err}), want {error}",
                err.kind
            ));
            continue;
        }
        // The right line: it is the reported one, every earlier line compiles, and the
        // line fails on its own with the same kind.
        let idx = err.line_number.wrapping_sub(1);
        if patterns.get(idx) != Some(&err.line) {
            failures.push(format!(
                "{patterns:?}: error names line {} {:?}",
                err.line_number, err.line
            ));
            continue;
        }
        if let Err(e) = IgnoreSpec::from_lines(&patterns[..idx]) {
            failures.push(format!("{patterns:?}: an earlier line fails too: {e}"));
        }
        match IgnoreSpec::from_lines([&err.line]) {
            Err(e) if e.kind == want => {}
            other => failures.push(format!(
                "{patterns:?}: line {:?} alone gives {:?}",
                err.line,
                other.err()
            )),
        }
        if want == PatternErrorKind::InvalidPattern {
            let quoted = format!(
                "GitIgnorePatternError: Invalid git pattern: {}",
                py_repr(&err.line)
            );
            if err.line.is_ascii() && quoted != error {
                failures.push(format!(
                    "{patterns:?}: reference blames {error}, we blame {quoted}"
                ));
            }
        }
        let shown = err.to_string();
        if !shown.starts_with(&format!("line {}: ", err.line_number)) {
            failures.push(format!(
                "{patterns:?}: message {shown:?} lacks the line number"
            ));
        }
    }
    report("invalid_patterns", vectors.len(), &failures);
}

#[test]
fn fnmatch_vectors() {
    let vectors = read_vectors("fnmatch.jsonl");
    let mut compiled: HashMap<String, NamePattern> = HashMap::new();
    let mut failures = Vec::new();
    for v in &vectors {
        let pattern = v["pattern"].as_str().unwrap_or_default();
        let name = v["name"].as_str().unwrap_or_default();
        let want = v["match"].as_bool().unwrap_or(false);
        if !compiled.contains_key(pattern) {
            match NamePattern::new(pattern) {
                Ok(p) => {
                    compiled.insert(pattern.to_string(), p);
                }
                Err(e) => {
                    failures.push(format!("{pattern:?}: does not compile: {e}"));
                    continue;
                }
            }
        }
        let got = compiled.get(pattern).is_some_and(|p| p.is_match(name));
        if got != want {
            failures.push(format!(
                "fnmatch({name:?}, {pattern:?}): want {want}, got {got}"
            ));
        }
    }
    report("fnmatch", vectors.len(), &failures);
}

#[test]
fn gitignore_lines_vectors() {
    let vectors = read_vectors("gitignore_lines.jsonl");
    let mut failures = Vec::new();
    for v in &vectors {
        let text = v["text"].as_str().unwrap_or_default();
        let got_lines: Vec<&str> = gitignore_lines(text).map(|(_, l)| l).collect();
        let result = IgnoreSpec::from_gitignore_text(text);
        if v["lines"].is_null() {
            if !got_lines.is_empty() || !matches!(result, Ok(None)) {
                failures.push(format!("{text:?}: want no spec, got lines {got_lines:?}"));
            }
            continue;
        }
        let want_lines = strings(&v["lines"]);
        if got_lines != want_lines {
            failures.push(format!(
                "{text:?}: want lines {want_lines:?}, got {got_lines:?}"
            ));
            continue;
        }
        match (v["spec_error"].as_str(), result) {
            (Some(error), Err(e)) => {
                if Some(e.kind) != expected_kind(error) {
                    failures.push(format!("{text:?}: want {error}, got {e}"));
                }
            }
            (Some(error), Ok(_)) => failures.push(format!("{text:?}: want {error}, got a spec")),
            (None, Ok(Some(spec))) => {
                let texts: Vec<&str> = spec.patterns().iter().map(|p| p.text.as_str()).collect();
                if texts != want_lines {
                    failures.push(format!("{text:?}: spec patterns {texts:?}"));
                }
            }
            (None, other) => failures.push(format!("{text:?}: want a spec, got {other:?}")),
        }
    }
    report("gitignore_lines", vectors.len(), &failures);
}
