//! The interpreter's quantized kernels: integer loops over the parameters of
//! `crate::quant`, in the operation order the C kernels use (the order does
//! not change a result: integer sums are exact modulo 2^32).

use super::kernels::for_window;
use super::Exec;
use crate::emit::Window;
use crate::error::BackendError;
use crate::quant::{self as q, ChannelParams};
use glow_ir::member as m;
use glow_ir::quant::wrap32;
use glow_ir::{Opcode, Type};

type R = Result<(), BackendError>;

/// Filter strides over (oc, kh, kw, c) of a convolution's filter.
pub fn filter_strides(win: &Window, cg: u64) -> [u64; 4] {
    let [kh, kw] = win.kernels;
    if win.nchw {
        [cg * kh * kw, kw, 1, kh * kw]
    } else {
        [kh * kw * cg, kw * cg, cg, 1]
    }
}

/// The per-channel vectors of a `channelwisequantizedconvolution`.
fn channel_params(x: &Exec) -> Result<Option<ChannelParams>, BackendError> {
    if x.opcode() != Opcode::ChannelwiseQuantizedConvolution {
        return Ok(None);
    }
    Ok(Some(ChannelParams {
        filter_scales: x.f32s("FilterScales")?,
        filter_offsets: x.ints("FilterOffsets")?,
        bias_scales: x.f32s("BiasScales")?,
        bias_offsets: x.ints("BiasOffsets")?,
    }))
}

pub fn convolution(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let group = x.m().get(m::GROUP)?.max(1) as u64;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, oc, oh, ow] = win.nchw_of(&d.dims);
    let cp = channel_params(x)?;
    let ps = q::products(x.f, x.id, oc, cp.as_ref())?;
    let (src, filt, bias) = (x.ints("Src")?, x.ints("Filter")?, x.ints("Bias")?);
    let (cg, ocg) = (ch / group, oc / group);
    let (ss, ds, fs) = (
        win.act_strides(&s.dims),
        win.act_strides(&d.dims),
        filter_strides(&win, cg),
    );
    let at = |st: [u64; 4], i: [u64; 4]| (0..4).map(|k| st[k] * i[k]).sum::<u64>() as usize;
    let mut out = x.scratch(d.size() as usize, 0i64)?;
    for b in 0..n {
        for y in 0..oh {
            for xx in 0..ow {
                for o in 0..oc {
                    let p = &ps[o as usize];
                    let g = o / ocg;
                    let mut sum = 0i64;
                    for_window(&win, y, xx, h, w, |a, r, py, px| {
                        for c in 0..cg {
                            let v = src[at(ss, [b, g * cg + c, py, px])] - p.x_off;
                            sum += v * (filt[at(fs, [o, a, r, c])] - p.w_off);
                        }
                    });
                    let acc = wrap32(sum + p.bias_term(bias[o as usize]));
                    out[at(ds, [b, o, y, xx])] = p.out.apply(acc);
                }
            }
        }
    }
    x.put_ints("Dest", &out)
}

/// `fullyconnected`, `matmul`, `batchmatmul`: `[nb][rows][inner]` times
/// `[nb][inner][cols]`, an optional bias per column.
pub fn matrix_multiply(x: &mut Exec) -> R {
    let op = x.opcode();
    let rowwise = op == Opcode::RowwiseQuantizedFullyConnected;
    let fc = op == Opcode::FullyConnected || rowwise;
    let (l, r) = if fc {
        ("Src", "Weights")
    } else {
        ("LHS", "RHS")
    };
    let (lt, rt): (Type, Type) = (x.ty(l)?, x.ty(r)?);
    let dims = |t: &Type| t.dims.iter().map(|&v| v as usize).collect::<Vec<_>>();
    let (ld, rd) = (dims(&lt), dims(&rt));
    let (nb, rows, inner, cols) = match op {
        Opcode::BatchMatMul => (ld[0], ld[1], ld[2], rd[2]),
        Opcode::FullyConnected => (1, ld[0], lt.size() as usize / ld[0].max(1), rd[1]),
        _ if rowwise => (1, ld[0], ld[1], rd[0]),
        _ => (1, ld[0], ld[1], rd[1]),
    };
    let ps = if rowwise {
        q::rowwise_products(x.f, x.id, &x.f32s("Scales")?, &x.ints("Offsets")?)?
    } else {
        q::products(x.f, x.id, cols as u64, None)?
    };
    let (a, bm) = (x.ints(l)?, x.ints(r)?);
    // Weights of a row-wise product are `[cols][inner]`.
    let (ks, js) = if rowwise { (1, inner) } else { (cols, 1) };
    let bias = if fc { Some(x.ints("Bias")?) } else { None };
    let mut out = x.scratch(nb * rows * cols, 0i64)?;
    for b in 0..nb {
        for i in 0..rows {
            for j in 0..cols {
                let p = &ps[j];
                let mut sum = 0i64;
                for k in 0..inner {
                    let u = a[b * rows * inner + i * inner + k] - p.x_off;
                    sum += u * (bm[b * inner * cols + k * ks + j * js] - p.w_off);
                }
                let bt = bias.as_ref().map_or(0, |v| p.bias_term(v[j]));
                out[b * rows * cols + i * cols + j] = p.out.apply(wrap32(sum + bt));
            }
        }
    }
    x.put_ints("Dest", &out)
}

