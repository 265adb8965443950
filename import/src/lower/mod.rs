//! Lowering an ONNX graph to one `.gir` function, the way Glow's IRGen does:
//! one `allocactivation` per intermediate, the instruction writing it, and
//! every `deallocactivation` at the end (the passes shorten lifetimes).
//!
//! Values are tracked as constants (known at import time, folded where an
//! op only moves data) or activations. An activation remembers its ONNX
//! (logical) dims and whether it is stored channels-last: spatial ops want
//! NHWC, so 4-D (and 3-D) activations produced by them stay channels-last,
//! and a transpose back to ONNX order is emitted only where an op needs the
//! logical order (reshape, gemm, graph outputs...). Constants feeding spatial
//! ops are permuted at import time instead.

mod attention;
mod attrs;
mod compose;
mod convtranspose;
mod deform;
mod detection;
mod dft;
mod dispatch;
mod elementwise;
mod fold;
mod grid;
mod index;
mod integer;
mod linalg;
mod math;
mod nn;
mod norm;
pub(crate) mod ops;
mod pool;
mod qdq;
mod recurrence;
mod recurrent;
mod resize;
mod rotary;
mod scan;
mod select;
mod sequence;
mod shape;
mod sort;
mod static_shape;
mod window;

pub(crate) use attrs::Attrs;

use crate::error::{ImportError, Result, Unsupported};
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use crate::{Layout, Options, WeightFile};
use glow_ir::builder::Builder;
use glow_ir::member::{self as m, Member};
use glow_ir::{ElemKind, Function, InstId, Mutability, Opcode, Type, Value, WeightInit};
// The IR's deterministic hasher: SipHash was a tenth of import time.
use glow_ir::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::rc::Rc;

/// An activation: an IR buffer plus how its elements map to ONNX order.
#[derive(Clone, Debug)]
pub(crate) struct Act {
    pub v: Value,
    /// ONNX dims (may be empty for a scalar).
    pub dims: Vec<u64>,
    /// Stored channels-last: physical dims are `dims` with dim 1 moved last.
    pub cl: bool,
}

/// What an ONNX value name stands for during lowering. A constant's tensor
/// is shared: every use of the value clones the `Val`, not the data.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Const { name: String, t: Rc<Tensor> },
    Act(Act),
}

impl Val {
    /// The value's ONNX dims.
    pub fn dims(&self) -> &[u64] {
        match self {
            Val::Const { t, .. } => &t.dims,
            Val::Act(a) => &a.dims,
        }
    }
}

/// The value's ONNX dims, owned.
pub(crate) fn dims_of(v: &Val) -> Vec<u64> {
    v.dims().to_vec()
}

/// Physical dims of channels-last storage for logical `dims`.
pub(crate) fn cl_dims(dims: &[u64]) -> Vec<u64> {
    let mut p = vec![dims[0]];
    p.extend_from_slice(&dims[2..]);
    p.push(dims[1]);
    p
}

/// `perm` with `phys[i] = logical[perm[i]]` for channels-last of rank `r`.
pub(crate) fn cl_perm(r: usize) -> Vec<usize> {
    let mut p = vec![0];
    p.extend(2..r);
    p.push(1);
    p
}

/// The IR element kind of an ONNX element type the importer carries at
/// run time: FLOAT, INT64 (`index64`), INT32 (`index32`), INT8 (`int8`),
/// UINT8 (`uint8`) and BOOL.
pub(crate) fn elem_of_dtype(code: i32) -> Option<ElemKind> {
    use crate::onnx::dtype;
    Some(match code {
        dtype::FLOAT => ElemKind::Float,
        dtype::INT64 => ElemKind::Index64,
        dtype::INT32 => ElemKind::Index32,
        dtype::INT8 => ElemKind::Int8,
        dtype::UINT8 => ElemKind::UInt8,
        dtype::BOOL => ElemKind::Bool,
        _ => return None,
    })
}

