//! Lowerings that the ONNX suites cannot reach as a user runs them (their
//! axes, shapes and repeats are run-time int64 inputs there): one-node
//! models built here with constant operands, imported, run on both engines
//! and compared exactly with values computed by hand.

mod common;

use common::{
    attr_int, attr_ints, f32_bytes, float, floats, import, import_err, int64s, iota, model, node,
    output_f32, run_both,
};
use glow_import::onnx::{AttributeProto, NodeProto, TensorProto};

fn ints(name: &str, v: &[i64]) -> TensorProto {
    int64s(name, &[v.len() as i64], v)
}

/// Imports a one-node model `op(x, inits...)` and runs it on `x` on both
/// engines.
fn run_one(
    op: &str,
    x: (&[i64], Vec<f32>),
    inits: Vec<TensorProto>,
    attrs: Vec<AttributeProto>,
    out_dims: &[i64],
) -> Vec<f32> {
    let mut inputs = vec!["x"];
    inputs.extend(inits.iter().map(|t| t.name.as_str()));
    let n = node(op, &inputs, &["y"], attrs);
    let bytes = model(
        vec![n],
        &[float("x", x.0)],
        &[float("y", out_dims)],
        inits.clone(),
        18,
    );
    output_f32(&run_both(&import(&bytes), &[("x", f32_bytes(&x.1))]), "y")
}

#[test]
fn reduce_sum_keepdims_over_two_axes() {
    // x[2][3][2] = 0..12; sum over axes 0 and 2.
    let got = run_one(
        "ReduceSum",
        (&[2, 3, 2], iota(12)),
        vec![ints("axes", &[0, -1])],
        vec![],
        &[1, 3, 1],
    );
    // Column j: x[0][j][0] + x[0][j][1] + x[1][j][0] + x[1][j][1].
    assert_eq!(got, vec![14.0, 22.0, 30.0]);
}

#[test]
fn reduce_mean_without_keepdims() {
    let got = run_one(
        "ReduceMean",
        (&[2, 3], iota(6)),
        vec![ints("axes", &[1])],
        vec![attr_int("keepdims", 0)],
        &[2],
    );
    assert_eq!(got, vec![1.0, 4.0]);
}

#[test]
fn reduce_sum_over_every_axis() {
    let got = run_one("ReduceSum", (&[2, 2], iota(4)), vec![], vec![], &[1, 1]);
    assert_eq!(got, vec![6.0]);
}

#[test]
fn composed_reductions_over_one_axis() {
    // x = [[-1, 2], [3, -4]] reduced over axis 1.
    let x = || (&[2i64, 2][..], vec![-1.0, 2.0, 3.0, -4.0]);
    let axes = || vec![ints("axes", &[1])];
    let keep = || vec![attr_int("keepdims", 0)];
    assert_eq!(
        run_one("ReduceL1", x(), axes(), keep(), &[2]),
        vec![3.0, 7.0]
    );
    assert_eq!(
        run_one("ReduceSumSquare", x(), axes(), keep(), &[2]),
        vec![5.0, 25.0]
    );
    assert_eq!(
        run_one("ReduceL2", x(), axes(), keep(), &[2]),
        vec![5f32.sqrt(), 5.0]
    );
    assert_eq!(
        run_one(
            "ReduceLogSum",
            (&[2, 2], vec![1.0, 2.0, 3.0, 5.0]),
            axes(),
            keep(),
            &[2]
        ),
        vec![3f32.ln(), 8f32.ln()]
    );
    assert_eq!(
        run_one(
            "ReduceLogSumExp",
            (&[1, 2], vec![0.0, 0.0]),
            axes(),
            keep(),
            &[1]
        ),
        vec![2f32.ln()]
    );
}

