//! The readable audit report (`promptinclude audit` without `--json`): per
//! root a title, the configuration's source, a table of its rule files and
//! its warnings, then one summary line over all roots.

use std::borrow::Cow;
use std::io::{self, Write};

use super::summary::Summary;
use super::{percent, relative, RootAudit};
use crate::error::RootError;
use crate::model::FileStatus;
use crate::render::paint::Paint;
use crate::visible::visible;

/// How the report is written.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Colours (a terminal that wants them).
    pub paint: Paint,
    /// Names and messages shown with [`visible`] (a terminal: control
    /// characters in them could rewrite the screen).
    pub escape: bool,
}

/// Writes a root that could not be audited.
pub fn write_error(
    out: &mut impl Write,
    root: &str,
    error: &RootError,
    style: Style,
) -> io::Result<()> {
    let error = error.to_string();
    writeln!(
        out,
        "{}\n  error: {}\n",
        shown(style.escape, root),
        shown(style.escape, &error)
    )
}

/// Above this many roots the readable report gives one line per root
/// with something to act on (a cut or skipped file, an unreadable one, a
/// warning, a failed gate), not each root's table; `--verbose` gives the
/// tables.
pub const MANY_ROOTS: usize = 20;

/// Writes one root's line of the report of many roots, if it has something
/// to act on; whether it had.
pub fn write_root_line(out: &mut impl Write, report: &RootAudit, style: Style) -> io::Result<bool> {
    let t = &report.totals;
    let files: Vec<String> = [
        (t.cropped, "cropped"),
        (t.skipped, "skipped"),
        (t.unreadable, "unreadable"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, word)| format!("{n} {word}"))
    .collect();
    let mut kinds: Vec<(&str, usize)> = Vec::new();
    for w in &report.warnings {
        match kinds.iter_mut().find(|(k, _)| *k == w.kind.as_str()) {
            Some((_, n)) => *n += 1,
            None => kinds.push((w.kind.as_str(), 1)),
        }
    }
    if report.is_dir && files.is_empty() && kinds.is_empty() && report.gate_failures == 0 {
        return Ok(false);
    }
    let mut line = format!(
        "{}: ",
        style.paint.code("1", &shown(style.escape, &report.root))
    );
    if !report.is_dir {
        line.push_str("not a directory");
    } else {
        line.push_str(&format!("{} rule files", t.rule_files));
        if !files.is_empty() {
            line.push_str(&format!(" ({})", files.join(", ")));
        }
        line.push_str(&format!(
            ", {} tokens included ({} of the budget)",
            t.tokens_included,
            percent(t.budget_share)
        ));
    }
    if !kinds.is_empty() {
        let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} {n}")).collect();
        line.push_str(&format!("; warnings: {}", kinds.join(", ")));
    }
    if report.gate_failures > 0 {
        line.push_str(&format!("; gate failures {}", report.gate_failures));
    }
    writeln!(out, "{line}")?;
    Ok(true)
}

/// Writes one root's report.
pub fn write_root(out: &mut impl Write, report: &RootAudit, style: Style) -> io::Result<()> {
    write_report(out, report, style.paint, style.escape)
}

/// Writes the summary over all roots; `quiet`, when the report lists only
/// the roots with something to act on, is how many it left out.
pub fn write_summary(
    out: &mut impl Write,
    s: &Summary,
    quiet: Option<usize>,
    style: Style,
) -> io::Result<()> {
    let paint = style.paint;
    if let Some(quiet) = quiet {
        writeln!(
            out,
            "{quiet} of {} roots with nothing to act on are not listed (--verbose lists every root)",
            s.roots + s.errors
        )?;
        if !s.warnings_by_kind.is_empty() {
            let kinds: Vec<String> = s
                .warnings_by_kind
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            writeln!(out, "warnings by kind: {}", kinds.join(", "))?;
        }
    }
    let mut line = format!(
        "summary: roots {}, rule files {}, tokens included {} of {} counted, cropped {}, skipped {}, warnings {}",
        s.roots, s.rule_files, s.tokens_included, s.tokens_counted, s.cropped, s.skipped, s.warnings
    );
    if s.agent_warnings > 0 {
        line.push_str(&format!(", agent warnings {}", s.agent_warnings));
    }
    if s.errors > 0 {
        line.push_str(&format!(", roots with errors {}", s.errors));
    }
    writeln!(out, "{}", paint.code("1", &line))?;
    if !s.failures.is_empty() {
        writeln!(
            out,
            "{}",
            paint.code("31", &format!("{} gate failure(s)", s.failures.len()))
        )?;
    }
    Ok(())
}

/// `text` as shown: with [`visible`] when `escape` (a terminal), else as is.
pub fn shown(escape: bool, text: &str) -> Cow<'_, str> {
    if escape {
        visible(text)
    } else {
        text.into()
    }
}

fn write_report(
    out: &mut impl Write,
    report: &RootAudit,
    paint: Paint,
    escape: bool,
) -> io::Result<()> {
    let title = if report.root == report.abs_root {
        report.root.clone()
    } else {
        format!("{} ({})", report.root, report.abs_root)
    };
    writeln!(out, "{}", paint.code("1", &shown(escape, &title)))?;
    let source = report.config_source.to_string();
    writeln!(out, "config: {}", shown(escape, &source))?;
    for env in &report.env {
        let verdict = if env.applied {
            "applied"
        } else {
            "not an integer: ignored"
        };
        writeln!(out, "env: {}={:?} ({verdict})", env.variable, env.raw)?;
    }
    write_file_table(out, report, paint, escape)?;
    write_warnings(out, report, paint, escape)?;
    let t = &report.totals;
    writeln!(
        out,
        "total: rule files {} (ok {}, cropped {}, skipped {}, blank {}, unreadable {}); \
         tokens included {} of {} counted; budget used {} of {} ({}); warnings {}",
        t.rule_files,
        t.ok,
        t.cropped,
        t.skipped,
        t.blank,
        t.unreadable,
        t.tokens_included,
        t.tokens_counted,
        t.budget_used,
        report.config.max_total_tokens,
        percent(t.budget_share),
        t.warnings,
    )?;
    writeln!(out)
}

