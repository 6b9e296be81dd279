//! `promptinclude audit`: the readable report (or JSON Lines), the summary
//! over all roots, and the CI gates.
//!
//! The facts come from [`promptinclude::audit::audit_root`], run on every
//! root in parallel and printed in input order; this module only formats
//! them and decides the exit status.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use promptinclude::audit::html::{HtmlOptions, HtmlReport};
use promptinclude::audit::summary::{Failure, Summary};
use promptinclude::audit::warnings::WarningKind;
use promptinclude::audit::{audit_root_at, percent, relative, FileStatus, Record, RootAudit};
use promptinclude::batch::Batch;
use promptinclude::visible::visible;
use promptinclude::RootError;
use serde::Serialize;

use super::args::{AuditArgs, FailOn};
use super::atomic::{parent_dir, write_atomic_with};
use super::commands::{report_root_error, ErrorRecord};
use super::exit::ExitStatus;
use super::interrupt;
use super::paint::{use_color, Paint};
use super::progress::Progress;
use super::settings::{init_threads, select_roots};

/// The gates asked for on the command line.
struct Gates {
    cropped: bool,
    skipped: bool,
    warning: bool,
    kinds: Vec<WarningKind>,
    max_tokens: Option<u64>,
}

impl Gates {
    fn new(args: &AuditArgs) -> Gates {
        Gates {
            cropped: args.fail_on.contains(&FailOn::Cropped),
            skipped: args.fail_on.contains(&FailOn::Skipped),
            warning: args.fail_on.contains(&FailOn::Warning),
            kinds: args
                .fail_on
                .iter()
                .filter_map(|gate| match gate {
                    FailOn::Kind(kind) => Some(*kind),
                    _ => None,
                })
                .collect(),
            max_tokens: args.max_tokens,
        }
    }

    /// Every failure of one root, files first.
    fn check(&self, report: &RootAudit) -> Vec<Failure> {
        let failure = |path: Option<&str>, reason: String| Failure {
            root: report.root.clone(),
            path: path.map(str::to_string),
            reason,
        };
        let mut out = Vec::new();
        for f in &report.files {
            if self.cropped && f.status == FileStatus::Cropped {
                out.push(failure(
                    Some(&f.path),
                    format!(
                        "cropped ({} of {} tokens included)",
                        f.tokens_included,
                        f.tokens_counted.unwrap_or(f.tokens_included)
                    ),
                ));
            }
            if self.skipped && f.status.is_budget_skip() {
                out.push(failure(
                    Some(&f.path),
                    format!("skipped by the budget ({})", f.status.as_str()),
                ));
            }
        }
        let gated = |kind| self.warning || self.kinds.contains(&kind);
        for w in report.warnings.iter().filter(|w| gated(w.kind)) {
            {
                let reason = match w.line {
                    Some(line) => format!("warning {} (line {line}): {}", w.kind, w.message),
                    None => format!("warning {}: {}", w.kind, w.message),
                };
                out.push(failure(w.path.as_deref(), reason));
            }
        }
        if let Some(max) = self.max_tokens {
            let included = report.totals.tokens_included;
            if u64::try_from(included).unwrap_or(0) > max {
                out.push(failure(
                    None,
                    format!("{included} tokens included, more than --max-tokens {max}"),
                ));
            }
        }
        out
    }
}

/// `promptinclude audit`.
pub fn audit(args: &AuditArgs) -> Result<ExitStatus> {
    let resolver = super::commands::resolver_for(&args.config, &args.roots)?;
    let rev = args.roots.rev.as_deref();
    let (roots, _) = select_roots(&args.roots)?;
    init_threads(args.roots.threads)?;
    let batch = Batch::plan_with_policy(&roots, &resolver, args.read.policy(false))?;
    let gates = Gates::new(args);
    let mut summary = Summary::default();
    let mut status = ExitStatus::Success;
    let mut progress = Progress::new(roots.len());
    let mut write_result = Ok(());
    let mut output = AuditOutput::new(args)?;
    let with_content = args.html_include_content;
    batch.run(
        |_, planned, scanner| {
            let (report, scan) =
                audit_root_at(scanner, &planned.root, &planned.source, &planned.notes, rev)?;
            let section = with_content
                .then(|| promptinclude::render(scan.result(), &scanner.config().name_pattern));
            Ok((report, section))
        },
        |i, planned, report| {
            let (report, section) = match report {
                Ok(report) => report,
                Err(error) => {
                    status = status.merge(report_root_error(&planned.root, &error));
                    summary.errors += 1;
                    write_result = output.write_error(&planned.root, &error);
                    progress.tick(i + 1);
                    return write_result.is_ok();
                }
            };
            if !report.is_dir {
                status = status.merge(ExitStatus::Problems);
            }
            let mut report = report;
            let failures = gates.check(&report);
            report.gate_failures = failures.len();
            summary.add(&report);
            summary.failures.extend(failures);
            write_result = output.write_root(&report, section.as_deref());
            progress.tick(i + 1);
            write_result.is_ok()
        },
    );
    progress.finish();
    write_result?;
    output.finish(&summary)?;
    Ok(status.merge(report_failures(&summary)))
}

