//! Exactness tests for `promptinclude_tokenize`: every counting engine
//! against `tiktoken-rs` (and bpe-openai's own pre-tokenizer) on random
//! strings from a fixed-seed generator, against Python tiktoken 0.8.0 on the
//! fixtures in `tests/fixtures/`, the embedded table against bpe-openai's
//! vocabulary and the regex engine's Unicode classes, the split rule used for
//! parallel counting, trimming, and pathological runs.

use promptinclude_tokenize::{
    char_classes, count, count_bpe, count_fast, count_fast_uncached, count_hybrid, count_large,
    count_piece_windowed, cut_points, is_cut, pieces, table_rank, table_tokens, trim, trim_counted,
    LONG_PIECE,
};
use std::collections::HashSet;

mod support;
use support::{iterations, Rng};

const WORDS: &[&str] = &[
    "the",
    " the",
    "The",
    "include",
    " prompt",
    "Rule",
    "tabs",
    "use",
    " always",
    "don",
    "can",
    "I",
    "a",
    "ing",
    "HTTP",
    "xml",
    "fn",
    "let",
    "self",
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
    "中文字符",
    "한국어",
];
const PUNCT: &[&str] = &[
    ".", ",", "!", "?", ":", ";", "-", "--", "---", "_", "*", "**", "#", "##", "`", "```", "(",
    ")", "[", "]", "{", "}", "<", ">", "/", "\\", "|", "=", "==", "+", "&", "%", "$", "@", "~",
    "^", "\"", "…", "—", "«", "»", "·", "•", "→", "€", "£",
];
const SPACES: &[&str] = &[
    " ", " ", " ", "  ", "   ", "\t", "\n", "\n", "\n\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c",
    "\x1d", "\x1e", "\x1f", "\u{85}", "\u{a0}", "\u{1680}", "\u{2003}", "\u{2028}", "\u{2029}",
    "\u{202f}", "\u{3000}", "\u{200b}", "\u{feff}", "\u{180e}", " \n", "\n ", " \r\n ", "\t\n",
];
const APOS: &[&str] = &[
    "'", "'s", "'S", "'\u{17f}", "'t", "'T", "'re", "'RE", "'rE", "'ve", "'Ve", "'m", "'M", "'ll",
    "'LL", "'lL", "'d", "'D", "'r", "'l", "'x", "’s", "''", "'se", "'lla", "'dd",
];
const DIGITS: &[&str] = &[
    "0", "1", "12", "123", "1234", "99999", "3.14", "1,000", "٣", "٤٥", "१२", "１２", "²", "½",
    "Ⅻ", "〇", "𝟙", "⑫",
];
const MISC: &[&str] = &[
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|endofprompt|>",
    "😀",
    "👍🏽",
    "👨‍👩‍👧",
    "🇩🇪",
    "❤️",
    "e\u{301}",
    "\u{301}",
    "\u{300}\u{301}",
    "a\u{308}",
    "क्ष",
    "\u{fffd}",
    "\0",
    "\u{7f}",
    "\u{1c89}",
    "\u{10d50}",
    "\u{1ccf0}",
    "𝔘𝔫𝔦",
];

/// A random string of up to `units` units drawn from all of the above, plus
/// random code points from interesting blocks, and occasional runs.
fn random_text(rng: &mut Rng, units: usize) -> String {
    let mut s = String::new();
    let n = rng.below(units + 1);
    for _ in 0..n {
        let unit: String = match rng.below(20) {
            0..=4 => rng.pick(WORDS).to_string(),
            5..=7 => rng.pick(SPACES).to_string(),
            8..=9 => rng.pick(PUNCT).to_string(),
            10 => rng.pick(APOS).to_string(),
            11 => rng.pick(DIGITS).to_string(),
            12 => rng.pick(MISC).to_string(),
            13 => rng.char_in(0x20, 0x7e).to_string(),
            14 => match rng.below(8) {
                0 => rng.char_in(0x4e00, 0x9fff),
                1 => rng.char_in(0x3040, 0x30ff),
                2 => rng.char_in(0xac00, 0xd7a3),
                3 => rng.char_in(0x1f300, 0x1faff),
                4 => rng.char_in(0x300, 0x36f),
                5 => rng.char_in(0x80, 0x2fff),
                6 => rng.char_in(0x0, 0x10ffff),
                _ => rng.char_in(0x0, 0x20),
            }
            .to_string(),
            15 => {
                // a run of one unit
                let u = match rng.below(4) {
                    0 => rng.pick(SPACES),
                    1 => rng.pick(PUNCT),
                    2 => rng.pick(DIGITS),
                    _ => rng.pick(WORDS),
                };
                u.repeat(1 + rng.below(12))
            }
            16 => "\n".repeat(1 + rng.below(3)) + rng.pick(WORDS),
            _ => {
                let mut w = String::new();
                for _ in 0..1 + rng.below(8) {
                    w.push(rng.char_in(b'a' as u32, b'z' as u32));
                }
                w
            }
        };
        s.push_str(&unit);
    }
    s
}

