//! The pairwise dot products of variadic inputs and their gradient
//! (docs/gir.md, "Recommendation"; docs/training.md, "Pairwise dot
//! products"), in the order of the C kernels in `emit/pairwise.rs`.

use super::Exec;
use crate::error::BackendError;

type R = Result<(), BackendError>;

/// The pairs `(i, j)`, `j < i`, in the order of `Dest`'s columns: `i`
/// ascending from 1, then `j` from 0.
pub fn pairs(n: usize) -> impl Iterator<Item = (usize, usize)> {
    (1..n).flat_map(|i| (0..i).map(move |j| (i, j)))
}

/// `Dest[b, p]` = the dot product of rows `b` of the pair's two inputs, a
/// fused multiply-add per term from +0.
pub fn pairwise_dot(x: &mut Exec) -> R {
    let list = x.list("Inputs")?;
    let d = x.ty("Dest")?;
    let (batch, cols) = (d.dims[0] as usize, d.dims[1] as usize);
    let inputs: Vec<Vec<f32>> = list.map(|k| x.f32s_at(k)).collect::<Result<_, _>>()?;
    let v = inputs.first().map_or(0, |a| a.len() / batch.max(1));
    let mut out = x.scratch(batch * cols, 0f32)?;
    for (p, (i, j)) in pairs(inputs.len()).enumerate() {
        for b in 0..batch {
            let (a, c) = (&inputs[i][b * v..b * v + v], &inputs[j][b * v..b * v + v]);
            let mut acc = 0f32;
            for k in 0..v {
                acc = a[k].mul_add(c[k], acc);
            }
            out[b * cols + p] = acc;
        }
    }
    x.put_f32s("Dest", &out)
}

/// Each `SrcGrads[i]` from +0: for each pair `p = (i, j)` in column order,
/// `SrcGrads[i][b] += DestGrad[b, p] * Srcs[j][b]` and
/// `SrcGrads[j][b] += DestGrad[b, p] * Srcs[i][b]`, fused multiply-adds.
pub fn pairwise_dot_grad(x: &mut Exec) -> R {
    let (grads, srcs) = (x.list("SrcGrads")?, x.list("Srcs")?);
    let dg = x.f32s("DestGrad")?;
    let t = x.ty("DestGrad")?;
    let (batch, cols) = (t.dims[0] as usize, t.dims[1] as usize);
    let srcs: Vec<Vec<f32>> = srcs.map(|k| x.f32s_at(k)).collect::<Result<_, _>>()?;
    let v = srcs.first().map_or(0, |a| a.len() / batch.max(1));
    let mut out: Vec<Vec<f32>> = Vec::with_capacity(srcs.len());
    for s in &srcs {
        out.push(x.scratch(s.len(), 0f32)?);
    }
    for (p, (i, j)) in pairs(srcs.len()).enumerate() {
        for b in 0..batch {
            let g = dg[b * cols + p];
            for k in 0..v {
                let e = b * v + k;
                out[i][e] = g.mul_add(srcs[j][e], out[i][e]);
                out[j][e] = g.mul_add(srcs[i][e], out[j][e]);
            }
        }
    }
    for (k, o) in grads.zip(&out) {
        x.put_f32s_at(k, o)?;
    }
    Ok(())
}

/// `thresholdgrad`: `Input <= Threshold ? 0 : Grad` (a NaN input passes
/// its gradient, as PyTorch's threshold_backward).
pub fn threshold_grad(x: &mut Exec) -> R {
    let t = x.m().get(glow_ir::member::THRESHOLD)? as f32;
    let (g, i) = (x.f32s("Grad")?, x.f32s("Input")?);
    let out: Vec<f32> = g
        .iter()
        .zip(&i)
        .map(|(&g, &v)| if v <= t { 0.0 } else { g })
        .collect();
    x.put_f32s("Dest", &out)
}
