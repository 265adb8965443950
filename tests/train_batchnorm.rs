//! The training step of a convolution, a batch normalization (training
//! mode: the batch's own statistics), a relu and a fully connected layer,
//! as `differentiate{lr=0}` builds it: every parameter gradient against
//! central differences of the step's own loss (with `lr=0` the step leaves
//! the parameters as they are, and the running statistics it updates do
//! not enter the loss), in both layouts (NCHW puts the channel in the
//! middle, so the statistics go through a transpose). Glow's error
//! `min(|a - n|, |a - n| / |a + n + 1|)`, at most 1e-3.

use glow_backend::run::{self, RunOptions};
use glow_ir::Module;
use std::collections::BTreeMap;

/// The inference program; NHWC and NCHW hold the same numbers (one input
/// channel), only the convolution's output is laid out differently. No
/// normalized value is within 0.03 of the relu's kink, so no difference
/// quotient straddles it.
fn program(nchw: bool) -> String {
    let (xty, fty, cty, layout, ch) = if nchw {
        ("2 x 1 x 3 x 3", "2 x 1 x 2 x 2", "2 x 2 x 2 x 2", "NCHW", 1)
    } else {
        ("2 x 3 x 3 x 1", "2 x 2 x 2 x 1", "2 x 2 x 2 x 2", "NHWC", 3)
    };
    format!(
        "function f
declare {{
  %x = WeightVar float<{xty}> mutable {{ Data: [1, 2, 0, -1, 3, 1, 2, 0, -2, 0, 1, 2, 3, -1, 1, 2, 2, -3] }}
  %labels = WeightVar index64<2> mutable {{ Data: [0, 2] }}
  %filter = WeightVar float<{fty}> const {{ Data: [0.5, -0.25, 1, 0.75, -0.5, 1, 0.25, 0.5] }}
  %cbias = WeightVar float<2> const {{ Data: [0.1, -0.2] }}
  %scale = WeightVar float<2> const {{ Data: [1.5, 0.5] }}
  %shift = WeightVar float<2> const {{ Data: [0.25, -0.3] }}
  %mean = WeightVar float<2> const {{ Data: [0, 0] }}
  %var = WeightVar float<2> const {{ Data: [1, 1] }}
  %w = WeightVar float<8 x 3> const {{ Data: [0.1, -0.2, 0.3, 0.4, 0.5, -0.6, -0.7, 0.8, 0.9, 0.2, -0.1, 0.05, 0.3, 0.6, -0.4, -0.3, 0.2, 0.1, 0.5, -0.5, 0.25, 0.7, 0.1, -0.2] }}
  %b = WeightVar float<3> const {{ Data: [0, 0.1, -0.1] }}
  %logits = WeightVar float<2 x 3> mutable
}}

code {{
  %c = allocactivation {{ Ty: float<{cty}> }}
  %conv = convolution @out %c, @in %x, @in %filter, @in %cbias {{ Kernels: [2, 2], Layout: {layout} }}
  %n = allocactivation {{ Ty: float<{cty}> }}
  %bn = batchnormalization @out %n, @in %c, @in %scale, @in %shift, @in %mean, @in %var {{ ChannelIdx: {ch}, Epsilon: 0.001, Momentum: 0.75 }}
  %r = allocactivation {{ Ty: float<{cty}> }}
  %relu = relu @out %r, @in %n
  %rv = tensorview @in %r {{ Ty: float<2 x 8>, Offsets: [0, 0, 0, 0] }}
  %fc = fullyconnected @out %logits, @in %rv, @in %w, @in %b
  %c.d = deallocactivation @out %c
  %n.d = deallocactivation @out %n
  %r.d = deallocactivation @out %r
}}
"
    )
}

fn floats(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The step's outputs by name, with the weights in `given` replaced.
fn step(f: &glow_ir::Function, given: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let opts = RunOptions::interpreter(1);
    let weights = run::resolve_weights(f, given, &opts).expect("weights");
    let out = run::run(f, &weights, &opts).expect("the step runs");
    out.tensors.into_iter().map(|t| (t.name, t.data)).collect()
}

fn check(nchw: bool) {
    let text = program(nchw);
    let mut m: Module = glow_ir::parser::parse(text.as_bytes()).expect("parses");
    let registry = glow_passes::PassRegistry::builtin();
    let pipeline = glow_passes::cli::PipelineArgs {
        passes: vec!["differentiate{lr=0}".into()],
        ..Default::default()
    }
    .pipeline(&registry)
    .expect("pipeline");
    glow_passes::run_pipeline(&mut m, &pipeline).expect("differentiate");
    let f = &m.functions[0];
    let base = step(f, &BTreeMap::new());
    let delta = 1.0f32 / 128.0;
    let mut worst = 0f64;
    for p in ["filter", "cbias", "scale", "shift", "w", "b"] {
        let grad = floats(&base[&format!("{p}.grad")]);
        // With lr 0 the step wrote the parameter back unchanged.
        let value = floats(&base[p]);
        for (k, &g) in grad.iter().enumerate() {
            let mut losses = Vec::new();
            let (hi, lo) = (value[k] + delta, value[k] - delta);
            for v in [hi, lo] {
                let mut moved = value.clone();
                moved[k] = v;
                let given = BTreeMap::from([(p.to_string(), bytes(&moved))]);
                losses.push(floats(&step(f, &given)["loss"])[0] as f64);
            }
            let numeric = (losses[0] - losses[1]) / (hi as f64 - lo as f64);
            let d = (g as f64 - numeric).abs();
            let e = d.min(d / (g as f64 + numeric + 1.0).abs());
            assert!(
                e <= 1e-3,
                "{p}.grad[{k}]: analytic {g}, numeric {numeric} (error {e})"
            );
            worst = worst.max(e);
        }
    }
    eprintln!(
        "{}: worst error {worst:.2e}",
        if nchw { "NCHW" } else { "NHWC" }
    );
}

#[test]
fn batchnorm_step_gradients_match_central_differences_nhwc() {
    check(false);
}

#[test]
fn batchnorm_step_gradients_match_central_differences_nchw() {
    check(true);
}
