# Writes the model and inputs of test/import/attention-bool-mask.txt (run
# with a Python that has onnx and numpy: python make.py; `python make.py
# expected` prints onnxruntime's output, against which the CHECK lines were
# verified): Attention with a run-time bool mask, shorter than the keys on
# its last axis (padded as hidden).
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(3)
q = rng.uniform(-1, 1, (1, 1, 2, 2)).astype(np.float32)
k = rng.uniform(-1, 1, (1, 1, 3, 2)).astype(np.float32)
v = rng.uniform(-1, 1, (1, 1, 3, 2)).astype(np.float32)
mask = np.array([[True, False], [False, True]])
g = h.make_graph(
    [h.make_node("Attention", ["q", "k", "v", "mask"], ["y"], name="attn")],
    "attention_bool_mask",
    [h.make_tensor_value_info("q", T.FLOAT, q.shape),
     h.make_tensor_value_info("k", T.FLOAT, k.shape),
     h.make_tensor_value_info("v", T.FLOAT, v.shape),
     h.make_tensor_value_info("mask", T.BOOL, mask.shape)],
    [h.make_tensor_value_info("y", T.FLOAT, [1, 1, 2, 2])],
)
m = h.make_model(g, opset_imports=[h.make_opsetid("", 23)])
m.ir_version = 10
onnx.save(m, os.path.join(here, "attention-bool-mask.onnx"))
for n, a in [("q", q), ("k", k), ("v", v), ("mask", mask)]:
    np.save(os.path.join(here, f"{n}.npy"), a)
if "expected" in sys.argv:
    import onnxruntime

    # onnxruntime wants the mask as long as the keys: pad it as hidden.
    full = np.concatenate([mask, np.zeros((2, 1), bool)], axis=1)
    m.graph.input[3].CopyFrom(h.make_tensor_value_info("mask", T.BOOL, full.shape))
    sess = onnxruntime.InferenceSession(m.SerializeToString())
    feeds = {"q": q, "k": k, "v": v, "mask": full}
    print([float(f) for f in sess.run(None, feeds)[0].ravel()])
