//! Agent Zero with its Prompt Include plugin: exactly what `render` prints
//! for the working directory, from the same code path
//! ([`Batch::render_root`]), with the host's configuration (the project's
//! `.a0proj` settings, `A0_SET_` variables).

use std::fs;
use std::path::Path;

use super::{Agent, AgentContext, ContextError, ContextFile, Outcome, Part, Place, Role, Skip};
use crate::batch::Batch;
use crate::model::Status;
use crate::project::Resolver;
use crate::trust::ReadPolicy;

/// The Prompt Include plugin version reproduced (its `plugin.yaml`; the
/// whole reference is proven by the oracle tests).
pub const VERSION: &str = "1.0.0";

/// What the Prompt Include plugin puts into Agent Zero's system prompt for
/// a project at `cwd`, its configuration decided by `resolver`.
pub fn context(resolver: &Resolver, cwd: &Path) -> Result<AgentContext, ContextError> {
    let cwd = fs::canonicalize(cwd).map_err(|source| ContextError::Cwd {
        path: cwd.to_path_buf(),
        source,
    })?;
    let scan_error = |message: String| ContextError::Scan {
        path: cwd.clone(),
        message,
    };
    let batch = Batch::plan_with_policy(&[&cwd], resolver, ReadPolicy::reference())
        .map_err(|e| scan_error(e.to_string()))?;
    let (scan, section) = batch
        .render_root(&cwd, |scanner, root| scanner.scan_at(root, None))
        .map_err(|e| scan_error(e.to_string()))?;
    let result = scan.result();
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
        vec![Part {
            place: Place::SystemPrompt,
            text: section,
        }]
    };
    Ok(AgentContext {
        agent: Agent::AgentZero,
        cwd,
        root: None,
        files,
        limit: None,
        parts,
        notes,
    })
}
