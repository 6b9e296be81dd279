// End-to-end tests of `promptinclude init claude-code` and `promptinclude
// hook claude-code` inside the real Claude Code CLI (the version pinned in
// package.json), run as a user runs it: `claude -p` in a temporary project,
// HOME in a temporary folder, the Messages API at a mock on 127.0.0.1
// (ANTHROPIC_BASE_URL) and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1.
// Every assertion is on what Claude Code sent to the model.
//
// PROMPTINCLUDE_BIN is the binary under test (run.sh sets it).

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { BIN, MODULES, assertNoSecret, leakyRepository, occurrences, promptinclude, requestWith, ruleFiles, run, workspace as newWorkspace, write } from "./helpers.mjs";
import { REPLY, startMock, textsOf } from "./mock-anthropic.mjs";

const CLAUDE = path.join(MODULES, ".bin/claude");
const HEADER = "# Behavioral prompt includes\n";
const NOTICE = "[promptinclude] The project's prompt-include rule files";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-claude-e2e-"));
let mock;

before(async () => {
	assert.ok(BIN && fs.existsSync(BIN), `PROMPTINCLUDE_BIN=${BIN} is not a file`);
	assert.ok(fs.existsSync(CLAUDE), `Claude Code is not installed at ${CLAUDE}; run tests/agents/run.sh`);
	mock = await startMock({ maxRequests: 100 });
});

after(async () => {
	await mock?.close();
	if (!process.env.KEEP_E2E_TMP) fs.rmSync(scratch, { recursive: true, force: true });
});

const workspace = (name) => newWorkspace(scratch, name);

/** The environment Claude Code runs in: nothing from the caller's but PATH. */
function claudeEnv(home, extra = {}) {
	return {
		PATH: process.env.PATH,
		HOME: home,
		ANTHROPIC_BASE_URL: mock.url,
		ANTHROPIC_API_KEY: "sk-ant-mock-key",
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
		...extra,
	};
}

/**
 * Runs Claude Code; resolves to { status, stdout, stderr, requests } where
 * `requests` are the /v1/messages requests it made. `turns` (stream-json
 * input) are sent one at a time, each after the previous turn's result,
 * with `between(i)` run before turn i > 0.
 */
async function claude({ cwd, home, args = [], env = {}, turns, between }) {
	const first = mock.requests.length;
	const multi = Array.isArray(turns);
	const argv = multi
		? ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose", ...args]
		: ["-p", ...args];
	let sent = 0;
	const send = (child) => {
		if (sent > 0 && between) between(sent);
		const text = turns[sent++];
		child.stdin.write(`${JSON.stringify({ type: "user", message: { role: "user", content: text } })}\n`);
	};
	// Each turn goes in once the previous one's result is out.
	const onStdout = (child, stdout) => {
		const results = stdout.split("\n").filter((line) => {
			try {
				return JSON.parse(line).type === "result";
			} catch {
				return false; // an incomplete last line
			}
		}).length;
		if (results === sent && sent < turns.length) send(child);
		else if (results === turns.length) child.stdin.end();
	};
	const result = await run(CLAUDE, argv, {
		cwd,
		env: claudeEnv(home, env),
		...(multi ? { onSpawn: send, onStdout } : {}),
	});
	const requests = mock.requests.slice(first).filter((r) => r.path === "/v1/messages");
	return { ...result, requests };
}

const mainRequest = (requests, prompt) => requestWith(requests, prompt, textsOf);

test("init --project, then a session: the model gets exactly the rendered section, once; ignored files stay out", async () => {
	const { project, home } = workspace("project-init");
	ruleFiles(project);
	const out = promptinclude(["init", "claude-code", "--project"], project, home);
	assert.match(out, /installed .* for SessionStart and UserPromptSubmit/);
	const settings = JSON.parse(fs.readFileSync(path.join(project, ".claude/settings.json"), "utf8"));
	assert.equal(settings.hooks.SessionStart.length, 1);

	const section = promptinclude(["render", project], project, home);
	assert.ok(section.includes("MARKER-ROOT-RULE") && section.includes("MARKER-API-RULE"));
	assert.ok(!section.includes("MARKER-IGNORED-RULE"));

	const run = await claude({ cwd: project, home, args: ["say hello PROMPT-ONE"] });
	assert.equal(run.status, 0, run.stderr);
	assert.equal(run.stdout.trim(), REPLY);
	const texts = textsOf(mainRequest(run.requests, "PROMPT-ONE").body);
	const all = texts.join("\u0000");
	assert.equal(occurrences(all, section), 1, "the whole section, byte for byte, exactly once");
	assert.equal(occurrences(all, HEADER), 1, "no second or partial copy");
	assert.ok(texts.some((t) => t.includes(`SessionStart hook additional context: ${section}`)));
	assert.equal(occurrences(all, "MARKER-IGNORED-RULE"), 0, "a file under node_modules/ never reaches the model");
	assert.equal(occurrences(all, NOTICE), 0, "no change notice on the first turn");
});

