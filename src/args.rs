//! Command-line arguments (clap derive). Validation only; the resolved
//! configuration is built in `settings`.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::builder::TypedValueParser as _;
use clap::{Args, Parser, Subcommand};
use promptinclude::config::Number;
use promptinclude::shard::Shard;

/// What every coding agent loads as context files, exactly, across whole
/// monorepos.
///
/// `context` and `audit --agents` tell byte for byte what Claude Code,
/// Codex, Copilot CLI, Gemini CLI, opencode, pi, Qwen Code and Agent Zero send
/// from their context files (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `QWEN.md`,
/// ...) wherever they start,
/// each model proven against the real agent. For Agent Zero's Prompt
/// Include plugin it is the exact, parallel scanner: it finds
/// `*.promptinclude.md` files under each ROOT, filters them with the
/// configured gitignore patterns, counts cl100k_base tokens, fits them into
/// the per-file and total budgets in alphabetical order of full path, and
/// prints the result — byte for byte what the plugin computes.
#[derive(Debug, Parser)]
#[command(
    name = "promptinclude",
    version,
    long_version = crate::version::long_version(),
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
    ///
    /// With --watch (needs --out-dir) it then keeps the files current: it
    /// waits for changes under the roots (inotify), rescans through a live
    /// index, and rewrites only the files whose contents would differ, the
    /// same bytes a fresh run writes; one line per update on stderr. Ctrl-C
    /// or SIGTERM ends it with exit status 0. Example:
    ///
    ///   promptinclude render --watch --out-dir sections/ repo-a repo-b
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
    /// Report on every rule file of each ROOT: status, tokens, budget share, warnings.
    ///
    /// Per root, a table of the discovered rule files (status, tokens counted,
    /// tokens included, share of the budget), the warnings (host-side
    /// expansions, symlinks leaving the root, nested repositories, rule files
    /// never discovered, blank or invalid files, cropping and skipping, limits
    /// outside the host's range), then a summary over all roots. The numbers
    /// are the scan's. With --json: JSON Lines, schema promptinclude.audit/2
    /// (docs/audit-schema.md). Exit 0, or 1 if a --fail-on/--max-tokens gate
    /// fails (one line per failure on stderr) or a root is not a directory.
    /// Example:
    ///
    ///   promptinclude audit --fail-on cropped,skipped,warning --max-tokens 6000 .
    Audit(AuditArgs),
    /// Write a CI artifact: per root the rendered section and the scan result,
    /// plus manifest.json (config used, sha256 of every rule file read and of the
    /// section, token totals, tool version).
    ///
    /// The bundle is built in a temporary directory next to DIR and renamed into
    /// place; an existing bundle at DIR is replaced only once the new one is
    /// complete. Example:
    ///
    ///   promptinclude bundle --out prompt-bundle repo-a repo-b
    ///
    /// With --watch it then keeps the bundle current: on each change under
    /// the roots it builds the bundle again and replaces DIR when (and only
    /// when) it would differ; one line per update on stderr. Ctrl-C or
    /// SIGTERM ends it with exit status 0.
    Bundle(BundleArgs),
    /// Check a bundle against its sources: re-scan each root as the bundle did
    /// and list the roots whose artifacts are stale, with the reason.
    ///
    /// Exit 0 if every root is current, 1 if any is stale, 2 on error. Example:
    ///
    ///   promptinclude verify prompt-bundle
    Verify(VerifyArgs),
    /// Show what a change does to the prompt: rule files added, removed,
    /// changed or with a new status, tokens before → after, then a unified
    /// diff of the rendered section.
    ///
    /// Compares revision BASE with revision HEAD of the git repository at
    /// ROOT (default: the current directory), or with --worktree BASE with the
    /// files on disk. Both sides are scanned with the same configuration
    /// (flags, --config, A0_SET_; project configuration files are not
    /// consulted, as with --rev). Exit 0 when the rendered section is
    /// unchanged, 1 when it changed (like `git diff --exit-code`), 2 on error.
    /// Examples:
    ///
    ///   promptinclude diff main HEAD
    ///
    ///   promptinclude diff --worktree HEAD
    ///
    ///   promptinclude diff --format markdown origin/main HEAD > comment.md
    Diff(DiffArgs),
    /// Show what another agent loads as context files when started in a directory.
    ///
    /// The files in the agent's load order, each with its size, its
    /// cl100k_base tokens and what happened to it (loaded; truncated at byte N
    /// of M; shadowed, and by which file; blank; unreadable; not read because
    /// the byte limit is used up), then the total against the agent's limit.
    /// --json prints the same as one document (schema promptinclude.context/1);
    /// --raw prints byte for byte the text the agent puts into its model
    /// request for these files, framing included, and nothing when it sends
    /// nothing. Each model reproduces the version --agent names, checked
    /// against that agent; docs/agents-context.md says what each reads.
    /// Examples:
    ///
    ///   promptinclude context --agent codex
    ///
    ///   promptinclude context --agent codex --cwd services/payments --raw
    ///
    ///   CODEX_HOME=/tmp/clean promptinclude context --agent codex --json
    Context(ContextArgs),
    /// Hook command for a coding agent: add the section to the model's context.
    ///
    /// Reads the agent's hook event (JSON on stdin), renders the section for
    /// the project (Claude Code: $CLAUDE_PROJECT_DIR, else the event's `cwd`;
    /// Codex: the event's `cwd`) and prints it in the form the agent adds to
    /// the model's context: on SessionStart (every source, including Claude
    /// Code's `compact`, so the rules come back after compaction) the whole
    /// section; on UserPromptSubmit, only when rule files changed since the
    /// section was last given in this session, a change notice with the new
    /// section. Fails open: on any error it prints nothing, exits 0 and
    /// logs the reason to stderr and to promptinclude/hook.log in the
    /// agent's directory (~/.claude or ~/.codex). Installed by `init`;
    /// see docs/agents.md. Example (what the agent runs):
    ///
    ///   echo '{"hook_event_name":"SessionStart","source":"startup","cwd":"'$PWD'"}' |
    ///     promptinclude hook claude-code
    Hook(HookArgs),
    /// Install the hook into a coding agent's settings (merging, no duplicates).
    ///
    /// Claude Code: adds SessionStart and UserPromptSubmit entries running
    /// `promptinclude hook claude-code` to .claude/settings.json (--project,
    /// the default, in the current directory) or ~/.claude/settings.json
    /// (--user). Codex: the same in .codex/hooks.json or ~/.codex/hooks.json.
    /// Everything else in the file is kept as it was; an existing
    /// promptinclude entry is updated in place, never added twice. The file
    /// is replaced atomically. Examples:
    ///
    ///   promptinclude init claude-code            # this project, .claude/settings.json
    ///
    ///   promptinclude init codex --user --dry-run # show the change to ~/.codex/hooks.json
    Init(InitArgs),
    /// Model Context Protocol server on stdio (for Cursor, Zed, Claude Desktop, ...).
    ///
    /// Offers the tool `prompt_includes` (the rendered section of a root, or
    /// its audit), one resource per rule file of each root (with its status
    /// and tokens) and the prompt `prompt_includes` that injects the
    /// section. Roots are the client's `roots`, or --root when given (or
    /// when the client has none: the current directory). Example client
    /// configuration:
    ///
    ///   {"mcpServers": {"promptinclude": {"command": "promptinclude", "args": ["mcp"]}}}
    #[cfg(feature = "mcp")]
    Mcp(McpArgs),
    /// Put the outputs of a sharded run (--shard K/N, or any split of the
    /// roots into disjoint sets) back together: exactly what one run over all
    /// the roots prints or writes.
    ///
    /// Records are put back in the order of the root list (--roots-from, the
    /// list every shard was given); a root no input holds is an error, unless
    /// --partial (then the output is itself an input to a later merge: merges
    /// of merges give the same bytes). Example, after seven `scan --shard K/7`
    /// jobs:
    ///
    ///   promptinclude merge scan --roots-from roots.txt shard-*.jsonl > scan.jsonl
    ///
    ///   promptinclude merge audit --roots-from roots.txt audit-*.jsonl > audit.jsonl
    ///
    ///   promptinclude merge render --roots-from roots.txt --out sections/ out-0/ out-1/
    ///
    ///   promptinclude merge bundle --roots-from roots.txt --out bundle/ bundle-0/ bundle-1/
    #[command(subcommand)]
    Merge(MergeCommand),
    /// Print the completion script for a shell.
    ///
    /// Generated from the same definitions as this help, so it always knows
    /// every subcommand and flag of this version. Install it where the shell
    /// looks:
    ///
    ///   promptinclude completions bash > ~/.local/share/bash-completion/completions/promptinclude
    ///
    ///   promptinclude completions zsh > ~/.zfunc/_promptinclude   # with fpath+=(~/.zfunc)
    ///
    ///   promptinclude completions fish > ~/.config/fish/completions/promptinclude.fish
    Completions(CompletionsArgs),
    /// Print the man page (roff), or write one page per subcommand.
    ///
    /// `promptinclude man` is the page for the command, listing every
    /// subcommand; `promptinclude man audit` is the page of one
    /// (promptinclude-audit(1)); --out-dir writes them all. Examples:
    ///
    ///   promptinclude man | man -l -
    ///
    ///   promptinclude man --out-dir ~/.local/share/man/man1
    Man(ManArgs),
}

