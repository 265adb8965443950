//! NonMaxSuppression: one `nonmaxsuppression` in its compact form. The
//! number of selected boxes depends on the data, so the result has a fixed
//! capacity (`B * C * M` rows, `M` the constant limit or, at run time, the
//! box count) and the count goes to a weight `OUTPUT.count` beside it
//! (`Imported::row_counts`); the limits are the instruction's run-time
//! operands, constant or fed.

use super::{dims_of, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode};

/// The node's first output and the base name of its instruction (the
/// node's name, or that output when the node has none).
fn names(node: &NodeProto) -> (String, String) {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    (out, base)
}

pub(super) fn nms(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = super::Attrs(&node.attribute);
    let (out, base) = names(node);
    // The rows past the count are -1: only a graph output that no node
    // reads can hold them.
    if !l.graph_outputs.contains(&out) || l.consumers.get(&out).is_some_and(|c| !c.is_empty()) {
        return Err(l.unsupported(
            "NonMaxSuppression whose result another node reads (its row count is known only at run time)",
        ));
    }
    let (bx, sc) = (l.input(node, 0)?, l.input(node, 1)?);
    let (bd, sd) = (dims_of(&bx), dims_of(&sc));
    if bd.len() != 3 || bd[2] != 4 || sd.len() != 3 || sd[0] != bd[0] || sd[2] != bd[1] {
        return Err(l.err(format!(
            "boxes {bd:?} and scores {sd:?} are not [B, N, 4] and [B, C, N]"
        )));
    }
    let (b, c, n) = (bd[0], sd[1], bd[1]);
    let boxes = l.act(&bx);
    let boxes = l.to_plain(&boxes, &out);
    let scores = l.act(&sc);
    let scores = l.to_plain(&scores, &out);
    for a in [&boxes, &scores] {
        if l.kind(a) != ElemKind::Float {
            return Err(l.unsupported("NonMaxSuppression of non-float boxes or scores"));
        }
    }
    // Each limit: the input as it is (constant or run-time), or ONNX's
    // default when absent or empty (no selections; no score threshold).
    let given = |l: &Lowerer, i: usize| -> Result<Option<Val>> {
        Ok(l.opt_input(node, i)?
            .filter(|v| !matches!(v, Val::Const { t, .. } if t.is_empty())))
    };
    let mut per_class = n;
    let max = match given(l, 2)? {
        Some(Val::Const { t, .. }) => {
            per_class = t.to_i64()[0].clamp(0, n as i64) as u64;
            let one = Tensor::i64(vec![1], vec![t.to_i64()[0]]);
            l.const_weight_kind(&format!("{base}.max"), &one, ElemKind::Index64)
        }
        Some(v) => {
            let a = l.act(&v);
            if l.kind(&a) != ElemKind::Index64 || dims_of(&v).iter().product::<u64>() != 1 {
                return Err(l.unsupported("a max_output_boxes_per_class that is not one int64"));
            }
            a.v
        }
        None => {
            per_class = 0;
            let zero = Tensor::i64(vec![1], vec![0]);
            l.const_weight_kind(&format!("{base}.max"), &zero, ElemKind::Index64)
        }
    };
    let threshold = |l: &mut Lowerer, i: usize, default: f32, name: &str| -> Result<_> {
        Ok(match given(l, i)? {
            Some(Val::Const { t, .. }) => {
                let one = Tensor::f32(vec![1], vec![t.to_f32()[0]]);
                l.const_weight(&format!("{base}.{name}"), &one)
            }
            Some(v) => {
                let a = l.act(&v);
                if l.kind(&a) != ElemKind::Float || dims_of(&v).iter().product::<u64>() != 1 {
                    return Err(l.unsupported(format!("a {name}_threshold that is not one float")));
                }
                a.v
            }
            None => l.const_weight(
                &format!("{base}.{name}"),
                &Tensor::f32(vec![1], vec![default]),
            ),
        })
    };
    let iou = threshold(l, 3, 0.0, "iou")?;
    let score = threshold(l, 4, f32::NEG_INFINITY, "score")?;
    let rows = (b * c * per_class).max(1);
    let idx = l.alloc_kind(&out, &[rows, 3], ElemKind::Index64);
    let count_name = l.fresh(&format!("{out}.count"));
    let count = l.placeholder(&count_name, &[1], ElemKind::Index64);
    let center = attrs.int("center_point_box", 0);
    l.inst(
        &base,
        Opcode::NonMaxSuppression,
        &[idx, count, boxes.v, scores.v, max, iou, score],
        &[m::CENTER_POINT_BOX.to(center), m::COMPACT.to(true)],
    );
    l.row_counts.push((out.clone(), count_name));
    Ok(vec![Val::Act(super::Act {
        v: idx,
        dims: vec![rows, 3],
        cl: false,
    })])
}

