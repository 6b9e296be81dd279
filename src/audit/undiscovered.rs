//! Rule files that exist but that the scan never discovers.
//!
//! The scan stops at `max_depth`, never enters pruned directories and
//! matches names case-sensitively, so a rule file can sit in a repository
//! for years without reaching the prompt. This second, exhaustive walk goes
//! everywhere the scan does not (it is only run by the audit) and says why
//! each such file was missed. Like the scan it never follows a symlink to a
//! directory, so it terminates on any tree; it does not look inside `.git`
//! directories (git's own data, never a project's rule file).

use std::collections::HashSet;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;

use crate::discover::fnmatch::NamePattern;
use crate::discover::{path::join_rel, python_path_order, Matchers};
use crate::pystr::matching_str;

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

/// Why a directory's files are out of the scan's reach.
#[derive(Clone, Debug)]
enum Block {
    TooDeep(String, i64),
    Pruned(String),
}

struct Dir {
    full: Vec<u8>,
    rel: String,
    depth: i64,
    block: Option<Block>,
}

/// Walks all of `root` (absolute, lexically normalised) and returns the
/// files named like rule files (exactly, or but for letter case) that are
/// not in `discovered`, sorted like candidates.
///
/// A case-only match is reported only where the scan does look (a file that
/// is out of reach and misnamed is out of reach first).
pub fn find_missed(root: &[u8], matchers: &Matchers, discovered: &HashSet<&[u8]>) -> Vec<Missed> {
    let folded = NamePattern::new(&matchers.name.as_str().to_lowercase()).ok();
    let mut missed = Vec::new();
    let mut stack = vec![Dir {
        full: root.to_vec(),
        rel: String::new(),
        depth: 0,
        block: (matchers.max_depth <= 0).then(|| Block::TooDeep(String::new(), 0)),
    }];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(OsStr::from_bytes(&dir.full)) else {
            continue;
        };
        let separator: &[u8] = if dir.full.ends_with(b"/") { b"" } else { b"/" };
        let child_depth = dir.depth + separator.len() as i64;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.as_bytes();
            let full = [&dir.full[..], separator, name].concat();
            let is_dir = match entry.file_type() {
                Ok(t) if t.is_symlink() => {
                    // A link to a directory is a directory that is never entered.
                    if fs::metadata(OsStr::from_bytes(&full)).is_ok_and(|m| m.is_dir()) {
                        continue;
                    }
                    false
                }
                Ok(t) => t.is_dir(),
                Err(_) => false,
            };
            let rel = join_rel(&dir.rel, name);
            if is_dir {
                if name == b".git" {
                    continue;
                }
                let block = dir.block.clone().or_else(|| {
                    if child_depth >= matchers.max_depth {
                        Some(Block::TooDeep(rel.clone(), child_depth))
                    } else if matchers
                        .ignore
                        .as_ref()
                        .is_some_and(|spec| spec.is_dir_ignored(&rel))
                    {
                        Some(Block::Pruned(rel.clone()))
                    } else {
                        None
                    }
                });
                stack.push(Dir {
                    full,
                    rel,
                    depth: child_depth,
                    block,
                });
                continue;
            }
            if discovered.contains(&full[..]) {
                continue;
            }
            let shown = matching_str(name);
            let exact = matchers.name.is_match(&shown);
            if !exact
                && !folded
                    .as_ref()
                    .is_some_and(|f| f.is_match(&shown.to_lowercase()))
            {
                continue;
            }
            let reason = match (&dir.block, exact) {
                (Some(Block::TooDeep(too_deep, depth)), true) => Reason::TooDeep {
                    dir: too_deep.clone(),
                    depth: *depth,
                },
                (Some(Block::Pruned(pruned)), true) => Reason::Pruned {
                    pattern: deciding_pattern(matchers, pruned, true),
                    dir: pruned.clone(),
                },
                (Some(_), false) => continue,
                (None, true) => match deciding_pattern(matchers, &rel, false) {
                    Some(pattern) => Reason::Ignored {
                        pattern: Some(pattern),
                    },
                    // Discovered after all (the tree changed between the walks).
                    None => continue,
                },
                (None, false) => Reason::Case,
            };
            missed.push(Missed {
                path: full,
                rel,
                reason,
            });
        }
    }
    missed.sort_by(|a, b| python_path_order(&a.path, &b.path));
    missed
}

/// The ignore pattern that excludes `rel` under the scanner's rule, with its line.
fn deciding_pattern(matchers: &Matchers, rel: &str, is_dir: bool) -> Option<(String, usize)> {
    let spec = matchers.ignore.as_ref()?;
    match spec.explain(rel, is_dir) {
        (true, Some(p)) => Some((p.text.clone(), p.line_number)),
        _ => None,
    }
}

/// `parent/name` as the patterns see it.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

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
        let root_bytes = root.as_os_str().as_bytes();
        let top = [root_bytes, b"/top.promptinclude.md"].concat();
        let discovered: HashSet<&[u8]> = [&top[..]].into_iter().collect();
        let got: Vec<(String, Reason)> = find_missed(root_bytes, &matchers, &discovered)
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
}
