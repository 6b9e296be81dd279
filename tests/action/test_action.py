"""Run the composite GitHub Action (action.yml) locally, as the runner would.

For each step: evaluate its `if:` and the `${{ }}` expressions of its env, run
and with (inputs.*, github.*, steps.*.outputs.*, and the status functions;
anything else fails loudly), run `run:` steps with the step's shell in a
temporary git repository with GITHUB_OUTPUT / GITHUB_STEP_SUMMARY /
GITHUB_EVENT_PATH / GITHUB_API_URL set (a mock GitHub API on 127.0.0.1 records
every request), and record `uses:` steps. Expected values come from running
the real `promptinclude` in the same repositories.

Started by tests/action/run.sh (which provides PyYAML); PROMPTINCLUDE_BIN is
the binary under test. Temporary directories are kept and printed on failure.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import traceback
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text(encoding="utf-8"))
BIN = Path(os.environ.get("PROMPTINCLUDE_BIN", REPO / "target/release/promptinclude")).resolve()
MARKER = "<!-- promptinclude-action:diff -->"


class ExprError(Exception):
    pass


# ---------------------------------------------------------------- expressions

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\)|,)"
    r"|(?P<num>\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z_][A-Za-z0-9_-]*)*))"
)


def tokenize(src: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    src = src.strip()
    while pos < len(src):
        m = TOKEN.match(src, pos)
        if not m or m.end() == pos:
            raise ExprError(f"cannot parse expression {src!r} at {src[pos:]!r}")
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    return out


class Ctx:
    """What the expressions can see: the action's inputs, github.*, steps.*."""

    def __init__(self, inputs: dict, github: dict):
        self.inputs = inputs
        self.github = github
        self.steps: dict[str, dict] = {}
        self.failed = False
        self.used: set[str] = set()

    def lookup(self, name: str):
        parts = name.split(".")
        self.used.add(name)
        if parts[0] == "inputs" and len(parts) == 2:
            if parts[1] not in self.inputs:
                raise ExprError(f"undeclared input {name}")
            return self.inputs[parts[1]]
        if parts[0] == "github" and len(parts) == 2:
            if parts[1] not in self.github:
                raise ExprError(f"the test does not know {name}")
            return self.github[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            if parts[1] not in {s.get("id") for s in ACTION["runs"]["steps"]}:
                raise ExprError(f"{name}: no step with id {parts[1]}")
            return self.steps.get(parts[1], {}).get("outputs", {}).get(parts[3], "")
        if parts[0] == "steps" and len(parts) == 3 and parts[2] in ("outcome", "conclusion"):
            return self.steps.get(parts[1], {}).get("outcome", "")
        raise ExprError(f"unknown expression context {name!r}")


class Parser:
    def __init__(self, src: str, ctx: Ctx):
        self.src, self.toks, self.i, self.ctx = src, tokenize(src), 0, ctx

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise ExprError(f"expected {value or 'a token'} in {self.src!r}")
        self.i += 1
        return tok

    def parse(self):
        v = self.or_()
        if self.i != len(self.toks):
            raise ExprError(f"trailing tokens in {self.src!r}")
        return v

    def or_(self):
        v = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            r = self.and_()
            v = v if truthy(v) else r
        return v

    def and_(self):
        v = self.cmp()
        while self.peek() == ("op", "&&"):
            self.take()
            r = self.cmp()
            v = r if truthy(v) else v
        return v

    def cmp(self):
        v = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            r = self.unary()
            eq = norm(v) == norm(r)
            v = eq if op == "==" else not eq
        return v

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.atom()

    def atom(self):
        kind, val = self.take()
        if kind == "str":
            return val[1:-1].replace("''", "'")
        if kind == "num":
            return val
        if (kind, val) == ("op", "("):
            v = self.or_()
            self.take(")")
            return v
        if kind == "ident":
            if self.peek() == ("op", "("):
                self.take()
                self.take(")")
                funcs = {
                    "success": lambda: not self.ctx.failed,
                    "failure": lambda: self.ctx.failed,
                    "always": lambda: True,
                    "cancelled": lambda: False,
                }
                if val not in funcs:
                    raise ExprError(f"unknown function {val}() in {self.src!r}")
                return funcs[val]()
            if val in ("true", "false"):
                return val == "true"
            return self.ctx.lookup(val)
        raise ExprError(f"unexpected {val!r} in {self.src!r}")


def truthy(v) -> bool:
    return bool(v) and v != "false" if isinstance(v, str) else bool(v)


def norm(v):
    # GitHub compares strings case-insensitively; booleans as true/false.
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v).lower()


EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def evaluate(src: str, ctx: Ctx):
    return Parser(src, ctx).parse()


def substitute(text, ctx: Ctx) -> str:
    if not isinstance(text, str):
        return "" if text is None else str(text).lower() if isinstance(text, bool) else str(text)

    def one(m):
        v = evaluate(m.group(1), ctx)
        return norm(v) if isinstance(v, bool) else str(v)

    return EXPR.sub(one, text)


def condition(step: dict, ctx: Ctx) -> bool:
    src = step.get("if")
    if src is None:
        return not ctx.failed  # success()
    src = str(src).strip()
    m = EXPR.fullmatch(src)
    if m:
        src = m.group(1)
    expr_has_status = re.search(r"\b(success|failure|always|cancelled)\s*\(", src)
    v = truthy(evaluate(src, ctx))
    return v if expr_has_status else (v and not ctx.failed)


# ---------------------------------------------------------------- mock API


class MockGitHub:
    def __init__(self):
        self.requests: list[dict] = []
        self.comments: dict[int, dict] = {}
        self.next_id = 1000
        mock = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def reply(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def handle_any(self, method):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n) if n else b""
                body = json.loads(raw) if raw else None
                mock.requests.append(
                    {"method": method, "path": self.path, "auth": self.headers.get("Authorization"), "body": body}
                )
                path, _, query = self.path.partition("?")
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments", path)
                if m and method == "GET":
                    page = int(dict(kv.split("=") for kv in query.split("&") if kv).get("page", "1"))
                    items = [c for c in mock.comments.values() if c["issue"] == int(m.group(2))]
                    return self.reply(200, items if page == 1 else [])
                if m and method == "POST":
                    cid = mock.next_id
                    mock.next_id += 1
                    mock.comments[cid] = {
                        "id": cid,
                        "issue": int(m.group(2)),
                        "body": body["body"],
                        "html_url": f"https://github.test/{m.group(1)}/pull/{m.group(2)}#issuecomment-{cid}",
                    }
                    return self.reply(201, mock.comments[cid])
                m = re.fullmatch(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)", path)
                if m and method == "PATCH" and int(m.group(2)) in mock.comments:
                    mock.comments[int(m.group(2))]["body"] = body["body"]
                    return self.reply(200, mock.comments[int(m.group(2))])
                return self.reply(404, {"message": "Not Found"})

            def do_GET(self):
                self.handle_any("GET")

            def do_POST(self):
                self.handle_any("POST")

            def do_PATCH(self):
                self.handle_any("PATCH")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


# ---------------------------------------------------------------- runner


def parse_output_file(path: Path) -> dict:
    out, lines, i = {}, path.read_text(encoding="utf-8").splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            i += 1
            val = []
            while lines[i] != delim:
                val.append(lines[i])
                i += 1
            out[name] = "\n".join(val)
        elif "=" in line:
            name, val = line.split("=", 1)
            out[name] = val
        elif line.strip():
            raise AssertionError(f"bad GITHUB_OUTPUT line {line!r}")
        i += 1
    return out


SHELLS = {"bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"], "sh": ["sh", "-e"]}


