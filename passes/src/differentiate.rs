//! `differentiate`: turns an inference function into one training step
//! (docs/passes/differentiate.md). After the forward instructions it appends
//! the loss (softmax cross-entropy of the output against integer labels,
//! the mean over the batch), the backward instructions in reverse order, and
//! an `sgd` update of every trained weight in place. The step is ordinary
//! IR: every later pass, the planner and both engines treat it as any other
//! function, so liveness across forward and backward is exact.
//!
//! The trained weights are the `float` const weights the output depends on;
//! they become mutable, and each gets two mutable weights: `W.grad` (its
//! gradient of the mean loss) and `W.velocity` (the momentum buffer, which
//! the caller zeroes before the first step). `maxpool`s whose input needs a
//! gradient become `maxpoolwithargmax`, which computes the same `Dest`.
//! A `batchnormalization` runs in training mode: it reads the batch's own
//! mean and variance, computed just before it, and the running `Mean` and
//! `Var` weights are updated with its `Momentum`.

use crate::edit::Origins;
use crate::pass::{Pass, PassContext, PassInfo, PassOption, PassOptions};
use crate::placement::place_deallocs;
use glow_ir::builder::Builder;
use glow_ir::fxhash::FxHashMap as HashMap;
use glow_ir::member as m;
use glow_ir::{
    Diagnostic, ElemKind, Function, InstData, InstId, Mutability, Opcode, OperandKind, Type, Value,
    WeightId,
};

/// The buffer under any views of `v`.
fn root(f: &Function, mut v: Value) -> Value {
    while let Value::Inst(i) = v {
        if f.inst(i).opcode != Opcode::TensorView {
            break;
        }
        v = f.inst(i).operands[0].value;
    }
    v
}
use std::collections::HashSet;

pub static INFO: PassInfo = PassInfo {
    name: "differentiate",
    summary: "Turn an inference function into a training step: forward, softmax cross-entropy loss, backward, SGD update",
    options: &[
        PassOption {
            name: "output",
            help: "The mutable weight holding the logits (default: the one written output)",
        },
        PassOption {
            name: "labels",
            help: "Name of the new index64 weight of labels, one per row (default labels)",
        },
        PassOption {
            name: "loss",
            help: "Name of the new float<1> weight of the mean loss (default loss)",
        },
        PassOption {
            name: "lr",
            help: "Learning rate of the sgd updates (default 0.01)",
        },
        PassOption {
            name: "momentum",
            help: "Momentum of the sgd updates (default 0)",
        },
        PassOption {
            name: "weight-decay",
            help: "L2 decay of the sgd updates (default 0)",
        },
    ],
    stats: &[
        ("trained-weights", "Number of weights given a gradient and an update"),
        ("backward-instructions", "Number of instructions the backward pass added"),
    ],
    counters: &[],
    create: |o: &PassOptions| {
        let float = |key: &str, default: f64| -> Result<f64, String> {
            match o.get(key) {
                None => Ok(default),
                Some(v) => v
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| format!("option `{key}` expects a finite number, found `{v}`")),
            }
        };
        let name = |key: &str, default: &str| -> Result<String, String> {
            let v = o.get(key).unwrap_or(default);
            if v.is_empty() {
                return Err(format!("option `{key}` expects a name"));
            }
            Ok(v.to_string())
        };
        Ok(Box::new(Differentiate {
            output: o.get("output").map(str::to_string),
            labels: name("labels", "labels")?,
            loss: name("loss", "loss")?,
            lr: float("lr", 0.01)?,
            momentum: float("momentum", 0.0)?,
            weight_decay: float("weight-decay", 0.0)?,
        }))
    },
};

struct Differentiate {
    output: Option<String>,
    labels: String,
    loss: String,
    lr: f64,
    momentum: f64,
    weight_decay: f64,
}

fn error(f: &Function, msg: String) -> Vec<Diagnostic> {
    let d = Diagnostic::error(format!("differentiate: function `{}`: {msg}", f.name));
    vec![match f.spans.function {
        Some(s) => d.at(s),
        None => d,
    }]
}

fn inst_error(f: &Function, i: InstId, msg: String) -> Vec<Diagnostic> {
    let d = Diagnostic::error(format!("differentiate: {msg}"));
    vec![match f.spans.inst(i.index()).map(|s| s.line) {
        Some(s) => d.at(s),
        None => d,
    }]
}

