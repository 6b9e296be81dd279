//! Bundles: precomputed prompt sections shipped as build artifacts, with a
//! manifest that lets anyone tell whether they still match the sources.
//!
//! For each root the bundle holds the rendered section, the scan result and,
//! in `manifest.json`, the configuration used and where it came from, the
//! sha256 of every rule file the budget pass read (of exactly the bytes it
//! read) and of the rendered section. `verify_root` re-resolves the
//! configuration, re-scans and compares; other tools (the pi extension)
//! read the manifest directly, so its shape is a contract: see
//! `docs/audit.md`.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::index::section_file_name;
use super::temp::{self, TEMP_PREFIX};
use super::{existing_mode, invalid, parent_dir, ArtifactError, Context, Result};
use crate::batch::PlannedRoot;
use crate::config::Config;
use crate::model::{tokens_included, FileStatus};
use crate::project::{ConfigSource, Resolver};
use crate::read::{outcome_of, ReadOutcome};
use crate::render::{render, scan_line};
use crate::rootname;
use crate::scan::Scanner;
use crate::trust::ReadPolicy;

/// The manifest's `schema` number.
pub const MANIFEST_SCHEMA: u32 = 1;

/// The file name of the manifest inside a bundle directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

/// `DIR/manifest.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_SCHEMA`].
    pub schema: u32,
    /// The version of the tool that wrote the bundle.
    pub tool_version: String,
    /// How each root's configuration was decided (`verify` decides again the same way).
    pub settings: Resolver,
    /// How rule files were read (absent: [`ReadPolicy::bundle`]); `verify`
    /// reads them the same way.
    #[serde(
        default = "ReadPolicy::bundle",
        skip_serializing_if = "ReadPolicy::is_bundle_default"
    )]
    pub read_policy: ReadPolicy,
    /// The git revision scanned in each root (`bundle --rev`); `verify`
    /// resolves it again, so a branch that moved makes the bundle stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<String>,
    /// One entry per root, in input order.
    pub roots: Vec<ManifestRoot>,
    /// Roots that could not be bundled (a broken project configuration, or
    /// a configuration the reference raises on), in input order; they have
    /// no artifacts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<ManifestError>,
}

/// A root left out of a bundle, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestError {
    /// The root as given.
    pub root: String,
    /// Its bytes, when they are not UTF-8 (see [`crate::rootname`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_hex: Option<String>,
    /// The root made absolute.
    pub abs_root: String,
    /// Its bytes, when they are not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abs_root_hex: Option<String>,
    /// Why it has no artifacts.
    pub error: crate::RootError,
}

/// One root of a bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestRoot {
    /// The root as given.
    pub root: String,
    /// Its bytes, when they are not UTF-8 (see [`crate::rootname`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_hex: Option<String>,
    /// The root made absolute.
    pub abs_root: String,
    /// Its bytes, when they are not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abs_root_hex: Option<String>,
    /// Whether the root is a directory (written only when it is not: its
    /// artifacts are those of an empty root, and the run exits 1).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub is_dir: bool,
    /// `"default"`, or the path of the configuration file that applied.
    pub config_source: ConfigSource,
    /// The configuration used.
    pub config: Config,
    /// The rendered section file, relative to the bundle directory.
    pub section: String,
    /// sha256 of the section file's bytes (lowercase hex).
    pub section_sha256: String,
    /// The scan result file (one JSON line, as `promptinclude scan` prints), relative to the bundle directory.
    pub scan: String,
    /// sha256 of the scan result file's bytes (absent in bundles written
    /// before it was recorded; `verify` then compares the file itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scan_sha256: Option<String>,
    /// Every discovered rule file, in the scan's order.
    pub files: Vec<ManifestFile>,
    /// Sums.
    pub totals: ManifestTotals,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl ManifestRoot {
    /// The root as given, byte for byte.
    pub fn root_path(&self) -> Result<PathBuf, rootname::BadHex> {
        rootname::path_of(&self.root, self.root_hex.as_deref())
    }

    /// The root made absolute, byte for byte.
    fn abs_root_path(&self) -> Result<PathBuf, rootname::BadHex> {
        rootname::path_of(&self.abs_root, self.abs_root_hex.as_deref())
    }
}

