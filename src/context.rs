//! `promptinclude context`: what an agent loads as context files when
//! started in a directory (the models are the library's
//! `promptinclude::agents`).

use std::io::{IsTerminal as _, Write as _};
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use promptinclude::agents::{self, report};

use super::args::{ContextAgent, ContextArgs};
use super::exit::ExitStatus;

/// `promptinclude context`.
pub fn context(args: &ContextArgs) -> Result<ExitStatus> {
    let cwd = match &args.cwd {
        Some(cwd) => cwd.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let home = match &args.home {
        Some(home) => std::path::absolute(home).context("cannot read the current directory")?,
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .context("HOME is not set: give --home DIR")?,
    };
    let ContextAgent(agent) = args.agent;
    let env = |name: &str| std::env::var_os(name);
    let loaded = agents::context(
        agent,
        &agents::Start {
            cwd: &cwd,
            home: &home,
            env: &env,
        },
    )?;
    let mut out = std::io::stdout().lock();
    if args.raw {
        if let Some(raw) = &loaded.raw() {
            out.write_all(raw.as_bytes())?;
        }
    } else if args.json {
        writeln!(out, "{}", report::json(&loaded))?;
    } else {
        let escape = std::io::stdout().is_terminal();
        out.write_all(report::text(&loaded, escape).as_bytes())?;
    }
    out.flush()?;
    Ok(ExitStatus::Success)
}
