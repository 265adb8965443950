//! Shape rules of the detection instructions (`nonmaxsuppression`, ...).
//! The rules fix every shape, so the kernels never address outside a buffer
//! whatever the scores, boxes and limits are.

use super::*;
use crate::member as m;

/// Operand `k` (if present) holds one element of `kinds`.
fn scalar_operand(ctx: &ShapeCtx, k: usize, kinds: Kinds, errs: &mut Vec<ShapeError>) {
    if k >= ctx.types.len() {
        return;
    }
    check_kind(ctx, k, kinds, errs);
    if ctx.ty(k).size() != 1 {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has type {} but `{}` reads one element from it",
                ctx.name(k),
                ctx.ty(k),
                ctx.opcode()
            ),
        ));
    }
}

/// `nonmaxsuppression @out Indices, @out NumberOfSelectedIndices, @in
/// Boxes, @in Scores [, @in MaxOutputIn, @in IouThresholdIn, @in
/// ScoreThresholdIn]`. ONNX form: float `Boxes` `[B, N, 4]`, `Scores` `[B,
/// C, N]`, `Indices` `[R, 3]`; TensorFlow form (`IsTFVersion4`): `Boxes`
/// `[N, 4]`, `Scores` `[N]`, `Indices` `[R]`. `Indices` and
/// `NumberOfSelectedIndices` (any shape) share an index kind; the optional
/// limits hold one element each (an index kind, then two floats).
pub fn non_max_suppression(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (indices, count, boxes, scores) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    check_kind(ctx, indices, Kinds::Index, &mut errs);
    check_same_elem(ctx, count, indices, Same::Exact, &mut errs);
    check_kind(ctx, boxes, Kinds::Float, &mut errs);
    check_same_elem(ctx, scores, boxes, Same::Exact, &mut errs);
    scalar_operand(ctx, 4, Kinds::Index, &mut errs);
    scalar_operand(ctx, 5, Kinds::Float, &mut errs);
    scalar_operand(ctx, 6, Kinds::Float, &mut errs);
    let v4 = ctx.get(m::IS_TF_VERSION4).unwrap_or(false);
    let (bd, sd) = (&ctx.ty(boxes).dims, &ctx.ty(scores).dims);
    if v4 {
        if check_rank(ctx, boxes, 2, &mut errs) {
            let n = bd[0];
            if bd[1] != 4 {
                check_dims(ctx, boxes, &[n, 4], "expects", &mut errs);
            }
            check_dims(ctx, scores, &[n], "expects", &mut errs);
        }
        check_rank(ctx, indices, 1, &mut errs);
    } else {
        if check_rank(ctx, boxes, 3, &mut errs) {
            let (b, n) = (bd[0], bd[1]);
            if bd[2] != 4 {
                check_dims(ctx, boxes, &[b, n, 4], "expects", &mut errs);
            }
            let c = if sd.len() == 3 { sd[1] } else { 1 };
            check_dims(ctx, scores, &[b, c, n], "expects", &mut errs);
        }
        if check_rank(ctx, indices, 2, &mut errs) && ctx.ty(indices).dims[1] != 3 {
            let r = ctx.ty(indices).dims[0];
            check_dims(ctx, indices, &[r, 3], "produces", &mut errs);
        }
    }
    errs
}

/// `roialign @out Result, @in FeatureMap, @in Boxes, @in BatchIndices`:
/// float `FeatureMap` `[N, H, W, C]` (NHWC), `Boxes` `[K, 4]` (x0, y0, x1,
/// y1; the batch from `BatchIndices`, index32 or index64 `[K]`), `[K, 5]`
/// (the batch first) or, `Rotated`, `[K, 6]` (batch, centre x, y, width,
/// height, angle in degrees); `Result` `[K, OutputHeight, OutputWidth, C]`.
/// `BatchIndices` is `[K]` when read (`[K, 4]` boxes), else any index tensor.
pub fn roi_align(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (result, map, boxes, batch) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    check_kind(ctx, map, Kinds::Float, &mut errs);
    check_same_elem(ctx, result, map, Same::Exact, &mut errs);
    check_same_elem(ctx, boxes, map, Same::Exact, &mut errs);
    check_kind(ctx, batch, Kinds::Index, &mut errs);
    let rotated = ctx.get(m::ROTATED).unwrap_or(false);
    if !check_rank(ctx, map, 4, &mut errs) || !check_rank(ctx, boxes, 2, &mut errs) {
        return errs;
    }
    let bd = &ctx.ty(boxes).dims;
    let k = bd[0];
    let cols_ok = if rotated {
        bd[1] == 6
    } else {
        bd[1] == 4 || bd[1] == 5
    };
    if !cols_ok {
        errs.push(ShapeError::at_operand(
            boxes,
            format!(
                "`Boxes` has type {} but `roialign` takes [K, {}] boxes{}",
                ctx.ty(boxes),
                if rotated { "6" } else { "4] or [K, 5" },
                if rotated { " when `Rotated`" } else { "" }
            ),
        ));
    }
    // Read only for [K, 4] boxes.
    if bd[1] == 4 && !rotated {
        check_dims(ctx, batch, &[k], "expects", &mut errs);
    }
    let (Some(oh), Some(ow)) = (ctx.get(m::OUTPUT_HEIGHT), ctx.get(m::OUTPUT_WIDTH)) else {
        return errs;
    };
    if oh < 1 || ow < 1 {
        return errs;
    }
    let c = ctx.ty(map).dims[3];
    check_dims(
        ctx,
        result,
        &[k, oh as u64, ow as u64, c],
        "produces",
        &mut errs,
    );
    errs
}

