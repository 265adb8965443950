//! Shape rules of the training instructions (docs/training.md): Glow's
//! gradient instructions, the loss and the `sgd` update. All are `float`
//! (32-bit); a gradient has the type of the value it is the gradient of.

use super::spatial::{conv_geometry, pool_geometry};
use super::*;

/// Operand `k` must have exactly the type of operand `r`.
fn same_type_as(ctx: &ShapeCtx, k: usize, r: usize, errs: &mut Vec<ShapeError>) {
    if ctx.ty(k) != ctx.ty(r) {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has type {} but must have the type of `{}` ({})",
                ctx.name(k),
                ctx.ty(k),
                ctx.name(r),
                ctx.ty(r)
            ),
        ));
    }
}

/// Every operand in `ops` is `float`.
fn all_f32(ctx: &ShapeCtx, ops: &[usize], errs: &mut Vec<ShapeError>) -> bool {
    let mut ok = true;
    for &k in ops {
        ok &= check_kind(ctx, k, Kinds::F32, errs);
    }
    ok
}

/// `convolutiongrad @in Src, @in Filter, @in DestGrad, @out SrcGrad,
/// @out FilterGrad, @out BiasGrad`: `DestGrad` has the shape the
/// convolution of `Src` by `Filter` produces; each gradient has the type of
/// its value (`BiasGrad`: one per output channel).
pub fn convolution_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (src, filter, dest_grad, src_grad, filter_grad, bias_grad) = (0, 1, 2, 3, 4, 5);
    let mut errs = Vec::new();
    all_f32(ctx, &[0, 1, 2, 3, 4, 5], &mut errs);
    let nchw = ctx.inst.get(crate::member::LAYOUT) == Some("NCHW");
    conv_geometry(ctx, nchw, [dest_grad, src, filter, bias_grad], &mut errs);
    same_type_as(ctx, src_grad, src, &mut errs);
    same_type_as(ctx, filter_grad, filter, &mut errs);
    errs
}

/// `maxpoolwithargmax @out Dest, @in Src, @out Argmax`: a max pool whose
/// `Argmax` (`index64`, the shape of `Dest`) holds each maximum's flat index
/// into `Src`.
pub fn max_pool_with_argmax(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, argmax) = (0, 1, 2);
    let mut errs = Vec::new();
    all_f32(ctx, &[dest, src], &mut errs);
    pool_geometry(ctx, dest, src, &mut errs);
    argmax_like(ctx, argmax, dest, src, &mut errs);
    errs
}

/// `Argmax` is `index64` (Glow's) or `index32` with the dims of `Dest`; an
/// `index32` one needs every flat index of `src` to fit.
fn argmax_like(ctx: &ShapeCtx, argmax: usize, dest: usize, src: usize, errs: &mut Vec<ShapeError>) {
    let t = ctx.ty(argmax);
    let kind_ok = match t.elem {
        ElemKind::Index64 => true,
        ElemKind::Index32 => ctx.ty(src).size() <= i32::MAX as u64,
        _ => false,
    };
    if !kind_ok || t.dims != ctx.ty(dest).dims {
        let want = Type::new(ElemKind::Index64, &ctx.ty(dest).dims);
        errs.push(ShapeError::at_operand(
            argmax,
            format!(
                "`{}` has type {t} but must be {want} (or index32 when `{}` has under 2^31 elements)",
                ctx.name(argmax),
                ctx.name(src)
            ),
        ));
    }
}

/// `maxpoolwithargmaxgrad @in Dest, @in Src, @in Argmax, @in DestGrad,
/// @out SrcGrad`.
pub fn max_pool_with_argmax_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, argmax, dest_grad, src_grad) = (0, 1, 2, 3, 4);
    let mut errs = Vec::new();
    all_f32(ctx, &[dest, src, dest_grad, src_grad], &mut errs);
    pool_geometry(ctx, dest, src, &mut errs);
    argmax_like(ctx, argmax, dest, src, &mut errs);
    same_type_as(ctx, dest_grad, dest, &mut errs);
    same_type_as(ctx, src_grad, src, &mut errs);
    errs
}

/// `avgpoolgrad @in Dest, @in Src, @in DestGrad, @out SrcGrad`.
pub fn avg_pool_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, dest_grad, src_grad) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    all_f32(ctx, &[dest, src, dest_grad, src_grad], &mut errs);
    pool_geometry(ctx, dest, src, &mut errs);
    same_type_as(ctx, dest_grad, dest, &mut errs);
    same_type_as(ctx, src_grad, src, &mut errs);
    errs
}

