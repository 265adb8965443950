//! Shape computations evaluated at import time, so that static shapes flow
//! through the graph as a static compiler needs: Shape and Size of any value
//! (dims are known), and Cast, CastLike, Gather, Slice, Split, Range, the
//! comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), And, Or,
//! Xor, Not, Where and Mod on constants. Booleans are `I64` 0/1 constants.
//! On activations Slice (unit steps) and Split become `extracttensor`s of
//! the ONNX-order buffer, Gather with constant indices one `extracttensor`
//! per index, and Cast/CastLike a `convertto` to the target kind (the
//! identity when the kind does not change); whatever else would need a
//! run-time integer or bool tensor is an error naming the node.

use super::{dims_of, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::{dtype, NodeProto};
use crate::tensor::{strides, Data, Tensor};
use glow_backend::ops;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type};
use std::rc::Rc;

pub(super) fn konst(name: &str, t: Tensor) -> Val {
    Val::Const {
        name: name.to_string(),
        t: t.into(),
    }
}

/// Elements of `t` at source offsets `idx`, with dims `dims`.
pub(super) fn take(t: &Tensor, idx: &[usize], dims: Vec<u64>) -> Tensor {
    match &t.data {
        Data::F32(v) => Tensor::f32(dims, idx.iter().map(|&i| v[i]).collect()),
        Data::I64(v) => Tensor::i64(dims, idx.iter().map(|&i| v[i]).collect()),
    }
}

/// Source offsets of a strided box: per axis a start and a step (possibly
/// negative) and the output extent.
fn box_offsets(src: &[u64], start: &[i64], step: &[i64], out: &[u64]) -> Vec<usize> {
    let st = strides(src);
    let n: u64 = out.iter().product();
    let ost = strides(out);
    (0..n)
        .map(|lin| {
            let mut off = 0i64;
            for k in 0..out.len() {
                let i = ((lin / ost[k]) % out[k]) as i64;
                off += (start[k] + i * step[k]) * st[k] as i64;
            }
            off as usize
        })
        .collect()
}

