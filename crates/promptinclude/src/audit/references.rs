//! `stale_reference`: the repository paths a context file names, for the
//! audit to look for. Only what is certainly a path: the target of a
//! relative Markdown link (`[setup](docs/setup.md)`), or a code span that
//! holds one path and nothing else (`` `src/lib.rs` ``, `` `Cargo.toml` ``);
//! never a URL, a glob, a command, or anything in a fenced code block.
//!
//! Markdown is read line by line, as far as references go: fences (```` ``` ````,
//! `~~~`) and code spans (a run of backticks to the next run as long) as
//! CommonMark has them; links as `[text](target)` outside code spans. No
//! Markdown crate of the project's dependencies reads it, and the agents'
//! own readers (the `markdown` module of the agents crate) model what they
//! load, not what a text refers to.

/// One path a text names.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Reference<'a> {
    /// Its 1-based line.
    pub(crate) line: usize,
    /// The path as written (a link's target without its `#fragment`).
    pub(crate) path: &'a str,
    /// How it is named.
    pub(crate) how: How,
}

/// How a text names a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum How {
    /// The target of a Markdown link: a path by Markdown's own rules.
    Link,
    /// A code span holding one path-like word: a path only where it has a
    /// file extension of [`EXTENSIONS`], or its first directory exists.
    Code,
}

/// File extensions that make a code span's word a file name (not
/// `console.log`, `user.name`, `v1.2`): source, configuration and text
/// files that rules name (not C headers: `stdarg.h` is the system's).
const EXTENSIONS: &[&str] = &[
    "bash", "c", "cc", "cfg", "cjs", "cpp", "cs", "css", "csv", "dart", "go", "gradle", "htm",
    "html", "ini", "ipynb", "java", "jsonc", "json", "jsx", "kt", "kts", "lock", "lua", "md",
    "mdc", "mdx", "mjs", "php", "proto", "ps1", "py", "rb", "rs", "scss", "sh", "sql", "svelte",
    "swift", "toml", "ts", "tsx", "txt", "vue", "xml", "yaml", "yml", "zsh",
];

/// Whether `word`'s last part has one of [`EXTENSIONS`] (`README.md`).
pub(crate) fn has_extension(word: &str) -> bool {
    let name = word.rsplit('/').next().unwrap_or(word);
    match name.rsplit_once('.') {
        Some((stem, ext)) => !stem.is_empty() && EXTENSIONS.contains(&ext),
        None => false,
    }
}

/// The paths `text` names, in order.
pub(crate) fn find(text: &str) -> Vec<Reference<'_>> {
    let mut out = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    for (i, line) in text.lines().enumerate() {
        let lead = line.trim_start_matches(' ');
        let indent = line.len() - lead.len();
        let run = |c: u8| lead.bytes().take_while(|&b| b == c).count();
        match fence {
            Some((c, n)) => {
                if indent < 4 && run(c) >= n && lead[run(c)..].trim().is_empty() {
                    fence = None;
                }
                continue;
            }
            None if indent < 4 && (run(b'`') >= 3 || run(b'~') >= 3) => {
                let c = if run(b'`') >= 3 { b'`' } else { b'~' };
                fence = Some((c, run(c)));
                continue;
            }
            None => {}
        }
        in_line(line, i + 1, &mut out);
    }
    out
}

/// The references of one line outside fences: code spans and links.
fn in_line<'a>(line: &'a str, number: usize, out: &mut Vec<Reference<'a>>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'`' => {
                let run = bytes[i..].iter().take_while(|&&b| b == b'`').count();
                let start = i + run;
                match crate::agents::code_span_close(bytes, start, run) {
                    Some(end) => {
                        let code = line[start..end].trim_matches(' ');
                        if let Some(path) = code_path(code) {
                            out.push(Reference {
                                line: number,
                                path,
                                how: How::Code,
                            });
                        }
                        i = end + run;
                    }
                    None => i = start,
                }
            }
            b']' if bytes.get(i + 1) == Some(&b'(') => {
                let start = i + 2;
                let end = line[start..].find(')').map(|n| start + n);
                if let Some(path) = end.and_then(|end| link_path(&line[start..end])) {
                    out.push(Reference {
                        line: number,
                        path,
                        how: How::Link,
                    });
                }
                i = end.unwrap_or(start);
            }
            _ => i += 1,
        }
    }
}

