#!/usr/bin/env python3
"""The project's oracle for the Prompt Include scan.

Written from docs' reference algorithm (../shared/spec/reference-algorithm.md) and
the reference source (Agent Zero's plugins/_promptinclude/helpers/scanner.py and
helpers/tokens.py, the host's config loading in helpers/plugins.py and
helpers/settings.py). It uses the libraries the reference uses: `pathspec`
("gitwildmatch" patterns), `tiktoken` (cl100k_base), PyYAML (`safe_load`).
Run it through ./oracle, which builds its pinned environment.

    oracle [--config FILE] [--project-config [--agent-profile P]]
           [--env-defaults] [--render] ROOT...

Prints one JSON object per root and line, as `json.dumps(obj, ensure_ascii=False)`:
    {"root": ROOT, "files": [...], "skipped_count": N}
or, where the reference would raise for that root (while loading the
configuration or scanning), {"root": ROOT, "raises": "ExceptionTypeName"}.
The exit code is 0 either way. With --render, prints the rendered system-prompt
section of each root instead, separated by a line holding only "\\x1e"; a root
that raises renders as the line "raises: ExceptionTypeName".

Configuration, as the host builds it (values are never validated or converted:
whatever json / YAML yields reaches the scan, and Python's own arithmetic and
comparisons then decide what happens, as in the reference):
  (none)            the plugin's default_config.yaml.
  --config FILE     FILE's keys merged over the defaults, key by key; `.yaml`/`.yml`
                    is read with yaml.safe_load, anything else with json.loads.
  --project-config  per root, the first existing of
                      ROOT/.a0proj/agents/P/plugins/_promptinclude/config.json
                        (only with --agent-profile P),
                      ROOT/.a0proj/plugins/_promptinclude/config.json
                        (only without an agent profile: the host's quirk),
                    read with json.loads and used as a whole: a missing key takes
                    the extension's fallback (`gitignore` falls back to "", no
                    filtering). No file: the defaults, as with no option.
  --batch           (alone) read requests from standard input, one JSON object a line,
                    {"argv": [...], "env": {"A0_SET_...": "..."}}, and answer each as if
                    called with that argv and those A0_SET_ variables (the others
                    removed), followed by a line holding only "\x04". This saves the
                    interpreter's start-up for tests that run it hundreds of times.
  --env-defaults    when the defaults are used (no --config, no project file), apply
                    the host's A0_SET__promptinclude__<key> (or upper-case name)
                    environment overrides like helpers/settings.py get_default_value.
"""
import fnmatch
import json
import os
import re
import sys

import tiktoken
import yaml
from pathspec import PathSpec

PLUGIN = "_promptinclude"

# The plugin's default_config.yaml, verbatim; loaded with yaml.safe_load as the
# host does (the block scalar keeps gitignore's final newline).
DEFAULT_CONFIG_YAML = """\
name_pattern: "*.promptinclude.md"
max_depth: 10
max_file_tokens: 2000
max_file_count: 50
max_total_tokens: 8000
gitignore: |
  venv/**
  **/__pycache__/**
  **/node_modules/**
  **/.npm/**
  **/.git/**
  **/.conda/**
  **/.cache/**
  **/dist/**
  **/build/**
  **/.tox/**
  **/.eggs/**
  **/*.egg-info/**
"""

# What the extension passes when a key is missing: `config.get(key, fallback)`.
FALLBACKS = {
    "name_pattern": "*.promptinclude.md",
    "max_depth": 10,
    "max_file_tokens": 2000,
    "max_file_count": 50,
    "max_total_tokens": 8000,
    "gitignore": "",
}

TRIM_BUFFER = 0.8
_encoding = None


# ---------------------------------------------------------------- tokens

def count_tokens(text):
    """cl100k_base tokens of `text`, special-token strings counted as plain text."""
    global _encoding
    if not text:
        return 0
    if _encoding is None:
        _encoding = tiktoken.get_encoding("cl100k_base")
    return len(_encoding.encode(text, disallowed_special=()))


