//! The DLRM-style example (`examples/dlrm`) on both engines against the
//! numpy reference its generator wrote (`expected.npy`): the engines agree
//! bit for bit, and each is within a few ulps of numpy (whose matrix
//! products sum in another order). The C run is ignored without `cc`.

use glow_backend::run::{self, Engine, Outputs, RunOptions};
use glow_backend::{npy, CcOptions};
use std::collections::BTreeMap;
use std::path::PathBuf;

const INPUTS: &[&str] = &[
    "dense", "idx0", "len0", "idx1", "len1", "idx2", "off2", "w2",
];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/dlrm")
}

fn read_npy(name: &str) -> npy::Npy {
    let path = dir().join(format!("{name}.npy"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    npy::read(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn run_on(engine: Engine) -> Outputs {
    let path = dir().join("dlrm.gir");
    let text = std::fs::read_to_string(&path).expect("examples/dlrm/dlrm.gir");
    let m = glow_ir::parser::parse(text.as_bytes()).expect("parses");
    let diags = glow_ir::verifier::verify_module(&m);
    assert!(diags.is_empty(), "{diags:?}");
    let f = &m.functions[0];
    let mut given = BTreeMap::new();
    for &name in INPUTS {
        let ty = &f.weights.iter().find(|w| w.name == name).expect("input").ty;
        let bytes = npy::expect(&read_npy(name), ty).unwrap_or_else(|e| panic!("{name}: {e}"));
        given.insert(name.to_string(), bytes);
    }
    let opts = RunOptions {
        engine,
        cc: CcOptions::new(Some("cc"), ""),
        seed: 1,
        strict_constants: true,
        repeat: None,
        build_dir: None,
        codegen: Default::default(),
    };
    let weights = run::resolve_weights(f, &given, &opts).expect("weights");
    run::run(f, &weights, &opts).expect("runs")
}

fn prob(out: &Outputs) -> Vec<f32> {
    let t = out
        .tensors
        .iter()
        .find(|t| t.name == "prob")
        .expect("%prob");
    t.data
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn expected() -> Vec<f32> {
    let e = read_npy("expected");
    assert_eq!(e.descr, "<f4");
    e.data
        .chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn assert_near_reference(got: &[f32]) {
    let want = expected();
    assert_eq!(got.len(), want.len());
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-6 + 1e-5 * w.abs(),
            "prob[{i}] = {g}, numpy gives {w}"
        );
    }
}

#[test]
fn interpreter_matches_the_numpy_reference() {
    assert_near_reference(&prob(&run_on(Engine::Interp)));
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_matches_the_interpreter_bit_for_bit() {
    let (c, i) = (prob(&run_on(Engine::C)), prob(&run_on(Engine::Interp)));
    assert_near_reference(&c);
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&c), bits(&i));
}
