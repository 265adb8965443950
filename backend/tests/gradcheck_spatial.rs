//! GradCheck of the spatial gradients (docs/training.md, "Spatial
//! gradients"): on several shapes (strides, pads, groups, dilation, both
//! layouts) the analytic gradient of each instruction matches central
//! differences of its forward instruction, with the loss
//! `L = sum(forward output * R)` for a fixed random `R`, so `dL/dOutput = R`.
//! The forward runs on the interpreter (engines.rs holds it bit-identical to
//! C); the gradients run on the interpreter and, when `cc` exists, on the C
//! engine, which must give the same bits.

use glow_backend::run::{self, Engine, Outputs, RunOptions};
use glow_backend::CcOptions;
use std::collections::BTreeMap;

/// Central-difference step. Convolution and average pooling are linear in
/// each input, so the step changes nothing but rounding; max pool inputs are
/// spaced wider than two steps, so no step changes which element wins.
const DELTA: f32 = 0.1;

/// Glow's GradCheckTest metric: `min(|a - n|, |a - n| / |a + n + 1|)`.
fn glow_diff(a: f64, n: f64) -> f64 {
    let d = (a - n).abs();
    d.min(d / (a + n + 1.0).abs())
}

/// `|a - n| / max(|a|, |n|, tiny)`, reported beside Glow's metric.
fn relative(a: f64, n: f64) -> f64 {
    (a - n).abs() / a.abs().max(n.abs()).max(1e-6)
}

/// Glow's tolerance (GradCheckTest passes 0.01 or less).
const ALLOWED: f64 = 1e-3;

/// One instruction's check: the buffers of case `p` (every name starts
/// with `p`), the forward instruction, the gradient instructions.
struct Case {
    label: String,
    /// (name, type) of the forward inputs, each with the name of its
    /// gradient.
    inputs: Vec<(String, String, String)>,
    /// Values of an input that must stay apart by more than two steps.
    distinct: bool,
    /// (name, type) of the forward output and of `R` (its type too).
    output: (String, String),
    r: String,
    forward: String,
    /// Declarations the gradient instructions write, besides the gradients.
    extra: Vec<(String, String)>,
    backward: Vec<String>,
    /// Pairs of buffers of the gradient program that must be bit-identical.
    same: Vec<(String, String)>,
}

fn dims_text(d: &[u64]) -> String {
    let s: Vec<String> = d.iter().map(|x| x.to_string()).collect();
    format!("float<{}>", s.join(" x "))
}

fn list(v: &[u64]) -> String {
    let s: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", s.join(", "))
}

fn act(nchw: bool, n: u64, c: u64, h: u64, w: u64) -> Vec<u64> {
    if nchw {
        vec![n, c, h, w]
    } else {
        vec![n, h, w, c]
    }
}

fn out_dim(i: u64, k: u64, s: u64, p0: u64, p1: u64, d: u64) -> u64 {
    (i + p0 + p1 - (k - 1) * d - 1) / s + 1
}

/// A window: layout, N, C, H, W, kernel, stride, pads, dilation.
type Win = (
    &'static str,
    u64,
    u64,
    u64,
    u64,
    [u64; 2],
    [u64; 2],
    [u64; 4],
    [u64; 2],
);

fn window_members(w: &Win) -> String {
    let (layout, _, _, _, _, k, s, pads, _) = *w;
    format!(
        "Kernels: {}, Strides: {}, Pads: {}, Layout: {layout}",
        list(&k),
        list(&s),
        list(&pads)
    )
}

fn out_hw(w: &Win) -> (u64, u64) {
    let (_, _, _, h, wd, k, s, p, d) = *w;
    (
        out_dim(h, k[0], s[0], p[0], p[2], d[0]),
        out_dim(wd, k[1], s[1], p[1], p[3], d[1]),
    )
}

/// `convolutiongrad` against `convolution`: (window, output channels, group).
fn conv_case(p: &str, win: Win, oc: u64, group: u64) -> Case {
    let (layout, n, c, h, w, k, _, _, dil) = win;
    let nchw = layout == "NCHW";
    let (oh, ow) = out_hw(&win);
    let src = dims_text(&act(nchw, n, c, h, w));
    let filt = if nchw {
        dims_text(&[oc, c / group, k[0], k[1]])
    } else {
        dims_text(&[oc, k[0], k[1], c / group])
    };
    let dest = dims_text(&act(nchw, n, oc, oh, ow));
    let m = format!(
        "{}, Group: {group}, Dilation: {}",
        window_members(&win),
        list(&dil)
    );
    Case {
        label: format!("convolutiongrad {m}"),
        inputs: vec![
            (format!("{p}x"), src, format!("{p}dx")),
            (format!("{p}w"), filt, format!("{p}dw")),
            (format!("{p}b"), dims_text(&[oc]), format!("{p}db")),
        ],
        distinct: false,
        output: (format!("{p}y"), dest.clone()),
        r: format!("{p}r"),
        forward: format!("convolution @out %{p}y, @in %{p}x, @in %{p}w, @in %{p}b {{ {m} }}"),
        extra: vec![],
        backward: vec![format!(
            "convolutiongrad @in %{p}x, @in %{p}w, @in %{p}r, @out %{p}dx, @out %{p}dw, @out %{p}db {{ {m} }}"
        )],
        same: vec![],
    }
}

