//! `promptinclude init`: it writes the agent's settings safely (no
//! predictable temporary, the file's mode and symlink kept) and changes
//! nothing but the hook entries (indentation, newlines, number spellings
//! and escapes stay as they were). The guarantees are listed in
//! `docs/guarantees.md`.

use crate::common;

use std::fs;
use std::os::unix::fs::{symlink, MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Prefix of the binary's temporaries (`cli::atomic`).
const TEMP_PREFIX: &str = ".promptinclude-tmp-";

/// The hook command every test installs.
const BIN: &str = "/opt/bin/promptinclude";

/// A home directory and a project, in a temporary directory others can
/// read (a test may run the binary as `nobody`).
struct Place {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

impl Place {
    fn new() -> Place {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("project");
        fs::create_dir_all(home.join(".claude")).unwrap();
        fs::create_dir_all(&project).unwrap();
        Place {
            _dir: dir,
            home,
            project,
        }
    }

    /// `~/.claude/settings.json`.
    fn settings(&self) -> PathBuf {
        self.home.join(".claude/settings.json")
    }

    /// `promptinclude init ARGS --bin BIN` with this home, in the project.
    fn command(&self, args: &[&str]) -> Command {
        self.command_of(&common::binary(), args)
    }

    /// [`Place::command`], running the binary at `binary`.
    fn command_of(&self, binary: &Path, args: &[&str]) -> Command {
        let mut cmd = common::command(binary);
        cmd.arg("init")
            .args(args)
            .args(["--bin", BIN])
            .env("HOME", &self.home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .current_dir(&self.project)
            .stdin(Stdio::null());
        cmd
    }

    fn init(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `init claude-code --user` on a settings file holding `text`; the new text.
    fn installed(&self, text: &str) -> String {
        fs::write(self.settings(), text).unwrap();
        let o = self.init(&["claude-code", "--user"]);
        assert_success(&o);
        fs::read_to_string(self.settings()).unwrap()
    }
}

fn assert_success(o: &Output) {
    assert!(
        o.status.success(),
        "{:?}: {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Names in `dir` with the temporaries' prefix.
fn temporaries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(TEMP_PREFIX))
        .collect();
    names.sort();
    names
}

/// The hook command of each of Claude Code's events in `text`.
fn hook_commands(text: &str) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_str(text).unwrap();
    ["SessionStart", "UserPromptSubmit"]
        .iter()
        .flat_map(|event| doc["hooks"][event].as_array().unwrap().clone())
        .map(|group| group["hooks"][0]["command"].as_str().unwrap().to_string())
        .collect()
}

/// The last process id the kernel handed out, if it says.
fn last_pid() -> Option<u32> {
    fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[test]
fn planted_symlinks_at_the_old_temporary_names_are_never_followed() {
    let place = Place::new();
    let claude = place.home.join(".claude");
    let victim = place.home.join("victim.txt");
    fs::write(&victim, "precious\n").unwrap();
    fs::write(place.settings(), "{\n  \"model\": \"opus\"\n}\n").unwrap();
    // Random-looking names too, in case they were guessed.
    for name in ["AbC123", "xYz789", "settings.json", "000000"] {
        symlink(&victim, claude.join(format!("{TEMP_PREFIX}{name}"))).unwrap();
    }
    let planted_before = temporaries(&claude);
    // The old temporary was `.promptinclude-tmp-<pid>-settings.json`: links at
    // the next process ids (other processes take some of them, so retry
    // until the child's id is one that was planted).
    let mut covered = false;
    for _ in 0..5 {
        let next = last_pid().unwrap_or_else(std::process::id) + 1;
        let planted: Vec<u32> = (next..next + 400).collect();
        for pid in &planted {
            let link = claude.join(format!("{TEMP_PREFIX}{pid}-settings.json"));
            if fs::symlink_metadata(&link).is_err() {
                symlink(&victim, link).unwrap();
            }
        }
        let child = place
            .command(&["claude-code", "--user"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        let o = child.wait_with_output().unwrap();
        assert_success(&o);
        if planted.contains(&pid) {
            covered = true;
            break;
        }
        fs::write(place.settings(), "{\n  \"model\": \"opus\"\n}\n").unwrap();
    }
    assert!(covered, "the child's pid was never one with a planted link");
    assert_eq!(fs::read_to_string(&victim).unwrap(), "precious\n");
    let meta = fs::symlink_metadata(place.settings()).unwrap();
    assert!(meta.is_file(), "settings.json is a regular file");
    let text = fs::read_to_string(place.settings()).unwrap();
    assert_eq!(hook_commands(&text).len(), 2, "{text}");
    // Nothing of ours is left; every planted link is still there, untouched.
    let left = temporaries(&claude);
    assert!(planted_before.iter().all(|p| left.contains(p)));
    for name in &left {
        let link = claude.join(name);
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read_link(&link).unwrap(), victim);
    }
}

#[test]
fn a_0600_settings_file_stays_0600_and_a_new_one_gets_the_default_mode() {
    let place = Place::new();
    fs::write(place.settings(), "{\"env\": {\"API_KEY\": \"secret\"}}\n").unwrap();
    fs::set_permissions(place.settings(), fs::Permissions::from_mode(0o600)).unwrap();
    assert_success(&place.init(&["claude-code", "--user"]));
    let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&place.settings()), 0o600);
    assert_eq!(
        hook_commands(&fs::read_to_string(place.settings()).unwrap()).len(),
        2
    );

    // A new file: the mode `File::create` gives under the same umask.
    let reference = place.project.join("reference");
    fs::File::create(&reference).unwrap();
    assert_success(&place.init(&["claude-code", "--project"]));
    let new = place.project.join(".claude/settings.json");
    assert_eq!(mode(&new), mode(&reference));
}

#[test]
fn a_symlinked_settings_file_stays_a_link_and_its_target_gets_the_hook() {
    let place = Place::new();
    let dotfiles = place.home.join("dotfiles/claude");
    fs::create_dir_all(&dotfiles).unwrap();
    let real = dotfiles.join("settings.json");
    fs::write(&real, "{\n\t\"model\": \"opus\"\n}\n").unwrap();
    fs::set_permissions(&real, fs::Permissions::from_mode(0o600)).unwrap();
    // settings.json -> ../linked.json -> dotfiles/claude/settings.json
    symlink(
        "dotfiles/claude/settings.json",
        place.home.join("linked.json"),
    )
    .unwrap();
    symlink("../linked.json", place.settings()).unwrap();

    let o = place.init(&["claude-code", "--user"]);
    assert_success(&o);
    assert!(stdout(&o).contains("a link to"), "{}", stdout(&o));
    let link = fs::symlink_metadata(place.settings()).unwrap();
    assert!(link.file_type().is_symlink());
    assert_eq!(
        fs::read_link(place.settings()).unwrap(),
        Path::new("../linked.json")
    );
    let text = fs::read_to_string(&real).unwrap();
    assert!(
        text.starts_with("{\n\t\"model\": \"opus\",\n\t\"hooks\": {\n"),
        "{text}"
    );
    assert_eq!(hook_commands(&text).len(), 2);
    assert_eq!(
        fs::metadata(&real).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(temporaries(&dotfiles), Vec::<String>::new());
    assert_eq!(
        temporaries(&place.home.join(".claude")),
        Vec::<String>::new()
    );
    assert!(stdout(&place.init(&["claude-code", "--user"])).contains("already installed"));

    // A dangling link: its target is created, the link kept.
    fs::remove_file(&real).unwrap();
    assert_success(&place.init(&["claude-code", "--user"]));
    assert!(fs::symlink_metadata(place.settings())
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(hook_commands(&fs::read_to_string(&real).unwrap()).len(), 2);
}

#[test]
fn crlf_tabs_and_four_spaces_stay_and_new_entries_follow_them() {
    let place = Place::new();
    // What `init` always wrote for this file: serde_json's pretty layout
    // (two spaces, `\n`); the same, in the file's unit and newline, is expected.
    let handler = format!(
        "{{\n  \"type\": \"command\",\n  \"command\": \"{BIN} hook claude-code\",\n  \"timeout\": 30\n}}"
    )
    .replace('\n', "\n          ");
    let pretty = format!(
        r#"{{
  "model": "opus",
  "hooks": {{
    "SessionStart": [
      {{
        "matcher": "startup|resume|clear|compact",
        "hooks": [
          {handler}
        ]
      }}
    ],
    "UserPromptSubmit": [
      {{
        "hooks": [
          {handler}
        ]
      }}
    ]
  }}
}}"#
    );
    for (unit, nl) in [("    ", "\n"), ("\t", "\n"), ("  ", "\r\n"), ("\t", "\r\n")] {
        let restyle = |text: &str| {
            let lines: Vec<String> = text
                .lines()
                .map(|line| {
                    let body = line.trim_start();
                    unit.repeat((line.len() - body.len()) / 2) + body
                })
                .collect();
            lines.join(nl) + nl
        };
        let old = restyle("{\n  \"model\": \"opus\"\n}");
        let new = place.installed(&old);
        assert_eq!(new, restyle(&pretty), "{unit:?} {nl:?}");
    }
}

#[test]
fn numbers_and_escapes_keep_their_spelling() {
    let place = Place::new();
    let old = "{\n  \"big\": 12345678901234567890123,\n  \"floats\": [1.0, 1e3, -0.0, 2E-7],\n  \"s\": \"caf\\u00e9 \\/ \\ud83d\\ude00\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  }\n}\n";
    let new = place.installed(old);
    let kept = &old[..old.find("]}]\n").unwrap() + 3];
    assert!(new.starts_with(kept), "{new}");
    assert!(new.contains("12345678901234567890123") && new.contains("1.0, 1e3, -0.0, 2E-7"));
    assert!(new.contains("\"caf\\u00e9 \\/ \\ud83d\\ude00\""), "{new}");
    // Inline where the container is inline, indented where it is not.
    assert!(new.contains("\"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}],\n    \"SessionStart\": [\n      {\n"), "{new}");
}

#[test]
fn a_file_init_leaves_alone_is_not_rewritten_and_dry_run_shows_only_the_change() {
    let place = Place::new();
    let old = "{\n    \"model\": \"opus\",\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]}\n}\n";
    fs::write(place.settings(), old).unwrap();
    let dry = place.init(&["claude-code", "--user", "--dry-run"]);
    assert_success(&dry);
    assert_eq!(
        fs::read_to_string(place.settings()).unwrap(),
        old,
        "dry run wrote"
    );
    let diff = stdout(&dry);
    let removed: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with('-') && !l.starts_with("---"))
        .collect();
    assert_eq!(
        removed,
        ["-    \"permissions\": {\"allow\": [\"Bash(ls)\"]}"],
        "{diff}"
    );
    assert!(
        diff.contains("+    \"permissions\": {\"allow\": [\"Bash(ls)\"]},\n+    \"hooks\": {\n"),
        "{diff}"
    );

    assert_success(&place.init(&["claude-code", "--user"]));
    let once = fs::read(place.settings()).unwrap();
    let inode = fs::metadata(place.settings()).unwrap().ino();
    for args in [
        &["claude-code", "--user"][..],
        &["claude-code", "--user", "--dry-run"],
    ] {
        let again = place.init(args);
        assert_success(&again);
        assert!(
            stdout(&again).contains("already installed"),
            "{}",
            stdout(&again)
        );
    }
    assert_eq!(fs::read(place.settings()).unwrap(), once);
    assert_eq!(
        fs::metadata(place.settings()).unwrap().ino(),
        inode,
        "rewritten"
    );
}

#[test]
fn codex_hooks_json_keeps_its_layout_too() {
    let place = Place::new();
    let dir = place.project.join(".codex");
    fs::create_dir_all(&dir).unwrap();
    let old = "{\r\n\t\"hooks\": {\r\n\t\t\"SessionStart\": [\r\n\t\t\t{\"hooks\": [{\"type\": \"command\", \"command\": \"/old/promptinclude hook codex --no-env\"}]}\r\n\t\t]\r\n\t}\r\n}\r\n";
    fs::write(dir.join("hooks.json"), old).unwrap();
    assert_success(&place.init(&["codex", "--project"]));
    let new = fs::read_to_string(dir.join("hooks.json")).unwrap();
    // The moved binary is updated in place (flags kept); the missing event is added.
    assert!(
        new.starts_with(&old[..old.find("/old").unwrap()].to_string()),
        "{new}"
    );
    assert!(new.contains(&format!("\"command\": \"{BIN} hook codex --no-env\"}}]}}\r\n\t\t],\r\n\t\t\"UserPromptSubmit\": [\r\n")), "{new:?}");
    assert!(!new.replace("\r\n", "").contains('\n'));
}

#[test]
fn a_file_that_is_not_json_is_refused_and_named() {
    let place = Place::new();
    for text in [
        "{\"a\": 1,}\n",
        "{\"a\": 1} // comment\n",
        "[1, 2]\n",
        "\u{feff}{}",
    ] {
        fs::write(place.settings(), text).unwrap();
        let o = place.init(&["claude-code", "--user"]);
        assert_eq!(o.status.code(), Some(2), "{text:?}");
        let e = stderr(&o);
        assert!(e.contains(&place.settings().display().to_string()), "{e}");
        assert_eq!(fs::read_to_string(place.settings()).unwrap(), text);
    }
}

#[test]
fn an_unwritable_directory_is_an_error_that_names_the_file() {
    let place = Place::new();
    let old = "{\"model\": \"opus\"}\n";
    fs::write(place.settings(), old).unwrap();
    let claude = place.home.join(".claude");
    fs::set_permissions(&claude, fs::Permissions::from_mode(0o555)).unwrap();
    let args = ["claude-code", "--user"];
    // SAFETY: a plain query of our own credentials.
    let mut cmd = if unsafe { libc::geteuid() } == 0 {
        // Root writes anywhere: run as nobody, for whom the directory is
        // read-only. Nobody may not reach the build's own directory (a
        // clone in a 0700 temporary directory): a copy in the place, which
        // others can read, runs instead.
        let copy = place.home.parent().unwrap().join("promptinclude");
        fs::copy(common::binary(), &copy).unwrap();
        let mut cmd = place.command_of(&copy, &args);
        cmd.uid(65534).gid(65534);
        cmd
    } else {
        place.command(&args)
    };
    let o = cmd.output().unwrap();
    fs::set_permissions(&claude, fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains(&format!("cannot write {}", place.settings().display())),
        "{e}"
    );
    assert_eq!(fs::read_to_string(place.settings()).unwrap(), old);
    assert_eq!(temporaries(&claude), Vec::<String>::new());
}

#[test]
fn init_project_never_writes_through_a_link_the_repository_planted() {
    let place = Place::new();
    fs::write(place.settings(), "{\n  \"model\": \"opus\"\n}\n").unwrap();
    let before = fs::read(place.settings()).unwrap();
    // A committed `.claude -> ~/.claude`, and a `.codex/hooks.json -> ~/.codex/hooks.json`.
    symlink(place.home.join(".claude"), place.project.join(".claude")).unwrap();
    fs::create_dir_all(place.home.join(".codex")).unwrap();
    fs::write(place.home.join(".codex/hooks.json"), "{}\n").unwrap();
    fs::create_dir_all(place.project.join(".codex")).unwrap();
    symlink(
        place.home.join(".codex/hooks.json"),
        place.project.join(".codex/hooks.json"),
    )
    .unwrap();
    for agent in ["claude-code", "codex"] {
        let o = place.init(&[agent, "--project"]);
        assert_eq!(o.status.code(), Some(2), "{agent}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("outside this project"),
            "{}",
            stderr(&o)
        );
    }
    assert_eq!(fs::read(place.settings()).unwrap(), before);
    assert_eq!(
        fs::read(place.home.join(".codex/hooks.json")).unwrap(),
        b"{}\n"
    );
    // A link that stays inside the project is fine.
    fs::remove_file(place.project.join(".claude")).unwrap();
    fs::create_dir_all(place.project.join("config")).unwrap();
    fs::write(place.project.join("config/claude.json"), "{}\n").unwrap();
    fs::create_dir_all(place.project.join(".claude")).unwrap();
    symlink(
        "../config/claude.json",
        place.project.join(".claude/settings.json"),
    )
    .unwrap();
    assert_success(&place.init(&["claude-code", "--project"]));
    let text = fs::read_to_string(place.project.join("config/claude.json")).unwrap();
    assert_eq!(hook_commands(&text).len(), 2);
}

#[test]
fn a_settings_file_that_is_a_fifo_is_refused_not_opened() {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileTypeExt;
    let place = Place::new();
    let fifo = |path: &Path| {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    };
    let claude = place.project.join(".claude/settings.json");
    let codex = place.project.join(".codex/hooks.json");
    let user_codex = place.home.join(".codex/hooks.json");
    fifo(&claude);
    fifo(&codex);
    fifo(&user_codex);
    // A link to a fifo inside the project is a fifo too.
    fifo(&place.project.join("config/fifo.json"));
    let cases = [
        (&["claude-code", "--project"][..], claude.clone()),
        (&["codex", "--project"][..], codex.clone()),
        (&["codex", "--user"][..], user_codex.clone()),
        (&["codex", "--project", "--dry-run"][..], codex.clone()),
    ];
    let run = |args: &[&str], file: &Path| {
        let o = crate::child::run(&mut place.command(args), std::time::Duration::from_secs(30));
        assert!(
            !o.timed_out,
            "{args:?}: init blocked on the fifo {}",
            file.display()
        );
        assert_eq!(o.code, Some(2), "{args:?}: {}", o.stdout_text());
        let e = o.stderr_text();
        assert!(
            e.contains(&file.display().to_string()) && e.contains("not a regular file"),
            "{args:?}: {e}"
        );
        // Still a fifo (or a link to one): never replaced.
        assert!(
            fs::metadata(file).unwrap().file_type().is_fifo(),
            "{args:?}"
        );
    };
    for (args, file) in &cases {
        run(args, file);
    }
    fs::remove_file(&claude).unwrap();
    symlink("../config/fifo.json", &claude).unwrap();
    run(&["claude-code", "--project"], &claude);
}
