"""The functions beyond the reference, checked against the CLI's fixtures."""

import inspect
import json
import os

import pytest

import promptinclude

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "fixtures", "trees", "example")


def test_signature_and_docs_match_the_reference():
    sig = inspect.signature(promptinclude.scan_promptinclude_files)
    assert [(p.name, p.kind.name, p.default) for p in sig.parameters.values()] == [
        ("root", "POSITIONAL_OR_KEYWORD", inspect.Parameter.empty),
        ("name_pattern", "KEYWORD_ONLY", "*.promptinclude.md"),
        ("max_depth", "KEYWORD_ONLY", 10),
        ("max_file_tokens", "KEYWORD_ONLY", 2000),
        ("max_file_count", "KEYWORD_ONLY", 50),
        ("max_total_tokens", "KEYWORD_ONLY", 8000),
        ("gitignore", "KEYWORD_ONLY", ""),
    ]
    for fn in (promptinclude.scan_promptinclude_files, promptinclude.scan_many,
               promptinclude.render, promptinclude.audit, promptinclude.check_ignore):
        assert fn.__doc__ and len(fn.__doc__) > 100


def test_scan_many_equals_single_scans(tmp_path):
    roots = [EXAMPLE, str(tmp_path / "missing"), EXAMPLE]
    config = dict(promptinclude.DEFAULT_CONFIG, max_total_tokens=2000)
    many = promptinclude.scan_many(roots, config, threads=2)
    assert many == [promptinclude.scan_promptinclude_files(r, **config) for r in roots]
    assert promptinclude.scan_many(roots) == promptinclude.scan_many(roots, threads=1)
    with pytest.raises(ValueError):
        promptinclude.scan_many(roots, {"max_dpth": 3})
    with pytest.raises(ValueError):
        promptinclude.scan_many(roots, threads=0)


@pytest.mark.parametrize("name", ["default_config", "count1", "negation", "pattern", "default"])
def test_render_and_scan_equal_the_oracle_fixtures(name):
    """fixtures/expected/example.NAME.{jsonl,md} were produced by the oracle."""
    jsonl = os.path.join(REPO, "fixtures", "expected", f"example.{name}.jsonl")
    md = os.path.join(REPO, "fixtures", "expected", f"example.{name}.md")
    if not os.path.exists(jsonl):
        pytest.skip(f"no fixture {jsonl}")
    record = json.loads(open(jsonl, encoding="utf-8").readline())
    with open(md, encoding="utf-8", newline="") as fh:
        expected_text = fh.read()
    result = {"files": record["files"], "skipped_count": record["skipped_count"]}
    # The name pattern used is printed on the section's second line.
    pattern = expected_text.split("\n")[1].split('"')[1]
    assert promptinclude.render(result, pattern) == expected_text


def test_audit_and_check_ignore():
    report = promptinclude.audit(EXAMPLE, promptinclude.DEFAULT_CONFIG)
    assert report["is_dir"] is True and report["files"]
    scan = promptinclude.scan_promptinclude_files(EXAMPLE, **promptinclude.DEFAULT_CONFIG)
    assert report["totals"]["skipped_count"] == scan["skipped_count"]
    records = promptinclude.check_ignore(
        ["node_modules/x.promptinclude.md", "src/", "venv/"], promptinclude.DEFAULT_GITIGNORE
    )
    assert [r["ignored"] for r in records] == [True, False, True]
    assert records[0]["pattern"] == "**/node_modules/**" and records[0]["line"] == 3
    assert promptinclude.check_ignore(["a"], "") == [
        {"path": "a", "ignored": False, "pattern": None, "line": None}
    ]
    with pytest.raises(ValueError):
        promptinclude.check_ignore(["a"], "!")


def test_non_utf8_names_round_trip(tmp_path):
    name = os.path.join(os.fsencode(str(tmp_path)), b"\xff.promptinclude.md")
    with open(name, "wb") as fh:
        fh.write(b"rule")
    result = promptinclude.scan_promptinclude_files(str(tmp_path))
    assert result["files"][0]["path"] == os.fsdecode(name)
    assert "\udcff" in promptinclude.render(result)


