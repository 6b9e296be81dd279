//! Copilot CLI's `@path` imports, which it inlines into every custom
//! instructions file it sends but `GEMINI.md` (not into instruction files).
//! Found by running it (its loader is native code):
//!
//! * **An import** is an `@` outside code (a fenced block: from a line
//!   starting, after spaces and tabs, with ```` ``` ```` or `~~~` to the next
//!   such line of the same mark; an inline span: from a run of backticks to
//!   the next run of as many on the line, else to the line's end), not
//!   after an ASCII letter, digit or one of `._%+-` (an e-mail address),
//!   followed by a path: up to white space or one of `<>"'` and the
//!   backtick, less the `.,:;!?)]}` it ends with, holding a `.` or a `/`.
//! * **Resolved** from the importing file's directory (the directory a
//!   link to it is in, for the instructions file itself; the directory it
//!   really is in, for an imported file), links followed. Absolute and `~/`
//!   paths, and files outside the repository (the working directory where
//!   there is none; `~/.copilot` for the user's own file), are left as
//!   text; so are directories, files that
//!   cannot be read, files larger than 512 KiB and files not valid UTF-8.
//! * **Inlined** right after the path as
//!   `\n\n<imported_custom_instruction source="REAL PATH">\nTEXT\n</imported_custom_instruction>`:
//!   the text without byte order marks, its own tags escaped (`&lt;`),
//!   trailing white space trimmed, its own imports inlined the same way,
//!   eight imports deep at most (deeper ones are left as text).
//! * **Once**: a file the instructions file already inlined (or the file
//!   itself) is `<imported_custom_instruction source="…" skipped="already-loaded" />`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use crate::disk::{joined, Disk};
use crate::{ContextFile, Outcome, Role, Skip};

/// How many imports deep Copilot CLI inlines files.
const MAX_DEPTH: usize = 8;

/// The largest file it inlines, in bytes.
const MAX_BYTES: u64 = 512 * 1024;

/// The tag around an inlined file.
const TAG: &str = "imported_custom_instruction";

/// An instructions file's text with its imports inlined, and what became
/// of each import (in the order Copilot meets them, each after the file
/// that imports it).
pub(super) struct Expanded {
    /// `None` when the text is sent as it is.
    pub(super) text: Option<String>,
    pub(super) files: Vec<ContextFile>,
}

/// Where an instructions file's imports may lead, and what `~` is.
pub(super) struct Bounds<'a> {
    /// Imports inline files inside this directory only.
    pub(super) within: &'a Path,
    /// `$HOME` (a `~/` import is named by where it would lead).
    pub(super) home: &'a Path,
}

/// `text`, the text of the instructions file `file`, as Copilot CLI sends
/// it: imports inlined, none of them outside `bounds.within`.
pub(super) fn expand(
    disk: &dyn Disk,
    file: &Path,
    text: &str,
    bounds: Bounds<'_>,
    role: Role,
) -> Expanded {
    if !text.contains('@') {
        return Expanded {
            text: None,
            files: Vec::new(),
        };
    }
    let mut expansion = Expansion {
        disk,
        bounds,
        role,
        loaded: vec![disk
            .canonicalize(file)
            .unwrap_or_else(|_| file.to_path_buf())],
        files: Vec::new(),
    };
    let base = file.parent().unwrap_or(Path::new("/"));
    let text = match expansion.inline(text, base, file, 0) {
        Cow::Borrowed(_) => None,
        Cow::Owned(text) => Some(text),
    };
    Expanded {
        text,
        files: expansion.files,
    }
}

/// One instructions file's imports being inlined.
struct Expansion<'a> {
    disk: &'a dyn Disk,
    bounds: Bounds<'a>,
    role: Role,
    /// The real paths of the file and of every file it inlined so far.
    loaded: Vec<PathBuf>,
    files: Vec<ContextFile>,
}

/// What an import comes to.
enum Resolved {
    /// Its file (real path) and text, inlined.
    Inline(PathBuf, String, u64),
    /// Already inlined: named, not inlined again.
    Repeated(PathBuf),
    /// Left as text.
    Left(PathBuf, Skip),
}