/// `promptinclude completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to print the script for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `promptinclude man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (`merge scan` for a nested one);
    /// none for the command's own page.
    pub subcommand: Vec<String>,
    /// Write every page (promptinclude.1, promptinclude-scan.1, ...) into
    /// this directory instead of printing one.
    #[arg(long, value_name = "DIR", conflicts_with = "subcommand")]
    pub out_dir: Option<PathBuf>,
}

/// A coding agent `hook` and `init` know.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Agent {
    /// Anthropic's Claude Code (settings.json hooks).
    ClaudeCode,
    /// OpenAI's Codex CLI (hooks.json).
    Codex,
}

impl Agent {
    /// The name on the command line (`hook claude-code`).
    pub fn name(self) -> &'static str {
        match self {
            Agent::ClaudeCode => "claude-code",
            Agent::Codex => "codex",
        }
    }

    /// The agent's directory name in a home or a project: `.claude`, `.codex`.
    pub fn dot_dir(self) -> &'static str {
        match self {
            Agent::ClaudeCode => ".claude",
            Agent::Codex => ".codex",
        }
    }

    /// The agent's own directory: `$CLAUDE_CONFIG_DIR` or `~/.claude`,
    /// `$CODEX_HOME` or `~/.codex`; `None` when neither is set.
    pub fn home(self) -> Option<std::path::PathBuf> {
        let var = match self {
            Agent::ClaudeCode => "CLAUDE_CONFIG_DIR",
            Agent::Codex => "CODEX_HOME",
        };
        let set = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        set(var)
            .map(std::path::PathBuf::from)
            .or_else(|| set("HOME").map(|home| std::path::Path::new(&home).join(self.dot_dir())))
    }
}