pub(super) fn lower(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let attrs = Attrs(&node.attribute);
    let op = node.op_type.as_str();
    Ok(vec![match op {
        "Shape" => {
            let d = dims_of(&l.input(node, 0)?);
            let r = d.len() as i64;
            let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
            let s = clamp(attrs.int("start", 0));
            let e = clamp(attrs.int("end", r)).max(s);
            let v: Vec<i64> = d[s..e].iter().map(|&x| x as i64).collect();
            konst(&out, Tensor::i64(vec![v.len() as u64], v))
        }
        "Size" => {
            let n: u64 = dims_of(&l.input(node, 0)?).iter().product();
            konst(&out, Tensor::i64(vec![], vec![n as i64]))
        }
        "Cast" | "CastLike" => {
            let x = l.input(node, 0)?;
            let like = if op == "CastLike" {
                Some(l.input(node, 1)?)
            } else {
                None
            };
            let to = match &like {
                None => attrs.int("to", dtype::FLOAT as i64) as i32,
                Some(Val::Act(a)) => match l.kind(a) {
                    ElemKind::Index64 => dtype::INT64,
                    ElemKind::Index32 => dtype::INT32,
                    ElemKind::Int8 => dtype::INT8,
                    ElemKind::UInt8 => dtype::UINT8,
                    ElemKind::Bool => dtype::BOOL,
                    _ => dtype::FLOAT,
                },
                Some(Val::Const { t, .. }) if matches!(t.data, Data::I64(_)) => dtype::INT64,
                Some(_) => dtype::FLOAT,
            };
            let float = matches!(to, dtype::FLOAT | dtype::DOUBLE);
            match x {
                Val::Const { t, .. } => konst(&out, cast(&t, to)),
                Val::Act(a) => {
                    // DOUBLE computes in f32, as every float does.
                    let kind = if float {
                        Some(ElemKind::Float)
                    } else {
                        super::elem_of_dtype(to)
                    };
                    let kind = kind.ok_or_else(|| {
                        l.unsupported(format!(
                            "{op} of a run-time tensor to {} (run-time tensors are {})",
                            dtype::name(to),
                            super::RUNTIME_DTYPES
                        ))
                    })?;
                    if l.kind(&a) == kind {
                        Val::Act(a)
                    } else {
                        let base = if node.name.is_empty() {
                            out.clone()
                        } else {
                            node.name.clone()
                        };
                        let v = l.alloc_kind(&out, &a.phys(), kind);
                        l.inst(&base, Opcode::ConvertTo, &[v, a.v], &[]);
                        Val::Act(Act { v, ..a })
                    }
                }
            }
        }
        "BitCast" => {
            // The same bytes read as another element type of the same size:
            // a view of the input with the new type (views are byte windows).
            let to = attrs.int("to", 0) as i32;
            let kind = super::elem_of_dtype(to).ok_or_else(|| {
                l.unsupported(format!(
                    "BitCast to {} (run-time tensors are {})",
                    dtype::name(to),
                    super::RUNTIME_DTYPES
                ))
            })?;
            let a = match l.input(node, 0)? {
                Val::Act(a) => a,
                Val::Const { .. } => return Err(l.unsupported("BitCast of a constant")),
            };
            let from = l.kind(&a);
            if from.bytes() != kind.bytes() {
                return Err(l.unsupported(format!(
                    "BitCast between element sizes ({from:?} to {kind:?})"
                )));
            }
            let a = l.to_plain(&a, &out);
            let dims = super::ir_dims(&a.dims);
            let rank = dims.len();
            let v = l.b().tensorview(
                super::nonempty(&out),
                a.v,
                glow_ir::Type::new(kind, &dims),
                vec![0; rank],
            );
            Val::Act(Act {
                v,
                dims: a.dims,
                cl: false,
            })
        }
        "Range" => {
            let g = |i| -> Result<Rc<Tensor>> { l.const_input(node, i) };
            let (s, lim, d) = (g(0)?, g(1)?, g(2)?);
            let int = [&s, &lim, &d]
                .iter()
                .all(|t| matches!(t.data, Data::I64(_)));
            let f = |t: &Tensor| t.to_f32().first().copied().unwrap_or(0.0) as f64;
            let (s0, l0, d0) = (f(&s), f(&lim), f(&d));
            if d0 == 0.0 {
                return Err(l.err("delta is zero"));
            }
            let n = ((l0 - s0) / d0).ceil().max(0.0) as u64;
            if n > 1 << 24 {
                return Err(l.err(format!("{n} elements")));
            }
            if int {
                let (s, d) = (s.to_i64()[0], d.to_i64()[0]);
                konst(
                    &out,
                    Tensor::i64(vec![n], (0..n as i64).map(|i| s + i * d).collect()),
                )
            } else {
                let (s, d) = (s.to_f32()[0], d.to_f32()[0]);
                let v = (0..n).map(|i| s + i as f32 * d).collect();
                konst(&out, Tensor::f32(vec![n], v))
            }
        }
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual"
            if [0, 1].iter().any(|&i| l.is_act(node, i)) =>
        {
            super::select::compare(l, node, &out)?
        }
        "Where" if [0, 1, 2].iter().any(|&i| l.is_act(node, i)) => {
            super::select::select(l, node, &out)?
        }
        "And" | "Or" | "Xor" if [0, 1].iter().any(|&i| l.is_act(node, i)) => {
            let op = match op {
                "And" => Opcode::ElementAnd,
                "Or" => Opcode::ElementOr,
                _ => Opcode::ElementXor,
            };
            let (a, b) = (l.input(node, 0)?, l.input(node, 1)?);
            let base = if node.name.is_empty() {
                out.clone()
            } else {
                node.name.clone()
            };
            super::elementwise::apply(l, op, &a, &b, &out, &base)?
        }
        "Not" if l.is_act(node, 0) => {
            let Val::Act(a) = l.input(node, 0)? else {
                unreachable!("matched an activation")
            };
            // A new view of the same buffer, with the negation flag flipped.
            let dims = a.phys();
            let rank = dims.len();
            let ty = Type::new(ElemKind::Bool, &dims);
            let v = l.b().tensorview(&out, a.v, ty, vec![0; rank]);
            if !l.negated.contains(&a.v) {
                l.negated.insert(v);
            }
            Val::Act(Act { v, ..a })
        }
        "Equal" | "Less" | "Greater" | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor"
        | "Mod" => {
            let (a, b) = (const_or_err(l, node, 0)?, const_or_err(l, node, 1)?);
            let dims = super::elementwise::broadcast_dims(l, &a.dims, &b.dims)?;
            l.reserve_dims(&out, &dims)?;
            let (ia, ib) = (bcast_index(&a.dims, &dims), bcast_index(&b.dims, &dims));
            let fmod = attrs.int("fmod", 0) != 0;
            let int = matches!((&a.data, &b.data), (Data::I64(_), Data::I64(_)));
            let (x, y) = (a.to_f32(), b.to_f32());
            let (xi, yi) = (a.to_i64(), b.to_i64());
            // The instruction the run-time lowering emits, evaluated by the
            // engines' definition (`glow_backend::ops`).
            let v: Vec<i64> = match op {
                "And" | "Or" | "Xor" => {
                    let f = ops::logical(match op {
                        "And" => Opcode::ElementAnd,
                        "Or" => Opcode::ElementOr,
                        _ => Opcode::ElementXor,
                    })
                    .expect("a logical opcode")
                    .f;
                    let (p, q) = (truth(&a), truth(&b));
                    ia.iter()
                        .zip(&ib)
                        .map(|(&i, &j)| f(p[i], q[j]) as i64)
                        .collect()
                }
                "Mod" => vec![],
                _ => {
                    let (cmp, swap) = super::select::compare_op(op);
                    let cmp = ops::compare(cmp).expect("a comparison opcode");
                    let ((x, xi, ia), (y, yi, ib)) = if swap {
                        ((&y, &yi, &ib), (&x, &xi, &ia))
                    } else {
                        ((&x, &xi, &ia), (&y, &yi, &ib))
                    };
                    ia.iter()
                        .zip(ib)
                        .map(|(&i, &j)| {
                            (if int {
                                (cmp.int)(xi[i], yi[j])
                            } else {
                                (cmp.float)(x[i] as f64, y[j] as f64)
                            }) as i64
                        })
                        .collect()
                }
            };
            if op == "Mod" {
                if int {
                    let v = ia
                        .iter()
                        .zip(&ib)
                        .map(|(&i, &j)| {
                            let (p, q) = (xi[i], yi[j]);
                            // Wrapping: MIN % -1 overflows (the remainder is 0).
                            if q == 0 {
                                0
                            } else if fmod {
                                p.wrapping_rem(q)
                            } else {
                                let r = p.wrapping_rem_euclid(q);
                                r + if q < 0 && r != 0 { q } else { 0 }
                            }
                        })
                        .collect();
                    konst(&out, Tensor::i64(dims, v))
                } else {
                    let v = ia.iter().zip(&ib).map(|(&i, &j)| x[i] % y[j]).collect();
                    konst(&out, Tensor::f32(dims, v))
                }
            } else {
                konst(&out, Tensor::i64(dims, v))
            }
        }
        "Not" => {
            let t = const_or_err(l, node, 0)?;
            let f = ops::logical(Opcode::ElementNot).expect("elementnot").f;
            let v = truth(&t).iter().map(|&x| f(x, false) as i64).collect();
            konst(&out, Tensor::i64(t.dims.clone(), v))
        }
        "Where" => {
            let c = const_or_err(l, node, 0)?;
            let (a, b) = (const_or_err(l, node, 1)?, const_or_err(l, node, 2)?);
            let d = super::elementwise::broadcast_dims(l, &c.dims, &a.dims)?;
            let dims = super::elementwise::broadcast_dims(l, &d, &b.dims)?;
            l.reserve_dims(&out, &dims)?;
            let (ic, ia, ib) = (
                bcast_index(&c.dims, &dims),
                bcast_index(&a.dims, &dims),
                bcast_index(&b.dims, &dims),
            );
            let cv = c.to_f32();
            let pick: Vec<(bool, usize)> = ic
                .iter()
                .zip(ia.iter().zip(&ib))
                .map(|(&k, (&i, &j))| if cv[k] != 0.0 { (true, i) } else { (false, j) })
                .collect();
            match (&a.data, &b.data) {
                (Data::I64(x), Data::I64(y)) => {
                    let v = pick
                        .iter()
                        .map(|&(s, i)| if s { x[i] } else { y[i] })
                        .collect();
                    konst(&out, Tensor::i64(dims, v))
                }
                _ => {
                    let (x, y) = (a.to_f32(), b.to_f32());
                    let v = pick
                        .iter()
                        .map(|&(s, i)| if s { x[i] } else { y[i] })
                        .collect();
                    konst(&out, Tensor::f32(dims, v))
                }
            }
        }
        "Gather" => gather(l, node, &attrs, &out)?,
        "Slice" => slice(l, node, &attrs, &out)?,
        "DepthToSpace" | "SpaceToDepth" => space(l, node, &attrs, &out)?,
        _ => return split(l, node, &attrs),
    }])
}

