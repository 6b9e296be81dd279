// Differential end-to-end test of `promptinclude context --agent qwen-code`
// against the real Qwen Code (the version pinned in package.json).
//
// Every case is a directory tree (a random monorepo, or one of the
// documented edge cases of Qwen Code's context files): `qwen -p PROMPT` runs
// in the case's cwd with HOME in the case, its model an OpenAI-compatible
// endpoint mocked on 127.0.0.1 (OPENAI_BASE_URL; `~/.qwen/settings.json`
// picks that provider and turns statistics and updates off). Qwen Code
// appends its context files and rules to its system prompt after a
// `\n\n---\n\n` ruler, before its auto-memory section; that stretch, ruler
// included, must equal, byte for byte, what
//   promptinclude context --agent qwen-code --cwd CWD --home HOME --raw
// prints (nothing, when it appends nothing). The run is repeated and
// narrowed with the variables context-harness.mjs lists; the seed is
// printed as `# context-qwen seed: N`.
//
// The generator varies what the model's rules (docs/agents-context.md)
// turn on: QWEN.md and AGENTS.md (and names it does not read) along,
// above, off and below the cwd's path, in ~/.qwen and in the home; `.git`
// as a repository, a file, an empty directory or a dangling link, at the
// root, deeper or missing; QWEN.local.md where it is read and where not;
// rules in ~/.qwen/rules and the root's .qwen/rules with every `paths:`
// form (front matter that is not YAML too), HTML comments, empty bodies,
// nested directories, links and other names; the output-language rule
// missing, Qwen Code's own, someone else's, a fixed language's, and the
// cwd's own; the settings' context.fileName; `@path` imports (nested,
// cyclic, too deep, missing, outside the root, in code); empty, blank,
// BOM, CRLF and invalid-UTF-8 texts; files that are directories, links in
// and out of the tree, dangling links; a cwd reached through a link, and
// the home itself.
//
// Not generated, on purpose: FIFOs, unreadable files (root reads them),
// QWEN_HOME, folder trust and the other settings the model notes as not
// followed.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertAuditChain, assertSameBytes, asValue, caseDir, casesOr, cwdMaybeThroughLink, formatSpec, genPath, join, newCase, registerContextTests, runContext, SEED, utf8, whereCase, withInvalidUtf8, writeTree } from "./context-harness.mjs";
import { BIN, MODULES, run } from "./helpers.mjs";
import { contentText, startMock } from "./mock-chat.mjs";
import { QWEN_SETTINGS, qwenEnv } from "./sessions.mjs";

const QWEN = path.join(MODULES, ".bin/qwen");
console.log(`context-qwen seed: ${SEED}`); // TAP shows it as `# context-qwen seed: N`

// Forty random cases unless PROMPTINCLUDE_CONTEXT_CASES says: a session
// takes about three seconds, and CI runs all the agents' differentials.
const CASES = casesOr(40);

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-context-qwen-")));
let mock;

// ---------------------------------------------------------------------------
// A case spec: { files, cwd, settings? }

const PLAIN_NAMES = ["packages", "app", "src", "lib", "a", "b", "x.y"];
const EXOTIC_NAMES = ["dir with space", "\u00e9t\u00e9", "\u6df1\u3044", "\u{1F600}"];
const WORDS = ["use", "tabs", "rule", "go", "fmt", "\u00e9", "\u6df1", "`code`", "--- Context from: x ---", "<!-- note -->"];
const INVALID = ["ff", "c3", "e282", "eda080", "80"];
const NAMES = ["QWEN.md", "AGENTS.md"];
const DECOYS = ["qwen.md", "GEMINI.md", "CLAUDE.md"];
const FRONT = [
	[30, null],
	[12, "paths: src/**"],
	[10, "paths:\n  - a/**\n  - b/**"],
	[8, "paths: []"],
	[8, "description: a rule"],
	[6, 'paths: ""'],
	[6, "paths: 5"],
	[6, "bad: a: b\npaths: lib/**"],
	[5, "bad: a: b\npaths: true"],
	[4, "bad: a: b\n  paths: x"],
	[5, ""],
];

