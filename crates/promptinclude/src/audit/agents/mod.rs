//! Every agent's rules across a tree (`audit --agents`): for each agent,
//! every distinct load chain (the directories where it loads the same
//! files), what each costs against the agent's limit, and [`warnings`] with
//! stable kind names. Cursor's and Copilot's rules, which no agent here can
//! run offline, are linted from their documentation (`lint`).
//!
//! One look at the tree serves every agent: the chains of all of them are
//! computed over one [`Remembered`] file system, so a file or directory is
//! read once however many agents and directories share it (and the
//! directories the audit's own walk listed are not listed again:
//! [`Known`]); and a directory that adds nothing for an agent is given its
//! ancestor's context, or a sibling's like it, instead of computing it
//! again ([`contexts_shared`]). The JSON form is the `agents` record of
//! `docs/audit-schema.md`.

pub mod digest;
mod found;
pub(crate) mod lint;
pub mod text;
pub mod warnings;

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::hash::{Hash, Hasher};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHasher};
use serde::Serialize;

use crate::agents::disk::{Disk, Listings, Live, Remembered};
use crate::agents::report::{file_json, FileJson};
use crate::agents::{contexts_shared, Agent, AgentContext, ByteLimit, Shared, Tree};
use crate::tokenize::Memo;
pub use found::{AgentWarning, AgentWarningKind};

/// Where one agent loads the same context files: the directories it may be
/// started in that give the same files with the same outcomes.
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    /// The first of them (root first, then depth first).
    pub start: PathBuf,
    /// All of them, `start` first, by their index in the tree's
    /// [`dirs`](TreeAudit::dirs) ([`TreeAudit::dirs_of`] names them): a
    /// tree's directories are named once for all its chains.
    pub dirs: Vec<u32>,
    /// The same directories as subtrees ([`Chain::holds`]): the tops of
    /// the subtrees it covers, `start` first, in the tree's order.
    pub subtrees: Vec<PathBuf>,
    /// The tops of the subtrees of other chains directly inside them.
    pub except: Vec<PathBuf>,
    /// How many directories it covers (all of the tree for Agent Zero,
    /// whose project is the whole tree).
    pub dir_count: usize,
    /// What the agent loads when started in `start`, but for the text it
    /// sends: `parts` is left empty once `bytes` and `tokens` measure it
    /// ([`crate::agents::context`] gives it).
    pub context: AgentContext,
    /// Bytes it sends for them from `start`, framing included.
    pub bytes: usize,
    /// cl100k_base tokens of that text.
    pub tokens: usize,
}

impl Chain {
    /// Whether the directory `dir` (by its physical path) is on this chain,
    /// as the subtrees tell it: the nearest of [`subtrees`](Chain::subtrees)
    /// and [`except`](Chain::except) at or above it is one of `subtrees`.
    pub fn holds(&self, dir: &Path) -> bool {
        for above in dir.ancestors() {
            if self.subtrees.iter().any(|d| d == above) {
                return true;
            }
            if self.except.iter().any(|d| d == above) {
                return false;
            }
        }
        false
    }
}

/// One agent's chains over a tree.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentChains {
    /// The agent.
    pub agent: Agent,
    /// Its chains, in the order of their first directory.
    pub chains: Vec<Chain>,
    /// Why the agent would not start here at all (its configuration), when
    /// it would not.
    pub error: Option<String>,
}

/// Every chosen agent's view of one tree.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeAudit {
    /// The tree's root, by its physical path.
    pub root: PathBuf,
    /// Every directory of the tree by its physical path, the root first,
    /// then depth first (empty where the tree could not be looked at).
    pub dirs: Vec<PathBuf>,
    /// Each agent's chains, in the order asked for.
    pub agents: Vec<AgentChains>,
    /// Everything worth a look, agents' and linters' together, in a stable
    /// order (by kind, then agent, then path).
    pub warnings: Vec<AgentWarning>,
    /// Whose view it shows.
    pub view: View,
}

/// How the agents are started: for which user, with which environment,
/// and from whose point of view.
pub struct Setup<'a> {
    /// `$HOME`.
    pub home: &'a Path,
    /// The environment as the agents read it.
    pub env: &'a (dyn Fn(&str) -> Option<OsString> + Sync),
    /// Whether agents with folder trust see the tree trusted.
    pub view: View,
}

