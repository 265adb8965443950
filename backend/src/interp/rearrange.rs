//! The interpreter's rearranging kernels (`pad`, the resizes,
//! `spacetodepth`, `flip`, `cumsum`, `nonzero`), in the operation order of
//! `emit/rearrange.rs`; the index maps come from `crate::rearrange`.

use super::Exec;
use crate::elem::splat_bits;
use crate::error::BackendError;
use crate::rearrange::{self as ra, FILL};
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode};

type R = Result<(), BackendError>;

pub fn exec(x: &mut Exec) -> R {
    match x.opcode() {
        Opcode::Pad => pad(x),
        Opcode::ResizeNearest => resize_nearest(x),
        Opcode::ResizeBilinear => resize_bilinear(x),
        Opcode::SpaceToDepth => space_to_depth(x),
        Opcode::Flip => flip(x),
        Opcode::CumSum => cumsum(x),
        Opcode::NonZero => nonzero(x),
        Opcode::Mean => mean(x),
        Opcode::Concat => concat(x),
        Opcode::Bucketize => bucketize(x),
        Opcode::BatchOneHot => batch_one_hot(x),
        Opcode::ScatterData => scatter_data(x),
        Opcode::AdaptiveAvgPool => adaptive_avg_pool(x),
        Opcode::IndexAdd => index_add(x),
        Opcode::GaussianFill => gaussian_fill(x),
        _ => Err(x.err("not a rearranging instruction")),
    }
}

/// Every `Dest` element from the source element its per-dimension
/// coordinates map to, `fill` where one maps to `FILL`.
fn remap(x: &mut Exec, maps: &[Vec<i64>], fill: u64) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let src = x.bits("Src")?;
    let ss = s.strides();
    let mut out = x.room(d.size() as usize)?;
    let mut idx = vec![0usize; d.dims.len()];
    for _ in 0..d.size() {
        let mut off = 0i64;
        let mut filled = false;
        for (k, &i) in idx.iter().enumerate() {
            let c = maps[k][i];
            filled |= c == FILL;
            off += c * ss[k] as i64;
        }
        out.push(if filled { fill } else { src[off as usize] });
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            if idx[k] < d.dims[k] as usize {
                break;
            }
            idx[k] = 0;
        }
    }
    x.put_bits("Dest", &out)
}

fn pad(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let pads = x.m().get(m::PAD)?.to_vec();
    let mode = x.m().get(m::PADDING_MODE)?;
    let fill = splat_bits(d.elem, x.m().get(m::VALUE)?).ok_or_else(|| x.unsupported(&d))?;
    remap(x, &ra::pad_maps(&s, &d, &pads, mode), fill)
}

fn resize_nearest(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let scale = x.m().get(m::RESIZE_SCALE)?.to_vec();
    remap(x, &ra::nearest_maps(&s, &d, &scale), 0)
}

fn flip(x: &mut Exec) -> R {
    let s = x.ty("Src")?;
    let axis = x.m().get(m::AXIS)?.max(0) as usize;
    remap(x, &ra::flip_maps(&s, axis), 0)
}

fn resize_bilinear(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let scale = x.m().get(m::RESIZE_SCALE)?.to_vec();
    let src = x.f32s("Src")?;
    let (n, ih, iw, c) = (d.dims[0], s.dims[1], s.dims[2], d.dims[3]);
    let hs = ra::lerps(ih, d.dims[1], scale[1]);
    let ws = ra::lerps(iw, d.dims[2], scale[2]);
    let at = |b: u64, h: u64, w: u64, ch: u64| src[(((b * ih + h) * iw + w) * c + ch) as usize];
    let mut out = x.room(d.size() as usize)?;
    for b in 0..n {
        for h in &hs {
            for w in &ws {
                for ch in 0..c {
                    out.push(ra::blend(
                        at(b, h.i0, w.i0, ch),
                        at(b, h.i0, w.i1, ch),
                        at(b, h.i1, w.i0, ch),
                        at(b, h.i1, w.i1, ch),
                        h.frac,
                        w.frac,
                    ));
                }
            }
        }
    }
    x.put_f32s("Dest", &out)
}

