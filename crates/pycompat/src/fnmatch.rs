//! The reference's name filter: Python's `fnmatch.fnmatch(name, pattern)` on POSIX
//! (CPython 3.11), which is `re.match(fnmatch.translate(pattern), name)`.
//!
//! This is a port of CPython 3.11's `fnmatch.translate` to the `regex` crate, because
//! neither `globset` nor `glob` is exact (they escape with `\`, read `[^…]` as negation,
//! expand braces, work on bytes, reject unclosed `[`, or reject `**` inside a segment).
//! The rules reproduced here:
//!
//! * case-sensitive; anchored at both ends (`\Z` is the true end of the name);
//! * `*` matches any run of characters, `/` and `\n` included (DOTALL); `?` matches one
//!   character, `/` and `\n` included;
//! * no backslash escaping: `\` is an ordinary character;
//! * `[…]`: skip one `!`, then one `]`, then the first `]` closes; without one, `[` is
//!   a literal. `!` negates, `^` is a literal, `-` between two characters is a range,
//!   reversed ranges are silently removed (`[z-a]` never matches, `[!b-a]` matches any
//!   character), `&`, `~`, `|` are literal;
//! * CPython's atomic groups `(?>.*?X)` are only an optimisation; plain `.*` is
//!   equivalent, so the `regex` crate (no atomic groups, no backtracking) is exact.
//!
//! The bracket text CPython produces is parsed with Python's class rules (shared with
//! the gitwildmatch translator) and re-emitted as explicit Rust class members.
//!
//! Because the filter runs on every file name of very large trees, common shapes skip
//! the regex engine: `*<literal>` (the default `*.promptinclude.md`) is an `ends_with`
//! check, and `<literal>`, `<literal>*`, `*<literal>*` and `*` are handled likewise.

use regex::{Regex, RegexBuilder};

use crate::pyregex::{parse_python_class, push_class, push_literal, ClassToken, NEVER};

/// Size limit for a compiled name pattern (the default limit could reject long patterns
/// that Python accepts).
const SIZE_LIMIT: usize = 1 << 28;

/// The longest name a pattern is ever matched against, in the bytes of its
/// matching form: NAME_MAX (255) bytes, each at most 4 bytes once an
/// undecodable byte becomes its stand-in. A pattern that needs more can
/// never match, and is not compiled (a 300,000-`?` pattern would exceed any
/// sane regex size limit, where the reference simply returns).
const MAX_NAME_MATCH_BYTES: usize = 4 * 255;

/// A compiled `fnmatch` name pattern.
#[derive(Debug, Clone)]
pub struct NamePattern {
    /// The pattern as given.
    pattern: String,
    /// How names are tested.
    matcher: Matcher,
}

/// The matching strategy chosen for a pattern.
#[derive(Debug, Clone)]
enum Matcher {
    /// Needs more characters than any file name has (NAME_MAX is 255 bytes).
    Never,
    /// The pattern is only `*`s: every name matches.
    Any,
    /// No wildcard at all: the name must equal the literal.
    Exact(String),
    /// `*<literal>`.
    Suffix(String),
    /// `<literal>*`.
    Prefix(String),
    /// `*<literal>*`.
    Contains(String),
    /// Everything else: the translated regex.
    Regex(Regex),
}

impl NamePattern {
    /// Compiles `pattern` with CPython 3.11 `fnmatch.translate` semantics.
    ///
    /// Every pattern is valid for Python; an error can only come from the regex
    /// engine's size limits on a pathological pattern.
    pub fn new(pattern: &str) -> Result<NamePattern, regex::Error> {
        let matcher = match fast_path(pattern) {
            Some(m) => m,
            None => {
                let source = translate(pattern);
                if crate::needs_more_than(&source, MAX_NAME_MATCH_BYTES) {
                    Matcher::Never
                } else {
                    Matcher::Regex(
                        RegexBuilder::new(&source)
                            .size_limit(SIZE_LIMIT)
                            .dfa_size_limit(SIZE_LIMIT)
                            .build()?,
                    )
                }
            }
        };
        Ok(NamePattern {
            pattern: pattern.to_string(),
            matcher,
        })
    }

    /// `fnmatch.fnmatch(name, pattern)` on POSIX. For names that are not valid UTF-8,
    /// pass [`crate::pystr::matching_str`] of the raw bytes.
    pub fn is_match(&self, name: &str) -> bool {
        match &self.matcher {
            Matcher::Any => true,
            Matcher::Never => false,
            Matcher::Exact(lit) => name == lit,
            Matcher::Suffix(lit) => name.ends_with(lit.as_str()),
            Matcher::Prefix(lit) => name.starts_with(lit.as_str()),
            Matcher::Contains(lit) => name.contains(lit.as_str()),
            Matcher::Regex(re) => re.is_match(name),
        }
    }

