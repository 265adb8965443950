//! Shape rules of the rearranging instructions (`pad`, `resizenearest`,
//! `resizebilinear`, `spacetodepth`, `flip`, `cumsum`, `nonzero`): Glow's
//! node verifiers, with every member value checked so the kernels never
//! address outside a buffer.

use super::linalg::axis_in_range;
use super::*;
use crate::member as m;

/// The padding modes of `pad` (`PaddingMode`): Glow's three, then wrap.
pub const PADDING_MODES: [&str; 4] = ["constant", "reflect", "edge", "wrap"];

/// `pad @out Dest, @in Src { Pad, PaddingMode, Value }`: `Pad` holds the
/// pads before each dimension, then after each (ONNX's order; negative
/// pads crop); `Dest` has `Src`'s element type and dims `d + before + after`,
/// each at least 1. `PaddingMode` is 0 (constant), 1 (reflect), 2 (edge) or
/// 3 (wrap).
pub fn pad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    if let Some(mode) = ctx.get(m::PADDING_MODE) {
        if !(0..PADDING_MODES.len() as i64).contains(&mode) {
            errs.push(ShapeError::at_member(
                "PaddingMode",
                format!(
                    "`PaddingMode: {mode}` is not a padding mode (0 constant, 1 reflect, 2 edge, 3 wrap)"
                ),
            ));
        }
    }
    let d = &ctx.ty(src).dims;
    let Some(pads) = ctx.get(m::PAD) else {
        return errs;
    };
    if pads.len() != 2 * d.len() {
        errs.push(ShapeError::at_member(
            "Pad",
            format!(
                "`Pad` has {} elements but `Src` has rank {} (it needs {}: the pads before each dimension, then after)",
                pads.len(),
                d.len(),
                2 * d.len()
            ),
        ));
        return errs;
    }
    let mut want = Vec::with_capacity(d.len());
    for (k, &n) in d.iter().enumerate() {
        let size = n as i128 + pads[k] as i128 + pads[k + d.len()] as i128;
        if size < 1 || size > u64::MAX as i128 {
            errs.push(ShapeError::at_member(
                "Pad",
                format!(
                    "`Pad` gives dimension {k} of `Src` (size {n}) the size {size}; it must be at least 1"
                ),
            ));
            return errs;
        }
        want.push(size as u64);
    }
    check_dims(ctx, dest, &want, "produces", &mut errs);
    errs
}

/// `resizenearest`/`resizebilinear @out Dest, @in Src { Scale }`: one
/// positive scale per dimension; `Dest` dimension `i` is
/// `floor(Src[i] * Scale[i])` computed in `float` (Glow's rule), at least
/// 1. `resizebilinear` is 4-D NHWC, float, with batch and channel scales 1.
pub fn resize(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let bilinear = ctx.inst.opcode == crate::Opcode::ResizeBilinear;
    let mut errs = Vec::new();
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    if bilinear {
        check_kind(ctx, src, Kinds::Float, &mut errs);
        if !check_rank(ctx, src, 4, &mut errs) {
            return errs;
        }
    }
    let d = &ctx.ty(src).dims;
    let Some(scale) = ctx.get(m::RESIZE_SCALE) else {
        return errs;
    };
    if scale.len() != d.len() {
        errs.push(ShapeError::at_member(
            "Scale",
            format!(
                "`Scale` has {} elements but `Src` has rank {}",
                scale.len(),
                d.len()
            ),
        ));
        return errs;
    }
    let mut want = Vec::with_capacity(d.len());
    for (k, (&n, &s)) in d.iter().zip(scale).enumerate() {
        let s32 = s as f32;
        let size = (n as f32 * s32).floor();
        if !(s32 > 0.0 && s32.is_finite()) || !(1.0..=4294967296.0).contains(&size) {
            errs.push(ShapeError::at_member(
                "Scale",
                format!(
                    "scale {s} of dimension {k} (size {n}) must be positive and give a size of at least 1 and at most 2^32"
                ),
            ));
            return errs;
        }
        if bilinear && (k == 0 || k == 3) && s32 != 1.0 {
            errs.push(ShapeError::at_member(
                "Scale",
                format!(
                    "`resizebilinear` scales only H and W: scale {s} of dimension {k} must be 1"
                ),
            ));
            return errs;
        }
        want.push(size as u64);
    }
    check_dims(ctx, dest, &want, "produces", &mut errs);
    errs
}

/// `spacetodepth @out Dest, @in Src { BlockSize }`: NHWC; `Dest` is
/// `[N, H / b, W / b, C * b * b]`, H and W multiples of `b`.
pub fn space_to_depth(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    if !check_rank(ctx, src, 4, &mut errs) {
        return errs;
    }
    let d = &ctx.ty(src).dims;
    let Some(b) = ctx.get(m::BLOCK_SIZE).filter(|&b| b >= 1) else {
        return errs;
    };
    let b = b as u64;
    if !d[1].is_multiple_of(b) || !d[2].is_multiple_of(b) {
        errs.push(ShapeError::at_operand(
            src,
            format!(
                "`Src` {} has H and W that are not multiples of `BlockSize` {b}",
                ctx.ty(src)
            ),
        ));
        return errs;
    }
    let Some(c) = d[3].checked_mul(b * b).filter(|_| b <= u32::MAX as u64) else {
        errs.push(ShapeError::at_member(
            "BlockSize",
            format!("`BlockSize: {b}` makes the channel count overflow"),
        ));
        return errs;
    };
    check_dims(
        ctx,
        dest,
        &[d[0], d[1] / b, d[2] / b, c],
        "produces",
        &mut errs,
    );
    errs
}

/// `flip @out Dest, @in Src { Axis }`: the same type; `Axis` a dimension.
pub fn flip(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    check_same_shape(ctx, dest, src, &mut errs);
    axis_in_range(ctx, m::AXIS, ctx.ty(src).rank(), src, &mut errs);
    errs
}

/// `cumsum @out Dest, @in Input { Dim, Exclusive, Reverse }`: the same
/// type, `float` or a plain integer kind; `Dim` a dimension, negative ones
/// counting from the end.
pub fn cumsum(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, input) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, input, Kinds::FloatOrInt, &mut errs);
    check_same_elem(ctx, dest, input, Same::Exact, &mut errs);
    check_same_shape(ctx, dest, input, &mut errs);
    let rank = ctx.ty(input).rank() as i64;
    if let Some(d) = ctx.get(m::DIM) {
        if d < -rank || d >= rank {
            errs.push(ShapeError::at_member(
                "Dim",
                format!(
                    "`Dim: {d}` is out of range for `Input` of rank {rank} (valid: {} to {})",
                    -rank,
                    rank - 1
                ),
            ));
        }
    }
    errs
}

/// `nonzero @out Dest, @in Cond`: `bool` `Cond`, `index32` `Dest` with one
/// element per element of `Cond` (Glow's fixed capacity).
pub fn nonzero(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, cond) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, cond, Kinds::Bool, &mut errs);
    if ctx.ty(dest).elem != ElemKind::Index32 {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has element type {} but `nonzero` writes index32",
                ctx.ty(dest).elem
            ),
        ));
    }
    let n = ctx.ty(cond).size();
    if ctx.ty(dest).size() != n {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` {} has {} elements but `Cond` {} has {n}: `nonzero` writes one place per element of `Cond`",
                ctx.ty(dest),
                ctx.ty(dest).size(),
                ctx.ty(cond)
            ),
        ));
    }
    errs
}