class Result:
    def __init__(self):
        self.steps: list[dict] = []
        self.outputs: dict = {}
        self.summary = ""
        self.failed = False

    def step(self, sid):
        return next(s for s in self.steps if s["id"] == sid)

    def log(self):
        return "".join(f"--- step {s['id']} ({s['outcome']})\n{s.get('stdout','')}{s.get('stderr','')}" for s in self.steps)


def run_action(work: Path, tmp: Path, inputs: dict, event_name="push", event=None, api=None, path_dirs=(), extra_env=None):
    declared = ACTION["inputs"]
    unknown = set(inputs) - set(declared)
    assert not unknown, f"test passes undeclared inputs {unknown}"
    event_path = tmp / "event.json"
    event_path.write_text(json.dumps(event or {}), encoding="utf-8")
    github = {
        "action_path": str(REPO),
        "event_name": event_name,
        "token": "ghs_testtoken",
        "workspace": str(work),
        "repository": "octo/rules",
        "api_url": api.url if api else "http://127.0.0.1:9",
        "event_path": str(event_path),
    }
    ctx = Ctx({}, github)
    # The inputs' defaults are expressions too (github-token: ${{ github.token }}).
    for name, spec in declared.items():
        ctx.inputs[name] = str(inputs[name]) if name in inputs else substitute(spec.get("default", ""), ctx)
    res = Result()
    base_env = {
        "PATH": os.pathsep.join([*map(str, path_dirs), "/usr/local/bin", "/usr/bin", "/bin"]),
        "HOME": str(tmp / "home"),
        "LANG": "C.UTF-8",
        "GITHUB_ACTIONS": "true",
        "CI": "true",
        "GITHUB_WORKSPACE": str(work),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event_path),
        "GITHUB_API_URL": github["api_url"],
        "GITHUB_REPOSITORY": github["repository"],
        "GITHUB_ACTION_PATH": str(REPO),
        "RUNNER_TEMP": str(tmp / "runner-temp"),
        **(extra_env or {}),
    }
    (tmp / "home").mkdir(exist_ok=True)
    (tmp / "runner-temp").mkdir(exist_ok=True)
    gh_path = tmp / "github_path"
    gh_path.write_text("")
    base_env["GITHUB_PATH"] = str(gh_path)
    for n, step in enumerate(ACTION["runs"]["steps"]):
        sid = step.get("id", f"step{n}")
        rec = {"id": sid, "outcome": "skipped"}
        res.steps.append(rec)
        if not condition(step, ctx):
            ctx.steps[sid] = {"outputs": {}, "outcome": "skipped"}
            continue
        if "run" in step:
            shell = step.get("shell")
            assert shell in SHELLS, f"step {sid}: composite run steps need a known shell, got {shell!r}"
            out_file, sum_file = tmp / f"out-{n}", tmp / f"summary-{n}"
            out_file.write_text("")
            sum_file.write_text("")
            env = dict(base_env)
            # Lines added to GITHUB_PATH apply to the later steps, as on a runner.
            added = [l for l in gh_path.read_text().splitlines() if l]
            env["PATH"] = os.pathsep.join([*reversed(added), env["PATH"]])
            env.update({k: substitute(v, ctx) for k, v in (step.get("env") or {}).items()})
            env.update({"GITHUB_OUTPUT": str(out_file), "GITHUB_STEP_SUMMARY": str(sum_file)})
            script = tmp / f"step-{n}.sh"
            script.write_text(substitute(step["run"], ctx), encoding="utf-8")
            p = subprocess.run([*SHELLS[shell], str(script)], cwd=work, env=env, capture_output=True, text=True)
            rec.update(stdout=p.stdout, stderr=p.stderr, rc=p.returncode, env=env)
            rec["outputs"] = parse_output_file(out_file)
            res.summary += sum_file.read_text(encoding="utf-8")
            rec["outcome"] = "success" if p.returncode == 0 else "failure"
        elif "uses" in step:
            rec.update(uses=step["uses"], with_={k: substitute(v, ctx) for k, v in (step.get("with") or {}).items()})
            rec["outputs"] = {}
            rec["outcome"] = "success"
        else:
            raise AssertionError(f"step {sid}: neither run nor uses")
        if rec["outcome"] == "failure":
            ctx.failed = True
        ctx.steps[sid] = {"outputs": rec["outputs"], "outcome": rec["outcome"]}
    res.outputs = {k: substitute(v["value"], ctx) for k, v in ACTION["outputs"].items()}
    res.failed = ctx.failed
    return res