/** Random text labelled `label`, with `more` (imports) before its end. */
function genText(rng, label, more = "") {
	const kind = rng.weighted([
		[74, "text"],
		[8, "blank"],
		[8, "empty"],
		[6, "invalid"],
		[4, "bom-only"],
	]);
	if (kind === "empty") return Buffer.alloc(0);
	if (kind === "bom-only") return Buffer.from("efbbbf", "hex");
	if (kind === "blank") return utf8(rng.pick([" ", "\n", "\n\n  \n", "\t\n", "\u3000", "\r\n"]));
	const nl = rng.chance(0.2) ? "\r\n" : "\n";
	const words = (n) => Array.from({ length: n }, () => rng.pick(WORDS)).join(" ");
	let text = `${rng.chance(0.12) ? "\ufeff" : ""}${rng.chance(0.1) ? `${nl} ` : ""}${label} ${words(rng.int(0, 4))}`;
	for (let i = rng.int(0, 2); i > 0; i--) text += `${nl}${words(rng.int(1, 5))}`;
	text += more;
	if (rng.chance(0.75)) text += nl;
	let buf = utf8(text);
	if (kind === "invalid") buf = withInvalidUtf8(rng, buf, INVALID);
	return buf;
}

/**
 * The files imports may name (under tree/imp, some importing each other, a
 * chain deeper than Qwen Code follows, a directory), and a function giving
 * the imports of the file at `p`, in the forms Qwen Code inlines and the
 * ones it leaves.
 */
