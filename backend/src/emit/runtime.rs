//! The shared kernels of a bundle (`kernels.c`): static C functions called
//! with shape parameters, so `cc` compiles each kernel once however many
//! instructions use it, and the filters and weight matrices they stream,
//! packed at emit time into the constant region.

use std::collections::{BTreeMap, BTreeSet};

const SOURCE: &str = include_str!("kernels.c");

/// Output pixels (GEMM rows) per tile of the float kernels: `GLOW_TP` in C.
/// The tile keeps one named accumulator per pixel (`GLOW_EACH_TP`), so any
/// value from 1 computes the same numbers (`CodegenOptions::tile_pixels`
/// overrides it; tested).
pub const TILE_PIXELS: u32 = 6;

/// Output channels per packed filter or matrix panel: `GLOW_PW` in C and the
/// packing below. The vector paths hold a panel in one 16-lane or two 8-lane
/// vectors, so the kernels refuse to build with another value (tested).
pub const PANEL_WIDTH: u64 = 16;

/// Every `glow_*` / `GLOW_*` identifier the kernels define or use (read off
/// `kernels.c`, plus the generated kernels), so the namer can keep IR names
/// away from all of them.
pub fn kernel_identifiers() -> Vec<&'static str> {
    let mut out = vec![
        "glow_unary_f32",
        "glow_binary_f32",
        "glow_rq",
        "glow_clamp64",
        "glow_wrap32",
    ];
    let bytes = SOURCE.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
        if word(bytes[i]) && (i == 0 || !word(bytes[i - 1])) {
            let start = i;
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            let w = &SOURCE[start..i];
            if w.starts_with("glow_") || w.starts_with("GLOW_") {
                out.push(w);
            }
        } else {
            i += 1;
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// A section of `kernels.c` (`/*@name*/ ... /*@end*/`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kernel {
    Common,
    ConvBase,
    Conv,
    Depthwise,
    ConvRef,
    /// The run-time packing of a convolution's filter for `Conv`.
    ConvPack,
    /// The same for `Depthwise`.
    DepthwisePack,
    Gemm,
    Move,
    Unary,
    BatchNorm,
    /// Float element-wise binary operators, generated from `ops::BINARY`.
    Binary,
    Fill,
    /// The quantized kernels' integer helpers (`crate::quant::C_HELPERS`).
    Quant,
    /// The quantized kernels' shared types, stores and vector requantization.
    QBase,
    /// The `vpmaddwd` tiles the convolution and the GEMM share.
    QTile,
    /// The widening int16 quantized convolution.
    QConv,
    /// The quantized depthwise convolution.
    QDepthwise,
    /// The quantized GEMM.
    QGemm,
    /// The detection kernels (`detection.c`).
    Detection,
    /// The dynamically quantized fullyconnected.
    QDyn,
    /// `quantizationprofile`'s histogram update.
    QProfile,
    /// The quantized addition of two 8-bit operands.
    QAdd,
    /// `convolutiongrad`'s register-blocked FilterGrad.
    ConvGrad,
}

