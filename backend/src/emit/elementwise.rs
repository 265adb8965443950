//! C kernels of the element-wise family: binary arithmetic (float and index
//! kinds), `elementcmplte`, `elementselect`, the unary activations and the
//! quantization conversions. Operators come from `ops.rs`.

use super::runtime::Kernel;
use super::KCtx;
use crate::elem::{bits_ctype, ctype};
use crate::error::BackendError;
use crate::ops::{self, c_float};
use glow_ir::{ElemKind, Type};

fn is_index(k: ElemKind) -> bool {
    k.is_plain_int()
}

/// `elementadd` ... `elementmin`.
pub fn binary(c: &mut KCtx) -> Result<(), BackendError> {
    let op = ops::binary(c.inst.opcode).ok_or_else(|| c.err("not a binary operator"))?;
    let (d, l, r) = (c.ty("Dest")?, c.ty("LHS")?, c.ty("RHS")?);
    for t in [&l, &r] {
        if t.elem != d.elem {
            return Err(c.unsupported(t));
        }
    }
    let n = d.size();
    let ct = ctype(d.elem);
    c.decl("Dest", ct)?;
    c.decl("LHS", ct)?;
    c.decl("RHS", ct)?;
    if d.elem == ElemKind::Float && !op.c_float.is_empty() {
        let k = ops::BINARY
            .iter()
            .position(|b| b.opcode == c.inst.opcode)
            .ok_or_else(|| c.err("not a binary operator"))?;
        c.rt.use_kernel(Kernel::Binary);
        c.w.line(&format!("glow_binary_f32(Dest, LHS, RHS, {n}u, {k});"));
        return Ok(());
    }
    if !is_index(d.elem) || op.c_int.is_empty() {
        return Err(c.unsupported(&d));
    }
    // `glow_ipow` lives in the common section.
    c.rt.use_kernel(Kernel::Common);
    c.w.for_loop("i", n);
    if is_index(d.elem) && !op.c_int.is_empty() {
        c.w.line("int64_t a = LHS[i];");
        c.w.line("int64_t b = RHS[i];");
        c.w.line(&format!("Dest[i] = ({ct})({});", op.c_int));
    } else {
        return Err(c.unsupported(&d));
    }
    c.w.close();
    Ok(())
}

/// The C expression that reads element `i` of `name` as a comparable value:
/// floats and index values as they are, quantized values dequantized.
fn comparable(name: &str, t: &Type) -> Option<String> {
    match t.elem {
        ElemKind::Float => Some(format!("{name}[i]")),
        k if k.is_plain_int() => Some(format!("{name}[i]")),
        k => {
            let (s, o) = k.quant()?;
            Some(format!(
                "({} * (float)((int64_t){name}[i] - {o}))",
                c_float(s)
            ))
        }
    }
}

/// The `Compare` family: `Dest` (bool) = `LHS op RHS` (`ops::COMPARE`).
pub fn cmplte(c: &mut KCtx) -> Result<(), BackendError> {
    let op = ops::compare(c.inst.opcode).ok_or_else(|| c.err("not a comparison"))?;
    let (d, l, r) = (c.ty("Dest")?, c.ty("LHS")?, c.ty("RHS")?);
    let lx = comparable("LHS", &l).ok_or_else(|| c.unsupported(&l))?;
    let rx = comparable("RHS", &r).ok_or_else(|| c.unsupported(&r))?;
    if d.elem != ElemKind::Bool {
        return Err(c.unsupported(&d));
    }
    c.decl("Dest", "uint8_t")?;
    c.decl("LHS", ctype(l.elem))?;
    c.decl("RHS", ctype(r.elem))?;
    c.w.for_loop("i", d.size());
    c.w.line(&format!("Dest[i] = (uint8_t)({lx} {} {rx});", op.c));
    c.w.close();
    Ok(())
}