fn tiktoken_count(text: &str) -> usize {
    tiktoken_rs::cl100k_base_singleton()
        .encode_ordinary(text)
        .len()
}

// ---------------------------------------------------------------- exactness

#[test]
fn empty_and_basics() {
    assert_eq!(count(""), 0);
    assert_eq!(count_fast(""), 0);
    assert_eq!(count_large(""), 0);
    // python: len(enc.encode("hello world", disallowed_special=())) == 2
    assert_eq!(count("hello world"), 2);
    // python: len(enc.encode("<|endoftext|>", disallowed_special=())) == 7
    assert_eq!(count("<|endoftext|>"), 7);
}

#[test]
fn random_strings_match_tiktoken() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut compared = 0;
    for round in 0..iterations(60_000) {
        let units = if round % 100 == 0 { 400 } else { 24 };
        let text = random_text(&mut rng, units);
        let expected = tiktoken_count(&text);
        assert_eq!(count_fast(&text), expected, "fast: {text:?}");
        assert_eq!(count_bpe(&text), expected, "bpe: {text:?}");
        assert_eq!(count_hybrid(&text), expected, "hybrid: {text:?}");
        assert_eq!(count(&text), expected, "count: {text:?}");
        compared += 1;
    }
    eprintln!("compared {compared} random strings with tiktoken-rs");
}

#[test]
fn piece_cache_changes_no_count() {
    // The fast engine remembers piece counts per thread. Hits, misses, and
    // the clearing when the cache is full (tens of thousands of distinct
    // pieces here) must all give the uncached count, which the other tests
    // tie to tiktoken.
    let mut rng = Rng(7);
    let mut distinct = HashSet::new();
    for round in 0..iterations(20_000) {
        let text = random_text(&mut rng, if round % 50 == 0 { 300 } else { 30 });
        for piece in pieces(&text) {
            distinct.insert(piece.to_string());
        }
        let uncached = count_fast_uncached(&text);
        assert_eq!(count_fast(&text), uncached, "first: {text:?}");
        assert_eq!(count_fast(&text), uncached, "repeated: {text:?}");
    }
    if !cfg!(debug_assertions) {
        assert!(
            distinct.len() > 20_000,
            "cache never filled: {}",
            distinct.len()
        );
    }
    // The same piece in different contexts: counts are per piece, so the
    // text around it cannot matter.
    for text in ["hello hello", "hello", " hello", "xhello", "hello\n\nhello"] {
        assert_eq!(count_fast(text), tiktoken_count(text), "{text:?}");
    }
}

#[test]
fn random_code_points_match_tiktoken() {
    // Uniformly random scalar values (mostly unassigned / rare), short strings.
    let mut rng = Rng(42);
    for _ in 0..iterations(30_000) {
        let mut text = String::new();
        for _ in 0..1 + rng.below(6) {
            text.push(rng.char_in(0, 0x10ffff));
            if rng.below(3) == 0 {
                text.push(
                    rng.pick(&["a", " ", "\n", "1", "'", "."])
                        .chars()
                        .next()
                        .unwrap(),
                );
            }
        }
        let expected = tiktoken_count(&text);
        assert_eq!(count_fast(&text), expected, "fast: {text:?}");
        assert_eq!(count_bpe(&text), expected, "bpe: {text:?}");
        assert_eq!(count_hybrid(&text), expected, "hybrid: {text:?}");
    }
}

