//! Ops lowered as a small graph of other ONNX ops (the normalizations, as
//! their ONNX function bodies; Det by cofactors; the recurrent ops in
//! `recurrent.rs`): each
//! step is a node built here and lowered by the ordinary dispatch, so the
//! composite op is exactly as right as the ops it is made of. The nodes are
//! written for one opset (`OPSET`), whatever the model's.

use super::{norm_axis, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::{AttributeProto, NodeProto};
use crate::tensor::Tensor;

/// The opset the composed nodes are written for (axes and shapes as inputs).
const OPSET: i64 = 18;

/// Builds and lowers the nodes of one composite op.
pub(super) struct Composer<'a, 'o> {
    pub l: &'a mut Lowerer<'o>,
    base: String,
    count: usize,
}

/// Runs `f` with a composer for the op whose values are named after `base`;
/// the model's opset is restored afterwards, also on an error.
pub(super) fn with<T>(
    l: &mut Lowerer,
    base: &str,
    f: impl FnOnce(&mut Composer) -> Result<T>,
) -> Result<T> {
    let saved = l.opset;
    l.opset = OPSET;
    let r = f(&mut Composer {
        l,
        base: base.to_string(),
        count: 0,
    });
    l.opset = saved;
    r
}

pub(super) fn attr_int(name: &str, i: i64) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 2,
        i,
        ..Default::default()
    }
}

pub(super) fn attr_ints(name: &str, ints: &[i64]) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 7,
        ints: ints.to_vec(),
        ..Default::default()
    }
}

pub(super) fn attr_float(name: &str, f: f32) -> AttributeProto {
    AttributeProto {
        name: name.into(),
        r#type: 1,
        f,
        ..Default::default()
    }
}

impl Composer<'_, '_> {
    /// A value name not bound yet: `base.tag.N`, N counting up.
    fn name(&mut self, tag: &str) -> String {
        loop {
            self.count += 1;
            let name = format!("{}.{tag}.{}", self.base, self.count);
            if !self.l.vals.contains_key(&name) {
                return name;
            }
        }
    }

    /// Binds constant `t` and returns its name.
    pub fn konst(&mut self, tag: &str, t: Tensor) -> String {
        let name = self.name(tag);
        self.l.bind(
            &name,
            Val::Const {
                name: name.clone(),
                t: t.into(),
            },
        );
        name
    }

    /// A float scalar constant.
    pub fn scalar(&mut self, v: f32) -> String {
        self.konst("c", Tensor::f32(vec![], vec![v]))
    }

    /// A 1-D int64 constant (axes, shapes, slice bounds).
    pub fn ints(&mut self, v: &[i64]) -> String {
        self.konst("i", Tensor::i64(vec![v.len() as u64], v.to_vec()))
    }

