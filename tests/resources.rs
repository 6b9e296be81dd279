//! Resource bounds: what one scan may hold in memory, on runaway inputs.
//!
//! Each case runs the binary as a child and reads its own peak resident set
//! (`wait4`'s `ru_maxrss`). The bounds are stated in `docs/guarantees.md`:
//! a scan holds the candidate list (about a hundred bytes per candidate) and,
//! while the budget pass reads a file, that file's bytes plus its decoded text
//! (the text reuses the bytes when they are valid UTF-8 without `\r`).
//!
//! Sizes are small by default so the suite stays fast; with
//! `PROMPTINCLUDE_HEAVY=1` they are the issues': a 200 MB rule file, 500 MB
//! files that are one pre-tokenizer piece each, and a million rule files.

use crate::child;
use crate::common;

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use child::{run, Outcome};
use serde_json::Value;

const MIB: u64 = 1024 * 1024;

/// The process's baseline: binary, tokenizer tables, thread stacks (KiB).
const BASELINE_KIB: i64 = 64 * 1024;

fn heavy() -> bool {
    std::env::var_os("PROMPTINCLUDE_HEAVY").is_some_and(|v| v == "1")
}

fn scan(root: &Path, args: &[&str], timeout: Duration) -> (Outcome, Value) {
    let out = run(
        Command::new(common::binary())
            .arg("scan")
            .args(args)
            .arg(root),
        timeout,
    );
    out.assert_code(0);
    let value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    eprintln!(
        "peak RSS {} MiB in {:?}",
        out.max_rss_kib / 1024,
        out.elapsed
    );
    (out, value)
}

/// Writes `size` bytes of ordinary rule text (lines of words) to `path`.
fn write_rule_text(path: &Path, size: u64) {
    let mut block = String::new();
    let mut i = 0u64;
    while block.len() < 64 * 1024 {
        block.push_str(&format!(
            "- rule {i}: always format code, run tests, and never commit secrets (ünïcödé 日本語)\n"
        ));
        i += 1;
    }
    let mut file = std::io::BufWriter::new(fs::File::create(path).unwrap());
    let mut written = 0;
    while written < size {
        let n = (size - written).min(block.len() as u64) as usize;
        file.write_all(&block.as_bytes()[..n]).unwrap();
        written += n as u64;
    }
    file.flush().unwrap();
}

/// Writes `size` bytes of made-up words, almost none repeated, so counting
/// them is real byte-pair work (the tokenizer remembers pieces it has seen,
/// which makes [`write_rule_text`]'s repeated block cheap to count).
fn write_unique_words(path: &Path, size: u64) {
    let mut rng = common::Rng::new(0x5eed);
    let mut file = std::io::BufWriter::new(fs::File::create(path).unwrap());
    let mut written = 0u64;
    let mut word = Vec::with_capacity(16);
    while written < size {
        word.clear();
        for _ in 0..4 + rng.below(9) {
            word.push(b'a' + rng.below(26) as u8);
        }
        word.push(if rng.chance(10) { b'\n' } else { b' ' });
        file.write_all(&word).unwrap();
        written += word.len() as u64;
    }
    file.flush().unwrap();
}