/// Whose view of the tree an audit shows, for the agents with folder trust
/// (Gemini CLI), which load no project file in a folder not yet trusted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// The project's own developers', who have trusted it: the audit's
    /// default (the environment's trust variable set for those agents).
    #[default]
    Trusted,
    /// A folder opened for the first time: trust as the environment and
    /// the user's files say.
    FirstOpen,
}

impl View {
    /// The name on the command line and in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            View::Trusted => "trusted",
            View::FirstOpen => "first-open",
        }
    }

    /// What it means, for the reports.
    pub fn words(self) -> &'static str {
        match self {
            View::Trusted => "the project's developers', who trust the folder (agents with folder trust load its files; --view first-open for a first open)",
            View::FirstOpen => "a folder opened for the first time (agents with folder trust load its files only where the environment or the user's trust settings trust it)",
        }
    }
}

/// The chains of each of `agents` over the tree at `root`, and the
/// warnings about them. Where the tree cannot be entered, each agent says
/// so as its error.
pub fn audit_tree(agents: &[Agent], root: &Path, setup: &Setup<'_>) -> TreeAudit {
    audit_tree_on(agents, root, setup, &Live)
}

/// What the audit's own look at a tree already knows, so that the agents
/// do not look again.
#[derive(Default)]
pub struct Known {
    /// What Agent Zero loads started at the tree's root, when the audit's
    /// scan is the one its host makes
    /// ([`crate::agents::agent_zero::from_scan`]).
    pub agent_zero: Option<AgentContext>,
    /// The directories the audit's walk listed, by path (as
    /// [`crate::audit::audit_root_at`] keeps them).
    pub listings: Listings,
    /// Token counts remembered so far, shared by the trees of one batch
    /// (`None`: this tree's own).
    pub counts: Option<Arc<Memo>>,
}

/// [`audit_tree`] with what the audit's own scan of the tree knows, which
/// is not looked at again.
pub fn audit_tree_knowing(
    agents: &[Agent],
    root: &Path,
    setup: &Setup<'_>,
    known: Known,
) -> TreeAudit {
    audit_tree_from(agents, root, setup, &Live, known)
}

/// [`audit_tree`], looking at the files through `files` (once each).
pub fn audit_tree_on(
    agents: &[Agent],
    root: &Path,
    setup: &Setup<'_>,
    files: &dyn Disk,
) -> TreeAudit {
    audit_tree_from(agents, root, setup, files, Known::default())
}

fn audit_tree_from(
    agents: &[Agent],
    root: &Path,
    setup: &Setup<'_>,
    files: &dyn Disk,
    known: Known,
) -> TreeAudit {
    let Known {
        agent_zero,
        listings,
        counts,
    } = known;
    // The trusted view: each agent with folder trust sees its variable set.
    let trusted = |name: &str| {
        let trusts = Agent::ALL
            .iter()
            .filter_map(|a| a.trust_variable())
            .find(|(variable, _)| *variable == name);
        match trusts {
            Some((_, value)) if setup.view == View::Trusted => Some(OsString::from(value)),
            _ => (setup.env)(name),
        }
    };
    let setup = &Setup {
        home: setup.home,
        env: &trusted,
        view: setup.view,
    };
    let mut disk = Remembered::over(files).knowing(listings);
    if let Some(counts) = counts {
        disk = disk.counting_with(counts);
    }
    let tree = match Tree::of(root, &disk) {
        Ok(tree) => tree,
        Err(error) => {
            let error = crate::full_message(&error);
            return TreeAudit {
                root: root.to_path_buf(),
                dirs: Vec::new(),
                agents: agents
                    .iter()
                    .map(|&agent| AgentChains {
                        agent,
                        chains: Vec::new(),
                        error: Some(error.clone()),
                    })
                    .collect(),
                warnings: Vec::new(),
                view: setup.view,
            };
        }
    };
    let root = tree.dirs[0].clone();
    // The agents share the tree and the remembered answers; each one's
    // chains are independent work, as are the warnings' inputs below.
    let chains = agents
        .par_iter()
        .map(|&agent| chains_of(agent, &tree, setup, &disk, agent_zero.as_ref()))
        .collect::<Vec<AgentChains>>();
    let warnings = warnings::collect(&root, &chains, &tree.dirs, &Files::of(&tree), &disk);
    TreeAudit {
        root,
        dirs: tree.dirs,
        agents: chains,
        warnings,
        view: setup.view,
    }
}

