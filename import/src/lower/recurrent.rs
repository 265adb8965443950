//! RNN, GRU and LSTM, unrolled over the (static) sequence length onto
//! matmul and element-wise instructions, through the composer: per
//! direction the input projection of every step is one `matmul` (plus the
//! biases), then each step multiplies the hidden state by R and applies the
//! gates in ONNX's order and formulas. Y, Y_h (and LSTM's Y_c) are the
//! stacked states, in either layout.

use super::compose::{attr_float, attr_int, attr_ints, base_of, with, Composer};
use super::{Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;

/// Which recurrent op.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Rnn,
    Gru,
    Lstm,
}

impl Kind {
    fn gates(self) -> u64 {
        match self {
            Kind::Rnn => 1,
            Kind::Gru => 3,
            Kind::Lstm => 4,
        }
    }
    /// ONNX's default activations (f, g, h) of one direction.
    fn defaults(self) -> &'static [&'static str] {
        match self {
            Kind::Rnn => &["Tanh"],
            Kind::Gru => &["Sigmoid", "Tanh"],
            Kind::Lstm => &["Sigmoid", "Tanh", "Tanh"],
        }
    }
}

/// An activation function with its alpha and beta.
#[derive(Clone)]
struct Act {
    name: String,
    alpha: Option<f32>,
    beta: Option<f32>,
}

/// The activations for every direction, with `activation_alpha` /
/// `activation_beta` handed out in order to those that take them.
fn activations(l: &Lowerer, attrs: &Attrs, kind: Kind, dirs: usize) -> Result<Vec<Act>> {
    let per = kind.defaults().len();
    let names: Vec<String> = match attrs.0.iter().find(|a| a.name == "activations") {
        Some(a) => a
            .strings
            .iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect(),
        None => (0..dirs)
            .flat_map(|_| kind.defaults().iter().map(|s| s.to_string()))
            .collect(),
    };
    if names.len() != per * dirs {
        return Err(l.err(format!(
            "{} activations given, {} needed ({per} per direction)",
            names.len(),
            per * dirs
        )));
    }
    let mut alphas = attrs.floats("activation_alpha").unwrap_or(&[]).iter();
    let mut betas = attrs.floats("activation_beta").unwrap_or(&[]).iter();
    names
        .into_iter()
        .map(|name| {
            let (a, b) = match name.to_ascii_lowercase().as_str() {
                "relu" | "tanh" | "sigmoid" | "softsign" | "softplus" => (false, false),
                "leakyrelu" | "thresholdedrelu" | "elu" => (true, false),
                "hardsigmoid" | "affine" | "scaledtanh" => (true, true),
                _ => return Err(l.unsupported(format!("activation `{name}` of a recurrent op"))),
            };
            Ok(Act {
                alpha: if a { alphas.next().copied() } else { None },
                beta: if b { betas.next().copied() } else { None },
                name,
            })
        })
        .collect()
}

/// `act(x)`.
fn apply(c: &mut Composer, act: &Act, x: &str) -> Result<String> {
    let lower = act.name.to_ascii_lowercase();
    let alpha = |d: f32| vec![attr_float("alpha", act.alpha.unwrap_or(d))];
    match lower.as_str() {
        "relu" => c.op("Relu", &[x], vec![]),
        "tanh" => c.op("Tanh", &[x], vec![]),
        "sigmoid" => c.op("Sigmoid", &[x], vec![]),
        "softsign" => c.op("Softsign", &[x], vec![]),
        "softplus" => c.op("Softplus", &[x], vec![]),
        "leakyrelu" => c.op("LeakyRelu", &[x], alpha(0.01)),
        "thresholdedrelu" => c.op("ThresholdedRelu", &[x], alpha(1.0)),
        "elu" => c.op("Elu", &[x], alpha(1.0)),
        "hardsigmoid" => {
            let attrs = vec![
                attr_float("alpha", act.alpha.unwrap_or(0.2)),
                attr_float("beta", act.beta.unwrap_or(0.5)),
            ];
            c.op("HardSigmoid", &[x], attrs)
        }
        // alpha * x + beta; alpha * tanh(beta * x).
        "affine" | "scaledtanh" => {
            let (Some(a), Some(b)) = (act.alpha, act.beta) else {
                return Err(c.l.unsupported(format!(
                    "activation `{}` without activation_alpha and activation_beta",
                    act.name
                )));
            };
            let (a, b) = (c.scalar(a), c.scalar(b));
            if lower == "affine" {
                let m = c.op("Mul", &[x, &a], vec![])?;
                c.op("Add", &[&m, &b], vec![])
            } else {
                let m = c.op("Mul", &[x, &b], vec![])?;
                let t = c.op("Tanh", &[&m], vec![])?;
                c.op("Mul", &[&t, &a], vec![])
            }
        }
        _ => unreachable!("activations() accepts only the names above"),
    }
}

