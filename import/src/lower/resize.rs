//! Resize in every mode (nearest, linear, cubic; antialias; every
//! coordinate transform; `axes`, `roi`, `keep_aspect_ratio_policy`,
//! `exclude_outside`, `extrapolation_value`) with constant scales or sizes,
//! lowered as ONNX's reference computes it: axis by axis, each output
//! coordinate a weighted sum of input neighbours. One axis is a constant
//! `[in][out]` matrix (the weights of each output column, the clamped
//! neighbour indices folded in) applied with `fullyconnected` on the tensor
//! transposed so the axis is last; the bias holds `extrapolation_value` for
//! the outputs `tf_crop_and_resize` places outside the input.

use super::{dims_of, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::ElemKind;
use glow_ir::Opcode;

/// How the weights of one output coordinate are made from its ratio
/// (`x_ori - floor(x_ori)`, or 1 on an integer) and the axis' scale.
#[derive(Clone, Copy)]
enum Coeffs<'a> {
    Nearest(&'a str),
    Linear { antialias: bool },
    Cubic { a: f64, antialias: bool },
}

impl Coeffs<'_> {
    fn of(&self, ratio: f64, scale: f64) -> Vec<f64> {
        match *self {
            Coeffs::Nearest(mode) => {
                if ratio.fract() == 0.0 {
                    return vec![0.0, 1.0];
                }
                let b = |v: bool| f64::from(u8::from(v));
                match mode {
                    "round_prefer_ceil" => vec![b(ratio < 0.5), b(ratio >= 0.5)],
                    "floor" => vec![1.0, 0.0],
                    "ceil" => vec![0.0, 1.0],
                    _ => vec![b(ratio <= 0.5), b(ratio > 0.5)],
                }
            }
            Coeffs::Linear { antialias: false } => vec![1.0 - ratio, ratio],
            Coeffs::Linear { antialias: true } => {
                let scale = scale.min(1.0);
                let start = (-1.0 / scale).floor() as i64 + 1;
                let footprint = 2 - 2 * start;
                let c: Vec<f64> = (start..start + footprint)
                    .map(|i| (1.0 - ((i as f64 - ratio) * scale).abs()).clamp(0.0, 1.0))
                    .collect();
                let s: f64 = c.iter().sum();
                c.iter().map(|v| v / s).collect()
            }
            Coeffs::Cubic {
                a,
                antialias: false,
            } => {
                let (r, q) = (ratio, 1.0 - ratio);
                vec![
                    ((a * (r + 1.0) - 5.0 * a) * (r + 1.0) + 8.0 * a) * (r + 1.0) - 4.0 * a,
                    ((a + 2.0) * r - (a + 3.0)) * r * r + 1.0,
                    ((a + 2.0) * q - (a + 3.0)) * q * q + 1.0,
                    ((a * (q + 1.0) - 5.0 * a) * (q + 1.0) + 8.0 * a) * (q + 1.0) - 4.0 * a,
                ]
            }
            Coeffs::Cubic { a, antialias: true } => {
                let scale = scale.min(1.0);
                let k = |x: f64| {
                    let x = x.abs();
                    let (x2, x3) = (x * x, x * x * x);
                    if x <= 1.0 {
                        (a + 2.0) * x3 - (a + 3.0) * x2 + 1.0
                    } else if x < 2.0 {
                        a * x3 - 5.0 * a * x2 + 8.0 * a * x - 4.0 * a
                    } else {
                        0.0
                    }
                };
                let start = (-2.0 / scale).floor() as i64 + 1;
                let c: Vec<f64> = (start..2 - start)
                    .map(|i| k(scale * (i as f64 - ratio)))
                    .collect();
                let s: f64 = c.iter().sum();
                c.iter().map(|v| v / s).collect()
            }
        }
    }
}

/// What an axis' interpolation needs besides its sizes.
struct Axis<'a> {
    coeffs: Coeffs<'a>,
    ctm: &'a str,
    exclude_outside: bool,
    roi: Option<(f64, f64)>,
}

