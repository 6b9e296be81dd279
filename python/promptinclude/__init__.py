"""Agent Zero's Prompt Include scan, byte for byte, in Rust.

``scan_promptinclude_files`` is a drop-in for
``plugins._promptinclude.helpers.scanner.scan_promptinclude_files``: same
signature, defaults and returned value (plain dicts, lists, ``str`` and
``int``), for every input with which the reference returns. The scan runs in
parallel with the GIL released.

Beyond the reference: ``Index`` (a live index of one root: scans that list
and read nothing when nothing changed, and stay exact), ``scan_many`` (many
roots at once), ``render`` (the system-prompt section), ``audit`` (what
happened to every rule file, and why) and ``check_ignore`` (which gitignore
line decides a path). ``scan_promptinclude_files_indexed`` is the drop-in
with one ``Index`` per root and configuration kept between calls (what the
Agent Zero shim imports).
"""

from __future__ import annotations

import collections
import math
import numbers
import os
import struct
import threading
from typing import Any, Dict, Iterable, List, Optional, Union

try:
    from typing import Literal, TypedDict
except ImportError:  # pragma: no cover
    from typing_extensions import Literal, TypedDict  # type: ignore

from . import _native

__all__ = [
    "scan_promptinclude_files",
    "scan_promptinclude_files_indexed",
    "Index",
    "scan_many",
    "render",
    "audit",
    "check_ignore",
    "context",
    "DEFAULT_CONFIG",
    "DEFAULT_GITIGNORE",
    "FileEntry",
    "ScanResult",
]

__version__ = "0.1.0"

#: The plugin's ``gitignore`` default (its ``default_config.yaml``).
DEFAULT_GITIGNORE: str = _native.DEFAULT_GITIGNORE

#: The plugin's ``default_config.yaml`` as a dict (what Agent Zero passes by
#: default). Note that the *function* defaults have no gitignore patterns.
DEFAULT_CONFIG: Dict[str, Any] = {
    "name_pattern": "*.promptinclude.md",
    "max_depth": 10,
    "max_file_tokens": 2000,
    "max_file_count": 50,
    "max_total_tokens": 8000,
    "gitignore": DEFAULT_GITIGNORE,
}

StrPath = Union[str, "os.PathLike[str]"]


class FileEntry(TypedDict):
    """One included rule file (the reference's ``FileEntry``)."""

    path: str
    content: str
    token_count: int
    status: Literal["ok", "cropped", "skipped"]


class ScanResult(TypedDict):
    """What a scan returns (the reference's ``ScanResult``)."""

    files: List[FileEntry]
    skipped_count: int