impl ManifestError {
    /// The root as given, byte for byte.
    pub fn root_path(&self) -> Result<PathBuf, rootname::BadHex> {
        rootname::path_of(&self.root, self.root_hex.as_deref())
    }

    /// The root made absolute, byte for byte.
    fn abs_root_path(&self) -> Result<PathBuf, rootname::BadHex> {
        rootname::path_of(&self.abs_root, self.abs_root_hex.as_deref())
    }
}

/// One rule file in a bundle.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Full path.
    pub path: String,
    /// sha256 of the bytes the budget pass read; `None` if it was not read (or could not be).
    pub sha256: Option<String>,
    /// What became of it.
    pub status: FileStatus,
    /// Tokens included in the section (the scan's `token_count`; 0 when not included).
    pub token_count: i64,
}

/// Sums over one bundled root.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestTotals {
    /// Rule files discovered.
    pub rule_files: usize,
    /// Entries in the scan's `files`.
    pub files: usize,
    /// The scan's `skipped_count`.
    pub skipped_count: i64,
    /// Tokens included.
    pub tokens_included: i64,
    /// Tokens the budget used (paths and included text).
    pub budget_used: i64,
}

/// One root scanned for a bundle: the artifacts' contents and the facts
/// the manifest records (everything but the artifact file names).
#[derive(Clone, Debug, PartialEq)]
pub struct BundledRoot {
    /// The root as given.
    pub root: PathBuf,
    /// The root made absolute.
    pub abs_root: PathBuf,
    /// Whether the root is a directory.
    pub is_dir: bool,
    /// The rendered section.
    pub section: String,
    /// The scan result, one JSON line with its newline.
    pub scan_line: String,
    /// Per rule file.
    pub files: Vec<ManifestFile>,
    /// Sums.
    pub totals: ManifestTotals,
}

impl BundledRoot {
    /// The manifest entry, given where its artifacts are written.
    pub fn entry(
        &self,
        source: &ConfigSource,
        config: &Config,
        section: String,
        scan: String,
    ) -> ManifestRoot {
        ManifestRoot {
            root: rootname::text_of(&self.root),
            root_hex: rootname::hex_of(&self.root),
            abs_root: rootname::text_of(&self.abs_root),
            abs_root_hex: rootname::hex_of(&self.abs_root),
            is_dir: self.is_dir,
            config_source: source.clone(),
            config: config.clone(),
            section,
            section_sha256: sha256_hex(self.section.as_bytes()),
            scan,
            scan_sha256: Some(sha256_hex(self.scan_line.as_bytes())),
            files: self.files.clone(),
            totals: self.totals.clone(),
        }
    }
}

/// Lowercase hex sha256 of `bytes`.
fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Scans `root`, hashing exactly the bytes the budget pass reads; with
/// `rev`, the git revision `rev` of `root` (see [`Scanner::scan_rev`]).
pub fn bundle_root_at(
    scanner: &Scanner,
    root: &Path,
    rev: Option<&str>,
) -> Result<BundledRoot, crate::Error> {
    bundle_root_named(scanner, root, root, rev)
}

/// [`bundle_root_at`] of `path`, with the root named `root` in its
/// artifacts (`verify` scans the absolute path of a root given relative).
fn bundle_root_named(
    scanner: &Scanner,
    path: &Path,
    root: &Path,
    rev: Option<&str>,
) -> Result<BundledRoot, crate::Error> {
    let mut digests: HashMap<Vec<u8>, String> = HashMap::new();
    let mut digest = |candidate: &crate::discover::Candidate, bytes: std::io::Result<Vec<u8>>| {
        if let Ok(bytes) = &bytes {
            digests.insert(candidate.as_bytes().to_vec(), sha256_hex(bytes));
        }
        outcome_of(bytes)
    };
    let mut scan = match rev {
        None => {
            let guard = scanner.guard(path);
            scanner.scan_with_reader(path, |c| match guard.read_bytes(c) {
                Ok(read) => digest(c, read),
                Err(withheld) => ReadOutcome::Withheld(withheld),
            })?
        }
        #[cfg(feature = "git")]
        Some(rev) => scanner.scan_rev_with_reader(path, rev, digest)?,
        #[cfg(not(feature = "git"))]
        Some(_) => return Err(crate::scan::no_git()),
    };
    if path != root {
        scan.allocation.result.root = rootname::text_of(root);
    }
    let result = scan.result();
    let mut totals = ManifestTotals {
        rule_files: scan.candidates.len(),
        files: result.files.len(),
        skipped_count: result.skipped_count,
        budget_used: scan.allocation.budget_used,
        ..ManifestTotals::default()
    };
    let files = scan
        .candidates
        .iter()
        .zip(&scan.allocation.dispositions)
        .map(|(candidate, disposition)| {
            let status = FileStatus::of(disposition, result);
            let token_count = tokens_included(disposition, result);
            totals.tokens_included += token_count;
            ManifestFile {
                path: candidate.display(),
                sha256: digests.remove(candidate.as_bytes()),
                status,
                token_count,
            }
        })
        .collect();
    Ok(BundledRoot {
        root: root.to_path_buf(),
        abs_root: scan.abs_root.clone(),
        is_dir: scan.is_dir,
        section: render(result, &scanner.config().name_pattern),
        scan_line: format!("{}\n", scan_line(&scan, root)),
        files,
        totals,
    })
}

