//! The "Agents" view of a root (`audit --agents … --html`): first the
//! tree's summary (the text report's [`Digest`]: per agent a headline,
//! then the findings, what matters most first); then per agent a treemap
//! of the tree (each directory sized by the bytes the agent sends
//! when started there, coloured by how close that is to the agent's
//! limit), its chains with their cut points, and the warnings, which the
//! page's script filters by kind and agent.
//!
//! Everything is drawn here, as inline SVG and tables: the page stays one
//! offline file, and every name is escaped text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::push_name;
use crate::agents::{Outcome, Skip};
use crate::audit::agents::digest::{Digest, Finding, Headline};
use crate::audit::agents::{shown_path, AgentChains, AgentWarningKind, Chain, TreeAudit};

/// The treemap's drawing area, in SVG user units.
const WIDTH: f64 = 1000.0;
const HEIGHT: f64 = 160.0;
/// Rectangles smaller than this (in square units) are left out: a tree of
/// 100,000 directories stays a drawing of what can be seen.
const SMALLEST: f64 = 0.5;

/// Pushes the summary of the agents' view of a tree: what leads a root's
/// section.
pub(crate) fn push_digest(h: &mut String, tree: &TreeAudit) {
    let digest = Digest::of(tree);
    let _ = write!(
        h,
        "<section class=digest><h3>Agents: summary</h3><p>{} director{}, {} context file{} \
         (files below the root some agent reads or passes over)</p>",
        digest.directories,
        plural(digest.directories, "y", "ies"),
        digest.context_files,
        plural(digest.context_files, "", "s"),
    );
    let _ = write!(h, "<p class=tool>View: {}</p>", tree.view.words());
    h.push_str(
        "<div class=tw><table class=headlines><thead><tr><th scope=col>Agent</th>\
         <th scope=col>Chains</th><th scope=col>Directories</th>\
         <th scope=col>Bytes sent (min / median / max)</th>\
         <th scope=col>Tokens (min / median / max)</th><th scope=col>Limit</th>\
         <th scope=col>Never reads</th></tr></thead><tbody>",
    );
    for agent in &digest.agents {
        push_headline(h, agent, digest.context_files);
    }
    h.push_str("</tbody></table></div>");
    for agent in &digest.agents {
        for (note, dirs) in &agent.notes {
            let _ = write!(
                h,
                "<p class=tool>{} (in {dirs} director{}): ",
                agent.agent.name(),
                plural(*dirs, "y", "ies")
            );
            push_name(h, note);
            h.push_str("</p>");
        }
    }
    if digest.warnings == 0 {
        h.push_str("<p>No agent warnings.</p></section>");
        return;
    }
    let _ = write!(
        h,
        "<p class=findings-count>{} agent warning{} in {} finding{} (every warning: the table below)</p>",
        digest.warnings,
        plural(digest.warnings, "", "s"),
        digest.findings.len(),
        plural(digest.findings.len(), "", "s"),
    );
    let mut concern = None;
    for finding in &digest.findings {
        if concern != Some(finding.concern) {
            if concern.is_some() {
                h.push_str("</ul>");
            }
            concern = Some(finding.concern);
            let _ = write!(h, "<h4>{}</h4><ul class=findings>", finding.concern.title());
        }
        push_finding(h, &tree.root, finding);
    }
    h.push_str("</ul></section>");
}

fn push_headline(h: &mut String, agent: &Headline, context_files: usize) {
    let name = agent.agent.name();
    let _ = write!(
        h,
        "<tr data-agent={name}><td>{name} {}</td>",
        agent.agent.version()
    );
    if let Some(error) = agent.error {
        h.push_str("<td colspan=6 class=bad>would not start: ");
        push_name(h, error);
        h.push_str("</td></tr>");
        return;
    }
    let (b, t) = (agent.bytes, agent.tokens);
    let _ = write!(
        h,
        "<td class=num>{}</td><td class=num>{}</td><td class=num>{} / {} / {}</td>\
         <td class=num>{} / {} / {}</td><td>",
        agent.chains, agent.directories, b.min, b.median, b.max, t.min, t.median, t.max
    );
    if let Some(limit) = agent.limit {
        if limit.full_chains == 0 {
            let _ = write!(
                h,
                "{} bytes, largest use {}%",
                limit.max, limit.largest_percent
            );
        } else {
            let _ = write!(
                h,
                "{} bytes, all of it in {} chain{} ({} director{})",
                limit.max,
                limit.full_chains,
                plural(limit.full_chains, "", "s"),
                limit.full_directories,
                plural(limit.full_directories, "y", "ies")
            );
        }
    }
    h.push_str("</td><td>");
    if let Some(never) = &agent.never_read {
        let why: Vec<String> = never.why.iter().map(|(w, n)| format!("{n} {w}")).collect();
        let _ = write!(h, "{} of {context_files}", never.count);
        if !why.is_empty() {
            let _ = write!(h, ": {}", why.join(", "));
        }
    }
    h.push_str("</td></tr>");
}

