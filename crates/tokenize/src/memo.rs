//! [`Memo`]: exact token counts of many texts that share long stretches.
//!
//! `audit --agents all` counts every chain an agent would send: framing text
//! (which names the directory) around rule files, where neighbouring chains
//! hold mostly the same files. Counting each chain afresh tokenizes the same
//! file bodies again and again. A [`Memo`] cuts every text into chunks at
//! every line start that is a cut ([`chunk_bounds`]), a content-defined rule,
//! so a file body is cut into the same chunks whatever framing precedes it,
//! and remembers each chunk's count.
//!
//! # Why the count is exact
//!
//! Chunks end only at positions where [`is_cut`] holds, whose proof gives
//! `count(text) == count(&text[..p]) + count(&text[p..])` at such a `p`.
//! [`is_cut`] looks only at the byte before `p` and the character at `p`, so
//! a cut of `text` at `q > p` is also a cut of `text[p..]` at `q - p`: by
//! induction over the cuts, the count of the text is the sum of the counts
//! of its chunks. The count of a chunk depends on nothing but its bytes, and
//! the memo is keyed by those bytes (the whole chunk, not a hash of it), so a
//! remembered count is the chunk's count. Which cuts are used affects only
//! speed, never the sum.

use super::{count, is_cut, PARALLEL_MIN};
use rayon::prelude::*;
use rustc_hash::FxHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{PoisonError, RwLock};

/// Texts shorter than this (bytes) are counted directly by [`Memo::count`]:
/// looking up would cost about as much as counting. (Counting takes some 70
/// instructions a byte, a lookup a few hundred a chunk. The threshold was
/// 64 while whole chain texts were counted here; now that a chain's framing
/// is counted apart from its files' texts ([`Memo::count_split`]), it is
/// mostly short pieces that repeat: a file's last line and the framing
/// after it.)
const MEMO_MIN: usize = 16;

/// Chunks longer than this (bytes; possible only where the text has no
/// line-start cut for that long) are counted but not remembered.
const KEEP_MAX: usize = 64 * 1024;

/// Bytes a [`Memo::new`] memo may hold: the chunk texts plus 48 bytes per
/// chunk (its map slot and allocation). Once full it keeps what it holds and
/// remembers nothing more (counts stay exact, new chunks are counted each
/// time).
pub(crate) const MEMO_LIMIT: usize = 32 * 1024 * 1024;

/// Bytes charged per remembered chunk besides its text (the map's slot and
/// the allocation's bookkeeping), for [`MEMO_LIMIT`].
const ENTRY_OVERHEAD: usize = 48;

type FxMap = HashMap<Box<str>, u32, BuildHasherDefault<FxHasher>>;

/// The remembered counts and the bytes they are charged.
#[derive(Default)]
struct Counts {
    map: FxMap,
    bytes: usize,
}

/// Counts many texts that share long stretches (the same files inside
/// different framings), remembering the count of every chunk it has seen.
///
/// [`Memo::count`] always equals [`count`](crate::count). Safe to share
/// between threads (each call takes the lock at most twice: once to look
/// its chunks up, once to remember the new ones). Memory is bounded by the
/// limit it is made with (`MEMO_LIMIT` for [`Memo::new`]); chunks over
/// 64 KiB are never remembered.
///
/// A chunk is a line (with any blank or indented lines after it); texts
/// under 64 bytes, or with no line start where [`is_cut`] holds, are
/// counted directly.
pub struct Memo {
    counts: RwLock<Counts>,
    limit: usize,
    hit_bytes: AtomicUsize,
    miss_bytes: AtomicUsize,
}

impl Default for Memo {
    fn default() -> Memo {
        Memo::new()
    }
}

