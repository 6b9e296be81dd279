//! Command-line arguments (clap derive). Validation only; the resolved
//! configuration is built in `cli::settings`.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Exact, parallel indexer for Agent Zero "Prompt Include" rule files.
///
/// Finds `*.promptinclude.md` files under each ROOT, filters them with the
/// configured gitignore patterns, counts cl100k_base tokens, fits them into
/// the per-file and total budgets in alphabetical order of full path, and
/// prints the result — byte for byte what the Agent Zero plugin computes.
#[derive(Debug, Parser)]
#[command(
    name = "promptinclude",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scan roots and print one JSON object per root (JSON Lines, input order).
    ///
    /// Each line is {"root": ROOT as given, "files": [{"path", "content",
    /// "token_count", "status"}...], "skipped_count": N}, exactly the
    /// reference's result. Example:
    ///
    ///   promptinclude scan ~/src/app ~/src/lib
    ///
    ///   find ~/src -maxdepth 1 -mindepth 1 -type d | promptinclude scan --roots-from -
    Scan(ScanArgs),
    /// Print the system-prompt section the host agent would inject.
    ///
    /// With one ROOT the section goes to stdout. With --out-dir, each ROOT's
    /// section is written to its own file, plus index.json mapping roots to
    /// files (written atomically: temporary files, then rename). Example:
    ///
    ///   promptinclude render . > section.md
    ///
    ///   promptinclude render --out-dir sections/ repo-a repo-b
    Render(RenderArgs),
    /// Tell whether the configured patterns exclude paths (like `git check-ignore -v`).
    ///
    /// PATHs are relative to a root, with '/' separators; a trailing '/' marks a
    /// directory, which is pruned if the spec matches `rel` or `rel/`, as the
    /// scanner does. Prints `SOURCE:LINE:PATTERN<TAB>PATH` for every path a
    /// pattern decides (with -v also for non-matching paths, as `::<TAB>PATH`).
    /// Exit 0 if any path is ignored, 1 if none, 2 on error. Example:
    ///
    ///   promptinclude check-ignore node_modules/ docs/a.promptinclude.md
    ///
    ///   git ls-files | promptinclude check-ignore --stdin --json
    CheckIgnore(CheckIgnoreArgs),
}

/// Options that choose the configuration (shared by every subcommand that scans).
#[derive(Debug, Args, Clone, Default)]
pub struct ConfigArgs {
    /// Configuration file (YAML or JSON) with any of the six keys; keys left
    /// out keep the defaults. The plugin's default_config.yaml loads as is.
    #[arg(long, value_name = "FILE", help_heading = "Configuration")]
    pub config: Option<PathBuf>,
    /// Override `name_pattern` (fnmatch, matched against file names).
    #[arg(long, value_name = "GLOB", help_heading = "Configuration")]
    pub name_pattern: Option<String>,
    /// Override `max_depth` (directories this deep contribute nothing; root = 0).
    #[arg(long, value_name = "N", help_heading = "Configuration")]
    pub max_depth: Option<u32>,
    /// Override `max_file_tokens` (per-file cap before cropping).
    #[arg(long, value_name = "N", help_heading = "Configuration")]
    pub max_file_tokens: Option<u32>,
    /// Override `max_file_count` (most files included).
    #[arg(long, value_name = "N", help_heading = "Configuration")]
    pub max_file_count: Option<u32>,
    /// Override `max_total_tokens` (budget for paths and contents).
    #[arg(long, value_name = "N", help_heading = "Configuration")]
    pub max_total_tokens: Option<u32>,
    /// Take `gitignore` from this file (its whole text; an empty file means no filtering).
    #[arg(long, value_name = "FILE", help_heading = "Configuration")]
    pub gitignore_file: Option<PathBuf>,
}

/// Options for choosing roots and parallelism.
#[derive(Debug, Args, Clone)]
pub struct RootArgs {
    /// Directories to scan. Default: the current directory (when no --roots-from).
    #[arg(value_name = "ROOT")]
    pub roots: Vec<PathBuf>,
    /// Read more roots from FILE, one per line ('-' = standard input).
    #[arg(long, value_name = "FILE")]
    pub roots_from: Option<PathBuf>,
    /// Worker threads (default: the number of CPUs). Output is identical for any value.
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<NonZeroUsize>,
}

/// `scan` arguments.
#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub roots: RootArgs,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigArgs,
}

/// `render` arguments.
#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    #[allow(missing_docs)]
    pub roots: RootArgs,
    /// Write one section file per root into DIR, plus DIR/index.json.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub config: ConfigArgs,
}

/// `check-ignore` arguments.
#[derive(Debug, Args)]
pub struct CheckIgnoreArgs {
    /// Paths relative to a root ('/' separators; trailing '/' = directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<String>,
    /// Configuration file whose `gitignore` key to use (default: the built-in list).
    #[arg(long, value_name = "FILE", conflicts_with = "gitignore_file")]
    pub config: Option<PathBuf>,
    /// Take the patterns from this gitignore-style file.
    #[arg(long, value_name = "FILE")]
    pub gitignore_file: Option<PathBuf>,
    /// One JSON object per input path: {"path", "ignored", "pattern", "line"}.
    #[arg(long)]
    pub json: bool,
    /// Read paths from standard input too (newline-separated; NUL with -z).
    #[arg(long)]
    pub stdin: bool,
    /// Paths on standard input and output records are NUL-terminated.
    #[arg(short = 'z')]
    pub nul: bool,
    /// Also print paths no pattern matched (as `::<TAB>PATH`).
    #[arg(short = 'n', long = "non-matching")]
    pub non_matching: bool,
}
