//! Artifacts: what a run leaves on disk for others to read, written so that
//! no reader ever sees half of one, and put back together after a sharded
//! run.
//!
//! * [`temp`]: every temporary file and directory is registered while it
//!   exists, so a process that is interrupted can remove them all
//!   ([`temp::remove_all`]; the command line does it on Ctrl-C).
//! * [`write_atomic`] and friends: a file is replaced whole or not at all,
//!   never through a link someone planted.
//! * [`index`]: `render --out-dir`'s `index.json` and section file names.
//! * [`bundle`]: a CI bundle (sections, scan lines, `manifest.json`),
//!   written whole or not at all, read, and verified against the tree.
//! * [`merge`]: the outputs of shards merged into exactly what one run over
//!   all the roots gives.

pub mod bundle;
pub mod index;
pub mod merge;
pub mod temp;
mod write;

use std::fmt;
use std::io;

pub(crate) use write::existing_mode;
pub use write::{parent_dir, write_atomic, write_atomic_with, write_through};

/// Why reading, writing or merging artifacts failed.
#[derive(Debug)]
pub enum ArtifactError {
    /// A file system operation failed: `what` says on which path
    /// ("cannot read …").
    Io {
        /// What was being done, with the path.
        what: String,
        /// The system's error.
        source: io::Error,
    },
    /// A JSON document could not be read or written.
    Json {
        /// Which document, and what it should have been.
        what: String,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// An input is not what it must be (another root list, a truncated
    /// output, a file name that leaves its directory, …).
    Invalid(String),
}

impl fmt::Display for ArtifactError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactError::Io { what, .. } | ArtifactError::Json { what, .. } => f.write_str(what),
            ArtifactError::Invalid(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for ArtifactError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ArtifactError::Io { source, .. } => Some(source),
            ArtifactError::Json { source, .. } => Some(source),
            ArtifactError::Invalid(_) => None,
        }
    }
}

/// Results of this module.
pub type Result<T, E = ArtifactError> = std::result::Result<T, E>;

/// Attaches what was being done to an I/O or JSON error.
pub(crate) trait Context<T> {
    /// The error, said to have happened while doing `what()`.
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T>;
}

impl<T> Context<T> for std::result::Result<T, io::Error> {
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ArtifactError::Io {
            what: what(),
            source,
        })
    }
}

impl<T> Context<T> for std::result::Result<T, serde_json::Error> {
    fn with_context(self, what: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| ArtifactError::Json {
            what: what(),
            source,
        })
    }
}

/// Returns an [`ArtifactError::Invalid`] with a formatted message.
macro_rules! invalid {
    ($($message:tt)*) => {
        return Err($crate::artifact::ArtifactError::Invalid(format!($($message)*)))
    };
}
pub(crate) use invalid;
