//! The reports of a [`PromptDiff`]: text for a terminal, JSON for tools
//! (schema [`SCHEMA`]), Markdown for a pull-request comment.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use super::agents::AgentsDiff;
use super::cut::{cut_at_line, MARKDOWN_DIFF_LIMIT};
use super::{Change, FileChange, FileState, PromptDiff, Totals};
use crate::audit::relative;
use crate::render::paint::Paint;
use crate::visible::{visible, visible_lines};

/// The JSON output's schema name.
pub const SCHEMA: &str = "promptinclude.diff/2";

/// Section diffs longer than this many lines start collapsed in Markdown.
const MARKDOWN_OPEN_LINES: usize = 40;

/// A diff with what its reports need to say where it comes from.
pub struct Report<'a> {
    /// The root as given.
    pub root: &'a Path,
    /// The root made absolute, as the scans print it.
    pub abs_root: String,
    /// The two sides' names (`HEAD~1`, `worktree`).
    pub labels: (&'a str, &'a str),
    /// The diff.
    pub diff: &'a PromptDiff,
    /// Lines of context in the section diff.
    pub context: usize,
    /// What the change does to the agents' chains (`diff --agents`).
    pub agents: Option<&'a AgentsDiff>,
}

fn signed(n: i64) -> String {
    if n > 0 {
        format!("+{n}")
    } else {
        n.to_string()
    }
}

/// `ok 120`, or `-` for a side the file is not on.
fn state(side: Option<FileState>) -> String {
    side.map_or("-".to_string(), |s| {
        format!("{} {}", s.status.as_str(), s.tokens)
    })
}

/// A path as Markdown text: control characters made visible, and the
/// characters that could start inline markup or end a table cell
/// backslash-escaped (CommonMark allows that for any ASCII punctuation).
fn md_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in visible(text).chars() {
        if "\\`*_[]<>|~&!".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A code fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

impl Report<'_> {
    fn rel<'p>(&self, change: &'p FileChange) -> &'p str {
        relative(&change.path, &self.abs_root)
    }

    fn section_diff(&self) -> String {
        self.diff.unified(self.context, self.labels)
    }

    /// The section diff as a person sees it: with `escape` (a terminal),
    /// every character that could hide a rule line or the line above it is
    /// made visible (`visible_lines`: tabs and line ends kept). The text and
    /// the Markdown reports both show it this way.
    fn shown_section_diff(&self, escape: bool) -> String {
        let section = self.section_diff();
        if escape {
            visible_lines(&section).into_owned()
        } else {
            section
        }
    }

    fn headline(&self) -> String {
        let (before, after) = (&self.diff.before, &self.diff.after);
        if self.diff.prompt_changed() {
            let delta = after.budget_used - before.budget_used;
            format!("the prompt changes (budget used {})", signed(delta))
        } else {
            "the prompt is unchanged".to_string()
        }
    }

    /// The totals as `(label, before → after ...)` pairs.
    fn totals(&self) -> [(&'static str, String); 3] {
        let (b, a) = (&self.diff.before, &self.diff.after);
        [
            (
                "rule-file tokens",
                format!(
                    "{} → {} ({})",
                    b.included_tokens,
                    a.included_tokens,
                    signed(a.included_tokens - b.included_tokens)
                ),
            ),
            (
                "budget used",
                format!(
                    "{} → {} of {} ({})",
                    b.budget_used,
                    a.budget_used,
                    self.diff.max_total_tokens,
                    signed(a.budget_used - b.budget_used)
                ),
            ),
            (
                "rule files",
                format!(
                    "{} → {}, skipped_count {} → {}",
                    b.rule_files, a.rule_files, b.skipped_count, a.skipped_count
                ),
            ),
        ]
    }

    /// The text report: `paint` for colours; `escape` (a terminal) shows
    /// control characters visibly in names and in the section's lines.
    pub fn text(&self, paint: Paint, escape: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "promptinclude diff {}..{} in {}: {}",
            self.labels.0,
            self.labels.1,
            self.root.display(),
            self.headline()
        );
        let width = self
            .diff
            .files
            .iter()
            .map(|c| visible(self.rel(c)).chars().count())
            .max()
            .unwrap_or(0);
        for change in &self.diff.files {
            let kind = paint.code(change_color(change.change), change.change.label());
            let pad = " ".repeat(14 - change.change.label().len());
            let rel = visible(self.rel(change));
            let rel_pad = " ".repeat(width - rel.chars().count());
            let _ = writeln!(
                out,
                "  {kind}{pad}  {rel}{rel_pad}  {} → {}  ({})",
                state(change.before),
                state(change.after),
                signed(change.token_delta())
            );
        }
        for (label, value) in self.totals() {
            let _ = writeln!(out, "{label}: {value}");
        }
        if let Some(agents) = self.agents {
            out.push_str(&agents.text(escape));
        }
        let section = self.shown_section_diff(escape);
        if !section.is_empty() {
            out.push('\n');
            let (header, body) = split_header(&section);
            out.push_str(header);
            for line in body.split_inclusive('\n') {
                let code = match line.as_bytes().first() {
                    Some(b'+') => "32",
                    Some(b'-') => "31",
                    Some(b'@') => "36",
                    _ => "",
                };
                if code.is_empty() {
                    out.push_str(line);
                } else {
                    let body = line.strip_suffix('\n').unwrap_or(line);
                    out.push_str(&paint.code(code, body));
                    out.push_str(&line[body.len()..]);
                }
            }
        }
        out
    }

    /// The JSON report (one document, schema [`SCHEMA`]).
    pub fn json(&self) -> Result<String, serde_json::Error> {
        #[derive(Serialize)]
        struct File<'a> {
            path: &'a str,
            rel: &'a str,
            change: Change,
            before: Option<FileState>,
            after: Option<FileState>,
        }
        #[derive(Serialize)]
        struct Json<'a> {
            schema: &'static str,
            root: std::borrow::Cow<'a, str>,
            base: &'a str,
            head: &'a str,
            prompt_changed: bool,
            files: Vec<File<'a>>,
            before: &'a Totals,
            after: &'a Totals,
            max_total_tokens: &'a crate::config::Number,
            section_diff: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            agents: Option<Agents<'a>>,
        }
        #[derive(Serialize)]
        struct Agents<'a> {
            changed: bool,
            #[serde(flatten)]
            diff: &'a AgentsDiff,
        }
        let record = Json {
            schema: SCHEMA,
            root: self.root.to_string_lossy(),
            base: self.labels.0,
            head: self.labels.1,
            prompt_changed: self.diff.prompt_changed(),
            files: (self.diff.files.iter())
                .map(|c| File {
                    path: &c.path,
                    rel: self.rel(c),
                    change: c.change,
                    before: c.before,
                    after: c.after,
                })
                .collect(),
            before: &self.diff.before,
            after: &self.diff.after,
            max_total_tokens: &self.diff.max_total_tokens,
            section_diff: self.section_diff(),
            agents: self.agents.map(|diff| Agents {
                changed: diff.changed(),
                diff,
            }),
        };
        let mut line = serde_json::to_string(&record)?;
        line.push('\n');
        Ok(line)
    }

    /// The Markdown report (for a pull-request comment; the section diff
    /// is cut to stay under GitHub's comment limit); `escape` (a terminal)
    /// shows control characters in the section's lines visibly, as
    /// [`Report::text`] does.
    pub fn markdown(&self, escape: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "### Prompt includes: {}\n", self.headline());
        let _ = writeln!(
            out,
            "{} → {} in {}\n",
            md_text(self.labels.0),
            md_text(self.labels.1),
            md_text(&self.root.to_string_lossy())
        );
        if self.diff.files.is_empty() {
            let _ = writeln!(out, "No rule file changed.\n");
        } else {
            let _ = writeln!(out, "| Rule file | Change | Before | After | Tokens |");
            let _ = writeln!(out, "|---|---|---|---|---:|");
            for change in &self.diff.files {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    md_text(self.rel(change)),
                    change.change.label(),
                    state(change.before),
                    state(change.after),
                    signed(change.token_delta())
                );
            }
            out.push('\n');
        }
        for (label, value) in self.totals() {
            let _ = writeln!(out, "- **{label}:** {}", value.replace('_', "\\_"));
        }
        if let Some(agents) = self.agents {
            out.push('\n');
            out.push_str(&agents.markdown(&md_text, &fence_for, escape));
        }
        let section = self.shown_section_diff(escape);
        if section.is_empty() {
            return out;
        }
        let (shown, cut) = cut_at_line(&section, MARKDOWN_DIFF_LIMIT);
        let lines = section.lines().count();
        let (added, removed) = split_header(&section)
            .1
            .lines()
            .fold((0, 0), |(a, r), line| match line.as_bytes().first() {
                Some(b'+') => (a + 1, r),
                Some(b'-') => (a, r + 1),
                _ => (a, r),
            });
        let open = if lines > MARKDOWN_OPEN_LINES {
            ""
        } else {
            " open"
        };
        let fence = fence_for(shown);
        let _ = writeln!(
            out,
            "\n<details{open}><summary>Rendered section diff (+{added} -{removed} lines)</summary>\n"
        );
        let _ = writeln!(out, "{fence}diff\n{shown}{fence}\n");
        if cut > 0 {
            let _ = writeln!(
                out,
                "{cut} more lines not shown; run `promptinclude diff` to see them all.\n"
            );
        }
        let _ = writeln!(out, "</details>");
        out
    }
}

