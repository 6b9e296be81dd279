//! `audit --agents`: every chain it reports is what `context` says for
//! every directory on it (random trees, fresh seed each run, printed), and
//! each warning kind fires where it must and not where it must not.

use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use promptinclude::agents::{self, Agent, Start};
use promptinclude::audit::agents::{
    audit_tree, AgentWarning, AgentWarningKind, Setup, TreeAudit, View,
};

use crate::common::{self, Rng};

fn write(path: &Path, text: impl AsRef<[u8]>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// The environment the agents see: nothing of the machine's own.
fn env(name: &str) -> Option<OsString> {
    (name == "GEMINI_CLI_TRUST_WORKSPACE").then(|| OsString::from("true"))
}

/// A repository and a home in a fresh temporary directory.
struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
}

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(dir.path()).unwrap();
        let root = base.join("repo");
        let home = base.join("home");
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::create_dir_all(&home).unwrap();
        Repo {
            _dir: dir,
            root,
            home,
        }
    }

    fn write(&self, rel: &str, text: &str) -> &Repo {
        write(&self.root.join(rel), text);
        self
    }

    fn audit(&self, agents: &[Agent]) -> TreeAudit {
        audit_tree(
            agents,
            &self.root,
            &Setup {
                home: &self.home,
                env: &env,
                view: View::Trusted,
            },
        )
    }
}

/// Whether the chain `chain` of an audit record holds the directory `dir`:
/// the nearest of its `subtrees` and `except` at or above `dir` is one of
/// its `subtrees` (`docs/audit-schema.md`).
fn json_chain_holds(chain: &serde_json::Value, dir: &Path) -> bool {
    let listed = |key: &str, d: &Path| {
        chain[key]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| Path::new(s.as_str().unwrap()) == d)
    };
    dir.ancestors()
        .find(|d| listed("subtrees", d) || listed("except", d))
        .is_some_and(|d| listed("subtrees", d))
}

/// The warnings of `kind`, as (agent, path from the root).
fn of_kind(tree: &TreeAudit, kind: AgentWarningKind) -> Vec<(&'static str, String)> {
    tree.warnings
        .iter()
        .filter(|w| w.kind == kind)
        .map(|w| {
            let rel = w.path.strip_prefix(&tree.root).unwrap_or(&w.path);
            (w.agent, rel.to_string_lossy().into_owned())
        })
        .collect()
}

/// The messages of `agent`'s warnings of `kind` about the file at `rel`.
fn messages(tree: &TreeAudit, kind: AgentWarningKind, agent: &str, rel: &str) -> Vec<String> {
    tree.warnings
        .iter()
        .filter(|w| w.kind == kind && w.agent == agent && w.path == tree.root.join(rel))
        .map(|w| w.message.clone())
        .collect()
}

fn find<'a>(tree: &'a TreeAudit, kind: AgentWarningKind, rel: &str) -> &'a AgentWarning {
    tree.warnings
        .iter()
        .find(|w| w.kind == kind && w.path == tree.root.join(rel))
        .unwrap_or_else(|| panic!("no {kind} warning for {rel}: {:#?}", tree.warnings))
}

/// A random monorepo: every agent's files at random depths, imports that
/// resolve or not, sizes around Codex's limit, links, front matter.
fn random_monorepo(rng: &mut Rng, repo: &Repo) {
    random_monorepo_at(rng, &repo.root, &repo.home);
}

/// [`random_monorepo`] at `root`, with the user's files in `home`.
pub(crate) fn random_monorepo_at(rng: &mut Rng, root: &Path, home: &Path) {
    const DIRS: &[&str] = &[
        "",
        "apps",
        "apps/web",
        "apps/web/src",
        "apps/api",
        "services",
        "services/payments",
        "services/payments/core",
        "docs",
    ];
    const NAMES: &[&str] = &[
        "AGENTS.md",
        "AGENTS.override.md",
        "CLAUDE.md",
        ".claude/CLAUDE.md",
        "CLAUDE.local.md",
        "GEMINI.md",
        "CONTEXT.md",
        ".claude/rules/style.md",
        ".claude/rules/ts.md",
        ".cursor/rules/go.mdc",
        "notes.md",
    ];
    for dir in DIRS {
        fs::create_dir_all(root.join(dir)).unwrap();
        for name in NAMES {
            if !rng.chance(22) {
                continue;
            }
            let rel = if dir.is_empty() {
                name.to_string()
            } else {
                format!("{dir}/{name}")
            };
            let mut text = match rng.below(7) {
                0 => b"shared rule\n".to_vec(),
                1 => format!("{} {rel}\n", "x".repeat(rng.below(3) * 9000)).into_bytes(),
                2 => b"   \n".to_vec(),
                3 => format!(
                    "rule of {rel} @{}\n",
                    // Up, beside, and down into directories below (where
                    // the start directory decides whether it is followed);
                    // and a directory's own `CLAUDE.md` from beside it or
                    // from its rules, which a start there has taken, there
                    // or not, before it reads the import.
                    rng.pick(&[
                        "notes.md",
                        "missing.md",
                        "../notes.md",
                        "AGENTS.md",
                        "web/notes.md",
                        "apps/web/AGENTS.md",
                        "payments/core/notes.md",
                        "docs/notes.md",
                        "CLAUDE.md",
                        "../../CLAUDE.md",
                    ])
                )
                .into_bytes(),
                4 => b"---\npaths: [\"**/*.ts\"]\n---\nscoped\n".to_vec(),
                5 => format!("rule of {rel}\r\n").into_bytes(),
                _ => hostile_markdown(rng),
            };
            if name.ends_with(".mdc") {
                let globs = rng.pick(&["*.go", "**/*.md", "\"*.ts\""]);
                text = [format!("---\nglobs: {globs}\n---\n").into_bytes(), text].concat();
            }
            write(&root.join(&rel), text);
        }
    }
    if rng.chance(50) {
        write(&root.join("apps/web/src/main.ts"), "code\n");
    }
    if rng.chance(40) && !root.join("apps/CLAUDE.md").exists() {
        fs::create_dir_all(root.join("apps")).unwrap();
        let _ = symlink(root.join("AGENTS.md"), root.join("apps/CLAUDE.md"));
    }
    // Claude Code's approval of imports from outside the start directory,
    // for the repository or for another project. (A nested repository
    // approved on its own is a_nested_repository_has_its_own_approval: its
    // `.git` is not in a commit, so a checkout of the tree lacks it.)
    if rng.chance(30) {
        let key = match rng.below(2) {
            0 => root.to_path_buf(),
            _ => root.join("elsewhere"),
        };
        let config = format!(
            "{{\"projects\": {{{:?}: {{\"hasClaudeMdExternalIncludesApproved\": true}}}}}}",
            key.to_str().unwrap()
        );
        write(&home.join(".claude.json"), config);
    }
    if rng.chance(30) {
        write(&home.join(".codex/AGENTS.md"), "global codex\n");
        write(&home.join(".claude/CLAUDE.md"), "user claude\n");
        write(&home.join(".gemini/GEMINI.md"), "global gemini\n");
    }
}

/// Markdown made to confuse the agents' parsers: front matter that ends
/// or not, fences, comments and code spans around imports, imports that
/// resolve, leave the tree or loop, line ends of every kind, a byte-order
/// mark and bytes that are not UTF-8.
fn hostile_markdown(rng: &mut Rng) -> Vec<u8> {
    const PIECES: &[&[u8]] = &[
        b"---\n",
        b"paths:\n  - \"apps/**\"\n",
        b"paths: []\n",
        b"paths: apps/**, docs/**\n",
        b"globs: *.ts\n",
        b"```\n",
        b"~~~\n",
        b"    @notes.md\n",
        b"<!-- ",
        b" -->",
        b"`@AGENTS.md`",
        b"``",
        b"`",
        b"@notes.md",
        b"@../notes.md",
        b"@missing.md",
        b"@CLAUDE.md",
        b"@./AGENTS.md",
        b"@~/extra.md",
        b"@notes.md#part",
        b"@no\\ such.md",
        b"\\@notes.md",
        b"- item @AGENTS.md\n",
        b"# heading @docs/notes.md\n",
        b"{{ include 'notes.md' }}",
        b"\n",
        b"\r\n",
        b"\r",
        b" ",
        b"\t",
        "\u{2028}".as_bytes(),
        "\u{feff}".as_bytes(),
        "\u{a0}".as_bytes(),
        b"\xff",
        b"\xe2\x82",
        b"\0",
        b"rule",
        b"words of a rule ",
    ];
    let mut out = Vec::new();
    for _ in 0..1 + rng.below(40) {
        out.extend_from_slice(rng.pick::<&[u8]>(PIECES));
    }
    out
}

