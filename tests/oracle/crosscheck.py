#!/usr/bin/env python3
"""Cross-check of the project's oracle (oracle.py) against the REAL reference.

Runs oracle.scan and Agent Zero's own `scan_promptinclude_files` side by side on
random trees and random configurations, odd value types included (floats, bools,
negatives, NaN, infinities, huge ints, Decimal, Fraction, complex, None, lists,
bytes...), and compares the Python results (or, where they raise, the exception
types and messages). It also checks the
oracle's A0_SET_ environment defaults against the real
helpers.settings.get_default_value and helpers.plugins._apply_defaults_from_env,
and its embedded default config against the plugin's default_config.yaml.

Needs the reference source: run through ./crosscheck (which uses the oracle's
venv and PYTHONPATH=<agent-zero>). Exits 1 on any difference.

    crosscheck.py AGENT_ZERO_DIR [--trees N] [--configs M] [--seed S]
"""
import importlib.util
import os
import random
import shutil
import sys
import tempfile
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import oracle  # noqa: E402
import randomtrees  # noqa: E402
from randomtrees import random_tree  # noqa: E402


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


# ------------------------------------------------------------ random configs

def random_config(rng, number=randomtrees.random_number):
    """A whole configuration: the plugin's defaults, some keys replaced by
    the shared generator's random values."""
    cfg = dict(oracle.FALLBACKS)
    cfg["gitignore"] = oracle.default_config(False)["gitignore"]
    cfg.update(randomtrees.random_config(rng, number=number))
    return cfg


# ------------------------------------------------------------ comparison

def outcome(fn, root, cfg):
    try:
        return ("returns", fn(root, **cfg))
    except Exception as e:  # noqa: BLE001
        # the message too: the oracle's code is the reference's statements, so the
        # same operation raises (python/tests compare Decimal arithmetic's messages)
        return ("raises", type(e).__name__, str(e))


def check_scans(real_scan, trees, configs, seed, number=randomtrees.random_number):
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
                cfg = random_config(rng, number)
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
    # the four numbers from every type of Python's numeric tower (Decimal, Fraction...)
    tower_cases, tower_raises, tower_failures = check_scans(
        real_scan, max(opts["--trees"] // 3, 1), opts["--configs"], opts["--seed"] + 1,
        number=randomtrees.tower_number)
    cases += tower_cases
    raises += tower_raises
    env_cases, env_failures = check_env(get_default_value, apply_env, opts["--seed"], 200)
    failures += scan_failures + tower_failures + env_failures
    print(f"crosscheck: {cases} scan cases ({raises} where both raise), {env_cases} env-default "
          f"cases{'' if apply_env else ' (get_default_value only)'}, {len(failures)} differences",
          file=sys.stderr)
    for f in failures[:20]:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
