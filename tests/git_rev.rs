//! `--rev`: scanning a git revision without a checkout, compared byte for
//! byte with the oracle run on a fresh checkout of the same revision placed
//! at the same path as the bare repository that was scanned (so every
//! absolute path in the output is identical).
//!
//! For each case: the tree is committed with the git CLI in a source work
//! tree; `git clone --bare` puts it at `scan/NAME`, where `promptinclude
//! scan --rev HEAD` reads it; then `scan/` is moved away, and a checkout of
//! the bare clone is made at `scan/NAME` with its git directory elsewhere
//! (its `.git` file removed), where the oracle and our filesystem scan read
//! it. Without the oracle, only our filesystem scan is compared.
//!
//! Knobs: PROMPTINCLUDE_GIT_REPOS (random repositories, default 30),
//! PROMPTINCLUDE_GIT_CONFIGS (default 4), PROMPTINCLUDE_GIT_SEED (default 7).
//! Runs with `cargo test --release --test git_rev`.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use common::git::{git, ok};
use common::{binary, command, random_config, random_tree, Rng};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Output of a scan (exit 0 or 1).
fn run(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success() || out.status.code() == Some(1),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `target` relative to the directory `from` (both absolute, normalised).
fn relative(target: &Path, from: &Path) -> PathBuf {
    let t: Vec<Component> = target.components().collect();
    let f: Vec<Component> = from.components().collect();
    let common = t.iter().zip(&f).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..f.len() {
        out.push("..");
    }
    for c in &t[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Makes the absolute symlinks under `root` that point inside it relative
/// (the tree is committed and checked out elsewhere).
fn relativize_links(root: &Path, dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&path).unwrap();
            if target.is_absolute() {
                let rel = if target.starts_with(root) {
                    relative(&target, path.parent().unwrap())
                } else {
                    PathBuf::from("outside-nowhere")
                };
                fs::remove_file(&path).unwrap();
                symlink(rel, &path).unwrap();
            }
        } else if meta.is_dir() {
            relativize_links(root, &path);
        }
    }
}

/// Commits everything under `src` (which must hold the tree) as a new
/// repository's first commit.
fn commit_all(src: &Path) {
    ok(git(src).args(["init", "-q"]));
    ok(git(src).args(["add", "-A", "-f", "."]));
    ok(git(src).args(["commit", "-q", "--allow-empty", "-m", "tree"]));
}

/// The cases, committed: `(name, source work tree)`.
struct Cases {
    work: tempfile::TempDir,
    names: Vec<String>,
    /// Cases the oracle cannot print (file names that are not UTF-8):
    /// compared with our filesystem scan only.
    not_for_oracle: Vec<String>,
}

impl Cases {
    fn new() -> Cases {
        Cases {
            work: tempfile::tempdir().unwrap(),
            names: Vec::new(),
            not_for_oracle: Vec::new(),
        }
    }

    fn src(&self, name: &str) -> PathBuf {
        self.work.path().join("src").join(name)
    }

    /// The path both the bare clone and the checkout take.
    fn root(&self, name: &str) -> PathBuf {
        self.work.path().join("scan").join(name)
    }

    /// Adds a case whose source work tree `build` fills and commits.
    fn add(&mut self, name: &str, build: impl FnOnce(&Path)) {
        let src = self.src(name);
        fs::create_dir_all(&src).unwrap();
        build(&src);
        self.names.push(name.to_string());
    }

