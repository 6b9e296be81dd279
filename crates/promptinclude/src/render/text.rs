//! The system-prompt section, as the host's extension and prompt templates
//! render it.
//!
//! Placeholders are replaced one after another with plain string
//! replacement, in the host's order, so that placeholder-like text inside a
//! path or a name pattern behaves exactly as in the host (a `{{suffix}}`
//! inside a path is replaced; text inside content is left alone). Each block,
//! and then the whole section, goes through the host's include pass
//! ([`super::template`]), as `read_prompt_file` does with both templates.

use crate::model::{ScanResult, Status};

use super::template::remove_include_original;

/// The header template (note the trailing space on its last line).
const HEADER: &str = "# Behavioral prompt includes\n\
\"{{name_pattern}}\" files in workdir auto-injected into system prompt\n\
create/edit/delete persist across conversations\n\
preference change/remember/note > MUST persist via text_editor before responding\n\
never just acknowledge verbally always persist to file\n\
use for persistent notes knowledge project context\n\
recursive search alphabetical by full path \n";

const INCLUDES: &str =
    "\n### includes\n!!! obey all rules preferences instructions below\n\n{{includes}}\n";
const BLOCK: &str = "{{path}}{{suffix}}\n```\n{{content}}\n```\n";

/// Renders the section for `result`, scanned with `name_pattern`.
pub fn render(result: &ScanResult, name_pattern: &str) -> String {
    let mut lines: Vec<String> = Vec::with_capacity(result.files.len() + 1);
    for entry in &result.files {
        if entry.status == Status::Skipped {
            lines.push(format!("{} !!! skipped to fit", entry.path));
            continue;
        }
        let suffix = if entry.status == Status::Cropped {
            " !!! cropped to fit"
        } else {
            ""
        };
        let block = BLOCK
            .replace("{{path}}", &entry.path)
            .replace("{{suffix}}", suffix);
        let block = block.replace("{{content}}", &entry.content);
        lines.push(remove_include_original(block));
    }
    if result.skipped_count > 0 {
        lines.push(format!(
            "!!! {} more files skipped to fit",
            result.skipped_count
        ));
    }
    let includes = lines.join("\n");
    let mut text = HEADER.to_string();
    if !includes.is_empty() {
        text.push_str(INCLUDES);
    }
    text.push('\n');
    let text = text
        .replace("{{name_pattern}}", name_pattern)
        .replace("{{includes}}", &includes);
    remove_include_original(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FileEntry;

    fn entry(path: &str, content: &str, status: Status) -> FileEntry {
        FileEntry {
            path: path.into(),
            content: content.into(),
            token_count: 1,
            status,
        }
    }

    #[test]
    fn empty_result_is_header_and_blank_line() {
        let r = ScanResult {
            root: ".".into(),
            files: vec![],
            skipped_count: 0,
        };
        let text = render(&r, "*.md");
        assert!(text.starts_with("# Behavioral prompt includes\n\"*.md\" files"));
        assert!(text.ends_with("full path \n\n"));
    }

    #[test]
    fn placeholder_order_quirks() {
        // Python: block.replace("{{path}}", p).replace("{{suffix}}", s).replace("{{content}}", c)
        let r = ScanResult {
            root: ".".into(),
            files: vec![
                entry("/r/{{suffix}}{{content}}.md", "C {{path}}", Status::Cropped),
                entry("/r/z.md", "", Status::Skipped),
            ],
            skipped_count: 2,
        };
        let text = render(&r, "{{includes}}");
        let block =
            "/r/ !!! cropped to fitC {{path}}.md !!! cropped to fit\n```\nC {{path}}\n```\n";
        let includes =
            format!("{block}\n/r/z.md !!! skipped to fit\n!!! 2 more files skipped to fit");
        // name_pattern is substituted first, so its "{{includes}}" is expanded as well.
        let expected = HEADER.replace("{{name_pattern}}", &includes)
            + "\n### includes\n!!! obey all rules preferences instructions below\n\n"
            + &includes
            + "\n\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn host_include_pass_runs_on_blocks_then_on_the_section() {
        let r = ScanResult {
            root: ".".into(),
            files: vec![
                // Collapses in two steps: the block pass, then the section pass.
                entry(
                    "/r/a.md",
                    "A{{ include {{ include original }}original }}Z {{include 'x.md'}}",
                    Status::Ok,
                ),
                // A `{{content}}` in the path brings the contents in before the pass.
                entry(
                    "/r/{{content}}.md",
                    "{{\tinclude\u{85}original\n}}",
                    Status::Cropped,
                ),
                // Skipped paths and the name pattern see the section pass only.
                entry("/r/{{include original}}.md", "", Status::Skipped),
            ],
            skipped_count: 0,
        };
        let text = render(&r, "*{{ include original }}.md");
        let includes = "/r/a.md\n```\nAZ {{include 'x.md'}}\n```\n\n\
                        /r/.md !!! cropped to fit\n```\n\n```\n\n\
                        /r/.md !!! skipped to fit";
        let expected = HEADER.replace("{{name_pattern}}", "*.md")
            + "\n### includes\n!!! obey all rules preferences instructions below\n\n"
            + includes
            + "\n\n";
        assert_eq!(text, expected);
    }

    #[test]
    fn other_directives_in_contents_stay_as_written() {
        let content = "{{if x}}a{{endif}} {{_agent}} {{path}} {{includes}} {{name_pattern}} \
                       {{ include \"/abs.md\" }} {{include 'a/b.md'}} {{include \"mixed'}}";
        let r = ScanResult {
            root: ".".into(),
            files: vec![entry("/r/a.md", content, Status::Ok)],
            skipped_count: 0,
        };
        assert!(render(&r, "*").contains(&format!("```\n{content}\n```")));
    }
}
