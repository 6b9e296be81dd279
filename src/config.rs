//! Configuration: the reference plugin's six keys, their defaults, and loading
//! them from YAML or JSON with errors that name the file, line and key.
//!
//! A document only overrides the keys it names; every other key keeps the
//! value of the base it is merged over (the defaults, unless a caller picks
//! another base, as the host does for project-level overrides whose missing
//! `gitignore` means "no filtering").

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;

/// The default `gitignore` text of the reference plugin (12 lines).
pub const DEFAULT_GITIGNORE: &str = "venv/**\n**/__pycache__/**\n**/node_modules/**\n**/.npm/**\n\
**/.git/**\n**/.conda/**\n**/.cache/**\n**/dist/**\n**/build/**\n**/.tox/**\n**/.eggs/**\n\
**/*.egg-info/**\n";

/// The six settings of a Prompt Include scan.
///
/// Numbers are `i64` because the reference does its budget arithmetic on
/// Python integers; negative values are rejected when loading.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Config {
    /// `fnmatch` pattern a file *name* must match. *Default:* `*.promptinclude.md`.
    pub name_pattern: String,
    /// Directories this deep (root = 0) contribute nothing. *Default:* 10.
    pub max_depth: i64,
    /// Per-file token cap before cropping. *Default:* 2000.
    pub max_file_tokens: i64,
    /// Most entries in `files`. *Default:* 50.
    pub max_file_count: i64,
    /// Total budget for paths and contents. *Default:* 8000.
    pub max_total_tokens: i64,
    /// gitignore-style lines (pathspec `gitwildmatch`). *Default:* [`DEFAULT_GITIGNORE`].
    pub gitignore: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            name_pattern: "*.promptinclude.md".to_string(),
            max_depth: 10,
            max_file_tokens: 2000,
            max_file_count: 50,
            max_total_tokens: 8000,
            gitignore: DEFAULT_GITIGNORE.to_string(),
        }
    }
}

/// The six configuration keys, in the reference's order.
pub const KEYS: [&str; 6] = [
    "name_pattern",
    "max_depth",
    "max_file_tokens",
    "max_file_count",
    "max_total_tokens",
    "gitignore",
];

/// The host settings page's range for each numeric key (inclusive).
/// Values outside it still work; the audit warns about them.
pub const HOST_RANGES: [(&str, i64, i64); 4] = [
    ("max_depth", 1, 50),
    ("max_file_tokens", 100, 20000),
    ("max_file_count", 1, 200),
    ("max_total_tokens", 500, 50000),
];

/// The syntax of a configuration document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// YAML (a superset of JSON, as PyYAML reads the host's `default_config.yaml`).
    Yaml,
    /// JSON (the host's `config.json` overrides).
    Json,
}

impl Format {
    /// Picks the format from a file name: `.yaml`/`.yml` is YAML, anything else JSON
    /// (the reference's rule).
    pub fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("yaml") | Some("yml") => Format::Yaml,
            _ => Format::Json,
        }
    }
}

/// A scalar taken from a parsed document, before it is checked against its key.
enum Scalar {
    Int(Option<i64>),
    Str(String),
    Null,
    Other(&'static str),
}

/// A key of a configuration file that is none of [`KEYS`]: ignored, as the
/// host ignores it (often a typo that leaves a setting at its default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKey {
    /// The key as written.
    pub key: String,
    /// Its 1-based line, when it can be found.
    pub line: Option<usize>,
}

impl Config {
    /// Loads a configuration file, merging its keys over `base`.
    pub fn load_file(path: &Path, base: &Config) -> Result<Config, ConfigError> {
        Config::load_file_with_unknown(path, base).map(|(config, _)| config)
    }

