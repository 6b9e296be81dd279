//! How each warning of `audit --agents` ([`super::AgentWarning`]) is found in the
//! agents' chains (or, for Cursor and Copilot, in their files:
//! `super::lint`).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::found::{bytes, AgentWarning, AgentWarningKind, Found};
use super::{AgentChains, Chain, Files};
use crate::agents::advice::{Advice, PatternSyntax, ScopedRules, SizeAdvice};
use crate::agents::disk::Disk;
use crate::agents::{Agent, ContextFile, Outcome, Role, Skip};

/// Every warning about the chains, the tree's `files` and its linted rules.
/// The kinds fall into three parts that share no warning: the chains' own
/// outcomes, what the agents do not share, and the rules' scopes and
/// linting. They are found side by side (a tree's last warnings are what
/// a run waits for at its end), then sorted as one.
pub(super) fn collect(
    root: &Path,
    chains: &[AgentChains],
    dirs: &[PathBuf],
    files: &Files,
    disk: &dyn Disk,
) -> Vec<AgentWarning> {
    let (mut found, scoped) = rayon::join(
        || {
            let ids = identities(chains, disk);
            let (mut found, unshared) = rayon::join(
                || {
                    let mut found = Found::new(root);
                    let mut seen = Seen::default();
                    for agent in chains {
                        let advice = agent.agent.advice();
                        let mut measured = FxHashMap::default();
                        for chain in &agent.chains {
                            outcomes(agent.agent, &advice, chain, disk, &mut found);
                            duplicates(agent.agent, chain, &ids, &mut seen, &mut found);
                            if let Some(size) = &advice.size {
                                let over = (agent.agent, size);
                                over_recommended(over, chain, disk, &mut measured, &mut found);
                            }
                        }
                    }
                    found
                },
                || {
                    let mut found = Found::new(root);
                    not_shared(chains, dirs, &ids, &mut found);
                    found
                },
            );
            found.absorb(unshared);
            found
        },
        || {
            let mut found = Found::new(root);
            for agent in chains {
                if let Some(rules) = agent.agent.advice().scoped_rules {
                    scoped_rules(agent, &rules, files, disk, &mut found);
                }
            }
            super::lint::lint(files, disk, &mut found);
            let sent = senders(chains);
            hidden_text(&sent, disk, &mut found);
            stale_references(root, &sent, dirs, files, disk, &mut found);
            found
        },
    );
    found.absorb(scoped);
    found.sorted()
}

