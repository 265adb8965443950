//! Shape-rule tests: every opcode's lit example (`test/ir/opcodes`) is
//! accepted, each rule rejects a broken example with the right message, the
//! lit negative tests' annotations hold, and hostile values never panic.

use crate::opcode::Opcode;
use crate::verifier::verify_module;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn messages(src: &str) -> Vec<(usize, String)> {
    crate::verifier::tests::errors(src)
}

#[track_caller]
fn rejects(weights: &[&str], inst: &str, text: &str) {
    let src = crate::verifier::tests::func(weights, &[inst]);
    let e = messages(&src);
    assert!(
        e.iter().any(|(_, m)| m.contains(text)),
        "no error containing `{text}` in {e:#?}\n{src}"
    );
}

#[track_caller]
fn accepts(weights: &[&str], inst: &str) {
    let src = crate::verifier::tests::func(weights, &[inst]);
    assert_eq!(messages(&src), vec![], "{src}");
}

#[test]
fn every_opcode_has_a_valid_example() {
    for &op in Opcode::ALL {
        let path = repo().join(format!("test/ir/opcodes/{}.gir", op.name()));
        let src =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let m = crate::parser::parse(src.as_bytes())
            .unwrap_or_else(|d| panic!("{}", crate::diag::render_all(&d, "x", src.as_bytes())));
        let used = m
            .functions
            .iter()
            .any(|f| f.inst_ids().any(|i| f.inst(i).opcode == op));
        assert!(used, "{} does not use `{}`", path.display(), op.name());
        let d = verify_module(&m);
        assert!(
            d.is_empty(),
            "{}",
            crate::diag::render_all(&d, &path.display().to_string(), src.as_bytes())
        );
    }
}

/// Every `// expected-error` of the verifier's negative lit tests holds
/// (the same check `glow-opt --split-input-file --verify-diagnostics` makes).
#[test]
fn negative_lit_tests_hold() {
    let dir = repo().join("test/diagnostics");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("test/diagnostics exists")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| (n.starts_with("verify-") || n.starts_with("shape-")) && n.ends_with(".gir"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        let src = std::fs::read(dir.join(&name)).expect("readable");
        for chunk in crate::expect::split_input(&src) {
            let diags = match crate::parser::parse(&chunk) {
                Err(d) => d,
                Ok(m) => verify_module(&m),
            };
            let problems = crate::expect::check(&chunk, &diags);
            assert!(
                problems.is_empty(),
                "{}",
                crate::diag::render_all(&problems, &name, &chunk)
            );
        }
    }
}

const CONV_W: &[&str] = &[
    "%src = WeightVar float<8 x 28 x 28 x 4> mutable",
    "%filter = WeightVar float<16 x 5 x 5 x 2> const",
    "%bias = WeightVar float<16> const",
    "%dest = WeightVar float<8 x 24 x 24 x 16> mutable",
];

#[test]
fn convolution_shapes() {
    let conv = "%c = convolution @out %dest, @in %src, @in %filter, @in %bias";
    accepts(CONV_W, &format!("{conv} {{ Kernels: [5, 5], Group: 2 }}"));
    rejects(
        CONV_W,
        &format!("{conv} {{ Kernels: [5, 5], Group: 2, Pads: [2, 2, 2, 2] }}"),
        "`Dest` has type float<8 x 24 x 24 x 16> but `convolution` produces float<8 x 28 x 28 x 16>",
    );
    rejects(
        CONV_W,
        &format!("{conv} {{ Kernels: [5, 5], Group: 1 }}"),
        "`Filter` has type float<16 x 5 x 5 x 2> but `convolution` expects float<16 x 5 x 5 x 4>",
    );
    rejects(
        CONV_W,
        &format!("{conv} {{ Kernels: [5, 5], Group: 3 }}"),
        "`Group: 3` does not divide the 4 input channels",
    );
    rejects(
        CONV_W,
        &format!("{conv} {{ Kernels: [3, 3], Group: 2 }}"),
        "expects float<16 x 3 x 3 x 2>",
    );
    rejects(
        CONV_W,
        &format!("{conv} {{ Kernels: [5, 5], Group: 2, Dilation: [20, 1] }}"),
        "the kernel height (dilated to 81) is larger than the padded input height 28",
    );
    let mut w = CONV_W.to_vec();
    w[2] = "%bias = WeightVar float<8> const";
    rejects(
        &w,
        &format!("{conv} {{ Kernels: [5, 5], Group: 2 }}"),
        "`Bias` has type float<8>",
    );
    w[2] = "%bias = WeightVar float16<16> const";
    rejects(
        &w,
        &format!("{conv} {{ Kernels: [5, 5], Group: 2 }}"),
        "`Bias` has element type float16 but `Src` has float",
    );
    w[0] = "%src = WeightVar index32<8 x 28 x 28 x 4> mutable";
    rejects(
        &w,
        &format!("{conv} {{ Kernels: [5, 5], Group: 2 }}"),
        "accepts float or quantized",
    );
    // NCHW, strides and dilation: OH = (10 + 1 + 1 - 5) / 2 + 1 = 4.
    let nchw = &[
        "%src = WeightVar float<1 x 4 x 10 x 10> mutable",
        "%filter = WeightVar float<6 x 4 x 3 x 3> const",
        "%bias = WeightVar float<6> const",
        "%dest = WeightVar float<1 x 6 x 4 x 4> mutable",
    ];
    accepts(
        nchw,
        &format!("{conv} {{ Kernels: [3, 3], Strides: [2, 2], Pads: [1, 1, 1, 1], Dilation: [2, 2], Layout: NCHW }}"),
    );
    // Quantized: i8 data with an i32 bias.
    let q = &[
        "%src = WeightVar i8[S:0.5 O:0]<1 x 4 x 4 x 1> mutable",
        "%filter = WeightVar i8[S:0.25 O:0]<2 x 1 x 1 x 1> const",
        "%bias = WeightVar i32[S:0.125 O:0]<2> const",
        "%dest = WeightVar i8[S:1.0 O:3]<1 x 4 x 4 x 2> mutable",
    ];
    accepts(q, &format!("{conv} {{ Kernels: [1, 1] }}"));
}

#[test]
fn convolution_grad_shapes() {
    let mut w = CONV_W.to_vec();
    w.extend([
        "%sg = WeightVar float<8 x 28 x 28 x 4> mutable",
        "%fg = WeightVar float<16 x 5 x 5 x 2> mutable",
        "%bg = WeightVar float<16> mutable",
        "%bg8 = WeightVar float<8> mutable",
    ]);
    let g = "%g = convolutiongrad @in %src, @in %filter, @in %dest";
    accepts(
        &w,
        &format!("{g}, @out %sg, @out %fg, @out %bg {{ Kernels: [5, 5], Group: 2 }}"),
    );
    rejects(
        &w,
        &format!("{g}, @out %sg, @out %fg, @out %bg {{ Kernels: [5, 5], Group: 2, Pads: [2, 2, 2, 2] }}"),
        "`DestGrad` has type float<8 x 24 x 24 x 16> but `convolutiongrad` produces float<8 x 28 x 28 x 16>",
    );
    rejects(
        &w,
        &format!("{g}, @out %fg, @out %fg, @out %bg {{ Kernels: [5, 5], Group: 2 }}"),
        "`SrcGrad` has type float<16 x 5 x 5 x 2> but must have the type of `Src`",
    );
    rejects(
        &w,
        &format!("{g}, @out %sg, @out %fg, @out %bg8 {{ Kernels: [5, 5], Group: 2 }}"),
        "`BiasGrad` has type float<8> but `convolutiongrad` expects float<16>",
    );
}

#[test]
fn pool_grad_shapes() {
    let w = &[
        "%src = WeightVar float<1 x 6 x 6 x 3> mutable",
        "%dest = WeightVar float<1 x 3 x 3 x 3> mutable",
        "%am = WeightVar index64<1 x 3 x 3 x 3> mutable",
        "%am32 = WeightVar index32<1 x 3 x 3 x 3> mutable",
        "%amf = WeightVar float<1 x 3 x 3 x 3> mutable",
        "%sg = WeightVar float<1 x 6 x 6 x 3> mutable",
    ];
    let m = "{ Kernels: [2, 2], Strides: [2, 2] }";
    accepts(
        w,
        &format!("%p = maxpoolwithargmax @out %dest, @in %src, @out %am {m}"),
    );
    // index32 holds every flat index of a Src under 2^31 elements.
    accepts(
        w,
        &format!("%p = maxpoolwithargmax @out %dest, @in %src, @out %am32 {m}"),
    );
    rejects(
        w,
        &format!("%p = maxpoolwithargmax @out %dest, @in %src, @out %amf {m}"),
        "`Argmax` has type float<1 x 3 x 3 x 3> but must be index64<1 x 3 x 3 x 3> (or index32 when `Src` has under 2^31 elements)",
    );
    let g = "@in %dest, @in %src, @in %am, @in %dest, @out";
    accepts(w, &format!("%p = maxpoolwithargmaxgrad {g} %sg {m}"));
    rejects(
        w,
        &format!("%p = maxpoolwithargmaxgrad {g} %sg {{ Kernels: [2, 2] }}"),
        "`Dest` has type float<1 x 3 x 3 x 3> but `maxpoolwithargmaxgrad` produces float<1 x 5 x 5 x 3>",
    );
    accepts(
        w,
        &format!("%p = avgpoolgrad @in %dest, @in %src, @in %dest, @out %sg {m}"),
    );
    rejects(
        w,
        &format!("%p = avgpoolgrad @in %dest, @in %src, @in %src, @out %sg {m}"),
        "`DestGrad` has type float<1 x 6 x 6 x 3> but must have the type of `Dest`",
    );
}

