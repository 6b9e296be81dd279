// Differential end-to-end test of `promptinclude context --agent claude-code`
// against the real Claude Code (the version pinned in package.json).
//
// Every case is a directory tree (a random monorepo, or one of the
// documented edge cases of Claude Code's instruction-file loading):
// `claude -p PROMPT` runs in the case's cwd with HOME (and sometimes
// CLAUDE_CONFIG_DIR) in the case, against the mock Messages API on
// 127.0.0.1; the text part of the first user message that starts with
// Claude Code's instructions header (or none) must equal, byte for byte,
// what
//   promptinclude context --agent claude-code --cwd CWD --home HOME --raw
// prints with the same environment (nothing, when Claude Code sends no such
// part). The run is repeated and narrowed with the variables
// context-harness.mjs lists; the seed is printed as `# context-claude seed: N`.
//
// The generator varies what the model's rules (docs/agents-context.md)
// turn on: CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, AGENTS.md and
// .claude/AGENTS.md along, above, off and below the cwd's path;
// .claude/rules trees (nested, symlinked in and out of the cwd, directories
// named *.md, other extensions, `paths:` front matter in its many forms);
// the user's CLAUDE.md and rules, in ~/.claude or CLAUDE_CONFIG_DIR; the user's
// approval of imports outside the cwd (~/.claude.json, under the project's key or another);
// Markdown with code spans, fences, indented code, top-level and inline HTML
// comments (CRLF too), front matter; `@path` imports that resolve, don't,
// leave the cwd, go through `~/`, loop, repeat, go too deep, name
// directories or binary extensions; blank, BOM, CRLF and invalid-UTF-8
// texts.
//
// Not generated, on purpose: links, emphasis, inline HTML tags and
// backslash escapes around imports (the model does not tokenize them as
// marked does), unreadable (chmod 000) files (root reads them), managed
// policy files (/etc/claude-code), auto memory, and settings
// (claudeMdExcludes, instructionFiles).

import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { assertAuditChain, assertSameBytes, asValue, caseDir, CASES, cwdMaybeThroughLink, formatSpec, genPath, join, newCase, registerContextTests, runContext, SEED, utf8, whereCase, withInvalidUtf8, writeCase } from "./context-harness.mjs";
import { BIN, MODULES, occurrences, requestWith, run } from "./helpers.mjs";
import { startMock, textsOf } from "./mock-anthropic.mjs";

const CLAUDE = path.join(MODULES, ".bin/claude");
const HEADER =
	"<system-reminder>\nCodebase and user instructions are shown below. Be sure to adhere to these instructions. IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written.\n\n";
console.log(`context-claude seed: ${SEED}`); // TAP shows it as `# context-claude seed: N`

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-context-claude-")));
let mock;

// ---------------------------------------------------------------------------
// A case spec: { files, cwd: "tree/a/b", configDir: null | "alt", disabled: bool }

const PLAIN_NAMES = ["packages", "app", "src", "lib", "core", "web", "a", "b", "svc", "x.y"];
const EXOTIC_NAMES = ["dir with space", "\u00e9t\u00e9", "\u6df1\u3044"];
const WORDS = ["use", "tabs", "always", "test", "the", "api", "rule", "go", "fmt", "lint", "\u00e9t\u00e9", "\u6df1"];
const UNICODE_WS = ["\u3000", "\u00a0", "\u0085", "\u2028", "\ufeff", "\u200b"];
const INVALID = ["ff", "c3", "e282", "eda080", "c0af", "80"];

/** An import of `target` (a path under $BASE) written from a file in `from`. */
function mention(rng, from, target) {
	const escape = (p) => p.replaceAll(" ", "\\ ");
	const rel = path.posix.relative(from, target) || ".";
	const form = rng.weighted([
		[50, "relative"],
		[12, "dot"],
		[18, "absolute"],
		[8, "fragment"],
		[6, "home"],
		[6, "invalid"],
	]);
	if (form === "dot") return `@./${escape(rel)}`;
	if (form === "absolute") return `@${escape(`$BASE/${target}`)}`;
	if (form === "fragment") return `@${escape(rel)}#${rng.pick(["part", "x-y", ""])}`;
	if (form === "home") return `@~/${escape(path.posix.relative("home", target))}`;
	if (form === "invalid") return rng.pick([`@@${rel}`, `@#${rel}`, `(@${rel})`, `x@${rel}`, "@/", "@"]);
	return `@${escape(rel)}`;
}

