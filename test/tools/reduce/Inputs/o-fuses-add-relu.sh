#!/bin/sh
# Interesting when the -O output of $1 still has a convolution with a
# Residual operand and a fused RELU (fuse-residual and fuse-activations both
# fired). glow-reduce puts its own tools first on PATH.
glow-opt -O "$1" 2>/dev/null | glow-filecheck "$(dirname "$0")/o-fuses-add-relu.txt"