fn conv_cases() -> Vec<Case> {
    let cases: [(Win, u64, u64); 5] = [
        (
            ("NHWC", 1, 2, 5, 5, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1]),
            3,
            1,
        ),
        (
            ("NHWC", 2, 4, 6, 5, [3, 2], [2, 1], [0, 1, 2, 0], [1, 2]),
            4,
            2,
        ),
        (
            ("NCHW", 1, 3, 6, 5, [2, 2], [2, 2], [1, 1, 0, 1], [2, 1]),
            3,
            3,
        ),
        (
            ("NCHW", 2, 4, 5, 4, [2, 3], [1, 1], [0, 0, 1, 1], [1, 1]),
            6,
            2,
        ),
        (
            ("NHWC", 1, 3, 7, 6, [1, 2], [3, 2], [2, 1, 0, 2], [1, 1]),
            2,
            1,
        ),
    ];
    cases
        .into_iter()
        .enumerate()
        .map(|(i, (w, oc, g))| conv_case(&format!("conv{i}_"), w, oc, g))
        .collect()
}

/// The pool windows (no dilation: the gradients have no such member).
fn pool_windows() -> [Win; 5] {
    [
        ("NHWC", 2, 3, 5, 4, [2, 2], [2, 2], [0, 0, 0, 0], [1, 1]),
        ("NHWC", 1, 2, 5, 5, [3, 3], [1, 1], [1, 1, 1, 1], [1, 1]),
        ("NCHW", 2, 2, 5, 4, [3, 2], [1, 2], [1, 0, 2, 1], [1, 1]),
        // Windows all in padding at the edges.
        ("NCHW", 1, 3, 4, 4, [2, 2], [1, 1], [2, 2, 2, 2], [1, 1]),
        // Rows no window reads.
        ("NHWC", 1, 2, 6, 5, [1, 2], [3, 1], [0, 2, 1, 0], [1, 1]),
    ]
}

/// `maxpoolwithargmax` + `maxpoolwithargmaxgrad` against `maxpool`, whose
/// output `maxpoolwithargmax` must reproduce bit for bit.
fn max_case(p: &str, win: Win) -> Case {
    let (layout, n, c, h, w, ..) = win;
    let nchw = layout == "NCHW";
    let (oh, ow) = out_hw(&win);
    let src = dims_text(&act(nchw, n, c, h, w));
    let dest = dims_text(&act(nchw, n, c, oh, ow));
    let m = window_members(&win);
    Case {
        label: format!("maxpoolwithargmaxgrad {m}"),
        inputs: vec![(format!("{p}x"), src, format!("{p}dx"))],
        distinct: true,
        output: (format!("{p}y"), dest.clone()),
        r: format!("{p}r"),
        forward: format!("maxpool @out %{p}y, @in %{p}x {{ {m} }}"),
        extra: vec![
            (format!("{p}y2"), dest.clone()),
            (format!("{p}a"), dest.replace("float", "index64")),
            (format!("{p}ym"), dest),
        ],
        backward: vec![
            format!("maxpoolwithargmax @out %{p}y2, @in %{p}x, @out %{p}a {{ {m} }}"),
            format!(
                "maxpoolwithargmaxgrad @in %{p}y2, @in %{p}x, @in %{p}a, @in %{p}r, @out %{p}dx {{ {m} }}"
            ),
            format!("maxpool @out %{p}ym, @in %{p}x {{ {m} }}"),
        ],
        same: vec![(format!("{p}y2"), format!("{p}ym"))],
    }
}

