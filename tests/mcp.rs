//! `promptinclude mcp` over its pipes, with raw JSON-RPC lines: what a
//! client gets for malformed input, wrong params and arguments, a request
//! right before end of input, a ping during a scan, a cancelled scan, and a
//! client that never answers `roots/list`. Timing is asserted as the order
//! of the responses, or as generous bounds.

use crate::common;

use std::ffi::OsString;
use std::fs;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Long enough for any answer here on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(120);

/// A running server and what it wrote.
struct Mcp {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    stderr: Option<JoinHandle<String>>,
}

impl Mcp {
    /// Starts `promptinclude mcp ARGS` in `cwd` and does the handshake, the
    /// client declaring `capabilities`.
    fn start(args: &[OsString], cwd: &Path, capabilities: Value) -> Mcp {
        Mcp::start_with_env(args, cwd, capabilities, &[])
    }

    /// [`Mcp::start`] with `env` set for the server.
    fn start_with_env(
        args: &[OsString],
        cwd: &Path,
        capabilities: Value,
        env: &[(&str, &Path)],
    ) -> Mcp {
        let mut mcp = Mcp::spawn(args, cwd, env);
        mcp.initialize(capabilities);
        mcp
    }

    /// Starts `promptinclude mcp ARGS` in `cwd`, with `env` set, without
    /// the handshake.
    fn spawn(args: &[OsString], cwd: &Path, env: &[(&str, &Path)]) -> Mcp {
        let mut command = common::command(common::binary());
        for (name, value) in env {
            command.env(name, value);
        }
        let mut child = command
            .arg("mcp")
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let value = serde_json::from_str(&line).unwrap_or(Value::String(line));
                if sender.send(value).is_err() {
                    return;
                }
            }
        });
        let mut stderr = child.stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Mcp {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr: Some(stderr),
        }
    }

    /// The handshake (request id `"init"`), the client declaring `capabilities`.
    fn initialize(&mut self, capabilities: Value) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "clientInfo": {"name": "tests/mcp.rs", "version": "0"},
            }}),
        );
        let init = self.recv();
        assert_eq!(init["id"], "init", "{init}");
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    /// Sends one message.
    fn send(&mut self, message: &Value) {
        self.send_raw(format!("{message}\n").as_bytes());
    }

    /// Sends bytes as they are.
    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("the server reads");
        stdin.flush().expect("the server reads");
    }

    /// The next message from the server.
    fn recv(&self) -> Value {
        self.lines
            .recv_timeout(PATIENCE)
            .expect("the server answers in time")
    }

    /// Sends a ping and waits for its answer, passing over what comes
    /// before it (returned).
    fn ping(&mut self, id: &str) -> Vec<Value> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        let mut before = Vec::new();
        loop {
            let message = self.recv();
            if message["id"] == id && message.get("method").is_none() {
                assert_eq!(message["result"], json!({}), "{message}");
                return before;
            }
            before.push(message);
        }
    }

    /// Sends `tools/call` of the tool with `arguments`.
    fn call(&mut self, id: &str, arguments: Value) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "prompt_includes",
                "arguments": arguments,
            }}),
        );
    }

    /// Closes stdin, and asserts that the server exits 0 with nothing more
    /// to say; its stderr.
    fn finish_quietly(self) -> String {
        let (status, rest, stderr) = self.finish();
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert!(rest.is_empty(), "{rest:?}");
        stderr
    }

    /// Closes stdin and waits for the exit: its status, the messages not
    /// yet received, stderr.
    fn finish(mut self) -> (ExitStatus, Vec<Value>, String) {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        };
        let rest = self.lines.iter().collect();
        let stderr = self
            .stderr
            .take()
            .map(|h| h.join().unwrap())
            .unwrap_or_default();
        (status, rest, stderr)
    }

    /// CPU seconds the server has used (user and system, all threads).
    fn cpu_seconds(&self) -> f64 {
        let stat = fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        // The fields after the command name, which is in parentheses.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .unwrap()
            .1
            .split_whitespace()
            .collect();
        let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
        // SAFETY: sysconf only reads a constant.
        ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The arguments `--root DIR` for each of `roots`, then `rest`.
fn args(roots: &[&Path], rest: &[&str]) -> Vec<OsString> {
    let mut args = Vec::new();
    for root in roots {
        args.push("--root".into());
        args.push(root.as_os_str().to_owned());
    }
    args.extend(rest.iter().map(OsString::from));
    args
}

/// A project with one small rule file.
fn small_project(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("project");
    fs::create_dir_all(&root).unwrap();
    fs::write(
        root.join("AGENTS.promptinclude.md"),
        "Rules. MARKER-SMALL\n",
    )
    .unwrap();
    root
}

/// A project whose scan takes a while: `mib` rule files of 1 MiB of varied
/// words each, read and counted whole under the configuration `wide.yaml`
/// (returned) that lifts every budget. (Files of 1 MiB: the server's read
/// policy skips a file over 4 MiB unread, which would make any scan quick.)
fn slow_project(dir: &Path, mib: usize) -> (std::path::PathBuf, std::path::PathBuf) {
    let root = dir.join("slow");
    fs::create_dir_all(&root).unwrap();
    let words = [
        "alpha", "beta", "gamma", "delta", "rule", "always", "never", "code",
    ];
    let mut state = 0x2545_f491_u32;
    for i in 0..mib {
        let mut text = String::with_capacity(1 << 20);
        while text.len() < 1 << 20 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            text.push_str(words[state as usize % words.len()]);
            text.push(if state.is_multiple_of(11) { '\n' } else { ' ' });
        }
        fs::write(root.join(format!("big{i:02}.promptinclude.md")), text).unwrap();
    }
    let config = dir.join("wide.yaml");
    fs::write(
        &config,
        "max_file_count: 1000000\nmax_total_tokens: 1000000000\nmax_file_tokens: 1000000000\n",
    )
    .unwrap();
    (root, config)
}

