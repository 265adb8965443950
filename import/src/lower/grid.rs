//! GridSample (2-D and 3-D; nearest, linear, cubic; padding zeros, border,
//! reflection; `align_corners`) as ONNX's reference computes it. The grid
//! is a run-time input, so each output point's neighbours are found with
//! element-wise ops on the grid (denormalize, round or floor, the padding's
//! clamp or reflection, `Where` for the reference's branches), turned into
//! row numbers of X viewed `[N * spatial, C]` in int64 and read with one
//! `gather` per neighbour; the weighted neighbours are summed. A neighbour
//! outside X with zeros padding gets a row past the end, which `gather`
//! reads as zeros.

use super::compose::{attr_int, attr_ints, base_of, with, Composer};
use super::{dims_of, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Nearest,
    Linear,
    Cubic,
}

#[derive(Clone, Copy, PartialEq)]
enum Padding {
    Zeros,
    Border,
    Reflection,
}

/// Keys' cubic convolution constant, the reference's.
const CUBIC_A: f32 = -0.75;

pub(super) fn grid_sample(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    // Opset 16 spells the modes bilinear and bicubic.
    let mode = match attrs.string("mode").as_deref() {
        None | Some("linear") | Some("bilinear") => Mode::Linear,
        Some("nearest") => Mode::Nearest,
        Some("cubic") | Some("bicubic") => Mode::Cubic,
        Some(other) => return Err(l.unsupported(format!("GridSample mode `{other}`"))),
    };
    let pad = match attrs.string("padding_mode").as_deref() {
        None | Some("zeros") => Padding::Zeros,
        Some("border") => Padding::Border,
        Some("reflection") => Padding::Reflection,
        Some(other) => return Err(l.unsupported(format!("GridSample padding_mode `{other}`"))),
    };
    let align = attrs.int("align_corners", 0) != 0;
    let (xd, gd) = (dims_of(&l.input(node, 0)?), dims_of(&l.input(node, 1)?));
    let r = xd.len();
    if r < 3 || gd.len() != r || gd[0] != xd[0] || gd[r - 1] != (r - 2) as u64 {
        return Err(l.err(format!(
            "X {xd:?} and grid {gd:?} are not [N, C, D...] and [N, O..., {}]",
            r.saturating_sub(2)
        )));
    }
    let (n, ch, nd) = (xd[0], xd[1], r - 2);
    let spatial = &xd[2..];
    let out = &gd[1..r - 1];
    let p = out.iter().product::<u64>();
    let (x, grid) = (node.input[0].as_str(), node.input[1].as_str());
    let base = base_of(node);
    let y = with(l, &base, |c| {
        let table = table(c, x, &xd)?;
        let g = c.reshape(grid, &[n, p, nd as u64])?;
        // The grid's last axis lists the coordinates innermost first.
        let mut coords = Vec::with_capacity(nd);
        for (i, &d) in spatial.iter().enumerate() {
            let comp = c.pick(&g, 2, (nd - 1 - i) as u64)?;
            coords.push(denormalize(c, &comp, d, align)?);
        }
        let how = Sampling { mode, pad, align };
        let acc = sample(c, &table, &coords, spatial, n, how)?;
        let mut shape = vec![n];
        shape.extend(out);
        shape.push(ch);
        let y = c.reshape(&acc, &shape)?;
        let mut back = vec![0, r as i64 - 1];
        back.extend(1..r as i64 - 1);
        c.op("Transpose", &[&y], vec![attr_ints("perm", &back)])
    })?;
    Ok(vec![l.vals[&y].clone()])
}

/// `x` (ONNX dims `xd`, `[N, C, spatial...]`) as the rows `sample` reads:
/// `[N * spatial, C]`, channels last.
pub(super) fn table(c: &mut Composer, x: &str, xd: &[u64]) -> Result<String> {
    let r = xd.len();
    let mut perm = vec![0, 1];
    perm.splice(1..1, (2..r as i64).collect::<Vec<_>>());
    let xt = c.op("Transpose", &[x], vec![attr_ints("perm", &perm)])?;
    c.reshape(&xt, &[xd[0] * xd[2..].iter().product::<u64>(), xd[1]])
}

/// How GridSample reads X between its elements.
#[derive(Clone, Copy)]
pub(super) struct Sampling {
    mode: Mode,
    pad: Padding,
    align: bool,
}

impl Sampling {
    /// Bilinear with zeros outside, as DeformConv samples.
    pub(super) const BILINEAR_ZEROS: Sampling = Sampling {
        mode: Mode::Linear,
        pad: Padding::Zeros,
        align: true,
    };
}

