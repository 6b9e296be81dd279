//! The audit as one self-contained HTML page (`promptinclude audit --html`).
//!
//! The page works offline forever: inline CSS, inline SVG charts drawn here,
//! and one small inline script (sorting, filtering, paging, expanding) whose
//! SHA-256 goes into a strict Content-Security-Policy, so no other script can
//! run — file names and rule-file contents are always escaped text, never
//! markup.
//!
//! Memory stays bounded for any number of roots: [`HtmlReport::write_root`]
//! writes each root's part as soon as it is known (the CLI streams it into a
//! temporary file), and keeps only a compact line per root (name, budget,
//! counts) plus the few biggest files for the overview, which
//! [`HtmlReport::finish`] writes before copying the roots' parts after it.

mod agents;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use super::warnings::WarningKind;
use super::{percent, relative, FileStatus, RootAudit};
use crate::visible::visible;

/// The page's one script. Its hash is computed at generation time and is
/// the only script the Content-Security-Policy allows.
pub const SCRIPT: &str = include_str!("page.js");

/// The page's style sheet.
const STYLE: &str = include_str!("page.css");

/// How many of the biggest files the overview lists.
const BIGGEST: usize = 20;
/// How many roots the "by budget used" table lists.
const TOP_ROOTS: usize = 100;

/// Escapes text for HTML content and attribute values: `&`, `<`, `>`, `"`, `'`.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    push_escaped(&mut out, text);
    out
}

fn push_escaped(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
}

/// Pushes a name or a message (a path, a root, a warning): escaped, with
/// the characters that could make it look like another one (controls,
/// bidirectional overrides, line separators) shown as `\u{…}`.
fn push_name(out: &mut String, text: &str) {
    push_escaped(out, &visible(text));
}

/// Standard base64 (RFC 4648, with padding).
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The CSP source for an inline script: `'sha256-BASE64'`.
pub fn csp_hash(script: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(script.as_bytes())))
}

/// The whole Content-Security-Policy of the page.
fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src {}; base-uri 'none'; form-action 'none'",
        csp_hash(SCRIPT)
    )
}

/// What the page holds.
#[derive(Clone, Debug, Default)]
pub struct HtmlOptions {
    /// Embed each root's rendered section (in a collapsed `<details>`).
    /// Without it, no rule-file content is in the page.
    pub include_content: bool,
}

/// The overview's line for one root.
struct RootLine {
    index: usize,
    root: String,
    budget_used: i64,
    budget_share: f64,
    rule_files: usize,
    tokens_included: i64,
    warnings: usize,
}

/// One of the biggest files.
struct BigFile {
    root_index: usize,
    root: String,
    path: String,
    status: FileStatus,
    counted: i64,
    included: i64,
}

/// The HTML report being written, root by root (see the module docs).
pub struct HtmlReport {
    options: HtmlOptions,
    lines: Vec<RootLine>,
    biggest: Vec<BigFile>,
    statuses: BTreeMap<&'static str, usize>,
    /// Per kind: warnings, roots with one.
    kinds: BTreeMap<&'static str, (usize, usize)>,
    rule_files: usize,
    tokens_counted: i64,
    tokens_included: i64,
    budget_used: i64,
    budget_total: f64,
    warnings: usize,
    errors: usize,
    index: usize,
    /// Some root has the agents' view: the roots then lead the page, the
    /// overview of Agent Zero's rule files follows them.
    agents: bool,
}

fn status_class(status: FileStatus) -> &'static str {
    match status {
        FileStatus::Ok => "ok",
        FileStatus::Cropped => "cr",
        FileStatus::Blank | FileStatus::Unreadable | FileStatus::Withheld => "bl",
        FileStatus::Skipped | FileStatus::NotReached | FileStatus::OverBudget => "sk",
    }
}

