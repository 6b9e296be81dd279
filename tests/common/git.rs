//! The git CLI as a test oracle: a hermetic `git` command (no system or
//! user configuration, fixed identity, symlinks on, no autocrlf).

use std::path::Path;
use std::process::Command;

use super::command;

/// `git` run in `dir`, isolated from the machine's configuration.
pub fn git(dir: &Path) -> Command {
    let mut cmd = command("git");
    cmd.current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.com",
            "-c",
            "core.symlinks=true",
            "-c",
            "core.autocrlf=false",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "protocol.file.allow=always",
            "-c",
            "gc.auto=0",
        ]);
    cmd
}

/// Runs `cmd`, asserting success; its standard output.
pub fn ok(cmd: &mut Command) -> Vec<u8> {
    let out = cmd.output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}
