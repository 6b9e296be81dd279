"""Shared set-up: what the package is compared with.

The real reference scanner (Agent Zero's plugin) where it is present: in
../shared/reference/agent-zero beside the repository (or PROMPTINCLUDE_REFERENCE).
Where it is absent (a clone on its own), the project's own oracle,
tests/oracle/oracle.py, whose `scan_promptinclude_files` runs the reference's
algorithm as real Python code (the same comparisons, arithmetic and library calls,
so the same exception types and values; tests/oracle/crosscheck proves it against
the real reference where that is present). Only tests that need the host's own
files (the Agent Zero shim) skip without the reference.

Where the chosen one is there but cannot be run, tests skip, or fail under
PROMPTINCLUDE_REQUIRE_ORACLE=1 (as in CI). Both need tiktoken with the cl100k_base
vocabulary available offline (TIKTOKEN_CACHE_DIR, which scripts/test-python sets
up), pathspec==1.1.1, pyyaml.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
A0 = os.environ.get("PROMPTINCLUDE_REFERENCE") or os.path.join(
    REPO, "..", "shared", "reference", "agent-zero"
)
A0 = os.path.abspath(A0)
SCANNER = os.path.join(A0, "plugins", "_promptinclude", "helpers", "scanner.py")
ORACLE = os.path.join(REPO, "tests", "oracle", "oracle.py")
REQUIRE = os.environ.get("PROMPTINCLUDE_REQUIRE_ORACLE") == "1"
# The random tree and configuration generator is shared with the oracle's
# cross-check (tests/oracle/randomtrees.py), and so is the oracle itself.
sys.path.insert(0, os.path.join(REPO, "tests", "oracle"))


def unavailable(reason):
    if REQUIRE:
        pytest.fail(f"{reason} (PROMPTINCLUDE_REQUIRE_ORACLE=1)", pytrace=False)
    pytest.skip(reason)


def has_reference():
    return os.path.isfile(SCANNER)


def comparing_with():
    if has_reference():
        return f"the real reference scanner, {SCANNER}"
    return f"the project oracle, {ORACLE} (no reference scanner at {SCANNER})"


def pytest_report_header(config):
    return f"promptinclude compared with {comparing_with()}"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Random seeds used (to re-run them), and what the package was compared with."""
    for line in getattr(config, "promptinclude_seeds", []):
        terminalreporter.write_line(line)
    if _loaded:
        terminalreporter.write_line(f"promptinclude compared with {comparing_with()}")


_loaded = {}


def load_reference():
    """The real `scan_promptinclude_files`, else the project oracle's, or skip/fail
    saying why neither can run."""
    if "scan" in _loaded:
        return _loaded["scan"]
    if has_reference():
        if A0 not in sys.path:
            sys.path.insert(0, A0)
        try:
            from plugins._promptinclude.helpers.scanner import scan_promptinclude_files
            from helpers import tokens

            tokens.count_tokens("probe")  # loads the vocabulary (offline)
        except Exception as e:  # noqa: BLE001
            unavailable(f"cannot run the reference scanner: {type(e).__name__}: {e}")
    else:
        try:
            import oracle

            oracle.count_tokens("probe")  # loads the vocabulary (offline)
            scan_promptinclude_files = oracle.scan_promptinclude_files
        except Exception as e:  # noqa: BLE001
            unavailable(f"no reference scanner at {SCANNER}, and the project oracle cannot "
                        f"run: {type(e).__name__}: {e}")
    _loaded["scan"] = scan_promptinclude_files
    return scan_promptinclude_files


@pytest.fixture(scope="session")
def reference():
    return load_reference()


@pytest.fixture(scope="session")
def a0_dir():
    """The host's own plugin files (only the real reference has them)."""
    if not has_reference():
        pytest.skip(f"needs Agent Zero's own plugin files: no reference scanner at {SCANNER}")
    load_reference()
    return A0
