//! The command line's contract: outputs, errors and exit codes.

use crate::common;

use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::promptinclude;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn unknown_flag_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let o = promptinclude(&["scan", "--no-such-flag"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--no-such-flag"), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
}

#[test]
fn malformed_and_mistyped_configs_name_file_line_and_key() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("bad.yaml"),
        "max_depth: 3\ngitignore: [unclosed\n",
    )
    .unwrap();
    let o = promptinclude(&["scan", "--config", "bad.yaml", "."], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains("bad.yaml:") && e.contains("malformed YAML"),
        "{e}"
    );
    assert_eq!(e.lines().count(), 1, "one-line message: {e}");

    fs::write(
        dir.path().join("typed.json"),
        "{\n  \"max_depth\": 2,\n  \"max_total_tokens\": \"lots\"\n}\n",
    )
    .unwrap();
    let o = promptinclude(&["render", "--config", "typed.json", "."], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(
        e.contains(
            "typed.json:3: key `max_total_tokens`: `\"lots\"`: str \"lots\", expected a number"
        ),
        "{e}"
    );

    let o = promptinclude(&["scan", "--config", "missing.yaml", "."], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("missing.yaml"), "{}", stderr(&o));
}

#[test]
fn raising_pattern_line_fails_before_walking() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("ignore"),
        "# comment\nbuild/\n[z-a]\nfoo\\\n",
    )
    .unwrap();
    fs::write(dir.path().join("a.promptinclude.md"), "x").unwrap();
    let o = promptinclude(&["scan", "--gitignore-file", "ignore", "."], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty(), "nothing scanned");
    let e = stderr(&o);
    assert!(e.contains("line 3") && e.contains("[z-a]"), "{e}");
}

#[test]
fn non_directory_root_gets_empty_record_warning_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.promptinclude.md"), "hello").unwrap();
    let o = promptinclude(&["scan", "missing", ".", "a.promptinclude.md"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8(o.stdout.clone()).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        r#"{"root": "missing", "is_dir": false, "files": [], "skipped_count": 0}"#
    );
    assert!(
        lines[1].starts_with(r#"{"root": ".", "files": [{"path": ""#),
        "{}",
        lines[1]
    );
    assert_eq!(
        lines[2],
        r#"{"root": "a.promptinclude.md", "is_dir": false, "files": [], "skipped_count": 0}"#
    );
    let e = stderr(&o);
    assert!(
        e.contains("missing: not a directory") && e.contains("a.promptinclude.md: not a directory"),
        "{e}"
    );
}

#[test]
fn roots_from_stdin_keeps_input_order() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["b", "a", "c"] {
        fs::create_dir(dir.path().join(name)).unwrap();
        fs::write(dir.path().join(name).join("r.promptinclude.md"), name).unwrap();
    }
    let mut child = Command::new(common::binary())
        .args(["scan", "--roots-from", "-", "a"])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"c\nb\r\n\n")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success());
    let roots: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["root"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(roots, ["a", "c", "b"]);
}

