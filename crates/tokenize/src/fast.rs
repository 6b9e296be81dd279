//! The regex-free cl100k pre-tokenizer and the per-thread piece cache that
//! both counting engines use, and the zero-load start-up engine's
//! rank-merge BPE over the embedded table.

use super::{bpe, FAST_PIECE_MAX};
use rustc_hash::FxHasher;
use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;

/// The embedded table, generated from bpe-openai's vocabulary and
/// regex-syntax's Unicode tables by `tests/tokenize.rs`
/// (`regenerate_cl100k_table`, ignored by default) and verified against
/// them by the same file. Layout, little-endian `u32` words: magic
/// `"PIT2"`, n_tokens, n_letter_ranges, n_number_ranges, first[257] (for
/// each first byte b, tokens starting with b are the sorted indices
/// first[b]..first[b + 1]; precomputed so that start-up touches no
/// pages of the table), offsets[n_tokens + 1] (into the byte area, tokens sorted by bytes),
/// ranks[n_tokens], letter ranges [lo, hi] ..., number ranges [lo, hi]
/// ..., then the byte area.
static TABLE_BYTES: &[u8] = include_bytes!("cl100k.bin");

/// Views into [`TABLE_BYTES`].
struct Table {
    offsets: &'static [u8],
    ranks: &'static [u8],
    letters: &'static [u8],
    numbers: &'static [u8],
    area: &'static [u8],
    /// Tokens starting with byte b are the sorted indices first[b]..first[b + 1].
    first: [u32; 257],
    n: usize,
}

#[inline]
fn word(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]])
}

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let b = TABLE_BYTES;
        assert_eq!(&b[..4], b"PIT2", "corrupt tokenize/cl100k.bin");
        let n = word(b, 1) as usize;
        let nl = word(b, 2) as usize;
        let nn = word(b, 3) as usize;
        let mut at = 16;
        let mut take = |words: usize| {
            let s = &b[at..at + 4 * words];
            at += 4 * words;
            s
        };
        let first = take(257);
        let offsets = take(n + 1);
        let ranks = take(n);
        let letters = take(2 * nl);
        let numbers = take(2 * nn);
        let area = &b[at..];
        let mut t = Table {
            offsets,
            ranks,
            letters,
            numbers,
            area,
            first: [0; 257],
            n,
        };
        for (fb, slot) in t.first.iter_mut().enumerate() {
            *slot = word(first, fb);
        }
        t
    })
}

impl Table {
    #[inline]
    fn token(&self, i: usize) -> &'static [u8] {
        let s = word(self.offsets, i) as usize;
        let e = word(self.offsets, i + 1) as usize;
        &self.area[s..e]
    }

    /// Rank of the token with exactly these bytes.
    #[inline]
    fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let fb = usize::from(*bytes.first()?);
        let (mut lo, mut hi) = (self.first[fb] as usize, self.first[fb + 1] as usize);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.token(mid)[1..].cmp(&bytes[1..]) {
                Ordering::Less => lo = mid + 1,
                Ordering::Greater => hi = mid,
                Ordering::Equal => return Some(word(self.ranks, mid)),
            }
        }
        None
    }

    fn in_ranges(ranges: &[u8], c: u32) -> bool {
        let (mut lo, mut hi) = (0, ranges.len() / 8);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if c < word(ranges, 2 * mid) {
                hi = mid;
            } else if c > word(ranges, 2 * mid + 1) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        false
    }
}

/// `\p{L}` (regex-syntax's tables, as used by bpe-openai and tiktoken).
#[inline]
pub(super) fn is_letter(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphabetic();
    }
    Table::in_ranges(table().letters, c as u32)
}

/// `\p{N}`.
#[inline]
pub(super) fn is_number(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_digit();
    }
    Table::in_ranges(table().numbers, c as u32)
}

/// `\s`: Unicode White_Space (checked exhaustively against the regex
/// engine by the tests).
#[inline]
pub(super) fn is_space(c: char) -> bool {
    c.is_whitespace()
}

/// `[^\s\p{L}\p{N}]`.
#[inline]
fn is_other(c: char) -> bool {
    !is_space(c) && !is_letter(c) && !is_number(c)
}

