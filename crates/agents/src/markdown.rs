//! Markdown as the `marked` lexer tokenizes it, for the agents that read
//! their files with it: what Claude Code reads out of an instruction file
//! (the front matter's `paths:` scope, top-level HTML comments, stripped,
//! and `@path` imports), and where Qwen Code finds code ([`code_ranges`]).
//!
//! Claude Code finds comments and imports in the tokens of the `marked`
//! lexer (`gfm: false`; Qwen Code's default `gfm: true` tokenizes code
//! alike). No Rust crate tokenizes as `marked` does
//! (`pulldown-cmark` follows CommonMark, whose blocks, code spans and text
//! runs differ from marked's), so the subset that decides the result is
//! written here by hand: fenced and indented code, HTML comment blocks at
//! the top level, code spans and inline comments. Links, emphasis, inline
//! HTML tags and escapes also end a text run in marked; they are not
//! modelled (`docs/agents-context.md`).

use std::sync::OnceLock;

use regex::Regex;
use yaml_rust2::{Yaml, YamlLoader};

use crate::js::{is_space, trim as js_trim, SPACE_CLASS as JS_SPACE};

/// An instruction file's text split as Claude Code splits it.
#[derive(Debug)]
pub struct Parsed {
    /// The text after the front matter, HTML comments stripped.
    pub content: String,
    /// Whether its front matter's `paths:` limits it to some files (such a
    /// rule is never loaded at start).
    pub scoped: bool,
    /// The import paths, as written (`#fragment` cut, `\ ` unescaped), in
    /// the order found, each once.
    pub imports: Vec<String>,
}

/// Parses one file's text (`with_imports`: look for `@path` imports).
pub fn parse(text: &str, with_imports: bool) -> Parsed {
    let (body, scoped) = front_matter(text);
    // Most files have no `\r`: then the body is its own normal form
    // (`replace` copies it twice to find none).
    let normalized: std::borrow::Cow<'_, str> = if body.contains('\r') {
        body.replace("\r\n", "\n").replace('\r', "\n").into()
    } else {
        body.into()
    };
    let blocks = blocks(&normalized);
    let content = strip_comments(body, &normalized, &blocks);
    let imports = if with_imports && body.contains('@') {
        imports(&normalized, &blocks)
    } else {
        Vec::new()
    };
    Parsed {
        content,
        scoped,
        imports,
    }
}

/// The body after the front matter, and whether `paths:` scopes it.
fn front_matter(text: &str) -> (&str, bool) {
    match split_front_matter(text) {
        Some((yaml, body)) => (body, scoped(yaml)),
        None => (text, false),
    }
}

/// The front matter's YAML and the body after it, when the file starts
/// with front matter as Claude Code finds it.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    // Claude Code matches `^---\s*\n([\s\S]*?)---\s*\n?` (JavaScript's
    // `\s`). Written out (compiling it was a fiftieth of an
    // `audit --agents` run): the opening line ends at the last line feed of
    // the spaces after `---`, the front matter at the first `---` after
    // it, and the closing takes every space after that.
    let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = unmarked.strip_prefix("---")?;
    let spaces = rest.len() - rest.trim_start_matches(is_space).len();
    let after = &rest[rest[..spaces].rfind('\n')? + 1..];
    let close = after.find("---")?;
    Some((
        &after[..close],
        after[close + 3..].trim_start_matches(is_space),
    ))
}

/// The front matter as Claude Code loads it: Bun's YAML, then, if that
/// fails, again with values quoted; `None` when neither parses.
fn load(yaml: &str) -> Option<Yaml> {
    let loaded =
        YamlLoader::load_from_str(yaml).or_else(|_| YamlLoader::load_from_str(&quote_values(yaml)));
    loaded.ok()?.into_iter().next()
}