/// `bboxtransform @out BoxOut, @out RoiBatchSplits, @in Rois, @in Deltas,
/// @in ImInfo`: float throughout; `D` = 5 when `Rotated`, else 4. `Rois`
/// `[N, D]` or `[N, D + 1]` (a batch number first), `Deltas` `[N, C * D]`,
/// `ImInfo` `[B, 3]` (height, width, scale), `BoxOut` as `Deltas`,
/// `RoiBatchSplits` `[B]`; `Weights` holds 4 values.
pub fn bbox_transform(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (out, splits, rois, deltas, info) = (0, 1, 2, 3, 4);
    let mut errs = Vec::new();
    check_kind(ctx, rois, Kinds::Float, &mut errs);
    for k in [out, splits, deltas, info] {
        check_same_elem(ctx, k, rois, Same::Exact, &mut errs);
    }
    if ctx.get(m::WEIGHTS).is_some_and(|w| w.len() != 4) {
        errs.push(ShapeError::at_member(
            "Weights",
            "`bboxtransform` takes 4 `Weights` (x, y, w, h)",
        ));
    }
    let d = if ctx.get(m::ROTATED).unwrap_or(false) {
        5
    } else {
        4
    };
    if !check_rank(ctx, rois, 2, &mut errs)
        | !check_rank(ctx, deltas, 2, &mut errs)
        | !check_rank(ctx, info, 2, &mut errs)
    {
        return errs;
    }
    let (rd, dd, id) = (&ctx.ty(rois).dims, &ctx.ty(deltas).dims, &ctx.ty(info).dims);
    if rd[1] != d && rd[1] != d + 1 {
        errs.push(ShapeError::at_operand(
            rois,
            format!(
                "`Rois` has type {} but `bboxtransform` takes [N, {d}] or [N, {}] boxes here",
                ctx.ty(rois),
                d + 1
            ),
        ));
    }
    if dd[0] != rd[0] || dd[1] % d != 0 {
        errs.push(ShapeError::at_operand(
            deltas,
            format!(
                "`Deltas` has type {} but `bboxtransform` takes [{}, C * {d}] deltas for {} rois",
                ctx.ty(deltas),
                rd[0],
                rd[0]
            ),
        ));
    }
    if id[1] != 3 {
        check_dims(ctx, info, &[id[0], 3], "expects", &mut errs);
    }
    check_dims(ctx, out, dd, "produces", &mut errs);
    check_dims(ctx, splits, &[id[0]], "produces", &mut errs);
    errs
}

/// `mfcc @out Coefficients, @in Spectrogram, @in MelWeights, @in MelRanges,
/// @in DctMat`: float `Spectrogram` `[W, S]`, `MelWeights` 1-D, index32
/// `MelRanges` `[2 * FilterBankCount]`, `DctMat` `[NumCoefficients,
/// FilterBankCount]`, `Coefficients` `[W, NumCoefficients]`.
pub fn mfcc(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (out, spec, weights, ranges, dct) = (0, 1, 2, 3, 4);
    let mut errs = Vec::new();
    check_kind(ctx, spec, Kinds::Float, &mut errs);
    for k in [out, weights, dct] {
        check_same_elem(ctx, k, spec, Same::Exact, &mut errs);
    }
    if ctx.ty(ranges).elem != ElemKind::Index32 {
        errs.push(ShapeError::at_operand(
            ranges,
            format!(
                "`MelRanges` has element type {} but `mfcc` takes `index32`",
                ctx.ty(ranges).elem
            ),
        ));
    }
    check_rank(ctx, weights, 1, &mut errs);
    let (Some(f), Some(nc)) = (ctx.get(m::FILTER_BANK_COUNT), ctx.get(m::NUM_COEFFICIENTS)) else {
        return errs;
    };
    if f < 1 || nc < 1 || !check_rank(ctx, spec, 2, &mut errs) {
        return errs;
    }
    let (f, nc) = (f as u64, nc as u64);
    check_dims(ctx, ranges, &[2 * f], "expects", &mut errs);
    check_dims(ctx, dct, &[nc, f], "expects", &mut errs);
    check_dims(ctx, out, &[ctx.ty(spec).dims[0], nc], "produces", &mut errs);
    errs
}
