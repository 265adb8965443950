//! The interpreter's kernels of the index opcodes (`gatherelements`,
//! `gathernd`, `scatterelements`, `scatternd`, `onehot`, `argmax`,
//! `argmin`), in the loop order of the C kernels in `emit/index.rs`.
//! Index values count from the end when negative; one still out of range
//! reads zeros (gathers), is skipped (scatters) or matches no position
//! (`onehot`), the same in both engines.

use super::Exec;
use crate::elem::splat_bits;
use crate::emit::split;
use crate::error::BackendError;
use crate::ops::{self, BinOp};
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type};

type R = Result<(), BackendError>;

/// Index `i` into a dimension of `n`: negative from the end, `None` when
/// outside.
pub fn wrap_index(i: i64, n: u64) -> Option<u64> {
    let n = n as i64;
    let j = if i < 0 { i.wrapping_add(n) } else { i };
    (0..n).contains(&j).then_some(j as u64)
}

/// Multi-index of linear index `i` in `dims`.
pub(super) fn unravel(mut i: u64, dims: &[u64]) -> Vec<u64> {
    let mut idx = vec![0; dims.len()];
    for k in (0..dims.len()).rev() {
        idx[k] = i % dims[k];
        i /= dims[k];
    }
    idx
}

/// The offset in `Data` (strides `ds`) of `coords` with `j` on `axis`.
fn offset_with(coords: &[u64], ds: &[u64], axis: usize, j: u64) -> usize {
    let mut off = 0;
    for (k, (&c, &s)) in coords.iter().zip(ds).enumerate() {
        off += if k == axis { j } else { c } * s;
    }
    off as usize
}

fn axis(x: &Exec) -> Result<usize, BackendError> {
    Ok(x.m().get(m::AXIS)?.max(0) as usize)
}

pub fn gather_elements(x: &mut Exec) -> R {
    let (data_t, idx_t) = (x.ty("Data")?, x.ty("Indices")?);
    let axis = axis(x)?;
    let (data, idx) = (x.bits("Data")?, x.ints("Indices")?);
    let ds = data_t.strides();
    let mut out = x.scratch(idx.len(), 0u64)?;
    for (p, o) in out.iter_mut().enumerate() {
        if let Some(j) = wrap_index(idx[p], data_t.dims[axis]) {
            *o = data[offset_with(&unravel(p as u64, &idx_t.dims), &ds, axis, j)];
        }
    }
    x.put_bits("Dest", &out)
}

/// `(batches, tuples per batch, k, inner)` of a `gathernd`/`scatternd`,
/// and the strides of the `k` indexed dimensions within one batch.
fn nd_layout(data: &Type, idx: &Type, b: usize) -> ((usize, usize, usize, usize), Vec<u64>) {
    let q = idx.dims.len();
    let k = idx.dims[q - 1] as usize;
    let batches: u64 = data.dims[..b].iter().product();
    let tuples: u64 = idx.dims[b..q - 1].iter().product();
    let inner: u64 = data.dims[b + k..].iter().product();
    let strides = (0..k)
        .map(|m| data.dims[b + m + 1..].iter().product())
        .collect();
    (
        (batches as usize, tuples as usize, k, inner as usize),
        strides,
    )
}

/// The element offset (within one batch) of index tuple `tuple` on the
/// dimensions `dims`, or `None` when a component is out of range.
fn tuple_offset(tuple: &[i64], dims: &[u64], strides: &[u64]) -> Option<usize> {
    let mut off = 0;
    for m in 0..tuple.len() {
        off += wrap_index(tuple[m], dims[m])? * strides[m];
    }
    Some(off as usize)
}

pub fn gather_nd(x: &mut Exec) -> R {
    let (data_t, idx_t) = (x.ty("Data")?, x.ty("Indices")?);
    let b = x.m().get(m::BATCH_DIMS)?.max(0) as usize;
    let ((batches, tuples, k, inner), st) = nd_layout(&data_t, &idx_t, b);
    let per_batch: u64 = data_t.dims[b..].iter().product();
    let (data, idx) = (x.bits("Data")?, x.ints("Indices")?);
    let mut out = x.scratch(batches * tuples * inner, 0u64)?;
    for bt in 0..batches {
        for t in 0..tuples {
            let row = bt * tuples + t;
            let tuple = &idx[row * k..row * k + k];
            if let Some(off) = tuple_offset(tuple, &data_t.dims[b..b + k], &st) {
                let from = bt * per_batch as usize + off;
                out[row * inner..row * inner + inner].copy_from_slice(&data[from..from + inner]);
            }
        }
    }
    x.put_bits("Dest", &out)
}

/// A scatter's running values: f32, integers of a plain integer kind, or
/// element bits.
enum Vals {
    F(Vec<f32>),
    I(Vec<i64>),
    Bits(Vec<u64>),
}

