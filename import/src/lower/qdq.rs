//! Quantized ONNX: QuantizeLinear and DequantizeLinear, the QDQ folds that
//! turn `DequantizeLinear -> float op -> QuantizeLinear` into one quantized
//! instruction (as onnxruntime's QDQ transformer does), and QLinearConv,
//! QLinearMatMul, ConvInteger, MatMulInteger, DynamicQuantizeLinear.
//!
//! With constant (initializer) scales and zero points a quantized ONNX value
//! is an IR buffer of a quantized kind, `ui8[S:s O:zp]`, holding the same
//! bytes as the ONNX uint8 tensor (plain and quantized kinds of one width are
//! reinterpreted by a `tensorview`). QuantizeLinear becomes `quantize`;
//! DequantizeLinear of an activation is deferred (`Lowerer::pending`): a
//! reader that folds uses the quantized buffer, any other reader gets a
//! `dequantize` on first use. DequantizeLinear of a constant is folded into a
//! float constant, and its integer data and parameters are kept
//! (`Lowerer::qconsts`) for the folds, which use the int8 weights and int32
//! biases as they are.
//!
//! A fold applies when the float op's result has exactly one reader, a
//! QuantizeLinear with constant per-tensor parameters, and the op's inputs
//! are deferred dequantizations (and dequantized constants for weights and
//! biases); it lowers the op on quantized buffers with the QuantizeLinear's
//! type as its result, and that QuantizeLinear is skipped. Anything else
//! stays as float ops between a `dequantize` and a `quantize`.
//!
//! Scales or zero points that are graph inputs or computed (the official
//! node tests) cannot be quantized kinds; those ops are lowered with float
//! arithmetic that follows the ONNX definition step by step (exact integer
//! results where the float accumulator is exact, see `integer`).

use super::compose::{self, attr_int};
use super::nn;
use super::ops::{Qdq, QdqFold};
use super::*;
use crate::onnx::dtype;
use glow_ir::member as m;

/// A dequantized constant: its integer data and quantization parameters.
#[derive(Clone, Debug)]
pub(crate) struct QConst {
    /// The integers, in ONNX dims.
    pub q: Tensor,
    /// ONNX element type of `q` (INT8, UINT8 or INT32).
    pub dtype: i32,
    /// One scale (per tensor) or one per index of `axis`.
    pub scales: Vec<f32>,
    pub zps: Vec<i64>,
    pub axis: usize,
    /// The ONNX name of the integers (the weights are named after it).
    pub src: String,
}

impl QConst {
    fn scale(&self, c: usize) -> f32 {
        self.scales[if self.scales.len() == 1 { 0 } else { c }]
    }
    fn zp(&self, c: usize) -> i64 {
        self.zps[if self.zps.len() == 1 { 0 } else { c }]
    }
    /// Every index shares one scale and zero point.
    fn uniform(&self) -> bool {
        let (s, z) = (self.scales[0], self.zps[0]);
        self.scales.iter().all(|x| x.to_bits() == s.to_bits()) && self.zps.iter().all(|&x| x == z)
    }
}

/// The quantized IR kind of ONNX type `dt` with `scale` and `zp`, when it
/// has one (INT8, UINT8, INT32; a positive finite scale; zp in range).
fn qkind(dt: i32, scale: f32, zp: i64) -> Option<ElemKind> {
    if !(scale.is_finite() && scale > 0.0) {
        return None;
    }
    let offset = i32::try_from(zp).ok()?;
    let k = match dt {
        dtype::INT8 => ElemKind::Int8Q { scale, offset },
        dtype::UINT8 => ElemKind::UInt8Q { scale, offset },
        dtype::INT32 => ElemKind::Int32Q { scale, offset },
        _ => return None,
    };
    glow_ir::quant::check_kind(k).ok().map(|_| k)
}

/// The plain kind holding the same bytes as a quantized kind.
fn plain_of(k: ElemKind) -> ElemKind {
    match k {
        ElemKind::Int8Q { .. } => ElemKind::Int8,
        ElemKind::UInt8Q { .. } => ElemKind::UInt8,
        ElemKind::Int32Q { .. } => ElemKind::Index32,
        k => k,
    }
}

/// The ONNX element type of a plain or quantized 8/32-bit kind.
fn dtype_of_kind(k: ElemKind) -> Option<i32> {
    Some(match plain_of(k) {
        ElemKind::Int8 => dtype::INT8,
        ElemKind::UInt8 => dtype::UINT8,
        ElemKind::Index32 => dtype::INT32,
        _ => return None,
    })
}

/// `a` reinterpreted as elements of `k` (same width): a `tensorview`.
fn reinterpret(l: &mut Lowerer, a: &Act, k: ElemKind, tag: &str) -> Act {
    if l.kind(a) == k {
        return a.clone();
    }
    let phys = a.phys();
    let base = format!("{}.{tag}", l.f.value_name(a.v));
    let v = l
        .b()
        .tensorview(&base, a.v, Type::new(k, &phys), vec![0; phys.len()]);
    Act { v, ..a.clone() }
}

/// A constant input by name (bound as a constant), if it is one.
fn konst<'a>(l: &'a Lowerer, name: &str) -> Option<&'a Tensor> {
    match l.vals.get(name) {
        Some(Val::Const { t, .. }) => Some(t),
        _ => None,
    }
}

/// The ONNX element type of a value: a constant's recorded type, an
/// activation's kind.
fn dtype_of(l: &Lowerer, name: &str) -> Option<i32> {
    match l.vals.get(name) {
        Some(Val::Const { .. }) => l.dtypes.get(name).copied(),
        Some(Val::Act(a)) => dtype_of_kind(l.kind(a)),
        None => l.pending.get(name).and_then(|a| dtype_of_kind(l.kind(a))),
    }
}

fn input_name(node: &NodeProto, i: usize) -> Option<&str> {
    node.input
        .get(i)
        .map(String::as_str)
        .filter(|s| !s.is_empty())
}

/// Constant scales and zero points of a Q/DQ node (inputs 1 and 2): `None`
/// when either is a run-time value.
struct Params {
    scales: Vec<f32>,
    zps: Vec<i64>,
    /// The normalized axis when there is more than one scale.
    axis: usize,
}

fn const_params(l: &Lowerer, node: &NodeProto, rank: usize) -> Result<Option<Params>> {
    let Some(sname) = input_name(node, 1) else {
        return Err(l.err("missing input 1 (the scale)"));
    };
    let Some(s) = konst(l, sname) else {
        return Ok(None);
    };
    let zps = match input_name(node, 2) {
        None => vec![0; s.len()],
        Some(z) => match konst(l, z) {
            Some(t) => t.to_i64(),
            None => return Ok(None),
        },
    };
    let scales = s.to_f32();
    if scales.is_empty() || zps.len() != scales.len() {
        return Err(l.err(format!(
            "{} scales but {} zero points",
            scales.len(),
            zps.len()
        )));
    }
    let attrs = Attrs(&node.attribute);
    let axis = if scales.len() > 1 {
        if s.dims.len() != 1 {
            return Err(l.unsupported(format!(
                "a scale of dims {:?} (per-tensor and per-axis 1-D scales are lowered)",
                s.dims
            )));
        }
        norm_axis(l, attrs.int("axis", 1), rank)?
    } else {
        0
    };
    Ok(Some(Params { scales, zps, axis }))
}

/// `block_size` (0: per tensor or per axis).
fn block_size(l: &Lowerer, node: &NodeProto) -> Result<u64> {
    let b = Attrs(&node.attribute).int("block_size", 0);
    u64::try_from(b).map_err(|_| l.err(format!("negative `block_size` {b}")))
}

