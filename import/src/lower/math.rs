//! Element-wise ops built from the existing instructions: Neg, Abs,
//! Reciprocal, Sign, ThresholdedRelu, Shrink, Softsign, Swish,
//! PRelu, Identity, and the variadic Max, Min, Mean. Comparisons use
//! `elementcmplt`, strict as ONNX's are (false when either side is NaN),
//! and `elementselect`; every lowering is exact. Constant inputs are folded
//! at import time.

use super::elementwise::apply;
use super::{Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_backend::ops;
use glow_ir::{ElemKind, Opcode, Type, Value};

/// The steps this module's lowerings are written in. Each op is one
/// recipe over them (`recipe`), run either on buffers (`Ew` emits the
/// instructions) or on one constant element (`Fold` evaluates the same
/// instructions with the engines' operators), so a folded constant has the
/// bits a run of the instructions gives.
trait Steps {
    type V: Copy;
    fn splat(&mut self, v: f64) -> Self::V;
    fn bin(&mut self, op: Opcode, a: Self::V, b: Self::V) -> Self::V;
    /// `a < b` as a bool value (false when either is NaN, as ONNX's strict
    /// comparisons are).
    fn lt(&mut self, a: Self::V, b: Self::V) -> Self::V;
    fn select(&mut self, c: Self::V, a: Self::V, b: Self::V) -> Self::V;
    fn unary(&mut self, op: Opcode, x: Self::V) -> Self::V;
}

/// The unary op `op` of `x` in steps.
fn recipe<S: Steps>(e: &mut S, op: &str, attrs: &Attrs, xv: S::V) -> S::V {
    let alpha = |d: f32| attrs.float("alpha", d) as f64;
    match op {
        "Neg" => {
            let m = e.splat(-1.0);
            e.bin(Opcode::ElementMul, xv, m)
        }
        "Abs" => {
            let m = e.splat(-1.0);
            let n = e.bin(Opcode::ElementMul, xv, m);
            e.bin(Opcode::ElementMax, xv, n)
        }
        "Reciprocal" => {
            let one = e.splat(1.0);
            e.bin(Opcode::ElementDiv, one, xv)
        }
        "Sign" => {
            let (zero, one, m) = (e.splat(0.0), e.splat(1.0), e.splat(-1.0));
            // 1 above 0, -1 below, else x + 0: +0 for either zero, NaN for NaN.
            let rest = e.bin(Opcode::ElementAdd, xv, zero);
            let neg = e.lt(xv, zero);
            let t = e.select(neg, m, rest);
            let pos = e.lt(zero, xv);
            e.select(pos, one, t)
        }
        "ThresholdedRelu" => {
            let (zero, t) = (e.splat(0.0), e.splat(alpha(1.0)));
            let c = e.lt(t, xv);
            e.select(c, xv, zero)
        }
        "Shrink" => {
            let bias = attrs.float("bias", 0.0) as f64;
            let lambd = attrs.float("lambd", 0.5) as f64;
            let (zero, b, lo, hi) = (e.splat(0.0), e.splat(bias), e.splat(-lambd), e.splat(lambd));
            let xp = e.bin(Opcode::ElementAdd, xv, b);
            let xm = e.bin(Opcode::ElementSub, xv, b);
            // NaN is neither below -lambd nor above lambd: 0.
            let c1 = e.lt(xv, lo);
            let y1 = e.select(c1, xp, zero);
            let c2 = e.lt(hi, xv);
            e.select(c2, xm, y1)
        }
        "Softsign" => {
            let (m, one) = (e.splat(-1.0), e.splat(1.0));
            let n = e.bin(Opcode::ElementMul, xv, m);
            let ab = e.bin(Opcode::ElementMax, xv, n);
            let d = e.bin(Opcode::ElementAdd, ab, one);
            e.bin(Opcode::ElementDiv, xv, d)
        }
        _ => {
            // Swish: x * sigmoid(alpha * x).
            let s = e.splat(alpha(1.0));
            let ax = e.bin(Opcode::ElementMul, xv, s);
            let sg = e.unary(Opcode::Sigmoid, ax);
            e.bin(Opcode::ElementMul, xv, sg)
        }
    }
}

/// The steps on one float element: the engines' functions
/// (`glow_backend::ops`); a bool is 0.0 or 1.0.
struct Fold;

impl Steps for Fold {
    type V = f32;
    fn splat(&mut self, v: f64) -> f32 {
        // A float splat weight holds its value as f32.
        v as f32
    }
    fn bin(&mut self, op: Opcode, a: f32, b: f32) -> f32 {
        (ops::binary(op).expect("a binary opcode").float)(a, b)
    }
    fn lt(&mut self, a: f32, b: f32) -> f32 {
        let lt = ops::compare(Opcode::ElementCmpLT).expect("elementcmplt");
        f32::from((lt.float)(a as f64, b as f64))
    }
    fn select(&mut self, c: f32, a: f32, b: f32) -> f32 {
        if c != 0.0 {
            a
        } else {
            b
        }
    }
    fn unary(&mut self, op: Opcode, x: f32) -> f32 {
        (ops::unary(op).expect("a unary opcode").f)(x, &[])
    }
}

/// Builds instructions over buffers of one physical shape.
struct Ew<'a, 'o> {
    l: &'a mut Lowerer<'o>,
    phys: Vec<u64>,
    base: String,
    out: String,
}

impl Ew<'_, '_> {
    fn buf(&mut self, suffix: &str) -> Value {
        self.l.alloc(&format!("{}.{suffix}", self.out), &self.phys)
    }
}

impl Steps for Ew<'_, '_> {
    type V = Value;
    fn splat(&mut self, v: f64) -> Value {
        let phys = self.phys.clone();
        self.l.splat_buffer(&format!("{}.c", self.out), &phys, v)
    }
    fn bin(&mut self, op: Opcode, a: Value, b: Value) -> Value {
        let d = self.buf("t");
        self.l.inst(&self.base, op, &[d, a, b], &[]);
        d
    }
    fn lt(&mut self, a: Value, b: Value) -> Value {
        let ty = Type::new(ElemKind::Bool, &self.phys);
        let c = self.l.b().alloc(&format!("{}.cond", self.out), ty);
        self.l.track_alloc(c);
        self.l
            .inst(&self.base, Opcode::ElementCmpLT, &[c, a, b], &[]);
        c
    }
    fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let d = self.buf("t");
        self.l
            .inst(&self.base, Opcode::ElementSelect, &[d, c, a, b], &[]);
        d
    }
    fn unary(&mut self, op: Opcode, x: Value) -> Value {
        let d = self.buf(op.name());
        self.l.inst(&self.base, op, &[d, x], &[]);
        d
    }
}