fn warning(
    (kind, cause): (AgentWarningKind, &'static str),
    agent: Agent,
    file: &ContextFile,
    message: String,
    chain: &Chain,
) -> AgentWarning {
    AgentWarning {
        kind,
        agent: agent.name(),
        path: file.path.clone(),
        line: None,
        message,
        cause,
        class: None,
        column: None,
        dirs: vec![chain.start.clone()],
        lint_only: false,
    }
}

/// What the agent's own outcomes say: cuts, shadows and imports.
fn outcomes(agent: Agent, advice: &Advice, chain: &Chain, disk: &dyn Disk, found: &mut Found) {
    use AgentWarningKind as K;
    let files = &chain.context.files;
    let limit = chain.context.limit.map(|l| l.max);
    let root = found.root.clone();
    let name = |p: &Path| super::shown_path(&root, p).into_owned();
    let by_parent = |f: &ContextFile| {
        f.parent
            .as_ref()
            .map_or(String::new(), |p| format!("imported by {}: ", name(p)))
    };
    for f in files {
        let (kind, message) = match &f.outcome {
            Outcome::Truncated { at, of } => (
                (K::Truncated, "cut by the byte limit"),
                format!(
                    "cut at byte {at} of {of} ({} bytes lost) by the {}-byte limit the chain shares",
                    of - at,
                    limit.unwrap_or(*at)
                ),
            ),
            Outcome::Skipped(Skip::LimitReached) => (
                (K::Truncated, "left out by the byte limit"),
                format!(
                    "not read at all ({} bytes lost): the files before it use up the {}-byte limit",
                    f.bytes.unwrap_or(0),
                    limit.unwrap_or(0)
                ),
            ),
            // Its text may still be sent: imported by the file that wins
            // (a `CLAUDE.md` holding `@AGENTS.md`), or as that file's
            // target (`CLAUDE.md -> AGENTS.md`); or its import waits for the
            // user's approval, which that import's own warning says.
            Outcome::Shadowed { .. } if reached_otherwise(f, files, disk) => continue,
            Outcome::Shadowed { by } => (
                (K::Shadowed, "another file is read instead"),
                format!("never read: {} is read instead", name(by)),
            ),
            Outcome::Skipped(Skip::NotFound) => (
                (K::UnresolvedImport, "no such file"),
                format!("{}no such file", by_parent(f)),
            ),
            // Approving an import of nothing loads nothing.
            Outcome::Skipped(Skip::Outside)
                if advice.approves_imports && disk.metadata(&f.path).is_err() =>
            {
                let kind = (K::UnresolvedImport, "no such file");
                (kind, format!("{}no such file", by_parent(f)))
            }
            Outcome::Skipped(Skip::Outside) => (
                (K::UnresolvedImport, "outside where the agent follows imports"),
                format!("{}{}", by_parent(f), crate::agents::report::outside_words(agent)),
            ),
            Outcome::Skipped(Skip::TooDeep) => (
                (K::ImportTooDeep, "nested deeper than the agent follows"),
                format!("{}nested deeper than {} follows imports", by_parent(f), agent.name()),
            ),
            Outcome::Skipped(Skip::Repeated) if in_own_imports(f, files, disk) => (
                (K::ImportCycle, "imports a file that imports it"),
                format!("{}a file that it is itself imported from", by_parent(f)),
            ),
            _ => continue,
        };
        found.add(warning(kind, agent, f, message, chain));
    }
}

/// Whether another entry of the chain leads to the same file as `file` (an
/// import of it, or a link to it) and is sent, or is an import left outside
/// the working directory (sent once the user approves it).
fn reached_otherwise(file: &ContextFile, files: &[ContextFile], disk: &dyn Disk) -> bool {
    let target = disk.canonicalize(&file.path).ok();
    files.iter().any(|g| {
        (g.is_sent() || g.outcome == Outcome::Skipped(Skip::Outside))
            && !std::ptr::eq(g, file)
            && (g.path == file.path
                || target.is_some() && disk.canonicalize(&g.path).ok() == target)
    })
}

/// Whether the file an import names is the importer or one of the files
/// that (transitively) import it.
fn in_own_imports(import: &ContextFile, files: &[ContextFile], disk: &dyn Disk) -> bool {
    let same = |a: &Path, b: &Path| {
        a == b || matches!((disk.canonicalize(a), disk.canonicalize(b)), (Ok(x), Ok(y)) if x == y)
    };
    let mut seen = BTreeSet::new();
    let mut parent = import.parent.as_deref();
    while let Some(p) = parent {
        if same(p, &import.path) {
            return true;
        }
        if !seen.insert(p) {
            break;
        }
        parent = files
            .iter()
            .find(|f| f.path == p && !matches!(f.outcome, Outcome::Skipped(_)))
            .and_then(|f| f.parent.as_deref());
    }
    false
}

/// What makes two sent files one: the file a path leads to, or its text.
/// Both are numbered (equal numbers for equal files and equal texts), so
/// that the many comparisons of [`duplicates`] and [`not_shared`] compare
/// numbers, not paths or texts.
struct Identity {
    /// The number of where the path leads (the path itself where that
    /// cannot be told), equal where those paths are equal (as `Path`s, by
    /// components).
    target_id: u32,
    /// The number of its text among the texts, equal where the bytes are;
    /// `None` when it cannot be read, or is empty or only ASCII whitespace.
    text_id: Option<u32>,
}

/// Each sent file's [`Identity`], by path bytes, found once for all the
/// comparisons of [`duplicates`] and [`not_shared`] (they are many, the
/// files few), the files in parallel.
type Identities<'a> = FxHashMap<&'a [u8], Identity>;

fn identities<'a>(chains: &'a [AgentChains], disk: &dyn Disk) -> Identities<'a> {
    use rayon::prelude::*;
    // Each once, by bytes: a tree's chains send the same files again and
    // again (the benchmark's 1,100 sent paths are 240 files), and hashing
    // them is cheaper than sorting them.
    let mut seen: FxHashSet<&[u8]> = FxHashSet::default();
    let paths: Vec<&Path> = chains
        .iter()
        .flat_map(|a| &a.chains)
        .flat_map(|c| &c.context.files)
        .filter(|f| f.is_sent() && seen.insert(bytes(&f.path)))
        .map(|f| f.path.as_path())
        .collect();
    let found: Vec<(PathBuf, Option<Arc<[u8]>>)> = paths
        .par_iter()
        .map(|&path| {
            let target = disk
                .canonicalize(path)
                .unwrap_or_else(|_| path.to_path_buf());
            let text = disk.read(path).ok();
            (target, text.filter(|t| !t.trim_ascii().is_empty()))
        })
        .collect();
    // A text is numbered by its bytes (hashed once, compared in full on a
    // match): cheaper than a SHA-256 of each, and equal numbers are equal
    // texts, not equal digests.
    let mut targets: FxHashMap<&Path, u32> = FxHashMap::default();
    let mut texts: FxHashMap<&[u8], u32> = FxHashMap::default();
    let numbers: Vec<(u32, Option<u32>)> = found
        .iter()
        .map(|(target, text)| {
            let next = targets.len() as u32;
            let target_id = *targets.entry(target).or_insert(next);
            let text_id = text.as_deref().map(|text| {
                let next = texts.len() as u32;
                *texts.entry(text).or_insert(next)
            });
            (target_id, text_id)
        })
        .collect();
    paths
        .into_iter()
        .zip(numbers)
        .map(|(path, (target_id, text_id))| {
            let identity = Identity { target_id, text_id };
            (bytes(path), identity)
        })
        .collect()
}

