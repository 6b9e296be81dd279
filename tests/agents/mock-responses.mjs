// A minimal OpenAI Responses API server for end-to-end tests of Codex (on
// mock-server.mjs: 127.0.0.1 only, every request recorded, bounded).
//
// POST .../responses gets one assistant message streamed as Server-Sent
// Events in the Responses API's streaming format (response.created,
// response.output_item.added, response.output_text.delta,
// response.output_item.done, response.completed); anything else a 404.

import { json, startRecordingServer, stringsIn } from "./mock-server.mjs";

export const REPLY = "MOCK-REPLY-OK";

/** Every string in a Responses API request's instructions and input. */
export const textsOf = (body) => stringsIn(body?.instructions, body?.input);

function sse(res, data) {
	res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

let served = 0;
function answer({ method, path }, res) {
	if (method !== "POST" || !path.endsWith("/responses")) return json(res, 404, { error: { message: `mock: no ${path}` } });
	const n = ++served;
	const item = {
		id: `msg_mock_${n}`,
		type: "message",
		role: "assistant",
		status: "completed",
		content: [{ type: "output_text", text: REPLY, annotations: [] }],
	};
	const usage = {
		input_tokens: 10,
		input_tokens_details: { cached_tokens: 0 },
		output_tokens: 3,
		output_tokens_details: { reasoning_tokens: 0 },
		total_tokens: 13,
	};
	res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
	sse(res, { type: "response.created", response: { id: `resp_mock_${n}`, status: "in_progress", output: [] } });
	sse(res, { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } });
	sse(res, { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: item.id, delta: REPLY });
	sse(res, { type: "response.output_item.done", output_index: 0, item });
	sse(res, { type: "response.completed", response: { id: `resp_mock_${n}`, status: "completed", output: [item], usage } });
	res.end();
}

/** Starts the mock; resolves to { url, requests, close() }. */
export const startMock = ({ maxRequests = 100 } = {}) => startRecordingServer({ maxRequests, answer });