/// Glow's order: output channel `oc` takes block `oc / C` (row-major in the
/// block) and input channel `oc % C`.
fn space_to_depth(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let b = x.m().get(m::BLOCK_SIZE)?.max(1) as u64;
    let src = x.bits("Src")?;
    let (ih, iw, ic) = (s.dims[1], s.dims[2], s.dims[3]);
    let mut out = x.room(d.size() as usize)?;
    for ob in 0..d.dims[0] {
        for oh in 0..d.dims[1] {
            for ow in 0..d.dims[2] {
                for oc in 0..d.dims[3] {
                    let layer = oc / ic;
                    let h = oh * b + layer / b;
                    let w = ow * b + layer % b;
                    out.push(src[(((ob * ih + h) * iw + w) * ic + oc % ic) as usize]);
                }
            }
        }
    }
    x.put_bits("Dest", &out)
}

/// Sums from +0 (floats) or wrapping in 64 bits then to the width
/// (integers), along `Dim` in order (from its end with `Reverse`); with
/// `Exclusive` each element gets the sum before its own.
fn cumsum(x: &mut Exec) -> R {
    let t = x.ty("Input")?;
    let dim = x.m().get(m::DIM)?;
    let exclusive = x.m().get(m::EXCLUSIVE)?;
    let reverse = x.m().get(m::REVERSE)?;
    let (outer, n, inner) = ra::cumsum_extents(&t.dims, dim);
    let order = |j: u64| if reverse { n - 1 - j } else { j };
    let pos = |o: u64, j: u64, i: u64| ((o * n + order(j)) * inner + i) as usize;
    if t.elem == ElemKind::Float {
        let v = x.f32s("Input")?;
        let mut out = x.scratch(v.len(), 0f32)?;
        for o in 0..outer {
            for i in 0..inner {
                let mut acc = 0f32;
                for j in 0..n {
                    let p = pos(o, j, i);
                    if exclusive {
                        out[p] = acc;
                        acc += v[p];
                    } else {
                        acc += v[p];
                        out[p] = acc;
                    }
                }
            }
        }
        return x.put_f32s("Dest", &out);
    }
    let v = x.ints("Input")?;
    let mut out = x.scratch(v.len(), 0i64)?;
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = 0i64;
            for j in 0..n {
                let p = pos(o, j, i);
                if exclusive {
                    out[p] = acc;
                    acc = acc.wrapping_add(v[p]);
                } else {
                    acc = acc.wrapping_add(v[p]);
                    out[p] = acc;
                }
            }
        }
    }
    x.put_ints("Dest", &out)
}

/// Row-major walk of `axes` (extent, stride): the source offsets, in order.
fn offsets(axes: &[(u64, u64)]) -> Vec<usize> {
    let mut out = vec![0usize];
    for &(n, s) in axes {
        let mut next = Vec::with_capacity(out.len() * n as usize);
        for &o in &out {
            next.extend((0..n as usize).map(|i| o + i * s as usize));
        }
        out = next;
    }
    out
}

/// Per `Dest` element (the kept coordinates in row-major order), the sum of
/// the averaged elements in row-major order from +0, then `/ count`.
fn mean(x: &mut Exec) -> R {
    let s = x.ty("Src")?;
    let d = x.ty("Dest")?;
    if s.elem != ElemKind::Float {
        return Err(x.unsupported(&s));
    }
    let dims = x.m().get(m::MEAN_DIMS)?.to_vec();
    let (kept, avg, count) = ra::mean_axes(&s, &dims);
    let v = x.f32s("Src")?;
    let (outer, inner) = (offsets(&kept), offsets(&avg));
    let n = count as f32;
    let mut out = x.room(d.size() as usize)?;
    for &o in &outer {
        let mut acc = 0f32;
        for &i in &inner {
            acc += v[o + i];
        }
        out.push(acc / n);
    }
    x.put_f32s("Dest", &out)
}