/// The path a link's destination names, if it is a relative path in the
/// repository: not a URL (`https:`, `mailto:`), not only a fragment, no
/// placeholder.
fn link_path(destination: &str) -> Option<&str> {
    let destination = destination.trim();
    // `[a](path "title")`, `[a](<path>)`.
    let destination = match destination.strip_prefix('<') {
        Some(rest) => rest.split('>').next().unwrap_or(rest),
        None => destination.split(' ').next().unwrap_or(destination),
    };
    let path = destination.split(['#', '?']).next().unwrap_or("");
    let scheme = path.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if path.is_empty() || scheme || path.starts_with("//") || !plain(path) {
        return None;
    }
    Some(path)
}

/// The path a code span holds, if it holds one word that looks like a path
/// and nothing else (see [`How::Code`]): not a flag (`-x`), a package
/// (`@scope/name`), a home path (`~/x`), a range (`a..b`), an assignment or
/// a call.
fn code_path(code: &str) -> Option<&str> {
    let word = code.trim_end_matches('/');
    let odd = word.is_empty()
        || !plain(word)
        || word.contains([
            ':', '=', ',', ';', '(', ')', '<', '>', '\'', '"', '|', '!', '&', '^', '#',
        ])
        || word.starts_with(['-', '@', '~', '+'])
        || word.ends_with('.')
        || word
            .split('/')
            .any(|part| part.contains("..") && part != "..");
    (!odd && (code.contains('/') || has_extension(word))).then_some(word)
}

/// Whether `path` holds nothing a path of the repository would not: no
/// white space, globs, variables or template placeholders.
fn plain(path: &str) -> bool {
    !path.contains(|c: char| c.is_whitespace() || c.is_control() || "*?[]{}$%\\`".contains(c))
}

#[cfg(test)]
mod tests {
    use super::{find, How};

    fn paths(text: &str) -> Vec<(&str, How)> {
        find(text).into_iter().map(|r| (r.path, r.how)).collect()
    }

    #[test]
    fn links_to_paths_in_the_repository() {
        assert_eq!(
            paths("See [setup](docs/setup.md#install) and [api](<docs/my api.md>) and [t](x.md \"T\")."),
            [("docs/setup.md", How::Link), ("x.md", How::Link)],
            "a destination with a space is no plain path"
        );
        assert_eq!(
            paths("[a](https://x.io/a.md) [b](mailto:a@b) [c](#top) [d](//cdn/x.js) [e](src/*.ts) [f]({{url}})"),
            []
        );
        assert_eq!(
            paths("[up](../README.md) [abs](/docs/x.md)"),
            [("../README.md", How::Link), ("/docs/x.md", How::Link)]
        );
    }

    #[test]
    fn code_spans_holding_one_path() {
        assert_eq!(
            paths("Run `cargo test`; edit `src/lib.rs`, `Cargo.toml` and `docs/`; not `console.log`, `v1.2`, `user.name`."),
            [("src/lib.rs", How::Code), ("Cargo.toml", How::Code), ("docs", How::Code)]
        );
        assert_eq!(
            paths("`--flag=x` `@types/node` `http://x/a.md` `src/**/*.ts` `$HOME/x.md` `foo(a/b)` `a, b.md` `~/.zshrc` `e.g.`"),
            []
        );
        assert_eq!(paths("``a `b.md` c`` `x.md`"), [("x.md", How::Code)]);
        assert_eq!(
            paths("`./scripts/run.sh` `../up/x.py`"),
            [("./scripts/run.sh", How::Code), ("../up/x.py", How::Code)]
        );
    }

    #[test]
    fn nothing_in_fenced_code() {
        let text = "`a.md`\n```sh\ncat `b.md` [x](c.md)\n```\n~~~~\n`d.md`\n~~~~\n[e](e.md)\n";
        let found = find(text);
        let got: Vec<(usize, &str)> = found.iter().map(|r| (r.line, r.path)).collect();
        assert_eq!(got, [(1, "a.md"), (8, "e.md")]);
    }
}
