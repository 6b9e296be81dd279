//! Text a reader does not see: the characters in a rule file that every
//! agent passes to its model and no reviewer sees in a diff ("rules file
//! backdoor", Trojan Source). No crate classifies them this way (the
//! exceptions depend on the neighbours), so the classes are written here,
//! from the Unicode Character Database (Unicode 15.1's `Cf`, the tag and
//! variation selector blocks):
//!
//! * **Tag characters** (U+E0000–U+E007F): invisible ASCII; the hidden text
//!   is decoded and shown. Not flagged: an emoji subdivision flag (U+1F3F4
//!   followed by tags and the cancel tag U+E007F).
//! * **Bidirectional controls** (U+202A–U+202E, U+2066–U+2069; and the
//!   marks U+200E, U+200F, U+061C away from right-to-left letters).
//! * **Zero-width characters** (U+200B–U+200D, U+2060–U+2064, U+180E, and a
//!   U+FEFF that is not the first character). Not flagged: a zero-width
//!   joiner between emoji, and a joiner or non-joiner between letters of
//!   Arabic-script and Indic scripts, where they shape words.
//! * **Other format characters** (the rest of `Cf`, but the soft hyphen).
//! * **Variation selectors** away from what they select: U+FE00–U+FE0F not
//!   after an emoji or symbol, U+E0100–U+E01EF not after an ideograph.

use std::fmt::Write as _;

use super::warnings::{Warning, WarningKind};

/// The `hidden_text` warnings of the rule file at `path` (displayed), whose
/// text is `text`: one per class of character, at the first one's line.
pub(crate) fn warnings(path: &str, text: &str) -> Vec<Warning> {
    find(text)
        .into_iter()
        .map(|f| Warning {
            kind: WarningKind::HiddenText,
            path: Some(path.to_string()),
            line: Some(f.line),
            message: f.message(),
            class: Some(f.class.id()),
            column: Some(f.column),
        })
        .collect()
}

/// The ids of the classes of hidden characters (`tag`, `bidi`, ...), as
/// warnings and gates name them.
pub fn class_ids() -> impl Iterator<Item = &'static str> {
    Class::ALL.into_iter().map(Class::id)
}

/// What kind of hidden character.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Class {
    /// Unicode tag characters: invisible ASCII.
    Tag,
    /// Bidirectional controls: the text shows in another order than it is.
    Bidi,
    /// Zero-width characters.
    ZeroWidth,
    /// Other format characters.
    Format,
    /// Variation selectors outside emoji and ideographs.
    VariationSelector,
}

impl Class {
    /// Every class.
    pub(crate) const ALL: [Class; 5] = [
        Class::Tag,
        Class::Bidi,
        Class::ZeroWidth,
        Class::Format,
        Class::VariationSelector,
    ];

    /// The class's stable id: a warning's `class`, and what a gate names
    /// (`--fail-on hidden_text:tag`).
    pub(crate) fn id(self) -> &'static str {
        match self {
            Class::Tag => "tag",
            Class::Bidi => "bidi",
            Class::ZeroWidth => "zero_width",
            Class::Format => "format",
            Class::VariationSelector => "variation_selector",
        }
    }

    /// The class's name (a warning's cause).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Class::Tag => "Unicode tag characters",
            Class::Bidi => "bidirectional controls",
            Class::ZeroWidth => "zero-width characters",
            Class::Format => "invisible format characters",
            Class::VariationSelector => "variation selectors outside emoji",
        }
    }

    /// The class in words, for `n` characters of it.
    fn words(self, n: usize) -> String {
        let s = if n == 1 { "" } else { "s" };
        match self {
            Class::Tag => format!("Unicode tag character{s} (invisible text)"),
            Class::Bidi => format!(
                "bidirectional control{s} (the text shows in another order than it is read)"
            ),
            Class::ZeroWidth => format!("zero-width character{s}"),
            Class::Format => format!("invisible format character{s}"),
            Class::VariationSelector => format!("variation selector{s} outside emoji"),
        }
    }
}

/// The hidden characters of one class in a text: where the first is, how
/// many, and for tag characters the text they spell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) class: Class,
    /// 1-based line and column (in characters) of the first.
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) count: usize,
    /// The code points, each once, in order of first appearance.
    pub(crate) chars: Vec<char>,
    /// The ASCII the tag characters spell, runs joined by ` / `.
    pub(crate) decoded: String,
}

