//! Token counting and trimming with OpenAI's `cl100k_base` encoding.
//!
//! The reference counts tokens with Python tiktoken 0.8.0,
//! `len(enc.encode(text, disallowed_special=()))`: the text is split into
//! pieces by the cl100k pre-tokenizer regex and every piece is byte-pair
//! encoded; special-token strings such as `<|endoftext|>` are plain text.
//! We must reproduce that number exactly, fast, and without the reference's
//! failure modes (a regex stack overflow on ~1M-character runs of one class,
//! quadratic time on shorter runs).
//!
//! Three engines, all exact (each is tested against `tiktoken-rs` and Python
//! tiktoken in `tests/tokenize.rs`):
//!
//! * **bpe-openai** ([`bpe_openai::cl100k_base`]): linear time on any input
//!   and fast, but its vocabulary is deserialised from an embedded blob on
//!   first use, which costs ~25–30 ms — far more than the start-up of a whole
//!   CLI run over a small directory.
//! * **The start-up fast path** (private module `fast`): a hand-written,
//!   regex-free cl100k pre-tokenizer plus tiktoken's own rank-merge BPE over a
//!   zero-load table compiled into the binary (`tokenize/cl100k.bin`: the
//!   vocabulary sorted by bytes, with ranks, and the `\p{L}` / `\p{N}` ranges
//!   of the same Unicode tables bpe-openai's regex uses), with a per-thread
//!   cache of piece counts (rule files repeat their words). Its first call
//!   costs microseconds, but a piece it has not seen is slower to merge than
//!   in bpe-openai, so it only serves small texts
//!   until a byte budget ([`FAST_BUDGET`]) is used up (ski-rental: at most the
//!   cost of one vocabulary load is spent before we pay for the load), and it
//!   hands pieces longer than [`FAST_PIECE_MAX`] bytes to bpe-openai.
//! * **Split-parallel counting** ([`count_large`]): a big text is cut at
//!   positions where the pre-tokenizer provably starts a new piece (see
//!   [`is_cut`]), so the sum of the chunk counts equals the whole count, and
//!   the chunks are counted on the rayon pool.
//!
//! [`count`] picks the engine; every engine gives the same number.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

/// Texts at least this long (bytes) are counted by [`count_large`] from [`count`].
pub const PARALLEL_MIN: usize = 512 * 1024;

/// Target chunk size (bytes) for [`count_large`].
pub const CHUNK: usize = 128 * 1024;

/// Largest text (bytes) the start-up fast path takes in one call.
pub const FAST_TEXT_MAX: usize = 256 * 1024;

/// Total bytes the start-up fast path may count before [`count`] switches to
/// bpe-openai for good. Generous: loading bpe-openai's vocabulary costs
/// 25-45 ms on one thread while the others wait on it, which measured worse
/// than staying on the fast path for a batch of many small rule files (W2:
/// 1,000 files, ~2 MB). Large texts go to [`count_large`] (bpe-openai) anyway.
pub const FAST_BUDGET: usize = 8 * 1024 * 1024;

/// Longest pre-tokenizer piece (bytes) the fast path merges itself; longer
/// pieces (rank-merge is quadratic in the piece length) go to bpe-openai.
pub const FAST_PIECE_MAX: usize = 256;

/// Set once bpe-openai's vocabulary has been loaded.
static LOADED: AtomicBool = AtomicBool::new(false);
/// Bytes the fast path has counted so far.
static FAST_USED: AtomicUsize = AtomicUsize::new(0);

/// bpe-openai's tokenizer, recording that the (expensive) load has happened.
fn bpe() -> &'static bpe_openai::Tokenizer {
    let tok = bpe_openai::cl100k_base();
    LOADED.store(true, Ordering::Relaxed);
    tok
}

/// Whether the fast path should count `text` (reserves its bytes in the budget).
fn use_fast(text: &str) -> bool {
    if LOADED.load(Ordering::Relaxed) || text.len() > FAST_TEXT_MAX {
        return false;
    }
    FAST_USED.fetch_add(text.len(), Ordering::Relaxed) + text.len() <= FAST_BUDGET
}

/// Number of `cl100k_base` tokens of `text` encoded as ordinary text —
/// exactly Python tiktoken 0.8.0's `len(enc.encode(text, disallowed_special=()))`;
/// 0 for `""`.
///
/// Texts of at least [`PARALLEL_MIN`] bytes go to [`count_large`]; small texts
/// early in a process use the zero-load fast path; everything else uses
/// bpe-openai. All paths give the same number, in linear time on any input
/// (no quadratic blow-up on long runs of one character class). Never panics.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else if text.len() >= PARALLEL_MIN {
        count_large(text)
    } else if use_fast(text) {
        fast::count(text)
    } else {
        bpe().count(text)
    }
}

