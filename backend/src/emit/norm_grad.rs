//! C kernels of the normalization gradients (docs/training.md,
//! "Normalization gradients"): `localresponsenormalizationgrad` and
//! `batchnormalizationgrad`. The
//! interpreter's `interp/norm_grad.rs` computes in the same order.

use super::KCtx;
use crate::error::BackendError;
use crate::ops::{c_float, BatchNormGradParams, LrnGradParams};

/// `localresponsenormalizationgrad`: per element of a row of the last
/// dimension, the window sum of `DestGrad * (Dest / Scale)` taken afresh
/// (no running sum, so no cancellation), then
/// `DestGrad * powf(Scale, -Beta) - (coef * Src) * sum`.
pub fn lrn_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let names = ["Dest", "Src", "Scale", "DestGrad", "SrcGrad"];
    c.require_f32s(&names)?;
    let s = c.ty("Src")?;
    let p = LrnGradParams::read(&c.m())?;
    for n in names {
        c.decl(n, "float")?;
    }
    let cols = *s.dims.last().unwrap_or(&1);
    if cols == 0 || s.size() == 0 {
        return Ok(());
    }
    let rows = s.size() / cols;
    let h = p.half;
    let (nb, coef) = (c_float(p.neg_beta), c_float(p.coef));
    c.w.for_loop("r", rows);
    c.w.for_loop("j", cols);
    c.w.line(&format!("const size_t b = r * {cols}u;"));
    if h > 0 {
        c.w.line(&format!("size_t lo = j >= {h}u ? j - {h}u : 0u;"));
        // `h` may be near 2^63; `j < cols` keeps `j + h` from wrapping.
        c.w.line(&format!(
            "size_t hi = j + {h}u < {cols}u ? j + {h}u : {}u;",
            cols - 1
        ));
    } else {
        c.w.line("size_t lo = j, hi = j;");
    }
    c.w.line("float s = 0.0f;");
    c.w.open("for (size_t t = lo; t <= hi; t++)");
    c.w.line("s = fmaf(DestGrad[b + t], Dest[b + t] / Scale[b + t], s);");
    c.w.close();
    c.w.line(&format!(
        "SrcGrad[b + j] = DestGrad[b + j] * powf(Scale[b + j], {nb}) - {coef} * Src[b + j] * s;"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

/// `batchnormalizationgrad`: per channel, `sum dy` and `sum dy * (h - mu)`
/// over the channel's elements in row-major order, then the three gradients.
pub fn batch_norm_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let names = [
        "Src",
        "Scale",
        "Mean",
        "Var",
        "DestGrad",
        "SrcGrad",
        "ScaleGrad",
        "BiasGrad",
    ];
    c.require_f32s(&names)?;
    let s = c.ty("Src")?;
    let p = BatchNormGradParams::read(&c.m(), &s.dims)?;
    for n in names {
        c.decl(n, "float")?;
    }
    let (chans, outer, inner) = (p.channels, p.outer, p.inner);
    let (eps, n, inv_n) = (c_float(p.eps), c_float(p.n), c_float(p.inv_n));
    if chans == 0 {
        return Ok(());
    }
    // No channel element: the sums stay 0 and no loop over `0u` is written
    // (a warning under -Wextra).
    let elems = outer * inner > 0;
    c.w.for_loop("c", chans);
    c.w.line("float sdy = 0.0f, sdyh = 0.0f;");
    if elems {
        c.w.line("const float mu = Mean[c];");
        c.w.for_loop("o", outer);
        c.w.line(&format!("const size_t b = (o * {chans}u + c) * {inner}u;"));
        c.w.for_loop("i", inner);
        c.w.line("sdy += DestGrad[b + i];");
        c.w.line("sdyh += DestGrad[b + i] * (Src[b + i] - mu);");
        c.w.close();
        c.w.close();
    }
    c.w.line(&format!("const float inv = 1.0f / (Var[c] + {eps});"));
    c.w.line("const float isd = sqrtf(inv);");
    c.w.line("BiasGrad[c] = sdy;");
    c.w.line("ScaleGrad[c] = sdyh * isd;");
    if elems {
        c.w.line(&format!("const float coef1 = {inv_n} * Scale[c] * isd;"));
        c.w.line("const float coef2 = inv * sdyh;");
        c.w.for_loop("o", outer);
        c.w.line(&format!("const size_t b = (o * {chans}u + c) * {inner}u;"));
        c.w.for_loop("i", inner);
        c.w.line(&format!(
            "SrcGrad[b + i] = coef1 * ({n} * DestGrad[b + i] - sdy - (Src[b + i] - mu) * coef2);"
        ));
        c.w.close();
        c.w.close();
    }
    c.w.close();
    Ok(())
}