    /// Runs every configuration; returns (records compared, differences).
    fn compare(&self, configs: &[serde_json::Value], rev: &str) -> (usize, Vec<String>) {
        let oracle = common::oracle();
        if oracle.is_none() {
            eprintln!("git_rev: no oracle here; comparing with our filesystem scan only");
        }
        let scan_dir = self.work.path().join("scan");
        let _ = fs::remove_dir_all(&scan_dir);
        fs::create_dir_all(&scan_dir).unwrap();
        for name in &self.names {
            ok(git(&scan_dir)
                .args(["clone", "-q", "--bare"])
                .arg(self.src(name))
                .arg(name));
        }
        let roots: Vec<PathBuf> = self.names.iter().map(|n| self.root(n)).collect();
        let mut cfg_paths = Vec::new();
        let mut ours = Vec::new();
        let mut ours_render = Vec::new();
        for (c, cfg) in configs.iter().enumerate() {
            let cfg_path = self.work.path().join(format!("config{c}.json"));
            fs::write(&cfg_path, cfg.to_string()).unwrap();
            ours.push(run(command(binary())
                .args(["scan", "-j", "2", "--rev", rev, "--config"])
                .arg(&cfg_path)
                .args(&roots)));
            ours_render.push(render_out_dir(
                &cfg_path,
                Some(rev),
                &roots,
                &self.work.path().join(format!("render-rev{c}")),
            ));
            cfg_paths.push(cfg_path);
        }
        // The checkouts, at the same paths.
        let bare_dir = self.work.path().join("bare");
        let gitdirs = self.work.path().join("gitdirs");
        let _ = fs::remove_dir_all(&bare_dir);
        let _ = fs::remove_dir_all(&gitdirs);
        fs::rename(&scan_dir, &bare_dir).unwrap();
        fs::create_dir_all(&gitdirs).unwrap();
        fs::create_dir_all(&scan_dir).unwrap();
        for name in &self.names {
            ok(git(&scan_dir)
                .args(["clone", "-q", "--no-checkout", "--separate-git-dir"])
                .arg(gitdirs.join(name))
                .arg(bare_dir.join(name))
                .arg(name));
            ok(git(&self.root(name)).args(["checkout", "-q", "-f", "--detach", rev]));
            fs::remove_file(self.root(name).join(".git")).unwrap();
        }
        let mut compared = 0;
        let mut failures = Vec::new();
        for (c, cfg_path) in cfg_paths.iter().enumerate() {
            let mut expected = vec![(
                "filesystem scan",
                run(command(binary())
                    .args(["scan", "--no-project-config", "--config"])
                    .arg(cfg_path)
                    .args(&roots)),
            )];
            if let Some(oracle) = &oracle {
                expected.push((
                    "oracle",
                    run(command(oracle).arg("--config").arg(cfg_path).args(&roots)),
                ));
            }
            for (what, expected) in expected {
                let e: Vec<&[u8]> = expected.split(|&b| b == b'\n').collect();
                let a: Vec<&[u8]> = ours[c].split(|&b| b == b'\n').collect();
                assert_eq!(e.len(), a.len(), "config {c}: line count vs {what}");
                for (i, (e, a)) in e.iter().zip(&a).enumerate() {
                    if e.is_empty()
                        || (what == "oracle" && self.not_for_oracle.contains(&self.names[i]))
                    {
                        continue;
                    }
                    compared += 1;
                    if e != a {
                        failures.push(format!(
                            "{what}, config {}, root {}:\n  expected {}\n  ours     {}",
                            configs[c],
                            self.names[i],
                            String::from_utf8_lossy(e),
                            String::from_utf8_lossy(a)
                        ));
                    }
                }
            }
        }
        // Rendered sections: the oracle's (when it can print every name), else ours on disk.
        for (c, cfg_path) in cfg_paths.iter().enumerate() {
            let expected = match &oracle {
                Some(oracle) if self.not_for_oracle.is_empty() => run(command(oracle)
                    .arg("--render")
                    .arg("--config")
                    .arg(cfg_path)
                    .args(&roots)),
                _ => render_out_dir(
                    cfg_path,
                    None,
                    &roots,
                    &self.work.path().join(format!("render-fs{c}")),
                ),
            };
            compared += 1;
            if expected != ours_render[c] {
                failures.push(format!("render, config {}: sections differ", configs[c]));
            }
        }
        // Leave the bare repositories where the scan found them.
        fs::remove_dir_all(&scan_dir).unwrap();
        fs::rename(&bare_dir, &scan_dir).unwrap();
        (compared, failures)
    }
}