def trim_start(text, max_tokens):
    """Keeps the start of `text`; the arithmetic is the reference's, operand for
    operand, so that a float, bool or huge int `max_tokens` behaves (or raises) alike."""
    n_chars = len(text)
    n_tokens = count_tokens(text)
    if n_tokens <= max_tokens:
        return text
    keep = int(n_chars * (max_tokens / n_tokens) * TRIM_BUFFER)
    return text[:keep] + "..."


# ---------------------------------------------------------------- discovery

def ignore_spec(gitignore):
    """The compiled ignore lines, or None for no filtering. The truthiness test comes
    first, as in the reference: a falsy value of any type (0, False, [], None) means
    no filtering; a truthy non-string fails on `.strip()`."""
    if not gitignore or not gitignore.strip():
        return None
    lines = []
    for line in gitignore.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            lines.append(stripped)
    if not lines:
        return None
    return PathSpec.from_lines("gitwildmatch", lines)


def find_candidates(root, name_pattern, max_depth, spec):
    """Paths of the rule files under `root`, in walk order (not yet sorted)."""
    root = os.path.abspath(root)
    if not os.path.isdir(root):
        return []
    found = []
    # os.walk: top-down, symlinked directories listed but never entered,
    # unreadable directories silently left out.
    for dirpath, dirnames, filenames in os.walk(root, topdown=True):
        if dirpath[len(root):].count(os.sep) >= max_depth:
            dirnames.clear()
            continue
        if spec:
            kept = []
            for d in dirnames:
                rel = os.path.relpath(os.path.join(dirpath, d), root).replace(os.sep, "/")
                if not (spec.match_file(rel) or spec.match_file(rel + "/")):
                    kept.append(d)
            dirnames[:] = kept
        for name in filenames:
            if not fnmatch.fnmatch(name, name_pattern):
                continue
            path = os.path.join(dirpath, name)
            if spec and spec.match_file(os.path.relpath(path, root).replace(os.sep, "/")):
                continue
            found.append(path)
    return found


# ---------------------------------------------------------------- scan

def scan(root, name_pattern, max_depth, max_file_tokens, max_file_count,
         max_total_tokens, gitignore):
    """The scan and its budget pass. Every comparison and sum keeps the reference's
    operand order, so odd configuration values meet the same Python semantics
    (e.g. `min(n, cap)` returns the first of equal values, NaN compares false)."""
    spec = ignore_spec(gitignore)
    candidates = find_candidates(root, name_pattern, max_depth, spec)
    candidates.sort()

    files = []
    used = 0
    skipped = 0
    exhausted = False

    def entry(path, content, count, status):
        return {"path": path, "content": content, "token_count": count, "status": status}

    for path in candidates:
        if exhausted or len(files) >= max_file_count:
            skipped += 1
            continue
        try:
            # universal newlines, undecodable bytes -> U+FFFD
            with open(path, "r", encoding="utf-8", errors="replace") as fh:
                raw = fh.read()
        except OSError:
            skipped += 1
            continue
        if not raw.strip():
            continue  # blank: accounted for by the reconciliation below
        n = count_tokens(raw)
        path_cost = count_tokens(path) + 5
        if used + path_cost > max_total_tokens:
            skipped += 1
            exhausted = True
            continue
        capped = min(n, max_file_tokens)
        if used + path_cost + capped > max_total_tokens:
            remaining = max_total_tokens - used - path_cost
            if remaining > 50:
                text = trim_start(raw, remaining)
                k = count_tokens(text)
                used += path_cost + k
                files.append(entry(path, text, k, "cropped"))
            else:
                files.append(entry(path, "", 0, "skipped"))
            exhausted = True
            continue
        if capped < n:
            text = trim_start(raw, max_file_tokens)
            k = count_tokens(text)
            used += path_cost + k
            files.append(entry(path, text, k, "cropped"))
        else:
            used += path_cost + n
            files.append(entry(path, raw, n, "ok"))

    unaccounted = len(candidates) - len(files) - skipped
    if unaccounted > 0:
        skipped += unaccounted
    return {"files": files, "skipped_count": skipped}


