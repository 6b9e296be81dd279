// Benchmarks for `promptinclude_tokenize`: token counting on prose, code,
// CJK (bpe-openai alone, the start-up engine, the loaded engine), a 1 MB
// mixed text (single-threaded vs split-parallel), 100 KB
// pathological runs of one character class, and the zero-load fast path.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use promptinclude_tokenize::{count_bpe, count_fast, count_hybrid, count_large};

const PROSE: &str = "Always use tabs for indentation. Don't commit secrets; it's 2024 and \
    we've learned that the hard way. When in doubt, ask the user before deleting files, \
    and prefer small, reviewable changes over sweeping rewrites.\n\n";
const CODE: &str = "fn main() {\n    let xs: Vec<u32> = (0..100).map(|x| x * 2).collect();\n    \
    for (i, x) in xs.iter().enumerate() {\n        println!(\"{i}: {x:>4}\");\n    }\n}\n";
const CJK: &str = "漢字かな交じり文は、日本語の標準的な表記法です。中文字符和한국어も混在する。\n";

fn repeat_to(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len() + 1)
}

fn texts(c: &mut Criterion) {
    let mut g = c.benchmark_group("count_64k");
    for (name, unit) in [("prose", PROSE), ("code", CODE), ("cjk", CJK)] {
        let text = repeat_to(unit, 64 * 1024);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::new("bpe", name), &text, |b, t| {
            b.iter(|| count_bpe(black_box(t)))
        });
        g.bench_with_input(BenchmarkId::new("fast", name), &text, |b, t| {
            b.iter(|| count_fast(black_box(t)))
        });
        g.bench_with_input(BenchmarkId::new("hybrid", name), &text, |b, t| {
            b.iter(|| count_hybrid(black_box(t)))
        });
    }
    g.finish();
}

fn megabyte(c: &mut Criterion) {
    let mut text = String::new();
    let units = [PROSE, CODE, CJK, "- item 1234567\r\n", "😀👍🏽 emoji\n"];
    let mut i = 0;
    while text.len() < 1 << 20 {
        text.push_str(units[i % units.len()]);
        i = (i * 7 + 3) % 1009;
    }
    let mut g = c.benchmark_group("count_1mb_mixed");
    g.sample_size(20);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("single", |b| b.iter(|| count_bpe(black_box(&text))));
    g.bench_function("single_hybrid", |b| {
        b.iter(|| count_hybrid(black_box(&text)))
    });
    g.bench_function("parallel", |b| b.iter(|| count_large(black_box(&text))));
    g.finish();
}

fn pathological(c: &mut Criterion) {
    let mut g = c.benchmark_group("run_100k");
    g.sample_size(20);
    for (name, unit) in [
        ("spaces", " "),
        ("newlines", "\n"),
        ("letter", "a"),
        ("cjk", "漢"),
        ("punct", "!"),
        ("emoji", "😀"),
        ("digits", "7"),
    ] {
        let text = repeat_to(unit, 100 * 1024);
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), &text, |b, t| {
            b.iter(|| count_large(black_box(t)))
        });
    }
    g.finish();
}

/// W4's "linear in size": the same runs at 25 KB to 400 KB. Equal
/// throughput across sizes is linear time (the reference's tokenizer slows
/// down quadratically here).
fn run_scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("run_scaling");
    g.sample_size(20);
    for (name, unit) in [("spaces", " "), ("letter", "a"), ("punct", "!")] {
        for kib in [25, 100, 400] {
            let text = repeat_to(unit, kib * 1024);
            g.throughput(Throughput::Bytes(text.len() as u64));
            g.bench_with_input(BenchmarkId::new(name, format!("{kib}k")), &text, |b, t| {
                b.iter(|| count_large(black_box(t)))
            });
        }
    }
    g.finish();
}

fn small(c: &mut Criterion) {
    let path = "/home/user/projects/example/.a0/rules/style.promptinclude.md";
    let mut g = c.benchmark_group("small");
    g.bench_function("path_fast", |b| b.iter(|| count_fast(black_box(path))));
    g.bench_function("path_bpe", |b| b.iter(|| count_bpe(black_box(path))));
    g.bench_function("prose_fast", |b| b.iter(|| count_fast(black_box(PROSE))));
    g.bench_function("prose_bpe", |b| b.iter(|| count_bpe(black_box(PROSE))));
    g.finish();
}

criterion_group!(benches, texts, megabyte, pathological, run_scaling, small);
criterion_main!(benches);
