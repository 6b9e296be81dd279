//! The reference's ignore check: pathspec 1.1.1 `"gitwildmatch"` patterns, reproduced
//! exactly by translating every pattern line into a `regex`-crate regex.
//!
//! # Why this is hand-written
//!
//! The obvious crates (`ignore`, `globset`) implement *git's* semantics, and the
//! reference uses *pathspec's*. They disagree in 13 verdict classes that change which
//! rule files the scanner returns (unclosed `[` dropping the whole line, code points vs
//! bytes, negated classes and ranges matching `/`, POSIX classes and braces being
//! literal, `X/**/` matching `X` itself, `***`, the scanner's `rel || rel + "/"` rule
//! against `!dir/`, `X/**` hitting `X`, `!dir/` re-including every descendant, `!/`,
//! literal `//`, and newlines in names), plus three build-time classes (which lines
//! raise). None of them can be configured away, so this module follows pathspec 1.1.1's
//! `GitIgnoreSpecPattern.pattern_to_regex` step by step (see
//! `shared/spec/gitwildmatch.md` §2 and §5) and emits Rust regex syntax:
//!
//! * Python's `$` becomes `\n?\z` (it also matches before one final `\n`);
//! * a bracket expression is parsed the way Python's `re` parses the class text pathspec
//!   builds (first `]` literal, `x-y` ranges, `-` literal when first or last, every
//!   backslash literal, `[`/`&&`/`--`/`~~`/`:` plain characters, a reversed range is
//!   `re.error`) and re-emitted as explicit `\x{..}` members, because Rust's class syntax
//!   (nested classes, set operations, POSIX classes) would read the same text
//!   differently;
//! * `^`, `.` and negated classes behave the same in both engines (`.` excludes only
//!   `\n`; negated classes include `/` and `\n`).
//!
//! All patterns of a spec are compiled into one [`regex::RegexSet`], so a path is
//! tested against every pattern in one pass; the highest matching index decides
//! ("last match wins"), as in pathspec's simple backend.
//!
//! # Non-UTF-8 names
//!
//! Python matches undecodable names as lone surrogates (U+DC80+byte). Callers pass the
//! name through [`crate::pystr::matching_str`], which uses the stand-in U+10FF00+byte.
//! Both match `?`, `*`, `.` and negated classes and no ordinary literal, so the only
//! residual divergence is a character-class range that contains exactly one of the two
//! (for example `[\u{100}-\u{ffff}]` contains the surrogate but not the stand-in), or a
//! pattern spelling a stand-in character literally.

use std::fmt;

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};

use crate::pyregex::{parse_python_class, push_class, push_literal, ClassToken, NEVER};
use regex_syntax::hir::{Hir, HirKind};

use crate::pystr::{py_rstrip, py_splitlines, py_strip};

/// pathspec's `_DIR_MARK_CG`, `(?P<ps_d>/)`, without the (unused) capture name.
const DIR_MARK: &str = "/";

/// pathspec's `_DIR_MARK_OPT`, `(?:(?P<ps_d>/)|$)`; Python's `$` (end of text, or
/// before a final `\n`) is `\n?\z` in Rust syntax.
const DIR_MARK_OPT: &str = r"(?:/|\n?\z)";

/// Size limit for the compiled regexes. Real pattern lists are tiny; this only keeps a
/// pathological line from failing where Python (which has no limit) would succeed.
const SIZE_LIMIT: usize = 1 << 29;

/// The longest relative path a pattern is matched against where the
/// reference returns: below PATH_MAX (4096) bytes, each at most 4 bytes in
/// its matching form.
const MAX_PATH_MATCH_BYTES: usize = 4 * 4096;

/// One line of the pattern list, compiled.
#[derive(Debug, Clone)]
pub struct IgnorePattern {
    /// 1-based line number. For [`IgnoreSpec::from_gitignore_text`] it counts the lines of
    /// the original text as Python's `str.splitlines` produces them (blank and comment
    /// lines included); for [`IgnoreSpec::from_lines`] it is the position in the list.
    pub line_number: usize,
    /// The line as given to pathspec (for the scanner: stripped, non-empty, not `#…`).
    pub text: String,
    /// Whether the line is a `!` (re-include) pattern.
    pub negated: bool,
    /// The Rust regex, or `None` for a pattern that never matches (`/`, a comment, or a
    /// line pathspec 1.1.1 discards because of an unclosed `[`).
    regex: Option<String>,
}

