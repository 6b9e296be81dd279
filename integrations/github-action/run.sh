#!/usr/bin/env bash
# The logic of the promptinclude GitHub Action (action.yml at the repository
# root). Each composite step calls one subcommand; every input arrives as an
# INPUT_* environment variable, set explicitly by the step, so the script runs
# the same outside a runner (tests/action/run.sh does exactly that).
#
#   run.sh install   put `promptinclude` on PATH unless it is already there
#                    (cargo install --locked --path "$INPUT_ACTION_PATH")
#   run.sh diff      on a pull request: comment `promptinclude diff --format
#                    markdown BASE HEAD` per root, updating the Action's earlier
#                    comment instead of adding one per push
#   run.sh audit     `promptinclude audit` with the gates; the step fails with
#                    the audit's exit code and its gate messages
#
# Outputs go to $GITHUB_OUTPUT, a Markdown summary to $GITHUB_STEP_SUMMARY.
set -euo pipefail

# One marker line starts the comment, so the next push finds and edits it.
MARKER='<!-- promptinclude-action:diff -->'

die() { printf '::error::promptinclude action: %s\n' "$*" >&2; exit 2; }

output() { # name value (single-line values)
  if [ -n "${GITHUB_OUTPUT:-}" ]; then printf '%s=%s\n' "$1" "$2" >>"$GITHUB_OUTPUT"; fi
}

summary() {
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then cat >>"$GITHUB_STEP_SUMMARY"; else cat >/dev/null; fi
}

# The roots input, one or more directories separated by whitespace or newlines.
read_roots() {
  ROOTS=()
  local IFS=$' \t\n'
  read -r -d '' -a ROOTS <<<"${INPUT_ROOTS:-.}" || true # no glob expansion
  [ "${#ROOTS[@]}" -gt 0 ] || ROOTS=(.)
}

# The configuration flags shared by audit and diff.
config_args() {
  CONFIG_ARGS=()
  if [ -n "${INPUT_CONFIG:-}" ]; then CONFIG_ARGS+=(--config "$INPUT_CONFIG"); fi
}

# json_get FILE EXPR: one value of a JSON file, with python3 (on every hosted runner).
json_get() {
  python3 - "$1" "$2" <<'PY'
import json, sys
v = json.load(open(sys.argv[1], encoding="utf-8"))
for k in sys.argv[2].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print("" if v is None else v)
PY
}

cmd_install() {
  if command -v promptinclude >/dev/null 2>&1; then
    echo "promptinclude already on PATH: $(command -v promptinclude)"
  else
    [ -n "${INPUT_ACTION_PATH:-}" ] || die "INPUT_ACTION_PATH is not set"
    command -v cargo >/dev/null 2>&1 || die "promptinclude is not on PATH and cargo is not installed (install a Rust toolchain, or pip install the wheel, before this Action)"
    echo "installing promptinclude from $INPUT_ACTION_PATH"
    cargo install --locked --path "$INPUT_ACTION_PATH"
    local bin="${CARGO_HOME:-$HOME/.cargo}/bin"
    if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin" >>"$GITHUB_PATH"; fi
    export PATH="$bin:$PATH"
  fi
  local version
  version="$(promptinclude --version | sed -n '1s/^promptinclude //p')"
  echo "promptinclude $version"
  output version "$version"
}

