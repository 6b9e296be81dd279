//! Configuration: the reference plugin's six keys, their defaults, and
//! loading them exactly as the host does — `json.loads` for `.json`,
//! PyYAML's `safe_load` for `.yaml`, values passed on unconverted — with
//! errors that name the file, line, key and value.
//!
//! Every key is defined once, in [`Key`]; [`Config`] holds one field per key.
//! A document only overrides the keys it names; every other key keeps the
//! value of the base it is merged over (the defaults, unless a caller picks
//! another base, as the host does for project-level overrides whose missing
//! `gitignore` means "no filtering").
//!
//! Values keep their Python type ([`Number`]): the reference does its
//! budget arithmetic on whatever the host loaded, so `3000.0`, `true`,
//! `-1`, `.inf` or `2**64` all scan, with Python's results. A value the
//! reference cannot use (a string where a number goes, `null` for
//! `max_depth`, a list for `gitignore`) is refused when loading.

pub mod env;
mod error;

use std::path::Path;

pub use error::ConfigError;
pub use promptinclude_pycompat::document::shorten;
use promptinclude_pycompat::document::Entry;
pub use promptinclude_pycompat::number::{self, Number};
pub use promptinclude_pycompat::value::{self, Value};
use promptinclude_pycompat::{json, yaml};

/// The default `gitignore` text of the reference plugin (12 lines).
pub const DEFAULT_GITIGNORE: &str = "venv/**\n**/__pycache__/**\n**/node_modules/**\n**/.npm/**\n\
**/.git/**\n**/.conda/**\n**/.cache/**\n**/dist/**\n**/build/**\n**/.tox/**\n**/.eggs/**\n\
**/*.egg-info/**\n";

/// One of the six configuration keys. Everything key-specific (name,
/// kind, default, host range, field) is decided here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// `fnmatch` pattern a file *name* must match.
    NamePattern,
    /// Directories this deep (root = 0) contribute nothing.
    MaxDepth,
    /// Per-file token cap before cropping.
    MaxFileTokens,
    /// Most entries in `files`.
    MaxFileCount,
    /// Total budget for paths and contents.
    MaxTotalTokens,
    /// gitignore-style lines (pathspec `gitwildmatch`).
    Gitignore,
}

/// What a key holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyKind {
    /// A `str` (the reference raises `TypeError` on anything else).
    Text,
    /// A `str`, or any false value (no patterns); anything else raises
    /// `AttributeError` (`.strip()`).
    Lines,
    /// An `int`, `float` or `bool` (anything else raises `TypeError` in a
    /// comparison).
    Number,
}

impl Key {
    /// Every key, in the reference's order.
    pub const ALL: [Key; 6] = [
        Key::NamePattern,
        Key::MaxDepth,
        Key::MaxFileTokens,
        Key::MaxFileCount,
        Key::MaxTotalTokens,
        Key::Gitignore,
    ];

    /// The key's name in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Key::NamePattern => "name_pattern",
            Key::MaxDepth => "max_depth",
            Key::MaxFileTokens => "max_file_tokens",
            Key::MaxFileCount => "max_file_count",
            Key::MaxTotalTokens => "max_total_tokens",
            Key::Gitignore => "gitignore",
        }
    }

    /// The six names, in the reference's order, joined with `", "` (for messages).
    pub fn known_names() -> String {
        Key::ALL.map(Key::name).join(", ")
    }

    /// The key named `name`.
    pub fn from_name(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.name() == name)
    }

    /// What the key holds.
    pub fn kind(self) -> KeyKind {
        match self {
            Key::NamePattern => KeyKind::Text,
            Key::Gitignore => KeyKind::Lines,
            _ => KeyKind::Number,
        }
    }

    /// The host settings page's range (inclusive) for a numeric key. Values
    /// outside it still work; the audit warns about them.
    fn host_range(self) -> Option<(i64, i64)> {
        match self {
            Key::MaxDepth => Some((1, 50)),
            Key::MaxFileTokens => Some((100, 20000)),
            Key::MaxFileCount => Some((1, 200)),
            Key::MaxTotalTokens => Some((500, 50000)),
            _ => None,
        }
    }

    /// Checks a loaded value against the key, as the reference would use
    /// it; the error says why the reference raises.
    pub fn accept(self, value: Value) -> Result<Setting, String> {
        match (self.kind(), value) {
            (KeyKind::Text | KeyKind::Lines, Value::Str(s)) => Ok(Setting::Text(s)),
            (KeyKind::Lines, v) if !v.is_truthy() => Ok(Setting::Text(String::new())),
            (KeyKind::Number, Value::Number(n)) => Ok(Setting::Number(n)),
            (KeyKind::Text, v) => Err(format!(
                "{} {v}, expected a string (the reference raises TypeError in fnmatch)",
                v.type_name()
            )),
            (KeyKind::Lines, v) => Err(format!(
                "{} {v}, expected a string or an empty value (the reference raises AttributeError: no .strip())",
                v.type_name()
            )),
            (KeyKind::Number, v) => Err(format!(
                "{} {v}, expected a number (the reference raises TypeError comparing it with an int)",
                v.type_name()
            )),
        }
    }
}

