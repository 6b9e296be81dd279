//! Sharded runs (issue #14): `--shard K/N` on scan, audit, render --out-dir
//! and bundle, put back together by `promptinclude merge`, give exactly the
//! bytes (and exit status) of one unsharded run, for N = 1, 2 and 7; merges
//! of merges give the same bytes; the scan is anchored to the oracle.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{binary, command, oracle_or_skip, random_tree, run_trials, Rng};
use libtest_mimic::{Completion, Failed, Trial};

fn check(cond: bool, message: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(message().into())
    }
}

fn run(args: &[String], cwd: &Path, env: &[(&str, &str)]) -> Output {
    command(binary())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Every file under `dir` (relative path → bytes).
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().to_path_buf(),
                    fs::read(&path).unwrap(),
                );
            }
        }
    }
    out
}

/// A workspace of random roots, one with a broken project file, one that
/// is not a directory, one given twice; the list is `roots.txt`.
struct Workspace {
    dir: tempfile::TempDir,
    roots: Vec<String>,
}

impl Workspace {
    fn new(seed: u64, n: usize) -> Workspace {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = Rng::new(seed);
        let mut roots: Vec<String> = (0..n).map(|i| format!("repos/r{i:03}")).collect();
        for root in &roots {
            random_tree(&mut rng, &dir.path().join(root));
        }
        let config = dir
            .path()
            .join(&roots[5])
            .join(".a0proj/plugins/_promptinclude");
        fs::create_dir_all(&config).unwrap();
        fs::write(config.join("config.json"), "{\n  \"max_depth\": [3]\n}\n").unwrap();
        roots.push("repos/not-a-dir".to_string());
        fs::write(dir.path().join("repos/not-a-dir"), "x").unwrap();
        roots.insert(20, roots[9].clone());
        let mut list = roots.join("\n");
        list.push('\n');
        fs::write(dir.path().join("roots.txt"), list).unwrap();
        Workspace { dir, roots }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// The options every run of one command gets.
const SCAN: &[&str] = &["scan", "-j", "2", "--roots-from", "roots.txt"];
const AUDIT: &[&str] = &[
    "audit",
    "--json",
    "-j",
    "2",
    "--max-total-tokens",
    "300",
    "--fail-on",
    "cropped,warning",
    "--roots-from",
    "roots.txt",
];

fn with(base: &[&str], more: &[String]) -> Vec<String> {
    let mut args = strings(base);
    args.extend(more.iter().cloned());
    args
}

/// Runs the N shards of a stream command (scan, audit --json) into files; returns their names.
fn stream_shards(
    ws: &Workspace,
    base: &[&str],
    n: usize,
    tag: &str,
) -> Result<Vec<String>, Failed> {
    let mut files = Vec::new();
    for k in 0..n {
        let o = run(&with(base, &[format!("--shard={k}/{n}")]), ws.path(), &[]);
        check(o.status.code().is_some_and(|c| c <= 2), || {
            String::from_utf8_lossy(&o.stderr).into_owned()
        })?;
        let name = format!("{tag}-{n}-{k}.jsonl");
        fs::write(ws.path().join(&name), &o.stdout)?;
        files.push(name);
    }
    Ok(files)
}

fn merge(ws: &Workspace, what: &str, extra: &[&str], inputs: &[String]) -> Output {
    let mut args = strings(&["merge", what, "--roots-from", "roots.txt"]);
    args.extend(strings(extra));
    args.extend(inputs.iter().cloned());
    run(&args, ws.path(), &[])
}

fn same_output(what: &str, n: usize, merged: &Output, whole: &Output) -> Result<(), Failed> {
    check(merged.stdout == whole.stdout, || {
        format!(
            "{what}, {n} shards: merged output differs\nmerged:\n{}\nwhole:\n{}\nstderr: {}",
            String::from_utf8_lossy(&merged.stdout),
            String::from_utf8_lossy(&whole.stdout),
            String::from_utf8_lossy(&merged.stderr)
        )
    })?;
    check(merged.status.code() == whole.status.code(), || {
        format!(
            "{what}, {n} shards: exit {:?}, unsharded {:?}: {}",
            merged.status.code(),
            whole.status.code(),
            String::from_utf8_lossy(&merged.stderr)
        )
    })
}

fn scan_and_audit_shards_merge_to_the_unsharded_run() -> Result<(), Failed> {
    let ws = Workspace::new(14, 60);
    for (what, base) in [("scan", SCAN), ("audit", AUDIT)] {
        let whole = run(&strings(base), ws.path(), &[]);
        check(whole.status.code() == Some(2), || {
            format!("{what}: the broken root makes exit 2: {whole:?}")
        })?;
        for n in [1, 2, 7] {
            let files = stream_shards(&ws, base, n, what)?;
            let sizes: Vec<u64> = files
                .iter()
                .map(|f| fs::metadata(ws.path().join(f)).unwrap().len())
                .collect();
            check(
                n == 1 || sizes.iter().filter(|&&s| s > 300).count() >= 2,
                || format!("{what}: the roots are spread over the shards: {sizes:?}"),
            )?;
            // The inputs in any order.
            let mut reversed = files.clone();
            reversed.reverse();
            same_output(what, n, &merge(&ws, what, &[], &reversed), &whole)?;
            if n == 7 {
                // A tree of merges: {0,1,2} and {3..6} first, then those two.
                let left = merge(&ws, what, &["--partial"], &files[..3]);
                let right = merge(&ws, what, &["--partial"], &files[3..]);
                fs::write(ws.path().join("left.jsonl"), &left.stdout)?;
                fs::write(ws.path().join("right.jsonl"), &right.stdout)?;
                let both = merge(&ws, what, &[], &strings(&["right.jsonl", "left.jsonl"]));
                same_output(what, n, &both, &whole)?;
                // A missing shard is an error naming the list line of a root it holds.
                let o = merge(&ws, what, &[], &files[1..]);
                let err = String::from_utf8_lossy(&o.stderr);
                check(
                    o.status.code() == Some(2)
                        && err.contains("roots.txt:")
                        && err.contains("in none of the inputs"),
                    || format!("missing shard: {o:?}"),
                )?;
                // An input given twice.
                let mut twice = files.clone();
                twice.push(files[2].clone());
                let o = merge(&ws, what, &[], &twice);
                check(
                    o.status.code() == Some(2)
                        && String::from_utf8_lossy(&o.stderr).contains("left over"),
                    || format!("an input twice: {o:?}"),
                )?;
            }
        }
    }
    // A truncated shard output is refused, naming the file.
    let files = stream_shards(&ws, SCAN, 2, "cut")?;
    let path = ws.path().join(&files[0]);
    let bytes = fs::read(&path)?;
    fs::write(&path, &bytes[..bytes.len() - 10])?;
    let o = merge(&ws, "scan", &[], &files);
    check(
        o.status.code() == Some(2)
            && String::from_utf8_lossy(&o.stderr).contains(&files[0])
            && String::from_utf8_lossy(&o.stderr).contains("incomplete"),
        || format!("truncated input: {o:?}"),
    )?;
    Ok(())
}

fn render_and_bundle_shards_merge_to_the_unsharded_run() -> Result<(), Failed> {
    let ws = Workspace::new(41, 40);
    for what in ["render", "bundle"] {
        let out_flag = if what == "render" {
            "--out-dir"
        } else {
            "--out"
        };
        let args =
            |out: &str| strings(&[what, "-j", "2", "--roots-from", "roots.txt", out_flag, out]);
        let whole_dir = format!("{what}-whole");
        let whole = run(&args(&whole_dir), ws.path(), &[]);
        check(whole.status.code() == Some(2), || {
            format!("{what}: {whole:?}")
        })?;
        let want = tree(&ws.path().join(&whole_dir));
        check(want.len() > 40, || format!("{what}: {} files", want.len()))?;
        for n in [1, 2, 7] {
            let mut dirs = Vec::new();
            for k in 0..n {
                let dir = format!("{what}-{n}-{k}");
                let mut a = args(&dir);
                a.push(format!("--shard={k}/{n}"));
                let o = run(&a, ws.path(), &[]);
                check(o.status.code().is_some_and(|c| c <= 2), || format!("{o:?}"))?;
                dirs.push(dir);
            }
            let merged = format!("{what}-{n}-merged");
            let o = merge(&ws, what, &["--out", &merged], &dirs);
            check(o.status.code() == whole.status.code(), || {
                format!("{what} {n}: {o:?}")
            })?;
            let got = tree(&ws.path().join(&merged));
            check(got == want, || {
                let diff: Vec<_> = want
                    .keys()
                    .chain(got.keys())
                    .filter(|k| want.get(*k) != got.get(*k))
                    .collect();
                format!("{what}, {n} shards: files differ: {diff:?}")
            })?;
        }
    }
    // The merged bundle is a bundle: verify reads it (the roots are unchanged).
    let o = run(&strings(&["verify", "bundle-7-merged"]), ws.path(), &[]);
    check(
        String::from_utf8_lossy(&o.stdout).contains("verify: 0 of"),
        || format!("verify: {o:?}"),
    )?;
    Ok(())
}

fn consecutive_slices_with_list_offset_merge_to_the_whole_run() -> Result<(), Failed> {
    let ws = Workspace::new(5, 25);
    let (head, tail) = ws.roots.split_at(11);
    for (name, slice) in [("head.txt", head), ("tail.txt", tail)] {
        fs::write(ws.path().join(name), slice.join("\n") + "\n")?;
    }
    for what in ["render", "bundle"] {
        let out_flag = if what == "render" {
            "--out-dir"
        } else {
            "--out"
        };
        let args = |list: &str, out: &str, offset: usize| {
            strings(&[
                what,
                "--roots-from",
                list,
                out_flag,
                out,
                "--list-offset",
                &offset.to_string(),
            ])
        };
        run(
            &args("roots.txt", &format!("{what}-all"), 0),
            ws.path(),
            &[],
        );
        run(
            &args("head.txt", &format!("{what}-head"), 0),
            ws.path(),
            &[],
        );
        run(
            &args("tail.txt", &format!("{what}-tail"), head.len()),
            ws.path(),
            &[],
        );
        let inputs = [format!("{what}-tail"), format!("{what}-head")];
        let o = merge(&ws, what, &["--out", &format!("{what}-merged")], &inputs);
        check(o.status.code() == Some(2), || format!("{what}: {o:?}"))?;
        let want = tree(&ws.path().join(format!("{what}-all")));
        check(
            want.keys().any(|k| k.to_string_lossy().contains("0024-")),
            || format!("{what}: {:?}", want.keys().collect::<Vec<_>>()),
        )?;
        check(
            tree(&ws.path().join(format!("{what}-merged"))) == want,
            || format!("{what}: the slices do not merge to the whole run"),
        )?;
    }
    Ok(())
}

fn shard_from_env_is_shard_k_of_n() -> Result<(), Failed> {
    let ws = Workspace::new(3, 30);
    for k in 0..3 {
        let by_flag = run(&with(SCAN, &[format!("--shard={k}/3")]), ws.path(), &[]);
        let index = k.to_string();
        let by_env = run(
            &with(SCAN, &strings(&["--shard-from-env", "3"])),
            ws.path(),
            &[("JOB_COMPLETION_INDEX", &index)],
        );
        check(
            by_env.stdout == by_flag.stdout && !by_flag.stdout.is_empty(),
            || format!("shard {k}: {by_env:?} vs {by_flag:?}"),
        )?;
    }
    let missing = run(
        &with(SCAN, &strings(&["--shard-from-env", "3"])),
        ws.path(),
        &[],
    );
    let bad = run(
        &with(SCAN, &strings(&["--shard-from-env", "3"])),
        ws.path(),
        &[("JOB_COMPLETION_INDEX", "3")],
    );
    let flag = run(&with(SCAN, &strings(&["--shard", "2/2"])), ws.path(), &[]);
    for (o, says) in [
        (missing, "JOB_COMPLETION_INDEX is not set"),
        (bad, "shard 3 of 3 does not exist"),
        (flag, "shard 2 of 2 does not exist"),
    ] {
        check(
            o.status.code() == Some(2) && String::from_utf8_lossy(&o.stderr).contains(says),
            || format!("{says}: {o:?}"),
        )?;
    }
    Ok(())
}

fn merged_scan_matches_the_oracle() -> Result<Completion, Failed> {
    let oracle = match oracle_or_skip() {
        Ok(o) => o,
        Err(outcome) => return outcome,
    };
    let ws = Workspace::new(7, 40);
    let files = stream_shards(&ws, SCAN, 7, "oracle")?;
    let merged = merge(&ws, "scan", &[], &files);
    // The oracle raises on the broken root's project file: compare the others.
    let good: Vec<&String> = ws.roots.iter().filter(|r| !r.ends_with("r005")).collect();
    let o = command(&oracle)
        .args(["--project-config", "--env-defaults", "--"])
        .args(&good)
        .current_dir(ws.path())
        .output()?;
    check(o.status.success(), || {
        String::from_utf8_lossy(&o.stderr).into_owned()
    })?;
    let merged = common::as_oracle_prints(&merged.stdout);
    let ours: Vec<&[u8]> = merged
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| !l.starts_with(b"{\"root\":\"repos/r005\""))
        .collect();
    let want: Vec<&[u8]> = o.stdout.split_inclusive(|&b| b == b'\n').collect();
    check(ours.len() == ws.roots.len() - 1 && ours == want, || {
        format!(
            "merged scan and oracle differ ({} and {} lines)",
            ours.len(),
            want.len()
        )
    })?;
    Ok(Completion::Completed)
}

/// A path from raw bytes.
fn raw(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(bytes.to_vec()))
}