test("init twice changes nothing; --dry-run writes nothing", async () => {
	const { project, home } = workspace("idempotent");
	const file = path.join(home, ".claude/settings.json");
	write(file, '{\n  "model": "keep-me",\n  "hooks": {}\n}\n');
	const dry = promptinclude(["init", "claude-code", "--user", "--dry-run"], project, home);
	assert.match(dry, /^\+.*"SessionStart"/m);
	assert.equal(fs.readFileSync(file, "utf8"), '{\n  "model": "keep-me",\n  "hooks": {}\n}\n');
	promptinclude(["init", "claude-code", "--user"], project, home);
	const once = fs.readFileSync(file, "utf8");
	assert.match(promptinclude(["init", "claude-code", "--user"], project, home), /already installed/);
	assert.equal(fs.readFileSync(file, "utf8"), once);
	const parsed = JSON.parse(once);
	assert.equal(parsed.model, "keep-me");
	assert.deepEqual(Object.keys(parsed), ["model", "hooks"]);
	assert.equal(parsed.hooks.UserPromptSubmit[0].hooks.length, 1);
});

test("init --user: the hook applies to a project with no settings of its own", async () => {
	const { project, home } = workspace("user-init");
	ruleFiles(project);
	promptinclude(["init", "claude-code", "--user"], project, home);
	assert.ok(!fs.existsSync(path.join(project, ".claude")));
	const section = promptinclude(["render", project], project, home);
	const run = await claude({ cwd: project, home, args: ["PROMPT-USER"] });
	assert.equal(run.status, 0, run.stderr);
	const all = textsOf(mainRequest(run.requests, "PROMPT-USER").body).join("\u0000");
	assert.equal(occurrences(all, section), 1);
});

test("a failing hook (broken project configuration) lets the session run, adds nothing, and logs why", async () => {
	const { project, home } = workspace("failing");
	ruleFiles(project);
	write(path.join(project, ".a0proj/plugins/_promptinclude/config.json"), '{\n  "max_depth": "deep"\n}\n');
	promptinclude(["init", "claude-code", "--user"], project, home);
	const run = await claude({ cwd: project, home, args: ["PROMPT-FAIL"] });
	assert.equal(run.status, 0, run.stderr);
	assert.equal(run.stdout.trim(), REPLY);
	const all = textsOf(mainRequest(run.requests, "PROMPT-FAIL").body).join("\u0000");
	assert.equal(occurrences(all, HEADER), 0);
	assert.equal(occurrences(all, "MARKER-ROOT-RULE"), 0);
	const log = fs.readFileSync(path.join(home, ".claude/promptinclude/hook.log"), "utf8");
	assert.match(log, /config\.json:2: key `max_depth`/);
});

test("project configuration and A0_SET_ apply: a smaller budget crops the section the model gets", async () => {
	const { project, home } = workspace("budget");
	write(path.join(project, "a.promptinclude.md"), `${"word ".repeat(400)}MARKER-TAIL\n`);
	promptinclude(["init", "claude-code", "--user"], project, home);
	const env = { A0_SET__promptinclude__max_file_tokens: "100" };
	const section = promptinclude(["render", project], project, home, env);
	assert.ok(section.includes("!!! cropped to fit") && !section.includes("MARKER-TAIL"));
	const run = await claude({ cwd: project, home, env, args: ["PROMPT-BUDGET"] });
	assert.equal(run.status, 0, run.stderr);
	const all = textsOf(mainRequest(run.requests, "PROMPT-BUDGET").body).join("\u0000");
	assert.equal(occurrences(all, section), 1);
	assert.equal(occurrences(all, "MARKER-TAIL"), 0);
});

test("a rule file changed between turns: the next turn carries one change notice with the new section", async () => {
	const { project, home } = workspace("change");
	ruleFiles(project);
	promptinclude(["init", "claude-code", "--user"], project, home);
	const rule = path.join(project, "AGENTS.promptinclude.md");
	const run = await claude({
		cwd: project,
		home,
		turns: ["TURN-ONE", "TURN-TWO", "TURN-THREE"],
		between: (i) => {
			if (i === 1) write(rule, "Always answer in German. MARKER-NEW-RULE\n");
		},
	});
	assert.equal(run.status, 0, run.stderr);
	const section = promptinclude(["render", project], project, home);
	const noticeBlocks = (prompt) =>
		textsOf(mainRequest(run.requests, prompt).body).filter((t) => t.includes(NOTICE));
	assert.equal(noticeBlocks("TURN-ONE").length, 0);
	const second = noticeBlocks("TURN-TWO");
	assert.equal(second.length, 1, "one notice on the turn after the change");
	assert.ok(second[0].includes(`- changed ${rule}\n`), second[0]);
	assert.ok(second[0].includes(section), "the notice carries the whole new section");
	// The third turn's request repeats the conversation (so the notice once), but adds none.
	assert.equal(noticeBlocks("TURN-THREE").length, 1, "no second notice without a second change");
});

