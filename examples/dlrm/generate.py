"""Writes the DLRM-style example (dlrm.gir), its inputs and the numpy reference.

Run once from the repository root with numpy installed:
    python3 examples/dlrm/generate.py
It writes examples/dlrm/{dlrm.gir, dense.npy, idx0.npy, len0.npy, idx1.npy,
len1.npy, idx2.npy, off2.npy, w2.npy, expected.npy}; the test
(backend/tests/dlrm.rs) needs no Python. The model: a bottom MLP on the
dense features, three embedding tables (two pooled by sparselengthssum, one
by a weighted embeddingbag), the pairwise dot products of the four feature
vectors (batchmatmul of Z by its transpose, the strictly lower triangle
gathered), then the top MLP on [dense, interactions] and a sigmoid.
"""
import numpy as np

B, DENSE, D, ROWS, TABLES = 4, 8, 8, 20, 3
F = TABLES + 1
PAIRS = [(i, j) for i in range(F) for j in range(i)]
rng = np.random.default_rng(2024)
f32 = np.float32


def uniform(*shape, scale=1.0):
    return (rng.uniform(-1, 1, size=shape) * scale).astype(f32)


def fmt(a):
    return ", ".join(np.format_float_positional(f32(v), unique=True, trim="0") for v in a.ravel())


def ints(a):
    return ", ".join(str(int(v)) for v in a.ravel())


w_b1, b_b1 = uniform(DENSE, 16, scale=0.5), uniform(16, scale=0.1)
w_b2, b_b2 = uniform(16, D, scale=0.5), uniform(D, scale=0.1)
tables = [uniform(ROWS, D, scale=0.5) for _ in range(TABLES)]
w_t1, b_t1 = uniform(D + len(PAIRS), 8, scale=1.0), uniform(8, scale=0.1)
w_t2, b_t2 = uniform(8, 1, scale=2.0), uniform(1, scale=0.1)

dense = uniform(B, DENSE)
len0 = np.array([2, 1, 3, 2], dtype=np.int32)
idx0 = rng.integers(0, ROWS, size=int(len0.sum())).astype(np.int64)
len1 = np.array([1, 1, 1, 1], dtype=np.int32)
idx1 = rng.integers(0, ROWS, size=4).astype(np.int64)
off2 = np.array([0, 3, 4, 4], dtype=np.int64)
idx2 = rng.integers(0, ROWS, size=6).astype(np.int64)
w2 = uniform(6)


def relu(x):
    return np.maximum(x, f32(0))


def sls(table, idx, lengths):
    out = np.zeros((len(lengths), D), dtype=f32)
    p = 0
    for s, n in enumerate(lengths):
        for _ in range(n):
            out[s] += table[idx[p]]
            p += 1
    return out


def bag(table, idx, offs, w):
    out = np.zeros((len(offs), D), dtype=f32)
    ends = list(offs[1:]) + [len(idx)]
    for b, (s, e) in enumerate(zip(offs, ends)):
        for j in range(s, e):
            out[b] += table[idx[j]] * w[j]
    return out


x = relu(dense @ w_b1 + b_b1)
x = relu(x @ w_b2 + b_b2)
emb = [sls(tables[0], idx0, len0), sls(tables[1], idx1, len1), bag(tables[2], idx2, off2, w2)]
z = np.stack([x] + emb, axis=1)  # B x F x D
zz = z @ z.transpose(0, 2, 1)  # B x F x F
inter = np.stack([zz[:, i, j] for i, j in PAIRS], axis=1)
top = np.concatenate([x, inter], axis=1)
y = relu(top @ w_t1 + b_t1)
y = y @ w_t2 + b_t2
expected = (1 / (1 + np.exp(-y.astype(np.float64)))).astype(f32)

gather = [i * F + j for i, j in PAIRS]
lines = []
w = lines.append
w("// A DLRM-style recommendation model (examples/dlrm/generate.py wrote it):")
w("// bottom MLP, three pooled embedding tables, pairwise dot products of the")
w("// four feature vectors, top MLP and a sigmoid. backend/tests/dlrm.rs runs it")
w("// on both engines against the numpy reference in expected.npy.")
w("function dlrm")
w("declare {")
w(f"  %dense = WeightVar float<{B} x {DENSE}> mutable")
w(f"  %idx0 = WeightVar index64<{len(idx0)}> mutable")
w(f"  %len0 = WeightVar index32<{B}> mutable")
w(f"  %idx1 = WeightVar index64<{len(idx1)}> mutable")
w(f"  %len1 = WeightVar index32<{B}> mutable")
w(f"  %idx2 = WeightVar index64<{len(idx2)}> mutable")
w(f"  %off2 = WeightVar index64<{B}> mutable")
w(f"  %w2 = WeightVar float<{len(w2)}> mutable")
w(f"  %prob = WeightVar float<{B} x 1> mutable")
for name, a in [("w_b1", w_b1), ("b_b1", b_b1), ("w_b2", w_b2), ("b_b2", b_b2),
                ("table0", tables[0]), ("table1", tables[1]), ("table2", tables[2]),
                ("w_t1", w_t1), ("b_t1", b_t1), ("w_t2", w_t2), ("b_t2", b_t2)]:
    dims = " x ".join(str(d) for d in a.shape)
    w(f"  %{name} = WeightVar float<{dims}> const {{ Data: [{fmt(a)}] }}")
