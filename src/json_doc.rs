//! Editing a JSON document in place: the few changes `init` makes to a
//! settings file are spliced into the original text, so every byte it does
//! not change stays as it was (indentation, newlines, CRLF, the spelling of
//! numbers such as `12345678901234567890123` or `1e3`, escapes such as
//! `\u00e9` or `\/`, key order, even repeated keys).
//!
//! * [`parse`] reads strict JSON (RFC 8259; the caller has already checked
//!   it with `serde_json`) into a tree of [`Node`]s that know their byte
//!   spans, and learns the document's [`Style`]: its newline (`\n` or
//!   `\r\n`), its indentation unit (the first nested entry that starts a
//!   line, less its container's indentation: a tab, 2 or 4 spaces…), and how
//!   it spaces `:` and an inline `,`.
//! * [`Edits`] collects replacements of byte ranges: a value replaced, items
//!   of an array removed (with their separators), entries appended to an
//!   object or array. New entries follow the container they go into: on
//!   lines of their own, indented like its last entry, when it spans lines;
//!   inline when it is on one line; an empty container is opened onto lines
//!   when the document spans lines (or is the top level), else filled
//!   inline. [`Edits::apply`] splices them into the text.
//!
//! As in JavaScript's `JSON.parse`, a repeated key means its last value:
//! [`Node::get`] returns that one, so an edit changes what the agent reads.

use std::fmt;
use std::ops::Range;

/// Nesting deeper than this is refused (`serde_json`, which checks the file
/// first, stops at 128), so that parsing cannot exhaust the stack.
const MAX_DEPTH: usize = 256;

/// A JSON value and where it is in the text.
#[derive(Debug)]
pub struct Node {
    /// Its bytes, brackets or quotes included.
    pub span: Range<usize>,
    /// What it is.
    pub kind: Kind,
}

/// The kinds of [`Node`] that editing looks into.
#[derive(Debug)]
pub enum Kind {
    /// An object's members, in document order (repeated keys kept).
    Object(Vec<Member>),
    /// An array's items.
    Array(Vec<Node>),
    /// A string, decoded.
    String(String),
    /// A number, `true`, `false` or `null`.
    Other,
}

/// An object member.
#[derive(Debug)]
pub struct Member {
    /// The key, decoded.
    pub key: String,
    /// Where its key's opening quote is.
    pub start: usize,
    /// Its value.
    pub value: Node,
}

impl Node {
    /// The members of an object.
    pub fn members(&self) -> Option<&[Member]> {
        match &self.kind {
            Kind::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The items of an array.
    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::String(text) => Some(text),
            _ => None,
        }
    }

    /// The value of `key` in an object: the last one when the key repeats.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.members()?
            .iter()
            .rev()
            .find(|m| m.key == key)
            .map(|m| &m.value)
    }
}

/// A value to write into a document.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string.
    String(String),
    /// A non-negative integer.
    Number(u64),
    /// An array.
    Array(Vec<Value>),
    /// An object, its members in this order.
    Object(Vec<(String, Value)>),
}

/// How a document writes what `init` adds.
#[derive(Debug, PartialEq)]
pub struct Style {
    /// `"\n"` or `"\r\n"`: that of the first line break.
    pub newline: &'static str,
    /// One level of indentation (two spaces when nothing shows it).
    pub indent: String,
    /// Between a key and its value (`": "` unless the first member says otherwise).
    pub colon: String,
    /// Between entries on one line (the first such comma's, else `", "`, or
    /// `","` when the colon has no space after it).
    pub comma: String,
}

/// A parsed document: its text, its tree and its style.
#[derive(Debug)]
pub struct Document<'a> {
    text: &'a str,
    root: Node,
    style: Style,
}

/// Why a text is not JSON, and where.
#[derive(Debug, PartialEq)]
pub struct ParseError {
    line: usize,
    column: usize,
    message: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(
            f,
            "{} at line {} column {}",
            self.message, self.line, self.column
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses `text`, a JSON document (whitespace around the value allowed).
pub fn parse(text: &str) -> Result<Document<'_>, ParseError> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        depth: 0,
        indent: None,
        colon: None,
        comma: None,
    };
    parser.skip_ws();
    let root = parser.value()?;
    parser.skip_ws();
    if parser.pos != text.len() {
        return Err(parser.error("trailing characters"));
    }
    let newline = match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    };
    let colon = parser.colon.unwrap_or_else(|| ": ".to_string());
    let style = Style {
        newline,
        indent: parser.indent.unwrap_or_else(|| "  ".to_string()),
        // Spaced like the colon when no inline comma shows how.
        comma: parser
            .comma
            .unwrap_or_else(|| if colon.ends_with(' ') { ", " } else { "," }.to_string()),
        colon,
    };
    Ok(Document { text, root, style })
}

