"""Regenerates the official ONNX node suite the way ../shared/corpus has it:
every node test of the installed onnx package (onnx.backend.test.case.node)
written as OUT/onnx/official/test_x/{model.onnx,test_data_set_N/*.pb}, and
OUT/onnx/official-in-scope.json listing the tests in scope: every graph
input and output a float32/int8/uint8/int32/int64/bool tensor, no control
flow (If/Loop/Scan), no sequence/optional/string types, no training ops, no optional/text/image-file ops
(Optional*, TfIdfVectorizer, ImageDecoder) and no operator outside the
default domain.

Usage: python3 scripts/regenerate_official_suite.py OUT
(then GLOW_CORPUS=OUT scripts/official-suite.sh). Needs `pip install onnx numpy`.
"""

import json
import os
import shutil
import sys

import onnx
from onnx import TensorProto, numpy_helper
from onnx.backend.test.case import node as node_cases

IN_SCOPE_TYPES = {
    TensorProto.FLOAT,
    TensorProto.INT8,
    TensorProto.UINT8,
    TensorProto.INT32,
    TensorProto.INT64,
    TensorProto.BOOL,
}
CONTROL_FLOW = {"If", "Loop", "Scan"}
# ai.onnx.preview.training's ops, also reachable through the default domain name.
TRAINING = {"Gradient", "Momentum", "Adagrad", "Adam"}
# Optionals, and the text and image-file ops (strings and encoded bytes).
OUT_OF_SCOPE = {"OptionalGetElement", "OptionalHasElement", "ImageDecoder", "TfIdfVectorizer"}


def graphs(g):
    """g and every subgraph of its nodes' attributes."""
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from graphs(a.g)
            for sub in a.graphs:
                yield from graphs(sub)


def in_scope(model):
    g = model.graph
    for vi in list(g.input) + list(g.output):
        t = vi.type
        if not t.HasField("tensor_type") or t.tensor_type.elem_type not in IN_SCOPE_TYPES:
            return False
    for sub in graphs(g):
        for n in sub.node:
            if n.domain not in ("", "ai.onnx"):
                return False
            if n.op_type in CONTROL_FLOW | TRAINING | OUT_OF_SCOPE:
                return False
            if sub is not g:
                return False
    return True


def write_tensor(path, value, name):
    with open(path, "wb") as f:
        if isinstance(value, TensorProto):
            f.write(value.SerializeToString())
        else:
            f.write(numpy_helper.from_array(value, name).SerializeToString())


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = os.path.join(sys.argv[1], "onnx")
    root = os.path.join(out, "official")
    if os.path.exists(root):
        shutil.rmtree(root)
    os.makedirs(root)
    scope = []
    written = 0
    for case in node_cases.collect_testcases(None):
        model = case.model
        d = os.path.join(root, case.name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(model.SerializeToString())
        tensors_only = all(
            vi.type.HasField("tensor_type")
            for vi in list(model.graph.input) + list(model.graph.output)
        )
        for i, (inputs, outputs) in enumerate(case.data_sets):
            ds = os.path.join(d, "test_data_set_%d" % i)
            os.makedirs(ds, exist_ok=True)
            if not tensors_only:
                continue
            for j, v in enumerate(inputs):
                write_tensor(os.path.join(ds, "input_%d.pb" % j), v, model.graph.input[j].name)
            for j, v in enumerate(outputs):
                write_tensor(os.path.join(ds, "output_%d.pb" % j), v, model.graph.output[j].name)
        written += 1
        if tensors_only and in_scope(model):
            scope.append(case.name)
    scope.sort()
    with open(os.path.join(out, "official-in-scope.json"), "w") as f:
        json.dump(scope, f)
    print("onnx %s: %d node tests written to %s, %d in scope" % (onnx.__version__, written, root, len(scope)))


if __name__ == "__main__":
    main()
