//! The index ops with int64 constant indices (the official suite feeds
//! them as run-time int64 inputs): one-node models built here, imported,
//! run on both engines and compared with values from ONNX's reference
//! implementation (`onnx.reference`).

mod common;

use common::{
    attr_int, attr_str, f32_bytes, float, floats, import, import_err, int64s as ints, iota, model,
    node, output_f32, run_both,
};
use glow_import::onnx::{AttributeProto, NodeProto, TensorProto};
use std::collections::BTreeMap;

/// A one-node model: `op(inputs...)` over the graph input `x` and the
/// initializers, with outputs `outs` (name, dims).
struct Case<'a> {
    op: &'a str,
    x: (&'a [i64], Vec<f32>),
    inputs: Vec<&'a str>,
    inits: Vec<TensorProto>,
    attrs: Vec<AttributeProto>,
    outs: Vec<(&'a str, &'a [i64])>,
    /// Nodes after the first, which then writes `mid`.
    then: Vec<NodeProto>,
}

/// Imports the model and runs it on both engines (the C one when `cc`
/// exists); the outputs must agree bit for bit. Returns them by name.
fn run_case(c: Case) -> BTreeMap<String, Vec<f32>> {
    let outs: Vec<&str> = if c.then.is_empty() {
        c.outs.iter().map(|o| o.0).collect()
    } else {
        vec!["mid"]
    };
    let first = NodeProto {
        name: "n".into(),
        ..node(c.op, &c.inputs, &outs, c.attrs)
    };
    let edges: Vec<_> = c.outs.iter().map(|o| float(o.0, o.1)).collect();
    let bytes = model(
        std::iter::once(first).chain(c.then).collect(),
        &[float("x", c.x.0)],
        &edges,
        c.inits,
        18,
    );
    let got = run_both(&import(&bytes), &[("x", f32_bytes(&c.x.1))]);
    c.outs
        .iter()
        .map(|(name, _)| (name.to_string(), output_f32(&got, name)))
        .collect()
}

fn y(c: Case) -> Vec<f32> {
    run_case(c).remove("y").expect("y")
}

#[test]
fn gather_elements_with_negative_indices() {
    let got = y(Case {
        op: "GatherElements",
        x: (&[3, 4], iota(12)),
        inputs: vec!["x", "i"],
        inits: vec![ints("i", &[3, 2], &[0, 2, -1, 1, 3, -4])],
        attrs: vec![attr_int("axis", 1)],
        outs: vec![("y", &[3, 2])],
        then: vec![],
    });
    assert_eq!(got, vec![0.0, 2.0, 7.0, 5.0, 11.0, 8.0]);
}

#[test]
fn gather_nd_with_a_batch_dimension() {
    let got = y(Case {
        op: "GatherND",
        x: (&[2, 2, 2], iota(8)),
        inputs: vec!["x", "i"],
        inits: vec![ints("i", &[2, 1], &[1, 0])],
        attrs: vec![attr_int("batch_dims", 1)],
        outs: vec![("y", &[2, 2])],
        then: vec![],
    });
    assert_eq!(got, vec![2.0, 3.0, 4.0, 5.0]);
}

#[test]
fn scatter_elements_adds_repeated_indices() {
    let got = y(Case {
        op: "ScatterElements",
        x: (&[3, 3], vec![1.0; 9]),
        inputs: vec!["x", "i", "u"],
        inits: vec![
            ints("i", &[2, 2], &[1, 1, 0, -1]),
            floats("u", &[2, 2], &[2.0, 3.0, 4.0, 5.0]),
        ],
        attrs: vec![attr_int("axis", 1), attr_str("reduction", "add")],
        outs: vec![("y", &[3, 3])],
        then: vec![],
    });
    assert_eq!(got, vec![1.0, 6.0, 1.0, 5.0, 1.0, 6.0, 1.0, 1.0, 1.0]);
}

#[test]
fn scatter_nd_adds_rows() {
    let got = y(Case {
        op: "ScatterND",
        x: (&[4, 2], iota(8)),
        inputs: vec!["x", "i", "u"],
        inits: vec![
            ints("i", &[3, 1], &[3, 0, 3]),
            floats("u", &[3, 2], &[10.0, 11.0, 20.0, 21.0, 30.0, 31.0]),
        ],
        attrs: vec![attr_str("reduction", "add")],
        outs: vec![("y", &[4, 2])],
        then: vec![],
    });
    assert_eq!(got, vec![20.0, 22.0, 2.0, 3.0, 4.0, 5.0, 46.0, 49.0]);
}

