//! `promptinclude bundle` and `verify`: the artifacts equal `render` and
//! `scan`, the manifest's digests are of the bytes on disk, replacement is
//! whole, and verify names exactly the roots whose sources changed.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use sha2::{Digest, Sha256};

use common::promptinclude;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write(root: &Path, rel: &str, content: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

/// Three roots `r0`, `r1`, `r2` under a work directory, each with rule files.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..3 {
        let root = dir.path().join(format!("r{i}"));
        write(
            &root,
            "a.promptinclude.md",
            &format!("root {i}: use tabs\r\n"),
        );
        write(
            &root,
            "docs/b.promptinclude.md",
            &"words and more words ".repeat(40),
        );
        write(&root, "z.promptinclude.md", "last");
    }
    dir
}

fn bundle(args: &[&str], cwd: &Path) -> Output {
    let mut full = vec!["bundle"];
    full.extend_from_slice(args);
    let o = promptinclude(&full, cwd);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    o
}

fn manifest(dir: &Path) -> Value {
    serde_json::from_slice(&fs::read(dir.join("manifest.json")).unwrap()).unwrap()
}

fn verify(dir: &Path, cwd: &Path) -> (Option<i32>, Vec<String>) {
    let o = promptinclude(&["verify", dir.to_str().unwrap()], cwd);
    let lines = text(&o.stdout).lines().map(str::to_string).collect();
    (o.status.code(), lines)
}

/// Entries next to `path` whose names start with the temporary prefix.
fn leftovers(parent: &Path) -> Vec<PathBuf> {
    fs::read_dir(parent)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(".promptinclude-tmp-")
        })
        .collect()
}

#[test]
fn artifacts_equal_render_and_scan_and_manifest_is_complete() {
    let ws = workspace();
    let cwd = ws.path();
    // r2 reaches its budget: z is never read.
    bundle(
        &["--out", "out", "--max-file-count", "2", "r0", "r1", "r2"],
        cwd,
    );
    let out = cwd.join("out");
    let m = manifest(&out);
    assert_eq!(m["schema"], 1);
    assert_eq!(m["tool_version"], env!("CARGO_PKG_VERSION"));
    let roots = m["roots"].as_array().unwrap();
    assert_eq!(roots.len(), 3);
    for (i, r) in roots.iter().enumerate() {
        let given = format!("r{i}");
        assert_eq!(r["root"], given.as_str());
        let abs = cwd.join(&given);
        assert_eq!(r["abs_root"], abs.to_str().unwrap());
        assert_eq!(r["config_source"], "default");
        let config = r["config"].as_object().unwrap();
        // (serde_json's map sorts keys.)
        let keys: Vec<&str> = config.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "gitignore",
                "max_depth",
                "max_file_count",
                "max_file_tokens",
                "max_total_tokens",
                "name_pattern"
            ]
        );
        assert_eq!(r["config"]["max_file_count"], 2);

        let section = fs::read(out.join(r["section"].as_str().unwrap())).unwrap();
        let rendered = promptinclude(&["render", "--max-file-count", "2", &given], cwd).stdout;
        assert_eq!(section, rendered, "section of {given} equals render");
        assert_eq!(r["section_sha256"], sha256(&section).as_str());
        let scan_file = fs::read(out.join(r["scan"].as_str().unwrap())).unwrap();
        let scanned = promptinclude(&["scan", "--max-file-count", "2", &given], cwd).stdout;
        assert_eq!(scan_file, scanned, "scan artifact of {given} equals scan");

        let files = r["files"].as_array().unwrap();
        let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
        let want: Vec<String> = [
            "a.promptinclude.md",
            "docs/b.promptinclude.md",
            "z.promptinclude.md",
        ]
        .iter()
        .map(|p| abs.join(p).to_str().unwrap().to_string())
        .collect();
        assert_eq!(paths, want);
        for f in &files[..2] {
            let bytes = fs::read(f["path"].as_str().unwrap()).unwrap();
            assert_eq!(
                f["sha256"],
                sha256(&bytes).as_str(),
                "digest of the raw bytes (CRLF kept)"
            );
            assert_eq!(f["status"], "ok");
            assert!(f["token_count"].as_i64().unwrap() > 0);
        }
        assert_eq!(
            files[2]["sha256"],
            Value::Null,
            "never read, so never hashed"
        );
        assert_eq!(files[2]["status"], "not_reached");
        assert_eq!(files[2]["token_count"], 0);
        let totals = &r["totals"];
        assert_eq!(totals["files"], 2);
        assert_eq!(totals["rule_files"], 3);
        assert_eq!(totals["skipped_count"], 1);
        let sum: i64 = files
            .iter()
            .map(|f| f["token_count"].as_i64().unwrap())
            .sum();
        assert_eq!(totals["tokens_included"], sum);
    }
    assert!(leftovers(cwd).is_empty(), "{:?}", leftovers(cwd));
}

