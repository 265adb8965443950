//! The integer quantized kernels compute what their real-valued definition
//! says: each program runs one instruction twice in the interpreter, once on
//! quantized operands and once in float on the same values dequantized
//! (the float result quantized to the same type), and the two results must
//! agree within one quantum, exactly in nearly every element. (The engines'
//! bit-identity is `engines.rs`; this is the arithmetic itself.)

use glow_backend::run::{self, Engine, RunOptions};
use glow_backend::CcOptions;
use std::collections::BTreeMap;

/// Runs `text` in the interpreter and compares `%q` with `%f` element by
/// element (both of `ty`): (largest difference, fraction of equal elements).
fn compare(text: &str, seed: u64) -> (i64, f64, usize) {
    let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| {
        panic!(
            "{}\n{text}",
            glow_ir::diag::render_all(&d, "case", text.as_bytes())
        )
    });
    let diags = glow_ir::verifier::verify_module(&m);
    assert!(
        diags.is_empty(),
        "{}",
        glow_ir::diag::render_all(&diags, "case", text.as_bytes())
    );
    let f = &m.functions[0];
    let opts = RunOptions {
        engine: Engine::Interp,
        cc: CcOptions::new(Some("cc"), "-O1"),
        seed,
        strict_constants: false,
        repeat: None,
        build_dir: None,
        codegen: Default::default(),
    };
    let weights = run::resolve_weights(f, &BTreeMap::new(), &opts).expect("weights");
    let out = run::run(f, &weights, &opts).expect("interpreter runs");
    let get = |name: &str| {
        out.mutable
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no %{name}"))
    };
    let (q, fl) = (get("q"), get("f"));
    assert_eq!(q.ty, fl.ty);
    let kind = q.ty.elem;
    let n = q.ty.size() as usize;
    let read = |d: &[u8], i: usize| glow_backend::elem::read_int(kind, d, i);
    let mut worst = 0;
    let mut same = 0;
    for i in 0..n {
        let d = (read(&q.data, i) - read(&fl.data, i)).abs();
        worst = worst.max(d);
        same += usize::from(d == 0);
    }
    (worst, same as f64 / n as f64, n)
}

/// A program: float inputs `%x0..` (random in [-1, 1)), each quantized to
/// its type and dequantized again; `inst_q` computes `%q` from the quantized
/// `%q0..`, `inst_f` computes `%ff` from the dequantized `%d0..`, which is
/// quantized into `%f`.
fn program(inputs: &[(&str, &str)], out: &str, fout: &str, inst_q: &str, inst_f: &str) -> String {
    let mut decls = Vec::new();
    let mut code = Vec::new();
    for (i, (qt, ft)) in inputs.iter().enumerate() {
        decls.push(format!("  %x{i} = WeightVar {ft} mutable"));
        decls.push(format!("  %q{i} = WeightVar {qt} mutable"));
        decls.push(format!("  %d{i} = WeightVar {ft} mutable"));
        code.push(format!("  %tq{i} = quantize @out %q{i}, @in %x{i}"));
        code.push(format!("  %td{i} = dequantize @out %d{i}, @in %q{i}"));
    }
    decls.push(format!("  %q = WeightVar {out} mutable"));
    decls.push(format!("  %f = WeightVar {out} mutable"));
    decls.push(format!("  %ff = WeightVar {fout} mutable"));
    code.push(format!("  %iq = {inst_q}"));
    code.push(format!("  %if = {inst_f}"));
    code.push("  %tf = quantize @out %f, @in %ff".to_string());
    format!(
        "function case\ndeclare {{\n{}\n}}\n\ncode {{\n{}\n}}\n",
        decls.join("\n"),
        code.join("\n")
    )
}

#[track_caller]
fn check(text: &str) {
    for seed in [1, 2, 3] {
        let (worst, same, n) = compare(text, seed);
        assert!(worst <= 1, "seed {seed}: off by {worst} quanta\n{text}");
        assert!(
            same >= 0.9,
            "seed {seed}: only {:.1}% of {n} elements exact\n{text}",
            same * 100.0
        );
    }
}

