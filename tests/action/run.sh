#!/usr/bin/env bash
# Runs the GitHub Action (action.yml) locally, step by step, as the runner
# would: tests/action/test_action.py parses action.yml, evaluates each step's
# ${{ }} expressions and `if:`, runs the `run:` steps with bash in temporary git
# repositories against a mock GitHub API on 127.0.0.1, and records the `uses:`
# steps. PyYAML comes from a cached venv (~/.cache/promptinclude-action-venv).
#   tests/action/run.sh            # uses target/release/promptinclude (built if missing)
#   PROMPTINCLUDE_BIN=/path/to/promptinclude tests/action/run.sh
#   tests/action/run.sh --setup-only   # only the cached venv
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"

skip_or_fail() {
  if [ "${PROMPTINCLUDE_REQUIRE_ORACLE:-0}" = 1 ]; then
    echo "tests/action: FAILED: $*" >&2
    exit 1
  fi
  echo "tests/action: SKIPPED: $*" >&2
  exit 0
}

command -v python3 >/dev/null 2>&1 || skip_or_fail "python3 is not installed"
command -v curl >/dev/null 2>&1 || skip_or_fail "curl is not installed (the Action posts with it)"
command -v git >/dev/null 2>&1 || skip_or_fail "git is not installed"

venv="${PROMPTINCLUDE_ACTION_VENV:-$HOME/.cache/promptinclude-action-venv}"
if ! "$venv/bin/python" -c 'import yaml' 2>/dev/null; then
  rm -rf "$venv"
  python3 -m venv "$venv" || skip_or_fail "cannot create a venv at $venv"
  "$venv/bin/pip" install -q 'PyYAML==6.0.3' || skip_or_fail "cannot install PyYAML from PyPI"
fi
[ "${1:-}" != --setup-only ] || exit 0

if [ -n "${PROMPTINCLUDE_BIN:-}" ] && [ ! -x "$PROMPTINCLUDE_BIN" ]; then
  echo "tests/action: FAILED: PROMPTINCLUDE_BIN=$PROMPTINCLUDE_BIN is not an executable" >&2
  exit 1
fi
bin="${PROMPTINCLUDE_BIN:-$repo/target/release/promptinclude}"
if [ ! -x "$bin" ]; then
  export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-false}"
  export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-0}"
  export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-16}"
  # Builds on a shared machine take turns: PROMPTINCLUDE_BUILD_LOCK= (empty)
  # when the caller holds the lock already.
  lock="${PROMPTINCLUDE_BUILD_LOCK-/tmp/promptinclude-build.lock}"
  if [ -n "$lock" ] && command -v flock >/dev/null 2>&1; then
    flock "$lock" cargo build --release --locked --bin promptinclude
  else
    cargo build --release --locked --bin promptinclude
  fi
fi

if command -v shellcheck >/dev/null 2>&1; then
  shellcheck integrations/github-action/run.sh tests/action/run.sh
fi

PROMPTINCLUDE_BIN="$bin" exec "$venv/bin/python" tests/action/test_action.py "$@"
