//! Element-wise ops: activations (Relu, Sigmoid, Tanh, Clip, HardSigmoid,
//! HardSwish, Elu, Selu, Celu, Softplus, Mish, Gelu, Dropout as identity),
//! the libm math family (Sqrt ... Tan) and the broadcasting binary ops (Add,
//! Sub, Mul, Div, Sum). The IR's element-wise instructions need equal shapes,
//! so a broadcast operand is splatted (one value), fed to `batchedadd` (a
//! bias over the trailing dims), or tiled with `inserttensor`, as Glow's
//! Broadcast/Tile lowering does.

use super::{cl_perm, dims_of, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::{strides, Data, Tensor};
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Value};

/// The activations and the math family: one unary instruction each (Mish
/// three), HardSigmoid and HardSwish on the arithmetic ones.
pub(super) fn unary(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let x = l.input(node, 0)?;
    if node.op_type == "Dropout" {
        // Training mode with a non-zero ratio draws a random mask, which a
        // deterministic compiler does not: refused, not run as identity.
        if l.opt_input(node, 2)?.is_some()
            && l.const_input(node, 2)?.to_i64().iter().any(|&v| v != 0)
        {
            let ratio = match l.opt_input(node, 1)? {
                Some(_) => l
                    .const_input(node, 1)?
                    .to_f32()
                    .first()
                    .copied()
                    .unwrap_or(0.5),
                None => 0.5,
            };
            if ratio != 0.0 {
                return Err(l.unsupported("Dropout in training mode (a random mask)"));
            }
        }
        // Inference: identity; the mask, when asked for, is all true.
        let mut outs = vec![x.clone()];
        if node.output.get(1).is_some_and(|n| !n.is_empty()) {
            let dims = dims_of(&x);
            let n = dims.iter().product::<u64>() as usize;
            outs.push(Val::Const {
                name: node.output[1].clone(),
                t: Tensor::i64(dims, vec![1; n]).into(),
            });
        }
        return Ok(outs);
    }
    let out_name = node.output.first().cloned().unwrap_or_default();
    if let Val::Act(a) = &x {
        if l.kind(a) == ElemKind::Bool {
            return Err(l.unsupported("Clip of a bool tensor"));
        }
    }
    let int_x = matches!(&x, Val::Act(a) if l.kind(a).is_plain_int());
    if node.op_type == "Clip" && l.opset >= 11 && (int_x || runtime_bounds(l, node)?) {
        // Bounds known only at run time, or an integer tensor (`clip` is
        // float): max with the lower, min with the upper, in x's kind.
        let base = l_node_name(node, &out_name);
        let mut acc = x;
        for (i, op) in [(1, Opcode::ElementMax), (2, Opcode::ElementMin)] {
            if let Some(b) = l.opt_input(node, i)? {
                acc = apply(l, op, &acc, &b, &out_name, &base)?;
            }
        }
        return Ok(vec![acc]);
    }
    let a = l.act(&x);
    let phys = a.phys();
    let attrs = Attrs(&node.attribute);
    let dest = l.alloc(&out_name, &phys);
    let base = l_node_name(node, &out_name);
    match node.op_type.as_str() {
        "Relu" => drop(l.inst(&base, Opcode::Relu, &[dest, a.v], &[])),
        "Sqrt" | "Exp" | "Log" | "Erf" | "Sin" | "Cos" | "Floor" | "Ceil" | "Round" => {
            let op = match node.op_type.as_str() {
                "Sqrt" => Opcode::ElementSqrt,
                "Exp" => Opcode::ElementExp,
                "Log" => Opcode::ElementLog,
                "Erf" => Opcode::ElementErf,
                "Sin" => Opcode::ElementSin,
                "Cos" => Opcode::ElementCos,
                "Floor" => Opcode::ElementFloor,
                "Ceil" => Opcode::ElementCeil,
                _ => Opcode::ElementRound,
            };
            l.inst(&base, op, &[dest, a.v], &[]);
        }
        "Acos" | "Asin" | "Atan" | "Acosh" | "Asinh" | "Atanh" | "Cosh" | "Sinh" | "Tan"
        | "Softplus" => {
            let op = match node.op_type.as_str() {
                "Acos" => Opcode::ElementAcos,
                "Asin" => Opcode::ElementAsin,
                "Atan" => Opcode::ElementAtan,
                "Acosh" => Opcode::ElementAcosh,
                "Asinh" => Opcode::ElementAsinh,
                "Atanh" => Opcode::ElementAtanh,
                "Cosh" => Opcode::ElementCosh,
                "Sinh" => Opcode::ElementSinh,
                "Tan" => Opcode::ElementTan,
                _ => Opcode::SoftPlus,
            };
            l.inst(&base, op, &[dest, a.v], &[]);
        }
        "Elu" | "Celu" => {
            let op = if node.op_type == "Elu" {
                Opcode::Elu
            } else {
                Opcode::Celu
            };
            let alpha = attrs.float("alpha", 1.0) as f64;
            l.inst(&base, op, &[dest, a.v], &[m::ALPHA.to(alpha)]);
        }
        "Selu" => {
            let members = [
                m::ALPHA.to(attrs.float("alpha", 1.673_263_2) as f64),
                m::GAMMA.to(attrs.float("gamma", 1.050_701) as f64),
            ];
            l.inst(&base, Opcode::Selu, &[dest, a.v], &members);
        }
        "Gelu" => {
            let approx = match attrs.string("approximate").as_deref() {
                None | Some("none") => false,
                Some("tanh") => true,
                Some(other) => {
                    return Err(l.unsupported(format!("Gelu approximate `{other}`")));
                }
            };
            let members = [m::APPROXIMATE.to(approx)];
            l.inst(&base, Opcode::Gelu, &[dest, a.v], &members);
        }
        "Mish" => {
            // x * tanh(softplus(x)), as ONNX defines it.
            let t = l.alloc(&format!("{out_name}.softplus"), &phys);
            l.inst(&base, Opcode::SoftPlus, &[t, a.v], &[]);
            l.inst(&base, Opcode::Tanh, &[t, t], &[]);
            l.inst(&base, Opcode::ElementMul, &[dest, a.v, t], &[]);
        }
        "Sigmoid" => drop(l.inst(&base, Opcode::Sigmoid, &[dest, a.v], &[])),
        "Tanh" => drop(l.inst(&base, Opcode::Tanh, &[dest, a.v], &[])),
        "LeakyRelu" => {
            let alpha = attrs.float("alpha", 0.01) as f64;
            l.inst(
                &base,
                Opcode::LeakyRelu,
                &[dest, a.v],
                &[m::ALPHA.to(alpha)],
            );
        }
        "Clip" => {
            let (lo, hi) = clip_bounds(l, node, &attrs)?;
            clip(l, &base, dest, a.v, lo, hi);
        }
        "HardSigmoid" => {
            let alpha = attrs.float("alpha", 0.2) as f64;
            let beta = attrs.float("beta", 0.5) as f64;
            hard_sigmoid(l, &base, dest, a.v, &phys, alpha, beta);
        }
        _ => {
            // HardSwish(x) = x * HardSigmoid(x; 1/6, 1/2).
            let t = l.alloc(&format!("{out_name}.hsig"), &phys);
            hard_sigmoid(l, &base, t, a.v, &phys, 1.0 / 6.0, 0.5);
            l.inst(&base, Opcode::ElementMul, &[dest, a.v, t], &[]);
        }
    }
    Ok(vec![Val::Act(Act {
        v: dest,
        dims: a.dims,
        cl: a.cl,
    })])
}

