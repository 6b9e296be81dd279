//! Configuration errors: what is wrong, located as precisely as the input
//! allows (file, line, key).

use std::fmt;
use std::path::PathBuf;

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

impl ConfigError {
    /// An error with only a message (no file, line or key yet).
    pub fn plain(message: String) -> ConfigError {
        ConfigError {
            file: None,
            line: None,
            key: None,
            message,
        }
    }
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
