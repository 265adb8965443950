//! ONNX ops over indices, on ONNX-order (plain) buffers: ArgMax and ArgMin
//! (`argmax`/`argmin`, an index64 result), Hardmax (`argmax` then
//! `onehot`), GatherElements, GatherND, Scatter/ScatterElements, ScatterND,
//! OneHot (constant depth and values), and the losses
//! NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (`logsoftmax`,
//! `gatherelements` of the targets, `gather` of the class weights, an
//! `elementcmpeq` mask for `ignore_index`, sums). Index inputs are run-time
//! index tensors or int64 constants, which become inline index64 weights.

use super::{ir_dims, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Data;
use glow_ir::member as m;
use glow_ir::opcode::REDUCTIONS;
use glow_ir::{ElemKind, Opcode, Value};

pub(super) fn lower(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let n = Names {
        out: &out,
        base: &base,
    };
    let attrs = Attrs(&node.attribute);
    let v = match node.op_type.as_str() {
        "ArgMax" | "ArgMin" => arg(l, node, &attrs, &n)?,
        "Hardmax" => hardmax(l, node, &attrs, &n)?,
        "GatherElements" => gather_elements(l, node, &attrs, &n)?,
        "GatherND" => gather_nd(l, node, &attrs, &n)?,
        "Scatter" | "ScatterElements" => scatter_elements(l, node, &attrs, &n)?,
        "ScatterND" => scatter_nd(l, node, &attrs, &n)?,
        "OneHot" => one_hot(l, node, &attrs, &n)?,
        "NegativeLogLikelihoodLoss" => {
            let x = plain_float(l, node, 0, &out)?;
            nll(l, node, &attrs, &x, &n)?
        }
        _ => return softmax_cross_entropy(l, node, &attrs, &n),
    };
    Ok(vec![Val::Act(v)])
}

/// The node's output name and the base name of its instructions.
struct Names<'a> {
    out: &'a str,
    base: &'a str,
}

impl Names<'_> {
    fn part(&self, what: &str) -> String {
        format!("{}.{what}", self.out)
    }
}

fn act(dims: Vec<u64>, v: Value) -> Act {
    Act { v, dims, cl: false }
}

/// Input `i` in ONNX order.
fn plain(l: &mut Lowerer, node: &NodeProto, i: usize, user: &str) -> Result<Act> {
    let v = l.input(node, i)?;
    let a = l.act(&v);
    Ok(l.to_plain(&a, user))
}

/// Input `i` in ONNX order, which must be a float tensor.
fn plain_float(l: &mut Lowerer, node: &NodeProto, i: usize, user: &str) -> Result<Act> {
    let a = plain(l, node, i, user)?;
    if l.kind(&a) != ElemKind::Float {
        return Err(l.unsupported(format!(
            "input `{}` of element type {} (float only)",
            node.input[i],
            l.kind(&a)
        )));
    }
    if a.dims.is_empty() {
        return Err(l.unsupported(format!("a scalar input `{}`", node.input[i])));
    }
    Ok(a)
}

/// Index input `i`: an index tensor, or an integer constant as an inline
/// index64 weight.
fn indices(l: &mut Lowerer, node: &NodeProto, i: usize) -> Result<Act> {
    match l.input(node, i)? {
        v @ Val::Const { .. } => {
            if let Val::Const { name, t } = &v {
                if matches!(t.data, Data::F32(_)) {
                    return Err(l.unsupported(format!("float indices `{name}`")));
                }
            }
            Ok(l.act_kind(&v, ElemKind::Index64))
        }
        Val::Act(a) => {
            let e = l.kind(&a);
            if !matches!(e, ElemKind::Index32 | ElemKind::Index64) {
                return Err(l.unsupported(format!(
                    "indices `{}` of element type {e} (int32 or int64 only)",
                    node.input[i]
                )));
            }
            Ok(a)
        }
    }
}

fn arg(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, n: &Names) -> Result<Act> {
    let x = plain_float(l, node, 0, n.out)?;
    let axis = norm_axis(l, attrs.int("axis", 0), x.dims.len())?;
    let keep = attrs.int("keepdims", 1) != 0;
    let last = attrs.int("select_last_index", 0) != 0;
    let mut dims = x.dims.clone();
    if keep {
        dims[axis] = 1;
    } else {
        dims.remove(axis);
    }
    let dest = l.alloc_kind(n.out, &dims, ElemKind::Index64);
    let op = if node.op_type == "ArgMax" {
        Opcode::ArgMax
    } else {
        Opcode::ArgMin
    };
    let members = [
        m::AXIS.to(axis as i64),
        m::KEEP_DIMS.to(keep),
        m::SELECT_LAST_INDEX.to(last),
    ];
    l.inst(n.base, op, &[dest, x.v], &members);
    Ok(act(dims, dest))
}

