//! C kernels of the pairwise dot products of variadic inputs, their
//! gradient and `thresholdgrad`; the interpreter's `interp/pairwise.rs`
//! computes in the same order.

use super::KCtx;
use crate::error::BackendError;
use crate::ops::c_float;

/// `Dest[b, p]` = the dot product of rows `b` of the pair `(i, j)`, `j <
/// i`, columns in `i`-then-`j` order; fused multiply-adds from +0.
pub fn pairwise_dot(c: &mut KCtx) -> Result<(), BackendError> {
    let d = c.ty("Dest")?;
    c.require_f32(&d)?;
    let range = c.inst.operand_list("Inputs").unwrap_or(1..1);
    let first = c.ty_at(range.start)?;
    for k in range {
        c.require_f32(&c.ty_at(k)?)?;
    }
    let (batch, cols, v) = (d.dims[0], d.dims[1], first.dims[1]);
    c.decl("Dest", "float")?;
    let n = c.decl_list("Inputs", "float")?;
    c.w.line("size_t p = 0;");
    c.w.open(&format!("for (size_t i = 1; i < {n}u; i++)"));
    c.w.open("for (size_t j = 0; j < i; j++, p++)");
    c.w.for_loop("b", batch);
    c.w.line(&format!(
        "const float *a = Inputs[i] + b * {v}u, *o = Inputs[j] + b * {v}u;"
    ));
    c.w.line("float acc = 0.0f;");
    c.w.for_loop("k", v);
    c.w.line("acc = fmaf(a[k], o[k], acc);");
    c.w.close();
    c.w.line(&format!("Dest[b * {cols}u + p] = acc;"));
    c.w.close();
    c.w.close();
    c.w.close();
    Ok(())
}

/// Each `SrcGrads[i]` from +0, then for each pair `p = (i, j)` in column
/// order `SrcGrads[i][b] += DestGrad[b, p] * Srcs[j][b]` and
/// `SrcGrads[j][b] += DestGrad[b, p] * Srcs[i][b]` (fused multiply-adds).
pub fn pairwise_dot_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let d = c.ty("DestGrad")?;
    c.require_f32(&d)?;
    let range = c.inst.operand_list("Srcs").unwrap_or(1..1);
    let first = c.ty_at(range.start)?;
    let grads = c.inst.operand_list("SrcGrads").unwrap_or(1..1);
    for k in range.chain(grads) {
        c.require_f32(&c.ty_at(k)?)?;
    }
    let (batch, cols, v) = (d.dims[0], d.dims[1], first.dims[1]);
    c.decl("DestGrad", "float")?;
    let n = c.decl_list("SrcGrads", "float")?;
    c.decl_list("Srcs", "float")?;
    c.w.open(&format!("for (size_t i = 0; i < {n}u; i++)"));
    c.w.for_loop("e", batch * v);
    c.w.line("SrcGrads[i][e] = 0.0f;");
    c.w.close();
    c.w.close();
    c.w.line("size_t p = 0;");
    c.w.open(&format!("for (size_t i = 1; i < {n}u; i++)"));
    c.w.open("for (size_t j = 0; j < i; j++, p++)");
    c.w.for_loop("b", batch);
    c.w.line(&format!("const float g = DestGrad[b * {cols}u + p];"));
    c.w.for_loop("k", v);
    c.w.line(&format!("const size_t e = b * {v}u + k;"));
    c.w.line("SrcGrads[i][e] = fmaf(g, Srcs[j][e], SrcGrads[i][e]);");
    c.w.line("SrcGrads[j][e] = fmaf(g, Srcs[i][e], SrcGrads[j][e]);");
    c.w.close();
    c.w.close();
    c.w.close();
    c.w.close();
    Ok(())
}

/// `thresholdgrad`: `Input <= Threshold ? 0 : Grad`.
pub fn threshold_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let d = c.ty("Dest")?;
    for name in ["Dest", "Grad", "Input"] {
        c.require_f32(&c.ty(name)?)?;
    }
    let t = c.m().get(glow_ir::member::THRESHOLD)? as f32;
    c.decl("Dest", "float")?;
    c.decl("Grad", "float")?;
    c.decl("Input", "float")?;
    c.w.for_loop("i", d.size());
    c.w.line(&format!(
        "Dest[i] = Input[i] <= {} ? 0.0f : Grad[i];",
        c_float(t)
    ));
    c.w.close();
    Ok(())
}
