//! Shape rules of the matrix and reduction opcodes (`fullyconnected`,
//! `matmul`, `batchmatmul`, `batchedadd`, `batchedreduceadd`) and of the
//! normalizations (`softmax`, `batchnormalization`,
//! `localresponsenormalization`).

use super::*;
use crate::member::{self as m, Int, Key};

/// Kinds of a matrix product: float (all share the kind) or quantized
/// (`quant::product`: `i8`/`ui8` inputs and result, an `i32` bias).
fn product_kinds(ctx: &ShapeCtx, ops: &[usize], bias: Option<usize>, errs: &mut Vec<ShapeError>) {
    let src = ops[1];
    if !check_kind(ctx, src, Kinds::FloatOrQuantized, errs) {
        return;
    }
    let quantized = ctx.ty(src).elem.is_quantized();
    if let (true, &[dest, src, w]) = (quantized, ops) {
        quant::product(ctx, [dest, src, w], bias, errs);
        return;
    }
    let kinds = if quantized {
        Kinds::Quantized
    } else {
        Kinds::Float
    };
    for &k in ops.iter().chain(bias.iter()) {
        if k != src && check_kind(ctx, k, kinds, errs) {
            check_same_elem(ctx, k, src, Same::Base, errs);
        }
    }
}

/// `fullyconnected`: `Src N x K`, `Weights K x M`, `Bias M`, `Dest N x M`.
pub fn fully_connected(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, weights, bias) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    product_kinds(ctx, &[dest, src, weights], Some(bias), &mut errs);
    let ok = check_rank(ctx, src, 2, &mut errs)
        & check_rank(ctx, weights, 2, &mut errs)
        & check_rank(ctx, bias, 1, &mut errs)
        & check_rank(ctx, dest, 2, &mut errs);
    if !ok {
        return errs;
    }
    let (n, k) = (ctx.ty(src).dims[0], ctx.ty(src).dims[1]);
    let m = ctx.ty(weights).dims[1];
    check_dims(ctx, weights, &[k, m], "expects", &mut errs);
    check_dims(ctx, bias, &[m], "expects", &mut errs);
    check_dims(ctx, dest, &[n, m], "produces", &mut errs);
    errs
}

/// `rowwisequantizedfullyconnected` (Glow's): `Src N x K` times the
/// transpose of `Weights M x K` plus `Bias M` gives `Dest N x M`; row `j` of
/// `Weights` has scale `Scales[j]` and offset `Offsets[j]` (`float<M>`,
/// `index32<M>`; the `Weights` type's own parameters are ignored) and the
/// `i32` bias its own scale. The engines need `Scales` and `Offsets` as
/// constant weights (the multipliers are derived when compiling).
pub fn rowwise_fully_connected(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, weights, bias, scales, offsets) = (0, 1, 2, 3, 4, 5);
    let mut errs = Vec::new();
    quant::rowwise_product(ctx, [dest, src, weights, bias], &mut errs);
    let ok = check_rank(ctx, src, 2, &mut errs)
        & check_rank(ctx, weights, 2, &mut errs)
        & check_rank(ctx, bias, 1, &mut errs)
        & check_rank(ctx, dest, 2, &mut errs);
    for (k, want) in [(scales, ElemKind::Float), (offsets, ElemKind::Index32)] {
        exact_kind(ctx, k, want, &mut errs);
    }
    if !ok {
        return errs;
    }
    let (n, k) = (ctx.ty(src).dims[0], ctx.ty(src).dims[1]);
    let m = ctx.ty(weights).dims[0];
    check_dims(ctx, weights, &[m, k], "expects", &mut errs);
    for o in [bias, scales, offsets] {
        check_dims(ctx, o, &[m], "expects", &mut errs);
    }
    check_dims(ctx, dest, &[n, m], "produces", &mut errs);
    errs
}