/// Whether the front matter's `paths` names anything but `**` (Claude Code
/// parses it with Bun's YAML, then, if that fails, again with every
/// `key: value` line whose value holds a YAML indicator quoted).
fn scoped(yaml: &str) -> bool {
    let Some(Yaml::Hash(map)) = load(yaml) else {
        return false;
    };
    let Some(paths) = map.get(&Yaml::String("paths".to_string())) else {
        return false;
    };
    truthy(paths) && !scope_patterns(paths).iter().all(|p| p == "**")
}

/// The patterns `paths` scopes to, as Claude Code matches them (`/**` cut
/// from each, empty ones dropped).
fn scope_patterns(paths: &Yaml) -> Vec<String> {
    let mut patterns = Vec::new();
    collect_patterns(paths, &mut patterns);
    patterns
        .iter()
        .map(|p| p.strip_suffix("/**").unwrap_or(p))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// A rule's `paths:` as Claude Code reads it ([`RuleScope`]'s `line` is
/// that of `paths:`).
pub type Scope = crate::advice::RuleScope;

/// The `paths:` of a file's front matter; `None` when it has none.
pub fn scope(text: &str) -> Option<Scope> {
    let (yaml, _) = split_front_matter(text)?;
    let offset = yaml.as_ptr() as usize - text.as_ptr() as usize;
    let at = yaml
        .split_inclusive('\n')
        .scan(0, |start, line| {
            let here = *start;
            *start += line.len();
            Some((here, line))
        })
        .find(|(_, line)| line.starts_with("paths:"))?
        .0;
    let line = text[..offset + at].matches('\n').count() + 1;
    let mut surprises = Vec::new();
    let Some(Yaml::Hash(map)) = load(yaml) else {
        surprises.push(
            "the front matter is not YAML Claude Code can read, so `paths:` is ignored and the rule loads everywhere"
                .to_string(),
        );
        return Some(Scope {
            line,
            scoped: false,
            patterns: Vec::new(),
            surprises,
        });
    };
    let paths = map
        .get(&Yaml::String("paths".to_string()))
        .cloned()
        .unwrap_or(Yaml::Null);
    if !truthy(&paths) || matches!(&paths, Yaml::Array(items) if items.is_empty()) {
        surprises.push(
            "`paths:` is empty, which does not scope the rule: it loads everywhere".to_string(),
        );
    }
    if let Yaml::Array(items) = &paths {
        for (i, item) in items.iter().enumerate() {
            if !matches!(item, Yaml::String(_) | Yaml::Array(_)) {
                surprises.push(format!("`paths:` item {} is not a string: ignored", i + 1));
            }
        }
    }
    let mut written = Vec::new();
    collect_patterns(&paths, &mut written);
    for pattern in &written {
        if pattern.starts_with("./") {
            surprises.push(format!(
                "{pattern:?} never matches: Claude Code matches paths from the rule's directory, which never start with ./"
            ));
        } else if unclosed_bracket(pattern) {
            surprises.push(format!(
                "{pattern:?} never matches: Claude Code matches no path against a pattern whose [ is not closed"
            ));
        } else if let Some(dir) = pattern
            .strip_suffix("/**")
            .filter(|d| !d.contains('/') && *d != "**")
        {
            surprises.push(format!(
                "{pattern:?} is read as {dir:?}, which matches a {dir} directory at any depth, not only the one at the top"
            ));
        } else if !pattern.contains('/') && pattern != "**" {
            surprises.push(format!(
                "{pattern:?} matches at any depth (the documentation says a pattern such as *.md names files at the project root only)"
            ));
        }
    }
    let scoped = scoped(yaml);
    Some(Scope {
        line,
        scoped,
        patterns: if scoped {
            scope_patterns(&paths)
        } else {
            Vec::new()
        },
        surprises,
    })
}

/// Whether a `paths:` pattern matches no path at all in Claude Code: one
/// starting `./` (paths are matched from the rule's directory, without
/// it), or one with a `[` never closed (checked against `claude` 2.x: `[bad`,
/// `docs/[ab.md` load the rule for no path read).
pub fn never_matches(pattern: &str) -> bool {
    pattern.starts_with("./") || unclosed_bracket(pattern)
}

fn unclosed_bracket(pattern: &str) -> bool {
    pattern
        .find('[')
        .is_some_and(|i| !pattern[i + 1..].contains(']'))
}

/// JavaScript truthiness of a loaded YAML value.
fn truthy(value: &Yaml) -> bool {
    match value {
        Yaml::Null | Yaml::BadValue => false,
        Yaml::Boolean(b) => *b,
        Yaml::Integer(i) => *i != 0,
        Yaml::Real(r) => r.parse::<f64>().is_ok_and(|f| f != 0.0 && !f.is_nan()),
        Yaml::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// The glob patterns of a `paths` value: strings (split at top-level
/// commas, trimmed, braces expanded) in any nesting of lists.
fn collect_patterns(value: &Yaml, out: &mut Vec<String>) {
    match value {
        Yaml::Array(items) => items.iter().for_each(|item| collect_patterns(item, out)),
        Yaml::String(s) => {
            let mut depth = 0i32;
            let mut part = String::new();
            let mut parts = Vec::new();
            for c in s.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        parts.push(std::mem::take(&mut part));
                        continue;
                    }
                    _ => {}
                }
                part.push(c);
            }
            parts.push(part);
            for part in parts {
                let part = js_trim(&part);
                if !part.is_empty() {
                    expand_braces(part, out);
                }
            }
        }
        _ => {}
    }
}

