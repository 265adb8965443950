//! LayerNormalization, RMSNormalization and SwiGLU, in the order of
//! operations of ONNX's reference implementation.
//!
//! LayerNormalization runs the `layernormalization` instruction on a
//! `rows x cols` view (`cols` = the product of the dims from `axis` on), with
//! `Scale`/`Bias` as `[cols]` views when they cover those dims exactly; a
//! scale or bias that broadcasts is applied after a unit-scale, zero-bias
//! normalization instead (the same operations in the same order). The `Mean`
//! and `InvStdDev` outputs, when read, are computed by a row reduction
//! beside it. RMSNormalization and SwiGLU are element-wise instructions and
//! row sums.

use super::elementwise::apply;
use super::{dims_of, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::member as m;
use glow_ir::{Opcode, Value};

fn node_base(node: &NodeProto, out: &str) -> String {
    if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    }
}

fn act(v: Value, dims: &[u64]) -> Val {
    Val::Act(Act {
        v,
        dims: dims.to_vec(),
        cl: false,
    })
}

fn scalar(name: &str, v: f32) -> Val {
    Val::Const {
        name: name.to_string(),
        t: Tensor::f32(vec![], vec![v]).into(),
    }
}

/// The normalized dims and the shape of the per-row statistics.
struct Rows {
    dims: Vec<u64>,
    rows: u64,
    cols: u64,
    /// `dims[..axis]` followed by ones: the statistics' ONNX shape.
    stat: Vec<u64>,
}

fn rows(l: &Lowerer, node: &NodeProto, dims: &[u64]) -> Result<Rows> {
    let attrs = Attrs(&node.attribute);
    if dims.is_empty() {
        return Err(l.err(format!("{} of a scalar", node.op_type)));
    }
    let axis = norm_axis(l, attrs.int("axis", -1), dims.len())?;
    if attrs.int("stash_type", 1) != 1 {
        return Err(l.unsupported(format!(
            "stash_type {} (only 1, float statistics)",
            attrs.int("stash_type", 1)
        )));
    }
    let mut stat = dims[..axis].to_vec();
    stat.resize(dims.len(), 1);
    Ok(Rows {
        dims: dims.to_vec(),
        rows: dims[..axis].iter().product(),
        cols: dims[axis..].iter().product(),
        stat,
    })
}

/// Row sums of a `[rows, cols]` buffer into a new `[rows]` buffer.
fn row_sum(l: &mut Lowerer, src: Value, rows: u64, name: &str, base: &str) -> Value {
    let dest = l.alloc(name, &[rows]);
    l.inst(
        base,
        Opcode::BatchedReduceAdd,
        &[dest, src],
        &[m::AXIS.to(1)],
    );
    dest
}

/// A one-input instruction into a new buffer of IR dims `dims`.
fn unary(l: &mut Lowerer, op: Opcode, src: Value, dims: &[u64], name: &str, base: &str) -> Value {
    let dest = l.alloc(name, dims);
    l.inst(base, op, &[dest, src], &[]);
    dest
}

/// Whether dims `d`, leading ones dropped, are the normalized dims'
/// trailing ones with `cols` elements (so a `[cols]` view holds them).
fn covers(d: &[u64], r: &Rows) -> bool {
    let k = d.iter().position(|&x| x != 1).unwrap_or(d.len());
    let d = &d[k..];
    d.len() <= r.dims.len()
        && d == &r.dims[r.dims.len() - d.len()..]
        && d.iter().product::<u64>() == r.cols
}

/// `v` as a `[cols]` view (`covers` holds).
fn cols_view(l: &mut Lowerer, v: &Val, r: &Rows, out: &str) -> Value {
    let a = l.act(v);
    let a = l.to_plain(&a, out);
    l.view(&format!("{out}.vec"), a.v, &[r.cols])
}

/// What LayerNormalization and RMSNormalization start from: the output
/// and base names, epsilon, the plain input, its rows and the scale.
struct NormInput {
    out: String,
    base: String,
    eps: f32,
    xa: Act,
    r: Rows,
    w: Val,
}

