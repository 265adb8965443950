//! `quantize`: Glow's profile-guided quantization. From a profile of the
//! float function (`glow-run --dump-profile`, `profile.rs`) it rewrites the
//! function to the quantized instructions of docs/quantization.md, keeping
//! the types of its mutable weights (the float inputs and outputs).
//!
//! The algorithm, linear in the function:
//! 1. Buffers (allocs and weights, through their views) joined by data
//!    movement (`transpose`, `inserttensor`, `extracttensor`) form classes
//!    that must share one quantized type. A class is quantized when it holds
//!    only activations, all float, and every instruction writing into it is
//!    convertible; its parameters come from the union of its buffers'
//!    profiled ranges through the schema (`params.rs`).
//! 2. In program order: a convertible arithmetic instruction is rewritten
//!    when its result is in a quantized class (`convolution`,
//!    `fullyconnected`, `matmul` and `batchmatmul` always): float inputs get
//!    a `quantize` (with their class's parameters) before it, constant
//!    filters and weights become new `i8` constants (per output channel with
//!    `channelwise`, as `channelwisequantizedconvolution`; per output
//!    column with `rowwise`, as `rowwisequantizedfullyconnected`), biases `i32`
//!    constants of scale `Sx × Sw`, and a float result is computed into a
//!    quantized temporary and `dequantize`d. Every other instruction reads a
//!    `dequantize`d copy of each quantized input. A `copy` between classes
//!    becomes `quantize`, `dequantize` or `rescalequantized`. A
//!    `quantize` of a value that is a `dequantize` of `q` reads `q` instead
//!    (`rescalequantized`, or `q` itself when the parameters are equal).
//!    Conversions are shared between readers until the buffer is written.
//! 3. Every activation's dealloc is placed after its last use.

pub mod params;
pub mod profile;

use crate::pass::{Pass, PassContext, PassInfo, PassOption, PassOptions};
use glow_ir::diag::did_you_mean;
use glow_ir::member::{self as m, Member};
use glow_ir::{
    Diagnostic, ElemKind, Function, InstData, InstId, Mutability, Opcode, OperandKind, Span, Type,
    Value, WeightData, WeightInit,
};
use params::{choose, rescale_histogram, Calibration, Chosen, Schema};
use profile::Profile;
use std::collections::HashMap;

pub static INFO: PassInfo = PassInfo {
    name: "quantize",
    summary: "Rewrite a float function to quantized instructions from a profile (Glow's profile-guided quantization)",
    options: &[
        PassOption {
            name: "profile",
            help: "the profile written by glow-run --dump-profile (also --load-profile=P.yaml)",
        },
        PassOption {
            name: "schema",
            help: "asymmetric (default), symmetric, symmetric_with_uint8 or symmetric_with_power2_scale",
        },
        PassOption {
            name: "calibration",
            help: "none (default: the profiled min/max) or KL (Glow's KL-divergence minimization)",
        },
        PassOption {
            name: "channelwise",
            help: "true: quantize convolution filters per output channel (channelwisequantizedconvolution)",
        },
        PassOption {
            name: "rowwise",
            help: "true: quantize fullyconnected weights per row (rowwisequantizedfullyconnected)",
        },
        PassOption {
            name: "keep",
            help: "opcodes to keep in float, separated by `:` (also --keep-original-precision-for=a,b)",
        },
    ],
    stats: &[
        ("quantized", "Number of instructions rewritten to quantized arithmetic"),
        ("quantizes", "Number of quantize instructions inserted"),
        ("dequantizes", "Number of dequantize instructions inserted"),
        ("rescales", "Number of rescalequantized instructions inserted"),
        ("constants", "Number of constant weights quantized at compile time"),
        ("folded", "Number of quantize(dequantize(x)) pairs folded"),
    ],
    counters: &[],
    create: |opts: &PassOptions| Ok(Box::new(Quantize::from_options(opts)?)),
};

/// The instructions with quantized arithmetic kernels.
const ARITH: &[Opcode] = &[
    Opcode::Convolution,
    Opcode::FullyConnected,
    Opcode::MatMul,
    Opcode::BatchMatMul,
    Opcode::ElementAdd,
    Opcode::ElementSub,
    Opcode::ElementMul,
    Opcode::ElementMax,
    Opcode::ElementMin,
    Opcode::BatchedAdd,
    Opcode::Relu,
    Opcode::Clip,
    Opcode::MaxPool,
    Opcode::AvgPool,
];

/// Always worth converting, whatever reads the result.
const HEAVY: &[Opcode] = &[
    Opcode::Convolution,
    Opcode::FullyConnected,
    Opcode::MatMul,
    Opcode::BatchMatMul,
];

/// Data movement whose operands share one quantized type.
const MOVEMENT: &[Opcode] = &[
    Opcode::Transpose,
    Opcode::InsertTensor,
    Opcode::ExtractTensor,
];

pub struct Quantize {
    pub profile: Option<String>,
    pub schema: Schema,
    pub calibration: Calibration,
    pub channelwise: bool,
    pub rowwise: bool,
    pub keep: Vec<Opcode>,
}

