#!/usr/bin/env bash
# glow-reduce on a real imported model: torchvision ResNet-18 from the corpus
# (structure only; stripped weights filled), reduced while its -O output still
# fuses an elementadd and a relu into one convolution. Prints the progress,
# the reduced program and the instruction counts before and after.
#
# Usage: scripts/reduce-resnet18.sh   (honours $GLOW_CORPUS, default ../shared/corpus)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="${GLOW_CORPUS:-$root/../shared/corpus}"
model="$corpus/models/torchvision/resnet18.onnx"
if [[ ! -f "$model" ]]; then
  echo "skipped: $model not found (set GLOW_CORPUS)" >&2
  exit 0
fi
cd "$root"
cargo build --release -q --bins
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
target/release/glow-import "$model" --fill-stripped 1 --weights "$work/r18.safetensors" -o "$work/r18.gir"
echo "input: $(grep -c ' = ' "$work/r18.gir") lines with a definition (instructions and weights)"
time target/release/glow-reduce "$work/r18.gir" --test=sh \
  --test-arg="$root/test/tools/reduce/Inputs/o-fuses-add-relu.sh" -o "$work/small.gir"
cat "$work/small.gir"