/// Files of one chain sent twice: the same file under two names, or the
/// same text in two files.
fn duplicates<'a>(
    agent: Agent,
    chain: &'a Chain,
    ids: &Identities<'_>,
    seen: &mut Seen<'a>,
    found: &mut Found,
) {
    let Seen { by_target, by_text } = seen;
    by_target.clear();
    by_text.clear();
    for f in chain.context.files.iter().filter(|f| f.is_sent()) {
        let id = &ids[bytes(&f.path)];
        let first = match by_target.get(&id.target_id) {
            Some(first) => Some(*first),
            None => {
                by_target.insert(id.target_id, &f.path);
                id.text_id.and_then(|text| match by_text.entry(text) {
                    Entry::Occupied(first) => Some(*first.get()),
                    Entry::Vacant(first) => {
                        first.insert(&f.path);
                        None
                    }
                })
            }
        };
        if let Some(first) = first {
            let message = format!(
                "the same text as {}: {} sends it twice",
                found.name(first),
                agent.name()
            );
            found.add(warning(
                (AgentWarningKind::Duplicate, "the same text sent twice"),
                agent,
                f,
                message,
                chain,
            ));
        }
    }
}

/// What [`duplicates`] has seen of one chain: the first file sent of each
/// target and of each text. Kept from chain to chain and cleared, not made
/// again for each of a tree's hundreds of chains.
#[derive(Default)]
struct Seen<'a> {
    by_target: FxHashMap<u32, &'a Path>,
    by_text: FxHashMap<u32, &'a Path>,
}

/// Files past the size their agent warns about (Claude Code: "Large
/// CLAUDE.md will impact performance (45.1k chars > 40.0k)", in `/status`
/// and at start). Each file is measured once (`measured`, by path bytes),
/// however many chains send it.
fn over_recommended<'a>(
    (agent, size): (Agent, &SizeAdvice),
    chain: &'a Chain,
    disk: &dyn Disk,
    measured: &mut FxHashMap<&'a [u8], Option<usize>>,
    found: &mut Found,
) {
    for f in chain.context.files.iter().filter(|f| f.is_sent()) {
        let chars = measured
            .entry(bytes(&f.path))
            .or_insert_with(|| (size.measure)(disk, &f.path));
        let Some(chars) = *chars else {
            continue;
        };
        if chars > size.max {
            let message = (size.words)(chars, size.max);
            found.add(warning(
                (
                    AgentWarningKind::OverRecommended,
                    "past the agent's size guidance",
                ),
                agent,
                f,
                message,
                chain,
            ));
        }
    }
}