#[test]
fn lrn_grad_shapes() {
    let w = &[
        "%x = WeightVar float<1 x 2 x 2 x 5> mutable",
        "%y = WeightVar float<1 x 2 x 2 x 5> mutable",
        "%s = WeightVar float<1 x 2 x 2 x 5> mutable",
        "%sg = WeightVar float<1 x 2 x 2 x 5> mutable",
        "%short = WeightVar float<1 x 2 x 2 x 4> mutable",
        "%h = WeightVar float16<1 x 2 x 2 x 5> mutable",
    ];
    let m = "{ HalfWindowSize: 1 }";
    let op = "localresponsenormalizationgrad";
    accepts(
        w,
        &format!("%i = {op} @in %y, @in %x, @in %s, @in %y, @out %sg {m}"),
    );
    rejects(
        w,
        &format!("%i = {op} @in %y, @in %x, @in %short, @in %y, @out %sg {m}"),
        "`Scale` has type float<1 x 2 x 2 x 4> but must have the type of `Src`",
    );
    rejects(
        w,
        &format!("%i = {op} @in %y, @in %x, @in %s, @in %y, @out %short {m}"),
        "`SrcGrad` has type float<1 x 2 x 2 x 4> but must have the type of `Src`",
    );
    rejects(
        w,
        &format!("%i = {op} @in %h, @in %x, @in %s, @in %y, @out %sg {m}"),
        "`Dest` has element type",
    );
    rejects(
        w,
        &format!("%i = {op} @in %y, @in %x, @in %s, @in %y, @out %sg {{ HalfWindowSize: -1 }}"),
        "HalfWindowSize",
    );
}

#[test]
fn batch_norm_grad_shapes() {
    let w = &[
        "%x = WeightVar float<2 x 3 x 4> mutable",
        "%g = WeightVar float<2 x 3 x 4> mutable",
        "%c = WeightVar float<3> mutable",
        "%c4 = WeightVar float<4> mutable",
        "%o1 = WeightVar float<3> mutable",
        "%o2 = WeightVar float<3> mutable",
        "%p1 = WeightVar float<4> mutable",
        "%p2 = WeightVar float<4> mutable",
        "%h = WeightVar float16<3> mutable",
    ];
    let op = "batchnormalizationgrad";
    let ok = "@in %x, @in %c, @in %c, @in %c, @in %x, @out %g, @out %o1, @out %o2";
    accepts(w, &format!("%i = {op} {ok} {{ ChannelIdx: 1 }}"));
    accepts(
        w,
        &format!("%i = {op} @in %x, @in %c4, @in %c4, @in %c4, @in %x, @out %g, @out %p1, @out %p2 {{ ChannelIdx: 2 }}"),
    );
    rejects(
        w,
        &format!("%i = {op} @in %x, @in %c4, @in %c, @in %c, @in %x, @out %g, @out %o1, @out %o2 {{ ChannelIdx: 1 }}"),
        "`Scale` has type float<4> but `batchnormalizationgrad` expects float<3>",
    );
    rejects(
        w,
        &format!("%i = {op} @in %x, @in %c, @in %c, @in %c, @in %x, @out %c, @out %o1, @out %o2 {{ ChannelIdx: 1 }}"),
        "`SrcGrad` has type float<3> but must have the type of `Src`",
    );
    rejects(
        w,
        &format!("%i = {op} @in %x, @in %c, @in %c, @in %h, @in %x, @out %g, @out %o1, @out %o2 {{ ChannelIdx: 1 }}"),
        "`Var` has element type",
    );
    rejects(
        w,
        &format!("%i = {op} {ok} {{ ChannelIdx: 3 }}"),
        "ChannelIdx",
    );
}

#[test]
fn pool_shapes() {
    let w = &[
        "%src = WeightVar float<1 x 6 x 6 x 3> mutable",
        "%dest = WeightVar float<1 x 3 x 3 x 3> mutable",
    ];
    accepts(
        w,
        "%p = maxpool @out %dest, @in %src { Kernels: [2, 2], Strides: [2, 2] }",
    );
    rejects(
        w,
        "%p = avgpool @out %dest, @in %src { Kernels: [2, 2] }",
        "`Dest` has type float<1 x 3 x 3 x 3> but `avgpool` produces float<1 x 5 x 5 x 3>",
    );
    rejects(
        w,
        "%p = maxpool @out %dest, @in %src { Kernels: [2, 2], Strides: [2, 2], Layout: NCHW }",
        "produces float<1 x 6 x 3 x 1>",
    );
    rejects(
        w,
        "%p = maxpool @out %dest, @in %src { Kernels: [9, 1] }",
        "larger than the padded input",
    );
}

#[test]
fn conv_transpose_shapes() {
    let w = &[
        "%src = WeightVar float<1 x 3 x 3 x 4> mutable",
        "%filter = WeightVar float<4 x 3 x 3 x 2> const",
        "%bias = WeightVar float<4> const",
        "%dest = WeightVar float<1 x 8 x 7 x 4> mutable",
    ];
    let ct = "%c = convtranspose @out %dest, @in %src, @in %filter, @in %bias";
    // (3 - 1) * 3 + 3 - 1 - 0 + 1 = 9 - 1 = 8 rows, (3 - 1) * 2 + 3 = 7 columns.
    accepts(
        w,
        &format!("{ct} {{ Kernels: [3, 3], Strides: [3, 2], Pads: [1, 0, 1, 0], Group: 2, OutputPadding: [1, 0] }}"),
    );
    rejects(
        w,
        &format!("{ct} {{ Kernels: [3, 3], Strides: [3, 2], Group: 2 }}"),
        "`Dest` has type float<1 x 8 x 7 x 4> but `convtranspose` produces float<1 x 9 x 7 x 4>",
    );
    rejects(
        w,
        &format!("{ct} {{ Kernels: [2, 3], Strides: [3, 2], Group: 2 }}"),
        "`Filter` has type float<4 x 3 x 3 x 2> but `convtranspose` expects float<4 x 2 x 3 x 2>",
    );
    rejects(
        w,
        &format!("{ct} {{ Kernels: [3, 3], Group: 3 }}"),
        "`Group: 3` does not divide the 4 input channels",
    );
    rejects(
        w,
        &format!("{ct} {{ Kernels: [3, 3], Pads: [9, 0, 9, 0] }}"),
        "the pads leave no output height",
    );
    rejects(
        w,
        &format!("{ct} {{ Kernels: [3, 3], OutputPadding: [-1, 0] }}"),
        "`OutputPadding` must have 2 non-negative elements",
    );
}

#[test]
fn pool_dilation_shapes() {
    let w = &[
        "%src = WeightVar float<1 x 4 x 4 x 1> mutable",
        "%dest = WeightVar float<1 x 2 x 2 x 1> mutable",
    ];
    accepts(
        w,
        "%p = maxpool @out %dest, @in %src { Kernels: [2, 2], Dilation: [2, 2] }",
    );
    rejects(
        w,
        "%p = avgpool @out %dest, @in %src { Kernels: [2, 2], Dilation: [1, 2] }",
        "produces float<1 x 3 x 2 x 1>",
    );
    rejects(
        w,
        "%p = avgpool @out %dest, @in %src { Kernels: [2, 2], Dilation: [0, 2] }",
        "`Dilation` must have 2 positive elements",
    );
}