/// `hook` arguments.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent whose hook event is on stdin.
    #[arg(value_name = "AGENT")]
    pub agent: Agent,
    /// Give up after SECS seconds (printing nothing, a line in the log), so a
    /// huge tree never holds up the agent; 0: no limit.
    #[arg(long, value_name = "SECS", default_value_t = 5.0)]
    pub timeout: f64,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `init` arguments.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// The agent to install the hook into.
    #[arg(value_name = "AGENT")]
    pub agent: Agent,
    /// Install for this project: .claude/settings.json or .codex/hooks.json
    /// under the current directory (the default).
    #[arg(long, conflicts_with = "user")]
    pub project: bool,
    /// Install for every project of this user: ~/.claude/settings.json
    /// ($CLAUDE_CONFIG_DIR) or ~/.codex/hooks.json ($CODEX_HOME).
    #[arg(long)]
    pub user: bool,
    /// Print the change as a diff and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The promptinclude command the hook runs (default: the absolute path of
    /// this binary). Give `promptinclude` for a settings file shared through
    /// the repository, where the binary is on everyone's PATH.
    #[arg(long, value_name = "CMD")]
    pub bin: Option<String>,
}

/// `mcp` arguments.
#[cfg(feature = "mcp")]
#[derive(Debug, Args)]
pub struct McpArgs {
    /// A project root to serve (repeatable). Given, the client's `roots` are
    /// not asked for; otherwise they are, and the current directory stands
    /// in when the client has none.
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// What `merge` combines.
#[derive(Debug, Subcommand)]
pub enum MergeCommand {
    /// `scan` outputs (JSON Lines) into one, on stdout. Exit 2 if a root has
    /// an error record, as the unsharded scan (a root that is not a
    /// directory, exit 1 there, looks like an empty one in the output: its
    /// shard's job exits 1).
    Scan(MergeStreamArgs),
    /// `audit --json` outputs into one (root and error records in input
    /// order, then the summary over all), on stdout. The exit status and the
    /// gate lines on stderr are the unsharded audit's.
    Audit(MergeStreamArgs),
    /// `render --out-dir` directories into one (section files and index.json).
    Render(MergeDirArgs),
    /// `bundle` directories into one bundle (one manifest.json).
    Bundle(MergeDirArgs),
}

/// The root list and the inputs of a merge.
#[derive(Debug, Args)]
pub struct MergeInputs {
    /// The root list every shard was given, one per line ('-' = standard input).
    #[arg(long, value_name = "FILE")]
    pub roots_from: PathBuf,
    /// Let roots be missing from every input (merge part of the shards now,
    /// the rest later).
    #[arg(long)]
    pub partial: bool,
}

/// `merge scan` and `merge audit` arguments.
#[derive(Debug, Args)]
pub struct MergeStreamArgs {
    #[command(flatten)]
    pub inputs: MergeInputs,
    /// The shard outputs (files), in any order.
    #[arg(value_name = "INPUT", required = true)]
    pub files: Vec<PathBuf>,
}

/// `merge render` and `merge bundle` arguments.
#[derive(Debug, Args)]
pub struct MergeDirArgs {
    #[command(flatten)]
    pub inputs: MergeInputs,
    /// The directory to write.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The shard outputs (directories), in any order.
    #[arg(value_name = "INPUT", required = true)]
    pub dirs: Vec<PathBuf>,
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
    #[arg(long, value_name = "N", value_parser = parse_number, allow_negative_numbers = true, help_heading = "Configuration")]
    pub max_depth: Option<Number>,
    /// Override `max_file_tokens` (per-file cap before cropping).
    #[arg(long, value_name = "N", value_parser = parse_number, allow_negative_numbers = true, help_heading = "Configuration")]
    pub max_file_tokens: Option<Number>,
    /// Override `max_file_count` (most files included).
    #[arg(long, value_name = "N", value_parser = parse_number, allow_negative_numbers = true, help_heading = "Configuration")]
    pub max_file_count: Option<Number>,
    /// Override `max_total_tokens` (budget for paths and contents).
    #[arg(long, value_name = "N", value_parser = parse_number, allow_negative_numbers = true, help_heading = "Configuration")]
    pub max_total_tokens: Option<Number>,
    /// Take `gitignore` from this file (its whole text; an empty file means no filtering).
    #[arg(long, value_name = "FILE", help_heading = "Configuration")]
    pub gitignore_file: Option<PathBuf>,
    /// Agent profile whose project configuration applies:
    /// ROOT/.a0proj/agents/PROFILE/plugins/_promptinclude/config.json
    /// (without it, ROOT/.a0proj/plugins/_promptinclude/config.json).
    #[arg(long, value_name = "PROFILE", value_parser = parse_profile, help_heading = "Configuration")]
    pub agent_profile: Option<String>,
    /// Ignore project configuration files under each ROOT's .a0proj/.
    ///
    /// Without this flag each ROOT's project file, when it exists, replaces
    /// --config and the defaults as a whole (a key it lacks takes the default;
    /// a missing `gitignore` means no filtering), as the host does; the
    /// override flags above still apply on top.
    #[arg(long, help_heading = "Configuration")]
    pub no_project_config: bool,
    /// Ignore the host's `A0_SET__promptinclude__<key>` environment variables.
    ///
    /// Without this flag, when neither --config nor a project file applies,
    /// each default is replaced by `A0_SET__promptinclude__<key>` (or its
    /// upper-case form) from the environment, converted as the host does
    /// (`int(value.strip())`; a value that does not convert keeps the default).
    #[arg(long, help_heading = "Configuration")]
    pub no_env: bool,
}

/// Which symlinked rule files are read (see `docs/security.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LinksArg {
    /// Every link, wherever it leads, as the reference does.
    Follow,
    /// Only files whose real path stays inside the root and outside `.git`,
    /// and of links only those git's HEAD commits, with the file they reach
    /// as HEAD holds it; the others are withheld (status `withheld`, with
    /// the reason).
    Inside,
}

