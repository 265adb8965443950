//! The interpreter's normalization gradients (docs/training.md,
//! "Normalization gradients"), in the operation order of the C kernels in
//! `emit/norm_grad.rs`.

use super::Exec;
use crate::error::BackendError;
use crate::ops::LrnGradParams;

type R = Result<(), BackendError>;

pub fn lrn_grad(x: &mut Exec) -> R {
    let t = x.ty("Src")?;
    let p = LrnGradParams::read(&x.m())?;
    let (dest, src) = (x.f32s("Dest")?, x.f32s("Src")?);
    let (scale, dg) = (x.f32s("Scale")?, x.f32s("DestGrad")?);
    let n = src.len();
    if [dest.len(), scale.len(), dg.len()].iter().any(|&l| l != n) {
        return Err(x.err("operands of different sizes"));
    }
    let cols = *t.dims.last().unwrap_or(&1) as usize;
    let mut out = x.scratch(n, 0f32)?;
    if cols == 0 || n == 0 {
        return x.put_f32s("SrcGrad", &out);
    }
    let h = usize::try_from(p.half).unwrap_or(usize::MAX);
    for b in (0..n).step_by(cols) {
        for j in 0..cols {
            let lo = j.saturating_sub(h);
            let hi = j.saturating_add(h).min(cols - 1);
            let mut s = 0f32;
            for t in lo..=hi {
                s = dg[b + t].mul_add(dest[b + t] / scale[b + t], s);
            }
            let i = b + j;
            out[i] = dg[i] * scale[i].powf(p.neg_beta) - p.coef * src[i] * s;
        }
    }
    x.put_f32s("SrcGrad", &out)
}
