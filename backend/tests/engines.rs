//! C versus interpreter on seeded random inputs, for every opcode and
//! several shapes (multi-axis opcodes on every axis). All cases go into one
//! function so the C compiler runs once per configuration: once with
//! `-O2 -Wall -Wextra -Werror`, once under `-fsanitize=address,undefined`.
//! Ignored, with the reason, when `cc` is not installed.

use glow_backend::run::{self, Engine, Outputs, RunOptions};
use glow_backend::CcOptions;
use std::collections::BTreeMap;

/// A program being built: declarations and instructions.
#[derive(Default)]
struct Prog {
    decls: Vec<String>,
    code: Vec<String>,
    n: usize,
}

impl Prog {
    fn weight(&mut self, ty: &str) -> String {
        self.weight_of(ty, "mutable")
    }
    fn weight_of(&mut self, ty: &str, mutability: &str) -> String {
        self.n += 1;
        let name = format!("w{}", self.n);
        self.decls
            .push(format!("  %{name} = WeightVar {ty} {mutability}"));
        name
    }
    fn inst(&mut self, text: &str) {
        self.n += 1;
        self.code.push(format!("  %i{} = {text}", self.n));
    }
    fn text(&self) -> String {
        format!(
            "function cases\ndeclare {{\n{}\n}}\n\ncode {{\n{}\n}}\n",
            self.decls.join("\n"),
            self.code.join("\n")
        )
    }
    /// `opcode @out %new(dest_ty), @in %new(in_ty)... { members }`.
    fn op(&mut self, opcode: &str, dest: &str, ins: &[&str], members: &str) {
        self.op_const(opcode, dest, ins, &[], members)
    }
    /// As `op`, with the inputs at positions `consts` constant weights (whose
    /// contents the bundle knows, so the C kernels pack them).
    fn op_const(
        &mut self,
        opcode: &str,
        dest: &str,
        ins: &[&str],
        consts: &[usize],
        members: &str,
    ) {
        let d = self.weight(dest);
        let ins: Vec<String> = ins
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let m = if consts.contains(&i) {
                    "const"
                } else {
                    "mutable"
                };
                format!("@in %{}", self.weight_of(t, m))
            })
            .collect();
        let mut ops = vec![format!("@out %{d}")];
        ops.extend(ins);
        let m = if members.is_empty() {
            String::new()
        } else {
            format!(" {{ {members} }}")
        };
        self.inst(&format!("{opcode} {}{m}", ops.join(", ")));
    }
}

fn f(dims: &[u64]) -> String {
    let d: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("float<{}>", d.join(" x "))
}

fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 1 {
        return vec![vec![0]];
    }
    let mut out = Vec::new();
    for p in permutations(n - 1) {
        for i in 0..n {
            let mut q = p.clone();
            q.insert(i, n - 1);
            out.push(q);
        }
    }
    out
}

/// (src, its scale, filter, its scale, dest, group, in channels, out channels, members).
type QConvCase = (
    &'static str,
    f32,
    &'static str,
    f32,
    &'static str,
    u64,
    u64,
    u64,
    &'static str,
);