/// An agent's rules that load only for some paths (Claude Code's
/// `.claude/rules/` with `paths:`): their scopes as the agent reads them,
/// and scopes no file of the tree matches.
fn scoped_rules(
    agent: &AgentChains,
    rules: &ScopedRules,
    files: &Files,
    disk: &dyn Disk,
    found: &mut Found,
) {
    let key = rules.key;
    let syntax = match rules.syntax {
        PatternSyntax::Gitignore => super::lint::Syntax::Gitignore,
    };
    let mut seen = BTreeSet::new();
    for chain in &agent.chains {
        for f in &chain.context.files {
            if !(rules.is_rule)(f) || !seen.insert(f.path.clone()) {
                continue;
            }
            let Ok(bytes) = disk.read(&f.path) else {
                continue;
            };
            let Some(scope) = (rules.scope)(&crate::agents::lossy(&bytes)) else {
                continue;
            };
            let lint = |(kind, cause), message| AgentWarning {
                kind,
                agent: agent.agent.name(),
                path: f.path.clone(),
                line: Some(scope.line),
                message,
                cause,
                class: None,
                column: None,
                dirs: Vec::new(),
                lint_only: false,
            };
            for surprise in &scope.surprises {
                let kind = (
                    AgentWarningKind::BadFrontMatter,
                    "front matter read otherwise",
                );
                found.add(lint(kind, surprise.clone()));
            }
            if scope.scoped {
                let base = (rules.base)(&f.path);
                let matched = super::lint::any_match(syntax, &scope.patterns, base, files);
                let listed = super::lint::listed(&scope.patterns);
                if scope.patterns.iter().all(|p| (rules.never_matches)(p)) {
                    found.add(lint(
                        (AgentWarningKind::DeadScope, "a scope no path can match"),
                        format!("`{key}` {listed} can match no path: the rule never loads"),
                    ));
                } else if matched == Some(false) {
                    found.add(lint(
                        (AgentWarningKind::DeadScope, "a scope no file matches today"),
                        format!(
                            "`{key}` {listed} matches no file under {} today: the rule does not load at start, and loads only once the agent reads or writes a matching path",
                            found.name(base)
                        ),
                    ));
                }
            }
        }
    }
}

/// Every file some agent sends, with the agents that send it (in the order
/// asked for): the files the checks of a file's text look at, each once.
type Senders<'a> = BTreeMap<&'a Path, Vec<&'static str>>;

fn senders(chains: &[AgentChains]) -> Senders<'_> {
    let mut senders = Senders::new();
    for agent in chains {
        for chain in &agent.chains {
            for f in chain.context.files.iter().filter(|f| f.is_sent()) {
                let names = senders.entry(f.path.as_path()).or_default();
                if !names.contains(&agent.agent.name()) {
                    names.push(agent.agent.name());
                }
            }
        }
    }
    senders
}

/// Characters a reader does not see, and a link written as text, in each
/// file an agent sends (once per file, named by the first agent that sends
/// it; Agent Zero's rule files are the plain audit's).
fn hidden_text(sent: &Senders<'_>, disk: &dyn Disk, found: &mut Found) {
    let others = sent.iter().map(|(path, agents)| {
        let agents: Vec<&'static str> = agents
            .iter()
            .copied()
            .filter(|a| *a != Agent::AgentZero.name())
            .collect();
        (*path, agents)
    });
    for (path, agents) in others.filter(|(_, agents)| !agents.is_empty()) {
        let Ok(bytes) = disk.read(path) else {
            continue;
        };
        if let Some(target) = link_written_as_text(path, &bytes, disk) {
            found.add(AgentWarning {
                kind: AgentWarningKind::LinkAsText,
                agent: agents[0],
                path: path.to_path_buf(),
                line: Some(1),
                message: format!(
                    "its whole text is `{target}`, the path of a file beside it: a symbolic link that a checkout without links (core.symlinks=false: Windows, some CI) wrote as text; the agent reads the path, not the rules (sent by {})",
                    english_list(&agents)
                ),
                cause: "a link written as text",
                class: None,
                column: None,
                dirs: Vec::new(),
                lint_only: false,
            });
        }
        for finding in crate::audit::hidden::find(&crate::agents::lossy(&bytes)) {
            found.add(AgentWarning {
                kind: AgentWarningKind::HiddenText,
                agent: agents[0],
                path: path.to_path_buf(),
                line: Some(finding.line),
                message: format!("{} (sent by {})", finding.message(), english_list(&agents)),
                cause: finding.class.name(),
                class: Some(finding.class.id()),
                column: Some(finding.column),
                dirs: Vec::new(),
                lint_only: false,
            });
        }
    }
}