/// `render --out-dir` (with `--rev` when given): the sections joined as the
/// oracle's `--render` prints several.
fn render_out_dir(cfg: &Path, rev: Option<&str>, roots: &[PathBuf], out: &Path) -> Vec<u8> {
    let mut cmd = command(binary());
    cmd.args(["render", "--config"])
        .arg(cfg)
        .arg("--out-dir")
        .arg(out);
    if let Some(rev) = rev {
        cmd.args(["--rev", rev]);
    } else {
        cmd.arg("--no-project-config");
    }
    run(cmd.args(roots));
    let index: serde_json::Value =
        serde_json::from_slice(&fs::read(out.join("index.json")).unwrap()).unwrap();
    let sections: Vec<Vec<u8>> = index["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| fs::read(out.join(r["section"].as_str().unwrap())).unwrap())
        .collect();
    sections.join(&b"\x1e\n"[..])
}

fn assert_no_differences(label: &str, (compared, failures): (usize, Vec<String>)) {
    eprintln!(
        "git_rev {label}: {compared} records compared, {} differences",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
    assert!(compared > 0);
}

fn configs(rng: &mut Rng, n: usize) -> Vec<serde_json::Value> {
    (0..n).map(|i| random_config(rng, i)).collect()
}

#[test]
fn random_repositories_match_a_checkout() {
    let repos = env_usize("PROMPTINCLUDE_GIT_REPOS", 30);
    let n_configs = env_usize("PROMPTINCLUDE_GIT_CONFIGS", 4);
    let mut rng = Rng::new(env_usize("PROMPTINCLUDE_GIT_SEED", 7) as u64);
    let mut cases = Cases::new();
    for i in 0..repos {
        let name = format!("r{i:04}.git");
        let gc = i % 3 == 2;
        let seed = rng.below(1 << 30) as u64;
        cases.add(&name, |src| {
            let mut rng = Rng::new(seed);
            fs::remove_dir(src).unwrap();
            random_tree(&mut rng, src);
            relativize_links(src, src);
            commit_all(src);
            if gc {
                // Packed objects plus loose ones from a later commit.
                ok(git(src).args(["gc", "-q"]));
                fs::write(src.join("late.promptinclude.md"), "added after gc\r\n").unwrap();
                ok(git(src).args(["add", "-A", "-f", "."]));
                ok(git(src).args(["commit", "-q", "-m", "after gc"]));
            }
        });
    }
    let configs = configs(&mut rng, n_configs);
    let label = format!("{repos} repositories x {n_configs} configs");
    assert_no_differences(&label, cases.compare(&configs, "HEAD"));
}

/// Special trees: symlinks of every kind, submodules, non-UTF-8 names,
/// deep trees, packed and loose objects, older revisions.
#[test]
fn special_repositories_match_a_checkout() {
    let mut cases = Cases::new();
    let abs_link_root = cases.root("links.git");
    cases.add("links.git", |src| {
        fs::create_dir_all(src.join("d/e")).unwrap();
        fs::create_dir_all(src.join("node_modules/m")).unwrap();
        fs::write(src.join("d/e/t.promptinclude.md"), "target\n").unwrap();
        fs::write(src.join("node_modules/m/x.promptinclude.md"), "pruned\n").unwrap();
        let links: &[(&str, &str)] = &[
            ("to-file.promptinclude.md", "d/e/t.promptinclude.md"),
            ("to-dir.promptinclude.md", "d"),
            ("dangling.promptinclude.md", "nope.promptinclude.md"),
            ("loop.promptinclude.md", "loop.promptinclude.md"),
            ("loop2.promptinclude.md", "loop3.promptinclude.md"),
            ("loop3.promptinclude.md", "loop2.promptinclude.md"),
            ("chain.promptinclude.md", "to-file.promptinclude.md"),
            ("via-dir-link.promptinclude.md", "dl/e/t.promptinclude.md"),
            ("dl", "d"),
            ("dotdot.promptinclude.md", "d/../d/e/./t.promptinclude.md"),
            ("through-file.promptinclude.md", "d/e/t.promptinclude.md/x"),
            ("trailing.promptinclude.md", "d/e/t.promptinclude.md/"),
            (
                "outside.promptinclude.md",
                "../../../../../../../nonexistent",
            ),
            (
                "out-and-back.promptinclude.md",
                "../links.git/d/e/t.promptinclude.md",
            ),
            (
                "to-pruned.promptinclude.md",
                "node_modules/m/x.promptinclude.md",
            ),
            ("d/e/up.promptinclude.md", "../../to-file.promptinclude.md"),
            ("d/e/root.promptinclude.md", "../.."),
            ("node_modules-link", "node_modules"),
        ];
        for (link, target) in links {
            symlink(target, src.join(link)).unwrap();
        }
        // An absolute link into the root's own path: the checkout at that
        // path resolves it inside.
        symlink(
            abs_link_root.join("d/e/t.promptinclude.md"),
            src.join("abs.promptinclude.md"),
        )
        .unwrap();
        let exe = src.join("exec.promptinclude.md");
        fs::write(&exe, "#!/bin/sh\necho executable bits change nothing\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
        commit_all(src);
    });
    let sub_src = cases.src("sub.git");
    cases.add("sub.git", |src| {
        // A submodule (gitlink): an empty directory in a checkout.
        let inner = src.join("../inner-repo");
        fs::create_dir_all(&inner).unwrap();
        fs::write(inner.join("in.promptinclude.md"), "inside the submodule\n").unwrap();
        commit_all(&inner);
        let head = String::from_utf8(ok(git(&inner).args(["rev-parse", "HEAD"]))).unwrap();
        fs::write(src.join("top.promptinclude.md"), "top\n").unwrap();
        symlink("vendor/lib", src.join("to-sub.promptinclude.md")).unwrap();
        symlink(
            "vendor/lib/in.promptinclude.md",
            src.join("into-sub.promptinclude.md"),
        )
        .unwrap();
        commit_all(src);
        ok(git(src).args([
            "update-index",
            "--add",
            "--cacheinfo",
            &format!("160000,{},vendor/lib", head.trim()),
        ]));
        ok(git(src).args(["commit", "-q", "-m", "submodule"]));
    });
    assert!(sub_src.exists());
    cases.add("names.git", |src| {
        for name in [
            &b"bad\xff.promptinclude.md"[..],
            b"\xe9t\xe9.promptinclude.md",
            b"ok.promptinclude.md",
            "日本.promptinclude.md".as_bytes(),
            b"a-b.promptinclude.md",
        ] {
            fs::write(src.join(OsStr::from_bytes(name)), b"named\r\nrule\r").unwrap();
        }
        fs::create_dir_all(src.join(OsStr::from_bytes(b"dir\xfe"))).unwrap();
        fs::write(
            src.join(OsStr::from_bytes(b"dir\xfe/in.promptinclude.md")),
            "x\n",
        )
        .unwrap();
        fs::create_dir_all(src.join("a")).unwrap();
        fs::write(src.join("a/x.promptinclude.md"), "\u{feff}bom kept\n").unwrap();
        fs::write(src.join("blank.promptinclude.md"), " \u{3000}\n").unwrap();
        fs::write(src.join("invalid.promptinclude.md"), b"\xff\xfe bytes\r\n").unwrap();
        commit_all(src);
    });
    cases.not_for_oracle.push("names.git".to_string());
    cases.add("deep.git", |src| {
        let mut dir = src.to_path_buf();
        for i in 0..70 {
            dir = dir.join(format!("d{i}"));
            fs::create_dir_all(&dir).unwrap();
            if i % 7 == 0 {
                fs::write(dir.join("r.promptinclude.md"), format!("depth {i}\n")).unwrap();
            }
        }
        commit_all(src);
    });
    cases.add("packed.git", |src| {
        fs::write(src.join("a.promptinclude.md"), "first\n").unwrap();
        fs::create_dir_all(src.join("docs")).unwrap();
        fs::write(src.join("docs/b.promptinclude.md"), "packed\n").unwrap();
        commit_all(src);
        ok(git(src).args(["gc", "-q", "--aggressive"]));
        fs::write(src.join("a.promptinclude.md"), "changed, loose\n").unwrap();
        fs::write(src.join("docs/c.promptinclude.md"), "new, loose\n").unwrap();
        ok(git(src).args(["add", "-A", "."]));
        ok(git(src).args(["commit", "-q", "-m", "loose"]));
    });
    let mut configs = vec![
        serde_json::json!({}),
        serde_json::json!({"gitignore": ""}),
        serde_json::json!({"max_depth": 50, "max_total_tokens": 50000}),
        serde_json::json!({"name_pattern": "*", "gitignore": "", "max_depth": 100}),
        serde_json::json!({"max_total_tokens": 90, "max_file_tokens": 40}),
    ];
    assert_no_differences("special", cases.compare(&configs, "HEAD"));
    // An older revision.
    configs.truncate(2);
    assert_no_differences("special HEAD~1", {
        let mut older = Cases::new();
        for name in ["sub.git", "packed.git"] {
            let src = cases.src(name);
            older.add(name, |dst| {
                fs::remove_dir(dst).unwrap();
                ok(git(dst.parent().unwrap())
                    .args(["clone", "-q"])
                    .arg(&src)
                    .arg(dst));
            });
        }
        older.compare(&configs, "HEAD~1")
    });
}

#[test]
fn a_work_tree_shows_only_the_committed_revision() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("w");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("a.promptinclude.md"), "committed\n").unwrap();
    commit_all(&src);
    fs::write(src.join("a.promptinclude.md"), "changed on disk\n").unwrap();
    fs::write(src.join("b.promptinclude.md"), "untracked\n").unwrap();
    let out = run(command(binary()).args(["scan", "--rev", "HEAD"]).arg(&src));
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("\"content\": \"committed\\n\""), "{text}");
    assert!(!text.contains("untracked") && !text.contains("changed on disk"));
    let rendered = run(command(binary())
        .args(["render", "--rev", "main"])
        .arg(&src));
    assert!(String::from_utf8(rendered).unwrap().contains("committed\n"));
}