def scan_promptinclude_files(
    root: StrPath,
    *,
    name_pattern: str = "*.promptinclude.md",
    max_depth: int = 10,
    max_file_tokens: int = 2000,
    max_file_count: int = 50,
    max_total_tokens: int = 8000,
    gitignore: str = "",
) -> ScanResult:
    """Scan ``root`` for rule files, exactly as Agent Zero's Prompt Include does.

    Finds files whose *name* matches ``name_pattern`` (``fnmatch``) in
    directories less than ``max_depth`` levels below ``root``, leaves out
    paths the ``gitignore`` lines (pathspec ``gitwildmatch``) ignore, and
    fits them, in alphabetical order of full path, into ``max_file_tokens``
    per file and ``max_total_tokens`` overall (cl100k_base tokens; each path
    costs its tokens + 5), at most ``max_file_count`` entries.

    Returns ``{"files": [{"path", "content", "token_count", "status"}],
    "skipped_count"}``; ``status`` is ``"ok"``, ``"cropped"`` (content cut
    to fit, ending in ``...``) or ``"skipped"`` (no budget left for its
    text). ``skipped_count`` counts the files left out (unreadable, or
    beyond the budget). A ``root`` that is not a directory gives
    ``{"files": [], "skipped_count": 0}``.

    Values have Python semantics, as in the reference: floats, bools,
    negatives, huge ints, ``inf`` and ``nan`` are accepted, and so is any
    other number of Python's numeric tower (``Decimal``, ``Fraction``, ...),
    with which the reference's own comparisons and arithmetic run (see
    :func:`_scan_with_numbers`); any false ``gitignore`` means no patterns.
    A ``root`` that cannot be a file name (``os.fsencode`` refuses it, as for
    a lone surrogate such as ``"\\ud800"``) gives the empty result too.

    Raises (the reference's exception types; raised before scanning, where
    the reference raises only once it first uses the value):

    * ``TypeError``: a number key that is not a number (or is ``complex``), a
      ``name_pattern`` that is not a ``str``, a ``bytes`` root;
    * ``AttributeError``: a true ``gitignore`` that is not a ``str``;
    * ``ValueError``: an invalid gitignore line (pathspec's
      ``GitIgnorePatternError`` is a ``ValueError``); ``re.error`` for a
      reversed range such as ``[z-a]``;
    * ``OverflowError`` / ``ValueError``: where the reference's cropping
      arithmetic raises (e.g. ``max_file_tokens=float("-inf")`` when a file
      must be cropped).

    Numbers other than ``int``, ``float`` and ``bool`` raise exactly where and
    what the reference's code raises with them, no earlier: e.g.
    ``TypeError`` for a ``Decimal`` ``max_file_tokens`` once a file must be
    cropped to it (``Decimal * float``), ``decimal.InvalidOperation`` for
    ``max_depth=Decimal("NaN")`` once a directory is walked.
    """
    limits = (max_depth, max_file_tokens, max_file_count, max_total_tokens)
    if not any(map(_other_number, limits)):
        return _native.scan(root, name_pattern, *limits, gitignore)
    return _scan_with_numbers(root, name_pattern, *limits, gitignore)


def _other_number(value: Any) -> bool:
    """A number of Python's numeric tower that the native scan does not model
    (not an ``int``, ``float`` or ``bool``; ``complex`` is left to it, as the
    reference raises ``TypeError`` comparing one)."""
    return isinstance(value, numbers.Number) and not isinstance(value, (int, float, complex))


def _scan_with_numbers(
    root, name_pattern, max_depth, max_file_tokens, max_file_count, max_total_tokens, gitignore
):
    """The scan for numbers such as ``Decimal`` or ``Fraction``.

    The file list comes from the native scan (discovery is the same for any
    number); the reference's comparisons and arithmetic then run here, in
    Python, on the values as given, so that each type behaves, and raises,
    exactly as in the reference (``Decimal`` arithmetic under the caller's
    ``decimal`` context, ``Fraction`` exactly, ``Decimal * float`` raising).
    """
    limits = (max_depth, max_file_tokens, max_file_count, max_total_tokens)
    # What scan() raises before scanning (the gitignore first, then the
    # types), with 0 standing in for these numbers.
    _native.check(
        root, name_pattern, *[0 if _other_number(v) else v for v in limits], gitignore
    )
    top = os.path.abspath(root)
    if not os.path.isdir(top):
        return {"files": [], "skipped_count": 0}
    if _other_number(max_depth):
        try:
            os.scandir(top).close()
        except OSError:  # os.walk yields nothing: max_depth is never compared
            return {"files": [], "skipped_count": 0}
        max_depth = _depth_limit(max_depth)
    if not any(map(_other_number, (max_file_tokens, max_file_count, max_total_tokens))):
        return _native.scan(
            root, name_pattern, max_depth, max_file_tokens, max_file_count,
            max_total_tokens, gitignore,
        )
    matched = _native.find(root, name_pattern, max_depth, gitignore)
    return _budget(matched, max_file_tokens, max_file_count, max_total_tokens)


