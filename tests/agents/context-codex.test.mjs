// Differential end-to-end test of `promptinclude context --agent codex`
// against the real Codex CLI (the version pinned in package.json).
//
// Every case is a directory tree (a random monorepo, or one of the
// documented edge cases of Codex's AGENTS.md loading): `codex exec
// --skip-git-repo-check PROMPT` runs in the case's cwd (no -C) with HOME
// (and sometimes CODEX_HOME) in the case, against the mock Responses API on
// 127.0.0.1; the content part of the request whose text starts with
// "# AGENTS.md instructions" (or none) must equal, byte for byte, what
//   promptinclude context --agent codex --cwd CWD --home HOME --raw
// prints with the same environment (nothing, when Codex sends no such part).
//
// The run is repeated and narrowed with the variables context-harness.mjs
// lists; the seed is printed as `# context-codex seed: N`.
//
// The generator varies what REPORT.md (the study of Codex 0.171.0) found
// to matter: AGENTS.md / AGENTS.override.md / fallback names along, above,
// off and below the cwd's path; `.git` as a repository, an empty directory,
// a directory with only HEAD, a file, a dangling or looping symlink, at the
// root, deeper, above or missing; custom and empty project_root_markers;
// blank, Unicode-whitespace, CRLF, BOM, invalid-UTF-8 and multi-byte
// contents sized around a small project_doc_max_bytes (cuts inside
// characters) or the default; symlinks in and out of the tree, dangling, to
// directories, loops; directories and FIFOs named like instruction files;
// global files (blank, trimmed, symlinked); CODEX_HOME elsewhere (with a
// decoy ~/.codex); `[projects."<path>"] trust_level` on the cwd, the root,
// the git repository, an intermediate directory; a cwd reached through a
// symlink or with spaces and non-ASCII characters in its path.
//
// Not generated, on purpose: unreadable (chmod 000) files, which root reads
// anyway, so the result would depend on who runs the tests; remote
// environments and `-C`; a project's own .codex/config.toml; `-c`
// overrides; a missing CODEX_HOME (Codex exits 1).

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertAuditChain, assertSameBytes, asValue, caseDir, CASES, cwdMaybeThroughLink, expand, formatSpec, genPath, join, newCase, registerContextTests, runContext, SEED, utf8, whereCase, writeTree } from "./context-harness.mjs";
import { BIN, MODULES, occurrences, requestWith, run } from "./helpers.mjs";
import { startMock, textsOf } from "./mock-responses.mjs";

const CODEX = path.join(MODULES, ".bin/codex");
const HEADER = "# AGENTS.md instructions";
console.log(`context-codex seed: ${SEED}`); // TAP shows it as `# context-codex seed: N`

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-context-codex-")));
let mock;

// ---------------------------------------------------------------------------
// A case spec (JSON, printed on failure and written to <case>/spec.json):
// {
//   files: { "<path under $BASE>": value },  value: "utf-8 text" | {hex} | {symlink: target}
//          | {dir: true} | {fifo: true} | {gitInit: true} (on "<dir>/.git": `git init <dir>`)
//   cwd: "tree/a/b",            // Codex's process cwd, under $BASE (may go through a symlink)
//   codexHome: null             // CODEX_HOME unset: $HOME/.codex ($HOME = $BASE/home)
//            | "alt"            // CODEX_HOME=$BASE/alt
//            | {relative: "alt"}// CODEX_HOME = that directory relative to the cwd
//   config: { maxBytes, fallbacks, markers, projects: [["$BASE/...", "untrusted"|"trusted"]], style: "plain"|"fancy" },
//   decoyConfig: bool           // with CODEX_HOME elsewhere, a config.toml in $HOME/.codex too
// }
// Symlink targets and project paths may use $BASE.

const PLAIN_NAMES = ["packages", "app", "src", "lib", "core", "web", "a", "b", "svc", "x.y", "node_modules"];
const EXOTIC_NAMES = ["dir with space", "\u00e9t\u00e9", "\u6df1\u3044", "emoji-\u{1F600}"];
const FALLBACK_POOL = ["CLAUDE.md", "GEMINI.md", "docs.md"];
const MULTIBYTE = ["\u00e9", "\u00df", "\u20ac", "\u6df1", "\u{1F600}", "\u{10348}", "\u0416"];
const UNICODE_WS = ["\u3000", "\u00a0", "\u000b", "\u000c", "\u0085", "\u2028", "\u2029", "\u2003", "\u202f", "\u1680"];
const NOT_WS = ["\u200b", "\ufeff", "\u180e"];
const INVALID = ["ff", "fe", "c3", "c328", "e282", "f09f98", "eda080", "c0af", "80", "f888808080", "e0808f", "f4908080"];

