//! Output safety: a reader that goes away early, an interrupt in the middle of
//! writing files, and configuration values that cannot be used.
//!
//! The guarantees these tests pin down are listed in `docs/guarantees.md`.

use crate::child;
use crate::common;

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use child::{run, Running};

/// Prefix of the binary's temporary files and directories (`cli::atomic`).
const TEMP_PREFIX: &str = ".promptinclude-tmp-";

/// A root with one rule file big enough to be cropped (about 30 KB).
fn big_root(parent: &Path) -> PathBuf {
    let root = parent.join("repo");
    fs::create_dir_all(&root).unwrap();
    let line = "Always run the formatter before committing; never push to main directly.\n";
    fs::write(root.join("rules.promptinclude.md"), line.repeat(400)).unwrap();
    fs::write(root.join("b.promptinclude.md"), "short rule\n").unwrap();
    root
}

/// A `--roots-from` file naming `root` `n` times.
fn roots_file(parent: &Path, root: &Path, n: usize) -> PathBuf {
    let list = parent.join("roots.txt");
    let line = format!("{}\n", root.display());
    fs::write(&list, line.repeat(n)).unwrap();
    list
}

#[test]
fn closed_stdout_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let root = big_root(dir.path());
    let list = roots_file(dir.path(), &root, 3000);
    let paths = "node_modules/x\nsrc/a.promptinclude.md\n".repeat(200_000);
    let (list, root) = (list.to_str().unwrap(), root.to_str().unwrap());
    let cases: [(Vec<&str>, Option<&str>); 4] = [
        (vec!["scan", "--roots-from", list], None),
        (vec!["audit", "--roots-from", list], None),
        (vec!["render", "--max-file-tokens", "20000", root], None),
        (vec!["check-ignore", "-n", "--stdin"], Some(&paths)),
    ];
    for (args, input) in cases {
        let mut cmd = Command::new(common::binary());
        cmd.args(&args);
        let input = input.map(|s| s.as_bytes().to_vec());
        let mut child = Running::start_with(&mut cmd, input, false);
        let mut reader = BufReader::new(child.take_stdout());
        let mut first = String::new();
        reader.read_line(&mut first).unwrap();
        assert!(!first.is_empty());
        drop(reader); // `| head -1`
        let out = child.finish(Duration::from_secs(120));
        assert!(!out.timed_out, "{args:?} hung on a closed pipe");
        assert_eq!(out.signal, None, "{args:?} killed by a signal");
        assert!(
            !out.stderr_text().contains("panicked") && !out.stderr_text().contains("Broken pipe"),
            "{args:?}: {}",
            out.stderr_text()
        );
        assert!(
            matches!(out.code, Some(0 | 1)),
            "{args:?}: exit {:?}: {}",
            out.code,
            out.stderr_text()
        );
    }
}

#[test]
fn closed_stdout_through_a_shell_pipeline() {
    let dir = tempfile::tempdir().unwrap();
    let root = big_root(dir.path());
    let list = roots_file(dir.path(), &root, 2000);
    let script = r#"set -o pipefail; "$0" scan --roots-from "$1" | head -1 > /dev/null; echo "status ${PIPESTATUS[0]}" >&2"#;
    let out = run(
        Command::new("bash")
            .args(["-c", script])
            .arg(common::binary())
            .arg(&list),
        Duration::from_secs(120),
    );
    let err = out.stderr_text();
    assert!(err.contains("status 0"), "{err}");
    assert!(!err.contains("panicked") && !err.contains("error"), "{err}");
}

/// Names in `dir` that start with the temporary prefix (recursively one level
/// below `dir` too, for bundle directories).
fn temporaries(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(TEMP_PREFIX) || name.ends_with(".removing") {
            found.push(name);
        }
    }
    found
}

/// The signals that end a run cleanly, taken in turn by the runs below.
const INTERRUPTS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Starts `args`, sends `sig` after `delay`, and returns the outcome.
fn interrupt_after(cmd: &mut Command, sig: libc::c_int, delay: Duration) -> child::Outcome {
    let child = Running::start(cmd, None);
    std::thread::sleep(delay);
    // SAFETY: plain syscall on our own, not yet reaped, child.
    unsafe { libc::kill(child.pid(), sig) };
    child.finish(Duration::from_secs(60))
}

#[test]
fn ctrl_c_during_render_out_dir_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = big_root(dir.path());
    let list = roots_file(dir.path(), &root, 5000);
    let whole = run(
        Command::new(common::binary()).arg("render").arg(&root),
        Duration::from_secs(60),
    );
    whole.assert_code(0);
    let mut interrupted_mid_run = 0;
    // Writes are a fraction of the run (a SIGKILL leaves a temporary in about a
    // quarter of runs), so several delays make it likely that one lands mid-write.
    for (k, delay_ms) in (100u64..1900).step_by(150).enumerate() {
        let out_dir = dir.path().join(format!("out{k}"));
        let sig = INTERRUPTS[k % INTERRUPTS.len()];
        let out = interrupt_after(
            Command::new(common::binary())
                .args(["render", "--out-dir"])
                .arg(&out_dir)
                .arg("--roots-from")
                .arg(&list),
            sig,
            Duration::from_millis(delay_ms),
        );
        assert!(!out.timed_out);
        if out.code == Some(0) {
            continue; // finished before the signal: nothing to check
        }
        interrupted_mid_run += 1;
        assert_eq!(out.signal, Some(sig), "{}", out.stderr_text());
        if !out_dir.exists() {
            continue;
        }
        assert_eq!(
            temporaries(&out_dir),
            Vec::<String>::new(),
            "after {delay_ms} ms"
        );
        for entry in fs::read_dir(&out_dir).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(
                fs::read(&path).unwrap(),
                whole.stdout,
                "{} is not a complete section",
                path.display()
            );
        }
    }
    assert!(
        interrupted_mid_run > 0,
        "every run finished before the signal"
    );
}

