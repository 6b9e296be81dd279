//! `promptinclude init claude-code|codex`: add the hook entries to the
//! agent's settings file, keeping everything else in it as it was.
//!
//! Where the agents read hooks from, and their shape:
//!
//! * Claude Code, <https://code.claude.com/docs/en/settings> and
//!   <https://code.claude.com/docs/en/hooks> ("Configuration"):
//!   `~/.claude/settings.json` (user; `$CLAUDE_CONFIG_DIR` moves `~/.claude`)
//!   and `.claude/settings.json` (project), with
//!   `{"hooks": {EVENT: [{"matcher": M, "hooks": [{"type": "command",
//!   "command": CMD, "timeout": SECONDS}]}]}}`; SessionStart's matcher
//!   filters on `source`, UserPromptSubmit takes none.
//! * Codex, <https://developers.openai.com/codex/hooks> ("Where Codex looks
//!   for hooks", "Config shape"): `~/.codex/hooks.json` (`$CODEX_HOME`) and
//!   `<repo>/.codex/hooks.json`, with the same event → matcher group →
//!   handlers shape; SessionStart's matcher filters on `source` (`startup`,
//!   `resume`, `clear`).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use promptinclude::diff::unified_diff;

use super::args::{Agent, InitArgs};
use super::atomic::write_through;
use super::exit::ExitStatus;
use super::json_doc::Json;

/// Seconds an agent waits for the hook (a scan takes milliseconds).
const TIMEOUT_SECS: u64 = 30;

