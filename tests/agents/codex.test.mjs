// End-to-end tests of `promptinclude init codex` and `promptinclude hook
// codex` inside the real Codex CLI (the version pinned in package.json):
// `codex exec` in a temporary project, HOME (so ~/.codex) in a temporary
// folder, and a custom model provider in ~/.codex/config.toml pointing at a
// mock Responses API on 127.0.0.1. Every assertion is on what Codex sent to
// the model.
//
// Codex runs a hook only once the user has trusted it (`/hooks` in the
// interactive CLI; https://developers.openai.com/codex/hooks). `codex exec`
// has no review step, so the sessions here pass
// --dangerously-bypass-hook-trust, and one test shows that without it (or
// trust) the hook does not run.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { BIN, MODULES, assertNoSecret, leakyRepository, occurrences, promptinclude, requestWith, ruleFiles, run, workspace as newWorkspace, write } from "./helpers.mjs";
import { REPLY, startMock, textsOf } from "./mock-responses.mjs";

const CODEX = path.join(MODULES, ".bin/codex");
const HEADER = "# Behavioral prompt includes\n";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-codex-e2e-"));
let mock;

before(async () => {
	assert.ok(BIN && fs.existsSync(BIN), `PROMPTINCLUDE_BIN=${BIN} is not a file`);
	assert.ok(fs.existsSync(CODEX), `Codex is not installed at ${CODEX}; run tests/agents/run.sh`);
	mock = await startMock({ maxRequests: 100 });
});

after(async () => {
	await mock?.close();
	if (!process.env.KEEP_E2E_TMP) fs.rmSync(scratch, { recursive: true, force: true });
});

/** A project and a HOME whose Codex talks to the mock. */
function workspace(name) {
	const ws = newWorkspace(scratch, name);
	write(
		path.join(ws.home, ".codex/config.toml"),
		[
			'model = "mock-model"',
			'model_provider = "mock"',
			"[model_providers.mock]",
			'name = "mock"',
			`base_url = "${mock.url}/v1"`,
			'wire_api = "responses"',
			'env_key = "MOCK_API_KEY"',
			"",
		].join("\n"),
	);
	return ws;
}

/** `codex exec PROMPT`; resolves to { status, stdout, stderr, requests }. */
async function codex({ cwd, home, prompt, trust = true, env = {} }) {
	const first = mock.requests.length;
	const args = ["exec", "--skip-git-repo-check", ...(trust ? ["--dangerously-bypass-hook-trust"] : []), prompt];
	const result = await run(CODEX, args, {
		cwd,
		env: { PATH: process.env.PATH, HOME: home, MOCK_API_KEY: "mock-key", ...env },
	});
	const requests = mock.requests.slice(first).filter((r) => r.path.endsWith("/responses"));
	return { ...result, requests };
}

const request = (requests, prompt) => requestWith(requests, prompt, textsOf);

test("init --user, then codex exec: the section is one developer message, byte for byte; ignored files stay out", async () => {
	const { project, home } = workspace("user-init");
	ruleFiles(project);
	const out = promptinclude(["init", "codex", "--user"], project, home);
	assert.match(out, /hooks\.json: installed .* for SessionStart and UserPromptSubmit/);
	assert.match(out, /\/hooks/, "init says the hook must be trusted in Codex");
	const section = promptinclude(["render", project], project, home);
	const session = await codex({ cwd: project, home, prompt: "PROMPT-CODEX" });
	assert.equal(session.status, 0, session.stderr);
	assert.match(session.stdout, new RegExp(REPLY));
	const body = request(session.requests, "PROMPT-CODEX").body;
	const carriers = body.input.filter((item) =>
		(item.content ?? []).some((c) => c.text === section),
	);
	assert.equal(carriers.length, 1, "one message whose text is exactly the section");
	assert.equal(carriers[0].role, "developer");
	const all = textsOf(body).join("\u0000");
	assert.equal(occurrences(all, HEADER), 1);
	assert.equal(occurrences(all, "MARKER-IGNORED-RULE"), 0);
});

test("an untrusted hook does not run in codex exec (Codex's trust review), and the session still works", async () => {
	const { project, home } = workspace("untrusted");
	ruleFiles(project);
	promptinclude(["init", "codex", "--user"], project, home);
	const session = await codex({ cwd: project, home, prompt: "PROMPT-UNTRUSTED", trust: false });
	assert.equal(session.status, 0, session.stderr);
	const all = textsOf(request(session.requests, "PROMPT-UNTRUSTED").body).join("\u0000");
	assert.equal(occurrences(all, HEADER), 0);
});

test("a failing hook (broken project configuration) lets the session run, adds nothing, and logs why", async () => {
	const { project, home } = workspace("failing");
	ruleFiles(project);
	write(path.join(project, ".a0proj/plugins/_promptinclude/config.json"), '{\n  "max_depth": "deep"\n}\n');
	promptinclude(["init", "codex", "--user"], project, home);
	const session = await codex({ cwd: project, home, prompt: "PROMPT-FAIL" });
	assert.equal(session.status, 0, session.stderr);
	assert.match(session.stdout, new RegExp(REPLY));
	const all = textsOf(request(session.requests, "PROMPT-FAIL").body).join("\u0000");
	assert.equal(occurrences(all, HEADER), 0);
	const log = fs.readFileSync(path.join(home, ".codex/promptinclude/hook.log"), "utf8");
	assert.match(log, /config\.json:2: key `max_depth`/);
});

