//! `promptinclude bundle` and `promptinclude verify`.
//!
//! A bundle is written whole or not at all: everything goes into a new
//! temporary directory next to the target (a random `.promptinclude-tmp-*`
//! name made by `mkdir`, so never a directory or link someone planted;
//! 0700 while it fills, then the mode of the bundle it replaces or the
//! default one), is flushed to disk, and only then
//! takes the target's place (on Linux by an atomic exchange with the
//! previous bundle, elsewhere by two renames). An interrupted run leaves at
//! most a `.promptinclude-tmp-*` directory beside the target, never a
//! half-written bundle. An existing directory is replaced only if it is
//! empty or holds a bundle (`manifest.json`), so a mistyped `--out` cannot
//! wipe unrelated files.

use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use promptinclude::batch::{Batch, PlannedRoot};
use promptinclude::bundle::{
    bundle_root_at, verify_root, Manifest, ManifestError, MANIFEST_FILE, MANIFEST_SCHEMA,
};
use promptinclude::{rootname, Scanner};

use super::args::{BundleArgs, VerifyArgs};
use super::atomic::{existing_mode, parent_dir, TEMP_PREFIX};
use super::commands::{check_root, report_root_error, section_file_name};
use super::exit::ExitStatus;
use super::interrupt;
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
    write_bundle(&args.out, |temp| {
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
                let section = format!(
                    "roots/{}",
                    section_file_name(indices[i], Path::new(&bundled.abs_root))
                );
                let scan = format!("{}.json", section.trim_end_matches(".md"));
                failure = write_synced(&temp.join(&section), bundled.section.as_bytes())
                    .and_then(|()| write_synced(&temp.join(&scan), bundled.scan_line.as_bytes()));
                entries.push(bundled.entry(&planned.source, &config, section, scan));
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

/// Writes a bundle at `out` whole or not at all: `fill` writes the
/// artifacts into the temporary directory it is given (its `roots/` exists)
/// and returns the manifest; then the manifest is written, everything is
/// flushed to disk and the directory takes `out`'s place.
pub fn write_bundle(out: &Path, fill: impl FnOnce(&Path) -> Result<Manifest>) -> Result<()> {
    let parent = split_target(out)?;
    ensure_replaceable(out)?;
    // A new directory with a random name (see `atomic`), removed on any
    // error and on an interrupt (see `interrupt`). It stays 0700 while
    // it fills, so nobody can plant a link where `write_synced` will create
    // a file; before it is published it gets the mode of the bundle it
    // replaces, or the default one.
    let mode = existing_mode(out).with_context(|| format!("cannot inspect {}", out.display()))?;
    let temp = interrupt::create_dir(parent, 0o700).with_context(|| {
        format!(
            "cannot create a temporary directory in {}",
            parent.display()
        )
    })?;
    let mode = match mode {
        Some(mode) => mode,
        None => default_dir_mode(temp.path())
            .with_context(|| format!("cannot create a directory in {}", temp.path().display()))?,
    };
    let roots_dir = temp.path().join("roots");
    fs::create_dir_all(&roots_dir)
        .with_context(|| format!("cannot create {}", roots_dir.display()))?;
    let manifest = fill(temp.path())?;
    let mut json = serde_json::to_vec_pretty(&manifest)?;
    json.push(b'\n');
    write_synced(&temp.path().join(MANIFEST_FILE), &json)?;
    sync_dir(&roots_dir)?;
    fs::set_permissions(temp.path(), fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", temp.path().display()))?;
    sync_dir(temp.path())?;
    temp.commit(|temp| replace_dir(temp, out))?;
    sync_dir(parent)
}

/// The mode a new directory gets here (0777 less the umask), read off a
/// probe made and removed inside `private`, a directory only we can enter
/// (reading the umask would mean setting it, for every thread).
fn default_dir_mode(private: &Path) -> std::io::Result<u32> {
    let probe = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .permissions(fs::Permissions::from_mode(0o777))
        .tempdir_in(private)?;
    let mode = fs::metadata(probe.path())?.permissions().mode() & 0o777;
    probe.close()?;
    Ok(mode)
}

/// Reads and checks a bundle's manifest.
pub fn read_manifest(manifest_path: &Path) -> Result<Manifest> {
    let bytes = fs::read(manifest_path)
        .with_context(|| format!("cannot read {}", manifest_path.display()))?;
    let not_manifest = || {
        format!(
            "{}: not a promptinclude bundle manifest",
            manifest_path.display()
        )
    };
    let value: serde_json::Value = serde_json::from_slice(&bytes).with_context(not_manifest)?;
    if value.get("schema").and_then(serde_json::Value::as_u64) != Some(MANIFEST_SCHEMA.into()) {
        bail!(
            "{}: manifest schema {} is not supported (this tool reads {MANIFEST_SCHEMA})",
            manifest_path.display(),
            value.get("schema").unwrap_or(&serde_json::Value::Null)
        );
    }
    serde_json::from_value(value).with_context(not_manifest)
}

/// `os.path.abspath(root)` (the root as given when it has none).
fn abspath(root: &Path) -> PathBuf {
    let cwd = std::env::current_dir()
        .ok()
        .map(|c| c.into_os_string().into_encoded_bytes());
    promptinclude::discover::path::abspath_of(root, cwd.as_deref())
        .unwrap_or_else(|| root.to_path_buf())
}

/// The target's parent directory; refuses `.`, `..` and `/`, which have no name.
fn split_target(out: &Path) -> Result<&Path> {
    if out.file_name().is_none() {
        bail!(
            "--out {}: give the bundle directory a name (not `.`, `..` or `/`)",
            out.display()
        );
    }
    Ok(parent_dir(out))
}

/// Fails unless `out` is missing, an empty directory, or a bundle.
fn ensure_replaceable(out: &Path) -> Result<()> {
    let meta = match fs::symlink_metadata(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot inspect {}", out.display())),
        Ok(meta) => meta,
    };
    if !meta.is_dir() {
        bail!("--out {}: exists and is not a directory", out.display());
    }
    let empty = fs::read_dir(out)
        .with_context(|| format!("cannot list {}", out.display()))?
        .next()
        .is_none();
    if !empty && !out.join(MANIFEST_FILE).is_file() {
        bail!(
            "--out {}: exists and is not a bundle (no {MANIFEST_FILE}); refusing to replace it",
            out.display()
        );
    }
    Ok(())
}

/// Writes a new file and flushes it to disk.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file =
        fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", path.display()))
}

/// Flushes a directory's entries to disk.
fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync {}", dir.display()))
}

/// Puts the complete directory `new` at `target`; a previous bundle there
/// is removed only after the new one is in place.
fn replace_dir(new: &Path, target: &Path) -> Result<()> {
    let context = || format!("cannot move the bundle into {}", target.display());
    if fs::symlink_metadata(target).is_err() {
        return fs::rename(new, target).with_context(context);
    }
    if exchange(new, target)? {
        // `new` now holds the previous bundle.
        return fs::remove_dir_all(new)
            .with_context(|| format!("cannot remove the old bundle {}", new.display()));
    }
    // The old bundle goes aside onto a new empty directory with a random
    // name (a rename may replace an empty directory), never onto a name
    // someone could have planted.
    let old = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempdir_in(parent_dir(target))
        .with_context(context)?
        .keep();
    if let Err(e) = fs::rename(target, &old) {
        let _ = fs::remove_dir(&old);
        return Err(e).with_context(context);
    }
    if let Err(e) = fs::rename(new, target) {
        let _ = fs::rename(&old, target);
        return Err(e).with_context(context);
    }
    fs::remove_dir_all(&old)
        .with_context(|| format!("cannot remove the old bundle {}", old.display()))
}

/// Atomically swaps two paths (Linux `renameat2(RENAME_EXCHANGE)`); `false`
/// when the system or file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes())?;
    let b = CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both arguments are valid NUL-terminated paths that outlive the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_renameat2,
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::ENOTSUP) => Ok(false),
        _ => Err(err).context("cannot exchange the new bundle with the old one"),
    }
}

