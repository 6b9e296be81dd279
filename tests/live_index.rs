//! The live index (`promptinclude::index`) against fresh scans and the
//! oracle: random trees changed by random steps (files and directories
//! created, removed, renamed, moved in and out of the root, rewritten,
//! truncated, made unreadable; links made and retargeted, inside and out;
//! the project's configuration and its gitignore changed), and after every
//! step the index's answer must equal a fresh scan's, and on a sample of
//! steps the oracle's. Then the fallbacks, forced: a queue overflow made by
//! a burst of events, and a watch limit.
//!
//! Knobs: PROMPTINCLUDE_INDEX_SEED (a fresh seed otherwise, printed),
//! PROMPTINCLUDE_INDEX_STEPS (per seed, default 2,500), PROMPTINCLUDE_INDEX_SEEDS
//! (default 4: 10,000 steps in all).

mod common;

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{random_config, random_text, random_tree, OracleBatch, Rng};
use libtest_mimic::{Completion, Failed, Trial};
use promptinclude::config::Format;
use promptinclude::index::{BatchIndex, Index, IndexOptions};
use promptinclude::{scan, Batch, Config, Resolver};

fn main() {
    common::run_trials(vec![
        Trial::ignorable_test("random_mutations_match_fresh_scans_and_the_oracle", || {
            random_mutations()
        }),
        Trial::test("an_unchanged_tree_is_not_listed_or_read", || {
            unchanged_tree();
            Ok(())
        }),
        Trial::test("links_named_unlike_rule_files_cost_nothing", || {
            links_that_decide_nothing();
            Ok(())
        }),
        Trial::test("a_rule_file_link_is_stated_not_listed", || {
            rule_file_link();
            Ok(())
        }),
        Trial::test("a_queue_overflow_falls_back_to_a_full_scan", || {
            overflow();
            Ok(())
        }),
        Trial::test(
            "past_the_watch_limit_directories_are_listed_every_scan",
            || {
                watch_limit();
                Ok(())
            },
        ),
        Trial::test("a_replaced_root_and_a_project_file_are_seen", || {
            root_and_project_file();
            Ok(())
        }),
        Trial::ignorable_test("a_mount_inside_the_tree_is_seen", mount_inside),
        Trial::test(
            "a_tree_where_the_reference_raises_is_scanned_in_full",
            || {
                deep_tree();
                Ok(())
            },
        ),
    ]);
}

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config_of(json: &serde_json::Value) -> Config {
    Config::from_text(&json.to_string(), Format::Json, &Config::default()).expect("a valid config")
}

/// Every directory and every entry below `root` (links not followed).
fn listing(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let (mut dirs, mut entries) = (vec![root.to_path_buf()], Vec::new());
    let mut i = 0;
    while i < dirs.len() {
        if let Ok(read) = fs::read_dir(&dirs[i]) {
            for entry in read.flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    dirs.push(path.clone());
                }
                entries.push(path);
            }
        }
        i += 1;
    }
    (dirs, entries)
}

const NAMES: &[&str] = &[
    "a.promptinclude.md",
    "b.promptinclude.md",
    "rules.promptinclude.md",
    "notes.md",
    "x.txt",
    "deep",
    "src",
    "docs",
    "build",
    "node_modules",
    "ab.promptinclude.md",
];

