#!/usr/bin/env python3
"""promptinclude.Index against the fresh scan, on an unchanged tree, in one run.

    python bench_index.py [--runs N] [--work DIR] [--gen GEN_WORKLOAD] [--only W1,repo2k]

Workloads (made once under --work):
  W1      the monorepo of benches/support/workload.rs (152k files, 17.7k directories),
          made by the repository's `gen_workload` example
          (`cargo build --release --example gen_workload`);
  repo2k  one repository of ~2,000 files in ~230 directories (made here, fixed seed),
          with an ignored node_modules and .git, 12 rule files.
Both sides scan the same root with the plugin's default configuration
(`promptinclude.DEFAULT_CONFIG`, what Agent Zero passes), in this process. The
index is made and scanned once first (a full scan, not timed; `first scan` below
is that one); then, alternately, `Index.scan()` and `scan_promptinclude_files` run
on the unchanged tree. Printed: medians, the ratio fresh / index (target >= 100),
the index's stats for the last scan (nothing listed, nothing read), and the time of
an index scan after one rule file changed.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

import promptinclude

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")


def make_repo2k(root):
    """~2,000 files, fixed seed: src/ packages, tests, docs, an ignored node_modules
    and .git, a dozen rule files."""
    rng = random.Random(2026)
    tmp = root + ".tmp"
    if os.path.exists(tmp):
        subprocess.run(["rm", "-rf", tmp], check=True)
    files = 0
    dirs = [os.path.join(tmp, p) for p in ["src", "tests", "docs", "scripts"]]
    while files < 1500:
        parent = rng.choice(dirs)
        d = os.path.join(parent, f"m{len(dirs)}")
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
        for f in range(rng.randrange(3, 12)):
            with open(os.path.join(d, f"f{f}.py"), "w") as fh:
                fh.write(f"x = {f}\n" * rng.randrange(1, 30))
            files += 1
    for ignored in ["node_modules/pkg", ".git/objects"]:
        for i in range(25):
            d = os.path.join(tmp, ignored, f"d{i}")
            os.makedirs(d)
            for f in range(20):
                with open(os.path.join(d, f"f{f}.js"), "w") as fh:
                    fh.write("module.exports = 1;\n")
    for d in [tmp] + rng.sample(dirs, 11):
        with open(os.path.join(d, "rules.promptinclude.md"), "w") as fh:
            fh.write("Keep functions small. Prefer tabs. " * rng.randrange(5, 60))
    os.replace(tmp, root)


def generate(gen, work, only):
    roots = {}
    if "W1" in only:
        w1 = os.path.join(work, "W1")
        if not os.path.isdir(w1):
            if not os.path.exists(gen):
                sys.exit(f"no workload generator at {gen}: "
                         "cargo build --release --example gen_workload")
            print(f"generating W1 in {w1} ...", file=sys.stderr)
            subprocess.run([gen, "W1", w1], check=True, stdout=subprocess.DEVNULL)
        roots["W1"] = w1
    if "repo2k" in only:
        r = os.path.join(work, "repo2k")
        if not os.path.isdir(r):
            print(f"generating repo2k in {r} ...", file=sys.stderr)
            make_repo2k(r)
        roots["repo2k"] = r
    return roots


def timed(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def fmt(t):
    return f"{t * 1e3:.3f} ms" if t >= 1e-3 else f"{t * 1e6:.1f} µs"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7, help="fresh scans per workload (default 7)")
    ap.add_argument("--index-runs", type=int, default=200,
                    help="index scans per workload (default 200)")
    ap.add_argument("--work", default="/tmp/promptinclude-pybench")
    ap.add_argument("--gen", default=os.path.join(TARGET, "release", "examples", "gen_workload"))
    ap.add_argument("--only", default="W1,repo2k")
    args = ap.parse_args()
    roots = generate(args.gen, args.work, args.only.split(","))
    cfg = promptinclude.DEFAULT_CONFIG
    worst = None
    for name, root in roots.items():
        fresh = lambda: promptinclude.scan_promptinclude_files(root, **cfg)  # noqa: E731
        start = time.perf_counter()
        index = promptinclude.Index(root, **cfg)
        first = index.scan()
        first_time = time.perf_counter() - start
        assert first == fresh(), f"{name}: index != fresh scan"
        files = len(first["files"])
        # Alternately: every fresh scan between index scans (noise hits both alike).
        fresh_times, index_times = [], []
        per_round = max(1, args.index_runs // args.runs)
        for _ in range(args.runs):
            fresh_times.append(timed(fresh))
            for _ in range(per_round):
                index_times.append(timed(index.scan))
        assert index.scan() == fresh(), f"{name}: index != fresh scan"
        stats = index.stats()
        assert stats["last_dirs_listed"] == 0 and stats["last_files_read"] == 0, stats
        f_med, i_med = statistics.median(fresh_times), statistics.median(index_times)
        ratio = f_med / i_med
        worst = ratio if worst is None else min(worst, ratio)
        # One rule file changed: lists nothing, reads one file.
        rule = first["files"][0]["path"] if first["files"] else None
        changed = None
        if rule:
            with open(rule, encoding="utf-8", errors="surrogateescape") as fh:
                original = fh.read()
            try:
                with open(rule, "w", encoding="utf-8", errors="surrogateescape") as fh:
                    fh.write(original + "\nOne more rule.\n")
                changed = timed(index.scan)
                changed_stats = index.stats()
                assert index.scan() == fresh()
            finally:
                with open(rule, "w", encoding="utf-8", errors="surrogateescape") as fh:
                    fh.write(original)
                index.scan()
        print(f"{name}: {root} ({files} rule files in the result, "
              f"{stats['kept_dirs']} directories kept, {stats['watches']} watched)")
        print(f"  scan_promptinclude_files (fresh)  median {fmt(f_med)}  "
              f"(min {fmt(min(fresh_times))}, {len(fresh_times)} runs)")
        print(f"  Index.scan() unchanged            median {fmt(i_med)}  "
              f"(min {fmt(min(index_times))}, {len(index_times)} runs)")
        print(f"  ratio fresh / index: {ratio:.0f}x  (target >= 100x)")
        print(f"  first scan (Index made + full scan): {fmt(first_time)}")
        if changed is not None:
            print(f"  Index.scan() after one rule file changed: {fmt(changed)} "
                  f"(dirs listed {changed_stats['last_dirs_listed']}, "
                  f"files read {changed_stats['last_files_read']})")
        print(f"  stats: scans {stats['scans']}, unchanged {stats['unchanged']}, "
              f"fallbacks {({k: v for k, v in stats['fallbacks'].items() if v}) or 'none'}")
    if worst is not None:
        print(f"smallest ratio: {worst:.0f}x ({'meets' if worst >= 100 else 'BELOW'} the 100x target)")


if __name__ == "__main__":
    main()
