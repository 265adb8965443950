//! Shape rules of the opcodes that produce or consume run-time indices
//! (`gatherelements`, `gathernd`, `scatterelements`, `scatternd`, `onehot`,
//! `argmax`, `argmin`). Index operands are `index32` or `index64`; the
//! rules fix every shape so that the kernels never address outside a
//! buffer whatever the index values are (those are checked at run time).

use super::linalg::axis_in_range;
use super::*;
use crate::member as m;

/// `Dest` must have exactly `Data`'s element type (the kernels move bits).
fn same_elem_as_data(ctx: &ShapeCtx, dest: usize, data: usize, errs: &mut Vec<ShapeError>) {
    if ctx.ty(dest).elem != ctx.ty(data).elem {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`{}` has element type {} but `{}` has {}",
                ctx.name(dest),
                ctx.ty(dest).elem,
                ctx.name(data),
                ctx.ty(data).elem
            ),
        ));
    }
}

/// `Indices` has `Data`'s rank and no dimension above `Data`'s except on
/// `axis` (where the index values pick the position).
fn indices_fit(ctx: &ShapeCtx, data: usize, idx: usize, axis: usize, errs: &mut Vec<ShapeError>) {
    let (d, i) = (&ctx.ty(data).dims, &ctx.ty(idx).dims);
    let fits = d.len() == i.len()
        && d.iter()
            .zip(i)
            .enumerate()
            .all(|(k, (&dd, &ii))| k == axis || ii <= dd);
    if !fits {
        errs.push(ShapeError::at_operand(
            idx,
            format!(
                "`{}` has type {} but `{}` needs `{}`'s rank ({}) and no larger dimension except on `Axis`",
                ctx.name(idx),
                ctx.ty(idx),
                ctx.opcode(),
                ctx.name(data),
                ctx.ty(data)
            ),
        ));
    }
}

/// IR dims of a possibly empty (scalar) shape.
fn nonempty(mut dims: Vec<u64>) -> Vec<u64> {
    if dims.is_empty() {
        dims.push(1);
    }
    dims
}

/// `gatherelements @out Dest, @in Data, @in Indices { Axis }`: `Dest` has
/// `Indices`' dims and `Data`'s element type.
pub fn gather_elements(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, idx) = (0, 1, 2);
    let mut errs = Vec::new();
    check_kind(ctx, idx, Kinds::Index, &mut errs);
    same_elem_as_data(ctx, dest, data, &mut errs);
    let rank = ctx.ty(data).rank();
    if let Some(axis) = axis_in_range(ctx, m::AXIS, rank, data, &mut errs) {
        indices_fit(ctx, data, idx, axis, &mut errs);
    }
    let want = ctx.ty(idx).dims.clone();
    check_dims(ctx, dest, &want, "produces", &mut errs);
    errs
}

/// `gathernd @out Dest, @in Data, @in Indices { BatchDims }`: the last
/// dimension `k` of `Indices` indexes `Data` after the `BatchDims` leading
/// dimensions (shared by both); `Dest` is `Indices`' dims without the last
/// followed by `Data`'s dims after `BatchDims + k`.
pub fn gather_nd(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, idx) = (0, 1, 2);
    let mut errs = Vec::new();
    check_kind(ctx, idx, Kinds::Index, &mut errs);
    same_elem_as_data(ctx, dest, data, &mut errs);
    let (d, i) = (&ctx.ty(data).dims, &ctx.ty(idx).dims);
    let Some(b) = ctx.get(m::BATCH_DIMS).and_then(|b| usize::try_from(b).ok()) else {
        return errs;
    };
    let k = *i.last().unwrap_or(&0) as usize;
    if b >= i.len() || b >= d.len() || k == 0 || b + k > d.len() || d[..b] != i[..b] {
        errs.push(ShapeError::at_operand(
            idx,
            format!(
                "`Indices` has type {} but `gathernd` with `BatchDims: {b}` on `Data` {} needs the leading {b} dimensions shared and a last dimension from 1 to {}",
                ctx.ty(idx),
                ctx.ty(data),
                d.len().saturating_sub(b)
            ),
        ));
        return errs;
    }
    let mut want = i[..i.len() - 1].to_vec();
    want.extend(&d[b + k..]);
    check_dims(ctx, dest, &nonempty(want), "produces", &mut errs);
    errs
}

