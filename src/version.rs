//! The long `--version`: this version and the references it reproduces.

use std::sync::OnceLock;

use promptinclude::agents::Agent;

/// `--version`'s long form: this version, and the version of each program
/// whose behaviour it reproduces byte for byte (`-V` prints the first line).
pub fn long_version() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut text = format!("{}\nreproduces:\n", env!("CARGO_PKG_VERSION"));
        for agent in Agent::ALL {
            let mut what = format!("{} {}", agent.product(), agent.version());
            if let Some(digest) = agent.reference_sha256() {
                what.push_str(&format!(" (source sha256 {digest})"));
            }
            text.push_str(&format!("  {}: {what}\n", agent.name()));
        }
        text.push_str("  tokens: tiktoken cl100k_base");
        text
    })
}