/// A random list of roots in `dir` (written to `roots.txt`, returned as
/// bytes): names that are not UTF-8, among them pairs that print alike
/// beside the literal U+FFFD rendering of both; roots listed more than
/// once; and by chance a root that is not a directory, one that does not
/// exist and one whose project file is broken.
fn random_roots(rng: &mut Rng, dir: &Path) -> Vec<Vec<u8>> {
    let mut roots: Vec<Vec<u8>> = Vec::new();
    for i in 0..4 + rng.below(8) {
        let names: Vec<Vec<u8>> = match rng.below(4) {
            0 => vec![format!("plain {i}").into_bytes()],
            1 => vec![format!("nest/r{i}").into_bytes()],
            _ => {
                let stem = format!("u{i}").into_bytes();
                let mut twins = vec![[&stem[..], b"\xff"].concat(), [&stem[..], b"\xfe"].concat()];
                if rng.chance(60) {
                    twins.push([&stem[..], "\u{fffd}".as_bytes()].concat());
                }
                twins
            }
        };
        for name in names {
            random_tree(rng, &dir.join(raw(&name)));
            roots.push(name);
        }
    }
    if rng.chance(50) {
        fs::write(dir.join("a-file"), "x").unwrap();
        roots.push(b"a-file".to_vec());
    }
    if rng.chance(50) {
        roots.push(b"missing\xff".to_vec());
    }
    if rng.chance(40) {
        let broken = roots[rng.below(roots.len())].clone();
        let config = dir
            .join(raw(&broken))
            .join(".a0proj/plugins/_promptinclude");
        if fs::create_dir_all(&config).is_ok() {
            fs::write(config.join("config.json"), "{\"max_depth\": [3]}\n").unwrap();
        }
    }
    for _ in 0..1 + rng.below(3) {
        let again = roots[rng.below(roots.len())].clone();
        let at = rng.below(roots.len() + 1);
        roots.insert(at, again);
    }
    let list: Vec<u8> = roots
        .iter()
        .flat_map(|r| [&r[..], b"\n"].concat())
        .collect();
    fs::write(dir.join("roots.txt"), list).unwrap();
    roots
}

