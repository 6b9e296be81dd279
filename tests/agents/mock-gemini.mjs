// A minimal Gemini API server for end-to-end tests of Gemini CLI (on
// mock-server.mjs: 127.0.0.1 only, every request recorded, bounded).
//
// generateContent and streamGenerateContent (one Server-Sent Event) get
// one candidate whose text is a JSON object that also satisfies Gemini
// CLI's model router (its complexity classifier asks for
// `complexity_reasoning` and `complexity_score`); countTokens a fixed
// count; anything else `{}`.

import { json, startRecordingServer } from "./mock-server.mjs";

export const REPLY = JSON.stringify({ reasoning: "mock", model_choice: "flash", complexity_reasoning: "mock", complexity_score: 10 });

function response() {
	return {
		candidates: [{ content: { role: "model", parts: [{ text: REPLY }] }, finishReason: "STOP", index: 0 }],
		usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
		modelVersion: "mock",
	};
}

function answer({ path }, res) {
	if (path.endsWith(":streamGenerateContent")) {
		res.writeHead(200, { "content-type": "text/event-stream" });
		return res.end(`data: ${JSON.stringify(response())}\r\n\r\n`);
	}
	if (path.endsWith(":generateContent")) return json(res, 200, response());
	if (path.endsWith(":countTokens")) return json(res, 200, { totalTokens: 10 });
	return json(res, 200, {});
}

/** Starts the mock; resolves to { url, requests, close() }. */
export const startMock = ({ maxRequests = 100 } = {}) => startRecordingServer({ maxRequests, answer });

/**
 * The main model request of a session: the generate request whose first
 * user part is the <session_context>, that carries `prompt`, and that is not
 * the router's JSON classifier call.
 */
export function mainRequest(requests, prompt) {
	return requests.find(({ path, body }) => {
		if (!/:(stream)?[gG]enerateContent$/.test(path) || !Array.isArray(body?.contents) || !body.systemInstruction) return false;
		const texts = body.contents.flatMap((c) => (c.parts ?? []).map((p) => p.text ?? ""));
		return (texts[0] ?? "").startsWith("<session_context>") && body.generationConfig?.responseMimeType !== "application/json" && texts.includes(prompt);
	});
}
