// Differential end-to-end test of `promptinclude context --agent pi` against
// the real pi coding agent (the version pinned in package.json).
//
// Every case is a directory tree (a random monorepo, or one of the
// documented edge cases of pi's context files): `pi -p PROMPT` runs in the
// case's cwd with HOME (and sometimes PI_CODING_AGENT_DIR) in the case,
// against the mock Chat Completions API on 127.0.0.1 (the provider comes
// from mock-provider.mjs, so nothing is written into the agent directory);
// the system prompt must hold, exactly once, what
//   promptinclude context --agent pi --cwd CWD --home HOME --raw
// prints with the same environment, in the place pi puts it (after the base
// prompt, before "\nCurrent date: "); when promptinclude prints nothing,
// the system prompt must hold no "# Project Context" section. The run is
// repeated and narrowed with the variables tests/agents/context-harness.mjs
// lists; the seed is printed as `# context-pi seed: N`.
//
// The generator varies what the model's rules (docs/agents-context.md)
// turn on: AGENTS.md, AGENTS.MD, CLAUDE.md, CLAUDE.MD and look-alikes along,
// above, off and below the cwd's path; symlinks (in and out, dangling,
// looping, to directories), directories named like the files; blank, BOM,
// CRLF, invalid-UTF-8 and large texts; the agent directory by default, by
// PI_CODING_AGENT_DIR (absolute, `~/`, relative), absent, or one of the
// cwd's ancestors; a cwd reached through a symlink.
//
// Not generated, on purpose: FIFOs named like the files (pi blocks on
// them forever), unreadable files (root reads them), files at `/`.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { assertAuditChain, assertSameBytes, asValue, caseDir, CASES, cwdMaybeThroughLink, formatSpec, genPath, join, newCase, registerContextTests, runContext, SEED, utf8, whereCase, withInvalidUtf8, writeCase } from "../agents/context-harness.mjs";
import { startMockServer, systemPromptOf } from "./mock-openai.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PI = path.join(HERE, "node_modules/.bin/pi");
const PROVIDER = path.join(HERE, "mock-provider.mjs");
const BIN = process.env.PROMPTINCLUDE_BIN;
const SECTION = "# Project Context\n\nProject-specific instructions and guidelines:\n\n";
console.log(`context-pi seed: ${SEED}`); // TAP shows it as `# context-pi seed: N`

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-context-pi-")));
let mock;

// ---------------------------------------------------------------------------
// A case spec: { files, cwd: "tree/a/b", agentDir: null | {absolute: "x"} | {tilde: "x"} | {relative: "x"} }

const PLAIN_NAMES = ["packages", "app", "src", "lib", "a", "b", "x.y"];
const EXOTIC_NAMES = ["dir with space", "\u00e9t\u00e9", "\u6df1\u3044"];
const NAMES = ["AGENTS.md", "AGENTS.MD", "CLAUDE.md", "CLAUDE.MD"];
const LOOKALIKES = ["agents.md", "Agents.md", "CLAUDE.local.md", "AGENTS.override.md", ".claude/CLAUDE.md"];
const INVALID = ["ff", "c3", "e282", "eda080", "c0af", "80"];

/** Random text of about `size` bytes. */
function genText(rng, label, size) {
	const kind = rng.weighted([
		[70, "text"],
		[8, "blank"],
		[5, "empty"],
		[7, "invalid"],
		[2, "large"],
	]);
	if (kind === "empty") return Buffer.alloc(0);
	if (kind === "blank") return utf8(rng.pick([" ", "\n", "\n\n  \n", "\t\n", "\u3000", "\r\n"]));
	const nl = rng.chance(0.2) ? "\r\n" : "\n";
	let text = `${rng.chance(0.1) ? "\ufeff" : ""}${rng.chance(0.1) ? "\n " : ""}${label}`;
	const target = kind === "large" ? rng.int(100_000, 400_000) : size;
	while (text.length < target) text += rng.chance(0.15) ? nl : rng.pick([" rule", " \u00e9", " \u6df1", " x", " `code`"]);
	if (rng.chance(0.7)) text += nl;
	let buf = utf8(text);
	if (kind === "invalid") buf = withInvalidUtf8(rng, buf, INVALID);
	return buf;
}

