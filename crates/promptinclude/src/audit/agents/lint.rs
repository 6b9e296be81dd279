//! Cursor's and GitHub Copilot's rule files, linted from their
//! documentation: neither has a command-line agent that runs offline here,
//! so nothing below is checked against the real program (every warning
//! says `lint_only`).
//!
//! * **Cursor** (<https://cursor.com/docs/rules>): project rules are
//!   `.cursor/rules/**/*.mdc` files, in the project's and any
//!   subdirectory's `.cursor/rules`, with front matter `description`,
//!   `globs` and `alwaysApply`. "A plain .md file in .cursor/rules is
//!   ignored by the rules system"; `.cursorrules` is "still supported, but
//!   deprecated". The documentation does not give the type of `globs`;
//!   Cursor reads the rest of the `globs:` line as raw text, so quotes stay
//!   in the pattern and a YAML list is not read (reported and tested in
//!   oven-sh/bun#24853 and cosai-oasis/project-codeguard#121, Cursor
//!   3.17.8), while the unquoted form that works is not YAML when it starts
//!   with `*`.
//! * **Copilot in the IDE** (`copilot`; VS Code's documented behaviour,
//!   <https://docs.github.com/en/copilot/how-tos/configure-custom-instructions/add-repository-instructions>;
//!   Copilot CLI is modelled and proven apart, as `copilot-cli`):
//!   `.github/copilot-instructions.md` applies to every request;
//!   `.github/instructions/**/*.instructions.md` apply to the files their
//!   front matter's `applyTo` ("separating them with commas", from the
//!   repository root; `*.py` names the root's files only) matches.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use memchr::memmem::Finder;
use promptinclude_pycompat::gitwildmatch::IgnoreSpec;

use super::found::{AgentWarning, AgentWarningKind, Found};
use super::Files;
use crate::agents::disk::Disk;

/// How an agent matches scope patterns against a file's path from the
/// base directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Syntax {
    /// Globs as VS Code matches them (Copilot's `applyTo`): `*` stays
    /// within a path segment, so `*.py` names the base directory's files
    /// only; `**` spans segments, `{a,b}` alternates.
    Glob,
    /// Cursor's `globs`, whose matching its documentation does not pin
    /// down: a pattern without `/` is also tried on the file's name at any
    /// depth, so that a scope is called dead only when no reading matches.
    Lenient,
    /// Claude Code's `paths:`: gitignore's patterns (one without `/`
    /// matches at any depth; a match of a directory matches all below it),
    /// case-insensitively; a pattern starting `./` matches nothing.
    Gitignore,
}

/// Whether any of `patterns` matches a file of `files` below `base`, by
/// its path from `base`; `None` when a pattern cannot be read, so that
/// nothing is claimed.
pub(crate) fn any_match(
    syntax: Syntax,
    patterns: &[String],
    base: &Path,
    files: &Files,
) -> Option<bool> {
    Some(compiled(syntax, patterns)?.any_below(base, files))
}

impl Scope {
    /// Whether a file of `files` below `base` matches, by its path from
    /// `base`.
    fn any_below(&self, base: &Path, files: &Files) -> bool {
        // By bytes: the paths are whole (no `.`, no doubled `/`), and
        // `Path::strip_prefix` parsing components was most of a dead-scope
        // check over a large tree.
        let enter = |rel: &[u8]| self.may_match(rel);
        match &self.matcher {
            Matcher::Globs(set) => {
                files.any_below(base, enter, |rel| set.is_match(&*crate::agents::lossy(rel)))
            }
            Matcher::Gitignore(None) => false,
            Matcher::Gitignore(Some(spec)) => files.any_below(base, enter, |rel| {
                spec.is_file_ignored(&crate::audit::lower_case(&crate::agents::lossy(rel)))
            }),
        }
    }

    /// Whether the path `rel` starts with one of the [`Scope::heads`].
    fn may_match(&self, rel: &[u8]) -> bool {
        let Some(heads) = &self.heads else {
            return true;
        };
        let first = rel.split(|&b| b == b'/').next().unwrap_or_default();
        heads.iter().any(|head| match self.matcher {
            Matcher::Globs(_) => first == head.as_bytes(),
            // Lower-casing a name that is not ASCII may give an ASCII
            // one (the Kelvin sign gives `k`): matched in full.
            Matcher::Gitignore(_) => {
                !first.is_ascii() || first.eq_ignore_ascii_case(head.as_bytes())
            }
        })
    }
}