impl Pass for Differentiate {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let output = self.find_output(f)?;
        if f.lookup(&self.loss).is_some() {
            let name = &self.loss;
            return Err(error(
                f,
                format!("the name `{name}` is taken; pick another with `loss=NAME`"),
            ));
        }
        let out_ty = f.weight(output).ty.clone();
        if out_ty.elem != ElemKind::Float || out_ty.rank() != 2 {
            return Err(error(
                f,
                format!(
                    "the output `{}` has type {out_ty}, but the loss needs float logits of rank 2 ([batch, classes])",
                    f.weight(output).name
                ),
            ));
        }
        let forward: Vec<InstId> = f.layout.iter().collect();
        let origins = Origins::compute(f);
        let params = trainable(f, &forward, &origins);
        if params.is_empty() {
            return Err(error(
                f,
                "the output depends on no float const weight: nothing to train".into(),
            ));
        }
        let needs = needs_grad(f, &forward, &origins, &params);
        written_once(f, &forward, &origins, &needs)?;
        // Deallocs go; they come back after the last use, backward included.
        let mut deallocs = Vec::new();
        for &i in &forward {
            if f.inst(i).opcode == Opcode::DeallocActivation {
                deallocs.push(f.inst(i).operands[0].value);
                f.erase(i);
            }
        }
        let mut d = Diff {
            grads: HashMap::default(),
            argmax: HashMap::default(),
            scratch: Vec::new(),
            added: 0,
        };
        // maxpool -> maxpoolwithargmax where the input needs a gradient.
        for &i in &forward {
            let inst = f.inst(i);
            if inst.opcode == Opcode::MaxPool
                && needs.contains(&origins.origin(inst.operands[1].value))
            {
                let dest_ty = f.value_type(inst.operands[0].value).cloned();
                let Some(dest_ty) = dest_ty else { continue };
                let old = inst.clone();
                let base = format!("{}.argmax", old.name);
                // index32 halves the indices' memory where every index fits.
                let src_elems = f
                    .value_type(old.operands[1].value)
                    .map_or(u64::MAX, |t| t.size());
                let kind = if src_elems <= i32::MAX as u64 {
                    ElemKind::Index32
                } else {
                    ElemKind::Index64
                };
                let argmax = Builder::before(f, i).alloc(&base, Type::new(kind, &dest_ty.dims));
                let members = window_members(&old, false);
                let ops = [old.operands[0].value, old.operands[1].value, argmax];
                *f.inst_mut(i) = InstData::new(old.name, Opcode::MaxPoolWithArgmax, &ops, &members);
                f.spans.clear_inst(i.index());
                d.argmax.insert(i, argmax);
                d.scratch.push(argmax);
            }
        }
        // Batch normalizations normalize by the batch's own statistics.
        for &i in &forward {
            let inst = f.inst(i);
            if inst.opcode == Opcode::BatchNormalization
                && needs.contains(&origins.origin(inst.operands[0].value))
            {
                d.train_batchnorm(f, i);
            }
        }
        let n = out_ty.dims[0];
        // A declared labels weight is used as it is (a test can give it `Data`).
        let labels = match f.lookup(&self.labels) {
            Some(Value::Weight(w))
                if f.weight(w).mutability == Mutability::Mutable
                    && matches!(f.weight(w).ty.elem, ElemKind::Index32 | ElemKind::Index64)
                    && f.weight(w).ty.dims == [n] =>
            {
                Value::Weight(w)
            }
            Some(_) => {
                let name = &self.labels;
                return Err(error(
                    f,
                    format!("`{name}` exists but is not a mutable index32/index64 weight of dims [{n}]; pick another name with `labels=NAME`"),
                ));
            }
            None => {
                let ty = Type::new(ElemKind::Index64, &[n]);
                Builder::new(f).weight(&self.labels, ty, Mutability::Mutable)
            }
        };
        let mut b = Builder::new(f);
        let loss = b.weight(&self.loss, Type::float(&[1]), Mutability::Mutable);
        let logits = Value::Weight(output);
        let p = b.alloc("softmax.p", out_ty.clone());
        b.inst("softmax", Opcode::SoftMax, &[p, logits], &[]);
        b.inst("ce", Opcode::CrossEntropyLoss, &[p, labels, loss], &[]);
        let sum = b.alloc("logits.grad.sum", out_ty.clone());
        b.inst(
            "softmax.grad",
            Opcode::SoftMaxGrad,
            &[p, logits, labels, sum],
            &[],
        );
        let count = b.alloc("batch.size", out_ty.clone());
        b.splat("batch.size.splat", count, n as f64);
        let dlogits = b.alloc("logits.grad", out_ty.clone());
        b.inst(
            "logits.grad.mean",
            Opcode::ElementDiv,
            &[dlogits, sum, count],
            &[],
        );
        d.scratch.extend([p, sum, count, dlogits]);
        d.grads.insert(
            logits,
            Grad {
                buf: dlogits,
                written: true,
            },
        );
        d.added += 5;
        // Backward, in reverse program order.
        for &i in forward.iter().rev() {
            if !f.layout.contains(i) {
                continue;
            }
            d.backward(f, &origins, &needs, i)?;
        }
        // The updates.
        let mut trained = 0;
        for &w in &params {
            let Some(g) = d.grads.get(&Value::Weight(w)).copied() else {
                continue;
            };
            let name = f.weight(w).name.clone();
            let ty = f.weight(w).ty.clone();
            f.weights[w.index()].mutability = Mutability::Mutable;
            let mut b = Builder::new(f);
            let vel = b.weight(&format!("{name}.velocity"), ty, Mutability::Mutable);
            b.inst(
                &format!("{name}.sgd"),
                Opcode::Sgd,
                &[Value::Weight(w), g.buf, vel],
                &[
                    m::LEARNING_RATE.to(self.lr),
                    m::MOMENTUM.to(self.momentum),
                    m::L2_DECAY.to(self.weight_decay),
                ],
            );
            trained += 1;
        }
        // Every activation is freed after its last use.
        let mut b = Builder::new(f);
        for v in deallocs.into_iter().chain(d.scratch) {
            let base = format!("{}.dealloc", b.func().value_name(v));
            b.dealloc(&base, v);
        }
        place_deallocs(f);
        cx.bump("trained-weights", trained);
        cx.bump("backward-instructions", d.added);
        Ok(true)
    }
}