impl IgnorePattern {
    /// The Rust regex this line was translated to; `None` if the line is a no-op.
    pub fn regex(&self) -> Option<&str> {
        self.regex.as_deref()
    }

    /// Whether the line can never match anything (pathspec `include is None`): `/`, a
    /// comment, a blank line, or a line with an unclosed `[` (discarded by pathspec 1.1.1).
    pub fn is_noop(&self) -> bool {
        self.regex.is_none()
    }
}

/// Which exception pathspec 1.1.1 (or Python's `re`) raises for a pattern line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatternErrorKind {
    /// `GitIgnorePatternError` ("Invalid git pattern"): a lone `!`, or a backslash at the
    /// end of a path segment (`a\`, `a\/b`, a stripped `foo\ `).
    InvalidPattern,
    /// `re.error` ("bad character range"): a reversed range in a bracket expression, such
    /// as `[z-a]`, in a line that is otherwise valid.
    BadCharacterRange,
}

/// A pattern line that makes the reference raise; the whole scan must fail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError {
    /// 1-based number of the offending line (same numbering as
    /// [`IgnorePattern::line_number`]).
    pub line_number: usize,
    /// The offending line as given to pathspec.
    pub line: String,
    /// Which exception the reference raises.
    pub kind: PatternErrorKind,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: invalid pattern `", self.line_number)?;
        for c in self.line.chars() {
            if c.is_control() {
                write!(f, "{}", c.escape_default())?;
            } else {
                write!(f, "{c}")?;
            }
        }
        let detail = match translate_line(&self.line) {
            Err(failure) => failure.detail,
            Ok(_) => match self.kind {
                PatternErrorKind::InvalidPattern => {
                    "the translated pattern is too large for the regex engine".to_string()
                }
                PatternErrorKind::BadCharacterRange => "bad character range".to_string(),
            },
        };
        write!(f, "`: {detail}")
    }
}

impl std::error::Error for PatternError {}

/// A compiled pattern list with pathspec's "last matching pattern wins" rule.
#[derive(Debug, Clone)]
pub struct IgnoreSpec {
    /// Every line, in order (no-op lines included).
    patterns: Vec<IgnorePattern>,
    /// The regexes of the non-no-op lines.
    matcher: Matcher,
    /// `matcher` index → index into `patterns`.
    active: Vec<usize>,
    /// Whether any active pattern is negated; if not, "any match" is the verdict.
    has_negated: bool,
    /// When no pattern is negated and every active pattern's regex requires a
    /// literal (see [`required_literal`]): those literals. A path containing
    /// none of them matches no pattern, so it is passed without running the
    /// regexes (most directories of a tree, under the default spec).
    required: Option<AhoCorasick>,
}

/// All active regexes: one set normally, a list if the set would be too large.
#[derive(Debug, Clone)]
enum Matcher {
    Set(RegexSet),
    List(Vec<Regex>),
}

impl IgnoreSpec {
    /// The scanner's text→spec step: split with Python's `str.splitlines`, strip each
    /// line (Python whitespace), drop empty lines and lines starting with `#`, and
    /// compile the rest in order. `Ok(None)` when no lines remain (no filtering at all).
    ///
    /// Errors name the first line that makes pathspec raise, numbered in the original
    /// text's `splitlines` numbering.
    pub fn from_gitignore_text(text: &str) -> Result<Option<IgnoreSpec>, PatternError> {
        let mut lines = gitignore_lines(text).peekable();
        if lines.peek().is_none() {
            return Ok(None);
        }
        Self::from_numbered_lines(lines).map(Some)
    }