/// The node's name, or its first output's when unnamed.
fn l_node_name(node: &NodeProto, out: &str) -> String {
    if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    }
}

fn clip(l: &mut Lowerer, base: &str, dest: Value, src: Value, lo: f64, hi: f64) {
    let members = [m::MIN.to(lo), m::MAX.to(hi)];
    l.inst(base, Opcode::Clip, &[dest, src], &members);
}

/// Whether a Clip bound is an activation rather than a constant.
fn runtime_bounds(l: &Lowerer, node: &NodeProto) -> Result<bool> {
    Ok(l.is_act(node, 1) || l.is_act(node, 2))
}

/// Clip bounds: attributes before opset 11, optional constant inputs after.
/// A missing bound is the largest finite float (the C backend needs no inf).
fn clip_bounds(l: &Lowerer, node: &NodeProto, attrs: &Attrs) -> Result<(f64, f64)> {
    let big = f32::MAX as f64;
    if l.opset < 11 {
        return Ok((
            attrs.float("min", f32::MIN) as f64,
            attrs.float("max", f32::MAX) as f64,
        ));
    }
    let bound = |i: usize, default: f64| -> Result<f64> {
        match l.opt_input(node, i)? {
            None => Ok(default),
            Some(_) => {
                let t = l.const_input(node, i)?;
                Ok(t.to_f32().first().map_or(default, |&v| v as f64))
            }
        }
    };
    Ok((bound(1, -big)?, bound(2, big)?))
}

