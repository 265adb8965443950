//! What the import tests share: ONNX models built by hand, and runs of an
//! imported function on both engines that must agree byte for byte.

// Each test crate uses its own subset.
#![allow(dead_code)]

use glow_backend::run::{resolve_weights, run, Engine, Outputs, RunOptions};
use glow_backend::CcOptions;
use glow_import::onnx::{
    dtype, AttributeProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto, TensorProto,
    ValueInfoProto,
};
use glow_import::{import_model, Imported, Options};
use prost::Message;
use std::collections::BTreeMap;

/// A graph input or output: name, ONNX element type, dims.
pub type Edge<'a> = (&'a str, i32, &'a [i64]);

/// A float graph input or output.
pub fn float<'a>(name: &'a str, dims: &'a [i64]) -> Edge<'a> {
    (name, dtype::FLOAT, dims)
}

/// A node named after its first output.
pub fn node(op: &str, inputs: &[&str], outputs: &[&str], attrs: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: outputs.iter().map(|s| s.to_string()).collect(),
        name: outputs.first().map_or(String::new(), |s| s.to_string()),
        op_type: op.into(),
        attribute: attrs,
        ..Default::default()
    }
}

pub fn attr_int(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 2,
        i,
        ..Default::default()
    }
}

pub fn attr_str(name: &str, s: &str) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 3,
        s: s.as_bytes().to_vec(),
        ..Default::default()
    }
}

pub fn attr_float(name: &str, f: f32) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 1,
        f,
        ..Default::default()
    }
}

pub fn attr_ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 7,
        ints: v.to_vec(),
        ..Default::default()
    }
}

/// An int64 initializer.
pub fn int64s(name: &str, dims: &[i64], v: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: dtype::INT64,
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

/// A float initializer.
pub fn floats(name: &str, dims: &[i64], v: &[f32]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: dtype::FLOAT,
        float_data: v.to_vec(),
        ..Default::default()
    }
}

/// The encoded model of one graph at `opset` of the default domain.
pub fn model(
    nodes: Vec<NodeProto>,
    inputs: &[Edge],
    outputs: &[Edge],
    inits: Vec<TensorProto>,
    opset: i64,
) -> Vec<u8> {
    ModelProto {
        ir_version: 8,
        opset_import: vec![OperatorSetIdProto {
            domain: String::new(),
            version: opset,
        }],
        graph: Some(GraphProto {
            name: "g".into(),
            node: nodes,
            initializer: inits,
            input: inputs
                .iter()
                .map(|(n, e, d)| ValueInfoProto::tensor(n, *e, d))
                .collect(),
            output: outputs
                .iter()
                .map(|(n, e, d)| ValueInfoProto::tensor(n, *e, d))
                .collect(),
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

pub fn import(bytes: &[u8]) -> Imported {
    import_model(bytes, &Options::default()).unwrap_or_else(|e| panic!("import: {e}"))
}

/// The import error's text; importing must fail.
pub fn import_err(bytes: &[u8]) -> String {
    match import_model(bytes, &Options::default()) {
        Ok(i) => panic!("imported:\n{}", i.gir_text()),
        Err(e) => e.to_string(),
    }
}

pub fn have_cc() -> bool {
    glow_backend::CcOptions::new(Some("cc"), "").found()
}

/// Runs `imported` on the interpreter and, when `cc` is installed, the C
/// engine, which must agree byte for byte on every output; `inputs` are the
/// graph inputs' bytes by name (the importer's weights are added).
pub fn run_both(imported: &Imported, inputs: &[(&str, Vec<u8>)]) -> Outputs {
    let interp = run_on(imported, inputs, Engine::Interp);
    if have_cc() {
        let c = run_on(imported, inputs, Engine::C);
        for (a, b) in interp.tensors.iter().zip(&c.tensors) {
            assert_eq!(a.name, b.name);
            assert_eq!(a.data, b.data, "engines differ on `{}`", a.name);
        }
    }
    interp
}

/// Runs `imported` on `engine`; `inputs` are the graph inputs' bytes by
/// name (the importer's weights are added).
pub fn run_on(imported: &Imported, inputs: &[(&str, Vec<u8>)], engine: Engine) -> Outputs {
    let f = &imported.function;
    let mut given: BTreeMap<String, Vec<u8>> = inputs
        .iter()
        .map(|(n, b)| (n.to_string(), b.clone()))
        .collect();
    for w in &imported.weights {
        given.insert(w.name.clone(), w.bytes.clone());
    }
    // Every constant comes from the model: none is filled from the seed.
    let opts = RunOptions {
        engine,
        cc: CcOptions::new(None, "-O1"),
        strict_constants: true,
        ..RunOptions::interpreter(1)
    };
    let weights = resolve_weights(f, &given, &opts).expect("weights");
    run(f, &weights, &opts).unwrap_or_else(|e| panic!("{engine:?} engine: {e:?}"))
}

/// The float output `name` of a run.
pub fn output_f32(outs: &Outputs, name: &str) -> Vec<f32> {
    let t = outs
        .tensors
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no output `{name}`"));
    f32s(&t.data)
}

pub fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

pub fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

pub fn iota(n: usize) -> Vec<f32> {
    (0..n).map(|i| i as f32).collect()
}
