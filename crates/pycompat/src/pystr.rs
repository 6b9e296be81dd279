//! Python `str` semantics that the reference scanner relies on.
//!
//! The reference is written in Python, and several of its text steps use Python's
//! definitions, which differ from Rust's standard library:
//!
//! * `str.isspace` / `str.strip` treat `\x1c`–`\x1f` as whitespace; Rust's
//!   [`char::is_whitespace`] does not.
//! * `str.splitlines` splits on eleven line boundaries (`\n \r \r\n \x0b \x0c \x1c \x1d
//!   \x1e \x85 \u2028 \u2029`); Rust's [`str::lines`] only on `\n` and `\r\n`.
//! * Python decodes file names that are not valid UTF-8 with `surrogateescape`, giving
//!   lone surrogates U+DC80..U+DCFF, which a Rust `str` cannot hold. [`matching_str`]
//!   maps each such byte to a private-use stand-in instead (see there).

use std::borrow::Cow;

/// First code point of the stand-in range for undecodable bytes: byte `b` (always
/// `>= 0x80`) becomes `U+10FF00 + b`, i.e. U+10FF80..=U+10FFFF.
pub const STAND_IN_BASE: u32 = 0x10_FF00;

/// Exactly Python 3.11's `str.isspace()` for a single character.
///
/// The set is `\t \n \x0b \x0c \r \x1c-\x1f space \x85 \xa0 \u1680 \u2000-\u200a
/// \u2028 \u2029 \u202f \u205f \u3000`. U+200B and U+FEFF are *not* whitespace.
fn is_py_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n'
            | '\x0b'
            | '\x0c'
            | '\r'
            | '\x1c'..='\x1f'
            | ' '
            | '\u{85}'
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
    )
}

/// Python `s.strip()` (no argument): removes Python whitespace from both ends.
pub fn py_strip(s: &str) -> &str {
    s.trim_matches(is_py_whitespace)
}

/// Python `s.rstrip()` (no argument): removes Python whitespace from the end.
pub fn py_rstrip(s: &str) -> &str {
    s.trim_end_matches(is_py_whitespace)
}

/// Python `not s.strip()`: the text is empty or consists only of Python whitespace.
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_py_whitespace)
}

/// Whether `c` is one of Python's `str.splitlines` line boundaries
/// (`\r\n` is handled as one boundary by [`py_splitlines`]).
fn is_py_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\x0b'
            | '\x0c'
            | '\x1c'
            | '\x1d'
            | '\x1e'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// Python `s.splitlines()` (without `keepends`).
///
/// Splits on `\n \r \r\n \x0b \x0c \x1c \x1d \x1e \x85 \u2028 \u2029`. A trailing line
/// break does not produce a final empty line, and the empty string yields no lines,
/// exactly like Python (`"a\n".splitlines() == ["a"]`, `"\n".splitlines() == [""]`).
pub(crate) fn py_splitlines(s: &str) -> SplitLines<'_> {
    SplitLines { rest: s }
}

/// Iterator returned by [`py_splitlines`].
#[derive(Debug, Clone)]
pub(crate) struct SplitLines<'a> {
    rest: &'a str,
}

impl<'a> Iterator for SplitLines<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let rest = self.rest;
        match rest.char_indices().find(|&(_, c)| is_py_line_break(c)) {
            Some((i, c)) => {
                let mut after = i + c.len_utf8();
                if c == '\r' && rest.as_bytes().get(after) == Some(&b'\n') {
                    after += 1;
                }
                self.rest = &rest[after..];
                Some(&rest[..i])
            }
            None => {
                self.rest = "";
                Some(rest)
            }
        }
    }
}

impl std::iter::FusedIterator for SplitLines<'_> {}