    /// pathspec's `PathSpec.from_lines("gitwildmatch", lines)`: empty strings are
    /// skipped, every other line is compiled as given (pathspec's own rstrip, comment and
    /// `\ ` handling included). Line numbers are positions in `lines`, starting at 1.
    pub fn from_lines<I, S>(lines: I) -> Result<IgnoreSpec, PatternError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let owned: Vec<(usize, S)> = lines
            .into_iter()
            .enumerate()
            .map(|(i, s)| (i + 1, s))
            .collect();
        Self::from_numbered_lines(
            owned
                .iter()
                .filter(|(_, s)| !s.as_ref().is_empty())
                .map(|(n, s)| (*n, s.as_ref())),
        )
    }

    /// Compiles `(line_number, line)` pairs in order; the first line that makes pathspec
    /// raise is reported.
    fn from_numbered_lines<'a, I>(lines: I) -> Result<IgnoreSpec, PatternError>
    where
        I: IntoIterator<Item = (usize, &'a str)>,
    {
        let mut patterns = Vec::new();
        for (line_number, line) in lines {
            match translate_line(line) {
                Ok(t) => patterns.push(IgnorePattern {
                    line_number,
                    text: line.to_string(),
                    negated: t.negated,
                    // A pattern that needs a longer path than any the
                    // reference can walk never matches: it decides nothing,
                    // like a no-op line, and is not compiled.
                    regex: t
                        .regex
                        .filter(|r| !crate::needs_more_than(r, MAX_PATH_MATCH_BYTES)),
                }),
                Err(failure) => {
                    return Err(PatternError {
                        line_number,
                        line: line.to_string(),
                        kind: failure.kind,
                    })
                }
            }
        }
        let active: Vec<usize> = (0..patterns.len())
            .filter(|&i| patterns[i].regex.is_some())
            .collect();
        let has_negated = active.iter().any(|&i| patterns[i].negated);
        let sources: Vec<&str> = active
            .iter()
            .filter_map(|&i| patterns[i].regex.as_deref())
            .collect();
        let matcher = match RegexSetBuilder::new(&sources)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(SIZE_LIMIT)
            .build()
        {
            Ok(set) => Matcher::Set(set),
            Err(_) => {
                let mut list = Vec::with_capacity(sources.len());
                for (k, src) in sources.iter().enumerate() {
                    match RegexBuilder::new(src)
                        .size_limit(SIZE_LIMIT)
                        .dfa_size_limit(SIZE_LIMIT)
                        .build()
                    {
                        Ok(re) => list.push(re),
                        Err(_) => {
                            let p = &patterns[active[k]];
                            return Err(PatternError {
                                line_number: p.line_number,
                                line: p.text.clone(),
                                kind: PatternErrorKind::InvalidPattern,
                            });
                        }
                    }
                }
                Matcher::List(list)
            }
        };
        let required = if has_negated {
            None
        } else {
            required_literals(&sources)
        };
        Ok(IgnoreSpec {
            patterns,
            matcher,
            active,
            has_negated,
            required,
        })
    }

    /// Every compiled line, in order (no-op lines included).
    pub fn patterns(&self) -> &[IgnorePattern] {
        &self.patterns
    }

    /// pathspec `match_file`: the deciding pattern, i.e. the last pattern whose regex
    /// matches the normalized `path` (negated or not); `None` if no pattern matches.
    /// The path is ignored iff the result is `Some` and not negated.
    pub fn decide(&self, path: &str) -> Option<&IgnorePattern> {
        let path = normalize_file(path);
        let k = match &self.matcher {
            Matcher::Set(set) => set.matches(path).iter().next_back()?,
            Matcher::List(list) => list.iter().rposition(|re| re.is_match(path))?,
        };
        self.active.get(k).map(|&i| &self.patterns[i])
    }

    /// pathspec `match_file(path)`: whether the last matching pattern is an ignore
    /// (non-`!`) pattern.
    pub fn is_match(&self, path: &str) -> bool {
        !self.lacks_required_literal(path) && self.matches_unfiltered(path)
    }

    /// [`IgnoreSpec::is_match`] without the literal prefilter.
    fn matches_unfiltered(&self, path: &str) -> bool {
        if !self.has_negated {
            let path = normalize_file(path);
            return match &self.matcher {
                Matcher::Set(set) => set.is_match(path),
                Matcher::List(list) => list.iter().any(|re| re.is_match(path)),
            };
        }
        self.decide(path).is_some_and(|p| !p.negated)
    }

    /// The scanner's directory rule: `match_file(rel) or match_file(rel + "/")`
    /// (a pruned directory is not entered). Does not allocate for short paths.
    pub fn is_dir_ignored(&self, rel: &str) -> bool {
        with_slash(rel, |with| {
            // `rel` and both normalized forms are substrings of `rel + "/"`:
            // if it holds no required literal, neither check can match.
            !self.lacks_required_literal(with)
                && (self.matches_unfiltered(rel) || self.matches_unfiltered(with))
        })
    }

    /// Whether `text` contains none of the [`IgnoreSpec::required`] literals
    /// (so no pattern can match it or any of its substrings, such as its
    /// normalized form).
    fn lacks_required_literal(&self, text: &str) -> bool {
        self.required.as_ref().is_some_and(|ac| !ac.is_match(text))
    }

    /// The scanner's file rule: `match_file(rel)`.
    pub fn is_file_ignored(&self, rel: &str) -> bool {
        self.is_match(rel)
    }

    /// For `check-ignore`: the verdict under the scanner's rule and the pattern that
    /// decided it. Files check `rel`; directories check `rel`, then `rel + "/"`. When the
    /// path is not ignored, the pattern is the `!` line that re-included it (if any).
    pub fn explain(&self, rel: &str, is_dir: bool) -> (bool, Option<&IgnorePattern>) {
        let first = self.decide(rel);
        if let Some(p) = first {
            if !p.negated {
                return (true, Some(p));
            }
        }
        if is_dir {
            let second = with_slash(rel, |p| self.decide(p));
            if let Some(p) = second {
                if !p.negated {
                    return (true, Some(p));
                }
            }
            return (false, first.or(second));
        }
        (false, first)
    }
}