/// How rule files are read: as the reference reads them (the default for
/// `scan`, `render`, `audit`, `bundle`), or the safe subset (the default for
/// what agents run unattended: `hook`, `mcp`).
#[derive(Debug, Args, Clone, Default)]
pub struct ReadArgs {
    /// Which symlinked rule files are read: `follow` every link, as the
    /// reference does, or only those `inside` the root that git commits (a
    /// link to ~/.ssh/id_rsa or /proc/self/environ, a committed link to a
    /// gitignored .env or to a file changed since the commit, any link
    /// outside a git repository, a linked directory outside the root, and
    /// anything in .git/ are withheld). Default: `follow`, except for `hook`
    /// and `mcp`, where it is `inside`.
    #[arg(long, value_name = "WHICH", help_heading = "Reading")]
    pub links: Option<LinksArg>,
    /// Withhold rule files larger than N bytes, unread (0: no cap). Default:
    /// no cap, except for `hook` and `mcp` (4194304, 4 MiB).
    #[arg(long, value_name = "N", help_heading = "Reading")]
    pub max_file_bytes: Option<u64>,
    /// For `hook` and `mcp`: let a repository's own configuration (.a0proj)
    /// that widens `name_pattern` include files git does not commit. Without
    /// it, the files such a pattern adds are read only when git's HEAD holds
    /// them as they are on disk (a committed config cannot point the hook at
    /// a gitignored .env, or at a committed template the user filled in).
    #[arg(long, help_heading = "Reading")]
    pub trust_project_patterns: bool,
}