/// RoiAlign: one `roialign` on the channels-last map; `mode` avg is `AVG`,
/// max is `ONNX_MAX` (ONNX's max of weighted corners);
/// `coordinate_transformation_mode` half_pixel (the default from opset 16)
/// is `Aligned`.
pub(super) fn roi_align(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = super::Attrs(&node.attribute);
    let (out, base) = names(node);
    let (xv, rv, bv) = (l.input(node, 0)?, l.input(node, 1)?, l.input(node, 2)?);
    let (xd, rd, bd) = (dims_of(&xv), dims_of(&rv), dims_of(&bv));
    if xd.len() != 4 || rd.len() != 2 || rd[1] != 4 || bd != [rd[0]] {
        return Err(l.err(format!(
            "X {xd:?}, rois {rd:?} and batch_indices {bd:?} are not [N, C, H, W], [K, 4] and [K]"
        )));
    }
    let mode = match attrs
        .string("mode")
        .unwrap_or_else(|| "avg".into())
        .as_str()
    {
        "avg" => "AVG",
        "max" => "ONNX_MAX",
        other => return Err(l.unsupported(format!("RoiAlign mode `{other}`"))),
    };
    let default_ctm = if l.opset >= 16 {
        "half_pixel"
    } else {
        "output_half_pixel"
    };
    let aligned = match attrs
        .string("coordinate_transformation_mode")
        .unwrap_or_else(|| default_ctm.into())
        .as_str()
    {
        "half_pixel" => true,
        "output_half_pixel" => false,
        other => {
            return Err(l.unsupported(format!("RoiAlign coordinate_transformation_mode `{other}`")))
        }
    };
    let (oh, ow) = (attrs.int("output_height", 1), attrs.int("output_width", 1));
    let ratio = attrs.int("sampling_ratio", 0);
    if oh < 1 || ow < 1 || ratio < 0 {
        return Err(l.err(format!(
            "output_height {oh}, output_width {ow} and sampling_ratio {ratio} must be positive (the ratio may be 0)"
        )));
    }
    let x = l.act(&xv);
    let x = l.to_cl(&x, &out);
    let rois = l.act(&rv);
    let batch = l.act_kind(&bv, ElemKind::Index64);
    if l.kind(&x) != ElemKind::Float || l.kind(&rois) != ElemKind::Float {
        return Err(l.unsupported("RoiAlign of a non-float map or rois"));
    }
    if !matches!(l.kind(&batch), ElemKind::Index64 | ElemKind::Index32) {
        return Err(l.unsupported("RoiAlign batch_indices that are not int64 or int32"));
    }
    let (k, c) = (rd[0], xd[1]);
    let (oh, ow) = (oh as u64, ow as u64);
    let dest = l.alloc(&out, &[k, oh, ow, c]);
    let members = [
        m::MODE.to(mode),
        m::OUTPUT_HEIGHT.to(oh as i64),
        m::OUTPUT_WIDTH.to(ow as i64),
        m::SAMPLING_RATIO.to(ratio),
        m::SPATIAL_SCALE.to(attrs.float("spatial_scale", 1.0) as f64),
        m::ALIGNED.to(aligned),
    ];
    l.inst(
        &base,
        Opcode::RoiAlign,
        &[dest, x.v, rois.v, batch.v],
        &members,
    );
    Ok(vec![Val::Act(super::Act {
        v: dest,
        dims: vec![k, c, oh, ow],
        cl: true,
    })])
}