/// The ONNX element types `elem_of_dtype` maps, for error messages.
pub(crate) const RUNTIME_DTYPES: &str = "FLOAT, INT64, INT32, INT8, UINT8 and BOOL";

/// IR dims for ONNX dims (a scalar is `<1>`).
pub(crate) fn ir_dims(dims: &[u64]) -> Vec<u64> {
    if dims.is_empty() {
        vec![1]
    } else {
        dims.to_vec()
    }
}

impl Act {
    pub fn phys(&self) -> Vec<u64> {
        if self.cl {
            cl_dims(&self.dims)
        } else {
            ir_dims(&self.dims)
        }
    }
}

/// The lowering state for one graph.
pub(crate) struct Lowerer<'o> {
    pub f: Function,
    pub opts: &'o Options,
    pub opset: i64,
    vals: HashMap<String, Val>,
    allocs: Vec<Value>,
    /// Plain weights made from constants, by ONNX name and element kind.
    const_weights: HashMap<(String, ElemKindKey), Value>,
    pub weights: Vec<WeightFile>,
    /// Bool buffers that hold the negation of their ONNX value (Not is a
    /// view with this flag flipped); only Where and Not read them as they are.
    pub negated: HashSet<Value>,
    /// The node being lowered, for error messages.
    node: String,
    op: String,
    /// The first tensor past the IR's rank or the tensor limit, reported
    /// after the node that made it.
    limit: Option<ImportError>,
    /// Bytes of the constants bound so far (as f32), held to `MAX_TOTAL_BYTES`.
    pub const_bytes: u64,
    /// Every name some node reads or the graph outputs: an output the
    /// lowering does not produce is refused only when one of these needs it.
    pub needed: HashSet<String>,
    /// The graph's nodes, for the QDQ folds that look at a node's readers.
    pub nodes: &'o [NodeProto],
    /// The index in `nodes` of the node being lowered.
    pub cur: usize,
    /// For every value name, the indices of the nodes that read it.
    pub consumers: HashMap<String, Vec<usize>>,
    /// The graph outputs' names.
    pub graph_outputs: HashSet<String>,
    /// Nodes already lowered by a fold (the QuantizeLinear after a folded op).
    pub skip: HashSet<usize>,
    /// DequantizeLinear outputs of activations not dequantized yet: the
    /// quantized buffer (`lower/qdq.rs`); a reader that does not fold gets a
    /// `dequantize` on first use.
    pub pending: HashMap<String, Act>,
    /// DequantizeLinear outputs of constants: the integer data and parameters.
    pub qconsts: HashMap<String, qdq::QConst>,
    /// ONNX element types of the constants (initializers, Constant nodes,
    /// folded QuantizeLinear results).
    pub dtypes: HashMap<String, i32>,
    /// Graph outputs of a fixed capacity, with the weight that holds how
    /// many of their rows are valid (`Imported::row_counts`).
    pub row_counts: Vec<(String, String)>,
}

impl<'o> Lowerer<'o> {
    pub fn new(name: &str, opts: &'o Options, opset: i64, reserved: &[String]) -> Lowerer<'o> {
        let mut f = Function::new(name);
        for r in reserved {
            f.reserve_name(r);
        }
        Lowerer {
            f,
            opts,
            opset,
            vals: HashMap::default(),
            allocs: Vec::new(),
            const_weights: HashMap::default(),
            weights: Vec::new(),
            negated: HashSet::default(),
            needed: HashSet::default(),
            node: String::new(),
            op: String::new(),
            limit: None,
            const_bytes: 0,
            nodes: &[],
            cur: 0,
            consumers: HashMap::default(),
            graph_outputs: HashSet::default(),
            skip: HashSet::default(),
            pending: HashMap::default(),
            qconsts: HashMap::default(),
            dtypes: HashMap::default(),
            row_counts: Vec::new(),
        }
    }

    /// A name not used yet, derived from `base` (`base`, `base.1`, ...).
    pub fn fresh(&mut self, base: &str) -> String {
        self.f.fresh_name_with(nonempty(base), ".")
    }

    /// A builder appending to the function, with the importer's names.
    fn b(&mut self) -> Builder<'_> {
        Builder::new(&mut self.f).with_separator(".")
    }

