//! The audit's warnings: things about a root's rule files that the scan
//! itself accepts silently but that change what the agent sees, let text
//! the project does not own into the prompt, or hide a rule file.
//!
//! Kinds are stable `snake_case` strings (see `docs/audit-schema.md`); a
//! new kind may be added in a later schema version, never renamed.

use std::collections::HashMap;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Serialize, Serializer};

use crate::render::template::{may_hold_directive, INCLUDE_ORIGINAL, NAMED_INCLUDE};

/// What a warning is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum WarningKind {
    /// `{{ include "…" }}` (a relative name) in a rule file: the host puts
    /// its prompt file of that name there if it has one; we keep the text.
    HostInclude,
    /// `{{ include original }}` in a rule file: rendered as nothing, by the
    /// host and by us.
    HostIncludeOriginal,
    /// `{{name}}` in a rule file: kept as written, except `{{suffix}}` and
    /// `{{content}}` in a path (replaced, by the host and by us).
    HostPlaceholder,
    /// A rule file reached through a symlink that resolves outside the root.
    SymlinkOutsideRoot,
    /// A rule file reached through a symlink that git's `HEAD` does not
    /// commit as it is (a link on the way, the target, or its content): the
    /// hooks and the MCP server withhold it.
    SymlinkToUncommitted,
    /// A rule file that is a symlink to nothing.
    BrokenSymlink,
    /// A rule file that is a symlink loop.
    SymlinkLoop,
    /// A rule file inside a nested repository (a directory below the root holding `.git`).
    NestedRepository,
    /// A file named like a rule file in a directory deeper than `max_depth` allows.
    UndiscoveredTooDeep,
    /// A file named like a rule file inside a directory the patterns prune.
    UndiscoveredPruned,
    /// A file named like a rule file that a pattern drops.
    UndiscoveredIgnored,
    /// A file whose name matches `name_pattern` only if letter case is ignored.
    UndiscoveredCase,
    /// A directory the scan would walk but cannot list: skipped silently, with
    /// every rule file below it.
    UnreadableDir,
    /// A rule file that is empty or only whitespace: passed over.
    BlankFile,
    /// A rule file that is not valid UTF-8: invalid bytes became U+FFFD.
    InvalidUtf8,
    /// A rule file cut to fit the budget.
    Cropped,
    /// A rule file the budget left out (status `skipped`, `not_reached` or `over_budget`).
    Skipped,
    /// A rule file that cannot be read (permissions, not a regular file, …).
    Unreadable,
    /// A rule file the reading policy kept out of the prompt (`--links
    /// inside`, the hooks and the MCP server; see [`crate::trust`]).
    Withheld,
    /// A limit outside the host settings page's range.
    LimitOutOfRange,
    /// A key in the configuration file that is none of the six: ignored (a typo?).
    UnknownConfigKey,
    /// A limit that is legal but surprising: a float, a boolean or a negative number.
    SurprisingValue,
    /// An `A0_SET_` environment value that does not convert: the default stays.
    InvalidEnvValue,
    /// The root is not a directory: nothing is included.
    RootNotDirectory,
    /// Characters a reader does not see (tag characters, bidirectional
    /// controls, zero-width and format characters) in a rule file.
    HiddenText,
}

impl WarningKind {
    /// Every kind, in the order reports list them.
    pub const ALL: [WarningKind; 25] = [
        WarningKind::HostInclude,
        WarningKind::HostIncludeOriginal,
        WarningKind::HostPlaceholder,
        WarningKind::SymlinkOutsideRoot,
        WarningKind::SymlinkToUncommitted,
        WarningKind::BrokenSymlink,
        WarningKind::SymlinkLoop,
        WarningKind::NestedRepository,
        WarningKind::UndiscoveredTooDeep,
        WarningKind::UndiscoveredPruned,
        WarningKind::UndiscoveredIgnored,
        WarningKind::UndiscoveredCase,
        WarningKind::UnreadableDir,
        WarningKind::BlankFile,
        WarningKind::InvalidUtf8,
        WarningKind::Cropped,
        WarningKind::Skipped,
        WarningKind::Unreadable,
        WarningKind::Withheld,
        WarningKind::LimitOutOfRange,
        WarningKind::UnknownConfigKey,
        WarningKind::SurprisingValue,
        WarningKind::InvalidEnvValue,
        WarningKind::RootNotDirectory,
        WarningKind::HiddenText,
    ];