fn push_finding(h: &mut String, root: &Path, finding: &Finding) {
    let kind = finding.kind.as_str();
    let _ = write!(
        h,
        "<li data-kind={kind} data-agent={}><b class=num>{}</b> <code>{kind}</code> {}: {}",
        finding.agent,
        finding.warnings.len(),
        finding.agent,
        finding.cause
    );
    if finding.files > 1 {
        let names: Vec<String> = finding
            .names
            .iter()
            .take(3)
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        let _ = write!(h, "<br>{} files: ", finding.files);
        push_name(h, &names.join(", "));
        if finding.names.len() > 3 {
            let _ = write!(h, " and {} more", finding.names.len() - 3);
        }
    }
    let first = finding.warnings[0];
    h.push_str("<br>e.g. <span class=path>");
    push_name(h, &shown_path(root, &first.path));
    if let Some(line) = first.line {
        let _ = write!(h, ":{line}");
    }
    h.push_str("</span>: ");
    push_name(h, &first.message);
    if finding.directories > 0 {
        let under: Vec<String> = finding
            .under
            .iter()
            .take(4)
            .map(|(n, c)| format!("{n} {c}"))
            .collect();
        let _ = write!(
            h,
            "<br>started in {} director{}: ",
            finding.directories,
            plural(finding.directories, "y", "ies")
        );
        push_name(h, &under.join(", "));
        if finding.under.len() > 4 {
            let _ = write!(h, " and {} more", finding.under.len() - 4);
        }
    }
    h.push_str("</li>");
}

/// Pushes the Agents part of a root's section (after its summary): per
/// agent its treemap and chains, then every warning.
pub(crate) fn push_agents(h: &mut String, tree: &TreeAudit, include_content: bool) {
    h.push_str("<section class=agents><h3>Agents: chains and every warning</h3>");
    for agent in &tree.agents {
        push_agent(h, tree, agent);
    }
    push_warnings(h, tree, include_content);
    h.push_str("</section>");
}

fn push_agent(h: &mut String, tree: &TreeAudit, agent: &AgentChains) {
    let name = agent.agent.name();
    let _ = write!(
        h,
        "<details class=agent data-agent={name} open><summary>{name} {}: ",
        agent.agent.version()
    );
    if let Some(error) = &agent.error {
        h.push_str("would not start</summary><p class=bad>");
        push_name(h, error);
        h.push_str("</p></details>");
        return;
    }
    let dirs: usize = agent.chains.iter().map(|c| c.dir_count).sum();
    let _ = write!(
        h,
        "{} chain{} over {dirs} director{}",
        agent.chains.len(),
        plural(agent.chains.len(), "", "s"),
        plural(dirs, "y", "ies"),
    );
    if let Some(limit) = agent.chains.iter().find_map(|c| c.context.limit) {
        let _ = write!(h, ", limit {} bytes", limit.max);
    }
    h.push_str("</summary>");
    push_treemap(h, tree, agent);
    push_chains(h, tree, agent);
    h.push_str("</details>");
}

fn plural(n: usize, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 {
        one
    } else {
        many
    }
}

/// The colour band of a chain. Against the agent's byte limit: `t0` under
/// half, `t1` under 90 %, `t2` from there, `tc` when a file is cut or left
/// out by it. For an agent without one, shades of one colour by its bytes
/// against the largest chain's: `n0`, `n1`, `n2`.
fn band(chain: &Chain, largest: usize) -> &'static str {
    if cut_files(chain).next().is_some() {
        return "tc";
    }
    let share = |part: f64, whole: f64| if whole > 0.0 { part / whole } else { 0.0 };
    let (share, bands) = match chain.context.limit {
        Some(l) => (share(l.used as f64, l.max as f64), ["t0", "t1", "t2"]),
        None => (
            share(chain.bytes as f64, largest as f64),
            ["n0", "n1", "n2"],
        ),
    };
    match share {
        f if f < 0.5 => bands[0],
        f if f < 0.9 => bands[1],
        _ => bands[2],
    }
}

