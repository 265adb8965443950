//! Shape rules of the rearranging instructions (`pad`, `resizenearest`,
//! `resizebilinear`, `spacetodepth`, `flip`, `cumsum`, `nonzero`): Glow's
//! node verifiers, with every member value checked so the kernels never
//! address outside a buffer.

use super::linalg::axis_in_range;
use super::*;
use crate::member as m;

/// Operand `k` must have exactly the element kind `want`, which the opcode
/// reads or writes (`verb`).
fn check_exact_kind(
    ctx: &ShapeCtx,
    k: usize,
    want: ElemKind,
    verb: &str,
    errs: &mut Vec<ShapeError>,
) {
    let e = ctx.ty(k).elem;
    if e != want {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has element type {e} but `{}` {verb} {want}",
                ctx.name(k),
                ctx.opcode()
            ),
        ));
    }
}

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
        if !(s32 > 0.0 && s32.is_finite() && (1.0..=4294967296.0).contains(&size)) {
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

/// `mean @out Dest, @in Src { MeanDims }`: the same element type (not
/// `bool`); `MeanDims` at least one distinct dimension of `Src`; `Dest`
/// holds one element per position of the other dimensions (`Src`'s dims
/// with the averaged ones removed or kept as 1, or any shape of that size).
pub fn mean(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, src, Kinds::Numeric, &mut errs);
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    let d = &ctx.ty(src).dims;
    let Some(dims) = ctx.get(m::MEAN_DIMS) else {
        return errs;
    };
    if dims.is_empty() {
        errs.push(ShapeError::at_member(
            "MeanDims",
            "`MeanDims` is empty: `mean` averages over one dimension at least",
        ));
        return errs;
    }
    let mut seen = vec![false; d.len()];
    for &k in dims {
        match usize::try_from(k) {
            Ok(a) if a < d.len() => {
                if seen[a] {
                    errs.push(ShapeError::at_member(
                        "MeanDims",
                        format!("`MeanDims` lists dimension {a} twice"),
                    ));
                }
                seen[a] = true;
            }
            _ => {
                errs.push(ShapeError::at_member(
                    "MeanDims",
                    format!(
                        "`MeanDims` element {k} is out of range for `Src` of rank {} (valid: 0 to {})",
                        d.len(),
                        d.len().saturating_sub(1)
                    ),
                ));
                return errs;
            }
        }
    }
    let rest: Vec<u64> = d
        .iter()
        .zip(&seen)
        .map(|(&n, &avg)| if avg { 1 } else { n })
        .collect();
    let want: i128 = rest.iter().map(|&n| n as i128).product();
    let t = ctx.ty(dest);
    if t.size() as i128 != want {
        let kept = Type::new(t.elem, &rest);
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has type {t} ({} elements) but `mean` over {dims:?} of {} produces {want} elements (e.g. {kept})",
                t.size(),
                ctx.ty(src)
            ),
        ));
    }
    errs
}

/// `concat @out Dest, @in Inputs... { Axis }`: one input at least, each of
/// `Dest`'s element type and rank with its dims but on `Axis`, whose
/// extents add up to `Dest`'s.
pub fn concat(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let dest = 0;
    let mut errs = Vec::new();
    let list = ctx.inst.operand_list("Inputs").unwrap_or(1..1);
    if list.is_empty() {
        errs.push(ShapeError::at_operand(
            dest,
            "`concat` needs one `@in` operand at least after `Dest`",
        ));
        return errs;
    }
    let d = ctx.ty(dest);
    let Some(axis) = axis_in_range(ctx, m::AXIS, d.rank(), dest, &mut errs) else {
        return errs;
    };
    let mut sum: i128 = 0;
    let mut shapes_ok = true;
    for (i, k) in list.enumerate() {
        check_same_elem(ctx, k, dest, Same::Exact, &mut errs);
        let t = ctx.ty(k);
        let fits =
            t.rank() == d.rank() && (0..d.rank()).all(|j| j == axis || t.dims[j] == d.dims[j]);
        if !fits {
            shapes_ok = false;
            errs.push(ShapeError::at_operand(
                k,
                format!(
                    "input {i} has type {t} but `concat` on axis {axis} into {d} needs the dims of `Dest` on every other axis"
                ),
            ));
            continue;
        }
        sum += t.dims[axis] as i128;
    }
    if shapes_ok && sum != d.dims[axis] as i128 {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has type {d} but the inputs add up to {sum} on axis {axis}, not {}",
                d.dims[axis]
            ),
        ));
    }
    errs
}

/// `nonzero @out Dest, @in Cond`: `bool` `Cond`, `index32` `Dest` with one
/// element per element of `Cond` (Glow's fixed capacity).
pub fn nonzero(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, cond) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, cond, Kinds::Bool, &mut errs);
    check_exact_kind(ctx, dest, ElemKind::Index32, "writes", &mut errs);
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

/// `bucketize @out Dest, @in Src { Boundaries }`: `float` `Src`, `index32`
/// `Dest` of its dims; `Boundaries` ascending (ties allowed), no NaN, so
/// each result is the number of boundaries below the element.
pub fn bucketize(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, src, Kinds::F32, &mut errs);
    check_exact_kind(ctx, dest, ElemKind::Index32, "writes", &mut errs);
    check_same_shape(ctx, dest, src, &mut errs);
    if let Some(b) = ctx.get(m::BOUNDARIES) {
        if b.iter().any(|v| v.is_nan()) || b.windows(2).any(|w| w[1] < w[0]) {
            errs.push(ShapeError::at_member(
                "Boundaries",
                "`Boundaries` must be ascending numbers (no NaN)",
            ));
        }
    }
    errs
}

