//! C kernels of the quantized instructions: integer loop nests over the
//! constants of `crate::quant` (the interpreter applies the same numbers),
//! with `glow_rq` / `glow_wrap32` / `glow_clamp64` from the `quant` section
//! of the shared kernels.

use super::runtime::{Kernel, PackKind};
use super::spatial::{idx, open_window, Window};
use super::KCtx;
use crate::elem::ctype;
use crate::error::BackendError;
use crate::quant::{self as q, ChannelParams};
use glow_ir::member as m;
use glow_ir::quant::{Multiplier, Product, Requant};
use glow_ir::{Opcode, Type};

type R = Result<(), BackendError>;

/// The largest input band (int16 elements) a quantized convolution keeps on
/// each thread's stack; larger ones take the reference loops.
const MAX_BAND: u64 = 1 << 17;

/// The most taps a depthwise window may have for the packed depthwise
/// kernel (`GLOW_QDW_MAXT` in kernels.c); larger ones take the loops.
const QDW_MAX_TAPS: u64 = 64;

fn kw_of(win: &Window) -> u64 {
    win.kernels[1]
}

fn list<T: std::fmt::Display>(v: impl IntoIterator<Item = T>) -> String {
    v.into_iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `static const` arrays of each product's filter offset, bias multiplier
/// and output multiplier (`woff`, `bm`, `bs`, `qm`, `qs`), and the shared
/// `xoff`, `ooff`, `lo`, `hi`.
fn product_tables(c: &mut KCtx, ps: &[Product]) -> R {
    let p0 = ps.first().ok_or_else(|| c.err("no output channels"))?;
    if ps.iter().any(|p| {
        p.x_off != p0.x_off
            || p.out.offset != p0.out.offset
            || (p.out.lo, p.out.hi) != (p0.out.lo, p0.out.hi)
    }) {
        return Err(c.err("output parameters differ between channels"));
    }
    let n = ps.len();
    let bias = |p: &Product| p.bias.unwrap_or(Multiplier { mult: 0, shift: 0 });
    c.w.line(&format!(
        "static const int64_t woff[{n}] = {{{}}};",
        list(ps.iter().map(|p| p.w_off))
    ));
    c.w.line(&format!(
        "static const int64_t bm[{n}] = {{{}}};",
        list(ps.iter().map(|p| bias(p).mult))
    ));
    c.w.line(&format!(
        "static const int bs[{n}] = {{{}}};",
        list(ps.iter().map(|p| bias(p).shift))
    ));
    c.w.line(&format!(
        "static const int64_t qm[{n}] = {{{}}};",
        list(ps.iter().map(|p| p.out.m.mult))
    ));
    c.w.line(&format!(
        "static const int qs[{n}] = {{{}}};",
        list(ps.iter().map(|p| p.out.m.shift))
    ));
    c.w.line(&format!(
        "const int64_t xoff = {}, ooff = {}, lo = {}, hi = {};",
        p0.x_off, p0.out.offset, p0.out.lo, p0.out.hi
    ));
    c.w.line("(void)bm; (void)bs;");
    Ok(())
}

/// The per-channel vectors of a channel-wise convolution, read from the
/// constant region at emit time.
fn channel_params(c: &KCtx) -> Result<Option<ChannelParams>, BackendError> {
    if c.inst.opcode != Opcode::ChannelwiseQuantizedConvolution {
        return Ok(None);
    }
    Ok(Some(ChannelParams {
        filter_scales: const_f32s(c, "FilterScales")?,
        filter_offsets: const_i32s(c, "FilterOffsets")?,
        bias_scales: const_f32s(c, "BiasScales")?,
        bias_offsets: const_i32s(c, "BiasOffsets")?,
    }))
}

/// The bytes of operand `name`, a constant weight whose values the
/// multipliers are derived from at compile time.
fn const_bytes(c: &KCtx, name: &str) -> Result<Vec<u8>, BackendError> {
    let w = c.const_weight(name).ok_or_else(|| {
        c.err(format!(
            "`{name}` of `{}` must be a constant weight (its multipliers are derived at compile time)",
            c.inst.opcode.name()
        ))
    })?;
    let t = c.ty(name)?;
    let place = c.mem.weight_place(w);
    let (a, b) = (place.offset as usize, (place.offset + t.bytes()) as usize);
    c.rt.constant_bytes(a, b)
        .map(<[u8]>::to_vec)
        .ok_or_else(|| c.err(format!("`{name}` lies outside the constant region")))
}

fn const_f32s(c: &KCtx, name: &str) -> Result<Vec<f32>, BackendError> {
    Ok(const_bytes(c, name)?
        .chunks_exact(4)
        .map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
        .collect())
}

fn const_i32s(c: &KCtx, name: &str) -> Result<Vec<i64>, BackendError> {
    Ok(const_bytes(c, name)?
        .chunks_exact(4)
        .map(|x| i32::from_le_bytes([x[0], x[1], x[2], x[3]]) as i64)
        .collect())
}

/// The store of a product result: `Dest[at] = clamp(ooff + rq(acc))`.
fn store(c: &mut KCtx, dest: &str, ch: &str, acc: &str, d: &Type) {
    c.w.line(&format!(
        "{dest} = ({})glow_clamp64(ooff + glow_rq({acc}, qm[{ch}], qs[{ch}]), lo, hi);",
        ctype(d.elem)
    ));
}

pub fn convolution(c: &mut KCtx) -> R {
    let (d, s, f) = (c.ty("Dest")?, c.ty("Src")?, c.ty("Filter")?);
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let group = c.member(m::GROUP)?.max(1) as u64;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, oc, oh, ow] = win.nchw_of(&d.dims);
    let (cg, ocg) = (ch / group, oc / group);
    let cp = channel_params(c)?;
    let ps = q::products(c.f, c.id, oc, cp.as_ref())?;
    c.rt.use_kernel(Kernel::Quant);
    for (nm, t) in [("Dest", &d), ("Src", &s), ("Filter", &f)] {
        c.decl(nm, ctype(t.elem))?;
    }
    c.decl("Bias", ctype(c.ty("Bias")?.elem))?;
    product_tables(c, &ps)?;
    let span = (ow - 1) * win.strides[1] + (kw_of(&win) - 1) * win.dilation[1] + 1;
    let band = win.kernels[0] * span * group * cg.div_ceil(2) * 2;
    // The depthwise kernel widens kh rows of `span` pixels, channels rounded
    // up to 32 (so AVX-512 rows are whole registers, 64-byte aligned), and keeps one band offset per tap on the stack.
    let dw_band = win.kernels[0] * span * ch.div_ceil(32) * 32;
    // Output rows the direct kernel widens at once: with a packed filter
    // above 256 KiB (half a core's L2) up to 256 KiB of band, so the filter
    // is read once per chunk of rows rather than once per row; up to 64 KiB
    // of rows otherwise.
    let packed_filter =
        group * ocg.div_ceil(16) * win.kernels[0] * win.kernels[1] * cg.div_ceil(2) * 64;
    let chunk_band = if packed_filter > 1 << 18 {
        MAX_BAND
    } else {
        MAX_BAND / 4
    };
    let rows = (chunk_band / band.max(1)).clamp(1, (n * oh).max(1));
    let depthwise = cg == 1 && ocg == 1 && win.kernels[0] * win.kernels[1] <= QDW_MAX_TAPS;
    let fits = if depthwise {
        ch <= 4096 && dw_band <= MAX_BAND
    } else {
        band <= MAX_BAND
    };
    if let (false, Some(wi), true) = (win.nchw, c.const_weight("Filter"), fits) {
        let p0 = ps[0];
        c.rt.use_kernel(if depthwise {
            Kernel::QDepthwise
        } else {
            Kernel::QConv
        });
        let signed_filter = matches!(f.elem, glow_ir::ElemKind::Int8Q { .. });
        let woff = ps.iter().map(|p| p.w_off).collect();
        let kind = if depthwise {
            c.rt.need_qdwc(ch.div_ceil(32) * 32);
            c.rt.need_qband(dw_band);
            PackKind::QDepthwise {
                c: ch,
                kh: win.kernels[0],
                kw: win.kernels[1],
                signed: signed_filter,
                woff,
            }
        } else {
            c.rt.need_qband(rows * band);
            PackKind::QConvPanels {
                group,
                ocg,
                kh: win.kernels[0],
                kw: win.kernels[1],
                cg,
                signed: signed_filter,
                woff,
            }
        };
        // The VNNI kernel's int8 form of the same filter (used if it fits).
        let vnni_kind = kind.int8_form();
        let at = c.rt.packed(wi, kind);
        let signed = |t: &Type| u8::from(matches!(t.elem, glow_ir::ElemKind::Int8Q { .. }));
        c.w.line("(void)Filter; (void)xoff; (void)ooff; (void)lo; (void)hi; (void)woff;");
        c.w.line(
            &format!(
                "static const glow_qconv_t shape = {{{}, {}, {}, {}, {}, {}, {}, {}}};",
                list([
                    n,
                    h,
                    w,
                    ch,
                    oh,
                    ow,
                    oc,
                    win.kernels[0],
                    win.kernels[1],
                    win.strides[0],
                    win.strides[1],
                    win.pads[0],
                    win.pads[1],
                    win.dilation[0],
                    win.dilation[1],
                    group
                ]),
                signed(&s),
                signed(&d),
                p0.x_off,
                p0.out.offset,
                p0.out.lo,
                p0.out.hi,
                if depthwise { 0 } else { rows }
            )
            .replace(", }", "}"),
        );
        c.w.line(&format!("int64_t bterm[{oc}];"));
        c.w.line(&format!(
            "for (size_t o = 0; o < {oc}u; o++) bterm[o] = glow_rq(Bias[o], bm[o], bs[o]);"
        ));
        let call = |k: &str| {
            format!(
                "{k}(Dest, Src, (const int16_t *)(constantWeight + {at}u), bterm, qm, qs, &shape"
            )
        };
        if depthwise {
            c.w.line(&format!("{});", call("glow_qdw")));
            return Ok(());
        }
        let comp = vnni_compensation(c, &ps, win.kernels[0] * win.kernels[1] * cg, signed(&s))?;
        match (comp, vnni_kind) {
            (Some(comp), Some(vk)) => {
                let at8 = c.rt.packed(wi, vk);
                c.w.line("#if defined(GLOW_VPDPBUSD)");
                c.w.line(&format!(
                    "static const int64_t wcomp[{oc}] = {{{}}};",
                    list(comp)
                ));
                c.w.line(&format!("int64_t bterm8[{oc}];"));
                c.w.line(&format!(
                    "for (size_t o = 0; o < {oc}u; o++) bterm8[o] = bterm[o] - wcomp[o];"
                ));
                c.w.line(&format!(
                    "{}, (const int8_t *)(constantWeight + {at8}u), bterm8);",
                    call("glow_qconv")
                ));
                c.w.line("#else");
                c.w.line(&format!("{}, 0, 0);", call("glow_qconv")));
                c.w.line("#endif");
            }
            _ => c.w.line(&format!("{}, 0, 0);", call("glow_qconv"))),
        }
        return Ok(());
    }
    let fs = crate::interp::filter_strides(&win, cg);
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.for_loop("o", oc);
    c.w.line(&format!("const size_t g = o / {ocg}u;"));
    c.w.line("int64_t sum = 0;");
    open_window(c, &win, h, w);
    c.w.for_loop("ci", cg);
    let src = idx(
        [
            "n",
            &format!("(g * {cg}u + ci)"),
            "(size_t)ih",
            "(size_t)iw",
        ],
        win.act_strides(&s.dims),
    );
    let filt = idx(["o", "kh", "kw", "ci"], fs);
    c.w.line(&format!(
        "sum += ((int64_t)Src[{src}] - xoff) * ((int64_t)Filter[{filt}] - woff[o]);"
    ));
    for _ in 0..3 {
        c.w.close();
    }
    c.w.line("const int64_t acc = glow_wrap32(sum + glow_rq(Bias[o], bm[o], bs[o]));");
    let dest = format!(
        "Dest[{}]",
        idx(["n", "o", "oh", "ow"], win.act_strides(&d.dims))
    );
    store(c, &dest, "o", "acc", &d);
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}

