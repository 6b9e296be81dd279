//! `promptinclude audit`: the readable report (or JSON Lines), the summary
//! over all roots, and the CI gates.
//!
//! The facts come from [`promptinclude::audit::audit_root`], run on every
//! root in parallel and printed in input order; this module only formats
//! them and decides the exit status.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use promptinclude::agents::disk::ListingsAbove;
use promptinclude::agents::{agent_zero, Agent};
use promptinclude::audit::agents::{audit_tree_knowing, AgentWarningKind, Known, Setup};
use promptinclude::audit::html::{HtmlOptions, HtmlReport};
use promptinclude::audit::sarif::SarifLog;
use promptinclude::audit::summary::{Failure, Summary};
use promptinclude::audit::warnings::WarningKind;
use promptinclude::audit::{audit_root_at, write_record, FileStatus, RootAudit};
use promptinclude::batch::Batch;
use promptinclude::index::LiveIndexFacts;
use promptinclude::tokenize::Memo;
use promptinclude::RootError;

use super::args::{AuditArgs, FailOn};
use super::checkout::{agents_at, checkout, physical_path};
use super::commands::report_root_error;
use super::exit::ExitStatus;
use super::paint::{use_color, Paint};
use super::progress::Progress;
use super::settings::{init_threads, select_roots};
use promptinclude::artifact::temp::{self, Tracked};
use promptinclude::artifact::{parent_dir, write_atomic_with};
use promptinclude::audit::text::{self, shown, Style};
use promptinclude::render::ErrorRecord;