# ---------------------------------------------------------------- fixtures


def git(work: Path, *args) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
        cwd=work, check=True, capture_output=True, text=True,
    ).stdout.strip()


def make_repo(tmp: Path, files: dict) -> Path:
    work = tmp / "repo"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    write(work, files)
    git(work, "add", "-A")
    git(work, "commit", "-qm", "base")
    return work


def write(work: Path, files: dict):
    for rel, text in files.items():
        p = work / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def pi(work: Path, *args) -> subprocess.CompletedProcess:
    """The real promptinclude, for the expected values."""
    return subprocess.run([str(BIN), *args], cwd=work, capture_output=True, text=True)


def tool_dir(tmp: Path) -> Path:
    d = tmp / "bin"
    d.mkdir(exist_ok=True)
    if not (d / "promptinclude").exists():
        (d / "promptinclude").symlink_to(BIN)
    return d


GOOD = {
    "project.promptinclude.md": "# Project\nUse tabs.\n",
    "docs/style.promptinclude.md": "Write short sentences.\n",
}
BIG = "word " * 3000 + "\n"  # more than the default 2000-token per-file cap


def summary_tokens(work: Path, *args) -> dict:
    p = pi(work, "audit", "--json", *args, ".")
    return json.loads(p.stdout.splitlines()[-1])


# ---------------------------------------------------------------- tests


def test_expressions_are_known():
    """Every ${{ }} in action.yml parses, and inputs.X are declared inputs."""
    text = (REPO / "action.yml").read_text(encoding="utf-8")
    exprs = EXPR.findall(text)
    exprs += [str(s["if"]) for s in ACTION["runs"]["steps"] if "if" in s and "${{" not in str(s["if"])]
    assert exprs, "no expressions found"
    for e in exprs:
        for name in re.findall(r"\binputs\.([A-Za-z0-9_-]+)", e):
            assert name in ACTION["inputs"], f"${{{{ inputs.{name} }}}} is not a declared input"
        tokenize(e)
    # The evaluator refuses what it does not know, rather than guessing.
    ctx = Ctx({"roots": "."}, {"token": "x"})
    for bad in ("env.FOO", "inputs.nope", "github.nope", "steps.nope.outputs.x", "hashFiles('x')", "inputs.roots ="):
        try:
            evaluate(bad, ctx)
        except ExprError:
            continue
        raise AssertionError(f"expression {bad!r} evaluated instead of failing")
    assert evaluate("inputs.roots == '.' && !cancelled()", ctx) is True
    # Every step's env passes its inputs as INPUT_*, and run: uses no expressions.
    for s in ACTION["runs"]["steps"]:
        if "run" in s:
            assert "${{" not in s["run"], f"step {s['id']}: pass inputs through env, not in run:"
            for k in (s.get("env") or {}):
                assert k.startswith("INPUT_"), f"step {s['id']}: env {k} is not INPUT_*"


