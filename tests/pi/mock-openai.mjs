// A minimal OpenAI-compatible Chat Completions server for end-to-end tests.
//
// It listens on 127.0.0.1 only, records every request body, and streams back
// scripted answers the way pi's "openai-completions" provider expects them
// (Server-Sent Events, `data: {chunk}` lines, then `data: [DONE]`).
//
// Scripting: when the last user message asks for `[[call:<tool>]]`, the mock
// answers with a tool call to <tool> (no arguments); once the tool result is
// back it answers with plain text. Everything else gets plain text.
//
// The request loop is bounded: after `maxRequests` requests every further one
// is answered with HTTP 429 and the server stops accepting connections, so a
// runaway agent loop can never spin forever.

import http from "node:http";

export const MOCK_MODEL = "mock-model";

/** Plain text of an OpenAI message `content` (string or array of parts). */
export function contentText(content) {
	if (typeof content === "string") return content;
	if (Array.isArray(content)) {
		return content
			.map((part) => (part && typeof part === "object" && typeof part.text === "string" ? part.text : ""))
			.join("");
	}
	return "";
}

/** The system (or developer) prompt of a recorded request. */
export function systemPromptOf(body) {
	const first = body.messages.find((m) => m.role === "system" || m.role === "developer");
	return first ? contentText(first.content) : undefined;
}

function decide(body) {
	const messages = Array.isArray(body.messages) ? body.messages : [];
	const last = messages[messages.length - 1];
	if (last && last.role === "tool") {
		return { text: "Tool result received." };
	}
	// The user's prompt is the last message with role "user" that is a real prompt
	// (extension messages are sent as user messages too, so look at all of them).
	for (let i = messages.length - 1; i >= 0; i--) {
		const m = messages[i];
		if (m.role === "assistant") break;
		if (m.role !== "user") continue;
		const match = /\[\[call:([A-Za-z0-9_-]+)\]\]/.exec(contentText(m.content));
		if (match) return { toolCall: match[1] };
	}
	return { text: "OK." };
}

function chunk(id, delta, finishReason) {
	return {
		id,
		object: "chat.completion.chunk",
		created: Math.floor(Date.now() / 1000),
		model: MOCK_MODEL,
		choices: [{ index: 0, delta, finish_reason: finishReason ?? null }],
	};
}

/**
 * Start the mock server.
 * @param {{ maxRequests?: number }} [options]
 * @returns {Promise<{ baseUrl: string, requests: any[], close: () => Promise<void> }>}
 */
export async function startMockServer(options = {}) {
	const maxRequests = options.maxRequests ?? 100;
	const requests = [];
	let served = 0;
	let seq = 0;

	const server = http.createServer((req, res) => {
		served += 1;
		if (served > maxRequests) {
			res.writeHead(429, { "content-type": "application/json" });
			res.end(JSON.stringify({ error: { message: "mock request budget exhausted" } }));
			server.close();
			return;
		}
		const chunks = [];
		let size = 0;
		req.on("data", (c) => {
			size += c.length;
			if (size > 64 * 1024 * 1024) {
				req.destroy();
				return;
			}
			chunks.push(c);
		});
		req.on("end", () => {
			if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
				res.writeHead(404, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
				return;
			}
			let body;
			try {
				body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
			} catch (err) {
				res.writeHead(400, { "content-type": "application/json" });
				res.end(JSON.stringify({ error: { message: `bad json: ${err}` } }));
				return;
			}
			requests.push(body);
			const id = `chatcmpl-mock-${++seq}`;
			const answer = decide(body);
			const events = [];
			if (answer.toolCall) {
				events.push(
					chunk(id, {
						role: "assistant",
						tool_calls: [
							{
								index: 0,
								id: `call_${seq}`,
								type: "function",
								function: { name: answer.toolCall, arguments: "{}" },
							},
						],
					}),
				);
				events.push(chunk(id, {}, "tool_calls"));
			} else {
				events.push(chunk(id, { role: "assistant", content: answer.text }));
				events.push(chunk(id, {}, "stop"));
			}
			const usage = { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 };
			events.push({ ...chunk(id, {}), choices: [], usage });
			res.writeHead(200, {
				"content-type": "text/event-stream",
				"cache-control": "no-cache",
				connection: "close",
			});
			for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
			res.end("data: [DONE]\n\n");
		});
	});
	server.keepAliveTimeout = 1000;
	server.requestTimeout = 30_000;

	await new Promise((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", resolve);
	});
	const { port } = server.address();
	return {
		baseUrl: `http://127.0.0.1:${port}/v1`,
		requests,
		close: () =>
			new Promise((resolve) => {
				server.closeAllConnections?.();
				server.close(() => resolve());
			}),
	};
}
