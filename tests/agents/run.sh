#!/usr/bin/env bash
# End-to-end tests of `promptinclude hook`, `init` and `mcp` in the real
# agents pinned in tests/agents/package.json (Claude Code, Codex) and the
# official MCP TypeScript SDK as the client, and the differential tests of
# `promptinclude context` against Codex, Claude Code and Gemini CLI.
#
#   PROMPTINCLUDE_BIN=target/release/promptinclude bash tests/agents/run.sh
#   bash tests/agents/run.sh --setup-only   # only the npm install (no binary needed)
#
# The npm install is cached under ${XDG_CACHE_HOME:-~/.cache}/promptinclude-agents/
# and redone only when package-lock.json changes. Skips (exit 0) only when
# Node.js or npm is absent, and fails instead under
# PROMPTINCLUDE_REQUIRE_ORACLE=1 (CI); any other problem, or a failing test,
# exits non-zero.
set -euo pipefail

src="${BASH_SOURCE[0]}"
[[ "$src" == */* ]] && here="${src%/*}" || here=.
here="$(cd "$here" && pwd)"
repo="$(cd "$here/../.." && pwd)"

missing=""
command -v node >/dev/null 2>&1 || missing="node"
command -v npm >/dev/null 2>&1 || missing="${missing:+$missing and }npm"
if [[ -n "$missing" ]]; then
	if [[ "${PROMPTINCLUDE_REQUIRE_ORACLE:-}" == 1 ]]; then
		echo "tests/agents: FAILED: $missing missing (PROMPTINCLUDE_REQUIRE_ORACLE=1)" >&2
		exit 1
	fi
	echo "tests/agents: SKIPPED: $missing missing (the agent e2e tests need Node.js >= 20 and npm)"
	exit 0
fi

# The install lives outside the work tree (it is ~800 MB: the agents ship
# native binaries), keyed by the lockfile so a version bump reinstalls.
cache="${XDG_CACHE_HOME:-$HOME/.cache}/promptinclude-agents"
key="$(sha256sum "$here/package-lock.json" | cut -c1-16)"
modules="$cache/$key"
if [[ ! -f "$modules/.complete" ]]; then
	echo "tests/agents: npm ci into $modules"
	rm -rf "$modules"
	mkdir -p "$modules"
	cp "$here/package.json" "$here/package-lock.json" "$modules/"
	# Install scripts run: Claude Code's postinstall links its platform binary.
	(cd "$modules" && npm ci --no-audit --no-fund --loglevel=error </dev/null)
	touch "$modules/.complete"
fi
[[ "${1:-}" != --setup-only ]] || exit 0
PROMPTINCLUDE_BIN="${PROMPTINCLUDE_BIN:-$repo/target/release/promptinclude}"
if [[ ! -x "$PROMPTINCLUDE_BIN" || -d "$PROMPTINCLUDE_BIN" ]]; then
	echo "tests/agents: no promptinclude binary at $PROMPTINCLUDE_BIN; build it first: cargo build --release" >&2
	exit 1
fi
PROMPTINCLUDE_BIN="$(cd "$(dirname "$PROMPTINCLUDE_BIN")" && pwd)/$(basename "$PROMPTINCLUDE_BIN")"
export PROMPTINCLUDE_BIN

export AGENTS_NODE_MODULES="$modules/node_modules"
echo "tests/agents: claude $("$AGENTS_NODE_MODULES/.bin/claude" --version </dev/null), $("$AGENTS_NODE_MODULES/.bin/codex" --version </dev/null), gemini $("$AGENTS_NODE_MODULES/.bin/gemini" --version </dev/null), node $(node --version), promptinclude=$PROMPTINCLUDE_BIN"

cd "$here"
# No TTY in CI: the TAP reporter always prints the summary lines.
# --test-timeout bounds each file; the context differentials' own tests have
# tighter ones (context-harness.mjs), so it is only a backstop on a loaded
# machine.
exec node --test --test-reporter=tap --test-concurrency=1 --test-timeout=1200000 \
	./*.test.mjs </dev/null