/// The element type of QuantizeLinear's result: the zero point's type, or
/// `output_dtype`, else UINT8.
fn q_out_dtype(l: &Lowerer, node: &NodeProto) -> Result<i32> {
    let dt = match input_name(node, 2) {
        Some(z) => dtype_of(l, z).unwrap_or(dtype::UINT8),
        None => match Attrs(&node.attribute).int("output_dtype", 0) {
            0 => dtype::UINT8,
            d => d as i32,
        },
    };
    if !matches!(dt, dtype::INT8 | dtype::UINT8) {
        return Err(l.unsupported(format!(
            "QuantizeLinear to {} (INT8 and UINT8 are lowered)",
            dtype::name(dt)
        )));
    }
    Ok(dt)
}

fn range_of(dt: i32) -> (i64, i64) {
    match dt {
        dtype::INT8 => (-128, 127),
        dtype::UINT8 => (0, 255),
        _ => (i32::MIN as i64, i32::MAX as i64),
    }
}

/// `v` of a tensor of `dims` broadcast per index of `axis` (or one value).
fn per_axis<'a, T: Copy>(v: &'a [T], dims: &[u64], axis: usize) -> impl Fn(usize) -> T + 'a {
    let dims = dims.to_vec();
    let inner: u64 = dims.get(axis + 1..).map_or(1, |d| d.iter().product());
    let n = dims.get(axis).copied().unwrap_or(1);
    move |i: usize| {
        if v.len() == 1 {
            v[0]
        } else {
            v[((i as u64 / inner) % n) as usize]
        }
    }
}

// ---------------------------------------------------------------------------
// QuantizeLinear, DequantizeLinear.

pub(super) fn quantize_linear(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let rank = x.dims().len();
    let dt = q_out_dtype(l, node)?;
    let block = block_size(l, node)?;
    let params = if block == 0 {
        const_params(l, node, rank)?
    } else {
        None
    };
    if let Val::Act(a) = &x {
        if l.kind(a) != ElemKind::Float {
            return Err(l.unsupported(format!(
                "QuantizeLinear of a run-time {} tensor (float is lowered)",
                l.kind(a)
            )));
        }
    }
    if let Some(p) = &params {
        if let Val::Const { t, .. } = &x {
            // Folded at import time: the integers, typed for later readers.
            let xs = t.to_f32();
            let s = per_axis(&p.scales, &t.dims, p.axis);
            let z = per_axis(&p.zps, &t.dims, p.axis);
            let range = range_of(dt);
            let q = xs
                .iter()
                .enumerate()
                .map(|(i, &v)| glow_ir::quant::quantize(v, s(i), z(i) as i32, range))
                .collect();
            l.dtypes.insert(out.clone(), dt);
            return Ok(vec![Val::Const {
                name: out,
                t: Tensor::i64(t.dims.clone(), q).into(),
            }]);
        }
        if p.scales.len() == 1 {
            if let (Some(k), Val::Act(a)) = (qkind(dt, p.scales[0], p.zps[0]), &x) {
                let dest = l.alloc_kind(&out, &a.phys(), k);
                let base = nn::node_base(node, &out);
                l.inst(&base, Opcode::Quantize, &[dest, a.v], &[]);
                return Ok(vec![Val::Act(Act {
                    v: dest,
                    ..a.clone()
                })]);
            }
        }
    }
    if let (Some(p), Val::Act(a)) = (&params, &x) {
        if p.scales.len() > 1 {
            let kind = if dt == dtype::INT8 {
                ElemKind::Int8
            } else {
                ElemKind::UInt8
            };
            let dest = l.alloc_kind(&out, &a.phys(), kind);
            per_axis_inst(l, node, &out, Opcode::Quantize, dest, a, p);
            return Ok(vec![Val::Act(Act {
                v: dest,
                ..a.clone()
            })]);
        }
    }
    // Run-time, blocked or unusual parameters: ONNX's definition in float
    // ops, `saturate(round_half_even(x / scale) + zp)`.
    let (xn, sn) = (node.input[0].clone(), node.input[1].clone());
    let zn = input_name(node, 2).map(str::to_string);
    let axis = Attrs(&node.attribute).int("axis", 1);
    let base = compose::base_of(node);
    let xdims = x.dims().to_vec();
    compose::with(l, &base, |c| {
        let s = param(c, &sn, &xdims, axis, block)?;
        let q = c.op("Div", &[&xn, &s], vec![])?;
        let mut r = c.op("Round", &[&q], vec![])?;
        if let Some(zn) = &zn {
            let zf = c.op("Cast", &[zn], vec![attr_int("to", dtype::FLOAT as i64)])?;
            let z = param(c, &zf, &xdims, axis, block)?;
            r = c.op("Add", &[&r, &z], vec![])?;
        }
        let (lo, hi) = range_of(dt);
        let (lo, hi) = (c.scalar(lo as f32), c.scalar(hi as f32));
        let r = c.op("Clip", &[&r, &lo, &hi], vec![])?;
        let y = c.op("Cast", &[&r], vec![attr_int("to", dt as i64)])?;
        Ok(vec![c.val(&y)])
    })
}

/// A scale or zero point brought to broadcast against `x` (of `xdims`):
/// per tensor as it is, per axis reshaped along `axis`, blocked (a
/// positive `block`: the parameter has `x`'s dims with `ceil(D / block)`
/// along `axis`) repeated `block` times along `axis` and cut to `D`.
fn param(
    c: &mut compose::Composer,
    name: &str,
    xdims: &[u64],
    axis: i64,
    block: u64,
) -> Result<String> {
    let rank = xdims.len();
    if block == 0 {
        return broadcast_param(c, name, rank, axis);
    }
    let a = norm_axis(c.l, axis, rank)?;
    let pd = c.dims(name);
    let d = xdims[a];
    let fits = pd.len() == rank
        && (0..rank).all(|i| i == a || pd[i] == xdims[i])
        && pd[a] == d.div_ceil(block);
    if !fits {
        return Err(c.l.err(format!(
            "blocked parameter dims {pd:?} do not fit the input {xdims:?} with block_size \
             {block} along axis {a}"
        )));
    }
    let ax = c.ints(&[a as i64 + 1]);
    let u = c.op("Unsqueeze", &[name, &ax], vec![])?;
    let mut full: Vec<i64> = pd.iter().map(|&x| x as i64).collect();
    full.insert(a + 1, block as i64);
    let shape = c.ints(&full);
    let e = c.op("Expand", &[&u, &shape], vec![])?;
    let mut flat = xdims.to_vec();
    flat[a] = pd[a] * block;
    let r = c.reshape(&e, &flat)?;
    if flat[a] == d {
        return Ok(r);
    }
    c.slice(&r, a, 0, d)
}

/// A per-axis parameter (`[C]`) reshaped to broadcast along `axis` of a
/// rank-`rank` tensor; one value stays as it is.
fn broadcast_param(
    c: &mut compose::Composer,
    name: &str,
    rank: usize,
    axis: i64,
) -> Result<String> {
    let dims = c.dims(name);
    let n: u64 = dims.iter().product();
    if n == 1 || rank <= 1 {
        return Ok(name.to_string());
    }
    let axis = norm_axis(c.l, axis, rank)?;
    let mut shape = vec![1u64; rank];
    shape[axis] = n;
    c.reshape(name, &shape)
}