impl Differentiate {
    /// The mutable weight the loss reads: named by `output`, or the only
    /// float mutable weight some instruction writes.
    fn find_output(&self, f: &Function) -> Result<WeightId, Vec<Diagnostic>> {
        if let Some(name) = &self.output {
            return match f.lookup(name) {
                Some(Value::Weight(w)) if f.weight(w).mutability == Mutability::Mutable => Ok(w),
                _ => Err(error(
                    f,
                    format!("option `output`: `{name}` is not a mutable weight"),
                )),
            };
        }
        let mut written: Vec<WeightId> = Vec::new();
        for i in &f.layout {
            for op in &f.inst(i).operands {
                if let Value::Weight(w) = op.value {
                    if op.kind.writes()
                        && f.weight(w).mutability == Mutability::Mutable
                        && !written.contains(&w)
                    {
                        written.push(w);
                    }
                }
            }
        }
        match written.as_slice() {
            [w] => Ok(*w),
            [] => Err(error(
                f,
                "no instruction writes a mutable weight: there is no output to train".into(),
            )),
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|&w| format!("`{}`", f.weight(w).name))
                    .collect();
                Err(error(
                    f,
                    format!(
                        "{} outputs ({}): name the logits with `output=NAME`",
                        many.len(),
                        names.join(", ")
                    ),
                ))
            }
        }
    }
}

/// Float const weights read by the forward instructions.
fn trainable(f: &Function, forward: &[InstId], origins: &Origins) -> Vec<WeightId> {
    let mut out = Vec::new();
    for &i in forward {
        for op in &f.inst(i).operands {
            if let Value::Weight(w) = origins.origin(op.value) {
                let wd = f.weight(w);
                if op.kind == glow_ir::OperandKind::In
                    && wd.mutability == Mutability::Const
                    && wd.ty.elem == ElemKind::Float
                    && !out.contains(&w)
                {
                    out.push(w);
                }
            }
        }
    }
    out
}

/// Each buffer on the way to the logits is written by one instruction and
/// never read and written by the same one: the backward pass reads forward
/// values after the fact, so an overwritten value would be gone.
fn written_once(
    f: &Function,
    forward: &[InstId],
    origins: &Origins,
    needs: &HashSet<Value>,
) -> Result<(), Vec<Diagnostic>> {
    let mut writer: HashMap<Value, InstId> = HashMap::default();
    for &i in forward {
        let inst = f.inst(i);
        if matches!(
            inst.opcode,
            Opcode::TensorView | Opcode::AllocActivation | Opcode::DeallocActivation
        ) {
            continue;
        }
        for o in inst.operands.iter().filter(|o| o.kind.writes()) {
            let origin = origins.origin(o.value);
            if !needs.contains(&origin) {
                continue;
            }
            let name = f.value_name(origin);
            if o.kind == glow_ir::OperandKind::InOut {
                return Err(inst_error(
                    f,
                    i,
                    format!("`%{}` updates `%{name}` in place; differentiate needs each value written once (run it before -O)", inst.name),
                ));
            }
            if let Some(&first) = writer.get(&origin) {
                return Err(inst_error(
                    f,
                    i,
                    format!(
                        "`%{}` writes `%{name}` again after `%{}`; differentiate needs each value written once (run it before -O)",
                        inst.name,
                        f.inst(first).name
                    ),
                ));
            }
            writer.insert(origin, i);
        }
    }
    Ok(())
}

/// Which buffers (origins) depend on a trained weight, by a forward sweep.
fn needs_grad(
    f: &Function,
    forward: &[InstId],
    origins: &Origins,
    params: &[WeightId],
) -> HashSet<Value> {
    let mut set: HashSet<Value> = params.iter().map(|&w| Value::Weight(w)).collect();
    for &i in forward {
        let inst = f.inst(i);
        if matches!(
            inst.opcode,
            Opcode::TensorView | Opcode::AllocActivation | Opcode::DeallocActivation
        ) {
            continue;
        }
        let reads = inst
            .operands
            .iter()
            .any(|o| o.kind.reads() && set.contains(&origins.origin(o.value)));
        if reads {
            for o in &inst.operands {
                if o.kind.writes() {
                    set.insert(origins.origin(o.value));
                }
            }
        }
    }
    set
}

#[derive(Clone, Copy)]
struct Grad {
    buf: Value,
    /// Whether some contribution has written the whole buffer already.
    written: bool,
}

