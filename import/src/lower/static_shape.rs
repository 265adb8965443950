//! Ops whose shape operands (axes, a target shape, repeats, scales or
//! sizes, pads) are import-time constants, lowered onto activations: the
//! reductions, Expand and Tile, nearest Resize/Upsample by integer factors,
//! and constant-mode Pad. Constant inputs are folded, after the size checks
//! of `Lowerer::reserve_dims`.

use super::fold::{bcast_index, ints_of, konst, take};
use super::{dims_of, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::{strides, Tensor};
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type};

/// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd and the composed
/// ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp over
/// constant axes (attribute, or input 1 from opset 13/18): one
/// `batchedreduce*` per axis (last first) on the ONNX-order buffer, a view
/// for `keepdims`, Mean divided by the count; the composed ones apply
/// `elementabs`, `x * x` or `elementexp` before the sum and `elementsqrt`
/// or `elementlog` after, as their ONNX function bodies do.
pub(super) fn reduce(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let r = d.len();
    let axes = ints_of(l, node, &attrs, 1, "axes")?.unwrap_or_default();
    if axes.is_empty() && attrs.int("noop_with_empty_axes", 0) != 0 {
        return Ok(vec![x]);
    }
    let mut axes: Vec<usize> = if axes.is_empty() {
        (0..r).collect()
    } else {
        axes.iter()
            .map(|&a| norm_axis(l, a, r))
            .collect::<Result<_>>()?
    };
    axes.sort_unstable();
    axes.dedup();
    let keep = attrs.int("keepdims", 1) != 0;
    let kept: Vec<u64> = (0..r)
        .map(|i| if axes.contains(&i) { 1 } else { d[i] })
        .collect();
    let dims: Vec<u64> = if keep {
        kept.clone()
    } else {
        (0..r).filter(|i| !axes.contains(i)).map(|i| d[i]).collect()
    };
    let count: u64 = axes.iter().map(|&a| d[a]).product();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let op = match node.op_type.as_str() {
        "ReduceMax" => Opcode::BatchedReduceMax,
        "ReduceMin" => Opcode::BatchedReduceMin,
        "ReduceProd" => Opcode::BatchedReduceProd,
        _ => Opcode::BatchedReduceAdd,
    };
    if d.contains(&0) {
        let bool_in =
            node.input.first().and_then(|n| l.dtypes.get(n)) == Some(&crate::onnx::dtype::BOOL);
        // A run-time integer or bool input's identity is an integer too
        // (-inf would read as `true` for a bool).
        let int_in = match &x {
            Val::Act(a) => l.kind(a) == ElemKind::Bool || l.kind(a).is_plain_int(),
            Val::Const { t, .. } => matches!(t.data, crate::tensor::Data::I64(_)),
        };
        return Ok(vec![empty_reduce(
            &node.op_type,
            int_in,
            bool_in,
            &out,
            dims,
            count,
        )]);
    }
    let a = l.act(&x);
    let mut cur = l.to_plain(&a, &out).v;
    // The element-wise step before the sum (ONNX's function bodies).
    let pre = match node.op_type.as_str() {
        "ReduceL1" => Some(Opcode::ElementAbs),
        "ReduceL2" | "ReduceSumSquare" => Some(Opcode::ElementMul),
        "ReduceLogSumExp" => Some(Opcode::ElementExp),
        _ => None,
    };
    if let Some(p) = pre {
        let dest = l.alloc(&format!("{out}.pre"), &d);
        let operands: &[_] = if p == Opcode::ElementMul {
            &[dest, cur, cur]
        } else {
            &[dest, cur]
        };
        l.inst(&base, p, operands, &[]);
        cur = dest;
    }
    let mut cd = d.clone();
    for &ax in axes.iter().rev() {
        if cd.len() == 1 {
            // The last axis of a 1-D buffer: the result is `<1>`.
            let dest = l.alloc(&format!("{out}.sum"), &[1]);
            l.inst(&base, op, &[dest, cur], &[m::AXIS.to(0)]);
            cur = dest;
            break;
        }
        cd.remove(ax);
        let dest = l.alloc(&format!("{out}.sum"), &cd);
        l.inst(&base, op, &[dest, cur], &[m::AXIS.to(ax as i64)]);
        cur = dest;
    }
    // The element-wise step after the sum.
    let post = match node.op_type.as_str() {
        "ReduceL2" => Some(Opcode::ElementSqrt),
        "ReduceLogSum" | "ReduceLogSumExp" => Some(Opcode::ElementLog),
        _ => None,
    };
    if let Some(p) = post {
        let cur_dims =
            l.f.value_type(cur)
                .map(|t| t.dims.clone())
                .unwrap_or_default();
        let dest = l.alloc(&format!("{out}.post"), &cur_dims);
        l.inst(&base, p, &[dest, cur], &[]);
        cur = dest;
    }
    let v = l.view(&out, cur, &dims);
    let mut res = Val::Act(Act { v, dims, cl: false });
    if node.op_type == "ReduceMean" && count > 1 {
        let n = konst(
            &format!("{out}.count"),
            Tensor::f32(vec![], vec![count as f32]),
        );
        res = super::elementwise::apply(l, Opcode::ElementDiv, &res, &n, &out, &base)?;
    }
    Ok(vec![res])
}

