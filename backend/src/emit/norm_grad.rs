//! C kernels of the normalization gradients (docs/training.md,
//! "Normalization gradients"): `localresponsenormalizationgrad`. The
//! interpreter's `interp/norm_grad.rs` computes in the same order.

use super::KCtx;
use crate::error::BackendError;
use crate::ops::{c_float, LrnGradParams};

/// `localresponsenormalizationgrad`: per element of a row of the last
/// dimension, the window sum of `DestGrad * (Dest / Scale)` taken afresh
/// (no running sum, so no cancellation), then
/// `DestGrad * powf(Scale, -Beta) - (coef * Src) * sum`.
pub fn lrn_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let names = ["Dest", "Src", "Scale", "DestGrad", "SrcGrad"];
    for n in names {
        let t = c.ty(n)?;
        c.require_f32(&t)?;
    }
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