/// Operand list `@in %q0, @in %q1, ...` (or `%d`).
fn ins(prefix: &str, n: usize) -> String {
    (0..n)
        .map(|i| format!("@in %{prefix}{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn convolutions() {
    let cases = [
        // (src, filter, bias, dest, float shapes src/filter/bias/dest, members)
        (
            "ui8[S:0.0078125 O:128]",
            "i8[S:0.0078125 O:0]",
            "i32[S:0.00006103515625 O:0]",
            "ui8[S:0.03 O:100]",
            "<1 x 6 x 7 x 4>",
            "<5 x 3 x 3 x 4>",
            "<5>",
            "<1 x 6 x 7 x 5>",
            "Kernels: [3, 3], Pads: [1, 1, 1, 1]",
        ),
        (
            "i8[S:0.0078125 O:-3]",
            "i8[S:0.0078125 O:5]",
            "i32[S:0.00006103515625 O:0]",
            "i8[S:0.02 O:0]",
            "<2 x 7 x 6 x 4>",
            "<6 x 2 x 3 x 2>",
            "<6>",
            "<2 x 4 x 1 x 6>",
            "Kernels: [2, 3], Strides: [2, 2], Pads: [0, 0, 1, 0], Group: 2, Dilation: [1, 2]",
        ),
        (
            "ui8[S:0.0078125 O:128]",
            "i8[S:0.0078125 O:0]",
            "i32[S:0.00006103515625 O:0]",
            "ui8[S:0.01 O:0]",
            "<1 x 5 x 5 x 6>",
            "<6 x 3 x 3 x 1>",
            "<6>",
            "<1 x 5 x 5 x 6>",
            "Kernels: [3, 3], Pads: [1, 1, 1, 1], Group: 6, FusedActivation: RELU",
        ),
    ];
    for (qs, qw, qb, qd, s, w, b, d, m) in cases {
        let inputs = [
            (&*format!("{qs}{s}"), &*format!("float{s}")),
            (&*format!("{qw}{w}"), &*format!("float{w}")),
            (&*format!("{qb}{b}"), &*format!("float{b}")),
        ];
        let text = program(
            &inputs,
            &format!("{qd}{d}"),
            &format!("float{d}"),
            &format!("convolution @out %q, {} {{ {m} }}", ins("q", 3)),
            &format!("convolution @out %ff, {} {{ {m} }}", ins("d", 3)),
        );
        check(&text);
    }
}

#[test]
fn products() {
    let (x, w, b, y) = (
        "ui8[S:0.0078125 O:128]",
        "i8[S:0.0078125 O:0]",
        "i32[S:0.00006103515625 O:0]",
        "ui8[S:0.02 O:120]",
    );
    let text = program(
        &[
            (&format!("{x}<3 x 20>"), "float<3 x 20>"),
            (&format!("{w}<20 x 7>"), "float<20 x 7>"),
            (&format!("{b}<7>"), "float<7>"),
        ],
        &format!("{y}<3 x 7>"),
        "float<3 x 7>",
        &format!("fullyconnected @out %q, {}", ins("q", 3)),
        &format!("fullyconnected @out %ff, {}", ins("d", 3)),
    );
    check(&text);
    let text = program(
        &[
            (&format!("{x}<2 x 4 x 9>"), "float<2 x 4 x 9>"),
            ("i8[S:0.01 O:-2]<2 x 9 x 5>", "float<2 x 9 x 5>"),
        ],
        "i8[S:0.03 O:1]<2 x 4 x 5>",
        "float<2 x 4 x 5>",
        &format!("batchmatmul @out %q, {}", ins("q", 2)),
        &format!("batchmatmul @out %ff, {}", ins("d", 2)),
    );
    check(&text);
}

#[test]
fn element_wise() {
    let (a, u) = ("i8[S:0.0078125 O:3]", "ui8[S:0.005 O:128]");
    for (op, d) in [
        ("elementadd", "i8[S:0.015 O:-4]"),
        ("elementsub", "ui8[S:0.01 O:128]"),
        ("elementmul", "i8[S:0.005 O:0]"),
        ("elementmax", "ui8[S:0.004 O:0]"),
        ("elementmin", "i8[S:0.009 O:7]"),
    ] {
        let text = program(
            &[
                (&format!("{a}<4 x 9>"), "float<4 x 9>"),
                (&format!("{u}<4 x 9>"), "float<4 x 9>"),
            ],
            &format!("{d}<4 x 9>"),
            "float<4 x 9>",
            &format!("{op} @out %q, {}", ins("q", 2)),
            &format!("{op} @out %ff, {}", ins("d", 2)),
        );
        check(&text);
    }
    for (op, m) in [("relu", ""), ("clip", " { Min: -0.3, Max: 0.4 }")] {
        let text = program(
            &[(&format!("{a}<40>"), "float<40>")],
            "ui8[S:0.003 O:20]<40>",
            "float<40>",
            &format!("{op} @out %q, @in %q0{m}"),
            &format!("{op} @out %ff, @in %d0{m}"),
        );
        check(&text);
    }
}

#[test]
fn pools() {
    let u = "ui8[S:0.0078125 O:128]";
    for (op, m) in [
        (
            "maxpool",
            "Kernels: [3, 3], Strides: [2, 2], Pads: [1, 1, 1, 1]",
        ),
        (
            "avgpool",
            "Kernels: [3, 3], Strides: [2, 2], Pads: [1, 1, 1, 1]",
        ),
        (
            "avgpool",
            "Kernels: [3, 3], Strides: [2, 2], Pads: [1, 1, 1, 1], CountIncludePads: false",
        ),
    ] {
        let text = program(
            &[(&format!("{u}<1 x 7 x 7 x 3>"), "float<1 x 7 x 7 x 3>")],
            "ui8[S:0.004 O:120]<1 x 4 x 4 x 3>",
            "float<1 x 4 x 4 x 3>",
            &format!("{op} @out %q, @in %q0 {{ {m} }}"),
            &format!("{op} @out %ff, @in %d0 {{ {m} }}"),
        );
        check(&text);
    }
}