#[test]
fn the_subtrees_of_a_chain_give_its_directories() {
    // Schema 2 gives a chain's directories as subtrees less the subtrees
    // inside them where other chains start; schema 1 listed them. The old
    // list must follow from the new record: every directory of the tree
    // (walked as the audit walks it) is on the one chain the record's
    // subtrees name, and those of a chain are its list, `start` first.
    let seed = crate::common::fresh_seed("PROMPTINCLUDE_AGENTS_AUDIT_SEED");
    let mut rng = Rng::new(seed);
    // Chains of several subtrees, and with exceptions, were met.
    let (mut several, mut excepted) = (0, 0);
    for case in 0..16 {
        let repo = Repo::new();
        random_monorepo(&mut rng, &repo);
        if case % 2 == 1 {
            // Claude Code's chains part and meet again: an import the root
            // follows from `a-in` but not from `b-out`.
            repo.write("CLAUDE.md", "ROOT @AGENTS.md @a-in/notes.md\n")
                .write("a-in/notes.md", "notes\n")
                .write("b-out/x/y.txt", "y\n")
                .write("a-in/deep/z.txt", "z\n");
        }
        let tree = repo.audit(&Agent::ALL);
        let json = serde_json::to_value(tree.json()).unwrap();
        let mut all = Vec::new();
        walk_dirs(&repo.root, &mut all);
        all.sort();
        for (agent, agent_json) in tree.agents.iter().zip(json["agents"].as_array().unwrap()) {
            let name = agent.agent.name();
            let chains_json = agent_json["chains"].as_array().unwrap();
            for dir in &all {
                let holding = chains_json
                    .iter()
                    .filter(|c| json_chain_holds(c, dir))
                    .count();
                assert_eq!(holding, 1, "{name}: {dir:?} (seed {seed}, case {case})");
            }
            for (chain, chain_json) in agent.chains.iter().zip(chains_json) {
                assert_eq!(chain.subtrees[0], chain.start, "seed {seed}");
                assert_eq!(
                    chain_json["start"], chain_json["subtrees"][0],
                    "seed {seed}"
                );
                let derived: Vec<PathBuf> = all
                    .iter()
                    .filter(|d| json_chain_holds(chain_json, d))
                    .cloned()
                    .collect();
                if agent.agent == Agent::AgentZero {
                    // Its project is the whole tree, started at the root.
                    assert_eq!(derived, all, "seed {seed}");
                    let listed: Vec<&Path> = tree.dirs_of(chain).collect();
                    assert_eq!(listed, [repo.root.as_path()], "seed {seed}");
                } else {
                    let mut listed: Vec<PathBuf> =
                        tree.dirs_of(chain).map(Path::to_path_buf).collect();
                    listed.sort();
                    assert_eq!(
                        derived, listed,
                        "{name} from {:?} (seed {seed}, case {case})",
                        chain.start
                    );
                    assert!(derived.iter().all(|d| chain.holds(d)), "seed {seed}");
                }
                assert_eq!(chain_json["dir_count"], derived.len(), "seed {seed}");
                several += usize::from(chain.subtrees.len() > 1);
                excepted += usize::from(!chain.except.is_empty());
            }
        }
    }
    assert!(
        several > 0 && excepted > 0,
        "{several} {excepted} (seed {seed})"
    );
}

/// Every directory at or below `dir`, as the audit walks them: links not
/// followed, `.git` not entered.
fn walk_dirs(dir: &Path, out: &mut Vec<PathBuf>) {
    out.push(dir.to_path_buf());
    for entry in fs::read_dir(dir).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() && entry.file_name() != ".git" {
            walk_dirs(&entry.path(), out);
        }
    }
}

#[test]
fn every_chain_is_what_context_says_in_each_of_its_directories() {
    let seed = crate::common::fresh_seed("PROMPTINCLUDE_AGENTS_AUDIT_SEED");
    let mut rng = Rng::new(seed);
    let mut chains_seen = 0;
    for case in 0..12 {
        let repo = Repo::new();
        random_monorepo(&mut rng, &repo);
        let tree = repo.audit(&Agent::ALL);
        let dirs = agents::Tree::of(&repo.root, &agents::disk::Live)
            .unwrap()
            .dirs;
        for agent in &tree.agents {
            let label = format!("seed {seed} case {case} {}", agent.agent.name());
            assert_eq!(agent.error, None, "{label}");
            // Every start directory is on exactly one chain.
            let mut on: Vec<&Path> = agent.chains.iter().flat_map(|c| tree.dirs_of(c)).collect();
            on.sort();
            let expected: Vec<&Path> = if agent.agent == Agent::AgentZero {
                vec![&dirs[0]]
            } else {
                let mut all: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
                all.sort();
                all
            };
            assert_eq!(on, expected, "{label}");
            for chain in &agent.chains {
                chains_seen += 1;
                assert_eq!(
                    Some(chain.start.as_path()),
                    tree.dirs_of(chain).next(),
                    "{label}"
                );
                for dir in tree.dirs_of(chain) {
                    let alone = agents::context(
                        agent.agent,
                        &Start {
                            cwd: dir,
                            home: &repo.home,
                            env: &env,
                        },
                    )
                    .unwrap();
                    let at = format!("{label} in {}", dir.display());
                    assert_eq!(alone.files, chain.context.files, "{at}");
                    assert_eq!(alone.limit, chain.context.limit, "{at}");
                    assert_eq!(alone.root, chain.context.root, "{at}");
                    assert_eq!(alone.notes, chain.context.notes, "{at}");
                    if dir == chain.start {
                        let raw = alone.raw().unwrap_or_default();
                        assert_eq!(raw.len(), chain.bytes, "{at}");
                        assert_eq!(promptinclude::tokenize::count(&raw), chain.tokens, "{at}");
                    }
                }
            }
            // Chains differ: no two have the same files.
            for (i, a) in agent.chains.iter().enumerate() {
                for b in &agent.chains[i + 1..] {
                    assert!(
                        a.context.files != b.context.files
                            || a.context.limit != b.context.limit
                            || a.context.root != b.context.root
                            || a.context.notes != b.context.notes,
                        "{label}: two chains alike, from {} and {}",
                        a.start.display(),
                        b.start.display()
                    );
                }
            }
        }
        // Each warning about a file the agents loaded names a real outcome.
        for w in &tree.warnings {
            if w.kind == AgentWarningKind::Truncated {
                let codex = tree
                    .agents
                    .iter()
                    .find(|a| a.agent == Agent::Codex)
                    .unwrap();
                assert!(
                    codex
                        .chains
                        .iter()
                        .any(|c| c.context.files.iter().any(|f| f.path == w.path
                            && matches!(
                                f.outcome,
                                agents::Outcome::Truncated { .. }
                                    | agents::Outcome::Skipped(agents::Skip::LimitReached)
                            ))),
                    "seed {seed} case {case}: {w:?}"
                );
            }
        }
    }
    assert!(chains_seen > 12 * 5, "seed {seed}: {chains_seen} chains");
}

/// An import whose path holds a NUL (below a listed directory, or below a
/// file) is refused by the system before any lookup; the audit, which
/// answers most lookups from the directories it listed, reports it as
/// `context` does: unreadable, with the system's words, not "not found".
#[test]
fn an_import_with_a_nul_is_unreadable_in_the_audit_as_in_context() {
    let repo = Repo::new();
    repo.write(
        "CLAUDE.md",
        "rule @notes.md\0x @CLAUDE.md/a\0b @sub/c\0d.md\n",
    )
    .write("notes.md", "notes\n");
    fs::create_dir_all(repo.root.join("sub")).unwrap();
    let tree = repo.audit(&[Agent::ClaudeCode]);
    let chain = &tree.agents[0].chains[0];
    let alone = agents::context(
        Agent::ClaudeCode,
        &Start {
            cwd: &repo.root,
            home: &repo.home,
            env: &env,
        },
    )
    .unwrap();
    assert_eq!(chain.context.files, alone.files);
    let refused: Vec<&agents::ContextFile> = alone
        .files
        .iter()
        .filter(|f| f.path.as_os_str().as_encoded_bytes().contains(&0))
        .collect();
    assert_eq!(refused.len(), 3, "{:#?}", alone.files);
    for f in refused {
        assert!(
            matches!(&f.outcome, agents::Outcome::Skipped(agents::Skip::Unreadable(why)) if why.contains("NUL")),
            "{f:?}"
        );
    }
}

/// One `audit --agents` of several trees reports each as an audit of it
/// alone does: what the batch shares between trees (token counts of the
/// rule files and framing they repeat) changes nothing (random monorepos
/// with one home, fresh seed).
#[test]
fn a_batch_reports_each_tree_as_its_own_audit_does() {
    let seed = crate::common::fresh_seed("PROMPTINCLUDE_AGENTS_AUDIT_SEED");
    let mut rng = Rng::new(seed);
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let home = base.join("home");
    fs::create_dir_all(&home).unwrap();
    let roots: Vec<PathBuf> = (0..4).map(|i| base.join(format!("repo{i}"))).collect();
    for root in &roots {
        fs::create_dir_all(root.join(".git")).unwrap();
        random_monorepo_at(&mut rng, root, &home);
    }
    let audit = |roots: &[PathBuf]| -> Vec<serde_json::Value> {
        let out = common::command(common::binary())
            .args(["audit", "--agents", "all", "--json", "--home"])
            .arg(&home)
            .args(roots)
            .env("GEMINI_CLI_TRUST_WORKSPACE", "true")
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["type"] == "root")
            .map(|r| r["agents"].clone())
            .collect()
    };
    let together = audit(&roots);
    assert_eq!(together.len(), roots.len(), "seed {seed}");
    for (root, agents) in roots.iter().zip(&together) {
        let alone = audit(std::slice::from_ref(root));
        assert_eq!(alone.len(), 1, "seed {seed}");
        assert!(agents["agents"]
            .as_array()
            .is_some_and(|a| a.len() == promptinclude::agents::Agent::ALL.len()));
        assert_eq!(&alone[0], agents, "seed {seed}: {}", root.display());
    }
}

