//! Integer and bool tensors at the graph's edges and through run-time ops:
//! small ONNX graphs built here, imported as `glow-import` does, run on the
//! interpreter and (when `cc` is installed) the C engine, and compared
//! exactly with values computed by hand. The error cases check that what
//! cannot be lowered says so, naming the node and the input.

mod common;

use common::{attr_int, import, import_err, int64s, model, node, Edge};
use glow_backend::elem::{read_int, write_int};
use glow_import::onnx::{dtype, AttributeProto, TensorProto};
use glow_import::{import_model, ImportError, Imported, Options};
use glow_ir::ElemKind;
use std::collections::BTreeMap;

/// Values fed to or read from a tensor, as numbers: integers and bools as
/// i64 (bools 0/1), floats as f32.
#[derive(Clone, Debug, PartialEq)]
pub enum Vals {
    F(Vec<f32>),
    I(Vec<i64>),
}

fn to_bytes(v: &Vals, kind: ElemKind) -> Vec<u8> {
    match v {
        Vals::F(f) => f.iter().flat_map(|x| x.to_le_bytes()).collect(),
        Vals::I(i) => {
            let mut out = vec![0u8; i.len() * kind.bytes() as usize];
            for (k, &x) in i.iter().enumerate() {
                write_int(kind, &mut out, k, x);
            }
            out
        }
    }
}

/// Runs `imported` on both engines with `inputs`; returns the outputs by
/// name (the engines must agree byte for byte).
fn run_both(imported: &Imported, inputs: &[(&str, Vals)]) -> BTreeMap<String, (ElemKind, Vals)> {
    let f = &imported.function;
    let feeds: Vec<(&str, Vec<u8>)> = inputs
        .iter()
        .map(|(name, v)| {
            let w = f.weights.iter().find(|w| w.name == *name).expect("input");
            (*name, to_bytes(v, w.ty.elem))
        })
        .collect();
    common::run_both(imported, &feeds)
        .tensors
        .iter()
        .map(|t| {
            let k = t.ty.elem;
            let v = if k == ElemKind::Float {
                Vals::F(common::f32s(&t.data))
            } else {
                let n = t.data.len() / k.bytes() as usize;
                Vals::I((0..n).map(|i| read_int(k, &t.data, i)).collect())
            };
            (t.name.clone(), (k, v))
        })
        .collect()
}

/// One node `op(x, y...)` over typed inputs with one typed output `z`.
fn one(
    op: &str,
    inputs: &[(Edge, Vals)],
    out: Edge,
    attrs: Vec<AttributeProto>,
    opset: i64,
) -> (ElemKind, Vals) {
    let names: Vec<&str> = inputs.iter().map(|((n, _, _), _)| *n).collect();
    let edges: Vec<Edge> = inputs.iter().map(|(e, _)| *e).collect();
    let bytes = model(
        vec![node(op, &names, &[out.0], attrs)],
        &edges,
        &[out],
        vec![],
        opset,
    );
    let imported = import(&bytes);
    let feeds: Vec<(&str, Vals)> = inputs
        .iter()
        .map(|((n, _, _), v)| (*n, v.clone()))
        .collect();
    run_both(&imported, &feeds).remove(out.0).expect("output")
}

#[test]
fn integer_and_bool_graph_edges_through_identity() {
    let cases: [(i32, ElemKind, Vec<i64>); 5] = [
        (dtype::INT64, ElemKind::Index64, vec![i64::MIN, -1, 1 << 60]),
        (dtype::INT32, ElemKind::Index32, vec![i32::MIN as i64, 0, 7]),
        (dtype::INT8, ElemKind::Int8, vec![-128, 0, 127]),
        (dtype::UINT8, ElemKind::UInt8, vec![0, 128, 255]),
        (dtype::BOOL, ElemKind::Bool, vec![1, 0, 1]),
    ];
    for (code, kind, v) in cases {
        let got = one(
            "Identity",
            &[(("x", code, &[3]), Vals::I(v.clone()))],
            ("z", code, &[3]),
            vec![],
            13,
        );
        assert_eq!(got, (kind, Vals::I(v)), "{kind}");
    }
}