/// `dynamicquantizedfullyconnected` and `dynamicrowwisequantizedfullyconnected`
/// (Glow's): `float` `Src N x K` times `i8` `Weights K x M` plus `float`
/// `Bias M` gives `float` `Dest N x M`, each row of `Src` quantized at run
/// time (docs/quantization.md). The row-wise form's `Scales` (`float<M>`) and
/// `Offsets` (`index32<M>`) give column `j`'s weight parameters (the
/// `Weights` type's own are ignored). Only the symmetric per-row
/// quantization exists, in Glow too: `IsSymmetric` and `IsPerBatchElement`
/// are true.
pub fn dynamic_fully_connected(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, weights, bias) = (0, 1, 2, 3);
    let rowwise = ctx.types.len() == 6;
    let mut errs = Vec::new();
    for (key, what) in [
        (m::IS_SYMMETRIC, "symmetric"),
        (m::IS_PER_BATCH_ELEMENT, "per-row (per batch element)"),
    ] {
        if ctx.get(key) == Some(false) {
            errs.push(ShapeError::at_member(
                key.name(),
                format!("only {what} dynamic quantization is supported (as in Glow)"),
            ));
        }
    }
    let mut want = vec![
        (dest, ElemKind::Float),
        (src, ElemKind::Float),
        (bias, ElemKind::Float),
    ];
    if rowwise {
        want.extend([(4, ElemKind::Float), (5, ElemKind::Index32)]);
    }
    for (k, kind) in want {
        let e = ctx.ty(k).elem;
        if e != kind {
            errs.push(ShapeError::at_operand(
                k,
                format!(
                    "`{}` has element type {e} but must be `{kind}`",
                    ctx.name(k)
                ),
            ));
        }
    }
    let w = ctx.ty(weights).elem;
    if !matches!(w, ElemKind::Int8Q { .. }) {
        errs.push(ShapeError::at_operand(
            weights,
            format!("`Weights` has element type {w} but must be `i8`"),
        ));
    } else if !rowwise {
        quant::params(ctx, weights, &mut errs);
    }
    let mut ok = check_rank(ctx, src, 2, &mut errs)
        & check_rank(ctx, weights, 2, &mut errs)
        & check_rank(ctx, bias, 1, &mut errs)
        & check_rank(ctx, dest, 2, &mut errs);
    if rowwise {
        ok &= check_rank(ctx, 4, 1, &mut errs) & check_rank(ctx, 5, 1, &mut errs);
    }
    if !ok {
        return errs;
    }
    let (n, k) = (ctx.ty(src).dims[0], ctx.ty(src).dims[1]);
    let m = ctx.ty(weights).dims[1];
    check_dims(ctx, weights, &[k, m], "expects", &mut errs);
    check_dims(ctx, bias, &[m], "expects", &mut errs);
    if rowwise {
        for o in [4, 5] {
            check_dims(ctx, o, &[m], "expects", &mut errs);
        }
    }
    check_dims(ctx, dest, &[n, m], "produces", &mut errs);
    errs
}

/// `matmul`: `A x Z` times `Z x B` gives `A x B`.
pub fn matmul(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, lhs, rhs) = (0, 1, 2);
    let mut errs = Vec::new();
    product_kinds(ctx, &[dest, lhs, rhs], None, &mut errs);
    let ok = check_rank(ctx, lhs, 2, &mut errs)
        & check_rank(ctx, rhs, 2, &mut errs)
        & check_rank(ctx, dest, 2, &mut errs);
    if !ok {
        return errs;
    }
    let (a, z) = (ctx.ty(lhs).dims[0], ctx.ty(lhs).dims[1]);
    let b = ctx.ty(rhs).dims[1];
    check_dims(ctx, rhs, &[z, b], "expects", &mut errs);
    check_dims(ctx, dest, &[a, b], "produces", &mut errs);
    errs
}

/// `batchmatmul`: `N x A x Z` times `N x Z x B` gives `N x A x B`.
pub fn batch_matmul(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, lhs, rhs) = (0, 1, 2);
    let mut errs = Vec::new();
    product_kinds(ctx, &[dest, lhs, rhs], None, &mut errs);
    let ok = check_rank(ctx, lhs, 3, &mut errs)
        & check_rank(ctx, rhs, 3, &mut errs)
        & check_rank(ctx, dest, 3, &mut errs);
    if !ok {
        return errs;
    }
    let l = &ctx.ty(lhs).dims;
    let (n, a, z) = (l[0], l[1], l[2]);
    let b = ctx.ty(rhs).dims[2];
    check_dims(ctx, rhs, &[n, z, b], "expects", &mut errs);
    check_dims(ctx, dest, &[n, a, b], "produces", &mut errs);
    errs
}

