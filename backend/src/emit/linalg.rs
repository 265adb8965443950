//! C kernels of the matrix and normalization family: `batchedadd`,
//! `batchedreduceadd`, `fullyconnected`, `matmul`, `batchmatmul`,
//! `softmax`, `batchnormalization`, `localresponsenormalization`. All float;
//! sums accumulate in f32 in index order, exactly as the interpreter does,
//! products (the GEMMs, the sums of squares) with one fused multiply-add each.

use super::runtime::{Kernel, PackKind};
use super::KCtx;
use crate::error::BackendError;
use crate::ops::c_float;
use glow_ir::member as m;
use glow_ir::Opcode;

pub fn batched_add(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, b, s) = (c.ty("Dest")?, c.ty("Batch")?, c.ty("Slice")?);
    for t in [&d, &b, &s] {
        c.require_f32(t)?;
    }
    let slice = s.size();
    let batches = b.dims[0];
    c.decl("Dest", "float")?;
    c.decl("Batch", "float")?;
    c.decl("Slice", "float")?;
    // One float addition per element, as elementadd: row by row.
    let add = crate::ops::BINARY
        .iter()
        .position(|b| b.opcode == glow_ir::Opcode::ElementAdd)
        .ok_or_else(|| c.err("no elementadd operator"))?;
    c.rt.use_kernel(Kernel::Binary);
    c.w.for_loop("b", batches);
    c.w.line(&format!(
        "glow_binary_f32(Dest + b * {slice}u, Batch + b * {slice}u, Slice, {slice}u, {add});"
    ));
    c.w.close();
    Ok(())
}

/// Splits `dims` around `axis`: (product before, size at, product after).
pub fn split(dims: &[u64], axis: usize) -> (u64, u64, u64) {
    let outer = dims[..axis.min(dims.len())].iter().product();
    let at = dims.get(axis).copied().unwrap_or(1);
    let inner = dims.get(axis + 1..).map_or(1, |d| d.iter().product());
    (outer, at, inner)
}

/// The `Reduce` family (`ops::REDUCE`) over `Axis`.
pub fn batched_reduce_add(c: &mut KCtx) -> Result<(), BackendError> {
    let op = crate::ops::REDUCE
        .iter()
        .find(|o| o.opcode == c.inst.opcode)
        .ok_or_else(|| c.err("not a reduction"))?;
    let (d, b) = (c.ty("Dest")?, c.ty("Batch")?);
    c.require_f32(&d)?;
    c.require_f32(&b)?;
    let axis = c.member(m::AXIS)?.max(0) as usize;
    let (outer, at, inner) = split(&b.dims, axis);
    c.decl("Dest", "float")?;
    c.decl("Batch", "float")?;
    c.w.for_loop("o", outer);
    c.w.for_loop("n", inner);
    let elem = |a: &str| format!("Batch[o * {}u + {a} * {inner}u + n]", at * inner);
    let first = match op.init {
        Some(v) => {
            c.w.line(&format!("float acc = {};", c_float(v)));
            0
        }
        None if at > 0 => {
            c.w.line(&format!("float acc = {};", elem("0u")));
            1
        }
        None => {
            c.w.line("float acc = 0.0f;");
            0
        }
    };
    c.w.open(&format!("for (size_t a = {first}u; a < {at}u; a++)"));
    c.w.line(&format!("const float x = {};", elem("a")));
    c.w.line(&format!("acc = {};", op.c));
    c.w.close();
    c.w.line(&format!("Dest[o * {inner}u + n] = acc;"));
    c.w.close();
    c.w.close();
    Ok(())
}

