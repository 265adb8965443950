#!/usr/bin/env bash
# Runs the lit suite twice -- under glow-lit (with glow-filecheck) and under LLVM's lit (from PyPI,
# with LLVM's FileCheck, through test/lit.cfg.py) -- and compares the per-test verdicts.
#
# Usage: scripts/llvm-compat.sh [PATHS...]      (default: test)
# Exit 1 when some test passes under one runner and fails under the other; tests skipped
# (UNSUPPORTED) by either runner are listed but do not count. Installs lit (pip) and
# llvm-19-tools (apt) when missing. RUNNER_ONLY=1 makes glow-lit use LLVM's FileCheck too, so
# only the runners differ (useful to tell runner from checker differences).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
BIN=$TARGET/debug
PATHS=("$@")
[ ${#PATHS[@]} -gt 0 ] || PATHS=(test)

LIT=(lit)
if ! command -v lit >/dev/null 2>&1; then
  python3 -m pip install --quiet lit
fi
python3 -c 'import lit' 2>/dev/null || { echo "llvm-compat: cannot install lit" >&2; exit 2; }
command -v lit >/dev/null 2>&1 || LIT=(python3 -c 'import sys, lit.main; sys.argv[0] = "lit"; lit.main.main()')
if [ ! -x /usr/lib/llvm-19/bin/FileCheck ] && ! command -v FileCheck >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq llvm-19-tools
fi

cargo build --quiet --bins

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
EXTRA=()
if [ "${RUNNER_ONLY:-0}" = 1 ]; then
  FC=/usr/lib/llvm-19/bin/FileCheck
  [ -x "$FC" ] || FC=$(command -v FileCheck)
  EXTRA=(--tool "glow-filecheck=$FC" --tool "FileCheck=$FC")
fi
"$BIN/glow-lit" "${PATHS[@]}" "${EXTRA[@]}" --output-dir "$OUT/glow-out" >"$OUT/glow.log" 2>&1 || true
GLOW_BIN_DIR=$BIN GLOW_LIT_EXEC_ROOT=$OUT/llvm-out "${LIT[@]}" "${PATHS[@]}" >"$OUT/llvm.log" 2>&1 || true

# "PASS: glow :: a/b.gir (3 of 9)" -> "a/b.gir PASS"
verdicts() {
  sed -n -E 's/^([A-Z]+): [^ ]+ :: (.*) \([0-9]+ of [0-9]+\)$/\2 \1/p' "$1" | sort
}
verdicts "$OUT/glow.log" >"$OUT/glow.v"
verdicts "$OUT/llvm.log" >"$OUT/llvm.v"
if [ ! -s "$OUT/glow.v" ] || [ ! -s "$OUT/llvm.v" ]; then
  echo "llvm-compat: a runner reported no tests; its output:" >&2
  tail -20 "$OUT/glow.log" "$OUT/llvm.log" >&2
  exit 2
fi

join -a1 -a2 -e MISSING -o 0,1.2,2.2 "$OUT/glow.v" "$OUT/llvm.v" | awk '
  function cls(v) {
    if (v == "PASS" || v == "XFAIL") return "pass"
    if (v == "UNSUPPORTED") return "skip"
    if (v == "MISSING") return "missing"
    return "fail"
  }
  {
    total++
    g = cls($2); l = cls($3)
    if (g == l && $2 == $3) { same++; next }
    if (g == "skip" || l == "skip") { skipped = skipped sprintf("  %-60s glow-lit: %-11s lit: %s\n", $1, $2, $3); next }
    if (g == l) { same++; next }
    bad++
    diffs = diffs sprintf("  %-60s glow-lit: %-11s lit: %s\n", $1, $2, $3)
  }
  END {
    printf "compared %d tests: %d agree, %d differ\n", total, same, bad
    if (skipped != "") printf "skipped by one runner only (not counted):\n%s", skipped
    if (diffs != "") printf "DIFFERENT VERDICTS:\n%s", diffs
    exit bad > 0 ? 1 : 0
  }'
