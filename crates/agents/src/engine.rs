//! The one engine for every modelled agent. An agent's context is made of
//! what it finds in each directory on the way from the start up to `/`:
//! the agent's module says what one directory gives
//! ([`Layered::found_in`]), how the finds make the text it sends
//! ([`Layered::assemble`]), and what a start below another can change
//! ([`Layered::likeness`]). The engine finds each directory's once for
//! every start below it, skips the directories that hold none of the
//! agent's names without asking the system anything, gives a start that
//! adds nothing its parent's context where the agent says so, and computes
//! the others in parallel. No model keeps a cache or a shortcut of its
//! own. A single start ([`context`]) goes through the same functions, so
//! what one start loads and what a tree's chains say cannot disagree.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::disk::{ancestors, Disk, Listing, Remembered};
use crate::{AgentContext, ContextError, Measured, Shared, Tree, Writing};

/// How what an agent loads started in a directory that finds nothing
/// relates to what it loads started right above it, as the agent can tell
/// without computing it.
#[derive(Clone, Copy)]
pub(crate) enum Likeness {
    /// The same: nothing it found above depends on being started there.
    AddsNothing,
    /// The same as in every other such directory of the one above (only
    /// Claude Code tells this: its imports are followed inside the working
    /// directory alone).
    LikeSiblings,
    /// Not known: computed.
    Own,
}

/// An agent modelled as what it finds in each directory from the start up
/// to `/`, each directory's find the same from every start at or below
/// it.
pub(crate) trait Layered: Sync {
    /// What the agent finds in one directory.
    type Found: Send + Sync;

    /// What the agent needs to know of a start to tell
    /// [`Layered::likeness`] of the starts right below it that add nothing:
    /// found once for all of them.
    type Above: Send + Sync;

    /// The names the agent looks for in a directory (as a case-folding
    /// file system could match them: without ASCII case), where a
    /// directory's listing can tell: a directory holding none of them
    /// finds nothing, and is not asked. `None`: every directory is asked.
    fn names(&self) -> Option<&[String]>;

    /// What the agent finds in `dir`.
    fn found_in(&self, dir: &Path, disk: &dyn Disk) -> Self::Found;

    /// Whether `found` adds nothing to what the agent loads.
    fn adds_nothing(&self, found: &Self::Found) -> bool;

    /// [`Layered::Above`] of the start in `dir`, which loads `context`.
    fn above(&self, dir: &Path, context: &AgentContext, disk: &dyn Disk) -> Self::Above;

    /// How what a start in `cwd` (listed as `listing`), a directory that
    /// adds nothing right below a start known as `above`, loads relates to
    /// what that start loads: `Own` where it depends on the start's own
    /// path in a way the agent cannot tell.
    fn likeness(
        &self,
        above: &Self::Above,
        cwd: &Path,
        listing: Option<&Listing>,
        disk: &dyn Disk,
    ) -> Likeness;

    /// What the agent loads started in `cwd` (its physical path), from the
    /// finds of the directories from `cwd` up to `/` that add something,
    /// nearest first; its text written as `writing` says.
    fn assemble(
        &self,
        cwd: PathBuf,
        up: &[(&Path, &Self::Found)],
        disk: &dyn Disk,
        writing: Writing,
    ) -> Result<AgentContext, ContextError>;
}

/// What `model` loads started in `cwd`, a physical path.
pub(crate) fn context<M: Layered>(
    model: &M,
    cwd: PathBuf,
    disk: &dyn Disk,
    writing: Writing,
) -> Result<AgentContext, ContextError> {
    let found: Vec<(&Path, M::Found)> = ancestors(&cwd)
        .map(|dir| (dir, model.found_in(dir, disk)))
        .filter(|(_, found)| !model.adds_nothing(found))
        .collect();
    let up: Vec<(&Path, &M::Found)> = found.iter().map(|(dir, found)| (*dir, found)).collect();
    model.assemble(cwd.clone(), &up, disk, writing)
}