/// A reduction of a tensor with no elements (a constant: an activation
/// always has some): each output element reduces nothing, so it is the
/// reduction's identity (ONNX's empty-set rule); an empty output stays empty.
fn empty_reduce(
    op: &str,
    int_in: bool,
    bool_in: bool,
    out: &str,
    dims: Vec<u64>,
    count: u64,
) -> Val {
    let n: u64 = dims.iter().product();
    debug_assert!(n == 0 || count == 0);
    let float = match op {
        "ReduceMax" => f32::NEG_INFINITY,
        "ReduceMin" => f32::INFINITY,
        "ReduceProd" => 1.0,
        "ReduceLogSum" | "ReduceLogSumExp" => f32::NEG_INFINITY,
        "ReduceMean" => f32::NAN,
        _ => 0.0,
    };
    let t = match int_in {
        true => {
            let v = match op {
                // The smallest and largest bool are false and true.
                "ReduceMax" if bool_in => 0,
                "ReduceMin" if bool_in => 1,
                "ReduceMax" => i64::MIN,
                "ReduceMin" => i64::MAX,
                "ReduceProd" => 1,
                _ => 0,
            };
            Tensor::i64(dims, vec![v; n as usize])
        }
        false => Tensor::f32(dims, vec![float; n as usize]),
    };
    konst(out, t)
}

