// End-to-end tests of integrations/pi/promptinclude.ts inside the real pi
// coding agent (the version pinned in package.json), run the way a user runs
// it: `pi -p` / `pi -c -p` with `-e <extension>`, talking to a mock
// OpenAI-compatible server on 127.0.0.1 configured through models.json in a
// temporary PI_CODING_AGENT_DIR. Every assertion is made on what pi actually
// sent to the model.
//
// The promptinclude binary comes from PROMPTINCLUDE_BIN, else
// target/release/promptinclude, else target/debug/promptinclude. Tests that
// need it are skipped when none exists (tests/pi/run.sh refuses to run
// without one, so CI cannot skip them silently).

import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { contentText, MOCK_MODEL, startMockServer, systemPromptOf } from "./mock-openai.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../..");
const EXTENSION = path.join(REPO, "integrations/pi/promptinclude.ts");
const PI = path.join(HERE, "node_modules/.bin/pi");
const NODE_DIR = path.dirname(process.execPath);

// The tool's prompt text, as the issue asks the model to see it.
const SNIPPET =
	"Show the project's prompt-include rule files (*.promptinclude.md): which apply, their status, token counts and warnings";
const GUIDELINES = [
	"Call prompt_includes when the user asks which project rules or prompt-include files apply, or why a rule seems missing, cropped or skipped.",
	"Call prompt_includes before creating, editing, renaming or deleting a *.promptinclude.md rule file, to see the current files, statuses and token budget.",
];
const NOTICE_PREFIX = "[promptinclude] ";

function findBinary() {
	const candidates = [
		process.env.PROMPTINCLUDE_BIN,
		path.join(REPO, "target/release/promptinclude"),
		path.join(REPO, "target/debug/promptinclude"),
	].filter(Boolean);
	for (const c of candidates) {
		try {
			fs.accessSync(c, fs.constants.X_OK);
			if (fs.statSync(c).isFile()) return path.resolve(c);
		} catch {}
	}
	return undefined;
}
const BIN = findBinary();
const needsBin = BIN ? {} : { skip: "no promptinclude binary (set PROMPTINCLUDE_BIN or build target/release)" };

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pi-promptinclude-e2e-"));
let mock;

before(async () => {
	assert.ok(fs.existsSync(PI), `pi is not installed at ${PI}; run npm ci in tests/pi`);
	mock = await startMockServer({ maxRequests: 200 });
});

