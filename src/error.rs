//! The library's error type.
//!
//! Errors that stop a run before any walking starts (a bad configuration, a
//! pattern line the reference would raise on) carry enough context to point
//! the user at the offending file, line and key. Problems met while walking
//! or reading are *not* errors: the reference algorithm defines an answer for
//! them (an unreadable file counts as skipped, an unreadable directory is not
//! entered), so they never surface here.

use std::fmt;
use std::path::PathBuf;

use crate::discover::gitwildmatch::PatternError;

/// Everything that can make a promptinclude operation fail.
#[derive(Debug)]
pub enum Error {
    /// A configuration value or document is invalid.
    Config(ConfigError),
    /// A `gitignore` line that makes the reference (pathspec) raise.
    Pattern(PatternError),
    /// The `name_pattern` could not be compiled (only regex size limits can do this).
    NamePattern(String),
    /// An I/O error, with the path it concerns.
    Io {
        /// The file or directory the operation was about.
        path: PathBuf,
        /// The underlying error.
        err: std::io::Error,
    },
}

/// A configuration problem, located as precisely as the input allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// The file the configuration came from, if any.
    pub file: Option<PathBuf>,
    /// The 1-based line of the problem, when it could be located.
    pub line: Option<usize>,
    /// The key concerned, when the problem is about one key.
    pub key: Option<String>,
    /// What is wrong, in words.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            write!(f, ": ")?;
        } else if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        if let Some(key) = &self.key {
            write!(f, "key `{key}`: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for ConfigError {}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(e) => write!(f, "invalid configuration: {e}"),
            Error::Pattern(e) => write!(f, "invalid gitignore pattern: {e}"),
            Error::NamePattern(msg) => write!(f, "invalid name_pattern: {msg}"),
            Error::Io { path, err } => write!(f, "{}: {err}", path.display()),
        }
    }
}

/// Every variant's message already includes its cause, so `source()` is
/// `None`: a chain printer (`anyhow`'s `{:#}`) would otherwise print the
/// cause twice. Match on the variant to get at the inner error.
impl std::error::Error for Error {}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}

impl From<PatternError> for Error {
    fn from(e: PatternError) -> Self {
        Error::Pattern(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_their_cause_once() {
        let e = Error::from(ConfigError {
            file: None,
            line: Some(2),
            key: Some("max_depth".to_string()),
            message: "expected an integer".to_string(),
        });
        assert!(std::error::Error::source(&e).is_none());
        assert_eq!(
            e.to_string(),
            "invalid configuration: line 2: key `max_depth`: expected an integer"
        );
    }
}
