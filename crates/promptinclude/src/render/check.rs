//! `check-ignore`: which `gitignore` pattern decides a path, and its two
//! outputs (git's `SOURCE:LINE:PATTERN<TAB>PATH` lines, or JSON records).

use serde::Serialize;

use crate::discover::gitwildmatch::{IgnorePattern, IgnoreSpec};

/// What the patterns say about one path.
#[derive(Clone, Copy, Debug)]
pub struct Checked<'a> {
    /// The path as given (a trailing `/` means a directory).
    pub path: &'a str,
    /// Whether the path is ignored.
    pub ignored: bool,
    /// The last pattern that matched it, if any (a negation when not ignored).
    pub pattern: Option<&'a IgnorePattern>,
}

impl<'a> Checked<'a> {
    /// Checks `path` against `spec` (`None`: no patterns, nothing ignored).
    pub fn new(spec: Option<&'a IgnoreSpec>, path: &'a str) -> Checked<'a> {
        let (rel, is_dir) = match path.strip_suffix('/') {
            Some(rel) if !rel.is_empty() => (rel, true),
            _ => (path, false),
        };
        let (ignored, pattern) = match spec {
            Some(spec) => spec.explain(rel, is_dir),
            None => (false, None),
        };
        Checked {
            path,
            ignored,
            pattern,
        }
    }

    /// The `--json` record, without its line end.
    pub fn json(&self) -> String {
        #[derive(Serialize)]
        struct Record<'a> {
            path: &'a str,
            ignored: bool,
            pattern: Option<&'a str>,
            line: Option<usize>,
        }
        let record = Record {
            path: self.path,
            ignored: self.ignored,
            pattern: self.pattern.map(|p| p.text.as_str()),
            line: self.pattern.map(|p| p.line_number),
        };
        serde_json::to_string(&record).unwrap_or_default()
    }

    /// git's line for a path a pattern matched (`source` names the
    /// patterns' file), or with `non_matching` the `::<TAB>PATH` line for
    /// one none matched; without its line end. `None`: nothing to print.
    pub fn text(&self, source: &str, non_matching: bool) -> Option<String> {
        match self.pattern {
            Some(p) => Some(format!(
                "{source}:{}:{}\t{}",
                p.line_number, p.text, self.path
            )),
            None if non_matching => Some(format!("::\t{}", self.path)),
            None => None,
        }
    }
}
