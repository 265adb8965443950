//! C kernels of the index opcodes: `gatherelements`, `gathernd`,
//! `scatterelements`, `scatternd`, `onehot`, `argmax`, `argmin`. An index
//! is read as `long long` and counts from the end when negative; one still
//! out of range reads zeros (gathers), is skipped (scatters) or matches no
//! position (`onehot`), so no index value reads or writes outside a buffer.
//! The interpreter's `interp/index.rs` runs the same loops.

use super::{close_nest, linear, open_nest, KCtx};
use crate::elem::{bits_ctype, ctype, splat_bits};
use crate::error::BackendError;
use crate::ops::{self, BinOp};
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type};

/// Lines that set `j` to index `src` normalized against `n` (negative from
/// the end); the caller tests `0 <= j < n`.
fn read_index(c: &mut KCtx, src: &str, n: u64) {
    c.w.line(&format!("long long j = (long long){src};"));
    c.w.line(&format!("if (j < 0) j += {n}ll;"));
}

/// `vars` times `strides`, with `axis`'s term left out.
fn without_axis(vars: &[String], strides: &[u64], axis: usize) -> String {
    let mut s = strides.to_vec();
    if let Some(v) = s.get_mut(axis) {
        *v = 0;
    }
    linear(vars, &s)
}

fn axis(c: &KCtx) -> Result<usize, BackendError> {
    Ok(c.member(m::AXIS)?.max(0) as usize)
}

pub fn gather_elements(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, data, idx) = (c.ty("Dest")?, c.ty("Data")?, c.ty("Indices")?);
    let axis = axis(c)?;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Data", bt)?;
    c.decl("Indices", ctype(idx.elem))?;
    let (n, sa) = (data.dims[axis], data.strides()[axis]);
    let vars = open_nest(c.w, &idx.dims, "i");
    let at = linear(&vars, &idx.strides());
    read_index(c, &format!("Indices[{at}]"), n);
    c.w.line(&format!(
        "Dest[{at}] = (j < 0 || j >= {n}ll) ? ({bt})0 : Data[{} + (size_t)j * {sa}u];",
        without_axis(&vars, &data.strides(), axis)
    ));
    close_nest(c.w, vars.len());
    Ok(())
}

/// Lines that add the offset of index tuple `tp[0..k]` over `dims` (with
/// `strides`) to `off`, clearing `ok` when a component is out of range.
fn tuple_offset(c: &mut KCtx, dims: &[u64], strides: &[u64]) {
    c.w.line("int ok = 1;");
    for (m, (&n, &s)) in dims.iter().zip(strides).enumerate() {
        c.w.open("");
        read_index(c, &format!("tp[{m}]"), n);
        c.w.line(&format!(
            "if (j < 0 || j >= {n}ll) ok = 0; else off += (size_t)j * {s}u;"
        ));
        c.w.close();
    }
}

/// `(batches, tuples per batch, k, inner)` and the strides of the `k`
/// indexed dimensions within one batch (as the interpreter's `nd_layout`).
fn nd_layout(data: &Type, idx: &Type, b: usize) -> ((u64, u64, usize, u64), Vec<u64>) {
    let q = idx.dims.len();
    let k = idx.dims[q - 1] as usize;
    let batches = data.dims[..b].iter().product();
    let tuples = idx.dims[b..q - 1].iter().product();
    let inner = data.dims[b + k..].iter().product();
    let strides = (0..k)
        .map(|m| data.dims[b + m + 1..].iter().product())
        .collect();
    ((batches, tuples, k, inner), strides)
}

