//! `promptinclude init claude-code|codex`: add the hook entries to the
//! agent's settings file, keeping everything else in it as it was.
//!
//! "As it was" means byte for byte: the merge is an edit of the text
//! (`json_doc`), not a re-serialisation, so indentation, CRLF, number
//! spellings and escapes outside the hook entries survive, new entries
//! follow the file's own layout, and a file that needs no change is not
//! written at all. What is JSON is still `serde_json`'s call (Claude Code's
//! settings are plain JSON: comments or trailing commas are refused). The
//! file is replaced atomically with its mode kept, through a symlink when it
//! is one (`promptinclude::artifact::write_through`).
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
use super::exit::ExitStatus;
use super::json_doc::{self, Document, Edits, Node, Value};
use promptinclude::artifact::write_through;

/// Seconds an agent waits for the hook (a scan takes milliseconds).
const TIMEOUT_SECS: u64 = 30;

/// The program's path as [`set_program`] gave it.
static PROGRAM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// Names the program that runs the command when it is not this process's
/// executable (the Python package's script, which the interpreter runs): the
/// path written into an agent's hook command. Only the first call counts;
/// without one, [`std::env::current_exe`] is used.
pub fn set_program(path: PathBuf) {
    let _ = PROGRAM.set(path);
}

/// `promptinclude init AGENT`.
pub fn init(args: &InitArgs) -> Result<ExitStatus> {
    let file = settings_file(args.agent, args.user)?;
    if !args.user {
        stays_in_project(&file)?;
    }
    let command = match &args.bin {
        Some(bin) => format!("{bin} hook {}", args.agent.name()),
        None => {
            let exe = match PROGRAM.get() {
                Some(path) => path.clone(),
                None => std::env::current_exe()
                    .context("cannot find this binary's path; give --bin CMD")?,
            };
            format!("{} hook {}", shell_quote(&exe)?, args.agent.name())
        }
    };
    // Never `std::fs::read`: a fifo committed as `.claude/settings.json`
    // would block it forever.
    let old = match promptinclude::read_regular_file(&file) {
        Ok(bytes) => Some(
            String::from_utf8(bytes).map_err(|_| anyhow!("{}: not valid UTF-8", file.display()))?,
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    let Some(new) = edited(old.as_deref(), args.agent, &command)
        .map_err(|e| anyhow!("{}: {e:#}", file.display()))?
    else {
        println!(
            "{}: the promptinclude hook is already installed; nothing to change",
            file.display()
        );
        return Ok(ExitStatus::Success);
    };
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

/// Refuses a project settings file that a link takes out of the project
/// (a committed `.claude -> ~/.claude`, or `settings.json -> ~/.bashrc`):
/// `init --project` edits the repository's file, never one of the user's
/// through a link the repository planted.
fn stays_in_project(file: &Path) -> Result<()> {
    let project = std::env::current_dir()
        .and_then(std::fs::canonicalize)
        .context("cannot read the current directory")?;
    let is_link = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_symlink());
    let resolved = match std::fs::canonicalize(file) {
        Ok(real) => real,
        Err(_) if is_link(file) => {
            return Err(anyhow!(
                "{} is a dangling link; init --project writes only inside this project",
                file.display()
            ))
        }
        // Not there yet: where its directory (if that exists) really is.
        Err(_) => match file.parent().map(std::fs::canonicalize) {
            Some(Ok(dir)) => dir.join(file.file_name().unwrap_or_default()),
            _ => return Ok(()),
        },
    };
    if resolved.starts_with(&project) {
        Ok(())
    } else {
        Err(anyhow!(
            "{} leads to {}, outside this project (a link in the repository?); \
             init --project writes only inside the project: remove the link, or use --user",
            file.display(),
            resolved.display()
        ))
    }
}

/// `path` for a POSIX shell, in `shlex`'s quoting: as is when it needs no
/// quoting, else in single quotes (double quotes around a part that holds a
/// `'` or a backslash).
/// (Before `shlex`, a `'` was written as `'\''` and `%`, `,` and `=` went
/// unquoted; entries in that form are still recognised and are rewritten in
/// this one by the next `init`.)
fn shell_quote(path: &Path) -> Result<String> {
    shlex::try_quote(&path.to_string_lossy())
        .map(std::borrow::Cow::into_owned)
        .map_err(|e| anyhow!("{}: {e}", path.display()))
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

/// The first word of a POSIX shell command with its quoting undone
/// (`shlex`'s reading: quotes, backslashes, a `#` comment), and the text
/// after it verbatim (the user's flags, kept on an update); `None` when
/// there is no word or a quote is not closed.
///
/// `shlex` gives the words but not where one ends in the text, so the end
/// is the first blank before which the text is one complete word: a blank
/// inside quotes or after a backslash leaves an open quote or a trailing
/// backslash before it, which `shlex` refuses.
fn first_shell_word(command: &str) -> Option<(String, &str)> {
    let blanks = command.match_indices([' ', '\t', '\n']).map(|(i, _)| i);
    for end in blanks.chain([command.len()]) {
        let word = shlex::split(&command[..end]).and_then(|words| words.into_iter().next());
        if let Some(word) = word {
            return Some((word, &command[end..]));
        }
    }
    None
}

/// The settings text with the hook entries added or brought up to date,
/// everything else byte for byte as it was; `None` when nothing changes.
/// A missing or blank file is a new one (an empty object).
fn edited(old: Option<&str>, agent: Agent, command: &str) -> Result<Option<String>> {
    let text = match old {
        Some(text) if !text.trim().is_empty() => text,
        // serde_json's `to_string_pretty` layout, as `init` always wrote.
        _ => "{}\n",
    };
    // serde_json decides what is JSON (and says where it is not).
    serde_json::from_str::<serde_json::Value>(text).context("not valid JSON; fix it first")?;
    let doc = json_doc::parse(text).context("not valid JSON; fix it first")?;
    let edits = merge(&doc, agent, command)?;
    if edits.is_empty() {
        return Ok(None);
    }
    Ok(Some(edits.apply()?))
}

/// The edits that add (or update) the hook entries in `doc`: none when they
/// are in place.
fn merge<'d>(doc: &'d Document, agent: Agent, command: &str) -> Result<Edits<'d>> {
    let root = doc.root();
    if root.members().is_none() {
        return Err(anyhow!("the top level is not a JSON object"));
    }
    let mut edits = doc.edits();
    let Some(hooks) = root.get("hooks") else {
        let all = events(agent)
            .iter()
            .map(|&(event, matcher)| {
                (
                    event.to_string(),
                    Value::Array(vec![new_group(matcher, command)]),
                )
            })
            .collect();
        edits.append_members(root, &[("hooks".to_string(), Value::Object(all))]);
        return Ok(edits);
    };
    if hooks.members().is_none() {
        return Err(anyhow!("`hooks` is not a JSON object"));
    }
    let mut missing = Vec::new();
    for (event, matcher) in events(agent) {
        match hooks.get(event) {
            None => missing.push((
                event.to_string(),
                Value::Array(vec![new_group(matcher, command)]),
            )),
            Some(groups) if groups.items().is_some() => {
                merge_event(&mut edits, groups, agent, matcher, command)
            }
            Some(_) => return Err(anyhow!("`hooks.{event}` is not a JSON array")),
        }
    }
    edits.append_members(hooks, &missing);
    Ok(edits)
}

/// One event's matcher groups: keep the first promptinclude handler (its
/// command brought up to date), drop any other, drop groups left with no
/// handler, or add a group.
fn merge_event(edits: &mut Edits, array: &Node, agent: Agent, matcher: Option<&str>, cmd: &str) {
    let groups = array.items().unwrap_or_default();
    let mut found = false;
    let mut keep_groups = Vec::with_capacity(groups.len());
    for group in groups {
        let Some((list, handlers)) = group
            .get("hooks")
            .and_then(|list| Some((list, list.items()?)))
        else {
            keep_groups.push(true);
            continue;
        };
        let mut keep = Vec::with_capacity(handlers.len());
        let mut update = None;
        for handler in handlers {
            let ours = handler
                .get("command")
                .and_then(|c| Some((c, our_hook_flags(c.as_str()?, agent)?)));
            match ours {
                None => keep.push(true),
                Some((command, flags)) if !found => {
                    found = true;
                    let updated = format!("{cmd}{flags}");
                    if command.as_str() != Some(&updated) {
                        update = Some((command, updated));
                    }
                    keep.push(true);
                }
                Some(_) => keep.push(false), // a duplicate: dropped
            }
        }
        // A group left with no handler goes (one that had none too, as before).
        let kept = keep.contains(&true);
        keep_groups.push(kept);
        if kept {
            if keep.contains(&false) {
                edits.rewrite_items(list, &keep, &[]);
            }
            if let Some((command, updated)) = update {
                edits.replace(command, &Value::String(updated));
            }
        }
    }
    let append = if found {
        Vec::new()
    } else {
        vec![new_group(matcher, cmd)]
    };
    if keep_groups.contains(&false) || !append.is_empty() {
        edits.rewrite_items(array, &keep_groups, &append);
    }
}

/// A matcher group that runs `cmd`.
fn new_group(matcher: Option<&str>, cmd: &str) -> Value {
    let mut group = Vec::new();
    if let Some(matcher) = matcher {
        group.push(("matcher".to_string(), Value::String(matcher.to_string())));
    }
    let handler = Value::Object(vec![
        ("type".to_string(), Value::String("command".to_string())),
        ("command".to_string(), Value::String(cmd.to_string())),
        ("timeout".to_string(), Value::Number(TIMEOUT_SECS)),
    ]);
    group.push(("hooks".to_string(), Value::Array(vec![handler])));
    Value::Object(group)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_doc::ordered::Json;

    /// `text` after `init`, compact (as the value the agent reads), and
    /// whether it changed.
    fn merged(text: &str, agent: Agent, cmd: &str) -> (String, bool) {
        let out = edited(Some(text), agent, cmd).unwrap();
        let changed = out.is_some();
        let doc: Json = serde_json::from_str(out.as_deref().unwrap_or(text)).unwrap();
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
            assert!(
                edited(Some(text), Agent::ClaudeCode, "c").is_err(),
                "{text}"
            );
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
        let quoted = |p: &str| shell_quote(Path::new(p)).unwrap();
        assert_eq!(quoted("/usr/bin/promptinclude"), "/usr/bin/promptinclude");
        assert_eq!(quoted("/a b/promptinclude"), "'/a b/promptinclude'");
        // Deliberate changes from the hand-written quoting (`'\''`; `%,=` bare).
        assert_eq!(quoted("/a b/it's"), r#""/a b/it's""#);
        assert_eq!(quoted("/x/a=b,c%/pi"), "'/x/a=b,c%/pi'");
        assert_eq!(quoted(r"/x/a\b/it's $y"), r#""/x/a\\b/it's "'$y'"#);
    }

    #[test]
    fn a_quoted_path_is_recognised_so_a_second_init_changes_nothing() {
        for path in [
            "/a b/it's/promptinclude",
            "/x/\"q\"/$HOME/promptinclude",
            "/plain/promptinclude",
            r"/back\slash/it's $x/promptinclude",
            "/ü/^a!/=%,/promptinclude",
        ] {
            let cmd = format!("{} hook codex", shell_quote(Path::new(path)).unwrap());
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
        assert_eq!(
            first_shell_word("  'a b'\tc d"),
            Some(("a b".to_string(), "\tc d"))
        );
        // A comment runs no command; a backslash-newline joins lines.
        assert_eq!(first_shell_word("#/x/promptinclude hook codex"), None);
        assert_eq!(
            first_shell_word("/x/prompt\\\ninclude hook"),
            Some(("/x/promptinclude".to_string(), " hook"))
        );
    }

    #[test]
    fn entries_an_older_init_quoted_are_updated_in_place() {
        // The hand-written quoting before `shlex`: `'\''` for a quote, `=` bare.
        for (old, path) in [
            (r"'/a b/it'\''s/promptinclude'", "/a b/it's/promptinclude"),
            ("/x/a=b/promptinclude", "/x/a=b/promptinclude"),
        ] {
            let text = format!(
                r#"{{"hooks": {{"SessionStart": [{{"hooks": [{{"type": "command", "command": {:?}}}]}}]}}}}"#,
                format!("{old} hook codex --no-env")
            );
            let cmd = format!("{} hook codex", shell_quote(Path::new(path)).unwrap());
            assert_ne!(cmd, format!("{old} hook codex"));
            let (out, changed) = merged(&text, Agent::Codex, &cmd);
            assert!(changed);
            let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
            let start = doc["hooks"]["SessionStart"].as_array().unwrap();
            assert_eq!(start.len(), 1, "no duplicate: {out}");
            assert_eq!(start[0]["hooks"].as_array().unwrap().len(), 1, "{out}");
            assert_eq!(
                start[0]["hooks"][0]["command"],
                format!("{cmd} --no-env").as_str()
            );
        }
    }

    #[test]
    fn keeps_the_files_formatting_and_adds_in_its_style() {
        let cmd = "/bin/promptinclude hook codex";
        let text = "{\r\n    \"n\": 12345678901234567890123,\r\n    \"f\": [1.0, 1e3, -0],\r\n    \"s\": \"\\u00e9\\/\",\r\n    \"hooks\": {\r\n        \"Stop\": []\r\n    }\r\n}";
        let out = edited(Some(text), Agent::Codex, cmd).unwrap().unwrap();
        let start = "    \"hooks\": {\r\n        \"Stop\": [],\r\n        \"SessionStart\": [\r\n            {\r\n                \"matcher\": \"startup|resume|clear\",\r\n";
        assert!(
            out.starts_with(&text[..text.find("    \"hooks\"").unwrap()]),
            "{out}"
        );
        assert!(out.contains(start), "{out}");
        assert!(out.ends_with("        ]\r\n    }\r\n}"), "{out}");
        assert!(!out.replace("\r\n", "").contains('\n'), "{out:?}");
        assert_eq!(edited(Some(&out), Agent::Codex, cmd).unwrap(), None);
    }

    #[test]
    fn an_update_changes_only_the_command_string() {
        let text = "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"command\":\"/old/promptinclude hook codex -q\",\"timeout\":5}]}],\n\"UserPromptSubmit\":[{\"hooks\":[{\"command\":\"promptinclude hook codex\"},{\"command\":\"promptinclude hook codex\"}]}]}}";
        let out = edited(Some(text), Agent::Codex, "/new/promptinclude hook codex")
            .unwrap()
            .unwrap();
        assert_eq!(
            out,
            "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"command\":\"/new/promptinclude hook codex -q\",\"timeout\":5}]}],\n\"UserPromptSubmit\":[{\"hooks\":[{\"command\":\"/new/promptinclude hook codex\"}]}]}}"
        );
    }

    #[test]
    fn a_missing_or_blank_file_gets_the_layout_init_always_wrote() {
        let cmd = "/bin/promptinclude hook claude-code";
        let mut expected = Json::Object(Vec::new());
        model::merge(&mut expected, Agent::ClaudeCode, cmd).unwrap();
        let pretty = serde_json::to_string_pretty(&expected).unwrap() + "\n";
        for old in [None, Some(""), Some(" \n")] {
            let out = edited(old, Agent::ClaudeCode, cmd).unwrap();
            assert_eq!(out.as_deref(), Some(pretty.as_str()), "{old:?}");
        }
        let err = edited(Some("{\"a\": 1,}"), Agent::ClaudeCode, cmd).unwrap_err();
        assert!(
            format!("{err:#}").starts_with("not valid JSON; fix it first: "),
            "{err:#}"
        );
    }

    /// `init`'s merge as it was, on the whole value: what the textual merge
    /// must agree with.
    mod model {
        use super::super::{events, our_hook_flags, TIMEOUT_SECS};
        use crate::args::Agent;
        use crate::json_doc::ordered::Json;
        use anyhow::{anyhow, Result};

        /// Adds (or updates) the hook entries in `doc`; returns whether it changed.
        pub fn merge(doc: &mut Json, agent: Agent, command: &str) -> Result<bool> {
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

        fn merge_event(
            groups: &mut Vec<Json>,
            agent: Agent,
            matcher: Option<&str>,
            cmd: &str,
        ) -> bool {
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
                        Some(_) => {}
                    }
                }
                changed |= keep.len() != before;
                *handlers = keep;
            }
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
    }

    /// Random settings documents, written with random whitespace, biased
    /// towards the shapes `init` edits.
    mod gen {
        use proptest::prelude::*;

        /// A JSON text to be, its scalars and keys spelled as they will be written.
        #[derive(Clone, Debug)]
        pub enum Tree {
            Raw(&'static str),
            Array(Vec<Tree>),
            Object(Vec<(&'static str, Tree)>),
        }

        fn scalar() -> impl Strategy<Value = Tree> {
            prop::sample::select(vec![
                "12345678901234567890123",
                "1.0",
                "1e3",
                "-0",
                "0.5E-2",
                "true",
                "null",
                "\"\\u00e9\\/\"",
                "\"\\ud83d\\ude00 \\\"q\\\"\"",
                "\"x\"",
            ])
            .prop_map(Tree::Raw)
        }

        fn other() -> impl Strategy<Value = Tree> {
            let key = prop::sample::select(vec!["\"a\"", "\"model\"", "\"\\u00e9\"", "\"env\""]);
            scalar().prop_recursive(3, 12, 3, move |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..3).prop_map(Tree::Array),
                    prop::collection::vec((key.clone(), inner), 0..3).prop_map(Tree::Object),
                ]
            })
        }

        fn handler() -> impl Strategy<Value = Tree> {
            let command = prop::sample::select(vec![
                "\"promptinclude hook claude-code\"",
                "\"/old/promptinclude hook claude-code --max-total-tokens 9\"",
                "\"'/a b/promptinclude' hook claude-code\"",
                "\"/new/promptinclude hook claude-code\"",
                "\"\\/new\\/promptinclude hook claude-code\"",
                "\"promptinclude hook codex\"",
                "\"/new/promptinclude hook codex\"",
                "\"echo promptinclude hook codex\"",
            ]);
            prop_oneof![
                4 => (command, any::<bool>(), any::<bool>()).prop_map(|(c, typed, twice)| {
                    let mut members = Vec::new();
                    if typed {
                        members.push(("\"type\"", Tree::Raw("\"command\"")));
                    }
                    members.push(("\"command\"", Tree::Raw(c)));
                    if twice {
                        members.push(("\"c\\u006fmmand\"", Tree::Raw("\"echo\"")));
                    }
                    members.push(("\"timeout\"", Tree::Raw("30")));
                    Tree::Object(members)
                }),
                1 => scalar(),
            ]
        }

        fn group() -> impl Strategy<Value = Tree> {
            let matcher = prop::option::of(prop::sample::select(vec!["\"startup\"", "\"\""]));
            prop_oneof![
                6 => (matcher, prop::collection::vec(handler(), 0..4)).prop_map(|(m, hs)| {
                    let mut members = Vec::new();
                    if let Some(m) = m {
                        members.push(("\"matcher\"", Tree::Raw(m)));
                    }
                    members.push(("\"hooks\"", Tree::Array(hs)));
                    Tree::Object(members)
                }),
                1 => scalar().prop_map(|s| Tree::Object(vec![("\"hooks\"", s)])),
                1 => scalar(),
            ]
        }

        fn hooks() -> impl Strategy<Value = Tree> {
            let event = prop::sample::select(vec![
                "\"SessionStart\"",
                "\"UserPromptSubmit\"",
                "\"Stop\"",
                "\"Session\\u0053tart\"",
            ]);
            let groups = prop_oneof![
                12 => prop::collection::vec(group(), 0..4).prop_map(Tree::Array),
                1 => scalar(),
            ];
            prop_oneof![
                12 => prop::collection::vec((event, groups), 0..4).prop_map(Tree::Object),
                1 => scalar(),
            ]
        }

        /// A settings document: other members, and `hooks` (up to twice,
        /// spelled two ways) among them.
        pub fn settings() -> impl Strategy<Value = Tree> {
            let key = prop::sample::select(vec!["\"a\"", "\"model\"", "\"env\""]);
            let hooks_key = prop::sample::select(vec!["\"hooks\"", "\"\\u0068ooks\""]);
            let members = prop::collection::vec((key, other()), 0..4);
            let placed =
                prop::collection::vec((any::<prop::sample::Index>(), hooks_key, hooks()), 0..3);
            prop_oneof![
                20 => (members, placed).prop_map(|(mut members, placed)| {
                    for (at, key, hooks) in placed {
                        let at = at.index(members.len() + 1);
                        members.insert(at, (key, hooks));
                    }
                    Tree::Object(members)
                }),
                1 => other(),
            ]
        }

        /// Whitespace to put between tokens, taken in turn.
        pub fn spaces() -> impl Strategy<Value = Vec<&'static str>> {
            let one = prop::sample::select(vec![
                "", "", " ", "\n", "\r\n", "\t", "\n  ", "\n    ", "\r\n\t", "\n\t\t", "  ",
            ]);
            prop::collection::vec(one, 1..40)
        }

        /// `tree` as text, `spaces` between its tokens.
        pub fn render(tree: &Tree, spaces: &[&str]) -> String {
            let mut out = String::new();
            let mut next = spaces.iter().cycle();
            let mut space = || *next.next().unwrap_or(&"");
            out.push_str(space());
            write(tree, &mut out, &mut space);
            out.push_str(space());
            out
        }

        fn write<'s>(tree: &Tree, out: &mut String, space: &mut impl FnMut() -> &'s str) {
            match tree {
                Tree::Raw(text) => out.push_str(text),
                Tree::Array(items) => {
                    out.push('[');
                    for (i, item) in items.iter().enumerate() {
                        out.push_str(if i == 0 { "" } else { "," });
                        out.push_str(space());
                        write(item, out, space);
                    }
                    out.push_str(space());
                    out.push(']');
                }
                Tree::Object(members) => {
                    out.push('{');
                    for (i, (key, value)) in members.iter().enumerate() {
                        out.push_str(if i == 0 { "" } else { "," });
                        out.push_str(space());
                        out.push_str(key);
                        out.push_str(space());
                        out.push(':');
                        out.push_str(space());
                        write(value, out, space);
                    }
                    out.push_str(space());
                    out.push('}');
                }
            }
        }
    }

    proptest::proptest! {
        /// On random settings, the textual merge means what the old merge of
        /// the whole value meant, changes nothing outside `hooks` (only
        /// inserts it when it was missing), and a second run changes nothing.
        #[test]
        fn the_textual_merge_agrees_with_the_value_merge(
            tree in gen::settings(),
            spaces in gen::spaces(),
            codex in proptest::bool::ANY,
        ) {
            let text = gen::render(&tree, &spaces);
            let agent = if codex { Agent::Codex } else { Agent::ClaudeCode };
            let cmd = format!("/new/promptinclude hook {}", agent.name());
            let mut expected: Json = serde_json::from_str(&text).unwrap();
            let model = model::merge(&mut expected, agent, &cmd);
            let got = edited(Some(&text), agent, &cmd);
            let (changed, out) = match (model, got) {
                (Err(a), Err(b)) => {
                    proptest::prop_assert_eq!(a.to_string(), b.to_string());
                    return Ok(());
                }
                (Ok(changed), Ok(out)) => (changed, out),
                (model, got) => {
                    return Err(proptest::test_runner::TestCaseError::fail(format!(
                        "model {model:?}, textual {got:?} on {text:?}"
                    )))
                }
            };
            proptest::prop_assert_eq!(changed, out.is_some(), "{:?}", text);
            let out = out.unwrap_or_else(|| text.clone());
            let value: Json = serde_json::from_str(&out).unwrap();
            proptest::prop_assert_eq!(&value, &expected, "{:?} -> {:?}", text, out);

            let doc = json_doc::parse(&text).unwrap();
            let hooks = doc.root().members().and_then(|m| m.iter().rev().find(|m| m.key == "hooks"));
            match hooks {
                Some(hooks) => {
                    let span = hooks.value.span.clone();
                    proptest::prop_assert!(out.starts_with(&text[..span.start]), "{:?} -> {:?}", text, out);
                    proptest::prop_assert!(out.ends_with(&text[span.end..]), "{:?} -> {:?}", text, out);
                }
                None => {
                    // Only an insertion, or whitespace inside an empty `{}` replaced.
                    let (old, new) = (text.as_bytes(), out.as_bytes());
                    let same = old.iter().zip(new).take_while(|(a, b)| a == b).count();
                    let tail = old[same..]
                        .iter()
                        .rev()
                        .zip(new[same..].iter().rev())
                        .take_while(|(a, b)| a == b)
                        .count();
                    let replaced = &old[same..old.len() - tail];
                    proptest::prop_assert!(
                        replaced.iter().all(|b| b" \t\r\n".contains(b)),
                        "{:?} -> {:?}",
                        text,
                        out
                    );
                }
            }
            proptest::prop_assert_eq!(edited(Some(&out), agent, &cmd).unwrap(), None, "{:?}", out);
        }
    }
}
