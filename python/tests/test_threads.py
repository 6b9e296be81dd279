"""The GIL is released while scanning: other Python threads keep running."""

import os
import threading
import time

import promptinclude


def big_tree(root, dirs=400, files_per_dir=40):
    for d in range(dirs):
        sub = os.path.join(root, f"pkg{d % 20}", f"mod{d}")
        os.makedirs(sub, exist_ok=True)
        for f in range(files_per_dir):
            with open(os.path.join(sub, f"file{f}.py"), "w") as fh:
                fh.write("x = 1\n")
        if d % 10 == 0:
            with open(os.path.join(sub, "rules.promptinclude.md"), "w") as fh:
                fh.write("rule text " * 50)


def test_python_thread_keeps_ticking_during_scan_many(tmp_path):
    big_tree(str(tmp_path))
    roots = [str(tmp_path)] * 40
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    thread = threading.Thread(target=ticker)
    thread.start()
    time.sleep(0.02)
    try:
        start = time.perf_counter()
        results = promptinclude.scan_many(roots)
        end = time.perf_counter()
    finally:
        stop.set()
        thread.join()
    assert len(results) == len(roots) and results[0] == results[-1]
    during = [t for t in ticks if start <= t <= end]
    elapsed = end - start
    assert elapsed > 0.05, f"the workload is too small to tell ({elapsed:.3f} s)"
    # With the GIL held for the whole call the ticker could not run at all.
    assert len(during) >= max(5, elapsed / 0.001 / 10), (len(during), elapsed)
    # And no gap in the ticks is anywhere near the whole call.
    gaps = [b - a for a, b in zip(during, during[1:])]
    assert max(gaps, default=elapsed) < elapsed / 2, (max(gaps), elapsed)


def test_parallel_calls_from_threads_agree(tmp_path):
    big_tree(str(tmp_path), dirs=60)
    expected = promptinclude.scan_promptinclude_files(str(tmp_path))
    out = [None] * 8

    def work(i):
        out[i] = promptinclude.scan_promptinclude_files(str(tmp_path))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in out)
