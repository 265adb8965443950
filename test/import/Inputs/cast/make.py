# Writes the model and inputs of test/import/cast-runtime.txt (run with a
# Python that has onnx and numpy: python make.py; `python make.py expected`
# prints onnxruntime's outputs, against which the CHECK lines were
# verified): Cast and CastLike of run-time tensors between float, int64,
# int32, int8, uint8 and bool, with in-range values (onnxruntime leaves
# out-of-range float-to-integer casts to the C++ conversion).
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

here = os.path.dirname(os.path.abspath(__file__))
f = np.array([2.7, -2.7, 0.0, -0.5, 100.9, -100.9], np.float32)
i = np.array([300, -1, 7, 0, -129, 2**40], np.int64)
b = np.array([True, False, True, False, False, True])
nodes = [
    h.make_node("Cast", ["f"], ["f_i32"], name="f_i32", to=T.INT32),
    h.make_node("Cast", ["f"], ["f_i8"], name="f_i8", to=T.INT8),
    h.make_node("Cast", ["f"], ["f_b"], name="f_b", to=T.BOOL),
    h.make_node("Cast", ["i"], ["i_f"], name="i_f", to=T.FLOAT),
    h.make_node("Cast", ["i"], ["i_u8"], name="i_u8", to=T.UINT8),
    h.make_node("Cast", ["i"], ["i_i32"], name="i_i32", to=T.INT32),
    h.make_node("CastLike", ["b", "f"], ["b_f"], name="b_f"),
    h.make_node("CastLike", ["f", "i"], ["f_i64"], name="f_i64"),
]
outs = [("f_i32", T.INT32), ("f_i8", T.INT8), ("f_b", T.BOOL), ("i_f", T.FLOAT),
        ("i_u8", T.UINT8), ("i_i32", T.INT32), ("b_f", T.FLOAT), ("f_i64", T.INT64)]
g = h.make_graph(
    nodes,
    "cast_runtime",
    [h.make_tensor_value_info("f", T.FLOAT, [6]),
     h.make_tensor_value_info("i", T.INT64, [6]),
     h.make_tensor_value_info("b", T.BOOL, [6])],
    [h.make_tensor_value_info(n, t, [6]) for n, t in outs],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
m.ir_version = 10
onnx.save(m, os.path.join(here, "cast-runtime.onnx"))
for n, a in [("f", f), ("i", i), ("b", b)]:
    np.save(os.path.join(here, f"{n}.npy"), a)
if "expected" in sys.argv:
    import onnxruntime

    sess = onnxruntime.InferenceSession(m.SerializeToString())
    for (n, _), v in zip(outs, sess.run(None, {"f": f, "i": i, "b": b})):
        print(n, v.tolist())
