//! Rule files that exist but that the scan never discovers, and
//! directories the scan cannot list.
//!
//! The scan stops at `max_depth`, never enters pruned directories and
//! matches names case-sensitively, so a rule file can sit in a repository
//! for years without reaching the prompt. The audit's walk is the scan's own
//! parallel walk ([`crate::discover::walk`]) with an exhaustive [`Visitor`]:
//! it also goes everywhere the scan does not and says why each such file was
//! missed, and which directories could not be listed at all. Like the scan
//! it never follows a symlink to a directory, so it terminates on any tree;
//! it does not look inside `.git` directories (git's own data, never a
//! project's rule file).

use std::io;
use std::sync::Mutex;

use crate::agents::disk::{EntryType, Listing, Listings};
use crate::discover::fnmatch::NamePattern;
use crate::discover::walk::{walk_with, Blocked, DirView, Visitor};
use crate::discover::{path::join_rel, python_path_order, Candidate, Matchers};
use crate::pystr::matching_str;
use crate::sys::{Entries, EntryKind};
/// Why a file named like a rule file was not discovered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    /// It is in (or below) a directory at `depth >= max_depth`.
    TooDeep {
        /// The outermost directory that is too deep, relative to the root (`""`: the root).
        dir: String,
        /// Its depth (root = 0).
        depth: i64,
    },
    /// It is inside a directory that the patterns prune.
    Pruned {
        /// The pruned directory, relative to the root.
        dir: String,
        /// The deciding pattern and its line, if known.
        pattern: Option<(String, usize)>,
    },
    /// A pattern drops the file itself.
    Ignored {
        /// The deciding pattern and its line, if known.
        pattern: Option<(String, usize)>,
    },
    /// Its name matches `name_pattern` only when letter case is ignored.
    Case,
}

/// A file the scan missed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missed {
    /// Full path, as bytes.
    pub path: Vec<u8>,
    /// Path relative to the root, as the patterns see it.
    pub rel: String,
    /// Why.
    pub reason: Reason,
}

/// A directory the scan would walk but cannot list: the reference skips it
/// silently, with every rule file below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnreadableDir {
    /// Full path, as bytes.
    pub path: Vec<u8>,
    /// Path relative to the root, as the patterns see it (`""`: the root).
    pub rel: String,
    /// Why it cannot be listed.
    pub error: String,
}

/// What the audit's walk found besides the candidates.
#[derive(Debug, Default)]
pub(crate) struct Exhaustive {
    /// Files named like rule files that the scan missed, sorted like candidates.
    pub missed: Vec<Missed>,
    /// Directories the scan could not list, sorted like candidates.
    pub unreadable_dirs: Vec<UnreadableDir>,
    /// Every directory the walk listed whole, with its entries' types, by
    /// full path (when asked for: the agents' audit looks at them again).
    pub listings: Listings,
}

/// The exhaustive visitor.
struct Collector<'m> {
    matchers: &'m Matchers,
    folded: Option<NamePattern>,
    missed: Mutex<Vec<Missed>>,
    unreadable: Mutex<Vec<UnreadableDir>>,
    /// `None` unless listings are kept.
    listings: Option<Mutex<Listings>>,
}

