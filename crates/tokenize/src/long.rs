//! Exact token counts of very long pre-tokenizer pieces in bounded memory.
//!
//! A piece cannot be cut where the pre-tokenizer restarts: it *is* one
//! pre-tokenizer match (a sparse file is one run of NUL bytes, a line of
//! `=` one punctuation run, a CJK paragraph without punctuation one letter
//! run). bpe-openai's backtracking encoder counts such a piece in linear
//! time but keeps every token of it (4 bytes each, up to one per byte) and a
//! bit per byte: 4.1 times the piece. Here the piece is encoded window by
//! window instead, and the windows are stitched where their encodings
//! provably agree with the encoding of the whole piece.
//!
//! Why stitching is exact. The bpe crate (whose encoder we already trust to
//! be tiktoken's BPE) rests on these facts about a piece's BPE encoding, the
//! unique *valid* token sequence for its bytes (its README, "Corollary
//! I–IV"): every run of consecutive tokens of a valid sequence is itself a
//! valid sequence (for the bytes it covers), and a sequence is valid exactly
//! when each pair of neighbouring tokens is. Let `e(W)` be the encoding of a
//! window `W`, and let the next window `W'` start inside `W`. If `e(W)` and
//! `e(W')` hold one same token `t` over the same bytes, then `e(W)` up to
//! and including `t`, followed by `e(W')` after `t`, has every neighbouring
//! pair inside `e(W)` or inside `e(W')`, so it is valid: it is the encoding of
//! the bytes from `W`'s start to `W'`'s end. Chaining this from the piece's
//! first window to its last gives a valid sequence for the whole piece, which
//! is therefore the piece's encoding; its length is the sum of the stitched
//! segments' lengths.
//!
//! A stitch needs such a shared token. The next window starts at a token
//! boundary of `e(W)` one overlap before `W`'s end, so it starts aligned
//! with the encoding of the text before it, which is what BPE's
//! leftmost-first merging follows on runs; the encodings then agree token for
//! token away from `W`'s end. When an overlap holds no shared token (no input
//! we know of, but nothing proves it cannot happen) the piece is counted
//! again with windows and overlaps four times larger, and finally whole, so
//! the count is exact on every input and memory stays bounded on all but such
//! inputs.
//!
//! A window with the same bytes as the window before has the same encoding,
//! shifted, and is not encoded again: when the first window repeats with a
//! period of at most [`MAX_PERIOD`] bytes (a run of one character or one
//! short phrase), each next window is started a whole number of periods on,
//! so a long run costs two windows' encodings and one comparison per window
//! (bpe-openai's encoder takes 0.2–0.5 s per MiB of `=` or `-`).

use bpe_openai::byte_pair_encoding::BytePairEncoding;

/// Pieces longer than this (bytes) are counted window by window.
pub const LONG_PIECE: usize = 1 << 20;

/// Window length (bytes) for a long piece: its encoding takes at most four
/// bytes per byte, 4 MiB.
const WINDOW: usize = 1 << 20;

/// Bytes by which consecutive windows overlap at first.
const OVERLAP: usize = 64 << 10;

/// Tokens in `piece`, exactly `bpe.count(piece)`; pieces longer than
/// [`LONG_PIECE`] are counted in windows of [`WINDOW`] bytes, holding two
/// windows' tokens at a time.
pub(super) fn count(bpe: &BytePairEncoding, piece: &[u8]) -> usize {
    if piece.len() <= LONG_PIECE {
        return bpe.count(piece);
    }
    count_windowed(bpe, piece, WINDOW, OVERLAP)
}

/// [`count`] with the given window and overlap (bytes, each at least 1):
/// retried with both four times larger while some overlap holds no shared
/// token, and counted whole once a window would hold the piece.
pub(super) fn count_windowed(
    bpe: &BytePairEncoding,
    piece: &[u8],
    mut window: usize,
    mut overlap: usize,
) -> usize {
    loop {
        window = window.max(1);
        // A window must reach past the overlap at its start and the one at its end.
        overlap = overlap.clamp(1, window.div_ceil(4));
        // Token ends are `u32` offsets into a window.
        if window >= piece.len() || window > u32::MAX as usize {
            return bpe.count(piece);
        }
        if let Some(n) = stitch(bpe, piece, window, overlap) {
            return n;
        }
        window = window.saturating_mul(4);
        overlap = overlap.saturating_mul(4);
    }
}

/// The encoding of `text` as the end offset of each token.
fn token_ends(bpe: &BytePairEncoding, text: &[u8]) -> Vec<u32> {
    let mut tokens = bpe.encode_via_backtracking(text);
    let mut end = 0u32;
    for t in tokens.iter_mut() {
        // A window is at most u32::MAX bytes (see count_windowed).
        end += bpe.token_len(*t) as u32;
        *t = end;
    }
    tokens
}

