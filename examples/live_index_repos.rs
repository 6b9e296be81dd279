//! The live index on real repositories, which hold symbolic links (issue
//! #57's targets), from one run:
//!
//!     live_index_repos [--runs N] [--config JSON] [--rule FILE] ROOT...
//!
//! For each root, as a Markdown table row: its symbolic links, a fresh scan
//! (`promptinclude::scan`), an unchanged re-scan of an `Index`, and a re-scan
//! after the rule file `--rule` (relative to the root; it must exist)
//! changed, each the median of N runs back to back (51 for fresh scans),
//! with the ratios, and what the index looks at on every scan. Answers are
//! checked against a fresh scan of the same moment (every fourth changed
//! re-scan's, so that the others run back to back as the fresh scans do); a
//! difference stops the run.

#[path = "support/timing.rs"]
mod timing;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use timing::{median, timed};

use promptinclude::config::Format;
use promptinclude::index::Index;
use promptinclude::{scan, Config};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 201;
    let mut config = Config::default();
    let mut rule = PathBuf::from("bench.promptinclude.md");
    let mut roots: Vec<PathBuf> = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let value = || args.get(i + 1).expect("a value after the option").clone();
        match args[i].as_str() {
            "--runs" => runs = value().parse().expect("--runs N"),
            "--config" => {
                config = Config::from_text(&value(), Format::Json, &Config::default())
                    .expect("a valid --config")
            }
            "--rule" => rule = PathBuf::from(value()),
            root => {
                roots.push(PathBuf::from(root));
                i += 1;
                continue;
            }
        }
        i += 2;
    }
    assert!(
        !roots.is_empty(),
        "usage: live_index_repos [--runs N] [--config JSON] [--rule FILE] ROOT..."
    );
    println!("| repository | links | files | fresh scan | unchanged re-scan | over fresh | one rule file changed | over fresh | links `stat`ed per scan | listed every scan |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for root in &roots {
        row(root, &config, &root.join(&rule), runs);
    }
}

fn row(root: &Path, config: &Config, rule: &Path, runs: usize) {
    let (files, links) = count(root);
    let fresh = || scan(root, config).expect("the root scans");
    let fresh_time = median(&timed(runs.min(51), || drop(fresh())));

    let mut index = Index::open(root, config.clone()).expect("a valid config");
    let built = index.scan().expect("the root scans");
    assert!(
        built == fresh(),
        "{}: the first scan differs",
        root.display()
    );
    // Files changed within the last moments cannot be vouched for by their
    // times: let them settle, as they have in a working tree.
    std::thread::sleep(Duration::from_millis(300));
    index.scan().expect("the root scans");
    let unchanged = median(&timed(runs, || drop(index.scan())));
    assert!(
        index.scan().unwrap() == fresh(),
        "an unchanged re-scan differs"
    );
    let stats = index.stats().clone();

    let original = std::fs::read(rule).expect("the --rule file exists");
    let mut changed = Vec::new();
    for n in 0..runs {
        std::fs::write(rule, format!("Rule revision {n}.\n")).unwrap();
        let started = Instant::now();
        let answer = index.scan().unwrap();
        changed.push(started.elapsed());
        if n % 4 == 0 {
            assert!(answer == fresh(), "a re-scan after a change differs");
        }
    }
    std::fs::write(rule, original).unwrap();
    let changed = median(&changed);

    let name = root.file_name().map_or_else(
        || root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let ratio = |t: Duration| fresh_time.as_secs_f64() / t.as_secs_f64();
    println!(
        "| {name} | {links} | {files} | {} | {} | **{:.0}×** | {} | **{:.0}×** | {} | {} |",
        us(fresh_time),
        us(unchanged),
        ratio(unchanged),
        us(changed),
        ratio(changed),
        stats.links_checked,
        stats.listed_every_scan,
    );
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

/// `(files, symbolic links)` below `root`, links not followed.
fn count(root: &Path) -> (usize, usize) {
    let (mut files, mut links) = (0, 0);
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(entry.path()),
                Ok(t) if t.is_symlink() => links += 1,
                Ok(_) => files += 1,
                Err(_) => {}
            }
        }
    }
    (files, links)
}
