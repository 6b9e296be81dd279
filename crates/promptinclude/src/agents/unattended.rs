//! What an agent run unattended may be told of another agent's context
//! (the MCP tool `agent_context`): the unattended reading policy
//! ([`crate::trust`]) applied to every file the modelled agent read, and
//! to Agent Zero's project configuration.
//!
//! The real agent reads what it reads, links included (a `CLAUDE.md`
//! linked to `~/.npmrc` is loaded). The report of it must not carry that
//! text to a model another way: the names of the imports found in it, its
//! size and token count, or totals that count it. So a file the policy
//! withholds keeps its path and the reason alone, and everything derived
//! from its text goes: the imports it names (and theirs), its counts, and
//! the totals of what is sent.
//!
//! Whose file is it decides what is asked of it:
//!
//! * the user's own files are read as they are: the global ones
//!   (`~/.claude/CLAUDE.md`) and what they import, and files outside the
//!   root the agent finds by its own convention (a `CLAUDE.md` in a
//!   directory above the project);
//! * a file of the repository (below the root, or imported by one) is
//!   asked what the hooks ask of a rule file: a link is read only when
//!   `HEAD` commits every link on the way and the target as it is, nothing
//!   in `.git` is read, nothing outside the root;
//! * a file a repository's file imports is the repository's choice, like a
//!   file only a widened `name_pattern` reaches: read only when `HEAD`
//!   holds it with the content on disk. That holds for the imports of a
//!   `CLAUDE.local.md` too, which a repository can commit as well. The
//!   name a kept file states is kept, found or not.

use std::collections::HashSet;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::{agent_zero, Agent, AgentContext, ContextError, Outcome, Role, Skip, Start};
use crate::discover::Candidate;
use crate::trust::{Guard, ReadPolicy};

/// What `agent` loads when started as `start` says, in the project at
/// `root` (resolved), as an agent run unattended may be told it: Agent
/// Zero's configuration read under `policy` (as the hooks read it), then
/// `withhold`.
pub fn context(
    agent: Agent,
    start: &Start<'_>,
    root: &Path,
    policy: &ReadPolicy,
) -> Result<AgentContext, ContextError> {
    let mut context = match agent {
        Agent::AgentZero => {
            let resolver = agent_zero::host_resolver(start.env);
            agent_zero::context_read_as(&resolver, start.cwd, policy.clone())?
        }
        _ => super::context(agent, start)?,
    };
    withhold(&mut context, root, policy);
    Ok(context)
}

/// Applies `policy` (the unattended one, or what the user relaxed of it)
/// to `context`, whose project is the root at `root` (resolved): see the
/// module docs.
pub(crate) fn withhold(context: &mut AgentContext, root: &Path, policy: &ReadPolicy) {
    let conventional = Guard::new(root, policy, None);
    let imported = Guard::committed_only(root, policy);
    // Files whose text is withheld, and files of the repository.
    let mut withheld: HashSet<PathBuf> = HashSet::new();
    let mut repository: HashSet<PathBuf> = HashSet::new();
    let mut kept = Vec::with_capacity(context.files.len());
    for mut file in std::mem::take(&mut context.files) {
        let parent = file.parent.as_ref();
        if parent.is_some_and(|p| withheld.contains(p)) {
            // Named by withheld text: the name itself is that text.
            withheld.insert(file.path.clone());
            continue;
        }
        let by_repository = parent.is_some_and(|p| repository.contains(p));
        if !(by_repository || file.role != Role::Global && file.path.starts_with(root)) {
            kept.push(file);
            continue;
        }
        repository.insert(file.path.clone());
        // Nothing was read from a file the agent could not open.
        if file.bytes.is_none() && !file.is_sent() {
            kept.push(file);
            continue;
        }
        let guard = if parent.is_some() {
            &imported
        } else {
            &conventional
        };
        let candidate = Candidate::new(file.path.as_os_str().as_bytes().to_vec());
        if let Some(why) = guard.withheld(&candidate) {
            withheld.insert(file.path.clone());
            file.bytes = None;
            file.tokens = 0;
            file.outcome = Outcome::Skipped(Skip::Withheld(format!("{why} ({})", why.kind())));
        }
        kept.push(file);
    }
    context.files = kept;
    if !withheld.is_empty() {
        context.parts.clear();
        context.limit = None;
    }
}