/// One agent's contexts in every directory of `tree`, grouped into
/// chains (Agent Zero's is `agent_zero` when that is known for its root).
fn chains_of(
    agent: Agent,
    tree: &Tree,
    setup: &Setup<'_>,
    disk: &Remembered<'_>,
    agent_zero: Option<&AgentContext>,
) -> AgentChains {
    let contexts = contexts_shared(agent, tree, setup.home, setup.env, disk, agent_zero);
    match contexts {
        Ok(contexts) => AgentChains {
            agent,
            chains: group(tree, contexts),
            error: None,
        },
        Err(error) => AgentChains {
            agent,
            chains: Vec::new(),
            error: Some(crate::full_message(&error)),
        },
    }
}

/// Contexts with the same files, limit and notes make one chain (sending
/// what the first of them sends); a directory given as an ancestor's
/// ([`Shared::As`]) is on its chain. `contexts` are those of the first of
/// the tree's directories (all, or the root alone for Agent Zero, whose
/// one chain then covers the whole tree).
fn group(tree: &Tree, contexts: Vec<Shared>) -> Vec<Chain> {
    let dirs = &tree.dirs;
    let whole_tree = contexts.len() < dirs.len();
    // Chains by a hash of what makes them one (Fx, not cloned: most
    // contexts start a chain of their own), compared in full on a match.
    let fingerprint = |c: &AgentContext| {
        let mut hasher = FxHasher::default();
        (&c.root, &c.files, c.limit, &c.notes).hash(&mut hasher);
        hasher.finish()
    };
    let same = |a: &AgentContext, b: &AgentContext| {
        a.root == b.root && a.limit == b.limit && a.files == b.files && a.notes == b.notes
    };
    let mut chains: Vec<Chain> = Vec::new();
    let mut index: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    let mut chain_of: Vec<usize> = Vec::with_capacity(contexts.len());
    for (at, (dir, shared)) in dirs.iter().zip(contexts).enumerate() {
        // (A tree's directories are counted by `u32`: four thousand
        // million of them would not fit in memory first.)
        let at = at as u32;
        let measured = match shared {
            Shared::As(owner) => {
                let chain = chain_of[owner];
                chains[chain].dirs.push(at);
                chain_of.push(chain);
                continue;
            }
            Shared::Own(measured) => measured,
        };
        let alike = index.entry(fingerprint(&measured.context)).or_default();
        match alike
            .iter()
            .find(|&&i| same(&chains[i].context, &measured.context))
        {
            Some(&i) => {
                chains[i].dirs.push(at);
                chain_of.push(i);
            }
            None => {
                alike.push(chains.len());
                chain_of.push(chains.len());
                chains.push(Chain {
                    start: dir.clone(),
                    dirs: vec![at],
                    subtrees: Vec::new(),
                    except: Vec::new(),
                    dir_count: 0,
                    bytes: measured.bytes,
                    tokens: measured.tokens,
                    context: measured.context,
                });
            }
        }
    }
    // A directory tops a subtree of its chain where its parent is on
    // another chain (or it is the root); the chain it interrupts lists it
    // as an exception.
    for (i, &chain) in chain_of.iter().enumerate() {
        let above = tree.parent(i).map(|p| chain_of[p]);
        if above != Some(chain) {
            chains[chain].subtrees.push(dirs[i].clone());
            if let Some(above) = above {
                chains[above].except.push(dirs[i].clone());
            }
        }
    }
    for chain in &mut chains {
        chain.dir_count = match whole_tree {
            true => dirs.len(),
            false => chain.dirs.len(),
        };
    }
    chains
}

/// Every file of a tree (not `.git`'s; links not followed): the entries
/// of its directories' listings that are not directories. Nothing is
/// copied: the dead scopes ask whether any file below a directory
/// matches, which only the directories below it and the names that can
/// match need, and `lint` looks at a few names (copying every path of a
/// tree was a tenth of `audit --agents`' page faults).
pub struct Files<'a> {
    tree: &'a Tree,
}

