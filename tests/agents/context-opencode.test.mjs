// Differential end-to-end test of `promptinclude context --agent opencode`
// against the real opencode (the version pinned in package.json).
//
// Every case is a directory tree (a random monorepo, or one of the
// documented edge cases of opencode's instruction files): `opencode run
// PROMPT` runs in the case's cwd with HOME in the case, its provider an
// OpenAI-compatible endpoint mocked on 127.0.0.1 (set in
// ~/.config/opencode/opencode.json), nothing else reached (no model list,
// no update, no share, no plugin install: npm's registry is a closed
// port). opencode puts the files into its system prompt right after the
// environment block (`</env>`) and before the skills; that stretch of the
// main request's system message must equal, byte for byte, what
//   promptinclude context --agent opencode --cwd CWD --home HOME --raw
// prints with the same environment (nothing, when opencode sends no file).
// The run is repeated and narrowed with the variables context-harness.mjs
// lists; the seed is printed as `# context-opencode seed: N`.
//
// The generator varies what opencode's rules (docs/agents-context.md) turn
// on: AGENTS.md, CLAUDE.md and CONTEXT.md (and names it does not read:
// agents.md, AGENTS.local.md, CLAUDE.local.md) along, above, off and below
// the cwd's path; `.git` as a repository, an empty directory, a directory
// with only HEAD, a gitdir file to a repository or to nothing, a dangling
// link, at the root, deeper, above, at the cwd or missing; the two global
// files and a decoy; OPENCODE_DISABLE_CLAUDE_CODE(_PROMPT); empty, blank,
// BOM, CRLF and invalid-UTF-8 texts; files that are directories, links in
// and out of the tree, dangling links; a cwd reached through a link.
//
// Not generated, on purpose: FIFOs (opencode blocks on them), unreadable
// files (root reads them), the configuration's `instructions`, and
// XDG_CONFIG_HOME (the provider's configuration lives there).

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertAuditChain, assertSameBytes, asValue, caseDir, casesOr, cwdMaybeThroughLink, formatSpec, genPath, join, newCase, registerContextTests, runContext, SEED, utf8, whereCase, withInvalidUtf8, writeTree } from "./context-harness.mjs";
import { BIN, MODULES, run } from "./helpers.mjs";
import { contentText, startMock } from "./mock-chat.mjs";
import { OPENCODE_OFFLINE, opencodeConfig } from "./sessions.mjs";

const OPENCODE = path.join(MODULES, ".bin/opencode");
console.log(`context-opencode seed: ${SEED}`); // TAP shows it as `# context-opencode seed: N`

// Forty random cases unless PROMPTINCLUDE_CONTEXT_CASES says: a session
// takes about three seconds, and CI runs all the agents' differentials.
const CASES = casesOr(40);

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-context-opencode-")));
let mock;

// ---------------------------------------------------------------------------
// A case spec: { files, cwd, env: { OPENCODE_DISABLE_CLAUDE_CODE?, OPENCODE_DISABLE_CLAUDE_CODE_PROMPT? } }

const PLAIN_NAMES = ["packages", "app", "src", "lib", "a", "b", "x.y", "node_modules"];
const EXOTIC_NAMES = ["dir with space", "\u00e9t\u00e9", "\u6df1\u3044", "\u{1F600}"];
const WORDS = ["use", "tabs", "rule", "go", "fmt", "\u00e9", "\u6df1", "`code`", "Instructions from: x"];
const INVALID = ["ff", "c3", "e282", "eda080", "80", "efbb"];
const PROJECT_NAMES = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"];
const DECOY_NAMES = ["agents.md", "AGENTS.local.md", "CLAUDE.local.md"];

/** Random text labelled `label`. */
function genText(rng, label) {
	const kind = rng.weighted([
		[72, "text"],
		[9, "blank"],
		[8, "empty"],
		[7, "invalid"],
		[4, "bom-only"],
	]);
	if (kind === "empty") return Buffer.alloc(0);
	if (kind === "bom-only") return Buffer.from("efbbbf", "hex");
	if (kind === "blank") return utf8(rng.pick([" ", "\n", "\n\n  \n", "\t\n", "\u3000", "\r\n"]));
	const nl = rng.chance(0.2) ? "\r\n" : "\n";
	const words = (n) => Array.from({ length: n }, () => rng.pick(WORDS)).join(" ");
	let text = `${rng.chance(0.12) ? "\ufeff" : ""}${rng.chance(0.1) ? `${nl} ` : ""}${label} ${words(rng.int(0, 4))}`;
	for (let i = rng.int(0, 2); i > 0; i--) text += `${nl}${words(rng.int(1, 5))}`;
	if (rng.chance(0.75)) text += nl;
	if (rng.chance(0.1)) text += nl;
	let buf = utf8(text);
	if (kind === "invalid") buf = withInvalidUtf8(rng, buf, INVALID);
	return buf;
}

