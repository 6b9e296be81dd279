//! Differential test: random trees × random configurations, compared byte
//! for byte with the project's oracle, tests/oracle/oracle (`scan` JSON Lines
//! and the rendered sections). Contents and names carry the host's template
//! directives (`common::DIRECTIVES`), so the sections test its include pass. Where the oracle cannot run, the test is
//! reported as ignored with the reason, or fails when
//! PROMPTINCLUDE_REQUIRE_ORACLE=1 (CI). Runs alone with
//! `cargo test --release --test differential`.
//!
//! Knobs: PROMPTINCLUDE_DIFF_TREES (default 200), PROMPTINCLUDE_DIFF_CONFIGS
//! (default 6), PROMPTINCLUDE_DIFF_SEED (default 1).

mod common;

use std::path::PathBuf;
use std::process::Command;

use common::{binary, command, random_config, random_tree, random_tree_with_directives, Rng};
use libtest_mimic::{Completion, Failed, Trial};

fn main() {
    common::run_trials(vec![Trial::ignorable_test(
        "random_trees_match_the_oracle",
        random_trees_match_the_oracle,
    )]);
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("command runs");
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let i = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    let lo = i.saturating_sub(200);
    format!(
        "at byte {i}:\n  oracle: {:?}\n  ours:   {:?}",
        String::from_utf8_lossy(&a[lo..(i + 200).min(a.len())]),
        String::from_utf8_lossy(&b[lo..(i + 200).min(b.len())])
    )
}

fn random_trees_match_the_oracle() -> Result<Completion, Failed> {
    let oracle = match common::oracle_or_skip() {
        Ok(path) => path,
        Err(outcome) => return outcome,
    };
    let trees = env_usize("PROMPTINCLUDE_DIFF_TREES", 200);
    let configs = env_usize("PROMPTINCLUDE_DIFF_CONFIGS", 6);
    let seed = env_usize("PROMPTINCLUDE_DIFF_SEED", 1) as u64;
    let work = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(seed);
    let roots: Vec<PathBuf> = (0..trees)
        .map(|i| {
            let root = work.path().join(format!("t{i:04}"));
            // Half the trees carry host directives in names and texts; the
            // other half keep short plain names, whose small path costs let
            // a tight budget reach the rare `skipped` status on any seed.
            if i % 2 == 0 {
                random_tree_with_directives(&mut rng, &root);
            } else {
                random_tree(&mut rng, &root);
            }
            root
        })
        .collect();
    let mut compared = 0;
    let mut failures = Vec::new();
    // How often each situation occurred, so the test proves it covered them.
    let mut seen: std::collections::BTreeMap<String, usize> = Default::default();
    for c in 0..configs {
        let cfg = random_config(&mut rng, c);
        let cfg_path = work.path().join(format!("config{c}.json"));
        std::fs::write(&cfg_path, cfg.to_string()).unwrap();
        let expected = run(command(&oracle).arg("--config").arg(&cfg_path).args(&roots));
        let actual = run(command(binary())
            .args(["scan", "-j", "2", "--config"])
            .arg(&cfg_path)
            .args(&roots));
        let exp_lines: Vec<&[u8]> = expected.split(|&b| b == b'\n').collect();
        let act_lines: Vec<&[u8]> = actual.split(|&b| b == b'\n').collect();
        assert_eq!(exp_lines.len(), act_lines.len(), "config {cfg}: line count");
        for (i, (e, a)) in exp_lines.iter().zip(&act_lines).enumerate() {
            compared += 1;
            if let Ok(record) = serde_json::from_slice::<serde_json::Value>(e) {
                for file in record["files"].as_array().into_iter().flatten() {
                    *seen
                        .entry(file["status"].as_str().unwrap_or("?").to_string())
                        .or_default() += 1;
                }
                for file in record["files"].as_array().into_iter().flatten() {
                    let (path, content) = (
                        file["path"].as_str().unwrap_or(""),
                        file["content"].as_str().unwrap_or(""),
                    );
                    if content.contains("include original") {
                        *seen
                            .entry("include original in content".into())
                            .or_default() += 1;
                    }
                    if path.contains("include") || path.contains("{{content}}") {
                        *seen.entry("directive in path".into()).or_default() += 1;
                    }
                }
                if record["skipped_count"].as_i64().unwrap_or(0) > 0 {
                    *seen.entry("skipped_count>0".into()).or_default() += 1;
                }
            }
            if e != a {
                failures.push(format!(
                    "scan, config {cfg}, root {}: {}",
                    roots.get(i).map_or("-".into(), |r| r.display().to_string()),
                    first_difference(e, a)
                ));
            }
        }
        // Rendered sections.
        let expected = run(command(&oracle)
            .arg("--render")
            .arg("--config")
            .arg(&cfg_path)
            .args(&roots));
        let out_dir = work.path().join(format!("render{c}"));
        run(command(binary())
            .args(["render", "--config"])
            .arg(&cfg_path)
            .arg("--out-dir")
            .arg(&out_dir)
            .args(&roots));
        let index: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out_dir.join("index.json")).unwrap()).unwrap();
        let sections: Vec<Vec<u8>> = index["roots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| std::fs::read(out_dir.join(r["section"].as_str().unwrap())).unwrap())
            .collect();
        let actual = sections.join(&b"\x1e\n"[..]);
        if expected != actual {
            failures.push(format!(
                "render, config {cfg}: {}",
                first_difference(&expected, &actual)
            ));
        }
    }
    eprintln!("differential: {trees} trees x {configs} configs, {compared} scan records compared, {} differences; statuses seen: {seen:?}", failures.len());
    if trees * configs >= 60 {
        for situation in [
            "ok",
            "cropped",
            "skipped",
            "skipped_count>0",
            "include original in content",
            "directive in path",
        ] {
            assert!(
                seen.contains_key(situation),
                "the random cases never produced {situation}: {seen:?}"
            );
        }
    }
    if !failures.is_empty() {
        return Err(format!(
            "{} differences:\n{}",
            failures.len(),
            failures
                .iter()
                .take(5)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        )
        .into());
    }
    Ok(Completion::Completed)
}