def _depth_limit(max_depth):
    """An ``int`` or ``float`` ``d`` with ``depth >= d`` exactly when
    ``depth >= max_depth``, for every depth ``0, 1, 2, ...`` the walk compares.

    The walk's first comparison, ``0 >= max_depth``, is made here, so a value
    with which it raises (``Decimal("NaN")`` under the default context:
    ``InvalidOperation``) raises as in the reference.
    """
    if 0 >= max_depth:
        return 0
    if max_depth > 2**62:  # deeper than any tree: never reached, as with inf
        return math.inf
    try:
        return math.ceil(max_depth)
    except (ValueError, OverflowError):  # a NaN whose comparisons are false
        return math.nan


def _budget(matched, max_file_tokens, max_file_count, max_total_tokens):
    """The reference's budget pass over ``matched`` (``[(path, path_tokens)]``,
    sorted), with its comparisons and arithmetic in its operand order.

    Only for numbers the Rust pass cannot hold (``Decimal``, ``Fraction``):
    the arithmetic must be Python's own on the values as given. It looks
    like the project oracle's pass (``tests/oracle/oracle.py``) on purpose and
    shares no code with it, so the differential that checks one against
    the other (and against the real reference) stays independent."""
    count = _native.count_tokens
    files: List[FileEntry] = []
    used = 0
    skipped = 0
    exhausted = False

    def entry(path, content, token_count, status):
        return {"path": path, "content": content, "token_count": token_count, "status": status}

    def trim(text, text_tokens, max_tokens):
        # tokens.trim_to_tokens(text, max_tokens, direction="start")
        if text_tokens <= max_tokens:
            return text
        keep = int(len(text) * (max_tokens / text_tokens) * 0.8)
        return text[:keep] + "..."

    for path, path_tokens in matched:
        if exhausted or len(files) >= max_file_count:
            skipped += 1
            continue
        try:
            with open(path, "r", encoding="utf-8", errors="replace") as fh:
                raw = fh.read()
        except OSError:
            skipped += 1
            continue
        if not raw.strip():
            continue
        file_tokens = count(raw)
        if used + path_tokens > max_total_tokens:
            skipped += 1
            exhausted = True
            continue
        capped = min(file_tokens, max_file_tokens)
        if used + path_tokens + capped > max_total_tokens:
            remaining = max_total_tokens - used - path_tokens
            if remaining > 50:
                trimmed = trim(raw, file_tokens, remaining)
                trimmed_count = count(trimmed)
                used += path_tokens + trimmed_count
                files.append(entry(path, trimmed, trimmed_count, "cropped"))
            else:
                files.append(entry(path, "", 0, "skipped"))
            exhausted = True
            continue
        if capped < file_tokens:
            trimmed = trim(raw, file_tokens, max_file_tokens)
            trimmed_count = count(trimmed)
            used += path_tokens + trimmed_count
            files.append(entry(path, trimmed, trimmed_count, "cropped"))
        else:
            used += path_tokens + file_tokens
            files.append(entry(path, raw, file_tokens, "ok"))
    unprocessed = len(matched) - len(files) - skipped
    if unprocessed > 0:
        skipped += unprocessed
    return {"files": files, "skipped_count": skipped}


