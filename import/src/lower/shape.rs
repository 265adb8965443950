//! Data-movement and constant ops: Transpose, Reshape, Flatten, Squeeze,
//! Unsqueeze, Concat, Constant, ConstantOfShape. On constants they fold at
//! import time; on activations a reshape is a `tensorview` of the plain
//! (ONNX-order) buffer, a transpose one `transpose` (composed with the
//! channels-last order when the input has it), and a concat is a zero
//! `splat` followed by one `inserttensor` per input, as in Glow's IRGen.

use super::{cl_perm, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::{self, Data, StrippedPolicy, Tensor};
use glow_ir::member as m;
use glow_ir::Opcode;

pub(super) fn lower(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let attrs = Attrs(&node.attribute);
    let v = match node.op_type.as_str() {
        "Constant" => constant(l, &attrs, &out)?,
        "ConstantOfShape" => {
            let shape = l.const_input(node, 0)?.to_i64();
            let (dims, n) = tensor::checked_dims(&out, &shape).map_err(|e| l.err(e.to_string()))?;
            l.reserve_const(&out, 4 * n)?;
            let value = match attrs.tensor("value") {
                Some(tp) => decode(l, tp)?.to_f32().first().copied().unwrap_or(0.0),
                None => 0.0,
            };
            Val::Const {
                name: out.clone(),
                t: Tensor::f32(dims, vec![value; n as usize]).into(),
            }
        }
        "Transpose" => transpose(l, node, &attrs, &out)?,
        "Concat" => concat(l, node, &attrs, &out)?,
        _ => {
            let x = l.input(node, 0)?;
            let dims = new_dims(l, node, &attrs, &x)?;
            reshape(l, &x, dims, &out)?
        }
    };
    Ok(vec![v])
}

fn decode(l: &Lowerer, tp: &crate::onnx::TensorProto) -> Result<Tensor> {
    let policy = StrippedPolicy {
        fill_seed: l.opts.fill_stripped,
    };
    tensor::decode(tp, l.opts.base_dir.as_deref(), policy)
}

fn constant(l: &Lowerer, attrs: &Attrs, out: &str) -> Result<Val> {
    let t = if let Some(tp) = attrs.tensor("value") {
        decode(l, tp)?
    } else if attrs.has("value_float") {
        Tensor::f32(vec![], vec![attrs.float("value_float", 0.0)])
    } else if let Some(v) = attrs.floats("value_floats") {
        Tensor::f32(vec![v.len() as u64], v.to_vec())
    } else if attrs.has("value_int") {
        Tensor::i64(vec![], vec![attrs.int("value_int", 0)])
    } else if let Some(v) = attrs.ints("value_ints") {
        Tensor::i64(vec![v.len() as u64], v.to_vec())
    } else {
        return Err(l.unsupported("a Constant without a tensor, float or int value"));
    };
    Ok(Val::Const {
        name: out.to_string(),
        t: t.into(),
    })
}

/// The output dims of Reshape, Flatten, Squeeze, Unsqueeze.
fn new_dims(l: &Lowerer, node: &NodeProto, attrs: &Attrs, x: &Val) -> Result<Vec<u64>> {
    let d = x.dims().to_vec();
    let total: u64 = d.iter().product();
    // Axes come from an attribute before opset 13, from input 1 after.
    let axes_of = |l: &Lowerer| -> Result<Option<Vec<i64>>> {
        if let Some(a) = attrs.ints("axes") {
            return Ok(Some(a.to_vec()));
        }
        match l.opt_input(node, 1)? {
            Some(_) => Ok(Some(l.const_input(node, 1)?.to_i64())),
            None => Ok(None),
        }
    };
    match node.op_type.as_str() {
        "Flatten" => {
            let axis = attrs.int("axis", 1);
            let axis = if axis == d.len() as i64 {
                d.len()
            } else {
                norm_axis(l, axis, d.len())?
            };
            let rows: u64 = d[..axis].iter().product();
            Ok(vec![rows, total / rows.max(1)])
        }
        "Squeeze" => {
            let axes = axes_of(l)?;
            let drop: Vec<usize> = match axes {
                Some(a) => a
                    .iter()
                    .map(|&x| norm_axis(l, x, d.len()))
                    .collect::<Result<_>>()?,
                None => (0..d.len()).filter(|&i| d[i] == 1).collect(),
            };
            if drop.iter().any(|&i| d[i] != 1) {
                return Err(l.err(format!("cannot squeeze axes {drop:?} of {d:?}")));
            }
            Ok((0..d.len())
                .filter(|i| !drop.contains(i))
                .map(|i| d[i])
                .collect())
        }
        "Unsqueeze" => {
            let axes = axes_of(l)?.ok_or_else(|| l.err("Unsqueeze without axes"))?;
            let r = d.len() + axes.len();
            let mut ins: Vec<usize> = axes
                .iter()
                .map(|&x| norm_axis(l, x, r))
                .collect::<Result<_>>()?;
            ins.sort_unstable();
            let mut src = d.iter();
            Ok((0..r)
                .map(|i| {
                    if ins.contains(&i) {
                        1
                    } else {
                        src.next().copied().unwrap_or(1)
                    }
                })
                .collect())
        }
        _ => {
            let shape = if l.opset < 5 {
                attrs.ints("shape").unwrap_or(&[]).to_vec()
            } else {
                l.const_input(node, 1)?.to_i64()
            };
            let allow_zero = attrs.int("allowzero", 0) != 0;
            reshape_dims(l, &d, &shape, allow_zero)
        }
    }
}

/// Resolves 0 (copy) and -1 (infer) in a Reshape target.
fn reshape_dims(l: &Lowerer, d: &[u64], shape: &[i64], allow_zero: bool) -> Result<Vec<u64>> {
    let total: u64 = d.iter().product();
    let mut out = Vec::with_capacity(shape.len());
    let mut infer = None;
    for (i, &s) in shape.iter().enumerate() {
        match s {
            -1 if infer.is_none() => {
                infer = Some(i);
                out.push(1);
            }
            0 if !allow_zero => out.push(*d.get(i).ok_or_else(|| l.err("0 past the input rank"))?),
            0 => return Err(l.unsupported("zero-size tensors (a 0 dim with allowzero)")),
            s if s > 0 => out.push(s as u64),
            _ => return Err(l.err(format!("bad reshape target {shape:?}"))),
        }
    }
    let known: u64 = out.iter().product();
    if let Some(i) = infer {
        if known == 0 || !total.is_multiple_of(known) {
            return Err(l.err(format!("cannot reshape {d:?} to {shape:?}")));
        }
        out[i] = total / known;
    }
    if out.iter().product::<u64>() != total || out.contains(&0) {
        return Err(l.err(format!("cannot reshape {d:?} to {shape:?}")));
    }
    Ok(out)
}

/// A value with new dims and the same elements in ONNX order.
fn reshape(l: &mut Lowerer, x: &Val, dims: Vec<u64>, out: &str) -> Result<Val> {
    if let Val::Const { t, .. } = x {
        return Ok(Val::Const {
            name: out.to_string(),
            t: t.reshaped(dims).into(),
        });
    }
    let a = l.act(x);
    let p = l.to_plain(&a, out);
    let v = l.view(out, p.v, &super::ir_dims(&dims));
    Ok(Val::Act(Act { v, dims, cl: false }))
}

fn transpose(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, out: &str) -> Result<Val> {
    let x = l.input(node, 0)?;
    let r = x.dims().len();
    let perm: Vec<usize> = match attrs.ints("perm") {
        Some(p) => p
            .iter()
            .map(|&i| norm_axis(l, i, r))
            .collect::<Result<_>>()?,
        None => (0..r).rev().collect(),
    };
    let mut seen = vec![false; r];
    if perm.len() != r || perm.iter().any(|&p| std::mem::replace(&mut seen[p], true)) {
        return Err(l.err(format!("perm {perm:?} is not a permutation of rank {r}")));
    }
    if let Val::Const { t, .. } = &x {
        return Ok(Val::Const {
            name: out.to_string(),
            t: t.permuted(&perm).into(),
        });
    }
    let a = l.act(&x);
    let dims: Vec<u64> = perm.iter().map(|&p| a.dims[p]).collect();
    // Physical position of each logical axis of the input.
    let pos: Vec<usize> = if a.cl {
        let p = cl_perm(r);
        let mut inv = vec![0; r];
        for (i, &x) in p.iter().enumerate() {
            inv[x] = i;
        }
        inv
    } else {
        (0..r).collect()
    };
    let shuffle: Vec<i64> = perm.iter().map(|&p| pos[p] as i64).collect();
    let kind = l.kind(&a);
    let dest = l.alloc_kind(out, &super::ir_dims(&dims), kind);
    let base = if node.name.is_empty() {
        out
    } else {
        &node.name
    };
    let base = base.to_string();
    let shuffle = if r == 0 { vec![0] } else { shuffle };
    l.transpose(&base, dest, a.v, shuffle);
    Ok(Val::Act(Act {
        v: dest,
        dims,
        cl: false,
    }))
}

fn concat(l: &mut Lowerer, node: &NodeProto, attrs: &Attrs, out: &str) -> Result<Val> {
    let inputs: Vec<Val> = (0..node.input.len())
        .filter_map(|i| l.opt_input(node, i).transpose())
        .collect::<Result<_>>()?;
    let first = inputs
        .first()
        .ok_or_else(|| l.err("Concat without inputs"))?;
    let r = first.dims().len();
    let axis = norm_axis(l, attrs.int("axis", 0), r)?;
    let mut dims = first.dims().to_vec();
    dims[axis] = 0;
    for v in &inputs {
        let d = v.dims();
        let same = d.len() == r && (0..r).all(|i| i == axis || d[i] == dims[i]);
        if !same {
            return Err(l.err(format!("input dims {d:?} do not concatenate along {axis}")));
        }
        dims[axis] += d[axis];
    }
    if inputs.iter().all(|v| matches!(v, Val::Const { .. })) {
        l.reserve_dims(out, &dims)?;
        return Ok(Val::Const {
            name: out.to_string(),
            t: fold_concat(&inputs, axis, &dims).into(),
        });
    }
    let cl = inputs.iter().any(|v| matches!(v, Val::Act(a) if a.cl));
    let phys = if cl {
        super::cl_dims(&dims)
    } else {
        dims.clone()
    };
    let paxis = if cl {
        cl_perm(r).iter().position(|&p| p == axis).unwrap_or(axis)
    } else {
        axis
    };
    let base = if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    };
    // The kind of the activation inputs; constants follow it.
    let kind = inputs
        .iter()
        .find_map(|v| match v {
            Val::Act(a) => Some(l.kind(a)),
            Val::Const { .. } => None,
        })
        .unwrap_or(glow_ir::ElemKind::Float);
    let dest = l.splat_buffer_kind(out, &phys, 0.0, kind);
    let mut offset = 0i64;
    for v in &inputs {
        if v.dims().contains(&0) {
            // Nothing to insert.
            continue;
        }
        let a = l.act_kind(v, kind);
        let a = if cl {
            l.to_cl(&a, out)
        } else {
            l.to_plain(&a, out)
        };
        let mut offs = vec![0i64; phys.len()];
        offs[paxis] = offset;
        offset += a.dims[axis] as i64;
        let members = [m::OFFSETS.to(offs)];
        l.inst(&base, Opcode::InsertTensor, &[dest, a.v], &members);
    }
    Ok(Val::Act(Act { v: dest, dims, cl }))
}

/// Concatenation of constants along `axis`.
fn fold_concat(inputs: &[Val], axis: usize, dims: &[u64]) -> Tensor {
    let outer: u64 = dims[..axis].iter().product();
    let ts: Vec<&Tensor> = inputs
        .iter()
        .filter_map(|v| match v {
            Val::Const { t, .. } => Some(&**t),
            Val::Act(_) => None,
        })
        .collect();
    let chunk = |t: &Tensor| t.dims[axis..].iter().product::<u64>() as usize;
    if ts.iter().all(|t| matches!(t.data, Data::I64(_))) {
        let mut v = Vec::new();
        for o in 0..outer as usize {
            for t in &ts {
                let c = chunk(t);
                v.extend_from_slice(&t.to_i64()[o * c..(o + 1) * c]);
            }
        }
        return Tensor::i64(dims.to_vec(), v);
    }
    let all: Vec<Vec<f32>> = ts.iter().map(|t| t.to_f32()).collect();
    let mut v = Vec::new();
    for o in 0..outer as usize {
        for (t, data) in ts.iter().zip(&all) {
            let c = chunk(t);
            v.extend_from_slice(&data[o * c..(o + 1) * c]);
        }
    }
    Tensor::f32(dims.to_vec(), v)
}