/// Atomically swaps two paths; not available here.
#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> Result<bool> {
    Ok(false)
}

/// `promptinclude verify`.
pub fn verify(args: &VerifyArgs) -> Result<ExitStatus> {
    init_threads(args.threads)?;
    let (dir, manifest_path) = locate_bundle(&args.dir);
    let manifest = read_manifest(&manifest_path)?;
    let abs_roots = roots_to_verify(&manifest, &manifest_path)?;
    let batch =
        Batch::plan_with_policy(&abs_roots, &manifest.settings, manifest.read_policy.clone())?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut stale = 0;
    let mut status = ExitStatus::Success;
    let mut write_result = Ok(());
    let mut progress = Progress::new(abs_roots.len());
    batch.run(
        |i, planned, scanner| Ok(stale_reasons(&manifest, &dir, i, planned, scanner)),
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
            write_result = writeln!(
                out,
                "{}: stale: {}",
                planned.root.display(),
                reasons.join("; ")
            );
            write_result.is_ok()
        },
    );
    progress.finish();
    write_result?;
    writeln!(
        out,
        "verify: {stale} of {} roots stale",
        manifest.roots.len()
    )?;
    out.flush()?;
    Ok(status.merge(if stale > 0 {
        ExitStatus::Problems
    } else {
        ExitStatus::Success
    }))
}

