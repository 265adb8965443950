//! The interpreter's normalization gradients (docs/training.md,
//! "Normalization gradients"), in the operation order of the C kernels in
//! `emit/norm_grad.rs`.

use super::Exec;
use crate::error::BackendError;
use crate::ops::{BatchNormGradParams, LrnGradParams};

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

/// `batchnormalizationgrad`, per channel: the two sums over the channel's
/// elements in row-major order, then each `SrcGrad` (docs/training.md).
pub fn batch_norm_grad(x: &mut Exec) -> R {
    let t = x.ty("Src")?;
    let p = BatchNormGradParams::read(&x.m(), &t.dims)?;
    let (src, dg) = (x.f32s("Src")?, x.f32s("DestGrad")?);
    let (scale, mean, var) = (x.f32s("Scale")?, x.f32s("Mean")?, x.f32s("Var")?);
    let (chans, outer, inner) = (p.channels as usize, p.outer as usize, p.inner as usize);
    if dg.len() != src.len()
        || [scale.len(), mean.len(), var.len()]
            .iter()
            .any(|&l| l != chans)
    {
        return Err(x.err("operands of different sizes"));
    }
    let mut sg = x.scratch(src.len(), 0f32)?;
    let (mut scg, mut bg) = (x.scratch(chans, 0f32)?, x.scratch(chans, 0f32)?);
    for c in 0..chans {
        let mu = mean[c];
        let (mut sdy, mut sdyh) = (0f32, 0f32);
        for o in 0..outer {
            let base = (o * chans + c) * inner;
            for i in base..base + inner {
                sdy += dg[i];
                sdyh += dg[i] * (src[i] - mu);
            }
        }
        let inv = 1.0f32 / (var[c] + p.eps);
        let isd = inv.sqrt();
        bg[c] = sdy;
        scg[c] = sdyh * isd;
        let coef1 = p.inv_n * scale[c] * isd;
        let coef2 = inv * sdyh;
        for o in 0..outer {
            let base = (o * chans + c) * inner;
            for i in base..base + inner {
                sg[i] = coef1 * (p.n * dg[i] - sdy - (src[i] - mu) * coef2);
            }
        }
    }
    x.put_f32s("SrcGrad", &sg)?;
    x.put_f32s("ScaleGrad", &scg)?;
    x.put_f32s("BiasGrad", &bg)
}