/// The scanner's text→lines step: `(line_number, stripped_line)` for every line of
/// `text.splitlines()` that is non-empty after Python `strip()` and does not start with
/// `#`. Line numbers are 1-based positions in `splitlines`.
pub fn gitignore_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    py_splitlines(text).enumerate().filter_map(|(i, line)| {
        let line = py_strip(line);
        if line.is_empty() || line.starts_with('#') {
            None
        } else {
            Some((i + 1, line))
        }
    })
}

/// pathspec's `normalize_file` on POSIX: remove one leading `/`, otherwise one
/// leading `./`. No separators are replaced.
fn normalize_file(path: &str) -> &str {
    if let Some(rest) = path.strip_prefix('/') {
        rest
    } else if let Some(rest) = path.strip_prefix("./") {
        rest
    } else {
        path
    }
}

/// One literal for each regex in `sources` that every match of it contains,
/// as a multi-literal searcher; `None` if some regex has no such literal.
fn required_literals(sources: &[&str]) -> Option<AhoCorasick> {
    let literals = sources
        .iter()
        .map(|src| required_literal(&regex_syntax::parse(src).ok()?))
        .collect::<Option<Vec<Vec<u8>>>>()?;
    if literals.is_empty() {
        return None;
    }
    AhoCorasick::new(literals).ok()
}

/// The longest literal that every match of `hir` contains, found only
/// where that is certain: a literal, or one inside a group, a repetition of
/// at least one, or a concatenation (whose parts all take part in a match).
/// Alternations, classes and case-insensitive text give `None`.
fn required_literal(hir: &Hir) -> Option<Vec<u8>> {
    match hir.kind() {
        HirKind::Literal(literal) => Some(literal.0.to_vec()),
        HirKind::Capture(capture) => required_literal(&capture.sub),
        HirKind::Repetition(repetition) if repetition.min >= 1 => required_literal(&repetition.sub),
        HirKind::Concat(parts) => parts
            .iter()
            .filter_map(required_literal)
            .max_by_key(Vec::len),
        _ => None,
    }
}

/// Calls `f` with `rel + "/"`, using a stack buffer when the path is short.
fn with_slash<R>(rel: &str, f: impl FnOnce(&str) -> R) -> R {
    let mut buf = [0u8; 512];
    let n = rel.len();
    if n < buf.len() {
        buf[..n].copy_from_slice(rel.as_bytes());
        buf[n] = b'/';
        if let Ok(s) = std::str::from_utf8(&buf[..=n]) {
            return f(s);
        }
    }
    let mut s = String::with_capacity(n + 1);
    s.push_str(rel);
    s.push('/');
    f(&s)
}

/// A successfully translated line.
struct Translated {
    negated: bool,
    regex: Option<String>,
}

/// Why a line makes pathspec raise.
struct Failure {
    kind: PatternErrorKind,
    detail: String,
}

impl Failure {
    fn lone_bang() -> Failure {
        Failure {
            kind: PatternErrorKind::InvalidPattern,
            detail: "the pattern is empty after removing `!` (pathspec raises \
                     GitIgnorePatternError: Invalid git pattern)"
                .to_string(),
        }
    }