#[test]
fn check_ignore_reports_deciding_pattern() {
    let dir = tempfile::tempdir().unwrap();
    let o = promptinclude(
        &[
            "check-ignore",
            "node_modules/",
            "src/a.promptinclude.md",
            "venv/",
            "a/venv/",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "<default>:3:**/node_modules/**\tnode_modules/\n<default>:1:venv/**\tvenv/\n"
    );

    fs::write(dir.path().join("ign"), "*.md\n\n!keep.md\nbuild/\n").unwrap();
    let o = promptinclude(
        &[
            "check-ignore",
            "--gitignore-file",
            "ign",
            "--json",
            "x.md",
            "keep.md",
            "build/",
            "build",
            "src/",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0));
    let want = [
        r#"{"path":"x.md","ignored":true,"pattern":"*.md","line":1}"#,
        r#"{"path":"keep.md","ignored":false,"pattern":"!keep.md","line":3}"#,
        r#"{"path":"build/","ignored":true,"pattern":"build/","line":4}"#,
        r#"{"path":"build","ignored":false,"pattern":null,"line":null}"#,
        r#"{"path":"src/","ignored":false,"pattern":null,"line":null}"#,
    ];
    assert_eq!(String::from_utf8(o.stdout).unwrap(), want.join("\n") + "\n");

    let mut child = Command::new(common::binary())
        .args([
            "check-ignore",
            "--gitignore-file",
            "ign",
            "--stdin",
            "-z",
            "-n",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a\nb.txt\0c.md\0")
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.stdout, b"::\ta\nb.txt\0ign:1:*.md\tc.md\0");

    let o = promptinclude(&["check-ignore", "src/x"], dir.path());
    assert_eq!(o.status.code(), Some(1), "nothing ignored");
}

#[test]
fn output_is_independent_of_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = common::Rng::new(42);
    let roots: Vec<String> = (0..40)
        .map(|i| {
            let name = format!("r{i}");
            common::random_tree(&mut rng, &dir.path().join(&name));
            name
        })
        .collect();
    let mut args = vec!["--max-total-tokens", "3000"];
    args.extend(roots.iter().map(String::as_str));
    let one = promptinclude(&[&["scan", "-j", "1"][..], &args].concat(), dir.path());
    let many = promptinclude(&[&["scan", "-j", "7"][..], &args].concat(), dir.path());
    assert!(one.status.success());
    assert_eq!(String::from_utf8_lossy(&one.stdout).lines().count(), 40);
    assert_eq!(one.stdout, many.stdout);
}

#[test]
fn fifo_named_like_a_rule_file_is_unreadable_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("b.promptinclude.md");
    let c = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    fs::write(dir.path().join("a.promptinclude.md"), "alpha").unwrap();
    let start = Instant::now();
    let mut child = Command::new(common::binary())
        .args(["scan", "."])
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("scan blocked on a fifo");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 1);
    assert_eq!(v["skipped_count"], 1);
}

#[test]
fn undecodable_names_sort_as_python_surrogates() {
    let dir = tempfile::tempdir().unwrap();
    // Python orders '\ud7ff' < '\udcff' (the byte 0xff) < '\ue000'; UTF-8 bytes would put 0xff last.
    let names: [&[u8]; 3] = [
        b"\xed\x9f\xbf.promptinclude.md",
        b"\xff.promptinclude.md",
        b"\xee\x80\x80.promptinclude.md",
    ];
    for (i, name) in names.iter().enumerate() {
        fs::write(
            dir.path().join(std::ffi::OsStr::from_bytes(name)),
            format!("file {i}"),
        )
        .unwrap();
    }
    let o = promptinclude(&["scan", "."], dir.path());
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let contents: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["content"].as_str().unwrap())
        .collect();
    assert_eq!(contents, ["file 0", "file 1", "file 2"]);
    let path = v["files"][1]["path"].as_str().unwrap();
    assert!(path.ends_with("/\u{FFFD}.promptinclude.md"), "{path}");
}

