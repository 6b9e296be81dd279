//! Configuration values as the host loads them (issue #10), against the oracle.
//!
//! The host passes whatever `json.loads` / PyYAML `safe_load` yields for a key
//! straight to the scanner, whose Python arithmetic then accepts it (floats,
//! booleans, negatives, huge ints, NaN...) or raises. For each of the six keys and
//! each generated value form, written as one line of a `.json` and a `.yaml` config
//! file among other lines, `promptinclude scan --config FILE ROOTS...` must:
//! * where the oracle returns for every root: print exactly the oracle's output;
//! * where it raises: exit 2 with one stderr line naming the file, the line, the key
//!   and the value.
//!
//! A second trial does the same for the `A0_SET__promptinclude__<key>` environment
//! defaults (`--no-project-config`, no `--config`; oracle `--env-defaults`).
//!
//! Ignored with the reason where the oracle cannot run; a failure then under
//! PROMPTINCLUDE_REQUIRE_ORACLE=1.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{binary, command, OracleBatch, Rng};
use libtest_mimic::{Completion, Failed, Trial};

fn main() {
    common::run_trials(vec![
        Trial::ignorable_test("config_values_match_the_reference", config_values),
        Trial::ignorable_test("env_defaults_match_the_reference", env_defaults),
    ]);
}

const KEYS: [&str; 6] = [
    "name_pattern",
    "max_depth",
    "max_file_tokens",
    "max_file_count",
    "max_total_tokens",
    "gitignore",
];

/// Small fixed trees where budgets, depth, the pattern and ignore lines all matter.
fn build_trees(dir: &Path) -> Vec<PathBuf> {
    fn words(n: usize) -> String {
        (0..n)
            .map(|i| format!("rule {i} says always use tabs; "))
            .collect()
    }
    let files: &[(&str, usize)] = &[
        ("one/a.promptinclude.md", 4),
        ("one/sub/b.promptinclude.md", 60),
        ("one/sub/deep/x/c.promptinclude.md", 400),
        ("one/build/d.promptinclude.md", 10),
        ("one/node_modules/e.promptinclude.md", 10),
        ("one/notes.md", 3),
        ("three/r.promptinclude.md", 250),
        ("three/z.promptinclude.md", 12),
        ("three/blank.promptinclude.md", 0),
    ];
    for (path, n) in files {
        let path = dir.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, words(*n)).unwrap();
    }
    fs::create_dir_all(dir.join("two-empty")).unwrap();
    ["one", "two-empty", "three"]
        .iter()
        .map(|t| dir.join(t))
        .collect()
}

/// A value form: the text written after the key, and the file format.
#[derive(Clone)]
struct Form {
    literal: String,
    yaml: bool,
}