/// `localresponsenormalizationgrad @in Dest, @in Src, @in Scale, @in
/// DestGrad, @out SrcGrad`: all five of one type (the forward's `Dest`,
/// `Src` and `Scale`, and their gradients).
pub fn lrn_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    all_f32(ctx, &[0, 1, 2, 3, 4], &mut errs);
    for k in [0, 2, 3, 4] {
        same_type_as(ctx, k, 1, &mut errs);
    }
    errs
}

/// `batchnormalizationgrad @in Src, @in Scale, @in Mean, @in Var, @in
/// DestGrad, @out SrcGrad, @out ScaleGrad, @out BiasGrad`: `DestGrad` and
/// `SrcGrad` have `Src`'s type; the other five are 1-D of `Src`'s size along
/// `ChannelIdx`.
pub fn batch_norm_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (src, dest_grad, src_grad) = (0, 4, 5);
    let mut errs = Vec::new();
    all_f32(ctx, &[0, 1, 2, 3, 4, 5, 6, 7], &mut errs);
    same_type_as(ctx, dest_grad, src, &mut errs);
    same_type_as(ctx, src_grad, src, &mut errs);
    let dims = &ctx.ty(src).dims;
    if let Some(ch) = super::linalg::axis_in_range(ctx, m::CHANNEL_IDX, dims.len(), src, &mut errs)
    {
        for k in [1, 2, 3, 6, 7] {
            check_dims(ctx, k, &[dims[ch]], "expects", &mut errs);
        }
    }
    errs
}

/// `relugrad`/`sigmoidgrad`/`tanhgrad @in Dest, @in DestGrad, @out SrcGrad`:
/// all three of one type.
pub fn activation_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    all_f32(ctx, &[0, 1, 2], &mut errs);
    same_type_as(ctx, 1, 0, &mut errs);
    same_type_as(ctx, 2, 0, &mut errs);
    errs
}

/// `Labels` is `index32`/`index64` with one label per row of the 2-D `rows`
/// (`[N]` or `[N, 1]`).
fn labels_of(ctx: &ShapeCtx, labels: usize, rows: usize, errs: &mut Vec<ShapeError>) {
    if !check_kind(ctx, labels, Kinds::Index, errs) || !check_rank(ctx, rows, 2, errs) {
        return;
    }
    let n = ctx.ty(rows).dims[0];
    let d = &ctx.ty(labels).dims;
    if d.as_slice() != [n] && d.as_slice() != [n, 1] {
        errs.push(ShapeError::at_operand(
            labels,
            format!(
                "`{}` has type {} but needs one label per row of `{}` ({}): dims [{n}] or [{n}, 1]",
                ctx.name(labels),
                ctx.ty(labels),
                ctx.name(rows),
                ctx.ty(rows)
            ),
        ));
    }
}

/// `softmaxgrad @in OrigDest, @in OrigSrc, @in Selected, @out SrcGrad`:
/// 2-D, `OrigDest`, `OrigSrc` and `SrcGrad` of one type, a label per row.
pub fn softmax_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    all_f32(ctx, &[0, 1, 3], &mut errs);
    same_type_as(ctx, 1, 0, &mut errs);
    same_type_as(ctx, 3, 0, &mut errs);
    labels_of(ctx, 2, 0, &mut errs);
    errs
}

/// `CE` is one `float`.
fn one_float(ctx: &ShapeCtx, k: usize, errs: &mut Vec<ShapeError>) {
    if check_kind(ctx, k, Kinds::F32, errs) && ctx.ty(k).size() != 1 {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has type {} but must hold one element",
                ctx.name(k),
                ctx.ty(k)
            ),
        ));
    }
}

/// `crossentropyloss @in P, @in Labels, @out CE`: `P` is `[N, C]`
/// probabilities, `CE` one element.
pub fn cross_entropy_loss(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    all_f32(ctx, &[0], &mut errs);
    labels_of(ctx, 1, 0, &mut errs);
    one_float(ctx, 2, &mut errs);
    errs
}

/// `crossentropylossgrad @in CEGrad, @in P, @in Labels, @out Pgrad,
/// @out Labelsgrad`.
pub fn cross_entropy_loss_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    one_float(ctx, 0, &mut errs);
    all_f32(ctx, &[1, 3], &mut errs);
    labels_of(ctx, 2, 1, &mut errs);
    same_type_as(ctx, 3, 1, &mut errs);
    same_type_as(ctx, 4, 2, &mut errs);
    errs
}

/// `sgd @inout Weight, @in Gradient, @inout Velocity`: one type.
pub fn sgd(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    all_f32(ctx, &[0, 1, 2], &mut errs);
    same_type_as(ctx, 1, 0, &mut errs);
    same_type_as(ctx, 2, 0, &mut errs);
    errs
}