/// Why a root's artifacts no longer match its sources; empty when they do.
///
/// A root is stale when a bundle written now would hold other artifacts
/// (section or scan file), or when the bundle's own files no longer match
/// their digests. Changes that leave both artifacts as they are (a blank
/// file that gains a CRLF, a project configuration equal to the defaults)
/// do not make it stale. The reasons say what changed: the configuration,
/// then the rule files, then which artifact differs.
///
/// `source` and `scanner` are the configuration as decided now; `dir` is the
/// bundle directory.
fn verify_root(
    entry: &ManifestRoot,
    source: &ConfigSource,
    scanner: &Scanner,
    dir: &Path,
    rev: Option<&str>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    let section_file = check_artifact(dir, "section", &entry.section, Some(&entry.section_sha256));
    let scan_file = check_artifact(dir, "scan", &entry.scan, entry.scan_sha256.as_deref());
    let (scan_sha256, section_sha256) = match (section_file, scan_file) {
        (Ok(_), Ok(scan)) => (
            entry.scan_sha256.clone().unwrap_or(scan),
            &entry.section_sha256,
        ),
        (section, scan) => {
            reasons.extend(section.err());
            reasons.extend(scan.err());
            return reasons;
        }
    };
    let (abs_root, root) = match (entry.abs_root_path(), entry.root_path()) {
        (Ok(abs_root), Ok(root)) => (abs_root, root),
        (Err(e), _) | (_, Err(e)) => return vec![format!("the manifest names no root: {e}")],
    };
    let now = match bundle_root_named(scanner, &abs_root, &root, rev) {
        Ok(now) => now,
        Err(e) => return vec![format!("cannot be scanned any more: {}", e.full_message())],
    };
    let section_changed = sha256_hex(now.section.as_bytes()) != *section_sha256;
    let scan_changed = sha256_hex(now.scan_line.as_bytes()) != scan_sha256;
    if !section_changed && !scan_changed {
        return reasons;
    }
    if *source != entry.config_source {
        reasons.push(format!(
            "configuration source changed: {} -> {source}",
            entry.config_source
        ));
    }
    if *scanner.config() != entry.config {
        reasons.push(format!("configuration changed ({source})"));
    }
    reasons.extend(file_changes(&entry.files, &now.files));
    if section_changed {
        reasons.push("rendered section changed".to_string());
    }
    if scan_changed {
        reasons.push("scan result changed".to_string());
    }
    reasons
}

/// `name` as a path inside a directory (an artifact named by a manifest or
/// an `index.json`): `None` when it is empty, absolute, or has a component
/// (`..`, `.`) that could lead out of the directory.
pub(crate) fn inside_path(name: &str) -> Option<&Path> {
    let relative = Path::new(name);
    let inside = !name.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
    inside.then_some(relative)
}

