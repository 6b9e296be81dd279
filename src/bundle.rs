//! `promptinclude bundle` and `promptinclude verify`: the roots scanned in
//! parallel, with progress and per-root errors on stderr; the bundle's
//! format, its all-or-nothing writing and its checks are the library's
//! (`promptinclude::artifact::bundle`).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use promptinclude::artifact::bundle::{
    bundle_root_at, stale_line, verify_summary_line, write_bundle, write_root, Bundle, Manifest,
    ManifestError, MANIFEST_SCHEMA,
};
use promptinclude::batch::Batch;
use promptinclude::rootname;

use super::args::{BundleArgs, VerifyArgs};
use super::commands::{check_root, report_root_error};
use super::exit::ExitStatus;
use super::progress::Progress;
use super::settings::{init_threads, select_roots};

/// `promptinclude bundle`.
pub fn bundle(args: &BundleArgs) -> Result<ExitStatus> {
    let resolver = super::commands::resolver_for(&args.config, &args.roots)?;
    let rev = args.roots.rev.as_deref();
    let (roots, indices) = select_roots(&args.roots)?;
    init_threads(args.roots.threads)?;
    let mut read_policy = args.read.policy(false);
    read_policy.refuse_special = true;
    let batch = Batch::plan_with_policy(&roots, &resolver, read_policy.clone())?;
    let mut status = ExitStatus::Success;
    write_bundle(&args.out, |temp| -> Result<Manifest> {
        let mut entries = Vec::with_capacity(roots.len());
        let mut errors = Vec::new();
        let mut progress = Progress::new(roots.len());
        let mut failure = Ok(());
        batch.run(
            |_, planned, scanner| {
                let bundled = bundle_root_at(scanner, &planned.root, rev)?;
                Ok((bundled, scanner.config().clone()))
            },
            |i, planned, outcome| {
                let (bundled, config) = match outcome {
                    Ok(found) => found,
                    Err(error) => {
                        status = status.merge(report_root_error(&planned.root, &error));
                        let abs_root = abspath(&planned.root);
                        errors.push(ManifestError {
                            root: rootname::text_of(&planned.root),
                            root_hex: rootname::hex_of(&planned.root),
                            abs_root: rootname::text_of(&abs_root),
                            abs_root_hex: rootname::hex_of(&abs_root),
                            error,
                        });
                        progress.tick(i + 1);
                        return true;
                    }
                };
                status = status.merge(check_root(bundled.is_dir, &planned.root));
                match write_root(temp, indices[i], &bundled) {
                    Ok((section, scan)) => {
                        entries.push(bundled.entry(&planned.source, &config, section, scan))
                    }
                    Err(e) => failure = Err(e),
                }
                progress.tick(i + 1);
                failure.is_ok()
            },
        );
        progress.finish();
        failure?;
        Ok(Manifest {
            schema: MANIFEST_SCHEMA,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            settings: resolver,
            read_policy,
            rev: args.roots.rev.clone(),
            roots: entries,
            errors,
        })
    })?;
    Ok(status)
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
