//! `agents::contexts_under`: every directory's context from one look at the
//! tree equals the context computed for that directory alone, for every
//! agent, and the file system is asked each question about a path once.

use std::collections::HashSet;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use promptinclude::agents::disk::{absent_below, Disk, Live, Remembered};
use promptinclude::agents::{self, Agent, Start};

/// The system, with every question it is asked written down.
#[derive(Default)]
struct Counted(Mutex<Vec<(&'static str, PathBuf)>>);

impl Counted {
    fn ask(&self, what: &'static str, path: &Path) {
        self.0.lock().unwrap().push((what, path.to_path_buf()));
    }
}

impl Disk for Counted {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.ask("metadata", path);
        Live.metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.ask("symlink_metadata", path);
        Live.symlink_metadata(path)
    }
    fn resolution_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.ask("resolution_metadata", path);
        Live.resolution_metadata(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.ask("canonicalize", path);
        Live.canonicalize(path)
    }
    fn read(&self, path: &Path) -> io::Result<std::sync::Arc<[u8]>> {
        self.ask("read", path);
        Live.read(path)
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        self.ask("read_prefix", &path.join(limit.to_string()));
        Live.read_prefix(path, limit)
    }
    fn read_dir(&self, path: &Path) -> io::Result<promptinclude::agents::disk::Listing> {
        self.ask("read_dir", path);
        Live.read_dir(path)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.ask("read_link", path);
        Live.read_link(path)
    }
    fn readable(&self, path: &Path) -> bool {
        self.ask("readable", path);
        Live.readable(path)
    }
}

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A monorepo with every agent's files at several depths.
fn monorepo(base: &Path) -> (PathBuf, PathBuf) {
    let repo = base.join("repo");
    let home = base.join("home");
    fs::create_dir_all(repo.join(".git")).unwrap();
    write(&repo.join(".git/HEAD"), "ref: refs/heads/main\n");
    write(&home.join(".codex/AGENTS.md"), "GLOBAL CODEX\n");
    write(&home.join(".claude/CLAUDE.md"), "USER CLAUDE @~/extra.md\n");
    write(&home.join("extra.md"), "EXTRA\n");
    write(&home.join(".gemini/GEMINI.md"), "GLOBAL GEMINI\n");
    write(&repo.join("AGENTS.md"), "ROOT AGENTS\n");
    write(&repo.join("GEMINI.md"), "ROOT GEMINI @./docs/g.md\n");
    write(&repo.join("docs/g.md"), "G\n");
    write(&repo.join("packages/web/AGENTS.md"), "WEB AGENTS\n");
    write(
        &repo.join("packages/web/CLAUDE.md"),
        "WEB CLAUDE @style.md\n",
    );
    write(&repo.join("packages/web/style.md"), "STYLE\n");
    write(&repo.join("packages/web/.claude/rules/a.md"), "RULE A\n");
    write(
        &repo.join("packages/web/.claude/rules/b.md"),
        "---\npaths: [\"*.ts\"]\n---\nRULE B\n",
    );
    write(
        &repo.join("packages/web/src/AGENTS.override.md"),
        "OVERRIDE\n",
    );
    write(&repo.join("packages/api/CLAUDE.md"), "  \n");
    write(&repo.join("packages/api/GEMINI.md"), "API GEMINI\n");
    write(
        &repo.join("packages/api/v1/deep/AGENTS.md"),
        &"deep ".repeat(9000),
    );
    write(&repo.join("services/pay/CLAUDE.local.md"), "LOCAL\n");
    write(&repo.join("services/pay/AGENTS.md"), "PAY AGENTS\n");
    write(&repo.join("services/pay/rule.promptinclude.md"), "ZERO\n");
    symlink(repo.join("AGENTS.md"), repo.join("services/LINKED.md")).unwrap();
    symlink(repo.join("packages"), repo.join("services/packages-link")).unwrap();
    (repo, home)
}

#[test]
fn every_directorys_context_from_one_look_equals_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (repo, home) = monorepo(&base);
    let env = |name: &str| (name == "GEMINI_CLI_TRUST_WORKSPACE").then(|| OsString::from("true"));
    for agent in Agent::ALL {
        let counted = Counted::default();
        let together =
            agents::contexts_under(agent, &repo, &home, &env, &Remembered::over(&counted)).unwrap();
        let dirs: Vec<&Path> = together.iter().map(|c| c.cwd.as_path()).collect();
        if agent == Agent::AgentZero {
            assert_eq!(dirs, [repo.as_path()]);
        } else {
            // Root first, depth first, names sorted; links and .git not entered.
            let expected: Vec<PathBuf> = [
                "",
                "docs",
                "packages",
                "packages/api",
                "packages/api/v1",
                "packages/api/v1/deep",
                "packages/web",
                "packages/web/.claude",
                "packages/web/.claude/rules",
                "packages/web/src",
                "services",
                "services/pay",
            ]
            .iter()
            .map(|d| {
                if d.is_empty() {
                    repo.clone()
                } else {
                    repo.join(d)
                }
            })
            .collect();
            assert_eq!(
                dirs,
                expected.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
                "{agent:?}"
            );
        }
        for context in &together {
            let alone = agents::context(
                agent,
                &Start {
                    cwd: &context.cwd,
                    home: &home,
                    env: &env,
                },
            )
            .unwrap();
            assert_eq!(context, &alone, "{agent:?} in {}", context.cwd.display());
        }
        let asked = counted.0.into_inner().unwrap();
        let mut once = HashSet::new();
        for question in &asked {
            assert!(
                once.insert(question),
                "{agent:?}: asked twice: {question:?}"
            );
        }
        if agent != Agent::AgentZero {
            assert!(
                asked.len() > together.len(),
                "{agent:?}: the walk asked something"
            );
        }
    }
}