impl Kernel {
    fn tag(self) -> &'static str {
        match self {
            Kernel::Common => "common",
            Kernel::ConvBase => "convbase",
            Kernel::Conv => "conv",
            Kernel::Depthwise => "depthwise",
            Kernel::ConvRef => "convref",
            Kernel::ConvPack => "convpack",
            Kernel::DepthwisePack => "dwpack",
            Kernel::Gemm => "gemm",
            Kernel::Move => "move",
            Kernel::Unary => "unary",
            Kernel::BatchNorm => "batchnorm",
            Kernel::Binary => "binary",
            Kernel::Fill => "fill",
            Kernel::Quant => "quant",
            Kernel::QBase => "qbase",
            Kernel::QTile => "qtile",
            Kernel::QConv => "qconv",
            Kernel::QDepthwise => "qdw",
            Kernel::QGemm => "qgemm",
            Kernel::Detection => "detection",
            Kernel::QDyn => "qdyn",
            Kernel::QProfile => "qprofile",
            Kernel::QAdd => "qadd",
            Kernel::ConvGrad => "convgrad",
        }
    }

    /// Sections this one needs before it.
    fn needs(self) -> &'static [Kernel] {
        match self {
            Kernel::Common => &[],
            Kernel::ConvBase
            | Kernel::Gemm
            | Kernel::Move
            | Kernel::Unary
            | Kernel::BatchNorm
            | Kernel::Binary
            | Kernel::Fill
            | Kernel::Quant
            | Kernel::ConvGrad
            | Kernel::Detection => &[Kernel::Common],
            Kernel::QProfile => &[Kernel::Common],
            Kernel::Conv | Kernel::Depthwise | Kernel::ConvRef => {
                &[Kernel::Common, Kernel::ConvBase]
            }
            Kernel::ConvPack => &[Kernel::Common, Kernel::ConvBase, Kernel::Conv],
            Kernel::DepthwisePack => &[Kernel::Common, Kernel::ConvBase, Kernel::Depthwise],
            Kernel::QBase | Kernel::QAdd => &[Kernel::Common, Kernel::Quant],
            Kernel::QDepthwise => &[Kernel::Common, Kernel::Quant, Kernel::QBase],
            Kernel::QTile => &[Kernel::Common, Kernel::Quant, Kernel::QBase],
            Kernel::QConv | Kernel::QGemm | Kernel::QDyn => {
                &[Kernel::Common, Kernel::Quant, Kernel::QBase, Kernel::QTile]
            }
        }
    }

    fn text(self) -> String {
        if self == Kernel::Binary {
            return binary_source();
        }
        if self == Kernel::Unary {
            return unary_source();
        }
        if self == Kernel::Quant {
            return crate::quant::C_HELPERS.to_string();
        }
        if self == Kernel::Detection {
            return include_str!("detection.c").to_string();
        }
        let open = format!("/*@{}*/\n", self.tag());
        let start = SOURCE.find(&open).map(|i| i + open.len()).unwrap_or(0);
        let len = SOURCE[start..].find("/*@end*/").unwrap_or(0);
        let text = SOURCE[start..start + len].to_string();
        if self == Kernel::Common {
            return text.replace("/*@act*/\n", &act_source());
        }
        text
    }
}

/// `glow_act(x, act, a0, a1)`, one case per [`FusedActivation`] (`act` its
/// code), the C of [`FusedActivation::apply`]; and `GLOW_ACT_<NAME>`, the
/// codes the vector stores test for.
fn act_source() -> String {
    use glow_ir::activation::FusedActivation as A;
    let mut s = String::new();
    for a in A::ALL {
        s.push_str(&format!("#define GLOW_ACT_{} {}\n", a.name(), a.code()));
    }
    s.push_str("/* The fused activations as the interpreter computes them. */\nstatic inline float glow_act(float x, int act, float a0, float a1) {\n  (void)a0;\n  (void)a1;\n  switch (act) {\n");
    for a in A::ALL {
        let e = match a {
            A::None => "x",
            A::Relu => "x > 0.0f ? x : 0.0f",
            A::Clip => "a1 < (x < a0 ? a0 : x) ? a1 : (x < a0 ? a0 : x)",
            A::Tanh => "tanhf(x)",
            A::Sigmoid => "1.0f / (1.0f + expf(-x))",
            A::LeakyRelu => "x >= 0.0f ? x : a0 * x",
        };
        s.push_str(&format!("  case GLOW_ACT_{}: return {e};\n", a.name()));
    }
    s.push_str("  default: return x;\n  }\n}\n");
    s
}

/// The tile shape's macros (before the kernels): `GLOW_TP`, `GLOW_PW` and
/// `GLOW_EACH_TP(X)`, `X(0) ... X(tp - 1)`, and `GLOW_EACH_TP_ARGS(X, ...)`,
/// `X(0, ...) ... X(tp - 1, ...)`.
fn tile_defines(tp: u32) -> String {
    let each: Vec<String> = (0..tp).map(|t| format!("X({t})")).collect();
    let each_args: Vec<String> = (0..tp).map(|t| format!("X({t}, __VA_ARGS__)")).collect();
    format!(
        "#define GLOW_TP {tp}\n#define GLOW_PW {PANEL_WIDTH}\n#define GLOW_EACH_TP(X) {}\n\
         #define GLOW_EACH_TP_ARGS(X, ...) {}\n",
        each.join(" "),
        each_args.join(" ")
    )
}

/// A generated element-wise kernel: `head` opens the function, each case
/// `k` loops over `n` elements with `load` then `dst[i] = exprs[k]`.
fn switch_source(head: &str, load: &str, exprs: impl Iterator<Item = &'static str>) -> String {
    let mut s = String::from(head);
    for (k, e) in exprs.enumerate() {
        // An operator with no float form has no case (its index stays).
        if e.is_empty() {
            continue;
        }
        s.push_str(&format!(
            "  case {k}:\n    for (size_t i = 0; i < n; i++) {{\n      {load}\n      dst[i] = {e};\n    }}\n    break;\n"
        ));
    }
    s.push_str("  default:\n    break;\n  }\n}\n");
    s
}