/// The weights of one direction, transposed for `x @ W^T`.
struct Dir {
    /// Per step (in time order) the input projection plus the biases that
    /// are simply added: `[batch, gates * hidden]`.
    xw: Vec<String>,
    /// `R^T`: `[hidden, gates * hidden]` (GRU: only the z and r columns).
    rt: String,
    /// GRU: `Rh^T` and the recurrent bias of the h gate.
    rh: Option<(String, Option<String>)>,
    /// LSTM peepholes (i, o, f), each `[hidden]`.
    p: Option<[String; 3]>,
    h0: String,
    c0: Option<String>,
}

pub(super) fn lower(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let kind = match node.op_type.as_str() {
        "RNN" => Kind::Rnn,
        "GRU" => Kind::Gru,
        _ => Kind::Lstm,
    };
    let attrs = Attrs(&node.attribute);
    let x = l.input(node, 0)?;
    let (w, r) = (l.input(node, 1)?, l.input(node, 2)?);
    let dims = |v: &Val| match v {
        Val::Const { t, .. } => t.dims.clone(),
        Val::Act(a) => a.dims.clone(),
    };
    let (xd, wd, rd) = (dims(&x), dims(&w), dims(&r));
    let layout = attrs.int("layout", 0);
    let direction = attrs
        .string("direction")
        .unwrap_or_else(|| "forward".into());
    let ndir: u64 = match direction.as_str() {
        "forward" | "reverse" => 1,
        "bidirectional" => 2,
        d => return Err(l.err(format!("unknown direction `{d}`"))),
    };
    let g = kind.gates();
    let hidden = rd.last().copied().unwrap_or(0);
    if xd.len() != 3 || wd.len() != 3 || rd.len() != 3 {
        return Err(l.err("X, W and R must be 3-D"));
    }
    let (seq, batch) = if layout == 0 {
        (xd[0], xd[1])
    } else {
        (xd[1], xd[0])
    };
    let input = xd[2];
    if wd != [ndir, g * hidden, input] || rd != [ndir, g * hidden, hidden] {
        return Err(l.err(format!(
            "W {wd:?} and R {rd:?} do not fit X {xd:?}, {ndir} direction(s) and hidden size {hidden}"
        )));
    }
    if attrs.int("hidden_size", hidden as i64) != hidden as i64 {
        return Err(l.err("hidden_size does not match R"));
    }
    if let Some(v) = l.opt_input(node, 4)? {
        // Only lengths that cover the whole sequence (no masking needed).
        let Val::Const { t, .. } = v else {
            return Err(l.unsupported("sequence_lens that is not a constant"));
        };
        if t.to_f32().iter().any(|&n| n as u64 != seq) {
            return Err(l.unsupported("sequence_lens shorter than the sequence"));
        }
    }
    if kind == Kind::Lstm && attrs.int("input_forget", 0) != 0 {
        return Err(l.unsupported("LSTM input_forget = 1"));
    }
    let lbr = kind == Kind::Gru && attrs.int("linear_before_reset", 0) != 0;
    let clip = attrs.has("clip").then(|| attrs.float("clip", 0.0));
    let acts = activations(l, &attrs, kind, ndir as usize)?;
    let opt = |l: &Lowerer, i: usize| -> Result<Option<String>> {
        Ok(l.opt_input(node, i)?.map(|_| node.input[i].clone()))
    };
    let b = opt(l, 3)?;
    let h0 = opt(l, 5)?;
    let c0 = if kind == Kind::Lstm { opt(l, 6)? } else { None };
    let p = if kind == Kind::Lstm { opt(l, 7)? } else { None };
    let wanted = |i: usize| node.output.get(i).is_some_and(|n| !n.is_empty());
    let base = base_of(node);
    let gh = g * hidden;
    let outs = with(l, &base, |c| {
        // Time-major X, and its rows as one matrix.
        let x = if layout == 0 {
            node.input[0].clone()
        } else {
            c.op(
                "Transpose",
                &[&node.input[0]],
                vec![attr_ints("perm", &[1, 0, 2])],
            )?
        };
        let xflat = c.reshape(&x, &[seq * batch, input])?;
        // initial_h / initial_c as [dirs, batch, hidden].
        let state = |c: &mut Composer, v: &Option<String>| -> Result<Option<String>> {
            let Some(v) = v else { return Ok(None) };
            Ok(Some(if layout == 0 {
                v.clone()
            } else {
                c.op("Transpose", &[v], vec![attr_ints("perm", &[1, 0, 2])])?
            }))
        };
        let (h0, c0) = (state(c, &h0)?, state(c, &c0)?);
        let mut dirs = Vec::new();
        for d in 0..ndir {
            let wt = c.pick(&node.input[1], 0, d)?;
            let wt = c.op("Transpose", &[&wt], vec![])?;
            let rt = c.pick(&node.input[2], 0, d)?;
            let rt = c.op("Transpose", &[&rt], vec![])?;
            let mut xw = c.op("MatMul", &[&xflat, &wt], vec![])?;
            let (mut rb, mut rt_used, mut rh) = (None, rt.clone(), None);
            if let Some(b) = &b {
                let bd = c.pick(b, 0, d)?;
                let wb = c.slice(&bd, 0, 0, gh)?;
                xw = c.op("Add", &[&xw, &wb], vec![])?;
                rb = Some(c.slice(&bd, 0, gh, 2 * gh)?);
            }
            if kind == Kind::Gru {
                // The h gate's recurrent part is applied apart from z and r.
                rt_used = c.slice(&rt, 1, 0, 2 * hidden)?;
                let rht = c.slice(&rt, 1, 2 * hidden, gh)?;
                let rbh = match &rb {
                    Some(rb) => {
                        let zr = c.slice(rb, 0, 0, 2 * hidden)?;
                        xw = add_cols(c, &xw, &zr, 0, 2 * hidden, gh)?;
                        Some(c.slice(rb, 0, 2 * hidden, gh)?)
                    }
                    None => None,
                };
                rh = Some((rht, rbh));
            } else if let Some(rb) = &rb {
                xw = c.op("Add", &[&xw, rb], vec![])?;
            }
            let xw3 = c.reshape(&xw, &[seq, batch, gh])?;
            let xw = (0..seq)
                .map(|t| c.pick(&xw3, 0, t))
                .collect::<Result<Vec<_>>>()?;
            let zeros = |c: &mut Composer| {
                c.konst(
                    "zeros",
                    Tensor::f32(vec![batch, hidden], vec![0.0; (batch * hidden) as usize]),
                )
            };
            let h = match &h0 {
                Some(h0) => c.pick(h0, 0, d)?,
                None => zeros(c),
            };
            let cs = match (&c0, kind) {
                (Some(c0), _) => Some(c.pick(c0, 0, d)?),
                (None, Kind::Lstm) => Some(zeros(c)),
                _ => None,
            };
            let peep = match &p {
                Some(p) => {
                    let pd = c.pick(p, 0, d)?;
                    let part =
                        |c: &mut Composer, k: u64| c.slice(&pd, 0, k * hidden, (k + 1) * hidden);
                    Some([part(c, 0)?, part(c, 1)?, part(c, 2)?])
                }
                None => None,
            };
            dirs.push(Dir {
                xw,
                rt: rt_used,
                rh,
                p: peep,
                h0: h,
                c0: cs,
            });
        }
        let per = kind.defaults().len();
        let (mut ys, mut hs, mut cs) = (Vec::new(), Vec::new(), Vec::new());
        for (d, dir) in dirs.iter().enumerate() {
            let reverse = direction == "reverse" || d == 1;
            let act = &acts[d * per..(d + 1) * per];
            let steps: Vec<usize> = if reverse {
                (0..seq as usize).rev().collect()
            } else {
                (0..seq as usize).collect()
            };
            let mut h = dir.h0.clone();
            let mut cell = dir.c0.clone();
            let mut y = vec![String::new(); seq as usize];
            for t in steps {
                let (nh, nc) = step(
                    c,
                    kind,
                    dir,
                    act,
                    clip,
                    lbr,
                    hidden,
                    &dir.xw[t],
                    &h,
                    cell.as_deref(),
                )?;
                h = nh;
                cell = nc;
                y[t] = h.clone();
            }
            if wanted(0) {
                ys.push(c.stack(&y, 0)?);
            }
            hs.push(h);
            cs.extend(cell);
        }
        // Y: [seq, dirs, batch, hidden]; Y_h, Y_c: [dirs, batch, hidden]
        // (batch first in layout 1).
        let state_out = |c: &mut Composer, v: &[String]| -> Result<Val> {
            let s = c.stack(v, 0)?;
            let s = if layout == 0 {
                s
            } else {
                c.op("Transpose", &[&s], vec![attr_ints("perm", &[1, 0, 2])])?
            };
            Ok(c.val(&s))
        };
        let yh = state_out(c, &hs)?;
        // An unnamed Y is not built; its slot holds Y_h, never bound.
        let y = if wanted(0) {
            let y = c.stack(&ys, 1)?;
            let y = if layout == 0 {
                y
            } else {
                c.op("Transpose", &[&y], vec![attr_ints("perm", &[2, 0, 1, 3])])?
            };
            c.val(&y)
        } else {
            yh.clone()
        };
        let mut outs = vec![y, yh];
        if kind == Kind::Lstm && wanted(2) {
            outs.push(state_out(c, &cs)?);
        }
        Ok(outs)
    })?;
    Ok(outs)
}