#[test]
fn a_huge_rule_file_completes_within_a_small_multiple_of_its_size() {
    let size = if heavy() { 200 * MIB } else { 20 * MIB };
    let dir = tempfile::tempdir().unwrap();
    write_rule_text(&dir.path().join("big.promptinclude.md"), size);
    fs::write(dir.path().join("small.promptinclude.md"), "keep me\n").unwrap();
    let (out, result) = scan(dir.path(), &[], Duration::from_secs(600));
    let files = result["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["status"], "cropped");
    assert_eq!(files[1]["content"], "keep me\n");
    let bound = one_file_bound_kib(size);
    assert!(
        out.max_rss_kib <= bound,
        "peak {} KiB > {} KiB for a {} MiB file",
        out.max_rss_kib,
        bound,
        size / MIB
    );
}

#[test]
fn a_huge_rule_file_with_crlf_line_ends() {
    // Universal newlines only shrink the text: converted in place.
    let size = if heavy() { 200 * MIB } else { 20 * MIB };
    let dir = tempfile::tempdir().unwrap();
    let line = "a rule with windows line ends\r\n";
    fs::write(
        dir.path().join("crlf.promptinclude.md"),
        line.repeat((size / line.len() as u64) as usize),
    )
    .unwrap();
    let (out, result) = scan(dir.path(), &[], Duration::from_secs(600));
    let content = result["files"][0]["content"].as_str().unwrap();
    assert!(!content.contains('\r') && content.ends_with("..."));
    let bound = one_file_bound_kib(size);
    assert!(
        out.max_rss_kib <= bound,
        "peak {} KiB > {bound} KiB",
        out.max_rss_kib
    );
}

/// A single 10 MB line of each kind the tokenizer finds hardest: one letter
/// run (one pre-token piece), one whitespace run (which makes the reference's
/// regex overflow its stack near a million characters), digits, and words.
#[test]
fn a_single_10_mb_line_completes_in_bounded_time_and_memory() {
    let size = 10 * MIB as usize;
    let dir = tempfile::tempdir().unwrap();
    let kinds: [(&str, Vec<u8>); 4] = [
        ("letters", b"a".repeat(size)),
        ("spaces", [b" ".repeat(size), b"x".to_vec()].concat()),
        ("digits", b"7".repeat(size)),
        ("words", b"lorem ipsum dolor sit amet ".repeat(size / 27)),
    ];
    for (name, text) in kinds {
        let root = dir.path().join(name);
        fs::create_dir(&root).unwrap();
        fs::write(root.join("line.promptinclude.md"), &text).unwrap();
        let (out, result) = scan(&root, &[], Duration::from_secs(300));
        let entry = &result["files"][0];
        assert_eq!(entry["status"], "cropped", "{name}");
        assert!(entry["token_count"].as_i64().unwrap() > 0, "{name}");
        let bound = one_file_bound_kib(size as u64);
        assert!(
            out.max_rss_kib <= bound,
            "{name}: peak {} KiB > {bound} KiB",
            out.max_rss_kib
        );
    }
}

/// The files that are one pre-tokenizer piece no cut can split: a sparse
/// file (NUL bytes), a file of spaces, a line of `=`, CJK without
/// punctuation. Their tokens were once all kept at once (4 bytes each, up
/// to one a byte).
const ONE_PIECE_KINDS: [&str; 4] = ["nul", "spaces", "equals", "cjk"];

/// Writes a `kind` file (see [`ONE_PIECE_KINDS`]) of about `size` bytes,
/// valid UTF-8 throughout.
fn write_one_piece(path: &Path, kind: &str, size: u64) {
    let file = fs::File::create(path).unwrap();
    if kind == "nul" {
        // Sparse, as `truncate -s` makes it.
        file.set_len(size).unwrap();
        return;
    }
    let (head, unit) = match kind {
        "spaces" => ("x", " "),
        "equals" => ("", "="),
        _ => ("", "日本語の文字"),
    };
    let block = unit.repeat((1 << 20) / unit.len());
    let mut file = std::io::BufWriter::new(file);
    file.write_all(head.as_bytes()).unwrap();
    let mut written = head.len() as u64;
    while written + block.len() as u64 <= size {
        file.write_all(block.as_bytes()).unwrap();
        written += block.len() as u64;
    }
    file.flush().unwrap();
}

/// The bound of `docs/guarantees.md` for a file of `size` bytes whose text
/// is no longer than its bytes: 64 MiB plus the file once (KiB).
fn one_file_bound_kib(size: u64) -> i64 {
    BASELINE_KIB + (size / 1024) as i64
}

/// Runs the binary with `args`, asserting exit 0 and the peak against `bound` (KiB).
fn assert_peak(args: &[&std::ffi::OsStr], bound: i64, what: &str) -> Outcome {
    let out = run(
        Command::new(common::binary()).args(args),
        Duration::from_secs(600),
    );
    out.assert_code(0);
    eprintln!(
        "{what}: peak RSS {} MiB in {:?}",
        out.max_rss_kib / 1024,
        out.elapsed
    );
    assert!(
        out.max_rss_kib <= bound,
        "{what}: peak {} KiB > {bound} KiB",
        out.max_rss_kib
    );
    out
}

#[test]
fn one_piece_files_stay_within_the_bound_in_every_command() {
    let size = if heavy() { 500 * MIB } else { 64 * MIB };
    let dir = tempfile::tempdir().unwrap();
    for kind in ONE_PIECE_KINDS {
        let root = dir.path().join(kind);
        fs::create_dir(&root).unwrap();
        write_one_piece(&root.join("big.promptinclude.md"), kind, size);
        fs::write(root.join("small.promptinclude.md"), "keep me\n").unwrap();
        let bound = one_file_bound_kib(size);
        let out_dir = dir.path().join("bundle");
        let commands: [&[&str]; 4] = [
            &["scan", "--no-env"],
            &["render", "--no-env"],
            &["audit", "--no-env"],
            &["bundle", "--no-env", "--out"],
        ];
        for command in commands {
            let mut args: Vec<&std::ffi::OsStr> = command.iter().map(|a| a.as_ref()).collect();
            if command[0] == "bundle" {
                args.push(out_dir.as_os_str());
            }
            args.push(root.as_os_str());
            let out = assert_peak(&args, bound, &format!("{kind} {}", command[0]));
            if command[0] == "scan" {
                let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
                assert_eq!(result["files"][0]["status"], "cropped", "{kind}");
                assert!(result["files"][0]["token_count"].as_i64().unwrap() > 0);
            }
        }
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&out_dir).unwrap();
    }
}