def test_clean_repo_passes(tmp: Path):
    work = make_repo(tmp, GOOD)
    res = run_action(work, tmp, {"fail-on": "cropped,skipped", "max-tokens": "1000", "html": "audit.html"},
                     path_dirs=[tool_dir(tmp)])
    assert not res.failed, res.log()
    want = summary_tokens(work)
    o = res.outputs
    assert o["exit-code"] == "0", o
    assert o["tokens"] == str(want["tokens_included"]) and want["tokens_included"] > 0, (o, want)
    assert o["tokens-counted"] == str(want["tokens_counted"]), (o, want)
    assert o["rule-files"] == "2" and o["cropped"] == "0" and o["skipped"] == "0", o
    assert o["version"] == pi(work, "--version").stdout.splitlines()[0].split()[-1], o
    html = Path(o["html"])
    assert html == work / "audit.html" and html.is_file(), o
    assert "<html" in html.read_text(encoding="utf-8").lower()
    up = res.step("upload")
    assert up["outcome"] == "success" and up["uses"] == "actions/upload-artifact@v4", up
    assert up["with_"]["path"] == str(html) and Path(up["with_"]["path"]).is_file(), up
    assert up["with_"]["name"] == "promptinclude-audit", up
    assert res.step("diff")["outcome"] == "skipped"
    assert res.step("install")["outcome"] == "success"
    assert "already on PATH" in res.step("install")["stdout"]
    assert "### promptinclude audit: passed" in res.summary, res.summary
    assert f"| 2 | {want['tokens_included']} | {want['tokens_counted']} | 0 | 0 |" in res.summary, res.summary
    # The audit's report is in the log.
    report = pi(work, "audit", "--color", "never", "--fail-on", "cropped,skipped", "--max-tokens", "1000", ".").stdout
    assert report.strip() and report in res.step("audit")["stdout"], res.log()


