// The real agents, each started offline in a directory against its mock
// model, and what it sent: for tests that ask "what does the agent send
// from here?" of several agents at once (warnings.test.mjs). Each agent's
// home is set up here (its model provider at the mock), as the context
// differentials set theirs up for the one agent each compares.
//
//   const agents = await startAgents();
//   agents.prepareHome(home, { codexMaxBytes: 400 });
//   const s = await agents.session("codex", { cwd, home, env, prompt });
//   s.sent   // every string of the model request that carried `prompt`
//
// Claude Code's session can also be made to read a file first
// (`read: "/abs/path"`, mock-anthropic.mjs); `s.afterRead` is then the
// request that followed the tool's result.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MODULES, run } from "./helpers.mjs";
import { startMock as startAnthropic, textsOf as anthropicTexts } from "./mock-anthropic.mjs";
import { contentText, startMock as startChat } from "./mock-chat.mjs";
import { mainRequest, startMock as startGemini } from "./mock-gemini.mjs";
import { startMock as startResponses, textsOf as responsesTexts } from "./mock-responses.mjs";
import { stringsIn } from "./mock-server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The agents this module starts, by the names `audit --agents` gives them. */
export const AGENTS = ["claude-code", "codex", "copilot-cli", "gemini", "opencode", "pi", "qwen-code"];
const BINARIES = {
	"claude-code": path.join(MODULES, ".bin/claude"),
	codex: path.join(MODULES, ".bin/codex"),
	"copilot-cli": path.join(MODULES, ".bin/copilot"),
	gemini: path.join(MODULES, ".bin/gemini"),
	opencode: path.join(MODULES, ".bin/opencode"),
	// pi is installed by tests/pi/run.sh (which test-all runs first).
	pi: path.join(HERE, "../pi/node_modules/.bin/pi"),
	"qwen-code": path.join(MODULES, ".bin/qwen"),
};
const PI_PROVIDER = path.join(HERE, "../pi/mock-provider.mjs");

/** Gemini CLI's settings for a session against the mock: the API key, no updates, no telemetry. */
export const GEMINI_SETTINGS = {
	security: { auth: { selectedType: "gemini-api-key" } },
	general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
	privacy: { usageStatisticsEnabled: false },
	telemetry: { enabled: false },
};

/** opencode's configuration for a session against the chat mock at `baseURL`. */
export const opencodeConfig = (baseURL) => ({
	$schema: "https://opencode.ai/config.json",
	autoupdate: false,
	share: "disabled",
	provider: { mock: { npm: "@ai-sdk/openai-compatible", name: "Mock", options: { baseURL, apiKey: "mock-key" }, models: { "mock-model": { name: "Mock" } } } },
	model: "mock/mock-model",
});

/** What keeps opencode off the network: no model list, update, share, LSP download or default plugin, and npm's registry a closed port. */
export const OPENCODE_OFFLINE = {
	OPENCODE_DISABLE_MODELS_FETCH: "1",
	OPENCODE_DISABLE_AUTOUPDATE: "1",
	OPENCODE_DISABLE_SHARE: "1",
	OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
	OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
	npm_config_registry: "http://127.0.0.1:9/",
};

/** Where Copilot CLI unpacks its runtime (about 235 MB) on its first run: once for every session, kept between runs. */
export const COPILOT_CACHE = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "promptinclude-agents", "copilot-xdg-cache");

/** Copilot CLI's flags for one prompt, run unattended. */
export const COPILOT_FLAGS = ["--allow-all-tools", "--no-auto-update", "--disable-client-telemetry"];

/** Copilot CLI's environment for a session against the chat mock at `baseURL`: offline, BYOK. */
export const copilotEnv = (baseURL) => ({
	XDG_CACHE_HOME: COPILOT_CACHE,
	COPILOT_OFFLINE: "true",
	COPILOT_PROVIDER_BASE_URL: baseURL,
	COPILOT_PROVIDER_TYPE: "openai",
	COPILOT_PROVIDER_API_KEY: "mock-key",
	COPILOT_MODEL: "mock-model",
	COPILOT_AUTO_UPDATE: "false",
});

/** Qwen Code's user settings for a session against the mock: the OpenAI-compatible provider, no statistics, no updates. */
export const QWEN_SETTINGS = {
	security: { auth: { selectedType: "openai" } },
	privacy: { usageStatisticsEnabled: false },
	general: { disableAutoUpdate: true },
};