impl Finding {
    /// The warning's words.
    pub(crate) fn message(&self) -> String {
        let mut m = format!(
            "column {}: {} {}",
            self.column,
            self.count,
            self.class.words(self.count)
        );
        let listed: Vec<String> = self
            .chars
            .iter()
            .take(6)
            .map(|c| format!("U+{:04X}", *c as u32))
            .collect();
        let _ = write!(m, " ({}", listed.join(", "));
        if self.chars.len() > 6 {
            m.push_str(", ...");
        }
        m.push(')');
        if !self.decoded.is_empty() {
            let _ = write!(m, " spelling {:?}", self.decoded);
        }
        m.push_str(": every agent reads them; a reviewer does not see them");
        m
    }
}

/// The hidden characters of `text`, one finding per class, by the first's
/// position.
pub(crate) fn find(text: &str) -> Vec<Finding> {
    let mut findings: Vec<Finding> = Vec::new();
    // Where the last tag character decoded was: a gap starts a new run.
    let mut last_tag: Option<usize> = None;
    each_hidden(text, |hidden| {
        let Hidden {
            line,
            column,
            index,
            c,
            class,
            ..
        } = hidden;
        let at = match findings.iter().position(|f| f.class == class) {
            Some(at) => at,
            None => {
                findings.push(Finding {
                    class,
                    line,
                    column,
                    count: 0,
                    chars: Vec::new(),
                    decoded: String::new(),
                });
                findings.len() - 1
            }
        };
        let f = &mut findings[at];
        f.count += 1;
        if !f.chars.contains(&c) {
            f.chars.push(c);
        }
        let ascii =
            char::from_u32((c as u32).wrapping_sub(0xE0000)).filter(|a| (' '..='~').contains(a));
        if let (Class::Tag, Some(ascii)) = (class, ascii) {
            if last_tag.is_some_and(|l| l + 1 != index) {
                f.decoded.push_str(" / ");
            }
            f.decoded.push(ascii);
            last_tag = Some(index);
        }
    });
    findings.sort_by_key(|f| (f.line, f.column));
    findings
}

/// One hidden character of a text.
struct Hidden {
    /// Its byte offset.
    at: usize,
    /// Its 1-based line and column (in characters).
    line: usize,
    column: usize,
    /// Its index among the text's characters.
    index: usize,
    c: char,
    class: Class,
}

/// Calls `f` with each hidden character of `text`, in order. Streamed, one
/// character and its neighbours at a time: a rule file may be as large as
/// the audit reads (no copy of it as characters).
fn each_hidden(text: &str, mut f: impl FnMut(Hidden)) {
    if text.is_ascii() {
        return;
    }
    let (mut line, mut column) = (1, 0);
    let mut in_flag = false;
    let mut prev: Option<char> = None;
    for (index, (at, c)) in text.char_indices().enumerate() {
        let before = prev.replace(c);
        if c == '\n' {
            line += 1;
            column = 0;
            continue;
        }
        column += 1;
        if c.is_ascii() {
            in_flag = false;
            continue;
        }
        let next = text[at + c.len_utf8()..].chars().next();
        // A subdivision flag: U+1F3F4, tags, the cancel tag.
        if is_tag(c) && (before == Some('\u{1F3F4}') || in_flag) {
            in_flag = c != '\u{E007F}';
            continue;
        }
        in_flag = false;
        if let Some(class) = classify(c, before, next, index) {
            f(Hidden {
                at,
                line,
                column,
                index,
                c,
                class,
            });
        }
    }
}

/// The most characters of a line [`line_made_visible`] shows.
const SHOWN_CHARS: usize = 240;

/// Line `line` (1-based) of `text` with its hidden characters made
/// visible: pieces of text, and each hidden character as itself (`Err`),
/// for the page to mark. A long line is cut around its first hidden
/// character (an ellipsis says so).
pub(crate) fn line_made_visible(text: &str, line: usize) -> Vec<Result<String, char>> {
    let Some(start) = line_start(text, line) else {
        return Vec::new();
    };
    let end = text[start..].find('\n').map_or(text.len(), |n| start + n);
    let mut marks: Vec<(usize, char)> = Vec::new();
    each_hidden(&text[..end], |h| {
        if h.at >= start {
            marks.push((h.at, h.c));
        }
    });
    let first = marks.first().map_or(start, |m| m.0);
    // From a little before the first one, at most SHOWN_CHARS characters.
    let from = text[start..first]
        .char_indices()
        .rev()
        .nth(40)
        .map_or(start, |(i, _)| start + i);
    let to = text[from..end]
        .char_indices()
        .nth(SHOWN_CHARS)
        .map_or(end, |(i, _)| from + i);
    let mut out = Vec::new();
    if from > start {
        out.push(Ok("…".to_string()));
    }
    let mut last = from;
    for &(at, c) in marks.iter().filter(|m| (from..to).contains(&m.0)) {
        out.push(Ok(text[last..at].to_string()));
        out.push(Err(c));
        last = at + c.len_utf8();
    }
    out.push(Ok(text[last..to].to_string()));
    if to < end {
        out.push(Ok("…".to_string()));
    }
    out.retain(|p| p.as_ref().map_or(true, |s| !s.is_empty()));
    out
}