/// The VNNI kernel's per-channel term `xou * sum(w - woff[o])` (xou: the
/// input offset as the unsigned bytes the kernel reads), or None when some
/// `w - woff[o]` does not fit in int8 and the kernel cannot take the filter.
fn vnni_compensation(
    c: &KCtx,
    ps: &[Product],
    per_oc: u64,
    src_signed: u8,
) -> Result<Option<Vec<i64>>, BackendError> {
    let f = c.ty("Filter")?;
    let signed = matches!(f.elem, glow_ir::ElemKind::Int8Q { .. });
    let bytes = const_bytes(c, "Filter")?;
    let xou = ps[0].x_off + 128 * i64::from(src_signed);
    Ok(int8_compensation(ps, per_oc, xou, |o, i| {
        stored_int(&bytes, o * per_oc + i, signed)
    }))
}

/// The stored 8-bit value at `at` (0 past the end).
fn stored_int(bytes: &[u8], at: u64, signed: bool) -> i64 {
    let b = bytes.get(at as usize).copied().unwrap_or(0);
    if signed {
        b as i8 as i64
    } else {
        b as i64
    }
}

/// `xou * sum_i (w(o, i) - woff[o])` for each output `o` of `ps` over `per`
/// inputs, or None when some `w(o, i) - woff[o]` does not fit in int8.
fn int8_compensation(
    ps: &[Product],
    per: u64,
    xou: i64,
    w: impl Fn(u64, u64) -> i64,
) -> Option<Vec<i64>> {
    let mut comp = Vec::with_capacity(ps.len());
    for (o, p) in ps.iter().enumerate() {
        let mut sum = 0i64;
        for i in 0..per {
            let v = w(o as u64, i) - p.w_off;
            if !(-128..=127).contains(&v) {
                return None;
            }
            sum += v;
        }
        comp.push(xou * sum);
    }
    Some(comp)
}

