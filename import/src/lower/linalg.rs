//! Matrix ops and Softmax. Gemm with a constant `B` becomes
//! `fullyconnected` (B transposed and scaled by alpha at import time, a
//! `[N]` C as the bias); other Gemms and MatMul become `matmul` /
//! `batchmatmul` on plain (ONNX-order) operands. Softmax and LogSoftmax,
//! 2-D in the IR, run on a `rows x axis` view, with transposes when the axis
//! is not last.

use super::elementwise::broadcast_dims;
use super::{norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::{Opcode, Value};

fn base_name(node: &NodeProto, out: &str) -> String {
    if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    }
}

fn scaled(t: &Tensor, s: f32) -> Tensor {
    if s == 1.0 {
        return t.clone();
    }
    Tensor::f32(t.dims.clone(), t.to_f32().iter().map(|x| x * s).collect())
}

/// A plain activation of a value, with a 2-D check.
fn plain_2d(l: &mut Lowerer, v: &Val, out: &str, what: &str) -> Result<Act> {
    let a = l.act(v);
    let a = l.to_plain(&a, out);
    if a.dims.len() != 2 {
        return Err(l.err(format!("{what} must be 2-D, found {:?}", a.dims)));
    }
    Ok(a)
}

pub(super) fn gemm(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = base_name(node, &out);
    let attrs = Attrs(&node.attribute);
    let (alpha, beta) = (attrs.float("alpha", 1.0), attrs.float("beta", 1.0));
    let (ta, tb) = (attrs.int("transA", 0) != 0, attrs.int("transB", 0) != 0);
    let a_val = l.input(node, 0)?;
    let mut a = plain_2d(l, &a_val, &out, "A")?;
    if ta {
        let dims = vec![a.dims[1], a.dims[0]];
        let t = l.alloc(&format!("{out}.At"), &dims);
        l.transpose(&base, t, a.v, vec![1, 0]);
        a = Act {
            v: t,
            dims,
            cl: false,
        };
    }
    let (m, k) = (a.dims[0], a.dims[1]);
    let b_val = l.input(node, 1)?;
    let c_val = l.opt_input(node, 2)?;
    if let Val::Const { t: bt, .. } = &b_val {
        if bt.dims.len() != 2 {
            return Err(l.err(format!("B must be 2-D, found {:?}", bt.dims)));
        }
        let bt = if tb {
            bt.permuted(&[1, 0])
        } else {
            (**bt).clone()
        };
        let n = bt.dims[1];
        if bt.dims[0] != k {
            return Err(l.err(format!("A is {m}x{k} but B is {:?}", bt.dims)));
        }
        let weights = l.const_weight(&node.input[1], &scaled(&bt, alpha));
        // A C of N values (or one) is the bias; anything else is added after.
        let (bias, rest) = match &c_val {
            None => (None, None),
            Some(Val::Const { t, .. }) if t.len() as u64 == n && t.dims.last() == Some(&n) => {
                (Some(scaled(t, beta).reshaped(vec![n])), None)
            }
            Some(Val::Const { t, .. }) if t.len() == 1 => {
                let v = t.to_f32()[0] * beta;
                (Some(Tensor::f32(vec![n], vec![v; n as usize])), None)
            }
            Some(c) => (None, Some(c.clone())),
        };
        let bias = bias.unwrap_or_else(|| Tensor::f32(vec![n], vec![0.0; n as usize]));
        let bname = node.input.get(2).filter(|s| !s.is_empty()).cloned();
        let bias = l.const_weight(&bname.unwrap_or(format!("{out}.bias")), &bias);
        let dest = l.alloc(&out, &[m, n]);
        l.inst(
            &base,
            Opcode::FullyConnected,
            &[dest, a.v, weights, bias],
            &[],
        );
        let y = Val::Act(Act {
            v: dest,
            dims: vec![m, n],
            cl: false,
        });
        return add_c(l, node, y, rest, beta, &out);
    }
    // General case: B is an activation.
    let mut b = plain_2d(l, &b_val, &out, "B")?;
    if tb {
        let dims = vec![b.dims[1], b.dims[0]];
        let t = l.alloc(&format!("{out}.Bt"), &dims);
        l.transpose(&base, t, b.v, vec![1, 0]);
        b = Act {
            v: t,
            dims,
            cl: false,
        };
    }
    if b.dims[0] != k {
        return Err(l.err(format!("A is {m}x{k} but B is {:?}", b.dims)));
    }
    let n = b.dims[1];
    let dest = l.alloc(&out, &[m, n]);
    l.inst(&base, Opcode::MatMul, &[dest, a.v, b.v], &[]);
    if alpha != 1.0 {
        let s = l.splat_buffer(&format!("{out}.alpha"), &[m, n], alpha as f64);
        l.inst(&base, Opcode::ElementMul, &[dest, dest, s], &[]);
    }
    let y = Val::Act(Act {
        v: dest,
        dims: vec![m, n],
        cl: false,
    });
    add_c(l, node, y, c_val, beta, &out)
}

