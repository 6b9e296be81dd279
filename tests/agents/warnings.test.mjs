// The warnings differential: every claim `promptinclude audit --agents`
// makes is checked against the real agents (Claude Code, Codex, Copilot
// CLI, Gemini CLI, opencode, pi, Qwen Code: sessions.mjs), started offline in the
// directories the warning names.
//
// Each case is a random monorepo (a git repository, its external imports
// sometimes approved for Claude Code in ~/.claude.json) in which every file
// carries markers: `MK<n>A` at its start and `MK<n>Z` at its end, so what
// an agent sent shows which files it sent, whole or cut. The audit runs
// over the tree; from its warnings a bounded sample (every kind, up to
// PER_AGENT_KIND warnings of each kind and agent, up to DIRS directories
// each) is checked:
//
//   truncated          Codex sends the file up to the byte named, not one byte more
//                      (or none of it: "not read at all")
//   shadowed           the agent does not send the file's text, and does send the
//                      file it "reads instead" (a file Codex reads "not at all" for
//                      its byte limit: sent by a second session without the limit)
//   not_shared         the agent does not send the text; every agent named as
//                      loading it does; the file the agent "reads instead" is sent
//   unresolved_import  the importer's text is sent, the import's is not
//   import_too_deep    the same
//   import_cycle       the file's text is sent once
//   duplicate          the text is sent at least twice
//   dead_scope         Claude Code does not send the rule at start, and does once
//                      the model reads a path it matches ("never loads": not even then)
//   bad_front_matter   "loads everywhere": sent at start; "never matches": not sent
//                      after a read of the path it was meant for; "at any depth":
//                      sent after a read of a path that deep
//   over_recommended   `claude -p` sends the file whole (it warns only in an
//                      interactive session, which is not run here)
//
// And the other way round, for every session run: every context file of
// the tree on the agent's path that the agent leaves out or cuts is named
// by a warning of that agent (its imports too).
//
//   PROMPTINCLUDE_WARNINGS_SEED=N   repeat a run (printed as `# warnings seed: N`)
//   PROMPTINCLUDE_WARNINGS_CASES=N  random trees per run (default 5)
//   KEEP_E2E_TMP=1                  keep the trees

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { Rng, runBytes } from "./context-harness.mjs";
import { BIN, occurrences } from "./helpers.mjs";
import { AGENTS, missingAgents, startAgents } from "./sessions.mjs";

const SEED = (() => {
	const s = process.env.PROMPTINCLUDE_WARNINGS_SEED;
	if (s === undefined || s === "") return crypto.randomInt(0, 2 ** 32);
	assert.match(s, /^\d+$/, "PROMPTINCLUDE_WARNINGS_SEED must be a decimal integer");
	return Number(s) >>> 0;
})();
const CASES = Number(process.env.PROMPTINCLUDE_WARNINGS_CASES || 5);
const PER_AGENT_KIND = 2;
const DIRS = 2;
const CONCURRENCY = 3;
console.log(`warnings seed: ${SEED}`); // TAP shows it as `# warnings seed: N`

const scratch = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-warnings-")));
let agents;

// ---------------------------------------------------------------------------
// The generator.

const DIR_POOL = ["svc", "svc/deep", "app", "app/web", "lib"];
/**
 * Front matter of `.claude/rules` files, and a path (under the root) to have
 * Claude Code read: one the rule is meant for.
 */
const SCOPES = [
	{ fm: null },
	{ fm: 'paths: "**/*.rs"', read: "src/new.rs" },
	{ fm: 'paths:\n  - "docs/*.txt"', read: "docs/new.txt" },
	{ fm: "paths: []" },
	{ fm: "paths: [bad", read: "deep/[bad" },
	{ fm: 'paths: ["./src/*.ts"]', read: "src/new.ts" },
	{ fm: 'paths: ["gen/**"]', read: "lib/gen/new.txt" },
	{ fm: 'paths: ["*.py"]', read: "deep/er/new.py" },
	{ fm: "paths: [5, 'x/*.md']", read: "x/new.md" },
];
/** Files that make some scopes match. */
const MATCHING = ["src/main.rs", "docs/a.txt", "lib/gen/g.txt", "tool.py", "x/a.md"];
const WORDS = ["use", "tabs", "test", "the", "api", "rule", "fmt", "lint", "always", "never"];

