"""promptinclude.dask on a real Dask LocalCluster of worker processes.

Its output must be exactly the command line's (scan, audit --json), also
when a worker process is killed mid-run; a resumed run redoes only the
missing partitions. Needs dask[distributed] (scripts/test-python installs
it) and the promptinclude binary (PROMPTINCLUDE_BIN, which
scripts/test-python sets).
"""

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import REQUIRE, unavailable
from randomtrees import random_tree

import promptinclude.dask as pdask

try:
    import distributed  # noqa: F401
except ImportError:
    if REQUIRE:
        raise
    pytest.skip("dask[distributed] is not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def binary():
    path = os.environ.get("PROMPTINCLUDE_BIN")
    if not path or not os.access(path, os.X_OK):
        unavailable("PROMPTINCLUDE_BIN does not name the promptinclude binary")
    return path


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """150 random roots, one with a broken project file, one not a
    directory, one given twice; `roots.txt` lists them."""
    base = tmp_path_factory.mktemp("dask")
    rng = random.Random(14)
    roots = []
    for i in range(150):
        name = f"repos/r{i:03d}"
        random_tree(rng, str(base / name))
        roots.append(name)
    config = base / roots[7] / ".a0proj/plugins/_promptinclude"
    config.mkdir(parents=True)
    (config / "config.json").write_text('{\n  "max_depth": [3]\n}\n')
    (base / "repos/not-a-dir").write_text("x")
    roots.append("repos/not-a-dir")
    roots.insert(40, roots[3])
    (base / "roots.txt").write_text("\n".join(roots) + "\n")
    return base


def cli(binary, args, cwd):
    return subprocess.run([binary, *args], cwd=cwd, capture_output=True)


def dask_cli(args, cwd, binary):
    env = dict(os.environ, PROMPTINCLUDE_BIN=binary)
    return subprocess.run(
        [sys.executable, "-m", "promptinclude.dask", *args], cwd=cwd, capture_output=True, env=env
    )


AUDIT = ["--json", "--max-total-tokens", "300", "--fail-on", "cropped,warning"]


@pytest.mark.parametrize("command,options", [("scan", []), ("audit", AUDIT)])
def test_local_cluster_prints_what_the_cli_prints(binary, workspace, command, options):
    want = cli(binary, [command, *options, "--roots-from", "roots.txt"], workspace)
    assert want.returncode == 2, want.stderr  # the broken root
    got = dask_cli(
        ["--local-workers", "2", "--partition-size", "16", command, *options, "--roots-from", "roots.txt"],
        workspace,
        binary,
    )
    assert got.stdout == want.stdout, got.stderr.decode()
    assert got.returncode == want.returncode
    assert len(got.stdout.splitlines()) == 152 + (command == "audit")
    # Each root's error and warning lines on stderr, as the command line prints them.
    assert b"error: root repos/r007:" in got.stderr


def tree(directory):
    out = {}
    for dirpath, _, files in os.walk(directory):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, directory)] = f.read()
    return out


def test_local_cluster_writes_the_cli_bundle(binary, workspace):
    want = cli(binary, ["bundle", "--out", "bundle-cli", "--roots-from", "roots.txt"], workspace)
    assert want.returncode == 2, want.stderr
    got = dask_cli(
        ["--local-workers", "2", "--partition-size", "16", "bundle", "--out", "bundle-dask",
         "--roots-from", "roots.txt"],
        workspace,
        binary,
    )
    assert got.returncode == want.returncode, got.stderr.decode()
    expected = tree(workspace / "bundle-cli")
    assert len(expected) > 2 * 150
    assert tree(workspace / "bundle-dask") == expected
    # Only the bundle is left: the partitions' directories are gone.
    assert not [n for n in os.listdir(workspace) if "promptinclude-parts" in n]


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    yield client
    client.close()
    cluster.close()


def test_scan_roots_yields_the_cli_records(binary, workspace, cluster):
    roots = (workspace / "roots.txt").read_text().split()
    want = cli(binary, ["scan", "--roots-from", "roots.txt"], workspace).stdout
    got = list(pdask.scan_roots(cluster, roots, binary=binary, partition_size=10, cwd=str(workspace)))
    assert got == [json.loads(line) for line in want.splitlines()]
    assert got[7]["error"]["key"] == "max_depth"


def test_the_client_merges_the_bundle_in_process(binary, workspace, cluster, monkeypatch):
    """The partitions' bundles are merged by the library in the client: no
    `promptinclude merge` process, and the bundle is the command line's."""
    want = cli(binary, ["bundle", "--out", "bundle-cli-2", "--roots-from", "roots.txt"], workspace)
    assert want.returncode == 2, want.stderr
    started = []
    real_run = subprocess.run

    def run(argv, *args, **kwargs):
        started.append(list(argv))
        return real_run(argv, *args, **kwargs)

    monkeypatch.setattr(pdask.subprocess, "run", run)
    roots = (workspace / "roots.txt").read_text().split()
    out = open(os.devnull, "wb")
    status = pdask.run_batch(
        cluster, "bundle", [], roots, out, binary=binary, partition_size=16,
        cwd=str(workspace), bundle_out="bundle-inproc",
    )
    assert status == want.returncode
    assert not [argv for argv in started if "merge" in argv]
    assert tree(workspace / "bundle-inproc") == tree(workspace / "bundle-cli-2")