/// The integer quantized kernels (docs/quantization.md): element-wise
/// arithmetic mixing `i8`/`ui8` and parameters (some saturating), the
/// activations, products of every shape family, pools, channel-wise
/// convolutions; constant and mutable filters.
fn quantized_cases(p: &mut Prog) {
    let (a, u, o) = (
        "i8[S:0.01 O:3]",
        "ui8[S:0.0078125 O:128]",
        "i8[S:0.015 O:-4]",
    );
    let sat = "ui8[S:0.001 O:10]";
    for (l, r, d) in [(a, a, a), (a, u, o), (u, u, sat), (u, a, u)] {
        let t = |q: &str| format!("{q}<3 x 5>");
        for op in [
            "elementadd",
            "elementsub",
            "elementmul",
            "elementmax",
            "elementmin",
        ] {
            p.op(op, &t(d), &[&t(l), &t(r)], "");
        }
        p.op("batchedadd", &t(d), &[&t(l), &format!("{r}<5>")], "");
        // The vector addition: 35 elements (two 16-lane steps and a tail,
        // or a 32-lane step and a tail) and 55 (32, then 16, then 7).
        let v = |q: &str| format!("{q}<5 x 7>");
        p.op("elementadd", &v(d), &[&v(l), &v(r)], "");
        p.op("elementsub", &v(d), &[&v(l), &v(r)], "");
        let v = |q: &str| format!("{q}<5 x 11>");
        p.op("elementadd", &v(d), &[&v(l), &v(r)], "");
    }
    for (s, d) in [(a, u), (u, o)] {
        p.op(
            "intlookuptable",
            &format!("{d}<3 x 7>"),
            &[&format!("{s}<3 x 7>"), &format!("{d}<256>")],
            "",
        );
    }
    for (s, d) in [(a, a), (u, o), (a, sat)] {
        let t = |q: &str| format!("{q}<2 x 7>");
        p.op("relu", &t(d), &[&t(s)], "");
        p.op("clip", &t(d), &[&t(s)], "Min: -0.3, Max: 0.2");
        p.op("rescalequantized", &t(d), &[&t(s)], "");
    }
    // Convolutions: (src, filter, dest, group, in channels, out channels, members).
    let bias = |s: f32, w: f32| format!("i32[S:{} O:0]", s * w);
    let convs: [QConvCase; 17] = [
        (
            "ui8[S:0.03125 O:128]",
            0.03125,
            "i8[S:0.0625 O:0]",
            0.0625,
            "ui8[S:0.125 O:7]",
            1,
            3,
            5,
            "Kernels: [3, 3], Pads: [1, 1, 1, 1]",
        ),
        (
            "i8[S:0.03125 O:-3]",
            0.03125,
            "i8[S:0.0625 O:2]",
            0.0625,
            "i8[S:0.25 O:0]",
            2,
            4,
            6,
            "Kernels: [3, 2], Strides: [2, 1], Pads: [0, 1, 1, 0], Dilation: [1, 2]",
        ),
        (
            "ui8[S:0.03125 O:100]",
            0.03125,
            "i8[S:0.0625 O:0]",
            0.0625,
            "ui8[S:0.5 O:0]",
            4,
            4,
            4,
            "Kernels: [3, 3], Pads: [1, 1, 1, 1], Group: 4, FusedActivation: RELU",
        ),
        (
            "ui8[S:0.03125 O:128]",
            0.03125,
            "ui8[S:0.0625 O:128]",
            0.0625,
            "ui8[S:0.0078125 O:128]",
            1,
            8,
            20,
            "Kernels: [1, 1], FusedActivation: CLIP, FusedActivationArgs: [-0.5, 0.75]",
        ),
        (
            "i8[S:0.03125 O:0]",
            0.03125,
            "i8[S:0.0625 O:0]",
            0.0625,
            "i8[S:0.125 O:-1]",
            1,
            2,
            3,
            "Kernels: [2, 2], Strides: [2, 2], Layout: NCHW",
        ),
        (
            "ui8[S:0.5 O:0]",
            0.5,
            "i8[S:0.5 O:0]",
            0.5,
            "ui8[S:0.00001 O:0]",
            1,
            16,
            2,
            "Kernels: [3, 3]",
        ),
        // Depthwise over 20 channels: 16 vector lanes and a tail.
        ("ui8[S:0.03125 O:120]", 0.03125, "i8[S:0.0625 O:1]", 0.0625, "ui8[S:0.0625 O:3]", 20, 20, 20, "Kernels: [3, 3], Strides: [2, 2], Pads: [1, 1, 1, 1], Group: 20, FusedActivation: RELU"),
        // 40 output channels: two full blocks of 16 and a tail, 3 input channels.
        ("i8[S:0.03125 O:5]", 0.03125, "i8[S:0.0625 O:0]", 0.0625, "i8[S:0.0625 O:-2]", 1, 3, 40, "Kernels: [3, 3], Pads: [1, 1, 1, 1]"),
        // The depthwise kernel's tap pairs: 40 channels (two blocks and a tail of
        // 8), rows of 7 pixels (a tile of 4 and one of 3), a scale ratio of 4
        // (the requantization's 64-bit path) and a RELU above the offset.
        ("ui8[S:0.5 O:0]", 0.5, "i8[S:0.5 O:3]", 0.5, "ui8[S:0.0625 O:10]", 40, 40, 40, "Kernels: [3, 3], Pads: [1, 1, 1, 1], Group: 40, FusedActivation: RELU"),
        // An odd tap count (25: the last pair's partner weighs zero), stride,
        // dilation, asymmetric pads.
        ("i8[S:0.03125 O:-3]", 0.03125, "i8[S:0.0625 O:0]", 0.0625, "i8[S:0.125 O:1]", 16, 16, 16, "Kernels: [5, 5], Strides: [2, 2], Pads: [2, 2, 2, 1], Dilation: [2, 1], Group: 16"),
        // The VNNI kernel's edges: a 1x1 run of 84 pixels (tiles of 8, 6
        // and 4), 33 output channels (a pair of blocks and a block of one
        // lane); two groups of 6 input channels (quads padded), 17 channels
        // per group, dilation (taps not merged), a signed input and an
        // unsigned filter offset by 128 (values still fit in int8).
        ("ui8[S:0.03125 O:128]", 0.03125, "i8[S:0.0625 O:0]", 0.0625, "ui8[S:0.0625 O:3]", 1, 8, 33, "Kernels: [1, 1]"),
        ("i8[S:0.03125 O:-3]", 0.03125, "ui8[S:0.0625 O:128]", 0.0625, "i8[S:0.125 O:1]", 2, 12, 34, "Kernels: [3, 3], Pads: [1, 1, 1, 1], Dilation: [2, 1], Group: 2"),
        // A 1x1 window of stride 2 with padding: the band holds every
        // other pixel, the padded column an offset.
        ("ui8[S:0.03125 O:100]", 0.03125, "i8[S:0.0625 O:0]", 0.0625, "ui8[S:0.0625 O:3]", 1, 16, 40, "Kernels: [1, 1], Strides: [2, 2], Pads: [0, 1, 1, 0]"),
        // A scale ratio of 2^-25: shifts past 53, where the 16-lane
        // requantization adds the offset after the shift.
        ("ui8[S:0.03125 O:128]", 0.03125, "i8[S:0.0625 O:0]", 0.0625, "i8[S:65536.0 O:-7]", 1, 8, 20, "Kernels: [1, 1]"),
        // A scale ratio of 4: the 64-bit requantization after VNNI sums.
        ("ui8[S:0.5 O:0]", 0.5, "i8[S:0.5 O:0]", 0.5, "ui8[S:0.0625 O:10]", 1, 8, 20, "Kernels: [1, 1], FusedActivation: RELU"),
        // Tiles that span output rows: rows of 4 pixels (stride 2), two
        // pairs of whole blocks stored by the storing tiles.
        ("ui8[S:0.03125 O:120]", 0.03125, "i8[S:0.0625 O:0]", 0.0625, "ui8[S:0.125 O:5]", 1, 16, 64, "Kernels: [3, 3], Strides: [2, 2], Pads: [1, 1, 1, 1]"),
        // An even tap count, an unsigned filter with an offset, a CLIP.
        ("ui8[S:0.03125 O:128]", 0.03125, "ui8[S:0.0625 O:120]", 0.0625, "ui8[S:0.125 O:0]", 24, 24, 24, "Kernels: [2, 2], Group: 24, FusedActivation: CLIP, FusedActivationArgs: [0.0, 6.0]"),
    ];
    for (src, ss, filt, fs, dest, group, ci, co, members) in convs {
        let nchw = members.contains("NCHW");
        let kernels: Vec<u64> = members
            .split("Kernels: [")
            .nth(1)
            .and_then(|r| r.split(']').next())
            .map(|k| k.split(", ").map(|v| v.parse().unwrap()).collect())
            .unwrap();
        let ints = |key: &str, d: Vec<u64>| -> Vec<u64> {
            members
                .split(&format!("{key}: ["))
                .nth(1)
                .and_then(|r| r.split(']').next())
                .map(|k| k.split(", ").map(|v| v.parse().unwrap()).collect())
                .unwrap_or(d)
        };
        let (st, pads, dil) = (
            ints("Strides", vec![1, 1]),
            ints("Pads", vec![0; 4]),
            ints("Dilation", vec![1, 1]),
        );
        let (h, w) = (6u64, 7u64);
        let out = |i: u64, a: usize| {
            (i + pads[a] + pads[a + 2] - (kernels[a] - 1) * dil[a] - 1) / st[a] + 1
        };
        let (oh, ow) = (out(h, 0), out(w, 1));
        let (st_, ft, dt) = if nchw {
            (
                format!("{src}<2 x {ci} x {h} x {w}>"),
                format!(
                    "{filt}<{co} x {} x {} x {}>",
                    ci / group,
                    kernels[0],
                    kernels[1]
                ),
                format!("{dest}<2 x {co} x {oh} x {ow}>"),
            )
        } else {
            (
                format!("{src}<2 x {h} x {w} x {ci}>"),
                format!(
                    "{filt}<{co} x {} x {} x {}>",
                    kernels[0],
                    kernels[1],
                    ci / group
                ),
                format!("{dest}<2 x {oh} x {ow} x {co}>"),
            )
        };
        let bt = format!("{}<{co}>", bias(ss, fs));
        let m = if members.contains("Group") {
            members.to_string()
        } else {
            format!("{members}, Group: {group}")
        };
        p.op_const("convolution", &dt, &[&st_, &ft, &bt], &[1, 2], &m);
        p.op("convolution", &dt, &[&st_, &ft, &bt], &m);
    }
    // Channel-wise: per-channel filter scales, offsets and bias scales.
    {
        let (co, ci) = (3u64, 4u64);
        let fsc = [0.0625f32, 0.125, 0.03125];
        let list = |v: &[String]| v.join(", ");
        let fs: Vec<String> = fsc.iter().map(|v| format!("{v:?}")).collect();
        let bs: Vec<String> = fsc.iter().map(|v| format!("{:?}", v * 0.03125)).collect();
        let d = p.weight(&format!("ui8[S:0.0625 O:5]<1 x 5 x 5 x {co}>"));
        let s = p.weight(&format!("ui8[S:0.03125 O:128]<1 x 5 x 5 x {ci}>"));
        let fw = p.weight_of(&format!("i8[S:1.0 O:0]<{co} x 3 x 3 x {ci}>"), "const");
        let bw = p.weight_of(&format!("i32[S:1.0 O:0]<{co}>"), "const");
        let f1 = p.weight_of(
            &format!("float<{co}>"),
            &format!("const {{ Data: [{}] }}", list(&fs)),
        );
        let f2 = p.weight_of(&format!("index32<{co}>"), "const { Data: [0, 1, -2] }");
        let f3 = p.weight_of(
            &format!("float<{co}>"),
            &format!("const {{ Data: [{}] }}", list(&bs)),
        );
        let f4 = p.weight_of(&format!("index32<{co}>"), "const { Data: [0, 0, 0] }");
        p.inst(&format!("channelwisequantizedconvolution @out %{d}, @in %{s}, @in %{fw}, @in %{bw}, @in %{f1}, @in %{f2}, @in %{f3}, @in %{f4} {{ Kernels: [3, 3], Pads: [1, 0, 1, 2], FusedActivation: RELU }}"));
    }
    let (x, wq, y) = (
        "ui8[S:0.03125 O:128]",
        "i8[S:0.0625 O:0]",
        "ui8[S:0.0625 O:120]",
    );
    let fcb = bias(0.03125, 0.0625);
    p.op_const(
        "fullyconnected",
        &format!("{y}<3 x 17>"),
        &[
            &format!("{x}<3 x 9>"),
            &format!("{wq}<9 x 17>"),
            &format!("{fcb}<17>"),
        ],
        &[1, 2],
        "",
    );
    p.op(
        "fullyconnected",
        &format!("{y}<3 x 17>"),
        &[
            &format!("{x}<3 x 9>"),
            &format!("{wq}<9 x 17>"),
            &format!("{fcb}<17>"),
        ],
        "",
    );
    // The packed GEMM's tile edges: rows not a multiple of the 6- and 4-row
    // tiles nor of the 24-row chunks, odd inner sizes (a zero pair half),
    // columns not a multiple of 16; constant and run-time right-hand sides.
    let xs = "i8[S:0.03125 O:-5]";
    for (m, k, n, src) in [
        (13u64, 31u64, 33u64, x),
        (50, 8, 16, xs),
        (1, 64, 40, x),
        (7, 1, 3, xs),
    ] {
        let ins = [
            format!("{src}<{m} x {k}>"),
            format!("{wq}<{k} x {n}>"),
            format!("{fcb}<{n}>"),
        ];
        let ins: Vec<&str> = ins.iter().map(String::as_str).collect();
        p.op_const(
            "fullyconnected",
            &format!("{y}<{m} x {n}>"),
            &ins,
            &[1, 2],
            "",
        );
        p.op("fullyconnected", &format!("{sat}<{m} x {n}>"), &ins, "");
    }
    for (nb, m, k, n) in [(1u64, 11u64, 7u64, 20u64), (3, 5, 6, 18), (2, 26, 3, 17)] {
        let (lt, rt) = (format!("{a}<{m} x {k}>"), format!("{u}<{k} x {n}>"));
        let (blt, brt) = (
            format!("{x}<{nb} x {m} x {k}>"),
            format!("{wq}<{nb} x {k} x {n}>"),
        );
        if nb == 1 {
            p.op_const("matmul", &format!("{o}<{m} x {n}>"), &[&lt, &rt], &[1], "");
            p.op("matmul", &format!("{o}<{m} x {n}>"), &[&lt, &rt], "");
        }
        let bd = format!("{y}<{nb} x {m} x {n}>");
        p.op_const("batchmatmul", &bd, &[&blt, &brt], &[1], "");
        p.op("batchmatmul", &bd, &[&blt, &brt], "");
    }
    // Row-wise: a scale and offset per row of the weights, the bias in its
    // own scale; constant weights (the packed GEMM) and mutable ones.
    for (m, k, n, src, dest) in [(13u64, 9u64, 21u64, x, y), (3, 4, 5, xs, sat)] {
        let sc: Vec<String> = (0..n)
            .map(|j| format!("{:?}", 0.015625f32 * (1 + j % 5) as f32))
            .collect();
        let of: Vec<String> = (0..n).map(|j| (j as i64 % 7 - 3).to_string()).collect();
        for wm in ["const", "mutable"] {
            let d = p.weight(&format!("{dest}<{m} x {n}>"));
            let s = p.weight(&format!("{src}<{m} x {k}>"));
            let w = p.weight_of(&format!("i8[S:1.0 O:0]<{n} x {k}>"), wm);
            let b = p.weight_of(&format!("i32[S:0.0003 O:0]<{n}>"), "const");
            let f1 = p.weight_of(
                &format!("float<{n}>"),
                &format!("const {{ Data: [{}] }}", sc.join(", ")),
            );
            let f2 = p.weight_of(
                &format!("index32<{n}>"),
                &format!("const {{ Data: [{}] }}", of.join(", ")),
            );
            p.inst(&format!("rowwisequantizedfullyconnected @out %{d}, @in %{s}, @in %{w}, @in %{b}, @in %{f1}, @in %{f2}"));
        }
    }
    // Dynamic: float rows quantized at run time. The GEMM's tile edges
    // (rows past the 6- and 4-row tiles and the 24-row chunk, odd inner
    // sizes, column tails), constant (packed) and run-time weights, and an
    // inner size past the stack band (the reference loops).
    for (m, k, n) in [
        (13u64, 31u64, 33u64),
        (50, 8, 16),
        (1, 64, 40),
        (7, 1, 3),
        (2, 6000, 3),
    ] {
        let ins = [
            format!("float<{m} x {k}>"),
            format!("i8[S:0.0625 O:-3]<{k} x {n}>"),
            format!("float<{n}>"),
        ];
        let ins: Vec<&str> = ins.iter().map(String::as_str).collect();
        let dest = format!("float<{m} x {n}>");
        p.op_const("dynamicquantizedfullyconnected", &dest, &ins, &[1, 2], "");
        p.op("dynamicquantizedfullyconnected", &dest, &ins, "");
    }
    // quantizationprofile: a state Glow starts with (the first tensor sets
    // the range), then two more tensors that widen it (re-binning); a state
    // of seeded values (fractional counts, any range).
    for bins in [1u64, 7, 64] {
        let h = p.weight_of(&format!("float<{bins}>"), "mutable { Data: splat(0.0) }");
        let ci = p.weight_of(
            "float<2>",
            "mutable { Data: [3.4028235e38, -3.4028235e38] }",
        );
        for dims in ["3 x 5", "17", "2 x 2 x 9"] {
            let x = p.weight(&format!("float<{dims}>"));
            p.inst(&format!(
                "quantizationprofile @in %{x}, @inout %{h}, @inout %{ci}"
            ));
        }
        let (x, h2, c2) = (
            p.weight("float<40>"),
            p.weight(&format!("float<{bins}>")),
            p.weight("float<2>"),
        );
        p.inst(&format!(
            "quantizationprofile @in %{x}, @inout %{h2}, @inout %{c2}"
        ));
    }
    for (m, k, n) in [(13u64, 9u64, 21u64), (3, 4, 5)] {
        let sc: Vec<String> = (0..n)
            .map(|j| format!("{:?}", 0.015625f32 * (1 + j % 5) as f32))
            .collect();
        let of: Vec<String> = (0..n)
            .map(|j| (j as i64 * 37 % 256 - 128).to_string())
            .collect();
        for wm in ["const", "mutable"] {
            let d = p.weight(&format!("float<{m} x {n}>"));
            let s = p.weight(&format!("float<{m} x {k}>"));
            let w = p.weight_of(&format!("i8[S:1.0 O:0]<{k} x {n}>"), wm);
            let b = p.weight_of(&format!("float<{n}>"), "mutable");
            let f1 = p.weight_of(
                &format!("float<{n}>"),
                &format!("const {{ Data: [{}] }}", sc.join(", ")),
            );
            let f2 = p.weight_of(
                &format!("index32<{n}>"),
                &format!("const {{ Data: [{}] }}", of.join(", ")),
            );
            p.inst(&format!("dynamicrowwisequantizedfullyconnected @out %{d}, @in %{s}, @in %{w}, @in %{b}, @in %{f1}, @in %{f2}"));
        }
    }
    p.op(
        "matmul",
        &format!("{y}<4 x 6>"),
        &[&format!("{x}<4 x 5>"), &format!("{a}<5 x 6>")],
        "",
    );
    p.op(
        "batchmatmul",
        &format!("{o}<2 x 3 x 4>"),
        &[&format!("{a}<2 x 3 x 5>"), &format!("{u}<2 x 5 x 4>")],
        "",
    );
    for (k, st, pads, extra) in [
        ("[2, 2]", "[2, 2]", "[0, 0, 0, 0]", ""),
        ("[3, 3]", "[1, 2]", "[1, 1, 1, 1]", ""),
        (
            "[3, 3]",
            "[2, 2]",
            "[1, 0, 1, 2]",
            ", CountIncludePads: false",
        ),
    ] {
        let m = format!("Kernels: {k}, Strides: {st}, Pads: {pads}");
        let s_ = format!("{u}<1 x 6 x 7 x 3>");
        let out = |i: u64, k: u64, s: u64, p: u64| (i + p - k) / s + 1;
        let kk: u64 = k[1..2].parse().unwrap();
        let sv: Vec<u64> = st[1..st.len() - 1]
            .split(", ")
            .map(|v| v.parse().unwrap())
            .collect();
        let pv: Vec<u64> = pads[1..pads.len() - 1]
            .split(", ")
            .map(|v| v.parse().unwrap())
            .collect();
        let (oh, ow) = (
            out(6, kk, sv[0], pv[0] + pv[2]),
            out(7, kk, sv[1], pv[1] + pv[3]),
        );
        let d_ = format!("{sat}<1 x {oh} x {ow} x 3>");
        p.op("maxpool", &d_, &[&s_], &m);
        p.op("avgpool", &d_, &[&s_], &format!("{m}{extra}"));
        p.op("maxpool", &format!("{u}<1 x {oh} x {ow} x 3>"), &[&s_], &m);
    }
}

