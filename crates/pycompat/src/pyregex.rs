//! Pieces of Python `re` syntax that both pattern translations need:
//! pathspec's `gitwildmatch` and CPython's `fnmatch` both write Python
//! regular expressions with character classes, which are rewritten here
//! into the `regex` crate's syntax with CPython 3.11's parsing rules.

/// A Rust regex that never matches (an empty class).
pub(crate) const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

/// Appends `c` as a literal.
pub(crate) fn push_literal(out: &mut String, c: char) {
    let mut buf = [0u8; 4];
    out.push_str(&regex::escape(c.encode_utf8(&mut buf)));
}

/// One token of Python class text: a character, and whether it was written with a
/// backslash (an escaped `]` or `-` has no special meaning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ClassToken {
    /// The character the token stands for.
    pub(crate) c: char,
    /// Whether the token was `\c` in the Python text.
    pub(crate) escaped: bool,
}

/// Parses the body of a Python `re` character class, the tokens after `[` and an
/// optional `^`, up to and including the closing `]`, exactly as CPython 3.11's
/// `re._parser` does for literal tokens: a `]` closes the class only once the set is
/// non-empty; `a-b` is a range unless `b` is the closing `]` (then `-` is literal);
/// a range with `hi < lo` is `re.error: bad character range`.
///
/// Returns the inclusive `(lo, hi)` ranges, or the `re.error` message.
pub(crate) fn parse_python_class(tokens: &[ClassToken]) -> Result<Vec<(char, char)>, String> {
    let text = |t: &ClassToken| {
        if t.escaped {
            format!("\\{}", t.c)
        } else {
            t.c.to_string()
        }
    };
    let unescaped = |t: Option<&ClassToken>, c: char| t.is_some_and(|t| !t.escaped && t.c == c);
    let mut items: Vec<(char, char)> = Vec::new();
    let mut k = 0;
    loop {
        let Some(this) = tokens.get(k) else {
            return Err("unterminated character set".to_string());
        };
        k += 1;
        if unescaped(Some(this), ']') && !items.is_empty() {
            return Ok(items);
        }
        if unescaped(tokens.get(k), '-') {
            k += 1;
            let Some(that) = tokens.get(k) else {
                return Err("unterminated character set".to_string());
            };
            k += 1;
            if unescaped(Some(that), ']') {
                items.push((this.c, this.c));
                items.push(('-', '-'));
                return Ok(items);
            }
            if that.c < this.c {
                return Err(format!("bad character range {}-{}", text(this), text(that)));
            }
            items.push((this.c, that.c));
        } else {
            items.push((this.c, this.c));
        }
    }
}

/// Appends a Rust class with the given members; `negate` gives `[^…]`, which (as in
/// Python) also matches `/` and `\n`.
pub(crate) fn push_class(out: &mut String, negate: bool, items: &[(char, char)]) {
    use std::fmt::Write as _;
    out.push('[');
    if negate {
        out.push('^');
    }
    for &(lo, hi) in items {
        if lo == hi {
            let _ = write!(out, "\\x{{{:X}}}", u32::from(lo));
        } else {
            let _ = write!(out, "\\x{{{:X}}}-\\x{{{:X}}}", u32::from(lo), u32::from(hi));
        }
    }
    out.push(']');
}

/// Whether every match of the regex `source` is longer than `max_bytes`
/// (so it can never match a shorter subject). `false` when unsure.
pub fn needs_more_than(source: &str, max_bytes: usize) -> bool {
    // Cheap first: without counted repetitions (which the translations never
    // write) no regex requires more bytes than its own source has.
    if source.len() <= max_bytes {
        return false;
    }
    regex_syntax::ParserBuilder::new()
        .nest_limit(1000)
        .build()
        .parse(source)
        .ok()
        .and_then(|hir| hir.properties().minimum_len())
        .is_some_and(|min| min > max_bytes)
}
