//! The JSON Lines record of a scan, byte-identical to the reference oracle's
//! `json.dumps(..., ensure_ascii=False)`: `", "` and `": "` separators, only
//! `"`, `\` and control characters escaped.

use std::io;

use serde::Serialize;

/// serde_json formatter with Python's default separators.
struct PythonFormatter;

impl serde_json::ser::Formatter for PythonFormatter {
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }

    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }
}

/// Serializes `value` as one line in Python's `json.dumps` style, without the newline.
pub fn to_json_line<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, PythonFormatter);
    // Serializing plain structs of strings and integers into a Vec cannot fail.
    if value.serialize(&mut ser).is_err() {
        return String::from("null");
    }
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::budget::{FileEntry, ScanResult, Status};

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
        assert_eq!(to_json_line(&r), want);
    }
}