pub(super) fn dequantize_linear(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let rank = x.dims().len();
    let block = block_size(l, node)?;
    let params = if block == 0 {
        const_params(l, node, rank)?
    } else {
        None
    };
    if let (Some(p), Val::Const { t, .. }) = (&params, &x) {
        // Folded into a float constant; the integers stay for the folds.
        let xname = &node.input[0];
        let dt = l
            .dtypes
            .get(xname)
            .copied()
            .or_else(|| input_name(node, 2).and_then(|z| l.dtypes.get(z).copied()))
            .unwrap_or(dtype::INT32);
        let qs = t.to_i64();
        let s = per_axis(&p.scales, &t.dims, p.axis);
        let z = per_axis(&p.zps, &t.dims, p.axis);
        let f = qs
            .iter()
            .enumerate()
            .map(|(i, &q)| (q as f32 - z(i) as f32) * s(i))
            .collect();
        l.qconsts.insert(
            out.clone(),
            QConst {
                q: (**t).clone(),
                dtype: dt,
                scales: p.scales.clone(),
                zps: p.zps.clone(),
                axis: p.axis,
                src: xname.clone(),
            },
        );
        return Ok(vec![Val::Const {
            name: out,
            t: Tensor::f32(t.dims.clone(), f).into(),
        }]);
    }
    if let (Some(p), Val::Act(a)) = (&params, &x) {
        if p.scales.len() == 1 {
            let k = dtype_of_kind(l.kind(a)).and_then(|dt| qkind(dt, p.scales[0], p.zps[0]));
            if let Some(k) =
                k.filter(|k| !matches!(k, ElemKind::Int32Q { offset, .. } if *offset != 0))
            {
                let q = reinterpret(l, a, k, "q");
                return Ok(vec![Val::Act(dequantize_act(l, &q, &out))]);
            }
        }
    }
    if let (Some(p), Val::Act(a)) = (&params, &x) {
        if p.scales.len() > 1 && matches!(l.kind(a), ElemKind::Int8 | ElemKind::UInt8) {
            let dest = l.alloc(&out, &a.phys());
            per_axis_inst(l, node, &out, Opcode::Dequantize, dest, a, p);
            return Ok(vec![Val::Act(Act {
                v: dest,
                ..a.clone()
            })]);
        }
    }
    // Run-time or blocked parameters: `(float(x) - float(zp)) * scale`.
    let (xn, sn) = (node.input[0].clone(), node.input[1].clone());
    let zn = input_name(node, 2).map(str::to_string);
    let axis = Attrs(&node.attribute).int("axis", 1);
    let base = compose::base_of(node);
    let xdims = x.dims().to_vec();
    compose::with(l, &base, |c| {
        let mut xf = c.op("Cast", &[&xn], vec![attr_int("to", dtype::FLOAT as i64)])?;
        if let Some(zn) = &zn {
            let zf = c.op("Cast", &[zn], vec![attr_int("to", dtype::FLOAT as i64)])?;
            let z = param(c, &zf, &xdims, axis, block)?;
            xf = c.op("Sub", &[&xf, &z], vec![])?;
        }
        let s = param(c, &sn, &xdims, axis, block)?;
        let y = c.op("Mul", &[&xf, &s], vec![])?;
        Ok(vec![c.val(&y)])
    })
}

/// The per-axis `quantize`/`dequantize` of `a` into `dest`: the scales and
/// zero points as `Scales` (float) and `Offsets` (index32) constants, along
/// the physical axis of ONNX's `axis` (moved when `a` is channels-last).
fn per_axis_inst(
    l: &mut Lowerer,
    node: &NodeProto,
    out: &str,
    op: Opcode,
    dest: glow_ir::Value,
    a: &Act,
    p: &Params,
) {
    let n = p.scales.len() as u64;
    let scales = l.const_weight(
        &format!("{out}.scales"),
        &Tensor::f32(vec![n], p.scales.clone()),
    );
    let offsets = l.const_weight_kind(
        &format!("{out}.offsets"),
        &Tensor::i64(vec![n], p.zps.clone()),
        ElemKind::Index32,
    );
    let axis = if a.cl {
        super::cl_perm(a.dims.len())
            .iter()
            .position(|&j| j == p.axis)
            .unwrap_or(p.axis)
    } else {
        p.axis
    };
    let base = nn::node_base(node, out);
    l.inst(
        &base,
        op,
        &[dest, a.v, scales, offsets],
        &[glow_ir::member::AXIS.to(axis as i64)],
    );
}

/// A `dequantize` of quantized `q` into a float buffer named `out`.
fn dequantize_act(l: &mut Lowerer, q: &Act, out: &str) -> Act {
    let dest = l.alloc(out, &q.phys());
    l.inst(
        &format!("{out}.dequantize"),
        Opcode::Dequantize,
        &[dest, q.v],
        &[],
    );
    Act {
        v: dest,
        ..q.clone()
    }
}

/// DequantizeLinear of an activation with constant per-tensor parameters:
/// the quantized buffer, recorded in `pending` (nothing is emitted yet).
fn defer_dequantize(l: &mut Lowerer, node: &NodeProto) -> Result<bool> {
    if Attrs(&node.attribute).int("block_size", 0) != 0 {
        return Ok(false);
    }
    let Some(Val::Act(a)) = l.opt_input(node, 0)? else {
        return Ok(false);
    };
    let Some(p) = const_params(l, node, a.dims.len())? else {
        return Ok(false);
    };
    if p.scales.len() != 1 {
        return Ok(false);
    }
    let Some(k) = dtype_of_kind(l.kind(&a)).and_then(|dt| qkind(dt, p.scales[0], p.zps[0])) else {
        return Ok(false);
    };
    if !glow_ir::quant::is_compute_kind(k) {
        return Ok(false);
    }
    let Some(out) = node.output.first().filter(|o| !o.is_empty()) else {
        return Ok(true);
    };
    let q = reinterpret(l, &a, k, "q");
    l.pending.insert(out.clone(), q);
    Ok(true)
}

/// Makes `name` an ordinary value: a deferred dequantization gets its
/// `dequantize`, a quantized buffer is viewed as its plain ONNX kind.
pub(super) fn prepare_value(l: &mut Lowerer, name: &str) {
    if !l.vals.contains_key(name) {
        if let Some(q) = l.pending.get(name).cloned() {
            let a = dequantize_act(l, &q, name);
            l.vals.insert(name.to_string(), Val::Act(a));
        }
        return;
    }
    if let Some(Val::Act(a)) = l.vals.get(name) {
        let k = l.kind(a);
        if k.is_quantized() {
            let a = a.clone();
            let p = reinterpret(l, &a, plain_of(k), "plain");
            l.vals.insert(name.to_string(), Val::Act(p));
        }
    }
}

/// `prepare_value` for every input of a node that does not fold.
pub(super) fn prepare_inputs(l: &mut Lowerer, node: &NodeProto) {
    for name in node.input.iter().filter(|n| !n.is_empty()) {
        prepare_value(l, name);
    }
}

/// Records the element type of a Constant node's value.
pub(super) fn record_constant_dtype(l: &mut Lowerer, node: &NodeProto) {
    let attrs = Attrs(&node.attribute);
    let dt = match attrs.tensor("value") {
        Some(t) => t.data_type,
        None if attrs.has("value_int") || attrs.has("value_ints") => dtype::INT64,
        None => dtype::FLOAT,
    };
    if let Some(o) = node.output.first() {
        l.dtypes.insert(o.clone(), dt);
    }
}

// ---------------------------------------------------------------------------
// The folds.

/// The QuantizeLinear that is the only reader of `out`: its index, result
/// kind and output name.
struct QAfter {
    index: usize,
    kind: ElemKind,
    out: String,
}

