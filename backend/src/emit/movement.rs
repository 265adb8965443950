//! C kernels that move data without arithmetic: `copy`, `splat`,
//! `transpose`, `inserttensor`, `extracttensor`, plus `debugprint`. They
//! move element *bits* (unsigned integers of the element's size), so they
//! work for every element kind and keep NaN payloads.

use super::runtime::Kernel;
use super::{close_nest, linear, open_nest, KCtx};
use crate::elem::{bits_ctype, ctype, splat_bits};
use crate::error::BackendError;
use crate::namer::c_string;
use glow_ir::member as m;
use glow_ir::ElemKind;

pub fn copy(c: &mut KCtx) -> Result<(), BackendError> {
    let d = c.ty("Dest")?;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
    c.w.line(&format!("memmove(Dest, Src, {}u);", d.bytes()));
    Ok(())
}

/// Calls the shared `glow_move` (element bits between strided tensors) when
/// the rank fits; returns false to let the caller emit its loop nest.
/// Strides and offsets are in elements of `esize` bytes.
fn move_call(
    c: &mut KCtx,
    esize: u64,
    dims: &[u64],
    (dst_strides, dst_off): (&[u64], u64),
    (src_strides, src_off): (&[u64], u64),
) -> bool {
    if dims.len() > 8 {
        return false;
    }
    c.rt.use_kernel(Kernel::Move);
    let list = |v: &[u64], scale: u64| {
        if v.is_empty() {
            return format!("{}u", scale);
        }
        v.iter()
            .map(|x| format!("{}u", x * scale))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let rank = dims.len().max(1);
    let dims_text = if dims.is_empty() {
        "1u".to_string()
    } else {
        list(dims, 1)
    };
    c.w.line(&format!(
        "static const size_t dims[] = {{{dims_text}}}, ds[] = {{{}}}, ss[] = {{{}}};",
        list(dst_strides, esize),
        list(src_strides, esize)
    ));
    c.w.line(&format!(
        "glow_move((uint8_t *)Dest + {}u, (const uint8_t *)Src + {}u, {esize}u, {rank}u, dims, ds, ss);",
        dst_off * esize,
        src_off * esize
    ));
    true
}

pub fn splat(c: &mut KCtx) -> Result<(), BackendError> {
    let d = c.ty("Dest")?;
    let v = c.member(m::VALUE)?;
    let bits = splat_bits(d.elem, v).ok_or_else(|| c.unsupported(&d))?;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.rt.use_kernel(Kernel::Fill);
    c.w.line(&format!(
        "glow_fill((uint8_t *)Dest, {}u, {}u, {bits}ull);",
        d.size(),
        d.elem.bytes()
    ));
    Ok(())
}

pub fn transpose(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let shuffle = c.member(m::SHUFFLE)?.to_vec();
    let ss = s.strides();
    let strides: Vec<u64> = shuffle
        .iter()
        .map(|&k| ss.get(k as usize).copied().unwrap_or(0))
        .collect();
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
    if move_call(c, d.elem.bytes(), &d.dims, (&d.strides(), 0), (&strides, 0)) {
        return Ok(());
    }
    let vars = open_nest(c.w, &d.dims, "i");
    c.w.line(&format!(
        "Dest[{}] = Src[{}];",
        linear(&vars, &d.strides()),
        linear(&vars, &strides)
    ));
    close_nest(c.w, vars.len());
    Ok(())
}

/// `i_k + off_k` terms times strides.
fn shifted(vars: &[String], offs: &[i64], strides: &[u64], extra: Option<(usize, &str)>) -> String {
    let terms: Vec<String> = vars
        .iter()
        .enumerate()
        .map(|(k, v)| {
            let mut t = v.clone();
            if offs.get(k).copied().unwrap_or(0) != 0 {
                t = format!("({t} + {}u)", offs[k]);
            }
            if let Some((axis, e)) = extra {
                if axis == k {
                    t = format!("({t} + {e})");
                }
            }
            format!("{t} * {}u", strides[k])
        })
        .collect();
    terms.join(" + ")
}

pub fn extract(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let offs = c.member(m::OFFSETS)?.to_vec();
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
    let ss = s.strides();
    let off: u64 = offs
        .iter()
        .zip(&ss)
        .map(|(&o, &st)| o.max(0) as u64 * st)
        .sum();
    if move_call(c, d.elem.bytes(), &d.dims, (&d.strides(), 0), (&ss, off)) {
        return Ok(());
    }
    let vars = open_nest(c.w, &d.dims, "i");
    c.w.line(&format!(
        "Dest[{}] = Src[{}];",
        linear(&vars, &d.strides()),
        shifted(&vars, &offs, &s.strides(), None)
    ));
    close_nest(c.w, vars.len());
    Ok(())
}

pub fn insert(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let offs = c.member(m::OFFSETS)?.to_vec();
    let count = c.member(m::COUNT)?.max(0) as u64;
    let axis = c.member(m::AXIS)?.max(0) as usize;
    let step = s.dims.get(axis).copied().unwrap_or(1);
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
    // The Count copies are one more (outer) dimension.
    let dsd = d.strides();
    let off: u64 = offs
        .iter()
        .zip(&dsd)
        .map(|(&o, &st)| o.max(0) as u64 * st)
        .sum();
    let mut dims = vec![count];
    dims.extend(&s.dims);
    let mut dst_strides = vec![step * dsd.get(axis).copied().unwrap_or(0)];
    dst_strides.extend(&dsd);
    let mut src_strides = vec![0];
    src_strides.extend(s.strides());
    if move_call(
        c,
        d.elem.bytes(),
        &dims,
        (&dst_strides, off),
        (&src_strides, 0),
    ) {
        return Ok(());
    }
    c.w.for_loop("c", count);
    let vars = open_nest(c.w, &s.dims, "i");
    let extra = format!("c * {step}u");
    c.w.line(&format!(
        "Dest[{}] = Src[{}];",
        shifted(&vars, &offs, &d.strides(), Some((axis, &extra))),
        linear(&vars, &s.strides())
    ));
    close_nest(c.w, vars.len() + 1);
    Ok(())
}

/// `gather`: for every outer position and index, the `Axis` slice of `Data`
/// that the index picks (negative indices count from the end, as ONNX);
/// an index out of range gives zeros, so no input reads outside `Data`.
pub fn gather(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, data, idx) = (c.ty("Dest")?, c.ty("Data")?, c.ty("Indices")?);
    let axis = c.member(m::AXIS)?.max(0) as usize;
    let (outer, at, inner) = super::split(&data.dims, axis);
    let esize = d.elem.bytes();
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Data", bt)?;
    c.decl("Indices", ctype(idx.elem))?;
    let n = idx.size();
    let row = inner * esize;
    c.w.for_loop("o", outer);
    c.w.for_loop("k", n);
    c.w.line("long long i = (long long)Indices[k];");
    c.w.line(&format!("if (i < 0) i += {at}ll;"));
    c.w.line(&format!(
        "uint8_t *to = (uint8_t *)Dest + (o * {n}u + k) * {row}u;"
    ));
    c.w.line(&format!(
        "if (i < 0 || i >= {at}ll) memset(to, 0, {row}u); else memcpy(to, (const uint8_t *)Data + (o * {at}u + (size_t)i) * {row}u, {row}u);"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

/// Prints `%name = TYPE [v0, v1, ...]` on stdout; floats as `%.9g`
/// (round-trips an f32), integers in decimal.
pub fn debugprint(c: &mut KCtx) -> Result<(), BackendError> {
    let s = c.ty("Src")?;
    let mut name = String::new();
    glow_ir::printer::write_name(c.f.value_name(c.inst.operands[0].value), &mut name);
    let (fmt, cast) = match s.elem {
        ElemKind::Float | ElemKind::Float64 => ("%.9g", "(double)"),
        ElemKind::Float16 | ElemKind::BFloat16 => return Err(c.unsupported(&s)),
        _ => ("%lld", "(long long)"),
    };
    c.decl("Src", ctype(s.elem))?;
    c.w.line(&format!(
        "printf(\"%s\", {});",
        c_string(&format!("{name} = {s} ["))
    ));
    c.w.for_loop("i", s.size());
    c.w.line(&format!(
        "printf(i ? \", {fmt}\" : \"{fmt}\", {cast}Src[i]);"
    ));
    c.w.close();
    c.w.line("printf(\"]\\n\");");
    Ok(())
}