fn error_code(message: &Value) -> Option<i64> {
    message["error"]["code"].as_i64()
}

#[test]
fn malformed_lines_get_an_error_response_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    let mut mcp = Mcp::start(&args(&[&root], &[]), dir.path(), json!({}));

    mcp.send_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"\n");
    let parse_error = mcp.recv();
    assert_eq!(error_code(&parse_error), Some(-32700), "{parse_error}");
    assert_eq!(parse_error.get("id"), Some(&Value::Null), "{parse_error}");

    mcp.send_raw(b"[]\n{\"id\": 2, \"method\": \"ping\"}\n");
    let batch = mcp.recv();
    assert_eq!(
        (error_code(&batch), &batch["id"]),
        (Some(-32600), &Value::Null),
        "{batch}"
    );
    let no_version = mcp.recv();
    assert_eq!(
        (error_code(&no_version), &no_version["id"]),
        (Some(-32600), &json!(2)),
        "{no_version}"
    );

    // Over the 16 MiB a line may have: skipped, and answered by its id.
    let filler = "x".repeat(17 << 20);
    let long = json!({"jsonrpc": "2.0", "method": "tools/call", "params": {
        "name": "prompt_includes", "arguments": {"root": filler}}, "id": 3});
    mcp.send(&long);
    let too_long = mcp.recv();
    assert_eq!(
        (error_code(&too_long), &too_long["id"]),
        (Some(-32600), &json!(3)),
        "{too_long}"
    );

    assert!(mcp.ping("after").is_empty());
    mcp.finish_quietly();
}