    fn dangling(segment: &str) -> Failure {
        Failure {
            kind: PatternErrorKind::InvalidPattern,
            detail: format!(
                "dangling backslash: path segment `{segment}` ends with `\\`, which escapes \
                 nothing (pathspec raises GitIgnorePatternError: Invalid git pattern; note \
                 that surrounding whitespace is stripped first, so `\\ ` loses its space)"
            ),
        }
    }
}

/// Why one path segment could not be translated.
enum SegmentError {
    /// An unclosed `[`: pathspec 1.1.1 discards the whole line.
    Unclosed,
    /// A trailing `\`: `GitIgnorePatternError`.
    Dangling,
}

/// pathspec 1.1.1 `GitIgnoreSpecPattern.pattern_to_regex`, emitting Rust syntax.
fn translate_line(line: &str) -> Result<Translated, Failure> {
    let p = if line.ends_with("\\ ") {
        line
    } else {
        py_rstrip(line)
    };
    if p.is_empty() || p.starts_with('#') || p == "/" {
        return Ok(Translated {
            negated: false,
            regex: None,
        });
    }
    let (negated, p) = match p.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, p),
    };
    let (segs, is_dir) = normalize_segments(p)?;
    let overridden = match segs.as_slice() {
        ["**"] if is_dir => Some(DIR_MARK),
        ["**"] => Some("."),
        ["**", "*"] => Some("."),
        ["**", "*", "**"] => Some(if is_dir { DIR_MARK } else { "/" }),
        _ => None,
    };
    let regex = match overridden {
        Some(re) => Some(re.to_string()),
        None => translate_segments(&segs, is_dir)?,
    };
    Ok(Translated { negated, regex })
}

/// pathspec `__normalize_segments`: the pattern's `/`-separated segments,
/// anchored (`**` in front of a lone name), with a trailing `/` turned
/// into `**` and runs of `**` collapsed; and whether it names directories.
fn normalize_segments(p: &str) -> Result<(Vec<&str>, bool), Failure> {
    let mut segs: Vec<&str> = p.split('/').collect();
    let is_dir = segs.last().is_some_and(|s| s.is_empty());
    if segs.first().is_some_and(|s| s.is_empty()) {
        segs.remove(0);
    } else if (segs.len() == 1 || (segs.len() == 2 && segs[1].is_empty())) && segs[0] != "**" {
        segs.insert(0, "**");
    }
    if segs.is_empty() {
        return Err(Failure::lone_bang());
    }
    if let Some(last) = segs.last_mut() {
        if last.is_empty() {
            *last = "**";
        }
    }
    for i in (1..segs.len()).rev() {
        if segs[i - 1] == "**" && segs[i] == "**" {
            segs.remove(i);
        }
    }
    Ok((segs, is_dir))
}

/// pathspec `__translate_segments`: the regex of normalized segments
/// (Rust syntax), or `None` where pathspec gives the line no regex (an
/// unclosed `[`).
fn translate_segments(segs: &[&str], is_dir: bool) -> Result<Option<String>, Failure> {
    let mut out = String::new();
    let mut bad_range: Option<String> = None;
    let mut need_slash = false;
    let end = segs.len() - 1;
    for (i, seg) in segs.iter().enumerate() {
        if *seg == "**" {
            if i == 0 {
                out.push_str("^(?:.+/)?");
            } else if i < end {
                out.push_str("(?:/.+)?");
                need_slash = true;
            } else {
                out.push_str(if is_dir { DIR_MARK } else { "/" });
            }
            continue;
        }
        if i == 0 {
            out.push('^');
        }
        if need_slash {
            out.push('/');
        }
        if *seg == "*" {
            out.push_str("[^/]+");
        } else {
            match translate_segment_glob(seg, &mut out, &mut bad_range) {
                Ok(()) => {}
                Err(SegmentError::Unclosed) => return Ok(None),
                Err(SegmentError::Dangling) => return Err(Failure::dangling(seg)),
            }
        }
        if i == end {
            out.push_str(DIR_MARK_OPT);
        }
        need_slash = true;
    }
    if let Some(detail) = bad_range {
        return Err(Failure {
            kind: PatternErrorKind::BadCharacterRange,
            detail: format!("{detail} (Python's re raises re.error when pathspec compiles it)"),
        });
    }
    Ok(Some(out))
}

