# Writes the models and inputs of test/import/nonmaxsuppression.txt (run with a
# Python that has onnx and numpy: python make.py) and prints ONNX's reference
# outputs, against which the CHECK lines were verified.
import os

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)

boxes = rng.uniform(0, 4, size=(2, 8, 4)).astype(np.float32)
scores = rng.uniform(0, 1, size=(2, 3, 8)).astype(np.float32)
feeds = {
    "boxes": boxes,
    "scores": scores,
    "max": np.array([2], dtype=np.int64),
    "iou": np.array([0.3], dtype=np.float32),
    "score": np.array([0.4], dtype=np.float32),
}


def save(name, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, name, inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 11)])
    m.ir_version = 8
    onnx.save(m, os.path.join(here, name + ".onnx"))
    return m


ins = [
    h.make_tensor_value_info("boxes", T.FLOAT, [2, 8, 4]),
    h.make_tensor_value_info("scores", T.FLOAT, [2, 3, 8]),
]
limits = [
    h.make_tensor_value_info("max", T.INT64, [1]),
    h.make_tensor_value_info("iou", T.FLOAT, [1]),
    h.make_tensor_value_info("score", T.FLOAT, [1]),
]
out = [h.make_tensor_value_info("selected", T.INT64, [None, 3])]
nms = h.make_node("NonMaxSuppression", ["boxes", "scores", "max", "iou", "score"], ["selected"], name="nms")
m = save("nms-runtime", [nms], ins + limits, out)
print("runtime", ReferenceEvaluator(m).run(None, feeds)[0].tolist())
consts = [
    h.make_tensor("max", T.INT64, [1], [4]),
    h.make_tensor("iou", T.FLOAT, [1], [0.5]),
    h.make_tensor("score", T.FLOAT, [1], [0.8]),
]
m = save("nms-const", [nms], ins, out, consts)
print("const", ReferenceEvaluator(m).run(None, {"boxes": boxes, "scores": scores})[0].tolist())
ident = h.make_node("Identity", ["selected"], ["y"], name="read")
save("nms-read", [nms, ident], ins, [h.make_tensor_value_info("y", T.INT64, [None, 3])], consts)
for k, v in feeds.items():
    np.save(os.path.join(here, f"nms.{k}.npy"), v)

# RoiAlign on an NCHW map, both modes (the max is ONNX's max of weighted corners).
x = rng.uniform(-1, 1, size=(2, 2, 5, 6)).astype(np.float32)
rois = np.array([[0, 0, 5, 4], [1.5, 0.5, 4, 3.5], [2, 2, 2.5, 2.2]], dtype=np.float32)
bi = np.array([0, 1, 1], dtype=np.int64)
for mode in ["avg", "max"]:
    node = h.make_node(
        "RoiAlign", ["x", "rois", "bi"], ["y"], name="roi", mode=mode, output_height=2,
        output_width=3, sampling_ratio=0, spatial_scale=1.0,
    )
    ins = [
        h.make_tensor_value_info("x", T.FLOAT, [2, 2, 5, 6]),
        h.make_tensor_value_info("rois", T.FLOAT, [3, 4]),
        h.make_tensor_value_info("bi", T.INT64, [3]),
    ]
    g = h.make_graph([node], "roi", ins, [h.make_tensor_value_info("y", T.FLOAT, [3, 2, 2, 3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 16)])
    m.ir_version = 8
    onnx.save(m, os.path.join(here, f"roialign-{mode}.onnx"))
    y = ReferenceEvaluator(m).run(None, {"x": x, "rois": rois, "bi": bi})[0]
    print("roialign", mode, np.array2string(y.ravel()[:8], precision=6, separator=", "))
np.save(os.path.join(here, "roi.x.npy"), x)
np.save(os.path.join(here, "roi.rois.npy"), rois)
np.save(os.path.join(here, "roi.bi.npy"), bi)
