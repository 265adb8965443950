#!/usr/bin/env python3
"""The compiled bundle against onnxruntime on the corpus CNNs, interleaved in one run.

usage: scripts/bench_models.py [--rounds N] [--threads T] [--models a,b,...] [--work DIR]
                               [--convs] [--no-ort] [--int8]

For each model of ../shared/corpus/models/torchvision (or $GLOW_CORPUS/models/torchvision): fills
the stripped weights (seeded, their recorded mean/std), imports it with glow-import, builds the
bundle with `glow-opt -O --emit=c` and `cc -O3 -march=native`, and times onnxruntime and the bundle
on the same input, alternating, ROUNDS times each. One thread: the median CPU time of the calling
thread. T threads (`--threads T`: the bundle emitted with --threads T, ORT with T intra-op threads):
the median wall time (ORT's pool told not to spin, so it does not hold a core while the
bundle runs). Prints the ratio glow/ORT and how much of the tolerance 1e-5 + 1e-3|ref| the
worst output element uses (<= 1 passes). `--convs` adds GFLOP/s of single ResNet-50 convolutions
and their share of this core's FMA peak, measured by scripts/bench/fma-peak.c.

`--int8`: the static int8 QDQ model onnxruntime's `quantize_static` makes of each model
(per-channel QInt8 weights, QUInt8 activations, calibrated on 8 seeded standard-normal inputs),
imported with glow-import and built the same way; times ORT on the QDQ model, our int8 bundle
and our fp32 bundle interleaved, and reports the relative L2 distance of our int8 output to
ORT's int8 output and to the float output (and ORT int8's own distance to float).

Needs numpy, onnx and onnxruntime (and sympy, which quantize_static's preprocessing imports) for the
comparison (python3 -m venv v && v/bin/pip install numpy sympy
onnx onnxruntime); without them (or with --no-ort) it times the bundles alone.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["resnet50", "resnet18", "mobilenet_v2", "squeezenet1_1"]

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    np = onnx = None
try:
    import onnxruntime as ort
except ImportError:
    ort = None


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r


def fill_model(src, dst, seed):
    """Fills stripped initializers with normal values of their recorded mean/std."""
    m = onnx.load(src, load_external_data=False)
    rng = np.random.default_rng(seed)

    def fill(t):
        ext = {e.key: e.value for e in t.external_data}
        if t.data_location == onnx.TensorProto.EXTERNAL and ext.get("location") == "__stripped__":
            d = json.loads(t.doc_string)
            a = rng.normal(d["mean"], d["std"], size=tuple(t.dims)).astype(np.float32)
            t.CopyFrom(numpy_helper.from_array(a, t.name))

    for t in m.graph.initializer:
        fill(t)
    for node in m.graph.node:
        for at in node.attribute:
            if at.type == onnx.AttributeProto.TENSOR:
                fill(at.t)
    onnx.save(m, dst)
    return m


class Bundle:
    """The timing server (scripts/bench/server.c) around one built bundle."""

    def __init__(self, exe, weights, inp):
        self.p = subprocess.Popen([exe, weights, inp], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.p.stdout.readline().strip() == "ready"

    def ask(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        return self.p.stdout.readline().split()

    def run(self):
        wall, rc, cpu = self.ask("r")
        assert rc == "0", rc
        return float(wall), float(cpu)

    def close(self):
        self.p.stdin.write("q\n")
        self.p.stdin.flush()
        self.p.wait()


def build(a, bins, work, gir, wts, tag):
    """Builds the timing server of a bundle made by `glow-opt -O` from GIR; returns (exe, weights, cc s)."""
    cdir = os.path.join(work, f"c{tag}")
    shutil.rmtree(cdir, ignore_errors=True)
    emit = [bins["glow-opt"], "-O", gir, "--emit=c", "-o", cdir, "--weights", wts]
    if a.threads > 1:
        emit += [f"--threads={a.threads}"]
    if a.fast_math:
        emit += ["--fast-math"]
    run(emit)
    cc = os.environ.get("CC", "cc")
    flags = ["-O3", "-march=native"]
    libs = ["-lm"] + (["-lpthread"] if a.threads > 1 else [])
    t0 = time.monotonic()
    obj = os.path.join(work, f"main_graph{tag}.o")
    run([cc] + flags + ["-c", os.path.join(cdir, "main_graph.c"), "-o", obj])
    cc_s = time.monotonic() - t0
    exe = os.path.join(work, f"server{tag}")
    run([cc] + flags + ["-I", cdir, "-DB=main_graph", "-DIN=input", "-DOUT=logits",
                        os.path.join(ROOT, "scripts", "bench", "server.c"), obj, "-o", exe] + libs)
    return exe, os.path.join(cdir, "main_graph.weights.bin"), cc_s


def session(a, model):
    so = ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if a.threads > 1:
        # ORT's pool threads spin after each run by default; interleaved
        # with the bundle, a spinning thread would take the bundle's core.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])


def make_qdq(src, dst, n=8):
    """The static int8 QDQ model of `src` (as ../shared/bench/mkqdq.py makes it)."""
    from onnxruntime.quantization import quantize_static, CalibrationDataReader, QuantFormat, QuantType
    from onnxruntime.quantization.shape_inference import quant_pre_process
    m = onnx.load(src, load_external_data=False)
    inp = m.graph.input[0]
    shape = [d.dim_value or 1 for d in inp.type.tensor_type.shape.dim]

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.it = iter([{inp.name: rng.standard_normal(shape).astype(np.float32)} for _ in range(n)])

        def get_next(self):
            return next(self.it, None)

    pre = dst + ".pre.onnx"
    quant_pre_process(src, pre)
    quantize_static(pre, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


def rel_l2(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def output_scale(path):
    """The scale of the QDQ model's last DequantizeLinear (its output's quantum), or None."""
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    out = m.graph.output[0].name
    for node in m.graph.node:
        if out in node.output and node.op_type == "DequantizeLinear" and node.input[1] in inits:
            return float(onnx.numpy_helper.to_array(inits[node.input[1]]).ravel()[0])
    return None


def max_quanta(a, b, scale):
    if scale is None:
        return float("nan")
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(np.abs(a - b).max() / scale)


def bench_int8(name, a, bins, corpus):
    work = os.path.join(a.work, name)
    os.makedirs(work, exist_ok=True)
    src = os.path.join(corpus, "models", "torchvision", f"{name}.onnx")
    model = os.path.join(work, f"{name}.onnx")
    fill_model(src, model, 1)
    qdq = os.path.join(work, f"{name}.qdq.onnx")
    if not os.path.exists(qdq):
        make_qdq(model, qdq)
    servers = {}
    for tag, m in [("fp32", model), ("int8", qdq)]:
        gir, wts = os.path.join(work, f"{name}.{tag}.gir"), os.path.join(work, f"{name}.{tag}.safetensors")
        run([bins["glow-import"], m, "-o", gir, "--weights", wts])
        servers[tag] = build(a, bins, work, gir, wts, tag)
    shape = (1, 3, 299, 299) if name == "inception_v3" else (1, 3, 224, 224)
    x = np.random.default_rng(0).random(shape, dtype=np.float32)
    inp_bin = os.path.join(work, "input.bin")
    x.tofile(inp_bin)
    b = {k: Bundle(exe, w, inp_bin) for k, (exe, w, _) in servers.items()}
    sq, sf = session(a, qdq), session(a, model)
    iname = sq.get_inputs()[0].name
    yq, yf = sq.run(None, {iname: x})[0], sf.run(None, {iname: x})[0]
    out = os.path.join(work, "out.bin")
    b["int8"].run()
    b["int8"].ask(f"o {out}")
    got = np.fromfile(out, dtype=np.float32)[: yq.size]
    qs = output_scale(qdq)

    def ort_run():
        c0, t0 = time.thread_time(), time.monotonic()
        sq.run(None, {iname: x})
        c1, t1 = time.thread_time(), time.monotonic()
        return ((t1 - t0) * 1e3, (c1 - c0) * 1e3)

    for _ in range(3):
        ort_run()
        for v in b.values():
            v.run()
    pick = 0 if a.threads > 1 else 1
    times = {"ort": [], "int8": [], "fp32": []}
    for i in range(a.rounds):
        order = ["ort", "int8", "fp32"] if i % 2 == 0 else ["fp32", "int8", "ort"]
        for k in order:
            times[k].append(ort_run()[pick] if k == "ort" else b[k].run()[pick])
    for v in b.values():
        v.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"model": name, **med, "ratio": med["int8"] / med["ort"],
            "int8_over_fp32": med["int8"] / med["fp32"],
            "l2_ort_int8": rel_l2(got, yq), "l2_float": rel_l2(got, yf), "ort_l2_float": rel_l2(yq, yf),
            "q_ort_int8": max_quanta(got, yq, qs), "q_ort_float": max_quanta(yq, yf, qs)}


def bench_model(name, a, bins, corpus):
    work = os.path.join(a.work, name)
    os.makedirs(work, exist_ok=True)
    src = os.path.join(corpus, "models", "torchvision", f"{name}.onnx")
    model = os.path.join(work, f"{name}.onnx")
    use_ort = ort is not None and np is not None and not a.no_ort
    if np is not None:
        fill_model(src, model, 1)
        imp = [bins["glow-import"], model]
    else:
        imp = [bins["glow-import"], src, "--fill-stripped", "1"]
    gir, wts = os.path.join(work, f"{name}.gir"), os.path.join(work, f"{name}.safetensors")
    run(imp + ["-o", gir, "--weights", wts])
    exe, weights, cc_s = build(a, bins, work, gir, wts, "")
    shape = (1, 3, 299, 299) if name == "inception_v3" else (1, 3, 224, 224)
    inp_bin = os.path.join(work, "input.bin")
    if np is not None:
        x = np.random.default_rng(0).random(shape, dtype=np.float32)
        x.tofile(inp_bin)
    else:
        with open(inp_bin, "wb") as f:
            f.write(os.urandom(4 * shape[0] * shape[1] * shape[2] * shape[3]))
    b = Bundle(exe, weights, inp_bin)
    b.run()
    times = {"glow": [], "ort": []}
    err = None
    if use_ort:
        sess = session(a, model)
        iname = sess.get_inputs()[0].name

        def ort_run():
            c0, t0 = time.thread_time(), time.monotonic()
            y = sess.run(None, {iname: x})[0]
            c1, t1 = time.thread_time(), time.monotonic()
            return ((t1 - t0) * 1e3, (c1 - c0) * 1e3), y

        for _ in range(3):
            _, ref = ort_run()
        out = os.path.join(work, "out.bin")
        b.ask(f"o {out}")
        got = np.fromfile(out, dtype=np.float32)[: ref.size].astype(np.float64)
        r = ref.ravel().astype(np.float64)
        err = float(np.max(np.abs(got - r) / (1e-5 + 1e-3 * np.abs(r))))
    pick = 0 if a.threads > 1 else 1  # wall time with threads, else CPU time
    for i in range(a.rounds):
        order = ["ort", "glow"] if i % 2 == 0 else ["glow", "ort"]
        for k in order:
            if k == "glow":
                times["glow"].append(b.run()[pick])
            elif use_ort:
                times["ort"].append(ort_run()[0][pick])
    b.close()
    g = statistics.median(times["glow"])
    o = statistics.median(times["ort"]) if times["ort"] else None
    return {"model": name, "ort_ms": o, "glow_ms": g, "ratio": g / o if o else None,
            "tolerance_use": err, "cc_s": cc_s}


CONVS = [  # (H, W, C, OC, K, stride, pad): ResNet-50 shapes
    (224, 224, 3, 64, 7, 2, 3),
    (56, 56, 64, 64, 3, 1, 1),
    (56, 56, 64, 256, 1, 1, 0),
    (28, 28, 128, 128, 3, 1, 1),
    (14, 14, 256, 256, 3, 1, 1),
    (14, 14, 1024, 256, 1, 1, 0),
    (7, 7, 512, 512, 3, 1, 1),
]


def bench_convs(a, bins):
    rows = []
    for (h, w, c, oc, k, s, p) in CONVS:
        oh, ow = (h + 2 * p - k) // s + 1, (w + 2 * p - k) // s + 1
        text = f"""function conv
