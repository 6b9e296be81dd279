//! The outputs of a sharded run put back together into exactly what one run
//! over all the roots gives (`promptinclude merge`, and the Python package's
//! Dask driver).
//!
//! Every shard output holds the records of its own roots in input order
//! (`--shard` keeps the list's order, and a root's shard depends on the root
//! alone). So the merge walks the root list and, for each root, takes the
//! next record of the input whose next record is that root's: one record
//! per input in memory for `scan` and `audit`. The output is in turn a valid
//! input, so merges of merges give the same bytes (with `--partial` for the
//! intermediate ones).

use std::collections::{HashMap, VecDeque};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::bundle::{
    inside_path, read_manifest, write_bundle, Manifest, ManifestError, ManifestRoot, MANIFEST_FILE,
};
use super::index::{read_index, write_index, IndexEntry};
use super::{invalid, write_atomic, ArtifactError, Context, Result};
use crate::audit::summary::{Failure, Summary};
use crate::audit::{write_record, SCHEMA};
use crate::rootname::path_of;

/// The root list a merge follows: the roots of the unsharded run, in its order.
#[derive(Clone, Copy, Debug)]
pub struct RootList<'a> {
    /// Where the list was read from (for messages).
    pub path: &'a Path,
    /// The roots, in order.
    pub roots: &'a [PathBuf],
    /// Merge only some shards: a root in none of the inputs is left out
    /// instead of an error.
    pub partial: bool,
}

/// The roots of a root list file's bytes: one per line, empty lines and a
/// line's trailing `\r` left out (`--roots-from`).
pub fn parse_root_list(data: &[u8]) -> Vec<PathBuf> {
    data.split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.is_empty())
        .map(|line| PathBuf::from(std::ffi::OsString::from_vec(line.to_vec())))
        .collect()
}

/// The roots of the root list file at `path` ([`parse_root_list`]).
pub fn read_root_list(path: &Path) -> Result<Vec<PathBuf>> {
    let data = std::fs::read(path)
        .with_context(|| format!("cannot read roots from {}", path.display()))?;
    Ok(parse_root_list(&data))
}

/// What the merged roots say about the run, for its exit status: the same
/// as the unsharded run's.
#[derive(Debug, Default)]
pub struct Merged {
    /// A root failed (the unsharded run exits 2).
    pub errors: bool,
    /// A root is not a directory (the unsharded run exits 1).
    pub not_dirs: bool,
    /// The merged audit summary (`merge audit` only): its `failures` are the
    /// gate failures, its `errors` the failed roots.
    pub summary: Option<Summary>,
}

/// Records of one input, in its order, each with the root it is about.
trait Source {
    /// What one record is.
    type Item;
    /// The next record's root (its bytes: see `promptinclude::rootname`), if any.
    fn peek(&self) -> Option<&[u8]>;
    /// Takes the next record and reads the one after it.
    fn take(&mut self) -> Result<Self::Item>;
    /// Where the next record is, for errors.
    fn place(&self) -> String;
}

/// Hands the records of `sources` to `emit` in the order of `list`.
/// Fails when a root is in no input (unless `partial`), or when an input
/// holds records left over (a root not in the list, or out of its order).
fn interleave<S: Source>(
    list: RootList<'_>,
    partial: bool,
    sources: &mut [S],
    mut emit: impl FnMut(usize, S::Item) -> Result<()>,
) -> Result<()> {
    let RootList {
        path: list, roots, ..
    } = list;
    // Which sources' next record is about a root: sources in input order.
    let mut heads: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
    for (k, source) in sources.iter().enumerate() {
        if let Some(root) = source.peek() {
            heads.entry(root.to_vec()).or_default().push(k);
        }
    }
    for (line, root) in roots.iter().enumerate() {
        let Some(k) = heads
            .get_mut(root.as_os_str().as_bytes())
            .and_then(|ks| (!ks.is_empty()).then(|| ks.remove(0)))
        else {
            if partial {
                continue;
            }
            invalid!(
                "{}:{}: root {} is in none of the inputs (a shard output missing? \
                 --partial merges only some)",
                list.display(),
                line + 1,
                root.display()
            );
        };
        let item = sources[k].take()?;
        if let Some(next) = sources[k].peek() {
            let ks = heads.entry(next.to_vec()).or_default();
            let at = ks.partition_point(|&j| j < k);
            ks.insert(at, k);
        }
        emit(k, item)?;
    }
    if let Some(source) = sources.iter().find(|s| s.peek().is_some()) {
        invalid!(
            "{}: a record for root {} is left over: that root is not in {} or not in its order \
             (another root list, or the same input given twice?)",
            source.place(),
            Path::new(OsStr::from_bytes(source.peek().unwrap_or_default())).display(),
            list.display()
        );
    }
    Ok(())
}