class Index:
    """A live index of one root: :meth:`scan` returns exactly what
    :func:`scan_promptinclude_files` returns for the same root and
    configuration at that moment, but lists no directory and reads no file
    that has not changed since the last scan (inotify; where notifications
    cannot vouch for something it is looked at again: see ``stats()``'s
    ``fallbacks`` and the repository's docs/live-index.md).

    ``Index(root, **config)`` takes :func:`scan_promptinclude_files`'s
    keyword arguments, with its defaults, and checks them as it does (the
    same exceptions, raised here). A relative ``root`` is taken against the
    current directory at construction. Nothing is walked until the first
    :meth:`scan`.

    Threads: any number of threads may share an index; scans take turns
    (one lock, taken with the GIL released) and each gets an exact answer.
    Fork: after ``os.fork()`` the child's index notices the new process on
    its next scan and starts over with its own notification queue (a full
    scan, counted in ``stats()["fallbacks"]["forked"]``); if another thread
    of the parent was mid-scan at the fork, the child starts a new index
    (stats from zero) instead of waiting for a thread it does not have.
    The parent's index is not disturbed.

    Numbers other than ``int``, ``float`` and ``bool`` (``Decimal``,
    ``Fraction``): accepted as by :func:`scan_promptinclude_files`, but every
    scan is then a fresh scan (counted in ``stats()["scans"]`` and
    ``stats()["fallbacks"]["unsupported"]``).
    """

    __slots__ = ("_native", "_root", "_fresh", "_fresh_scans", "__weakref__")

    def __init__(
        self,
        root: StrPath,
        *,
        name_pattern: str = "*.promptinclude.md",
        max_depth: int = 10,
        max_file_tokens: int = 2000,
        max_file_count: int = 50,
        max_total_tokens: int = 8000,
        gitignore: str = "",
    ) -> None:
        limits = (max_depth, max_file_tokens, max_file_count, max_total_tokens)
        self._root = root
        self._fresh = None
        self._fresh_scans = 0
        if any(map(_other_number, limits)):
            # Checked as scan_promptinclude_files checks them (0 standing in).
            _native.check(
                root, name_pattern, *[0 if _other_number(v) else v for v in limits], gitignore
            )
            self._native = None
            self._fresh = dict(
                name_pattern=name_pattern, max_depth=max_depth,
                max_file_tokens=max_file_tokens, max_file_count=max_file_count,
                max_total_tokens=max_total_tokens, gitignore=gitignore,
            )
            if not os.path.isabs(os.fspath(root)):
                self._root = os.path.abspath(root)
            return
        self._native = _native.Index(root, name_pattern, *limits, gitignore)

    def scan(self) -> ScanResult:
        """The root's scan now (the GIL is released while it runs)."""
        if self._native is not None:
            return self._native.scan()
        self._fresh_scans += 1
        return scan_promptinclude_files(self._root, **self._fresh)

    def stats(self) -> Dict[str, Any]:
        """What the index has done so far: ``scans``, ``unchanged`` (answered
        with no listing and no read), ``dirs_listed``, ``files_read``,
        ``texts_counted``, ``last_dirs_listed``, ``last_files_read`` (by the
        last scan), ``watches``, ``kept_dirs``, ``events`` and
        ``fallbacks`` (a dict: ``overflow``, ``watch_limit``, ``remote_fs``,
        ``links``, ``root_changed``, ``mounts``, ``config_changed``,
        ``forked``, ``deep_tree``, ``unsupported``: scans that looked again
        at what they could have remembered, and why), ``links_checked``
        (symbolic links the last scan ``stat``-ed) and ``links`` (what the
        root's symbolic links cost on every scan: ``free``, the number that
        cost nothing; ``stat``, ``stat_and_read`` and ``listed``, paths)."""
        if self._native is not None:
            return self._native.stats()
        # An index of a root no file name can have opens nothing: all zeros.
        stats = _native.Index("\ud800", "*", 0, 0, 0, 0, "").stats()
        stats["scans"] = self._fresh_scans
        stats["fallbacks"]["unsupported"] = self._fresh_scans
        return stats

    def __repr__(self) -> str:
        return f"promptinclude.Index({os.fspath(self._root)!r})"


# scan_promptinclude_files_indexed's indexes: (key -> Index), least recently
# used first. The lock is made again in a forked child (os.register_at_fork):
# a thread of the parent may have held it at the fork.
_INDEXES: "collections.OrderedDict[Any, Index]" = collections.OrderedDict()
_INDEXES_LOCK = threading.Lock()
#: At most this many indexes are kept (each holds an inotify instance and
#: one watch per directory of its tree); the least recently used goes first.
INDEXES_MAX = 32


def _reset_indexes_lock_in_child() -> None:
    global _INDEXES_LOCK
    _INDEXES_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_indexes_lock_in_child)


