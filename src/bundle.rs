//! `promptinclude bundle` and `promptinclude verify`: the roots scanned in
//! parallel, with progress and per-root errors on stderr; the bundle's
//! format, its all-or-nothing writing and its checks are the library's
//! (`promptinclude::artifact::bundle`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Result;
use promptinclude::artifact::bundle::{
    bundle_root_at, stale_line, verify_summary_line, write_bundle, write_root, Bundle, BundledRoot,
    Manifest, ManifestError, ManifestRoot, MANIFEST_SCHEMA,
};
use promptinclude::batch::{Batch, PlannedRoot};
use promptinclude::index::{BatchIndex, IndexOptions};
use promptinclude::{rootname, ArtifactError, Config, RootError, Scanner};

use super::args::{BundleArgs, VerifyArgs};
use super::commands::{check_root, check_watch, millis, report_root_error, root_list, watch_loop};
use super::exit::ExitStatus;
use super::interrupt;
use super::progress::Progress;
use super::settings::{init_threads, select_roots};

/// `promptinclude bundle`.
pub fn bundle(args: &BundleArgs) -> Result<ExitStatus> {
    let resolver = super::commands::resolver_for(&args.config, &args.roots)?;
    check_watch(&args.watch, &args.roots)?;
    let rev = args.roots.rev.as_deref();
    let (roots, indices) = select_roots(&args.roots)?;
    init_threads(args.roots.threads)?;
    let mut read_policy = args.read.policy(false);
    read_policy.refuse_special = true;
    let batch = Batch::plan_with_policy(&roots, &resolver, read_policy.clone())?;
    let manifest = |roots, errors| Manifest {
        schema: MANIFEST_SCHEMA,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        settings: resolver.clone(),
        read_policy: read_policy.clone(),
        rev: args.roots.rev.clone(),
        roots,
        errors,
    };
    if args.watch.watch {
        return bundle_watch(Arc::new(batch), &indices, args, manifest);
    }
    let mut status = ExitStatus::Success;
    write_bundle(&args.out, |temp| -> Result<Manifest> {
        let mut filling = Filling::new(roots.len(), true);
        let mut progress = Progress::new(roots.len());
        let mut failure = Ok(());
        batch.run(
            |_, planned, scanner| bundle_item(planned, scanner, rev),
            |i, planned, outcome| {
                match filling.add(temp, indices[i], planned, &outcome) {
                    Ok(root_status) => status = status.merge(root_status),
                    Err(e) => failure = Err(e),
                }
                progress.tick(i + 1);
                failure.is_ok()
            },
        );
        progress.finish();
        failure?;
        Ok(manifest(filling.entries, filling.errors))
    })?;
    Ok(status)
}

/// What scanning one root for a bundle gives: its artifacts' contents and
/// the configuration it was scanned with.
type Scanned = (BundledRoot, Config);

/// Scans one root for a bundle.
fn bundle_item(
    planned: &PlannedRoot,
    scanner: &Scanner,
    rev: Option<&str>,
) -> Result<Scanned, promptinclude::Error> {
    let bundled = bundle_root_at(scanner, &planned.root, rev)?;
    Ok((bundled, scanner.config().clone()))
}

/// A bundle's manifest entries and errors as its roots are written.
struct Filling {
    entries: Vec<ManifestRoot>,
    errors: Vec<ManifestError>,
    /// Whether a root's warning or error goes to stderr.
    report: bool,
}

impl Filling {
    fn new(roots: usize, report: bool) -> Filling {
        Filling {
            entries: Vec::with_capacity(roots),
            errors: Vec::new(),
            report,
        }
    }

    /// Writes root `index`'s artifacts into the bundle being filled at
    /// `temp` and records its entry (or its error, reported on stderr
    /// unless it was reported before);
    /// returns the status the root implies. A run and each `--watch`
    /// update share it.
    fn add(
        &mut self,
        temp: &Path,
        index: usize,
        planned: &PlannedRoot,
        outcome: &Result<Scanned, RootError>,
    ) -> Result<ExitStatus, ArtifactError> {
        let (bundled, config) = match outcome {
            Ok(found) => found,
            Err(error) => {
                let status = match self.report {
                    true => report_root_error(&planned.root, error),
                    false => ExitStatus::Error,
                };
                let abs_root = abspath(&planned.root);
                self.errors.push(ManifestError {
                    root: rootname::text_of(&planned.root),
                    root_hex: rootname::hex_of(&planned.root),
                    abs_root: rootname::text_of(&abs_root),
                    abs_root_hex: rootname::hex_of(&abs_root),
                    error: error.clone(),
                });
                return Ok(status);
            }
        };
        let status = match (self.report, bundled.is_dir) {
            (true, is_dir) => check_root(is_dir, &planned.root),
            (false, true) => ExitStatus::Success,
            (false, false) => ExitStatus::Problems,
        };
        let (section, scan) = write_root(temp, index, bundled)?;
        self.entries
            .push(bundled.entry(&planned.source, config, section, scan));
        Ok(status)
    }
}

/// One root of a bundle kept by `--watch`: its plan and what scanning it gave.
struct Item {
    planned: PlannedRoot,
    outcome: Result<Scanned, RootError>,
}