/// What the merge needs from a JSON line.
#[derive(Deserialize)]
struct LineHead {
    root: Option<String>,
    root_hex: Option<String>,
    gate_failures: Option<usize>,
    schema: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
    error: Option<serde::de::IgnoredAny>,
    is_dir: Option<bool>,
}

/// One record of a JSON Lines output: its bytes and what it says.
struct Line {
    /// The root as the record prints it.
    root_text: String,
    /// The root's bytes.
    root: PathBuf,
    bytes: Vec<u8>,
    is_error: bool,
    not_dir: bool,
    gate_failures: usize,
}

/// A `scan` or `audit --json` output read one line at a time.
struct LineSource {
    path: PathBuf,
    reader: BufReader<File>,
    audit: bool,
    line_no: usize,
    next: Option<Line>,
}

impl LineSource {
    fn open(path: &Path, audit: bool) -> Result<LineSource> {
        let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
        let mut source = LineSource {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(1 << 16, file),
            audit,
            line_no: 0,
            next: None,
        };
        source.advance()?;
        Ok(source)
    }

    /// Reads the next root record (an audit's summary ends the input).
    fn advance(&mut self) -> Result<()> {
        let mut bytes = Vec::new();
        self.line_no += 1;
        let read = self
            .reader
            .read_until(b'\n', &mut bytes)
            .with_context(|| format!("cannot read {}", self.path.display()))?;
        let at = || format!("{}:{}", self.path.display(), self.line_no);
        if read == 0 {
            self.next = None;
            return Ok(());
        }
        if bytes.last() != Some(&b'\n') {
            invalid!(
                "{}: the last line is incomplete (a truncated output?)",
                at()
            );
        }
        let head: LineHead = serde_json::from_slice(&bytes).with_context(|| {
            format!(
                "{}: not a promptinclude {} record",
                at(),
                if self.audit { "audit --json" } else { "scan" }
            )
        })?;
        if self.audit {
            if head.schema.as_deref() != Some(SCHEMA) {
                invalid!("{}: not an audit --json record of schema {SCHEMA}", at());
            }
            if head.kind.as_deref() == Some("summary") {
                self.next = None;
                return Ok(());
            }
        }
        let Some(root_text) = head.root else {
            invalid!("{}: a record without a root", at());
        };
        let root = path_of(&root_text, head.root_hex.as_deref())
            .map_err(|e| ArtifactError::Invalid(format!("{}: root_hex {e}", at())))?;
        self.next = Some(Line {
            root_text,
            root,
            bytes,
            is_error: head.error.is_some(),
            not_dir: head.is_dir == Some(false),
            gate_failures: head.gate_failures.unwrap_or(0),
        });
        Ok(())
    }
}

impl Source for LineSource {
    type Item = Line;
    fn peek(&self) -> Option<&[u8]> {
        self.next
            .as_ref()
            .map(|line| line.root.as_os_str().as_bytes())
    }
    fn take(&mut self) -> Result<Line> {
        let Some(line) = self.next.take() else {
            invalid!("{}: no record left", self.place());
        };
        self.advance()?;
        Ok(line)
    }
    fn place(&self) -> String {
        format!("{}:{}", self.path.display(), self.line_no)
    }
}

/// The summary record that ends an `audit --json` output (read first, so
/// that its gate failures can be put in input order as roots go by).
fn read_summary(path: &Path) -> Result<Summary> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut reader = BufReader::with_capacity(1 << 16, file);
    let (mut last, mut line) = (Vec::new(), Vec::new());
    loop {
        line.clear();
        if reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("cannot read {}", path.display()))?
            == 0
        {
            break;
        }
        std::mem::swap(&mut last, &mut line);
    }
    #[derive(Deserialize)]
    struct Kind {
        #[serde(rename = "type")]
        kind: String,
    }
    let is_summary = serde_json::from_slice::<Kind>(&last).is_ok_and(|k| k.kind == "summary");
    if !is_summary || last.last() != Some(&b'\n') {
        invalid!(
            "{}: does not end with an audit summary record (an unfinished audit --json output?)",
            path.display()
        );
    }
    serde_json::from_slice(&last)
        .with_context(|| format!("{}: the summary record is not readable", path.display()))
}