/// X's rows (`table`, X viewed `[N * spatial, C]`) sampled at the
/// unnormalized `coords` (one `[N, P]` value per spatial axis, X's order):
/// `[N, P, C]`.
pub(super) fn sample(
    c: &mut Composer,
    table: &str,
    coords: &[String],
    spatial: &[u64],
    n: u64,
    how: Sampling,
) -> Result<String> {
    let Sampling { mode, pad, align } = how;
    let s: u64 = spatial.iter().product();
    let rows = n * s;
    let nd = spatial.len();
    // Per spatial axis, its neighbours: (row offset in int64, weight).
    let mut axes = Vec::with_capacity(nd);
    let strides = crate::tensor::strides(spatial);
    for (i, &d) in spatial.iter().enumerate() {
        let coord = if mode == Mode::Nearest {
            c.op("Round", &[&coords[i]], vec![])?
        } else {
            coords[i].clone()
        };
        let (lo, hi) = if align {
            (0.0, d as f32 - 1.0)
        } else {
            (-0.5, d as f32 - 0.5)
        };
        let coord = match pad {
            Padding::Zeros => coord,
            Padding::Border => {
                let (los, his) = (c.scalar(lo), c.scalar(hi));
                let below = c.op("Less", &[&coord, &los], vec![])?;
                let above = c.op("Greater", &[&coord, &his], vec![])?;
                let outside = c.op("Or", &[&below, &above], vec![])?;
                let clamped = clamp(c, &coord, 0.0, d as f32 - 1.0)?;
                c.op("Where", &[&outside, &clamped, &coord], vec![])?
            }
            Padding::Reflection => reflect(c, &coord, lo, hi)?,
        };
        let mut taps = Vec::new();
        for (idx, w) in neighbours(c, &coord, mode)? {
            let idx = match pad {
                Padding::Border => clamp(c, &idx, 0.0, d as f32 - 1.0)?,
                Padding::Reflection => reflect(c, &idx, lo, hi)?,
                Padding::Zeros => idx,
            };
            // int() truncates, as the reference's index does.
            let int = c.op("Cast", &[&idx], vec![attr_int("to", 7)])?;
            let int = if pad == Padding::Zeros {
                // Outside the axis: a row past the end, read as zeros.
                let (zero, top) = (c.scalar(0.0), c.scalar(d as f32));
                let low = c.op("GreaterOrEqual", &[&idx, &zero], vec![])?;
                let high = c.op("Less", &[&idx, &top], vec![])?;
                let inside = c.op("And", &[&low, &high], vec![])?;
                let past = c.konst("i", Tensor::i64(vec![], vec![rows as i64]));
                c.op("Where", &[&inside, &int, &past], vec![])?
            } else {
                int
            };
            let st = c.konst("i", Tensor::i64(vec![], vec![strides[i] as i64]));
            taps.push((c.op("Mul", &[&int, &st], vec![])?, w));
        }
        axes.push(taps);
    }
    let offsets: Vec<i64> = (0..n as i64).map(|b| b * s as i64).collect();
    let batch = c.konst("i", Tensor::i64(vec![n, 1], offsets));
    let axis2 = c.ints(&[2]);
    let mut acc: Option<String> = None;
    // Every combination of one neighbour per axis.
    let corners: usize = axes.iter().map(Vec::len).product();
    for k in 0..corners {
        let (mut row, mut weight) = (batch.clone(), None::<String>);
        let mut rest = k;
        for taps in &axes {
            let (off, w) = &taps[rest % taps.len()];
            rest /= taps.len();
            row = c.op("Add", &[&row, off], vec![])?;
            if let Some(w) = w {
                weight = Some(match weight {
                    None => w.clone(),
                    Some(p) => c.op("Mul", &[&p, w], vec![])?,
                });
            }
        }
        let mut v = c.op("Gather", &[table, &row], vec![attr_int("axis", 0)])?;
        if let Some(w) = weight {
            let w3 = c.op("Unsqueeze", &[&w, &axis2], vec![])?;
            v = c.op("Mul", &[&v, &w3], vec![])?;
        }
        acc = Some(match acc {
            None => v,
            Some(a) => c.op("Add", &[&a, &v], vec![])?,
        });
    }
    Ok(acc.unwrap_or_default())
}

/// The reference's unnormalized coordinate on an axis of `d` elements.
fn denormalize(c: &mut Composer, g: &str, d: u64, align: bool) -> Result<String> {
    let one = c.scalar(1.0);
    let g1 = c.op("Add", &[g, &one], vec![])?;
    let two = c.scalar(2.0);
    if align {
        // (n + 1) / 2 * (d - 1)
        let h = c.op("Div", &[&g1, &two], vec![])?;
        let m = c.scalar(d as f32 - 1.0);
        c.op("Mul", &[&h, &m], vec![])
    } else {
        // ((n + 1) * d - 1) / 2
        let m = c.scalar(d as f32);
        let t = c.op("Mul", &[&g1, &m], vec![])?;
        let t = c.op("Sub", &[&t, &one], vec![])?;
        c.op("Div", &[&t, &two], vec![])
    }
}

fn clamp(c: &mut Composer, v: &str, lo: f32, hi: f32) -> Result<String> {
    let (a, b) = (c.scalar(lo), c.scalar(hi));
    c.op("Clip", &[v, &a, &b], vec![])
}