/// The binary cross-entropy losses over logits, `@out Dest, @in Input,
/// @in Target` then `Weight` and/or `PosWeight`: all `float`; `Target` has
/// `Input`'s type; a weight has `Input`'s dims or is 1-D of `Input`'s last
/// dimension (one per column); `Dest` has `Input`'s type without a
/// reduction (`Reduction: 0`) and one element with one.
pub fn bce_with_logits(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, input, target) = (0, 1, 2);
    let mut errs = Vec::new();
    let ops: Vec<usize> = (0..ctx.types.len()).collect();
    if !all_f32(ctx, &ops, &mut errs) {
        return errs;
    }
    same_type_as(ctx, target, input, &mut errs);
    let dims = &ctx.ty(input).dims;
    let last = *dims.last().unwrap_or(&1);
    for k in 3..ctx.types.len() {
        let w = &ctx.ty(k).dims;
        if w != dims && w[..] != [last] {
            errs.push(ShapeError::at_operand(
                k,
                format!(
                    "`{}` has type {} but must have the dims of `Input` ({}) or be 1-D of its last dimension ({last})",
                    ctx.name(k),
                    ctx.ty(k),
                    ctx.ty(input)
                ),
            ));
        }
    }
    match ctx.inst.get(crate::member::LOSS_REDUCTION) {
        Some(0) => same_type_as(ctx, dest, input, &mut errs),
        Some(_) => one_float(ctx, dest, &mut errs),
        None => {}
    }
    errs
}

/// `thresholdgrad @out Dest, @in Grad, @in Input`: one `float` type.
pub fn threshold_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    if all_f32(ctx, &[0, 1, 2], &mut errs) {
        same_type_as(ctx, 1, 0, &mut errs);
        same_type_as(ctx, 2, 0, &mut errs);
    }
    errs
}

/// Each operand in `list` is `float<B x VectorSize>`; the count is
/// `NumInputs`.
fn pairwise_vectors(
    ctx: &ShapeCtx,
    list: std::ops::Range<usize>,
    batch: u64,
    errs: &mut Vec<ShapeError>,
) {
    let (n, v) = (
        ctx.inst.get(crate::member::NUM_INPUTS).unwrap_or(0),
        ctx.inst.get(crate::member::VECTOR_SIZE).unwrap_or(0),
    );
    if list.len() as i64 != n {
        errs.push(ShapeError::at_member(
            "NumInputs",
            format!(
                "`NumInputs` is {n} but `{}` has {} operand(s)",
                ctx.opcode(),
                list.len()
            ),
        ));
    }
    for k in list {
        if !all_f32(ctx, &[k], errs) {
            continue;
        }
        if ctx.ty(k).dims[..] != [batch, v as u64] {
            errs.push(ShapeError::at_operand(
                k,
                format!(
                    "`{}` has type {} but must be float<{batch} x {v}> (the batch, then `VectorSize`)",
                    ctx.name(k),
                    ctx.ty(k)
                ),
            ));
        }
    }
}

/// `Dest` (or `DestGrad`) is `float<B x n(n - 1)/2>`, a column per pair.
fn pairwise_dest(ctx: &ShapeCtx, k: usize, errs: &mut Vec<ShapeError>) -> Option<u64> {
    if !all_f32(ctx, &[k], errs) {
        return None;
    }
    let n = ctx.inst.get(crate::member::NUM_INPUTS).unwrap_or(0).max(0) as u64;
    let pairs = n * n.saturating_sub(1) / 2;
    let dims = &ctx.ty(k).dims;
    if dims.len() != 2 || dims[1] != pairs {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has type {} but must be float<B x {pairs}>, one column per pair of the {n} inputs",
                ctx.name(k),
                ctx.ty(k)
            ),
        ));
        return None;
    }
    Some(dims[0])
}

/// `batchedpairwisedotproduct @out Dest, @in Inputs...`.
pub fn pairwise_dot(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    if let Some(b) = pairwise_dest(ctx, 0, &mut errs) {
        let list = ctx.inst.operand_list("Inputs").unwrap_or(1..1);
        pairwise_vectors(ctx, list, b, &mut errs);
    }
    errs
}

/// `batchedpairwisedotproductgrad @in DestGrad, @out SrcGrads...,
/// @in Srcs...`: as many gradients as inputs, each of its input's type.
pub fn pairwise_dot_grad(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    if let Some(b) = pairwise_dest(ctx, 0, &mut errs) {
        for list in ["SrcGrads", "Srcs"] {
            let r = ctx.inst.operand_list(list).unwrap_or(1..1);
            pairwise_vectors(ctx, r, b, &mut errs);
        }
    }
    errs
}
