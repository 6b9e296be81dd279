//! The subcommands: each turns resolved settings into output.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use promptinclude::batch::{Batch, PlannedRoot};
use promptinclude::config::Config;
use promptinclude::discover::gitwildmatch::IgnoreSpec;
use promptinclude::project::Resolver;
use promptinclude::render::check::Checked;
use promptinclude::render::{error_line, json_string, render, scan_line};
use promptinclude::{rootname, RootError};
use promptinclude::{RootScan, Scanner};

use super::args::{CheckIgnoreArgs, ConfigArgs, RenderArgs, RootArgs, ScanArgs, WatchArgs};
use super::exit::ExitStatus;
use super::interrupt;
use super::progress::Progress;
use super::settings::{init_threads, read_stdin_paths, read_text_file, resolver, select_roots};
use promptinclude::artifact::index::{section_file_name, write_index, IndexEntry};
use promptinclude::artifact::write_atomic;
use promptinclude::index::{BatchIndex, IndexOptions};

/// Warns on stderr about a root that is not a directory; returns the status it implies.
pub fn check_root(is_dir: bool, given: &Path) -> ExitStatus {
    if is_dir {
        ExitStatus::Success
    } else {
        eprintln!(
            "promptinclude: warning: {}: not a directory (empty result)",
            given.display()
        );
        ExitStatus::Problems
    }
}

/// Reports a root that has no result on stderr (one line naming the root
/// and the file, line and key at fault); the run goes on, and ends with
/// exit status 2.
pub fn report_root_error(given: &Path, error: &RootError) -> ExitStatus {
    eprintln!("promptinclude: error: root {}: {error}", given.display());
    ExitStatus::Error
}

/// The configuration rule for `args` (with `--rev`: [`Resolver::for_rev`]).
pub fn resolver_for(config: &ConfigArgs, roots: &RootArgs) -> Result<Resolver> {
    Ok(resolver(config)?.for_rev(roots.rev.as_deref()))
}

/// `promptinclude scan`.
pub fn scan(args: &ScanArgs) -> Result<ExitStatus> {
    let resolver = resolver_for(&args.config, &args.roots)?;
    let (roots, _) = select_roots(&args.roots)?;
    init_threads(args.roots.threads)?;
    let batch = Batch::plan_with_policy(&roots, &resolver, args.read.policy(false))?;
    let rev = args.roots.rev.as_deref();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut status = ExitStatus::Success;
    let mut progress = Progress::new(roots.len());
    let mut write_result = Ok(());
    let work = |_, planned: &PlannedRoot, scanner: &Scanner| scanner.scan_at(&planned.root, rev);
    batch.run(work, |i, planned, scan| {
        let line = match scan {
            Ok(scan) => {
                status = status.merge(check_root(scan.is_dir, &planned.root));
                scan_line(&scan, &planned.root)
            }
            Err(e) => {
                status = status.merge(report_root_error(&planned.root, &e));
                error_line(&planned.root, &e)
            }
        };
        write_result = writeln!(out, "{line}");
        progress.tick(i + 1);
        write_result.is_ok()
    });
    progress.finish();
    write_result?;
    out.flush()?;
    Ok(status)
}

