// A minimal OpenAI Responses API server for end-to-end tests of Codex.
//
// Listens on 127.0.0.1 only, records every request (method, path, body) and
// answers POST .../responses with one assistant message streamed as
// Server-Sent Events in the Responses API's streaming format
// (response.created, response.output_item.added, response.output_text.delta,
// response.output_item.done, response.completed). Anything else gets a 404,
// recorded all the same. Bounded like mock-anthropic.mjs.

import http from "node:http";

export const REPLY = "MOCK-REPLY-OK";

/** Every string anywhere in a Responses API request's instructions and input. */
export function textsOf(body) {
	const out = [];
	const walk = (v) => {
		if (typeof v === "string") out.push(v);
		else if (Array.isArray(v)) v.forEach(walk);
		else if (v && typeof v === "object") Object.values(v).forEach(walk);
	};
	walk(body?.instructions);
	walk(body?.input);
	return out;
}

function sse(res, data) {
	res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

export function startMock({ maxRequests = 100 } = {}) {
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
				res.end(JSON.stringify({ error: { message: "mock: too many requests" } }));
				return;
			}
			if (req.method !== "POST" || !path.endsWith("/responses")) {
				res.writeHead(404, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message: `mock: no ${path}` } }));
				return;
			}
			const id = `resp_mock_${requests.length}`;
			const item = {
				id: `msg_mock_${requests.length}`,
				type: "message",
				role: "assistant",
				status: "completed",
				content: [{ type: "output_text", text: REPLY, annotations: [] }],
			};
			res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
			sse(res, { type: "response.created", response: { id, status: "in_progress", output: [] } });
			sse(res, { type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress", content: [] } });
			sse(res, { type: "response.output_text.delta", output_index: 0, content_index: 0, item_id: item.id, delta: REPLY });
			sse(res, { type: "response.output_item.done", output_index: 0, item });
			sse(res, {
				type: "response.completed",
				response: {
					id,
					status: "completed",
					output: [item],
					usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 3, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 13 },
				},
			});
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