impl Expansion<'_> {
    /// `text` (of `importer`, in `base`, `depth` imports away from the
    /// instructions file) with its imports inlined.
    fn inline<'t>(
        &mut self,
        text: &'t str,
        base: &Path,
        importer: &Path,
        depth: usize,
    ) -> Cow<'t, str> {
        let found = imports(text);
        if depth == MAX_DEPTH {
            for import in found {
                let path = joined(base, import.path);
                self.record(path, importer, None, Outcome::Skipped(Skip::TooDeep));
            }
            return Cow::Borrowed(text);
        }
        let mut out = String::new();
        let mut last = 0;
        for import in found {
            // An `@` inside a path already inlined.
            if import.at < last {
                continue;
            }
            let block = match self.resolve(import.path, base) {
                Resolved::Left(path, why) => {
                    self.record(path, importer, None, Outcome::Skipped(why));
                    continue;
                }
                Resolved::Repeated(path) => {
                    let block = format!(
                        "\n\n<{TAG} source=\"{}\" skipped=\"already-loaded\" />",
                        attribute(&path)
                    );
                    self.record(path, importer, None, Outcome::Skipped(Skip::Repeated));
                    block
                }
                Resolved::Inline(path, inner, bytes) => {
                    self.loaded.push(path.clone());
                    self.record(path.clone(), importer, Some(bytes), Outcome::Loaded);
                    let dir = path.parent().unwrap_or(Path::new("/"));
                    let inner = self.inline(&inner, dir, &path, depth + 1);
                    format!(
                        "\n\n<{TAG} source=\"{}\">\n{inner}\n</{TAG}>",
                        attribute(&path)
                    )
                }
            };
            out.push_str(&text[last..import.end]);
            out.push_str(&block);
            last = import.end;
        }
        if last == 0 {
            return Cow::Borrowed(text);
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }

    /// Where the import `path`, made in `base`, leads.
    fn resolve(&self, path: &str, base: &Path) -> Resolved {
        if let Some(below) = path.strip_prefix("~/").or((path == "~").then_some("")) {
            return Resolved::Left(joined(self.bounds.home, below), Skip::Outside);
        }
        let written = joined(base, path);
        if path.starts_with('/') {
            return Resolved::Left(written, Skip::Outside);
        }
        let Ok(real) = self.disk.canonicalize(&written) else {
            // The text is left either way; naming a missing file above the
            // bound "outside" keeps the report free of whatever lies there.
            let why = if self.would_be(&written).starts_with(self.bounds.within) {
                Skip::NotFound
            } else {
                Skip::Outside
            };
            return Resolved::Left(crate::js::resolve(&written), why);
        };
        if self.loaded.contains(&real) {
            return Resolved::Repeated(real);
        }
        if !real.starts_with(self.bounds.within) {
            return Resolved::Left(real, Skip::Outside);
        }
        match self.disk.metadata(&real) {
            Ok(meta) if meta.is_file() && meta.len() > MAX_BYTES => {
                Resolved::Left(real, Skip::TooLarge)
            }
            Ok(meta) if meta.is_file() => match self.disk.read(&real) {
                Ok(bytes) => match std::str::from_utf8(&bytes) {
                    Ok(text) => Resolved::Inline(real, inlined_text(text), bytes.len() as u64),
                    Err(_) => Resolved::Left(real, Skip::Unreadable("not valid UTF-8".to_string())),
                },
                Err(e) => Resolved::Left(real, Skip::Unreadable(e.to_string())),
            },
            _ => Resolved::Left(real, Skip::NotFound),
        }
    }

    /// Where the missing file `written` would be: its nearest existing
    /// directory's real path, with the rest of the path (`..` resolved as
    /// written) after it.
    fn would_be(&self, written: &Path) -> PathBuf {
        let lexical = crate::js::resolve(written);
        let mut dir = lexical.as_path();
        while let Some(parent) = dir.parent() {
            dir = parent;
            if let Ok(real) = self.disk.canonicalize(dir) {
                let rest = lexical.strip_prefix(dir).unwrap_or(&lexical);
                return real.join(rest);
            }
        }
        lexical
    }

    fn record(&mut self, path: PathBuf, importer: &Path, bytes: Option<u64>, outcome: Outcome) {
        self.files.push(ContextFile {
            path,
            role: self.role,
            bytes,
            tokens: 0,
            outcome,
            parent: Some(importer.to_path_buf()),
        });
    }
}

/// An imported file's text as inlined (before its own imports are): byte
/// order marks dropped, the tag escaped, trailing white space trimmed.
fn inlined_text(text: &str) -> String {
    text.replace('\u{feff}', "")
        .replace(&format!("<{TAG}"), &format!("&lt;{TAG}"))
        .replace(&format!("</{TAG}"), &format!("&lt;/{TAG}"))
        .trim_end()
        .to_string()
}

/// A path as the `source` attribute holds it.
fn attribute(path: &Path) -> String {
    let path = path.to_string_lossy();
    let mut out = String::with_capacity(path.len());
    for c in path.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// An `@path` of a text: where its `@` is, where the path ends, the path.
#[derive(Debug, PartialEq)]
struct Import<'a> {
    at: usize,
    end: usize,
    path: &'a str,
}

/// The imports of `text`, in order (see the module's documentation).
fn imports(text: &str) -> Vec<Import<'_>> {
    let mut out = Vec::new();
    let mut fence: Option<&str> = None;
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let at = start;
        start += line.len();
        let lead = line.trim_start_matches([' ', '\t']);
        match fence {
            Some(mark) => {
                if lead.starts_with(mark) {
                    fence = None;
                }
            }
            None => match ["```", "~~~"].into_iter().find(|m| lead.starts_with(m)) {
                Some(mark) => fence = Some(mark),
                None => imports_of_line(text, at, at + line.len(), &mut out),
            },
        }
    }
    out
}

