//! `Memo::count` against `count` (which `exact.rs` ties to tiktoken) on
//! random concatenations of a pool of random fragments, many texts through
//! one memo (so chunks are remembered and found) from one thread and from
//! the rayon pool; that the memo finds a file body inside a new framing; and
//! that chunk boundaries are the line starts that are cuts, and do not
//! depend on what precedes a body.
//!
//! The seed is fresh each run and printed; `PROMPTINCLUDE_TOKENIZE_MEMO_SEED`
//! repeats one. `PI_SOAK` multiplies the rounds, as in `exact.rs`.

use promptinclude_tokenize::{chunk_bounds, count, is_cut, Memo};
use rayon::prelude::*;

mod support;
use support::{fresh_seed, iterations, Rng};

const WORDS: &[&str] = &[
    "the",
    "Rule",
    "use",
    "tabs",
    "always",
    "don't",
    "it's",
    "we've",
    "I'm",
    "they'll",
    "HTTP",
    "fn",
    "über",
    "naïve",
    "café",
    "Привет",
    "мир",
    "Ελληνικά",
    "مرحبا",
    "नमस्ते",
    "こんにちは",
    "漢字",
    "한국어",
    "x",
    "a",
    "ing",
    "😀",
    "👍🏽",
    "e\u{301}",
    // UTF-8 continuation byte 0x8a: `\n` (0x0a) with the high bit set.
    "Ċ",
    "ਊ",
    "\u{8a}",
];
const DIGITS: &[&str] = &[
    "0", "7", "12", "123", "1234", "99999", "3.14", "٣", "١٢", "१२", "½", "²",
];
const PUNCT: &[&str] = &[
    ".",
    ",",
    ":",
    ";",
    "-",
    "--",
    "*",
    "**",
    "#",
    "##",
    "`",
    "```",
    "(",
    ")",
    "[",
    "]",
    "/",
    "'",
    "''",
    "'s",
    "'T",
    "'LL",
    "\"",
    "—",
    "…",
    "<|endoftext|>",
];
/// What may follow a `\n` at the start of a line.
const INDENTS: &[&str] = &[
    "", "", "", "", " ", "  ", "    ", "\t", "\t\t", " \t", "\u{a0}", "\u{3000}", "\x1c", "\r",
    "\n", "\n\n", "\r\n", "'", "1", "-", "漢", "😀",
];
/// Between words.
const GAPS: &[&str] = &[
    " ", " ", " ", "", "  ", "   ", "\t", " \t ", "\u{a0}", "\u{2003}", "\r\n", "\n", " \n",
];

/// One line: an indent, then words, numbers and punctuation with gaps.
fn line(rng: &mut Rng) -> String {
    let mut s = rng.pick(INDENTS).to_string();
    for _ in 0..rng.below(12) {
        match rng.below(8) {
            0 => s.push_str(rng.pick(DIGITS)),
            1 => s.push_str(rng.pick(PUNCT)),
            2 => {
                for _ in 0..1 + rng.below(6) {
                    s.push(char::from(b'a' + rng.below(26) as u8));
                }
            }
            _ => s.push_str(rng.pick(WORDS)),
        }
        s.push_str(rng.pick(GAPS));
    }
    s
}

/// A random fragment: empty, a few characters with no newline, lines joined
/// by `\n` or `\r\n` (sometimes ending in one, in a run of them, or in
/// spaces), sometimes long, sometimes one long line.
fn fragment(rng: &mut Rng) -> String {
    match rng.below(10) {
        0 => String::new(),
        1 => rng.pick(INDENTS).to_string() + rng.pick(WORDS),
        2 => line(rng).replace('\n', " "),
        3 => {
            // One long line: no line-start cut for longer than a chunk.
            let mut s = String::new();
            while s.len() < 9000 + rng.below(80_000) {
                s.push_str(&line(rng).replace('\n', " "));
            }
            s
        }
        _ => {
            let lines = if rng.below(5) == 0 {
                200 + rng.below(2000)
            } else {
                1 + rng.below(60)
            };
            let eol = if rng.below(4) == 0 { "\r\n" } else { "\n" };
            let mut s = String::new();
            for i in 0..lines {
                if i > 0 {
                    s.push_str(eol);
                }
                s.push_str(&line(rng));
            }
            match rng.below(4) {
                0 => s.push_str(eol),
                1 => s.push_str(&"\n".repeat(1 + rng.below(3))),
                2 => s.push_str(rng.pick(GAPS)),
                _ => {}
            }
            s
        }
    }
}

