//! Output of a scan: the system-prompt section ([`text`], with the host's
//! template pass in [`template`]), the JSON Lines records ([`json`]), and
//! `check-ignore`'s answers ([`check`]), and the colours of the readable
//! reports ([`paint`]).

pub mod check;
pub mod json;
pub mod paint;
pub mod template;
pub mod text;

pub use json::{error_line, json_string, scan_line, ErrorRecord, RootFacts};
pub use text::render;