#[test]
fn ctrl_c_during_bundle_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = big_root(dir.path());
    let list = roots_file(dir.path(), &root, 3000);
    let parent = dir.path().join("bundles");
    fs::create_dir(&parent).unwrap();
    let mut interrupted_mid_run = 0;
    for (k, delay_ms) in (150u64..1900).step_by(250).enumerate() {
        let out = parent.join(format!("b{k}"));
        let sig = INTERRUPTS[k % INTERRUPTS.len()];
        let result = interrupt_after(
            Command::new(common::binary())
                .args(["bundle", "--out"])
                .arg(&out)
                .arg("--roots-from")
                .arg(&list),
            sig,
            Duration::from_millis(delay_ms),
        );
        assert!(!result.timed_out);
        if result.code == Some(0) {
            assert!(out.join("manifest.json").is_file());
            continue;
        }
        interrupted_mid_run += 1;
        assert_eq!(result.signal, Some(sig), "{}", result.stderr_text());
        assert_eq!(
            temporaries(&parent),
            Vec::<String>::new(),
            "after {delay_ms} ms"
        );
        assert!(
            !out.exists(),
            "a bundle appeared although the run was interrupted"
        );
    }
    assert!(
        interrupted_mid_run > 0,
        "every run finished before the signal"
    );
}

/// A parent that sends a signal and at once closes the command's input
/// (Python's `send_signal` then `communicate`) sees it end by the signal,
/// not exit with an error about the closed input: the signal came first.
/// The MCP server waits on stdin, and ends with an error when it closes.
#[test]
fn a_signal_then_closed_stdin_ends_the_command_by_the_signal() {
    use std::os::unix::process::ExitStatusExt as _;
    use std::process::Stdio;
    for k in 0..24 {
        let sig = INTERRUPTS[k % INTERRUPTS.len()];
        let mut child = Command::new(common::binary())
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Waiting on stdin (the handlers are in place before any reading).
        std::thread::sleep(Duration::from_millis(150));
        let pid = child.id() as libc::pid_t;
        // Stopped, the command gets the signal and the end of its input
        // together when it goes on. (Its signal thread usually wins that
        // race anyway; on a loaded machine it lost once, in the wheel's
        // check of the same thing. The command now waits for it.)
        // SAFETY: plain syscalls on our own, not yet reaped, child.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        std::thread::sleep(Duration::from_millis(20));
        // SAFETY: as above.
        unsafe { libc::kill(pid, sig) };
        drop(child.stdin.take());
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGCONT) };
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            out.status.signal(),
            Some(sig),
            "run {k}: {:?}, stderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Runs `scan` with a configuration file holding `text` and returns stderr.
fn config_error(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).unwrap();
    let out = run(
        Command::new(common::binary())
            .arg("scan")
            .arg("--config")
            .arg(&path)
            .arg(dir),
        Duration::from_secs(30),
    );
    out.assert_code(2);
    assert!(out.stdout.is_empty());
    out.stderr_text()
}

#[test]
fn out_of_range_and_wrong_typed_config_values_name_the_key() {
    let dir = tempfile::tempdir().unwrap();
    // Values the reference cannot use (negative, float, boolean and huge
    // numbers it can: see tests/config_values.rs).
    let cases: &[(&str, &str, &str)] = &[
        (
            "d.json",
            r#"{"max_total_tokens": "8000"}"#,
            "max_total_tokens",
        ),
        ("e.json", r#"{"name_pattern": ["*.md"]}"#, "name_pattern"),
        ("f.json", r#"{"gitignore": 12}"#, "gitignore"),
        ("g.yaml", "max_depth: ~\n", "max_depth"),
        (
            "h.yaml",
            "max_total_tokens: 2024-01-01\n",
            "max_total_tokens",
        ),
        ("i.yaml", "gitignore:\n  - venv/**\n", "gitignore"),
        ("j.yaml", "name_pattern: {a: 1}\n", "name_pattern"),
        ("k.yaml", "max_file_count: 'five'\n", "max_file_count"),
        ("l.yaml", "max_file_tokens: [2]\n", "max_file_tokens"),
    ];
    for (name, text, key) in cases {
        let err = config_error(dir.path(), name, text);
        // Named once: the cause is not repeated by the error chain.
        assert_eq!(
            err.matches(&format!("key `{key}`")).count(),
            1,
            "{name} {text:?}: {err}"
        );
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    }
    // The same for flags: clap names the flag.
    for (flag, value) in [
        ("--max-depth", "deep"),
        ("--max-file-count", "lots"),
        ("--max-total-tokens", "1e99x"),
    ] {
        let out = run(
            Command::new(common::binary()).args(["scan", &format!("{flag}={value}"), "."]),
            Duration::from_secs(30),
        );
        out.assert_code(2);
        assert!(out.stderr_text().contains(flag), "{}", out.stderr_text());
    }
}

#[test]
fn huge_but_valid_numbers_do_not_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let root = big_root(dir.path());
    let config = dir.path().join("max.json");
    let max = i64::MAX;
    fs::write(
        &config,
        format!(
            r#"{{"max_depth": {max}, "max_file_tokens": {max}, "max_file_count": {max}, "max_total_tokens": {max}}}"#
        ),
    )
    .unwrap();
    let out = run(
        Command::new(common::binary())
            .arg("scan")
            .arg("--config")
            .arg(&config)
            .arg(&root),
        Duration::from_secs(60),
    );
    out.assert_code(0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["files"].as_array().unwrap().len(), 2);
    assert!(v["files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["status"] == "ok"));
}
