//! GradCheck, after Glow's tests/unittests/GradCheckTest.cpp: each gradient
//! instruction on several shapes against central differences of its
//! forward computation, with Glow's error `min(|a - n|, |a - n| / |a + n + 1|)`.
//! One program per case holds the analytic gradient and every perturbed
//! forward run (the copies stacked along a new first axis), so the C
//! compiler runs once per case. Each test runs on the interpreter; its
//! `_on_c` twin runs it on the C engine too and demands the two bit-identical
//! (ignored, with the reason, without `cc`). Last, two `sgd` steps against a
//! hand computation.

use glow_backend::run::{self, Engine, Outputs, RunOptions};
use glow_backend::CcOptions;
use std::collections::BTreeMap;

thread_local! {
    /// Set by the `_on_c` twins: `run_both` also runs the C engine.
    static WITH_C: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs a test with the C engine beside the interpreter.
fn with_c(test: fn()) {
    WITH_C.with(|c| c.set(true));
    test();
}

/// Runs `text` with the mutable inputs `given` on the interpreter and, in
/// an `_on_c` test, on the C engine, asserting every output bit-identical;
/// returns the interpreter's outputs by name.
fn run_both(text: &str, given: &BTreeMap<String, Vec<u8>>) -> BTreeMap<String, Vec<u8>> {
    let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    let diags = glow_ir::verifier::verify_module(&m);
    assert!(
        diags.is_empty(),
        "{}",
        glow_ir::diag::render_all(&diags, "gradcheck", text.as_bytes())
    );
    let f = &m.functions[0];
    let mut opts = RunOptions::interpreter(1);
    opts.cc = CcOptions::new(Some("cc"), "-O2 -Wall -Wextra -Werror");
    let weights = run::resolve_weights(f, given, &opts).expect("weights");
    let interp = run::run(f, &weights, &opts).expect("interpreter runs");
    if WITH_C.with(|c| c.get()) {
        opts.engine = Engine::C;
        let c = run::run(f, &weights, &opts).unwrap_or_else(|e| panic!("C engine: {e:?}"));
        assert_bits(&interp, &c);
    }
    interp
        .tensors
        .into_iter()
        .map(|t| (t.name, t.data))
        .collect()
}

/// Every output tensor has the same bytes on both engines.
fn assert_bits(a: &Outputs, b: &Outputs) {
    assert_eq!(a.tensors.len(), b.tensors.len());
    for (x, y) in a.tensors.iter().zip(&b.tensors) {
        assert_eq!(x.name, y.name);
        assert!(x.data == y.data, "engines differ on %{}", x.name);
    }
}

fn bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn floats(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn ints(kind: &str, v: &[i64]) -> Vec<u8> {
    match kind {
        "index32" => v.iter().flat_map(|&x| (x as i32).to_le_bytes()).collect(),
        _ => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// splitmix64 uniform floats in `[lo, hi)`.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u64 << 24) as f32)
    }
}

/// Glow's `gradDiff`: absolute or relative error, the smaller.
fn grad_diff(a: f64, n: f64) -> f64 {
    let d = (a - n).abs();
    d.min(d / (a + n + 1.0).abs())
}

fn dims_text(d: &[u64]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" x ")
}

/// `2 * len + 1` copies of `x`: the first as is, then `x_i + delta` and
/// `x_i - delta` for each i; also the perturbed values as f32 holds them.
fn stacked(x: &[f32], delta: f32) -> (Vec<f32>, Vec<(f64, f64)>) {
    let mut out = x.to_vec();
    let mut steps = Vec::new();
    for i in 0..x.len() {
        let (p, m) = (x[i] + delta, x[i] - delta);
        for v in [p, m] {
            let mut c = x.to_vec();
            c[i] = v;
            out.extend(c);
        }
        steps.push((p as f64, m as f64));
    }
    (out, steps)
}

/// Compares the analytic gradient with `(L(x + d) - L(x - d)) / (x+ - x-)`
/// over the f32 perturbed values; returns the largest error. Some numeric
/// gradient must be nonzero (else the instruction was not exercised).
fn compare(what: &str, analytic: &[f32], losses: &[f64], steps: &[(f64, f64)]) -> f64 {
    assert_eq!(analytic.len(), steps.len(), "{what}");
    assert_eq!(losses.len(), 2 * steps.len() + 1, "{what}");
    let mut worst = 0f64;
    let mut nonzero = false;
    for (i, &(p, m)) in steps.iter().enumerate() {
        let numeric = (losses[2 * i + 1] - losses[2 * i + 2]) / (p - m);
        nonzero |= numeric != 0.0;
        let e = grad_diff(analytic[i] as f64, numeric);
        assert!(
            e.is_finite(),
            "{what}: element {i}: analytic {} numeric {numeric}",
            analytic[i]
        );
        worst = worst.max(e);
    }
    assert!(nonzero, "{what}: every numeric gradient is zero");
    eprintln!("{what}: largest error {worst:.3e}");
    worst
}

/// The loss `sum y * r` of each stacked copy of `y` (`r`'s length each).
fn dot_losses(ys: &[f32], r: &[f32]) -> Vec<f64> {
    ys.chunks(r.len())
        .map(|y| y.iter().zip(r).map(|(&y, &r)| y as f64 * r as f64).sum())
        .collect()
}

const DELTA: f32 = 1.0 / 128.0;
/// Glow's GradCheck allows 0.01 or 0.001; these small programs stay under the stricter one.
const ALLOWED: f64 = 1e-3;

/// relu/sigmoid/tanh forward on the stacked copies, Glow's L2 loss
/// `sum 0.5 (y - t)^2` against a target, `DestGrad = y - t`, and the
/// gradient instruction on the unperturbed copy.
fn activation_case(fwd: &str, grad: &str, dims: &[u64], seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let n: u64 = dims.iter().product();
    let x: Vec<f32> = (0..n)
        .map(|_| loop {
            let v = rng.uniform(-2.0, 2.0);
            // Away from relu's kink, where the difference quotient straddles it.
            if v.abs() > 4.0 * DELTA {
                break v;
            }
        })
        .collect();
    let t: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let (xs, steps) = stacked(&x, DELTA);
    let k = 2 * n + 1;
    let ty = format!("float<{}>", dims_text(dims));
    let mut sdims = vec![k];
    sdims.extend(dims);
    let sty = format!("float<{}>", dims_text(&sdims));
    let zeros = vec!["0"; sdims.len()].join(", ");
    let text = format!(
        "function gc\ndeclare {{\n  %xs = WeightVar {sty} mutable\n  %ys = WeightVar {sty} mutable\n  %t = WeightVar {ty} mutable\n  %dg = WeightVar {ty} mutable\n  %sg = WeightVar {ty} mutable\n}}\n\ncode {{\n  %f = {fwd} @out %ys, @in %xs\n  %y0 = tensorview @in %ys {{ Ty: {ty}, Offsets: [{zeros}] }}\n  %d = elementsub @out %dg, @in %y0, @in %t\n  %g = {grad} @in %y0, @in %dg, @out %sg\n}}\n"
    );
    let given = BTreeMap::from([("xs".to_string(), bytes(&xs)), ("t".to_string(), bytes(&t))]);
    let out = run_both(&text, &given);
    let ys = floats(&out["ys"]);
    let losses: Vec<f64> = ys
        .chunks(n as usize)
        .map(|y| {
            y.iter()
                .zip(&t)
                .map(|(&y, &t)| 0.5 * (y as f64 - t as f64).powi(2))
                .sum()
        })
        .collect();
    compare(
        &format!("{grad} {ty}"),
        &floats(&out["sg"]),
        &losses,
        &steps,
    )
}

#[test]
fn activation_gradients_match_central_differences() {
    for (i, (fwd, grad)) in [
        ("relu", "relugrad"),
        ("sigmoid", "sigmoidgrad"),
        ("tanh", "tanhgrad"),
    ]
    .iter()
    .enumerate()
    {
        for (j, dims) in [&[5u64][..], &[2, 3], &[2, 3, 4]].iter().enumerate() {
            let e = activation_case(fwd, grad, dims, 10 * i as u64 + j as u64);
            assert!(e <= ALLOWED, "{grad} {dims:?}: error {e}");
        }
    }
}

/// `localresponsenormalization` on the stacked copies (it works per row of
/// the last dimension, so each copy is normalized alone), the loss
/// `sum y * r` for a fixed random `r` (so `DestGrad = r`), and the gradient
/// on the unperturbed copy's `Dest` and `Scale`. Alpha is large so the
/// window's cross terms matter, not only `DestGrad * Scale^-Beta`.
fn lrn_case(dims: &[u64], members: &str, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let n: u64 = dims.iter().product();
    let x: Vec<f32> = (0..n).map(|_| rng.uniform(-2.0, 2.0)).collect();
    let r: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let (xs, steps) = stacked(&x, DELTA);
    let k = 2 * n + 1;
    let ty = format!("float<{}>", dims_text(dims));
    let mut sdims = vec![k];
    sdims.extend(dims);
    let sty = format!("float<{}>", dims_text(&sdims));
    let zeros = vec!["0"; sdims.len()].join(", ");
    let text = format!(
        "function gc\ndeclare {{\n  %xs = WeightVar {sty} mutable\n  %ys = WeightVar {sty} mutable\n  %ss = WeightVar {sty} mutable\n  %r = WeightVar {ty} mutable\n  %sg = WeightVar {ty} mutable\n}}\n\ncode {{\n  %f = localresponsenormalization @out %ys, @in %xs, @out %ss {{ {members} }}\n  %y0 = tensorview @in %ys {{ Ty: {ty}, Offsets: [{zeros}] }}\n  %s0 = tensorview @in %ss {{ Ty: {ty}, Offsets: [{zeros}] }}\n  %x0 = tensorview @in %xs {{ Ty: {ty}, Offsets: [{zeros}] }}\n  %g = localresponsenormalizationgrad @in %y0, @in %x0, @in %s0, @in %r, @out %sg {{ {members} }}\n}}\n"
    );
    let given = BTreeMap::from([("xs".to_string(), bytes(&xs)), ("r".to_string(), bytes(&r))]);
    let out = run_both(&text, &given);
    let losses = dot_losses(&floats(&out["ys"]), &r);
    compare(
        &format!("localresponsenormalizationgrad {ty} {{ {members} }}"),
        &floats(&out["sg"]),
        &losses,
        &steps,
    )
}

#[test]
fn lrn_gradient_matches_central_differences() {
    for (i, (dims, members)) in [
        (
            &[7u64][..],
            "HalfWindowSize: 1, Alpha: 1.0, Beta: 0.75, K: 1.0",
        ),
        (&[2, 6], "HalfWindowSize: 2, Alpha: 2.0, Beta: 0.5, K: 2.0"),
        (
            &[1, 2, 2, 5],
            "HalfWindowSize: 0, Alpha: 0.5, Beta: 0.75, K: 1.0",
        ),
        // A window wider than the row.
        (&[2, 3], "HalfWindowSize: 4, Alpha: 1.5, Beta: 1.25, K: 1.5"),
        (
            &[1, 1, 2, 8],
            "HalfWindowSize: 3, Alpha: 0.0001, Beta: 0.75, K: 2.0",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let e = lrn_case(dims, members, 200 + i as u64);
        assert!(
            e <= ALLOWED,
            "localresponsenormalizationgrad {dims:?}: error {e}"
        );
    }
}

/// Training-mode batch normalization in f64: each channel normalized by its
/// own mean and (biased) variance over the other dimensions, then
/// `L = sum y * r`. The reference forward of `batchnormalizationgrad`, whose
/// statistics are inputs, so no single instruction computes it.
fn bn_train_loss(
    x: &[f64],
    gamma: &[f64],
    beta: &[f64],
    r: &[f32],
    split: (usize, usize, usize),
    eps: f64,
) -> f64 {
    let (outer, chans, inner) = split;
    let idx = |o: usize, c: usize, i: usize| (o * chans + c) * inner + i;
    let count = (outer * inner) as f64;
    let mut loss = 0.0;
    for c in 0..chans {
        let each = || (0..outer).flat_map(move |o| (0..inner).map(move |i| idx(o, c, i)));
        let mean = each().map(|k| x[k]).sum::<f64>() / count;
        let var = each().map(|k| (x[k] - mean).powi(2)).sum::<f64>() / count;
        for k in each() {
            let y = (x[k] - mean) / (var + eps).sqrt() * gamma[c] + beta[c];
            loss += y * r[k] as f64;
        }
    }
    loss
}

/// `batchnormalizationgrad` fed the batch's own mean and variance, against
/// central differences of `bn_train_loss` in `Src`, `Scale` and `Bias`.
fn bn_case(dims: &[u64], ch: usize, eps: f64, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let n: u64 = dims.iter().product();
    let split = (
        dims[..ch].iter().product::<u64>() as usize,
        dims[ch] as usize,
        dims[ch + 1..].iter().product::<u64>() as usize,
    );
    let chans = split.1;
    let x: Vec<f32> = (0..n).map(|_| rng.uniform(-2.0, 2.0)).collect();
    let r: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let gamma: Vec<f32> = (0..chans).map(|_| rng.uniform(0.5, 2.0)).collect();
    let beta: Vec<f32> = (0..chans).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let wide = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<f64>>();
    let (x64, g64, b64) = (wide(&x), wide(&gamma), wide(&beta));
    // The batch statistics, as the training step's forward computes them.
    let (outer, _, inner) = split;
    let count = (outer * inner) as f64;
    let mut mean = vec![0f32; chans];
    let mut var = vec![0f32; chans];
    for c in 0..chans {
        let each: Vec<usize> = (0..outer)
            .flat_map(|o| (0..inner).map(move |i| (o * chans + c) * inner + i))
            .collect();
        let m = each.iter().map(|&k| x64[k]).sum::<f64>() / count;
        let v = each.iter().map(|&k| (x64[k] - m).powi(2)).sum::<f64>() / count;
        mean[c] = m as f32;
        var[c] = v as f32;
    }
    let ty = format!("float<{}>", dims_text(dims));
    let cty = format!("float<{chans}>");
    let text = format!(
        "function gc\ndeclare {{\n  %x = WeightVar {ty} mutable\n  %scale = WeightVar {cty} mutable\n  %mean = WeightVar {cty} mutable\n  %var = WeightVar {cty} mutable\n  %r = WeightVar {ty} mutable\n  %sg = WeightVar {ty} mutable\n  %scg = WeightVar {cty} mutable\n  %bg = WeightVar {cty} mutable\n}}\n\ncode {{\n  %g = batchnormalizationgrad @in %x, @in %scale, @in %mean, @in %var, @in %r, @out %sg, @out %scg, @out %bg {{ ChannelIdx: {ch}, Epsilon: {eps:?} }}\n}}\n"
    );
    let given = BTreeMap::from([
        ("x".to_string(), bytes(&x)),
        ("scale".to_string(), bytes(&gamma)),
        ("mean".to_string(), bytes(&mean)),
        ("var".to_string(), bytes(&var)),
        ("r".to_string(), bytes(&r)),
    ]);
    let out = run_both(&text, &given);
    let eps32 = eps as f32 as f64;
    let loss = |x: &[f64], g: &[f64], b: &[f64]| bn_train_loss(x, g, b, &r, split, eps32);
    let what = format!("batchnormalizationgrad {ty} {{ ChannelIdx: {ch}, Epsilon: {eps} }}");
    let mut worst = 0f64;
    // One of the three operands perturbed element by element.
    for (name, grad, which) in [
        ("SrcGrad", "sg", 0),
        ("ScaleGrad", "scg", 1),
        ("BiasGrad", "bg", 2),
    ] {
        let base = [&x64, &g64, &b64][which];
        let (_, steps) = stacked(&base.iter().map(|&v| v as f32).collect::<Vec<f32>>(), DELTA);
        let mut losses = vec![loss(&x64, &g64, &b64)];
        for (k, &(p, m)) in steps.iter().enumerate() {
            for v in [p, m] {
                let mut args = [x64.clone(), g64.clone(), b64.clone()];
                args[which][k] = v;
                losses.push(loss(&args[0], &args[1], &args[2]));
            }
        }
        worst = worst.max(compare(
            &format!("{what} {name}"),
            &floats(&out[grad]),
            &losses,
            &steps,
        ));
    }
    worst
}

#[test]
fn batchnorm_gradient_matches_central_differences() {
    for (i, (dims, ch, eps)) in [
        (&[4u64, 3][..], 1, 1e-5),
        // NCHW: the channel between the batch and the image.
        (&[2, 3, 2, 2], 1, 1e-3),
        // NHWC: the channel last.
        (&[2, 2, 3, 3], 3, 1e-5),
        (&[3, 2, 5], 0, 0.1),
        (&[1, 2, 1, 3], 1, 1e-5),
    ]
    .into_iter()
    .enumerate()
    {
        let e = bn_case(dims, ch, eps, 300 + i as u64);
        assert!(e <= ALLOWED, "batchnormalizationgrad {dims:?}: error {e}");
    }
}

/// Per stacked copy `k` of an `[n, c]` input, `crossentropyloss` of rows
/// `k n .. (k + 1) n` of `%src` into `%ce[k]` (views), as program lines.
fn losses_per_copy(src: &str, copies: u64, n: u64, c: u64) -> Vec<String> {
    let mut code = Vec::new();
    for k in 0..copies {
        code.push(format!(
            "  %p{k} = tensorview @in %{src} {{ Ty: float<{n} x {c}>, Offsets: [{}, 0] }}",
            k * n
        ));
        code.push(format!(
            "  %c{k} = tensorview @in %ce {{ Ty: float<1>, Offsets: [{k}] }}"
        ));
        code.push(format!(
            "  %l{k} = crossentropyloss @in %p{k}, @in %lab, @out %c{k}"
        ));
    }
    code
}

/// Labels in `[0, c)` as the given kind's bytes, and its type text.
fn labels(rng: &mut Rng, kind: &str, n: u64, c: u64) -> (Vec<i64>, String) {
    let v: Vec<i64> = (0..n).map(|_| (rng.next() % c) as i64).collect();
    let ty = if kind == "index32" {
        format!("index32<{n} x 1>")
    } else {
        format!("index64<{n}>")
    };
    (v, ty)
}

/// `softmaxgrad` against `N * crossentropyloss(softmax(x))` (the sum over
/// the batch, which is what `softmaxgrad` differentiates).
fn softmax_case(n: u64, c: u64, kind: &str, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let x: Vec<f32> = (0..n * c).map(|_| rng.uniform(-2.0, 2.0)).collect();
    let (lab, lty) = labels(&mut rng, kind, n, c);
    let (xs, steps) = stacked(&x, DELTA);
    let k = 2 * n * c + 1;
    let mut code = vec!["  %sm = softmax @out %ps, @in %xs".to_string()];
    code.extend(losses_per_copy("ps", k, n, c));
    code.push(format!(
        "  %x0 = tensorview @in %xs {{ Ty: float<{n} x {c}>, Offsets: [0, 0] }}"
    ));
    code.push("  %g = softmaxgrad @in %p0, @in %x0, @in %lab, @out %sg".to_string());
    let text = format!(
        "function gc\ndeclare {{\n  %xs = WeightVar float<{r} x {c}> mutable\n  %ps = WeightVar float<{r} x {c}> mutable\n  %lab = WeightVar {lty} mutable\n  %ce = WeightVar float<{k}> mutable\n  %sg = WeightVar float<{n} x {c}> mutable\n}}\n\ncode {{\n{}\n}}\n",
        code.join("\n"),
        r = k * n,
    );
    let given = BTreeMap::from([
        ("xs".to_string(), bytes(&xs)),
        ("lab".to_string(), ints(kind, &lab)),
    ]);
    let out = run_both(&text, &given);
    let losses: Vec<f64> = floats(&out["ce"])
        .iter()
        .map(|&ce| n as f64 * ce as f64)
        .collect();
    compare(
        &format!("softmaxgrad [{n}, {c}] {kind}"),
        &floats(&out["sg"]),
        &losses,
        &steps,
    )
}

#[test]
fn softmaxgrad_matches_central_differences_of_the_summed_loss() {
    for (i, (n, c, kind)) in [
        (1u64, 3u64, "index64"),
        (2, 4, "index32"),
        (3, 5, "index64"),
        (4, 2, "index32"),
    ]
    .into_iter()
    .enumerate()
    {
        let e = softmax_case(n, c, kind, 100 + i as u64);
        assert!(e <= ALLOWED, "softmaxgrad [{n}, {c}]: error {e}");
    }
}

/// `crossentropylossgrad` against `CEGrad * crossentropyloss(P)` (P positive,
/// not normalized: the loss reads only the labels' entries).
fn loss_grad_case(n: u64, c: u64, kind: &str, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let p: Vec<f32> = (0..n * c).map(|_| rng.uniform(0.2, 1.0)).collect();
    let (lab, lty) = labels(&mut rng, kind, n, c);
    let cg = rng.uniform(0.5, 2.0);
    let (ps, steps) = stacked(&p, DELTA / 4.0);
    let k = 2 * n * c + 1;
    let mut code = losses_per_copy("ps", k, n, c);
    code.push(
        "  %g = crossentropylossgrad @in %cg, @in %p0, @in %lab, @out %pg, @out %lg".to_string(),
    );
    let text = format!(
        "function gc\ndeclare {{\n  %ps = WeightVar float<{r} x {c}> mutable\n  %lab = WeightVar {lty} mutable\n  %cg = WeightVar float<1> mutable\n  %ce = WeightVar float<{k}> mutable\n  %pg = WeightVar float<{n} x {c}> mutable\n  %lg = WeightVar {lty} mutable\n}}\n\ncode {{\n{}\n}}\n",
        code.join("\n"),
        r = k * n,
    );
    let given = BTreeMap::from([
        ("ps".to_string(), bytes(&ps)),
        ("lab".to_string(), ints(kind, &lab)),
        ("cg".to_string(), bytes(&[cg])),
    ]);
    let out = run_both(&text, &given);
    assert!(out["lg"].iter().all(|&b| b == 0), "Labelsgrad is zero");
    let losses: Vec<f64> = floats(&out["ce"])
        .iter()
        .map(|&ce| cg as f64 * ce as f64)
        .collect();
    compare(
        &format!("crossentropylossgrad [{n}, {c}] {kind}"),
        &floats(&out["pg"]),
        &losses,
        &steps,
    )
}

#[test]
fn crossentropylossgrad_matches_central_differences_of_the_loss() {
    for (i, (n, c, kind)) in [
        (1u64, 4u64, "index64"),
        (2, 3, "index32"),
        (3, 5, "index64"),
        (5, 2, "index32"),
    ]
    .into_iter()
    .enumerate()
    {
        let e = loss_grad_case(n, c, kind, 200 + i as u64);
        assert!(e <= ALLOWED, "crossentropylossgrad [{n}, {c}]: error {e}");
    }
}

/// Two `sgd` steps with momentum 0.5 and L2 decay 0.25 at learning rate
/// 0.5, worked by hand (every value exact in f32):
/// step 1 with g1 = [1, 0.5, -2] from W = [2, -1, 0], v = 0:
///   g = g1 + 0.25 W = [1.5, 0.25, -2], v = g, W = W - 0.5 v = [1.25, -1.125, 1];
/// step 2 with g2 = [0.5, 0.5, 0.5]:
///   g = g2 + 0.25 W = [0.8125, 0.21875, 0.75],
///   v = 0.5 v + g = [1.5625, 0.34375, -0.25],
///   W = W - 0.5 v = [0.46875, -1.296875, 1.125].
#[test]
fn two_sgd_steps_with_momentum_and_l2_decay_match_a_hand_computation() {
    let m = "LearningRate: 0.5, Momentum: 0.5, L2Decay: 0.25";
    let text = format!(
        "function gc\ndeclare {{\n  %w = WeightVar float<3> mutable\n  %v = WeightVar float<3> mutable\n  %g1 = WeightVar float<3> mutable\n  %g2 = WeightVar float<3> mutable\n}}\n\ncode {{\n  %s1 = sgd @inout %w, @in %g1, @inout %v {{ {m} }}\n  %s2 = sgd @inout %w, @in %g2, @inout %v {{ {m} }}\n}}\n"
    );
    let given = BTreeMap::from([
        ("w".to_string(), bytes(&[2.0, -1.0, 0.0])),
        ("v".to_string(), bytes(&[0.0; 3])),
        ("g1".to_string(), bytes(&[1.0, 0.5, -2.0])),
        ("g2".to_string(), bytes(&[0.5; 3])),
    ]);
    let out = run_both(&text, &given);
    assert_eq!(floats(&out["w"]), [0.46875, -1.296875, 1.125]);
    assert_eq!(floats(&out["v"]), [1.5625, 0.34375, -0.25]);
}

/// The same two steps with PyTorch's recipe numbers (lr 0.05, momentum
/// 0.9, weight decay 1e-4), against the formula in f64: within f32 rounding.
#[test]
fn two_sgd_steps_with_a_torch_recipe_stay_within_rounding_of_the_formula() {
    let m = "LearningRate: 0.05, Momentum: 0.9, L2Decay: 0.0001";
    let text = format!(
        "function gc\ndeclare {{\n  %w = WeightVar float<4> mutable\n  %v = WeightVar float<4> mutable\n  %g1 = WeightVar float<4> mutable\n  %g2 = WeightVar float<4> mutable\n}}\n\ncode {{\n  %s1 = sgd @inout %w, @in %g1, @inout %v {{ {m} }}\n  %s2 = sgd @inout %w, @in %g2, @inout %v {{ {m} }}\n}}\n"
    );
    let (w0, g1, g2) = (
        [0.3f32, -1.7, 2.5, 0.01],
        [0.2f32, -0.4, 1.1, -3.0],
        [-0.6f32, 0.05, 0.9, 2.0],
    );
    let given = BTreeMap::from([
        ("w".to_string(), bytes(&w0)),
        ("v".to_string(), bytes(&[0.0; 4])),
        ("g1".to_string(), bytes(&g1)),
        ("g2".to_string(), bytes(&g2)),
    ]);
    let out = run_both(&text, &given);
    let (w, v) = (floats(&out["w"]), floats(&out["v"]));
    for i in 0..4 {
        let (mut ew, mut ev) = (w0[i] as f64, 0f64);
        for g in [g1[i] as f64, g2[i] as f64] {
            ev = 0.9 * ev + (g + 1e-4 * ew);
            ew -= 0.05 * ev;
        }
        assert!(
            (w[i] as f64 - ew).abs() <= 1e-6 * (1.0 + ew.abs()),
            "W[{i}] {} vs {ew}",
            w[i]
        );
        assert!(
            (v[i] as f64 - ev).abs() <= 1e-6 * (1.0 + ev.abs()),
            "v[{i}] {} vs {ev}",
            v[i]
        );
    }
}

/// `batchedpairwisedotproduct` over `n` inputs `[b, v]`: every input's
/// elements perturbed in turn, the copies stacked along the batch (each
/// row's products are its own), the loss `sum y * r` (so `DestGrad = r`),
/// and the gradient on the unperturbed copy (two variadic lists).
fn pairwise_case(n: u64, b: u64, v: u64, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let each = (b * v) as usize;
    let pairs = n * (n - 1) / 2;
    let x: Vec<f32> = (0..n * b * v).map(|_| rng.uniform(-2.0, 2.0)).collect();
    let r: Vec<f32> = (0..b * pairs).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let (xs, steps) = stacked(&x, DELTA);
    let k = 2 * x.len() as u64 + 1;
    let mut decls = String::new();
    let mut given = BTreeMap::from([("r".to_string(), bytes(&r))]);
    let (mut srcs, mut views, mut grads, mut code) = (vec![], vec![], vec![], String::new());
    for i in 0..n as usize {
        // Input i of every copy, one after another.
        let si: Vec<f32> = xs
            .chunks(x.len())
            .flat_map(|c| c[i * each..(i + 1) * each].to_vec())
            .collect();
        given.insert(format!("s{i}"), bytes(&si));
        decls += &format!(
            "  %s{i} = WeightVar float<{} x {v}> mutable
",
            k * b
        );
        decls += &format!(
            "  %g{i} = WeightVar float<{b} x {v}> mutable
"
        );
        srcs.push(format!("@in %s{i}"));
        code += &format!(
            "  %v{i} = tensorview @in %s{i} {{ Ty: float<{b} x {v}>, Offsets: [0, 0] }}
"
        );
        views.push(format!("@in %v{i}"));
        grads.push(format!("@out %g{i}"));
    }
    let members = format!("{{ NumInputs: {n}, VectorSize: {v} }}");
    let text = format!(
        "function gc\ndeclare {{\n{decls}  %ys = WeightVar float<{} x {pairs}> mutable\n  %r = WeightVar float<{b} x {pairs}> mutable\n}}\n\ncode {{\n  %f = batchedpairwisedotproduct @out %ys, {} {members}\n{code}  %g = batchedpairwisedotproductgrad @in %r, {}, {} {members}\n}}\n",
        k * b,
        srcs.join(", "),
        grads.join(", "),
        views.join(", ")
    );
    let out = run_both(&text, &given);
    let losses = dot_losses(&floats(&out["ys"]), &r);
    let analytic: Vec<f32> = (0..n)
        .flat_map(|i| floats(&out[&format!("g{i}")]))
        .collect();
    compare(
        &format!("batchedpairwisedotproductgrad n={n} [{b} x {v}]"),
        &analytic,
        &losses,
        &steps,
    )
}

#[test]
fn pairwise_dot_gradient_matches_central_differences() {
    for (i, (n, b, v)) in [(2u64, 1u64, 3u64), (3, 2, 4), (4, 3, 2)]
        .into_iter()
        .enumerate()
    {
        let e = pairwise_case(n, b, v, 70 + i as u64);
        assert!(e <= ALLOWED, "n={n} [{b} x {v}]: error {e}");
    }
}

/// The threshold's forward `x > t ? x : 0` (an `elementcmplt` and an
/// `elementselect`) on the stacked copies, the loss `sum y * r`, and
/// `thresholdgrad` on the unperturbed copy; inputs stay away from `t`.
fn threshold_case(dims: &[u64], t: f32, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let n: u64 = dims.iter().product();
    let x: Vec<f32> = (0..n)
        .map(|_| loop {
            let v = rng.uniform(-2.0, 2.0);
            if (v - t).abs() > 4.0 * DELTA {
                break v;
            }
        })
        .collect();
    let r: Vec<f32> = (0..n).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let (xs, steps) = stacked(&x, DELTA);
    let ty = format!("float<{}>", dims_text(dims));
    let mut sdims = vec![2 * n + 1];
    sdims.extend(dims);
    let sty = format!("float<{}>", dims_text(&sdims));
    let bty = sty.replace("float", "bool");
    let zeros = vec!["0"; sdims.len()].join(", ");
    let text = format!(
        "function gc\ndeclare {{\n  %xs = WeightVar {sty} mutable\n  %ys = WeightVar {sty} mutable\n  %ts = WeightVar {sty} mutable\n  %zs = WeightVar {sty} mutable\n  %above = WeightVar {bty} mutable\n  %r = WeightVar {ty} mutable\n  %sg = WeightVar {ty} mutable\n}}\n\ncode {{\n  %t = splat @out %ts {{ Value: {t:?} }}\n  %z = splat @out %zs {{ Value: 0.0 }}\n  %c = elementcmplt @out %above, @in %ts, @in %xs\n  %f = elementselect @out %ys, @in %above, @in %xs, @in %zs\n  %x0 = tensorview @in %xs {{ Ty: {ty}, Offsets: [{zeros}] }}\n  %g = thresholdgrad @out %sg, @in %r, @in %x0 {{ Threshold: {t:?} }}\n}}\n"
    );
    let given = BTreeMap::from([("xs".to_string(), bytes(&xs)), ("r".to_string(), bytes(&r))]);
    let out = run_both(&text, &given);
    let losses = dot_losses(&floats(&out["ys"]), &r);
    compare(
        &format!("thresholdgrad {ty} {{ Threshold: {t} }}"),
        &floats(&out["sg"]),
        &losses,
        &steps,
    )
}

#[test]
fn threshold_gradient_matches_central_differences() {
    for (i, (dims, t)) in [(&[6u64][..], 0.0f32), (&[2, 3], 0.5), (&[2, 2, 3], -0.75)]
        .into_iter()
        .enumerate()
    {
        let e = threshold_case(dims, t, 90 + i as u64);
        assert!(e <= ALLOWED, "{dims:?}: error {e}");
    }
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn pairwise_dot_gradient_matches_central_differences_on_c() {
    with_c(pairwise_dot_gradient_matches_central_differences);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn threshold_gradient_matches_central_differences_on_c() {
    with_c(threshold_gradient_matches_central_differences);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn activation_gradients_match_central_differences_on_c() {
    with_c(activation_gradients_match_central_differences);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn softmaxgrad_matches_central_differences_of_the_summed_loss_on_c() {
    with_c(softmaxgrad_matches_central_differences_of_the_summed_loss);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn crossentropylossgrad_matches_central_differences_of_the_loss_on_c() {
    with_c(crossentropylossgrad_matches_central_differences_of_the_loss);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn two_sgd_steps_with_momentum_and_l2_decay_match_a_hand_computation_on_c() {
    with_c(two_sgd_steps_with_momentum_and_l2_decay_match_a_hand_computation);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn two_sgd_steps_with_a_torch_recipe_stay_within_rounding_of_the_formula_on_c() {
    with_c(two_sgd_steps_with_a_torch_recipe_stay_within_rounding_of_the_formula);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn lrn_gradient_matches_central_differences_on_c() {
    with_c(lrn_gradient_matches_central_differences);
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn batchnorm_gradient_matches_central_differences_on_c() {
    with_c(batchnorm_gradient_matches_central_differences);
}
