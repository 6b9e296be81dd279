//! JSON as Python's `json.loads` reads it (the host loads `config.json`
//! with it).
//!
//! Written by hand because no JSON crate accepts what Python accepts:
//! `NaN`, `Infinity` and `-Infinity`, integers of any size, lone surrogate
//! escapes (`"\udcff"`), and duplicate keys (the last wins). Only the top
//! level is kept in detail; nested values are checked and summarised.

use crate::document::{Entry, SyntaxError};
use crate::number::Number;
use crate::value::{lone_surrogate_stand_in, Value};

/// Python refuses to convert integers with more decimal digits than this
/// (`sys.get_int_max_str_digits()`, 3.11's default).
pub const MAX_INT_DIGITS: usize = 4300;

/// Parses a JSON document whose top level must be an object, returning its
/// members in order (duplicates included: later entries win).
pub fn parse_object(text: &str) -> Result<Vec<Entry>, SyntaxError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    p.skip_ws();
    if p.peek() != Some(b'{') {
        // Python would parse any value; the host then calls `.get` on it.
        let _ = p.value()?;
        return Err(p.error_at(0, "expected a JSON object at the top level"));
    }
    let entries = p.object_entries()?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(p.error("Extra data"));
    }
    Ok(entries)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn line_of(&self, pos: usize) -> usize {
        self.bytes[..pos.min(self.bytes.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn error(&self, message: &str) -> SyntaxError {
        self.error_at(self.pos, message)
    }

    fn error_at(&self, pos: usize, message: &str) -> SyntaxError {
        SyntaxError {
            line: Some(self.line_of(pos)),
            key: None,
            message: format!("malformed JSON: {message}"),
        }
    }

    /// Python's JSON whitespace: space, tab, newline, carriage return.
    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, literal: &str) -> bool {
        if self.text[self.pos..].starts_with(literal) {
            self.pos += literal.len();
            true
        } else {
            false
        }
    }

    /// The members of the object at `pos` (which holds `{`).
    fn object_entries(&mut self) -> Result<Vec<Entry>, SyntaxError> {
        self.pos += 1;
        let mut entries = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(entries);
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("Expecting property name enclosed in double quotes"));
            }
            let line = self.line_of(self.pos);
            let key = self.string()?;
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.error("Expecting ':' delimiter"));
            }
            self.pos += 1;
            self.skip_ws();
            let start = self.pos;
            let value = self.value()?;
            let written = self.text[start..self.pos].to_string();
            entries.push(Entry {
                key,
                written,
                value,
                line,
            });
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(entries);
                }
                _ => return Err(self.error("Expecting ',' delimiter")),
            }
        }
    }

    fn value(&mut self) -> Result<Value, SyntaxError> {
        match self.peek() {
            Some(b'"') => self.string().map(Value::Str),
            Some(b'{') => self.object_entries().map(|e| {
                let mut keys: Vec<&str> = e.iter().map(|e| e.key.as_str()).collect();
                keys.sort_unstable();
                keys.dedup();
                Value::Map(keys.len())
            }),
            Some(b'[') => self.array(),
            Some(b'n') if self.eat("null") => Ok(Value::Null),
            Some(b't') if self.eat("true") => Ok(Value::Number(Number::Bool(true))),
            Some(b'f') if self.eat("false") => Ok(Value::Number(Number::Bool(false))),
            Some(b'N') if self.eat("NaN") => Ok(Value::Number(Number::Float(f64::NAN))),
            Some(b'I') if self.eat("Infinity") => Ok(Value::Number(Number::Float(f64::INFINITY))),
            Some(b'-') if self.eat("-Infinity") => {
                Ok(Value::Number(Number::Float(f64::NEG_INFINITY)))
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(self.error("Expecting value")),
        }
    }

    fn array(&mut self) -> Result<Value, SyntaxError> {
        self.pos += 1;
        self.skip_ws();
        let mut len = 0;
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Value::List(0));
        }
        loop {
            self.skip_ws();
            self.value()?;
            len += 1;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::List(len));
                }
                _ => return Err(self.error("Expecting ',' delimiter")),
            }
        }
    }

    /// `-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?`: an `int` without fraction or
    /// exponent, else a `float` (which may overflow to `inf`, as `float()` does).
    fn number(&mut self) -> Result<Value, SyntaxError> {
        let start = self.pos;
        let digits = |p: &mut Parser| {
            let s = p.pos;
            while matches!(p.peek(), Some(b'0'..=b'9')) {
                p.pos += 1;
            }
            p.pos - s
        };
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => {
                digits(self);
            }
            _ => return Err(self.error_at(start, "Expecting value")),
        }
        let int_end = self.pos;
        let mut is_float = false;
        if self.peek() == Some(b'.') && matches!(self.bytes.get(self.pos + 1), Some(b'0'..=b'9')) {
            self.pos += 1;
            digits(self);
            is_float = true;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                self.pos = save;
            } else {
                is_float = true;
            }
        }
        let literal = &self.text[start..self.pos];
        if is_float {
            let f: f64 = literal
                .parse()
                .map_err(|_| self.error_at(start, "bad number"))?;
            return Ok(Value::Number(Number::Float(f)));
        }
        let digit_count = int_end - start - usize::from(literal.starts_with('-'));
        if digit_count > MAX_INT_DIGITS {
            return Err(self.error_at(
                start,
                "Exceeds the limit (4300 digits) for integer string conversion",
            ));
        }
        Number::parse_decimal_int(literal)
            .map(Value::Number)
            .ok_or_else(|| self.error_at(start, "bad number"))
    }

    /// A string at `pos` (which holds `"`), with Python's strict rules: no raw
    /// control characters; `\uXXXX` pairs combine, lone surrogates stay.
    fn string(&mut self) -> Result<String, SyntaxError> {
        let start = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.pos..];
            let Some(c) = rest.chars().next() else {
                return Err(self.error_at(start, "Unterminated string starting at"));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    self.pos += 1;
                    let Some(e) = self.peek() else {
                        return Err(self.error_at(start, "Unterminated string starting at"));
                    };
                    self.pos += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            if (0xD800..0xDC00).contains(&hi)
                                && self.text[self.pos..].starts_with("\\u")
                            {
                                let save = self.pos;
                                self.pos += 2;
                                let lo = self.hex4()?;
                                if (0xDC00..0xE000).contains(&lo) {
                                    let c = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                                    out.push(char::from_u32(c).unwrap_or('\u{FFFD}'));
                                    continue;
                                }
                                self.pos = save;
                            }
                            match char::from_u32(hi) {
                                Some(c) => out.push(c),
                                None => out.push(lone_surrogate_stand_in(hi)),
                            }
                        }
                        _ => return Err(self.error_at(self.pos - 2, "Invalid \\escape")),
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error("Invalid control character at"));
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, SyntaxError> {
        let hex = self.text.get(self.pos..self.pos + 4).unwrap_or("");
        if hex.len() != 4 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(self.error_at(self.pos.saturating_sub(2), "Invalid \\uXXXX escape"));
        }
        self.pos += 4;
        Ok(u32::from_str_radix(hex, 16).unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Value {
        let e = parse_object(text).unwrap();
        e.into_iter().last().unwrap().value
    }

    #[test]
    fn python_only_forms() {
        assert!(matches!(one(r#"{"a": NaN}"#), Value::Number(Number::Float(f)) if f.is_nan()));
        assert_eq!(
            one(r#"{"a": -Infinity}"#),
            Value::Number(Number::Float(f64::NEG_INFINITY))
        );
        assert_eq!(
            one(r#"{"a": 1e400}"#),
            Value::Number(Number::Float(f64::INFINITY))
        );
        assert_eq!(one(r#"{"a": 1e2}"#), Value::Number(Number::Float(100.0)));
        assert_eq!(one(r#"{"a": -0}"#), Value::Number(Number::Int(0)));
        assert_eq!(one(r#"{"a": true}"#), Value::Number(Number::Bool(true)));
        let big = format!("{{\"a\": {}}}", "9".repeat(50));
        assert_eq!(one(&big).to_string(), "9".repeat(50));
        assert!(parse_object(&format!("{{\"a\": {}}}", "9".repeat(4301))).is_err());
        assert_eq!(one(r#"{"a": "\udcff"}"#), Value::Str("\u{10FFFF}".into()));
        assert_eq!(one(r#"{"a": "\ud83d\ude00"}"#), Value::Str("😀".into()));
        assert_eq!(one(r#"{"a": [1, [2], {}]}"#), Value::List(3));
    }

    #[test]
    fn duplicates_and_lines() {
        let e = parse_object("{\n \"a\": 1,\n \"a\": 2\n}").unwrap();
        assert_eq!(
            (e[1].line, &e[1].value),
            (3, &Value::Number(Number::Int(2)))
        );
    }

    #[test]
    fn errors_have_lines() {
        for bad in [
            "{\n\"a\": 1,\n}",
            "{\"a\": 01}",
            "{\"a\": \"x\ty\"}",
            "[1]",
            "{} x",
            "\u{feff}{}",
        ] {
            assert!(parse_object(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_object("{\n\"a\": 1,\n}").unwrap_err().line, Some(3));
    }
}