/// A value accepted for a key.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
pub enum Setting {
    /// For `name_pattern` and `gitignore`.
    Text(String),
    /// For the four limits.
    Number(Number),
}

impl std::fmt::Display for Setting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Setting::Text(s) => write!(f, "{s:?}"),
            Setting::Number(n) => write!(f, "{n}"),
        }
    }
}

/// The six settings of a Prompt Include scan.
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// `fnmatch` pattern a file *name* must match. *Default:* `*.promptinclude.md`.
    pub name_pattern: String,
    /// Directories this deep (root = 0) contribute nothing. *Default:* 10.
    pub max_depth: Number,
    /// Per-file token cap before cropping. *Default:* 2000.
    pub max_file_tokens: Number,
    /// Most entries in `files`. *Default:* 50.
    pub max_file_count: Number,
    /// Total budget for paths and contents. *Default:* 8000.
    pub max_total_tokens: Number,
    /// gitignore-style lines (pathspec `gitwildmatch`). *Default:* [`DEFAULT_GITIGNORE`].
    pub gitignore: String,
}

impl Default for Config {
    /// The plugin's `default_config.yaml`.
    fn default() -> Self {
        Config {
            name_pattern: "*.promptinclude.md".to_string(),
            max_depth: Number::int(10),
            max_file_tokens: Number::int(2000),
            max_file_count: Number::int(50),
            max_total_tokens: Number::int(8000),
            gitignore: DEFAULT_GITIGNORE.to_string(),
        }
    }
}

impl Config {
    /// The value of `key`.
    pub fn get(&self, key: Key) -> Setting {
        match key {
            Key::NamePattern => Setting::Text(self.name_pattern.clone()),
            Key::Gitignore => Setting::Text(self.gitignore.clone()),
            Key::MaxDepth => Setting::Number(self.max_depth.clone()),
            Key::MaxFileTokens => Setting::Number(self.max_file_tokens.clone()),
            Key::MaxFileCount => Setting::Number(self.max_file_count.clone()),
            Key::MaxTotalTokens => Setting::Number(self.max_total_tokens.clone()),
        }
    }

    /// Sets `key` (a setting of the wrong kind is ignored; [`Key::accept`]
    /// only makes the right kind).
    pub fn set(&mut self, key: Key, setting: Setting) {
        match (key, setting) {
            (Key::NamePattern, Setting::Text(s)) => self.name_pattern = s,
            (Key::Gitignore, Setting::Text(s)) => self.gitignore = s,
            (Key::MaxDepth, Setting::Number(n)) => self.max_depth = n,
            (Key::MaxFileTokens, Setting::Number(n)) => self.max_file_tokens = n,
            (Key::MaxFileCount, Setting::Number(n)) => self.max_file_count = n,
            (Key::MaxTotalTokens, Setting::Number(n)) => self.max_total_tokens = n,
            _ => {}
        }
    }

    /// The number held by a numeric key.
    pub fn number(&self, key: Key) -> Option<&Number> {
        match key {
            Key::MaxDepth => Some(&self.max_depth),
            Key::MaxFileTokens => Some(&self.max_file_tokens),
            Key::MaxFileCount => Some(&self.max_file_count),
            Key::MaxTotalTokens => Some(&self.max_total_tokens),
            _ => None,
        }
    }

    /// Loads a configuration file, merging its keys over `base`.
    pub fn load_file(path: &Path, base: &Config) -> Result<Config, ConfigError> {
        Config::load_file_with_notes(path, base).map(|(config, _)| config)
    }

    /// [`Config::load_file`], also returning what the file says about
    /// itself (unknown keys, the line of each key).
    pub fn load_file_with_notes(
        path: &Path,
        base: &Config,
    ) -> Result<(Config, LoadNotes), ConfigError> {
        let bytes = std::fs::read(path).map_err(|e| ConfigError {
            file: Some(path.to_path_buf()),
            ..ConfigError::plain(format!("cannot read: {e}"))
        })?;
        Config::from_file_bytes(path, bytes, base)
    }