impl ReadArgs {
    /// The policy these flags choose, from the command's defaults:
    /// `unattended` for `hook` and `mcp`, else the reference's.
    pub fn policy(&self, unattended: bool) -> promptinclude::trust::ReadPolicy {
        use promptinclude::trust::{Links, ReadPolicy};
        let mut policy = if unattended {
            ReadPolicy::unattended()
        } else {
            ReadPolicy::reference()
        };
        match self.links {
            Some(LinksArg::Follow) => {
                policy.links = Links::Follow;
                policy.refuse_special = false;
            }
            Some(LinksArg::Inside) => {
                policy.links = Links::Inside;
                policy.refuse_special = true;
            }
            None => {}
        }
        if let Some(cap) = self.max_file_bytes {
            policy.max_file_bytes = (cap > 0).then_some(cap);
        }
        if self.trust_project_patterns {
            policy.committed_only_when_widened = false;
        }
        policy
    }
}

/// A limit as Python would take it: an integer of any size, or a float
/// (`2.5`, `1e3`, `inf`, `nan`).
fn parse_number(text: &str) -> Result<Number, String> {
    Number::parse_decimal_int(text)
        .or_else(|| text.parse::<f64>().ok().map(Number::Float))
        .ok_or_else(|| format!("{text:?} is not a number"))
}

/// Most worker threads `-j` accepts.
pub const MAX_THREADS: usize = 256;

fn parse_threads(text: &str) -> Result<NonZeroUsize, String> {
    let n: NonZeroUsize = text
        .parse()
        .map_err(|_| format!("{text:?} is not a whole number of at least 1"))?;
    if n.get() > MAX_THREADS {
        return Err(format!("at most {MAX_THREADS} threads"));
    }
    Ok(n)
}

fn parse_profile(profile: &str) -> Result<String, String> {
    promptinclude::project::validate_profile(profile)
        .map(|()| profile.to_string())
        .map_err(|e| e.to_string())
}

/// Options for choosing roots and parallelism.
#[derive(Debug, Args, Clone)]
pub struct RootArgs {
    /// Directories to scan. Default: the current directory (when no --roots-from).
    /// An empty ROOT is the current directory, as `os.path.abspath("")` is.
    #[arg(value_name = "ROOT", value_parser = clap::builder::OsStringValueParser::new().map(PathBuf::from))]
    pub roots: Vec<PathBuf>,
    /// Read more roots from FILE, one per line ('-' = standard input).
    #[arg(long, value_name = "FILE")]
    pub roots_from: Option<PathBuf>,
    /// Worker threads, 1 to 256 (default: the number of CPUs). Output is identical for any value.
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<NonZeroUsize>,
    /// Scan revision REV (HEAD, a branch, tag, commit, HEAD~3, ...) of each
    /// ROOT read as a git repository (a work tree or a bare repository),
    /// without a checkout: the result a fresh checkout of REV at ROOT's path
    /// would give. In a work tree only the committed revision is seen
    /// (uncommitted and untracked files are not). Project configuration files
    /// are not consulted (as with --no-project-config).
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// Take only shard K of N of the roots (K from 0 to N-1), for one job of
    /// a sharded run; `promptinclude merge` puts the N outputs back together.
    /// A root's shard depends only on the root as given (SHA-256 of its
    /// bytes, then jump consistent hashing): every process of the run must
    /// get the same root list, and adding roots moves no other root. Example:
    ///
    ///   promptinclude scan --shard 2/7 --roots-from roots.txt > shard-2.jsonl
    #[arg(long, value_name = "K/N", value_parser = parse_shard, help_heading = "Sharding")]
    pub shard: Option<Shard>,
    /// Like --shard K/N with K from $JOB_COMPLETION_INDEX (set in each pod of
    /// a Kubernetes Indexed Job) and N given here.
    #[arg(
        long,
        value_name = "N",
        conflicts_with = "shard",
        help_heading = "Sharding"
    )]
    pub shard_from_env: Option<u64>,
    /// The roots given are a slice of a longer list, starting at its position
    /// N (from 0): render --out-dir and bundle name each root's files by its
    /// place in the whole list, as one run over the whole list does, so that
    /// runs over consecutive slices merge (`promptinclude merge`) into that
    /// run's bytes. python -m promptinclude.dask bundle runs its partitions so.
    #[arg(long, value_name = "N", default_value_t = 0, help_heading = "Sharding")]
    pub list_offset: usize,
}

