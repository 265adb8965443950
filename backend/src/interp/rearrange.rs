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