fn q_after(l: &Lowerer, out: &str) -> Option<QAfter> {
    if out.is_empty() || l.graph_outputs.contains(out) {
        return None;
    }
    let readers = l.consumers.get(out)?;
    let &[j] = readers.as_slice() else {
        return None;
    };
    let q = l.nodes.get(j)?;
    if j <= l.cur
        || q.op_type != "QuantizeLinear"
        || !(q.domain.is_empty() || q.domain == "ai.onnx")
        || q.input.first().map(String::as_str) != Some(out)
        || Attrs(&q.attribute).int("block_size", 0) != 0
    {
        return None;
    }
    let s = konst(l, input_name(q, 1)?)?;
    let z = match input_name(q, 2) {
        Some(z) => konst(l, z)?.to_i64(),
        None => vec![0],
    };
    if s.len() != 1 || z.len() != 1 {
        return None;
    }
    let dt = match input_name(q, 2) {
        Some(z) => dtype_of(l, z)?,
        None => match Attrs(&q.attribute).int("output_dtype", 0) {
            0 => dtype::UINT8,
            d => d as i32,
        },
    };
    let kind = qkind(dt, s.to_f32()[0], z[0]).filter(|k| glow_ir::quant::is_compute_kind(*k))?;
    Some(QAfter {
        index: j,
        kind,
        out: q.output.first().cloned().unwrap_or_default(),
    })
}

/// A deferred dequantization read as input `i`.
fn dq_input(l: &Lowerer, node: &NodeProto, i: usize) -> Option<Act> {
    let name = input_name(node, i)?;
    l.pending.get(name).cloned()
}

/// The QDQ stage of `node`'s table row: a DequantizeLinear of an
/// activation deferred, a QLinearConv or QLinearMatMul of constants
/// quantized, or a float op between dequantized inputs and a
/// QuantizeLinear folded. `true`: lowered (outputs bound).
pub(super) fn fold(l: &mut Lowerer, node: &NodeProto, stage: Option<Qdq>) -> Result<bool> {
    let kind = match stage {
        None => return Ok(false),
        Some(Qdq::Defer) => return defer_dequantize(l, node),
        Some(Qdq::Quantized) => {
            prepare_inputs(l, node);
            return qlinear_const(l, node);
        }
        Some(Qdq::Fold(kind)) => kind,
    };
    if node.output.len() != 1 {
        return Ok(false);
    }
    // Every activation input is a deferred dequantization.
    let acts = (0..node.input.len())
        .filter(|&i| {
            input_name(node, i).is_some_and(|n| !matches!(l.vals.get(n), Some(Val::Const { .. })))
        })
        .collect::<Vec<_>>();
    if acts.is_empty() || acts.iter().any(|&i| dq_input(l, node, i).is_none()) {
        return Ok(false);
    }
    let Some(q) = q_after(l, &node.output[0]) else {
        return Ok(false);
    };
    let v = match kind {
        QdqFold::Conv => fold_conv(l, node, &q)?,
        QdqFold::Gemm => fold_gemm(l, node, &q)?,
        QdqFold::Binary => fold_binary(l, node, &q)?,
        QdqFold::Pool => fold_pool(l, node, &q)?,
        QdqFold::Activation => fold_activation(l, node, &q)?,
        QdqFold::Lookup => fold_lookup(l, node, &q)?,
        QdqFold::Movement => fold_movement(l, node, &q, &acts)?,
    };
    let Some(v) = v else {
        return Ok(false);
    };
    l.bind(&q.out, v);
    l.skip.insert(q.index);
    Ok(true)
}

/// `a` rescaled to `k` (a `rescalequantized` when the kinds differ).
fn rescale_to(l: &mut Lowerer, a: &Act, k: ElemKind, base: &str) -> Act {
    if l.kind(a) == k {
        return a.clone();
    }
    let dest = l.alloc_kind(&format!("{base}.rescaled"), &a.phys(), k);
    l.inst(
        &format!("{base}.rescale"),
        Opcode::RescaleQuantized,
        &[dest, a.v],
        &[],
    );
    Act {
        v: dest,
        ..a.clone()
    }
}

/// Bias `[oc]` of a quantized product: the integers and per-channel scales
/// `Sb[c]`, checked against `Sx * Sw[c]` (the engines need the ratio in
/// [0.5, 2) with offset 0); zeros of scale `Sx * Sw[c]` without a bias.
fn product_bias(
    l: &Lowerer,
    node: &NodeProto,
    i: usize,
    oc: u64,
    acc: &[f64],
) -> Option<(Tensor, Vec<f32>, Option<String>)> {
    let Some(name) = input_name(node, i) else {
        let scales = acc.iter().map(|&a| a as f32).collect();
        return Some((Tensor::i64(vec![oc], vec![0; oc as usize]), scales, None));
    };
    let b = l.qconsts.get(name)?;
    if b.q.len() as u64 != oc || b.dtype != dtype::INT32 || b.zps.iter().any(|&z| z != 0) {
        return None;
    }
    if b.scales.len() != 1 && b.scales.len() as u64 != oc {
        return None;
    }
    let scales: Vec<f32> = (0..oc as usize).map(|c| b.scale(c)).collect();
    for (c, &s) in scales.iter().enumerate() {
        let r = s as f64 / acc[c];
        if !(0.5..2.0).contains(&r) {
            return None;
        }
    }
    Some((b.q.reshaped(vec![oc]), scales, Some(b.src.clone())))
}

/// The weights of a quantized product: int8/uint8 with per-tensor
/// parameters or per-axis ones along `axis` (of `oc` entries).
fn product_weights(l: &Lowerer, name: &str, axis: usize, oc: u64) -> Option<QConst> {
    let w = l.qconsts.get(name)?;
    if !matches!(w.dtype, dtype::INT8 | dtype::UINT8) {
        return None;
    }
    if !(w.uniform() || (w.axis == axis && w.scales.len() as u64 == oc)) {
        return None;
    }
    if (0..w.scales.len()).any(|c| qkind(w.dtype, w.scale(c), w.zp(c)).is_none()) {
        return None;
    }
    Some(w.clone())
}