/// One random change to the tree at `root` (`outside` is a directory next
/// to it, for moves across the root's edge and link targets). Returns what
/// it did, for the failure message.
fn mutate(rng: &mut Rng, root: &Path, outside: &Path, linkiness: usize) -> String {
    let (dirs, entries) = listing(root);
    let dir = rng.pick(&dirs).clone();
    let name = *rng.pick(NAMES);
    let fresh = dir.join(name);
    let entry = (!entries.is_empty()).then(|| rng.pick(&entries).clone());
    let text = random_text(rng);
    let what = rng.below(22);
    let result = match (what, &entry) {
        (0..=2, _) => fs::write(&fresh, &text).map(|()| format!("write {}", fresh.display())),
        (3, _) => fs::create_dir_all(fresh.join(*rng.pick(NAMES)))
            .map(|()| format!("mkdir -p {}/..", fresh.display())),
        (4, Some(e)) => remove(e).map(|()| format!("rm -rf {}", e.display())),
        (5, Some(e)) => {
            fs::rename(e, &fresh).map(|()| format!("mv {} {}", e.display(), fresh.display()))
        }
        (6, Some(e)) => {
            let away = outside.join(format!("away{}", rng.below(1000)));
            fs::rename(e, &away).map(|()| format!("mv {} out", e.display()))
        }
        (7, _) => {
            let (_, outs) = listing(outside);
            match outs.first() {
                Some(o) => fs::rename(o, &fresh)
                    .map(|()| format!("mv {} in as {}", o.display(), fresh.display())),
                None => Ok("nothing outside".into()),
            }
        }
        (8, Some(e)) => fs::OpenOptions::new()
            .append(true)
            .open(e)
            .and_then(|mut f| std::io::Write::write_all(&mut f, &text))
            .map(|()| format!("append {}", e.display())),
        (9, Some(e)) => fs::OpenOptions::new()
            .write(true)
            .open(e)
            .and_then(|f| f.set_len(rng.below(40) as u64))
            .map(|()| format!("truncate {}", e.display())),
        (10, Some(e)) => {
            let mode = *rng.pick(&[0o000, 0o200, 0o644, 0o755, 0o311]);
            fs::set_permissions(e, fs::Permissions::from_mode(mode))
                .map(|()| format!("chmod {mode:o} {}", e.display()))
        }
        (11 | 12 | 18 | 19, _) if !rng.chance(linkiness) => {
            // Some seeds keep links rare, to test the memory of plain trees.
            let links: Vec<&PathBuf> = entries.iter().filter(|e| e.is_symlink()).collect();
            match links.first() {
                Some(l) => fs::remove_file(l).map(|()| format!("rm link {}", l.display())),
                None => fs::write(&fresh, &text).map(|()| format!("write {}", fresh.display())),
            }
        }
        (11, _) => {
            // To a file or a directory, inside the tree or out, dangling;
            // by absolute or relative path. `fresh`'s name may be a rule
            // file's or not.
            let target: PathBuf = match rng.below(7) {
                0 => outside.join("target.promptinclude.md"),
                1 => rng.pick(&dirs).clone(),
                2 => PathBuf::from("nowhere"),
                3 => outside.to_path_buf(),
                4 => entry.clone().unwrap_or_else(|| root.join("x.txt")),
                5 => PathBuf::from(*rng.pick(NAMES)),
                _ => PathBuf::from("..").join(*rng.pick(NAMES)),
            };
            let _ = remove(&fresh);
            symlink(&target, &fresh)
                .map(|()| format!("ln -s {} {}", target.display(), fresh.display()))
        }
        (12, _) => {
            // Retarget a link atomically (rename over it).
            let tmp = dir.join(".tmp-link");
            let target = match rng.below(3) {
                0 => root.join(*rng.pick(NAMES)),
                _ => outside.join(format!("t{}.promptinclude.md", rng.below(3))),
            };
            let _ = fs::remove_file(&tmp);
            symlink(&target, &tmp)
                .and_then(|()| fs::rename(&tmp, &fresh))
                .map(|()| format!("retarget {} -> {}", fresh.display(), target.display()))
        }
        (13, _) => {
            // What links outside point at changes, with no event inside.
            let t = outside.join(format!("t{}.promptinclude.md", rng.below(3)));
            fs::write(&t, &text).map(|()| format!("write outside {}", t.display()))
        }
        (14, _) => {
            let t = outside.join("target.promptinclude.md");
            fs::write(&t, &text).map(|()| "write outside target".into())
        }
        (15, Some(e)) if e.is_file() => {
            // A hard link from outside, then a write through it.
            let other = outside.join(format!("hard{}", rng.below(1000)));
            fs::hard_link(e, &other)
                .and_then(|()| fs::write(&other, &text))
                .map(|()| format!("hard link {} and write", e.display()))
        }
        (16, _) => {
            // The project's own configuration.
            let file = root.join(".a0proj/plugins/_promptinclude/config.json");
            if rng.chance(30) {
                fs::remove_file(&file).map(|()| "rm project config".to_string())
            } else {
                let i = 3 + rng.below(50);
                let cfg = random_config(rng, i);
                fs::create_dir_all(file.parent().unwrap())
                    .and_then(|()| fs::write(&file, cfg.to_string()))
                    .map(|()| format!("project config {cfg}"))
            }
        }
        (17, _) => {
            // Directory swapped for another at the same name.
            let tmp = outside.join(format!("swap{}", rng.below(1000)));
            fs::create_dir_all(tmp.join("src"))
                .and_then(|()| fs::write(tmp.join("src/a.promptinclude.md"), &text))
                .and_then(|()| {
                    let _ = remove(&fresh);
                    fs::rename(&tmp, &fresh)
                })
                .map(|()| format!("swap dir {}", fresh.display()))
        }
        (18, _) => {
            // A link's target replaced: a file by a directory, a directory
            // by a file, nothing by a file.
            let links: Vec<&PathBuf> = entries.iter().filter(|e| e.is_symlink()).collect();
            match links.first().map(|l| (l, fs::read_link(l))) {
                Some((l, Ok(target))) => {
                    let target = l.parent().unwrap().join(target);
                    let result = match target.symlink_metadata() {
                        Ok(m) if m.is_dir() => {
                            remove(&target).and_then(|()| fs::write(&target, &text))
                        }
                        Ok(_) => fs::remove_file(&target)
                            .and_then(|()| fs::create_dir(&target))
                            .and_then(|()| fs::write(target.join("a.promptinclude.md"), &text)),
                        Err(_) => fs::write(&target, &text),
                    };
                    result.map(|()| {
                        format!("replace the target {} of {}", target.display(), l.display())
                    })
                }
                _ => Ok("no link".into()),
            }
        }
        (19, _) => {
            // A link swapped for a regular file, or a file for a link (each
            // renamed over the other, as editors save).
            let tmp = dir.join(".tmp-swap");
            let _ = remove(&tmp);
            if fresh.is_symlink() {
                fs::write(&tmp, &text)
                    .and_then(|()| fs::rename(&tmp, &fresh))
                    .map(|()| format!("swap link {} for a file", fresh.display()))
            } else {
                let target = outside.join(format!("t{}.promptinclude.md", rng.below(3)));
                symlink(&target, &tmp)
                    .and_then(|()| fs::rename(&tmp, &fresh))
                    .map(|()| {
                        format!(
                            "swap {} for a link to {}",
                            fresh.display(),
                            target.display()
                        )
                    })
            }
        }
        _ => fs::write(&fresh, &text).map(|()| format!("write {}", fresh.display())),
    };
    result.unwrap_or_else(|e| format!("(failed: {e})"))
}