impl Item {
    /// Whether a bundle holds the same for `self` and `other`.
    fn same(&self, other: &Item) -> bool {
        self.planned.root == other.planned.root
            && self.planned.source == other.planned.source
            && self.outcome == other.outcome
    }
}

/// Every root of `batch` scanned for a bundle, in order.
fn bundle_items(batch: &Batch) -> Vec<Item> {
    let mut items = Vec::with_capacity(batch.roots().len());
    batch.run(
        |_, planned, scanner| bundle_item(planned, scanner, None),
        |_, planned, outcome| {
            items.push(Item {
                planned: planned.clone(),
                outcome,
            });
            true
        },
    );
    items
}

/// `bundle --watch`: writes the bundle, then writes it again whenever it
/// would change.
///
/// The bundle records the sha256 of the bytes of every rule file read,
/// which a live index does not keep: the index says when something under
/// the roots changed (and, when its scan finds every root unchanged, that
/// nothing did), and each update then builds the bundle's contents as a
/// run does, compares them with the bundle written last, and replaces it
/// only when they differ.
fn bundle_watch(
    batch: Arc<Batch>,
    indices: &[usize],
    args: &BundleArgs,
    manifest: impl Fn(Vec<ManifestRoot>, Vec<ManifestError>) -> Manifest,
) -> Result<ExitStatus> {
    interrupt::stop_gracefully();
    let started = Instant::now();
    let mut index = BatchIndex::new(Arc::clone(&batch), IndexOptions::default());
    // Watches every directory before the bundle reads anything: a change
    // made from here on is an event for the loop.
    let _ = index.scan();
    // `report`: for the roots whose warnings or errors are new.
    let write = |items: &[Item], report: &dyn Fn(usize) -> bool| -> Result<()> {
        write_bundle(&args.out, |temp| -> Result<Manifest> {
            let mut filling = Filling::new(items.len(), true);
            for (i, item) in items.iter().enumerate() {
                filling.report = report(i);
                filling.add(temp, indices[i], &item.planned, &item.outcome)?;
            }
            Ok(manifest(filling.entries, filling.errors))
        })
    };
    let mut items = bundle_items(&batch);
    write(&items, &|_| true)?;
    eprintln!(
        "promptinclude: wrote {} ({} roots) in {}; watching for changes (Ctrl-C ends)",
        args.out.display(),
        items.len(),
        millis(started.elapsed())
    );
    let roots = batch.roots().len() as u64;
    watch_loop(
        &mut index,
        Duration::from_millis(args.watch.debounce),
        |index| {
            let started = Instant::now();
            let unchanged = index.stats().unchanged;
            let _ = index.scan();
            if index.stats().unchanged - unchanged == roots {
                return Ok(());
            }
            let now = bundle_items(&batch);
            let changed: Vec<bool> = now.iter().zip(&items).map(|(n, o)| !n.same(o)).collect();
            if !changed.contains(&true) {
                return Ok(());
            }
            write(&now, &|i| changed[i])?;
            let names: Vec<&Path> = (now.iter().zip(&changed))
                .filter(|(_, &c)| c)
                .map(|(item, _)| item.planned.root.as_path())
                .collect();
            eprintln!(
                "promptinclude: updated {}: {} of {} roots changed ({}) in {}",
                args.out.display(),
                names.len(),
                now.len(),
                root_list(&names),
                millis(started.elapsed())
            );
            items = now;
            Ok(())
        },
    )?;
    Ok(ExitStatus::Success)
}

/// `os.path.abspath(root)` (the root as given when it has none).
fn abspath(root: &Path) -> PathBuf {
    let cwd = std::env::current_dir()
        .ok()
        .map(|c| c.into_os_string().into_encoded_bytes());
    promptinclude::discover::path::abspath_of(root, cwd.as_deref())
        .unwrap_or_else(|| root.to_path_buf())
}

/// `promptinclude verify`.
pub fn verify(args: &VerifyArgs) -> Result<ExitStatus> {
    init_threads(args.threads)?;
    let bundle = Bundle::open(&args.dir)?;
    let manifest = &bundle.manifest;
    let abs_roots = bundle.roots_to_verify()?;
    let batch =
        Batch::plan_with_policy(&abs_roots, &manifest.settings, manifest.read_policy.clone())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut stale = 0;
    let mut status = ExitStatus::Success;
    let mut write_result = Ok(());
    let mut progress = Progress::new(abs_roots.len());
    batch.run(
        |i, planned, scanner| Ok(bundle.stale_reasons(i, planned, scanner)),
        |i, planned, reasons| {
            progress.tick(i + 1);
            let reasons = match reasons {
                Ok(reasons) => reasons,
                Err(error) => {
                    status = status.merge(report_root_error(&planned.root, &error));
                    return true;
                }
            };
            if reasons.is_empty() {
                return true;
            }
            stale += 1;
            write_result = out.write_all(stale_line(&planned.root, &reasons).as_bytes());
            write_result.is_ok()
        },
    );
    progress.finish();
    write_result?;
    out.write_all(verify_summary_line(stale, manifest.roots.len()).as_bytes())?;
    out.flush()?;
    Ok(status.merge(if stale > 0 {
        ExitStatus::Problems
    } else {
        ExitStatus::Success
    }))
}