/// The repository paths each file an agent sends names and that do not
/// exist (`crate::audit::references`): once per file, reference and line,
/// named by the first agent that sends the file. A path counts as there
/// when it resolves from the file's directory or any directory above it up
/// to the root (a subproject's rules name paths from the subproject), or
/// when some file or directory of the tree ends with it (`src/lib.rs` said
/// of every crate, `completion.rs` said of one somewhere): only what is
/// certainly gone is reported.
fn stale_references(
    root: &Path,
    sent: &Senders<'_>,
    dirs: &[PathBuf],
    files: &Files,
    disk: &dyn Disk,
    found: &mut Found,
) {
    use crate::audit::references::{find, has_extension, How};
    // The references that resolve from nowhere: (file, its senders, line,
    // as written, how, the path as a suffix to look for).
    let mut unresolved = Vec::new();
    for (&path, agents) in sent.iter().filter(|(path, _)| path.starts_with(root)) {
        let Ok(bytes) = disk.read(path) else {
            continue;
        };
        let text = crate::agents::lossy(&bytes);
        let dir = path.parent().unwrap_or(root);
        let bases: Vec<&Path> = dir
            .ancestors()
            .take_while(|d| d.starts_with(root))
            .collect();
        for reference in find(&text) {
            let written = reference.path.to_string();
            let rel = written.trim_start_matches('/');
            let from: &[&Path] = if written.starts_with('/') {
                &[root]
            } else {
                &bases
            };
            let candidates: Vec<PathBuf> = from.iter().map(|b| lexical(&b.join(rel))).collect();
            if !candidates.iter().any(|c| c.starts_with(root))
                || candidates.iter().any(|c| disk.metadata(c).is_ok())
            {
                continue;
            }
            // A code span's word without a known extension is a path only
            // where its first directory is there (`src/gone`, not
            // `text/plain` or `owner/repo`).
            let first = rel
                .split('/')
                .find(|p| !p.is_empty() && *p != ".")
                .unwrap_or(rel);
            let first_is_dir = || {
                from.iter()
                    .any(|b| disk.metadata(&b.join(first)).is_ok_and(|m| m.is_dir()))
            };
            if reference.how == How::Code && !has_extension(&written) && !first_is_dir() {
                continue;
            }
            let suffix: Vec<&str> = rel
                .split('/')
                .filter(|p| !p.is_empty() && *p != "." && *p != "..")
                .collect();
            if suffix.is_empty() {
                continue;
            }
            let suffix = suffix.join("/");
            unresolved.push((
                path,
                agents.clone(),
                reference.line,
                written,
                reference.how,
                suffix,
            ));
        }
    }
    if unresolved.is_empty() {
        return;
    }
    // One look at the tree's files for the names the references end in.
    let names: FxHashSet<Vec<u8>> = unresolved
        .iter()
        .map(|u| u.5.rsplit('/').next().unwrap_or(&u.5).as_bytes().to_vec())
        .collect();
    let mut somewhere: Vec<PathBuf> = Vec::new();
    files.each(
        |name| names.contains(name),
        |p| somewhere.push(p.to_path_buf()),
    );
    somewhere.extend(
        dirs.iter()
            .filter(|d| {
                d.file_name()
                    .is_some_and(|n| names.contains(n.as_encoded_bytes()))
            })
            .cloned(),
    );
    let ends_with = |suffix: &str| {
        somewhere.iter().any(|p| {
            let p = p.as_os_str().as_encoded_bytes();
            p.ends_with(suffix.as_bytes())
                && p.len() > suffix.len()
                && p[p.len() - suffix.len() - 1] == b'/'
        })
    };
    for (path, agents, line, written, how, suffix) in unresolved {
        if ends_with(&suffix) {
            continue;
        }
        let what = match how {
            How::Link => "links to",
            How::Code => "names",
        };
        found.add(AgentWarning {
            kind: AgentWarningKind::StaleReference,
            agent: agents[0],
            path: path.to_path_buf(),
            line: Some(line),
            message: format!(
                "{what} `{written}`, which is nowhere in the repository (not from the file's directory or any above it, and no path of the tree ends with it) (sent by {})",
                english_list(&agents)
            ),
            cause: match how {
                How::Link => "a link to a path that does not exist",
                How::Code => "a code span naming a path that does not exist",
            },
            class: None,
            column: None,
            dirs: Vec::new(),
            lint_only: false,
        });
    }
}