impl<'a> Files<'a> {
    /// The files of `tree`.
    pub fn of(tree: &'a Tree) -> Files<'a> {
        Files { tree }
    }

    /// Calls `each` with the path of every file whose name `named`
    /// accepts, in no order to rely on. (The lint looks at a few names of
    /// the tree's thousands of files: the others' paths are not made.)
    pub fn each(&self, named: impl Fn(&[u8]) -> bool, mut each: impl FnMut(&Path)) {
        let mut path = Vec::new();
        for (i, dir) in self.tree.dirs.iter().enumerate() {
            // The directory's part, once one of its files is wanted.
            let mut len = None;
            for (name, kind) in self.tree.listing(i).iter() {
                let name = name.as_encoded_bytes();
                if kind.is_dir() || !named(name) {
                    continue;
                }
                let len = *len.get_or_insert_with(|| {
                    path.clear();
                    path.extend_from_slice(dir.as_os_str().as_encoded_bytes());
                    if !path.ends_with(b"/") {
                        path.push(b'/');
                    }
                    path.len()
                });
                path.truncate(len);
                path.extend_from_slice(name);
                each(Path::new(OsStr::from_bytes(&path)));
            }
        }
    }

    /// Whether `matches` holds for a file below `base`, given the file's
    /// path from `base` (its bytes after `base` and a `/`, or after `base`
    /// alone where that ends in `/`), among the files whose path from
    /// `base` has a first component `enter` accepts (it is asked with such
    /// a path, or a directory's path from `base` ending in `/`).
    pub(crate) fn any_below(
        &self,
        base: &Path,
        enter: impl Fn(&[u8]) -> bool,
        mut matches: impl FnMut(&[u8]) -> bool,
    ) -> bool {
        let base = base.as_os_str().as_encoded_bytes();
        let tree = self.tree;
        let mut rel = Vec::new();
        // A file is below `base` when its directory's path and `/` start
        // with `base` (a file's own name holds no `/`), so the directories
        // to look in are whole subtrees.
        let mut i = 0;
        while i < tree.dirs.len() {
            rel.clear();
            rel.extend_from_slice(tree.dirs[i].as_os_str().as_encoded_bytes());
            if !rel.ends_with(b"/") {
                rel.push(b'/');
            }
            let Some(from_base) = rel.strip_prefix(base) else {
                // Deeper, where `base` goes on below this directory.
                i = if base.starts_with(&rel) {
                    i + 1
                } else {
                    tree.end(i)
                };
                continue;
            };
            let from_base = if base.ends_with(b"/") {
                Some(from_base)
            } else {
                from_base.strip_prefix(b"/")
            };
            // Every file of a directory strictly below `base` has the same
            // first component.
            let next = match from_base {
                Some(dir) if dir.is_empty() || enter(dir) => {
                    let dir_len = dir.len();
                    rel.drain(..rel.len() - dir_len);
                    // In `base` itself, each file's name is its first
                    // component.
                    let at_base = dir_len == 0;
                    let listing = tree.listing(i);
                    let found = listing.iter().any(|(name, kind)| {
                        let name = name.as_encoded_bytes();
                        if kind.is_dir() || (at_base && !enter(name)) {
                            return false;
                        }
                        rel.truncate(dir_len);
                        rel.extend_from_slice(name);
                        matches(&rel)
                    });
                    if found {
                        return true;
                    }
                    i + 1
                }
                // None of its files is below `base`, or can match: nor is
                // any below it.
                _ => tree.end(i),
            };
            i = next;
        }
        false
    }
}

/// `path` relative to `root` when it is below it (`.` for the root itself),
/// else as it is; borrowed from `path` where it can be (a report names
/// thousands of paths).
pub(crate) fn shown_path<'a>(root: &Path, path: &'a Path) -> Cow<'a, str> {
    // By bytes where the path is the root's bytes and a plain rest (every
    // path of a tree the agents name): `Path::strip_prefix` parses
    // components. A separator after the root's bytes starts new parts
    // whatever the root's are, so its parts are the root's and the rest's.
    use crate::agents::disk::is_plain;
    let (whole, from) = (
        path.as_os_str().as_encoded_bytes(),
        root.as_os_str().as_encoded_bytes(),
    );
    if let Some(rest) = whole.strip_prefix(from).filter(|_| !from.is_empty()) {
        if rest.is_empty() {
            return Cow::Borrowed(".");
        }
        if rest.starts_with(b"/") && is_plain(rest) {
            return crate::agents::lossy(&rest[1..]);
        }
    }
    match path.strip_prefix(root) {
        Ok(rel) if rel.as_os_str().is_empty() => Cow::Borrowed("."),
        Ok(rel) => rel.to_string_lossy(),
        Err(_) => path.to_string_lossy(),
    }
}

