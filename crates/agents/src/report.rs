//! An [`AgentContext`] as text (`promptinclude context`) or as one JSON
//! document (schema [`SCHEMA`], `docs/agents-context.md`).

use std::fmt::Write as _;

use serde::Serialize;

use super::{Agent, AgentContext, ContextFile, Outcome, Role, Skip};
use promptinclude_tokenize as tokenize;
use promptinclude_visible::visible;

/// The JSON document's schema name.
pub const SCHEMA: &str = "promptinclude.context/1";

/// The status word of an outcome (as in JSON).
pub fn status(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Loaded => "loaded",
        Outcome::Truncated { .. } => "truncated",
        Outcome::Shadowed { .. } => "shadowed",
        Outcome::Skipped(Skip::Blank) => "blank",
        Outcome::Skipped(Skip::Unreadable(_)) => "unreadable",
        Outcome::Skipped(Skip::LimitReached) => "limit_reached",
        Outcome::Skipped(Skip::DroppedWithSet) => "dropped",
        Outcome::Skipped(Skip::ScopedOut) => "scoped_out",
        Outcome::Skipped(Skip::TooLarge) => "too_large",
        Outcome::Skipped(Skip::NotText) => "not_text",
        Outcome::Skipped(Skip::NotFound) => "unresolved",
        Outcome::Skipped(Skip::TooDeep) => "too_deep",
        Outcome::Skipped(Skip::Repeated) => "repeated",
        Outcome::Skipped(Skip::Outside) => "outside",
        Outcome::Skipped(Skip::Withheld(_)) => "withheld",
    }
}

/// Where an import `agent` leaves out ([`Skip::Outside`]) lies, and what
/// would change that, in the words every output uses: Claude Code follows
/// an import outside the working directory once the user approves external
/// imports for the project (read from its `.claude.json`: the status is
/// `outside` only where that approval is not given); Gemini CLI refuses one
/// outside the directories it reads from as a path traversal, whatever the
/// user says.
pub fn outside_words(agent: Agent) -> String {
    match agent {
        Agent::ClaudeCode => format!(
            "outside the working directory, which {} follows only once the user approves external imports for the project: its .claude.json holds no such approval, and an interactive session asks once",
            agent.name()
        ),
        Agent::CopilotCli => format!(
            "absolute, or outside the repository: {} inlines only relative paths to files inside it",
            agent.name()
        ),
        _ => format!(
            "outside the directories {} imports from, which it refuses as a path traversal",
            agent.name()
        ),
    }
}

/// What the outcome means, for the text report of `agent`'s context.
fn detail(outcome: &Outcome, agent: Agent) -> String {
    match outcome {
        Outcome::Loaded => String::new(),
        Outcome::Truncated { at, of } => format!(" (cut at byte {at} of {of})"),
        Outcome::Shadowed { by } => format!(" (shadowed by {})", by.display()),
        Outcome::Skipped(Skip::Blank) => " (blank: not sent)".to_string(),
        Outcome::Skipped(Skip::Unreadable(e)) => format!(" ({e})"),
        Outcome::Skipped(Skip::LimitReached) => {
            " (the byte limit is used up: not read)".to_string()
        }
        Outcome::Skipped(Skip::DroppedWithSet) => {
            " (dropped with the other project files)".to_string()
        }
        Outcome::Skipped(Skip::ScopedOut) if agent == Agent::CopilotCli => {
            " (applyTo:/paths: in its front matter: only listed, with its patterns, for the model to open when it works on matching files; never sent)"
                .to_string()
        }
        Outcome::Skipped(Skip::ScopedOut) => {
            " (paths: in its front matter: loaded only for matching files, never at start)"
                .to_string()
        }
        Outcome::Skipped(Skip::TooLarge) => " (larger than the agent reads)".to_string(),
        Outcome::Skipped(Skip::NotText) => " (not a text file extension)".to_string(),
        Outcome::Skipped(Skip::NotFound) => " (import: no such file)".to_string(),
        Outcome::Skipped(Skip::TooDeep) => " (import: nested too deep)".to_string(),
        Outcome::Skipped(Skip::Repeated) => " (import: already loaded)".to_string(),
        Outcome::Skipped(Skip::Outside) => format!(" (import {}: left out)", outside_words(agent)),
        Outcome::Skipped(Skip::Withheld(why)) => {
            format!(" (the agent reads it; withheld from this report: {why})")
        }
    }
}