/** A random case. */
function genCase(rng) {
	const { files, put, label, serial } = newCase();
	const route = genPath(rng, put, PLAIN_NAMES, EXOTIC_NAMES);
	const { pathDirs, cwdDir } = route;
	const offDirs = [];
	if (rng.chance(0.3)) offDirs.push(`${cwdDir}/child`);
	if (rng.chance(0.3)) offDirs.push(`${rng.pick(pathDirs)}/sibling`);
	for (const d of offDirs) put(d, { dir: true });

	// `.git`: a repository, or something git passes over or refuses.
	const putGit = (d) => {
		const kind = rng.weighted([
			[50, "repo"],
			[12, "empty-dir"],
			[8, "head-only"],
			[10, "gitdir-nowhere"],
			[10, "gitdir-repo"],
			[10, "dangling"],
		]);
		const at = join(d, ".git");
		if (kind === "repo") put(at, { gitInit: true });
		else if (kind === "empty-dir") put(at, { dir: true });
		else if (kind === "head-only") put(`${at}/HEAD`, "ref: refs/heads/main\n");
		else if (kind === "gitdir-nowhere") put(at, "gitdir: /nowhere\n");
		else if (kind === "dangling") put(at, { symlink: "nowhere" });
		else {
			const real = `real${serial()}`;
			put(`${real}/.git`, { gitInit: true });
			put(at, `gitdir: $BASE/${real}/.git\n`);
		}
	};
	const places = rng.weighted([
		[20, []],
		[40, ["tree"]],
		[12, [rng.pick(pathDirs)]],
		[8, ["."]],
		[8, [cwdDir]],
		[12, ["tree", rng.pick(pathDirs)]],
	]);
	for (const d of new Set(places)) putGit(d);

	const text = () => asValue(genText(rng, label()));
	const entry = (p) => {
		const kind = rng.weighted([
			[84, "text"],
			[6, "symlink"],
			[4, "dangling"],
			[6, "dir"],
		]);
		if (kind === "text") return put(p, text());
		if (kind === "dir") return put(p, { dir: true });
		if (kind === "dangling") return put(p, { symlink: "nowhere.md" });
		const t = rng.chance(0.5) ? `out/l${serial()}.md` : `${cwdDir}/linked${serial()}.md`;
		put(t, text());
		put(p, { symlink: rng.chance(0.5) ? `$BASE/${t}` : path.posix.relative(path.posix.dirname(p), t) });
	};
	const dirs = [".", ...pathDirs, ...offDirs];
	for (const d of dirs) {
		if (!rng.chance(d === "." ? 0.2 : pathDirs.includes(d) ? 0.55 : 0.4)) continue;
		for (const name of [...PROJECT_NAMES, ...DECOY_NAMES]) {
			const p = rng.chance(PROJECT_NAMES.includes(name) ? 0.4 : 0.12) ? join(d, name) : null;
			if (p && !files[p]) entry(p);
		}
	}
	// The global files, and one opencode does not read.
	if (rng.chance(0.35)) entry("home/.config/opencode/AGENTS.md");
	if (rng.chance(0.35)) entry("home/.claude/CLAUDE.md");
	if (rng.chance(0.1)) entry("home/.config/opencode/CLAUDE.md");

	const env = {};
	const flag = rng.weighted([
		[86, null],
		[5, ["OPENCODE_DISABLE_CLAUDE_CODE", "1"]],
		[5, ["OPENCODE_DISABLE_CLAUDE_CODE_PROMPT", "true"]],
		[4, ["OPENCODE_DISABLE_CLAUDE_CODE", "0"]],
	]);
	if (flag) env[flag[0]] = flag[1];
	const cwd = cwdMaybeThroughLink(rng, put, route, 0.08);
	return { files, cwd, env };
}

// ---------------------------------------------------------------------------
// The documented edge cases (docs/agents-context.md), each a named case.