#[test]
fn params_that_do_not_fit_and_mistyped_arguments_are_invalid_params() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    let mut mcp = Mcp::start(&args(&[&root], &[]), dir.path(), json!({}));

    mcp.send(&json!({"jsonrpc": "2.0", "id": "bare", "method": "tools/call"}));
    let bare = mcp.recv();
    assert_eq!(
        (error_code(&bare), &bare["id"]),
        (Some(-32602), &json!("bare")),
        "{bare}"
    );
    mcp.send(&json!({"jsonrpc": "2.0", "id": "nameless", "method": "prompts/get", "params": {}}));
    let nameless = mcp.recv();
    assert_eq!(error_code(&nameless), Some(-32602), "{nameless}");
    mcp.send(&json!({"jsonrpc": "2.0", "id": "nosuch", "method": "no/such/method"}));
    assert_eq!(error_code(&mcp.recv()), Some(-32601));

    for (i, (arguments, named)) in [
        (json!({"root": 5}), "root"),
        (json!({"audit": "yes"}), "audit"),
        (json!({"audit": [true]}), "audit"),
        (json!({"root": {"path": "."}}), "root"),
        (json!({"rooot": "."}), "rooot"),
    ]
    .into_iter()
    .enumerate()
    {
        mcp.call(&format!("typed-{i}"), arguments.clone());
        let answer = mcp.recv();
        assert_eq!(error_code(&answer), Some(-32602), "{arguments}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(named), "{arguments}: {message}");
    }
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "prompt", "method": "prompts/get", "params": {
        "name": "prompt_includes", "arguments": {"root": 5}}}),
    );
    let prompt = mcp.recv();
    assert_eq!(error_code(&prompt), Some(-32602), "{prompt}");

    // Null stands for an argument not given; right types work.
    mcp.call("ok", json!({"root": null, "audit": true}));
    let ok = mcp.recv();
    assert_eq!(ok["id"], "ok");
    assert_eq!(ok["result"]["isError"], false, "{ok}");
    assert!(ok["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("AGENTS.promptinclude.md"));
    let (status, _, stderr) = mcp.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

#[test]
fn a_request_right_before_end_of_input_is_answered_and_the_exit_is_clean() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    let mut mcp = Mcp::start(&args(&[&root], &[]), dir.path(), json!({}));
    mcp.call("last", json!({}));
    // A last line without its newline is read too.
    mcp.send_raw(br#"{"jsonrpc": "2.0", "id": "unterminated", "method": "ping"}"#);
    let (status, rest, stderr) = mcp.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    let ids: Vec<&Value> = rest.iter().map(|m| &m["id"]).collect();
    assert_eq!(ids.len(), 2, "{rest:?}");
    assert!(ids.contains(&&json!("unterminated")), "{rest:?}");
    let last = rest
        .iter()
        .find(|m| m["id"] == "last")
        .expect("the call is answered");
    assert!(last["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .contains("MARKER-SMALL"));
}

#[test]
fn a_ping_during_a_scan_is_answered_before_the_scan_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let (root, config) = slow_project(dir.path(), 16);
    let config = config.to_str().unwrap();
    let roots = [root.as_path(); 4];
    let mut mcp = Mcp::start(&args(&roots, &["--config", config]), dir.path(), json!({}));
    mcp.call("scan", json!({"audit": true}));
    let before = mcp.ping("during");
    assert!(before.is_empty(), "the scan was done first: {before:?}");
    let scan = mcp.recv();
    assert_eq!(scan["id"], "scan", "{scan}");
    assert_eq!(scan["result"]["isError"], false, "{scan}");
    let (status, _, stderr) = mcp.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// A cancelled call is never answered. Its scan stops: a root picked by
/// name is scanned afresh, and reads no further rule file once cancelled;
/// the `--root` roots' scan through the live index finishes (the index
/// stays current) but renders nothing more.
#[test]
fn a_cancelled_call_gets_no_answer_and_its_scan_stops() {
    let dir = tempfile::tempdir().unwrap();
    let (slow, config) = slow_project(dir.path(), 48);
    let config = config.to_str().unwrap();
    let mut mcp = Mcp::start(
        &args(&[&slow], &["--config", config]),
        dir.path(),
        json!({}),
    );
    let cancel = |mcp: &mut Mcp, id: &str| {
        mcp.send(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
            "requestId": id, "reason": "test"}}),
        );
    };

    // What the whole scan costs, once the tokenizer is loaded (by the first).
    let mut whole = f64::MAX;
    for id in ["whole-1", "whole-2"] {
        let start = mcp.cpu_seconds();
        mcp.call(id, json!({"root": slow}));
        assert_eq!(mcp.recv()["id"], id);
        whole = whole.min(mcp.cpu_seconds() - start);
    }

    let start = mcp.cpu_seconds();
    mcp.call("picked", json!({"root": slow}));
    assert!(mcp.ping("started").is_empty(), "the scan was done first");
    cancel(&mut mcp, "picked");
    assert!(mcp.ping("cancelled").is_empty());
    wait_until_idle(&mcp);
    let used = mcp.cpu_seconds() - start;
    assert!(
        used < whole / 2.0,
        "the cancelled call used {used:.2} s of CPU, the whole scan {whole:.2} s"
    );

    // Through the index (every `--root` root, made by this first call).
    mcp.call("indexed", json!({}));
    assert!(mcp.ping("indexing").is_empty(), "the scan was done first");
    cancel(&mut mcp, "indexed");
    assert!(mcp.ping("index-cancelled").is_empty());
    wait_until_idle(&mcp);
    assert!(mcp.ping("idle").is_empty());
    let (status, rest, stderr) = mcp.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(rest.is_empty(), "no answer to a cancelled call: {rest:?}");
}

/// Waits until the server uses no CPU over a second.
fn wait_until_idle(mcp: &Mcp) {
    let deadline = Instant::now() + PATIENCE;
    let mut last = mcp.cpu_seconds();
    loop {
        std::thread::sleep(Duration::from_secs(1));
        let now = mcp.cpu_seconds();
        if now - last < 0.05 {
            return;
        }
        assert!(Instant::now() < deadline, "the server never went idle");
        last = now;
    }
}

#[test]
fn a_client_that_never_answers_roots_list_gets_an_error_in_time() {
    let dir = tempfile::tempdir().unwrap();
    small_project(dir.path());
    let mut mcp = Mcp::start(&[], &dir.path().join("project"), json!({"roots": {}}));
    let started = Instant::now();
    mcp.call("rootless", json!({}));
    let asked = mcp.recv();
    assert_eq!(asked["method"], "roots/list", "{asked}");
    let mut answer = mcp.recv();
    if answer["method"] == "notifications/cancelled" {
        assert_eq!(answer["params"]["requestId"], asked["id"], "{answer}");
        answer = mcp.recv();
    }
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(answer["id"], "rootless", "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("roots/list") && text.contains("--root"),
        "{text}"
    );
    assert!(
        !text.contains("MARKER-SMALL"),
        "no fallback to the current directory: {text}"
    );
    let (status, _, stderr) = mcp.finish();
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// The text of the tool's answer to call `id` (skipping other messages).
fn tool_text(mcp: &Mcp, id: &str) -> String {
    loop {
        let message = mcp.recv();
        if message["id"] == id && message.get("method").is_none() {
            return message["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_else(|| panic!("no text: {message}"))
                .to_string();
        }
    }
}

#[test]
fn links_to_secrets_never_reach_the_client_and_home_is_not_scanned() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    fs::write(dir.path().join("id_rsa"), "SECRET-SSH-MCP\n").unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("id_rsa"),
        root.join("notes.promptinclude.md"),
    )
    .unwrap();
    std::os::unix::fs::symlink("/proc/self/environ", root.join("env.promptinclude.md")).unwrap();
    let mut mcp = Mcp::start(&args(&[&root], &["--no-env"]), &root, json!({}));
    mcp.call("leak", json!({}));
    let text = tool_text(&mcp, "leak");
    assert!(text.contains("MARKER-SMALL"), "{text}");
    assert!(
        !text.contains("SECRET-SSH-MCP") && !text.contains("PATH="),
        "{text}"
    );
    mcp.finish();

    // A client whose root is the home directory gets an error for it, not a scan.
    let home = dir.path().join("home");
    fs::create_dir_all(&home).unwrap();
    fs::write(home.join("h.promptinclude.md"), "MARKER-HOME\n").unwrap();
    let mut cmd_env_home = Mcp::start_with_env(&[], &home, json!({}), &[("HOME", &home)]);
    cmd_env_home.call("home", json!({}));
    let text = tool_text(&cmd_env_home, "home");
    assert!(
        text.contains("never scans / or the home directory"),
        "{text}"
    );
    assert!(!text.contains("MARKER-HOME"), "{text}");
    cmd_env_home.finish();
}

#[test]
fn the_root_roots_are_scanned_again_after_a_change_between_requests() {
    let dir = tempfile::tempdir().unwrap();
    let first = small_project(dir.path());
    let second = dir.path().join("second");
    fs::create_dir_all(&second).unwrap();
    fs::write(second.join("b.promptinclude.md"), "Second. MARKER-TWO\n").unwrap();
    fs::write(second.join("c.promptinclude.md"), "Third. MARKER-THREE\n").unwrap();
    let roots = [first.as_path(), second.as_path()];
    let mut mcp = Mcp::start(&args(&roots, &[]), dir.path(), json!({}));
    mcp.call("before", json!({}));
    let before = tool_text(&mcp, "before");
    assert!(before.contains("MARKER-SMALL"), "{before}");

    // An edit, a new rule file, and a project configuration that keeps one
    // file per root.
    fs::write(
        first.join("AGENTS.promptinclude.md"),
        "Rules. MARKER-EDITED\n",
    )
    .unwrap();
    fs::write(first.join("c.promptinclude.md"), "New. MARKER-NEW\n").unwrap();
    let project = second.join(".a0proj/plugins/_promptinclude");
    fs::create_dir_all(&project).unwrap();
    fs::write(project.join("config.json"), r#"{"max_file_count": 1}"#).unwrap();
    mcp.call("after", json!({}));
    let after = tool_text(&mcp, "after");
    mcp.call("audit", json!({"audit": true}));
    let audit = tool_text(&mcp, "audit");
    assert!(
        after.contains("MARKER-EDITED") && after.contains("MARKER-NEW"),
        "{after}"
    );
    assert!(!after.contains("MARKER-SMALL"), "{after}");
    assert!(
        before.contains("MARKER-THREE") && !after.contains("MARKER-THREE"),
        "{after}"
    );

    // What a server that never saw the tree before answers.
    let mut fresh = Mcp::start(&args(&roots, &[]), dir.path(), json!({}));
    fresh.call("after", json!({}));
    assert_eq!(after, tool_text(&fresh, "after"));
    fresh.call("audit", json!({"audit": true}));
    assert_eq!(audit, tool_text(&fresh, "audit"));
    // And each root picked by name (scanned afresh).
    for (i, root) in roots.iter().enumerate() {
        let id = format!("one-{i}");
        mcp.call(&id, json!({"root": root}));
        fresh.call(&id, json!({"root": root}));
        assert_eq!(tool_text(&mcp, &id), tool_text(&fresh, &id));
    }
    for server in [mcp, fresh] {
        let (status, _, stderr) = server.finish();
        assert_eq!(status.code(), Some(0), "{stderr}");
    }
}

/// The interrupt signals reach the main thread alone: every other thread
/// (the signal thread, the runtime's blocking threads, the scan's workers)
/// keeps them off, so that their handlers run before the main thread can
/// act on what followed them (`src/interrupt.rs`). Read from each thread's
/// `SigBlk` in `/proc`.
#[test]
fn every_thread_but_the_main_one_keeps_the_interrupt_signals_off() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    let mut mcp = Mcp::start(&args(&[&root], &[]), dir.path(), json!({}));
    mcp.call("scan", json!({}));
    assert!(tool_text(&mcp, "scan").contains("MARKER-SMALL"));
    let pid = mcp.child.id();
    let interrupts = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP]
        .iter()
        .fold(0u64, |mask, &sig| mask | 1 << (sig - 1));
    let mut others = Vec::new();
    for task in fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let task = task.unwrap().path();
        let status = fs::read_to_string(task.join("status")).unwrap();
        let blocked = status
            .lines()
            .find_map(|line| line.strip_prefix("SigBlk:"))
            .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
            .unwrap();
        let name = fs::read_to_string(task.join("comm")).unwrap();
        let name = name.trim();
        if task.file_name().unwrap().to_str() == Some(&pid.to_string()) {
            assert_eq!(blocked & interrupts, 0, "the main thread blocks them");
        } else {
            assert_eq!(blocked & interrupts, interrupts, "thread {name}");
            others.push(name.to_string());
        }
    }
    // The signal thread, a worker of the scan, one reading stdin at least.
    assert!(others.len() >= 3, "{others:?}");
    assert!(others.iter().any(|n| n == "signals"), "{others:?}");
    mcp.finish();
}

