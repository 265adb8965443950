# Writes the models and input of test/import/nan-comparisons.txt and
# isnan-isinf.txt (run with a
# Python that has onnx and numpy: python make.py; `python make.py expected`
# also prints onnxruntime's outputs, against which the CHECK lines were
# verified). The input holds NaN, both zeros, the thresholds themselves and
# infinities: the values where a strict comparison written as a negated <=
# takes the other branch.
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

here = os.path.dirname(os.path.abspath(__file__))
x = np.array([np.nan, -0.0, 0.0, 0.5, -0.5, 2.0, -2.0, np.inf, -np.inf, 0.25],
             dtype=np.float32)
dims = list(x.shape)
nodes = [
    h.make_node("Sign", ["x"], ["sign"], name="sign"),
    h.make_node("ThresholdedRelu", ["x"], ["threshold"], name="threshold", alpha=0.5),
    h.make_node("Shrink", ["x"], ["shrink"], name="shrink", bias=0.25, lambd=0.5),
    h.make_node("PRelu", ["x", "slope"], ["prelu"], name="prelu"),
]
outs = ["sign", "threshold", "shrink", "prelu"]
g = h.make_graph(
    nodes,
    "nan_compare",
    [h.make_tensor_value_info("x", T.FLOAT, dims)],
    [h.make_tensor_value_info(n, T.FLOAT, dims) for n in outs],
    [h.make_tensor("slope", T.FLOAT, [1], [-2.0])],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
m.ir_version = 8
onnx.save(m, os.path.join(here, "nan-compare.onnx"))
np.save(os.path.join(here, "nan-compare.x.npy"), x)
if "expected" in sys.argv:
    import onnxruntime

    sess = onnxruntime.InferenceSession(m.SerializeToString())
    for n, v in zip(outs, sess.run(None, {"x": x})):
        print(n, [float(f) for f in v.ravel()])

# The unary nodes over a constant x, which the importer folds at import time.
g = h.make_graph(
    nodes[:3],
    "nan_compare_folded",
    [],
    [h.make_tensor_value_info(n, T.FLOAT, dims) for n in outs[:3]],
    [h.make_tensor("x", T.FLOAT, dims, x.tolist())],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
m.ir_version = 8
onnx.save(m, os.path.join(here, "nan-compare-folded.onnx"))

# IsNaN and IsInf (both signs, each alone, neither) over the same x: bool outputs.
special = [
    ("isnan", "IsNaN", {}),
    ("isinf", "IsInf", {}),
    ("isposinf", "IsInf", {"detect_negative": 0}),
    ("isneginf", "IsInf", {"detect_positive": 0}),
    ("isnone", "IsInf", {"detect_negative": 0, "detect_positive": 0}),
]
g = h.make_graph(
    [h.make_node(op, ["x"], [n], name=n, **a) for n, op, a in special],
    "special",
    [h.make_tensor_value_info("x", T.FLOAT, dims)],
    [h.make_tensor_value_info(n, T.BOOL, dims) for n, _, _ in special],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
m.ir_version = 8
onnx.save(m, os.path.join(here, "special.onnx"))
if "expected" in sys.argv:
    sess = onnxruntime.InferenceSession(m.SerializeToString())
    for (n, _, _), v in zip(special, sess.run(None, {"x": x})):
        print(n, [int(f) for f in v.ravel()])

# The same over a constant x, folded at import time.
g = h.make_graph(
    [h.make_node(op, ["x"], [n], name=n, **a) for n, op, a in special],
    "special_folded",
    [],
    [h.make_tensor_value_info(n, T.BOOL, dims) for n, _, _ in special],
    [h.make_tensor("x", T.FLOAT, dims, x.tolist())],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
m.ir_version = 8
onnx.save(m, os.path.join(here, "special-folded.onnx"))
