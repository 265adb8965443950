//! Verifier tests: structural rules (operands, members, names, spans).
//! Liveness and aliasing are in `tests_rules.rs`, shapes in `shapes/tests.rs`.

use super::*;
use crate::builder::Builder;
use crate::function::{MemberValue, Mutability, WeightId};
use crate::types::Type;

/// Parses `src` (which must parse) and returns `(line, message)` for every
/// verifier diagnostic.
pub(crate) fn errors(src: &str) -> Vec<(usize, String)> {
    let m = match crate::parser::parse(src.as_bytes()) {
        Ok(m) => m,
        Err(d) => panic!("{}", crate::diag::render_all(&d, "t.gir", src.as_bytes())),
    };
    verify_module(&m)
        .into_iter()
        .map(|d| (d.line(src.as_bytes()).unwrap_or(0), d.message))
        .collect()
}

/// A function with the given declarations and code lines (line 3 is the
/// first weight; code starts at line 4 + number of weights + 2).
pub(crate) fn func(weights: &[&str], code: &[&str]) -> String {
    let mut s = String::from("function f\ndeclare {\n");
    for w in weights {
        s.push_str(&format!("  {w}\n"));
    }
    s.push_str("}\n\ncode {\n");
    for c in code {
        s.push_str(&format!("  {c}\n"));
    }
    s.push_str("}\n");
    s
}

/// Line number of code line `k` (0-based) in `func(weights, ..)`.
pub(crate) fn line(weights: usize, k: usize) -> usize {
    weights + 6 + k
}

/// Asserts exactly one error, on `line`, containing `text`.
#[track_caller]
pub(crate) fn one(src: &str, line: usize, text: &str) {
    let e = errors(src);
    assert_eq!(e.len(), 1, "expected one error, got {e:#?}\n{src}");
    assert_eq!(e[0].0, line, "{e:#?}\n{src}");
    assert!(e[0].1.contains(text), "`{}` lacks `{text}`", e[0].1);
}

const XY: &[&str] = &[
    "%x = WeightVar float<2 x 3> mutable",
    "%y = WeightVar float<2 x 3> mutable",
];

#[test]
fn lenet_and_empty_functions_are_valid() {
    let lenet = include_str!("../../../examples/lenet.gir");
    assert_eq!(errors(lenet), vec![]);
    assert_eq!(errors("function e\ndeclare {\n}\n\ncode {\n}\n"), vec![]);
}

#[test]
fn operand_count_is_reported_at_the_opcode() {
    let src = func(XY, &["%r = relu @out %y"]);
    one(&src, line(2, 0), "`relu` takes 2 operand(s), found 1");
    let src = func(XY, &["%r = relu @out %y, @in %x, @in %x"]);
    one(&src, line(2, 0), "found 3");
}

#[test]
fn operand_kinds_match_the_table() {
    let src = func(XY, &["%r = relu @in %y, @in %x"]);
    one(
        &src,
        line(2, 0),
        "operand `Dest` of `relu` must be `@out`, found `@in`",
    );
    let src = func(XY, &["%r = relu @out %y, @inout %x"]);
    one(&src, line(2, 0), "must be `@in`, found `@inout`");
}

#[test]
fn missing_member_points_at_the_opcode_word() {
    let src = func(XY, &["%c = clip @out %y, @in %x { Min: 0.0 }"]);
    let m = crate::parser::parse(src.as_bytes()).unwrap();
    let d = verify_module(&m);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].message.contains("missing the required member `Max`"));
    let span = d[0].primary.as_ref().unwrap().span;
    assert_eq!(&src[span.range()], "clip");
}

#[test]
fn member_types_are_checked_at_the_member() {
    let w = &[
        "%x = WeightVar float<1 x 4 x 4 x 1> mutable",
        "%y = WeightVar float<1 x 4 x 4 x 1> mutable",
    ];
    let src = func(w, &["%p = maxpool @out %y, @in %x { Kernels: 5 }"]);
    let m = crate::parser::parse(src.as_bytes()).unwrap();
    let d = verify_module(&m);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0]
        .message
        .contains("expected an integer array for `Kernels`, found `5`"));
    let span = d[0].primary.as_ref().unwrap().span;
    assert_eq!(&src[span.range()], "Kernels: 5");
    let src = func(
        w,
        &["%p = maxpool @out %y, @in %x { Kernels: [1, 1], Layout: NWHC }"],
    );
    one(
        &src,
        line(2, 0),
        "expected one of NHWC, NCHW for `Layout`, found `NWHC`",
    );
    let src = func(XY, &["%c = clip @out %y, @in %x { Min: true, Max: 1 }"]);
    one(&src, line(2, 0), "expected a float for `Min`");
    let src = func(XY, &["%p = debugprint @in %x { Format: 3 }"]);
    one(&src, line(2, 0), "expected a string for `Format`");
}