/// A text's count, and the count of its middle: from its first cut to its
/// last ([`Memo::count_split`]).
///
/// The cuts ([`is_cut`]) are strictly inside the text, and `is_cut` looks
/// only at the bytes on either side of a position, so they are cuts of any
/// text this one is placed in: where it starts at `s` in
/// `outer`, `count(outer)` is `count(&outer[..s + first])`, plus `middle`'s
/// tokens, plus `count(&outer[s + last..])`, whatever surrounds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Split {
    /// `count(text)`.
    pub tokens: usize,
    /// The first and last cut (`0 < first <= last < text.len()`) and
    /// `count(&text[first..last])`; `None` when the text has no cut.
    pub middle: Option<(usize, usize, usize)>,
}

/// What a [`Memo`] has done so far; for tests and measurements.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoStats {
    /// Bytes of chunks whose count was remembered.
    pub hit_bytes: usize,
    /// Bytes counted afresh (chunks not remembered, and texts counted
    /// directly).
    pub miss_bytes: usize,
    /// Chunks remembered.
    pub entries: usize,
    /// Bytes charged against the limit.
    pub kept_bytes: usize,
}

impl Memo {
    /// An empty memo holding at most 32 MiB of text (`MEMO_LIMIT`).
    pub fn new() -> Memo {
        Memo::with_limit(MEMO_LIMIT)
    }

    /// An empty memo holding at most `limit` bytes (chunk texts plus a
    /// fixed overhead per chunk); `0` remembers nothing.
    pub fn with_limit(limit: usize) -> Memo {
        Memo {
            counts: RwLock::default(),
            limit,
            hit_bytes: AtomicUsize::new(0),
            miss_bytes: AtomicUsize::new(0),
        }
    }

    /// [`Memo::count`], with the count of the text between its first and
    /// last cut ([`is_cut`]), where it has one: a text placed inside another
    /// (a file in the framing an agent sends it in) is split there from
    /// what surrounds it, whatever that is, so the other text's count is
    /// this one's middle plus the counts of the rest (see [`Split`]). The
    /// first and last cuts are mostly a word from either end, so the rest
    /// is short, and the same wherever the text is placed again.
    pub fn count_split(&self, text: &str) -> Split {
        let tokens = self.count(text);
        let first = (1..text.len()).find(|&p| is_cut(text, p));
        let middle = first.map(|first| {
            let last = (first..text.len())
                .rev()
                .find(|&p| is_cut(text, p))
                .unwrap_or(first);
            let rest = self.count(&text[..first]) + self.count(&text[last..]);
            (first, last, tokens - rest)
        });
        Split { tokens, middle }
    }

    /// Exactly [`count(text)`](crate::count), from remembered chunk counts
    /// where it can.
    pub fn count(&self, text: &str) -> usize {
        if text.len() < MEMO_MIN {
            return self.direct(text);
        }
        // A text with no cut is one chunk: remembered too, as the end of a
        // file with the framing after it recurs in every chain that sends
        // the file.
        let chunks = chunks(text);

        // Look every chunk up under one read lock.
        let mut total = 0;
        let mut hit_bytes = 0;
        let mut misses: Vec<&str> = Vec::new();
        {
            let counts = self.counts.read().unwrap_or_else(PoisonError::into_inner);
            for chunk in chunks {
                match counts.map.get(chunk) {
                    Some(&n) => {
                        total += n as usize;
                        hit_bytes += chunk.len();
                    }
                    None => misses.push(chunk),
                }
            }
        }
        self.hit_bytes.fetch_add(hit_bytes, Ordering::Relaxed);
        if misses.is_empty() {
            return total;
        }

        // Count the rest outside the lock (on the rayon pool when there is
        // as much as `count` itself would split).
        let miss_bytes: usize = misses.iter().map(|c| c.len()).sum();
        self.miss_bytes.fetch_add(miss_bytes, Ordering::Relaxed);
        let counted: Vec<usize> = if miss_bytes >= PARALLEL_MIN && misses.len() > 1 {
            misses.par_iter().map(|c| count(c)).collect()
        } else {
            misses.iter().map(|c| count(c)).collect()
        };
        total += counted.iter().sum::<usize>();

        // Remember them under one write lock, while there is room.
        let mut counts = self.counts.write().unwrap_or_else(PoisonError::into_inner);
        for (chunk, n) in misses.into_iter().zip(counted) {
            let cost = chunk.len() + ENTRY_OVERHEAD;
            if chunk.len() > KEEP_MAX || counts.bytes + cost > self.limit {
                continue;
            }
            if counts.map.contains_key(chunk) {
                // Another thread (or an earlier copy in this text) got there.
                continue;
            }
            // A chunk of at most KEEP_MAX bytes has at most that many
            // tokens, which fits in a u32.
            counts.map.insert(chunk.into(), n as u32);
            counts.bytes += cost;
        }
        total
    }