/// `dest = clip(alpha * x + beta, 0, 1)`.
fn hard_sigmoid(
    l: &mut Lowerer,
    base: &str,
    dest: Value,
    x: Value,
    phys: &[u64],
    alpha: f64,
    beta: f64,
) {
    let a = l.splat_buffer(&format!("{base}.alpha"), phys, alpha);
    l.inst(base, Opcode::ElementMul, &[dest, x, a], &[]);
    let b = l.splat_buffer(&format!("{base}.beta"), phys, beta);
    l.inst(base, Opcode::ElementAdd, &[dest, dest, b], &[]);
    clip(l, base, dest, dest, 0.0, 1.0);
}

/// Add, Sub, Mul, Div (two inputs) and Sum (any number, added in order).
pub(super) fn binary(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let n = if node.op_type == "Sum" {
        node.input.len()
    } else {
        2
    };
    let mut acc = l.input(node, 0)?;
    let out_name = node.output.first().cloned().unwrap_or_default();
    let op = match node.op_type.as_str() {
        "Sub" => Opcode::ElementSub,
        "Mul" => Opcode::ElementMul,
        "Div" => Opcode::ElementDiv,
        "Pow" => Opcode::ElementPow,
        _ => Opcode::ElementAdd,
    };
    for i in 1..n {
        let rhs = l.input(node, i)?;
        acc = apply(l, op, &acc, &rhs, &out_name, &l_node_name(node, &out_name))?;
    }
    Ok(vec![acc])
}

/// One broadcasting binary op.
pub(super) fn apply(
    l: &mut Lowerer,
    op: Opcode,
    a: &Val,
    b: &Val,
    out: &str,
    base: &str,
) -> Result<Val> {
    let dims = broadcast_dims(l, &dims_of(a), &dims_of(b))?;
    if let (Val::Const { t: ta, .. }, Val::Const { t: tb, .. }) = (a, b) {
        l.reserve_dims(out, &dims)?;
        return Ok(Val::Const {
            name: out.to_string(),
            t: fold(l, op, ta, tb, &dims)?.into(),
        });
    }
    // Channels-last when an activation operand already is, at full rank.
    let cl = [a, b]
        .iter()
        .any(|v| matches!(v, Val::Act(x) if x.cl && x.dims.len() == dims.len()));
    let phys = if cl {
        super::cl_dims(&dims)
    } else {
        super::ir_dims(&dims)
    };
    // The element kind of the activation operands (constants follow it).
    let kinds: Vec<ElemKind> = [a, b]
        .iter()
        .filter_map(|v| match v {
            Val::Act(x) => Some(l.kind(x)),
            Val::Const { .. } => None,
        })
        .collect();
    let kind = kinds[0];
    if kinds.iter().any(|&k| k != kind) {
        return Err(l.unsupported(format!(
            "{} of {} and {} tensors",
            op.name(),
            kinds[0],
            kinds[1]
        )));
    }
    let dest = l.alloc_kind(out, &phys, kind);
    let lhs = operand(l, a, dims.len(), cl, out, kind)?;
    let rhs = operand(l, b, dims.len(), cl, out, kind)?;
    let (lp, rp) = (dims_at(l, lhs), dims_at(l, rhs));
    // A bias over the trailing dims: batchedadd on views, no tiling.
    if op == Opcode::ElementAdd && kind == ElemKind::Float {
        for (full, part, pdims) in [(lhs, rhs, &rp), (rhs, lhs, &lp)] {
            if dims_at(l, full) == phys {
                if let Some(k) = suffix_start(pdims, &phys) {
                    let rows: u64 = phys[..k].iter().product();
                    let mut bd = vec![rows];
                    bd.extend_from_slice(&phys[k..]);
                    let bv = l.view(&format!("{out}.rows"), full, &bd);
                    let dv = l.view(&format!("{out}.out"), dest, &bd);
                    let sv = l.view(&format!("{out}.slice"), part, &phys[k..]);
                    l.inst(base, Opcode::BatchedAdd, &[dv, bv, sv], &[]);
                    return Ok(Val::Act(Act { v: dest, dims, cl }));
                }
            }
        }
    }
    let lhs = expand(l, lhs, &phys, out);
    let rhs = expand(l, rhs, &phys, out);
    l.inst(base, op, &[dest, lhs, rhs], &[]);
    Ok(Val::Act(Act { v: dest, dims, cl }))
}

