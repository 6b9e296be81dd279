//! A configuration value as Python sees it after `json.loads` or PyYAML's
//! `safe_load`, before it is checked against its key.

use std::fmt;

use crate::number::Number;

/// A value loaded from a configuration document.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `None` (`null`, `~`, an empty YAML value).
    Null,
    /// A number (`int`, `float` or `bool`).
    Number(Number),
    /// A `str`. Lone surrogates (which Python's `json` accepts) are kept as
    /// stand-ins (see [`lone_surrogate_stand_in`]).
    Str(String),
    /// A `list`, with its length.
    List(usize),
    /// A `dict`, with its length.
    Map(usize),
    /// Any other type PyYAML constructs (`bytes`, `datetime.date`, `set`, ...).
    Other(&'static str),
}

impl Value {
    /// Python's `bool(value)`.
    pub fn is_truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Number(n) => !n.is_falsy(),
            Value::Str(s) => !s.is_empty(),
            Value::List(n) | Value::Map(n) => *n > 0,
            Value::Other(_) => true,
        }
    }

    /// The Python type name, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "NoneType",
            Value::Number(Number::Bool(_)) => "bool",
            Value::Number(Number::Float(_)) => "float",
            Value::Number(_) => "int",
            Value::Str(_) => "str",
            Value::List(_) => "list",
            Value::Map(_) => "dict",
            Value::Other(name) => name,
        }
    }
}

impl fmt::Display for Value {
    /// A short Python-like rendering for messages, written after the type
    /// name (`str "x"`, `int 5`, `list of length 2`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("None"),
            Value::Number(n) => write!(f, "{n}"),
            Value::Str(s) if s.chars().count() > 40 => {
                let head: String = s.chars().take(40).collect();
                write!(f, "{head:?}...")
            }
            Value::Str(s) => write!(f, "{s:?}"),
            Value::List(n) | Value::Map(n) => write!(f, "of length {n}"),
            Value::Other(_) => f.write_str("value"),
        }
    }
}

/// Maps a lone surrogate code point (from a `\uXXXX` escape) to the character
/// a Rust string holds for it: the matching stand-in for U+DC80..U+DCFF
/// (which Python pairs with undecodable bytes in file names), else U+10FF00,
/// a stand-in no undecodable byte produces (so, as in Python, it matches no
/// file name literally).
pub fn lone_surrogate_stand_in(code: u32) -> char {
    let offset = if (0xDC80..=0xDCFF).contains(&code) {
        code - 0xDC00
    } else {
        0
    };
    char::from_u32(crate::pystr::STAND_IN_BASE + offset).unwrap_or('\u{FFFD}')
}