/// The error a request whose id this session already used gets (MCP
/// 2025-06-18, "Basic": an id must not have been used before in the session).
fn reused_id(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message": format!(
        "Invalid Request: request id {id} was already used in this session \
         (MCP 2025-06-18: a request id must not be reused)"
    )}})
}

#[test]
fn a_request_reusing_an_id_gets_its_own_error_and_the_first_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (root, config) = slow_project(dir.path(), 16);
    let config = config.to_str().unwrap();
    let roots = [root.as_path(); 4];
    let mut mcp = Mcp::start(&args(&roots, &["--config", config]), dir.path(), json!({}));
    mcp.call("dup", json!({"audit": true}));
    // While the call is in flight.
    mcp.send(&json!({"jsonrpc": "2.0", "id": "dup", "method": "ping"}));
    assert_eq!(mcp.recv(), reused_id(json!("dup")));
    let scan = mcp.recv();
    assert_eq!(scan["id"], "dup", "{scan}");
    assert_eq!(scan["result"]["isError"], false, "{scan}");
    // Once answered, and the handshake's own id: still used.
    for id in [json!("dup"), json!("init")] {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        assert_eq!(mcp.recv(), reused_id(id));
    }
    // 7 and "7" are different ids.
    for id in [json!(7), json!("7")] {
        mcp.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
        assert_eq!(
            mcp.recv(),
            json!({"jsonrpc": "2.0", "id": id, "result": {}})
        );
    }
    mcp.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "ping"}));
    assert_eq!(mcp.recv(), reused_id(json!(7)));
    assert!(mcp.ping("last").is_empty());
    mcp.finish_quietly();
}

