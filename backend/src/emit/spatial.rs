//! C kernels of `convolution` (groups, dilation, pads, NHWC/NCHW, fused
//! activation), `convtranspose`, `maxpool` and `avgpool` (CountIncludePads,
//! dilation). Window positions outside the input are skipped; sums run over
//! (kh, kw, channel) in that order, one fused multiply-add per product, as
//! in the interpreter.

use super::runtime::{Kernel, PackKind};
use super::KCtx;
use crate::error::BackendError;
use crate::ops::c_float;
use glow_ir::activation::FusedActivation;
use glow_ir::member as m;
use glow_ir::Type;

/// A `convolution3d`'s geometry (NTHWC), read once for both engines.
#[derive(Clone, Debug)]
pub struct Conv3d {
    /// `Src`'s [N, T, H, W, C].
    pub input: [u64; 5],
    /// `Dest`'s [N, T, H, W, OC].
    pub output: [u64; 5],
    pub kernels: [u64; 3],
    pub strides: [u64; 3],
    /// The pads before each axis (Glow's near, top, left).
    pub before: [u64; 3],
    pub group: u64,
}

impl Conv3d {
    /// `None` when a member or rank is malformed (the verifier reported it).
    pub fn read(inst: &glow_ir::InstData, dest: &Type, src: &Type) -> Option<Conv3d> {
        let three = |key: glow_ir::member::Key<glow_ir::member::Ints>| -> Option<[u64; 3]> {
            match inst.get(key)? {
                &[a, b, c] if a > 0 && b > 0 && c > 0 => Some([a as u64, b as u64, c as u64]),
                _ => None,
            }
        };
        let five = |t: &Type| -> Option<[u64; 5]> { t.dims.as_slice().try_into().ok() };
        let before = match inst.get(m::PADS)? {
            p if p.len() == 6 && p.iter().all(|&x| x >= 0) => [p[0], p[2], p[4]].map(|x| x as u64),
            _ => return None,
        };
        let group = inst.get(m::GROUP).filter(|&g| g > 0)? as u64;
        Some(Conv3d {
            input: five(src)?,
            output: five(dest)?,
            kernels: three(m::KERNELS)?,
            strides: three(m::STRIDES)?,
            before,
            group,
        })
    }
}

/// The window members, read once for both engines.
#[derive(Clone, Debug)]
pub struct Window {
    pub kernels: [u64; 2],
    pub strides: [u64; 2],
    /// top, left, bottom, right
    pub pads: [u64; 4],
    pub dilation: [u64; 2],
    pub nchw: bool,
}

impl Window {
    pub fn read(inst: &glow_ir::InstData) -> Option<Window> {
        let two = |key: glow_ir::member::Key<glow_ir::member::Ints>, d: u64| -> Option<[u64; 2]> {
            match inst.get(key) {
                Some(v) if v.len() == 2 => Some([v[0].max(0) as u64, v[1].max(0) as u64]),
                Some(_) => None,
                None => Some([d, d]),
            }
        };
        let pads = match inst.get(m::PADS) {
            Some(v) if v.len() == 4 => [v[0], v[1], v[2], v[3]].map(|p| p.max(0) as u64),
            Some(_) => return None,
            None => [0; 4],
        };
        Some(Window {
            kernels: two(m::KERNELS, 1)?,
            strides: two(m::STRIDES, 1)?,
            pads,
            dilation: two(m::DILATION, 1)?,
            nchw: inst.get(m::LAYOUT) == Some("NCHW"),
        })
    }

    /// (N, C, H, W) of a 4-D activation.
    pub fn nchw_of(&self, dims: &[u64]) -> [u64; 4] {
        if self.nchw {
            [dims[0], dims[1], dims[2], dims[3]]
        } else {
            [dims[0], dims[3], dims[1], dims[2]]
        }
    }

