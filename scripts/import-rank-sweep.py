#!/usr/bin/env python3
"""Imports every official ONNX node-test model with each graph input
re-declared at ranks 0, 1, 2, 3 and 5, and reports any import that does not
end in success or a clean error (exit 0 or 1): a panic, an abort, a signal.

Usage: scripts/import-rank-sweep.py [GLOW_IMPORT]
Needs the onnx package (python3 -m venv v && v/bin/pip install onnx) and the
corpus ($GLOW_CORPUS, default ../shared/corpus). Exits 1 when something
crashed, printing one line per distinct crash with a model that shows it.
"""
import glob
import os
import subprocess
import sys
import tempfile

import onnx

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tool = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "target/release/glow-import")
corpus = os.environ.get("GLOW_CORPUS", os.path.join(root, "..", "shared", "corpus"))
models = sorted(glob.glob(os.path.join(corpus, "onnx", "official", "*", "model.onnx")))
if not models:
    sys.exit(f"no models under {corpus}/onnx/official")
shapes = [[], [3], [2, 3], [1, 1, 1], [2, 1, 3, 1, 2]]
work = tempfile.mkdtemp()
model_file, out_file = os.path.join(work, "m.onnx"), os.path.join(work, "o.gir")
crashes, runs = {}, 0
for path in models:
    m = onnx.load(path)
    for i in range(len(m.graph.input)):
        for dims in shapes:
            c = onnx.ModelProto()
            c.CopyFrom(m)
            t = c.graph.input[i].type.tensor_type
            t.shape.Clear()
            for d in dims:
                t.shape.dim.add().dim_value = d
            onnx.save(c, model_file)
            r = subprocess.run([tool, model_file, "-o", out_file, "--max-constant-bytes", "67108864"],
                               capture_output=True, text=True, timeout=120)
            runs += 1
            if r.returncode in (0, 1) and "panicked" not in r.stderr:
                continue
            lines = r.stderr.splitlines()
            key = next((l for l in lines if "panicked" in l), f"exit {r.returncode}")
            if key not in crashes:
                crashes[key] = f"{os.path.basename(os.path.dirname(path))} input {i} dims {dims}"
                print(f"{key}: {crashes[key]}", flush=True)
print(f"{runs} imports, {len(crashes)} distinct crashes")
sys.exit(1 if crashes else 0)