/** Random Markdown (bytes) of a few blocks; `mentions` are import strings to place. */
function genMarkdown(rng, label, mentions, { rule = false } = {}) {
	const kind = rng.weighted([
		[70, "markdown"],
		[8, "blank"],
		[5, "empty"],
		[5, "invalid"],
		[4, "comment-only"],
		[3, "front-matter-only"],
	]);
	if (kind === "empty") return Buffer.alloc(0);
	if (kind === "blank") return utf8(rng.pick([" ", "\n", "\n\n  \n", "\t\n", " \u3000 ", "\u00a0\n", "\ufeff\n"]));
	if (kind === "comment-only") return utf8(`<!-- ${label} -->\n${rng.pick(["", "\n", "<!-- two -->\n"])}`);
	if (kind === "front-matter-only") return utf8(`---\ndescription: ${label}\n---\n${rng.pick(["", "\n", "  \n"])}`);
	const nl = rng.chance(0.2) ? "\r\n" : "\n";
	const words = (n) => Array.from({ length: n }, () => rng.pick(WORDS)).join(" ");
	const queue = [...mentions];
	const next = () => queue.shift();
	const blocks = [];
	if (rng.chance(rule ? 0.5 : 0.12)) blocks.push(frontMatter(rng, label, nl));
	if (rng.chance(0.08)) blocks.push(rng.pick(["\ufeff", " ", "\n", "  \n"]));
	blocks.push(`${rng.pick(["", "# ", "- "])}${label} ${words(rng.int(0, 4))}`);
	const n = rng.int(0, 5) + Math.ceil(queue.length / 2);
	for (let i = 0; i < n; i++) {
		const m = rng.chance(0.7) ? next() : undefined;
		const place = rng.weighted([
			[30, "paragraph"],
			[8, "heading"],
			[8, "list"],
			[8, "codespan"],
			[6, "after-codespan"],
			[8, "fence"],
			[4, "indented"],
			[8, "comment"],
			[5, "comment-residue"],
			[5, "inline-comment"],
			[4, "two-lines"],
		]);
		const w = words(rng.int(0, 3));
		const at = m ?? words(1);
		blocks.push(
			{
				paragraph: `${w}${w ? " " : ""}${at}${rng.chance(0.5) ? ` ${words(2)}` : ""}`,
				heading: `${"#".repeat(rng.int(1, 3))} ${w} ${at}`,
				list: `- ${w} ${at}${nl}- ${words(2)}`,
				codespan: `${w} \`${at}\` ${words(1)}`,
				"after-codespan": `${w} \`code\`${at}`,
				fence: `\`\`\`${nl}${at}${nl}\`\`\``,
				indented: `    ${at}`,
				comment: rng.chance(0.5) ? `<!-- ${at} -->` : `<!--${nl}${w}${nl}${at}${nl}-->`,
				"comment-residue": `<!-- ${w} --> ${at}`,
				"inline-comment": `${w || "x"} <!-- ${at} --> ${words(1)}`,
				"two-lines": `${w || "x"}${nl}${at}`,
			}[place],
		);
		// Indented code follows a blank line after a block that is not a list.
		if (place === "list" && rng.chance(0.5)) blocks.push(words(2));
	}
	// Mentions not placed yet go into one last paragraph.
	if (queue.length) blocks.push(queue.join(" "));
	const sep = () => rng.pick([nl + nl, nl + nl, nl + nl + nl]);
	let text = blocks[0];
	for (let i = 1; i < blocks.length; i++) {
		// Indented code must not follow a list (it would continue the item).
		const indented = blocks[i].startsWith("    ");
		const prevList = blocks[i - 1].startsWith("- ");
		text += indented && prevList ? `${sep()}${words(2)}${sep()}${blocks[i]}` : sep() + blocks[i];
	}
	if (rng.chance(0.8)) text += nl;
	if (rng.chance(0.1)) text += rng.pick(["\n\n", "  ", " \n \n", rng.pick(UNICODE_WS)]);
	let buf = utf8(text);
	if (kind === "invalid") buf = withInvalidUtf8(rng, buf, INVALID);
	return buf;
}

