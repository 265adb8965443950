# Writes the models and inputs of test/import/gridsample.txt and the other
# lit tests of the ops lowered as compositions (run with a Python that has
# onnx and numpy: python make.py) and prints onnx.reference's outputs, which
# the CHECK lines repeat.
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

here = os.path.dirname(os.path.abspath(__file__))
np.set_printoptions(precision=8, suppress=True, linewidth=200)


def save(name, node, inputs, outputs, feeds, opset):
    g = h.make_graph([node], name, inputs, outputs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    onnx.save(m, os.path.join(here, name + ".onnx"))
    for k, v in feeds.items():
        np.save(os.path.join(here, f"{name}.{k}.npy"), v)
    out = ReferenceEvaluator(m).run(None, feeds)
    print(name, [o.ravel().tolist() for o in out])


def f32(name, shape):
    return h.make_tensor_value_info(name, T.FLOAT, shape)


# GridSample: X = 0..5 as [1, 1, 3, 2]; the grid points reach outside the
# input so each padding mode shows.
x = np.arange(6, dtype=np.float32).reshape(1, 1, 3, 2)
grid = np.array(
    [[[[-1.3, -0.2], [0.4, 1.25]], [[0.9, -0.95], [-0.1, 0.6]]]], dtype=np.float32
)
for mode, pad, align in [
    ("linear", "zeros", 0),
    ("nearest", "reflection", 0),
    ("cubic", "border", 1),
]:
    node = h.make_node(
        "GridSample",
        ["x", "grid"],
        ["y"],
        mode=mode,
        padding_mode=pad,
        align_corners=align,
    )
    save(
        f"gridsample-{mode}",
        node,
        [f32("x", [1, 1, 3, 2]), f32("grid", [1, 2, 2, 2])],
        [f32("y", None)],
        {"x": x, "grid": grid},
        22,
    )


def i64(name, shape):
    return h.make_tensor_value_info(name, T.INT64, shape)


rng = np.random.default_rng(23)


def rand(*shape):
    return rng.uniform(-1, 1, size=shape).astype(np.float32)


# RotaryEmbedding: interleaved pairs, half of the head rotated, rows of the
# caches picked by position_ids.
node = h.make_node(
    "RotaryEmbedding",
    ["x", "cos", "sin", "pos"],
    ["y"],
    interleaved=1,
    rotary_embedding_dim=4,
)
save(
    "rotary",
    node,
    [f32("x", [1, 2, 2, 8]), f32("cos", [5, 2]), f32("sin", [5, 2]), i64("pos", [1, 2])],
    [f32("y", None)],
    {
        "x": rand(1, 2, 2, 8),
        "cos": rand(5, 2),
        "sin": rand(5, 2),
        "pos": np.array([[3, 1]], dtype=np.int64),
    },
    23,
)

# CausalConvWithState with SiLU and a past state.
node = h.make_node(
    "CausalConvWithState",
    ["x", "w", "b", "past"],
    ["y", "state"],
    activation="silu",
)
save(
    "causalconv",
    node,
    [f32("x", [1, 2, 3]), f32("w", [2, 1, 3]), f32("b", [2]), f32("past", [1, 2, 2])],
    [f32("y", None), f32("state", None)],
    {"x": rand(1, 2, 3), "w": rand(2, 1, 3), "b": rand(2), "past": rand(1, 2, 2)},
    27,
)

# LinearAttention, gated delta rule, two query heads per key head.
node = h.make_node(
    "LinearAttention",
    ["q", "k", "v", "past", "decay", "beta"],
    ["y", "state"],
    q_num_heads=2,
    kv_num_heads=1,
)
save(
    "linearattention",
    node,
    [
        f32("q", [1, 2, 4]),
        f32("k", [1, 2, 2]),
        f32("v", [1, 2, 2]),
        f32("past", [1, 1, 2, 2]),
        f32("decay", [1, 2, 1]),
        f32("beta", [1, 2, 1]),
    ],
    [f32("y", None), f32("state", None)],
    {
        "q": rand(1, 2, 4),
        "k": rand(1, 2, 2),
        "v": rand(1, 2, 2),
        "past": rand(1, 1, 2, 2),
        "decay": -np.abs(rand(1, 2, 1)),
        "beta": np.abs(rand(1, 2, 1)),
    },
    27,
)

# DFT: the one-sided forward transform of a real signal along axis 1, and
# the one-sided inverse (irfft) of a complex one (opset 19, axis as an attribute).
for name, attrs, shape in [
    ("dft-rfft", dict(axis=1, onesided=1), [1, 4, 2, 1]),
    ("dft-irfft", dict(axis=1, inverse=1, onesided=1), [1, 3, 2, 2]),
]:
    save(
        name,
        h.make_node("DFT", ["x"], ["y"], **attrs),
        [f32("x", shape)],
        [f32("y", None)],
        {"x": rand(*shape)},
        19,
    )

# Pad reflect and wrap (constant pads), and Slice with a step of 2 and a
# negative step, of a run-time x = 0..11 as [3, 4].
x = np.arange(12, dtype=np.float32).reshape(3, 4)
for mode in ["reflect", "wrap"]:
    g = h.make_graph(
        [h.make_node("Pad", ["x", "pads"], ["y"], mode=mode)],
        f"pad-{mode}",
        [f32("x", [3, 4])],
        [f32("y", None)],
        [h.make_tensor("pads", T.INT64, [4], [1, 2, 2, 1])],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 10
    onnx.save(m, os.path.join(here, f"pad-{mode}.onnx"))
    print(f"pad-{mode}", ReferenceEvaluator(m).run(None, {"x": x})[0].ravel().tolist())
g = h.make_graph(
    [h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
    "slice-steps",
    [f32("x", [3, 4])],
    [f32("y", None)],
    [
        h.make_tensor("starts", T.INT64, [2], [0, -1]),
        h.make_tensor("ends", T.INT64, [2], [3, -5]),
        h.make_tensor("axes", T.INT64, [2], [0, 1]),
        h.make_tensor("steps", T.INT64, [2], [2, -2]),
    ],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
m.ir_version = 10
onnx.save(m, os.path.join(here, "slice-steps.onnx"))
np.save(os.path.join(here, "x34.npy"), x)
print("slice-steps", ReferenceEvaluator(m).run(None, {"x": x})[0].ravel().tolist())

# ReverseSequence of x = 0..11 as [3, 4], batch along axis 1, the lengths
# fed at run time.
node = h.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=1, time_axis=0)
save(
    "reversesequence",
    node,
    [f32("x", [3, 4]), i64("lens", [4])],
    [f32("y", None)],
    {"x": x, "lens": np.array([3, 0, 1, 2], dtype=np.int64)},
    10,
)

# BatchNormalization in training mode: the batch's statistics normalize x,
# and the running mean and variance move towards them by 1 - momentum.
node = h.make_node(
    "BatchNormalization",
    ["x", "s", "b", "mean", "var"],
    ["y", "running_mean", "running_var"],
    training_mode=1,
    momentum=0.8,
)
save(
    "batchnorm-training",
    node,
    [f32(n, d) for n, d in [("x", [2, 2, 3]), ("s", [2]), ("b", [2]), ("mean", [2]), ("var", [2])]],
    [f32("y", None), f32("running_mean", None), f32("running_var", None)],
    {
        "x": rand(2, 2, 3),
        "s": rand(2),
        "b": rand(2),
        "mean": rand(2),
        "var": np.abs(rand(2)),
    },
    15,
)

# TensorScatter, circular: each batch's two updates written from its index
# on, wrapping past the end of the cache.
node = h.make_node("TensorScatter", ["cache", "upd", "w"], ["y"], mode="circular")
save(
    "tensorscatter",
    node,
    [f32("cache", [2, 4, 2]), f32("upd", [2, 2, 2]), i64("w", [2])],
    [f32("y", None)],
    {"cache": rand(2, 4, 2), "upd": rand(2, 2, 2), "w": np.array([3, 1], dtype=np.int64)},
    24,
)

# MaxUnpool of a 2x2 map to the flat indices MaxPool would give.
node = h.make_node("MaxUnpool", ["x", "i"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
save(
    "maxunpool",
    node,
    [f32("x", [1, 1, 2, 2]), i64("i", [1, 1, 2, 2])],
    [f32("y", None)],
    {"x": rand(1, 1, 2, 2), "i": np.array([[[[1, 6], [8, 15]]]], dtype=np.int64)},
    11,
)

# MaxPool of a uint8 tensor, and CumProd of int32 values along an axis fed
# at run time, exclusive and reversed.
node = h.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])
save(
    "maxpool-uint8",
    node,
    [h.make_tensor_value_info("x", T.UINT8, [1, 1, 3, 3])],
    [h.make_tensor_value_info("y", T.UINT8, None)],
    {"x": np.array([[[[200, 3, 255], [7, 0, 9], [128, 64, 1]]]], dtype=np.uint8)},
    12,
)
node = h.make_node("CumProd", ["x", "axis"], ["y"], exclusive=1, reverse=1)
save(
    "cumprod",
    node,
    [
        h.make_tensor_value_info("x", T.INT32, [2, 3]),
        h.make_tensor_value_info("axis", T.INT32, []),
    ],
    [h.make_tensor_value_info("y", T.INT32, None)],
    {"x": np.array([[2, -3, 4], [5, 6, -7]], dtype=np.int32), "axis": np.array(1, dtype=np.int32)},
    26,
)

# DeformConv with two offset groups, a mask, a bias and padding; the
# offsets move some taps outside X.
node = h.make_node(
    "DeformConv",
    ["x", "w", "offset", "b", "mask"],
    ["y"],
    kernel_shape=[2, 2],
    offset_group=2,
    pads=[1, 0, 0, 1],
)
save(
    "deformconv",
    node,
    [
        f32("x", [1, 2, 3, 3]),
        f32("w", [2, 2, 2, 2]),
        f32("offset", [1, 16, 3, 3]),
        f32("b", [2]),
        f32("mask", [1, 8, 3, 3]),
    ],
    [f32("y", None)],
    {
        "x": rand(1, 2, 3, 3),
        "w": rand(2, 2, 2, 2),
        "offset": 1.5 * rand(1, 16, 3, 3),
        "b": rand(2),
        "mask": np.abs(rand(1, 8, 3, 3)),
    },
    22,
)

# The full inverse DFT, which glow-import refuses (its own generator, so
# the data above stay as they are).
save(
    "dft-inverse",
    h.make_node("DFT", ["x"], ["y"], axis=1, inverse=1),
    [f32("x", [1, 3, 2, 2])],
    [f32("y", None)],
    {"x": np.random.default_rng(5).uniform(-1, 1, (1, 3, 2, 2)).astype(np.float32)},
    19,
)