pub fn gather_nd(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, data, idx) = (c.ty("Dest")?, c.ty("Data")?, c.ty("Indices")?);
    let b = c.member(m::BATCH_DIMS)?.max(0) as usize;
    let ((batches, tuples, k, inner), st) = nd_layout(&data, &idx, b);
    let per_batch: u64 = data.dims[b..].iter().product();
    let esize = d.elem.bytes();
    let row = inner * esize;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Data", bt)?;
    let it = ctype(idx.elem);
    c.decl("Indices", it)?;
    c.w.for_loop("b", batches);
    c.w.for_loop("t", tuples);
    c.w.line(&format!("const size_t r = b * {tuples}u + t;"));
    c.w.line(&format!("const {it} *tp = Indices + r * {k}u;"));
    c.w.line(&format!("size_t off = b * {per_batch}u;"));
    tuple_offset(c, &data.dims[b..b + k], &st);
    c.w.line(&format!("uint8_t *to = (uint8_t *)Dest + r * {row}u;"));
    c.w.line(&format!(
        "if (ok) memcpy(to, (const uint8_t *)Data + off * {esize}u, {row}u); else memset(to, 0, {row}u);"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

/// The C type a scatter works in and its combining operator: element bits
/// when the update replaces, `float` or the plain integer type (computed in
/// 64 bits, wrapped to the width) for a reduction.
fn scatter_setup(c: &mut KCtx) -> Result<(&'static str, Option<&'static BinOp>), BackendError> {
    let (d, data, idx) = (c.ty("Dest")?, c.ty("Data")?, c.ty("Indices")?);
    let r = c
        .inst
        .get(m::REDUCTION)
        .ok_or_else(|| c.err("missing member Reduction"))?;
    let op = ops::scatter_op(r);
    let ct = match (op, d.elem) {
        (None, k) => bits_ctype(k),
        (Some(_), ElemKind::Float) => "float",
        (Some(b), k) if k.is_plain_int() && !b.c_int.is_empty() => ctype(k),
        _ => return Err(c.unsupported(&d)),
    };
    c.decl("Dest", ct)?;
    c.decl("Data", ct)?;
    c.decl("Indices", ctype(idx.elem))?;
    c.decl("Updates", ct)?;
    c.w.line(&format!("memmove(Dest, Data, {}u);", data.bytes()));
    Ok((ct, op))
}

/// `Dest[at] = Dest[at] op Updates[from]` (or the update itself).
fn combine(c: &mut KCtx, ct: &str, op: Option<&BinOp>, at: &str, from: &str) {
    let Some(op) = op else {
        c.w.line(&format!("Dest[{at}] = Updates[{from}];"));
        return;
    };
    if ct == "float" {
        c.w.line(&format!(
            "{{ const float a = Dest[{at}], b = Updates[{from}]; Dest[{at}] = {}; }}",
            op.c_float
        ));
    } else {
        c.w.line(&format!(
            "{{ const int64_t a = Dest[{at}], b = Updates[{from}]; Dest[{at}] = ({ct})({}); }}",
            op.c_int
        ));
    }
}

/// Updates in index order: a repeated index takes the last update (or
/// combines them all in that order).
pub fn scatter_elements(c: &mut KCtx) -> Result<(), BackendError> {
    let (data, idx) = (c.ty("Data")?, c.ty("Indices")?);
    let axis = axis(c)?;
    let (ct, op) = scatter_setup(c)?;
    let (n, sa) = (data.dims[axis], data.strides()[axis]);
    let vars = open_nest(c.w, &idx.dims, "i");
    let from = linear(&vars, &idx.strides());
    read_index(c, &format!("Indices[{from}]"), n);
    c.w.open(&format!("if (j >= 0 && j < {n}ll)"));
    c.w.line(&format!(
        "const size_t at = {} + (size_t)j * {sa}u;",
        without_axis(&vars, &data.strides(), axis)
    ));
    combine(c, ct, op, "at", &from);
    c.w.close();
    close_nest(c.w, vars.len());
    Ok(())
}

pub fn scatter_nd(c: &mut KCtx) -> Result<(), BackendError> {
    let (data, idx) = (c.ty("Data")?, c.ty("Indices")?);
    let ((_, tuples, k, inner), st) = nd_layout(&data, &idx, 0);
    let (ct, op) = scatter_setup(c)?;
    let it = ctype(idx.elem);
    c.w.for_loop("t", tuples);
    c.w.line(&format!("const {it} *tp = Indices + t * {k}u;"));
    c.w.line("size_t off = 0;");
    tuple_offset(c, &data.dims[..k], &st);
    c.w.open("if (ok)");
    c.w.for_loop("e", inner);
    combine(c, ct, op, "off + e", &format!("t * {inner}u + e"));
    c.w.close();
    c.w.close();
    c.w.close();
    Ok(())
}

pub fn one_hot(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, idx) = (c.ty("Dest")?, c.ty("Indices")?);
    let axis = axis(c)?;
    let bits = |v: f64| splat_bits(d.elem, v).ok_or_else(|| c.unsupported(&d));
    let off = bits(c.member(m::OFF_VALUE)?)?;
    let on = bits(c.member(m::ON_VALUE)?)?;
    let (outer, depth, inner) = super::split(&d.dims, axis);
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Indices", ctype(idx.elem))?;
    c.w.for_loop("o", outer);
    c.w.for_loop("n", inner);
    read_index(c, &format!("Indices[o * {inner}u + n]"), depth);
    c.w.for_loop("a", depth);
    c.w.line(&format!(
        "Dest[(o * {depth}u + a) * {inner}u + n] = (long long)a == j ? ({bt}){on}ull : ({bt}){off}ull;"
    ));
    c.w.close();
    c.w.close();
    c.w.close();
    Ok(())
}

/// The first extreme element along `Axis` (the last with
/// `SelectLastIndex`): a later one replaces it only when strictly beyond
/// (or also equal), so a NaN is never taken after the first element.
pub fn arg_min_max(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32(&s)?;
    let axis = axis(c)?;
    let last = c.inst.get(m::SELECT_LAST_INDEX).unwrap_or(false);
    let cmp = match (c.inst.opcode == Opcode::ArgMax, last) {
        (true, false) => ">",
        (true, true) => ">=",
        (false, false) => "<",
        (false, true) => "<=",
    };
    let (outer, at, inner) = super::split(&s.dims, axis);
    let ct = ctype(d.elem);
    c.decl("Dest", ct)?;
    c.decl("Src", "float")?;
    c.w.for_loop("o", outer);
    c.w.for_loop("n", inner);
    c.w.line(&format!("const float *x = Src + o * {}u + n;", at * inner));
    c.w.line("float best = x[0];");
    c.w.line("size_t bi = 0;");
    c.w.open(&format!("for (size_t a = 1; a < {at}u; a++)"));
    c.w.line(&format!("const float v = x[a * {inner}u];"));
    c.w.open(&format!("if (v {cmp} best)"));
    c.w.line("best = v;");
    c.w.line("bi = a;");
    c.w.close();
    c.w.close();
    c.w.line(&format!("Dest[o * {inner}u + n] = ({ct})bi;"));
    c.w.close();
    c.w.close();
    Ok(())
}