/// `promptinclude render`.
pub fn render_cmd(args: &RenderArgs) -> Result<ExitStatus> {
    let resolver = resolver_for(&args.config, &args.roots)?;
    let sharded = args.roots.shard.is_some() || args.roots.shard_from_env.is_some();
    if sharded && args.out_dir.is_none() {
        anyhow::bail!(
            "--shard and --shard-from-env need --out-dir (render prints one root otherwise)"
        );
    }
    if args.watch.watch && args.out_dir.is_none() {
        anyhow::bail!(
            "--watch needs --out-dir DIR: it keeps the files in DIR current \
             (render prints one root's section otherwise)"
        );
    }
    check_watch(&args.watch, &args.roots)?;
    let (roots, indices) = select_roots(&args.roots)?;
    init_threads(args.roots.threads)?;
    let batch = Batch::plan_with_policy(&roots, &resolver, args.read.policy(false))?;
    let rev = args.roots.rev.as_deref();
    let Some(out_dir) = &args.out_dir else {
        return render_one(&batch, args.json, rev);
    };
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    if args.watch.watch {
        return render_watch(Arc::new(batch), &indices, out_dir, &args.watch);
    }
    let mut status = ExitStatus::Success;
    let mut index = Vec::with_capacity(roots.len());
    let mut progress = Progress::new(roots.len());
    let mut failure = Ok(());
    batch.run(
        |_, planned, scanner| {
            let scan = scanner.scan_at(&planned.root, rev)?;
            let section = render(scan.result(), &scanner.config().name_pattern);
            Ok((scan, section))
        },
        |i, planned, outcome| {
            let (entry, section) = root_output(indices[i], &planned.root, outcome);
            status = status.merge(report_entry(&planned.root, &entry));
            if let Some((file, section)) = &section {
                failure = write_atomic(&out_dir.join(file), section.as_bytes());
            }
            index.push(entry);
            progress.tick(i + 1);
            failure.is_ok()
        },
    );
    progress.finish();
    failure?;
    write_index(out_dir, &index)?;
    Ok(status)
}

/// One root's section file (name and text) and `index.json` entry, from
/// its scan and rendered section, or why it has none. A run and each
/// `--watch` update share it.
fn root_output(
    index: usize,
    root: &Path,
    outcome: Result<(RootScan, String), RootError>,
) -> (IndexEntry, Option<(String, String)>) {
    let root_text = rootname::text_of(root);
    let root_hex = rootname::hex_of(root);
    match outcome {
        Ok((scan, section)) => {
            let file = section_file_name(index, &scan.abs_root);
            let entry = IndexEntry {
                root: root_text,
                root_hex,
                abs_root: Some(rootname::text_of(&scan.abs_root)),
                abs_root_hex: rootname::hex_of(&scan.abs_root),
                is_dir: (!scan.is_dir).then_some(false),
                section: Some(file.clone()),
                error: None,
            };
            (entry, Some((file, section)))
        }
        Err(e) => {
            let entry = IndexEntry {
                root: root_text,
                root_hex,
                abs_root: None,
                abs_root_hex: None,
                is_dir: None,
                section: None,
                error: Some(e),
            };
            (entry, None)
        }
    }
}

/// Warns on stderr about the root of `entry` when it has no section or is
/// not a directory; returns the status that implies.
fn report_entry(root: &Path, entry: &IndexEntry) -> ExitStatus {
    match &entry.error {
        Some(e) => report_root_error(root, e),
        None => check_root(entry.is_dir.is_none(), root),
    }
}

/// Fails for `--watch` with what it cannot do.
pub fn check_watch(watch: &WatchArgs, roots: &RootArgs) -> Result<()> {
    if watch.watch && roots.rev.is_some() {
        anyhow::bail!(
            "--watch keeps output current with the files on disk; it does not take --rev"
        );
    }
    Ok(())
}

/// A root's scan from a live index (or a fresh one) rendered exactly as
/// [`scan_and_render`] renders it: the configuration the host gives the
/// root now, its `name_pattern`.
pub fn render_scanned(
    batch: &Batch,
    root: &Path,
    scan: Result<RootScan, RootError>,
) -> Result<(RootScan, String), RootError> {
    let scan = scan?;
    batch.render_root(root, move |_, _| Ok(scan))
}

/// How long a wait for changes lasts before it checks for a stop request.
const WAIT_SLICE: Duration = Duration::from_millis(100);

/// How often the `--watch` loop scans with no notification: what none
/// covers (a link's target, a network file system, a project file in a
/// directory the walk does not enter) is looked at again at least this
/// often. An unchanged update writes nothing and prints nothing.
const RESCAN_EVERY: Duration = Duration::from_secs(2);