/// `Dest[b][i][j] = sum_k L[b][i][k] * R[b][k][j]` (+ `Bias[j]` after the
/// sum) through the shared GEMM; a constant right-hand side is packed.
fn gemm_call(
    c: &mut KCtx,
    (batches, rows, inner, cols): (u64, u64, u64, u64),
    names: (&str, &str),
    bias: bool,
) -> Result<(), BackendError> {
    let (l, r) = names;
    let (act, a0, a1) = if c
        .inst
        .opcode
        .info()
        .member_index("FusedActivation")
        .is_some()
    {
        super::spatial::act_code(c)?
    } else {
        (0, 0.0, 0.0)
    };
    c.rt.use_kernel(Kernel::Gemm);
    let rhs = match c.const_weight(r) {
        Some(w) if batches == 1 => {
            let at = c.rt.packed(w, PackKind::GemmPanels { k: inner, n: cols });
            c.w.line(&format!("(void){r};"));
            format!("(const float *)(constantWeight + {at}u)")
        }
        _ => r.to_string(),
    };
    let packed = u32::from(rhs != r);
    c.w.line(&format!(
        "static const glow_gemm_t shape = {{{batches}u, {rows}u, {cols}u, {inner}u, {inner}u, {cols}u, {cols}u, {}u, {}u, {}u, {packed}, {act}, {}, {}}};",
        rows * inner,
        inner * cols,
        rows * cols,
        c_float(a0),
        c_float(a1)
    ));
    let b = if bias { "Bias" } else { "0" };
    c.w.line(&format!("glow_gemm_f32(Dest, {l}, {rhs}, {b}, &shape);"));
    Ok(())
}

pub fn fully_connected(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s, w, b) = (c.ty("Dest")?, c.ty("Src")?, c.ty("Weights")?, c.ty("Bias")?);
    for t in [&d, &s, &w, &b] {
        c.require_f32(t)?;
    }
    let n = s.dims[0];
    let k = s.size() / n.max(1);
    let m = w.dims.get(1).copied().unwrap_or(1);
    for name in ["Dest", "Src", "Weights", "Bias"] {
        c.decl(name, "float")?;
    }
    gemm_call(c, (1, n, k, m), ("Src", "Weights"), true)
}

pub fn matmul(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, l, r) = (c.ty("Dest")?, c.ty("LHS")?, c.ty("RHS")?);
    for t in [&d, &l, &r] {
        c.require_f32(t)?;
    }
    for name in ["Dest", "LHS", "RHS"] {
        c.decl(name, "float")?;
    }
    gemm_call(
        c,
        (1, l.dims[0], l.dims[1], r.dims[1]),
        ("LHS", "RHS"),
        false,
    )
}

pub fn batch_matmul(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, l, r) = (c.ty("Dest")?, c.ty("LHS")?, c.ty("RHS")?);
    for t in [&d, &l, &r] {
        c.require_f32(t)?;
    }
    for name in ["Dest", "LHS", "RHS"] {
        c.decl(name, "float")?;
    }
    let dims = (l.dims[0], l.dims[1], l.dims[2], r.dims[2]);
    gemm_call(c, dims, ("LHS", "RHS"), false)
}

/// Row-wise: max, `e = expf(x - max)`, sum, `e / sum`; `logsoftmax`: `(x - max) - logf(sum)`.
pub fn softmax(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32(&d)?;
    c.require_f32(&s)?;
    let (rows, cols) = (s.dims[0], s.dims[1]);
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    c.w.for_loop("r", rows);
    c.w.line(&format!("const float *x = Src + r * {cols}u;"));
    c.w.line(&format!("float *y = Dest + r * {cols}u;"));
    c.w.line("float mx = x[0];");
    c.w.line("float sum = 0.0f;");
    c.w.for_loop("j", cols);
    c.w.line("if (mx < x[j]) mx = x[j];");
    c.w.close();
    c.w.for_loop("j", cols);
    c.w.line("float e = expf(x[j] - mx);");
    c.w.line("y[j] = e;");
    c.w.line("sum += e;");
    c.w.close();
    if c.inst.opcode == Opcode::LogSoftMax {
        // ONNX's order: (x - max) - log(sum).
        c.w.line("const float ls = logf(sum);");
        c.w.for_loop("j", cols);
        c.w.line("y[j] = (x[j] - mx) - ls;");
    } else {
        c.w.for_loop("j", cols);
        c.w.line("y[j] = y[j] / sum;");
    }
    c.w.close();
    c.w.close();
    Ok(())
}