impl HtmlReport {
    /// An empty report.
    pub fn new(options: HtmlOptions) -> HtmlReport {
        HtmlReport {
            options,
            lines: Vec::new(),
            biggest: Vec::new(),
            statuses: BTreeMap::new(),
            kinds: BTreeMap::new(),
            rule_files: 0,
            tokens_counted: 0,
            tokens_included: 0,
            budget_used: 0,
            budget_total: 0.0,
            warnings: 0,
            errors: 0,
            index: 0,
            agents: false,
        }
    }

    /// Writes one root's part to `out` and notes it for the overview.
    /// `section` is the rendered section, embedded only with
    /// [`HtmlOptions::include_content`].
    pub fn write_root(
        &mut self,
        out: &mut impl Write,
        audit: &RootAudit,
        section: Option<&str>,
    ) -> io::Result<()> {
        // Compact markup (unquoted attributes where safe, optional end tags
        // left out): a 10,000-root page is dominated by these bytes.
        let index = self.index;
        self.index += 1;
        self.note(index, audit);
        self.agents |= audit.agents.is_some();
        let mut h = String::with_capacity(2048);
        let _ = write!(h, "<section class=root id=r{index}>");
        push_root_header(&mut h, audit);
        // With the agents, what they load leads: Agent Zero's own rule
        // files (often none) follow.
        if let Some(tree) = &audit.agents {
            agents::push_digest(&mut h, tree);
            h.push_str("<h3>Agent Zero's rule files (*.promptinclude.md)</h3>");
        }
        push_bar(&mut h, audit, audit.config.max_total_tokens.to_f64());
        push_file_table(&mut h, audit);
        push_warning_list(&mut h, audit, self.options.include_content);
        if let Some(tree) = &audit.agents {
            agents::push_agents(&mut h, tree, self.options.include_content);
        }
        if let (true, Some(section)) = (self.options.include_content, section) {
            let _ = write!(
                h,
                "<details class=content><summary>Rendered section ({} bytes)</summary><pre>",
                section.len()
            );
            push_escaped(&mut h, section);
            h.push_str("</pre></details>");
        }
        h.push_str("</section>\n");
        out.write_all(h.as_bytes())
    }

    /// Writes the part of a root that could not be audited.
    pub fn write_error(&mut self, out: &mut impl Write, root: &str, error: &str) -> io::Result<()> {
        let index = self.index;
        self.index += 1;
        self.errors += 1;
        let mut h = format!("<section class=root id=r{index}><h2>");
        push_name(&mut h, root);
        h.push_str("</h2><p class=bad>error: ");
        push_name(&mut h, error);
        h.push_str("</p></section>\n");
        out.write_all(h.as_bytes())
    }

    fn note(&mut self, index: usize, audit: &RootAudit) {
        let t = &audit.totals;
        self.lines.push(RootLine {
            index,
            root: audit.root.clone(),
            budget_used: t.budget_used,
            budget_share: t.budget_share,
            rule_files: t.rule_files,
            tokens_included: t.tokens_included,
            warnings: t.warnings,
        });
        self.rule_files += t.rule_files;
        self.tokens_counted += t.tokens_counted;
        self.tokens_included += t.tokens_included;
        self.budget_used += t.budget_used;
        let max = audit.config.max_total_tokens.to_f64();
        if max.is_finite() && max > 0.0 {
            self.budget_total += max;
        }
        self.warnings += t.warnings;
        for f in &audit.files {
            *self.statuses.entry(f.status.as_str()).or_default() += 1;
            let counted = f.tokens_counted.unwrap_or(0);
            let smallest = self.biggest.last().map_or(i64::MIN, |b| b.counted);
            if self.biggest.len() < BIGGEST || counted > smallest {
                let at = self.biggest.partition_point(|b| b.counted >= counted);
                self.biggest.insert(
                    at,
                    BigFile {
                        root_index: index,
                        root: audit.root.clone(),
                        path: relative(&f.path, &audit.abs_root).to_string(),
                        status: f.status,
                        counted,
                        included: f.tokens_included,
                    },
                );
                self.biggest.truncate(BIGGEST);
            }
        }
        let mut seen: Vec<&'static str> = Vec::new();
        for w in &audit.warnings {
            let kind = w.kind.as_str();
            let entry = self.kinds.entry(kind).or_default();
            entry.0 += 1;
            if !seen.contains(&kind) {
                seen.push(kind);
                entry.1 += 1;
            }
        }
    }

