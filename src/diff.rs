//! `promptinclude diff`: the two sides from the command line, scanned in
//! parallel; the comparison and its text, JSON and Markdown reports are the
//! library's (`promptinclude::diff`).

use std::ffi::OsString;
use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use promptinclude::batch::Batch;
use promptinclude::diff::{PromptDiff, Report};
use promptinclude::{RootScan, Scanner};

use super::args::{DiffArgs, DiffFormat};
use super::exit::ExitStatus;
use super::paint::{use_color, Paint};
use super::settings::resolver;

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
    let report = Report {
        root: &root,
        abs_root: before.abs_root.to_string_lossy().into_owned(),
        labels: (base.label(), head.label()),
        diff: &diff,
        context: args.context,
    };
    let text = match args.format {
        DiffFormat::Text => report.text(
            Paint(use_color(args.color)),
            std::io::stdout().is_terminal(),
        ),
        DiffFormat::Json => report.json()?,
        DiffFormat::Markdown => report.markdown(),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(if diff.prompt_changed() {
        ExitStatus::Problems
    } else {
        ExitStatus::Success
    })
}