#[test]
fn the_chains_differ_where_the_files_do() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (repo, home) = monorepo(&base);
    let env = |_: &str| None;
    let codex =
        agents::contexts_under(Agent::Codex, &repo, &home, &env, &Remembered::over(&Live)).unwrap();
    let raw_in = |d: &str| {
        codex
            .iter()
            .find(|c| c.cwd == repo.join(d))
            .and_then(|c| c.raw())
            .unwrap_or_default()
    };
    assert!(raw_in("packages/web/src").contains("ROOT AGENTS\n\n\nWEB AGENTS\n\n\nOVERRIDE"));
    assert!(!raw_in("packages/api").contains("WEB AGENTS"));
    // The deep file is cut to what the chain leaves of the 32 KiB budget.
    assert!(raw_in("packages/api/v1/deep").len() < 9000 * 5);
}

/// The fields a chain is made of.
fn chain_key(
    c: &agents::AgentContext,
) -> (
    Option<&Path>,
    &[agents::ContextFile],
    Option<agents::ByteLimit>,
    &[String],
) {
    (c.root.as_deref(), &c.files, c.limit, &c.notes)
}

#[test]
fn a_directory_given_as_its_ancestors_loads_what_the_ancestor_does() {
    // contexts_shared skips a directory that adds nothing for the agent;
    // each such one must give what the agent, started there, gives in the
    // ancestor it is given as (the fixture and random monorepos, fresh seed).
    let seed = crate::common::fresh_seed("PROMPTINCLUDE_AGENT_CHAINS_SEED");
    let mut rng = crate::common::Rng::new(seed);
    let env = |name: &str| (name == "GEMINI_CLI_TRUST_WORKSPACE").then(|| OsString::from("true"));
    let mut shared = [0usize; Agent::ALL.len()];
    for case in 0..12 {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let (repo, home) = if case == 0 {
            monorepo(&base)
        } else {
            let (repo, home) = (base.join("repo"), base.join("home"));
            fs::create_dir_all(repo.join(".git")).unwrap();
            fs::create_dir_all(&home).unwrap();
            crate::agents_audit::random_monorepo_at(&mut rng, &repo, &home);
            if case % 2 == 1 {
                // Claude Code follows the root's imports from the root, one
                // of them from `a-in` too, and neither from `b-out`: two
                // directories that hold none of its names, unlike each
                // other.
                fs::write(
                    repo.join("CLAUDE.md"),
                    "ROOT CLAUDE @AGENTS.md @a-in/notes.md\n",
                )
                .unwrap();
                write(&repo.join("a-in/notes.md"), "notes\n");
                fs::create_dir_all(repo.join("b-out")).unwrap();
            }
            // Directories with nothing in them, below the rule files, and
            // settings that make the start directory matter.
            for deep in [
                "apps/web/src/a/b",
                "services/payments/core/x",
                "docs/y/z",
                "apps/api/v1",
            ] {
                fs::create_dir_all(repo.join(deep)).unwrap();
            }
            if rng.chance(30) {
                let config = match rng.below(3) {
                    0 => "project_doc_fallback_filenames = [\"notes.md\"]\n".to_string(),
                    1 => format!(
                        "[projects.\"{}\"]\ntrust_level = \"untrusted\"\n",
                        repo.join("apps").display()
                    ),
                    _ => "project_root_markers = [\".git\", \"package.json\"]\n".to_string(),
                };
                fs::create_dir_all(home.join(".codex")).unwrap();
                fs::write(home.join(".codex/config.toml"), config).unwrap();
                fs::write(repo.join("apps/web/package.json"), "{}").unwrap();
            }
            if rng.chance(40) {
                // A linked rule: Claude Code follows it only where the
                // working directory holds its target.
                fs::create_dir_all(repo.join("apps/.claude/rules")).unwrap();
                fs::write(repo.join("apps/web/shared-rule.md"), "shared rule\n").unwrap();
                symlink(
                    repo.join("apps/web/shared-rule.md"),
                    repo.join("apps/.claude/rules/shared.md"),
                )
                .unwrap();
            }
            if rng.chance(30) {
                fs::create_dir_all(home.join(".gemini")).unwrap();
                fs::write(
                    home.join(".gemini/settings.json"),
                    r#"{"context": {"fileName": ["GEMINI.md", "AGENTS.md"]}}"#,
                )
                .unwrap();
            }
            if rng.chance(15) {
                // Private project memory with no `~/.gemini/tmp`: a
                // registered project named by an absolute path, whose
                // memory is found all the same.
                let elsewhere = base.join("elsewhere");
                fs::create_dir_all(elsewhere.join("memory")).unwrap();
                fs::write(elsewhere.join("memory/MEMORY.md"), "elsewhere memory\n").unwrap();
                let registry = serde_json::json!({
                    "projects": {repo.join("apps/web").to_string_lossy(): elsewhere.to_string_lossy()}
                });
                fs::create_dir_all(home.join(".gemini")).unwrap();
                fs::write(home.join(".gemini/projects.json"), registry.to_string()).unwrap();
            } else if rng.chance(30) {
                // Private project memory, found by a directory's name or
                // by a registered project.
                let memory = home.join(".gemini/tmp/payments/memory");
                fs::create_dir_all(&memory).unwrap();
                fs::write(memory.join("MEMORY.md"), "payments memory\n").unwrap();
                if rng.chance(50) {
                    let registry = serde_json::json!({
                        "projects": {repo.join("apps/web").to_string_lossy(): "payments"}
                    });
                    fs::write(home.join(".gemini/projects.json"), registry.to_string()).unwrap();
                }
            }
            if rng.chance(30) {
                fs::create_dir_all(repo.join("services/.gemini")).unwrap();
                fs::write(
                    repo.join("services/.gemini/settings.json"),
                    r#"{"context": {"fileName": "notes.md"}}"#,
                )
                .unwrap();
            }
            (repo, home)
        };
        for (a, agent) in Agent::ALL.into_iter().enumerate() {
            let every = agents::contexts_under(agent, &repo, &home, &env, &Remembered::over(&Live))
                .unwrap();
            let disk = Remembered::over(&Live);
            let tree = agents::Tree::of(&repo, &disk).unwrap();
            let some = agents::contexts_shared(agent, &tree, &home, &env, &disk, None).unwrap();
            let some: Vec<_> = tree.starts(agent).iter().zip(some).collect();
            assert_eq!(
                every.len(),
                some.len(),
                "{agent:?}, case {case}, seed {seed}"
            );
            for (i, (dir, found)) in some.iter().enumerate() {
                assert_eq!(*dir, &every[i].cwd, "{agent:?}, case {case}, seed {seed}");
                match found {
                    agents::Shared::Own(measured) => {
                        // The context but for its parts, which are measured.
                        let mut alone = every[i].clone();
                        let raw = alone.raw().map(|r| r.into_owned()).unwrap_or_default();
                        alone.parts = Vec::new();
                        assert_eq!(measured.context, alone);
                        let sent = (raw.len(), promptinclude::tokenize::count(&raw));
                        assert_eq!((measured.bytes, measured.tokens), sent);
                    }
                    agents::Shared::As(owner) => {
                        shared[a] += 1;
                        // An ancestor, or an earlier sibling of one (or of
                        // the directory itself).
                        let owner_dir = &every[*owner].cwd;
                        assert!(
                            *owner < i
                                && dir.ancestors().any(|a| {
                                    a == owner_dir
                                        || (a.parent().is_some()
                                            && a.parent() == owner_dir.parent())
                                }),
                            "{agent:?} in {} given as {}, case {case}, seed {seed}",
                            dir.display(),
                            owner_dir.display()
                        );
                        assert!(matches!(some[*owner].1, agents::Shared::Own(_)));
                        assert_eq!(
                            chain_key(&every[i]),
                            chain_key(&every[*owner]),
                            "{agent:?} in {} given as {}, case {case}, seed {seed}",
                            dir.display(),
                            every[*owner].cwd.display()
                        );
                    }
                }
            }
        }
    }
    // Every agent but Agent Zero (one project, one context) skips some.
    for (a, agent) in Agent::ALL.into_iter().enumerate() {
        assert_eq!(
            shared[a] > 0,
            agent != Agent::AgentZero,
            "{agent:?}: {shared:?}, seed {seed}"
        );
    }
}