fn remove(path: &Path) -> std::io::Result<()> {
    match path.symlink_metadata() {
        Ok(m) if m.is_dir() => {
            // Make everything below removable first.
            let (dirs, _) = listing(path);
            for d in dirs {
                let _ = fs::set_permissions(&d, fs::Permissions::from_mode(0o755));
            }
            fs::remove_dir_all(path)
        }
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    }
}

fn random_mutations() -> Result<Completion, Failed> {
    let oracle = match common::oracle_or_skip() {
        Ok(path) => path,
        Err(outcome) => return outcome,
    };
    let mut oracle = OracleBatch::start(&oracle);
    let seeds = env_usize("PROMPTINCLUDE_INDEX_SEEDS", 4);
    let steps = env_usize("PROMPTINCLUDE_INDEX_STEPS", 2500);
    let first = common::fresh_seed("PROMPTINCLUDE_INDEX_SEED");
    let (mut compared, mut with_oracle) = (0, 0);
    for s in 0..seeds as u64 {
        let seed = first.wrapping_add(s);
        let mut rng = Rng::new(seed);
        let work = tempfile::tempdir().unwrap();
        let root = work.path().join("root");
        let outside = work.path().join("outside");
        fs::create_dir_all(&outside).unwrap();
        random_tree(&mut rng, &root);
        // Odd seeds start with no links and make few: their directories are
        // kept, so what is tested is the index's memory, not its fallback.
        let linkiness = if s % 2 == 1 { 5 } else { 60 };
        if s % 2 == 1 {
            for entry in listing(&root).1 {
                if entry.is_symlink() {
                    fs::remove_file(&entry).unwrap();
                }
            }
        }
        let i = rng.below(8);
        let cfg_json = random_config(&mut rng, i);
        let cfg_path = work.path().join("config.json");
        fs::write(&cfg_path, cfg_json.to_string()).unwrap();
        let config = config_of(&cfg_json);
        let mut index = Index::open(&root, config.clone()).unwrap();
        // The host's way: the project's own file decides, on every scan.
        let resolver = Resolver::default();
        let batch = Arc::new(Batch::plan(&[&root], &resolver).unwrap());
        let mut batch_index = BatchIndex::new(Arc::clone(&batch), IndexOptions::default());
        let mut log: Vec<String> = Vec::new();
        let mut link_checks = 0;
        for step in 0..steps {
            if step > 0 {
                for _ in 0..1 + rng.below(3) {
                    log.push(mutate(&mut rng, &root, &outside, linkiness));
                }
            }
            let fresh = scan(&root, &config).map_err(|e| e.to_string());
            let live = index.scan().map_err(|e| e.to_string());
            let stats = index.stats().clone();
            link_checks += stats.links_checked;
            let context = || {
                format!(
                    "seed {seed} (PROMPTINCLUDE_INDEX_SEED={seed} PROMPTINCLUDE_INDEX_SEEDS=1 repeats it), step {step}, config {cfg_json}; last steps: {:?}; stats {stats:?}",
                    &log[log.len().saturating_sub(6)..],
                )
            };
            if fresh != live {
                return Err(format!(
                    "the index differs from a fresh scan: {}\nfresh: {fresh:?}\nindex: {live:?}",
                    context()
                )
                .into());
            }
            let mut fresh_batch = Vec::new();
            batch.scan(|_, _, r| {
                fresh_batch.push(r.map(|s| s.into_result()));
                true
            });
            let live_batch: Vec<_> = batch_index
                .scan()
                .into_iter()
                .map(|r| r.map(|s| s.into_result()))
                .collect();
            if fresh_batch != live_batch {
                return Err(format!(
                    "the batch index differs from a fresh batch scan: {}\nfresh: {fresh_batch:?}\nindex: {live_batch:?}",
                    context()
                )
                .into());
            }
            compared += 2;
            if step % 97 == 0 {
                if let Ok(result) = index.scan_detailed() {
                    let ours = promptinclude::render::json::scan_line(&result, &root);
                    let argv = vec![
                        "--config".to_string(),
                        cfg_path.to_string_lossy().into_owned(),
                        root.to_string_lossy().into_owned(),
                    ];
                    let expected = oracle.call(&argv, &[]);
                    let ours = common::as_oracle_prints(format!("{ours}\n").as_bytes());
                    if expected != ours {
                        return Err(format!(
                            "the index differs from the oracle: {}\noracle: {}\nindex:  {}",
                            context(),
                            String::from_utf8_lossy(&expected),
                            String::from_utf8_lossy(&ours)
                        )
                        .into());
                    }
                    with_oracle += 1;
                }
            }
        }
        let stats = index.stats();
        eprintln!(
            "seed {seed}: {steps} steps; {} of {} scans unchanged, {} directories listed, {} files read, {link_checks} links stat'ed; fallbacks {:?}",
            stats.unchanged, stats.scans, stats.dirs_listed, stats.files_read, stats.fallbacks
        );
        // Restore permissions so the temporary directory can go.
        let _ = remove(&root);
    }
    eprintln!(
        "live index: {} steps over {seeds} seeds, {compared} answers equal to fresh scans, {with_oracle} to the oracle's, 0 differences",
        seeds * steps
    );
    Ok(Completion::Completed)
}

