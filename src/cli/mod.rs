//! The command-line front end (binary only): arguments, configuration
//! resolution, the subcommands, and exit codes.

pub mod args;
pub mod atomic;
pub mod audit;
pub mod bundle;
pub mod commands;
pub mod diff;
pub mod exit;
pub mod hook;
pub mod init;
pub mod interrupt;
pub mod json_doc;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod merge;
pub mod paint;
pub mod progress;
pub mod settings;