#[test]
fn eye_like_is_a_constant_of_the_input_shape() {
    let got = run_one(
        "EyeLike",
        (&[2, 3], vec![7.0; 6]),
        vec![],
        vec![attr_int("k", 1)],
        &[2, 3],
    );
    assert_eq!(got, vec![0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
}

#[test]
fn topk_on_the_last_and_the_first_axis() {
    use glow_import::onnx::dtype;
    // x[2][3] = [[1, 5, 3], [4, 0, 4]]: the 2 largest of each row (the last
    // axis), then the smallest of each column (axis 0, moved last and back).
    let n = node(
        "TopK",
        &["x", "k"],
        &["v", "i"],
        vec![attr_int("axis", 1), attr_int("largest", 1)],
    );
    let bytes = model(
        vec![n],
        &[float("x", &[2, 3])],
        &[("v", dtype::FLOAT, &[2, 2]), ("i", dtype::INT64, &[2, 2])],
        vec![ints("k", &[2])],
        18,
    );
    let outs = run_both(
        &import(&bytes),
        &[("x", f32_bytes(&[1.0, 5.0, 3.0, 4.0, 0.0, 4.0]))],
    );
    assert_eq!(output_f32(&outs, "v"), vec![5.0, 3.0, 4.0, 4.0]);
    let n = node(
        "TopK",
        &["x", "k"],
        &["v", "i"],
        vec![attr_int("axis", 0), attr_int("largest", 0)],
    );
    let bytes = model(
        vec![n],
        &[float("x", &[2, 3])],
        &[("v", dtype::FLOAT, &[1, 3]), ("i", dtype::INT64, &[1, 3])],
        vec![ints("k", &[1])],
        18,
    );
    let outs = run_both(
        &import(&bytes),
        &[("x", f32_bytes(&[1.0, 5.0, 3.0, 4.0, 0.0, 4.0]))],
    );
    assert_eq!(output_f32(&outs, "v"), vec![1.0, 0.0, 3.0]);
}

#[test]
fn expand_broadcasts() {
    let got = run_one(
        "Expand",
        (&[3, 1], vec![1.0, 2.0, 3.0]),
        vec![ints("shape", &[2, 1, 2])],
        vec![],
        &[2, 3, 2],
    );
    assert_eq!(
        got,
        vec![1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]
    );
}

#[test]
fn tile_repeats_each_axis() {
    let got = run_one(
        "Tile",
        (&[2, 2], vec![1.0, 2.0, 3.0, 4.0]),
        vec![ints("repeats", &[2, 2])],
        vec![],
        &[4, 4],
    );
    let row = |a: f32, b: f32| [a, b, a, b];
    let want: Vec<f32> = [row(1.0, 2.0), row(3.0, 4.0), row(1.0, 2.0), row(3.0, 4.0)].concat();
    assert_eq!(got, want);
}

#[test]
fn upsample_nearest_repeats_elements() {
    let scales = TensorProto {
        name: "scales".into(),
        dims: vec![4],
        data_type: 1,
        float_data: vec![1.0, 1.0, 2.0, 3.0],
        ..Default::default()
    };
    let got = run_one(
        "Upsample",
        (&[1, 1, 2, 2], vec![1.0, 2.0, 3.0, 4.0]),
        vec![scales],
        vec![],
        &[1, 1, 4, 6],
    );
    let a = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0];
    let b = [3.0, 3.0, 3.0, 4.0, 4.0, 4.0];
    assert_eq!(got, [a, a, b, b].concat());
}

#[test]
fn pad_constant_value() {
    let got = run_one(
        "Pad",
        (&[2, 2], vec![1.0, 2.0, 3.0, 4.0]),
        vec![
            ints("pads", &[1, 0, 0, 2]),
            TensorProto {
                name: "value".into(),
                dims: vec![],
                data_type: 1,
                float_data: vec![9.0],
                ..Default::default()
            },
        ],
        vec![],
        &[3, 4],
    );
    let want = vec![
        9.0, 9.0, 9.0, 9.0, //
        1.0, 2.0, 9.0, 9.0, //
        3.0, 4.0, 9.0, 9.0,
    ];
    assert_eq!(got, want);
}

/// LayerNormalization of one row in the reference's order, then `* w + b`.
fn layer_norm_row(x: &[f32], eps: f32, w: f32, b: f32) -> Vec<f32> {
    let n = x.len() as f32;
    let mean = x.iter().fold(0f32, |s, &v| s + v) / n;
    let var = x.iter().fold(0f32, |s, &v| s + (v - mean) * (v - mean)) / n;
    let inv = 1.0 / (var + eps).sqrt();
    x.iter().map(|&v| (v - mean) * inv * w + b).collect()
}

#[test]
fn layer_norm_with_a_broadcast_scale_and_bias() {
    // Scale and bias of one element: normalized first, then scaled and shifted.
    let x = [1.0, 2.0, 4.0, 8.0, -1.0, 0.5, 3.0, 2.0];
    let got = run_one(
        "LayerNormalization",
        (&[2, 4], x.to_vec()),
        vec![floats("w", &[1], &[3.0]), floats("b", &[1], &[0.5])],
        vec![attr_int("axis", -1)],
        &[2, 4],
    );
    let want = [
        layer_norm_row(&x[..4], 1e-5, 3.0, 0.5),
        layer_norm_row(&x[4..], 1e-5, 3.0, 0.5),
    ]
    .concat();
    assert_eq!(got, want);
}

#[test]
fn layer_norm_over_two_axes_with_constant_scale() {
    // axis 1 of 2x2x2: each row of 4 normalized; scale and bias [2, 2] cover it.
    let x = [1.0, 2.0, 3.0, 5.0, 0.0, -2.0, 4.0, 1.0];
    let (w, b) = ([1.0, 2.0, 0.5, -1.0], [0.0, 1.0, 0.0, 2.0]);
    let got = run_one(
        "LayerNormalization",
        (&[2, 2, 2], x.to_vec()),
        vec![floats("w", &[2, 2], &w), floats("b", &[2, 2], &b)],
        vec![attr_int("axis", 1)],
        &[2, 2, 2],
    );
    let mut want = Vec::new();
    for row in x.chunks(4) {
        let mean = row.iter().fold(0f32, |s, &v| s + v) / 4.0;
        let var = row.iter().fold(0f32, |s, &v| s + (v - mean) * (v - mean)) / 4.0;
        let inv = 1.0 / (var + 1e-5f32).sqrt();
        want.extend((0..4).map(|j| (row[j] - mean) * inv * w[j] + b[j]));
    }
    assert_eq!(got, want);
}

/// Imports a one-node model and returns the error text.
fn import_error(op: &str, inputs: &[(&str, &[i64])], attrs: Vec<AttributeProto>) -> String {
    let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
    let n = NodeProto {
        name: "n".into(),
        ..node(op, &names, &["y"], attrs)
    };
    let edges: Vec<_> = inputs.iter().map(|(n, d)| float(n, d)).collect();
    import_err(&model(
        vec![n],
        &edges,
        &[float("y", inputs[0].1)],
        vec![],
        23,
    ))
}

#[test]
fn normalization_errors_name_the_node() {
    let e = import_error(
        "LayerNormalization",
        &[("x", &[2, 4]), ("w", &[4])],
        vec![attr_int("stash_type", 0)],
    );
    assert!(
        e.contains("node `n`") && e.contains("unsupported: stash_type 0"),
        "{e}"
    );
    let e = import_error(
        "RMSNormalization",
        &[("x", &[2, 4]), ("w", &[4])],
        vec![attr_int("axis", 2)],
    );
    assert!(
        e.contains("node `n`") && e.contains("axis 2 is out of range"),
        "{e}"
    );
    let e = import_error("SwiGLU", &[("a", &[2, 4]), ("b", &[4])], vec![]);
    assert!(e.contains("SwiGLU does not broadcast"), "{e}");
    let e = import_error("LayerNormalization", &[("x", &[2, 4]), ("w", &[3])], vec![]);
    assert!(e.contains("do not broadcast"), "{e}");
}

#[test]
fn attention_zeroes_rows_a_constant_bool_mask_hides() {
    // One head, D = 1, S = L = 2: query 0 sees both keys, query 1 none.
    let k = floats("k", &[1, 1, 2, 1], &[0.0, 1.0]);
    let v = floats("v", &[1, 1, 2, 1], &[10.0, 20.0]);
    let mask = TensorProto {
        name: "mask".into(),
        dims: vec![2, 2],
        data_type: 9,
        int32_data: vec![1, 1, 0, 0],
        ..Default::default()
    };
    let got = run_one(
        "Attention",
        (&[1, 1, 2, 1], vec![1.0, 2.0]),
        vec![k, v, mask],
        vec![],
        &[1, 1, 2, 1],
    );
    // Scale 1 / sqrt(1): scores [0, 1] for query 0; the softmax of them.
    let e0 = (0.0f32 - 1.0).exp();
    let sum = e0 + 1.0;
    let want0 = e0 / sum * 10.0 + 1.0 / sum * 20.0;
    assert!((got[0] - want0).abs() <= 1e-6, "{got:?} vs {want0}");
    assert_eq!(got[1], 0.0, "a fully masked row gives 0, not NaN");
}

#[test]
fn attention_errors_name_the_node() {
    let q = ("q", &[1i64, 2, 2, 4][..]);
    let e = import_error(
        "Attention",
        &[q, ("k", &[1, 2, 3, 4]), ("v", &[1, 2, 2, 4])],
        vec![],
    );
    assert!(
        e.contains("node `n`") && e.contains("K and V differ in sequence length"),
        "{e}"
    );
    let e = import_error(
        "Attention",
        &[q, ("k", &[1, 3, 2, 4]), ("v", &[1, 3, 2, 4])],
        vec![],
    );
    assert!(e.contains("2 query heads are not a multiple of 3"), "{e}");
    let e = import_error(
        "Attention",
        &[("q", &[1, 2, 8]), ("k", &[1, 2, 8]), ("v", &[1, 2, 8])],
        vec![],
    );
    assert!(
        e.contains("3-D q needs q_num_heads and kv_num_heads"),
        "{e}"
    );
    let e = import_error(
        "Attention",
        &[q, q, q],
        vec![attr_int("qk_matmul_output_mode", 4)],
    );
    assert!(e.contains("qk_matmul_output_mode 4"), "{e}");
    let e = import_error("Attention", &[q, q, q, ("mask", &[3, 2])], vec![]);
    assert!(e.contains("does not broadcast"), "{e}");
}

#[test]
fn conv_transpose_constant_filter_pads_and_output_padding() {
    // Values from onnx.reference: the end row past the full output (output
    // padding) holds the bias alone; the begin column is cropped by pads.
    let w: Vec<f32> = (0..8).map(|i| i as f32 * 0.5).collect();
    let w = floats("w", &[1, 2, 2, 2], &w);
    let b = floats("b", &[2], &[1.0, -1.0]);
    let got = run_one(
        "ConvTranspose",
        (&[1, 1, 2, 2], vec![1.0, 2.0, 3.0, 4.0]),
        vec![w, b],
        vec![
            attr_ints("strides", &[2, 2]),
            attr_ints("output_padding", &[1, 0]),
            attr_ints("pads", &[0, 1, 0, 0]),
        ],
        &[1, 2, 5, 3],
    );
    let want = vec![
        1.5, 1.0, 2.0, 2.5, 3.0, 4.0, 2.5, 1.0, 3.0, 5.5, 5.0, 7.0, 1.0, 1.0, 1.0, //
        1.5, 3.0, 4.0, 2.5, 5.0, 6.0, 6.5, 7.0, 9.0, 9.5, 11.0, 13.0, -1.0, -1.0, -1.0,
    ];
    assert_eq!(got, want);
}

#[test]
fn conv_transpose_1d_strides_and_dilations() {
    let w = floats("w", &[1, 1, 2], &[1.0, 10.0]);
    let b = floats("b", &[1], &[0.5]);
    let got = run_one(
        "ConvTranspose",
        (&[1, 1, 3], vec![1.0, 2.0, 3.0]),
        vec![w, b],
        vec![attr_ints("strides", &[2]), attr_ints("dilations", &[2])],
        &[1, 1, 7],
    );
    assert_eq!(got, vec![1.5, 0.5, 12.5, 0.5, 23.5, 0.5, 30.5]);
}

#[test]
fn average_pool_ceil_mode_counts_real_pads_only() {
    // Values from onnx.reference: the last window of each axis reaches past the
    // padded input; only the positions inside it count.
    let attrs = vec![
        attr_ints("kernel_shape", &[3, 3]),
        attr_ints("strides", &[2, 2]),
        attr_ints("pads", &[1, 1, 1, 1]),
        attr_int("ceil_mode", 1),
        attr_int("count_include_pad", 1),
    ];
    let got = run_one(
        "AveragePool",
        (&[1, 1, 4, 4], iota(16)),
        vec![],
        attrs,
        &[1, 1, 3, 3],
    );
    let want = [
        1.1111112, 2.6666667, 1.6666666, 5.6666665, 10.0, 5.5, 4.1666665, 7.0, 3.75,
    ];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-6, "{got:?}");
    }
}