/// `fullyconnected`, `matmul`, `batchmatmul`.
pub fn matrix_multiply(c: &mut KCtx) -> R {
    let op = c.inst.opcode;
    let rowwise = op == Opcode::RowwiseQuantizedFullyConnected;
    let bias = op == Opcode::FullyConnected || rowwise;
    let (l, r) = if bias {
        ("Src", "Weights")
    } else {
        ("LHS", "RHS")
    };
    let (d, lt, rt) = (c.ty("Dest")?, c.ty(l)?, c.ty(r)?);
    let (nb, rows, inner, cols) = match op {
        Opcode::BatchMatMul => (lt.dims[0], lt.dims[1], lt.dims[2], rt.dims[2]),
        Opcode::FullyConnected => (1, lt.dims[0], lt.size() / lt.dims[0].max(1), rt.dims[1]),
        _ if rowwise => (1, lt.dims[0], lt.dims[1], rt.dims[0]),
        _ => (1, lt.dims[0], lt.dims[1], rt.dims[1]),
    };
    let ps = if rowwise {
        let (sc, of) = (const_f32s(c, "Scales")?, const_i32s(c, "Offsets")?);
        q::rowwise_products(c.f, c.id, &sc, &of)?
    } else {
        q::products(c.f, c.id, cols, None)?
    };
    c.rt.use_kernel(Kernel::Quant);
    c.decl("Dest", ctype(d.elem))?;
    c.decl(l, ctype(lt.elem))?;
    c.decl(r, ctype(rt.elem))?;
    if bias {
        c.decl("Bias", ctype(c.ty("Bias")?.elem))?;
    }
    product_tables(c, &ps)?;
    if gemm_call(c, (nb, rows, inner, cols), (l, r), &ps, bias, rowwise)? {
        return Ok(());
    }
    // A row-wise product's weights are `[cols][inner]`.
    let (ks, js) = if rowwise { (1, inner) } else { (cols, 1) };
    c.w.for_loop("b", nb);
    c.w.for_loop("i", rows);
    c.w.for_loop("j", cols);
    c.w.line("int64_t sum = 0;");
    c.w.for_loop("k", inner);
    c.w.line(&format!(
        "sum += ((int64_t){l}[b * {}u + i * {inner}u + k] - xoff) * ((int64_t){r}[b * {}u + k * {ks}u + j * {js}u] - woff[j]);",
        rows * inner,
        inner * cols
    ));
    c.w.close();
    let bt = if bias {
        "glow_rq(Bias[j], bm[j], bs[j])"
    } else {
        "0"
    };
    c.w.line(&format!("const int64_t acc = glow_wrap32(sum + {bt});"));
    let dest = format!("Dest[b * {}u + i * {cols}u + j]", rows * cols);
    store(c, &dest, "j", "acc", &d);
    for _ in 0..3 {
        c.w.close();
    }
    Ok(())
}

