//! C kernels of the rearranging instructions (`pad`, the resizes,
//! `spacetodepth`, `flip`, `cumsum`, `nonzero`); `interp/rearrange.rs`
//! computes in the same order. The per-dimension index maps and bilinear
//! weights come from `crate::rearrange` and are written as static tables.

use super::KCtx;
use crate::elem::{bits_ctype, ctype, splat_bits};
use crate::error::BackendError;
use crate::ops::c_float;
use crate::rearrange::{self as ra, FILL};
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode};

type R = Result<(), BackendError>;

pub fn emit(c: &mut KCtx) -> R {
    match c.inst.opcode {
        Opcode::Pad => pad(c),
        Opcode::ResizeNearest => resize_nearest(c),
        Opcode::ResizeBilinear => resize_bilinear(c),
        Opcode::SpaceToDepth => space_to_depth(c),
        Opcode::Flip => flip(c),
        Opcode::CumSum => cumsum(c),
        Opcode::NonZero => nonzero(c),
        Opcode::Mean => mean(c),
        Opcode::Concat => concat(c),
        Opcode::Bucketize => bucketize(c),
        Opcode::BatchOneHot => batch_one_hot(c),
        Opcode::ScatterData => scatter_data(c),
        Opcode::AdaptiveAvgPool => adaptive_avg_pool(c),
        Opcode::IndexAdd => index_add(c),
        Opcode::GaussianFill => gaussian_fill(c),
        _ => Err(c.err("not a rearranging instruction")),
    }
}

fn table<T: ToString>(ctype: &str, name: &str, v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(T::to_string).collect();
    format!("static const {ctype} {name}[] = {{{}}};", items.join(", "))
}

/// One loop per `Dest` dimension over its map `mK`; each element is the
/// source element at the mapped coordinates, `fill` where one is `FILL`.
fn remap(c: &mut KCtx, maps: &[Vec<i64>], fill: u64) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
    let ss = s.strides();
    for (k, map) in maps.iter().enumerate() {
        c.w.line(&table("int64_t", &format!("m{k}"), map));
    }
    c.w.line("size_t o = 0;");
    let mut cond = Vec::new();
    let mut terms = Vec::new();
    for (k, map) in maps.iter().enumerate() {
        c.w.for_loop(&format!("i{k}"), d.dims[k]);
        c.w.line(&format!("const int64_t s{k} = m{k}[i{k}];"));
        if map.contains(&FILL) {
            cond.push(format!("s{k} < 0"));
        }
        terms.push(format!("(size_t)s{k} * {}u", ss[k]));
    }
    let read = format!("Src[{}]", terms.join(" + "));
    if cond.is_empty() {
        c.w.line(&format!("Dest[o++] = {read};"));
    } else {
        c.w.line(&format!(
            "Dest[o++] = ({}) ? ({bt}){fill}ull : {read};",
            cond.join(" || ")
        ));
    }
    super::close_nest(c.w, maps.len());
    Ok(())
}

fn pad(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let pads = c.member(m::PAD)?.to_vec();
    let mode = c.member(m::PADDING_MODE)?;
    let fill = splat_bits(d.elem, c.member(m::VALUE)?).ok_or_else(|| c.unsupported(&d))?;
    remap(c, &ra::pad_maps(&s, &d, &pads, mode), fill)
}

fn resize_nearest(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let scale = c.member(m::RESIZE_SCALE)?.to_vec();
    remap(c, &ra::nearest_maps(&s, &d, &scale), 0)
}

fn flip(c: &mut KCtx) -> R {
    let s = c.ty("Src")?;
    let axis = c.member(m::AXIS)?.max(0) as usize;
    remap(c, &ra::flip_maps(&s, axis), 0)
}