/// The links real repositories hold (`AGENTS.md -> CLAUDE.md`, licences,
/// a link to a directory, a dangling one) change no answer while their
/// names are not rule files': re-scans list nothing and `stat` no link.
/// Under a pattern that takes every name, each is `stat`ed, and nothing is
/// listed either.
fn links_that_decide_nothing() {
    let dir = tree(3);
    let root = dir.path();
    fs::write(root.join("CLAUDE.md"), "Shared rules.\n").unwrap();
    symlink("CLAUDE.md", root.join("AGENTS.md")).unwrap();
    symlink("../../CLAUDE.md", root.join("d1/e/LICENSE")).unwrap();
    symlink("d0", root.join("d0-link")).unwrap();
    symlink("nowhere", root.join("d2/gone")).unwrap();
    for (config, deciding) in [
        (Config::default(), 0),
        (config_of(&serde_json::json!({"name_pattern": "*"})), 4),
    ] {
        let mut index = Index::open(root, config.clone()).unwrap();
        let first = index.scan().unwrap();
        assert_eq!(first, scan(root, &config).unwrap());
        // Targets made just now cannot be vouched for by their times yet.
        std::thread::sleep(std::time::Duration::from_millis(250));
        index.scan().unwrap();
        let again = index.scan().unwrap();
        assert_eq!(again, scan(root, &config).unwrap());
        let stats = index.stats();
        assert_eq!(
            (
                stats.last_dirs_listed,
                stats.last_files_read,
                stats.listed_every_scan
            ),
            (0, 0, 0),
            "{stats:?}"
        );
        assert_eq!(stats.links_checked, deciding, "{stats:?}");
        if deciding == 0 {
            assert_eq!(stats.fallbacks.links, 0, "{stats:?}");
            assert_eq!(stats.unchanged, 2, "{stats:?}");
        }
    }
}