/// `dynamicquantizedfullyconnected`, `dynamicrowwisequantizedfullyconnected`:
/// each row of `Src` quantized to `i8` at its own symmetric scale
/// (`glow_ir::quant::dynamic_scale`), the exact integer product with the
/// weights, then `acc * (Sx * Sw[j]) + Bias[j]` in f32, in that order (the
/// C kernel's).
pub fn dynamic_fully_connected(x: &mut Exec) -> R {
    let (s, d) = (x.ty("Src")?, x.ty("Dest")?);
    let (n, k) = (s.dims[0] as usize, s.dims[1] as usize);
    let m = d.dims[1] as usize;
    let woff = q::dynamic_offsets(x.f, x.id, m, || x.ints("Offsets"))?;
    let scales = if x.opcode() == Opcode::DynamicRowwiseQuantizedFullyConnected {
        x.f32s("Scales")?
    } else {
        vec![x.ty("Weights")?.elem.quant().map_or(1.0, |(s, _)| s); m]
    };
    let (src, w, bias) = (x.f32s("Src")?, x.ints("Weights")?, x.f32s("Bias")?);
    let mut out = x.scratch(n * m, 0f32)?;
    let mut row = x.scratch(k, 0i64)?;
    for i in 0..n {
        let xs = &src[i * k..(i + 1) * k];
        let sx = glow_ir::quant::dynamic_scale(xs);
        for (r, &v) in row.iter_mut().zip(xs) {
            *r = glow_ir::quant::quantize(v, sx, 0, (-128, 127));
        }
        for j in 0..m {
            let mut sum = 0i64;
            for (kk, &r) in row.iter().enumerate() {
                sum += r * (w[kk * m + j] - woff[j]);
            }
            out[i * m + j] = wrap32(sum) as f32 * (sx * scales[j]) + bias[j];
        }
    }
    x.put_f32s("Dest", &out)
}

/// `quantizationprofile`: `glow_ir::quant::profile_update` on the state in
/// `Histogram` and `ComputationInfo`.
pub fn quantization_profile(x: &mut Exec) -> R {
    q::check_profile(x.f, x.id)?;
    let values = x.f32s("InputTensor")?;
    let mut hist = x.f32s("Histogram")?;
    let info = x.f32s("ComputationInfo")?;
    let (mut min, mut max) = (info[0], info[1]);
    glow_ir::quant::profile_update(&values, &mut hist, &mut min, &mut max);
    x.put_f32s("Histogram", &hist)?;
    x.put_f32s("ComputationInfo", &[min, max])
}

/// Element-wise binary operators and `batchedadd` (the slice repeats).
pub fn binary(x: &mut Exec) -> R {
    let op = q::Binary::of(x.f, x.id)?;
    let (l, r) = if x.opcode() == Opcode::BatchedAdd {
        ("Batch", "Slice")
    } else {
        ("LHS", "RHS")
    };
    let (a, b) = (x.ints(l)?, x.ints(r)?);
    let out: Vec<i64> = a
        .iter()
        .enumerate()
        .map(|(i, &v)| op.apply(v, b[i % b.len().max(1)]))
        .collect();
    x.put_ints("Dest", &out)
}

/// `relu`, `clip`, `rescalequantized`.
pub fn activation(x: &mut Exec) -> R {
    if x.inst.operand_named("Scales").is_some() {
        return rescale_per_axis(x);
    }
    let a = q::Activation::of(x.f, x.id)?;
    let out: Vec<i64> = x.ints("Src")?.iter().map(|&v| a.apply(v)).collect();
    x.put_ints("Dest", &out)
}

/// Per-axis `rescalequantized`: element i through the rescale of its index
/// along `Axis`, `(i / inner) % n` (docs/quantization.md).
fn rescale_per_axis(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let axis = x.m().get(m::AXIS)? as usize;
    let n = s.dims.get(axis).copied().unwrap_or(1).max(1) as usize;
    let inner = s.dims.iter().skip(axis + 1).product::<u64>().max(1) as usize;
    let (scales, offsets) = (x.f32s("Scales")?, x.ints("Offsets")?);
    let r = q::rescale_per_axis(s.elem, &scales, &offsets, d.elem).map_err(|e| x.err(e))?;
    let src = x.ints("Src")?;
    let out: Vec<i64> = (0..src.len())
        .map(|i| r[(i / inner) % n].apply(src[i]))
        .collect();
    x.put_ints("Dest", &out)
}

/// `maxpool` (the largest stored value, rescaled) and `avgpool` (the
/// centred sum through the multiplier of its count). An empty window is
/// the real value 0.
pub fn pool(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let is_max = x.opcode() == Opcode::MaxPool;
    let include = x.inst.get(m::COUNT_INCLUDE_PADS).unwrap_or(true);
    let area = win.kernels[0] * win.kernels[1];
    let resc = q::Activation::of(x.f, x.id)?;
    let avg = if is_max {
        None
    } else {
        Some(q::average(x.f, x.id, area)?)
    };
    let in_off = resc.rescale.in_off;
    let src = x.ints("Src")?;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    let (ss, ds) = (win.act_strides(&s.dims), win.act_strides(&d.dims));
    let at = |st: [u64; 4], i: [u64; 4]| (0..4).map(|k| st[k] * i[k]).sum::<u64>() as usize;
    let mut out = x.scratch(d.size() as usize, 0i64)?;
    for b in 0..n {
        for y in 0..oh {
            for xx in 0..ow {
                for c in 0..ch {
                    let (mut acc, mut cnt) = (i64::MIN, 0u64);
                    let mut sum = 0i64;
                    for_window(&win, y, xx, h, w, |_, _, p, qq| {
                        let v = src[at(ss, [b, c, p, qq])];
                        acc = acc.max(v);
                        sum += v - in_off;
                        cnt += 1;
                    });
                    out[at(ds, [b, c, y, xx])] = match &avg {
                        None => resc.apply(if cnt == 0 { in_off } else { acc }),
                        Some(a) => a.apply(sum, if include { area } else { cnt }),
                    };
                }
            }
        }
    }
    x.put_ints("Dest", &out)
}