    /// Writes the whole page to `out`: the overview, then `roots` (what
    /// [`HtmlReport::write_root`] wrote, copied as is), then the script.
    pub fn finish(self, out: &mut impl Write, roots: &mut impl Read) -> io::Result<()> {
        let n = self.lines.len() + self.errors;
        let mut h = String::with_capacity(16 * 1024);
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <meta name=\"color-scheme\" content=\"light dark\">\
             <title>promptinclude audit: {n} root{}</title><style>{STYLE}</style></head>\n<body>",
            escape(&content_security_policy()),
            if n == 1 { "" } else { "s" },
        );
        h.push_str("<header><h1>promptinclude audit</h1>");
        let _ = write!(
            h,
            "<p class=\"tool\">generated by promptinclude {}{}</p></header><main>",
            env!("CARGO_PKG_VERSION"),
            if self.options.include_content {
                " · with rule-file content"
            } else {
                " · without rule-file content"
            }
        );
        let mut overview = String::new();
        self.push_overview(&mut overview, n);
        self.push_across(&mut overview);
        if !self.agents {
            h.push_str(&overview);
        }
        h.push_str(
            "<section id=\"roots\" aria-labelledby=\"roots-h\"><h2 id=\"roots-h\">Roots</h2>\
             <div id=\"controls\" hidden><label for=\"q\">Filter roots and files</label> \
             <input id=\"q\" type=\"search\" placeholder=\"path or name\" autocomplete=\"off\"> \
             <button type=\"button\" id=\"prev\">Previous</button> <button type=\"button\" id=\"next\">Next</button> \
             <button type=\"button\" id=\"expand\">Expand sections</button> \
             <span id=\"pinfo\" role=\"status\"></span></div>\n",
        );
        out.write_all(h.as_bytes())?;
        io::copy(roots, out)?;
        out.write_all(b"</section>")?;
        if self.agents {
            out.write_all(overview.as_bytes())?;
        }
        let tail = format!("</main><script>{SCRIPT}</script></body></html>\n");
        out.write_all(tail.as_bytes())
    }

    fn push_overview(&self, h: &mut String, n: usize) {
        let share = if self.budget_total > 0.0 {
            percent(self.budget_used as f64 / self.budget_total)
        } else {
            "-".to_string()
        };
        h.push_str("<section id=\"overview\" aria-labelledby=\"ov-h\"><h2 id=\"ov-h\">Overview</h2><dl class=\"stats\">");
        let stats: [(&str, String); 7] = [
            ("roots", n.to_string()),
            ("rule files", self.rule_files.to_string()),
            ("tokens included", self.tokens_included.to_string()),
            ("tokens counted", self.tokens_counted.to_string()),
            (
                "budget used",
                format!("{} of {} ({share})", self.budget_used, self.budget_total),
            ),
            ("warnings", self.warnings.to_string()),
            ("roots with errors", self.errors.to_string()),
        ];
        for (label, value) in stats {
            let _ = write!(h, "<div><dt>{label}</dt><dd>{value}</dd></div>");
        }
        h.push_str("</dl>");
        h.push_str(
            "<div class=\"tw\"><table class=\"sortable\" id=\"statuses\"><caption>Rule files per status</caption>\
             <thead><tr><th scope=\"col\"><button type=\"button\">Status</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Files</button></th></tr></thead><tbody>",
        );
        for status in [
            FileStatus::Ok,
            FileStatus::Cropped,
            FileStatus::Skipped,
            FileStatus::Blank,
            FileStatus::Unreadable,
            FileStatus::NotReached,
            FileStatus::OverBudget,
        ] {
            let count = self.statuses.get(status.as_str()).copied().unwrap_or(0);
            let _ = write!(
                h,
                "<tr class=\"{}\"><th scope=\"row\">{}</th><td class=\"num\">{count}</td></tr>",
                status_class(status),
                status.as_str()
            );
        }
        h.push_str("</tbody></table></div>");
        h.push_str(
            "<p class=\"legend\" aria-hidden=\"true\"><span class=\"k ok\"></span>included whole \
             <span class=\"k cr\"></span>cropped <span class=\"k pa\"></span>path lines \
             <span class=\"k fr\"></span>budget left</p></section>",
        );
    }

    /// The "Across roots" section: roots by budget used, the most common
    /// warnings and the biggest files.
    fn push_across(&self, h: &mut String) {
        h.push_str(
            "<section id=\"across\" aria-labelledby=\"ac-h\"><h2 id=\"ac-h\">Across roots</h2>",
        );
        self.push_roots_by_budget(h);
        self.push_warning_kinds(h);
        self.push_biggest(h);
        h.push_str("</section>");
    }

    /// The table of the roots that use the most budget (the top ones; every
    /// root is below).
    fn push_roots_by_budget(&self, h: &mut String) {
        let mut order: Vec<&RootLine> = self.lines.iter().collect();
        order.sort_by(|a, b| {
            b.budget_used
                .cmp(&a.budget_used)
                .then(a.index.cmp(&b.index))
        });
        let shown = order.len().min(TOP_ROOTS);
        let _ = write!(
            h,
            "<div class=\"tw\"><table class=\"sortable\" id=\"by-budget\"><caption>Roots by budget used{}</caption>\
             <thead><tr><th scope=\"col\"><button type=\"button\">Root</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Budget used</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Share</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Included</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Rule files</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Warnings</button></th></tr></thead><tbody>",
            if shown < order.len() {
                format!(" (top {shown} of {})", order.len())
            } else {
                String::new()
            }
        );
        for line in &order[..shown] {
            let _ = write!(h, "<tr><th scope=\"row\"><a href=\"#r{}\">", line.index);
            push_name(h, &line.root);
            let _ = write!(
                h,
                "</a></th><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                line.budget_used,
                percent(line.budget_share),
                line.tokens_included,
                line.rule_files,
                line.warnings
            );
        }
        h.push_str("</tbody></table></div>");
    }

    /// The table of warnings by kind, most common first.
    fn push_warning_kinds(&self, h: &mut String) {
        let mut kinds: Vec<(&&str, &(usize, usize))> = self.kinds.iter().collect();
        kinds.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
        h.push_str(
            "<div class=\"tw\"><table class=\"sortable\" id=\"warnings\"><caption>Most common warnings</caption>\
             <thead><tr><th scope=\"col\"><button type=\"button\">Kind</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Warnings</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Roots</button></th></tr></thead><tbody>",
        );
        if kinds.is_empty() {
            h.push_str("<tr><td colspan=\"3\">none</td></tr>");
        }
        for (kind, (count, roots)) in kinds {
            let _ = write!(
                h,
                "<tr><th scope=\"row\"><code>{kind}</code></th><td class=\"num\">{count}</td><td class=\"num\">{roots}</td></tr>"
            );
        }
        h.push_str("</tbody></table></div>");
    }

    /// The table of the biggest rule files (tokens counted).
    fn push_biggest(&self, h: &mut String) {
        h.push_str(
            "<div class=\"tw\"><table class=\"sortable\" id=\"biggest\"><caption>Biggest rule files (tokens counted)</caption>\
             <thead><tr><th scope=\"col\"><button type=\"button\">File</button></th>\
             <th scope=\"col\"><button type=\"button\">Root</button></th>\
             <th scope=\"col\"><button type=\"button\">Status</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Counted</button></th>\
             <th scope=\"col\" class=\"num\"><button type=\"button\">Included</button></th></tr></thead><tbody>",
        );
        if self.biggest.is_empty() {
            h.push_str("<tr><td colspan=\"5\">none</td></tr>");
        }
        for b in &self.biggest {
            h.push_str("<tr><th scope=\"row\" class=\"path\">");
            push_name(h, &b.path);
            let _ = write!(h, "</th><td><a href=\"#r{}\">", b.root_index);
            push_name(h, &b.root);
            let _ = write!(
                h,
                "</a></td><td class=\"{}\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                status_class(b.status),
                b.status.as_str(),
                b.counted,
                b.included
            );
        }
        h.push_str("</tbody></table></div>");
    }
}