/// `a{b,c}d` as `abd`, `acd` (the first brace pair each time, as Claude
/// Code expands it; its size guard never matters for "is it only `**`").
fn expand_braces(pattern: &str, out: &mut Vec<String>) {
    if !pattern.contains('{') {
        out.push(pattern.to_string());
        return;
    }
    let mut stack = vec![pattern.to_string()];
    while let Some(p) = stack.pop() {
        match first_brace_pair(&p) {
            None => out.push(p),
            Some((before, inside, after)) => {
                let alternatives: Vec<&str> = inside.split(',').map(js_trim).collect();
                for alternative in alternatives.iter().rev() {
                    stack.push(format!("{before}{alternative}{after}"));
                }
            }
        }
    }
}

/// What the regex `\A([^{]*)\{([^}]+)\}((?s:.)*)\z` captures: the text
/// before the first `{`, what follows it up to the first `}` (not empty),
/// and the rest. By hand, checked against that regex (which costs more to
/// compile than a run spends matching it).
fn first_brace_pair(pattern: &str) -> Option<(&str, &str, &str)> {
    let open = pattern.find('{')?;
    let close = open + 1 + pattern[open + 1..].find('}')?;
    (close > open + 1).then(|| {
        (
            &pattern[..open],
            &pattern[open + 1..close],
            &pattern[close + 1..],
        )
    })
}

/// Claude Code's second try at front matter: `key: value` lines whose
/// value holds a YAML indicator are quoted; leading tabs become spaces.
fn quote_values(yaml: &str) -> String {
    static LINE: OnceLock<Regex> = OnceLock::new();
    static INDICATOR: OnceLock<Regex> = OnceLock::new();
    let line_re = LINE.get_or_init(|| {
        Regex::new(&format!(
            r"\A([a-zA-Z_-]+):[{JS_SPACE}]+([^{JS_SPACE}].*)\z"
        ))
        .expect("a valid regex")
    });
    let indicator =
        INDICATOR.get_or_init(|| Regex::new(r"[{}\[\]*&#!|>%@`]|: ").expect("a valid regex"));
    let quoted: Vec<String> = yaml
        .split('\n')
        .map(|line| {
            let Some(c) = line_re.captures(line) else {
                return line.to_string();
            };
            let (key, value) = (&c[1], &c[2]);
            let is_quoted = (value.starts_with('"') && value.ends_with('"'))
                || (value.starts_with('\'') && value.ends_with('\''));
            let is_list = value.starts_with('[')
                && value.ends_with(']')
                && matches!(
                    YamlLoader::load_from_str(value).as_deref(),
                    Ok([Yaml::Array(_)])
                );
            if is_quoted || is_list || !indicator.is_match(value) {
                return line.to_string();
            }
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            format!("{key}: \"{escaped}\"")
        })
        .collect();
    let joined = quoted.join("\n");
    let mut out = String::with_capacity(joined.len());
    for line in joined.split_inclusive('\n') {
        let tabs = line.len() - line.trim_start_matches('\t').len();
        out.push_str(&"  ".repeat(tabs));
        out.push_str(&line[tabs..]);
    }
    out
}