    /// Strides of (N, C, H, W) in a row-major activation of `dims`.
    pub fn act_strides(&self, dims: &[u64]) -> [u64; 4] {
        let [_, c, h, w] = self.nchw_of(dims);
        if self.nchw {
            [c * h * w, h * w, w, 1]
        } else {
            [h * w * c, 1, w * c, c]
        }
    }
}

pub(super) fn idx(vars: [&str; 4], strides: [u64; 4]) -> String {
    let t: Vec<String> = vars
        .iter()
        .zip(strides)
        .map(|(v, s)| format!("{v} * {s}u"))
        .collect();
    t.join(" + ")
}

/// Emits the window loops: `ih`/`iw` as signed positions, skipping those
/// outside the input; the caller writes the body and closes two loops.
pub(super) fn open_window(c: &mut KCtx, win: &Window, h: u64, w: u64) {
    let [pt, pl, _, _] = win.pads;
    c.w.for_loop("kh", win.kernels[0]);
    c.w.line(&format!(
        "long long ih = (long long)(oh * {}u + kh * {}u) - {pt}ll;",
        win.strides[0], win.dilation[0]
    ));
    c.w.line(&format!("if (ih < 0 || ih >= {h}ll) continue;"));
    c.w.for_loop("kw", win.kernels[1]);
    c.w.line(&format!(
        "long long iw = (long long)(ow * {}u + kw * {}u) - {pl}ll;",
        win.strides[1], win.dilation[1]
    ));
    c.w.line(&format!("if (iw < 0 || iw >= {w}ll) continue;"));
}

/// The fused activation as the kernels' (code, arg0, arg1), the values
/// the interpreter applies.
pub fn act_code(c: &KCtx) -> Result<(u32, f32, f32), BackendError> {
    let (act, args) = c.inst.fused_activation();
    let a = FusedActivation::from_name(act)
        .ok_or_else(|| c.err(format!("unknown fused activation {act}")))?;
    let (a0, a1) = a.resolve(args);
    Ok((a.code(), a0, a1))
}

