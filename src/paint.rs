//! Whether to colour the terminal output (the styling is the library's
//! `promptinclude::render::paint::Paint`).

use std::io::IsTerminal;

pub use promptinclude::render::paint::Paint;

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
