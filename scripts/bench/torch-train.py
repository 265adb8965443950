#!/usr/bin/env python3
"""One training step of a corpus CNN, compiled by glow-rs, against the same step in PyTorch.

usage: scripts/bench/torch-train.py [--models resnet50,mobilenet_v2] [--batches 1,8]
                                    [--rounds N] [--threads T] [--work DIR] [--no-time]

For each model of ../shared/corpus/models/torchvision (or $GLOW_CORPUS/models/torchvision) at
each batch size:

- the step: glow-import (stripped weights filled, seed 1), `glow-opt --pass=differentiate`,
  then `glow-run -O --engine=c --keep-c --cflags="-O3 -march=native"` builds it once (and once more with
  `-O --pass=remat{budget=B}`, B a third of PyTorch's saved activations measured below); the
  built program then runs one step per call and reports the CPU time of that step (clock(),
  weights loaded before it);
- PyTorch: the torchvision model with every BatchNorm folded into the convolution before it
  (torch.nn.utils.fusion.fuse_conv_bn_eval, as the corpus graph is), a step of forward,
  cross-entropy, backward and SGD on a seeded input, timed with time.process_time();
- the two (three) alternate ROUNDS times and the medians are printed with the ratio glow/torch;
  T threads for both (torch.set_num_threads, glow-run --threads);
- PyTorch's saved activations: torch.autograd.graph.saved_tensors_hooks over one forward and
  loss, counting each storage once (by data pointer) and leaving out the parameters' storages.

Needs torch and torchvision (CPU); without them it says so and exits 0.
"""
import argparse, os, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# This folder's profile.py would shadow the standard library's `profile`,
# which torch imports (through cProfile).
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]
try:
    import numpy as np
    import torch
    import torchvision
    from torch.nn.utils.fusion import fuse_conv_bn_eval
except ImportError as e:
    print(f"skipped: {e.name} is not installed (scripts/bench/torch-train.py needs torch and torchvision)")
    sys.exit(0)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r


def fold_bn(module):
    """Folds each BatchNorm2d into the Conv2d declared right before it, recursively."""
    prev = None
    for name, child in list(module.named_children()):
        if isinstance(child, torch.nn.BatchNorm2d) and prev is not None:
            pname, pconv = prev
            setattr(module, pname, fuse_conv_bn_eval(pconv.eval(), child.eval()))
            setattr(module, name, torch.nn.Identity())
            prev = None
            continue
        fold_bn(child)
        prev = (name, child) if isinstance(child, torch.nn.Conv2d) else None
    return module


def torch_model(name):
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)(weights=None)
    return fold_bn(m.eval()).train()


