//! What an agent itself warns of in the files it loads, beyond what
//! becomes of them: the part of an agent's documentation that
//! `audit --agents` turns into warnings. Each model gives its own
//! ([`Agent::advice`](crate::Agent::advice)); the audit asks for it
//! without naming any agent.

use std::path::Path;

use crate::disk::Disk;
use crate::ContextFile;

/// An agent's own warnings about the files it loads.
#[derive(Default)]
pub struct Advice {
    /// A size past which it warns of a file it loads.
    pub size: Option<SizeAdvice>,
    /// Its rules that load only for some paths.
    pub scoped_rules: Option<ScopedRules>,
    /// Whether the user can approve imports outside where it follows them
    /// (Claude Code's external imports): an approved import of a file that
    /// is not there loads nothing, which is an unresolved import rather
    /// than one waiting for an approval.
    pub approves_imports: bool,
}

/// A size past which an agent warns of a file it loads.
pub struct SizeAdvice {
    /// The length past which it warns.
    pub max: usize,
    /// The length of the file at a path as the agent measures it (`None`:
    /// it cannot be read).
    pub measure: fn(&dyn Disk, &Path) -> Option<usize>,
    /// What the agent says of a file of a length (the first) past `max`
    /// (the second).
    pub words: fn(usize, usize) -> String,
}

/// An agent's rules that load only for the paths their front matter names.
pub struct ScopedRules {
    /// The front matter key that names the paths (`paths:`).
    pub key: &'static str,
    /// Whether a file the agent considered is one of these rules.
    pub is_rule: fn(&ContextFile) -> bool,
    /// A rule's scope as the agent reads the rule's text (`None`: it has
    /// none).
    pub scope: fn(&str) -> Option<RuleScope>,
    /// Whether a pattern can match no path at all.
    pub never_matches: fn(&str) -> bool,
    /// The directory a rule's patterns are matched from.
    pub base: fn(&Path) -> &Path,
    /// How the patterns match a path from that directory.
    pub syntax: PatternSyntax,
}

/// How an agent matches a scoped rule's patterns against a file's path
/// from the rule's base directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternSyntax {
    /// Gitignore's patterns (one without `/` matches at any depth; a match
    /// of a directory matches all below it), case-insensitively; a pattern
    /// starting `./` matches nothing (Claude Code's `paths:`).
    Gitignore,
}

/// A rule's scope as the agent reads it, and where that may differ from
/// what its author meant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleScope {
    /// The 1-based line of the scope's key in the file.
    pub line: usize,
    /// Whether the agent scopes the rule (never loads it at start).
    pub scoped: bool,
    /// The glob patterns it is scoped to (when it is).
    pub patterns: Vec<String>,
    /// How the agent reads it differently from how it is written.
    pub surprises: Vec<String>,
}