/// The README shows one `context` example per agent (tests/docs.rs checks
/// each prints what the README shows), and the sizes the text prints for
/// it are those of the parts `--json` lists.
#[test]
fn the_readme_has_a_context_example_per_agent() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(repo.join("README.md")).unwrap();
    // The agents walk every directory above the working directory, so the
    // examples run in a copy of the fixture where nothing above can add a file.
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    common::copy_tree(&repo.join("fixtures/agents"), &base.join("fixtures/agents"));
    let mut agents = Vec::new();
    for (at, _) in readme.match_indices("\n$ ") {
        let line_end = at + 1 + readme[at + 1..].find('\n').unwrap();
        let command = &readme[at + 3..line_end];
        let words: Vec<&str> = command.split_whitespace().collect();
        let (env, args) = match words.iter().position(|w| *w == "promptinclude") {
            Some(i) => (&words[..i], &words[i + 1..]),
            None => continue,
        };
        if args.first() != Some(&"context") {
            continue;
        }
        let run = |extra: &[&str]| {
            let mut cmd = common::command(common::binary());
            cmd.args(args).args(extra).current_dir(&base);
            for pair in env {
                let (k, v) = pair.split_once('=').unwrap();
                cmd.env(k, v);
            }
            let out = cmd.output().unwrap();
            assert!(
                out.status.success(),
                "{command}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout)
                .unwrap()
                .replace(base.to_str().unwrap(), "…")
        };
        let printed = run(&[]);
        let doc: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
        let sizes: Vec<String> = doc["parts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!("{} bytes, {} tokens", p["bytes"], p["tokens"]))
            .collect();
        for size in &sizes {
            assert!(
                printed.contains(size.as_str()),
                "{command}: {printed:?} lacks {size:?}"
            );
        }
        agents.push(doc["agent"].as_str().unwrap().to_string());
    }
    agents.sort();
    assert_eq!(
        agents,
        [
            "agent-zero",
            "claude-code",
            "codex",
            "copilot-cli",
            "gemini",
            "opencode",
            "pi",
            "qwen-code"
        ],
        "one README example per agent"
    );
}

/// `--version` names the versions of the agents the e2e tests run (their
/// npm pins), so a pin bumped without its model, or the reverse, fails.
#[test]
fn version_names_the_pinned_agents_and_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let o = promptinclude(&["--version"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = String::from_utf8(o.stdout).unwrap();
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let pin = |file: &str, package: &str| -> String {
        let json: serde_json::Value =
            serde_json::from_slice(&fs::read(manifest.join(file)).unwrap()).unwrap();
        json["dependencies"][package].as_str().unwrap().to_string()
    };
    let wanted = [
        format!(
            "Codex CLI {}",
            pin("tests/agents/package.json", "@openai/codex")
        ),
        format!(
            "Claude Code {}",
            pin("tests/agents/package.json", "@anthropic-ai/claude-code")
        ),
        format!(
            "Gemini CLI {}",
            pin("tests/agents/package.json", "@google/gemini-cli")
        ),
        format!(
            "GitHub Copilot CLI {}",
            pin("tests/agents/package.json", "@github/copilot")
        ),
        format!(
            "opencode, the open source coding agent {}",
            pin("tests/agents/package.json", "opencode-ai")
        ),
        format!(
            "Qwen Code {}",
            pin("tests/agents/package.json", "@qwen-code/qwen-code")
        ),
        format!(
            "pi coding agent {}",
            pin("tests/pi/package.json", "@mariozechner/pi-coding-agent")
        ),
        format!(
            "Prompt Include plugin 1.0.0 (source sha256 {})",
            promptinclude::agents::agent_zero::REFERENCE_SHA256
        ),
    ];
    for line in wanted {
        assert!(text.contains(&line), "--version lacks {line:?}:\n{text}");
    }
    // `-V` is the one line.
    let short = promptinclude(&["-V"], dir.path());
    assert_eq!(
        String::from_utf8(short.stdout).unwrap(),
        format!("promptinclude {}\n", env!("CARGO_PKG_VERSION"))
    );
}

/// The Agent Zero source the oracle tests run is the one `--version` says
/// is reproduced: a changed reference must be looked at, not pass silently.
#[test]
fn the_reference_run_is_the_one_reproduced() {
    let reference = std::env::var_os("PROMPTINCLUDE_REFERENCE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/agent-zero")
        });
    if !reference.is_dir() {
        assert!(
            std::env::var("PROMPTINCLUDE_REQUIRE_ORACLE").as_deref() != Ok("1"),
            "PROMPTINCLUDE_REQUIRE_ORACLE=1 but there is no reference at {}",
            reference.display()
        );
        eprintln!("skipped: no reference at {}", reference.display());
        return;
    }
    assert_eq!(
        promptinclude::agents::agent_zero::reference_digest(&reference).unwrap(),
        promptinclude::agents::agent_zero::REFERENCE_SHA256,
        "the reference at {} is not the one reproduced",
        reference.display()
    );
}