/**
 * A random tree: { files: { rel: text | {symlink} }, meta: { rel: { begin,
 * end, text, imports: [rel] , scope } }, codexMaxBytes, trusted }. Paths are
 * relative to the case's base; the tree is `tree/`.
 */
function genCase(rng) {
	const files = {};
	const meta = {};
	let n = 0;
	/** The files `imports` (as written in `rel`) name. */
	const resolved = (rel, imports) => imports.map((i) => path.posix.normalize(path.posix.join(path.posix.dirname(rel), i)));
	const words = (k) => Array.from({ length: k }, () => rng.pick(WORDS)).join(" ");
	/** Puts a marked text at `rel`, with `imports` (paths relative to the file) in its middle. */
	const marked = (rel, { imports = [], head = "", filler = "" } = {}) => {
		n++;
		const body = `${head}MK${n}A rules of ${rel.replace(/^tree\/?/, "") || "."}: ${words(rng.int(1, 24))}${imports.map((i) => ` @${i}`).join("")} ${filler}${words(rng.int(0, 4))} MK${n}Z\n`;
		files[rel] = body;
		meta[rel] = { begin: `MK${n}A`, end: `MK${n}Z`, text: body, written: imports, imports: resolved(rel, imports) };
		return meta[rel];
	};
	const dirs = ["tree"];
	for (const d of rng.subset(DIR_POOL, 0.55)) {
		const parent = path.posix.dirname(d);
		if (parent !== "." && !dirs.includes(`tree/${parent}`)) dirs.push(`tree/${parent}`);
		if (!dirs.includes(`tree/${d}`)) dirs.push(`tree/${d}`);
	}
	const importsFor = (dir) => {
		const out = [];
		for (let i = rng.weighted([
			[50, 0],
			[30, 1],
			[20, 2],
		]); i > 0; i--) {
			const kind = rng.pick(dir === "tree" ? ["missing", "deep", "cycle", "plain"] : ["missing", "deep", "cycle", "plain", "outside", "outside"]);
			const rel = path.posix.relative(dir, "tree") || ".";
			const at = (p) => (rel === "." ? p : `${rel}/${p}`);
			if (kind === "missing") out.push(at(`imp/nope${++n}.md`));
			if (kind === "plain") {
				const p = `tree/imp/p${n + 1}.md`;
				marked(p);
				out.push(at(`imp/${path.posix.basename(p)}`));
			}
			if (kind === "deep" && !meta["tree/imp/d1.md"]) {
				for (let k = 7; k >= 1; k--) marked(`tree/imp/d${k}.md`, { imports: k < 7 ? [`d${k + 1}.md`] : [] });
				out.push(at("imp/d1.md"));
			}
			if (kind === "cycle" && !meta["tree/imp/c1.md"]) {
				marked("tree/imp/c1.md", { imports: ["c2.md"] });
				marked("tree/imp/c2.md", { imports: ["c1.md"] });
				out.push(at("imp/c1.md"));
			}
			if (kind === "outside") {
				const up = `${path.posix.dirname(dir)}/up${n + 1}.md`;
				marked(up);
				out.push(`../${path.posix.basename(up)}`);
			}
		}
		return out;
	};
	const big = () => `${"lorem ipsum dolor ".repeat(2400)}`;
	for (const d of dirs) {
		if (rng.chance(0.55)) marked(`${d}/AGENTS.md`);
		if (rng.chance(0.12)) marked(`${d}/AGENTS.override.md`);
		if (rng.chance(0.4)) {
			const form = rng.weighted([
				[60, "text"],
				[20, "imports-agents"],
				[12, "link"],
			]);
			if (form === "link" && meta[`${d}/AGENTS.md`]) {
				files[`${d}/CLAUDE.md`] = { symlink: "AGENTS.md" };
				meta[`${d}/CLAUDE.md`] = { ...meta[`${d}/AGENTS.md`], link: `${d}/AGENTS.md` };
			} else {
				const imports = [...(form === "imports-agents" ? ["AGENTS.md"] : []), ...importsFor(d)];
				marked(`${d}/CLAUDE.md`, { imports, filler: rng.chance(0.06) ? big() : "" });
			}
		}
		if (rng.chance(0.07)) marked(`${d}/CLAUDE.local.md`);
		if (rng.chance(0.05)) marked(`${d}/.claude/CLAUDE.md`);
		if (rng.chance(0.35)) marked(`${d}/GEMINI.md`, { imports: importsFor(d) });
	}
	if (rng.chance(0.5)) {
		for (let i = rng.int(1, 3); i > 0; i--) {
			const scope = rng.pick(SCOPES);
			const m = marked(`tree/.claude/rules/r${n + 1}.md`, { head: scope.fm ? `---\n${scope.fm}\n---\n` : "" });
			m.scope = scope;
		}
	}
	for (const f of rng.subset(MATCHING, 0.25)) files[`tree/${f}`] = "not a context file\n";
	// Duplicates: a context file's text again under another context name.
	if (rng.chance(0.35)) {
		const sources = Object.keys(meta).filter((rel) => !meta[rel].link && /\/(AGENTS|CLAUDE|GEMINI)\.md$/.test(rel));
		const names = dirs.flatMap((d) => ["AGENTS.md", "CLAUDE.md", "GEMINI.md"].map((f) => `${d}/${f}`)).filter((rel) => !files[rel]);
		if (sources.length && names.length) {
			const from = rng.pick(sources);
			const to = rng.pick(names);
			files[to] = files[from];
			meta[to] = { ...meta[from], copyOf: from, imports: resolved(to, meta[from].written) };
			meta[from].copied = true;
		}
	}
	return {
		dirs,
		files,
		meta,
		codexMaxBytes: rng.chance(0.5) ? rng.int(30, 300) : undefined,
		trusted: rng.chance(0.85),
		// The user approved Claude Code's imports from outside the working directory for the repository.
		approved: rng.chance(0.3),
	};
}