    /// [`Config::load_file_with_notes`] on `bytes` already read from `path`.
    pub(crate) fn from_file_bytes(
        path: &Path,
        bytes: Vec<u8>,
        base: &Config,
    ) -> Result<(Config, LoadNotes), ConfigError> {
        let in_file = |mut e: ConfigError| {
            e.file = Some(path.to_path_buf());
            e
        };
        // The host reads the file as UTF-8 text (`files.read_file`).
        let text = String::from_utf8(bytes)
            .map_err(|e| in_file(ConfigError::plain(format!("not valid UTF-8 ({e})"))))?;
        Config::from_text_with_notes(&text, Format::from_path(path), base).map_err(in_file)
    }

    /// Parses a configuration document and merges its keys over `base`.
    /// Unknown keys are ignored (the host's documents may carry more) and
    /// reported in the notes.
    pub fn from_text_with_notes(
        text: &str,
        format: Format,
        base: &Config,
    ) -> Result<(Config, LoadNotes), ConfigError> {
        let entries = match format {
            Format::Json => json::parse_object(text),
            Format::Yaml => yaml::parse_mapping(text),
        }
        .map_err(|e| {
            // The loaders name the key whose value they reject; a key that is
            // none of the six is named in the message instead.
            let (key, message) = match e.key {
                Some(name) if Key::from_name(&name).is_none() => {
                    (None, format!("key {name:?}: {}", e.message))
                }
                key => (key, e.message),
            };
            ConfigError {
                file: None,
                line: e.line,
                key,
                message,
            }
        })?;
        let mut config = base.clone();
        let mut notes = LoadNotes::default();
        // A dict keeps the last value of a repeated key (and an earlier,
        // unusable value of it never reaches the scanner).
        let mut entries = entries;
        let mut seen = std::collections::HashSet::new();
        entries.reverse();
        entries.retain(|e| seen.insert(e.key.clone()));
        entries.reverse();
        for Entry {
            key,
            written,
            value,
            line,
        } in entries
        {
            let Some(k) = Key::from_name(&key) else {
                notes.unknown_keys.push(UnknownKey {
                    key,
                    line: Some(line),
                });
                continue;
            };
            let setting = k.accept(value).map_err(|message| ConfigError {
                file: None,
                line: Some(line),
                key: Some(key.clone()),
                message: format!("`{}`: {message}", shorten(&written)),
            })?;
            config.set(k, setting);
            notes.keys.push(KeySource {
                key: k,
                line,
                written,
            });
        }
        Ok((config, notes))
    }

    /// Parses a configuration document and merges its keys over `base`,
    /// ignoring unknown keys.
    pub fn from_text(text: &str, format: Format, base: &Config) -> Result<Config, ConfigError> {
        Config::from_text_with_notes(text, format, base).map(|(c, _)| c)
    }

    /// Host settings-page ranges this configuration is outside of, as
    /// `(key, value, low, high)`.
    pub(crate) fn out_of_host_range(&self) -> Vec<(Key, Number, i64, i64)> {
        Key::ALL
            .into_iter()
            .filter_map(|key| {
                let (lo, hi) = key.host_range()?;
                let v = self.number(key)?;
                (v.is_lt_int(lo) || v.gt(&Number::int(hi)) || v.to_f64().is_nan())
                    .then(|| (key, v.clone(), lo, hi))
            })
            .collect()
    }
}

/// What loading a configuration file found besides the values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadNotes {
    /// Keys that are none of the six (ignored, as the host ignores them).
    pub unknown_keys: Vec<UnknownKey>,
    /// Where the file sets each key.
    pub keys: Vec<KeySource>,
    /// `A0_SET_` environment values consulted (only for the defaults).
    pub env: Vec<env::EnvValue>,
}

impl LoadNotes {
    /// The line on which the file set `key`.
    pub fn line_of(&self, key: Key) -> Option<usize> {
        self.source_of(key).map(|s| s.line)
    }

    /// Where the file set `key`.
    pub(crate) fn source_of(&self, key: Key) -> Option<&KeySource> {
        self.keys.iter().find(|s| s.key == key)
    }
}

/// Where a configuration file sets a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeySource {
    /// The key.
    pub key: Key,
    /// Its 1-based line.
    pub line: usize,
    /// The value as written.
    pub written: String,
}

