// What the differential tests of `promptinclude context` share
// (context-*.test.mjs): the seeded generator, building a case's tree on
// disk, running a command for its bytes, and the failure message that
// shows where promptinclude and the agent differ.
//
//   PROMPTINCLUDE_CONTEXT_SEED=N         repeat a run (each test prints its seed)
//   PROMPTINCLUDE_CONTEXT_CASES=N        random cases per run (default 100)
//   PROMPTINCLUDE_CONTEXT_ONLY=r7,edge-x run only these cases (random index `rN` or edge case name)
//   PROMPTINCLUDE_CONTEXT_CONCURRENCY=N  agent sessions at a time (default 4)
//   KEEP_E2E_TMP=1                       keep the case trees (each has its spec.json)

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";

/** The run's settings, from the environment. */
export const SEED = (() => {
	const s = process.env.PROMPTINCLUDE_CONTEXT_SEED;
	if (s === undefined || s === "") return crypto.randomInt(0, 2 ** 32);
	assert.match(s, /^\d+$/, "PROMPTINCLUDE_CONTEXT_SEED must be a decimal integer");
	return Number(s) >>> 0;
})();
export const CASES = Number(process.env.PROMPTINCLUDE_CONTEXT_CASES || 100);
/** PROMPTINCLUDE_CONTEXT_CASES, else `n` (for an agent whose sessions are slow). */
export const casesOr = (n) => (process.env.PROMPTINCLUDE_CONTEXT_CASES ? CASES : n);
export const CONCURRENCY = Math.max(1, Number(process.env.PROMPTINCLUDE_CONTEXT_CONCURRENCY || 4));
const ONLY = process.env.PROMPTINCLUDE_CONTEXT_ONLY ? new Set(process.env.PROMPTINCLUDE_CONTEXT_ONLY.split(",").map((s) => s.trim())) : null;
/** Whether the case `name` runs (PROMPTINCLUDE_CONTEXT_ONLY). */
export const selected = (name) => !ONLY || ONLY.has(name);

// ---------------------------------------------------------------------------
// Seeded randomness: sfc32, each case on its own stream (seed, case index),
// so a case is the same whatever PROMPTINCLUDE_CONTEXT_CASES is.

function splitmix32(a) {
	return () => {
		a = (a + 0x9e3779b9) | 0;
		let t = a ^ (a >>> 16);
		t = Math.imul(t, 0x21f0aaad);
		t ^= t >>> 15;
		t = Math.imul(t, 0x735a2d97);
		return (t ^ (t >>> 15)) >>> 0;
	};
}

export class Rng {
	constructor(seed, stream) {
		const sm = splitmix32((seed ^ Math.imul(stream + 1, 0x85ebca6b)) >>> 0);
		this.s = [sm(), sm(), sm(), sm()];
		for (let i = 0; i < 12; i++) this.u32();
	}
	u32() {
		let [a, b, c, d] = this.s;
		const t = (((a + b) | 0) + d) | 0;
		d = (d + 1) | 0;
		a = b ^ (b >>> 9);
		b = (c + (c << 3)) | 0;
		c = (c << 21) | (c >>> 11);
		c = (c + t) | 0;
		this.s = [a, b, c, d];
		return t >>> 0;
	}
	float() {
		return this.u32() / 2 ** 32;
	}
	/** An integer in [lo, hi]. */
	int(lo, hi) {
		return lo + Math.floor(this.float() * (hi - lo + 1));
	}
	chance(p) {
		return this.float() < p;
	}
	pick(list) {
		return list[Math.floor(this.float() * list.length)];
	}
	/** weighted([[weight, value], ...]) */
	weighted(pairs) {
		let x = this.float() * pairs.reduce((s, [w]) => s + w, 0);
		for (const [w, v] of pairs) if ((x -= w) < 0) return v;
		return pairs.at(-1)[1];
	}
	shuffle(list) {
		const a = [...list];
		for (let i = a.length - 1; i > 0; i--) {
			const j = Math.floor(this.float() * (i + 1));
			[a[i], a[j]] = [a[j], a[i]];
		}
		return a;
	}
	subset(list, p = 0.5) {
		return list.filter(() => this.chance(p));
	}
}

// ---------------------------------------------------------------------------
// Case specs: { files: { "<path under $BASE>": value }, ... } where a value is
// "utf-8 text" | {hex} | {symlink: target} | {dir: true} | {fifo: true} |
// {gitInit: true} (on "<dir>/.git": `git init <dir>`). Targets may use $BASE.

export const utf8 = (s) => Buffer.from(s, "utf8");
export const isUtf8 = (buf) => Buffer.from(buf.toString("utf8"), "utf8").equals(buf);
export const asValue = (buf) => (isUtf8(buf) ? buf.toString("utf8") : { hex: buf.toString("hex") });
export const join = (dir, name) => (dir === "." ? name : `${dir}/${name}`);
export const expand = (s, base) => s.replaceAll("$BASE", base);