const edge = (name, spec) => ({ name: `edge-${name}`, spec: { files: {}, cwd: "tree", env: {}, ...spec } });
const git = { "tree/.git": { gitInit: true } };
const EDGE_CASES = [
	edge("nearest-first-to-git-root", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/a/AGENTS.md": "A\n", "AGENTS.md": "ABOVE\n", "tree/a/b/child/AGENTS.md": "BELOW\n" }, cwd: "tree/a/b" }),
	edge("first-name-anywhere-wins", { files: { ...git, "tree/AGENTS.md": "AGENTS ROOT\n", "tree/a/CLAUDE.md": "CLAUDE A\n", "tree/a/CONTEXT.md": "CONTEXT A\n" }, cwd: "tree/a" }),
	edge("claude-then-context", { files: { ...git, "tree/CLAUDE.md": "C ROOT\n", "tree/a/CLAUDE.md": "C A\n", "tree/CONTEXT.md": "X\n" }, cwd: "tree/a" }),
	edge("context-last", { files: { ...git, "tree/CONTEXT.md": "X\n", "tree/a/agents.md": "lower\n", "tree/a/AGENTS.local.md": "local\n" }, cwd: "tree/a" }),
	edge("global-first-of-two", { files: { ...git, "home/.config/opencode/AGENTS.md": "G1\n", "home/.claude/CLAUDE.md": "G2\n", "tree/AGENTS.md": "P\n" } }),
	edge("global-claude", { files: { ...git, "home/.claude/CLAUDE.md": "G2\n", "tree/CLAUDE.md": "P\n" } }),
	edge("no-git-walks-to-the-top", { files: { "AGENTS.md": "ABOVE\n", "tree/AGENTS.md": "T\n" }, cwd: "tree/a" }),
	edge("empty-git-dir-passed-over", { files: { ...git, "tree/a/.git": { dir: true }, "tree/AGENTS.md": "T\n", "AGENTS.md": "ABOVE\n" }, cwd: "tree/a" }),
	edge("gitdir-to-nowhere-is-no-repository", { files: { ...git, "tree/a/.git": "gitdir: /nowhere\n", "tree/a/AGENTS.md": "A\n", "AGENTS.md": "ABOVE\n" }, cwd: "tree/a" }),
	edge("gitdir-to-a-repository", { files: { "real/.git": { gitInit: true }, "tree/a/.git": "gitdir: $BASE/real/.git\n", "tree/a/AGENTS.md": "A\n", "tree/AGENTS.md": "T\n" }, cwd: "tree/a/b" }),
	edge("directory-named-agents-md", { files: { ...git, "tree/a/AGENTS.md": { dir: true }, "tree/CLAUDE.md": "C\n" }, cwd: "tree/a" }),
	edge("empty-left-out-blank-kept", { files: { ...git, "tree/AGENTS.md": "", "tree/a/AGENTS.md": " \n", "home/.config/opencode/AGENTS.md": "", "home/.claude/CLAUDE.md": "G2\n" }, cwd: "tree/a" }),
	edge("bom-crlf-invalid", { files: { ...git, "tree/AGENTS.md": { hex: "efbbbf41ff0d0a420d0a" }, "tree/a/AGENTS.md": { hex: "efbbbf" } }, cwd: "tree/a" }),
	edge("links-named-as-links", { files: { ...git, "tree/AGENTS.md": { symlink: "$BASE/out/x.md" }, "out/x.md": "X\n", "tree/a/AGENTS.md": { symlink: "../AGENTS.md" }, "tree/b/AGENTS.md": { symlink: "nowhere.md" } }, cwd: "tree/a" }),
	edge("claude-switched-off", { files: { ...git, "tree/CLAUDE.md": "C\n", "tree/CONTEXT.md": "X\n", "home/.claude/CLAUDE.md": "G2\n" }, env: { OPENCODE_DISABLE_CLAUDE_CODE: "1" } }),
	edge("claude-prompt-switched-off", { files: { ...git, "tree/CLAUDE.md": "C\n", "home/.claude/CLAUDE.md": "G2\n" }, env: { OPENCODE_DISABLE_CLAUDE_CODE_PROMPT: "true" } }),
	edge("cwd-through-a-link", { files: { ...git, "tree/a/AGENTS.md": "A\n", jump: { symlink: "tree" } }, cwd: "jump/a" }),
	edge("nothing", { files: { ...git, "tree/README.md": "x\n" } }),
];

// ---------------------------------------------------------------------------
// Running a case.

/** Builds the case under `base`; returns { cwd, home, env } (env without PATH). */
function materialize(base, spec) {
	writeTree(base, spec);
	const home = path.join(base, "home");
	const config = path.join(home, ".config/opencode");
	fs.mkdirSync(config, { recursive: true });
	fs.writeFileSync(path.join(config, "opencode.json"), JSON.stringify(opencodeConfig(`${mock.url}/v1`)));
	const cwd = path.join(base, spec.cwd);
	fs.mkdirSync(cwd, { recursive: true });
	return { cwd, home, env: { HOME: home, ...spec.env } };
}

const ENV_END = "</env>\n";
const SKILLS = "\nSkills provide specialized instructions and workflows for specific tasks.";
const stats = { cases: 0, none: 0, global: 0, project: 0, mismatches: [] };

async function runCase(name, spec) {
	const base = caseDir(scratch, name);
	const { cwd, home, env } = materialize(base, spec);
	const prompt = `CTX-PROMPT-${SEED}-${name}-END`;
	const context = (format) => runContext({ bin: BIN, agent: "opencode", cwd, home, env, scratch }, format);
	const [pi, json] = [await context("--raw"), await context("--json")];
	const session = await run(OPENCODE, ["run", prompt], { cwd, env: { PATH: process.env.PATH, TERM: "dumb", NO_COLOR: "1", ...OPENCODE_OFFLINE, ...env } });
	const where = whereCase(name, base);
	assert.equal(session.status, 0, `opencode run failed, ${where}\nspec ${formatSpec(spec)}\n${session.stderr.slice(-3000)}`);
	// The main request: the one whose system message describes the
	// environment and whose messages carry the prompt (the title request
	// carries it too, under another system message).
	const main = mock.requests.find((r) => {
		const messages = r.body?.messages ?? [];
		return messages[0]?.role === "system" && contentText(messages[0].content).includes(ENV_END) && messages.some((m) => contentText(m.content).includes(prompt));
	});
	assert.ok(main, `no main model request carries the prompt, ${where}`);
	const system = contentText(main.body.messages[0].content);
	main.body = undefined; // the mock keeps every request; these are large
	const from = system.indexOf(ENV_END) + ENV_END.length;
	const to = system.lastIndexOf(SKILLS);
	assert.ok(to >= from - 1, `no skills after the environment block, ${where}: ${system.slice(-2000)}`);
	const block = to < from ? "" : system.slice(from, to);
	const sent = block ? utf8(block) : null;

	stats.cases++;
	if (!sent) stats.none++;
	if (block.includes(`Instructions from: ${home}/`)) stats.global++;
	if (block.includes(`Instructions from: ${fs.realpathSync(base)}/tree`)) stats.project++;
	if (!(pi.status === 0 && pi.stdout.equals(sent ?? Buffer.alloc(0)))) stats.mismatches.push(name);
	assertSameBytes({ pi, sent, agent: "opencode", where, spec, paths: `$BASE=${base} cwd=${cwd} home=${home}` });
	await assertAuditChain({ bin: BIN, agent: "opencode", base, cwd, home, env, sent, where });
	assert.equal(json.status, 0, json.stderr);
	const doc = JSON.parse(json.stdout.toString("utf8"));
	assert.deepEqual(
		doc.parts.map((p) => ({ place: p.place, text: p.text })),
		sent ? [{ place: "system_prompt", text: block }] : [],
		`the JSON parts differ from what opencode sent, ${where}`,
	);
}

registerContextTests({
	id: "context-opencode",
	agent: "opencode",
	edgeTitle: "documented edge cases: promptinclude context --agent opencode prints exactly the instruction files opencode sends",
	edgeCases: EDGE_CASES,
	genCase,
	runCase,
	caseMs: 30000,
	cases: CASES,
	agentPath: OPENCODE,
	bin: BIN,
	scratch,
	start: async () => (mock = await startMock({ maxRequests: (CASES + EDGE_CASES.length) * 6 + 100 })),
	summary: () => `${stats.cases} cases run in all: ${stats.project} with project files, ${stats.global} with a global file, ${stats.none} with none; mismatches: ${stats.mismatches.join(", ") || "none"}`,
});
