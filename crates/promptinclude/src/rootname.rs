//! Roots named in the outputs without losing a byte.
//!
//! Every output names a root by text: `root` (as given) and, where there is
//! one, `abs_root`. A path whose bytes are not UTF-8 cannot be written as a
//! JSON string exactly, so the text shows each undecodable byte as U+FFFD,
//! and two roots that differ only in such bytes print the same. Such a
//! record also carries the exact bytes, in lowercase hex, beside the text:
//! `root_hex` (and `abs_root_hex`). A UTF-8 path never has one, so outputs
//! of UTF-8 roots are unchanged. Whatever reads the outputs back (`merge`,
//! `verify`) takes a root's identity from `path_of`: the hex when there
//! is one, else the text, never the rendering alone.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The text a path is shown as: its bytes decoded, each undecodable byte
/// sequence as U+FFFD.
pub fn text_of(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// `path`'s bytes in lowercase hex when they are not UTF-8 (its `*_hex`
/// field), `None` when the text says it all.
pub fn hex_of(path: &Path) -> Option<String> {
    let bytes = path.as_os_str().as_bytes();
    if std::str::from_utf8(bytes).is_ok() {
        return None;
    }
    Some(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// A record's `*_hex` field that is not hex bytes (the field's text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BadHex {
    /// An odd number of digits.
    OddLength(String),
    /// A character that is not a hex digit.
    NotHex(String),
}

impl std::fmt::Display for BadHex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadHex::OddLength(hex) => {
                write!(f, "{hex:?} is not hex bytes (an odd number of digits)")
            }
            BadHex::NotHex(hex) => write!(f, "{hex:?} is not hex bytes"),
        }
    }
}

impl std::error::Error for BadHex {}

/// The path a record names: its `*_hex` field decoded when it has one,
/// else its text. Fails on hex that is not an even number of hex digits.
pub(crate) fn path_of(text: &str, hex: Option<&str>) -> Result<PathBuf, BadHex> {
    let Some(hex) = hex else {
        return Ok(PathBuf::from(text));
    };
    let digits = hex.as_bytes();
    if digits.len() % 2 != 0 {
        return Err(BadHex::OddLength(hex.to_string()));
    }
    let digit = |d: u8| {
        (d as char)
            .to_digit(16)
            .ok_or_else(|| BadHex::NotHex(hex.to_string()))
    };
    let bytes = digits
        .chunks(2)
        .map(|pair| Ok((digit(pair[0])? * 16 + digit(pair[1])?) as u8))
        .collect::<Result<Vec<u8>, BadHex>>()?;
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_paths_have_no_hex_and_others_round_trip() {
        assert_eq!(hex_of(Path::new("d\u{fffd}/é")), None);
        for bytes in [&b"d\xff"[..], b"d\xfe", b"\x80", b"a/\xc3(b"] {
            let path = PathBuf::from(OsString::from_vec(bytes.to_vec()));
            let hex = hex_of(&path).expect("not UTF-8");
            assert_eq!(path_of(&text_of(&path), Some(&hex)).unwrap(), path);
        }
        assert_eq!(hex_of(Path::new("")), None);
        assert_eq!(
            hex_of(&PathBuf::from(OsString::from_vec(b"d\xff".to_vec()))).as_deref(),
            Some("64ff")
        );
        assert_eq!(path_of("x", None).unwrap(), PathBuf::from("x"));
        assert!(path_of("x", Some("6")).is_err());
        assert!(path_of("x", Some("zz")).is_err());
        assert!(path_of("x", Some("+1")).is_err());
    }
}