/// Scope patterns compiled for matching.
struct Scope {
    matcher: Matcher,
    /// The first component every match's path starts with, one per
    /// pattern, when each pattern has one (`src` of `src/**/*.ts`): only
    /// the files below one need matching, and a dead scope of a large
    /// tree is told from its few directories' names, not from every path.
    heads: Option<Vec<String>>,
}

/// How [`Scope`] matches a path.
enum Matcher {
    /// [`Syntax::Glob`] and [`Syntax::Lenient`].
    Globs(GlobSet),
    /// [`Syntax::Gitignore`], lower-cased; `None` when no pattern can
    /// match.
    Gitignore(Option<IgnoreSpec>),
}

/// The literal first component that every path `pattern` matches in
/// `syntax` starts with (the whole path's when it has one component), if
/// the pattern is anchored to the base and that component holds no
/// wildcard, escape or other than ASCII. `None` says any path may match.
fn head(syntax: Syntax, pattern: &str) -> Option<&str> {
    let (anchored, pattern) = match syntax {
        // A glob matches the whole path from the base; Cursor's without
        // `/` is also tried at any depth.
        Syntax::Glob => (true, pattern),
        Syntax::Lenient => (pattern.contains('/'), pattern),
        // gitignore (pathspec): a leading `/` anchors, as does one in the
        // middle; a negation or trailing space (stripped, or escaped) is
        // left to the full match.
        Syntax::Gitignore => {
            if pattern.starts_with('!')
                || pattern.ends_with(|c: char| c.is_whitespace() || c.is_control())
            {
                return None;
            }
            match pattern.strip_prefix('/') {
                Some(rest) => (true, rest),
                None => (
                    pattern
                        .split_once('/')
                        .is_some_and(|(_, tail)| !tail.is_empty()),
                    pattern,
                ),
            }
        }
    };
    let first = pattern.split('/').next().unwrap_or_default();
    let literal = !first.is_empty()
        && first.is_ascii()
        && !first.contains(['*', '?', '[', ']', '{', '}', '\\', '!']);
    (anchored && literal).then_some(first)
}

/// `patterns` compiled for `syntax`, or `None` when one cannot be read.
/// Remembered for the process: the same rules recur in every repository
/// made from one template, and compiling a gitignore spec (a `RegexSet`
/// with Unicode classes) costs more than matching it against a tree.
fn compiled(syntax: Syntax, patterns: &[String]) -> Option<Arc<Scope>> {
    type Cache = Mutex<HashMap<(Syntax, Vec<String>), Option<Arc<Scope>>>>;
    /// Enough for the scopes a fleet's templates repeat; past it the cache
    /// starts again, so that the compiled specs of many unvetted
    /// repositories are not all kept.
    const MOST: usize = 64;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Cache::default);
    let key = (syntax, patterns.to_vec());
    if let Some(known) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
        return known.clone();
    }
    let scope = compile(syntax, patterns).map(Arc::new);
    let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
    if cache.len() >= MOST {
        cache.clear();
    }
    cache.insert(key, scope.clone());
    scope
}

/// [`compiled`], afresh.
fn compile(syntax: Syntax, patterns: &[String]) -> Option<Scope> {
    // Each pattern as it is matched: globs without a leading `./`;
    // gitignore lower-cased, those starting `./` (which match nothing)
    // left out.
    let matched: Vec<String> = match syntax {
        Syntax::Glob | Syntax::Lenient => patterns
            .iter()
            .map(|p| p.strip_prefix("./").unwrap_or(p).to_string())
            .collect(),
        Syntax::Gitignore => patterns
            .iter()
            .filter(|p| !p.starts_with("./"))
            .map(|p| p.to_lowercase())
            .collect(),
    };
    let matcher = match syntax {
        Syntax::Glob | Syntax::Lenient => {
            let mut set = GlobSetBuilder::new();
            for pattern in &matched {
                let glob = |p: &str| GlobBuilder::new(p).literal_separator(true).build().ok();
                set.add(glob(pattern)?);
                if syntax == Syntax::Lenient && !pattern.contains('/') {
                    set.add(glob(&format!("**/{pattern}"))?);
                }
            }
            Matcher::Globs(set.build().ok()?)
        }
        Syntax::Gitignore if matched.is_empty() => Matcher::Gitignore(None),
        Syntax::Gitignore => Matcher::Gitignore(Some(IgnoreSpec::from_lines(&matched).ok()?)),
    };
    let heads = matched
        .iter()
        .map(|p| head(syntax, p).map(str::to_string))
        .collect();
    Some(Scope { matcher, heads })
}