/// `xw` with `bias` added to its columns `from..to` (of `width`): the bias
/// padded with zeros to the full width.
fn add_cols(
    c: &mut Composer,
    xw: &str,
    bias: &str,
    from: u64,
    to: u64,
    width: u64,
) -> Result<String> {
    let zeros = |c: &mut Composer, n: u64| {
        (n > 0).then(|| c.konst("zeros", Tensor::f32(vec![n], vec![0.0; n as usize])))
    };
    let mut parts: Vec<String> = Vec::new();
    parts.extend(zeros(c, from));
    parts.push(bias.to_string());
    parts.extend(zeros(c, width - to));
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let padded = if refs.len() == 1 {
        bias.to_string()
    } else {
        c.op("Concat", &refs, vec![attr_int("axis", 0)])?
    };
    c.op("Add", &[xw, &padded], vec![])
}

/// One time step: the new hidden state (and cell state).
#[allow(clippy::too_many_arguments)]
fn step(
    c: &mut Composer,
    kind: Kind,
    dir: &Dir,
    act: &[Act],
    clip: Option<f32>,
    lbr: bool,
    hidden: u64,
    xw: &str,
    h: &str,
    cell: Option<&str>,
) -> Result<(String, Option<String>)> {
    let clipped = |c: &mut Composer, v: String| -> Result<String> {
        match clip {
            None => Ok(v),
            Some(k) => {
                let (lo, hi) = (c.scalar(-k), c.scalar(k));
                c.op("Clip", &[&v, &lo, &hi], vec![])
            }
        }
    };
    let hr = c.op("MatMul", &[h, &dir.rt], vec![])?;
    let gate = |c: &mut Composer, v: &str, k: u64| c.slice(v, 1, k * hidden, (k + 1) * hidden);
    match kind {
        Kind::Rnn => {
            let s = c.op("Add", &[xw, &hr], vec![])?;
            let s = clipped(c, s)?;
            Ok((apply(c, &act[0], &s)?, None))
        }
        Kind::Gru => {
            // z, r, h; H = (1 - z) * h~ + z * H.
            let (xz, xr, xh) = (gate(c, xw, 0)?, gate(c, xw, 1)?, gate(c, xw, 2)?);
            let (hz, hrr) = (gate(c, &hr, 0)?, gate(c, &hr, 1)?);
            let z = c.op("Add", &[&xz, &hz], vec![])?;
            let z = clipped(c, z)?;
            let z = apply(c, &act[0], &z)?;
            let r = c.op("Add", &[&xr, &hrr], vec![])?;
            let r = clipped(c, r)?;
            let r = apply(c, &act[0], &r)?;
            let (rht, rbh) = dir.rh.as_ref().expect("a GRU direction has Rh");
            let rec = if lbr {
                let mut m = c.op("MatMul", &[h, rht], vec![])?;
                if let Some(rbh) = rbh {
                    m = c.op("Add", &[&m, rbh], vec![])?;
                }
                c.op("Mul", &[&r, &m], vec![])?
            } else {
                let rh = c.op("Mul", &[&r, h], vec![])?;
                let mut m = c.op("MatMul", &[&rh, rht], vec![])?;
                if let Some(rbh) = rbh {
                    m = c.op("Add", &[&m, rbh], vec![])?;
                }
                m
            };
            let s = c.op("Add", &[&xh, &rec], vec![])?;
            let s = clipped(c, s)?;
            let hh = apply(c, &act[1], &s)?;
            let one = c.scalar(1.0);
            let nz = c.op("Sub", &[&one, &z], vec![])?;
            let a = c.op("Mul", &[&nz, &hh], vec![])?;
            let bz = c.op("Mul", &[&z, h], vec![])?;
            Ok((c.op("Add", &[&a, &bz], vec![])?, None))
        }
        Kind::Lstm => {
            // i, o, f, c; C = f * C + i * c~; H = o * h(C).
            let cell = cell.expect("an LSTM step has a cell state");
            let s = c.op("Add", &[xw, &hr], vec![])?;
            let (i, o, f, cc) = (
                gate(c, &s, 0)?,
                gate(c, &s, 1)?,
                gate(c, &s, 2)?,
                gate(c, &s, 3)?,
            );
            let peep = |c: &mut Composer, v: String, k: usize, st: &str| -> Result<String> {
                match &dir.p {
                    Some(p) => {
                        let m = c.op("Mul", &[&p[k], st], vec![])?;
                        c.op("Add", &[&v, &m], vec![])
                    }
                    None => Ok(v),
                }
            };
            let i = peep(c, i, 0, cell)?;
            let i = clipped(c, i)?;
            let i = apply(c, &act[0], &i)?;
            let f = peep(c, f, 2, cell)?;
            let f = clipped(c, f)?;
            let f = apply(c, &act[0], &f)?;
            let cc = clipped(c, cc)?;
            let cc = apply(c, &act[1], &cc)?;
            let fc = c.op("Mul", &[&f, cell], vec![])?;
            let ic = c.op("Mul", &[&i, &cc], vec![])?;
            let new_c = c.op("Add", &[&fc, &ic], vec![])?;
            let o = peep(c, o, 1, &new_c)?;
            let o = clipped(c, o)?;
            let o = apply(c, &act[0], &o)?;
            let hc = apply(c, &act[2], &new_c)?;
            Ok((c.op("Mul", &[&o, &hc], vec![])?, Some(new_c)))
        }
    }
}
