#!/usr/bin/env bash
# Run time of the generated C (-O2, and -O3 -march=native) against the
# reference interpreter on a LeNet-sized and a ResNet-block-sized program.
# Usage: scripts/bench-backend.sh [C_REPEAT] [INTERP_REPEAT]   (defaults 50 and 3)
set -euo pipefail
cd "$(dirname "$0")/.."
c_repeat=${1:-50}
interp_repeat=${2:-3}
cargo build --release -q --bin glow-run
bin="${CARGO_TARGET_DIR:-target}/release/glow-run"

# Time per run in ms as glow-run reports it (`glow-run: X ms per run`).
time_of() {
  "$bin" "$@" 2>&1 >/dev/null | sed -n 's/^glow-run: \([0-9.]*\) ms per run$/\1/p'
}

printf '%-14s %14s %22s %16s\n' program "C -O2 (ms)" "C -O3 native (ms)" "interp (ms)"
for prog in backend/benches/lenet.gir backend/benches/resnet-block.gir; do
  o2=$(time_of "$prog" --engine=c --cflags=-O2 --repeat "$c_repeat")
  o3=$(time_of "$prog" --engine=c --cflags="-O3 -march=native" --repeat "$c_repeat")
  it=$(time_of "$prog" --engine=interp --repeat "$interp_repeat")
  printf '%-14s %14s %22s %16s\n' "$(basename "$prog" .gir)" "$o2" "$o3" "$it"
done