/** Writes the case under `base` (a git repository `tree`, a `home` set up for every agent). */
function writeCase(base, spec) {
	const tree = path.join(base, "tree");
	fs.mkdirSync(tree, { recursive: true });
	execFileSync("git", ["init", "-q", tree], { stdio: "ignore" });
	for (const [rel, v] of Object.entries(spec.files)) {
		const file = path.join(base, rel);
		fs.mkdirSync(path.dirname(file), { recursive: true });
		if (typeof v === "string") fs.writeFileSync(file, v);
		else fs.symlinkSync(v.symlink, file);
	}
	for (const d of spec.dirs) fs.mkdirSync(path.join(base, d), { recursive: true });
	const { meta, ...shown } = spec;
	fs.writeFileSync(path.join(base, "spec.json"), `${JSON.stringify(shown, null, 1)}\n`);
	const home = path.join(base, "home");
	fs.mkdirSync(home, { recursive: true });
	agents.prepareHome(home, { codexMaxBytes: spec.codexMaxBytes });
	if (spec.approved) fs.writeFileSync(path.join(home, ".claude.json"), JSON.stringify({ projects: { [tree]: { hasClaudeMdExternalIncludesApproved: true } } }));
	return { tree, home };
}

// ---------------------------------------------------------------------------
// Checking the claims.

