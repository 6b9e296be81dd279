//! Terminal colour: whether to use it, and ANSI styling that is a no-op without it.

use std::io::IsTerminal;

use promptinclude::model::FileStatus;

use super::args::ColorWhen;

/// Whether to colour: never with a non-empty NO_COLOR, else as asked.
pub fn use_color(when: ColorWhen) -> bool {
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => std::io::stdout().is_terminal(),
    }
}

/// ANSI styling that is a no-op when colour is off (`Paint(false)`).
#[derive(Clone, Copy)]
pub struct Paint(pub bool);

impl Paint {
    /// `text` in the SGR style `code` (as is when colour is off).
    pub fn code(self, code: &str, text: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    /// `text` in the colour of `status`.
    pub fn status(self, status: FileStatus, text: &str) -> String {
        let code = match status {
            FileStatus::Ok => "32",
            FileStatus::Cropped => "33",
            FileStatus::Blank | FileStatus::Unreadable | FileStatus::Withheld => "35",
            FileStatus::Skipped | FileStatus::NotReached | FileStatus::OverBudget => "31",
        };
        self.code(code, text)
    }
}