impl<'a> Document<'a> {
    /// The top-level value.
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// No changes yet.
    pub fn edits(&self) -> Edits<'_> {
        Edits {
            doc: self,
            changes: Vec::new(),
        }
    }

    /// The indentation of the line `pos` is on.
    fn line_indent(&self, pos: usize) -> &'a str {
        let start = self.text[..pos].rfind('\n').map_or(0, |i| i + 1);
        let line = &self.text[start..];
        &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
    }

    /// The indentation in front of `pos` when it starts its line.
    fn own_line_indent(&self, pos: usize) -> Option<&'a str> {
        let start = self.text[..pos].rfind('\n').map_or(0, |i| i + 1);
        let before = &self.text[start..pos];
        before
            .bytes()
            .all(|b| b == b' ' || b == b'\t')
            .then_some(before)
    }
}

/// Changes to a [`Document`], kept as byte ranges and their new text.
#[derive(Debug)]
pub struct Edits<'d> {
    doc: &'d Document<'d>,
    changes: Vec<(Range<usize>, String)>,
}

/// Two edits touched the same bytes (a bug in the caller, reported rather
/// than written).
#[derive(Debug, PartialEq)]
pub struct Overlap;

impl fmt::Display for Overlap {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("internal error: overlapping edits; nothing written")
    }
}

impl std::error::Error for Overlap {}