def test_sarif_is_uploaded_to_code_scanning(tmp: Path):
    # A rule file with hidden tag characters: the SARIF log holds it at its
    # file and line, and the upload step gets the log.
    files = dict(GOOD)
    files["hidden.promptinclude.md"] = "be kind\U000E0041\U000E0042\n"
    work = make_repo(tmp, files)
    res = run_action(work, tmp, {"sarif": "audit.sarif"}, path_dirs=[tool_dir(tmp)])
    sarif = Path(res.outputs["sarif"])
    assert sarif == work / "audit.sarif" and sarif.is_file(), res.outputs
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    hidden = [r for r in results if r["ruleId"] == "hidden_text"]
    assert len(hidden) == 1 and hidden[0]["level"] == "error", results
    loc = hidden[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"] == "hidden.promptinclude.md" and loc["region"]["startLine"] == 1, loc
    assert 'spelling "AB"' in hidden[0]["message"]["text"], hidden
    up = res.step("code-scanning")
    assert up["outcome"] == "success" and up["uses"] == "github/codeql-action/upload-sarif@v3", up
    assert up["with_"] == {"sarif_file": str(sarif), "category": "promptinclude"}, up
    # Tag characters fail the job by default (fail-on-hidden: tag,bidi);
    # with the input emptied, they are reported only.
    assert res.outputs["exit-code"] == "1" and res.failed, res.outputs
    assert "hidden_text" in res.step("audit")["stderr"], res.log()
    res = run_action(work, tmp, {"fail-on-hidden": "", "sarif": "audit.sarif"}, path_dirs=[tool_dir(tmp)])
    assert not res.failed and res.outputs["exit-code"] == "0", res.log()
    # Without the input: no log, no upload.
    res = run_action(work, tmp, {"fail-on-hidden": ""}, path_dirs=[tool_dir(tmp)])
    assert res.outputs["sarif"] == "" and res.step("code-scanning")["outcome"] == "skipped", res.steps


def test_no_html_no_upload(tmp: Path):
    work = make_repo(tmp, GOOD)
    res = run_action(work, tmp, {}, path_dirs=[tool_dir(tmp)])
    assert not res.failed, res.log()
    assert res.outputs["html"] == "" and res.step("upload")["outcome"] == "skipped", res.steps
    assert not list(work.glob("*.html"))


def test_two_roots(tmp: Path):
    files = {f"{d}/{k}": v for d in ("svc-a", "svc-b") for k, v in GOOD.items()}
    files["svc-b/big.promptinclude.md"] = BIG
    work = make_repo(tmp, files)
    res = run_action(work, tmp, {"roots": "svc-a\n  svc-b ", "fail-on": "cropped"}, path_dirs=[tool_dir(tmp)])
    assert res.failed and res.outputs["exit-code"] == "1", res.log()
    real = pi(work, "audit", "--json", "svc-a", "svc-b")
    want = json.loads(real.stdout.splitlines()[-1])
    assert want["roots"] == 2 and res.outputs["tokens"] == str(want["tokens_included"]), (res.outputs, want)
    assert res.outputs["rule-files"] == "5" and res.outputs["cropped"] == "1", res.outputs
    assert "svc-b/big.promptinclude.md: cropped" in res.step("audit")["stderr"], res.log()
    assert "Roots: `svc-a svc-b`" in res.summary, res.summary


def gate_failure(tmp: Path, files: dict, inputs: dict, audit_args: list, word: str):
    work = make_repo(tmp, files)
    res = run_action(work, tmp, {**inputs, "html": "audit.html"}, path_dirs=[tool_dir(tmp)])
    audit = res.step("audit")
    assert res.failed and audit["outcome"] == "failure" and audit["rc"] == 1, res.log()
    assert res.outputs["exit-code"] == "1", res.outputs
    real = pi(work, "audit", "--color", "never", *audit_args, ".")
    assert real.returncode == 1, real
    gate_lines = [l for l in real.stderr.splitlines() if l.startswith("promptinclude: gate:")]
    assert gate_lines and all(word in l for l in gate_lines), real.stderr
    for line in gate_lines:
        assert line in audit["stderr"], (line, res.log())
        assert f"::error title=promptinclude audit::{line}" in audit["stderr"], res.log()
        assert line in res.summary, res.summary
    assert "### promptinclude audit: failed" in res.summary, res.summary
    # The HTML report is still uploaded when the gate fails.
    up = res.step("upload")
    assert up["outcome"] == "success" and Path(up["with_"]["path"]).is_file(), res.steps
    return res, work


def test_cropped_fails(tmp: Path):
    res, work = gate_failure(tmp, {**GOOD, "big.promptinclude.md": BIG}, {"fail-on": "cropped,skipped"},
                             ["--fail-on", "cropped,skipped"], "cropped")
    assert res.outputs["cropped"] == "1", res.outputs


def test_skipped_fails_with_config(tmp: Path):
    files = {**GOOD, "ci/promptinclude.yaml": "max_file_count: 1\n"}
    res, work = gate_failure(tmp, files, {"fail-on": "cropped,skipped", "config": "ci/promptinclude.yaml"},
                             ["--fail-on", "cropped,skipped", "--config", "ci/promptinclude.yaml"], "skipped")
    assert res.outputs["skipped"] == "1", res.outputs
    # Without the gate the same repository passes.
    tmp2 = tmp / "nogate"
    tmp2.mkdir()
    shutil.copytree(work, tmp2 / "repo")
    res2 = run_action(tmp2 / "repo", tmp2, {"config": "ci/promptinclude.yaml"}, path_dirs=[tool_dir(tmp2)])
    assert not res2.failed and res2.outputs["exit-code"] == "0", res2.log()


def test_max_tokens_gate(tmp: Path):
    work = make_repo(tmp, GOOD)
    tokens = summary_tokens(work)["tokens_included"]
    ok = run_action(work, tmp, {"max-tokens": str(tokens)}, path_dirs=[tool_dir(tmp)])
    assert not ok.failed and ok.outputs["exit-code"] == "0", ok.log()
    tmp2 = tmp / "over"
    tmp2.mkdir()
    gate_failure(tmp2, GOOD, {"max-tokens": str(tokens - 1)}, ["--max-tokens", str(tokens - 1)], "")


def test_bad_config_fails(tmp: Path):
    work = make_repo(tmp, {**GOOD, "bad.yaml": "max_file_tokens: [1\n"})
    res = run_action(work, tmp, {"config": "bad.yaml"}, path_dirs=[tool_dir(tmp)])
    audit = res.step("audit")
    assert res.failed and audit["rc"] == 2 and res.outputs["exit-code"] == "2", res.log()
    real = pi(work, "audit", "--config", "bad.yaml", ".")
    assert real.returncode == 2 and "invalid configuration" in real.stderr, real
    assert real.stderr.strip() in audit["stderr"], res.log()
    assert "### promptinclude audit: error" in res.summary, res.summary


def test_pr_comment_created_then_updated(tmp: Path):
    work = make_repo(tmp, GOOD)
    base = git(work, "rev-parse", "HEAD")
    write(work, {"project.promptinclude.md": "# Project\nUse tabs.\nAnd spaces never.\n", "new.promptinclude.md": "New.\n"})
    git(work, "add", "-A")
    git(work, "commit", "-qm", "head")
    head = git(work, "rev-parse", "HEAD")
    api = MockGitHub()
    try:
        event = {"pull_request": {"number": 7, "base": {"sha": base}, "head": {"sha": head}}}
        res = run_action(work, tmp, {"diff": "true"}, event_name="pull_request", event=event, api=api,
                         path_dirs=[tool_dir(tmp)])
        assert not res.failed, res.log()
        want = pi(work, "diff", "--format", "markdown", base, head, ".")
        assert want.returncode == 1 and want.stdout.strip(), want
        posts = [r for r in api.requests if r["method"] == "POST"]
        assert len(posts) == 1 and posts[0]["path"] == "/repos/octo/rules/issues/7/comments", api.requests
        assert posts[0]["auth"] == "Bearer ghs_testtoken", posts
        assert posts[0]["body"]["body"] == MARKER + "\n" + want.stdout, (posts[0]["body"]["body"], want.stdout)
        o = res.outputs
        assert o["diff-exit-code"] == "1" and o["comment-url"].endswith("#issuecomment-1000"), o
        assert Path(o["diff-file"]).read_text(encoding="utf-8") == want.stdout
        assert want.stdout in res.summary
        # The next push: the same comment is edited, no second one.
        write(work, {"new.promptinclude.md": "Newer text.\n"})
        git(work, "commit", "-qam", "push 2")
        head2 = git(work, "rev-parse", "HEAD")
        tmp2 = tmp / "push2"
        tmp2.mkdir()
        event["pull_request"]["head"]["sha"] = head2
        before = len(api.requests)
        res2 = run_action(work, tmp2, {"diff": "true"}, event_name="pull_request", event=event, api=api,
                          path_dirs=[tool_dir(tmp2)])
        assert not res2.failed, res2.log()
        want2 = pi(work, "diff", "--format", "markdown", base, head2, ".").stdout
        new = api.requests[before:]
        assert [r["method"] for r in new] == ["GET", "PATCH"], new
        assert new[1]["path"] == "/repos/octo/rules/issues/comments/1000", new
        assert new[1]["body"]["body"] == MARKER + "\n" + want2 and want2 != want.stdout
        assert len(api.comments) == 1 and api.comments[1000]["body"] == MARKER + "\n" + want2
        # diff off: no request at all.
        before = len(api.requests)
        tmp3 = tmp / "off"
        tmp3.mkdir()
        res3 = run_action(work, tmp3, {}, event_name="pull_request", event=event, api=api, path_dirs=[tool_dir(tmp3)])
        assert not res3.failed and res3.step("diff")["outcome"] == "skipped" and len(api.requests) == before
    finally:
        api.close()


def test_pr_unchanged_posts_nothing(tmp: Path):
    work = make_repo(tmp, GOOD)
    base = git(work, "rev-parse", "HEAD")
    write(work, {"README.md": "not a rule file\n"})
    git(work, "add", "-A")
    git(work, "commit", "-qm", "head")
    head = git(work, "rev-parse", "HEAD")
    api = MockGitHub()
    try:
        event = {"pull_request": {"number": 3, "base": {"sha": base}, "head": {"sha": head}}}
        res = run_action(work, tmp, {"diff": "true"}, event_name="pull_request", event=event, api=api,
                         path_dirs=[tool_dir(tmp)])
        assert not res.failed and res.outputs["diff-exit-code"] == "0", res.log()
        assert [r["method"] for r in api.requests] == ["GET"], api.requests
        assert res.outputs["comment-url"] == ""
    finally:
        api.close()


def test_pr_diff_bad_revision_fails(tmp: Path):
    work = make_repo(tmp, GOOD)
    api = MockGitHub()
    try:
        event = {"pull_request": {"number": 3, "base": {"sha": "0" * 40}, "head": {"sha": git(work, "rev-parse", "HEAD")}}}
        res = run_action(work, tmp, {"diff": "true"}, event_name="pull_request", event=event, api=api,
                         path_dirs=[tool_dir(tmp)])
        assert res.failed and res.step("diff")["outcome"] == "failure", res.log()
        assert "could not be fetched" in res.step("diff")["stderr"], res.log()
        assert not api.requests
    finally:
        api.close()


def test_install_when_missing(tmp: Path):
    """Without promptinclude on PATH the step runs `cargo install --locked --path <action path>`
    (a stub cargo records the call and installs the binary under test)."""
    work = make_repo(tmp, GOOD)
    stub = tmp / "stub"
    stub.mkdir()
    log = tmp / "cargo.log"
    cargo_home = tmp / "cargo-home"
    (stub / "cargo").write_text(
        "#!/bin/sh\nset -e\n"
        f"printf '%s\\n' \"$*\" >> '{log}'\n"
        'mkdir -p "$CARGO_HOME/bin"\n'
        f"ln -sf '{BIN}' \"$CARGO_HOME/bin/promptinclude\"\n"
    )
    (stub / "cargo").chmod(0o755)
    res = run_action(work, tmp, {"fail-on": "cropped"}, path_dirs=[stub], extra_env={"CARGO_HOME": str(cargo_home)})
    assert not res.failed, res.log()
    assert log.read_text().splitlines() == [f"install --locked --path {REPO}"], log.read_text()
    assert (tmp / "github_path").read_text().splitlines() == [str(cargo_home / "bin")]
    assert res.outputs["exit-code"] == "0" and res.outputs["tokens"] != "", res.outputs
    # No cargo and no binary: a clear error.
    tmp2 = tmp / "nocargo"
    tmp2.mkdir()
    res2 = run_action(work, tmp2, {}, path_dirs=[])
    if shutil.which("promptinclude", path="/usr/local/bin:/usr/bin:/bin") is None:
        assert res2.failed and "cargo is not installed" in res2.step("install")["stderr"], res2.log()
        assert res2.step("audit")["outcome"] == "skipped"


TESTS = [v for k, v in list(globals().items()) if k.startswith("test_")]


def main() -> int:
    assert BIN.is_file(), f"no promptinclude binary at {BIN}"
    only = sys.argv[1:]
    failures = 0
    for t in TESTS:
        if only and t.__name__ not in only:
            continue
        tmp = Path(tempfile.mkdtemp(prefix=f"pi-action-{t.__name__}-"))
        try:
            if t.__code__.co_argcount:
                t(tmp)
            else:
                t()
        except Exception:
            failures += 1
            print(f"FAIL {t.__name__} (temp dir kept: {tmp})")
            traceback.print_exc()
            continue
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"ok   {t.__name__}")
    print(f"tests/action: {len(TESTS) - failures if not only else '?'} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