/** A random case. */
function genCase(rng) {
	const { files, put, label, serial } = newCase();
	const route = genPath(rng, put, PLAIN_NAMES, EXOTIC_NAMES);
	const { segs, pathDirs, cwdDir } = route;
	const offDirs = [];
	if (rng.chance(0.3)) offDirs.push(`${cwdDir}/child`);
	if (rng.chance(0.3)) offDirs.push(`${rng.pick(pathDirs)}/sibling`);
	for (const d of offDirs) put(d, { dir: true });
	if (rng.chance(0.4)) put("tree/.git", { gitInit: true });

	const entry = (p) => {
		const kind = rng.weighted([
			[84, "text"],
			[6, "symlink"],
			[3, "dangling"],
			[2, "loop"],
			[3, "dir"],
			[2, "dir-link"],
		]);
		if (kind === "text") return put(p, asValue(genText(rng, label(), rng.int(1, 200))));
		if (kind === "dir") return put(p, { dir: true });
		if (kind === "dangling") return put(p, { symlink: "nowhere.md" });
		if (kind === "loop") return put(p, { symlink: path.posix.basename(p) });
		if (kind === "dir-link") return put(p, { symlink: "$BASE/tree" });
		const t = `out/t${serial()}.md`;
		put(t, asValue(genText(rng, label(), rng.int(1, 100))));
		put(p, { symlink: rng.chance(0.5) ? `$BASE/${t}` : path.posix.relative(path.posix.dirname(p), t) });
	};
	const dirs = [".", ...pathDirs, ...offDirs];
	for (const d of dirs) {
		const p = d === "." ? 0.15 : pathDirs.includes(d) ? 0.55 : 0.4;
		if (!rng.chance(p)) continue;
		for (const name of rng.subset(NAMES, 0.35)) entry(join(d, name));
		if (rng.chance(0.1)) put(join(d, rng.pick(LOOKALIKES)), `LOOKALIKE ${label()}\n`);
	}

	// The agent directory.
	const where = rng.weighted([
		[45, "default"],
		[15, "absolute"],
		[10, "tilde"],
		[8, "relative"],
		[8, "ancestor"],
		[14, "none"],
	]);
	let agentDir = null;
	let agentPath = "home/.pi/agent";
	if (where === "absolute") [agentDir, agentPath] = [{ absolute: "agentdir" }, "agentdir"];
	if (where === "tilde") [agentDir, agentPath] = [{ tilde: "cfg/pi" }, "home/cfg/pi"];
	if (where === "relative") [agentDir, agentPath] = [{ relative: "../rel-agent" }, path.posix.join(cwdDir, "../rel-agent")];
	if (where === "ancestor") [agentDir, agentPath] = [{ absolute: rng.pick(pathDirs) }, null];
	if (agentPath && where !== "none") {
		put(agentPath, { dir: true });
		if (rng.chance(0.7)) for (const name of rng.subset(NAMES, 0.4)) entry(`${agentPath}/${name}`);
	}
	if (where !== "default" && rng.chance(0.5)) put("home/.pi/agent/AGENTS.md", "DECOY-DEFAULT-AGENT-DIR\n");

	const cwd = cwdMaybeThroughLink(rng, put, route, 0.08);
	return { files, cwd, agentDir };
}

// ---------------------------------------------------------------------------
// The documented edge cases (docs/agents-context.md), each a named case.

const edge = (name, spec) => ({ name: `edge-${name}`, spec: { files: {}, cwd: "tree", agentDir: null, ...spec } });
const EDGE_CASES = [
	edge("agents-beats-claude", { files: { "tree/AGENTS.md": "A\n", "tree/CLAUDE.md": "C\n" } }),
	edge("upper-agents-beats-claude", { files: { "tree/AGENTS.MD": "UA\n", "tree/CLAUDE.md": "C\n" } }),
	edge("claude-md-alone", { files: { "tree/CLAUDE.MD": "UC\n" } }),
	edge("lookalikes-ignored", { files: { "tree/agents.md": "x", "tree/CLAUDE.local.md": "x", "tree/.claude/CLAUDE.md": "x", "tree/AGENTS.override.md": "x" } }),
	edge("directory-named-agents-md-falls-through", { files: { "tree/AGENTS.md/x": "x", "tree/CLAUDE.md": "C\n" } }),
	edge("dangling-link-falls-through", { files: { "tree/AGENTS.md": { symlink: "nowhere" }, "tree/CLAUDE.md": "C\n" } }),
	edge("symlink-named-as-link", { files: { "out/x.md": "LINKED\n", "tree/AGENTS.md": { symlink: "$BASE/out/x.md" } } }),
	edge("sent-as-read", { files: { "tree/AGENTS.md": { hex: "efbbbf0d0a2041ff0d0a20200a" } } }),
	edge("blank-and-empty-still-sent", { files: { "AGENTS.md": "", "tree/AGENTS.md": "  \n" } }),
	edge("ancestors-outermost-first", { files: { "AGENTS.md": "UP\n", "tree/CLAUDE.md": "T\n", "tree/a/AGENTS.md": "A\n", "tree/a/b/child/AGENTS.md": "BELOW\n" }, cwd: "tree/a/b" }),
	edge("agent-dir-first", { files: { "home/.pi/agent/AGENTS.md": "GLOBAL\n", "tree/AGENTS.md": "P\n" } }),
	edge("agent-dir-by-variable", { files: { "cfg/CLAUDE.md": "CFG\n", "home/.pi/agent/AGENTS.md": "DECOY\n" }, agentDir: { absolute: "cfg" } }),
	edge("agent-dir-tilde", { files: { "home/x/AGENTS.md": "TILDE\n" }, agentDir: { tilde: "x" } }),
	edge("agent-dir-relative", { files: { "rel/AGENTS.md": "REL\n", "tree/AGENTS.md": "P\n" }, agentDir: { relative: "../rel" } }),
	edge("agent-dir-is-an-ancestor", { files: { "tree/AGENTS.md": "ONCE\n" }, agentDir: { absolute: "tree" }, cwd: "tree" }),
	edge("large-file-whole", { files: { "tree/AGENTS.md": `${"y".repeat(300_000)}\n` } }),
	edge("nothing", { files: { "tree/README.md": "x\n" } }),
];