/// The `Logical` family over bool bytes (`ops::LOGICAL`).
pub fn logical(c: &mut KCtx) -> Result<(), BackendError> {
    let op = ops::logical(c.inst.opcode).ok_or_else(|| c.err("not a logical operator"))?;
    let d = c.ty("Dest")?;
    let unary = c.inst.opcode.info().operand_index("Src").is_some();
    c.decl("Dest", "uint8_t")?;
    if unary {
        c.decl("Src", "uint8_t")?;
    } else {
        c.decl("LHS", "uint8_t")?;
        c.decl("RHS", "uint8_t")?;
    }
    c.w.for_loop("i", d.size());
    if unary {
        c.w.line("const uint8_t a = Src[i], b = 0;");
        c.w.line("(void)b;");
    } else {
        c.w.line("const uint8_t a = LHS[i], b = RHS[i];");
    }
    c.w.line(&format!("Dest[i] = (uint8_t)({});", op.c));
    c.w.close();
    Ok(())
}

/// `elementselect`: `Dest = Cond ? LHS : RHS`, moving element bits (any
/// kind, as long as the three types share their element kind exactly).
pub fn select(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, l, r) = (c.ty("Dest")?, c.ty("LHS")?, c.ty("RHS")?);
    for t in [&l, &r] {
        if t.elem != d.elem {
            return Err(c.unsupported(t));
        }
    }
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Cond", "uint8_t")?;
    c.decl("LHS", bt)?;
    c.decl("RHS", bt)?;
    c.w.for_loop("i", d.size());
    c.w.line("Dest[i] = Cond[i] ? LHS[i] : RHS[i];");
    c.w.close();
    Ok(())
}

/// `relu`, `sigmoid`, `tanh`, `clip` over float.
/// The `Unary` family: the operator of `ops::UNARY` (by index) with the
/// opcode's float members as its parameters.
pub fn unary(c: &mut KCtx) -> Result<(), BackendError> {
    let k = ops::UNARY
        .iter()
        .position(|u| u.opcode == c.inst.opcode)
        .ok_or_else(|| c.err("not a unary operator"))?;
    // The input is the second operand (`Src`; `RHS` of the constant forms).
    let src = c.inst.opcode.info().operands[1].name;
    let (d, s) = (c.ty("Dest")?, c.ty(src)?);
    c.require_f32(&d)?;
    c.require_f32(&s)?;
    c.decl("Dest", "float")?;
    c.decl(src, "float")?;
    let params = c.m().float_params()?;
    let list: Vec<String> = params.iter().map(|&v| c_float(v)).collect();
    let list = if list.is_empty() {
        "0.0f".to_string()
    } else {
        list.join(", ")
    };
    c.rt.use_kernel(Kernel::Unary);
    c.w.line(&format!("static const float m[] = {{{list}}};"));
    c.w.line(&format!(
        "glow_unary_f32(Dest, {src}, {}u, {k}, m);",
        d.size()
    ));
    Ok(())
}

/// The `Predicate` family: `Dest` (bool) = `ops::PREDICATE`'s test of each
/// float element.
pub fn predicate(c: &mut KCtx) -> Result<(), BackendError> {
    let op = ops::predicate(c.inst.opcode).ok_or_else(|| c.err("not a predicate"))?;
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32(&s)?;
    if d.elem != ElemKind::Bool {
        return Err(c.unsupported(&d));
    }
    c.decl("Dest", "uint8_t")?;
    c.decl("Src", "float")?;
    c.w.for_loop("i", d.size());
    c.w.line("const float x = Src[i];");
    c.w.line(&format!("Dest[i] = (uint8_t)({});", op.c));
    c.w.close();
    Ok(())
}

/// The `IntUnary` family: `ops::INT_UNARY`'s expression over each element
/// widened to `int64_t`, with the opcode's integer members as `m`.
pub fn int_unary(c: &mut KCtx) -> Result<(), BackendError> {
    let op = ops::int_unary(c.inst.opcode).ok_or_else(|| c.err("not an integer operator"))?;
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    for t in [&d, &s] {
        if !is_index(t.elem) {
            return Err(c.unsupported(t));
        }
    }
    let params = c.m().int_params()?;
    let list: Vec<String> = params.iter().map(|&v| ops::c_int(v)).collect();
    let list = if list.is_empty() {
        "0".to_string()
    } else {
        list.join(", ")
    };
    let ct = ctype(d.elem);
    c.decl("Dest", ct)?;
    c.decl("Src", ctype(s.elem))?;
    // `glow_modulo` lives in the common section.
    c.rt.use_kernel(Kernel::Common);
    c.w.line(&format!("static const int64_t m[] = {{{list}}};"));
    c.w.line("(void)m;");
    c.w.for_loop("i", d.size());
    c.w.line("const int64_t x = Src[i];");
    c.w.line(&format!("Dest[i] = ({ct})({});", op.c));
    c.w.close();
    Ok(())
}