/// `glow_unary_f32(dst, src, n, op, m)`: one case per operator of
/// `ops::UNARY` (op = its index there), `m` its parameters.
fn unary_source() -> String {
    switch_source(
        "/* Float element-wise unary operators; op indexes ops::UNARY, m holds the opcode's float members. */\nstatic void glow_unary_f32(float *dst, const float *src, size_t n, int op, const float *m) {\n  (void)m;\n  switch (op) {\n",
        "const float x = src[i];",
        crate::ops::UNARY.iter().map(|o| o.c),
    )
}

/// `glow_binary_f32(dst, a, b, n, op)`: one case per float operator of
/// `ops::BINARY` (op = its index there), the same C expression the
/// interpreter's operator mirrors.
fn binary_source() -> String {
    switch_source(
        "/* Float element-wise binary operators; op indexes ops::BINARY. */\nstatic void glow_binary_f32(float *dst, const float *x, const float *y, size_t n, int op) {\n  switch (op) {\n",
        "const float a = x[i], b = y[i];",
        crate::ops::BINARY.iter().map(|o| o.c_float),
    )
}

/// How a constant weight is rearranged for a kernel.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum PackKind {
    /// Convolution filter to `[group][panel][kh][kw][c][PANEL_WIDTH]`; `fs` are the
    /// stored filter's strides over (oc, kh, kw, c).
    ConvPanels {
        group: u64,
        ocg: u64,
        kh: u64,
        kw: u64,
        cg: u64,
        fs: [u64; 4],
    },
    /// Depthwise filter to `[kh][kw][c]`.
    Depthwise {
        c: u64,
        kh: u64,
        kw: u64,
        fs: [u64; 4],
    },
    /// A `[k][n]` matrix to `[n / PANEL_WIDTH][k][PANEL_WIDTH]`.
    GemmPanels { k: u64, n: u64 },
    /// A quantized NHWC filter `[oc][kh][kw][cg]` (int8, or uint8 when not
    /// `signed`) to int16 `w - woff[o]` in `[group][block of 16][kh][kw]
    /// [pair][16][2]`, zero past the group's channels.
    QConvPanels {
        group: u64,
        ocg: u64,
        kh: u64,
        kw: u64,
        cg: u64,
        signed: bool,
        woff: Vec<i64>,
    },
    /// The same filter for the VNNI kernel: int8 `w - woff[o]` in
    /// `[group][block of 16][kh][kw][quad][16][4]`, zero past the group's
    /// channels (packed only when every value fits in int8).
    QConvVnni {
        group: u64,
        ocg: u64,
        kh: u64,
        kw: u64,
        cg: u64,
        signed: bool,
        woff: Vec<i64>,
    },
    /// A constant quantized right-hand side `[k][n]` for the VNNI kernel: the
    /// QConvVnni packing of its transpose `[n][k]` (a 1x1 filter of `n`
    /// output channels), `woff` one offset per column (packed only when every
    /// value fits in int8).
    QGemmVnni {
        k: u64,
        n: u64,
        signed: bool,
        woff: Vec<i64>,
    },
    /// The quantized right-hand sides `[nb][k][n]` (int8, or uint8 when not
    /// `signed`) of a GEMM to int16 `r - woff[j]` in `[nb][block of 16 columns]
    /// [pair of k][16][2]`, zero past `k` and `n`; `woff` holds one offset per
    /// column, or one for all.
    QGemmPanels {
        nb: u64,
        k: u64,
        n: u64,
        signed: bool,
        woff: Vec<i64>,
    },
    /// A quantized depthwise NHWC filter `[c][kh][kw][1]` to int16
    /// `w - woff[c]` in pairs of taps (kh, kw in order, the last of an odd
    /// count paired with zeros): `[pair][block of 16 channels][16][2]`, the
    /// 16 channels of a block in the order AVX2's 16-bit unpacks leave them
    /// (0-3, 8-11, 4-7, 12-15); zero past `c`, whose blocks are padded to an
    /// even count (the AVX-512 tiles take two at a time).
    QDepthwise {
        c: u64,
        kh: u64,
        kw: u64,
        signed: bool,
        woff: Vec<i64>,
    },
}

