//! Bundles: precomputed prompt sections shipped as build artifacts, with a
//! manifest that lets anyone tell whether they still match the sources.
//!
//! For each root the bundle holds the rendered section, the scan result and,
//! in `manifest.json`, the configuration used and where it came from, the
//! sha256 of every rule file the budget pass read (of exactly the bytes it
//! read) and of the rendered section. [`verify_root`] re-resolves the
//! configuration, re-scans and compares; other tools (the pi extension)
//! read the manifest directly, so its shape is a contract: see
//! `docs/audit.md`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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
pub const MANIFEST_FILE: &str = "manifest.json";

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
    pub fn root_path(&self) -> Result<PathBuf, String> {
        rootname::path_of(&self.root, self.root_hex.as_deref())
    }

    /// The root made absolute, byte for byte.
    pub fn abs_root_path(&self) -> Result<PathBuf, String> {
        rootname::path_of(&self.abs_root, self.abs_root_hex.as_deref())
    }
}

impl ManifestError {
    /// The root as given, byte for byte.
    pub fn root_path(&self) -> Result<PathBuf, String> {
        rootname::path_of(&self.root, self.root_hex.as_deref())
    }

    /// The root made absolute, byte for byte.
    pub fn abs_root_path(&self) -> Result<PathBuf, String> {
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
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Scans `root`, hashing exactly the bytes the budget pass reads.
pub fn bundle_root(scanner: &Scanner, root: &Path) -> Result<BundledRoot, crate::Error> {
    bundle_root_at(scanner, root, None)
}

/// [`bundle_root`], or with `rev` the git revision `rev` of `root` (see
/// [`Scanner::scan_rev`]).
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
        Some(_) => {
            return Err(crate::Error::Git(
                "--rev needs promptinclude built with the `git` feature".to_string(),
            ))
        }
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
pub fn verify_root(
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
        Err(e) => return vec![format!("cannot be scanned any more: {e}")],
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
pub fn inside_path(name: &str) -> Option<&Path> {
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