    /// Lowers `op(inputs)` with `attrs` and returns the names of its first
    /// `n` outputs.
    pub fn node(
        &mut self,
        op: &str,
        inputs: &[&str],
        attrs: Vec<AttributeProto>,
        n: usize,
    ) -> Result<Vec<String>> {
        let tag = op.to_ascii_lowercase();
        let outs: Vec<String> = (0..n).map(|_| self.name(&tag)).collect();
        let node = NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: outs.clone(),
            name: format!("{}.{tag}", self.base),
            op_type: op.into(),
            attribute: attrs,
            ..Default::default()
        };
        let vals = self.l.dispatch(&node)?;
        self.l.limit_error()?;
        if vals.len() < n {
            return Err(self
                .l
                .err(format!("{op} gave {} of {n} outputs", vals.len())));
        }
        for (name, v) in outs.iter().zip(vals) {
            self.l.bind(name, v);
        }
        Ok(outs)
    }

    /// Lowers a one-output node.
    pub fn op(&mut self, op: &str, inputs: &[&str], attrs: Vec<AttributeProto>) -> Result<String> {
        Ok(self.node(op, inputs, attrs, 1)?.remove(0))
    }

    /// The value bound to `name`.
    pub fn val(&self, name: &str) -> Val {
        self.l.vals[name].clone()
    }

    /// The ONNX dims of the value bound to `name`.
    pub fn dims(&self, name: &str) -> Vec<u64> {
        match &self.l.vals[name] {
            Val::Const { t, .. } => t.dims.clone(),
            Val::Act(a) => a.dims.clone(),
        }
    }

    /// A reduction over `axes`, keeping them as 1s.
    pub fn reduce(&mut self, op: &str, x: &str, axes: &[usize]) -> Result<String> {
        let axes: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
        let a = self.ints(&axes);
        self.op(op, &[x, &a], vec![attr_int("keepdims", 1)])
    }

    pub fn reshape(&mut self, x: &str, dims: &[u64]) -> Result<String> {
        let d: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let s = self.ints(&d);
        self.op("Reshape", &[x, &s], vec![])
    }

    /// `x[start..end]` along `axis`.
    pub fn slice(&mut self, x: &str, axis: usize, start: u64, end: u64) -> Result<String> {
        let (s, e, a) = (
            self.ints(&[start as i64]),
            self.ints(&[end as i64]),
            self.ints(&[axis as i64]),
        );
        self.op("Slice", &[x, &s, &e, &a], vec![])
    }

    /// Index `i` of `axis`, with the axis removed.
    pub fn pick(&mut self, x: &str, axis: usize, i: u64) -> Result<String> {
        let s = self.slice(x, axis, i, i + 1)?;
        let a = self.ints(&[axis as i64]);
        self.op("Squeeze", &[&s, &a], vec![])
    }

    /// The values stacked along a new `axis`.
    pub fn stack(&mut self, xs: &[String], axis: usize) -> Result<String> {
        let a = self.ints(&[axis as i64]);
        let mut parts = Vec::with_capacity(xs.len());
        for x in xs {
            parts.push(self.op("Unsqueeze", &[x, &a], vec![])?);
        }
        if parts.len() == 1 {
            return Ok(parts.remove(0));
        }
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        self.op("Concat", &refs, vec![attr_int("axis", axis as i64)])
    }
}

/// The base name of a node's values: its first named output, else its name.
pub(super) fn base_of(node: &NodeProto) -> String {
    node.output
        .iter()
        .find(|o| !o.is_empty())
        .cloned()
        .or_else(|| (!node.name.is_empty()).then(|| node.name.clone()))
        .unwrap_or_else(|| node.op_type.to_ascii_lowercase())
}

