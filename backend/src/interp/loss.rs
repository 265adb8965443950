//! The interpreter's activation gradients, loss, loss gradient and `sgd`
//! update, in the operation order of the C kernels in `emit/loss.rs`.

use super::Exec;
use crate::error::BackendError;
use crate::ops;
use glow_ir::member as m;
use glow_ir::{ElemKind, Type};

type R = Result<(), crate::error::BackendError>;

/// `(N, C)` of a 2-D operand.
fn rows_cols(x: &Exec, t: &Type) -> Result<(usize, usize), crate::error::BackendError> {
    match t.dims[..] {
        [n, k] => Ok((n as usize, k as usize)),
        _ => Err(x.unsupported(t)),
    }
}

/// The labels of `name` (index32/index64 only, as the C kernels declare them).
fn labels(x: &Exec, name: &str) -> Result<Vec<i64>, crate::error::BackendError> {
    let t = x.ty(name)?;
    match t.elem {
        ElemKind::Index32 | ElemKind::Index64 => x.ints(name),
        _ => Err(x.unsupported(&t)),
    }
}

/// The column of `label` in a row of `k`, if it is one.
fn column(label: i64, k: usize) -> Option<usize> {
    (label >= 0 && (label as u64) < k as u64).then_some(label as usize)
}

pub fn activation_grad(x: &mut Exec) -> R {
    let op = ops::activation_grad(x.opcode()).ok_or_else(|| x.err("not an activation gradient"))?;
    let (d, g) = (x.f32s("Dest")?, x.f32s("DestGrad")?);
    let out: Vec<f32> = d.iter().zip(&g).map(|(&d, &g)| (op.f)(d, g)).collect();
    x.put_f32s("SrcGrad", &out)
}

pub fn softmax_grad(x: &mut Exec) -> R {
    let t = x.ty("SrcGrad")?;
    let (n, k) = rows_cols(x, &t)?;
    let od = x.f32s("OrigDest")?;
    let sel = labels(x, "Selected")?;
    let mut out = x.scratch(n * k, 0f32)?;
    for r in 0..n {
        for i in 0..k {
            let delta = if i as i64 == sel[r] { 1.0 } else { 0.0 };
            out[r * k + i] = od[r * k + i] - delta;
        }
    }
    x.put_f32s("SrcGrad", &out)
}

pub fn cross_entropy_loss(x: &mut Exec) -> R {
    let t = x.ty("P")?;
    let (n, k) = rows_cols(x, &t)?;
    let p = x.f32s("P")?;
    let lab = labels(x, "Labels")?;
    let log = ops::loss_log();
    let mut s = 0f32;
    for (r, &y) in lab.iter().enumerate().take(n) {
        let term = match column(y, k) {
            Some(j) => -(log.f)(p[r * k + j], &[]),
            None => f32::NAN,
        };
        s += term;
    }
    // CE holds one element (the shape rule), as the C kernel writes CE[0].
    x.put_f32s("CE", &[s / n as f32])
}

pub fn cross_entropy_loss_grad(x: &mut Exec) -> R {
    let t = x.ty("P")?;
    let (n, k) = rows_cols(x, &t)?;
    let cg = x.f32s("CEGrad")?.first().copied().unwrap_or(f32::NAN);
    let p = x.f32s("P")?;
    let lab = labels(x, "Labels")?;
    let lg = x.ty("Labelsgrad")?;
    if !matches!(lg.elem, ElemKind::Index32 | ElemKind::Index64) {
        return Err(x.unsupported(&lg));
    }
    let mut out = x.scratch(n * k, 0f32)?;
    for (r, &y) in lab.iter().enumerate().take(n) {
        let row = &mut out[r * k..r * k + k];
        match column(y, k) {
            Some(j) => row[j] = ((-cg) / p[r * k + j]) / n as f32,
            None => row.fill(f32::NAN),
        }
    }
    x.put_f32s("Pgrad", &out)?;
    x.put_ints("Labelsgrad", &x.scratch(lg.size() as usize, 0)?)
}

pub fn sgd(x: &mut Exec) -> R {
    let params = ops::SgdParams::read(&x.m())?;
    let (w, g, v) = (x.f32s("Weight")?, x.f32s("Gradient")?, x.f32s("Velocity")?);
    let (mut nw, mut nv) = (w.clone(), v.clone());
    for i in 0..w.len() {
        (nw[i], nv[i]) = params.step(w[i], g[i], v[i]);
    }
    x.put_f32s("Weight", &nw)?;
    x.put_f32s("Velocity", &nv)
}

/// The binary cross-entropy losses over logits (docs/training.md, "Binary
/// cross-entropy with logits"), in the C kernel's order.
pub fn bce_with_logits(x: &mut Exec) -> R {
    let info = x.opcode().info();
    let t = x.ty("Input")?;
    let n = t.size() as usize;
    let cols = *t.dims.last().unwrap_or(&1) as usize;
    let input = x.f32s("Input")?;
    let target = x.f32s("Target")?;
    // A weight with `Input`'s dims is read at `i`, a 1-D one at `i % cols`.
    let weight = |x: &Exec, name: &str| -> Result<Option<(Vec<f32>, bool)>, BackendError> {
        if info.operand_index(name).is_none() {
            return Ok(None);
        }
        let full = x.ty(name)?.dims == t.dims;
        Ok(Some((x.f32s(name)?, full)))
    };
    let w = weight(x, "Weight")?;
    let pw = weight(x, "PosWeight")?;
    let at = |v: &(Vec<f32>, bool), i: usize| v.0[if v.1 { i } else { i % cols }];
    let mut out = x.scratch(n, 0f32)?;
    for (i, o) in out.iter_mut().enumerate() {
        let (v, y) = (input[i], target[i]);
        let sp = ops::softplus(-v);
        let mut l = (1.0 - y) * v;
        l = match &pw {
            Some(p) => l + ((at(p, i) - 1.0) * y + 1.0) * sp,
            None => l + sp,
        };
        if let Some(w) = &w {
            l *= at(w, i);
        }
        *o = l;
    }
    match x.m().get(m::LOSS_REDUCTION)? {
        0 => x.put_f32s("Dest", &out),
        r => {
            let mut s = 0f32;
            for &l in &out {
                s += l;
            }
            let v = if r == 1 { s / n as f32 } else { s };
            x.put_f32s("Dest", &[v])
        }
    }
}
