//! Criterion benchmarks of each pipeline stage on its own, and of the whole
//! scan, on deterministic inputs (benches/support/workload.rs; no network).
//!
//! `cargo bench --bench pipeline`. The side-by-side comparison with the
//! reference is `scripts/bench-vs-reference`.

#[path = "support/workload.rs"]
mod workload;

#[path = "support/floor.rs"]
mod floor;

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use promptinclude::budget::allocate;
use promptinclude::discover::gitwildmatch::IgnoreSpec;
use promptinclude::discover::{walk::discover, Candidate, Matchers};
use promptinclude::read::{decode, DecodedText, ReadOutcome};
use promptinclude::{render, Config, Scanner};

/// A mid-size repository (~2k files), generated once per process.
fn repo() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        workload::w2(dir.path(), 1);
        dir
    })
    .path()
}

fn walk(c: &mut Criterion) {
    let root = repo().join("repo000");
    let matchers = Matchers::new(&Config::default()).unwrap();
    let bytes = root.as_os_str().as_encoded_bytes().to_vec();
    c.bench_function("walk/repo-2k-files", |b| {
        b.iter(|| discover(black_box(&bytes), &matchers))
    });
    // The same directories with only openat + getdents64 + close each.
    let roots = [bytes.clone()];
    c.bench_function("walk/repo-2k-files-syscall-floor", |b| {
        b.iter(|| floor::walk_floor(black_box(&roots)))
    });
}

fn patterns(c: &mut Criterion) {
    let spec = IgnoreSpec::from_gitignore_text(&Config::default().gitignore)
        .unwrap()
        .unwrap();
    let paths: Vec<String> = (0..1000)
        .map(|i| {
            format!(
                "packages/pkg{}/src/components/sub{}/node_modules{}",
                i % 7,
                i % 13,
                i % 2
            )
        })
        .collect();
    let mut group = c.benchmark_group("patterns");
    group.throughput(Throughput::Elements(paths.len() as u64));
    group.bench_function("default-spec/dir-check", |b| {
        b.iter(|| paths.iter().filter(|p| spec.is_dir_ignored(p)).count())
    });
    // What most directories of a tree look like: no ignored name anywhere.
    let source: Vec<String> = (0..1000)
        .map(|i| {
            format!(
                "services{}/core{}/utils{}/api{}",
                i % 4,
                i % 3,
                i % 5,
                i % 7
            )
        })
        .collect();
    group.bench_function("default-spec/dir-check-source", |b| {
        b.iter(|| source.iter().filter(|p| spec.is_dir_ignored(p)).count())
    });
    group.finish();
}

fn decode_bench(c: &mut Criterion) {
    let mut text = workload::mixed_text(5, 1 << 20).into_bytes();
    for i in (0..text.len()).step_by(4099) {
        text[i] = b'\r';
    }
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("1MiB-crlf-utf8", |b| {
        b.iter_batched(|| text.clone(), decode, BatchSize::LargeInput)
    });
    group.finish();
}

fn budget_and_render(c: &mut Criterion) {
    let config = Config::default();
    let candidates: Vec<Candidate> = (0..60)
        .map(|i| Candidate::new(format!("/work/repo/rules/r{i:02}.promptinclude.md").into_bytes()))
        .collect();
    let texts: Vec<String> = (0..60)
        .map(|i| workload::mixed_text(i, 400 + 300 * (i as usize % 7)))
        .collect();
    let read = |c: &Candidate| {
        let i = candidates.iter().position(|x| x == c).unwrap();
        ReadOutcome::Text(DecodedText {
            text: texts[i].clone(),
            replaced: 0,
        })
    };
    c.bench_function("budget/60-files-in-memory", |b| {
        b.iter(|| allocate("r".into(), black_box(&candidates), &config, read))
    });
    let result = allocate("r".into(), &candidates, &config, read)
        .expect("default limits never raise")
        .result;
    c.bench_function("render/section", |b| {
        b.iter(|| render(black_box(&result), "*.promptinclude.md"))
    });
}

fn whole_scan(c: &mut Criterion) {
    let scanner = Scanner::new(Config::default()).unwrap();
    let root = repo().join("repo000");
    c.bench_function("scan/repo-2k-files", |b| {
        b.iter(|| scanner.scan(black_box(&root)))
    });
}

/// `repo000` committed twice (the second commit edits its rule files) in
/// a work tree, and a packed bare clone of it: `(work tree, bare clone)`.
#[cfg(feature = "git")]
fn git_repo() -> &'static (std::path::PathBuf, std::path::PathBuf) {
    static REPO: std::sync::OnceLock<(std::path::PathBuf, std::path::PathBuf)> =
        std::sync::OnceLock::new();
    REPO.get_or_init(|| {
        let work = repo().join("repo000");
        let git = |dir: &Path, args: &[&str]| {
            let status = std::process::Command::new("git")
                .current_dir(dir)
                .args(["-c", "user.name=b", "-c", "user.email=b@example.com"])
                .args(args)
                .status()
                .expect("git runs");
            assert!(status.success(), "git {args:?}");
        };
        git(&work, &["init", "-q"]);
        git(&work, &["add", "-A", "-f", "."]);
        git(&work, &["commit", "-q", "-m", "one"]);
        let scanner = Scanner::new(Config::default()).unwrap();
        for file in scanner.scan(&work).unwrap().files {
            std::fs::write(&file.path, format!("{}\nOne more rule.\n", file.content)).unwrap();
        }
        git(&work, &["commit", "-q", "-a", "-m", "two"]);
        let bare = repo().join("repo000.git");
        git(repo(), &["clone", "-q", "--bare", "repo000", "repo000.git"]);
        // Packed, as a server's bare mirror is.
        git(&bare, &["repack", "-a", "-d", "-q"]);
        (work, bare)
    })
}

