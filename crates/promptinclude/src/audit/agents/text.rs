//! The agents' part of the readable audit (`audit --agents`): per agent its
//! chains, each with where it starts, what it costs against the agent's
//! limit and its files; then the warnings.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use super::{shown_path, AgentChains, Chain, TreeAudit};
use crate::agents::report::status;
use crate::agents::Role;
use crate::audit::text::{shown, Style};

/// Writes one tree's agents report.
pub fn write_tree(out: &mut impl Write, tree: &TreeAudit, style: Style) -> io::Result<()> {
    let show = |s: &str| shown(style.escape, s).into_owned();
    let paint = style.paint;
    writeln!(
        out,
        "{}",
        paint.code(
            "1",
            &format!("agents in {}", show(&tree.root.to_string_lossy()))
        )
    )?;
    for agent in &tree.agents {
        write_agent(out, tree, agent, style)?;
    }
    if tree.warnings.is_empty() {
        writeln!(out, "  no agent warnings")?;
    } else {
        writeln!(out, "  agent warnings ({}):", tree.warnings.len())?;
        for w in &tree.warnings {
            let line = w.line.map_or(String::new(), |l| format!(":{l}"));
            let lint = if w.lint_only { " (lint only)" } else { "" };
            writeln!(
                out,
                "    {} {}{lint} {}{line}: {}",
                paint.code("33", w.kind.as_str()),
                w.agent,
                Shown::new(&tree.root, &w.path, style),
                shown(style.escape, &w.message)
            )?;
            if !w.dirs.is_empty() {
                write!(out, "      started in ")?;
                for (i, dir) in w.dirs.iter().enumerate() {
                    let comma = if i == 0 { "" } else { ", " };
                    write!(out, "{comma}{}", Shown::new(&tree.root, dir, style))?;
                }
                writeln!(out)?;
            }
        }
    }
    writeln!(out)
}

fn write_agent(
    out: &mut impl Write,
    tree: &TreeAudit,
    agent: &AgentChains,
    style: Style,
) -> io::Result<()> {
    let name = format!("{} {}", agent.agent.name(), agent.agent.version());
    if let Some(error) = &agent.error {
        return writeln!(
            out,
            "  {}: would not start: {}",
            name,
            shown(style.escape, error)
        );
    }
    let count = agent.chains.len();
    writeln!(
        out,
        "  {}: {count} chain{}",
        style.paint.code("1", &name),
        if count == 1 { "" } else { "s" }
    )?;
    for chain in &agent.chains {
        write_chain(out, &tree.root, chain, style)?;
    }
    Ok(())
}

fn write_chain(out: &mut impl Write, root: &Path, chain: &Chain, style: Style) -> io::Result<()> {
    let show = |s: &str| shown(style.escape, s).into_owned();
    let others = chain.dir_count - 1;
    let more = match others {
        0 => String::new(),
        1 => " (and 1 other directory)".to_string(),
        n => format!(" (and {n} other directories)"),
    };
    let limit = chain.context.limit.map_or(String::new(), |l| {
        let share = l.used.saturating_mul(100).checked_div(l.max).unwrap_or(0);
        format!(", {} of {} bytes of its limit ({share}%)", l.used, l.max)
    });
    writeln!(
        out,
        "    from {}{more}: sends {} bytes, {} tokens{limit}",
        Shown::new(root, &chain.start, style),
        chain.bytes,
        chain.tokens
    )?;
    for note in &chain.context.notes {
        writeln!(out, "      note: {}", show(note))?;
    }
    if chain.context.files.is_empty() {
        return writeln!(out, "      no context files");
    }
    for f in &chain.context.files {
        let role = match f.role {
            Role::Global => " [global]",
            Role::Local => " [local]",
            Role::Project => "",
        };
        let imported = f.parent.as_ref().map_or(String::new(), |p| {
            format!(" [imported by {}]", Shown::new(root, p, style))
        });
        writeln!(
            out,
            "      {:<13} {}{role}{imported}",
            status(&f.outcome),
            Shown::new(root, &f.path, style)
        )?;
    }
    Ok(())
}

/// A path as the report shows it: from the root when below it, escaped
/// when the style says so; written without a copy of its own (the report
/// names thousands of paths).
struct Shown<'a> {
    root: &'a Path,
    path: &'a Path,
    escape: bool,
}

impl<'a> Shown<'a> {
    fn new(root: &'a Path, path: &'a Path, style: Style) -> Shown<'a> {
        Shown {
            root,
            path,
            escape: style.escape,
        }
    }
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shown(self.escape, &shown_path(self.root, self.path)))
    }
}
