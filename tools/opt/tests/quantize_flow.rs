//! The profile-guided flow end to end in Rust: profile a small float CNN on
//! calibration inputs, quantize it with each schema, and check that the
//! quantized program's outputs on other inputs stay close to the float ones.

use glow_backend::run::{self, RunOptions};
use glow_opt_driver::profile::{self, Sample};
use glow_passes::profile as prof;
use glow_passes::{Instrumentation, PassManager, PassOptions, Pipeline, Step};
use std::collections::BTreeMap;

const NET: &str = include_str!("../../../test/passes/quantize/conv-net.gir");

fn sample(seed: u32) -> Vec<u8> {
    // 16 values in [-1, 1] from a small LCG.
    let mut s = seed.wrapping_mul(2654435761).wrapping_add(12345);
    (0..16)
        .flat_map(|_| {
            s = s.wrapping_mul(1103515245).wrapping_add(12345);
            let x = ((s >> 8) as f32 / (1u32 << 24) as f32) * 2.0 - 1.0;
            x.to_le_bytes()
        })
        .collect()
}

fn outputs(f: &glow_ir::Function, input: &[u8]) -> Vec<f32> {
    let opts = RunOptions::interpreter(1);
    let mut given = BTreeMap::new();
    given.insert("x".to_string(), input.to_vec());
    let w = run::resolve_weights(f, &given, &opts).expect("weights");
    let out = run::run(f, &w, &opts).expect("runs");
    let y = out.tensors.iter().find(|t| t.name == "y").expect("%y");
    y.data
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

#[test]
fn quantized_net_stays_close_to_float() {
    let module = glow_ir::parser::parse(NET.as_bytes()).expect("parses");
    let f = &module.functions[0];
    let opts = RunOptions::interpreter(1);
    let base = run::resolve_weights(f, &BTreeMap::new(), &opts).expect("weights");
    let samples: Vec<Sample> = (0..32)
        .map(|k| [("x".to_string(), sample(k))].into_iter().collect())
        .collect();
    let p = profile::collect(f, &base, &samples, 2000).expect("profiles");
    assert_eq!(p.samples, 32);
    assert!(p.get("c").is_some() && p.get("x").is_some());
    // The file format round-trips.
    let text = prof::write(&p);
    assert_eq!(prof::parse(&text).expect("parses back"), p);
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("p.yaml");
    std::fs::write(&path, text).expect("writes");
    for schema in [
        "asymmetric",
        "symmetric",
        "symmetric_with_uint8",
        "symmetric_with_power2_scale",
    ] {
        for (calibration, channelwise) in [("none", "false"), ("KL", "true")] {
            let mut options = PassOptions::default();
            for (k, v) in [
                ("profile", path.to_str().expect("utf-8")),
                ("schema", schema),
                ("calibration", calibration),
                ("channelwise", channelwise),
            ] {
                options.values.insert(k.into(), v.into());
            }
            let pipeline = Pipeline {
                steps: vec![Step {
                    pass: &glow_passes::info::QUANTIZE,
                    options,
                }],
            };
            let mut m = module.clone();
            let mut pm = PassManager::new(pipeline, Instrumentation::default());
            pm.run(&mut m)
                .unwrap_or_else(|e| panic!("{schema}: {:?}", e.diagnostics));
            let q = &m.functions[0];
            let text = glow_ir::printer::print_function(q, Default::default());
            assert!(text.contains("quantize @out"), "{text}");
            let mut worst = 0f32;
            for k in 0..16 {
                let x = sample(k);
                let a = outputs(f, &x);
                let b = outputs(q, &x);
                for (u, v) in a.iter().zip(&b) {
                    worst = worst.max((u - v).abs());
                }
            }
            // Softmax probabilities on the calibration inputs: within 0.02 of
            // the float ones with the profiled ranges. KL narrows the ranges
            // (here from a sparse 32-sample histogram) and saturates the
            // tails by design, so it is only held to a loose bound.
            let bound = if calibration == "none" { 0.02 } else { 0.35 };
            assert!(
                worst < bound,
                "{schema}/{calibration}: max difference {worst}"
            );
        }
    }
}
