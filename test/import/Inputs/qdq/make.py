"""Builds the small QDQ models of import/tests/qdq.rs and test/import/qdq-*.txt.

Each model quantizes its float input(s) (QuantizeLinear -> DequantizeLinear,
as onnxruntime's quantize_static writes them), runs one float op on the
dequantized values (with int8 weights and int32 biases dequantized from
initializers, per tensor or per output channel) and quantizes the result,
which is the graph output. Beside each `NAME.onnx`: the inputs `NAME.x.npy`
(and `NAME.x2.npy`) and onnxruntime's output `NAME.y.npy` with graph
optimizations disabled (the model as written: float ops between Q and DQ),
the reference the test compares with (within one quantum); for QLinearConv
and QLinearMatMul onnx's reference implementation instead.

    /work/venv/bin/python test/import/Inputs/qdq/make.py   # onnx 1.23, onnxruntime 1.32
"""
import os
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


class G:
    def __init__(self):
        self.nodes, self.inits, self.inputs, self.n = [], [], [], 0

    def name(self, tag):
        self.n += 1
        return f"{tag}{self.n}"

    def init(self, arr, tag="c"):
        n = self.name(tag)
        self.inits.append(nh.from_array(arr, n))
        return n

    def node(self, op, ins, tag=None, **attrs):
        out = self.name(tag or op.lower())
        self.nodes.append(h.make_node(op, ins, [out], name=out, **attrs))
        return out

    def input(self, name, dims):
        self.inputs.append(h.make_tensor_value_info(name, T.FLOAT, dims))
        return name

    def qdq(self, x, scale, zp, dt=np.uint8):
        """Q then DQ of an activation with per-tensor parameters."""
        s, z = self.init(np.array(scale, np.float32), "s"), self.init(np.array(zp, dt), "z")
        q = self.node("QuantizeLinear", [x, s, z], "q")
        return self.node("DequantizeLinear", [q, s, z], "dq")

    def q_out(self, y, scale, zp, dt=np.uint8, out="y"):
        s, z = self.init(np.array(scale, np.float32), "s"), self.init(np.array(zp, dt), "z")
        self.nodes.append(h.make_node("QuantizeLinear", [y, s, z], [out], name=out))
        return out

    def weight(self, w, axis=0, per_channel=True):
        """int8 weights dequantized from an initializer (symmetric)."""
        if per_channel:
            red = tuple(i for i in range(w.ndim) if i != axis)
            s = (np.abs(w).max(axis=red) / 127).astype(np.float32)
            shape = [1] * w.ndim
            shape[axis] = -1
            q = np.clip(np.round(w / s.reshape(shape)), -127, 127).astype(np.int8)
            z = np.zeros(s.shape, np.int8)
        else:
            s = np.array(np.abs(w).max() / 127, np.float32)
            q = np.clip(np.round(w / s), -127, 127).astype(np.int8)
            z = np.array(0, np.int8)
        qn, sn, zn = self.init(q, "w"), self.init(s, "ws"), self.init(z, "wz")
        dq = self.node("DequantizeLinear", [qn, sn, zn], "wdq", axis=axis)
        return dq, s

    def bias(self, b, x_scale, w_scale):
        s = (np.float32(x_scale) * np.asarray(w_scale, np.float32)).astype(np.float32)
        s = np.broadcast_to(s, b.shape).astype(np.float32) if s.ndim else s
        q = np.round(b.astype(np.float64) / s.astype(np.float64)).astype(np.int32)
        z = np.zeros(s.shape, np.int32)
        qn, sn, zn = self.init(q, "b"), self.init(s, "bs"), self.init(z, "bz")
        return self.node("DequantizeLinear", [qn, sn, zn], "bdq", axis=0)

    def save(self, name, out_dims, out_type=T.UINT8, feeds=None, reference=False):
        g = h.make_graph(self.nodes, name, self.inputs,
                         [h.make_tensor_value_info("y", out_type, out_dims)], self.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        m.ir_version = 8
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
        y = sess.run(None, feeds)[0]
        # The output's dims, now known.
        g.output[0].CopyFrom(h.make_tensor_value_info("y", out_type, list(y.shape)))
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.checker.check_model(m, full_check=True)
        path = os.path.join(HERE, f"{name}.onnx")
        onnx.save(m, path)
        if reference:
            # onnx's reference implementation (exact integer sums): ORT's
            # u8 x s8 kernels sum pairs of products with int16 saturation on
            # CPUs without VNNI (/work/qdq/INVENTORY_HEAD.md, 5.3).
            from onnx.reference import ReferenceEvaluator
            y = ReferenceEvaluator(m).run(None, feeds)[0]
        for k, v in feeds.items():
            np.save(os.path.join(HERE, f"{name}.{k}.npy"), v)
        np.save(os.path.join(HERE, f"{name}.y.npy"), y)


def normal(*dims):
    return rng.standard_normal(dims).astype(np.float32)


def conv(name, xd, wd, per_channel=True, out_zp=0, **attrs):
    g = G()
    x = g.input("x", list(xd))
    a = g.qdq(x, 0.02, 128)
    w, ws = g.weight(normal(*wd) * 0.3, 0, per_channel)
    b = g.bias(normal(wd[0]) * 0.1, 0.02, ws)
    y = g.node("Conv", [a, w, b], "conv", **attrs)
    g.q_out(y, 0.05, out_zp)
    g.save(name, None, feeds={"x": normal(*xd)})


# Conv: per-channel int8 weights (channelwisequantizedconvolution), per-tensor
# weights (convolution), depthwise with dilation, 1-D, ORT's Relu-in-Q (zp 0).
conv("conv-perchannel", (1, 3, 6, 6), (4, 3, 3, 3), True, 0, pads=[1, 1, 1, 1])
conv("conv-pertensor", (1, 3, 7, 7), (4, 3, 3, 3), False, 128, strides=[2, 2])
conv("conv-depthwise", (1, 4, 7, 7), (4, 1, 3, 3), True, 100, group=4, dilations=[2, 2], pads=[2, 2, 2, 2])
conv("conv-1d", (1, 2, 10), (3, 2, 3), False, 128, pads=[1, 1])

# Gemm: per output column weights (transB, axis 0) and per tensor (no transB).
for name, per_channel, tb in [("gemm-perchannel", True, 1), ("gemm-pertensor", False, 0)]:
    g = G()
    x = g.input("x", [2, 8])
    a = g.qdq(x, 0.03, 120)
    wf = normal(5, 8) * 0.4
    w, ws = g.weight(wf if tb else wf.T.copy(), 0 if tb else 1, per_channel)
    b = g.bias(normal(5) * 0.2, 0.03, ws)
    y = g.node("Gemm", [a, w, b], "gemm", transB=tb)
    g.q_out(y, 0.06, 128)
    g.save(name, None, feeds={"x": normal(2, 8)})

# MatMul: a constant right operand (batched left), two activations.
g = G()
x = g.input("x", [2, 3, 8])
a = g.qdq(x, 0.03, 128)
w, _ = g.weight(normal(8, 4) * 0.4, 1, True)
g.q_out(g.node("MatMul", [a, w]), 0.08, 128)
g.save("matmul-const", None, feeds={"x": normal(2, 3, 8)})

g = G()
x, x2 = g.input("x", [3, 4]), g.input("x2", [4, 5])
g.q_out(g.node("MatMul", [g.qdq(x, 0.03, 128), g.qdq(x2, 0.02, 100)]), 0.05, 128)
g.save("matmul-acts", None, feeds={"x": normal(3, 4), "x2": normal(4, 5)})

# Add of a convolution's result (channels-last) and a dequantized input (ONNX
# order): different parameters on all three.
g = G()
x, x2 = g.input("x", [1, 2, 5, 5]), g.input("x2", [1, 3, 5, 5])
a = g.qdq(x, 0.02, 128)
w, ws = g.weight(normal(3, 2, 3, 3) * 0.3, 0, True)
c = g.node("Conv", [a, w, g.bias(normal(3) * 0.1, 0.02, ws)], pads=[1, 1, 1, 1])
cq = g.qdq(c, 0.04, 120)
g.q_out(g.node("Add", [cq, g.qdq(x2, 0.03, 110)]), 0.05, 128)
g.save("add-conv", None, feeds={"x": normal(1, 2, 5, 5), "x2": normal(1, 3, 5, 5)})

# Pools: MaxPool (same parameters), AveragePool with pads, GlobalAveragePool
# (another scale).
for name, op, attrs, os_, oz in [
    ("maxpool", "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 0.02, 128),
    ("avgpool", "AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 1, 1]), 0.015, 125),
    ("globalavgpool", "GlobalAveragePool", {}, 0.005, 128),
]:
    g = G()
    x = g.input("x", [1, 3, 7, 7])
    g.q_out(g.node(op, [g.qdq(x, 0.02, 128)], **attrs), os_, oz)
    g.save(name, None, feeds={"x": normal(1, 3, 7, 7)})

# Data movement with equal parameters, and a Transpose into other ones.
g = G()
x = g.input("x", [2, 3, 4])
a = g.qdq(x, 0.02, 128)
t = g.node("Transpose", [a], perm=[0, 2, 1])
t = g.qdq(t, 0.02, 128)
f = g.node("Flatten", [t], axis=1)
f = g.qdq(f, 0.02, 128)
r = g.node("Reshape", [f, g.init(np.array([4, 6], np.int64), "shape")])
r = g.qdq(r, 0.02, 128)
g.q_out(g.node("Transpose", [r], perm=[1, 0]), 0.03, 100)
g.save("movement", None, feeds={"x": normal(2, 3, 4)})

# Relu and Clip(0, 6) on quantized values, each into other parameters.
g = G()
x = g.input("x", [2, 8])
r = g.qdq(g.node("Relu", [g.qdq(x, 0.03, 128)]), 0.02, 0)
g.q_out(g.node("Clip", [r, g.init(np.array(0.5, np.float32)), g.init(np.array(2.0, np.float32))]), 0.01, 10)
g.save("relu-clip", None, feeds={"x": normal(2, 8) * 2})

# Concat of two inputs with different parameters (the output takes one's).
g = G()
x, x2 = g.input("x", [1, 2, 3, 3]), g.input("x2", [1, 3, 3, 3])
g.q_out(g.node("Concat", [g.qdq(x, 0.02, 128), g.qdq(x2, 0.035, 110)], axis=1), 0.02, 128)
g.save("concat", None, feeds={"x": normal(1, 2, 3, 3), "x2": normal(1, 3, 3, 3)})

# No quantized form: Sigmoid stays float between a dequantize and a quantize;
# an int8 result.
g = G()
x = g.input("x", [2, 5])
g.q_out(g.node("Sigmoid", [g.qdq(x, 0.03, -3, np.int8)]), 1 / 256, -128, np.int8)
g.save("sigmoid-lookup", None, out_type=T.INT8, feeds={"x": normal(2, 5) * 2})

# Softmax has no quantized form: it stays float between DQ and Q.
g = G()
x = g.input("x", [2, 5])
g.q_out(g.node("Softmax", [g.qdq(x, 0.03, -3, np.int8)], axis=1), 1 / 256, -128, np.int8)
g.save("softmax-fallback", None, out_type=T.INT8, feeds={"x": normal(2, 5) * 2})

# Per-axis QuantizeLinear of an activation (one per-axis quantize), then a per-axis
# DequantizeLinear of it and a per-tensor QuantizeLinear.
g = G()
x = g.input("x", [1, 3, 2, 2])
s, z = g.init(np.array([0.01, 0.02, 0.05], np.float32)), g.init(np.array([100, 128, 0], np.uint8))
q = g.node("QuantizeLinear", [x, s, z], axis=1)
d = g.node("DequantizeLinear", [q, s, z], axis=1)
g.q_out(d, 0.04, 128)
g.save("per-axis-activation", None, feeds={"x": normal(1, 3, 2, 2)})

# QLinearConv and QLinearMatMul with constant parameters and weights: the
# same quantized instructions as the folds; the input is the uint8 tensor.
def qlinear(name, op, xdims, wq, ws, wz, extra, bias=None, **attrs):
    g = G()
    g.inputs.append(h.make_tensor_value_info("x", T.UINT8, list(xdims)))
    c = lambda v, dt: g.init(np.array(v, dt))
    ins = ["x", c(0.02, np.float32), c(128, np.uint8), g.init(wq, "w"),
           g.init(np.asarray(ws, np.float32), "ws"), g.init(np.asarray(wz, wq.dtype), "wz"),
           c(0.05, np.float32), c(120, np.uint8)]
    if bias is not None:
        ins.append(g.init(bias, "b"))
    g.nodes.append(h.make_node(op, ins, ["y"], name="y", **attrs))
    g.save(name, None, feeds={"x": rng.integers(0, 256, xdims).astype(np.uint8)}, reference=True)


wq = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
qlinear("qlinearconv-const", "QLinearConv", (1, 3, 6, 6), wq,
        (rng.random(4) * 0.01 + 0.002).astype(np.float32), np.zeros(4), None,
        bias=rng.integers(-2000, 2000, 4).astype(np.int32), pads=[1, 1, 1, 1])
qlinear("qlinearmatmul-const", "QLinearMatMul", (3, 8),
        rng.integers(0, 256, (8, 5)).astype(np.uint8), [0.004], [130], None)

# Per-axis Q/DQ of a float convolution's output, which the importer stores
# channels-last: the per-axis parameters follow the channel axis.
g = G()
x = g.input("x", [1, 2, 3, 3])
c = g.node("Conv", [x, g.init(rng.standard_normal((3, 2, 1, 1)).astype(np.float32), "w")],
           kernel_shape=[1, 1])
s, z = g.init(np.array([0.01, 0.02, 0.05], np.float32)), g.init(np.array([100, 128, 0], np.uint8))
q = g.node("QuantizeLinear", [c, s, z], axis=1)
d = g.node("DequantizeLinear", [q, s, z], axis=1)
g.q_out(d, 0.04, 128)
g.save("per-axis-channels-last", None, feeds={"x": normal(1, 2, 3, 3)})

# More functions of one 8-bit value (lookup tables): Exp, Log and Sqrt of
# a uint8 input with zero point 0 (Log(0) = -inf saturates), Softplus.
for op, zp, oscale, ozp in [("Exp", 100, 0.05, 0), ("Log", 0, 0.03, 200),
                            ("Sqrt", 0, 0.01, 0), ("Softplus", 128, 0.02, 0)]:
    g = G()
    x = g.input("x", [2, 6])
    g.q_out(g.node(op, [g.qdq(x, 0.02, zp)]), oscale, ozp)
    g.save(f"{op.lower()}-lookup", None, feeds={"x": normal(2, 6) * 1.5})

# Max and Min of two dequantized activations with different parameters.
for op in ["Max", "Min"]:
    g = G()
    x, x2 = g.input("x", [2, 5]), g.input("x2", [2, 5])
    g.q_out(g.node(op, [g.qdq(x, 0.02, 128), g.qdq(x2, 0.03, 100)]), 0.025, 120)
    g.save(f"{op.lower()}-binary", None, feeds={"x": normal(2, 5), "x2": normal(2, 5)})