#[test]
fn lp_pool_sums_powers_over_the_window() {
    // p = 3 over [1, -2, 3] with a window of 2 and a begin pad: the first
    // window holds the pad and 1.
    let attrs = vec![
        attr_ints("kernel_shape", &[2]),
        attr_ints("pads", &[1, 0]),
        attr_int("p", 3),
    ];
    let got = run_one(
        "LpPool",
        (&[1, 1, 3], vec![1.0, -2.0, 3.0]),
        vec![],
        attrs,
        &[1, 1, 3],
    );
    let want = [1.0f32, 9f32.cbrt(), 35f32.cbrt()];
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-5, "{got:?}");
    }
}

/// Every op whose row in the op table names one instruction becomes that
/// instruction: a one-node model on `2 x 3` activations, as many as the
/// instruction reads (float, bool for the logical ops, int32 for the
/// integer-only ones).
#[test]
fn each_op_becomes_the_instruction_its_table_row_names() {
    use glow_import::onnx::dtype;
    use glow_ir::opcode::Family;
    let dims: &[i64] = &[2, 3];
    let mut checked = 0;
    for d in glow_import::OPS {
        let Some(opcode) = d.opcode else { continue };
        let info = opcode.info();
        let int_only = glow_backend::ops::binary(opcode).is_some_and(|b| b.float_form().is_none());
        let (input, output) = match info.family {
            // The bitwise instructions have no float form.
            Family::Binary if int_only => (dtype::INT32, dtype::INT32),
            Family::Unary | Family::Binary | Family::SoftMax => (dtype::FLOAT, dtype::FLOAT),
            Family::Compare | Family::Predicate => (dtype::FLOAT, dtype::BOOL),
            Family::Logical => (dtype::BOOL, dtype::BOOL),
            f => panic!(
                "{}: this test builds no model for a {f:?} instruction",
                d.name
            ),
        };
        // Dest is the one operand written.
        let names = &["a", "b"][..info.required_operands() - 1];
        let inputs: Vec<_> = names.iter().map(|n| (*n, input, dims)).collect();
        let n = node(d.name, names, &["y"], vec![]);
        let imported = import(&model(vec![n], &inputs, &[("y", output, dims)], vec![], 18));
        let f = &imported.function;
        assert!(
            f.layout.iter().any(|i| f.inst(i).opcode == opcode),
            "{} gave no `{}`:\n{}",
            d.name,
            opcode.name(),
            imported.gir_text()
        );
        checked += 1;
    }
    assert!(checked > 0, "no row of the op table names an instruction");
}

