#!/usr/bin/env python3
"""The package against the real reference scanner and the CLI, in one run.

    python bench_vs_reference.py [--runs N] [--work DIR] [--bin PROMPTINCLUDE] [--gen GEN_WORKLOAD]

Workloads (made once under --work by the repository's `gen_workload` example:
`cargo build --release --bin promptinclude --example gen_workload`):
  W1  a monorepo: 152k files, 17.7k directories, ignored trees, 30+ rule files;
  W2  200 repositories of ~2k files each.
Every side does the same work: the plugin's default configuration (what Agent
Zero passes; `promptinclude.DEFAULT_CONFIG`, the CLI's default). Results are
checked identical first (package == reference as Python objects; package ==
CLI JSON). Times are wall-clock medians; the package and the reference run in
this process, the CLI as a subprocess (start-up and JSON output included).
With the walk's floor built (`cargo build --release --example syscall_floor`:
the same directories listed with nothing but openat + getdents64 + close, on
as many threads), it is timed too, and `reference / floor` is printed: the
most any scanner that lists those directories could be ahead of the reference
on this machine.
Needs the reference (PYTHONPATH with ../shared/reference/agent-zero) and
TIKTOKEN_CACHE_DIR as scripts/test-python sets them; without it, only the
package and the CLI are compared.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings

import promptinclude

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TARGET = os.environ.get("CARGO_TARGET_DIR") or os.path.join(REPO, "target")


def timed(fn, runs):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def generate(gen, work):
    w1, w2 = os.path.join(work, "W1"), os.path.join(work, "W2")
    listing = w2 + ".roots"
    if not os.path.isdir(w1):
        print(f"generating W1 in {w1} ...", file=sys.stderr)
        subprocess.run([gen, "W1", w1], check=True, stdout=subprocess.DEVNULL)
    if not os.path.exists(listing):
        print(f"generating W2 in {w2} ...", file=sys.stderr)
        out = subprocess.run([gen, "W2", w2], check=True, stdout=subprocess.PIPE).stdout
        with open(listing + ".tmp", "wb") as fh:
            fh.write(out)
        os.replace(listing + ".tmp", listing)
    return w1, listing


def load_reference():
    try:
        warnings.simplefilter("ignore", DeprecationWarning)
        from plugins._promptinclude.helpers.scanner import scan_promptinclude_files
        from helpers import tokens

        tokens.count_tokens("probe")
        return scan_promptinclude_files
    except Exception as e:  # noqa: BLE001
        print(f"reference unavailable ({type(e).__name__}: {e}); comparing package and CLI only",
              file=sys.stderr)
        return None


def cli_results(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE).stdout.decode()
    return [{"files": r["files"], "skipped_count": r["skipped_count"]}
            for r in map(json.loads, out.splitlines())]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", default="/tmp/promptinclude-pybench")
    ap.add_argument("--bin", default=os.path.join(TARGET, "release", "promptinclude"))
    ap.add_argument("--gen", default=os.path.join(TARGET, "release", "examples", "gen_workload"))
    ap.add_argument("--floor", default=os.path.join(TARGET, "release", "examples", "syscall_floor"))
    args = ap.parse_args()
    w1, listing = generate(args.gen, args.work)
    roots = open(listing).read().split()
    cfg = promptinclude.DEFAULT_CONFIG
    reference = load_reference()

    pkg_w1 = lambda: promptinclude.scan_promptinclude_files(w1, **cfg)  # noqa: E731
    pkg_w2 = lambda: promptinclude.scan_many(roots, cfg)  # noqa: E731
    pkg_w2_loop = lambda: [promptinclude.scan_promptinclude_files(r, **cfg) for r in roots]  # noqa: E731
    cli_w1 = [args.bin, "scan", w1]
    cli_w2 = [args.bin, "scan", "--roots-from", listing]
    run_cli = lambda cmd: (lambda: subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL))  # noqa: E731
    has_floor = os.path.exists(args.floor)
    if not has_floor:
        print(f"no walk floor at {args.floor}; build it with "
              "`cargo build --release --example syscall_floor`", file=sys.stderr)
    floor_w1 = [args.floor, w1] if has_floor else None
    floor_w2 = [args.floor, "--roots-from", listing] if has_floor else None

    # Same answers first (also warms caches).
    assert [pkg_w1()] == cli_results(cli_w1), "W1: package != CLI"
    assert pkg_w2() == cli_results(cli_w2), "W2: package != CLI"
    assert pkg_w2() == pkg_w2_loop()
    if reference:
        assert pkg_w1() == reference(w1, **cfg), "W1: package != reference"
        assert pkg_w2() == [reference(r, **cfg) for r in roots], "W2: package != reference"

    rows = []
    for name, pkg, cli, ref, floor in [
        ("W1 monorepo (1 root)", pkg_w1, cli_w1, (lambda: reference(w1, **cfg)) if reference else None,
         floor_w1),
        ("W2 200 roots, scan_many", pkg_w2, cli_w2,
         (lambda: [reference(r, **cfg) for r in roots]) if reference else None, floor_w2),
        ("W2 200 roots, a loop of single calls", pkg_w2_loop, cli_w2, None, None),
    ]:
        # Interleaved, so that load from elsewhere hits every side alike.
        times = {"ref": [], "pkg": [], "cli": [], "floor": []}
        for i in range(args.runs):
            if ref and i < max(1, args.runs // 2):
                times["ref"].append(timed(ref, 1))
            times["pkg"].append(timed(pkg, 1))
            times["cli"].append(timed(run_cli(cli), 1))
            if floor:
                times["floor"].append(timed(run_cli(floor), 1))
        med = {k: statistics.median(v) if v else None for k, v in times.items()}
        rows.append((name, med["ref"], med["pkg"], med["cli"], med["floor"]))

    ms = lambda t, digits=1: f"{t * 1000:.{digits}f} ms" if t else "–"  # noqa: E731
    ratio = lambda a, b, digits=1: f"{a / b:.{digits}f}×" if a and b else "–"  # noqa: E731
    print("| workload | identical | reference | package | CLI | walk floor | reference / package "
          "| reference / floor | package / floor | package / CLI |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, t_ref, t_pkg, t_cli, t_floor in rows:
        print(f"| {name} | yes | {ms(t_ref, 0)} | {ms(t_pkg)} | {ms(t_cli)} | {ms(t_floor)} "
              f"| {ratio(t_ref, t_pkg)} | {ratio(t_ref, t_floor)} | {ratio(t_pkg, t_floor, 2)} "
              f"| {ratio(t_pkg, t_cli, 2)} |")


if __name__ == "__main__":
    main()