/// The `[out][in]` weights of one axis and, per output, whether it is
/// extrapolated (`tf_crop_and_resize` outside the input).
fn axis_weights(ax: &Axis, input: u64, out: u64, scale: f64) -> (Vec<f64>, Vec<bool>) {
    let (iw, ow_int) = (input as f64, out as usize);
    let ow = scale * iw;
    let mut w = vec![0.0; ow_int * input as usize];
    let mut extra = vec![false; ow_int];
    for (y, ex) in extra.iter_mut().enumerate() {
        let yf = y as f64;
        let x_ori = match ax.ctm {
            "align_corners" => {
                if ow == 1.0 {
                    0.0
                } else {
                    yf * (iw - 1.0) / (ow - 1.0)
                }
            }
            "asymmetric" => yf / scale,
            "tf_crop_and_resize" => {
                let (r0, r1) = ax.roi.unwrap_or((0.0, 1.0));
                let x = if ow == 1.0 {
                    (r1 - r0) * (iw - 1.0) / 2.0
                } else {
                    yf * (r1 - r0) * (iw - 1.0) / (ow - 1.0)
                };
                let x = x + r0 * (iw - 1.0);
                *ex = x < 0.0 || x > iw - 1.0;
                x
            }
            "pytorch_half_pixel" => {
                if ow == 1.0 {
                    -0.5
                } else {
                    (yf + 0.5) / scale - 0.5
                }
            }
            "half_pixel_symmetric" => {
                let adjustment = ow_int as f64 / ow;
                let offset = iw / 2.0 * (1.0 - adjustment);
                offset + (yf + 0.5) / scale - 0.5
            }
            _ => (yf + 0.5) / scale - 0.5,
        };
        let xi = x_ori.floor();
        let ratio = if x_ori == xi { 1.0 } else { x_ori - xi };
        let mut c = ax.coeffs.of(ratio, scale);
        let n = c.len() as i64;
        // The neighbours: as the reference, on the input padded by ceil(n/2).
        let pad = (n + 1) / 2;
        let xp = x_ori + pad as f64;
        let p = xp.floor();
        let frac = xp - p;
        let off = if n % 2 == 0 {
            if frac == 0.0 {
                -(n / 2)
            } else {
                -(n / 2) + 1
            }
        } else {
            let base = -((n - 1) / 2);
            if frac <= 0.5 {
                base
            } else {
                base + 1
            }
        };
        let start = p as i64 + off - pad;
        let idx: Vec<i64> = (0..n).map(|k| start + k).collect();
        if ax.exclude_outside {
            for (ci, &i) in c.iter_mut().zip(&idx) {
                if i < 0 || i >= input as i64 {
                    *ci = 0.0;
                }
            }
            let s: f64 = c.iter().sum();
            let s = if s == 0.0 { 1.0 } else { s };
            for ci in &mut c {
                *ci /= s;
            }
        }
        if *ex {
            continue;
        }
        for (ci, &i) in c.iter().zip(&idx) {
            let i = i.clamp(0, input as i64 - 1) as usize;
            w[y * input as usize + i] += ci;
        }
    }
    (w, extra)
}