impl Quantize {
    pub fn from_options(opts: &PassOptions) -> Result<Quantize, String> {
        let schema = Schema::parse(opts.get("schema").unwrap_or("asymmetric"))?;
        let calibration = Calibration::parse(opts.get("calibration").unwrap_or("none"))?;
        let channelwise = opts.get_bool("channelwise", false)?;
        let rowwise = opts.get_bool("rowwise", false)?;
        let mut keep = Vec::new();
        for name in opts
            .get("keep")
            .unwrap_or("")
            .split([':', '+'])
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            match Opcode::from_name(name) {
                Some(op) => keep.push(op),
                None => {
                    let hint = did_you_mean(name, Opcode::ALL.iter().map(|o| o.name()))
                        .map(|s| format!("; did you mean `{s}`?"))
                        .unwrap_or_default();
                    return Err(format!("`keep`: unknown opcode `{name}`{hint}"));
                }
            }
        }
        Ok(Quantize {
            profile: opts.get("profile").map(str::to_string),
            schema,
            calibration,
            channelwise,
            rowwise,
            keep,
        })
    }
}

fn is_float(f: &Function, v: Value) -> bool {
    f.value_type(v).is_some_and(|t| t.elem == ElemKind::Float)
}

/// What the rewrite does with an instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Arith,
    Movement,
    Copy,
    Other,
}

impl Quantize {
    fn role(&self, f: &Function, i: InstId) -> Role {
        let inst = f.inst(i);
        let op = inst.opcode;
        if self.keep.contains(&op) {
            return Role::Other;
        }
        let all_float = inst.operands.iter().all(|o| is_float(f, o.value));
        if !all_float {
            return Role::Other;
        }
        if ARITH.contains(&op) {
            if op == Opcode::Convolution {
                let act = inst.get(m::FUSED_ACTIVATION).unwrap_or("NONE");
                let residual = inst.operand_named("Residual").is_some();
                if residual || !matches!(act, "NONE" | "RELU" | "CLIP") {
                    return Role::Other;
                }
            }
            Role::Arith
        } else if MOVEMENT.contains(&op) {
            Role::Movement
        } else if op == Opcode::Copy {
            Role::Copy
        } else {
            Role::Other
        }
    }
}

/// Union-find over dense indices.
struct Classes {
    parent: Vec<usize>,
}

impl Classes {
    fn find(&mut self, mut x: usize) -> usize {
        if x >= self.parent.len() {
            // A value the pass created: a class of its own, never quantized.
            return x;
        }
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }
}

/// A dense index over the values of the function as the pass found it
/// (`nw` weights): new weights come after the instructions, so the indices
/// of the original values never move.
fn dense_in(nw: usize, v: Value) -> usize {
    match v {
        Value::Weight(w) if w.index() < nw => w.index(),
        Value::Weight(w) => usize::MAX - w.index(),
        Value::Inst(i) => nw + i.index(),
    }
}

fn value_span(f: &Function, v: Value) -> Option<Span> {
    match v {
        Value::Weight(w) => f.spans.weight(w.index()).map(|s| s.name),
        Value::Inst(i) => f.spans.inst(i.index()).map(|s| s.name),
    }
}

fn at(d: Diagnostic, span: Option<Span>) -> Diagnostic {
    match span {
        Some(s) => d.at(s),
        None => d,
    }
}

/// The f32 values of a constant float weight with inline data.
fn const_values(f: &Function, v: Value) -> Option<Result<Vec<f32>, Diagnostic>> {
    let Value::Weight(w) = v else { return None };
    let wd = f.weight(w);
    if wd.mutability != Mutability::Const {
        return None;
    }
    let n = wd.ty.size() as usize;
    Some(match wd.init.as_ref() {
        Some(WeightInit::Splat(x)) => Ok(vec![*x as f32; n]),
        Some(WeightInit::Floats(v)) if v.len() == n => Ok(v.iter().map(|&x| x as f32).collect()),
        _ => Err(at(
            Diagnostic::error(format!(
                "constant weight `%{}` has no inline `Data`: the quantize pass needs its values (import without --weights)",
                wd.name
            )),
            value_span(f, v),
        )),
    })
}

fn min_max(v: &[f32]) -> (f32, f32) {
    let lo = v.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    if lo > hi {
        (0.0, 0.0)
    } else {
        (lo, hi)
    }
}

fn quantize_values(v: &[f32], scale: f32, offset: i32, range: (i64, i64)) -> Vec<i64> {
    v.iter()
        .map(|&x| glow_ir::quant::quantize(x, scale, offset, range))
        .collect()
}

/// A bias value in `i32` of scale `scale` (offset 0), rounded to nearest.
fn quantize_bias(b: f32, scale: f32) -> i64 {
    let r = (b as f64 / scale as f64).round();
    r.clamp(i32::MIN as f64, i32::MAX as f64) as i64
}

fn with_kind(ty: &Type, elem: ElemKind) -> Type {
    Type::new(elem, &ty.dims)
}

/// The schema used for constant weights: Glow quantizes weights to `i8`.
fn weight_schema(s: Schema) -> Schema {
    if s == Schema::SymmetricWithUint8 {
        Schema::Symmetric
    } else {
        s
    }
}