#[test]
fn verify_reports_exactly_the_edited_root() {
    let ws = workspace();
    let cwd = ws.path();
    bundle(&["--out", "out", "r0", "r1", "r2"], cwd);
    let out = cwd.join("out");
    let (code, lines) = verify(&out, cwd);
    assert_eq!(code, Some(0), "{lines:?}");
    assert_eq!(lines, ["verify: 0 of 3 roots stale"]);

    write(&cwd.join("r1"), "docs/b.promptinclude.md", "edited");
    let (code, lines) = verify(&out, cwd);
    assert_eq!(code, Some(1));
    let r1 = cwd.join("r1");
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with(&format!("{}: stale: ", r1.display())),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains("rule file changed: ") && lines[0].contains("docs/b.promptinclude.md")
    );
    assert_eq!(lines[1], "verify: 1 of 3 roots stale");
    // verify reads the manifest from any directory, and given its path too.
    let elsewhere = tempfile::tempdir().unwrap();
    let (code, lines) = verify(&out.join("manifest.json"), elsewhere.path());
    assert_eq!((code, lines.len()), (Some(1), 2), "{lines:?}");
}

#[test]
fn verify_notices_added_removed_and_configuration_changes() {
    let ws = workspace();
    let cwd = ws.path();
    bundle(&["--out", "out", "r0", "r1", "r2"], cwd);
    let out = cwd.join("out");
    write(&cwd.join("r0"), "new.promptinclude.md", "new rule");
    fs::remove_file(cwd.join("r1/z.promptinclude.md")).unwrap();
    write(
        &cwd.join("r2"),
        ".a0proj/plugins/_promptinclude/config.json",
        r#"{"max_depth": 1}"#,
    );
    let (code, lines) = verify(&out, cwd);
    assert_eq!(code, Some(1));
    assert_eq!(lines.len(), 4, "{lines:?}");
    assert!(
        lines[0].contains("/r0: stale: rule file added: ")
            && lines[0].contains("new.promptinclude.md")
    );
    assert!(
        lines[1].contains("/r1: stale: rule file removed: ")
            && lines[1].contains("z.promptinclude.md")
    );
    assert!(
        lines[2].contains("/r2: stale: configuration source changed: default -> "),
        "{}",
        lines[2]
    );
}

#[test]
fn verify_notices_a_modified_section_artifact() {
    let ws = workspace();
    let cwd = ws.path();
    bundle(&["--out", "out", "r0", "r1"], cwd);
    let out = cwd.join("out");
    let section = out.join(manifest(&out)["roots"][1]["section"].as_str().unwrap());
    fs::write(&section, "tampered").unwrap();
    let (code, lines) = verify(&out, cwd);
    assert_eq!(code, Some(1));
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("/r1: stale: the bundle's section file"),
        "{}",
        lines[0]
    );
}

