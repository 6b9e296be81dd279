//! `render --out-dir`'s directory: one section file per root, named by
//! [`section_file_name`], and an `index.json` that lists every root in the
//! order given ([`IndexEntry`]).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{write_atomic, Context, Result};
use crate::RootError;

/// The index file's name inside the directory.
const INDEX_FILE: &str = "index.json";

/// One entry of `render --out-dir`'s index.json.
#[derive(Debug, Serialize, Deserialize)]
pub struct IndexEntry {
    /// The root as given.
    pub root: String,
    /// Its bytes, when they are not UTF-8 (see [`crate::rootname`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_hex: Option<String>,
    /// The root made absolute (not for a root that failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abs_root: Option<String>,
    /// Its bytes, when they are not UTF-8.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abs_root_hex: Option<String>,
    /// `false` for a root that is not a directory (its section is an
    /// empty root's, and the run exits 1); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_dir: Option<bool>,
    /// Its section file, relative to the directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
    /// Why the root has no section.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<RootError>,
}

/// The index.json of a `render --out-dir` directory.
#[derive(Deserialize)]
struct Index {
    roots: Vec<IndexEntry>,
}

/// Writes `DIR/index.json` (atomically).
pub fn write_index(dir: &Path, entries: &[IndexEntry]) -> Result<()> {
    let path = dir.join(INDEX_FILE);
    let index = serde_json::to_vec_pretty(&serde_json::json!({ "roots": entries }))
        .with_context(|| format!("cannot write {}", path.display()))?;
    write_atomic(&path, &index)
}

/// Reads `DIR/index.json`.
pub(crate) fn read_index(dir: &Path) -> Result<Vec<IndexEntry>> {
    let path = dir.join(INDEX_FILE);
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let index: Index = serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: not a render --out-dir index", path.display()))?;
    Ok(index.roots)
}

/// `NNNN-<last component>.md`, with anything but `[A-Za-z0-9._-]` replaced by
/// `_`: the section file of the root at `index` in the whole root list (so
/// the shards of one run never clash, and a merge keeps the names).
pub fn section_file_name(index: usize, abs_root: &Path) -> String {
    let base = abs_root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".to_string());
    let base: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{index:04}-{base}.md")
}