/// One-hot of the first maximum: pre-13 opsets over the 2-D coercion at
/// `axis`, later ones over `axis` alone, through an `[outer, at, inner]` view.
fn hardmax(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, n: &Names) -> Result<Act> {
    let x = plain_float(l, node, 0, n.out)?;
    let old = l.opset < 13;
    let axis = norm_axis(l, attrs.int("axis", if old { 1 } else { -1 }), x.dims.len())?;
    let d = &x.dims;
    let outer: u64 = d[..axis].iter().product();
    let (at, inner) = if old {
        (d[axis..].iter().product(), 1)
    } else {
        (d[axis], d[axis + 1..].iter().product())
    };
    let sv = l.view(&n.part("3d"), x.v, &[outer, at, inner]);
    let am = l.alloc_kind(&n.part("argmax"), &[outer, inner], ElemKind::Index64);
    let members = [m::AXIS.to(1), m::KEEP_DIMS.to(false)];
    l.inst(n.base, Opcode::ArgMax, &[am, sv], &members);
    let oh = l.alloc(&n.part("onehot"), &[outer, at, inner]);
    l.inst(n.base, Opcode::OneHot, &[oh, am], &[m::AXIS.to(1)]);
    let v = l.view(n.out, oh, d);
    Ok(act(x.dims.clone(), v))
}

/// `idx` has `data`'s rank and no larger dimension except on `axis`.
fn check_fits(l: &Lowerer, data: &[u64], idx: &[u64], axis: usize) -> Result<()> {
    let fits = data.len() == idx.len()
        && data
            .iter()
            .zip(idx)
            .enumerate()
            .all(|(k, (&d, &i))| k == axis || i <= d);
    if fits {
        Ok(())
    } else {
        Err(l.err(format!(
            "indices of shape {idx:?} do not fit data of shape {data:?} outside axis {axis}"
        )))
    }
}

fn gather_elements(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, n: &Names) -> Result<Act> {
    let data = plain(l, node, 0, n.out)?;
    let idx = indices(l, node, 1)?;
    let axis = norm_axis(l, attrs.int("axis", 0), data.dims.len().max(1))?;
    check_fits(l, &data.dims, &idx.dims, axis)?;
    let dest = l.alloc_kind(n.out, &idx.dims, l.kind(&data));
    let members = [m::AXIS.to(axis as i64)];
    l.inst(
        n.base,
        Opcode::GatherElements,
        &[dest, data.v, idx.v],
        &members,
    );
    Ok(act(idx.dims.clone(), dest))
}

fn gather_nd(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, n: &Names) -> Result<Act> {
    let data = plain(l, node, 0, n.out)?;
    let idx = indices(l, node, 1)?;
    let b = attrs.int("batch_dims", 0);
    let (d, i) = (&data.dims, &idx.dims);
    let k = i.last().copied().unwrap_or(0) as usize;
    let ok = (0..i.len().min(d.len()) as i64).contains(&b) && {
        let b = b as usize;
        k >= 1 && b + k <= d.len() && d[..b] == i[..b]
    };
    if !ok {
        return Err(l.err(format!(
            "indices of shape {i:?} with batch_dims {b} do not index data of shape {d:?}"
        )));
    }
    let b = b as usize;
    let mut dims = i[..i.len() - 1].to_vec();
    dims.extend(&d[b + k..]);
    let dest = l.alloc_kind(n.out, &dims, l.kind(&data));
    let members = [m::BATCH_DIMS.to(b as i64)];
    l.inst(n.base, Opcode::GatherND, &[dest, data.v, idx.v], &members);
    Ok(act(dims, dest))
}

/// The `reduction` attribute, one the scatter opcodes know.
fn reduction(l: &Lowerer, attrs: &Attrs, data: &Act) -> Result<String> {
    let r = attrs.string("reduction").unwrap_or_else(|| "none".into());
    if !REDUCTIONS.contains(&r.as_str()) {
        return Err(l.unsupported(format!("reduction `{r}`")));
    }
    let e = l.kind(data);
    if r != "none" && e != ElemKind::Float && !e.is_plain_int() {
        return Err(l.unsupported(format!("reduction `{r}` on element type {e}")));
    }
    Ok(r)
}

/// `Updates` must have `data`'s element type and the dims `want`.
fn check_updates(l: &Lowerer, data: &Act, upd: &Act, want: &[u64]) -> Result<()> {
    if l.kind(upd) != l.kind(data) {
        return Err(l.err("updates and data have different element types"));
    }
    if upd.dims != want {
        return Err(l.err(format!(
            "updates of shape {:?} where {want:?} is needed",
            upd.dims
        )));
    }
    Ok(())
}