/// The packed integer GEMM (`glow_qgemm`) for a product of `nb` batches of
/// `rows x inner` times `inner x cols` (`rowwise`: the transpose of
/// `cols x inner`, an offset per column): a constant right-hand side is
/// packed at emit time, another one block at a time on the stack. False
/// (nothing written) when the widened rows would not fit the stack band, or
/// for row-wise weights known only at run time.
fn gemm_call(
    c: &mut KCtx,
    (nb, rows, inner, cols): (u64, u64, u64, u64),
    (l, r): (&str, &str),
    ps: &[Product],
    bias: bool,
    rowwise: bool,
) -> Result<bool, BackendError> {
    let p = &ps[0];
    let k2 = inner.div_ceil(2) * 2;
    let chunk = [24u64, 6]
        .into_iter()
        .map(|ch| ch.min(rows).max(1))
        .find(|ch| (ch + 16) * k2 <= MAX_BAND);
    let Some(chunk) = chunk else {
        return Ok(false);
    };
    if nb * rows * inner * cols == 0 || (rowwise && c.const_weight(r).is_none()) {
        return Ok(false);
    }
    let signed = |name: &str| -> Result<bool, BackendError> {
        Ok(matches!(c.ty(name)?.elem, glow_ir::ElemKind::Int8Q { .. }))
    };
    let (ls, rs, ds) = (signed(l)?, signed(r)?, signed("Dest")?);
    c.rt.use_kernel(Kernel::QGemm);
    c.rt.need_qband((chunk + 16) * k2);
    let packing = if rowwise {
        // `[cols][inner]` is a 1x1 convolution filter.
        PackKind::QConvPanels {
            group: 1,
            ocg: cols,
            kh: 1,
            kw: 1,
            cg: inner,
            signed: rs,
            woff: ps.iter().map(|p| p.w_off).collect(),
        }
    } else {
        PackKind::QGemmPanels {
            nb,
            k: inner,
            n: cols,
            signed: rs,
            woff: vec![p.w_off],
        }
    };
    let pk = match c.const_weight(r) {
        Some(w) => {
            let at = c.rt.packed(w, packing);
            format!("(const int16_t *)(constantWeight + {at}u)")
        }
        None => "0".to_string(),
    };
    c.w.line("(void)xoff; (void)ooff; (void)lo; (void)hi; (void)woff;");
    c.w.line(&format!(
        "static const glow_qgemm_t shape = {{{nb}u, {rows}u, {inner}u, {cols}u, {chunk}u, {}, {}, {}, {}, {}, {}, {}, {}}};",
        u8::from(ls),
        u8::from(rs),
        u8::from(ds),
        p.x_off,
        p.w_off,
        p.out.offset,
        p.out.lo,
        p.out.hi
    ));
    if bias {
        c.w.line(&format!("int64_t bterm[{cols}];"));
        c.w.line(&format!(
            "for (size_t j = 0; j < {cols}u; j++) bterm[j] = glow_rq(Bias[j], bm[j], bs[j]);"
        ));
    } else {
        c.w.line(&format!("static const int64_t bterm[{cols}] = {{0}};"));
    }
    let call = format!("glow_qgemm(Dest, {l}, {r}, {pk}, bterm, qm, qs, &shape);");
    match vnni_gemm(c, (nb, rows, inner, cols), (l, r), ps, (ls, ds), rowwise)? {
        Some(vnni) => {
            // Each branch names what only the other one uses (-Wunused).
            c.w.line("#if defined(GLOW_VPDPBUSD)");
            c.w.line(&format!("(void)shape; (void){r}; (void)glow_qgemm;"));
            for line in vnni {
                c.w.line(&line);
            }
            c.w.line("#else");
            c.w.line("(void)glow_qconv;");
            c.w.line(&call);
            c.w.line("#endif");
        }
        None => c.w.line(&call),
    }
    Ok(true)
}