/// Resize (opset 10+) with constant `roi`, `scales` or `sizes`, in any mode.
pub(super) fn resize_general(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let r = d.len();
    let a = l.act(&x);
    if l.kind(&a) != ElemKind::Float {
        return Err(l.unsupported("Resize of a non-float tensor"));
    }
    let mode = attrs.string("mode").unwrap_or_else(|| "nearest".into());
    let nearest_mode = attrs
        .string("nearest_mode")
        .unwrap_or_else(|| "round_prefer_floor".into());
    let antialias = attrs.int("antialias", 0) != 0;
    let coeffs = match mode.as_str() {
        "nearest" if !antialias => Coeffs::Nearest(&nearest_mode),
        "linear" => Coeffs::Linear { antialias },
        "cubic" => Coeffs::Cubic {
            a: f64::from(attrs.float("cubic_coeff_a", -0.75)),
            antialias,
        },
        _ => return Err(l.unsupported(format!("Resize mode `{mode}`"))),
    };
    let ctm = attrs
        .string("coordinate_transformation_mode")
        .unwrap_or_else(|| "half_pixel".into());
    let axes: Vec<usize> = match attrs.ints("axes") {
        Some(v) => v
            .iter()
            .map(|&a| norm_axis(l, a, r))
            .collect::<Result<_>>()?,
        None => (0..r).collect(),
    };
    let n = axes.len();
    let roi: Option<Vec<f64>> = match l.opt_input(node, 1)? {
        Some(_) => {
            let v: Vec<f64> = l
                .const_input(node, 1)?
                .to_f32()
                .iter()
                .map(|&v| f64::from(v))
                .collect();
            (!v.is_empty()).then_some(v)
        }
        None => None,
    };
    if let Some(roi) = &roi {
        if roi.len() != 2 * n {
            return Err(l.err(format!("{} roi values for {n} axes", roi.len())));
        }
    }
    let scales: Option<Vec<f64>> = match l.opt_input(node, 2)? {
        Some(_) => {
            let s = l.const_input(node, 2)?.to_f32();
            (!s.is_empty()).then(|| s.iter().map(|&v| f64::from(v)).collect())
        }
        None => None,
    };
    let mut scale = vec![1.0f64; r];
    let mut size: Vec<u64> = d.clone();
    match scales {
        Some(s) => {
            if s.len() != n {
                return Err(l.err(format!("{} scales for {n} axes", s.len())));
            }
            for (&ax, &v) in axes.iter().zip(&s) {
                if v <= 0.0 || !v.is_finite() {
                    return Err(l.err(format!("scale {v}")));
                }
                scale[ax] = v;
                size[ax] = (v * d[ax] as f64) as u64;
            }
        }
        None => {
            let sizes = l.const_input(node, 3)?.to_i64();
            if sizes.len() != n {
                return Err(l.err(format!("{} sizes for {n} axes", sizes.len())));
            }
            for (&ax, &v) in axes.iter().zip(&sizes) {
                if v <= 0 {
                    return Err(l.unsupported(format!("size {v}")));
                }
                size[ax] = v as u64;
                scale[ax] = v as f64 / d[ax] as f64;
            }
            let policy = attrs
                .string("keep_aspect_ratio_policy")
                .unwrap_or_else(|| "stretch".into());
            if policy != "stretch" {
                let it = axes.iter().map(|&a| scale[a]);
                let s = match policy.as_str() {
                    "not_larger" => it.fold(f64::INFINITY, f64::min),
                    "not_smaller" => it.fold(f64::NEG_INFINITY, f64::max),
                    _ => return Err(l.err(format!("keep_aspect_ratio_policy `{policy}`"))),
                };
                for &ax in &axes {
                    scale[ax] = s;
                    size[ax] = (s * d[ax] as f64 + 0.5) as u64;
                }
            }
        }
    }
    let extrapolation = f64::from(attrs.float("extrapolation_value", 0.0));
    let exclude_outside = attrs.int("exclude_outside", 0) != 0;
    glow_ir::limits::check_tensor(&format!("tensor `{out}`"), &glow_ir::Type::float(&size))
        .map_err(|m| l.err(m))?;
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let mut cur = l.to_plain(&a, &out).v;
    let mut cd = d.clone();
    for (i, &ax) in axes.iter().enumerate() {
        let axis_roi = roi.as_ref().map(|v| (v[i], v[n + i]));
        let trivial_roi =
            axis_roi.is_none_or(|(a, b)| (a - 0.0).abs() < 1e-9 && (b - 1.0).abs() < 1e-9);
        if (scale[ax] - 1.0).abs() <= 1e-9 && size[ax] == cd[ax] && trivial_roi {
            continue;
        }
        let spec = Axis {
            coeffs,
            ctm: &ctm,
            exclude_outside,
            roi: axis_roi,
        };
        let (w, extra) = axis_weights(&spec, cd[ax], size[ax], scale[ax]);
        let (inw, outw) = (cd[ax], size[ax]);
        // The weights as the fullyconnected's [in][out] matrix.
        let mut wt = vec![0f32; (inw * outw) as usize];
        for y in 0..outw as usize {
            for k in 0..inw as usize {
                wt[k * outw as usize + y] = w[y * inw as usize + k] as f32;
            }
        }
        let bias: Vec<f32> = extra
            .iter()
            .map(|&e| if e { extrapolation as f32 } else { 0.0 })
            .collect();
        let wv = l.const_weight(
            &format!("{out}.axis{ax}"),
            &Tensor::f32(vec![inw, outw], wt),
        );
        let bv = l.const_weight(
            &format!("{out}.axis{ax}.bias"),
            &Tensor::f32(vec![outw], bias),
        );
        // Move the axis last, resize the rows, move it back.
        let mut perm: Vec<usize> = (0..r).filter(|&k| k != ax).collect();
        perm.push(ax);
        let td: Vec<u64> = perm.iter().map(|&k| cd[k]).collect();
        let moved = if ax + 1 == r {
            cur
        } else {
            let t = l.alloc(&format!("{out}.t{ax}"), &td);
            l.transpose(&base, t, cur, perm.iter().map(|&k| k as i64).collect());
            t
        };
        let rows: u64 = td[..r - 1].iter().product();
        let src = l.view(&format!("{out}.rows{ax}"), moved, &[rows, inw]);
        let dest = l.alloc(&format!("{out}.r{ax}"), &[rows, outw]);
        l.inst(&base, Opcode::FullyConnected, &[dest, src, wv, bv], &[]);
        let mut od = td.clone();
        od[r - 1] = outw;
        let resized = l.view(&format!("{out}.r{ax}"), dest, &od);
        cd[ax] = outw;
        cur = if ax + 1 == r {
            resized
        } else {
            // Inverse of perm: the axis comes back from the last place.
            let mut inv = vec![0i64; r];
            for (p, &k) in perm.iter().enumerate() {
                inv[k] = p as i64;
            }
            let b = l.alloc(&format!("{out}.b{ax}"), &cd);
            l.transpose(&base, b, resized, inv);
            b
        };
    }
    Ok(vec![Val::Act(Act {
        v: cur,
        dims: cd,
        cl: false,
    })])
}
