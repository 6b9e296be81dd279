//! Exit codes and how they combine.

use std::process::ExitCode;

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    /// Everything worked (check-ignore: some path was ignored).
    Success,
    /// The run completed but something needs attention: a root was not a
    /// directory (it got the reference's empty record), or check-ignore
    /// found no ignored path.
    Problems,
    /// Bad usage, configuration or patterns: nothing (more) was done.
    Error,
}

impl ExitStatus {
    /// The more severe of two statuses.
    pub fn merge(self, other: ExitStatus) -> ExitStatus {
        self.max(other)
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> ExitCode {
        match status {
            ExitStatus::Success => ExitCode::SUCCESS,
            ExitStatus::Problems => ExitCode::from(1),
            ExitStatus::Error => ExitCode::from(2),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ExitStatus::*;

    #[test]
    fn merge_keeps_the_worst() {
        assert_eq!(Success.merge(Problems), Problems);
        assert_eq!(Error.merge(Problems), Error);
        assert_eq!(Success.merge(Success), Success);
    }
}
