//! The shell completion scripts (`completions`) and the man pages (`man`),
//! both generated from the clap definitions in `args`.

use std::fs;
use std::io::Write;

use anyhow::{bail, Context, Result};
use clap::CommandFactory;
use promptinclude::artifact::write_atomic;

use crate::args::{Cli, CompletionsArgs, ManArgs};
use crate::exit::ExitStatus;

/// `promptinclude completions SHELL`: the script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<ExitStatus> {
    // Generated into memory first: clap_complete panics on a failed write,
    // and a closed stdout must end the run quietly instead.
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut Cli::command(),
        "promptinclude",
        &mut script,
    );
    let mut out = std::io::stdout().lock();
    out.write_all(&script)?;
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// `promptinclude man [SUBCOMMAND...]`: one page on stdout, or with
/// `--out-dir` every page (`promptinclude.1`, `promptinclude-merge-scan.1`,
/// ...), each written atomically.
pub fn man(args: &ManArgs) -> Result<ExitStatus> {
    let mut top = Cli::command();
    top.build();
    if let Some(dir) = &args.out_dir {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        for page in pages(&top) {
            let path = dir.join(format!("{}.1", page.get_name()));
            write_atomic(&path, &render(page)?)?;
        }
        return Ok(ExitStatus::Success);
    }
    let mut page = top;
    for name in &args.subcommand {
        let Some(sub) = page.find_subcommand(name) else {
            let there: Vec<&str> = page
                .get_subcommands()
                .map(|s| s.get_name())
                .filter(|&s| s != "help")
                .collect();
            bail!(
                "no subcommand `{name}` in `{}` (there are: {})",
                page.get_name().replace('-', " "),
                there.join(", ")
            );
        };
        page = named_below(&page, sub);
    }
    let mut out = std::io::stdout().lock();
    out.write_all(&render(page)?)?;
    out.flush()?;
    Ok(ExitStatus::Success)
}

/// The command and every subcommand below it (not clap's `help`), each
/// named for its page: `promptinclude-merge-scan`.
fn pages(top: &clap::Command) -> Vec<clap::Command> {
    let mut pages = vec![top.clone()];
    let mut i = 0;
    while i < pages.len() {
        let parent = pages[i].clone();
        for sub in parent.get_subcommands() {
            if sub.get_name() != "help" {
                pages.push(named_below(&parent, sub));
            }
        }
        i += 1;
    }
    pages
}

/// `sub` named for its page below `parent`'s: `promptinclude-merge-scan`.
fn named_below(parent: &clap::Command, sub: &clap::Command) -> clap::Command {
    let name = format!("{}-{}", parent.get_name(), sub.get_name());
    sub.clone().name(name)
}

/// One page in roff.
fn render(page: clap::Command) -> Result<Vec<u8>> {
    let mut roff = Vec::new();
    clap_mangen::Man::new(page).render(&mut roff)?;
    Ok(roff)
}