/** Random file content of about `target` bytes; `label` keeps it recognisable. */
function genText(rng, target, label, { global = false, dense = 16 } = {}) {
	const kind = rng.weighted([
		[60, "normal"],
		[dense, "dense"],
		[11, "blank"],
		[8, "invalid"],
		[3, "lookalike"],
		[2, "empty"],
	]);
	if (kind === "empty") return Buffer.alloc(0);
	if (kind === "blank") {
		const unit = rng.pick([" ", "\n", "\t", "\r\n", " \t \n", ...UNICODE_WS, UNICODE_WS.join("")]);
		return utf8(unit.repeat(rng.int(1, Math.max(1, Math.min(target, 40)))));
	}
	if (kind === "lookalike") return utf8(rng.pick(NOT_WS) + rng.pick(["", "\n", " \n"]));
	const bytes = [];
	let size = 0;
	const push = (b) => {
		bytes.push(b);
		size += b.length;
	};
	if (rng.chance(0.1)) push(utf8("\ufeff"));
	if (rng.chance(0.15)) push(utf8(rng.pick(["\n", " ", "\n\n", "  \n", "\r\n", "\t"])));
	if (global && rng.chance(0.35)) push(utf8(rng.shuffle([...UNICODE_WS, ...NOT_WS]).slice(0, rng.int(1, 3)).join("")));
	push(utf8(label));
	const crlf = rng.chance(0.2);
	const mb = kind === "dense" ? 0.7 : 0.12;
	while (size < target) {
		const x = rng.float();
		if (kind === "invalid" && rng.chance(0.15)) push(Buffer.from(rng.pick(INVALID), "hex"));
		else if (x < mb) push(utf8(rng.pick(MULTIBYTE)));
		else if (x < mb + 0.12) push(utf8(" "));
		else if (x < mb + 0.2) push(utf8(crlf ? "\r\n" : "\n"));
		else if (x < mb + 0.22) push(utf8(rng.pick(UNICODE_WS)));
		else push(utf8(Array.from({ length: rng.int(1, 6) }, () => String.fromCharCode(rng.int(97, 122))).join("")));
	}
	if (rng.chance(0.8)) push(utf8(crlf ? "\r\n" : "\n"));
	if (rng.chance(0.1)) push(utf8(rng.pick(["\n\n", "  ", " \n \n", "\t\n"])));
	if (global && rng.chance(0.35)) push(utf8(rng.shuffle([...UNICODE_WS, ...NOT_WS]).slice(0, rng.int(1, 3)).join("")));
	return Buffer.concat(bytes);
}