    pub fn bind(&mut self, name: &str, v: Val) {
        if let Val::Const { t, .. } = &v {
            self.const_bytes = self.const_bytes.saturating_add(4 * t.len() as u64);
            if self.const_bytes > self.max_const_bytes() && self.limit.is_none() {
                self.limit = Some(self.total_error(name));
            }
        }
        self.vals.insert(name.to_string(), v);
    }

    /// The budget of constant bytes: `Options::max_constant_bytes`, at most
    /// `MAX_TOTAL_BYTES`.
    fn max_const_bytes(&self) -> u64 {
        let max = glow_ir::limits::MAX_TOTAL_BYTES;
        self.opts.max_constant_bytes.map_or(max, |b| b.min(max))
    }

    /// Whether `bytes` more constant data stay within the budget; checked
    /// before a constant is materialized.
    pub fn reserve_const(&self, name: &str, bytes: u64) -> Result<()> {
        match self.const_bytes.checked_add(bytes) {
            Some(n) if n <= self.max_const_bytes() => Ok(()),
            _ => Err(self.total_error(name)),
        }
    }

    /// `reserve_const` for a folded constant of `dims`, and the tensor
    /// limit, both before its elements (or the indices that build them)
    /// are allocated: a broadcast or an Expand of small constants can ask
    /// for far more than the model holds.
    pub fn reserve_dims(&self, name: &str, dims: &[u64]) -> Result<()> {
        glow_ir::limits::check_tensor(&format!("tensor `{name}`"), &Type::float(dims))
            .map_err(|msg| self.err(msg))?;
        let n = dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
        self.reserve_const(name, n.map_or(u64::MAX, |n| n.saturating_mul(4)))
    }

    fn total_error(&self, name: &str) -> ImportError {
        let msg = format!(
            "constant `{name}` takes the model's constants past the limit of {} bytes in total",
            self.max_const_bytes()
        );
        if self.node.is_empty() {
            ImportError::model(msg)
        } else {
            self.err(msg)
        }
    }

    /// An error about the current node.
    pub fn err(&self, msg: impl Into<String>) -> ImportError {
        ImportError::Node {
            node: self.node.clone(),
            op: self.op.clone(),
            msg: msg.into(),
        }
    }

    /// A feature of a supported op that the importer does not lower.
    pub fn unsupported(&self, what: impl std::fmt::Display) -> ImportError {
        Unsupported::Feature {
            node: self.node.clone(),
            op: self.op.clone(),
            what: what.to_string(),
        }
        .into()
    }

    /// Records the first tensor that the IR cannot hold (rank above 6 or
    /// more than `MAX_TENSOR_BYTES`), so no `.gir` the verifier rejects is written.
    fn check_dims(&mut self, name: &str, dims: &[u64]) {
        if self.limit.is_some() {
            return;
        }
        // Shapes the IR has no form for are unsupported; sizes past the limit are errors.
        self.limit = Some(if dims.len() > glow_ir::types::MAX_DIMS {
            self.unsupported(format!(
                "tensor `{name}` has rank {}, above the IR's {}",
                dims.len(),
                glow_ir::types::MAX_DIMS
            ))
        } else if dims.contains(&0) {
            self.unsupported(format!("tensor `{name}` has a zero dimension"))
        } else {
            match glow_ir::limits::check_tensor(&format!("tensor `{name}`"), &Type::float(dims)) {
                Ok(_) => return,
                Err(msg) => self.err(msg),
            }
        });
    }

    /// The error `check_dims` recorded, if any.
    pub fn limit_error(&mut self) -> Result<()> {
        self.limit.take().map_or(Ok(()), Err)
    }