/// The VNNI form of a single product (`nb` = 1, at least 4 rows) by a
/// constant right-hand side whose `r - woff[j]` all fit in int8: the product is the 1x1
/// convolution of `rows` pixels of `inner` channels by the filter
/// `[cols][inner]` (the right-hand side transposed, or a row-wise product's
/// weights as they are), run by the convolution's VNNI kernel, whose
/// compensation `xou * sum_k (r - woff[j])` is folded into the bias term.
/// The C lines (after `bterm` is set), or None when it does not apply.
fn vnni_gemm(
    c: &mut KCtx,
    (nb, rows, inner, cols): (u64, u64, u64, u64),
    (l, r): (&str, &str),
    ps: &[Product],
    (ls, ds): (bool, bool),
    rowwise: bool,
) -> Result<Option<Vec<String>>, BackendError> {
    let Some(w) = c.const_weight(r) else {
        return Ok(None);
    };
    // Fewer than 4 rows would waste most of the kernel's pixel tiles, and
    // the convolution splits rows over the threads where the int16 GEMM
    // splits columns.
    if nb != 1 || rows < 4 || ps.len() as u64 != cols {
        return Ok(None);
    }
    let chunk = rows.clamp(1, 24);
    let k2 = inner.div_ceil(2) * 2;
    if chunk * k2 > MAX_BAND {
        return Ok(None);
    }
    let signed = matches!(c.ty(r)?.elem, glow_ir::ElemKind::Int8Q { .. });
    let bytes = const_bytes(c, r)?;
    let xou = ps[0].x_off + 128 * i64::from(ls);
    let Some(comp) = int8_compensation(ps, inner, xou, |j, kk| {
        let at = if rowwise {
            j * inner + kk
        } else {
            kk * cols + j
        };
        stored_int(&bytes, at, signed)
    }) else {
        return Ok(None);
    };
    let woff = ps.iter().map(|p| p.w_off).collect();
    let kind = if rowwise {
        PackKind::QConvVnni {
            group: 1,
            ocg: cols,
            kh: 1,
            kw: 1,
            cg: inner,
            signed,
            woff,
        }
    } else {
        PackKind::QGemmVnni {
            k: inner,
            n: cols,
            signed,
            woff,
        }
    };
    c.rt.use_kernel(Kernel::QConv);
    c.rt.need_qband(chunk * k2);
    let at8 = c.rt.packed(w, kind);
    let p = &ps[0];
    Ok(Some(vec![
        format!(
            "static const glow_qconv_t cshape = {{1u, {rows}u, 1u, {inner}u, {rows}u, 1u, {cols}u, 1u, 1u, 1u, 1u, 0u, 0u, 1u, 1u, 1u, {}, {}, {}, {}, {}, {}, {chunk}u}};",
            u8::from(ls),
            u8::from(ds),
            p.x_off,
            p.out.offset,
            p.out.lo,
            p.out.hi
        ),
        format!("static const int64_t wcomp[{cols}] = {{{}}};", list(comp)),
        format!("int64_t bterm8[{cols}];"),
        format!("for (size_t j = 0; j < {cols}u; j++) bterm8[j] = bterm[j] - wcomp[j];"),
        format!(
            "glow_qconv(Dest, {l}, 0, bterm, qm, qs, &cshape, (const int8_t *)(constantWeight + {at8}u), bterm8);"
        ),
    ]))
}

