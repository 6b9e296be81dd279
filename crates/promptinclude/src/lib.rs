//! # promptinclude
//!
//! An exact, parallel re-implementation of the Agent Zero *Prompt Include*
//! scan: find `*.promptinclude.md` rule files under a root, filter them with
//! gitignore-style patterns, count their `cl100k_base` tokens, fit them into
//! per-file and total budgets in alphabetical order of full path, and render
//! the system-prompt section — byte for byte what the reference produces.
//!
//! ## The entry points
//!
//! | | |
//! |---|---|
//! | [`Config`] | the plugin's six settings, loaded as the host loads them |
//! | [`scan`], [`Scanner`] | one root through every stage ([`ScanResult`], [`FileEntry`], [`Status`]); [`Scanner::scan_at`] also reads a git revision |
//! | [`render()`] | the system-prompt section of a scan |
//! | [`Batch`], [`Resolver`] | many roots, each with the configuration the host would use for it, in parallel, results in input order |
//! | [`audit_root`] | a scan's facts and warnings ([`audit`]: text, JSON and HTML reports) |
//! | [`PromptDiff`] | what a change does to the prompt ([`diff`]) |
//! | [`artifact`] | bundles, `render --out-dir` indexes, atomic writes, and the merge of shard outputs |
//! | [`agents`] | what other agents (Codex) load as context files, modelled exactly |
//! | [`Error`], [`RootError`] | what stops a root, and its record in outputs |
//!
//! The stages are public modules for callers that need one alone, in the
//! order data flows through them: [`config`] → [`discover`] (walk and
//! patterns) → [`read`] (with the policy of [`trust`]) → [`tokenize`] →
//! [`budget`] → [`model`] → [`render`](mod@render), [`audit`], [`diff`], [`artifact`].
//! Python's semantics where the reference relies on them are the
//! `promptinclude-pycompat` crate ([`pystr`] is re-exported); exact token
//! counts are `promptinclude-tokenize` ([`tokenize`]).
//!
//! ```
//! use promptinclude::{render, scan, Config, Status};
//!
//! let root = tempfile::tempdir()?;
//! std::fs::write(root.path().join("style.promptinclude.md"), "Use tabs.\n")?;
//! let config = Config::default();
//! let result = scan(root.path(), &config)?;
//! assert_eq!(result.files.len(), 1);
//! assert_eq!(result.files[0].status, Status::Ok);
//! let section = render(&result, &config.name_pattern);
//! assert!(section.contains("Use tabs."));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod agents;
pub mod artifact;
pub mod audit;
pub mod batch;
pub mod budget;
mod committed;
pub mod config;
pub mod diff;
pub mod discover;
mod error;
#[cfg(feature = "git")]
pub mod git;
pub mod index;
pub mod model;
mod ordered;
pub mod project;
pub mod read;
pub mod render;
pub mod rootname;
mod scan;
pub mod shard;
mod sys;
pub mod trust;

pub use promptinclude_pycompat::pystr;
pub use promptinclude_tokenize as tokenize;
use promptinclude_visible as visible;

pub use artifact::ArtifactError;
pub use audit::audit_root;
pub use batch::Batch;
pub use config::Config;
pub use diff::PromptDiff;
pub use error::{full_message, Error, RootError, RootErrorKind};
pub use model::{FileEntry, ScanResult, Status};
pub use ordered::in_input_order;
pub use project::Resolver;
pub use render::render;
pub use scan::{scan, RootScan, Scanner};
pub use sys::read_regular_file;
pub use visible::visible;