def scan_promptinclude_files(root, *, name_pattern="*.promptinclude.md", max_depth=10,
                             max_file_tokens=2000, max_file_count=50, max_total_tokens=8000,
                             gitignore=""):
    """The reference's public function, with its signature: keyword-only arguments
    and its keyword defaults (no gitignore patterns, unlike the plugin's config).
    What python/tests compare the package with where the real reference is absent."""
    return scan(root, name_pattern, max_depth, max_file_tokens, max_file_count,
                max_total_tokens, gitignore)


# ---------------------------------------------------------------- render

HEADER = (
    "# Behavioral prompt includes\n"
    '"{{name_pattern}}" files in workdir auto-injected into system prompt\n'
    "create/edit/delete persist across conversations\n"
    "preference change/remember/note > MUST persist via text_editor before responding\n"
    "never just acknowledge verbally always persist to file\n"
    "use for persistent notes knowledge project context\n"
    "recursive search alphabetical by full path \n"
)
BLOCK = "{{path}}{{suffix}}\n```\n{{content}}\n```\n"

# The host's helpers/files.py process_includes patterns, with Python's own `re`.
INCLUDE_ORIGINAL = re.compile(r"{{\s*include\s+original\s*}}")
NAMED_INCLUDE = re.compile(r"{{\s*include\s*['\"](.*?)['\"]\s*}}")


def process_includes(text):
    """What the host's process_includes does after read_prompt_file has filled
    in a template's placeholders, in a host that does not override the plugin's
    templates: `{{ include original }}` finds no lower-priority copy of them and
    becomes ""; a named include is kept as written (the host's answer when no
    prompt folder holds that name; one that does is host-dependent, see the
    README's "Where we differ")."""
    text = INCLUDE_ORIGINAL.sub(lambda m: "", text)
    return NAMED_INCLUDE.sub(lambda m: m.group(0), text)


def render(result, name_pattern):
    """The system-prompt section (spec section 6), with the host's template
    pass over every block and then over the whole section."""
    parts = []
    for e in result["files"]:
        if e["status"] == "skipped":
            parts.append(f"{e['path']} !!! skipped to fit")
            continue
        suffix = " !!! cropped to fit" if e["status"] == "cropped" else ""
        block = BLOCK.replace("{{path}}", e["path"])
        block = block.replace("{{suffix}}", suffix)
        parts.append(process_includes(block.replace("{{content}}", e["content"])))
    if result["skipped_count"] > 0:
        parts.append(f"!!! {result['skipped_count']} more files skipped to fit")
    includes = "\n".join(parts)
    text = HEADER
    if includes:
        text += "\n### includes\n!!! obey all rules preferences instructions below\n\n{{includes}}\n"
    text += "\n"
    text = text.replace("{{name_pattern}}", name_pattern).replace("{{includes}}", includes)
    return process_includes(text)


# ---------------------------------------------------------------- configuration

def load_file(path):
    """A configuration file as the host reads it."""
    with open(path, "r", encoding="utf-8") as fh:
        text = fh.read()
    if path.lower().endswith((".yaml", ".yml")):
        return yaml.safe_load(text)
    return json.loads(text)


def env_default(name, value):
    """helpers/settings.py get_default_value: A0_SET_<name>, else A0_SET_<NAME>,
    converted to the default's type; an unconvertible value keeps the default."""
    env = os.getenv(f"A0_SET_{name}", os.getenv(f"A0_SET_{name.upper()}", None))
    if env is None:
        return value
    try:
        if isinstance(value, bool):
            return env.strip().lower() in ("true", "1", "yes", "on")
        if isinstance(value, dict):
            return json.loads(env.strip())
        if isinstance(value, str):
            return str(env).strip()
        return type(value)(env.strip())
    except (ValueError, TypeError, json.JSONDecodeError):
        return value


def apply_env_defaults(config, prefix=()):
    """helpers/plugins.py _apply_defaults_from_env, on the default config only."""
    for key, child in config.items():
        config[key] = env_default("__".join([PLUGIN, *prefix, key]), child)
        if isinstance(config[key], dict):
            apply_env_defaults(config[key], (*prefix, key))