/// `dynamicquantizedfullyconnected`, `dynamicrowwisequantizedfullyconnected`:
/// `glow_qdyn` of the shared kernels (the interpreter's loop computes the
/// same, in the same order); constant weights are packed at emit time.
pub fn dynamic_fully_connected(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let (rows, inner, cols) = (s.dims[0], s.dims[1], d.dims[1]);
    let rowwise = c.inst.opcode == Opcode::DynamicRowwiseQuantizedFullyConnected;
    let woff = q::dynamic_offsets(c.f, c.id, cols as usize, || const_i32s(c, "Offsets"))?;
    c.rt.use_kernel(Kernel::QDyn);
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    c.decl("Weights", "int8_t")?;
    c.decl("Bias", "float")?;
    let n = cols.max(1);
    c.w.line(&format!(
        "static const int32_t woff[{n}] = {{{}}};",
        list(woff.iter())
    ));
    let wscale = if rowwise {
        c.decl("Scales", "float")?;
        "Scales".to_string()
    } else {
        let sw = c.ty("Weights")?.elem.quant().map_or(1.0, |(s, _)| s);
        c.w.line(&format!(
            "static const float wsc[{n}] = {{{}}};",
            list((0..n).map(|_| crate::ops::c_float(sw)))
        ));
        "wsc".to_string()
    };
    let k2 = inner.div_ceil(2) * 2;
    let chunk = [24u64, 6]
        .into_iter()
        .map(|ch| ch.min(rows).max(1))
        .find(|ch| (ch + 16) * k2 <= MAX_BAND)
        .unwrap_or(0);
    let mut pk = "0".to_string();
    if chunk > 0 {
        c.rt.need_qband((chunk + 16) * k2);
        if let Some(w) = c.const_weight("Weights") {
            let packing = PackKind::QGemmPanels {
                nb: 1,
                k: inner,
                n: cols,
                signed: true,
                woff: woff.clone(),
            };
            let at = c.rt.packed(w, packing);
            pk = format!("(const int16_t *)(constantWeight + {at}u)");
        }
    }
    c.w.line(&format!(
        "static const glow_qdyn_t shape = {{{rows}u, {inner}u, {cols}u, {chunk}u}};"
    ));
    c.w.line(&format!(
        "glow_qdyn(Dest, Src, Weights, {pk}, {wscale}, woff, Bias, &shape);"
    ));
    Ok(())
}

/// `quantizationprofile`: `glow_qprofile` of the shared kernels, the steps
/// of `glow_ir::quant::profile_update`.
pub fn quantization_profile(c: &mut KCtx) -> R {
    q::check_profile(c.f, c.id)?;
    let (x, h) = (c.ty("InputTensor")?, c.ty("Histogram")?);
    c.rt.use_kernel(Kernel::QProfile);
    c.decl("InputTensor", "float")?;
    c.decl("Histogram", "float")?;
    c.decl("ComputationInfo", "float")?;
    c.w.line(&format!(
        "glow_qprofile(InputTensor, {}u, Histogram, {}u, ComputationInfo);",
        x.size(),
        h.size()
    ));
    Ok(())
}

/// A rescale `clamp(off + rq(q - in_off))` as C over `v`.
fn rescale_expr(v: &str, in_off: i64, r: &Requant) -> String {
    format!(
        "glow_clamp64({} + glow_rq((int64_t)({v}) - {in_off}, {}, {}), {}, {})",
        r.offset, r.m.mult, r.m.shift, r.lo, r.hi
    )
}

/// The vector addition `glow_qadd8` (kernels.c) for 8-bit operands of one
/// size, when its 32-bit split of the multipliers is exact: each multiplier
/// `m = mh 2^16 + ml` with `mh`, `ml` int16 and a shift in 17..=47. False
/// (nothing written) otherwise.
fn add_kernel(
    c: &mut KCtx,
    a: &glow_ir::quant::Add,
    [lt, rt, d]: [&Type; 3],
    l: &str,
    r: &str,
) -> Result<bool, BackendError> {
    use glow_ir::ElemKind::{Int8Q, UInt8Q};
    let byte = |t: &Type| matches!(t.elem, Int8Q { .. } | UInt8Q { .. });
    let signed = |t: &Type| u8::from(matches!(t.elem, Int8Q { .. }));
    let b = if a.sub { -a.m.b } else { a.m.b };
    let split = |m: i64| -> Option<(i64, i64)> {
        let lo = (m + (1 << 15)).rem_euclid(1 << 16) - (1 << 15);
        let hi = (m - lo) >> 16;
        (i16::try_from(hi).is_ok()).then_some((hi, lo))
    };
    let (Some((ah, al)), Some((bh, bl))) = (split(a.m.a), split(b)) else {
        return Ok(false);
    };
    if !(byte(lt) && byte(rt) && byte(d) && (17..=47).contains(&a.m.shift)) {
        return Ok(false);
    }
    c.rt.use_kernel(Kernel::QAdd);
    c.w.line(&format!(
        "static const glow_qadd_t prm = {{{}, {}, {}, {}, {}, {}, {}, {}, {ah}, {al}, {bh}, {bl}, {}, {}ll, {b}ll}};",
        signed(lt),
        signed(rt),
        signed(d),
        a.l_off,
        a.r_off,
        a.offset,
        a.lo,
        a.hi,
        a.m.shift,
        a.m.a
    ));
    c.w.line(&format!("glow_qadd8(Dest, {l}, {r}, {}u, &prm);", d.size()));
    Ok(true)
}

