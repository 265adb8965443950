//! C kernels of the activation gradients, the loss, its gradients and the
//! `sgd` update (docs/training.md, "Activation gradients, loss and
//! update"). The operators come from `ops.rs`; the interpreter's
//! `interp/loss.rs` computes in the same order.

use super::KCtx;
use crate::elem::ctype;
use crate::error::BackendError;
use crate::ops::{self, c_float};
use glow_ir::{ElemKind, Type};

/// Fails unless `t` is an index kind (the labels' C type follows it).
fn require_index(c: &KCtx, t: &Type) -> Result<(), BackendError> {
    match t.elem {
        ElemKind::Index32 | ElemKind::Index64 => Ok(()),
        _ => Err(c.unsupported(t)),
    }
}

/// `(N, C)` of a 2-D operand.
fn rows_cols(c: &KCtx, t: &Type) -> Result<(u64, u64), BackendError> {
    match t.dims[..] {
        [n, k] => Ok((n, k)),
        _ => Err(c.unsupported(t)),
    }
}

/// `relugrad`, `sigmoidgrad`, `tanhgrad`: `ops::ACTIVATION_GRAD` per
/// element (`SrcGrad` may be `DestGrad` itself: each element is read first).
pub fn activation_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let op =
        ops::activation_grad(c.inst.opcode).ok_or_else(|| c.err("not an activation gradient"))?;
    let (d, g, s) = (c.ty("Dest")?, c.ty("DestGrad")?, c.ty("SrcGrad")?);
    for t in [&d, &g, &s] {
        c.require_f32(t)?;
    }
    c.decl("Dest", "float")?;
    c.decl("DestGrad", "float")?;
    c.decl("SrcGrad", "float")?;
    c.w.for_loop("i", s.size());
    c.w.line("const float d = Dest[i], g = DestGrad[i];");
    c.w.line(&format!("SrcGrad[i] = {};", op.c));
    c.w.close();
    Ok(())
}

