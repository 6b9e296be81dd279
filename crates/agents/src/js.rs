//! JavaScript's semantics where the agents written in it depend on them:
//! `\s` and `String.prototype.trim` (Rust's `char::is_whitespace` differs:
//! it takes U+0085 and leaves U+FEFF), the default string order, Node's
//! `path.resolve` and `path.relative`, and Node's reading of a file.

use std::io;
use std::path::{Component, Path, PathBuf};

use crate::disk::Disk;

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

/// Node's `path.relative` between two absolute paths.
pub(crate) fn relative(from: &Path, to: &Path) -> String {
    let a: Vec<_> = from.components().collect();
    let b: Vec<_> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); a.len() - common];
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// JavaScript's default string order (UTF-16 code units), of two paths.
pub(crate) fn utf16_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let a = a.to_string_lossy();
    let b = b.to_string_lossy();
    a.encode_utf16().cmp(b.encode_utf16())
}

/// `fs.access(path)` then `fs.readFile(path, "utf-8")`: the text, or
/// Node's message for why it cannot be read.
pub(crate) fn read_file(disk: &dyn Disk, full: &Path) -> Result<String, String> {
    let shown = full.to_string_lossy();
    if let Err(e) = disk.metadata(full) {
        return Err(node_error(&e, "access", &shown));
    }
    match disk.read(full) {
        Ok(bytes) => Ok(crate::lossy(&bytes).into_owned()),
        Err(e) if e.raw_os_error() == Some(21) => {
            Err("EISDIR: illegal operation on a directory, read".to_string())
        }
        Err(e) => Err(node_error(&e, "open", &shown)),
    }
}

/// Node's message for a failed system call on `path`.
fn node_error(e: &io::Error, syscall: &str, path: &str) -> String {
    let (code, text) = match e.raw_os_error() {
        Some(2) => ("ENOENT", "no such file or directory"),
        Some(20) => ("ENOTDIR", "not a directory"),
        Some(13) => ("EACCES", "permission denied"),
        Some(40) => ("ELOOP", "too many symbolic links encountered"),
        Some(36) => ("ENAMETOOLONG", "name too long"),
        _ => return e.to_string(),
    };
    format!("{code}: {text}, {syscall} '{path}'")
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

    #[test]
    fn relative_paths_climb_as_node_does() {
        use std::path::Path;
        let relative = |a: &str, b: &str| super::relative(Path::new(a), Path::new(b));
        assert_eq!(relative("/a/b", "/a/b/c/d.md"), "c/d.md");
        assert_eq!(relative("/a/b", "/a/x.md"), "../x.md");
        assert_eq!(relative("/a/b/c", "/z.md"), "../../../z.md");
    }
}
