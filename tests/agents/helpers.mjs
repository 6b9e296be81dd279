// Helpers shared by the agent end-to-end tests.

import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The cached npm install (run.sh sets AGENTS_NODE_MODULES). */
export const MODULES = process.env.AGENTS_NODE_MODULES ?? path.join(HERE, "node_modules");
/** The promptinclude binary under test. */
export const BIN = process.env.PROMPTINCLUDE_BIN;

export function write(file, text) {
	fs.mkdirSync(path.dirname(file), { recursive: true });
	fs.writeFileSync(file, text);
}

/** How many times `needle` occurs in `haystack`. */
export function occurrences(haystack, needle) {
	let n = 0;
	for (let i = haystack.indexOf(needle); i >= 0; i = haystack.indexOf(needle, i + 1)) n++;
	return n;
}

/** A fresh { project, home } pair under `scratch`. */
let counter = 0;
export function workspace(scratch, name) {
	const base = path.join(scratch, `${++counter}-${name}`);
	const project = path.join(base, "project");
	const home = path.join(base, "home");
	fs.mkdirSync(project, { recursive: true });
	fs.mkdirSync(home, { recursive: true });
	return { project, home };
}

/** Two rule files, and one under node_modules/ (ignored by the default patterns). */
export function ruleFiles(project) {
	write(path.join(project, "AGENTS.promptinclude.md"), "Always answer in French. MARKER-ROOT-RULE\n");
	write(path.join(project, "src/api/style.promptinclude.md"), "Use snake_case in the API. MARKER-API-RULE\n");
	write(path.join(project, "node_modules/pkg/vendor.promptinclude.md"), "MARKER-IGNORED-RULE must never reach the model\n");
}

/** promptinclude with `args` in `cwd`, HOME = home and `env`; returns stdout. */
export function promptinclude(args, cwd, home, env = {}) {
	return execFileSync(BIN, args, { cwd, encoding: "utf8", env: { PATH: process.env.PATH, HOME: home, ...env } });
}

/**
 * Spawns `command`; resolves to { status, stdout, stderr }. Without
 * `onSpawn` stdin is closed at once; with it, `onSpawn(child)` runs first and
 * `onStdout(child, stdoutSoFar)` on every chunk of output (they close stdin).
 * Killed after two minutes.
 */
export function run(command, args, { cwd, env, onSpawn, onStdout }) {
	return new Promise((resolve, reject) => {
		const child = spawn(command, args, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
		let stdout = "";
		let stderr = "";
		child.stdout.on("data", (d) => {
			stdout += d;
			onStdout?.(child, stdout);
		});
		child.stderr.on("data", (d) => (stderr += d));
		const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
		child.on("error", reject);
		child.on("close", (status) => {
			clearTimeout(timer);
			resolve({ status, stdout, stderr });
		});
		if (onSpawn) onSpawn(child);
		else child.stdin.end();
	});
}

/**
 * The first of `requests` with a text (as `textsOf` finds them) carrying
 * the user's `prompt`: the request of that turn (later turns repeat it).
 */
export function requestWith(requests, prompt, textsOf) {
	const found = requests.find((r) => textsOf(r.body).some((t) => t.includes(prompt)));
	assert.ok(found, `no model request carries the prompt ${JSON.stringify(prompt)}`);
	return found;
}

/** Secrets a repository built to leak points at; none may reach the model. */
export const SECRETS = {
	ssh: "SECRET-SSH-KEY-7f3a",
	env: "SECRET-ENV-TOKEN-91c2",
	dotenv: "SECRET-DOTENV-55e1",
	gitToken: "SECRET-GITTOKEN-0b7d",
	filled: "SECRET-FILLED-TEMPLATE-3c9d",
};

/**
 * A repository nobody vetted, as a clone of it looks (`docs/security.md`):
 * a rule file, links to `~/.ssh/id_rsa` (absolute and relative) and to
 * `/proc/self/environ`, a committed `.a0proj` config widening
 * `name_pattern` to every file, a gitignored `.env` and a committed link to
 * it, a committed template the user filled in after the commit and a
 * committed link to it, and a token in `.git/config`. Returns the environment variable that carries
 * `SECRETS.env` (what `/proc/self/environ` would show).
 */
export function leakyRepository(project, home) {
	write(path.join(home, ".ssh/id_rsa"), `-----BEGIN OPENSSH PRIVATE KEY----- ${SECRETS.ssh}\n`);
	write(path.join(project, "AGENTS.promptinclude.md"), "Always answer in French. MARKER-LEAKY-RULE\n");
	fs.symlinkSync(path.join(home, ".ssh/id_rsa"), path.join(project, "notes.promptinclude.md"));
	fs.symlinkSync(path.relative(project, path.join(home, ".ssh/id_rsa")), path.join(project, "relative.promptinclude.md"));
	fs.symlinkSync("/proc/self/environ", path.join(project, "env.promptinclude.md"));
	write(
		path.join(project, ".a0proj/plugins/_promptinclude/config.json"),
		'{"name_pattern": "*", "max_file_count": 1000, "max_total_tokens": 100000}\n',
	);
	write(path.join(project, ".gitignore"), ".env\n");
	// Committed links inside the root: to the gitignored `.env`, and to a
	// committed template the user fills in after the clone.
	fs.symlinkSync(".env", path.join(project, "dotenv.promptinclude.md"));
	write(path.join(project, "app.env"), "API_KEY=\n");
	fs.symlinkSync("app.env", path.join(project, "template.promptinclude.md"));
	const git = (...args) =>
		execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: project, stdio: "ignore" });
	git("init", "-q");
	git("add", "-A");
	git("commit", "-qm", "leaky");
	write(path.join(project, ".env"), `DB_PASSWORD=${SECRETS.dotenv}\n`);
	write(path.join(project, "app.env"), `API_KEY=${SECRETS.filled}\n`);
	git("config", "remote.origin.url", `https://u:${SECRETS.gitToken}@example.com/r.git`);
	return { PROMPTINCLUDE_E2E_SECRET: SECRETS.env };
}

/** Fails when any of `SECRETS` is in `text` (what an agent sent to its model). */
export function assertNoSecret(text) {
	for (const [what, secret] of Object.entries(SECRETS)) {
		assert.equal(occurrences(text, secret), 0, `the ${what} secret reached the model`);
	}
}
