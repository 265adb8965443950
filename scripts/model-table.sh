#!/usr/bin/env bash
# The model-zoo memory table (docs/models.md): every structure-only model of
# ../shared/corpus/models is imported (stripped weights filled, seed 1), then
# run through glow-opt twice with --mem-report=json:
#   - Glow's pipeline without the planner: the INFER list minus plan-memory
#     (buffer sharing as in the seed); the reported size is the sum of the
#     activation buffers that remain (each buffer its own memory);
#   - the full INFER pipeline (--mode=infer), planner last: the arena size;
# plus the lower bound (max live bytes of the final program) and the time
# of each step; then the planned program is compiled: `glow-opt --emit=c`
# writes the bundle and `cc -std=c99 -O2 -c` compiles it (the last column is
# that compile time). Prints a Markdown table on stdout.
#
# Usage: scripts/model-table.sh [BIN_DIR] [CORPUS]   (BIN_DIR holds glow-import
# and glow-opt, default target/release; build them with
# `cargo build --release --bin glow-import --bin glow-opt`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-$root/target/release}"
corpus="${2:-${GLOW_CORPUS:-$root/../shared/corpus}}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
no_planner="peephole,dse,optimize-inserts,optimize-extracts,inplace,share-buffers,peephole,dealloc-sinking,alloc-sinking,dse,dead-alloc,make-weights-const"

models=("$corpus/models/torchvision/resnet50.onnx")
for m in "$corpus"/models/*/*.onnx; do
  [[ "$m" == "$corpus/models/torchvision/resnet50.onnx" ]] || models+=("$m")
done

ms() { python3 -c "import sys; print(round((float(sys.argv[2]) - float(sys.argv[1])) * 1000))" "$1" "$2"; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d[sys.argv[2]][sys.argv[3]])" "$@"; }
mb() { python3 -c "import sys; print(f'{int(sys.argv[1])/1e6:,.1f}')" "$1"; }

echo "| model | naive (MB) | Glow pipeline, no planner (MB) | full pipeline + planner (MB) | lower bound (MB) | import (ms) | optimize + plan (ms) | emit C bundle (ms) | cc -O2 (CPU s) |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
  name="${m#"$corpus"/models/}"
  t0=$(date +%s.%N)
  "$bin/glow-import" "$m" --fill-stripped 1 -o "$tmp/m.gir" --weights "$tmp/m.safetensors" 2>/dev/null
  t1=$(date +%s.%N)
  "$bin/glow-opt" "$tmp/m.gir" --passes="$no_planner" --mem-report=json -o "$tmp/np.gir" 2>"$tmp/np.json"
  t2=$(date +%s.%N)
  "$bin/glow-opt" "$tmp/m.gir" --mode=infer --mem-report=json -o "$tmp/full.gir" 2>"$tmp/full.json"
  t3=$(date +%s.%N)
  rm -rf "$tmp/c"
  "$bin/glow-opt" "$tmp/full.gir" --emit=c --weights "$tmp/m.safetensors" -o "$tmp/c"
  t4=$(date +%s.%N)
  # CPU time of the compiler (user + system), steadier than wall time on a shared machine.
  cc_s=$( { /usr/bin/time -f '%U %S' ${CC:-cc} -std=c99 -O2 -c "$tmp"/c/*.c -o "$tmp/m.o"; } 2>&1 | tail -1 | awk '{printf "%.2f", $1 + $2}')
  naive=$(field "$tmp/full.json" before naive_bytes)
  np=$(field "$tmp/np.json" after naive_bytes)
  full=$(field "$tmp/full.json" after arena_bytes)
  lb=$(field "$tmp/full.json" after lower_bound_bytes)
  echo "| \`$name\` | $(mb "$naive") | $(mb "$np") | $(mb "$full") | $(mb "$lb") | $(ms "$t0" "$t1") | $(ms "$t2" "$t3") | $(ms "$t3" "$t4") | $cc_s |"
done
