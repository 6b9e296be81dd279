//! What the two document loaders ([`crate::json`], [`crate::yaml`]) give back:
//! a document's top-level entries, or the error Python's loader raises.

use crate::value::Value;

/// One `key: value` of a document's top level, with the key's 1-based line.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The key as written.
    pub key: String,
    /// The value as written in the document (for messages).
    pub written: String,
    /// The loaded value.
    pub value: Value,
    /// 1-based line of the key.
    pub line: usize,
}

/// A document that Python's loader rejects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line, where known.
    pub line: Option<usize>,
    /// The top-level key whose value the loader rejects, if any.
    pub key: Option<String>,
    /// What is wrong.
    pub message: String,
}

/// `text` for a one-line message: line breaks shown as `\n`, cut to 60
/// characters.
pub fn shorten(text: &str) -> String {
    let text = text.trim().replace('\n', "\\n").replace('\r', "\\r");
    let text = text.as_str();
    if text.chars().count() <= 60 {
        text.to_string()
    } else {
        let head: String = text.chars().take(60).collect();
        format!("{head}...")
    }
}
