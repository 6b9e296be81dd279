// Differential end-to-end test of `promptinclude context --agent copilot-cli`
// against the real GitHub Copilot CLI (the version pinned in package.json).
//
// Every case is a directory tree (a random monorepo, or one of the
// documented edge cases of Copilot CLI's instructions): `copilot -p PROMPT`
// runs in the case's cwd with HOME in the case, offline (COPILOT_OFFLINE),
// its model an OpenAI-compatible endpoint mocked on 127.0.0.1 (BYOK), its
// unpacked runtime shared between cases (XDG_CACHE_HOME). Copilot puts the
// instructions into its system prompt between its tools (`</tools>`) and
// its notifications (`<system_notifications>`); that stretch, less the one
// line feed of its own, must equal, byte for byte, what
//   promptinclude context --agent copilot-cli --cwd CWD --home HOME --raw
// prints (nothing, when Copilot sends no instruction). The run is repeated
// and narrowed with the variables context-harness.mjs lists; the seed is
// printed as `# context-copilot seed: N`.
//
// The generator varies what the model's rules (docs/agents-context.md)
// turn on: AGENTS.md, CLAUDE.md, GEMINI.md, .github/copilot-instructions.md
// and .claude/CLAUDE.md at the root, the cwd, between them, above and
// below; `.git` as a repository, a gitdir file, a directory without one, at
// the root, deeper or missing; instruction files (.github/instructions,
// .claude/rules) with every `applyTo`/`paths` form (front matter that is
// not YAML too), descriptions, nested
// directories and names Copilot does not read; the global file; the same
// text in two files; empty, blank, BOM, CRLF and invalid-UTF-8 texts;
// files that are directories, links in and out, dangling links; a cwd
// reached through a link; `@path` imports in every file, in the forms
// Copilot inlines and the ones it leaves as text (in code, after a word,
// absolute, outside the repository), nested, repeated, in cycles and
// deeper than it follows, of files that are links, directories, empty,
// invalid UTF-8 or hold its own tags.
//
// Not generated, on purpose: FIFOs, unreadable files (root reads them),
// COPILOT_HOME and the `--add-dir` directories; a `.git` directory with a
// HEAD but not a repository, and a gitdir file naming nothing, where
// Copilot's answer depends on more than the model knows (docs).

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertAuditChain, assertSameBytes, asValue, caseDir, casesOr, cwdMaybeThroughLink, formatSpec, genPath, join, newCase, registerContextTests, runContext, SEED, utf8, whereCase, withInvalidUtf8, writeTree } from "./context-harness.mjs";
import { BIN, MODULES, run } from "./helpers.mjs";
import { contentText, startMock } from "./mock-chat.mjs";
import { COPILOT_CACHE, COPILOT_FLAGS, copilotEnv } from "./sessions.mjs";

const COPILOT = path.join(MODULES, ".bin/copilot");
console.log(`context-copilot seed: ${SEED}`); // TAP shows it as `# context-copilot seed: N`

// Forty random cases unless PROMPTINCLUDE_CONTEXT_CASES says: a session
// takes two to three seconds, and CI runs all the agents' differentials.
const CASES = casesOr(40);

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-context-copilot-")));
let mock;

// ---------------------------------------------------------------------------
// A case spec: { files, cwd }

const PLAIN_NAMES = ["packages", "app", "src", "lib", "a", "b", "x.y"];
const EXOTIC_NAMES = ["dir with space", "\u00e9t\u00e9", "\u6df1\u3044", "\u{1F600}"];
const WORDS = ["use", "tabs", "rule", "go", "fmt", "\u00e9", "\u6df1", "`code`", "<custom_instruction>"];
const INVALID = ["ff", "c3", "e282", "eda080", "80"];
const CUSTOM = ["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md", ".claude/CLAUDE.md", "agents.md"];
const APPLY = [
	[20, null],
	[12, "applyTo: '**'"],
	[8, 'applyTo: "**/*"'],
	[16, 'applyTo: "src/**/*.ts"'],
	[10, 'applyTo: "**/*.ts, **/*.js"'],
	[10, "applyTo:\n  - a/**\n  - b/**"],
	[8, "description: no pattern"],
	[8, 'applyTo: "*.py"\ndescription: Python files'],
	[8, "applyTo: **"],
	[4, "applyTo: [bad"],
	[4, "applyTo: 5"],
	[4, "bad: a: b\napplyTo: 'src/**' # c\ndescription: lost"],
];
const PATHS = [
	[30, null],
	[15, 'paths: "**"'],
	[20, "paths:\n  - src/**\n  - lib/**"],
	[15, 'paths: "**/*.py"'],
	[10, "description: a rule"],
	[10, "paths: []"],
	[5, "paths: [bad"],
	[4, "bad: a: b\npaths: \"lib/**\""],
	[3, "\tpaths: x/**"],
	[3, "paths: {a: b}"],
];