    /// The stable name used in JSON and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            WarningKind::HostInclude => "host_include",
            WarningKind::HostIncludeOriginal => "host_include_original",
            WarningKind::HostPlaceholder => "host_placeholder",
            WarningKind::SymlinkOutsideRoot => "symlink_outside_root",
            WarningKind::SymlinkToUncommitted => "symlink_to_uncommitted",
            WarningKind::BrokenSymlink => "broken_symlink",
            WarningKind::SymlinkLoop => "symlink_loop",
            WarningKind::NestedRepository => "nested_repository",
            WarningKind::UndiscoveredTooDeep => "undiscovered_too_deep",
            WarningKind::UndiscoveredPruned => "undiscovered_pruned",
            WarningKind::UndiscoveredIgnored => "undiscovered_ignored",
            WarningKind::UndiscoveredCase => "undiscovered_case",
            WarningKind::UnreadableDir => "unreadable_dir",
            WarningKind::BlankFile => "blank_file",
            WarningKind::InvalidUtf8 => "invalid_utf8",
            WarningKind::Cropped => "cropped",
            WarningKind::Skipped => "skipped",
            WarningKind::Unreadable => "unreadable",
            WarningKind::Withheld => "withheld",
            WarningKind::LimitOutOfRange => "limit_out_of_range",
            WarningKind::UnknownConfigKey => "unknown_config_key",
            WarningKind::SurprisingValue => "surprising_value",
            WarningKind::InvalidEnvValue => "invalid_env_value",
            WarningKind::RootNotDirectory => "root_not_directory",
            WarningKind::HiddenText => "hidden_text",
        }
    }

    /// What it means and what to do, in a sentence or two (the help of
    /// its SARIF rule).
    pub fn help(self) -> &'static str {
        match self {
            WarningKind::HostInclude => "`{{ include \"name\" }}` in a rule file: Agent Zero puts its prompt file of that name there if one of its prompt folders holds one, else the text stays as written.",
            WarningKind::HostIncludeOriginal => "`{{ include original }}` in a rule file renders as nothing: remove it.",
            WarningKind::HostPlaceholder => "`{{name}}` in a rule file stays as written: the host fills in its variables before it inserts the rule text.",
            WarningKind::SymlinkOutsideRoot => "A rule file reached through a symbolic link that leaves the repository: the prompt gets a file the project does not hold. Commit the file, or remove the link.",
            WarningKind::SymlinkToUncommitted => "A rule file reached through a symbolic link that git's HEAD does not commit as it is: the hooks and the MCP server withhold it. Commit the link and its target.",
            WarningKind::BrokenSymlink => "A rule file that is a symbolic link to nothing: it adds nothing. Fix or remove the link.",
            WarningKind::SymlinkLoop => "A rule file that is a symbolic link loop: it adds nothing. Fix or remove the link.",
            WarningKind::NestedRepository => "A rule file inside a nested repository: text the project does not own reaches the prompt. Prune the directory or move the file.",
            WarningKind::UndiscoveredTooDeep => "A file named like a rule file below max_depth: the scan never finds it. Move it up or raise max_depth.",
            WarningKind::UndiscoveredPruned => "A file named like a rule file inside a directory the patterns prune: the scan never finds it.",
            WarningKind::UndiscoveredIgnored => "A file named like a rule file that a pattern drops: the scan never finds it.",
            WarningKind::UndiscoveredCase => "A file whose name matches the rule-file pattern only when letter case is ignored: the scan never finds it. Rename it.",
            WarningKind::UnreadableDir => "A directory the scan cannot list: every rule file below it is skipped silently.",
            WarningKind::BlankFile => "A rule file that is empty or only white space: passed over.",
            WarningKind::InvalidUtf8 => "A rule file that is not valid UTF-8: its invalid bytes reach the prompt as U+FFFD.",
            WarningKind::Cropped => "A rule file cut to fit the token budget: its end never reaches the prompt. Shorten it or raise the budget.",
            WarningKind::Skipped => "A rule file the token budget leaves out: none of it reaches the prompt. Shorten the files before it or raise the budget.",
            WarningKind::Unreadable => "A rule file that cannot be read (permissions, not a regular file): it adds nothing.",
            WarningKind::Withheld => "A rule file the reading policy keeps out of the prompt (a link leaving the repository or to uncommitted content).",
            WarningKind::LimitOutOfRange => "A limit outside the range of the host's settings page.",
            WarningKind::UnknownConfigKey => "A key in the configuration file that the plugin does not know: ignored (a typo?).",
            WarningKind::SurprisingValue => "A limit that is legal but surprising: a float, a boolean or a negative number.",
            WarningKind::InvalidEnvValue => "An A0_SET_ environment value that does not convert: the default stays.",
            WarningKind::RootNotDirectory => "The root is not a directory: nothing is included.",
            WarningKind::HiddenText => HIDDEN_TEXT_HELP,
        }
    }
}