def test_context_codex_follows_the_chain_the_limit_and_the_override(tmp_path):
    """Codex's documented rules, as `promptinclude context --agent codex`
    models them (checked against the real Codex in tests/agents)."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    (repo / "AGENTS.md").write_text("ROOT\n")
    (repo / "sub" / "AGENTS.override.md").write_text("O\n")
    (repo / "sub" / "AGENTS.md").write_text("S\n")
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text("project_doc_max_bytes = 6\n")
    os.environ.pop("CODEX_HOME", None)
    doc = promptinclude.context("codex", repo / "sub", home)
    assert doc["schema"] == "promptinclude.context/1"
    assert doc["root"] == os.path.realpath(repo)
    statuses = [(os.path.relpath(f["path"], repo), f["status"]) for f in doc["files"]]
    assert statuses == [
        ("AGENTS.md", "loaded"),
        ("sub/AGENTS.override.md", "truncated"),
        ("sub/AGENTS.md", "shadowed"),
    ]
    assert (doc["files"][1]["at"], doc["files"][1]["of"]) == (1, 2)
    assert doc["limit"] == {"max": 6, "used": 6}
    cwd = os.path.realpath(repo / "sub")
    assert doc["raw"] == f"# AGENTS.md instructions for {cwd}\n\n<INSTRUCTIONS>\nROOT\n\n\nO\n</INSTRUCTIONS>"
    with pytest.raises(ValueError, match="unknown agent"):
        promptinclude.context("no-such-agent", repo)


def test_context_claude_code_pi_gemini_opencode_and_agent_zero(tmp_path, monkeypatch):
    """Each modelled agent through the same call; the framing each sends
    (proven against the real agents in tests/agents and tests/pi)."""
    for variable in ("CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "GEMINI_CLI_HOME", "XDG_CONFIG_HOME", "OPENCODE_DISABLE_CLAUDE_CODE", "OPENCODE_DISABLE_CLAUDE_CODE_PROMPT"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "CLAUDE.md").write_text("C @missing.md\n")
    (repo / "AGENTS.md").write_text("A\n")
    (repo / "GEMINI.md").write_text("G\n")
    (repo / "rule.promptinclude.md").write_text("R\n")
    home = tmp_path / "home"
    home.mkdir()
    real = os.path.realpath(repo)

    claude = promptinclude.context("claude-code", repo, home)
    assert [p["place"] for p in claude["parts"]] == ["user_message"]
    assert claude["raw"].startswith("<system-reminder>\n") and claude["raw"].endswith(f"Contents of {real}/CLAUDE.md (project instructions, checked into the codebase):\n\nC @missing.md\n</system-reminder>")
    by_status = {f["status"]: f for f in claude["files"]}
    assert by_status["unresolved"]["imported_by"] == f"{real}/CLAUDE.md"
    assert by_status["shadowed"]["path"] == f"{real}/AGENTS.md"

    pi = promptinclude.context("pi", repo, home)
    assert pi["parts"] == [{"place": "system_prompt", "text": f"# Project Context\n\nProject-specific instructions and guidelines:\n\n## {real}/AGENTS.md\n\nA\n\n\n", "bytes": pi["parts"][0]["bytes"], "tokens": pi["parts"][0]["tokens"]}]

    gemini = promptinclude.context("gemini", repo, home)
    assert gemini["parts"] == [{"place": "user_message", "text": f"<loaded_context>\n<project_context>\n--- Context from: {real}/GEMINI.md ---\nG\n--- End of Context from: {real}/GEMINI.md ---\n</project_context>\n</loaded_context>", "bytes": gemini["parts"][0]["bytes"], "tokens": gemini["parts"][0]["tokens"]}]

    # opencode: AGENTS.md is found first, so CLAUDE.md is never read.
    opencode = promptinclude.context("opencode", repo, home)
    assert opencode["raw"] == f"Instructions from: {real}/AGENTS.md\nA\n"
    assert [(f["path"], f["status"]) for f in opencode["files"]] == [(f"{real}/AGENTS.md", "loaded"), (f"{real}/CLAUDE.md", "shadowed")]

    zero = promptinclude.context("agent-zero", repo, home)
    assert zero["raw"] == promptinclude.render(promptinclude.scan_promptinclude_files(real))
    assert [p["place"] for p in zero["parts"]] == ["system_prompt"]
