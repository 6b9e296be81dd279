//! ANSI styling of the readable reports (audit, diff), a no-op without colour.

use crate::model::FileStatus;

/// ANSI styling that is a no-op when colour is off (`Paint(false)`).
#[derive(Clone, Copy, Debug)]
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