/// The table of a root's rule files (or "no rule files").
fn write_file_table(
    out: &mut impl Write,
    report: &RootAudit,
    paint: Paint,
    escape: bool,
) -> io::Result<()> {
    let rows: Vec<[String; 4]> = report
        .files
        .iter()
        .map(|f| {
            let included = matches!(f.status, FileStatus::Ok | FileStatus::Cropped);
            [
                f.tokens_counted.map_or("-".to_string(), |n| n.to_string()),
                if included {
                    f.tokens_included.to_string()
                } else {
                    "-".to_string()
                },
                if included {
                    percent(f.budget_share)
                } else {
                    "-".to_string()
                },
                shown(escape, relative(&f.path, &report.abs_root)).into_owned(),
            ]
        })
        .collect();
    if rows.is_empty() {
        writeln!(out, "no rule files")?;
    } else {
        let status_w = report
            .files
            .iter()
            .map(|f| f.status.as_str().len())
            .max()
            .unwrap_or(0)
            .max("STATUS".len());
        let header = ["COUNTED", "INCLUDED", "BUDGET"];
        let widths: Vec<usize> = (0..3)
            .map(|c| {
                rows.iter()
                    .map(|r| r[c].len())
                    .max()
                    .unwrap_or(0)
                    .max(header[c].len())
            })
            .collect();
        writeln!(
            out,
            "  {:<status_w$}  {:>w0$}  {:>w1$}  {:>w2$}  FILE",
            "STATUS",
            header[0],
            header[1],
            header[2],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
        )?;
        for (f, row) in report.files.iter().zip(&rows) {
            let status = format!("{:<status_w$}", f.status.as_str());
            writeln!(
                out,
                "  {}  {:>w0$}  {:>w1$}  {:>w2$}  {}",
                paint.status(f.status, &status),
                row[0],
                row[1],
                row[2],
                row[3],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
            )?;
        }
    }
    Ok(())
}

/// A root's warnings, one line each, paths relative to the root.
fn write_warnings(
    out: &mut impl Write,
    report: &RootAudit,
    paint: Paint,
    escape: bool,
) -> io::Result<()> {
    if !report.warnings.is_empty() {
        writeln!(out, "warnings:")?;
        let kind_w = report
            .warnings
            .iter()
            .map(|w| w.kind.as_str().len())
            .max()
            .unwrap_or(0);
        for w in &report.warnings {
            let kind = format!("{:<kind_w$}", w.kind.as_str());
            let mut place = w
                .path
                .as_deref()
                .map(|p| relative(p, &report.abs_root).to_string())
                .unwrap_or_default();
            if let Some(line) = w.line {
                place.push_str(&format!(":{line}"));
            }
            if !place.is_empty() {
                place.push_str(": ");
            }
            writeln!(
                out,
                "  {}  {}{}",
                paint.code("33", &kind),
                shown(escape, &place),
                shown(escape, &w.message)
            )?;
        }
    }
    Ok(())
}

/// Writes what a live index of the root would keep (`audit --live-index`):
/// one line, and one more naming why when it would look at anything again
/// on every scan.
pub fn write_live_index(
    out: &mut impl Write,
    facts: &crate::index::LiveIndexFacts,
) -> io::Result<()> {
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    writeln!(
        out,
        "  live index: {} watched; on every scan {} listed, {} read",
        plural(facts.kept_dirs as u64, "directory", "directories"),
        plural(facts.listed_every_scan, "directory", "directories"),
        plural(facts.read_every_scan, "rule file", "rule files"),
    )?;
    let f = &facts.fallbacks;
    let reasons: Vec<&str> = [
        (
            f.links,
            "symbolic links whose targets their times cannot vouch for yet",
        ),
        (f.remote_fs, "network or FUSE file systems"),
        (f.watch_limit, "the watch limit"),
        (f.deep_tree, "a tree deeper than the reference walks"),
        (f.unsupported, "no inotify here"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(_, why)| why)
    .collect();
    if !reasons.is_empty() {
        writeln!(out, "    because of: {}", reasons.join(", "))?;
    }
    let links = &facts.links;
    let mut costs = Vec::new();
    if links.free > 0 {
        costs.push(format!(
            "{} free (never rule files)",
            plural(links.free, "link", "links")
        ));
    }
    let named = |paths: &[String], what: &str| {
        let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
        let more = paths.len().saturating_sub(shown.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{} {what}: {}{more}", paths.len(), shown.join(", "))
    };
    for (paths, what) in [
        (&links.stat, "stat'ed on every scan"),
        (&links.stat_and_read, "stat'ed and read on every scan"),
        (&links.listed, "directories listed on every scan for a link"),
    ] {
        if !paths.is_empty() {
            costs.push(named(paths, what));
        }
    }
    if !costs.is_empty() {
        writeln!(out, "    symbolic links: {}", costs.join("; "))?;
    }
    Ok(())
}