/// `y + beta * c` with broadcasting (through the Add lowering).
fn add_c(
    l: &mut Lowerer,
    node: &NodeProto,
    y: Val,
    c: Option<Val>,
    beta: f32,
    out: &str,
) -> Result<Vec<Val>> {
    let Some(c) = c else { return Ok(vec![y]) };
    let c = match c {
        Val::Const { name, t } => Val::Const {
            name,
            t: scaled(&t, beta).into(),
        },
        Val::Act(a) if beta != 1.0 => {
            let phys = a.phys();
            let s = l.splat_buffer(&format!("{out}.beta"), &phys, beta as f64);
            let d = l.alloc(&format!("{out}.c"), &phys);
            l.inst(
                &format!("{out}.beta"),
                Opcode::ElementMul,
                &[d, a.v, s],
                &[],
            );
            Val::Act(Act { v: d, ..a })
        }
        c => c,
    };
    let name = format!("{}.addc", base_name(node, out));
    let sum =
        super::elementwise::apply(l, Opcode::ElementAdd, &y, &c, &format!("{out}.sum"), &name)?;
    Ok(vec![sum])
}

pub(super) fn matmul(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = base_name(node, &out);
    let (av, bv) = (l.input(node, 0)?, l.input(node, 1)?);
    let a = l.act(&av);
    let a = l.to_plain(&a, &out);
    let b = l.act(&bv);
    let b = l.to_plain(&b, &out);
    if a.dims.is_empty() || b.dims.is_empty() {
        return Err(l.err("MatMul of a scalar"));
    }
    // 1-D operands: [K] is [1, K] on the left and [K, 1] on the right.
    let ad = if a.dims.len() == 1 {
        vec![1, a.dims[0]]
    } else {
        a.dims.clone()
    };
    let bd = if b.dims.len() == 1 {
        vec![b.dims[0], 1]
    } else {
        b.dims.clone()
    };
    let (m, k) = (ad[ad.len() - 2], ad[ad.len() - 1]);
    let (k2, n) = (bd[bd.len() - 2], bd[bd.len() - 1]);
    if k != k2 {
        return Err(l.err(format!("inner dims differ: {:?} x {:?}", a.dims, b.dims)));
    }
    let batch = broadcast_dims(l, &ad[..ad.len() - 2], &bd[..bd.len() - 2])?;
    let mut odims = batch.clone();
    if a.dims.len() > 1 {
        odims.push(m);
    }
    if b.dims.len() > 1 {
        odims.push(n);
    }
    let nb: u64 = batch.iter().product();
    let dest = l.alloc(&out, &odims);
    if batch.is_empty() {
        let av = l.view(&format!("{out}.lhs"), a.v, &[m, k]);
        let bv = l.view(&format!("{out}.rhs"), b.v, &[k, n]);
        let dv = l.view(&format!("{out}.mm"), dest, &[m, n]);
        l.inst(&base, Opcode::MatMul, &[dv, av, bv], &[]);
    } else {
        let av = batched(l, a.v, &ad, &batch, &out);
        let bv = batched(l, b.v, &bd, &batch, &out);
        let av = l.view(&format!("{out}.lhs"), av, &[nb, m, k]);
        let bv = l.view(&format!("{out}.rhs"), bv, &[nb, k, n]);
        let dv = l.view(&format!("{out}.mm"), dest, &[nb, m, n]);
        l.inst(&base, Opcode::BatchMatMul, &[dv, av, bv], &[]);
    }
    Ok(vec![Val::Act(Act {
        v: dest,
        dims: odims,
        cl: false,
    })])
}

