"""Run promptinclude batches on a Dask distributed cluster.

::

    python -m promptinclude.dask --local-workers 2 scan --roots-from roots.txt > scan.jsonl
    python -m promptinclude.dask --scheduler tcp://HOST:8786 audit --json --roots-from roots.txt
    python -m promptinclude.dask --local-workers 2 bundle --out prompt-bundle --roots-from roots.txt

prints exactly what ``promptinclude scan --roots-from roots.txt`` (or
``promptinclude audit --json ...``) prints, with the same exit status
(``bundle`` writes the bundle ``promptinclude bundle`` writes: each partition
bundles its roots into a directory beside it, which the workers must be able
to write, and the library's ``merge bundle`` makes the one bundle, in this process). The
roots are cut into partitions of ``--partition-size`` roots (256 by default);
each partition is one Dask task, which runs the ``promptinclude`` binary on
its roots in a worker (a subprocess: the GIL is free and every option of the
command line works as documented there). Results come back and are written in
input order as soon as they and all before them are in; at most a window of
partitions (two per worker thread) is in flight, so the client's memory does
not grow with the number of roots. A worker that dies mid-task has its tasks
run again elsewhere by the scheduler; a root that fails gets its error record
(as on the command line), never a lost task. With ``--out DIR`` each finished
partition is kept in DIR, and a rerun of the same command does only the
missing ones.

The workers need the ``promptinclude`` binary (``--bin PATH``,
``$PROMPTINCLUDE_BIN``, the command installed with this package beside the
client's Python, or on ``PATH``) and the roots at the same paths as the
client (relative roots are taken from the client's working directory, which
must exist on the workers). ``scan_roots(client, roots)`` does the same from
your own Dask code and yields each root's result as a dict.

Needs ``dask[distributed]`` (``pip install "./python[dask]"``).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from typing import IO, Any, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from . import _native

__all__ = ["scan_roots", "run_batch", "run_partition", "PartitionError", "main", "DEFAULT_PARTITION_SIZE"]

#: Roots per task unless told otherwise.
DEFAULT_PARTITION_SIZE = 256

#: The commands the cluster runs.
COMMANDS = ("scan", "audit", "bundle")

#: Options that make no sense per partition.
REFUSED = ("--shard", "--shard-from-env", "--list-offset", "--html", "--html-include-content", "--out-dir")

PLAN_SCHEMA = "promptinclude.dask/1"

Root = Union[str, bytes, "os.PathLike[str]"]


class PartitionError(RuntimeError):
    """A partition's run of the binary failed as a whole (bad options, a
    missing binary, a crash): not one root's error, which is a record."""


def _installed_script() -> Optional[str]:
    """The ``promptinclude`` command installed with this package (its
    ``[project.scripts]`` entry): in the scripts directory of the running
    interpreter's environment, found without that environment on ``PATH``
    (a venv that was not activated)."""
    dirs = [sysconfig.get_path("scripts")]
    # A venv's python is a symlink: the directory it was called by, not its target's.
    if sys.executable:
        dirs.append(os.path.dirname(os.path.abspath(sys.executable)))
    for directory in dirs:
        if directory:
            found = shutil.which("promptinclude", path=directory)
            if found:
                return found
    return None


def find_binary(binary: Optional[str] = None) -> str:
    """The promptinclude command: ``binary``, ``$PROMPTINCLUDE_BIN``, the one
    installed with this package (beside this Python, on ``PATH`` or not), or
    the one on ``PATH``."""
    path = (
        binary
        or os.environ.get("PROMPTINCLUDE_BIN")
        or _installed_script()
        or shutil.which("promptinclude")
    )
    if not path:
        raise FileNotFoundError(
            "no promptinclude binary: give --bin PATH or PROMPTINCLUDE_BIN, or put it on PATH "
            "(pip install ./python installs it; or cargo install --locked --path .)"
        )
    return os.path.abspath(path) if os.sep in path else path