/// Value forms for every key: fixed edge cases of both loaders plus generated
/// numbers of every magnitude.
fn forms(rng: &mut Rng) -> Vec<Form> {
    let mut json: Vec<String> = [
        "0",
        "-0",
        "1",
        "2",
        "3",
        "5",
        "10",
        "49",
        "50",
        "51",
        "100",
        "120",
        "2000",
        "8000",
        "50000",
        "-1",
        "-7",
        "-2000",
        "2147483647",
        "2147483648",
        "4294967296",
        "9007199254740993",
        "9223372036854775807",
        "9223372036854775808",
        "18446744073709551616",
        "-9223372036854775809",
        "1000000000000000000000000000000",
        "2.0",
        "100.5",
        "1e2",
        "1E2",
        "-0.0",
        "0.0",
        "0.5",
        "50.9",
        "2000.0",
        "1e-5",
        "1e400",
        "-1e400",
        "7.9999999999999999999",
        "NaN",
        "Infinity",
        "-Infinity",
        "true",
        "false",
        "null",
        "\"10\"",
        "\" 10 \"",
        "\"abc\"",
        "\"\"",
        "\"*.md\"",
        "\"x\\ny\"",
        "\"\\udcff\"",
        "\"*\\udcff*\"",
        "\"\\ud800\"",
        "\"venv/**\"",
        "\"!\"",
        "\"[z-a]\"",
        "\"\\\\\"",
        "\"build/\\nsub/\"",
        "[]",
        "[1]",
        "[\"*.md\"]",
        "{}",
        "{\"a\": 1}",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    json.push("9".repeat(400));
    let mut yaml: Vec<String> = [
        "0",
        "-0",
        "1",
        "10",
        "-5",
        "+12",
        "1_000",
        "010",
        "0o17",
        "0x1F",
        "0b101",
        "5:00",
        "1:30:00",
        "9223372036854775808",
        "1000000000000000000000000000000",
        "2.0",
        "100.5",
        "1.0e+2",
        "1e2",
        "1.0e2",
        "-0.0",
        ".5",
        "1_0.5",
        "190:20:30.15",
        ".inf",
        "-.inf",
        "+.inf",
        ".Inf",
        ".nan",
        ".NaN",
        "1.5e+400",
        "yes",
        "no",
        "Yes",
        "NO",
        "on",
        "off",
        "On",
        "OFF",
        "true",
        "True",
        "TRUE",
        "false",
        "y",
        "n",
        "Y",
        "N",
        "~",
        "null",
        "Null",
        "NULL",
        "",
        "abc",
        "\"abc\"",
        "'10'",
        "\"10\"",
        "\" 10 \"",
        "'*.md'",
        "\"*.md\"",
        "\"\\udcff\"",
        "\"a\\nb\"",
        "\"!\"",
        "'[z-a]'",
        "[]",
        "[1, 2]",
        "[a]",
        "{}",
        "{a: 1}",
        "!!binary aGVsbG8=",
        "2024-01-01",
        "2024-01-01 10:00:00",
        "!!str 5",
        "!!int \"7\"",
        "!!float 3",
        "!!python/none ''",
        "venv/**",
        "'build/\n  sub/'",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    // Generated numbers: integers of every width, and floats with and without
    // fractions, in both syntaxes.
    for _ in 0..8 {
        let digits = 1 + rng.below(40);
        let mut n: String = (0..digits)
            .map(|_| char::from(b'0' + rng.below(10) as u8))
            .collect();
        n = n.trim_start_matches('0').to_string();
        if n.is_empty() {
            n.push('0');
        }
        if rng.chance(33) {
            n.insert(0, '-');
        }
        json.push(n.clone());
        yaml.push(n);
    }
    for _ in 0..6 {
        let whole = rng.below(9000);
        let frac = *rng.pick(&["0", "5", "25", "999"]);
        json.push(format!("{whole}.{frac}"));
        yaml.push(format!("{whole}.{frac}"));
        json.push(format!("{whole}e{}", rng.below(4)));
        yaml.push(format!("{whole}.0e+{}", rng.below(4)));
    }
    json.into_iter()
        .map(|literal| Form {
            literal,
            yaml: false,
        })
        .chain(yaml.into_iter().map(|literal| Form {
            literal,
            yaml: true,
        }))
        .collect()
}

const DEFAULTS: [(&str, &str); 5] = [
    ("name_pattern", "\"*.promptinclude.md\""),
    ("max_depth", "10"),
    ("max_file_tokens", "2000"),
    ("max_file_count", "50"),
    ("max_total_tokens", "8000"),
];

/// The config file text with `key: literal` on one line among others, and that line's number.
fn config_text(key: &str, form: &Form, before: usize) -> (String, usize) {
    let others: Vec<(&str, &str)> = DEFAULTS
        .iter()
        .copied()
        .filter(|(k, _)| *k != key)
        .collect();
    let (head, tail) = others.split_at(before.min(others.len()));
    let mut lines = Vec::new();
    if form.yaml {
        lines.push("# promptinclude configuration under test".to_string());
        lines.extend(head.iter().map(|(k, v)| format!("{k}: {v}")));
        lines.push(format!("{key}: {}", form.literal));
        lines.extend(tail.iter().map(|(k, v)| format!("{k}: {v}")));
        let line = lines.len() - tail.len();
        (lines.join("\n") + "\n", line)
    } else {
        lines.push("{".to_string());
        lines.extend(head.iter().map(|(k, v)| format!("  \"{k}\": {v},")));
        let comma = if tail.is_empty() { "" } else { "," };
        lines.push(format!("  \"{key}\": {}{comma}", form.literal));
        for (i, (k, v)) in tail.iter().enumerate() {
            let comma = if i + 1 == tail.len() { "" } else { "," };
            lines.push(format!("  \"{k}\": {v}{comma}"));
        }
        let line = lines.len() - tail.len();
        lines.push("}".to_string());
        (lines.join("\n") + "\n", line)
    }
}

/// Our output root by root: an error record (same root) where the oracle
/// raises, the oracle's exact line where it returns.
fn per_root_matches(oracle_out: &[u8], ours: &[u8]) -> bool {
    let split = |b: &[u8]| -> Vec<Vec<u8>> {
        b.split(|&c| c == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect()
    };
    let (expected, got) = (split(oracle_out), split(ours));
    expected.len() == got.len()
        && expected.iter().zip(&got).all(|(e, g)| {
            let ev: Option<serde_json::Value> = serde_json::from_slice(e).ok();
            match ev {
                Some(ev) if ev.get("raises").is_some() => {
                    serde_json::from_slice::<serde_json::Value>(g)
                        .ok()
                        .is_some_and(|gv| {
                            gv.get("error").is_some() && gv.get("root") == ev.get("root")
                        })
                }
                _ => e == g,
            }
        })
}

/// Whether the oracle's output says the reference raises for some root.
fn raises(oracle_out: &[u8]) -> Option<String> {
    oracle_out
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .find_map(|l| {
            let v: serde_json::Value = serde_json::from_slice(l).ok()?;
            v.get("raises")
                .map(|r| r.as_str().unwrap_or("?").to_string())
        })
}

/// Does `message` show `value` (as written, or without its quotes or tag; a long
/// value may be shortened)?
fn names_value(message: &str, literal: &str) -> bool {
    let text = literal.trim();
    let mut shapes = vec![text.to_string(), text.replace('\n', "\\n")];
    for q in ['"', '\''] {
        if text.len() >= 2 && text.starts_with(q) && text.ends_with(q) {
            shapes.push(text[1..text.len() - 1].to_string());
        }
    }
    if let Some(rest) = text.strip_prefix("!!") {
        if let Some((_, value)) = rest.split_once(' ') {
            shapes.push(value.to_string());
        }
    }
    shapes.iter().any(|s| {
        message.contains(s.as_str())
            || (s.chars().count() > 40 && message.contains(&s.chars().take(20).collect::<String>()))
    })
}

/// Does `message` hold `n` as a number of its own (not inside a longer one)?
fn names_number(message: &str, n: usize) -> bool {
    let n = n.to_string();
    message.match_indices(&n).any(|(i, _)| {
        let before = message[..i].chars().next_back();
        let after = message[i + n.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

struct Tally {
    cases: usize,
    returns: usize,
    raises: usize,
    failures: Vec<String>,
}

impl Tally {
    fn new() -> Self {
        Tally {
            cases: 0,
            returns: 0,
            raises: 0,
            failures: Vec::new(),
        }
    }

    /// Compares one case; `must_name` are the texts the error line has to contain.
    fn check(
        &mut self,
        what: &str,
        expected: &[u8],
        out: &std::process::Output,
        must_name: &dyn Fn(&str) -> Vec<(&'static str, bool)>,
    ) {
        self.cases += 1;
        let stderr = String::from_utf8_lossy(&out.stderr);
        match raises(expected) {
            None => {
                self.returns += 1;
                let code_ok = matches!(out.status.code(), Some(0 | 1));
                if !code_ok || out.stdout != expected {
                    self.failures.push(format!(
                        "{what}: the reference returns; we exit {} (stderr {:?}){}",
                        out.status,
                        stderr.trim_end(),
                        if out.stdout == expected {
                            String::new()
                        } else {
                            format!(
                                "\n    expected {:?}\n    got      {:?}",
                                shorten(expected),
                                shorten(&out.stdout)
                            )
                        }
                    ));
                }
            }
            Some(exception) => {
                self.raises += 1;
                // Either the whole run is refused before any walk (one stderr
                // line, no output), or, where the reference raises only for
                // some roots, those roots get error records and the others
                // their exact output; every stderr line names what is asked.
                let lines: Vec<&str> = stderr.lines().collect();
                let refused_whole = out.stdout.is_empty() && lines.len() == 1;
                let per_root = !out.stdout.is_empty() && per_root_matches(expected, &out.stdout);
                let missing: Vec<&str> = lines
                    .iter()
                    .flat_map(|line| must_name(line))
                    .filter(|(_, ok)| !ok)
                    .map(|(what, _)| what)
                    .collect();
                if out.status.code() != Some(2)
                    || !stderr.ends_with('\n')
                    || !(refused_whole || per_root)
                    || !missing.is_empty()
                {
                    self.failures.push(format!(
                        "{what}: the reference raises {exception}; we exit {}, stderr {:?}{}",
                        out.status,
                        stderr,
                        if missing.is_empty() {
                            String::new()
                        } else {
                            format!(" (does not name the {})", missing.join(", "))
                        }
                    ));
                }
            }
        }
    }

    fn finish(self, summary: String) -> Result<Completion, Failed> {
        eprintln!("{summary}");
        if self.failures.is_empty() {
            return Ok(Completion::Completed);
        }
        // Twenty, at most three per format and key, so the kinds of failure show.
        let mut per_group: std::collections::HashMap<String, usize> = Default::default();
        let mut shown: Vec<String> = Vec::new();
        for f in &self.failures {
            let group: String = f.split(':').next().unwrap_or("").chars().take(40).collect();
            let seen = per_group.entry(group).or_default();
            *seen += 1;
            if *seen <= 3 && shown.len() < 20 {
                shown.push(f.clone());
            }
        }
        Err(format!(
            "{summary}\nfirst {} of {} differences:\n{}",
            shown.len(),
            self.failures.len(),
            shown.join("\n")
        )
        .into())
    }
}

fn shorten(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.chars().count() > 300 {
        format!("{}…", text.chars().take(300).collect::<String>())
    } else {
        text.into_owned()
    }
}

fn config_values() -> Result<Completion, Failed> {
    let oracle = match common::oracle_or_skip() {
        Ok(path) => path,
        Err(outcome) => return outcome,
    };
    let work = tempfile::tempdir().unwrap();
    let roots = build_trees(&work.path().join("trees"));
    let root_args: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    let mut batch = OracleBatch::start(&oracle);
    let mut rng = Rng::new(10);
    let forms = forms(&mut rng);
    let mut tally = Tally::new();
    let mut n = 0;
    for key in KEYS {
        for form in &forms {
            n += 1;
            let (text, line) = config_text(key, form, n % 5);
            let file = work.path().join(format!(
                "c{n:04}.{}",
                if form.yaml { "yaml" } else { "json" }
            ));
            fs::write(&file, &text).unwrap();
            let file_arg = file.display().to_string();
            let mut argv = vec!["--config".to_string(), file_arg.clone()];
            argv.extend(root_args.iter().cloned());
            let expected = batch.call(&argv, &[]);
            let out = command(binary())
                .arg("scan")
                .arg("--config")
                .arg(&file)
                .args(&roots)
                .output()
                .unwrap();
            let what = format!(
                "{} {key}: {}",
                if form.yaml { "yaml" } else { "json" },
                form.literal
            );
            let file_name = file.file_name().unwrap().to_str().unwrap().to_string();
            tally.check(&what, &expected, &out, &|msg: &str| {
                vec![
                    ("file", msg.contains(&file_name)),
                    ("line", names_number(msg, line)),
                    ("key", msg.contains(key)),
                    ("value", names_value(msg, &form.literal)),
                ]
            });
        }
    }
    let summary = format!(
        "config values: {} forms, {} where the reference returns, {} where it raises, {} differences",
        tally.cases,
        tally.returns,
        tally.raises,
        tally.failures.len()
    );
    assert!(tally.cases >= 300, "only {} value forms", tally.cases);
    tally.finish(summary)
}

/// `A0_SET_` cases: the variables set, by name.
fn env_cases(rng: &mut Rng) -> Vec<Vec<(String, String)>> {
    let lower = |k: &str| format!("A0_SET__promptinclude__{k}");
    let upper = |k: &str| format!("A0_SET__promptinclude__{k}").to_uppercase();
    let v = |pairs: &[(String, &str)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect()
    };
    let mut cases = vec![
        v(&[(lower("max_total_tokens"), " 150 ")]),
        v(&[(upper("max_depth"), "2")]),
        v(&[(lower("max_depth"), "2"), (upper("max_depth"), "1")]),
        v(&[(lower("max_depth"), ""), (upper("max_depth"), "1")]),
        v(&[(lower("max_file_count"), "abc")]),
        v(&[(lower("max_file_tokens"), "1.5")]),
        v(&[(lower("max_file_tokens"), "60")]),
        v(&[(upper("max_total_tokens"), "1_000")]),
        v(&[(lower("max_total_tokens"), "+300")]),
        v(&[(lower("max_total_tokens"), "-3")]),
        v(&[(lower("max_total_tokens"), "\u{3000}400\u{3000}")]),
        v(&[(lower("max_total_tokens"), "\u{661}\u{662}\u{660}")]),
        v(&[(lower("max_file_count"), "0")]),
        v(&[(lower("max_file_count"), " ")]),
        v(&[(lower("name_pattern"), " *.md ")]),
        v(&[(upper("name_pattern"), "[rz]*")]),
        v(&[(lower("gitignore"), "  build/\n sub/  \n")]),
        v(&[(lower("gitignore"), "")]),
        v(&[(lower("gitignore"), "!")]),
        v(&[(upper("gitignore"), "[z-a]")]),
        v(&[("A0_SET__Promptinclude__max_depth".to_string(), "1")]),
        v(&[("A0_SET_promptinclude__max_depth".to_string(), "1")]),
    ];
    // Generated combinations.
    let values = [
        " 7 ",
        "0",
        "51",
        "120",
        "300",
        "2000",
        "abc",
        "1.5",
        "",
        "1e3",
        "0x10",
        "+5",
        " *.promptinclude.md ",
        "*[!z]*",
        "venv/**\nbuild/",
        "#x\n\n",
    ];
    for _ in 0..40 {
        let mut case = Vec::new();
        for key in KEYS {
            if rng.chance(35) {
                let name = if rng.chance(50) {
                    upper(key)
                } else {
                    lower(key)
                };
                case.push((name, rng.pick(&values).to_string()));
            }
        }
        cases.push(case);
    }
    cases
}

fn env_defaults() -> Result<Completion, Failed> {
    let oracle = match common::oracle_or_skip() {
        Ok(path) => path,
        Err(outcome) => return outcome,
    };
    let work = tempfile::tempdir().unwrap();
    let roots = build_trees(&work.path().join("trees"));
    let mut argv = vec!["--env-defaults".to_string()];
    argv.extend(roots.iter().map(|r| r.display().to_string()));
    let mut batch = OracleBatch::start(&oracle);
    let mut tally = Tally::new();
    for case in env_cases(&mut Rng::new(11)) {
        let expected = batch.call(&argv, &case);
        let mut cmd = command(binary());
        cmd.args(["scan", "--no-project-config"]).args(&roots);
        for (k, v) in &case {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let what = format!("env {case:?}");
        tally.check(&what, &expected, &out, &|msg: &str| {
            vec![(
                "variable",
                case.iter().any(|(k, _)| msg.contains(k.as_str())),
            )]
        });
    }
    let summary = format!(
        "env defaults: {} cases, {} where the reference returns, {} where it raises, {} differences",
        tally.cases,
        tally.returns,
        tally.raises,
        tally.failures.len()
    );
    tally.finish(summary)
}
