//! Per-root configuration as the host resolves it: `.a0proj` files, agent
//! profiles, `--no-project-config`, and the flags on top, for scan, render,
//! audit and bundle.

use crate::common;

use std::fs;
use std::path::Path;

use serde_json::Value;

use common::promptinclude;

fn write(root: &Path, rel: &str, content: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

const PROJECT: &str = ".a0proj/plugins/_promptinclude/config.json";
const PROFILE_DEV: &str = ".a0proj/agents/dev/plugins/_promptinclude/config.json";

/// A root with three rule files, one of them under node_modules.
fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.promptinclude.md", "alpha");
    write(dir.path(), "b.promptinclude.md", "beta");
    write(dir.path(), "node_modules/x/v.promptinclude.md", "vendor");
    dir
}

/// Relative paths of the scan's files for the root in `cwd`.
fn scanned(args: &[&str], cwd: &Path) -> Vec<String> {
    let mut full = vec!["scan"];
    full.extend_from_slice(args);
    full.push(".");
    let o = promptinclude(&full, cwd);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let root = format!("{}/", cwd.canonicalize().unwrap().display());
    v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f["path"]
                .as_str()
                .unwrap()
                .trim_start_matches(&root)
                .to_string()
        })
        .collect()
}

#[test]
fn without_project_file_scan_is_unchanged() {
    let dir = tree();
    assert_eq!(
        scanned(&[], dir.path()),
        ["a.promptinclude.md", "b.promptinclude.md"]
    );
    let plain = promptinclude(&["scan", "."], dir.path());
    let off = promptinclude(&["scan", "--no-project-config", "."], dir.path());
    assert_eq!(plain.stdout, off.stdout);
}