fn build() -> String {
    let mut p = Prog::default();
    let shapes: [&[u64]; 3] = [&[7], &[3, 5], &[2, 3, 4]];
    for s in shapes {
        let t = f(s);
        for op in [
            "elementadd",
            "elementsub",
            "elementmul",
            "elementdiv",
            "elementmax",
            "elementmin",
            "elementpow",
            "elementfmod",
        ] {
            p.op(op, &t, &[&t, &t], "");
        }
        for op in ["relu", "sigmoid", "tanh"] {
            p.op(op, &t, &[&t], "");
        }
        p.op("clip", &t, &[&t], "Min: -0.25, Max: 0.5");
        p.op("leakyrelu", &t, &[&t], "Alpha: 0.3");
        for op in [
            "elementexp",
            "elementlog",
            "elementsqrt",
            "elementrsqrt",
            "elementreciprocal",
            "elementneg",
            "elementabs",
            "elementerf",
            "elementsin",
            "elementcos",
            "elementfloor",
            "elementceil",
            "elementround",
            "elementsign",
            "elementacos",
            "elementasin",
            "elementatan",
            "elementacosh",
            "elementasinh",
            "elementatanh",
            "elementcosh",
            "elementsinh",
            "elementtan",
            "softplus",
        ] {
            p.op(op, &t, &[&t], "");
        }
        p.op("elu", &t, &[&t], "Alpha: 0.7");
        p.op("selu", &t, &[&t], "");
        p.op("celu", &t, &[&t], "Alpha: 1.5");
        p.op("gelu", &t, &[&t], "");
        p.op("gelu", &t, &[&t], "Approximate: true");
        p.op("elementrsubconst", &t, &[&t], "LHS: 0.5");
        p.op("elementmulconst", &t, &[&t], "LHS: -1.75");
        p.op("elementtruncate", &t, &[&t], "");
        p.op("hardswish", &t, &[&t], "");
        p.op("nantonum", &t, &[&t], "Nan: 1, PosInf: 2, NegInf: -3");
        p.op("elementisnan", &t.replace("float", "bool"), &[&t], "");
        let b = t.replace("float", "bool");
        for op in [
            "elementcmplte",
            "elementcmpeq",
            "elementcmpneq",
            "elementcmplt",
        ] {
            p.op(op, &b, &[&t, &t], "");
        }
        for op in ["elementand", "elementor", "elementxor"] {
            p.op(op, &b, &[&b, &b], "");
        }
        p.op("elementnot", &b, &[&b], "");
        // gather along every axis, index64 ids (random in [0, 8): some out of range).
        for axis in 0..s.len() {
            let mut out = s.to_vec();
            out[axis] = 3;
            p.op(
                "gather",
                &f(&out),
                &[&t, "index64<3>"],
                &format!("Axis: {axis}"),
            );
        }
        p.op("elementselect", &t, &[&b, &t, &t], "");
        p.op("copy", &t, &[&t], "");
        p.op("splat", &t, &[], "Value: 0.75");
        for k in ["index32", "index64", "int8", "uint8"] {
            let it = t.replace("float", k);
            for op in [
                "elementadd",
                "elementsub",
                "elementmul",
                "elementdiv",
                "elementmax",
                "elementmin",
            ] {
                p.op(op, &it, &[&it, &it], "");
            }
            for op in [
                "elementpow",
                "elementfmod",
                "elementbitwiseand",
                "elementbitwiseor",
                "elementbitwisexor",
                "elementbitshiftleft",
                "elementbitshiftright",
            ] {
                p.op(op, &it, &[&it, &it], "");
            }
            p.op("elementbitwisenot", &it, &[&it], "");
            p.op("modulo", &it, &[&it], "Divisor: 3");
            p.op(
                "modulo",
                &it,
                &[&it],
                "Divisor: -5, SignFollowDivisor: true",
            );
            p.op("elementcmplte", &b, &[&it, &it], "");
            p.op("elementcmplt", &b, &[&it, &it], "");
            p.op("elementselect", &it, &[&b, &it, &it], "");
        }
    }
    for q in [
        "i8[S:0.01 O:3]",
        "ui8[S:0.0078125 O:128]",
        "i16[S:0.001 O:-7]",
        "i32[S:0.0001 O:5]",
    ] {
        let qt = format!("{q}<3 x 4>");
        p.op("quantize", &qt, &[&f(&[3, 4])], "");
        p.op("dequantize", &f(&[3, 4]), &[&qt], "");
        let base = q.split('[').next().unwrap_or("i8");
        p.op(
            "rescalequantized",
            &format!("{base}[S:0.02 O:1]<3 x 4>"),
            &[&qt],
            "",
        );
        p.op("splat", &qt, &[], "Value: -0.3");
        p.op("elementcmplte", "bool<3 x 4>", &[&qt, &qt], "");
    }
    // quantize on ties (x / S ends in .5) with odd offsets: x / S is rounded
    // half to even before the offset is added, in both engines.
    let ties =
        "const { Data: [21.25, -21.25, 0.25, 0.75, -0.25, -0.75, 1.25, 63.75, -64.25, 5.0] }";
    for q in ["i8[S:0.5 O:-43]", "i8[S:0.5 O:7]", "ui8[S:0.5 O:127]"] {
        let x = p.weight_of(&f(&[10]), ties);
        let d = p.weight(&format!("{q}<10>"));
        p.inst(&format!("quantize @out %{d}, @in %{x}"));
    }
    // Per-axis quantize and dequantize along each axis of a 3-D tensor
    // (scales from the seeded data, so some negative; offsets beyond the
    // byte range too, which the clamp absorbs).
    for axis in 0..3u64 {
        let dims = [3u64, 4, 5];
        let n = dims[axis as usize];
        for byte in ["int8", "uint8"] {
            let x = p.weight(&f(&dims));
            let sc = p.weight(&format!("float<{n}>"));
            let off = p.weight(&format!("index32<{n}>"));
            let q = p.weight(&format!("{byte}<3 x 4 x 5>"));
            p.inst(&format!(
                "quantize @out %{q}, @in %{x}, @in %{sc}, @in %{off} {{ Axis: {axis} }}"
            ));
            let d = p.weight(&f(&dims));
            p.inst(&format!(
                "dequantize @out %{d}, @in %{q}, @in %{sc}, @in %{off} {{ Axis: {axis} }}"
            ));
            // Per-axis rescalequantized: constant parameters in range.
            let list = |v: Vec<String>| v.join(", ");
            let scales = list(
                (0..n)
                    .map(|c| format!("{}", 0.05 * (c + 1) as f32))
                    .collect(),
            );
            let offs = list(
                (0..n)
                    .map(|c| {
                        (if byte == "int8" {
                            c as i64 * 7 - 9
                        } else {
                            c as i64 * 40
                        })
                        .to_string()
                    })
                    .collect(),
            );
            let rsc = p.weight_of(
                &format!("float<{n}>"),
                &format!("const {{ Data: [{scales}] }}"),
            );
            let roff = p.weight_of(
                &format!("index32<{n}>"),
                &format!("const {{ Data: [{offs}] }}"),
            );
            let r = p.weight("ui8[S:0.125 O:100]<3 x 4 x 5>");
            p.inst(&format!(
                "rescalequantized @out %{r}, @in %{q}, @in %{rsc}, @in %{roff} {{ Axis: {axis} }}"
            ));
        }
    }
    quantized_cases(&mut p);
    // convertto between every two plain kinds.
    let kinds = ["float", "index32", "index64", "int8", "uint8", "bool"];
    for d in kinds {
        for s in kinds.iter().filter(|&&s| s != d) {
            p.op(
                "convertto",
                &format!("{d}<3 x 4>"),
                &[&format!("{s}<3 x 4>")],
                "",
            );
        }
    }
    for dims in [vec![5u64], vec![3, 4, 5], vec![2, 3, 2, 3]] {
        for axis in 0..dims.len() {
            let mut out: Vec<u64> = dims
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != axis)
                .map(|(_, d)| *d)
                .collect();
            if out.is_empty() {
                out.push(1);
            }
            for op in [
                "batchedreduceadd",
                "batchedreducemax",
                "batchedreducemin",
                "batchedreduceprod",
            ] {
                p.op(op, &f(&out), &[&f(&dims)], &format!("Axis: {axis}"));
            }
        }
    }
    for dims in [vec![2u64, 3, 4], vec![2, 1, 3, 2]] {
        for perm in permutations(dims.len()) {
            let out: Vec<u64> = perm.iter().map(|&k| dims[k]).collect();
            let sh: Vec<String> = perm.iter().map(|k| k.to_string()).collect();
            p.op(
                "transpose",
                &f(&out),
                &[&f(&dims)],
                &format!("Shuffle: [{}]", sh.join(", ")),
            );
        }
    }
    let big = [4u64, 5, 6];
    // Float and quantized bytes (the data movement copies them as they are).
    for elem in ["float", "i8[S:0.5 O:3]", "ui8[S:0.25 O:128]"] {
        let ty = |d: &[u64]| f(d).replacen("float", elem, 1);
        for axis in 0..3 {
            let mut small = big;
            small[axis] = 2;
            let mut offs = [0i64, 0, 0];
            offs[axis] = 1;
            let e: Vec<String> = offs.iter().map(|v| v.to_string()).collect();
            p.op(
                "extracttensor",
                &ty(&small),
                &[&ty(&big)],
                &format!("Offsets: [{}]", e.join(", ")),
            );
            let o = "1, 1, 1";
            // inserttensor: Count 2 along the axis into a copy of an input.
            let mut piece = [2u64, 3, 4];
            piece[axis] = 1;
            let d = p.weight(&ty(&big));
            let init = p.weight(&ty(&big));
            let s = p.weight(&ty(&piece));
            p.inst(&format!("copy @out %{d}, @in %{init}"));
            p.inst(&format!(
                "inserttensor @inout %{d}, @in %{s} {{ Offsets: [{o}], Count: 2, Axis: {axis} }}"
            ));
        }
    }
    let mut bn_grads = Vec::new();
    for (dims, ch) in [
        (vec![2u64, 3, 4, 5], 0usize),
        (vec![2, 3, 4, 5], 1),
        (vec![2, 3, 4, 5], 2),
        (vec![2, 3, 4, 5], 3),
        (vec![6, 2], 1),
    ] {
        let c = f(&[dims[ch]]);
        // Var is squared through elementmul so it is not negative.
        let var = p.weight(&c);
        let v = p.weight(&c);
        p.inst(&format!("elementmul @out %{var}, @in %{v}, @in %{v}"));
        let (d, s, sc, b, m) = (
            p.weight(&f(&dims)),
            p.weight(&f(&dims)),
            p.weight(&c),
            p.weight(&c),
            p.weight(&c),
        );
        p.inst(&format!(
            "batchnormalization @out %{d}, @in %{s}, @in %{sc}, @in %{b}, @in %{m}, @in %{var} {{ ChannelIdx: {ch}, Epsilon: 0.001, Momentum: 0.9 }}"
        ));
        bn_grads.push((dims, ch, s, sc, m, var));
    }
    p.op(
        "batchedadd",
        &f(&[3, 2, 4]),
        &[&f(&[3, 2, 4]), &f(&[2, 4])],
        "",
    );
    p.op(
        "fullyconnected",
        &f(&[3, 5]),
        &[&f(&[3, 7]), &f(&[7, 5]), &f(&[5])],
        "",
    );
    p.op("matmul", &f(&[4, 6]), &[&f(&[4, 3]), &f(&[3, 6])], "");
    // GEMM tile edges: rows not a multiple of 6, columns not a multiple of
    // 16, with the right-hand side at run time and packed as a constant.
    for (m, k, n) in [
        (1, 64, 40),
        (6, 5, 16),
        (7, 3, 17),
        (13, 33, 48),
        (12, 1, 1),
    ] {
        for consts in [&[][..], &[1, 2][..]] {
            p.op_const(
                "fullyconnected",
                &f(&[m, n]),
                &[&f(&[m, k]), &f(&[k, n]), &f(&[n])],
                consts,
                "",
            );
            p.op_const(
                "matmul",
                &f(&[m, n]),
                &[&f(&[m, k]), &f(&[k, n])],
                &consts[..consts.len().min(1)],
                "",
            );
        }
    }
    p.op(
        "batchmatmul",
        &f(&[3, 7, 17]),
        &[&f(&[3, 7, 9]), &f(&[3, 9, 17])],
        "",
    );
    p.op(
        "batchmatmul",
        &f(&[2, 3, 5]),
        &[&f(&[2, 3, 4]), &f(&[2, 4, 5])],
        "",
    );
    p.op("softmax", &f(&[3, 17]), &[&f(&[3, 17])], "");
    p.op(
        "layernormalization",
        &f(&[2, 3, 17]),
        &[&f(&[2, 3, 17]), &f(&[17]), &f(&[17])],
        "Epsilon: 0.001",
    );
    p.op("softmax", &f(&[1, 5]), &[&f(&[1, 5])], "");
    for h in [0, 1, 2, 9] {
        let t = f(&[2, 3, 7]);
        let (d, s, sc) = (p.weight(&t), p.weight(&t), p.weight(&t));
        let m = format!("HalfWindowSize: {h}, Alpha: 0.5, Beta: 0.75, K: 2.0");
        p.inst(&format!(
            "localresponsenormalization @out %{d}, @in %{s}, @out %{sc} {{ {m} }}"
        ));
        // The gradient reads the forward's Dest and Scale (a random Scale
        // would be mostly negative, and powf of it NaN).
        let (dg, sg) = (p.weight(&t), p.weight(&t));
        p.inst(&format!(
            "localresponsenormalizationgrad @in %{d}, @in %{s}, @in %{sc}, @in %{dg}, @out %{sg} {{ {m} }}"
        ));
    }
    convolutions(&mut p);
    conv_transposes(&mut p);
    conv_grads(&mut p);
    pools(&mut p);
    pool_grads(&mut p);
    index_ops(&mut p);
    sparse_cases(&mut p);
    detection_cases(&mut p);
    training_cases(&mut p);
    // A tensorview into an output, and a debugprint.
    let o = p.weight(&f(&[4, 3]));
    p.inst(&format!("splat @out %{o} {{ Value: 2.0 }}"));
    let src = p.weight(&f(&[3]));
    p.n += 1;
    let view = format!("v{}", p.n);
    p.code.push(format!(
        "  %{view} = tensorview @in %{o} {{ Ty: float<3>, Offsets: [2, 0] }}"
    ));
    p.inst(&format!("relu @out %{view}, @in %{src}"));
    p.inst(&format!("debugprint @in %{o}"));
    // The same into a quantized output: a quantized relu writes the view.
    let qo = p.weight("i8[S:0.5 O:3]<4 x 3>");
    p.inst(&format!("splat @out %{qo} {{ Value: 1.0 }}"));
    let qsrc = p.weight("i8[S:0.25 O:-1]<3>");
    p.n += 1;
    let qview = format!("v{}", p.n);
    p.code.push(format!(
        "  %{qview} = tensorview @in %{qo} {{ Ty: i8[S:0.5 O:3]<3>, Offsets: [1, 0] }}"
    ));
    p.inst(&format!("relu @out %{qview}, @in %{qsrc}"));
    // Each batchnormalization's gradient over its statistics and a random
    // DestGrad, last so the weights before keep their names (and data).
    for (dims, ch, s, sc, m, var) in bn_grads {
        let c = f(&[dims[ch]]);
        let (dg, sg) = (p.weight(&f(&dims)), p.weight(&f(&dims)));
        let (scg, bg) = (p.weight(&c), p.weight(&c));
        p.inst(&format!(
            "batchnormalizationgrad @in %{s}, @in %{sc}, @in %{m}, @in %{var}, @in %{dg}, @out %{sg}, @out %{scg}, @out %{bg} {{ ChannelIdx: {ch}, Epsilon: 0.001 }}"
        ));
    }
    topk_cases(&mut p);
    rearrange_cases(&mut p);
    conv3d_cases(&mut p);
    p.text()
}

