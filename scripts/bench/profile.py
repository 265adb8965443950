#!/usr/bin/env python3
"""Per-layer profile of our bundle against onnxruntime's, matched by layer.

usage: scripts/bench/profile.py [--models resnet50,mobilenet_v2] [--rounds N] [--fp32]
                                [--threads T] [--work DIR] [--top K]

For each model of the corpus (as scripts/bench_models.py prepares it: seeded weights; by default
the static int8 QDQ model `quantize_static` makes, `--fp32` the float model), builds the bundle
with `glow-opt -O --emit=c --trace-hook` and scripts/bench/server.c with -DGLOW_PROFILE (the hook
takes the monotonic time after each instruction), and runs onnxruntime (1 thread, or T intra-op threads not spinning with `--threads T`, the
bundle then emitted with --threads T; all graph optimizations) with `SessionOptions.enable_profiling` on the same input, interleaved, ROUNDS runs
each. Per instruction: the shortest time over the rounds (wall time on both sides; the minimum,
not the median, because on a shared machine a layer's median carries other processes' time) of
ours and of the onnxruntime node of the same ONNX name (ORT names its fused nodes `NAME_token_K`,
which is matched to NAME), the ratio, and for convolutions and matrix products the GOP/s and their
share of this core's peak: scripts/bench/int8-peak.c (vpmaddwd, the exact int8 kernels' step) for
int8, scripts/bench/fma-peak.c for fp32. Then the totals by kind of layer and the largest gaps.

Needs numpy, onnx and onnxruntime; without them it prints `skipped` and exits 0.
"""
import argparse, collections, json, os, re, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_models as bm  # noqa: E402

INST = re.compile(r'^\s*(\d+) (%"[^"]*"|%\S+) = (\w+)(.*)$')
DECL = re.compile(r'^\s*(%"[^"]*"|%\S+) = (?:WeightVar \S+ ?)?(?:[^<]*)<([^>]*)>')
TY = re.compile(r"Ty: [^<]*<([^>]*)>")
OPERANDS = re.compile(r'@(?:in|out|inout) (%"[^"]*"|%[^\s,{]+)')
PRODUCTS = {"convolution", "channelwisequantizedconvolution", "fullyconnected", "matmul",
            "rowwisequantizedfullyconnected"}


def dims(text):
    return [int(d) for d in text.replace(" ", "").split("x") if d]


def prod(v):
    r = 1
    for d in v:
        r *= d
    return r


def read_program(gir):
    """pos -> (name, opcode, operands, members text), and name -> dims."""
    insts, types = {}, {}
    for line in open(gir):
        m = INST.match(line)
        if m:
            pos, name, op, rest = int(m[1]), m[2].strip('%"'), m[3], m[4]
            ops = [o.strip('%"') for o in OPERANDS.findall(rest)]
            insts[pos] = (name, op, ops, rest)
            t = TY.search(rest)
            if t:
                types[name] = dims(t[1])
            continue
        d = DECL.match(line)
        if d:
            types[d[1].strip('%"')] = dims(d[2])
    return insts, types


def layer_info(op, ops, rest, types):
    """(kind, multiply-accumulates) of one instruction."""
    if op in ("convolution", "channelwisequantizedconvolution") and len(ops) >= 3:
        dest, src, filt = (types.get(o) for o in ops[:3])
        if not (dest and filt and src):
            return op, None
        k = re.search(r"Kernels: \[(\d+), (\d+)\]", rest)
        s = re.search(r"Strides: \[(\d+), (\d+)\]", rest)
        g = re.search(r"Group: (\d+)", rest)
        kk = f"{k[1]}x{k[2]}" if k else "?"
        ss = f"/{s[1]}" if s else ""
        group = int(g[1]) if g else 1
        dw = group > 1 and group == src[-1] and filt[-1] == 1
        kind = ("dw " if dw else "conv ") + kk + ss
        return kind, prod(dest) * prod(filt[1:])
    if op in PRODUCTS and len(ops) >= 3:
        dest, _, w = (types.get(o) for o in ops[:3])
        if dest and w:
            inner = w[-1] if op == "rowwisequantizedfullyconnected" else w[0]
            return op, prod(dest) * inner
    return op, None


def ort_key(name):
    name = name[: -len("_kernel_time")] if name.endswith("_kernel_time") else name
    name = re.sub(r"_token_\d+$", "", name)
    # The NCHWc layout transformer (fp32) names a node by its output tensor.
    return name[: -len("_nchwc")] if name.endswith("_nchwc") else name