/// A rule file that is a link to a file outside the tree: one `stat` per
/// scan, and every change of its target seen (content of the same size,
/// the target replaced by a directory, removed, made again).
fn rule_file_link() {
    let dir = tree(2);
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("shared.md");
    fs::write(&target, "Use tabs.\n").unwrap();
    let root = dir.path();
    symlink(&target, root.join("d0/shared.promptinclude.md")).unwrap();
    let config = Config::default();
    let mut index = Index::open(root, config.clone()).unwrap();
    let fresh = || scan(root, &config).unwrap();
    let settle = || std::thread::sleep(std::time::Duration::from_millis(250));
    settle();
    index.scan().unwrap();
    assert_eq!(index.scan().unwrap(), fresh());
    let stats = index.stats().clone();
    assert_eq!(
        (stats.last_dirs_listed, stats.last_files_read),
        (0, 0),
        "{stats:?}"
    );
    assert_eq!(stats.links_checked, 1, "{stats:?}");
    let changes: [(&str, &dyn Fn()); 4] = [
        ("same size", &|| fs::write(&target, "Use TABS.\n").unwrap()),
        ("a directory", &|| {
            fs::remove_file(&target).unwrap();
            fs::create_dir(&target).unwrap();
        }),
        ("gone", &|| fs::remove_dir(&target).unwrap()),
        ("back", &|| fs::write(&target, "Use spaces.\n").unwrap()),
    ];
    for (what, change) in changes {
        let before = index.scan().unwrap();
        change();
        let now = fresh();
        assert_ne!(before, now, "{what}: the change changes the answer");
        assert_eq!(index.scan().unwrap(), now, "{what}");
        settle();
        assert_eq!(index.scan().unwrap(), now, "{what}, settled");
        assert_eq!(index.scan().unwrap(), now, "{what}, kept");
        assert_eq!(
            index.stats().last_dirs_listed,
            0,
            "{what}: {:?}",
            index.stats()
        );
    }
}

/// A small tree: `n` directories, each with a rule file.
fn tree(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..n {
        let d = dir.path().join(format!("d{i}/e"));
        fs::create_dir_all(&d).unwrap();
        fs::write(d.join("r.promptinclude.md"), format!("rule {i}\n")).unwrap();
    }
    dir
}