#[test]
fn errors_are_per_root_and_clear() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("w");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("a.promptinclude.md"), "one\n").unwrap();
    commit_all(&src);
    let plain = dir.path().join("plain");
    fs::create_dir_all(&plain).unwrap();
    // Not a repository, an unknown revision, then a good root.
    let out = command(binary())
        .args(["scan", "--rev", "HEAD"])
        .arg(&plain)
        .arg(&src)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].contains("\"kind\":\"git\"") && lines[0].contains("not a git repository"));
    assert!(lines[1].contains("\"content\": \"one\\n\""));
    let out = command(binary())
        .args(["scan", "--rev", "no-such-branch"])
        .arg(&src)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot resolve revision `no-such-branch`")
    );
    // A blob missing (as from a partial clone): the root fails, clearly.
    let blob =
        String::from_utf8(ok(git(&src).args(["rev-parse", "HEAD:a.promptinclude.md"]))).unwrap();
    let blob = blob.trim();
    fs::remove_file(src.join(".git/objects").join(&blob[..2]).join(&blob[2..])).unwrap();
    let out = command(binary())
        .args(["scan", "--rev", "HEAD"])
        .arg(&src)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("missing from a partial or shallow clone"),
        "{stderr}"
    );
    // The audit of that revision fails the same way.
    let out = command(binary())
        .args(["audit", "--rev", "HEAD"])
        .arg(&src)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bundle_rev_and_verify_follow_the_revision() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("w");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("a.promptinclude.md"), "one\n").unwrap();
    commit_all(&src);
    ok(git(dir.path()).args(["clone", "-q", "--bare", "w", "b.git"]));
    let bare = dir.path().join("b.git");
    let out = dir.path().join("bundle");
    let status = command(binary())
        .args(["bundle", "--rev", "main", "--out"])
        .arg(&out)
        .arg(&bare)
        .status()
        .unwrap();
    assert!(status.success());
    let manifest = fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"rev\": \"main\""), "{manifest}");
    let section = fs::read_dir(out.join("roots"))
        .unwrap()
        .flatten()
        .find(|e| e.path().extension() == Some(OsStr::new("md")))
        .unwrap()
        .path();
    assert!(fs::read_to_string(section).unwrap().contains("one\n"));
    let verify = |code| {
        let got = command(binary()).arg("verify").arg(&out).output().unwrap();
        assert_eq!(got.status.code(), Some(code), "{got:?}");
    };
    verify(0);
    // The branch moves on: the bundle is stale.
    fs::write(src.join("a.promptinclude.md"), "two\n").unwrap();
    ok(git(&src).args(["commit", "-q", "-am", "two"]));
    ok(git(&src).arg("push").arg("-q").arg(&bare).arg("main"));
    verify(1);
}

