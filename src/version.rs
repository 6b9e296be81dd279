//! The long `--version`: this version and the references it reproduces.

use std::sync::OnceLock;

use promptinclude::agents::{agent_zero, Agent};

/// `--version`'s long form: this version, and the version of each program
/// whose behaviour it reproduces byte for byte (`-V` prints the first line).
pub fn long_version() -> &'static str {
    static TEXT: OnceLock<String> = OnceLock::new();
    TEXT.get_or_init(|| {
        let mut text = format!("{}\nreproduces:\n", env!("CARGO_PKG_VERSION"));
        for agent in Agent::ALL {
            let what = match agent {
                Agent::AgentZero => format!(
                    "Agent Zero's Prompt Include plugin {} (source sha256 {})",
                    agent.version(),
                    agent_zero::REFERENCE_SHA256
                ),
                Agent::ClaudeCode => format!("Claude Code {}", agent.version()),
                Agent::Codex => format!("Codex CLI {}", agent.version()),
                Agent::Gemini => format!("Gemini CLI {}", agent.version()),
                Agent::Pi => format!("pi coding agent {}", agent.version()),
            };
            text.push_str(&format!("  {}: {what}\n", agent.name()));
        }
        text.push_str("  tokens: tiktoken cl100k_base");
        text
    })
}
