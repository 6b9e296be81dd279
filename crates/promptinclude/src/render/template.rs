//! The host's prompt-template pass over rendered text: what Agent Zero's
//! `helpers/files.py` does to a prompt after filling in its placeholders.
//!
//! The host renders each rule-file block with `read_prompt_file` on the
//! plugin's `fw.promptinclude.includes.md` (placeholders `path`, `suffix`,
//! `content`), and the whole section with it on `agent.system.promptinclude.md`
//! (`name_pattern`, `includes`). `read_prompt_file` takes three steps:
//!
//! 1. `evaluate_text_conditions` on the *template text*, before any value is
//!    filled in: a `{{if …}}` inside a rule file is never evaluated, so it is
//!    left as written ([`super::text`] decides the section's own
//!    `{{if includes}}`).
//! 2. `replace_placeholders_text`, value after value in keyword order (the
//!    agent first, then the plugin's keywords): text inside the value filled
//!    in last (`content`, `includes`) is never substituted ([`super::text`]).
//! 3. `process_includes` over the result: this module. It runs on every
//!    block and again on the whole section, so rule contents and paths of
//!    included files go through it twice, and skipped paths and the name
//!    pattern once. It is two `re.sub` passes, in this order:
//!    * `{{\s*include\s+original\s*}}`: the same template from a
//!      lower-priority prompt folder. The plugin's two templates have no
//!      lower copy in a host that does not override them, so the host puts
//!      the empty string there (it gets `FileNotFoundError` or no folder at
//!      all): `remove_include_original`.
//!    * `{{\s*include\s*['"](.*?)['"]\s*}}`: a named prompt file. An absolute
//!      name, or one no prompt folder holds, is kept as written; a name that
//!      a folder of the host holds is replaced by that file rendered in turn,
//!      which depends on the host's installation and cannot be reproduced
//!      here. We keep every named include as written (README, "Where we
//!      differ"), so this pass changes nothing in the output; its pattern,
//!      `NAMED_INCLUDE`, is here for the audit, which reports the places.
//!
//! Hand-written patterns rather than a Python-regex crate: no crate
//! reproduces Python `re` on these two patterns, and the three differences
//! that matter are pinned here explicitly. `\s` in a Python `str` pattern is
//! `str.isspace()` (`PY_SPACE`, which unlike Unicode's White_Space includes
//! U+001C–U+001F); `.` excludes only `\n`; `(.*?)` is lazy. The `regex`
//! crate's leftmost-first `replace_all` is `re.sub`'s left-to-right,
//! non-overlapping scan, and these patterns never match the empty string.

use std::sync::LazyLock;

use regex::{NoExpand, Regex};

/// Python's `\s` for `str` patterns, as a `regex` class body: exactly the
/// characters for which CPython 3.11's `str.isspace()` is true.
const PY_SPACE: &str = r"\t\n\x0B\x0C\r\x1C-\x20\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}";

/// `{{\s*include\s+original\s*}}` with Python's `\s`.
pub(crate) static INCLUDE_ORIGINAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"\{{\{{[{PY_SPACE}]*include[{PY_SPACE}]+original[{PY_SPACE}]*\}}\}}"
    ))
    .expect("valid include-original pattern")
});

/// `{{\s*include\s*['"](.*?)['"]\s*}}` with Python's `\s` and `.`; group 1
/// is the name.
pub(crate) static NAMED_INCLUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"\{{\{{[{PY_SPACE}]*include[{PY_SPACE}]*['"]([^\n]*?)['"][{PY_SPACE}]*\}}\}}"#
    ))
    .expect("valid named-include pattern")
});

/// Whether `text` may hold a directive of the host's templates: each of
/// their patterns (here and the audit's placeholders) starts with `{{`, so
/// a text without one holds none. Asked first, so that a run whose texts
/// hold no `{{` never compiles the patterns: their Unicode classes took a
/// fifth of a plain `audit`'s instructions over the benchmark's seven
/// repositories.
pub(crate) fn may_hold_directive(text: &str) -> bool {
    text.contains("{{")
}

/// `text` after the host's `process_includes`: every `{{ include original }}`
/// removed (see the module documentation), everything else as it is.
pub(crate) fn remove_include_original(text: String) -> String {
    if !may_hold_directive(&text) || !INCLUDE_ORIGINAL.is_match(&text) {
        return text;
    }
    INCLUDE_ORIGINAL
        .replace_all(&text, NoExpand(""))
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Python: `[c for c in map(chr, range(0x110000)) if c.isspace()]`.
    const PYTHON_ISSPACE: &[u32] = &[
        0x9, 0xa, 0xb, 0xc, 0xd, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001,
        0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029,
        0x202f, 0x205f, 0x3000,
    ];

    #[test]
    fn space_class_is_pythons_isspace() {
        let class = Regex::new(&format!("^[{PY_SPACE}]$")).unwrap();
        let got: Vec<u32> = (0..=0x10FFFFu32)
            .filter_map(char::from_u32)
            .filter(|c| class.is_match(c.encode_utf8(&mut [0; 4])))
            .map(|c| c as u32)
            .collect();
        assert_eq!(got, PYTHON_ISSPACE);
    }

    #[test]
    fn include_original_forms() {
        // Each expected value is what Python's re.sub gives.
        let cases = [
            ("a{{ include original }}b", "ab"),
            ("{{include original}}", ""),
            ("{{includeoriginal}}", "{{includeoriginal}}"),
            ("{{\tinclude\noriginal\r\n}}", ""),
            ("{{\u{1c}include\u{85}original\u{3000}}}", ""),
            (
                "{{ include\u{200b}original }}",
                "{{ include\u{200b}original }}",
            ),
            ("{{ Include original }}", "{{ Include original }}"),
            ("{{ include original } }", "{{ include original } }"),
            ("{{{ include original }}}", "{}"),
            // One pass: a directive formed by a removal stays.
            (
                "{{ include {{ include original }}original }}",
                "{{ include original }}",
            ),
            ("x{{ include original }}{{ include original }}y", "xy"),
            (
                "{{ include original\n}}\n{{if x}}{{_agent}}{{endif}}",
                "\n{{if x}}{{_agent}}{{endif}}",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(remove_include_original(text.to_string()), want, "{text:?}");
        }
    }

    #[test]
    fn named_include_forms() {
        let names = |text: &str| -> Vec<String> {
            NAMED_INCLUDE
                .captures_iter(text)
                .map(|c| c[1].to_string())
                .collect()
        };
        assert_eq!(names("{{ include \"x.md\" }}"), ["x.md"]);
        assert_eq!(names("{{include'a/b.md'}}"), ["a/b.md"]);
        assert_eq!(names("{{include \"a'}}"), ["a"]);
        assert_eq!(names("{{include 'a\"\n}}"), ["a"]);
        // Lazy: the first quote followed by `\s*}}` ends the name.
        assert_eq!(names("{{include 'a' }} '}}"), ["a"]);
        assert_eq!(names("{{include 'a'b' }}"), ["a'b"]);
        // `.` stops at a newline; `\s` crosses it.
        assert!(names("{{include 'a\nb' }}").is_empty());
        assert_eq!(names("{{\u{1f}include\u{85}'/abs'\u{3000}}}"), ["/abs"]);
        assert!(names("{{include 'unterminated }}").is_empty());
        assert_eq!(names("{{include ''}}"), [""]);
        assert_eq!(
            names("{{include 'a'}}{{include \"b\"}}"),
            ["a", "b"],
            "left to right, not overlapping"
        );
    }
}