/// `Remembered::canonicalize` builds `realpath` from its parents' real
/// paths and one `lstat` per step: over random trees of links (to files,
/// to directories, relative, absolute, through `..`, dangling, in loops,
/// through a file) and unreadable directories, asked for random paths in a
/// random order through one memory, it gives what `realpath` gives, error
/// codes included.
#[test]
fn remembered_realpath_is_realpath() {
    use std::os::unix::fs::PermissionsExt;
    let seed = crate::common::fresh_seed("PROMPTINCLUDE_REALPATH_SEED");
    let mut rng = crate::common::Rng::new(seed);
    const NAMES: &[&str] = &["a", "b", "c", "AGENTS.md", "x.md", ".claude", "rules"];
    for case in 0..40 {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let mut dirs = vec![base.clone()];
        let mut made = vec![base.clone()];
        for _ in 0..12 {
            let at = rng.pick(&dirs).join(rng.pick(NAMES));
            if fs::create_dir(&at).is_ok() {
                dirs.push(at.clone());
                made.push(at);
            }
        }
        for _ in 0..10 {
            let at = rng.pick(&dirs).join(rng.pick(NAMES));
            // Of lengths about the prefixes asked for (0, 2, 5, 64).
            if fs::write(&at, "text".repeat(rng.below(3))).is_ok() {
                made.push(at);
            }
        }
        for _ in 0..10 {
            let at = rng.pick(&dirs).join(rng.pick(NAMES));
            let target: PathBuf = match rng.below(5) {
                0 => rng.pick(&made).clone(),
                1 => PathBuf::from(rng.pick(NAMES)),
                2 => Path::new("..").join(rng.pick(NAMES)),
                3 => rng.pick(&made).join(rng.pick(NAMES)),
                _ => at.clone(),
            };
            if symlink(&target, &at).is_ok() {
                made.push(at);
            }
        }
        // Running as root, a mode does not stop a lookup; elsewhere it does.
        let locked = rng.pick(&dirs).clone();
        if locked != base && rng.chance(30) {
            fs::set_permissions(&locked, fs::Permissions::from_mode(0o600)).unwrap();
        }
        let mut asked: Vec<PathBuf> = Vec::new();
        for _ in 0..60 {
            let mut path = rng.pick(&made).clone();
            for _ in 0..rng.below(3) {
                path.push(rng.pick(NAMES));
            }
            asked.push(path);
        }
        let remembered = Remembered::over(&Live);
        for path in &asked {
            let ours = remembered.canonicalize(path);
            let real = fs::canonicalize(path);
            let label = format!("seed {seed} case {case}: {}", path.display());
            match (ours, real) {
                (Ok(ours), Ok(real)) => assert_eq!(ours, real, "{label}"),
                (Err(ours), Err(real)) => {
                    assert_eq!(ours.raw_os_error(), real.raw_os_error(), "{label}")
                }
                (ours, real) => panic!("{label}: {ours:?} but realpath gives {real:?}"),
            }
        }
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// The system as a directory that folds case (vfat, a case-folding ext4
/// directory) or one that can be listed but not searched would answer:
/// below a `folding` directory a name is found whatever its ASCII case;
/// below a `locked` one nothing is found ("permission denied").
struct Twisted {
    folding: Vec<PathBuf>,
    locked: Vec<PathBuf>,
}

impl Twisted {
    /// The path the system would look up for `path`, or its refusal.
    fn lookup(&self, path: &Path) -> io::Result<PathBuf> {
        let Some(parent) = path.parent() else {
            return Ok(path.to_path_buf());
        };
        if self.locked.iter().any(|l| path.starts_with(l) && path != l) {
            return Err(io::Error::from_raw_os_error(13));
        }
        let name = path.file_name().unwrap_or_default();
        // The tree is made on a file system that keeps `k` and `K` apart:
        // a name that is there is found as it is.
        if self.folding.iter().any(|f| f == parent) && fs::symlink_metadata(path).is_err() {
            if let Ok(entries) = fs::read_dir(parent) {
                for entry in entries.flatten() {
                    let found = entry.file_name();
                    if found
                        .as_encoded_bytes()
                        .eq_ignore_ascii_case(name.as_encoded_bytes())
                    {
                        return Ok(parent.join(found));
                    }
                }
            }
        }
        Ok(path.to_path_buf())
    }
}

impl Disk for Twisted {
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        Live.metadata(&self.lookup(path)?)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        Live.symlink_metadata(&self.lookup(path)?)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.lookup(path)?;
        Live.canonicalize(path)
    }
    fn read(&self, path: &Path) -> io::Result<std::sync::Arc<[u8]>> {
        Live.read(&self.lookup(path)?)
    }
    fn read_prefix(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        Live.read_prefix(&self.lookup(path)?, limit)
    }
    fn read_dir(&self, path: &Path) -> io::Result<promptinclude::agents::disk::Listing> {
        Live.read_dir(&self.lookup(path)?)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        Live.read_link(&self.lookup(path)?)
    }
    fn readable(&self, path: &Path) -> bool {
        self.lookup(path).is_ok_and(|p| Live.readable(&p))
    }
}

/// One answer of a [`Disk`], comparable: what the question found, or the
/// error code.
fn answer(disk: &dyn Disk, question: usize, path: &Path) -> String {
    fn shown<T: std::fmt::Debug>(r: io::Result<T>) -> String {
        match r {
            Ok(found) => format!("{found:?}"),
            // The message too: the models report it.
            Err(e) => format!("error {:?} {e}", e.raw_os_error()),
        }
    }
    let kind = |m: Metadata| (m.file_type(), m.len());
    match question {
        0 => shown(disk.metadata(path).map(kind)),
        1 => shown(disk.symlink_metadata(path).map(kind)),
        2 => shown(disk.resolution_metadata(path).map(kind)),
        3 => shown(disk.canonicalize(path)),
        4 => shown(disk.read(path)),
        5 => shown(disk.read_prefix(path, 2)),
        9 => shown(disk.read_prefix(path, 0)),
        10 => shown(disk.read_prefix(path, 5)),
        11 => shown(disk.read_prefix(path, 64)),
        6 => shown(disk.read_dir(path).map(|listing| {
            let mut names: Vec<OsString> = listing.iter().map(|(n, _)| n.to_os_string()).collect();
            names.sort();
            names
        })),
        7 => shown(disk.read_link(path)),
        8 => format!("readable {}", disk.readable(path)),
        _ => unreachable!("question {question}"),
    }
}

/// `Remembered` answers some questions without asking: a name missing from
/// its directory's remembered listing, or below a directory that is not
/// there. Over random trees whose names differ only in case or lie outside
/// ASCII (`K` as the Kelvin sign), with directories that fold case or
/// cannot be searched, every answer to random questions about random paths,
/// asked in a random order through one memory after random listings, is
/// the one the file system itself gives.
#[test]
fn remembered_answers_are_the_systems() {
    let seed = crate::common::fresh_seed("PROMPTINCLUDE_ANSWERS_SEED");
    let mut rng = crate::common::Rng::new(seed);
    const NAMES: &[&str] = &[
        "a",
        "A",
        "b",
        "AGENTS.md",
        "agents.md",
        "CLAUDE.md",
        ".claude",
        "rules",
        "\u{212A}",
        "K",
        "k",
        "1",
    ];
    for case in 0..40 {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let mut dirs = vec![base.clone()];
        let mut made = vec![base.clone()];
        for _ in 0..10 {
            let at = rng.pick(&dirs).join(rng.pick(NAMES));
            if fs::create_dir(&at).is_ok() {
                dirs.push(at.clone());
                made.push(at);
            }
        }
        for _ in 0..12 {
            let at = rng.pick(&dirs).join(rng.pick(NAMES));
            // Of lengths about the prefixes asked for (0, 2, 5, 64).
            if fs::write(&at, "text".repeat(rng.below(3))).is_ok() {
                made.push(at);
            }
        }
        for _ in 0..4 {
            let at = rng.pick(&dirs).join(rng.pick(NAMES));
            if symlink(rng.pick(NAMES), &at).is_ok() {
                made.push(at);
            }
        }
        let mut twisted = Twisted {
            folding: Vec::new(),
            locked: Vec::new(),
        };
        for _ in 0..rng.below(3) {
            twisted.folding.push(rng.pick(&dirs).clone());
        }
        if rng.chance(40) {
            twisted.locked.push(rng.pick(&dirs).clone());
        }
        let remembered = Remembered::over(&twisted);
        let mut asked = 0;
        let mut path = base.clone();
        for _ in 0..80 {
            // Now and then the same path again, so that answers kept for
            // one question meet another (a longer prefix, say).
            if !rng.chance(25) {
                path = rng.pick(&made).clone();
                for _ in 0..rng.below(3) {
                    // Now and then a name no file can have (an import's
                    // path may hold a NUL): the system refuses the path
                    // before looking anything up.
                    path.push(match rng.chance(8) {
                        true => *rng.pick(&["a\0b", "CLAUDE.md\0x"]),
                        false => *rng.pick(NAMES),
                    });
                }
            }
            // Listings first, mostly, so that most questions can be
            // answered from them.
            let mut question = if rng.chance(30) { 6 } else { rng.below(12) };
            // `Twisted` folds case and refuses lookups only in its own
            // lookups, not in the `realpath` it leaves to the system.
            if question == 3 && !(twisted.folding.is_empty() && twisted.locked.is_empty()) {
                question = 1;
            }
            let ours = answer(&remembered, question, &path);
            let real = answer(&twisted, question, &path);
            assert_eq!(
                ours,
                real,
                "seed {seed} case {case}: question {question} about {} (folding {:?}, locked {:?})",
                path.display(),
                twisted.folding,
                twisted.locked
            );
            asked += 1;
            // What an exact listing says is not there is not there, nor
            // anything below it, whatever the system is asked.
            if let Some(listing) = remembered.exact_listing(&path) {
                assert_eq!(
                    answer(&remembered, 6, &path),
                    answer(&twisted, 6, &path),
                    "seed {seed} case {case}: the exact listing of {}",
                    path.display()
                );
                for name in NAMES {
                    for rel in [name.to_string(), format!("{name}/CLAUDE.md")] {
                        let probe = path.join(&rel);
                        if !absent_below(Some(&listing), &path, &rel) {
                            continue;
                        }
                        for question in [0, 1, 4, 8] {
                            let real = answer(&twisted, question, &probe);
                            assert!(
                                real.starts_with("error Some(2) ") || real == "readable false",
                                "seed {seed} case {case}: {} is said not to be there, but \
                                 question {question} finds {real} (folding {:?}, locked {:?})",
                                probe.display(),
                                twisted.folding,
                                twisted.locked
                            );
                        }
                    }
                }
            }
        }
        assert_eq!(asked, 80);
    }
}

/// A view that hides everything above a tree but the user's own settings
/// (`Confined`, as `diff --agents` looks) is not a file system: the home
/// is hidden and `~/.claude` is not. Remembered answers through it are the
/// view's own, for the user's files too.
#[test]
fn remembered_answers_through_a_confined_view_are_the_views() {
    use promptinclude::agents::disk::Confined;
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (repo, home) = monorepo(&base);
    write(&home.join(".claude/CLAUDE.md"), "USER\n");
    write(&home.join(".claude/rules/r.md"), "RULE\n");
    write(&base.join("outside/CLAUDE.md"), "HIDDEN\n");
    let confined = Confined::new(&Live, &repo, &home, Vec::new());
    let paths = [
        home.clone(),
        home.join(".claude"),
        home.join(".claude/CLAUDE.md"),
        home.join(".claude/rules"),
        home.join(".claude/rules/r.md"),
        home.join("plain.md"),
        base.join("outside"),
        base.join("outside/CLAUDE.md"),
        repo.join("AGENTS.md"),
        repo.join("none/AGENTS.md"),
    ];
    // Every order of asking: the home and the outside first, or last.
    for reversed in [false, true] {
        let remembered = Remembered::over(&confined);
        let mut order: Vec<&PathBuf> = paths.iter().collect();
        if reversed {
            order.reverse();
        }
        for path in order {
            for question in 0..12 {
                assert_eq!(
                    answer(&remembered, question, path),
                    answer(&confined, question, path),
                    "question {question} about {}",
                    path.display()
                );
            }
        }
    }
    let remembered = Remembered::over(&confined);
    assert!(remembered.read(&home.join(".claude/CLAUDE.md")).is_ok());
}