/// Expand (constant shape) and Tile (constant repeats) on any value:
/// Expand is a broadcast (`x * 1`, exact), Tile one `inserttensor` with
/// `Count` per repeated axis. Both fold on constants.
pub(super) fn expand_tile(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let arg = l.const_input(node, 1)?.to_i64();
    if arg.iter().any(|&v| v < 0) {
        return Err(l.err(format!("negative values {arg:?}")));
    }
    let arg: Vec<u64> = arg.iter().map(|&v| v as u64).collect();
    if arg.contains(&0) {
        return Err(l.unsupported("zero-size tensors"));
    }
    if node.op_type == "Expand" {
        let dims = super::elementwise::broadcast_dims(l, &d, &arg)?;
        // The result, or the ones it is multiplied by, is a constant.
        l.reserve_dims(&out, &dims)?;
        match &x {
            // Constants broadcast at import time, keeping integers exact.
            Val::Const { t, .. } => {
                let mut src = vec![1u64; dims.len() - t.dims.len()];
                src.extend(&t.dims);
                let idx = bcast_index(&src, &dims);
                return Ok(vec![konst(&out, take(&t.reshaped(src), &idx, dims))]);
            }
            // Integer and bool tensors are tiled (no multiply by ones).
            Val::Act(a) if l.kind(a) != ElemKind::Float => {
                let kind = l.kind(a);
                let v = super::elementwise::broadcast(l, &x, &dims, &out, kind)?;
                return Ok(vec![Val::Act(Act { v, dims, cl: false })]);
            }
            Val::Act(_) => {}
        }
        let n: u64 = dims.iter().product();
        let ones = konst(
            &format!("{out}.ones"),
            Tensor::f32(dims, vec![1.0; n as usize]),
        );
        return Ok(vec![super::elementwise::apply(
            l,
            Opcode::ElementMul,
            &x,
            &ones,
            &out,
            &base,
        )?]);
    }
    if arg.len() != d.len() {
        return Err(l.err(format!("{} repeats for rank {}", arg.len(), d.len())));
    }
    let dims = d
        .iter()
        .zip(&arg)
        .map(|(a, b)| a.checked_mul(*b))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| l.err(format!("repeats {arg:?} of {d:?} overflow")))?;
    if let Val::Const { t, .. } = &x {
        l.reserve_dims(&out, &dims)?;
        // Output index i reads source index i mod d on every axis.
        let st = strides(&t.dims);
        let ost = strides(&dims);
        let n: u64 = dims.iter().product();
        let offs: Vec<usize> = (0..n)
            .map(|lin| {
                (0..dims.len())
                    .map(|k| ((lin / ost[k]) % dims[k] % d[k]) * st[k])
                    .sum::<u64>() as usize
            })
            .collect();
        return Ok(vec![konst(&out, take(t, &offs, dims))]);
    }
    let a = l.act(&x);
    let mut cur = l.to_plain(&a, &out).v;
    let mut cd = d.clone();
    for k in 0..d.len() {
        if arg[k] == 1 {
            continue;
        }
        cd[k] *= arg[k];
        let kind = l.kind(&a);
        let t = l.splat_buffer_kind(&format!("{out}.tile"), &cd, 0.0, kind);
        let members = [
            m::OFFSETS.to(vec![0; cd.len()]),
            m::COUNT.to(arg[k] as i64),
            m::AXIS.to(k as i64),
        ];
        l.inst(&base, Opcode::InsertTensor, &[t, cur], &members);
        cur = t;
    }
    Ok(vec![Val::Act(Act {
        v: cur,
        dims,
        cl: false,
    })])
}