fn resize_bilinear(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32s(&["Dest", "Src"])?;
    let scale = c.member(m::RESIZE_SCALE)?.to_vec();
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    let (ih, iw, ch) = (s.dims[1], s.dims[2], s.dims[3]);
    for (name, l) in [
        ("h", ra::lerps(ih, d.dims[1], scale[1])),
        ("w", ra::lerps(iw, d.dims[2], scale[2])),
    ] {
        let i0: Vec<u64> = l.iter().map(|e| e.i0).collect();
        let i1: Vec<u64> = l.iter().map(|e| e.i1).collect();
        let fr: Vec<String> = l.iter().map(|e| c_float(e.frac)).collect();
        c.w.line(&table("size_t", &format!("{name}0"), &i0));
        c.w.line(&table("size_t", &format!("{name}1"), &i1));
        c.w.line(&table("float", &format!("f{name}s"), &fr));
    }
    c.w.line("size_t o = 0;");
    c.w.for_loop("b", d.dims[0]);
    c.w.for_loop("y", d.dims[1]);
    c.w.for_loop("x", d.dims[2]);
    c.w.line("const float fh = fhs[y], fw = fws[x];");
    let row = |h: &str, w: &str| format!("((b * {ih}u + {h}[y]) * {iw}u + {w}[x]) * {ch}u");
    c.w.line(&format!(
        "const float *r00 = Src + {}, *r01 = Src + {}, *r10 = Src + {}, *r11 = Src + {};",
        row("h0", "w0"),
        row("h0", "w1"),
        row("h1", "w0"),
        row("h1", "w1")
    ));
    c.w.open(&format!("for (size_t k = 0; k < {ch}u; k++, o++)"));
    c.w.line("const float v00 = r00[k], v01 = r01[k], v10 = r10[k], v11 = r11[k];");
    c.w.line(ra::BLEND_C);
    super::close_nest(c.w, 4);
    Ok(())
}

fn space_to_depth(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let b = c.member(m::BLOCK_SIZE)?.max(1) as u64;
    let bt = bits_ctype(d.elem);
    c.decl("Dest", bt)?;
    c.decl("Src", bt)?;
    let (ih, iw, ic) = (s.dims[1], s.dims[2], s.dims[3]);
    c.w.line("size_t o = 0;");
    c.w.for_loop("n", d.dims[0]);
    c.w.for_loop("y", d.dims[1]);
    c.w.for_loop("x", d.dims[2]);
    c.w.open(&format!(
        "for (size_t oc = 0; oc < {}u; oc++, o++)",
        d.dims[3]
    ));
    c.w.line(&format!("const size_t layer = oc / {ic}u;"));
    c.w.line(&format!(
        "const size_t h = y * {b}u + layer / {b}u, w = x * {b}u + layer % {b}u;"
    ));
    c.w.line(&format!(
        "Dest[o] = Src[((n * {ih}u + h) * {iw}u + w) * {ic}u + oc % {ic}u];"
    ));
    super::close_nest(c.w, 4);
    Ok(())
}

fn cumsum(c: &mut KCtx) -> R {
    let t = c.ty("Input")?;
    let dim = c.member(m::DIM)?;
    let exclusive = c.member(m::EXCLUSIVE)?;
    let reverse = c.member(m::REVERSE)?;
    let (outer, n, inner) = ra::cumsum_extents(&t.dims, dim);
    let float = t.elem == ElemKind::Float;
    if !float && !t.elem.is_plain_int() {
        return Err(c.unsupported(&t));
    }
    let ct = ctype(t.elem);
    c.decl("Dest", ct)?;
    c.decl("Input", ct)?;
    // Integers wrap in 64 unsigned bits, then to the width at the store.
    let (acc_t, zero, read) = if float {
        ("float", "0.0f", "Input[p]".to_string())
    } else {
        ("uint64_t", "0u", "(uint64_t)(int64_t)Input[p]".to_string())
    };
    c.w.for_loop("o", outer);
    c.w.for_loop("i", inner);
    c.w.line(&format!("{acc_t} acc = {zero};"));
    c.w.for_loop("j", n);
    let at = if reverse {
        format!("{} - j", n - 1)
    } else {
        "j".into()
    };
    c.w.line(&format!(
        "const size_t p = (o * {n}u + ({at})) * {inner}u + i;"
    ));
    let store = if float {
        "Dest[p] = acc;".to_string()
    } else {
        format!("Dest[p] = ({ct})(int64_t)acc;")
    };
    if exclusive {
        c.w.line(&store);
        c.w.line(&format!("acc += {read};"));
    } else {
        c.w.line(&format!("acc += {read};"));
        c.w.line(&store);
    }
    super::close_nest(c.w, 3);
    Ok(())
}