#[test]
fn one_hot_with_constant_depth_and_values() {
    // Indices from the end count back; one out of range is all `off`. The
    // graph input `x` is not used.
    let got = y(Case {
        op: "OneHot",
        x: (&[1], vec![0.0]),
        inputs: vec!["i", "d", "v"],
        inits: vec![
            ints("i", &[3], &[1, -1, 5]),
            floats("d", &[], &[4.0]),
            floats("v", &[2], &[0.5, 3.0]),
        ],
        attrs: vec![attr_int("axis", 0)],
        outs: vec![("y", &[4, 3])],
        then: vec![],
    });
    let want = [
        0.5, 0.5, 0.5, //
        3.0, 0.5, 0.5, //
        0.5, 0.5, 0.5, //
        0.5, 3.0, 0.5,
    ];
    assert_eq!(got, want);
}

#[test]
fn negative_log_likelihood_loss_reductions() {
    let x = || (&[2i64, 3][..], vec![-1.5, -0.5, -2.0, -0.25, -3.0, -1.0]);
    let mean_w = y(Case {
        op: "NegativeLogLikelihoodLoss",
        x: x(),
        inputs: vec!["x", "t", "w"],
        inits: vec![
            ints("t", &[2], &[2, 0]),
            floats("w", &[3], &[0.5, 2.0, 1.5]),
        ],
        attrs: vec![],
        outs: vec![("y", &[])],
        then: vec![],
    });
    assert_eq!(mean_w, vec![1.5625]);
    let sum = y(Case {
        op: "NegativeLogLikelihoodLoss",
        x: x(),
        inputs: vec!["x", "t"],
        inits: vec![ints("t", &[2], &[2, 0])],
        attrs: vec![attr_str("reduction", "sum")],
        outs: vec![("y", &[])],
        then: vec![],
    });
    assert_eq!(sum, vec![2.25]);
    let none_ii = y(Case {
        op: "NegativeLogLikelihoodLoss",
        x: x(),
        inputs: vec!["x", "t"],
        inits: vec![ints("t", &[2], &[2, 1])],
        attrs: vec![attr_str("reduction", "none"), attr_int("ignore_index", 1)],
        outs: vec![("y", &[2])],
        then: vec![],
    });
    assert_eq!(none_ii, vec![2.0, 0.0]);
    let mean_ii = y(Case {
        op: "NegativeLogLikelihoodLoss",
        x: x(),
        inputs: vec!["x", "t"],
        inits: vec![ints("t", &[2], &[2, 1])],
        attrs: vec![attr_int("ignore_index", 1)],
        outs: vec![("y", &[])],
        then: vec![],
    });
    assert_eq!(mean_ii, vec![2.0]);
    // [N, C, d1]: the target picks along the class axis at each position.
    let mean_3d = y(Case {
        op: "NegativeLogLikelihoodLoss",
        x: (&[1, 3, 2], vec![1.0, 2.0, 0.5, -1.0, 3.0, 0.0]),
        inputs: vec!["x", "t"],
        inits: vec![ints("t", &[1, 2], &[0, 2])],
        attrs: vec![],
        outs: vec![("y", &[])],
        then: vec![],
    });
    assert_eq!(mean_3d, vec![-0.5]);
}

#[test]
fn softmax_cross_entropy_with_log_prob_and_ignore_index() {
    let got = run_case(Case {
        op: "SoftmaxCrossEntropyLoss",
        x: (
            &[3, 4],
            vec![1.0, 2.0, 0.5, -1.0, 0.0, 0.0, 3.0, 1.0, 2.0, -2.0, 1.0, 1.0],
        ),
        inputs: vec!["x", "t"],
        inits: vec![ints("t", &[3], &[1, 2, -1])],
        attrs: vec![attr_int("ignore_index", -1)],
        outs: vec![("y", &[]), ("lp", &[3, 4])],
        then: vec![],
    });
    let want_lp = [
        -1.495_181_9,
        -0.495_181_86,
        -1.995_181_8,
        -3.495_181_8,
        -3.210_997_6,
        -3.210_997_6,
        -0.210_997_61,
        -2.210_997_6,
        -0.561_941_4,
        -4.561_941,
        -1.561_941_4,
        -1.561_941_4,
    ];
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-6 + 1e-5 * b.abs();
    for (g, w) in got["lp"].iter().zip(want_lp) {
        assert!(close(*g, w), "log_prob {g} vs {w}");
    }
    assert!(close(got["y"][0], 0.353_089_75), "{:?}", got["y"]);
}