/** Writes `spec.json` and every entry of `spec.files` under `base`. */
export function writeTree(base, spec) {
	fs.writeFileSync(path.join(base, "spec.json"), `${formatSpec(spec)}\n`);
	const entries = Object.entries(spec.files);
	const at = (rel) => path.join(base, rel);
	for (const [rel, v] of entries) if (v?.dir) fs.mkdirSync(at(rel), { recursive: true });
	for (const [rel, v] of entries) {
		if (!v?.gitInit) continue;
		fs.mkdirSync(path.dirname(at(rel)), { recursive: true });
		execFileSync("git", ["init", "-q", path.dirname(at(rel))], { stdio: "ignore" });
	}
	for (const [rel, v] of entries) {
		if (v?.dir || v?.gitInit) continue;
		const file = at(rel);
		fs.mkdirSync(path.dirname(file), { recursive: true });
		if (typeof v === "string") fs.writeFileSync(file, expand(v, base));
		else if (v.hex !== undefined) fs.writeFileSync(file, Buffer.from(v.hex, "hex"));
		else if (v.symlink !== undefined) fs.symlinkSync(expand(v.symlink, base), file);
		else if (v.fifo) execFileSync("mkfifo", [file]);
		else throw new Error(`bad spec value for ${rel}: ${JSON.stringify(v)}`);
	}
}

/** Spawns `command`, collecting stdout as bytes; kills it after `ms`. */
export function runBytes(command, args, { cwd, env, ms = 60_000 }) {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
		const out = [];
		let stderr = "";
		let timedOut = false;
		child.stdout.on("data", (d) => out.push(d));
		child.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => {
			timedOut = true;
			child.kill("SIGKILL");
		}, ms);
		child.on("error", reject);
		child.on("close", (status, signal) => {
			clearTimeout(timer);
			resolve({ status, signal, timedOut, stdout: Buffer.concat(out), stderr });
		});
	});
}

// ---------------------------------------------------------------------------
// Showing a difference.

