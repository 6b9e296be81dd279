// The extension must type-check against the pinned pi's own declarations
// (ExtensionAPI, event and result shapes, ToolDefinition), so API drift in a
// pi upgrade shows up here and not only at run time.

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));

test("integrations/pi/promptinclude.ts type-checks against pi's declarations (tsc --strict)", async () => {
	const tsc = path.join(HERE, "node_modules/typescript/bin/tsc");
	const { code, output } = await new Promise((resolve) => {
		execFile(process.execPath, [tsc, "-p", path.join(HERE, "tsconfig.json")], { cwd: HERE }, (err, stdout, stderr) => {
			resolve({ code: err ? (err.code ?? 1) : 0, output: `${stdout}${stderr}` });
		});
	});
	assert.equal(code, 0, `tsc reported errors:\n${output}`);
});