/// Patterns for a message: `"a", "b"`.
pub fn listed(patterns: &[String]) -> String {
    let quoted: Vec<String> = patterns.iter().map(|p| format!("{p:?}")).collect();
    quoted.join(", ")
}

/// Every Cursor and Copilot warning about the tree's `files`.
pub(super) fn lint(files: &Files, disk: &dyn Disk, found: &mut Found) {
    let cursor_rules = Finder::new("/.cursor/rules/");
    let copilot_dir = Finder::new("/.github/instructions/");
    // Only these names can be what the checks below look at (Cursor's
    // `.mdc` and `.md` rules, `.cursorrules`, Copilot's `*.instructions.md`):
    // most of a tree's files are passed by their names' last bytes.
    let named =
        |name: &[u8]| name.ends_with(b".md") || name.ends_with(b".mdc") || name == b".cursorrules";
    files.each(named, |file| {
        let text = || {
            disk.read(file)
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        let cursor = mentions(file, &cursor_rules);
        if !cursor
            && !mentions(file, &copilot_dir)
            && file.file_name().is_none_or(|n| n != ".cursorrules")
        {
            return;
        }
        if let Some(rules) = cursor.then(|| cursor_rules_dir(file)).flatten() {
            if file.extension().is_some_and(|e| e == "mdc") {
                if let Some(text) = text() {
                    cursor_rule(file, &text, rules, files, found);
                }
            } else if file.extension().is_some_and(|e| e == "md") {
                found.add(lint_warning(
                    (AgentWarningKind::BadFrontMatter, "a plain .md file among Cursor's rules"),
                    "cursor",
                    file,
                    None,
                    "a plain .md file in .cursor/rules: Cursor reads only .mdc rule files there"
                        .to_string(),
                ));
            }
        } else if file.file_name().is_some_and(|n| n == ".cursorrules") {
            let dir = file.parent().unwrap_or(file);
            let rules = dir.join(".cursor/rules");
            if disk.metadata(&rules).is_ok_and(|m| m.is_dir()) {
                found.add(lint_warning(
                    (AgentWarningKind::Shadowed, "a legacy .cursorrules beside project rules"),
                    "cursor",
                    file,
                    None,
                    format!(
                        "the legacy .cursorrules beside {}: Cursor documents it as deprecated in favour of project rules",
                        found.name(&rules)
                    ),
                ));
            }
        } else if let Some(root) = copilot_root(file) {
            if let Some(text) = text() {
                copilot_instructions(file, &text, root, files, found);
            }
        }
    });
}

fn lint_warning(
    (kind, cause): (AgentWarningKind, &'static str),
    agent: &'static str,
    path: &Path,
    line: Option<usize>,
    message: String,
) -> AgentWarning {
    AgentWarning {
        kind,
        agent,
        path: path.to_path_buf(),
        line,
        message,
        cause,
        class: None,
        column: None,
        dirs: Vec::new(),
        lint_only: true,
    }
}

/// The project directory of a file in some `.cursor/rules/`, when it is in
/// one.
fn cursor_rules_dir(file: &Path) -> Option<&Path> {
    holder_of(file, ".cursor", "rules")
}

/// Whether `file`'s path holds `needle` (a quick test before [`holder_of`],
/// which walks every ancestor, for each of the tree's many files). By
/// bytes: an ASCII needle is in the path's bytes exactly when it is in
/// their lossy decoding, which keeps every ASCII byte.
fn mentions(file: &Path, needle: &Finder<'_>) -> bool {
    needle.find(file.as_os_str().as_encoded_bytes()).is_some()
}

/// The repository root of a `.github/instructions/**/*.instructions.md`.
fn copilot_root(file: &Path) -> Option<&Path> {
    let name = file.file_name()?.to_string_lossy();
    if !name.ends_with(".instructions.md") {
        return None;
    }
    holder_of(file, ".github", "instructions")
}

/// The directory holding the nearest `<dot>/<name>/` above `file`.
fn holder_of<'a>(file: &'a Path, dot: &str, name: &str) -> Option<&'a Path> {
    file.ancestors().skip(1).find_map(|a| {
        let found = a.file_name().is_some_and(|n| n == name)
            && a.parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == dot);
        found.then(|| a.parent().and_then(Path::parent)).flatten()
    })
}

