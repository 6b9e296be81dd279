//! `promptinclude merge`: the library's merge (`promptinclude::artifact::merge`)
//! of the shard outputs given on the command line, with the exit status the
//! unsharded run would have had.

use std::io::Write;

use anyhow::Result;
use promptinclude::artifact::merge::{merge_bundle, merge_lines, merge_render, Merged, RootList};

use super::args::{MergeCommand, MergeInputs};
use super::audit::report_failures;
use super::exit::ExitStatus;
use super::settings::read_roots_file;

/// `promptinclude merge`.
pub fn merge(command: &MergeCommand) -> Result<ExitStatus> {
    let inputs = match command {
        MergeCommand::Scan(args) | MergeCommand::Audit(args) => &args.inputs,
        MergeCommand::Render(args) | MergeCommand::Bundle(args) => &args.inputs,
    };
    let MergeInputs {
        roots_from,
        partial,
    } = inputs;
    let roots = read_roots_file(roots_from)?;
    let list = RootList {
        path: roots_from,
        roots: &roots,
        partial: *partial,
    };
    let merged = match command {
        MergeCommand::Scan(args) | MergeCommand::Audit(args) => {
            let audit = matches!(command, MergeCommand::Audit(_));
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let merged = merge_lines(list, &args.files, audit, &mut out)?;
            out.flush()?;
            merged
        }
        MergeCommand::Render(args) => merge_render(list, &args.dirs, &args.out)?,
        MergeCommand::Bundle(args) => merge_bundle(list, &args.dirs, &args.out)?,
    };
    Ok(status_of(&merged))
}

/// The exit status of the unsharded run the merge stands for.
fn status_of(merged: &Merged) -> ExitStatus {
    let mut status = ExitStatus::Success;
    if merged.errors {
        status = status.merge(ExitStatus::Error);
    }
    if merged.not_dirs {
        status = status.merge(ExitStatus::Problems);
    }
    if let Some(summary) = &merged.summary {
        status = status.merge(report_failures(summary));
    }
    status
}