/// Reads the artifact `name` (a `what` file) of the bundle in `dir` and
/// checks it against `sha256` (when the manifest has one); its digest, or
/// why it fails.
fn check_artifact(
    dir: &Path,
    what: &str,
    name: &str,
    sha256: Option<&str>,
) -> Result<String, String> {
    let Some(relative) = inside_path(name) else {
        return Err(format!(
            "the manifest's {what} file name {name:?} leaves the bundle"
        ));
    };
    match std::fs::read(dir.join(relative)) {
        Ok(bytes) => {
            let digest = sha256_hex(&bytes);
            match sha256 {
                Some(want) if want != digest => {
                    Err(format!("the bundle's {what} file {name} was modified"))
                }
                _ => Ok(digest),
            }
        }
        Err(e) => Err(format!(
            "the bundle's {what} file {name} cannot be read ({e})"
        )),
    }
}

/// What became of the rule files between a bundle's `before` and `now`.
fn file_changes(before: &[ManifestFile], now: &[ManifestFile]) -> Vec<String> {
    let mut reasons = Vec::new();
    let before: BTreeMap<&str, &ManifestFile> =
        before.iter().map(|f| (f.path.as_str(), f)).collect();
    let after: BTreeMap<&str, &ManifestFile> = now.iter().map(|f| (f.path.as_str(), f)).collect();
    for (path, old) in &before {
        match after.get(path) {
            None => reasons.push(format!("rule file removed: {path}")),
            Some(new)
                if old.sha256.is_some() && new.sha256.is_some() && new.sha256 != old.sha256 =>
            {
                reasons.push(format!("rule file changed: {path}"))
            }
            Some(new) if new.status != old.status => reasons.push(format!(
                "rule file {path}: status {} -> {}",
                old.status.as_str(),
                new.status.as_str()
            )),
            Some(_) => {}
        }
    }
    for path in after.keys().filter(|p| !before.contains_key(*p)) {
        reasons.push(format!("rule file added: {path}"));
    }
    reasons
}

/// A bundle on disk, to verify: its directory and its manifest.
#[derive(Debug)]
pub struct Bundle {
    /// The bundle's directory (its artifacts' names are relative to it).
    pub dir: PathBuf,
    /// Where the manifest was read from.
    pub manifest_path: PathBuf,
    /// The manifest.
    pub manifest: Manifest,
}

impl Bundle {
    /// The bundle at `path`: a bundle directory or its manifest file.
    pub fn open(path: &Path) -> Result<Bundle, ArtifactError> {
        let (dir, manifest_path) = if path.is_dir() {
            (path.to_path_buf(), path.join(MANIFEST_FILE))
        } else {
            (parent_dir(path).to_path_buf(), path.to_path_buf())
        };
        let manifest = read_manifest(&manifest_path)?;
        Ok(Bundle {
            dir,
            manifest_path,
            manifest,
        })
    }

    /// The absolute roots to scan again, byte for byte: the bundled ones,
    /// then those that failed when bundled (still failing is an error,
    /// scanning now makes them stale).
    pub fn roots_to_verify(&self) -> Result<Vec<PathBuf>, ArtifactError> {
        let manifest = &self.manifest;
        manifest
            .roots
            .iter()
            .map(|r| r.abs_root_path())
            .chain(manifest.errors.iter().map(|e| e.abs_root_path()))
            .map(|root| {
                root.map_err(|e| {
                    ArtifactError::Invalid(format!("{}: {e}", self.manifest_path.display()))
                })
            })
            .collect()
    }

    /// Why root `i` of [`Bundle::roots_to_verify`] is stale (nothing if it
    /// is not): a bundled root is compared with its artifacts, a root that
    /// failed when bundled is stale because it scans now.
    pub fn stale_reasons(&self, i: usize, planned: &PlannedRoot, scanner: &Scanner) -> Vec<String> {
        let manifest = &self.manifest;
        match manifest.roots.get(i) {
            Some(entry) => verify_root(
                entry,
                &planned.source,
                scanner,
                &self.dir,
                manifest.rev.as_deref(),
            ),
            None => vec![format!(
                "not in the bundle (it failed when bundled: {}), and scans now",
                manifest.errors[i - manifest.roots.len()].error
            )],
        }
    }
}

/// `verify`'s line for a stale root.
pub fn stale_line(root: &Path, reasons: &[String]) -> String {
    format!("{}: stale: {}\n", root.display(), reasons.join("; "))
}

/// `verify`'s last line.
pub fn verify_summary_line(stale: usize, roots: usize) -> String {
    format!("verify: {stale} of {roots} roots stale\n")
}