/// The bundle directory and its manifest's path, from `path`: a bundle
/// directory or its manifest file.
fn locate_bundle(path: &Path) -> (PathBuf, PathBuf) {
    if path.is_dir() {
        return (path.to_path_buf(), path.join(MANIFEST_FILE));
    }
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    (dir, path.to_path_buf())
}

/// The absolute roots to scan again, byte for byte: the bundled ones,
/// then those that failed when bundled (still failing is an error,
/// scanning now makes them stale).
fn roots_to_verify(manifest: &Manifest, manifest_path: &Path) -> Result<Vec<PathBuf>> {
    manifest
        .roots
        .iter()
        .map(|r| r.abs_root_path())
        .chain(manifest.errors.iter().map(|e| e.abs_root_path()))
        .map(|root| root.map_err(|e| anyhow::anyhow!("{}: {e}", manifest_path.display())))
        .collect()
}

/// Why root `i` of [`roots_to_verify`] is stale (nothing if it is not):
/// a bundled root is compared with its artifacts in `dir`, a root that
/// failed when bundled is stale because it scans now.
fn stale_reasons(
    manifest: &Manifest,
    dir: &Path,
    i: usize,
    planned: &PlannedRoot,
    scanner: &Scanner,
) -> Vec<String> {
    match manifest.roots.get(i) {
        Some(entry) => verify_root(
            entry,
            &planned.source,
            scanner,
            dir,
            manifest.rev.as_deref(),
        ),
        None => vec![format!(
            "not in the bundle (it failed when bundled: {}), and scans now",
            manifest.errors[i - manifest.roots.len()].error
        )],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temporary_is_private_while_it_fills_and_goes_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bundle");
        let err = write_bundle(&out, |temp| {
            let name = temp.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with(TEMP_PREFIX), "{name}");
            assert_eq!(fs::metadata(temp)?.permissions().mode() & 0o777, 0o700);
            assert!(temp.join("roots").is_dir());
            bail!("stop")
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "stop");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_new_directory_gets_the_mode_create_dir_gives() {
        let dir = tempfile::tempdir().unwrap();
        let reference = dir.path().join("reference");
        fs::create_dir(&reference).unwrap();
        let expected = fs::metadata(&reference).unwrap().permissions().mode() & 0o777;
        assert_eq!(default_dir_mode(dir.path()).unwrap(), expected);
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "the probe is gone"
        );
    }
}
