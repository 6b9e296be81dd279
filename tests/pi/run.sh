#!/usr/bin/env bash
# End-to-end tests of the pi extension (integrations/pi/promptinclude.ts) in
# the real pi coding agent pinned in tests/pi/package.json, and the
# differential test of `promptinclude context --agent pi` against it.
#
#   PROMPTINCLUDE_BIN=target/release/promptinclude bash tests/pi/run.sh
#   bash tests/pi/run.sh --setup-only   # only the npm install (no binary needed)
#
# PROMPTINCLUDE_BIN defaults to target/release/promptinclude, then
# target/debug/promptinclude; the caller builds it. Skips (exit 0) only when
# Node.js is absent; any other problem, or a failing test, exits non-zero.
set -euo pipefail

src="${BASH_SOURCE[0]}"
[[ "$src" == */* ]] && here="${src%/*}" || here=.
here="$(cd "$here" && pwd)"
repo="$(cd "$here/../.." && pwd)"

if ! command -v node >/dev/null 2>&1; then
	echo "tests/pi: SKIPPED: node is not installed (pi extension e2e tests need Node.js >= 20.6 and npm)"
	exit 0
fi
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 6) ? 0 : 1)'; then
	echo "tests/pi: Node.js $(node --version) is too old; pi needs >= 20.6" >&2
	exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "tests/pi: node is installed but npm is not" >&2
	exit 1
fi

# Reinstall only when node_modules does not match the lockfile.
if [[ ! -x "$here/node_modules/.bin/pi" || ! -f "$here/node_modules/.package-lock.json" || "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]]; then
	echo "tests/pi: npm ci"
	(cd "$here" && npm ci --no-audit --no-fund --ignore-scripts --loglevel=error </dev/null)
fi
[[ "${1:-}" != --setup-only ]] || exit 0
if [[ -z "${PROMPTINCLUDE_BIN:-}" ]]; then
	for candidate in "$repo/target/release/promptinclude" "$repo/target/debug/promptinclude"; do
		if [[ -x "$candidate" ]]; then
			PROMPTINCLUDE_BIN="$candidate"
			break
		fi
	done
fi
if [[ -z "${PROMPTINCLUDE_BIN:-}" || ! -x "${PROMPTINCLUDE_BIN}" || -d "${PROMPTINCLUDE_BIN}" ]]; then
	echo "tests/pi: no promptinclude binary (PROMPTINCLUDE_BIN='${PROMPTINCLUDE_BIN:-}'); build it first: cargo build --release" >&2
	exit 1
fi
PROMPTINCLUDE_BIN="$(cd "$(dirname "$PROMPTINCLUDE_BIN")" && pwd)/$(basename "$PROMPTINCLUDE_BIN")"
export PROMPTINCLUDE_BIN

cd "$here"
echo "tests/pi: pi $(node -p 'require("./node_modules/@mariozechner/pi-coding-agent/package.json").version'), node $(node --version), promptinclude=$PROMPTINCLUDE_BIN"

# No TTY in CI: force the TAP reporter so the summary lines are always printed.
# Each file runs as one test under --test-timeout: the context differential's
# hundred-odd agent sessions take minutes on a loaded machine, and each of its
# tests has its own, tighter timeout (context-harness.mjs), so the file's is
# only a backstop.
exec node --test --test-reporter=tap --test-concurrency=2 --test-timeout=1200000 \
	e2e.test.mjs typecheck.test.mjs context-pi.test.mjs </dev/null