#[test]
fn member_values_are_sane() {
    let w = &[
        "%x = WeightVar float<1 x 4 x 4 x 1> mutable",
        "%y = WeightVar float<1 x 4 x 4 x 1> mutable",
    ];
    let pool = |members: &str| {
        func(
            w,
            &[&format!("%p = maxpool @out %y, @in %x {{ {members} }}")],
        )
    };
    one(
        &pool("Kernels: [1, 0]"),
        line(2, 0),
        "`Kernels` must have 2 positive elements",
    );
    one(&pool("Kernels: [1, 1, 1]"), line(2, 0), "found [1, 1, 1]");
    let s = pool("Kernels: [1, 1], Strides: [-1, 1]");
    one(&s, line(2, 0), "`Strides` must have 2 positive");
    let s = pool("Kernels: [1, 1], Pads: [0, -1, 0, 0]");
    one(&s, line(2, 0), "`Pads` must have 4 non-negative elements");
    let s = pool("Kernels: [1, 1], Pads: [0, 0]");
    one(&s, line(2, 0), "`Pads` must have 4");
    let cw = &[
        "%x = WeightVar float<1 x 4 x 4 x 2> mutable",
        "%f = WeightVar float<2 x 1 x 1 x 2> const",
        "%b = WeightVar float<2> const",
        "%y = WeightVar float<1 x 4 x 4 x 2> mutable",
    ];
    let conv = |members: &str| {
        func(
            cw,
            &[&format!(
                "%c = convolution @out %y, @in %x, @in %f, @in %b {{ Kernels: [1, 1], {members} }}"
            )],
        )
    };
    one(
        &conv("Group: 0"),
        line(4, 0),
        "`Group` must be at least 1, found 0",
    );
    one(
        &conv("Dilation: [0, 1]"),
        line(4, 0),
        "`Dilation` must have 2 positive",
    );
    let s = conv("FusedActivation: CLIP");
    one(&s, line(4, 0), "`FusedActivation: CLIP` takes 2 value(s)");
    let s = conv("FusedActivation: LEAKY_RELU, FusedActivationArgs: [0.1]");
    assert_eq!(errors(&s), vec![]);
    let s = conv("FusedActivation: RELU, FusedActivationArgs: [0.1]");
    one(&s, line(4, 0), "takes 0 value(s)");
    let iw = &[
        "%d = WeightVar float<4 x 6> mutable",
        "%s = WeightVar float<1 x 3> mutable",
    ];
    let s = func(
        iw,
        &["%i = inserttensor @inout %d, @in %s { Offsets: [0, 0], Count: 0 }"],
    );
    one(&s, line(2, 0), "`Count` must be at least 1, found 0");
}

#[test]
fn operands_must_be_buffers() {
    let src = func(
        XY,
        &["%r = relu @out %y, @in %x", "%s = relu @out %x, @in %r"],
    );
    let m = crate::parser::parse(src.as_bytes()).unwrap();
    let d = verify_module(&m);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0]
        .message
        .contains("`%r` is not a buffer: it is the result of `relu`"));
    assert_eq!(d[0].secondary.len(), 1);
    assert_eq!(d[0].line(src.as_bytes()), Some(line(2, 1)));
}

#[test]
fn use_before_definition_has_a_secondary_label() {
    let src = func(
        XY,
        &[
            "%r = relu @out %y, @in %t",
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%d = deallocactivation @out %t",
        ],
    );
    let m = crate::parser::parse(src.as_bytes()).unwrap();
    let d = verify_module(&m);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].message, "`%t` is used before its definition");
    let sec = &d[0].secondary[0];
    assert_eq!(sec.message, "defined here");
    assert!(src[sec.span.range()].contains("%t = allocactivation"));
    let span = d[0].primary.as_ref().unwrap().span;
    assert_eq!(&src[span.range()], "@in %t");
}

