//! Shape rules of the data-movement opcodes: `tensorview` (a flat
//! reinterpretation), `transpose`, `inserttensor`, `extracttensor` (strided
//! windows). Movement keeps the element type exactly, except a tensorview,
//! which may reinterpret bytes.

use super::linalg::axis_in_range;
use super::*;
use crate::member as m;

/// `Offsets` as one non-negative offset per dimension of operand `of`
/// (whose dims are `dims`); errors at the member otherwise.
fn offsets(
    ctx: &ShapeCtx,
    dims: &[u64],
    of: usize,
    errs: &mut Vec<ShapeError>,
) -> Option<Vec<u64>> {
    let offs = ctx.get(m::OFFSETS)?;
    if offs.len() != dims.len() {
        errs.push(ShapeError::at_member(
            "Offsets",
            format!(
                "`Offsets` has {} elements but `{}` has rank {}",
                offs.len(),
                ctx.name(of),
                dims.len()
            ),
        ));
        return None;
    }
    let mut out = Vec::with_capacity(offs.len());
    for (i, &o) in offs.iter().enumerate() {
        if o < 0 {
            errs.push(ShapeError::at_member(
                "Offsets",
                format!("`Offsets` element {i} is negative ({o})"),
            ));
            return None;
        }
        out.push(o as u64);
    }
    Some(out)
}

/// `tensorview @in Src { Ty, Offsets }`: `Ty`'s bytes, starting at the
/// row-major element index of `Offsets` in `Src`, lie inside `Src`.
pub fn tensorview(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    let src = ctx.ty(0);
    let Some(view) = ctx.inst.get(m::TY) else {
        return errs;
    };
    let Some(offs) = offsets(ctx, &src.dims, 0, &mut errs) else {
        return errs;
    };
    for (i, (&o, &d)) in offs.iter().zip(&src.dims).enumerate() {
        if o >= d {
            errs.push(ShapeError::at_member(
                "Offsets",
                format!("offset {o} is outside dimension {i} (size {d}) of `Src` {src}"),
            ));
            return errs;
        }
    }
    // u128 cannot overflow: dims and offsets are below 2^64 and each type
    // holds fewer than 2^61 elements (the parser rejects larger ones).
    let mut lin: u128 = 0;
    for (k, &o) in offs.iter().enumerate() {
        let stride: u128 = src.dims[k + 1..].iter().map(|&d| d as u128).product();
        lin = lin.saturating_add((o as u128).saturating_mul(stride));
    }
    let start = lin.saturating_mul(src.elem.bytes() as u128);
    let len = view.dims.iter().fold(view.elem.bytes() as u128, |a, &d| {
        a.saturating_mul(d as u128)
    });
    let end = start.saturating_add(len);
    let size = src.dims.iter().fold(src.elem.bytes() as u128, |a, &d| {
        a.saturating_mul(d as u128)
    });
    if end > size {
        errs.push(ShapeError::at_member(
            "Ty",
            format!(
                "the view {view} at element offset {lin} covers bytes {start}..{end} \
                 but `Src` {src} has only {size} bytes"
            ),
        ));
    }
    errs
}

/// `transpose { Shuffle }`: `Dest` dim `i` is `Src` dim `Shuffle[i]`.
pub fn transpose(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    let dims = &ctx.ty(src).dims;
    let Some(shuffle) = ctx.get(m::SHUFFLE) else {
        return errs;
    };
    let mut seen = vec![false; dims.len()];
    let is_perm = shuffle.len() == dims.len()
        && shuffle.iter().all(|&s| {
            usize::try_from(s)
                .ok()
                .and_then(|i| seen.get_mut(i))
                .is_some_and(|b| !std::mem::replace(b, true))
        });
    if !is_perm {
        errs.push(ShapeError::at_member(
            "Shuffle",
            format!(
                "`Shuffle: {shuffle:?}` is not a permutation of 0..{} (the rank of `Src`)",
                dims.len()
            ),
        ));
        return errs;
    }
    let want: Vec<u64> = shuffle.iter().map(|&s| dims[s as usize]).collect();
    check_dims(ctx, dest, &want, "produces", &mut errs);
    errs
}

/// `inserttensor @inout Dest, @in Src { Offsets, Count, Axis }`: `Count`
/// copies of `Src` along `Axis`, starting at `Offsets`, fit in `Dest`.
pub fn insert_tensor(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_same_elem(ctx, src, dest, Same::Exact, &mut errs);
    let (d, s) = (&ctx.ty(dest).dims, &ctx.ty(src).dims);
    if !check_rank(ctx, src, d.len(), &mut errs) {
        return errs;
    }
    let axis = axis_in_range(ctx, m::AXIS, d.len(), dest, &mut errs);
    let count = ctx.get(m::COUNT).filter(|&c| c >= 1);
    let offs = offsets(ctx, d, dest, &mut errs);
    let (Some(axis), Some(count), Some(offs)) = (axis, count, offs) else {
        return errs;
    };
    for i in 0..d.len() {
        let copies = if i == axis { count as u128 } else { 1 };
        let end = offs[i] as u128 + copies * s[i] as u128;
        if end > d[i] as u128 {
            errs.push(ShapeError::at_operand(
                src,
                format!(
                    "`Src` {} does not fit in `Dest` {} at offsets {:?}{}: dimension {} \
                     reaches {} but has size {}",
                    ctx.ty(src),
                    ctx.ty(dest),
                    offs,
                    if count > 1 {
                        format!(" ({count} copies along axis {axis})")
                    } else {
                        String::new()
                    },
                    i,
                    end,
                    d[i]
                ),
            ));
            break;
        }
    }
    errs
}

/// `extracttensor @out Dest, @in Src { Offsets }`: the `Dest`-sized window
/// at `Offsets` lies inside `Src`.
pub fn extract_tensor(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    let (d, s) = (&ctx.ty(dest).dims, &ctx.ty(src).dims);
    if !check_rank(ctx, dest, s.len(), &mut errs) {
        return errs;
    }
    let Some(offs) = offsets(ctx, s, src, &mut errs) else {
        return errs;
    };
    for i in 0..s.len() {
        let end = offs[i] as u128 + d[i] as u128;
        if end > s[i] as u128 {
            errs.push(ShapeError::at_operand(
                dest,
                format!(
                    "the window {} at offsets {:?} does not fit in `Src` {}: dimension {} \
                     reaches {} but has size {}",
                    ctx.ty(dest),
                    offs,
                    ctx.ty(src),
                    i,
                    end,
                    s[i]
                ),
            ));
            break;
        }
    }
    errs
}