after(async () => {
	await mock?.close();
	if (!process.env.KEEP_E2E_TMP) fs.rmSync(scratch, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------
// Helpers.

let counter = 0;
function tempDir(name) {
	const dir = path.join(scratch, `${++counter}-${name}`);
	fs.mkdirSync(dir, { recursive: true });
	return dir;
}

function write(file, text) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, text);
}

/** A fresh pi config dir whose only provider is the mock server. */
function agentDir() {
	const dir = tempDir("agent");
	write(
		path.join(dir, "models.json"),
		JSON.stringify(
			{
				providers: {
					mock: {
						baseUrl: mock.baseUrl,
						api: "openai-completions",
						apiKey: "mock-key",
						compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
						models: [{ id: MOCK_MODEL, name: "Mock", reasoning: false, contextWindow: 128000, maxTokens: 4096 }],
					},
				},
			},
			null,
			2,
		),
	);
	return dir;
}

/** A project with two rule files. */
function project(name) {
	const dir = tempDir(name);
	write(path.join(dir, "alpha.promptinclude.md"), "# Alpha\n\nAlways indent with tabs in this project.\n");
	write(path.join(dir, "sub/beta.promptinclude.md"), "# Beta\n\nWrite the test before the fix.\n");
	write(path.join(dir, "README.md"), "not a rule file\n");
	return dir;
}

/**
 * Run pi like a user would, stdin closed. `env` entries set to undefined are removed.
 * Resolves with { code, stdout, stderr, requests } where requests are the
 * bodies the mock received during this run.
 */
function runPi({ cwd, agent, args, env = {}, extensionsBefore = [], timeoutMs = 60_000 }) {
	const home = path.join(agent, "home");
	fs.mkdirSync(home, { recursive: true });
	const fullEnv = {
		...process.env,
		HOME: home,
		PI_CODING_AGENT_DIR: agent,
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		PROMPTINCLUDE_BUNDLE: undefined,
		PROMPTINCLUDE_BIN: BIN,
		...env,
	};
	for (const k of Object.keys(fullEnv)) if (fullEnv[k] === undefined) delete fullEnv[k];
	const start = mock.requests.length;
	return new Promise((resolve, reject) => {
		const extensions = [...extensionsBefore, EXTENSION].flatMap((e) => ["-e", e]);
		const child = spawn(PI, ["--provider", "mock", "--model", MOCK_MODEL, ...extensions, ...args], {
			cwd,
			env: fullEnv,
			stdio: ["ignore", "pipe", "pipe"],
		});
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (d) => (stdout += d));
		child.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			reject(new Error(`pi timed out after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
		}, timeoutMs);
		child.on("error", (err) => {
			clearTimeout(timer);
			reject(err);
		});
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, stdout, stderr, requests: mock.requests.slice(start) });
		});
	});
}

/**
 * Drive one long-lived pi process in RPC mode (as an editor integration or
 * the interactive UI would: one session, several prompts). `between[i]` runs
 * after prompt i's agent_end. Resolves with all JSON lines pi printed and the
 * requests the mock received.
 */
function runPiRpc({ cwd, agent, prompts, between = [], env = {}, timeoutMs = 90_000 }) {
	const home = path.join(agent, "home");
	fs.mkdirSync(home, { recursive: true });
	const fullEnv = { ...process.env, HOME: home, PI_CODING_AGENT_DIR: agent, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", PROMPTINCLUDE_BUNDLE: undefined, PROMPTINCLUDE_BIN: BIN, ...env };
	for (const k of Object.keys(fullEnv)) if (fullEnv[k] === undefined) delete fullEnv[k];
	const start = mock.requests.length;
	return new Promise((resolve, reject) => {
		const child = spawn(PI, ["--mode", "rpc", "--provider", "mock", "--model", MOCK_MODEL, "-e", EXTENSION], {
			cwd,
			env: fullEnv,
			stdio: ["pipe", "pipe", "pipe"],
		});
		const events = [];
		let buffered = "";
		let stderr = "";
		let next = 0;
		const send = () => child.stdin.write(`${JSON.stringify({ type: "prompt", message: prompts[next++] })}\n`);
		const timer = setTimeout(() => {
			child.kill("SIGKILL");
			reject(new Error(`pi --mode rpc timed out\nstderr: ${stderr}`));
		}, timeoutMs);
		child.stderr.on("data", (d) => (stderr += d));
		child.stdout.on("data", async (d) => {
			buffered += d;
			let nl;
			while ((nl = buffered.indexOf("\n")) >= 0) {
				const line = buffered.slice(0, nl);
				buffered = buffered.slice(nl + 1);
				if (!line.trim()) continue;
				const event = JSON.parse(line);
				events.push(event);
				if (event.type === "agent_end") {
					try {
						await between[next - 1]?.();
					} catch (err) {
						child.kill("SIGKILL");
						reject(err);
						return;
					}
					if (next < prompts.length) send();
					else child.stdin.end();
				}
			}
		});
		child.on("error", reject);
		child.on("close", (code) => {
			clearTimeout(timer);
			resolve({ code, events, stderr, requests: mock.requests.slice(start) });
		});
		send();
	});
}

/** Run pi and insist it succeeded and produced `nRequests` model calls. */
async function pi(opts, nRequests = 1) {
	const r = await runPi(opts);
	assert.equal(r.code, 0, `pi exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
	assert.equal(r.requests.length, nRequests, `expected ${nRequests} model request(s), got ${r.requests.length}`);
	return r;
}

/** Run the promptinclude binary; stdout verbatim. */
function promptinclude(args, env = {}) {
	return new Promise((resolve, reject) => {
		execFile(BIN, args, { encoding: "utf8", maxBuffer: 64 << 20, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
			if (err) reject(Object.assign(err, { stdout, stderr }));
			else resolve(stdout);
		});
	});
}

/** Text of the model-visible messages that are promptinclude change notices. */
function notices(body) {
	return body.messages
		.filter((m) => m.role === "user" && contentText(m.content).startsWith(NOTICE_PREFIX))
		.map((m) => contentText(m.content));
}

function userTexts(body) {
	return body.messages.filter((m) => m.role === "user").map((m) => contentText(m.content));
}

/** The lines of a "Heading:\n...\n\n" block of pi's default system prompt. */
function block(systemPrompt, heading) {
	const start = systemPrompt.indexOf(`\n${heading}\n`);
	assert.notEqual(start, -1, `no "${heading}" in the system prompt`);
	const body = systemPrompt.slice(start + heading.length + 2);
	return body.slice(0, body.indexOf("\n\n")).split("\n");
}

/** pi's own prompt ends with this line; the extension appends after it. */
function baseEnding(cwd) {
	return `\nCurrent working directory: ${cwd}`;
}

/** Entries of the (only) session file pi wrote under `agent`. */
function sessionEntries(agent) {
	const files = [];
	const walk = (d) => {
		for (const e of fs.readdirSync(d, { withFileTypes: true })) {
			const p = path.join(d, e.name);
			if (e.isDirectory()) walk(p);
			else if (p.endsWith(".jsonl")) files.push(p);
		}
	};
	walk(path.join(agent, "sessions"));
	assert.equal(files.length, 1, `expected one session file, found ${files.join(", ")}`);
	return fs
		.readFileSync(files[0], "utf8")
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l));
}

/** A stand-in for promptinclude that always fails. */
function failingBinary() {
	const file = path.join(tempDir("failing-bin"), "promptinclude");
	write(file, "#!/bin/sh\necho 'promptinclude: simulated failure' >&2\nexit 3\n");
	fs.chmodSync(file, 0o755);
	return file;
}

const tokenHeavy = (words) => `# Gamma\n\n${Array.from({ length: words }, (_, i) => `rule${i}`).join(" ")}\n`;

// ---------------------------------------------------------------------------

describe("promptinclude pi extension", () => {
	test("the system prompt is pi's own prompt + \\n\\n + `promptinclude render` output; tool is listed", needsBin, async () => {
		const cwd = project("render");
		const agent = agentDir();
		const rendered = await promptinclude(["render", cwd]);
		assert.match(rendered, /Always indent with tabs in this project\./, "render output lacks the rule text");
		assert.match(rendered, /Write the test before the fix\./, "render output lacks the nested rule text");

		const r = await pi({ cwd, agent, args: ["-p", "Hello"] });
		assert.equal(r.stdout, "OK.\n");
		assert.equal(r.stderr, "", "no warning expected");
		const body = r.requests[0];
		const sp = systemPromptOf(body);

		// Exact tail, appended exactly once, right after pi's own prompt.
		assert.ok(sp.endsWith(`\n\n${rendered}`), "system prompt does not end with \\n\\n + render output");
		const base = sp.slice(0, sp.length - rendered.length - 2);
		assert.ok(base.endsWith(baseEnding(cwd)), "the section is not appended directly after pi's own prompt");
		assert.equal(sp.split(rendered).length - 1, 1, "section appears more than once");

		// The tool's one-liner and guidelines.
		assert.ok(block(sp, "Available tools:").includes(`- prompt_includes: ${SNIPPET}`), "prompt_includes missing under Available tools:");
		const guidelines = block(sp, "Guidelines:");
		for (const g of GUIDELINES) assert.ok(guidelines.includes(`- ${g}`), `guideline missing: ${g}`);
		assert.ok(body.tools.some((t) => t.function?.name === "prompt_includes"), "prompt_includes not offered as a tool");

		// No notice on the first turn of a session; the user's prompt is untouched.
		assert.deepEqual(userTexts(body), ["Hello"]);
	});

	test("appends after what earlier extensions added (handlers chain)", needsBin, async () => {
		const cwd = project("chain");
		const other = path.join(tempDir("other-ext"), "other.ts");
		write(
			other,
			`export default function (pi: any) {\n` +
				`\tpi.on("before_agent_start", (event: any) => ({ systemPrompt: event.systemPrompt + "\\n\\nOTHER EXTENSION WAS HERE" }));\n` +
				`}\n`,
		);
		const rendered = await promptinclude(["render", cwd]);
		const r = await pi({ cwd, agent: agentDir(), args: ["-p", "Hello"], extensionsBefore: [other] });
		const sp = systemPromptOf(r.requests[0]);
		assert.ok(
			sp.endsWith(`${baseEnding(cwd)}\n\nOTHER EXTENSION WAS HERE\n\n${rendered}`),
			"the earlier extension's addition was lost or the section is not appended after it",
		);
	});

	test("changes to rule files produce one notice; earlier notices never reach the model again", needsBin, async () => {
		const cwd = project("changes");
		const agent = agentDir();

		// Turn 1: baseline, no notice.
		const t1 = await pi({ cwd, agent, args: ["-p", "turn one"] });
		assert.deepEqual(notices(t1.requests[0]), []);

		// Turn 2: modify alpha, add gamma, remove beta.
		write(path.join(cwd, "alpha.promptinclude.md"), "# Alpha\n\nAlways indent with four spaces now.\n");
		write(path.join(cwd, "gamma.promptinclude.md"), "# Gamma\n\nPrefer small commits.\n");
		fs.rmSync(path.join(cwd, "sub/beta.promptinclude.md"));
		const render2 = await promptinclude(["render", cwd]);
		const t2 = await pi({ cwd, agent, args: ["-c", "-p", "turn two"] });
		const body2 = t2.requests[0];
		assert.ok(systemPromptOf(body2).endsWith(`\n\n${render2}`), "turn 2 system prompt does not end with the new render output");
		const n2 = notices(body2);
		assert.equal(n2.length, 1, `turn 2: expected exactly one notice, got ${n2.length}`);
		assert.match(n2[0], /^- added: gamma\.promptinclude\.md$/m);
		assert.match(n2[0], /^- removed: sub\/beta\.promptinclude\.md$/m);
		assert.match(n2[0], /^- modified: alpha\.promptinclude\.md$/m);
		// The notice follows the user's prompt of the turn it belongs to.
		assert.deepEqual(userTexts(body2).slice(-2), ["turn two", n2[0]]);
		assert.deepEqual(userTexts(body2).slice(0, 1), ["turn one"]);

		// Turn 3: gamma grows past the per-file token limit, so it becomes cropped.
		write(path.join(cwd, "gamma.promptinclude.md"), tokenHeavy(6000));
		const scan3 = JSON.parse(await promptinclude(["scan", cwd]));
		const gamma = scan3.files.find((f) => f.path === path.join(cwd, "gamma.promptinclude.md"));
		assert.equal(gamma?.status, "cropped", "precondition: promptinclude scan should report gamma as cropped");
		const render3 = await promptinclude(["render", cwd]);
		const t3 = await pi({ cwd, agent, args: ["-c", "-p", "turn three"] });
		const body3 = t3.requests[0];
		const sp3 = systemPromptOf(body3);
		assert.ok(sp3.endsWith(`\n\n${render3}`), "turn 3 system prompt does not end with the new render output");
		const n3 = notices(body3);
		assert.equal(n3.length, 1, `turn 3: expected exactly one notice, got ${n3.length}`);
		assert.match(n3[0], /^- newly cropped .*: gamma\.promptinclude\.md$/m);
		assert.doesNotMatch(n3[0], /removed: sub\/beta/, "turn 3 notice repeats turn 2's changes");
		assert.ok(!body3.messages.some((m) => contentText(m.content) === n2[0]), "the turn-2 notice still reaches the model");
		assert.deepEqual(userTexts(body3).filter((t) => !t.startsWith(NOTICE_PREFIX)), ["turn one", "turn two", "turn three"]);

		// The session itself still holds both notices: the context hook filtered them.
		const stored = sessionEntries(agent).filter((e) => e.type === "custom_message" && e.customType === "promptinclude");
		assert.deepEqual(
			stored.map((e) => e.content),
			[n2[0], n3[0]],
		);
		assert.ok(stored.every((e) => e.display === true));

		// Turn 4: nothing changed: no new notice, byte-identical system prompt (warm caches).
		const t4 = await pi({ cwd, agent, args: ["-c", "-p", "turn four"] });
		const body4 = t4.requests[0];
		assert.equal(systemPromptOf(body4), sp3, "system prompt changed although no rule file did");
		assert.deepEqual(notices(body4), [n3[0]], "turn 4 should see only the latest notice, once");
		assert.equal(
			sessionEntries(agent).filter((e) => e.type === "custom_message" && e.customType === "promptinclude").length,
			2,
			"a notice was stored although nothing changed",
		);
	});

	test("one long-lived session (rpc mode): a mid-session edit gives one notice, then only the newest", needsBin, async () => {
		const cwd = project("rpc");
		const renders = [];
		const r = await runPiRpc({
			cwd,
			agent: agentDir(),
			prompts: ["one", "two", "three"],
			between: [
				async () => {
					write(path.join(cwd, "delta.promptinclude.md"), "# Delta\n\nName branches after issues.\n");
					renders[1] = await promptinclude(["render", cwd]);
				},
				async () => {
					fs.rmSync(path.join(cwd, "delta.promptinclude.md"));
					renders[2] = await promptinclude(["render", cwd]);
				},
			],
		});
		assert.equal(r.code, 0, r.stderr);
		assert.equal(r.requests.length, 3);
		assert.deepEqual(notices(r.requests[0]), []);
		const [n1] = notices(r.requests[1]);
		assert.equal(notices(r.requests[1]).length, 1);
		assert.match(n1, /^- added: delta\.promptinclude\.md$/m);
		assert.ok(systemPromptOf(r.requests[1]).endsWith(`\n\n${renders[1]}`));
		const n2 = notices(r.requests[2]);
		assert.equal(n2.length, 1);
		assert.match(n2[0], /^- removed: delta\.promptinclude\.md$/m);
		assert.ok(systemPromptOf(r.requests[2]).endsWith(`\n\n${renders[2]}`));
		// Both notices were stored and shown to the user (display: true).
		const shown = r.events.filter((e) => e.type === "message_end" && e.message?.role === "custom" && e.message.customType === "promptinclude");
		assert.equal(shown.length, 2);
		assert.ok(shown.every((e) => e.message.display === true));
	});

	test("UI mode (rpc): a missing binary gives exactly one warning notification", async () => {
		const cwd = project("rpc-missing");
		const r = await runPiRpc({
			cwd,
			agent: agentDir(),
			prompts: ["one", "two"],
			env: { PROMPTINCLUDE_BIN: path.join(scratch, "nope", "promptinclude") },
		});
		assert.equal(r.code, 0, r.stderr);
		assert.equal(r.requests.length, 2);
		for (const body of r.requests) assert.ok(systemPromptOf(body).endsWith(baseEnding(cwd)));
		const warnings = r.events.filter((e) => e.type === "extension_ui_request" && e.method === "notify");
		assert.equal(warnings.length, 1, JSON.stringify(warnings));
		assert.equal(warnings[0].notifyType, "warning");
		assert.match(warnings[0].message, /^promptinclude: .*not found.*system prompt is left unchanged/);
		assert.doesNotMatch(r.stderr, /promptinclude/, "in UI mode the warning goes to the UI, not stderr");
	});

	test("prompt_includes returns the audit of the cwd", needsBin, async (t) => {
		const cwd = project("tool");
		const agent = agentDir();
		let expected;
		try {
			expected = await promptinclude(["audit", cwd], { NO_COLOR: "1" });
		} catch {
			expected = undefined; // older binary: the extension formats `scan` itself
		}
		const r = await pi({ cwd, agent, args: ["-p", "Which rules apply? [[call:prompt_includes]]"] }, 2);
		const toolMessages = r.requests[1].messages.filter((m) => m.role === "tool");
		assert.equal(toolMessages.length, 1);
		const text = contentText(toolMessages[0].content);
		if (expected !== undefined) {
			assert.equal(text, expected, "tool result differs from `NO_COLOR=1 promptinclude audit <cwd>`");
		} else {
			t.diagnostic("promptinclude audit unavailable: checked the scan-based fallback");
			assert.match(text, /^Prompt includes for /);
			assert.match(text, /alpha\.promptinclude\.md\s+ok/);
			assert.match(text, /sub\/beta\.promptinclude\.md\s+ok/);
		}
		assert.equal(r.stdout, "Tool result received.\n");
	});

	test("PROMPTINCLUDE_BIN unset: promptinclude is found on PATH", needsBin, async () => {
		const cwd = project("path");
		const agent = agentDir();
		const binDir = tempDir("path-bin");
		fs.symlinkSync(BIN, path.join(binDir, "promptinclude"));
		const rendered = await promptinclude(["render", cwd]);
		const r = await pi({
			cwd,
			agent,
			args: ["-p", "Hello"],
			env: { PROMPTINCLUDE_BIN: undefined, PATH: `${binDir}${path.delimiter}${NODE_DIR}` },
		});
		assert.ok(systemPromptOf(r.requests[0]).endsWith(`\n\n${rendered}`));
		assert.equal(r.stderr, "");
	});

	for (const [name, env] of [
		["PROMPTINCLUDE_BIN names a missing file", () => ({ PROMPTINCLUDE_BIN: path.join(scratch, "does-not-exist", "promptinclude") })],
		["promptinclude is not on PATH", () => ({ PROMPTINCLUDE_BIN: undefined, PATH: `${tempDir("empty-path")}${path.delimiter}${NODE_DIR}` })],
		["promptinclude fails", () => ({ PROMPTINCLUDE_BIN: failingBinary() })],
	]) {
		test(`${name}: the prompt is left untouched and the user is warned once`, async () => {
			const cwd = project("missing");
			const agent = agentDir();
			const e = env();
			if (e.PATH) {
				for (const d of e.PATH.split(path.delimiter)) {
					assert.ok(!fs.existsSync(path.join(d, "promptinclude")), `precondition: ${d} must not hold promptinclude`);
				}
			}
			// Two prompts in one pi process: still a single warning.
			const r = await pi({ cwd, agent, args: ["-p", "first", "second"], env: e }, 2);
			for (const body of r.requests) {
				const sp = systemPromptOf(body);
				assert.ok(sp.endsWith(baseEnding(cwd)), "the system prompt does not end with pi's own last line");
				assert.doesNotMatch(sp, /Always indent with tabs/);
				assert.deepEqual(notices(body), []);
				assert.ok(block(sp, "Available tools:").includes(`- prompt_includes: ${SNIPPET}`), "the tool should stay registered");
			}
			const warnings = r.stderr.split("\n").filter((l) => l.includes("promptinclude"));
			assert.equal(warnings.length, 1, `expected one warning line, got:\n${r.stderr}`);
			assert.match(warnings[0], /^\[promptinclude\] warning: .*system prompt is left unchanged/);
			assert.doesNotMatch(r.stderr, /Extension error/, "an error escaped into pi");
			assert.equal(r.stdout, "OK.\n");

			// Same project with the binary: exactly the same prompt plus the section.
			if (BIN) {
				const ok = await pi({ cwd, agent: agentDir(), args: ["-p", "first"] });
				const rendered = await promptinclude(["render", cwd]);
				const undated = (s) => s.replace(/\nCurrent date: \d{4}-\d{2}-\d{2}\n/, "\nCurrent date: X\n");
				assert.equal(
					undated(systemPromptOf(ok.requests[0])),
					undated(`${systemPromptOf(r.requests[0])}\n\n${rendered}`),
				);
			}
		});
	}

	test("PROMPTINCLUDE_BUNDLE: used while its digests match, otherwise render", needsBin, async () => {
		const cwd = project("bundle");
		const other = project("bundle-other");
		const bundle = path.join(tempDir("bundle-out"), "b");
		await promptinclude(["bundle", "--out", bundle, cwd, other]);
		const manifest = JSON.parse(fs.readFileSync(path.join(bundle, "manifest.json"), "utf8"));
		const entry = manifest.roots.find((r) => r.abs_root === cwd);
		assert.ok(entry, "precondition: the bundle has an entry for the project");
		const section = fs.readFileSync(path.join(bundle, entry.section), "utf8");
		assert.equal(section, await promptinclude(["render", cwd]), "precondition: bundle section == render output");
		const missing = path.join(scratch, "no-such-bin");

		// Fresh bundle, no binary at all: the section comes from the bundle, silently.
		const fresh = await pi({ cwd, agent: agentDir(), args: ["-p", "Hello"], env: { PROMPTINCLUDE_BUNDLE: bundle, PROMPTINCLUDE_BIN: missing } });
		assert.ok(systemPromptOf(fresh.requests[0]).endsWith(`\n\n${section}`), "bundle section not used");
		assert.equal(fresh.stderr, "");
		// The manifest's path works as well as its directory.
		const viaFile = await pi({
			cwd,
			agent: agentDir(),
			args: ["-p", "Hello"],
			env: { PROMPTINCLUDE_BUNDLE: path.join(bundle, "manifest.json"), PROMPTINCLUDE_BIN: missing },
		});
		assert.ok(systemPromptOf(viaFile.requests[0]).endsWith(`\n\n${section}`));

		// A rule file changed: the bundle is stale and must not be used.
		write(path.join(cwd, "alpha.promptinclude.md"), "# Alpha\n\nNever use tabs.\n");
		const stale = await pi({ cwd, agent: agentDir(), args: ["-p", "Hello"], env: { PROMPTINCLUDE_BUNDLE: bundle, PROMPTINCLUDE_BIN: missing } });
		const staleSp = systemPromptOf(stale.requests[0]);
		assert.ok(staleSp.endsWith(baseEnding(cwd)), "a stale bundle was used");
		assert.equal(stale.stderr.split("\n").filter((l) => l.includes("promptinclude")).length, 1);
		const withBin = await pi({ cwd, agent: agentDir(), args: ["-p", "Hello"], env: { PROMPTINCLUDE_BUNDLE: bundle } });
		const rendered = await promptinclude(["render", cwd]);
		assert.match(rendered, /Never use tabs\./);
		assert.ok(systemPromptOf(withBin.requests[0]).endsWith(`\n\n${rendered}`), "stale bundle: render output expected");
		assert.equal(withBin.stderr, "");
	});
});
