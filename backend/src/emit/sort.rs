//! C kernel of `topk`: per row of the last dimension, the `K` elements
//! first in the order "better value, then lower index" (largest: NaN
//! above every number; smallest: NaN below none, so last), picked one at
//! a time as the first element after the previous pick in that order, so
//! no scratch memory is needed. `interp/sort.rs` runs the same selection.

use super::KCtx;
use crate::elem::ctype;
use crate::error::BackendError;
use glow_ir::member as m;

/// `a` is strictly better than `b` (C expression over floats).
fn better(largest: bool, a: &str, b: &str) -> String {
    if largest {
        format!("(({a} != {a} && {b} == {b}) || {a} > {b})")
    } else {
        format!("(({a} == {a} && {b} != {b}) || {a} < {b})")
    }
}

pub fn topk(c: &mut KCtx) -> Result<(), BackendError> {
    let (v, idx, s) = (c.ty("Values")?, c.ty("Indices")?, c.ty("Input")?);
    c.require_f32(&s)?;
    let largest = c.inst.get(m::LARGEST).unwrap_or(true);
    let n = *s.dims.last().unwrap_or(&1);
    let k = *v.dims.last().unwrap_or(&1);
    let rows = s.size() / n.max(1);
    let it = ctype(idx.elem);
    c.decl("Values", "float")?;
    c.decl("Indices", it)?;
    c.decl("Input", "float")?;
    // i precedes j: a better value, or an equal one at a lower index.
    let precedes = |i: &str, j: &str| {
        let (xi, xj) = (format!("x[{i}]"), format!("x[{j}]"));
        format!(
            "({} || (!{} && {i} < {j}))",
            better(largest, &xi, &xj),
            better(largest, &xj, &xi)
        )
    };
    c.w.for_loop("o", rows);
    c.w.line(&format!("const float *x = Input + o * {n}u;"));
    c.w.line("size_t prev = 0;");
    c.w.open(&format!("for (size_t j = 0; j < {k}u; j++)"));
    c.w.line("size_t best = 0;");
    c.w.line("int found = 0;");
    c.w.open(&format!("for (size_t i = 0; i < {n}u; i++)"));
    c.w.line(&format!(
        "if (j > 0 && !{}) continue;",
        precedes("prev", "i")
    ));
    c.w.open(&format!("if (!found || {})", precedes("i", "best")));
    c.w.line("best = i;");
    c.w.line("found = 1;");
    c.w.close();
    c.w.close();
    c.w.line(&format!("Values[o * {k}u + j] = x[best];"));
    c.w.line(&format!("Indices[o * {k}u + j] = ({it})best;"));
    c.w.line("prev = best;");
    c.w.close();
    c.w.close();
    Ok(())
}
