//! The summary of one tree's `audit --agents` that a person reads to the
//! end: per agent a headline (where it was measured from, what it sends,
//! which of the tree's context files it never reads, and why), then the
//! warnings gathered into findings by kind, agent and cause, what matters
//! most first. Every number is a count over the tree's records, the ones
//! `--json` writes, so a script and the summary agree.

use std::collections::BTreeMap;
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{shown_path, AgentChains, AgentWarning, AgentWarningKind, TreeAudit};
use crate::agents::report::status;
use crate::agents::{Agent, ContextFile, Outcome, Role, Skip};

/// Why a context file an agent never reads is not read, where none of its
/// chains names the file.
pub(crate) const NOT_LOOKED_FOR: &str = "never looked at";

/// One tree's summary.
pub struct Digest<'a> {
    /// The tree's directories (each agent is measured from every one).
    pub directories: usize,
    /// The tree's context files: the files below the root that some agent's
    /// chain names and that exist (Agent Zero's, another kind, aside).
    pub context_files: usize,
    /// Per agent, in the order asked for.
    pub agents: Vec<Headline<'a>>,
    /// The warnings gathered, most important first.
    pub findings: Vec<Finding<'a>>,
    /// All warnings.
    pub warnings: usize,
}

/// What one agent does across the tree.
pub struct Headline<'a> {
    /// The agent.
    pub agent: Agent,
    /// Why it would not start here at all, when it would not.
    pub error: Option<&'a str>,
    /// Its distinct chains.
    pub chains: usize,
    /// The directories its chains cover.
    pub directories: usize,
    /// Bytes it sends (framing included), over the directories.
    pub bytes: Spread,
    /// Tokens it sends, over the directories.
    pub tokens: Spread,
    /// Its byte limit, where it has one.
    pub limit: Option<LimitUse>,
    /// The tree's context files it sends from no directory, with the most
    /// common reason for each counted (`None` for Agent Zero).
    pub never_read: Option<NeverRead>,
    /// Its notes, each with the directories whose chains carry it.
    pub notes: Vec<(&'a str, usize)>,
}

/// The least, the median and the most of a measure over directories (each
/// chain counted once per directory it covers; the median is the lower
/// one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spread {
    /// The least.
    pub min: usize,
    /// The median.
    pub median: usize,
    /// The most.
    pub max: usize,
}

/// How an agent's chains use its byte limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LimitUse {
    /// The limit in bytes.
    pub max: u64,
    /// The chains that use all of it.
    pub full_chains: usize,
    /// The directories those chains cover.
    pub full_directories: usize,
    /// The largest use, in percent of the limit.
    pub largest_percent: u64,
}

/// The tree's context files an agent never reads.
pub struct NeverRead {
    /// How many.
    pub count: usize,
    /// Why, each with how many: a status (`shadowed`, `outside`, ...) from
    /// the agent's chains, or `never looked at`; most first.
    pub why: Vec<(&'static str, usize)>,
}

/// What a finding is about, in the order the summary gives them (hidden
/// text first: it is how a rule file is made to say what no reviewer
/// approved).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Concern {
    /// Text a reviewer does not see, which every agent obeys.
    Hidden,
    /// Text that never reaches the agent, or reaches it cut.
    Lost,
    /// What one agent loads and another does not.
    Differs,
    /// Duplicates, sizes, scopes and front matter.
    Hygiene,
}

/// The kinds in the order the summary gives their findings: by concern,
/// and within one what costs the most first (a cut before a shadow).
const ORDER: [AgentWarningKind; 13] = {
    use AgentWarningKind as K;
    [
        K::HiddenText,
        K::LinkAsText,
        K::Truncated,
        K::UnresolvedImport,
        K::ImportTooDeep,
        K::DeadScope,
        K::Shadowed,
        K::NotShared,
        K::StaleReference,
        K::BadFrontMatter,
        K::ImportCycle,
        K::OverRecommended,
        K::Duplicate,
    ]
};

impl Concern {
    /// The concern of a kind of warning.
    pub fn of(kind: AgentWarningKind) -> Concern {
        use AgentWarningKind as K;
        match kind {
            K::HiddenText => Concern::Hidden,
            K::LinkAsText
            | K::Truncated
            | K::Shadowed
            | K::UnresolvedImport
            | K::ImportTooDeep
            | K::DeadScope => Concern::Lost,
            K::NotShared => Concern::Differs,
            K::StaleReference
            | K::ImportCycle
            | K::Duplicate
            | K::OverRecommended
            | K::BadFrontMatter => Concern::Hygiene,
        }
    }

