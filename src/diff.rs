//! `promptinclude diff`: the two sides from the command line, scanned in
//! parallel; the comparison and its text, JSON and Markdown reports are the
//! library's (`promptinclude::diff`). With `--agents`, each side's tree is
//! also audited for the agents (a revision checked out into a temporary
//! directory first: the agents' models look at real files).

use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use promptinclude::agents::disk::{Live, Rebased};
use promptinclude::agents::Agent;
use promptinclude::audit::agents::{Setup, TreeAudit};
use promptinclude::batch::Batch;
use promptinclude::diff::agents::AgentsDiff;
use promptinclude::diff::{PromptDiff, Report};
use promptinclude::{RootScan, Scanner};

use super::args::{DiffArgs, DiffFormat};
use super::checkout::{agents_at, checkout, physical_path};
use super::exit::ExitStatus;
use super::paint::{use_color, Paint};
use super::settings::{init_threads, resolver};

/// One side of the comparison.
enum Side {
    /// A git revision of ROOT.
    Rev(String),
    /// The files on disk under ROOT.
    Worktree,
}

impl Side {
    fn label(&self) -> &str {
        match self {
            Side::Rev(rev) => rev,
            Side::Worktree => "worktree",
        }
    }

    fn scan(&self, scanner: &Scanner, root: &Path) -> Result<RootScan> {
        let rev = match self {
            Side::Rev(rev) => Some(rev.as_str()),
            Side::Worktree => None,
        };
        let scan = scanner
            .scan_at(root, rev)
            .with_context(|| self.label().to_string())?;
        if !scan.is_dir {
            bail!("{}: {}: not a directory", self.label(), root.display());
        }
        Ok(scan)
    }

    /// The agents' chains on this side: the work tree at `root` itself, or
    /// the revision checked out into the empty directory `scratch`, seen at
    /// the tree's place (`place`, the root's physical path); and the
    /// physical path of the files it shows.
    fn agents(
        &self,
        agents: &[Agent],
        (root, place): (&Path, &Path),
        setup: &Setup<'_>,
        scratch: &Path,
    ) -> Result<(TreeAudit, PathBuf)> {
        let tree = match self {
            Side::Worktree => place.to_path_buf(),
            Side::Rev(rev) => {
                checkout(root, rev, scratch).with_context(|| self.label().to_string())?
            }
        };
        // Both sides seen with nothing above them but the user's own
        // directories, and at the tree's place: the agents name and count a
        // checkout's files by the paths the tree gives them.
        Ok((agents_at(agents, &tree, place, setup), tree))
    }
}

fn revision(arg: &OsString) -> Result<Side> {
    let rev = arg
        .to_str()
        .ok_or_else(|| anyhow!("revision {arg:?} is not valid UTF-8"))?;
    if rev.is_empty() {
        bail!("an empty revision");
    }
    Ok(Side::Rev(rev.to_string()))
}

/// BASE, HEAD and ROOT from the positional arguments.
fn sides(args: &DiffArgs) -> Result<(Side, Side, PathBuf)> {
    let root = |i: usize| args.args.get(i).map_or(PathBuf::from("."), PathBuf::from);
    match (args.worktree, args.args.len()) {
        (true, 1 | 2) => Ok((revision(&args.args[0])?, Side::Worktree, root(1))),
        (false, 2 | 3) => Ok((revision(&args.args[0])?, revision(&args.args[1])?, root(2))),
        (true, _) => bail!("with --worktree give BASE [ROOT] (try --help)"),
        (false, _) => bail!("give BASE HEAD [ROOT], or --worktree BASE [ROOT] (try --help)"),
    }
}

/// `promptinclude diff`.
pub fn diff(args: &DiffArgs) -> Result<ExitStatus> {
    init_threads(None)?;
    let (base, head, root) = sides(args)?;
    #[cfg(feature = "git")]
    if args.worktree && promptinclude::git::is_bare_repository(&root) {
        bail!(
            "{} is a bare repository: it has no work tree for --worktree to compare; \
             compare two revisions instead (promptinclude diff BASE HEAD {})",
            root.display(),
            root.display()
        );
    }
    let mut resolver = resolver(&args.config)?;
    // Project files on disk need not be those of either side's revision
    // (also with --worktree: both sides are read with one configuration).
    resolver.project_config = false;
    let batch = Batch::plan(std::slice::from_ref(&root), &resolver)?;
    let planned = batch.plan_root(&root);
    let scanner = planned.scanner().map_err(|e| anyhow!("{e}"))?;
    let (before, after) = rayon::join(|| base.scan(scanner, &root), || head.scan(scanner, &root));
    let (before, after) = (before?, after?);
    let diff = PromptDiff::between(&before, &after, scanner.config());
    let agents = args.agents.chosen();
    let agents_diff = if agents.is_empty() {
        None
    } else {
        Some(agents_diff(&agents, args, (&base, &head), &root)?)
    };
    let report = Report {
        root: &root,
        abs_root: before.abs_root.to_string_lossy().into_owned(),
        labels: (base.label(), head.label()),
        diff: &diff,
        context: args.context,
        agents: agents_diff.as_ref(),
    };
    // On a terminal, what a rule line holds is shown, not obeyed.
    let terminal = std::io::stdout().is_terminal();
    let text = match args.format {
        DiffFormat::Text => report.text(Paint(use_color(args.color)), terminal),
        DiffFormat::Json => report.json()?,
        DiffFormat::Markdown => report.markdown(terminal),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    let agents_changed = agents_diff.as_ref().is_some_and(AgentsDiff::changed);
    Ok(if diff.prompt_changed() || agents_changed {
        ExitStatus::Problems
    } else {
        ExitStatus::Success
    })
}

/// What the change does to `agents`' chains: both sides audited in
/// parallel, each revision checked out into its own temporary directory
/// (removed after).
fn agents_diff(
    agents: &[Agent],
    args: &DiffArgs,
    (base, head): (&Side, &Side),
    root: &Path,
) -> Result<AgentsDiff> {
    let home = args.agents.home_dir()?;
    let env = |name: &str| std::env::var_os(name);
    let setup = Setup {
        home: &home,
        env: &env,
        view: args.agents.view.into(),
    };
    let scratch = tempfile::Builder::new()
        .prefix("promptinclude-diff-")
        .tempdir()
        .context("cannot create a temporary directory for the checkouts")?;
    let place = physical_path(root)?;
    let (before, after) = rayon::join(
        || base.agents(agents, (root, &place), &setup, &scratch.path().join("base")),
        || head.agents(agents, (root, &place), &setup, &scratch.path().join("head")),
    );
    let ((before, base_files), (after, head_files)) = (before?, after?);
    let (read_before, read_after) = (
        Rebased::new(&Live, &place, &base_files),
        Rebased::new(&Live, &place, &head_files),
    );
    Ok(AgentsDiff::between(
        (&before, &read_before),
        (&after, &read_after),
    ))
}