/** Qwen Code's environment for a session against the chat mock at `baseURL`. */
export const qwenEnv = (baseURL) => ({ OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: "mock-key", OPENAI_MODEL: "mock-model" });

/** The agents of `AGENTS` not installed here. */
export const missingAgents = () => AGENTS.filter((a) => !fs.existsSync(BINARIES[a]));

/** Starts the mocks; resolves to { prepareHome, session, close }. */
export async function startAgents({ maxRequests = 2000 } = {}) {
	const { startMockServer } = await import("../pi/mock-openai.mjs");
	const mocks = {
		"claude-code": await startAnthropic({ maxRequests }),
		codex: await startResponses({ maxRequests }),
		"copilot-cli": await startChat({ maxRequests }),
		gemini: await startGemini({ maxRequests }),
		opencode: await startChat({ maxRequests }),
		pi: await startMockServer({ maxRequests }),
		"qwen-code": await startChat({ maxRequests }),
	};

	/** Writes each agent's configuration into `home` (Codex's with `project_doc_max_bytes`). */
	function prepareHome(home, { codexMaxBytes } = {}) {
		const codex = [
			'model = "mock-model"',
			'model_provider = "mock"',
			...(codexMaxBytes === undefined ? [] : [`project_doc_max_bytes = ${codexMaxBytes}`]),
			"",
			"[model_providers.mock]",
			'name = "mock"',
			`base_url = "${mocks.codex.url}/v1"`,
			'wire_api = "responses"',
			'env_key = "MOCK_API_KEY"',
			"",
		];
		fs.mkdirSync(path.join(home, ".codex"), { recursive: true });
		fs.writeFileSync(path.join(home, ".codex/config.toml"), codex.join("\n"));
		fs.mkdirSync(path.join(home, ".gemini"), { recursive: true });
		fs.writeFileSync(path.join(home, ".gemini/settings.json"), JSON.stringify(GEMINI_SETTINGS, null, 2));
		fs.mkdirSync(path.join(home, ".config/opencode"), { recursive: true });
		fs.writeFileSync(path.join(home, ".config/opencode/opencode.json"), JSON.stringify(opencodeConfig(`${mocks.opencode.url}/v1`), null, 2));
		fs.mkdirSync(path.join(home, ".qwen"), { recursive: true });
		fs.writeFileSync(path.join(home, ".qwen/settings.json"), JSON.stringify(QWEN_SETTINGS, null, 2));
	}

	/** Takes the request that carried `prompt` (and its bodies) out of the mock's list. */
	function take(requests, pick) {
		const i = requests.findIndex(pick);
		if (i < 0) return null;
		const [r] = requests.splice(i, 1);
		return r;
	}

	const starts = {
		"claude-code": async ({ cwd, env, prompt, read }) => {
			const text = read ? `${prompt} READ-FILE[${read}]` : prompt;
			const s = await run(BINARIES["claude-code"], ["-p", text], {
				cwd,
				env: { ...env, ANTHROPIC_BASE_URL: mocks["claude-code"].url, ANTHROPIC_API_KEY: "sk-ant-mock-key", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
			});
			const ours = (r) => r.path === "/v1/messages" && anthropicTexts(r.body).some((t) => t.includes(prompt));
			const first = take(mocks["claude-code"].requests, ours);
			const next = read ? take(mocks["claude-code"].requests, ours) : null;
			// Later turns of the same session go too (the mock keeps every request).
			while (take(mocks["claude-code"].requests, ours));
			return { ...s, sent: first && anthropicTexts(first.body), afterRead: next && anthropicTexts(next.body) };
		},
		codex: async ({ cwd, env, prompt, codexMaxBytes }) => {
			const limit = codexMaxBytes === undefined ? [] : ["-c", `project_doc_max_bytes=${codexMaxBytes}`];
			const s = await run(BINARIES.codex, ["exec", "--skip-git-repo-check", ...limit, prompt], { cwd, env: { ...env, MOCK_API_KEY: "mock-key" } });
			const ours = (r) => r.path.endsWith("/responses") && responsesTexts(r.body).some((t) => t.includes(prompt));
			const first = take(mocks.codex.requests, ours);
			while (take(mocks.codex.requests, ours));
			return { ...s, sent: first && responsesTexts(first.body) };
		},
		"copilot-cli": async ({ cwd, env, prompt }) => {
			const s = await run(BINARIES["copilot-cli"], ["-p", prompt, ...COPILOT_FLAGS], { cwd, env: { TERM: "dumb", NO_COLOR: "1", ...copilotEnv(`${mocks["copilot-cli"].url}/v1`), ...env } });
			const ours = (r) => (r.body?.messages ?? []).some((m) => m.role !== "system" && contentText(m.content).includes(prompt));
			const first = take(mocks["copilot-cli"].requests, ours);
			while (take(mocks["copilot-cli"].requests, ours));
			return { ...s, sent: first && stringsIn(first.body.messages) };
		},
		gemini: async ({ cwd, env, prompt }) => {
			const s = await run(BINARIES.gemini, ["-p", prompt], {
				cwd,
				env: { TERM: "dumb", NO_COLOR: "1", GEMINI_API_KEY: "mock-key", GOOGLE_GEMINI_BASE_URL: mocks.gemini.url, GEMINI_CLI_NO_RELAUNCH: "true", NO_BROWSER: "true", ...env },
			});
			const main = mainRequest(mocks.gemini.requests, prompt);
			const sent = main ? stringsIn(main.body.systemInstruction, main.body.contents) : null;
			const ours = (r) => JSON.stringify(r.body ?? "").includes(prompt);
			while (take(mocks.gemini.requests, ours));
			return { ...s, sent };
		},
		opencode: async ({ cwd, env, prompt }) => {
			// Its sessions go into a database in its data directory, which two
			// sessions in one home at once find locked: each its own.
			const data = fs.mkdtempSync(path.join(os.tmpdir(), "promptinclude-opencode-data-"));
			const s = await run(BINARIES.opencode, ["run", prompt], { cwd, env: { TERM: "dumb", NO_COLOR: "1", ...OPENCODE_OFFLINE, ...env, XDG_DATA_HOME: data, XDG_STATE_HOME: data } });
			fs.rmSync(data, { recursive: true, force: true });
			// Its main request: the system message with the environment block
			// (a title request carries the prompt too).
			const main = (r) => {
				const messages = r.body?.messages ?? [];
				return contentText(messages[0]?.content).includes("</env>\n") && messages.some((m) => contentText(m.content).includes(prompt));
			};
			const first = take(mocks.opencode.requests, main);
			const ours = (r) => JSON.stringify(r.body ?? "").includes(prompt);
			while (take(mocks.opencode.requests, ours));
			return { ...s, sent: first && stringsIn(first.body.messages) };
		},
		pi: async ({ cwd, env, prompt }) => {
			const argv = ["--no-session", "--no-skills", "--no-prompt-templates", "--no-themes", "-e", PI_PROVIDER, "--provider", "mock", "--model", "mock-model", "-p", prompt];
			const s = await run(BINARIES.pi, argv, { cwd, env: { PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", PROMPTINCLUDE_MOCK_BASE_URL: mocks.pi.baseUrl, ...env } });
			const ours = (body) => JSON.stringify(body?.messages ?? []).includes(prompt);
			const first = take(mocks.pi.requests, ours);
			while (take(mocks.pi.requests, ours));
			return { ...s, sent: first && stringsIn(first.messages) };
		},
		"qwen-code": async ({ cwd, env, prompt }) => {
			const s = await run(BINARIES["qwen-code"], ["-p", prompt], { cwd, env: { TERM: "dumb", NO_COLOR: "1", ...qwenEnv(`${mocks["qwen-code"].url}/v1`), ...env } });
			const ours = (r) => (r.body?.messages ?? []).some((m) => m.role !== "system" && contentText(m.content).includes(prompt));
			const first = take(mocks["qwen-code"].requests, ours);
			while (take(mocks["qwen-code"].requests, ours));
			return { ...s, sent: first && stringsIn(first.body.messages) };
		},
	};

	/**
	 * Starts `agent` in `cwd` with HOME `home` and `env` (PATH added) and the
	 * prompt `prompt` (unique to the session); resolves to { status, stdout,
	 * stderr, sent, afterRead }: `sent` is null when no request carried the
	 * prompt (the agent did not get that far). `codexMaxBytes` overrides the
	 * home's `project_doc_max_bytes` for this Codex session.
	 */
	function session(agent, { cwd, home, env = {}, prompt, read, codexMaxBytes }) {
		return starts[agent]({ cwd, prompt, read, codexMaxBytes, env: { PATH: process.env.PATH, HOME: home, ...env } });
	}

	return { prepareHome, session, close: () => Promise.all(Object.values(mocks).map((m) => m.close())) };
}