/** Runs at most `n` of the functions given to it at a time. */
function limiter(n) {
	let active = 0;
	const queue = [];
	const next = () => {
		if (active >= n || !queue.length) return;
		active++;
		const { fn, resolve, reject } = queue.shift();
		fn()
			.then(resolve, reject)
			.finally(() => {
				active--;
				next();
			});
	};
	return (fn) =>
		new Promise((resolve, reject) => {
			queue.push({ fn, resolve, reject });
			next();
		});
}
const pool = limiter(CONCURRENCY);

/** The names each agent reads in every directory from the root to where it starts. */
const CHAIN_NAMES = {
	"claude-code": ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "AGENTS.md"],
	codex: ["AGENTS.override.md", "AGENTS.md"],
	"copilot-cli": ["AGENTS.md", "CLAUDE.md", "GEMINI.md"],
	gemini: ["GEMINI.md"],
	opencode: ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"],
	"qwen-code": ["QWEN.md", "AGENTS.md"],
	pi: ["AGENTS.md", "CLAUDE.md"],
};
/** The agents that follow `@imports`, and in which of their files. */
const FOLLOWS_IMPORTS = { "claude-code": () => true, "copilot-cli": (rel) => !rel.endsWith("GEMINI.md"), "qwen-code": (rel) => !rel.endsWith("GEMINI.md") && !rel.endsWith("CLAUDE.md"), gemini: (rel) => rel.endsWith("GEMINI.md") || rel.startsWith("tree/imp/") || /\/up\d+\.md$/.test(rel) };
/** Rules that load at start: unscoped, or scoped by nothing Claude Code can read. */
const LOADS_EVERYWHERE = new Set([null, "paths: []"]);

const stats = { cases: 0, sessions: 0, checked: {}, skipped: {}, reverse: 0 };
const tally = (into, key) => (into[key] = (into[key] ?? 0) + 1);