/// Each input in list order into its slab of `Dest` along `Axis`, one
/// contiguous run per outer index (element bits, any kind).
fn concat(x: &mut Exec) -> R {
    let d = x.ty("Dest")?;
    let axis = x.m().get(m::AXIS)?.max(0) as usize;
    let (outer, at, inner) = crate::emit::split(&d.dims, axis);
    let (outer, at, inner) = (outer as usize, at as usize, inner as usize);
    let mut out = x.scratch(d.size() as usize, 0u64)?;
    let mut off = 0usize;
    for k in x.list("Inputs")? {
        let a = x.ty_at(k)?.dims.get(axis).copied().unwrap_or(1) as usize;
        let v = x.bits_at(k)?;
        let run = a * inner;
        for o in 0..outer {
            let to = (o * at + off) * inner;
            out[to..to + run].copy_from_slice(&v[o * run..o * run + run]);
        }
        off += a;
    }
    x.put_bits("Dest", &out)
}

/// Glow's fixed capacity: the flat positions of the true elements of
/// `Cond` in order, then zeros to `Cond`'s size.
fn nonzero(x: &mut Exec) -> R {
    let cond = x.ints("Cond")?;
    let mut out = x.scratch(cond.len(), 0i64)?;
    let mut k = 0;
    for (i, &c) in cond.iter().enumerate() {
        if c != 0 {
            out[k] = i as i64;
            k += 1;
        }
    }
    x.put_ints("Dest", &out)
}

/// The number of boundaries below each element (`float` comparisons; NaN
/// is below none).
fn bucketize(x: &mut Exec) -> R {
    let b: Vec<f32> = x
        .m()
        .get(m::BOUNDARIES)?
        .iter()
        .map(|&v| v as f32)
        .collect();
    let v = x.f32s("Src")?;
    let out: Vec<i64> = v
        .iter()
        .map(|&e| b.iter().filter(|&&k| k < e).count() as i64)
        .collect();
    x.put_ints("Dest", &out)
}

/// Elements as `f64` (exact for `float` and the integer kinds) for the
/// comparisons of `batchonehot`.
fn exact(x: &Exec, name: &str) -> Result<Vec<f64>, BackendError> {
    let t = x.ty(name)?;
    if t.elem == ElemKind::Float {
        Ok(x.f32s(name)?.iter().map(|&v| v as f64).collect())
    } else {
        Ok(x.ints(name)?.iter().map(|&v| v as f64).collect())
    }
}

/// Per batch row, feature `f` covers the next `Lengths[f]` columns (a
/// negative length none, columns past `Dest` dropped); each is 1 where the
/// feature's value equals that column's `Values` element, else 0.
fn batch_one_hot(x: &mut Exec) -> R {
    let d = x.ty("Dest")?;
    let (data, values) = (exact(x, "Data")?, exact(x, "Values")?);
    let lengths = x.ints("Lengths")?;
    let (rows, width) = (d.dims[0] as usize, d.dims[1] as usize);
    let feats = lengths.len();
    let mut out = x.scratch(rows * width, 0i64)?;
    for b in 0..rows {
        let mut col = 0usize;
        for (f, &len) in lengths.iter().enumerate() {
            let v = data[b * feats + f];
            for _ in 0..len.max(0) {
                if col >= width {
                    break;
                }
                out[b * width + col] = (v == values[col]) as i64;
                col += 1;
            }
        }
    }
    if d.elem == ElemKind::Float {
        let f: Vec<f32> = out.iter().map(|&v| v as f32).collect();
        return x.put_f32s("Dest", &f);
    }
    x.put_ints("Dest", &out)
}

/// The flat slot of index tuple `t` in the first `t.len()` dimensions of
/// `dims`, or `None` when a coordinate is outside its dimension.
fn slot(t: &[i64], dims: &[u64]) -> Option<usize> {
    let mut s = 0usize;
    for (&i, &n) in t.iter().zip(dims) {
        if i < 0 || i as u64 >= n {
            return None;
        }
        s = s * n as usize + i as usize;
    }
    Some(s)
}