/// The `--watch` loop: waits for a change under the index's roots (or
/// [`RESCAN_EVERY`]), lets `debounce` pass (one update for a burst of
/// changes), then calls `update`; until an interrupt signal asks it to stop
/// (then `Ok`).
pub fn watch_loop(
    index: &mut BatchIndex,
    debounce: Duration,
    mut update: impl FnMut(&mut BatchIndex) -> Result<()>,
) -> Result<()> {
    let mut last = Instant::now();
    loop {
        if interrupt::stop_requested() {
            return Ok(());
        }
        let notified = index
            .wait(WAIT_SLICE)
            .context("cannot wait for changes under the roots")?;
        if !notified && last.elapsed() < RESCAN_EVERY {
            continue;
        }
        let until = Instant::now() + debounce;
        loop {
            if interrupt::stop_requested() {
                return Ok(());
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(WAIT_SLICE));
        }
        update(index)?;
        last = Instant::now();
    }
}

/// Milliseconds, for the update lines.
pub fn millis(elapsed: Duration) -> String {
    format!("{:.1} ms", elapsed.as_secs_f64() * 1000.0)
}

/// The roots an update line names: all of them up to a few, then a count.
pub fn root_list(roots: &[&Path]) -> String {
    const SHOWN: usize = 5;
    let mut names: Vec<String> = roots
        .iter()
        .take(SHOWN)
        .map(|r| r.display().to_string())
        .collect();
    if roots.len() > SHOWN {
        names.push(format!("and {} more", roots.len() - SHOWN));
    }
    names.join(", ")
}

/// `render --watch --out-dir DIR`: writes every root's section file and
/// `index.json` from the live index's first scan, then rewrites the files
/// whose bytes an update changes.
fn render_watch(
    batch: Arc<Batch>,
    indices: &[usize],
    out_dir: &Path,
    watch: &WatchArgs,
) -> Result<ExitStatus> {
    interrupt::stop_gracefully();
    let started = Instant::now();
    let mut index = BatchIndex::new(Arc::clone(&batch), IndexOptions::default());
    // What is in DIR: each root's section file and entry, and index.json.
    let mut sections: Vec<Option<(String, String)>> = Vec::new();
    let mut entries: Vec<Vec<u8>> = Vec::new();
    let mut listed = Vec::new();
    for (i, scan) in index.scan().into_iter().enumerate() {
        let root = &batch.roots()[i];
        let (entry, section) = root_output(indices[i], root, render_scanned(&batch, root, scan));
        report_entry(root, &entry);
        if let Some((file, section)) = &section {
            write_atomic(&out_dir.join(file), section.as_bytes())?;
        }
        entries.push(serde_json::to_vec(&entry)?);
        sections.push(section);
        listed.push(entry);
    }
    write_index(out_dir, &listed)?;
    eprintln!(
        "promptinclude: wrote {} ({} roots) in {}; watching for changes (Ctrl-C ends)",
        out_dir.display(),
        batch.roots().len(),
        millis(started.elapsed())
    );
    let debounce = Duration::from_millis(watch.debounce);
    watch_loop(&mut index, debounce, |index| {
        let started = Instant::now();
        let mut changed: Vec<&Path> = Vec::new();
        let mut index_changed = false;
        let mut listed = Vec::with_capacity(entries.len());
        for (i, scan) in index.scan().into_iter().enumerate() {
            let root = &batch.roots()[i];
            let (entry, section) =
                root_output(indices[i], root, render_scanned(&batch, root, scan));
            let json = serde_json::to_vec(&entry)?;
            let new_entry = json != entries[i];
            if section != sections[i] || new_entry {
                changed.push(root);
                report_entry(root, &entry);
            }
            if section != sections[i] {
                if let Some((file, text)) = &section {
                    write_atomic(&out_dir.join(file), text.as_bytes())?;
                }
                sections[i] = section;
            }
            if new_entry {
                index_changed = true;
                entries[i] = json;
            }
            listed.push(entry);
        }
        if changed.is_empty() {
            return Ok(());
        }
        if index_changed {
            write_index(out_dir, &listed)?;
        }
        eprintln!(
            "promptinclude: updated {}: {} of {} roots changed ({}) in {}",
            out_dir.display(),
            changed.len(),
            batch.roots().len(),
            root_list(&changed),
            millis(started.elapsed())
        );
        Ok(())
    })?;
    Ok(ExitStatus::Success)
}

