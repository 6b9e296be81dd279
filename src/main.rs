//! The `promptinclude` binary: the command is the library's
//! [`promptinclude_cli::run`] (parse arguments, run a subcommand, print
//! errors as one line, map the outcome to an exit code: 0 ok, 1 attention
//! needed, 2 error), which the Python package's `promptinclude` script runs too.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(promptinclude_cli::run(std::env::args_os()))
}
