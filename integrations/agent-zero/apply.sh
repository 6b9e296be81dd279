#!/usr/bin/env bash
# Applies scanner-shim.patch to an Agent Zero checkout (or installation):
#   integrations/agent-zero/apply.sh /path/to/agent-zero      (e.g. /a0 in the Docker image)
# Idempotent: does nothing if the shim is already there; an older shim (the
# drop-in without the live index) is upgraded in place.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
a0="${1:?usage: apply.sh AGENT_ZERO_DIR}"
scanner="$a0/plugins/_promptinclude/helpers/scanner.py"
[ -f "$scanner" ] || { echo "apply.sh: no $scanner" >&2; exit 2; }
if grep -q '^    from promptinclude import scan_promptinclude_files_indexed' "$scanner"; then
  echo "apply.sh: the shim is already in $scanner"
  exit 0
fi
old='^    from promptinclude import scan_promptinclude_files  # noqa: E402,F811$'
if grep -q "$old" "$scanner"; then
  tmp="$(mktemp "$scanner.XXXXXX")"
  sed "s/$old/    from promptinclude import scan_promptinclude_files_indexed as scan_promptinclude_files  # noqa: E402,F811,E501/" \
    "$scanner" > "$tmp"
  chmod --reference="$scanner" "$tmp" 2>/dev/null || true
  mv "$tmp" "$scanner"
  echo "apply.sh: upgraded the shim in $scanner to the live index"
  exit 0
fi
if command -v patch >/dev/null; then
  patch -p1 -N -d "$a0" < "$here/scanner-shim.patch"
else
  git -C "$a0" apply "$here/scanner-shim.patch"
fi
echo "apply.sh: patched $scanner"
