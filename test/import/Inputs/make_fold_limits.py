# Writes the limit-fold-*.onnx models of test/import/limits.txt (run with a
# Python that has onnx: python make_fold_limits.py): constant folds whose
# result would be far larger than the model, refused before any of it is
# allocated.
import os

import onnx
from onnx import TensorProto as T
from onnx import helper as h

here = os.path.dirname(os.path.abspath(__file__))


def save(name, nodes, out_dims, inits=()):
    g = h.make_graph(
        nodes,
        name,
        [],
        [h.make_tensor_value_info("y", T.FLOAT, out_dims)],
        list(inits),
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 8
    onnx.save(m, os.path.join(here, f"limit-fold-{name}.onnx"))


def shape(name, dims):
    return h.make_tensor(name, T.INT64, [len(dims)], dims)


# [32768, 1] + [1, 32768]: two 128 KiB constants broadcast to 4 GiB.
save("broadcast", [
    h.make_node("ConstantOfShape", ["sa"], ["a"], name="a"),
    h.make_node("ConstantOfShape", ["sb"], ["b"], name="b"),
    h.make_node("Add", ["a", "b"], ["y"], name="add"),
], [32768, 32768], [shape("sa", [32768, 1]), shape("sb", [1, 32768])])
# A scalar expanded to [32768, 32768].
save("expand", [
    h.make_node("Expand", ["one", "s"], ["y"], name="expand"),
], [32768, 32768], [h.make_tensor("one", T.FLOAT, [], [1.0]), shape("s", [32768, 32768])])
# Repeats whose product wraps past 2^64.
save("tile", [
    h.make_node("Tile", ["x", "r"], ["y"], name="tile"),
], [1, 1], [h.make_tensor("x", T.FLOAT, [4, 4], [1.0] * 16),
            shape("r", [2**62, 1])])
# 1 MiB of constants, past a --max-constant-bytes of 1000000.
save("budget", [
    h.make_node("ConstantOfShape", ["s"], ["y"], name="zeros"),
], [262144], [shape("s", [262144])])