struct Diff {
    /// Gradient buffer per origin.
    grads: HashMap<Value, Grad>,
    /// The argmax buffer of each converted maxpool.
    argmax: HashMap<InstId, Value>,
    /// Activations the step allocated (freed at the end).
    scratch: Vec<Value>,
    added: u64,
}

/// Where a contribution to a value's gradient goes: written straight into
/// the gradient, or into a temporary that is then added to it.
struct Target {
    dest: Value,
    add_into: Option<Value>,
}

impl Diff {
    /// The gradient of `v` as a value: the origin's gradient buffer, viewed
    /// as `v` is viewed (None when it has none).
    fn grad_of(&self, f: &mut Function, v: Value) -> Option<Value> {
        match v {
            Value::Inst(i) if f.inst(i).opcode == Opcode::TensorView => {
                let src = f.inst(i).operands[0].value;
                let g = self.grad_of(f, src)?;
                let ty = f.inst(i).get(m::TY)?.clone();
                let offs = f.inst(i).get(m::OFFSETS)?.to_vec();
                let base = format!("{}.grad", f.inst(i).name);
                Some(Builder::new(f).tensorview(&base, g, ty, offs))
            }
            _ => self.grads.get(&v).map(|g| g.buf),
        }
    }

    /// Makes `dest`'s gradient buffer the gradient of `v` too (a pass-through
    /// such as `copy` or an add's operand), instead of copying it: only once
    /// per instruction, only between whole activation buffers of one type
    /// (or views of all of one)
    /// that have no gradient yet. `dest`'s gradient is complete here (its
    /// readers come later in program order, so earlier in the backward
    /// pass), and nothing reads it after this instruction's backward.
    fn alias(
        &mut self,
        f: &Function,
        origins: &Origins,
        dest: Value,
        v: Value,
        done: &mut bool,
    ) -> bool {
        // A view of a whole buffer (an add's rows) stands for the buffer.
        let whole = |x: Value| {
            let (o, off) = origins.of(x);
            (off == 0 && f.value_type(x) == f.value_type(o)).then_some(o)
        };
        let (Some(v), Some(dest)) = (whole(v), whole(dest)) else {
            return false;
        };
        if *done || self.grads.contains_key(&v) {
            return false;
        }
        let (Value::Inst(_), Some(g)) = (v, self.grads.get(&dest).copied()) else {
            return false;
        };
        if f.value_type(v) != f.value_type(dest) || !matches!(g.buf, Value::Inst(_)) {
            return false;
        }
        self.grads.insert(
            v,
            Grad {
                buf: g.buf,
                written: true,
            },
        );
        *done = true;
        true
    }

    /// Makes room for a contribution to the gradient of `v`.
    fn target(&mut self, f: &mut Function, origins: &Origins, v: Value) -> Target {
        let (origin, _) = origins.of(v);
        let ty = f
            .value_type(v)
            .cloned()
            .unwrap_or_else(|| Type::float(&[1]));
        let oty = f
            .value_type(origin)
            .cloned()
            .unwrap_or_else(|| Type::float(&[1]));
        let whole = ty.bytes() == oty.bytes();
        if !self.grads.contains_key(&origin) {
            let name = format!("{}.grad", f.value_name(origin));
            let buf = match origin {
                Value::Weight(_) => Builder::new(f).weight(&name, oty.clone(), Mutability::Mutable),
                Value::Inst(_) => {
                    let b = Builder::new(f).alloc(&name, oty.clone());
                    self.scratch.push(b);
                    b
                }
            };
            if !whole {
                Builder::new(f).splat(&format!("{name}.zero"), buf, 0.0);
                self.added += 1;
            }
            self.grads.insert(
                origin,
                Grad {
                    buf,
                    written: !whole,
                },
            );
            if whole {
                let dest = self.grad_of(f, v).unwrap_or(buf);
                self.grads.get_mut(&origin).expect("just inserted").written = true;
                return Target {
                    dest,
                    add_into: None,
                };
            }
        }
        let into = self.grad_of(f, v).expect("the gradient exists");
        let base = format!("{}.grad.part", f.value_name(v));
        let tmp = Builder::new(f).alloc(&base, ty);
        self.scratch.push(tmp);
        Target {
            dest: tmp,
            add_into: Some(into),
        }
    }

    /// Adds a finished contribution into its gradient.
    fn finish(&mut self, f: &mut Function, t: Target) {
        if let Some(into) = t.add_into {
            let base = format!("{}.acc", f.value_name(into));
            Builder::new(f).inst(&base, Opcode::ElementAdd, &[into, into, t.dest], &[]);
            self.added += 1;
        }
    }

    /// The gradient of `v` when an earlier contribution made it (viewed as
    /// `v` is viewed).
    fn existing_grad(&mut self, f: &mut Function, origins: &Origins, v: Value) -> Option<Value> {
        let (origin, _) = origins.of(v);
        if self.grads.contains_key(&origin) {
            self.grad_of(f, v)
        } else {
            None
        }
    }

