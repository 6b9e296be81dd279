//! Text shown to a person, with the characters that can change what a
//! terminal or a page shows made visible.
//!
//! A file name or a rule line can hold escape sequences (`\e]0;…\a` retitles
//! a terminal, `\e[2J` clears it, `\e[8m` hides text, `\e[1A\e[2K` erases
//! the line above), bidirectional controls that reorder what is shown
//! (U+202E makes `evil.md\u{202E}txt.exe` read differently; "Trojan Source",
//! CVE-2021-42574), and line separators. GNU `ls` on a terminal, git's
//! `core.quotePath` and fd escape such names; so do we, as `\u{…}` (and the
//! usual `\n`, `\t`, `\r`, `\\` is left alone).

#![deny(missing_docs)]

use std::borrow::Cow;

/// Whether `c` can change how the text around it is shown: a control
/// character (C0, DEL, C1), a bidirectional control, an invisible format
/// character that can hide or join text, or a line/paragraph separator.
fn is_deceptive(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}'                   // ARABIC LETTER MARK
            | '\u{200B}'..='\u{200F}'    // zero-width space/non-joiner/joiner, LRM, RLM
            | '\u{2028}' | '\u{2029}'    // LINE / PARAGRAPH SEPARATOR
            | '\u{202A}'..='\u{202E}'    // LRE, RLE, PDF, LRO, RLO
            | '\u{2060}'..='\u{2064}'    // word joiner, invisible operators
            | '\u{2066}'..='\u{2069}'    // LRI, RLI, FSI, PDI
            | '\u{FEFF}'                 // zero-width no-break space (BOM)
        )
}

/// `text` with every deceptive (`is_deceptive`) character escaped (`\n`,
/// `\t`, `\r`, or `\u{hex}`): for names, which never span lines.
pub fn visible(text: &str) -> Cow<'_, str> {
    escape_where(text, is_deceptive)
}

/// `text` with every deceptive character escaped except line feeds and
/// tabs: for contents shown line by line.
pub fn visible_lines(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && c != '\t' && is_deceptive(c))
}

fn escape_where(text: &str, escape: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escape) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escape(c) {
            match c {
                '\n' | '\t' | '\r' => shown.extend(c.escape_default()),
                _ => shown.push_str(&format!("\\u{{{:x}}}", c as u32)),
            }
        } else {
            shown.push(c);
        }
    }
    Cow::Owned(shown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_controls_bidi_and_separators() {
        assert_eq!(
            visible("a\nb\tc\r\u{0}\u{1b}[2J\u{85}é"),
            "a\\nb\\tc\\r\\u{0}\\u{1b}[2J\\u{85}é"
        );
        assert_eq!(
            visible("x\u{202E}y\u{2066}z\u{2028}"),
            "x\\u{202e}y\\u{2066}z\\u{2028}"
        );
        assert!(matches!(visible("plain/ü.md"), Cow::Borrowed(_)));
    }

    #[test]
    fn lines_keep_newlines_and_tabs() {
        assert_eq!(
            visible_lines("+rule\t1\n-\u{1b}[8mhidden\u{1b}[0m\n"),
            "+rule\t1\n-\\u{1b}[8mhidden\\u{1b}[0m\n"
        );
    }
}
