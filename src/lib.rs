//! The `promptinclude` command as a library: [`run`] is the whole program
//! (parse the arguments, run a subcommand, print errors as one line, map the
//! outcome to an exit code: 0 ok, 1 attention needed, 2 error), so the binary
//! (`src/main.rs`) and the Python package's `promptinclude` script
//! (`python/src/lib.rs`, `_native.main`) are the same program.

mod args;
mod audit;
mod bundle;
mod checkout;
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
mod version;

use std::ffi::OsString;
use std::io::Write;

use args::{Cli, Command};
use clap::Parser;
use exit::ExitStatus;

pub use init::set_program;

/// Runs the command line `args` (the program name first, as
/// [`std::env::args_os`] gives it) and returns the exit code.
///
/// Everything written to stdout is flushed before it returns, so a host
/// process (Python) can exit right after. Installs the interrupt handlers on
/// its first call (`SIGINT`, `SIGTERM`, `SIGHUP`: temporaries are removed,
/// then the process ends by the signal). A closed stdout (`| head -1`) ends
/// the run with 0, as the binary does; the host must ignore `SIGPIPE`, as
/// Rust's runtime and CPython both do.
pub fn run(args: impl IntoIterator<Item = OsString>) -> u8 {
    // Before any other thread exists: Ctrl-C must not leave temporary files behind.
    interrupt::install();
    let code = match Cli::try_parse_from(args) {
        Ok(cli) => dispatch(&cli),
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            code
        }
    };
    // The binary's runtime flushes stdout at exit; a host process does not.
    let _ = std::io::stdout().flush();
    interrupt::settle();
    code
}

/// Runs the subcommand and reports its error.
fn dispatch(cli: &Cli) -> u8 {
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
        Ok(status) => status.code(),
        Err(err) if is_broken_pipe(&err) => 0,
        Err(err) => {
            eprintln!("promptinclude: error: {err:#}");
            ExitStatus::Error.code()
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
