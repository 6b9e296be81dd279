//! YAML as PyYAML's `safe_load` reads it (the host loads
//! `default_config.yaml` and `.yaml` configurations with it).
//!
//! `yaml-rust2` parses the syntax into events; the *values* are resolved
//! here by hand, because PyYAML follows YAML 1.1 and no Rust crate does:
//! `yes`/`no`/`on`/`off` are booleans, `010` is octal, `0o17` is a string,
//! `1_000` is 1000, `5:00` is 300 (base 60), `1e2` (no dot) is a string,
//! `.inf`/`.nan` are floats, dates are timestamps. The resolver patterns
//! and constructors below are PyYAML 6's (`resolver.py`, `constructor.py`).

use std::collections::HashMap;
use std::sync::OnceLock;

use regex::Regex;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser, Tag};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use crate::document::{shorten, Entry, SyntaxError};
use crate::json::MAX_INT_DIGITS;
use crate::number::Number;
use crate::value::Value;

/// Parses a YAML document whose top level must be a mapping (or empty,
/// which PyYAML loads as `None` and the host treats as `{}`).
pub fn parse_mapping(text: &str) -> Result<Vec<Entry>, SyntaxError> {
    let builder = match build(text) {
        // PyYAML turns `"\udcff"` into a lone surrogate; yaml-rust2 refuses
        // it. Retry with such escapes spelled as their stand-ins.
        Err(e) if e.message.contains("invalid Unicode character escape") => {
            build(&surrogate_escapes_as_stand_ins(text)).map_err(|_| e)?
        }
        other => other?,
    };
    let mut documents = builder.documents;
    if documents.len() > 1 {
        return Err(SyntaxError {
            key: None,
            line: Some(documents[1].line),
            message: "malformed YAML: expected a single document in the stream".to_string(),
        });
    }
    let Some(root) = documents.pop() else {
        return Ok(Vec::new());
    };
    match root.kind {
        NodeKind::Map(pairs, _) => {
            let mut entries = Vec::new();
            let pairs = flatten(pairs)?;
            for (i, (key, value)) in pairs.iter().enumerate() {
                let line = key.line;
                let written = written_between(text, key, pairs.get(i + 1).map(|(k, _)| k));
                let key = construct(key)?;
                let value = construct(value).map_err(|mut e| {
                    if let Value::Str(name) = &key {
                        e.message = format!("`{}`: {}", shorten(&written), e.message);
                        e.key = Some(name.clone());
                    }
                    e
                })?;
                match key {
                    Value::Str(key) => entries.push(Entry {
                        key,
                        written,
                        value,
                        line,
                    }),
                    // A key that is not a string is never one of ours.
                    Value::List(_) | Value::Map(_) => {
                        return Err(SyntaxError {
                            key: None,
                            line: Some(line),
                            message: "malformed YAML: found unhashable key".to_string(),
                        })
                    }
                    _ => {}
                }
            }
            Ok(entries)
        }
        NodeKind::Scalar { .. } if matches!(construct(&root)?, Value::Null) => Ok(Vec::new()),
        _ => Err(SyntaxError {
            key: None,
            line: Some(root.line),
            message: "expected a mapping at the top level".to_string(),
        }),
    }
}

/// The value of the entry whose key is `key` as written: the source after
/// the key and its `:`, up to where the `next` key starts (or the end).
fn written_between(text: &str, key: &Node, next: Option<&Node>) -> String {
    let offset = |line: usize, col: usize| -> usize {
        let start: usize = text
            .split_inclusive('\n')
            .take(line.saturating_sub(1))
            .map(str::len)
            .sum();
        let rest = &text[start.min(text.len())..];
        start + rest.char_indices().nth(col).map_or(rest.len(), |(i, _)| i)
    };
    let from = offset(key.line, key.col);
    let to = next.map_or(text.len(), |n| offset(n.line, n.col)).max(from);
    let entry = &text[from..to];
    // Past the key: a quoted key up to its closing quote, then the `:`.
    let after_key = match entry.chars().next() {
        Some(q @ ('"' | '\'')) => entry[1..].find(q).map_or(entry.len(), |i| i + 2),
        _ => 0,
    };
    let rest = &entry[after_key.min(entry.len())..];
    let value = rest.find(':').map_or(rest, |i| &rest[i + 1..]);
    value.trim().to_string()
}