/// Element-wise add/sub/mul/max/min and `batchedadd` (the slice repeats).
pub fn binary(c: &mut KCtx) -> R {
    let op = q::Binary::of(c.f, c.id)?;
    let (l, r) = if c.inst.opcode == Opcode::BatchedAdd {
        ("Batch", "Slice")
    } else {
        ("LHS", "RHS")
    };
    let (d, lt, rt) = (c.ty("Dest")?, c.ty(l)?, c.ty(r)?);
    c.rt.use_kernel(Kernel::Quant);
    c.decl("Dest", ctype(d.elem))?;
    c.decl(l, ctype(lt.elem))?;
    c.decl(r, ctype(rt.elem))?;
    if let q::Binary::Add(a) = op {
        if rt.size() == d.size()
            && lt.size() == d.size()
            && add_kernel(c, &a, [&lt, &rt, &d], l, r)?
        {
            return Ok(());
        }
    }
    c.w.for_loop("i", d.size());
    let ri = if rt.size() == d.size() {
        "i".to_string()
    } else {
        format!("i % {}u", rt.size().max(1))
    };
    c.w.line(&format!("const int64_t a = {l}[i], b = {r}[{ri}];"));
    let e = match op {
        q::Binary::Add(a) => {
            let sign = if a.sub { "-" } else { "+" };
            format!(
                "glow_clamp64({} + glow_rq((a - {}) * {}ll {sign} (b - {}) * {}ll, 1, {}), {}, {})",
                a.offset, a.l_off, a.m.a, a.r_off, a.m.b, a.m.shift, a.lo, a.hi
            )
        }
        q::Binary::Mul(m) => format!(
            "glow_clamp64({} + glow_rq((a - {}) * (b - {}), {}, {}), {}, {})",
            m.out.offset, m.l_off, m.r_off, m.out.m.mult, m.out.m.shift, m.out.lo, m.out.hi
        ),
        q::Binary::MinMax { l, r, max } => {
            c.w.line(&format!(
                "const int64_t x = {};",
                rescale_expr("a", l.in_off, &l.out)
            ));
            c.w.line(&format!(
                "const int64_t y = {};",
                rescale_expr("b", r.in_off, &r.out)
            ));
            let cmp = if max { ">" } else { "<" };
            format!("(x {cmp} y ? x : y)")
        }
    };
    c.w.line(&format!("Dest[i] = ({}){e};", ctype(d.elem)));
    c.w.close();
    Ok(())
}

/// `relu`, `clip`, `rescalequantized`.
pub fn activation(c: &mut KCtx) -> R {
    if c.inst.operand_named("Scales").is_some() {
        return rescale_per_axis(c);
    }
    let a = q::Activation::of(c.f, c.id)?;
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.rt.use_kernel(Kernel::Quant);
    c.decl("Dest", ctype(d.elem))?;
    c.decl("Src", ctype(s.elem))?;
    c.w.for_loop("i", d.size());
    c.w.line(&format!(
        "Dest[i] = ({})glow_clamp64({}, {}, {});",
        ctype(d.elem),
        rescale_expr("Src[i]", a.rescale.in_off, &a.rescale.out),
        a.lo,
        a.hi
    ));
    c.w.close();
    Ok(())
}

/// Per-axis `rescalequantized` (the interpreter's `rescale_per_axis`): the
/// per-channel multipliers derived from the constant `Scales` and `Offsets`
/// when compiling.
fn rescale_per_axis(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let axis = c.m().get(m::AXIS)? as usize;
    let n = s.dims.get(axis).copied().unwrap_or(1).max(1);
    let inner = s.dims.iter().skip(axis + 1).product::<u64>().max(1);
    let (scales, offsets) = (const_f32s(c, "Scales")?, const_i32s(c, "Offsets")?);
    let r = q::rescale_per_axis(s.elem, &scales, &offsets, d.elem).map_err(|e| c.err(e))?;
    let Some(r0) = r.first().copied() else {
        return Err(c.err("no channels"));
    };
    c.rt.use_kernel(Kernel::Quant);
    c.decl("Dest", ctype(d.elem))?;
    c.decl("Src", ctype(s.elem))?;
    c.w.line(&format!(
        "static const int64_t ioff[{n}] = {{{}}}, rm[{n}] = {{{}}};",
        list(r.iter().map(|x| x.in_off)),
        list(r.iter().map(|x| x.out.m.mult))
    ));
    c.w.line(&format!(
        "static const int rs[{n}] = {{{}}};",
        list(r.iter().map(|x| x.out.m.shift))
    ));
    c.w.for_loop("i", d.size());
    c.w.line(&format!("const size_t ch = (i / {inner}u) % {n}u;"));
    c.w.line(&format!(
        "Dest[i] = ({})glow_clamp64({} + glow_rq((int64_t)Src[i] - ioff[ch], rm[ch], rs[ch]), {}, {});",
        ctype(d.elem),
        r0.out.offset,
        r0.out.lo,
        r0.out.hi
    ));
    c.w.close();
    Ok(())
}