#[test]
fn project_file_wins_whole_and_missing_gitignore_means_no_filtering() {
    let dir = tree();
    // Only max_file_count is set: the other limits are the defaults, and
    // gitignore is empty, so node_modules is scanned.
    write(dir.path(), PROJECT, r#"{"max_file_count": 2}"#);
    // --config is replaced as a whole by the project file.
    write(
        dir.path(),
        "cli.json",
        r#"{"max_file_count": 1, "max_depth": 1}"#,
    );
    assert_eq!(
        scanned(&["--config", "cli.json"], dir.path()),
        ["a.promptinclude.md", "b.promptinclude.md"]
    );
    write(dir.path(), PROJECT, r#"{"max_file_count": 5}"#);
    assert_eq!(
        scanned(&[], dir.path()),
        [
            "a.promptinclude.md",
            "b.promptinclude.md",
            "node_modules/x/v.promptinclude.md"
        ]
    );
    // Flags still win over the project file.
    assert_eq!(
        scanned(&["--max-file-count", "1"], dir.path()),
        ["a.promptinclude.md"]
    );
    // And --no-project-config turns it off.
    assert_eq!(
        scanned(&["--no-project-config"], dir.path()),
        ["a.promptinclude.md", "b.promptinclude.md"]
    );
}

#[test]
fn agent_profile_file_and_the_host_quirk() {
    let dir = tree();
    write(dir.path(), PROJECT, r#"{"max_file_count": 1}"#);
    write(
        dir.path(),
        PROFILE_DEV,
        r#"{"name_pattern": "b.*", "gitignore": "node_modules/"}"#,
    );
    assert_eq!(scanned(&[], dir.path()), ["a.promptinclude.md"]);
    assert_eq!(
        scanned(&["--agent-profile", "dev"], dir.path()),
        ["b.promptinclude.md"]
    );
    // With a profile set, the project-level file is not consulted: defaults apply.
    assert_eq!(
        scanned(&["--agent-profile", "ops"], dir.path()),
        ["a.promptinclude.md", "b.promptinclude.md"]
    );
    let o = promptinclude(&["scan", "--agent-profile", "../dev", "."], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("invalid agent profile"));
}

#[test]
fn each_root_gets_its_own_configuration() {
    let parent = tempfile::tempdir().unwrap();
    for name in ["one", "two", "three"] {
        write(
            parent.path(),
            &format!("{name}/a.promptinclude.md"),
            "alpha",
        );
        write(parent.path(), &format!("{name}/b.promptinclude.md"), "beta");
    }
    write(
        &parent.path().join("two"),
        PROJECT,
        r#"{"max_file_count": 1}"#,
    );
    let o = promptinclude(&["scan", "one", "two", "three"], parent.path());
    let counts: Vec<usize> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["files"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert_eq!(counts, [2, 1, 2]);
}

#[test]
fn render_honours_the_project_file() {
    let dir = tree();
    write(
        dir.path(),
        PROJECT,
        r#"{"max_file_count": 1, "name_pattern": "*.promptinclude.md"}"#,
    );
    let o = promptinclude(&["render", "."], dir.path());
    let section = String::from_utf8(o.stdout).unwrap();
    assert!(
        section.contains("a.promptinclude.md\n```\nalpha\n```"),
        "{section}"
    );
    assert!(!section.contains("beta"));
    assert!(
        section.contains("!!! 2 more files skipped to fit"),
        "{section}"
    );
    let o = promptinclude(&["render", "--no-project-config", "."], dir.path());
    assert!(String::from_utf8(o.stdout).unwrap().contains("beta"));
}

#[test]
fn audit_and_bundle_say_which_file_applied() {
    let dir = tree();
    write(dir.path(), PROJECT, r#"{"max_depth": 0}"#);
    let project = dir.path().canonicalize().unwrap().join(PROJECT);
    let o = promptinclude(&["audit", "--json", "."], dir.path());
    let root: Value =
        serde_json::from_str(String::from_utf8(o.stdout).unwrap().lines().next().unwrap()).unwrap();
    assert_eq!(root["config_source"], project.to_str().unwrap());
    assert_eq!(root["config"]["max_depth"], 0);
    assert_eq!(root["config"]["gitignore"], "");
    // The out-of-range limit is located at the project file.
    let limit = root["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "limit_out_of_range")
        .unwrap();
    assert_eq!(limit["path"], project.to_str().unwrap());
    let text = promptinclude(&["audit", "."], dir.path());
    assert!(String::from_utf8(text.stdout)
        .unwrap()
        .contains(&format!("config: {}", project.display())));

    let out = tempfile::tempdir().unwrap();
    let bundle = out.path().join("b");
    let o = promptinclude(
        &["bundle", "--out", bundle.to_str().unwrap(), "."],
        dir.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let manifest: Value =
        serde_json::from_slice(&fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["roots"][0]["config_source"],
        project.to_str().unwrap()
    );
    let o = promptinclude(
        &[
            "bundle",
            "--no-project-config",
            "--out",
            bundle.to_str().unwrap(),
            ".",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    let manifest: Value =
        serde_json::from_slice(&fs::read(bundle.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["roots"][0]["config_source"], "default");
}

#[test]
fn broken_project_file_is_an_error_naming_it() {
    let dir = tree();
    write(dir.path(), PROJECT, "{\"max_depth\": \"deep\"}");
    for cmd in ["scan", "render", "audit"] {
        let o = promptinclude(&[cmd, "."], dir.path());
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("_promptinclude/config.json:1")
                && e.contains("max_depth")
                && e.contains("\"deep\""),
            "{cmd}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{cmd}: {e}");
        let out = String::from_utf8_lossy(&o.stdout);
        match cmd {
            // The root's error record instead of its result.
            "scan" => {
                let record: Value = serde_json::from_str(out.trim()).unwrap();
                assert_eq!(record["root"], ".");
                assert_eq!(record["error"]["kind"], "config");
                assert_eq!(record["error"]["key"], "max_depth");
                assert_eq!(record["error"]["line"], 1);
            }
            "render" => assert!(out.is_empty(), "no section for a broken root"),
            _ => assert!(out.contains("error:"), "{out}"),
        }
    }
    // Turned off, the broken file does not matter.
    let o = promptinclude(&["scan", "--no-project-config", "."], dir.path());
    assert_eq!(o.status.code(), Some(0));
}

/// The first root's record of `audit --json` output, and its
/// `unknown_config_key` warnings.
fn unknown_key_warnings(stdout: Vec<u8>) -> (Value, Vec<Value>) {
    let root: Value =
        serde_json::from_str(String::from_utf8(stdout).unwrap().lines().next().unwrap()).unwrap();
    let unknown = root["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["kind"] == "unknown_config_key")
        .cloned()
        .collect();
    (root, unknown)
}

#[test]
fn audit_reports_unknown_keys_with_their_line() {
    // A typo ("max_file_token") silently keeps the default: the host ignores
    // unknown keys, so the scan does too, and the audit says so.
    let dir = tree();
    write(
        dir.path(),
        PROJECT,
        "{\n  \"max_depth\": 5,\n  \"max_file_token\": 500,\n  \"gitignore\": \"\"\n}\n",
    );
    let project = dir.path().canonicalize().unwrap().join(PROJECT);
    let o = promptinclude(&["audit", "--json", "."], dir.path());
    let (root, unknown) = unknown_key_warnings(o.stdout);
    assert_eq!(root["config"]["max_file_tokens"], 2000);
    assert_eq!(unknown.len(), 1, "{:?}", root["warnings"]);
    assert_eq!(unknown[0]["path"], project.to_str().unwrap());
    assert_eq!(unknown[0]["line"], 3);
    assert!(unknown[0]["message"]
        .as_str()
        .unwrap()
        .contains("`max_file_token`"));

    // Only known keys: no such warning.
    write(dir.path(), PROJECT, "{\"max_depth\": 5}");
    let o = promptinclude(&["audit", "--json", "."], dir.path());
    assert!(unknown_key_warnings(o.stdout).1.is_empty());

    // The same for a --config file, which every root without a project
    // file uses (and the command warns about once, on stderr).
    fs::write(
        dir.path().join("settings.yaml"),
        "max_depth: 5\nmax_totl_tokens: 100\n",
    )
    .unwrap();
    let args = [
        "audit",
        "--json",
        "--no-project-config",
        "--config",
        "settings.yaml",
        ".",
    ];
    let o = promptinclude(&args, dir.path());
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("settings.yaml:2: unknown key `max_totl_tokens`"));
    let (root, unknown) = unknown_key_warnings(o.stdout);
    assert_eq!(unknown.len(), 1, "{:?}", root["warnings"]);
    assert_eq!(unknown[0]["line"], 2);
    assert_eq!(unknown[0]["path"], "settings.yaml");
}
