//! # promptinclude
//!
//! An exact, parallel re-implementation of the Agent Zero *Prompt Include*
//! scan: find `*.promptinclude.md` rule files under a root, filter them with
//! gitignore-style patterns, count their `cl100k_base` tokens, fit them into
//! per-file and total budgets in alphabetical order of full path, and render
//! the system-prompt section — byte for byte what the reference produces.
//!
//! The pipeline, one module per stage:
//! [`config`] → [`discover`] (walk + patterns) → [`read`] → [`tokenize`] →
//! [`budget`] → [`render`]; [`scan`] puts them together for one root or many;
//! [`diff`] compares two scans of a root.
//!
//! ```no_run
//! use promptinclude::{Config, render, scan};
//!
//! let config = Config::default();
//! let result = scan("path/to/project", &config)?;
//! print!("{}", render(&result, &config.name_pattern));
//! # Ok::<(), promptinclude::Error>(())
//! ```
#![deny(missing_docs)]

pub mod artifact;
pub mod audit;
pub mod batch;
pub mod budget;
pub mod config;
pub mod diff;
pub mod discover;
pub mod error;
#[cfg(feature = "git")]
pub mod git;
pub mod model;
pub mod ordered;
pub mod project;
pub mod read;
pub mod render;
pub mod rootname;
pub mod scan;
pub mod shard;
mod sys;
pub mod trust;
pub mod visible;

pub use promptinclude_pycompat::pystr;
pub use promptinclude_tokenize as tokenize;

pub use config::Config;
pub use error::{Error, RootError, RootErrorKind};
pub use model::{FileEntry, ScanResult, Status};
pub use render::render;
pub use scan::{scan, RootScan, Scanner};
