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

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = walk, patterns, decode_bench, budget_and_render, whole_scan
}
criterion_main!(benches);