impl Edits<'_> {
    /// Whether nothing changes.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }

    /// Replaces `node` with `value`, written on one line.
    pub fn replace(&mut self, node: &Node, value: &Value) {
        let mut text = String::new();
        self.write(&mut text, value, None);
        self.changes.push((node.span.clone(), text));
    }

    /// Appends `members` to the object `object`.
    pub fn append_members(&mut self, object: &Node, members: &[(String, Value)]) {
        let Some(existing) = object.members() else {
            return;
        };
        let spans: Vec<_> = existing.iter().map(|m| m.start..m.value.span.end).collect();
        let new: Vec<_> = members.iter().map(|(k, v)| (Some(k.as_str()), v)).collect();
        self.splice(object, &spans, &[], &new);
    }

    /// Keeps the items of the array `array` where `keep` is true (all past
    /// its end), removing the others with their separators, and appends
    /// `append`.
    pub fn rewrite_items(&mut self, array: &Node, keep: &[bool], append: &[Value]) {
        let Some(items) = array.items() else {
            return;
        };
        let spans: Vec<_> = items.iter().map(|n| n.span.clone()).collect();
        let new: Vec<_> = append.iter().map(|v| (None, v)).collect();
        self.splice(array, &spans, keep, &new);
    }

    /// The document with the edits made.
    pub fn apply(mut self) -> Result<String, Overlap> {
        self.changes
            .sort_by_key(|(range, _)| (range.start, range.end));
        let text = self.doc.text;
        let mut out = String::with_capacity(text.len() + 1024);
        let mut at = 0;
        for (range, new) in &self.changes {
            let kept = text.get(at..range.start).ok_or(Overlap)?;
            out.push_str(kept);
            out.push_str(new);
            at = range.end.max(at);
        }
        out.push_str(text.get(at..).ok_or(Overlap)?);
        Ok(out)
    }

    /// The edits of one container (whose entries span `entries`): entry `i`
    /// removed unless `keep[i]` (missing: kept), `new` appended.
    fn splice(
        &mut self,
        container: &Node,
        entries: &[Range<usize>],
        keep: &[bool],
        new: &[(Option<&str>, &Value)],
    ) {
        let doc = self.doc;
        let style = &doc.style;
        let (open, close) = (container.span.start, container.span.end - 1);
        let spans_lines = doc.text[open..close].contains('\n');
        let kept = |i: usize| keep.get(i).copied().unwrap_or(true);
        let Some(last) = (0..entries.len()).rev().find(|&i| kept(i)) else {
            // Empty, or emptied: the inside is written anew.
            if entries.is_empty() && new.is_empty() {
                return;
            }
            let mut inner = String::new();
            let root = &doc.root.span;
            let on_lines =
                spans_lines || container.span == *root || doc.text[root.clone()].contains('\n');
            if on_lines && !new.is_empty() {
                let outer = doc.line_indent(open);
                let indent = format!("{outer}{}", style.indent);
                for (i, entry) in new.iter().enumerate() {
                    inner.push_str(if i == 0 { "" } else { "," });
                    inner.push_str(style.newline);
                    inner.push_str(&indent);
                    self.write_entry(&mut inner, entry, Some(&indent));
                }
                inner.push_str(style.newline);
                inner.push_str(outer);
            } else {
                for (i, entry) in new.iter().enumerate() {
                    inner.push_str(if i == 0 { "" } else { &style.comma });
                    self.write_entry(&mut inner, entry, None);
                }
            }
            self.changes.push((open + 1..close, inner));
            return;
        };
        for i in (0..last).filter(|&i| !kept(i)) {
            // The entry, its comma and the space up to the next one, which
            // takes its place.
            self.changes
                .push((entries[i].start..entries[i + 1].start, String::new()));
        }
        // The entries after the last kept one go with the comma before them;
        // new ones take their place.
        let tail = entries[last].end..entries[entries.len() - 1].end;
        let mut added = String::new();
        if spans_lines {
            let indent = doc.own_line_indent(entries[last].start).map_or_else(
                || format!("{}{}", doc.line_indent(open), style.indent),
                str::to_string,
            );
            for entry in new {
                added.push(',');
                added.push_str(style.newline);
                added.push_str(&indent);
                self.write_entry(&mut added, entry, Some(&indent));
            }
        } else {
            for entry in new {
                added.push_str(&style.comma);
                self.write_entry(&mut added, entry, None);
            }
        }
        if !tail.is_empty() || !added.is_empty() {
            self.changes.push((tail, added));
        }
    }

    /// Writes `key: value` (or just the value), on lines indented from
    /// `indent` or, without one, on one line.
    fn write_entry(
        &self,
        out: &mut String,
        (key, value): &(Option<&str>, &Value),
        indent: Option<&str>,
    ) {
        if let Some(key) = key {
            write_string(out, key);
            out.push_str(&self.doc.style.colon);
        }
        self.write(out, value, indent);
    }

    /// Writes `value`, its entries on lines indented one more level than
    /// `indent` or, without one, on one line.
    fn write(&self, out: &mut String, value: &Value, indent: Option<&str>) {
        let style = &self.doc.style;
        let (open, close, entries): (_, _, Vec<(Option<&str>, &Value)>) = match value {
            Value::String(text) => return write_string(out, text),
            Value::Number(n) => return out.push_str(&n.to_string()),
            Value::Array(items) => ('[', ']', items.iter().map(|v| (None, v)).collect()),
            Value::Object(members) => (
                '{',
                '}',
                members.iter().map(|(k, v)| (Some(k.as_str()), v)).collect(),
            ),
        };
        out.push(open);
        if !entries.is_empty() {
            match indent {
                Some(indent) => {
                    let inner = format!("{indent}{}", style.indent);
                    for (i, entry) in entries.iter().enumerate() {
                        out.push_str(if i == 0 { "" } else { "," });
                        out.push_str(style.newline);
                        out.push_str(&inner);
                        self.write_entry(out, entry, Some(&inner));
                    }
                    out.push_str(style.newline);
                    out.push_str(indent);
                }
                None => {
                    for (i, entry) in entries.iter().enumerate() {
                        out.push_str(if i == 0 { "" } else { &style.comma });
                        self.write_entry(out, entry, None);
                    }
                }
            }
        }
        out.push(close);
    }
}

/// Writes `text` as a JSON string (the escapes the scan's JSON uses).
fn write_string(out: &mut String, text: &str) {
    out.push_str(&promptinclude::render::json::json_string(text));
}

/// A recursive-descent reader of strict JSON that keeps spans.
struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    depth: usize,
    /// The indentation unit, once a nested entry on its own line shows it.
    indent: Option<String>,
    /// The first member's `:` with the space around it.
    colon: Option<String>,
    /// The first `,` followed by something on the same line, with its space.
    comma: Option<String>,
}