/// A constant's elements as bools: nonzero is true (NaN too), as the
/// engines read a bool byte and as `convertto` makes one from a float.
fn truth(t: &Tensor) -> Vec<bool> {
    match &t.data {
        Data::F32(v) => v.iter().map(|&x| x != 0.0).collect(),
        Data::I64(v) => v.iter().map(|&x| x != 0).collect(),
    }
}

/// Cast of a constant to ONNX type `to`, by the engines' `convertto`
/// (`ops::Conversion`: a float saturates to the integer kind's range, NaN
/// gives 0, an integer wraps to the destination's width). DOUBLE computes
/// in f32, as every float does; a type no engine holds (INT16, UINT64, ...)
/// truncates toward zero and keeps the i64 value.
fn cast(t: &Tensor, to: i32) -> Tensor {
    let dest = if to == dtype::DOUBLE {
        Some(ElemKind::Float)
    } else {
        super::elem_of_dtype(to)
    };
    let src = match t.data {
        Data::F32(_) => ElemKind::Float,
        Data::I64(_) => ElemKind::Index64,
    };
    let Some((dest, conv)) = dest.and_then(|d| Some((d, ops::Conversion::between(src, d)?))) else {
        return Tensor::i64(t.dims.clone(), t.to_i64());
    };
    let vals: Vec<Option<ops::Scalar>> = match &t.data {
        Data::F32(v) => v.iter().map(|&x| conv.float(x)).collect(),
        Data::I64(v) => v.iter().map(|&x| conv.int(x)).collect(),
    };
    // `between` chose the conversion from the source's side, so every
    // element converts, to a float exactly when `dest` is float.
    let (mut floats, mut ints) = (Vec::new(), Vec::new());
    for s in vals {
        match s.expect("a conversion from the source's kind") {
            ops::Scalar::F(f) => floats.push(f),
            ops::Scalar::I(i) => ints.push(glow_backend::elem::wrap(dest, i)),
        }
    }
    if dest == ElemKind::Float {
        Tensor::f32(t.dims.clone(), floats)
    } else {
        Tensor::i64(t.dims.clone(), ints)
    }
}

