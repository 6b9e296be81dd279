//! The curated fixture trees (fixtures/trees/, symlinks included) under each of
//! fixtures/configs/, compared byte for byte with the project's oracle
//! (tests/oracle/oracle), `scan` and `render`.
//!
//! Token counts include the absolute path, so an expectation holds only where it
//! was made: the trees are copied to a fresh temporary directory and the oracle
//! computes the expectation there, instead of a fixed machine path. (The files in
//! fixtures/expected/ are the same outputs made at one fixed place by
//! scripts/regen-fixtures, for reading.) Without the oracle the test is ignored
//! with the reason, or fails under PROMPTINCLUDE_REQUIRE_ORACLE=1.

mod common;

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use common::{binary, command};
use libtest_mimic::{Completion, Failed, Trial};

fn main() {
    common::run_trials(vec![Trial::ignorable_test(
        "fixture_trees_match_the_oracle",
        fixture_trees_match_the_oracle,
    )]);
}

/// Copies `from` to `to`, keeping symlinks as symlinks.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().unwrap();
        if kind.is_symlink() {
            symlink(fs::read_link(entry.path()).unwrap(), &target).unwrap();
        } else if kind.is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn sorted_entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    entries
}

fn fixture_trees_match_the_oracle() -> Result<Completion, Failed> {
    let oracle = match common::oracle_or_skip() {
        Ok(path) => path,
        Err(outcome) => return outcome,
    };
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let base = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut failures = Vec::new();
    for tree in sorted_entries(&fixtures.join("trees")) {
        let name = tree.file_name().unwrap().to_str().unwrap().to_string();
        copy_tree(&tree, &base.path().join(&name));
        for config in sorted_entries(&fixtures.join("configs")) {
            let stem = config.file_stem().unwrap().to_str().unwrap();
            for mode in ["scan", "render"] {
                // Both run from the copy's parent with the relative root, as
                // scripts/regen-fixtures does.
                let mut expected = command(&oracle);
                if mode == "render" {
                    expected.arg("--render");
                }
                let expected = expected
                    .current_dir(base.path())
                    .arg("--config")
                    .arg(&config)
                    .arg(&name)
                    .output()
                    .unwrap();
                assert!(expected.status.success(), "oracle {mode} {name} {stem}");
                let out = command(binary())
                    .current_dir(base.path())
                    .args([mode, "--config"])
                    .arg(&config)
                    .arg(&name)
                    .output()
                    .unwrap();
                checked += 1;
                if !out.status.success() {
                    failures.push(format!(
                        "{mode} {name} with {stem} exits {}: {}",
                        out.status,
                        String::from_utf8_lossy(&out.stderr)
                    ));
                } else if out.stdout != expected.stdout {
                    failures.push(format!(
                        "{mode} {name} with {stem}:\n--- expected\n{}\n--- actual\n{}",
                        String::from_utf8_lossy(&expected.stdout),
                        String::from_utf8_lossy(&out.stdout)
                    ));
                }
            }
        }
    }
    assert!(checked >= 24, "only {checked} fixture outputs found");
    if !failures.is_empty() {
        return Err(format!(
            "{} of {checked} fixture outputs differ:\n{}",
            failures.len(),
            failures.join("\n")
        )
        .into());
    }
    Ok(Completion::Completed)
}
