#!/usr/bin/env bash
# Runs the lit suite under LLVM's lit (from PyPI, in a venv under the target directory) with
# LLVM's FileCheck, through test/lit.cfg.py: the suite's promise that both runners pass it.
#
# Usage: scripts/llvm-lit.sh [LIT ARGS...]      (default: -q test)
# Exit: lit's (1 when a test fails); 2 when lit or LLVM's FileCheck cannot be had, so a caller
# can tell "not installable here" from "failed".
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=${CARGO_TARGET_DIR:-$PWD/target}
VENV=$TARGET/lit-venv
ARGS=("$@")
[ ${#ARGS[@]} -gt 0 ] || ARGS=(-q test)

if [ ! -x "$VENV/bin/lit" ]; then
  python3 -m venv "$VENV" >/dev/null 2>&1 && "$VENV/bin/pip" install --quiet lit >/dev/null 2>&1 || {
    echo "llvm-lit: cannot install lit into $VENV (python3 -m venv, pip install lit)" >&2
    exit 2
  }
fi
if [ -z "${GLOW_FILECHECK:-}" ] && [ ! -x /usr/lib/llvm-19/bin/FileCheck ] &&
  ! command -v FileCheck >/dev/null 2>&1; then
  echo "llvm-lit: no LLVM FileCheck (apt-get install llvm-19-tools, or set GLOW_FILECHECK)" >&2
  exit 2
fi

# custom-opt too: the custom-pass tests run when it is built.
cargo build --quiet --workspace --bins
GLOW_BIN_DIR=$TARGET/debug GLOW_LIT_EXEC_ROOT=$TARGET/lit-llvm exec "$VENV/bin/lit" "${ARGS[@]}"
