//! The live index on many roots against fresh scans of the same roots
//! (issue #26's speed targets), with its memory, from one run:
//!
//!     live_index [--runs N] --roots-from FILE
//!
//! Prints, as a Markdown table: a fresh `Batch` scan of every root (what
//! `promptinclude scan` does), the index's first scan (which builds it),
//! an unchanged re-scan, and a re-scan after one rule file changed, each the
//! median of N runs, with the ratios; and the memory the index keeps (the
//! process's resident size after it is built, less before, per 100,000
//! files of the workload). Every index answer is checked against a fresh
//! scan of the same moment; a difference stops the run.

#[path = "support/timing.rs"]
mod timing;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use timing::{median, timed};

use promptinclude::index::{BatchIndex, IndexOptions};
use promptinclude::{Batch, Resolver, ScanResult};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 9;
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--runs" => {
                runs = args[i + 1].parse().expect("--runs N");
                i += 1;
            }
            "--roots-from" => {
                let list = std::fs::read_to_string(&args[i + 1]).expect("the roots file");
                roots.extend(list.split_whitespace().map(PathBuf::from));
                i += 1;
            }
            root => roots.push(PathBuf::from(root)),
        }
        i += 1;
    }
    assert!(
        !roots.is_empty(),
        "usage: live_index [--runs N] --roots-from FILE"
    );
    let files: usize = roots.iter().map(|r| count_files(r)).sum();
    let batch = Arc::new(Batch::plan(&roots, &Resolver::default()).expect("a valid config"));
    let fresh = || {
        let mut out: Vec<ScanResult> = Vec::new();
        batch.scan(|_, _, r| {
            out.push(r.expect("every root scans").into_result());
            true
        });
        out
    };
    let fresh_times = timed(runs, || drop(fresh()));

    let before = resident();
    let mut index = BatchIndex::new(Arc::clone(&batch), IndexOptions::default());
    let started = Instant::now();
    let built = live(&mut index);
    let build_time = started.elapsed();
    let kept = resident().saturating_sub(before);
    assert!(
        built == fresh(),
        "the index's first scan differs from a fresh scan"
    );

    let unchanged_times = timed(runs, || drop(live(&mut index)));
    assert!(live(&mut index) == fresh(), "an unchanged re-scan differs");
    let unchanged_stats = index.stats().clone();
    assert_eq!(unchanged_stats.last_dirs_listed, 0);

    // One rule file changed before each timed scan.
    let rule = built
        .iter()
        .find_map(|r| r.files.first())
        .map(|f| PathBuf::from(&f.path))
        .expect("a rule file in the workload");
    let original = std::fs::read(&rule).unwrap();
    let mut changed_times = Vec::new();
    for n in 0..runs {
        std::fs::write(&rule, format!("Rule revision {n}.\n")).unwrap();
        let started = Instant::now();
        let answer = live(&mut index);
        changed_times.push(started.elapsed());
        assert!(answer == fresh(), "a re-scan after a change differs");
        assert_eq!(index.stats().last_files_read, 1);
    }
    std::fs::write(&rule, original).unwrap();
    let stats = index.stats();

    let (f, u, c) = (
        median(&fresh_times),
        median(&unchanged_times),
        median(&changed_times),
    );
    println!(
        "{} roots, {files} files, {} directories watched ({} watches with rule files), median of {runs}:",
        roots.len(),
        stats.kept_dirs,
        stats.watches
    );
    println!();
    println!("| | wall | fresh scan over it | target |");
    println!("|---|---|---|---|");
    println!("| fresh scan (`Batch::scan`) | {} | 1× | |", ms(f));
    println!(
        "| index, first scan (builds it) | {} | {:.2}× | |",
        ms(build_time),
        f.as_secs_f64() / build_time.as_secs_f64()
    );
    let ratio_u = f.as_secs_f64() / u.as_secs_f64();
    let ratio_c = f.as_secs_f64() / c.as_secs_f64();
    println!(
        "| index, unchanged | {} | **{ratio_u:.0}×** | ≥100× {} |",
        ms(u),
        if ratio_u >= 100.0 { "✓" } else { "✗" }
    );
    println!(
        "| index, one rule file changed | {} | **{ratio_c:.0}×** | ≥50× {} |",
        ms(c),
        if ratio_c >= 50.0 { "✓" } else { "✗" }
    );
    let per_100k = kept as f64 / (1 << 20) as f64 * 100_000.0 / files as f64;
    println!();
    println!(
        "Memory kept by the index: {:.1} MiB resident for {files} files = **{per_100k:.1} MiB per 100k files** (target ≤50 {}), plus the kernel's inotify watches ({} of them, about 1 KiB each, not counted against the process).",
        kept as f64 / (1 << 20) as f64,
        if per_100k <= 50.0 { "✓" } else { "✗" },
        stats.watches
    );
}

fn live(index: &mut BatchIndex) -> Vec<ScanResult> {
    index
        .scan()
        .into_iter()
        .map(|r| r.expect("every root scans").into_result())
        .collect()
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// The process's resident bytes (`VmRSS` in `/proc/self/status`).
fn resident() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    kib * 1024
}

fn count_files(root: &Path) -> usize {
    let mut dirs = vec![root.to_path_buf()];
    let mut files = 0;
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(entry.path()),
                Ok(_) => files += 1,
                Err(_) => {}
            }
        }
    }
    files
}