#[test]
fn argmax_indices_feed_a_run_time_gather() {
    // ArgMax over rows (the last of equal maxima), then those indices pick
    // rows of a constant table: ArgMax's index64 result as Gather's indices.
    let got = y(Case {
        op: "ArgMax",
        x: (
            &[3, 3],
            vec![0.0, 5.0, 5.0, 9.0, 1.0, 2.0, -1.0, -3.0, -0.5],
        ),
        inputs: vec!["x"],
        inits: vec![floats(
            "table",
            &[3, 2],
            &[0.0, 1.0, 10.0, 11.0, 20.0, 21.0],
        )],
        attrs: vec![
            attr_int("axis", 1),
            attr_int("keepdims", 0),
            attr_int("select_last_index", 1),
        ],
        outs: vec![("y", &[3, 2])],
        then: vec![NodeProto {
            input: vec!["table".into(), "mid".into()],
            output: vec!["y".into()],
            name: "g".into(),
            op_type: "Gather".into(),
            ..Default::default()
        }],
    });
    // Row maxima at 2, 0 and 2.
    assert_eq!(got, vec![20.0, 21.0, 0.0, 1.0, 20.0, 21.0]);
}

/// The import error of a one-node model over `x` (dims `[2, 3]`).
fn import_error(
    op: &str,
    inputs: &[&str],
    inits: Vec<TensorProto>,
    attrs: Vec<AttributeProto>,
) -> String {
    let n = NodeProto {
        name: "n".into(),
        ..node(op, inputs, &["y"], attrs)
    };
    import_err(&model(
        vec![n],
        &[float("x", &[2, 3])],
        &[float("y", &[2, 3])],
        inits,
        18,
    ))
}

#[test]
fn bad_index_nodes_are_clear_errors() {
    let e = import_error(
        "ScatterElements",
        &["x", "i", "x"],
        vec![ints("i", &[2, 3], &[0; 6])],
        vec![attr_str("reduction", "mean")],
    );
    assert!(
        e.contains("node `n`") && e.contains("unsupported: reduction `mean`"),
        "{e}"
    );
    let e = import_error(
        "GatherElements",
        &["x", "i"],
        vec![ints("i", &[2, 4], &[0; 8])],
        vec![],
    );
    assert!(
        e.contains("do not fit data of shape [2, 3] outside axis 0"),
        "{e}"
    );
    let e = import_error(
        "GatherND",
        &["x", "i"],
        vec![ints("i", &[1, 3], &[0; 3])],
        vec![],
    );
    assert!(e.contains("do not index data of shape [2, 3]"), "{e}");
    // Float indices are not integers; a run-time depth has no static shape.
    let e = import_error("GatherElements", &["x", "x"], vec![], vec![]);
    assert!(
        e.contains("unsupported: indices `x` of element type float"),
        "{e}"
    );
    let e = import_error(
        "OneHot",
        &["i", "x", "v"],
        vec![ints("i", &[2], &[0, 1]), floats("v", &[2], &[0.0, 1.0])],
        vec![],
    );
    assert!(e.contains("input `x` must be a constant"), "{e}");
    let e = import_error(
        "NegativeLogLikelihoodLoss",
        &["x", "t"],
        vec![ints("t", &[3], &[0; 3])],
        vec![],
    );
    assert!(e.contains("target of shape [3] where [2] is needed"), "{e}");
}

#[test]
fn a_loss_of_a_rank_1_input_is_an_error() {
    // Found by the onnx fuzz target: the class axis was indexed before the
    // rank was checked.
    let n = node(
        "NegativeLogLikelihoodLoss",
        &["x", "t"],
        &["y"],
        vec![attr_str("reduction", "none")],
    );
    let e = import_err(&model(
        vec![n],
        &[
            float("x", &[3]),
            ("t", glow_import::onnx::dtype::INT64, &[]),
        ],
        &[float("y", &[])],
        vec![],
        18,
    ));
    assert!(e.contains("input of shape [3] (at least 2-D"), "{e}");
}
