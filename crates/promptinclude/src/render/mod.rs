//! Output of a scan: the system-prompt section ([`text`], with the host's
//! template pass in [`template`]) and the JSON Lines record ([`json`]).

pub mod json;
pub mod template;
pub mod text;

pub use json::{json_string, scan_line, to_json_line, RootFacts};
pub use text::render;