/** A front matter block (with or without `paths:`). */
function frontMatter(rng, label, nl) {
	const paths = rng.weighted([
		[20, null],
		[14, `paths: "src/**/*.ts"`],
		[8, `paths:${nl}  - "lib/**"${nl}  - docs/*.md`],
		[6, "paths: []"],
		[6, "paths:"],
		[6, 'paths: "**"'],
		[5, "paths: ['**/**', '/**']"],
		[5, "paths: [bad"],
		[4, "paths: src/{a,b}/*.md"],
		[4, 'paths: "{**,**}"'],
		[4, "paths: 5"],
		[4, "paths: [1, 2]"],
		[4, "paths: **/*.py"],
		[3, "paths: ' , '"],
	]);
	const lines = ["---"];
	if (rng.chance(0.5)) lines.push(`description: ${label}`);
	if (paths) lines.push(paths);
	lines.push("---");
	return lines.join(nl);
}

/** A random case. */
function genCase(rng) {
	const { files, put, label, serial } = newCase();

	const route = genPath(rng, put, PLAIN_NAMES, EXOTIC_NAMES);
	const { segs, pathDirs, cwdDir } = route;
	const offDirs = [];
	for (const d of pathDirs) if (rng.chance(0.2)) offDirs.push(`${d}/${rng.pick(["other", "tools"])}`);
	if (rng.chance(0.4)) offDirs.push(`${cwdDir}/${rng.pick(["child", "below"])}`);
	for (const d of offDirs) put(d, { dir: true });
	if (rng.chance(0.4)) put("tree/.git", { gitInit: true });

	// Import targets: plain files here and there, some importing further.
	const targetDirs = [cwdDir, ...pathDirs, ...offDirs, "out", "home", `${cwdDir}/docs`];
	const targets = [];
	const newTarget = () => {
		const dir = rng.pick(targetDirs);
		const name = rng.weighted([
			[60, `t${targets.length + 1}.md`],
			[8, `t${targets.length + 1}.txt`],
			[6, `t${targets.length + 1}`],
			[6, `t${targets.length + 1}.png`],
			[5, `t ${targets.length + 1}.md`],
			[4, `t${targets.length + 1}.md.`],
			[4, `.t${targets.length + 1}`],
		]);
		const p = `${dir}/${name}`;
		targets.push(p);
		return p;
	};
	for (let i = rng.int(0, 6); i > 0; i--) newTarget();
	const mentionsFor = (fileDir) => {
		const out = [];
		for (let i = rng.weighted([
			[55, 0],
			[25, 1],
			[12, 2],
			[8, 3],
		]); i > 0; i--) {
			const target = rng.chance(0.15) ? `${rng.pick(targetDirs)}/missing${i}.md` : rng.chance(0.1) ? rng.pick(pathDirs) : targets.length && rng.chance(0.7) ? rng.pick(targets) : newTarget();
			out.push(mention(rng, fileDir, target));
		}
		return out;
	};
	const text = (p, opts) => asValue(genMarkdown(rng, label(), mentionsFor(path.posix.dirname(p)), opts));

	const instruction = (p, opts) => {
		const kind = rng.weighted([
			[88, "text"],
			[5, "symlink"],
			[3, "dangling"],
			[2, "dir"],
			[2, "fifo"],
		]);
		if (kind === "text") return put(p, text(p, opts));
		if (kind === "dir") return put(p, { dir: true });
		if (kind === "fifo") return put(p, { fifo: true });
		if (kind === "dangling") return put(p, { symlink: "nowhere.md" });
		const t = rng.chance(0.5) ? newTarget().replace(/(\.[a-z]+|\.)?$/, ".md") : `out/l${serial()}.md`;
		put(t, text(t, opts));
		put(p, { symlink: `$BASE/${t}` });
	};
	const rulesDir = (dir) => {
		for (let i = rng.int(1, 4); i > 0; i--) {
			const sub = rng.chance(0.25) ? `${rng.pick(["frontend", "x.md", "deep/er"])}/` : "";
			const name = rng.weighted([
				[80, `r${serial()}.md`],
				[8, `r${serial()}.txt`],
				[6, `.r${serial()}.md`],
				[6, `R${serial()}.MD`],
			]);
			const p = `${dir}/${sub}${name}`;
			if (rng.chance(0.1)) {
				const t = rng.chance(0.5) ? `${cwdDir}/shared/s${serial()}.md` : `out/s${serial()}.md`;
				put(t, text(t, { rule: true }));
				put(p, { symlink: `$BASE/${t}` });
			} else instruction(p, { rule: true });
		}
		if (rng.chance(0.05)) put(`${dir}/loop`, { symlink: "." });
	};

	const dirs = [...pathDirs, ...(rng.chance(0.15) ? ["."] : []), ...offDirs];
	for (const d of dirs) {
		const onPath = pathDirs.includes(d) || d === ".";
		if (rng.chance(onPath ? 0.35 : 0.3)) instruction(join(d, "CLAUDE.md"));
		if (rng.chance(0.12)) instruction(join(d, ".claude/CLAUDE.md"));
		if (rng.chance(0.12)) instruction(join(d, "CLAUDE.local.md"));
		if (rng.chance(onPath ? 0.4 : 0.3)) instruction(join(d, "AGENTS.md"));
		if (rng.chance(0.08)) instruction(join(d, ".claude/AGENTS.md"));
		if (rng.chance(0.25)) {
			if (rng.chance(0.1)) {
				const t = rng.chance(0.5) ? `${cwdDir}/linked-rules` : "out/linked-rules";
				put(join(d, ".claude/rules"), { symlink: `$BASE/${t}` });
				rulesDir(t);
			} else rulesDir(join(d, ".claude/rules"));
		}
	}
	// Duplicated text: an AGENTS.md equal to another file is left out.
	if (rng.chance(0.1)) {
		const same = `SAME-TEXT ${label()}\n`;
		for (const p of rng.subset([join(cwdDir, "AGENTS.md"), join(cwdDir, ".claude/rules/same.md"), join(pathDirs[0], "AGENTS.md"), join(cwdDir, "CLAUDE.local.md")], 0.6)) put(p, same);
	}

	// The user's files, in ~/.claude or CLAUDE_CONFIG_DIR.
	const configDir = rng.chance(0.2) ? "alt" : null;
	const userDir = configDir ?? "home/.claude";
	if (rng.chance(0.45)) instruction(`${userDir}/CLAUDE.md`);
	if (rng.chance(0.2)) rulesDir(`${userDir}/rules`);
	if (configDir && rng.chance(0.6)) put("home/.claude/CLAUDE.md", "DECOY-DEFAULT-USER-FILE\n");

	// Import targets get text (some with imports of their own).
	for (const t of targets) if (!(t in files)) put(t, rng.chance(0.05) ? { dir: true } : text(t));

	// The cwd: the directory, or the same directory through a symlink.
	const cwd = cwdMaybeThroughLink(rng, put, route, 0.08);
	// The user's approval of imports outside the working directory, filed
	// under the project's key (its git root, else the cwd) or another.
	const approval = rng.chance(0.3) ? rng.pick(["git-root", "git-root", "cwd", "other", "refused"]) : null;
	return { files, cwd, configDir, disabled: rng.chance(0.02), approval };
}

