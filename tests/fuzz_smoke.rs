//! The fuzz targets on stable Rust, as part of the test suite: every committed
//! seed (`fuzz/corpus/<target>/`), then seeded random mutations of them for a
//! time budget, through the same target bodies cargo-fuzz runs
//! (`fuzz/src/lib.rs`). Plus the reference's own verdicts on fuzz inputs
//! (`fixtures/fuzz/*_verdicts.jsonl`, written by `fuzz/oracle-verdicts.py`
//! with the oracle's pathspec and fnmatch), which the matchers must reproduce.
//!
//! Knobs: PROMPTINCLUDE_FUZZ_SECS (mutation time per target, default 2; CI
//! sets 10), PROMPTINCLUDE_FUZZ_SEED (default: a fresh seed, printed, so each
//! run mutates differently). Long runs: see `docs/fuzzing.md`.

use crate::common;
#[path = "../fuzz/src/lib.rs"]
mod targets;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use common::Rng;
use promptinclude::discover::fnmatch::NamePattern;
use promptinclude::discover::gitwildmatch::{gitignore_lines, IgnoreSpec, PatternErrorKind};
use serde_json::Value;

/// Byte strings worth inserting: the syntax every target cares about.
const TOKENS: &[&[u8]] = &[
    b"[",
    b"]",
    b"!",
    b"^",
    b"-",
    b"\\",
    b"/",
    b"*",
    b"**",
    b"?",
    b"#",
    b" ",
    b"\n",
    b"\r",
    b"\r\n",
    b"\x00",
    b"\xff",
    b"\xe2\x82",
    b"\xed\xa0\x80",
    "\u{85}".as_bytes(),
    "\u{2028}".as_bytes(),
    "\u{3000}".as_bytes(),
    "日".as_bytes(),
    "😀".as_bytes(),
    b"'s",
    b"123",
    b"{",
    b"}",
    b":",
    b"\"",
    b",",
    b"~",
    b"&",
    b"!!str",
    b"- ",
    b"1e3",
    b"-1",
    b"18446744073709551616",
    b"max_depth",
    b"gitignore",
    b"name_pattern",
    b"max_total_tokens",
];

/// One random edit of `data` (possibly splicing in `other`).
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8]) {
    let at = rng.below(data.len() + 1);
    match rng.below(6) {
        0 if !data.is_empty() => {
            let i = rng.below(data.len());
            data[i] ^= 1 << rng.below(8);
        }
        1 => {
            let t = TOKENS[rng.below(TOKENS.len())];
            data.splice(at..at, t.iter().copied());
        }
        2 if !data.is_empty() => {
            let end = (at + 1 + rng.below(8)).min(data.len());
            data.drain(at.min(end)..end);
        }
        3 if !data.is_empty() => {
            let start = rng.below(data.len());
            let end = (start + 1 + rng.below(16)).min(data.len());
            let piece = data[start..end].to_vec();
            data.splice(at..at, piece);
        }
        4 if !other.is_empty() => {
            let start = rng.below(other.len());
            let end = (start + 1 + rng.below(32)).min(other.len());
            data.splice(at..at, other[start..end].iter().copied());
        }
        _ => data.insert(at, rng.next() as u8),
    }
    data.truncate(4096);
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Feeds `target` every seed of `fuzz/corpus/<name>`, then mutations for the
/// time budget. Returns the number of inputs run.
fn smoke(name: &str, target: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(name);
    let mut seeds: Vec<Vec<u8>> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| fs::read(e.unwrap().path()).unwrap())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "no seeds in {}", dir.display());
    for seed in &seeds {
        target(seed);
    }
    let budget = Duration::from_secs(env_u64("PROMPTINCLUDE_FUZZ_SECS", 2));
    let mut rng = Rng::new(common::fresh_seed("PROMPTINCLUDE_FUZZ_SEED"));
    let started = Instant::now();
    let mut runs = seeds.len();
    while started.elapsed() < budget {
        let mut data = seeds[rng.below(seeds.len())].clone();
        let other = &seeds[rng.below(seeds.len())];
        for _ in 0..1 + rng.below(8) {
            mutate(&mut rng, &mut data, other);
        }
        target(&data);
        runs += 1;
    }
    eprintln!(
        "fuzz smoke {name}: {runs} inputs in {:?}",
        started.elapsed()
    );
    runs
}

#[test]
fn gitignore_target() {
    smoke("gitignore", targets::gitignore);
}

#[test]
fn fnmatch_target() {
    smoke("fnmatch", targets::fnmatch);
}

#[test]
fn decode_target() {
    smoke("decode", targets::decode);
}

#[test]
fn trim_target() {
    smoke("trim", targets::trim);
}

#[test]
fn config_target() {
    smoke("config", targets::config);
}

fn verdicts(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/fuzz")
        .join(name);
    fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kind_name(kind: PatternErrorKind) -> &'static str {
    match kind {
        PatternErrorKind::InvalidPattern => "InvalidPattern",
        PatternErrorKind::BadCharacterRange => "BadCharacterRange",
    }
}

/// pathspec's accept/reject (failing line and exception) and its ignore
/// verdicts on fuzz-found gitignore texts; the fuzz target's independent
/// model of which lines raise must agree with the reference too.
#[test]
fn gitignore_verdicts_match_the_reference() {
    let records = verdicts("gitignore_verdicts.jsonl");
    assert!(records.len() > 1000);
    let mut failures = Vec::new();
    for record in &records {
        let text = record["text"].as_str().unwrap();
        let want = record["error"].as_object().map(|e| {
            (
                e["line"].as_u64().unwrap() as usize,
                e["kind"].as_str().unwrap(),
            )
        });
        let model =
            gitignore_lines(text).find_map(|(n, line)| match targets::pathspec_line(line) {
                targets::LineVerdict::Raises(kind) => Some((n, kind_name(kind))),
                _ => None,
            });
        if model != want {
            failures.push(format!(
                "model {model:?} != reference {want:?} for {text:?}"
            ));
        }
        match (IgnoreSpec::from_gitignore_text(text), want) {
            (Err(e), Some(want)) if (e.line_number, kind_name(e.kind)) == want => {}
            (Ok(spec), None) => {
                for probe in record["probes"].as_array().unwrap() {
                    let path = probe[0].as_str().unwrap();
                    let (file, dir) = (probe[1].as_bool().unwrap(), probe[2].as_bool().unwrap());
                    let got = spec.as_ref().map_or((false, false), |s| {
                        (s.is_file_ignored(path), s.is_dir_ignored(path))
                    });
                    if got != (file, dir) {
                        failures.push(format!(
                            "{text:?}: {path:?} (file, dir) = {got:?}, reference {:?}",
                            (file, dir)
                        ));
                    }
                }
            }
            (got, want) => failures.push(format!(
                "{text:?}: got {:?}, reference {want:?}",
                got.map(|_| ())
                    .map_err(|e| (e.line_number, kind_name(e.kind)))
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} records differ:\n{}",
        failures.len(),
        records.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// Python `fnmatch` verdicts on fuzz-found pattern/name pairs.
#[test]
fn fnmatch_verdicts_match_the_reference() {
    let records = verdicts("fnmatch_verdicts.jsonl");
    assert!(records.len() > 1000);
    let mut failures = Vec::new();
    for record in &records {
        let pattern = record["pattern"].as_str().unwrap();
        let name = record["name"].as_str().unwrap();
        let got = NamePattern::new(pattern).unwrap().is_match(name);
        if got != record["match"].as_bool().unwrap() {
            failures.push(format!("{pattern:?} vs {name:?}: got {got}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} records differ:\n{}",
        failures.len(),
        records.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}