#[test]
fn rebundling_replaces_the_whole_bundle() {
    let ws = workspace();
    let cwd = ws.path();
    bundle(&["--out", "out", "r0", "r1", "r2"], cwd);
    let out = cwd.join("out");
    assert_eq!(fs::read_dir(out.join("roots")).unwrap().count(), 6);
    bundle(&["--out", "out", "r2"], cwd);
    let names: Vec<String> = fs::read_dir(out.join("roots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut names = names;
    names.sort();
    assert_eq!(
        names,
        ["0000-r2.json", "0000-r2.md"],
        "nothing of the old bundle is left"
    );
    assert_eq!(manifest(&out)["roots"].as_array().unwrap().len(), 1);
    assert!(leftovers(cwd).is_empty(), "{:?}", leftovers(cwd));
    let (code, _) = verify(&out, cwd);
    assert_eq!(code, Some(0));
}

#[test]
fn refuses_to_replace_a_directory_that_is_not_a_bundle() {
    let ws = workspace();
    let cwd = ws.path();
    write(cwd, "precious/notes.txt", "keep me");
    let o = promptinclude(&["bundle", "--out", "precious", "r0"], cwd);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not a bundle"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(
        fs::read_to_string(cwd.join("precious/notes.txt")).unwrap(),
        "keep me"
    );
    assert!(leftovers(cwd).is_empty());
    for bad in [".", "..", "/"] {
        let o = promptinclude(&["bundle", "--out", bad, "r0"], cwd);
        assert_eq!(o.status.code(), Some(2), "--out {bad}");
    }
    // An empty directory is fine.
    fs::create_dir(cwd.join("empty")).unwrap();
    bundle(&["--out", "empty", "r0"], cwd);
    assert!(cwd.join("empty/manifest.json").is_file());
}

#[test]
fn a_failed_run_leaves_the_previous_bundle_intact() {
    let ws = workspace();
    let cwd = ws.path();
    bundle(&["--out", "out", "r0"], cwd);
    let before = fs::read(cwd.join("out/manifest.json")).unwrap();
    // A pattern the reference rejects fails the run before anything is written.
    fs::write(cwd.join("bad-ignore"), "[z-a]\n").unwrap();
    let o = promptinclude(
        &[
            "bundle",
            "--out",
            "out",
            "--gitignore-file",
            "bad-ignore",
            "r1",
        ],
        cwd,
    );
    assert_eq!(o.status.code(), Some(2));
    // So does an unreadable --config.
    let o = promptinclude(
        &["bundle", "--out", "out", "--config", "missing.json", "r1"],
        cwd,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(fs::read(cwd.join("out/manifest.json")).unwrap(), before);
    assert!(leftovers(cwd).is_empty(), "{:?}", leftovers(cwd));
}

#[test]
fn a_broken_project_file_leaves_its_root_out_and_the_others_in() {
    let ws = workspace();
    let cwd = ws.path();
    write(
        &cwd.join("r2"),
        ".a0proj/plugins/_promptinclude/config.json",
        "{",
    );
    let o = promptinclude(&["bundle", "--out", "out", "r0", "r1", "r2"], cwd);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("r2") && e.contains("config.json:1"), "{e}");
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(cwd.join("out/manifest.json")).unwrap()).unwrap();
    let roots: Vec<&str> = manifest["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["root"].as_str().unwrap())
        .collect();
    assert_eq!(roots, ["r0", "r1"]);
    assert_eq!(manifest["errors"][0]["root"], "r2");
    assert_eq!(manifest["errors"][0]["error"]["kind"], "config");
    // verify: the two bundled roots are current; the broken one is still an error.
    let o = promptinclude(&["verify", "out"], cwd);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 of 2 roots stale"));
    // Fixed, it scans now: stale, so the bundle should be rebuilt.
    write(
        &cwd.join("r2"),
        ".a0proj/plugins/_promptinclude/config.json",
        "{}",
    );
    let o = promptinclude(&["verify", "out"], cwd);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("r2: stale: not in the bundle"));
}

