#!/usr/bin/env bash
# Times the whole lit suite under glow-lit (+ glow-filecheck) and under LLVM's lit (+ LLVM
# FileCheck) on this machine, side by side, and prints the ratio. Also times glow-lit driving
# LLVM's FileCheck, which separates the runner's share from the checker's.
#
# Usage: scripts/bench-lit.sh [PATHS...]     (default: test)
# Env: RUNS (default 3; the best run counts), JOBS (default: all cores), PROFILE (release|debug,
# default release: the binaries under test are built with it). Tests that only glow-lit runs
# (its own output tests under lit/runner/, which include deliberate timeouts) are left out of
# both runs so the two runners do the same work.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
TARGET=${CARGO_TARGET_DIR:-$REPO/target}
PROFILE=${PROFILE:-release}
RUNS=${RUNS:-3}
JOBS=${JOBS:-$(nproc)}
PATHS=("$@")
[ ${#PATHS[@]} -gt 0 ] || PATHS=(test)
command -v lit >/dev/null 2>&1 || python3 -m pip install --quiet lit
FILECHECK=/usr/lib/llvm-19/bin/FileCheck
[ -x "$FILECHECK" ] || FILECHECK=$(command -v FileCheck || true)
if [ -z "$FILECHECK" ]; then
  apt-get update -qq && apt-get install -y -qq llvm-19-tools
  FILECHECK=/usr/lib/llvm-19/bin/FileCheck
fi

if [ "$PROFILE" = release ]; then cargo build --quiet --release --bins; else cargo build --quiet --bins; fi
BIN=$TARGET/$PROFILE
SKIP="lit/runner/"
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

# best_of CMD...: prints the best wall time in seconds over $RUNS runs (exit status ignored).
best_of() {
  local best="" t0 t1 t
  for _ in $(seq "$RUNS"); do
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc -l)" = 1 ]; then best=$t; fi
  done
  printf '%.3f' "$best"
}
command -v bc >/dev/null 2>&1 || { apt-get install -y -qq bc >/dev/null; }

N=$("$BIN/glow-lit" "${PATHS[@]}" --filter-out "$SKIP" --output-dir "$OUT/n" 2>/dev/null | sed -n -E 's/^-- Testing: ([0-9]+) tests.*/\1/p' || true)
glow=$(best_of "$BIN/glow-lit" "${PATHS[@]}" --filter-out "$SKIP" -j "$JOBS" --output-dir "$OUT/g")
glow_llvm_fc=$(best_of "$BIN/glow-lit" "${PATHS[@]}" --filter-out "$SKIP" -j "$JOBS" --output-dir "$OUT/gf" \
  --tool "glow-filecheck=$FILECHECK" --tool "FileCheck=$FILECHECK")
llvm=$(best_of env GLOW_BIN_DIR="$BIN" GLOW_LIT_EXEC_ROOT="$OUT/l" GLOW_FILECHECK="$FILECHECK" lit "${PATHS[@]}" --filter-out "$SKIP" -j "$JOBS")

echo "suite: ${N:-?} tests (${PATHS[*]}), $JOBS jobs, $PROFILE binaries, best of $RUNS runs"
printf '  %-34s %8ss\n' "glow-lit + glow-filecheck" "$glow"
printf '  %-34s %8ss\n' "glow-lit + LLVM FileCheck" "$glow_llvm_fc"
printf '  %-34s %8ss\n' "LLVM lit + LLVM FileCheck" "$llvm"
printf '  ratio LLVM lit / glow-lit: %.1fx\n' "$(echo "$llvm / $glow" | bc -l)"