fn dims_at(l: &Lowerer, v: Value) -> Vec<u64> {
    l.f.value_type(v)
        .map(|t| t.dims.clone())
        .unwrap_or_default()
}

/// Numpy broadcasting of two shapes.
pub(crate) fn broadcast_dims(l: &Lowerer, a: &[u64], b: &[u64]) -> Result<Vec<u64>> {
    let r = a.len().max(b.len());
    let at = |d: &[u64], i: usize| {
        let pad = r - d.len();
        if i < pad {
            1
        } else {
            d[i - pad]
        }
    };
    (0..r)
        .map(|i| match (at(a, i), at(b, i)) {
            (x, y) if x == y || y == 1 => Ok(x),
            (1, y) => Ok(y),
            _ => Err(l.err(format!("shapes {a:?} and {b:?} do not broadcast"))),
        })
        .collect()
}

/// `k` when `part` is all ones before `k` and equals `full[k..]` after it
/// (k > 0, and the suffix is not all ones).
fn suffix_start(part: &[u64], full: &[u64]) -> Option<usize> {
    if part.len() != full.len() {
        return None;
    }
    let k = part.iter().position(|&d| d != 1)?;
    (k > 0 && part[k..] == full[k..]).then_some(k)
}

/// An operand at the output's rank and storage order (not yet broadcast);
/// a constant becomes a weight of `kind`.
fn operand(
    l: &mut Lowerer,
    v: &Val,
    rank: usize,
    cl: bool,
    out: &str,
    kind: ElemKind,
) -> Result<Value> {
    let mut dims = vec![1u64; rank - dims_of(v).len()];
    dims.extend(dims_of(v));
    match v {
        Val::Const { name, t } => {
            let t = t.reshaped(dims.clone());
            if cl && rank >= 3 {
                let p = t.permuted(&cl_perm(rank));
                return Ok(l.const_weight_kind(name, &p, kind));
            }
            if t.dims.len() == dims_of(v).len() {
                return Ok(l.act_kind(v, kind).v);
            }
            Ok(l.const_weight_kind(name, &t, kind))
        }
        Val::Act(a) => {
            let a = if a.dims.len() == rank {
                a.clone()
            } else {
                let p = l.to_plain(a, out);
                let v = l.view(&format!("{out}.rank"), p.v, &dims);
                Act {
                    v,
                    dims: dims.clone(),
                    cl: false,
                }
            };
            Ok(if cl {
                l.to_cl(&a, out)
            } else {
                l.to_plain(&a, out)
            }
            .v)
        }
    }
}