fn parse_shard(text: &str) -> Result<Shard, String> {
    Shard::parse(text).map_err(|e| e.to_string())
}

/// `scan` arguments.
#[derive(Debug, Args)]
pub struct ScanArgs {
    #[command(flatten)]
    pub roots: RootArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `render` arguments.
#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub roots: RootArgs,
    /// Write one section file per root into DIR, plus DIR/index.json.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Print one JSON object `{"section": TEXT, "scan": RECORD}` instead of
    /// the section: the section and the scan record from one walk (for
    /// integrations that need both, such as the pi extension).
    #[arg(long, conflicts_with = "out_dir")]
    pub json: bool,
    #[command(flatten)]
    pub watch: WatchArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `--watch` and `--debounce` (`render --out-dir`, `bundle`).
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// After writing, keep watching the roots and rewrite the output whenever
    /// it would change (the same bytes a fresh run writes), until Ctrl-C or
    /// SIGTERM (exit status 0). One line per update on stderr. Not with --rev.
    #[arg(long, help_heading = "Watching")]
    pub watch: bool,
    /// With --watch: after the first change, wait this many milliseconds for
    /// more before rescanning (one update for a burst of changes).
    #[arg(
        long,
        value_name = "MS",
        default_value_t = 100,
        requires = "watch",
        help_heading = "Watching"
    )]
    pub debounce: u64,
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

/// What `audit --fail-on` can fail on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailOn {
    /// A rule file was cropped.
    Cropped,
    /// A rule file was left out by the budget (skipped, not reached, over budget).
    Skipped,
    /// Any warning at all.
    Warning,
    /// A warning of this kind (`symlink_outside_root`, `withheld`, …).
    Kind(promptinclude::audit::warnings::WarningKind),
    /// An `--agents` warning of this kind (`truncated`, `dead_scope`, …).
    AgentKind(promptinclude::audit::agents::AgentWarningKind),
    /// A `hidden_text` warning (the plain audit's or the agents') of one
    /// class of characters: `hidden_text:tag`, `hidden_text:bidi`, …
    HiddenClass(&'static str),
}

fn parse_fail_on(text: &str) -> Result<FailOn, String> {
    use promptinclude::audit::agents::AgentWarningKind;
    use promptinclude::audit::warnings::WarningKind;
    let kind = WarningKind::ALL
        .into_iter()
        .find(|kind| kind.as_str() == text)
        .map(FailOn::Kind);
    let agent_kind = || {
        AgentWarningKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
            .map(FailOn::AgentKind)
    };
    if let Some(class) = text.strip_prefix("hidden_text:") {
        let classes = || promptinclude::audit::hidden::class_ids();
        return classes()
            .find(|id| *id == class)
            .map(FailOn::HiddenClass)
            .ok_or_else(|| {
                let ids: Vec<&str> = classes().collect();
                format!(
                    "expected hidden_text:CLASS, CLASS one of {}",
                    ids.join(", ")
                )
            });
    }
    match text {
        "cropped" => Ok(FailOn::Cropped),
        "skipped" => Ok(FailOn::Skipped),
        "warning" => Ok(FailOn::Warning),
        _ => kind.or_else(agent_kind).ok_or_else(|| {
            let kinds: Vec<&str> = WarningKind::ALL.iter().map(|k| k.as_str()).collect();
            let agent_kinds: Vec<&str> =
                AgentWarningKind::ALL.iter().map(|k| k.as_str()).collect();
            format!(
                "expected cropped, skipped, warning, a warning kind ({}), hidden_text:CLASS or, with --agents, an agent warning kind ({})",
                kinds.join(", "),
                agent_kinds.join(", ")
            )
        }),
    }
}

/// One item of `audit --agents`: an agent, or `all` (`None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentChoice(pub Option<promptinclude::agents::Agent>);

fn parse_agent_choice(text: &str) -> Result<AgentChoice, String> {
    use promptinclude::agents::Agent;
    if text == "all" {
        return Ok(AgentChoice(None));
    }
    Agent::from_name(text)
        .map(|agent| AgentChoice(Some(agent)))
        .ok_or_else(|| format!("expected all or some of {}", Agent::names()))
}