    /// Adds a mutable weight (graph input or output) with its exact name.
    pub fn placeholder(&mut self, name: &str, dims: &[u64], kind: ElemKind) -> Value {
        // Graph input and output names were reserved up front.
        self.check_dims(name, dims);
        self.f.reserve_name(name);
        self.b()
            .weight(name, Type::new(kind, &ir_dims(dims)), Mutability::Mutable)
    }

    /// A float const weight holding `t` (dims as given).
    pub fn const_weight(&mut self, base: &str, t: &Tensor) -> Value {
        self.const_weight_kind(base, t, ElemKind::Float)
    }

    /// A const weight holding `t` (dims as given) as elements of `kind`
    /// (integers wrap to the kind's width, bool is `v != 0`). Splat
    /// constants stay inline as `splat(v)`; others go inline or to the
    /// weights file.
    pub fn const_weight_kind(&mut self, base: &str, t: &Tensor, kind: ElemKind) -> Value {
        let inline = self.opts.inline_weights;
        self.const_weight_with(base, t, kind, inline)
    }

    /// `const_weight_kind`, inline (`Data: [...]`) when `inline`; the
    /// parameters of a channel-wise quantized convolution must be (the
    /// engines derive integer multipliers from them when compiling).
    pub fn const_weight_with(
        &mut self,
        base: &str,
        t: &Tensor,
        kind: ElemKind,
        inline: bool,
    ) -> Value {
        let name = self.fresh(base);
        let dims = ir_dims(&t.dims);
        self.check_dims(&name, &dims);
        let ty = Type::new(kind, &dims);
        let v = self.b().weight(&name, ty.clone(), Mutability::Const);
        let Value::Weight(w) = v else {
            unreachable!("Builder::weight returns a weight")
        };
        let ints = (kind != ElemKind::Float).then(|| int_values(t, kind));
        // An integer splat stays `splat(v)` only while f64 holds it exactly.
        let splat = match &ints {
            None => t.splat_value(),
            Some(v) => match v.first() {
                Some(&x) if v.iter().all(|&y| y == x) && x.unsigned_abs() < 1 << 53 => {
                    Some(x as f64)
                }
                _ => None,
            },
        };
        let init = if let Some(s) = splat {
            Some(WeightInit::Splat(s))
        } else if inline {
            Some(match &ints {
                None => WeightInit::Floats(t.to_f32().iter().map(|&x| x as f64).collect()),
                Some(v) => WeightInit::Ints(v.clone()),
            })
        } else {
            let bytes = match &ints {
                None => t.to_f32().iter().flat_map(|x| x.to_le_bytes()).collect(),
                Some(v) => {
                    let n = kind.bytes() as usize;
                    v.iter()
                        .flat_map(|x| x.to_le_bytes()[..n].to_vec())
                        .collect()
                }
            };
            self.weights.push(WeightFile {
                name: name.clone(),
                ty,
                bytes,
            });
            None
        };
        self.f.weights[w.index()].init = init;
        v
    }

    /// A new float activation buffer of IR dims `dims`, deallocated at the end.
    pub fn alloc(&mut self, base: &str, dims: &[u64]) -> Value {
        self.alloc_kind(base, dims, ElemKind::Float)
    }

    /// A new activation buffer of `kind` and IR dims `dims`.
    pub fn alloc_kind(&mut self, base: &str, dims: &[u64], kind: ElemKind) -> Value {
        self.check_dims(base, dims);
        let v = self
            .b()
            .alloc(nonempty(base), Type::new(kind, &ir_dims(dims)));
        self.allocs.push(v);
        v
    }

    /// The element kind of an activation's buffer.
    pub fn kind(&self, a: &Act) -> ElemKind {
        self.f.value_type(a.v).map_or(ElemKind::Float, |t| t.elem)
    }

