//! The integration tests on the built-in harness, as one test binary
//! (ripgrep's layout): each module is one area, `cargo test --test
//! integration MODULE::` runs one of them. One binary instead of fourteen
//! saves a link and a thin-LTO pass of the library per file: measured in the
//! commit that made it. The tests on the oracle (differential, fixtures,
//! config_values, fidelity, shard) stay separate binaries on libtest-mimic,
//! which can report a test as ignored at run time when the oracle is absent.

#[path = "support/child.rs"]
mod child;
mod common;

mod agent_chains;
mod agents_audit;
mod audit;
mod bundle;
mod cli;
mod diff;
mod fuzz_smoke;
mod git_rev;
mod hostile;
mod init;
mod mcp;
mod output_safety;
mod path_max;
mod project_config;
mod properties;
mod resources;
mod untrusted;
mod vectors;
mod watch;