fn fold_conv(l: &mut Lowerer, node: &NodeProto, q: &QAfter) -> Result<Option<Val>> {
    let Some(x) = dq_input(l, node, 0) else {
        return Ok(None);
    };
    let (Some(wname), r) = (input_name(node, 1), x.dims.len()) else {
        return Ok(None);
    };
    if r != 3 && r != 4 {
        return Ok(None);
    }
    let Some(wq) = l.qconsts.get(wname) else {
        return Ok(None);
    };
    let oc = wq.q.dims.first().copied().unwrap_or(0);
    let Some(w) = product_weights(l, wname, 0, oc) else {
        return Ok(None);
    };
    let Some(xs) = l.kind(&x).quant().map(|(s, _)| s) else {
        return Ok(None);
    };
    let acc: Vec<f64> = (0..oc as usize)
        .map(|c| xs as f64 * w.scale(c) as f64)
        .collect();
    let Some((bias, bscales, bsrc)) = product_bias(l, node, 2, oc, &acc) else {
        return Ok(None);
    };
    let channelwise = !w.uniform() || bscales.iter().any(|s| s.to_bits() != bscales[0].to_bits());
    if channelwise && layout_is_nchw(l) {
        // channelwisequantizedconvolution is NHWC only.
        return Ok(None);
    }
    let attrs = Attrs(&node.attribute);
    let group = attrs.int("group", 1);
    let wdims = w.q.dims.clone();
    let nd = r - 2;
    if wdims.len() != nd + 2 || group < 1 {
        return Ok(None);
    }
    let group = group as u64;
    let (icg, c_in) = (wdims[1], x.dims[1]);
    if icg * group != c_in || oc % group != 0 {
        return Ok(None);
    }
    let out = q.out.clone();
    let base = nn::node_base(node, &node.output[0]);
    let wname = w.src.clone();
    let bname = bsrc.unwrap_or(format!("{wname}.bias"));
    let xsp = nn::spatial_act(l, x, &out)?;
    let win = nn::window(l, &attrs, &xsp, &wdims[2..])?;
    let (oh, ow) = nn::out_hw(l, &xsp, &win)?;
    let oihw = vec![oc, icg, win.k[0], win.k[1]];
    let w4 = w.q.reshaped(oihw);
    let w4 = if xsp.nchw {
        w4
    } else {
        w4.permuted(&[0, 2, 3, 1])
    };
    let dest = l.alloc_kind(&out, &xsp.dims(oc, oh, ow), q.kind);
    let mut members = vec![
        m::KERNELS.to(window::ints(&win.k)),
        m::STRIDES.to(window::ints(&win.s)),
        m::PADS.to(window::ints(&win.pads)),
        m::GROUP.to(group as i64),
        m::DILATION.to(window::ints(&win.d)),
    ];
    if channelwise {
        let ops = channelwise_params(l, &wname, &bname, &w, &w4, &bias, &bscales, oc);
        l.inst(
            &base,
            Opcode::ChannelwiseQuantizedConvolution,
            &[dest, xsp.v, ops[0], ops[1], ops[2], ops[3], ops[4], ops[5]],
            &members,
        );
    } else {
        let wk = qkind(w.dtype, w.scale(0), w.zp(0)).expect("checked by product_weights");
        let filter = l.const_weight_kind(&wname, &w4, wk);
        let bk = ElemKind::Int32Q {
            scale: bscales[0],
            offset: 0,
        };
        let b = l.const_weight_kind(&bname, &bias, bk);
        members.push(m::LAYOUT.to(xsp.layout()));
        l.inst(
            &base,
            Opcode::Convolution,
            &[dest, xsp.v, filter, b],
            &members,
        );
    }
    Ok(Some(xsp.output(l, dest, oc, oh, ow, &out)))
}

/// The operands of a channel-wise quantized product after `Src`: Filter
/// (`w4`, in the instruction layout), Bias, FilterScales, FilterOffsets,
/// BiasScales, BiasOffsets.
#[allow(clippy::too_many_arguments)] // the six operands' sources, each needed
fn channelwise_params(
    l: &mut Lowerer,
    wname: &str,
    bname: &str,
    w: &QConst,
    w4: &Tensor,
    bias: &Tensor,
    bscales: &[f32],
    oc: u64,
) -> [Value; 6] {
    let n = oc as usize;
    let fk = match w.dtype {
        dtype::UINT8 => ElemKind::UInt8Q {
            scale: 1.0,
            offset: 0,
        },
        _ => ElemKind::Int8Q {
            scale: 1.0,
            offset: 0,
        },
    };
    let filter = l.const_weight_kind(wname, w4, fk);
    let bk = ElemKind::Int32Q {
        scale: 1.0,
        offset: 0,
    };
    let b = l.const_weight_kind(bname, bias, bk);
    let fs = Tensor::f32(vec![oc], (0..n).map(|c| w.scale(c)).collect());
    let fo = Tensor::i64(vec![oc], (0..n).map(|c| w.zp(c)).collect());
    let bs = Tensor::f32(vec![oc], bscales.to_vec());
    let bo = Tensor::i64(vec![oc], vec![0; n]);
    let fs = l.const_weight_with(&format!("{wname}.scales"), &fs, ElemKind::Float, true);
    let fo = l.const_weight_with(&format!("{wname}.offsets"), &fo, ElemKind::Index32, true);
    let bs = l.const_weight_with(&format!("{bname}.scales"), &bs, ElemKind::Float, true);
    let bo = l.const_weight_with(&format!("{bname}.offsets"), &bo, ElemKind::Index32, true);
    [filter, b, fs, fo, bs, bo]
}

/// Gemm (`alpha = beta = 1`, no `transA`) and MatMul with a dequantized
/// constant right operand, or MatMul of two dequantized activations.
fn fold_gemm(l: &mut Lowerer, node: &NodeProto, q: &QAfter) -> Result<Option<Val>> {
    let gemm = node.op_type == "Gemm";
    let attrs = Attrs(&node.attribute);
    if gemm
        && (attrs.float("alpha", 1.0) != 1.0
            || attrs.float("beta", 1.0) != 1.0
            || attrs.int("transA", 0) != 0)
    {
        return Ok(None);
    }
    let tb = gemm && attrs.int("transB", 0) != 0;
    let Some(a) = dq_input(l, node, 0) else {
        return Ok(None);
    };
    if a.dims.len() < 2 || (gemm && a.dims.len() != 2) {
        return Ok(None);
    }
    let Some(xs) = l.kind(&a).quant().map(|(s, _)| s) else {
        return Ok(None);
    };
    let out = q.out.clone();
    let base = nn::node_base(node, &node.output[0]);
    let Some(bname) = input_name(node, 1) else {
        return Ok(None);
    };
    if let Some(b) = dq_input(l, node, 1) {
        // Two activations: a quantized matmul / batchmatmul (no bias).
        return Ok(matmul_acts(l, &a, &b, q, &out, &base));
    }
    let Some(bq) = l.qconsts.get(bname) else {
        return Ok(None);
    };
    if bq.q.dims.len() != 2 {
        return Ok(None);
    }
    let (k, n) = if tb {
        (bq.q.dims[1], bq.q.dims[0])
    } else {
        (bq.q.dims[0], bq.q.dims[1])
    };
    let kk = *a.dims.last().expect("rank checked");
    if kk != k {
        return Ok(None);
    }
    // Per output column: B's axis 0 with transB, axis 1 without.
    let Some(w) = product_weights(l, bname, if tb { 0 } else { 1 }, n) else {
        return Ok(None);
    };
    let acc: Vec<f64> = (0..n as usize)
        .map(|c| xs as f64 * w.scale(c) as f64)
        .collect();
    let bias = if gemm {
        product_bias(l, node, 2, n, &acc)
    } else {
        product_bias(l, &NodeProto::default(), 2, n, &acc)
    };
    let Some((bias, bscales, bsrc)) = bias else {
        return Ok(None);
    };
    let channelwise = !w.uniform() || bscales.iter().any(|s| s.to_bits() != bscales[0].to_bits());
    let wname = w.src.clone();
    let bn = bsrc.unwrap_or(format!("{wname}.bias"));
    let a = l.to_plain(&a, &out);
    let m: u64 = a.dims[..a.dims.len() - 1].iter().product();
    let mut odims = a.dims[..a.dims.len() - 1].to_vec();
    odims.push(n);
    let dest = l.alloc_kind(&out, &odims, q.kind);
    if channelwise {
        // Per-column weight scales: a 1x1 channel-wise convolution over
        // `[M, 1, 1, K]` with the filter `[N, 1, 1, K]` (B as `N x K`).
        let nk = if tb {
            w.q.clone()
        } else {
            w.q.permuted(&[1, 0])
        };
        let w4 = nk.reshaped(vec![n, 1, 1, k]);
        let src = l.view(&format!("{out}.src"), a.v, &[m, 1, 1, k]);
        let dv = l.view(&format!("{out}.dest"), dest, &[m, 1, 1, n]);
        let ops = channelwise_params(l, &wname, &bn, &w, &w4, &bias, &bscales, n);
        let members = [
            m::KERNELS.to(window::ints(&[1, 1])),
            m::STRIDES.to(window::ints(&[1, 1])),
            m::PADS.to(window::ints(&[0, 0, 0, 0])),
            m::GROUP.to(1),
            m::DILATION.to(window::ints(&[1, 1])),
        ];
        l.inst(
            &base,
            Opcode::ChannelwiseQuantizedConvolution,
            &[dv, src, ops[0], ops[1], ops[2], ops[3], ops[4], ops[5]],
            &members,
        );
    } else {
        let kn = if tb {
            w.q.permuted(&[1, 0])
        } else {
            w.q.clone()
        };
        let wk = qkind(w.dtype, w.scale(0), w.zp(0)).expect("checked by product_weights");
        let weights = l.const_weight_kind(&wname, &kn, wk);
        let bk = ElemKind::Int32Q {
            scale: bscales[0],
            offset: 0,
        };
        let b = l.const_weight_kind(&bn, &bias, bk);
        let (src, dv) = if a.dims.len() == 2 {
            (a.v, dest)
        } else {
            (
                l.view(&format!("{out}.2d"), a.v, &[m, k]),
                l.view(&format!("{out}.2d"), dest, &[m, n]),
            )
        };
        l.inst(&base, Opcode::FullyConnected, &[dv, src, weights, b], &[]);
    }
    Ok(Some(Val::Act(Act {
        v: dest,
        dims: odims,
        cl: false,
    })))
}