    /// A bool activation holding its ONNX value: a buffer stored negated
    /// (see `negated`) gets an `elementnot` into a new buffer.
    pub fn plain_bool(&mut self, a: &Act) -> Act {
        if !self.negated.contains(&a.v) {
            return a.clone();
        }
        let base = format!("{}.not", self.f.value_name(a.v));
        let dest = self.alloc_kind(&base, &a.phys(), ElemKind::Bool);
        self.inst(&base, Opcode::ElementNot, &[dest, a.v], &[]);
        Act {
            v: dest,
            ..a.clone()
        }
    }

    /// Deallocates `v` (an allocation made directly) at the end.
    pub fn track_alloc(&mut self, v: Value) {
        self.allocs.push(v);
    }

    /// Appends an instruction named after `base`.
    pub fn inst(
        &mut self,
        base: &str,
        op: Opcode,
        operands: &[Value],
        members: &[Member],
    ) -> InstId {
        self.b().inst(nonempty(base), op, operands, members)
    }

    /// A view of `src` with IR dims `dims` (same element count and kind).
    pub fn view(&mut self, base: &str, src: Value, dims: &[u64]) -> Value {
        let (rank, kind) = self
            .f
            .value_type(src)
            .map_or((1, ElemKind::Float), |t| (t.rank(), t.elem));
        self.check_dims(base, dims);
        let ty = Type::new(kind, &ir_dims(dims));
        self.b().tensorview(nonempty(base), src, ty, vec![0; rank])
    }

    /// Input `i` of the current node, if present and non-empty.
    pub fn opt_input(&self, node: &NodeProto, i: usize) -> Result<Option<Val>> {
        match node.input.get(i).map(String::as_str) {
            None | Some("") => Ok(None),
            Some(name) => match self.vals.get(name) {
                Some(v) => Ok(Some(v.clone())),
                None => Err(self.err(format!("input `{name}` is not defined before this node"))),
            },
        }
    }

    /// Whether input `i` is present and an activation (a constant's data is
    /// not copied to find out).
    pub fn is_act(&self, node: &NodeProto, i: usize) -> bool {
        node.input
            .get(i)
            .and_then(|name| self.vals.get(name))
            .is_some_and(|v| matches!(v, Val::Act(_)))
    }

    pub fn input(&self, node: &NodeProto, i: usize) -> Result<Val> {
        self.opt_input(node, i)?
            .ok_or_else(|| self.err(format!("missing input {i}")))
    }

    /// Input `i`, which must be a constant.
    pub fn const_input(&self, node: &NodeProto, i: usize) -> Result<Rc<Tensor>> {
        match self.input(node, i)? {
            Val::Const { t, .. } => Ok(t),
            Val::Act(_) => Err(ImportError::NeedsConstant {
                node: self.node.clone(),
                op: self.op.clone(),
                input: node.input.get(i).cloned().unwrap_or_default(),
            }),
        }
    }

    /// A value as an activation (constants become plain float const weights).
    pub fn act(&mut self, v: &Val) -> Act {
        self.act_kind(v, ElemKind::Float)
    }

    /// A value as an activation; a constant becomes a const weight of `kind`
    /// (an activation keeps its own kind).
    pub fn act_kind(&mut self, v: &Val, kind: ElemKind) -> Act {
        match v {
            Val::Act(a) => a.clone(),
            Val::Const { name, t } => {
                let key = (name.clone(), ElemKindKey(kind.base_name()));
                let w = match self.const_weights.get(&key) {
                    Some(&w) => w,
                    None => {
                        let w = self.const_weight_kind(name, t, kind);
                        self.const_weights.insert(key, w);
                        w
                    }
                };
                Act {
                    v: w,
                    dims: t.dims.clone(),
                    cl: false,
                }
            }
        }
    }