/// Input `i`, which must be known at import time for this op to be lowered.
fn const_or_err(l: &Lowerer, node: &NodeProto, i: usize) -> Result<Rc<Tensor>> {
    match l.input(node, i)? {
        Val::Const { t, .. } => Ok(t),
        Val::Act(_) => Err(l.unsupported(format!(
            "{} of run-time tensors (input `{}`); it needs bool/integer activations",
            node.op_type,
            node.input.get(i).cloned().unwrap_or_default()
        ))),
    }
}

/// For each element of `dims`, the offset in a tensor of `src` broadcast to it.
pub(super) fn bcast_index(src: &[u64], dims: &[u64]) -> Vec<usize> {
    let pad = dims.len() - src.len();
    let st = strides(src);
    let ost = strides(dims);
    let n: u64 = dims.iter().product();
    (0..n)
        .map(|lin| {
            let mut off = 0u64;
            for (k, &d) in src.iter().enumerate() {
                if d != 1 {
                    off += ((lin / ost[k + pad]) % dims[k + pad]) * st[k];
                }
            }
            off as usize
        })
        .collect()
}

/// `extracttensor` of a box of `a` (ONNX order) with unit steps.
fn extract(l: &mut Lowerer, a: &Act, offsets: &[u64], dims: Vec<u64>, out: &str) -> Act {
    let src = l.to_plain(a, out).v;
    let kind = l.kind(a);
    let dest = l.alloc_kind(out, &dims, kind);
    let off: Vec<i64> = offsets.iter().map(|&o| o as i64).collect();
    l.inst(
        &format!("{out}.extract"),
        Opcode::ExtractTensor,
        &[dest, src],
        &[m::OFFSETS.to(off)],
    );
    Act {
        v: dest,
        dims,
        cl: false,
    }
}