/// `merge scan` (`audit` false) and `merge audit`: the JSON Lines outputs
/// `files` of the shards, written to `out` as one run over `list` writes them.
pub fn merge_lines(
    list: RootList<'_>,
    files: &[PathBuf],
    audit: bool,
    out: &mut impl Write,
) -> Result<Merged> {
    let mut summaries: Vec<Summary> = Vec::new();
    if audit {
        summaries = files
            .iter()
            .map(|f| read_summary(f))
            .collect::<Result<_>>()?;
    }
    let mut failures: Vec<VecDeque<Failure>> = summaries
        .iter_mut()
        .map(|s| std::mem::take(&mut s.failures).into())
        .collect();
    let mut sources = files
        .iter()
        .map(|f| LineSource::open(f, audit))
        .collect::<Result<Vec<_>>>()?;
    let mut merged = Summary::default();
    let mut outcome = Merged::default();
    interleave(list, list.partial, &mut sources, |k, line: Line| {
        outcome.errors |= line.is_error;
        outcome.not_dirs |= line.not_dir;
        out.write_all(&line.bytes).with_context(output)?;
        if let Some(queue) = failures.get_mut(k) {
            // The record's failures come next in its input's summary.
            for _ in 0..line.gate_failures {
                match queue.pop_front() {
                    Some(f) if f.root == line.root_text => merged.failures.push(f),
                    _ => invalid!(
                        "{}: the record of root {} counts {} gate failures, \
                         which its input's summary does not hold next",
                        files[k].display(),
                        line.root_text,
                        line.gate_failures
                    ),
                }
            }
        }
        Ok(())
    })?;
    if audit {
        if let Some((k, f)) = failures
            .iter()
            .enumerate()
            .find_map(|(k, q)| q.front().map(|f| (k, f)))
        {
            invalid!(
                "{}: the summary has a gate failure for root {}, which none of its records counts \
                 (an output of an older promptinclude?)",
                files[k].display(),
                f.root
            );
        }
        let failures = std::mem::take(&mut merged.failures);
        for summary in summaries {
            merged.absorb(summary);
        }
        merged.failures = failures;
        write_record(out, "summary", &merged).with_context(output)?;
        outcome.errors |= merged.errors > 0;
        outcome.summary = Some(merged);
    }
    out.flush().with_context(output)?;
    Ok(outcome)
}

/// What failed when writing to the merge's output stream.
fn output() -> String {
    "cannot write the merged output".to_string()
}

/// The entries of a list in their order, each with its root's bytes, as a [`Source`].
struct ListSource<T> {
    place: String,
    items: VecDeque<(Vec<u8>, T)>,
}

impl<T> ListSource<T> {
    /// The entries of the list at `place`, with `root` naming each one's root.
    fn new(
        place: String,
        entries: Vec<T>,
        root: impl Fn(&T) -> Result<PathBuf, crate::rootname::BadHex>,
    ) -> Result<ListSource<T>> {
        let items = entries
            .into_iter()
            .map(|entry| {
                let root = root(&entry)
                    .map_err(|e| ArtifactError::Invalid(format!("{place}: root_hex {e}")))?;
                Ok((root.into_os_string().into_vec(), entry))
            })
            .collect::<Result<_>>()?;
        Ok(ListSource { place, items })
    }
}

impl<T> Source for ListSource<T> {
    type Item = T;
    fn peek(&self) -> Option<&[u8]> {
        self.items.front().map(|(root, _)| root.as_slice())
    }
    fn take(&mut self) -> Result<T> {
        match self.items.pop_front() {
            Some((_, item)) => Ok(item),
            None => invalid!("{}: no record left", self.place),
        }
    }
    fn place(&self) -> String {
        self.place.clone()
    }
}

/// Copies `name` (a path relative to the directory) from `from` to `to`,
/// refusing names that would leave the directory.
fn copy_artifact(from: &Path, to: &Path, name: &str) -> Result<()> {
    if inside_path(name).is_none() {
        invalid!(
            "{}: the file name {name:?} leaves the directory",
            from.display()
        );
    }
    let bytes = std::fs::read(from.join(name))
        .with_context(|| format!("cannot read {}", from.join(name).display()))?;
    let target = to.join(name);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    write_atomic(&target, &bytes)
}

