//! The bodies of promptinclude's fuzz targets.
//!
//! Each target is a plain `fn(data: &[u8])` that panics when an invariant is
//! violated. Two drivers call them: cargo-fuzz (`fuzz_targets/*.rs`, libFuzzer,
//! nightly) for long runs, and the stable smoke test `tests/fuzz_smoke.rs` of the
//! main crate, which includes this file as a module and feeds it the committed
//! seeds plus mutations for a few seconds. So this file may only use `std`,
//! `promptinclude`, `regex` and `serde_json`. See `docs/fuzzing.md`.
//!
//! | target | input | checks |
//! |---|---|---|
//! | [`gitignore`] | gitignore text | no panic; accept/reject and the failing line agree with an independent model of pathspec 1.1.1; the verdict functions agree with each other |
//! | [`fnmatch`] | pattern `\0` name | no panic; the fast paths agree with the translated regex; an independent matcher agrees on patterns without classes |
//! | [`decode`] | file bytes | equals an independent UTF-8 decoder (maximal-subpart replacement) plus universal newlines |
//! | [`trim`] | 4 header bytes + text | all token engines agree; `trim` keeps the formula's prefix; safe cuts are additive |
//! | [`config`] | a YAML/JSON document | no panic; a JSON object is accepted iff every known key holds a value the reference can use, and an error names a bad key |

use std::borrow::Cow;

use promptinclude::config::{Config, Format, Key};
use promptinclude::discover::fnmatch::{translate, NamePattern};
use promptinclude::discover::gitwildmatch::{gitignore_lines, IgnoreSpec, PatternErrorKind};
use promptinclude::pystr::{matching_str, py_rstrip};
use promptinclude::read::decode as decode_bytes;
use promptinclude::tokenize;

/// Most probe paths a [`gitignore`] input is matched against.
const MAX_PROBES: usize = 16;

/// gitignore text → compiled spec → verdicts.
///
/// The text is the input decoded with replacement. Compilation must fail exactly
/// where the independent model [`pathspec_line`] says pathspec 1.1.1 raises (same
/// first line, same exception kind), and succeed otherwise. On success every
/// probe path (the pattern lines themselves, with and without their `!` and `/`,
/// and a few fixed paths) must get consistent answers from `is_match`, `decide`,
/// `is_file_ignored`, `is_dir_ignored` and `explain`.
pub fn gitignore(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let expected = gitignore_lines(&text).find_map(|(n, line)| match pathspec_line(line) {
        LineVerdict::Raises(kind) => Some((n, kind)),
        LineVerdict::Compiles | LineVerdict::NoOp => None,
    });
    let spec = match (IgnoreSpec::from_gitignore_text(&text), expected) {
        (Ok(spec), None) => spec,
        (Err(e), Some((line, kind))) => {
            assert_eq!(
                (e.line_number, e.kind),
                (line, kind),
                "wrong failing line for {text:?}"
            );
            let message = e.to_string();
            assert!(
                message.contains(&format!("line {line}")),
                "error does not name its line: {message}"
            );
            return;
        }
        (Ok(_), Some(want)) => panic!("accepted {text:?}; pathspec raises {want:?}"),
        (Err(e), None) => panic!("rejected {text:?} ({e}); pathspec accepts it"),
    };
    let Some(spec) = spec else {
        assert!(
            gitignore_lines(&text).next().is_none(),
            "no spec for {text:?}"
        );
        return;
    };
    for path in probe_paths(&text) {
        let ignored = spec.is_match(&path);
        let decided = spec.decide(&path);
        assert_eq!(ignored, decided.is_some_and(|p| !p.negated), "{path:?}");
        assert_eq!(spec.is_file_ignored(&path), ignored, "{path:?}");
        let dir = ignored || spec.is_match(&format!("{path}/"));
        assert_eq!(spec.is_dir_ignored(&path), dir, "{path:?}");
        for (is_dir, want) in [(false, ignored), (true, dir)] {
            let (got, pattern) = spec.explain(&path, is_dir);
            assert_eq!(got, want, "explain({path:?}, {is_dir})");
            if got {
                assert!(pattern.is_some_and(|p| !p.negated), "{path:?}");
            }
        }
    }
}