test("A0_SET_ budgets apply in the hook Codex runs", async () => {
	const { project, home } = workspace("budget");
	write(path.join(project, "a.promptinclude.md"), `${"word ".repeat(400)}MARKER-TAIL\n`);
	promptinclude(["init", "codex", "--user"], project, home);
	const env = { A0_SET__promptinclude__max_file_tokens: "100" };
	const section = promptinclude(["render", project], project, home, env);
	assert.ok(section.includes("!!! cropped to fit"));
	const session = await codex({ cwd: project, home, prompt: "PROMPT-BUDGET", env });
	assert.equal(session.status, 0, session.stderr);
	const all = textsOf(request(session.requests, "PROMPT-BUDGET").body).join("\u0000");
	assert.equal(occurrences(all, section), 1);
	assert.equal(occurrences(all, "MARKER-TAIL"), 0);
});

test("init --project: .codex/hooks.json runs once the project is trusted, not before", async () => {
	const { project, home } = workspace("project-init");
	ruleFiles(project);
	promptinclude(["init", "codex", "--project"], project, home);
	assert.ok(fs.existsSync(path.join(project, ".codex/hooks.json")));
	const section = promptinclude(["render", project], project, home);
	const untrusted = await codex({ cwd: project, home, prompt: "PROMPT-UNTRUSTED-PROJECT" });
	assert.equal(untrusted.status, 0, untrusted.stderr);
	const before = textsOf(request(untrusted.requests, "PROMPT-UNTRUSTED-PROJECT").body).join("\u0000");
	assert.equal(occurrences(before, HEADER), 0, "Codex ignores .codex/ of a project it does not trust");
	fs.appendFileSync(path.join(home, ".codex/config.toml"), `\n[projects."${project}"]\ntrust_level = "trusted"\n`);
	const session = await codex({ cwd: project, home, prompt: "PROMPT-PROJECT" });
	assert.equal(session.status, 0, session.stderr);
	const all = textsOf(request(session.requests, "PROMPT-PROJECT").body).join("\u0000");
	assert.equal(occurrences(all, section), 1);
});

test("a section over Codex's 10,000-byte inline limit: cut and logged; a budget on the hook command gets it in whole", async () => {
	const { project, home } = workspace("big");
	for (let i = 0; i < 6; i++) {
		write(path.join(project, `r${i}.promptinclude.md`), `Rule ${i}: ${"lorem ipsum dolor sit amet ".repeat(120)}MARKER-END-${i}\n`);
	}
	promptinclude(["init", "codex", "--user"], project, home);
	const big = promptinclude(["render", project], project, home);
	assert.ok(big.length > 20_000, `${big.length} characters`);
	const over = await codex({ cwd: project, home, prompt: "PROMPT-BIG" });
	assert.equal(over.status, 0, over.stderr);
	const overTexts = textsOf(request(over.requests, "PROMPT-BIG").body).join("\u0000");
	assert.equal(occurrences(overTexts, big), 0, "Codex does not add it whole");
	assert.match(overTexts, /truncated output/);
	const log = fs.readFileSync(path.join(home, ".codex/promptinclude/hook.log"), "utf8");
	assert.match(log, /the section is \d+ bytes; the agent adds hook output over 10000 bytes only in part/);

	const hooks = path.join(home, ".codex/hooks.json");
	fs.writeFileSync(hooks, fs.readFileSync(hooks, "utf8").replaceAll("hook codex", "hook codex --max-total-tokens 1500"));
	const small = promptinclude(["render", "--max-total-tokens", "1500", project], project, home);
	assert.ok(Buffer.byteLength(small) <= 10_000, `${small.length} characters`);
	const within = await codex({ cwd: project, home, prompt: "PROMPT-SMALL" });
	assert.equal(within.status, 0, within.stderr);
	const withinTexts = textsOf(request(within.requests, "PROMPT-SMALL").body).join("\u0000");
	assert.equal(occurrences(withinTexts, small), 1);
});

test("a repository built to leak: no secret reaches the model, the rule does, and the log says what was withheld", async () => {
	const { project, home } = workspace("leaky");
	const env = leakyRepository(project, home);
	promptinclude(["init", "codex", "--user"], project, home);
	const session = await codex({ cwd: project, home, prompt: "PROMPT-LEAKY", env });
	assert.equal(session.status, 0, session.stderr);
	const all = textsOf(request(session.requests, "PROMPT-LEAKY").body).join("\u0000");
	assert.equal(occurrences(all, "MARKER-LEAKY-RULE"), 1);
	assertNoSecret(all);
	const log = fs.readFileSync(path.join(home, ".codex/promptinclude/hook.log"), "utf8");
	for (const kind of ["outside_root", "not_committed", "inside_git_dir", "target_not_committed", "changed_since_commit"]) assert.match(log, new RegExp(`\\(${kind};`));
});
