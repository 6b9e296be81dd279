// A minimal Anthropic Messages API server for end-to-end tests of Claude Code.
//
// Listens on 127.0.0.1 only, records every request (method, path, body) and
// answers POST /v1/messages with one short text reply: streamed as
// Server-Sent Events when the request asks for `stream: true` (message_start,
// content_block_start, content_block_delta, content_block_stop,
// message_delta, message_stop — the event sequence of the Messages API's
// streaming format), else as one JSON message. count_tokens gets a fixed
// count; anything else a 404, recorded all the same.
//
// Bounded: after `maxRequests` requests every further one gets HTTP 429, so
// a runaway agent loop cannot spin forever.

import http from "node:http";

export const REPLY = "MOCK-REPLY-OK";

/** Every string of text anywhere in a Messages API request body. */
export function textsOf(body) {
	const out = [];
	const walk = (v) => {
		if (typeof v === "string") out.push(v);
		else if (Array.isArray(v)) v.forEach(walk);
		else if (v && typeof v === "object") Object.values(v).forEach(walk);
	};
	walk(body?.system);
	walk(body?.messages);
	return out;
}

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

/**
 * Starts the server; resolves to { url, requests, close() }. `requests` is
 * the live list of recorded requests ({ method, path, body }).
 */
export function startMock({ maxRequests = 200 } = {}) {
	const requests = [];
	const server = http.createServer((req, res) => {
		const chunks = [];
		req.on("data", (c) => chunks.push(c));
		req.on("end", () => {
			const raw = Buffer.concat(chunks).toString("utf8");
			let body;
			try {
				body = raw ? JSON.parse(raw) : undefined;
			} catch {
				body = raw;
			}
			const path = (req.url ?? "").split("?")[0];
			requests.push({ method: req.method, path, body });
			if (requests.length > maxRequests) {
				res.writeHead(429, { "content-type": "application/json" });
				res.end(JSON.stringify({ type: "error", error: { type: "rate_limit_error", message: "mock: too many requests" } }));
				return;
			}
			if (req.method === "POST" && path === "/v1/messages/count_tokens") {
				res.writeHead(200, { "content-type": "application/json" });
				res.end(JSON.stringify({ input_tokens: 10 }));
				return;
			}
			if (req.method !== "POST" || path !== "/v1/messages") {
				res.writeHead(404, { "content-type": "application/json" });
				res.end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `mock: no ${path}` } }));
				return;
			}
			const model = typeof body?.model === "string" ? body.model : "mock-model";
			if (!body?.stream) {
				const m = message(model);
				m.content = [{ type: "text", text: REPLY }];
				m.stop_reason = "end_turn";
				res.writeHead(200, { "content-type": "application/json" });
				res.end(JSON.stringify(m));
				return;
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
		});
	});
	return new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => {
			const { port } = server.address();
			resolve({
				url: `http://127.0.0.1:${port}`,
				requests,
				close: () => new Promise((r) => server.close(() => r())),
			});
		});
	});
}