// ---------------------------------------------------------------------------
// Running a case.

/** Builds the case under `base`; returns { cwd, home, env } (env without PATH). */
function materialize(base, spec) {
	const { home, cwd } = writeCase(base, spec);
	const env = { HOME: home };
	const a = spec.agentDir;
	if (a?.absolute !== undefined) env.PI_CODING_AGENT_DIR = path.join(base, a.absolute);
	if (a?.tilde !== undefined) env.PI_CODING_AGENT_DIR = `~/${a.tilde}`;
	if (a?.relative !== undefined) env.PI_CODING_AGENT_DIR = a.relative;
	return { cwd, home, env };
}

/** Runs pi once; resolves { status, stderr }. */
function runPi(cwd, env, prompt) {
	const argv = ["--no-session", "--no-skills", "--no-prompt-templates", "--no-themes", "-e", PROVIDER, "--provider", "mock", "--model", "mock-model", "-p", prompt];
	return new Promise((resolve, reject) => {
		const child = spawn(PI, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
		let stderr = "";
		child.stderr.on("data", (d) => (stderr += d));
		child.stdout.resume();
		const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
		child.on("error", reject);
		child.on("close", (status) => {
			clearTimeout(timer);
			resolve({ status, stderr });
		});
	});
}

const stats = { cases: 0, none: 0, sent: 0, mismatches: [] };

async function runCase(name, spec) {
	const base = caseDir(scratch, name);
	const { cwd, home, env } = materialize(base, spec);
	const prompt = `CTX-PROMPT-${SEED}-${name}-END`;
	const pi = await runContext({ bin: BIN, agent: "pi", cwd, home, env, scratch }, "--raw");
	const session = await runPi(cwd, { PATH: process.env.PATH, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", PROMPTINCLUDE_MOCK_BASE_URL: mock.baseUrl, ...env }, prompt);
	const where = whereCase(name, base);
	assert.equal(session.status, 0, `pi -p failed, ${where}\nspec ${formatSpec(spec)}\n${session.stderr.slice(-3000)}`);
	const index = mock.requests.findIndex((body) => JSON.stringify(body.messages ?? []).includes(prompt));
	assert.ok(index >= 0, `no request carries the prompt, ${where}`);
	const system = systemPromptOf(mock.requests[index]);
	mock.requests[index] = {}; // the mock keeps every request; these can be large
	assert.equal(typeof system, "string", `no system prompt, ${where}`);

	// pi's section: from its header to the date line that follows it.
	const start = system.indexOf(`\n\n${SECTION}`);
	const end = system.lastIndexOf("\nCurrent date: ");
	const sent = start < 0 ? null : utf8(system.slice(start + 2, end));
	stats.cases++;
	if (sent) stats.sent++;
	else stats.none++;
	if (sent) assert.equal(system.split(SECTION).length, 2, `the section is repeated, ${where}`);
	if (!(pi.status === 0 && !pi.timedOut && pi.stdout.equals(sent ?? Buffer.alloc(0)))) stats.mismatches.push(name);
	assertSameBytes({
		pi,
		sent,
		agent: "pi",
		where,
		spec,
		paths: `$BASE=${base} cwd=${cwd} home=${home}${env.PI_CODING_AGENT_DIR ? ` PI_CODING_AGENT_DIR=${env.PI_CODING_AGENT_DIR}` : ""}`,
	});
	await assertAuditChain({ bin: BIN, agent: "pi", base, cwd, home, env, sent, where });
}

registerContextTests({
	id: "context-pi",
	agent: "pi",
	edgeTitle: "documented edge cases: promptinclude context --agent pi prints exactly pi's Project Context section",
	edgeCases: EDGE_CASES,
	genCase,
	runCase,
	caseMs: 30000,
	agentPath: PI,
	bin: BIN,
	scratch,
	start: async () => (mock = await startMockServer({ maxRequests: (CASES + EDGE_CASES.length) * 4 + 50 })),
	summary: () => `${stats.cases} cases run in all: ${stats.sent} with a Project Context section, ${stats.none} without; mismatches: ${stats.mismatches.join(", ") || "none"}`,
});
