//! The library's error type.
//!
//! Errors that stop a run before any walking starts (a bad configuration, a
//! pattern line the reference would raise on) carry enough context to point
//! the user at the offending file, line and key. Problems met while walking
//! or reading are *not* errors: the reference algorithm defines an answer for
//! them (an unreadable file counts as skipped, an unreadable directory is not
//! entered), so they never surface here.

use std::fmt;

pub use crate::config::ConfigError;
use crate::config::{Key, LoadNotes};
use crate::project::ConfigSource;

use crate::discover::gitwildmatch::PatternError;
use crate::discover::MatcherError;

/// Everything that can make a promptinclude operation fail.
#[derive(Debug)]
pub enum Error {
    /// A configuration value or document is invalid.
    Config(ConfigError),
    /// A `gitignore` line that makes the reference (pathspec) raise.
    Pattern(PatternError),
    /// The `name_pattern` could not be compiled (only regex size limits can do this).
    NamePattern(regex::Error),
    /// The reference's own arithmetic raises for this configuration on this
    /// root (see [`crate::budget::Raised`]).
    Raised(crate::budget::Raised),
    /// A git repository, revision or object could not be used (`--rev`):
    /// not a repository, an unknown revision, an object missing (as in a
    /// partial clone) or corrupt; or `--rev` in a build without git.
    Git(Box<dyn std::error::Error + Send + Sync>),
}

/// What failed; the cause is [`std::error::Error::source`] (a chain printer
/// such as `anyhow`'s `{:#}`, or [`Error::full_message`], shows both).
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(_) => f.write_str("invalid configuration"),
            Error::Pattern(_) => f.write_str("invalid gitignore pattern"),
            Error::NamePattern(_) => f.write_str("invalid name_pattern"),
            Error::Raised(r) => write!(f, "{}", r.path),
            Error::Git(_) => f.write_str("git"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Config(e) => Some(e),
            Error::Pattern(e) => Some(e),
            Error::NamePattern(e) => Some(e),
            Error::Raised(r) => Some(r),
            Error::Git(e) => Some(e.as_ref()),
        }
    }
}

impl Error {
    /// The message with its causes, on one line (`invalid configuration:
    /// line 2: key `max_depth`: expected an integer`).
    pub fn full_message(&self) -> String {
        full_message(self)
    }
}

/// Any error with its causes ([`std::error::Error::source`]), on one line,
/// joined by `: ` as the command line prints them.
pub fn full_message(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(e) = cause {
        text = format!("{text}: {e}");
        cause = e.source();
    }
    text
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}

impl From<crate::budget::Raised> for Error {
    fn from(r: crate::budget::Raised) -> Self {
        Error::Raised(r)
    }
}

/// Why one root of a batch has no result; the other roots go on. In JSON
/// output this is the `error` object of the root's record (see
/// `docs/audit-schema.md`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RootError {
    /// What kind of problem it is.
    pub kind: RootErrorKind,
    /// What went wrong, in one line.
    pub message: String,
    /// The configuration file concerned, when there is one.
    pub file: Option<String>,
    /// Its 1-based line, when known.
    pub line: Option<usize>,
    /// The configuration key concerned, when known.
    pub key: Option<String>,
}

/// The kinds of [`RootError`], as `error.kind` spells them in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootErrorKind {
    /// `"config"`: its configuration file cannot be used.
    Config,
    /// `"pattern"`: a `gitignore` or `name_pattern` the reference rejects.
    Pattern,
    /// `"raises"`: the reference's arithmetic raises for this configuration.
    Raises,
    /// `"git"`: (`--rev`) the repository, revision or an object is unusable.
    Git,
}

impl RootError {
    /// The root error for `e`, located with the configuration that applied
    /// (`source`, and what loading it found).
    pub fn new(e: &Error, source: &ConfigSource, notes: &LoadNotes) -> RootError {
        let config_file = match source {
            ConfigSource::File(path) => Some(path.to_string_lossy().into_owned()),
            ConfigSource::Default => None,
        };
        match e {
            Error::Config(c) => RootError {
                kind: RootErrorKind::Config,
                message: c.message.clone(),
                file: c
                    .file
                    .as_ref()
                    .map(|f| f.to_string_lossy().into_owned())
                    .or(config_file),
                line: c.line,
                key: c.key.clone(),
            },
            Error::Pattern(_) | Error::NamePattern(_) => {
                let key = if matches!(e, Error::Pattern(_)) {
                    Key::Gitignore
                } else {
                    Key::NamePattern
                };
                // A value from the environment names its variable.
                let from_env = notes
                    .env
                    .iter()
                    .find(|v| v.key == key && v.applied && config_file.is_none())
                    .map(|v| format!("from {}: ", v.variable))
                    .unwrap_or_default();
                let written = notes
                    .source_of(key)
                    .filter(|_| config_file.is_some())
                    .map(|s| format!("`{}`: ", crate::config::shorten(&s.written)))
                    .unwrap_or_default();
                RootError {
                    kind: RootErrorKind::Pattern,
                    message: format!("{from_env}{written}{}", e.full_message()),
                    line: config_file.as_ref().and(notes.line_of(key)),
                    file: config_file,
                    key: Some(key.name().to_string()),
                }
            }
            Error::Raised(r) => {
                let written = notes
                    .source_of(r.key)
                    .filter(|_| config_file.is_some())
                    .map(|s| format!(" (`{}`)", crate::config::shorten(&s.written)))
                    .unwrap_or_default();
                RootError {
                    kind: RootErrorKind::Raises,
                    message: format!("{} = {}{written}: {}: {r}", r.key.name(), r.limit, r.path),
                    line: config_file.as_ref().and(notes.line_of(r.key)),
                    file: config_file,
                    key: Some(r.key.name().to_string()),
                }
            }
            Error::Git(e) => RootError {
                kind: RootErrorKind::Git,
                message: full_message(e.as_ref()),
                file: None,
                line: None,
                key: None,
            },
        }
    }
}

impl std::error::Error for RootError {}

impl fmt::Display for RootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}")?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            write!(f, ": ")?;
        }
        if let Some(key) = &self.key {
            write!(f, "key `{key}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl From<PatternError> for Error {
    fn from(e: PatternError) -> Self {
        Error::Pattern(e)
    }
}

#[cfg(feature = "git")]
impl From<crate::git::GitError> for Error {
    fn from(e: crate::git::GitError) -> Self {
        Error::Git(Box::new(e))
    }
}

impl From<MatcherError> for Error {
    fn from(e: MatcherError) -> Self {
        match e {
            MatcherError::Pattern(e) => Error::Pattern(e),
            MatcherError::NamePattern(e) => Error::NamePattern(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cause_is_the_source_and_shown_once() {
        let e = Error::from(ConfigError {
            file: None,
            line: Some(2),
            key: Some("max_depth".to_string()),
            message: "expected an integer".to_string(),
        });
        assert_eq!(e.to_string(), "invalid configuration");
        let cause = std::error::Error::source(&e).expect("the configuration error");
        assert_eq!(
            cause.to_string(),
            "line 2: key `max_depth`: expected an integer"
        );
        assert!(cause.source().is_none());
        assert_eq!(
            e.full_message(),
            "invalid configuration: line 2: key `max_depth`: expected an integer"
        );
    }
}