/// `avgpoolgrad` against `avgpool`, with and without `CountIncludePads`.
fn avg_case(p: &str, win: Win, include: bool) -> Case {
    let (layout, n, c, h, w, ..) = win;
    let nchw = layout == "NCHW";
    let (oh, ow) = out_hw(&win);
    let src = dims_text(&act(nchw, n, c, h, w));
    let dest = dims_text(&act(nchw, n, c, oh, ow));
    let m = format!("{}, CountIncludePads: {include}", window_members(&win));
    Case {
        label: format!("avgpoolgrad {m}"),
        inputs: vec![(format!("{p}x"), src, format!("{p}dx"))],
        distinct: false,
        output: (format!("{p}y"), dest.clone()),
        r: format!("{p}r"),
        forward: format!("avgpool @out %{p}y, @in %{p}x {{ {m} }}"),
        extra: vec![(format!("{p}yd"), dest)],
        backward: vec![
            format!("avgpool @out %{p}yd, @in %{p}x {{ {m} }}"),
            format!("avgpoolgrad @in %{p}yd, @in %{p}x, @in %{p}r, @out %{p}dx {{ {m} }}"),
        ],
        same: vec![],
    }
}

/// splitmix64.
fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `n` values in [-1, 1), or (distinct) a shuffle of `0.25 * (k - n / 2)`.
fn values(n: usize, seed: u64, distinct: bool) -> Vec<f32> {
    let mut s = seed;
    if distinct {
        let mut v: Vec<f32> = (0..n).map(|k| 0.25 * (k as f32 - n as f32 / 2.0)).collect();
        for i in (1..n).rev() {
            let j = (next(&mut s) % (i as u64 + 1)) as usize;
            v.swap(i, j);
        }
        v
    } else {
        (0..n)
            .map(|_| (next(&mut s) >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0)
            .collect()
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

fn elements(ty: &str) -> usize {
    let inner = &ty[ty.find('<').unwrap() + 1..ty.len() - 1];
    inner
        .split(" x ")
        .map(|d| d.trim().parse::<usize>().unwrap())
        .product()
}

fn function(name: &str, decls: &[(String, String)], code: &[String]) -> glow_ir::Function {
    let d: Vec<String> = decls
        .iter()
        .map(|(n, t)| format!("  %{n} = WeightVar {t} mutable"))
        .collect();
    let c: Vec<String> = code
        .iter()
        .enumerate()
        .map(|(i, t)| format!("  %i{i} = {t}"))
        .collect();
    let text = format!(
        "function {name}\ndeclare {{\n{}\n}}\n\ncode {{\n{}\n}}\n",
        d.join("\n"),
        c.join("\n")
    );
    let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}\n{text}"));
    let diags = glow_ir::verifier::verify_module(&m);
    assert!(
        diags.is_empty(),
        "{}",
        glow_ir::diag::render_all(&diags, name, text.as_bytes())
    );
    m.functions.into_iter().next().unwrap()
}

/// The gradient program of every case, and the values of its inputs.
struct Suite {
    cases: Vec<Case>,
    grad: glow_ir::Function,
    given: BTreeMap<String, Vec<u8>>,
}

fn suite(cases: Vec<Case>) -> Suite {
    let mut decls = Vec::new();
    let mut code = Vec::new();
    let mut given = BTreeMap::new();
    for (k, c) in cases.iter().enumerate() {
        for (j, (name, ty, grad)) in c.inputs.iter().enumerate() {
            let v = values(elements(ty), 1000 * k as u64 + j as u64, c.distinct);
            given.insert(name.clone(), bytes(&v));
            decls.push((name.clone(), ty.clone()));
            decls.push((grad.clone(), ty.clone()));
        }
        let r = values(elements(&c.output.1), 1000 * k as u64 + 999, false);
        given.insert(c.r.clone(), bytes(&r));
        decls.push((c.r.clone(), c.output.1.clone()));
        decls.extend(c.extra.iter().cloned());
        code.extend(c.backward.iter().cloned());
    }
    let grad = function("grads", &decls, &code);
    Suite { cases, grad, given }
}

fn run_on(f: &glow_ir::Function, given: &BTreeMap<String, Vec<u8>>, engine: Engine) -> Outputs {
    let mut opts = RunOptions::interpreter(1);
    if engine == Engine::C {
        opts.engine = Engine::C;
        opts.cc = CcOptions::new(
            Some("cc"),
            "-O1 -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all",
        );
    }
    let weights = run::resolve_weights(f, given, &opts).expect("weights");
    run::run(f, &weights, &opts).unwrap_or_else(|e| panic!("{engine:?}: {e:?}"))
}

fn tensor<'a>(o: &'a Outputs, name: &str) -> &'a [u8] {
    &o.mutable
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no output %{name}"))
        .data
}

/// The worst errors of one suite, over every gradient element.
#[derive(Default, Debug)]
struct Worst {
    glow: f64,
    relative: f64,
    checked: usize,
    nonzero: usize,
}