/// `softmaxgrad`: `OrigDest[n, i] - (i == Selected[n] ? 1 : 0)`; a label
/// out of range subtracts nothing (no element is read through it).
pub fn softmax_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let (od, sel, sg) = (c.ty("OrigDest")?, c.ty("Selected")?, c.ty("SrcGrad")?);
    c.require_f32(&od)?;
    c.require_f32(&sg)?;
    require_index(c, &sel)?;
    let (n, k) = rows_cols(c, &sg)?;
    c.decl("OrigDest", "float")?;
    c.decl("Selected", ctype(sel.elem))?;
    c.decl("SrcGrad", "float")?;
    c.w.for_loop("n", n);
    c.w.line("const int64_t y = (int64_t)Selected[n];");
    c.w.for_loop("i", k);
    c.w.line(&format!(
        "SrcGrad[n * {k}u + i] = OrigDest[n * {k}u + i] - ((int64_t)i == y ? 1.0f : 0.0f);"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

/// `crossentropyloss`: `s = s + (-logf(P[n, y_n]))` for n ascending from
/// +0, then `s / N`; a label out of `[0, C)` adds NaN instead of reading.
pub fn cross_entropy_loss(c: &mut KCtx) -> Result<(), BackendError> {
    let (p, labels, ce) = (c.ty("P")?, c.ty("Labels")?, c.ty("CE")?);
    c.require_f32(&p)?;
    c.require_f32(&ce)?;
    require_index(c, &labels)?;
    let (n, k) = rows_cols(c, &p)?;
    let log = ops::loss_log();
    c.decl("P", "float")?;
    c.decl("Labels", ctype(labels.elem))?;
    c.decl("CE", "float")?;
    c.w.line("float s = 0.0f;");
    c.w.for_loop("n", n);
    c.w.line("const int64_t y = (int64_t)Labels[n];");
    c.w.line("float t = NAN;");
    c.w.open(&format!("if (y >= 0 && y < {k})"));
    c.w.line(&format!("const float x = P[n * {k}u + (size_t)y];"));
    c.w.line(&format!("t = -({});", log.c));
    c.w.close();
    c.w.line("s = s + t;");
    c.w.close();
    c.w.line(&format!("CE[0] = s / {};", c_float(n as f32)));
    Ok(())
}

/// `crossentropylossgrad`: `Pgrad` zero but `((-CEGrad) / P[n, y_n]) / N`
/// at each label (a row of NaN for a label out of range), `Labelsgrad` 0.
pub fn cross_entropy_loss_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let (cg, p, labels) = (c.ty("CEGrad")?, c.ty("P")?, c.ty("Labels")?);
    let (pg, lg) = (c.ty("Pgrad")?, c.ty("Labelsgrad")?);
    for t in [&cg, &p, &pg] {
        c.require_f32(t)?;
    }
    require_index(c, &labels)?;
    require_index(c, &lg)?;
    let (n, k) = rows_cols(c, &p)?;
    c.decl("CEGrad", "float")?;
    c.decl("P", "float")?;
    c.decl("Labels", ctype(labels.elem))?;
    c.decl("Pgrad", "float")?;
    c.decl("Labelsgrad", ctype(lg.elem))?;
    c.w.line("const float cg = CEGrad[0];");
    c.w.for_loop("n", n);
    c.w.line("const int64_t y = (int64_t)Labels[n];");
    c.w.open(&format!("if (y >= 0 && y < {k})"));
    // Read before the row is cleared.
    c.w.line(&format!("const float x = P[n * {k}u + (size_t)y];"));
    c.w.line(&format!(
        "for (size_t j = 0; j < {k}u; j++) Pgrad[n * {k}u + j] = 0.0f;"
    ));
    c.w.line(&format!(
        "Pgrad[n * {k}u + (size_t)y] = ((-cg) / x) / {};",
        c_float(n as f32)
    ));
    c.w.close();
    c.w.open("else");
    c.w.line(&format!(
        "for (size_t j = 0; j < {k}u; j++) Pgrad[n * {k}u + j] = NAN;"
    ));
    c.w.close();
    c.w.close();
    c.w.for_loop("i", lg.size());
    c.w.line(&format!("Labelsgrad[i] = ({})0;", ctype(lg.elem)));
    c.w.close();
    Ok(())
}

/// `sgd`: per element, the statements of `ops::SgdParams::c_body`.
pub fn sgd(c: &mut KCtx) -> Result<(), BackendError> {
    let (w, g, v) = (c.ty("Weight")?, c.ty("Gradient")?, c.ty("Velocity")?);
    for t in [&w, &g, &v] {
        c.require_f32(t)?;
    }
    let params = ops::SgdParams::read(&c.m())?;
    c.decl("Weight", "float")?;
    c.decl("Gradient", "float")?;
    c.decl("Velocity", "float")?;
    c.w.for_loop("i", w.size());
    c.w.line("float w = Weight[i], g = Gradient[i], v = Velocity[i];");
    for line in params.c_body() {
        c.w.line(&line);
    }
    c.w.line("Weight[i] = w;");
    c.w.line("Velocity[i] = v;");
    c.w.close();
    Ok(())
}

/// The binary cross-entropy losses over logits (docs/training.md, "Binary
/// cross-entropy with logits"): per element `(1 - t) * x` plus
/// `softplus(-x)` (times `(PosWeight - 1) * t + 1`), times `Weight`; then
/// summed from +0 in order for a reduction (divided by the count for mean).
pub fn bce_with_logits(c: &mut KCtx) -> Result<(), BackendError> {
    let info = c.inst.opcode.info();
    let (d, t) = (c.ty("Dest")?, c.ty("Input")?);
    c.require_f32(&d)?;
    c.require_f32(&t)?;
    let n = t.size();
    let cols = *t.dims.last().unwrap_or(&1);
    let reduction = c.m().get(glow_ir::member::LOSS_REDUCTION)?;
    c.decl("Dest", "float")?;
    c.decl("Input", "float")?;
    c.decl("Target", "float")?;
    // A weight with `Input`'s dims is read at `i`, a 1-D one at `i % cols`.
    let mut index = |name: &str| -> Result<Option<&'static str>, BackendError> {
        if info.operand_index(name).is_none() {
            return Ok(None);
        }
        let w = c.ty(name)?;
        c.require_f32(&w)?;
        c.decl(name, "float")?;
        Ok(Some(if w.dims == t.dims { "i" } else { "i % COLS" }))
    };
    let w = index("Weight")?;
    let pw = index("PosWeight")?;
    if reduction != 0 {
        c.w.line("float s = 0.0f;");
    }
    c.w.for_loop("i", n);
    c.w.line("const float x = Input[i], y = Target[i], nx = -x;");
    c.w.line("const float sp = nx > 0.0f ? nx + log1pf(expf(-nx)) : log1pf(expf(nx));");
    c.w.line("float l = (1.0f - y) * x;");
    match pw {
        Some(j) => c.w.line(&format!(
            "l = l + ((PosWeight[{}] - 1.0f) * y + 1.0f) * sp;",
            j.replace("COLS", &format!("{cols}u"))
        )),
        None => c.w.line("l = l + sp;"),
    }
    if let Some(j) = w {
        c.w.line(&format!(
            "l = l * Weight[{}];",
            j.replace("COLS", &format!("{cols}u"))
        ));
    }
    if reduction == 0 {
        c.w.line("Dest[i] = l;");
    } else {
        c.w.line("s = s + l;");
    }
    c.w.close();
    match reduction {
        0 => {}
        1 => c.w.line(&format!("Dest[0] = s / {};", c_float(n as f32))),
        _ => c.w.line("Dest[0] = s;"),
    }
    Ok(())
}
