#!/usr/bin/env bash
# The pre-commit hook (.pre-commit-hooks.yaml, id promptinclude-audit) in the
# real pre-commit from PyPI (pinned, in a cached venv): a throwaway git
# repository whose .pre-commit-config.yaml points at a git snapshot of this
# checkout's current tree (uncommitted and untracked files included, ignored
# ones not), committed in a temporary repository whose sha is the `rev:`.
# pre-commit then runs its own `cargo install` of the hook; CARGO_TARGET_DIR
# (default target/precommit) keeps that build between runs.
#   tests/pre-commit/run.sh
#   PROMPTINCLUDE_KEEP_TMP=1 tests/pre-commit/run.sh    # keep the temp dirs
#   tests/pre-commit/run.sh --setup-only                # only the cached venv
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
repo="$PWD"
PRE_COMMIT_VERSION=4.7.0

skip_or_fail() {
  if [ "${PROMPTINCLUDE_REQUIRE_ORACLE:-0}" = 1 ]; then
    echo "tests/pre-commit: FAILED: $*" >&2
    exit 1
  fi
  echo "tests/pre-commit: SKIPPED: $*" >&2
  exit 0
}
command -v python3 >/dev/null 2>&1 || skip_or_fail "python3 is not installed"
command -v cargo >/dev/null 2>&1 || skip_or_fail "cargo is not installed"
command -v git >/dev/null 2>&1 || skip_or_fail "git is not installed"
if command -v shellcheck >/dev/null 2>&1; then shellcheck tests/pre-commit/run.sh; fi

venv="${PROMPTINCLUDE_PRECOMMIT_VENV:-$HOME/.cache/promptinclude-precommit-venv}"
if [ "$("$venv/bin/pre-commit" --version 2>/dev/null)" != "pre-commit $PRE_COMMIT_VERSION" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv" || skip_or_fail "cannot create a venv at $venv"
  "$venv/bin/pip" install -q "pre-commit==$PRE_COMMIT_VERSION" || skip_or_fail "cannot install pre-commit $PRE_COMMIT_VERSION from PyPI"
fi
pre_commit="$venv/bin/pre-commit"
[ "${1:-}" != --setup-only ] || exit 0

# pre-commit runs the build under the temporary HOME below: keep the real
# toolchain and crate cache.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export CARGO_TARGET_DIR="${PROMPTINCLUDE_PRECOMMIT_TARGET:-$repo/target/precommit}"
export CARGO_PROFILE_RELEASE_LTO="${CARGO_PROFILE_RELEASE_LTO:-false}"
export CARGO_PROFILE_RELEASE_DEBUG="${CARGO_PROFILE_RELEASE_DEBUG:-0}"
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS="${CARGO_PROFILE_RELEASE_CODEGEN_UNITS:-16}"
export CARGO_TERM_COLOR=never NO_COLOR=1

tmp="$(mktemp -d "${TMPDIR:-/tmp}/pi-precommit.XXXXXX")"
ok=0
cleanup() {
  if [ "$ok" = 1 ] && [ "${PROMPTINCLUDE_KEEP_TMP:-0}" != 1 ]; then rm -rf "$tmp"; else echo "tests/pre-commit: temp dir kept: $tmp" >&2; fi
}
trap cleanup EXIT
fail() { echo "tests/pre-commit: FAIL: $*" >&2; exit 1; }

gitc() { git -c user.name=t -c user.email=t@example.com -c commit.gpgsign=false -c init.defaultBranch=main "$@"; }

# 1. The hook repository: this checkout's tree, uncommitted files included.
snap="$tmp/hook-repo"
gitc init -q "$snap"
GIT_DIR="$snap/.git" GIT_WORK_TREE="$repo" git add -A
GIT_DIR="$snap/.git" gitc commit -q -m "snapshot of $repo"
rev="$(git -C "$snap" rev-parse HEAD)"
git -C "$snap" cat-file -e "$rev:.pre-commit-hooks.yaml" || fail "the snapshot has no .pre-commit-hooks.yaml"

export HOME="$tmp/home" PRE_COMMIT_HOME="$tmp/pre-commit-home"
mkdir -p "$HOME"

# 2. The user's repository.
work="$tmp/work"
gitc init -q "$work"
cd "$work"
# The user's .pre-commit-config.yaml: the hook from the snapshot, with the
# hook arguments given (a YAML flow list), if any.
write_config() {
  {
    printf 'repos:\n  - repo: %s\n    rev: %s\n    hooks:\n      - id: promptinclude-audit\n' "$snap" "$rev"
    if [ $# -gt 0 ]; then printf '        args: %s\n' "$1"; fi
  } >.pre-commit-config.yaml
}
write_config
printf '# Project\nUse tabs.\n' >project.promptinclude.md
printf 'Write short sentences.\n' >style.promptinclude.md
"$pre_commit" install >/dev/null
gitc add -A

# 3. The hook's environment: pre-commit's own cargo install (timed).
# Builds on a shared machine take turns on a lock (PROMPTINCLUDE_BUILD_LOCK,
# empty when the caller holds it already); the time waited for it is reported
# apart.
lock="${PROMPTINCLUDE_BUILD_LOCK-/tmp/promptinclude-build.lock}"
locker=()
if [ -n "$lock" ] && command -v flock >/dev/null 2>&1; then locker=(flock "$lock"); fi
start="$(date +%s)"
# shellcheck disable=SC2016  # expanded by the inner sh
"${locker[@]}" sh -c 'date +%s >"$1"; shift; exec "$@"' sh "$tmp/locked-at" \
  "$pre_commit" install-hooks >"$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "pre-commit install-hooks (cargo install of the hook) failed"; }
end="$(date +%s)" locked="$(cat "$tmp/locked-at")"
echo "tests/pre-commit: hook environment built in $((end - locked)) s, after $((locked - start)) s waiting for the build lock (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)"
hook_bin="$(find "$PRE_COMMIT_HOME" -path '*rustenv*/bin/promptinclude' | head -n 1)"
[ -x "$hook_bin" ] || fail "no promptinclude in pre-commit's rust environment"
# The expected messages: the same build, run by hand on the same tree.
bin="$hook_bin"

commit() { # expect(pass|fail) message -> output in $tmp/out
  local rc=0
  gitc commit -q -m "$2" >"$tmp/out" 2>&1 || rc=$?
  if [ "$1" = pass ] && [ "$rc" -ne 0 ]; then cat "$tmp/out"; fail "commit '$2' was refused (exit $rc)"; fi
  if [ "$1" = fail ] && [ "$rc" -eq 0 ]; then cat "$tmp/out"; fail "commit '$2' went through"; fi
  echo "tests/pre-commit: ok: commit '$2' ${1}ed (exit $rc)"
}
contains() { grep -qF -- "$1" "$tmp/out" || { cat "$tmp/out"; fail "the output lacks: $1"; }; }

# The hook's gates (.pre-commit-hooks.yaml): the expected messages come from
# the same audit run by hand.
gates="cropped,skipped,hidden_text:tag,hidden_text:bidi"

# A good commit passes, and the hook did run.
commit pass "good rule files"
contains "promptinclude audit"
contains "Passed"

# A rule file past the per-file cap (2000 tokens): cropped, refused.
python3 -c "print('word ' * 3000)" >big.promptinclude.md
gitc add big.promptinclude.md
commit fail "a cropped rule file"
contains "Failed"
expected="$("$bin" audit --color never --fail-on "$gates" 2>&1 >/dev/null || true)"
[ -n "$expected" ] || fail "the real audit printed no gate message"
while IFS= read -r line; do contains "$line"; done <<<"$expected"
contains "cropped"
gitc reset -q HEAD big.promptinclude.md
rm big.promptinclude.md

# Hidden instructions: Unicode tag characters (invisible text) refused, and
# bidirectional controls; a zero-width space alone is reported, not refused.
printf 'Be kind.\xf3\xa0\x81\x89\xf3\xa0\x81\x87\n' >hidden.promptinclude.md
gitc add hidden.promptinclude.md
commit fail "a rule file with tag characters"
expected="$("$bin" audit --color never --fail-on "$gates" 2>&1 >/dev/null || true)"
case "$expected" in *'hidden_text'*'spelling "IG"'*) ;; *) fail "the real audit reports no hidden text: $expected" ;; esac
while IFS= read -r line; do contains "$line"; done <<<"$expected"
printf 'x = 1 \xe2\x80\xae// admin\xe2\x80\xac\n' >hidden.promptinclude.md
gitc add hidden.promptinclude.md
commit fail "a rule file with a bidirectional override"
contains "bidirectional control"
printf 'use\xe2\x80\x8btabs\n' >hidden.promptinclude.md
gitc add hidden.promptinclude.md
commit pass "a rule file with a zero-width space"
gitc rm -q hidden.promptinclude.md
commit pass "the hidden text removed"