/// The imports of the line `text[from..to]`, outside its code spans.
fn imports_of_line<'a>(text: &'a str, from: usize, to: usize, out: &mut Vec<Import<'a>>) {
    let bytes = text.as_bytes();
    let mut i = from;
    while i < to {
        match bytes[i] {
            b'`' => {
                let run = bytes[i..to].iter().take_while(|b| **b == b'`').count();
                // An unclosed run leaves the rest of the line out.
                i = crate::markdown::code_span_close(&bytes[..to], i + run, run)
                    .map_or(to, |close| close + run);
            }
            b'@' => {
                let after_word = i > 0
                    && (bytes[i - 1].is_ascii_alphanumeric() || b"._%+-".contains(&bytes[i - 1]));
                if !after_word {
                    out.extend(import_at(text, i, to));
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// The import whose `@` is at `at` (before `to`, the line's end), if the
/// path that follows is one.
fn import_at(text: &str, at: usize, to: usize) -> Option<Import<'_>> {
    let rest = &text[at + 1..to];
    let len = rest
        .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`'))
        .unwrap_or(rest.len());
    let path = rest[..len].trim_end_matches(['.', ',', ':', ';', '!', '?', ')', ']', '}']);
    let is_path = !path.starts_with('@') && (path.contains('.') || path.contains('/'));
    is_path.then(|| Import {
        at,
        end: at + 1 + path.len(),
        path,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(text: &str) -> Vec<&str> {
        imports(text).into_iter().map(|i| i.path).collect()
    }

    #[test]
    fn a_path_ends_at_white_space_quotes_and_closing_punctuation() {
        assert_eq!(
            paths("see @a.md, (@b.md) @c.md. @d.md:"),
            ["a.md", "b.md", "c.md", "d.md"]
        );
        assert_eq!(
            paths("@e.md'x @f.md\"y @g.md>z @h.md)."),
            ["e.md", "f.md", "g.md", "h.md"]
        );
        assert_eq!(
            paths("@a,b.md @a(b.md @x.md* @y.md#"),
            ["a,b.md", "a(b.md", "x.md*", "y.md#"]
        );
        assert_eq!(
            paths("@noext @dir @sub/noext @.hidden"),
            ["sub/noext", ".hidden"]
        );
    }

    #[test]
    fn an_at_after_a_word_is_an_address() {
        assert_eq!(
            paths("me@x.md _@a.md -@b.md .@c.md +@d.md %@e.md 1@f.md"),
            Vec::<&str>::new()
        );
        assert_eq!(
            paths("(@a.md /@b.md \\@c.md ü@d.md #@e.md"),
            ["a.md", "b.md", "c.md", "d.md", "e.md"]
        );
        assert_eq!(paths("@@x.md"), ["x.md"]);
    }

    #[test]
    fn code_is_not_read_for_imports() {
        assert_eq!(paths("`@a.md` @b.md `@c.md\n@d.md"), ["b.md", "d.md"]);
        assert_eq!(paths("``a ` @a.md `` `x`` @b.md ` @c.md"), ["c.md"]);
        assert_eq!(
            paths("```\n@a.md\n~~~\n@b.md\n```js\n@c.md\n  ~~~\n@d.md\n\t~~~\n@e.md"),
            ["c.md", "e.md"]
        );
        assert_eq!(
            paths("````\n@a.md\n```\n@b.md\n- ```\n@c.md"),
            ["b.md", "c.md"]
        );
    }

    #[test]
    fn a_missing_file_above_the_bound_is_outside_it() {
        // Whether a file lies above the repository must not change what the
        // report says of a missing import there (a checkout elsewhere has
        // nothing above it).
        let guard = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(guard.path()).unwrap().join("repo");
        std::fs::create_dir_all(root.join("docs")).unwrap();
        let file = root.join("docs/CLAUDE.md");
        let skips = |text: &str| -> Vec<Outcome> {
            let bounds = Bounds {
                within: &root,
                home: Path::new("/nonexistent-home"),
            };
            expand(&crate::disk::Live, &file, text, bounds, Role::Project)
                .files
                .into_iter()
                .map(|f| f.outcome)
                .collect()
        };
        let expected = vec![
            Outcome::Skipped(Skip::Outside),
            Outcome::Skipped(Skip::NotFound),
            Outcome::Skipped(Skip::NotFound),
            Outcome::Skipped(Skip::Outside),
        ];
        let text = "@../../a.md @../b.md @gone/../../c.md @gone/../../../d.md";
        assert_eq!(skips(text), expected);
        std::fs::write(root.parent().unwrap().join("a.md"), "above").unwrap();
        std::fs::write(root.parent().unwrap().join("d.md"), "above").unwrap();
        assert_eq!(skips(text), expected);
    }

    #[test]
    fn inlined_text_escapes_the_tag_and_trims_its_end() {
        assert_eq!(
            inlined_text("\u{feff}a </imported_custom_instruction> <imported_custom_instruction x\u{feff} \n\u{a0}"),
            "a &lt;/imported_custom_instruction> &lt;imported_custom_instruction x"
        );
        assert_eq!(attribute(Path::new("/a&b/c.md")), "/a&amp;b/c.md");
    }
}