impl Parser<'_> {
    fn error(&self, message: &'static str) -> ParseError {
        let before = &self.bytes[..self.pos.min(self.bytes.len())];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        ParseError {
            line: before.iter().filter(|&&b| b == b'\n').count() + 1,
            column: self.pos - line_start + 1,
            message,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Result<Node, ParseError> {
        let start = self.pos;
        let kind = match self.peek() {
            Some(b'{') => self.container(true)?,
            Some(b'[') => self.container(false)?,
            Some(b'"') => Kind::String(self.string()?),
            Some(b't') => self.word("true")?,
            Some(b'f') => self.word("false")?,
            Some(b'n') => self.word("null")?,
            Some(b'-' | b'0'..=b'9') => self.number()?,
            Some(_) => return Err(self.error("expected a value")),
            None => return Err(self.error("unexpected end of the document")),
        };
        Ok(Node {
            span: start..self.pos,
            kind,
        })
    }

    fn word(&mut self, word: &'static str) -> Result<Kind, ParseError> {
        if !self.text[self.pos..].starts_with(word) {
            return Err(self.error("expected a value"));
        }
        self.pos += word.len();
        Ok(Kind::Other)
    }

    fn digits(&mut self) -> Result<(), ParseError> {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err(self.error("expected a digit"));
        }
        Ok(())
    }

    fn number(&mut self) -> Result<Kind, ParseError> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        if self.peek() == Some(b'0') {
            self.pos += 1;
        } else {
            self.digits()?;
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits()?;
        }
        Ok(Kind::Other)
    }

    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        let mut run = self.pos;
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    out.push_str(&self.text[run..self.pos]);
                    self.pos += 1;
                    out.push(self.escape()?);
                    run = self.pos;
                }
                Some(0..=0x1f) => return Err(self.error("control character in a string")),
                Some(_) => self.pos += 1,
            }
        }
    }

    /// The character of an escape, after its backslash.
    fn escape(&mut self) -> Result<char, ParseError> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let high = self.hex4()?;
                let code = match high {
                    0xD800..=0xDBFF => {
                        if !self.text[self.pos..].starts_with("\\u") {
                            return Err(self.error("lone surrogate in a \\u escape"));
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.error("lone surrogate in a \\u escape"));
                        }
                        0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                    }
                    0xDC00..=0xDFFF => return Err(self.error("lone surrogate in a \\u escape")),
                    code => code,
                };
                return char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"));
            }
            _ => return Err(self.error("invalid escape")),
        };
        self.pos += 1;
        Ok(c)
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("invalid \\u escape"))?;
        let code = u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid \\u escape"))?;
        self.pos += 4;
        Ok(code)
    }

    /// An object (`{`) or array (`[`), at its opening bracket.
    fn container(&mut self, object: bool) -> Result<Kind, ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        let open = self.pos;
        let close = if object { b'}' } else { b']' };
        self.pos += 1;
        self.skip_ws();
        let mut members = Vec::new();
        let mut items = Vec::new();
        if self.peek() == Some(close) {
            self.pos += 1;
        } else {
            self.learn_indent(open);
            loop {
                if object {
                    members.push(self.member()?);
                } else {
                    items.push(self.value()?);
                }
                self.skip_ws();
                match self.peek() {
                    Some(b',') => {
                        let comma = self.pos;
                        self.pos += 1;
                        self.skip_ws();
                        let gap = &self.text[comma..self.pos];
                        if self.comma.is_none() && !gap.contains('\n') {
                            self.comma = Some(gap.to_string());
                        }
                    }
                    Some(b) if b == close => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.error("expected `,` or a closing bracket")),
                }
            }
        }
        self.depth -= 1;
        Ok(if object {
            Kind::Object(members)
        } else {
            Kind::Array(items)
        })
    }

    /// A member, at its key.
    fn member(&mut self) -> Result<Member, ParseError> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a key"));
        }
        let key = self.string()?;
        let key_end = self.pos;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("expected `:`"));
        }
        self.pos += 1;
        self.skip_ws();
        let colon = &self.text[key_end..self.pos];
        if self.colon.is_none() && !colon.contains('\n') {
            self.colon = Some(colon.to_string());
        }
        let value = self.value()?;
        Ok(Member { key, start, value })
    }

    /// Learns the indentation unit from the first entry of the container
    /// opened at `open` (the parser is at that entry), if it starts a line
    /// indented deeper than the container's.
    fn learn_indent(&mut self, open: usize) {
        if self.indent.is_some() {
            return;
        }
        let gap = &self.text[open + 1..self.pos];
        let Some(newline) = gap.rfind('\n') else {
            return;
        };
        let entry = &gap[newline + 1..];
        let line_start = self.text[..open].rfind('\n').map_or(0, |i| i + 1);
        let line = &self.text[line_start..];
        let outer = &line[..line.len() - line.trim_start_matches([' ', '\t']).len()];
        if let Some(unit) = entry.strip_prefix(outer) {
            if !unit.is_empty() && unit.bytes().all(|b| b == b' ' || b == b'\t') {
                self.indent = Some(unit.to_string());
            }
        }
    }
}

