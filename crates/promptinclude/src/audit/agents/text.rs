//! The agents' part of the readable audit (`audit --agents`): by default
//! the tree's [`Digest`] (per agent a headline, then the warnings gathered
//! into findings); with `--verbose`, per agent its chains, each with where
//! it starts, what it costs against the agent's limit and its files, then
//! every warning.

use std::fmt;
use std::io::{self, Write};
use std::path::Path;

use super::digest::{Digest, Finding, Headline};
use super::{shown_path, AgentChains, Chain, TreeAudit};
use crate::agents::report::status;
use crate::agents::Role;
use crate::audit::text::{shown, Style};

/// The most findings the summary lists (the rest are counted).
const MOST_FINDINGS: usize = 40;

/// Writes one tree's agents summary.
pub fn write_digest(out: &mut impl Write, tree: &TreeAudit, style: Style) -> io::Result<()> {
    let digest = Digest::of(tree);
    let paint = style.paint;
    let root = show(style, &tree.root.to_string_lossy());
    let (dirs, files) = (digest.directories, digest.context_files);
    let heading = format!(
        "agents in {root}: {} and {} (files below the root some agent reads or passes over)",
        counted(dirs, "directory", "directories"),
        counted(files, "context file", "context files")
    );
    writeln!(out, "{}", paint.code("1", &heading))?;
    writeln!(out, "  view: {}", tree.view.words())?;
    for agent in &digest.agents {
        write_headline(out, agent, files, style)?;
    }
    if digest.warnings == 0 {
        writeln!(out, "  no agent warnings")?;
        return writeln!(out);
    }
    writeln!(
        out,
        "  {} in {} (each one: --verbose, --json or --html)",
        counted(digest.warnings, "agent warning", "agent warnings"),
        counted(digest.findings.len(), "finding", "findings")
    )?;
    let mut concern = None;
    for finding in digest.findings.iter().take(MOST_FINDINGS) {
        if concern != Some(finding.concern) {
            concern = Some(finding.concern);
            writeln!(out, "  {}:", paint.code("1", finding.concern.title()))?;
        }
        write_finding(out, &tree.root, finding, style)?;
    }
    if let Some(more) = digest
        .findings
        .len()
        .checked_sub(MOST_FINDINGS)
        .filter(|n| *n > 0)
    {
        let rest: usize = digest.findings[MOST_FINDINGS..]
            .iter()
            .map(|f| f.warnings.len())
            .sum();
        writeln!(
            out,
            "  and {more} more {} ({}; --verbose lists them)",
            if more == 1 { "finding" } else { "findings" },
            counted(rest, "warning", "warnings")
        )?;
    }
    writeln!(out)
}

fn write_headline(
    out: &mut impl Write,
    agent: &Headline,
    context_files: usize,
    style: Style,
) -> io::Result<()> {
    let name = format!("{} {}", agent.agent.name(), agent.agent.version());
    if let Some(error) = agent.error {
        return writeln!(out, "  {name}: would not start: {}", show(style, error));
    }
    writeln!(
        out,
        "  {}: {} over {}",
        style.paint.code("1", &name),
        counted(agent.chains, "chain", "chains"),
        counted(agent.directories, "directory", "directories")
    )?;
    let (b, t) = (agent.bytes, agent.tokens);
    if b.min == b.max && t.min == t.max {
        writeln!(out, "    sends {} bytes, {} tokens", b.max, t.max)?;
    } else {
        writeln!(
            out,
            "    sends {} to {} bytes (median {}), {} to {} tokens (median {})",
            b.min, b.max, b.median, t.min, t.max, t.median
        )?;
    }
    if let Some(limit) = agent.limit {
        if limit.full_chains == 0 {
            writeln!(
                out,
                "    limit {} bytes: the largest use is {}%",
                limit.max, limit.largest_percent
            )?;
        } else {
            writeln!(
                out,
                "    limit {} bytes: {} ({}) use all of it",
                limit.max,
                counted(limit.full_chains, "chain", "chains"),
                counted(limit.full_directories, "directory", "directories"),
            )?;
        }
    }
    if let Some(never) = &agent.never_read {
        if never.count == 0 {
            writeln!(out, "    reads every context file from some directory")?;
        } else {
            let why: Vec<String> = never.why.iter().map(|(w, n)| format!("{n} {w}")).collect();
            writeln!(
                out,
                "    never reads {} of the {context_files} context files: {}",
                never.count,
                why.join(", ")
            )?;
        }
    }
    for (note, dirs) in &agent.notes {
        writeln!(
            out,
            "    note ({}): {}",
            counted(*dirs, "directory", "directories"),
            show(style, note)
        )?;
    }
    Ok(())
}

fn write_finding(
    out: &mut impl Write,
    root: &Path,
    finding: &Finding,
    style: Style,
) -> io::Result<()> {
    writeln!(
        out,
        "    {:>5} {} {}: {}",
        finding.warnings.len(),
        style.paint.code("33", finding.kind.as_str()),
        finding.agent,
        finding.cause
    )?;
    let pad = "          ";
    if finding.files > 1 {
        writeln!(
            out,
            "{pad}{}: {}",
            counted(finding.files, "file", "files"),
            listed(&finding.names, 3, style)
        )?;
    }
    let first = finding.warnings[0];
    let line = first.line.map_or(String::new(), |l| format!(":{l}"));
    writeln!(
        out,
        "{pad}e.g. {}{line}: {}",
        Shown::new(root, &first.path, style),
        show(style, &first.message)
    )?;
    if finding.directories > 0 {
        writeln!(
            out,
            "{pad}started in {}: {}",
            counted(finding.directories, "directory", "directories"),
            listed(&finding.under, 4, style)
        )?;
    }
    Ok(())
}

/// `n` and the noun for it.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first `most` names with their counts (`a 3, b 1`), then how many
/// more.
fn listed(counts: &[(String, usize)], most: usize, style: Style) -> String {
    let mut parts: Vec<String> = counts
        .iter()
        .take(most)
        .map(|(name, n)| format!("{} {n}", show(style, name)))
        .collect();
    if counts.len() > most {
        parts.push(format!("and {} more", counts.len() - most));
    }
    parts.join(", ")
}

fn show(style: Style, text: &str) -> String {
    shown(style.escape, text).into_owned()
}

/// Writes one tree's agents report in full (`--verbose`).
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
    writeln!(out, "  view: {}", tree.view.words())?;
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