/// A unified diff's `---`/`+++` header (its first two lines) and the rest:
/// a rule line that reads `---` is a removed `----` line, not a header.
fn split_header(diff: &str) -> (&str, &str) {
    let header_end = diff
        .match_indices('\n')
        .nth(1)
        .map_or(diff.len(), |(i, _)| i + 1);
    diff.split_at(header_end)
}

fn change_color(change: Change) -> &'static str {
    match change {
        Change::Added => "32",
        Change::Removed => "31",
        Change::Changed => "36",
        Change::StatusChanged => "33",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fences_outrun_the_longest_backtick_run() {
        assert_eq!(fence_for("no ticks"), "```");
        assert_eq!(fence_for("```\ncode\n```"), "````");
        assert_eq!(fence_for("a ````` b"), "``````");
    }

    #[test]
    fn markdown_text_cannot_start_markup_or_break_a_row() {
        assert_eq!(md_text("a|b_c*.md"), "a\\|b\\_c\\*.md");
        assert_eq!(md_text("[x](y) <b>"), "\\[x\\](y) \\<b\\>");
        assert_eq!(md_text("new\nline\u{1b}.md"), "new\\\\nline\\\\u{1b}.md");
        assert_eq!(md_text("plain/path.md"), "plain/path.md");
    }

    #[test]
    fn the_header_is_the_first_two_lines_only() {
        let diff = "--- a\n+++ b\n@@ -1,2 +1,2 @@\n----\n++++\n same\n";
        assert_eq!(
            split_header(diff),
            ("--- a\n+++ b\n", "@@ -1,2 +1,2 @@\n----\n++++\n same\n")
        );
        assert_eq!(split_header("--- a\n"), ("--- a\n", ""));
    }
}