/// The paths a [`gitignore`] input is probed with.
pub fn probe_paths(text: &str) -> Vec<String> {
    let mut paths: Vec<String> = ["a", "a/b", "b/a", "x.promptinclude.md", "venv/x", "a\nb"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (_, line) in gitignore_lines(text) {
        let bare = line.trim_start_matches('!');
        paths.push(line.to_string());
        paths.push(bare.trim_start_matches('/').to_string());
        paths.push(format!("d/{}", bare.trim_matches('/')));
        if paths.len() >= MAX_PROBES {
            break;
        }
    }
    paths.retain(|p| !p.is_empty());
    paths
}

/// What pathspec 1.1.1 does with one pattern line, by the independent model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineVerdict {
    /// The line compiles to a pattern.
    Compiles,
    /// The line never matches (blank, comment, `/`, an unclosed `[`).
    NoOp,
    /// Compiling the line raises.
    Raises(PatternErrorKind),
}

/// An independent model of which lines make pathspec 1.1.1 (`gitwildmatch`) raise,
/// written from `shared/spec/gitwildmatch.md` §2 without the translator: the line
/// is split into segments, each segment is scanned for escapes and bracket
/// expressions, and each closed bracket's text is checked with Python `re`'s class
/// rules for a reversed range.
///
/// * a lone `!` (nothing left after the negation) raises `GitIgnorePatternError`;
/// * a segment ending in an unconsumed `\` raises `GitIgnorePatternError`, unless an
///   unclosed `[` earlier in the line discarded it (the whole line is then a no-op);
/// * a reversed range in a closed class raises `re.error`, but only once every
///   segment was translated without raising or being discarded.
pub fn pathspec_line(line: &str) -> LineVerdict {
    let p = if line.ends_with("\\ ") {
        line
    } else {
        py_rstrip(line)
    };
    if p.is_empty() || p.starts_with('#') || p == "/" {
        return LineVerdict::NoOp;
    }
    let p = p.strip_prefix('!').unwrap_or(p);
    let mut segments: Vec<&str> = p.split('/').collect();
    if segments[0].is_empty() {
        segments.remove(0);
    }
    if segments.is_empty() {
        return LineVerdict::Raises(PatternErrorKind::InvalidPattern);
    }
    let mut bad_range = false;
    for segment in segments.iter().filter(|s| **s != "**") {
        match scan_segment(segment) {
            SegmentScan::Unclosed => return LineVerdict::NoOp,
            SegmentScan::Dangling => return LineVerdict::Raises(PatternErrorKind::InvalidPattern),
            SegmentScan::Ok { bad_range: b } => bad_range |= b,
        }
    }
    if bad_range {
        LineVerdict::Raises(PatternErrorKind::BadCharacterRange)
    } else {
        LineVerdict::Compiles
    }
}

/// What scanning one segment found.
enum SegmentScan {
    Ok { bad_range: bool },
    Unclosed,
    Dangling,
}

/// pathspec's segment scan: `\c` escapes one character; `[` opens a bracket whose
/// text runs to the first `]` after an optional `!`/`^` and an optional leading `]`.
fn scan_segment(segment: &str) -> SegmentScan {
    let chars: Vec<char> = segment.chars().collect();
    let (mut i, mut escape, mut bad_range) = (0, false, false);
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if escape {
            escape = false;
        } else if c == '\\' {
            escape = true;
        } else if c == '[' {
            let mut j = i;
            if matches!(chars.get(j), Some('!' | '^')) {
                j += 1;
            }
            let body_start = j;
            if chars.get(j) == Some(&']') {
                j += 1;
            }
            while j < chars.len() && chars[j] != ']' {
                j += 1;
            }
            if j >= chars.len() {
                return SegmentScan::Unclosed;
            }
            bad_range |= python_class_has_reversed_range(&chars[body_start..j]);
            i = j + 1;
        }
    }
    if escape {
        SegmentScan::Dangling
    } else {
        SegmentScan::Ok { bad_range }
    }
}

/// Whether Python `re` rejects the class whose members are `body` (the text between
/// `[`/`[^` and the closing `]`; every backslash is a literal because pathspec
/// doubles it): items are read left to right, `x-y` is a range unless `y` would be
/// the closing bracket, and a range with `y < x` is "bad character range".
fn python_class_has_reversed_range(body: &[char]) -> bool {
    let mut k = 0;
    while k < body.len() {
        let lo = body[k];
        if body.get(k + 1) == Some(&'-') && k + 2 < body.len() {
            if body[k + 2] < lo {
                return true;
            }
            k += 3;
        } else {
            k += 1;
        }
    }
    false
}

