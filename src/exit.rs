//! Exit codes and how they combine.

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

    /// The process exit code: 0, 1 or 2.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Problems => 1,
            ExitStatus::Error => 2,
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