impl PackKind {
    /// A quantized convolution filter's int8 packing for the VNNI kernel.
    pub fn int8_form(&self) -> Option<PackKind> {
        match self.clone() {
            PackKind::QConvPanels {
                group,
                ocg,
                kh,
                kw,
                cg,
                signed,
                woff,
            } => Some(PackKind::QConvVnni {
                group,
                ocg,
                kh,
                kw,
                cg,
                signed,
                woff,
            }),
            _ => None,
        }
    }

    /// Elements of the packed form.
    pub fn len(&self) -> u64 {
        match *self {
            PackKind::ConvPanels {
                group,
                ocg,
                kh,
                kw,
                cg,
                ..
            } => group * ocg.div_ceil(PANEL_WIDTH) * kh * kw * cg * PANEL_WIDTH,
            PackKind::Depthwise { c, kh, kw, .. } => kh * kw * c,
            PackKind::GemmPanels { k, n } => n.div_ceil(PANEL_WIDTH) * k * PANEL_WIDTH,
            PackKind::QConvPanels {
                group,
                ocg,
                kh,
                kw,
                cg,
                ..
            } => group * ocg.div_ceil(16) * kh * kw * cg.div_ceil(2) * 32,
            PackKind::QConvVnni {
                group,
                ocg,
                kh,
                kw,
                cg,
                ..
            } => group * ocg.div_ceil(16) * kh * kw * cg.div_ceil(4) * 64,
            PackKind::QGemmVnni { k, n, .. } => n.div_ceil(16) * k.div_ceil(4) * 64,
            PackKind::QDepthwise { c, kh, kw, .. } => (kh * kw).div_ceil(2) * c.div_ceil(32) * 64,
            PackKind::QGemmPanels { nb, k, n, .. } => nb * n.div_ceil(16) * k.div_ceil(2) * 32,
        }
    }

    /// Bytes of one packed element.
    pub fn elem_bytes(&self) -> u64 {
        match self {
            PackKind::QConvPanels { .. }
            | PackKind::QDepthwise { .. }
            | PackKind::QGemmPanels { .. } => 2,
            PackKind::QConvVnni { .. } | PackKind::QGemmVnni { .. } => 1,
            _ => 4,
        }
    }