/// The help of `hidden_text`, in the plain audit and in the agents' alike.
pub(crate) const HIDDEN_TEXT_HELP: &str = "Characters a reader does not see: Unicode tag characters (invisible ASCII, decoded in the message), bidirectional controls (Trojan Source), zero-width and other format characters, stray variation selectors. Every agent reads them; a reviewer does not. Remove them unless they are meant (the message names each code point).";

impl fmt::Display for WarningKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for WarningKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// One warning.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// What it is about.
    pub kind: WarningKind,
    /// The file concerned (full path), if any.
    pub path: Option<String>,
    /// The 1-based line in that file, where it applies.
    pub line: Option<usize>,
    /// What is wrong, in words.
    pub message: String,
    /// For `hidden_text`: the class of characters (`tag`, `bidi`,
    /// `zero_width`, `format`, `variation_selector`), which a gate may name
    /// (`--fail-on hidden_text:tag`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<&'static str>,
    /// The 1-based column (in characters) on `line`, where there is one
    /// (`hidden_text`: the first hidden character's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
}

impl Warning {
    /// A warning about `path` (no line).
    pub fn file(kind: WarningKind, path: &str, message: String) -> Warning {
        Warning {
            kind,
            path: Some(path.to_string()),
            line: None,
            message,
            class: None,
            column: None,
        }
    }
}

/// `files.replace_placeholders_*` of the host replaces `{{key}}` for its variables.
static PLACEHOLDER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{\{(\w+)\}\}").expect("valid placeholder regex"));

/// Where in a rule file a directive was found: the host renders the path and
/// the contents through the same templates, but fills them in differently.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Path,
    Content,
}

/// Host template directives in a rule file's *path*: the host renders the
/// path through the same template as the contents, so they expand there too.
pub(crate) fn host_expansions_in_path(path: &str) -> Vec<Warning> {
    find_expansions(path, path, Place::Path)
        .into_iter()
        .map(|mut w| {
            w.line = None;
            w.message = format!("in its path: {}", w.message);
            w
        })
        .collect()
}

/// Host expansions in a rule file's text: one warning per occurrence, in
/// text order, located by line.
pub(crate) fn host_expansions(path: &str, text: &str) -> Vec<Warning> {
    find_expansions(path, text, Place::Content)
}

