// Differential end-to-end test of `promptinclude context --agent gemini`
// against the real Gemini CLI (the version pinned in package.json).
//
// Every case is a directory tree (a random monorepo, or one of the
// documented edge cases of Gemini CLI's context files): `gemini -p PROMPT`
// runs in the case's cwd with HOME in the case, GEMINI_API_KEY set, the
// Gemini API mocked on 127.0.0.1 (GOOGLE_GEMINI_BASE_URL) and the folder
// trusted (GEMINI_CLI_TRUST_WORKSPACE=true). Gemini CLI sends the context
// in two places: the global files at the end of the system instruction,
// the project files in the first user message's <session_context>.
//   promptinclude context --agent gemini --cwd CWD --home HOME --json
// must list exactly those parts (in that order, each byte for byte, each
// found once in its place and nowhere else), and `--raw` must print them
// joined by a blank line. The run is repeated and narrowed with the
// variables context-harness.mjs lists; the seed is printed as
// `# context-gemini seed: N`.
//
// The generator varies what the model's rules (docs/agents-context.md)
// turn on: GEMINI.md and `context.fileName` names (string or list, user or
// workspace settings) along, above, off and below the cwd's path; `.git`
// (a repository, a file, missing) at the root, deeper or above, and custom
// `memoryBoundaryMarkers`; global files; `@` imports that resolve, fail,
// leave the boundary, loop, repeat, go too deep, sit in code spans or
// after other characters, name directories; blank, BOM, CRLF and
// invalid-UTF-8 texts; symlinked files and a cwd through a symlink; the
// "flat" import format.
//
// Not generated, on purpose: FIFOs (Gemini CLI blocks on them), unreadable
// files (root reads them), extensions, includeDirectories, private project
// memory, and `%` in import paths.

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertAuditChain, assertSameBytes, asValue, caseDir, CASES, cwdMaybeThroughLink, formatSpec, genPath, join, newCase, registerContextTests, runContext, SEED, utf8, whereCase, withInvalidUtf8, writeTree } from "./context-harness.mjs";
import { BIN, MODULES, occurrences, run } from "./helpers.mjs";
import { mainRequest, startMock } from "./mock-gemini.mjs";
import { GEMINI_SETTINGS } from "./sessions.mjs";

const GEMINI = path.join(MODULES, ".bin/gemini");
console.log(`context-gemini seed: ${SEED}`); // TAP shows it as `# context-gemini seed: N`

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-context-gemini-")));
let mock;

// ---------------------------------------------------------------------------
// A case spec: { files, cwd, settings: {fileName?, memoryBoundaryMarkers?, importFormat?}, workspaceSettings }

const PLAIN_NAMES = ["packages", "app", "src", "lib", "Ab", "ab", "a", "x.y"];
const EXOTIC_NAMES = ["dir with space", "\u00e9t\u00e9", "\u6df1\u3044", "\u{1F600}"];
const WORDS = ["use", "tabs", "rule", "go", "fmt", "\u00e9", "\u6df1", "`code`", "mail@example.com"];
const INVALID = ["ff", "c3", "e282", "eda080", "80"];