    /// A gradient-only buffer no one reads (a `SrcGrad` of an input).
    fn unused(&mut self, f: &mut Function, name: &str, v: Value) -> Value {
        let ty = f
            .value_type(v)
            .cloned()
            .unwrap_or_else(|| Type::float(&[1]));
        let b = Builder::new(f).alloc(name, ty);
        self.scratch.push(b);
        b
    }

    /// Training mode for the `batchnormalization` `i`: before it, the batch
    /// mean and (biased) variance per channel from existing instructions
    /// (`Src` transposed to put the channel last unless it is, viewed as
    /// `[S, C]`, `batchedreduceadd` over the rows, divided by `S`; the
    /// variance from the centered copy), the running `Mean`/`Var` weights
    /// updated in place with `new = Momentum * old + (1 - Momentum) * batch`,
    /// and the instruction reading the batch statistics instead.
    fn train_batchnorm(&mut self, f: &mut Function, i: InstId) {
        let inst = f.inst(i).clone();
        let ops: Vec<Value> = inst.operands.iter().map(|o| o.value).collect();
        let Some(ty) = f.value_type(ops[1]).cloned() else {
            return;
        };
        let rank = ty.rank();
        let ch = inst.get(m::CHANNEL_IDX).unwrap_or(3).max(0) as usize;
        if ch >= rank {
            return;
        }
        let chans = ty.dims[ch];
        let rows = ty.size() / chans.max(1);
        let momentum = inst.get(m::MOMENTUM).unwrap_or(0.9);
        let name = inst.name.clone();
        let cty = Type::float(&[chans]);
        let mut b = Builder::before(f, i);
        let mut bufs = Vec::new();
        // A new buffer `name.tag` written by one `op` (operand 0), the
        // instruction named as the buffer.
        let mut put = |b: &mut Builder, tag: &str, t: Type, op, ins: &[Value], ms: &[m::Member]| {
            let tag = format!("{name}.{tag}");
            let v = b.alloc(&tag, t);
            let operands: Vec<Value> = std::iter::once(v).chain(ins.iter().copied()).collect();
            b.inst(&tag, op, &operands, ms);
            bufs.push(v);
            v
        };
        let last = if ch + 1 == rank {
            ops[1]
        } else {
            let mut perm: Vec<i64> = (0..rank as i64).collect();
            perm.swap(ch, rank - 1);
            let mut dims = ty.dims.clone();
            dims.swap(ch, rank - 1);
            let shuffle = [m::SHUFFLE.to(perm)];
            let t = Type::float(&dims);
            self.added += 1;
            put(
                &mut b,
                "channel.last",
                t,
                Opcode::Transpose,
                &[ops[1]],
                &shuffle,
            )
        };
        let flat = Type::float(&[rows, chans]);
        let view = b.tensorview(&format!("{name}.rows"), last, flat.clone(), vec![0; rank]);
        let axis0 = [m::AXIS.to(0)];
        let c = || cty.clone();
        let sum = put(
            &mut b,
            "sum",
            c(),
            Opcode::BatchedReduceAdd,
            &[view],
            &axis0,
        );
        let count = b.alloc(&format!("{name}.count"), c());
        b.splat(&format!("{name}.count"), count, rows as f64);
        let mean = put(
            &mut b,
            "batch.mean",
            c(),
            Opcode::ElementDiv,
            &[sum, count],
            &[],
        );
        let neg = put(&mut b, "neg.mean", c(), Opcode::ElementNeg, &[mean], &[]);
        let centered = put(
            &mut b,
            "centered",
            flat,
            Opcode::BatchedAdd,
            &[view, neg],
            &[],
        );
        let sq = [centered, centered, centered];
        b.inst(&format!("{name}.square"), Opcode::ElementMul, &sq, &[]);
        let sqsum = put(
            &mut b,
            "sqsum",
            c(),
            Opcode::BatchedReduceAdd,
            &[centered],
            &axis0,
        );
        let var = put(
            &mut b,
            "batch.var",
            c(),
            Opcode::ElementDiv,
            &[sqsum, count],
            &[],
        );
        self.added += 8;
        // The running statistics, where they are weights.
        let (keep, take) = (
            b.alloc(&format!("{name}.momentum"), c()),
            b.alloc(&format!("{name}.one.minus.momentum"), c()),
        );
        b.splat(&format!("{name}.momentum"), keep, momentum);
        b.splat(&format!("{name}.one.minus.momentum"), take, 1.0 - momentum);
        let mut running = Vec::new();
        for (k, batch, tag) in [(4, mean, "mean"), (5, var, "var")] {
            let Value::Weight(w) = ops[k] else { continue };
            let kept = format!("{tag}.kept");
            let old = put(&mut b, &kept, c(), Opcode::ElementMul, &[keep, ops[k]], &[]);
            let taken = format!("{tag}.taken");
            let new = put(&mut b, &taken, c(), Opcode::ElementMul, &[take, batch], &[]);
            let update = format!("{name}.{tag}.update");
            b.inst(&update, Opcode::ElementAdd, &[ops[k], old, new], &[]);
            running.push(w);
            self.added += 3;
        }
        self.added += 2;
        bufs.extend([count, keep, take]);
        for w in running {
            f.weights[w.index()].mutability = Mutability::Mutable;
        }
        let inst = f.inst_mut(i);
        inst.operands[4].value = mean;
        inst.operands[5].value = var;
        self.scratch.extend(bufs);
    }

