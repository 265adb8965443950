//! C kernels that move data without arithmetic: `copy`, `splat`,
//! `transpose`, `inserttensor`, `extracttensor`, plus `debugprint`. They
//! move element *bits* (unsigned integers of the element's size), so they
//! work for every element kind and keep NaN payloads.

use super::{close_nest, linear, open_nest, KCtx};
use crate::elem::{bits_ctype, ctype, splat_bits};
use crate::error::BackendError;
use crate::namer::c_string;
use glow_ir::ElemKind;

pub fn copy(c: &mut KCtx) -> Result<(), BackendError> {
    let d = c.ty("Dest")?;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
    c.w.for_loop("i", d.size());
    c.w.line("Dest[i] = Src[i];");
    c.w.close();
    Ok(())
}

pub fn splat(c: &mut KCtx) -> Result<(), BackendError> {
    let d = c.ty("Dest")?;
    let v = c.member_float("Value")?;
    let bits = splat_bits(d.elem, v).ok_or_else(|| c.unsupported(&d))?;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.w.for_loop("i", d.size());
    c.w.line(&format!("Dest[i] = ({bt}){bits}ull;"));
    c.w.close();
    Ok(())
}

pub fn transpose(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let shuffle = c.member_ints("Shuffle")?;
    let ss = s.strides();
    let strides: Vec<u64> = shuffle
        .iter()
        .map(|&k| ss.get(k as usize).copied().unwrap_or(0))
        .collect();
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
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
    let offs = c.member_ints("Offsets")?;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
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
    let offs = c.member_ints("Offsets")?;
    let count = c.member_int("Count")?.max(0) as u64;
    let axis = c.member_int("Axis")?.max(0) as usize;
    let step = s.dims.get(axis).copied().unwrap_or(1);
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
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