    /// The activation in ONNX element order (a transpose when needed).
    // `to_*` names the layout the activation is brought to, not a
    // conversion of the lowering context.
    #[allow(clippy::wrong_self_convention)]
    pub fn to_plain(&mut self, a: &Act, _user: &str) -> Act {
        if !a.cl {
            return a.clone();
        }
        let base = self.f.value_name(a.v).to_string();
        let base = base.as_str();
        let r = a.dims.len();
        let v = if same_order(&a.dims) {
            self.view(&format!("{base}.nchw"), a.v, &a.dims)
        } else {
            let kind = self.kind(a);
            let out = self.alloc_kind(&format!("{base}.nchw"), &a.dims, kind);
            // Inverse of cl_perm: logical j comes from physical s[j].
            let mut shuffle = vec![0i64, r as i64 - 1];
            shuffle.extend(1..r as i64 - 1);
            self.transpose(base, out, a.v, shuffle);
            out
        };
        Act {
            v,
            dims: a.dims.clone(),
            cl: false,
        }
    }

    /// The activation stored channels-last (rank >= 3).
    #[allow(clippy::wrong_self_convention)]
    pub fn to_cl(&mut self, a: &Act, _user: &str) -> Act {
        if a.cl || a.dims.len() < 3 {
            return a.clone();
        }
        let base = self.f.value_name(a.v).to_string();
        let base = base.as_str();
        let phys = cl_dims(&a.dims);
        let v = if same_order(&a.dims) {
            self.view(&format!("{base}.nhwc"), a.v, &phys)
        } else {
            let kind = self.kind(a);
            let out = self.alloc_kind(&format!("{base}.nhwc"), &phys, kind);
            let shuffle = cl_perm(a.dims.len()).iter().map(|&p| p as i64).collect();
            self.transpose(base, out, a.v, shuffle);
            out
        };
        Act {
            v,
            dims: a.dims.clone(),
            cl: true,
        }
    }

    pub fn transpose(&mut self, base: &str, dest: Value, src: Value, shuffle: Vec<i64>) {
        self.inst(
            &format!("{base}.transpose"),
            Opcode::Transpose,
            &[dest, src],
            &[m::SHUFFLE.to(shuffle)],
        );
    }

    /// A buffer of IR dims `dims` with every element `value`.
    /// Broadcasts `src` (dims `cur`, 1 where it broadcasts) to `full` along
    /// the first `axes` axes: one `inserttensor` with `Count` copies per axis
    /// that grows. `cur` ends equal to `full` on those axes.
    pub fn tile(
        &mut self,
        out: &str,
        mut src: Value,
        cur: &mut [u64],
        full: &[u64],
        axes: usize,
    ) -> Value {
        for axis in 0..axes.min(cur.len()).min(full.len()) {
            if cur[axis] == full[axis] {
                continue;
            }
            cur[axis] = full[axis];
            let kind = self.f.value_type(src).map_or(ElemKind::Float, |t| t.elem);
            let t = self.splat_buffer_kind(&format!("{out}.tile"), cur, 0.0, kind);
            let members = [
                m::OFFSETS.to(vec![0; cur.len()]),
                m::COUNT.to(full[axis] as i64),
                m::AXIS.to(axis as i64),
            ];
            self.inst(
                &format!("{out}.tile"),
                Opcode::InsertTensor,
                &[t, src],
                &members,
            );
            src = t;
        }
        src
    }

    pub fn splat_buffer(&mut self, base: &str, dims: &[u64], value: f64) -> Value {
        self.splat_buffer_kind(base, dims, value, ElemKind::Float)
    }

    /// `splat_buffer` of element kind `kind`.
    pub fn splat_buffer_kind(
        &mut self,
        base: &str,
        dims: &[u64],
        value: f64,
        kind: ElemKind,
    ) -> Value {
        let b = self.alloc_kind(base, dims, kind);
        self.inst(
            &format!("{base}.splat"),
            Opcode::Splat,
            &[b],
            &[m::VALUE.to(value)],
        );
        b
    }