// ---------------------------------------------------------------------------
// The documented edge cases (docs/agents-context.md), each a named case.

const edge = (name, spec) => ({ name: `edge-${name}`, spec: { files: {}, cwd: "tree", configDir: null, disabled: false, approval: null, ...spec } });
const big = (n, tail) => `${"x ".repeat(n / 2)}${tail}\n`;
const EDGE_CASES = [
	edge("trimmed", { files: { "tree/CLAUDE.md": "\n  \n  X  \n\n  " } }),
	edge("blank-file-skipped", { files: { "tree/CLAUDE.md": " \n\t\n", "tree/CLAUDE.local.md": "L\n" } }),
	edge("front-matter-cut", { files: { "tree/CLAUDE.md": "---\nfoo: bar\n---\nBODY\n" } }),
	edge("paths-on-claude-md-still-loads", { files: { "tree/CLAUDE.md": "---\npaths: ['*.ts']\n---\nBODY\n" } }),
	edge("scoped-rule-left-out", { files: { "tree/.claude/rules/p.md": "---\npaths: ['*.ts']\n---\nSCOPED\n", "tree/.claude/rules/u.md": "UNSCOPED\n" } }),
	edge("paths-variants", {
		files: {
			"tree/.claude/rules/a.md": "---\npaths: []\n---\nEMPTYLIST\n",
			"tree/.claude/rules/b.md": "---\npaths:\n---\nNULLP\n",
			"tree/.claude/rules/c.md": '---\npaths: "**"\n---\nSTAR\n',
			"tree/.claude/rules/d.md": "---\npaths: [bad\n---\nBADYAML\n",
			"tree/.claude/rules/e.md": "---\r\npaths: ['x']\r\n---\r\nCRLFFM\n",
			"tree/.claude/rules/f.md": "\n---\npaths: ['x']\n---\nLEADNL\n",
			"tree/.claude/rules/g.md": "\ufeff---\npaths: ['x']\n---\nBOMFM\n",
			"tree/.claude/rules/h.md": "---\npaths: src/**\n---\nDIRSTAR\n",
		},
	}),
	edge("html-comments", { files: { "tree/CLAUDE.md": "<!-- top -->\nA <!-- inline --> B\n\n<!--\nmulti\n-->\nC\n```\n<!-- in code -->\n```\n" } }),
	edge("html-comment-crlf", { files: { "tree/CLAUDE.md": "A\r\n\r\n<!-- c -->\r\nB\r\n" } }),
	// marked's inline comment is `<!-->`, `<!--->` or up to the first `-->` in its paragraph or
	// heading; without one, `<!--` is text and a mention after it counts (seed 4273400396, r7).
	edge("inline-comments", {
		files: {
			"tree/CLAUDE.md": "A <!-- @u.md --x> B\n\nC <!-- @v.md\n\nD --> E\n\nF <!-- @h.md\n# head --> x\n\nG <!-- @x.md\nH -->@y.md\n\nI <!-->@s1.md J <!--->@s2.md\n",
			"tree/u.md": "U",
			"tree/v.md": "V",
			"tree/h.md": "H",
			"tree/x.md": "X",
			"tree/y.md": "Y",
			"tree/s1.md": "S1",
			"tree/s2.md": "S2",
		},
	}),
	edge("html-comment-residue", { files: { "tree/CLAUDE.md": "<!-- c --> kept @r.md\n\nX\n", "tree/r.md": "R\n" } }),
	edge("import-chain", { files: { "tree/CLAUDE.md": "ROOT @sub/other.md end\n", "tree/sub/other.md": "OTHER @deep.md\n", "tree/sub/deep.md": "DEEP\n" } }),
	edge("import-not-in-code", {
		files: {
			"tree/CLAUDE.md": "a `@x1.md` b\n\n```\n@x2.md\n```\n\n    @x3.md\n\nfoo@x4.md @x5.md. (@x6.md) `c`@x7.md\n",
			"tree/x1.md": "X1",
			"tree/x2.md": "X2",
			"tree/x3.md": "X3",
			"tree/x4.md": "X4",
			"tree/x5.md": "X5",
			"tree/x5.md.": "X5DOT",
			"tree/x6.md": "X6",
			"tree/x6.md)": "X6P",
			"tree/x7.md": "X7",
		},
	}),
	edge("import-forms", {
		files: {
			"tree/CLAUDE.md": "@./a.md\n@~/h.md\n@$BASE/tree/abs.md\n@b.md#frag\n@nope.md\n@dir\n@c.txt\n@d.png\n@e\\ f.md\n@g\n",
			"tree/a.md": "A",
			"home/h.md": "H",
			"tree/abs.md": "ABS",
			"tree/b.md": "B",
			"tree/dir/x": "x",
			"tree/c.txt": "CTXT",
			"tree/d.png": "DPNG",
			"tree/e f.md": "EF",
			"tree/g": "G",
		},
	}),
	edge("import-cycle", { files: { "tree/CLAUDE.md": "@a.md\n", "tree/a.md": "A @b.md\n", "tree/b.md": "B @a.md @CLAUDE.md\n" } }),
	edge("import-depth-four", { files: { "tree/CLAUDE.md": "@1.md\n", "tree/1.md": "1 @2.md", "tree/2.md": "2 @3.md", "tree/3.md": "3 @4.md", "tree/4.md": "4 @5.md", "tree/5.md": "5 @6.md", "tree/6.md": "6" } }),
	edge("import-outside-cwd", { files: { "tree/CLAUDE.md": "T @x.md @sub/y.md\n", "tree/x.md": "TX", "tree/sub/y.md": "SY", "tree/sub/CLAUDE.md": "S @../z.md @w.md\n", "tree/z.md": "TZ", "tree/sub/w.md": "SW" }, cwd: "tree/sub" }),
	// The reproduction of issue 53: approved, `claude -p` in sub/ follows the root's imports.
	edge("import-outside-cwd-approved", { files: { "tree/.git": { gitInit: true }, "tree/CLAUDE.md": "T @AGENTS.md\n", "tree/AGENTS.md": "AG\n", "tree/sub/CLAUDE.md": "S @../z.md\n", "tree/z.md": "TZ" }, cwd: "tree/sub", approval: "git-root" }),
	edge("import-outside-cwd-approved-elsewhere", { files: { "tree/.git": { gitInit: true }, "tree/CLAUDE.md": "T @AGENTS.md\n", "tree/AGENTS.md": "AG\n" }, cwd: "tree/sub", approval: "other" }),
	edge("user-imports-anywhere", { files: { "home/.claude/CLAUDE.md": "U @~/hu.md @../../other/o.md\n", "home/hu.md": "HU", "other/o.md": "OO", "tree/CLAUDE.md": "P\n" } }),
	edge("imported-files-stripped", { files: { "tree/CLAUDE.md": "@a.md @b.md @c.md\n", "tree/a.md": "---\nx: 1\n---\nA-BODY\n", "tree/b.md": "<!-- c -->\nB\n", "tree/c.md": "  \n" } }),
	edge("import-from-a-linked-file", { files: { "tree/CLAUDE.md": { symlink: "$BASE/tree/docs/real.md" }, "tree/docs/real.md": "REAL @./sib.md\n", "tree/docs/sib.md": "FROM-THE-REAL-DIRECTORY\n", "tree/sib.md": "FROM-THE-LINK-DIRECTORY\n" } }),
	edge("import-once", { files: { "tree/CLAUDE.md": "@a.md @a.md\n", "tree/.claude/CLAUDE.md": "@a.md\n", "tree/a.md": "A\n" } }),
	edge("import-in-blocks", { files: { "tree/CLAUDE.md": "# head @h.md\n\n- item @l.md\n\n> quote @q.md\n\nline1\n@n.md\n", "tree/h.md": "H", "tree/l.md": "L", "tree/q.md": "Q", "tree/n.md": "N" } }),
	edge("agents-md-alone", { files: { "tree/AGENTS.md": "AG\n", "tree/.claude/AGENTS.md": "DOTAG\n" } }),
	edge("agents-md-beside-blank-claude-md", { files: { "tree/AGENTS.md": "AG\n", "tree/CLAUDE.md": "  \n" } }),
	edge("agents-md-beside-claude-md", { files: { "tree/AGENTS.md": "AG\n", "tree/CLAUDE.md": "CL\n" } }),
	edge("agents-md-under-parent-claude-md", { files: { "tree/AGENTS.md": "AG\n", "CLAUDE.md": "UP\n", "tree/sub/AGENTS.md": "AGSUB\n" }, cwd: "tree/sub" }),
	edge("agents-md-with-user-file", { files: { "home/.claude/CLAUDE.md": "U\n", "tree/AGENTS.md": "AG\n" } }),
	edge("agents-md-placed-among-rules", { files: { "AGENTS.md": "UP\n", "tree/AGENTS.md": "AG\n", "tree/.claude/rules/r.md": "R\n", "tree/CLAUDE.local.md": "  ", "tree/sub/AGENTS.md": "CH\n" } }),
	edge("agents-md-beside-local", { files: { "tree/AGENTS.md": "AG\n", "tree/CLAUDE.local.md": "LOC\n" } }),
	edge("agents-md-same-text-as-rule", { files: { "tree/AGENTS.md": "SAME\n", "tree/.claude/rules/r.md": "  SAME\n" } }),
	edge("agents-md-imports", { files: { "tree/AGENTS.md": "AG @a.md\n", "tree/a.md": "A\n", "tree/sub/AGENTS.md": "SUB\n", "tree/sub/.claude/rules/r.md": "R\n" }, cwd: "tree/sub" }),
	edge("dot-claude-claude-md", { files: { "tree/.claude/CLAUDE.md": "DOT\n", "tree/CLAUDE.md": "TOP\n" } }),
	edge("rules-nested-and-filtered", { files: { "tree/.claude/rules/b.md": "B\n", "tree/.claude/rules/a.md": "A\n", "tree/.claude/rules/z/c.md": "C\n", "tree/.claude/rules/x.txt": "TXT\n", "tree/.claude/rules/.h.md": "HID\n", "tree/.claude/rules/d.md/y.md": "Y\n" } }),
	edge("rules-symlinks", {
		files: {
			"tree/.claude/rules/in.md": { symlink: "$BASE/tree/docs/in.md" },
			"tree/docs/in.md": "IN\n",
			"tree/.claude/rules/out.md": { symlink: "$BASE/out/out.md" },
			"out/out.md": "OUT\n",
			"tree/.claude/rules/loop": { symlink: "." },
			"tree/.claude/rules/gone.md": { symlink: "nowhere.md" },
		},
	}),
	edge("rules-dir-linked-inside", { files: { "tree/.claude/rules": { symlink: "$BASE/tree/shared" }, "tree/shared/r.md": "SHARED\n" } }),
	edge("rules-dir-linked-outside", { files: { "tree/.claude/rules": { symlink: "$BASE/out/rules" }, "out/rules/r.md": "OUTSIDE\n" } }),
	edge("rules-dir-linked-outside-approved", { files: { "tree/.claude/rules": { symlink: "$BASE/out/rules" }, "out/rules/r.md": "OUTSIDE\n" }, approval: "git-root" }),
	edge("rules-dir-linked-outside-approved-elsewhere", { files: { "tree/.git": { gitInit: true }, "tree/.claude/rules": { symlink: "$BASE/out/rules" }, "out/rules/r.md": "OUTSIDE\n" }, approval: "other" }),
	edge("invalid-utf8-and-crlf", { files: { "tree/CLAUDE.md": { hex: "41ff0d0a420d0a" } } }),
	edge("bom", { files: { "tree/CLAUDE.md": "\ufeffBOM\n" } }),
	edge("symlink-out-of-tree", { files: { "other/x.md": "LINKED\n", "tree/CLAUDE.md": { symlink: "$BASE/other/x.md" } } }),
	edge("user-rules", { files: { "home/.claude/rules/r.md": "UR\n", "home/.claude/CLAUDE.md": "U\n", "tree/CLAUDE.md": "P\n" } }),
	edge("child-claude-md-not-at-start", { files: { "tree/sub/CLAUDE.md": "CHILD\n", "tree/CLAUDE.md": "P\n" } }),
	edge("over-4-mib-skipped", { files: { "tree/CLAUDE.md": big(4 * 1024 * 1024 + 10, "TAIL"), "tree/CLAUDE.local.md": "SMALL\n" } }),
	edge("100-kb-whole", { files: { "tree/CLAUDE.md": big(100_000, "TAIL") } }),
	edge("claude-config-dir", { files: { "cfg/CLAUDE.md": "CFG\n", "home/.claude/CLAUDE.md": "HOMEC\n", "tree/CLAUDE.md": "P\n" }, configDir: "cfg" }),
	edge("directory-named-claude-md", { files: { "tree/CLAUDE.md/x": "x", "tree/CLAUDE.local.md": "L\n" } }),
	edge("home-is-an-ancestor", { files: { "home/CLAUDE.md": "HOMEPROJ\n", "home/.claude/CLAUDE.md": "HOMEUSER\n", "home/proj/CLAUDE.md": "P\n" }, cwd: "home/proj" }),
	edge("disabled", { files: { "tree/CLAUDE.md": "P\n" }, disabled: true }),
	edge("nothing", { files: { "tree/README.md": "not an instruction file\n" } }),
];