/// LpNormalization, MeanVarianceNormalization, InstanceNormalization and
/// GroupNormalization as their ONNX function bodies.
pub(super) fn normalization(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let x_val = l.input(node, 0)?;
    let x = node.input[0].as_str();
    let d = match &x_val {
        Val::Const { t, .. } => t.dims.clone(),
        Val::Act(a) => a.dims.clone(),
    };
    let r = d.len();
    let model_opset = l.opset;
    let op = node.op_type.as_str();
    if op != "LpNormalization" && r < 3 {
        return Err(l.unsupported(format!("{op} of a rank-{r} input (rank 3 and up only)")));
    }
    let base = base_of(node);
    let y = with(l, &base, |c| match op {
        "LpNormalization" => {
            let axis = norm_axis(c.l, attrs.int("axis", -1), r)?;
            let norm = match attrs.int("p", 2) {
                2 => {
                    let sq = c.op("Mul", &[x, x], vec![])?;
                    let s = c.reduce("ReduceSum", &sq, &[axis])?;
                    c.op("Sqrt", &[&s], vec![])?
                }
                1 => {
                    let a = c.op("Abs", &[x], vec![])?;
                    c.reduce("ReduceSum", &a, &[axis])?
                }
                p => {
                    return Err(c
                        .l
                        .unsupported(format!("LpNormalization with p = {p} (1 or 2)")))
                }
            };
            // ONNX gives 0 where the norm is 0; x is all 0 there, so
            // dividing by 1 instead is exact.
            let (zero, one) = (c.scalar(0.0), c.scalar(1.0));
            let z = c.op("LessOrEqual", &[&norm, &zero], vec![])?;
            let den = c.op("Where", &[&z, &one, &norm], vec![])?;
            c.op("Div", &[x, &den], vec![])
        }
        "MeanVarianceNormalization" => {
            let axes = match attrs.ints("axes") {
                Some(a) => a
                    .iter()
                    .map(|&a| norm_axis(c.l, a, r))
                    .collect::<Result<Vec<_>>>()?,
                None => vec![0, 2, 3].into_iter().filter(|&a| a < r).collect(),
            };
            // (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9), as ONNX's body.
            let mean = c.reduce("ReduceMean", x, &axes)?;
            let sq = c.op("Mul", &[x, x], vec![])?;
            let mean_sq = c.reduce("ReduceMean", &sq, &axes)?;
            let sq_mean = c.op("Mul", &[&mean, &mean], vec![])?;
            let var = c.op("Sub", &[&mean_sq, &sq_mean], vec![])?;
            let std = c.op("Sqrt", &[&var], vec![])?;
            let eps = c.scalar(1e-9);
            let den = c.op("Add", &[&std, &eps], vec![])?;
            let num = c.op("Sub", &[x, &mean], vec![])?;
            c.op("Div", &[&num, &den], vec![])
        }
        "InstanceNormalization" => {
            let axes: Vec<usize> = (2..r).collect();
            let eps = attrs.float("epsilon", 1e-5);
            let n = normalized(c, x, &axes, eps)?;
            let mut cd = vec![d[1]];
            cd.resize(r - 1, 1);
            affine(c, &n, node, &cd)
        }
        _ => {
            let g = attrs.int("num_groups", 0);
            let ch = d[1];
            if g <= 0 || ch % g as u64 != 0 {
                return Err(c
                    .l
                    .err(format!("num_groups {g} does not divide the {ch} channels")));
            }
            let g = g as u64;
            let rest: u64 = d[1..].iter().product::<u64>() / g;
            let xr = c.reshape(x, &[d[0], g, rest])?;
            let eps = attrs.float("epsilon", 1e-5);
            let n = normalized(c, &xr, &[2], eps)?;
            if model_opset >= 21 {
                // Scale and bias per channel.
                let n = c.reshape(&n, &d)?;
                let mut cd = vec![ch];
                cd.resize(r - 1, 1);
                affine(c, &n, node, &cd)
            } else {
                // Opset 18: scale and bias per group.
                let y = affine(c, &n, node, &[g, 1])?;
                c.reshape(&y, &d)
            }
        }
    })?;
    Ok(vec![l.vals[&y].clone()])
}

/// `(x - mean) / sqrt(var + eps)` over `axes`.
fn normalized(c: &mut Composer, x: &str, axes: &[usize], eps: f32) -> Result<String> {
    let mean = c.reduce("ReduceMean", x, axes)?;
    let dev = c.op("Sub", &[x, &mean], vec![])?;
    let sq = c.op("Mul", &[&dev, &dev], vec![])?;
    let var = c.reduce("ReduceMean", &sq, axes)?;
    let e = c.scalar(eps);
    let v = c.op("Add", &[&var, &e], vec![])?;
    let den = c.op("Sqrt", &[&v], vec![])?;
    c.op("Div", &[&dev, &den], vec![])
}

/// `n * scale + bias`, the node's inputs 1 and 2 reshaped to `dims`.
fn affine(c: &mut Composer, n: &str, node: &NodeProto, dims: &[u64]) -> Result<String> {
    c.l.input(node, 1)?;
    c.l.input(node, 2)?;
    let want: u64 = dims.iter().product();
    for i in [1, 2] {
        let got: u64 = c.dims(&node.input[i]).iter().product();
        if got != want {
            return Err(c.l.err(format!(
                "input {i} (`{}`) has {got} values, not {want}",
                node.input[i]
            )));
        }
    }
    let s = c.reshape(&node.input[1], dims)?;
    let b = c.reshape(&node.input[2], dims)?;
    let m = c.op("Mul", &[n, &s], vec![])?;
    c.op("Add", &[&m, &b], vec![])
}

/// The largest matrix Det expands by cofactors (4! products of 4).
const DET_MAX: u64 = 4;

