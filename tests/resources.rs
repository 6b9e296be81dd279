//! Resource bounds: what one scan may hold in memory, on runaway inputs.
//!
//! Each case runs the binary as a child and reads its own peak resident set
//! (`wait4`'s `ru_maxrss`). The bounds are stated in `docs/guarantees.md`:
//! a scan holds the candidate list (about a hundred bytes per candidate) and,
//! while the budget pass reads a file, that file's bytes plus its decoded text
//! (the text reuses the bytes when they are valid UTF-8 without `\r`).
//!
//! Sizes are small by default so the suite stays fast; with
//! `PROMPTINCLUDE_HEAVY=1` they are the issue's: a 200 MB rule file and a
//! million rule files.

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
    let bound = BASELINE_KIB + 2 * (size / 1024) as i64;
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
    // Universal newlines need a second copy of the text: still bounded.
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
    let bound = BASELINE_KIB + 3 * (size / 1024) as i64;
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
        let bound = BASELINE_KIB + 4 * (size as i64 / 1024);
        assert!(
            out.max_rss_kib <= bound,
            "{name}: peak {} KiB > {bound} KiB",
            out.max_rss_kib
        );
    }
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