/// Parses `text` into documents.
fn build(text: &str) -> Result<Builder, SyntaxError> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    parser.load(&mut builder, true).map_err(|e| SyntaxError {
        key: None,
        line: Some(e.marker().line()),
        message: format!("malformed YAML: {}", e.info()),
    })?;
    match builder.error.take() {
        Some(err) => Err(err),
        None => Ok(builder),
    }
}

/// Rewrites each `\uXXXX` escape of a surrogate (D800–DFFF) inside a
/// double-quoted scalar as the `\U` escape of its stand-in (see
/// [`crate::value::lone_surrogate_stand_in`]); single-quoted and plain
/// scalars and comments, where `\u` is just text, are left alone.
fn surrogate_escapes_as_stand_ins(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((before, quoted, after)) = next_double_quoted(rest) {
        out.push_str(before);
        out.push_str(&rewrite_surrogate_escapes(quoted));
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Splits `text` at its first double-quoted scalar: what comes before, the
/// scalar (quotes included), what comes after. A `"` starts a scalar only
/// where a scalar may start (at the start, or after white space, `:`, `,`,
/// `[`, `{`, `-` or `?`), outside comments and single-quoted scalars.
fn next_double_quoted(text: &str) -> Option<(&str, &str, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut in_single = false;
    while i < bytes.len() {
        let b = bytes[i];
        let starts_token = i == 0
            || matches!(
                bytes[i - 1],
                b' ' | b'\t' | b'\n' | b':' | b',' | b'[' | b'{' | b'-' | b'?'
            );
        if in_single {
            if b == b'\'' {
                if bytes.get(i + 1) == Some(&b'\'') {
                    i += 1;
                } else {
                    in_single = false;
                }
            }
        } else if b == b'#' && starts_token {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else if b == b'\'' && starts_token {
            in_single = true;
        } else if b == b'"' && starts_token {
            let mut j = i + 1;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(bytes.len());
            return Some((&text[..i], &text[i..end], &text[end..]));
        }
        i += 1;
    }
    None
}

/// The surrogate escapes of one double-quoted scalar, rewritten (escaped
/// backslashes left alone).
fn rewrite_surrogate_escapes(text: &str) -> String {
    static ESCAPE: OnceLock<Regex> = OnceLock::new();
    let re = ESCAPE.get_or_init(|| {
        Regex::new(r"(\\+)u([dD][89a-fA-F][0-9a-fA-F]{2})").expect("static pattern")
    });
    re.replace_all(text, |c: &regex::Captures| {
        let slashes = &c[1];
        if slashes.len().is_multiple_of(2) {
            return c[0].to_string();
        }
        let code = u32::from_str_radix(&c[2], 16).unwrap_or(0xD800);
        let stand_in = crate::value::lone_surrogate_stand_in(code) as u32;
        format!("{}U{stand_in:08X}", &slashes[..slashes.len()])
    })
    .into_owned()
}

/// A parsed node (aliases already replaced by what they refer to).
#[derive(Clone, Debug)]
struct Node {
    kind: NodeKind,
    line: usize,
    /// 0-based column (in characters) where the node starts.
    col: usize,
}

#[derive(Clone, Debug)]
enum NodeKind {
    Scalar {
        text: String,
        plain: bool,
        tag: Option<String>,
    },
    Seq(Vec<Node>, Option<String>),
    Map(Vec<(Node, Node)>, Option<String>),
}

/// Collects events into nodes.
#[derive(Default)]
struct Builder {
    documents: Vec<Node>,
    /// Open collections: the node being built, its anchor, and a pending key.
    stack: Vec<(Node, usize, Option<Node>)>,
    anchors: HashMap<usize, Node>,
    error: Option<SyntaxError>,
}

fn tag_name(tag: Option<Tag>) -> Option<String> {
    tag.map(|t| format!("{}{}", t.handle, t.suffix))
}

impl Builder {
    fn finish(&mut self, node: Node, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        let Some((parent, _, pending)) = self.stack.last_mut() else {
            self.documents.push(node);
            return;
        };
        match &mut parent.kind {
            NodeKind::Seq(items, _) => items.push(node),
            NodeKind::Map(pairs, _) => match pending.take() {
                Some(key) => pairs.push((key, node)),
                None => *pending = Some(node),
            },
            NodeKind::Scalar { .. } => {}
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let (line, col) = (mark.line(), mark.col());
        match event {
            Event::Scalar(text, style, anchor, tag) => {
                let node = Node {
                    kind: NodeKind::Scalar {
                        text,
                        plain: style == TScalarStyle::Plain,
                        tag: tag_name(tag),
                    },
                    line,
                    col,
                };
                self.finish(node, anchor);
            }
            Event::SequenceStart(anchor, tag) => self.stack.push((
                Node {
                    kind: NodeKind::Seq(Vec::new(), tag_name(tag)),
                    line,
                    col,
                },
                anchor,
                None,
            )),
            Event::MappingStart(anchor, tag) => self.stack.push((
                Node {
                    kind: NodeKind::Map(Vec::new(), tag_name(tag)),
                    line,
                    col,
                },
                anchor,
                None,
            )),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((node, anchor, _)) = self.stack.pop() {
                    self.finish(node, anchor);
                }
            }
            Event::Alias(id) => match self.anchors.get(&id).cloned() {
                Some(node) => self.finish(node, 0),
                None => {
                    self.error.get_or_insert(SyntaxError {
                        key: None,
                        line: Some(line),
                        message: "malformed YAML: found undefined alias".to_string(),
                    });
                }
            },
            _ => {}
        }
    }
}

const TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// PyYAML's `flatten_mapping`: `<<` merge keys take the entries of the
/// mapping (or mappings) they name; the node's own entries come after, and
/// so win.
fn flatten(pairs: Vec<(Node, Node)>) -> Result<Vec<(Node, Node)>, SyntaxError> {
    let mut merged = Vec::new();
    let mut own = Vec::new();
    for (key, value) in pairs {
        let is_merge = matches!(&key.kind, NodeKind::Scalar { text, plain: true, tag: None } if text == "<<")
            || matches!(&key.kind, NodeKind::Scalar { tag: Some(t), .. } if t == "tag:yaml.org,2002:merge");
        if !is_merge {
            own.push((key, value));
            continue;
        }
        let line = value.line;
        match value.kind {
            NodeKind::Map(inner, _) => merged.extend(flatten(inner)?),
            NodeKind::Seq(items, _) => {
                let mut parts = Vec::new();
                for item in items {
                    match item.kind {
                        NodeKind::Map(inner, _) => parts.push(flatten(inner)?),
                        _ => return Err(merge_error(item.line)),
                    }
                }
                // Later mappings in the list lose to earlier ones.
                for part in parts.into_iter().rev() {
                    merged.extend(part);
                }
            }
            _ => return Err(merge_error(line)),
        }
    }
    merged.extend(own);
    Ok(merged)
}

fn merge_error(line: usize) -> SyntaxError {
    SyntaxError {
        key: None,
        line: Some(line),
        message: "malformed YAML: expected a mapping or list of mappings for merging".to_string(),
    }
}

/// PyYAML's implicit resolvers for plain scalars, in its order.
struct Resolvers {
    bool_: Regex,
    float: Regex,
    int: Regex,
    null: Regex,
    timestamp: Regex,
}

fn resolvers() -> &'static Resolvers {
    static R: OnceLock<Resolvers> = OnceLock::new();
    R.get_or_init(|| {
        let re = |p: &str| Regex::new(p).expect("static pattern");
        Resolvers {
            bool_: re(r"^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$"),
            float: re(r"^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"),
            int: re(r"^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$"),
            null: re(r"^(?:~|null|Null|NULL|)$"),
            timestamp: re(r"^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$"),
        }
    })
}

/// The tag PyYAML resolves a plain, untagged scalar to.
fn implicit_tag(text: &str) -> &'static str {
    let r = resolvers();
    if r.bool_.is_match(text) {
        "bool"
    } else if r.float.is_match(text) {
        "float"
    } else if r.int.is_match(text) {
        "int"
    } else if text == "<<" {
        "merge"
    } else if r.null.is_match(text) {
        "null"
    } else if r.timestamp.is_match(text) {
        "timestamp"
    } else if text == "=" {
        "value"
    } else {
        "str"
    }
}

/// PyYAML's `SafeConstructor` for one node.
fn construct(node: &Node) -> Result<Value, SyntaxError> {
    let fail = |message: String| SyntaxError {
        key: None,
        line: Some(node.line),
        message: format!("malformed YAML: {message}"),
    };
    match &node.kind {
        NodeKind::Seq(items, tag) => {
            check_collection_tag(tag.as_deref(), "seq").map_err(fail)?;
            for item in items {
                construct(item)?;
            }
            Ok(Value::List(items.len()))
        }
        NodeKind::Map(pairs, tag) => {
            check_collection_tag(tag.as_deref(), "map").map_err(fail)?;
            let mut keys = Vec::new();
            for (key, value) in flatten(pairs.clone())? {
                let k = construct(&key)?;
                if matches!(k, Value::List(_) | Value::Map(_)) {
                    return Err(fail("found unhashable key".to_string()));
                }
                construct(&value)?;
                let k = k.to_string();
                if !keys.contains(&k) {
                    keys.push(k);
                }
            }
            Ok(Value::Map(keys.len()))
        }
        NodeKind::Scalar { text, plain, tag } => {
            let tag = match tag.as_deref() {
                // `!` and no tag on a quoted or block scalar: a string.
                Some("!") | Some("") => "str",
                Some(t) => match t.strip_prefix(TAG_PREFIX) {
                    Some(short) => short,
                    None => {
                        return Err(fail(format!(
                            "could not determine a constructor for the tag {t:?}"
                        )))
                    }
                },
                None if *plain => implicit_tag(text),
                None => "str",
            };
            match tag {
                "str" => Ok(Value::Str(text.clone())),
                "null" => Ok(Value::Null),
                "bool" => match text.to_lowercase().as_str() {
                    "yes" | "true" | "on" => Ok(Value::Number(Number::Bool(true))),
                    "no" | "false" | "off" => Ok(Value::Number(Number::Bool(false))),
                    _ => Err(fail(format!("not a boolean: {text:?}"))),
                },
                "int" => construct_int(text)
                    .map(Value::Number)
                    .ok_or_else(|| fail(format!("invalid literal for int(): {text:?}"))),
                "float" => construct_float(text)
                    .map(|f| Value::Number(Number::Float(f)))
                    .ok_or_else(|| fail(format!("could not convert string to float: {text:?}"))),
                "timestamp" => check_timestamp(text)
                    .map(Value::Other)
                    .ok_or_else(|| fail(format!("invalid timestamp: {text:?}"))),
                "binary" => check_base64(text)
                    .then_some(Value::Other("bytes"))
                    .ok_or_else(|| fail("failed to decode base64 data".to_string())),
                other => Err(fail(format!(
                    "could not determine a constructor for the tag 'tag:yaml.org,2002:{other}'"
                ))),
            }
        }
    }
}

/// Collections may carry their own standard tag (or `!`), nothing else.
fn check_collection_tag(tag: Option<&str>, kind: &str) -> Result<(), String> {
    match tag {
        None | Some("!") | Some("") => Ok(()),
        Some(t) if t.strip_prefix(TAG_PREFIX) == Some(kind) => Ok(()),
        Some(t)
            if kind == "map"
                && matches!(t.strip_prefix(TAG_PREFIX), Some("set" | "omap" | "pairs")) =>
        {
            Ok(())
        }
        Some(t) => Err(format!(
            "could not determine a constructor for the tag {t:?}"
        )),
    }
}

/// `construct_yaml_int`: underscores dropped, sign, `0b`, `0x`, leading-`0`
/// octal, `:` base 60, else decimal.
fn construct_int(text: &str) -> Option<Number> {
    let cleaned = text.replace('_', "");
    let (negative, body) = match cleaned.as_bytes().first()? {
        b'-' => (true, &cleaned[1..]),
        b'+' => (false, &cleaned[1..]),
        _ => (false, &cleaned[..]),
    };
    let digits_in = |s: &str, radix: u32| !s.is_empty() && s.chars().all(|c| c.is_digit(radix));
    if body == "0" {
        Some(Number::Int(0))
    } else if let Some(bin) = body.strip_prefix("0b") {
        digits_in(bin, 2).then(|| Number::from_digits(negative, bin, 2))
    } else if let Some(hex) = body.strip_prefix("0x") {
        digits_in(hex, 16).then(|| Number::from_digits(negative, hex, 16))
    } else if body.starts_with('0') {
        digits_in(body, 8).then(|| Number::from_digits(negative, body, 8))
    } else if body.contains(':') {
        let mut total: i128 = 0;
        for part in body.split(':') {
            if !digits_in(part, 10) || part.len() > 30 {
                return None;
            }
            total = total.checked_mul(60)?.checked_add(part.parse().ok()?)?;
        }
        Some(Number::Int(if negative { -total } else { total }))
    } else {
        (digits_in(body, 10) && body.len() <= MAX_INT_DIGITS)
            .then(|| Number::from_digits(negative, body, 10))
    }
}

/// `construct_yaml_float`: underscores dropped, lower-cased, `.inf`,
/// `.nan`, `:` base 60, else Python's `float()`.
fn construct_float(text: &str) -> Option<f64> {
    let cleaned = text.replace('_', "").to_lowercase();
    let (sign, body) = match cleaned.as_bytes().first()? {
        b'-' => (-1.0, &cleaned[1..]),
        b'+' => (1.0, &cleaned[1..]),
        _ => (1.0, &cleaned[..]),
    };
    if body == ".inf" {
        Some(sign * f64::INFINITY)
    } else if body == ".nan" {
        Some(f64::NAN)
    } else if body.contains(':') {
        let mut parts = Vec::new();
        for part in body.split(':') {
            parts.push(py_float(part)?);
        }
        let (mut value, mut base) = (0.0f64, 1.0f64);
        for digit in parts.into_iter().rev() {
            value += digit * base;
            base *= 60.0;
        }
        Some(sign * value)
    } else {
        Some(sign * py_float(body)?)
    }
}

/// Python's `float(text)` for the forms that reach it here.
fn py_float(text: &str) -> Option<f64> {
    let ok = !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'+' | b'-'))
        && text.bytes().any(|b| b.is_ascii_digit());
    if !ok {
        return match text {
            "inf" | "infinity" => Some(f64::INFINITY),
            "nan" => Some(f64::NAN),
            _ => None,
        };
    }
    text.parse().ok()
}