/// `convolution3d`: windows larger than one on each axis, strides,
/// asymmetric pads (Glow's near, far, top, bottom, left, right), groups,
/// a one-pixel output, runtime and constant filters.
fn conv3d_cases(p: &mut Prog) {
    type Case = ([u64; 5], u64, [u64; 3], [u64; 3], [u64; 6], u64);
    let cases: [Case; 5] = [
        (
            [1, 3, 4, 5, 3],
            4,
            [2, 3, 2],
            [1, 1, 1],
            [0, 0, 0, 0, 0, 0],
            1,
        ),
        (
            [2, 4, 5, 5, 4],
            6,
            [3, 3, 3],
            [2, 1, 2],
            [1, 0, 2, 1, 0, 1],
            2,
        ),
        (
            [1, 2, 3, 3, 6],
            6,
            [1, 1, 1],
            [1, 2, 2],
            [0, 1, 1, 0, 1, 1],
            3,
        ),
        (
            [1, 2, 2, 2, 2],
            5,
            [2, 2, 2],
            [1, 1, 1],
            [0, 0, 0, 0, 0, 0],
            1,
        ),
        (
            [1, 3, 3, 4, 2],
            2,
            [3, 3, 3],
            [1, 1, 1],
            [1, 1, 1, 1, 1, 1],
            2,
        ),
    ];
    for (i, (s, oc, k, st, pads, g)) in cases.into_iter().enumerate() {
        let out = |a: usize| (s[a + 1] + pads[2 * a] + pads[2 * a + 1] - k[a]) / st[a] + 1;
        let dest = f(&[s[0], out(0), out(1), out(2), oc]);
        let filter = f(&[oc, k[0], k[1], k[2], s[4] / g]);
        let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let members = format!(
            "Kernels: [{}], Strides: [{}], Pads: [{}], Group: {g}",
            list(&k),
            list(&st),
            list(&pads)
        );
        let consts: &[usize] = if i % 2 == 0 { &[1, 2] } else { &[] };
        p.op_const(
            "convolution3d",
            &dest,
            &[&f(&s), &filter, &f(&[oc])],
            consts,
            &members,
        );
    }
}

/// The rearranging instructions: `pad` in each mode (with crops), the
/// resizes (up, down, fractional), `spacetodepth`, `flip` on each axis,
/// `cumsum` in each direction on float and integer kinds, `nonzero`, `mean`,
/// `concat` of every kind.
fn rearrange_cases(p: &mut Prog) {
    let kinds = ["float", "index64", "int8", "i8[S:0.5 O:3]"];
    let ty = |k: &str, d: &[u64]| f(d).replace("float", k);
    for (i, mode) in (0..4).enumerate() {
        let k = kinds[i];
        p.op(
            "pad",
            &ty(k, &[5, 8, 2]),
            &[&ty(k, &[2, 3, 2])],
            &format!("Pad: [1, 4, 0, 2, 1, 0], PaddingMode: {mode}, Value: 2.5"),
        );
        p.op(
            "pad",
            &ty(k, &[1, 2, 4]),
            &[&ty(k, &[2, 3, 2])],
            &format!("Pad: [0, -1, 1, -1, 0, 1], PaddingMode: {mode}"),
        );
    }
    p.op(
        "pad",
        "bool<4 x 4>",
        &["bool<2 x 2>"],
        "Pad: [1, 1, 1, 1], Value: 1",
    );
    let resizes: [(&[u64], &[u64], &str); 3] = [
        (&[1, 3, 4, 2], &[1, 6, 8, 2], "1, 2, 2, 1"),
        (&[2, 5, 4, 3], &[2, 2, 6, 3], "1, 0.5, 1.5, 1"),
        (&[1, 3, 3, 1], &[1, 7, 4, 1], "1, 2.4, 1.4, 1"),
    ];
    for (s, d, scale) in resizes {
        for op in ["resizenearest", "resizebilinear"] {
            p.op(op, &f(d), &[&f(s)], &format!("Scale: [{scale}]"));
        }
    }
    p.op(
        "resizenearest",
        &ty("index32", &[4, 3, 2]),
        &[&ty("index32", &[2, 3, 1])],
        "Scale: [2, 1, 2]",
    );
    p.op(
        "spacetodepth",
        &f(&[2, 2, 1, 12]),
        &[&f(&[2, 4, 2, 3])],
        "BlockSize: 2",
    );
    p.op(
        "spacetodepth",
        &ty("int8", &[1, 1, 1, 18]),
        &[&ty("int8", &[1, 3, 3, 2])],
        "BlockSize: 3",
    );
    for axis in 0..3 {
        p.op(
            "flip",
            &f(&[2, 3, 4]),
            &[&f(&[2, 3, 4])],
            &format!("Axis: {axis}"),
        );
    }
    p.op("flip", "bool<5>", &["bool<5>"], "Axis: 0");
    for k in ["float", "index64", "index32", "int8", "uint8"] {
        for (dim, ex, rev) in [
            (0, false, false),
            (1, true, false),
            (-1, false, true),
            (2, true, true),
        ] {
            let t = ty(k, &[2, 3, 4]);
            p.op(
                "cumsum",
                &t,
                &[&t],
                &format!("Dim: {dim}, Exclusive: {ex}, Reverse: {rev}"),
            );
        }
    }
    p.op("nonzero", "index32<12>", &["bool<3 x 4>"], "");
    // `mean` over one, two (listed out of order, or kept as 1) and every
    // dimension.
    let means: [(&str, &[u64]); 6] = [
        ("0", &[5, 7]),
        ("1", &[3, 1, 7]),
        ("2", &[3, 5]),
        ("2, 0", &[5]),
        ("1, 2", &[3, 1, 1]),
        ("0, 1, 2", &[1]),
    ];
    for (dims, out) in means {
        p.op(
            "mean",
            &f(out),
            &[&f(&[3, 5, 7])],
            &format!("MeanDims: [{dims}]"),
        );
    }
    // `concat` of every element kind on each axis, one to three inputs.
    for k in [
        "float",
        "index64",
        "index32",
        "int8",
        "uint8",
        "bool",
        "i8[S:0.5 O:3]",
    ] {
        for axis in 0..3usize {
            let parts: [u64; 3] = [2, 1, 3];
            let ins: Vec<String> = parts
                .iter()
                .map(|&n| {
                    let mut d = vec![2, 3, 4];
                    d[axis] = n;
                    ty(k, &d)
                })
                .collect();
            let mut d = vec![2u64, 3, 4];
            d[axis] = 6;
            let refs: Vec<&str> = ins.iter().map(String::as_str).collect();
            p.op("concat", &ty(k, &d), &refs, &format!("Axis: {axis}"));
        }
        let one = ty(k, &[3, 2]);
        p.op("concat", &one, &[&one], "Axis: 1");
    }
    indexing_cases(p);
}

/// bucketize, batchonehot (float, integer and quantized), scatterdata
/// (copy of any kind, cumulative float and integer; random indices in 0..8,
/// some outside `Data`), adaptiveavgpool (up and down), indexadd on each
/// dimension.
fn indexing_cases(p: &mut Prog) {
    let ty = |k: &str, d: &[u64]| f(d).replace("float", k);
    p.op(
        "bucketize",
        "index32<3 x 7>",
        &[&f(&[3, 7])],
        "Boundaries: [-0.5, 0, 0, 0.25, 0.9]",
    );
    p.op("bucketize", "index32<4>", &[&f(&[4])], "Boundaries: []");
    for k in ["float", "index64", "index32", "i8[S:0.5 O:1]"] {
        p.op(
            "batchonehot",
            &ty(k, &[3, 9]),
            &[&ty(k, &[3, 4]), "index32<4>", &ty(k, &[9])],
            "",
        );
    }
    for (k, cumulative) in [
        ("float", false),
        ("bool", false),
        ("int8", false),
        ("float", true),
        ("index64", true),
        ("uint8", true),
    ] {
        let data = p.weight(&ty(k, &[8, 3, 2]));
        let idx = p.weight("index64<6 x 2>");
        let sl = p.weight(&ty(k, &[6, 2]));
        p.inst(&format!(
            "scatterdata @inout %{data}, @in %{idx}, @in %{sl} {{ Cumulative: {cumulative} }}"
        ));
        let idx1 = p.weight("index32<5 x 1>");
        let sl1 = p.weight(&ty(k, &[5, 3, 2]));
        p.inst(&format!(
            "scatterdata @inout %{data}, @in %{idx1}, @in %{sl1} {{ Cumulative: {cumulative} }}"
        ));
    }
    for (s, d) in [
        ([2, 5, 7, 3], [2, 3, 2, 3]),
        ([1, 3, 4, 2], [1, 7, 9, 2]),
        ([1, 6, 6, 1], [1, 6, 6, 1]),
    ] {
        p.op("adaptiveavgpool", &f(&d), &[&f(&s)], "");
    }
    for (seed, d) in [(0, &[7u64][..]), (-3, &[3, 4, 5]), (123456789, &[2, 33])] {
        let t = f(d);
        p.op(
            "gaussianfill",
            &t,
            &[&t.replace("float", "index64")],
            &format!("Mean: -0.5, Scale: 0.75, Seed: {seed}"),
        );
    }
    let dims = [3u64, 4, 5];
    for dim in 0..3 {
        let mut sd = dims.to_vec();
        sd[dim] = 6;
        p.op(
            "indexadd",
            &f(&dims),
            &[&f(&dims), "index64<6>", &f(&sd)],
            &format!("Dim: {dim}, Alpha: -1.5"),
        );
    }
}

/// topk: the K largest and smallest of each last-dimension row.
fn topk_cases(p: &mut Prog) {
    let shapes: [&[u64]; 3] = [&[7], &[3, 5], &[2, 3, 4]];
    for s in shapes {
        let k = s.last().map_or(1, |&n| n.min(3));
        let mut kd = s.to_vec();
        if let Some(last) = kd.last_mut() {
            *last = k;
        }
        for (largest, it) in [(true, "index64"), (false, "index32")] {
            let (x, v) = (p.weight(&f(s)), p.weight(&f(&kd)));
            let i = p.weight(&f(&kd).replace("float", it));
            p.inst(&format!(
                "topk @out %{v}, @out %{i}, @in %{x} {{ K: {k}, Largest: {largest} }}"
            ));
        }
    }
}