/** Runs case `index`: the audit, then its sampled claims and the reverse check; returns the false claims. */
async function runCase(index) {
	const name = `r${index}`;
	const rng = new Rng(SEED, index);
	const spec = genCase(rng);
	const base = fs.mkdtempSync(path.join(scratch, `${name}-`));
	const { tree, home } = writeCase(base, spec);
	// The audit's default view trusts the folder for the agents with folder
	// trust, so the sessions run trusted to match; an untrusted case is the
	// audit's first-open view, the sessions left untrusted.
	const env = spec.trusted ? { GEMINI_CLI_TRUST_WORKSPACE: "true" } : {};
	const view = spec.trusted ? [] : ["--view", "first-open"];
	const where = `seed ${SEED}, case ${name} (repeat: PROMPTINCLUDE_WARNINGS_SEED=${SEED}; tree at ${base}, kept with KEEP_E2E_TMP=1)`;

	const audit = await runBytes(BIN, ["audit", "--agents", AGENTS.join(","), ...view, "--home", home, "--json", tree], { cwd: scratch, env: { PATH: process.env.PATH, HOME: home } });
	assert.equal(audit.status, 0, `audit failed, ${where}: ${audit.stderr}`);
	const record = audit.stdout
		.toString("utf8")
		.split("\n")
		.filter(Boolean)
		.map((l) => JSON.parse(l))
		.find((r) => r.type === "root");
	const warnings = record.agents.warnings;
	stats.cases++;

	const rel = (p) => path.relative(base, p);
	const abs = (r) => path.join(base, r);
	const metaOf = (p) => spec.meta[rel(p)];
	/** A root-relative name (as messages give them) as a path under `base`. */
	const named = (shown) => (shown === "." ? "tree" : `tree/${shown}`);

	const sessions = new Map();
	let serial = 0;
	const session = (agent, dir, read, codexMaxBytes) => {
		const key = `${agent}\0${dir}\0${read ?? ""}\0${codexMaxBytes ?? ""}`;
		if (!sessions.has(key)) {
			const prompt = `WARN-PROMPT-${SEED}-${name}-${++serial}-END`;
			sessions.set(
				key,
				pool(async () => {
					const s = await agents.session(agent, { cwd: dir, home, env, prompt, read, codexMaxBytes });
					stats.sessions++;
					if (s.sent === null && !(agent === "gemini" && !spec.trusted)) assert.fail(`${agent} in ${dir} sent no request (exit ${s.status}), ${where}\n${s.stderr.slice(-2000)}`);
					return { agent, dir, read, codexMaxBytes, ...s };
				}),
			);
		}
		return sessions.get(key);
	};
	const count = (texts, needle) => (texts ?? []).reduce((k, t) => k + occurrences(t, needle), 0);
	/**
	 * Whether `agent` started in `d` reads the file shown as `shown` in place
	 * of `m`. A file Codex reads "not at all" because the files before it use
	 * up the limit (its truncated warning says so) cannot show that it is
	 * read: a second session without the limit does.
	 */
	const readsInstead = async (agent, d, shown, m) => {
		const other = spec.meta[named(shown)];
		if (!other) return `no file ${shown} that ${agent} reads instead`;
		const s = await session(agent, d);
		if (count(s.sent, other.begin) > 0) return null;
		const unread = warnings.some((x) => x.kind === "truncated" && x.agent === agent && rel(x.path) === named(shown) && x.dirs.includes(d) && /^not read at all/.test(x.message));
		if (agent !== "codex" || !unread) return `${agent} does not send ${shown}, which it "reads instead"`;
		const free = await session(agent, d, undefined, 1 << 20);
		if (count(free.sent, m.begin) > 0) return `without the byte limit Codex sends its text`;
		return count(free.sent, other.begin) > 0 ? null : `${agent} does not send ${shown}, which it "reads instead", even without the byte limit`;
	};

	/** Each kind's check of one warning `w` in directory `d`: null (holds), a string (false), or { skip }. */
	const checks = {
		async truncated(w, d, m) {
			if (m.copied || m.copyOf) return { skip: "its text is in two files" };
			const s = await session("codex", d);
			const cut = /^cut at byte (\d+) of (\d+)/.exec(w.message);
			if (!cut) return count(s.sent, m.begin) === 0 ? null : "Codex sends its start";
			const at = Number(cut[1]);
			// What follows the cut in the file, up to its first character that is not white space.
			const lost = /^\s*\S/.exec(m.text.slice(at));
			if (!lost) return { skip: "only white space is cut off" };
			const upTo = count(s.sent, m.text.slice(0, at));
			const past = count(s.sent, m.text.slice(0, at + lost[0].length));
			return at > 0 && upTo > past ? null : `Codex sends its first ${at} bytes ${upTo} times, and ${past} times with what follows them`;
		},
		async shadowed(w, d, m) {
			if (m.copied || m.copyOf) return { skip: "its text is in two files" };
			const s = await session(w.agent, d);
			if (count(s.sent, m.begin) > 0) return `${w.agent} sends its text`;
			const by = /^never read: (.+) is read instead$/.exec(w.message);
			if (!by) return `the message does not name the file read instead: ${w.message}`;
			return readsInstead(w.agent, d, by[1], m);
		},
		async not_shared(w, d, m) {
			const parsed = /^(.+?) loads? it; (\S+) does not when started in the same directory \((.*)\)$/s.exec(w.message);
			if (!parsed) return `the message does not say who loads it: ${w.message}`;
			const [, loaders, agent, why] = parsed;
			const s = await session(agent, d);
			if (count(s.sent, m.begin) > 0) return `${agent} sends its text`;
			for (const other of loaders.split(/, | and /)) {
				const o = await session(other, d);
				// A file Codex cuts before its marker: its truncated warning says so.
				const cut = warnings.some((x) => x.kind === "truncated" && x.agent === other && x.path === w.path && x.dirs.includes(d));
				if (count(o.sent, m.begin) === 0 && !cut) return `${other} does not send it`;
			}
			const instead = /reads (.+?) instead/.exec(why);
			if (instead) {
				const wrong = await readsInstead(agent, d, instead[1], m);
				if (wrong) return wrong;
			}
			if (/not trusted/.test(why) && s.sent !== null) return `${agent} sent a request in a folder the audit calls untrusted`;
			return null;
		},
		async unresolved_import(w, d, m) {
			const by = /^imported by (.+?): /.exec(w.message);
			const s = await session(w.agent, d);
			if (by) {
				const importer = spec.meta[named(by[1])];
				if (importer && count(s.sent, importer.begin) === 0) return `${w.agent} does not send the importer ${by[1]}`;
			}
			if (m && count(s.sent, m.begin) > 0) return `${w.agent} sends the import's text`;
			return null;
		},
		import_too_deep: (w, d, m) => checks.unresolved_import(w, d, m),
		async import_cycle(w, d, m) {
			if (m.copied || m.copyOf) return { skip: "its text is in two files" };
			const s = await session(w.agent, d);
			const k = count(s.sent, m.begin);
			return k === 1 ? null : `${w.agent} sends its text ${k} times`;
		},
		async duplicate(w, d, m) {
			const s = await session(w.agent, d);
			const k = count(s.sent, m.begin);
			return k >= 2 ? null : `${w.agent} sends its text ${k} times`;
		},
		async dead_scope(w, d, m) {
			const s = await session("claude-code", tree);
			if (count(s.sent, m.begin) > 0) return "Claude Code sends the rule at start";
			if (!m.scope?.read) return null;
			const r = await session("claude-code", tree, path.join(tree, m.scope.read));
			const sent = count(r.afterRead, m.begin) > 0;
			if (/never loads/.test(w.message)) return sent ? `Claude Code sends the rule after reading ${m.scope.read}` : null;
			return sent ? null : `Claude Code does not send the rule after reading ${m.scope.read}`;
		},
		async bad_front_matter(w, d, m) {
			if (/loads everywhere/.test(w.message)) {
				const s = await session("claude-code", tree);
				return count(s.sent, m.begin) > 0 ? null : "Claude Code does not send the rule at start";
			}
			if (!m.scope?.read) return { skip: `no path to read: ${w.message}` };
			if (/never matches/.test(w.message) || /at any depth/.test(w.message)) {
				const r = await session("claude-code", tree, path.join(tree, m.scope.read));
				const sent = count(r.afterRead, m.begin) > 0;
				if (/never matches/.test(w.message)) return sent ? `Claude Code sends the rule after reading ${m.scope.read}` : null;
				return sent ? null : `Claude Code does not send the rule after reading ${m.scope.read}`;
			}
			if (/is not a string: ignored/.test(w.message)) {
				const r = await session("claude-code", tree, path.join(tree, m.scope.read));
				return count(r.afterRead, m.begin) > 0 ? null : `Claude Code does not send the rule after reading ${m.scope.read}, which its other patterns match`;
			}
			return { skip: `not a claim about what is sent: ${w.message}` };
		},
		async over_recommended(w, d, m) {
			const s = await session("claude-code", d);
			return count(s.sent, m.begin) > 0 && count(s.sent, m.end) > 0 ? null : "`claude -p` does not send it whole";
		},
	};

	// The sample: up to PER_AGENT_KIND warnings of each kind and agent, up to DIRS directories of each.
	const groups = new Map();
	for (const w of warnings) groups.set(`${w.kind}/${w.agent}`, [...(groups.get(`${w.kind}/${w.agent}`) ?? []), w]);
	const jobs = [];
	for (const [group, list] of groups) {
		for (const w of rng.shuffle(list).slice(0, PER_AGENT_KIND)) {
			const check = checks[w.kind];
			if (!check) {
				tally(stats.skipped, `${group}: no check`);
				continue;
			}
			for (const d of w.dirs.length ? rng.shuffle(w.dirs).slice(0, DIRS) : [tree]) {
				jobs.push(
					(async () => {
						const result = await check(w, d, metaOf(w.path));
						if (result?.skip) tally(stats.skipped, `${group}: ${result.skip}`);
						else tally(stats.checked, group);
						return typeof result === "string" ? `${w.kind} (${w.agent}) ${rel(w.path)}, started in ${rel(d) || "."}: "${w.message}" is false: ${result}` : null;
					})(),
				);
			}
		}
	}
	const problems = (await Promise.all(jobs)).filter(Boolean);

	// The other way round: what each session left out or cut is named by a warning.
	for (const s of await Promise.all(sessions.values())) {
		if (s.read || s.codexMaxBytes !== undefined || s.sent === null) continue;
		stats.reverse++;
		const chain = [];
		for (let d = rel(s.dir); ; d = path.posix.dirname(d)) {
			for (const f of CHAIN_NAMES[s.agent]) if (spec.meta[`${d}/${f}`]) chain.push(`${d}/${f}`);
			if (d === "tree") break;
		}
		if (s.agent === "claude-code") for (const [r, m] of Object.entries(spec.meta)) if (r.startsWith("tree/.claude/rules/") && LOADS_EVERYWHERE.has(m.scope?.fm ?? null)) chain.push(r);
		const follows = FOLLOWS_IMPORTS[s.agent];
		for (let i = 0; i < chain.length; i++) {
			const m = spec.meta[chain[i]];
			if (follows?.(chain[i]) && count(s.sent, m.begin) > 0) for (const imp of m.imports) if (spec.meta[imp] && !chain.includes(imp)) chain.push(imp);
		}
		for (const r of chain) {
			const m = spec.meta[r];
			const out = count(s.sent, m.begin) === 0 ? "leaves out" : count(s.sent, m.end) === 0 ? "cuts" : null;
			if (!out) continue;
			const named = warnings.some((w) => w.agent === s.agent && (rel(w.path) === r || rel(w.path) === m.link));
			if (!named) problems.push(`${s.agent} started in ${rel(s.dir)} ${out} ${r}, and no warning of ${s.agent} names it`);
		}
	}
	if (problems.length)
		assert.fail(
			[`${problems.length} false claims, ${where}:`, ...problems.map((p) => `  - ${p}`), `warnings: ${warnings.map((w) => `\n  ${w.kind} ${w.agent} ${rel(w.path)} [${w.dirs.map(rel).join(", ")}]: ${w.message}`).join("")}`].join("\n"),
		);
}

