"""The installed wheel against the cargo-built binary and the project oracle.

Run by scripts/test-wheel with the wheel's venv python (``-I``), no cargo on
PATH and the venv not on PATH; it sets up the environment this reads:

    PROMPTINCLUDE_TEST_BINARY      the cargo-built binary (target/release/promptinclude)
    PROMPTINCLUDE_TEST_CLEAN_PATH  the PATH the commands run with
    PROMPTINCLUDE_TEST_ORACLE      tests/oracle/oracle, where it can run (optional)

    python -I wheel_check.py WORKDIR

Not collected by pytest (it needs the installed wheel, not the source tree).
Prints each check, then "N passed, N failed"; exits 1 if any failed.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback

WORK = os.path.abspath(sys.argv[1])
BINARY = os.environ["PROMPTINCLUDE_TEST_BINARY"]
CLEAN_PATH = os.environ["PROMPTINCLUDE_TEST_CLEAN_PATH"]
ORACLE = os.environ.get("PROMPTINCLUDE_TEST_ORACLE")
SCRIPTS = os.path.dirname(sys.executable)
SCRIPT = os.path.join(SCRIPTS, "promptinclude")
# The commands run with no A0_SET_ variables (the configuration the host takes
# from the environment), so both sides see the same configuration.
ENV = {k: v for k, v in os.environ.items() if not k.startswith("A0_SET_")}
ENV["PATH"] = CLEAN_PATH

results = []


def check(name):
    def wrap(fn):
        try:
            fn()
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            results.append((name, False))
            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
        else:
            results.append((name, True))
            print(f"ok   {name}", flush=True)
        return fn

    return wrap


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def make_trees():
    """Small trees with what the scan decides on: depth, .gitignore, cropping, order."""
    trees = []
    a = os.path.join(WORK, "trees", "plain")
    write(os.path.join(a, "AGENTS.promptinclude.md"), "# Rules\nBe brief.\n")
    write(os.path.join(a, "sub", "deep", "x.promptinclude.md"), "deep rule\n")
    write(os.path.join(a, "sub", "y.promptinclude.md"), "ünïcödé rule ✓\n")
    write(os.path.join(a, "notes.md"), "not a rule file\n")
    trees.append(a)
    b = os.path.join(WORK, "trees", "ignored")
    write(os.path.join(b, ".gitignore"), "build/\n*.tmp.promptinclude.md\n")
    write(os.path.join(b, "build", "z.promptinclude.md"), "ignored\n")
    write(os.path.join(b, "keep.promptinclude.md"), "kept\n")
    write(os.path.join(b, "drop.tmp.promptinclude.md"), "dropped\n")
    trees.append(b)
    c = os.path.join(WORK, "trees", "big")
    for i in range(12):
        write(os.path.join(c, f"d{i % 3}", f"r{i}.promptinclude.md"), ("word " * (40 * (i + 1))) + "\n")
    write(os.path.join(c, "huge.promptinclude.md"), "token " * 9000 + "\n")
    trees.append(c)
    d = os.path.join(WORK, "trees", "deep")
    path = d
    for i in range(8):
        path = os.path.join(path, f"l{i}")
        write(os.path.join(path, f"level{i}.promptinclude.md"), f"level {i}\n")
    trees.append(d)
    return trees


def run(argv, stdin=None, cwd=WORK):
    return subprocess.run(argv, input=stdin, capture_output=True, env=ENV, cwd=cwd, timeout=120)


def same(args, stdin=None):
    """The installed command and the binary, byte for byte."""
    want = run([BINARY, *args], stdin)
    got = run([SCRIPT, *args], stdin)
    assert (got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr), (
        f"promptinclude {' '.join(args)}:\n"
        f"binary: exit {want.returncode}\n stdout {want.stdout[:600]!r}\n stderr {want.stderr[:600]!r}\n"
        f"wheel:  exit {got.returncode}\n stdout {got.stdout[:600]!r}\n stderr {got.stderr[:600]!r}"
    )
    return want


TREES = make_trees()
ROOTS = [os.path.relpath(t, WORK) for t in TREES]
with open(os.path.join(WORK, "roots.txt"), "w") as f:
    f.write("".join(r + "\n" for r in ROOTS))


@check("no cargo on the commands' PATH, the venv not on it")
def _():
    assert shutil.which("cargo", path=CLEAN_PATH) is None
    assert shutil.which("rustc", path=CLEAN_PATH) is None
    assert not any(os.path.samefile(d, SCRIPTS) for d in CLEAN_PATH.split(os.pathsep) if os.path.isdir(d))
    assert os.access(SCRIPT, os.X_OK), SCRIPT


import promptinclude  # noqa: E402 - after the checks above name what is tested

# The plugin's defaults, which the command and the oracle use (the function's
# own defaults filter nothing: gitignore="").
CONFIG = promptinclude.DEFAULT_CONFIG

with open(SCRIPT, "rb") as f:
    SCRIPT_TEXT = f.read()


@check("the package comes from the wheel, not the source tree")
def _():
    assert os.path.dirname(promptinclude.__file__).startswith(sys.prefix), promptinclude.__file__
    assert b"promptinclude._cli" in SCRIPT_TEXT, SCRIPT_TEXT


def cli_records(roots):
    out = run([BINARY, "scan", *roots])
    assert out.returncode == 0, out
    return [json.loads(line) for line in out.stdout.decode().splitlines()]


@check("scan_promptinclude_files (the plugin's defaults) equals the binary's scan on every tree")
def _():
    for root, record in zip(ROOTS, cli_records(ROOTS)):
        got = promptinclude.scan_promptinclude_files(os.path.join(WORK, root), **CONFIG)
        assert record.pop("root") == root
        assert got == record, (root, got, record)
        assert got["files"], root


@check("scan_promptinclude_files equals the project oracle (the reference's algorithm)")
def _():
    if not ORACLE:
        print("     (the oracle cannot run here: compared with the binary only)")
        return
    absolute = [os.path.join(WORK, r) for r in ROOTS]
    out = run([ORACLE, *absolute])
    assert out.returncode == 0, out
    records = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert len(records) == len(absolute)
    for root, record in zip(absolute, records):
        assert "raises" not in record, record
        record.pop("root")
        got = promptinclude.scan_promptinclude_files(root, **CONFIG)
        assert got == record, (root, got, record)


@check("scan_many equals one call per root, in order")
def _():
    roots = [os.path.join(WORK, r) for r in ROOTS]
    many = promptinclude.scan_many(roots, CONFIG)
    assert many == [promptinclude.scan_promptinclude_files(r, **CONFIG) for r in roots]
    assert len(many) == len(roots)


COMMANDS = [
    ["--version"],
    ["-V"],
    ["--help"],
    ["scan", "--help"],
    ["scan", *ROOTS],
    ["scan", "--max-total-tokens", "50", ROOTS[2]],
    ["render", ROOTS[0]],
    ["render", ROOTS[2]],
    ["audit", *ROOTS],
    ["audit", "--json", *ROOTS],
    ["check-ignore", "-v", "node_modules/", "docs/a.promptinclude.md", ".git/"],
    ["scan", "--no-such-flag"],
    ["scan", "--config", "no/such/config.json", ROOTS[0]],
    ["scan", "no/such/root"],
    ["frobnicate"],
]


for args in COMMANDS:

    @check("the command equals the binary: promptinclude " + " ".join(args))
    def _(args=args):
        same(args)


@check("the error cases exit as the binary's do: 2 for errors, 1 for a missing root")
def _():
    assert same(["scan", "--no-such-flag"]).returncode == 2
    assert same(["scan", "--config", "no/such/config.json", ROOTS[0]]).returncode == 2
    assert same(["scan", "no/such/root"]).returncode == 1
    assert same(["scan", *ROOTS]).returncode == 0


@check("--roots-from - and check-ignore --stdin read stdin as the binary does")
def _():
    same(["scan", "--roots-from", "-"], stdin="".join(r + "\n" for r in ROOTS).encode())
    same(["check-ignore", "--stdin", "--json"], stdin=b"node_modules/x\nsrc/a.promptinclude.md\n")


@check("a closed stdout ends with 0 and nothing on stderr, as the binary's")
def _():
    roots = " ".join(ROOTS * 40)
    for exe in (BINARY, SCRIPT):
        out = subprocess.run(
            ["bash", "-c", f'"{exe}" scan {roots} | head -c 10 >/dev/null; echo "${{PIPESTATUS[0]}}"'],
            capture_output=True, env=ENV, cwd=WORK, timeout=120,
        )
        assert (out.stdout, out.stderr) == (b"0\n", b""), (exe, out)


@check("SIGINT and SIGTERM end the command by the signal, as the binary's (mcp, waiting on stdin)")
def _():
    for sig in (signal.SIGINT, signal.SIGTERM):
        for exe in (BINARY, SCRIPT):
            p = subprocess.Popen([exe, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=ENV, cwd=WORK)
            time.sleep(1.0)
            assert p.poll() is None, (exe, p.returncode)
            p.send_signal(sig)
            out, err = p.communicate(timeout=30)
            assert p.returncode == -sig, (exe, sig, p.returncode, err)
            # Killed by the signal: no Python traceback, no KeyboardInterrupt.
            assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, (exe, err)


@check("init writes the installed command's path into the hook, not the interpreter's")
def _():
    project = os.path.join(WORK, "init-project")
    os.makedirs(os.path.join(project, ".git"), exist_ok=True)
    out = run([SCRIPT, "init", "claude-code", "--dry-run"], cwd=project)
    assert out.returncode == 0, out
    assert f'"command": "{SCRIPT} hook claude-code"'.encode() in out.stdout, out.stdout


@check("python -m promptinclude.dask finds the installed command (no PROMPTINCLUDE_BIN, venv not on PATH)")
def _():
    from promptinclude import dask as pdask

    assert "PROMPTINCLUDE_BIN" not in os.environ
    assert os.path.samefile(pdask.find_binary(), SCRIPT), pdask.find_binary()
    want = run([BINARY, "scan", "--roots-from", "roots.txt"])
    got = run([sys.executable, "-m", "promptinclude.dask", "--local-workers", "2",
               "scan", "--roots-from", "roots.txt"])
    assert got.returncode == want.returncode == 0, got.stderr.decode()
    assert got.stdout == want.stdout, (got.stdout[:600], want.stdout[:600])


passed = sum(ok for _, ok in results)
failed = len(results) - passed
print(f"wheel: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