/// The text report: the files in the agent's order, then the totals.
/// `escape`: show control characters in names visibly (a terminal).
pub fn text(context: &AgentContext, escape: bool) -> String {
    let shown = |s: String| if escape { visible(&s).into_owned() } else { s };
    let mut out = String::new();
    let agent = context.agent;
    let _ = write!(
        out,
        "{} {}, started in {}",
        agent.name(),
        agent.version(),
        shown(context.cwd.display().to_string())
    );
    match (agent.scope_words(context.root.as_deref()), &context.root) {
        (None, Some(root)) => {
            let _ = writeln!(out, " (project root {})", shown(root.display().to_string()));
        }
        (words, _) => {
            let _ = writeln!(out, " ({})", words.unwrap_or_default());
        }
    }
    if context.files.is_empty() {
        out.push_str("no context files\n");
    } else {
        let status_w = context
            .files
            .iter()
            .map(|f| status(&f.outcome).len())
            .max()
            .unwrap_or(0)
            .max(6);
        let bytes: Vec<String> = context
            .files
            .iter()
            .map(|f| f.bytes.map_or("-".into(), |b| b.to_string()))
            .collect();
        let bytes_w = bytes.iter().map(String::len).max().unwrap_or(0).max(5);
        let tokens_w = context
            .files
            .iter()
            .map(|f| f.tokens.to_string().len())
            .max()
            .unwrap_or(0)
            .max(6);
        let _ = writeln!(
            out,
            "  {:<status_w$}  {:>bytes_w$}  {:>tokens_w$}  FILE",
            "STATUS", "BYTES", "TOKENS"
        );
        for (file, bytes) in context.files.iter().zip(&bytes) {
            let role = match file.role {
                Role::Global => " [global]",
                Role::Local => " [local]",
                Role::Project => "",
            };
            let imported = file.parent.as_ref().map_or(String::new(), |p| {
                shown(format!(" [imported by {}]", p.display()))
            });
            let _ = writeln!(
                out,
                "  {:<status_w$}  {bytes:>bytes_w$}  {:>tokens_w$}  {}{role}{imported}{}",
                status(&file.outcome),
                file.tokens,
                shown(file.path.display().to_string()),
                shown(detail(&file.outcome, agent)),
            );
        }
    }
    for note in &context.notes {
        let _ = writeln!(out, "note: {}", shown(note.clone()));
    }
    if context
        .files
        .iter()
        .any(|f| matches!(f.outcome, Outcome::Skipped(Skip::Withheld(_))))
    {
        out.push_str("total: not reported (it would count what the withheld files hold)\n");
        return out;
    }
    if let Some(limit) = &context.limit {
        let _ = write!(
            out,
            "total: project files use {} of {} bytes",
            limit.used, limit.max
        );
        out.push_str("; ");
    } else {
        out.push_str("total: ");
    }
    let sent: Vec<String> = context
        .parts
        .iter()
        .map(|p| {
            let place = match p.place {
                super::Place::UserMessage => "a user message",
                super::Place::SystemPrompt => "the system prompt",
                super::Place::SystemInstruction => "the system instruction",
            };
            format!(
                "{} bytes, {} tokens in {place}",
                p.text.len(),
                tokenize::count(&p.text)
            )
        })
        .collect();
    if sent.is_empty() {
        out.push_str("nothing is sent\n");
    } else {
        let _ = writeln!(out, "it sends {}", sent.join(" and "));
    }
    out
}

/// The JSON document (one line, no newline).
pub fn json(context: &AgentContext) -> String {
    json_of(context)
}

/// One file of a context in JSON (as `context --json` and `audit --agents
/// --json` give it).
#[derive(Serialize)]
pub struct FileJson<'a> {
    path: String,
    role: Role,
    bytes: Option<u64>,
    tokens: usize,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    of: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    by: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    imported_by: Option<String>,
}

/// `f` in JSON.
pub fn file_json(f: &ContextFile) -> FileJson<'_> {
    let (at, of, by, error) = match &f.outcome {
        Outcome::Truncated { at, of } => (Some(*at), Some(*of), None, None),
        Outcome::Shadowed { by } => (None, None, Some(by.to_string_lossy().into_owned()), None),
        Outcome::Skipped(Skip::Unreadable(e) | Skip::Withheld(e)) => {
            (None, None, None, Some(e.as_str()))
        }
        _ => (None, None, None, None),
    };
    FileJson {
        path: f.path.to_string_lossy().into_owned(),
        role: f.role,
        bytes: f.bytes,
        tokens: f.tokens,
        status: status(&f.outcome),
        at,
        of,
        by,
        error,
        imported_by: f.parent.as_ref().map(|p| p.to_string_lossy().into_owned()),
    }
}

fn json_of(context: &AgentContext) -> String {
    #[derive(Serialize)]
    struct JsonPart<'a> {
        place: super::Place,
        text: &'a str,
        bytes: usize,
        tokens: usize,
    }
    #[derive(Serialize)]
    struct Doc<'a> {
        schema: &'static str,
        agent: &'static str,
        version: &'static str,
        cwd: String,
        root: Option<String>,
        files: Vec<FileJson<'a>>,
        limit: Option<super::ByteLimit>,
        parts: Vec<JsonPart<'a>>,
        raw: Option<&'a str>,
        raw_bytes: Option<usize>,
        raw_tokens: Option<usize>,
        notes: &'a [String],
    }
    let raw = context.raw();
    let doc = Doc {
        schema: SCHEMA,
        agent: context.agent.name(),
        version: context.agent.version(),
        cwd: context.cwd.to_string_lossy().into_owned(),
        root: context
            .root
            .as_ref()
            .map(|r| r.to_string_lossy().into_owned()),
        files: context.files.iter().map(file_json).collect(),
        limit: context.limit,
        parts: context
            .parts
            .iter()
            .map(|p| JsonPart {
                place: p.place,
                text: &p.text,
                bytes: p.text.len(),
                tokens: tokenize::count(&p.text),
            })
            .collect(),
        raw: raw.as_deref(),
        raw_bytes: raw.as_deref().map(str::len),
        raw_tokens: raw.as_deref().map(tokenize::count),
        notes: &context.notes,
    };
    serde_json::to_string(&doc).unwrap_or_default()
}