before(async () => {
	assert.ok(BIN && fs.existsSync(BIN), `PROMPTINCLUDE_BIN=${BIN} is not a file`);
	agents = await startAgents();
});
after(async () => {
	await agents?.close();
	if (!process.env.KEEP_E2E_TMP) fs.rmSync(scratch, { recursive: true, force: true });
});

test(`every warning of audit --agents holds in the real agents (seed ${SEED}, ${CASES} random monorepos)`, { timeout: CASES * 240_000 }, async (t) => {
	const missing = missingAgents();
	if (missing.length) {
		assert.notEqual(process.env.PROMPTINCLUDE_REQUIRE_ORACLE, "1", `${missing.join(", ")} not installed (PROMPTINCLUDE_REQUIRE_ORACLE=1)`);
		return t.skip(`${missing.join(", ")} not installed: run tests/agents/run.sh and tests/pi/run.sh`);
	}
	t.diagnostic(`warnings seed: ${SEED}`);
	for (let i = 0; i < CASES; i++) await t.test(`r${i}`, () => runCase(i));
	const kinds = Object.entries(stats.checked).map(([k, n]) => `${k} ${n}`);
	const skipped = Object.entries(stats.skipped).map(([k, n]) => `${k} ${n}`);
	t.diagnostic(`warnings seed ${SEED}: ${stats.cases} trees, ${stats.sessions} agent sessions; claims checked: ${kinds.join(", ") || "none"}; not checked: ${skipped.join(", ") || "none"}; ${stats.reverse} sessions checked the other way round`);
});