/// pathspec `_translate_segment_glob(seg, 'raise')`, emitting Rust syntax into `out`.
/// A reversed range does not stop the translation (Python only notices it when the
/// whole regex is compiled); the first one is recorded in `bad_range`.
fn translate_segment_glob(
    seg: &str,
    out: &mut String,
    bad_range: &mut Option<String>,
) -> Result<(), SegmentError> {
    let p: Vec<char> = seg.chars().collect();
    let end = p.len();
    let mut i = 0;
    let mut escape = false;
    while i < end {
        let c = p[i];
        i += 1;
        if escape {
            escape = false;
            push_literal(out, c);
        } else if c == '\\' {
            escape = true;
        } else if c == '*' {
            out.push_str("[^/]*");
        } else if c == '?' {
            out.push_str("[^/]");
        } else if c == '[' {
            let mut j = i;
            if j < end && (p[j] == '!' || p[j] == '^') {
                j += 1;
            }
            if j < end && p[j] == ']' {
                j += 1;
            }
            while j < end && p[j] != ']' {
                j += 1;
            }
            if j >= end {
                return Err(SegmentError::Unclosed);
            }
            j += 1;
            let negate = p[i] == '!' || p[i] == '^';
            if negate {
                i += 1;
            }
            // pathspec doubles every backslash, so Python reads each character of the
            // bracket text (closing `]` included) as one unescaped token.
            let tokens: Vec<ClassToken> = p[i..j]
                .iter()
                .map(|&c| ClassToken { c, escaped: false })
                .collect();
            match parse_python_class(&tokens) {
                Ok(items) => push_class(out, negate, &items),
                Err(message) => {
                    if bad_range.is_none() {
                        *bad_range = Some(message);
                    }
                    out.push_str(NEVER);
                }
            }
            i = j;
        } else {
            push_literal(out, c);
        }
    }
    if escape {
        return Err(SegmentError::Dangling);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(lines: &[&str]) -> IgnoreSpec {
        match IgnoreSpec::from_lines(lines) {
            Ok(s) => s,
            Err(e) => panic!("{e}"),
        }
    }

    fn err(lines: &[&str]) -> PatternError {
        match IgnoreSpec::from_lines(lines) {
            Ok(_) => panic!("expected an error for {lines:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn translations() {
        let cases = [
            ("foo", r"^(?:.+/)?foo(?:/|\n?\z)"),
            ("/foo", r"^foo(?:/|\n?\z)"),
            ("foo/", r"^(?:.+/)?foo/"),
            ("foo/**", "^foo/"),
            ("foo/**/", "^foo/"),
            ("a/**/b", r"^a(?:/.+)?/b(?:/|\n?\z)"),
            ("a/**b", r"^a/[^/]*[^/]*b(?:/|\n?\z)"),
            ("*", "."),
            ("**", "."),
            ("**/", "/"),
            ("*/", "/"),
            ("/**/", "/"),
            ("*/**", "^[^/]+/"),
            ("!/", "/"),
        ];
        for (line, want) in cases {
            let s = spec(&[line]);
            assert_eq!(s.patterns()[0].regex(), Some(want), "{line}");
        }
        assert!(spec(&["a[b"]).patterns()[0].is_noop());
        assert!(spec(&["/"]).patterns()[0].is_noop());
    }

    #[test]
    fn verdicts() {
        let s = spec(&["venv/**", "**/build/**"]);
        assert!(s.is_dir_ignored("venv"));
        assert!(!s.is_file_ignored("venv"));
        assert!(s.is_file_ignored("venv/x"));
        assert!(s.is_dir_ignored("a/b/build"));
        assert!(!s.is_dir_ignored("a\nb/build"));
        let s = spec(&["foo"]);
        assert!(s.is_match("foo\n"));
        assert!(s.is_match("/foo"));
        assert!(s.is_match("./foo"));
        let s = spec(&["a[!b]"]);
        assert!(s.is_dir_ignored("a"));
        let s = spec(&["**/", "!/"]);
        assert!(!s.is_dir_ignored("a"));
        let (ign, p) = s.explain("a/b", false);
        assert!(!ign);
        assert_eq!(p.map(|p| p.line_number), Some(2));
        let s = spec(&["[[:alpha:]]"]);
        assert!(s.is_match("a]"));
        assert!(!s.is_match("a"));
        let s = spec(&["[a-c-e]"]);
        assert!(s.is_match("-") && s.is_match("b") && s.is_match("e") && !s.is_match("d"));
        let s = spec(&[r"[\]]"]);
        assert!(s.is_match(r"\]"));
        assert!(!s.is_match("]"));
    }

    #[test]
    fn errors() {
        assert_eq!(err(&["!"]).kind, PatternErrorKind::InvalidPattern);
        assert_eq!(err(&["ok", r"a\/b"]).line_number, 2);
        assert_eq!(err(&["[z-a]"]).kind, PatternErrorKind::BadCharacterRange);
        assert_eq!(err(&[r"[a-\]]"]).kind, PatternErrorKind::BadCharacterRange);
        // An unclosed `[` discards the line before a dangling `\` or a bad range counts.
        assert!(IgnoreSpec::from_lines([r"[/a\"]).is_ok());
        assert!(IgnoreSpec::from_lines(["[b-a][/"]).is_ok());
        // A dangling `\` in an earlier segment wins.
        assert_eq!(err(&[r"a\/[b"]).kind, PatternErrorKind::InvalidPattern);
        // A later dangling `\` beats an earlier bad range.
        assert_eq!(err(&[r"[b-a]/x\"]).kind, PatternErrorKind::InvalidPattern);
        let e = err(&["x", "y", r"a\"]);
        assert_eq!(e.to_string().split(':').next(), Some("line 3"));
        assert!(e.to_string().contains(r"`a\`"));
    }

    #[test]
    fn text_step() {
        assert!(matches!(
            IgnoreSpec::from_gitignore_text(" \n# c\n"),
            Ok(None)
        ));
        let s = IgnoreSpec::from_gitignore_text("# c\r\n\n  foo \u{2028}bar");
        let s = s.ok().flatten().map(|s| s.patterns().to_vec());
        let got: Vec<(usize, String)> = s
            .unwrap_or_default()
            .into_iter()
            .map(|p| (p.line_number, p.text))
            .collect();
        assert_eq!(got, vec![(3, "foo".to_string()), (4, "bar".to_string())]);
        let e = IgnoreSpec::from_gitignore_text("a\n\nfoo\\ \n").err();
        assert_eq!(
            e.map(|e| (e.line_number, e.line)),
            Some((3, "foo\\".to_string()))
        );
    }

    #[test]
    fn long_paths_use_the_heap() {
        let s = spec(&["x/**"]);
        let long = format!("{}x", "a/".repeat(400));
        assert!(!s.is_dir_ignored(&long));
        assert!(s.is_dir_ignored("x"));
    }
}

#[cfg(test)]
mod prefilter_tests {
    use super::*;

    fn spec(text: &str) -> IgnoreSpec {
        IgnoreSpec::from_gitignore_text(text).unwrap().unwrap()
    }

    #[test]
    fn default_spec_has_required_literals() {
        // The plugin's default `gitignore` (promptinclude's `DEFAULT_GITIGNORE`).
        let s = spec(
            "venv/**\n**/__pycache__/**\n**/node_modules/**\n**/.npm/**\n**/.git/**\n**/.conda/**\n\
             **/.cache/**\n**/dist/**\n**/build/**\n**/.tox/**\n**/.eggs/**\n**/*.egg-info/**\n",
        );
        assert!(s.required.is_some());
        assert!(s.lacks_required_literal("src/components/button"));
        assert!(!s.lacks_required_literal("src/node_modules/x"));
        assert!(s.is_dir_ignored("src/node_modules"));
        assert!(!s.is_dir_ignored("src/node_modules_old"));
        assert!(s.is_dir_ignored("venv"));
        assert!(!s.is_dir_ignored("src/venv"));
    }

    #[test]
    fn no_prefilter_where_a_literal_is_not_certain() {
        // A pattern of only wildcards or a class has no required literal;
        // a negation makes "no literal" say nothing about the verdict.
        for text in ["*.pyc\n[ab]\n", "*\n", "build/\n!build/keep\n", "**\n"] {
            assert!(spec(text).required.is_none(), "{text:?}");
        }
        assert!(spec("*.pyc\n").required.is_some());
    }
}