cmd_audit() {
  read_roots
  config_args
  local args=("${CONFIG_ARGS[@]}")
  if [ -n "${INPUT_FAIL_ON:-}" ]; then args+=(--fail-on "$INPUT_FAIL_ON"); fi
  # Hidden text of the named classes (default: tag characters and
  # bidirectional controls), as hidden_text:CLASS gates.
  local class
  for class in ${INPUT_FAIL_ON_HIDDEN//,/ }; do
    args+=(--fail-on "hidden_text:$class")
  done
  if [ -n "${INPUT_MAX_TOKENS:-}" ]; then args+=(--max-tokens "$INPUT_MAX_TOKENS"); fi
  local html=""
  if [ -n "${INPUT_HTML:-}" ]; then
    html="$(cd "$(dirname "$INPUT_HTML")" 2>/dev/null && pwd)/$(basename "$INPUT_HTML")" \
      || die "html: the directory of $INPUT_HTML does not exist"
    args+=(--html "$html")
  fi
  local sarif=""
  if [ -n "${INPUT_SARIF:-}" ]; then
    sarif="$(cd "$(dirname "$INPUT_SARIF")" 2>/dev/null && pwd)/$(basename "$INPUT_SARIF")" \
      || die "sarif: the directory of $INPUT_SARIF does not exist"
    args+=(--sarif "$sarif")
  fi
  local tmp
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064  # expand now: the directory is known
  trap "rm -rf '$tmp'" EXIT

  echo "promptinclude audit --color never ${args[*]} ${ROOTS[*]}"
  local rc=0
  # The report on stdout, then the gate lines (stderr): both to the log, and
  # the stderr kept for the annotations and the summary.
  promptinclude audit --color never "${args[@]}" -- "${ROOTS[@]}" 2>"$tmp/stderr" || rc=$?
  cat "$tmp/stderr" >&2
  # The numbers, from the same audit as JSON (gates off: they do not change them).
  local json_rc=0
  promptinclude audit --json "${CONFIG_ARGS[@]}" -- "${ROOTS[@]}" >"$tmp/audit.jsonl" 2>/dev/null || json_rc=$?
  local summ tokens="" counted="" cropped="" skipped="" warnings="" files="" errors=""
  summ="$(tail -n 1 "$tmp/audit.jsonl" || true)"
  if [ "$json_rc" -le 1 ] && printf '%s' "$summ" | grep -q '"type":"summary"'; then
    printf '%s\n' "$summ" >"$tmp/summary.json"
    tokens="$(json_get "$tmp/summary.json" tokens_included)"
    counted="$(json_get "$tmp/summary.json" tokens_counted)"
    cropped="$(json_get "$tmp/summary.json" cropped)"
    skipped="$(json_get "$tmp/summary.json" skipped)"
    warnings="$(json_get "$tmp/summary.json" warnings)"
    files="$(json_get "$tmp/summary.json" rule_files)"
    errors="$(json_get "$tmp/summary.json" errors)"
  fi

  output exit-code "$rc"
  output tokens "$tokens"
  output tokens-counted "$counted"
  output rule-files "$files"
  output cropped "$cropped"
  output skipped "$skipped"
  output warnings "$warnings"
  if [ -n "$html" ] && [ -f "$html" ]; then output html "$html"; else output html ""; fi
  if [ -n "$sarif" ] && [ -f "$sarif" ]; then output sarif "$sarif"; else output sarif ""; fi

  local verdict
  case "$rc" in
    0) verdict="passed" ;;
    1) verdict="failed (a gate, or a root that is not a directory)" ;;
    *) verdict="error (bad usage or configuration, or a root failed)" ;;
  esac
  {
    echo "### promptinclude audit: $verdict"
    echo
    echo "Roots: \`${ROOTS[*]}\`"
    echo
    if [ -n "$tokens" ]; then
      echo "| rule files | tokens included | tokens counted | cropped | skipped | warnings | errors |"
      echo "|---:|---:|---:|---:|---:|---:|---:|"
      echo "| $files | $tokens | $counted | $cropped | $skipped | $warnings | $errors |"
      echo
    fi
    if [ -s "$tmp/stderr" ]; then
      echo '```text'
      head -n 50 "$tmp/stderr"
      echo '```'
    fi
  } | summary

  if [ "$rc" -ne 0 ]; then
    # One annotation per message line of the audit, so the failure reads at a glance.
    while IFS= read -r line; do
      case "$line" in
        *"gate failure(s)"*) ;;
        ?*) printf '::error title=promptinclude audit::%s\n' "$line" >&2 ;;
      esac
    done <"$tmp/stderr"
  fi
  return "$rc"
}