/// `--agents` and `--home` (`audit`, `diff`).
#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// What other agents load across the tree too: `all`, or a
    /// comma-separated list of agent-zero, claude-code, codex, copilot-cli,
    /// gemini, opencode, pi, qwen-code.
    /// For each agent, every distinct load chain (the directories where it
    /// loads the same files) with its cost against the agent's limit; then
    /// warnings: truncated, shadowed, dead_scope, bad_front_matter,
    /// unresolved_import, import_too_deep, import_cycle, duplicate,
    /// over_recommended, not_shared, hidden_text, link_as_text,
    /// stale_reference (each an
    /// `audit --fail-on` gate). Cursor's and Copilot's rules are linted from
    /// their documentation only. With `audit --rev REV`: what a fresh clone
    /// of REV loads. `diff` shows what the change does to the chains and
    /// warnings.
    #[arg(
        long = "agents",
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = parse_agent_choice,
        help_heading = "Agents"
    )]
    pub choices: Vec<AgentChoice>,
    /// The home directory the agents read their user files from (default: $HOME).
    #[arg(
        long,
        value_name = "DIR",
        requires = "choices",
        help_heading = "Agents"
    )]
    pub home: Option<PathBuf>,
    /// Whose view of the tree, for the agents with folder trust (Gemini
    /// CLI loads no project file in a folder the user has not trusted):
    /// `trusted`, the project's own developers', who have trusted it (the
    /// default); `first-open`, a folder opened for the first time (trust as
    /// GEMINI_CLI_TRUST_WORKSPACE and trustedFolders.json say).
    #[arg(
        long,
        value_name = "VIEW",
        default_value = "trusted",
        requires = "choices",
        help_heading = "Agents"
    )]
    pub view: ViewArg,
}

/// `--view`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ViewArg {
    /// The project's own developers', who have trusted it.
    Trusted,
    /// A folder opened for the first time.
    FirstOpen,
}

impl From<ViewArg> for promptinclude::audit::agents::View {
    fn from(view: ViewArg) -> Self {
        match view {
            ViewArg::Trusted => promptinclude::audit::agents::View::Trusted,
            ViewArg::FirstOpen => promptinclude::audit::agents::View::FirstOpen,
        }
    }
}

impl AgentsArgs {
    /// The agents named, each once, in `Agent::ALL`'s order (none without
    /// `--agents`).
    pub fn chosen(&self) -> Vec<promptinclude::agents::Agent> {
        let all = self.choices.iter().any(|c| c.0.is_none());
        promptinclude::agents::Agent::ALL
            .into_iter()
            .filter(|a| all || self.choices.iter().any(|c| c.0 == Some(*a)))
            .collect()
    }

    /// The home directory the agents read their user files from: `--home`,
    /// else `$HOME` (an error when that is not set and an agent is chosen).
    pub fn home_dir(&self) -> anyhow::Result<PathBuf> {
        use anyhow::Context as _;
        match &self.home {
            Some(home) => std::path::absolute(home).context("cannot read the current directory"),
            None if self.choices.is_empty() => Ok(PathBuf::new()),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .context("HOME is not set: give --home DIR"),
        }
    }
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorWhen {
    /// Only when standard output is a terminal.
    #[default]
    Auto,
    /// Always (unless NO_COLOR is set).
    Always,
    /// Never.
    Never,
}

/// `audit` arguments.
#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub roots: RootArgs,
    /// JSON Lines (schema promptinclude.audit/2): one record per root, then a summary.
    #[arg(long)]
    pub json: bool,
    /// Print every record in the readable report: with --agents, each
    /// agent's every chain and every warning, not the summary (its
    /// headlines and findings grouped by kind, agent and cause).
    #[arg(short, long, conflicts_with = "json")]
    pub verbose: bool,
    /// Exit 1 when any root has a cropped file (`cropped`), a file left out
    /// by the budget (`skipped`), any warning (`warning`), a warning of a
    /// given kind, e.g. `symlink_outside_root` (a committed link that reads
    /// a file outside the repository), or hidden text of one class:
    /// `hidden_text:tag` (invisible Unicode tag characters),
    /// `hidden_text:bidi` (bidirectional controls), `hidden_text:zero_width`,
    /// `hidden_text:format`, `hidden_text:variation_selector`.
    /// Comma-separated.
    #[arg(
        long,
        value_name = "WHAT",
        value_delimiter = ',',
        value_parser = parse_fail_on,
        help_heading = "Gates"
    )]
    pub fail_on: Vec<FailOn>,
    /// Exit 1 when a root includes more than N tokens of rule-file text.
    #[arg(long, value_name = "N", help_heading = "Gates")]
    pub max_tokens: Option<u64>,
    /// Colour the report: auto (on a terminal), always, never. NO_COLOR always wins.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: ColorWhen,
    /// Also write the report as one self-contained HTML page to FILE (written
    /// atomically; works offline; no rule-file content unless
    /// --html-include-content).
    #[arg(long, value_name = "FILE", help_heading = "HTML report")]
    pub html: Option<PathBuf>,
    /// Embed each root's rendered section in the HTML page (collapsed).
    #[arg(long, requires = "html", help_heading = "HTML report")]
    pub html_include_content: bool,
    /// Also write the warnings (with --agents, the agents' too) as one SARIF
    /// 2.1.0 log to FILE, for code scanning: each at its file and line, its
    /// kind as the rule, with a level and a stable fingerprint; at most
    /// 5,000 results, the most severe (written atomically).
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Also tell, per root, what a live index (the MCP server, `--watch`,
    /// the Python `Index`) would keep and what it would look at again on
    /// every scan, and why (directories holding links, network or FUSE file
    /// systems, the watch limit). Not with --rev.
    #[arg(long, conflicts_with = "rev")]
    pub live_index: bool,
    #[command(flatten)]
    pub agents: AgentsArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `bundle` arguments.
#[derive(Debug, Args)]
pub struct BundleArgs {
    #[command(flatten)]
    pub roots: RootArgs,
    /// The bundle directory to write (replaced atomically if it holds a bundle).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    #[command(flatten)]
    pub watch: WatchArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
    #[command(flatten)]
    pub read: ReadArgs,
}

/// `diff` output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum DiffFormat {
    /// For a terminal: the changed rule files, the totals, then the section's unified diff.
    #[default]
    Text,
    /// One JSON object (schema promptinclude.diff/2).
    Json,
    /// A pull-request comment: a table and the section diff in collapsible details.
    Markdown,
}