/// One loop per kept dimension, then `acc` from `0.0f` over one loop per
/// averaged dimension (row-major), `Dest[o++] = acc / count`.
fn mean(c: &mut KCtx) -> R {
    let s = c.ty("Src")?;
    c.require_f32(&s)?;
    let dims = c.member(m::MEAN_DIMS)?.to_vec();
    let (kept, avg, count) = ra::mean_axes(&s, &dims);
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    c.w.line("size_t o = 0;");
    let term = |v: String, s: u64| format!("{v} * {s}u");
    let mut outer = Vec::new();
    for (k, &(n, st)) in kept.iter().enumerate() {
        c.w.for_loop(&format!("k{k}"), n);
        outer.push(term(format!("k{k}"), st));
    }
    c.w.line("float acc = 0.0f;");
    let mut inner = outer.clone();
    for (k, &(n, st)) in avg.iter().enumerate() {
        c.w.for_loop(&format!("a{k}"), n);
        inner.push(term(format!("a{k}"), st));
    }
    inner.push("0u".into());
    c.w.line(&format!("acc += Src[{}];", inner.join(" + ")));
    super::close_nest(c.w, avg.len());
    c.w.line(&format!("Dest[o++] = acc / {};", c_float(count as f32)));
    super::close_nest(c.w, kept.len());
    Ok(())
}

/// Each input in list order into its slab of `Dest` along `Axis`: one
/// `memmove` of a contiguous run per outer index.
fn concat(c: &mut KCtx) -> R {
    let d = c.ty("Dest")?;
    let axis = c.member(m::AXIS)?.max(0) as usize;
    let (outer, at, inner) = crate::emit::split(&d.dims, axis);
    let bt = bits_ctype(d.elem);
    let range = c.inst.operand_list("Inputs").unwrap_or(1..1);
    let mut extents = Vec::with_capacity(range.len());
    for k in range {
        extents.push(c.ty_at(k)?.dims.get(axis).copied().unwrap_or(1));
    }
    c.decl("Dest", bt)?;
    c.decl_list("Inputs", bt)?;
    let mut off = 0u64;
    for (i, a) in extents.into_iter().enumerate() {
        let run = a * inner;
        c.w.for_loop("o", outer);
        c.w.line(&format!(
            "memmove(Dest + (o * {at}u + {off}u) * {inner}u, Inputs[{i}] + o * {run}u, {run}u * sizeof({bt}));"
        ));
        c.w.close();
        off += a;
    }
    Ok(())
}

fn nonzero(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Cond")?);
    if d.elem != ElemKind::Index32 || s.elem != ElemKind::Bool {
        return Err(c.unsupported(&d));
    }
    c.decl("Dest", "int32_t")?;
    c.decl("Cond", "uint8_t")?;
    c.w.line(&format!(
        "for (size_t z = 0; z < {}u; z++) Dest[z] = 0;",
        d.size()
    ));
    c.w.line("size_t k = 0;");
    c.w.for_loop("i", s.size());
    c.w.line("if (Cond[i]) Dest[k++] = (int32_t)i;");
    c.w.close();
    Ok(())
}

