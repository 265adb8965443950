#!/usr/bin/env bash
# The compiled bundles against onnxruntime on ResNet-50, ResNet-18, MobileNetV2 and SqueezeNet 1.1,
# interleaved in one run (see scripts/bench_models.py for the method and the options).
# Usage: scripts/bench-models.sh [--rounds N] [--threads T] [--convs] [--models a,b]
# Uses $PYTHON (default: python3); onnxruntime, onnx and numpy are needed for the comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/bench_models.py "$@"