function genImports(rng, put, label) {
	if (!rng.chance(0.6)) return () => "";
	const pool = Array.from({ length: rng.int(1, 3) }, (_, k) => `tree/imp/t${k}.md`);
	for (const t of pool) {
		const others = pool.filter((o) => o !== t).map((o) => path.posix.basename(o));
		const nested = others.filter(() => rng.chance(0.5)).map((o) => ` @./${o}`).join("");
		put(t, rng.chance(0.08) ? { hex: "696d70ff0a" } : `${label()}${nested}${rng.pick(["", "\n", "\n\n", "\r\n"])}`);
	}
	const targets = [...pool, "tree/imp/missing.md"];
	if (rng.chance(0.25)) {
		const chain = Array.from({ length: 7 }, (_, k) => `tree/imp/deep/d${k}.md`);
		chain.forEach((d, k) => put(d, `${label()} @d${(k + 1) % chain.length}.md\n`));
		targets.push(chain[0]);
	}
	if (rng.chance(0.2)) {
		put("tree/imp/folder.md", { dir: true });
		targets.push("tree/imp/folder.md");
	}
	if (rng.chance(0.3)) {
		put("out/o.md", `${label()}\n`);
		targets.push("out/o.md");
	}
	return (p) => {
		if (!rng.chance(0.5)) return "";
		const dir = path.posix.dirname(p);
		let out = "";
		for (let i = rng.int(1, 3); i > 0; i--) {
			const target = rng.pick(targets);
			let rel = path.posix.relative(dir, target);
			if (!rel.startsWith(".") && rng.chance(0.3)) rel = `./${rel}`;
			out += rng.weighted([
				[45, ` @${rel}`],
				[10, `\n@${rel}`],
				[8, ` \`@${rel}\``],
				[6, `\n\`\`\`\n@${rel}\n\`\`\`\n`],
				[6, ` x@${rel}`],
				[5, ` @$BASE/${target}`],
				[4, ` @https://example.com/${rel}`],
				[6, ` @${rel} @${rel}`],
			]);
		}
		return out;
	};
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

	// `.git`: a directory or a file ends the walk one above; a link does not.
	const putGit = (d) => {
		const at = join(d, ".git");
		const kind = rng.weighted([
			[55, "repo"],
			[12, "empty-dir"],
			[13, "file"],
			[10, "dangling"],
		]);
		if (kind === "repo") put(at, { gitInit: true });
		else if (kind === "empty-dir") put(at, { dir: true });
		else if (kind === "file") put(at, "gitdir: /nowhere\n");
		else put(at, { symlink: "nowhere" });
	};
	const places = rng.weighted([
		[20, []],
		[45, ["tree"]],
		[15, [rng.pick(pathDirs)]],
		[8, ["."]],
		[12, ["tree", rng.pick(pathDirs)]],
	]);
	for (const d of new Set(places)) putGit(d);

	const importsFor = genImports(rng, put, label);
	const texts = [];
	const text = (p) => {
		if (texts.length && rng.chance(0.1)) return rng.pick(texts);
		const t = asValue(genText(rng, label(), importsFor(p)));
		texts.push(t);
		return t;
	};
	const entry = (p, content = text) => {
		const kind = rng.weighted([
			[84, "text"],
			[6, "symlink"],
			[4, "dangling"],
			[6, "dir"],
		]);
		if (kind === "text") return put(p, content(p));
		if (kind === "dir") return put(p, { dir: true });
		if (kind === "dangling") return put(p, { symlink: "nowhere.md" });
		const t = `out/l${serial()}.md`;
		put(t, content(p));
		put(p, { symlink: rng.chance(0.5) ? `$BASE/${t}` : path.posix.relative(path.posix.dirname(p), t) });
	};
	const dirs = [".", ...pathDirs, ...offDirs];
	for (const d of dirs) {
		if (!rng.chance(d === "." ? 0.25 : pathDirs.includes(d) ? 0.55 : 0.4)) continue;
		for (const name of [...NAMES, ...DECOYS]) if (rng.chance(NAMES.includes(name) ? 0.45 : 0.1)) entry(join(d, name));
	}
	for (const name of NAMES) if (rng.chance(0.3)) entry(`home/.qwen/${name}`);
	if (rng.chance(0.1)) entry("home/QWEN.md");
	for (const d of new Set(["tree", rng.pick(pathDirs)])) if (rng.chance(0.3)) entry(`${d}/.qwen/QWEN.local.md`);

	// Rules: the user's and the project's.
	const rule = (p) => {
		const front = rng.weighted(FRONT);
		const body = `${rng.chance(0.15) ? "<!-- hidden -->" : ""}${genText(rng, label()).toString("latin1")}${rng.chance(0.1) ? "<!-- open" : ""}`;
		return asValue(Buffer.from(front === null ? body : `---\n${front}\n---\n${body}`, "latin1"));
	};
	for (const base of ["home/.qwen/rules", ...new Set(["tree/.qwen/rules", `${rng.pick(pathDirs)}/.qwen/rules`])]) {
		if (!rng.chance(0.4)) continue;
		for (let i = rng.int(1, 3); i > 0; i--) {
			const sub = rng.chance(0.25) ? `${rng.pick(["z", "a", "deep/er"])}/` : "";
			entry(`${base}/${sub}r${serial()}.md`, rule);
		}
		if (rng.chance(0.15)) put(`${base}/notes${serial()}.txt`, "not a rule\n");
	}

	// The output-language rule as the user's directory holds it before Qwen Code starts.
	const language = rng.weighted([
		[60, null],
		[10, "# my own rule\nanswer briefly\n"],
		[10, "<!-- qwen-code:llm-output-language: French -->\nFrench please\n"],
		[10, "# Output language preference: French\n<!-- qwen-code:llm-output-language: French -->\n\n## Rule\nYou MUST always respond in **French** regardless of the user's input language.\n\n## Exception\nx\n\n## Keep technical artifacts unchanged\nx\n\n## Tool / system outputs\nx\n"],
		[5, { dir: true }],
	]);
	if (language !== null) put("home/.qwen/output-language.md", language);
	if (rng.chance(0.1)) put(`${cwdDir}/.qwen/output-language.md`, `${label()} project language\n`);

	const settings = rng.chance(0.1) ? { context: { fileName: rng.pick([["AGENTS.md", "QWEN.md"], "AGENTS.md", ["CLAUDE.md", "QWEN.md"]]) } } : undefined;
	const cwd = rng.chance(0.04) ? "home" : cwdMaybeThroughLink(rng, put, route, 0.08);
	return { files, cwd, ...(settings ? { settings } : {}) };
}