/// `path` with `.` and `..` resolved by the name (a path that does not
/// exist has no links to follow).
fn lexical(path: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The path a file's whole text names, when that text is what git writes
/// for a symbolic link in a checkout without links: one line (at most one
/// newline after it), no surrounding white space, the path of an existing
/// file other than itself, from its directory.
fn link_written_as_text<'a>(path: &Path, bytes: &'a [u8], disk: &dyn Disk) -> Option<&'a str> {
    const LONGEST: usize = 1024;
    let text = std::str::from_utf8(bytes).ok()?;
    let target = text.strip_suffix('\n').unwrap_or(text);
    if target.is_empty()
        || target.len() > LONGEST
        || target.contains(['\n', '\r', '\0'])
        || target.trim() != target
    {
        return None;
    }
    let named = path.parent()?.join(target);
    let is_file = disk.metadata(&named).is_ok_and(|m| m.is_file());
    let itself = disk.canonicalize(&named).ok() == disk.canonicalize(path).ok();
    (is_file && !itself).then_some(target)
}

/// `a`, `a and b`, `a, b and c`.
fn english_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Project files sent to one agent and not to another started in the same
/// directory (the first of each chain), neither as that file nor as the
/// same text. Agent Zero, whose files are another kind, is left out.
fn not_shared<'a>(
    chains: &'a [AgentChains],
    dirs: &'a [PathBuf],
    ids: &'a Identities<'_>,
    found: &mut Found,
) {
    let agents: Vec<&AgentChains> = chains
        .iter()
        .filter(|a| a.agent.shares_files() && a.error.is_none())
        .collect();
    if agents.len() < 2 {
        return;
    }
    // Each agent's chain for each directory, with what the chain sends:
    // the files its paths lead to, and their texts.
    // (Numbers, sorted: a chain sends a few files.)
    struct Sent<'c> {
        targets: Vec<u32>,
        texts: Vec<u32>,
        chain: &'c Chain,
    }
    let sent_by = |chain: &'a Chain| {
        let ids = chain
            .context
            .files
            .iter()
            .filter(|f| f.is_sent())
            .map(|f| &ids[bytes(&f.path)]);
        let sorted = |mut numbers: Vec<u32>| {
            numbers.sort_unstable();
            numbers.dedup();
            numbers
        };
        Sent {
            targets: sorted(ids.clone().map(|id| id.target_id).collect()),
            texts: sorted(ids.filter_map(|id| id.text_id).collect()),
            chain,
        }
    };
    // Only where a chain starts is asked about: each agent's chain there.
    // The directories in order, root first and depth first.
    let mut starts: Vec<&'a Path> = agents
        .iter()
        .flat_map(|a| a.chains.iter().map(|c| c.start.as_path()))
        .collect();
    starts.sort_unstable();
    starts.dedup();
    let asked: FxHashSet<&[u8]> = starts.iter().map(|d| bytes(d)).collect();
    let at: Vec<FxHashMap<&[u8], Rc<Sent<'a>>>> = agents
        .iter()
        .map(|a| {
            let mut at = FxHashMap::with_capacity_and_hasher(asked.len(), Default::default());
            for c in &a.chains {
                let sent = Rc::new(sent_by(c));
                let dirs = c
                    .dirs
                    .iter()
                    .map(|&d| bytes(&dirs[d as usize]))
                    .filter(|d| asked.contains(d));
                at.extend(dirs.map(|d| (d, Rc::clone(&sent))));
            }
            at
        })
        .collect();
    let sends = |sent: &Sent, want: &Identity| {
        sent.targets.binary_search(&want.target_id).is_ok()
            || want
                .text_id
                .is_some_and(|t| sent.texts.binary_search(&t).is_ok())
    };
    // For each (file, agent that misses it, why, agents that load it): the
    // directories where exactly those agents load it and that one misses it
    // for that reason. A warning names only agents that load the file in
    // every directory it lists.
    struct Miss {
        path: PathBuf,
        missed_by: &'static str,
        why: String,
        cause: &'static str,
        loaded_by: Vec<&'static str>,
        dirs: Vec<PathBuf>,
    }
    type Key = (u32, &'static str, String, Vec<&'static str>);
    let mut misses: Vec<Miss> = Vec::new();
    let mut index: FxHashMap<Key, usize> = FxHashMap::default();
    // In one directory: (file, index of the agent missing it) -> the file's
    // path and the agents loading it.
    let mut here: BTreeMap<(u32, usize), (&'a Path, BTreeSet<&'static str>)> = BTreeMap::new();
    for start in &starts {
        let chains: Vec<Option<&Rc<Sent<'a>>>> = at.iter().map(|at| at.get(bytes(start))).collect();
        here.clear();
        for (a, loader) in agents.iter().enumerate() {
            let Some(sent) = chains[a] else {
                continue;
            };
            let project = sent
                .chain
                .context
                .files
                .iter()
                .filter(|f| f.role == Role::Project && f.is_sent());
            for f in project {
                let want = &ids[bytes(&f.path)];
                for (b, other) in chains.iter().enumerate() {
                    if b == a || other.is_none_or(|c| sends(c, want)) {
                        continue;
                    }
                    here.entry((want.target_id, b))
                        .or_insert_with(|| (f.path.as_path(), BTreeSet::new()))
                        .1
                        .insert(loader.agent.name());
                }
            }
        }
        for (&(target, b), (path, loaded_by)) in &here {
            let Some(other) = chains[b] else {
                continue;
            };
            let missed_by = agents[b].agent.name();
            let (cause, why) = why_not_sent(path, other.chain, agents[b].agent, &found.root);
            let key = (target, missed_by, why, loaded_by.iter().copied().collect());
            let i = match index.get(&key) {
                Some(&i) => i,
                None => {
                    misses.push(Miss {
                        path: path.to_path_buf(),
                        missed_by,
                        why: key.2.clone(),
                        cause,
                        loaded_by: key.3.clone(),
                        dirs: Vec::new(),
                    });
                    index.insert(key, misses.len() - 1);
                    misses.len() - 1
                }
            };
            misses[i].dirs.push(start.to_path_buf());
        }
    }
    for miss in misses {
        let verb = if miss.loaded_by.len() == 1 {
            "loads"
        } else {
            "load"
        };
        found.add(AgentWarning {
            kind: AgentWarningKind::NotShared,
            agent: miss.missed_by,
            path: miss.path,
            line: None,
            message: format!(
                "{} {verb} it; {} does not when started in the same directory ({})",
                english_list(&miss.loaded_by),
                miss.missed_by,
                miss.why
            ),
            cause: miss.cause,
            class: None,
            column: None,
            dirs: miss.dirs,
            lint_only: false,
        });
    }
}