/// `--rev` against the same files on disk, and `diff` of two revisions
/// against one revision scan (issue #13: rev ≤ 1.0× checkout, diff ≤ 2×).
#[cfg(feature = "git")]
fn git_revisions(c: &mut Criterion) {
    use promptinclude::diff::PromptDiff;
    let (work, bare) = git_repo();
    let scanner = Scanner::new(Config::default()).unwrap();
    let mut group = c.benchmark_group("git");
    group.bench_function("scan-rev-HEAD/repo-2k-files", |b| {
        b.iter(|| scanner.scan_rev(black_box(bare), "HEAD").unwrap())
    });
    group.bench_function("scan-checkout/repo-2k-files", |b| {
        b.iter(|| scanner.scan_detailed(black_box(work)).unwrap())
    });
    group.bench_function("diff-HEAD~1-HEAD/repo-2k-files", |b| {
        b.iter(|| {
            let (before, after) = rayon::join(
                || scanner.scan_rev(bare, "HEAD~1").unwrap(),
                || scanner.scan_rev(bare, "HEAD").unwrap(),
            );
            PromptDiff::between(&before, &after, scanner.config())
        })
    });
    group.finish();
}

#[cfg(not(feature = "git"))]
fn git_revisions(_: &mut Criterion) {}

/// W5's seven repositories with every agent's rule files, and an empty
/// home for the agents, generated once per process.
fn agent_repos() -> &'static (tempfile::TempDir, Vec<std::path::PathBuf>) {
    static DIR: std::sync::OnceLock<(tempfile::TempDir, Vec<std::path::PathBuf>)> =
        std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let roots = workload::w5(&dir.path().join("repos"));
        std::fs::create_dir(dir.path().join("home")).unwrap();
        (dir, roots)
    })
}

/// `audit --agents all` against plain `audit` over the same roots (issue
/// 24's bound: at most 1.5 times as long).
fn agents_audit(c: &mut Criterion) {
    use promptinclude::agents::Agent;
    use promptinclude::audit::agents::{audit_tree, Setup};
    use promptinclude::config::LoadNotes;
    use promptinclude::project::ConfigSource;

    let (dir, roots) = agent_repos();
    let scanner = Scanner::new(Config::default()).unwrap();
    let home = dir.path().join("home");
    let env = |_: &str| None;
    let setup = Setup {
        home: &home,
        env: &env,
        view: promptinclude::audit::agents::View::Trusted,
    };
    let plain = || {
        for root in roots {
            let audit = promptinclude::audit_root(
                &scanner,
                root,
                &ConfigSource::Default,
                &LoadNotes::default(),
            );
            black_box(audit.unwrap());
        }
    };
    let mut group = c.benchmark_group("audit/w5-7-repos");
    group.bench_function("plain", |b| b.iter(plain));
    group.bench_function("agents-all", |b| {
        b.iter(|| {
            plain();
            for root in roots {
                black_box(audit_tree(&Agent::ALL, root, &setup));
            }
        })
    });
    group.finish();
}

/// The live index (issue #26) against a fresh scan of the same 2k-file
/// repository: unchanged (target ≥100×) and after one rule file changed
/// (≥50×). The 200-root comparison is `scripts/bench-vs-reference --only
/// live` (examples/live_index.rs).
fn live_index(c: &mut Criterion) {
    use promptinclude::index::Index;
    let dir = tempfile::tempdir().unwrap();
    workload::w2(dir.path(), 1);
    let root = dir.path().join("repo000");
    let config = Config::default();
    let scanner = Scanner::new(config.clone()).unwrap();
    let mut index = Index::open(&root, config).unwrap();
    let first = index.scan().unwrap();
    let rule = first.files[0].path.clone();
    let mut group = c.benchmark_group("index/repo-2k-files");
    group.bench_function("fresh-scan", |b| b.iter(|| scanner.scan(black_box(&root))));
    group.bench_function("unchanged", |b| b.iter(|| black_box(index.scan().unwrap())));
    let mut n = 0u64;
    group.bench_function("one-rule-file-changed", |b| {
        b.iter_batched(
            || {
                n += 1;
                std::fs::write(&rule, format!("Rule revision {n}.\n")).unwrap();
            },
            |()| black_box(index.scan().unwrap()),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = walk, patterns, decode_bench, budget_and_render, whole_scan, git_revisions, agents_audit, live_index
}
criterion_main!(benches);