/// The value `serde_json` reads, objects in document order: what the
/// agent sees, to compare edited documents with in tests.
#[cfg(test)]
pub mod ordered {
    use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

    /// A JSON value; objects are key-value pairs in document order.
    #[derive(Clone, Debug, PartialEq)]
    pub enum Json {
        /// `null`.
        Null,
        /// `true` or `false`.
        Bool(bool),
        /// A number.
        Number(serde_json::Number),
        /// A string.
        String(String),
        /// An array.
        Array(Vec<Json>),
        /// An object, in document order (a repeated key keeps its last value,
        /// at its first position, as JavaScript's `JSON.parse` does).
        Object(Vec<(String, Json)>),
    }

    impl Json {
        /// The pairs of an object.
        pub fn as_object_mut(&mut self) -> Option<&mut Vec<(String, Json)>> {
            match self {
                Json::Object(pairs) => Some(pairs),
                _ => None,
            }
        }

        /// The items of an array.
        pub fn as_array(&self) -> Option<&Vec<Json>> {
            match self {
                Json::Array(items) => Some(items),
                _ => None,
            }
        }

        /// The items of an array, to change.
        pub fn as_array_mut(&mut self) -> Option<&mut Vec<Json>> {
            match self {
                Json::Array(items) => Some(items),
                _ => None,
            }
        }

        /// The text of a string.
        pub fn as_str(&self) -> Option<&str> {
            match self {
                Json::String(text) => Some(text),
                _ => None,
            }
        }

        /// The value at `key` of an object.
        pub fn get(&self, key: &str) -> Option<&Json> {
            match self {
                Json::Object(pairs) => pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v),
                _ => None,
            }
        }

        /// The value at `key` of an object, to change.
        pub fn get_mut(&mut self, key: &str) -> Option<&mut Json> {
            self.as_object_mut()?
                .iter_mut()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
        }