/// What both scatters need: index `Indices`, `Dest` of `Data`'s type and
/// `Updates` of its element kind.
fn scatter_operands(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, idx, upd) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    check_kind(ctx, idx, Kinds::Index, &mut errs);
    same_elem_as_data(ctx, dest, data, &mut errs);
    same_elem_as_data(ctx, upd, data, &mut errs);
    check_same_shape(ctx, dest, data, &mut errs);
    errs
}

/// `scatterelements @out Dest, @in Data, @in Indices, @in Updates { Axis,
/// Reduction }`: `Dest` is `Data`'s type; `Updates` has `Indices`' dims.
pub fn scatter_elements(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (data, idx, upd) = (1, 2, 3);
    let mut errs = scatter_operands(ctx);
    let rank = ctx.ty(data).rank();
    if let Some(axis) = axis_in_range(ctx, m::AXIS, rank, data, &mut errs) {
        indices_fit(ctx, data, idx, axis, &mut errs);
    }
    check_same_shape(ctx, upd, idx, &mut errs);
    errs
}

/// `scatternd @out Dest, @in Data, @in Indices, @in Updates { Reduction }`:
/// the last dimension `k` of `Indices` indexes `Data`; `Updates` is
/// `Indices`' dims without the last followed by `Data`'s dims after `k`.
pub fn scatter_nd(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (data, idx, upd) = (1, 2, 3);
    let mut errs = scatter_operands(ctx);
    let (d, i) = (&ctx.ty(data).dims, &ctx.ty(idx).dims);
    let k = *i.last().unwrap_or(&0) as usize;
    if k == 0 || k > d.len() {
        errs.push(ShapeError::at_operand(
            idx,
            format!(
                "`Indices` has type {} but `scatternd` on `Data` {} needs a last dimension from 1 to {}",
                ctx.ty(idx),
                ctx.ty(data),
                d.len()
            ),
        ));
        return errs;
    }
    let mut want = i[..i.len() - 1].to_vec();
    want.extend(&d[k..]);
    check_dims(ctx, upd, &nonempty(want), "expects", &mut errs);
    errs
}

/// `onehot @out Dest, @in Indices { Axis, OffValue, OnValue }`: `Dest` is
/// `Indices`' dims with the depth inserted at `Axis`.
pub fn one_hot(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, idx) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, idx, Kinds::Index, &mut errs);
    let d = &ctx.ty(dest).dims;
    let Some(axis) = axis_in_range(ctx, m::AXIS, d.len(), dest, &mut errs) else {
        return errs;
    };
    let mut without = d.clone();
    without.remove(axis);
    if without != ctx.ty(idx).dims {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has type {} but `onehot` of `Indices` {} needs `Indices`' dims with one more at `Axis: {axis}`",
                ctx.ty(dest),
                ctx.ty(idx)
            ),
        ));
    }
    errs
}

/// `argmax`/`argmin @out Dest, @in Src { Axis, KeepDims }`: float `Src`,
/// index `Dest` of `Src`'s dims with `Axis` kept as 1 or removed.
pub fn arg_min_max(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    check_kind(ctx, dest, Kinds::Index, &mut errs);
    check_kind(ctx, src, Kinds::Float, &mut errs);
    let d = &ctx.ty(src).dims;
    let Some(axis) = axis_in_range(ctx, m::AXIS, d.len(), src, &mut errs) else {
        return errs;
    };
    let keep = ctx.inst.get(m::KEEP_DIMS).unwrap_or(true);
    let mut want = d.clone();
    if keep {
        want[axis] = 1;
    } else {
        want.remove(axis);
    }
    check_dims(ctx, dest, &nonempty(want), "produces", &mut errs);
    errs
}