/// Convolution through the shared kernels: packed panels (depthwise packing
/// when each group has one input and one output channel), at emit time for
/// a constant filter, on each call for a run-time one.
pub fn convolution(c: &mut KCtx) -> Result<(), BackendError> {
    let names = ["Dest", "Src", "Filter", "Bias"];
    c.require_f32s(&names)?;
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let group = c.member(m::GROUP)?.max(1) as u64;
    let (act, a0, a1) = act_code(c)?;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, oc, oh, ow] = win.nchw_of(&d.dims);
    let (cg, ocg) = (ch / group, oc / group);
    let [kh, kw] = win.kernels;
    // Filter strides over (oc, kh, kw, cg).
    let fs = if win.nchw {
        [cg * kh * kw, kw, 1, kh * kw]
    } else {
        [kh * kw * cg, kw * cg, cg, 1]
    };
    let ss = win.act_strides(&s.dims);
    let ds = win.act_strides(&d.dims);
    for nm in names {
        c.decl(nm, "float")?;
    }
    let res = if c.inst.operand_named("Residual").is_some() {
        let t = c.ty("Residual")?;
        c.require_f32(&t)?;
        c.decl("Residual", "float")?;
        "Residual"
    } else {
        "0"
    };
    let list = |v: &[u64]| {
        v.iter()
            .map(|x| format!("{x}u"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let shape = list(&[
        n,
        h,
        w,
        ch,
        oh,
        ow,
        oc,
        kh,
        kw,
        win.strides[0],
        win.strides[1],
        win.pads[0],
        win.pads[1],
        win.dilation[0],
        win.dilation[1],
        group,
        ss[0],
        ss[1],
        ss[2],
        ss[3],
        ds[0],
        ds[1],
        ds[2],
        ds[3],
    ]);
    c.w.line(&format!(
        "static const glow_conv_t shape = {{{shape}, {act}, {}, {}}};",
        c_float(a0),
        c_float(a1)
    ));
    let (kernel, fname, kind) = if cg == 1 && ocg == 1 {
        (
            Kernel::Depthwise,
            "glow_depthwise",
            PackKind::Depthwise { c: oc, kh, kw, fs },
        )
    } else {
        (
            Kernel::Conv,
            "glow_conv",
            PackKind::ConvPanels {
                group,
                ocg,
                kh,
                kw,
                cg,
                fs,
            },
        )
    };
    c.rt.use_kernel(kernel);
    // The zeros padding reads: one pixel's channels of the group (a whole
    // window row of them for the conv kernel's row runs).
    c.rt.need_zeros(if kernel == Kernel::Conv { kw * cg } else { ch });
    match c.const_weight("Filter") {
        Some(wi) => {
            let at = c.rt.packed(wi, kind);
            c.w.line("(void)Filter;");
            let place = c.mem.weight_place(wi);
            let fl = c.ty("Filter")?;
            let finite = c.rt.finite(wi, place.offset, fl.size());
            c.w.line(&format!(
                "{fname}_f32(Dest, Src, (const float *)(constantWeight + {at}u), Bias, {res}, &shape, {});",
                u8::from(finite)
            ));
        }
        None => {
            // A run-time filter (a training step's weights) is packed on
            // each call into a buffer of the heap, so the packed kernels
            // run it; without the memory, the reference loop nest.
            c.rt.use_kernel(Kernel::ConvRef);
            c.rt.use_kernel(if kernel == Kernel::Conv {
                Kernel::ConvPack
            } else {
                Kernel::DepthwisePack
            });
            c.w.line(&format!("static const size_t fs[4] = {{{}}};", list(&fs)));
            c.w.line(&format!(
                "float *pk = (float *)malloc({}u * sizeof(float));",
                kind.len().max(1)
            ));
            c.w.open("if (pk)");
            c.w.line(&format!(
                "const int finite = {fname}_pack_f32(pk, Filter, &shape, fs);"
            ));
            c.w.line(&format!(
                "{fname}_f32(Dest, Src, pk, Bias, {res}, &shape, finite);"
            ));
            c.w.line("free(pk);");
            c.w.close();
            c.w.open("else");
            c.w.line(&format!(
                "glow_conv_ref_f32(Dest, Src, Filter, Bias, {res}, &shape, fs);"
            ));
            c.w.close();
        }
    }
    Ok(())
}

/// `convtranspose` (NHWC) in gather form: each output element sums, over
/// (kh, kw, input channel of its group) in that order, the inputs whose
/// scattered window covers it (`iy * stride + kh * dilation == oy + pad`),
/// from 0.0f, then adds the bias. Output rows past the full extent
/// (`OutputPadding`) get the bias alone.
pub fn conv_transpose(c: &mut KCtx) -> Result<(), BackendError> {
    let names = ["Dest", "Src", "Filter", "Bias"];
    c.require_f32s(&names)?;
    let (d, s, f) = (c.ty("Dest")?, c.ty("Src")?, c.ty("Filter")?);
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let group = c.member(m::GROUP)?.max(1) as u64;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, oc, oh, ow] = win.nchw_of(&d.dims);
    let (cg, ocg) = (ch / group, f.dims[3]);
    let [kh, kw] = win.kernels;
    let fs = [kh * kw * ocg, kw * ocg, ocg];
    for nm in names {
        c.decl(nm, "float")?;
    }
    c.w.for_loop("n", n);
    c.w.for_loop("oy", oh);
    c.w.for_loop("ox", ow);
    c.w.for_loop("o", oc);
    c.w.line(&format!("const size_t g = o / {ocg}u, og = o % {ocg}u;"));
    c.w.line("float sum = 0.0f;");
    for (a, (k, lim)) in [(kh, h), (kw, w)].into_iter().enumerate() {
        let (ky, out, fy, iy) = [("ky", "oy", "fy", "iy"), ("kx", "ox", "fx", "ix")][a];
        c.w.for_loop(ky, k);
        c.w.line(&format!(
            "const long long {fy} = (long long){out} + {}ll - (long long)({ky} * {}u);",
            win.pads[a], win.dilation[a]
        ));
        c.w.line(&format!(
            "if ({fy} < 0 || {fy} % {}ll != 0) continue;",
            win.strides[a]
        ));
        c.w.line(&format!(
            "const size_t {iy} = (size_t)({fy} / {}ll);",
            win.strides[a]
        ));
        c.w.line(&format!("if ({iy} >= {lim}u) continue;"));
    }
    c.w.for_loop("ci", cg);
    c.w.line(&format!("const size_t ic = g * {cg}u + ci;"));
    c.w.line(&format!(
        "sum = fmaf(Src[n * {}u + iy * {}u + ix * {ch}u + ic], Filter[ic * {}u + ky * {}u + kx * {}u + og], sum);",
        h * w * ch,
        w * ch,
        fs[0],
        fs[1],
        fs[2]
    ));
    for _ in 0..3 {
        c.w.close();
    }
    c.w.line(&format!(
        "Dest[n * {}u + oy * {}u + ox * {oc}u + o] = sum + Bias[o];",
        oh * ow * oc,
        ow * oc
    ));
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}

/// `maxpool` (first valid element, then `x > max`; 0 when the window is all
/// padding) and `avgpool` (sum / kernel area, or / valid count without
/// `CountIncludePads`; 0 for an empty count).
pub fn pool(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    c.require_f32(&d)?;
    c.require_f32(&s)?;
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let is_max = c.inst.opcode == glow_ir::Opcode::MaxPool;
    let include = c.inst.get(m::COUNT_INCLUDE_PADS).unwrap_or(true);
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    if !win.nchw && ch <= 4096 {
        pool_nhwc(c, &win, [n, ch, h, w], [oh, ow], (&s, &d), is_max, include);
        return Ok(());
    }
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.for_loop("ch", ch);
    if is_max {
        c.w.line("int first = 1;");
        c.w.line("float acc = 0.0f;");
    } else {
        c.w.line("float acc = 0.0f;");
        c.w.line("size_t cnt = 0;");
    }
    open_window(c, &win, h, w);
    let src = format!(
        "Src[{}]",
        idx(
            ["n", "ch", "(size_t)ih", "(size_t)iw"],
            win.act_strides(&s.dims)
        )
    );
    if is_max {
        c.w.line(&format!("float x = {src};"));
        c.w.line("if (first || x > acc) { acc = x; first = 0; }");
    } else {
        c.w.line(&format!("acc += {src};"));
        c.w.line("cnt++;");
    }
    c.w.close();
    c.w.close();
    let dest = format!(
        "Dest[{}]",
        idx(["n", "ch", "oh", "ow"], win.act_strides(&d.dims))
    );
    if is_max {
        c.w.line(&format!("{dest} = acc;"));
    } else if include {
        let area = c_float((win.kernels[0] * win.kernels[1]) as f32);
        c.w.line("(void)cnt;");
        c.w.line(&format!("{dest} = acc / {area};"));
    } else {
        c.w.line(&format!("{dest} = cnt ? acc / (float)cnt : 0.0f;"));
    }
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}

/// NHWC `pool`: a pixel's channels are contiguous, so the window is taken a
/// row of channels at a time (loops the compiler vectorizes), each channel's
/// elements in the loop nest's order: the first valid one, then `x > max`
/// (`vmaxps`'s own rule), or the sum from `0.0f`.
fn pool_nhwc(
    c: &mut KCtx,
    win: &Window,
    [n, ch, h, w]: [u64; 4],
    [oh, ow]: [u64; 2],
    (s, d): (&Type, &Type),
    is_max: bool,
    include: bool,
) {
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.line(&format!("float acc[{ch}];"));
    c.w.line("size_t cnt = 0;");
    if !is_max {
        c.w.line("memset(acc, 0, sizeof acc);");
    }
    open_window(c, win, h, w);
    let src = idx(
        ["n", "0", "(size_t)ih", "(size_t)iw"],
        win.act_strides(&s.dims),
    );
    c.w.line(&format!("const float *x = Src + {src};"));
    if is_max {
        c.w.line(&format!(
            "if (cnt++ == 0) memcpy(acc, x, sizeof acc); else for (size_t ch = 0; ch < {ch}u; ch++) acc[ch] = x[ch] > acc[ch] ? x[ch] : acc[ch];"
        ));
    } else {
        c.w.line("cnt++;");
        c.w.line(&format!(
            "for (size_t ch = 0; ch < {ch}u; ch++) acc[ch] += x[ch];"
        ));
    }
    c.w.close();
    c.w.close();
    let dest = idx(["n", "0", "oh", "ow"], win.act_strides(&d.dims));
    c.w.line(&format!("float *o = Dest + {dest};"));
    c.w.for_loop("ch", ch);
    if is_max {
        c.w.line("o[ch] = cnt ? acc[ch] : 0.0f;");
    } else if include {
        let area = c_float((win.kernels[0] * win.kernels[1]) as f32);
        c.w.line(&format!("o[ch] = acc[ch] / {area};"));
    } else {
        c.w.line("o[ch] = cnt ? acc[ch] / (float)cnt : 0.0f;");
    }
    for _ in 0..4 {
        c.w.close();
    }
}

/// `convolution3d` (float, NTHWC): the reference loop nest, per output
/// element from `0.0f` over (kt, kh, kw, input channel of the group) with
/// one `fmaf` per product, window positions outside the input skipped, then
/// `+ Bias`; `interp` computes in this order.
pub fn convolution3d(c: &mut KCtx) -> Result<(), BackendError> {
    c.require_f32s(&["Dest", "Src", "Filter", "Bias"])?;
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let g = Conv3d::read(c.inst, &d, &s).ok_or_else(|| c.err("malformed convolution3d members"))?;
    let [n, it, ih, iw, ic] = g.input;
    let [_, ot, oh, ow, oc] = g.output;
    let [kt, kh, kw] = g.kernels;
    let (cg, ocg) = (ic / g.group, oc / g.group);
    for name in ["Dest", "Src", "Filter", "Bias"] {
        c.decl(name, "float")?;
    }
    c.w.for_loop("b", n);
    c.w.for_loop("at", ot);
    c.w.for_loop("ay", oh);
    c.w.for_loop("ax", ow);
    c.w.for_loop("o", oc);
    c.w.line(&format!("const size_t g = o / {ocg}u;"));
    c.w.line("float sum = 0.0f;");
    let axes = [
        ("ft", "pt", "at", kt, it),
        ("fy", "py", "ay", kh, ih),
        ("fx", "px", "ax", kw, iw),
    ];
    for (a, (f, p, o, k, lim)) in axes.into_iter().enumerate() {
        c.w.for_loop(f, k);
        c.w.line(&format!(
            "const int64_t {p} = (int64_t)({o} * {}u + {f}) - {};",
            g.strides[a], g.before[a]
        ));
        c.w.line(&format!("if ({p} < 0 || {p} >= {lim}) continue;"));
    }
    c.w.line(&format!(
        "const size_t si = ((((b * {it}u + (size_t)pt) * {ih}u + (size_t)py) * {iw}u + (size_t)px) * {ic}u) + g * {cg}u;"
    ));
    c.w.line(&format!(
        "const size_t fi = (((o * {kt}u + ft) * {kh}u + fy) * {kw}u + fx) * {cg}u;"
    ));
    c.w.for_loop("ci", cg);
    c.w.line("sum = fmaf(Src[si + ci], Filter[fi + ci], sum);");
    super::close_nest(c.w, 4);
    c.w.line(&format!(
        "Dest[(((b * {ot}u + at) * {oh}u + ay) * {ow}u + ax) * {oc}u + o] = sum + Bias[o];"
    ));
    super::close_nest(c.w, 5);
    Ok(())
}