/// Iterator over pre-tokenizer pieces.
pub(super) struct Pieces<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let rest = &self.text[self.pos..];
        if rest.is_empty() {
            return None;
        }
        let len = piece_len(rest);
        self.pos += len;
        Some(&rest[..len])
    }
}

/// Byte length of the first piece of non-empty `s`: the leftmost-first
/// match of the cl100k regex at the start of `s`, alternative by
/// alternative.
fn piece_len(s: &str) -> usize {
    let mut it = s.chars();
    let c0 = it.next().unwrap_or('\0');
    let c1 = it.next();
    let l0 = c0.len_utf8();
    // Byte length of the run of chars satisfying `f` starting at byte `from`
    // (a char like the one before is not classified again: a long run of one
    // non-ASCII character, such as U+FFFD for invalid bytes, is one lookup).
    let run = |from: usize, f: fn(char) -> bool| -> usize {
        let mut last = None;
        s[from..]
            .char_indices()
            .find(|&(_, c)| {
                if last == Some(c) {
                    return false;
                }
                last = Some(c);
                !f(c)
            })
            .map_or(s.len() - from, |(i, _)| i)
    };
    // (?i:'s|'t|'re|'ve|'m|'ll|'d); (?i) folds s with U+017F (long s).
    if c0 == '\'' {
        if let Some(c1) = c1 {
            match c1 {
                's' | 'S' | '\u{17f}' | 't' | 'T' | 'm' | 'M' | 'd' | 'D' => {
                    return l0 + c1.len_utf8()
                }
                'r' | 'R' | 'v' | 'V' if matches!(it.next(), Some('e' | 'E')) => return 3,
                'l' | 'L' if matches!(it.next(), Some('l' | 'L')) => return 3,
                _ => {}
            }
        }
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if is_letter(c0) {
        return l0 + run(l0, is_letter);
    }
    if c0 != '\r' && c0 != '\n' && !is_number(c0) {
        if let Some(c1) = c1.filter(|&c| is_letter(c)) {
            let l01 = l0 + c1.len_utf8();
            return l01 + run(l01, is_letter);
        }
    }
    // \p{N}{1,3}
    if is_number(c0) {
        let mut len = l0;
        for c in s[l0..].chars().take(2) {
            if !is_number(c) {
                break;
            }
            len += c.len_utf8();
        }
        return len;
    }
    // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
    let other_start = if c0 == ' ' && c1.is_some_and(is_other) {
        Some(1)
    } else if is_other(c0) {
        Some(0)
    } else {
        None
    };
    if let Some(start) = other_start {
        let end = start + run(start, is_other);
        return end + run(end, |c| c == '\r' || c == '\n');
    }
    // c0 is whitespace. The maximal whitespace run is s[..ws_end].
    let ws_end = run(0, is_space);
    let ws = &s[..ws_end];
    // \s*[\r\n]+ : greedy \s*, backtracking to the last newline in the run.
    if let Some(i) = ws.rfind(['\r', '\n']) {
        return i + 1;
    }
    // \s+(?!\S) : the whole run at the end of the text, else all but its
    // last character if that leaves at least one.
    if ws_end == s.len() {
        return ws_end;
    }
    let last = ws.chars().next_back().map_or(0, char::len_utf8);
    if ws_end > last {
        return ws_end - last;
    }
    // \s+
    ws_end
}

/// Tokens in one piece: tiktoken's `byte_pair_merge`, exactly (merge the
/// adjacent pair whose concatenation has the lowest rank, leftmost on
/// ties, until no pair is a token).
fn piece_count(t: &Table, piece: &[u8]) -> usize {
    if piece.len() <= 1 || t.rank(piece).is_some() {
        return piece.len().min(1);
    }
    if piece.len() > FAST_PIECE_MAX {
        return super::long::count(&bpe().bpe, piece);
    }
    const NONE: u32 = u32::MAX;
    // parts[i] = (start of part i, rank of merging parts i and i+1).
    let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
    let mut min = (NONE, usize::MAX);
    for i in 0..piece.len() - 1 {
        let r = t.rank(&piece[i..i + 2]).unwrap_or(NONE);
        if r < min.0 {
            min = (r, i);
        }
        parts.push((i, r));
    }
    parts.push((piece.len() - 1, NONE));
    parts.push((piece.len(), NONE));
    let get_rank = |parts: &[(usize, u32)], i: usize| -> u32 {
        if i + 3 < parts.len() {
            t.rank(&piece[parts[i].0..parts[i + 3].0]).unwrap_or(NONE)
        } else {
            NONE
        }
    };
    while min.0 != NONE {
        let i = min.1;
        if i > 0 {
            parts[i - 1].1 = get_rank(&parts, i - 1);
        }
        parts[i].1 = get_rank(&parts, i);
        parts.remove(i + 1);
        min = (NONE, usize::MAX);
        for (j, &(_, r)) in parts[..parts.len() - 1].iter().enumerate() {
            if r < min.0 {
                min = (r, j);
            }
        }
    }
    parts.len() - 1
}

/// Pieces up to this many bytes are remembered by [`PieceCache`].
const CACHED_PIECE_MAX: usize = 48;

/// Entries a thread's [`PieceCache`] holds before it starts afresh.
const CACHE_ENTRIES: usize = 1 << 14;

/// Token counts of pieces this thread has already merged. Prose and code
/// repeat the same words, so most pieces of a rule file are hits: a hash
/// probe instead of a BPE merge over binary searches in the table. The
/// count of a piece never depends on its context, so the cache is exact;
/// it is bounded (at most [`CACHE_ENTRIES`] pieces of at most
/// [`CACHED_PIECE_MAX`] bytes, under 1 MiB per thread) and cleared when full.
#[derive(Default)]
struct PieceCache {
    counts: HashMap<Box<[u8]>, u32, BuildHasherDefault<FxHasher>>,
}

impl PieceCache {
    /// Count of `piece`, from the cache or from `merge` (which must give the
    /// piece's exact BPE count).
    #[inline]
    fn count(&mut self, piece: &[u8], merge: impl Fn(&[u8]) -> usize) -> usize {
        if piece.len() <= 1 {
            // Every single byte is a token.
            return piece.len();
        }
        if piece.len() > CACHED_PIECE_MAX {
            return merge(piece);
        }
        if let Some(&n) = self.counts.get(piece) {
            return n as usize;
        }
        let n = merge(piece);
        if self.counts.len() >= CACHE_ENTRIES {
            self.counts.clear();
        }
        // A piece of at most CACHED_PIECE_MAX bytes has fewer tokens than that.
        self.counts.insert(piece.into(), n as u32);
        n
    }
}

thread_local! {
    static CACHE: RefCell<PieceCache> = RefCell::default();
}

/// Token count of `text`: the hand-written pre-tokenizer, this thread's
/// piece cache, and `merge` for the pieces the cache does not hold.
fn count_pieces(text: &str, merge: impl Fn(&[u8]) -> usize) -> usize {
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        Pieces { text, pos: 0 }
            .map(|p| cache.count(p.as_bytes(), &merge))
            .sum()
    })
}