fn scatter_elements(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, n: &Names) -> Result<Act> {
    let data = plain(l, node, 0, n.out)?;
    let idx = indices(l, node, 1)?;
    let upd = plain(l, node, 2, n.out)?;
    let axis = norm_axis(l, attrs.int("axis", 0), data.dims.len().max(1))?;
    check_fits(l, &data.dims, &idx.dims, axis)?;
    check_updates(l, &data, &upd, &idx.dims)?;
    let r = reduction(l, attrs, &data)?;
    let dest = l.alloc_kind(n.out, &data.dims, l.kind(&data));
    let members = [m::AXIS.to(axis as i64), m::REDUCTION.to(r)];
    l.inst(
        n.base,
        Opcode::ScatterElements,
        &[dest, data.v, idx.v, upd.v],
        &members,
    );
    Ok(act(data.dims.clone(), dest))
}

fn scatter_nd(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, n: &Names) -> Result<Act> {
    let data = plain(l, node, 0, n.out)?;
    let idx = indices(l, node, 1)?;
    let upd = plain(l, node, 2, n.out)?;
    let (d, i) = (&data.dims, &idx.dims);
    let k = i.last().copied().unwrap_or(0) as usize;
    if k == 0 || k > d.len() {
        return Err(l.err(format!(
            "indices of shape {i:?} do not index data of shape {d:?}"
        )));
    }
    let mut want = i[..i.len() - 1].to_vec();
    want.extend(&d[k..]);
    check_updates(l, &data, &upd, &want)?;
    let r = reduction(l, attrs, &data)?;
    let dest = l.alloc_kind(n.out, d, l.kind(&data));
    l.inst(
        n.base,
        Opcode::ScatterND,
        &[dest, data.v, idx.v, upd.v],
        &[m::REDUCTION.to(r)],
    );
    Ok(act(data.dims.clone(), dest))
}

/// OneHot with a constant depth and constant `[off, on]` values; the
/// output kind follows the values (float, or index64 for integers).
fn one_hot(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, n: &Names) -> Result<Act> {
    let idx = indices(l, node, 0)?;
    let depth = l.const_input(node, 1)?;
    let values = l.const_input(node, 2)?;
    let depth = match depth.to_f32().as_slice() {
        &[d] if d >= 1.0 && d <= u32::MAX as f32 => d as u64,
        _ => return Err(l.err("depth must be one positive number")),
    };
    let (off, on) = match values.to_f32().as_slice() {
        &[off, on] => (off as f64, on as f64),
        _ => return Err(l.err("values must be [off_value, on_value]")),
    };
    let elem = match values.data {
        Data::F32(_) => ElemKind::Float,
        Data::I64(_) => ElemKind::Index64,
    };
    let q = idx.dims.len();
    let axis = norm_axis(l, attrs.int("axis", -1), q + 1)?;
    let mut dims = idx.dims.clone();
    dims.insert(axis, depth);
    // A scalar index is `<1>` in the IR: one more leading dimension of 1.
    let (ir, ir_axis) = if q == 0 {
        (vec![1, depth], 1)
    } else {
        (dims.clone(), axis)
    };
    let dest = l.alloc_kind(&n.part("onehot"), &ir, elem);
    let members = [
        m::AXIS.to(ir_axis as i64),
        m::OFF_VALUE.to(off),
        m::ON_VALUE.to(on),
    ];
    l.inst(n.base, Opcode::OneHot, &[dest, idx.v], &members);
    let v = l.view(n.out, dest, &dims);
    Ok(act(dims, v))
}

/// The sum of every element of `v` (IR dims `dims`), as a `<1>` buffer.
fn sum_all(l: &mut Lowerer, n: &Names, v: Value, dims: &[u64], what: &str) -> Value {
    let total: u64 = dims.iter().product();
    let flat = l.view(&n.part(&format!("{what}.flat")), v, &[total]);
    let s = l.alloc(&n.part(what), &[1]);
    let members = [m::AXIS.to(0)];
    l.inst(n.base, Opcode::BatchedReduceAdd, &[s, flat], &members);
    s
}

/// `a op b` into a new float buffer of IR dims `dims`.
fn binary(l: &mut Lowerer, n: &Names, op: Opcode, a: Value, b: Value, dims: &[u64]) -> Value {
    let d = l.alloc(&n.part("loss"), dims);
    l.inst(n.base, op, &[d, a, b], &[]);
    d
}