/// One window's encoding: where it starts in the piece and its token ends
/// (relative to that start).
struct Window {
    start: usize,
    ends: Vec<u32>,
}

impl Window {
    fn encode(bpe: &BytePairEncoding, piece: &[u8], start: usize, len: usize) -> Window {
        let end = piece.len().min(start + len);
        Window {
            start,
            ends: token_ends(bpe, &piece[start..end]),
        }
    }

    /// Start of token `i`, in the piece.
    fn token_start(&self, i: usize) -> usize {
        self.start + i.checked_sub(1).map_or(0, |j| self.ends[j] as usize)
    }

    /// End of token `i`, in the piece.
    fn token_end(&self, i: usize) -> usize {
        self.start + self.ends[i] as usize
    }

    /// End of the window, in the piece.
    fn end(&self) -> usize {
        self.start + self.ends.last().map_or(0, |&e| e as usize)
    }

    /// Index of the first token, from token `from` on, that starts at or
    /// after `at` and, when the piece repeats every `period` bytes, a whole
    /// number of periods after the window's start (else the first at or
    /// after `at`).
    fn first_start(&self, from: usize, at: usize, period: Option<usize>) -> Option<usize> {
        let rel = at.saturating_sub(self.start);
        let first = if rel == 0 {
            0
        } else {
            self.ends.partition_point(|&e| (e as usize) < rel) + 1
        }
        .max(from);
        let aligned = period.and_then(|p| {
            (first..self.ends.len()).find(|&i| (self.token_start(i) - self.start).is_multiple_of(p))
        });
        aligned.or((first < self.ends.len()).then_some(first))
    }
}

/// Longest period (bytes) looked for in a window.
const MAX_PERIOD: usize = 256;

/// The smallest `p <= MAX_PERIOD` with `bytes[i] == bytes[i + p]` throughout,
/// if any (a run of one character or one short phrase).
fn period(bytes: &[u8]) -> Option<usize> {
    (1..=MAX_PERIOD.min(bytes.len() / 2)).find(|&p| bytes[p..] == bytes[..bytes.len() - p])
}

/// The first token over the same bytes in `cur`'s encoding and in the
/// encoding `next_ends` of a window starting at `cur`'s token `j`: the
/// indices of that token in each.
fn shared(cur: &Window, j: usize, next_ends: &[u32]) -> Option<(usize, usize)> {
    let next_start = cur.token_start(j);
    let (mut k, mut m) = (j, 0);
    while k < cur.ends.len() && m < next_ends.len() {
        let (ck, nm) = (cur.token_end(k), next_start + next_ends[m] as usize);
        if ck == nm {
            // Both encodings start at `next_start`, so equal ends make equal
            // starts exactly when the ends before were equal too.
            let cs = cur.token_start(k);
            let ns = next_start + m.checked_sub(1).map_or(0, |i| next_ends[i] as usize);
            if cs == ns {
                return Some((k, m));
            }
            k += 1;
            m += 1;
        } else if ck < nm {
            k += 1;
        } else {
            m += 1;
        }
    }
    None
}

/// Counts `piece` by stitching windows of `window` bytes, each next one
/// starting at a token boundary about `overlap` bytes before the end of the
/// one before; `None` if some overlap holds no token the two windows'
/// encodings share. A next window with the same bytes as the one before
/// (a run of one character or phrase, started a whole number of periods
/// on) has the same encoding, shifted, so it is not encoded again.
fn stitch(bpe: &BytePairEncoding, piece: &[u8], window: usize, overlap: usize) -> Option<usize> {
    let mut cur = Window::encode(bpe, piece, 0, window);
    let period = period(&piece[..window]);
    // Tokens of `cur` before `from` are already counted (they end at or
    // before the token shared with the window before).
    let mut from = 0;
    let mut total = 0;
    while cur.end() < piece.len() {
        // `cur` is a whole window, not the last.
        let j = cur.first_start(from, cur.end() - overlap, period)?;
        let start = cur.token_start(j);
        let same = start + window <= piece.len()
            && piece[start..start + window] == piece[cur.start..cur.start + window];
        let next = (!same).then(|| Window::encode(bpe, piece, start, window));
        let (k, m) = shared(&cur, j, next.as_ref().map_or(&cur.ends, |w| &w.ends))?;
        total += k + 1 - from;
        from = m + 1;
        cur = next.unwrap_or(Window {
            start,
            ends: cur.ends,
        });
    }
    Some(total + cur.ends.len() - from)
}