/// [`count`] for big texts, using several threads: the text is cut into
/// chunks of about [`CHUNK`] bytes at positions where the cl100k
/// pre-tokenizer provably starts a new piece ([`is_cut`]), the chunks are
/// counted on the rayon pool and the counts summed — the same result as
/// [`count`]. Texts below two chunks, or without any safe cut (e.g. one
/// megabyte of spaces), are counted on the calling thread. May be called from
/// inside a rayon task.
pub fn count_large(text: &str) -> usize {
    let tok = bpe();
    let cuts = cut_points(text, CHUNK);
    if cuts.len() <= 2 {
        return tok.count(text);
    }
    cuts.par_windows(2)
        .map(|w| tok.count(&text[w[0]..w[1]]))
        .sum()
}

/// Chunk boundaries for [`count_large`]: `0`, then safe cuts (see [`is_cut`])
/// at or after every multiple of `chunk`, then `text.len()`. Consecutive
/// entries are strictly increasing. Public so tests can check the cut rule.
pub fn cut_points(text: &str, chunk: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let chunk = chunk.max(1);
    let mut cuts = vec![0];
    let mut target = chunk;
    while target < bytes.len() {
        let from = target.max(cuts[cuts.len() - 1] + 1);
        match (from..bytes.len()).find(|&p| is_cut(text, p)) {
            Some(p) => {
                cuts.push(p);
                target = p + chunk;
            }
            None => break,
        }
    }
    cuts.push(bytes.len());
    cuts
}

/// Whether byte offset `p` (0 < p < len) is a position where tiktoken's
/// cl100k pre-tokenizer starts a new piece in *every* text, so that
/// `count(text) == count(&text[..p]) + count(&text[p..])`.
///
/// The regex is `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
/// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`, matched
/// leftmost-first, piece after piece. It has no look-behind, so once some
/// piece ends at `p` the pieces after `p` are those of `text[p..]`. For the
/// pieces before `p` to be those of `text[..p]` we need (i) the piece holding
/// byte `p-1` to end at `p` in the whole text, and (ii) no match attempt
/// before `p` to change when the text ends at `p`. All alternatives except
/// `\s+(?!\S)` are monotone (a match in `text[..p]` is a match in `text`, a
/// failure in `text` that never reads past `p` is a failure in `text[..p]`);
/// `(?!\S)` can only flip at `p` for a whitespace run that reaches `p`.
///
/// Rule A — `text[p-1] == '\n'` and `text[p]` is not whitespace:
/// (i) a `\n` can only be in a `\s*[\r\n]+`, `\s+(?!\S)` or `\s+` piece
/// (whitespace only) or in the `[\r\n]*` tail of a punctuation piece
/// (newlines only): the optional one-character prefixes `[^\r\n\p{L}\p{N}]?`
/// and ` ?` exclude `\n`, and contractions start with `'`. None of these can
/// take the non-whitespace `text[p]`, so the piece ends at `p`. (ii) Every
/// match attempt starting inside the whitespace run that ends at `p` reaches
/// `\s*[\r\n]+` (the letter/punctuation alternatives need a non-whitespace
/// second character, which inside the run is only possible at `p-1` = `\n`,
/// excluded from their prefixes) and that alternative succeeds — identically
/// in both texts, since `text[p]` is not whitespace — before `\s+(?!\S)` is
/// tried. Digit runs are safe: a `\n` precedes the run, so `\p{N}{1,3}`
/// groups from the same first digit.
///
/// Rule B — `text[p-1]` is an ASCII letter and `text[p]` is an ASCII
/// non-letter (digit, space, punctuation, control): (i) the piece holding the
/// letter is a contraction (fixed length, ending at or before the end of the
/// letter run) or a `\p{L}+` piece, which is greedy and cannot take the
/// non-letter `text[p]`; both end at `p`. (ii) `text[p-1]` is not whitespace,
/// so no whitespace run reaches `p`.
///
/// ASCII letters are `\p{L}` and other ASCII characters are not in every
/// Unicode version; "not whitespace" is checked conservatively (also
/// excluding U+001C..U+001F and U+180E, which some definitions call space).
/// `tests/tokenize.rs` checks the rule on random and adversarial texts.
pub fn is_cut(text: &str, p: usize) -> bool {
    let bytes = text.as_bytes();
    if p == 0 || p >= bytes.len() {
        return false;
    }
    let prev = bytes[p - 1];
    let next = bytes[p];
    if prev == b'\n' {
        // p follows an ASCII byte, so it is a char boundary.
        return match text[p..].chars().next() {
            Some(c) => !(c.is_whitespace() || ('\x1c'..='\x1f').contains(&c) || c == '\u{180e}'),
            None => false,
        };
    }
    prev.is_ascii_alphabetic() && next.is_ascii() && !next.is_ascii_alphabetic()
}