/// One root's scan and rendered section with the configuration the host
/// would give it (project file, `A0_SET_`, flags), from one walk; or why
/// the root has none. Shared by `render ROOT` and the agent hooks.
pub fn scan_and_render(
    batch: &Batch,
    root: &Path,
    rev: Option<&str>,
) -> Result<(RootScan, String), RootError> {
    batch.render_root(root, |scanner, root| scanner.scan_at(root, rev))
}

/// [`scan_and_render`] on disk, reading each rule file the budget pass
/// reaches under the batch's reading policy until `cancelled()` says to stop
/// (then every further read is unreadable: the MCP server's cancellation).
#[cfg(feature = "mcp")]
pub fn scan_and_render_until(
    batch: &Batch,
    root: &Path,
    cancelled: impl Fn() -> bool,
) -> Result<(RootScan, String), RootError> {
    batch.render_root(root, |scanner, root| {
        let guard = scanner.guard(root);
        scanner.scan_with_reader(root, |candidate| {
            if cancelled() {
                promptinclude::read::ReadOutcome::Unreadable(
                    "the request was cancelled".to_string(),
                )
            } else {
                guard.read(candidate)
            }
        })
    })
}

/// `promptinclude render ROOT`: one root's section (or `--json`) on stdout.
fn render_one(batch: &Batch, json: bool, rev: Option<&str>) -> Result<ExitStatus> {
    let [root] = batch.roots() else {
        anyhow::bail!(
            "render prints one root's section; give one ROOT, or --out-dir DIR for several"
        );
    };
    let (scan, section) = match scan_and_render(batch, root, rev) {
        Ok(done) => done,
        Err(e) => return Ok(report_root_error(root, &e)),
    };
    let status = check_root(scan.is_dir, root);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if json {
        writeln!(
            out,
            "{{\"section\": {}, \"scan\": {}}}",
            json_string(&section),
            scan_line(&scan, root)
        )?;
    } else {
        out.write_all(section.as_bytes())?;
    }
    out.flush()?;
    Ok(status)
}

/// `promptinclude check-ignore`.
pub fn check_ignore(args: &CheckIgnoreArgs) -> Result<ExitStatus> {
    let (text, source) = match (&args.gitignore_file, &args.config) {
        (Some(file), _) => (
            read_text_file(file, "gitignore file")?,
            file.display().to_string(),
        ),
        (None, Some(file)) => {
            let config =
                Config::load_file(file, &Config::default()).map_err(promptinclude::Error::from)?;
            (config.gitignore, file.display().to_string())
        }
        (None, None) => (Config::default().gitignore, "<default>".to_string()),
    };
    let spec = IgnoreSpec::from_gitignore_text(&text).map_err(|e| {
        anyhow::anyhow!("{source}: {}", promptinclude::Error::from(e).full_message())
    })?;
    let mut paths: Vec<String> = args.paths.clone();
    if args.stdin {
        paths.extend(read_stdin_paths(args.nul)?);
    }
    if paths.is_empty() {
        anyhow::bail!("no paths given (pass PATH arguments or --stdin)");
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let end = if args.nul { '\0' } else { '\n' };
    let mut any_ignored = false;
    for path in &paths {
        let checked = Checked::new(spec.as_ref(), path);
        any_ignored |= checked.ignored;
        let line = if args.json {
            Some(checked.json())
        } else {
            checked.text(&source, args.non_matching)
        };
        if let Some(line) = line {
            write!(out, "{line}{end}")?;
        }
    }
    out.flush()?;
    Ok(if any_ignored {
        ExitStatus::Success
    } else {
        ExitStatus::Problems
    })
}
