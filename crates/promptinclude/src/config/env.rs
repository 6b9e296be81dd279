//! The host's `A0_SET_` environment defaults.
//!
//! When the host falls back to the plugin's `default_config.yaml` (no
//! project or user file), it overrides each of its values from the
//! environment (`helpers/plugins.py:_apply_defaults_from_env` calling
//! `helpers/settings.py:get_default_value`): the variable
//! `A0_SET__promptinclude__<key>`, or its upper-case form, converted to the
//! default's type — `int(value.strip())` for a number, `str(value).strip()`
//! for text. A value that does not convert keeps the default (the host
//! prints a warning).

use super::{Config, Key, KeyKind, Setting};
use promptinclude_pycompat::number::Number;

/// The plugin name in the variable names.
const PLUGIN: &str = "_promptinclude";

/// One environment variable the defaults consulted.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EnvValue {
    /// The key it is for.
    #[serde(with = "key_name")]
    pub key: Key,
    /// The variable's name as found.
    pub variable: String,
    /// Its value as found.
    pub raw: String,
    /// Whether it applied (`false`: it did not convert, the default stays).
    pub applied: bool,
}

/// The variable names the host tries for `key`, in its order.
fn variable_names(key: Key) -> [String; 2] {
    let name = format!("{PLUGIN}__{}", key.name());
    [
        format!("A0_SET_{name}"),
        format!("A0_SET_{}", name.to_uppercase()),
    ]
}

/// Applies the `A0_SET_` overrides found by `lookup` (a variable's value, if
/// set) to `config` (the defaults), returning what was consulted.
pub fn apply(config: &mut Config, lookup: impl Fn(&str) -> Option<String>) -> Vec<EnvValue> {
    let mut seen = Vec::new();
    for key in Key::ALL {
        let Some((variable, raw)) = variable_names(key)
            .into_iter()
            .find_map(|name| lookup(&name).map(|value| (name, value)))
        else {
            continue;
        };
        let setting = match key.kind() {
            KeyKind::Text | KeyKind::Lines => {
                Some(Setting::Text(crate::pystr::py_strip(&raw).to_string()))
            }
            KeyKind::Number => py_int(&raw).map(Setting::Number),
        };
        let applied = setting.is_some();
        if let Some(setting) = setting {
            config.set(key, setting);
        }
        seen.push(EnvValue {
            key,
            variable,
            raw,
            applied,
        });
    }
    seen
}

/// Reads the process environment (values that are not UTF-8 are read lossily).
pub fn from_process(name: &str) -> Option<String> {
    std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
}

/// Python's `int(text.strip())`: an optional sign, decimal digits (any
/// script's, as Python accepts `"١٢٠"`) with single underscores between
/// them, surrounding whitespace stripped. `None` where Python raises
/// `ValueError`.
fn py_int(text: &str) -> Option<Number> {
    let ascii: String = crate::pystr::py_strip(text)
        .chars()
        .map(|c| decimal_value(c).map_or(c, |d| char::from(b'0' + d)))
        .collect();
    let t = ascii.as_str();
    let (negative, body) = match t.as_bytes().first()? {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let well_formed = !body.is_empty()
        && !body.starts_with('_')
        && !body.ends_with('_')
        && !body.contains("__")
        && body.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let digits = body.replace('_', "");
    (well_formed && digits.len() <= promptinclude_pycompat::json::MAX_INT_DIGITS)
        .then(|| Number::from_digits(negative, &digits, 10))
}

/// The value of a Unicode decimal digit (general category Nd). Such
/// digits come in runs of ten consecutive code points, 0 to 9, so the value
/// is the distance from the start of the run, modulo 10.
fn decimal_value(c: char) -> Option<u8> {
    static ND: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let nd = ND.get_or_init(|| regex::Regex::new(r"^\p{Nd}$").expect("static pattern"));
    let is_nd = |c: char| nd.is_match(c.encode_utf8(&mut [0; 4]));
    if c.is_ascii() || !is_nd(c) {
        return c.to_digit(10).map(|d| d as u8);
    }
    let mut start = c as u32;
    while let Some(prev) = start.checked_sub(1).and_then(char::from_u32) {
        if !is_nd(prev) {
            break;
        }
        start -= 1;
    }
    Some(((c as u32 - start) % 10) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_like_get_default_value() {
        let env = [
            ("A0_SET__promptinclude__max_total_tokens", " 150 "),
            ("A0_SET__PROMPTINCLUDE__MAX_DEPTH", "3"),
            ("A0_SET__promptinclude__max_file_count", "1.5"),
            ("A0_SET__promptinclude__name_pattern", "  *.md\n"),
            ("A0_SET__promptinclude__max_file_tokens", "1_000"),
        ];
        let mut config = Config::default();
        let seen = apply(&mut config, |name| {
            env.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        });
        assert_eq!(config.max_total_tokens, Number::int(150));
        assert_eq!(config.max_depth, Number::int(3));
        assert_eq!(config.max_file_count, Number::int(50));
        assert_eq!(config.max_file_tokens, Number::int(1000));
        assert_eq!(config.name_pattern, "*.md");
        assert_eq!(seen.len(), 5);
        assert!(
            !seen
                .iter()
                .find(|e| e.key == Key::MaxFileCount)
                .unwrap()
                .applied
        );
    }

    #[test]
    fn lower_case_name_wins() {
        let mut config = Config::default();
        apply(&mut config, |name| match name {
            "A0_SET__promptinclude__max_depth" => Some("2".into()),
            "A0_SET__PROMPTINCLUDE__MAX_DEPTH" => Some("7".into()),
            _ => None,
        });
        assert_eq!(config.max_depth, Number::int(2));
    }

    #[test]
    fn python_int_forms() {
        for (text, want) in [
            ("-0", Some("0")),
            ("+5", Some("5")),
            ("007", Some("7")),
            ("1__0", None),
            ("_1", None),
            ("", None),
            ("0x10", None),
            ("\u{a0}42\u{3000}", Some("42")),
            ("١٢٠", Some("120")),
            ("𝟙𝟚", Some("12")),
            ("½", None),
        ] {
            assert_eq!(
                py_int(text).map(|n| n.to_string()).as_deref(),
                want,
                "{text:?}"
            );
        }
    }
}

/// A [`Key`] as its name in JSON.
mod key_name {
    use super::Key;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the key's name.
    pub fn serialize<S: Serializer>(key: &Key, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(key.name())
    }

    /// Reads a key's name.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        let name = String::deserialize(d)?;
        Key::from_name(&name).ok_or_else(|| serde::de::Error::custom(format!("unknown key {name}")))
    }
}