# api METHOD PATH [BODY_FILE] -> response body on stdout; fails on HTTP >= 400
api() {
  local method="$1" path="$2" body="${3:-}"
  local args=(-sS -X "$method" -H "Accept: application/vnd.github+json"
    -H "Authorization: Bearer $INPUT_TOKEN" -H "X-GitHub-Api-Version: 2022-11-28"
    -w '\n%{http_code}')
  if [ -n "$body" ]; then args+=(-H "Content-Type: application/json" --data-binary "@$body"); fi
  local resp code
  resp="$(curl "${args[@]}" "${GITHUB_API_URL:-https://api.github.com}$path")" || return 1
  code="${resp##*$'\n'}"
  printf '%s\n' "${resp%$'\n'*}"
  [ "$code" -lt 400 ] || { echo "GitHub API $method $path: HTTP $code" >&2; return 1; }
}

cmd_diff() {
  local event="${GITHUB_EVENT_NAME:-}"
  case "$event" in
    pull_request | pull_request_target) ;;
    *) echo "diff: not a pull request ($event): nothing to comment"; output diff-exit-code ""; return 0 ;;
  esac
  if [ -z "${GITHUB_EVENT_PATH:-}" ] || [ ! -f "$GITHUB_EVENT_PATH" ]; then die "GITHUB_EVENT_PATH is not a file"; fi
  local base head number
  base="$(json_get "$GITHUB_EVENT_PATH" pull_request.base.sha)"
  head="$(json_get "$GITHUB_EVENT_PATH" pull_request.head.sha)"
  number="$(json_get "$GITHUB_EVENT_PATH" pull_request.number)"
  if [ -z "$base" ] || [ -z "$head" ] || [ -z "$number" ]; then
    die "the event payload has no pull_request.base.sha/head.sha/number"
  fi
  local rev
  for rev in "$base" "$head"; do
    if ! git cat-file -e "$rev^{commit}" 2>/dev/null; then
      echo "fetching $rev (use actions/checkout with fetch-depth: 0 to skip this)"
      git fetch --no-tags --depth=1 origin "$rev" || die "revision $rev is not in the clone and could not be fetched"
    fi
  done

  read_roots
  config_args
  local out="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/promptinclude-diff.md"
  local rc=0 root_rc
  : >"$out"
  for root in "${ROOTS[@]}"; do
    root_rc=0
    promptinclude diff --format markdown "${CONFIG_ARGS[@]}" -- "$base" "$head" "$root" >>"$out" || root_rc=$?
    if [ "$root_rc" -ge 2 ]; then
      output diff-exit-code "$root_rc"
      die "promptinclude diff $base $head $root failed (exit $root_rc)"
    fi
    if [ "$root_rc" -gt "$rc" ]; then rc="$root_rc"; fi
  done
  output diff-exit-code "$rc"
  output diff-file "$out"
  cat "$out"
  summary <"$out"

  [ -n "${INPUT_TOKEN:-}" ] || { echo "::warning::diff: no token: the comment is not posted"; return 0; }
  [ -n "${GITHUB_REPOSITORY:-}" ] || die "GITHUB_REPOSITORY is not set"
  local tmp
  tmp="$(mktemp -d)"
  # shellcheck disable=SC2064
  trap "rm -rf '$tmp'" EXIT
  # The earlier comment of this Action, if any (first page of 100, then the next ones).
  local id="" page=1
  while [ -z "$id" ] && [ "$page" -le 10 ]; do
    api GET "/repos/$GITHUB_REPOSITORY/issues/$number/comments?per_page=100&page=$page" >"$tmp/comments.json" \
      || { echo "::warning::diff: cannot list the pull request's comments"; return 0; }
    id="$(python3 - "$tmp/comments.json" "$MARKER" <<'PY'
import json, sys
cs = json.load(open(sys.argv[1], encoding="utf-8"))
found = next((str(c["id"]) for c in cs if (c.get("body") or "").startswith(sys.argv[2])), "")
# The comment's id; else END after the last page (fewer than 100 comments).
print(found or ("END" if len(cs) < 100 else ""))
PY
)"
    if [ "$id" = "END" ]; then id=""; break; fi
    page=$((page + 1))
  done
  if [ "$rc" -eq 0 ] && [ -z "$id" ]; then
    echo "diff: the prompt is unchanged and there is no earlier comment: nothing posted"
    return 0
  fi
  python3 - "$out" "$MARKER" >"$tmp/body.json" <<'PY'
import json, sys
print(json.dumps({"body": sys.argv[2] + "\n" + open(sys.argv[1], encoding="utf-8").read()}))
PY
  local url
  if [ -n "$id" ]; then
    api PATCH "/repos/$GITHUB_REPOSITORY/issues/comments/$id" "$tmp/body.json" >"$tmp/resp.json" \
      || { echo "::warning::diff: cannot update comment $id (a fork's token is read-only)"; return 0; }
  else
    api POST "/repos/$GITHUB_REPOSITORY/issues/$number/comments" "$tmp/body.json" >"$tmp/resp.json" \
      || { echo "::warning::diff: cannot comment (a fork's token is read-only)"; return 0; }
  fi
  url="$(json_get "$tmp/resp.json" html_url)"
  echo "diff: commented: $url"
  output comment-url "$url"
}

case "${1:-}" in
  install) cmd_install ;;
  audit) cmd_audit ;;
  diff) cmd_diff ;;
  *) echo "usage: $0 install|audit|diff" >&2; exit 2 ;;
esac