/// The directives the host's templates act on in `text`, found with the
/// host's own patterns ([`crate::render::template`]). A named include with
/// an absolute name is left out: the host always keeps it as written, as we
/// do.
fn find_expansions(path: &str, text: &str, place: Place) -> Vec<Warning> {
    if !may_hold_directive(text) {
        return Vec::new();
    }
    let mut found: Vec<(usize, WarningKind, String)> = Vec::new();
    for c in NAMED_INCLUDE.captures_iter(text) {
        if c[1].starts_with('/') {
            continue;
        }
        found.push((
            c.get(0).map_or(0, |m| m.start()),
            WarningKind::HostInclude,
            format!(
                "`{}`: the host puts its prompt file of that name here if one of its prompt \
                 folders holds one; promptinclude keeps the text as written, as the host does \
                 when none does",
                &c[0]
            ),
        ));
    }
    for m in INCLUDE_ORIGINAL.find_iter(text) {
        found.push((
            m.start(),
            WarningKind::HostIncludeOriginal,
            format!(
                "`{}` renders as nothing in the host (the plugin's template has no \
                 lower-priority copy), and so in promptinclude's section",
                m.as_str()
            ),
        ));
    }
    for c in PLACEHOLDER.captures_iter(text) {
        let message = match (place, &c[1]) {
            (Place::Path, "suffix") => "is replaced by the entry's suffix (` !!! cropped to fit` or nothing), by the host and by promptinclude",
            (Place::Path, "content") => "is replaced by the file's contents, by the host and by promptinclude",
            _ => "stays as written: the host fills in its variables before it inserts this text, so none replaces it",
        };
        found.push((
            c.get(0).map_or(0, |m| m.start()),
            WarningKind::HostPlaceholder,
            format!("`{}` {message}", &c[0]),
        ));
    }
    found.sort_by_key(|f| f.0);
    let mut line = 1;
    let mut counted_to = 0;
    found
        .into_iter()
        .map(|(offset, kind, message)| {
            line += text.as_bytes()[counted_to..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            counted_to = offset;
            Warning {
                kind,
                path: Some(path.to_string()),
                line: Some(line),
                message,
                class: None,
                column: None,
            }
        })
        .collect()
}

/// What a rule file's symlink (if it is one) resolves to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LinkCheck {
    /// Not a symlink (nor reached through a linked directory outside).
    Fine,
    /// A symlink that resolves inside the root.
    Inside,
    /// Resolves to this path, outside the root.
    Outside(PathBuf),
    /// Points at nothing (or through something unreadable); the error.
    Broken(String),
    /// Loops.
    Loop,
}

impl LinkCheck {
    /// The warning for the rule file `path`, if the link is not fine.
    pub fn warning(&self, path: &str) -> Option<Warning> {
        let (kind, message) = match self {
            LinkCheck::Fine | LinkCheck::Inside => return None,
            LinkCheck::Outside(target) => (
                WarningKind::SymlinkOutsideRoot,
                format!(
                    "symlink resolves to {}, outside the root: any file on the disk can reach the prompt",
                    target.display()
                ),
            ),
            LinkCheck::Broken(e) => (WarningKind::BrokenSymlink, format!("broken symlink ({e})")),
            LinkCheck::Loop => (WarningKind::SymlinkLoop, "symlink loop".to_string()),
        };
        Some(Warning::file(kind, path, message))
    }
}

/// Checks rule files against the root's canonical path: a link, or a file
/// reached through a linked directory, that resolves outside the root.
/// Remembers each directory's resolved path.
#[derive(Debug, Default)]
pub struct LinkChecker {
    canonical_root: Option<PathBuf>,
    dirs: HashMap<PathBuf, Option<PathBuf>>,
}

impl LinkChecker {
    /// A checker for the root whose canonical path is `canonical_root`
    /// (`None` when the root itself cannot be resolved: nothing is outside).
    pub fn new(canonical_root: Option<PathBuf>) -> LinkChecker {
        LinkChecker {
            canonical_root,
            dirs: HashMap::new(),
        }
    }