    /// Copies each graph output into its mutable weight (of the declared
    /// element kind), then deallocates every activation (in allocation order).
    pub fn finish(&mut self, outputs: &[(String, ElemKind)]) -> Result<()> {
        for (name, kind) in outputs {
            let (name, kind) = (name.as_str(), *kind);
            qdq::prepare_value(self, name);
            let v = self.vals.get(name).cloned().ok_or_else(|| {
                ImportError::model(format!("graph output `{name}` is never produced"))
            })?;
            let a = self.act_kind(&v, kind);
            let a = self.to_plain(&a, name);
            let a = self.plain_bool(&a);
            if self.kind(&a) != kind {
                return Err(Unsupported::Graph {
                    edge: format!("graph output `{name}`"),
                    what: format!(
                        "unsupported: it is computed as {} but declared {kind}",
                        self.kind(&a)
                    ),
                }
                .into());
            }
            let w = self.placeholder(name, &a.dims, kind);
            self.b().copy(&format!("{name}.save"), w, a.v);
        }
        for a in std::mem::take(&mut self.allocs) {
            let base = format!("{}.dealloc", self.f.value_name(a));
            self.b().dealloc(&base, a);
        }
        self.limit_error()
    }
}

/// An element kind as a hashable key (`ElemKind` holds floats).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ElemKindKey(&'static str);

/// A constant's values in a plain integer kind or bool: integers wrap to
/// the kind's width (two's complement), floats truncate toward zero first;
/// bool is `v != 0`.
fn int_values(t: &Tensor, kind: ElemKind) -> Vec<i64> {
    if kind == ElemKind::Bool {
        return t.to_f32().iter().map(|&x| (x != 0.0) as i64).collect();
    }
    let bits = kind.bytes() * 8;
    t.to_i64()
        .into_iter()
        .map(|v| {
            if bits >= 64 {
                return v;
            }
            let shift = 64 - bits;
            if matches!(kind, ElemKind::UInt8 | ElemKind::UInt8Q { .. }) {
                ((v as u64) << shift >> shift) as i64
            } else {
                (v << shift) >> shift
            }
        })
        .collect()
}

/// The base name for a value whose ONNX name is empty.
fn nonempty(base: &str) -> &str {
    if base.is_empty() {
        "v"
    } else {
        base
    }
}

/// Whether channels-last and ONNX order coincide in memory for `dims`
/// (one channel, or no spatial extent), so a view replaces a transpose.
fn same_order(dims: &[u64]) -> bool {
    dims.len() < 3 || dims[1] == 1 || dims[2..].iter().product::<u64>() == 1
}

/// Normalizes a possibly negative axis against `rank`.
pub(crate) fn norm_axis(l: &Lowerer, axis: i64, rank: usize) -> Result<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(l.err(format!("axis {axis} is out of range for rank {rank}")))
    }
}

pub(crate) fn layout_is_nchw(l: &Lowerer) -> bool {
    l.opts.layout == Layout::Nchw
}

#[cfg(test)]
mod tests {
    use super::*;
    use glow_ir::limits::MAX_TOTAL_BYTES;

    /// Constants are held to the total limit before they are materialized
    /// (`reserve_const`) and as they are bound.
    #[test]
    fn constants_are_held_to_the_total_limit() {
        let opts = Options::default();
        let mut l = Lowerer::new("m", &opts, 13, &[]);
        l.const_bytes = MAX_TOTAL_BYTES - 8;
        assert!(l.reserve_const("w", 8).is_ok());
        let e = l.reserve_const("w", 12).unwrap_err().to_string();
        assert!(
            e.contains(
                "constant `w` takes the model's constants past the limit of 4294967296 bytes"
            ),
            "{e}"
        );
        assert!(l.reserve_const("w", u64::MAX).is_err());
        let small = Val::Const {
            name: "c".into(),
            t: Tensor::f32(vec![3], vec![0.0; 3]).into(),
        };
        l.bind("c", small);
        assert!(l
            .limit_error()
            .unwrap_err()
            .to_string()
            .contains("constant `c`"));
    }
}