def _index_key(root: Any, values: tuple) -> Optional[tuple]:
    """The key of an index for these values, or ``None`` where the values are
    left to the fresh scan (any type but exact ``str`` text and ``int``,
    ``float``, ``bool`` numbers: it raises, or runs Python's arithmetic).

    The root is keyed as the reference uses it, ``os.path.abspath(root)``;
    numbers by type and exact value (``1``, ``1.0`` and ``True`` are three
    keys, and so are ``0.0`` and ``-0.0``; a NaN by its bits)."""
    path = os.fspath(root)
    if type(path) is not str:
        return None
    name_pattern, gitignore, limits = values[0], values[-1], values[1:-1]
    if type(name_pattern) is not str or type(gitignore) is not str:
        return None
    key = [os.path.abspath(path), name_pattern, gitignore]
    for value in limits:
        kind = type(value)
        if kind is float:
            key.append((kind, struct.pack("<d", value)))
        elif kind is int or kind is bool:
            key.append((kind, value))
        else:
            return None
    return tuple(key)


def scan_promptinclude_files_indexed(
    root: StrPath,
    *,
    name_pattern: str = "*.promptinclude.md",
    max_depth: int = 10,
    max_file_tokens: int = 2000,
    max_file_count: int = 50,
    max_total_tokens: int = 8000,
    gitignore: str = "",
) -> ScanResult:
    """:func:`scan_promptinclude_files`, answered by a live :class:`Index`.

    Same signature, result and exceptions. The first call for a root
    (``os.path.abspath(root)``) and configuration makes an :class:`Index`;
    later calls with the same values scan it (nothing listed or read when
    nothing changed). At most :data:`INDEXES_MAX` indexes are kept, in this
    module, the least recently used dropped first (closing its inotify
    instance); they live as long as the process. Values that are not exact
    ``str`` text and ``int``/``float``/``bool`` numbers (a wrong type, a
    ``Decimal``) go to :func:`scan_promptinclude_files` itself every time.

    Thread-safe (the table has a lock, each index its own); fork-safe (a
    forked child makes its table lock again, and each index starts over with
    a notification queue of its own on its first scan there).
    """
    values = (name_pattern, max_depth, max_file_tokens, max_file_count, max_total_tokens,
              gitignore)
    try:
        key = _index_key(root, values)
    except Exception:  # noqa: BLE001 (e.g. no current directory): the fresh scan says
        key = None
    if key is None:
        return scan_promptinclude_files(
            root, name_pattern=name_pattern, max_depth=max_depth,
            max_file_tokens=max_file_tokens, max_file_count=max_file_count,
            max_total_tokens=max_total_tokens, gitignore=gitignore,
        )
    with _INDEXES_LOCK:
        index = _INDEXES.get(key)
        if index is not None:
            _INDEXES.move_to_end(key)
    if index is None:
        # Made outside the lock (compiling the patterns takes a while); raises
        # what scan_promptinclude_files raises for these values.
        made = Index(
            key[0], name_pattern=name_pattern, max_depth=max_depth,
            max_file_tokens=max_file_tokens, max_file_count=max_file_count,
            max_total_tokens=max_total_tokens, gitignore=gitignore,
        )
        dropped = []
        with _INDEXES_LOCK:
            index = _INDEXES.setdefault(key, made)
            _INDEXES.move_to_end(key)
            while len(_INDEXES) > INDEXES_MAX:
                dropped.append(_INDEXES.popitem(last=False)[1])
        del dropped  # closed here, outside the lock
    return index.scan()