/// `diff` arguments.
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// BASE HEAD [ROOT]: two revisions of the git repository at ROOT
    /// (default: the current directory). With --worktree: BASE [ROOT].
    #[arg(
        value_name = "BASE HEAD [ROOT]",
        required = true,
        num_args = 1..=3,
        value_parser = clap::builder::OsStringValueParser::new()
    )]
    pub args: Vec<std::ffi::OsString>,
    /// Compare BASE with the files on disk at ROOT (modified and untracked
    /// files included) instead of with a second revision.
    #[arg(long)]
    pub worktree: bool,
    /// Output format.
    #[arg(long, value_name = "FORMAT", default_value = "text")]
    pub format: DiffFormat,
    /// Lines of context around each change in the section diff.
    #[arg(short = 'U', long = "unified", value_name = "N", default_value_t = 3)]
    pub context: usize,
    /// Colour the text output: auto (on a terminal), always, never. NO_COLOR always wins.
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    pub color: ColorWhen,
    #[command(flatten)]
    pub agents: AgentsArgs,
    #[command(flatten)]
    pub config: ConfigArgs,
}

/// An agent `context` models: one of the library's registry, in its order
/// ([`promptinclude::agents::Agent::ALL`]), each offered with its product
/// name and the version modelled.
#[derive(Clone, Copy, Debug)]
pub struct ContextAgent(pub promptinclude::agents::Agent);

impl clap::ValueEnum for ContextAgent {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: std::sync::LazyLock<Vec<ContextAgent>> = std::sync::LazyLock::new(|| {
            promptinclude::agents::Agent::ALL
                .into_iter()
                .map(ContextAgent)
                .collect()
        });
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let agent = self.0;
        Some(
            clap::builder::PossibleValue::new(agent.name()).help(format!(
                "{} {}",
                agent.product(),
                agent.version()
            )),
        )
    }
}

/// `context` arguments.
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The agent to model.
    #[arg(long, value_name = "AGENT")]
    pub agent: ContextAgent,
    /// The directory the agent is started in (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The user's home directory (default: $HOME). The agent's own variables
    /// (CODEX_HOME; CLAUDE_CONFIG_DIR, CLAUDE_CODE_DISABLE_CLAUDE_MDS;
    /// GEMINI_CLI_HOME, GEMINI_CLI_TRUST_WORKSPACE; PI_CODING_AGENT_DIR) are read
    /// from the environment, as the agent reads them.
    #[arg(long, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// One JSON document (schema promptinclude.context/1).
    #[arg(long, conflicts_with = "raw")]
    pub json: bool,
    /// Byte for byte what the agent sends for these files (nothing if it sends nothing).
    #[arg(long)]
    pub raw: bool,
}

/// `verify` arguments.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The bundle directory (or its manifest.json).
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
    /// Worker threads, 1 to 256 (default: the number of CPUs).
    #[arg(short = 'j', long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<NonZeroUsize>,
}