#[test]
fn verify_rejects_what_is_not_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let o = promptinclude(&["verify", "nope"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    write(
        dir.path(),
        "b/manifest.json",
        r#"{"schema": 2, "roots": []}"#,
    );
    let o = promptinclude(&["verify", "b"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("schema 2 is not supported"),
        "{}",
        text(&o.stderr)
    );
    write(dir.path(), "c/manifest.json", r#"{"schema": 1}"#);
    let o = promptinclude(&["verify", "c"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("not a promptinclude bundle manifest"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_killed_run_never_leaves_a_half_written_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let mut rng = common::Rng::new(7);
    let roots: Vec<String> = (0..150)
        .map(|i| {
            let name = format!("r{i:03}");
            common::random_tree(&mut rng, &cwd.join(&name));
            name
        })
        .collect();
    fs::write(cwd.join("roots.txt"), roots.join("\n")).unwrap();
    bundle(&["--out", "out", "r000"], cwd);
    for delay_ms in [5, 40, 120, 400] {
        let mut child = Command::new(common::binary())
            .args(["bundle", "--out", "out", "--roots-from", "roots.txt"])
            .current_dir(cwd)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // Whatever the moment, `out` is one complete bundle: the old or the new.
        let m = manifest(&cwd.join("out"));
        let n = m["roots"].as_array().unwrap().len();
        assert!(n == 1 || n == roots.len(), "{n} roots");
        for r in m["roots"].as_array().unwrap() {
            let section = fs::read(cwd.join("out").join(r["section"].as_str().unwrap())).unwrap();
            assert_eq!(r["section_sha256"], sha256(&section).as_str());
            assert!(cwd.join("out").join(r["scan"].as_str().unwrap()).is_file());
        }
        let (code, lines) = verify(&cwd.join("out"), cwd);
        assert_eq!(code, Some(0), "{lines:?}");
        for temp in leftovers(cwd) {
            fs::remove_dir_all(temp).unwrap();
        }
    }
}

/// A path from raw bytes (names that are not UTF-8).
fn raw(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(bytes.to_vec()))
}

#[test]
fn verify_scans_a_non_utf8_root_by_its_bytes() {
    // `d\xff` and `d\xfe` print the same (`d\u{fffd}`), and a third root
    // is literally named so: verify must scan each by its own bytes.
    let ws = tempfile::tempdir().unwrap();
    let cwd = ws.path();
    for (name, text) in [
        (&b"d\xff"[..], "zero"),
        (b"d\xfe", "one"),
        ("d\u{fffd}".as_bytes(), "literal"),
    ] {
        fs::create_dir(cwd.join(raw(name))).unwrap();
        fs::write(cwd.join(raw(name)).join("a.promptinclude.md"), text).unwrap();
    }
    let o = Command::new(common::binary())
        .args(["bundle", "--no-env", "--out", "out"])
        .arg(raw(b"d\xff"))
        .current_dir(cwd)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = cwd.join("out");
    let entry = &manifest(&out)["roots"][0];
    assert_eq!(entry["root"], "d\u{fffd}");
    assert_eq!(entry["root_hex"], "64ff");
    let abs = entry["abs_root_hex"].as_str().unwrap();
    assert!(abs.ends_with("2f64ff"), "{abs}");
    assert_eq!(
        verify(&out, cwd),
        (Some(0), vec!["verify: 0 of 1 roots stale".into()])
    );
    // The other two changing leaves it fresh; it changing makes it stale.
    fs::write(cwd.join(raw(b"d\xfe/a.promptinclude.md")), "changed").unwrap();
    fs::write(cwd.join("d\u{fffd}/a.promptinclude.md"), "changed").unwrap();
    assert_eq!(verify(&out, cwd).0, Some(0));
    fs::write(cwd.join(raw(b"d\xff/a.promptinclude.md")), "changed").unwrap();
    let (code, lines) = verify(&out, cwd);
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(lines[0].contains("rule file changed"), "{lines:?}");
}

#[test]
fn verify_checks_the_scan_artifact_against_its_digest() {
    let ws = workspace();
    let cwd = ws.path();
    bundle(&["--out", "out", "r0", "r1"], cwd);
    let out = cwd.join("out");
    let m = manifest(&out);
    for entry in m["roots"].as_array().unwrap() {
        let scan = fs::read(out.join(entry["scan"].as_str().unwrap())).unwrap();
        assert_eq!(entry["scan_sha256"], sha256(&scan).as_str());
    }
    let scan = out.join(m["roots"][1]["scan"].as_str().unwrap());
    let kept = fs::read(&scan).unwrap();
    for tamper in [Some(&b"{}\n"[..]), None] {
        match tamper {
            Some(bytes) => fs::write(&scan, bytes).unwrap(),
            None => fs::remove_file(&scan).unwrap(),
        }
        let (code, lines) = verify(&out, cwd);
        assert_eq!(code, Some(1), "{lines:?}");
        assert_eq!(lines.len(), 2, "{lines:?}");
        let says = if tamper.is_some() {
            "was modified"
        } else {
            "cannot be read"
        };
        assert!(
            lines[0].contains("/r1: stale: the bundle's scan file") && lines[0].contains(says),
            "{lines:?}"
        );
    }
    fs::write(&scan, kept).unwrap();
    assert_eq!(verify(&out, cwd).0, Some(0));
}

#[test]
fn verify_calls_stale_only_what_would_bundle_differently() {
    let ws = workspace();
    let cwd = ws.path();
    for i in 0..3 {
        write(&cwd.join(format!("r{i}")), "blank.promptinclude.md", "\n");
        fs::write(
            cwd.join(format!("r{i}/bad.promptinclude.md")),
            b"bad \xff byte",
        )
        .unwrap();
    }
    bundle(&["--out", "out", "--no-env", "r0", "r1", "r2"], cwd);
    let out = cwd.join("out");
    // A blank file stays blank, an invalid byte another invalid byte, and
    // a project file says what the defaults say: the artifacts would be
    // the same bytes.
    write(&cwd.join("r0"), "blank.promptinclude.md", " \r\n\t\r\n");
    fs::write(cwd.join("r1/bad.promptinclude.md"), b"bad \xfe byte").unwrap();
    let defaults = &manifest(&out)["roots"][2]["config"];
    write(
        &cwd.join("r2"),
        ".a0proj/plugins/_promptinclude/config.json",
        &defaults.to_string(),
    );
    let (code, lines) = verify(&out, cwd);
    assert_eq!(
        (code, lines.as_slice()),
        (Some(0), &["verify: 0 of 3 roots stale".to_string()][..])
    );
    // A change that does show is still found, with its cause.
    write(&cwd.join("r2"), "blank.promptinclude.md", "now a rule");
    let (code, lines) = verify(&out, cwd);
    assert_eq!(code, Some(1), "{lines:?}");
    assert!(
        lines[0].contains("/r2: stale: configuration source changed: default -> ")
            && lines[0].contains("rendered section changed"),
        "{lines:?}"
    );
}