/// `merge render`: the `render --out-dir` directories `dirs` of the shards
/// into `out`, their section files and one `index.json`.
pub fn merge_render(list: RootList<'_>, dirs: &[PathBuf], out: &Path) -> Result<Merged> {
    let mut sources = Vec::new();
    for dir in dirs {
        let entries = read_index(dir)?;
        sources.push(ListSource::new(
            dir.join("index.json").display().to_string(),
            entries,
            |e: &IndexEntry| path_of(&e.root, e.root_hex.as_deref()),
        )?);
    }
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut merged: Vec<IndexEntry> = Vec::new();
    let mut outcome = Merged::default();
    interleave(list, list.partial, &mut sources, |k, entry: IndexEntry| {
        if let Some(section) = &entry.section {
            copy_artifact(&dirs[k], out, section)?;
        }
        outcome.errors |= entry.error.is_some();
        outcome.not_dirs |= entry.is_dir == Some(false);
        merged.push(entry);
        Ok(())
    })?;
    write_index(out, &merged)?;
    Ok(outcome)
}

/// The manifests of the bundles in `dirs`, in their order; fails unless all
/// were written by the same tool version with the same settings and revision.
fn read_matching_manifests(dirs: &[PathBuf]) -> Result<Vec<Manifest>> {
    let mut manifests: Vec<Manifest> = Vec::new();
    for dir in dirs {
        let manifest = read_manifest(&dir.join(MANIFEST_FILE))?;
        if let Some(first) = manifests.first() {
            let same = first.tool_version == manifest.tool_version
                && first.rev == manifest.rev
                && first.read_policy == manifest.read_policy
                && serde_json::to_value(&first.settings).ok()
                    == serde_json::to_value(&manifest.settings).ok();
            if !same {
                invalid!(
                    "{}: written by another tool version or with other settings than {} \
                     (the shards of one run share both)",
                    dir.join(MANIFEST_FILE).display(),
                    dirs[0].join(MANIFEST_FILE).display()
                );
            }
        }
        manifests.push(manifest);
    }
    Ok(manifests)
}

/// The bundles to merge as [`Source`]s: per bundle, its bundled roots and,
/// apart, its failed roots (each list is merged on its own).
struct BundleSources {
    roots: Vec<ListSource<ManifestRoot>>,
    errors: Vec<ListSource<ManifestError>>,
}

impl BundleSources {
    /// The sources of `manifests`, `manifests[k]` read from `dirs[k]`.
    fn new(dirs: &[PathBuf], manifests: Vec<Manifest>) -> Result<BundleSources> {
        let mut sources = BundleSources {
            roots: Vec::new(),
            errors: Vec::new(),
        };
        for (dir, manifest) in dirs.iter().zip(manifests) {
            let place = dir.join(MANIFEST_FILE).display().to_string();
            sources.roots.push(ListSource::new(
                place.clone(),
                manifest.roots,
                ManifestRoot::root_path,
            )?);
            sources.errors.push(ListSource::new(
                place,
                manifest.errors,
                ManifestError::root_path,
            )?);
        }
        Ok(sources)
    }
}

/// `merge bundle`: the bundles `dirs` of the shards into one at `out`
/// (written whole or not at all), their artifacts and one `manifest.json`.
pub fn merge_bundle(list: RootList<'_>, dirs: &[PathBuf], out: &Path) -> Result<Merged> {
    let manifests = read_matching_manifests(dirs)?;
    let Some(first) = manifests.first() else {
        invalid!("no bundle to merge");
    };
    let read_policy = first.read_policy.clone();
    let (settings, tool_version, rev) = (
        first.settings.clone(),
        first.tool_version.clone(),
        first.rev.clone(),
    );
    let mut sources = BundleSources::new(dirs, manifests)?;
    let mut outcome = Merged::default();
    write_bundle(out, |temp| {
        // A root is either bundled or failed: each list is merged on its own,
        // and together they must hold every root.
        let mut entries: Vec<ManifestRoot> = Vec::new();
        interleave(list, true, &mut sources.roots, |k, entry: ManifestRoot| {
            copy_artifact(&dirs[k], temp, &entry.section)?;
            copy_artifact(&dirs[k], temp, &entry.scan)?;
            outcome.not_dirs |= !entry.is_dir;
            entries.push(entry);
            Ok(())
        })?;
        let mut errors: Vec<ManifestError> = Vec::new();
        interleave(list, true, &mut sources.errors, |_, e| {
            errors.push(e);
            Ok(())
        })?;
        let roots = list.roots.len();
        if !list.partial && entries.len() + errors.len() < roots {
            invalid!(
                "{}: {} roots are in none of the bundles (a shard missing? --partial merges only some)",
                list.path.display(),
                roots - entries.len() - errors.len()
            );
        }
        outcome.errors |= !errors.is_empty();
        Ok(Manifest {
            schema: super::bundle::MANIFEST_SCHEMA,
            tool_version,
            settings,
            read_policy,
            rev,
            roots: entries,
            errors,
        })
    })?;
    Ok(outcome)
}