/// What `model` loads started in each directory of `tree`, in
/// [`contexts_shared`](crate::contexts_shared)'s form: a directory that
/// adds nothing is given as its parent's context (or a sibling's) where
/// [`Layered::likeness`] says so; every other one is computed and
/// measured. The tree's levels are done one after another (a directory's
/// decision needs its parent's context), each level's contexts in
/// parallel.
pub(crate) fn contexts<M: Layered>(
    model: &M,
    tree: &Tree,
    disk: &Remembered<'_>,
) -> Result<Vec<Shared>, ContextError> {
    let dirs = &tree.dirs;
    // Each directory's find, where it adds something.
    let found: Vec<Option<M::Found>> = (0..dirs.len())
        .into_par_iter()
        .with_min_len(64)
        .map(|i| {
            let screened = model
                .names()
                .is_some_and(|names| crate::holds_none_in(tree.listed(i), names));
            if screened {
                return None;
            }
            Some(model.found_in(&dirs[i], disk)).filter(|f| !model.adds_nothing(f))
        })
        .collect();
    // The directories above the tree, the same for every start in it.
    let above: Vec<(PathBuf, M::Found)> = ancestors(&dirs[0])
        .skip(1)
        .map(|dir| (dir.to_path_buf(), model.found_in(dir, disk)))
        .filter(|(_, found)| !model.adds_nothing(found))
        .collect();
    let own = |i: usize| -> Result<Measured, ContextError> {
        let mut up: Vec<(&Path, &M::Found)> = Vec::new();
        let mut at = Some(i);
        while let Some(j) = at {
            if let Some(found) = &found[j] {
                up.push((&dirs[j], found));
            }
            at = tree.parent(j);
        }
        up.extend(above.iter().map(|(dir, found)| (dir.as_path(), found)));
        let cwd = crate::physical_cwd(disk, &dirs[i])?;
        let context = model.assemble(cwd, &up, disk, Writing::ToMeasure)?;
        Ok(Measured::of(context, disk))
    };
    let mut shared: Vec<Option<Shared>> = (0..dirs.len()).map(|_| None).collect();
    for level in crate::levels(tree) {
        // A directory that adds nothing is given as the directory its
        // parent is given as (or the parent) where the agent says it loads
        // the same; where it says it loads what its siblings like it load,
        // the first of them is computed and the others given as it. In
        // this thread: a decision is a few lookups, less than handing it
        // to another thread costs. A parent's directories come one after
        // another: what the agent needs of it is found once for them all.
        let mut above: Option<(usize, M::Above)> = None;
        let mut first_like: Option<(usize, usize)> = None;
        let mut compute = Vec::new();
        for i in level {
            let owner = tree.parent(i).filter(|_| found[i].is_none()).and_then(|p| {
                let o = match shared[p] {
                    Some(Shared::As(o)) => o,
                    _ => p,
                };
                match &shared[o] {
                    Some(Shared::Own(measured)) => Some((p, o, &measured.context)),
                    _ => None,
                }
            });
            let Some((p, o, context)) = owner else {
                compute.push(i);
                continue;
            };
            let facts = match &mut above {
                Some((of, facts)) if *of == p => facts,
                _ => &mut above.insert((p, model.above(&dirs[p], context, disk))).1,
            };
            match model.likeness(facts, &dirs[i], tree.listed(i), disk) {
                Likeness::AddsNothing => shared[i] = Some(Shared::As(o)),
                Likeness::LikeSiblings => match first_like {
                    Some((of, first)) if of == p => shared[i] = Some(Shared::As(first)),
                    _ => {
                        first_like = Some((p, i));
                        compute.push(i);
                    }
                },
                Likeness::Own => compute.push(i),
            }
        }
        // In parallel in runs of four: a context is worth a thread's time,
        // a decision is not.
        let done: Vec<(usize, Result<Measured, ContextError>)> = compute
            .par_iter()
            .with_min_len(4)
            .map(|&i| (i, own(i)))
            .collect();
        for (i, measured) in done {
            shared[i] = Some(Shared::Own(measured?));
        }
    }
    Ok(shared
        .into_iter()
        .map(|s| s.expect("every level is done"))
        .collect())
}

/// Every directory of `tree` computed on its own by `context` (of its
/// physical path), for an agent whose settings depend on the start; the
/// levels one after another, as [`contexts`] does them.
pub(crate) fn each_own(
    tree: &Tree,
    disk: &dyn Disk,
    context: impl Fn(&Path) -> Result<AgentContext, ContextError> + Sync,
) -> Result<Vec<Shared>, ContextError> {
    let mut shared: Vec<Option<Shared>> = (0..tree.dirs.len()).map(|_| None).collect();
    for level in crate::levels(tree) {
        let done: Vec<(usize, Result<AgentContext, ContextError>)> = level
            .par_iter()
            .with_min_len(4)
            .map(|&i| (i, context(&tree.dirs[i])))
            .collect();
        for (i, context) in done {
            shared[i] = Some(Shared::Own(Measured::of(context?, disk)));
        }
    }
    Ok(shared
        .into_iter()
        .map(|s| s.expect("every level is done"))
        .collect())
}