/// The gates asked for on the command line.
struct Gates {
    cropped: bool,
    skipped: bool,
    warning: bool,
    kinds: Vec<WarningKind>,
    agent_kinds: Vec<AgentWarningKind>,
    /// `hidden_text:CLASS` gates: the classes of hidden characters.
    hidden: Vec<&'static str>,
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
            agent_kinds: args
                .fail_on
                .iter()
                .filter_map(|gate| match gate {
                    FailOn::AgentKind(kind) => Some(*kind),
                    _ => None,
                })
                .collect(),
            hidden: args
                .fail_on
                .iter()
                .filter_map(|gate| match gate {
                    FailOn::HiddenClass(class) => Some(*class),
                    _ => None,
                })
                .collect(),
            max_tokens: args.max_tokens,
        }
    }

    /// Whether a `hidden_text:CLASS` gate names the class `class`.
    fn hidden_class(&self, class: Option<&'static str>) -> bool {
        class.is_some_and(|c| self.hidden.contains(&c))
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
        let gated = |w: &&promptinclude::audit::warnings::Warning| {
            self.warning || self.kinds.contains(&w.kind) || self.hidden_class(w.class)
        };
        for w in report.warnings.iter().filter(gated) {
            let reason = match w.line {
                Some(line) => format!("warning {} (line {line}): {}", w.kind, w.message),
                None => format!("warning {}: {}", w.kind, w.message),
            };
            out.push(failure(w.path.as_deref(), reason));
        }
        let agent_gated = |w: &&promptinclude::audit::agents::AgentWarning| {
            self.warning || self.agent_kinds.contains(&w.kind) || self.hidden_class(w.class)
        };
        let agent_warnings = report.agents.iter().flat_map(|a| &a.warnings);
        for w in agent_warnings.filter(agent_gated) {
            let line = w
                .line
                .map_or(String::new(), |line| format!(" (line {line})"));
            let reason = format!("{} warning {}{line}: {}", w.agent, w.kind, w.message);
            out.push(failure(Some(&w.path.to_string_lossy()), reason));
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
    let agents = args.agents.chosen();
    let home = args.agents.home_dir()?;
    let env = |name: &str| std::env::var_os(name);
    let setup = Setup {
        home: &home,
        env: &env,
        view: args.agents.view.into(),
    };
    let host_scan =
        agent_zero::scans_as_the_host(&agents, &resolver, &env, &args.read.policy(false));
    let gates = Gates::new(args);
    let mut summary = Summary::default();
    let mut status = ExitStatus::Success;
    let mut progress = Progress::new(roots.len());
    let mut write_result = Ok(());
    let mut output = AuditOutput::new(args, roots.len())?;
    let with_content = args.html_include_content;
    // One memo of token counts for every tree: repositories repeat each
    // other's rule files and the agents' framing.
    let counts = Arc::new(Memo::new());
    let above = ListingsAbove::default();
    batch.run(
        |_, planned, scanner| {
            // The agents' audit of the tree takes the directories the
            // audit's walk listed, when both name them alike (a physical
            // root on disk).
            let physical = rev.is_none()
                && !agents.is_empty()
                && std::fs::canonicalize(&planned.root).is_ok_and(|real| real == planned.root);
            let (mut report, scan, mut listings) = audit_root_at(
                scanner,
                &planned.root,
                &planned.source,
                &planned.notes,
                rev,
                physical,
            )?;
            let render = || promptinclude::render(scan.result(), &scanner.config().name_pattern);
            let section = with_content.then(render);
            if let (Some(rev), false, true) = (rev, agents.is_empty(), report.is_dir) {
                // What a fresh clone's agents load: the revision written
                // into a scratch directory, seen at the tree's place.
                report.agents = Some(agents_of_revision(&agents, &planned.root, rev, &setup)?);
            } else if !agents.is_empty() && report.is_dir {
                // Agent Zero loads what this scan found when the scan is
                // the one its host makes: its configuration and read policy,
                // from the physical root (the paths it names).
                let agent_zero = (host_scan && physical).then(|| {
                    let text = section.clone().unwrap_or_else(render);
                    agent_zero::from_scan(planned.root.clone(), scan.result(), text)
                });
                if physical {
                    listings.extend(above.of(&planned.root));
                }
                let known = Known {
                    agent_zero,
                    listings,
                    counts: Some(Arc::clone(&counts)),
                };
                report.agents = Some(audit_tree_knowing(&agents, &planned.root, &setup, known));
            }
            if args.live_index && report.is_dir {
                if let Ok(scanner) = planned.shared_scanner() {
                    report.live_index = Some(LiveIndexFacts::of(&planned.root, scanner));
                }
            }
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

/// The agents' view of revision `rev` of the repository at `root`: what a
/// fresh clone of it loads (a root's git error when it cannot be checked
/// out).
fn agents_of_revision(
    agents: &[Agent],
    root: &Path,
    rev: &str,
    setup: &Setup<'_>,
) -> std::result::Result<promptinclude::audit::agents::TreeAudit, promptinclude::Error> {
    let fail = |e: anyhow::Error| {
        let message = format!("--agents --rev {rev}: {e:#}");
        promptinclude::Error::Git(message.into())
    };
    let scratch = tempfile::Builder::new()
        .prefix("promptinclude-audit-")
        .tempdir()
        .map_err(|e| fail(e.into()))?;
    let place = physical_path(root).map_err(fail)?;
    let tree = checkout(root, rev, &scratch.path().join("tree")).map_err(fail)?;
    Ok(agents_at(agents, &tree, &place, setup))
}

/// Where the audit goes: stdout (the readable report or JSON Lines) and,
/// with --html, the page.
struct AuditOutput {
    /// The HTML page: each root's part goes to a temporary file as it comes
    /// (bounded memory); the overview, written first, needs all of them.
    html: Option<HtmlParts>,
    out: std::io::BufWriter<std::io::StdoutLock<'static>>,
    json: bool,
    /// Every chain and warning, not the agents' summary.
    verbose: bool,
    /// With --sarif: where it goes, and the log in the making.
    sarif: Option<(PathBuf, SarifLog)>,
    /// Roots left out of a report of many roots, which lists only those
    /// with something to act on (`None`: every root is reported).
    quiet: Option<usize>,
    /// Colours, and names and messages shown with `visible` (stdout is a terminal).
    style: Style,
}

impl AuditOutput {
    /// The outputs `args` ask for (the page's temporary file is created here).
    fn new(args: &AuditArgs, roots: usize) -> Result<AuditOutput> {
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
            verbose: args.verbose,
            sarif: match &args.sarif {
                Some(path) => Some((path.clone(), SarifLog::new(std::env::current_dir()?))),
                None => None,
            },
            quiet: (!args.verbose && roots > text::MANY_ROOTS).then_some(0),
            style: Style {
                paint,
                escape: !args.json && std::io::stdout().is_terminal(),
            },
        })
    }

    /// Writes a root that could not be audited: on stdout, then (if that
    /// worked) in the page.
    fn write_error(&mut self, given: &Path, error: &RootError) -> std::io::Result<()> {
        let root = given.to_string_lossy();
        if self.json {
            write_record(&mut self.out, "error", &ErrorRecord::new(given, error))?;
        } else {
            text::write_error(&mut self.out, &root, error, self.style)?;
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
            match &mut self.quiet {
                Some(quiet) => {
                    let listed = text::write_root_line(&mut self.out, report, self.style)?;
                    if !listed && (report.live_index.is_some() || report.agents.is_some()) {
                        // What follows needs its root named.
                        writeln!(self.out, "{}:", shown(self.style.escape, &report.root))?;
                    } else if !listed {
                        *quiet += 1;
                    }
                }
                None => text::write_root(&mut self.out, report, self.style)?,
            }
            if let Some(facts) = &report.live_index {
                text::write_live_index(&mut self.out, facts)?;
            }
            if let Some(tree) = &report.agents {
                use promptinclude::audit::agents::text::{write_digest, write_tree};
                if self.verbose {
                    write_tree(&mut self.out, tree, self.style)?;
                } else {
                    write_digest(&mut self.out, tree, self.style)?;
                }
            }
        }
        if let Some((_, log)) = &mut self.sarif {
            log.add_root(report);
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
            text::write_summary(&mut self.out, summary, self.quiet, self.style)?;
        }
        self.out.flush()?;
        if let Some(html) = self.html {
            html.finish()?;
        }
        if let Some((path, log)) = self.sarif {
            let mut left_out = 0;
            write_atomic_with(&path, |out| {
                left_out = log.write(out)?;
                Ok(())
            })?;
            if left_out > 0 {
                eprintln!(
                    "promptinclude: {}: {left_out} results left out (code scanning keeps {} of a run; the most severe are kept)",
                    path.display(),
                    promptinclude::audit::sarif::MAX_RESULTS
                );
            }
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
    tracked: Tracked,
}

impl HtmlParts {
    /// The page to be written to `path`, its temporary file created.
    fn new(path: &Path, include_content: bool) -> Result<HtmlParts> {
        // A scratch file beside the page, never published: private to us.
        let (file, tracked) = temp::create_file(parent_dir(path), 0o600)
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