/// Why `agent`'s `chain` sends nothing of the file at `path` (which another
/// agent started in the same directory sends): what the chain says of that
/// file, or of another file it reads from the same directory instead, or
/// of a chain that sends no project file; else that there is nothing of
/// it to send: the cause, and the reason in words. Files are named from
/// `root`, as every message names them.
fn why_not_sent(path: &Path, chain: &Chain, agent: Agent, root: &Path) -> (&'static str, String) {
    let files = &chain.context.files;
    let name = |p: &Path| super::shown_path(root, p).into_owned();
    // An import waiting for approval says more than the shadow beside it.
    let entries = || files.iter().filter(|f| f.path == path);
    let waiting = entries().find(|f| f.outcome == Outcome::Skipped(Skip::Outside));
    if let Some(entry) = waiting.or_else(|| entries().next()) {
        return match &entry.outcome {
            Outcome::Shadowed { by } => (
                "another file is read instead",
                format!("{} reads {} instead", agent.name(), name(by)),
            ),
            Outcome::Skipped(Skip::Outside) => (
                "its import of it lies outside where the agent follows imports",
                format!(
                    "its import of it lies {}",
                    crate::agents::report::outside_words(agent)
                ),
            ),
            outcome => (
                "the agent's chain there leaves it out",
                format!("it is {} there", crate::agents::report::status(outcome)),
            ),
        };
    }
    let dir = path.parent();
    if let Some(instead) = files.iter().find(|f| f.is_sent() && f.path.parent() == dir) {
        return (
            "another file of its directory is read instead",
            format!("{} reads {} instead", agent.name(), name(&instead.path)),
        );
    }
    // A chain that sends no project file at all: what its notes say (an
    // untrusted Gemini CLI folder).
    let sends_project = files.iter().any(|f| f.is_sent() && f.role == Role::Project);
    if let Some(note) = chain.context.notes.first().filter(|_| !sends_project) {
        return (
            "the agent loads no project file there (its note says why)",
            note.clone(),
        );
    }
    let nothing = "no such file there, no import of it, no copy of its text";
    (nothing, nothing.to_string())
}
