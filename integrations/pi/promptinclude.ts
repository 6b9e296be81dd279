/**
 * promptinclude — pi coding-agent extension.
 *
 * Appends the project's Prompt Include section (rendered from its
 * `*.promptinclude.md` rule files by the `promptinclude` CLI) to pi's system
 * prompt, tells the model once when those files change during a session, and
 * offers a `prompt_includes` tool that returns the audit of the project.
 *
 * Load with `pi -e integrations/pi/promptinclude.ts`, or copy this file into
 * `.pi/extensions/` (project) or `~/.pi/agent/extensions/` (global).
 *
 * Environment:
 *   PROMPTINCLUDE_BIN     path of the promptinclude binary (default: `promptinclude` on PATH)
 *   PROMPTINCLUDE_BUNDLE  a directory written by `promptinclude bundle --out DIR`
 *                         (or the path of its manifest.json); used while its digests match
 *
 * Failure policy: nothing is ever thrown into pi from the hooks. If the binary
 * is missing or fails, the system prompt is left exactly as pi built it and
 * the user gets one warning (a UI notification, or one stderr line in
 * `pi -p` / `--mode json`, where pi's UI calls are no-ops).
 */

import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import * as path from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "typebox";

/** customType of the change notices injected into the session. */
export const NOTICE_TYPE = "promptinclude";
/** customType of the (not sent to the model) session entries holding the last seen file state. */
export const STATE_TYPE = "promptinclude-state";
export const TOOL_NAME = "prompt_includes";

export const PROMPT_SNIPPET =
	"Show the project's prompt-include rule files (*.promptinclude.md): which apply, their status, token counts and warnings";
export const PROMPT_GUIDELINES = [
	"Call prompt_includes when the user asks which project rules or prompt-include files apply, or why a rule seems missing, cropped or skipped.",
	"Call prompt_includes before creating, editing, renaming or deleting a *.promptinclude.md rule file, to see the current files, statuses and token budget.",
];

const RUN_TIMEOUT_MS = 30_000;
const MAX_OUTPUT = 256 * 1024 * 1024;

// ---------------------------------------------------------------------------
// Types of the promptinclude CLI's JSON outputs (only the fields used here).

interface ScanFile {
	path: string;
	content?: string;
	token_count?: number;
	status: string;
}

interface ScanResult {
	root?: string;
	files: ScanFile[];
	skipped_count?: number;
}

interface BundleFile {
	path: string;
	sha256: string | null;
	status?: string;
}

interface BundleRoot {
	root?: string;
	abs_root: string;
	section: string;
	section_sha256?: string;
	scan?: string;
	files?: BundleFile[];
}

interface BundleManifest {
	schema: number;
	roots: BundleRoot[];
}

/** What the extension remembers (in the session) about the rule files it last rendered. */
interface Snapshot {
	v: 1;
	root: string;
	/** [path, status, sha256 of content] per file, sorted by path. */
	files: [string, string, string][];
	skipped: number;
}

interface Rendered {
	section: string;
	snapshot?: Snapshot;
	scan?: ScanResult;
	source: "bundle" | "cli";
}

// ---------------------------------------------------------------------------
// Helpers.

interface RunResult {
	ok: boolean;
	stdout: string;
	error?: string;
}

function binary(): string {
	const bin = process.env.PROMPTINCLUDE_BIN;
	return bin && bin.trim() !== "" ? bin : "promptinclude";
}

function run(args: string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
	return new Promise((resolve) => {
		const bin = binary();
		try {
			execFile(
				bin,
				args,
				{
					encoding: "utf8",
					maxBuffer: MAX_OUTPUT,
					timeout: RUN_TIMEOUT_MS,
					windowsHide: true,
					env: { ...process.env, ...extraEnv },
				},
				(err, stdout, stderr) => {
					if (err) {
						const code = (err as NodeJS.ErrnoException).code;
						let why: string;
						if (code === "ENOENT") why = `${bin} not found (set PROMPTINCLUDE_BIN or put promptinclude on PATH)`;
						else if (code === "EACCES") why = `${bin} is not executable`;
						else {
							const detail = String(stderr ?? "").trim().split("\n").slice(-3).join(" | ");
							why = `\`${bin} ${args.join(" ")}\` failed: ${detail || err.message}`;
						}
						resolve({ ok: false, stdout: String(stdout ?? ""), error: why });
						return;
					}
					resolve({ ok: true, stdout: String(stdout) });
				},
			);
		} catch (err) {
			resolve({ ok: false, stdout: "", error: `cannot run ${bin}: ${(err as Error).message}` });
		}
	});
}