/** A random case. */
function genCase(rng) {
	const { files, put, label } = newCase();

	// The directory chain from tree/ to the cwd, and directories off it.
	const route = genPath(rng, put, PLAIN_NAMES, EXOTIC_NAMES);
	const { segs, pathDirs, cwdDir } = route;
	const offDirs = [];
	for (const d of pathDirs) if (rng.chance(0.25)) offDirs.push(`${d}/${rng.pick(["other", "sibling", "tools"])}`);
	if (rng.chance(0.4)) offDirs.push(`${cwdDir}/${rng.pick(["child", "below"])}`);
	for (const d of offDirs) put(d, { dir: true });

	// Budget.
	const budgetKind = rng.weighted([
		[30, "default"],
		[42, "small"],
		[8, "medium"],
		[5, "zero"],
		[4, "explicit-default"],
		[4, "one"],
		[3, "large"],
	]);
	const maxBytes = { small: rng.int(2, 160), medium: rng.int(161, 3000), zero: 0, "explicit-default": 32768, one: 1, large: 1_000_000 }[budgetKind];
	const budget = maxBytes ?? 32768;

	// project_doc_fallback_filenames, junk entries included.
	let fallbacks;
	if (rng.chance(0.35)) {
		fallbacks = rng.shuffle(rng.subset(FALLBACK_POOL, 0.6));
		const junk = rng.subset(["", " CLAUDE.md ", "a/b.md", ".", "..", "AGENTS.md", "AGENTS.override.md", "GEMINI.md"], 0.15);
		for (const j of junk) fallbacks.splice(rng.int(0, fallbacks.length), 0, j);
	}

	// project_root_markers.
	const markerKind = rng.weighted([
		[65, "default"],
		[8, "git"],
		[20, "custom"],
		[7, "empty"],
	]);
	const markers = { default: undefined, git: [".git"], empty: [], custom: rng.shuffle([".hg", "package.json", ".git", "ROOT.marker"]).slice(0, rng.int(1, 3)) }[markerKind];

	// Markers on disk: .git in its many forms, at the root, deeper, above.
	const gitValue = () =>
		rng.weighted([
			[40, { gitInit: true }],
			[18, { dir: true }],
			[10, "HEAD"],
			[18, rng.pick(["gitdir: /nonexistent\n", "gitdir: ../.git\n", ""])],
			[7, { symlink: "nowhere" }],
			[7, { symlink: "." }],
		]);
	const putGit = (d) => {
		const git = join(d, ".git");
		if (Object.keys(files).some((k) => k === git || k.startsWith(`${git}/`))) return;
		const v = gitValue();
		if (v === "HEAD") put(join(d, ".git/HEAD"), "ref: refs/heads/main\n");
		else put(join(d, ".git"), v);
	};
	const gitPlace = rng.weighted([
		[18, "none"],
		[40, "root"],
		[20, "deeper"],
		[10, "both"],
		[6, "above"],
		[6, "cwd"],
	]);
	if (gitPlace === "root" || gitPlace === "both") putGit("tree");
	if ((gitPlace === "deeper" || gitPlace === "both") && pathDirs.length > 1) putGit(rng.pick(pathDirs.slice(1)));
	if (gitPlace === "above") putGit(".");
	if (gitPlace === "cwd") putGit(cwdDir);
	for (const d of offDirs) if (rng.chance(0.15)) putGit(d);
	for (const m of [".hg", "package.json", "ROOT.marker"]) {
		for (const d of [".", ...pathDirs]) if (rng.chance(d === "." ? 0.04 : 0.12)) put(join(d, m), rng.chance(0.7) ? (m === ".hg" ? { dir: true } : "{}\n") : { symlink: rng.pick(["nowhere", "."]) });
	}

	// Instruction files along the path, above the tree, off the path, below the cwd.
	let targets = 0;
	const entry = (dir, size) => {
		const kind = rng.weighted([
			[86, "text"],
			[10, "symlink"],
			[2, "dir"],
			[0.7, "fifo"],
			[0.6, "loop"],
			[0.6, "enotdir"],
		]);
		if (kind === "text") return asValue(genText(rng, size, label(), { dense }));
		if (kind === "dir") return { dir: true };
		if (kind === "fifo") return { fifo: true };
		if (kind === "loop") return { symlink: "SELF" };
		if (kind === "enotdir") {
			put("tree/targets/plain.md", "PLAIN-TARGET\n");
			return { symlink: "$BASE/tree/targets/plain.md/x" };
		}
		const where = rng.weighted([
			[35, "inside"],
			[35, "outside"],
			[15, "dangling"],
			[8, "dir"],
			[7, "chain"],
		]);
		const n = ++targets;
		if (where === "dangling") return { symlink: rng.pick([`missing-${n}.md`, "$BASE/nowhere/AGENTS.md"]) };
		if (where === "dir") return { symlink: rng.pick([".", "$BASE/tree", "$BASE/out"]) };
		const target = where === "inside" ? `tree/targets/t${n}.md` : `out/t${n}.md`;
		put(target, asValue(genText(rng, size, label(), { dense })));
		if (where === "chain") {
			put(`out/chain${n}.md`, { symlink: `$BASE/${target}` });
			return { symlink: `$BASE/out/chain${n}.md` };
		}
		return { symlink: rng.chance(0.5) ? `$BASE/${target}` : path.relative(dir, target) };
	};
	// Sizes around the budget, so that cuts fall anywhere (inside characters too).
	const bigBudget = budgetKind === "default" || budgetKind === "explicit-default" || budgetKind === "large";
	const dense = bigBudget ? 16 : 110;
	const chainCount = pathDirs.length;
	const fileSize = () => {
		if (bigBudget) return rng.chance(0.04) ? rng.int(12000, 36000) : rng.int(1, 220);
		return rng.int(1, Math.max(4, Math.round((2.5 * Math.max(budget, 8)) / Math.max(1, chainCount * 0.6))));
	};
	const textDirs = [...pathDirs, ...(rng.chance(0.15) ? ["."] : []), ...offDirs];
	for (const d of textDirs) {
		const onPath = pathDirs.includes(d);
		const names = [];
		if (rng.chance(onPath ? 0.22 : 0.1)) names.push("AGENTS.override.md");
		if (rng.chance(onPath ? 0.7 : 0.5)) names.push("AGENTS.md");
		for (const f of FALLBACK_POOL) if (rng.chance(0.2)) names.push(f);
		if (rng.chance(0.05)) names.push(rng.pick(["agents.md", "AGENTS.MD", "README.md"]));
		if (fallbacks?.includes("a/b.md") && rng.chance(0.5)) names.push("a/b.md");
		for (const name of names) {
			const p = join(d, name);
			const v = entry(path.dirname(p), fileSize());
			put(p, v.symlink === "SELF" ? { symlink: path.basename(p) } : v);
		}
	}

	// Codex home: default or CODEX_HOME elsewhere; global files there.
	const alt = rng.chance(0.25);
	const codexHome = alt ? "alt" : null;
	const homeDir = alt ? "alt" : "home/.codex";
	put(homeDir, { dir: true });
	const globalEntry = () => {
		const kind = rng.weighted([
			[86, "text"],
			[6, "symlink"],
			[3, "dangling"],
			[2, "dir"],
			[1.5, "loop"],
			[1.5, "fifo"],
		]);
		if (kind === "text") return asValue(genText(rng, rng.chance(0.05) ? rng.int(5000, 60000) : rng.int(1, 120), label(), { global: true }));
		if (kind === "symlink") {
			const n = ++targets;
			put(`out/g${n}.md`, asValue(genText(rng, rng.int(1, 80), label(), { global: true })));
			return { symlink: `$BASE/out/g${n}.md` };
		}
		if (kind === "dangling") return { symlink: "/nonexistent/AGENTS.md" };
		if (kind === "dir") return { dir: true };
		if (kind === "fifo") return { fifo: true };
		return { symlink: "SELF" };
	};
	for (const name of ["AGENTS.override.md", "AGENTS.md", "CLAUDE.md"]) {
		if (!rng.chance({ "AGENTS.override.md": 0.2, "AGENTS.md": 0.45, "CLAUDE.md": 0.08 }[name])) continue;
		const v = globalEntry();
		put(`${homeDir}/${name}`, v.symlink === "SELF" ? { symlink: name } : v);
	}
	let decoyConfig = false;
	if (alt) {
		put("home/.codex", { dir: true });
		if (rng.chance(0.6)) put("home/.codex/AGENTS.md", "DECOY-DEFAULT-HOME-GLOBAL\n");
		decoyConfig = rng.chance(0.5);
	}

	// Trust entries.
	const projects = [];
	if (rng.chance(0.25)) {
		const gitDirs = pathDirs.filter((d) => files[`${d}/.git`]?.gitInit || files[`${d}/.git/HEAD`]);
		for (let i = rng.int(1, 2); i > 0; i--) {
			const key = rng.weighted([
				[30, cwdDir],
				[25, "tree"],
				[20, gitDirs.length ? gitDirs.at(-1) : "tree"],
				[15, rng.pick(pathDirs)],
				[5, "."],
				[5, `${cwdDir}/`],
			]);
			const p = `$BASE/${key}`.replace(/\/\.$/, "");
			if (!projects.some(([q]) => q === p)) projects.push([p, rng.chance(0.7) ? "untrusted" : "trusted"]);
		}
	}

	// Codex's cwd: the directory, or the same directory through a symlink.
	const cwd = cwdMaybeThroughLink(rng, put, route, 0.1);

	const config = { maxBytes, fallbacks, markers, projects, style: rng.chance(0.2) ? "fancy" : "plain" };
	return { files, cwd, codexHome, config, decoyConfig };
}