fn gather(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, out: &str) -> Result<Val> {
    let x = l.input(node, 0)?;
    if let Val::Act(ia) = l.input(node, 1)? {
        return runtime_gather(l, node, attrs, &x, &ia, out);
    }
    let idx = l.const_input(node, 1)?;
    let d = dims_of(&x);
    if d.is_empty() {
        return Err(l.err("Gather of a scalar"));
    }
    let axis = norm_axis(l, attrs.int("axis", 0), d.len())?;
    let n = d[axis] as i64;
    let ids: Vec<u64> = idx
        .to_i64()
        .iter()
        .map(|&i| {
            let j = if i < 0 { i + n } else { i };
            (0..n)
                .contains(&j)
                .then_some(j as u64)
                .ok_or_else(|| l.err(format!("index {i} is out of range for {n}")))
        })
        .collect::<Result<_>>()?;
    // Output dims: data[:axis] + indices dims + data[axis+1:].
    let mut dims = d[..axis].to_vec();
    dims.extend(&idx.dims);
    dims.extend(&d[axis + 1..]);
    let outer: u64 = d[..axis].iter().product();
    let inner: u64 = d[axis + 1..].iter().product();
    match x {
        Val::Const { t, .. } => {
            l.reserve_dims(out, &dims)?;
            let mut offs = Vec::new();
            for o in 0..outer {
                for &i in &ids {
                    for k in 0..inner {
                        offs.push(((o * d[axis] + i) * inner + k) as usize);
                    }
                }
            }
            Ok(konst(out, take(&t, &offs, dims)))
        }
        Val::Act(a) => {
            if dims.len() > glow_ir::types::MAX_DIMS {
                return Err(l.unsupported(format!("a result of rank {}", dims.len())));
            }
            let t = take_along(l, &a, axis, &ids, out);
            let v = l.view(&format!("{out}.dims"), t.v, &dims);
            Ok(Val::Act(Act { v, dims, cl: false }))
        }
    }
}

/// The elements of `a` at constant indices `ids` along `axis` (ONNX
/// order), in that order: one `extracttensor` per index into a `[outer,
/// count, inner]` buffer, returned with `axis` of `ids.len()`.
pub(super) fn take_along(l: &mut Lowerer, a: &Act, axis: usize, ids: &[u64], out: &str) -> Act {
    let d = &a.dims;
    let outer: u64 = d[..axis].iter().product();
    let inner: u64 = d[axis + 1..].iter().product();
    let p = l.to_plain(a, out);
    let kind = l.kind(a);
    let src3 = l.view(&format!("{out}.src"), p.v, &[outer, d[axis], inner]);
    let dest = l.splat_buffer_kind(out, &[outer, ids.len() as u64, inner], 0.0, kind);
    for (k, &i) in ids.iter().enumerate() {
        let piece = l.alloc_kind(&format!("{out}.piece"), &[outer, 1, inner], kind);
        l.inst(
            &format!("{out}.extract"),
            Opcode::ExtractTensor,
            &[piece, src3],
            &[m::OFFSETS.to(vec![0, i as i64, 0])],
        );
        l.inst(
            &format!("{out}.insert"),
            Opcode::InsertTensor,
            &[dest, piece],
            &[m::OFFSETS.to(vec![0, k as i64, 0])],
        );
    }
    let mut dims = d.clone();
    dims[axis] = ids.len() as u64;
    let v = l.view(&format!("{out}.along"), dest, &dims);
    Act { v, dims, cl: false }
}

/// Gather with indices known only at run time (an int64 or int32 graph
/// input, as a token embedding takes them): the `gather` instruction on the
/// ONNX-order data (a constant table becomes a weight). Its negative indices
/// count from the end as ONNX's do; out-of-range ones give zeros.
fn runtime_gather(
    l: &mut Lowerer,
    node: &NodeProto,
    attrs: &Attrs,
    x: &Val,
    idx: &Act,
    out: &str,
) -> Result<Val> {
    if !matches!(l.kind(idx), ElemKind::Index64 | ElemKind::Index32) {
        return Err(l.err(format!(
            "indices of kind {} (int64 or int32 expected)",
            l.kind(idx)
        )));
    }
    let d = dims_of(x);
    if d.is_empty() {
        return Err(l.err("Gather of a scalar"));
    }
    let axis = norm_axis(l, attrs.int("axis", 0), d.len())?;
    let mut dims = d[..axis].to_vec();
    dims.extend(&idx.dims);
    dims.extend(&d[axis + 1..]);
    if dims.len() > glow_ir::types::MAX_DIMS {
        return Err(l.unsupported(format!("a result of rank {}", dims.len())));
    }
    let a = l.act(x);
    let a = l.to_plain(&a, out);
    let kind = l.kind(&a);
    let dest = l.alloc_kind(out, &dims, kind);
    let base = if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    };
    l.inst(
        &base,
        Opcode::Gather,
        &[dest, a.v, idx.v],
        &[m::AXIS.to(axis as i64)],
    );
    Ok(Val::Act(Act {
        v: dest,
        dims,
        cl: false,
    }))
}