/// The training instructions of docs/training.md, "Activation gradients, loss
/// and update". Labels are random in [0, 8) over at least 8 classes, so in
/// range; one const case has labels out of range (NaN rows, no read).
fn training_cases(p: &mut Prog) {
    for s in [&[7u64][..], &[3, 5], &[2, 3, 4]] {
        let t = f(s);
        for op in ["relugrad", "sigmoidgrad", "tanhgrad"] {
            let (d, g, sg) = (p.weight(&t), p.weight(&t), p.weight(&t));
            p.inst(&format!("{op} @in %{d}, @in %{g}, @out %{sg}"));
            // In place of DestGrad.
            let (d, g) = (p.weight(&t), p.weight(&t));
            p.inst(&format!("{op} @in %{d}, @in %{g}, @out %{g}"));
        }
        // Dest from the forward op, so relugrad sees exact zeros.
        for (fwd, op) in [
            ("relu", "relugrad"),
            ("sigmoid", "sigmoidgrad"),
            ("tanh", "tanhgrad"),
        ] {
            let (x, y, g, sg) = (p.weight(&t), p.weight(&t), p.weight(&t), p.weight(&t));
            p.inst(&format!("{fwd} @out %{y}, @in %{x}"));
            p.inst(&format!("{op} @in %{y}, @in %{g}, @out %{sg}"));
        }
    }
    for (n, c, lk) in [
        (3u64, 8u64, "index64<3>"),
        (5, 10, "index32<5 x 1>"),
        (1, 9, "index64<1 x 1>"),
        (6, 11, "index32<6>"),
    ] {
        let t = f(&[n, c]);
        // Probabilities from a softmax of random logits.
        let (x, prob) = (p.weight(&t), p.weight(&t));
        p.inst(&format!("softmax @out %{prob}, @in %{x}"));
        let (lab, sg) = (p.weight(lk), p.weight(&t));
        p.inst(&format!(
            "softmaxgrad @in %{prob}, @in %{x}, @in %{lab}, @out %{sg}"
        ));
        let ce = p.weight("float<1>");
        p.inst(&format!(
            "crossentropyloss @in %{prob}, @in %{lab}, @out %{ce}"
        ));
        let (cg, pg, lg) = (p.weight("float<1>"), p.weight(&t), p.weight(lk));
        p.inst(&format!(
            "crossentropylossgrad @in %{cg}, @in %{prob}, @in %{lab}, @out %{pg}, @out %{lg}"
        ));
    }
    let t = f(&[4, 8]);
    let (x, prob) = (p.weight(&t), p.weight(&t));
    p.inst(&format!("softmax @out %{prob}, @in %{x}"));
    let lab = p.weight_of("index64<4>", "const { Data: [0, -1, 8, 7] }");
    let (sg, ce) = (p.weight(&t), p.weight("float<1>"));
    p.inst(&format!(
        "softmaxgrad @in %{prob}, @in %{x}, @in %{lab}, @out %{sg}"
    ));
    p.inst(&format!(
        "crossentropyloss @in %{prob}, @in %{lab}, @out %{ce}"
    ));
    let (cg, pg, lg) = (p.weight("float<1>"), p.weight(&t), p.weight("index64<4>"));
    p.inst(&format!(
        "crossentropylossgrad @in %{cg}, @in %{prob}, @in %{lab}, @out %{pg}, @out %{lg}"
    ));
    // The binary cross-entropy losses over logits: weights of `Input`'s
    // dims and one per column, each reduction.
    for dims in [&[7u64][..], &[3, 5], &[2, 3, 4]] {
        let t = f(dims);
        let col = f(&dims[dims.len() - 1..]);
        for (op, weights) in [
            ("simplebinarycrossentropywithlogits", vec![]),
            ("weightbinarycrossentropywithlogits", vec![t.clone()]),
            ("weightbinarycrossentropywithlogits", vec![col.clone()]),
            ("posweightbinarycrossentropywithlogits", vec![col.clone()]),
            ("binarycrossentropywithlogits", vec![t.clone(), col.clone()]),
        ] {
            for r in 0..3 {
                let (x, y) = (p.weight(&t), p.weight(&t));
                let mut ins = format!("@in %{x}, @in %{y}");
                for w in &weights {
                    ins.push_str(&format!(", @in %{}", p.weight(w)));
                }
                let d = p.weight(if r == 0 { &t } else { "float<1>" });
                p.inst(&format!("{op} @out %{d}, {ins} {{ Reduction: {r} }}"));
            }
        }
    }
    // The pairwise dot products over variadic inputs and their gradient,
    // and the threshold gradient.
    for (n, batch, v) in [(2u64, 3u64, 5u64), (3, 1, 8), (5, 4, 3)] {
        let vt = f(&[batch, v]);
        let pt = f(&[batch, n * (n - 1) / 2]);
        let members = format!("{{ NumInputs: {n}, VectorSize: {v} }}");
        let srcs: Vec<String> = (0..n).map(|_| format!("@in %{}", p.weight(&vt))).collect();
        let d = p.weight(&pt);
        p.inst(&format!(
            "batchedpairwisedotproduct @out %{d}, {} {members}",
            srcs.join(", ")
        ));
        let grads: Vec<String> = (0..n).map(|_| format!("@out %{}", p.weight(&vt))).collect();
        let dg = p.weight(&pt);
        p.inst(&format!(
            "batchedpairwisedotproductgrad @in %{dg}, {}, {} {members}",
            grads.join(", "),
            srcs.join(", ")
        ));
    }
    for s in [&[7u64][..], &[3, 5]] {
        let t = f(s);
        let (d, g, x) = (p.weight(&t), p.weight(&t), p.weight(&t));
        p.inst(&format!(
            "thresholdgrad @out %{d}, @in %{g}, @in %{x} {{ Threshold: 0.25 }}"
        ));
    }
    for members in [
        "LearningRate: 0.1",
        "LearningRate: 0.05, Momentum: 0.9, L2Decay: 0.0001",
        "LearningRate: 0.3, Momentum: 0.5, L1Decay: 0.01, L2Decay: 0.02, BatchSize: 8",
        "LearningRate: 0.01, L1Decay: 0.001, BatchSize: 3",
    ] {
        let t = f(&[3, 5]);
        let (w, g, v) = (p.weight(&t), p.weight(&t), p.weight(&t));
        p.inst(&format!(
            "sgd @inout %{w}, @in %{g}, @inout %{v} {{ {members} }}"
        ));
    }
}

/// The index opcodes; index inputs are random in [0, 8), so some are out of range.
/// The recommendation instructions on random indices, lengths and offsets
/// (each in [0, 8)): tables of 6 rows, so some indices fall outside, and
/// lengths that run past the indices or stop short of them.
/// The detection instructions on random boxes and scores: Glow's layout
/// and the compact one, member and run-time limits (random indices in [0,
/// 8)), corner and centre boxes, TensorFlow's form, too few rows.
fn detection_cases(p: &mut Prog) {
    for (center, limit, iou, score) in [(0, 0, 0.3, -0.5), (1, 2, 0.0, 0.2), (0, 3, 0.7, 0.0)] {
        for (it, rows, compact) in [("index64", 12, false), ("index32", 5, true)] {
            let (b, s) = (p.weight(&f(&[2, 7, 4])), p.weight(&f(&[2, 3, 7])));
            let (i, c) = (
                p.weight(&format!("{it}<{rows} x 3>")),
                p.weight(&format!("{it}<6>")),
            );
            p.inst(&format!(
                "nonmaxsuppression @out %{i}, @out %{c}, @in %{b}, @in %{s} {{ CenterPointBox: {center}, MaxOutputBoxesPerClass: {limit}, IouThreshold: {iou}, ScoreThreshold: {score}, IsTFVersion4: false, Compact: {compact} }}"
            ));
        }
        let (b, s) = (p.weight(&f(&[9, 4])), p.weight(&f(&[9])));
        let (i, c) = (p.weight("index32<4>"), p.weight("index32<4>"));
        p.inst(&format!(
            "nonmaxsuppression @out %{i}, @out %{c}, @in %{b}, @in %{s} {{ CenterPointBox: {center}, MaxOutputBoxesPerClass: {limit}, IouThreshold: {iou}, ScoreThreshold: {score}, IsTFVersion4: true }}"
        ));
    }
    let (b, s) = (p.weight(&f(&[2, 7, 4])), p.weight(&f(&[2, 3, 7])));
    let (i, c) = (p.weight("index64<42 x 3>"), p.weight("index64<1>"));
    let (l, t, u) = (
        p.weight("index64<1>"),
        p.weight(&f(&[1])),
        p.weight(&f(&[1])),
    );
    p.inst(&format!(
        "nonmaxsuppression @out %{i}, @out %{c}, @in %{b}, @in %{s}, @in %{l}, @in %{t}, @in %{u} {{ Compact: true }}"
    ));
    // bboxtransform: random rois, deltas and image infos (batch numbers
    // in the first column truncate to 0 mostly, some negative), upright and
    // rotated, every flag.
    for (rotated, cols, apply, legacy, bound) in [
        (false, 4, true, true, true),
        (false, 5, false, false, true),
        (true, 5, true, false, true),
        (true, 6, false, true, false),
    ] {
        let d = if rotated { 5 } else { 4 };
        let (o, s) = (p.weight(&f(&[6, 2 * d])), p.weight(&f(&[2])));
        let (r, dl, info) = (
            p.weight(&f(&[6, cols])),
            p.weight(&f(&[6, 2 * d])),
            p.weight(&f(&[2, 3])),
        );
        p.inst(&format!(
            "bboxtransform @out %{o}, @out %{s}, @in %{r}, @in %{dl}, @in %{info} {{ Weights: [10.0, 10.0, 5.0, 5.0], ApplyScale: {apply}, Rotated: {rotated}, AngleBoundOn: {bound}, AngleBoundLo: -90, AngleBoundHi: 90, ClipAngleThresh: 1.0, LegacyPlusOne: {legacy} }}"
        ));
    }
    // mfcc: random ranges in [0, 8) (some empty, some past the 6-bin rows)
    // and a spectrogram that may be negative (NaN roots).
    p.op(
        "mfcc",
        &f(&[3, 4]),
        &[&f(&[3, 6]), &f(&[20]), "index32<10>", &f(&[4, 5])],
        "SampleRate: 8000.0, LowerFrequency: 20.0, UpperFrequency: 4000.0, FilterBankCount: 5, NumCoefficients: 4",
    );
    // roialign: random boxes (some inverted, some past the map), every
    // mode, given and box-derived sampling, the three box forms; batch
    // indices random in [0, 8), so some outside the map's 2.
    for (mode, ratio, aligned) in [("AVG", 2, false), ("MAX", 0, true), ("ONNX_MAX", 1, false)] {
        for (cols, rotated) in [(4, false), (5, false), (6, true)] {
            p.op(
                "roialign",
                &f(&[5, 2, 3, 3]),
                &[&f(&[2, 6, 7, 3]), &f(&[5, cols]), "index64<5>"],
                &format!(
                    "Mode: {mode}, OutputHeight: 2, OutputWidth: 3, SamplingRatio: {ratio}, SpatialScale: 2.5, Aligned: {aligned}, Rotated: {rotated}"
                ),
            );
        }
    }
}

fn sparse_cases(p: &mut Prog) {
    for (it, lt) in [("index64", "index32"), ("index32", "index64")] {
        for line in [&[3u64][..], &[2, 3]] {
            let mut data = vec![6u64];
            data.extend_from_slice(line);
            let mut dest = vec![4u64];
            dest.extend_from_slice(line);
            let (data, dest) = (f(&data), f(&dest));
            let (idx, len) = (format!("{it}<9>"), format!("{lt}<4>"));
            p.op("sparselengthssum", &dest, &[&data, &idx, &len], "");
            p.op(
                "sparselengthsweightedsum",
                &dest,
                &[&data, &f(&[9]), &idx, &len],
                "LengthsMode: AllOne",
            );
            p.op("lengthssum", &dest, &[&data, &len], "");
            for end in [false, true] {
                let offs = format!("{it}<{}>", if end { 5 } else { 4 });
                p.op(
                    "embeddingbag",
                    &dest,
                    &[&data, &f(&[9]), &idx, &offs],
                    &format!("HasEndOffset: {end}"),
                );
            }
        }
        p.op(
            "embedding",
            &f(&[2, 3, 5]),
            &[&f(&[6, 5]), &format!("{it}<2 x 3>")],
            "PadIdx: 2",
        );
        p.op(
            "embedding",
            "index64<4 x 2>",
            &["index64<6 x 2>", &format!("{it}<4>")],
            "",
        );
        p.op(
            "lengthstoranges",
            &format!("{it}<4 x 2>"),
            &[&format!("{lt}<4>")],
            "",
        );
        p.op(
            "lengthsrangefill",
            &format!("{it}<12>"),
            &[&format!("{lt}<4>")],
            "",
        );
        let (o, l) = (p.weight(&f(&[10])), p.weight(&format!("{it}<3>")));
        let (d, r) = (p.weight(&f(&[9])), p.weight(&format!("{it}<3 x 2 x 2>")));
        p.inst(&format!(
            "gatherranges @out %{o}, @out %{l}, @in %{d}, @in %{r}"
        ));
        p.op(
            "sparsetodensemask",
            &f(&[4, 3, 2]),
            &[
                &format!("{it}<9>"),
                &f(&[9, 2]),
                &f(&[2]),
                &format!("{lt}<4>"),
            ],
            "Mask: [5, 1, 2]",
        );
        p.op(
            "batchsparsetodense",
            &f(&[4, 5]),
            &[&format!("{lt}<4>"), &format!("{it}<9>"), &f(&[9])],
            "DefaultValue: -1.5, DenseLastDim: 5",
        );
        p.op(
            "batchsparsetodense",
            "index32<4 x 5>",
            &[&format!("{lt}<4>"), &format!("{it}<9>"), "index32<9>"],
            "DefaultValue: 7, DenseLastDim: 5",
        );
        for ind in ["bool<6>", &format!("{it}<6>")] {
            p.op(
                "fillexampleswithindicator",
                &f(&[6, 2]),
                &[&f(&[3, 2]), ind],
                "",
            );
        }
        let (lv, ei, gom) = (
            p.weight(&f(&[4, 3])),
            p.weight("index32<4 x 3>"),
            p.weight(&format!("{it}<12>")),
        );
        let (ln, ix, vs) = (
            p.weight(&format!("{lt}<5>")),
            p.weight(&format!("{it}<12>")),
            p.weight(&f(&[12])),
        );
        p.inst(&format!(
            "sparselabelsplit @out %{lv}, @out %{ei}, @out %{gom}, @in %{ln}, @in %{ix}, @in %{vs} {{ NumLabels: 4 }}"
        ));
        p.op(
            "rowwisequantizedsparselengthsweightedsum",
            &f(&[4, 3]),
            &[
                "ui8[S:0.5 O:3]<6 x 3>",
                &f(&[6]),
                &f(&[6]),
                &f(&[9]),
                &format!("{it}<9>"),
                &format!("{lt}<4>"),
            ],
            "",
        );
        // Two tables of sizes from the random TableOffsets (so indices land
        // inside and outside the 3 tasks' weights), 3 batches.
        p.op(
            "batchedunaryembeddingsbags",
            &f(&[3, 3, 2]),
            &[
                &f(&[3, 10]),
                &format!("{it}<3>"),
                &format!("{it}<7>"),
                &format!("{it}<9>"),
            ],
            "",
        );
        // Fused rows of random bytes: scales and offsets of any bits.
        for (kind, width, line) in [("ui8fused", 11u64, 3u64), ("ui4fused", 10, 4)] {
            let data = format!("{kind}[S:1.0 O:0]<6 x {width}>");
            let dest = f(&[4, line]);
            let (idx, len) = (format!("{it}<9>"), format!("{lt}<4>"));
            p.op(
                "fusedrowwisequantizedsparselengthsweightedsum",
                &dest,
                &[&data, &f(&[9]), &idx, &len],
                "",
            );
            p.op(
                "fusedrowwisequantizedsparselengthssum",
                &dest,
                &[&data, &idx, &len],
                "",
            );
            for end in [false, true] {
                let offs = format!("{it}<{}>", if end { 5 } else { 4 });
                p.op(
                    "embeddingbagbyterowwiseoffsets",
                    &dest,
                    &[&data, &f(&[9]), &idx, &offs],
                    &format!("HasEndOffset: {end}"),
                );
            }
        }
        p.op(
            "permutepooledembeddings",
            &f(&[3, 9]),
            &[
                &f(&[3, 9]),
                "index64<4>",
                "index64<3>",
                "index64<4>",
                "index64<3>",
            ],
            "",
        );
    }
}

