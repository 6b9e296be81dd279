// Benchmarks for `promptinclude_tokenize`: token counting on prose, code,
// CJK (bpe-openai alone, the start-up engine, the loaded engine), a 1 MB
// mixed text (single-threaded vs split-parallel), 100 KB
// pathological runs of one character class, the zero-load fast path, and
// `Memo` on texts that repeat the same files inside different framings.

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use promptinclude_tokenize::{count, count_bpe, count_fast, count_hybrid, count_large, Memo};
use rayon::prelude::*;

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

/// xorshift64*, for the generated markdown.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n as u64) as usize
    }
}

/// About `bytes` of rule-file markdown: headings, paragraphs, bullet lists
/// and indented code, from a vocabulary of 2,000 made-up words (a few
/// frequent, most rare).
fn markdown(rng: &mut Rng, bytes: usize) -> String {
    let vocab: Vec<String> = (0..2000)
        .map(|i| {
            let len = 2 + i % 9;
            (0..len)
                .map(|j| char::from(b'a' + ((i * 7 + j * 13 + i / 26) % 26) as u8))
                .collect()
        })
        .collect();
    let word = |rng: &mut Rng| {
        let rare = rng.below(vocab.len());
        let w = &vocab[rng.below(1 + rare)];
        match rng.below(12) {
            0 => format!("{w},"),
            1 => format!("`{w}`"),
            2 => format!("{w}'s"),
            3 => format!("{}", rng.below(10_000)),
            _ => w.clone(),
        }
    };
    let mut s = String::new();
    while s.len() < bytes {
        match rng.below(6) {
            0 => s.push_str(&format!("\n## {} {}\n\n", word(rng), word(rng))),
            1 => {
                s.push_str("```rust\n");
                for _ in 0..2 + rng.below(6) {
                    s.push_str(&"    ".repeat(rng.below(3)));
                    s.push_str(&format!(
                        "let {} = {}({});\n",
                        word(rng),
                        word(rng),
                        word(rng)
                    ));
                }
                s.push_str("```\n");
            }
            2 | 3 => {
                for _ in 0..2 + rng.below(5) {
                    s.push_str("- ");
                    for _ in 0..3 + rng.below(12) {
                        s.push_str(&word(rng));
                        s.push(' ');
                    }
                    s.push_str(".\n");
                }
            }
            _ => {
                for _ in 0..10 + rng.below(60) {
                    s.push_str(&word(rng));
                    s.push(' ');
                }
                s.push_str(".\n\n");
            }
        }
    }
    s
}

/// 50 chains of `n` files of `file_bytes` each: a 200-byte header naming
/// the chain's directory, then each file after a line naming its path
/// there. Chain `i` holds files `i..i + n` of a pool of `50 + n`, so
/// neighbours share all files but one.
fn chains(n: usize, file_bytes: usize) -> Vec<String> {
    let mut rng = Rng(0x5eed);
    let files: Vec<String> = (0..50 + n)
        .map(|_| markdown(&mut rng, file_bytes))
        .collect();
    (0..50)
        .map(|i| {
            let mut header = format!("# Instructions for /home/user/projects/repo/dir{i}\n\n");
            while header.len() < 199 {
                header.push_str("Follow these rules. ");
            }
            header.truncate(199);
            header.push('\n');
            let mut t = header;
            for (j, f) in files[i..i + n].iter().enumerate() {
                t.push_str(&format!(
                    "\nContents of /home/user/projects/repo/dir{i}/rules/{j}.md:\n\n"
                ));
                t.push_str(f);
            }
            t
        })
        .collect()
}

/// Counting 50 chains (10 MB) with `count` and with one fresh `Memo` per
/// pass, on one thread and on the rayon pool: chains of ten 20 KB files,
/// and of a hundred 2 KB files (more places where framing meets a file).
fn memo(c: &mut Criterion) {
    for (name, n, file_bytes) in [
        ("chains_50x10x20k", 10, 20 * 1024),
        ("chains_50x100x2k", 100, 2 * 1024),
    ] {
        let texts = chains(n, file_bytes);
        let bytes: usize = texts.iter().map(String::len).sum();
        let expected: usize = texts.iter().map(|t| count(t)).sum();
        let mut g = c.benchmark_group(name);
        g.sample_size(10);
        g.throughput(Throughput::Bytes(bytes as u64));
        g.bench_function("count", |b| {
            b.iter(|| texts.iter().map(|t| count(black_box(t))).sum::<usize>())
        });
        g.bench_function("memo", |b| {
            b.iter(|| {
                let memo = Memo::new();
                let n: usize = texts.iter().map(|t| memo.count(black_box(t))).sum();
                assert_eq!(n, expected);
                n
            })
        });
        g.bench_function("count_par", |b| {
            b.iter(|| texts.par_iter().map(|t| count(black_box(t))).sum::<usize>())
        });
        g.bench_function("memo_par", |b| {
            b.iter(|| {
                let memo = Memo::new();
                let n: usize = texts.par_iter().map(|t| memo.count(black_box(t))).sum();
                assert_eq!(n, expected);
                n
            })
        });
        g.finish();
    }
}

criterion_group!(
    benches,
    texts,
    megabyte,
    pathological,
    run_scaling,
    small,
    memo
);
criterion_main!(benches);
