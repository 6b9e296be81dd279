#!/usr/bin/env bash
# `promptinclude completions` and `promptinclude man`, in the real programs:
#   - bash: the script is sourced, and the completion function `complete -p`
#     names is called as bash's completion machinery calls it (COMP_WORDS,
#     COMP_CWORD, COMP_LINE, COMP_POINT); `promptinclude au` must complete
#     to `audit` and nothing else, `promptinclude merge s` to `scan`, and
#     `promptinclude audit --fail` to `--fail-on`;
#   - fish: the script is loaded and `complete -C` asked the same;
#   - zsh: the script is loaded through compinit, and the `_promptinclude`
#     function it defines is called by zsh's completion system (zpty);
#   - man: `man -l` renders the page of the command, which must list every
#     subcommand the binary has (from `--help`), and every page
#     `man --out-dir` writes, each with its SYNOPSIS and OPTIONS.
# fish, zsh and man (man-db) are installed with apt-get when missing and
# root; where they cannot be, that part prints SKIPPED, or fails under
# PROMPTINCLUDE_REQUIRE_ORACLE=1 (as .ci/run sets).
# `tests/shell/run.sh --setup-only` only installs the missing shells and man,
# with one apt-get.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
# Installs, with one apt-get, the Debian packages of the commands missing
# among CMD:PKG pairs (where apt-get can be run).
install_missing() {
  local missing=() pair
  for pair in "$@"; do
    command -v "${pair%%:*}" >/dev/null || missing+=("${pair#*:}")
  done
  if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "tests/shell: installing ${missing[*]} with apt-get" >&2
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"; } >&2 || true
  fi
}
if [ "${1:-}" = --setup-only ]; then
  install_missing fish:fish zsh:zsh man:man-db
  command -v fish >/dev/null && command -v zsh >/dev/null && command -v man >/dev/null
  exit
fi
bin="${PROMPTINCLUDE_BIN:-$PWD/target/release/promptinclude}"
[ -x "$bin" ] || { echo "tests/shell: FAILED: no binary at $bin" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "tests/shell: FAILED: $*" >&2; failures=$((failures + 1)); }
skip() {
  echo "tests/shell: SKIPPED: $*" >&2
  if [ "${PROMPTINCLUDE_REQUIRE_ORACLE:-}" = 1 ]; then failures=$((failures + 1)); fi
}
# Installs the Debian packages of the commands named, where missing.
need() {
  install_missing "$1:$2"
  command -v "$1" >/dev/null
}
# Each case: the words typed, then what must be offered (sorted, one line).
cases=(
  "au|audit"
  "merge s|scan"
  "audit --fail|--fail-on"
  "completions b|bash"
)
# clap_complete's fish script offers no values for positional arguments (its
# output for `completions` has none), so fish is asked the other cases.
fish_cases=("${cases[@]:0:3}")

# --- bash ---------------------------------------------------------------
"$bin" completions bash > "$work/promptinclude.bash"
for case in "${cases[@]}"; do
  typed="${case%%|*}" want="${case#*|}"
  got="$(TYPED="$typed" BIN_DIR="$(dirname "$bin")" SCRIPT="$work/promptinclude.bash" bash --norc --noprofile -c '
    set -u
    PATH="$BIN_DIR:$PATH"
    source "$SCRIPT"
    spec="$(complete -p promptinclude)" || { echo "no completion registered" >&2; exit 1; }
    fn="$(sed -E "s/.* -F ([^ ]+) .*/\1/" <<<"$spec")"
    read -r -a COMP_WORDS <<<"promptinclude $TYPED"
    COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
    COMP_LINE="promptinclude $TYPED"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    "$fn" promptinclude "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf "%s\n" "${COMPREPLY[@]}" | sed "s/ *$//" | sort -u | paste -sd" "')"
  [ "$got" = "$want" ] || fail "bash: 'promptinclude $typed<TAB>' offered '$got', want '$want'"
done

# --- fish ---------------------------------------------------------------
if need fish fish; then
  "$bin" completions fish > "$work/promptinclude.fish"
  for case in "${fish_cases[@]}"; do
    typed="${case%%|*}" want="${case#*|}"
    got="$(fish --no-config -c "source '$work/promptinclude.fish'; complete -C 'promptinclude $typed'" \
      | cut -f1 | sort -u | paste -sd' ')"
    [ "$got" = "$want" ] || fail "fish: 'promptinclude $typed<TAB>' offered '$got', want '$want'"
  done