/// The statement storing float `x` quantized into `Dest[i]`.
fn quantize_stmt(k: ElemKind) -> Option<String> {
    let (s, o) = k.quant()?;
    let (lo, hi) = k.quant_range()?;
    Some(format!(
        "{{ double r = nearbyint((double)(x / {})) + {o}.0; Dest[i] = ({})(r > {hi}.0 ? {hi}.0 : r >= {lo}.0 ? r : {lo}.0); }}",
        c_float(s),
        ctype(k)
    ))
}

/// `quantize`, `dequantize`, `rescalequantized`.
/// `convertto`: `Dest[i] = (T)expr(Src[i])` by `ops::Conversion`.
pub fn convert(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let conv = ops::Conversion::between(s.elem, d.elem).ok_or_else(|| c.unsupported(&d))?;
    let dt = ctype(d.elem);
    c.decl("Dest", dt)?;
    c.decl("Src", ctype(s.elem))?;
    c.w.for_loop("i", d.size());
    c.w.line(&format!("const {} x = Src[i];", ctype(s.elem)));
    c.w.line(&format!("Dest[i] = ({dt}){};", conv.c_expr()));
    c.w.close();
    Ok(())
}

pub fn quantization(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    if c.inst.operand_named("Scales").is_some() {
        return quantization_per_axis(c, &d, &s);
    }
    let deq = |t: &Type| {
        t.elem.quant().map(|(sc, o)| {
            format!(
                "float x = {} * (float)((int64_t)Src[i] - {o});",
                c_float(sc)
            )
        })
    };
    let (read, write) = match c.inst.opcode {
        glow_ir::Opcode::Quantize => {
            c.require_f32(&s)?;
            ("float x = Src[i];".to_string(), quantize_stmt(d.elem))
        }
        glow_ir::Opcode::Dequantize => {
            c.require_f32(&d)?;
            let r = deq(&s).ok_or_else(|| c.unsupported(&s))?;
            (r, Some("Dest[i] = x;".to_string()))
        }
        _ => {
            let r = deq(&s).ok_or_else(|| c.unsupported(&s))?;
            (r, quantize_stmt(d.elem))
        }
    };
    let write = write.ok_or_else(|| c.unsupported(&d))?;
    c.decl("Dest", ctype(d.elem))?;
    c.decl("Src", ctype(s.elem))?;
    c.w.for_loop("i", d.size());
    c.w.line(&read);
    c.w.line(&write);
    c.w.close();
    Ok(())
}

/// Per-axis `quantize`/`dequantize` (the interpreter's
/// `quantization_per_axis`): element i takes `Scales[ch]`, `Offsets[ch]`
/// with `ch = (i / inner) % n`, the same float operations and rounding as
/// the per-tensor form.
fn quantization_per_axis(c: &mut KCtx, d: &Type, s: &Type) -> Result<(), BackendError> {
    let axis = c.m().get(glow_ir::member::AXIS)? as usize;
    let dims = &d.dims;
    let n = dims.get(axis).copied().unwrap_or(1).max(1);
    let inner = dims.iter().skip(axis + 1).product::<u64>().max(1);
    c.decl("Dest", ctype(d.elem))?;
    c.decl("Src", ctype(s.elem))?;
    c.decl("Scales", "float")?;
    c.decl("Offsets", "int32_t")?;
    c.w.for_loop("i", d.size());
    c.w.line(&format!("const size_t ch = (i / {inner}u) % {n}u;"));
    if c.inst.opcode == glow_ir::Opcode::Dequantize {
        c.w.line("Dest[i] = Scales[ch] * (float)((int64_t)Src[i] - Offsets[ch]);");
    } else {
        let (lo, hi) = if d.elem == ElemKind::Int8 {
            (-128, 127)
        } else {
            (0, 255)
        };
        c.w.line(&format!(
            "double r = nearbyint((double)(Src[i] / Scales[ch])) + (double)Offsets[ch]; Dest[i] = ({})(r > {hi}.0 ? {hi}.0 : r >= {lo}.0 ? r : {lo}.0);",
            ctype(d.elem)
        ));
    }
    c.w.close();
    Ok(())
}
