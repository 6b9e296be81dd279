// A minimal Anthropic Messages API server for end-to-end tests of Claude Code
// (on mock-server.mjs: 127.0.0.1 only, every request recorded, bounded).
//
// POST /v1/messages gets one short text reply: streamed as Server-Sent
// Events when the request asks for `stream: true` (message_start,
// content_block_start, content_block_delta, content_block_stop,
// message_delta, message_stop — the Messages API's streaming event
// sequence), else as one JSON message. count_tokens gets a fixed count;
// anything else a 404.
//
// A prompt holding `READ-FILE[/abs/path]` makes the model ask for the Read
// tool on that path first (once per conversation: the request after the
// tool's result gets the text reply), as a model would before working on a
// file: what Claude Code then adds to the conversation (the rules whose
// `paths:` match) is in the next request.

import { json, startRecordingServer, stringsIn } from "./mock-server.mjs";

export const REPLY = "MOCK-REPLY-OK";

/** Every string of text in a Messages API request's system prompt and messages. */
export const textsOf = (body) => stringsIn(body?.system, body?.messages);

function sse(res, event, data) {
	res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function message(model) {
	return {
		id: `msg_mock_${Date.now()}`,
		type: "message",
		role: "assistant",
		model,
		content: [],
		stop_reason: null,
		stop_sequence: null,
		usage: { input_tokens: 10, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
	};
}

/** `READ-FILE[path]` in the request's first user message, while no tool has answered yet. */
function readRequested(body) {
	if (!Array.isArray(body?.tools) || !body.tools.some((t) => t?.name === "Read")) return null;
	const texts = stringsIn(body.messages);
	if ((body.messages ?? []).some((m) => Array.isArray(m?.content) && m.content.some((c) => c?.type === "tool_result"))) return null;
	for (const t of texts) {
		const m = /READ-FILE\[([^\]]+)\]/.exec(t);
		if (m) return m[1];
	}
	return null;
}

function answer({ method, path, body }, res) {
	if (method === "POST" && path === "/v1/messages/count_tokens") return json(res, 200, { input_tokens: 10 });
	if (method !== "POST" || path !== "/v1/messages") {
		return json(res, 404, { type: "error", error: { type: "not_found_error", message: `mock: no ${path}` } });
	}
	const model = typeof body?.model === "string" ? body.model : "mock-model";
	const read = readRequested(body);
	if (read !== null) {
		const id = `toolu_mock_${Date.now()}`;
		const input = { file_path: read };
		if (!body?.stream) return json(res, 200, { ...message(model), content: [{ type: "tool_use", id, name: "Read", input }], stop_reason: "tool_use" });
		res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
		sse(res, "message_start", { type: "message_start", message: message(model) });
		sse(res, "content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id, name: "Read", input: {} } });
		sse(res, "content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: JSON.stringify(input) } });
		sse(res, "content_block_stop", { type: "content_block_stop", index: 0 });
		sse(res, "message_delta", { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 3 } });
		sse(res, "message_stop", { type: "message_stop" });
		return res.end();
	}
	if (!body?.stream) {
		return json(res, 200, { ...message(model), content: [{ type: "text", text: REPLY }], stop_reason: "end_turn" });
	}
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
	sse(res, "message_start", { type: "message_start", message: message(model) });
	sse(res, "content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
	sse(res, "content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: REPLY } });
	sse(res, "content_block_stop", { type: "content_block_stop", index: 0 });
	sse(res, "message_delta", {
		type: "message_delta",
		delta: { stop_reason: "end_turn", stop_sequence: null },
		usage: { output_tokens: 3 },
	});
	sse(res, "message_stop", { type: "message_stop" });
	res.end();
}

/** Starts the mock; resolves to { url, requests, close() }. */
export const startMock = ({ maxRequests = 200 } = {}) => startRecordingServer({ maxRequests, answer });
