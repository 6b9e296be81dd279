"""`promptinclude audit --sarif` checked by the real validators.

    python3 tests/sarif/check_sarif.py BIN MULTITOOL SCHEMA

For trees built to raise the audit's warnings (the fixtures, the agents'
monorepo, hidden text, configuration mistakes, links leaving a git
repository, a root that is a file, a run past the results cap: every kind
but `unreadable_dir`, which a test running as root cannot raise), each SARIF
log must be valid by the official SARIF 2.1.0 schema (shipped in the
validator's npm package) and by Microsoft's SARIF Multitool with its SARIF
and GitHub rules (`validate --rule-kind Sarif;Gh`), and must say what the
`--json` records say: one result per warning, its kind as the rule, at its
file (relative to the working directory) and line, with a fingerprint that
two runs give alike. Run by scripts/test-sarif, which installs both.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import jsonschema

BIN, MULTITOOL, SCHEMA = sys.argv[1:4]
REPO = Path(__file__).resolve().parents[2]
# The one finding the validator may report: the tool names no web page
# (`informationUri`); the project has none to name.
ALLOWED = {"SARIF2005"}

schema = json.loads(Path(SCHEMA).read_text(encoding="utf-8-sig"))
validator = jsonschema.Draft202012Validator(schema)
kinds_seen = set()
logs = 0


def run(args, cwd, env=None):
    full = dict(os.environ, **(env or {}))
    full.pop("NO_COLOR", None)
    return subprocess.run([BIN, *args], cwd=cwd, env=full, capture_output=True)


def audit(name, roots, cwd, extra=(), env=None, cap=False):
    """Audits `roots` with --json and --sarif; checks the log against the records."""
    global logs
    sarif = Path(cwd) / f"{name}.sarif"
    out = run(["audit", "--json", "--sarif", str(sarif), *extra, *roots], cwd, env)
    assert out.returncode in (0, 1), (name, out.stderr.decode())
    records = [json.loads(line) for line in out.stdout.decode().splitlines()]
    log = json.loads(sarif.read_text())
    # The official schema.
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(log)]
    assert not errors, (name, errors[:5])
    # Microsoft's validator, with GitHub's rules.
    report = Path(cwd) / f"{name}.validation.sarif"
    v = subprocess.run(
        [MULTITOOL, "validate", str(sarif), "-o", str(report), "-j", SCHEMA, "--rule-kind", "Sarif;Gh", "--log", "ForceOverwrite"],
        capture_output=True,
    )
    assert v.returncode == 0, (name, v.stdout.decode(), v.stderr.decode())
    found = json.loads(report.read_text())["runs"][0].get("results", [])
    bad = [(r["ruleId"], r["message"]) for r in found if r["ruleId"] not in ALLOWED]
    assert not bad, (name, bad[:5])
    logs += 1
    # What the records say, and what the log says.
    run0 = log["runs"][0]
    rules = run0["tool"]["driver"]["rules"]
    warnings = []
    for r in records:
        if r["type"] != "root":
            continue
        for w in r["warnings"]:
            path = w.get("path") or r["abs_root"]
            warnings.append((w["kind"], None, path, w.get("line"), w.get("column")))
        for w in (r.get("agents") or {}).get("warnings", []):
            warnings.append((w["kind"], w["agent"], w["path"], w.get("line"), w.get("column")))
    results = run0["results"]
    shown = []
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"], res
        loc = res["locations"][0]["physicalLocation"]
        uri = loc["artifactLocation"]["uri"]
        path = urllib.parse.unquote(uri[len("file://"):] if uri.startswith("file://") else str(Path(cwd) / uri))
        if uri == "./":
            path = str(Path(cwd))
        line = loc["region"]["startLine"]
        agent = (res.get("properties") or {}).get("agent")
        shown.append((res["ruleId"], agent or "", os.path.normpath(path), line, loc["region"].get("startColumn") or 0))
    expected = [(k, a or "", os.path.normpath(p), line or 1, col or 0) for k, a, p, line, col in warnings]
    notes = run0["invocations"][0]["toolExecutionNotifications"]
    if cap:
        assert len(results) == 5000 < len(expected), (name, len(results), len(expected))
        assert notes and f"{len(expected) - 5000} of {len(expected)} results left out" in notes[0]["message"]["text"], notes
        assert set(shown) <= set(expected)
        # The most severe are kept.
        levels = [r["level"] for r in results]
        assert levels.count("error") == sum(1 for k, *_ in expected if k in ("hidden_text", "symlink_outside_root", "symlink_to_uncommitted")), name
    else:
        assert sorted(shown) == sorted(expected), (name, sorted(set(shown) ^ set(expected))[:5])
        assert notes == []
    # Stable fingerprints: unique within a run, the same in a second run.
    prints = [r["partialFingerprints"]["promptincludeFinding/v1"] for r in results]
    assert len(set(prints)) == len(prints), name
    again = Path(cwd) / f"{name}.again.sarif"
    run(["audit", "--json", "--sarif", str(again), *extra, *roots], cwd, env)
    assert prints == [r["partialFingerprints"]["promptincludeFinding/v1"] for r in json.loads(again.read_text())["runs"][0]["results"]], name
    kinds_seen.update(k for k, *_ in shown)
    print(f"check_sarif: {name}: {len(results)} results valid, {len({k for k, *_ in shown})} kinds")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)


def git(cwd, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True)


with tempfile.TemporaryDirectory() as tmp:
    tmp = Path(tmp).resolve()
    # The fixture trees (links, blank, invalid UTF-8, cropping, depth, pruning).
    shutil.copytree(REPO / "fixtures/trees", tmp / "trees", symlinks=True)
    audit("fixtures", ["trees/example", "trees/quirks"], tmp, ["--max-total-tokens", "2000"])
    # The agents' monorepo, every agent.
    shutil.copytree(REPO / "fixtures/agents", tmp / "agents", symlinks=True)
    audit("agents", ["agents/mono"], tmp, ["--agents", "all", "--home", str(tmp / "agents/home")])
    # Hidden text in a rule file and in what agents send; imports.
    hidden = tmp / "hidden"
    write(hidden / "a.promptinclude.md", "be kind\U000E0041\U000E0042 and \u202eevil\u202c\n")
    write(hidden / "AGENTS.md", "# Rules\nuse\u200btabs\n")
    write(hidden / "CLAUDE.md", "@missing.md\n@AGENTS.md\n")
    write(hidden / "docs/GEMINI.md", "x\u2066y\u2069\n")
    (hidden / ".git").mkdir()
    # Imports that loop and go too deep, a rule past Claude Code's size
    # warning, Cursor front matter, the include that renders as nothing, a
    # rule file that is not a regular file.
    write(hidden / "loop/CLAUDE.md", "@a.md\n")
    write(hidden / "loop/a.md", "@b.md\n")
    write(hidden / "loop/b.md", "@a.md\n")
    for i in range(7):
        write(hidden / f"deep/d{i}.md", f"@d{i + 1}.md\n")
    write(hidden / "deep/CLAUDE.md", "@d0.md\n")
    write(hidden / "big/CLAUDE.md", "word " * 9000)
    write(hidden / ".cursor/rules/go.mdc", '---\nglobs: "*.go"\n---\ngo\n')
    write(hidden / "orig.promptinclude.md", "{{ include original }}\n")
    os.mkfifo(hidden / "fifo.promptinclude.md")
    # A link a checkout without links wrote as text.
    write(hidden / "linked/AGENTS.md", "linked rules\n")
    write(hidden / "linked/CLAUDE.md", "AGENTS.md")
    # A link to a page that is gone.
    write(hidden / "linked/GEMINI.md", "See [setup](docs/setup.md).\n")
    audit("hidden", ["hidden"], tmp, ["--agents", "all", "--home", str(tmp / "agents/home")])
    # Configuration mistakes, limits out of range, a root that is a file,
    # a case-only name, a nested repository.
    conf = tmp / "conf"
    write(conf / "a.promptinclude.md", "a\n")
    write(conf / "B.PROMPTINCLUDE.MD", "b\n")
    write(conf / "vendor/x/.git/HEAD", "ref: refs/heads/main\n")
    write(conf / "vendor/x/v.promptinclude.md", "v\n")
    write(conf / "dropped/x.promptinclude.md", "dropped\n")
    write(tmp / "bad.json", '{"max_total_tokens": 1.5, "bogus_key": 1, "gitignore": "dropped/x.promptinclude.md"}')
    audit("config", ["conf", "conf/a.promptinclude.md"], tmp, ["--config", str(tmp / "bad.json")])
    audit("limits", ["conf"], tmp, ["--max-file-tokens", "50", "--max-file-count", "300"])
    audit("env", ["conf"], tmp, env={"A0_SET__promptinclude__max_depth": "deep"})
    # Links out of a git repository, and to what HEAD does not commit.
    links = tmp / "links"
    write(links / "ok.promptinclude.md", "ok\n")
    write(tmp / "outside.md", "outside\n")
    links.mkdir(exist_ok=True)
    git(links, "init", "-q")
    git(links, "add", ".")
    git(links, "commit", "-qm", "c")
    os.symlink(tmp / "outside.md", links / "out.promptinclude.md")
    os.symlink("ok.promptinclude.md", links / "new.promptinclude.md")
    audit("links", ["links"], tmp)
    audit("links-withheld", ["links"], tmp, ["--links", "inside"])
    # Past the cap: 5,100 blank rule files and one link leaving the root.
    many = tmp / "many"
    for i in range(5100):
        write(many / f"d{i // 100}/f{i}.promptinclude.md", "")
    os.symlink(tmp / "outside.md", many / "out.promptinclude.md")
    audit("cap", ["many"], tmp, ["--max-file-count", "200"], cap=True)

print(f"check_sarif: {logs} logs valid; kinds with results: {', '.join(sorted(kinds_seen))}")
# Every kind these trees are built to raise is among the results.
wanted = {
    "blank_file", "broken_symlink", "cropped", "host_include", "host_placeholder", "hidden_text",
    "invalid_utf8", "limit_out_of_range", "nested_repository", "root_not_directory", "skipped",
    "surprising_value", "symlink_loop", "symlink_outside_root", "symlink_to_uncommitted",
    "undiscovered_case", "undiscovered_pruned", "undiscovered_too_deep", "unknown_config_key",
    "invalid_env_value", "withheld", "truncated", "shadowed", "dead_scope", "unresolved_import",
    "not_shared", "duplicate", "host_include_original", "import_cycle", "import_too_deep",
    "over_recommended", "bad_front_matter", "unreadable", "link_as_text", "stale_reference", "undiscovered_ignored",
}
missing = wanted - kinds_seen
assert not missing, f"no result of {sorted(missing)}"