/// Det of `[..., n, n]` by cofactor expansion along the first row, for
/// n ≤ `DET_MAX`: exact arithmetic on the entries, no pivoting needed.
pub(super) fn det(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let x = l.input(node, 0)?;
    let d = match &x {
        Val::Const { t, .. } => t.dims.clone(),
        Val::Act(a) => a.dims.clone(),
    };
    let r = d.len();
    if r < 2 || d[r - 1] != d[r - 2] {
        return Err(l.err(format!(
            "Det needs square matrices in its last two dims, not {d:?}"
        )));
    }
    let n = d[r - 1];
    if n > DET_MAX {
        return Err(l.unsupported(format!(
            "Det of {n} x {n} matrices (up to {DET_MAX} x {DET_MAX})"
        )));
    }
    let x = node.input[0].as_str();
    let y = with(l, &base_of(node), |c| {
        // Entry (i, j) of every matrix, as [..., 1, 1].
        let mut e = Vec::with_capacity((n * n) as usize);
        for i in 0..n {
            let row = c.slice(x, r - 2, i, i + 1)?;
            for j in 0..n {
                e.push(c.slice(&row, r - 1, j, j + 1)?);
            }
        }
        let rows: Vec<u64> = (0..n).collect();
        let det = cofactor(c, &e, n, &rows, &rows)?;
        let axes = c.ints(&[r as i64 - 2, r as i64 - 1]);
        c.op("Squeeze", &[&det, &axes], vec![])
    })?;
    Ok(vec![l.vals[&y].clone()])
}

/// The determinant of the minor with rows `rows[0..]` and columns `cols`.
fn cofactor(c: &mut Composer, e: &[String], n: u64, rows: &[u64], cols: &[u64]) -> Result<String> {
    let at = |i: u64, j: u64| e[(i * n + j) as usize].clone();
    if cols.len() == 1 {
        return Ok(at(rows[0], cols[0]));
    }
    let mut acc: Option<String> = None;
    for (k, &j) in cols.iter().enumerate() {
        let rest: Vec<u64> = cols.iter().copied().filter(|&c| c != j).collect();
        let minor = cofactor(c, e, n, &rows[1..], &rest)?;
        let term = c.op("Mul", &[&at(rows[0], j), &minor], vec![])?;
        acc = Some(match acc {
            None => term,
            Some(a) => {
                let op = if k % 2 == 0 { "Add" } else { "Sub" };
                c.op(op, &[&a, &term], vec![])?
            }
        });
    }
    Ok(acc.expect("a minor has a column"))
}

/// BatchNormalization with `training_mode` = 1 (opset 14 and up): the
/// batch's mean and population variance over every axis but the channels
/// normalize x, and the outputs `running_mean` and `running_var` are
/// `input * momentum + batch * (1 - momentum)`, as the reference computes.
pub(super) fn batchnorm_training(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let d = match l.input(node, 0)? {
        Val::Const { t, .. } => t.dims.clone(),
        Val::Act(a) => a.dims.clone(),
    };
    if d.len() < 2 {
        return Err(l.err(format!("input {d:?} has no channel axis")));
    }
    let eps = attrs.float("epsilon", 1e-5);
    let momentum = attrs.float("momentum", 0.9);
    let axes: Vec<usize> = (0..d.len()).filter(|&a| a != 1).collect();
    let mut cd = vec![d[1]];
    cd.resize(d.len() - 1, 1);
    let x = node.input[0].as_str();
    let base = base_of(node);
    let outs = with(l, &base, |c| {
        let mean = c.reduce("ReduceMean", x, &axes)?;
        let dev = c.op("Sub", &[x, &mean], vec![])?;
        let sq = c.op("Mul", &[&dev, &dev], vec![])?;
        let var = c.reduce("ReduceMean", &sq, &axes)?;
        let e = c.scalar(eps);
        let v = c.op("Add", &[&var, &e], vec![])?;
        let den = c.op("Sqrt", &[&v], vec![])?;
        let n = c.op("Div", &[&dev, &den], vec![])?;
        let y = affine(c, &n, node, &cd)?;
        let (keep, take) = (c.scalar(momentum), c.scalar(1.0 - momentum));
        let mut outs = vec![y];
        for (i, batch) in [(3, mean), (4, var)] {
            let running = c.reshape(&node.input[i], &[d[1]])?;
            let batch = c.reshape(&batch, &[d[1]])?;
            let kept = c.op("Mul", &[&running, &keep], vec![])?;
            let taken = c.op("Mul", &[&batch, &take], vec![])?;
            outs.push(c.op("Add", &[&kept, &taken], vec![])?);
        }
        Ok(outs)
    })?;
    Ok(outs.iter().map(|o| l.vals[o].clone()).collect())
}
