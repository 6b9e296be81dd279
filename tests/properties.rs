//! Property tests (proptest) for the invariants every scan keeps, on random
//! trees and configurations (`tests/common`):
//!
//! * the output does not depend on the number of threads;
//! * `len(files) + skipped_count` equals the number of candidates;
//! * the budget is never exceeded by the reference's own accounting;
//! * the rendered section is a pure function of the scan result.
//!
//! Knob: PROPTEST_CASES (default 48 per property).

use crate::common;

use std::path::Path;

use common::{random_config, random_tree, Rng};
use promptinclude::budget::path_cost;
use promptinclude::config::Format;
use promptinclude::in_input_order;
use promptinclude::model::Disposition;
use promptinclude::{render, tokenize, Config, FileEntry, RootScan, ScanResult, Scanner, Status};
use proptest::prelude::*;

/// A random tree under a fresh temporary directory and a random configuration
/// for it, both from `seed`. `None` if the configuration does not compile.
fn random_case(seed: u64, config_index: usize) -> Option<(tempfile::TempDir, Scanner)> {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(seed);
    random_tree(&mut rng, &dir.path().join("root"));
    let json = random_config(&mut rng, config_index).to_string();
    let config = Config::from_text(&json, Format::Json, &Config::default()).unwrap();
    let scanner = Scanner::new(config).ok()?;
    Some((dir, scanner))
}