struct Rewriter<'a> {
    q: &'a Quantize,
    /// The weight count before the rewrite (`dense_in`).
    nw: usize,
    profile: &'a Profile,
    classes: Classes,
    /// Per class root: its chosen parameters (`None`: could not be chosen).
    chosen: HashMap<usize, Option<Chosen>>,
    quantized: Vec<bool>,
    version: HashMap<Value, u32>,
    qcache: HashMap<(Value, u32, i32, bool), (Value, u32)>,
    dqcache: HashMap<Value, (Value, u32)>,
    /// Float value `v` holds `dequantize(q)`: (q, v's version, q's version).
    from_dq: HashMap<Value, (Value, u32, u32)>,
    order: Vec<InstId>,
    new_allocs: Vec<Value>,
    errors: Vec<Diagnostic>,
    consts: HashMap<(Value, u32, u32), Value>,
    stats: HashMap<&'static str, u64>,
    debug: Vec<String>,
}

impl Rewriter<'_> {
    fn origin(f: &Function, v: Value) -> Value {
        f.origin(v).0
    }

    fn root(&mut self, f: &Function, v: Value) -> usize {
        let d = dense_in(self.nw, Self::origin(f, v));
        self.classes.find(d)
    }

    fn ver(&self, f: &Function, v: Value) -> u32 {
        *self.version.get(&Self::origin(f, v)).unwrap_or(&0)
    }

    fn bump(&mut self, f: &Function, v: Value) {
        *self.version.entry(Self::origin(f, v)).or_default() += 1;
    }

    fn stat(&mut self, k: &'static str) {
        *self.stats.entry(k).or_default() += 1;
    }

    /// The parameters of `v`'s class, from the profile (errors reported once).
    fn params_of(
        &mut self,
        f: &Function,
        v: Value,
        members: &HashMap<usize, Vec<Value>>,
    ) -> Option<Chosen> {
        let root = self.root(f, v);
        if let Some(c) = self.chosen.get(&root) {
            return *c;
        }
        let strict = self.quantized.get(root).copied().unwrap_or(false);
        let mut lo = f32::INFINITY;
        let mut hi = f32::NEG_INFINITY;
        let mut entries = Vec::new();
        let mut result = None;
        let mut failed = false;
        let list = members.get(&root).cloned().unwrap_or_default();
        for &m in &list {
            let name = f.value_name(m);
            match self.profile.get(name) {
                Some(b) => {
                    if b.min > b.max || !b.min.is_finite() || !b.max.is_finite() {
                        self.errors.push(at(
                            Diagnostic::error(format!(
                                "the profile's range of `%{name}` is empty or not finite (min {:?} > max {:?}): it was never written while profiling",
                                b.min, b.max
                            )),
                            value_span(f, m),
                        ));
                        failed = true;
                        continue;
                    }
                    lo = lo.min(b.min);
                    hi = hi.max(b.max);
                    entries.push(b);
                }
                None if strict || list.len() == 1 => {
                    self.errors.push(at(
                        Diagnostic::error(format!("buffer `%{name}` is missing from the profile"))
                            .with_note("profile this function with glow-run --dump-profile"),
                        value_span(f, m),
                    ));
                    failed = true;
                }
                None => {}
            }
        }
        if !failed && entries.is_empty() {
            let name = f.value_name(v).to_string();
            self.errors.push(at(
                Diagnostic::error(format!("buffer `%{name}` is missing from the profile")),
                value_span(f, Self::origin(f, v)),
            ));
            failed = true;
        }
        if !failed {
            // Histograms over the union range, summed.
            let bins = entries.iter().map(|b| b.histogram.len()).max().unwrap_or(0);
            let mut hist = vec![0f32; bins];
            for b in &entries {
                if b.histogram.len() == bins {
                    let h = if b.min < b.max && lo < hi {
                        rescale_histogram(&b.histogram, b.min, b.max, lo, hi)
                    } else {
                        b.histogram.clone()
                    };
                    for (a, x) in hist.iter_mut().zip(h) {
                        *a += x;
                    }
                }
            }
            let c = choose(lo, hi, &hist, self.q.schema, self.q.calibration);
            self.debug.push(format!(
                "class of `%{}`: range [{lo:?}, {hi:?}] -> {}",
                f.value_name(Self::origin(f, v)),
                c.kind()
            ));
            result = Some(c);
        }
        self.chosen.insert(root, result);
        result
    }

    fn new_inst(
        &mut self,
        f: &mut Function,
        base: &str,
        op: Opcode,
        operands: &[Value],
        ty: Option<Type>,
    ) -> (InstId, Option<Value>) {
        let name = f.fresh_name(base);
        let members: Vec<Member> = match &ty {
            Some(t) => vec![m::TY.to(t.clone())],
            None => vec![],
        };
        let id = f.push_inst(InstData::new(name, op, operands, &members));
        self.order.push(id);
        (id, ty.map(|_| Value::Inst(id)))
    }

    fn alloc(&mut self, f: &mut Function, base: &str, ty: Type) -> Value {
        let (_, v) = self.new_inst(f, base, Opcode::AllocActivation, &[], Some(ty));
        let v = v.expect("an alloc has a value");
        self.new_allocs.push(v);
        v
    }

    /// `v` (float) as the quantized kind `c`, inserted at the current point.
    fn quantized_value(&mut self, f: &mut Function, v: Value, c: Chosen) -> Value {
        let kind = c.kind();
        if let Some(&(q, vv, qv)) = self.from_dq.get(&v) {
            if vv == self.ver(f, v) && qv == self.ver(f, q) {
                let qk = f.value_type(q).map(|t| t.elem);
                if qk == Some(kind) {
                    self.stat("folded");
                    return q;
                }
                let key = (q, c.scale.to_bits(), c.offset, c.unsigned);
                if let Some(&(r, ver)) = self.qcache.get(&key) {
                    if ver == self.ver(f, q) {
                        return r;
                    }
                }
                let ty = with_kind(f.value_type(v).expect("a buffer"), kind);
                let base = format!("{}.rescaled", f.value_name(q));
                let dest = self.alloc(f, &base, ty);
                let name = format!("{}.rescale", f.value_name(q));
                self.new_inst(f, &name, Opcode::RescaleQuantized, &[dest, q], None);
                self.stat("folded");
                self.stat("rescales");
                let ver = self.ver(f, q);
                self.qcache.insert(key, (dest, ver));
                return dest;
            }
        }
        let key = (v, c.scale.to_bits(), c.offset, c.unsigned);
        if let Some(&(r, ver)) = self.qcache.get(&key) {
            if ver == self.ver(f, v) {
                return r;
            }
        }
        let ty = with_kind(f.value_type(v).expect("a buffer"), kind);
        let base = format!("{}.q", f.value_name(v));
        let dest = self.alloc(f, &base, ty);
        let name = format!("{}.quantize", f.value_name(v));
        self.new_inst(f, &name, Opcode::Quantize, &[dest, v], None);
        self.stat("quantizes");
        let ver = self.ver(f, v);
        self.qcache.insert(key, (dest, ver));
        dest
    }

    /// `v` (quantized) as float, inserted at the current point.
    fn float_value(&mut self, f: &mut Function, v: Value) -> Value {
        if let Some(&(r, ver)) = self.dqcache.get(&v) {
            if ver == self.ver(f, v) {
                return r;
            }
        }
        let ty = with_kind(f.value_type(v).expect("a buffer"), ElemKind::Float);
        let base = format!("{}.float", f.value_name(v));
        let dest = self.alloc(f, &base, ty);
        let name = format!("{}.dequantize", f.value_name(v));
        self.new_inst(f, &name, Opcode::Dequantize, &[dest, v], None);
        self.stat("dequantizes");
        let ver = self.ver(f, v);
        self.dqcache.insert(v, (dest, ver));
        self.from_dq.insert(dest, (v, 0, ver));
        dest
    }

    fn const_weight(
        &mut self,
        f: &mut Function,
        like: Value,
        suffix: &str,
        ty: Type,
        init: WeightInit,
    ) -> Value {
        let name = f.fresh_name(&format!("{}.{suffix}", f.value_name(like)));
        self.stat("constants");
        Value::Weight(f.push_weight(WeightData {
            name,
            ty,
            mutability: Mutability::Const,
            init: Some(init),
        }))
    }

    /// A constant float weight quantized per tensor with its own range.
    fn quantize_const(
        &mut self,
        f: &mut Function,
        w: Value,
        values: &[f32],
        schema: Schema,
    ) -> (Value, Chosen) {
        let (lo, hi) = min_max(values);
        let c = choose(lo, hi, &[], schema, Calibration::None);
        let key = (
            w,
            c.scale.to_bits(),
            c.offset as u32 ^ ((c.unsigned as u32) << 31),
        );
        if let Some(&v) = self.consts.get(&key) {
            return (v, c);
        }
        let kind = c.kind();
        let range = kind.quant_range().expect("quantized");
        let data = quantize_values(values, c.scale, c.offset, range);
        let ty = with_kind(f.value_type(w).expect("a weight"), kind);
        let v = self.const_weight(f, w, "q", ty, WeightInit::Ints(data));
        self.consts.insert(key, v);
        (v, c)
    }

    /// A float bias as `i32` of scale `scale` (per channel with `scales`).
    fn quantize_bias(
        &mut self,
        f: &mut Function,
        b: Value,
        scales: &[f32],
    ) -> Result<Value, Diagnostic> {
        let ty = f.value_type(b).expect("a buffer").clone();
        let kind = ElemKind::Int32Q {
            scale: scales[0],
            offset: 0,
        };
        match const_values(f, b) {
            Some(values) => {
                let values = values?;
                let n = values.len().max(1);
                let data = values
                    .iter()
                    .enumerate()
                    .map(|(k, &x)| quantize_bias(x, scales[if scales.len() == n { k } else { 0 }]))
                    .collect();
                Ok(self.const_weight(f, b, "q", with_kind(&ty, kind), WeightInit::Ints(data)))
            }
            None => {
                // A run-time bias: quantized into `i32` of the product scale.
                let dest = self.alloc(f, &format!("{}.q", f.value_name(b)), with_kind(&ty, kind));
                let name = format!("{}.quantize", f.value_name(b));
                self.new_inst(f, &name, Opcode::Quantize, &[dest, b], None);
                self.stat("quantizes");
                Ok(dest)
            }
        }
    }

    /// An activation input of a converted instruction, as a quantized value.
    fn input(
        &mut self,
        f: &mut Function,
        v: Value,
        members: &HashMap<usize, Vec<Value>>,
    ) -> Option<Value> {
        if !is_float(f, v) {
            return Some(v);
        }
        if let Some(values) = const_values(f, v) {
            return match values {
                Ok(values) => Some(self.quantize_const(f, v, &values, self.q.schema).0),
                Err(d) => {
                    self.errors.push(d);
                    None
                }
            };
        }
        let c = self.params_of(f, v, members)?;
        Some(self.quantized_value(f, v, c))
    }

    fn convert(&mut self, f: &mut Function, i: InstId, members: &HashMap<usize, Vec<Value>>) {
        let op = f.inst(i).opcode;
        let info = op.info();
        let ops: Vec<Value> = f.inst(i).operands.iter().map(|o| o.value).collect();
        let name_of = |k: &str| info.operand_index(k);
        let mut new_ops = ops.clone();
        let has_bias = matches!(op, Opcode::Convolution | Opcode::FullyConnected);
        let weights_k = match op {
            Opcode::Convolution => name_of("Filter"),
            Opcode::FullyConnected => name_of("Weights"),
            _ => None,
        };
        let bias_k = if has_bias { name_of("Bias") } else { None };
        let mut channelwise = None;
        let mut rowwise = None;
        let kinds: Vec<OperandKind> = f.inst(i).operands.iter().map(|o| o.kind).collect();
        for (k, &v) in ops.iter().enumerate() {
            if kinds[k] != OperandKind::In || Some(k) == bias_k {
                continue;
            }
            if Some(k) == weights_k {
                if let Some(values) = const_values(f, v) {
                    let values = match values {
                        Ok(x) => x,
                        Err(d) => {
                            self.errors.push(d);
                            return;
                        }
                    };
                    let nhwc = f.inst(i).get(m::LAYOUT).unwrap_or("NHWC") == "NHWC";
                    if op == Opcode::Convolution && self.q.channelwise && nhwc {
                        channelwise = Some(self.channelwise_filter(f, v, &values));
                        new_ops[k] = channelwise.as_ref().expect("set").0;
                    } else if op == Opcode::FullyConnected && self.q.rowwise {
                        rowwise = Some(self.rowwise_weights(f, v, &values));
                        new_ops[k] = rowwise.as_ref().expect("set").0;
                    } else {
                        new_ops[k] = self
                            .quantize_const(f, v, &values, weight_schema(self.q.schema))
                            .0;
                    }
                    continue;
                }
            }
            match self.input(f, v, members) {
                Some(q) => new_ops[k] = q,
                None => return,
            }
        }
        if let Some(bk) = bias_k {
            let sx = f
                .value_type(new_ops[1])
                .and_then(|t| t.elem.quant())
                .map_or(1.0, |p| p.0);
            let scales: Vec<f32> = match (&channelwise, &rowwise) {
                (Some((_, fs, _)), _) => fs.iter().map(|&s| sx * s).collect(),
                // One bias type for every row: the largest row scale, so no
                // row's bias is finer than its accumulator.
                (_, Some((_, ws, _))) => vec![sx * ws.iter().copied().fold(0.0f32, f32::max)],
                _ => {
                    let wk = weights_k.expect("a product has weights");
                    let sw = f
                        .value_type(new_ops[wk])
                        .and_then(|t| t.elem.quant())
                        .map_or(1.0, |p| p.0);
                    vec![sx * sw]
                }
            };
            match self.quantize_bias(f, ops[bk], &scales) {
                Ok(b) => new_ops[bk] = b,
                Err(d) => {
                    self.errors.push(d);
                    return;
                }
            }
        }
        // The result.
        let dest = ops[0];
        let mut after = None;
        if is_float(f, dest) {
            let Some(c) = self.params_of(f, dest, members) else {
                return;
            };
            let ty = with_kind(f.value_type(dest).expect("a buffer"), c.kind());
            let tmp = self.alloc(f, &format!("{}.q", f.value_name(dest)), ty);
            new_ops[0] = tmp;
            after = Some(tmp);
        }
        let inst = f.inst_mut(i);
        for (o, v) in inst.operands.iter_mut().zip(&new_ops) {
            o.value = *v;
        }
        if let Some((_, fs, fo)) = channelwise {
            let old = f.inst(i).clone();
            let [fsv, fov, bsv, bov] = self.channel_params(
                f,
                ops[2],
                &fs,
                &fo,
                f.value_type(new_ops[1])
                    .and_then(|t| t.elem.quant())
                    .map_or(1.0, |p| p.0),
            );
            let vals = [
                new_ops[0], new_ops[1], new_ops[2], new_ops[3], fsv, fov, bsv, bov,
            ];
            let op = Opcode::ChannelwiseQuantizedConvolution;
            let mut data = InstData::new(old.name.clone(), op, &vals, &[]);
            for m in op.info().members {
                if let Some(v) = old.member_by_name(m.name) {
                    data.set_member(m.name, v.clone());
                }
            }
            *f.inst_mut(i) = data;
            f.spans.clear_inst(i.index());
        }
        if let Some((_, ws, wo)) = rowwise {
            let n = ws.len() as u64;
            let sv = self.const_weight(
                f,
                ops[2],
                "scales",
                Type::float(&[n]),
                WeightInit::Floats(ws.iter().map(|&x| x as f64).collect()),
            );
            let ov = self.const_weight(
                f,
                ops[2],
                "offsets",
                Type::new(ElemKind::Index32, &[n]),
                WeightInit::Ints(wo.iter().map(|&x| x as i64).collect()),
            );
            let name = f.inst(i).name.clone();
            let vals = [new_ops[0], new_ops[1], new_ops[2], new_ops[3], sv, ov];
            let op = Opcode::RowwiseQuantizedFullyConnected;
            *f.inst_mut(i) = InstData::new(name, op, &vals, &[]);
            f.spans.clear_inst(i.index());
        }
        self.order.push(i);
        self.stat("quantized");
        self.bump(f, dest);
        if let Some(tmp) = after {
            let name = format!("{}.dequantize", f.value_name(dest));
            self.new_inst(f, &name, Opcode::Dequantize, &[dest, tmp], None);
            self.stat("dequantizes");
            let (dv, tv) = (self.ver(f, dest), self.ver(f, tmp));
            self.from_dq.insert(dest, (tmp, dv, tv));
        }
    }

    /// Per output channel (the first filter dimension): `i8` values and
    /// each channel's scale and offset.
    fn channelwise_filter(
        &mut self,
        f: &mut Function,
        w: Value,
        values: &[f32],
    ) -> (Value, Vec<f32>, Vec<i32>) {
        let ty = f.value_type(w).expect("a weight").clone();
        let oc = ty.dims[0].max(1) as usize;
        let per = values.len() / oc;
        self.quantize_rows(
            f,
            w,
            &ty.dims,
            (0..oc).map(|c| values[c * per..(c + 1) * per].to_vec()),
        )
    }

    /// Each of `rows` quantized to `i8` with its own range, as a new
    /// constant of shape `dims` (its type has the first row's parameters),
    /// with every row's scale and offset.
    fn quantize_rows(
        &mut self,
        f: &mut Function,
        w: Value,
        dims: &[u64],
        rows: impl Iterator<Item = Vec<f32>>,
    ) -> (Value, Vec<f32>, Vec<i32>) {
        let mut data = Vec::new();
        let (mut scales, mut offsets) = (Vec::new(), Vec::new());
        for row in rows {
            let (lo, hi) = min_max(&row);
            let p = choose(lo, hi, &[], weight_schema(self.q.schema), Calibration::None);
            data.extend(quantize_values(&row, p.scale, p.offset, (-128, 127)));
            scales.push(p.scale);
            offsets.push(p.offset);
        }
        let kind = ElemKind::Int8Q {
            scale: scales.first().copied().unwrap_or(1.0),
            offset: offsets.first().copied().unwrap_or(0),
        };
        let v = self.const_weight(f, w, "q", Type::new(kind, dims), WeightInit::Ints(data));
        (v, scales, offsets)
    }

    /// A fullyconnected's `[K x N]` weights as row-wise `[N x K]` `i8`
    /// values, with each row's (column's) scale and offset.
    fn rowwise_weights(
        &mut self,
        f: &mut Function,
        w: Value,
        values: &[f32],
    ) -> (Value, Vec<f32>, Vec<i32>) {
        let ty = f.value_type(w).expect("a weight").clone();
        let (k, n) = (ty.dims[0] as usize, ty.dims[1] as usize);
        let rows = (0..n).map(|j| (0..k).map(|r| values[r * n + j]).collect());
        self.quantize_rows(f, w, &[n as u64, k as u64], rows)
    }

    fn channel_params(
        &mut self,
        f: &mut Function,
        w: Value,
        fs: &[f32],
        fo: &[i32],
        sx: f32,
    ) -> [Value; 4] {
        let n = fs.len() as u64;
        let fsv = self.const_weight(
            f,
            w,
            "scales",
            Type::float(&[n]),
            WeightInit::Floats(fs.iter().map(|&x| x as f64).collect()),
        );
        let fov = self.const_weight(
            f,
            w,
            "offsets",
            Type::new(ElemKind::Index32, &[n]),
            WeightInit::Ints(fo.iter().map(|&x| x as i64).collect()),
        );
        let bsv = self.const_weight(
            f,
            w,
            "bias_scales",
            Type::float(&[n]),
            WeightInit::Floats(fs.iter().map(|&x| (sx * x) as f64).collect()),
        );
        let bov = self.const_weight(
            f,
            w,
            "bias_offsets",
            Type::new(ElemKind::Index32, &[n]),
            WeightInit::Ints(vec![0; n as usize]),
        );
        [fsv, fov, bsv, bov]
    }
}