def default_config(env_defaults):
    config = yaml.safe_load(DEFAULT_CONFIG_YAML)
    if env_defaults:
        apply_env_defaults(config)
    return config


def project_config_file(root, agent_profile):
    meta = os.path.join(os.path.abspath(root), ".a0proj")
    if agent_profile:
        path = os.path.join(meta, "agents", agent_profile, "plugins", PLUGIN, "config.json")
    else:
        path = os.path.join(meta, "plugins", PLUGIN, "config.json")
    return path if os.path.exists(path) else None


def scan_arguments(config):
    """What the extension passes: `(config or {}).get(key, fallback)` per key. A
    truthy non-mapping raises AttributeError there, as it does in the host."""
    config = config or {}
    return {key: config.get(key, fallback) for key, fallback in FALLBACKS.items()}


# ---------------------------------------------------------------- main

USAGE = ("usage: oracle [--config FILE] [--project-config [--agent-profile P]] "
         "[--env-defaults] [--render] ROOT...")


def parse(argv):
    opts = {"config": None, "project": False, "profile": "", "env": False, "render": False}
    roots = []
    it = iter(argv)
    for arg in it:
        if arg == "--config":
            opts["config"] = next(it)
        elif arg == "--project-config":
            opts["project"] = True
        elif arg == "--agent-profile":
            opts["profile"] = next(it)
        elif arg == "--env-defaults":
            opts["env"] = True
        elif arg == "--render":
            opts["render"] = True
        elif arg == "--":
            roots.extend(it)
        elif arg.startswith("--"):
            sys.exit(USAGE)
        else:
            roots.append(arg)
    return opts, roots


def config_for(root, opts, loaded):
    if opts["config"] is not None:
        # the file's keys over the defaults, key by key (a missing key keeps the
        # default, not the extension's fallback); `.get` on a truthy non-mapping
        # raises AttributeError, as in the host
        data = loaded() or {}
        defaults = default_config(False)
        return {key: data.get(key, defaults[key]) for key in FALLBACKS}
    if opts["project"]:
        path = project_config_file(root, opts["profile"])
        if path is not None:
            return scan_arguments(load_file(path))
    return scan_arguments(default_config(opts["env"]))


def main(argv):
    opts, roots = parse(argv)
    cache = {}

    def loaded():
        # the --config file, loaded once; a loading error is raised for every root
        if "value" not in cache:
            try:
                cache["value"] = load_file(opts["config"])
            except Exception as e:  # noqa: BLE001 - any error is the reference's error
                cache["error"] = e
                cache["value"] = None
        if "error" in cache:
            raise cache["error"]
        return cache["value"]

    out = sys.stdout.buffer
    for i, root in enumerate(roots):
        try:
            args = config_for(root, opts, loaded)
            result = scan(root, **args)
            if opts["render"]:
                if not isinstance(args["name_pattern"], str):
                    raise TypeError("name_pattern is not a string")
                text = render(result, args["name_pattern"])
            else:
                text = json.dumps({"root": root, **result}, ensure_ascii=False) + "\n"
        except Exception as e:  # noqa: BLE001
            if opts["render"]:
                text = f"raises: {type(e).__name__}\n"
            else:
                text = json.dumps({"root": root, "raises": type(e).__name__}, ensure_ascii=False) + "\n"
        if opts["render"] and i:
            out.write(b"\x1e\n")
        # file names that are not UTF-8 come back as the bytes they are
        out.write(text.encode("utf-8", "surrogateescape"))
    out.flush()


def batch():
    for line in sys.stdin.buffer:
        request = json.loads(line)
        for name in [n for n in os.environ if n.startswith("A0_SET_")]:
            del os.environ[name]
        os.environ.update(request.get("env", {}))
        main(request["argv"])
        sys.stdout.buffer.write(b"\x04\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    if sys.argv[1:] == ["--batch"]:
        batch()
    else:
        main(sys.argv[1:])
