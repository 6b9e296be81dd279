//! Output of a scan: the system-prompt section ([`text`]) and the JSON Lines
//! record ([`json`]).

pub mod json;
pub mod text;

pub use json::{json_string, scan_line, to_json_line, RootFacts};
pub use text::render;
