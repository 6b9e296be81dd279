//! A progress bar on stderr for long runs: shown only when stderr is a
//! terminal, only once a run has taken a moment (quick runs stay silent),
//! and cleared when the run ends, so it never mixes with the output.
//!
//! The bar appears by the clock, not when a root finishes, and redraws
//! itself, so a single runaway root (a million rule files, a 200 MB file)
//! shows a live spinner and elapsed time instead of a frozen terminal.

use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a run goes before the bar appears.
const DELAY: Duration = Duration::from_millis(300);

/// How often the bar redraws itself once shown.
const REDRAW: Duration = Duration::from_millis(120);

/// Progress over a batch of roots.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Set when the run ends; the reveal timer checks it under the same lock.
    finished: Arc<Mutex<bool>>,
}

impl Progress {
    /// A bar for `total` roots (a spinner for one root), only if stderr is a terminal.
    pub fn new(total: usize) -> Progress {
        let finished = Arc::new(Mutex::new(false));
        let bar = (total > 0 && std::io::stderr().is_terminal()).then(|| {
            let (template, bar) = if total == 1 {
                (
                    "promptinclude: {spinner} scanning, {elapsed}",
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden()),
                )
            } else {
                (
                    "promptinclude: [{bar:30}] {pos}/{len} roots, {elapsed} (eta {eta})",
                    ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::hidden()),
                )
            };
            let style = ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            bar.with_style(style)
        });
        if let Some(bar) = &bar {
            let (bar, finished) = (bar.clone(), Arc::clone(&finished));
            // Reveal the bar after DELAY unless the run has ended by then.
            let _ = std::thread::Builder::new()
                .name("progress".to_string())
                .spawn(move || {
                    crate::interrupt::block_in_this_thread();
                    std::thread::sleep(DELAY);
                    let done = finished.lock().unwrap_or_else(|e| e.into_inner());
                    if !*done {
                        bar.set_draw_target(ProgressDrawTarget::stderr());
                        bar.enable_steady_tick(REDRAW);
                    }
                });
        }
        Progress { bar, finished }
    }

    /// `done` roots are finished.
    pub fn tick(&mut self, done: usize) {
        if let Some(bar) = &self.bar {
            bar.set_position(done as u64);
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        let mut done = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        *done = true;
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    /// A run that ends by an error also clears its bar.
    fn drop(&mut self) {
        self.finish();
    }
}