#[test]
fn one_piece_blobs_through_rev_stay_within_the_bound() {
    // Two big blobs in one commit: the budget pass reads (and crops) one
    // after the other, so neither read-ahead nor a copy of a blob may hold
    // more than one file at a time.
    use crate::common::git::{git, ok};
    let size = if heavy() { 500 * MIB } else { 64 * MIB };
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    fs::create_dir(&repo).unwrap();
    ok(git(&repo).args(["init", "-q"]));
    write_one_piece(&repo.join("a.promptinclude.md"), "nul", size);
    write_one_piece(&repo.join("b.promptinclude.md"), "equals", size);
    ok(git(&repo).args(["add", "."]));
    ok(git(&repo).args(["commit", "-qm", "big"]));
    for file in ["a.promptinclude.md", "b.promptinclude.md"] {
        fs::remove_file(repo.join(file)).unwrap();
    }
    let out_dir = dir.path().join("bundle");
    let bound = one_file_bound_kib(size);
    for command in ["scan", "render", "audit", "bundle"] {
        let mut args: Vec<&std::ffi::OsStr> = vec![command.as_ref(), "--no-env".as_ref()];
        if command == "bundle" {
            args.extend(["--out".as_ref(), out_dir.as_os_str()]);
        }
        args.extend(["--rev".as_ref(), "HEAD".as_ref(), repo.as_os_str()]);
        let out = assert_peak(&args, bound, &format!("--rev {command}"));
        if command == "scan" {
            let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
            assert_eq!(result["files"][0]["status"], "cropped");
            assert_eq!(result["files"][1]["status"], "cropped");
            assert_eq!(result["skipped_count"], 0);
        }
    }
}

#[test]
fn invalid_bytes_hold_their_text_not_also_their_bytes() {
    // 0xFF bytes, each one U+FFFD (3 bytes) in the text, with \r\n line
    // ends: the text is about 3 times the file, and the bytes must be freed
    // as they are decoded rather than held beside the whole text.
    let size = if heavy() { 200 * MIB } else { 32 * MIB };
    let dir = tempfile::tempdir().unwrap();
    let line = [[0xffu8; 62].as_slice(), b"\r\n"].concat();
    fs::write(
        dir.path().join("bad.promptinclude.md"),
        line.repeat((size / line.len() as u64) as usize),
    )
    .unwrap();
    let text_kib = (size / line.len() as u64) as i64 * (62 * 3 + 1) / 1024;
    let (out, result) = scan(dir.path(), &["--no-env"], Duration::from_secs(600));
    assert_eq!(result["files"][0]["status"], "cropped");
    let bound = BASELINE_KIB + text_kib;
    assert!(
        out.max_rss_kib <= bound,
        "peak {} KiB > {bound} KiB",
        out.max_rss_kib
    );
}