/// The byte offset where line `line` (1-based) of `text` starts.
fn line_start(text: &str, line: usize) -> Option<usize> {
    if line == 1 {
        return Some(0);
    }
    text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
}

fn is_tag(c: char) -> bool {
    ('\u{E0000}'..='\u{E007F}').contains(&c)
}

/// The class of `c` (at index `i`, between `prev` and `next`), if it is
/// hidden there.
fn classify(c: char, prev: Option<char>, next: Option<char>, i: usize) -> Option<Class> {
    let cp = c as u32;
    if is_tag(c) {
        return Some(Class::Tag);
    }
    match cp {
        0x202A..=0x202E | 0x2066..=0x2069 => return Some(Class::Bidi),
        0x200E | 0x200F | 0x061C => {
            let rtl = |c: Option<char>| c.is_some_and(is_rtl_letter);
            return (!(rtl(prev) || rtl(next))).then_some(Class::Bidi);
        }
        0x200D => {
            let emoji = |c: Option<char>| c.is_some_and(is_emoji_part);
            let shaping = |c: Option<char>| c.is_some_and(is_shaping_letter);
            let joins = (emoji(prev) && emoji(next)) || (shaping(prev) && shaping(next));
            return (!joins).then_some(Class::ZeroWidth);
        }
        0x200C => {
            let shaping = |c: Option<char>| c.is_some_and(is_shaping_letter);
            return (!(shaping(prev) && shaping(next))).then_some(Class::ZeroWidth);
        }
        0x200B | 0x2060..=0x2064 | 0x180E => return Some(Class::ZeroWidth),
        0xFEFF => return (i > 0).then_some(Class::ZeroWidth),
        0x00AD => return None,
        0xFE00..=0xFE0F => {
            return (!prev.is_some_and(is_emoji_base)).then_some(Class::VariationSelector)
        }
        0xE0100..=0xE01EF => {
            return (!prev.is_some_and(is_ideograph)).then_some(Class::VariationSelector)
        }
        _ => {}
    }
    is_format(cp).then_some(Class::Format)
}

/// The rest of Unicode 15.1's `Cf` (format) characters.
fn is_format(cp: u32) -> bool {
    matches!(
        cp,
        0x0600..=0x0605
            | 0x06DD
            | 0x070F
            | 0x0890..=0x0891
            | 0x08E2
            | 0x206A..=0x206F
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
    )
}

/// Hebrew, Arabic-script, Syriac, Thaana and N'Ko letters (and their marks).
fn is_rtl_letter(c: char) -> bool {
    matches!(c as u32, 0x0590..=0x08FF | 0xFB1D..=0xFDFF | 0xFE70..=0xFEFE)
}

/// Letters of the scripts where joiners shape words: Arabic-script and
/// Syriac, and the Indic scripts (Devanagari to Malayalam, Sinhala).
fn is_shaping_letter(c: char) -> bool {
    matches!(c as u32, 0x0600..=0x08FF | 0x0900..=0x0DFF | 0xFB50..=0xFDFF | 0xFE70..=0xFEFE)
}

/// What an emoji sequence is made of: pictographs and symbols, skin tones,
/// the variation selector that makes emoji, keycap bases.
fn is_emoji_part(c: char) -> bool {
    is_emoji_base(c) || matches!(c as u32, 0xFE0F | 0x1F3FB..=0x1F3FF | 0x20E3)
}

/// What a variation selector may follow: emoji and symbols, keycap bases.
fn is_emoji_base(c: char) -> bool {
    matches!(
        c as u32,
        0x0023 | 0x002A | 0x0030..=0x0039 | 0x00A9 | 0x00AE | 0x203C | 0x2049 | 0x2122 | 0x2139
            | 0x2194..=0x21AA | 0x231A..=0x23FF | 0x24C2 | 0x25AA..=0x27BF | 0x2900..=0x2BFF
            | 0x3030 | 0x303D | 0x3297 | 0x3299 | 0x1F000..=0x1FAFF
    )
}