/// Writes root `index`'s two artifacts into the bundle being filled at
/// `dir` (`roots/NNNN-name.md` and `.json`, flushed to disk); returns their
/// names, for its manifest entry.
pub fn write_root(
    dir: &Path,
    index: usize,
    bundled: &BundledRoot,
) -> Result<(String, String), ArtifactError> {
    let section = format!(
        "roots/{}",
        section_file_name(index, Path::new(&bundled.abs_root))
    );
    let scan = format!("{}.json", section.trim_end_matches(".md"));
    write_synced(&dir.join(&section), bundled.section.as_bytes())?;
    write_synced(&dir.join(&scan), bundled.scan_line.as_bytes())?;
    Ok((section, scan))
}

/// Writes a bundle at `out` whole or not at all: `fill` writes the
/// artifacts into the temporary directory it is given (its `roots/` exists)
/// and returns the manifest; then the manifest is written, everything is
/// flushed to disk and the directory takes `out`'s place.
pub fn write_bundle<E: From<ArtifactError>>(
    out: &Path,
    fill: impl FnOnce(&Path) -> Result<Manifest, E>,
) -> Result<(), E> {
    let parent = split_target(out)?;
    ensure_replaceable(out)?;
    // A new directory with a random name (see [`super::temp`]), removed on any
    // error and on an interrupt (see [`super::temp`]). It stays 0700 while
    // it fills, so nobody can plant a link where `write_synced` will create
    // a file; before it is published it gets the mode of the bundle it
    // replaces, or the default one.
    let mode = existing_mode(out).with_context(|| format!("cannot inspect {}", out.display()))?;
    let temp = temp::create_dir(parent, 0o700).with_context(|| {
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
    let mut json = serde_json::to_vec_pretty(&manifest)
        .with_context(|| format!("cannot write {MANIFEST_FILE}"))?;
    json.push(b'\n');
    write_synced(&temp.path().join(MANIFEST_FILE), &json)?;
    sync_dir(&roots_dir)?;
    fs::set_permissions(temp.path(), fs::Permissions::from_mode(mode))
        .with_context(|| format!("cannot set the mode of {}", temp.path().display()))?;
    sync_dir(temp.path())?;
    temp.commit(|temp| replace_dir(temp, out))?;
    Ok(sync_dir(parent)?)
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
pub(crate) fn read_manifest(manifest_path: &Path) -> Result<Manifest, ArtifactError> {
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
        invalid!(
            "{}: manifest schema {} is not supported (this tool reads {MANIFEST_SCHEMA})",
            manifest_path.display(),
            value.get("schema").unwrap_or(&serde_json::Value::Null)
        );
    }
    serde_json::from_value(value).with_context(not_manifest)
}

/// The target's parent directory; refuses `.`, `..` and `/`, which have no name.
fn split_target(out: &Path) -> Result<&Path> {
    if out.file_name().is_none() {
        invalid!(
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
        invalid!("--out {}: exists and is not a directory", out.display());
    }
    let empty = fs::read_dir(out)
        .with_context(|| format!("cannot list {}", out.display()))?
        .next()
        .is_none();
    if !empty && !out.join(MANIFEST_FILE).is_file() {
        invalid!(
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
    let (Ok(a), Ok(b)) = (
        CString::new(a.as_os_str().as_bytes()),
        CString::new(b.as_os_str().as_bytes()),
    ) else {
        // A path with a NUL byte cannot be named to the system at all.
        return Ok(false);
    };
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
        _ => Err(err).with_context(|| "cannot exchange the new bundle with the old one".into()),
    }
}

/// Atomically swaps two paths; not available here.
#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> Result<bool> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_abc() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}

#[cfg(test)]
mod write_tests {
    use super::*;

    #[test]
    fn the_temporary_is_private_while_it_fills_and_goes_on_error() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("bundle");
        let err = write_bundle(&out, |temp| {
            let name = temp.file_name().unwrap().to_string_lossy().into_owned();
            assert!(name.starts_with(TEMP_PREFIX), "{name}");
            assert_eq!(
                fs::metadata(temp).unwrap().permissions().mode() & 0o777,
                0o700
            );
            assert!(temp.join("roots").is_dir());
            Err(ArtifactError::Invalid("stop".into()))
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
