// The part the mock model servers share: an HTTP server on 127.0.0.1 that
// records every request (method, path, parsed JSON body) and hands it to
// the mock's own `answer`. Bounded: past `maxRequests` every request gets
// HTTP 429, so a runaway agent loop cannot spin forever.

import http from "node:http";

/** Every string anywhere in `values` (nested arrays and objects included). */
export function stringsIn(...values) {
	const out = [];
	const walk = (v) => {
		if (typeof v === "string") out.push(v);
		else if (Array.isArray(v)) v.forEach(walk);
		else if (v && typeof v === "object") Object.values(v).forEach(walk);
	};
	values.forEach(walk);
	return out;
}

/** Writes one JSON response. */
export function json(res, status, value) {
	res.writeHead(status, { "content-type": "application/json" });
	res.end(JSON.stringify(value));
}

/**
 * Starts the server; resolves to { url, requests, close() }, `requests`
 * being the live list of recorded requests. `answer(request, res)` answers
 * each request within the bound.
 */
export function startRecordingServer({ maxRequests, answer }) {
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
			const request = { method: req.method, path: (req.url ?? "").split("?")[0], body };
			requests.push(request);
			if (requests.length > maxRequests) json(res, 429, { error: { message: "mock: too many requests" } });
			else answer(request, res);
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