#[test]
fn pieces_match_bpe_openai_pretokenizer() {
    let mut rng = Rng(7);
    let tok = bpe_openai::cl100k_base();
    for _ in 0..iterations(40_000) {
        let text = random_text(&mut rng, 24);
        let ours: Vec<&str> = pieces(&text).collect();
        let theirs: Vec<&str> = tok.split(&text).collect();
        assert_eq!(ours, theirs, "{text:?}");
    }
}

/// Lines of `tests/fixtures/<name>` (written by `scripts/gen-token-fixtures.py`).
fn fixture_lines(name: &str) -> Vec<serde_json::Value> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let data = std::fs::read_to_string(&path).expect(&path);
    data.lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Real text: the workspace's own sources and docs, whole files and line by line.
#[test]
fn repository_files_match_tiktoken() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name();
            if name == "target" || name == ".git" {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| {
                ["rs", "md", "toml", "py", "json", "jsonl", "txt", "yaml"]
                    .contains(&x.to_str().unwrap_or(""))
            }) {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."),
        &mut files,
    );
    for f in files.iter().take(400) {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        assert_eq!(count(&text), tiktoken_count(&text), "{}", f.display());
        assert_eq!(count_fast(&text), count_bpe(&text), "{}", f.display());
        assert_eq!(count_hybrid(&text), count_bpe(&text), "{}", f.display());
        for line in text.lines().take(2000) {
            assert_eq!(count_fast(line), tiktoken_count(line), "{line:?}");
        }
    }
}

/// Python tiktoken 0.8.0 counts, from `scripts/gen-token-fixtures.py`.
#[test]
fn python_fixtures() {
    let mut n = 0;
    for v in fixture_lines("counts.jsonl") {
        let text = v["text"].as_str().unwrap();
        let expected = v["count"].as_u64().unwrap() as usize;
        assert_eq!(count_bpe(text), expected, "bpe: {text:?}");
        assert_eq!(count_hybrid(text), expected, "hybrid: {text:?}");
        assert_eq!(count_fast(text), expected, "fast: {text:?}");
        assert_eq!(count(text), expected, "count: {text:?}");
        if text.len() > 4096 {
            assert_eq!(count_large(text), expected, "large: {text:?}");
        }
        n += 1;
    }
    assert!(n > 1000, "only {n} fixtures");
}

// ------------------------------------------------------------ embedded table

#[test]
fn table_matches_bpe_openai_vocabulary() {
    let bpe = &bpe_openai::cl100k_base().bpe;
    assert_eq!(table_tokens(), bpe.num_tokens());
    let mut vocab = HashSet::new();
    for id in 0..bpe.num_tokens() as u32 {
        let bytes = bpe.token_bytes(id);
        assert_eq!(table_rank(bytes), Some(id), "token {id}");
        vocab.insert(bytes.to_vec());
    }
    // Non-tokens are not found.
    let mut rng = Rng(3);
    for _ in 0..200_000 {
        let len = 1 + rng.below(6);
        let bytes: Vec<u8> = (0..len)
            .map(|_| match rng.below(3) {
                0 => b'a' + rng.below(26) as u8,
                1 => b" etnaoisr"[rng.below(9)],
                _ => rng.below(256) as u8,
            })
            .collect();
        assert_eq!(
            table_rank(&bytes).is_some(),
            vocab.contains(&bytes),
            "{bytes:?}"
        );
    }
    assert_eq!(table_rank(b""), None);
}

#[test]
fn char_classes_match_regex_engine() {
    let letter = regex::Regex::new(r"\A\p{L}\z").unwrap();
    let number = regex::Regex::new(r"\A\p{N}\z").unwrap();
    let space = regex::Regex::new(r"\A\s\z").unwrap();
    let mut buf = [0u8; 4];
    for c in (0..=0x10ffffu32).filter_map(char::from_u32) {
        let s = c.encode_utf8(&mut buf);
        let expected = (letter.is_match(s), number.is_match(s), space.is_match(s));
        assert_eq!(char_classes(c), expected, "U+{:04X}", c as u32);
    }
}