    /// What the rule file at `path` resolves to.
    pub fn check(&mut self, path: &Path) -> LinkCheck {
        let Some(root) = self.canonical_root.as_deref() else {
            return LinkCheck::Fine;
        };
        let is_link = fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link {
            // Reached through a linked directory? Its directory resolves outside.
            let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
                return LinkCheck::Fine;
            };
            let real_dir = self
                .dirs
                .entry(dir.to_path_buf())
                .or_insert_with(|| fs::canonicalize(dir).ok());
            return match real_dir {
                Some(real) if !real.starts_with(root) => LinkCheck::Outside(real.join(name)),
                _ => LinkCheck::Fine,
            };
        }
        match fs::canonicalize(path) {
            Ok(target) if !target.starts_with(root) => LinkCheck::Outside(target),
            Ok(_) => LinkCheck::Inside,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => LinkCheck::Loop,
            Err(e) => LinkCheck::Broken(e.to_string()),
        }
    }
}

/// Finds nested repositories: directories strictly below the root that hold
/// a `.git` (directory, or file as in submodules and worktrees). Remembers
/// every directory it has looked at.
#[derive(Debug, Default)]
pub(crate) struct NestedRepos {
    holds_git: HashMap<PathBuf, bool>,
}

impl NestedRepos {
    /// The outermost nested repository containing `file`, a path below `root`.
    pub(crate) fn containing(&mut self, root: &Path, file: &Path) -> Option<PathBuf> {
        let rel = file.strip_prefix(root).ok()?;
        let mut dir = root.to_path_buf();
        let components: Vec<_> = rel.components().collect();
        // The last component is the file itself.
        for component in components.iter().take(components.len().saturating_sub(1)) {
            dir.push(component);
            let holds = *self
                .holds_git
                .entry(dir.clone())
                .or_insert_with(|| fs::symlink_metadata(dir.join(".git")).is_ok());
            if holds {
                return Some(dir);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_without_double_braces_holds_no_directive() {
        // `may_hold_directive` skips the patterns for such a text, which is
        // exact only while every pattern starts with a literal `{{`.
        for pattern in [&*PLACEHOLDER, &*INCLUDE_ORIGINAL, &*NAMED_INCLUDE] {
            assert!(
                pattern.as_str().starts_with(r"\{\{"),
                "{}",
                pattern.as_str()
            );
        }
        // And a text that holds one only across a line is still looked at.
        assert!(may_hold_directive("a\n{{x}}"));
        assert!(!may_hold_directive("{ {x} }"));
        let got = host_expansions("/r/f", "x\n{{\u{2000}include original}}");
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].line, Some(2));
    }

    #[test]
    fn expansions_are_located_by_line() {
        let text =
            "a {{x}}\nb\n{{ include \"y.md\" }} {{include original}}\n{{ not }} {{include'z'}}\n\
             {{\u{1c}include\u{85}original}} {{include '/abs.md'}}";
        let got: Vec<(WarningKind, Option<usize>)> = host_expansions("/r/f", text)
            .into_iter()
            .map(|w| (w.kind, w.line))
            .collect();
        assert_eq!(
            got,
            vec![
                (WarningKind::HostPlaceholder, Some(1)),
                (WarningKind::HostInclude, Some(3)),
                (WarningKind::HostIncludeOriginal, Some(3)),
                (WarningKind::HostInclude, Some(4)),
                (WarningKind::HostIncludeOriginal, Some(5)),
            ]
        );
    }

    #[test]
    fn placeholders_in_a_path_say_which_are_replaced() {
        let got: Vec<String> = host_expansions_in_path("/r/{{suffix}}{{content}}{{path}}.md")
            .into_iter()
            .map(|w| w.message)
            .collect();
        assert!(got[0].starts_with("in its path: `{{suffix}}` is replaced"));
        assert!(got[1].starts_with("in its path: `{{content}}` is replaced"));
        assert!(got[2].starts_with("in its path: `{{path}}` stays as written"));
    }

    #[test]
    fn kind_names_are_unique() {
        let mut names: Vec<_> = WarningKind::ALL.iter().map(|k| k.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), WarningKind::ALL.len());
    }
}