/// Cuts `text` to at most about `max_tokens` tokens, keeping the start —
/// the reference's `trim_start`. If `count(text) <= max_tokens` the text is
/// returned unchanged; otherwise the first
/// `floor(n_chars * (max_tokens / n_tokens) * 0.8)` code points (computed in
/// `f64` in that order) followed by `"..."`. Never panics (`max_tokens = 0`
/// gives `"..."` for any non-empty text).
pub fn trim(text: &str, max_tokens: usize) -> Cow<'_, str> {
    trim_counted(text, count(text), max_tokens)
}

/// [`trim`] for a caller that already knows `full_count == count(text)`, so
/// the text is not counted twice. A `full_count` that is not the text's count
/// gives the reference's answer for that count (no panic).
pub fn trim_counted(text: &str, full_count: usize, max_tokens: usize) -> Cow<'_, str> {
    if full_count <= max_tokens {
        return Cow::Borrowed(text);
    }
    let n_chars = text.chars().count();
    // Python: int(n_chars * (max_tokens / n_tokens) * 0.8); full_count >= 1
    // here, and `as usize` truncates toward zero like int().
    let keep = (n_chars as f64 * (max_tokens as f64 / full_count as f64) * 0.8) as usize;
    let end = text.char_indices().nth(keep).map_or(text.len(), |(i, _)| i);
    let mut out = String::with_capacity(end + 3);
    out.push_str(&text[..end]);
    out.push_str("...");
    Cow::Owned(out)
}

/// Counts with the zero-load engine only (no bpe-openai unless a piece is
/// longer than [`FAST_PIECE_MAX`] bytes). Exposed for tests and benchmarks;
/// [`count`] decides when to use it.
pub fn count_fast(text: &str) -> usize {
    fast::count(text)
}

/// [`count_fast`] without the per-thread piece cache: every piece is merged
/// afresh. Exposed for tests (the cache must not change any count) and
/// benchmarks.
pub fn count_fast_uncached(text: &str) -> usize {
    fast::count_uncached(text)
}

/// Counts with bpe-openai only (loading its vocabulary on first use). Exposed
/// for tests and benchmarks.
pub fn count_bpe(text: &str) -> usize {
    bpe().count(text)
}

/// The pieces of `text` under the cl100k pre-tokenizer, as split by the
/// fast path's hand-written matcher (for tests: they must equal tiktoken's).
pub fn pieces(text: &str) -> impl Iterator<Item = &str> {
    fast::Pieces { text, pos: 0 }
}

/// The zero-load start-up engine: regex-free pre-tokenizer and tiktoken's
/// rank-merge BPE over the embedded table.
mod fast {
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
    static TABLE_BYTES: &[u8] = include_bytes!("tokenize/cl100k.bin");

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
        // Byte length of the run of chars satisfying `f` starting at byte `from`.
        let run = |from: usize, f: fn(char) -> bool| -> usize {
            s[from..]
                .char_indices()
                .find(|&(_, c)| !f(c))
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
            return bpe().bpe.count(piece);
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
        fn count(&mut self, t: &Table, piece: &[u8]) -> usize {
            if piece.len() <= 1 || piece.len() > CACHED_PIECE_MAX {
                return piece_count(t, piece);
            }
            if let Some(&n) = self.counts.get(piece) {
                return n as usize;
            }
            let n = piece_count(t, piece);
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

    /// Token count of `text` with the fast engine.
    pub(super) fn count(text: &str) -> usize {
        let t = table();
        CACHE.with(|cache| {
            let mut cache = cache.borrow_mut();
            Pieces { text, pos: 0 }
                .map(|p| cache.count(t, p.as_bytes()))
                .sum()
        })
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
}

#[doc(hidden)]
/// Unicode classification used by the fast pre-tokenizer, exposed so tests can
/// check it exhaustively against the regex engine: `(is \p{L}, is \p{N}, is \s)`.
pub fn char_classes(c: char) -> (bool, bool, bool) {
    (fast::is_letter(c), fast::is_number(c), fast::is_space(c))
}

#[doc(hidden)]
/// The embedded table's token count (100256 for cl100k_base); for tests.
pub fn table_tokens() -> usize {
    fast::n_tokens()
}

#[doc(hidden)]
/// Rank of `bytes` in the embedded table, if it is a token; for tests.
pub fn table_rank(bytes: &[u8]) -> Option<u32> {
    fast::rank(bytes)
}
