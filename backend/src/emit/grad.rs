//! C kernels of the spatial gradients (docs/training.md, "Spatial
//! gradients"): `convolutiongrad`, `maxpoolwithargmax`,
//! `maxpoolwithargmaxgrad` and `avgpoolgrad`. Plain loop nests with the
//! shapes as constants, summing in exactly the order the interpreter's
//! `interp/grad.rs` does.

use super::runtime::Kernel;
use super::spatial::{idx, open_window, Window};
use super::KCtx;
use crate::error::BackendError;
use crate::ops::c_float;
use glow_ir::member as m;

/// The index math of `convolutiongrad`, read once for both engines.
#[derive(Clone, Debug)]
pub struct ConvGradGeom {
    pub win: Window,
    /// (N, C, H, W) of `Src`.
    pub src: [u64; 4],
    /// (N, OC, OH, OW) of `DestGrad`.
    pub dest: [u64; 4],
    /// Channels per group: input, output.
    pub cg: u64,
    pub ocg: u64,
    /// Element strides of (N, C, H, W) in `Src` and of (N, OC, OH, OW) in
    /// `DestGrad`, and of (OC, KH, KW, C/Group) in `Filter`.
    pub ss: [u64; 4],
    pub ds: [u64; 4],
    pub fs: [u64; 4],
}

impl ConvGradGeom {
    pub fn new(win: Window, src: &[u64], dest_grad: &[u64], group: u64) -> ConvGradGeom {
        let s = win.nchw_of(src);
        let d = win.nchw_of(dest_grad);
        let group = group.max(1);
        // A zero count keeps the divisions by it defined; the verifier
        // never lets one through.
        let (cg, ocg) = ((s[1] / group).max(1), (d[1] / group).max(1));
        let [kh, kw] = win.kernels;
        let fs = if win.nchw {
            [cg * kh * kw, kw, 1, kh * kw]
        } else {
            [kh * kw * cg, kw * cg, cg, 1]
        };
        ConvGradGeom {
            ss: win.act_strides(src),
            ds: win.act_strides(dest_grad),
            fs,
            win,
            src: s,
            dest: d,
            cg,
            ocg,
        }
    }

    /// The output position along axis `a` (0: height, 1: width) whose
    /// window tap `k` reads input position `i`, if there is one.
    pub fn tap(&self, i: u64, k: u64, a: usize) -> Option<u64> {
        let w = &self.win;
        let full = i as i128 + w.pads[a] as i128 - (k as i128) * w.dilation[a] as i128;
        let st = w.strides[a].max(1) as i128;
        if full < 0 || full % st != 0 {
            return None;
        }
        let o = (full / st) as u64;
        (o < self.dest[2 + a]).then_some(o)
    }
}

fn geom(c: &KCtx) -> Result<ConvGradGeom, BackendError> {
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let group = c.member(m::GROUP)?.max(1) as u64;
    let (s, d) = (c.ty("Src")?, c.ty("DestGrad")?);
    Ok(ConvGradGeom::new(win, &s.dims, &d.dims, group))
}

/// Sums a `convolutiongrad` loop keeps at once: the channels are taken in
/// chunks of at most this many, so each chunk's accumulators stay in L1
/// (or registers) across the terms instead of streaming a whole row of
/// sums per term (a 512-channel layer's gradients 42 -> 12 ms).
const MAX_LANES: u64 = 128;

/// Opens `b`, `y` (with `ih`), `x` (with `iw`): FilterGrad's terms in
/// order, taps outside Src skipped (three loops to close).
fn filter_taps(c: &mut KCtx, g: &ConvGradGeom) {
    let [n, _, h, w] = g.src;
    let [_, _, oh, ow] = g.dest;
    let (st, dil, pads) = (g.win.strides, g.win.dilation, g.win.pads);
    c.w.for_loop("b", n);
    c.w.for_loop("y", oh);
    c.w.line(&format!(
        "const long long ih = (long long)(y * {}u + ky * {}u) - {}ll;",
        st[0], dil[0], pads[0]
    ));
    c.w.line(&format!("if (ih < 0 || ih >= {h}ll) continue;"));
    c.w.for_loop("x", ow);
    c.w.line(&format!(
        "const long long iw = (long long)(x * {}u + kx * {}u) - {}ll;",
        st[1], dil[1], pads[1]
    ));
    c.w.line(&format!("if (iw < 0 || iw >= {w}ll) continue;"));
}