/// A top-level block of the normalized text, by byte range.
#[derive(Debug)]
enum Block {
    /// Paragraphs, headings and list lines: where imports are found.
    Text(usize, usize),
    /// Fenced or indented code, by byte range.
    Code(usize, usize),
    /// An HTML comment block: from its line's start through the rest of the
    /// line that closes it and the newlines after it. `closed`: it holds
    /// its `-->`.
    Comment {
        start: usize,
        end: usize,
        closed: bool,
    },
}

/// The lines of `text` with their start offsets (each with its newline).
fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut at = 0;
    text.split_inclusive('\n').map(move |line| {
        let start = at;
        at += line.len();
        (start, line)
    })
}

/// How a line opens a fence: its character and length.
fn fence_open(line: &str) -> Option<(char, usize)> {
    let rest = strip_indent(line, 3)?;
    let c = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = rest.len() - rest.trim_start_matches(c).len();
    if run < 3 || (c == '`' && rest[run..].trim_end_matches('\n').contains('`')) {
        return None;
    }
    Some((c, run))
}

/// `line` without up to `max` leading spaces, if it has no more.
fn strip_indent(line: &str, max: usize) -> Option<&str> {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    (spaces <= max).then(|| &line[spaces..])
}

/// The top-level blocks, as marked's block lexer delimits them for the
/// constructs modelled.
fn blocks(text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    // Whether the previous line continues a paragraph (indented code cannot
    // start there).
    let mut in_paragraph = false;
    let mut comment_until: usize = 0;
    for (start, line) in lines(text) {
        if start < comment_until {
            continue;
        }
        if let Some((c, run)) = fence {
            if let Some(Block::Code(_, end)) = blocks.last_mut() {
                *end = start + line.len();
            }
            let rest = strip_indent(line, 3).unwrap_or("");
            let closing = rest.len() - rest.trim_start_matches(c).len();
            if closing >= run && rest[closing..].trim_matches([' ', '\t', '\n']).is_empty() {
                fence = None;
            }
            continue;
        }
        let blank = line.trim_matches([' ', '\n']).is_empty() && !line.contains('\t');
        if blank {
            in_paragraph = false;
            continue;
        }
        if let Some(open) = fence_open(line) {
            fence = Some(open);
            blocks.push(Block::Code(start, start + line.len()));
            in_paragraph = false;
            continue;
        }
        if !in_paragraph && line.starts_with("    ") {
            blocks.push(Block::Code(start, start + line.len()));
            continue;
        }
        if let Some(rest) = strip_indent(line, 3).filter(|r| r.starts_with("<!--")) {
            let open = start + (line.len() - rest.len());
            let (end, closed) = comment_end(text, open);
            blocks.push(Block::Comment { start, end, closed });
            comment_until = end;
            in_paragraph = false;
            continue;
        }
        let heading = strip_indent(line, 3).is_some_and(|r| {
            let hashes = r.len() - r.trim_start_matches('#').len();
            (1..=6).contains(&hashes) && r[hashes..].starts_with([' ', '\t', '\n'])
        });
        // A heading ends a paragraph and is a block of its own line
        // (marked's `paragraph` stops before one): inline comments and
        // mentions do not run across it.
        match blocks.last_mut() {
            Some(Block::Text(_, end)) if in_paragraph && !heading => *end = start + line.len(),
            _ => blocks.push(Block::Text(start, start + line.len())),
        }
        in_paragraph = !heading;
    }
    blocks
}