/** JSON with every non-ASCII character escaped as \uXXXX (still valid JSON). */
function escapeNonAscii(json) {
	return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0")}`);
}
/** A text as a JSON string literal, escapes visible; bytes that are not UTF-8 shown as hex. */
export function show(bytes, limit = 6000) {
	if (bytes === null) return "(none)";
	const s = isUtf8(bytes) ? escapeNonAscii(JSON.stringify(bytes.toString("utf8"))) : `(not UTF-8) hex ${bytes.toString("hex")}`;
	return s.length > limit ? `${s.slice(0, limit / 2)} …[${s.length - limit} more]… ${s.slice(-limit / 2)}` : s;
}
/** The spec as JSON, one line per file, non-ASCII escaped. */
export function formatSpec(spec) {
	const { files, ...rest } = spec;
	const lines = Object.entries(files).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
	const tail = Object.entries(rest).map(([k, v]) => `,\n ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
	return escapeNonAscii(`{\n "files": {\n${lines.join(",\n")}\n }${tail.join("")}\n}`);
}
/** buf[a, b), widened to whole UTF-8 characters. */
function around(buf, a, b) {
	a = Math.max(0, a);
	b = Math.min(buf.length, b);
	while (a > 0 && (buf[a] & 0xc0) === 0x80) a--;
	while (b < buf.length && (buf[b] & 0xc0) === 0x80) b++;
	return buf.subarray(a, b);
}
function firstDifference(a, b) {
	const n = Math.min(a.length, b.length);
	for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
	return a.length === b.length ? -1 : n;
}

/**
 * Fails unless `pi` (a runBytes result of `promptinclude context --raw`)
 * printed exactly `sent` (the agent's bytes, or null for nothing).
 * `agent` names the agent; `where` says how to repeat the case.
 */
export function assertSameBytes({ pi, sent, agent, where, spec, paths }) {
	const expected = sent ?? Buffer.alloc(0);
	if (pi.status === 0 && !pi.timedOut && pi.stdout.equals(expected)) return;
	const at = firstDifference(pi.stdout, expected);
	const pad = " ".repeat(Math.max(0, "promptinclude".length - agent.length));
	assert.fail(
		[
			`promptinclude context differs from what ${agent} sent, ${where}`,
			`promptinclude: exit ${pi.status}${pi.signal ? ` (${pi.signal})` : ""}${pi.timedOut ? " (timed out, killed)" : ""}; stderr: ${JSON.stringify(pi.stderr.slice(-2000))}`,
			`first differing byte: ${at} (promptinclude ${pi.stdout.length} bytes, ${agent} ${expected.length} bytes)`,
			`${agent}:${pad} ${show(sent)}`,
			`promptinclude: ${pi.stdout.length || sent ? show(pi.stdout) : "(empty)"}`,
			...(at > 200 && expected.length > 0
				? [
						`around byte ${at}, ${agent}:${pad} ${show(around(expected, at - 120, at + 120))}`,
						`around byte ${at}, promptinclude: ${show(around(pi.stdout, at - 120, at + 120))}`,
					]
				: []),
			`paths: ${paths}`,
			`spec: ${formatSpec(spec)}`,
		].join("\n"),
	);
}

/**
 * Whether an audit chain holds the directory `dir` (a physical path): the
 * nearest of its `subtrees` and `except` at or above `dir` is one of its
 * `subtrees` (docs/audit-schema.md).
 */
export function chainHolds(chain, dir) {
	for (let d = dir; ; d = path.dirname(d)) {
		if (chain.subtrees.includes(d)) return true;
		if (chain.except.includes(d)) return false;
		if (d === path.dirname(d)) return false;
	}
}

/**
 * Fails unless `audit --agents` agrees with what the agent sent from `cwd`:
 * over the case's whole tree (`base`), the chain holding the cwd (by its
 * physical path) has the root, files, limit and notes `context --json`
 * gives there and, when the cwd is the chain's first directory (a chain's
 * `bytes` are counted there; Codex names the cwd in its text), sends
 * `sent`'s length in bytes (`sent` null: nothing). Every case so checks
 * the audit's chains against the real agent at a random directory, not
 * only against `context`. `agent` is the audit's name for it; `env` the
 * agent's environment (without PATH).
 */
export async function assertAuditChain({ bin, agent, base, cwd, home, env, sent, where }) {
	// A relative agent directory (CODEX_HOME=../alt) means another directory
	// from each start, as it does to the agent; audit resolves it so for every
	// directory, and where it names nothing the agent would not start, which
	// audit reports as the agent's error (tested in tests/agents_audit.rs).
	// Only the cases whose variables mean one place are compared here.
	const dirVariables = ["CODEX_HOME", "CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "PI_CODING_AGENT_DIR"];
	if (dirVariables.some((name) => env?.[name] && !String(env[name]).startsWith("/"))) return;
	const opts = { cwd: base, env: { PATH: process.env.PATH, ...env } };
	// The view of the environment the agent ran in (the audit's default,
	// `trusted`, would trust every folder for Gemini CLI).
	const audit = await runBytes(bin, ["audit", "--agents", agent, "--view", "first-open", "--home", home, "--json", base], opts);
	assert.equal(audit.status, 0, `audit --agents ${agent} failed, ${where}: ${audit.stderr.slice(-2000)}`);
	const record = audit.stdout
		.toString("utf8")
		.split("\n")
		.filter((line) => line)
		.map((line) => JSON.parse(line))
		.find((r) => r.type === "root");
	const chains = record?.agents?.agents?.find((a) => a.agent === agent);
	assert.ok(chains && !chains.error, `audit --agents ${agent}: no chains, ${where}: ${JSON.stringify(chains)}`);
	const physical = fs.realpathSync(cwd);
	const holding = chains.chains.filter((c) => chainHolds(c, physical));
	assert.equal(holding.length, 1, `audit --agents ${agent}: ${holding.length} chains hold ${physical}, ${where}`);
	const chain = holding[0];
	if (chain.start === physical) assert.equal(chain.bytes, sent?.length ?? 0, `audit --agents ${agent}: the chain from ${chain.start} sends ${chain.bytes} bytes, ${agent} sent ${sent?.length ?? 0} from ${physical}, ${where}`);
	const context = await runBytes(bin, ["context", "--agent", agent, "--cwd", cwd, "--home", home, "--json"], opts);
	assert.equal(context.status, 0, context.stderr);
	const doc = JSON.parse(context.stdout.toString("utf8"));
	const fields = ({ root, files, limit, notes }) => ({ root, files, limit, notes });
	assert.deepEqual(fields(chain), fields(doc), `audit --agents ${agent}: the chain holding ${physical} differs from context --json, ${where}`);
}

// ---------------------------------------------------------------------------
// Trees and the two tests every differential registers.

/**
 * A random path from `tree` to the cwd (0 to 4 names, some exotic), its
 * directories put into the case; returns { segs, pathDirs, cwdDir }.
 */
export function genPath(rng, put, plain, exotic) {
	const segs = Array.from({ length: rng.int(0, 4) }, () => (rng.chance(0.12) ? rng.pick(exotic) : rng.pick(plain)));
	const pathDirs = ["tree"];
	for (const s of segs) pathDirs.push(`${pathDirs.at(-1)}/${s}`);
	for (const d of pathDirs) put(d, { dir: true });
	return { segs, pathDirs, cwdDir: pathDirs.at(-1) };
}

/** The cwd, sometimes (probability `p`) the same directory reached through a symlink `jump`. */
export function cwdMaybeThroughLink(rng, put, { segs, pathDirs, cwdDir }, p) {
	if (!rng.chance(p)) return cwdDir;
	const k = rng.int(0, pathDirs.length - 1);
	put("jump", { symlink: pathDirs[k] });
	return ["jump", ...segs.slice(k)].join("/");
}

/** `buf` with one of `sequences` (hex, not UTF-8) inserted at a random byte. */
export function withInvalidUtf8(rng, buf, sequences) {
	const at = rng.int(0, buf.length);
	return Buffer.concat([buf.subarray(0, at), Buffer.from(rng.pick(sequences), "hex"), buf.subarray(at)]);
}

/**
 * A new case's files, a `put(path, value)` into them, a `label()` source
 * for texts (`<1>`, `<2>`, ...) and a `serial()` one for unique names.
 */
export function newCase() {
	const files = {};
	let labels = 0;
	let serials = 0;
	return { files, put: (p, v) => (files[p] = v), label: () => `<${++labels}>`, serial: () => ++serials };
}

/** A new directory for case `name` under `scratch` (its name made safe for a path). */
export function caseDir(scratch, name) {
	return fs.mkdtempSync(path.join(scratch, `${name.replace(/[^\w.-]/g, "_")}-`));
}

/** Where case `name` (its tree at `base`) failed, and how to repeat it. */
export function whereCase(name, base) {
	return `seed ${SEED}, case ${name} (repeat: PROMPTINCLUDE_CONTEXT_SEED=${SEED} PROMPTINCLUDE_CONTEXT_ONLY=${name}; tree at ${base}, kept with KEEP_E2E_TMP=1)`;
}

/**
 * `promptinclude context --agent AGENT --cwd CWD --home HOME FORMAT` run from
 * `scratch` (only --cwd says where) with the case's `env` (PATH added).
 */
export function runContext({ bin, agent, cwd, home, env, scratch }, format) {
	return runBytes(bin, ["context", "--agent", agent, "--cwd", cwd, "--home", home, format], { cwd: scratch, env: { PATH: process.env.PATH, ...env } });
}

/** Writes the case under `base` and makes its `home` and cwd; returns their paths. */
export function writeCase(base, spec) {
	writeTree(base, spec);
	const home = path.join(base, "home");
	fs.mkdirSync(home, { recursive: true });
	const cwd = path.join(base, spec.cwd);
	fs.mkdirSync(cwd, { recursive: true });
	return { home, cwd };
}

/**
 * Registers a differential's two tests, each case a subtest run `runCase(name,
 * spec)` at a time CONCURRENCY: the named edge cases, then `cases` (CASES) random trees
 * from `genCase(rng)` on this run's seed. Before them the binary under test
 * and the agent (`agentPath`) must exist and `start()` starts the mock (it
 * is closed after, and `scratch` removed unless KEEP_E2E_TMP is set);
 * `summary()` is printed after the random cases. `id` is the name the seed
 * is printed under.
 */
export function registerContextTests({ id, agent, agentPath, bin, scratch, start, edgeTitle, edgeCases, genCase, runCase, caseMs, summary, cases: count = CASES }) {
	let mock;
	before(async () => {
		assert.ok(bin && fs.existsSync(bin), `PROMPTINCLUDE_BIN=${bin} is not a file`);
		assert.ok(fs.existsSync(agentPath), `${agent} is not installed at ${agentPath}; run the directory's run.sh`);
		mock = await start();
	});
	after(async () => {
		await mock?.close();
		if (!process.env.KEEP_E2E_TMP) fs.rmSync(scratch, { recursive: true, force: true });
	});
	test(edgeTitle, { concurrency: CONCURRENCY, timeout: edgeCases.length * caseMs + 60_000 }, async (t) => {
		t.diagnostic(`${id} seed: ${SEED}`);
		await Promise.all(edgeCases.filter((c) => selected(c.name)).map((c) => t.test(c.name, () => runCase(c.name, c.spec))));
	});
	test(`random monorepos (seed ${SEED}, ${count} cases): promptinclude context equals ${agent} byte for byte`, { concurrency: CONCURRENCY, timeout: count * caseMs + 60_000 }, async (t) => {
		t.diagnostic(`${id} seed: ${SEED}`);
		const cases = [];
		for (let i = 0; i < count; i++) if (selected(`r${i}`)) cases.push({ name: `r${i}`, spec: genCase(new Rng(SEED, i)) });
		await Promise.all(cases.map((c) => t.test(c.name, () => runCase(c.name, c.spec))));
		t.diagnostic(`${id} seed ${SEED}: ${summary()}`);
	});
}
