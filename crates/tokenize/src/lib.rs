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
//! tiktoken in `tests/tokenize.rs`). Two share a hand-written, regex-free
//! cl100k pre-tokenizer (private module `fast`, tested piece for piece
//! against bpe-openai's regex) and a per-thread cache of piece counts (rule
//! files repeat their words); they differ in how a piece the cache does not
//! hold is merged:
//!
//! * **The start-up engine** ([`count_fast`]): tiktoken's own rank-merge BPE
//!   over a zero-load table compiled into the binary (`tokenize/cl100k.bin`:
//!   the vocabulary sorted by bytes, with ranks, and the `\p{L}` / `\p{N}`
//!   ranges of the same Unicode tables bpe-openai's regex uses). Its first
//!   call costs microseconds, but a piece it has not seen is slower to merge
//!   than in bpe-openai, so it only serves small texts until a byte budget
//!   (8 MiB of text, `FAST_BUDGET`) is used up (ski-rental: at most the cost of one
//!   vocabulary load is spent before we pay for the load), and it hands
//!   pieces longer than 256 bytes (`FAST_PIECE_MAX`) to bpe-openai.
//! * **The loaded engine** ([`count_hybrid`]): bpe-openai's backtracking
//!   encoder ([`bpe_openai::cl100k_base`]), linear time on any piece, whose
//!   vocabulary is deserialised from an embedded blob on first use (~25–30
//!   ms — far more than the start-up of a whole CLI run over a small
//!   directory). bpe-openai's own `count` splits with a regex; splitting
//!   with the hand-written pre-tokenizer instead halves the time of a large
//!   text (no regex search, no regex-cache pool round trip per piece).
//! * **Split-parallel counting** ([`count_large`]): a big text is cut at
//!   positions where the pre-tokenizer provably starts a new piece (see
//!   [`is_cut`]), so the sum of the chunk counts equals the whole count, and
//!   the chunks are counted by the loaded engine on the rayon pool.
//!
//! Every engine hands a piece longer than [`LONG_PIECE`] (one pre-tokenizer
//! match that no cut can split: a run of NUL bytes, of spaces, of one
//! punctuation mark, of letters) to the windowed counter of the private
//! module `long`, which holds two 1 MiB windows' tokens instead of the whole
//! piece's and proves the windows' encodings stitch into the piece's.
//!
//! [`count_bpe`] (bpe-openai alone, its regex included) is kept for tests
//! and benchmarks as an independent engine.
//!
//! [`count`] picks the engine; every engine gives the same number.
//!
//! [`Memo`] counts many texts that share long stretches (the same rule
//! files inside different framings, as `audit --agents` counts them): it
//! cuts each text at every line start where [`is_cut`] holds (a rule that
//! depends only on the bytes around the line start, so a file body is cut
//! the same way in any framing) and remembers the count of every chunk, so
//! a repeated file body costs a hash lookup per line; the sum is
//! [`count`]'s number.

#![deny(missing_docs)]

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

mod fast;
mod long;
mod memo;

pub use long::LONG_PIECE;
#[doc(hidden)]
pub use memo::{chunk_bounds, MemoStats};
pub use memo::{Memo, Split};

/// Texts at least this long (bytes) are counted by [`count_large`] from [`count`].
pub(crate) const PARALLEL_MIN: usize = 512 * 1024;

/// Target chunk size (bytes) for [`count_large`].
pub const CHUNK: usize = 128 * 1024;

/// Largest text (bytes) the start-up fast path takes in one call.
pub(crate) const FAST_TEXT_MAX: usize = 256 * 1024;

/// Total bytes the start-up fast path may count before [`count`] switches to
/// bpe-openai for good. Generous: loading bpe-openai's vocabulary costs
/// 25-45 ms on one thread while the others wait on it, which measured worse
/// than staying on the fast path for a batch of many small rule files (W2:
/// 1,000 files, ~2 MB). Large texts go to [`count_large`] (bpe-openai) anyway.
pub(crate) const FAST_BUDGET: usize = 8 * 1024 * 1024;

/// Longest pre-tokenizer piece (bytes) the fast path merges itself; longer
/// pieces (rank-merge is quadratic in the piece length) go to bpe-openai.
pub(crate) const FAST_PIECE_MAX: usize = 256;

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
/// Texts of at least `PARALLEL_MIN` bytes go to [`count_large`]; small texts
/// early in a process use the zero-load start-up engine; everything else
/// the loaded engine ([`count_hybrid`]). All paths give the same number, in linear time on any input
/// (no quadratic blow-up on long runs of one character class). Never panics.
pub fn count(text: &str) -> usize {
    if text.is_empty() {
        0
    } else if text.len() >= PARALLEL_MIN {
        count_large(text)
    } else if use_fast(text) {
        fast::count(text)
    } else {
        fast::count_loaded(text, bpe())
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
        return fast::count_loaded(text, tok);
    }
    cuts.par_windows(2)
        .map(|w| fast::count_loaded(&text[w[0]..w[1]], tok))
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
/// longer than `FAST_PIECE_MAX` bytes). Exposed for tests and benchmarks;
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

/// Counts with bpe-openai only, its own regex pre-tokenizer included (loading
/// its vocabulary on first use). Exposed for tests and benchmarks.
pub fn count_bpe(text: &str) -> usize {
    bpe().count(text)
}

/// Counts the way [`count`] does once bpe-openai is loaded: the hand-written
/// pre-tokenizer, the per-thread piece cache, and bpe-openai's encoder for
/// pieces not in the cache (loading its vocabulary on first use). Exposed for
/// tests and benchmarks.
pub fn count_hybrid(text: &str) -> usize {
    fast::count_loaded(text, bpe())
}

/// The pieces of `text` under the cl100k pre-tokenizer, as split by the
/// fast path's hand-written matcher (for tests: they must equal tiktoken's).
pub fn pieces(text: &str) -> impl Iterator<Item = &str> {
    fast::Pieces { text, pos: 0 }
}

#[doc(hidden)]
/// Tokens in one pre-tokenizer piece counted window by window as for a
/// piece over [`LONG_PIECE`] bytes, with windows of `window` bytes
/// overlapping by `overlap` (for tests: small windows put many stitches in
/// a short piece). Must equal bpe-openai's count of the piece.
pub fn count_piece_windowed(piece: &[u8], window: usize, overlap: usize) -> usize {
    long::count_windowed(&bpe().bpe, piece, window, overlap)
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