/// Regenerates `src/tokenize/cl100k.bin` from bpe-openai's vocabulary and the
/// regex engine's `\p{L}` / `\p{N}` tables:
/// `PI_TABLE_OUT=src/tokenize/cl100k.bin cargo test --release --test tokenize -- --ignored regenerate`
#[test]
#[ignore]
fn regenerate_cl100k_table() {
    let out = std::env::var("PI_TABLE_OUT").expect("set PI_TABLE_OUT");
    let bpe = &bpe_openai::cl100k_base().bpe;
    let n = bpe.num_tokens();
    let mut ids: Vec<u32> = (0..n as u32).collect();
    ids.sort_by(|&a, &b| bpe.token_bytes(a).cmp(bpe.token_bytes(b)));
    let ranges = |re: &str| {
        let re = regex::Regex::new(re).unwrap();
        let mut buf = [0u8; 4];
        let mut out: Vec<(u32, u32)> = Vec::new();
        for c in (0x80..=0x10ffffu32).filter_map(char::from_u32) {
            if re.is_match(c.encode_utf8(&mut buf)) {
                match out.last_mut() {
                    Some(r) if r.1 + 1 == c as u32 => r.1 = c as u32,
                    _ => out.push((c as u32, c as u32)),
                }
            }
        }
        out
    };
    let letters = ranges(r"\A\p{L}\z");
    let numbers = ranges(r"\A\p{N}\z");
    let mut w: Vec<u32> = vec![
        u32::from_le_bytes(*b"PIT2"),
        n as u32,
        letters.len() as u32,
        numbers.len() as u32,
    ];
    for fb in 0..=256usize {
        w.push(ids.partition_point(|&id| usize::from(bpe.token_bytes(id)[0]) < fb) as u32);
    }
    let mut area = Vec::new();
    for &id in &ids {
        w.push(area.len() as u32);
        area.extend_from_slice(bpe.token_bytes(id));
    }
    w.push(area.len() as u32);
    w.extend(&ids);
    for (lo, hi) in letters.iter().chain(&numbers) {
        w.push(*lo);
        w.push(*hi);
    }
    let mut bytes: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    bytes.extend_from_slice(&area);
    std::fs::write(out, bytes).unwrap();
}

// ------------------------------------------------------------ parallel split