/// A front matter's `key: value` lines, with their 1-based line numbers
/// (the simple `key: value` form both tools document; nothing nested).
fn front_matter_fields(text: &str) -> Option<Vec<(usize, &str, &str)>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines().enumerate();
    let (_, first) = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    let mut fields = Vec::new();
    for (i, line) in lines {
        if line.trim_end() == "---" {
            return Some(fields);
        }
        if let Some((key, value)) = line.split_once(':') {
            if !key.starts_with([' ', '\t', '-']) {
                fields.push((i + 1, key.trim(), value.trim()));
            }
        }
    }
    None
}

/// The comma-separated globs of one value.
fn globs(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .map(str::to_string)
        .collect()
}

/// One `.cursor/rules/*.mdc` file.
fn cursor_rule(file: &Path, text: &str, project: &Path, files: &Files, found: &mut Found) {
    let Some(fields) = front_matter_fields(text) else {
        return;
    };
    let Some(&(line, _, value)) = fields.iter().find(|(_, k, _)| *k == "globs") else {
        return;
    };
    let warn = |kind, message| lint_warning(kind, "cursor", file, Some(line), message);
    let next = text.lines().nth(line).unwrap_or("").trim_start();
    if value.is_empty() {
        if next.starts_with("- ") {
            found.add(warn(
                (AgentWarningKind::BadFrontMatter, "globs as a YAML list"),
                "`globs:` as a YAML list: Cursor reads globs from the `globs:` line only, as one comma-separated string, so it finds none".to_string(),
            ));
        }
        return;
    }
    let quoted = (value.starts_with('"') && value.ends_with('"'))
        || (value.starts_with('\'') && value.ends_with('\''));
    if quoted || value.starts_with('[') {
        found.add(warn(
            (AgentWarningKind::BadFrontMatter, "quoted or bracketed globs"),
            format!(
                "`globs: {value}`: Cursor reads globs as one unquoted comma-separated string; quotes and brackets become part of the pattern"
            ),
        ));
        return;
    }
    if value.starts_with('*') {
        found.add(warn(
            (AgentWarningKind::BadFrontMatter, "globs that are not YAML"),
            format!(
                "`globs: {value}` works in Cursor, but it is not YAML (a leading * starts an alias): YAML tools and other agents reading this front matter fail on it"
            ),
        ));
    }
    let patterns = globs(value);
    if any_match(Syntax::Lenient, &patterns, project, files) == Some(false) {
        found.add(warn(
            (AgentWarningKind::DeadScope, "a scope no file matches today"),
            format!(
                "`globs:` {} matches no file under {}: the rule is never attached",
                listed(&patterns),
                found.name(project)
            ),
        ));
    }
}