/// CJK ideographs (what ideographic variation selectors select).
fn is_ideograph(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x3FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(text: &str) -> Vec<(Class, usize, usize, usize)> {
        find(text)
            .into_iter()
            .map(|f| (f.class, f.line, f.column, f.count))
            .collect()
    }

    #[test]
    fn a_line_is_shown_with_its_hidden_characters_apart() {
        use super::line_made_visible;
        let text = "first\nbe kind\u{E0041}\u{E0042} to \u{202E}all\u{202C}\u{1F468}\u{200D}\u{1F469}\nlast";
        let shown = line_made_visible(text, 2);
        assert_eq!(
            shown,
            vec![
                Ok("be kind".to_string()),
                Err('\u{E0041}'),
                Err('\u{E0042}'),
                Ok(" to ".to_string()),
                Err('\u{202E}'),
                Ok("all".to_string()),
                Err('\u{202C}'),
                // A joiner between emoji is text.
                Ok("\u{1F468}\u{200D}\u{1F469}".to_string()),
            ]
        );
        assert_eq!(line_made_visible(text, 3), vec![Ok("last".to_string())]);
        assert!(line_made_visible(text, 9).is_empty());
        // A long line is cut around the first one.
        let long = format!("{}\u{200B}{}", "a".repeat(500), "b".repeat(500));
        let shown = line_made_visible(&long, 1);
        assert_eq!(shown[0], Ok("…".to_string()));
        assert_eq!(shown[2], Err('\u{200B}'));
        assert_eq!(shown.last(), Some(&Ok("…".to_string())));
        let chars: usize = shown
            .iter()
            .map(|p| p.as_ref().map_or(1, |s| s.chars().count()))
            .sum();
        assert!(chars <= super::SHOWN_CHARS + 2, "{chars}");
    }

    #[test]
    fn tag_characters_are_decoded() {
        let hidden: String = "ignore all"
            .chars()
            .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
            .collect();
        let found = find(&format!("ok\nrule{hidden} end"));
        assert_eq!(found.len(), 1);
        assert_eq!(
            (
                found[0].class,
                found[0].line,
                found[0].column,
                found[0].count
            ),
            (Class::Tag, 2, 5, 10)
        );
        assert_eq!(found[0].decoded, "ignore all");
        assert!(found[0].message().contains("spelling \"ignore all\""));
    }

    #[test]
    fn a_subdivision_flag_is_not_hidden_text() {
        let scotland = "\u{1F3F4}\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}";
        assert_eq!(classes(&format!("flag {scotland} ok")), vec![]);
    }

    #[test]
    fn bidi_controls_and_marks_away_from_rtl_text() {
        assert_eq!(classes("a\u{202E}b\u{2066}c"), vec![(Class::Bidi, 1, 2, 2)]);
        assert_eq!(classes("\u{05E9}\u{200F}x"), vec![]);
        assert_eq!(classes("abc\u{200F}x"), vec![(Class::Bidi, 1, 4, 1)]);
    }

    #[test]
    fn joiners_that_shape_text_are_legitimate() {
        // A family emoji, a Persian word with a non-joiner, a Devanagari conjunct.
        assert_eq!(
            classes("\u{1F468}\u{200D}\u{1F469}\u{200D}\u{1F467}"),
            vec![]
        );
        assert_eq!(
            classes("\u{0645}\u{06CC}\u{200C}\u{062E}\u{0648}\u{0627}\u{0647}\u{0645}"),
            vec![]
        );
        assert_eq!(classes("\u{0915}\u{094D}\u{200D}\u{0937}"), vec![]);
        assert_eq!(classes("soft\u{00AD}hyphen, \u{2764}\u{FE0F}"), vec![]);
        // Between Latin letters they hide.
        assert_eq!(
            classes("a\u{200B}b\u{200D}c\u{2060}"),
            vec![(Class::ZeroWidth, 1, 2, 3)]
        );
    }

    #[test]
    fn a_byte_order_mark_is_hidden_only_after_the_start() {
        assert_eq!(classes("\u{FEFF}rule"), vec![]);
        assert_eq!(classes("ru\u{FEFF}le"), vec![(Class::ZeroWidth, 1, 3, 1)]);
    }

    #[test]
    fn other_format_characters_and_stray_selectors() {
        assert_eq!(
            classes("x\u{2062}y\u{FE0F}z\u{E0100}"),
            vec![
                (Class::ZeroWidth, 1, 2, 1),
                (Class::VariationSelector, 1, 4, 2)
            ]
        );
        assert_eq!(classes("\u{0600}1"), vec![(Class::Format, 1, 1, 1)]);
        assert_eq!(classes("\u{845B}\u{E0100}"), vec![]);
    }
}