/// `pattern \0 name` → `fnmatch`.
///
/// The name goes through [`matching_str`] (so invalid UTF-8 names are covered);
/// the pattern is decoded with replacement. The compiled pattern (which uses
/// string fast paths for common shapes) must agree with the translated regex, and
/// with [`glob_model`] when the pattern has no `[`.
pub fn fnmatch(data: &[u8]) {
    let (pattern, name) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, data),
    };
    let pattern = String::from_utf8_lossy(pattern);
    let name = matching_str(name);
    let compiled = NamePattern::new(&pattern).expect("every short pattern compiles");
    let got = compiled.is_match(&name);
    let regex = regex::RegexBuilder::new(&translate(&pattern))
        .size_limit(1 << 28)
        .dfa_size_limit(1 << 28)
        .build()
        .expect("the translation is a valid regex");
    assert_eq!(got, regex.is_match(&name), "{pattern:?} vs {name:?}");
    if !pattern.contains('[') && pattern.len() + name.len() <= 512 {
        let p: Vec<char> = pattern.chars().collect();
        let n: Vec<char> = name.chars().collect();
        assert_eq!(got, glob_model(&p, &n), "{pattern:?} vs {name:?}");
    }
    if !pattern.contains(['*', '?', '[']) {
        assert!(compiled.is_match(&pattern), "a literal matches itself");
    }
}

/// Python `fnmatch` for a pattern without `[`: `*` is any run of characters,
/// `?` any one character, everything else (backslash included) itself.
/// Dynamic programming over (pattern, name) prefixes.
pub fn glob_model(pattern: &[char], name: &[char]) -> bool {
    // row[j]: pattern[..i] matches name[..j]
    let mut row = vec![false; name.len() + 1];
    row[0] = true;
    for &pc in pattern {
        let mut next = vec![false; name.len() + 1];
        if pc == '*' {
            let mut any = false;
            for j in 0..=name.len() {
                any |= row[j];
                next[j] = any;
            }
        } else {
            for j in 1..=name.len() {
                next[j] = row[j - 1] && (pc == '?' || pc == name[j - 1]);
            }
        }
        row = next;
    }
    row[name.len()]
}

/// File bytes → text, as the reference's `open(..., errors="replace").read()`.
///
/// Must equal [`decode_model`]: a UTF-8 decoder written from the Unicode
/// well-formedness table (one U+FFFD per maximal subpart of an ill-formed
/// sequence, as Python does), followed by universal newlines.
pub fn decode(data: &[u8]) {
    let got = decode_bytes(data.to_vec());
    let (text, replaced) = decode_model(data);
    assert_eq!(got.text, text, "{data:?}");
    assert_eq!(got.replaced, replaced, "{data:?}");
    assert!(!got.text.contains('\r'));
    let _ = promptinclude::pystr::is_blank(&got.text);
}