/// NegativeLogLikelihoodLoss of the log-probabilities `x` (`[N, C, d...]`)
/// as ONNX's reference computes it: `-x[n, t, d...]` times the target's
/// weight (class weight, 0 for `ignore_index`), then the reduction (`mean`
/// divides by the sum of the weights, or by the count without any).
fn nll(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, x: &Act, n: &Names) -> Result<Act> {
    let xd = &x.dims;
    if xd.len() < 2 {
        return Err(l.err(format!(
            "input of shape {xd:?} (at least 2-D: [N, C, d...])"
        )));
    }
    let target = indices(l, node, 1)?;
    let mut want = vec![xd[0]];
    want.extend(&xd[2..]);
    if target.dims != want {
        return Err(l.err(format!(
            "target of shape {:?} where {want:?} is needed for input of shape {xd:?}",
            target.dims
        )));
    }
    let weight = match l.opt_input(node, 2)? {
        Some(_) => {
            let w = plain_float(l, node, 2, n.out)?;
            if w.dims != [xd[1]] {
                return Err(l.err(format!(
                    "weight of shape {:?} for {} classes",
                    w.dims, xd[1]
                )));
            }
            Some(w)
        }
        None => None,
    };
    let reduction = attrs.string("reduction").unwrap_or_else(|| "mean".into());
    if !["none", "sum", "mean"].contains(&reduction.as_str()) {
        return Err(l.unsupported(format!("reduction `{reduction}`")));
    }
    let td = ir_dims(&want);
    // -x at the target class: gatherelements on axis 1 of a [N, 1, d...] view.
    let mut t1 = want.clone();
    t1.insert(1, 1);
    let tv = l.view(&n.part("target"), target.v, &t1);
    let picked = l.alloc(&n.part("picked"), &t1);
    let members = [m::AXIS.to(1)];
    l.inst(n.base, Opcode::GatherElements, &[picked, x.v, tv], &members);
    let pv = l.view(&n.part("picked"), picked, &td);
    let neg = l.alloc(&n.part("neg"), &td);
    l.inst(n.base, Opcode::ElementNeg, &[neg, pv], &[]);
    // The weight of each target: its class weight, 0 where it is ignored.
    let mut w = weight.map(|w| {
        let gw = l.alloc(&n.part("weight"), &td);
        l.inst(n.base, Opcode::Gather, &[gw, w.v, target.v], &[]);
        gw
    });
    if attrs.has("ignore_index") {
        let ii = attrs.int("ignore_index", 0);
        // `splat` holds its value as a float.
        if ii as f64 as i64 != ii {
            return Err(l.unsupported(format!("ignore_index {ii} (not exact as a float)")));
        }
        let iv = l.alloc_kind(&n.part("ignore"), &td, ElemKind::Index64);
        let splat = [m::VALUE.to(ii as f64)];
        l.inst(n.base, Opcode::Splat, &[iv], &splat);
        let mask = l.alloc_kind(&n.part("ignored"), &td, ElemKind::Bool);
        l.inst(n.base, Opcode::ElementCmpEQ, &[mask, target.v, iv], &[]);
        let zero = l.splat_buffer(&n.part("zero"), &td, 0.0);
        let kept = match w {
            Some(gw) => gw,
            None => l.splat_buffer(&n.part("one"), &td, 1.0),
        };
        let sel = l.alloc(&n.part("weight"), &td);
        l.inst(n.base, Opcode::ElementSelect, &[sel, mask, zero, kept], &[]);
        w = Some(sel);
    }
    let loss = match w {
        Some(w) => binary(l, n, Opcode::ElementMul, w, neg, &td),
        None => neg,
    };
    let v = match (reduction.as_str(), w) {
        ("none", _) => return Ok(act(want, loss)),
        ("sum", _) => sum_all(l, n, loss, &td, "sum"),
        (_, Some(w)) => {
            let s = sum_all(l, n, loss, &td, "sum");
            let ws = sum_all(l, n, w, &td, "weights");
            binary(l, n, Opcode::ElementDiv, s, ws, &[1])
        }
        (_, None) => {
            let s = sum_all(l, n, loss, &td, "sum");
            let count = td.iter().product::<u64>() as f64;
            let c = l.splat_buffer(&n.part("count"), &[1], count);
            binary(l, n, Opcode::ElementDiv, s, c, &[1])
        }
    };
    Ok(act(vec![], v))
}

/// SoftmaxCrossEntropyLoss: `logsoftmax` over the classes (axis 1), then
/// the NegativeLogLikelihoodLoss of it; the log-probabilities are the
/// optional second output.
fn softmax_cross_entropy(
    l: &mut Lowerer,
    node: &NodeProto,
    attrs: &Attrs,
    n: &Names,
) -> Result<Vec<Val>> {
    let x = plain_float(l, node, 0, n.out)?;
    if x.dims.len() < 2 {
        return Err(l.err(format!("scores of shape {:?} (at least 2-D)", x.dims)));
    }
    let lp_name = match node.output.get(1) {
        Some(name) if !name.is_empty() => name.clone(),
        _ => n.part("log_prob"),
    };
    let lp = super::linalg::softmax_act(l, Opcode::LogSoftMax, &x, 1, false, &lp_name, n.base);
    let loss = nll(l, node, attrs, &lp, n)?;
    Ok(vec![Val::Act(loss), Val::Act(lp)])
}