/// `Data` and `Updates` as the values the reduction `op` combines (element
/// bits when the update just replaces).
fn scatter_vals(x: &Exec, op: Option<&BinOp>) -> Result<(Vals, Vals), BackendError> {
    let d = x.ty("Data")?;
    Ok(match (op, d.elem) {
        (None, _) => (Vals::Bits(x.bits("Data")?), Vals::Bits(x.bits("Updates")?)),
        (Some(_), ElemKind::Float) => (Vals::F(x.f32s("Data")?), Vals::F(x.f32s("Updates")?)),
        (Some(b), k) if k.is_plain_int() && !b.c_int.is_empty() => {
            (Vals::I(x.ints("Data")?), Vals::I(x.ints("Updates")?))
        }
        _ => return Err(x.unsupported(&d)),
    })
}

/// `out[at] = out[at] op upd[from]` (or the update itself without `op`).
fn combine(out: &mut Vals, upd: &Vals, at: usize, from: usize, op: Option<&BinOp>) {
    match (out, upd, op) {
        (Vals::F(o), Vals::F(u), Some(b)) => o[at] = (b.float)(o[at], u[from]),
        (Vals::I(o), Vals::I(u), Some(b)) => o[at] = (b.int)(o[at], u[from]),
        (Vals::Bits(o), Vals::Bits(u), _) => o[at] = u[from],
        _ => {}
    }
}

fn put_vals(x: &mut Exec, v: &Vals) -> R {
    match v {
        Vals::F(v) => x.put_f32s("Dest", v),
        Vals::I(v) => x.put_ints("Dest", v),
        Vals::Bits(v) => x.put_bits("Dest", v),
    }
}

fn reduction(x: &Exec) -> Result<Option<&'static BinOp>, BackendError> {
    let r = x
        .inst
        .get(m::REDUCTION)
        .ok_or_else(|| x.err("missing member Reduction"))?;
    Ok(ops::scatter_op(r))
}

/// Updates in index order, so a repeated index takes the last update (or
/// combines them all in that order).
pub fn scatter_elements(x: &mut Exec) -> R {
    let (data_t, idx_t) = (x.ty("Data")?, x.ty("Indices")?);
    let axis = axis(x)?;
    let op = reduction(x)?;
    let (mut out, upd) = scatter_vals(x, op)?;
    let idx = x.ints("Indices")?;
    let ds = data_t.strides();
    for (p, &i) in idx.iter().enumerate() {
        if let Some(j) = wrap_index(i, data_t.dims[axis]) {
            let at = offset_with(&unravel(p as u64, &idx_t.dims), &ds, axis, j);
            combine(&mut out, &upd, at, p, op);
        }
    }
    put_vals(x, &out)
}

pub fn scatter_nd(x: &mut Exec) -> R {
    let (data_t, idx_t) = (x.ty("Data")?, x.ty("Indices")?);
    let op = reduction(x)?;
    let ((_, tuples, k, inner), st) = nd_layout(&data_t, &idx_t, 0);
    let (mut out, upd) = scatter_vals(x, op)?;
    let idx = x.ints("Indices")?;
    for t in 0..tuples {
        if let Some(off) = tuple_offset(&idx[t * k..t * k + k], &data_t.dims[..k], &st) {
            for e in 0..inner {
                combine(&mut out, &upd, off + e, t * inner + e, op);
            }
        }
    }
    put_vals(x, &out)
}

pub fn one_hot(x: &mut Exec) -> R {
    let d = x.ty("Dest")?;
    let axis = axis(x)?;
    let bits = |v: f64| splat_bits(d.elem, v).ok_or_else(|| x.unsupported(&d));
    let (off, on) = (
        bits(x.m().get(m::OFF_VALUE)?)?,
        bits(x.m().get(m::ON_VALUE)?)?,
    );
    let (outer, depth, inner) = split(&d.dims, axis);
    let (outer, inner) = (outer as usize, inner as usize);
    let idx = x.ints("Indices")?;
    let mut out = x.scratch(d.size() as usize, off)?;
    for o in 0..outer {
        for n in 0..inner {
            if let Some(j) = wrap_index(idx[o * inner + n], depth) {
                out[(o * depth as usize + j as usize) * inner + n] = on;
            }
        }
    }
    x.put_bits("Dest", &out)
}

/// The first extreme element along `Axis` (the last with
/// `SelectLastIndex`): a later element replaces it only when strictly
/// beyond (or also equal), so a NaN is never taken after the first element.
pub fn arg_min_max(x: &mut Exec) -> R {
    let s = x.ty("Src")?;
    let axis = axis(x)?;
    let last = x.inst.get(m::SELECT_LAST_INDEX).unwrap_or(false);
    let is_max = x.opcode() == Opcode::ArgMax;
    let src = x.f32s("Src")?;
    let (outer, at, inner) = split(&s.dims, axis);
    let (outer, at, inner) = (outer as usize, at as usize, inner as usize);
    let mut out = x.scratch(outer * inner, 0i64)?;
    for o in 0..outer {
        for n in 0..inner {
            let v = |a: usize| src[(o * at + a) * inner + n];
            let (mut best, mut bi) = (v(0), 0);
            for a in 1..at {
                let c = v(a);
                let take = match (is_max, last) {
                    (true, false) => c > best,
                    (true, true) => c >= best,
                    (false, false) => c < best,
                    (false, true) => c <= best,
                };
                if take {
                    best = c;
                    bi = a;
                }
            }
            out[o * inner + n] = bi as i64;
        }
    }
    x.put_ints("Dest", &out)
}
