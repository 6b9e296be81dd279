//! Paths as the reference sees them: `os.path.abspath` done lexically on
//! bytes, and file names that are not UTF-8 seen as Python's
//! surrogate-escaped strings.

use std::borrow::Cow;
use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// `os.path.abspath(root)` for a filesystem path, given the current
/// directory's bytes; `None` for a relative root when there is no current
/// directory (the reference would raise).
pub fn abspath_of(root: &Path, cwd: Option<&[u8]>) -> Option<PathBuf> {
    let bytes = root.as_os_str().as_bytes();
    let cwd = match (bytes.first(), cwd) {
        (Some(b'/'), _) => &b"/"[..],
        (_, Some(cwd)) => cwd,
        (_, None) => return None,
    };
    Some(PathBuf::from(OsString::from_vec(abspath(bytes, cwd))))
}

/// `os.path.abspath` on POSIX, on bytes: joined to `cwd` when relative, then
/// `normpath` (`.` and empty segments dropped, `..` pops, symlinks are not
/// resolved). Exactly two leading slashes are kept, as POSIX `normpath` does.
pub fn abspath(path: &[u8], cwd: &[u8]) -> Vec<u8> {
    let joined;
    let path = if path.first() == Some(&b'/') {
        path
    } else {
        joined = [cwd, b"/", path].concat();
        &joined[..]
    };
    normpath(path)
}

/// `posixpath.normpath` for an absolute path.
fn normpath(path: &[u8]) -> Vec<u8> {
    let leading = if path.starts_with(b"//") && !path.starts_with(b"///") {
        2
    } else {
        1
    };
    let mut parts: Vec<&[u8]> = Vec::new();
    for part in path.split(|&b| b == b'/') {
        match part {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    let mut out = vec![b'/'; leading];
    out.extend_from_slice(&parts.join(&b'/'));
    out
}

/// `rel + "/" + name` (just `name` at the root), in the form the matchers
/// see: undecodable bytes of `name` become stand-in characters
/// ([`crate::pystr::matching_str`]).
pub fn join_rel(parent: &str, name: &[u8]) -> String {
    let name = crate::pystr::matching_str(name);
    if parent.is_empty() {
        name.into_owned()
    } else {
        let mut rel = String::with_capacity(parent.len() + 1 + name.len());
        rel.push_str(parent);
        rel.push('/');
        rel.push_str(&name);
        rel
    }
}

/// Python's view of a byte string decoded with `surrogateescape`: code points,
/// with each undecodable byte `b` as U+DC00+`b`.
pub fn code_points(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes.utf8_chunks().flat_map(|chunk| {
        chunk
            .valid()
            .chars()
            .map(u32::from)
            .chain(chunk.invalid().iter().map(|&b| 0xDC00 + u32::from(b)))
    })
}

/// The text tiktoken counts for a surrogate-escaped path: each undecodable
/// byte becomes one U+FFFD.
pub fn surrogate_replaced(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        out.extend(std::iter::repeat_n('\u{FFFD}', chunk.invalid().len()));
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abspath_like_python() {
        // Each expectation is os.path.abspath(p) with os.getcwd() == "/cwd/x".
        let cases: &[(&str, &str)] = &[
            (".", "/cwd/x"),
            ("a/../b/", "/cwd/x/b"),
            ("../../..", "/"),
            ("/", "/"),
            ("//", "//"),
            ("///", "/"),
            ("//a//b/", "//a/b"),
            ("///a/./b/..", "/a"),
            ("/..", "/"),
            ("a/./b//c", "/cwd/x/a/b/c"),
        ];
        for (input, want) in cases {
            let got = abspath(input.as_bytes(), b"/cwd/x");
            assert_eq!(String::from_utf8(got).unwrap(), *want, "abspath({input:?})");
        }
    }

    #[test]
    fn surrogates_sort_between_bmp_ranges() {
        // '\ud7ff' < '\udcff' (from byte 0xff) < '\ue000'
        let a: Vec<u32> = code_points("\u{D7FF}".as_bytes()).collect();
        let b: Vec<u32> = code_points(b"\xff").collect();
        let c: Vec<u32> = code_points("\u{E000}".as_bytes()).collect();
        assert!(a < b && b < c);
        assert_eq!(surrogate_replaced(b"a\xe2\x82b"), "a\u{FFFD}\u{FFFD}b");
    }
}