fn node_base(node: &NodeProto, out: &str) -> String {
    if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    }
}

/// The unary ops of this module.
pub(super) fn unary(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let x = l.input(node, 0)?;
    let op = node.op_type.as_str();
    if op == "Identity" {
        return Ok(vec![x]);
    }
    let attrs = Attrs(&node.attribute);
    let out = node.output.first().cloned().unwrap_or_default();
    if let Val::Const { t, .. } = &x {
        let v = t
            .to_f32()
            .into_iter()
            .map(|x| recipe(&mut Fold, op, &attrs, x))
            .collect();
        return Ok(vec![Val::Const {
            name: out,
            t: Tensor::f32(t.dims.clone(), v).into(),
        }]);
    }
    let a = l.act(&x);
    let base = node_base(node, &out);
    let mut e = Ew {
        l,
        phys: a.phys(),
        base,
        out,
    };
    let v = recipe(&mut e, op, &attrs, a.v);
    Ok(vec![Val::Act(Act {
        v,
        dims: a.dims,
        cl: a.cl,
    })])
}

/// PRelu: `x < 0 ? slope * x : x`, the slope broadcast to x.
pub(super) fn prelu(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let x = l.input(node, 0)?;
    let slope = l.input(node, 1)?;
    let out = node.output.first().cloned().unwrap_or_default();
    let base = node_base(node, &out);
    let Val::Act(prod) = apply(l, Opcode::ElementMul, &x, &slope, &out, &base)? else {
        return Err(l.unsupported("PRelu of constants"));
    };
    let xa = l.act(&x);
    if xa.dims != prod.dims {
        return Err(l.err(format!(
            "slope broadcasts input {:?} to {:?}",
            xa.dims, prod.dims
        )));
    }
    let xa = if prod.cl {
        l.to_cl(&xa, &out)
    } else {
        l.to_plain(&xa, &out)
    };
    let mut e = Ew {
        l,
        phys: prod.phys(),
        base,
        out,
    };
    // x < 0 strictly: -0 stays -0 whatever the slope's sign.
    let zero = e.splat(0.0);
    let c = e.lt(xa.v, zero);
    let v = e.select(c, prod.v, xa.v);
    Ok(vec![Val::Act(Act { v, ..prod })])
}

/// Max, Min (variadic, broadcasting) and Mean (their sum divided by the count).
pub(super) fn variadic(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let base = node_base(node, &out);
    let op = match node.op_type.as_str() {
        "Max" => Opcode::ElementMax,
        "Min" => Opcode::ElementMin,
        _ => Opcode::ElementAdd,
    };
    let mut acc = l.input(node, 0)?;
    for i in 1..node.input.len() {
        let v = l.input(node, i)?;
        acc = apply(l, op, &acc, &v, &out, &base)?;
    }
    if node.op_type == "Mean" && node.input.len() > 1 {
        let n = Val::Const {
            name: format!("{out}.count"),
            t: Tensor::f32(vec![], vec![node.input.len() as f32]).into(),
        };
        acc = apply(l, Opcode::ElementDiv, &acc, &n, &out, &base)?;
    }
    Ok(vec![acc])
}