fn index_ops(p: &mut Prog) {
    let dims = [2u64, 3, 4];
    let t = f(&dims);
    for axis in 0..3 {
        let mut id = dims.to_vec();
        id[axis] = 3;
        let it = format!(
            "index64<{}>",
            id.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(" x ")
        );
        let m = format!("Axis: {axis}");
        p.op("gatherelements", &f(&id), &[&t, &it], &m);
        for r in ["none", "add", "mul", "max", "min"] {
            let m = format!("Axis: {axis}, Reduction: {r}");
            p.op("scatterelements", &t, &[&t, &it, &f(&id)], &m);
        }
        for keep in [true, false] {
            let mut od = dims.to_vec();
            if keep {
                od[axis] = 1;
            } else {
                od.remove(axis);
            }
            let ot = format!(
                "index64<{}>",
                od.iter()
                    .map(|d| d.to_string())
                    .collect::<Vec<_>>()
                    .join(" x ")
            );
            for op in ["argmax", "argmin"] {
                for last in [false, true] {
                    let m = format!("Axis: {axis}, KeepDims: {keep}, SelectLastIndex: {last}");
                    p.op(op, &ot, &[&t], &m);
                }
            }
        }
    }
    p.op(
        "scatterelements",
        "index64<2 x 3 x 4>",
        &[
            "index64<2 x 3 x 4>",
            "index32<2 x 3 x 4>",
            "index64<2 x 3 x 4>",
        ],
        "Axis: 1, Reduction: add",
    );
    p.op(
        "scatterelements",
        "bool<2 x 3 x 4>",
        &["bool<2 x 3 x 4>", "index32<2 x 3 x 4>", "bool<2 x 3 x 4>"],
        "Axis: 2",
    );
    // Plain 8-bit integers combine in 64 bits and wrap to the width.
    for (k, r) in [("int8", "mul"), ("uint8", "add"), ("int8", "min")] {
        let t = format!("{k}<8 x 3>");
        let u = format!("{k}<5 x 3>");
        let m = format!("Reduction: {r}");
        p.op("scatternd", &t, &[&t, "index64<5 x 1>", &u], &m);
    }
    p.op("gathernd", &f(&[6, 4]), &[&t, "index64<6 x 2>"], "");
    p.op(
        "gathernd",
        &f(&[2, 5, 4]),
        &[&t, "index32<2 x 5 x 1>"],
        "BatchDims: 1",
    );
    p.op(
        "gathernd",
        &f(&[2, 2]),
        &[&t, "index64<2 x 2 x 2>"],
        "BatchDims: 1",
    );
    for r in ["none", "add", "mul", "max", "min"] {
        let m = format!("Reduction: {r}");
        p.op(
            "scatternd",
            &f(&[8, 3]),
            &[&f(&[8, 3]), "index64<5 x 1>", &f(&[5, 3])],
            &m,
        );
        p.op(
            "scatternd",
            &f(&[8, 3]),
            &[&f(&[8, 3]), "index32<4 x 2>", &f(&[4])],
            &m,
        );
    }
    p.op(
        "onehot",
        &f(&[3, 8, 4]),
        &["index64<3 x 4>"],
        "Axis: 1, OffValue: -0.5, OnValue: 2.0",
    );
    p.op(
        "onehot",
        "index32<3 x 4 x 6>",
        &["index32<3 x 4>"],
        "Axis: 2, OffValue: 3.0, OnValue: -7.0",
    );
    p.op("onehot", &f(&[5, 3, 4]), &["index64<3 x 4>"], "Axis: 0");
    p.op("logsoftmax", &f(&[3, 17]), &[&f(&[3, 17])], "");
    p.op("logsoftmax", &f(&[1, 5]), &[&f(&[1, 5])], "");
}

// The case table's row type is spelled out once, next to its legend.
#[allow(clippy::type_complexity)]
fn convolutions(p: &mut Prog) {
    // (layout, N, C, H, W, OC, group, kernel, stride, pads, dilation, fused)
    let cases: &[(
        &str,
        u64,
        u64,
        u64,
        u64,
        u64,
        u64,
        [u64; 2],
        [u64; 2],
        [u64; 4],
        [u64; 2],
        &str,
    )] = &[
        (
            "NHWC",
            1,
            3,
            5,
            5,
            4,
            1,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
            "NONE",
        ),
        (
            "NHWC",
            2,
            4,
            6,
            5,
            6,
            2,
            [3, 2],
            [2, 1],
            [0, 1, 2, 0],
            [1, 2],
            "RELU",
        ),
        (
            "NCHW",
            1,
            4,
            5,
            6,
            4,
            4,
            [2, 3],
            [1, 2],
            [1, 0, 0, 1],
            [2, 1],
            "NONE",
        ),
        (
            "NCHW",
            2,
            2,
            4,
            4,
            3,
            1,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
            "CLIP",
        ),
        (
            "NHWC",
            1,
            2,
            4,
            4,
            2,
            1,
            [1, 1],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
            "SIGMOID",
        ),
        (
            "NHWC",
            1,
            2,
            4,
            4,
            2,
            2,
            [2, 2],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
            "TANH",
        ),
        (
            "NCHW",
            1,
            2,
            4,
            4,
            2,
            1,
            [2, 2],
            [2, 2],
            [1, 1, 1, 1],
            [1, 1],
            "LEAKY_RELU",
        ),
        // Tile edges of the packed kernels: pixels not a multiple of 6,
        // output channels not a multiple of 16, odd channel counts.
        (
            "NHWC",
            1,
            3,
            7,
            7,
            17,
            1,
            [3, 3],
            [2, 2],
            [1, 2, 0, 1],
            [1, 1],
            "RELU",
        ),
        (
            "NHWC",
            2,
            8,
            5,
            4,
            33,
            1,
            [1, 1],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
            "NONE",
        ),
        (
            "NHWC",
            1,
            19,
            1,
            1,
            5,
            1,
            [1, 1],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
            "CLIP",
        ),
        (
            "NHWC",
            1,
            16,
            6,
            6,
            16,
            1,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [2, 2],
            "NONE",
        ),
        (
            "NHWC",
            1,
            4,
            3,
            3,
            1,
            1,
            [3, 3],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
            "SIGMOID",
        ),
        (
            "NHWC",
            1,
            12,
            6,
            7,
            24,
            3,
            [3, 3],
            [1, 2],
            [1, 0, 1, 2],
            [1, 1],
            "RELU",
        ),
        // Whole panels (16 and 32 output channels) through the vector epilogue.
        (
            "NHWC",
            1,
            8,
            4,
            5,
            32,
            1,
            [1, 1],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
            "RELU",
        ),
        (
            "NHWC",
            1,
            5,
            3,
            4,
            48,
            1,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
            "CLIP",
        ),
        (
            "NHWC",
            1,
            7,
            4,
            4,
            24,
            1,
            [1, 1],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
            "SIGMOID",
        ),
        (
            "NHWC",
            1,
            3,
            5,
            5,
            16,
            1,
            [3, 3],
            [2, 2],
            [1, 1, 1, 1],
            [1, 1],
            "LEAKY_RELU",
        ),
        // A filter past 256 KiB: swept panel by panel (and split by panels
        // across threads).
        (
            "NHWC",
            1,
            128,
            3,
            4,
            264,
            1,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
            "RELU",
        ),
        // Depthwise: one input and one output channel per group.
        // Stride 1 with interior tiles (no bounds tests) and 32 + 16 channel blocks.
        (
            "NHWC",
            1,
            48,
            10,
            9,
            48,
            48,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
            "RELU",
        ),
        (
            "NHWC",
            1,
            70,
            7,
            6,
            70,
            70,
            [3, 3],
            [2, 2],
            [1, 1, 1, 1],
            [1, 1],
            "CLIP",
        ),
        // Depthwise row tiles: one 16-channel block, one 8-channel block, a
        // 2-channel tail, a 5-row filter and vertical dilation.
        (
            "NHWC",
            2,
            26,
            9,
            10,
            26,
            26,
            [5, 3],
            [1, 2],
            [2, 0, 1, 2],
            [2, 1],
            "RELU",
        ),
        (
            "NHWC",
            2,
            9,
            5,
            5,
            9,
            9,
            [3, 2],
            [1, 1],
            [2, 0, 1, 1],
            [2, 1],
            "NONE",
        ),
        (
            "NCHW",
            1,
            5,
            6,
            5,
            5,
            5,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
            "RELU",
        ),
        // Channel multiplier: two output channels per input channel.
        (
            "NHWC",
            1,
            3,
            5,
            5,
            6,
            3,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
            "TANH",
        ),
        (
            "NCHW",
            1,
            6,
            7,
            7,
            20,
            2,
            [3, 3],
            [1, 1],
            [0, 1, 1, 0],
            [1, 1],
            "LEAKY_RELU",
        ),
        (
            "NCHW",
            1,
            3,
            2,
            9,
            7,
            1,
            [1, 3],
            [1, 1],
            [0, 0, 0, 0],
            [1, 3],
            "NONE",
        ),
    ];
    for (i, &(layout, n, c, h, w, oc, g, k, s, pads, dil, act)) in
        cases.iter().chain(cases.iter()).enumerate()
    {
        // The first pass feeds the filter at run time, the second as a constant.
        let consts: &[usize] = if i < cases.len() { &[] } else { &[1, 2] };
        let out = |dim: usize| {
            (([h, w][dim] + pads[dim] + pads[dim + 2]) - ((k[dim] - 1) * dil[dim] + 1)) / s[dim] + 1
        };
        let (oh, ow) = (out(0), out(1));
        let nchw = layout == "NCHW";
        let act_dims = |c, h, w| {
            if nchw {
                vec![n, c, h, w]
            } else {
                vec![n, h, w, c]
            }
        };
        let filt = if nchw {
            vec![oc, c / g, k[0], k[1]]
        } else {
            vec![oc, k[0], k[1], c / g]
        };
        let args = match act {
            "CLIP" => ", FusedActivationArgs: [-0.5, 0.5]",
            "LEAKY_RELU" => ", FusedActivationArgs: [0.1]",
            _ => "",
        };
        let members = format!(
            "Kernels: [{}, {}], Strides: [{}, {}], Pads: [{}, {}, {}, {}], Group: {g}, Dilation: [{}, {}], Layout: {layout}, FusedActivation: {act}{args}",
            k[0], k[1], s[0], s[1], pads[0], pads[1], pads[2], pads[3], dil[0], dil[1]
        );
        // Every third case adds a residual before the activation.
        let dest = f(&act_dims(oc, oh, ow));
        let mut ins = vec![f(&act_dims(c, h, w)), f(&filt), f(&[oc])];
        if i % 3 == 0 {
            ins.push(dest.clone());
        }
        let ins: Vec<&str> = ins.iter().map(String::as_str).collect();
        p.op_const("convolution", &dest, &ins, consts, &members);
    }
}

/// `convtranspose` over strides, pads, dilations, groups and output padding.
fn conv_transposes(p: &mut Prog) {
    for (k, s, pads, d, g, op) in [
        (
            [3u64, 3],
            [1u64, 1],
            [0u64, 0, 0, 0],
            [1u64, 1],
            1u64,
            [0u64, 0],
        ),
        ([3, 2], [2, 3], [1, 0, 2, 1], [1, 1], 2, [1, 2]),
        ([2, 3], [3, 2], [0, 2, 1, 0], [2, 2], 3, [0, 1]),
        ([1, 1], [2, 2], [0, 0, 0, 0], [1, 1], 6, [1, 1]),
    ] {
        let (n, c, h, w, ocg) = (2u64, 6u64, 4u64, 5u64, 2u64);
        let extent = |a: usize, i: u64| {
            (i - 1) * s[a] + (k[a] - 1) * d[a] + 1 + op[a] - pads[a] - pads[a + 2]
        };
        let (oh, ow, oc) = (extent(0, h), extent(1, w), ocg * g);
        let m = format!(
            "Kernels: [{}, {}], Strides: [{}, {}], Pads: [{}, {}, {}, {}], Group: {g}, Dilation: [{}, {}], OutputPadding: [{}, {}]",
            k[0], k[1], s[0], s[1], pads[0], pads[1], pads[2], pads[3], d[0], d[1], op[0], op[1]
        );
        let ins = [f(&[n, h, w, c]), f(&[c, k[0], k[1], ocg]), f(&[oc])];
        let ins: Vec<&str> = ins.iter().map(String::as_str).collect();
        p.op("convtranspose", &f(&[n, oh, ow, oc]), &ins, &m);
    }
}

