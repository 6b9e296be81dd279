//! Agent Zero with its Prompt Include plugin: exactly what `render` prints
//! for the working directory, from the same code path
//! ([`Batch::render_root`]), with the host's configuration (the project's
//! `.a0proj` settings, `A0_SET_` variables).

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use super::{
    Agent, AgentContext, ContextError, ContextFile, Host, Outcome, Part, Place, Role, Skip, Start,
};
use crate::batch::Batch;
use crate::config::env;
use crate::model::{ScanResult, Status};
use crate::project::Resolver;
use crate::trust::ReadPolicy;

/// Agent Zero's loader handed to the agents crate: [`context`] with the
/// host's configuration (`host_resolver`).
pub(crate) struct Loader;

impl Host for Loader {
    fn agent_zero(&self, start: &Start<'_>) -> Result<AgentContext, ContextError> {
        context(&host_resolver(start.env), start.cwd)
    }
}

/// [`Loader`], knowing already what Agent Zero loads in one directory
/// (the audit's own scan of a tree's root, when that scan is the one its
/// host makes: [`scans_as_the_host`]).
pub(crate) struct Scanned<'a>(pub Option<&'a AgentContext>);

impl Host for Scanned<'_> {
    fn agent_zero(&self, start: &Start<'_>) -> Result<AgentContext, ContextError> {
        match self.0 {
            Some(known) if known.cwd == start.cwd => Ok(known.clone()),
            _ => Loader.agent_zero(start),
        }
    }
}

/// The reference reproduced, exactly: the SHA-256 of the Agent Zero source
/// the oracle tests run, as [`reference_digest`] computes it (the registry
/// names it: [`Agent::reference_sha256`]).
pub use promptinclude_agents::AGENT_ZERO_REFERENCE_SHA256 as REFERENCE_SHA256;

/// The digest [`REFERENCE_SHA256`] names, of the files under `dir` (for
/// each file in byte order of its `/`-separated relative path: the path, a
/// line feed, its length in decimal, a line feed, its bytes), so a test can
/// tell when the reference it runs is not the one reproduced.
pub fn reference_digest(dir: &Path) -> std::io::Result<String> {
    use sha2::{Digest, Sha256};
    fn walk(
        dir: &Path,
        rel: &str,
        out: &mut Vec<(String, std::path::PathBuf)>,
    ) -> std::io::Result<()> {
        for entry in fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            if entry.file_type()?.is_dir() {
                walk(&entry.path(), &rel, out)?;
            } else {
                out.push((rel, entry.path()));
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, "", &mut files)?;
    files.sort();
    let mut hash = Sha256::new();
    for (rel, path) in files {
        let bytes = fs::read(path)?;
        hash.update(format!("{rel}\n{}\n", bytes.len()));
        hash.update(&bytes);
    }
    Ok(hash.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The configuration Agent Zero's host starts from: its defaults with
/// the `A0_SET_` variables of `env` (each project's own settings are read
/// by the scan).
pub(crate) fn host_resolver(env: &dyn Fn(&str) -> Option<OsString>) -> Resolver {
    let mut resolver = Resolver::default();
    let lookup = |name: &str| env(name).and_then(|v| v.into_string().ok());
    resolver.base_notes.env = env::apply(&mut resolver.base, lookup);
    resolver.env = resolver.base_notes.env.clone();
    resolver
}

/// What the Prompt Include plugin puts into Agent Zero's system prompt for
/// a project at `cwd`, its configuration decided by `resolver`.
pub fn context(resolver: &Resolver, cwd: &Path) -> Result<AgentContext, ContextError> {
    context_read_as(resolver, cwd, ReadPolicy::reference())
}

/// [`context`], the project's configuration file and rule files read under
/// `policy` (what an agent run unattended may be told: a configuration
/// the policy withholds is not read, so no error quotes it).
pub(crate) fn context_read_as(
    resolver: &Resolver,
    cwd: &Path,
    policy: ReadPolicy,
) -> Result<AgentContext, ContextError> {
    let cwd = fs::canonicalize(cwd).map_err(|source| ContextError::Cwd {
        path: cwd.to_path_buf(),
        source,
    })?;
    let scan_error = |message: String| ContextError::Scan {
        path: cwd.clone(),
        message,
    };
    let batch = Batch::plan_with_policy(&[&cwd], resolver, policy)
        .map_err(|e| scan_error(e.to_string()))?;
    let (scan, section) = batch
        .render_root(&cwd, |scanner, root| scanner.scan_at(root, None))
        .map_err(|e| scan_error(e.to_string()))?;
    Ok(from_scan(cwd, scan.result(), section))
}

/// Whether `agents` include Agent Zero and a scan made with `resolver` and
/// `policy` is the one its host makes (its configuration from `env`, the
/// reference's read policy): then [`from_scan`] gives its context from
/// that scan instead of a second one.
pub fn scans_as_the_host(
    agents: &[Agent],
    resolver: &Resolver,
    env: &dyn Fn(&str) -> Option<OsString>,
    policy: &ReadPolicy,
) -> bool {
    agents.contains(&Agent::AgentZero)
        && *resolver == host_resolver(env)
        && *policy == ReadPolicy::reference()
}

/// [`context`] from a scan already made of the project at `cwd` (its
/// physical path), with the host's configuration (`host_resolver`) and
/// the reference's read policy, and the section rendered from it: what
/// `audit --agents` takes from the audit's own scan instead of scanning
/// the tree again.
pub fn from_scan(cwd: PathBuf, result: &ScanResult, section: String) -> AgentContext {
    let files = result
        .files
        .iter()
        .map(|entry| {
            let size = fs::metadata(&entry.path).ok().map(|m| m.len());
            let outcome = match entry.status {
                Status::Ok => Outcome::Loaded,
                Status::Cropped => Outcome::Truncated {
                    at: entry.content.len() as u64,
                    of: size.unwrap_or_default(),
                },
                Status::Skipped => Outcome::Skipped(Skip::LimitReached),
            };
            ContextFile {
                path: entry.path.clone().into(),
                role: Role::Project,
                bytes: size,
                tokens: usize::try_from(entry.token_count).unwrap_or_default(),
                outcome,
                parent: None,
            }
        })
        .collect();
    let mut notes = Vec::new();
    if result.skipped_count > 0 {
        notes.push(format!(
            "{} more rule file(s) left out: unreadable, blank, or past the file count",
            result.skipped_count
        ));
    }
    let parts = if section.is_empty() {
        Vec::new()
    } else {
        vec![Part::new(Place::SystemPrompt, section)]
    };
    AgentContext {
        agent: Agent::AgentZero,
        cwd,
        root: None,
        files,
        limit: None,
        parts,
        notes,
    }
}