/// The property behind `merge`: for any root list (bytes that are not
/// UTF-8, duplicates, roots that fail or are not directories) split over
/// any number of shards, merging the shard outputs in any order gives the
/// bytes and the exit status of one unsharded run, for all four commands.
fn any_split_of_any_root_list_merges_to_the_unsharded_run() -> Result<(), Failed> {
    let mut rng = Rng::new(crate::common::fresh_seed("PROMPTINCLUDE_SHARD_SEED"));
    for round in 0..3 {
        let dir = tempfile::tempdir()?;
        let ws = Workspace {
            dir,
            roots: Vec::new(),
        };
        let roots = random_roots(&mut rng, ws.path());
        let n = 1 + rng.below(5);
        let context = || format!("round {round}, {} roots, {n} shards", roots.len());
        for (what, base) in [("scan", SCAN), ("audit", AUDIT)] {
            let whole = run(&strings(base), ws.path(), &[]);
            let mut files = stream_shards(&ws, base, n, what)?;
            files.reverse();
            let merged = merge(&ws, what, &[], &files);
            same_output(what, n, &merged, &whole)
                .map_err(|e| format!("{}: {}", context(), e.message().unwrap_or_default()))?;
        }
        for what in ["render", "bundle"] {
            let flag = if what == "render" {
                "--out-dir"
            } else {
                "--out"
            };
            let args = |out: &str| strings(&[what, "--roots-from", "roots.txt", flag, out]);
            let whole = run(&args("whole"), ws.path(), &[]);
            let mut dirs = Vec::new();
            for k in 0..n {
                let out = format!("{what}-{k}");
                let mut a = args(&out);
                a.push(format!("--shard={k}/{n}"));
                run(&a, ws.path(), &[]);
                dirs.push(out);
            }
            dirs.reverse();
            let o = merge(&ws, what, &["--out", "merged"], &dirs);
            check(o.status.code() == whole.status.code(), || {
                format!(
                    "{}: {what}: merge exit {:?}, unsharded {:?}: {}",
                    context(),
                    o.status.code(),
                    whole.status.code(),
                    String::from_utf8_lossy(&o.stderr)
                )
            })?;
            let (got, want) = (
                tree(&ws.path().join("merged")),
                tree(&ws.path().join("whole")),
            );
            check(got == want, || {
                format!("{}: {what}: the merged files differ", context())
            })?;
            if what == "bundle" {
                let o = run(&strings(&["verify", "merged"]), ws.path(), &[]);
                check(
                    String::from_utf8_lossy(&o.stdout).contains("verify: 0 of"),
                    || format!("{}: verify of the merged bundle: {o:?}", context()),
                )?;
            }
            fs::remove_dir_all(ws.path().join("merged"))?;
            fs::remove_dir_all(ws.path().join("whole"))?;
        }
    }
    Ok(())
}

fn main() {
    run_trials(vec![
        Trial::test(
            "scan_and_audit_shards_merge_to_the_unsharded_run",
            scan_and_audit_shards_merge_to_the_unsharded_run,
        ),
        Trial::test(
            "render_and_bundle_shards_merge_to_the_unsharded_run",
            render_and_bundle_shards_merge_to_the_unsharded_run,
        ),
        Trial::test(
            "consecutive_slices_with_list_offset_merge_to_the_whole_run",
            consecutive_slices_with_list_offset_merge_to_the_whole_run,
        ),
        Trial::test(
            "any_split_of_any_root_list_merges_to_the_unsharded_run",
            any_split_of_any_root_list_merges_to_the_unsharded_run,
        ),
        Trial::test(
            "shard_from_env_is_shard_k_of_n",
            shard_from_env_is_shard_k_of_n,
        ),
        Trial::ignorable_test(
            "merged_scan_matches_the_oracle",
            merged_scan_matches_the_oracle,
        ),
    ])
}
