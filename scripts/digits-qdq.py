#!/usr/bin/env python3
"""The imported-QDQ accuracy of the trained digits CNN (docs/import.md, docs/quantization.md).

Makes the static QDQ model of e2e/digits_cnn/model.onnx with onnxruntime's quantize_static
(per-channel QInt8 weights, QUInt8 activations, calibrated on the first 200 training images, one
at a time), imports it with glow-import (--batch 360), runs it on the 360 test images on both
engines, and prints the accuracy of onnxruntime (fused and unfused) and of ours, and how many
logits of ours differ from unfused onnxruntime's.

    GLOW_CORPUS=/work/shared/corpus /work/venv/bin/python scripts/digits-qdq.py [--bin target/release]

Needs numpy, onnx and onnxruntime; says so and exits 0 without them.
"""
import argparse, os, subprocess, sys, tempfile

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
except ImportError:
    print("skipped: needs numpy, onnx and onnxruntime (python3 -m venv v && "
          "v/bin/pip install numpy onnx onnxruntime)")
    sys.exit(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="target/release", help="folder of glow-import and glow-run")
    ap.add_argument("--work", default=None, help="working folder (default: a temporary one)")
    a = ap.parse_args()
    corpus = os.environ.get("GLOW_CORPUS", "../shared/corpus")
    d = os.path.join(corpus, "e2e", "digits_cnn")
    if not os.path.exists(os.path.join(d, "model.onnx")):
        print(f"skipped: no {d}/model.onnx (set GLOW_CORPUS)")
        return
    work = a.work or tempfile.mkdtemp(prefix="digits-qdq.")
    os.makedirs(work, exist_ok=True)
    xtr = np.load(os.path.join(d, "data", "x_train.npy"))
    xte = np.load(os.path.join(d, "data", "x_test.npy"))
    yte = np.load(os.path.join(d, "data", "y_test.npy"))
    name = onnx.load(os.path.join(d, "model.onnx")).graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{name: xtr[i:i + 1]} for i in range(200)])

        def get_next(self):
            return next(self.it, None)

    pre, qdq = os.path.join(work, "pre.onnx"), os.path.join(work, "digits.qdq.onnx")
    quant_pre_process(os.path.join(d, "model.onnx"), pre)
    quantize_static(pre, qdq, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    logits = {}
    for lvl, tag in [(ort.GraphOptimizationLevel.ORT_ENABLE_ALL, "onnxruntime fused"),
                     (ort.GraphOptimizationLevel.ORT_DISABLE_ALL, "onnxruntime unfused")]:
        so.graph_optimization_level = lvl
        s = ort.InferenceSession(qdq, so, providers=["CPUExecutionProvider"])
        logits[tag] = s.run(None, {name: xte})[0]
    gir = os.path.join(work, "digits.qdq.gir")
    subprocess.run([os.path.join(a.bin, "glow-import"), qdq, "--batch", "360", "-o", gir], check=True)
    inp = os.path.join(work, "x_test.npy")
    np.save(inp, xte)
    for engine in ["interp", "c"]:
        out = os.path.join(work, f"out-{engine}")
        subprocess.run([os.path.join(a.bin, "glow-run"), gir, "-O", f"--engine={engine}",
                        "--input", f"{name}={inp}", "--output-dir", out], check=True,
                       stdout=subprocess.DEVNULL)
        files = [f for f in os.listdir(out) if f.endswith(".npy")]
        logits[f"glow-rs ({engine})"] = np.load(os.path.join(out, files[0]))
    print("| run | correct of 360 | accuracy |")
    print("|---|---|---|")
    for tag, l in logits.items():
        ok = int((l.argmax(1) == yte).sum())
        print(f"| {tag} | {ok} | {100 * ok / len(yte):.2f}% |")
    ours, unf = logits["glow-rs (c)"], logits["onnxruntime unfused"]
    same_engines = np.array_equal(ours.view(np.uint32), logits["glow-rs (interp)"].view(np.uint32))
    print(f"logits differing from unfused onnxruntime's: {int((ours != unf).sum())} of {ours.size}; "
          f"C engine bit-identical to the interpreter: {same_engines}")


if __name__ == "__main__":
    main()
