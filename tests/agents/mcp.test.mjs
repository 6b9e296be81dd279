// End-to-end tests of `promptinclude mcp` with a real MCP client: the
// official TypeScript SDK (@modelcontextprotocol/sdk, pinned in
// package.json) spawns the server over stdio, lists and calls the tool,
// lists and reads the resources, and gets the prompt — with roots from
// --root and from the client's own `roots/list`.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { BIN, MODULES, assertNoSecret, leakyRepository, write } from "./helpers.mjs";

const SDK = path.join(MODULES, "@modelcontextprotocol/sdk/dist/esm");
const { Client } = await import(path.join(SDK, "client/index.js"));
const { StdioClientTransport } = await import(path.join(SDK, "client/stdio.js"));
const { ListRootsRequestSchema } = await import(path.join(SDK, "types.js"));

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-mcp-e2e-"));
after(() => {
	if (!process.env.KEEP_E2E_TMP) fs.rmSync(scratch, { recursive: true, force: true });
});

let counter = 0;
function project(name) {
	const dir = path.join(scratch, `${++counter}-${name}`);
	write(path.join(dir, "AGENTS.promptinclude.md"), `Rules of ${name}. MARKER-${name}\n`);
	write(path.join(dir, "src/api/style.promptinclude.md"), "Use snake_case in the API.\n");
	write(path.join(dir, "node_modules/pkg/vendor.promptinclude.md"), "MARKER-IGNORED\n");
	return dir;
}

const render = (root) => execFileSync(BIN, ["render", root], { encoding: "utf8", env: { PATH: process.env.PATH } });

/** A connected client; `roots` (paths) are offered through the roots capability. */
async function connect(args, roots, env = {}) {
	const client = new Client({ name: "promptinclude-e2e", version: "0" }, { capabilities: roots ? { roots: {} } : {} });
	if (roots) {
		client.setRequestHandler(ListRootsRequestSchema, async () => ({
			roots: roots.map((r) => ({ uri: `file://${r}`, name: path.basename(r) })),
		}));
	}
	const transport = new StdioClientTransport({
		command: BIN,
		args: ["mcp", ...args],
		env: { PATH: process.env.PATH, ...env },
		stderr: "pipe",
	});
	await client.connect(transport);
	return client;
}

const textOf = (result) => result.content.map((c) => c.text).join("");

test("--root: the tool, the resources and the prompt give the rendered section and its rule files", async () => {
	const root = project("alpha");
	const section = render(root);
	const client = await connect(["--root", root]);
	try {
		const { tools } = await client.listTools();
		assert.deepEqual(
			tools.map((t) => t.name),
			["prompt_includes", "agent_context"],
		);
		assert.deepEqual(Object.keys(tools[0].inputSchema.properties).sort(), ["audit", "root"]);
		assert.deepEqual(Object.keys(tools[1].inputSchema.properties).sort(), ["agent", "cwd"]);

		const called = await client.callTool({ name: "prompt_includes", arguments: {} });
		assert.ok(!called.isError);
		assert.equal(textOf(called), section, "the tool returns exactly what `render` prints");

		const audited = textOf(await client.callTool({ name: "prompt_includes", arguments: { audit: true } }));
		assert.match(audited, /^ok +\d+ +AGENTS\.promptinclude\.md$/m);
		assert.match(audited, /^ok +\d+ +src\/api\/style\.promptinclude\.md$/m);
		assert.ok(!audited.includes("node_modules"));

		const { resources } = await client.listResources();
		assert.deepEqual(
			resources.map((r) => r.name),
			["AGENTS.promptinclude.md", "src/api/style.promptinclude.md"],
		);
		for (const r of resources) {
			assert.match(r.description, /^ok, \d+ tokens$/);
			assert.equal(r.uri, `file://${path.join(root, r.name)}`);
			const read = await client.readResource({ uri: r.uri });
			assert.equal(read.contents[0].text, fs.readFileSync(path.join(root, r.name), "utf8"));
		}
		await assert.rejects(client.readResource({ uri: `file://${root}/node_modules/pkg/vendor.promptinclude.md` }));

		const { prompts } = await client.listPrompts();
		assert.deepEqual(
			prompts.map((p) => p.name),
			["prompt_includes"],
		);
		const prompt = await client.getPrompt({ name: "prompt_includes" });
		assert.equal(prompt.messages.length, 1);
		assert.equal(prompt.messages[0].role, "user");
		assert.equal(prompt.messages[0].content.text, section);
	} finally {
		await client.close();
	}
});

test("the client's roots: every root's section, one root on request; budgets and cropping show in the resources", async () => {
	const a = project("beta");
	const b = project("gamma");
	write(path.join(b, "zz-long.promptinclude.md"), `${"word ".repeat(400)}MARKER-TAIL\n`);
	write(path.join(b, ".a0proj/plugins/_promptinclude/config.json"), '{"max_file_tokens": 100}\n');
	const client = await connect([], [a, b]);
	try {
		const all = textOf(await client.callTool({ name: "prompt_includes", arguments: {} }));
		assert.equal(all, `## Root: ${a}\n\n${render(a)}## Root: ${b}\n\n${render(b)}`);
		assert.ok(!all.includes("MARKER-TAIL"), "the project file's budget applies");

		const one = await client.getPrompt({ name: "prompt_includes", arguments: { root: a } });
		assert.equal(one.messages[0].content.text, render(a));

		const { resources } = await client.listResources();
		// b's project file has no `gitignore` key: no filtering there, as in the
		// host, so its node_modules rule file is in; a's stays out.
		assert.deepEqual(
			resources.map((r) => r.uri.slice("file://".length)).filter((p) => p.includes("node_modules")),
			[path.join(b, "node_modules/pkg/vendor.promptinclude.md")],
		);
		assert.equal(resources.length, 6);
		const long = resources.find((r) => r.name === "zz-long.promptinclude.md");
		assert.match(long.description, /^cropped, \d+ tokens$/);
		const read = await client.readResource({ uri: long.uri });
		assert.ok(read.contents[0].text.endsWith("...") && !read.contents[0].text.includes("MARKER-TAIL"));

		const other = await client.callTool({ name: "prompt_includes", arguments: { root: "/not/served" } });
		assert.equal(other.isError, true);
		assert.match(textOf(other), /not one of the roots/);
	} finally {
		await client.close();
	}
});

