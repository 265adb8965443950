#!/usr/bin/env bash
# Runs LLVM's own FileCheck tests (llvm/test/FileCheck from llvm-project) under LLVM's lit twice:
# with LLVM FileCheck 19 as `FileCheck`, then with glow-filecheck. Prints how many of the tests
# LLVM FileCheck passes also pass with glow-filecheck, and lists the ones that do not.
#
# Usage: scripts/llvm-filecheck-suite.sh DIR
#   DIR: a copy of llvm/test/FileCheck (with its Inputs/ and lit.local.cfg); also $LLVM_FILECHECK_TESTS.
# Environment: LIT (a lit command; default `lit`, or /work/venv-lit/bin/lit), LLVM_BIN
# (default /usr/lib/llvm-19/bin: FileCheck, not, count), CARGO_TARGET_DIR, KEEP_WORK=1 (keep the
# work directory with both lit logs, and print its path).
# Exit: 0 when every test LLVM FileCheck passes also passes with glow-filecheck, 1 when some do
# not, 0 with a "skipped:" message when lit, LLVM FileCheck or the test copy is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
SRC=${1:-${LLVM_FILECHECK_TESTS:-}}
LLVM_BIN=${LLVM_BIN:-/usr/lib/llvm-19/bin}

LIT=${LIT:-}
if [ -z "$LIT" ]; then
  if command -v lit >/dev/null 2>&1; then LIT=lit
  elif [ -x /work/venv-lit/bin/lit ]; then LIT=/work/venv-lit/bin/lit
  fi
fi
if [ -z "$LIT" ]; then
  echo "skipped: LLVM's lit not found (pip install lit, or set LIT)"; exit 0
fi
if [ ! -x "$LLVM_BIN/FileCheck" ]; then
  echo "skipped: no LLVM FileCheck in $LLVM_BIN (apt-get install llvm-19-tools, or set LLVM_BIN)"; exit 0
fi
if [ -z "$SRC" ] || [ ! -d "$SRC" ]; then
  echo "skipped: no copy of llvm/test/FileCheck given (scripts/llvm-filecheck-suite.sh DIR)"; exit 0
fi
SRC=$(cd "$SRC" && pwd)

TARGET=${CARGO_TARGET_DIR:-$REPO/target}
cargo build --quiet --bin glow-filecheck
GLOW_FC=$TARGET/debug/glow-filecheck

WORK=$(mktemp -d)
if [ -n "${KEEP_WORK:-}" ]; then
  echo "work directory (kept): $WORK" >&2
else
  trap 'rm -rf "$WORK"' EXIT
fi
mkdir -p "$WORK/suite"
cp -r "$SRC" "$WORK/suite/FileCheck"
# The parts of LLVM's test/lit.cfg.py these tests rely on: ShTest with lit's internal shell,
# LLVM's suffixes, tools by name on PATH, and FILECHECK_OPTS cleared by %ProtectFileCheckOutput.
cat >"$WORK/suite/lit.cfg.py" <<'CFG'
import os
import lit.formats
config.name = "LLVM FileCheck tests"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".txt", ".test", ".ll"]
config.excludes = ["Inputs", "CMakeLists.txt", "README.txt", "LICENSE.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.environ["SUITE_EXEC_ROOT"]
config.environment["PATH"] = os.environ["SUITE_BIN"] + os.pathsep + os.environ["PATH"]
config.environment.pop("FILECHECK_OPTS", None)
config.substitutions.append(("%ProtectFileCheckOutput", "env -u FILECHECK_OPTS"))
CFG

# One bin directory per checker: FileCheck is the checker under test, the helpers are LLVM's.
run() { # NAME CHECKER
  local bin=$WORK/bin-$1
  mkdir -p "$bin"
  ln -s "$2" "$bin/FileCheck"
  for t in not count split-file; do
    [ -x "$LLVM_BIN/$t" ] && ln -s "$LLVM_BIN/$t" "$bin/$t"
  done
  SUITE_BIN=$bin SUITE_EXEC_ROOT=$WORK/out-$1 "$LIT" -v "$WORK/suite" >"$WORK/$1.log" 2>&1 || true
  sed -n -E 's/^([A-Z]+): [^:]+ :: (.*) \([0-9]+ of [0-9]+\)$/\2 \1/p' "$WORK/$1.log" | sort >"$WORK/$1.v"
}
run llvm "$LLVM_BIN/FileCheck"
run glow "$GLOW_FC"
if [ ! -s "$WORK/llvm.v" ]; then
  echo "llvm-filecheck-suite: lit ran no tests; its output:" >&2
  tail -20 "$WORK/llvm.log" >&2
  exit 2
fi

join -a1 -e MISSING -o 0,1.2,2.2 "$WORK/llvm.v" "$WORK/glow.v" | awk '
  function ok(v) { return v == "PASS" || v == "XFAIL" }
  { total++ }
  !ok($2) { notref++; next }
  ok($3) { pass++; next }
  { fail++; failed = failed sprintf("  %s (%s)\n", $1, $3) }
  END {
    printf "%d passed, %d failed, of the %d tests LLVM FileCheck 19 passes (%d tests in all)\n", pass, fail, pass + fail, total
    if (failed != "") printf "failing with glow-filecheck:\n%s", failed
    exit fail > 0 ? 1 : 0
  }'