/// Each slice written (or added, `Cumulative`) in order at the slot its
/// index tuple names; a tuple outside `Data` is skipped.
fn scatter_data(x: &mut Exec) -> R {
    let (dt, it) = (x.ty("Data")?, x.ty("Indices")?);
    let (n, k) = (it.dims[0] as usize, it.dims[1] as usize);
    let idx = x.ints("Indices")?;
    let line = (dt.dims[k..].iter().product::<u64>()) as usize;
    let cumulative = x.m().get(m::CUMULATIVE)?;
    let slots: Vec<Option<usize>> = (0..n)
        .map(|i| slot(&idx[i * k..i * k + k], &dt.dims))
        .collect();
    if !cumulative {
        let mut data = x.bits("Data")?;
        let sl = x.bits("Slices")?;
        for (i, s) in slots.iter().enumerate() {
            if let Some(s) = s {
                data[s * line..s * line + line].copy_from_slice(&sl[i * line..i * line + line]);
            }
        }
        return x.put_bits("Data", &data);
    }
    if dt.elem == ElemKind::Float {
        let mut data = x.f32s("Data")?;
        let sl = x.f32s("Slices")?;
        for (i, s) in slots.iter().enumerate() {
            if let Some(s) = s {
                for j in 0..line {
                    data[s * line + j] += sl[i * line + j];
                }
            }
        }
        return x.put_f32s("Data", &data);
    }
    let mut data = x.ints("Data")?;
    let sl = x.ints("Slices")?;
    for (i, s) in slots.iter().enumerate() {
        if let Some(s) = s {
            for j in 0..line {
                data[s * line + j] = data[s * line + j].wrapping_add(sl[i * line + j]);
            }
        }
    }
    x.put_ints("Data", &data)
}

/// PyTorch's (and Glow's) windows: `floor(a * in / out)` to
/// `ceil((a + 1) * in / out)`, the products exact and the quotients in
/// `float`; the mean is the `float` sum from +0 divided by the width, then
/// by the height.
fn adaptive_avg_pool(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let src = x.f32s("Src")?;
    let (ih, iw, c) = (s.dims[1], s.dims[2], s.dims[3]);
    let (oh, ow) = (d.dims[1], d.dims[2]);
    let hs = ra::adaptive_windows(oh, ih);
    let ws = ra::adaptive_windows(ow, iw);
    let mut out = x.room(d.size() as usize)?;
    for n in 0..d.dims[0] {
        for &(y0, kh) in &hs {
            for &(x0, kw) in &ws {
                for ch in 0..c {
                    let mut sum = 0f32;
                    for fy in 0..kh {
                        for fx in 0..kw {
                            sum += src[(((n * ih + y0 + fy) * iw + x0 + fx) * c + ch) as usize];
                        }
                    }
                    out.push(sum / kw as f32 / kh as f32);
                }
            }
        }
    }
    x.put_f32s("Dest", &out)
}

/// `Dest = Input`, then for each position `i` of `Index` in order, the
/// `Source` slice `i` along `Dim` times `Alpha` added to the `Dest` slice
/// `Index[i]` (an index outside the dimension is skipped).
fn index_add(x: &mut Exec) -> R {
    let (d, st) = (x.ty("Dest")?, x.ty("Source")?);
    let dim = x.m().get(m::DIM)?.max(0) as usize;
    let alpha = x.m().get(m::ALPHA)? as f32;
    let mut out = x.f32s("Input")?;
    let src = x.f32s("Source")?;
    let idx = x.ints("Index")?;
    let (outer, n, inner) = crate::emit::split(&d.dims, dim);
    let (outer, n, inner) = (outer as usize, n as usize, inner as usize);
    let m = st.dims[dim] as usize;
    for (i, &k) in idx.iter().enumerate() {
        if k < 0 || k as usize >= n {
            continue;
        }
        for o in 0..outer {
            for j in 0..inner {
                out[(o * n + k as usize) * inner + j] += alpha * src[(o * m + i) * inner + j];
            }
        }
    }
    x.put_f32s("Dest", &out)
}

fn gaussian_fill(x: &mut Exec) -> R {
    let d = x.ty("Dest")?;
    if d.elem != ElemKind::Float {
        return Err(x.unsupported(&d));
    }
    let seed = ra::seed_of(x.m().get(m::SEED)?);
    let (mean, scale) = (x.m().get(m::MEAN)? as f32, x.m().get(m::FILL_SCALE)? as f32);
    let out: Vec<f32> = (0..d.size())
        .map(|i| ra::gaussian(seed, i, mean, scale))
        .collect();
    x.put_f32s("Dest", &out)
}
