//! Reading a rule file the way the reference's `open(path, "r",
//! encoding="utf-8", errors="replace").read()` does, without its hazards.
//!
//! Bytes are decoded as UTF-8 with each maximal invalid subsequence replaced
//! by U+FFFD, then universal newlines apply (`\r\n` → `\n`, lone `\r` → `\n`);
//! a BOM is kept. Anything that is not a regular file after following links
//! (fifo, socket, device, directory) is *unreadable*: the reference would
//! block forever on a fifo, and we must never hang.

use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use crate::discover::Candidate;

/// What reading a candidate gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    /// Decoded text that is not blank.
    Text(DecodedText),
    /// Empty or only Python whitespace: the reference passes over it.
    Blank,
    /// Could not be opened or read, or is not a regular file.
    Unreadable(String),
    /// Not read: the [`crate::trust::ReadPolicy`] keeps it out of the prompt.
    Withheld(crate::trust::Withheld),
}

/// Decoded file text plus what decoding had to repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedText {
    /// The text, as the reference's `read()` returns it.
    pub text: String,
    /// How many U+FFFD replacement characters decoding inserted.
    pub replaced: usize,
}

/// Reads and decodes the rule file at `path`, as the reference's `open`
/// would: a path of `PATH_MAX` bytes or more is unreadable.
pub fn read_rule_file(path: &Path) -> ReadOutcome {
    outcome_of(read_regular_file(path))
}

/// Reads and decodes a discovered candidate: as [`read_rule_file`], except
/// that a candidate found where the reference raises is read piecewise past
/// `PATH_MAX` ([`Candidate::reads_piecewise`]).
pub fn read_candidate(candidate: &Candidate) -> ReadOutcome {
    outcome_of(read_candidate_bytes(candidate))
}

/// The bytes of a discovered candidate (see [`read_candidate`]).
pub fn read_candidate_bytes(candidate: &Candidate) -> std::io::Result<Vec<u8>> {
    read_bytes(candidate.as_bytes(), candidate.reads_piecewise())
}

/// The outcome of reading a rule file, given what [`read_regular_file`]
/// returned (for callers that also look at the bytes, such as hashing them).
pub fn outcome_of(read: std::io::Result<Vec<u8>>) -> ReadOutcome {
    match read {
        Ok(bytes) => {
            let decoded = decode(bytes);
            if crate::pystr::is_blank(&decoded.text) {
                ReadOutcome::Blank
            } else {
                ReadOutcome::Text(decoded)
            }
        }
        Err(e) => ReadOutcome::Unreadable(e.to_string()),
    }
}

/// Reads the whole file if, after following links, it is a regular file.
///
/// The type is checked before opening (so a device is never opened) and again
/// on the open handle, which is opened non-blocking (so a fifo swapped in
/// between the two checks cannot block us). A path of `PATH_MAX` bytes or
/// more fails with `ENAMETOOLONG`, as for the reference.
pub fn read_regular_file(path: &Path) -> std::io::Result<Vec<u8>> {
    read_bytes(path.as_os_str().as_encoded_bytes(), false)
}

fn read_bytes(path: &[u8], piecewise: bool) -> std::io::Result<Vec<u8>> {
    let (mut file, len) = crate::sys::open_regular_file(path, piecewise)?;
    // One byte more than the size, so that a file read whole comes back
    // short and no call is needed just to see the end; a file that grew
    // since is read on to its end.
    let capacity = usize::try_from(len).unwrap_or(0).saturating_add(1);
    let mut bytes = Vec::with_capacity(capacity);
    let n = (&mut file).take(capacity as u64).read_to_end(&mut bytes)?;
    if n == capacity {
        file.read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// Decodes bytes as the reference does: UTF-8 with replacement, then universal newlines.
pub fn decode(bytes: Vec<u8>) -> DecodedText {
    let (text, replaced) = match String::from_utf8(bytes) {
        Ok(text) => (text, 0),
        Err(e) => {
            let bytes = e.into_bytes();
            let mut text = String::with_capacity(bytes.len() + 16);
            let mut replaced = 0;
            for chunk in bytes.utf8_chunks() {
                text.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    text.push('\u{FFFD}');
                    replaced += 1;
                }
            }
            (text, replaced)
        }
    };
    let text = match universal_newlines(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(converted) => converted,
    };
    DecodedText { text, replaced }
}

/// `\r\n` → `\n`, then any remaining `\r` → `\n`.
pub fn universal_newlines(text: &str) -> Cow<'_, str> {
    if !text.contains('\r') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('\r') {
        out.push_str(&rest[..i]);
        out.push('\n');
        rest = &rest[i + 1..];
        if let Some(after) = rest.strip_prefix('\n') {
            rest = after;
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newlines() {
        assert_eq!(universal_newlines("a\r\nb\rc\n\r\r\n"), "a\nb\nc\n\n\n");
        assert_eq!(universal_newlines("\r"), "\n");
        assert!(matches!(universal_newlines("plain\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn replacement_is_per_maximal_subpart() {
        // Python: b"a\xe2\x82b\xff\xfe\xef\xbb\xbfz".decode("utf-8", "replace")
        //   == 'a\ufffdb\ufffd\ufffd\ufeffz'
        let d = decode(b"a\xe2\x82b\xff\xfe\xef\xbb\xbfz".to_vec());
        assert_eq!(d.text, "a\u{FFFD}b\u{FFFD}\u{FFFD}\u{FEFF}z");
        assert_eq!(d.replaced, 3);
        // A surrogate encoding is three invalid bytes in Python: b"\xed\xa0\x80" -> 3 x U+FFFD
        assert_eq!(
            decode(b"\xed\xa0\x80".to_vec()).text,
            "\u{FFFD}\u{FFFD}\u{FFFD}"
        );
    }

    #[test]
    fn crlf_split_by_invalid_byte_is_two_newlines() {
        assert_eq!(decode(b"a\r\xffb\n".to_vec()).text, "a\n\u{FFFD}b\n");
    }
}