/// The reference's `_gs_reflect`: a value outside `[lo, hi]` reflected by
/// the near border until it is inside.
fn reflect(c: &mut Composer, v: &str, lo: f32, hi: f32) -> Result<String> {
    let span = hi - lo;
    if span <= 0.0 {
        // One coordinate (align_corners on one element): the reference
        // divides by zero; every value maps to that coordinate.
        return clamp(c, v, lo, lo);
    }
    let (los, his) = (c.scalar(lo), c.scalar(hi));
    let below = c.op("Less", &[v, &los], vec![])?;
    let above = c.op("Greater", &[v, &his], vec![])?;
    let dlo = c.op("Sub", &[&los, v], vec![])?;
    let dhi = c.op("Sub", &[v, &his], vec![])?;
    let dx = c.op("Where", &[&below, &dlo, &dhi], vec![])?;
    let sp = c.scalar(span);
    let q = c.op("Div", &[&dx, &sp], vec![])?;
    let k = c.op("Floor", &[&q], vec![])?;
    let ks = c.op("Mul", &[&k, &sp], vec![])?;
    let rem = c.op("Sub", &[&dx, &ks], vec![])?;
    let half = c.scalar(0.5);
    let h = c.op("Mul", &[&k, &half], vec![])?;
    let hf = c.op("Floor", &[&h], vec![])?;
    let even = c.op("Equal", &[&hf, &h], vec![])?;
    let from_lo = c.op("Add", &[&los, &rem], vec![])?;
    let from_hi = c.op("Sub", &[&his, &rem], vec![])?;
    let if_below = c.op("Where", &[&even, &from_lo, &from_hi], vec![])?;
    let if_above = c.op("Where", &[&even, &from_hi, &from_lo], vec![])?;
    let inner = c.op("Where", &[&above, &if_above, v], vec![])?;
    c.op("Where", &[&below, &if_below, &inner], vec![])
}

/// The neighbours of `coord` on one axis and their weights (none for
/// nearest, whose one neighbour is the rounded coordinate itself).
fn neighbours(c: &mut Composer, coord: &str, mode: Mode) -> Result<Vec<(String, Option<String>)>> {
    if mode == Mode::Nearest {
        return Ok(vec![(coord.to_string(), None)]);
    }
    let x0 = c.op("Floor", &[coord], vec![])?;
    let t = c.op("Sub", &[coord, &x0], vec![])?;
    let one = c.scalar(1.0);
    let shifted = |c: &mut Composer, k: f32| -> Result<String> {
        let s = c.scalar(k);
        c.op("Add", &[&x0, &s], vec![])
    };
    if mode == Mode::Linear {
        let w0 = c.op("Sub", &[&one, &t], vec![])?;
        let x1 = shifted(c, 1.0)?;
        return Ok(vec![(x0.clone(), Some(w0)), (x1, Some(t))]);
    }
    // Keys' coefficients of distances t + 1, t, 1 - t, 2 - t.
    let two = c.scalar(2.0);
    let u0 = c.op("Add", &[&t, &one], vec![])?;
    let u2 = c.op("Sub", &[&one, &t], vec![])?;
    let u3 = c.op("Sub", &[&two, &t], vec![])?;
    let w = [
        outer_coeff(c, &u0)?,
        inner_coeff(c, &t)?,
        inner_coeff(c, &u2)?,
        outer_coeff(c, &u3)?,
    ];
    let mut taps = Vec::with_capacity(4);
    for (k, w) in w.into_iter().enumerate() {
        taps.push((shifted(c, k as f32 - 1.0)?, Some(w)));
    }
    Ok(taps)
}

/// `((A + 2) u - (A + 3)) u^2 + 1`, the weight at a distance below 1.
fn inner_coeff(c: &mut Composer, u: &str) -> Result<String> {
    let (a2, a3, one) = (
        c.scalar(CUBIC_A + 2.0),
        c.scalar(CUBIC_A + 3.0),
        c.scalar(1.0),
    );
    let t = c.op("Mul", &[u, &a2], vec![])?;
    let t = c.op("Sub", &[&t, &a3], vec![])?;
    let t = c.op("Mul", &[&t, u], vec![])?;
    let t = c.op("Mul", &[&t, u], vec![])?;
    c.op("Add", &[&t, &one], vec![])
}

/// `((A u - 5A) u + 8A) u - 4A`, the weight at a distance from 1 to 2.
fn outer_coeff(c: &mut Composer, u: &str) -> Result<String> {
    let a = c.scalar(CUBIC_A);
    let (a5, a8, a4) = (
        c.scalar(5.0 * CUBIC_A),
        c.scalar(8.0 * CUBIC_A),
        c.scalar(4.0 * CUBIC_A),
    );
    let t = c.op("Mul", &[u, &a], vec![])?;
    let t = c.op("Sub", &[&t, &a5], vec![])?;
    let t = c.op("Mul", &[&t, u], vec![])?;
    let t = c.op("Add", &[&t, &a8], vec![])?;
    let t = c.op("Mul", &[&t, u], vec![])?;
    c.op("Sub", &[&t, &a4], vec![])
}
