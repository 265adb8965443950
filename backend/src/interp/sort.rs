//! The interpreter's `topk`, the selection of the C kernel in
//! `emit/sort.rs`: per row, `K` picks, each the first element after the
//! previous pick in the order "better value, then lower index".

use super::Exec;
use crate::error::BackendError;
use glow_ir::member as m;

/// `a` is strictly better than `b`: larger (NaN above every number) or
/// smaller (NaN last).
fn better(largest: bool, a: f32, b: f32) -> bool {
    if largest {
        (a.is_nan() && !b.is_nan()) || a > b
    } else {
        (!a.is_nan() && b.is_nan()) || a < b
    }
}

pub fn topk(x: &mut Exec) -> Result<(), BackendError> {
    let (v, s) = (x.ty("Values")?, x.ty("Input")?);
    let largest = x.inst.get(m::LARGEST).unwrap_or(true);
    let n = *s.dims.last().unwrap_or(&1) as usize;
    let k = *v.dims.last().unwrap_or(&1) as usize;
    let src = x.f32s("Input")?;
    let rows = src.len() / n.max(1);
    let (mut values, mut indices) = (Vec::with_capacity(rows * k), Vec::with_capacity(rows * k));
    for row in src.chunks_exact(n) {
        let precedes = |i: usize, j: usize| {
            better(largest, row[i], row[j]) || (!better(largest, row[j], row[i]) && i < j)
        };
        let mut prev = 0;
        for j in 0..k {
            let mut best = None;
            for i in 0..n {
                if j > 0 && !precedes(prev, i) {
                    continue;
                }
                if best.is_none_or(|b| precedes(i, b)) {
                    best = Some(i);
                }
            }
            let b = best.unwrap_or(0);
            values.push(row[b]);
            indices.push(b as i64);
            prev = b;
        }
    }
    x.put_f32s("Values", &values)?;
    x.put_ints("Indices", &indices)
}