/// `y = (x - mean) * (1 / sqrtf(var + eps)) * scale + bias` per channel.
pub fn batchnorm(c: &mut KCtx) -> Result<(), BackendError> {
    let names = ["Dest", "Src", "Scale", "Bias", "Mean", "Var"];
    c.require_f32s(&names)?;
    let s = c.ty("Src")?;
    let ch = c.member(m::CHANNEL_IDX)?.max(0) as usize;
    let eps = c_float(c.member(m::EPSILON)? as f32);
    let (outer, at, inner) = split(&s.dims, ch);
    for n in names {
        c.decl(n, "float")?;
    }
    c.rt.use_kernel(Kernel::BatchNorm);
    c.w.line(&format!(
        "glow_batchnorm_f32(Dest, Src, Scale, Bias, Mean, Var, {outer}u, {at}u, {inner}u, {eps});"
    ));
    Ok(())
}

/// `layernormalization` over the last dimension, per row of `n`: `mean =
/// (sum x) / n`, `var = (sum (x - mean)^2) / n` (f32 sums in index order
/// from 0), `y = (x - mean) * (1 / sqrtf(var + eps)) * scale + bias`.
pub fn layernorm(c: &mut KCtx) -> Result<(), BackendError> {
    let names = ["Dest", "Src", "Scale", "Bias"];
    c.require_f32s(&names)?;
    let s = c.ty("Src")?;
    let eps = c_float(c.member(m::EPSILON)? as f32);
    let cols = *s.dims.last().unwrap_or(&1);
    let rows = s.size() / cols.max(1);
    let n = c_float(cols as f32);
    for nm in names {
        c.decl(nm, "float")?;
    }
    c.w.for_loop("r", rows);
    c.w.line(&format!("const float *x = Src + r * {cols}u;"));
    c.w.line(&format!("float *y = Dest + r * {cols}u;"));
    c.w.line("float sum = 0.0f, sq = 0.0f, mean, inv;");
    c.w.for_loop("j", cols);
    c.w.line("sum += x[j];");
    c.w.close();
    c.w.line(&format!("mean = sum / {n};"));
    c.w.for_loop("j", cols);
    c.w.line("const float d = x[j] - mean;");
    c.w.line("sq = fmaf(d, d, sq);");
    c.w.close();
    c.w.line(&format!("inv = 1.0f / sqrtf(sq / {n} + {eps});"));
    c.w.for_loop("j", cols);
    c.w.line("y[j] = (x[j] - mean) * inv * Scale[j] + Bias[j];");
    c.w.close();
    c.w.close();
    Ok(())
}

/// Over the last dimension: `scale = K + alpha / (2h + 1) * sum(x^2 in the
/// window)`, `Dest = Src * powf(scale, -beta)`.
pub fn lrn(c: &mut KCtx) -> Result<(), BackendError> {
    for n in ["Dest", "Src", "Scale"] {
        let t = c.ty(n)?;
        c.require_f32(&t)?;
    }
    let s = c.ty("Src")?;
    let h = c.member(m::HALF_WINDOW_SIZE)?.max(0) as u64;
    let alpha = c.member(m::ALPHA)? as f32;
    let norm = c_float(alpha / (2 * h + 1) as f32);
    let beta = c_float(-(c.member(m::BETA)? as f32));
    let k = c_float(c.member(m::K)? as f32);
    let cols = *s.dims.last().unwrap_or(&1);
    let rows = s.size() / cols.max(1);
    for n in ["Dest", "Src", "Scale"] {
        c.decl(n, "float")?;
    }
    c.w.for_loop("r", rows);
    c.w.for_loop("j", cols);
    c.w.line(&format!("const float *x = Src + r * {cols}u;"));
    if h > 0 {
        c.w.line(&format!("size_t lo = j >= {h}u ? j - {h}u : 0u;"));
    } else {
        c.w.line("size_t lo = j;");
    }
    c.w.line(&format!(
        "size_t hi = j + {h}u < {cols}u ? j + {h}u : {}u;",
        cols - 1
    ));
    c.w.line("float ss = 0.0f;");
    c.w.open("for (size_t t = lo; t <= hi; t++)");
    c.w.line("ss = fmaf(x[t], x[t], ss);");
    c.w.close();
    c.w.line(&format!("float sc = {k} + {norm} * ss;"));
    c.w.line(&format!("Scale[r * {cols}u + j] = sc;"));
    c.w.line(&format!("Dest[r * {cols}u + j] = x[j] * powf(sc, {beta});"));
    c.w.close();
    c.w.close();
    Ok(())
}