/// `maxpool` and `avgpool` on quantized values.
pub fn pool(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let is_max = c.inst.opcode == Opcode::MaxPool;
    let include = c.inst.get(m::COUNT_INCLUDE_PADS).unwrap_or(true);
    let area = win.kernels[0] * win.kernels[1];
    let resc = q::Activation::of(c.f, c.id)?;
    let in_off = resc.rescale.in_off;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    c.rt.use_kernel(Kernel::Quant);
    c.decl("Dest", ctype(d.elem))?;
    c.decl("Src", ctype(s.elem))?;
    let avg = if is_max {
        None
    } else {
        let a = q::average(c.f, c.id, area)?;
        c.w.line(&format!(
            "static const int64_t am[{area}] = {{{}}};",
            list(a.table.iter().map(|r| r.m.mult))
        ));
        c.w.line(&format!(
            "static const int as[{area}] = {{{}}};",
            list(a.table.iter().map(|r| r.m.shift))
        ));
        Some(a)
    };
    if is_max && !win.nchw && ch <= 4096 {
        return max_pool_nhwc(c, &win, &resc, [n, ch, h, w], [oh, ow], (&s, &d));
    }
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.for_loop("ch", ch);
    c.w.line("int64_t acc = INT64_MIN, sum = 0;");
    c.w.line("size_t cnt = 0;");
    open_window(c, &win, h, w);
    let src = format!(
        "Src[{}]",
        idx(
            ["n", "ch", "(size_t)ih", "(size_t)iw"],
            win.act_strides(&s.dims)
        )
    );
    c.w.line(&format!("const int64_t v = {src};"));
    c.w.line("if (v > acc) acc = v;");
    c.w.line(&format!("sum += v - {in_off};"));
    c.w.line("cnt++;");
    c.w.close();
    c.w.close();
    let dest = format!(
        "Dest[{}]",
        idx(["n", "ch", "oh", "ow"], win.act_strides(&d.dims))
    );
    let e = match &avg {
        None => format!(
            "glow_clamp64({}, {}, {})",
            rescale_expr(
                &format!("(cnt ? acc : {in_off})"),
                in_off,
                &resc.rescale.out
            ),
            resc.lo,
            resc.hi
        ),
        Some(a) => {
            let r = &a.table[0];
            let count = if include {
                format!("{area}u")
            } else {
                "cnt".to_string()
            };
            c.w.line(&format!(
                "const size_t k = ({count} < 1u ? 1u : {count}) - 1u;"
            ));
            format!(
                "glow_clamp64({} + glow_rq(sum, am[k], as[k]), {}, {})",
                r.offset, r.lo, r.hi
            )
        }
    };
    c.w.line(&format!("{dest} = ({}){e};", ctype(d.elem)));
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}

/// `intlookuptable`: `Dest[i] = Mapping[Src[i] - lowest]`.
pub fn lookup_table(c: &mut KCtx) -> R {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let lowest = s.elem.quant_range().ok_or_else(|| c.unsupported(&s))?.0;
    c.decl("Dest", ctype(d.elem))?;
    c.decl("Src", ctype(s.elem))?;
    c.decl("Mapping", ctype(d.elem))?;
    c.w.for_loop("i", d.size());
    c.w.line(&format!("Dest[i] = Mapping[(int)Src[i] - ({lowest})];"));
    c.w.close();
    Ok(())
}

/// NHWC `maxpool`: the channels of a pixel are contiguous, so the window's
/// maximum is taken a row of channels at a time (loops the compiler
/// vectorizes), then each channel is rescaled as the loop nest does; a
/// rescale of ratio 1 (`M = 2^s`) is the exact `v + (Oy - Ox)`, clamped.
fn max_pool_nhwc(
    c: &mut KCtx,
    win: &Window,
    resc: &q::Activation,
    [n, ch, h, w]: [u64; 4],
    [oh, ow]: [u64; 2],
    (s, d): (&Type, &Type),
) -> R {
    let t = ctype(s.elem);
    let in_off = resc.rescale.in_off;
    let out = &resc.rescale.out;
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.line(&format!("{t} acc[{ch}];"));
    c.w.line("size_t cnt = 0;");
    open_window(c, win, h, w);
    let src = idx(
        ["n", "0", "(size_t)ih", "(size_t)iw"],
        win.act_strides(&s.dims),
    );
    c.w.line(&format!("const {t} *x = Src + {src};"));
    c.w.line(&format!(
        "if (cnt++ == 0) memcpy(acc, x, sizeof acc); else for (size_t ch = 0; ch < {ch}u; ch++) acc[ch] = x[ch] > acc[ch] ? x[ch] : acc[ch];"
    ));
    c.w.close();
    c.w.close();
    let dest = idx(["n", "0", "oh", "ow"], win.act_strides(&d.dims));
    c.w.line(&format!("{} *o = Dest + {dest};", ctype(d.elem)));
    c.w.for_loop("ch", ch);
    c.w.line(&format!(
        "const int64_t v = cnt ? (int64_t)acc[ch] : {in_off};"
    ));
    let e = if out.m.shift >= 1 && out.m.mult == 1i64 << out.m.shift {
        format!(
            "glow_clamp64(glow_clamp64(v + {}, {}, {}), {}, {})",
            out.offset - in_off,
            out.lo,
            out.hi,
            resc.lo,
            resc.hi
        )
    } else {
        format!(
            "glow_clamp64({}, {}, {})",
            rescale_expr("v", in_off, out),
            resc.lo,
            resc.hi
        )
    };
    c.w.line(&format!("o[ch] = ({}){e};", ctype(d.elem)));
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}