/// `construct_yaml_timestamp`'s checks (a real date, and time fields in
/// range); the type name of what it builds.
fn check_timestamp(text: &str) -> Option<&'static str> {
    let num = |s: &str| s.parse::<u32>().ok();
    let date_part = text.get(..10).filter(|_| text.len() == 10);
    let (y, m, d, rest) = match date_part {
        Some(date) => {
            let mut it = date.split('-');
            (num(it.next()?)?, num(it.next()?)?, num(it.next()?)?, None)
        }
        None => {
            let mut it = text.splitn(3, '-');
            let y = num(it.next()?)?;
            let m = num(it.next()?)?;
            let tail = it.next()?;
            let split = tail.find(|c: char| !c.is_ascii_digit())?;
            (
                y,
                m,
                num(&tail[..split])?,
                Some(tail[split..].trim_start_matches(['T', 't', ' ', '\t'])),
            )
        }
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if y == 0 || !(1..=12).contains(&m) || d == 0 || d > days[(m - 1) as usize] {
        return None;
    }
    let Some(time) = rest else {
        return Some("datetime.date");
    };
    let mut it = time.splitn(3, ':');
    let hour = num(it.next()?)?;
    let minute = num(it.next()?)?;
    let second = num(it.next()?.get(..2)?)?;
    (hour < 24 && minute < 60 && second < 60).then_some("datetime.datetime")
}