/// Where a comment block opened at `open` ends: after `-->`, the rest of
/// that line and the newlines after it (marked's `comment[^\n]*(\n+|$)`).
fn comment_end(text: &str, open: usize) -> (usize, bool) {
    let Some(close) = comment_length(&text[open..], true).map(|length| open + length) else {
        return (text.len(), false);
    };
    let line_end = text[close..].find('\n').map_or(text.len(), |i| close + i);
    let end = line_end + (text.len() - line_end - text[line_end..].trim_start_matches('\n').len());
    (end, true)
}

/// `<!-- ... -->` removed, lazily, as `/<!--[\s\S]*?-->/g` does.
fn without_comments(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(open) = rest.find("<!--") {
        match rest[open + 4..].find("-->") {
            Some(close) => {
                out.push_str(&rest[..open]);
                rest = &rest[open + 4 + close + 3..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    out
}

/// The text with top-level comment blocks removed (their rest kept when it
/// is not blank). When any is removed, line ends become `\n` (Claude Code
/// rebuilds the text from its normalized copy); otherwise the text is as it
/// was.
fn strip_comments(original: &str, normalized: &str, blocks: &[Block]) -> String {
    if !original.contains("<!--") {
        return original.to_string();
    }
    let mut out = String::new();
    let mut at = 0;
    for block in blocks {
        if let Block::Comment {
            start,
            end,
            closed: true,
        } = *block
        {
            let residue = without_comments(&normalized[start..end]);
            out.push_str(&normalized[at..start]);
            if !js_trim(&residue).is_empty() {
                out.push_str(&residue);
            }
            at = end;
        }
    }
    if at == 0 {
        return original.to_string();
    }
    out.push_str(&normalized[at..]);
    out
}

/// The import paths in text blocks and comment residues.
fn imports(text: &str, blocks: &[Block]) -> Vec<String> {
    let mut found = Vec::new();
    for block in blocks {
        match *block {
            Block::Text(start, end) => {
                for run in text_runs(&text[start..end]) {
                    scan(run, &mut found);
                }
            }
            Block::Comment {
                start,
                end,
                closed: true,
            } => {
                let residue = without_comments(&text[start..end]);
                if !js_trim(&residue).is_empty() {
                    scan(&residue, &mut found);
                }
            }
            _ => {}
        }
    }
    found
}

/// A text block's runs of plain text: what lies between its code spans and
/// inline comments (each run is one marked `text` token).
fn text_runs(block: &str) -> Vec<&str> {
    let mut runs = Vec::new();
    let mut run_start = 0;
    for (start, end, _) in inline_breaks(block) {
        runs.push(&block[run_start..start]);
        run_start = end;
    }
    runs.push(&block[run_start..]);
    runs
}

/// A text block's code spans and inline comments, in order, by byte range
/// (`true`: a code span), as marked's inline lexer takes them: a comment
/// first, so that backticks inside one open no span.
fn inline_breaks(block: &str) -> Vec<(usize, usize, bool)> {
    let mut breaks = Vec::new();
    let bytes = block.as_bytes();
    let mut i = 0;
    // Set once a `<!--` finds no `-->` after it: none after it will either.
    let mut unclosed = false;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let ticks = block[i..].len() - block[i..].trim_start_matches('`').len();
            if let Some(close) = closing_ticks(&block[i + ticks..], ticks) {
                breaks.push((i, i + ticks + close + ticks, true));
                i += ticks + close + ticks;
                continue;
            }
            i += ticks;
            continue;
        }
        if bytes[i..].starts_with(b"<!--") {
            if let Some(length) = inline_comment(&block[i..], &mut unclosed) {
                breaks.push((i, i + length, false));
                i += length;
                continue;
            }
        }
        i += 1;
    }
    breaks
}

/// Where the code span that a run of `run` backticks opens (before
/// `from`) closes: the start of the next run of exactly as many backticks,
/// as CommonMark's code spans close; `None` when none does.
pub fn code_span_close(bytes: &[u8], from: usize, run: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let n = bytes[i..].iter().take_while(|&&b| b == b'`').count();
        if n == run {
            return Some(i);
        }
        i += n;
    }
    None
}

/// Where marked's lexer finds code in `text` (`\n` line ends): fenced and
/// indented blocks and code spans, by byte range, in order. Agents that
/// leave `@` imports in code alone ask it (Qwen Code).
pub(crate) fn code_ranges(text: &str) -> Vec<(usize, usize)> {
    let mut ranges = Vec::new();
    for block in blocks(text) {
        match block {
            Block::Code(start, end) => ranges.push((start, end)),
            Block::Text(start, end) => ranges.extend(
                inline_breaks(&text[start..end])
                    .into_iter()
                    .filter(|(_, _, code)| *code)
                    .map(|(s, e, _)| (start + s, start + e)),
            ),
            Block::Comment { .. } => {}
        }
    }
    ranges
}

/// The length of the comment `rest` opens (it starts with `<!--`), as
/// marked's `<!--(?:-?>|[\s\S]*?-->)` takes it: `<!-->`, `<!--->`, or
/// through the first `-->` (looked for only when `search`); `None` when it
/// does not close.
fn comment_length(rest: &str, search: bool) -> Option<usize> {
    let after = &rest[4..];
    if after.starts_with('>') {
        Some(5)
    } else if after.starts_with("->") {
        Some(6)
    } else if search {
        after.find("-->").map(|close| 4 + close + 3)
    } else {
        None
    }
}

/// The length of the inline comment `rest` starts with ([`comment_length`]
/// within its block). Without a close it is no comment, and the `<!--` is
/// text (where an `@` mention inside still counts). `unclosed` remembers
/// that no `-->` follows, for every later `<!--`.
fn inline_comment(rest: &str, unclosed: &mut bool) -> Option<usize> {
    let length = comment_length(rest, !*unclosed);
    *unclosed |= length.is_none();
    length
}

/// Where a run of exactly `ticks` backticks starts in `rest` (a code span's
/// end), if the span would not be empty.
fn closing_ticks(rest: &str, ticks: usize) -> Option<usize> {
    let mut i = 0;
    while let Some(found) = rest[i..].find('`') {
        let at = i + found;
        let run = rest[at..].len() - rest[at..].trim_start_matches('`').len();
        if run == ticks && at > 0 {
            return Some(at);
        }
        i = at + run;
    }
    None
}

/// `/(?:^|\s)@((?:[^\s\\]|\\ )+)/g` over one text run, as Claude Code
/// filters each match.
fn scan(run: &str, found: &mut Vec<String>) {
    for mut path in mentions(run) {
        if let Some(hash) = path.find('#') {
            path = &path[..hash];
        }
        let path = path.replace("\\ ", " ");
        if path.is_empty() {
            continue;
        }
        // Claude Code also refuses a path that starts with `@` or one of
        // `#%^&*()`; none of those is a letter, digit, `.`, `_` or `-`.
        let first_ok = path
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
        let usable = path.starts_with("./")
            || path.starts_with("~/")
            || (path.starts_with('/') && path != "/")
            || first_ok;
        if usable && !found.contains(&path) {
            found.push(path);
        }
    }
}

/// The mentions in `run`, as the regex `(?:\A|[S])@((?:[^S\\]|\\ )+)`
/// captures them one after another (`S` JavaScript's spaces): the text
/// after an `@` that starts the run or follows a space no earlier mention
/// took, up to a space or a backslash not followed by `' '` (`\ ` is
/// kept), when that is not empty. By hand, checked against that regex: its
/// Unicode classes cost more to compile than a run spends matching them.
fn mentions(run: &str) -> impl Iterator<Item = &str> {
    // Where to look next. (A space before an `@` there was not taken by
    // the last mention, which stops before a space or takes the `@` too.)
    let mut from = 0;
    std::iter::from_fn(move || loop {
        let at = from + run[from..].find('@')?;
        from = at + 1;
        let starts = at == 0 || run[..at].chars().next_back().is_some_and(is_space);
        if !starts {
            continue;
        }
        let body = &run[at + 1..];
        let mut end = 0;
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            if c == '\\' {
                if body.as_bytes().get(i + 1) != Some(&b' ') {
                    break;
                }
                chars.next();
                end = i + 2;
            } else if is_space(c) {
                break;
            } else {
                end = i + c.len_utf8();
            }
        }
        if end > 0 {
            from = at + 1 + end;
            return Some(&body[..end]);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The front matter is split as Claude Code's regex splits it: every
    /// text of up to six pieces of dashes, line ends and spaces (JavaScript's
    /// and not), against the regex itself.
    #[test]
    fn front_matter_splits_as_the_regex() {
        let regex = Regex::new(&format!(
            r"\A---[{JS_SPACE}]*\n((?s:.)*?)---[{JS_SPACE}]*\n?"
        ))
        .unwrap();
        const PIECES: [&str; 9] = [
            "---", "-", "\n", " ", "\u{a0}", "\u{feff}", "a", "\r\n", "\u{85}",
        ];
        let mut texts = vec![String::new()];
        for _ in 0..6 {
            let longer: Vec<String> = texts
                .iter()
                .filter(|t| t.len() < 12)
                .flat_map(|t| PIECES.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(longer);
            texts.sort();
            texts.dedup();
        }
        assert!(texts.len() > 100_000);
        fn by_regex<'a>(regex: &Regex, text: &'a str) -> Option<(&'a str, &'a str)> {
            let unmarked = text.strip_prefix('\u{feff}').unwrap_or(text);
            let found = regex.captures(unmarked)?;
            let end = found.get(0)?.end();
            Some((found.get(1)?.as_str(), &unmarked[end..]))
        }
        for text in &texts {
            assert_eq!(split_front_matter(text), by_regex(&regex, text), "{text:?}");
        }
    }

    /// Every text of up to `n` of `pieces`.
    fn texts(pieces: &[&str], n: usize) -> Vec<String> {
        let mut texts = vec![String::new()];
        let mut last = texts.clone();
        for _ in 0..n {
            last = last
                .iter()
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(last.iter().cloned());
        }
        texts.sort();
        texts.dedup();
        texts
    }

    /// `mentions` finds what the mention regex captures, one after
    /// another, in every text of up to six pieces of `@`, spaces
    /// (JavaScript's and not), backslashes and others.
    #[test]
    fn mentions_are_the_regexs_captures() {
        let regex =
            Regex::new(&format!(r"(?:\A|[{JS_SPACE}])@((?:[^{JS_SPACE}\\]|\\ )+)")).unwrap();
        let pieces = [
            "@", " ", "\\", "a", "\u{a0}", "\n", "\u{2003}", "\u{85}", "#",
        ];
        let texts = texts(&pieces, 6);
        assert!(texts.len() > 500_000);
        for text in &texts {
            let by_regex: Vec<&str> = regex
                .captures_iter(text)
                .map(|c| c.get(1).unwrap().as_str())
                .collect();
            assert_eq!(mentions(text).collect::<Vec<_>>(), by_regex, "{text:?}");
        }
    }

    /// `first_brace_pair` is what the brace regex captures, in every text
    /// of up to seven braces, commas and others.
    #[test]
    fn the_first_brace_pair_is_the_regexs() {
        let regex = Regex::new(r"\A([^{]*)\{([^}]+)\}((?s:.)*)\z").unwrap();
        for text in &texts(&["{", "}", ",", "a", "\n", "\u{e9}"], 7) {
            let by_regex = regex.captures(text).map(|c| {
                let group = |i| c.get(i).unwrap().as_str();
                (group(1), group(2), group(3))
            });
            assert_eq!(first_brace_pair(text), by_regex, "{text:?}");
        }
    }

    #[test]
    fn front_matter_is_cut_and_paths_scope_a_rule() {
        let p = parse("---\npaths: ['src/**']\n---\nBODY\n", false);
        assert_eq!(p.content, "BODY\n");
        assert!(p.scoped);
        for unscoped in [
            "paths: []",
            "paths:",
            "paths: \"**\"",
            "paths: ['**/**', '/**']",
            "x: 1",
        ] {
            assert!(
                !parse(&format!("---\n{unscoped}\n---\nB"), false).scoped,
                "{unscoped}"
            );
        }
        // Bun's YAML refuses `[bad`; the retry quotes it: a string, so scoped.
        assert!(parse("---\npaths: [bad\n---\nB", false).scoped);
        // Not at the very start: no front matter.
        assert_eq!(
            parse("\n---\npaths: x\n---\nB", false).content,
            "\n---\npaths: x\n---\nB"
        );
    }

    #[test]
    fn top_level_comments_go_and_line_ends_follow() {
        let p = parse("<!-- top -->\nA <!-- inline --> B\r\n\r\n<!--\nmulti\n-->\r\nC\n```\n<!-- in code -->\n```\n", false);
        assert_eq!(
            p.content,
            "A <!-- inline --> B\n\nC\n```\n<!-- in code -->\n```\n"
        );
        assert_eq!(parse("<!-- c --> tail\nX", false).content, " tail\nX");
        assert_eq!(
            parse("A\r\n<!-- unclosed", false).content,
            "A\r\n<!-- unclosed"
        );
    }

    #[test]
    fn imports_outside_code_after_whitespace_or_a_token() {
        let p = parse(
            "a `@x1.md` b @ok.md\n\n```\n@x2.md\n```\n\n    @x3.md\n\nfoo@x4.md (@x6.md) `c`@after.md @e\\ f.md @b.md#frag @@no @#no\n<!-- @x7.md --> @resid.md\n",
            true,
        );
        assert_eq!(
            p.imports,
            ["ok.md", "after.md", "e f.md", "b.md", "resid.md"]
        );
    }

    #[test]
    fn inline_comments_as_marked_takes_them() {
        let imports = |text: &str| parse(text, true).imports;
        // No `-->` in the paragraph: `<!--` is text, the mention counts (a
        // later paragraph's `-->` does not close it, nor a heading's).
        assert_eq!(imports("A <!-- @u.md --x> B\n"), ["u.md"]);
        assert_eq!(imports("A <!-- @v.md\n\nB --> C\n"), ["v.md"]);
        assert_eq!(imports("A <!-- @h.md\n# head --> x\n"), ["h.md"]);
        assert_eq!(imports("# head <!-- @g.md\nB --> x\n"), ["g.md"]);
        // Closed in the paragraph: hidden, and the text after it is a new run.
        assert_eq!(imports("A <!-- @x.md\nB -->@y.md\n"), ["y.md"]);
        // The short forms close at once.
        assert_eq!(
            imports("A <!-->@s1.md B <!--->@s2.md\n"),
            ["s1.md", "s2.md"]
        );
        assert_eq!(imports("A <!---->@s3.md\n"), ["s3.md"]);
        // Many unclosed openers: each is text (and found in linear time).
        let many = format!("A {}@m.md\n", "<!-- ".repeat(20_000));
        assert_eq!(imports(&many), ["m.md"]);
    }
}