/// Resize (mode `nearest`) and Upsample (`nearest`) by constant integer
/// scales (or sizes that are integer multiples): each scaled axis is one
/// `inserttensor` with `Count` into a view with a unit axis after it, so
/// every element is repeated. Only the coordinate modes for which the
/// source index is exactly `i / scale` are accepted.
pub(super) fn resize(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let r = d.len();
    let mode = attrs.string("mode").unwrap_or_else(|| "nearest".into());
    let upsample = node.op_type == "Upsample";
    if mode != "nearest" {
        if !upsample {
            return super::resize::resize_general(l, node);
        }
        return Err(l.unsupported(format!("{} mode `{mode}`", node.op_type)));
    }
    if !upsample {
        let ctm = attrs
            .string("coordinate_transformation_mode")
            .unwrap_or_else(|| "half_pixel".into());
        let nm = attrs
            .string("nearest_mode")
            .unwrap_or_else(|| "round_prefer_floor".into());
        let exact = match ctm.as_str() {
            "half_pixel" | "pytorch_half_pixel" => nm.starts_with("round_prefer"),
            "asymmetric" => nm == "floor",
            _ => false,
        };
        if !exact || attrs.has("axes") || attrs.int("antialias", 0) != 0 {
            return super::resize::resize_general(l, node);
        }
    }
    // Per-axis integer factors from scales, else sizes.
    let scales: Option<Vec<f32>> = if upsample {
        match attrs.floats("scales") {
            Some(s) => Some(s.to_vec()),
            None => Some(l.const_input(node, 1)?.to_f32()),
        }
    } else {
        match l.opt_input(node, 2)? {
            Some(_) => {
                let s = l.const_input(node, 2)?.to_f32();
                (!s.is_empty()).then_some(s)
            }
            None => None,
        }
    };
    let factors: Vec<u64> = match scales {
        Some(s) => {
            if s.len() != r {
                return Err(l.err(format!("{} scales for rank {r}", s.len())));
            }
            if !upsample && s.iter().any(|&f| f < 1.0 || f.fract() != 0.0) {
                return super::resize::resize_general(l, node);
            }
            s.iter()
                .map(|&f| {
                    (f >= 1.0 && f.fract() == 0.0)
                        .then_some(f as u64)
                        .ok_or_else(|| l.unsupported(format!("scale {f} (only integer upscaling)")))
                })
                .collect::<Result<_>>()?
        }
        None => {
            let sizes = l.const_input(node, 3)?.to_i64();
            if sizes.len() != r {
                return Err(l.err(format!("{} sizes for rank {r}", sizes.len())));
            }
            if !upsample
                && (attrs.has("keep_aspect_ratio_policy")
                    || sizes
                        .iter()
                        .zip(&d)
                        .any(|(&s, &n)| s <= 0 || !(s as u64).is_multiple_of(n)))
            {
                return super::resize::resize_general(l, node);
            }
            sizes
                .iter()
                .zip(&d)
                .map(|(&s, &n)| {
                    (s > 0 && (s as u64).is_multiple_of(n))
                        .then_some(s as u64 / n)
                        .ok_or_else(|| {
                            l.unsupported(format!("size {s} for {n} (only integer upscaling)"))
                        })
                })
                .collect::<Result<_>>()?
        }
    };
    // The result's size is checked before any buffer of it is made.
    let full = d
        .iter()
        .zip(&factors)
        .map(|(n, f)| n.checked_mul(*f))
        .collect::<Option<Vec<u64>>>()
        .ok_or_else(|| l.err(format!("upscaling {d:?} by {factors:?} overflows")))?;
    glow_ir::limits::check_tensor(&format!("tensor `{out}`"), &Type::float(&full))
        .map_err(|m| l.err(m))?;
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let a = l.act(&x);
    let mut cur = l.to_plain(&a, &out).v;
    let mut cd = d.clone();
    for k in 0..r {
        let s = factors[k];
        if s == 1 {
            continue;
        }
        let outer: u64 = cd[..=k].iter().product();
        let inner: u64 = cd[k + 1..].iter().product();
        let src = l.view(&format!("{out}.src"), cur, &[outer, 1, inner]);
        let dest = l.splat_buffer(&format!("{out}.up"), &[outer, s, inner], 0.0);
        let members = [
            m::OFFSETS.to(vec![0, 0, 0]),
            m::COUNT.to(s as i64),
            m::AXIS.to(1),
        ];
        l.inst(&base, Opcode::InsertTensor, &[dest, src], &members);
        cd[k] *= s;
        cur = l.view(&format!("{out}.up"), dest, &cd);
    }
    Ok(vec![Val::Act(Act {
        v: cur,
        dims: cd,
        cl: false,
    })])
}

