"""promptinclude.dask against the single-process command line (issue #14).

    PROMPTINCLUDE_BIN=target/release/promptinclude python python/bench/bench_dask.py

Generates (once, under /tmp/promptinclude-dask-bench) 2,000 roots of ~60
files each with 3 rule files, then:

* speed: `promptinclude scan --roots-from LIST` against `run_batch` on a
  running LocalCluster of 2 worker processes (1 thread each), same output
  checked identical, median of RUNS interleaved runs; the cluster's start-up
  is reported apart;
* client memory: peak RSS of `python -m promptinclude.dask --scheduler ADDR
  scan` for 2,000 and 20,000 roots (the list ten times), output to /dev/null.
"""

import io
import os
import random
import statistics
import subprocess
import sys
import time

from distributed import Client, LocalCluster

import promptinclude.dask as pdask

BASE = "/tmp/promptinclude-dask-bench"
ROOTS = 2000
RUNS = int(os.environ.get("RUNS", "5"))


def generate():
    lists = os.path.join(BASE, "roots-2k.txt"), os.path.join(BASE, "roots-20k.txt")
    if all(os.path.exists(p) for p in lists):
        return lists
    rng = random.Random(2000)
    names = []
    for i in range(ROOTS):
        root = os.path.join(BASE, "repos", f"repo{i:04d}")
        for d in range(6):
            sub = os.path.join(root, f"src{d}", "pkg")
            os.makedirs(sub, exist_ok=True)
            for f in range(10):
                with open(os.path.join(sub, f"m{f}.py"), "w") as fh:
                    fh.write("x = 1\n" * rng.randrange(1, 20))
        for r in range(3):
            path = os.path.join(root, f"src{r}", f"rule{r}.promptinclude.md")
            with open(path, "w") as fh:
                fh.write(" ".join(rng.choice(["use", "tabs", "never", "always", "the", "rule"])
                                  for _ in range(rng.randrange(20, 400))))
        names.append(root)
    with open(lists[0], "w") as fh:
        fh.write("\n".join(names) + "\n")
    with open(lists[1], "w") as fh:
        fh.write(("\n".join(names) + "\n") * 10)
    return lists


def peak_rss_mib(argv):
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    assert status == 0, status
    return usage.ru_maxrss / 1024


def main():
    binary = pdask.find_binary()
    small, big = generate()
    t0 = time.perf_counter()
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    startup = time.perf_counter() - t0
    want = subprocess.run([binary, "scan", "--roots-from", small], capture_output=True, check=True).stdout
    cli_times, dask_times = [], []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        subprocess.run([binary, "scan", "--roots-from", small], stdout=subprocess.DEVNULL, check=True)
        cli_times.append(time.perf_counter() - t0)
        out = io.BytesIO()
        with open(small, "rb") as f:
            t0 = time.perf_counter()
            pdask.run_batch(client, "scan", [], (line.rstrip(b"\n") for line in f), out)
            dask_times.append(time.perf_counter() - t0)
        assert out.getvalue() == want, "outputs differ"
    cli, dask = statistics.median(cli_times), statistics.median(dask_times)
    print(f"{ROOTS} roots: CLI {cli * 1000:.0f} ms, Dask (2 workers) {dask * 1000:.0f} ms, "
          f"ratio {dask / cli:.2f}x (medians of {RUNS}); cluster start-up {startup:.1f} s")
    address = cluster.scheduler_address
    cmd = [sys.executable, "-m", "promptinclude.dask", "--scheduler", address, "scan", "--roots-from"]
    rss_small, rss_big = peak_rss_mib(cmd + [small]), peak_rss_mib(cmd + [big])
    print(f"client peak RSS: {rss_small:.0f} MiB for {ROOTS} roots, {rss_big:.0f} MiB for {10 * ROOTS} "
          f"roots ({rss_big / rss_small:.2f}x)")
    client.close()
    cluster.close()


if __name__ == "__main__":
    main()
