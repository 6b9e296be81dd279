//! `promptinclude hook claude-code|codex`: the command a coding agent runs
//! on its lifecycle events, printing the section in the form the agent adds
//! to the model's context.
//!
//! The contracts, from the agents' own documentation:
//!
//! * Claude Code, <https://code.claude.com/docs/en/hooks> ("Hook input",
//!   "SessionStart", "UserPromptSubmit", "JSON output"): the event arrives as
//!   JSON on stdin with `session_id`, `transcript_path`, `cwd` and
//!   `hook_event_name`; SessionStart adds `source` (`startup`, `resume`,
//!   `clear`, `compact`), UserPromptSubmit adds `prompt`. The hook command
//!   also gets `CLAUDE_PROJECT_DIR`, the project root. On exit 0, stdout
//!   `{"hookSpecificOutput": {"hookEventName": "SessionStart" |
//!   "UserPromptSubmit", "additionalContext": TEXT}}` adds TEXT to the
//!   context; stderr with exit 0 is shown only in verbose mode, and exit
//!   codes other than 0 and 2 are non-blocking errors shown to the user.
//! * Codex, <https://developers.openai.com/codex/hooks> ("Common input
//!   fields", "SessionStart", "UserPromptSubmit"): the same stdin fields
//!   (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, `model`;
//!   SessionStart `source`: `startup`, `resume`, `clear`), and the same
//!   `hookSpecificOutput.additionalContext` output, which Codex validates
//!   strictly (the output schema `session-start.command.output` allows only
//!   `continue`, `stopReason`, `suppressOutput`, `systemMessage` and
//!   `hookSpecificOutput`).
//!
//! Both agents run the hook with the session's environment, so project
//! configuration (`.a0proj`) and `A0_SET_` apply as for `render`.
//!
//! Safe by default, because the agent runs it in any repository the user
//! opens, vetted or not, and sends what it prints to the model provider
//! (see `docs/security.md`):
//!
//! * it reads under [`promptinclude::trust::ReadPolicy::unattended`]: no rule file whose real path
//!   leaves the root (`~/.ssh/id_rsa`, `/proc/self/environ`), nothing in
//!   `.git/`, no file over 4 MiB, and no untracked file that only the
//!   repository's own `name_pattern` adds; each withheld file is named in
//!   the log with the reason (`--links`, `--max-file-bytes` and
//!   `--trust-project-patterns` on the hook command relax this);
//! * it renders the repository holding the session's directory, or that
//!   directory when there is none, and never `/` or the home directory
//!   themselves;
//! * it gives up after `--timeout` seconds (default 5), printing nothing.
//!
//! Fail open: whatever goes wrong (bad stdin, a broken configuration, an
//! unwritable state file), the hook prints nothing on stdout, exits 0, and
//! logs one line to stderr and to `promptinclude/hook.log` in the agent's
//! directory, so a broken rule file never blocks a session.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use promptinclude::batch::Batch;
use promptinclude::model::Disposition;
use promptinclude::trust::{is_too_wide, repository_top};
use promptinclude::visible;
use promptinclude::{RootScan, ScanResult};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::args::{Agent, HookArgs};
use super::commands::scan_and_render;
use super::exit::ExitStatus;
use super::settings::{init_threads, resolver};
use promptinclude::artifact::write_atomic;

/// Most bytes of hook input read (events are a few hundred bytes; a
/// UserPromptSubmit carries the prompt, which can be long).
const MAX_INPUT: u64 = 64 << 20;
/// The log is started afresh once it grows past this.
const MAX_LOG: u64 = 1 << 20;
/// How much hook output the agents add to the context as is, measured with
/// the pinned versions in tests/agents. Claude Code: 10,000 characters;
/// past that it saves the output to a file and shows the model a 2 KB
/// preview and the path (its 2.1.89 changelog says 50,000, the code says
/// 10,000: <https://github.com/anthropics/claude-code/issues/42369>).
/// Codex: 10,000 bytes (2,500 of the 4-byte tokens it estimates); past that
/// it keeps the start and the end, drops the middle, and names the file
/// holding the whole output.
const INLINE_LIMIT: usize = 10_000;

/// The fields of a hook event this command uses (both agents send more).
#[derive(Debug, Default, Deserialize)]
struct Event {
    hook_event_name: Option<String>,
    session_id: Option<String>,
    cwd: Option<PathBuf>,
}