/// `base64.decodebytes` accepts ASCII whose alphabet characters, ignoring
/// everything else, are correctly padded.
fn check_base64(text: &str) -> bool {
    if !text.is_ascii() {
        return false;
    }
    let alphabet = text
        .bytes()
        .filter(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/'))
        .count();
    alphabet % 4 != 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(text: &str) -> Value {
        parse_mapping(&format!("k: {text}\n"))
            .unwrap()
            .pop()
            .unwrap()
            .value
    }

    fn num(v: &str) -> String {
        match value(v) {
            Value::Number(n) => format!(
                "{} {n}",
                if n.is_float() {
                    "float"
                } else if n.is_bool() {
                    "bool"
                } else {
                    "int"
                }
            ),
            other => format!("{} {other}", other.type_name()),
        }
    }

    #[test]
    fn yaml_1_1_scalars_like_pyyaml() {
        let cases = [
            ("1_000", "int 1000"),
            ("010", "int 8"),
            ("0o17", "str \"0o17\""),
            ("0x1F", "int 31"),
            ("0b101", "int 5"),
            ("5:00", "int 300"),
            ("-1:30", "int -90"),
            ("08", "str \"08\""),
            ("1e2", "str \"1e2\""),
            ("1.0e+2", "float 100.0"),
            ("1.0e2", "str \"1.0e2\""),
            ("1.", "float 1.0"),
            (".5", "float 0.5"),
            ("1:30.5", "float 90.5"),
            (".inf", "float inf"),
            ("-.Inf", "float -inf"),
            (".NaN", "float nan"),
            ("yes", "bool True"),
            ("Off", "bool False"),
            ("y", "str \"y\""),
            ("~", "NoneType None"),
            ("", "NoneType None"),
            ("'5'", "str \"5\""),
            ("!!int '7'", "int 7"),
            ("!!float 3", "float 3.0"),
            ("!!str 3", "str \"3\""),
            ("2024-01-01", "datetime.date value"),
            ("[1, 2]", "list of length 2"),
            ("{a: 1}", "dict of length 1"),
            ("-0", "int 0"),
            ("+12", "int 12"),
        ];
        for (text, want) in cases {
            assert_eq!(num(text), want, "{text:?}");
        }
    }

    #[test]
    fn errors_where_pyyaml_raises() {
        for bad in [
            "k: !!int abc\n",
            "k: !!bool y\n",
            "k: 2024-13-01\n",
            "k: !foo x\n",
            "a: 1\n---\nb: 2\n",
            "[1]\n",
            "k: *nope\n",
            "k: =\n",
        ] {
            assert!(parse_mapping(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn lone_surrogate_escapes_like_pyyaml() {
        let e = parse_mapping("k: \"a\\udcffb\"\nj: '\\udcff'\n").unwrap();
        assert_eq!(e[0].value, Value::Str("a\u{10FFFF}b".into()));
        assert_eq!(e[1].value, Value::Str("\\udcff".into()));
    }

    #[test]
    fn errors_name_the_key_and_value() {
        let err = parse_mapping("a: 1\nmax_depth: !!python/none ''\n").unwrap_err();
        assert_eq!(err.key.as_deref(), Some("max_depth"));
        assert!(err.message.contains("!!python/none ''"), "{}", err.message);
        let e = parse_mapping("k: 'build/\n  sub/'\nz: 1\n").unwrap();
        assert_eq!(e[0].written, "'build/\n  sub/'");
    }

    #[test]
    fn lines_merges_and_empty() {
        let e = parse_mapping("# c\na: 1\n\nb: 2\n").unwrap();
        assert_eq!((e[0].line, e[1].line), (2, 4));
        assert!(parse_mapping("").unwrap().is_empty());
        assert!(parse_mapping("# only\n").unwrap().is_empty());
        let e = parse_mapping("base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  y: 3\n").unwrap();
        assert_eq!(e[1].value, Value::Map(2));
        let e = parse_mapping("<<: {max_depth: 3}\nmax_depth: 4\n").unwrap();
        assert_eq!(e.last().unwrap().value, Value::Number(Number::Int(4)));
    }
}