fn unchanged_tree() {
    let dir = tree(10);
    let mut index = Index::open(dir.path(), Config::default()).unwrap();
    let first = index.scan().unwrap();
    assert_eq!(first.files.len(), 10);
    assert_eq!(index.stats().last_dirs_listed, 21);
    assert_eq!(index.scan().unwrap(), first);
    let stats = index.stats().clone();
    assert_eq!((stats.last_dirs_listed, stats.last_files_read), (0, 0));
    assert_eq!(stats.unchanged, 1);
    // One rule file changes: no directory is listed, one file is read.
    fs::write(dir.path().join("d3/e/r.promptinclude.md"), "changed\n").unwrap();
    let after = index.scan().unwrap();
    assert_eq!(after, scan(dir.path(), &Config::default()).unwrap());
    assert_eq!(index.stats().last_dirs_listed, 0);
    assert_eq!(index.stats().last_files_read, 1);
    // A file is added to one directory: that directory alone is listed.
    fs::write(dir.path().join("d4/e/s.promptinclude.md"), "new\n").unwrap();
    let after = index.scan().unwrap();
    assert_eq!(after, scan(dir.path(), &Config::default()).unwrap());
    assert_eq!(index.stats().last_dirs_listed, 1);
    assert_eq!(index.stats().last_files_read, 1);
    // 21 directories and 11 rule files (a file's own watch sees writes
    // through its other hard links).
    assert_eq!(index.stats().watches, 32);
    // A subtree moved out: its watches go.
    fs::rename(dir.path().join("d5"), dir.path().join("../moved-out-d5")).ok();
    let after = index.scan().unwrap();
    let _ = fs::remove_dir_all(dir.path().join("../moved-out-d5"));
    assert_eq!(after, scan(dir.path(), &Config::default()).unwrap());
    assert_eq!(index.stats().watches, 29);
    assert_eq!(index.stats().fallbacks, Default::default());
}

fn overflow() {
    let dir = tree(4);
    let mut index = Index::open(dir.path(), Config::default()).unwrap();
    index.scan().unwrap();
    let queued: usize = fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(16384);
    // Alternating writes to two files: no two events in a row are the same,
    // so the kernel merges none of them.
    let (a, b) = (dir.path().join("x.txt"), dir.path().join("y.txt"));
    for _ in 0..queued / 2 + 16 {
        fs::write(&a, "a").unwrap();
        fs::write(&b, "b").unwrap();
    }
    fs::write(
        dir.path().join("d1/e/r.promptinclude.md"),
        "after the burst\n",
    )
    .unwrap();
    let after = index.scan().unwrap();
    assert_eq!(after, scan(dir.path(), &Config::default()).unwrap());
    assert!(
        after
            .files
            .iter()
            .any(|f| f.content.contains("after the burst")),
        "{after:?}"
    );
    assert_eq!(index.stats().fallbacks.overflow, 1, "{:?}", index.stats());
    assert_eq!(
        index.stats().last_dirs_listed,
        9,
        "a full scan after an overflow"
    );
    // And then it is live again.
    index.scan().unwrap();
    assert_eq!(index.stats().last_dirs_listed, 0);
}

fn watch_limit() {
    let dir = tree(6);
    let options = IndexOptions {
        max_watches: Some(5),
    };
    let mut index = Index::open(dir.path(), Config::default())
        .unwrap()
        .with_options(options);
    index.scan().unwrap();
    assert_eq!(index.stats().watches, 5);
    assert!(index.stats().fallbacks.watch_limit >= 1);
    // Every unwatched directory is listed again, and changes there are seen.
    for i in 0..6 {
        fs::write(
            dir.path().join(format!("d{i}/e/r.promptinclude.md")),
            format!("edited {i}\n"),
        )
        .unwrap();
        fs::write(
            dir.path().join(format!("d{i}/new.promptinclude.md")),
            "new\n",
        )
        .unwrap();
        let after = index.scan().unwrap();
        assert_eq!(after, scan(dir.path(), &Config::default()).unwrap());
        assert!(
            index.stats().last_dirs_listed >= 13 - 5,
            "{:?}",
            index.stats()
        );
    }
}