    /// [`Config::load_file`], also returning the file's unknown keys.
    pub fn load_file_with_unknown(
        path: &Path,
        base: &Config,
    ) -> Result<(Config, Vec<UnknownKey>), ConfigError> {
        let bytes = std::fs::read(path).map_err(|e| ConfigError {
            file: Some(path.to_path_buf()),
            line: None,
            key: None,
            message: format!("cannot read: {e}"),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| ConfigError {
            file: Some(path.to_path_buf()),
            line: None,
            key: None,
            message: format!("not valid UTF-8 ({e})"),
        })?;
        let (config, unknown) =
            Config::from_text_with_unknown(&text, Format::from_path(path), base).map_err(
                |mut e| {
                    e.file = Some(path.to_path_buf());
                    e
                },
            )?;
        let unknown = unknown
            .into_iter()
            .map(|key| UnknownKey {
                line: find_key_line(&text, &key),
                key,
            })
            .collect();
        Ok((config, unknown))
    }

    /// Parses a configuration document and merges its keys over `base`.
    ///
    /// Unknown keys are ignored (the host's documents may carry more), and are
    /// returned as names in the second tuple field so that callers can warn.
    pub fn from_text_with_unknown(
        text: &str,
        format: Format,
        base: &Config,
    ) -> Result<(Config, Vec<String>), ConfigError> {
        let entries = parse_entries(text, format)?;
        let mut config = base.clone();
        let mut unknown = Vec::new();
        for (key, value) in entries {
            let locate = |message: String| ConfigError {
                file: None,
                line: find_key_line(text, &key),
                key: Some(key.clone()),
                message,
            };
            match key.as_str() {
                "name_pattern" => match value {
                    Scalar::Str(s) => config.name_pattern = s,
                    other => return Err(locate(type_message("a string", &other))),
                },
                "gitignore" => match value {
                    Scalar::Str(s) => config.gitignore = s,
                    // `(gitignore or "")` in the reference: null means no patterns.
                    Scalar::Null => config.gitignore = String::new(),
                    other => return Err(locate(type_message("a string", &other))),
                },
                "max_depth" | "max_file_tokens" | "max_file_count" | "max_total_tokens" => {
                    let n = match value {
                        Scalar::Int(Some(n)) if n >= 0 => n,
                        Scalar::Int(Some(n)) => {
                            return Err(locate(format!("must be a non-negative integer, got {n}")))
                        }
                        Scalar::Int(None) => {
                            return Err(locate("integer out of range".to_string()))
                        }
                        other => return Err(locate(type_message("an integer", &other))),
                    };
                    match key.as_str() {
                        "max_depth" => config.max_depth = n,
                        "max_file_tokens" => config.max_file_tokens = n,
                        "max_file_count" => config.max_file_count = n,
                        _ => config.max_total_tokens = n,
                    }
                }
                _ => unknown.push(key),
            }
        }
        Ok((config, unknown))
    }

    /// Parses a configuration document and merges its keys over `base`,
    /// ignoring unknown keys.
    pub fn from_text(text: &str, format: Format, base: &Config) -> Result<Config, ConfigError> {
        Config::from_text_with_unknown(text, format, base).map(|(c, _)| c)
    }

    /// Host settings-page ranges this configuration is outside of, as
    /// `(key, value, low, high)`.
    pub fn out_of_host_range(&self) -> Vec<(&'static str, i64, i64, i64)> {
        HOST_RANGES
            .iter()
            .filter_map(|&(key, lo, hi)| {
                let v = match key {
                    "max_depth" => self.max_depth,
                    "max_file_tokens" => self.max_file_tokens,
                    "max_file_count" => self.max_file_count,
                    _ => self.max_total_tokens,
                };
                (v < lo || v > hi).then_some((key, v, lo, hi))
            })
            .collect()
    }
}

fn type_message(expected: &str, got: &Scalar) -> String {
    let got = match got {
        Scalar::Int(_) => "an integer".to_string(),
        Scalar::Str(s) => format!("the string {s:?}"),
        Scalar::Null => "null".to_string(),
        Scalar::Other(kind) => (*kind).to_string(),
    };
    format!("expected {expected}, got {got}")
}

fn syntax_error(message: String, line: Option<usize>) -> ConfigError {
    ConfigError {
        file: None,
        line,
        key: None,
        message,
    }
}

/// Parses the document into `(key, scalar)` pairs in document order.
fn parse_entries(text: &str, format: Format) -> Result<Vec<(String, Scalar)>, ConfigError> {
    match format {
        Format::Json => {
            let value: serde_json::Value = serde_json::from_str(text)
                .map_err(|e| syntax_error(format!("malformed JSON: {e}"), Some(e.line())))?;
            let serde_json::Value::Object(map) = value else {
                return Err(syntax_error(
                    "expected a JSON object at the top level".to_string(),
                    None,
                ));
            };
            Ok(map
                .into_iter()
                .map(|(k, v)| {
                    let scalar = match v {
                        serde_json::Value::Null => Scalar::Null,
                        serde_json::Value::String(s) => Scalar::Str(s),
                        serde_json::Value::Number(n) if n.is_i64() || n.is_u64() => {
                            Scalar::Int(n.as_i64())
                        }
                        serde_json::Value::Number(_) => Scalar::Other("a non-integer number"),
                        serde_json::Value::Bool(_) => Scalar::Other("a boolean"),
                        serde_json::Value::Array(_) => Scalar::Other("a list"),
                        serde_json::Value::Object(_) => Scalar::Other("a mapping"),
                    };
                    (k, scalar)
                })
                .collect())
        }
        Format::Yaml => {
            let value: serde_norway::Value =
                serde_norway::from_str(text).map_err(|e| yaml_error(&e))?;
            let map = match value {
                serde_norway::Value::Mapping(map) => map,
                // An empty document is `None` in PyYAML, and `or {}` makes it empty.
                serde_norway::Value::Null => return Ok(Vec::new()),
                _ => {
                    return Err(syntax_error(
                        "expected a mapping at the top level".to_string(),
                        None,
                    ))
                }
            };
            let mut entries = Vec::with_capacity(map.len());
            for (k, v) in map {
                let serde_norway::Value::String(key) = k else {
                    return Err(syntax_error("a key is not a string".to_string(), None));
                };
                let scalar = match v {
                    serde_norway::Value::Null => Scalar::Null,
                    serde_norway::Value::String(s) => Scalar::Str(s),
                    serde_norway::Value::Number(n) if n.is_i64() || n.is_u64() => {
                        Scalar::Int(n.as_i64())
                    }
                    serde_norway::Value::Number(_) => Scalar::Other("a non-integer number"),
                    serde_norway::Value::Bool(_) => Scalar::Other("a boolean"),
                    serde_norway::Value::Sequence(_) => Scalar::Other("a list"),
                    serde_norway::Value::Mapping(_) => Scalar::Other("a mapping"),
                    serde_norway::Value::Tagged(_) => Scalar::Other("a tagged value"),
                };
                entries.push((key, scalar));
            }
            Ok(entries)
        }
    }
}

/// A YAML load error. An integer beyond 64 bits (which the YAML value type
/// cannot hold) under one of our keys is reported against that key, like an
/// out-of-range JSON number, not as malformed YAML.
fn yaml_error(e: &serde_norway::Error) -> ConfigError {
    let line = e.location().map(|l| l.line());
    let message = e.to_string();
    let big_int = KEYS.iter().find(|key| {
        message
            .strip_prefix(**key)
            .is_some_and(|rest| rest.starts_with(": invalid type: integer `"))
    });
    match big_int {
        Some(key) => ConfigError {
            file: None,
            line,
            key: Some(key.to_string()),
            message: "integer out of range".to_string(),
        },
        None => syntax_error(format!("malformed YAML: {e}"), line),
    }
}

/// Finds the 1-based line on which `key` is defined (`key:` or `"key":`), if any.
fn find_key_line(text: &str, key: &str) -> Option<usize> {
    let quoted = format!("\"{key}\"");
    let single = format!("'{key}'");
    text.lines()
        .position(|line| {
            let t = line.trim_start().trim_start_matches(['{', ',', ' ']);
            [key, quoted.as_str(), single.as_str()].iter().any(|k| {
                t.strip_prefix(k)
                    .is_some_and(|rest| rest.trim_start().starts_with(':'))
            })
        })
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_default_yaml_equals_defaults() {
        let text = include_str!("../fixtures/config/default_config.yaml");
        let c = Config::from_text(
            text,
            Format::Yaml,
            &Config {
                gitignore: String::new(),
                max_depth: 0,
                ..Config::default()
            },
        )
        .unwrap();
        assert_eq!(c, Config::default());
    }

    #[test]
    fn missing_keys_keep_base() {
        let c = Config::from_text(r#"{"max_depth": 3}"#, Format::Json, &Config::default()).unwrap();
        assert_eq!(c.max_depth, 3);
        assert_eq!(c.gitignore, DEFAULT_GITIGNORE);
    }

    #[test]
    fn wrong_type_names_key_and_line() {
        let err = Config::from_text(
            "max_depth: 4\nmax_file_count: lots\n",
            Format::Yaml,
            &Config::default(),
        )
        .unwrap_err();
        assert_eq!(err.key.as_deref(), Some("max_file_count"));
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("integer"), "{}", err.message);
    }

    #[test]
    fn negative_and_bool_rejected() {
        let err = Config::from_text(
            "{\n  \"max_total_tokens\": -1\n}",
            Format::Json,
            &Config::default(),
        )
        .unwrap_err();
        assert_eq!(
            (err.key.as_deref(), err.line),
            (Some("max_total_tokens"), Some(2))
        );
        let err = Config::from_text(r#"{"max_depth": true}"#, Format::Json, &Config::default())
            .unwrap_err();
        assert!(err.message.contains("boolean"));
    }

    #[test]
    fn yaml_integers_beyond_64_bits_name_their_key() {
        for text in [
            "max_depth: 3\nmax_total_tokens: 18446744073709551616\n",
            "max_total_tokens: -9223372036854775809\n",
        ] {
            let err = Config::from_text(text, Format::Yaml, &Config::default()).unwrap_err();
            assert_eq!(err.key.as_deref(), Some("max_total_tokens"), "{text:?}");
            assert_eq!(err.message, "integer out of range");
            assert!(err.line.is_some());
        }
        let err = Config::from_text(
            "other: 99999999999999999999\n",
            Format::Yaml,
            &Config::default(),
        )
        .unwrap_err();
        assert_eq!(err.key, None);
    }

    #[test]
    fn syntax_errors_have_lines() {
        let err =
            Config::from_text("{\n\"a\": 1,\n}", Format::Json, &Config::default()).unwrap_err();
        assert_eq!(err.line, Some(3));
        let err = Config::from_text("a: [1\nb: 2\n", Format::Yaml, &Config::default()).unwrap_err();
        assert!(err.line.is_some());
    }

    #[test]
    fn null_gitignore_means_no_patterns_and_unknown_keys_reported() {
        let (c, unknown) = Config::from_text_with_unknown(
            "gitignore:\nfoo: 1\n",
            Format::Yaml,
            &Config::default(),
        )
        .unwrap();
        assert_eq!(c.gitignore, "");
        assert_eq!(unknown, vec!["foo".to_string()]);
    }

    #[test]
    fn host_ranges() {
        let c = Config {
            max_depth: 0,
            max_total_tokens: 60000,
            ..Config::default()
        };
        let keys: Vec<_> = c.out_of_host_range().iter().map(|r| r.0).collect();
        assert_eq!(keys, vec!["max_depth", "max_total_tokens"]);
    }
}