/// Ints from input `i` (opset >= 10 style) or attribute `name`.
pub(super) fn ints_of(
    l: &Lowerer,
    node: &NodeProto,
    attrs: &Attrs,
    i: usize,
    name: &str,
) -> Result<Option<Vec<i64>>> {
    if let Some(v) = attrs.ints(name) {
        return Ok(Some(v.to_vec()));
    }
    match l.opt_input(node, i)? {
        None => Ok(None),
        Some(_) => Ok(Some(l.const_input(node, i)?.to_i64())),
    }
}

fn slice(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, out: &str) -> Result<Val> {
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let r = d.len();
    let starts = ints_of(l, node, attrs, 1, "starts")?.ok_or_else(|| l.err("no starts"))?;
    let ends = ints_of(l, node, attrs, 2, "ends")?.ok_or_else(|| l.err("no ends"))?;
    let axes =
        ints_of(l, node, attrs, 3, "axes")?.unwrap_or_else(|| (0..starts.len() as i64).collect());
    let steps = match l.opt_input(node, 4)? {
        Some(_) => l.const_input(node, 4)?.to_i64(),
        None => vec![1; starts.len()],
    };
    if ends.len() != starts.len() || axes.len() != starts.len() || steps.len() != starts.len() {
        return Err(l.err("starts, ends, axes and steps differ in length"));
    }
    let mut start: Vec<i64> = vec![0; r];
    let mut step: Vec<i64> = vec![1; r];
    let mut dims = d.clone();
    for k in 0..starts.len() {
        let ax = norm_axis(l, axes[k], r)?;
        let n = d[ax] as i64;
        let s = steps[k];
        if s == 0 {
            return Err(l.err("a step of 0"));
        }
        let fix = |v: i64| if v < 0 { v + n } else { v };
        let (b, e) = if s > 0 {
            (fix(starts[k]).clamp(0, n), fix(ends[k]).clamp(0, n))
        } else {
            (
                fix(starts[k]).clamp(-1, n - 1),
                fix(ends[k]).clamp(-1, n - 1),
            )
        };
        let len = if s > 0 {
            (e - b + s - 1).div_euclid(s).max(0)
        } else {
            (b - e + (-s) - 1).div_euclid(-s).max(0)
        };
        // An empty constant (a shape prefix such as `shape[:0]`) is fine; an
        // empty activation has no buffer.
        if len == 0 && matches!(x, Val::Act(_)) {
            return Err(l.unsupported("a zero-size slice of an activation"));
        }
        start[ax] = b;
        step[ax] = s;
        dims[ax] = len as u64;
    }
    match x {
        Val::Const { t, .. } => {
            let offs = box_offsets(&t.dims, &start, &step, &dims);
            Ok(konst(out, take(&t, &offs, dims)))
        }
        Val::Act(a) => {
            // The box of the unit-step axes, then each stepped axis' elements.
            let mut off: Vec<u64> = start.iter().map(|&s| s as u64).collect();
            let mut boxed = dims.clone();
            for ax in 0..r {
                if step[ax] != 1 {
                    off[ax] = 0;
                    boxed[ax] = d[ax];
                }
            }
            let mut v = extract(l, &a, &off, boxed, out);
            for ax in (0..r).filter(|&ax| step[ax] != 1) {
                let ids: Vec<u64> = (0..dims[ax] as i64)
                    .map(|k| (start[ax] + k * step[ax]) as u64)
                    .collect();
                v = take_along(l, &v, ax, &ids, out);
            }
            Ok(Val::Act(v))
        }
    }
}