/// `batchedadd`: `Dest` has `Batch`'s shape; `Slice` is `Batch` without its
/// first dimension.
pub fn batched_add(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, batch, slice) = (0, 1, 2);
    let mut errs = Vec::new();
    if ctx.ty(batch).elem.is_quantized() {
        quant::binary(ctx, [dest, batch, slice], &mut errs);
    } else {
        product_kinds(ctx, &[dest, batch], Some(slice), &mut errs);
    }
    check_same_shape(ctx, dest, batch, &mut errs);
    let b = &ctx.ty(batch).dims;
    if b.len() < 2 {
        errs.push(ShapeError::at_operand(
            batch,
            format!(
                "`Batch` must have at least 2 dimensions for `batchedadd`, found {}",
                ctx.ty(batch)
            ),
        ));
        return errs;
    }
    check_dims(ctx, slice, &b[1..], "expects", &mut errs);
    errs
}

/// `batchedreduceadd`: `Dest` is `Batch` without dimension `Axis` (`<1>` when
/// `Batch` is 1-D).
pub fn batched_reduce_add(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, batch) = (0, 1);
    let mut errs = Vec::new();
    product_kinds(ctx, &[dest, batch], None, &mut errs);
    let dims = &ctx.ty(batch).dims;
    let Some(axis) = axis_in_range(ctx, m::AXIS, dims.len(), batch, &mut errs) else {
        return errs;
    };
    let mut want: Vec<u64> = dims
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != axis)
        .map(|(_, &d)| d)
        .collect();
    if want.is_empty() {
        want.push(1);
    }
    check_dims(ctx, dest, &want, "produces", &mut errs);
    errs
}

/// Member `member` as an index below `rank` (the rank of operand `of`).
pub(crate) fn axis_in_range(
    ctx: &ShapeCtx,
    member: Key<Int>,
    rank: usize,
    of: usize,
    errs: &mut Vec<ShapeError>,
) -> Option<usize> {
    let v = ctx.get(member)?;
    let member = member.name();
    match usize::try_from(v) {
        Ok(a) if a < rank => Some(a),
        _ => {
            errs.push(ShapeError::at_member(
                member,
                format!(
                    "`{member}: {v}` is out of range for `{}` of rank {} (valid: 0 to {})",
                    ctx.name(of),
                    rank,
                    rank.saturating_sub(1)
                ),
            ));
            None
        }
    }
}

/// `softmax`: 2-D float, `Dest` like `Src`.
pub fn softmax(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    uniform(ctx, &[dest, src], Kinds::Float, &mut errs);
    check_rank(ctx, src, 2, &mut errs);
    errs
}

/// `batchnormalization`: `Dest` like `Src`; `Scale`, `Bias`, `Mean`, `Var`
/// are 1-D of `Src`'s size along `ChannelIdx`. Float only.
pub fn batch_normalization(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    let ok = check_kind(ctx, src, Kinds::Float, &mut errs);
    for k in [dest, 2, 3, 4, 5] {
        if check_kind(ctx, k, Kinds::Float, &mut errs) && ok {
            check_same_elem(ctx, k, src, Same::Base, &mut errs);
        }
    }
    check_same_shape(ctx, dest, src, &mut errs);
    let dims = &ctx.ty(src).dims;
    if let Some(ch) = axis_in_range(ctx, m::CHANNEL_IDX, dims.len(), src, &mut errs) {
        for k in 2..6 {
            check_dims(ctx, k, &[dims[ch]], "expects", &mut errs);
        }
    }
    errs
}

/// `layernormalization`: `Dest` like `Src`; `Scale` and `Bias` have the
/// size of the last dimension; float only.
pub fn layer_normalization(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, scale, bias) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    let ok = check_kind(ctx, src, Kinds::Float, &mut errs);
    for k in [dest, scale, bias] {
        if check_kind(ctx, k, Kinds::Float, &mut errs) && ok {
            check_same_elem(ctx, k, src, Same::Base, &mut errs);
        }
    }
    check_same_shape(ctx, dest, src, &mut errs);
    let last = ctx.ty(src).dims.last().copied().unwrap_or(1);
    for k in [scale, bias] {
        check_dims(ctx, k, &[last], "expects", &mut errs);
    }
    errs
}

/// `localresponsenormalization`: `Dest` and `Scale` like `Src`; float only.
pub fn lrn(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    uniform(ctx, &[1, 0, 2], Kinds::Float, &mut errs);
    errs
}