#[test]
fn scalar_edges_are_one_element_tensors() {
    let bytes = model(
        vec![node("Identity", &["x"], &["z"], vec![])],
        &[("x", dtype::INT64, &[])],
        &[("z", dtype::INT64, &[])],
        vec![],
        13,
    );
    let imported = import(&bytes);
    let text = imported.gir_text();
    assert!(text.contains("%x = WeightVar index64<1> mutable"), "{text}");
    let out = run_both(&imported, &[("x", Vals::I(vec![-42]))]);
    assert_eq!(out["z"], (ElemKind::Index64, Vals::I(vec![-42])));
}

#[test]
fn shape_and_size_are_integer_outputs() {
    let bytes = model(
        vec![
            node("Shape", &["x"], &["s"], vec![]),
            node("Size", &["x"], &["n"], vec![]),
        ],
        &[("x", dtype::FLOAT, &[2, 3, 4])],
        &[("s", dtype::INT64, &[3]), ("n", dtype::INT64, &[])],
        vec![],
        13,
    );
    let out = run_both(&import(&bytes), &[("x", Vals::F(vec![0.0; 24]))]);
    assert_eq!(out["s"], (ElemKind::Index64, Vals::I(vec![2, 3, 4])));
    assert_eq!(out["n"], (ElemKind::Index64, Vals::I(vec![24])));
}

/// A strict comparison is stored negated inside the function; as a graph
/// output it is made plain first.
#[test]
fn comparison_results_are_bool_outputs() {
    let x = Vals::F(vec![1.0, 2.0, f32::NAN, -0.0]);
    let y = Vals::F(vec![2.0, 2.0, 1.0, 0.0]);
    let cases = [
        ("Less", vec![1, 0, 0, 0]),
        ("Greater", vec![0, 0, 0, 0]),
        ("LessOrEqual", vec![1, 1, 0, 1]),
        ("GreaterOrEqual", vec![0, 1, 0, 1]),
    ];
    for (op, want) in cases {
        let got = one(
            op,
            &[
                (("x", dtype::FLOAT, &[4]), x.clone()),
                (("y", dtype::FLOAT, &[4]), y.clone()),
            ],
            ("z", dtype::BOOL, &[4]),
            vec![],
            13,
        );
        assert_eq!(got, (ElemKind::Bool, Vals::I(want)), "{op}");
    }
}