fn bucketize(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32(&s)?;
    let b: Vec<String> = c
        .member(m::BOUNDARIES)?
        .iter()
        .map(|&v| c_float(v as f32))
        .collect();
    c.decl("Dest", "int32_t")?;
    c.decl("Src", "float")?;
    let nb = b.len();
    if nb > 0 {
        c.w.line(&table("float", "bounds", &b));
    } else {
        // No boundaries: every element is in bucket 0.
        c.w.line("(void)Src;");
    }
    c.w.for_loop("i", d.size());
    c.w.line("int32_t k = 0;");
    if nb > 0 {
        c.w.line(&format!(
            "for (size_t j = 0; j < {nb}u; j++) k += bounds[j] < Src[i];"
        ));
    }
    c.w.line("Dest[i] = k;");
    c.w.close();
    Ok(())
}

/// Declares an operand as `float` or as its integer C type, and says which.
fn decl_num(c: &mut KCtx, name: &str) -> Result<bool, BackendError> {
    let t = c.ty(name)?;
    let float = t.elem == ElemKind::Float;
    if !float && !crate::elem::is_integer(t.elem) {
        return Err(c.unsupported(&t));
    }
    c.decl(name, if float { "float" } else { ctype(t.elem) })?;
    Ok(float)
}

fn batch_one_hot(c: &mut KCtx) -> R {
    let d = c.ty("Dest")?;
    decl_num(c, "Dest")?;
    decl_num(c, "Data")?;
    decl_num(c, "Values")?;
    c.decl("Lengths", "int32_t")?;
    let (rows, width) = (d.dims[0], d.dims[1]);
    let feats = c.ty("Lengths")?.size();
    c.w.line(&format!(
        "for (size_t z = 0; z < {}u; z++) Dest[z] = 0;",
        d.size()
    ));
    c.w.for_loop("b", rows);
    c.w.line("size_t col = 0;");
    c.w.for_loop("f", feats);
    c.w.line("const int32_t len = Lengths[f];");
    c.w.open(&format!(
        "for (int32_t j = 0; j < len && col < {width}u; j++, col++)"
    ));
    c.w.line(&format!(
        "Dest[b * {width}u + col] = Data[b * {feats}u + f] == Values[col];"
    ));
    super::close_nest(c.w, 3);
    Ok(())
}

fn scatter_data(c: &mut KCtx) -> R {
    let (dt, it) = (c.ty("Data")?, c.ty("Indices")?);
    let (n, k) = (it.dims[0], it.dims[1] as usize);
    let line: u64 = dt.dims[k..].iter().product();
    let cumulative = c.member(m::CUMULATIVE)?;
    if cumulative {
        if !(dt.elem == ElemKind::Float || dt.elem.is_plain_int()) {
            return Err(c.unsupported(&dt));
        }
        let ct = if dt.elem == ElemKind::Float {
            "float"
        } else {
            ctype(dt.elem)
        };
        c.decl("Data", ct)?;
        c.decl("Slices", ct)?;
    } else {
        let bt = bits_ctype(dt.elem);
        c.decl("Data", bt)?;
        c.decl("Slices", bt)?;
    }
    c.decl("Indices", ctype(it.elem))?;
    c.w.for_loop("i", n);
    c.w.line("size_t s = 0;");
    c.w.line("int out = 0;");
    for (j, &dim) in dt.dims[..k].iter().enumerate() {
        c.w.line(&format!(
            "const int64_t t{j} = (int64_t)Indices[i * {k}u + {j}u];"
        ));
        c.w.line(&format!("if (t{j} < 0 || t{j} >= {dim}ll) out = 1;"));
        c.w.line(&format!("s = s * {dim}u + (size_t)t{j};"));
    }
    c.w.line("if (out) continue;");
    let body = if !cumulative {
        "Data[s * L + j] = Slices[i * L + j];"
    } else if dt.elem == ElemKind::Float {
        "Data[s * L + j] += Slices[i * L + j];"
    } else {
        "Data[s * L + j] = (T)(int64_t)((uint64_t)(int64_t)Data[s * L + j] + (uint64_t)(int64_t)Slices[i * L + j]);"
    };
    let body = body
        .replace('L', &format!("{line}u"))
        .replace("(T)", &format!("({})", ctype(dt.elem)));
    c.w.line(&format!("for (size_t j = 0; j < {line}u; j++) {body}"));
    c.w.close();
    Ok(())
}