/// Checks every case's analytic gradients (from `grads`, the gradient
/// program's outputs) against central differences of its forward
/// instruction on the interpreter.
fn check(s: &Suite, grads: &Outputs) -> Worst {
    let mut worst = Worst::default();
    for c in &s.cases {
        for (a, b) in &c.same {
            assert_eq!(
                tensor(grads, a),
                tensor(grads, b),
                "{}: %{a} vs %{b}",
                c.label
            );
        }
        let mut decls: Vec<(String, String)> = c
            .inputs
            .iter()
            .map(|(n, t, _)| (n.clone(), t.clone()))
            .collect();
        decls.push(c.output.clone());
        let fwd = function("forward", &decls, std::slice::from_ref(&c.forward));
        let r: Vec<f64> = floats(&s.given[&c.r]).iter().map(|&v| v as f64).collect();
        let mut given = s.given.clone();
        let loss = |given: &BTreeMap<String, Vec<u8>>| -> f64 {
            let out = run_on(&fwd, given, Engine::Interp);
            let y = floats(tensor(&out, &c.output.0));
            y.iter().zip(&r).map(|(&y, &r)| y as f64 * r).sum()
        };
        for (name, _, grad) in &c.inputs {
            let analytic = floats(tensor(grads, grad));
            let base = floats(&s.given[name]);
            for (j, &a) in analytic.iter().enumerate() {
                let mut v = base.clone();
                v[j] = base[j] + DELTA;
                given.insert(name.clone(), bytes(&v));
                let plus = loss(&given);
                v[j] = base[j] - DELTA;
                given.insert(name.clone(), bytes(&v));
                let minus = loss(&given);
                // The step actually taken, after rounding to f32.
                let step = (base[j] + DELTA) as f64 - (base[j] - DELTA) as f64;
                let n = (plus - minus) / step;
                let (a, e) = (a as f64, glow_diff(a as f64, n));
                assert!(
                    e <= ALLOWED,
                    "{}: d/d%{name}[{j}]: analytic {a}, numeric {n} (error {e})",
                    c.label
                );
                worst.glow = worst.glow.max(e);
                worst.relative = worst.relative.max(relative(a, n));
                worst.checked += 1;
                worst.nonzero += usize::from(n.abs() > 0.1);
            }
            given.insert(name.clone(), bytes(&base));
        }
    }
    worst
}

fn have_cc() -> bool {
    glow_backend::CcOptions::new(Some("cc"), "").found()
}

/// Runs the suite's gradients on the interpreter, checks them against
/// central differences, then (with `cc`) runs them on the C engine under
/// ASan/UBSan and requires the same bits.
fn gradcheck(what: &str, cases: Vec<Case>) {
    let s = suite(cases);
    let interp = run_on(&s.grad, &s.given, Engine::Interp);
    let worst = check(&s, &interp);
    eprintln!(
        "{what}: {} gradient elements over {} cases, worst Glow error {:.3e}, worst relative error {:.3e}",
        worst.checked,
        s.cases.len(),
        worst.glow,
        worst.relative
    );
    // Enough gradients are far from zero for the check to see something (a
    // max pool's input gradient is zero off the maxima).
    assert!(worst.nonzero * 10 > worst.checked, "{worst:?}");
    if !have_cc() {
        eprintln!("{what}: skipped the C engine: no `cc` on PATH");
        return;
    }
    let c = run_on(&s.grad, &s.given, Engine::C);
    for (a, b) in interp.mutable.iter().zip(&c.mutable) {
        assert_eq!(a.name, b.name);
        assert!(
            a.data == b.data,
            "{what}: the engines differ on %{}:\ninterp {:?}\nC      {:?}",
            a.name,
            floats(&a.data),
            floats(&b.data)
        );
    }
}

#[test]
fn convolutiongrad_matches_central_differences() {
    gradcheck("convolutiongrad", conv_cases());
}

#[test]
fn maxpoolwithargmaxgrad_matches_central_differences() {
    let cases = pool_windows()
        .into_iter()
        .enumerate()
        .map(|(i, w)| max_case(&format!("max{i}_"), w))
        .collect();
    gradcheck("maxpoolwithargmaxgrad", cases);
}

#[test]
fn avgpoolgrad_matches_central_differences() {
    let mut cases = Vec::new();
    for (i, w) in pool_windows().into_iter().enumerate() {
        for include in [true, false] {
            cases.push(avg_case(&format!("avg{i}{include}_"), w, include));
        }
    }
    gradcheck("avgpoolgrad", cases);
}