/// A key of a configuration file that is none of [`Key::ALL`]: ignored, as the
/// host ignores it (often a typo that leaves a setting at its default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKey {
    /// The key as written.
    pub key: String,
    /// Its 1-based line, when it can be found.
    pub line: Option<usize>,
}

/// The syntax of a configuration document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// YAML, as PyYAML `safe_load` reads it.
    Yaml,
    /// JSON, as Python's `json.loads` reads it.
    Json,
}

impl Format {
    /// Picks the format from a file name: `.yaml`/`.yml` is YAML, anything else JSON.
    fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some("yaml") | Some("yml") => Format::Yaml,
            _ => Format::Json,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_default_yaml_equals_defaults() {
        let text = include_str!("../../../../fixtures/config/default_config.yaml");
        let c = Config::from_text(
            text,
            Format::Yaml,
            &Config {
                gitignore: String::new(),
                max_depth: Number::int(0),
                ..Config::default()
            },
        )
        .unwrap();
        assert_eq!(c, Config::default());
    }

    #[test]
    fn missing_keys_keep_base() {
        let c = Config::from_text(r#"{"max_depth": 3}"#, Format::Json, &Config::default()).unwrap();
        assert_eq!(c.max_depth, Number::int(3));
        assert_eq!(c.gitignore, DEFAULT_GITIGNORE);
    }

    #[test]
    fn wrong_type_names_key_line_and_value() {
        let err = Config::from_text(
            "max_depth: 4\nmax_file_count: lots\n",
            Format::Yaml,
            &Config::default(),
        )
        .unwrap_err();
        assert_eq!(err.key.as_deref(), Some("max_file_count"));
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("\"lots\""), "{}", err.message);
        let err = Config::from_text("{\"gitignore\": [1]}", Format::Json, &Config::default())
            .unwrap_err();
        assert!(err.message.contains("AttributeError"), "{}", err.message);
        let err = Config::from_text("{\"max_depth\": null}", Format::Json, &Config::default())
            .unwrap_err();
        assert!(err.message.contains("None"), "{}", err.message);
    }

    #[test]
    fn python_values_are_kept() {
        let c = Config::from_text(
            "{\"max_total_tokens\": -1, \"max_depth\": true, \"max_file_tokens\": 1e2, \"max_file_count\": NaN}",
            Format::Json,
            &Config::default(),
        )
        .unwrap();
        assert_eq!(c.max_total_tokens, Number::int(-1));
        assert_eq!(c.max_depth, Number::Bool(true));
        assert_eq!(c.max_file_tokens, Number::Float(100.0));
        assert!(c.max_file_count.to_f64().is_nan());
        for falsy in ["null", "false", "0", "0.0", "\"\"", "[]", "{}"] {
            let c = Config::from_text(
                &format!("{{\"gitignore\": {falsy}}}"),
                Format::Json,
                &Config::default(),
            )
            .unwrap();
            assert_eq!(c.gitignore, "", "{falsy}");
        }
    }

    #[test]
    fn a_repeated_key_keeps_its_last_value() {
        let c = Config::from_text(
            "{\"max_depth\": \"x\", \"max_depth\": 3}",
            Format::Json,
            &Config::default(),
        )
        .unwrap();
        assert_eq!(c.max_depth, Number::int(3));
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
        let (c, notes) =
            Config::from_text_with_notes("gitignore:\nfoo: 1\n", Format::Yaml, &Config::default())
                .unwrap();
        assert_eq!(c.gitignore, "");
        assert_eq!(
            notes.unknown_keys,
            vec![UnknownKey {
                key: "foo".into(),
                line: Some(2)
            }]
        );
        assert_eq!(notes.line_of(Key::Gitignore), Some(1));
        let err = Config::from_text(
            "{\"max_depth\": 1e2, \"name_pattern\": -0}",
            Format::Json,
            &Config::default(),
        )
        .unwrap_err();
        assert!(err.message.starts_with("`-0`: int 0"), "{}", err.message);
    }

    #[test]
    fn host_ranges() {
        let c = Config {
            max_depth: Number::int(0),
            max_total_tokens: Number::int(60000),
            ..Config::default()
        };
        let keys: Vec<_> = c.out_of_host_range().iter().map(|r| r.0).collect();
        assert_eq!(keys, vec![Key::MaxDepth, Key::MaxTotalTokens]);
        assert_eq!(Key::from_name("max_depth"), Some(Key::MaxDepth));
    }
}