/// The independent decoder used by [`decode`]: returns the text and the number of
/// replacement characters inserted.
pub fn decode_model(bytes: &[u8]) -> (String, usize) {
    let mut chars: Vec<char> = Vec::with_capacity(bytes.len());
    let mut replaced = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b0 = bytes[i];
        // (sequence length, allowed range of the second byte)
        let (len, lo, hi) = match b0 {
            0x00..=0x7F => {
                chars.push(char::from(b0));
                i += 1;
                continue;
            }
            0xC2..=0xDF => (2, 0x80, 0xBF),
            0xE0 => (3, 0xA0, 0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
            0xED => (3, 0x80, 0x9F),
            0xF0 => (4, 0x90, 0xBF),
            0xF1..=0xF3 => (4, 0x80, 0xBF),
            0xF4 => (4, 0x80, 0x8F),
            _ => (1, 1, 0),
        };
        let mut end = i + 1;
        let mut ok = len > 1;
        for k in 1..len {
            let (lo, hi) = if k == 1 { (lo, hi) } else { (0x80, 0xBF) };
            match bytes.get(i + k) {
                Some(&b) if (lo..=hi).contains(&b) => end = i + k + 1,
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            let mut cp = u32::from(b0) & (0x7F >> len);
            for &b in &bytes[i + 1..end] {
                cp = (cp << 6) | u32::from(b & 0x3F);
            }
            chars.push(char::from_u32(cp).expect("well-formed sequences are scalar values"));
        } else {
            chars.push('\u{FFFD}');
            replaced += 1;
        }
        i = end;
    }
    let mut text = String::with_capacity(bytes.len());
    let mut k = 0;
    while k < chars.len() {
        if chars[k] == '\r' {
            text.push('\n');
            if chars.get(k + 1) == Some(&'\n') {
                k += 1;
            }
        } else {
            text.push(chars[k]);
        }
        k += 1;
    }
    (text, replaced)
}

/// `max_lo max_hi seed_lo seed_hi text...` → token counting and trimming.
///
/// Checks that [`tokenize::count`], the bpe-openai engine and the start-up fast
/// path agree; that [`tokenize::trim`] returns the text unchanged when it fits
/// and otherwise exactly the reference formula's prefix plus `...`; that
/// `trim_counted` with a wrong count does not panic; that a safe cut
/// ([`tokenize::is_cut`]) splits the count additively; and that counting the
/// pieces between [`tokenize::cut_points`] gives the whole count.
pub fn trim(data: &[u8]) {
    if data.len() < 4 {
        return;
    }
    let max = usize::from(u16::from_le_bytes([data[0], data[1]]) % 2048);
    let seed = usize::from(u16::from_le_bytes([data[2], data[3]]));
    let text = String::from_utf8_lossy(&data[4..]);
    let n = tokenize::count(&text);
    assert_eq!(n, tokenize::count_bpe(&text), "bpe engine on {text:?}");
    assert_eq!(n, tokenize::count_fast(&text), "fast engine on {text:?}");
    let out = tokenize::trim(&text, max);
    if n <= max {
        assert!(
            matches!(out, Cow::Borrowed(t) if t == text),
            "fits, unchanged"
        );
    } else {
        let n_chars = text.chars().count();
        let keep = (n_chars as f64 * (max as f64 / n as f64) * 0.8) as usize;
        let prefix = out.strip_suffix("...").expect("cropped text ends with ...");
        assert!(text.starts_with(prefix));
        assert_eq!(prefix.chars().count(), keep.min(n_chars));
    }
    let _ = tokenize::trim_counted(&text, seed, max);
    let p = seed % (text.len() + 1);
    if tokenize::is_cut(&text, p) {
        assert_eq!(
            tokenize::count(&text[..p]) + tokenize::count(&text[p..]),
            n,
            "cut at {p} in {text:?}"
        );
    }
    let cuts = tokenize::cut_points(&text, 1 + seed % 64);
    assert!(cuts.windows(2).all(|w| w[0] < w[1]) || text.is_empty());
    let sum: usize = cuts
        .windows(2)
        .map(|w| tokenize::count(&text[w[0]..w[1]]))
        .sum();
    assert_eq!(sum, n, "chunked count of {text:?}");
}

/// A configuration document (decoded with replacement) → [`Config`], as YAML and
/// as JSON.
///
/// Never panics. A loaded configuration round-trips through its own JSON
/// serialisation (the bundle manifest's form). An error that names a key names
/// one of the six, in its message too. For a document that serde_json also
/// reads as an object, an independent check decides acceptance as Python would:
/// the last value of every known key must be usable (a string for
/// `name_pattern`; a string or a false value for `gitignore`; a number or a
/// boolean for the limits), and on rejection the error names a bad key.
pub fn config(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let base = Config::default();
    for format in [Format::Json, Format::Yaml] {
        match Config::from_text_with_notes(&text, format, &base) {
            Ok((config, notes)) => {
                assert!(notes
                    .unknown_keys
                    .iter()
                    .all(|k| Key::from_name(&k.key).is_none()));
                let json = serde_json::to_string(&config).expect("serialises");
                let again: Config = serde_json::from_str(&json).expect("reloads");
                assert_eq!(again, config);
            }
            Err(e) => {
                let message = e.to_string();
                if let Some(key) = &e.key {
                    assert!(Key::from_name(key).is_some(), "{key}");
                    assert!(message.contains(key.as_str()), "{message}");
                }
                assert_ne!(e.line, Some(0));
            }
        }
    }
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(&text)
    else {
        return;
    };
    let bad: Vec<&str> = map
        .iter()
        .filter(|(k, v)| !json_value_fits(k, v))
        .map(|(k, _)| k.as_str())
        .collect();
    match Config::from_text(&text, Format::Json, &base) {
        Ok(_) => assert!(bad.is_empty(), "accepted bad keys {bad:?} in {text:?}"),
        Err(e) => {
            let key = e.key.as_deref().unwrap_or("");
            assert!(bad.contains(&key), "error {e} names no bad key of {bad:?}");
        }
    }
}

/// Whether a JSON value is acceptable for `key` (unknown keys accept anything).
fn json_value_fits(key: &str, value: &serde_json::Value) -> bool {
    use serde_json::Value;
    match key {
        "name_pattern" => value.is_string(),
        // Python's `not gitignore`: None, False, 0, 0.0, "", [], {} mean no patterns.
        "gitignore" => match value {
            Value::String(_) | Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::Array(a) => a.is_empty(),
            Value::Object(o) => o.is_empty(),
        },
        "max_depth" | "max_file_tokens" | "max_file_count" | "max_total_tokens" => {
            matches!(value, Value::Number(_) | Value::Bool(_))
        }
        _ => true,
    }
}