/// What a hook prints: `{"hookSpecificOutput": {...}}`.
#[derive(Serialize)]
struct Output<'a> {
    #[serde(rename = "hookSpecificOutput")]
    hook_specific_output: SpecificOutput<'a>,
}

#[derive(Serialize)]
struct SpecificOutput<'a> {
    #[serde(rename = "hookEventName")]
    hook_event_name: &'a str,
    #[serde(rename = "additionalContext")]
    additional_context: &'a str,
}

/// What the session was last given, per rule file: path → (status, sha256
/// of the included content). Kept per session in the agent's directory.
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
struct Snapshot {
    root: String,
    files: BTreeMap<String, (String, String)>,
    skipped: i64,
}

/// `promptinclude hook AGENT`: never fails (see the module documentation).
pub fn hook(args: &HookArgs) -> Result<ExitStatus> {
    let dir = args.agent.home();
    // Should the pool not start, the scan still runs (rayon starts one
    // itself, without the signals kept off its threads).
    let _ = init_threads(None);
    match run_within_timeout(args, dir.clone()) {
        Ok(Some(text)) => {
            // A closed stdout is the agent's business; nothing to add.
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
        }
        Ok(None) => {}
        Err(err) => log_line(dir.as_deref(), &format!("{err:#}")),
    }
    Ok(ExitStatus::Success)
}

/// One line on stderr (Claude Code shows it in verbose mode) and in the log.
fn log_line(dir: Option<&Path>, message: &str) {
    let line = format!("promptinclude hook: {message}");
    eprintln!("{line}");
    let Some(dir) = dir else { return };
    let dir = dir.join("promptinclude");
    let log = dir.join("hook.log");
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let append = || -> std::io::Result<()> {
        std::fs::create_dir_all(&dir)?;
        let fresh = std::fs::metadata(&log).is_ok_and(|m| m.len() > MAX_LOG);
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(!fresh)
            .write(true)
            .truncate(fresh)
            .open(&log)?;
        writeln!(file, "{secs} {line}")
    };
    if let Err(e) = append() {
        eprintln!("promptinclude hook: cannot write {}: {e}", log.display());
    }
}

/// [`run`] on its own thread, given up after `--timeout` seconds: the
/// process then ends (with the scan) and prints nothing.
fn run_within_timeout(args: &HookArgs, dir: Option<PathBuf>) -> Result<Option<String>> {
    let limit = std::time::Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|limit| !limit.is_zero());
    let Some(limit) = limit else {
        return run(args, dir.as_deref());
    };
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        let worker_dir = dir.clone();
        let worker = std::thread::Builder::new()
            .name("hook".to_string())
            .spawn_scoped(scope, move || {
                crate::interrupt::block_in_this_thread();
                let _ = done.send(run(args, worker_dir.as_deref()));
            });
        if let Err(e) = worker {
            return Err(anyhow!("cannot start the hook's thread: {e}"));
        }
        match outcome.recv_timeout(limit) {
            Ok(outcome) => outcome,
            Err(_) => {
                // The scan may still be walking: end the process without
                // waiting for it (the scope would join it).
                log_line(
                    dir.as_deref(),
                    &format!(
                        "gave up after {} s (--timeout): nothing was added to the context",
                        args.timeout
                    ),
                );
                std::process::exit(0)
            }
        }
    })
}