    /// [`NamePattern::is_match`] on a raw file name, whose undecodable bytes
    /// stand for the characters [`crate::pystr::matching_str`] gives them.
    ///
    /// For the literal shapes with an ASCII literal the raw bytes are tested
    /// directly, with no decoding: ASCII bytes are always decoded as
    /// themselves and stand-in characters contain no ASCII byte, so a name
    /// starts with, ends with, contains or equals an ASCII literal exactly
    /// when its decoded form does.
    pub fn is_match_bytes(&self, name: &[u8]) -> bool {
        match &self.matcher {
            Matcher::Any => true,
            Matcher::Exact(lit) if lit.is_ascii() => name == lit.as_bytes(),
            Matcher::Suffix(lit) if lit.is_ascii() => name.ends_with(lit.as_bytes()),
            Matcher::Prefix(lit) if lit.is_ascii() => name.starts_with(lit.as_bytes()),
            Matcher::Contains(lit) if lit.is_ascii() => {
                name.windows(lit.len()).any(|w| w == lit.as_bytes())
            }
            _ => self.is_match(&crate::pystr::matching_str(name)),
        }
    }

    /// The pattern as given to [`NamePattern::new`].
    pub fn as_str(&self) -> &str {
        &self.pattern
    }
}

/// Recognises patterns made only of `*` and literal characters with at most one
/// literal run at the start, the end, or between a leading and a trailing star.
fn fast_path(pattern: &str) -> Option<Matcher> {
    if pattern.contains(['?', '[']) {
        return None;
    }
    let lead = pattern.len() - pattern.trim_start_matches('*').len();
    let inner = pattern.trim_matches('*');
    if inner.is_empty() {
        return Some(if pattern.is_empty() {
            Matcher::Exact(String::new())
        } else {
            Matcher::Any
        });
    }
    if inner.contains('*') {
        return None;
    }
    let trail = pattern.len() - pattern.trim_end_matches('*').len();
    let lit = inner.to_string();
    Some(match (lead > 0, trail > 0) {
        (false, false) => Matcher::Exact(lit),
        (true, false) => Matcher::Suffix(lit),
        (false, true) => Matcher::Prefix(lit),
        (true, true) => Matcher::Contains(lit),
    })
}

/// One piece of the translation before stars are resolved.
enum Piece {
    /// A run of `*` (already collapsed).
    Star,
    /// Rust regex text for one pattern element.
    Re(String),
}

/// CPython 3.11 `fnmatch.translate`, producing an anchored Rust regex.
pub fn translate(pattern: &str) -> String {
    let pat: Vec<char> = pattern.chars().collect();
    let n = pat.len();
    let mut res: Vec<Piece> = Vec::new();
    let mut i = 0;
    while i < n {
        let c = pat[i];
        i += 1;
        match c {
            '*' => {
                if !matches!(res.last(), Some(Piece::Star)) {
                    res.push(Piece::Star);
                }
            }
            '?' => res.push(Piece::Re(".".to_string())),
            '[' => {
                let mut j = i;
                if j < n && pat[j] == '!' {
                    j += 1;
                }
                if j < n && pat[j] == ']' {
                    j += 1;
                }
                while j < n && pat[j] != ']' {
                    j += 1;
                }
                if j >= n {
                    res.push(Piece::Re(r"\[".to_string()));
                } else {
                    res.push(Piece::Re(bracket(&pat, i, j)));
                    i = j + 1;
                }
            }
            _ => {
                let mut s = String::new();
                push_literal(&mut s, c);
                res.push(Piece::Re(s));
            }
        }
    }
    let mut out = String::from(r"(?s:^");
    for piece in &res {
        match piece {
            Piece::Star => out.push_str(".*"),
            Piece::Re(s) => out.push_str(s),
        }
    }
    out.push_str(r"\z)");
    out
}

/// Translates the bracket expression `pat[i..j]` (after `[`, before the closing `]`)
/// exactly as CPython 3.11 does, then reads the resulting class text with Python's
/// `re` rules and emits a Rust class.
fn bracket(pat: &[char], mut i: usize, j: usize) -> String {
    let stuff_chars = &pat[i..j];
    let mut stuff = String::new();
    if !stuff_chars.contains(&'-') {
        for &c in stuff_chars {
            push_backslash_doubled(&mut stuff, c);
        }
    } else {
        let mut chunks: Vec<Vec<char>> = Vec::new();
        let mut k = if pat.get(i) == Some(&'!') {
            i + 2
        } else {
            i + 1
        };
        while let Some(found) = (k..j).find(|&x| pat[x] == '-') {
            chunks.push(pat[i..found].to_vec());
            i = found + 1;
            k = found + 3;
        }
        let chunk = &pat[i.min(j)..j];
        if !chunk.is_empty() {
            chunks.push(chunk.to_vec());
        } else if let Some(last) = chunks.last_mut() {
            last.push('-');
        }
        // Remove empty ranges -- invalid in RE.
        for k in (1..chunks.len()).rev() {
            let (Some(&a), Some(&b)) = (chunks[k - 1].last(), chunks[k].first()) else {
                continue;
            };
            if a > b {
                let mut merged = chunks[k - 1][..chunks[k - 1].len() - 1].to_vec();
                merged.extend_from_slice(&chunks[k][1..]);
                chunks[k - 1] = merged;
                chunks.remove(k);
            }
        }
        for (idx, chunk) in chunks.iter().enumerate() {
            if idx > 0 {
                stuff.push('-');
            }
            for &c in chunk {
                if c == '-' {
                    stuff.push_str(r"\-");
                } else {
                    push_backslash_doubled(&mut stuff, c);
                }
            }
        }
    }
    // Escape set operations (&&, ~~ and ||).
    let mut escaped = String::with_capacity(stuff.len());
    for c in stuff.chars() {
        if matches!(c, '&' | '~' | '|') {
            escaped.push('\\');
        }
        escaped.push(c);
    }
    let mut stuff = escaped;
    if stuff.is_empty() {
        return NEVER.to_string();
    }
    if stuff == "!" {
        return ".".to_string();
    }
    if let Some(rest) = stuff.strip_prefix('!') {
        stuff = format!("^{rest}");
    } else if stuff.starts_with(['^', '[']) {
        stuff.insert(0, '\\');
    }
    python_class_to_rust(&stuff)
}

