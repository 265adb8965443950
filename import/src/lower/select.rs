//! Run-time comparisons, Where and Trilu: `elementcmp*` into `bool`
//! buffers and `elementselect` of any element kind.

use super::fold::{bcast_index, konst, take};
use super::{dims_of, Act, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::{Data, Tensor};
use glow_ir::{ElemKind, Opcode};

/// `x` broadcast to `dims` in ONNX order, exactly (`x * 1`), as elements
/// of `kind` (the kind of the activation operands).
fn full(
    l: &mut Lowerer,
    x: &Val,
    dims: &[u64],
    out: &str,
    base: &str,
    kind: ElemKind,
) -> Result<Act> {
    let v = if dims_of(x) == dims {
        x.clone()
    } else if kind == ElemKind::Bool {
        return Err(l.unsupported(format!("broadcasting a bool tensor to {dims:?}")));
    } else if let Val::Const { name, t } = x {
        // A constant broadcasts at import time.
        l.reserve_dims(out, dims)?;
        let pad = dims.len() - t.dims.len();
        let mut src = vec![1u64; pad];
        src.extend(&t.dims);
        let idx = bcast_index(&src, dims);
        // Named after its use: the same constant broadcasts differently elsewhere.
        konst(
            &format!("{name}.to.{out}"),
            take(&t.reshaped(src), &idx, dims.to_vec()),
        )
    } else {
        l.reserve_dims(out, dims)?;
        let n = dims.iter().product::<u64>() as usize;
        let ones = konst(
            &format!("{out}.ones"),
            Tensor::f32(dims.to_vec(), vec![1.0; n]),
        );
        super::elementwise::apply(l, Opcode::ElementMul, x, &ones, out, base)?
    };
    let a = l.act_kind(&v, kind);
    Ok(l.to_plain(&a, out))
}

/// The element kind of the first activation among `vals` (float if none).
fn act_kind_of(l: &Lowerer, vals: &[&Val]) -> ElemKind {
    vals.iter()
        .find_map(|v| match v {
            Val::Act(a) => Some(l.kind(a)),
            Val::Const { .. } => None,
        })
        .unwrap_or(ElemKind::Float)
}

/// Equal, Less, Greater, LessOrEqual, GreaterOrEqual on float or integer
/// activations: one `elementcmpeq`/`elementcmplt`/`elementcmplte` into a
/// bool buffer. Equal on bools is `!(a ^ b)`.
pub(super) fn compare(l: &mut Lowerer, node: &NodeProto, out: &str) -> Result<Val> {
    let (a, b) = (l.input(node, 0)?, l.input(node, 1)?);
    let dims = super::elementwise::broadcast_dims(l, &dims_of(&a), &dims_of(&b))?;
    let base = if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    };
    let kind = act_kind_of(l, &[&a, &b]);
    let (fa, fb) = (
        full(l, &a, &dims, out, &base, kind)?,
        full(l, &b, &dims, out, &base, kind)?,
    );
    if kind == ElemKind::Bool && node.op_type == "Equal" {
        let x = super::elementwise::apply(l, Opcode::ElementXor, &a, &b, out, &base)?;
        let Val::Act(xa) = x else {
            return Err(l.err("Equal of two constants reached run-time lowering"));
        };
        let c = l.alloc_kind(out, &dims, ElemKind::Bool);
        l.inst(&base, Opcode::ElementNot, &[c, xa.v], &[]);
        return Ok(Val::Act(Act {
            v: c,
            dims,
            cl: false,
        }));
    }
    if kind == ElemKind::Bool {
        return Err(l.unsupported(format!("{} of bool tensors", node.op_type)));
    }
    let (op, swap) = compare_op(&node.op_type);
    let (lhs, rhs) = if swap { (fb.v, fa.v) } else { (fa.v, fb.v) };
    let c = l.alloc_kind(out, &dims, ElemKind::Bool);
    l.inst(&base, op, &[c, lhs, rhs], &[]);
    Ok(Val::Act(Act {
        v: c,
        dims,
        cl: false,
    }))
}

/// The comparison instruction of an ONNX comparison, and whether its
/// operands swap: a > b is b < a and a >= b is b <= a, so NaN compares
/// false as in ONNX. The constant folder evaluates the same instruction.
pub(super) fn compare_op(op_type: &str) -> (Opcode, bool) {
    match op_type {
        "Less" => (Opcode::ElementCmpLT, false),
        "Greater" => (Opcode::ElementCmpLT, true),
        "LessOrEqual" => (Opcode::ElementCmpLTE, false),
        "GreaterOrEqual" => (Opcode::ElementCmpLTE, true),
        _ => (Opcode::ElementCmpEQ, false),
    }
}