fn root_and_project_file() {
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("root");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("a.promptinclude.md"), "first\n").unwrap();
    let batch = Arc::new(Batch::plan(&[&root], &Resolver::default()).unwrap());
    let mut index = BatchIndex::new(Arc::clone(&batch), IndexOptions::default());
    let fresh = |batch: &Batch| {
        let mut out = Vec::new();
        batch.scan(|_, _, r| {
            out.push(r.map(|s| s.into_result()));
            true
        });
        out
    };
    let live = |index: &mut BatchIndex| -> Vec<_> {
        index
            .scan()
            .into_iter()
            .map(|r| r.map(|s| s.into_result()))
            .collect()
    };
    assert_eq!(live(&mut index), fresh(&batch));
    // The root replaced by another directory with other files.
    fs::rename(&root, work.path().join("old")).unwrap();
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("b.promptinclude.md"), "second\n").unwrap();
    assert_eq!(live(&mut index), fresh(&batch));
    assert_eq!(index.stats().fallbacks.root_changed, 1);
    // A project file that narrows the pattern, then a broken one.
    let file = root.join(".a0proj/plugins/_promptinclude/config.json");
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, r#"{"name_pattern": "a*.md"}"#).unwrap();
    assert_eq!(live(&mut index), fresh(&batch));
    assert_eq!(index.stats().fallbacks.config_changed, 1);
    fs::write(&file, r#"{"max_depth": "#).unwrap();
    let broken = live(&mut index);
    assert!(broken[0].is_err());
    assert_eq!(broken, fresh(&batch));
    fs::remove_file(&file).unwrap();
    assert_eq!(live(&mut index), fresh(&batch));
}

/// A file system mounted over a directory of the tree changes what its
/// path shows with no inotify event: the mount table's signal must catch
/// it. Needs root (CI runs as root); elsewhere reported as ignored.
fn mount_inside() -> Result<Completion, Failed> {
    let dir = tree(2);
    let mount_point = dir.path().join("d0/e");
    let mut index = Index::open(dir.path(), Config::default()).unwrap();
    index.scan().unwrap();
    let status = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "promptinclude-test"])
        .arg(&mount_point)
        .status();
    if !status.is_ok_and(|s| s.success()) {
        let reason = "cannot mount a tmpfs here (needs root)";
        if std::env::var("PROMPTINCLUDE_REQUIRE_ORACLE").as_deref() == Ok("1") {
            return Err(
                format!("{reason}, and CI (PROMPTINCLUDE_REQUIRE_ORACLE=1) runs as root").into(),
            );
        }
        return Ok(Completion::ignored_with(reason));
    }
    let unmount = || {
        std::process::Command::new("umount")
            .arg(&mount_point)
            .status()
            .ok()
    };
    let checks = (|| {
        // Over the mount: no rule file (the tmpfs is empty), then one.
        let after = index.scan().unwrap();
        if after != scan(dir.path(), &Config::default()).unwrap() || after.files.len() != 1 {
            return Err(format!("after mounting: {after:?}"));
        }
        fs::write(mount_point.join("m.promptinclude.md"), "on the tmpfs\n").unwrap();
        let after = index.scan().unwrap();
        if after != scan(dir.path(), &Config::default()).unwrap() || after.files.len() != 2 {
            return Err(format!("a file on the mount: {after:?}"));
        }
        Ok(())
    })();
    unmount();
    checks?;
    let after = index.scan().unwrap();
    assert_eq!(after, scan(dir.path(), &Config::default()).unwrap());
    assert_eq!(after.files.len(), 2, "the tree's own files again");
    assert!(index.stats().fallbacks.mounts >= 2, "{:?}", index.stats());
    Ok(Completion::Completed)
}

/// A chain of directories deeper than CPython's recursion limit lets
/// `os.walk` go: the reference raises, the walk goes on piecewise, and the
/// index hands that tree to the full walk on every scan.
fn deep_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut deep = dir.path().to_path_buf();
    for _ in 0..1000 {
        deep.push("d");
    }
    fs::create_dir_all(&deep).unwrap();
    fs::write(dir.path().join("top.promptinclude.md"), "top\n").unwrap();
    let config = config_of(&serde_json::json!({"max_depth": 5000}));
    let mut index = Index::open(dir.path(), config.clone()).unwrap();
    for step in 0..3 {
        fs::write(deep.join("x.promptinclude.md"), format!("deep {step}\n")).unwrap();
        assert_eq!(index.scan().unwrap(), scan(dir.path(), &config).unwrap());
    }
    assert_eq!(index.stats().fallbacks.deep_tree, 3, "{:?}", index.stats());
}
