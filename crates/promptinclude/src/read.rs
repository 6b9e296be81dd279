//! Reading a rule file the way the reference's `open(path, "r",
//! encoding="utf-8", errors="replace").read()` does, without its hazards.
//!
//! Bytes are decoded as UTF-8 with each maximal invalid subsequence replaced
//! by U+FFFD, then universal newlines apply (`\r\n` → `\n`, lone `\r` → `\n`);
//! a BOM is kept. Anything that is not a regular file after following links
//! (fifo, socket, device, directory) is *unreadable*: the reference would
//! block forever on a fifo, and we must never hang.

use std::io::Read;

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
    Withheld(Withheld),
}

/// Why a rule file was not read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Withheld {
    /// The file opened is outside the root (a link, or a linked directory).
    OutsideRoot(std::path::PathBuf),
    /// The file is inside a `.git` directory.
    InsideGitDir,
    /// The file resolves into `/proc`, `/sys` or `/dev`.
    Special(std::path::PathBuf),
    /// The file is larger than the cap.
    TooLarge {
        /// Its size (at least), in bytes.
        bytes: u64,
        /// The cap.
        cap: u64,
    },
    /// The repository's configuration widened `name_pattern`, and git's
    /// `HEAD` does not hold this file.
    NotCommitted,
    /// The file is reached through a link, and the root is in no git
    /// repository with a commit: no link can be shown to be the
    /// committer's.
    LinkWithoutRepository,
    /// A link on the way to the file (this one) is not the link `HEAD`
    /// holds at its path.
    LinkNotCommitted(std::path::PathBuf),
    /// The file a link reaches (this one) is not a file `HEAD` holds.
    TargetNotCommitted(std::path::PathBuf),
    /// The file (this one) differs from what `HEAD` holds: the content is a
    /// local change, not the committer's.
    ChangedSinceCommit(std::path::PathBuf),
    /// Where the file really is could not be established.
    Unresolved(String),
}

impl Withheld {
    /// A stable one-word name (JSON, logs).
    pub fn kind(&self) -> &'static str {
        match self {
            Withheld::OutsideRoot(_) => "outside_root",
            Withheld::InsideGitDir => "inside_git_dir",
            Withheld::Special(_) => "special_file",
            Withheld::TooLarge { .. } => "too_large",
            Withheld::NotCommitted => "not_committed",
            Withheld::LinkWithoutRepository => "link_without_repository",
            Withheld::LinkNotCommitted(_) => "link_not_committed",
            Withheld::TargetNotCommitted(_) => "target_not_committed",
            Withheld::ChangedSinceCommit(_) => "changed_since_commit",
            Withheld::Unresolved(_) => "unresolved",
        }
    }
}

impl std::fmt::Display for Withheld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Withheld::OutsideRoot(target) => {
                write!(f, "it resolves to {}, outside the root", target.display())
            }
            Withheld::InsideGitDir => f.write_str("it is inside a .git directory"),
            Withheld::Special(target) => write!(
                f,
                "it resolves to {}, whose content belongs to the reading process",
                target.display()
            ),
            Withheld::TooLarge { bytes, cap } => {
                write!(f, "it is {bytes} bytes, over the cap of {cap} bytes")
            }
            Withheld::NotCommitted => f.write_str(
                "the project's configuration widens name_pattern, and git's HEAD does not hold this file",
            ),
            Withheld::LinkWithoutRepository => f.write_str(
                "it is reached through a link, and the root is in no git repository with a commit: no link is read",
            ),
            Withheld::LinkNotCommitted(link) => write!(
                f,
                "the link {} on the way is not one git's HEAD holds",
                link.display()
            ),
            Withheld::TargetNotCommitted(target) => write!(
                f,
                "it is a link to {}, which git's HEAD does not hold",
                target.display()
            ),
            Withheld::ChangedSinceCommit(file) => write!(
                f,
                "{} differs from what git's HEAD holds: the content is a local change, not the committer's",
                file.display()
            ),
            Withheld::Unresolved(e) => write!(f, "its real path cannot be resolved ({e})"),
        }
    }
}

/// Decoded file text plus what decoding had to repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodedText {
    /// The text, as the reference's `read()` returns it.
    pub text: String,
    /// How many U+FFFD replacement characters decoding inserted.
    pub replaced: usize,
}

/// Reads and decodes a discovered candidate as the reference's `open` would
/// (a path of `PATH_MAX` bytes or more is unreadable), except that a
/// candidate found where the reference raises is read piecewise past
/// `PATH_MAX` (`Candidate::reads_piecewise`).
pub fn read_candidate(candidate: &Candidate) -> ReadOutcome {
    outcome_of(read_candidate_bytes(candidate))
}

/// The bytes of a discovered candidate (see [`read_candidate`]).
pub(crate) fn read_candidate_bytes(candidate: &Candidate) -> std::io::Result<Vec<u8>> {
    read_bytes(candidate.as_bytes(), candidate.reads_piecewise())
}

