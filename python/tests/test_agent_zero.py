"""The Agent Zero shim (integrations/agent-zero/scanner-shim.patch) applied to a
temporary copy of the real plugin: with the package installed the plugin's
scan_promptinclude_files *is* ours and returns exactly what the plugin's own
code returns; without it the plugin falls back to its own code."""

import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
APPLY = os.path.join(REPO, "integrations", "agent-zero", "apply.sh")
# The shared random tree generator (tests/oracle/randomtrees.py).
RANDOMTREES = os.path.join(REPO, "tests", "oracle")

CHILD = r"""
import importlib.util, json, os, random, sys, warnings
warnings.simplefilter("ignore", DeprecationWarning)
a0, patched, work, block = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
if block:
    sys.modules["promptinclude"] = None  # as if not installed: import raises ImportError
sys.path[:0] = [patched, a0, sys.argv[5]]
from plugins._promptinclude.helpers import scanner
assert scanner.__file__.startswith(patched), scanner.__file__
spec = importlib.util.spec_from_file_location(
    "original_scanner", os.path.join(a0, "plugins/_promptinclude/helpers/scanner.py"))
original = importlib.util.module_from_spec(spec)
spec.loader.exec_module(original)
from randomtrees import random_config, random_tree
rng = random.Random(99)
cases = same = 0
for i in range(25):
    root = os.path.join(work, f"t{i}")
    random_tree(rng, root)
    for _ in range(4):
        cfg = random_config(rng)
        def run(fn):
            try:
                return ("returns", fn(root, **cfg))
            except Exception as e:
                return ("raises", e)
        mine, theirs = run(scanner.scan_promptinclude_files), run(original.scan_promptinclude_files)
        cases += 1
        if mine[0] == theirs[0] == "returns":
            same += mine[1] == theirs[1]
        elif mine[0] == theirs[0] == "raises":
            # pathspec's GitIgnorePatternError is a ValueError; the package raises ValueError.
            m, t = mine[1], theirs[1]
            same += type(m) is type(t) or (type(m) is ValueError and isinstance(t, ValueError)) \
                or (isinstance(m, (TypeError, AttributeError)) and "the reference raises" in str(m))
        # a wrong type: raised eagerly (documented); the reference raises lazily, or
        # first over another value (such as Decimal("sNaN"))
        else:
            same += mine[0] == "raises" and isinstance(mine[1], (TypeError, AttributeError))
print(json.dumps({"module": scanner.scan_promptinclude_files.__module__,
                  "cases": cases, "same": same}))
"""


def patched_copy(a0_dir, tmp_path):
    dest = tmp_path / "a0"
    shutil.copytree(os.path.join(a0_dir, "plugins", "_promptinclude"),
                    dest / "plugins" / "_promptinclude")
    subprocess.run(["bash", APPLY, str(dest)], check=True, capture_output=True)
    text = (dest / "plugins/_promptinclude/helpers/scanner.py").read_text()
    assert "from promptinclude import scan_promptinclude_files" in text
    return str(dest)


def run_child(a0_dir, patched, work, block):
    os.makedirs(work)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, a0_dir, patched, work, "1" if block else "0", RANDOMTREES],
        capture_output=True, text=True, cwd=work,
    )
    assert out.returncode == 0, f"child exited {out.returncode}:\n{out.stderr}"
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_extension_imports_the_patched_module(a0_dir):
    ext = os.path.join(a0_dir, "plugins/_promptinclude/extensions/python/system_prompt/"
                       "_16_promptinclude.py")
    with open(ext) as fh:
        assert "from plugins._promptinclude.helpers.scanner import scan_promptinclude_files" \
            in fh.read()


def test_shim_uses_the_package_with_identical_results(a0_dir, tmp_path):
    patched = patched_copy(a0_dir, tmp_path)
    report = run_child(a0_dir, patched, str(tmp_path / "w1"), block=False)
    assert report["module"] == "promptinclude", report
    assert report["cases"] == report["same"] == 100, report


def test_shim_falls_back_without_the_package(a0_dir, tmp_path):
    patched = patched_copy(a0_dir, tmp_path)
    report = run_child(a0_dir, patched, str(tmp_path / "w2"), block=True)
    assert report["module"] == "plugins._promptinclude.helpers.scanner", report
    assert report["cases"] == report["same"] == 100, report


def test_apply_upgrades_an_older_shim_to_the_index(a0_dir, tmp_path):
    """A plugin patched by the shim of an earlier release (the drop-in without
    the live index) is upgraded in place, and applying again changes nothing."""
    dest = tmp_path / "a0"
    shutil.copytree(os.path.join(a0_dir, "plugins", "_promptinclude"),
                    dest / "plugins" / "_promptinclude")
    scanner = dest / "plugins/_promptinclude/helpers/scanner.py"
    scanner.write_text(scanner.read_text() + (
        "\n\ntry:\n"
        "    from promptinclude import scan_promptinclude_files  # noqa: E402,F811\n"
        "except ImportError:\n    pass\n"))
    subprocess.run(["bash", APPLY, str(dest)], check=True, capture_output=True)
    text = scanner.read_text()
    assert "import scan_promptinclude_files_indexed as scan_promptinclude_files" in text
    assert "import scan_promptinclude_files  #" not in text
    subprocess.run(["bash", APPLY, str(dest)], check=True, capture_output=True)
    assert scanner.read_text() == text