/// `promptinclude init AGENT`.
pub fn init(args: &InitArgs) -> Result<ExitStatus> {
    let file = settings_file(args.agent, args.user)?;
    let command = match &args.bin {
        Some(bin) => format!("{bin} hook {}", args.agent.name()),
        None => {
            let exe = std::env::current_exe()
                .context("cannot find this binary's path; give --bin CMD")?;
            format!("{} hook {}", shell_quote(&exe), args.agent.name())
        }
    };
    let old = match std::fs::read(&file) {
        Ok(bytes) => Some(
            String::from_utf8(bytes).map_err(|_| anyhow!("{}: not valid UTF-8", file.display()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let mut doc = match old.as_deref() {
        None => Json::Object(Vec::new()),
        Some(text) if text.trim().is_empty() => Json::Object(Vec::new()),
        Some(text) => serde_json::from_str(text)
            .with_context(|| format!("{}: not valid JSON; fix it first", file.display()))?,
    };
    let changed =
        merge(&mut doc, args.agent, &command).map_err(|e| anyhow!("{}: {e}", file.display()))?;
    if !changed {
        println!(
            "{}: the promptinclude hook is already installed; nothing to change",
            file.display()
        );
        return Ok(ExitStatus::Success);
    }
    let new = serde_json::to_string_pretty(&doc)? + "\n";
    if args.dry_run {
        let label = file.display().to_string();
        let old = old.as_deref().unwrap_or("");
        print!("{}", unified_diff(old, &new, 3, (&label, &label)));
        return Ok(ExitStatus::Success);
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // A settings file kept as a symlink (into a dotfiles repository) stays
    // one: the file it points to is replaced, with its mode.
    let written = write_through(&file, new.as_bytes())?;
    let shown = if written == file {
        file.display().to_string()
    } else {
        format!("{} (a link to {})", file.display(), written.display())
    };
    println!(
        "{shown}: installed `{command}` for {}",
        events(args.agent)
            .iter()
            .map(|(event, _)| *event)
            .collect::<Vec<_>>()
            .join(" and ")
    );
    if args.agent == Agent::Codex {
        // https://developers.openai.com/codex/cli/slash-commands (`/hooks`):
        // Codex runs a new or changed hook only once the user has trusted it.
        println!(
            "Codex runs a new hook only once you trust it: start `codex`, type /hooks and \
             trust the promptinclude entries (`codex exec` skips untrusted hooks).{}",
            if args.user {
                ""
            } else {
                " Codex reads .codex/hooks.json only in a project it trusts."
            }
        );
    }
    Ok(ExitStatus::Success)
}

/// The events and SessionStart matchers (every source the agent documents).
fn events(agent: Agent) -> [(&'static str, Option<&'static str>); 2] {
    let sources = match agent {
        Agent::ClaudeCode => "startup|resume|clear|compact",
        Agent::Codex => "startup|resume|clear",
    };
    [("SessionStart", Some(sources)), ("UserPromptSubmit", None)]
}

/// The settings file `init` edits: in the agent's own directory (`--user`)
/// or in the project's.
fn settings_file(agent: Agent, user: bool) -> Result<PathBuf> {
    let dir = if user {
        agent
            .home()
            .ok_or_else(|| anyhow!("HOME is not set; cannot find the user settings"))?
    } else {
        std::env::current_dir()
            .context("cannot read the current directory")?
            .join(agent.dot_dir())
    };
    Ok(dir.join(match agent {
        Agent::ClaudeCode => "settings.json",
        Agent::Codex => "hooks.json",
    }))
}

/// `path` for a POSIX shell: as is when it needs no quoting, else in single quotes.
fn shell_quote(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b));
    if plain {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// When `command` runs `promptinclude hook AGENT` (any path to the binary,
/// quoted for the shell in any way), what follows `AGENT`: the flags the
/// user added, kept when `init` updates the entry.
fn our_hook_flags(command: &str, agent: Agent) -> Option<&str> {
    let (program, rest) = first_shell_word(command)?;
    let base = program.rsplit('/').next().unwrap_or_default();
    let rest = rest.trim_start().strip_prefix("hook")?;
    let rest = rest.trim_start().strip_prefix(agent.name())?;
    let ours = base.starts_with("promptinclude")
        && (rest.is_empty() || rest.starts_with(char::is_whitespace));
    ours.then_some(rest)
}

/// The first word of a POSIX shell command with its quoting undone (single
/// quotes, double quotes, backslashes, and words made of several quoted
/// parts, as [`shell_quote`] writes them), and the text after it; `None`
/// when a quote is not closed.
fn first_shell_word(command: &str) -> Option<(String, &str)> {
    let command = command.trim_start();
    let mut word = String::new();
    let mut chars = command.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => return Some((word, &command[i..])),
            '\'' => loop {
                match chars.next()?.1 {
                    '\'' => break,
                    c => word.push(c),
                }
            },
            '"' => loop {
                match chars.next()?.1 {
                    '"' => break,
                    '\\' => match chars.next()?.1 {
                        c @ ('"' | '\\' | '$' | '`') => word.push(c),
                        c => word.extend(['\\', c]),
                    },
                    c => word.push(c),
                }
            },
            '\\' => word.push(chars.next()?.1),
            c => word.push(c),
        }
    }
    Some((word, ""))
}

/// Adds (or updates) the hook entries in `doc`; returns whether it changed.
fn merge(doc: &mut Json, agent: Agent, command: &str) -> Result<bool> {
    let root = doc
        .as_object_mut()
        .ok_or_else(|| anyhow!("the top level is not a JSON object"))?;
    let hooks = entry(root, "hooks", || Json::Object(Vec::new()))
        .as_object_mut()
        .ok_or_else(|| anyhow!("`hooks` is not a JSON object"))?;
    let mut changed = false;
    for (event, matcher) in events(agent) {
        let groups = entry(hooks, event, || Json::Array(Vec::new()))
            .as_array_mut()
            .ok_or_else(|| anyhow!("`hooks.{event}` is not a JSON array"))?;
        changed |= merge_event(groups, agent, matcher, command);
    }
    Ok(changed)
}

/// One event's matcher groups: keep the first promptinclude handler (its
/// command brought up to date), drop any other, or add a group.
fn merge_event(groups: &mut Vec<Json>, agent: Agent, matcher: Option<&str>, cmd: &str) -> bool {
    let mut changed = false;
    let mut found = false;
    for group in groups.iter_mut() {
        let Some(handlers) = group.get_mut("hooks").and_then(Json::as_array_mut) else {
            continue;
        };
        let before = handlers.len();
        let mut keep = Vec::with_capacity(before);
        for mut handler in std::mem::take(handlers) {
            let flags = handler
                .get("command")
                .and_then(Json::as_str)
                .and_then(|c| our_hook_flags(c, agent))
                .map(str::to_string);
            match flags {
                None => keep.push(handler),
                Some(flags) if !found => {
                    found = true;
                    let updated = format!("{cmd}{flags}");
                    if handler.get("command").and_then(Json::as_str) != Some(&updated) {
                        handler.set("command", Json::String(updated));
                        changed = true;
                    }
                    keep.push(handler);
                }
                Some(_) => {} // a duplicate: dropped
            }
        }
        changed |= keep.len() != before;
        *handlers = keep;
    }
    // Groups left empty by dropping duplicates go too.
    let before = groups.len();
    groups.retain(|g| {
        g.get("hooks")
            .and_then(Json::as_array)
            .is_none_or(|h| !h.is_empty())
    });
    changed |= groups.len() != before;
    if !found {
        let mut group = Vec::new();
        if let Some(matcher) = matcher {
            group.push(("matcher".to_string(), Json::String(matcher.to_string())));
        }
        let handler = Json::Object(vec![
            ("type".to_string(), Json::String("command".to_string())),
            ("command".to_string(), Json::String(cmd.to_string())),
            ("timeout".to_string(), Json::Number(TIMEOUT_SECS.into())),
        ]);
        group.push(("hooks".to_string(), Json::Array(vec![handler])));
        groups.push(Json::Object(group));
        changed = true;
    }
    changed
}

/// The value at `key` in `object`, inserted with `default()` at the end when absent.
fn entry<'a>(
    object: &'a mut Vec<(String, Json)>,
    key: &str,
    default: impl FnOnce() -> Json,
) -> &'a mut Json {
    let index = match object.iter().position(|(k, _)| k == key) {
        Some(index) => index,
        None => {
            object.push((key.to_string(), default()));
            object.len() - 1
        }
    };
    &mut object[index].1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(text: &str, agent: Agent, cmd: &str) -> (String, bool) {
        let mut doc: Json = serde_json::from_str(text).unwrap();
        let changed = merge(&mut doc, agent, cmd).unwrap();
        (serde_json::to_string(&doc).unwrap(), changed)
    }

    #[test]
    fn keeps_other_settings_in_order_and_adds_both_events() {
        let text = r#"{"z": 1, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}, "a": [true, null, 1.5]}"#;
        let (out, changed) = merged(
            text,
            Agent::ClaudeCode,
            "/bin/promptinclude hook claude-code",
        );
        assert!(changed);
        assert_eq!(
            out,
            r#"{"z":1,"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}],"SessionStart":[{"matcher":"startup|resume|clear|compact","hooks":[{"type":"command","command":"/bin/promptinclude hook claude-code","timeout":30}]}],"UserPromptSubmit":[{"hooks":[{"type":"command","command":"/bin/promptinclude hook claude-code","timeout":30}]}]},"a":[true,null,1.5]}"#
        );
        // A second run changes nothing.
        let (again, changed) = merged(
            &out,
            Agent::ClaudeCode,
            "/bin/promptinclude hook claude-code",
        );
        assert!(!changed);
        assert_eq!(again, out);
    }

    #[test]
    fn updates_a_moved_binary_and_drops_duplicates() {
        let text = r#"{"hooks": {"SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "/old/promptinclude hook codex"}, {"type": "command", "command": "other"}]},
            {"hooks": [{"type": "command", "command": "'/x y/promptinclude' hook codex"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "promptinclude hook claude-code"}]}]}}"#;
        let (out, changed) = merged(text, Agent::Codex, "/new/promptinclude hook codex");
        assert!(changed);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        let start = &doc["hooks"]["SessionStart"];
        assert_eq!(start.as_array().unwrap().len(), 1, "{out}");
        assert_eq!(start[0]["matcher"], "startup", "the user's matcher is kept");
        assert_eq!(
            start[0]["hooks"][0]["command"],
            "/new/promptinclude hook codex"
        );
        assert_eq!(start[0]["hooks"][1]["command"], "other");
        // The Claude Code entry is not Codex's: Codex's is added beside it.
        let submit = doc["hooks"]["UserPromptSubmit"].as_array().unwrap();
        assert_eq!(submit.len(), 2);
        assert_eq!(
            submit[1]["hooks"][0]["command"],
            "/new/promptinclude hook codex"
        );
    }

    #[test]
    fn refuses_settings_of_the_wrong_shape() {
        for text in [
            r#"[]"#,
            r#"{"hooks": 3}"#,
            r#"{"hooks": {"SessionStart": {}}}"#,
        ] {
            let mut doc: Json = serde_json::from_str(text).unwrap();
            assert!(merge(&mut doc, Agent::ClaudeCode, "c").is_err(), "{text}");
        }
    }

    #[test]
    fn recognises_our_commands_only_and_keeps_their_flags() {
        let flags = |c| our_hook_flags(c, Agent::Codex);
        assert_eq!(flags("promptinclude hook codex"), Some(""));
        assert_eq!(
            flags("'/a b/promptinclude' hook codex --no-env"),
            Some(" --no-env")
        );
        assert_eq!(flags("\"/x/promptinclude\" hook codex"), Some(""));
        assert_eq!(
            our_hook_flags("promptinclude hook codex", Agent::ClaudeCode),
            None
        );
        for other in [
            "echo promptinclude hook codex",
            "promptinclude hook codexx",
            "",
            "'/a",
        ] {
            assert_eq!(flags(other), None, "{other}");
        }
    }

    #[test]
    fn an_update_keeps_the_flags_the_user_added() {
        let text = r#"{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "/old/promptinclude hook claude-code --max-total-tokens 2000"}]}]}}"#;
        let (out, changed) = merged(
            text,
            Agent::ClaudeCode,
            "/new/promptinclude hook claude-code",
        );
        assert!(changed);
        let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            doc["hooks"]["SessionStart"][0]["hooks"][0]["command"],
            "/new/promptinclude hook claude-code --max-total-tokens 2000"
        );
    }

    #[test]
    fn quotes_paths_for_the_shell() {
        assert_eq!(
            shell_quote(Path::new("/usr/bin/promptinclude")),
            "/usr/bin/promptinclude"
        );
        assert_eq!(shell_quote(Path::new("/a b/it's")), r"'/a b/it'\''s'");
    }

    #[test]
    fn a_quoted_path_is_recognised_so_a_second_init_changes_nothing() {
        for path in [
            "/a b/it's/promptinclude",
            "/x/\"q\"/$HOME/promptinclude",
            "/plain/promptinclude",
        ] {
            let cmd = format!("{} hook codex", shell_quote(Path::new(path)));
            assert_eq!(first_shell_word(&cmd).map(|w| w.0), Some(path.to_string()));
            assert_eq!(our_hook_flags(&cmd, Agent::Codex), Some(""), "{cmd}");
            let (once, changed) = merged("{}", Agent::Codex, &cmd);
            assert!(changed);
            let (twice, changed) = merged(&once, Agent::Codex, &cmd);
            assert!(!changed, "{cmd}");
            assert_eq!(once, twice);
        }
        assert_eq!(
            first_shell_word(r#"a\ b"c\"d"'e' rest"#),
            Some((r#"a bc"de"#.to_string(), " rest"))
        );
    }
}