/// Where with run-time operands: `elementselect` (arms swapped when the
/// condition is stored negated).
pub(super) fn select(l: &mut Lowerer, node: &NodeProto, out: &str) -> Result<Val> {
    let c = l.input(node, 0)?;
    let (x, y) = (l.input(node, 1)?, l.input(node, 2)?);
    let base = node_base(node, out);
    select_vals(l, &c, &x, &y, out, &base)
}

fn node_base(node: &NodeProto, out: &str) -> String {
    if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    }
}

/// `c ? x : y` with numpy broadcasting (at least one operand run-time).
fn select_vals(l: &mut Lowerer, c: &Val, x: &Val, y: &Val, out: &str, base: &str) -> Result<Val> {
    let (c, x, y) = (c.clone(), x.clone(), y.clone());
    let base = base.to_string();
    let d = super::elementwise::broadcast_dims(l, &dims_of(&x), &dims_of(&y))?;
    let dims = super::elementwise::broadcast_dims(l, &d, &dims_of(&c))?;
    let ca = match &c {
        Val::Act(a) if a.dims == dims => a.clone(),
        Val::Act(a) => {
            // Broadcast the condition (made plain: the copies are new buffers).
            let p = l.plain_bool(a);
            let cond = format!("{out}.cond");
            let v = super::elementwise::broadcast(l, &Val::Act(p), &dims, &cond, ElemKind::Bool)?;
            Act {
                v,
                dims: dims.clone(),
                cl: false,
            }
        }
        Val::Const { .. } => {
            let cond = format!("{out}.cond");
            let v = super::elementwise::broadcast(l, &c, &dims, &cond, ElemKind::Bool)?;
            Act {
                v,
                dims: dims.clone(),
                cl: false,
            }
        }
    };
    // With constant arms only, their data says the kind (integers are index64).
    let kind = match (&x, &y) {
        (Val::Const { t: a, .. }, Val::Const { t: b, .. }) => match (&a.data, &b.data) {
            (Data::I64(_), Data::I64(_)) => ElemKind::Index64,
            _ => ElemKind::Float,
        },
        _ => act_kind_of(l, &[&x, &y]),
    };
    let (fx, fy) = (
        full(l, &x, &dims, out, &base, kind)?,
        full(l, &y, &dims, out, &base, kind)?,
    );
    if l.kind(&fx) != l.kind(&fy) {
        return Err(l.unsupported(format!(
            "Where of {} and {} tensors",
            l.kind(&fx),
            l.kind(&fy)
        )));
    }
    let (lhs, rhs) = if l.negated.contains(&ca.v) {
        (fy.v, fx.v)
    } else {
        (fx.v, fy.v)
    };
    let dest = l.alloc_kind(out, &dims, kind);
    l.inst(&base, Opcode::ElementSelect, &[dest, ca.v, lhs, rhs], &[]);
    Ok(Val::Act(Act {
        v: dest,
        dims,
        cl: false,
    }))
}