/// Where picks between run-time int64 tensors; a non-splat int64 constant
/// goes to the weights file as I64 (values past 2^53 stay exact).
#[test]
fn where_over_int64_with_a_weights_file_constant() {
    let big = (1i64 << 60) + 1;
    let bytes = model(
        vec![node("Where", &["c", "k", "y"], &["z"], vec![])],
        &[("c", dtype::BOOL, &[3]), ("y", dtype::INT64, &[3])],
        &[("z", dtype::INT64, &[3])],
        vec![int64s("k", &[3], &[big, -2, 3])],
        13,
    );
    let imported = import(&bytes);
    assert_eq!(imported.weights.len(), 1);
    assert_eq!(imported.weights[0].ty.to_string(), "index64<3>");
    let st = glow_import::safetensors_bytes(&imported.weights).expect("safetensors");
    let dir = std::env::temp_dir().join(format!("glow-typed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("w.safetensors");
    std::fs::write(&path, st).expect("write");
    let loaded = glow_backend::weights::load_safetensors(&imported.function, &path).expect("loads");
    assert_eq!(loaded[&imported.weights[0].name], imported.weights[0].bytes);
    let _ = std::fs::remove_dir_all(&dir);
    let out = run_both(
        &imported,
        &[
            ("c", Vals::I(vec![1, 0, 1])),
            ("y", Vals::I(vec![10, 20, 30])),
        ],
    );
    assert_eq!(out["z"], (ElemKind::Index64, Vals::I(vec![big, 20, 3])));
}

#[test]
fn unsupported_types_and_uses_name_the_input() {
    let e = import_err(&model(
        vec![node("Identity", &["x"], &["z"], vec![])],
        &[("x", dtype::DOUBLE, &[2])],
        &[("z", dtype::FLOAT, &[2])],
        vec![],
        13,
    ));
    assert!(
        e.contains("graph input `x`: element type DOUBLE is not supported (FLOAT, INT64, INT32, INT8, UINT8 and BOOL are)"),
        "{e}"
    );
    let e = import_err(&model(
        vec![node("Relu", &["x"], &["z"], vec![])],
        &[("x", dtype::INT64, &[2])],
        &[("z", dtype::INT64, &[2])],
        vec![],
        13,
    ));
    assert!(
        e.contains(
            "node `z` (Relu): unsupported: a run-time index64 tensor (`x`) as input 0 of Relu"
        ),
        "{e}"
    );
    // A run-time shape cannot be compiled statically.
    let r = import_model(
        &model(
            vec![node("Reshape", &["x", "shape"], &["z"], vec![])],
            &[("x", dtype::FLOAT, &[2, 3]), ("shape", dtype::INT64, &[2])],
            &[("z", dtype::FLOAT, &[3, 2])],
            vec![],
            13,
        ),
        &Options::default(),
    );
    match r {
        Err(e @ ImportError::NeedsConstant { .. }) => {
            let e = e.to_string();
            assert!(e.contains("input `shape` must be a constant"), "{e}");
            assert!(e.contains("known at import time"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

/// Integer arithmetic wraps to the width; Div truncates, dividing by zero
/// gives 0 (ONNX leaves it undefined). A constant operand takes the kind.
#[test]
fn integer_arithmetic_wraps_and_broadcasts() {
    let x = Vals::I(vec![127, -128, 7, -7]);
    let y = Vals::I(vec![1, -1, 2, 0]);
    let cases = [
        ("Add", vec![-128, 127, 9, -7]),
        ("Sub", vec![126, -127, 5, -7]),
        ("Mul", vec![127, -128, 14, 0]),
        ("Div", vec![127, -128, 3, 0]),
        ("Max", vec![127, -1, 7, 0]),
        ("Min", vec![1, -128, 2, -7]),
    ];
    for (op, want) in cases {
        let got = one(
            op,
            &[
                (("x", dtype::INT8, &[4]), x.clone()),
                (("y", dtype::INT8, &[4]), y.clone()),
            ],
            ("z", dtype::INT8, &[4]),
            vec![],
            13,
        );
        assert_eq!(got, (ElemKind::Int8, Vals::I(want)), "{op}");
    }
    // uint8 wraps at 256; a [2, 1] column broadcasts against [2, 3].
    let got = one(
        "Add",
        &[
            (
                ("x", dtype::UINT8, &[2, 3]),
                Vals::I(vec![250, 1, 2, 3, 4, 5]),
            ),
            (("y", dtype::UINT8, &[2, 1]), Vals::I(vec![10, 100])),
        ],
        ("z", dtype::UINT8, &[2, 3]),
        vec![],
        13,
    );
    assert_eq!(
        got,
        (ElemKind::UInt8, Vals::I(vec![4, 11, 12, 103, 104, 105]))
    );
    // int64 beyond 2^53 with a constant addend.
    let bytes = model(
        vec![node("Add", &["x", "k"], &["z"], vec![])],
        &[("x", dtype::INT64, &[2])],
        &[("z", dtype::INT64, &[2])],
        vec![int64s("k", &[1], &[1])],
        13,
    );
    let out = run_both(
        &import(&bytes),
        &[("x", Vals::I(vec![(1 << 60) + 1, i64::MAX]))],
    );
    assert_eq!(
        out["z"],
        (ElemKind::Index64, Vals::I(vec![(1 << 60) + 2, i64::MIN]))
    );
}

#[test]
fn logical_ops_on_run_time_bools() {
    let x = Vals::I(vec![0, 0, 1, 1]);
    let y = Vals::I(vec![0, 1, 0, 1]);
    for (op, want) in [
        ("And", vec![0, 0, 0, 1]),
        ("Or", vec![0, 1, 1, 1]),
        ("Xor", vec![0, 1, 1, 0]),
        ("Equal", vec![1, 0, 0, 1]),
    ] {
        let got = one(
            op,
            &[
                (("x", dtype::BOOL, &[4]), x.clone()),
                (("y", dtype::BOOL, &[4]), y.clone()),
            ],
            ("z", dtype::BOOL, &[4]),
            vec![],
            13,
        );
        assert_eq!(got, (ElemKind::Bool, Vals::I(want)), "{op}");
    }
    // And of [2, 2] with a broadcast [2] row, and Not of a comparison.
    let bytes = model(
        vec![
            node("And", &["x", "y"], &["a"], vec![]),
            node("Less", &["f", "g"], &["l"], vec![]),
            node("Not", &["l"], &["n"], vec![]),
        ],
        &[
            ("x", dtype::BOOL, &[2, 2]),
            ("y", dtype::BOOL, &[2]),
            ("f", dtype::FLOAT, &[2]),
            ("g", dtype::FLOAT, &[2]),
        ],
        &[("a", dtype::BOOL, &[2, 2]), ("n", dtype::BOOL, &[2])],
        vec![],
        13,
    );
    let out = run_both(
        &import(&bytes),
        &[
            ("x", Vals::I(vec![1, 1, 0, 1])),
            ("y", Vals::I(vec![1, 0])),
            ("f", Vals::F(vec![1.0, 3.0])),
            ("g", Vals::F(vec![2.0, 2.0])),
        ],
    );
    assert_eq!(out["a"], (ElemKind::Bool, Vals::I(vec![1, 0, 0, 0])));
    assert_eq!(out["n"], (ElemKind::Bool, Vals::I(vec![0, 1])));
}

/// Where with a run-time condition broadcast over the arms, and with a
/// constant condition over run-time arms.
#[test]
fn where_conditions_broadcast_and_may_be_constant() {
    let bytes = model(
        vec![
            node("Where", &["c", "x", "y"], &["z"], vec![]),
            node("Where", &["k", "x", "y"], &["w"], vec![]),
        ],
        &[
            ("c", dtype::BOOL, &[2]),
            ("x", dtype::INT32, &[2, 2]),
            ("y", dtype::INT32, &[2, 2]),
        ],
        &[("z", dtype::INT32, &[2, 2]), ("w", dtype::INT32, &[2, 2])],
        vec![TensorProto {
            name: "k".into(),
            dims: vec![2, 1],
            data_type: dtype::BOOL,
            int32_data: vec![0, 1],
            ..Default::default()
        }],
        13,
    );
    let out = run_both(
        &import(&bytes),
        &[
            ("c", Vals::I(vec![1, 0])),
            ("x", Vals::I(vec![1, 2, 3, 4])),
            ("y", Vals::I(vec![-1, -2, -3, -4])),
        ],
    );
    assert_eq!(out["z"], (ElemKind::Index32, Vals::I(vec![1, -2, 3, -4])));
    assert_eq!(out["w"], (ElemKind::Index32, Vals::I(vec![-1, -2, 3, 4])));
}

/// Trilu keeps a triangle of the last two dims: a constant `k` gives a
/// constant mask, a run-time `k` is compared at run time.
#[test]
fn trilu_with_constant_and_run_time_k() {
    let x: Vec<i64> = (1..=12).collect();
    // upper, k = 1 (attribute default upper), over [2, 2, 3].
    let bytes = model(
        vec![node("Trilu", &["x", "k"], &["z"], vec![])],
        &[("x", dtype::INT64, &[2, 2, 3])],
        &[("z", dtype::INT64, &[2, 2, 3])],
        vec![int64s("k", &[], &[1])],
        14,
    );
    let out = run_both(&import(&bytes), &[("x", Vals::I(x.clone()))]);
    assert_eq!(
        out["z"],
        (
            ElemKind::Index64,
            Vals::I(vec![0, 2, 3, 0, 0, 6, 0, 8, 9, 0, 0, 12])
        )
    );
    // lower with a run-time k = -1 over float [3, 2].
    let bytes = model(
        vec![node(
            "Trilu",
            &["x", "k"],
            &["z"],
            vec![attr_int("upper", 0)],
        )],
        &[("x", dtype::FLOAT, &[3, 2]), ("k", dtype::INT64, &[])],
        &[("z", dtype::FLOAT, &[3, 2])],
        vec![],
        14,
    );
    let xf = Vals::F(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let out = run_both(
        &import(&bytes),
        &[("x", xf.clone()), ("k", Vals::I(vec![-1]))],
    );
    assert_eq!(
        out["z"],
        (ElemKind::Float, Vals::F(vec![0.0, 0.0, 3.0, 0.0, 5.0, 6.0]))
    );
    let out = run_both(&import(&bytes), &[("x", xf), ("k", Vals::I(vec![0]))]);
    assert_eq!(
        out["z"],
        (ElemKind::Float, Vals::F(vec![1.0, 0.0, 3.0, 4.0, 5.0, 6.0]))
    );
}

#[test]
fn dropout_mask_is_all_true() {
    let bytes = model(
        vec![node("Dropout", &["x"], &["y", "mask"], vec![])],
        &[("x", dtype::FLOAT, &[3])],
        &[("y", dtype::FLOAT, &[3]), ("mask", dtype::BOOL, &[3])],
        vec![],
        13,
    );
    let out = run_both(&import(&bytes), &[("x", Vals::F(vec![1.0, 2.0, 3.0]))]);
    assert_eq!(out["mask"], (ElemKind::Bool, Vals::I(vec![1, 1, 1])));
    assert_eq!(out["y"], (ElemKind::Float, Vals::F(vec![1.0, 2.0, 3.0])));
}

/// Data movement keeps the element kind: Unsqueeze, Transpose, Concat with
/// a constant, Slice, Gather and Expand on int64 and uint8 tensors.
#[test]
fn data_movement_keeps_integer_kinds() {
    let bytes = model(
        vec![
            node("Unsqueeze", &["x", "ax"], &["u"], vec![]),
            node("Transpose", &["x"], &["t"], vec![]),
            node("Concat", &["x", "c"], &["cat"], vec![attr_int("axis", 0)]),
            node("Slice", &["x", "s0", "s1", "s2"], &["sl"], vec![]),
            node("Gather", &["x", "gi"], &["g"], vec![attr_int("axis", 1)]),
            node("Expand", &["b", "shape"], &["e"], vec![]),
        ],
        &[("x", dtype::INT64, &[2, 3]), ("b", dtype::UINT8, &[3])],
        &[
            ("u", dtype::INT64, &[2, 1, 3]),
            ("t", dtype::INT64, &[3, 2]),
            ("cat", dtype::INT64, &[3, 3]),
            ("sl", dtype::INT64, &[2, 2]),
            ("g", dtype::INT64, &[2, 1]),
            ("e", dtype::UINT8, &[2, 3]),
        ],
        vec![
            int64s("ax", &[1], &[1]),
            int64s("c", &[1, 3], &[7, 8, 1 << 60]),
            int64s("s0", &[1], &[1]),
            int64s("s1", &[1], &[3]),
            int64s("s2", &[1], &[1]),
            int64s("gi", &[1], &[-1]),
            int64s("shape", &[2], &[2, 3]),
        ],
        13,
    );
    let x = Vals::I(vec![1, 2, 3, 4, 5, 6]);
    let out = run_both(
        &import(&bytes),
        &[("x", x), ("b", Vals::I(vec![9, 0, 255]))],
    );
    let i = |v: Vec<i64>| (ElemKind::Index64, Vals::I(v));
    assert_eq!(out["u"], i(vec![1, 2, 3, 4, 5, 6]));
    assert_eq!(out["t"], i(vec![1, 4, 2, 5, 3, 6]));
    assert_eq!(out["cat"], i(vec![1, 2, 3, 4, 5, 6, 7, 8, 1 << 60]));
    assert_eq!(out["sl"], i(vec![2, 3, 5, 6]));
    assert_eq!(out["g"], i(vec![3, 6]));
    assert_eq!(
        out["e"],
        (ElemKind::UInt8, Vals::I(vec![9, 0, 255, 9, 0, 255]))
    );
}

/// A zero first dimension is a zero-size tensor, not a symbolic batch: the
/// input is the empty constant, and a buffer of it is refused.
#[test]
fn a_zero_first_dimension_is_refused() {
    let e = import_err(&model(
        vec![node("Identity", &["x"], &["z"], vec![])],
        &[("x", dtype::INT64, &[0, 5])],
        &[("z", dtype::INT64, &[0, 5])],
        vec![],
        13,
    ));
    assert!(
        e.contains("unsupported: tensor `x.1` has a zero dimension"),
        "{e}"
    );
}