#[test]
fn requests_before_initialize_get_an_error_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    let mut mcp = Mcp::spawn(&args(&[&root], &[]), dir.path(), &[]);
    let not_initialized = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message":
            "Invalid Request: the session is not initialized; send `initialize` first \
             (MCP 2025-06-18: only `ping` may come before it)"}})
    };
    mcp.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(mcp.recv(), not_initialized(json!(1)));
    // With the metadata of a revision that has no `initialize`: the same.
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "meta", "method": "tools/list", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
    );
    assert_eq!(mcp.recv(), not_initialized(json!("meta")));
    // A notification before it is dropped; ping is answered.
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    assert_eq!(mcp.recv(), json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    // A client that asks for a later revision is answered with the one the
    // server follows.
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests/mcp.rs", "version": "0"},
        }}),
    );
    let init = mcp.recv();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let tools = mcp.recv();
    assert_eq!(tools["id"], 3, "{tools}");
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    mcp.call("scan", json!({}));
    assert!(tool_text(&mcp, "scan").contains("MARKER-SMALL"));
    mcp.finish_quietly();
}

#[test]
fn a_batch_gets_one_invalid_request_error_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    let mut mcp = Mcp::start(&args(&[&root], &[]), dir.path(), json!({}));
    let batch_error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32600, "message":
        "Invalid Request: a batch (a JSON array); MCP 2025-06-18 has no batching: \
         send each message on its own line"}});
    for batch in [
        json!([
            {"jsonrpc": "2.0", "id": 5, "method": "ping"},
            {"jsonrpc": "2.0", "id": 6, "method": "tools/list"},
        ]),
        json!([{"jsonrpc": "2.0", "method": "notifications/initialized"}]),
        json!([]),
    ] {
        mcp.send(&batch);
        assert_eq!(mcp.recv(), batch_error, "{batch}");
    }
    // One answer each, nothing more, and the server goes on.
    assert!(mcp.ping("after").is_empty());
    mcp.call("scan", json!({}));
    assert!(tool_text(&mcp, "scan").contains("MARKER-SMALL"));
    mcp.finish_quietly();
}

