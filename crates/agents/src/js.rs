//! JavaScript's semantics where the agents written in it depend on them:
//! `\s` and `String.prototype.trim` (Rust's `char::is_whitespace` differs:
//! it takes U+0085 and leaves U+FEFF), and Node's `path.resolve`.

use std::path::{Component, Path, PathBuf};

/// JavaScript's `\s`, as the inside of a regex character class.
pub(crate) const SPACE_CLASS: &str = "\t\n\u{b}\u{c}\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}";

/// Whether `c` is whitespace to JavaScript (`\s`, `trim`).
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// JavaScript's `String.prototype.trim`.
pub fn trim(s: &str) -> &str {
    s.trim_matches(is_space)
}

/// Node's `path.resolve` of an absolute path: `.` and `..` resolved by the
/// string (not by the file system), doubled and trailing slashes dropped.
pub fn resolve(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(p) => out.push(p),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn trims_as_javascript() {
        assert_eq!(super::trim("\u{feff}\u{3000} x \u{a0}\n"), "x");
        assert_eq!(super::trim("\u{85}x\u{200b}"), "\u{85}x\u{200b}");
    }

    #[test]
    fn resolves_as_node() {
        use std::path::Path;
        assert_eq!(
            super::resolve(Path::new("/a/./b/../c//d/")),
            Path::new("/a/c/d")
        );
        assert_eq!(super::resolve(Path::new("/../x")), Path::new("/x"));
    }
}