/// The outcome of reading a rule file, given what [`read_candidate_bytes`]
/// returned (for callers that also look at the bytes, such as hashing them).
pub(crate) fn outcome_of(read: std::io::Result<Vec<u8>>) -> ReadOutcome {
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
///
/// Holds about the larger of the bytes and the text at a time, never both:
/// valid UTF-8 becomes the text in place (newlines are converted in place,
/// as that only shrinks it), and anything else is decoded block by block from
/// its end, each block's bytes freed once it is decoded.
pub fn decode(bytes: Vec<u8>) -> DecodedText {
    match String::from_utf8(bytes) {
        Ok(text) => DecodedText {
            text: newlines_in_place(text),
            replaced: 0,
        },
        Err(e) => decode_invalid(e.into_bytes()),
    }
}

/// [`universal_newlines`] on `text` without a copy.
fn newlines_in_place(text: String) -> String {
    let Some(first) = text.find('\r') else {
        return text;
    };
    let mut bytes = text.into_bytes();
    let (mut read, mut write) = (first, first);
    while read < bytes.len() {
        // bytes[read] is a \r: it becomes \n, and swallows a \n after it.
        bytes[write] = b'\n';
        write += 1;
        read += 1;
        if bytes.get(read) == Some(&b'\n') {
            read += 1;
        }
        let next = bytes[read..]
            .iter()
            .position(|&b| b == b'\r')
            .map_or(bytes.len(), |i| read + i);
        bytes.copy_within(read..next, write);
        write += next - read;
        read = next;
    }
    bytes.truncate(write);
    // Only ASCII bytes were removed or rewritten, so the text is still UTF-8.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Bytes decoded at a time by [`decode_invalid`].
const BLOCK: usize = 1 << 20;

/// [`decode`] of bytes that are not valid UTF-8: the last block is decoded
/// and its bytes cut off the end, block after block, then the decoded
/// blocks are joined (each freed once copied).
fn decode_invalid(mut bytes: Vec<u8>) -> DecodedText {
    let mut blocks: Vec<String> = Vec::new();
    let mut replaced = 0;
    while !bytes.is_empty() {
        let at = bytes.len().saturating_sub(BLOCK);
        let split = (at..bytes.len())
            .find(|&p| splits_cleanly(&bytes, p))
            .unwrap_or(0);
        let (text, n) = decode_block(&bytes[split..]);
        blocks.push(text);
        replaced += n;
        bytes.truncate(split);
        bytes.shrink_to_fit();
    }
    let mut text = String::with_capacity(blocks.iter().map(String::len).sum());
    while let Some(block) = blocks.pop() {
        text.push_str(&block);
    }
    DecodedText { text, replaced }
}

/// Whether decoding `bytes[..p]` and `bytes[p..]` apart gives the decoding
/// of `bytes`: no character, invalid sequence or `\r\n` spans `p`. A
/// sequence is a lead byte and at most three continuation bytes
/// (`0x80..=0xBF`), so none spans `p` when `bytes[p]` is not a continuation
/// byte, or is one after three others.
fn splits_cleanly(bytes: &[u8], p: usize) -> bool {
    let continues = |b: u8| (0x80..=0xbf).contains(&b);
    match (p.checked_sub(1).map(|i| bytes[i]), bytes.get(p)) {
        (None, _) | (_, None) => true,
        (Some(b'\r'), Some(b'\n')) => false,
        (_, Some(&b)) if !continues(b) => true,
        _ => p >= 3 && bytes[p - 3..p].iter().all(|&b| continues(b)),
    }
}

/// One block decoded: the text and how many U+FFFD it holds for invalid bytes.
fn decode_block(bytes: &[u8]) -> (String, usize) {
    let mut text = String::with_capacity(bytes.len() + 16);
    let mut replaced = 0;
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        if !chunk.invalid().is_empty() {
            text.push('\u{FFFD}');
            replaced += 1;
        }
    }
    (newlines_in_place(text), replaced)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// `\r\n` → `\n`, then any remaining `\r` → `\n`.
    fn universal_newlines(text: &str) -> Cow<'_, str> {
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
    fn blockwise_decoding_equals_whole_decoding() {
        // Every split point of short byte strings rich in lead, continuation,
        // \r and \n bytes: the two halves decode to the whole's decoding.
        let alphabet = [
            b'a', b'\r', b'\n', 0x80, 0xbf, 0xc3, 0xe2, 0x82, 0xf0, 0x9f, 0xff, 0xed, 0xa0,
        ];
        // The obvious way: lossy decoding of the whole, then newlines.
        let whole = |b: &[u8]| {
            let text = universal_newlines(&String::from_utf8_lossy(b)).into_owned();
            let replaced = b.utf8_chunks().filter(|c| !c.invalid().is_empty()).count();
            (text, replaced)
        };
        let mut state = 0x9e37_79b9_u32;
        for _ in 0..20_000 {
            let len = (state % 9) as usize;
            let mut b = Vec::with_capacity(len);
            for _ in 0..len {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                b.push(alphabet[(state % alphabet.len() as u32) as usize]);
            }
            let (text, replaced) = whole(&b);
            assert_eq!(decode(b.clone()).text, text, "{b:?}");
            assert_eq!(decode(b.clone()).replaced, replaced, "{b:?}");
            for p in 0..=b.len() {
                if splits_cleanly(&b, p) {
                    let (x, nx) = decode_block(&b[..p]);
                    let (y, ny) = decode_block(&b[p..]);
                    assert_eq!(x + &y, text, "{b:?} split at {p}");
                    assert_eq!(nx + ny, replaced, "{b:?} split at {p}");
                }
            }
        }
        // Many blocks: a long text of invalid bytes and line ends.
        let long: Vec<u8> = (0..3 * BLOCK + 5)
            .map(|i| alphabet[(i * 7 + i / 3) % alphabet.len()])
            .collect();
        let (text, replaced) = whole(&long);
        let d = decode(long);
        assert_eq!((d.text, d.replaced), (text, replaced));
    }

    #[test]
    fn crlf_split_by_invalid_byte_is_two_newlines() {
        assert_eq!(decode(b"a\r\xffb\n".to_vec()).text, "a\n\u{FFFD}b\n");
    }
}