/// A quantized `matmul` (2-D) or `batchmatmul` (3-D, equal batches) of two
/// quantized activations.
fn matmul_acts(
    l: &mut Lowerer,
    a: &Act,
    b: &Act,
    q: &QAfter,
    out: &str,
    base: &str,
) -> Option<Val> {
    let (r, rb) = (a.dims.len(), b.dims.len());
    if r != rb || !(r == 2 || (r == 3 && a.dims[0] == b.dims[0])) || a.dims[r - 1] != b.dims[r - 2]
    {
        return None;
    }
    if !glow_ir::quant::is_compute_kind(l.kind(b)) {
        return None;
    }
    let a = l.to_plain(a, out);
    let b = l.to_plain(b, out);
    let mut odims = a.dims[..r - 1].to_vec();
    odims.push(b.dims[r - 1]);
    let dest = l.alloc_kind(out, &odims, q.kind);
    let op = if r == 2 {
        Opcode::MatMul
    } else {
        Opcode::BatchMatMul
    };
    l.inst(base, op, &[dest, a.v, b.v], &[]);
    Some(Val::Act(Act {
        v: dest,
        dims: odims,
        cl: false,
    }))
}

/// Add, Sub, Mul, Max, Min of two dequantized activations of the same dims.
fn fold_binary(l: &mut Lowerer, node: &NodeProto, q: &QAfter) -> Result<Option<Val>> {
    let (Some(a), Some(b)) = (dq_input(l, node, 0), dq_input(l, node, 1)) else {
        return Ok(None);
    };
    if a.dims != b.dims || node.input.len() != 2 {
        return Ok(None);
    }
    let out = q.out.clone();
    let (a, b) = if a.cl == b.cl {
        (a, b)
    } else {
        (l.to_cl(&a, &out), l.to_cl(&b, &out))
    };
    let op = match node.op_type.as_str() {
        "Add" => Opcode::ElementAdd,
        "Sub" => Opcode::ElementSub,
        "Max" => Opcode::ElementMax,
        "Min" => Opcode::ElementMin,
        _ => Opcode::ElementMul,
    };
    let dest = l.alloc_kind(&out, &a.phys(), q.kind);
    let base = nn::node_base(node, &node.output[0]);
    l.inst(&base, op, &[dest, a.v, b.v], &[]);
    Ok(Some(Val::Act(Act { v: dest, ..a })))
}

fn fold_pool(l: &mut Lowerer, node: &NodeProto, q: &QAfter) -> Result<Option<Val>> {
    let Some(x) = dq_input(l, node, 0) else {
        return Ok(None);
    };
    let attrs = Attrs(&node.attribute);
    let avg_ceil = node.op_type == "AveragePool"
        && attrs.int("count_include_pad", 0) != 0
        && attrs.int("ceil_mode", 0) != 0;
    if !(x.dims.len() == 3 || x.dims.len() == 4) || avg_ceil {
        return Ok(None);
    }
    let mut v = nn::pool_of(l, node, x, &q.out.clone(), q.kind)?;
    Ok(v.pop())
}

/// Sigmoid, Tanh, Exp, Log, Sqrt, Erf, Softplus, Sin, Cos: a function of
/// one 8-bit value is a 256-entry table, computed here with the float
/// operator both engines use (`intlookuptable`; docs/quantization.md).
fn fold_lookup(l: &mut Lowerer, node: &NodeProto, q: &QAfter) -> Result<Option<Val>> {
    let Some(x) = dq_input(l, node, 0) else {
        return Ok(None);
    };
    let op = match node.op_type.as_str() {
        "Sigmoid" => Opcode::Sigmoid,
        "Tanh" => Opcode::Tanh,
        "Exp" => Opcode::ElementExp,
        "Log" => Opcode::ElementLog,
        "Sqrt" => Opcode::ElementSqrt,
        "Erf" => Opcode::ElementErf,
        "Softplus" => Opcode::SoftPlus,
        "Sin" => Opcode::ElementSin,
        "Cos" => Opcode::ElementCos,
        _ => return Ok(None),
    };
    let (sk, dk) = (l.kind(&x), q.kind);
    let (Some((ss, so)), Some((ds, doff)), Some((lo, _)), Some(range), Some(f)) = (
        sk.quant(),
        dk.quant(),
        sk.quant_range(),
        dk.quant_range(),
        glow_backend::ops::unary(op),
    ) else {
        return Ok(None);
    };
    if !glow_ir::quant::is_compute_kind(sk) || !glow_ir::quant::is_compute_kind(dk) {
        return Ok(None);
    }
    let table: Vec<i64> = (0..256)
        .map(|k| {
            let real = glow_ir::quant::dequantize(lo + k, ss, so);
            glow_ir::quant::quantize((f.f)(real, &[]), ds, doff, range)
        })
        .collect();
    let base = nn::node_base(node, &node.output[0]);
    let t = Tensor::i64(vec![256], table);
    let mapping = l.const_weight_with(&format!("{base}.table"), &t, dk, true);
    let dest = l.alloc_kind(&q.out.clone(), &x.phys(), dk);
    l.inst(&base, Opcode::IntLookupTable, &[dest, x.v, mapping], &[]);
    Ok(Some(Val::Act(Act { v: dest, ..x })))
}

/// Relu, and Clip with constant bounds.
fn fold_activation(l: &mut Lowerer, node: &NodeProto, q: &QAfter) -> Result<Option<Val>> {
    let Some(x) = dq_input(l, node, 0) else {
        return Ok(None);
    };
    let base = nn::node_base(node, &node.output[0]);
    let out = q.out.clone();
    if node.op_type == "Relu" {
        let dest = l.alloc_kind(&out, &x.phys(), q.kind);
        l.inst(&base, Opcode::Relu, &[dest, x.v], &[]);
        return Ok(Some(Val::Act(Act { v: dest, ..x })));
    }
    let attrs = Attrs(&node.attribute);
    let (lo, hi) = if l.opset < 11 {
        (attrs.float("min", f32::MIN), attrs.float("max", f32::MAX))
    } else {
        let bound = |i: usize, d: f32| match input_name(node, i) {
            None => Some(d),
            Some(n) => konst(l, n).and_then(|t| t.to_f32().first().copied()),
        };
        match (bound(1, f32::MIN), bound(2, f32::MAX)) {
            (Some(a), Some(b)) => (a, b),
            _ => return Ok(None),
        }
    };
    let dest = l.alloc_kind(&out, &x.phys(), q.kind);
    let members = [m::MIN.to(lo as f64), m::MAX.to(hi as f64)];
    l.inst(&base, Opcode::Clip, &[dest, x.v], &members);
    Ok(Some(Val::Act(Act { v: dest, ..x })))
}

