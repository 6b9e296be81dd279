//! The `promptinclude` binary: parse arguments, run a subcommand, print
//! errors as one line, and map the outcome to an exit code
//! (0 ok, 1 attention needed, 2 error).

mod cli;

use std::process::ExitCode;

use clap::Parser;
use cli::args::{Cli, Command};
use cli::exit::ExitStatus;

fn main() -> ExitCode {
    // Before any other thread exists: Ctrl-C must not leave temporary files behind.
    cli::interrupt::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let result = match &cli.command {
        Command::Scan(args) => cli::commands::scan(args),
        Command::Render(args) => cli::commands::render_cmd(args),
        Command::CheckIgnore(args) => cli::commands::check_ignore(args),
        Command::Audit(args) => cli::audit::audit(args),
        Command::Bundle(args) => cli::bundle::bundle(args),
        Command::Verify(args) => cli::bundle::verify(args),
        Command::Merge(command) => cli::merge::merge(command),
        Command::Diff(args) => cli::diff::diff(args),
        Command::Hook(args) => cli::hook::hook(args),
        Command::Init(args) => cli::init::init(args),
        #[cfg(feature = "mcp")]
        Command::Mcp(args) => cli::mcp::mcp(args),
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