def test_merge_bundle_refuses_bundles_of_other_settings(binary, workspace, tmp_path):
    from promptinclude import _native

    (tmp_path / "a.txt").write_text("repos/r000\n")
    (tmp_path / "b.txt").write_text("repos/r001\n")
    (tmp_path / "ab.txt").write_text("repos/r000\nrepos/r001\n")
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli(binary, ["bundle", "--out", str(a), "--roots-from", str(tmp_path / "a.txt")], workspace).returncode == 0
    made = cli(binary, ["bundle", "--max-depth", "2", "--out", str(b), "--roots-from", str(tmp_path / "b.txt")], workspace)
    assert made.returncode == 0, made.stderr
    with pytest.raises(ValueError, match="written by another tool version or with other settings"):
        _native.merge_bundle(str(tmp_path / "ab.txt"), [str(a), str(b)], str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
    # A root in none of the bundles: the merge names the list and the root.
    with pytest.raises(ValueError, match=r"ab\.txt:2: root repos/r001 is in none of the inputs|roots are in none"):
        _native.merge_bundle(str(tmp_path / "ab.txt"), [str(a)], str(tmp_path / "out"))
    # Matching bundles merge, with the run's exit status.
    assert _native.merge_bundle(str(tmp_path / "a.txt"), [str(a)], str(tmp_path / "out")) == 0
    assert tree(tmp_path / "out") == tree(a)


def test_a_bad_option_fails_the_run_with_the_cli_message(binary, workspace, cluster):
    with pytest.raises(pdask.PartitionError, match="no-such-file.yaml"):
        list(
            pdask.scan_roots(
                cluster, ["repos/r000"], binary=binary, options=["--config", "no-such-file.yaml"],
                cwd=str(workspace),
            )
        )


def slow_binary(tmp_path, binary, log):
    """A wrapper that logs each partition run and takes 0.3 s longer."""
    wrapper = tmp_path / "slow-promptinclude"
    wrapper.write_text(f'#!/bin/sh\necho run >> "{log}"\nsleep 0.3\nexec "{binary}" "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def test_a_worker_killed_mid_run_changes_nothing(binary, workspace, cluster, tmp_path):
    want = cli(binary, ["scan", "--roots-from", "roots.txt"], workspace).stdout
    slow = slow_binary(tmp_path, binary, tmp_path / "runs.log")
    roots = (workspace / "roots.txt").read_text().split()
    results = pdask.scan_roots(cluster, roots, binary=slow, partition_size=8, cwd=str(workspace))
    got = [next(results)]  # the run is under way: tasks are on both workers
    deadline = time.time() + 30
    victim = None
    while victim is None and time.time() < deadline:
        busy = [w for w, keys in cluster.processing().items() if keys]
        if busy:
            victim = busy[0]
        else:
            time.sleep(0.02)
    assert victim is not None, "no worker was processing a task"
    pid = cluster.run(os.getpid, workers=[victim])[victim]
    os.kill(pid, signal.SIGKILL)
    got.extend(results)
    assert [json.dumps(r) for r in got] == [json.dumps(json.loads(line)) for line in want.splitlines()]
    # The worker really died (its nanny starts a new process).
    assert pid not in cluster.run(os.getpid, on_error="ignore").values()


def test_resume_redoes_only_missing_partitions(binary, workspace, tmp_path):
    log = tmp_path / "runs.log"
    slow = slow_binary(tmp_path, binary, log)
    out = tmp_path / "parts"
    args = ["--local-workers", "2", "--bin", slow, "--partition-size", "20", "--out", str(out),
            "audit", *AUDIT, "--roots-from", "roots.txt"]
    want = cli(binary, ["audit", *AUDIT, "--roots-from", "roots.txt"], workspace)
    first = dask_cli(args, workspace, binary)
    assert first.stdout == want.stdout, first.stderr.decode()
    parts = sorted(p for p in os.listdir(out) if p.startswith("part-"))
    assert len(parts) == 8  # 152 roots / 20
    assert len(log.read_text().split()) == 8
    for name in parts[2:5]:
        os.unlink(out / name)
    log.write_text("")
    again = dask_cli(args, workspace, binary)
    assert again.stdout == want.stdout and again.returncode == want.returncode
    assert len(log.read_text().split()) == 3
    # Another command or other roots refuse the directory instead of mixing runs.
    other = dask_cli([*args[:-2], "--roots-from", "repos/../roots.txt", "--max-depth", "2"], workspace, binary)
    assert other.returncode == 2 and b"another run" not in other.stdout
    assert b"partitions of another run" in other.stderr