/// What the importer does not lower is the typed `Unsupported` error the
/// runners count apart from failures; an op type outside the table, a
/// feature of a supported op and a graph edge of no IR form each have a
/// case, and the input-kind check of a float-only op refuses an integer
/// activation as input 0 (unsupported) and after it (must be a constant).
#[test]
fn unsupported_is_a_typed_error() {
    use glow_import::onnx::dtype;
    use glow_import::{import_model, ImportError, Options, Unsupported};
    let err = |nodes, inputs: &[common::Edge], outputs: &[common::Edge]| match import_model(
        &model(nodes, inputs, outputs, vec![], 18),
        &Options::default(),
    ) {
        Ok(_) => panic!("imported"),
        Err(e) => e,
    };
    let d: &[i64] = &[2, 3];
    let x = [float("x", d)];
    let y = [float("y", d)];
    let e = err(vec![node("Unique", &["x"], &["y"], vec![])], &x, &y);
    assert!(
        matches!(&e, ImportError::Unsupported(Unsupported::Op { op, .. }) if op == "Unique"),
        "{e:?}"
    );
    let gelu = node(
        "Gelu",
        &["x"],
        &["y"],
        vec![common::attr_str("approximate", "erf")],
    );
    let e = err(vec![gelu], &x, &y);
    assert!(
        matches!(&e, ImportError::Unsupported(Unsupported::Feature { op, .. }) if op == "Gelu"),
        "{e:?}"
    );
    let e = err(
        vec![node("Relu", &["x"], &["y"], vec![])],
        &[("x", dtype::DOUBLE, d)],
        &y,
    );
    assert!(
        matches!(&e, ImportError::Unsupported(Unsupported::Graph { edge, .. }) if edge == "graph input `x`"),
        "{e:?}"
    );
    let i = [("i", dtype::INT64, d)];
    let e = err(vec![node("Relu", &["i"], &["y"], vec![])], &i, &y);
    assert!(
        matches!(&e, ImportError::Unsupported(Unsupported::Feature { op, .. }) if op == "Relu"),
        "{e:?}"
    );
    let e = err(
        vec![node("PRelu", &["x", "i"], &["y"], vec![])],
        &[x[0], i[0]],
        &y,
    );
    assert!(
        matches!(&e, ImportError::NeedsConstant { input, .. } if input == "i"),
        "{e:?}"
    );
}

