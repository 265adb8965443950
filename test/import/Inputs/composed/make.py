# Writes the models and inputs of test/import/recurrent.txt, normalizations.txt and det.txt
# (run with a Python that has onnx and numpy: python make.py). Each model's inputs
# are NAME.x0.npy, NAME.x1.npy, ... in graph-input order; `expected` prints
# onnxruntime's outputs (ONNX's reference evaluator ignores the recurrent ops'
# activations), against which the CHECK lines were verified.
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


def model(name, op, inputs, outputs, opset=22, **attrs):
    node = h.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], name=name, **attrs)
    g = h.make_graph(
        [node],
        name,
        [h.make_tensor_value_info(n, T.FLOAT, d) for n, d in inputs if n],
        [h.make_tensor_value_info(n, T.FLOAT, d) for n, d in outputs if n],
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(here, name + ".onnx"))
    feeds = {}
    for i, (n, d) in enumerate(i for i in inputs if i[0]):
        v = rng.uniform(-1, 1, d).astype(np.float32)
        if name == "lpnorm-l1" and n == "x":
            v[:, 1] = 0  # a zero column: its norm is 0
        np.save(os.path.join(here, f"{name}.x{i}.npy"), v)
        feeds[n] = v
    if "expected" in sys.argv:
        import onnxruntime

        sess = onnxruntime.InferenceSession(m.SerializeToString())
        outs = sess.run(None, feeds)
        for (n, _), v in zip([o for o in outputs if o[0]], outs):
            print(name, n, [float(f) for f in v.ravel()])


# Bidirectional RNN with biases and an initial state.
model("rnn-bidirectional", "RNN",
      [("X", [2, 1, 3]), ("W", [2, 2, 3]), ("R", [2, 2, 2]), ("B", [2, 4]), ("", None),
       ("initial_h", [2, 1, 2])],
      [("Y", [2, 2, 1, 2]), ("Y_h", [2, 1, 2])],
      hidden_size=2, direction="bidirectional")
# RNN with a Relu activation and clip.
model("rnn-relu-clip", "RNN",
      [("X", [3, 2, 2]), ("W", [1, 2, 2]), ("R", [1, 2, 2])],
      [("Y", [3, 1, 2, 2]), ("Y_h", [1, 2, 2])],
      hidden_size=2, activations=["Relu"], clip=0.5)
# GRU with linear_before_reset, biases and an initial state (onnxruntime has no
# batch-first layout; the official suite covers that).
model("gru-linear-before-reset", "GRU",
      [("X", [3, 2, 2]), ("W", [1, 6, 2]), ("R", [1, 6, 2]), ("B", [1, 12]), ("", None),
       ("initial_h", [1, 2, 2])],
      [("Y", [3, 1, 2, 2]), ("Y_h", [1, 2, 2])],
      hidden_size=2, linear_before_reset=1)
# GRU with HardSigmoid (alpha, beta given) and Affine activations.
model("gru-activations", "GRU",
      [("X", [2, 1, 2]), ("W", [1, 6, 2]), ("R", [1, 6, 2])],
      [("Y", [2, 1, 1, 2]), ("Y_h", [1, 1, 2])],
      hidden_size=2, activations=["HardSigmoid", "Affine"],
      activation_alpha=[0.3, 0.7], activation_beta=[0.4, 0.1])
# LSTM with peepholes, initial states, biases; every output.
model("lstm-peepholes", "LSTM",
      [("X", [2, 1, 3]), ("W", [1, 8, 3]), ("R", [1, 8, 2]), ("B", [1, 16]), ("", None),
       ("initial_h", [1, 1, 2]), ("initial_c", [1, 1, 2]), ("P", [1, 6])],
      [("Y", [2, 1, 1, 2]), ("Y_h", [1, 1, 2]), ("Y_c", [1, 1, 2])],
      hidden_size=2)
# Normalizations.
model("lpnorm-l1", "LpNormalization", [("x", [2, 3])], [("y", [2, 3])], axis=0, p=1)
model("mvn-axes", "MeanVarianceNormalization", [("x", [2, 3, 2])], [("y", [2, 3, 2])],
      opset=13, axes=[1, 2])
model("instancenorm", "InstanceNormalization",
      [("x", [2, 2, 3]), ("s", [2]), ("b", [2])], [("y", [2, 2, 3])], epsilon=0.01)
model("groupnorm-18", "GroupNormalization",
      [("x", [1, 4, 2]), ("s", [2]), ("b", [2])], [("y", [1, 4, 2])], opset=18, num_groups=2)
model("groupnorm-21", "GroupNormalization",
      [("x", [1, 4, 2]), ("s", [4]), ("b", [4])], [("y", [1, 4, 2])], opset=21, num_groups=2)
# Det by cofactors: a batch of 3 x 3 matrices, and one 4 x 4 (a scalar result).
model("det-3x3", "Det", [("x", [2, 3, 3])], [("y", [2])])
model("det-4x4", "Det", [("x", [4, 4])], [("y", [])])


# Models the importer refuses (errors.txt-style checks in the lit tests).
def refused(name, op, inputs, out_dims, inits=(), opset=22, **attrs):
    node = h.make_node(op, [n for n, _ in inputs], ["y"], name=name, **attrs)
    g = h.make_graph(
        [node],
        name,
        [h.make_tensor_value_info(n, T.FLOAT, d) for n, d in inputs if d is not None],
        [h.make_tensor_value_info("y", T.FLOAT, out_dims)],
        initializer=list(inits),
    )
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(here, name + ".onnx"))


refused("det-5x5", "Det", [("x", [5, 5])], [], opset=22)
refused("lpnorm-p3", "LpNormalization", [("x", [2, 3])], [2, 3], p=3)
refused("groupnorm-groups", "GroupNormalization", [("x", [1, 4, 2]), ("s", [4]), ("b", [4])],
        [1, 4, 2], opset=21, num_groups=3)
refused("rnn-activation", "RNN", [("X", [2, 1, 2]), ("W", [1, 2, 2]), ("R", [1, 2, 2])],
        [2, 1, 1, 2], hidden_size=2, activations=["Gelu"])
refused("rnn-seq-lens", "RNN",
        [("X", [2, 1, 2]), ("W", [1, 2, 2]), ("R", [1, 2, 2]), ("", None), ("lens", None)],
        [2, 1, 1, 2], inits=[h.make_tensor("lens", T.INT32, [1], [1])], hidden_size=2)
