//! The `promptinclude` binary: parse arguments, run a subcommand, print
//! errors as one line, and map the outcome to an exit code
//! (0 ok, 1 attention needed, 2 error).

mod args;
mod audit;
mod bundle;
mod commands;
mod completions;
mod context;
mod diff;
mod exit;
mod hook;
mod init;
mod interrupt;
mod json_doc;
#[cfg(feature = "mcp")]
mod mcp;
mod merge;
mod paint;
mod progress;
mod settings;

use std::process::ExitCode;

use args::{Cli, Command};
use clap::Parser;
use exit::ExitStatus;

fn main() -> ExitCode {
    // Before any other thread exists: Ctrl-C must not leave temporary files behind.
    interrupt::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match &cli.command {
        Command::Scan(args) => commands::scan(args),
        Command::Render(args) => commands::render_cmd(args),
        Command::CheckIgnore(args) => commands::check_ignore(args),
        Command::Audit(args) => audit::audit(args),
        Command::Bundle(args) => bundle::bundle(args),
        Command::Verify(args) => bundle::verify(args),
        Command::Merge(command) => merge::merge(command),
        Command::Diff(args) => diff::diff(args),
        Command::Context(args) => context::context(args),
        Command::Hook(args) => hook::hook(args),
        Command::Init(args) => init::init(args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => mcp::mcp(args),
        Command::Completions(args) => completions::completions(args),
        Command::Man(args) => completions::man(args),
    };
    match result {
        Ok(status) => status.into(),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("promptinclude: error: {err:#}");
            ExitStatus::Error.into()
        }
    }
}

/// A closed stdout (`| head -1`) is not an error worth reporting.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
