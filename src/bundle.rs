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
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::budget::{tokens_included, FileStatus};
use crate::config::Config;
use crate::project::{ConfigSource, Resolver};
use crate::read::{outcome_of, ReadOutcome};
use crate::render::{render, to_json_line};
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
    /// The root made absolute.
    pub abs_root: String,
    /// Why it has no artifacts.
    pub error: crate::RootError,
}

/// One root of a bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ManifestRoot {
    /// The root as given.
    pub root: String,
    /// The root made absolute.
    pub abs_root: String,
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
    /// Every discovered rule file, in the scan's order.
    pub files: Vec<ManifestFile>,
    /// Sums.
    pub totals: ManifestTotals,
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
    pub root: String,
    /// The root made absolute.
    pub abs_root: String,
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
            root: self.root.clone(),
            abs_root: self.abs_root.clone(),
            config_source: source.clone(),
            config: config.clone(),
            section,
            section_sha256: sha256_hex(self.section.as_bytes()),
            scan,
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
    let mut digests: HashMap<Vec<u8>, String> = HashMap::new();
    let mut digest = |candidate: &crate::discover::Candidate, bytes: std::io::Result<Vec<u8>>| {
        if let Ok(bytes) = &bytes {
            digests.insert(candidate.as_bytes().to_vec(), sha256_hex(bytes));
        }
        outcome_of(bytes)
    };
    let scan = match rev {
        None => {
            let guard = scanner.guard(root);
            scanner.scan_with_reader(root, |c| match guard.read_bytes(c) {
                Ok(read) => digest(c, read),
                Err(withheld) => ReadOutcome::Withheld(withheld),
            })?
        }
        #[cfg(feature = "git")]
        Some(rev) => scanner.scan_rev_with_reader(root, rev, digest)?,
        #[cfg(not(feature = "git"))]
        Some(_) => {
            return Err(crate::Error::Git(
                "--rev needs promptinclude built with the `git` feature".to_string(),
            ))
        }
    };
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
        root: result.root.clone(),
        abs_root: scan.abs_root.to_string_lossy().into_owned(),
        is_dir: scan.is_dir,
        section: render(result, &scanner.config().name_pattern),
        scan_line: format!("{}\n", to_json_line(result)),
        files,
        totals,
    })
}

/// Why a root's artifacts no longer match its sources; empty when they do.
///
/// `source` and `scanner` are the configuration as decided now; `dir` is the
/// bundle directory (its section file is checked against its digest too).
pub fn verify_root(
    entry: &ManifestRoot,
    source: &ConfigSource,
    scanner: &Scanner,
    dir: &Path,
    rev: Option<&str>,
) -> Vec<String> {
    let mut reasons = Vec::new();
    match std::fs::read(dir.join(&entry.section)) {
        Ok(bytes) if sha256_hex(&bytes) == entry.section_sha256 => {}
        Ok(_) => reasons.push(format!(
            "the bundle's section file {} was modified",
            entry.section
        )),
        Err(e) => reasons.push(format!(
            "the bundle's section file {} cannot be read ({e})",
            entry.section
        )),
    }
    if *source != entry.config_source {
        reasons.push(format!(
            "configuration source changed: {} -> {source}",
            entry.config_source
        ));
    } else if *scanner.config() != entry.config {
        reasons.push(format!("configuration changed ({source})"));
    }
    if !reasons.is_empty() {
        return reasons;
    }
    let now = match bundle_root_at(scanner, Path::new(&entry.abs_root), rev) {
        Ok(now) => now,
        Err(e) => {
            reasons.push(format!("cannot be scanned any more: {e}"));
            return reasons;
        }
    };
    let before: BTreeMap<&str, &ManifestFile> =
        entry.files.iter().map(|f| (f.path.as_str(), f)).collect();
    let after: BTreeMap<&str, &ManifestFile> =
        now.files.iter().map(|f| (f.path.as_str(), f)).collect();
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
    if sha256_hex(now.section.as_bytes()) != entry.section_sha256 {
        reasons.push("rendered section changed".to_string());
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