/// `v` (ONNX order) broadcast to `dims` as a buffer of `kind` (a constant
/// becomes a weight of `kind`): views to the rank, then splats or tiles.
pub(crate) fn broadcast(
    l: &mut Lowerer,
    v: &Val,
    dims: &[u64],
    out: &str,
    kind: ElemKind,
) -> Result<Value> {
    let x = operand(l, v, dims.len(), false, out, kind)?;
    Ok(expand(l, x, &super::ir_dims(dims), out))
}

/// `v` broadcast to IR dims `phys` (a splat for one element, else tiles).
fn expand(l: &mut Lowerer, v: Value, phys: &[u64], out: &str) -> Value {
    let mut cur = dims_at(l, v);
    if cur == phys {
        return v;
    }
    let kind = l.f.value_type(v).map_or(ElemKind::Float, |t| t.elem);
    if cur.iter().product::<u64>() == 1 {
        if let Some(s) = splat_of(l, v) {
            return l.splat_buffer_kind(&format!("{out}.bcast"), phys, s, kind);
        }
        // One run-time value: N copies into a flat view, one instruction.
        let n: u64 = phys.iter().product();
        let b = l.splat_buffer_kind(&format!("{out}.bcast"), phys, 0.0, kind);
        let flat = l.view(&format!("{out}.bcast.flat"), b, &[n]);
        let one = l.view(&format!("{out}.one"), v, &[1]);
        let members = [m::OFFSETS.to(vec![0]), m::COUNT.to(n as i64), m::AXIS.to(0)];
        l.inst(
            &format!("{out}.bcast"),
            Opcode::InsertTensor,
            &[flat, one],
            &members,
        );
        return b;
    }
    l.tile(out, v, &mut cur, phys, phys.len())
}

/// The value of a const weight with splat contents.
fn splat_of(l: &Lowerer, v: Value) -> Option<f64> {
    let Value::Weight(w) = v else { return None };
    match &l.f.weight(w).init {
        Some(glow_ir::WeightInit::Splat(s)) => Some(*s),
        Some(glow_ir::WeightInit::Floats(f)) if f.len() == 1 => Some(f[0]),
        _ => None,
    }
}

/// Constant folding of a broadcasting binary op, with the engines' own
/// operator (`glow_backend::ops::BINARY`), so the constant has the bits a
/// run of the instruction would give.
fn fold(l: &Lowerer, op: Opcode, a: &Tensor, b: &Tensor, dims: &[u64]) -> Result<Tensor> {
    let Some(bin) = glow_backend::ops::binary(op) else {
        return Err(l.err(format!("{} of two constants cannot be folded", op.name())));
    };
    let n: u64 = dims.iter().product();
    let idx = |t: &Tensor| -> Vec<usize> {
        let pad = dims.len() - t.dims.len();
        let st = strides(&t.dims);
        let ost = strides(dims);
        (0..n)
            .map(|lin| {
                let mut off = 0u64;
                for (k, &td) in t.dims.iter().enumerate() {
                    let i = (lin / ost[k + pad]) % dims[k + pad];
                    if td != 1 {
                        off += i * st[k];
                    }
                }
                off as usize
            })
            .collect()
    };
    let (ia, ib) = (idx(a), idx(b));
    match (&a.data, &b.data) {
        (Data::I64(x), Data::I64(y)) => {
            // The engines have no integer form of some operators (Pow):
            // the run-time lowering is unsupported, and so is the fold.
            let f = bin
                .int_form()
                .ok_or_else(|| l.unsupported(format!("{} of integer tensors", op.name())))?;
            let v = ia.iter().zip(&ib).map(|(&i, &j)| f(x[i], y[j])).collect();
            Ok(Tensor::i64(dims.to_vec(), v))
        }
        _ => {
            let (x, y) = (a.to_f32(), b.to_f32());
            let f = bin.float;
            let v = ia.iter().zip(&ib).map(|(&i, &j)| f(x[i], y[j])).collect();
            Ok(Tensor::f32(dims.to_vec(), v))
        }
    }
}