/// Data movement (Flatten, Reshape, Transpose, Squeeze, Unsqueeze,
/// Identity, Concat) on the quantized buffers: inputs rescaled to the
/// QuantizeLinear's type where theirs differs (only Concat's may need to),
/// then the ordinary lowering, then a rescale of the result if needed.
fn fold_movement(
    l: &mut Lowerer,
    node: &NodeProto,
    q: &QAfter,
    acts: &[usize],
) -> Result<Option<Val>> {
    let concat = node.op_type == "Concat";
    if (!concat && acts != [0]) || (concat && acts.len() != node.input.len()) {
        return Ok(None);
    }
    let mut renamed = node.clone();
    renamed.output = vec![q.out.clone()];
    for &i in acts {
        let a = dq_input(l, node, i).expect("checked by fold");
        let a = if concat {
            rescale_to(l, &a, q.kind, &node.input[i])
        } else {
            a
        };
        let name = format!("{}#q", node.input[i]);
        l.vals.insert(name.clone(), Val::Act(a));
        renamed.input[i] = name;
    }
    let mut outs = l.dispatch(&renamed)?;
    for &i in acts {
        l.vals.remove(&renamed.input[i]);
    }
    let Some(Val::Act(y)) = outs.pop() else {
        return Ok(None);
    };
    let base = nn::node_base(node, &node.output[0]);
    Ok(Some(Val::Act(rescale_to(l, &y, q.kind, &base))))
}

// ---------------------------------------------------------------------------
// QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger,
// DynamicQuantizeLinear.

/// QLinearConv and QLinearMatMul whose scales and zero points are constants
/// (per tensor, the weights' per output channel) and whose weights are
/// constants: the quantized instruction the QDQ fold makes, on the
/// activation's integers (the integer kernels' rounding,
/// docs/quantization.md). Otherwise `false` (the float lowering).
fn qlinear_const(l: &mut Lowerer, node: &NodeProto) -> Result<bool> {
    let conv = node.op_type == "QLinearConv";
    let Some(Val::Act(x)) = l.opt_input(node, 0)? else {
        return Ok(false);
    };
    let Some(wt) = input_name(node, 3).and_then(|n| konst(l, n)).cloned() else {
        return Ok(false);
    };
    let scalar = |i: usize| -> Option<(f32, i64)> {
        let s = konst(l, input_name(node, i)?)?;
        let z = match input_name(node, i + 1) {
            Some(z) => konst(l, z)?.to_i64(),
            None => vec![0],
        };
        (s.len() == 1 && z.len() == 1).then(|| (s.to_f32()[0], z[0]))
    };
    let (Some((xs, xz)), Some((ys, yz))) = (scalar(1), scalar(6)) else {
        return Ok(false);
    };
    let (Some(ws), wz) = (
        input_name(node, 4)
            .and_then(|n| konst(l, n))
            .map(Tensor::to_f32),
        match input_name(node, 5) {
            Some(z) => konst(l, z).map(Tensor::to_i64),
            None => Some(vec![0]),
        },
    ) else {
        return Ok(false);
    };
    let Some(wz) = wz else { return Ok(false) };
    let (Some(xdt), Some(wdt)) = (
        dtype_of_kind(l.kind(&x)),
        input_name(node, 3).and_then(|n| dtype_of(l, n)),
    ) else {
        return Ok(false);
    };
    let ydt = input_name(node, 7)
        .and_then(|n| dtype_of(l, n))
        .unwrap_or(xdt);
    let (Some(xk), Some(yk)) = (qkind(xdt, xs, xz), qkind(ydt, ys, yz)) else {
        return Ok(false);
    };
    if !glow_ir::quant::is_compute_kind(xk) || !glow_ir::quant::is_compute_kind(yk) {
        return Ok(false);
    }
    let xq = reinterpret(l, &x, xk, "q");
    // The same lowering as DQ -> op -> Q: bind the dequantized forms the
    // folds read, under names of their own.
    let out = node.output.first().cloned().unwrap_or_default();
    let (xn, wn, bn) = (format!("{out}#x"), format!("{out}#w"), format!("{out}#b"));
    l.pending.insert(xn.clone(), xq);
    let axis = if conv { 0 } else { 1 };
    l.qconsts.insert(
        wn.clone(),
        QConst {
            q: wt.clone(),
            dtype: wdt,
            scales: ws,
            zps: wz,
            axis,
            src: node.input[3].clone(),
        },
    );
    let mut fnode = NodeProto {
        op_type: if conv { "Conv" } else { "MatMul" }.into(),
        name: node.name.clone(),
        input: vec![xn.clone(), wn.clone()],
        output: vec![format!("{out}#y")],
        attribute: node.attribute.clone(),
        ..Default::default()
    };
    if conv {
        if let Some(b) = input_name(node, 8) {
            let Some(bt) = konst(l, b).cloned() else {
                l.pending.remove(&xn);
                l.qconsts.remove(&wn);
                return Ok(false);
            };
            // The bias is in the accumulator's scale, per output channel.
            let oc = wt.dims.first().copied().unwrap_or(1) as usize;
            let wsv = l.qconsts[&wn].scales.clone();
            let scales = (0..oc.max(1))
                .map(|c| (xs as f64 * wsv[if wsv.len() == 1 { 0 } else { c }] as f64) as f32)
                .collect();
            l.qconsts.insert(
                bn.clone(),
                QConst {
                    q: bt,
                    dtype: dtype::INT32,
                    scales,
                    zps: vec![0],
                    axis: 0,
                    src: b.to_string(),
                },
            );
            fnode.input.push(bn.clone());
        }
    }
    let qa = QAfter {
        index: usize::MAX,
        kind: yk,
        out: out.clone(),
    };
    let v = if conv {
        fold_conv(l, &fnode, &qa)?
    } else {
        fold_gemm(l, &fnode, &qa)?
    };
    l.pending.remove(&xn);
    l.qconsts.remove(&wn);
    l.qconsts.remove(&bn);
    let Some(v) = v else { return Ok(false) };
    l.bind(&out, v);
    Ok(true)
}