/// Appends `c`, doubling a backslash (Python `s.replace('\\', r'\\')`).
fn push_backslash_doubled(out: &mut String, c: char) {
    if c == '\\' {
        out.push('\\');
    }
    out.push(c);
}

/// Reads `[` + `body` + `]` as a Python `re` character class and emits the Rust
/// equivalent. The class text CPython's `translate` builds never raises; should it
/// (it cannot), the class matches nothing.
fn python_class_to_rust(body: &str) -> String {
    let mut tokens = Vec::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e) => tokens.push(ClassToken {
                    c: e,
                    escaped: true,
                }),
                None => tokens.push(ClassToken { c, escaped: false }),
            }
        } else {
            tokens.push(ClassToken { c, escaped: false });
        }
    }
    let negate = tokens.first().is_some_and(|t| !t.escaped && t.c == '^');
    let start = usize::from(negate);
    let mut class_tokens = tokens[start..].to_vec();
    class_tokens.push(ClassToken {
        c: ']',
        escaped: false,
    });
    match parse_python_class(&class_tokens) {
        Ok(items) => {
            let mut out = String::new();
            push_class(&mut out, negate, &items);
            out
        }
        Err(_) => NEVER.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, name: &str) -> bool {
        match NamePattern::new(pattern) {
            Ok(p) => p.is_match(name),
            Err(e) => panic!("{pattern}: {e}"),
        }
    }

    #[test]
    fn raw_names_match_like_their_decoded_form() {
        // Every shape, ASCII and non-ASCII literals, names with undecodable
        // bytes next to the literal: the byte path must agree with matching
        // the stand-in string.
        let patterns = [
            "*.promptinclude.md",
            "*.md",
            "rules*",
            "*rule*",
            "a.md",
            "*",
            "",
            "*é*",
            "é*",
            "*\u{fffd}",
            "r?les.md",
            "[!a]*",
            "**x**",
        ];
        let parts: [&[u8]; 12] = [
            b"rules",
            b".promptinclude",
            b".md",
            b"\xff",
            b"\xc3",
            b"\xc3\xa9",
            b"\xe2\x82",
            b"a",
            b"",
            b"\xef\xbf\xbd",
            b"\xf4\x8f\xbf\xbf",
            b"rule",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for pattern in patterns {
            let p = NamePattern::new(pattern).unwrap();
            for _ in 0..3000 {
                let name: Vec<u8> = (0..next(5))
                    .flat_map(|_| parts[next(parts.len())].to_vec())
                    .collect();
                let decoded = crate::pystr::matching_str(&name);
                assert_eq!(
                    p.is_match_bytes(&name),
                    p.is_match(&decoded),
                    "{pattern:?} on {name:?}"
                );
            }
        }
    }

    #[test]
    fn basics() {
        assert!(m("*.promptinclude.md", "a.promptinclude.md"));
        assert!(m("*.promptinclude.md", ".promptinclude.md"));
        assert!(!m("*.promptinclude.md", "A.PROMPTINCLUDE.MD"));
        assert!(!m("*.md", "x.md\n"));
        assert!(m("*", "a/b\nc"));
        assert!(m("?", "\n"));
        assert!(m(r"a\b", r"a\b"));
        assert!(m("[", "["));
        assert!(m("[!]", "[!]"));
        assert!(m("[^a]", "^"));
        assert!(!m("[^a]", "b"));
        assert!(!m("[z-a]", "z"));
        assert!(m("[!b-a]", "q"));
        assert!(m("[az-a]", "a"));
        assert!(!m("[az-a]", "z"));
        assert!(m("[a-c-e]", "-"));
        assert!(!m("[a-c-e]", "d"));
        assert!(m("[a&&b]", "&"));
        assert!(m("[[:alpha:]]", ":]"));
        assert!(m("[]]", "]"));
        assert!(m("[!]]", "a"));
        assert!(m("a*b*c", "axxbyyc"));
        assert!(!m("a*b*c", "axxbyy"));
        assert!(m("", ""));
        assert!(!m("", "a"));
        assert!(m("**", ""));
        assert!(m("*mid*", "amidb"));
        assert!(m("pre*", "prefix"));
    }
}