// ---------------------------------------------------------------------------
// The documented edge cases (docs/agents-context.md), each a named case.

const edge = (name, spec) => ({ name: `edge-${name}`, spec: { files: {}, cwd: "tree", ...spec } });
const git = { "tree/.git": { gitInit: true } };
const EDGE_CASES = [
	edge("names-then-farthest-first", { files: { ...git, "home/.qwen/QWEN.md": "GQ\n", "home/.qwen/AGENTS.md": "GA\n", "tree/QWEN.md": "TQ\n", "tree/a/QWEN.md": "AQ\n", "tree/AGENTS.md": "TA\n", "tree/a/b/AGENTS.md": "BA\n" }, cwd: "tree/a/b" }),
	edge("one-above-the-root", { files: { ...git, "QWEN.md": "ABOVE\n", "tree/QWEN.md": "ROOT\n" }, cwd: "tree/a" }),
	edge("no-root-up-to-above-the-home", { files: { "QWEN.md": "BASE\n", "tree/QWEN.md": "T\n" }, cwd: "tree/a" }),
	edge("git-file-is-a-root-link-is-not", { files: { "tree/a/.git": "x\n", "tree/b/.git": { symlink: "nowhere" }, "tree/QWEN.md": "T\n", "tree/a/QWEN.md": "A\n", "tree/b/QWEN.md": "B\n" }, cwd: "tree/a/x" }),
	edge("local-and-rules", {
		files: {
			...git,
			"tree/.qwen/QWEN.local.md": "LOCAL\n",
			"tree/a/.qwen/QWEN.local.md": "NOT READ\n",
			"home/.qwen/rules/g.md": "GLOBAL RULE\n",
			"tree/.qwen/rules/a.md": "---\ndescription: d\n---\n<!-- c -->RULE A\n",
			"tree/.qwen/rules/b.md": "---\npaths: src/**\n---\nSCOPED\n",
			"tree/.qwen/rules/z/c.md": "---\nbad: a: b\npaths: true\n---\nSIMPLE\n",
			"tree/.qwen/rules/d.txt": "NOT A RULE\n",
			"tree/.qwen/rules/e.md": "<!-- only a comment -->\n",
		},
		cwd: "tree/a",
	}),
	edge("imports", {
		files: {
			...git,
			"tree/QWEN.md": "Q @imp/a.md `@imp/a.md` @imp/missing.md @../out.md @imp/dir\n```\n@imp/a.md\n```\n",
			"tree/imp/a.md": "A @b.md\n",
			"tree/imp/b.md": "B @a.md @../QWEN.md\n",
			"tree/imp/dir": { dir: true },
			"out.md": "OUT\n",
		},
	}),
	edge("output-language-kept-and-replaced", { files: { ...git, "home/.qwen/output-language.md": "# mine\nno marker\n", "tree/a/.qwen/output-language.md": "PROJECT LANGUAGE\n", "tree/QWEN.md": "T\n" } }),
	edge("texts-as-read", { files: { ...git, "tree/QWEN.md": "", "tree/AGENTS.md": { hex: "efbbbf20410d0a42ff0a" }, "tree/a/QWEN.md": { dir: true }, "tree/a/AGENTS.md": " \n\u3000" }, cwd: "tree/a" }),
	edge("started-in-the-home", { files: { "home/QWEN.md": "HOME\n", "home/.qwen/QWEN.md": "GLOBAL\n", "QWEN.md": "ABOVE\n" }, cwd: "home" }),
	edge("file-name-from-settings", { files: { ...git, "tree/CLAUDE.md": "C\n", "tree/QWEN.md": "Q\n" }, settings: { context: { fileName: ["CLAUDE.md", "QWEN.md"] } } }),
	edge("cwd-through-a-link", { files: { ...git, "tree/a/QWEN.md": "A\n", jump: { symlink: "tree" } }, cwd: "jump/a" }),
];

// ---------------------------------------------------------------------------
// Running a case.