/** Random text labelled `label`. */
function genText(rng, label) {
	const kind = rng.weighted([
		[74, "text"],
		[8, "blank"],
		[8, "empty"],
		[6, "invalid"],
		[4, "bom-only"],
	]);
	if (kind === "empty") return Buffer.alloc(0);
	if (kind === "bom-only") return Buffer.from("efbbbf", "hex");
	if (kind === "blank") return utf8(rng.pick([" ", "\n", "\n\n  \n", "\t\n", "\r\n"]));
	const nl = rng.chance(0.2) ? "\r\n" : "\n";
	const words = (n) => Array.from({ length: n }, () => rng.pick(WORDS)).join(" ");
	let text = `${rng.chance(0.12) ? "\ufeff" : ""}${label} ${words(rng.int(0, 4))}`;
	for (let i = rng.int(0, 2); i > 0; i--) text += `${nl}${words(rng.int(1, 5))}`;
	if (rng.chance(0.75)) text += nl;
	let buf = utf8(text);
	if (kind === "invalid") buf = withInvalidUtf8(rng, buf, INVALID);
	return buf;
}

/** `text` (bytes) with `more` (a string) before its last line feed, if any. */
function withImports(text, more) {
	if (!more) return text;
	const end = text.length && text[text.length - 1] === 0x0a ? text.length - 1 : text.length;
	return Buffer.concat([text.subarray(0, end), utf8(more), text.subarray(end)]);
}

/**
 * The files `@path` imports may name (under tree/imp, some importing each
 * other, a chain deeper than Copilot follows, links in and out, beside the
 * cwd and outside the tree); returns a function giving, for the file at
 * `p`, a few imports of them (or none) in the forms Copilot reads and the
 * forms it does not.
 */