/** Random text with `imports` placed in it. */
function genText(rng, label, imports) {
	const kind = rng.weighted([
		[76, "text"],
		[8, "blank"],
		[5, "empty"],
		[6, "invalid"],
		[2, "large"],
	]);
	if (kind === "empty") return Buffer.alloc(0);
	if (kind === "blank") return utf8(rng.pick([" ", "\n", "\n\n  \n", "\t\n", "\u3000", "\r\n", "\ufeff"]));
	const nl = rng.chance(0.2) ? "\r\n" : "\n";
	const words = (n) => Array.from({ length: n }, () => rng.pick(WORDS)).join(" ");
	let text = `${rng.chance(0.1) ? "\ufeff" : ""}${rng.chance(0.1) ? "\n " : ""}${label} ${words(rng.int(0, 4))}`;
	for (const imp of imports) {
		const form = rng.weighted([
			[50, "line"],
			[20, "inline"],
			[8, "codespan"],
			[6, "fence"],
			[6, "glued"],
			[5, "tab"],
			[5, "punct"],
		]);
		text += {
			line: `${nl}${imp}`,
			inline: ` ${words(1)} ${imp} ${words(1)}`,
			codespan: ` \`see ${imp}\``,
			fence: `${nl}\`\`\`${nl}${imp}${nl}\`\`\``,
			glued: ` x${imp}`,
			tab: `\t${imp}`,
			punct: ` ${imp}.`,
		}[form];
	}
	if (kind === "large") text += ` ${"word ".repeat(rng.int(20_000, 60_000))}`;
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

	// Boundary markers.
	const markers = rng.weighted([
		[75, undefined],
		[10, [".hg"]],
		[8, [".git", "ROOT"]],
		[7, []],
	]);
	const gitValue = () => rng.weighted([
		[60, { gitInit: true }],
		[20, "gitdir: /nowhere\n"],
		[10, { dir: true }],
		[10, { symlink: "nowhere" }],
	]);
	const place = rng.weighted([
		[20, "none"],
		[45, "root"],
		[20, "deeper"],
		[8, "above"],
		[7, "cwd"],
	]);
	const markerName = markers?.length ? rng.pick(markers) : ".git";
	const putMarker = (d) => {
		if (markerName === ".git") put(join(d, ".git"), gitValue());
		else put(join(d, markerName), markerName === ".hg" ? { dir: true } : "x\n");
	};
	if (place === "root") putMarker("tree");
	if (place === "deeper" && pathDirs.length > 1) putMarker(rng.pick(pathDirs.slice(1)));
	if (place === "above") putMarker(".");
	if (place === "cwd") putMarker(cwdDir);

	// File names.
	const fileName = rng.weighted([
		[60, undefined],
		[12, "AGENTS.md"],
		[10, ["CONTEXT.md", "AGENTS.md"]],
		[6, [" AGENTS.md ", "GEMINI.md", "AGENTS.md"]],
		[6, "./NOTES.md"],
		[6, []],
	]);
	const names = [...new Set([...(fileName === undefined ? [] : [fileName].flat().map((n) => path.posix.normalize(n.trim())).filter((n) => n)), "GEMINI.md"])];
	const importFormat = rng.chance(0.08) ? "flat" : undefined;

	// Import targets.
	const targetDirs = [cwdDir, ...pathDirs, ...offDirs, "out", "tree/docs"];
	const targets = [];
	const newTarget = () => {
		const p = `${rng.pick(targetDirs)}/${rng.pick(["t", "notes", "x.y"])}${targets.length + 1}${rng.pick([".md", ".md", ".txt", ""])}`;
		targets.push(p);
		return p;
	};
	const importsFor = (fileDir) => {
		const out = [];
		for (let i = rng.weighted([
			[55, 0],
			[25, 1],
			[12, 2],
			[8, 3],
		]); i > 0; i--) {
			const target = rng.chance(0.12) ? `${fileDir}/missing${i}.md` : rng.chance(0.06) ? rng.pick(pathDirs) : targets.length && rng.chance(0.5) ? rng.pick(targets) : newTarget();
			const rel = path.posix.relative(fileDir, target) || ".";
			out.push(
				rng.weighted([
					[55, `@${rel.startsWith(".") ? rel : `./${rel}`}`],
					[20, `@${rel}`],
					[12, `@$BASE/${target}`],
					[5, `@${rel}#frag`],
					[4, "@https://example.com/x.md"],
					[4, `@1${rel}`],
				]),
			);
		}
		return out.filter((i) => !i.includes(" ") || rng.chance(0.3));
	};
	const text = (p) => asValue(genText(rng, label(), importsFor(path.posix.dirname(p))));
	const entry = (p) => {
		const kind = rng.weighted([
			[88, "text"],
			[5, "symlink"],
			[3, "dangling"],
			[4, "dir"],
		]);
		if (kind === "text") return put(p, text(p));
		if (kind === "dir") return put(p, { dir: true });
		if (kind === "dangling") return put(p, { symlink: "nowhere.md" });
		const t = rng.chance(0.5) ? `out/l${serial()}.md` : `${cwdDir}/linked${serial()}.md`;
		put(t, text(t));
		put(p, { symlink: `$BASE/${t}` });
	};
	const dirs = [".", ...pathDirs, ...offDirs];
	for (const d of dirs) {
		if (!rng.chance(d === "." ? 0.15 : pathDirs.includes(d) ? 0.6 : 0.4)) continue;
		for (const name of [...names, "GEMINI.md", "AGENTS.md", "gemini.md"]) if (rng.chance(0.45) && !files[join(d, name)]) entry(join(d, name));
	}
	// Global files.
	for (const name of [...names, "AGENTS.md"]) if (rng.chance(0.3)) entry(`home/.gemini/${name}`);
	for (const t of targets) if (!(t in files)) put(t, rng.chance(0.05) ? { dir: true } : text(t));

	const settings = {};
	if (fileName !== undefined) settings.fileName = fileName;
	if (markers !== undefined) settings.memoryBoundaryMarkers = markers;
	if (importFormat) settings.importFormat = importFormat;
	// Sometimes the workspace's settings carry them (they replace the user's).
	const inWorkspace = rng.chance(0.15);
	const cwd = cwdMaybeThroughLink(rng, put, route, 0.08);
	return { files, cwd, settings: inWorkspace ? {} : settings, workspaceSettings: inWorkspace ? settings : null };
}