/** Builds the case under `base`; returns { cwd, home, env } (env without PATH). */
function materialize(base, spec) {
	writeTree(base, spec);
	const home = path.join(base, "home");
	fs.mkdirSync(path.join(home, ".qwen"), { recursive: true });
	fs.writeFileSync(path.join(home, ".qwen/settings.json"), JSON.stringify({ ...QWEN_SETTINGS, ...(spec.settings ?? {}) }, null, 2));
	const cwd = path.join(base, spec.cwd);
	fs.mkdirSync(cwd, { recursive: true });
	return { cwd, home, env: { HOME: home } };
}

const MEMORY = ["\n\n---\n\n--- Context from: ", "\n\n---\n\n--- Rule from: "];
const AUTO_MEMORY = "\n\n---\n\n# auto memory";
const stats = { cases: 0, none: 0, context: 0, rules: 0, imports: 0, mismatches: [] };

async function runCase(name, spec) {
	const base = caseDir(scratch, name);
	const { cwd, home, env } = materialize(base, spec);
	const prompt = `CTX-PROMPT-${SEED}-${name}-END`;
	const context = (format) => runContext({ bin: BIN, agent: "qwen-code", cwd, home, env, scratch }, format);
	const [pi, json] = [await context("--raw"), await context("--json")];
	const session = await run(QWEN, ["-p", prompt], { cwd, env: { PATH: process.env.PATH, TERM: "dumb", NO_COLOR: "1", ...qwenEnv(`${mock.url}/v1`), ...env } });
	const where = whereCase(name, base);
	assert.equal(session.status, 0, `qwen -p failed, ${where}\nspec ${formatSpec(spec)}\n${session.stderr.slice(-3000)}`);
	const main = mock.requests.find((r) => (r.body?.messages ?? []).some((m) => m.role !== "system" && contentText(m.content).includes(prompt)));
	assert.ok(main, `no model request carries the prompt, ${where}`);
	const system = contentText(main.body.messages.find((m) => m.role === "system")?.content);
	main.body = undefined; // the mock keeps every request; these are large
	const starts = MEMORY.map((m) => system.indexOf(m)).filter((i) => i >= 0);
	const from = starts.length ? Math.min(...starts) : -1;
	const to = system.lastIndexOf(AUTO_MEMORY);
	assert.ok(to >= 0, `no auto-memory section in the system prompt, ${where}`);
	const block = from < 0 ? "" : system.slice(from, to);
	const sent = block ? utf8(block) : null;

	stats.cases++;
	if (!sent) stats.none++;
	if (block.includes("--- Context from: ")) stats.context++;
	if (block.includes("--- Rule from: ")) stats.rules++;
	if (block.includes("<!-- Imported from: ")) stats.imports++;
	if (!(pi.status === 0 && pi.stdout.equals(sent ?? Buffer.alloc(0)))) stats.mismatches.push(name);
	assertSameBytes({ pi, sent, agent: "Qwen Code", where, spec, paths: `$BASE=${base} cwd=${cwd} home=${home}` });
	await assertAuditChain({ bin: BIN, agent: "qwen-code", base, cwd, home, env, sent, where });
	assert.equal(json.status, 0, json.stderr);
	const doc = JSON.parse(json.stdout.toString("utf8"));
	assert.deepEqual(
		doc.parts.map((p) => ({ place: p.place, text: p.text })),
		sent ? [{ place: "system_prompt", text: block }] : [],
		`the JSON parts differ from what Qwen Code sent, ${where}`,
	);
}

registerContextTests({
	id: "context-qwen",
	agent: "Qwen Code",
	edgeTitle: "documented edge cases: promptinclude context --agent qwen-code prints exactly the context Qwen Code sends",
	edgeCases: EDGE_CASES,
	genCase,
	runCase,
	caseMs: 60000,
	cases: CASES,
	agentPath: QWEN,
	bin: BIN,
	scratch,
	start: async () => (mock = await startMock({ maxRequests: (CASES + EDGE_CASES.length) * 8 + 100 })),
	summary: () => `${stats.cases} cases run in all: ${stats.context} with context files, ${stats.rules} with rules, ${stats.imports} with imports inlined, ${stats.none} with none; mismatches: ${stats.mismatches.join(", ") || "none"}`,
});