#[test]
fn matrix_shapes() {
    let fc = &[
        "%src = WeightVar float<2 x 3> mutable",
        "%w = WeightVar float<3 x 4> const",
        "%b = WeightVar float<4> const",
        "%dest = WeightVar float<2 x 5> mutable",
    ];
    rejects(
        fc,
        "%f = fullyconnected @out %dest, @in %src, @in %w, @in %b",
        "`Dest` has type float<2 x 5> but `fullyconnected` produces float<2 x 4>",
    );
    let mm = &[
        "%a = WeightVar float<2 x 3> mutable",
        "%b = WeightVar float<4 x 5> mutable",
        "%d = WeightVar float<2 x 5> mutable",
    ];
    rejects(
        mm,
        "%m = matmul @out %d, @in %a, @in %b",
        "`RHS` has type float<4 x 5> but `matmul` expects float<3 x 5>",
    );
    rejects(
        mm,
        "%m = batchmatmul @out %d, @in %a, @in %b",
        "`LHS` must be 3-D for `batchmatmul`",
    );
    let bmm = &[
        "%a = WeightVar float<2 x 2 x 3> mutable",
        "%b = WeightVar float<2 x 3 x 4> mutable",
        "%d = WeightVar float<2 x 2 x 5> mutable",
    ];
    rejects(
        bmm,
        "%m = batchmatmul @out %d, @in %a, @in %b",
        "produces float<2 x 2 x 4>",
    );
    let ba = &[
        "%b = WeightVar float<3 x 4> mutable",
        "%s = WeightVar float<3> mutable",
        "%d = WeightVar float<4> mutable",
    ];
    rejects(
        ba,
        "%a = batchedadd @out %b, @in %b, @in %s",
        "`Slice` has type float<3> but `batchedadd` expects float<4>",
    );
    rejects(
        ba,
        "%a = batchedreduceadd @out %s, @in %b { Axis: 2 }",
        "`Axis: 2` is out of range",
    );
    rejects(
        ba,
        "%a = batchedreduceadd @out %s, @in %b { Axis: -1 }",
        "`Axis: -1` is out of range",
    );
    accepts(ba, "%a = batchedreduceadd @out %s, @in %b { Axis: 1 }");
    rejects(
        ba,
        "%a = batchedreduceadd @out %s, @in %b { Axis: 0 }",
        "produces float<4>",
    );
    let one = &[
        "%b = WeightVar float<7> mutable",
        "%d = WeightVar float<1> mutable",
    ];
    accepts(one, "%a = batchedreduceadd @out %d, @in %b { Axis: 0 }");
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn rowwise_fully_connected_shapes() {
    let rw = |w: &str, b: &str, s: &str, d: &str| {
        [
            "%src = WeightVar i8[S:0.5 O:0]<2 x 3> mutable".to_string(),
            format!("%w = WeightVar {w} const"),
            format!("%b = WeightVar {b} const"),
            format!("%s = WeightVar {s} const"),
            "%o = WeightVar index32<4> const".to_string(),
            format!("%d = WeightVar {d} mutable"),
        ]
    };
    let inst =
        "%f = rowwisequantizedfullyconnected @out %d, @in %src, @in %w, @in %b, @in %s, @in %o";
    let ok = rw(
        "i8[S:1.0 O:0]<4 x 3>",
        "i32[S:0.01 O:0]<4>",
        "float<4>",
        "i8[S:0.25 O:0]<2 x 4>",
    );
    accepts(&refs(&ok), inst);
    let cases = [
        (
            rw("i8[S:1.0 O:0]<3 x 4>", "i32[S:0.01 O:0]<4>", "float<4>", "i8[S:0.25 O:0]<2 x 4>"),
            "`Weights` has type i8[S:1.0 O:0]<3 x 4> but `rowwisequantizedfullyconnected` expects i8[S:1.0 O:0]<3 x 3>",
        ),
        (
            rw("i8[S:1.0 O:0]<4 x 3>", "i8[S:0.01 O:0]<4>", "float<4>", "i8[S:0.25 O:0]<2 x 4>"),
            "a row-wise bias is `i32`",
        ),
        (
            rw("i8[S:1.0 O:0]<4 x 3>", "i32[S:0.01 O:0]<4>", "index32<4>", "i8[S:0.25 O:0]<2 x 4>"),
            "`Scales` has element type index32 but must be `float`",
        ),
        (
            rw("i8[S:1.0 O:0]<4 x 3>", "i32[S:0.01 O:0]<4>", "float<5>", "i8[S:0.25 O:0]<2 x 4>"),
            "`Scales` has type float<5>",
        ),
        (
            rw("i8[S:1.0 O:0]<4 x 3>", "i32[S:0.01 O:0]<4>", "float<4>", "float<2 x 4>"),
            "computes on `i8` or `ui8`",
        ),
    ];
    for (ws, text) in cases {
        rejects(&refs(&ws), inst, text);
    }
}

#[test]
fn dynamic_fully_connected_shapes() {
    let dq = |src: &str, w: &str, b: &str, d: &str| {
        [
            format!("%src = WeightVar {src} mutable"),
            format!("%w = WeightVar {w} const"),
            format!("%b = WeightVar {b} const"),
            "%s = WeightVar float<4> const".to_string(),
            "%o = WeightVar index32<4> const".to_string(),
            format!("%d = WeightVar {d} mutable"),
        ]
    };
    let plain = "%f = dynamicquantizedfullyconnected @out %d, @in %src, @in %w, @in %b";
    let rowwise =
        "%f = dynamicrowwisequantizedfullyconnected @out %d, @in %src, @in %w, @in %b, @in %s, @in %o";
    let ok = dq(
        "float<2 x 3>",
        "i8[S:0.5 O:2]<3 x 4>",
        "float<4>",
        "float<2 x 4>",
    );
    accepts(&refs(&ok), plain);
    accepts(&refs(&ok), rowwise);
    let cases = [
        (
            dq("float<2 x 3>", "i8[S:0.5 O:2]<4 x 3>", "float<4>", "float<2 x 4>"),
            "`Weights` has type i8[S:0.5 O:2]<4 x 3> but `dynamicquantizedfullyconnected` expects i8[S:0.5 O:2]<3 x 3>",
        ),
        (
            dq("float<2 x 3>", "i8[S:0.5 O:2]<3 x 4>", "float<4>", "float<3 x 4>"),
            "produces float<2 x 4>",
        ),
        (
            dq("float16<2 x 3>", "i8[S:0.5 O:2]<3 x 4>", "float<4>", "float<2 x 4>"),
            "`Src` has element type float16 but must be `float`",
        ),
        (
            dq("float<2 x 3>", "float<3 x 4>", "float<4>", "float<2 x 4>"),
            "`Weights` has element type float but must be `i8`",
        ),
        (
            dq("float<2 x 3>", "i8[S:0.5 O:2]<3 x 4>", "float<5>", "float<2 x 4>"),
            "`Bias` has type float<5>",
        ),
        (
            dq("float<2 x 3 x 1>", "i8[S:0.5 O:2]<3 x 4>", "float<4>", "float<2 x 4>"),
            "`Src` must be 2-D",
        ),
    ];
    for (ws, text) in cases {
        rejects(&refs(&ws), plain, text);
    }
    let bad_members = format!("{plain} {{ IsSymmetric: false }}");
    rejects(
        &refs(&ok),
        &bad_members,
        "only symmetric dynamic quantization",
    );
    let short = dq(
        "float<2 x 3>",
        "i8[S:0.5 O:2]<3 x 5>",
        "float<5>",
        "float<2 x 5>",
    );
    rejects(&refs(&short), rowwise, "`Scales` has type float<4>");
}

#[test]
fn quantization_profile_shapes() {
    let w = |x: &str, h: &str, c: &str| {
        [
            format!("%x = WeightVar {x} mutable"),
            format!("%h = WeightVar {h} mutable"),
            format!("%c = WeightVar {c} mutable"),
        ]
    };
    let inst = "%p = quantizationprofile @in %x, @inout %h, @inout %c";
    accepts(&refs(&w("float<2 x 3 x 4>", "float<16>", "float<2>")), inst);
    for (ws, text) in [
        (
            w("float16<4>", "float<16>", "float<2>"),
            "`InputTensor` has element type float16",
        ),
        (
            w("float<4>", "float<2 x 8>", "float<2>"),
            "`Histogram` has type float<2 x 8>",
        ),
        (
            w("float<4>", "index32<16>", "float<2>"),
            "`Histogram` has type index32<16>",
        ),
        (
            w("float<4>", "float<16>", "float<1 x 2>"),
            "`ComputationInfo` has type float<1 x 2>",
        ),
    ] {
        rejects(&refs(&ws), inst, text);
    }
}

#[test]
fn elementwise_kinds_and_shapes() {
    let w = &[
        "%f = WeightVar float<2 x 3> mutable",
        "%g = WeightVar float<3 x 2> mutable",
        "%h = WeightVar float16<2 x 3> mutable",
        "%i = WeightVar index32<2 x 3> mutable",
        "%q = WeightVar i8[S:0.5 O:0]<2 x 3> mutable",
        "%r = WeightVar i8[S:0.25 O:2]<2 x 3> mutable",
        "%c = WeightVar bool<2 x 3> mutable",
    ];
    rejects(
        w,
        "%a = elementadd @out %f, @in %f, @in %g",
        "`RHS` has type float<3 x 2> but `Dest` has type float<2 x 3>",
    );
    rejects(
        w,
        "%a = elementsub @out %f, @in %f, @in %h",
        "`RHS` has element type float16 but `Dest` has float",
    );
    accepts(w, "%a = elementmax @out %i, @in %i, @in %i");
    accepts(w, "%a = elementmul @out %q, @in %r, @in %q");
    // The bitwise instructions and the shifts: plain integers only.
    accepts(w, "%a = elementbitwiseand @out %i, @in %i, @in %i");
    accepts(w, "%a = elementbitshiftleft @out %i, @in %i, @in %i");
    rejects(
        w,
        "%a = elementbitwisexor @out %f, @in %f, @in %f",
        "`index32`, `index64`, `int8` or `uint8`",
    );
    rejects(
        w,
        "%a = elementbitshiftright @out %q, @in %q, @in %q",
        "`index32`, `index64`, `int8` or `uint8`",
    );
    // Glow's remaining element-wise instructions.
    accepts(w, "%a = elementrsubconst @out %f, @in %f { LHS: 2 }");
    accepts(w, "%a = hardswish @out %f, @in %f");
    rejects(
        w,
        "%a = elementmulconst @out %i, @in %i { LHS: 2 }",
        "`elementmulconst` accepts float element types here",
    );
    accepts(w, "%a = elementisnan @out %c, @in %f");
    rejects(
        w,
        "%a = elementisnan @out %c, @in %i",
        "`Src` has element type index32 but `elementisnan` accepts float element types here",
    );
    accepts(w, "%a = elementbitwisenot @out %i, @in %i");
    accepts(w, "%a = modulo @out %i, @in %i { Divisor: -3 }");
    rejects(
        w,
        "%a = modulo @out %q, @in %q { Divisor: 3 }",
        "`index32`, `index64`, `int8` or `uint8`",
    );
    // elementfmod: float or plain integers, not quantized.
    accepts(w, "%a = elementfmod @out %f, @in %f, @in %f");
    accepts(w, "%a = elementfmod @out %i, @in %i, @in %i");
    rejects(
        w,
        "%a = elementfmod @out %q, @in %q, @in %q",
        "`float`, `index32`, `index64`, `int8` or `uint8`",
    );
    rejects(
        w,
        "%a = elementdiv @out %c, @in %c, @in %c",
        "accepts float, quantized or index",
    );
    accepts(w, "%a = relu @out %q, @in %r");
    rejects(
        w,
        "%a = relu @out %i, @in %i",
        "`Dest` has element type index32",
    );
    rejects(
        w,
        "%a = sigmoid @out %q, @in %q",
        "accepts float element types",
    );
    rejects(w, "%a = tanh @out %g, @in %f", "needs the same shape");
    accepts(w, "%a = leakyrelu @out %f, @in %f { Alpha: 0.1 }");
    rejects(
        w,
        "%a = gather @out %f, @in %f, @in %f",
        "`Indices` has element type float but `gather` accepts `index32` or `index64` here",
    );
    rejects(
        w,
        "%a = leakyrelu @out %q, @in %q",
        "accepts float element types",
    );
    rejects(
        w,
        "%a = clip @out %h, @in %f { Min: 0, Max: 1 }",
        "`Src` has element type float but `Dest` has float16",
    );
    accepts(w, "%a = elementcmplte @out %c, @in %q, @in %r");
    rejects(
        w,
        "%a = elementcmplte @out %f, @in %f, @in %f",
        "`Dest` has element type float but `elementcmplte` accepts `bool`",
    );
    accepts(w, "%a = elementselect @out %f, @in %c, @in %f, @in %f");
    rejects(
        w,
        "%a = elementselect @out %f, @in %f, @in %f, @in %f",
        "`Cond` has element type float",
    );
    rejects(
        w,
        "%a = elementselect @out %f, @in %c, @in %i, @in %f",
        "`LHS` has element type index32 but `Dest` has float",
    );
    rejects(
        w,
        "%a = copy @out %f, @in %h",
        "`Src` has type float16<2 x 3> but `Dest` has type float<2 x 3>",
    );
    rejects(w, "%a = copy @out %q, @in %r", "needs identical types");
    accepts(w, "%a = quantize @out %q, @in %f");
    rejects(
        w,
        "%a = quantize @out %f, @in %f",
        "`Dest` has element type float but `quantize` accepts quantized",
    );
    accepts(w, "%a = dequantize @out %h, @in %q");
    rejects(
        w,
        "%a = dequantize @out %h, @in %h",
        "`Src` has element type float16",
    );
    accepts(w, "%a = rescalequantized @out %q, @in %r");
    rejects(
        w,
        "%a = rescalequantized @out %q, @in %f",
        "`Src` has element type float",
    );
}

#[test]
fn convertto_shapes() {
    let w = &[
        "%f = WeightVar float<2 x 3> mutable",
        "%i = WeightVar index64<2 x 3> mutable",
        "%b = WeightVar bool<2 x 3> mutable",
        "%u = WeightVar uint8<2 x 3> mutable",
        "%q = WeightVar i8[S:0.5 O:0]<2 x 3> mutable",
        "%h = WeightVar float16<2 x 3> mutable",
        "%s = WeightVar index32<6> mutable",
        "%g = WeightVar float<2 x 3> mutable",
    ];
    for (d, s) in [
        ("i", "f"),
        ("f", "i"),
        ("b", "f"),
        ("u", "b"),
        ("g", "f"),
        ("i", "u"),
    ] {
        accepts(w, &format!("%a = convertto @out %{d}, @in %{s}"));
    }
    rejects(
        w,
        "%a = convertto @out %f, @in %q",
        "`Src` has element type i8",
    );
    rejects(
        w,
        "%a = convertto @out %h, @in %f",
        "`Dest` has element type float16",
    );
    rejects(w, "%a = convertto @out %s, @in %f", "needs the same shape");
}

#[test]
fn normalization_shapes() {
    let w = &[
        "%s = WeightVar float<2 x 5> mutable",
        "%t = WeightVar float<2 x 5 x 1> mutable",
        "%v = WeightVar float<5> mutable",
        "%u = WeightVar float<2> mutable",
        "%o = WeightVar float<2 x 5> mutable",
    ];
    accepts(w, "%a = softmax @out %o, @in %s");
    rejects(
        w,
        "%a = softmax @out %t, @in %t",
        "`Src` must be 2-D for `softmax`",
    );
    let bn = "%a = batchnormalization @out %o, @in %s, @in %v, @in %v, @in %v, @in %v";
    accepts(w, &format!("{bn} {{ ChannelIdx: 1 }}"));
    rejects(
        w,
        &format!("{bn} {{ ChannelIdx: 0 }}"),
        "`Scale` has type float<5> but `batchnormalization` expects float<2>",
    );
    rejects(
        w,
        &format!("{bn} {{ ChannelIdx: 2 }}"),
        "`ChannelIdx: 2` is out of range",
    );
    rejects(w, bn, "`ChannelIdx: 3` is out of range");
    rejects(
        w,
        "%a = localresponsenormalization @out %s, @in %s, @out %t { HalfWindowSize: 1 }",
        "`Scale` has type float<2 x 5 x 1> but `Src` has type float<2 x 5>",
    );
}

#[test]
fn movement_shapes() {
    let w = &[
        "%a = WeightVar float<2 x 3 x 4> mutable",
        "%b = WeightVar float<4 x 2 x 3> mutable",
        "%big = WeightVar float<4 x 6> mutable",
        "%small = WeightVar float<2 x 3> mutable",
        "%qs = WeightVar i8[S:1.0 O:0]<2 x 3> mutable",
    ];
    accepts(w, "%t = transpose @out %b, @in %a { Shuffle: [2, 0, 1] }");
    rejects(
        w,
        "%t = transpose @out %b, @in %a { Shuffle: [0, 1, 2] }",
        "`Dest` has type float<4 x 2 x 3> but `transpose` produces float<2 x 3 x 4>",
    );
    rejects(
        w,
        "%t = transpose @out %b, @in %a { Shuffle: [2, 2, 1] }",
        "is not a permutation of 0..3",
    );
    rejects(
        w,
        "%t = transpose @out %b, @in %a { Shuffle: [2, 0] }",
        "is not a permutation",
    );
    rejects(
        w,
        "%t = transpose @out %b, @in %a { Shuffle: [2, 0, -1] }",
        "is not a permutation",
    );
    accepts(
        w,
        "%i = inserttensor @inout %big, @in %small { Offsets: [2, 0], Count: 2, Axis: 1 }",
    );
    rejects(
        w,
        "%i = inserttensor @inout %big, @in %small { Offsets: [2, 1], Count: 2, Axis: 1 }",
        "dimension 1 reaches 7 but has size 6",
    );
    rejects(
        w,
        "%i = inserttensor @inout %big, @in %small { Offsets: [3, 0] }",
        "dimension 0 reaches 5",
    );
    rejects(
        w,
        "%i = inserttensor @inout %big, @in %small { Offsets: [0] }",
        "`Offsets` has 1 elements but `Dest` has rank 2",
    );
    rejects(
        w,
        "%i = inserttensor @inout %big, @in %small { Offsets: [0, 0], Axis: 2 }",
        "`Axis: 2` is out of range",
    );
    rejects(
        w,
        "%i = inserttensor @inout %big, @in %qs { Offsets: [0, 0] }",
        "`Src` has element type i8[S:1.0 O:0] but `Dest` has float",
    );
    accepts(
        w,
        "%e = extracttensor @out %small, @in %big { Offsets: [2, 3] }",
    );
    rejects(
        w,
        "%e = extracttensor @out %small, @in %big { Offsets: [2, 4] }",
        "does not fit in `Src` float<4 x 6>",
    );
    rejects(
        w,
        "%e = extracttensor @out %small, @in %big { Offsets: [-1, 0] }",
        "`Offsets` element 0 is negative",
    );
    rejects(
        w,
        "%e = extracttensor @out %small, @in %a { Offsets: [0, 0, 0] }",
        "`Dest` must be 3-D",
    );
}

#[test]
fn tensorview_windows() {
    let w = &[
        "%x = WeightVar float<4 x 6> mutable",
        "%y = WeightVar float<12> mutable",
        "%z = WeightVar float<2 x 3> mutable",
    ];
    let view =
        |ty: &str, offs: &str| format!("%v = tensorview @in %x {{ Ty: {ty}, Offsets: {offs} }}");
    accepts(w, &view("float<12>", "[2, 0]"));
    accepts(w, &view("float<24>", "[0, 0]"));
    accepts(w, &view("index32<2 x 6>", "[2, 0]"));
    accepts(w, &view("float16<4>", "[3, 4]"));
    rejects(
        w,
        &view("float<12>", "[2, 1]"),
        "covers bytes 52..100 but `Src` float<4 x 6> has only 96 bytes",
    );
    rejects(w, &view("float64<13>", "[0, 0]"), "has only 96 bytes");
    rejects(
        w,
        &view("float<1>", "[4, 0]"),
        "offset 4 is outside dimension 0 (size 4)",
    );
    rejects(
        w,
        &view("float<1>", "[0]"),
        "`Offsets` has 1 elements but `Src` has rank 2",
    );
    rejects(w, &view("float<1>", "[0, -2]"), "negative");
}

#[test]
fn index_shapes() {
    let w = &[
        "%m = WeightVar float<3 x 4> mutable",
        "%i = WeightVar index64<3 x 2> mutable",
        "%g = WeightVar float<3 x 2> mutable",
        "%big = WeightVar index64<3 x 5> mutable",
        "%fi = WeightVar float<3 x 2> mutable",
        "%c = WeightVar float<2 x 3 x 4> mutable",
        "%t = WeightVar index32<2 x 5 x 1> mutable",
        "%n = WeightVar float<2 x 5 x 4> mutable",
        "%t3 = WeightVar index32<2 x 4> mutable",
        "%a = WeightVar index64<3 x 1> mutable",
        "%a2 = WeightVar index64<3> mutable",
        "%oh = WeightVar float<3 x 7> mutable",
        "%md = WeightVar float<3 x 4> mutable",
    ];
    accepts(w, "%x = gatherelements @out %g, @in %m, @in %i { Axis: 1 }");
    rejects(
        w,
        "%x = gatherelements @out %g, @in %m, @in %fi { Axis: 1 }",
        "`Indices` has element type float",
    );
    rejects(
        w,
        "%x = gatherelements @out %m, @in %m, @in %big { Axis: 0 }",
        "no larger dimension except on `Axis`",
    );
    rejects(
        w,
        "%x = gatherelements @out %g, @in %m, @in %i { Axis: 2 }",
        "`Axis: 2` is out of range",
    );
    // BatchDims 1: index tuples of 1 into the middle dimension.
    accepts(w, "%x = gathernd @out %n, @in %c, @in %t { BatchDims: 1 }");
    rejects(
        w,
        "%x = gathernd @out %n, @in %c, @in %t3 { BatchDims: 1 }",
        "needs the leading 1 dimensions shared and a last dimension from 1 to 2",
    );
    rejects(
        w,
        "%x = gathernd @out %m, @in %c, @in %t { BatchDims: 1 }",
        "`gathernd` produces float<2 x 5 x 4>",
    );
    accepts(
        w,
        "%x = scatterelements @out %md, @in %m, @in %i, @in %g { Axis: 1, Reduction: mul }",
    );
    rejects(
        w,
        "%x = scatterelements @out %md, @in %m, @in %i, @in %m { Axis: 1 }",
        "`Updates` has type float<3 x 4> but `Indices` has type index64<3 x 2>",
    );
    accepts(w, "%x = scatternd @out %md, @in %m, @in %a, @in %m");
    rejects(
        w,
        "%x = scatternd @out %md, @in %m, @in %a, @in %g",
        "`scatternd` expects float<3 x 4>",
    );
    accepts(w, "%x = onehot @out %oh, @in %a2 { Axis: 1 }");
    rejects(
        w,
        "%x = onehot @out %oh, @in %i { Axis: 1 }",
        "needs `Indices`' dims with one more at `Axis: 1`",
    );
    accepts(w, "%x = argmax @out %a, @in %m { Axis: 1 }");
    accepts(
        w,
        "%x = argmin @out %a2, @in %m { Axis: 1, KeepDims: false }",
    );
    rejects(
        w,
        "%x = argmax @out %a2, @in %m { Axis: 1 }",
        "`argmax` produces index64<3 x 1>",
    );
    rejects(
        w,
        "%x = argmin @out %g, @in %m { Axis: 1 }",
        "`Dest` has element type float but `argmin` accepts `index32` or `index64`",
    );
    accepts(w, "%x = logsoftmax @out %md, @in %m");
}

#[test]
fn recommendation_shapes() {
    let w = &[
        "%data = WeightVar float<10 x 4> mutable",
        "%idx = WeightVar index64<6> mutable",
        "%fidx = WeightVar float<6> mutable",
        "%len = WeightVar index32<3> mutable",
        "%w = WeightVar float<6> mutable",
        "%w5 = WeightVar float<5> mutable",
        "%d = WeightVar float<3 x 4> mutable",
        "%d2 = WeightVar float<2 x 4> mutable",
        "%di = WeightVar index32<3 x 4> mutable",
        "%off = WeightVar index64<3> mutable",
        "%off1 = WeightVar index64<1> mutable",
        "%e = WeightVar float<2 x 3 x 4> mutable",
        "%ei = WeightVar index32<2 x 3> mutable",
        "%r = WeightVar index32<3 x 2> mutable",
        "%g = WeightVar float<6> mutable",
        "%gd = WeightVar float<9> mutable",
        "%gl = WeightVar index32<2> mutable",
        "%ranges = WeightVar index32<2 x 3 x 2> mutable",
        "%ranges3 = WeightVar index32<2 x 3 x 3> mutable",
        "%vals = WeightVar float<6 x 2> mutable",
        "%def = WeightVar float<2> mutable",
        "%dense = WeightVar float<3 x 2 x 2> mutable",
        "%lv = WeightVar float<2 x 3> mutable",
        "%ex = WeightVar index32<2 x 3> mutable",
        "%gom = WeightVar index32<6> mutable",
    ];
    accepts(
        w,
        "%x = sparselengthssum @out %d, @in %data, @in %idx, @in %len",
    );
    rejects(
        w,
        "%x = sparselengthssum @out %d, @in %data, @in %fidx, @in %len",
        "`Indices` has element type float but `sparselengthssum` accepts `index32` or `index64`",
    );
    rejects(
        w,
        "%x = sparselengthssum @out %d2, @in %data, @in %idx, @in %len",
        "`sparselengthssum` produces float<3 x 4>",
    );
    rejects(
        w,
        "%x = sparselengthssum @out %di, @in %data, @in %idx, @in %len",
        "`Dest` has element type index32 but `Data` has float",
    );
    accepts(
        w,
        "%x = sparselengthsweightedsum @out %d, @in %data, @in %w, @in %idx, @in %len",
    );
    rejects(
        w,
        "%x = sparselengthsweightedsum @out %d, @in %data, @in %w5, @in %idx, @in %len",
        "`sparselengthsweightedsum` expects float<6>",
    );
    accepts(w, "%x = lengthssum @out %d, @in %data, @in %len");
    accepts(
        w,
        "%x = embeddingbag @out %d, @in %data, @in %w, @in %idx, @in %off",
    );
    accepts(
        w,
        "%x = embeddingbag @out %d2, @in %data, @in %w, @in %idx, @in %off { HasEndOffset: true }",
    );
    rejects(
        w,
        "%x = embeddingbag @out %d, @in %data, @in %w, @in %idx, @in %off1 { HasEndOffset: true }",
        "needs at least two",
    );
    accepts(
        w,
        "%x = embedding @out %e, @in %data, @in %ei { PadIdx: 3 }",
    );
    rejects(
        w,
        "%x = embedding @out %e, @in %data, @in %ei { Sparse: true }",
        "supports only `Sparse: false`",
    );
    rejects(
        w,
        "%x = embedding @out %d, @in %data, @in %ei",
        "`embedding` produces float<2 x 3 x 4>",
    );
    accepts(w, "%x = lengthstoranges @out %r, @in %len");
    rejects(
        w,
        "%x = lengthstoranges @out %ei, @in %len",
        "`lengthstoranges` produces index32<3 x 2>",
    );
    accepts(w, "%x = lengthsrangefill @out %gom, @in %len");
    accepts(
        w,
        "%x = gatherranges @out %g, @out %gl, @in %gd, @in %ranges",
    );
    rejects(
        w,
        "%x = gatherranges @out %g, @out %gl, @in %gd, @in %ranges3",
        "its last dimension must be 2",
    );
    accepts(
        w,
        "%x = sparsetodensemask @out %dense, @in %idx, @in %vals, @in %def, @in %len { Mask: [4, 9] }",
    );
    rejects(
        w,
        "%x = sparsetodensemask @out %dense, @in %idx, @in %vals, @in %def, @in %len { Mask: [4, 4] }",
        "`Mask` must list at least one id, each once",
    );
    accepts(
        w,
        "%x = batchsparsetodense @out %d, @in %len, @in %idx, @in %w { DenseLastDim: 4 }",
    );
    rejects(
        w,
        "%x = batchsparsetodense @out %d, @in %len, @in %idx, @in %w { DenseLastDim: 5 }",
        "`batchsparsetodense` produces float<3 x 5>",
    );
    accepts(
        w,
        "%x = fillexampleswithindicator @out %d, @in %d2, @in %len",
    );
    rejects(
        w,
        "%x = fillexampleswithindicator @out %d, @in %d2, @in %w",
        "`Indicator` has element type float",
    );
    accepts(
        w,
        "%x = sparselabelsplit @out %lv, @out %ex, @out %gom, @in %len, @in %idx, @in %w { NumLabels: 2 }",
    );
    rejects(
        w,
        "%x = sparselabelsplit @out %lv, @out %ex, @out %gom, @in %len, @in %idx, @in %w { NumLabels: 4 }",
        "not a multiple of `NumLabels: 4`",
    );
}

#[test]
fn table_batched_and_rowwise_shapes() {
    let w = &[
        "%q = WeightVar ui8[S:1.0 O:0]<10 x 4> mutable",
        "%qi = WeightVar i8[S:1.0 O:0]<10 x 4> mutable",
        "%s = WeightVar float<10> mutable",
        "%s9 = WeightVar float<9> mutable",
        "%w = WeightVar float<6> mutable",
        "%idx = WeightVar index64<6> mutable",
        "%len = WeightVar index32<3> mutable",
        "%d = WeightVar float<3 x 4> mutable",
        "%bw = WeightVar float<2 x 12> mutable",
        "%to = WeightVar index64<4> mutable",
        "%off = WeightVar index64<7> mutable",
        "%off6 = WeightVar index64<6> mutable",
        "%bd = WeightVar float<2 x 2 x 3> mutable",
        "%pe = WeightVar float<4 x 6> mutable",
        "%l4 = WeightVar index64<4> mutable",
        "%l3 = WeightVar index64<3> mutable",
        "%l3i = WeightVar index32<3> mutable",
        "%pd = WeightVar float<4 x 6> mutable",
    ];
    let op = "rowwisequantizedsparselengthsweightedsum";
    accepts(
        w,
        &format!("%x = {op} @out %d, @in %q, @in %s, @in %s, @in %w, @in %idx, @in %len"),
    );
    rejects(
        w,
        &format!("%x = {op} @out %d, @in %qi, @in %s, @in %s, @in %w, @in %idx, @in %len"),
        "takes `ui8` rows",
    );
    rejects(
        w,
        &format!("%x = {op} @out %d, @in %q, @in %s9, @in %s, @in %w, @in %idx, @in %len"),
        "expects float<10>",
    );
    rejects(
        w,
        &format!("%x = {op} @out %d, @in %q, @in %s, @in %s, @in %w, @in %idx, @in %len {{ UseFP16Accumulation: true }}"),
        "needs a `float16` `Dest`",
    );
    accepts(
        w,
        "%x = batchedunaryembeddingsbags @out %bd, @in %bw, @in %to, @in %off, @in %idx",
    );
    rejects(
        w,
        "%x = batchedunaryembeddingsbags @out %bd, @in %bw, @in %to, @in %off6, @in %idx",
        "needs `T * B + 1` of them with 3 tables",
    );
    accepts(
        w,
        "%x = permutepooledembeddings @out %pd, @in %pe, @in %l4, @in %l3, @in %l4, @in %l3",
    );
    rejects(
        w,
        "%x = permutepooledembeddings @out %pd, @in %pe, @in %l4, @in %l4, @in %l4, @in %l3",
        "`OffsetDimList` has 4 elements but `PermuteList` has 4",
    );
    rejects(
        w,
        "%x = permutepooledembeddings @out %pd, @in %pe, @in %l4, @in %l3i, @in %l4, @in %l3",
        "takes `index64` lists",
    );
}

#[test]
fn fused_row_shapes() {
    let w = &[
        "%t8 = WeightVar ui8fused[S:1.0 O:0]<10 x 12> mutable",
        "%t4 = WeightVar ui4fused[S:1.0 O:0]<10 x 10> mutable",
        "%h8 = WeightVar ui8fusedfp16[S:1.0 O:0]<10 x 8> mutable",
        "%thin = WeightVar ui8fused[S:1.0 O:0]<10 x 8> mutable",
        "%q = WeightVar ui8[S:1.0 O:0]<10 x 12> mutable",
        "%w = WeightVar float<6> mutable",
        "%idx = WeightVar index64<6> mutable",
        "%len = WeightVar index32<3> mutable",
        "%d = WeightVar float<3 x 4> mutable",
        "%off = WeightVar index64<4> mutable",
    ];
    let op = "fusedrowwisequantizedsparselengthsweightedsum";
    accepts(
        w,
        &format!("%x = {op} @out %d, @in %t8, @in %w, @in %idx, @in %len"),
    );
    accepts(
        w,
        &format!("%x = {op} @out %d, @in %t4, @in %w, @in %idx, @in %len"),
    );
    accepts(
        w,
        &format!("%x = {op} @out %d, @in %h8, @in %w, @in %idx, @in %len"),
    );
    rejects(
        w,
        &format!("%x = {op} @out %d, @in %q, @in %w, @in %idx, @in %len"),
        "takes fused rows",
    );
    rejects(
        w,
        &format!("%x = {op} @out %d, @in %thin, @in %w, @in %idx, @in %len"),
        "its rows need more than 8 bytes",
    );
    accepts(
        w,
        "%x = fusedrowwisequantizedsparselengthssum @out %d, @in %t8, @in %idx, @in %len",
    );
    accepts(
        w,
        "%x = embeddingbagbyterowwiseoffsets @out %d, @in %t8, @in %w, @in %idx, @in %off { HasEndOffset: true }",
    );
    rejects(
        w,
        "%x = embeddingbagbyterowwiseoffsets @out %d, @in %t8, @in %w, @in %idx, @in %off",
        "produces float<4 x 4>",
    );
}

#[test]
fn hostile_values_never_panic() {
    let huge = "%h = WeightVar float<1073741824 x 1073741824 x 1> mutable";
    let w = &[huge, "%d = WeightVar float<2> mutable"];
    let big = i64::MAX;
    for inst in [
        format!("%v = tensorview @in %h {{ Ty: float<1073741824 x 1073741824 x 1>, Offsets: [1073741823, {}, 1] }}", big),
        "%v = tensorview @in %h { Ty: float<1073741824 x 1073741824 x 1>, Offsets: [1, 1, 1] }".to_string(),
        format!("%i = inserttensor @inout %h, @in %h {{ Offsets: [{big}, {big}, {big}], Count: {big}, Axis: 0 }}"),
        format!("%i = extracttensor @out %h, @in %h {{ Offsets: [{big}, 0, 0] }}"),
        format!("%t = transpose @out %h, @in %h {{ Shuffle: [{big}, -{big}, 0] }}"),
        format!("%r = batchedreduceadd @out %d, @in %h {{ Axis: -{big} }}"),
        format!("%p = maxpool @out %d, @in %h {{ Kernels: [{big}, {big}], Strides: [{big}, 1], Pads: [{big}, {big}, {big}, {big}] }}"),
        format!("%b = batchnormalization @out %h, @in %h, @in %d, @in %d, @in %d, @in %d {{ ChannelIdx: {big} }}"),
        format!("%g = gathernd @out %h, @in %h, @in %h {{ BatchDims: {big} }}"),
        format!("%g = gatherelements @out %h, @in %h, @in %h {{ Axis: -{big} }}"),
        "%s = scatternd @out %h, @in %h, @in %h, @in %d".to_string(),
        format!("%o = onehot @out %h, @in %d {{ Axis: {big} }}"),
        format!("%a = argmax @out %d, @in %h {{ Axis: {big} }}"),
        format!("%e = embeddingbag @out %h, @in %h, @in %d, @in %d, @in %d {{ HasEndOffset: true, AvgLength: {big} }}"),
        format!("%e = sparselabelsplit @out %h, @out %h, @out %d, @in %d, @in %d, @in %d {{ NumLabels: {big} }}"),
        format!("%e = batchsparsetodense @out %h, @in %d, @in %d, @in %d {{ DenseLastDim: {big} }}"),
        format!("%e = sparsetodensemask @out %h, @in %h, @in %h, @in %d, @in %d {{ Mask: [{big}, -{big}] }}"),
        "%e = embedding @out %h, @in %h, @in %h".to_string(),
    ] {
        let src = crate::verifier::tests::func(w, &[&inst]);
        let _ = messages(&src);
    }
    let w4 = &[
        "%s = WeightVar float<1 x 1152921504606846975 x 1 x 1> mutable",
        "%f = WeightVar float<1 x 1 x 1 x 1> mutable",
        "%b = WeightVar float<1> mutable",
    ];
    let inst = format!("%c = convolution @out %s, @in %s, @in %f, @in %b {{ Kernels: [{big}, {big}], Strides: [1, 1], Pads: [{big}, {big}, {big}, {big}], Dilation: [{big}, {big}], Group: {big} }}");
    let src = crate::verifier::tests::func(w4, &[&inst]);
    let _ = messages(&src);
    let inst = format!("%c = convtranspose @out %s, @in %s, @in %f, @in %b {{ Kernels: [{big}, {big}], Strides: [{big}, {big}], Pads: [{big}, 0, 0, {big}], Dilation: [{big}, {big}], Group: {big}, OutputPadding: [{big}, {big}] }}");
    let src = crate::verifier::tests::func(w4, &[&inst]);
    let _ = messages(&src);
}

#[test]
fn activation_gradient_loss_and_sgd_shapes() {
    let act = &[
        "%d = WeightVar float<2 x 3> mutable",
        "%g = WeightVar float<2 x 3> mutable",
        "%h = WeightVar float<3 x 2> mutable",
        "%q = WeightVar i8[S:0.5 O:0]<2 x 3> mutable",
    ];
    for op in ["relugrad", "sigmoidgrad", "tanhgrad"] {
        accepts(act, &format!("%a = {op} @in %d, @in %g, @out %g"));
        rejects(
            act,
            &format!("%a = {op} @in %d, @in %h, @out %g"),
            "`DestGrad` has type float<3 x 2> but must have the type of `Dest` (float<2 x 3>)",
        );
        rejects(
            act,
            &format!("%a = {op} @in %q, @in %g, @out %g"),
            "`Dest` has element type",
        );
    }
    let sm = &[
        "%od = WeightVar float<2 x 5> mutable",
        "%os = WeightVar float<2 x 5> mutable",
        "%sel = WeightVar index32<2 x 1> mutable",
        "%sel3 = WeightVar index64<3> mutable",
        "%fsel = WeightVar float<2> mutable",
        "%sg = WeightVar float<2 x 5> mutable",
        "%flat = WeightVar float<10> mutable",
    ];
    accepts(sm, "%s = softmaxgrad @in %od, @in %os, @in %sel, @out %sg");
    rejects(
        sm,
        "%s = softmaxgrad @in %od, @in %os, @in %sel3, @out %sg",
        "needs one label per row of `OrigDest`",
    );
    rejects(
        sm,
        "%s = softmaxgrad @in %od, @in %os, @in %fsel, @out %sg",
        "`Selected` has element type float",
    );
    rejects(
        sm,
        "%s = softmaxgrad @in %od, @in %os, @in %sel, @out %flat",
        "`SrcGrad` has type float<10> but must have the type of `OrigDest`",
    );
    let ce = &[
        "%p = WeightVar float<3 x 4> mutable",
        "%lab = WeightVar index64<3> mutable",
        "%ce = WeightVar float<1> mutable",
        "%ce2 = WeightVar float<2> mutable",
        "%pg = WeightVar float<3 x 4> mutable",
        "%lg = WeightVar index64<3> mutable",
        "%lg32 = WeightVar index32<3> mutable",
    ];
    accepts(ce, "%l = crossentropyloss @in %p, @in %lab, @out %ce");
    rejects(
        ce,
        "%l = crossentropyloss @in %p, @in %lab, @out %ce2",
        "`CE` has type float<2> but must hold one element",
    );
    accepts(
        ce,
        "%l = crossentropylossgrad @in %ce, @in %p, @in %lab, @out %pg, @out %lg",
    );
    rejects(
        ce,
        "%l = crossentropylossgrad @in %ce2, @in %p, @in %lab, @out %pg, @out %lg",
        "`CEGrad` has type float<2> but must hold one element",
    );
    rejects(
        ce,
        "%l = crossentropylossgrad @in %ce, @in %p, @in %lab, @out %pg, @out %lg32",
        "`Labelsgrad` has type index32<3> but must have the type of `Labels`",
    );
    let sgd = &[
        "%w = WeightVar float<4> mutable",
        "%g = WeightVar float<4> mutable",
        "%v = WeightVar float<4> mutable",
        "%v5 = WeightVar float<5> mutable",
    ];
    accepts(
        sgd,
        "%s = sgd @inout %w, @in %g, @inout %v { LearningRate: 0.1 }",
    );
    rejects(
        sgd,
        "%s = sgd @inout %w, @in %g, @inout %v5 { LearningRate: 0.1 }",
        "`Velocity` has type float<5> but must have the type of `Weight`",
    );
    rejects(
        sgd,
        "%s = sgd @inout %w, @in %g, @inout %v { LearningRate: 0.1, BatchSize: 0 }",
        "BatchSize",
    );
}

#[test]
fn bce_with_logits_shapes() {
    let w = &[
        "%x = WeightVar float<2 x 3> mutable",
        "%y = WeightVar float<2 x 3> mutable",
        "%c = WeightVar float<3> mutable",
        "%b = WeightVar float<2> mutable",
        "%one = WeightVar float<1> mutable",
        "%i = WeightVar index32<2 x 3> mutable",
    ];
    accepts(
        w,
        "%a = simplebinarycrossentropywithlogits @out %y, @in %x, @in %x { Reduction: 0 }",
    );
    accepts(w, "%a = binarycrossentropywithlogits @out %one, @in %x, @in %x, @in %x, @in %c { Reduction: 1 }");
    accepts(w, "%a = posweightbinarycrossentropywithlogits @out %one, @in %x, @in %x, @in %c { Reduction: 2 }");
    rejects(
        w,
        "%a = weightbinarycrossentropywithlogits @out %one, @in %x, @in %x, @in %b { Reduction: 2 }",
        "or be 1-D of its last dimension (3)",
    );
    rejects(
        w,
        "%a = simplebinarycrossentropywithlogits @out %y, @in %x, @in %i { Reduction: 0 }",
        "`Target` has element type index32",
    );
    rejects(
        w,
        "%a = simplebinarycrossentropywithlogits @out %one, @in %x, @in %x { Reduction: 0 }",
        "must have the type of `Input`",
    );
}

#[test]
fn rearrange_shapes() {
    let w = &[
        "%x = WeightVar float<2 x 3> mutable",
        "%p = WeightVar float<5 x 7> mutable",
        "%q = WeightVar index32<5 x 7> mutable",
        "%img = WeightVar float<1 x 2 x 4 x 3> mutable",
        "%up = WeightVar float<1 x 4 x 6 x 3> mutable",
        "%s2d = WeightVar float<1 x 1 x 2 x 12> mutable",
        "%ix = WeightVar index32<2 x 3> mutable",
        "%iy = WeightVar index32<2 x 3> mutable",
        "%c2 = WeightVar bool<2 x 3> mutable",
        "%cond = WeightVar bool<2 x 3> mutable",
        "%nz = WeightVar index32<6> mutable",
        "%nz64 = WeightVar index64<6> mutable",
    ];
    accepts(
        w,
        "%i = pad @out %p, @in %x { Pad: [1, 2, 2, 2], PaddingMode: 3 }",
    );
    rejects(
        w,
        "%i = pad @out %p, @in %x { Pad: [1, 2, 2, 1] }",
        "`Dest` has type float<5 x 7> but `pad` produces float<5 x 6>",
    );
    rejects(
        w,
        "%i = pad @out %p, @in %x { Pad: [1, 2, 2] }",
        "`Pad` has 3 elements but `Src` has rank 2",
    );
    rejects(
        w,
        "%i = pad @out %p, @in %x { Pad: [-3, 0, 0, 0] }",
        "the size -1; it must be at least 1",
    );
    rejects(
        w,
        "%i = pad @out %p, @in %x { Pad: [1, 2, 2, 2], PaddingMode: 4 }",
        "`PaddingMode: 4` is not a padding mode",
    );
    rejects(
        w,
        "%i = pad @out %q, @in %x { Pad: [1, 2, 2, 2] }",
        "`Dest` has element type index32 but `Src` has float",
    );
    accepts(
        w,
        "%i = resizenearest @out %up, @in %img { Scale: [1, 2, 1.5, 1] }",
    );
    accepts(
        w,
        "%i = resizebilinear @out %up, @in %img { Scale: [1, 2, 1.5, 1] }",
    );
    rejects(
        w,
        "%i = resizenearest @out %up, @in %img { Scale: [1, 2, 1.4, 1] }",
        "but `resizenearest` produces float<1 x 4 x 5 x 3>",
    );
    rejects(
        w,
        "%i = resizenearest @out %up, @in %img { Scale: [1, 2, 1.5] }",
        "`Scale` has 3 elements",
    );
    rejects(
        w,
        "%i = resizenearest @out %up, @in %img { Scale: [1, 2, 0, 1] }",
        "must be positive",
    );
    rejects(
        w,
        "%i = resizebilinear @out %up, @in %img { Scale: [1, 1, 1, 2] }",
        "scales only H and W",
    );
    rejects(
        w,
        "%i = resizebilinear @out %iy, @in %ix { Scale: [1, 1] }",
        "accepts float element types",
    );
    accepts(w, "%i = spacetodepth @out %s2d, @in %img { BlockSize: 2 }");
    rejects(
        w,
        "%i = spacetodepth @out %s2d, @in %up { BlockSize: 4 }",
        "not multiples of `BlockSize` 4",
    );
    rejects(
        w,
        "%i = spacetodepth @out %s2d, @in %x { BlockSize: 2 }",
        "must be 4-D",
    );
    rejects(
        w,
        "%i = spacetodepth @out %s2d, @in %img { BlockSize: 0 }",
        "BlockSize",
    );
    accepts(w, "%i = flip @out %iy, @in %ix { Axis: 1 }");
    rejects(
        w,
        "%i = flip @out %iy, @in %ix { Axis: 2 }",
        "`Axis: 2` is out of range",
    );
    accepts(
        w,
        "%i = cumsum @out %iy, @in %ix { Dim: -2, Reverse: true }",
    );
    rejects(
        w,
        "%i = cumsum @out %iy, @in %ix { Dim: 2 }",
        "`Dim: 2` is out of range for `Input` of rank 2 (valid: -2 to 1)",
    );
    rejects(
        w,
        "%i = cumsum @out %c2, @in %cond",
        "accepts `float`, `index32`",
    );
    accepts(w, "%i = nonzero @out %nz, @in %cond");
    rejects(
        w,
        "%i = nonzero @out %nz64, @in %cond",
        "`nonzero` writes index32",
    );
    rejects(
        w,
        "%i = nonzero @out %iy, @in %ix",
        "`Cond` has element type index32",
    );
    rejects(
        w,
        "%i = nonzero @out %p, @in %cond",
        "writes one place per element of `Cond`",
    );
}

#[test]
fn indexing_shapes() {
    let w = &[
        "%x = WeightVar float<2 x 3> mutable",
        "%b = WeightVar index32<2 x 3> mutable",
        "%b64 = WeightVar index64<2 x 3> mutable",
        "%data = WeightVar float<2 x 2> mutable",
        "%len = WeightVar index32<2> mutable",
        "%len64 = WeightVar index64<2> mutable",
        "%vals = WeightVar float<5> mutable",
        "%oh = WeightVar float<2 x 5> mutable",
        "%oh4 = WeightVar float<2 x 4> mutable",
        "%d3 = WeightVar float<3 x 4 x 2> mutable",
        "%i2 = WeightVar index64<5 x 2> mutable",
        "%i4 = WeightVar index64<5 x 4> mutable",
        "%s2 = WeightVar float<5 x 2> mutable",
        "%s3 = WeightVar float<5 x 3> mutable",
        "%bd = WeightVar bool<3 x 4 x 2> mutable",
        "%bs = WeightVar bool<5 x 2> mutable",
        "%img = WeightVar float<1 x 5 x 7 x 2> mutable",
        "%pool = WeightVar float<1 x 3 x 2 x 2> mutable",
        "%pool3 = WeightVar float<1 x 3 x 2 x 3> mutable",
        "%in = WeightVar float<3 x 4> mutable",
        "%out = WeightVar float<3 x 4> mutable",
        "%ia = WeightVar index64<5> mutable",
        "%src = WeightVar float<3 x 5> mutable",
    ];
    accepts(
        w,
        "%i = bucketize @out %b, @in %x { Boundaries: [0, 0, 1] }",
    );
    rejects(
        w,
        "%i = bucketize @out %b, @in %x { Boundaries: [1, 0] }",
        "must be ascending",
    );
    rejects(
        w,
        "%i = bucketize @out %b64, @in %x { Boundaries: [] }",
        "`bucketize` writes index32",
    );
    accepts(
        w,
        "%i = batchonehot @out %oh, @in %data, @in %len, @in %vals",
    );
    rejects(
        w,
        "%i = batchonehot @out %oh4, @in %data, @in %len, @in %vals",
        "`batchonehot` produces float<2 x 5>",
    );
    rejects(
        w,
        "%i = batchonehot @out %oh, @in %data, @in %len64, @in %vals",
        "`batchonehot` reads index32",
    );
    accepts(
        w,
        "%i = scatterdata @inout %d3, @in %i2, @in %s2 { Cumulative: true }",
    );
    accepts(w, "%i = scatterdata @inout %bd, @in %i2, @in %bs");
    rejects(
        w,
        "%i = scatterdata @inout %d3, @in %i2, @in %s3",
        "`scatterdata` expects float<5 x 2>",
    );
    rejects(
        w,
        "%i = scatterdata @inout %d3, @in %i4, @in %s2",
        "tuples of 4 but `Data` has rank 3",
    );
    rejects(
        w,
        "%i = scatterdata @inout %bd, @in %i2, @in %bs { Cumulative: true }",
        "`Data` has element type bool",
    );
    accepts(w, "%i = adaptiveavgpool @out %pool, @in %img");
    rejects(
        w,
        "%i = adaptiveavgpool @out %pool3, @in %img",
        "`adaptiveavgpool` produces float<1 x 3 x 2 x 2>",
    );
    accepts(
        w,
        "%i = indexadd @out %out, @in %in, @in %ia, @in %src { Dim: 1 }",
    );
    rejects(
        w,
        "%i = indexadd @out %out, @in %in, @in %ia, @in %src",
        "`indexadd` expects float<5 x 4>",
    );
    rejects(
        w,
        "%i = indexadd @out %out, @in %in, @in %ia, @in %src { Dim: 2 }",
        "`Dim: 2` is out of range",
    );
    let g = &[
        "%shape = WeightVar bool<2 x 5> mutable",
        "%out = WeightVar float<2 x 5> mutable",
        "%flat = WeightVar float<10> mutable",
        "%ints = WeightVar index32<2 x 5> mutable",
    ];
    accepts(g, "%i = gaussianfill @out %out, @in %shape { Seed: -3 }");
    rejects(
        g,
        "%i = gaussianfill @out %flat, @in %shape",
        "(the dims of `Input`)",
    );
    rejects(
        g,
        "%i = gaussianfill @out %ints, @in %shape",
        "writes float or float16",
    );
    rejects(
        g,
        "%i = gaussianfill @out %out, @in %shape { Seed: inf }",
        "`Seed: inf` is not a number",
    );
}

#[test]
fn detection_shapes() {
    let w = &[
        "%b = WeightVar float<2 x 6 x 4> mutable",
        "%s = WeightVar float<2 x 3 x 6> mutable",
        "%s5 = WeightVar float<2 x 3 x 5> mutable",
        "%i = WeightVar index64<12 x 3> mutable",
        "%i2 = WeightVar index64<12 x 2> mutable",
        "%i32 = WeightVar index32<12 x 3> mutable",
        "%fi = WeightVar float<12 x 3> mutable",
        "%c = WeightVar index64<4> mutable",
        "%l = WeightVar index64<1> mutable",
        "%l2 = WeightVar index64<2> mutable",
        "%t = WeightVar float<1> mutable",
        "%tb = WeightVar float<6 x 4> mutable",
        "%ts = WeightVar float<6> mutable",
        "%ti = WeightVar index64<3> mutable",
    ];
    accepts(
        w,
        "%x = nonmaxsuppression @out %i, @out %c, @in %b, @in %s { IsTFVersion4: false }",
    );
    accepts(
        w,
        "%x = nonmaxsuppression @out %i, @out %c, @in %b, @in %s, @in %l, @in %t, @in %t { Compact: true }",
    );
    accepts(
        w,
        "%x = nonmaxsuppression @out %ti, @out %c, @in %tb, @in %ts { IsTFVersion4: true }",
    );
    rejects(
        w,
        "%x = nonmaxsuppression @out %i, @out %c, @in %b, @in %s5",
        "`Scores` has type float<2 x 3 x 5> but `nonmaxsuppression` expects float<2 x 3 x 6>",
    );
    rejects(
        w,
        "%x = nonmaxsuppression @out %i2, @out %c, @in %b, @in %s",
        "`Indices` has type index64<12 x 2> but `nonmaxsuppression` produces index64<12 x 3>",
    );
    rejects(
        w,
        "%x = nonmaxsuppression @out %i32, @out %c, @in %b, @in %s",
        "`NumberOfSelectedIndices` has element type index64 but `Indices` has index32",
    );
    rejects(
        w,
        "%x = nonmaxsuppression @out %fi, @out %c, @in %b, @in %s",
        "`Indices` has element type float but `nonmaxsuppression` accepts `index32` or `index64`",
    );
    rejects(
        w,
        "%x = nonmaxsuppression @out %i, @out %c, @in %b, @in %s, @in %l2",
        "`MaxOutputIn` has type index64<2> but `nonmaxsuppression` reads one element from it",
    );
    rejects(
        w,
        "%x = nonmaxsuppression @out %i, @out %c, @in %b, @in %s, @in %t",
        "`MaxOutputIn` has element type float but `nonmaxsuppression` accepts `index32` or `index64`",
    );
    rejects(
        w,
        "%x = nonmaxsuppression @out %i, @out %c, @in %b, @in %s { IsTFVersion4: true }",
        "`Boxes` must be 2-D for `nonmaxsuppression`",
    );
}

#[test]
fn roi_align_shapes() {
    let w = &[
        "%map = WeightVar float<2 x 8 x 8 x 3> mutable",
        "%b4 = WeightVar float<4 x 4> mutable",
        "%b5 = WeightVar float<4 x 5> mutable",
        "%b6 = WeightVar float<4 x 6> mutable",
        "%bi = WeightVar index64<4> mutable",
        "%bi3 = WeightVar index64<3> mutable",
        "%out = WeightVar float<4 x 2 x 3 x 3> mutable",
        "%out2 = WeightVar float<4 x 3 x 3 x 3> mutable",
    ];
    accepts(
        w,
        "%x = roialign @out %out, @in %map, @in %b4, @in %bi { OutputHeight: 2, OutputWidth: 3 }",
    );
    accepts(
        w,
        "%x = roialign @out %out, @in %map, @in %b5, @in %bi3 { OutputHeight: 2, OutputWidth: 3 }",
    );
    accepts(
        w,
        "%x = roialign @out %out, @in %map, @in %b6, @in %bi { OutputHeight: 2, OutputWidth: 3, Rotated: true }",
    );
    rejects(
        w,
        "%x = roialign @out %out2, @in %map, @in %b4, @in %bi { OutputHeight: 2, OutputWidth: 3 }",
        "`Result` has type float<4 x 3 x 3 x 3> but `roialign` produces float<4 x 2 x 3 x 3>",
    );
    rejects(
        w,
        "%x = roialign @out %out, @in %map, @in %b4, @in %bi3 { OutputHeight: 2, OutputWidth: 3 }",
        "`BatchIndices` has type index64<3> but `roialign` expects index64<4>",
    );
    rejects(
        w,
        "%x = roialign @out %out, @in %map, @in %b4, @in %bi { OutputHeight: 2, OutputWidth: 3, Rotated: true }",
        "`Boxes` has type float<4 x 4> but `roialign` takes [K, 6] boxes when `Rotated`",
    );
    rejects(
        w,
        "%x = roialign @out %out, @in %map, @in %b4, @in %bi { OutputHeight: 0, OutputWidth: 3 }",
        "OutputHeight",
    );
}

#[test]
fn bbox_transform_shapes() {
    let w = &[
        "%r4 = WeightVar float<6 x 4> mutable",
        "%r5 = WeightVar float<6 x 5> mutable",
        "%r7 = WeightVar float<6 x 7> mutable",
        "%d = WeightVar float<6 x 8> mutable",
        "%d7 = WeightVar float<6 x 7> mutable",
        "%dr = WeightVar float<6 x 10> mutable",
        "%info = WeightVar float<2 x 3> mutable",
        "%info4 = WeightVar float<2 x 4> mutable",
        "%s = WeightVar float<2> mutable",
        "%s3 = WeightVar float<3> mutable",
        "%o = WeightVar float<6 x 8> mutable",
        "%o7 = WeightVar float<6 x 7> mutable",
        "%or = WeightVar float<6 x 10> mutable",
    ];
    accepts(
        w,
        "%x = bboxtransform @out %o, @out %s, @in %r5, @in %d, @in %info",
    );
    accepts(
        w,
        "%x = bboxtransform @out %or, @out %s, @in %r5, @in %dr, @in %info { Rotated: true }",
    );
    rejects(
        w,
        "%x = bboxtransform @out %o, @out %s, @in %r7, @in %d, @in %info",
        "`Rois` has type float<6 x 7> but `bboxtransform` takes [N, 4] or [N, 5] boxes here",
    );
    rejects(
        w,
        "%x = bboxtransform @out %o7, @out %s, @in %r4, @in %d7, @in %info",
        "`Deltas` has type float<6 x 7> but `bboxtransform` takes [6, C * 4] deltas for 6 rois",
    );
    rejects(
        w,
        "%x = bboxtransform @out %o, @out %s, @in %r4, @in %d, @in %info4",
        "`ImInfo` has type float<2 x 4> but `bboxtransform` expects float<2 x 3>",
    );
    rejects(
        w,
        "%x = bboxtransform @out %o, @out %s3, @in %r4, @in %d, @in %info",
        "`RoiBatchSplits` has type float<3> but `bboxtransform` produces float<2>",
    );
    rejects(
        w,
        "%x = bboxtransform @out %o, @out %s, @in %r4, @in %d, @in %info { Weights: [1.0, 2.0] }",
        "`bboxtransform` takes 4 `Weights`",
    );
}

#[test]
fn mfcc_shapes() {
    let w = &[
        "%spec = WeightVar float<4 x 9> mutable",
        "%wt = WeightVar float<12> mutable",
        "%r = WeightVar index32<6> mutable",
        "%r64 = WeightVar index64<6> mutable",
        "%r4 = WeightVar index32<4> mutable",
        "%dct = WeightVar float<2 x 3> mutable",
        "%out = WeightVar float<4 x 2> mutable",
        "%out3 = WeightVar float<4 x 3> mutable",
    ];
    let m = "{ SampleRate: 16000.0, LowerFrequency: 20.0, UpperFrequency: 4000.0, FilterBankCount: 3, NumCoefficients: 2 }";
    accepts(
        w,
        &format!("%x = mfcc @out %out, @in %spec, @in %wt, @in %r, @in %dct {m}"),
    );
    rejects(
        w,
        &format!("%x = mfcc @out %out, @in %spec, @in %wt, @in %r64, @in %dct {m}"),
        "`MelRanges` has element type index64 but `mfcc` takes `index32`",
    );
    rejects(
        w,
        &format!("%x = mfcc @out %out, @in %spec, @in %wt, @in %r4, @in %dct {m}"),
        "`MelRanges` has type index32<4> but `mfcc` expects index32<6>",
    );
    rejects(
        w,
        &format!("%x = mfcc @out %out3, @in %spec, @in %wt, @in %r, @in %dct {m}"),
        "`Coefficients` has type float<4 x 3> but `mfcc` produces float<4 x 2>",
    );
}

#[test]
fn mean_shapes() {
    let w = &[
        "%x = WeightVar float<2 x 3 x 4> mutable",
        "%rows = WeightVar float<2 x 4> mutable",
        "%kept = WeightVar float<1 x 3 x 1> mutable",
        "%flat = WeightVar float<3> mutable",
        "%bad = WeightVar float<2 x 3> mutable",
        "%i = WeightVar index32<2 x 4> mutable",
        "%b = WeightVar bool<2 x 3 x 4> mutable",
        "%bo = WeightVar bool<2 x 4> mutable",
    ];
    accepts(w, "%m = mean @out %rows, @in %x { MeanDims: [1] }");
    accepts(w, "%m = mean @out %kept, @in %x { MeanDims: [0, 2] }");
    accepts(w, "%m = mean @out %flat, @in %x { MeanDims: [2, 0] }");
    rejects(
        w,
        "%m = mean @out %bad, @in %x { MeanDims: [1] }",
        "`Dest` has type float<2 x 3> (6 elements) but `mean` over [1] of float<2 x 3 x 4> produces 8 elements (e.g. float<2 x 1 x 4>)",
    );
    rejects(
        w,
        "%m = mean @out %rows, @in %x { MeanDims: [3] }",
        "`MeanDims` element 3 is out of range for `Src` of rank 3 (valid: 0 to 2)",
    );
    rejects(
        w,
        "%m = mean @out %rows, @in %x { MeanDims: [-1] }",
        "`MeanDims` element -1 is out of range",
    );
    rejects(
        w,
        "%m = mean @out %flat, @in %x { MeanDims: [0, 2, 0] }",
        "`MeanDims` lists dimension 0 twice",
    );
    rejects(
        w,
        "%m = mean @out %rows, @in %x { MeanDims: [] }",
        "`MeanDims` is empty",
    );
    rejects(
        w,
        "%m = mean @out %i, @in %x { MeanDims: [1] }",
        "`Dest` has element type index32 but `Src` has float",
    );
    rejects(
        w,
        "%m = mean @out %bo, @in %b { MeanDims: [1] }",
        "`Src` has element type bool but `mean` accepts float, quantized or index element types here",
    );
}

#[test]
fn pruned_array_lookup_kinds() {
    let w = &[
        "%d = WeightVar float<4> mutable",
        "%i = WeightVar index32<4> mutable",
        "%o = WeightVar index32<2> mutable",
        "%r = WeightVar index32<8> mutable",
        "%ro = WeightVar index64<2> mutable",
        "%ro32 = WeightVar index32<2> mutable",
        "%i64 = WeightVar index64<4> mutable",
    ];
    accepts(
        w,
        "%p = prunedarraylookup @out %d, @in %i, @in %o, @in %r, @in %ro",
    );
    rejects(
        w,
        "%p = prunedarraylookup @out %d, @in %i, @in %o, @in %r, @in %ro32",
        "`IndexRemappingOffsets` has element type index32 but `prunedarraylookup` reads index64",
    );
    rejects(
        w,
        "%p = prunedarraylookup @out %d, @in %i64, @in %o, @in %r, @in %ro",
        "`Indices` has element type index64 but `prunedarraylookup` reads index32",
    );
}