#[test]
fn const_weights_are_not_written() {
    let w = &[
        "%c = WeightVar float<2 x 3> const",
        "%x = WeightVar float<2 x 3> mutable",
    ];
    let src = func(w, &["%r = relu @out %c, @in %x"]);
    one(&src, line(2, 0), "`@out` writes the const weight `%c`");
    let src = func(
        w,
        &[
            "%v = tensorview @in %c { Ty: float<3>, Offsets: [1, 0] }",
            "%s = splat @out %v { Value: 1.0 }",
        ],
    );
    one(&src, line(2, 1), "`%v`, a view of the const weight `%c`");
    let src = func(
        w,
        &["%i = inserttensor @inout %c, @in %x { Offsets: [0, 0] }"],
    );
    one(&src, line(2, 0), "`@inout` writes the const weight");
}

#[test]
fn names_are_unique_in_built_functions() {
    let mut f = Function::new("f");
    let mut b = Builder::new(&mut f);
    let x = b.weight("x", Type::float(&[2]), Mutability::Mutable);
    b.weight("x", Type::float(&[2]), Mutability::Mutable);
    b.splat("s", x, 1.0);
    // The builder makes names unique; rename by hand to collide.
    f.insts[0].name = "x".into();
    let e = verify_errors(&f);
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(matches!(
        &e[0],
        VerifyError::DuplicateName {
            second: Value::Weight(WeightId(1)),
            ..
        }
    ));
    assert!(matches!(
        &e[1],
        VerifyError::DuplicateName {
            second: Value::Inst(_),
            ..
        }
    ));
    let d = verify(&f);
    assert_eq!(d[0].message, "in `%x`: `%x` is defined twice");
    assert!(d[0].primary.is_none());
}

#[test]
fn without_spans_the_message_names_the_instruction() {
    let mut f = Function::new("f");
    let mut b = Builder::new(&mut f);
    let x = b.weight("x", Type::float(&[2, 3]), Mutability::Mutable);
    let y = b.weight("y", Type::float(&[3, 2]), Mutability::Mutable);
    b.inst("conv", Opcode::Relu, &[y, x], &[]);
    let d = verify(&f);
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(d[0].primary.is_none());
    assert!(
        d[0].message
            .starts_with("in `%conv`: `Src` has type float<2 x 3>"),
        "{}",
        d[0].message
    );
}

#[test]
fn dangling_ids_do_not_panic() {
    let mut f = Function::new("f");
    let mut b = Builder::new(&mut f);
    let x = b.weight("x", Type::float(&[2]), Mutability::Mutable);
    b.inst("a", Opcode::Relu, &[Value::Weight(WeightId(9)), x], &[]);
    b.inst("b", Opcode::Relu, &[Value::Inst(InstId(42)), x], &[]);
    let t = b.inst("t", Opcode::TensorView, &[x], &[]);
    f.insts[t.index()].members.clear();
    f.insts[t.index()].operands.clear();
    f.layout.append(InstId(77));
    let e = verify_errors(&f);
    let kinds: Vec<String> = e.iter().map(|e| e.to_string()).collect();
    assert!(
        kinds
            .iter()
            .any(|k| k.contains("#77, which does not exist")),
        "{kinds:#?}"
    );
    assert_eq!(
        kinds
            .iter()
            .filter(|k| k.contains("does not exist"))
            .count(),
        3,
        "{kinds:#?}"
    );
    assert!(kinds
        .iter()
        .any(|k| k.contains("missing the required member `Ty`")));
    // Extra members from a hand-built instruction.
    f.insts[0].members.push(Some(MemberValue::Int(1)));
    assert!(verify_errors(&f)
        .iter()
        .any(|e| e.to_string().contains("its table defines 0")));
}

#[test]
fn all_errors_are_reported_in_program_order() {
    let src = func(
        XY,
        &[
            "%t = allocactivation { Ty: float<2 x 3> }",
            "%a = relu @in %y, @in %t",
            "%b = clip @out %y, @in %x { Min: 1 }",
            "%c = relu @out %y, @in %y2",
        ],
    );
    let src = src.replace("%y2", "%t");
    let e = errors(&src);
    let lines: Vec<usize> = e.iter().map(|e| e.0).collect();
    assert_eq!(
        lines,
        vec![line(2, 0), line(2, 1), line(2, 1), line(2, 2)],
        "{e:#?}"
    );
    assert!(e[0].1.contains("never deallocated"));
    assert!(e[1].1.contains("must be `@out`"));
    assert!(e[2].1.contains("read before anything writes it"));
    assert!(e[3].1.contains("missing the required member `Max`"));
}
