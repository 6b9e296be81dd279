//! The JSON Lines record of a scan, byte-identical to the reference oracle's
//! `json.dumps(..., ensure_ascii=False)`: `", "` and `": "` separators, only
//! `"`, `\` and control characters escaped.

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;

use crate::error::RootError;
use crate::model::ScanResult;
use crate::scan::RootScan;

/// What a scan record says about its root besides the reference's result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootFacts {
    /// The root's bytes in hex when they are not UTF-8 (see [`crate::rootname`]).
    pub hex: Option<String>,
    /// Whether the root is not a directory (its result is empty either way).
    pub not_dir: bool,
}

impl RootFacts {
    /// The facts of `scan`, a scan of the root `given`.
    pub fn of(scan: &RootScan, given: &Path) -> RootFacts {
        RootFacts {
            hex: crate::rootname::hex_of(given),
            not_dir: !scan.is_dir,
        }
    }
}

/// The scan record of `scan` (a scan of the root `given`) as one line:
/// `to_json_line` with the root's [`RootFacts`].
pub fn scan_line(scan: &RootScan, given: &Path) -> String {
    to_json_line(scan.result(), &RootFacts::of(scan, given))
}

/// The scan record of `result` as one line in Python's `json.dumps` style
/// (`{"root": …, "files": […], "skipped_count": N}`), without the newline.
/// `facts` add `"root_hex"` after `root` for a root that is not UTF-8 and
/// `"is_dir": false` for one that is not a directory; records of other
/// roots are exactly the reference's result with its root in front.
///
/// Written directly rather than through serde, so there is no failure path:
/// every field is a string, an integer or `false`.
pub(crate) fn to_json_line(result: &ScanResult, facts: &RootFacts) -> String {
    let mut out = String::with_capacity(
        64 + result.root.len()
            + result
                .files
                .iter()
                .map(|f| f.path.len() + f.content.len() + 64)
                .sum::<usize>(),
    );
    out.push_str("{\"root\": ");
    push_json_str(&mut out, &result.root);
    if let Some(hex) = &facts.hex {
        out.push_str(", \"root_hex\": ");
        push_json_str(&mut out, hex);
    }
    if facts.not_dir {
        out.push_str(", \"is_dir\": false");
    }
    out.push_str(", \"files\": [");
    for (i, file) in result.files.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str("{\"path\": ");
        push_json_str(&mut out, &file.path);
        out.push_str(", \"content\": ");
        push_json_str(&mut out, &file.content);
        let _ = write!(
            out,
            ", \"token_count\": {}, \"status\": \"{}\"}}",
            file.token_count,
            file.status.as_str()
        );
    }
    let _ = write!(out, "], \"skipped_count\": {}}}", result.skipped_count);
    out
}

/// `s` as a JSON string, as `to_json_line` writes strings.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    push_json_str(&mut out, s);
    out
}

/// Appends `s` as a JSON string the way Python's `json.dumps` with
/// `ensure_ascii=False` writes it: `"` and `\` escaped, the short escapes
/// for backspace, form feed, newline, carriage return and tab, `\u00XX` for
/// the other control characters below U+0020, everything else as it is.
fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A root's error record in JSON output: `{"root": ..., "error": {...}}`.
#[derive(Serialize)]
pub struct ErrorRecord<'a> {
    /// The root as given.
    pub root: std::borrow::Cow<'a, str>,
    /// Its bytes, when they are not UTF-8 (see [`crate::rootname`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_hex: Option<String>,
    /// Why it has no result.
    pub error: &'a RootError,
}

impl<'a> ErrorRecord<'a> {
    /// The record for `given`.
    pub fn new(given: &'a Path, error: &'a RootError) -> ErrorRecord<'a> {
        ErrorRecord {
            root: given.to_string_lossy(),
            root_hex: crate::rootname::hex_of(given),
            error,
        }
    }
}

/// A root's error record as one JSON line (`scan`'s output).
pub fn error_line(given: &Path, error: &RootError) -> String {
    serde_json::to_string(&ErrorRecord::new(given, error)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{FileEntry, ScanResult, Status};

    #[test]
    fn python_separators_and_escapes() {
        let r = ScanResult {
            root: "r".into(),
            files: vec![FileEntry {
                path: "/r/\u{e9}.md".into(),
                content: "a\"\\\n\t\u{1}\u{7f}\u{2028}".into(),
                token_count: 3,
                status: Status::Ok,
            }],
            skipped_count: 0,
        };
        // json.dumps({...}, ensure_ascii=False)
        let want = "{\"root\": \"r\", \"files\": [{\"path\": \"/r/\u{e9}.md\", \"content\": \
                    \"a\\\"\\\\\\n\\t\\u0001\u{7f}\u{2028}\", \"token_count\": 3, \"status\": \"ok\"}], \
                    \"skipped_count\": 0}";
        assert_eq!(to_json_line(&r, &RootFacts::default()), want);
        let facts = RootFacts {
            hex: Some("72ff".into()),
            not_dir: true,
        };
        let marked = to_json_line(&r, &facts);
        assert!(
            marked.starts_with(
                "{\"root\": \"r\", \"root_hex\": \"72ff\", \"is_dir\": false, \"files\": ["
            ),
            "{marked}"
        );
    }
}
