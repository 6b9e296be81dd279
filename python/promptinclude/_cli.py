"""The ``promptinclude`` command, installed with the package.

The script pip writes for ``[project.scripts]`` calls :func:`main`, which runs
the command in the extension module (``_native.main``: the same Rust code as
the cargo-built binary, with its default features), in this process. What it
prints goes straight to file descriptors 1 and 2, not through ``sys.stdout``;
the exit code is the command's. ``SIGPIPE`` stays ignored, as CPython sets it
(a closed stdout ends the command with 0, as the binary's); ``SIGINT``,
``SIGTERM`` and ``SIGHUP`` are handled by the command (it removes its temporary
files, then the process ends by the signal, as the binary does).
"""

from __future__ import annotations

import os
import sys
from typing import List, NoReturn, Optional

from . import _native

__all__ = ["main"]


def main(argv: Optional[List[str]] = None) -> NoReturn:
    """Run ``promptinclude`` on ``argv`` (default: ``sys.argv[1:]``) and exit with its code."""
    args = sys.argv[1:] if argv is None else list(argv)
    script = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    # clap names the program after argv[0]'s file name, as it does the binary's.
    name = "promptinclude"
    program = None
    if script and os.path.basename(script) == name:
        program = os.path.abspath(script)
    # Nothing of Python's may come out after the command's own output.
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    code = _native.main([name, *args], program)
    # The command flushed its output; skip the interpreter's finalisation (a few
    # milliseconds, and nothing of ours is left to flush), as a binary's exit would.
    os._exit(code)