    /// Its heading.
    pub fn title(self) -> &'static str {
        match self {
            Concern::Hidden => "hidden from a reviewer",
            Concern::Lost => "lost or cut",
            Concern::Differs => "differs between agents",
            Concern::Hygiene => "hygiene",
        }
    }
}

/// The warnings of one kind and agent with one cause.
pub struct Finding<'a> {
    /// What it is about.
    pub concern: Concern,
    /// The warnings' kind.
    pub kind: AgentWarningKind,
    /// Their agent.
    pub agent: &'static str,
    /// Their cause.
    pub cause: &'static str,
    /// Its warnings, in the records' order.
    pub warnings: Vec<&'a AgentWarning>,
    /// The distinct files they are about.
    pub files: usize,
    /// Those files' names, each with how many files bear it; most first.
    pub names: Vec<(String, usize)>,
    /// The distinct start directories where they happen.
    pub directories: usize,
    /// Where those directories are: the first part of each below the root
    /// (`dir/`; `.` for the root), each with how many; most first.
    pub under: Vec<(String, usize)>,
}

impl<'a> Digest<'a> {
    /// The summary of `tree`.
    pub fn of(tree: &'a TreeAudit) -> Digest<'a> {
        let context = context_files(tree);
        let agents = tree.agents.iter().map(|a| headline(a, &context)).collect();
        Digest {
            directories: tree.dirs.len(),
            context_files: context.len(),
            agents,
            findings: findings(&tree.root, &tree.warnings),
            warnings: tree.warnings.len(),
        }
    }
}

/// Whether an entry of a chain is a file that exists (not an import that
/// names nothing, or one named again).
fn exists(f: &ContextFile) -> bool {
    !matches!(
        f.outcome,
        Outcome::Skipped(Skip::NotFound | Skip::TooDeep | Skip::Repeated | Skip::Outside)
    )
}

/// The tree's context files (see [`Digest::context_files`]), by path.
fn context_files(tree: &TreeAudit) -> FxHashSet<&Path> {
    let mut out = FxHashSet::default();
    for agent in tree.agents.iter().filter(|a| a.agent != Agent::AgentZero) {
        for chain in &agent.chains {
            let files = chain.context.files.iter();
            out.extend(
                files
                    .filter(|f| f.role != Role::Global && exists(f))
                    .filter(|f| f.path.starts_with(&tree.root))
                    .map(|f| f.path.as_path()),
            );
        }
    }
    out
}

fn headline<'a>(agent: &'a AgentChains, context: &FxHashSet<&Path>) -> Headline<'a> {
    let chains = &agent.chains;
    let directories = chains.iter().map(|c| c.dir_count).sum();
    let spread = |measure: &dyn Fn(&super::Chain) -> usize| {
        let mut values: Vec<(usize, usize)> =
            chains.iter().map(|c| (measure(c), c.dir_count)).collect();
        values.sort_unstable();
        spread_of(&values)
    };
    let limit = chains
        .iter()
        .filter_map(|c| c.context.limit.map(|l| (c, l)))
        .fold(None, |acc: Option<LimitUse>, (c, l)| {
            let mut acc = acc.unwrap_or(LimitUse {
                max: l.max,
                full_chains: 0,
                full_directories: 0,
                largest_percent: 0,
            });
            if l.used >= l.max {
                acc.full_chains += 1;
                acc.full_directories += c.dir_count;
            }
            let percent = l.used.saturating_mul(100).checked_div(l.max).unwrap_or(0);
            acc.largest_percent = acc.largest_percent.max(percent);
            Some(acc)
        });
    let mut notes: Vec<(&str, usize)> = Vec::new();
    for chain in chains {
        for note in &chain.context.notes {
            match notes.iter_mut().find(|(n, _)| *n == note) {
                Some((_, count)) => *count += chain.dir_count,
                None => notes.push((note, chain.dir_count)),
            }
        }
    }
    Headline {
        agent: agent.agent,
        error: agent.error.as_deref(),
        chains: chains.len(),
        directories,
        bytes: spread(&|c| c.bytes),
        tokens: spread(&|c| c.tokens),
        limit,
        never_read: (agent.agent != Agent::AgentZero).then(|| never_read(agent, context)),
        notes,
    }
}