w(f"  %pairs = WeightVar index64<{len(gather)}> const {{ Data: [{ints(np.array(gather))}] }}")
w("}")
w("")
w("code {")
code = []
c = code.append
c(f"%h1 = allocactivation {{ Ty: float<{B} x 16> }}")
c("%fc1 = fullyconnected @out %h1, @in %dense, @in %w_b1, @in %b_b1")
c("%relu1 = relu @out %h1, @in %h1")
c(f"%z = allocactivation {{ Ty: float<{B} x {F} x {D}> }}")
c("%z.zero = splat @out %z { Value: 0.0 }")
c(f"%x = allocactivation {{ Ty: float<{B} x {D}> }}")
c("%fc2 = fullyconnected @out %x, @in %h1, @in %w_b2, @in %b_b2")
c("%relu2 = relu @out %x, @in %x")
c("%free.h1 = deallocactivation @out %h1")
c(f"%x.row = tensorview @in %x {{ Ty: float<{B} x 1 x {D}>, Offsets: [0, 0] }}")
c("%put.x = inserttensor @inout %z, @in %x.row { Offsets: [0, 0, 0] }")
for t, (op, ins) in enumerate([
        ("sparselengthssum", "@in %table0, @in %idx0, @in %len0"),
        ("sparselengthssum", "@in %table1, @in %idx1, @in %len1"),
        ("embeddingbag", "@in %table2, @in %w2, @in %idx2, @in %off2")]):
    c(f"%e{t} = allocactivation {{ Ty: float<{B} x {D}> }}")
    c(f"%pool{t} = {op} @out %e{t}, {ins}")
    c(f"%e{t}.row = tensorview @in %e{t} {{ Ty: float<{B} x 1 x {D}>, Offsets: [0, 0] }}")
    c(f"%put.e{t} = inserttensor @inout %z, @in %e{t}.row {{ Offsets: [0, {t + 1}, 0] }}")
    c(f"%free.e{t} = deallocactivation @out %e{t}")
c(f"%zt = allocactivation {{ Ty: float<{B} x {D} x {F}> }}")
c("%tr = transpose @out %zt, @in %z { Shuffle: [0, 2, 1] }")
c(f"%zz = allocactivation {{ Ty: float<{B} x {F} x {F}> }}")
c("%dots = batchmatmul @out %zz, @in %z, @in %zt")
c("%free.zt = deallocactivation @out %zt")
c("%free.z = deallocactivation @out %z")
c(f"%zz.flat = tensorview @in %zz {{ Ty: float<{B} x {F * F}>, Offsets: [0, 0, 0] }}")
c(f"%inter = allocactivation {{ Ty: float<{B} x {len(PAIRS)}> }}")
c("%tri = gather @out %inter, @in %zz.flat, @in %pairs { Axis: 1 }")
c("%free.zz = deallocactivation @out %zz")
c(f"%top = allocactivation {{ Ty: float<{B} x {D + len(PAIRS)}> }}")
c("%top.zero = splat @out %top { Value: 0.0 }")
c("%put.dense = inserttensor @inout %top, @in %x { Offsets: [0, 0] }")
c(f"%put.inter = inserttensor @inout %top, @in %inter {{ Offsets: [0, {D}] }}")
c("%free.x = deallocactivation @out %x")
c("%free.inter = deallocactivation @out %inter")
c(f"%h3 = allocactivation {{ Ty: float<{B} x 8> }}")
c("%fc3 = fullyconnected @out %h3, @in %top, @in %w_t1, @in %b_t1")
c("%relu3 = relu @out %h3, @in %h3")
c("%free.top = deallocactivation @out %top")
c("%fc4 = fullyconnected @out %prob, @in %h3, @in %w_t2, @in %b_t2")
c("%sig = sigmoid @out %prob, @in %prob")
c("%free.h3 = deallocactivation @out %h3")
for i, line in enumerate(code):
    w(f"  {i} {line}")
w("}")
open("examples/dlrm/dlrm.gir", "w").write("\n".join(lines) + "\n")
for name, a in [("dense", dense), ("idx0", idx0), ("len0", len0), ("idx1", idx1),
                ("len1", len1), ("idx2", idx2), ("off2", off2), ("w2", w2),
                ("expected", expected)]:
    np.save(f"examples/dlrm/{name}.npy", a)
print(expected.ravel())