/// `batchonehot @out Dest, @in Data, @in Lengths, @in Values`: `Data`
/// `[B, F]`, `Lengths` index32 `[F]`, `Values` `[V]` and `Dest` `[B, V]` of
/// `Data`'s element type (Glow's rule, with `Dest`'s shape fixed).
pub fn batch_one_hot(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, lengths, values) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    check_kind(ctx, data, Kinds::Numeric, &mut errs);
    check_same_elem(ctx, values, data, Same::Exact, &mut errs);
    check_same_elem(ctx, dest, data, Same::Exact, &mut errs);
    check_exact_kind(ctx, lengths, ElemKind::Index32, "reads", &mut errs);
    let ok = check_rank(ctx, data, 2, &mut errs)
        & check_rank(ctx, lengths, 1, &mut errs)
        & check_rank(ctx, values, 1, &mut errs);
    if !ok {
        return errs;
    }
    let (b, f) = (ctx.ty(data).dims[0], ctx.ty(data).dims[1]);
    check_dims(ctx, lengths, &[f], "expects", &mut errs);
    check_dims(
        ctx,
        dest,
        &[b, ctx.ty(values).dims[0]],
        "produces",
        &mut errs,
    );
    errs
}

/// `scatterdata @inout Data, @in Indices, @in Slices { Cumulative }`:
/// `Indices` `[N, K]` (index kinds) holds tuples into the first `K`
/// dimensions of `Data`; `Slices` is `[N]` then `Data`'s dims after `K`,
/// of `Data`'s element type (`float` or a plain integer kind when
/// cumulative).
pub fn scatter_data(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (data, indices, slices) = (0, 1, 2);
    let mut errs = Vec::new();
    check_kind(ctx, indices, Kinds::Index, &mut errs);
    check_same_elem(ctx, slices, data, Same::Exact, &mut errs);
    if ctx.get(m::CUMULATIVE) == Some(true) {
        check_kind(ctx, data, Kinds::FloatOrInt, &mut errs);
    }
    if !check_rank(ctx, indices, 2, &mut errs) {
        return errs;
    }
    let (n, k) = (ctx.ty(indices).dims[0], ctx.ty(indices).dims[1]);
    let d = &ctx.ty(data).dims;
    if k as usize > d.len() {
        errs.push(ShapeError::at_operand(
            indices,
            format!(
                "`Indices` holds tuples of {k} but `Data` has rank {}",
                d.len()
            ),
        ));
        return errs;
    }
    let mut want = vec![n];
    want.extend_from_slice(&d[k as usize..]);
    check_dims(ctx, slices, &want, "expects", &mut errs);
    errs
}

/// `adaptiveavgpool @out Dest, @in Src`: NHWC `float`; `Dest` keeps N and
/// C, any positive H and W.
pub fn adaptive_avg_pool(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, src, Kinds::F32, &mut errs);
    check_same_elem(ctx, dest, src, Same::Exact, &mut errs);
    if check_rank(ctx, src, 4, &mut errs) && check_rank(ctx, dest, 4, &mut errs) {
        let (s, d) = (&ctx.ty(src).dims, &ctx.ty(dest).dims);
        check_dims(ctx, dest, &[s[0], d[1], d[2], s[3]], "produces", &mut errs);
    }
    errs
}

/// `indexadd @out Dest, @in Input, @in Index, @in Source { Dim, Alpha }`:
/// `float` `Input`, `Dest` and `Source`; `Index` 1-D (index kinds);
/// `Source` is `Input` with dimension `Dim` the length of `Index`.
pub fn index_add(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, input, index, source) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    check_kind(ctx, input, Kinds::F32, &mut errs);
    check_same_elem(ctx, dest, input, Same::Exact, &mut errs);
    check_same_elem(ctx, source, input, Same::Exact, &mut errs);
    check_same_shape(ctx, dest, input, &mut errs);
    check_kind(ctx, index, Kinds::Index, &mut errs);
    if !check_rank(ctx, index, 1, &mut errs) {
        return errs;
    }
    let d = &ctx.ty(input).dims;
    if let Some(dim) = axis_in_range(ctx, m::DIM, d.len(), input, &mut errs) {
        let mut want = d.clone();
        want[dim] = ctx.ty(index).dims[0];
        check_dims(ctx, source, &want, "expects", &mut errs);
    }
    errs
}

/// `gaussianfill @out Dest, @in Input { Mean, Scale, Seed }`: `Dest` has
/// `Input`'s dims (`Input`, of any kind, only gives the shape) and is
/// `float` or Glow's `float16`.
pub fn gaussian_fill(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, input) = (0, 1);
    let mut errs = Vec::new();
    if !matches!(ctx.ty(dest).elem, ElemKind::Float | ElemKind::Float16) {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has element type {} but `gaussianfill` writes float or float16",
                ctx.ty(dest).elem
            ),
        ));
    }
    if ctx.ty(dest).dims != ctx.ty(input).dims {
        let want = Type::new(ctx.ty(dest).elem, &ctx.ty(input).dims);
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has type {} but `gaussianfill` produces {want} (the dims of `Input`)",
                ctx.ty(dest)
            ),
        ));
    }
    if let Some(seed) = ctx.get(m::SEED) {
        if !seed.is_finite() || seed.abs() >= 9.2e18 {
            errs.push(ShapeError::at_member(
                "Seed",
                format!("`Seed: {seed}` is not a number of at most 2^63 in magnitude"),
            ));
        }
    }
    errs
}
