// A minimal OpenAI Chat Completions server for end-to-end tests of the
// agents that take an OpenAI-compatible endpoint (Copilot CLI, opencode,
// Qwen Code; on mock-server.mjs: 127.0.0.1 only, every request recorded, bounded).
//
// POST .../chat/completions gets one assistant message streamed as
// Server-Sent Events (`data: {chunk}` lines, then `data: [DONE]`);
// anything else a 404.

import { json, startRecordingServer } from "./mock-server.mjs";

export const REPLY = "MOCK-REPLY-OK";

/** A message's text (`content` as a string or as text parts). */
export function contentText(content) {
	if (typeof content === "string") return content;
	if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
	return "";
}

let served = 0;
function answer({ method, path, body }, res) {
	if (method !== "POST" || !path.endsWith("/chat/completions")) return json(res, 404, { error: { message: `mock: no ${path}` } });
	const id = `chatcmpl-mock-${++served}`;
	const chunk = (delta, finish) => ({ id, object: "chat.completion.chunk", created: 0, model: body?.model ?? "mock-model", choices: [{ index: 0, delta, finish_reason: finish ?? null }] });
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" });
	for (const c of [chunk({ role: "assistant", content: REPLY }), chunk({}, "stop"), { ...chunk({}), choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }]) {
		res.write(`data: ${JSON.stringify(c)}\n\n`);
	}
	res.end("data: [DONE]\n\n");
}

/** Starts the mock; resolves to { url, requests, close() }. */
export const startMock = ({ maxRequests = 100 } = {}) => startRecordingServer({ maxRequests, answer });