/// Runs `f` on a rayon pool of `threads` threads.
fn on_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// Everything a scan produced, in comparable form.
fn facts(scan: &RootScan) -> impl PartialEq + std::fmt::Debug {
    (
        scan.abs_root.clone(),
        scan.is_dir,
        scan.candidates.clone(),
        scan.allocation.clone(),
    )
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// One thread or four: the same candidates, dispositions, result and
    /// section, for one root and for a batch.
    #[test]
    fn output_is_independent_of_the_thread_count(seed in any::<u64>(), config_index in 0usize..8) {
        let Some((dir, scanner)) = random_case(seed, config_index) else {
            return Ok(());
        };
        let root = dir.path().join("root");
        let one = on_pool(1, || scanner.scan_detailed(&root)).expect("positive limits never raise");
        let four = on_pool(4, || scanner.scan_detailed(&root)).expect("positive limits never raise");
        prop_assert_eq!(facts(&one), facts(&four));
        let pattern = &scanner.config().name_pattern;
        prop_assert_eq!(render(one.result(), pattern), render(four.result(), pattern));

        let roots = [root.clone(), dir.path().join("missing"), root.join("deep"), root.clone()];
        let batch = |threads| {
            on_pool(threads, || {
                let mut out = Vec::new();
                in_input_order(&roots, |_, root| scanner.scan(root).ok(), |i, _, result| {
                    out.push((i, result));
                    true
                });
                out
            })
        };
        prop_assert_eq!(batch(1), batch(4));
    }

    /// Every candidate is either in `files` or counted in `skipped_count`,
    /// and the dispositions say which.
    #[test]
    fn files_plus_skipped_equals_candidates(seed in any::<u64>(), config_index in 0usize..8) {
        let Some((dir, scanner)) = random_case(seed, config_index) else {
            return Ok(());
        };
        let scan = scanner.scan_detailed(&dir.path().join("root")).expect("positive limits never raise");
        let result = scan.result();
        prop_assert_eq!(
            result.files.len() as i64 + result.skipped_count,
            scan.candidates.len() as i64
        );
        let dispositions = &scan.allocation.dispositions;
        prop_assert_eq!(dispositions.len(), scan.candidates.len());
        let included = dispositions
            .iter()
            .filter(|d| matches!(d, Disposition::Included(_)))
            .count();
        prop_assert_eq!(included, result.files.len());
        prop_assert_eq!((dispositions.len() - included) as i64, result.skipped_count);
    }

    /// The budget pass never charges past `max_total_tokens`: every listed
    /// path fits, every whole (`ok`) file fits, `max_file_count` holds, and
    /// each `token_count` is the count of its `content`. (A cropped text is
    /// cut by the reference's 0.8-proportional estimate; its count is what the
    /// reference charges, which can exceed the allowance on very uneven text.)
    #[test]
    fn budget_is_never_exceeded(seed in any::<u64>(), config_index in 0usize..8) {
        let Some((dir, scanner)) = random_case(seed, config_index) else {
            return Ok(());
        };
        let config = scanner.config().clone();
        let scan = scanner.scan_detailed(&dir.path().join("root")).expect("positive limits never raise");
        let files = &scan.result().files;
        let max_file_count = config.max_file_count.as_i64().unwrap();
        let max_total_tokens = config.max_total_tokens.as_i64().unwrap();
        let max_file_tokens = config.max_file_tokens.as_i64().unwrap();
        prop_assert!(files.len() as i64 <= max_file_count.max(0));
        // The candidate behind each entry, for its path cost.
        let mut behind = vec![None; files.len()];
        for (c, d) in scan.candidates.iter().zip(&scan.allocation.dispositions) {
            if let Disposition::Included(i) = d {
                behind[*i] = Some(c);
            }
        }
        let mut used = 0i64;
        for (i, entry) in files.iter().enumerate() {
            let candidate = behind[i].expect("every entry has its candidate");
            let p = path_cost(candidate);
            prop_assert!(used + p <= max_total_tokens, "path of entry {} does not fit", i);
            prop_assert_eq!(tokenize::count(&entry.content) as i64, entry.token_count);
            match entry.status {
                Status::Ok => {
                    prop_assert!(used + p + entry.token_count <= max_total_tokens);
                    prop_assert!(entry.token_count <= max_file_tokens);
                }
                Status::Cropped => prop_assert!(entry.content.ends_with("...")),
                Status::Skipped => {
                    prop_assert_eq!(entry.token_count, 0);
                    prop_assert_eq!(i + 1, files.len(), "a skipped entry is the last");
                }
            }
            used += p + entry.token_count;
        }
    }

    /// `render` depends on its arguments only: the same result renders the
    /// same in any thread, before and after rendering other results, and a
    /// re-scan of an unchanged tree renders identically.
    #[test]
    fn render_is_a_pure_function_of_the_scan(
        result in scan_result(),
        other in scan_result(),
        pattern in "[a-z*?.\\[\\]!{}]{0,12}",
    ) {
        let first = render(&result, &pattern);
        let _ = render(&other, "*");
        prop_assert_eq!(&first, &render(&result.clone(), &pattern));
        let copy = result.clone();
        let pat = pattern.clone();
        let elsewhere = std::thread::spawn(move || render(&copy, &pat)).join().unwrap();
        prop_assert_eq!(&first, &elsewhere);
        prop_assert!(first.ends_with('\n'));
        // Entries or a skipped count make an includes part; nothing else does.
        prop_assert_eq!(
            first.contains("\n### includes\n"),
            !result.files.is_empty() || result.skipped_count > 0
        );
    }

    #[test]
    fn rescanning_an_unchanged_tree_renders_identically(seed in any::<u64>(), config_index in 0usize..8) {
        let Some((dir, scanner)) = random_case(seed, config_index) else {
            return Ok(());
        };
        let root: &Path = &dir.path().join("root");
        let pattern = &scanner.config().name_pattern;
        let a = render(&scanner.scan(root).unwrap(), pattern);
        let b = render(&scanner.scan(root).unwrap(), pattern);
        prop_assert_eq!(a, b);
    }
}

/// Random scan results, with placeholder-like text in paths and contents.
fn scan_result() -> impl Strategy<Value = ScanResult> {
    let text = "([a-z /\\n`]|\\{\\{path\\}\\}|\\{\\{suffix\\}\\}|\\{\\{content\\}\\}|\\{\\{includes\\}\\}|\\{\\{name_pattern\\}\\}){0,8}";
    let entry = (
        text,
        text,
        0i64..5000,
        prop_oneof![
            Just(Status::Ok),
            Just(Status::Cropped),
            Just(Status::Skipped)
        ],
    )
        .prop_map(|(path, content, token_count, status)| FileEntry {
            path,
            content,
            token_count,
            status,
        });
    (proptest::collection::vec(entry, 0..6), 0i64..4).prop_map(|(files, skipped_count)| {
        ScanResult {
            root: "root".to_string(),
            files,
            skipped_count,
        }
    })
}