def saved_bytes(model, x, y):
    """Bytes of the unique storages autograd saves for backward, parameters left out."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    seen = {}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in params:
            seen[s.data_ptr()] = s.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    model.zero_grad(set_to_none=True)
    return sum(seen.values())


class TorchStep:
    def __init__(self, model, x, y):
        self.model, self.x, self.y = model, x, y
        self.opt = torch.optim.SGD(model.parameters(), lr=0.01)

    def run(self):
        c0 = time.process_time()
        self.opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        return time.process_time() - c0


class GlowStep:
    """The built program of a step (glow-run --keep-c): one step per call, its CPU seconds."""

    def __init__(self, bins, step, wts, x, labels, threads, passes, work, tag):
        d = os.path.join(work, f"c-{tag}")
        os.makedirs(d, exist_ok=True)
        cmd = [bins["glow-run"], step, "-O", *passes, "--engine=c", "--weights", wts,
               "--input", f"input={x}", "--input", f"labels={labels}", "--keep-c", d,
               f"--threads={threads}", "--cflags=-O3 -march=native"]
        run(cmd)
        exe = [f for f in os.listdir(d) if f.endswith(".run")][0]
        self.cmd = [os.path.join(d, exe)] + [os.path.join(d, f) for f in
                                             ("weights.in", "mutable.in", "mutable.out")] + ["1"]

    def run(self):
        r = run(self.cmd)
        for line in r.stderr.splitlines():
            if line.startswith("glow-run-seconds-per-run"):
                return float(line.split()[1])
        sys.exit(f"no time from {self.cmd[0]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="resnet50,mobilenet_v2")
    ap.add_argument("--batches", default="1,8")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--work", default=None)
    ap.add_argument("--no-time", action="store_true", help="only PyTorch's saved activations")
    a = ap.parse_args()
    corpus = os.environ.get("GLOW_CORPUS", os.path.join(ROOT, "..", "shared", "corpus"))
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    torch.set_num_threads(a.threads)
    bins = {}
    if not a.no_time:
        run(["cargo", "build", "--release", "--manifest-path", os.path.join(ROOT, "Cargo.toml"),
             "--bin", "glow-import", "--bin", "glow-opt", "--bin", "glow-run"])
        bins = {b: os.path.join(target, "release", b) for b in ("glow-import", "glow-opt", "glow-run")}
    work = a.work or tempfile.mkdtemp(prefix="torch-train-")
    os.makedirs(work, exist_ok=True)
    print(f"{'model':<14}{'batch':>6}{'torch saved':>14}{'torch ms':>10}{'glow ms':>10}"
          f"{'ratio':>7}{'remat ms':>10}{'ratio':>7}  (CPU time per step, median of "
          f"{a.rounds}, {a.threads} thread{'s' if a.threads > 1 else ''})")
    for name in a.models.split(","):
        onnx = os.path.join(corpus, "models", "torchvision", f"{name}.onnx")
        for b in [int(s) for s in a.batches.split(",")]:
            model = torch_model(name)
            g = torch.Generator().manual_seed(1)
            x = torch.randn(b, 3, 224, 224, generator=g)
            y = torch.zeros(b, dtype=torch.int64)
            saved = saved_bytes(model, x, y)
            row = f"{name:<14}{b:>6}{saved:>14,}"
            if a.no_time:
                print(row)
                continue
            if not os.path.exists(onnx):
                print(row + f"  (no {onnx}: not timed)")
                continue
            tag = f"{name}-{b}"
            gir, wts = os.path.join(work, f"{tag}.gir"), os.path.join(work, f"{tag}.safetensors")
            step = os.path.join(work, f"{tag}.step.gir")
            run([bins["glow-import"], onnx, "--batch", str(b), "--fill-stripped", "1", "-o", gir,
                 "--weights", wts])
            run([bins["glow-opt"], gir, "--pass=differentiate", "-o", step])
            xn, ln = os.path.join(work, f"{tag}.x.npy"), os.path.join(work, f"{tag}.labels.npy")
            np.save(xn, x.numpy())
            np.save(ln, y.numpy())
            steps = {"glow": GlowStep(bins, step, wts, xn, ln, a.threads, [], work, tag)}
            try:
                steps["remat"] = GlowStep(bins, step, wts, xn, ln, a.threads,
                                          [f"--pass=remat{{budget={saved // 3}}}"], work, tag + "-remat")
            except SystemExit:
                pass  # the budget cannot be met: the row says so
            t = TorchStep(model, x, y)
            for _ in range(2):
                t.run()
            times = {k: [] for k in ["torch", *steps]}
            for _ in range(a.rounds):
                times["torch"].append(t.run())
                for k, s in steps.items():
                    times[k].append(s.run())
            med = {k: statistics.median(v) * 1e3 for k, v in times.items()}
            row += f"{med['torch']:>10.1f}{med['glow']:>10.1f}{med['glow'] / med['torch']:>7.2f}"
            if "remat" in med:
                row += f"{med['remat']:>10.1f}{med['remat'] / med['torch']:>7.2f}"
            else:
                row += f"{'not met':>10}"
            print(row, flush=True)
    print("summary: ratio = glow-rs C engine / PyTorch CPU time of one training step; remat at a "
          "third of PyTorch's saved activations")


if __name__ == "__main__":
    main()