/// The files the agent's byte limit cuts or leaves out, with how.
fn cut_files(chain: &Chain) -> impl Iterator<Item = (&Path, String)> {
    chain.context.files.iter().filter_map(|f| match f.outcome {
        Outcome::Truncated { at, of } => Some((f.path.as_path(), format!("at byte {at} of {of}"))),
        Outcome::Skipped(Skip::LimitReached) => Some((f.path.as_path(), "not read".into())),
        _ => None,
    })
}

/// One directory of the treemap.
#[derive(Default)]
struct Node {
    /// The chain of the agent started here, if the directory is on one.
    chain: Option<usize>,
    /// Its own bytes (the chain's).
    own: f64,
    /// Its own and all below it.
    total: f64,
    children: BTreeMap<String, Node>,
}

/// The directory tree with each directory's chain, relative to the root.
fn tree_of(tree: &TreeAudit, agent: &AgentChains) -> Node {
    let mut top = Node::default();
    for (i, chain) in agent.chains.iter().enumerate() {
        for dir in tree.dirs_of(chain) {
            let rel = shown_path(&tree.root, dir);
            let mut node = &mut top;
            if rel != "." {
                for part in rel.split('/') {
                    node = node.children.entry(part.to_string()).or_default();
                }
            }
            node.chain = Some(i);
            node.own = chain.bytes as f64;
        }
    }
    fn sum(node: &mut Node) -> f64 {
        node.total = node.own + node.children.values_mut().map(sum).sum::<f64>();
        node.total
    }
    sum(&mut top);
    top
}