// ---------------------------------------------------------------------------
// The documented edge cases (docs/agents-context.md), each a named case.

const edge = (name, spec) => ({ name: `edge-${name}`, spec: { files: {}, cwd: "tree", settings: {}, workspaceSettings: null, ...spec } });
const git = { "tree/.git": { gitInit: true } };
const EDGE_CASES = [
	edge("project-walk-to-git-root", { files: { ...git, "tree/GEMINI.md": "ROOT\n", "tree/a/GEMINI.md": "A\n", "GEMINI.md": "ABOVE\n", "tree/a/b/child/GEMINI.md": "BELOW\n" }, cwd: "tree/a/b" }),
	edge("no-git-only-cwd", { files: { "tree/GEMINI.md": "ROOT\n", "tree/a/GEMINI.md": "A\n" }, cwd: "tree/a" }),
	edge("git-file-is-a-boundary", { files: { "tree/a/.git": "gitdir: /nowhere\n", "tree/GEMINI.md": "OUT\n", "tree/a/GEMINI.md": "A\n" }, cwd: "tree/a" }),
	edge("sorted-as-strings", { files: { ...git, "tree/GEMINI.md": "T\n", "tree/Ab/GEMINI.md": "AB\n", "tree/ab/GEMINI.md": "ab\n" }, cwd: "tree/ab" }),
	edge("global-in-system-instruction", { files: { ...git, "home/.gemini/GEMINI.md": "GLOBAL\n", "tree/GEMINI.md": "P\n" } }),
	edge("file-name-list", { files: { ...git, "tree/AGENTS.md": "AG\n", "tree/GEMINI.md": "GE\n", "tree/CONTEXT.md": "CO\n", "home/.gemini/AGENTS.md": "GA\n" }, settings: { fileName: ["CONTEXT.md", "AGENTS.md"] } }),
	edge("workspace-settings-replace", { files: { ...git, "tree/AGENTS.md": "AG\n", "tree/NOTES.md": "NO\n" }, settings: { fileName: "AGENTS.md" }, workspaceSettings: { fileName: "NOTES.md" } }),
	edge("trimmed-and-blank", { files: { ...git, "tree/GEMINI.md": "\ufeff\n  X  \r\n\n", "tree/a/GEMINI.md": " \n\t" }, cwd: "tree/a" }),
	edge("line-feed-runs", { files: { ...git, "home/.gemini/GEMINI.md": "G\n\n\n\nH\r\n\n\n\n@./i.md\n", "home/.gemini/i.md": "\n\n  \n", "tree/GEMINI.md": "P\n\n\n\nQ\n" } }),
	edge("invalid-utf8", { files: { ...git, "tree/GEMINI.md": { hex: "41ff0d0a42" } } }),
	edge("imports", { files: { ...git, "tree/GEMINI.md": "@./a.md and @b.md\n`@./a.md` x@./a.md @./missing.md @../out.md\n", "tree/a.md": "A @./c.md\n", "tree/b.md": "B\n", "tree/c.md": "C\n", "out.md": "OUT\n" } }),
	edge("import-cycle-and-self", { files: { ...git, "tree/GEMINI.md": "@./GEMINI.md @./a.md\n", "tree/a.md": "A @./b.md\n", "tree/b.md": "B @./a.md\n" } }),
	edge("import-depth", { files: { ...git, "tree/GEMINI.md": "@./1.md\n", "tree/1.md": "1 @./2.md", "tree/2.md": "2 @./3.md", "tree/3.md": "3 @./4.md", "tree/4.md": "4 @./5.md", "tree/5.md": "5 @./6.md", "tree/6.md": "6 @./7.md", "tree/7.md": "7" } }),
	edge("import-errors", { files: { ...git, "tree/GEMINI.md": "@./dir @./f.md/x @https://x.y/z.md @./loop.md\n", "tree/dir": { dir: true }, "tree/f.md": "F\n", "tree/loop.md": { symlink: "loop.md" } } }),
	edge("import-through-link-out", { files: { ...git, "tree/GEMINI.md": "@./l.md\n", "tree/l.md": { symlink: "$BASE/out/x.md" }, "out/x.md": "X\n" } }),
	edge("flat-imports", { files: { ...git, "tree/GEMINI.md": "R @./a.md @./b.md\n", "tree/a.md": "A @./b.md\n", "tree/b.md": "B\n" }, settings: { importFormat: "flat" } }),
	edge("symlinked-cwd-and-file", { files: { ...git, "tree/a/GEMINI.md": { symlink: "$BASE/out/g.md" }, "out/g.md": "LINKED\n", jump: { symlink: "tree" } }, cwd: "jump/a" }),
	edge("same-file-twice", { files: { ...git, "tree/GEMINI.md": "ONE\n", "tree/a/GEMINI.md": { symlink: "$BASE/tree/GEMINI.md" } }, cwd: "tree/a" }),
	edge("cwd-is-home", { files: { "home/GEMINI.md": "HOMEPROJ\n", "home/.gemini/GEMINI.md": "HOMEGLOBAL\n", "home/.git": { dir: true } }, cwd: "home" }),
	edge("nothing", { files: { ...git, "tree/README.md": "x\n" } }),
];