fn adaptive_avg_pool(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32s(&["Dest", "Src"])?;
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    let (ih, iw, ch) = (s.dims[1], s.dims[2], s.dims[3]);
    for (name, w) in [
        ("h", ra::adaptive_windows(d.dims[1], ih)),
        ("w", ra::adaptive_windows(d.dims[2], iw)),
    ] {
        let starts: Vec<u64> = w.iter().map(|e| e.0).collect();
        let lens: Vec<u64> = w.iter().map(|e| e.1).collect();
        c.w.line(&table("size_t", &format!("{name}0"), &starts));
        c.w.line(&table("size_t", &format!("{name}n"), &lens));
    }
    c.w.line("size_t o = 0;");
    c.w.for_loop("n", d.dims[0]);
    c.w.for_loop("y", d.dims[1]);
    c.w.for_loop("x", d.dims[2]);
    c.w.open(&format!("for (size_t k = 0; k < {ch}u; k++, o++)"));
    c.w.line("float sum = 0.0f;");
    c.w.line("for (size_t fy = 0; fy < hn[y]; fy++)");
    c.w.line(&format!(
        "  for (size_t fx = 0; fx < wn[x]; fx++) sum += Src[((n * {ih}u + h0[y] + fy) * {iw}u + w0[x] + fx) * {ch}u + k];"
    ));
    c.w.line("Dest[o] = sum / (float)wn[x] / (float)hn[y];");
    super::close_nest(c.w, 4);
    Ok(())
}

fn index_add(c: &mut KCtx) -> R {
    let (d, st, it) = (c.ty("Dest")?, c.ty("Source")?, c.ty("Index")?);
    c.require_f32s(&["Dest", "Input", "Source"])?;
    let dim = c.member(m::DIM)?.max(0) as usize;
    let alpha = c_float(c.member(m::ALPHA)? as f32);
    c.decl("Dest", "float")?;
    c.decl("Input", "float")?;
    c.decl("Source", "float")?;
    c.decl("Index", ctype(it.elem))?;
    let (outer, n, inner) = crate::emit::split(&d.dims, dim);
    let m = st.dims[dim];
    c.w.line(&format!("memmove(Dest, Input, {}u);", d.bytes()));
    c.w.for_loop("i", it.size());
    c.w.line("const int64_t k = (int64_t)Index[i];");
    c.w.line(&format!("if (k < 0 || k >= {n}ll) continue;"));
    c.w.for_loop("o", outer);
    c.w.line(&format!(
        "for (size_t j = 0; j < {inner}u; j++) Dest[(o * {n}u + (size_t)k) * {inner}u + j] += {alpha} * Source[(o * {m}u + i) * {inner}u + j];"
    ));
    super::close_nest(c.w, 2);
    Ok(())
}

fn gaussian_fill(c: &mut KCtx) -> R {
    let d = c.ty("Dest")?;
    c.require_f32(&d)?;
    let seed = ra::seed_of(c.member(m::SEED)?);
    let mean = c_float(c.member(m::MEAN)? as f32);
    let scale = c_float(c.member(m::FILL_SCALE)? as f32);
    c.decl("Dest", "float")?;
    c.w.line(&format!(
        "const uint64_t seed = {seed}ull; const float mean = {mean}, scale = {scale}, TWO_PI = {};",
        c_float(ra::TWO_PI)
    ));
    c.w.for_loop("i", d.size());
    c.w.line(ra::GAUSSIAN_C);
    c.w.close();
    Ok(())
}
