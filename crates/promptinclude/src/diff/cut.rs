//! How much of a text the Markdown report shows: a pull-request comment
//! must stay under GitHub's limit, so long diffs are cut at a line end.

/// GitHub refuses comments over 65,536 characters; the Markdown section
/// diff is cut (at a line) to stay well under that.
pub(super) const MARKDOWN_DIFF_LIMIT: usize = 60_000;

/// The agents' text diffs together are cut (at a line) past this many
/// bytes in Markdown: with the section diff, the comment stays under
/// GitHub's limit.
pub(super) const MARKDOWN_AGENT_TEXTS_LIMIT: usize = 4_000;

/// The longest prefix of `text` ending at a line end within `limit` bytes,
/// and how many lines were left out.
pub(super) fn cut_at_line(text: &str, limit: usize) -> (&str, usize) {
    if text.len() <= limit {
        return (text, 0);
    }
    // Searched as bytes: `limit` may fall inside a character, a '\n' never does.
    let end = text.as_bytes()[..limit]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (&text[..end], text[end..].lines().count())
}

#[cfg(test)]
mod tests {
    use super::cut_at_line;

    #[test]
    fn cuts_at_a_line_end() {
        assert_eq!(cut_at_line("ab\ncd\nef\n", 100), ("ab\ncd\nef\n", 0));
        assert_eq!(cut_at_line("ab\ncd\nef\n", 7), ("ab\ncd\n", 1));
        assert_eq!(cut_at_line("abcdef\n", 3), ("", 1));
        // The limit inside a two-byte character.
        assert_eq!(cut_at_line("ab\né\n", 4), ("ab\n", 1));
    }
}
