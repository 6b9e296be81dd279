#!/usr/bin/env python3
"""Cross-check of the project's oracle (oracle.py) against the REAL reference.

Runs oracle.scan and Agent Zero's own `scan_promptinclude_files` side by side on
random trees and random configurations, odd value types included (floats, bools,
negatives, NaN, infinities, huge ints, None, lists, bytes...), and compares the
Python results (or, where they raise, the exception types). It also checks the
oracle's A0_SET_ environment defaults against the real
helpers.settings.get_default_value and helpers.plugins._apply_defaults_from_env,
and its embedded default config against the plugin's default_config.yaml.

Needs the reference source: run through ./crosscheck (which uses the oracle's
venv and PYTHONPATH=<agent-zero>). Exits 1 on any difference.

    crosscheck.py AGENT_ZERO_DIR [--trees N] [--configs M] [--seed S]
"""
import importlib.util
import math
import os
import random
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle  # noqa: E402


# ------------------------------------------------------------ the real reference

def stub_missing(names):
    """Registers an empty stand-in for each module that cannot be imported here (the
    host's heavy dependencies); the functions under test are never stubbed."""

    class Dummy:
        def __init__(self, *a, **k):
            pass

        def __call__(self, *a, **k):
            if len(a) == 1 and callable(a[0]) and not k:
                return a[0]  # used as a decorator: leave the function alone
            return Dummy()

        def __getattr__(self, name):
            return Dummy()

        def __mro_entries__(self, bases):
            return (object,)

        def __iter__(self):
            return iter(())

        def __or__(self, other):
            return self

        __ror__ = __or__

    for name in names:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if found:
            continue
        module = types.ModuleType(name)
        module.__getattr__ = lambda attr: Dummy()
        module.__path__ = []  # allow submodules
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent and parent in sys.modules:
            setattr(sys.modules[parent], child, module)


