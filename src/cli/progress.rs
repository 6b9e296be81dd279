//! A progress bar on stderr for long batches: shown only when stderr is a
//! terminal, only once a run has taken a moment (quick runs stay silent),
//! and cleared when the run ends, so it never mixes with the output.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before the bar appears.
const DELAY: Duration = Duration::from_millis(300);

/// Progress over a batch of roots.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    shown: bool,
}

impl Progress {
    /// A bar for `total` roots (none unless stderr is a terminal and there is more than one).
    pub fn new(total: usize) -> Progress {
        let bar = (total > 1 && std::io::stderr().is_terminal()).then(|| {
            let style = ProgressStyle::with_template(
                "promptinclude: [{bar:30}] {pos}/{len} roots, {elapsed} (eta {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden())
                .with_style(style)
        });
        Progress {
            bar,
            started: Instant::now(),
            shown: false,
        }
    }

    /// `done` roots are finished.
    pub fn tick(&mut self, done: usize) {
        let Some(bar) = &self.bar else { return };
        bar.set_position(done as u64);
        if !self.shown && self.started.elapsed() >= DELAY {
            self.shown = true;
            bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
