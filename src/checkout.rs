//! The agents' view of a git revision: the revision written into a
//! temporary directory (the agents' models look at real files), seen at the
//! tree's own place. `diff --agents` compares two such views; `audit
//! --agents --rev` reports one: what a fresh clone's agents load.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use promptinclude::agents::disk::{Confined, Live, Rebased};
use promptinclude::agents::Agent;
use promptinclude::audit::agents::{audit_tree_on, Setup, TreeAudit};

/// The agents' chains of the files in `tree` (the work tree itself, or a
/// checkout), named and counted as at `place` (the root's physical path),
/// with nothing above them but the user's own directories: a checkout's
/// surroundings are not the tree's.
pub fn agents_at(agents: &[Agent], tree: &Path, place: &Path, setup: &Setup<'_>) -> TreeAudit {
    let user: Vec<PathBuf> = Agent::ALL
        .iter()
        .filter_map(|agent| agent.directory_variable())
        .filter_map(|name| (setup.env)(name))
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .collect();
    let files = Confined::new(&Live, tree, setup.home, user);
    let at_place = Rebased::new(&files, place, tree);
    audit_tree_on(agents, place, setup, &at_place)
}

/// Writes revision `rev` of the repository at `root` into `dir` (created
/// here, empty); its physical path.
#[cfg(feature = "git")]
pub fn checkout(root: &Path, rev: &str, dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    // Links naming the tree's own place name the checkout's (by the path
    // given and the physical one).
    let physical = std::fs::canonicalize(root).ok();
    let absolute = std::path::absolute(root).ok();
    let place: Vec<&Path> = [physical.as_deref(), absolute.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    promptinclude::git::RevTree::open(root, rev)?.write_checkout(dir, &place)?;
    physical_path(dir)
}

#[cfg(not(feature = "git"))]
pub fn checkout(_: &Path, _: &str, _: &Path) -> Result<PathBuf> {
    anyhow::bail!("this promptinclude was built without git support (the `git` feature)")
}

/// The physical path of the directory `dir`.
pub fn physical_path(dir: &Path) -> Result<PathBuf> {
    std::fs::canonicalize(dir).with_context(|| format!("cannot enter {}", dir.display()))
}