        /// Sets `key` of an object (in place if present, else at the end);
        /// no-op on anything else.
        pub fn set(&mut self, key: &str, value: Json) {
            if let Some(pairs) = self.as_object_mut() {
                match pairs.iter_mut().find(|(k, _)| k == key) {
                    Some((_, old)) => *old = value,
                    None => pairs.push((key.to_string(), value)),
                }
            }
        }
    }

    impl Serialize for Json {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            match self {
                Json::Null => s.serialize_unit(),
                Json::Bool(b) => s.serialize_bool(*b),
                Json::Number(n) => n.serialize(s),
                Json::String(text) => s.serialize_str(text),
                Json::Array(items) => {
                    let mut seq = s.serialize_seq(Some(items.len()))?;
                    for item in items {
                        seq.serialize_element(item)?;
                    }
                    seq.end()
                }
                Json::Object(pairs) => {
                    let mut map = s.serialize_map(Some(pairs.len()))?;
                    for (k, v) in pairs {
                        map.serialize_entry(k, v)?;
                    }
                    map.end()
                }
            }
        }
    }

    impl<'de> Deserialize<'de> for Json {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Json, D::Error> {
            d.deserialize_any(JsonVisitor)
        }
    }

    struct JsonVisitor;

    impl<'de> Visitor<'de> for JsonVisitor {
        type Value = Json;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("any JSON value")
        }
        fn visit_unit<E>(self) -> Result<Json, E> {
            Ok(Json::Null)
        }
        fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
            Ok(Json::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
            Ok(Json::Number(n.into()))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Json, E> {
            Ok(Json::Number(n.into()))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Json, E> {
            Ok(serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number))
        }
        fn visit_str<E>(self, text: &str) -> Result<Json, E> {
            Ok(Json::String(text.to_string()))
        }
        fn visit_string<E>(self, text: String) -> Result<Json, E> {
            Ok(Json::String(text))
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
            let mut items = Vec::new();
            while let Some(item) = seq.next_element()? {
                items.push(item);
            }
            Ok(Json::Array(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
            let mut object = Json::Object(Vec::new());
            while let Some((key, value)) = map.next_entry::<String, Json>()? {
                object.set(&key, value);
            }
            Ok(object)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ordered::Json;
    use super::*;

    #[test]
    fn round_trips_in_document_order() {
        let text = r#"{"b":1,"a":{"y":[1,-2,3.5,"s",null,true],"x":{}},"c":[]}"#;
        let doc: Json = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&doc).unwrap(), text);
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value_at_its_first_place() {
        let doc: Json = serde_json::from_str(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        assert_eq!(serde_json::to_string(&doc).unwrap(), r#"{"a":3,"b":2}"#);
        let doc = parse(r#"{"a":1,"b":2,"a":"last"}"#).unwrap();
        assert_eq!(doc.root().get("a").and_then(Node::as_str), Some("last"));
    }

    #[test]
    fn spans_and_decoded_strings() {
        let text = " {\"k\\u00e9\": [1.5e3, \"a\\/b\\ud83d\\ude00\", {}], \"n\": null}\n";
        let doc = parse(text).unwrap();
        let root = doc.root();
        assert_eq!(&text[root.span.clone()], text.trim());
        let members = root.members().unwrap();
        assert_eq!(members[0].key, "ké");
        let items = members[0].value.items().unwrap();
        assert_eq!(&text[items[0].span.clone()], "1.5e3");
        assert_eq!(items[1].as_str(), Some("a/b😀"));
        assert_eq!(&text[items[2].span.clone()], "{}");
        assert_eq!(
            &text[members[1].start..members[1].value.span.end],
            "\"n\": null"
        );
    }

    #[test]
    fn refuses_what_is_not_strict_json() {
        for text in [
            "",
            "{",
            "{\"a\" 1}",
            "{\"a\": 1,}",
            "[1 2]",
            "01",
            "1.",
            "-",
            "1e",
            "'a'",
            "\"\\x\"",
            "\"\\ud800\"",
            "\"\\udc00x\"",
            "\"a\nb\"",
            "{} x",
            "nul",
            "[1]]",
            "{\"a\": 1 // c\n}",
            "\u{feff}{}",
        ] {
            assert!(parse(text).is_err(), "{text:?}");
            assert!(
                serde_json::from_str::<serde_json::Value>(text).is_err(),
                "{text:?}"
            );
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(parse(&deep).is_err());
        assert_eq!(
            parse("{\n  \"a\": tru\n}").unwrap_err().to_string(),
            "expected a value at line 2 column 8"
        );
    }

    #[test]
    fn learns_the_style() {
        let style = |text| parse(text).unwrap().style;
        let s = style("{\r\n\t\"a\": [\r\n\t\t1,\r\n\t\t2\r\n\t]\r\n}\r\n");
        assert_eq!((s.newline, s.indent.as_str()), ("\r\n", "\t"));
        let s = style("[\n    {\"a\":1,\"b\": 2}\n]");
        assert_eq!(
            (
                s.newline,
                s.indent.as_str(),
                s.colon.as_str(),
                s.comma.as_str()
            ),
            ("\n", "    ", ":", ",")
        );
        // The root's entries at the margin: a nested container shows the unit.
        let s = style("{\n\"a\": {\n   \"b\": 1\n}\n}");
        assert_eq!(s.indent, "   ");
        assert_eq!(style("{\"a\" : 1, \"b\": 2}").colon, " : ");
        let s = style("{}");
        assert_eq!(
            (
                s.newline,
                s.indent.as_str(),
                s.colon.as_str(),
                s.comma.as_str()
            ),
            ("\n", "  ", ": ", ", ")
        );
    }

    fn edited(text: &str, edit: impl FnOnce(&Document, &mut Edits)) -> String {
        let doc = parse(text).unwrap();
        let mut edits = doc.edits();
        edit(&doc, &mut edits);
        edits.apply().unwrap()
    }

    fn obj(members: &[(&str, Value)]) -> Value {
        Value::Object(
            members
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn appends_follow_the_container() {
        let new = [(
            "h".to_string(),
            obj(&[("x", Value::Array(vec![Value::Number(1)]))]),
        )];
        let append = |text: &str| edited(text, |doc, e| e.append_members(doc.root(), &new));
        assert_eq!(
            append("{\n    \"a\": 1\n}\n"),
            "{\n    \"a\": 1,\n    \"h\": {\n        \"x\": [\n            1\n        ]\n    }\n}\n"
        );
        assert_eq!(
            append("{\r\n\t\"a\": 1\r\n}"),
            "{\r\n\t\"a\": 1,\r\n\t\"h\": {\r\n\t\t\"x\": [\r\n\t\t\t1\r\n\t\t]\r\n\t}\r\n}"
        );
        assert_eq!(append("{\"a\":1}"), "{\"a\":1,\"h\":{\"x\":[1]}}");
        assert_eq!(append("{\"a\": 1}"), "{\"a\": 1, \"h\": {\"x\": [1]}}");
        assert_eq!(
            append("{\"a\":1,\"b\":2}"),
            "{\"a\":1,\"b\":2,\"h\":{\"x\":[1]}}"
        );
        assert_eq!(
            append("{}"),
            "{\n  \"h\": {\n    \"x\": [\n      1\n    ]\n  }\n}"
        );
        assert_eq!(
            append(" { }\n"),
            " {\n   \"h\": {\n     \"x\": [\n       1\n     ]\n   }\n }\n"
        );
    }

    #[test]
    fn an_empty_nested_container_opens_like_the_document() {
        let text = "{\n  \"a\": [],\n  \"b\": []\n}";
        let out = edited(text, |doc, e| {
            let a = doc.root().get("a").unwrap();
            e.rewrite_items(a, &[], &[Value::Number(1), Value::Number(2)]);
        });
        assert_eq!(out, "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": []\n}");
        let out = edited("{\"a\": [], \"b\": 1}", |doc, e| {
            e.rewrite_items(doc.root().get("a").unwrap(), &[], &[Value::Number(1)]);
        });
        assert_eq!(out, "{\"a\": [1], \"b\": 1}");
    }

    #[test]
    fn removes_items_with_their_separators() {
        let run = |text: &str, keep: &[bool], append: &[Value]| {
            edited(text, |doc, e| e.rewrite_items(doc.root(), keep, append))
        };
        let lines = "[\n  1,\n  2,\n  3\n]";
        assert_eq!(run(lines, &[false, true, true], &[]), "[\n  2,\n  3\n]");
        assert_eq!(run(lines, &[true, false, true], &[]), "[\n  1,\n  3\n]");
        assert_eq!(run(lines, &[true, true, false], &[]), "[\n  1,\n  2\n]");
        assert_eq!(run(lines, &[false, true, false], &[]), "[\n  2\n]");
        assert_eq!(run(lines, &[false, false, false], &[]), "[]");
        assert_eq!(
            run(lines, &[true, false, false], &[Value::Number(9)]),
            "[\n  1,\n  9\n]"
        );
        assert_eq!(
            run(lines, &[false, false, false], &[Value::Number(9)]),
            "[\n  9\n]"
        );
        assert_eq!(run("[1, 2 ,3]", &[true, false], &[]), "[1, 3]");
        assert_eq!(run("[1, 2 ,3]", &[true, true, false], &[]), "[1, 2]");
        assert_eq!(run("[1,2]", &[true], &[Value::Number(3)]), "[1,2,3]");
    }

    #[test]
    fn replaces_a_value_and_escapes_new_strings() {
        let out = edited("{\"c\": \"old\", \"d\": \"\\u00e9\"}", |doc, e| {
            let c = doc.root().get("c").unwrap();
            e.replace(c, &Value::String("a \"q\" \\ é\n".to_string()));
        });
        assert_eq!(
            out,
            "{\"c\": \"a \\\"q\\\" \\\\ é\\n\", \"d\": \"\\u00e9\"}"
        );
    }

    #[test]
    fn overlapping_edits_are_an_error_not_a_garbled_file() {
        let doc = parse("[1, 2]").unwrap();
        let mut edits = doc.edits();
        edits.rewrite_items(doc.root(), &[false, false], &[]);
        edits.replace(&doc.root().items().unwrap()[0], &Value::Number(3));
        assert_eq!(edits.apply(), Err(Overlap));
    }
}