/// One `.github/instructions/*.instructions.md` file.
fn copilot_instructions(file: &Path, text: &str, root: &Path, files: &Files, found: &mut Found) {
    let fields = front_matter_fields(text).unwrap_or_default();
    let Some(&(line, _, value)) = fields.iter().find(|(_, k, _)| *k == "applyTo") else {
        found.add(lint_warning(
            (AgentWarningKind::BadFrontMatter, "no applyTo"),
            "copilot",
            file,
            None,
            "no `applyTo:` in its front matter: Copilot in VS Code never applies it on its own (Copilot CLI sends it whole: copilot-cli)".to_string(),
        ));
        return;
    };
    let unquoted = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value);
    let patterns = globs(unquoted);
    if patterns.is_empty() {
        return;
    }
    if any_match(Syntax::Glob, &patterns, root, files) == Some(false) {
        found.add(lint_warning(
            (AgentWarningKind::DeadScope, "a scope no file matches today"),
            "copilot",
            file,
            Some(line),
            format!(
                "`applyTo:` {} matches no file of the repository: Copilot in VS Code never applies the instructions",
                listed(&patterns)
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::{any_match, compile, Files, Syntax};
    use crate::agents::{disk::Live, Tree};

    /// A new temporary directory holding a file at each of `paths` (from
    /// it, `/`-separated) that no other file stands in the way of, and its
    /// tree.
    fn tree_with(paths: &[String]) -> (tempfile::TempDir, Tree) {
        let top = tempfile::tempdir().unwrap();
        for path in paths {
            let file = top.path().join(path);
            let made = std::fs::create_dir_all(file.parent().unwrap());
            if made.is_ok() && file.symlink_metadata().is_err() {
                std::fs::write(&file, "x").unwrap();
            }
        }
        let tree = Tree::of(top.path(), &Live).unwrap();
        (top, tree)
    }

    /// Scopes stay right when there are more of them than the cache keeps
    /// (it starts again), whichever syntax asks.
    #[test]
    fn more_scopes_than_the_cache_keeps_still_match_as_compiled() {
        let paths: Vec<String> = (0..100)
            .step_by(2)
            .map(|i| format!("dir{i}/x.md"))
            .collect();
        let (_top, tree) = tree_with(&paths);
        let (files, base) = (Files::of(&tree), tree.dirs[0].as_path());
        for round in 0..2 {
            for i in 0..100 {
                for syntax in [Syntax::Glob, Syntax::Lenient, Syntax::Gitignore] {
                    let patterns = [format!("dir{i}/*.md")];
                    assert_eq!(
                        any_match(syntax, &patterns, base, &files),
                        Some(i % 2 == 0),
                        "round {round}, {syntax:?}, dir{i}"
                    );
                    // The same patterns read otherwise by each syntax:
                    // VS Code's `*` stays in the base directory.
                    let anywhere = ["*.md".to_string()];
                    assert_eq!(
                        any_match(syntax, &anywhere, base, &files),
                        Some(syntax != Syntax::Glob),
                        "round {round}, {syntax:?}, *.md"
                    );
                }
            }
        }
    }

    /// Matching only the files below a scope's literal first components
    /// finds what matching every file finds, for random patterns and
    /// trees in each syntax (case, the Kelvin sign, anchors, negations,
    /// trailing spaces, escapes, braces). Fails when a pattern is given a
    /// head it does not have.
    #[test]
    fn heads_leave_out_only_files_no_pattern_matches() {
        let mut next = promptinclude_testkit::seeded();
        let names = [
            "src",
            "SRC",
            "Src",
            "\u{212A}ey",
            "key",
            "a.ts",
            "b.TS",
            "x",
            "sr",
            "srcx",
            "lib",
            "s c",
        ];
        let patterns = [
            "src/**/*.ts",
            "/src",
            "src/",
            "src",
            "!src/x",
            "src/x ",
            "SRC/*.ts",
            "key/**",
            "\u{212A}ey/a.ts",
            "*.ts",
            "**/a.ts",
            "src\\/x",
            "s?c/x",
            "{src,lib}/x",
            "lib/a.ts",
            "./src/a.ts",
            "/",
            "/key",
            "Key/a.ts",
            "s c/x",
            "src/a.ts/",
            "x/**/b.ts",
        ];
        for round in 0..400 {
            let paths: Vec<String> = (0..1 + next(6))
                .map(|_| {
                    let parts: Vec<&str> =
                        (0..1 + next(3)).map(|_| names[next(names.len())]).collect();
                    parts.join("/")
                })
                .collect();
            let (_top, tree) = tree_with(&paths);
            let files = Files::of(&tree);
            let chosen: Vec<String> = (0..1 + next(3))
                .map(|_| patterns[next(patterns.len())].to_string())
                .collect();
            for syntax in [Syntax::Glob, Syntax::Lenient, Syntax::Gitignore] {
                let (Some(with), Some(mut every)) =
                    (compile(syntax, &chosen), compile(syntax, &chosen))
                else {
                    continue;
                };
                every.heads = None;
                let base = tree.dirs[0].as_path();
                assert_eq!(
                    with.any_below(base, &files),
                    every.any_below(base, &files),
                    "round {round}, {syntax:?}, {chosen:?}, {paths:?}"
                );
            }
        }
    }
}
