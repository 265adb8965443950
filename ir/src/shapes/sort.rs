//! Shape rules of the selection instructions: `topk` (the `K` largest or
//! smallest along the last dimension, with their indices) and `cumsum`.

use super::*;
use crate::member as m;

/// `topk @out Values, @out Indices, @in Input { K, Largest }`: `Values`
/// (float, as `Input`) and `Indices` (index32 or index64) have `Input`'s
/// dims with the last one `K`, a whole number from 1 to that dimension.
pub fn topk(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (values, indices, input) = (0, 1, 2);
    let mut errs = Vec::new();
    check_kind(ctx, values, Kinds::Float, &mut errs);
    check_kind(ctx, input, Kinds::Float, &mut errs);
    check_kind(ctx, indices, Kinds::Index, &mut errs);
    check_same_elem(ctx, values, input, Same::Exact, &mut errs);
    let d = &ctx.ty(input).dims;
    let n = *d.last().unwrap_or(&1);
    let k = ctx.inst.get(m::K).unwrap_or(0.0);
    if k.fract() != 0.0 || k < 1.0 || k > n as f64 {
        errs.push(ShapeError::at_operand(
            input,
            format!(
                "`K` is {k}, but `topk` takes a whole number from 1 to `{}`'s last dimension ({n})",
                ctx.name(input)
            ),
        ));
        return errs;
    }
    let mut want = d.clone();
    if let Some(last) = want.last_mut() {
        *last = k as u64;
    }
    check_dims(ctx, values, &want, "produces", &mut errs);
    check_dims(ctx, indices, &want, "produces", &mut errs);
    errs
}