/// Trilu: the upper (`upper` = 1, `j - i >= k`) or lower (`j - i <= k`)
/// triangle of the last two dims, the rest zero. A constant `k` gives a
/// constant mask; a run-time `k` (a scalar) is compared with a constant
/// `j - i` tensor at run time. Either way one `elementselect` with zero.
pub(super) fn trilu(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = node_base(node, &out);
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    if d.len() < 2 {
        return Err(l.err(format!("Trilu of rank {} (needs at least 2)", d.len())));
    }
    let upper = super::Attrs(&node.attribute).int("upper", 1) != 0;
    let (n, m) = (d[d.len() - 2], d[d.len() - 1]);
    let diff: Vec<i64> = (0..n as i64)
        .flat_map(|i| (0..m as i64).map(move |j| j - i))
        .collect();
    let zero = match &x {
        Val::Const { t, .. } if matches!(t.data, Data::F32(_)) => Tensor::f32(vec![], vec![0.0]),
        Val::Const { .. } => Tensor::i64(vec![], vec![0]),
        Val::Act(a) if l.kind(a) == ElemKind::Float => Tensor::f32(vec![], vec![0.0]),
        Val::Act(_) => Tensor::i64(vec![], vec![0]),
    };
    let zero = konst(&format!("{out}.zero"), zero);
    let keep = |dk: i64, k: i64| if upper { dk >= k } else { dk <= k };
    let cond = match l.opt_input(node, 1)? {
        None | Some(Val::Const { .. }) => {
            let k = match l.opt_input(node, 1)? {
                Some(Val::Const { t, .. }) => t.to_i64().first().copied().unwrap_or(0),
                _ => 0,
            };
            let mask = diff.iter().map(|&dk| keep(dk, k) as i64).collect();
            let mask = konst(&format!("{out}.mask"), Tensor::i64(vec![n, m], mask));
            if let Val::Const { t, .. } = &x {
                // Both known: fold.
                let idx = bcast_index(&[n, m], &d);
                let Val::Const { t: mt, .. } = &mask else {
                    unreachable!("the mask is a constant")
                };
                let mv = mt.to_i64();
                let t = match &t.data {
                    Data::F32(v) => Tensor::f32(
                        d.clone(),
                        v.iter()
                            .zip(&idx)
                            .map(|(&x, &i)| if mv[i] != 0 { x } else { 0.0 })
                            .collect(),
                    ),
                    Data::I64(v) => Tensor::i64(
                        d.clone(),
                        v.iter()
                            .zip(&idx)
                            .map(|(&x, &i)| if mv[i] != 0 { x } else { 0 })
                            .collect(),
                    ),
                };
                return Ok(vec![konst(&out, t)]);
            }
            mask
        }
        Some(Val::Act(ka)) => {
            if l.kind(&ka) != ElemKind::Index64 || ka.dims.iter().product::<u64>() != 1 {
                return Err(l.unsupported("a Trilu `k` that is not one int64 value"));
            }
            let dv = konst(&format!("{out}.diag"), Tensor::i64(vec![n, m], diff));
            let kb = super::elementwise::broadcast(
                l,
                &Val::Act(Act {
                    dims: vec![1, 1],
                    ..ka.clone()
                }),
                &[n, m],
                &format!("{out}.k"),
                ElemKind::Index64,
            )?;
            let dw = l.act_kind(&dv, ElemKind::Index64).v;
            let c = l.alloc_kind(&format!("{out}.mask"), &[n, m], ElemKind::Bool);
            // upper: k <= j - i; lower: j - i <= k.
            let (lhs, rhs) = if upper { (kb, dw) } else { (dw, kb) };
            l.inst(&base, Opcode::ElementCmpLTE, &[c, lhs, rhs], &[]);
            Val::Act(Act {
                v: c,
                dims: vec![n, m],
                cl: false,
            })
        }
    };
    Ok(vec![select_vals(l, &cond, &x, &zero, &out, &base)?])
}

/// IsNaN (`x != x`) and IsInf (`|x| == inf`, or `x == inf` / `x == -inf`
/// as `detect_positive` / `detect_negative` ask) of a float tensor: one
/// comparison into a bool buffer, or folded on a constant.
pub(super) fn is_special(l: &mut Lowerer, node: &NodeProto, out: &str) -> Result<Val> {
    let attrs = super::Attrs(&node.attribute);
    let nan = node.op_type == "IsNaN";
    let pos = attrs.int("detect_positive", 1) != 0;
    let neg = attrs.int("detect_negative", 1) != 0;
    let test = move |x: f32| {
        if nan {
            x.is_nan()
        } else {
            (pos && x == f32::INFINITY) || (neg && x == f32::NEG_INFINITY)
        }
    };
    let a = match l.input(node, 0)? {
        Val::Const { t, .. } => {
            let v = t.to_f32().into_iter().map(|x| test(x) as i64).collect();
            return Ok(konst(out, Tensor::i64(t.dims.clone(), v)));
        }
        Val::Act(a) => a,
    };
    if l.kind(&a) != ElemKind::Float {
        return Err(l.unsupported(format!("{} of {:?} tensors", node.op_type, l.kind(&a))));
    }
    let base = node_base(node, out);
    let phys = a.phys();
    let c = l.alloc_kind(out, &phys, ElemKind::Bool);
    if nan {
        // Glow's one instruction for it.
        l.inst(&base, Opcode::ElementIsNaN, &[c, a.v], &[]);
        return Ok(Val::Act(Act { v: c, ..a }));
    }
    let (op, lhs, rhs) = if pos && neg {
        let abs = l.alloc(&format!("{out}.abs"), &phys);
        l.inst(&base, Opcode::ElementAbs, &[abs, a.v], &[]);
        let inf = l.splat_buffer(&format!("{out}.inf"), &phys, f64::INFINITY);
        (Opcode::ElementCmpEQ, abs, inf)
    } else if pos || neg {
        let v = if pos {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
        let inf = l.splat_buffer(&format!("{out}.inf"), &phys, v);
        (Opcode::ElementCmpEQ, a.v, inf)
    } else {
        // Neither sign is detected: x < x is false everywhere, NaN too.
        (Opcode::ElementCmpLT, a.v, a.v)
    };
    l.inst(&base, op, &[c, lhs, rhs], &[]);
    Ok(Val::Act(Act { v: c, ..a }))
}