test("after /compact the rules come back: SessionStart (source compact) gives the section again", async () => {
	const { project, home } = workspace("compact");
	ruleFiles(project);
	promptinclude(["init", "claude-code", "--user"], project, home);
	const section = promptinclude(["render", project], project, home);
	const run = await claude({ cwd: project, home, turns: ["BEFORE-COMPACT", "/compact", "AFTER-COMPACT"] });
	assert.equal(run.status, 0, run.stderr);
	const after = textsOf(mainRequest(run.requests, "AFTER-COMPACT").body);
	assert.ok(!after.some((t) => t.includes("BEFORE-COMPACT")), "the conversation before /compact was summarised away");
	assert.equal(occurrences(after.join("\u0000"), section), 1, "the section is back, once");
	assert.ok(after.some((t) => t.includes(`SessionStart hook additional context: ${section}`)));
});

test("a section over Claude Code's 10,000-character inline limit: logged, and the documented remedy (a smaller budget on the hook command) gets it in whole", async () => {
	const { project, home } = workspace("over-limit");
	for (let i = 0; i < 6; i++) {
		write(path.join(project, `r${i}.promptinclude.md`), `Rule ${i}: ${"lorem ipsum dolor sit amet ".repeat(120)}MARKER-END-${i}\n`);
	}
	promptinclude(["init", "claude-code", "--user"], project, home);
	const big = promptinclude(["render", project], project, home);
	assert.ok(big.length > 10_000, `${big.length} characters`);
	const over = await claude({ cwd: project, home, args: ["PROMPT-BIG"] });
	assert.equal(over.status, 0, over.stderr);
	const overTexts = textsOf(mainRequest(over.requests, "PROMPT-BIG").body).join("\u0000");
	assert.equal(occurrences(overTexts, big), 0, "Claude Code does not inline it");
	assert.match(overTexts, /Output too large/, "Claude Code's preview and file path stand in");
	const log = fs.readFileSync(path.join(home, ".claude/promptinclude/hook.log"), "utf8");
	assert.match(log, /the section is \d+ characters; the agent adds hook output over 10000 characters only in part/);

	// The remedy the log names: a budget on the hook command (init keeps it on re-runs).
	const settings = path.join(home, ".claude/settings.json");
	fs.writeFileSync(settings, fs.readFileSync(settings, "utf8").replaceAll("hook claude-code", "hook claude-code --max-total-tokens 1500"));
	promptinclude(["init", "claude-code", "--user"], project, home);
	assert.equal(occurrences(fs.readFileSync(settings, "utf8"), "hook claude-code --max-total-tokens 1500"), 2);
	const small = promptinclude(["render", "--max-total-tokens", "1500", project], project, home);
	assert.ok(small.length <= 10_000 && small.includes("skipped to fit"), `${small.length} characters`);
	const within = await claude({ cwd: project, home, args: ["PROMPT-SMALL"] });
	assert.equal(within.status, 0, within.stderr);
	const withinTexts = textsOf(mainRequest(within.requests, "PROMPT-SMALL").body).join("\u0000");
	assert.equal(occurrences(withinTexts, small), 1);
});

test("a repository built to leak: no secret reaches the model, the rule does, and the log says what was withheld", async () => {
	const { project, home } = workspace("leaky");
	const env = leakyRepository(project, home);
	promptinclude(["init", "claude-code", "--user"], project, home);
	const run = await claude({ cwd: project, home, args: ["PROMPT-LEAKY"], env });
	assert.equal(run.status, 0, run.stderr);
	const all = textsOf(mainRequest(run.requests, "PROMPT-LEAKY").body).join("\u0000");
	assert.equal(occurrences(all, "MARKER-LEAKY-RULE"), 1);
	assertNoSecret(all);
	const log = fs.readFileSync(path.join(home, ".claude/promptinclude/hook.log"), "utf8");
	for (const kind of ["outside_root", "not_committed", "inside_git_dir", "target_not_committed", "changed_since_commit"]) assert.match(log, new RegExp(`\\(${kind};`));
});
