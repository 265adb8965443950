#!/usr/bin/env bash
# The official ONNX node suite run as a user would (import/tests/official.rs):
# every in-scope test imported, every non-initializer graph input fed at run
# time, outputs compared with ONNX's rule. Prints the per-test lines, the
# per-op table and `official: N passed, N failed, N unsupported`.
#
# Usage: scripts/official-suite.sh [--c] [FILTER]
#   --c      run on the C engine (each test compiled with cc) instead of the
#            interpreter
#   FILTER   only tests whose name contains it
# Honours $GLOW_CORPUS (default ../shared/corpus); GLOW_OFFICIAL_REPORT=FILE
# also writes the report to FILE.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
if [[ "${1:-}" == "--c" ]]; then
  export GLOW_CONFORMANCE_ENGINE=c
  shift
fi
export GLOW_CONFORMANCE_FILTER="${1:-}"
export GLOW_CONFORMANCE_OFFICIAL=1
cd "$root"
exec cargo test --release -p glow-import --test official -- --nocapture