/// A training window case: (layout, N, C, H, W, OC, group, kernel, stride,
/// pads, dilation).
type GradCase = (
    &'static str,
    u64,
    u64,
    u64,
    u64,
    u64,
    u64,
    [u64; 2],
    [u64; 2],
    [u64; 4],
    [u64; 2],
);

/// `convolutiongrad` over both layouts, groups (depthwise too), strides
/// wider than the kernel (inputs no output reads), asymmetric pads (outputs
/// that read only padding) and dilations.
fn conv_grads(p: &mut Prog) {
    let cases: [GradCase; 11] = [
        // The AVX-512 FilterGrad blocks: 4 output x 32 input channels with
        // tails of 1 and 8 (stride 2, pads); 32 output x 4 input channels
        // (a 7x7 stem of 3 channels, 40 outputs: a tail of 8); groups of 16
        // input and 5 output channels.
        (
            "NHWC",
            2,
            40,
            7,
            6,
            37,
            1,
            [3, 3],
            [2, 2],
            [1, 1, 1, 0],
            [1, 1],
        ),
        (
            "NHWC",
            1,
            3,
            11,
            9,
            40,
            1,
            [7, 7],
            [2, 2],
            [3, 3, 3, 3],
            [1, 1],
        ),
        (
            "NHWC",
            1,
            32,
            5,
            5,
            10,
            2,
            [3, 1],
            [1, 1],
            [1, 0, 1, 0],
            [1, 1],
        ),
        // Depthwise (the C kernel's sums run across all channels).
        (
            "NHWC",
            2,
            20,
            5,
            4,
            20,
            20,
            [3, 3],
            [2, 1],
            [1, 1, 0, 1],
            [1, 1],
        ),
        // More input channels than the C kernel's chunks of 128 sums
        // (two chunks and a tail of 44).
        (
            "NHWC",
            1,
            300,
            1,
            2,
            2,
            1,
            [1, 2],
            [1, 1],
            [0, 0, 0, 0],
            [1, 1],
        ),
        (
            "NHWC",
            1,
            3,
            5,
            5,
            4,
            1,
            [3, 3],
            [1, 1],
            [1, 1, 1, 1],
            [1, 1],
        ),
        (
            "NHWC",
            2,
            4,
            6,
            5,
            6,
            2,
            [3, 2],
            [2, 1],
            [0, 1, 2, 0],
            [1, 2],
        ),
        (
            "NCHW",
            2,
            6,
            5,
            4,
            6,
            6,
            [2, 2],
            [1, 2],
            [1, 0, 1, 1],
            [2, 1],
        ),
        (
            "NCHW",
            1,
            4,
            7,
            6,
            2,
            2,
            [1, 2],
            [3, 2],
            [2, 1, 0, 2],
            [1, 1],
        ),
        (
            "NHWC",
            1,
            2,
            4,
            4,
            3,
            1,
            [1, 1],
            [1, 1],
            [2, 2, 1, 1],
            [1, 1],
        ),
        (
            "NCHW",
            2,
            3,
            6,
            6,
            5,
            1,
            [3, 3],
            [2, 2],
            [0, 0, 0, 0],
            [1, 1],
        ),
    ];
    for (case, (layout, n, c, h, w, oc, g, k, s, pads, dil)) in cases.into_iter().enumerate() {
        // The last case's SrcGrad is zeros; the one before adds its sums
        // to SrcGrad (@inout), as does the 300-channel one (the AVX-512 kernel).
        let zeros = if case == 10 {
            ", ComputeSrcGrad: false"
        } else {
            ""
        };
        let sg_kind = if case == 9 || case == 4 {
            "@inout"
        } else {
            "@out"
        };
        let out =
            |a: usize| ([h, w][a] + pads[a] + pads[a + 2] - (k[a] - 1) * dil[a] - 1) / s[a] + 1;
        let nchw = layout == "NCHW";
        let act = |c, h, w| {
            if nchw {
                f(&[n, c, h, w])
            } else {
                f(&[n, h, w, c])
            }
        };
        let filt = if nchw {
            f(&[oc, c / g, k[0], k[1]])
        } else {
            f(&[oc, k[0], k[1], c / g])
        };
        let (src, dest) = (act(c, h, w), act(oc, out(0), out(1)));
        let (x, fl, dy) = (p.weight(&src), p.weight(&filt), p.weight(&dest));
        let (sg, fg, bg) = (p.weight(&src), p.weight(&filt), p.weight(&f(&[oc])));
        p.inst(&format!(
            "convolutiongrad @in %{x}, @in %{fl}, @in %{dy}, {sg_kind} %{sg}, @out %{fg}, @out %{bg} {{ Kernels: [{}, {}], Strides: [{}, {}], Pads: [{}, {}, {}, {}], Group: {g}, Dilation: [{}, {}], Layout: {layout}{zeros} }}",
            k[0], k[1], s[0], s[1], pads[0], pads[1], pads[2], pads[3], dil[0], dil[1]
        ));
    }
}

fn pools(p: &mut Prog) {
    for layout in ["NHWC", "NCHW"] {
        for (k, s, pads, d) in [
            ([2u64, 2], [2u64, 2], [0u64, 0, 0, 0], [1u64, 1]),
            ([3, 2], [1, 2], [1, 1, 2, 0], [1, 1]),
            ([3, 3], [1, 1], [2, 2, 2, 2], [1, 1]),
            ([2, 2], [1, 2], [1, 0, 1, 1], [2, 3]),
        ] {
            let (n, c, h, w) = (2u64, 3u64, 5u64, 4u64);
            let oh = (h + pads[0] + pads[2] - (k[0] - 1) * d[0] - 1) / s[0] + 1;
            let ow = (w + pads[1] + pads[3] - (k[1] - 1) * d[1] - 1) / s[1] + 1;
            let dims = |h, w| {
                if layout == "NCHW" {
                    vec![n, c, h, w]
                } else {
                    vec![n, h, w, c]
                }
            };
            let m = format!(
                "Kernels: [{}, {}], Strides: [{}, {}], Pads: [{}, {}, {}, {}], Layout: {layout}, Dilation: [{}, {}]",
                k[0], k[1], s[0], s[1], pads[0], pads[1], pads[2], pads[3], d[0], d[1]
            );
            p.op("maxpool", &f(&dims(oh, ow)), &[&f(&dims(h, w))], &m);
            for cip in [true, false] {
                p.op(
                    "avgpool",
                    &f(&dims(oh, ow)),
                    &[&f(&dims(h, w))],
                    &format!("{m}, CountIncludePads: {cip}"),
                );
            }
        }
    }
}

/// `maxpoolwithargmax` and the pool gradients over both layouts, windows
/// all in padding, overlapping windows and strides wider than the window;
/// `maxpoolwithargmaxgrad` on the forward's argmax and on indices partly
/// outside `Src` (negative and past the end).
fn pool_grads(p: &mut Prog) {
    for layout in ["NHWC", "NCHW"] {
        for (k, s, pads) in [
            ([2u64, 2], [2u64, 2], [0u64, 0, 0, 0]),
            ([3, 2], [1, 2], [1, 1, 2, 0]),
            ([2, 2], [1, 1], [2, 2, 2, 2]),
            ([1, 2], [3, 1], [0, 2, 1, 0]),
        ] {
            let (n, c, h, w) = (2u64, 3u64, 5u64, 4u64);
            let oh = (h + pads[0] + pads[2] - k[0]) / s[0] + 1;
            let ow = (w + pads[1] + pads[3] - k[1]) / s[1] + 1;
            let dims = |h, w| {
                if layout == "NCHW" {
                    vec![n, c, h, w]
                } else {
                    vec![n, h, w, c]
                }
            };
            let (st, dt) = (f(&dims(h, w)), f(&dims(oh, ow)));
            let at = dt.replace("float", "index64");
            let m = format!(
                "Kernels: [{}, {}], Strides: [{}, {}], Pads: [{}, {}, {}, {}], Layout: {layout}",
                k[0], k[1], s[0], s[1], pads[0], pads[1], pads[2], pads[3]
            );
            let (x, y, a) = (p.weight(&st), p.weight(&dt), p.weight(&at));
            p.inst(&format!(
                "maxpoolwithargmax @out %{y}, @in %{x}, @out %{a} {{ {m} }}"
            ));
            let (dy, g) = (p.weight(&dt), p.weight(&st));
            p.inst(&format!(
                "maxpoolwithargmaxgrad @in %{y}, @in %{x}, @in %{a}, @in %{dy}, @out %{g} {{ {m} }}"
            ));
            let size = (n * c * h * w) as i64;
            let wild: Vec<String> = (0..(n * c * oh * ow) as i64)
                .map(|i| ((i * 37) % (size + 10) - 3).to_string())
                .collect();
            let wild_a = p.weight_of(&at, &format!("const {{ Data: [{}] }}", wild.join(", ")));
            let g2 = p.weight(&st);
            p.inst(&format!(
                "maxpoolwithargmaxgrad @in %{y}, @in %{x}, @in %{wild_a}, @in %{dy}, @out %{g2} {{ {m} }}"
            ));
            for cip in [true, false] {
                let g = p.weight(&st);
                p.inst(&format!(
                    "avgpoolgrad @in %{y}, @in %{x}, @in %{dy}, @out %{g} {{ {m}, CountIncludePads: {cip} }}"
                ));
            }
        }
    }
}

/// The C bundle of the first function of `text` (missing weights zero).
fn bundle_of(text: &str) -> glow_backend::Bundle {
    let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    glow_backend::emit_bundle(
        &m.functions[0],
        &glow_backend::BundleOptions {
            weights: BTreeMap::new(),
            zero_missing_weights: true,
            codegen: Default::default(),
        },
    )
    .expect("bundle")
}

fn run_both(cflags: &str) {
    run_both_with(cflags, Default::default());
}

/// The interpreter's and the C engine's outputs of `f` on the same weights
/// (seeded by `seed`).
fn both_engines(
    f: &glow_ir::Function,
    cflags: &str,
    seed: u64,
    codegen: glow_backend::CodegenOptions,
) -> (Outputs, Outputs) {
    let mut opts = RunOptions {
        engine: Engine::Interp,
        cc: CcOptions::new(Some("cc"), cflags),
        seed,
        strict_constants: false,
        repeat: None,
        build_dir: None,
        codegen,
    };
    let weights = run::resolve_weights(f, &BTreeMap::new(), &opts).expect("weights");
    let interp = run::run(f, &weights, &opts).expect("interpreter runs");
    opts.engine = Engine::C;
    let c = run::run(f, &weights, &opts)
        .unwrap_or_else(|e| panic!("C engine ({cflags}, {codegen:?}): {e:?}"));
    (interp, c)
}

fn run_both_with(cflags: &str, codegen: glow_backend::CodegenOptions) {
    let text = build();
    let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    let diags = glow_ir::verifier::verify_module(&m);
    assert!(
        diags.is_empty(),
        "{}",
        glow_ir::diag::render_all(&diags, "cases", text.as_bytes())
    );
    let (interp, c) = both_engines(&m.functions[0], cflags, 7, codegen);
    if codegen.fast_math {
        assert_close(&interp, &c);
    } else {
        assert_same(&interp, &c);
    }
    assert!(interp.tensors.len() > 150, "{}", interp.tensors.len());
}

/// Within `1e-5 + 1e-4 |ref|` element by element (the fast mode's contract
/// on these small sums), and identical on non-float tensors.
fn assert_close(a: &Outputs, b: &Outputs) {
    assert_eq!(a.tensors.len(), b.tensors.len());
    for (x, y) in a.tensors.iter().zip(&b.tensors) {
        if x.ty.elem != glow_ir::ElemKind::Float {
            assert_eq!(x.data, y.data, "%{}", x.name);
            continue;
        }
        for (p, q) in x.data.chunks(4).zip(y.data.chunks(4)) {
            let (p, q) = (
                f32::from_le_bytes([p[0], p[1], p[2], p[3]]),
                f32::from_le_bytes([q[0], q[1], q[2], q[3]]),
            );
            let ok = (p.is_nan() && q.is_nan()) || p == q || (p - q).abs() <= 1e-5 + 1e-4 * p.abs();
            assert!(ok, "%{}: interpreter {p}, fast C {q}", x.name);
        }
    }
}

