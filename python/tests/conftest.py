"""Shared set-up: the real reference scanner (Agent Zero's plugin), when present.

The reference lives in ../shared/reference/agent-zero beside the repository (or
PROMPTINCLUDE_REFERENCE). Tests that need it skip with the reason where it is
absent (a clone on its own), and where it is there but cannot be imported they
skip too, or fail under PROMPTINCLUDE_REQUIRE_ORACLE=1 (as in CI).
It needs tiktoken with the cl100k_base vocabulary available offline
(TIKTOKEN_CACHE_DIR, which scripts/test-python sets up), pathspec==1.1.1, pyyaml.
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
REQUIRE = os.environ.get("PROMPTINCLUDE_REQUIRE_ORACLE") == "1"
# The random tree and configuration generator is shared with the oracle's
# cross-check (tests/oracle/randomtrees.py).
sys.path.insert(0, os.path.join(REPO, "tests", "oracle"))


def unavailable(reason):
    if REQUIRE:
        pytest.fail(f"{reason} (PROMPTINCLUDE_REQUIRE_ORACLE=1)", pytrace=False)
    pytest.skip(reason)


_loaded = {}


def load_reference():
    """The real `scan_promptinclude_files`, or skip/fail saying why not."""
    if "scan" in _loaded:
        return _loaded["scan"]
    if not os.path.isfile(SCANNER):
        pytest.skip(f"no reference scanner at {SCANNER}")
    if A0 not in sys.path:
        sys.path.insert(0, A0)
    try:
        from plugins._promptinclude.helpers.scanner import scan_promptinclude_files
        from helpers import tokens

        tokens.count_tokens("probe")  # loads the vocabulary (offline)
    except Exception as e:  # noqa: BLE001
        unavailable(f"cannot run the reference scanner: {type(e).__name__}: {e}")
    _loaded["scan"] = scan_promptinclude_files
    return scan_promptinclude_files


@pytest.fixture(scope="session")
def reference():
    return load_reference()


@pytest.fixture(scope="session")
def a0_dir():
    load_reference()
    return A0