/// An operand of dims `d` (matrix last) tiled to the full batch dims.
fn batched(l: &mut Lowerer, v: Value, d: &[u64], batch: &[u64], out: &str) -> Value {
    let mat = &d[d.len() - 2..];
    let mut full = batch.to_vec();
    full.extend_from_slice(mat);
    let mut cur = vec![1u64; batch.len() + 2 - d.len()];
    cur.extend_from_slice(d);
    if cur == full {
        return v;
    }
    let src = l.view(&format!("{out}.bview"), v, &cur);
    l.tile(out, src, &mut cur, &full, batch.len())
}

/// Softmax and LogSoftmax (`opcode`): pre-13 opsets coerce to 2-D at
/// `axis`, later ones normalize over `axis` alone.
pub(super) fn softmax(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = base_name(node, &out);
    let opcode = if node.op_type == "LogSoftmax" {
        Opcode::LogSoftMax
    } else {
        Opcode::SoftMax
    };
    let x = l.input(node, 0)?;
    let a = l.act(&x);
    let a = l.to_plain(&a, &out);
    let r = a.dims.len().max(1);
    let attrs = Attrs(&node.attribute);
    let old = l.opset < 13;
    let axis = norm_axis(l, attrs.int("axis", if old { 1 } else { -1 }), r)?;
    Ok(vec![Val::Act(softmax_act(
        l, opcode, &a, axis, old, &out, &base,
    ))])
}

/// `opcode` (softmax or logsoftmax) of the plain activation `a` over
/// `axis`, or over all dimensions from `axis` on with `coerce` (2-D).
pub(super) fn softmax_act(
    l: &mut Lowerer,
    opcode: Opcode,
    a: &Act,
    axis: usize,
    coerce: bool,
    out: &str,
    base: &str,
) -> Act {
    let r = a.dims.len().max(1);
    let dims = super::ir_dims(&a.dims);
    let dest = l.alloc(out, &dims);
    if coerce || axis == r - 1 {
        // Coerce to 2-D at `axis` (pre-13 semantics; the same for the last axis).
        let rows: u64 = dims[..axis].iter().product();
        let cols: u64 = dims[axis..].iter().product();
        let sv = l.view(&format!("{out}.2d"), a.v, &[rows, cols]);
        let dv = l.view(&format!("{out}.2d"), dest, &[rows, cols]);
        l.inst(base, opcode, &[dv, sv], &[]);
    } else {
        // Move `axis` last, normalize rows, move it back.
        let mut perm: Vec<usize> = (0..r).filter(|&i| i != axis).collect();
        perm.push(axis);
        let pd: Vec<u64> = perm.iter().map(|&p| dims[p]).collect();
        let t = l.alloc(&format!("{out}.moved"), &pd);
        l.transpose(base, t, a.v, perm.iter().map(|&p| p as i64).collect());
        let cols = dims[axis];
        let rows = pd.iter().product::<u64>() / cols;
        let s = l.alloc(&format!("{out}.sm"), &pd);
        let tv = l.view(&format!("{out}.2d"), t, &[rows, cols]);
        let sv = l.view(&format!("{out}.2d"), s, &[rows, cols]);
        l.inst(base, opcode, &[sv, tv], &[]);
        let mut inv = vec![0i64; r];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i as i64;
        }
        l.transpose(base, dest, s, inv);
    }
    Act {
        v: dest,
        dims: a.dims.clone(),
        cl: false,
    }
}