fn norm_input(l: &mut Lowerer, node: &NodeProto) -> Result<NormInput> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = node_base(node, &out);
    let eps = Attrs(&node.attribute).float("epsilon", 1e-5);
    let x = l.input(node, 0)?;
    let xa = l.act(&x);
    let xa = l.to_plain(&xa, &out);
    let r = rows(l, node, &xa.dims)?;
    let w = l.input(node, 1)?;
    Ok(NormInput {
        out,
        base,
        eps,
        xa,
        r,
        w,
    })
}

pub(super) fn layer_norm(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let n = norm_input(l, node)?;
    let (out, base, eps, xa, r, w) = (n.out, n.base, n.eps, n.xa, n.r, n.w);
    let b = l.opt_input(node, 2)?;
    for v in std::iter::once(&w).chain(b.as_ref()) {
        super::elementwise::broadcast_dims(l, &dims_of(v), &r.dims)?;
    }
    let fits = |v: &Val| covers(&dims_of(v), &r);
    // Both fit the instruction, or both are applied after it.
    let (sv, bv, after) = if fits(&w) && b.as_ref().is_none_or(fits) {
        let sv = cols_view(l, &w, &r, &out);
        let bv = match &b {
            Some(b) => cols_view(l, b, &r, &out),
            None => l.splat_buffer(&format!("{out}.bias"), &[r.cols], 0.0),
        };
        (sv, bv, false)
    } else {
        (
            l.splat_buffer(&format!("{out}.one"), &[r.cols], 1.0),
            l.splat_buffer(&format!("{out}.zero"), &[r.cols], 0.0),
            true,
        )
    };
    let xs = l.view(&format!("{out}.rows"), xa.v, &[r.rows, r.cols]);
    let dest = l.alloc(&out, &r.dims);
    let dv = l.view(&format!("{out}.rows"), dest, &[r.rows, r.cols]);
    l.inst(
        &base,
        Opcode::LayerNormalization,
        &[dv, xs, sv, bv],
        &[m::EPSILON.to(eps as f64)],
    );
    let mut y = act(dest, &r.dims);
    if after {
        y = apply(
            l,
            Opcode::ElementMul,
            &y,
            &w,
            &format!("{out}.scaled"),
            &base,
        )?;
        if let Some(b) = &b {
            y = apply(l, Opcode::ElementAdd, &y, b, &out, &base)?;
        }
    }
    let mut outs = vec![y];
    let wanted = |i: usize| {
        node.output
            .get(i)
            .is_some_and(|n| !n.is_empty() && l.needed.contains(n))
    };
    if wanted(1) || wanted(2) {
        let (mean, inv) = statistics(l, xs, &r, eps, &node.output, &base)?;
        outs.push(mean);
        outs.push(inv);
    }
    Ok(outs)
}

/// LayerNormalization's `Mean` and `InvStdDev`, as the reference computes
/// them: `mean = sum / cols`, `inv = 1 / sqrt(sum((x - mean)^2) / cols + eps)`.
fn statistics(
    l: &mut Lowerer,
    xs: Value,
    r: &Rows,
    eps: f32,
    outputs: &[String],
    base: &str,
) -> Result<(Val, Val)> {
    let name = |i: usize, what: &str| {
        outputs
            .get(i)
            .filter(|n| !n.is_empty())
            .cloned()
            .unwrap_or_else(|| format!("{}.{what}", outputs[0]))
    };
    let (mean_name, inv_name) = (name(1, "mean"), name(2, "invstddev"));
    let cols = scalar(&format!("{mean_name}.count"), r.cols as f32);
    let rc = [r.rows, 1];
    let s = row_sum(l, xs, r.rows, &format!("{mean_name}.sum"), base);
    let s = l.view(&format!("{mean_name}.col"), s, &rc);
    let s = act(s, &rc);
    let mean = apply(l, Opcode::ElementDiv, &s, &cols, &mean_name, base)?;
    let xv = act(xs, &[r.rows, r.cols]);
    let diff = apply(
        l,
        Opcode::ElementSub,
        &xv,
        &mean,
        &format!("{inv_name}.diff"),
        base,
    )?;
    let sq = apply(
        l,
        Opcode::ElementMul,
        &diff,
        &diff,
        &format!("{inv_name}.sq"),
        base,
    )?;
    let sq = l.act(&sq).v;
    let ss = row_sum(l, sq, r.rows, &format!("{inv_name}.sum"), base);
    let ss = l.view(&format!("{inv_name}.col"), ss, &rc);
    let inv = inv_root_of_mean(
        l,
        &act(ss, &rc),
        &cols,
        eps,
        &inv_name,
        [
            &format!("{inv_name}.var"),
            &format!("{inv_name}.vareps"),
            &format!("{inv_name}.stddev"),
            &inv_name,
        ],
        base,
    )?;
    let mv = l.act(&mean).v;
    let iv = l.act(&inv).v;
    let mean = l.view(&mean_name, mv, &r.stat);
    let inv = l.view(&inv_name, iv, &r.stat);
    Ok((act(mean, &r.stat), act(inv, &r.stat)))
}