/// Token count of `text` with the zero-load engine: pieces the cache does
/// not hold are merged by rank over the embedded table.
pub(super) fn count(text: &str) -> usize {
    let t = table();
    count_pieces(text, |p| piece_count(t, p))
}

/// Token count of `text` once bpe-openai's vocabulary is loaded: pieces the
/// cache does not hold go to its backtracking encoder (faster than the
/// rank-merge on pieces not seen before), window by window for a piece over
/// [`super::LONG_PIECE`] bytes. Splitting with the hand-written
/// pre-tokenizer rather than bpe-openai's regex skips a regex search and a
/// regex-cache pool round trip per piece, which were about half the time of
/// counting a large text.
pub(super) fn count_loaded(text: &str, bpe: &bpe_openai::Tokenizer) -> usize {
    count_pieces(text, |p| super::long::count(&bpe.bpe, p))
}

/// Token count of `text` with the fast engine, bypassing the piece cache
/// (for tests that check the cache changes nothing).
pub(super) fn count_uncached(text: &str) -> usize {
    let t = table();
    Pieces { text, pos: 0 }
        .map(|p| piece_count(t, p.as_bytes()))
        .sum()
}

/// Number of tokens in the embedded table.
pub(super) fn n_tokens() -> usize {
    table().n
}

/// Rank of `bytes` in the embedded table.
pub(super) fn rank(bytes: &[u8]) -> Option<u32> {
    table().rank(bytes)
}