/// The spread of `values` (each a value and its weight, sorted by value).
fn spread_of(values: &[(usize, usize)]) -> Spread {
    let total: usize = values.iter().map(|(_, w)| w).sum();
    let (Some(first), Some(last)) = (values.first(), values.last()) else {
        return Spread::default();
    };
    let half = total.div_ceil(2);
    let mut seen = 0;
    let median = values
        .iter()
        .find(|(_, w)| {
            seen += w;
            seen >= half
        })
        .map_or(last.0, |(v, _)| *v);
    Spread {
        min: first.0,
        median,
        max: last.0,
    }
}

fn never_read(agent: &AgentChains, context: &FxHashSet<&Path>) -> NeverRead {
    let entries = || agent.chains.iter().flat_map(|c| &c.context.files);
    let sent: FxHashSet<&Path> = entries()
        .filter(|f| f.is_sent())
        .map(|f| f.path.as_path())
        .collect();
    // Each file's first word in the agent's chains.
    let mut said: FxHashMap<&Path, &'static str> = FxHashMap::default();
    for f in entries() {
        said.entry(f.path.as_path())
            .or_insert_with(|| status(&f.outcome));
    }
    let mut why: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut count = 0;
    for path in context.iter().filter(|p| !sent.contains(*p)) {
        count += 1;
        *why.entry(said.get(path).copied().unwrap_or(NOT_LOOKED_FOR))
            .or_default() += 1;
    }
    NeverRead {
        count,
        why: most_first(why),
    }
}

/// Counts, most first (ties in the keys' order).
fn most_first<K: Ord>(counts: BTreeMap<K, usize>) -> Vec<(K, usize)> {
    let mut out: Vec<(K, usize)> = counts.into_iter().collect();
    out.sort_by_key(|c| std::cmp::Reverse(c.1));
    out
}

fn findings<'a>(root: &Path, warnings: &'a [AgentWarning]) -> Vec<Finding<'a>> {
    type Key = (Concern, AgentWarningKind, &'static str, &'static str);
    let mut by: BTreeMap<Key, Vec<&AgentWarning>> = BTreeMap::new();
    for w in warnings {
        let key = (Concern::of(w.kind), w.kind, w.agent, w.cause);
        by.entry(key).or_default().push(w);
    }
    let mut out: Vec<Finding> = by
        .into_iter()
        .map(|((concern, kind, agent, cause), warnings)| {
            let mut files = FxHashSet::default();
            let mut names: BTreeMap<String, usize> = BTreeMap::new();
            for w in &warnings {
                if files.insert(w.path.as_path()) {
                    let name = w.path.file_name().unwrap_or(w.path.as_os_str());
                    *names
                        .entry(name.to_string_lossy().into_owned())
                        .or_default() += 1;
                }
            }
            let dirs: FxHashSet<&Path> = warnings
                .iter()
                .flat_map(|w| &w.dirs)
                .map(|d| d.as_path())
                .collect();
            let mut under: BTreeMap<String, usize> = BTreeMap::new();
            for dir in &dirs {
                let shown = shown_path(root, dir);
                let top = match shown.split_once('/') {
                    Some((top, _)) => format!("{top}/"),
                    None if shown == "." => shown.into_owned(),
                    None => format!("{shown}/"),
                };
                *under.entry(top).or_default() += 1;
            }
            Finding {
                concern,
                kind,
                agent,
                cause,
                files: files.len(),
                names: most_first(names),
                directories: dirs.len(),
                under: most_first(under),
                warnings,
            }
        })
        .collect();
    // By concern and kind, then the largest first.
    let rank = |f: &Finding| {
        let kind = ORDER.iter().position(|k| *k == f.kind);
        (f.concern, kind, std::cmp::Reverse(f.warnings.len()))
    };
    out.sort_by_key(|f| rank(f));
    out
}

#[cfg(test)]
mod tests {
    use super::{spread_of, Spread};

    #[test]
    fn the_spread_counts_each_value_once_per_directory() {
        assert_eq!(spread_of(&[]), Spread::default());
        let one = Spread {
            min: 7,
            median: 7,
            max: 7,
        };
        assert_eq!(spread_of(&[(7, 3)]), one);
        // 1 directory sends 10, 5 send 20, 1 sends 90: the median is 20.
        let s = spread_of(&[(10, 1), (20, 5), (90, 1)]);
        assert_eq!((s.min, s.median, s.max), (10, 20, 90));
        // Two directories: the lower median.
        assert_eq!(spread_of(&[(1, 1), (5, 1)]).median, 1);
        assert_eq!(spread_of(&[(1, 1), (5, 2)]).median, 5);
    }
}