/// What to print for the event on stdin, if anything.
fn run(args: &HookArgs, dir: Option<&Path>) -> Result<Option<String>> {
    let mut input = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_INPUT)
        .read_to_end(&mut input)
        .context("cannot read the hook event from stdin")?;
    let event: Event = serde_json::from_slice(&input)
        .context("stdin is not a hook event (a JSON object was expected)")?;
    let name = event.hook_event_name.as_deref().unwrap_or_default();
    let (session_start, prompt_submit) = ("SessionStart", "UserPromptSubmit");
    if name != session_start && name != prompt_submit {
        return Ok(None);
    }
    let start = session_dir(args.agent, &event)?;
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    let root = hook_root(&start, home.as_deref().map(Path::new))?;
    let resolver = resolver(&args.config)?;
    let batch = Batch::plan_with_policy(
        std::slice::from_ref(&root),
        &resolver,
        args.read.policy(true),
    )
    .map_err(|e| anyhow!("root {}: {e}", root.display()))?;
    let (scan, section) = scan_and_render(&batch, &root, None)
        .map_err(|e| anyhow!("root {}: {e}", root.display()))?;
    if !scan.is_dir {
        return Err(anyhow!("root {}: not a directory", root.display()));
    }
    log_withheld(dir, &root, &scan);
    let now = snapshot(&scan.abs_root, scan.result());
    let state = dir.and_then(|d| state_file(d, event.session_id.as_deref()));
    let before = state.as_deref().and_then(read_snapshot);
    // Every SessionStart source gets the section: startup, resume, clear,
    // and compact, after which the earlier section is gone from the context.
    let context = if name == session_start {
        section
    } else {
        match &before {
            Some(before) if *before != now => notice(before, &now, &section),
            // Unchanged, or no section recorded for this session.
            _ => String::new(),
        }
    };
    if let Some(state) = &state {
        if before.as_ref() != Some(&now) {
            // Only the change notices need the state: the section goes out anyway.
            if let Err(e) = save_snapshot(state, &now) {
                log_line(
                    dir,
                    &format!("{e:#} (change notices are off for this session)"),
                );
            }
        }
    }
    if context.is_empty() {
        return Ok(None);
    }
    let (size, unit) = match args.agent {
        Agent::ClaudeCode => (context.chars().count(), "characters"),
        Agent::Codex => (context.len(), "bytes"),
    };
    if size > INLINE_LIMIT {
        // Still given: the model gets part of it and the file with the rest.
        log_line(
            dir,
            &format!(
                "root {}: the section is {size} {unit}; the agent adds hook output over \
                 {INLINE_LIMIT} {unit} only in part (the rest in a file): lower the budget, e.g. \
                 --max-total-tokens 2000 on the hook command",
                root.display()
            ),
        );
    }
    let output = Output {
        hook_specific_output: SpecificOutput {
            hook_event_name: name,
            additional_context: &context,
        },
    };
    Ok(Some(serde_json::to_string(&output)? + "\n"))
}

/// The session's directory: Claude Code's `$CLAUDE_PROJECT_DIR` (the project
/// the session belongs to, stable while the session's `cwd` moves), else the
/// event's `cwd`.
fn session_dir(agent: Agent, event: &Event) -> Result<PathBuf> {
    let project_dir = match agent {
        Agent::ClaudeCode => std::env::var_os("CLAUDE_PROJECT_DIR").filter(|d| !d.is_empty()),
        Agent::Codex => None,
    };
    project_dir
        .map(PathBuf::from)
        .or_else(|| event.cwd.clone().filter(|c| c.is_absolute()))
        .ok_or_else(|| anyhow!("the hook event has no absolute `cwd`"))
}

/// The root the hook renders for a session in `start`: the work tree of the
/// repository holding it (the nearest directory at or above it with a
/// `.git`), or `start` itself when there is none or that repository is the
/// home directory or `/` (a dotfiles repository). Never `/` or `home`
/// themselves: a session started there would walk every project on the
/// disk and put their rules into one context.
fn hook_root(start: &Path, home: Option<&Path>) -> Result<PathBuf> {
    let too_wide = |dir: &Path| is_too_wide(dir, home);
    let root = match repository_top(start) {
        Some(top) if !too_wide(&top) => top,
        _ => start.to_path_buf(),
    };
    if too_wide(&root) {
        return Err(anyhow!(
            "the session is in {}: the hook never scans / or the home directory; \
             start the agent in a project",
            root.display()
        ));
    }
    Ok(root)
}

/// Most withheld files named in the log, per reason.
const WITHHELD_NAMED: usize = 3;