else
  skip "fish is missing and apt-get cannot install it"
fi

# --- zsh ---------------------------------------------------------------
if need zsh zsh; then
  mkdir -p "$work/zfunc"
  "$bin" completions zsh > "$work/zfunc/_promptinclude"
  # An interactive zsh on a pseudo-terminal (zpty), with compinit loading
  # the script from fpath: TAB runs zsh's completion system, which calls
  # `_promptinclude`; every match it offers passes through compadd, which
  # is wrapped to record them (`compadd -O` gives the matches for what was
  # typed, without adding them), and they are printed between << and >>.
  cat > "$work/capture.zsh" <<'ZSH'
zmodload zsh/zpty
zpty -b z "PATH=${(q)BIN_DIR}:\$PATH zsh -f -i"
zpty -w z "fpath=(${(q)ZFUNC} \$fpath); autoload -Uz compinit; compinit -u -D"
zpty -w z 'compadd() { builtin compadd -O __m "$@"; found+=($__m); builtin compadd "$@" }; found=()'
zpty -w -n z "promptinclude $TYPED"$'\t'
sleep 1
zpty -w z $'\x03'
zpty -w z 'print -rl -- "<<" ${(ou)found} ">>"'
sleep 0.5
while zpty -rt z line 2>/dev/null; do print -rn -- "$line"; done
zpty -d z
ZSH
  for case in "${cases[@]}"; do
    typed="${case%%|*}" want="${case#*|}"
    got="$(ZFUNC="$work/zfunc" TYPED="$typed" BIN_DIR="$(dirname "$bin")" zsh -f "$work/capture.zsh" 2>/dev/null \
      | tr -d '\r' | awk '/^<<$/{on=1;buf="";next} /^>>$/{if(on)last=buf;on=0;next} on{buf=buf (buf?" ":"") $0} END{print last}')"
    [ "$got" = "$want" ] || fail "zsh: 'promptinclude $typed<TAB>' offered '$got', want '$want'"
  done
else
  skip "zsh is missing and apt-get cannot install it"
fi

# --- man ----------------------------------------------------------------
if need man man-db; then
  # The subcommands, as `--help` lists them.
  subcommands="$("$bin" --help | awk '/^Commands:/{on=1;next} /^[^ ]/{on=0} on && /^  [a-z]/{print $1}' | grep -vx help)"
  [ -n "$subcommands" ] || fail "man: could not read the subcommands from --help"
  page="$("$bin" man | MANWIDTH=200 man -l - 2>"$work/man.err")" || fail "man -l of the command's page: $(cat "$work/man.err")"
  [ ! -s "$work/man.err" ] || fail "man -l warned: $(cat "$work/man.err")"
  for sub in $subcommands; do
    grep -q "promptinclude-$sub(1)" <<<"$page" || fail "man: the page does not list $sub"
  done
  "$bin" man --out-dir "$work/man1"
  for sub in $subcommands; do
    [ -f "$work/man1/promptinclude-$sub.1" ] || fail "man --out-dir wrote no page for $sub"
  done
  pages=0
  for file in "$work"/man1/*.1; do
    pages=$((pages + 1))
    text="$(MANWIDTH=200 man -l "$file" 2>"$work/man.err")" || fail "man -l $file: $(cat "$work/man.err")"
    for section in NAME SYNOPSIS OPTIONS; do
      grep -q "^$section" <<<"$text" || fail "man: $(basename "$file") has no $section"
    done
  done
  # The page of one subcommand is the one --out-dir wrote.
  cmp -s <("$bin" man merge scan) "$work/man1/promptinclude-merge-scan.1" \
    || fail "man merge scan differs from promptinclude-merge-scan.1"
  echo "tests/shell: man: $pages pages rendered" >&2
else
  skip "man is missing and apt-get cannot install man-db"
fi

if [ "$failures" -ne 0 ]; then
  echo "tests/shell: $failures failure(s)" >&2
  exit 1
fi
echo "tests/shell: ok (bash, fish, zsh completion; man pages)" >&2