    /// Transposes a 2-D value into a new buffer.
    fn transposed(&mut self, f: &mut Function, v: Value) -> Value {
        let ty = f
            .value_type(v)
            .cloned()
            .unwrap_or_else(|| Type::float(&[1, 1]));
        let t = Type::new(ty.elem, &[ty.dims[1], ty.dims[0]]);
        let base = format!("{}.t", f.value_name(v));
        let mut b = Builder::new(f);
        let buf = b.alloc(&base, t);
        b.inst(
            &base,
            Opcode::Transpose,
            &[buf, v],
            &[m::SHUFFLE.to([1, 0])],
        );
        self.scratch.push(buf);
        self.added += 1;
        buf
    }

    fn backward(
        &mut self,
        f: &mut Function,
        origins: &Origins,
        needs: &HashSet<Value>,
        i: InstId,
    ) -> Result<(), Vec<Diagnostic>> {
        let inst = f.inst(i).clone();
        let op = inst.opcode;
        if matches!(
            op,
            Opcode::TensorView | Opcode::AllocActivation | Opcode::DeallocActivation
        ) {
            return Ok(());
        }
        let ops: Vec<Value> = inst.operands.iter().map(|o| o.value).collect();
        let dest = match inst.operands.iter().find(|o| o.kind.writes()) {
            Some(o) => o.value,
            None => return Ok(()),
        };
        let Some(dd) = self.grad_of(f, dest) else {
            return Ok(());
        };
        let needed: Vec<bool> = ops
            .iter()
            .map(|&v| needs.contains(&origins.origin(v)))
            .collect();
        let need = |k: usize| needed[k];
        // One pass-through operand may take dDest's buffer as its gradient.
        let mut aliased = false;
        let name = inst.name.clone();
        let emit = |d: &mut Diff,
                    f: &mut Function,
                    k: usize,
                    op: Opcode,
                    operands: &dyn Fn(Value) -> Vec<Value>,
                    members: &[m::Member]| {
            let t = d.target(f, origins, ops[k]);
            Builder::new(f).inst(&format!("{name}.grad"), op, &operands(t.dest), members);
            d.added += 1;
            d.finish(f, t);
        };
        match op {
            Opcode::Copy => {
                if need(1) && !self.alias(f, origins, dest, ops[1], &mut aliased) {
                    emit(self, f, 1, Opcode::Copy, &|t| vec![t, dd], &[]);
                }
            }
            Opcode::Relu | Opcode::Sigmoid | Opcode::Tanh => {
                if need(1) {
                    let g = match op {
                        Opcode::Relu => Opcode::ReluGrad,
                        Opcode::Sigmoid => Opcode::SigmoidGrad,
                        _ => Opcode::TanhGrad,
                    };
                    emit(self, f, 1, g, &|t| vec![dest, dd, t], &[]);
                }
            }
            Opcode::Clip => {
                // Through where min < Dest < max (so where min < Src < max, as
                // torch's hardtanh backward), zero elsewhere.
                if need(1) {
                    let ty = f
                        .value_type(dest)
                        .cloned()
                        .unwrap_or_else(|| Type::float(&[1]));
                    let bty = Type::new(ElemKind::Bool, &ty.dims);
                    let (lo, hi) = (
                        inst.get(m::MIN).unwrap_or(0.0),
                        inst.get(m::MAX).unwrap_or(0.0),
                    );
                    let mut bufs = Vec::new();
                    let mut b = Builder::new(f);
                    let splat = |b: &mut Builder, tag: &str, v: f64| {
                        let x = b.alloc(&format!("{name}.{tag}"), ty.clone());
                        b.splat(&format!("{name}.{tag}"), x, v);
                        x
                    };
                    let (vlo, vhi, zero) = (
                        splat(&mut b, "min", lo),
                        splat(&mut b, "max", hi),
                        splat(&mut b, "zero", 0.0),
                    );
                    let above = b.alloc(&format!("{name}.above"), bty.clone());
                    b.inst(
                        &format!("{name}.above"),
                        Opcode::ElementCmpLT,
                        &[above, vlo, dest],
                        &[],
                    );
                    let below = b.alloc(&format!("{name}.below"), bty.clone());
                    b.inst(
                        &format!("{name}.below"),
                        Opcode::ElementCmpLT,
                        &[below, dest, vhi],
                        &[],
                    );
                    let inside = b.alloc(&format!("{name}.inside"), bty);
                    b.inst(
                        &format!("{name}.inside"),
                        Opcode::ElementAnd,
                        &[inside, above, below],
                        &[],
                    );
                    bufs.extend([vlo, vhi, zero, above, below, inside]);
                    self.scratch.extend(bufs);
                    self.added += 6;
                    emit(
                        self,
                        f,
                        1,
                        Opcode::ElementSelect,
                        &|t| vec![t, inside, dd, zero],
                        &[],
                    );
                }
            }
            Opcode::MaxPoolWithArgmax => {
                if need(1) {
                    let members = window_members(&inst, false);
                    let a = ops[2];
                    emit(
                        self,
                        f,
                        1,
                        Opcode::MaxPoolWithArgmaxGrad,
                        &|t| vec![dest, ops[1], a, dd, t],
                        &members,
                    );
                }
            }
            Opcode::LocalResponseNormalization => {
                if need(1) {
                    let mut members = Vec::new();
                    if let Some(h) = inst.get(m::HALF_WINDOW_SIZE) {
                        members.push(m::HALF_WINDOW_SIZE.to(h));
                    }
                    for k in [m::ALPHA, m::BETA, m::K] {
                        if let Some(v) = inst.get(k) {
                            members.push(k.to(v));
                        }
                    }
                    let scale = ops[2];
                    emit(
                        self,
                        f,
                        1,
                        Opcode::LocalResponseNormalizationGrad,
                        &|t| vec![dest, ops[1], scale, dd, t],
                        &members,
                    );
                }
            }
            Opcode::BatchNormalization => {
                // ops: Dest, Src, Scale, Bias, and the batch's Mean and Var
                // (train_batchnorm put them there).
                let mut members = Vec::new();
                if let Some(c) = inst.get(m::CHANNEL_IDX) {
                    members.push(m::CHANNEL_IDX.to(c));
                }
                if let Some(e) = inst.get(m::EPSILON) {
                    members.push(m::EPSILON.to(e));
                }
                let mut targets = Vec::new();
                let mut grads = Vec::new();
                for (k, tag) in [(1, "srcgrad"), (2, "scalegrad"), (3, "biasgrad")] {
                    if need(k) {
                        let t = self.target(f, origins, ops[k]);
                        grads.push(t.dest);
                        targets.push(t);
                    } else {
                        grads.push(self.unused(f, &format!("{name}.{tag}"), ops[k]));
                    }
                }
                Builder::new(f).inst(
                    &format!("{name}.grad"),
                    Opcode::BatchNormalizationGrad,
                    &[
                        ops[1], ops[2], ops[4], ops[5], dd, grads[0], grads[1], grads[2],
                    ],
                    &members,
                );
                self.added += 1;
                for t in targets {
                    self.finish(f, t);
                }
            }
            Opcode::AvgPool => {
                if need(1) {
                    let members = window_members(&inst, true);
                    emit(
                        self,
                        f,
                        1,
                        Opcode::AvgPoolGrad,
                        &|t| vec![dest, ops[1], dd, t],
                        &members,
                    );
                }
            }
            Opcode::Convolution => {
                let (act, _) = inst.fused_activation();
                if act != "NONE" || ops.len() > 4 {
                    return Err(inst_error(
                        f,
                        i,
                        format!("convolution `%{name}` has a fused activation or residual; differentiate before fuse-activations and fuse-residual"),
                    ));
                }
                let mut members = window_members(&inst, false);
                if let Some(g) = inst.get(m::GROUP) {
                    members.push(m::GROUP.to(g));
                }
                if let Some(dl) = inst.get(m::DILATION) {
                    members.push(m::DILATION.to(dl));
                }
                // A later contribution to Src's gradient is added by the
                // instruction itself (an @inout SrcGrad) instead of through a
                // `.part` buffer and an `elementadd` (the same `prev + sum`),
                // unless that gradient is one of the instruction's inputs.
                let sum_into = if need(1) {
                    self.existing_grad(f, origins, ops[1]).filter(|&g| {
                        [ops[1], ops[2], dd]
                            .iter()
                            .all(|&v| root(f, v) != root(f, g))
                    })
                } else {
                    None
                };
                let src = if need(1) && sum_into.is_none() {
                    Some(self.target(f, origins, ops[1]))
                } else {
                    None
                };
                let src_grad = match (&src, sum_into) {
                    (_, Some(g)) => g,
                    (Some(t), None) => t.dest,
                    (None, None) => {
                        // Nothing reads it: zeros instead of the sums.
                        members.push(m::COMPUTE_SRC_GRAD.to(false));
                        self.unused(f, &format!("{name}.srcgrad"), ops[1])
                    }
                };
                let filt = self.target(f, origins, ops[2]);
                let bias = self.target(f, origins, ops[3]);
                let g = Builder::new(f).inst(
                    &format!("{name}.grad"),
                    Opcode::ConvolutionGrad,
                    &[ops[1], ops[2], dd, src_grad, filt.dest, bias.dest],
                    &members,
                );
                if sum_into.is_some() {
                    f.inst_mut(g).operands[3].kind = OperandKind::InOut;
                }
                self.added += 1;
                for t in src.into_iter().chain([filt, bias]) {
                    self.finish(f, t);
                }
            }
            Opcode::FullyConnected | Opcode::MatMul => {
                // Dest = Src x W (+ Bias): dSrc = dDest x W^T, dW = Src^T x dDest.
                if need(1) {
                    let dims = |v: Value| f.value_type(v).map_or(vec![1, 1], |t| t.dims.clone());
                    let (s, w) = (dims(ops[1]), dims(ops[2]));
                    let (n, k, m) = (s[0], s[1], w[1]);
                    if k * m <= n * (k + m) {
                        let wt = self.transposed(f, ops[2]);
                        emit(self, f, 1, Opcode::MatMul, &|t| vec![t, dd, wt], &[]);
                    } else {
                        // A large W at a small batch: dSrc^T = W x dDest^T, so
                        // only the small matrices are transposed.
                        let ddt = self.transposed(f, dd);
                        let ty = Type::float(&[k, n]);
                        let base = format!("{name}.srcgrad.t");
                        let st = Builder::new(f).alloc(&base, ty);
                        self.scratch.push(st);
                        Builder::new(f).inst(&base, Opcode::MatMul, &[st, ops[2], ddt], &[]);
                        self.added += 1;
                        emit(
                            self,
                            f,
                            1,
                            Opcode::Transpose,
                            &|t| vec![t, st],
                            &[m::SHUFFLE.to([1, 0])],
                        );
                    }
                }
                if need(2) {
                    let st = self.transposed(f, ops[1]);
                    emit(self, f, 2, Opcode::MatMul, &|t| vec![t, st, dd], &[]);
                }
                if op == Opcode::FullyConnected && need(3) {
                    emit(
                        self,
                        f,
                        3,
                        Opcode::BatchedReduceAdd,
                        &|t| vec![t, dd],
                        &[m::AXIS.to(0)],
                    );
                }
            }
            Opcode::BatchedAdd => {
                if need(1) && !self.alias(f, origins, dest, ops[1], &mut aliased) {
                    emit(self, f, 1, Opcode::Copy, &|t| vec![t, dd], &[]);
                }
                if need(2) {
                    emit(
                        self,
                        f,
                        2,
                        Opcode::BatchedReduceAdd,
                        &|t| vec![t, dd],
                        &[m::AXIS.to(0)],
                    );
                }
            }
            Opcode::ElementAdd | Opcode::ElementSub => {
                if need(1) && !self.alias(f, origins, dest, ops[1], &mut aliased) {
                    emit(self, f, 1, Opcode::Copy, &|t| vec![t, dd], &[]);
                }
                if need(2)
                    && !(op == Opcode::ElementAdd
                        && self.alias(f, origins, dest, ops[2], &mut aliased))
                {
                    let g = if op == Opcode::ElementAdd {
                        Opcode::Copy
                    } else {
                        Opcode::ElementNeg
                    };
                    emit(self, f, 2, g, &|t| vec![t, dd], &[]);
                }
            }
            Opcode::ElementMul => {
                if need(1) {
                    emit(
                        self,
                        f,
                        1,
                        Opcode::ElementMul,
                        &|t| vec![t, dd, ops[2]],
                        &[],
                    );
                }
                if need(2) {
                    emit(
                        self,
                        f,
                        2,
                        Opcode::ElementMul,
                        &|t| vec![t, dd, ops[1]],
                        &[],
                    );
                }
            }
            Opcode::Transpose => {
                if need(1) {
                    let shuffle = inst.get(m::SHUFFLE).unwrap_or(&[]).to_vec();
                    let mut inverse = vec![0i64; shuffle.len()];
                    for (k, &s) in shuffle.iter().enumerate() {
                        if let Some(slot) = usize::try_from(s).ok().and_then(|s| inverse.get_mut(s))
                        {
                            *slot = k as i64;
                        }
                    }
                    emit(
                        self,
                        f,
                        1,
                        Opcode::Transpose,
                        &|t| vec![t, dd],
                        &[m::SHUFFLE.to(inverse.clone())],
                    );
                }
            }
            Opcode::Splat | Opcode::Touch | Opcode::DebugPrint => {}
            _ => {
                let reads_trained = inst
                    .operands
                    .iter()
                    .enumerate()
                    .any(|(k, o)| o.kind.reads() && need(k));
                if reads_trained {
                    return Err(inst_error(
                        f,
                        i,
                        format!("`{}` (instruction `%{name}`) has no gradient", op.name()),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Kernels, Strides, Pads, Layout (and CountIncludePads) of a window op.
fn window_members(inst: &InstData, count: bool) -> Vec<m::Member> {
    let mut v = Vec::new();
    for k in [m::KERNELS, m::STRIDES, m::PADS] {
        if let Some(x) = inst.get(k) {
            v.push(k.to(x));
        }
    }
    if let Some(l) = inst.get(m::LAYOUT) {
        v.push(m::LAYOUT.to(l));
    }
    if count {
        if let Some(c) = inst.get(m::COUNT_INCLUDE_PADS) {
            v.push(m::COUNT_INCLUDE_PADS.to(c));
        }
    }
    v
}