/// One line in the log per reason the reading policy withheld rule files
/// for: how many, and the first few of them.
fn log_withheld(dir: Option<&Path>, root: &Path, scan: &RootScan) {
    let mut by_kind: BTreeMap<&str, (usize, Vec<String>, String)> = BTreeMap::new();
    let withheld = scan
        .candidates
        .iter()
        .zip(&scan.allocation.dispositions)
        .filter_map(|(candidate, disposition)| match disposition {
            Disposition::Withheld(why) => Some((candidate, why)),
            _ => None,
        });
    for (candidate, why) in withheld {
        let (count, named, first_reason) = by_kind.entry(why.kind()).or_default();
        *count += 1;
        if named.len() < WITHHELD_NAMED {
            named.push(visible(&candidate.display()).into_owned());
        }
        if first_reason.is_empty() {
            *first_reason = why.to_string();
        }
    }
    for (kind, (count, named, reason)) in by_kind {
        let more = count - named.len();
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        log_line(
            dir,
            &format!(
                "root {}: withheld {count} rule file(s) ({kind}; e.g. {}: {}): {}{more}",
                root.display(),
                named[0],
                visible(&reason),
                named.join(", "),
            ),
        );
    }
}

/// What the session is given, file by file.
fn snapshot(abs_root: &Path, result: &ScanResult) -> Snapshot {
    let files = result
        .files
        .iter()
        .map(|f| {
            let digest = format!("{:x}", Sha256::digest(f.content.as_bytes()));
            (f.path.clone(), (f.status.as_str().to_string(), digest))
        })
        .collect();
    Snapshot {
        root: abs_root.to_string_lossy().into_owned(),
        files,
        skipped: result.skipped_count,
    }
}

/// `DIR/promptinclude/sessions/<session id>.json`, for a session id made of
/// letters, digits, `-` and `_` (both agents use UUIDs); none otherwise.
fn state_file(dir: &Path, session: Option<&str>) -> Option<PathBuf> {
    let session = session?;
    let fits = !session.is_empty()
        && session.len() <= 128
        && session
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    fits.then(|| {
        dir.join("promptinclude")
            .join("sessions")
            .join(format!("{session}.json"))
    })
}

fn read_snapshot(path: &Path) -> Option<Snapshot> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn save_snapshot(path: &Path, snapshot: &Snapshot) -> Result<()> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    Ok(write_atomic(path, &serde_json::to_vec(snapshot)?)?)
}

/// The change notice: what changed, then the whole new section.
fn notice(before: &Snapshot, now: &Snapshot, section: &str) -> String {
    let mut lines = vec![
        "[promptinclude] The project's prompt-include rule files (*.promptinclude.md) changed \
         since the section was last given in this session:"
            .to_string(),
    ];
    for (path, was) in &before.files {
        match now.files.get(path) {
            None => lines.push(format!("- removed {path}")),
            Some(is) if is != was => lines.push(format!("- changed {path}")),
            Some(_) => {}
        }
    }
    for path in now.files.keys().filter(|p| !before.files.contains_key(*p)) {
        lines.push(format!("- added {path}"));
    }
    if before.root != now.root {
        lines.push(format!("- project root is now {}", now.root));
    }
    if before.skipped != now.skipped {
        lines.push(format!(
            "- files skipped to fit: {} (was {})",
            now.skipped, before.skipped
        ));
    }
    lines.push("The current section follows; it replaces the earlier one.".to_string());
    format!("{}\n\n{section}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(files: &[(&str, &str, &str)]) -> Snapshot {
        Snapshot {
            root: "/p".to_string(),
            files: files
                .iter()
                .map(|(p, s, d)| (p.to_string(), (s.to_string(), d.to_string())))
                .collect(),
            skipped: 0,
        }
    }

    #[test]
    fn notice_lists_every_kind_of_change_then_the_section() {
        let before = snap(&[("/p/a.md", "ok", "1"), ("/p/b.md", "ok", "2")]);
        let now = snap(&[("/p/a.md", "cropped", "1"), ("/p/c.md", "ok", "3")]);
        let text = notice(&before, &now, "SECTION\n");
        assert!(text.contains("- changed /p/a.md\n- removed /p/b.md\n- added /p/c.md\n"));
        assert!(text.ends_with("replaces the earlier one.\n\nSECTION\n"));
    }

    #[test]
    fn state_file_only_for_plain_session_ids() {
        let dir = Path::new("/s");
        assert_eq!(
            state_file(dir, Some("abc-1_2")),
            Some(PathBuf::from("/s/promptinclude/sessions/abc-1_2.json"))
        );
        for bad in ["", "../x", "a/b", "a.b", &"x".repeat(129)] {
            assert_eq!(state_file(dir, Some(bad)), None, "{bad:?}");
        }
        assert_eq!(state_file(dir, None), None);
    }
}
