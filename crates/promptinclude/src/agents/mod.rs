//! What other agents load as context files: the `promptinclude-agents`
//! crate (re-exported here), with Agent Zero's loader, which is this
//! crate's scan ([`agent_zero`]), handed in; and what an agent run
//! unattended may be told of any of them ([`unattended`]).

pub mod agent_zero;
pub mod unattended;

use std::ffi::OsString;
use std::path::Path;

pub use promptinclude_agents::*;

use agent_zero::Loader;

/// What `agent` loads when started as `start` says
/// ([`promptinclude_agents::context`]).
pub fn context(agent: Agent, start: &Start<'_>) -> Result<AgentContext, ContextError> {
    promptinclude_agents::context(agent, start, &Loader)
}

/// [`context`], looking at the files through `disk`
/// ([`promptinclude_agents::context_on`]).
pub fn context_on(
    agent: Agent,
    start: &Start<'_>,
    disk: &dyn disk::Disk,
) -> Result<AgentContext, ContextError> {
    promptinclude_agents::context_on(agent, start, disk, &Loader)
}

/// The contexts `agent` loads when started in each directory of the tree
/// at `root` ([`promptinclude_agents::contexts_under`]).
pub fn contexts_under(
    agent: Agent,
    root: &Path,
    home: &Path,
    env: &(dyn Fn(&str) -> Option<OsString> + Sync),
    disk: &disk::Remembered<'_>,
) -> Result<Vec<AgentContext>, ContextError> {
    promptinclude_agents::contexts_under(agent, root, home, env, disk, &Loader)
}

/// [`contexts_under`] for what the chains need, over a tree already listed
/// ([`promptinclude_agents::contexts_shared`]); what Agent Zero loads in
/// its root is `agent_zero` where that is known.
pub fn contexts_shared(
    agent: Agent,
    tree: &Tree,
    home: &Path,
    env: &(dyn Fn(&str) -> Option<OsString> + Sync),
    disk: &disk::Remembered<'_>,
    agent_zero: Option<&AgentContext>,
) -> Result<Vec<Shared>, ContextError> {
    let host = agent_zero::Scanned(agent_zero);
    promptinclude_agents::contexts_shared(agent, tree, home, env, disk, &host)
}
