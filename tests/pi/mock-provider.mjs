// A pi extension that registers the provider `mock` at the mock server whose
// base URL is in PROMPTINCLUDE_MOCK_BASE_URL (context-pi.test.mjs): unlike
// models.json, it writes nothing into the agent directory under test.
export default function (pi) {
	pi.registerProvider("mock", {
		name: "Mock",
		baseUrl: process.env.PROMPTINCLUDE_MOCK_BASE_URL,
		apiKey: "PROMPTINCLUDE_MOCK_API_KEY",
		api: "openai-completions",
		models: [
			{
				id: "mock-model",
				name: "Mock Model",
				reasoning: false,
				input: ["text"],
				cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
				contextWindow: 128000,
				maxTokens: 4096,
				compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
			},
		],
	});
}