/// A text: up to 12 fragments from `pool`, with framing between them
/// (nothing, newlines, spaces, a header naming a directory).
fn text(rng: &mut Rng, pool: &[String]) -> String {
    let mut s = String::new();
    for _ in 0..rng.below(13) {
        match rng.below(6) {
            0 => {}
            1 => s.push('\n'),
            2 => s.push_str("\n\n"),
            3 => s.push_str(rng.pick(INDENTS)),
            _ => s.push_str(&format!(
                "Contents of /home/u/repo/dir{}/AGENTS.md:\n{}",
                rng.below(1000),
                rng.pick(INDENTS)
            )),
        }
        s.push_str(&pool[rng.below(pool.len())]);
    }
    s
}

fn pool(rng: &mut Rng) -> Vec<String> {
    (0..40).map(|_| fragment(rng)).collect()
}

#[test]
fn memo_counts_equal_count_on_one_thread_and_many() {
    let mut rng = Rng::new(fresh_seed("PROMPTINCLUDE_TOKENIZE_MEMO_SEED"));
    let pool = pool(&mut rng);
    let memo = Memo::new();
    let rounds = iterations(3000);
    for _ in 0..rounds {
        let t = text(&mut rng, &pool);
        assert_eq!(memo.count(&t), count(&t), "{t:?}");
    }
    // The same memo from the rayon pool: new texts and old chunks, inserted
    // and looked up concurrently.
    let texts: Vec<String> = (0..rounds).map(|_| text(&mut rng, &pool)).collect();
    texts.par_iter().for_each(|t| {
        assert_eq!(memo.count(t), count(t), "{t:?}");
    });
    let stats = memo.stats();
    eprintln!("{stats:?}");
    assert!(
        stats.hit_bytes > 0,
        "nothing remembered was used: {stats:?}"
    );
}

/// A text's middle is split from any framing around it exactly: the
/// framing's text before the middle, the middle's count and the text after
/// it add up to the whole's count. Fails when a boundary is not a cut in
/// every framing, or the middle's count is off.
#[test]
fn a_split_middle_adds_up_in_any_framing() {
    let mut rng = Rng::new(fresh_seed("PROMPTINCLUDE_TOKENIZE_MEMO_SEED"));
    let pool = pool(&mut rng);
    let memo = Memo::new();
    let mut split = 0;
    for _ in 0..iterations(2000) {
        let t = text(&mut rng, &pool);
        let s = memo.count_split(&t);
        assert_eq!(s.tokens, count(&t), "{t:?}");
        let Some((first, last, middle)) = s.middle else {
            continue;
        };
        split += 1;
        assert!(0 < first && first <= last && last < t.len(), "{t:?}");
        assert_eq!(middle, count(&t[first..last]), "{t:?}");
        let (before, after) = (text(&mut rng, &pool), text(&mut rng, &pool));
        let outer = format!("{before}{t}{after}");
        let at = before.len();
        assert_eq!(
            count(&outer),
            count(&outer[..at + first]) + middle + count(&outer[at + last..]),
            "{before:?} + {t:?} + {after:?}"
        );
    }
    assert!(split > 0, "no text was split");
}

#[test]
fn a_full_memo_still_counts_exactly() {
    // Small limits: the memo fills up after a few chunks and then only
    // looks up; a zero limit remembers nothing.
    let mut rng = Rng::new(fresh_seed("PROMPTINCLUDE_TOKENIZE_MEMO_SEED"));
    let pool = pool(&mut rng);
    for limit in [0, 1000, 20_000] {
        let memo = Memo::with_limit(limit);
        let texts: Vec<String> = (0..iterations(500))
            .map(|_| text(&mut rng, &pool))
            .collect();
        texts.par_iter().for_each(|t| {
            assert_eq!(memo.count(t), count(t), "limit {limit}: {t:?}");
        });
        let stats = memo.stats();
        assert!(stats.kept_bytes <= limit, "{stats:?}");
        if limit == 0 {
            assert_eq!(stats.entries, 0);
        }
    }
}

#[test]
fn chunk_bounds_are_cuts_and_do_not_depend_on_the_framing() {
    let mut rng = Rng::new(fresh_seed("PROMPTINCLUDE_TOKENIZE_MEMO_SEED"));
    let pool = pool(&mut rng);
    for _ in 0..iterations(2000) {
        let t = text(&mut rng, &pool);
        let b = chunk_bounds(&t);
        assert_eq!((b[0], b[b.len() - 1]), (0, t.len()));
        for w in b.windows(2) {
            assert!(w[0] < w[1] || t.is_empty(), "{b:?}");
        }
        // Every line start that is a cut, and only cuts.
        let line_cuts: Vec<usize> = (1..t.len())
            .filter(|&p| t.as_bytes()[p - 1] == b'\n' && is_cut(&t, p))
            .collect();
        let inner = &b[1..b.len() - 1];
        assert!(inner.iter().all(|&p| is_cut(&t, p)), "{t:?}");
        assert!(line_cuts.iter().all(|p| inner.contains(p)), "{t:?}");
    }
    // A body of lines with no forced cuts: the same boundaries after its
    // first chosen one, whatever precedes it.
    let body: String = (0..400)
        .map(|i| format!("- rule {i}: use tabs\n"))
        .collect();
    let inside = |prefix: &str| -> Vec<usize> {
        let t = format!("{prefix}{body}");
        chunk_bounds(&t)
            .into_iter()
            .filter(|&p| p > prefix.len() && p < t.len())
            .map(|p| p - prefix.len())
            .collect()
    };
    let a = inside("Contents of /a/CLAUDE.md:\n\n");
    assert!(a.len() > 5, "too few chunks: {a:?}");
    assert_eq!(a, inside("# Other framing, /somewhere/else\n"));
}