/// QLinearConv and QLinearMatMul with run-time parameters or operands:
/// ONNX's definition in float ops. The accumulator `sum (x - zx)(w - zw)`
/// (+ bias) is computed in float (exact while it stays below 2^24), scaled
/// by `sx * sw / sy` in f32, rounded half to even, offset and saturated.
pub(super) fn qlinear(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let conv = node.op_type == "QLinearConv";
    let names: Vec<Option<String>> = (0..9)
        .map(|i| input_name(node, i).map(str::to_string))
        .collect();
    let need = |i: usize| -> Result<String> {
        names[i]
            .clone()
            .ok_or_else(|| l.err(format!("missing input {i}")))
    };
    let (x, xs, w, ws, ys) = (need(0)?, need(1)?, need(3)?, need(4)?, need(6)?);
    let ydt = match &names[7] {
        Some(z) => dtype_of(l, z).unwrap_or(dtype::UINT8),
        None => dtype_of(l, &x).unwrap_or(dtype::UINT8),
    };
    let wrank = l.input(node, 3)?.dims().len();
    let base = compose::base_of(node);
    let attrs: Vec<_> = node.attribute.clone();
    compose::with(l, &base, |c| {
        let xf = centred(c, &x, names[2].as_deref(), None)?;
        let wf = centred(c, &w, names[5].as_deref(), conv.then_some(wrank))?;
        let acc = if conv {
            let mut ins = vec![xf.as_str(), wf.as_str()];
            let bf;
            if let Some(b) = &names[8] {
                bf = c.op("Cast", &[b], vec![attr_int("to", dtype::FLOAT as i64)])?;
                ins.push(&bf);
            }
            c.op("Conv", &ins, attrs)?
        } else {
            c.op("MatMul", &[&xf, &wf], vec![])?
        };
        let rank = c.dims(&acc).len();
        let m = c.op("Mul", &[&xs, &ws], vec![])?;
        let m = c.op("Div", &[&m, &ys], vec![])?;
        // A per-channel multiplier broadcasts along the channel axis (1)
        // of a convolution, the column axis (last) of a product.
        let m = if conv {
            broadcast_param(c, &m, rank, 1)?
        } else {
            broadcast_param(c, &m, rank, -1)?
        };
        let r = c.op("Mul", &[&acc, &m], vec![])?;
        let mut r = c.op("Round", &[&r], vec![])?;
        if let Some(z) = &names[7] {
            let zf = c.op("Cast", &[z], vec![attr_int("to", dtype::FLOAT as i64)])?;
            r = c.op("Add", &[&r, &zf], vec![])?;
        }
        let (lo, hi) = range_of(ydt);
        let (lo, hi) = (c.scalar(lo as f32), c.scalar(hi as f32));
        let r = c.op("Clip", &[&r, &lo, &hi], vec![])?;
        let y = c.op("Cast", &[&r], vec![attr_int("to", ydt as i64)])?;
        Ok(vec![c.val(&y)])
    })
}

/// `float(x) - float(zp)`; a per-channel zero point of a filter (rank
/// `filter`) broadcasts along its axis 0.
fn centred(
    c: &mut compose::Composer,
    x: &str,
    zp: Option<&str>,
    filter: Option<usize>,
) -> Result<String> {
    let xf = c.op("Cast", &[x], vec![attr_int("to", dtype::FLOAT as i64)])?;
    let Some(zp) = zp else { return Ok(xf) };
    let zf = c.op("Cast", &[zp], vec![attr_int("to", dtype::FLOAT as i64)])?;
    let zf = match filter {
        Some(rank) => broadcast_param(c, &zf, rank, 0)?,
        None => zf,
    };
    c.op("Sub", &[&xf, &zf], vec![])
}

/// ConvInteger and MatMulInteger: the int32 result `sum (x - zx)(w - zw)`.
/// The IR's integer products write `i8`/`ui8` only, so the sum is formed in
/// float, which is exact while every partial sum stays below 2^24 (at most
/// 258 products of two centred bytes, |p| <= 255 * 255). More products are
/// summed in chunks that each stay exact (input channels of a convolution,
/// the inner dimension of a product), each chunk converted to int32 and the
/// chunks added in int32, which is exact too.
pub(super) fn integer(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let conv = node.op_type == "ConvInteger";
    let x = l.input(node, 0)?;
    let w = l.input(node, 1)?;
    let (wd, xd) = (w.dims().to_vec(), x.dims().to_vec());
    // Products per output of one input channel (convolution) or one inner index.
    let per_unit: u64 = if conv { wd.iter().skip(2).product() } else { 1 };
    let units: u64 = if conv {
        wd.get(1).copied().unwrap_or(1)
    } else {
        xd.last().copied().unwrap_or(1)
    };
    const EXACT_TERMS: u64 = (1 << 24) / (255 * 255);
    let group = Attrs(&node.attribute).int("group", 1);
    let chunk = (EXACT_TERMS / per_unit.max(1)).min(units);
    if units * per_unit > EXACT_TERMS && (chunk == 0 || group != 1 || (!conv && wd.len() < 2)) {
        return Err(l.unsupported(format!(
            "{} with {} products per output{}: the float form is exact only up to              {EXACT_TERMS} products, and chunks of input channels need one group and a window              of at most {EXACT_TERMS} taps",
            node.op_type,
            units * per_unit,
            if group != 1 { format!(" in {group} groups") } else { String::new() },
        )));
    }
    let names: Vec<Option<String>> = (0..4)
        .map(|i| input_name(node, i).map(str::to_string))
        .collect();
    let (xn, wn) = (node.input[0].clone(), node.input[1].clone());
    let wrank = wd.len();
    let xrank = xd.len();
    let base = compose::base_of(node);
    let attrs = node.attribute.clone();
    compose::with(l, &base, |c| {
        let xf = centred(c, &xn, names[2].as_deref(), None)?;
        let wf = centred(c, &wn, names[3].as_deref(), conv.then_some(wrank))?;
        let mut y: Option<String> = None;
        for u0 in (0..units).step_by(chunk.max(1) as usize) {
            let u1 = (u0 + chunk).min(units);
            let (xs, ws) = if u0 == 0 && u1 == units {
                (xf.clone(), wf.clone())
            } else if conv {
                (c.slice(&xf, 1, u0, u1)?, c.slice(&wf, 1, u0, u1)?)
            } else {
                (
                    c.slice(&xf, xrank - 1, u0, u1)?,
                    c.slice(&wf, wrank - 2, u0, u1)?,
                )
            };
            let acc = if conv {
                c.op("Conv", &[&xs, &ws], attrs.clone())?
            } else {
                c.op("MatMul", &[&xs, &ws], vec![])?
            };
            let part = c.op("Cast", &[&acc], vec![attr_int("to", dtype::INT32 as i64)])?;
            y = Some(match y {
                None => part,
                Some(sum) => c.op("Add", &[&sum, &part], vec![])?,
            });
        }
        let y = y.expect("at least one chunk");
        Ok(vec![c.val(&y)])
    })
}

/// DynamicQuantizeLinear: ONNX's definition in float ops. `scale = (max(0,
/// max x) - min(0, min x)) / 255` (1/255 when that range is 0), `zp =
/// round(clip(-min / scale, 0, 255))`, `y = saturate(round(x / scale) + zp)`.
pub(super) fn dynamic_quantize_linear(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let x = node.input.first().cloned().unwrap_or_default();
    let base = compose::base_of(node);
    compose::with(l, &base, |c| {
        let keep = || vec![attr_int("keepdims", 0)];
        let zero = c.scalar(0.0);
        let mx = c.op("ReduceMax", &[&x], keep())?;
        let mx = c.op("Max", &[&mx, &zero], vec![])?;
        let mn = c.op("ReduceMin", &[&x], keep())?;
        let mn = c.op("Min", &[&mn, &zero], vec![])?;
        let range = c.op("Sub", &[&mx, &mn], vec![])?;
        let flat = c.op("Equal", &[&range, &zero], vec![])?;
        let one = c.scalar(1.0);
        let range = c.op("Where", &[&flat, &one, &range], vec![])?;
        let q = c.scalar(255.0);
        let scale = c.op("Div", &[&range, &q], vec![])?;
        let z = c.op("Div", &[&mn, &scale], vec![])?;
        let z = c.op("Sub", &[&zero, &z], vec![])?;
        let z = c.op("Clip", &[&z, &zero, &q], vec![])?;
        let z = c.op("Round", &[&z], vec![])?;
        let y = c.op("Div", &[&x, &scale], vec![])?;
        let y = c.op("Round", &[&y], vec![])?;
        let y = c.op("Add", &[&y, &z], vec![])?;
        let y = c.op("Clip", &[&y, &zero, &q], vec![])?;
        let to = || vec![attr_int("to", dtype::UINT8 as i64)];
        let y = c.op("Cast", &[&y], to())?;
        let zp = c.op("Cast", &[&z], to())?;
        Ok(vec![c.val(&y), c.val(&scale), c.val(&zp)])
    })
}