def scan_many(
    roots: Iterable[StrPath],
    config: Optional[Dict[str, Any]] = None,
    threads: Optional[int] = None,
) -> List[ScanResult]:
    """Scan many roots in parallel; one result per root, in input order.

    ``config`` is a dict with any of the six keyword arguments of
    :func:`scan_promptinclude_files` (missing keys take its defaults: no
    gitignore patterns; pass :data:`DEFAULT_CONFIG` for the plugin's).
    ``threads`` sets the size of a dedicated thread pool (default: the
    shared pool, one thread per CPU). Each result equals
    ``scan_promptinclude_files(root, **config)``; if one root raises, the
    first such exception in input order is raised.
    """
    roots = list(roots)
    if isinstance(config, dict) and any(map(_other_number, config.values())):
        # Checked as the native call checks it (unknown keys, types, threads),
        # with 0 standing in for the numbers it does not model.
        stand_in = {k: 0 if _other_number(v) else v for k, v in config.items()}
        _native.scan_many([], stand_in, threads)
        return [scan_promptinclude_files(root, **config) for root in roots]
    return _native.scan_many(roots, config, threads)


def render(result: ScanResult, name_pattern: str = "*.promptinclude.md") -> str:
    """The system-prompt section Agent Zero builds from a scan ``result``.

    Byte for byte what the plugin's extension and prompt templates produce
    for that result and ``name_pattern``.
    """
    return _native.render(result, name_pattern)


def audit(root: StrPath, config: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """What became of every rule file under ``root``, and why.

    ``config`` as for :func:`scan_many`. Returns the ``promptinclude audit
    --json`` root record as plain objects: ``root``, ``abs_root``,
    ``is_dir``, ``config_source``, ``config``, ``files`` (status, tokens
    counted and included, budget share), ``totals`` and ``warnings``.
    Non-UTF-8 names are shown with U+FFFD here.
    """
    return _native.audit(root, config)


def check_ignore(paths: Iterable[str], gitignore: str) -> List[Dict[str, Any]]:
    """Which ``gitignore`` line decides each path, as the scanner applies them.

    ``paths`` are relative to the root, ``/``-separated; a trailing ``/``
    marks a directory (checked as ``rel`` then ``rel/``, as the scanner
    prunes directories). Returns one ``{"path", "ignored", "pattern",
    "line"}`` per path (``pattern``/``line``: the deciding line and its
    1-based number in ``gitignore.splitlines()``, or ``None``).
    """
    return _native.check_ignore(list(paths), gitignore)


def context(agent: str, cwd: StrPath = ".", home: Optional[StrPath] = None) -> Dict[str, Any]:
    """What ``agent`` loads as context files when started in ``cwd``.

    The ``promptinclude context --json`` document (schema
    ``promptinclude.context/1``) as plain objects: ``files`` (those sent in
    the agent's order, then those not sent), each with ``path``, ``role``,
    ``bytes``, ``tokens`` and ``status`` (``loaded``, ``truncated`` with
    ``at``/``of``, ``shadowed`` with ``by``, ``blank``, ``unreadable``,
    ``limit_reached``, ``dropped``, ``scoped_out``, ``too_large``,
    ``not_text``, and for imports ``unresolved``, ``too_deep``,
    ``repeated``, ``outside``, with ``imported_by``), the agent's ``limit``,
    ``notes``, ``parts`` (each text the agent puts into its model request,
    byte for byte, with its ``place``: ``user_message``, ``system_prompt``
    or ``system_instruction``) and ``raw`` (the parts joined by a blank
    line, or ``None``). Modelled agents: ``"codex"`` (Codex CLI 0.171.0),
    ``"claude-code"`` (Claude Code 2.1.332), ``"copilot-cli"`` (Copilot CLI
    1.0.102), ``"gemini"`` (Gemini CLI
    0.61.0), ``"opencode"`` (opencode 1.18.33), ``"pi"`` (pi 0.73.1),
    ``"qwen-code"`` (Qwen Code 0.24.4) and
    ``"agent-zero"`` (exactly what ``render`` gives). ``home`` defaults to
    ``$HOME``; the agents' own variables (``CODEX_HOME``,
    ``CLAUDE_CONFIG_DIR``, ``GEMINI_CLI_HOME``, ``XDG_CONFIG_HOME``,
    ``PI_CODING_AGENT_DIR``, ``QWEN_HOME``, ...) are read from the environment.
    """
    return _native.context(agent, os.fspath(cwd), None if home is None else os.fspath(home))