/// A root's heading, where it is and which configuration applied, and its
/// totals (and that nothing is included when it is not a directory).
fn push_root_header(h: &mut String, audit: &RootAudit) {
    let t = &audit.totals;
    h.push_str("<h2>");
    push_name(h, &audit.root);
    h.push_str("</h2><p class=abs>");
    if audit.abs_root != audit.root {
        push_name(h, &audit.abs_root);
        h.push_str(" · ");
    }
    h.push_str("config: ");
    push_name(h, &audit.config_source.describe());
    let _ = write!(
        h,
        "</p><p>budget used <b>{}</b> of {} ({}) · tokens included {} of {} counted · rule files {} · warnings {}</p>",
        t.budget_used,
        audit.config.max_total_tokens,
        percent(t.budget_share),
        t.tokens_included,
        t.tokens_counted,
        t.rule_files,
        t.warnings,
    );
    if !audit.is_dir {
        h.push_str("<p class=bad>not a directory: nothing is included</p>");
    }
}

/// The table of a root's rule files (or "no rule files").
fn push_file_table(h: &mut String, audit: &RootAudit) {
    if audit.files.is_empty() {
        h.push_str("<p>no rule files</p>");
        return;
    }
    h.push_str(
        "<div class=tw><table class=\"sortable files\"><caption>Rule files</caption>\
         <thead><tr><th scope=col>Status<th scope=col>Counted<th scope=col>Included\
         <th scope=col>Share<th scope=col>File<tbody>",
    );
    for f in &audit.files {
        let included = matches!(f.status, FileStatus::Ok | FileStatus::Cropped);
        let _ = write!(
            h,
            "<tr class={}><td>{}<td>{}",
            status_class(f.status),
            f.status.as_str(),
            f.tokens_counted.map_or("-".to_string(), |n| n.to_string()),
        );
        if included {
            let _ = write!(
                h,
                "<td>{}<td>{}",
                f.tokens_included,
                percent(f.budget_share)
            );
        } else {
            h.push_str("<td>-<td>-");
        }
        h.push_str("<td class=path>");
        push_name(h, relative(&f.path, &audit.abs_root));
    }
    h.push_str("</table></div>");
}

