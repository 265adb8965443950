#!/usr/bin/env bash
# The memory of one training step (docs/training.md, "Training memory"): for each corpus model
# at each batch size, import it, build the step with `differentiate`, run `-O`, and print what
# glow-opt --mem-report says: keep-everything (no reuse), the max-live lower bound and the
# planned arena; then `-O` followed by `remat` at budgets of 1/2 and 1/4 of the arena and of
# a third of PyTorch's saved activations (where measured), each with the arena plan-memory
# gives the result and the extra FLOPs. Usage: scripts/train-memory.sh [MODEL...] (default
# resnet50 mobilenet_v2); GLOW_CORPUS (default ../shared/corpus), BATCHES (default "1 8").
set -euo pipefail
cd "$(dirname "$0")/.."
corpus="${GLOW_CORPUS:-../shared/corpus}"
models=("${@:-resnet50 mobilenet_v2}")
[ $# -eq 0 ] && models=(resnet50 mobilenet_v2)
cargo build --release --bin glow-import --bin glow-opt >&2
bin="${CARGO_TARGET_DIR:-target}/release"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '%-14s %5s %16s %16s %16s  %s\n' model batch keep-everything lower-bound arena 'remat at 1/2 and 1/4 of the arena, 1/3 of PyTorch: arena (extra FLOPs)'
for m in "${models[@]}"; do
  onnx="$corpus/models/torchvision/$m.onnx"
  if [ ! -f "$onnx" ]; then
    echo "skipped $m: no $onnx" >&2
    continue
  fi
  for b in ${BATCHES:-1 8}; do
    "$bin/glow-import" "$onnx" --batch "$b" --fill-stripped 1 -o "$tmp/m.gir" --weights "$tmp/m.safetensors" 2>/dev/null
    if ! "$bin/glow-opt" "$tmp/m.gir" --pass=differentiate -o "$tmp/step.gir" 2>"$tmp/err"; then
      echo "skipped $m batch $b: $(head -1 "$tmp/err")" >&2
      continue
    fi
    "$bin/glow-opt" "$tmp/step.gir" -O --mem-report -o "$tmp/planned.gir" 2>"$tmp/report"
    after="$(sed -n '/Memory after the pipeline/,$p' "$tmp/report")"
    naive="$(grep -m1 'naive bytes' "$tmp/report" | awk '{print $3}')"
    bound="$(grep -m1 'lower bound bytes' <<<"$after" | awk '{print $NF}')"
    arena="$(grep -m1 'arena bytes' <<<"$after" | awk '{print $3}')"
    remat=""
    # PyTorch's saved activations (docs/training.md; scripts/bench/torch-train.py measures them).
    case "$m/$b" in
      resnet50/1) torch=41500000 ;;
      resnet50/8) torch=331600000 ;;
      mobilenet_v2/1) torch=51500000 ;;
      mobilenet_v2/8) torch=412000000 ;;
      *) torch=0 ;;
    esac
    budgets="$((arena / 2)) $((arena / 4))"
    [ "$torch" -gt 0 ] && budgets+=" $((torch / 3))"
    for budget in $budgets; do
      if "$bin/glow-opt" "$tmp/step.gir" -O "--pass=remat{budget=$budget}" --stats --mem-report -o "$tmp/remat.gir" 2>"$tmp/remat"; then
        planned="$(sed -n '/Memory after the pipeline/,$p' "$tmp/remat" | grep -m1 'arena bytes' | awk '{print $3}')"
        extra="$(grep 'extra-flops' "$tmp/remat" | awk '{print $1}')"
        total="$(grep 'step-flops' "$tmp/remat" | awk '{print $1}')"
        remat+="$(awk -v p="$planned" -v e="${extra:-0}" -v t="$total" 'BEGIN { printf "%d (+%.1f%%)", p, 100 * e / t }')  "
      else
        least="$(grep -o 'least peak reached is [0-9]*' "$tmp/remat" | awk '{print $NF}')"
        remat+="not met (least ${least:-?})  "
      fi
    done
    printf '%-14s %5s %16s %16s %16s  %s\n' "$m" "$b" "$naive" "$bound" "$arena" "$remat"
  done
done
echo "summary: one training step per row; PyTorch saves 41.5 MB (ResNet-50, batch 1), 331.7 MB (batch 8), 51.5 MB (MobileNetV2, batch 1), 412.0 MB (batch 8) of activations"