function sha256(data: string | Buffer): string {
	return createHash("sha256").update(data).digest("hex");
}

function parseScan(text: string): ScanResult | undefined {
	try {
		const value = JSON.parse(text) as ScanResult;
		if (!value || !Array.isArray(value.files)) return undefined;
		return value;
	} catch {
		return undefined;
	}
}

function snapshotOf(root: string, scan: ScanResult): Snapshot {
	const files = scan.files
		.map((f): [string, string, string] => [String(f.path), String(f.status), sha256(f.content ?? "")])
		.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
	return { v: 1, root, files, skipped: Number(scan.skipped_count ?? 0) };
}

function sameSnapshot(a: Snapshot, b: Snapshot): boolean {
	return JSON.stringify(a) === JSON.stringify(b);
}

function display(root: string, file: string): string {
	const rel = path.relative(root, file);
	return rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

/** Human-readable list of what changed between two snapshots of the same root (empty: nothing). */
export function describeChanges(prev: Snapshot, cur: Snapshot): string[] {
	const before = new Map(prev.files.map((f) => [f[0], f]));
	const after = new Map(cur.files.map((f) => [f[0], f]));
	const lines: string[] = [];
	const name = (p: string) => display(cur.root, p);
	for (const [p, f] of after) {
		const old = before.get(p);
		if (!old) {
			lines.push(`- added: ${name(p)}${f[1] !== "ok" ? ` (${f[1]})` : ""}`);
		} else if (old[1] !== f[1]) {
			if (f[1] === "cropped") lines.push(`- newly cropped (exceeds the per-file token limit): ${name(p)}`);
			else if (f[1] === "skipped") lines.push(`- newly skipped (over the file-count or total-token limit): ${name(p)}`);
			else if (f[1] === "ok") lines.push(`- now included in full (was ${old[1]}): ${name(p)}`);
			else lines.push(`- status ${old[1]} -> ${f[1]}: ${name(p)}`);
		} else if (old[2] !== f[2]) {
			lines.push(`- modified: ${name(p)}`);
		}
	}
	for (const p of before.keys()) {
		if (!after.has(p)) lines.push(`- removed: ${name(p)}`);
	}
	if (cur.skipped !== prev.skipped) {
		lines.push(`- files skipped by the limits: ${prev.skipped} -> ${cur.skipped}`);
	}
	return lines;
}

function noticeText(changes: string[]): string {
	return [
		"[promptinclude] The project's prompt-include rule files (*.promptinclude.md) changed since the previous turn.",
		"The Prompt Include section at the end of the system prompt now reflects them; follow it from now on.",
		"Changes:",
		...changes,
	].join("\n");
}

// ---------------------------------------------------------------------------
// Bundle.

async function manifestPath(spec: string): Promise<string> {
	const info = await stat(spec);
	return info.isDirectory() ? path.join(spec, "manifest.json") : spec;
}

/**
 * The bundle entry for `cwd`, if PROMPTINCLUDE_BUNDLE is set, has one, and
 * every listed file read at bundle time still has its recorded digest.
 * Returns `undefined` when the bundle does not apply or is stale; a string is
 * a problem worth one warning (unreadable or malformed bundle).
 */
async function fromBundle(cwd: string): Promise<Rendered | string | undefined> {
	const spec = process.env.PROMPTINCLUDE_BUNDLE;
	if (!spec || spec.trim() === "") return undefined;
	let manifest: BundleManifest;
	let dir: string;
	try {
		const file = await manifestPath(spec);
		dir = path.dirname(file);
		manifest = JSON.parse(await readFile(file, "utf8")) as BundleManifest;
	} catch (err) {
		return `PROMPTINCLUDE_BUNDLE=${spec} is unreadable (${(err as Error).message}); using promptinclude render`;
	}
	if (manifest?.schema !== 1 || !Array.isArray(manifest.roots)) {
		return `PROMPTINCLUDE_BUNDLE=${spec}: unsupported manifest (schema ${String(manifest?.schema)}); using promptinclude render`;
	}
	const want = path.resolve(cwd);
	const entry = manifest.roots.find((r) => typeof r?.abs_root === "string" && path.resolve(r.abs_root) === want);
	if (!entry) return undefined;
	for (const f of entry.files ?? []) {
		if (f.sha256 === null || f.sha256 === undefined) continue;
		try {
			if (sha256(await readFile(f.path)).toLowerCase() !== String(f.sha256).toLowerCase()) return undefined;
		} catch {
			return undefined; // removed or unreadable since bundling: stale
		}
	}
	try {
		const bytes = await readFile(path.resolve(dir, entry.section));
		if (entry.section_sha256 && sha256(bytes) !== entry.section_sha256.toLowerCase()) {
			return `PROMPTINCLUDE_BUNDLE=${spec}: section file of ${entry.abs_root} does not match its digest; using promptinclude render`;
		}
		const scan = entry.scan ? parseScan(await readFile(path.resolve(dir, entry.scan), "utf8")) : undefined;
		const snapshot = scan ? snapshotOf(want, scan) : undefined;
		return { section: bytes.toString("utf8"), snapshot, scan, source: "bundle" };
	} catch (err) {
		return `PROMPTINCLUDE_BUNDLE=${spec}: ${(err as Error).message}; using promptinclude render`;
	}
}

// ---------------------------------------------------------------------------
// Audit fallback: format `promptinclude scan` JSON when `audit` is unavailable.

export function formatScan(root: string, scan: ScanResult): string {
	const rows = scan.files.map((f) => [display(root, f.path), f.status, String(f.token_count ?? "")]);
	const header = ["file", "status", "tokens"];
	const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
	const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd();
	const total = scan.files.reduce((n, f) => n + (f.status === "skipped" ? 0 : Number(f.token_count ?? 0)), 0);
	const out = [`Prompt includes for ${root}`, ""];
	if (rows.length === 0) out.push("No *.promptinclude.md files found.");
	else out.push(line(header), ...rows.map(line));
	out.push("", `${scan.files.length} file(s), ${total} token(s) included, ${scan.skipped_count ?? 0} skipped by limits.`);
	const warnings = scan.files.filter((f) => f.status !== "ok").map((f) => `- ${display(root, f.path)} is ${f.status}`);
	if (warnings.length > 0) out.push("", "Warnings:", ...warnings);
	return `${out.join("\n")}\n`;
}

// ---------------------------------------------------------------------------
// The extension.

export default function promptinclude(pi: ExtensionAPI) {
	let warned = false;

	const warn = (ctx: ExtensionContext, message: string) => {
		if (warned) return;
		warned = true;
		const text = `promptinclude: ${message}`;
		try {
			if (ctx.hasUI) ctx.ui.notify(text, "warning");
			else process.stderr.write(`[promptinclude] warning: ${message}\n`);
		} catch {
			// never let a warning break pi
		}
	};

	const render = async (ctx: ExtensionContext, cwd: string): Promise<Rendered | undefined> => {
		const bundled = await fromBundle(cwd);
		if (typeof bundled === "string") warn(ctx, bundled);
		else if (bundled) return bundled;
		// One walk per turn: the section and the scan record together.
		const both = await run(["render", "--json", cwd]);
		if (!both.ok) {
			warn(ctx, `${both.error}; the system prompt is left unchanged`);
			return undefined;
		}
		let section: unknown;
		let parsed: ScanResult | undefined;
		try {
			const obj = JSON.parse(both.stdout) as { section?: unknown; scan?: unknown };
			section = obj.section;
			parsed = obj.scan === undefined ? undefined : parseScan(JSON.stringify(obj.scan));
		} catch {
			section = undefined;
		}
		if (typeof section !== "string") {
			warn(ctx, "promptinclude render --json printed no valid JSON; the system prompt is left unchanged");
			return undefined;
		}
		if (!parsed) warn(ctx, "promptinclude render --json printed no valid scan record; rule-file change notices are off");
		const snapshot = parsed ? snapshotOf(path.resolve(cwd), parsed) : undefined;
		return { section, snapshot, scan: parsed, source: "cli" };
	};

	/** The last snapshot recorded on the current session branch for this root. */
	const lastSnapshot = (ctx: ExtensionContext, root: string): Snapshot | undefined => {
		const branch = ctx.sessionManager.getBranch();
		for (let i = branch.length - 1; i >= 0; i--) {
			const e = branch[i] as { type?: string; customType?: string; data?: unknown };
			if (e.type !== "custom" || e.customType !== STATE_TYPE) continue;
			const s = e.data as Snapshot | undefined;
			if (s && s.v === 1 && s.root === root && Array.isArray(s.files)) return s;
		}
		return undefined;
	};

	pi.on("before_agent_start", async (event, ctx) => {
		try {
			const cwd = path.resolve(ctx.cwd);
			const rendered = await render(ctx, cwd);
			if (!rendered) return undefined;
			let message: { customType: string; content: string; display: boolean; details: unknown } | undefined;
			if (rendered.snapshot) {
				const prev = lastSnapshot(ctx, cwd);
				if (!prev || !sameSnapshot(prev, rendered.snapshot)) {
					const changes = prev ? describeChanges(prev, rendered.snapshot) : [];
					if (changes.length > 0) {
						message = { customType: NOTICE_TYPE, content: noticeText(changes), display: true, details: { changes } };
					}
					pi.appendEntry(STATE_TYPE, rendered.snapshot);
				}
			}
			if (rendered.section === "") return message ? { message } : undefined;
			return { systemPrompt: `${event.systemPrompt}\n\n${rendered.section}`, ...(message ? { message } : {}) };
		} catch (err) {
			warn(ctx, `unexpected error: ${(err as Error)?.message ?? String(err)}; the system prompt is left unchanged`);
			return undefined;
		}
	});

	// Only the newest change notice reaches the model; older ones stay in the
	// session (and in the UI) but are filtered from every LLM call.
	pi.on("context", (event) => {
		try {
			const isNotice = (m: unknown) =>
				!!m && (m as { role?: string }).role === "custom" && (m as { customType?: string }).customType === NOTICE_TYPE;
			let last = -1;
			event.messages.forEach((m, i) => {
				if (isNotice(m)) last = i;
			});
			if (last < 0) return undefined;
			const kept = event.messages.filter((m, i) => i === last || !isNotice(m));
			return kept.length === event.messages.length ? undefined : { messages: kept };
		} catch {
			return undefined;
		}
	});

	pi.registerTool({
		name: TOOL_NAME,
		label: "Prompt includes",
		description:
			"Audit the prompt-include rule files (*.promptinclude.md) of the current project: every file found, whether it is included in full, cropped or skipped, its token count, and any warnings. Takes no arguments.",
		promptSnippet: PROMPT_SNIPPET,
		promptGuidelines: PROMPT_GUIDELINES,
		parameters: Type.Object({}),
		async execute(_toolCallId, _params, _signal, _onUpdate, ctx) {
			const cwd = path.resolve(ctx.cwd);
			const audit = await run(["audit", cwd], { NO_COLOR: "1" });
			if (audit.ok) {
				return { content: [{ type: "text", text: audit.stdout }], details: { source: "audit" } };
			}
			// `audit` unavailable (older binary) or failing: format the scan ourselves.
			const scan = await run(["scan", cwd]);
			let parsed = scan.ok ? parseScan(scan.stdout) : undefined;
			let source = "scan";
			if (!parsed) {
				const bundled = await fromBundle(cwd);
				if (bundled && typeof bundled !== "string" && bundled.scan) {
					parsed = bundled.scan;
					source = "bundle";
				}
			}
			if (!parsed) {
				throw new Error(`promptinclude is unavailable: ${audit.error}`);
			}
			return { content: [{ type: "text", text: formatScan(cwd, parsed) }], details: { source } };
		},
	});
}