test("a root with a broken configuration is an error result, not a dead server", async () => {
	const root = project("delta");
	write(path.join(root, ".a0proj/plugins/_promptinclude/config.json"), '{\n  "max_depth": "deep"\n}\n');
	const client = await connect(["--root", root]);
	try {
		const called = await client.callTool({ name: "prompt_includes", arguments: {} });
		assert.equal(called.isError, true);
		assert.match(textOf(called), /config\.json:2: key `max_depth`/);
		// The server still answers.
		assert.equal((await client.listTools()).tools.length, 2);
	} finally {
		await client.close();
	}
});

test("agent_context: what Codex loads in a root, names and sizes only (a linked secret's text stays out), and only inside the roots", async () => {
	const root = path.join(scratch, `${++counter}-codex-context`);
	const home = path.join(scratch, `${counter}-home`);
	write(path.join(root, ".git/HEAD"), "ref: refs/heads/main\n");
	write(path.join(root, "AGENTS.md"), "Root rules. MARKER-ROOT-RULES\n");
	write(path.join(root, "pkg/AGENTS.override.md"), "Override. MARKER-OVERRIDE\n");
	write(path.join(root, "pkg/AGENTS.md"), "Shadowed. MARKER-SHADOWED\n");
	const secret = path.join(scratch, `${counter}-secret.txt`);
	write(secret, "SECRET-KEY-MATERIAL\n");
	fs.mkdirSync(path.join(root, "linked"));
	fs.symlinkSync(secret, path.join(root, "linked/AGENTS.md"));
	fs.mkdirSync(path.join(home, ".codex"), { recursive: true });
	const expected = (cwd) =>
		execFileSync(BIN, ["context", "--agent", "codex", "--cwd", cwd, "--home", home], {
			encoding: "utf8",
			env: { PATH: process.env.PATH },
		});
	const client = await connect(["--root", root], undefined, { HOME: home });
	try {
		const pkg = await client.callTool({ name: "agent_context", arguments: { agent: "codex", cwd: path.join(root, "pkg") } });
		assert.ok(!pkg.isError, textOf(pkg));
		assert.equal(textOf(pkg), expected(path.join(root, "pkg")), "the tool returns `context`'s text report");
		assert.match(textOf(pkg), /^  loaded .*\/AGENTS\.md$/m);
		assert.match(textOf(pkg), /shadowed by .*pkg\/AGENTS\.override\.md/);
		const linked = textOf(await client.callTool({ name: "agent_context", arguments: { agent: "codex", cwd: path.join(root, "linked") } }));
		assert.match(linked, /linked\/AGENTS\.md/);
		for (const marker of ["MARKER-ROOT-RULES", "MARKER-OVERRIDE", "SECRET-KEY-MATERIAL"]) {
			assert.ok(!textOf(pkg).includes(marker) && !linked.includes(marker), `${marker} stays out of the tool's result`);
		}
		await assert.rejects(
			client.callTool({ name: "agent_context", arguments: { agent: "codex", cwd: scratch } }),
			/not a directory inside the roots this server serves/,
		);
		await assert.rejects(client.callTool({ name: "agent_context", arguments: { agent: "other" } }), /must be one of: agent-zero, claude-code, codex, copilot-cli, gemini, opencode, pi, qwen-code/);
	} finally {
		await client.close();
	}
});

test("a repository built to leak, served as the client's root: no secret in prompt_includes, nor in agent_context's import names or counts", async () => {
	const project = path.join(scratch, `${++counter}-leaky`);
	const home = path.join(scratch, `${counter}-leaky-home`);
	const env = leakyRepository(project, home);
	// A Claude Code file linked to the user's ~/.npmrc: the agent loads it,
	// and its text names an "import" that is the token.
	const npmToken = "SECRET-NPM-TOKEN-d41e";
	write(path.join(home, ".npmrc"), `@acme:registry=https://x:${npmToken}@host/\n`);
	fs.mkdirSync(path.join(project, "sub"));
	fs.symlinkSync(path.join(home, ".npmrc"), path.join(project, "sub/CLAUDE.md"));
	const client = await connect([], [project], { HOME: home, ...env });
	try {
		const section = textOf(await client.callTool({ name: "prompt_includes", arguments: {} }));
		assert.match(section, /MARKER-LEAKY-RULE/);
		assertNoSecret(section);
		const report = textOf(await client.callTool({ name: "agent_context", arguments: { agent: "claude-code", cwd: path.join(project, "sub") } }));
		assert.match(report, /^ {2}withheld +- +0 +.*sub\/CLAUDE\.md .*\(outside_root\)\)$/m, report);
		assert.ok(!report.includes(npmToken) && !report.includes("registry=https"), report);
		assert.match(report, /^total: not reported/m);
		assertNoSecret(report);
	} finally {
		await client.close();
	}
});
