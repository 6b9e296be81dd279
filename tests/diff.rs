//! `promptinclude diff`: every kind of change, each format (text and
//! Markdown against reviewed snapshots), exit codes, errors, and a random
//! differential against the oracle: the sections the diff compares are the
//! oracle's renders of the two trees, and every rule file whose scan
//! record changed is listed with the oracle's status and tokens.
//!
//! Snapshots are insta's, in tests/snapshots/diff/; the temporary
//! repository's path is written there as `<ROOT>`. `INSTA_UPDATE=always`
//! rewrites them (review the change before committing it); where `CI` is set
//! (or `INSTA_UPDATE=no`) nothing is written and a missing or changed
//! snapshot fails.
//!
//! Knobs: PROMPTINCLUDE_DIFF_REPOS (random repositories, default 16),
//! PROMPTINCLUDE_DIFF_SEED (default 5).

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::git::{git, ok};
use common::{binary, command, random_config, random_text, random_tree, Rng};
use serde_json::Value;

fn diff(cwd: &Path, args: &[impl AsRef<std::ffi::OsStr>]) -> Output {
    command(binary())
        .arg("diff")
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn commit(repo: &Path, message: &str) {
    ok(git(repo).args(["add", "-A", "-f", "."]));
    ok(git(repo).args(["commit", "-q", "--allow-empty", "-m", message]));
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A repository with tags `v1` and `v2` that between them hold every kind
/// of change: `a` changed, `b` removed, `d` added, `docs/c` grown past the
/// per-file cap (ok → cropped), `z` pushed out of the total budget
/// (cropped → skipped), and an ignored file changed (not listed); in a new
/// temporary directory (the guard), at `repo` inside it.
fn kinds_repo() -> (tempfile::TempDir, PathBuf) {
    let guard = tempfile::tempdir().unwrap();
    let repo = guard.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    ok(git(&repo).args(["init", "-q"]));
    write(&repo.join("a.promptinclude.md"), "Use tabs.\n");
    write(&repo.join("b.promptinclude.md"), "An old rule.\n");
    write(
        &repo.join("docs/c.promptinclude.md"),
        "Write docs in English.\n",
    );
    write(&repo.join("node_modules/x.promptinclude.md"), "ignored\n");
    write(
        &repo.join("z.promptinclude.md"),
        &"The last rule. ".repeat(60),
    );
    commit(&repo, "v1");
    ok(git(&repo).args(["tag", "v1"]));
    write(
        &repo.join("a.promptinclude.md"),
        "Use spaces, four of them.\n",
    );
    fs::remove_file(repo.join("b.promptinclude.md")).unwrap();
    write(&repo.join("d.promptinclude.md"), "A new rule.\n");
    write(
        &repo.join("docs/c.promptinclude.md"),
        &"Every public item has a doc comment that says why. ".repeat(20),
    );
    write(&repo.join("node_modules/x.promptinclude.md"), "changed\n");
    commit(&repo, "v2");
    ok(git(&repo).args(["tag", "v2"]));
    (guard, repo)
}

/// The per-file cap that crops `docs/c` (and `z`) in [`kinds_repo`].
const FILE_CAP: i64 = 100;

/// Budget flags for [`kinds_repo`]: the total leaves 25 tokens after `z`'s
/// path at v2 (so `z` is skipped), which at v1 is room for `z` cropped to
/// the cap. Paths cost tokens too, so the total is worked out from the
/// repository's own paths (tiktoken-rs counts them).
fn budget(repo: &Path) -> Vec<String> {
    let out = command(binary())
        .args(["scan", "--rev", "v2", "--max-total-tokens", "1000000"])
        .args(["--max-file-tokens", &FILE_CAP.to_string()])
        .arg(repo)
        .output()
        .unwrap();
    let v2: Value = serde_json::from_slice(&out.stdout).unwrap();
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let path_cost = |path: &str| bpe.encode_ordinary(path).len() as i64 + 5;
    let mut total = 0;
    for f in v2["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        total += path_cost(path);
        if path.ends_with("/z.promptinclude.md") {
            total += 25;
            break;
        }
        total += f["token_count"].as_i64().unwrap();
    }
    [
        "--max-file-tokens",
        &FILE_CAP.to_string(),
        "--max-total-tokens",
        &total.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

fn with_budget(repo: &Path, head: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = head.iter().map(|s| s.to_string()).collect();
    all.extend(budget(repo));
    all
}

/// What a snapshot must not hold: the root, and the budget figures of a diff
/// of `base` and `head` (they count the tokens of absolute paths, so they
/// depend on where the temporary directory is), taken from its JSON form.
fn volatile(repo: &Path, base: &str, head: &str) -> Vec<(String, &'static str)> {
    let v = json(&diff(
        repo,
        &with_budget(repo, &["--format", "json", base, head]),
    ));
    let before = v["before"]["budget_used"].as_i64().unwrap();
    let after = v["after"]["budget_used"].as_i64().unwrap();
    let max = v["max_total_tokens"].as_i64().unwrap();
    let delta = match after - before {
        d if d > 0 => format!("+{d}"),
        d => d.to_string(),
    };
    vec![
        (repo.display().to_string(), "<ROOT>"),
        (
            format!("{before} → {after} of {max} ({delta})"),
            "<BEFORE> → <AFTER> of <MAX> (<DELTA>)",
        ),
        (format!("(budget used {delta})"), "(budget used <DELTA>)"),
    ]
}

/// Compares `actual`, `volatile` values replaced by their placeholders,
/// with the reviewed snapshot `tests/snapshots/diff/NAME.snap`. insta
/// compares text with trailing whitespace trimmed, so an `<END>` line closes
/// it: the last line (often a diff's empty context line, ` `) and the final
/// newline are compared too.
fn check_snapshot(name: &str, actual: &str, volatile: &[(String, &str)]) {
    let normalized = volatile
        .iter()
        .fold(actual.to_string(), |text, (value, placeholder)| {
            text.replace(value, placeholder)
        });
    insta::with_settings!({
        snapshot_path => "snapshots/diff",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, format!("{normalized}<END>"));
    });
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn every_kind_of_change_in_json() {
    let (_dir, repo) = kinds_repo();
    let flags = budget(&repo);
    let out = diff(
        &repo,
        &with_budget(&repo, &["--format", "json", "v1", "v2"]),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json(&out);
    assert_eq!(v["schema"], "promptinclude.diff/2");
    assert_eq!(v["prompt_changed"], true);
    let files: Vec<(String, String, Value, Value)> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rel"].as_str().unwrap().to_string(),
                f["change"].as_str().unwrap().to_string(),
                f["before"]["status"].clone(),
                f["after"]["status"].clone(),
            )
        })
        .collect();
    let expect = |rel: &str, change: &str, before: Value, after: Value| {
        (rel.to_string(), change.to_string(), before, after)
    };
    assert_eq!(
        files,
        vec![
            expect("a.promptinclude.md", "changed", "ok".into(), "ok".into()),
            expect("b.promptinclude.md", "removed", "ok".into(), Value::Null),
            expect("d.promptinclude.md", "added", Value::Null, "ok".into()),
            expect(
                "docs/c.promptinclude.md",
                "status_changed",
                "ok".into(),
                "cropped".into()
            ),
            expect(
                "z.promptinclude.md",
                "status_changed",
                "cropped".into(),
                "skipped".into()
            ),
        ]
    );
    // Tokens are the scans' token_count of each side.
    let scan = |rev: &str| -> Value {
        let out = command(binary())
            .args(["scan", "--rev", rev])
            .args(&flags)
            .arg(&repo)
            .output()
            .unwrap();
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let (v1, v2) = (scan("v1"), scan("v2"));
    let tokens = |scan: &Value, path: &str| {
        scan["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .map(|f| f["token_count"].clone())
    };
    for f in v["files"].as_array().unwrap() {
        let path = f["path"].as_str().unwrap();
        assert_eq!(
            Some(f["before"]["tokens"].clone()).filter(|t| !t.is_null()),
            tokens(&v1, path),
            "{path}"
        );
        assert_eq!(
            Some(f["after"]["tokens"].clone()).filter(|t| !t.is_null()),
            tokens(&v2, path),
            "{path}"
        );
    }
    let sum = |scan: &Value| -> i64 {
        scan["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["token_count"].as_i64().unwrap())
            .sum()
    };
    assert_eq!(v["before"]["included_tokens"].as_i64(), Some(sum(&v1)));
    assert_eq!(v["after"]["included_tokens"].as_i64(), Some(sum(&v2)));
    assert_eq!(v["after"]["skipped_count"], v2["skipped_count"]);
    // The budget used, as the reference counts it: path tokens + 5 and the
    // text of every file included (tiktoken-rs counts the paths).
    let bpe = tiktoken_rs::cl100k_base_singleton();
    let used = |scan: &Value| -> i64 {
        scan["files"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["status"] != "skipped")
            .map(|f| {
                bpe.encode_ordinary(f["path"].as_str().unwrap()).len() as i64
                    + 5
                    + f["token_count"].as_i64().unwrap()
            })
            .sum()
    };
    assert_eq!(v["before"]["budget_used"].as_i64(), Some(used(&v1)));
    assert_eq!(v["after"]["budget_used"].as_i64(), Some(used(&v2)));
    assert_eq!(v["max_total_tokens"].to_string(), flags[3]);
}

#[test]
fn text_and_markdown_snapshots() {
    let (_dir, repo) = kinds_repo();
    let changed = volatile(&repo, "v1", "v2");
    for (format, name) in [("text", "kinds.txt"), ("markdown", "kinds.md")] {
        let out = diff(
            &repo,
            &with_budget(&repo, &["--format", format, "v1", "v2"]),
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        check_snapshot(name, &String::from_utf8(out.stdout).unwrap(), &changed);
    }
    let unchanged = volatile(&repo, "v2", "v2");
    let out = diff(
        &repo,
        &with_budget(&repo, &["--format", "markdown", "v2", "v2"]),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    check_snapshot(
        "unchanged.md",
        &String::from_utf8(out.stdout).unwrap(),
        &unchanged,
    );
    let out = diff(&repo, &with_budget(&repo, &["v2", "v2"]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    check_snapshot(
        "unchanged.txt",
        &String::from_utf8(out.stdout).unwrap(),
        &unchanged,
    );
}

#[test]
fn colour_only_when_asked() {
    let (_dir, repo) = kinds_repo();
    let plain = diff(&repo, &with_budget(&repo, &["v1", "v2"]));
    assert!(!plain.stdout.contains(&0x1b));
    let coloured = diff(
        &repo,
        &with_budget(&repo, &["--color", "always", "v1", "v2"]),
    );
    let text = String::from_utf8(coloured.stdout).unwrap();
    assert!(text.contains("\x1b[32m+"), "{text}");
    assert!(text.contains("\x1b[31m-"), "{text}");
    let stripped = regex::Regex::new("\x1b\\[[0-9;]*m")
        .unwrap()
        .replace_all(&text, "");
    assert_eq!(stripped, String::from_utf8(plain.stdout).unwrap());
}

#[test]
fn long_markdown_diffs_collapse_and_fences_outrun_rule_text() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    fs::create_dir_all(&repo).unwrap();
    ok(git(&repo).args(["init", "-q"]));
    write(&repo.join("a.promptinclude.md"), "short\n");
    commit(&repo, "one");
    let body: String = (0..80).map(|i| format!("rule {i}\n````\n")).collect();
    write(&repo.join("a.promptinclude.md"), &body);
    commit(&repo, "two");
    let out = diff(&repo, &["--format", "markdown", "HEAD~1", "HEAD"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("<details><summary>"),
        "long diffs start collapsed"
    );
    assert!(
        text.contains("\n`````diff\n"),
        "the fence outruns ````:\n{text}"
    );
    let short = diff(&repo, &["--format", "markdown", "-U", "0", "HEAD", "HEAD"]);
    assert!(!String::from_utf8(short.stdout)
        .unwrap()
        .contains("<details"));
}

#[test]
fn worktree_sees_modified_and_untracked_files() {
    let (_dir, repo) = kinds_repo();
    write(
        &repo.join("a.promptinclude.md"),
        "Use spaces, eight of them.\n",
    );
    write(&repo.join("e.promptinclude.md"), "Untracked.\n");
    let out = diff(
        &repo,
        &with_budget(&repo, &["--worktree", "--format", "json", "v2"]),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json(&out);
    let changes: BTreeMap<String, String> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rel"].as_str().unwrap().into(),
                f["change"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        changes.get("a.promptinclude.md").map(String::as_str),
        Some("changed")
    );
    assert_eq!(
        changes.get("e.promptinclude.md").map(String::as_str),
        Some("added")
    );
    assert_eq!(v["head"], "worktree");
    // Back to v2's files: the prompt is the same again.
    ok(git(&repo).args(["checkout", "-q", "-f", "v2"]));
    fs::remove_file(repo.join("e.promptinclude.md")).unwrap();
    let out = diff(&repo, &with_budget(&repo, &["--worktree", "v2", "."]));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
}

#[test]
fn errors_exit_2_and_say_where() {
    let (guard, repo) = kinds_repo();
    let dir = &guard;
    let cases: &[(&[&str], &str)] = &[
        (&["v1", "no-such-rev"], "no-such-rev"),
        (&["v1"], "BASE HEAD"),
        (&["--worktree", "v1", ".", "extra"], "--worktree"),
        (&["v1", "v2", "not-here"], "not-here"),
    ];
    for (argv, needle) in cases {
        let out = diff(&repo, argv);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{argv:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{argv:?}: nothing on stdout");
    }
    // Not a repository.
    let plain = dir.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    let out = diff(&plain, &["HEAD~1", "HEAD"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // Issue 21 item 8: a bare repository has no work tree; an unborn HEAD has no commit.
    let bare = dir.path().join("bare.git");
    ok(git(dir.path())
        .args(["clone", "-q", "--bare"])
        .arg(&repo)
        .arg(&bare));
    let unborn = dir.path().join("unborn");
    ok(git(dir.path()).args(["init", "-q"]).arg(&unborn));
    let cases: [(&Path, &[&str], &str); 2] = [
        (
            dir.path(),
            &["--worktree", "v1", "bare.git"],
            "is a bare repository",
        ),
        (&unborn, &["--worktree", "HEAD"], "has no commits yet"),
    ];
    for (cwd, argv, needle) in cases {
        let out = diff(cwd, argv);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(needle), "{argv:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_skipped_file_that_grew_is_no_change() {
    // Issue 21 item 7: its full token count changed, its record did not.
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().to_path_buf();
    ok(git(&repo).args(["init", "-q"]));
    write(&repo.join("a.promptinclude.md"), &"x ".repeat(100));
    commit(&repo, "one");
    write(&repo.join("a.promptinclude.md"), &"x ".repeat(120));
    commit(&repo, "two");
    let out = diff(
        &repo,
        &[
            "--no-env",
            "--max-total-tokens",
            "60",
            "--format",
            "json",
            "HEAD~1",
            "HEAD",
        ],
    );
    let v = json(&out);
    assert_eq!(v["prompt_changed"], false);
    assert_eq!(v["files"], serde_json::json!([]), "{v}");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn bare_repositories_diff_without_a_checkout() {
    let (guard, repo) = kinds_repo();
    let dir = &guard;
    let bare = dir.path().join("bare.git");
    ok(git(dir.path())
        .args(["clone", "-q", "--bare"])
        .arg(&repo)
        .arg(&bare));
    let from_bare = diff(
        dir.path(),
        &with_budget(&bare, &["--format", "json", "v1", "v2", "bare.git"]),
    );
    let from_work = diff(
        &repo,
        &with_budget(&repo, &["--format", "json", "v1", "v2"]),
    );
    assert_eq!(from_bare.status.code(), Some(1));
    let (b, w) = (json(&from_bare), json(&from_work));
    let strip = |v: &Value| -> Vec<Value> {
        let mut files = v["files"].as_array().unwrap().clone();
        for f in &mut files {
            f.as_object_mut().unwrap().remove("path");
        }
        files
    };
    assert_eq!(strip(&b), strip(&w));
    assert_eq!(strip(&b).len(), 5);
    // The paths (in the section) differ; the budget's use does not.
    for side in ["before", "after"] {
        assert_eq!(b[side]["included_tokens"], w[side]["included_tokens"]);
        assert_eq!(b[side]["rule_files"], w[side]["rule_files"]);
    }
}

// ---------------------------------------------------------------- oracle

/// Removes what git cannot commit or a checkout would not reproduce:
/// nested `.git` directories and symlinks (tests/git_rev.rs covers those).
fn make_committable(dir: &Path, top: bool) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let meta = fs::symlink_metadata(&path).unwrap();
        if meta.file_type().is_symlink() {
            fs::remove_file(&path).unwrap();
        } else if meta.is_dir() {
            if entry.file_name() == ".git" && !top {
                fs::remove_dir_all(&path).unwrap();
            } else if !(top && entry.file_name() == ".git") {
                make_committable(&path, false);
            }
        }
    }
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_name() == ".git" {
            continue;
        }
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// Edits, deletes, truncates and adds rule files at random.
fn mutate(rng: &mut Rng, root: &Path) {
    let mut files = Vec::new();
    files_under(root, &mut files);
    files.sort();
    for file in &files {
        match rng.below(10) {
            0..=2 => fs::write(file, random_text(rng)).unwrap(),
            3 => fs::remove_file(file).unwrap(),
            4 => {
                let mut text = fs::read(file).unwrap();
                text.extend(random_text(rng));
                fs::write(file, text).unwrap();
            }
            _ => {}
        }
    }
    for i in 0..rng.below(4) {
        let dir = files
            .get(rng.below(files.len().max(1)))
            .and_then(|f| f.parent())
            .unwrap_or(root)
            .to_path_buf();
        if dir.is_dir() {
            fs::write(
                dir.join(format!("new{i}.promptinclude.md")),
                random_text(rng),
            )
            .unwrap();
        }
    }
}

/// `(status, token_count, content)` by path, from one oracle scan line.
type Entries = BTreeMap<String, (String, i64, String)>;

fn entries(line: &[u8]) -> Entries {
    let v: Value = serde_json::from_slice(line).unwrap();
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                (
                    f["status"].as_str().unwrap().to_string(),
                    f["token_count"].as_i64().unwrap(),
                    f["content"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect()
}

/// The two sides of a unified diff printed with unbounded context.
fn sides_of(unified: &str) -> (String, String) {
    let (mut old, mut new) = (String::new(), String::new());
    for line in unified.split_inclusive('\n').skip(2) {
        match line.as_bytes().first() {
            Some(b' ') => {
                old.push_str(&line[1..]);
                new.push_str(&line[1..]);
            }
            Some(b'-') => old.push_str(&line[1..]),
            Some(b'+') => new.push_str(&line[1..]),
            _ => {}
        }
    }
    (old, new)
}

struct State {
    scans: Vec<Vec<u8>>,
    renders: Vec<Vec<u8>>,
}

fn oracle_state(oracle: &Path, configs: &[PathBuf], roots: &[PathBuf]) -> Vec<State> {
    configs
        .iter()
        .map(|cfg| {
            let run = |render: bool| {
                let mut cmd = command(oracle);
                if render {
                    cmd.arg("--render");
                }
                let out = cmd.arg("--config").arg(cfg).args(roots).output().unwrap();
                assert!(out.status.success(), "oracle: {out:?}");
                out.stdout
            };
            let scans = run(false)
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(<[u8]>::to_vec)
                .collect();
            let render = run(true);
            let renders = render
                .split(|&b| b == 0x1e)
                .enumerate()
                .map(|(i, part)| {
                    part.strip_prefix(if i == 0 { &b""[..] } else { b"\n" })
                        .unwrap()
                        .to_vec()
                })
                .collect();
            State { scans, renders }
        })
        .collect()
}

#[test]
fn random_changes_match_the_oracle() {
    let oracle = match common::find_oracle() {
        Ok(path) => path,
        Err(reason) if std::env::var("PROMPTINCLUDE_REQUIRE_ORACLE").as_deref() == Ok("1") => {
            panic!("the oracle is required (PROMPTINCLUDE_REQUIRE_ORACLE=1) but {reason}")
        }
        Err(reason) => {
            eprintln!("SKIPPED: {reason}");
            return;
        }
    };
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let repos = env("PROMPTINCLUDE_DIFF_REPOS", 16) as usize;
    let mut rng = Rng::new(env("PROMPTINCLUDE_DIFF_SEED", 5));
    let dir = tempfile::tempdir().unwrap();
    let roots: Vec<PathBuf> = (0..repos)
        .map(|i| dir.path().join(format!("r{i}")))
        .collect();
    let configs: Vec<PathBuf> = (0..3)
        .map(|i| {
            let path = dir.path().join(format!("config{i}.json"));
            fs::write(&path, random_config(&mut rng, i).to_string()).unwrap();
            path
        })
        .collect();
    for root in &roots {
        random_tree(&mut rng, root);
        make_committable(root, true);
        ok(git(root).args(["init", "-q"]));
        commit(root, "one");
    }
    let before = oracle_state(&oracle, &configs, &roots);
    for root in &roots {
        mutate(&mut rng, root);
    }
    let after = oracle_state(&oracle, &configs, &roots);
    let (mut compared, mut changed_prompts, mut listed) = (0, 0, 0);
    for (c, cfg) in configs.iter().enumerate() {
        for (r, root) in roots.iter().enumerate() {
            let cfg = cfg.to_str().unwrap();
            // Unbounded context: the unified diff holds both sections whole.
            let whole = ["--format", "json", "-U", "1000000000", "--config", cfg];
            let worktree = diff(root, &[&whole[..], &["--worktree", "HEAD"]].concat());
            commit(root, "two");
            let revs = diff(root, &[&whole[..], &["HEAD~1", "HEAD"]].concat());
            ok(git(root).args(["reset", "-q", "--soft", "HEAD~1"]));
            let (old_render, new_render) = (&before[c].renders[r], &after[c].renders[r]);
            let (old, new) = (entries(&before[c].scans[r]), entries(&after[c].scans[r]));
            for (what, out) in [("--worktree", &worktree), ("revisions", &revs)] {
                let at = format!("{what}, config {c}, root {}", root.display());
                assert!(matches!(out.status.code(), Some(0 | 1)), "{at}: {out:?}");
                let v = json(out);
                let unified = v["section_diff"].as_str().unwrap();
                let prompt_changed = old_render != new_render;
                assert_eq!(v["prompt_changed"], prompt_changed, "{at}");
                assert_eq!(out.status.code(), Some(i32::from(prompt_changed)), "{at}");
                if prompt_changed {
                    let (o, n) = sides_of(unified);
                    assert_eq!(o.as_bytes(), &old_render[..], "{at}: old section");
                    assert_eq!(n.as_bytes(), &new_render[..], "{at}: new section");
                    changed_prompts += 1;
                } else {
                    assert_eq!(unified, "", "{at}");
                }
                let listed_files: BTreeMap<&str, &Value> = v["files"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| (f["path"].as_str().unwrap(), f))
                    .collect();
                listed += listed_files.len();
                let paths: std::collections::BTreeSet<&String> =
                    old.keys().chain(new.keys()).collect();
                for path in paths {
                    let (o, n) = (old.get(path), new.get(path));
                    if o == n {
                        // Whatever its status: an unchanged record is no change.
                        assert!(
                            !listed_files.contains_key(path.as_str()),
                            "{at}: {path} listed but unchanged"
                        );
                        continue;
                    }
                    let f = listed_files
                        .get(path.as_str())
                        .unwrap_or_else(|| panic!("{at}: {path} changed but not listed"));
                    for (side, entry) in [("before", o), ("after", n)] {
                        if let Some((status, tokens, _)) = entry {
                            assert_eq!(
                                f[side]["status"].as_str(),
                                Some(status.as_str()),
                                "{at}: {path} {side}"
                            );
                            assert_eq!(
                                f[side]["tokens"].as_i64(),
                                Some(*tokens),
                                "{at}: {path} {side}"
                            );
                        }
                    }
                }
                compared += 1;
            }
        }
    }
    eprintln!(
        "diff: {compared} diffs compared with the oracle ({changed_prompts} changed prompts, {listed} files listed), 0 differences"
    );
    assert!(
        changed_prompts > compared / 4,
        "too few changed prompts: {changed_prompts}"
    );
}

/// A repository whose `v2` pushes `services/payments/AGENTS.md` past
/// Codex's 32 KiB (so it is cut there) and gives `services/payments` a
/// `CLAUDE.md` that imports it; and an empty home for the agents.
fn agents_repo() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let guard = tempfile::tempdir().unwrap();
    let repo = guard.path().join("repo");
    let home = guard.path().join("home");
    fs::create_dir_all(&repo).unwrap();
    fs::create_dir_all(&home).unwrap();
    ok(git(&repo).args(["init", "-q"]));
    write(&repo.join("AGENTS.md"), "Root rules: small commits.\n");
    write(&repo.join("CLAUDE.md"), "@AGENTS.md\n");
    write(
        &repo.join("services/payments/AGENTS.md"),
        &"Money is integer cents. ".repeat(800),
    );
    write(&repo.join("services/payments/db/schema.sql"), "-- tables\n");
    write(&repo.join("docs/guide.md"), "A guide.\n");
    commit(&repo, "v1");
    ok(git(&repo).args(["tag", "v1"]));
    write(
        &repo.join("services/payments/AGENTS.md"),
        &"Money is integer cents. ".repeat(1500),
    );
    write(&repo.join("services/payments/CLAUDE.md"), "@AGENTS.md\n");
    commit(&repo, "v2");
    ok(git(&repo).args(["tag", "v2"]));
    (guard, repo, home)
}

/// `--agents AGENTS --home HOME` and `args`.
fn with_agents(agents: &str, home: &Path, args: &[&str]) -> Vec<String> {
    let mut all: Vec<String> = ["--agents", agents, "--home"].map(String::from).to_vec();
    all.push(home.display().to_string());
    all.extend(args.iter().map(|s| s.to_string()));
    all
}

#[test]
fn agents_chains_in_text_json_and_markdown_snapshots() {
    let (_dir, repo, home) = agents_repo();
    let root = vec![(repo.display().to_string(), "<ROOT>")];
    for (format, name) in [("text", "agents.txt"), ("markdown", "agents.md")] {
        let out = diff(
            &repo,
            &with_agents(
                "codex,claude-code",
                &home,
                &["--format", format, "v1", "v2"],
            ),
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        check_snapshot(name, &String::from_utf8(out.stdout).unwrap(), &root);
    }
    let out = diff(
        &repo,
        &with_agents(
            "codex,claude-code",
            &home,
            &["--format", "json", "v1", "v2"],
        ),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json(&out);
    assert_eq!(v["prompt_changed"], false);
    assert_eq!(v["agents"]["changed"], true);
    let pretty = serde_json::to_string_pretty(&v["agents"]).unwrap();
    check_snapshot("agents.json", &pretty, &root);
    // The cut the pull request makes, in the numbers a reviewer needs.
    let codex = &v["agents"]["agents"][1];
    assert_eq!(codex["agent"], "codex");
    let payments = codex["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["dirs"][0] == "services/payments")
        .expect("the services/payments chain changed");
    assert_eq!(payments["after"]["limit"]["used"], 32768);
    let file = &payments["files"][0];
    assert_eq!(file["path"], "services/payments/AGENTS.md");
    assert_eq!(file["before"]["status"], "loaded");
    assert_eq!(file["after"]["status"], "truncated");
    let added: Vec<&str> = v["agents"]["warnings_added"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(added.contains(&"truncated"), "{added:?}");
    // No change, no agent change: exit 0.
    let out = diff(
        &repo,
        &with_agents(
            "codex,claude-code",
            &home,
            &["--format", "json", "v2", "v2"],
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(json(&out)["agents"]["changed"], false);
}

#[test]
fn a_checked_out_revision_is_counted_at_the_trees_place() {
    // Gemini CLI sends the absolute path of an import it cannot read. The
    // base side, checked out into a temporary directory, is seen at the
    // tree's place: the unchanged GEMINI.md counts the same as in the work
    // tree, its chain at the root is no change, and runs agree (the numbers
    // once varied with the checkout's random name, and the root's chain
    // showed as changed).
    let guard = tempfile::tempdir().unwrap();
    let (repo, home) = (guard.path().join("d"), guard.path().join("home"));
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    ok(git(&repo).args(["init", "-q"]));
    write(&repo.join("GEMINI.md"), "root rules @docs/missing.md\n");
    write(&repo.join("svc/GEMINI.md"), "v1 rules\n");
    commit(&repo, "v1");
    write(
        &repo.join("svc/GEMINI.md"),
        "v2 rules, longer than before\n",
    );
    commit(&repo, "v2");
    let run = || {
        let out = command(binary())
            .arg("diff")
            .args(with_agents(
                "gemini",
                &home,
                &["--format", "json", "--worktree", "HEAD~1"],
            ))
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .current_dir(&repo)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        json(&out)
    };
    let v = run();
    let changes = v["agents"]["agents"][0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "only svc/'s chain changed: {v}");
    for change in changes {
        let root = |side: &str| {
            change[side]["files"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["path"] == "GEMINI.md")
                .unwrap_or_else(|| panic!("no GEMINI.md {side}: {change}"))
                .clone()
        };
        assert_eq!(
            root("before")["tokens"],
            root("after")["tokens"],
            "{change}"
        );
        assert_eq!(root("before")["sent_sha256"], root("after")["sent_sha256"]);
    }
    for _ in 0..3 {
        assert_eq!(run(), v);
    }
}

#[test]
fn an_edit_that_keeps_a_files_size_changes_the_agents_chains() {
    // A rule flipped in place: same bytes, same tokens. The chains must
    // differ by content, and the file's text diff be shown once however
    // many agents' chains send it.
    let guard = tempfile::tempdir().unwrap();
    let (repo, home) = (guard.path().join("d"), guard.path().join("home"));
    fs::create_dir_all(&home).unwrap();
    fs::create_dir_all(&repo).unwrap();
    ok(git(&repo).args(["init", "-q"]));
    write(&repo.join("AGENTS.md"), "root rules\n");
    write(
        &repo.join("svc/AGENTS.md"),
        "Tests before merge: required.\n",
    );
    commit(&repo, "v1");
    write(
        &repo.join("svc/AGENTS.md"),
        "Tests before merge: optional.\n",
    );
    commit(&repo, "v2");
    let agents = "codex,claude-code,pi";
    let out = diff(
        &repo,
        &with_agents(agents, &home, &["--format", "json", "HEAD~1", "HEAD"]),
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let v = json(&out);
    assert_eq!(v["schema"], "promptinclude.diff/2");
    assert_eq!(v["agents"]["changed"], true);
    for agent in v["agents"]["agents"].as_array().unwrap() {
        let changes = agent["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "{agent}");
        let file = &changes[0]["files"][0];
        assert_eq!(file["path"], "svc/AGENTS.md", "{agent}");
        assert_eq!(file["before"]["bytes"], file["after"]["bytes"]);
        assert_ne!(
            file["before"]["sent_sha256"], file["after"]["sent_sha256"],
            "{agent}"
        );
    }
    let texts = v["agents"]["texts"].as_array().unwrap();
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert_eq!(texts[0]["path"], "svc/AGENTS.md");
    let text_diff = texts[0]["diff"].as_str().unwrap();
    assert!(
        text_diff.contains("-Tests before merge: required.\n")
            && text_diff.contains("+Tests before merge: optional.\n"),
        "{text_diff}"
    );
    // The text and Markdown reports: each chain says the text changed, and
    // the text's diff comes once.
    for format in ["text", "markdown"] {
        let out = diff(
            &repo,
            &with_agents(agents, &home, &["--format", format, "HEAD~1", "HEAD"]),
        );
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let report = String::from_utf8(out.stdout).unwrap();
        assert_eq!(report.matches("(text changed)").count(), 3, "{report}");
        assert_eq!(
            report.matches("+Tests before merge: optional.").count(),
            1,
            "{report}"
        );
    }
    // The same text again: no change.
    let out = diff(
        &repo,
        &with_agents(agents, &home, &["--format", "json", "HEAD", "HEAD"]),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(json(&out)["agents"]["texts"], serde_json::json!([]));
}

/// Every directory of `dir` (not `.git`) gets a file, so that git keeps it.
fn keep_directories(dir: &Path) {
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() && entry.file_name() != ".git" {
            keep_directories(&entry.path());
        }
    }
    fs::write(dir.join(".keep"), "").unwrap();
}

#[test]
fn a_checkout_of_head_gives_the_worktrees_chains() {
    // The revision side is a checkout in a temporary directory; the
    // worktree side is the tree itself. With the worktree at HEAD, every
    // agent's chains must come out the same: no path, link or directory
    // above the root may leak into the comparison.
    let seed = crate::common::fresh_seed("PROMPTINCLUDE_DIFF_AGENTS_SEED");
    let mut rng = Rng::new(seed);
    for case in 0..6 {
        let guard = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(guard.path()).unwrap();
        let (repo, home) = (base.join("repo"), base.join("home"));
        fs::create_dir_all(&home).unwrap();
        ok(git(&base).args(["init", "-q", "repo"]));
        // Rule files above the root, which only the worktree side has.
        write(&base.join("CLAUDE.md"), "above the root\n");
        write(&base.join("AGENTS.md"), "above the root\n");
        crate::agents_audit::random_monorepo_at(&mut rng, &repo, &home);
        keep_directories(&repo);
        commit(&repo, "c");
        let out = diff(
            &repo,
            &with_agents("all", &home, &["--worktree", "--format", "json", "HEAD"]),
        );
        let v = json(&out);
        assert_eq!(
            v["agents"]["changed"],
            false,
            "case {case}, seed {seed}: {}",
            serde_json::to_string_pretty(&v["agents"]).unwrap()
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "case {case}, seed {seed}: {out:?}"
        );
        // And one edit shows up for the agent that reads it.
        write(&repo.join("AGENTS.md"), "a new root rule\n");
        let out = diff(
            &repo,
            &with_agents("codex", &home, &["--worktree", "--format", "json", "HEAD"]),
        );
        let v = json(&out);
        let root_change = v["agents"]["agents"][0]["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["dirs"][0] == ".");
        assert!(root_change, "case {case}, seed {seed}: {v}");
    }
}