/// Bit-identical, except that any two NaNs are equal.
fn assert_same(a: &Outputs, b: &Outputs) {
    assert_eq!(a.stdout, b.stdout);
    assert_eq!(a.tensors.len(), b.tensors.len());
    for (x, y) in a.tensors.iter().zip(&b.tensors) {
        if x.data == y.data {
            continue;
        }
        if x.ty.elem == glow_ir::ElemKind::Float {
            let same = x.data.chunks(4).zip(y.data.chunks(4)).all(|(p, q)| {
                let (p, q) = (
                    f32::from_le_bytes([p[0], p[1], p[2], p[3]]),
                    f32::from_le_bytes([q[0], q[1], q[2], q[3]]),
                );
                p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan())
            });
            if same {
                continue;
            }
        }
        panic!(
            "engines differ on %{}:\ninterp {}\nC      {}",
            x.name,
            glow_backend::text::tensor_line(&x.name, &x.ty, &x.data),
            glow_backend::text::tensor_line(&y.name, &y.ty, &y.data)
        );
    }
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_matches_interpreter_with_warnings_as_errors() {
    run_both("-O2 -Wall -Wextra -Werror");
}

/// The vector paths as the benchmarks build them (AVX2 where the machine
/// has it, so the fused multiply-adds are FMA instructions), still without
/// the compiler's own contraction: the bundle turns it off.
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_matches_interpreter_native_o3() {
    run_both("-O3 -march=native -std=gnu99 -ffp-contract=fast -Wall -Wextra -Werror");
}

/// The AVX2 paths (int16 products) of the quantized kernels, which
/// `-march=native` no longer builds where the machine has AVX-512 VNNI.
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_matches_interpreter_avx2_without_vnni() {
    run_both("-O2 -march=x86-64-v3 -Wall -Wextra -Werror");
}

/// The 256-bit vpdpbusd kernels (what an AVX-VNNI machine without AVX-512
/// runs), through AVX-512 VNNI's 256-bit form: `-DGLOW_QVNNI_YMM` builds
/// them instead of the 512-bit ones. Under the sanitizers too: their band
/// and tile reads stay in bounds.
#[test]
#[cfg_attr(
    not(has_vnni_ymm),
    ignore = "`-march=native` has no 256-bit AVX-512 VNNI here"
)]
fn c_vnni_256_bit_kernels_match_interpreter() {
    run_both("-O2 -march=native -DGLOW_QVNNI_YMM -Wall -Wextra -Werror");
    run_both(
        "-O1 -march=native -DGLOW_QVNNI_YMM -fsanitize=address,undefined -fno-sanitize-recover=all",
    );
}

/// For an AVX-VNNI target (no AVX-512) the bundle builds with warnings as
/// errors and its byte convolutions use vpdpbusd on ymm registers. It is
/// built, not run: no machine here has AVX-VNNI; the kernels' numbers are
/// checked by `c_vnni_256_bit_kernels_match_interpreter`.
#[test]
#[cfg_attr(
    not(has_avxvnni_cc),
    ignore = "`cc -march=alderlake` does not target AVX-VNNI here"
)]
fn avx_vnni_target_builds_the_byte_kernels() {
    let text = build();
    let bundle = bundle_of(&text);
    let dir = tempfile::tempdir().expect("temp dir");
    let (src, asm) = (dir.path().join("k.c"), dir.path().join("k.s"));
    std::fs::write(&src, &bundle.c_source).expect("write");
    let out = std::process::Command::new("cc")
        .args([
            "-O2",
            "-march=alderlake",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-S",
            "-o",
        ])
        .arg(&asm)
        .arg(&src)
        .output()
        .expect("cc runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let asm = std::fs::read_to_string(&asm).expect("assembly");
    assert!(
        asm.lines()
            .any(|l| l.contains("vpdpbusd") && l.contains("ymm")),
        "no 256-bit vpdpbusd in the AVX-VNNI build"
    );
    assert!(
        !asm.contains("zmm"),
        "an AVX-512 register in the AVX-VNNI build"
    );
}

/// Threads split the outputs, never a sum: bit-identical to one thread
/// (3 threads, so the parts are uneven).
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_threads_match_interpreter() {
    run_both_with(
        "-O2 -Wall -Wextra -Werror",
        glow_backend::CodegenOptions {
            threads: 3,
            fast_math: false,
            ..Default::default()
        },
    );
}

/// The thread pool under ThreadSanitizer (2 threads, so the caller and a
/// worker claim the ranges of every kernel): a data race, a claim of a
/// finished kernel's range or a kernel's output read before its worker wrote
/// it fails the run or its bytes.
#[test]
#[cfg_attr(
    not(has_tsan),
    ignore = "`cc -fsanitize=thread` does not build and run here"
)]
fn c_threads_under_thread_sanitizer() {
    run_both_with(
        "-O1 -march=native -fsanitize=thread",
        glow_backend::CodegenOptions {
            threads: 2,
            fast_math: false,
            ..Default::default()
        },
    );
}

/// The fast mode (contraction allowed) stays within tolerance.
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_fast_math_within_tolerance() {
    run_both_with(
        "-O3 -march=native",
        glow_backend::CodegenOptions {
            threads: 1,
            fast_math: true,
            ..Default::default()
        },
    );
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_matches_interpreter_under_sanitizers() {
    run_both("-O1 -fsanitize=address,undefined -fno-sanitize-recover=all");
}

/// The vector kernels (AVX-512 and VNNI where the machine has them) under
/// the sanitizers: their band and tile reads stay in bounds. The
/// `convolutiongrad` FilterGrad kernel's row chunks are made 512 bytes, so
/// its sums go on across many chunks (the default run takes one).
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_native_kernels_under_sanitizers() {
    run_both(
        "-O1 -march=native -DGLOW_CG_CHUNK=512 -fsanitize=address,undefined -fno-sanitize-recover=all",
    );
}

/// Each shared kernel, emitted alone into a bundle, builds with
/// `-Wall -Wextra -Werror` and agrees with the interpreter (a kernel must
/// not lean on a helper only another kernel's section brings).
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn each_kernel_alone_builds_with_werror() {
    let conv = |filter: &str, group: u64, oc: u64, c: u64| {
        format!(
            "function k\ndeclare {{\n  %in = WeightVar float<1 x 5 x 5 x {c}> mutable\n  %w = WeightVar float<{oc} x 3 x 3 x {}> {filter}\n  %b = WeightVar float<{oc}> const\n  %out = WeightVar float<1 x 5 x 5 x {oc}> mutable\n}}\n\ncode {{\n  0 %c = convolution @out %out, @in %in, @in %w, @in %b {{ Kernels: [3, 3], Pads: [1, 1, 1, 1], Group: {group} }}\n}}\n",
            c / group
        )
    };
    let gemm = "function k\ndeclare {\n  %a = WeightVar float<7 x 5> mutable\n  %w = WeightVar float<5 x 18> const\n  %b = WeightVar float<18> const\n  %out = WeightVar float<7 x 18> mutable\n}\n\ncode {\n  0 %f = fullyconnected @out %out, @in %a, @in %w, @in %b\n}\n".to_string();
    // The quantized sections: the GEMM, the depthwise and the direct
    // convolution each alone.
    let qgemm = "function k\ndeclare {\n  %a = WeightVar ui8[S:0.5 O:128]<7 x 5> mutable\n  %w = WeightVar i8[S:0.25 O:0]<5 x 18> const\n  %b = WeightVar i32[S:0.125 O:0]<18> const\n  %out = WeightVar i8[S:1.0 O:0]<7 x 18> mutable\n}\n\ncode {\n  0 %f = fullyconnected @out %out, @in %a, @in %w, @in %b\n}\n".to_string();
    let qdyn = "function k\ndeclare {\n  %a = WeightVar float<7 x 5> mutable\n  %w = WeightVar i8[S:0.25 O:1]<5 x 18> const\n  %b = WeightVar float<18> const\n  %out = WeightVar float<7 x 18> mutable\n}\n\ncode {\n  0 %f = dynamicquantizedfullyconnected @out %out, @in %a, @in %w, @in %b\n}\n".to_string();
    let qprofile = "function k\ndeclare {\n  %a = WeightVar float<7 x 5> mutable\n  %h = WeightVar float<9> mutable\n  %c = WeightVar float<2> mutable\n}\n\ncode {\n  0 %p = quantizationprofile @in %a, @inout %h, @inout %c\n}\n".to_string();
    let qconv = |group: u64, oc: u64, c: u64| {
        format!(
            "function k\ndeclare {{\n  %in = WeightVar ui8[S:0.5 O:128]<1 x 5 x 5 x {c}> mutable\n  %w = WeightVar i8[S:0.25 O:0]<{oc} x 3 x 3 x {}> const\n  %b = WeightVar i32[S:0.125 O:0]<{oc}> const\n  %out = WeightVar ui8[S:1.0 O:3]<1 x 5 x 5 x {oc}> mutable\n}}\n\ncode {{\n  0 %c = convolution @out %out, @in %in, @in %w, @in %b {{ Kernels: [3, 3], Pads: [1, 1, 1, 1], Group: {group} }}\n}}\n",
            c / group
        )
    };
    for text in [
        conv("const", 1, 20, 3),
        conv("mutable", 1, 20, 3),
        conv("const", 6, 6, 6),
        gemm,
        qgemm,
        qdyn,
        qprofile,
        qconv(1, 20, 3),
        qconv(6, 6, 6),
    ] {
        let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
        // The portable kernels, then the vector ones where the machine has them.
        for flags in [
            "-O1 -Wall -Wextra -Werror",
            "-O1 -march=native -Wall -Wextra -Werror",
        ] {
            let (interp, c) = both_engines(&m.functions[0], flags, 3, Default::default());
            assert_same(&interp, &c);
        }
    }
}

/// Convolutions (panel, 1x1, depthwise with a channel tail, runtime
/// filter), a fully connected layer, a matmul and a batchmatmul whose
/// pixels and rows are not multiples of the tile, in one function.
fn tile_cases() -> String {
    let mut p = Prog::default();
    let conv = |p: &mut Prog, hw: u64, c: u64, oc: u64, k: u64, group: u64, consts: &[usize]| {
        let pad = k / 2;
        p.op_const(
            "convolution",
            &f(&[1, hw, hw, oc]),
            &[&f(&[1, hw, hw, c]), &f(&[oc, k, k, c / group]), &f(&[oc])],
            consts,
            &format!(
                "Kernels: [{k}, {k}], Pads: [{pad}, {pad}, {pad}, {pad}], Group: {group}, FusedActivation: RELU"
            ),
        );
    };
    conv(&mut p, 7, 5, 20, 3, 1, &[1, 2]);
    conv(&mut p, 5, 24, 37, 1, 1, &[1, 2]);
    conv(&mut p, 6, 19, 19, 3, 19, &[1, 2]);
    conv(&mut p, 5, 3, 20, 3, 1, &[2]);
    p.op_const(
        "fullyconnected",
        &f(&[7, 18]),
        &[&f(&[7, 5]), &f(&[5, 18]), &f(&[18])],
        &[1, 2],
        "",
    );
    p.op("matmul", &f(&[9, 17]), &[&f(&[9, 4]), &f(&[4, 17])], "");
    p.op(
        "batchmatmul",
        &f(&[2, 5, 16]),
        &[&f(&[2, 5, 3]), &f(&[2, 3, 16])],
        "",
    );
    p.text()
}

/// The tile height is a parameter (`GLOW_TP` from
/// `emit::runtime::TILE_PIXELS`): other heights compute the same numbers,
/// on the FMA-instruction path and on the portable one.
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn other_tile_heights_compute_the_same_numbers() {
    let text = tile_cases();
    let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    for (tp, cflags) in [
        (1, "-O2 -march=native -Wall -Wextra -Werror"),
        (4, "-O2 -march=native -Wall -Wextra -Werror"),
        (5, "-O2 -Wall -Wextra -Werror"),
        (7, "-O2 -march=native -Wall -Wextra -Werror"),
    ] {
        let codegen = glow_backend::CodegenOptions {
            tile_pixels: tp,
            ..Default::default()
        };
        let (interp, c) = both_engines(&m.functions[0], cflags, 5, codegen);
        assert_same(&interp, &c);
    }
}

/// The panel width (`GLOW_PW` from `emit::runtime::PANEL_WIDTH`) is tied to
/// the vector registers: another value refuses to build, naming why.
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn another_panel_width_fails_to_build() {
    let text = tile_cases();
    let bundle = bundle_of(&text);
    let define = format!(
        "#define GLOW_PW {}\n",
        glow_backend::emit::runtime::PANEL_WIDTH
    );
    assert!(bundle.c_source.contains(&define), "{define} missing");
    let dir = tempfile::tempdir().expect("temp dir");
    let build = |source: &str| {
        let path = dir.path().join("pw.c");
        std::fs::write(&path, source).expect("write");
        std::process::Command::new("cc")
            .args(["-std=c99", "-O1", "-c", "-o"])
            .arg(dir.path().join("pw.o"))
            .arg(&path)
            .output()
            .expect("cc runs")
    };
    let ok = build(&bundle.c_source);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let other = build(&bundle.c_source.replace(&define, "#define GLOW_PW 8\n"));
    assert!(!other.status.success());
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(
        err.contains("the vector paths hold a panel of 16 channels"),
        "{err}"
    );
}