/// A slice-and-dice treemap: each directory's rectangle holds a strip for
/// itself, then its subdirectories, split across the other way one level
/// down.
fn push_treemap(h: &mut String, tree: &TreeAudit, agent: &AgentChains) {
    let top = tree_of(tree, agent);
    if top.total <= 0.0 {
        h.push_str("<p class=tool>Loads nothing anywhere in this tree.</p>");
        return;
    }
    let largest = agent.chains.iter().map(|c| c.bytes).max().unwrap_or(0);
    let _ = write!(
        h,
        "<svg class=treemap viewBox=\"0 0 {WIDTH} {HEIGHT}\" preserveAspectRatio=none role=img \
         aria-label=\"{} treemap: directories sized by the bytes it sends when started there\">",
        agent.agent.name()
    );
    let mut stack = vec![(&top, String::from("."), (0.0, 0.0, WIDTH, HEIGHT), true)];
    while let Some((node, rel, (x, y, w, hgt), across)) = stack.pop() {
        if node.total <= 0.0 || w * hgt < SMALLEST {
            continue;
        }
        let scale = if across { w } else { hgt } / node.total;
        let mut at = if across { x } else { y };
        if let (Some(i), true) = (node.chain, node.own > 0.0) {
            let len = node.own * scale;
            let rect = if across {
                (at, y, len, hgt)
            } else {
                (x, at, w, len)
            };
            push_rect(h, &rel, &agent.chains[i], rect, largest);
            at += len;
        }
        for (name, child) in &node.children {
            let len = child.total * scale;
            let rect = if across {
                (at, y, len, hgt)
            } else {
                (x, at, w, len)
            };
            let path = if rel == "." {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            stack.push((child, path, rect, !across));
            at += len;
        }
    }
    if agent.chains.iter().any(|c| c.context.limit.is_some()) {
        h.push_str(
            "</svg><p class=legend>of the byte limit: <span class=\"k t0\"></span>under half \
             <span class=\"k t1\"></span>under 90 % <span class=\"k t2\"></span>90 % or more \
             <span class=\"k tc\"></span>a file cut or left out</p>",
        );
    } else {
        h.push_str(
            "</svg><p class=legend>no byte limit; of the largest chain: \
             <span class=\"k n0\"></span>under half <span class=\"k n1\"></span>under 90 % \
             <span class=\"k n2\"></span>90 % or more</p>",
        );
    }
}

fn push_rect(
    h: &mut String,
    rel: &str,
    chain: &Chain,
    (x, y, w, hgt): (f64, f64, f64, f64),
    largest: usize,
) {
    if w * hgt < SMALLEST {
        return;
    }
    let _ = write!(
        h,
        "<rect x=\"{x:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{hgt:.2}\" class={}><title>",
        band(chain, largest)
    );
    push_name(h, rel);
    let _ = write!(h, ": {} bytes, {} tokens", chain.bytes, chain.tokens);
    if let Some(l) = chain.context.limit {
        let _ = write!(h, ", {} of {} bytes of the limit", l.used, l.max);
    }
    h.push_str("</title></rect>");
}

/// The chains table: where each starts, how many directories share it,
/// what it sends, and where the limit cuts.
fn push_chains(h: &mut String, tree: &TreeAudit, agent: &AgentChains) {
    if agent.chains.is_empty() {
        return;
    }
    h.push_str(
        "<div class=tw><table class=\"sortable chains\"><thead><tr><th scope=col>Start</th>\
         <th scope=col>Directories</th><th scope=col>Files sent</th><th scope=col>Bytes</th>\
         <th scope=col>Tokens</th><th scope=col>Limit used</th><th scope=col>Cut</th></tr></thead><tbody>",
    );
    let largest = agent.chains.iter().map(|c| c.bytes).max().unwrap_or(0);
    for chain in &agent.chains {
        let sent = chain.context.files.iter().filter(|f| f.is_sent()).count();
        let _ = write!(h, "<tr class={}><td class=path>", band(chain, largest));
        push_name(h, &shown_path(&tree.root, &chain.start));
        let _ = write!(
            h,
            "</td><td class=num>{}</td><td class=num>{sent} of {}</td><td class=num>{}</td>\
             <td class=num>{}</td><td class=num>",
            chain.dir_count,
            chain.context.files.len(),
            chain.bytes,
            chain.tokens
        );
        match chain.context.limit {
            Some(l) => {
                let _ = write!(h, "{} of {}", l.used, l.max);
            }
            None => h.push('-'),
        }
        h.push_str("</td><td class=path>");
        let mut cuts = cut_files(chain).peekable();
        if cuts.peek().is_none() {
            h.push('-');
        }
        for (i, (path, how)) in cuts.enumerate() {
            if i > 0 {
                h.push_str("<br>");
            }
            push_name(h, &shown_path(&tree.root, path));
            h.push(' ');
            h.push_str(&how);
        }
        h.push_str("</td></tr>");
    }
    h.push_str("</tbody></table></div>");
}

/// The warnings, with a kind and an agent filter the script works.
fn push_warnings(h: &mut String, tree: &TreeAudit, include_content: bool) {
    if tree.warnings.is_empty() {
        h.push_str("<p class=tool>No agent warnings.</p>");
        return;
    }
    let mut kinds: Vec<&str> = tree.warnings.iter().map(|w| w.kind.as_str()).collect();
    let mut agents: Vec<&str> = tree.warnings.iter().map(|w| w.agent).collect();
    kinds.sort_unstable();
    kinds.dedup();
    agents.sort_unstable();
    agents.dedup();
    let _ = write!(
        h,
        "<div class=wfilter hidden><label>Kind <select class=wk><option value=\"\">all {}</option>",
        tree.warnings.len()
    );
    for kind in &kinds {
        let n = tree
            .warnings
            .iter()
            .filter(|w| w.kind.as_str() == *kind)
            .count();
        let _ = write!(h, "<option value={kind}>{kind} ({n})</option>");
    }
    h.push_str("</select></label> <label>Agent <select class=wa><option value=\"\">all</option>");
    for agent in &agents {
        let _ = write!(h, "<option value={agent}>{agent}</option>");
    }
    h.push_str(
        "</select></label> <span class=wn role=status></span></div>\
         <div class=tw><table class=\"sortable agentwarn\"><thead><tr><th scope=col>Kind</th>\
         <th scope=col>Agent</th><th scope=col>File</th><th scope=col>What</th></tr></thead><tbody>",
    );
    for w in &tree.warnings {
        let kind = w.kind.as_str();
        let _ = write!(
            h,
            "<tr data-kind={kind} data-agent={}><td><code>{kind}</code></td><td>{}{}</td><td class=path>",
            w.agent,
            w.agent,
            if w.lint_only { " (lint)" } else { "" }
        );
        push_name(h, &shown_path(&tree.root, &w.path));
        if let Some(line) = w.line {
            let _ = write!(h, ":{line}");
        }
        h.push_str("</td><td>");
        push_name(h, &w.message);
        if let (true, AgentWarningKind::HiddenText, Some(line)) = (include_content, w.kind, w.line)
        {
            super::push_made_visible(h, &w.path, line);
        }
        h.push_str("</td></tr>");
    }
    h.push_str("</tbody></table></div>");
}