    /// What this memo has done so far.
    #[doc(hidden)]
    pub fn stats(&self) -> MemoStats {
        let counts = self.counts.read().unwrap_or_else(PoisonError::into_inner);
        MemoStats {
            hit_bytes: self.hit_bytes.load(Ordering::Relaxed),
            miss_bytes: self.miss_bytes.load(Ordering::Relaxed),
            entries: counts.map.len(),
            kept_bytes: counts.bytes,
        }
    }

    /// `count(text)` without the memo.
    fn direct(&self, text: &str) -> usize {
        self.miss_bytes.fetch_add(text.len(), Ordering::Relaxed);
        count(text)
    }
}

/// Chunk boundaries of `text`: `0`, every line start that is a cut
/// ([`is_cut`]: just after a `\n`, before a non-whitespace character),
/// `text.len()`. A chunk is a line with the lines after it that start with
/// whitespace (blank or indented). Whether a line start is a boundary
/// depends only on the bytes on either side of it, so a file body is cut at
/// the same places whatever framing precedes it.
///
/// A stretch longer than [`LONG_CHUNK`] without such a line start (a long
/// line) is cut too, at the first cut of any kind ([`is_cut`]'s rule B: a
/// letter before a non-letter) at least [`LONG_CHUNK`] bytes after the
/// previous boundary: where each cut falls depends only on the bytes before
/// it (and the one at it), so a text cut short inside a long line (Codex
/// truncating a file at its byte limit, at a different place for each
/// chain) shares every chunk but its last with the whole line.
///
/// (Grouping several lines per chunk, by a hash of the line, made fewer
/// lookups but lost more at every place where framing meets a file: with
/// 2 KB files that cost three times as much as it saved.)
#[doc(hidden)]
pub fn chunk_bounds(text: &str) -> Vec<usize> {
    let mut bounds = vec![0];
    let mut end = 0;
    for chunk in chunks(text) {
        end += chunk.len();
        bounds.push(end);
    }
    bounds
}

/// The chunks between [`chunk_bounds`], in order, found as they are asked
/// for: [`Memo::count`] looks each up once, and collecting their bounds
/// first cost it an allocation, grown line by line, per text.
fn chunks(text: &str) -> impl Iterator<Item = &str> {
    let mut line_starts = memchr::memchr_iter(b'\n', text.as_bytes())
        .map(|i| i + 1)
        .filter(move |&p| is_cut(text, p))
        .chain([text.len()]);
    // Where the last chunk ended, and the line start being approached.
    let (mut last, mut next) = (0, None);
    std::iter::from_fn(move || {
        let to = match next {
            Some(to) => to,
            None => *next.insert(line_starts.next()?),
        };
        // A long stretch is cut at its first cut past `LONG_CHUNK` bytes;
        // otherwise the chunk runs to the line start, which is then passed.
        let long_cut = if to - last > 2 * LONG_CHUNK {
            (last + LONG_CHUNK..to).find(|&p| is_cut(text, p))
        } else {
            None
        };
        let end = match long_cut {
            Some(cut) => cut,
            None => {
                next = None;
                to
            }
        };
        let chunk = &text[last..end];
        last = end;
        Some(chunk)
    })
}

/// How long a stretch of text [`chunk_bounds`] leaves uncut where it can
/// cut (bytes).
const LONG_CHUNK: usize = 1024;