/// Opens `ky` (with `y`) and `kx` (with `x`): the taps whose output position
/// reads input (ih, iw), in SrcGrad's order (two loops to close).
fn src_taps(c: &mut KCtx, g: &ConvGradGeom) {
    let [_, _, oh, ow] = g.dest;
    let [kh, kw] = g.win.kernels;
    let (st, dil, pads) = (g.win.strides, g.win.dilation, g.win.pads);
    for (a, (k, lim)) in [(kh, oh), (kw, ow)].into_iter().enumerate() {
        let (kv, inp, full, out) = [("ky", "ih", "fy", "y"), ("kx", "iw", "fx", "x")][a];
        c.w.for_loop(kv, k);
        c.w.line(&format!(
            "const long long {full} = (long long){inp} + {}ll - (long long)({kv} * {}u);",
            pads[a], dil[a]
        ));
        c.w.line(&format!(
            "if ({full} < 0 || {full} % {}ll != 0) continue;",
            st[a]
        ));
        c.w.line(&format!(
            "const size_t {out} = (size_t)({full} / {}ll);",
            st[a]
        ));
        c.w.line(&format!("if ({out} >= {lim}u) continue;"));
    }
}

/// Opens the chunk loop over `count` channels (`i0`, `ni` of them from
/// it) and zeroes its accumulators `acc` (one loop to close).
fn open_chunk(c: &mut KCtx, count: u64) {
    let lanes = count.clamp(1, MAX_LANES);
    c.w.open(&format!(
        "for (size_t i0 = 0; i0 < {count}u; i0 += {lanes}u)"
    ));
    c.w.line(&format!(
        "const size_t ni = {count}u - i0 < {lanes}u ? {count}u - i0 : {lanes}u;"
    ));
    c.w.line(&format!("float acc[{lanes}];"));
    c.w.line("for (size_t i = 0; i < ni; i++) acc[i] = 0.0f;");
}