declare {{
  %in = WeightVar float<1 x {h} x {w} x {c}> mutable
  %w = WeightVar float<{oc} x {k} x {k} x {c}> const
  %b = WeightVar float<{oc}> const
  %out = WeightVar float<1 x {oh} x {ow} x {oc}> mutable
}}

code {{
  0 %c = convolution @out %out, @in %in, @in %w, @in %b {{ Kernels: [{k}, {k}], Strides: [{s}, {s}], Pads: [{p}, {p}, {p}, {p}] }}
}}
"""
        with tempfile.NamedTemporaryFile("w", suffix=".gir", delete=False) as f:
            f.write(text)
        reps = max(3, int(2e9 / (2 * oh * ow * oc * k * k * c)))
        r = run([bins["glow-run"], f.name, "--engine=c", "--cflags=-O3 -march=native", f"--repeat={reps}"])
        os.unlink(f.name)
        ms = float(next(l for l in r.stderr.splitlines() if "ms per run" in l).split()[1])
        flops = 2 * oh * ow * oc * k * k * c
        rows.append((f"{h}x{w}x{c} -> {oc}, {k}x{k}/{s}", ms, flops / ms / 1e6))
    return rows


def fma_peak(work):
    """This core's single-thread FMA GFLOP/s (scripts/bench/fma-peak.c), or None."""
    exe = os.path.join(work, "fma-peak")
    cc = os.environ.get("CC", "cc")
    r = subprocess.run([cc, "-O2", "-march=native", os.path.join(ROOT, "scripts", "bench", "fma-peak.c"),
                        "-o", exe], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return float(run([exe]).stdout.split()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "glow-bench-models"))
    ap.add_argument("--convs", action="store_true")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--fast-math", action="store_true")
    ap.add_argument("--int8", action="store_true")
    a = ap.parse_args()
    corpus = os.environ.get("GLOW_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
    if not os.path.isdir(os.path.join(corpus, "models", "torchvision")):
        print(f"skipped: no models under {corpus}/models/torchvision (set GLOW_CORPUS)")
        return
    if ort is None or np is None:
        print("note: onnxruntime/numpy/onnx not importable; timing the bundles alone "
              "(python3 -m venv v && v/bin/pip install numpy onnx onnxruntime)")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    run(["cargo", "build", "--release", "-q", "--bin", "glow-import", "--bin", "glow-opt", "--bin", "glow-run"], cwd=ROOT)
    bins = {b: os.path.join(target, "release", b) for b in ["glow-import", "glow-opt", "glow-run"]}
    os.makedirs(a.work, exist_ok=True)
    what = "wall" if a.threads > 1 else "CPU"
    if a.int8:
        try:
            import sympy  # noqa: F401 (quantize_static's preprocessing needs it)
        except ImportError:
            sympy = None
        if ort is None or np is None or sympy is None:
            print("skipped: --int8 needs numpy, onnx and onnxruntime (python3 -m venv v && "
                  "v/bin/pip install numpy onnx onnxruntime sympy)")
            return
        print(f"| model | ORT int8 {what} ms | glow-rs int8 {what} ms | ratio | glow-rs fp32 ms | int8/fp32 "
              "| rel L2 to ORT int8 | rel L2 to float | ORT int8 rel L2 to float "
              "| max quanta to ORT int8 | ORT int8 max quanta to float |")
        print("|---|---|---|---|---|---|---|---|---|---|---|")
        for m in a.models.split(","):
            r = bench_int8(m, a, bins, corpus)
            print(f"| {m} | {r['ort']:.2f} | {r['int8']:.2f} | {r['ratio']:.2f} | {r['fp32']:.2f} | "
                  f"{r['int8_over_fp32']:.2f} | {r['l2_ort_int8']:.4f} | {r['l2_float']:.4f} | "
                  f"{r['ort_l2_float']:.4f} | {r['q_ort_int8']:.2f} | {r['q_ort_float']:.2f} |", flush=True)
        return
    print(f"| model | ORT {a.threads}-thread {what} ms | glow-rs {what} ms | ratio | tolerance use | cc -O3 s |")
    print("|---|---|---|---|---|---|")
    for m in a.models.split(","):
        r = bench_model(m, a, bins, corpus)
        f = lambda v, d=2: "-" if v is None else f"{v:.{d}f}"
        print(f"| {m} | {f(r['ort_ms'])} | {f(r['glow_ms'])} | {f(r['ratio'])} | {f(r['tolerance_use'], 3)} | {f(r['cc_s'])} |", flush=True)
    if a.convs:
        peak = fma_peak(a.work)
        head = f" of FMA peak ({peak:.1f} GFLOP/s)" if peak else " of FMA peak (not measured: no FMA)"
        print(f"\n| ResNet-50 convolution (NHWC) | ms | GFLOP/s |{head} |\n|---|---|---|---|")
        for name, ms, gf in bench_convs(a, bins):
            share = f"{100 * gf / peak:.0f}%" if peak else "-"
            print(f"| {name} | {ms:.3f} | {gf:.1f} | {share} |")


if __name__ == "__main__":
    main()