#[test]
fn cumsum_along_a_constant_axis() {
    // x = [[0, 1, 2], [3, 4, 5]]; reversed exclusive sums along axis 1.
    let got = run_one(
        "CumSum",
        (&[2, 3], iota(6)),
        vec![ints("axis", &[-1])],
        vec![attr_int("exclusive", 1), attr_int("reverse", 1)],
        &[2, 3],
    );
    assert_eq!(got, vec![3.0, 2.0, 0.0, 9.0, 5.0, 0.0]);
}

/// A run-time axis: each dimension's sums, and `gather` picks the one the
/// axis names (negative axes from the end).
#[test]
fn cumsum_along_a_run_time_axis() {
    use glow_import::onnx::dtype;
    let n = node("CumSum", &["x", "axis"], &["y"], vec![]);
    let bytes = model(
        vec![n],
        &[float("x", &[2, 3]), ("axis", dtype::INT64, &[])],
        &[float("y", &[2, 3])],
        vec![],
        18,
    );
    let imported = import(&bytes);
    for (axis, want) in [
        (0i64, [0.0, 1.0, 2.0, 3.0, 5.0, 7.0]),
        (1, [0.0, 1.0, 3.0, 3.0, 7.0, 12.0]),
        (-2, [0.0, 1.0, 2.0, 3.0, 5.0, 7.0]),
        (-1, [0.0, 1.0, 3.0, 3.0, 7.0, 12.0]),
    ] {
        let outs = run_both(
            &imported,
            &[
                ("x", f32_bytes(&iota(6))),
                ("axis", axis.to_le_bytes().to_vec()),
            ],
        );
        assert_eq!(output_f32(&outs, "y"), want, "axis {axis}");
    }
}