/// The `str` a file name is matched as, given its raw bytes.
///
/// Valid UTF-8 is borrowed unchanged. Python would decode an invalid name with
/// `surrogateescape`, turning every undecodable byte `b` (always `>= 0x80`) into the lone
/// surrogate `U+DC00 + b`. Rust strings cannot hold surrogates, so each such byte becomes
/// the private-use stand-in `U+10FF00 + b` (U+10FF80..=U+10FFFF) instead. Like the
/// surrogate, the stand-in matches `?`, `*`, `.` and negated classes, and never a literal
/// of an ordinary pattern. Which bytes count as undecodable follows the Unicode
/// "maximal subpart" rule that both Python's decoder and [`std::str::Utf8Chunks`] use;
/// every byte of an invalid subsequence is mapped on its own, as in Python.
///
/// Residual divergence: a character-class *range* that contains exactly one of the
/// surrogate and its stand-in (e.g. `[\u0100-\uffff]` contains U+DC80 but not U+10FF80),
/// and a pattern that spells a stand-in character literally, behave differently from the
/// reference; a real name containing U+10FF80..U+10FFFF is indistinguishable from an
/// undecodable one.
pub fn matching_str(name: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(name) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for chunk in name.utf8_chunks() {
        out.push_str(chunk.valid());
        for &b in chunk.invalid() {
            out.push(char::from_u32(STAND_IN_BASE + u32::from(b)).unwrap_or('\u{FFFD}'));
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<&str> {
        py_splitlines(s).collect()
    }

    #[test]
    fn whitespace_set_matches_python() {
        let ws: Vec<u32> = (0u32..0x3001)
            .filter_map(char::from_u32)
            .filter(|&c| is_py_whitespace(c))
            .map(u32::from)
            .collect();
        let mut expected = vec![0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20];
        expected.extend([0x85, 0xa0, 0x1680]);
        expected.extend(0x2000..=0x200a);
        expected.extend([0x2028, 0x2029, 0x202f, 0x205f, 0x3000]);
        assert_eq!(ws, expected);
        assert!(!is_py_whitespace('\u{200b}'));
        assert!(!is_py_whitespace('\u{feff}'));
    }

    #[test]
    fn strip_variants() {
        assert_eq!(py_strip("\x1f foo\u{3000}\x1c"), "foo");
        assert_eq!(py_strip("\u{200b}foo"), "\u{200b}foo");
        assert_eq!(py_rstrip("  foo \t"), "  foo");
        assert_eq!(py_strip(""), "");
        assert!(is_blank(""));
        assert!(is_blank(" \x1c\u{85}\u{a0}"));
        assert!(!is_blank(" x "));
        assert!(!is_blank("\u{feff}"));
    }

    #[test]
    fn splitlines_like_python() {
        assert_eq!(lines(""), Vec::<&str>::new());
        assert_eq!(lines("\n"), vec![""]);
        assert_eq!(lines("a\n"), vec!["a"]);
        assert_eq!(lines("a\n\nb"), vec!["a", "", "b"]);
        assert_eq!(lines("a\r\nb\rc"), vec!["a", "b", "c"]);
        assert_eq!(lines("a\r\r\nb"), vec!["a", "", "b"]);
        assert_eq!(lines("a\n\r"), vec!["a", ""]);
        assert_eq!(
            lines("1\x0b2\x0c3\x1c4\x1d5\x1e6\u{85}7\u{2028}8\u{2029}9"),
            vec!["1", "2", "3", "4", "5", "6", "7", "8", "9"]
        );
        assert_eq!(lines("a\x1fb"), vec!["a\x1fb"]);
        assert_eq!(lines("no break"), vec!["no break"]);
    }

    #[test]
    fn matching_str_maps_bad_bytes() {
        assert!(matches!(matching_str(b"abc"), Cow::Borrowed("abc")));
        assert_eq!(matching_str(b"a\xffb"), "a\u{10FFFF}b");
        assert_eq!(
            matching_str(b"\xe2\x82x\xc3\xa9"),
            "\u{10FFE2}\u{10FF82}x\u{e9}"
        );
        // An encoded surrogate is invalid UTF-8: every byte is escaped on its own.
        assert_eq!(
            matching_str(b"\xed\xa0\x80"),
            "\u{10FFED}\u{10FFA0}\u{10FF80}"
        );
    }
}