function genImports(rng, put, label, serial, cwdDir) {
	if (!rng.chance(0.75)) return () => "";
	const targets = [];
	const importText = (dir, others) => {
		const kind = rng.weighted([
			[70, "text"],
			[6, "empty"],
			[6, "invalid"],
			[8, "tags"],
			[10, "fence"],
		]);
		if (kind === "empty") return "";
		if (kind === "invalid") return { hex: `${utf8(label()).toString("hex")}ff0a` };
		let t = `${rng.chance(0.1) ? "\ufeff" : ""}${label()}`;
		if (kind === "tags") t += " </imported_custom_instruction> <imported_custom_instruction x>";
		for (const o of others) if (rng.chance(0.5)) t += ` @${path.posix.relative(dir, o) || "."}`;
		if (kind === "fence") t += `\n\`\`\`\n@${path.posix.relative(dir, rng.pick(others.length ? others : ["tree/imp/none.md"]))}\n\`\`\``;
		return t + rng.pick(["", "\n", "\n  \n", "\r\n", " \u00a0"]);
	};
	const n = rng.int(1, 4);
	const pool = Array.from({ length: n }, (_, k) => `tree/imp/t${k}.md`);
	for (const t of pool) put(t, importText("tree/imp", pool.filter((o) => o !== t)));
	targets.push(...pool);
	if (rng.chance(0.3)) {
		const chain = Array.from({ length: rng.int(8, 10) }, (_, k) => `tree/imp/deep/d${k}.md`);
		chain.forEach((d, k) => put(d, `${label()} @${k + 1 < chain.length ? `d${k + 1}.md` : "d0.md"}\n`));
		targets.push(chain[0]);
	}
	if (rng.chance(0.4)) {
		const note = `${cwdDir}/notes/n${serial()}.md`;
		put(note, `${label()}\n`);
		targets.push(note);
	}
	const near = rng.chance(0.4) ? `${cwdDir}/near${serial()}.md` : null;
	if (near) {
		put(near, `${label()} @${path.posix.relative(cwdDir, pool[0])}\n`);
		targets.push(near);
	}
	if (rng.chance(0.3)) {
		put("out/o.md", `${label()}\n`);
		targets.push("out/o.md");
	}
	if (rng.chance(0.3)) {
		put("tree/imp/in-link.md", { symlink: `$BASE/${pool[0]}` });
		targets.push("tree/imp/in-link.md");
	}
	if (rng.chance(0.2)) {
		put("out/linked.md", `${label()}\n`);
		put("tree/imp/out-link.md", { symlink: "$BASE/out/linked.md" });
		targets.push("tree/imp/out-link.md");
	}
	if (rng.chance(0.15)) {
		put("tree/imp/folder.md", { dir: true });
		targets.push("tree/imp/folder.md");
	}
	targets.push("tree/imp/missing.md");
	return (p) => {
		if (!rng.chance(0.6)) return "";
		const dir = path.posix.dirname(p.startsWith("out/") ? "tree/x" : p);
		let out = "";
		for (let i = rng.int(1, 3); i > 0; i--) {
			const target = rng.pick(targets);
			let rel = path.posix.relative(dir, target);
			if (rng.chance(0.15) && !rel.startsWith("..")) rel = `./${rel}`;
			out += rng.weighted([
				[40, ` @${rel}`],
				[8, ` (@${rel})`],
				[8, ` @${rel}.`],
				[6, `\n- @${rel}, then`],
				[8, ` \`@${rel}\``],
				[5, ` me@${rel}`],
				[6, `\n\`\`\`\n@${rel}\n\`\`\`\n`],
				[5, ` @$BASE/${target}`],
				[4, ` @~/${rel}`],
				[10, ` @${rel} @${rel}`],
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

	// The repository: a `.git` Copilot takes, or one it passes over.
	const putGit = (d) => {
		const kind = rng.weighted([
			[60, "repo"],
			[12, "gitdir-repo"],
			[8, "garbage-file"],
			[10, "empty-dir"],
			[10, "dangling"],
		]);
		const at = join(d, ".git");
		if (kind === "repo") put(at, { gitInit: true });
		else if (kind === "garbage-file") put(at, "garbage\n");
		else if (kind === "empty-dir") put(at, { dir: true });
		else if (kind === "dangling") put(at, { symlink: "nowhere" });
		else {
			const real = `real${serial()}`;
			put(`${real}/.git`, { gitInit: true });
			put(at, `gitdir: $BASE/${real}/.git\n`);
		}
	};
	const places = rng.weighted([
		[15, []],
		[50, ["tree"]],
		[10, [rng.pick(pathDirs)]],
		[8, [cwdDir]],
		[17, ["tree", rng.pick(pathDirs)]],
	]);
	for (const d of new Set(places)) putGit(d);

	const importTo = genImports(rng, put, label, serial, cwdDir);
	const texts = [];
	const text = (p) => {
		if (texts.length && rng.chance(0.12)) return rng.pick(texts);
		const t = asValue(withImports(genText(rng, label()), importTo(p)));
		texts.push(t);
		return t;
	};
	const entry = (p, content = text) => {
		const kind = rng.weighted([
			[86, "text"],
			[5, "symlink"],
			[4, "dangling"],
			[5, "dir"],
		]);
		if (kind === "text") return put(p, content(p));
		if (kind === "dir") return put(p, { dir: true });
		if (kind === "dangling") return put(p, { symlink: "nowhere.md" });
		const t = `out/l${serial()}.md`;
		put(t, content(p));
		put(p, { symlink: `$BASE/${t}` });
	};
	const dirs = [".", ...pathDirs, ...offDirs];
	for (const d of dirs) {
		if (!rng.chance(d === "." ? 0.2 : pathDirs.includes(d) ? 0.6 : 0.4)) continue;
		for (const name of CUSTOM) if (rng.chance(name === "agents.md" ? 0.08 : 0.3)) entry(join(d, name));
	}
	// Instruction files, where Copilot reads them and where it does not.
	const instructionText = (front) => (p) => {
		const body = withImports(genText(rng, label()), importTo(p)).toString("latin1");
		return asValue(Buffer.from(front === null ? body : `---\n${front}\n---\n${body}`, "latin1"));
	};
	for (const d of new Set([...(rng.chance(0.6) ? ["tree"] : []), ...(rng.chance(0.4) ? [cwdDir] : []), ...(rng.chance(0.2) ? [rng.pick(pathDirs)] : [])])) {
		for (let i = rng.int(1, 3); i > 0; i--) {
			const sub = rng.chance(0.25) ? `${rng.pick(["z", "a", "deep/er"])}/` : "";
			entry(join(d, `.github/instructions/${sub}i${serial()}.instructions.md`), instructionText(rng.weighted(APPLY)));
		}
		if (rng.chance(0.2)) put(join(d, `.github/instructions/notes${serial()}.md`), "not an instruction file\n");
		for (let i = rng.int(0, 2); i > 0; i--) {
			const sub = rng.chance(0.2) ? "sub/" : "";
			entry(join(d, `.claude/rules/${sub}r${serial()}.md`), instructionText(rng.weighted(PATHS)));
		}
	}
	if (rng.chance(0.4)) entry("home/.copilot/copilot-instructions.md");
	const cwd = cwdMaybeThroughLink(rng, put, route, 0.08);
	return { files, cwd };
}

// ---------------------------------------------------------------------------
// The documented edge cases (docs/agents-context.md), each a named case.

const edge = (name, spec) => ({ name: `edge-${name}`, spec: { files: {}, cwd: "tree", ...spec } });
const git = { "tree/.git": { gitInit: true } };
const all = (d, tag) => Object.fromEntries(["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md", ".claude/CLAUDE.md"].map((n) => [join(d, n), `${n} ${tag}\n`]));
const EDGE_CASES = [
	edge("order-root-cwd-between", { files: { ...git, ...all("tree", "ROOT"), ...all("tree/a", "A"), ...all("tree/a/b", "B"), ...all("tree/a/b/c", "C"), "home/.copilot/copilot-instructions.md": "GLOBAL\n" }, cwd: "tree/a/b/c" }),
	edge("no-repository-only-the-cwd", { files: { ...all("tree", "ROOT"), ...all("tree/a", "A"), "home/.copilot/copilot-instructions.md": "GLOBAL\n" }, cwd: "tree/a" }),
	edge("gitdir-file-is-a-root", { files: { "real/.git": { gitInit: true }, "tree/.git": "gitdir: $BASE/real/.git\n", "tree/AGENTS.md": "ROOT\n", "tree/a/AGENTS.md": "A\n" }, cwd: "tree/a" }),
	edge("empty-git-dir-is-passed-over", { files: { ...git, "tree/a/.git": { dir: true }, "tree/AGENTS.md": "ROOT\n", "tree/a/b/AGENTS.md": "B\n" }, cwd: "tree/a/b" }),
	edge("other-git-file-no-repository", { files: { ...git, "tree/a/.git": "garbage\n", "tree/AGENTS.md": "ROOT\n", "tree/a/b/AGENTS.md": "B\n", "home/.copilot/copilot-instructions.md": "GLOBAL\n" }, cwd: "tree/a/b" }),
	edge("global-not-utf8-left-out", { files: { ...git, "home/.copilot/copilot-instructions.md": { hex: "6261642eff0a" }, "tree/.github/copilot-instructions.md": { hex: "67682eff0a" } } }),
	edge("same-text-once", { files: { ...git, "tree/AGENTS.md": "same\n", "tree/a/CLAUDE.md": "same\n", "tree/a/GEMINI.md": "same\n\n" }, cwd: "tree/a" }),
	edge("texts-as-read", { files: { ...git, "tree/AGENTS.md": "", "tree/CLAUDE.md": "  \n", "tree/GEMINI.md": { hex: "efbbbf626f6d0d0a78ff0a" }, "tree/a/AGENTS.md": "no line feed" }, cwd: "tree/a" }),
	edge("unreadable-names", { files: { ...git, "tree/AGENTS.md": { dir: true }, "tree/CLAUDE.md": { symlink: "$BASE/out/t.md" }, "out/t.md": "TARGET\n", "tree/GEMINI.md": { symlink: "nowhere" } } }),
	edge("instruction-files", {
		files: {
			...git,
			"tree/AGENTS.md": "AG\n",
			"tree/.github/instructions/a/n.instructions.md": "---\ndescription: no apply\n---\nno applyTo\n",
			"tree/.github/instructions/q.instructions.md": "---\napplyTo: '**'\n---\nall\n",
			"tree/.github/instructions/l.instructions.md": "---\napplyTo:\n  - a/**\n  - b/**\n---\nlist\n",
			"tree/.github/instructions/z/c.instructions.md": '---\napplyTo: "**/*.ts, **/*.js"\ndescription: TS and JS\n---\ncomma\n',
			"tree/.github/instructions/other.md": "not read\n",
			"tree/.claude/rules/two.md": "---\npaths:\n  - src/**\n  - lib/**\n---\ntwo\n",
			"tree/.claude/rules/sub/n.md": "nested\n",
			"tree/.claude/rules/star.md": '---\npaths: "**"\n---\nstar\n',
		},
		cwd: "tree/x",
	}),
	edge("instructions-of-root-and-cwd-not-between", { files: { ...git, "tree/.github/instructions/r.instructions.md": "root\n", "tree/a/.github/instructions/m.instructions.md": "between\n", "tree/a/b/.github/instructions/c.instructions.md": "cwd\n", "tree/a/b/.claude/rules/c.md": "cwd rule\n" }, cwd: "tree/a/b" }),
	edge("table-only", { files: { ...git, "tree/.github/instructions/o.instructions.md": '---\napplyTo: "*.py"\n---\nscoped\n' } }),
	edge("cwd-through-a-link", { files: { ...git, "tree/a/AGENTS.md": "A\n", jump: { symlink: "tree" } }, cwd: "jump/a" }),
	edge("nothing", { files: { ...git, "tree/README.md": "x\n" } }),
	edge("import-forms", {
		files: {
			...git,
			"tree/CLAUDE.md": "C @a.md, (@b.md) `@c.md` me@d.md @e.md. @noext @./a.md\n```\n@f.md\n```\n``x ` @f.md `` @f.md\n",
			"tree/GEMINI.md": "G @a.md\n",
			"tree/.github/copilot-instructions.md": "R @g.md @../a.md\n",
			"home/.copilot/copilot-instructions.md": "U @h.md @../x.md\n",
			...Object.fromEntries(["a", "b", "c", "d", "e", "f"].map((n) => [`tree/${n}.md`, `${n.toUpperCase()}\n`])),
			"tree/noext": "NOEXT\n",
			"tree/.github/g.md": "GH\n",
			"home/.copilot/h.md": "HOME\n",
			"home/x.md": "OUTSIDE\n",
		},
	}),
	edge("import-nesting", {
		files: {
			...git,
			"tree/AGENTS.md": "A @imp/c1.md @imp/d0.md @imp/c1.md\n",
			"tree/imp/c1.md": "C1 @c2.md\n",
			"tree/imp/c2.md": "C2 @c1.md @../AGENTS.md\n",
			...Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`tree/imp/d${k}.md`, `D${k} @d${k + 1}.md\n`])),
		},
	}),
	edge("import-what-is-inlined", {
		files: {
			...git,
			"tree/a/CLAUDE.md": "@../up.md @../../out.md @$BASE/tree/up.md @~/x.md @in.md @out.md @dir.md @bad.md @tags.md @space.md @empty.md\n",
			"tree/up.md": "UP\n",
			"out.md": "OUT\n",
			"tree/a/in.md": { symlink: "$BASE/tree/up.md" },
			"tree/a/out.md": { symlink: "$BASE/out.md" },
			"tree/a/dir.md": { dir: true },
			"tree/a/bad.md": { hex: "6261642eff0a" },
			"tree/a/tags.md": "\ufeffT </imported_custom_instruction> <imported_custom_instruction x>\r\n",
			"tree/a/space.md": "\n  lead\t \n\u00a0\n",
			"tree/a/empty.md": "",
		},
		cwd: "tree/a",
	}),
];

// ---------------------------------------------------------------------------
// Running a case.

/** Builds the case under `base`; returns { cwd, home, env } (env without PATH). */
function materialize(base, spec) {
	writeTree(base, spec);
	const home = path.join(base, "home");
	fs.mkdirSync(home, { recursive: true });
	const cwd = path.join(base, spec.cwd);
	fs.mkdirSync(cwd, { recursive: true });
	return { cwd, home, env: { HOME: home } };
}

const TOOLS_END = "</tools>\n\n";
const NOTIFICATIONS = "<system_notifications>";
const stats = { cases: 0, none: 0, custom: 0, table: 0, imported: 0, repeated: 0, mismatches: [] };

async function runCase(name, spec) {
	const base = caseDir(scratch, name);
	const { cwd, home, env } = materialize(base, spec);
	const prompt = `CTX-PROMPT-${SEED}-${name}-END`;
	const context = (format) => runContext({ bin: BIN, agent: "copilot-cli", cwd, home, env, scratch }, format);
	const [pi, json] = [await context("--raw"), await context("--json")];
	const session = await run(COPILOT, ["-p", prompt, ...COPILOT_FLAGS], { cwd, env: { PATH: process.env.PATH, TERM: "dumb", NO_COLOR: "1", ...copilotEnv(`${mock.url}/v1`), ...env } });
	const where = whereCase(name, base);
	assert.equal(session.status, 0, `copilot -p failed, ${where}\nspec ${formatSpec(spec)}\n${session.stderr.slice(-3000)}`);
	const main = mock.requests.find((r) => (r.body?.messages ?? []).some((m) => m.role !== "system" && contentText(m.content).includes(prompt)));
	assert.ok(main, `no model request carries the prompt, ${where}`);
	const system = contentText(main.body.messages.find((m) => m.role === "system")?.content);
	main.body = undefined; // the mock keeps every request; these are large
	const from = system.indexOf(TOOLS_END);
	const to = system.indexOf(NOTIFICATIONS, from);
	assert.ok(from >= 0 && to > from, `no instructions place in the system prompt, ${where}`);
	const region = system.slice(from + TOOLS_END.length, to);
	assert.ok(region.endsWith("\n"), `the instructions do not end with a line feed, ${where}: ${JSON.stringify(region.slice(-200))}`);
	const block = region.slice(0, -1);
	const sent = block ? utf8(block) : null;

	stats.cases++;
	if (!sent) stats.none++;
	if (block.includes("<custom_instruction>")) stats.custom++;
	if (block.includes("| Pattern | File Path | Description |")) stats.table++;
	if (block.includes("<imported_custom_instruction source=")) stats.imported++;
	if (block.includes('skipped="already-loaded"')) stats.repeated++;
	if (!(pi.status === 0 && pi.stdout.equals(sent ?? Buffer.alloc(0)))) stats.mismatches.push(name);
	assertSameBytes({ pi, sent, agent: "Copilot CLI", where, spec, paths: `$BASE=${base} cwd=${cwd} home=${home}` });
	await assertAuditChain({ bin: BIN, agent: "copilot-cli", base, cwd, home, env, sent, where });
	assert.equal(json.status, 0, json.stderr);
	const doc = JSON.parse(json.stdout.toString("utf8"));
	assert.deepEqual(
		doc.parts.map((p) => ({ place: p.place, text: p.text })),
		sent ? [{ place: "system_prompt", text: block }] : [],
		`the JSON parts differ from what Copilot CLI sent, ${where}`,
	);
}

registerContextTests({
	id: "context-copilot",
	agent: "Copilot CLI",
	edgeTitle: "documented edge cases: promptinclude context --agent copilot-cli prints exactly the instructions Copilot CLI sends",
	edgeCases: EDGE_CASES,
	genCase,
	runCase,
	caseMs: 60000,
	cases: CASES,
	agentPath: COPILOT,
	bin: BIN,
	scratch,
	start: async () => {
		fs.mkdirSync(COPILOT_CACHE, { recursive: true });
		return (mock = await startMock({ maxRequests: (CASES + EDGE_CASES.length) * 6 + 100 }));
	},
	summary: () => `${stats.cases} cases run in all: ${stats.custom} with custom instructions, ${stats.table} with a table of scoped files, ${stats.imported} with imports inlined (${stats.repeated} with one already loaded), ${stats.none} with none; mismatches: ${stats.mismatches.join(", ") || "none"}`,
});