/// A root's warnings as a list, paths relative to the root (nothing when
/// there are none).
fn push_warning_list(h: &mut String, audit: &RootAudit, include_content: bool) {
    if audit.warnings.is_empty() {
        return;
    }
    h.push_str("<ul class=warn aria-label=warnings>");
    for w in &audit.warnings {
        let _ = write!(h, "<li><code>{}</code> ", w.kind.as_str());
        if let Some(path) = &w.path {
            h.push_str("<span class=path>");
            push_name(h, relative(path, &audit.abs_root));
            if let Some(line) = w.line {
                let _ = write!(h, ":{line}");
            }
            h.push_str("</span>: ");
        }
        push_name(h, &w.message);
        if let (true, WarningKind::HiddenText, Some(path), Some(line)) =
            (include_content, w.kind, &w.path, w.line)
        {
            push_made_visible(h, Path::new(path), line);
        }
        h.push_str("</li>");
    }
    h.push_str("</ul>");
}

/// The line `line` of the file at `path`, its hidden characters marked
/// (`hidden_text` warnings, on a page with rule-file content): each shown
/// by its code point, a tag character also by the ASCII it stands for.
pub(crate) fn push_made_visible(h: &mut String, path: &Path, line: usize) {
    let Ok(bytes) = std::fs::read(path) else {
        return;
    };
    let text = String::from_utf8_lossy(&bytes);
    let pieces = crate::audit::hidden::line_made_visible(&text, line);
    if pieces.is_empty() {
        return;
    }
    h.push_str("<div class=shown>");
    for piece in pieces {
        match piece {
            Ok(text) => push_name(h, &text),
            Err(c) => {
                let _ = write!(h, "<mark>U+{:04X}", c as u32);
                let ascii = char::from_u32((c as u32).wrapping_sub(0xE0000))
                    .filter(|a| (' '..='~').contains(a));
                if let Some(ascii) = ascii {
                    h.push_str(" &#39;");
                    push_escaped(h, &ascii.to_string());
                    h.push_str("&#39;");
                }
                h.push_str("</mark>");
            }
        }
    }
    h.push_str("</div>");
}