/// `convolutiongrad`: each gradient in gather form, every element written
/// once, each sum in the order docs/training.md gives. The loop over
/// channels (a group's input channels for the two products, all channels
/// of a depthwise layer, the output channels for the bias) is innermost, one
/// accumulator per channel, so the compiler vectorizes across independent
/// sums without reassociating any.
pub fn convolution_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let names = [
        "Src",
        "Filter",
        "DestGrad",
        "SrcGrad",
        "FilterGrad",
        "BiasGrad",
    ];
    c.require_f32s(&names)?;
    let g = geom(c)?;
    for n in names {
        c.decl(n, "float")?;
    }
    let [n, ch, h, w] = g.src;
    let [_, oc, oh, ow] = g.dest;
    let [kh, kw] = g.win.kernels;
    let (cg, ocg) = (g.cg, g.ocg);
    let dest_at = |o: &str| format!("DestGrad[{}]", idx(["b", o, "y", "x"], g.ds));
    // A depthwise layer's sums run across all channels, any other's across
    // a group's input channels: `c0` is the first channel of the sums'
    // group (input and output channel alike for depthwise), `ic` the chunk's
    // channel.
    let depthwise = cg == 1 && ocg == 1;
    let (lanes, o_of, filter_ic) = if depthwise {
        (ch, "(i0 + i)", "0")
    } else {
        (cg, "o", "(i0 + i)")
    };
    // BiasGrad[o]: over (n, oh, ow).
    open_chunk(c, oc);
    c.w.for_loop("b", n);
    c.w.for_loop("y", oh);
    c.w.for_loop("x", ow);
    c.w.line(&format!(
        "for (size_t i = 0; i < ni; i++) acc[i] += {};",
        dest_at("(i0 + i)")
    ));
    for _ in 0..3 {
        c.w.close();
    }
    c.w.line("for (size_t i = 0; i < ni; i++) BiasGrad[i0 + i] = acc[i];");
    c.w.close();
    // FilterGrad[o, kh, kw, ic]: over (n, oh, ow), taps outside Src skipped.
    // With AVX-512 and the channels contiguous, register-blocked kernels
    // (the same terms in the same order per element); SrcGrad's also needs
    // the filter's channels contiguous and a vector's worth of them.
    let blocked = !depthwise && g.ss[1] == 1 && g.ds[1] == 1;
    // `ComputeSrcGrad: false`: SrcGrad is zeros (an input's gradient).
    let compute_src = c.inst.get(m::COMPUTE_SRC_GRAD).unwrap_or(true);
    // An @inout SrcGrad gets the sums added: `prev + sum`, as the
    // `elementadd` of a separate gradient would.
    let accumulate = c.inst.operands[3].kind == glow_ir::OperandKind::InOut;
    let src_blocked = compute_src && blocked && g.fs[3] == 1 && cg >= 16;
    if blocked {
        c.rt.use_kernel(Kernel::ConvGrad);
        let win = &g.win;
        let fields = [
            n,
            h,
            w,
            oh,
            ow,
            kh,
            kw,
            win.strides[0],
            win.strides[1],
            win.dilation[0],
            win.dilation[1],
            win.pads[0],
            win.pads[1],
            ch / cg,
            cg,
            ocg,
            g.ss[0],
            g.ss[2],
            g.ss[3],
            g.ds[0],
            g.ds[2],
            g.ds[3],
            g.fs[0],
            g.fs[1],
            g.fs[2],
            g.fs[3],
            u64::from(accumulate),
        ];
        let list: Vec<String> = fields.iter().map(|v| format!("{v}u")).collect();
        c.w.line("#if defined(GLOW_VEC16)");
        c.w.line(&format!(
            "static const glow_cg_t cgp = {{{}}};",
            list.join(", ")
        ));
        c.w.line("glow_cg_filter_f32(FilterGrad, Src, DestGrad, &cgp);");
        if src_blocked {
            c.w.line("glow_cg_src_f32(SrcGrad, DestGrad, Filter, &cgp);");
        }
        c.w.line("#else");
    }
    let groups_o = if depthwise { 1 } else { oc };
    c.w.for_loop("o", groups_o);
    let src_ch = if depthwise {
        "(i0 + i)".to_string()
    } else {
        format!("((o / {ocg}u) * {cg}u + i0 + i)")
    };
    c.w.for_loop("ky", kh);
    c.w.for_loop("kx", kw);
    open_chunk(c, lanes);
    filter_taps(c, &g);
    c.w.line(&format!(
        "for (size_t i = 0; i < ni; i++) acc[i] = fmaf({}, Src[{}], acc[i]);",
        dest_at(o_of),
        idx(["b", &src_ch, "(size_t)ih", "(size_t)iw"], g.ss)
    ));
    for _ in 0..3 {
        c.w.close();
    }
    c.w.line(&format!(
        "for (size_t i = 0; i < ni; i++) FilterGrad[{}] = acc[i];",
        idx([o_of, "ky", "kx", filter_ic], g.fs)
    ));
    for _ in 0..4 {
        c.w.close();
    }
    if blocked && !src_blocked {
        c.w.line("#endif");
    }
    if !compute_src {
        c.w.line("(void)Filter;");
        if accumulate {
            return Ok(());
        }
        c.w.line(&format!(
            "for (size_t i = 0; i < {}u; i++) SrcGrad[i] = 0.0f;",
            n * ch * h * w
        ));
        return Ok(());
    }
    // SrcGrad[n, c, ih, iw]: over (kh, kw, output channel of c's group), the
    // taps whose output position reads (ih, iw).
    c.w.for_loop("b", n);
    c.w.for_loop("g", if depthwise { 1 } else { ch / cg });
    c.w.for_loop("ih", h);
    c.w.for_loop("iw", w);
    open_chunk(c, lanes);
    src_taps(c, &g);
    c.w.for_loop("og", if depthwise { 1 } else { ocg });
    let (o_at, in_ch) = if depthwise {
        ("(i0 + i)".to_string(), "(i0 + i)".to_string())
    } else {
        c.w.line(&format!("const size_t o = g * {ocg}u + og;"));
        ("o".to_string(), format!("(g * {cg}u + i0 + i)"))
    };
    c.w.line(&format!(
        "for (size_t i = 0; i < ni; i++) acc[i] = fmaf({}, Filter[{}], acc[i]);",
        dest_at(&o_at),
        idx([&o_at, "ky", "kx", filter_ic], g.fs)
    ));
    for _ in 0..3 {
        c.w.close();
    }
    let at = idx(["b", &in_ch, "ih", "iw"], g.ss);
    let prev = if accumulate {
        format!("SrcGrad[{at}] + ")
    } else {
        String::new()
    };
    c.w.line(&format!(
        "for (size_t i = 0; i < ni; i++) SrcGrad[{at}] = {prev}acc[i];"
    ));
    for _ in 0..5 {
        c.w.close();
    }
    if src_blocked {
        c.w.line("#endif");
    }
    Ok(())
}

/// `maxpoolwithargmax`: `maxpool`'s value (first in-bounds element, then
/// any larger one; 0 for a window all in padding) and the flat index of
/// that element in `Src` (-1 for a window all in padding).
pub fn max_pool_with_argmax(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s, am) = (c.ty("Dest")?, c.ty("Src")?, c.ty("Argmax")?);
    c.require_f32(&d)?;
    c.require_f32(&s)?;
    let at_ty = argmax_c_type(c, &am)?;
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    c.decl("Dest", "float")?;
    c.decl("Src", "float")?;
    c.decl("Argmax", at_ty)?;
    c.w.for_loop("n", n);
    c.w.for_loop("oh", oh);
    c.w.for_loop("ow", ow);
    c.w.for_loop("ch", ch);
    // `at < 0` marks the first element: GCC 12 at -O3 -march=native
    // vectorized a separate `first` flag wrongly (engines.rs caught it).
    c.w.line("float acc = 0.0f;");
    c.w.line("long long at = -1;");
    open_window(c, &win, h, w);
    c.w.line(&format!(
        "const size_t i = {};",
        idx(
            ["n", "ch", "(size_t)ih", "(size_t)iw"],
            win.act_strides(&s.dims)
        )
    ));
    c.w.line("float x = Src[i];");
    c.w.line("if (at < 0 || x > acc) { acc = x; at = (long long)i; }");
    c.w.close();
    c.w.close();
    let at = idx(["n", "ch", "oh", "ow"], win.act_strides(&d.dims));
    c.w.line(&format!("Dest[{at}] = acc;"));
    c.w.line(&format!("Argmax[{at}] = ({at_ty})at;"));
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}