#[test]
fn audit_rev_reports_the_revision() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("w");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("a.promptinclude.md"), "first rule\n").unwrap();
    fs::write(
        src.join("b.promptinclude.md"),
        "second rule, never reached\n",
    )
    .unwrap();
    symlink("nowhere", src.join("broken.promptinclude.md")).unwrap();
    commit_all(&src);
    fs::remove_file(src.join("b.promptinclude.md")).unwrap();
    let out = command(binary())
        .args(["audit", "--json", "--rev", "HEAD", "--max-file-count", "1"])
        .arg(&src)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let record: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    let files = record["files"].as_array().unwrap();
    assert_eq!(files.len(), 3, "{stdout}");
    // b is not reached, yet counted from its blob (deleted on disk).
    let b = files
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("/b.promptinclude.md"))
        .unwrap();
    assert_eq!(b["status"], "not_reached", "{stdout}");
    assert!(b["tokens_counted"].as_i64().unwrap() > 0, "{stdout}");
    assert!(stdout.contains("dangling symlink"), "{stdout}");
}

/// Deeper than the reference's recursion limit (where it raises, we walk
/// on): compared with our filesystem scan of the checkout only.
#[test]
fn past_the_recursion_limit_matches_the_filesystem_walk() {
    let mut cases = Cases::new();
    for (name, dangling) in [("deep-a.git", false), ("deep-b.git", true)] {
        cases.add(name, |src| {
            let mut dir = src.to_path_buf();
            for i in 0..1001 {
                dir.push("d");
                if i % 100 == 0 || i >= 990 {
                    fs::create_dir_all(&dir).unwrap();
                    fs::write(dir.join("r.promptinclude.md"), format!("depth {}\n", i + 1))
                        .unwrap();
                }
                if dangling && i == 994 {
                    fs::create_dir_all(&dir).unwrap();
                    symlink("nowhere", dir.join("x.promptinclude.md")).unwrap();
                }
            }
            commit_all(src);
        });
        cases.not_for_oracle.push(name.to_string());
    }
    let configs = [
        serde_json::json!({"max_depth": 2000, "max_total_tokens": 50000, "max_file_count": 200}),
        serde_json::json!({"max_depth": 995, "max_total_tokens": 50000, "max_file_count": 200}),
        serde_json::json!({"max_depth": 2000, "gitignore": format!("{}d/", "d/".repeat(995))}),
    ];
    assert_no_differences("past the recursion limit", cases.compare(&configs, "HEAD"));
}
