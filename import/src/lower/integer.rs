//! Integer element-wise ops: BitShift, BitwiseAnd/Or/Xor/Not, Mod at run
//! time (integer and float) and Pow with integer operands. Each is the
//! broadcasting binary lowering of `elementwise::apply` over the integer
//! instructions (`elementbitwise*`, `elementbitshift*`, `elementfmod`,
//! `elementpow`'s integer form), or a few of them composed; constants fold
//! through the same operators (`glow_backend::ops`).

use super::elementwise::{apply, broadcast, broadcast_dims};
use super::fold::konst;
use super::{dims_of, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::{ElemKind, Opcode, Type};

fn out_and_base(node: &NodeProto) -> (String, String) {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    (out, base)
}

/// The element kind of a value: an activation's own, a constant's by its
/// data (integers and bools are i64, floats f32).
fn kind_of(l: &Lowerer, v: &Val) -> Option<ElemKind> {
    match v {
        Val::Act(a) => Some(l.kind(a)),
        Val::Const { .. } => None,
    }
}

/// BitShift (`direction` LEFT / RIGHT) and BitwiseAnd, BitwiseOr, BitwiseXor.
pub(super) fn bitwise(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let (out, base) = out_and_base(node);
    let op = match node.op_type.as_str() {
        "BitShift" => match Attrs(&node.attribute).string("direction").as_deref() {
            Some("LEFT") => Opcode::ElementBitShiftLeft,
            Some("RIGHT") => Opcode::ElementBitShiftRight,
            other => return Err(l.err(format!("BitShift direction {other:?}"))),
        },
        "BitwiseAnd" => Opcode::ElementBitwiseAnd,
        "BitwiseOr" => Opcode::ElementBitwiseOr,
        _ => Opcode::ElementBitwiseXor,
    };
    let (a, b) = (l.input(node, 0)?, l.input(node, 1)?);
    integer_only(l, &[&a, &b], node)?;
    Ok(vec![apply(l, op, &a, &b, &out, &base)?])
}

/// BitwiseNot: `x ^ all-ones` (255 for uint8, -1 for the signed kinds).
pub(super) fn bitwise_not(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let (out, base) = out_and_base(node);
    let x = l.input(node, 0)?;
    integer_only(l, &[&x], node)?;
    let ones = if kind_of(l, &x) == Some(ElemKind::UInt8) {
        255
    } else {
        -1
    };
    let m = konst(&format!("{out}.ones"), Tensor::i64(vec![], vec![ones]));
    Ok(vec![apply(
        l,
        Opcode::ElementBitwiseXor,
        &x,
        &m,
        &out,
        &base,
    )?])
}

/// The bitwise ops take integer tensors only.
fn integer_only(l: &Lowerer, vals: &[&Val], node: &NodeProto) -> Result<()> {
    for v in vals {
        let float = match v {
            Val::Act(a) => !l.kind(a).is_plain_int(),
            Val::Const { t, .. } => matches!(t.data, crate::tensor::Data::F32(_)),
        };
        if float {
            return Err(l.unsupported(format!("{} of a non-integer tensor", node.op_type)));
        }
    }
    Ok(())
}

/// Mod: constants fold (fold.rs); at run time `fmod = 1` is `elementfmod`
/// (C's `fmod` and `%`), `fmod = 0` the remainder with the divisor's sign,
/// as numpy's `mod`: `r = fmod(a, b)`, then `r + b` where `r != 0` and the
/// signs of `r` and `b` differ.
pub(super) fn modulo(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let (a, b) = (l.input(node, 0)?, l.input(node, 1)?);
    if matches!((&a, &b), (Val::Const { .. }, Val::Const { .. })) {
        return super::fold::lower(l, node);
    }
    let (out, base) = out_and_base(node);
    let fmod = Attrs(&node.attribute).int("fmod", 0) != 0;
    let r = apply(l, Opcode::ElementFmod, &a, &b, &out, &base)?;
    if fmod {
        return Ok(vec![r]);
    }
    let Val::Act(ra) = &r else {
        return Ok(vec![r]);
    };
    let kind = l.kind(ra);
    let dims = broadcast_dims(l, &dims_of(&a), &dims_of(&b))?;
    let ra = l.to_plain(ra, &out);
    let bv = broadcast(l, &b, &dims, &format!("{out}.divisor"), kind)?;
    let phys = super::ir_dims(&dims);
    let zero = l.splat_buffer_kind(&format!("{out}.zero"), &phys, 0.0, kind);
    let cond = |l: &mut Lowerer, name: &str| {
        let c = l
            .b()
            .alloc(&format!("{out}.{name}"), Type::new(ElemKind::Bool, &phys));
        l.track_alloc(c);
        c
    };
    let (rneg, bneg, differ, nonzero) = (
        cond(l, "rneg"),
        cond(l, "bneg"),
        cond(l, "differ"),
        cond(l, "nonzero"),
    );
    l.inst(&base, Opcode::ElementCmpLT, &[rneg, ra.v, zero], &[]);
    l.inst(&base, Opcode::ElementCmpLT, &[bneg, bv, zero], &[]);
    l.inst(&base, Opcode::ElementXor, &[differ, rneg, bneg], &[]);
    l.inst(&base, Opcode::ElementCmpNEQ, &[nonzero, ra.v, zero], &[]);
    l.inst(&base, Opcode::ElementAnd, &[differ, differ, nonzero], &[]);
    let sum = l.alloc_kind(&format!("{out}.fixed"), &phys, kind);
    l.inst(&base, Opcode::ElementAdd, &[sum, ra.v, bv], &[]);
    let dest = l.alloc_kind(&out, &phys, kind);
    l.inst(
        &base,
        Opcode::ElementSelect,
        &[dest, differ, sum, ra.v],
        &[],
    );
    Ok(vec![Val::Act(Act {
        v: dest,
        dims,
        cl: false,
    })])
}

/// Pow: operands of one kind are `elementpow` (float or integer form);
/// an integer base with a float exponent, or the reverse, is computed in
/// float (`convertto`, `powf`) and converted to the base's kind, as ONNX's
/// reference casts the float result.
pub(super) fn pow(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let (out, base) = out_and_base(node);
    let (a, b) = (l.input(node, 0)?, l.input(node, 1)?);
    let (ka, kb) = (kind_of(l, &a), kind_of(l, &b));
    let float_const = |v: &Val| matches!(v, Val::Const { t, .. } if matches!(t.data, crate::tensor::Data::F32(_)));
    let mixed = match (ka, kb) {
        (Some(x), Some(y)) => x != y,
        (Some(x), None) => x.is_plain_int() && float_const(&b),
        (None, Some(y)) => y.is_plain_int() && float_const(&a),
        (None, None) => false,
    };
    if !mixed {
        return Ok(vec![apply(l, Opcode::ElementPow, &a, &b, &out, &base)?]);
    }
    let to_float = |l: &mut Lowerer, v: &Val, k: Option<ElemKind>, name: &str| -> Val {
        match (v, k) {
            (Val::Act(x), Some(k)) if k != ElemKind::Float => {
                let x = l.to_plain(x, name);
                let d = l.alloc(name, &super::ir_dims(&x.dims));
                l.inst(&base, Opcode::ConvertTo, &[d, x.v], &[]);
                Val::Act(Act {
                    v: d,
                    dims: x.dims.clone(),
                    cl: false,
                })
            }
            _ => v.clone(),
        }
    };
    let fa = to_float(l, &a, ka, &format!("{out}.base"));
    let fb = to_float(l, &b, kb, &format!("{out}.exp"));
    let p = apply(
        l,
        Opcode::ElementPow,
        &fa,
        &fb,
        &format!("{out}.float"),
        &base,
    )?;
    let kind = ka.unwrap_or(ElemKind::Float);
    if kind == ElemKind::Float {
        return Ok(vec![p]);
    }
    let Val::Act(pa) = &p else { return Ok(vec![p]) };
    let pa = l.to_plain(pa, &out);
    let dest = l.alloc_kind(&out, &super::ir_dims(&pa.dims), kind);
    l.inst(&base, Opcode::ConvertTo, &[dest, pa.v], &[]);
    Ok(vec![Val::Act(Act {
        v: dest,
        dims: pa.dims,
        cl: false,
    })])
}

/// EyeLike: the output depends only on the input's (2-D) shape, so it is a
/// constant: ones on the diagonal `k` (`j - i = k`), zeros elsewhere, of
/// `dtype` (default: the input's kind).
pub(super) fn eye_like(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let (out, _) = out_and_base(node);
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    if d.len() != 2 {
        return Err(l.err(format!("EyeLike of a rank-{} tensor (2-D only)", d.len())));
    }
    let attrs = Attrs(&node.attribute);
    let k = attrs.int("k", 0);
    l.reserve_dims(&out, &d)?;
    let (rows, cols) = (d[0] as i64, d[1] as i64);
    let ones: Vec<bool> = (0..rows * cols).map(|p| p % cols - p / cols == k).collect();
    let float = match node.attribute.iter().find(|a| a.name == "dtype") {
        Some(a) => {
            a.i == crate::onnx::dtype::FLOAT as i64 || a.i == crate::onnx::dtype::DOUBLE as i64
        }
        None => match &x {
            Val::Act(a) => l.kind(a) == ElemKind::Float,
            Val::Const { t, .. } => matches!(t.data, crate::tensor::Data::F32(_)),
        },
    };
    let t = if float {
        Tensor::f32(d, ones.iter().map(|&o| f32::from(u8::from(o))).collect())
    } else {
        Tensor::i64(d, ones.iter().map(|&o| i64::from(o)).collect())
    };
    Ok(vec![konst(&out, t)])
}
