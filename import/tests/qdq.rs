//! Quantized ONNX models (test/import/Inputs/qdq, built by its `make.py`):
//! each QDQ pattern the importer folds into one quantized instruction, the
//! per-axis and fallback forms, and QLinearConv/QLinearMatMul with constant
//! parameters. Each model is imported as `glow-import` does, checked for the
//! instructions its fold makes (and for the float ones it must not), run on
//! the interpreter and the C engine (which must agree byte for byte) and
//! compared with onnxruntime's output of the model as written (graph
//! optimizations off: float ops between QuantizeLinear and
//! DequantizeLinear): within one quantum everywhere, and equal on most
//! elements (the integer kernels round ties up where the float path rounds
//! to even, and requantize through integer multipliers).

mod common;

use common::{import, import_err, run_both};
use glow_backend::npy;
use glow_import::{import_model, Options};
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../test/import/Inputs/qdq")
}

fn read(name: &str) -> Vec<u8> {
    let p = dir().join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn npy_of(name: &str) -> npy::Npy {
    npy::read(&read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Element `i` of a uint8 or int8 tensor.
fn int_at(descr: &str, data: &[u8], i: usize) -> i64 {
    if descr.contains("i1") {
        data[i] as i8 as i64
    } else {
        data[i] as i64
    }
}

/// Imports `NAME.onnx`, checks that its text has every `want` and no
/// `unwanted` opcode, runs it on `NAME.x.npy` (and `NAME.x2.npy`) and
/// compares output `y` with `NAME.y.npy`.
fn case(name: &str, want: &[&str], unwanted: &[&str]) {
    let imported = import(&read(&format!("{name}.onnx")));
    let text = imported.gir_text();
    for w in want {
        assert!(
            text.contains(&format!("= {w} @")),
            "{name}: no `{w}` in\n{text}"
        );
    }
    for u in unwanted {
        assert!(
            !text.contains(&format!("= {u} @")),
            "{name}: `{u}` in\n{text}"
        );
    }
    let mut inputs = vec![("x", npy_of(&format!("{name}.x.npy")).data)];
    if dir().join(format!("{name}.x2.npy")).exists() {
        inputs.push(("x2", npy_of(&format!("{name}.x2.npy")).data));
    }
    let outs = run_both(&imported, &inputs);
    let got = outs
        .tensors
        .iter()
        .find(|t| t.name == "y")
        .expect("output y");
    let want = npy_of(&format!("{name}.y.npy"));
    assert_eq!(got.data.len(), want.data.len(), "{name}: sizes");
    let n = want.data.len();
    let mut exact = 0;
    for i in 0..n {
        let (g, w) = (
            int_at(&want.descr, &got.data, i),
            int_at(&want.descr, &want.data, i),
        );
        assert!(
            (g - w).abs() <= 1,
            "{name}: element {i} is {g}, onnxruntime gives {w}"
        );
        exact += (g == w) as usize;
    }
    assert!(
        exact * 10 >= n * 9,
        "{name}: only {exact} of {n} elements equal onnxruntime's"
    );
}

#[test]
fn conv_per_channel_is_channelwise() {
    case(
        "conv-perchannel",
        &["quantize", "channelwisequantizedconvolution"],
        &["convolution", "dequantize"],
    );
}

#[test]
fn conv_per_tensor_is_a_quantized_convolution() {
    case(
        "conv-pertensor",
        &["convolution"],
        &["channelwisequantizedconvolution", "dequantize"],
    );
}

#[test]
fn conv_depthwise_dilated() {
    case(
        "conv-depthwise",
        &["channelwisequantizedconvolution"],
        &["dequantize"],
    );
}

#[test]
fn conv_1d() {
    case("conv-1d", &["convolution"], &["dequantize"]);
}

#[test]
fn gemm_per_column_weights_are_a_1x1_channelwise_convolution() {
    case(
        "gemm-perchannel",
        &["channelwisequantizedconvolution"],
        &["fullyconnected", "dequantize"],
    );
}

#[test]
fn gemm_per_tensor_is_fullyconnected() {
    case("gemm-pertensor", &["fullyconnected"], &["dequantize"]);
}

#[test]
fn matmul_with_constant_weights() {
    case(
        "matmul-const",
        &["channelwisequantizedconvolution"],
        &["dequantize", "batchmatmul"],
    );
}

#[test]
fn matmul_of_two_activations() {
    case("matmul-acts", &["matmul"], &["dequantize"]);
}

#[test]
fn add_of_a_convolution_and_an_input() {
    case(
        "add-conv",
        &["channelwisequantizedconvolution", "elementadd"],
        &["dequantize"],
    );
}

#[test]
fn pools() {
    case("maxpool", &["maxpool"], &["dequantize"]);
    case("avgpool", &["avgpool"], &["dequantize"]);
    case("globalavgpool", &["avgpool"], &["dequantize"]);
}

#[test]
fn data_movement_keeps_quantized_elements() {
    case(
        "movement",
        &["transpose", "rescalequantized"],
        &["dequantize"],
    );
}

#[test]
fn relu_and_clip() {
    case("relu-clip", &["relu", "clip"], &["dequantize"]);
}

#[test]
fn concat_rescales_the_input_of_other_parameters() {
    case(
        "concat",
        &["rescalequantized", "inserttensor"],
        &["dequantize"],
    );
}

#[test]
fn an_op_without_a_quantized_form_stays_float() {
    case(
        "softmax-fallback",
        &["dequantize", "softmax", "quantize"],
        &[],
    );
}

/// Other functions of one 8-bit value become tables too.
#[test]
fn unary_functions_become_lookup_tables() {
    for (name, float_op) in [
        ("exp-lookup", "elementexp"),
        ("log-lookup", "elementlog"),
        ("sqrt-lookup", "elementsqrt"),
        ("softplus-lookup", "softplus"),
    ] {
        case(name, &["intlookuptable"], &["dequantize", float_op]);
    }
}

/// Max and Min of two dequantized activations: the quantized instruction
/// (each side rescaled to the result's parameters).
#[test]
fn max_min_fold_into_quantized_instructions() {
    case("max-binary", &["elementmax"], &["dequantize"]);
    case("min-binary", &["elementmin"], &["dequantize"]);
}

#[test]
fn sigmoid_becomes_a_lookup_table() {
    case(
        "sigmoid-lookup",
        &["intlookuptable"],
        &["dequantize", "sigmoid"],
    );
}

#[test]
fn per_axis_quantization_of_an_activation() {
    // One per-axis `quantize` (Scales and Offsets operands), not float ops.
    case(
        "per-axis-activation",
        &["quantize"],
        &["elementround", "elementdiv", "convertto"],
    );
    // After a convolution the activation is channels-last: Axis follows
    // the channels to the last physical dimension.
    case(
        "per-axis-channels-last",
        &["quantize", "dequantize"],
        &["elementround", "elementdiv"],
    );
    let text = import(&read("per-axis-channels-last.onnx")).gir_text();
    assert!(text.contains("{ Axis: 3 }"), "{text}");
}

#[test]
fn qlinear_ops_with_constant_parameters() {
    case(
        "qlinearconv-const",
        &["channelwisequantizedconvolution"],
        &["dequantize"],
    );
    case("qlinearmatmul-const", &["fullyconnected"], &["dequantize"]);
}

/// The weights file holds the integer weights; the channel-wise parameters
/// stay inline (the engines derive their multipliers when compiling).
#[test]
fn weights_file_keeps_channelwise_parameters_inline() {
    let opts = Options::default();
    assert!(!opts.inline_weights);
    let imported = import_model(&read("conv-perchannel.onnx"), &opts).expect("import");
    let text = imported.gir_text();
    let w = imported
        .weights
        .iter()
        .find(|w| w.ty.elem.base_name() == "i8")
        .expect("an i8 filter in the weights file");
    assert_eq!(w.bytes.len(), 4 * 3 * 3 * 3);
    for line in text
        .lines()
        .filter(|l| l.contains(".scales =") || l.contains(".offsets ="))
    {
        assert!(line.contains("Data:"), "not inline: {line}");
    }
}

/// Bytes for a test input: the first `hot` all 255 (the largest
/// products, so an unchunked float sum passes 2^24 and rounds), then a
/// seeded sequence.
fn bytes(n: usize, hot: usize, seed: u64) -> Vec<u8> {
    let mut z = seed;
    (0..n)
        .map(|i| {
            z = z
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if i < hot {
                255
            } else {
                (z >> 33) as u8
            }
        })
        .collect()
}

fn int32s(data: &[u8]) -> Vec<i64> {
    data.chunks(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as i64)
        .collect()
}

/// A run-time ConvInteger and MatMulInteger with more products per output
/// than float sums exactly (576 and 600, beyond 258) are summed in exact
/// chunks: both engines give the integer sums, bit for bit.
#[test]
fn large_integer_products_sum_exactly_in_chunks() {
    use common::{model, node};
    use glow_import::onnx::dtype;
    let m = model(
        vec![node("ConvInteger", &["x", "w"], &["y"], vec![])],
        &[
            ("x", dtype::UINT8, &[1, 64, 5, 5]),
            ("w", dtype::UINT8, &[2, 64, 3, 3]),
        ],
        &[("y", dtype::INT32, &[1, 2, 3, 3])],
        vec![],
        10,
    );
    let imported = import(&m);
    let (x, w) = (
        bytes(64 * 25, 32 * 25, 1),
        bytes(2 * 64 * 9, 64 * 9 + 32 * 9, 2),
    );
    let outs = run_both(&imported, &[("x", x.clone()), ("w", w.clone())]);
    let got = int32s(&outs.tensors.iter().find(|t| t.name == "y").expect("y").data);
    let mut want = Vec::new();
    for o in 0..2 {
        for i in 0..3 {
            for j in 0..3 {
                let mut acc = 0i64;
                for c in 0..64 {
                    for a in 0..3 {
                        for b in 0..3 {
                            let xv = x[(c * 5 + i + a) * 5 + j + b] as i64;
                            acc += xv * w[((o * 64 + c) * 3 + a) * 3 + b] as i64;
                        }
                    }
                }
                want.push(acc);
            }
        }
    }
    assert!(want.iter().any(|&v| v > 1 << 24), "{want:?}");
    assert_eq!(got, want);

    let m = model(
        vec![node("MatMulInteger", &["x", "w"], &["y"], vec![])],
        &[
            ("x", dtype::UINT8, &[3, 600]),
            ("w", dtype::UINT8, &[600, 4]),
        ],
        &[("y", dtype::INT32, &[3, 4])],
        vec![],
        10,
    );
    let imported = import(&m);
    let (x, w) = (bytes(3 * 600, 600, 3), bytes(600 * 4, 1200, 4));
    let outs = run_both(&imported, &[("x", x.clone()), ("w", w.clone())]);
    let got = int32s(&outs.tensors.iter().find(|t| t.name == "y").expect("y").data);
    let want: Vec<i64> = (0..3)
        .flat_map(|r| {
            let (x, w) = (&x, &w);
            (0..4).map(move |col| {
                (0..600)
                    .map(|k| x[r * 600 + k] as i64 * w[k * 4 + col] as i64)
                    .sum::<i64>()
            })
        })
        .collect();
    assert!(want.iter().any(|&v| v > 1 << 24), "{want:?}");
    assert_eq!(got, want);
}

/// Chunks of input channels need one group: a grouped ConvInteger with too
/// many products per output is refused, saying why.
#[test]
fn large_grouped_integer_convolutions_are_refused() {
    use common::{attr_int, model, node};
    use glow_import::onnx::dtype;
    let m = model(
        vec![node(
            "ConvInteger",
            &["x", "w"],
            &["y"],
            vec![attr_int("group", 2)],
        )],
        &[
            ("x", dtype::UINT8, &[1, 128, 5, 5]),
            ("w", dtype::UINT8, &[2, 64, 3, 3]),
        ],
        &[("y", dtype::INT32, &[1, 2, 3, 3])],
        vec![],
        10,
    );
    let e = import_err(&m);
    assert!(e.contains("576 products per output in 2 groups"), "{e}");
}
