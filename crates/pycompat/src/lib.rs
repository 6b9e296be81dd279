//! # promptinclude-pycompat
//!
//! Python's semantics where the Agent Zero reference relies on them, written
//! for Rust and without I/O: the reference is Python, and promptinclude must
//! give its results byte for byte, so each module reproduces one part of
//! CPython 3.11 (or of a library the host uses) exactly, quirks included.
//!
//! | module | reproduces |
//! |---|---|
//! | [`pystr`] | `str.strip`/`splitlines`/`isspace`; `surrogateescape` file names |
//! | [`number`], [`value`] | `int`/`float`/`bool` values and the arithmetic the budget does on them |
//! | [`json`], [`yaml`] | `json.loads` and PyYAML's `safe_load` (YAML 1.1) of a configuration, as [`document`] entries |
//! | [`fnmatch`] | `fnmatch.fnmatch` (CPython's translation to `re`) |
//! | [`gitwildmatch`] | pathspec 0.12's `gitwildmatch` patterns |
//! | [`path`] | `os.path.abspath` on bytes, and paths as the matchers see them |
//!
//! ```
//! use promptinclude_pycompat::fnmatch::NamePattern;
//! use promptinclude_pycompat::pystr::py_strip;
//!
//! let pattern = NamePattern::new("*.promptinclude.md").unwrap();
//! assert!(pattern.is_match("rules.promptinclude.md"));
//! // Python strips U+001C..U+001F as whitespace, Rust's `trim` does not.
//! assert_eq!(py_strip("\x1c rules \x1f"), "rules");
//! ```
#![deny(missing_docs)]

pub mod document;
pub mod fnmatch;
pub mod gitwildmatch;
pub mod json;
pub mod number;
pub mod path;
mod pyregex;
pub mod pystr;
pub mod value;
pub mod yaml;

pub use pyregex::needs_more_than;