// ---------------------------------------------------------------------------
// Running a case.

/** Builds the case under `base`; returns { cwd, home, env } (env without PATH). */
function materialize(base, spec) {
	const { home, cwd } = writeCase(base, spec);
	const env = { HOME: home };
	if (spec.configDir) env.CLAUDE_CONFIG_DIR = path.join(base, spec.configDir);
	if (spec.approval) {
		const real = fs.realpathSync(cwd);
		let gitRoot = real;
		while (!fs.existsSync(path.join(gitRoot, ".git")) && path.dirname(gitRoot) !== gitRoot) gitRoot = path.dirname(gitRoot);
		if (!fs.existsSync(path.join(gitRoot, ".git"))) gitRoot = real;
		const key = { "git-root": gitRoot, refused: gitRoot, cwd: real, other: path.join(base, "tree/elsewhere") }[spec.approval];
		const config = { projects: { [key]: { hasClaudeMdExternalIncludesApproved: spec.approval !== "refused" } } };
		fs.mkdirSync(env.CLAUDE_CONFIG_DIR ?? home, { recursive: true });
		fs.writeFileSync(path.join(env.CLAUDE_CONFIG_DIR ?? home, ".claude.json"), `${JSON.stringify(config)}\n`);
	}
	if (spec.disabled) env.CLAUDE_CODE_DISABLE_CLAUDE_MDS = "1";
	return { cwd, home, env };
}