/// A project configuration that is a link out of the root is not read by
/// the server: what the client gets names the file and the reason, never a
/// value from it (the exact commands' parse errors quote values).
#[test]
fn a_project_config_linked_out_of_the_root_is_not_read_or_quoted() {
    const SECRET: &str = "SECRET-CONFIG-MCP-8a1f";
    let dir = tempfile::tempdir().unwrap();
    let root = small_project(dir.path());
    fs::write(
        dir.path().join("secret.json"),
        format!("{{\"max_depth\": \"{SECRET}\"}}\n"),
    )
    .unwrap();
    let config = root.join(".a0proj/plugins/_promptinclude/config.json");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.json"), &config).unwrap();
    let scan = common::promptinclude(&["scan", "--no-env", "."], &root);
    assert!(String::from_utf8_lossy(&scan.stderr).contains(SECRET));

    let mut mcp = Mcp::start(&args(&[&root], &["--no-env"]), &root, json!({}));
    // Through the index (`--root`), and the root picked by name (afresh).
    mcp.call("indexed", json!({}));
    mcp.call("named", json!({"root": root}));
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "prompt", "method": "prompts/get",
        "params": {"name": "prompt_includes"}}),
    );
    mcp.send(&json!({"jsonrpc": "2.0", "id": "resources", "method": "resources/list"}));
    // What Agent Zero loads there, as `agent_context` tells it.
    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "agent-zero", "method": "tools/call",
        "params": {"name": "agent_context", "arguments": {"agent": "agent-zero"}}}),
    );
    let mut answers = Vec::new();
    while answers.len() < 5 {
        let message = mcp.recv();
        if message.get("method").is_none() {
            answers.push(message);
        }
    }
    for answer in &answers {
        let text = answer.to_string();
        assert!(!text.contains(SECRET), "{text}");
    }
    for id in ["indexed", "named", "agent-zero"] {
        let answer = answers.iter().find(|a| a["id"] == id).unwrap();
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(
            text.contains(&config.display().to_string())
                && text.contains("not read (outside_root)"),
            "{text}"
        );
    }
    let stderr = mcp.finish_quietly();
    assert!(!stderr.contains(SECRET), "{stderr}");
}