// ---------------------------------------------------------------------------
// The documented edge cases (REPORT.md §2), each a named case.

const chain = {
	"tree/AGENTS.md": "ROOT\n",
	"tree/sub/AGENTS.md": "SUB\n",
	"tree/sub/deep/AGENTS.override.md": "DEEP-OVERRIDE\n",
	"tree/sub/deep/AGENTS.md": "DEEP-PLAIN\n",
};
const git = { "tree/.git": { gitInit: true } };
const edge = (name, spec) => ({ name: `edge-${name}`, spec: { files: {}, cwd: "tree", codexHome: null, config: {}, ...spec } });
const EDGE_CASES = [
	edge("chain-root-to-cwd", { files: { ...git, ...chain, "tree/sub/deep/below/AGENTS.md": "BELOW\n", "AGENTS.md": "ABOVE-ROOT\n" }, cwd: "tree/sub/deep" }),
	edge("override-shadows-agents-md", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.override.md": "SUB-OVERRIDE\n", "tree/sub/AGENTS.md": "SUB-SHADOWED\n" }, cwd: "tree/sub" }),
	edge("blank-override-claims-its-directory", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.override.md": "  \n\t\n", "tree/sub/AGENTS.md": "SUB-SHADOWED\n" }, cwd: "tree/sub" }),
	edge("empty-override-claims-its-directory", { files: { ...git, "tree/AGENTS.override.md": "", "tree/AGENTS.md": "SHADOWED\n" } }),
	edge("budget-cut-inside-2-byte-character", { files: { ...git, "tree/AGENTS.md": "0123456789012345678901234567890\n", "tree/sub/AGENTS.md": "abcdefg\u00e9hij\n", "tree/sub/deep/AGENTS.md": "DEEP\n" }, cwd: "tree/sub/deep", config: { maxBytes: 40 } }),
	edge("budget-cut-inside-3-byte-character", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.md": "abc\u20acdef\n" }, cwd: "tree/sub", config: { maxBytes: 10 } }),
	edge("budget-cut-inside-4-byte-character", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.md": "ab\u{1F600}cd\n" }, cwd: "tree/sub", config: { maxBytes: 10 } }),
	edge("budget-4-byte-character-fits", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.md": "ab\u{1F600}cd\n" }, cwd: "tree/sub", config: { maxBytes: 11 } }),
	edge("budget-single-file-cut-mid-character", { files: { ...git, "tree/AGENTS.md": "a\u00e9\u00e9\n" }, config: { maxBytes: 4 } }),
	edge("blank-file-costs-nothing", { files: { ...git, "tree/AGENTS.md": "    \n  \n", "tree/sub/AGENTS.md": "0123456789AB-CUT\n" }, cwd: "tree/sub", config: { maxBytes: 12 } }),
	edge("file-cut-to-whitespace-costs-nothing", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.md": "     \nSUBSTUFF\n", "tree/sub/deep/AGENTS.md": "DEEP-LONG\n" }, cwd: "tree/sub/deep", config: { maxBytes: 10 } }),
	edge("budget-1-leading-space", { files: { ...git, "tree/AGENTS.md": " ROOT\n", "tree/sub/AGENTS.md": "SUB\n" }, cwd: "tree/sub", config: { maxBytes: 1 } }),
	edge("deeper-files-dropped-when-budget-used-up", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.md": "SUB\n", "tree/sub/deep/AGENTS.md": "DEEP\n" }, cwd: "tree/sub/deep", config: { maxBytes: 9 } }),
	edge("default-budget-32768", { files: { ...git, "tree/AGENTS.md": `${"x".repeat(32760)}\n`, "tree/sub/AGENTS.md": "0123456789ABCDEF\n" }, cwd: "tree/sub" }),
	edge("global-only-header-without-cwd", { files: { ...git, "home/.codex/AGENTS.md": "GLOBAL-ONLY\n" } }),
	edge("global-plus-project-separator", { files: { ...git, ...chain, "home/.codex/AGENTS.md": "\n  GLOBAL line1\n\nGLOBAL line2  \n\n" }, cwd: "tree/sub/deep" }),
	edge("global-override-wins", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "home/.codex/AGENTS.md": "GLOBAL-PLAIN\n", "home/.codex/AGENTS.override.md": "GLOBAL-OVERRIDE\n" } }),
	edge("global-blank-override-falls-through", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "home/.codex/AGENTS.md": "GLOBAL-PLAIN\n", "home/.codex/AGENTS.override.md": " \n\t\n" } }),
	edge("global-blank-no-separator", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "home/.codex/AGENTS.md": " \n\n\t" } }),
	edge("global-rust-trim-not-js-trim", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "home/.codex/AGENTS.md": "\ufeff \u00a0\u3000\u000bGLOBAL\u2003\u0085\u200b\n\u00a0" } }),
	edge("global-not-capped-nor-charged", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "home/.codex/AGENTS.md": `${"G".repeat(50000)}\nEND\n` }, config: { maxBytes: 10 } }),
	edge("global-fallback-name-ignored", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "home/.codex/CLAUDE.md": "GLOBAL-CLAUDE\n" }, config: { fallbacks: ["CLAUDE.md"] } }),
	edge("global-symlink-loop-skipped", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "home/.codex/AGENTS.override.md": { symlink: "AGENTS.override.md" }, "home/.codex/AGENTS.md": "GLOBAL\n" } }),
	edge("no-marker-only-cwd", { files: { ...chain }, cwd: "tree/sub/deep" }),
	edge("git-file-marker", { files: { ...chain, "tree/.git": "gitdir: /nonexistent\n" }, cwd: "tree/sub/deep" }),
	edge("nested-git-nearest-wins", { files: { ...git, ...chain, "tree/sub/.git": { gitInit: true } }, cwd: "tree/sub/deep" }),
	edge("git-marker-dangling-symlink-ignored", { files: { ...chain, "tree/.git": { symlink: "nowhere" }, "tree/sub/.git": { symlink: "../nowhere" } }, cwd: "tree/sub/deep" }),
	edge("git-marker-symlink-loop-ignored", { files: { ...chain, "tree/.git": { symlink: ".git" }, "home/.codex/AGENTS.md": "GLOBAL\n" }, cwd: "tree/sub/deep" }),
	edge("custom-root-markers", { files: { ...chain, "tree/package.json": "{}", "tree/sub/.git": { dir: true } }, cwd: "tree/sub/deep", config: { markers: ["package.json", ".git"] } }),
	edge("custom-root-markers-replace-git", { files: { ...git, ...chain, "tree/sub/.hg": { dir: true } }, cwd: "tree/sub/deep", config: { markers: [".hg"] } }),
	edge("empty-root-markers", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { markers: [] } }),
	edge("marker-enotdir-ignored", { files: { ...chain, "tree/.hg": { dir: true }, "home/.codex/AGENTS.md": "GLOBAL\n" }, cwd: "tree/sub/deep", config: { markers: ["AGENTS.md/x", ".hg"] } }),
	edge("fallback-filenames-order", {
		files: { ...git, "tree/CLAUDE.md": "ROOT-CLAUDE\n", "tree/GEMINI.md": "ROOT-GEMINI\n", "tree/sub/GEMINI.md": "SUB-GEMINI\n", "tree/sub/deep/AGENTS.md": "DEEP-AGENTS\n", "tree/sub/deep/CLAUDE.md": "DEEP-CLAUDE\n" },
		cwd: "tree/sub/deep",
		config: { fallbacks: ["CLAUDE.md", "  GEMINI.md  ", "", "AGENTS.md", "a/b.md"] },
	}),
	edge("fallback-pathlike-ignored", { files: { ...git, "tree/a/b.md": "PATHLIKE\n", "tree/OK.md": "OK\n" }, config: { fallbacks: ["a/b.md", "..", ".", "OK.md"] } }),
	edge("fallback-case-sensitive", { files: { ...git, "tree/agents.md": "LOWERCASE\n" } }),
	edge("max-bytes-0-no-project", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { maxBytes: 0 } }),
	edge("max-bytes-0-global-only", { files: { ...git, ...chain, "home/.codex/AGENTS.md": "GLOBAL\n" }, cwd: "tree/sub/deep", config: { maxBytes: 0 } }),
	edge("untrusted-root", { files: { ...git, ...chain, "home/.codex/AGENTS.md": "GLOBAL\n" }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree", "untrusted"]] } }),
	edge("untrusted-root-no-global", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree", "untrusted"]] } }),
	edge("trusted-root", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree", "trusted"]] } }),
	edge("untrusted-cwd-below-root", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree/sub/deep", "untrusted"]] } }),
	edge("untrusted-intermediate-directory", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree/sub", "untrusted"]] } }),
	edge("untrusted-git-root-above-marker-root", { files: { ...git, ...chain, "tree/sub/.hg": { dir: true } }, cwd: "tree/sub/deep", config: { markers: [".hg"], projects: [["$BASE/tree", "untrusted"]] } }),
	edge("untrusted-marker-root-not-git-root", { files: { ...git, ...chain, "tree/sub/.hg": { dir: true } }, cwd: "tree/sub/deep", config: { markers: [".hg"], projects: [["$BASE/tree/sub", "untrusted"]] } }),
	edge("trusted-cwd-beats-untrusted-root", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree", "untrusted"], ["$BASE/tree/sub/deep", "trusted"]] } }),
	edge("untrusted-root-with-empty-git-dir", { files: { ...chain, "tree/.git": { dir: true } }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree", "untrusted"]] } }),
	edge("untrusted-root-git-file", { files: { ...chain, "tree/.git": "gitdir: /nonexistent\n" }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree", "untrusted"]] } }),
	// A `.git` file below the real repository ends Codex's search for the repository that
	// decides trust (found on seed 4282314718, case r57).
	edge("untrusted-root-git-file-below", { files: { ...git, ...chain, "tree/sub/.git": "" }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree", "untrusted"]] } }),
	edge("untrusted-key-with-trailing-slash", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { projects: [["$BASE/tree/", "untrusted"]] } }),
	edge("untrusted-inline-projects-table", { files: { ...git, ...chain }, cwd: "tree/sub/deep", config: { style: "fancy", projects: [["$BASE/tree", "untrusted"]] } }),
	edge("codex-home-elsewhere", {
		files: { ...git, "tree/AGENTS.md": "ROOT\n", "alt/AGENTS.md": "ALT-HOME-GLOBAL\n", "home/.codex/AGENTS.md": "DEFAULT-HOME-GLOBAL\n" },
		codexHome: "alt",
		decoyConfig: true,
	}),
	edge("codex-home-elsewhere-without-global", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "alt": { dir: true }, "home/.codex/AGENTS.md": "DEFAULT-HOME-GLOBAL\n" }, codexHome: "alt" }),
	edge("codex-home-relative", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.md": "SUB\n", "alt/AGENTS.md": "ALT-REL\n" }, cwd: "tree/sub", codexHome: { relative: "alt" } }),
	edge("symlinked-agents-md-outside-project", { files: { ...git, "tree/AGENTS.md": { symlink: "../out/target.md" }, "out/target.md": "VIA-SYMLINK\n" } }),
	edge("symlinked-agents-md-inside-project", { files: { ...git, "tree/docs/rules.md": "RULES\n", "tree/AGENTS.md": { symlink: "docs/rules.md" } } }),
	edge("dangling-symlink-falls-through", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.override.md": { symlink: "nope.md" }, "tree/sub/AGENTS.md": "SUB\n" }, cwd: "tree/sub" }),
	edge("symlink-to-directory-falls-through", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/d": { dir: true }, "tree/sub/AGENTS.override.md": { symlink: "../d" }, "tree/sub/AGENTS.md": "SUB\n" }, cwd: "tree/sub" }),
	edge("directory-named-agents-md", { files: { ...git, "tree/AGENTS.md": { dir: true }, "tree/sub/AGENTS.override.md": { dir: true }, "tree/sub/AGENTS.md": "SUB\n" }, cwd: "tree/sub" }),
	edge("fifo-named-agents-md", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.override.md": { fifo: true }, "tree/sub/AGENTS.md": "SUB\n" }, cwd: "tree/sub" }),
	edge("symlink-loop-loses-project-set", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/sub/AGENTS.override.md": { symlink: "AGENTS.override.md" }, "tree/sub/AGENTS.md": "SUB\n", "home/.codex/AGENTS.md": "GLOBAL\n" }, cwd: "tree/sub" }),
	edge("invalid-utf8", { files: { ...git, "tree/AGENTS.md": { hex: "41ff42c3280a" }, "tree/sub/AGENTS.md": { hex: "efbbbf5355420d0a" } }, cwd: "tree/sub" }),
	edge("invalid-utf8-sequences", { files: { ...git, "tree/AGENTS.md": { hex: "61f09f986262e228a163c0af80eda08064fdbe0a" } } }),
	edge("only-invalid-byte-is-kept", { files: { ...git, "tree/AGENTS.md": { hex: "ff" }, "home/.codex/AGENTS.md": { hex: "ff0a" } } }),
	edge("unicode-whitespace-project", { files: { ...git, "tree/AGENTS.md": "\u3000\u00a0\u000b\u000c\u0085\n", "tree/sub/AGENTS.md": "\u200b\n", "tree/sub/deep/AGENTS.md": "\ufeff\n" }, cwd: "tree/sub/deep" }),
	edge("whitespace-crlf-bom-preserved", { files: { ...git, "tree/AGENTS.md": "\ufeff\n\n  ROOT  \r\n\r\n\t\n", "tree/sub/AGENTS.md": "NO-NEWLINE" }, cwd: "tree/sub" }),
	edge("no-docs-no-part", { files: { ...git } }),
	edge("cwd-through-symlink", { files: { ...git, ...chain, "tree/link": { symlink: "sub/deep" } }, cwd: "tree/link" }),
	edge("cwd-path-with-space-and-unicode", { files: { ...git, "tree/AGENTS.md": "ROOT\n", "tree/dir with space/\u00e9/AGENTS.md": "LEAF\n" }, cwd: "tree/dir with space/\u00e9" }),
];

// ---------------------------------------------------------------------------
// Running a case.

const tomlString = (s) => JSON.stringify(s); // a TOML basic string

function configToml(config, mockUrl, base) {
	const fancy = config.style === "fancy";
	const list = (items) => (fancy ? `[\n${items.map((i) => `  ${tomlString(i)}, # entry\n`).join("")}]` : `[${items.map(tomlString).join(", ")}]`);
	const lines = ['model = "mock-model"', 'model_provider = "mock"'];
	if (fancy) lines.push("# a comment", "");
	if (config.maxBytes !== undefined) lines.push(fancy ? `project_doc_max_bytes=${config.maxBytes} # budget` : `project_doc_max_bytes = ${config.maxBytes}`);
	if (config.fallbacks) lines.push(`project_doc_fallback_filenames = ${list(config.fallbacks)}`);
	if (config.markers) lines.push(`project_root_markers = ${list(config.markers)}`);
	lines.push("", "[model_providers.mock]", 'name = "mock"', `base_url = "${mockUrl}/v1"`, 'wire_api = "responses"', 'env_key = "MOCK_API_KEY"', "");
	const projects = (config.projects ?? []).map(([p, level]) => [expand(p, base), level]);
	if (fancy && projects.length) {
		lines.push("[projects]");
		for (const [p, level] of projects) lines.push(`${tomlString(p)} = { trust_level = "${level}" }`);
	} else for (const [p, level] of projects) lines.push(`[projects.${tomlString(p)}]`, `trust_level = "${level}"`);
	return `${lines.join("\n")}\n`;
}

/** Builds the case under `base`; returns { cwd, home, env } (env without PATH). */
function materialize(base, spec, mockUrl) {
	writeTree(base, spec);
	const at = (rel) => path.join(base, rel);
	const home = at("home");
	fs.mkdirSync(home, { recursive: true });
	const codexHomeDir = spec.codexHome === null ? path.join(home, ".codex") : at(typeof spec.codexHome === "string" ? spec.codexHome : spec.codexHome.relative);
	fs.mkdirSync(codexHomeDir, { recursive: true });
	fs.writeFileSync(path.join(codexHomeDir, "config.toml"), configToml(spec.config, mockUrl, base));
	if (spec.decoyConfig) {
		// Read by neither, if CODEX_HOME is honoured: every setting here would change the result.
		const decoy = configToml({ maxBytes: 1, fallbacks: ["CLAUDE.md"], markers: [], projects: [["$BASE/tree", "untrusted"]] }, mockUrl, base);
		fs.mkdirSync(path.join(home, ".codex"), { recursive: true });
		fs.writeFileSync(path.join(home, ".codex/config.toml"), decoy);
	}
	const cwd = at(spec.cwd);
	fs.mkdirSync(cwd, { recursive: true });
	const env = { HOME: home };
	if (spec.codexHome !== null) env.CODEX_HOME = typeof spec.codexHome === "string" ? codexHomeDir : path.relative(fs.realpathSync(cwd), codexHomeDir);
	return { cwd, home, env };
}

const stats = { cases: 0, none: 0, globalOnly: 0, project: 0, withGlobal: 0, replacement: 0, mismatches: [] };

async function runCase(name, spec) {
	const base = caseDir(scratch, name);
	const { cwd, home, env } = materialize(base, spec, mock.url);
	const prompt = `CTX-PROMPT-${SEED}-${name}-END`;

	// promptinclude first (from elsewhere: only --cwd says where), then Codex on the same tree.
	const pi = await runContext({ bin: BIN, agent: "codex", cwd, home, env, scratch }, "--raw");
	const session = await run(CODEX, ["exec", "--skip-git-repo-check", prompt], {
		cwd,
		env: { PATH: process.env.PATH, MOCK_API_KEY: "mock-key", ...env },
	});
	const where = whereCase(name, base);
	const specText = formatSpec(spec);
	assert.equal(session.status, 0, `codex exec failed, ${where}\nspec ${specText}\n${session.stderr.slice(-3000)}`);
	const req = requestWith(
		mock.requests.filter((r) => r.path.endsWith("/responses")),
		prompt,
		textsOf,
	);
	const body = req.body;
	const parts = [];
	for (const item of body.input ?? [])
		for (const c of Array.isArray(item.content) ? item.content : [])
			if (typeof c?.text === "string" && c.text.startsWith(HEADER)) parts.push({ role: item.role, type: c.type, text: c.text });
	const all = textsOf(body);
	req.body = undefined; // the mock keeps every request; these are large

	assert.ok(parts.length <= 1, `${parts.length} AGENTS.md parts in one request, ${where}`);
	const codexText = parts.length ? utf8(parts[0].text) : null;
	stats.cases++;
	if (!parts.length) stats.none++;
	else if (parts[0].text.startsWith(`${HEADER} for `)) stats.project++;
	else stats.globalOnly++;
	if (parts.length && parts[0].text.includes("\n\n--- project-doc ---\n\n")) stats.withGlobal++;
	if (parts.length && parts[0].text.includes("\ufffd")) stats.replacement++;
	if (parts.length) {
		assert.equal(parts[0].role, "user", `the AGENTS.md part is in a ${parts[0].role} message, ${where}`);
		assert.equal(parts[0].type, "input_text", where);
		// One content part carries the whole text (no other string holds it, or a piece of its header).
		assert.equal(all.filter((t) => t.includes(HEADER)).length, 1, `the AGENTS.md text is split or repeated, ${where}`);
		assert.equal(occurrences(all.join("\u0000"), parts[0].text), 1, where);
	}

	if (!(pi.status === 0 && !pi.timedOut && pi.stdout.equals(codexText ?? Buffer.alloc(0)))) stats.mismatches.push(name);
	assertSameBytes({
		pi,
		sent: codexText,
		agent: "codex",
		where,
		spec,
		paths: `$BASE=${base} cwd=${cwd} home=${home}${env.CODEX_HOME ? ` CODEX_HOME=${env.CODEX_HOME}` : ""}`,
	});
	await assertAuditChain({ bin: BIN, agent: "codex", base, cwd, home, env, sent: codexText, where });
}

registerContextTests({
	id: "context-codex",
	agent: "Codex",
	edgeTitle: "documented edge cases: promptinclude context --agent codex prints exactly the AGENTS.md part Codex sends",
	edgeCases: EDGE_CASES,
	genCase,
	runCase,
	caseMs: 20000,
	agentPath: CODEX,
	bin: BIN,
	scratch,
	start: async () => (mock = await startMock({ maxRequests: (CASES + EDGE_CASES.length) * 10 + 100 })),
	summary: () => `${stats.cases} cases run in all: ${stats.project} with project text (${stats.withGlobal} with global text too), ${stats.replacement} with U+FFFD, ${stats.globalOnly} global only, ${stats.none} without an AGENTS.md part; mismatches: ${stats.mismatches.join(", ") || "none"}`,
});