/// The bounds as the rule states them, found the plain way (every line
/// start that is a cut; a stretch past 2 KiB cut at its first cut 1 KiB
/// in, again and again), against `chunk_bounds`, which finds them as the
/// memo asks for its chunks: over random texts, long lines among them.
#[test]
fn chunk_bounds_follow_the_rule() {
    const LONG: usize = 1024;
    fn by_the_rule(t: &str) -> Vec<usize> {
        let mut bounds = vec![0];
        let line_starts = (1..t.len()).filter(|&p| t.as_bytes()[p - 1] == b'\n' && is_cut(t, p));
        for next in line_starts.chain([t.len()]) {
            let mut last = bounds[bounds.len() - 1];
            while next - last > 2 * LONG {
                match (last + LONG..next).find(|&p| is_cut(t, p)) {
                    Some(p) => {
                        bounds.push(p);
                        last = p;
                    }
                    None => break,
                }
            }
            bounds.push(next);
        }
        bounds
    }
    let mut rng = Rng::new(fresh_seed("PROMPTINCLUDE_TOKENIZE_MEMO_SEED"));
    let pool = pool(&mut rng);
    for round in 0..iterations(600) {
        let mut t = text(&mut rng, &pool);
        if round % 3 == 0 {
            // A long line, or a long run of spaces with no cut at all.
            let filler = if round % 2 == 0 { " " } else { "word, " };
            let at = rng.below(t.len() + 1);
            let at = (0..=at).rev().find(|&i| t.is_char_boundary(i)).unwrap_or(0);
            t.insert_str(at, &filler.repeat(200 + rng.below(2000)));
        }
        assert_eq!(chunk_bounds(&t), by_the_rule(&t), "{t:?}");
    }
    assert_eq!(chunk_bounds(""), by_the_rule(""));
}

/// A long line cut short (Codex truncating a file at its byte limit, at
/// another place for each chain) is cut where the whole line is, so all
/// but its last few kilobytes are found in the memo.
#[test]
fn a_long_line_cut_short_shares_its_chunks() {
    let mut rng = Rng::new(fresh_seed("PROMPTINCLUDE_TOKENIZE_MEMO_SEED"));
    for _ in 0..iterations(20) {
        let mut long = String::new();
        while long.len() < 20_000 + rng.below(40_000) {
            long.push_str(&line(&mut rng).replace('\n', " "));
        }
        let memo = Memo::new();
        assert_eq!(memo.count(&long), count(&long));
        let whole = chunk_bounds(&long);
        for _ in 0..10 {
            let mut end = rng.below(long.len());
            while !long.is_char_boundary(end) {
                end -= 1;
            }
            let short = &long[..end];
            let b = chunk_bounds(short);
            assert!(
                b[..b.len() - 1].iter().all(|p| whole.contains(p)),
                "{b:?} not within {whole:?}"
            );
            let before = memo.stats();
            assert_eq!(memo.count(short), count(short), "{short:?}");
            let missed = memo.stats().miss_bytes - before.miss_bytes;
            // Chunks are cut about every kilobyte where the text allows:
            // the words and punctuation here always do.
            assert!(missed <= 4096, "{missed} bytes counted afresh of {end}");
        }
    }
}

#[test]
fn a_body_in_a_new_framing_is_found() {
    fn shareable<T: Send + Sync + Default>() {}
    shareable::<Memo>();
    let body: String = (0..2000)
        .map(|i| format!("Rule {i}: don't commit secrets; it's {} now.\n", 2000 + i))
        .collect();
    let memo = Memo::new();
    let first = format!("Contents of /repo/a/AGENTS.md:\n\n{body}");
    assert_eq!(memo.count(&first), count(&first));
    let before = memo.stats();
    assert_eq!(before.hit_bytes, 0);
    let second = format!("Contents of /repo/b/AGENTS.md (project):\n{body}\nThe end.\n");
    assert_eq!(memo.count(&second), count(&second));
    let found = memo.stats().hit_bytes - before.hit_bytes;
    assert!(
        found * 10 >= body.len() * 9,
        "found {found} of {} bytes",
        body.len()
    );
    // The same text again: all of it.
    let before = memo.stats().hit_bytes;
    assert_eq!(memo.count(&second), count(&second));
    assert_eq!(memo.stats().hit_bytes - before, second.len());
}