impl Serialize for TreeAudit {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json().serialize(serializer)
    }
}

/// The `agents` field of an `audit --json` root record (`docs/audit-schema.md`).
#[derive(Serialize)]
pub struct TreeJson<'a> {
    root: String,
    view: &'static str,
    agents: Vec<AgentJson<'a>>,
    warnings: &'a [AgentWarning],
}

#[derive(Serialize)]
struct AgentJson<'a> {
    agent: &'static str,
    version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    chains: Vec<ChainJson<'a>>,
}

#[derive(Serialize)]
struct ChainJson<'a> {
    start: String,
    subtrees: Vec<String>,
    except: Vec<String>,
    dir_count: usize,
    root: Option<String>,
    files: Vec<FileJson<'a>>,
    limit: Option<ByteLimit>,
    bytes: usize,
    tokens: usize,
    notes: &'a [String],
}

impl TreeAudit {
    /// The directories of `chain`, one of this tree's, `start` first.
    pub fn dirs_of<'a>(&'a self, chain: &'a Chain) -> impl Iterator<Item = &'a Path> + 'a {
        chain.dirs.iter().map(|&i| self.dirs[i as usize].as_path())
    }

    /// The JSON form (the record's fields, without schema and type).
    pub fn json(&self) -> TreeJson<'_> {
        let lossy = |p: &Path| p.to_string_lossy().into_owned();
        TreeJson {
            root: lossy(&self.root),
            view: self.view.as_str(),
            agents: self
                .agents
                .iter()
                .map(|a| AgentJson {
                    agent: a.agent.name(),
                    version: a.agent.version(),
                    error: a.error.as_deref(),
                    chains: a
                        .chains
                        .iter()
                        .map(|c| ChainJson {
                            start: lossy(&c.start),
                            subtrees: c.subtrees.iter().map(|d| lossy(d)).collect(),
                            except: c.except.iter().map(|d| lossy(d)).collect(),
                            dir_count: c.dir_count,
                            root: c.context.root.as_deref().map(lossy),
                            files: c.context.files.iter().map(file_json).collect(),
                            limit: c.context.limit,
                            bytes: c.bytes,
                            tokens: c.tokens,
                            notes: &c.context.notes,
                        })
                        .collect(),
                })
                .collect(),
            warnings: &self.warnings,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt as _;
    use std::path::{Path, PathBuf};

    use super::{Files, Tree};
    use crate::agents::disk::Live;

    /// A small random tree below a new temporary directory: directories,
    /// files, `.git` as a directory and as a file, and links to files, to
    /// directories and to nothing. Names share prefixes (`a`, `ab`).
    fn random_tree(next: &mut impl FnMut(usize) -> usize) -> tempfile::TempDir {
        let names = ["a", "ab", "b", ".git", "c d", "x.md", "A"];
        let top = tempfile::tempdir().unwrap();
        let mut dirs = vec![top.path().to_path_buf()];
        for _ in 0..1 + next(14) {
            let dir = dirs[next(dirs.len())].clone();
            let path = dir.join(names[next(names.len())]);
            if path.symlink_metadata().is_ok() {
                continue;
            }
            match next(5) {
                0 | 1 => {
                    std::fs::create_dir(&path).unwrap();
                    dirs.push(path);
                }
                2 | 3 => std::fs::write(&path, "x").unwrap(),
                _ => {
                    let target = if next(2) == 0 {
                        dirs[next(dirs.len())].clone()
                    } else {
                        top.path().join("nowhere")
                    };
                    std::os::unix::fs::symlink(target, &path).unwrap();
                }
            }
        }
        top
    }

    /// Every file below `dir` as a walk that does not follow links and
    /// does not enter `.git` directories finds them.
    fn walked(dir: &Path, out: &mut BTreeSet<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.symlink_metadata().unwrap().is_dir() {
                if entry.file_name() != ".git" {
                    walked(&path, out);
                }
            } else {
                out.insert(path);
            }
        }
    }

    /// A tree's files are what a walk that follows no link and skips
    /// `.git` directories finds. Fails when a link to a directory, or a
    /// `.git` directory, is entered, or a file is left out.
    #[test]
    fn files_are_what_a_walk_finds() {
        let mut next = promptinclude_testkit::seeded();
        for round in 0..60 {
            let top = random_tree(&mut next);
            let tree = Tree::of(top.path(), &Live).unwrap();
            let mut expected = BTreeSet::new();
            walked(&tree.dirs[0], &mut expected);
            let mut found = Vec::new();
            Files::of(&tree).each(|_| true, |f| found.push(f.to_path_buf()));
            let found_set: BTreeSet<PathBuf> = found.iter().cloned().collect();
            assert_eq!(found.len(), found_set.len(), "round {round}: a file twice");
            assert_eq!(found_set, expected, "round {round}");
        }
    }

    /// `any_below` answers what a search of every file by its path's bytes
    /// answers: below `base` when the path starts with `base` and a `/`
    /// (or `base` ends in one), for bases in the tree, above it, beside
    /// it and half a name long, with and without a trailing `/`. Fails
    /// when a directory that holds such a file is passed over, or a file
    /// not below `base` is matched.
    #[test]
    fn any_below_is_a_search_of_every_file() {
        let mut next = promptinclude_testkit::seeded();
        for round in 0..60 {
            let top = random_tree(&mut next);
            let tree = Tree::of(top.path(), &Live).unwrap();
            let files = Files::of(&tree);
            let mut every: Vec<Vec<u8>> = Vec::new();
            files.each(
                |_| true,
                |f| every.push(f.as_os_str().as_encoded_bytes().to_vec()),
            );
            let root = tree.dirs[0].as_os_str().as_encoded_bytes().to_vec();
            let mut bases: Vec<Vec<u8>> = vec![b"/".to_vec(), root.clone()];
            bases.extend(
                tree.dirs
                    .iter()
                    .map(|d| d.as_os_str().as_encoded_bytes().to_vec()),
            );
            bases.extend(every.iter().cloned());
            bases.extend(
                tree.dirs[0]
                    .ancestors()
                    .map(|d| d.as_os_str().as_encoded_bytes().to_vec()),
            );
            for b in bases.clone() {
                let mut slash = b.clone();
                slash.push(b'/');
                bases.push(slash);
                bases.push(b[..b.len().saturating_sub(1).max(1)].to_vec());
            }
            bases.push([root.as_slice(), b"//a"].concat());
            bases.push([root.as_slice(), b"/nowhere"].concat());
            // A first component is let in when it is in this random half
            // of the names (or always).
            let open: Vec<bool> = (0..8).map(|_| next(2) == 0).collect();
            let all = next(3) == 0;
            let enter = |rel: &[u8]| {
                let first = rel.split(|&b| b == b'/').next().unwrap_or_default();
                all || open[first.iter().map(|&b| b as usize).sum::<usize>() % open.len()]
            };
            for base in &bases {
                let below: BTreeSet<&[u8]> = every
                    .iter()
                    .filter_map(|f| {
                        let rest = f.strip_prefix(base.as_slice())?;
                        let rel = if base.ends_with(b"/") {
                            rest
                        } else {
                            rest.strip_prefix(b"/")?
                        };
                        (!rel.is_empty() && enter(rel)).then_some(rel)
                    })
                    .collect();
                let base_path = Path::new(OsStr::from_bytes(base));
                let mut asked = BTreeSet::new();
                let none = files.any_below(base_path, enter, |rel| {
                    asked.insert(rel.to_vec());
                    false
                });
                assert!(!none);
                let asked: BTreeSet<&[u8]> = asked.iter().map(Vec::as_slice).collect();
                assert_eq!(asked, below, "round {round}, base {base_path:?}");
                for target in &below {
                    assert!(
                        files.any_below(base_path, enter, |rel| rel == *target),
                        "round {round}, base {base_path:?}, {target:?}"
                    );
                }
            }
        }
    }

    /// `shown_path` by bytes is what `Path::strip_prefix` gives, for every
    /// root and path made of a few parts (plain or not).
    #[test]
    fn shown_path_is_the_path_below_the_root() {
        let by_components = |root: &Path, path: &Path| match path.strip_prefix(root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().into_owned(),
            Err(_) => path.to_string_lossy().into_owned(),
        };
        let paths = promptinclude_testkit::small_paths(4);
        let roots: Vec<&String> = paths.iter().filter(|p| p.len() <= 5).collect();
        for root in roots {
            for path in &paths {
                let (root, path) = (Path::new(root), Path::new(path));
                assert_eq!(
                    super::shown_path(root, path),
                    by_components(root, path),
                    "{root:?} {path:?}"
                );
            }
        }
    }
}