impl Pass for Quantize {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let Some(path) = self.profile.clone() else {
            return Err(vec![Diagnostic::error(
                "the quantize pass needs a profile: give --load-profile=P.yaml (or quantize{profile=P.yaml})",
            )]);
        };
        let text = std::fs::read_to_string(&path).map_err(|e| {
            vec![Diagnostic::error(format!(
                "cannot read the profile '{path}': {e}"
            ))]
        })?;
        let profile = profile::parse(&text).map_err(|e| {
            vec![Diagnostic::error(format!(
                "invalid profile: {path}:{}:{}: {}",
                e.line, e.col, e.message
            ))]
        })?;
        let hash = profile::function_hash(f);
        if profile.hash != hash {
            return Err(vec![at(
                Diagnostic::error(format!(
                    "the profile '{path}' was taken on another function (hash {:016x}; function `{}` here hashes to {hash:016x})",
                    profile.hash, f.name
                ))
                .with_note("profile the function as it reaches the quantize pass: glow-run --dump-profile with the same passes before it"),
                f.spans.function,
            )]);
        }
        self.rewrite(f, &profile, cx)
    }
}

impl Quantize {
    fn rewrite(
        &self,
        f: &mut Function,
        profile: &Profile,
        cx: &mut PassContext,
    ) -> Result<bool, Vec<Diagnostic>> {
        let nw = f.weights.len();
        let n = nw + f.insts.len();
        let mut classes = Classes {
            parent: (0..n).collect(),
        };
        let old_order = f.layout.to_vec();
        let roles: HashMap<InstId, Role> =
            old_order.iter().map(|&i| (i, self.role(f, i))).collect();
        for &i in &old_order {
            if roles[&i] == Role::Movement {
                let ops = &f.inst(i).operands;
                let a = dense_in(nw, f.origin(ops[0].value).0);
                let b = dense_in(nw, f.origin(ops[1].value).0);
                classes.union(a, b);
            }
        }
        // Which classes may be quantized.
        let mut quantized = vec![true; n];
        let mut written = vec![false; n];
        let mut members: HashMap<usize, Vec<Value>> = HashMap::new();
        let mut seen = vec![false; n];
        let mut note =
            |v: Value, classes: &mut Classes, members: &mut HashMap<usize, Vec<Value>>| {
                let d = dense_in(nw, v);
                if !seen[d] {
                    seen[d] = true;
                    members.entry(classes.find(d)).or_default().push(v);
                }
            };
        for &i in &old_order {
            let inst = f.inst(i);
            if inst.opcode == Opcode::AllocActivation {
                note(Value::Inst(i), &mut classes, &mut members);
                let r = classes.find(dense_in(nw, Value::Inst(i)));
                if !is_float(f, Value::Inst(i)) {
                    quantized[r] = false;
                }
                continue;
            }
            if inst.opcode.info().family == glow_ir::opcode::Family::Memory {
                continue;
            }
            for o in &inst.operands {
                let org = f.origin(o.value).0;
                note(org, &mut classes, &mut members);
                let r = classes.find(dense_in(nw, org));
                if matches!(org, Value::Weight(_)) || !is_float(f, org) {
                    quantized[r] = false;
                }
                if o.kind.writes() {
                    written[r] = true;
                    if roles[&i] == Role::Other {
                        quantized[r] = false;
                    }
                }
            }
        }
        for w in f.weight_ids() {
            let r = classes.find(dense_in(nw, Value::Weight(w)));
            quantized[r] = false;
        }
        for r in 0..n {
            if !written[r] {
                quantized[r] = false;
            }
        }
        // Normalize to roots.
        let quantized: Vec<bool> = (0..n).map(|d| quantized[classes.find(d)]).collect();
        let mut rw = Rewriter {
            q: self,
            nw,
            profile,
            classes,
            chosen: HashMap::new(),
            quantized,
            version: HashMap::new(),
            qcache: HashMap::new(),
            dqcache: HashMap::new(),
            from_dq: HashMap::new(),
            order: Vec::with_capacity(old_order.len() * 2),
            new_allocs: Vec::new(),
            errors: Vec::new(),
            consts: HashMap::new(),
            stats: HashMap::new(),
            debug: Vec::new(),
        };
        // Types of the quantized classes.
        let mut roots: Vec<usize> = members.keys().copied().collect();
        roots.sort();
        for r in roots {
            if !rw.quantized.get(r).copied().unwrap_or(false) {
                continue;
            }
            let first = members[&r][0];
            rw.params_of(f, first, &members);
        }
        if !rw.errors.is_empty() {
            return Err(rw.errors);
        }
        for &i in &old_order {
            let op = f.inst(i).opcode;
            if matches!(op, Opcode::AllocActivation | Opcode::TensorView) {
                let v = Value::Inst(i);
                let r = rw.root(f, v);
                if rw.quantized.get(r).copied().unwrap_or(false) {
                    if let Some(Some(c)) = rw.chosen.get(&r).copied() {
                        let ty = with_kind(f.value_type(v).expect("typed"), c.kind());
                        f.inst_mut(i).set(m::TY, ty);
                    }
                }
            }
        }
        // The rewrite, in program order.
        let mut deallocs: HashMap<Value, InstId> = HashMap::new();
        for &i in &old_order {
            let op = f.inst(i).opcode;
            let role = roles[&i];
            if op == Opcode::DeallocActivation {
                deallocs.insert(f.inst(i).operands[0].value, i);
                continue;
            }
            if op.info().family == glow_ir::opcode::Family::Memory {
                rw.order.push(i);
                continue;
            }
            let dest = f.inst(i).operands[0].value;
            let dest_q = !is_float(f, dest);
            match role {
                Role::Arith if dest_q || HEAVY.contains(&op) => {
                    rw.convert(f, i, &members);
                    continue;
                }
                Role::Copy => {
                    let src = f.inst(i).operands[1].value;
                    let (dk, sk) = (
                        f.value_type(dest).map(|t| t.elem),
                        f.value_type(src).map(|t| t.elem),
                    );
                    let new_op = match (dk == Some(ElemKind::Float), sk == Some(ElemKind::Float)) {
                        (true, true) => None,
                        (true, false) => Some(Opcode::Dequantize),
                        (false, true) => Some(Opcode::Quantize),
                        (false, false) if dk == sk => None,
                        (false, false) => Some(Opcode::RescaleQuantized),
                    };
                    if let Some(new_op) = new_op {
                        let old = f.inst(i).clone();
                        let mut data = InstData::new(old.name, new_op, &[dest, src], &[]);
                        data.operands[0].kind = OperandKind::Out;
                        *f.inst_mut(i) = data;
                        f.spans.clear_inst(i.index());
                        rw.stat(match new_op {
                            Opcode::Dequantize => "dequantizes",
                            Opcode::Quantize => "quantizes",
                            _ => "rescales",
                        });
                    }
                    rw.order.push(i);
                    let (dv, sv) = (rw.ver(f, dest) + 1, rw.ver(f, src));
                    rw.bump(f, dest);
                    if new_op == Some(Opcode::Dequantize) {
                        rw.from_dq.insert(dest, (src, dv, sv));
                    }
                    continue;
                }
                _ => {}
            }
            // Anything else reads float copies of its quantized inputs
            // (movement within a quantized class reads them as they are).
            if role != Role::Movement {
                let n_ops = f.inst(i).operands.len();
                for k in 0..n_ops {
                    let o = f.inst(i).operands[k];
                    let ty = f.value_type(o.value).map(|t| t.elem);
                    if o.kind.reads() && ty.is_some_and(|e| e.is_quantized()) {
                        let was_float = rw.classes_float_originally(f, o.value);
                        if was_float {
                            let fv = rw.float_value(f, o.value);
                            f.inst_mut(i).operands[k].value = fv;
                        }
                    }
                }
            }
            rw.order.push(i);
            let writes: Vec<Value> = f
                .inst(i)
                .operands
                .iter()
                .filter(|o| o.kind.writes())
                .map(|o| o.value)
                .collect();
            for v in writes {
                rw.bump(f, v);
            }
            // The input's own per-tensor dequantize folds as the pass's do:
            // a reader quantized again reads its source (or a rescale).
            if op == Opcode::Dequantize && f.inst(i).operands.len() == 2 && !dest_q {
                let src = f.inst(i).operands[1].value;
                let (dv, sv) = (rw.ver(f, dest), rw.ver(f, src));
                rw.from_dq.insert(dest, (src, dv, sv));
            }
        }
        if !rw.errors.is_empty() {
            return Err(rw.errors);
        }
        // Deallocs after the last use of each activation.
        let order = std::mem::take(&mut rw.order);
        let mut last: HashMap<Value, usize> = HashMap::new();
        for (p, &i) in order.iter().enumerate() {
            let inst = f.inst(i);
            if inst.opcode == Opcode::AllocActivation {
                last.entry(Value::Inst(i)).or_insert(p);
            }
            for o in &inst.operands {
                let org = f.origin(o.value).0;
                if matches!(org, Value::Inst(_)) {
                    last.insert(org, p);
                }
            }
        }
        let mut after: Vec<Vec<Value>> = vec![Vec::new(); order.len()];
        for (&v, &p) in &last {
            after[p].push(v);
        }
        let mut final_order = Vec::with_capacity(order.len() + last.len());
        for (p, &i) in order.iter().enumerate() {
            final_order.push(i);
            let mut here = std::mem::take(&mut after[p]);
            here.sort_by_key(|v| dense_in(nw, *v));
            for v in here {
                let d = match deallocs.get(&v) {
                    Some(&d) => d,
                    None => {
                        let name = f.fresh_name(&format!("{}.dealloc", f.value_name(v)));
                        f.push_inst(InstData::new(name, Opcode::DeallocActivation, &[v], &[]))
                    }
                };
                final_order.push(d);
            }
        }
        f.layout.set_order(final_order);
        // Sizes changed: a plan made before no longer holds (run plan-memory again).
        f.drop_plan();
        for line in std::mem::take(&mut rw.debug) {
            cx.debug(|| line);
        }
        let mut changed = false;
        for (k, _) in INFO.stats {
            let v = rw.stats.get(k).copied().unwrap_or(0);
            changed |= v > 0;
            cx.bump(k, v);
        }
        Ok(changed)
    }
}

impl Rewriter<'_> {
    /// Whether `v`'s buffer was float before the rewrite (a quantized
    /// class's buffers were; buffers quantized in the input were not).
    fn classes_float_originally(&mut self, f: &Function, v: Value) -> bool {
        let r = self.root(f, v);
        self.quantized.get(r).copied().unwrap_or(false)
    }
}