def peak(src, work):
    exe = os.path.join(work, os.path.basename(src)[:-2])
    cc = os.environ.get("CC", "cc")
    r = subprocess.run([cc, "-O2", "-march=native", src, "-o", exe], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return float(bm.run([exe]).stdout.split()[0])


def profile_model(name, a, bins, corpus, peak_gops):
    work = os.path.join(a.work, name)
    os.makedirs(work, exist_ok=True)
    src = os.path.join(corpus, "models", "torchvision", f"{name}.onnx")
    model = os.path.join(work, f"{name}.onnx")
    if not os.path.exists(model):
        bm.fill_model(src, model, 1)
    if not a.fp32:
        qdq = os.path.join(work, f"{name}.qdq.onnx")
        if not os.path.exists(qdq):
            bm.make_qdq(model, qdq)
        model = qdq
    tag = "fp32" if a.fp32 else "int8"
    gir, wts = os.path.join(work, f"{name}.{tag}.gir"), os.path.join(work, f"{name}.{tag}.safetensors")
    bm.run([bins["glow-import"], model, "-o", gir, "--weights", wts])
    opt = os.path.join(work, f"{name}.{tag}.opt.gir")
    bm.run([bins["glow-opt"], "-O", gir, "-o", opt])
    cdir = os.path.join(work, f"prof{tag}")
    threads = [f"--threads={a.threads}"] if a.threads > 1 else []
    bm.run([bins["glow-opt"], "-O", gir, "--emit=c", "--trace-hook", "-o", cdir, "--weights", wts]
           + threads)
    cc = os.environ.get("CC", "cc")
    flags = ["-O3", "-march=native"]
    obj = os.path.join(work, f"prof{tag}.o")
    bm.run([cc] + flags + ["-c", os.path.join(cdir, "main_graph.c"), "-o", obj])
    exe = os.path.join(work, f"profserver{tag}")
    bm.run([cc] + flags + ["-I", cdir, "-DB=main_graph", "-DIN=input", "-DOUT=logits", "-DGLOW_PROFILE",
                           os.path.join(HERE, "server.c"), obj, "-o", exe, "-lm"]
           + (["-lpthread"] if threads else []))
    insts, types = read_program(opt)

    x = bm.np.random.default_rng(0).random((1, 3, 224, 224), dtype=bm.np.float32)
    inp_bin = os.path.join(work, "input.bin")
    x.tofile(inp_bin)
    b = bm.Bundle(exe, os.path.join(cdir, "main_graph.weights.bin"), inp_bin)
    so = bm.ort.SessionOptions()
    so.intra_op_num_threads = a.threads
    so.inter_op_num_threads = 1
    if a.threads > 1:
        # As in bench_models: a spinning ORT pool thread would take the bundle's core.
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.execution_mode = bm.ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = bm.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.enable_profiling = True
    so.profile_file_prefix = os.path.join(work, "ortprof")
    sess = bm.ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    iname = sess.get_inputs()[0].name
    warm = 3
    for _ in range(warm):
        sess.run(None, {iname: x})
        b.run()
    ours = collections.defaultdict(list)
    totals = {"ours": [], "ort": []}
    prof = os.path.join(work, "prof.txt")
    for i in range(a.rounds):
        for k in (["ort", "ours"] if i % 2 == 0 else ["ours", "ort"]):
            if k == "ort":
                sess.run(None, {iname: x})
            else:
                wall, _ = b.run()
                totals["ours"].append(wall)
                b.ask(f"p {prof}")
                for line in open(prof):
                    pos, ns = line.split()
                    ours[int(pos)].append(float(ns))
    b.close()
    events = json.load(open(sess.end_profiling()))
    ort_t = collections.defaultdict(list)
    ort_op = {}
    runs = [e for e in events if e.get("cat") == "Session" and e["name"] == "model_run"]
    totals["ort"] = [e["dur"] / 1e3 for e in runs[warm:]]
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            k = ort_key(e["name"])
            ort_t[k].append(e["dur"] * 1e3)
            ort_op[k] = e["args"].get("op_name", "?")
    ort_med = {k: min(v[warm:] if len(v) > warm else v) for k, v in ort_t.items()}
    os.remove(prof)
    return insts, types, ours, ort_med, ort_op, totals, peak_gops


def report(name, res, a):
    insts, types, ours, ort_med, ort_op, totals, peak_gops = res
    unit = "GOP/s"
    print(f"\n## {name} ({'fp32' if a.fp32 else 'int8'}), {a.rounds} rounds, fastest run per layer, 1 thread\n")
    print(f"whole run (wall, fastest): ours {min(totals['ours']):.2f} ms, onnxruntime "
          f"{min(totals['ort']):.2f} ms (its profiler's own time included); peak {peak_gops or 0:.1f} {unit}\n")
    print(f"| pos | layer | kind | ours ms | ORT ms | ratio | ours {unit} | ours % peak | ORT % peak |")
    print("|---|---|---|---|---|---|---|---|---|")
    by_kind = collections.defaultdict(lambda: [0.0, 0.0, 0])
    gaps, matched = [], set()
    for pos in sorted(ours):
        if pos not in insts:
            continue
        nm, op, ops, rest = insts[pos]
        t = min(ours[pos]) / 1e6
        kind, macs = layer_info(op, ops, rest, types)
        # A node ORT names by its output (fp32 NCHWc): its ONNX output `NAME_output_0` (a Conv
        # with a fused Add keeps its own output's name), or the tensor ours writes or reads.
        key = next((x for x in [nm, nm + "_output_0"] + ops if x in ort_med and x not in matched), nm)
        o = ort_med.get(key)
        if o is None:
            by_kind["(unmatched) " + op][0] += t
            continue
        matched.add(key)
        o /= 1e6
        g = 2 * macs / (t * 1e6) if macs else None
        go = 2 * macs / (o * 1e6) if macs else None
        pct = (lambda v: f"{100 * v / peak_gops:.0f}%" if v and peak_gops else "-")
        short = nm if len(nm) <= 48 else "…" + nm[-47:]
        print(f"| {pos} | {short} | {kind} | {t:.3f} | {o:.3f} | {t / o:.2f} | "
              f"{f'{g:.1f}' if g else '-'} | {pct(g)} | {pct(go)} |")
        by_kind[kind][0] += t
        by_kind[kind][1] += o
        by_kind[kind][2] += 1
        gaps.append((t - o, pos, short, kind, t, o))
    for k, v in ort_med.items():
        if k not in matched:
            by_kind["(unmatched) ORT " + ort_op.get(k, "?")][1] += v / 1e6
    print("\n| kind | layers | ours ms | ORT ms | ratio | ours - ORT ms |\n|---|---|---|---|---|---|")
    for k, (t, o, n) in sorted(by_kind.items(), key=lambda kv: -(kv[1][0] - kv[1][1])):
        r = f"{t / o:.2f}" if o else "-"
        print(f"| {k} | {n} | {t:.3f} | {o:.3f} | {r} | {t - o:+.3f} |")
    st = sum(v[0] for v in by_kind.values())
    so = sum(v[1] for v in by_kind.values())
    print(f"| total | | {st:.3f} | {so:.3f} | {st / so:.2f} | {st - so:+.3f} |")
    print(f"\nlargest gaps (ours - ORT):\n\n| pos | layer | kind | ours ms | ORT ms | gap ms |\n|---|---|---|---|---|---|")
    for gap, pos, short, kind, t, o in sorted(gaps, reverse=True)[: a.top]:
        print(f"| {pos} | {short} | {kind} | {t:.3f} | {o:.3f} | {gap:+.3f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,mobilenet_v2")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--fp32", action="store_true")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "glow-bench-profile"))
    a = ap.parse_args()
    if bm.ort is None or bm.np is None:
        print("skipped: the profile needs numpy, onnx and onnxruntime (python3 -m venv v && "
              "v/bin/pip install numpy onnx onnxruntime sympy)")
        return
    corpus = os.environ.get("GLOW_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
    if not os.path.isdir(os.path.join(corpus, "models", "torchvision")):
        print(f"skipped: no models under {corpus}/models/torchvision (set GLOW_CORPUS)")
        return
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    bm.run(["cargo", "build", "--release", "-q", "--bin", "glow-import", "--bin", "glow-opt"], cwd=ROOT)
    bins = {b: os.path.join(target, "release", b) for b in ["glow-import", "glow-opt"]}
    os.makedirs(a.work, exist_ok=True)
    pk = peak(os.path.join(HERE, "fma-peak.c" if a.fp32 else "int8-peak.c"), a.work)
    for m in a.models.split(","):
        report(m, profile_model(m, a, bins, corpus, pk), a)


if __name__ == "__main__":
    main()