#[test]
fn the_command_reports_the_chains_context_reports() {
    let repo = Repo::new();
    repo.write("AGENTS.md", &"root rule ".repeat(2000))
        .write("services/payments/AGENTS.md", &"pay ".repeat(9000))
        .write("services/payments/api/AGENTS.override.md", "override\n")
        .write("services/payments/api/AGENTS.md", "shadowed\n")
        .write("CLAUDE.md", "claude @docs/style.md\n")
        .write("docs/style.md", "style\n");
    let home = repo.home.to_string_lossy().into_owned();
    let root = repo.root.to_string_lossy().into_owned();
    let out = common::command(common::binary())
        .args([
            "audit",
            "--agents",
            "codex,claude-code",
            "--json",
            "--home",
            &home,
            &root,
        ])
        .env("HOME", &repo.home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let root_record: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["type"] == "root")
        .unwrap();
    let agents = root_record["agents"]["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 2);
    let mut compared = 0;
    let dirs = [
        "",
        "docs",
        "services",
        "services/payments",
        "services/payments/api",
    ];
    for agent in agents {
        let name = agent["agent"].as_str().unwrap();
        let chains = agent["chains"].as_array().unwrap();
        let covered: usize = chains
            .iter()
            .map(|c| c["dir_count"].as_u64().unwrap() as usize)
            .sum();
        assert_eq!(covered, dirs.len(), "{name}: every directory on one chain");
        for rel in dirs {
            let dir = repo.root.join(rel);
            let holding: Vec<&serde_json::Value> = chains
                .iter()
                .filter(|c| json_chain_holds(c, &dir))
                .collect();
            let [chain] = holding[..] else {
                panic!("{name}: {} chains hold {rel:?}", holding.len());
            };
            {
                let dir = dir.to_str().unwrap();
                let out = common::command(common::binary())
                    .args([
                        "context", "--agent", name, "--json", "--home", &home, "--cwd", dir,
                    ])
                    .output()
                    .unwrap();
                assert!(out.status.success());
                let context: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(context["files"], chain["files"], "{name} in {dir}");
                assert_eq!(context["limit"], chain["limit"], "{name} in {dir}");
                compared += 1;
            }
        }
    }
    assert_eq!(
        compared,
        2 * 5,
        "root, docs, services, services/payments and its api"
    );
    let warnings = root_record["agents"]["warnings"].as_array().unwrap();
    let kinds: Vec<&str> = warnings
        .iter()
        .map(|w| w["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"truncated"), "{kinds:?}");
    assert!(kinds.contains(&"shadowed"), "{kinds:?}");

    // The gate: exit 1, with the file and the kind on stderr.
    let out = common::command(common::binary())
        .args([
            "audit",
            "--agents",
            "codex",
            "--fail-on",
            "truncated",
            "--home",
            &home,
            &root,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("services/payments/AGENTS.md: codex warning truncated"),
        "{stderr}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("codex 0.171.0: "), "{text}");
    assert!(
        text.contains("truncated codex: cut by the byte limit"),
        "the summary's finding: {text}"
    );
    assert!(
        text.contains("e.g. services/payments/AGENTS.md: cut at byte"),
        "{text}"
    );
    // --verbose lists each warning on its own line.
    let mut verbose = common::command(common::binary());
    verbose.args([
        "audit",
        "--agents",
        "codex",
        "--verbose",
        "--home",
        &home,
        &root,
    ]);
    let text = String::from_utf8(verbose.output().unwrap().stdout).unwrap();
    assert!(
        text.contains("truncated codex services/payments/AGENTS.md: cut at byte"),
        "{text}"
    );
    // Without the gate the same audit passes.
    let out = common::command(common::binary())
        .args(["audit", "--agents", "codex", "--home", &home, &root])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn truncated_names_the_cut_and_where_it_happens() {
    let repo = Repo::new();
    repo.write("AGENTS.md", &"a".repeat(20_000))
        .write("services/payments/AGENTS.md", &"b".repeat(20_000))
        .write("services/other/AGENTS.md", "small\n");
    let tree = repo.audit(&[Agent::Codex]);
    let w = find(
        &tree,
        AgentWarningKind::Truncated,
        "services/payments/AGENTS.md",
    );
    assert_eq!(w.dirs, [repo.root.join("services/payments")]);
    let codex = &tree.agents[0];
    let chain = codex
        .chains
        .iter()
        .find(|c| c.start == repo.root.join("services/payments"))
        .unwrap();
    let cut = chain
        .context
        .files
        .iter()
        .find_map(|f| match f.outcome {
            agents::Outcome::Truncated { at, of } => Some((at, of)),
            _ => None,
        })
        .unwrap();
    assert!(
        w.message
            .contains(&format!("cut at byte {} of {}", cut.0, cut.1)),
        "{}",
        w.message
    );
    assert_eq!(of_kind(&tree, AgentWarningKind::Truncated).len(), 1);
    // Under the limit nothing is cut.
    let small = Repo::new();
    small.write("AGENTS.md", "a\n").write("x/AGENTS.md", "b\n");
    assert!(of_kind(&small.audit(&[Agent::Codex]), AgentWarningKind::Truncated).is_empty());
}

#[test]
fn shadowed_files_for_codex_claude_and_cursor() {
    let repo = Repo::new();
    repo.write("api/AGENTS.override.md", "override\n")
        .write("api/AGENTS.md", "plain\n")
        .write("web/CLAUDE.md", "claude\n")
        .write("web/AGENTS.md", "agents\n")
        .write(".cursorrules", "legacy\n")
        .write(".cursor/rules/a.mdc", "---\nalwaysApply: true\n---\nA\n");
    let tree = repo.audit(&[Agent::Codex, Agent::ClaudeCode]);
    let shadowed = of_kind(&tree, AgentWarningKind::Shadowed);
    assert!(
        shadowed.contains(&("codex", "api/AGENTS.md".into())),
        "{shadowed:?}"
    );
    assert!(
        shadowed.contains(&("claude-code", "web/AGENTS.md".into())),
        "{shadowed:?}"
    );
    assert!(
        shadowed.contains(&("cursor", ".cursorrules".into())),
        "{shadowed:?}"
    );
    assert!(find(&tree, AgentWarningKind::Shadowed, ".cursorrules").lint_only);
    assert!(
        !shadowed.contains(&("codex", "web/AGENTS.md".into())),
        "{shadowed:?}"
    );
}

#[test]
fn a_shadowed_file_whose_text_is_sent_all_the_same_is_not_never_read() {
    // Claude Code sends AGENTS.md's text when CLAUDE.md imports it, or is
    // a link to it: "never read" would tell the user their shared file is
    // ignored. (Started in svc/, the root's import lies outside the
    // working directory: its own warning says it waits for approval.)
    let imported = Repo::new();
    imported
        .write("CLAUDE.md", "@AGENTS.md\n")
        .write("AGENTS.md", "shared rules\n")
        .write("svc/CLAUDE.md", "svc rules\n")
        .write("svc/AGENTS.md", "svc agents\n");
    let tree = imported.audit(&[Agent::ClaudeCode]);
    assert_eq!(
        of_kind(&tree, AgentWarningKind::Shadowed),
        [("claude-code", "svc/AGENTS.md".to_string())]
    );
    let outside = find(&tree, AgentWarningKind::UnresolvedImport, "AGENTS.md");
    assert!(
        outside
            .message
            .contains("once the user approves external imports"),
        "{}",
        outside.message
    );
    let linked = Repo::new();
    linked.write("AGENTS.md", "shared rules\n");
    symlink("AGENTS.md", linked.root.join("CLAUDE.md")).unwrap();
    let tree = linked.audit(&[Agent::ClaudeCode]);
    assert_eq!(of_kind(&tree, AgentWarningKind::Shadowed), []);
}

#[test]
fn an_import_of_nothing_outside_the_working_directory_is_no_such_file() {
    // Started in svc/, the root CLAUDE.md's @nope.md lies outside the
    // working directory; approving it would load nothing, so one warning
    // says what is true from every directory: no such file.
    let repo = Repo::new();
    repo.write("CLAUDE.md", "root @nope.md @real.md\n")
        .write("real.md", "real\n")
        .write("svc/x.md", "x\n");
    let tree = repo.audit(&[Agent::ClaudeCode]);
    let unresolved = of_kind(&tree, AgentWarningKind::UnresolvedImport);
    assert_eq!(unresolved.len(), 2, "{unresolved:?}");
    let kind = AgentWarningKind::UnresolvedImport;
    assert_eq!(
        messages(&tree, kind, "claude-code", "nope.md"),
        ["imported by CLAUDE.md: no such file"]
    );
    let real = messages(&tree, kind, "claude-code", "real.md");
    assert!(
        real.len() == 1 && real[0].contains("once the user approves external imports"),
        "{real:?}"
    );
}

#[test]
fn gemini_refuses_an_import_outside_as_a_traversal_with_no_approval_to_wait_for() {
    let repo = Repo::new();
    repo.write("GEMINI.md", "rules @../above.md\n");
    write(&repo.root.parent().unwrap().join("above.md"), "above\n");
    let tree = repo.audit(&[Agent::Gemini]);
    let above = tree
        .warnings
        .iter()
        .find(|w| w.kind == AgentWarningKind::UnresolvedImport && w.agent == "gemini")
        .unwrap_or_else(|| panic!("{:#?}", tree.warnings));
    assert!(
        above
            .message
            .contains("which it refuses as a path traversal")
            && !above.message.contains("approval"),
        "{}",
        above.message
    );
}

#[test]
fn dead_scopes_for_claude_cursor_and_copilot() {
    let repo = Repo::new();
    repo.write(
        ".claude/rules/ts.md",
        "---\npaths:\n  - \"src/**/*.ts\"\n---\nTS\n",
    )
    .write(
        ".claude/rules/py.md",
        "---\npaths: [\"**/*.py\"]\n---\nPY\n",
    )
    .write(".cursor/rules/go.mdc", "---\nglobs: **/*.go\n---\nGO\n")
    .write(".cursor/rules/md.mdc", "---\nglobs: docs/*.md\n---\nMD\n")
    .write(
        ".github/instructions/rs.instructions.md",
        "---\napplyTo: \"**/*.rs\"\n---\nRS\n",
    )
    .write(
        ".github/instructions/ts.instructions.md",
        "---\napplyTo: \"**/*.ts\"\n---\nTS\n",
    )
    .write("src/app/main.ts", "code\n")
    .write("docs/guide.md", "guide\n");
    let tree = repo.audit(&[Agent::ClaudeCode]);
    let dead = of_kind(&tree, AgentWarningKind::DeadScope);
    assert_eq!(
        dead,
        [
            ("claude-code", ".claude/rules/py.md".to_string()),
            (
                "copilot",
                ".github/instructions/rs.instructions.md".to_string()
            ),
            ("cursor", ".cursor/rules/go.mdc".to_string()),
        ]
    );
    let py = find(&tree, AgentWarningKind::DeadScope, ".claude/rules/py.md");
    assert_eq!(py.line, Some(2));
    // True of the real agent: the rule loads once a matching path is read
    // or written (`src/new.py`), so it is not "never".
    assert!(
        py.message.contains("does not load at start")
            && py
                .message
                .contains("once the agent reads or writes a matching path")
            && !py.message.contains("never"),
        "{}",
        py.message
    );
}

#[test]
fn front_matter_read_otherwise_than_written() {
    let repo = Repo::new();
    repo.write(".claude/rules/empty.md", "---\npaths: []\n---\nE\n")
        .write(
            ".claude/rules/alias.md",
            "---\npaths:\n  - **/*.ts\n---\nA\n",
        )
        .write(
            ".claude/rules/dot.md",
            "---\npaths: [\"./src/a.ts\"]\n---\nD\n",
        )
        .write(".claude/rules/any.md", "---\npaths: [\"*.ts\"]\n---\nT\n")
        .write(".claude/rules/top.md", "---\npaths: [\"src/**\"]\n---\nT\n")
        // The documentation accepts a comma-separated string: not flagged.
        .write(
            ".claude/rules/string.md",
            "---\npaths: \"src/a.ts, src/b.ts\"\n---\nS\n",
        )
        .write(
            ".claude/rules/list.md",
            "---\npaths:\n  - src/a.ts\n---\nL\n",
        )
        .write(".cursor/rules/quoted.mdc", "---\nglobs: \"*.ts\"\n---\nQ\n")
        .write(
            ".cursor/rules/list.mdc",
            "---\nglobs:\n  - src/*.ts\n---\nQ\n",
        )
        .write(".cursor/rules/star.mdc", "---\nglobs: **/*.ts\n---\nQ\n")
        .write(".cursor/rules/fine.mdc", "---\nglobs: src/*.ts\n---\nQ\n")
        .write(".cursor/rules/plain.md", "plain\n")
        .write(
            ".github/instructions/none.instructions.md",
            "no front matter\n",
        )
        .write("src/a.ts", "a\n");
    let tree = repo.audit(&[Agent::ClaudeCode]);
    let bad = of_kind(&tree, AgentWarningKind::BadFrontMatter);
    let message = |rel: &str| {
        tree.warnings
            .iter()
            .filter(|w| w.kind == AgentWarningKind::BadFrontMatter && w.path == tree.root.join(rel))
            .map(|w| w.message.as_str())
            .collect::<Vec<_>>()
            .join(" | ")
    };
    for (agent, rel, says) in [
        ("claude-code", ".claude/rules/empty.md", "loads everywhere"),
        ("claude-code", ".claude/rules/alias.md", "not YAML"),
        ("claude-code", ".claude/rules/dot.md", "never matches"),
        ("claude-code", ".claude/rules/any.md", "at any depth"),
        ("claude-code", ".claude/rules/top.md", "is read as \"src\""),
        ("cursor", ".cursor/rules/quoted.mdc", "quotes and brackets"),
        ("cursor", ".cursor/rules/list.mdc", "YAML list"),
        ("cursor", ".cursor/rules/star.mdc", "works in Cursor"),
        ("cursor", ".cursor/rules/plain.md", "only .mdc"),
        (
            "copilot",
            ".github/instructions/none.instructions.md",
            "applyTo",
        ),
    ] {
        assert!(bad.contains(&(agent, rel.to_string())), "{rel} in {bad:?}");
        assert!(message(rel).contains(says), "{rel}: {}", message(rel));
    }
    for fine in [
        ".claude/rules/string.md",
        ".claude/rules/list.md",
        ".cursor/rules/fine.mdc",
    ] {
        assert!(!bad.iter().any(|(_, p)| p == fine), "{fine}: {bad:?}");
    }
    // What Claude Code does with them: the unparsable and the empty load
    // at start; the others are scoped.
    let claude = &tree.agents[0].chains[0].context.files;
    let outcome = |rel: &str| {
        let path = tree.root.join(rel);
        claude
            .iter()
            .find(|f| f.path == path)
            .map(|f| f.outcome.clone())
    };
    assert_eq!(
        outcome(".claude/rules/alias.md"),
        Some(agents::Outcome::Loaded)
    );
    assert_eq!(
        outcome(".claude/rules/empty.md"),
        Some(agents::Outcome::Loaded)
    );
    assert_eq!(
        outcome(".claude/rules/dot.md"),
        Some(agents::Outcome::Skipped(agents::Skip::ScopedOut))
    );
    // `./src/a.ts` never matches, so that rule is dead too.
    let dead = of_kind(&tree, AgentWarningKind::DeadScope);
    assert!(
        dead.contains(&("claude-code", ".claude/rules/dot.md".to_string())),
        "{dead:?}"
    );
    assert!(
        !dead.iter().any(|(_, p)| p == ".claude/rules/any.md"),
        "{dead:?}"
    );
}

#[test]
fn imports_that_do_not_resolve_go_too_deep_or_loop() {
    let repo = Repo::new();
    repo.write("CLAUDE.md", "root @missing.md @a.md @d1.md\n")
        .write("a.md", "a @b.md\n")
        .write("b.md", "b @a.md\n")
        .write("d1.md", "@d2.md\n")
        .write("d2.md", "@d3.md\n")
        .write("d3.md", "@d4.md\n")
        .write("d4.md", "@d5.md\n")
        .write("d5.md", "@d6.md\n")
        .write("d6.md", "deep\n");
    let tree = repo.audit(&[Agent::ClaudeCode]);
    assert_eq!(
        of_kind(&tree, AgentWarningKind::UnresolvedImport),
        [("claude-code", "missing.md".to_string())]
    );
    assert_eq!(
        of_kind(&tree, AgentWarningKind::ImportCycle),
        [("claude-code", "a.md".to_string())]
    );
    let deep = of_kind(&tree, AgentWarningKind::ImportTooDeep);
    assert_eq!(deep.len(), 1, "{deep:?}");
    assert!(deep[0].1.starts_with('d'), "{deep:?}");
}

#[test]
fn duplicates_are_the_same_text_sent_twice() {
    let repo = Repo::new();
    repo.write("CLAUDE.md", "the same rule\n")
        .write(".claude/CLAUDE.md", "the same rule\n")
        .write("sub/CLAUDE.md", "another rule\n");
    let tree = repo.audit(&[Agent::ClaudeCode]);
    assert_eq!(
        of_kind(&tree, AgentWarningKind::Duplicate),
        [("claude-code", ".claude/CLAUDE.md".to_string())]
    );
    // A file linked under a second name the agent reads.
    let linked = Repo::new();
    linked
        .write("GEMINI.md", "gemini\n")
        .write("sub/x.md", "x\n");
    symlink(
        linked.root.join("GEMINI.md"),
        linked.root.join("sub/GEMINI.md"),
    )
    .unwrap();
    let tree = linked.audit(&[Agent::Gemini]);
    let dup = of_kind(&tree, AgentWarningKind::Duplicate);
    let gemini = &tree.agents[0];
    let sub = gemini
        .chains
        .iter()
        .find(|c| tree.dirs_of(c).any(|d| d == linked.root.join("sub")))
        .unwrap();
    let sent = sub
        .context
        .files
        .iter()
        .filter(|f| matches!(f.outcome, agents::Outcome::Loaded))
        .count();
    // Gemini either reads both (a duplicate) or one of them (none).
    assert_eq!(dup.len(), usize::from(sent == 2), "{dup:?} {sent}");
}

#[test]
fn over_recommended_is_past_claude_codes_warning() {
    // Measured in UTF-16 code units, as JavaScript's `length`: a character
    // past U+FFFF is two, one from U+0080 to U+FFFF is one (two bytes of
    // UTF-8 here).
    let repo = Repo::new();
    repo.write("CLAUDE.md", &"x".repeat(40_001))
        .write("ok/CLAUDE.md", &"y".repeat(40_000))
        .write("emoji/CLAUDE.md", &"\u{1f600}".repeat(20_001))
        .write("wide/CLAUDE.md", &"\u{e9}".repeat(40_000));
    let tree = repo.audit(&[Agent::ClaudeCode]);
    assert_eq!(
        of_kind(&tree, AgentWarningKind::OverRecommended),
        [
            ("claude-code", "CLAUDE.md".to_string()),
            ("claude-code", "emoji/CLAUDE.md".to_string())
        ]
    );
    // Only an interactive session warns; `claude -p` says nothing.
    let message = &find(&tree, AgentWarningKind::OverRecommended, "CLAUDE.md").message;
    assert!(
        message.contains("an interactive Claude Code session warns")
            && message.contains("`claude -p` does not"),
        "{message}"
    );
}

#[test]
fn not_shared_is_a_rule_one_agent_gets_and_another_does_not() {
    let repo = Repo::new();
    repo.write("CLAUDE.md", "root claude\n")
        .write("services/payments/AGENTS.md", "payments\n")
        .write("services/orders/AGENTS.md", "orders\n")
        .write("services/orders/CLAUDE.md", "@AGENTS.md\n")
        .write("services/billing/AGENTS.md", "billing\n")
        .write("services/billing/CLAUDE.md", "billing\n")
        .write("services/linked/AGENTS.md", "linked\n");
    std::os::unix::fs::symlink("AGENTS.md", repo.root.join("services/linked/CLAUDE.md")).unwrap();
    let tree = repo.audit(&[Agent::Codex, Agent::ClaudeCode]);
    let not_shared = of_kind(&tree, AgentWarningKind::NotShared);
    // The same text in another file, and the same file by another name:
    // shared.
    for shared in ["services/billing/AGENTS.md", "services/linked/AGENTS.md"] {
        assert!(
            !not_shared.iter().any(|(_, p)| p == shared),
            "{shared}: {not_shared:?}"
        );
    }
    let payments = find(
        &tree,
        AgentWarningKind::NotShared,
        "services/payments/AGENTS.md",
    );
    assert_eq!(payments.agent, "claude-code");
    assert!(
        payments
            .message
            .starts_with("codex loads it; claude-code does not"),
        "{}",
        payments.message
    );
    assert_eq!(payments.dirs, [repo.root.join("services/payments")]);
    // Imported by the CLAUDE.md beside it: shared.
    assert!(
        !not_shared
            .iter()
            .any(|(_, p)| p == "services/orders/AGENTS.md"),
        "{not_shared:?}"
    );
    // The root CLAUDE.md reaches Claude Code only: Codex misses it, everywhere.
    let root = find(&tree, AgentWarningKind::NotShared, "CLAUDE.md");
    assert_eq!(root.agent, "codex");
    assert!(
        root.dirs.contains(&repo.root) && root.dirs.len() >= 3,
        "{:?}",
        root.dirs
    );
    // One agent alone shares with no one.
    let alone = repo.audit(&[Agent::Codex]);
    assert!(of_kind(&alone, AgentWarningKind::NotShared).is_empty());
}

#[test]
fn not_shared_says_why_the_other_agent_sends_nothing_of_it() {
    let repo = Repo::new();
    repo.write("AGENTS.md", "shared rules @nothing\n")
        .write("CLAUDE.md", "claude rules @AGENTS.md\n")
        .write("api/AGENTS.override.md", "override\n")
        .write("api/AGENTS.md", "api rules\n")
        .write("svc/x.md", "x\n")
        .write("only/AGENTS.md", "only\n")
        .write("notes/CLAUDE.md", "notes\n");
    let tree = repo.audit(&[Agent::Codex, Agent::ClaudeCode, Agent::Pi]);
    let messages =
        |rel: &str, agent: &str| messages(&tree, AgentWarningKind::NotShared, agent, rel);
    // pi takes AGENTS.md over CLAUDE.md: the file is there.
    let pi = messages("CLAUDE.md", "pi");
    assert!(
        pi.iter()
            .any(|m| m.ends_with("(pi reads AGENTS.md instead)")),
        "{pi:?}"
    );
    // Codex takes the override, where pi reads api/AGENTS.md.
    let codex = messages("api/AGENTS.md", "codex");
    assert_eq!(
        codex,
        ["pi loads it; codex does not when started in the same directory (codex reads api/AGENTS.override.md instead)"]
    );
    // Started in svc/, the root's import of AGENTS.md waits for approval.
    let outside = messages("AGENTS.md", "claude-code");
    assert!(
        outside.iter().any(|m| m.ends_with(
            "(its import of it lies outside the working directory, which claude-code follows only once the user approves external imports for the project: its .claude.json holds no such approval, and an interactive session asks once)"
        )),
        "{outside:?}"
    );
    // Where a CLAUDE.md loads, Claude Code reads no AGENTS.md: the file it
    // reads is named from the root, as in every message.
    assert_eq!(
        messages("only/AGENTS.md", "claude-code"),
        ["codex and pi load it; claude-code does not when started in the same directory (claude-code reads CLAUDE.md instead)"]
    );
    let api = messages("api/AGENTS.md", "claude-code");
    assert!(
        api.iter()
            .any(|m| m.ends_with("(claude-code reads CLAUDE.md instead)")),
        "{api:?}"
    );
    // Nothing of it in Codex's chain, nor from its directory: the old words.
    assert_eq!(
        messages("notes/CLAUDE.md", "codex"),
        ["claude-code and pi load it; codex does not when started in the same directory (no such file there, no import of it, no copy of its text)"]
    );
}

#[test]
fn not_shared_names_only_agents_that_load_the_file_in_every_directory_it_lists() {
    // pi reads `.claude/CLAUDE.md` only when started in `.claude/` (it is
    // that directory's CLAUDE.md); Claude Code reads it everywhere. Gemini
    // CLI reads neither: its warnings must not say "claude-code and pi" for
    // the directories where pi does not.
    let repo = Repo::new();
    repo.write(".claude/CLAUDE.md", "dot claude\n")
        .write("svc/x.md", "x\n");
    let tree = repo.audit(&[Agent::ClaudeCode, Agent::Gemini, Agent::Pi]);
    let gemini: Vec<_> = tree
        .warnings
        .iter()
        .filter(|w| w.kind == AgentWarningKind::NotShared && w.agent == "gemini")
        .filter(|w| w.path == repo.root.join(".claude/CLAUDE.md"))
        .collect();
    let both = gemini
        .iter()
        .find(|w| w.message.starts_with("claude-code and pi load it"))
        .expect("a warning for .claude/ itself");
    assert_eq!(both.dirs, [repo.root.join(".claude")], "{gemini:?}");
    let one = gemini
        .iter()
        .find(|w| w.message.starts_with("claude-code loads it"))
        .expect("a warning for the other directories");
    // `svc/` loads what the root does: one chain, started at the root.
    assert_eq!(one.dirs, std::slice::from_ref(&repo.root), "{gemini:?}");
}

#[test]
fn the_users_approval_of_external_imports_is_read_from_the_home() {
    // Issue 53's reproduction (checked against Claude Code by the
    // context-claude edge cases `import-outside-cwd-approved*`): approved for
    // the repository, `claude -p` started in svc/ sends the root CLAUDE.md's
    // @AGENTS.md; approved for another project, it does not.
    let repo = Repo::new();
    repo.write("CLAUDE.md", "root rules @AGENTS.md\n")
        .write("AGENTS.md", "shared rules\n")
        .write("svc/x.md", "x\n");
    let approve = |key: &Path| {
        let config = format!(
            "{{\"projects\": {{{:?}: {{\"hasClaudeMdExternalIncludesApproved\": true}}}}}}",
            key.to_str().unwrap()
        );
        write(&repo.home.join(".claude.json"), config);
    };
    let in_svc = |tree: &TreeAudit| {
        let chains = &tree.agents[0].chains;
        let chain = chains
            .iter()
            .find(|c| tree.dirs_of(c).any(|d| d == repo.root.join("svc")))
            .unwrap();
        let agents_md = repo.root.join("AGENTS.md");
        let entry = chain
            .context
            .files
            .iter()
            .find(|f| f.path == agents_md)
            .unwrap();
        agents::report::status(&entry.outcome)
    };
    let outside = |tree: &TreeAudit| {
        messages(
            tree,
            AgentWarningKind::UnresolvedImport,
            "claude-code",
            "AGENTS.md",
        )
    };

    let without = repo.audit(&[Agent::ClaudeCode]);
    assert_eq!(in_svc(&without), "outside");
    assert_eq!(outside(&without).len(), 1, "{:?}", without.warnings);

    approve(&repo.root.join("elsewhere"));
    let elsewhere = repo.audit(&[Agent::ClaudeCode]);
    assert_eq!(in_svc(&elsewhere), "outside");

    approve(&repo.root);
    let approved = repo.audit(&[Agent::ClaudeCode, Agent::Codex]);
    assert_eq!(in_svc(&approved), "loaded");
    assert!(outside(&approved).is_empty(), "{:?}", approved.warnings);
    // Codex's AGENTS.md is Claude Code's import now: shared.
    let not_shared = messages(
        &approved,
        AgentWarningKind::NotShared,
        "claude-code",
        "AGENTS.md",
    );
    assert!(not_shared.is_empty(), "{not_shared:?}");
}

/// With external imports approved for `services` alone, Claude Code's chain
/// there follows the root CLAUDE.md's import of `docs/a.md`, and the one in
/// `apps` does not: the audit of `repo` must say so.
fn approved_services_follow_the_import(repo: &Repo) {
    let config = format!(
        "{{\"projects\": {{{:?}: {{\"hasClaudeMdExternalIncludesApproved\": true}}}}}}",
        repo.root.join("services").to_str().unwrap()
    );
    write(&repo.home.join(".claude.json"), config);
    let tree = repo.audit(&[Agent::ClaudeCode]);
    let status_in = |dir: &str| {
        let dir = repo.root.join(dir);
        let chain = tree.agents[0]
            .chains
            .iter()
            .find(|c| tree.dirs_of(c).any(|d| d == dir))
            .unwrap();
        let entry = chain
            .context
            .files
            .iter()
            .find(|f| f.path == repo.root.join("docs/a.md"))
            .unwrap();
        agents::report::status(&entry.outcome)
    };
    assert_eq!(status_in("services"), "loaded");
    assert_eq!(status_in("apps"), "outside");
}

#[test]
fn a_nested_repository_has_its_own_approval() {
    // Approved for `services` (a repository of its own inside the tree),
    // Claude Code started there follows the root CLAUDE.md's import of
    // docs/a.md; started in `apps` (the tree's project, not approved) it
    // does not. The audit's chains must not take one directory's answer
    // for the other's.
    let repo = Repo::new();
    repo.write("CLAUDE.md", "root rules @docs/a.md\n")
        .write("docs/a.md", "imported\n")
        .write("apps/x.txt", "x\n")
        .write("services/x.txt", "x\n");
    fs::create_dir_all(repo.root.join("services/.git")).unwrap();
    approved_services_follow_the_import(&repo);
}

#[test]
fn outside_any_repository_each_directory_has_its_own_approval() {
    // Without `.git` anywhere, Claude Code files each start under its own
    // directory: approved for `services`, it follows the root CLAUDE.md's
    // import there and not in `apps` (checked against Claude Code in
    // tests/agents/context-claude.test.mjs).
    let repo = Repo::new();
    fs::remove_dir(repo.root.join(".git")).unwrap();
    repo.write("CLAUDE.md", "root rules @docs/a.md\n")
        .write("docs/a.md", "imported\n")
        .write("apps/x.txt", "x\n")
        .write("services/x.txt", "x\n");
    approved_services_follow_the_import(&repo);
}

#[test]
fn a_pattern_that_can_match_nothing_never_loads_its_rule() {
    // Checked against Claude Code (tests/agents/warnings.test.mjs): `[bad`
    // and `./src/*.ts` load the rule for no path read, `src/[xy].ts` is a
    // character class.
    let repo = Repo::new();
    repo.write(".claude/rules/bad.md", "---\npaths: [bad\n---\nB\n")
        .write(
            ".claude/rules/dot.md",
            "---\npaths: [\"./src/*.ts\"]\n---\nD\n",
        )
        .write(
            ".claude/rules/class.md",
            "---\npaths: [\"src/[xy].ts\"]\n---\nC\n",
        );
    let tree = repo.audit(&[Agent::ClaudeCode]);
    let dead = |rel: &str| messages(&tree, AgentWarningKind::DeadScope, "claude-code", rel);
    assert_eq!(
        dead(".claude/rules/bad.md"),
        ["`paths:` \"[bad\" can match no path: the rule never loads"]
    );
    assert_eq!(
        dead(".claude/rules/dot.md"),
        ["`paths:` \"./src/*.ts\" can match no path: the rule never loads"]
    );
    assert!(dead(".claude/rules/class.md")[0]
        .ends_with("loads only once the agent reads or writes a matching path"));
    let bad = messages(
        &tree,
        AgentWarningKind::BadFrontMatter,
        "claude-code",
        ".claude/rules/bad.md",
    );
    assert_eq!(bad, ["\"[bad\" never matches: Claude Code matches no path against a pattern whose [ is not closed"]);
}

#[test]
fn every_kind_has_a_stable_name_and_is_a_gate() {
    let names: Vec<&str> = AgentWarningKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "truncated",
            "shadowed",
            "dead_scope",
            "bad_front_matter",
            "unresolved_import",
            "import_too_deep",
            "import_cycle",
            "duplicate",
            "over_recommended",
            "not_shared",
            "hidden_text",
            "link_as_text",
            "stale_reference"
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    for name in names {
        let out = common::promptinclude(
            &[
                "audit",
                "--agents",
                "codex",
                "--fail-on",
                name,
                "--home",
                "/nonexistent",
                ".",
            ],
            dir.path(),
        );
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = common::promptinclude(&["audit", "--agents", "cursor", "."], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected all or some of"));
}

#[test]
fn a_relative_agent_directory_is_resolved_from_each_start() {
    // CODEX_HOME=../alt names another directory from each start, as it does
    // to Codex; from the root it names nothing, and Codex would not start
    // there: the audit says so as the agent's error, naming the variable.
    let repo = Repo::new();
    repo.write("AGENTS.md", "root\n")
        .write("sub/AGENTS.md", "sub\n");
    fs::create_dir_all(repo.root.join("alt")).unwrap();
    let relative = |name: &str| match name {
        "CODEX_HOME" => Some(OsString::from("../alt")),
        _ => env(name),
    };
    let setup = Setup {
        home: &repo.home,
        env: &relative,
        view: View::Trusted,
    };
    let tree = audit_tree(&[Agent::Codex], &repo.root, &setup);
    let error = tree.agents[0].error.as_deref().unwrap_or_default();
    assert!(
        error.contains("CODEX_HOME") && error.contains("../alt"),
        "{error:?}"
    );
    assert!(tree.agents[0].chains.is_empty());
    // From sub/ it names repo/alt, and there Codex starts.
    let start = Start {
        cwd: &repo.root.join("sub"),
        home: &repo.home,
        env: &relative,
    };
    let context = agents::context(Agent::Codex, &start).unwrap();
    assert!(context
        .files
        .iter()
        .any(|f| f.path.ends_with("sub/AGENTS.md")));
}

/// `audit --agents agent-zero` takes Agent Zero's context from the audit's
/// own scan when that scan is the one the host makes (no flags), and scans
/// again when it is not (a flag changes the audit's budget, not the
/// host's): either way the chain is what `context --agent agent-zero`
/// says, over random trees of rule files.
#[test]
fn agent_zeros_chain_is_its_context_with_or_without_the_audits_scan() {
    let seed = common::fresh_seed("PROMPTINCLUDE_AGENT_ZERO_AUDIT_SEED");
    let mut rng = Rng::new(seed);
    for case in 0..6 {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap().join("tree");
        common::random_tree(&mut rng, &root);
        let root_arg = root.to_string_lossy().into_owned();
        for flags in [&[][..], &["--max-total-tokens", "40"][..]] {
            let label = format!("seed {seed} case {case} flags {flags:?}");
            let mut args = vec!["audit", "--agents", "agent-zero", "--json"];
            args.extend(flags);
            args.push(&root_arg);
            let out = common::command(common::binary())
                .args(&args)
                .env_remove("PROMPTINCLUDE_CONFIG")
                .output()
                .unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            let record: serde_json::Value = text
                .lines()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .find(|r| r["type"] == "root")
                .unwrap_or_else(|| panic!("{label}: no root record"));
            let agent = &record["agents"]["agents"][0];
            let out = common::command(common::binary())
                .args([
                    "context",
                    "--agent",
                    "agent-zero",
                    "--json",
                    "--cwd",
                    &root_arg,
                ])
                .output()
                .unwrap();
            let context: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            match agent["chains"].as_array() {
                Some(chains) if !chains.is_empty() => {
                    let chain = &chains[0];
                    assert_eq!(chain["files"], context["files"], "{label}");
                    assert_eq!(chain["bytes"], context["raw_bytes"], "{label}");
                    assert_eq!(chain["tokens"], context["raw_tokens"], "{label}");
                    assert_eq!(chain["notes"], context["notes"], "{label}");
                }
                _ => assert!(
                    agent["error"].is_string() && context["files"].is_null(),
                    "{label}: {agent} / {context}"
                ),
            }
        }
    }
}

/// A file any agent sends is read for characters a reader does not see,
/// once, named by its first sender with every sender listed; a file none
/// sends, and legitimate joiners and selectors, are not reported.
#[test]
fn hidden_text_in_what_agents_send_names_every_sender() {
    let repo = Repo::new();
    repo.write(
        "AGENTS.md",
        "use tabs\u{200B} always\nand \u{2066}this\u{2069}\n",
    )
    .write(
        "CLAUDE.md",
        "family \u{1F468}\u{200D}\u{1F469} \u{2764}\u{FE0F}\n",
    )
    .write("notes/README.md", "not read \u{202E}\n");
    let tree = repo.audit(&[Agent::Codex, Agent::ClaudeCode, Agent::Pi]);
    let found = of_kind(&tree, AgentWarningKind::HiddenText);
    assert_eq!(
        found,
        [
            ("codex", "AGENTS.md".to_string()),
            ("codex", "AGENTS.md".to_string())
        ],
        "{:#?}",
        tree.warnings
    );
    let lines: Vec<Option<usize>> = tree
        .warnings
        .iter()
        .filter(|w| w.kind == AgentWarningKind::HiddenText)
        .map(|w| w.line)
        .collect();
    assert_eq!(lines, [Some(1), Some(2)]);
    let all = messages(&tree, AgentWarningKind::HiddenText, "codex", "AGENTS.md");
    assert!(
        all[0].starts_with("column 9: 1 zero-width character (U+200B)"),
        "{all:?}"
    );
    assert!(all[1].contains("2 bidirectional controls"), "{all:?}");
    // Claude Code reads CLAUDE.md, not AGENTS.md: codex and pi send it.
    assert!(
        all.iter().all(|m| m.ends_with("(sent by codex and pi)")),
        "{all:?}"
    );
}

/// Runs `audit --agents all` on `repo` with `extra` arguments.
fn audit_command(repo: &Repo, extra: &[&str]) -> std::process::Output {
    let mut command = common::command(common::binary());
    command
        .args(["audit", "--agents", "all", "--color", "never", "--home"])
        .arg(&repo.home)
        .args(extra)
        .arg(&repo.root)
        .env("HOME", &repo.home);
    command.output().unwrap()
}

/// The weighted lower median and the extremes of (value, weight) pairs.
fn spread(mut values: Vec<(u64, u64)>) -> (u64, u64, u64) {
    values.sort_unstable();
    let total: u64 = values.iter().map(|v| v.1).sum();
    let mut seen = 0;
    let median = values
        .iter()
        .find(|(_, w)| {
            seen += w;
            seen >= total.div_ceil(2)
        })
        .unwrap()
        .0;
    (values[0].0, median, values[values.len() - 1].0)
}

/// `n` and its noun.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What the summary must say of one tree, computed here from its JSON
/// record alone: the lines of its headlines, in order, then for each
/// finding its first line and what the lines under it must hold.
#[allow(clippy::type_complexity)]
fn summary_from_json(record: &serde_json::Value) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    use std::collections::{BTreeMap, BTreeSet};
    let tree = &record["agents"];
    let root = tree["root"].as_str().unwrap();
    let below = |p: &str| p.starts_with(&format!("{root}/"));
    let gone = ["unresolved", "too_deep", "repeated", "outside"];
    let agents = tree["agents"].as_array().unwrap();
    let files = |a: &serde_json::Value| -> Vec<serde_json::Value> {
        let chains = a["chains"].as_array().unwrap();
        chains
            .iter()
            .flat_map(|c| c["files"].as_array().unwrap().clone())
            .collect()
    };
    let mut context = BTreeSet::new();
    for a in agents.iter().filter(|a| a["agent"] != "agent-zero") {
        for f in files(a) {
            let (path, status) = (f["path"].as_str().unwrap(), f["status"].as_str().unwrap());
            if f["role"] != "global" && !gone.contains(&status) && below(path) {
                context.insert(path.to_string());
            }
        }
    }
    let mut lines = Vec::new();
    let dir_count = |c: &serde_json::Value| c["dir_count"].as_u64().unwrap();
    let directories: u64 = agents[0]["chains"]
        .as_array()
        .unwrap()
        .iter()
        .map(dir_count)
        .sum();
    lines.push(format!(
        ": {} and {} (",
        counted(directories as usize, "directory", "directories"),
        counted(context.len(), "context file", "context files")
    ));
    for a in agents {
        let chains = a["chains"].as_array().unwrap();
        let dirs: u64 = chains.iter().map(dir_count).sum();
        lines.push(format!("  {} ", a["agent"].as_str().unwrap()));
        lines.push(format!(
            ": {} over {}\n",
            counted(chains.len(), "chain", "chains"),
            counted(dirs as usize, "directory", "directories")
        ));
        let of = |key: &str| {
            spread(
                chains
                    .iter()
                    .map(|c| (c[key].as_u64().unwrap(), dir_count(c)))
                    .collect(),
            )
        };
        let (b, t) = (of("bytes"), of("tokens"));
        lines.push(if b.0 == b.2 && t.0 == t.2 {
            format!("    sends {} bytes, {} tokens\n", b.2, t.2)
        } else {
            format!(
                "    sends {} to {} bytes (median {}), {} to {} tokens (median {})\n",
                b.0, b.2, b.1, t.0, t.2, t.1
            )
        });
        if a["agent"] == "agent-zero" {
            continue;
        }
        let entries = files(a);
        let sent: BTreeSet<&str> = entries
            .iter()
            .filter(|f| ["loaded", "truncated"].contains(&f["status"].as_str().unwrap()))
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        let never: Vec<&String> = context
            .iter()
            .filter(|p| !sent.contains(p.as_str()))
            .collect();
        if never.is_empty() {
            lines.push("    reads every context file from some directory\n".to_string());
        } else {
            let mut why: BTreeMap<&str, usize> = BTreeMap::new();
            for p in &never {
                let first = entries.iter().find(|f| f["path"] == p.as_str());
                let word = first.map_or("never looked at", |f| f["status"].as_str().unwrap());
                *why.entry(word).or_default() += 1;
            }
            let mut why: Vec<(&str, usize)> = why.into_iter().collect();
            why.sort_by_key(|w| std::cmp::Reverse(w.1));
            let why: Vec<String> = why.iter().map(|(w, n)| format!("{n} {w}")).collect();
            lines.push(format!(
                "    never reads {} of the {} context files: {}\n",
                never.len(),
                context.len(),
                why.join(", ")
            ));
        }
    }
    let warnings = tree["warnings"].as_array().unwrap();
    let mut findings: BTreeMap<(&str, &str, &str), Vec<&serde_json::Value>> = BTreeMap::new();
    for w in warnings {
        let key = |k: &str| w[k].as_str().unwrap();
        findings
            .entry((key("kind"), key("agent"), key("cause")))
            .or_default()
            .push(w);
    }
    lines.push(if warnings.is_empty() {
        "  no agent warnings\n".to_string()
    } else {
        format!(
            "  {} in {} (",
            counted(warnings.len(), "agent warning", "agent warnings"),
            counted(findings.len(), "finding", "findings")
        )
    });
    let blocks = findings
        .iter()
        .map(|((kind, agent, cause), ws)| {
            let paths: BTreeSet<&str> = ws.iter().map(|w| w["path"].as_str().unwrap()).collect();
            let dirs: BTreeSet<&str> = ws
                .iter()
                .flat_map(|w| w["dirs"].as_array().unwrap())
                .map(|d| d.as_str().unwrap())
                .collect();
            let mut under = Vec::new();
            if paths.len() > 1 {
                under.push(format!(
                    "          {}: ",
                    counted(paths.len(), "file", "files")
                ));
            }
            under.push("          e.g. ".to_string());
            if !dirs.is_empty() {
                let n = counted(dirs.len(), "directory", "directories");
                under.push(format!("          started in {n}: "));
            }
            (format!(" {} {kind} {agent}: {cause}\n", ws.len()), under)
        })
        .collect();
    (lines, blocks)
}

#[test]
fn every_count_of_the_summary_is_the_jsons() {
    // The summary is read instead of the records: each of its numbers must
    // be what the JSON's records add up to (computed here from the JSON
    // alone), on random trees.
    let seed = common::fresh_seed("PROMPTINCLUDE_SUMMARY_SEED");
    let mut rng = Rng::new(seed);
    let mut findings = 0;
    for case in 0..8 {
        let repo = Repo::new();
        random_monorepo(&mut rng, &repo);
        let json = audit_command(&repo, &["--json"]);
        assert!(json.status.success(), "seed {seed} case {case}: {json:?}");
        let json = String::from_utf8(json.stdout).unwrap();
        let record: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
        let text = String::from_utf8(audit_command(&repo, &[]).stdout).unwrap();
        let fail = |what: &str| -> ! { panic!("seed {seed} case {case}: {what} in\n{text}") };
        let (lines, blocks) = summary_from_json(&record);
        let mut rest = text.as_str();
        for line in lines {
            // In order: each after the one before.
            match rest.find(&line) {
                Some(at) => rest = &rest[at + line.len()..],
                None => fail(&format!("{line:?} not found in order")),
            }
        }
        // Each finding the text lists is one the JSON calls for, with what
        // the JSON says under it; the first 40 are listed, the rest counted.
        let is_head = |l: &&str| {
            let indent = l.len() - l.trim_start().len();
            (4..10).contains(&indent) && l.trim_start().starts_with(|c: char| c.is_ascii_digit())
        };
        let listed: Vec<&str> = rest.lines().filter(is_head).collect();
        assert_eq!(
            listed.len(),
            blocks.len().min(40),
            "seed {seed} case {case}: finding lines in\n{text}"
        );
        let mut seen = std::collections::BTreeSet::new();
        for line in listed {
            let head = format!(" {}\n", line.trim_start());
            let Some((_, under)) = blocks.iter().find(|(h, _)| *h == head) else {
                fail(&format!("{head:?}, which the JSON does not call for,"));
            };
            if !seen.insert(head.clone()) {
                fail(&format!("{head:?} twice"));
            }
            let at = rest.find(line).unwrap();
            let after = &rest[at + line.len() + 1..];
            let block: Vec<&str> = after
                .lines()
                .take_while(|l| l.starts_with("          "))
                .collect();
            let block = block.join("\n") + "\n";
            for piece in under {
                if !block.contains(piece.as_str()) {
                    fail(&format!("{piece:?} not under {head:?}"));
                }
            }
            // No line the JSON does not call for.
            if block.lines().count() != under.len() {
                fail(&format!(
                    "{} lines under {head:?}, not {}",
                    block.lines().count(),
                    under.len()
                ));
            }
        }
        if blocks.len() > 40 {
            let more = format!("  and {} more findings (", blocks.len() - 40);
            assert!(
                rest.contains(&more),
                "seed {seed} case {case}: {more:?} in\n{text}"
            );
        }
        findings += blocks.len();
    }
    assert!(findings > 0, "seed {seed}: no tree had a warning");
}

/// The agents' part of `audit --agents all` on `repo`, its paths and the numbers
/// that depend on them (what is sent names the files by absolute path)
/// replaced, compared with the reviewed snapshot
/// `tests/snapshots/audit/NAME.snap`.
fn check_summary_snapshot(name: &str, repo: &Repo, extra: &[&str]) {
    let out = audit_command(repo, extra);
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    // The agents' part (the plain audit's budget counts the paths' tokens).
    let text = &text[text.find("agents in ").unwrap()..text.find("\nsummary: ").unwrap()];
    let sends = regex::Regex::new(r"(?m)^(    sends ).*$").unwrap();
    let base = repo.root.parent().unwrap().to_string_lossy().into_owned();
    let text = text
        .replace(&repo.root.to_string_lossy().into_owned(), "[ROOT]")
        .replace(&repo.home.to_string_lossy().into_owned(), "[HOME]")
        .replace(&base, "[BASE]");
    let text = sends.replace_all(&text, "${1}[..]");
    insta::with_settings!({
        snapshot_path => "snapshots/audit",
        prepend_module_to_snapshot => false,
        omit_expression => true,
    }, {
        insta::assert_snapshot!(name, format!("{text}<END>"));
    });
}

#[test]
fn the_summary_of_the_fixture_monorepo() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/agents");
    let repo = Repo::new();
    common::copy_tree(&fixtures.join("mono"), &repo.root);
    common::copy_tree(&fixtures.join("home"), &repo.home);
    check_summary_snapshot("fixture-mono", &repo, &[]);
}

#[test]
fn the_summary_of_a_generated_monorepo() {
    // Twelve projects of the random generator, from a fixed seed: a tree of
    // a hundred directories and hundreds of warnings, summed up in a page.
    let repo = Repo::new();
    let mut rng = Rng::new(20261207);
    for project in 0..12 {
        random_monorepo_at(
            &mut rng,
            &repo.root.join(format!("p{project:02}")),
            &repo.home,
        );
    }
    check_summary_snapshot("generated-mono", &repo, &[]);
}

#[test]
fn a_link_a_checkout_wrote_as_text_is_link_as_text() {
    // CLAUDE.md -> AGENTS.md, committed; a clone with core.symlinks=false
    // (as on Windows) writes CLAUDE.md as a 9-byte file holding the path,
    // which Claude Code then sends instead of the rules.
    let repo = Repo::new();
    fs::remove_dir_all(repo.root.join(".git")).unwrap();
    repo.write("AGENTS.md", "Use tabs.\n")
        .write("docs/AGENTS.md", "Docs rules.\n");
    symlink("AGENTS.md", repo.root.join("CLAUDE.md")).unwrap();
    symlink("../AGENTS.md", repo.root.join("docs/CLAUDE.md")).unwrap();
    // A one-line rule that names no file is not a link.
    repo.write("apps/CLAUDE.md", "Use tabs.");
    let git = |args: &[&str], cwd: &Path| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(cwd)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"], &repo.root);
    git(&["add", "-A"], &repo.root);
    git(&["commit", "-qm", "c"], &repo.root);
    let base = repo.root.parent().unwrap();
    git(
        &["clone", "-q", "-c", "core.symlinks=false", "repo", "clone"],
        base,
    );
    let clone = base.join("clone");
    assert_eq!(fs::read(clone.join("CLAUDE.md")).unwrap(), b"AGENTS.md");
    let links = |root: &Path| {
        let tree = audit_tree(
            &Agent::ALL,
            root,
            &Setup {
                home: &repo.home,
                env: &env,
                view: View::Trusted,
            },
        );
        let mut found: Vec<(String, String)> = tree
            .warnings
            .iter()
            .filter(|w| w.kind == AgentWarningKind::LinkAsText)
            .map(|w| {
                let rel = w.path.strip_prefix(root).unwrap();
                (rel.display().to_string(), w.message.clone())
            })
            .collect();
        found.sort();
        found
    };
    let found = links(&clone);
    let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["CLAUDE.md", "docs/CLAUDE.md"], "{found:?}");
    assert!(
        found[0].1.starts_with("its whole text is `AGENTS.md`"),
        "{found:?}"
    );
    assert!(
        found[1].1.starts_with("its whole text is `../AGENTS.md`"),
        "{found:?}"
    );
    assert!(found[0].1.contains("claude-code"), "{found:?}");
    // The repository itself, with its links, has none.
    assert_eq!(links(&repo.root), Vec::<(String, String)>::new());
}

#[test]
fn agents_at_a_revision_are_a_fresh_clones() {
    // `audit --agents --rev HEAD`: what a fresh clone's agents load. With
    // the work tree at HEAD it is the work tree's audit; untracked and
    // edited files change the work tree's and not the revision's.
    let seed = common::fresh_seed("PROMPTINCLUDE_AGENTS_REV_SEED");
    let mut rng = Rng::new(seed);
    let repo = Repo::new();
    fs::remove_dir_all(repo.root.join(".git")).unwrap();
    let names = [
        "AGENTS.md",
        "CLAUDE.md",
        "GEMINI.md",
        "CLAUDE.local.md",
        "AGENTS.override.md",
    ];
    for above in repo.root.ancestors().skip(1) {
        for name in names {
            assert!(
                !above.join(name).exists(),
                "{} above the test's tree",
                above.join(name).display()
            );
        }
    }
    random_monorepo(&mut rng, &repo);
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(&repo.root)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "c"]);
    git(&["clean", "-qfdx"]);
    let agents = |extra: &[&str]| {
        let out = audit_command(&repo, &[&["--json"], extra].concat());
        assert_eq!(out.status.code(), Some(0), "seed {seed}: {out:?}");
        let line = String::from_utf8(out.stdout).unwrap();
        let record: serde_json::Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
        record["agents"].clone()
    };
    let at_head = agents(&["--rev", "HEAD"]);
    assert_eq!(
        agents(&[]),
        at_head,
        "seed {seed}: a clean work tree is its HEAD"
    );
    // A developer's own files and edits: the work tree's agents see them,
    // a fresh clone's do not.
    repo.write("zz/CLAUDE.local.md", "MY OWN NOTES\n")
        .write("zz/AGENTS.override.md", "LOCAL OVERRIDE\n")
        .write("apps/AGENTS.md", "EDITED, NOT COMMITTED\n");
    let worktree = agents(&[]);
    assert_ne!(worktree, at_head, "seed {seed}");
    assert_eq!(agents(&["--rev", "HEAD"]), at_head, "seed {seed}");
    let text = worktree.to_string();
    assert!(
        text.contains("/repo/zz/AGENTS.override.md\""),
        "seed {seed}"
    );
    assert!(text.contains("/repo/zz/CLAUDE.local.md\""), "seed {seed}");
    assert!(!at_head.to_string().contains("/repo/zz"), "seed {seed}");
}

#[test]
fn the_trusted_view_is_the_default_and_first_open_is_asked_for() {
    // Gemini CLI loads no project file in a folder not yet trusted: the
    // audit shows the project's developers' view (trusted) unless asked
    // for a first open, and says which.
    let repo = Repo::new();
    repo.write("GEMINI.md", "gemini rules\n");
    let gemini = |extra: &[&str]| {
        let mut command = common::command(common::binary());
        command
            .args(["audit", "--agents", "gemini", "--json", "--home"])
            .arg(&repo.home)
            .args(extra)
            .arg(&repo.root)
            .env_remove("GEMINI_CLI_TRUST_WORKSPACE")
            .env("HOME", &repo.home);
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let record: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let tree = record["agents"].clone();
        let chain = tree["agents"][0]["chains"][0].clone();
        (tree["view"].as_str().unwrap().to_string(), chain)
    };
    let (view, chain) = gemini(&[]);
    assert_eq!(view, "trusted");
    assert_eq!(chain["files"][0]["status"], "loaded", "{chain}");
    assert_eq!(chain["notes"], serde_json::json!([]));
    let (view, chain) = gemini(&["--view", "first-open"]);
    assert_eq!(view, "first-open");
    assert_eq!(chain["files"], serde_json::json!([]), "{chain}");
    assert!(
        chain["notes"][0].as_str().unwrap().contains("not trusted"),
        "{chain}"
    );
    // The text report says which view it shows.
    let mut command = common::command(common::binary());
    command
        .args([
            "audit",
            "--agents",
            "gemini",
            "--view",
            "first-open",
            "--home",
        ])
        .arg(&repo.home)
        .arg(&repo.root)
        .env_remove("GEMINI_CLI_TRUST_WORKSPACE");
    let text = String::from_utf8(command.output().unwrap().stdout).unwrap();
    assert!(
        text.contains("  view: a folder opened for the first time"),
        "{text}"
    );
}

#[test]
fn stale_references_are_paths_that_are_nowhere() {
    // What a context file certainly names as a path, and is not in the
    // repository from its directory, any directory above it, or as the end
    // of any path of the tree.
    let repo = Repo::new();
    repo.write(
        "services/api/AGENTS.md",
        "# API\n\
         See [setup](docs/setup.md), [gone](docs/gone.md#x), [up](../../README.md), [out](../../../x.md).\n\
         Edit `src/handler.rs` and `src/missing.rs`; not `text/plain`, `owner/repo`, `console.log`.\n\
         Each crate has `lib/util.rs`. Run `cargo test`; open <https://example.com/a.md>.\n\
         ```\n`src/in_fence.rs` [f](f.md)\n```\n\
         From the service root: `Cargo.toml`; from the repository: `services/api/Cargo.toml`.\n",
    )
    .write("services/api/docs/setup.md", "setup\n")
    .write("services/api/src/handler.rs", "// h\n")
    .write("services/api/Cargo.toml", "[package]\n")
    .write("crates/core/lib/util.rs", "// u\n")
    .write("README.md", "readme\n");
    let tree = repo.audit(&[Agent::Codex, Agent::ClaudeCode]);
    let mut stale: Vec<(usize, String)> = tree
        .warnings
        .iter()
        .filter(|w| w.kind == AgentWarningKind::StaleReference)
        .map(|w| {
            (
                w.line.unwrap(),
                w.message.split(',').next().unwrap().to_string(),
            )
        })
        .collect();
    stale.sort();
    assert_eq!(
        stale,
        [
            (2, "links to `docs/gone.md`".to_string()),
            (3, "names `src/missing.rs`".to_string()),
        ],
        "{:#?}",
        tree.warnings
    );
    let w = find(
        &tree,
        AgentWarningKind::StaleReference,
        "services/api/AGENTS.md",
    );
    assert_eq!(w.agent, "codex", "the first agent that sends it");
    assert!(
        w.message.ends_with("(sent by codex and claude-code)"),
        "{}",
        w.message
    );
}