impl Visitor for Collector<'_> {
    const EXHAUSTIVE: bool = true;

    fn file(&self, dir: DirView<'_>, name: &[u8]) {
        let shown = matching_str(name);
        let exact = self.matchers.name.is_match(&shown);
        if !exact
            && !self
                .folded
                .as_ref()
                .is_some_and(|f| f.is_match(&super::lower_case(&shown)))
        {
            return;
        }
        let rel = join_rel(dir.rel, name);
        let reason = match (dir.blocked, exact) {
            (Some(Blocked::TooDeep { dir, depth }), true) => Reason::TooDeep {
                dir: dir.clone(),
                depth: *depth,
            },
            (Some(Blocked::Pruned { dir }), true) => Reason::Pruned {
                pattern: deciding_pattern(self.matchers, dir, true),
                dir: dir.clone(),
            },
            // Out of reach and misnamed: out of reach first.
            (Some(_), false) => return,
            (None, true) => match deciding_pattern(self.matchers, &rel, false) {
                Some(pattern) => Reason::Ignored {
                    pattern: Some(pattern),
                },
                None => return,
            },
            (None, false) => Reason::Case,
        };
        let missed = Missed {
            path: dir.child_full(name),
            rel,
            reason,
        };
        lock(&self.missed).push(missed);
    }

    fn unreadable_dir(&self, full: &[u8], rel: &str, error: &io::Error) {
        lock(&self.unreadable).push(UnreadableDir {
            path: full.to_vec(),
            rel: rel.to_string(),
            error: error.to_string(),
        });
    }

    fn wants_listings(&self) -> bool {
        self.listings.is_some()
    }

    fn listed(&self, full: &[u8], entries: &Entries) {
        let Some(listings) = &self.listings else {
            return;
        };
        // An entry the file system gives no type for (`DT_UNKNOWN`) would
        // need an `lstat`: such a directory is left for the agents to list.
        // (Looked for first, so that the typed entries are collected at
        // their size: collecting into an `Option` grows them one by one.)
        if entries
            .ends
            .iter()
            .any(|&(_, kind)| kind == EntryKind::Unknown)
        {
            return;
        }
        let typed = entries
            .ends
            .iter()
            .map(|&(end, kind)| {
                let typed = match kind {
                    EntryKind::File => EntryType::File,
                    EntryKind::Dir => EntryType::Dir,
                    EntryKind::Symlink => EntryType::Symlink,
                    // (`Unknown` is ruled out above.)
                    EntryKind::Other | EntryKind::Unknown => EntryType::Other,
                };
                (end, typed)
            })
            .collect();
        let listing = Listing::packed(entries.names.clone(), typed);
        lock(listings).push((full.to_vec(), listing));
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Walks all of `root` (absolute, lexically normalised) once, in parallel:
/// the scan's candidates (exactly [`crate::discover::walk::discover`]'s),
/// plus the files named like rule files (exactly, or but for letter case)
/// that the scan misses and the directories it cannot list.
///
/// A case-only match is reported only where the scan does look (a file that
/// is out of reach and misnamed is out of reach first).
///
/// With `keep_listings`, every directory's listing is kept too.
pub(crate) fn walk_for_audit(
    root: &[u8],
    matchers: &Matchers,
    keep_listings: bool,
) -> (Vec<Candidate>, Exhaustive) {
    let folded = NamePattern::new(&matchers.name.as_str().to_lowercase()).ok();
    let (candidates, collector) = walk_with(root, matchers, || Collector {
        matchers,
        folded: folded.clone(),
        missed: Mutex::new(Vec::new()),
        unreadable: Mutex::new(Vec::new()),
        listings: keep_listings.then(|| Mutex::new(Vec::new())),
    });
    let mut missed = collector
        .missed
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    missed.sort_by(|a, b| python_path_order(&a.path, &b.path));
    let mut unreadable_dirs = collector
        .unreadable
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    unreadable_dirs.sort_by(|a, b| python_path_order(&a.path, &b.path));
    let listings = collector
        .listings
        .map(|l| l.into_inner().unwrap_or_else(|e| e.into_inner()))
        .unwrap_or_default();
    (
        candidates,
        Exhaustive {
            missed,
            unreadable_dirs,
            listings,
        },
    )
}

/// The ignore pattern that excludes `rel` under the scanner's rule, with its line.
fn deciding_pattern(matchers: &Matchers, rel: &str, is_dir: bool) -> Option<(String, usize)> {
    let spec = matchers.ignore.as_ref()?;
    match spec.explain(rel, is_dir) {
        (true, Some(p)) => Some((p.text.clone(), p.line_number)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use std::fs;

    #[test]
    fn reasons() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for d in ["a/b/c", "node_modules/x", "keep"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "top.promptinclude.md",
            "a/b/c/deep.promptinclude.md",
            "node_modules/x/vendor.promptinclude.md",
            "keep/Upper.PromptInclude.md",
            "keep/drop.promptinclude.md",
            "a/b/c/Deep.PROMPTINCLUDE.md",
        ] {
            fs::write(root.join(f), "x").unwrap();
        }
        let config = Config {
            max_depth: crate::config::Number::int(3),
            gitignore: "**/node_modules/**\nkeep/drop*\n".into(),
            ..Config::default()
        };
        let matchers = Matchers::new(&config).unwrap();
        let root_bytes = root.as_os_str().as_encoded_bytes();
        let top = [root_bytes, b"/top.promptinclude.md"].concat();
        let (candidates, exhaustive) = walk_for_audit(root_bytes, &matchers, false);
        assert_eq!(
            candidates
                .iter()
                .map(Candidate::as_bytes)
                .collect::<Vec<_>>(),
            vec![&top[..]]
        );
        assert!(exhaustive.unreadable_dirs.is_empty());
        let got: Vec<(String, Reason)> = exhaustive
            .missed
            .into_iter()
            .map(|m| (m.rel, m.reason))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "a/b/c/deep.promptinclude.md".to_string(),
                    Reason::TooDeep {
                        dir: "a/b/c".to_string(),
                        depth: 3
                    }
                ),
                ("keep/Upper.PromptInclude.md".to_string(), Reason::Case),
                (
                    "keep/drop.promptinclude.md".to_string(),
                    Reason::Ignored {
                        pattern: Some(("keep/drop*".to_string(), 2))
                    }
                ),
                (
                    "node_modules/x/vendor.promptinclude.md".to_string(),
                    Reason::Pruned {
                        dir: "node_modules".to_string(),
                        pattern: Some(("**/node_modules/**".to_string(), 1))
                    }
                ),
            ]
        );
    }

    /// The listings the walk keeps are what listing each directory gives
    /// (names, their order and types), for every directory, pruned and too
    /// deep ones too.
    #[test]
    fn kept_listings_are_the_systems() {
        use crate::agents::disk::{Disk, Live};
        use std::os::unix::ffi::OsStrExt as _;
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        for d in ["a/b/c/d", "node_modules/x", "keep"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            "top.md",
            "a/b/c/d/deep.md",
            "node_modules/x/v.md",
            "keep/CLAUDE.md",
        ] {
            fs::write(root.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink("../a", root.join("keep/link")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("keep/dangling")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("keep/fifo"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let config = Config {
            max_depth: crate::config::Number::int(2),
            gitignore: "**/node_modules/**\n".into(),
            ..Config::default()
        };
        let matchers = Matchers::new(&config).unwrap();
        let root_bytes = root.as_os_str().as_encoded_bytes();
        let (_, exhaustive) = walk_for_audit(root_bytes, &matchers, true);
        let mut listed: Vec<&[u8]> = exhaustive.listings.iter().map(|(p, _)| &p[..]).collect();
        listed.sort();
        let mut every: Vec<Vec<u8>> = ["", "/a", "/a/b", "/a/b/c", "/a/b/c/d", "/keep"]
            .iter()
            .chain(&["/node_modules", "/node_modules/x"])
            .map(|d| [root_bytes, d.as_bytes()].concat())
            .collect();
        every.sort();
        assert_eq!(listed, every.iter().map(Vec::as_slice).collect::<Vec<_>>());
        for (path, listing) in &exhaustive.listings {
            let path = std::path::Path::new(std::ffi::OsStr::from_bytes(path));
            assert_eq!(&Live.read_dir(path).unwrap(), listing, "{}", path.display());
        }
        let (_, without) = walk_for_audit(root_bytes, &matchers, false);
        assert!(without.listings.is_empty());
    }
}