def real_function(path, name):
    """The top-level function `name` of the reference file `path`, compiled from its
    own source lines (from `def name(` to the next top-level statement)."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(f"def {name}("))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i] and not lines[i][0].isspace()), len(lines))
    namespace = {"Any": object}
    exec(compile("\n".join(lines[start:end]), path, "exec"), namespace)
    return namespace[name]


def load_reference(a0):
    sys.path.insert(0, a0)
    from plugins._promptinclude.helpers.scanner import scan_promptinclude_files

    import helpers  # the reference's helpers package (namespace package)

    stub_missing([
        "dotenv", "models", "pydantic", "regex",
        *(f"helpers.{m}" for m in [
            "runtime", "whisper", "defer", "git", "subagents", "files", "print_style",
            "providers", "secrets", "dirty_json", "notification", "persist_chat",
            "file_tree", "extension", "cache", "watchdog", "modules", "yaml",
            "api", "guids", "localization", "mcp_handler", "plugins_hooks",
        ]),
    ])
    from helpers import settings
    try:
        from helpers import plugins
        apply_env = plugins._apply_defaults_from_env
    except SyntaxError:
        # helpers/plugins.py needs Python 3.12 (`type X = ...`); run the function's
        # own source text, cut out of the file, instead of the module.
        apply_env = real_function(os.path.join(a0, "helpers", "plugins.py"),
                                  "_apply_defaults_from_env")
    del helpers
    return scan_promptinclude_files, settings.get_default_value, apply_env


# ------------------------------------------------------------ random trees

TEXTS = ["rule", " always", " never", "\n", "\r\n", "\r", "日本語", "😀", "<|endoftext|>",
         "{{content}}", "\u3000", "\xa0", "\x1c", "\u2028", "12345", "don't", "  ", "\t",
         "é", "```", "!!!", "snake_case", "\ufeff"]
DIRS = ["src", "a", "a-b", "a.b", "b", "node_modules", ".git", "build", "dist", "venv",
        "__pycache__", "x.egg-info", "deep", "Ünï", "sp ace", "[x]", ".cache", "keep", "rules"]
FILES = ["a.promptinclude.md", "b.promptinclude.md", ".promptinclude.md", "A.PROMPTINCLUDE.md",
         "日本.promptinclude.md", "x y.promptinclude.md", "a-b.promptinclude.md", "rule.md",
         "notes.txt", "[1].promptinclude.md", "a.promptinclude.md.bak"]


def random_bytes(rng):
    kind = rng.randrange(12)
    if kind == 0:
        return b""
    if kind == 1:
        return rng.choice([" \n\t", "\x1c\x1d", "\u3000\n", "\r\n", "\x85"]).encode()
    if kind == 2:
        return (rng.choice(["a", "ab1", "語", "_"]) * rng.randrange(100, 2500)).encode()
    words = rng.choice([rng.randrange(1, 40), rng.randrange(100, 700), rng.randrange(1500, 4000)])
    out = bytearray()
    for _ in range(words):
        out += rng.choice(TEXTS).encode()
        if rng.randrange(40) == 0:
            out += rng.choice([b"\xff", b"\xe2\x82", b"\xed\xa0\x80"])
    return bytes(out)


def random_tree(rng, root):
    os.makedirs(root)
    dirs = [root]
    for _ in range(rng.randrange(1, 10)):
        d = os.path.join(rng.choice(dirs), rng.choice(DIRS))
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    if rng.randrange(4) == 0:
        d = os.path.join(root, "deep", *[f"d{i}" for i in range(rng.randrange(3, 12))])
        os.makedirs(d, exist_ok=True)
        dirs.append(d)
    for _ in range(rng.randrange(1, 16)):
        path = os.path.join(rng.choice(dirs), rng.choice(FILES))
        if not os.path.isdir(path):
            with open(path, "wb") as fh:
                fh.write(random_bytes(rng))
    if rng.randrange(5) == 0:  # a name that is not UTF-8
        path = os.path.join(os.fsencode(rng.choice(dirs)), b"\xff.promptinclude.md")
        with open(path, "wb") as fh:
            fh.write(random_bytes(rng))
    for _ in range(rng.randrange(3)):
        link = os.path.join(rng.choice(dirs), f"link{rng.randrange(4)}.promptinclude.md")
        if os.path.lexists(link):
            continue
        target = rng.choice(["nowhere.promptinclude.md", link, rng.choice(dirs)])
        os.symlink(target, link)


# ------------------------------------------------------------ random configs

INTS = [0, 1, 2, 3, 5, 10, 50, 51, 60, 100, 120, 300, 2000, 8000, 50000,
        -1, -50, 2**31, 2**63, 2**64, 10**30, 10**400]
FLOATS = [0.0, -0.0, 0.5, 1.5, 2.0, 51.5, 60.7, 100.5, 1e2, 1999.9, -3.5,
          math.inf, -math.inf, math.nan, 1e308]
ODD = [True, False, None, "10", "", [], [1], {}, {"a": 1}, b"x"]
PATTERNS = ["*.promptinclude.md", "*.md", "*rule*", "[a-c]*.promptinclude.md", "?*.md",
            "*[!z].promptinclude.md", "[", "[]]", "", "*", "*.PROMPTINCLUDE.md",
            5, None, True, False, b"*.md", ["*.md"], 1.5, "\udcff*"]
LINES = ["venv/**", "**/node_modules/**", "build/", "!build/", "*.md", "!a.promptinclude.md",
         "a-b", "/src", "docs/**", "**/deep/**/d3", "[ab]*", "# comment", "", "  sp  ",
         "!/", "**/", "\\#x", "a[", "[z-a]", "!", "\\", "Ünï/", "**/*.egg-info/**", "*[!x]"]


def random_number(rng):
    roll = rng.randrange(20)
    if roll < 9:  # plausible budgets, where the arithmetic matters most
        return rng.choice([rng.randrange(0, 200), rng.randrange(40, 3000), rng.randrange(100, 9000)])
    if roll < 12:
        return rng.choice(INTS)
    if roll < 15:  # floats near the plausible ones, .0 and .5 included
        return rng.choice([rng.randrange(0, 3000) + rng.choice([0.0, 0.5, 0.25]), rng.choice(FLOATS)])
    if roll < 17:
        return rng.choice([True, False])
    return rng.choice(FLOATS + ODD)


def random_gitignore(rng):
    if rng.randrange(6) == 0:
        return rng.choice([0, False, None, [], 5, True, ["a"], b"x", 0.0, math.nan, "", "  \n# x\n"])
    lines = [rng.choice(LINES) for _ in range(rng.randrange(1, 6))]
    if rng.randrange(3):  # mostly without the lines that make pathspec raise
        lines = [l for l in lines if l not in ("[z-a]", "!", "\\")]
    return rng.choice(["\n", "\r\n", "\r"]).join(lines)


def random_config(rng):
    cfg = dict(oracle.FALLBACKS)
    cfg["gitignore"] = oracle.default_config(False)["gitignore"]
    for key in ["max_depth", "max_file_tokens", "max_file_count", "max_total_tokens"]:
        if rng.randrange(2):
            cfg[key] = random_number(rng)
    if rng.randrange(3) == 0:
        cfg["name_pattern"] = rng.choice(PATTERNS)
    if rng.randrange(2):
        cfg["gitignore"] = random_gitignore(rng)
    return cfg


# ------------------------------------------------------------ comparison

def outcome(fn, root, cfg):
    try:
        return ("returns", fn(root, **cfg))
    except Exception as e:  # noqa: BLE001
        return ("raises", type(e).__name__)


def check_scans(real_scan, trees, configs, seed):
    rng = random.Random(seed)
    work = tempfile.mkdtemp(prefix="pi-crosscheck-")
    cases = raises = 0
    failures = []
    try:
        roots = []
        for i in range(trees):
            root = os.path.join(work, f"t{i:04d}")
            random_tree(rng, root)
            roots.append(root)
        roots.append(os.path.join(work, "missing"))
        for root in roots:
            for _ in range(configs):
                cfg = random_config(rng)
                mine = outcome(oracle.scan, root, cfg)
                theirs = outcome(real_scan, root, cfg)
                cases += 1
                raises += mine[0] == "raises"
                if mine != theirs:
                    failures.append(f"root {root!r}, config {cfg!r}:\n  oracle:    {mine!r}"
                                    f"\n  reference: {theirs!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return cases, raises, failures


ENV_VALUES = [" 150 ", "150", "0", "-5", "+7", "1_000", "abc", "1.5", "", "  ", "\u3000 42 \u3000",
              "١٢", "0x10", "10**3", "1e3", " *.md ", "venv/**\nbuild/", " a\n b ", "true"]
KEYS = list(oracle.FALLBACKS)


def check_env(get_default_value, apply_env, seed, rounds):
    rng = random.Random(seed)
    saved = {k: v for k, v in os.environ.items() if k.startswith("A0_SET_")}
    failures = []
    cases = 0
    try:
        for _ in range(rounds):
            for k in list(os.environ):
                if k.startswith("A0_SET_"):
                    del os.environ[k]
            for key in KEYS:
                for name in (f"_promptinclude__{key}", f"_promptinclude__{key}".upper()):
                    if rng.randrange(3) == 0:
                        os.environ[f"A0_SET_{name}"] = rng.choice(ENV_VALUES)
            setting = {k: v for k, v in os.environ.items() if k.startswith("A0_SET_")}
            defaults = oracle.default_config(False)
            for key, value in defaults.items():
                name = f"_promptinclude__{key}"
                cases += 1
                mine = oracle.env_default(name, value)
                theirs = get_default_value(name, value)
                if type(mine) is not type(theirs) or mine != theirs:
                    failures.append(f"env {setting!r}, key {key}: oracle {mine!r}, reference {theirs!r}")
            if apply_env is not None:
                cases += 1
                mine = oracle.default_config(True)
                theirs = oracle.default_config(False)
                apply_env("_promptinclude", theirs)
                if mine != theirs:
                    failures.append(f"env {setting!r}: oracle {mine!r}, reference {theirs!r}")
    finally:
        for k in list(os.environ):
            if k.startswith("A0_SET_"):
                del os.environ[k]
        os.environ.update(saved)
    return cases, failures


def check_default_config(a0):
    import yaml
    path = os.path.join(a0, "plugins", "_promptinclude", "default_config.yaml")
    with open(path, encoding="utf-8") as fh:
        real = yaml.safe_load(fh.read())
    mine = oracle.default_config(False)
    return [] if real == mine else [f"default config: oracle {mine!r}, plugin {real!r}"]


def main(argv):
    a0 = argv[0]
    opts = {"--trees": 120, "--configs": 10, "--seed": 1}
    for flag, value in zip(argv[1::2], argv[2::2]):
        opts[flag] = int(value)
    real_scan, get_default_value, apply_env = load_reference(a0)
    failures = check_default_config(a0)
    cases, raises, scan_failures = check_scans(
        real_scan, opts["--trees"], opts["--configs"], opts["--seed"])
    env_cases, env_failures = check_env(get_default_value, apply_env, opts["--seed"], 200)
    failures += scan_failures + env_failures
    print(f"crosscheck: {cases} scan cases ({raises} where both raise), {env_cases} env-default "
          f"cases{'' if apply_env else ' (get_default_value only)'}, {len(failures)} differences",
          file=sys.stderr)
    for f in failures[:20]:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