const stats = { cases: 0, none: 0, sent: 0, imports: 0, agents: 0, mismatches: [] };

async function runCase(name, spec) {
	const base = caseDir(scratch, name);
	const { cwd, home, env } = materialize(base, spec);
	const prompt = `CTX-PROMPT-${SEED}-${name}-END`;

	// promptinclude first (from elsewhere: only --cwd says where), then Claude Code on the same tree.
	const pi = await runContext({ bin: BIN, agent: "claude-code", cwd, home, env, scratch }, "--raw");
	const session = await run(CLAUDE, ["-p", prompt], {
		cwd,
		env: {
			PATH: process.env.PATH,
			ANTHROPIC_BASE_URL: mock.url,
			ANTHROPIC_API_KEY: "sk-ant-mock-key",
			CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
			...env,
		},
	});
	const where = whereCase(name, base);
	assert.equal(session.status, 0, `claude -p failed, ${where}\nspec ${formatSpec(spec)}\n${session.stderr.slice(-3000)}`);
	const req = requestWith(
		mock.requests.filter((r) => r.path === "/v1/messages"),
		prompt,
		textsOf,
	);
	const first = req.body.messages?.[0];
	const parts = (Array.isArray(first?.content) ? first.content : []).filter((c) => c?.type === "text" && c.text.startsWith(HEADER));
	const all = textsOf(req.body);
	req.body = undefined; // the mock keeps every request; these are large

	assert.ok(parts.length <= 1, `${parts.length} instruction parts in one request, ${where}`);
	const sent = parts.length ? utf8(parts[0].text) : null;
	stats.cases++;
	if (!parts.length) stats.none++;
	else {
		stats.sent++;
		assert.equal(first.role, "user", where);
		// One text part carries the whole text: no other string holds its header.
		assert.equal(all.filter((t) => t.includes(HEADER)).length, 1, `the instructions are split or repeated, ${where}`);
		assert.equal(occurrences(all.join("\u0000"), parts[0].text), 1, where);
		if (/Contents of [^\n]*\.md \(project[^\n]*\n\n[^\n]*@/.test(parts[0].text)) stats.imports++;
		if (/Contents of [^\n]*AGENTS\.md /.test(parts[0].text)) stats.agents++;
	}
	if (!(pi.status === 0 && !pi.timedOut && pi.stdout.equals(sent ?? Buffer.alloc(0)))) stats.mismatches.push(name);
	assertSameBytes({
		pi,
		sent,
		agent: "claude",
		where,
		spec,
		paths: `$BASE=${base} cwd=${cwd} home=${home}${env.CLAUDE_CONFIG_DIR ? ` CLAUDE_CONFIG_DIR=${env.CLAUDE_CONFIG_DIR}` : ""}`,
	});
	await assertAuditChain({ bin: BIN, agent: "claude-code", base, cwd, home, env, sent, where });
}

registerContextTests({
	id: "context-claude",
	agent: "Claude Code",
	edgeTitle: "documented edge cases: promptinclude context --agent claude-code prints exactly the instructions part Claude Code sends",
	edgeCases: EDGE_CASES,
	genCase,
	runCase,
	caseMs: 30000,
	agentPath: CLAUDE,
	bin: BIN,
	scratch,
	start: async () => (mock = await startMock({ maxRequests: (CASES + EDGE_CASES.length) * 10 + 100 })),
	summary: () => `${stats.cases} cases run in all: ${stats.sent} with instructions (${stats.imports} with an import line, ${stats.agents} with AGENTS.md), ${stats.none} without; mismatches: ${stats.mismatches.join(", ") || "none"}`,
});