/// The C element type of an `Argmax` (`index32` or `index64`).
fn argmax_c_type(c: &KCtx, am: &glow_ir::Type) -> Result<&'static str, BackendError> {
    match am.elem {
        glow_ir::ElemKind::Index32 => Ok("int32_t"),
        glow_ir::ElemKind::Index64 => Ok("int64_t"),
        _ => Err(c.unsupported(am)),
    }
}

/// The output loops of a pool gradient in `Dest`'s row-major order (NHWC:
/// n, oh, ow, ch; NCHW: n, ch, oh, ow); the caller closes four loops.
fn open_outputs(c: &mut KCtx, win: &Window, ch: u64, n: u64, oh: u64, ow: u64) {
    c.w.for_loop("n", n);
    if win.nchw {
        c.w.for_loop("ch", ch);
        c.w.for_loop("oh", oh);
        c.w.for_loop("ow", ow);
    } else {
        c.w.for_loop("oh", oh);
        c.w.for_loop("ow", ow);
        c.w.for_loop("ch", ch);
    }
}

/// `maxpoolwithargmaxgrad`: `SrcGrad` zeroed, then `DestGrad[i]` added at
/// `Argmax[i]` for each output `i` in order; an index outside `Src` is
/// skipped. `avgpoolgrad`: `SrcGrad` zeroed, then for each output in
/// `Dest`'s row-major order, `DestGrad / count` added at each in-bounds
/// window element in row-major order, `count` being what `avgpool` divides
/// by.
pub fn pool_grad(c: &mut KCtx) -> Result<(), BackendError> {
    let (d, s) = (c.ty("Dest")?, c.ty("Src")?);
    let (dg, sg) = (c.ty("DestGrad")?, c.ty("SrcGrad")?);
    for t in [&d, &s, &dg, &sg] {
        c.require_f32(t)?;
    }
    c.decl("DestGrad", "float")?;
    c.decl("SrcGrad", "float")?;
    c.w.line(&format!(
        "for (size_t i = 0; i < {}u; i++) SrcGrad[i] = 0.0f;",
        sg.size()
    ));
    if c.inst.opcode == glow_ir::Opcode::MaxPoolWithArgmaxGrad {
        let am = c.ty("Argmax")?;
        let at_ty = argmax_c_type(c, &am)?;
        c.decl("Argmax", at_ty)?;
        c.w.for_loop("i", dg.size().min(am.size()));
        c.w.line("const int64_t a = Argmax[i];");
        c.w.line(&format!(
            "if (a < 0 || a >= (int64_t){}ll) continue;",
            sg.size()
        ));
        c.w.line("SrcGrad[(size_t)a] += DestGrad[i];");
        c.w.close();
        return Ok(());
    }
    let win = Window::read(c.inst).ok_or_else(|| c.err("malformed window members"))?;
    let include = c.inst.get(m::COUNT_INCLUDE_PADS).unwrap_or(true);
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    let src_at = idx(
        ["n", "ch", "(size_t)ih", "(size_t)iw"],
        win.act_strides(&s.dims),
    );
    open_outputs(c, &win, ch, n, oh, ow);
    let dest = format!(
        "DestGrad[{}]",
        idx(["n", "ch", "oh", "ow"], win.act_strides(&d.dims))
    );
    if include {
        let area = c_float((win.kernels[0] * win.kernels[1]) as f32);
        c.w.line(&format!("const float gr = {dest} / {area};"));
    } else {
        c.w.line("size_t cnt = 0;");
        open_window(c, &win, h, w);
        c.w.line("cnt++;");
        c.w.close();
        c.w.close();
        c.w.line(&format!(
            "const float gr = cnt ? {dest} / (float)cnt : 0.0f;"
        ));
    }
    open_window(c, &win, h, w);
    c.w.line(&format!("SrcGrad[{src_at}] += gr;"));
    c.w.close();
    c.w.close();
    for _ in 0..4 {
        c.w.close();
    }
    Ok(())
}