# Files left out by the budget: skipped, refused (a project configuration
# allowing one file; it is itself a file the hook watches).
mkdir -p .a0proj/plugins/_promptinclude
printf '{"max_file_count": 1}\n' >.a0proj/plugins/_promptinclude/config.json
gitc add .a0proj
commit fail "a skipped rule file"
expected="$("$bin" audit --color never --fail-on "$gates" 2>&1 >/dev/null || true)"
case "$expected" in *skipped*) ;; *) fail "the real audit reports no skipped file: $expected" ;; esac
while IFS= read -r line; do contains "$line"; done <<<"$expected"

# An invalid configuration: refused with the configuration error.
printf '{"max_file_count": \n' >.a0proj/plugins/_promptinclude/config.json
gitc add .a0proj
commit fail "an invalid configuration"
expected="$("$bin" audit --color never --fail-on "$gates" 2>&1 >/dev/null || true)"
case "$expected" in *"malformed JSON"*) ;; *) fail "the real audit does not reject the configuration: $expected" ;; esac
while IFS= read -r line; do contains "$line"; done <<<"$expected"
gitc reset -q HEAD .a0proj
rm -rf .a0proj

# A change to no rule or configuration file does not run the hook.
printf 'notes\n' >README.md
gitc add README.md
commit pass "no rule file touched"
contains "(no files to check)Skipped"

# A configuration passed with args (and named after the tool) is watched too.
write_config "[--config, ci/promptinclude.yaml]"
mkdir -p ci
printf 'max_file_tokens: [1\n' >ci/promptinclude.yaml
gitc add -A
commit fail "an invalid --config file"
contains "invalid configuration"
printf 'max_file_tokens: 3000\n' >ci/promptinclude.yaml
python3 -c "print('word ' * 2500)" >big.promptinclude.md
gitc add -A
commit pass "a file within a raised cap"

start=$SECONDS
"$pre_commit" run --all-files >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "pre-commit run --all-files failed on the good tree"; }
echo "tests/pre-commit: pre-commit run --all-files (environment cached): $((SECONDS - start)) s"
ok=1
echo "tests/pre-commit: all passed"