/// Pad in `constant` mode with constant pads (attribute before opset 11,
/// input 1 after, with optional `axes`) and value: a `splat` of the value
/// and one `inserttensor` of the input at the leading pads.
pub(super) fn pad(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let r = d.len();
    let mode = attrs.string("mode").unwrap_or_else(|| "constant".into());
    if !matches!(mode.as_str(), "constant" | "edge" | "reflect" | "wrap") {
        return Err(l.unsupported(format!("Pad mode `{mode}`")));
    }
    if mode != "constant" && !matches!(x, Val::Act(_)) {
        return Err(l.unsupported(format!("Pad mode `{mode}` of a constant")));
    }
    let (pads, value) = if l.opset < 11 {
        let p = attrs.ints("pads").ok_or_else(|| l.err("no pads"))?.to_vec();
        (p, attrs.float("value", 0.0))
    } else {
        let p = l.const_input(node, 1)?.to_i64();
        let v = match l.opt_input(node, 2)? {
            Some(_) => l
                .const_input(node, 2)?
                .to_f32()
                .first()
                .copied()
                .unwrap_or(0.0),
            None => 0.0,
        };
        (p, v)
    };
    let axes: Vec<usize> = match l.opt_input(node, 3)? {
        Some(_) => l
            .const_input(node, 3)?
            .to_i64()
            .iter()
            .map(|&a| norm_axis(l, a, r))
            .collect::<Result<_>>()?,
        None => (0..r).collect(),
    };
    let k = axes.len();
    if pads.len() != 2 * k {
        return Err(l.err(format!("{} pads for {k} axes", pads.len())));
    }
    if pads.iter().any(|&p| p < 0) {
        return Err(l.unsupported(format!("negative pads {pads:?}")));
    }
    let mut begin = vec![0u64; r];
    let mut dims = d.clone();
    for (i, &ax) in axes.iter().enumerate() {
        begin[ax] = pads[i] as u64;
        dims[ax] = dims[ax]
            .checked_add(pads[i] as u64)
            .and_then(|v| v.checked_add(pads[i + k] as u64))
            .ok_or_else(|| l.err(format!("pads {pads:?} overflow")))?;
    }
    if let Val::Const { t, .. } = &x {
        l.reserve_dims(&out, &dims)?;
        let n: u64 = dims.iter().product();
        let src = t.to_f32();
        let (st, ost) = (strides(&d), strides(&dims));
        let v = (0..n)
            .map(|lin| {
                let mut off = 0u64;
                for a in 0..r {
                    let i = (lin / ost[a]) % dims[a];
                    if i < begin[a] || i >= begin[a] + d[a] {
                        return value;
                    }
                    off += (i - begin[a]) * st[a];
                }
                src[off as usize]
            })
            .collect();
        return Ok(vec![konst(&out, Tensor::f32(dims, v))]);
    }
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let a = l.act(&x);
    if mode != "constant" {
        // Each padded axis reads the input at the mode's index of every
        // output position (numpy's edge, reflect and wrap).
        let mut v = l.to_plain(&a, &out);
        for &ax in &axes {
            let n = d[ax] as i64;
            if n == 0 {
                return Err(l.unsupported(format!("Pad mode `{mode}` of an empty axis")));
            }
            let ids: Vec<u64> = (0..dims[ax] as i64)
                .map(|o| {
                    let i = o - begin[ax] as i64;
                    let j = match mode.as_str() {
                        "edge" => i.clamp(0, n - 1),
                        "wrap" => i.rem_euclid(n),
                        _ if n == 1 => 0,
                        _ => {
                            let period = 2 * (n - 1);
                            let j = i.rem_euclid(period);
                            if j >= n {
                                period - j
                            } else {
                                j
                            }
                        }
                    };
                    j as u64
                })
                .collect();
            v = super::fold::take_along(l, &v, ax, &ids, &out);
        }
        return Ok(vec![Val::Act(v)]);
    }
    let src = l.to_plain(&a, &out).v;
    let kind = l.kind(&a);
    let dest = l.splat_buffer_kind(&out, &dims, value as f64, kind);
    let off: Vec<i64> = begin.iter().map(|&b| b as i64).collect();
    l.inst(
        &base,
        Opcode::InsertTensor,
        &[dest, src],
        &[m::OFFSETS.to(off)],
    );
    Ok(vec![Val::Act(Act {
        v: dest,
        dims,
        cl: false,
    })])
}