    /// The packed bytes of `src`, the stored weight's bytes.
    pub fn pack_bytes(&self, src: &[u8]) -> Vec<u8> {
        let stored = |signed: bool, i: u64| -> i64 {
            let b = src.get(i as usize).copied().unwrap_or(0);
            if signed {
                b as i8 as i64
            } else {
                b as i64
            }
        };
        if let PackKind::QDepthwise {
            c,
            kh,
            kw,
            signed,
            woff,
        } = self
        {
            let (c, taps) = (*c, *kh * *kw);
            // Channel of the block at each packed position (the inverse of
            // `glow_qdw_lane` in kernels.c).
            const CHANNEL: [u64; 16] = [0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15];
            let mut out = Vec::with_capacity(self.len() as usize * 2);
            for pair in 0..taps.div_ceil(2) {
                for block in 0..c.div_ceil(32) * 2 {
                    for j in CHANNEL {
                        let o = block * 16 + j;
                        for t in [2 * pair, 2 * pair + 1] {
                            let v = if o < c && t < taps {
                                stored(*signed, o * taps + t)
                                    - woff.get(o as usize).copied().unwrap_or(0)
                            } else {
                                0
                            };
                            out.extend_from_slice(&(v as i16).to_le_bytes());
                        }
                    }
                }
            }
            return out;
        }
        if let PackKind::QGemmVnni {
            k,
            n,
            signed,
            ref woff,
        } = *self
        {
            let t: Vec<u8> = (0..n)
                .flat_map(|j| (0..k).map(move |kk| (kk * n + j) as usize))
                .map(|at| src.get(at).copied().unwrap_or(0))
                .collect();
            let filter = PackKind::QConvVnni {
                group: 1,
                ocg: n,
                kh: 1,
                kw: 1,
                cg: k,
                signed,
                woff: (0..n as usize).map(|j| woff[j % woff.len()]).collect(),
            };
            return filter.pack_bytes(&t);
        }
        if let PackKind::QGemmPanels {
            nb,
            k,
            n,
            signed,
            ref woff,
        } = *self
        {
            let mut out = Vec::with_capacity(self.len() as usize * 2);
            for b in 0..nb {
                for blk in 0..n.div_ceil(16) {
                    for p in 0..k.div_ceil(2) {
                        for l in 0..16 {
                            for t in 0..2 {
                                let (j, kk) = (blk * 16 + l, 2 * p + t);
                                let v = if j < n && kk < k {
                                    stored(signed, (b * k + kk) * n + j)
                                        - woff[j as usize % woff.len()]
                                } else {
                                    0
                                };
                                out.extend_from_slice(&(v as i16).to_le_bytes());
                            }
                        }
                    }
                }
            }
            return out;
        }
        match self {
            PackKind::QConvPanels {
                group,
                ocg,
                kh,
                kw,
                cg,
                signed,
                woff,
            }
            | PackKind::QConvVnni {
                group,
                ocg,
                kh,
                kw,
                cg,
                signed,
                woff,
            } => {
                // The same walk for both: int16 pairs or int8 quads of input
                // channels per 16-lane block of output channels.
                let vnni = matches!(self, PackKind::QConvVnni { .. });
                let k = if vnni { 4 } else { 2 };
                let (group, ocg, kh, kw, cg) = (*group, *ocg, *kh, *kw, *cg);
                let mut out = Vec::with_capacity(self.len() as usize * self.elem_bytes() as usize);
                for g in 0..group {
                    for b in 0..ocg.div_ceil(16) {
                        for a in 0..kh {
                            for x in 0..kw {
                                for p in 0..cg.div_ceil(k) {
                                    for l in 0..16 {
                                        for t in 0..k {
                                            let (o, c) = (b * 16 + l, k * p + t);
                                            let v = if o < ocg && c < cg {
                                                let o = g * ocg + o;
                                                let at = ((o * kh + a) * kw + x) * cg + c;
                                                stored(*signed, at)
                                                    - woff.get(o as usize).copied().unwrap_or(0)
                                            } else {
                                                0
                                            };
                                            if vnni {
                                                out.push(v as i8 as u8);
                                            } else {
                                                out.extend_from_slice(&(v as i16).to_le_bytes());
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                return out;
            }
            _ => {}
        }
        let floats: Vec<f32> = src
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        self.pack(&floats)
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The packed elements of `src` (a stored float weight).
    pub fn pack(&self, src: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; self.len() as usize];
        let get = |i: u64| src.get(i as usize).copied().unwrap_or(0.0);
        match *self {
            PackKind::ConvPanels {
                group,
                ocg,
                kh,
                kw,
                cg,
                fs,
            } => {
                let panels = ocg.div_ceil(PANEL_WIDTH);
                let mut at = 0usize;
                for g in 0..group {
                    for pb in 0..panels {
                        for a in 0..kh {
                            for b in 0..kw {
                                for c in 0..cg {
                                    for l in 0..PANEL_WIDTH {
                                        let o = pb * PANEL_WIDTH + l;
                                        if o < ocg {
                                            let o = g * ocg + o;
                                            out[at] =
                                                get(o * fs[0] + a * fs[1] + b * fs[2] + c * fs[3]);
                                        }
                                        at += 1;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            PackKind::Depthwise { c, kh, kw, fs } => {
                let mut at = 0usize;
                for a in 0..kh {
                    for b in 0..kw {
                        for o in 0..c {
                            out[at] = get(o * fs[0] + a * fs[1] + b * fs[2]);
                            at += 1;
                        }
                    }
                }
            }
            PackKind::QConvPanels { .. }
            | PackKind::QConvVnni { .. }
            | PackKind::QGemmVnni { .. }
            | PackKind::QDepthwise { .. }
            | PackKind::QGemmPanels { .. } => {}
            PackKind::GemmPanels { k, n } => {
                let mut at = 0usize;
                for pb in 0..n.div_ceil(PANEL_WIDTH) {
                    for kk in 0..k {
                        for l in 0..PANEL_WIDTH {
                            let j = pb * PANEL_WIDTH + l;
                            if j < n {
                                out[at] = get(kk * n + j);
                            }
                            at += 1;
                        }
                    }
                }
            }
        }
        out
    }
}

/// What the body of a bundle asked for: kernels and packed weights.
#[derive(Debug, Default)]
pub struct Runtime<'a> {
    kernels: BTreeSet<Kernel>,
    /// Packed copies by (weight index, packing) → byte offset in the
    /// constant region, after the weights.
    packed: BTreeMap<(usize, PackKind), u64>,
    base: u64,
    end: u64,
    /// Length of `glow_zero`, the zeros padded window positions read.
    zeros: u64,
    /// int16 elements of the largest quantized convolution band.
    qband: u64,
    /// Channels (rounded up to 16) of the widest quantized depthwise convolution.
    qdwc: u64,
    /// The constant region's bytes (weights only) and each weight's offset.
    constants: &'a [u8],
    finite: BTreeMap<usize, bool>,
    /// `GLOW_TP`.
    tile_pixels: u32,
}

impl<'a> Runtime<'a> {
    /// Packed weights go after `constants`, the constant region's bytes.
    pub fn new(constants: &'a [u8]) -> Runtime<'a> {
        let base = constants.len() as u64;
        Runtime {
            base,
            end: base,
            constants,
            tile_pixels: TILE_PIXELS,
            ..Runtime::default()
        }
    }

    /// Tiles of `n` pixels instead of [`TILE_PIXELS`] (0 keeps it).
    pub fn set_tile_pixels(&mut self, n: u32) {
        if n > 0 {
            self.tile_pixels = n;
        }
    }

    /// Whether the float weight at `offset` (of `len` elements) holds no
    /// infinity or NaN.
    pub fn finite(&mut self, w: usize, offset: u64, len: u64) -> bool {
        let bytes = self.constants;
        *self.finite.entry(w).or_insert_with(|| {
            let (a, b) = (offset as usize, (offset + 4 * len) as usize);
            bytes.get(a..b).is_some_and(|s| {
                s.chunks_exact(4)
                    .all(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite())
            })
        })
    }

    /// Bytes `a..b` of the constant region (the weights), known at emit time.
    pub fn constant_bytes(&self, a: usize, b: usize) -> Option<&[u8]> {
        self.constants.get(a..b)
    }

    /// Makes the quantized convolution's band at least `n` int16 long.
    pub fn need_qband(&mut self, n: u64) {
        self.qband = self.qband.max(n);
    }

    /// Makes the depthwise kernel's accumulators at least `n` channels long.
    pub fn need_qdwc(&mut self, n: u64) {
        self.qdwc = self.qdwc.max(n);
    }

    /// Makes `glow_zero` at least `n` floats long.
    pub fn need_zeros(&mut self, n: u64) {
        self.zeros = self.zeros.max(n);
    }

    pub fn use_kernel(&mut self, k: Kernel) {
        for &n in k.needs() {
            self.kernels.insert(n);
        }
        self.kernels.insert(k);
    }

    /// The constant-region byte offset of weight `w` packed as `kind`.
    pub fn packed(&mut self, w: usize, kind: PackKind) -> u64 {
        let bytes = kind.len() * kind.elem_bytes();
        let end = &mut self.end;
        *self.packed.entry((w, kind)).or_insert_with(|| {
            let at = *end;
            *end = glow_planner::align_up(at + bytes, glow_ir::ALIGN);
            at
        })
    }

    /// Bytes the packed weights add to the constant region.
    pub fn packed_bytes(&self) -> u64 {
        self.end - self.base
    }

    /// Every packed weight: (weight index, packing, byte offset).
    pub fn packings(&self) -> impl Iterator<Item = (usize, &PackKind, u64)> + '_ {
        self.packed.iter().map(|((w, k), &at)| (*w, k, at))
    }

    /// The C text of the kernels used, in a fixed order.
    pub fn source(&self) -> String {
        let mut out = String::new();
        if !self.kernels.is_empty() {
            out.push_str(&tile_defines(self.tile_pixels));
        }
        for k in &self.kernels {
            if *k == Kernel::QBase {
                out.push_str(&format!(
                    "#define GLOW_QBAND {}\n#define GLOW_QDWC {}\n",
                    self.qband.max(1),
                    self.qdwc.max(16)
                ));
            }
            out.push_str(&k.text());
            let packed_conv =
                self.kernels.contains(&Kernel::Conv) || self.kernels.contains(&Kernel::Depthwise);
            if *k == Kernel::ConvBase && packed_conv {
                out.push_str(&format!(
                    "static const float glow_zero[{}] = {{0.0f}};\n",
                    self.zeros.max(1)
                ));
            }
        }
        out
    }

    pub fn uses_any(&self) -> bool {
        !self.kernels.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_identifier_is_found() {
        let ids = kernel_identifiers();
        for want in [
            "glow_conv_f32",
            "glow_gemm_t",
            "GLOW_TP",
            "glow_move",
            "glow_pool",
            "glow_store16",
        ] {
            assert!(ids.contains(&want), "{want} missing from {ids:?}");
        }
        assert!(ids
            .iter()
            .all(|i| i.starts_with("glow_") || i.starts_with("GLOW_")));
    }
}