/// The stacked bar of a root's budget: each included file's share (its path
/// lines darker, cropped files in their own colour), then what is left.
fn push_bar(h: &mut String, audit: &RootAudit, max: f64) {
    let used = audit.totals.budget_used as f64;
    let scale = if max.is_finite() && max > 0.0 {
        max.max(used)
    } else {
        used
    };
    let _ = write!(
        h,
        "<svg class=bar viewBox=\"0 0 1000 20\" preserveAspectRatio=none role=img \
         aria-label=\"budget used {} of {} tokens\"><rect class=fr width=1000 />",
        audit.totals.budget_used, audit.config.max_total_tokens
    );
    if scale > 0.0 {
        let k = 1000.0 / scale;
        let mut x = 0.0;
        for f in &audit.files {
            if !matches!(f.status, FileStatus::Ok | FileStatus::Cropped) {
                continue;
            }
            let path_w = f.path_tokens as f64 * k;
            let text_w = f.tokens_included as f64 * k;
            h.push_str("<g><title>");
            push_name(h, relative(&f.path, &audit.abs_root));
            let _ = write!(
                h,
                ": {} + {} path tokens</title><rect class=pa x={x:.1} width={path_w:.1} />\
                 <rect class={} x={:.1} width={text_w:.1} /></g>",
                f.tokens_included,
                f.path_tokens,
                status_class(f.status),
                x + path_w,
            );
            x += path_w + text_w;
        }
    }
    h.push_str("</svg>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page for `audits` in one string (`sections[i]` is root `i`'s rendered
    /// section, embedded with [`HtmlOptions::include_content`]).
    fn render_html(audits: &[RootAudit], sections: &[String], options: HtmlOptions) -> String {
        let mut report = HtmlReport::new(options);
        let mut roots = Vec::new();
        for (i, audit) in audits.iter().enumerate() {
            report
                .write_root(&mut roots, audit, sections.get(i).map(String::as_str))
                .expect("writing to a Vec");
        }
        let mut out = Vec::new();
        report
            .finish(&mut out, &mut roots.as_slice())
            .expect("writing to a Vec");
        String::from_utf8(out).expect("the page is UTF-8")
    }

    #[test]
    fn escapes_the_five_characters() {
        assert_eq!(
            escape(r#"<script>alert('x') & "y"</script>"#),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(
            escape("</textarea><img src=x onerror=alert(1)>"),
            "&lt;/textarea&gt;&lt;img src=x onerror=alert(1)&gt;"
        );
        assert_eq!(escape("plain ünïcode"), "plain ünïcode");
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (input, expected) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), expected, "{input:?}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn csp_hash_is_base64_sha256() {
        // printf '' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            csp_hash(""),
            "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"
        );
        // printf 'alert(1)' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            csp_hash("alert(1)"),
            "'sha256-bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI='"
        );
    }

    #[test]
    fn the_page_allows_exactly_its_own_script() {
        let page = render_html(&[], &[], HtmlOptions::default());
        let hash = csp_hash(SCRIPT);
        assert!(page.contains(&escape(&format!("script-src {hash};"))));
        assert_eq!(page.matches("<script>").count(), 1);
        let start = page.find("<script>").unwrap() + "<script>".len();
        let end = page[start..].find("</script>").unwrap() + start;
        assert_eq!(csp_hash(&page[start..end]), hash);
        assert!(!page.contains("http://") && !page.contains("https://"));
    }
}