/// The cut rule: at every position `is_cut` accepts, counting the two halves
/// separately gives the whole count (checked at *every* accepted position).
#[test]
fn every_cut_splits_exactly() {
    let mut rng = Rng(0xdead_beef);
    let mut checked = 0usize;
    for round in 0..iterations(6_000) {
        let text = random_text(&mut rng, if round % 10 == 0 { 120 } else { 30 });
        let whole = tiktoken_count(&text);
        assert_eq!(count_bpe(&text), whole);
        for p in 1..text.len() {
            if is_cut(&text, p) {
                let split = count_bpe(&text[..p]) + count_bpe(&text[p..]);
                assert_eq!(split, whole, "cut at {p} in {text:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 1_000, "only {checked} cuts checked");
    eprintln!("checked {checked} cut positions");
}

/// Adversarial neighbourhoods of the cut rule: every combination of a few
/// characters before and after a `\n` or an ASCII letter.
#[test]
fn cut_rule_adversarial_neighbourhoods() {
    let around: &[&str] = &[
        "", " ", "  ", "\t", "\r", "\n", "\r\n", "\u{a0}", "\u{3000}", "\x1c", "\x1f", "'", "'s",
        "'l", "a", "Z", "é", "漢", "1", "12", "1234", "٣", "!", "!!", "😀", "\u{301}", "-", ".",
        "\u{85}", "\u{2028}",
    ];
    let mut checked = 0;
    for a in around {
        for mid in ["\n", "x", "X", "\n\n", "s", "ll"] {
            for b in around {
                for c in around {
                    let text = format!("{a}{mid}{b}{c}");
                    let whole = tiktoken_count(&text);
                    for p in 1..text.len() {
                        if is_cut(&text, p) {
                            assert_eq!(
                                count_bpe(&text[..p]) + count_bpe(&text[p..]),
                                whole,
                                "cut at {p} in {text:?}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 10_000);
}

#[test]
fn chunked_counts_equal_whole_counts() {
    let mut rng = Rng(99);
    for round in 0..iterations(300) {
        let mut text = String::new();
        while text.len() < 20_000 + round * 100 {
            text.push_str(&random_text(&mut rng, 60));
        }
        let whole = tiktoken_count(&text);
        for chunk in [1, 7, 64, 1000, 4096] {
            let cuts = cut_points(&text, chunk);
            assert!(cuts.windows(2).all(|w| w[0] < w[1]));
            assert_eq!((cuts[0], *cuts.last().unwrap()), (0, text.len()));
            let sum: usize = cuts.windows(2).map(|w| count_bpe(&text[w[0]..w[1]])).sum();
            assert_eq!(sum, whole, "chunk {chunk}");
        }
    }
}

#[test]
fn count_large_on_megabyte_texts() {
    let mut rng = Rng(1234);
    for kind in 0..3 {
        let mut text = String::new();
        while text.len()
            < if cfg!(debug_assertions) {
                600_000
            } else {
                1_100_000
            }
        {
            match kind {
                0 => text.push_str(&random_text(&mut rng, 60)),
                1 => text.push_str("fn main() {\n    let x = 42; // it's 'quoted'\n}\n"),
                _ => text.push_str("漢字かな交じり文。\r\n😀 emoji\u{3000}全角\n"),
            }
        }
        let expected = tiktoken_count(&text);
        assert_eq!(count_large(&text), expected);
        assert_eq!(count(&text), expected);
        assert!(
            cut_points(&text, 128 * 1024).len() > 4,
            "kind {kind} not split"
        );
    }
}

// -------------------------------------------------------------- pathological

#[test]
fn pathological_runs_match_tiktoken() {
    let units = [
        " ", "\n", "\t", "\r\n", " \n", "\u{3000}", "a", "Z", "漢", "😀", "!", "-", "1", "'", "'s",
        "é", "\u{301}", " a", "\x1c",
    ];
    for u in units {
        let text = u.repeat(20_000 / u.len());
        let expected = tiktoken_count(&text);
        assert_eq!(count_bpe(&text), expected, "run of {u:?}");
        assert_eq!(count_hybrid(&text), expected, "hybrid, run of {u:?}");
        assert_eq!(count_fast(&text), expected, "run of {u:?}");
        assert_eq!(count_large(&text), expected, "run of {u:?}");
        // A run followed by a letter (the \s+(?!\S) back-off).
        let text = format!("{text}x");
        assert_eq!(count_bpe(&text), tiktoken_count(&text), "run of {u:?} + x");
    }
}

#[test]
fn megabyte_runs_complete() {
    // The reference's tokenizer overflows its regex stack here; we must not.
    let spaces = " ".repeat(1 << 20);
    let n = count(&spaces);
    assert!(n > 0 && n < spaces.len());
    // Runs of spaces are encoded in blocks, so the count is additive in
    // whole blocks: compare with a shorter, tiktoken-checked run.
    for u in ["a", "漢", "😀", "!", "\n", "1"] {
        let text = u.repeat((1 << 20) / u.len());
        assert_eq!(count(&text), count_bpe(&text));
    }
    let half = " ".repeat(if cfg!(debug_assertions) {
        1 << 16
    } else {
        1 << 19
    });
    assert_eq!(count_bpe(&half), tiktoken_count(&half));
}

// ------------------------------------------------------------ long pieces

/// Units whose runs are one pre-tokenizer piece each, of every class: NUL
/// and other controls, whitespace (newlines too), single and mixed
/// punctuation (multi-byte included), letters (Latin, CJK, combining).
const RUN_UNITS: &[&str] = &[
    "\0",
    "\u{1}",
    " ",
    "\t",
    "\n",
    "\u{3000}",
    "\u{a0}",
    "=",
    "-",
    "*",
    "!",
    "#",
    "!@#$%^&*()-_+=[]{};:,.<>/?|~`",
    "\u{2014}",
    "\u{fffd}",
    "😀",
    "a",
    "ab",
    "Zz",
    "é",
    "語",
    "日本語の文字",
];

/// `unit` repeated to about `len` bytes, checked to be one piece.
fn run_of(unit: &str, len: usize) -> String {
    let text = unit.repeat(len.div_ceil(unit.len()).max(1));
    assert_eq!(pieces(&text).count(), 1, "a run of {unit:?} is one piece");
    text
}

/// A random one-piece text of about `len` bytes drawn from one class.
fn random_piece(rng: &mut Rng, len: usize) -> String {
    let class: &[&str] = match rng.below(3) {
        0 => &[
            "!", "=", "-", "*", "\u{2014}", "\u{fffd}", "😀", "\0", "€", "#", "~",
        ],
        1 => &["a", "b", "z", "é", "語", "日", "本", "ß", "Ω"],
        _ => &[" ", "\t", "\u{3000}", "\u{a0}", "\u{2009}"],
    };
    let mut text = String::new();
    while text.len() < len {
        // Runs of one member, as in real files, and single members.
        let u = rng.pick(class);
        let most = if rng.below(4) == 0 { 200 } else { 3 };
        text.push_str(&u.repeat(1 + rng.below(most)));
    }
    assert_eq!(pieces(&text).count(), 1);
    text
}

/// Lengths (bytes) around the stitch points of windows of `w` bytes
/// overlapping by `o`, and a few beyond.
fn lengths_around(w: usize, o: usize) -> Vec<usize> {
    let mut lens = Vec::new();
    for base in [w, 2 * w - o, 2 * w, 3 * w - 2 * o, 4 * w, 7 * w + o] {
        for d in [-2i64, -1, 0, 1, 2, 37] {
            lens.push((base as i64 + d).max(1) as usize);
        }
    }
    lens
}

#[test]
fn windowed_long_pieces_match_tiktoken() {
    // Small windows put many stitches into pieces tiktoken-rs (quadratic on
    // one piece) can still check.
    for (w, o) in [(64, 16), (257, 31), (1000, 100)] {
        for unit in RUN_UNITS {
            for len in lengths_around(w, o) {
                let text = run_of(unit, len);
                assert_eq!(
                    count_piece_windowed(text.as_bytes(), w, o),
                    tiktoken_count(&text),
                    "run of {unit:?}, {} bytes, window {w}, overlap {o}",
                    text.len()
                );
            }
        }
    }
    let mut rng = Rng(0x10_96e1);
    for _ in 0..iterations(300) {
        let len = 1 + rng.below(4000);
        let text = random_piece(&mut rng, len);
        let (w, o) = (8 + rng.below(600), 1 + rng.below(100));
        assert_eq!(
            count_piece_windowed(text.as_bytes(), w, o),
            tiktoken_count(&text),
            "{text:?}, window {w}, overlap {o}"
        );
    }
}

#[test]
fn windowed_counts_equal_whole_counts_on_any_bytes() {
    // Stitching holds for any byte string, not only one piece: random text
    // and random bytes (not UTF-8) against bpe-openai's whole-string count.
    let bpe = &bpe_openai::cl100k_base().bpe;
    let mut rng = Rng(0xb17e5);
    for i in 0..iterations(400) {
        let bytes: Vec<u8> = if i % 2 == 0 {
            random_text(&mut rng, 400).into_bytes()
        } else {
            (0..rng.below(3000)).map(|_| rng.below(256) as u8).collect()
        };
        let (w, o) = (1 + rng.below(500), 1 + rng.below(80));
        assert_eq!(
            count_piece_windowed(&bytes, w, o),
            bpe.count(&bytes),
            "{bytes:?}, window {w}, overlap {o}"
        );
    }
}

#[test]
fn long_runs_count_exactly_in_windows() {
    // The real windows (1 MiB): runs of each class several windows long,
    // lengths around LONG_PIECE, and runs whose repetition breaks (a
    // different character late in the run, a short tail of another phrase),
    // against bpe-openai's whole-piece count.
    let bpe = &bpe_openai::cl100k_base().bpe;
    let big = if cfg!(debug_assertions) { 3 } else { 5 } * LONG_PIECE / 2;
    let mut texts: Vec<String> = Vec::new();
    for unit in RUN_UNITS {
        texts.push(run_of(unit, big));
    }
    for len in [
        LONG_PIECE - 1,
        LONG_PIECE,
        LONG_PIECE + 1,
        2 * LONG_PIECE + 12_345,
    ] {
        texts.push(run_of("=", len));
        texts.push(run_of("\0", len));
    }
    texts.push("=".repeat(big) + "-" + &"=".repeat(5000));
    texts.push("\0".repeat(big - 100) + "\u{1}" + &"\0".repeat(LONG_PIECE));
    texts.push(" ".repeat(LONG_PIECE + 77) + &"\t ".repeat(LONG_PIECE / 2));
    texts.push("語".repeat(big / 3) + &"日本語の文字".repeat(1000));
    let mut rng = Rng(0x10e6);
    texts.push(random_piece(&mut rng, big));
    for text in &texts {
        assert_eq!(pieces(text).count(), 1);
        let head: String = text.chars().take(8).collect();
        assert_eq!(
            count(text),
            bpe.count(text.as_bytes()),
            "{} bytes starting {head:?}",
            text.len()
        );
    }
}

// -------------------------------------------------------------------- trim

/// The reference's `trim_start` on Python-generated cases.
#[test]
fn python_trim_fixtures() {
    let cases = fixture_lines("trim.jsonl");
    assert!(cases.len() > 1000);
    for v in cases {
        let text = v["text"].as_str().unwrap();
        let max = v["max"].as_u64().unwrap() as usize;
        let out = v["out"].as_str().unwrap();
        assert_eq!(trim(text, max), out, "trim({text:?}, {max})");
        assert_eq!(trim_counted(text, count(text), max), out);
    }
}

// Expectations below come from the reference's trim_start
// (helpers/tokens.py trim_to_tokens, as tests/oracle/oracle.py renders it) run
// under Python tiktoken 0.8.0.

#[test]
fn trim_examples() {
    // python: t="hello world"; trim_start(t, 2) == t
    assert_eq!(trim("hello world", 2), "hello world");
    // python: trim_start("hello world", 1) -> int(11*(1/2)*0.8) = 4 -> "hell..."
    assert_eq!(trim("hello world", 1), "hell...");
    // python: trim_start("hello world", 0) -> "..."
    assert_eq!(trim("hello world", 0), "...");
    assert_eq!(trim("", 0), "");
    // python: t="漢字かな交じり文"; len(enc.encode(t)) == 9, len(t) == 8;
    //   int(8*(3/9)*0.8) == 2 -> "漢字..."
    assert_eq!(count("漢字かな交じり文"), 9);
    assert_eq!(trim("漢字かな交じり文", 3), "漢字...");
    // python: t="The quick brown fox jumps over the lazy dog. "*10; count_tokens(t) == 101,
    //   len(t) == 450; trim_start(t, 7) == "The quick brown fox jump..." (int(450*(7/101)*0.8) == 24)
    let t = "The quick brown fox jumps over the lazy dog. ".repeat(10);
    assert_eq!(count(&t), 101);
    assert_eq!(trim(&t, 7), "The quick brown fox jump...");
    // python: len(trim_start(t, 33)) == 120 (int(450*(33/101)*0.8) == 117)
    assert_eq!(trim(&t, 33).chars().count(), 120);
    assert_eq!(trim_counted(&t, 101, 33), trim(&t, 33));
}

#[test]
fn trim_float_order() {
    // python: int(10*(1/3)*0.8) == 2 ; int(3*(2/3)*0.8) == 1
    assert_eq!(trim_counted("abcdefghij", 3, 1), "ab...");
    assert_eq!(trim_counted("abc", 3, 2), "a...");
    // python: int(5*(3/4)*0.8) == 3 (5*(3/4)*0.8 == 3.0)
    assert_eq!(trim_counted("abcde", 4, 3), "abc...");
    // python: int(10*(7/10)*0.8) == 5 (10*0.7 = 7.0, *0.8 = 5.6000000000000005)
    assert_eq!(trim_counted("0123456789", 10, 7), "01234...");
    // Code points, not bytes.
    assert_eq!(trim_counted("ééééé", 4, 3), "ééé...");
    // No panics on odd inputs.
    assert_eq!(trim_counted("", 5, 0), "...");
    assert_eq!(trim_counted("abc", usize::MAX, 0), "...");
    assert_eq!(trim_counted("abc", usize::MAX, usize::MAX - 1), "ab...");
    assert_eq!(trim_counted("abc", 0, 0), "abc");
}