/// `1 / sqrt(sum / count + eps)`, each step named by `names` (the
/// quotient, plus eps, the root, the result); the constants are named
/// after `prefix`.
#[allow(clippy::too_many_arguments)]
fn inv_root_of_mean(
    l: &mut Lowerer,
    sum: &Val,
    count: &Val,
    eps: f32,
    prefix: &str,
    names: [&str; 4],
    base: &str,
) -> Result<Val> {
    let dims = dims_of(sum);
    let q = apply(l, Opcode::ElementDiv, sum, count, names[0], base)?;
    let e = scalar(&format!("{prefix}.eps"), eps);
    let qe = apply(l, Opcode::ElementAdd, &q, &e, names[1], base)?;
    let qe = l.act(&qe).v;
    let root = unary(l, Opcode::ElementSqrt, qe, &dims, names[2], base);
    let one = scalar(&format!("{prefix}.one"), 1.0);
    apply(
        l,
        Opcode::ElementDiv,
        &one,
        &act(root, &dims),
        names[3],
        base,
    )
}

/// `y = x * (1 / sqrt(mean(x^2 over the axes from axis) + eps)) * scale`.
pub(super) fn rms_norm(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let n = norm_input(l, node)?;
    let (out, base, eps, xa, r, w) = (n.out, n.base, n.eps, n.xa, n.r, n.w);
    super::elementwise::broadcast_dims(l, &dims_of(&w), &r.dims)?;
    let xv = Val::Act(xa.clone());
    let sq = apply(l, Opcode::ElementMul, &xv, &xv, &format!("{out}.sq"), &base)?;
    let sq = l.act(&sq).v;
    let sq = l.view(&format!("{out}.rows"), sq, &[r.rows, r.cols]);
    let s = row_sum(l, sq, r.rows, &format!("{out}.sum"), &base);
    let cols = scalar(&format!("{out}.count"), r.cols as f32);
    let inv = inv_root_of_mean(
        l,
        &act(s, &[r.rows]),
        &cols,
        eps,
        &out,
        [
            &format!("{out}.mean"),
            &format!("{out}.meaneps"),
            &format!("{out}.rms"),
            &format!("{out}.inv"),
        ],
        &base,
    )?;
    let iv = l.act(&inv).v;
    let iv = l.view(&format!("{out}.inv"), iv, &r.stat);
    let y = apply(
        l,
        Opcode::ElementMul,
        &xv,
        &act(iv, &r.stat),
        &format!("{out}.normed"),
        &base,
    )?;
    let y = apply(l, Opcode::ElementMul, &y, &w, &out, &base)?;
    Ok(vec![y])
}

/// SwiGLU: `Swish(a; alpha) * b` on equal shapes (no broadcasting).
pub(super) fn swiglu(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = node_base(node, &out);
    let (a, b) = (l.input(node, 0)?, l.input(node, 1)?);
    if dims_of(&a) != dims_of(&b) {
        return Err(l.err(format!(
            "inputs have shapes {:?} and {:?} (SwiGLU does not broadcast)",
            dims_of(&a),
            dims_of(&b)
        )));
    }
    let swish = NodeProto {
        input: vec![node.input[0].clone()],
        output: vec![format!("{out}.swish")],
        name: format!("{base}.swish"),
        op_type: "Swish".into(),
        attribute: node
            .attribute
            .iter()
            .filter(|a| a.name == "alpha")
            .cloned()
            .collect(),
        ..Default::default()
    };
    let s = super::math::unary(l, &swish)?.remove(0);
    Ok(vec![apply(l, Opcode::ElementMul, &s, &b, &out, &base)?])
}
