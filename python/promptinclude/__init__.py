"""Agent Zero's Prompt Include scan, byte for byte, in Rust.

``scan_promptinclude_files`` is a drop-in for
``plugins._promptinclude.helpers.scanner.scan_promptinclude_files``: same
signature, defaults and returned value (plain dicts, lists, ``str`` and
``int``), for every input with which the reference returns. The scan runs in
parallel with the GIL released.

Beyond the reference: ``scan_many`` (many roots at once), ``render`` (the
system-prompt section), ``audit`` (what happened to every rule file, and why)
and ``check_ignore`` (which gitignore line decides a path).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Optional, Union

try:
    from typing import Literal, TypedDict
except ImportError:  # pragma: no cover
    from typing_extensions import Literal, TypedDict  # type: ignore

from . import _native

__all__ = [
    "scan_promptinclude_files",
    "scan_many",
    "render",
    "audit",
    "check_ignore",
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
    negatives, huge ints, ``inf`` and ``nan`` are accepted; any false
    ``gitignore`` means no patterns.

    Raises (the reference's exception types; raised before scanning, where
    the reference raises only once it first uses the value):

    * ``TypeError``: a number that is not an ``int``/``float``/``bool``, a
      ``name_pattern`` that is not a ``str``, a ``bytes`` root;
    * ``AttributeError``: a true ``gitignore`` that is not a ``str``;
    * ``ValueError``: an invalid gitignore line (pathspec's
      ``GitIgnorePatternError`` is a ``ValueError``); ``re.error`` for a
      reversed range such as ``[z-a]``;
    * ``OverflowError`` / ``ValueError``: where the reference's cropping
      arithmetic raises (e.g. ``max_file_tokens=float("-inf")`` when a file
      must be cropped).
    """
    return _native.scan(
        root,
        name_pattern,
        max_depth,
        max_file_tokens,
        max_file_count,
        max_total_tokens,
        gitignore,
    )


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
    return _native.scan_many(list(roots), config, threads)


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