fn split(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs) -> Result<Vec<Val>> {
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    if d.is_empty() {
        return Err(l.err("Split of a scalar"));
    }
    let axis = norm_axis(l, attrs.int("axis", 0), d.len())?;
    let n = node.output.len() as u64;
    let total = d[axis];
    let sizes: Vec<u64> = match ints_of(l, node, attrs, 1, "split")? {
        Some(s) => s.iter().map(|&v| v.max(0) as u64).collect(),
        None => {
            let parts = attrs.int("num_outputs", n as i64).max(1) as u64;
            let each = total.div_ceil(parts);
            (0..parts)
                .map(|i| each.min(total.saturating_sub(i * each)))
                .collect()
        }
    };
    if sizes.iter().sum::<u64>() != total || sizes.len() as u64 != n {
        return Err(l.err(format!(
            "split sizes {sizes:?} do not cover {total} in {n} outputs"
        )));
    }
    let mut outs = Vec::new();
    let mut at = 0u64;
    for (k, &s) in sizes.iter().enumerate() {
        let name = node.output[k].clone();
        let mut dims = d.clone();
        dims[axis] = s;
        if s == 0 {
            // An empty part is the empty constant (Concat leaves it out).
            outs.push(konst(&name, Tensor::f32(dims, vec![])));
            continue;
        }
        let v = match &x {
            Val::Const { t, .. } => {
                let mut start = vec![0i64; d.len()];
                start[axis] = at as i64;
                let offs = box_offsets(&t.dims, &start, &vec![1; d.len()], &dims);
                konst(&name, take(t, &offs, dims))
            }
            Val::Act(a) => {
                let mut off = vec![0u64; d.len()];
                off[axis] = at;
                Val::Act(extract(l, a, &off, dims, &name))
            }
        };
        outs.push(v);
        at += s;
    }
    Ok(outs)
}

/// DepthToSpace (DCR, CRD) and SpaceToDepth: a 6-D view, one transpose, a
/// 4-D view (folded on constants).
fn space(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, out: &str) -> Result<Val> {
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let b = attrs.int("blocksize", 0);
    if d.len() != 4 || b < 1 {
        return Err(l.err(format!("input {d:?} with blocksize {b}")));
    }
    let b = b as u64;
    let (n, c, h, w) = (d[0], d[1], d[2], d[3]);
    let (six, perm, dims): (Vec<u64>, Vec<usize>, Vec<u64>) = if node.op_type == "SpaceToDepth" {
        if h % b != 0 || w % b != 0 {
            return Err(l.err(format!("spatial dims {h}x{w} are not multiples of {b}")));
        }
        let crd = attrs.string("mode").is_some_and(|m| m == "CRD");
        (
            vec![n, c, h / b, b, w / b, b],
            if crd {
                vec![0, 1, 3, 5, 2, 4]
            } else {
                vec![0, 3, 5, 1, 2, 4]
            },
            vec![n, c * b * b, h / b, w / b],
        )
    } else {
        if c % (b * b) != 0 {
            return Err(l.err(format!("{c} channels are not a multiple of {}", b * b)));
        }
        let crd = attrs.string("mode").is_some_and(|m| m == "CRD");
        let cb = c / (b * b);
        if crd {
            (
                vec![n, cb, b, b, h, w],
                vec![0, 1, 4, 2, 5, 3],
                vec![n, cb, h * b, w * b],
            )
        } else {
            (
                vec![n, b, b, cb, h, w],
                vec![0, 3, 4, 1, 5, 2],
                vec![n, cb, h * b, w * b],
            )
        }
    };
    match x {
        Val::Const { t, .. } => {
            let t = t.reshaped(six).permuted(&perm).reshaped(dims);
            Ok(konst(out, t))
        }
        Val::Act(a) => {
            let p = l.to_plain(&a, out);
            let v6 = l.view(&format!("{out}.6d"), p.v, &six);
            let moved: Vec<u64> = perm.iter().map(|&k| six[k]).collect();
            let kind = l.kind(&a);
            let t = l.alloc_kind(&format!("{out}.moved"), &moved, kind);
            l.transpose(out, t, v6, perm.iter().map(|&k| k as i64).collect());
            let v = l.view(out, t, &dims);
            Ok(Val::Act(Act { v, dims, cl: false }))
        }
    }
}