#[test]
fn a_sparse_file_completes_under_an_address_space_limit() {
    // RLIMIT_AS (`ulimit -v`) counts reserved address space, not only
    // resident pages: the file's buffer, thread stacks, allocator arenas.
    // A little above the bound the scan completes; when the tokens of the
    // one piece were all kept it needed 4 times the file and aborted.
    use std::os::unix::process::CommandExt;
    let size = if heavy() { 1536 * MIB } else { 256 * MIB };
    let dir = tempfile::tempdir().unwrap();
    write_one_piece(&dir.path().join("big.promptinclude.md"), "nul", size);
    let limit = size + 320 * MIB;
    let mut cmd = Command::new(common::binary());
    cmd.args(["scan", "--no-env"]).arg(dir.path());
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let out = run(&mut cmd, Duration::from_secs(600));
    out.assert_code(0);
    let result: Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    assert_eq!(result["files"][0]["status"], "cropped");
}

/// Creates `count` tiny rule files, 1,000 per directory.
fn many_rule_files(root: &Path, count: usize) {
    for i in 0..count {
        let dir = root.join(format!("d{:04}", i / 1000));
        if i % 1000 == 0 {
            fs::create_dir_all(&dir).unwrap();
        }
        fs::write(dir.join(format!("r{i:07}.promptinclude.md")), "x\n").unwrap();
    }
}

#[test]
fn a_million_tiny_rule_files_complete_with_bounded_memory() {
    let count = if heavy() { 1_000_000 } else { 100_000 };
    let dir = tempfile::tempdir().unwrap();
    many_rule_files(dir.path(), count);
    let (out, result) = scan(dir.path(), &["--max-depth", "3"], Duration::from_secs(900));
    assert_eq!(result["files"].as_array().unwrap().len(), 50);
    assert_eq!(result["skipped_count"].as_i64().unwrap(), count as i64 - 50);
    // The candidate list dominates: a path and its vector entry per candidate.
    let bound = BASELINE_KIB + (count as i64 * 400) / 1024;
    assert!(
        out.max_rss_kib <= bound,
        "peak {} KiB > {bound} KiB for {count} files",
        out.max_rss_kib
    );
}

/// A pseudo-terminal: (master, slave).
fn pty() -> (std::fs::File, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: out-parameters for two descriptors; no name, termios or size.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nobody else.
    unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(slave),
        )
    }
}

/// On a terminal, a runaway root shows a live progress spinner on stderr
/// (and clears it); stdout stays clean JSON.
#[test]
fn a_runaway_root_shows_progress_on_a_terminal() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    write_unique_words(&dir.path().join("big.promptinclude.md"), 60 * MIB);
    let (mut master, slave) = pty();
    let mut cmd = Command::new(common::binary());
    cmd.arg("scan").arg(dir.path());
    let running = child::Running::start_with_stderr(&mut cmd, std::process::Stdio::from(slave));
    drop(cmd); // our copy of the terminal's slave side
    let reader = std::thread::spawn(move || {
        let mut seen = Vec::new();
        // Ends with EIO once the child has closed the slave side.
        let _ = master.read_to_end(&mut seen);
        seen
    });
    let out = running.finish(Duration::from_secs(600));
    out.assert_code(0);
    let terminal = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert!(
        out.elapsed > Duration::from_millis(600),
        "too quick to show progress"
    );
    assert!(
        terminal.contains("promptinclude:") && terminal.contains("scanning"),
        "no progress on the terminal: {terminal:?}"
    );
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["files"][0]["status"], "cropped");
}