def run_partition(
    binary: str,
    command: str,
    options: Sequence[str],
    roots: bytes,
    count: int,
    cwd: str,
    bundle_dir: Optional[str] = None,
    offset: int = 0,
) -> Tuple[int, bytes, bytes]:
    """Runs ``binary command options --roots-from -`` on ``roots`` (one per
    line, ``count`` of them) in ``cwd``: (exit status, stdout, stderr). This
    is the task each worker runs. For ``bundle`` the partition's bundle goes
    to ``bundle_dir``, its files named from position ``offset`` of the whole
    list (``--list-offset``). Raises :class:`PartitionError` when the run
    failed as a whole (its output has not one record per root)."""
    argv = [binary, command, *options]
    if command == "bundle":
        argv += ["--out", str(bundle_dir), "--list-offset", str(offset)]
    argv += ["--roots-from", "-"]
    try:
        proc = subprocess.run(argv, input=roots, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
    except OSError as e:
        raise PartitionError(f"cannot run {binary} in {cwd}: {e}") from None
    if command == "bundle":
        try:
            with open(os.path.join(str(bundle_dir), "manifest.json"), "rb") as f:
                manifest = json.load(f)
            records = len(manifest["roots"]) + len(manifest.get("errors", []))
        except (OSError, ValueError, KeyError, TypeError):
            records = -1
    else:
        records = proc.stdout.count(b"\n") - (1 if command == "audit" else 0)
    if proc.returncode not in (0, 1, 2) or records != count:
        message = proc.stderr.decode("utf-8", "replace").strip()
        hint = " (roots go only in --roots-from)" if records > count else ""
        raise PartitionError(
            f"promptinclude {command} failed on a partition of {count} roots (exit status "
            f"{proc.returncode}, {max(records, 0)} records){hint}: {message}"
        )
    return proc.returncode, proc.stdout, proc.stderr


def _root_bytes(root: Root) -> bytes:
    root = os.fspath(root)
    return root if isinstance(root, bytes) else os.fsencode(root)


def _read_roots(stream: IO[bytes]) -> Iterator[bytes]:
    """Roots one per line, as the command line reads --roots-from (empty lines
    and a trailing ``\\r`` left out)."""
    for line in stream:
        line = line.rstrip(b"\n")
        if line.endswith(b"\r"):
            line = line[:-1]
        if line:
            yield line


def _partitions(roots: Iterable[bytes], size: int) -> Iterator[List[bytes]]:
    part: List[bytes] = []
    for root in roots:
        part.append(root)
        if len(part) == size:
            yield part
            part = []
    if part:
        yield part


Result = Tuple[int, bytes, bytes]


class _Store:
    """Finished partitions kept in a directory, for a rerun to resume."""

    def __init__(self, directory: str, plan: Dict[str, Any]):
        self.directory = directory
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "plan.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                try:
                    kept = json.load(f)
                except ValueError:
                    kept = None
            if kept != plan:
                raise ValueError(
                    f"{directory} holds the partitions of another run (other roots, command, options "
                    f"or partition size): give another --out, or remove it"
                )
        else:
            self._write(path, json.dumps(plan, indent=1).encode() + b"\n")

    def _path(self, index: int) -> str:
        return os.path.join(self.directory, f"part-{index:06d}.bin")

    def _write(self, path: str, data: bytes) -> None:
        fd, temp = tempfile.mkstemp(dir=self.directory, prefix=".promptinclude-tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, path)
        except BaseException:
            if os.path.exists(temp):
                os.unlink(temp)
            raise

    def has(self, index: int) -> bool:
        return os.path.exists(self._path(index))

    def save(self, index: int, result: Result) -> None:
        status, out, err = result
        header = json.dumps({"status": status, "stdout": len(out), "stderr": len(err)}).encode()
        self._write(self._path(index), header + b"\n" + out + err)

    def load(self, index: int) -> Result:
        path = self._path(index)
        with open(path, "rb") as f:
            data = f.read()
        header, _, rest = data.partition(b"\n")
        try:
            meta = json.loads(header)
            n = meta["stdout"]
            if len(rest) != n + meta["stderr"]:
                raise ValueError("sizes do not match")
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not a finished partition ({e}): remove it to redo it") from None
        return meta["status"], rest[:n], rest[n:]


def _part_dir(parts_dir: str, index: int) -> str:
    return os.path.join(parts_dir, f"part-{index:06d}")


def _window(client: Any) -> int:
    try:
        threads = sum(client.nthreads().values())
    except Exception:  # noqa: BLE001 - a scheduler that does not say: a small window
        threads = 1
    return max(2, 2 * threads)


def _stream(
    client: Any,
    command: str,
    options: Sequence[str],
    roots: Iterable[bytes],
    *,
    binary: str,
    partition_size: int,
    cwd: str,
    store: Optional[_Store] = None,
    window: Optional[int] = None,
    parts_dir: Optional[str] = None,
) -> Iterator[Tuple[int, Result]]:
    """(roots in the partition, result) per partition, in input order
    (``bundle`` writes partition K's bundle to ``parts_dir/part-K``)."""
    if partition_size < 1:
        raise ValueError("the partition size must be at least 1")
    window = window or _window(client)
    run = uuid.uuid4().hex
    parts = enumerate(_partitions(roots, partition_size))
    pending: collections.deque = collections.deque()
    exhausted = False
    try:
        while True:
            while not exhausted and len(pending) < window:
                item = next(parts, None)
                if item is None:
                    exhausted = True
                    break
                index, part = item
                if store is not None and store.has(index):
                    pending.append((index, len(part), None))
                    continue
                payload = b"".join(root + b"\n" for root in part)
                future = client.submit(
                    run_partition,
                    binary,
                    command,
                    list(options),
                    payload,
                    len(part),
                    cwd,
                    _part_dir(parts_dir, index) if parts_dir else None,
                    index * partition_size,
                    key=f"promptinclude-{command}-{run}-{index}",
                    pure=False,
                )
                pending.append((index, len(part), future))
            if not pending:
                return
            index, count, future = pending.popleft()
            if future is None:
                result = store.load(index)  # type: ignore[union-attr]
            else:
                result = future.result()
                future.release()
                if store is not None:
                    store.save(index, result)
            yield count, result
    finally:
        for _, _, future in pending:
            if future is not None:
                future.cancel()


def scan_roots(
    client: Any,
    roots: Iterable[Root],
    *,
    options: Sequence[str] = (),
    binary: Optional[str] = None,
    partition_size: int = DEFAULT_PARTITION_SIZE,
    cwd: Optional[str] = None,
) -> Iterator[Dict[str, Any]]:
    """Scans ``roots`` on the cluster of ``client`` and yields each root's
    result in input order: the dict ``json.loads`` makes of the line
    ``promptinclude scan`` prints (``{"root", "files", "skipped_count"}``, or
    ``{"root", "error"}`` for a root that failed; plus ``"root_hex"`` for a
    root whose name is not UTF-8 and ``"is_dir": False`` for one that is not
    a directory). ``options`` are
    command-line options of ``promptinclude scan`` (``["--config", "c.yaml"]``,
    ``["--rev", "HEAD"]``); relative roots are taken from ``cwd`` (default:
    the current directory), which must exist on the workers.

    Roots are read and results handed out lazily: memory does not grow with
    the number of roots.
    """
    stream = _stream(
        client,
        "scan",
        options,
        (_root_bytes(r) for r in roots),
        binary=find_binary(binary),
        partition_size=partition_size,
        cwd=cwd or os.getcwd(),
    )
    for _, (_, out, _) in stream:
        for line in out.splitlines():
            yield json.loads(line)


def run_batch(
    client: Any,
    command: str,
    options: Sequence[str],
    roots: Iterable[Root],
    out: IO[bytes],
    *,
    binary: Optional[str] = None,
    partition_size: int = DEFAULT_PARTITION_SIZE,
    cwd: Optional[str] = None,
    store: Optional[_Store] = None,
    progress: Optional["_Progress"] = None,
    bundle_out: Optional[str] = None,
) -> int:
    """Runs ``promptinclude COMMAND OPTIONS`` (``scan``, ``audit`` with
    ``--json``, or ``bundle`` into ``bundle_out``) over ``roots`` on the
    cluster of ``client`` and writes to ``out`` exactly what one such run
    over all the roots prints (``bundle``: writes the same bundle; its
    partitions' bundles, on a file system the workers and the client share,
    are merged in this process, by the library's ``merge bundle``); each partition's stderr
    goes to stderr. Returns that run's exit status."""
    status = 0
    summary: Optional[bytes] = None
    binary = find_binary(binary)
    cwd = cwd or os.getcwd()
    parts_dir = roots_file = None
    if command == "bundle":
        if not bundle_out:
            raise ValueError("bundle needs --out DIR")
        bundle_out = os.path.join(cwd, bundle_out)
        if store is not None:
            parts_dir = os.path.join(store.directory, "bundle-parts")
        else:
            head, name = os.path.split(os.path.normpath(bundle_out))
            parts_dir = os.path.join(head, f".{name}.promptinclude-parts-{os.getpid()}")
        os.makedirs(parts_dir, exist_ok=True)
        roots_file = open(os.path.join(parts_dir, "roots.txt"), "wb")
        roots = _tee(roots, roots_file)
    stream = _stream(
        client,
        command,
        options,
        (_root_bytes(r) for r in roots),
        binary=binary,
        partition_size=partition_size,
        cwd=cwd,
        store=store,
        parts_dir=parts_dir,
    )
    partitions = 0
    for count, (code, stdout, stderr) in stream:
        if command == "audit":
            body, _, last = stdout.rstrip(b"\n").rpartition(b"\n")
            stdout = body + b"\n" if body else b""
            records = [summary, last] if summary is not None else [last]
            summary = _native.merge_audit_summaries(records).encode()
        out.write(stdout)
        if stderr:
            if progress is not None:
                progress.clear()
            sys.stderr.buffer.write(stderr)
            sys.stderr.flush()
        status = max(status, code)
        partitions += 1
        if progress is not None:
            progress.add(count)
    if roots_file is not None and parts_dir is not None and bundle_out is not None:
        roots_file.close()
        try:
            # The library's merge, in this process (promptinclude merge bundle).
            merged = _native.merge_bundle(
                roots_file.name, [_part_dir(parts_dir, k) for k in range(partitions)], bundle_out
            )
        except ValueError as e:
            raise PartitionError(f"cannot merge the partitions' bundles in {parts_dir}: {e}") from None
        if store is None:
            shutil.rmtree(parts_dir, ignore_errors=True)
        status = max(status, merged)
    if command == "audit":
        if summary is None:
            summary = _native.merge_audit_summaries([]).encode()
        out.write(summary + b"\n")
    out.flush()
    return status


def _tee(roots: Iterable[Root], file: IO[bytes]) -> Iterator[bytes]:
    """The roots as bytes, each also written to ``file`` (one per line)."""
    for root in roots:
        root = _root_bytes(root)
        file.write(root + b"\n")
        yield root


class _Progress:
    """``[=====     ] 120/2000 roots`` on stderr, only on a terminal."""

    def __init__(self, total: Optional[int]):
        self.total = total
        self.done = 0
        self.shown = sys.stderr.isatty()

    def add(self, n: int) -> None:
        self.done += n
        if not self.shown:
            return
        if self.total:
            filled = 30 * self.done // self.total
            bar = "=" * filled + " " * (30 - filled)
            sys.stderr.write(f"\rpromptinclude.dask: [{bar}] {self.done}/{self.total} roots")
        else:
            sys.stderr.write(f"\rpromptinclude.dask: {self.done} roots")
        sys.stderr.flush()

    def clear(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()


EPILOG = """\
examples:
  python -m promptinclude.dask --local-workers 2 scan --roots-from roots.txt > scan.jsonl
  python -m promptinclude.dask --scheduler tcp://scheduler:8786 --out parts/ \\
      audit --json --fail-on cropped --roots-from roots.txt > audit.jsonl
  python -m promptinclude.dask --local-workers 4 bundle --out prompt-bundle --roots-from roots.txt

Everything after the command is passed to `promptinclude COMMAND` as is
(see `promptinclude COMMAND --help`); roots come only from --roots-from.
The output (for bundle: the bundle) and exit status are those of one
`promptinclude COMMAND` run over all the roots.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m promptinclude.dask",
        description="Run `promptinclude scan`, `audit --json` or `bundle` over many roots on a Dask cluster.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running scheduler (tcp://HOST:8786)")
    where.add_argument(
        "--local-workers",
        type=int,
        metavar="N",
        help="start a local cluster of N worker processes (the default, with 2)",
    )
    parser.add_argument("--bin", metavar="PATH", help="the promptinclude binary on the workers")
    parser.add_argument(
        "--partition-size",
        type=int,
        default=DEFAULT_PARTITION_SIZE,
        metavar="N",
        help=f"roots per task (default {DEFAULT_PARTITION_SIZE})",
    )
    parser.add_argument(
        "--out",
        metavar="DIR",
        help="keep finished partitions in DIR; a rerun of the same command does only the missing ones",
    )
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("options", nargs=argparse.REMAINDER, help="options of promptinclude COMMAND")
    return parser


def _split_options(
    parser: argparse.ArgumentParser, command: str, options: List[str]
) -> Tuple[str, Optional[str], List[str]]:
    """(the --roots-from file, bundle's --out, the other options), refusing
    what cannot be split."""
    roots_from = bundle_out = None
    rest: List[str] = []
    it = iter(options)
    for arg in it:
        if arg == "--roots-from":
            roots_from = next(it, None)
            if roots_from is None:
                parser.error("--roots-from needs a FILE")
        elif arg.startswith("--roots-from="):
            roots_from = arg.split("=", 1)[1]
        elif command == "bundle" and arg == "--out":
            bundle_out = next(it, None)
        elif command == "bundle" and arg.startswith("--out="):
            bundle_out = arg.split("=", 1)[1]
        elif arg.split("=", 1)[0] in REFUSED:
            parser.error(f"{arg.split('=', 1)[0]} is not for a cluster run")
        else:
            rest.append(arg)
    if roots_from is None:
        parser.error("give the roots with --roots-from FILE ('-' = standard input)")
    if command == "audit" and "--json" not in rest:
        parser.error("on a cluster, audit prints --json only (give --json)")
    if command == "bundle" and not bundle_out:
        parser.error("bundle needs --out DIR (on a file system the workers share)")
    return roots_from, bundle_out, rest


def _digest(path: str) -> Tuple[str, int]:
    digest, count = hashlib.sha256(), 0
    try:
        with open(path, "rb") as f:
            for root in _read_roots(f):
                digest.update(root + b"\n")
                count += 1
    except OSError as e:
        raise OSError(f"cannot read roots from {path}: {e.strerror}") from None
    return digest.hexdigest(), count


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The command line; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    roots_from, bundle_out, options = _split_options(parser, args.command, list(args.options))
    if args.partition_size < 1:
        parser.error("--partition-size must be at least 1")
    if args.local_workers is not None and args.local_workers < 1:
        parser.error("--local-workers must be at least 1")
    try:
        binary = find_binary(args.bin)
    except FileNotFoundError as e:
        parser.error(str(e))
    cwd = os.getcwd()
    total = None
    store = None
    try:
        if roots_from != "-":
            digest, total = _digest(roots_from)
            if args.out:
                plan = {
                    "schema": PLAN_SCHEMA,
                    "command": args.command,
                    "options": options,
                    "bundle_out": bundle_out,
                    "partition_size": args.partition_size,
                    "roots_sha256": digest,
                    "roots": total,
                    "cwd": cwd,
                }
                store = _Store(args.out, plan)
        elif args.out:
            parser.error("--out needs --roots-from FILE (a rerun reads the roots again)")
        source = sys.stdin.buffer if roots_from == "-" else open(roots_from, "rb")
    except (OSError, ValueError) as e:
        print(f"promptinclude.dask: error: {e}", file=sys.stderr)
        return 2
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print(
            'promptinclude.dask: error: dask is not installed (pip install "./python[dask]")',
            file=sys.stderr,
        )
        return 2
    import logging

    cluster = None
    if args.scheduler:
        client = Client(args.scheduler)
    else:
        cluster = LocalCluster(
            n_workers=args.local_workers or 2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.CRITICAL,
        )
        client = Client(cluster)
    progress = _Progress(total)
    try:
        with source:
            status = run_batch(
                client,
                args.command,
                options,
                _read_roots(source),
                sys.stdout.buffer,
                binary=binary,
                partition_size=args.partition_size,
                cwd=cwd,
                store=store,
                progress=progress,
                bundle_out=bundle_out,
            )
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, as the command line
        # does (and keep Python from failing to flush stdout at exit).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (PartitionError, ValueError, OSError) as e:
        progress.clear()
        print(f"promptinclude.dask: error: {e}", file=sys.stderr)
        return 2
    finally:
        progress.clear()
        client.close()
        if cluster is not None:
            cluster.close()
    return status


if __name__ == "__main__":
    # Through the package's own module, so that tasks pickle by reference
    # (promptinclude.dask.run_partition), not as functions of __main__.
    from promptinclude.dask import main as _main

    sys.exit(_main())