/// Where the audit goes: stdout (the readable report or JSON Lines) and,
/// with --html, the page.
struct AuditOutput {
    /// The HTML page: each root's part goes to a temporary file as it comes
    /// (bounded memory); the overview, written first, needs all of them.
    html: Option<HtmlParts>,
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    json: bool,
    paint: Paint,
    /// Names and messages are shown with [`visible`] (stdout is a terminal).
    escape: bool,
}

impl AuditOutput {
    /// The outputs `args` ask for (the page's temporary file is created here).
    fn new(args: &AuditArgs) -> Result<AuditOutput> {
        let paint = Paint(!args.json && use_color(args.color));
        let out = std::io::BufWriter::new(std::io::stdout().lock());
        let html = match &args.html {
            Some(path) => Some(HtmlParts::new(path, args.html_include_content)?),
            None => None,
        };
        Ok(AuditOutput {
            html,
            out,
            json: args.json,
            paint,
            escape: !args.json && std::io::stdout().is_terminal(),
        })
    }

    /// Writes a root that could not be audited: on stdout, then (if that
    /// worked) in the page.
    fn write_error(&mut self, given: &Path, error: &RootError) -> std::io::Result<()> {
        let root = given.to_string_lossy();
        if self.json {
            write_record(&mut self.out, "error", &ErrorRecord::new(given, error))?;
        } else {
            let (root, error) = (shown(self.escape, &root), error.to_string());
            writeln!(
                self.out,
                "{root}\n  error: {}\n",
                shown(self.escape, &error)
            )?;
        }
        match &mut self.html {
            Some(html) => html
                .report
                .write_error(&mut html.body, &root, &error.to_string()),
            None => Ok(()),
        }
    }

    /// Writes one root's report: on stdout, then (if that worked) in the page.
    fn write_root(&mut self, report: &RootAudit, section: Option<&str>) -> std::io::Result<()> {
        if self.json {
            write_record(&mut self.out, "root", report)?;
        } else {
            write_report(&mut self.out, report, self.paint, self.escape)?;
        }
        match &mut self.html {
            Some(html) => html.report.write_root(&mut html.body, report, section),
            None => Ok(()),
        }
    }

    /// Writes the summary over all roots and flushes stdout, then writes the
    /// page in its place.
    fn finish(mut self, summary: &Summary) -> Result<()> {
        if self.json {
            write_record(&mut self.out, "summary", summary)?;
        } else {
            write_summary(&mut self.out, summary, self.paint)?;
        }
        self.out.flush()?;
        if let Some(html) = self.html {
            html.finish()?;
        }
        Ok(())
    }
}

/// Prints one stderr line per gate failure; `Problems` if there is any.
pub fn report_failures(summary: &Summary) -> ExitStatus {
    let escape = std::io::stderr().is_terminal();
    for f in &summary.failures {
        let (root, reason) = (shown(escape, &f.root), shown(escape, &f.reason));
        match &f.path {
            Some(path) => eprintln!(
                "promptinclude: gate: {root}: {}: {reason}",
                shown(escape, path)
            ),
            None => eprintln!("promptinclude: gate: {root}: {reason}"),
        }
    }
    if summary.failures.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Problems
    }
}

/// The HTML page in the making: its roots' parts in a temporary file.
struct HtmlParts {
    path: PathBuf,
    report: HtmlReport,
    body: std::io::BufWriter<std::fs::File>,
    tracked: interrupt::Tracked,
}

impl HtmlParts {
    /// The page to be written to `path`, its temporary file created.
    fn new(path: &Path, include_content: bool) -> Result<HtmlParts> {
        // A scratch file beside the page, never published: private to us.
        let (file, tracked) = interrupt::create_file(parent_dir(path), 0o600)
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(HtmlParts {
            path: path.to_path_buf(),
            report: HtmlReport::new(HtmlOptions { include_content }),
            body: std::io::BufWriter::with_capacity(1 << 16, file),
            tracked,
        })
    }

    /// Writes the page to its path atomically; the temporary goes away.
    fn finish(mut self) -> Result<()> {
        self.body.flush()?;
        let mut roots = std::io::BufReader::new(std::fs::File::open(self.tracked.path())?);
        let report = self.report;
        write_atomic_with(&self.path, |out| report.finish(&mut &mut *out, &mut roots))?;
        drop(self.tracked);
        Ok(())
    }
}

/// Writes one `audit --json` record (JSON Lines).
pub fn write_record<T: Serialize>(
    out: &mut impl Write,
    kind: &'static str,
    data: &T,
) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &Record::new(kind, data))?;
    out.write_all(b"\n")
}

/// `text` as shown: with [`visible`] when `escape` (a terminal), else as is.
fn shown(escape: bool, text: &str) -> std::borrow::Cow<'_, str> {
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
) -> std::io::Result<()> {
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
) -> std::io::Result<()> {
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
) -> std::io::Result<()> {
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

fn write_summary(out: &mut impl Write, s: &Summary, paint: Paint) -> std::io::Result<()> {
    let mut line = format!(
        "summary: roots {}, rule files {}, tokens included {} of {} counted, cropped {}, skipped {}, warnings {}",
        s.roots, s.rule_files, s.tokens_included, s.tokens_counted, s.cropped, s.skipped, s.warnings
    );
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