// ---------------------------------------------------------------------------
// Running a case.


/** Builds the case under `base`; returns { cwd, home, env } (env without PATH). */
function materialize(base, spec) {
	writeTree(base, spec);
	const home = path.join(base, "home");
	fs.mkdirSync(path.join(home, ".gemini"), { recursive: true });
	fs.writeFileSync(path.join(home, ".gemini/settings.json"), JSON.stringify({ ...GEMINI_SETTINGS, context: spec.settings }, null, 2));
	const cwd = path.join(base, spec.cwd);
	fs.mkdirSync(cwd, { recursive: true });
	if (spec.workspaceSettings) {
		fs.mkdirSync(path.join(cwd, ".gemini"), { recursive: true });
		fs.writeFileSync(path.join(cwd, ".gemini/settings.json"), JSON.stringify({ context: spec.workspaceSettings }));
	}
	return { cwd, home, env: { HOME: home, GEMINI_CLI_TRUST_WORKSPACE: "true" } };
}

const textOf = (content) => (content?.parts ?? []).map((p) => p.text ?? "").join("");
const stats = { cases: 0, none: 0, system: 0, user: 0, mismatches: [] };

async function runCase(name, spec) {
	const base = caseDir(scratch, name);
	const { cwd, home, env } = materialize(base, spec);
	const prompt = `CTX-PROMPT-${SEED}-${name}-END`;
	const context = (format) => runContext({ bin: BIN, agent: "gemini", cwd, home, env, scratch }, format);
	const [pi, json] = [await context("--raw"), await context("--json")];
	const session = await run(GEMINI, ["-p", prompt], {
		cwd,
		env: { PATH: process.env.PATH, TERM: "dumb", NO_COLOR: "1", GEMINI_API_KEY: "mock-key", GOOGLE_GEMINI_BASE_URL: mock.url, GEMINI_CLI_NO_RELAUNCH: "true", NO_BROWSER: "true", ...env },
	});
	const where = whereCase(name, base);
	assert.equal(session.status, 0, `gemini -p failed, ${where}\nspec ${formatSpec(spec)}\n${session.stderr.slice(-3000)}`);
	const main = mainRequest(mock.requests, prompt);
	assert.ok(main, `no main model request carries the prompt, ${where}`);
	const system = textOf(main.body.systemInstruction);
	const user = main.body.contents?.[0]?.parts?.[0]?.text ?? "";
	main.body = undefined; // the mock keeps every request; these are large

	// What Gemini CLI sent: the system instruction's tail from its context
	// header, and the <loaded_context> block of the session context.
	const sysAt = system.search(/\n\n(# Contextual Instructions \(|---\n\n<loaded_context>\n)/);
	const sentSystem = sysAt < 0 ? null : system.slice(sysAt + 2);
	const userAt = user.indexOf("\n<loaded_context>\n<project_context>\n");
	const userEnd = user.indexOf("\n</project_context>\n</loaded_context>", userAt);
	const sentUser = userAt < 0 ? null : user.slice(userAt + 1, userEnd + "\n</project_context>\n</loaded_context>".length);
	const sentParts = [...(sentSystem === null ? [] : [{ place: "system_instruction", text: sentSystem }]), ...(sentUser === null ? [] : [{ place: "user_message", text: sentUser }])];
	stats.cases++;
	if (!sentParts.length) stats.none++;
	if (sentSystem !== null) stats.system++;
	if (sentUser !== null) stats.user++;
	for (const part of sentParts) assert.equal(occurrences(part.place === "user_message" ? user : system, part.text), 1, `a part is repeated, ${where}`);

	const sent = sentParts.length ? utf8(sentParts.map((p) => p.text).join("\n\n")) : null;
	if (!(pi.status === 0 && pi.stdout.equals(sent ?? Buffer.alloc(0)))) stats.mismatches.push(name);
	assertSameBytes({ pi, sent, agent: "gemini", where, spec, paths: `$BASE=${base} cwd=${cwd} home=${home}` });
	await assertAuditChain({ bin: BIN, agent: "gemini", base, cwd, home, env, sent, where });
	assert.equal(json.status, 0, json.stderr);
	const doc = JSON.parse(json.stdout.toString("utf8"));
	assert.deepEqual(
		doc.parts.map((p) => ({ place: p.place, text: p.text })),
		sentParts,
		`the JSON parts differ from what Gemini CLI sent, ${where}`,
	);
}

registerContextTests({
	id: "context-gemini",
	agent: "Gemini CLI",
	edgeTitle: "documented edge cases: promptinclude context --agent gemini prints exactly the context parts Gemini CLI sends",
	edgeCases: EDGE_CASES,
	genCase,
	runCase,
	caseMs: 30000,
	agentPath: GEMINI,
	bin: BIN,
	scratch,
	start: async () => (mock = await startMock({ maxRequests: (CASES + EDGE_CASES.length) * 12 + 100 })),
	summary: () => `${stats.cases} cases run in all: ${stats.user} with project files, ${stats.system} with global files, ${stats.none} with neither; mismatches: ${stats.mismatches.join(", ") || "none"}`,
});
