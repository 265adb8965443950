//! Element-type rules of the quantized kernels (docs/quantization.md): which
//! quantized kinds each computes on, and that the integer multipliers the
//! engines derive from the scales exist (`crate::quant`).

use super::*;
use crate::member as m;
use crate::opcode::Opcode;
use crate::quant as q;

/// Operand `k` is quantized with usable parameters (positive scale, offset
/// in range; `i32`: offset 0).
pub(super) fn params(ctx: &ShapeCtx, k: usize, errs: &mut Vec<ShapeError>) -> bool {
    match q::check_kind(ctx.ty(k).elem) {
        Ok(_) => true,
        Err(e) => {
            errs.push(ShapeError::at_operand(k, format!("`{}`: {e}", ctx.name(k))));
            false
        }
    }
}

/// Operand `k` is `i8` or `ui8` with usable parameters.
pub(super) fn compute(ctx: &ShapeCtx, k: usize, errs: &mut Vec<ShapeError>) -> bool {
    let e = ctx.ty(k).elem;
    if !q::is_compute_kind(e) {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has element type {e} but a quantized `{}` computes on `i8` or `ui8`",
                ctx.name(k),
                ctx.opcode()
            ),
        ));
        return false;
    }
    params(ctx, k, errs)
}

/// A bias is `i32` (offset 0, scale `Src` times `Filter`) or `i8`/`ui8`.
fn bias_kind(ctx: &ShapeCtx, k: usize, errs: &mut Vec<ShapeError>) -> bool {
    let e = ctx.ty(k).elem;
    if !(q::is_compute_kind(e) || matches!(e, ElemKind::Int32Q { .. })) {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has element type {e} but a quantized bias is `i32`, `i8` or `ui8`",
                ctx.name(k)
            ),
        ));
        return false;
    }
    params(ctx, k, errs)
}

fn fused<'a>(ctx: &ShapeCtx<'a>) -> (&'a str, &'a [f64]) {
    ctx.inst.fused_activation()
}

/// A quantized product: `[dest, src, weights]` and an optional bias.
pub(super) fn product(
    ctx: &ShapeCtx,
    [dest, src, w]: [usize; 3],
    bias: Option<usize>,
    errs: &mut Vec<ShapeError>,
) {
    let mut ok = compute(ctx, src, errs);
    ok &= compute(ctx, w, errs);
    ok &= compute(ctx, dest, errs);
    if let Some(b) = bias {
        ok &= bias_kind(ctx, b, errs);
    }
    if !ok {
        return;
    }
    let ty = |k: usize| ctx.ty(k).elem;
    if let Err(e) = q::product(ty(src), ty(w), bias.map(ty), ty(dest), fused(ctx)) {
        errs.push(if e.contains("bias") {
            ShapeError::at_operand(bias.unwrap_or(dest), e)
        } else if e.contains("fused activation") {
            ShapeError::at_member("FusedActivation", e)
        } else {
            ShapeError::at_operand(dest, e)
        });
    }
}

/// `rowwisequantizedfullyconnected`: `i8`/`ui8` `Src`, `Weights` and
/// `Dest`, an `i32` bias with offset 0 (any scale: each row rescales it).
/// The per-row multipliers are checked when the engines read `Scales`.
pub(super) fn rowwise_product(
    ctx: &ShapeCtx,
    [dest, src, w, bias]: [usize; 4],
    errs: &mut Vec<ShapeError>,
) {
    for k in [src, w, dest] {
        compute(ctx, k, errs);
    }
    let b = ctx.ty(bias).elem;
    if !matches!(b, ElemKind::Int32Q { .. }) {
        errs.push(ShapeError::at_operand(
            bias,
            format!("`Bias` has element type {b} but a row-wise bias is `i32`"),
        ));
    } else if params(ctx, bias, errs) && b.quant().is_some_and(|(_, o)| o != 0) {
        errs.push(ShapeError::at_operand(
            bias,
            "a quantized bias must have offset 0",
        ));
    }
}

/// `maxpool` rescales the maximum, `avgpool` averages in integers.
pub(super) fn pool(ctx: &ShapeCtx, errs: &mut Vec<ShapeError>) {
    let (dest, src) = (0, 1);
    if !(compute(ctx, src, errs) & compute(ctx, dest, errs)) {
        return;
    }
    let (s, d) = (ctx.ty(src).elem, ctx.ty(dest).elem);
    let r = if ctx.inst.opcode == Opcode::AvgPool {
        let n = match ctx.get(m::KERNELS) {
            Some(&[a, b]) if a > 0 && b > 0 => (a as u64).saturating_mul(b as u64),
            _ => return,
        };
        q::Average::new(s, d, n).map(|_| ())
    } else {
        q::Rescale::new(s, d).map(|_| ())
    };
    if let Err(e) = r {
        errs.push(ShapeError::at_operand(dest, e));
    }
}

/// `relu`, `clip` (and `rescalequantized`): a rescale from `Src` to `Dest`.
pub(super) fn rescale(ctx: &ShapeCtx, errs: &mut Vec<ShapeError>) {
    let (dest, src) = (0, 1);
    if !(params(ctx, src, errs) & params(ctx, dest, errs)) {
        return;
    }
    if let Err(e) = q::Rescale::new(ctx.ty(src).elem, ctx.ty(dest).elem) {
        errs.push(ShapeError::at_operand(dest, e));
    }
}

/// Binary arithmetic on quantized operands: `elementadd`, `elementsub`,
/// `batchedadd` (pairs of multipliers), `elementmul`, `elementmax`,
/// `elementmin` (both sides rescaled). Other binary opcodes compute in
/// `float` on dequantized values.
pub(super) fn binary(ctx: &ShapeCtx, [dest, l, r]: [usize; 3], errs: &mut Vec<ShapeError>) {
    let op = ctx.inst.opcode;
    if !q::has_integer_binary(op) {
        for k in [dest, l, r] {
            if check_kind(ctx, k, Kinds::Quantized, errs) {
                params(ctx, k, errs);
            }
        }
        return;
    }
    let mut ok = true;
    for k in [dest, l, r] {
        ok &= compute(ctx, k, errs);
    }
    if !ok {
        return;
    }
    let ty = |k: usize| ctx.ty(k).elem;
    let res = match op {
        Opcode::ElementMul => q::Mul::new(ty(l), ty(r), ty(dest)).map(|_| ()),
        Opcode::ElementMax | Opcode::ElementMin => q::Rescale::new(ty(l), ty(dest))
            .and_then(|_| q::Rescale::new(ty(r), ty(dest)))
            .map(|_| ()),
        _ => q::Add::new(ty(l), ty(r), ty(dest), op == Opcode::ElementSub).map(|_| ()),
    };
    if let Err(e) = res {
        errs.push(ShapeError::at_operand(dest, e));
    }
}
