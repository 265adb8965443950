//! `remat`: rematerialization of a training step (docs/passes/remat.md).
//! Forward activations that the backward pass reads are dropped after
//! their last forward use and recomputed right before their first backward
//! use, by a copy of the instruction that wrote them (recursively, when its
//! inputs are dropped too), until the step's max-live peak is within
//! `budget` bytes. A recomputed activation is the same instruction on the
//! same inputs, so it has the kept one's bits and the step computes exactly
//! what it computed before.
//!
//! The choice is greedy, cheapest first: candidates are ranked by the
//! floating-point work of their writer per byte saved, and one is kept when
//! dropping it lowers the peak. When every candidate has been tried and the
//! peak is still above the budget, the pass fails and says the least peak it
//! reached and at what extra work.

use crate::edit::Origins;
use crate::pass::{Pass, PassContext, PassInfo, PassOption, PassOptions};
use crate::placement::place_deallocs;
use crate::planner::arena::{lifetimes, planner_buffers};
use glow_ir::builder::Builder;
use glow_ir::fxhash::FxHashMap as HashMap;
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, InstData, InstId, Opcode, OperandKind, Value};
use std::collections::HashSet;

pub static INFO: PassInfo = PassInfo {
    name: "remat",
    summary: "Recompute forward activations in the backward pass of a training step until its peak fits a budget",
    options: &[PassOption {
        name: "budget",
        help: "Peak bytes of live activations to reach (required)",
    }],
    stats: &[
        ("activations-recomputed", "Number of forward activations dropped and recomputed"),
        ("instructions-added", "Number of forward instructions copied into the backward pass"),
        ("extra-flops", "Floating-point operations the copies add"),
        ("step-flops", "Floating-point operations of the step before the pass"),
        ("peak-before", "Max-live bytes before"),
        ("peak-after", "Max-live bytes after"),
    ],
    counters: &[],
    create: |o: &PassOptions| {
        let budget = match o.get("budget") {
            Some(_) => Some(o.get_u64("budget", 0)?),
            None => None,
        };
        Ok(Box::new(Remat { budget }))
    },
};

struct Remat {
    /// Given by the option or `--memory-budget`; checked when the pass runs.
    budget: Option<u64>,
}

/// Max-live bytes of the activations (64-byte aligned, as plan-memory),
/// and the sum of bytes times positions live (which breaks ties between
/// choices of one peak: a lower sum leaves room for the next drop).
fn peak(f: &Function) -> (u64, u128) {
    let lives = lifetimes(f);
    let bufs = planner_buffers(f, &lives);
    let area = lives
        .iter()
        .zip(&bufs)
        .map(|(l, b)| b.size as u128 * (l.last - l.first + 1) as u128)
        .sum();
    (crate::planner::lower_bound(&bufs, glow_ir::ALIGN), area)
}

/// Floating-point operations of one instruction, estimated from its shapes
/// (a multiply-add counts two).
pub fn flops(f: &Function, i: InstId) -> u64 {
    let inst = f.inst(i);
    let dims = |k: usize| {
        inst.operands
            .get(k)
            .and_then(|o| f.value_type(o.value))
            .map(|t| t.dims.clone())
            .unwrap_or_default()
    };
    let elems = |k: usize| dims(k).iter().product::<u64>();
    let conv = |out: usize, filter: usize| {
        let fl = dims(filter);
        let per = fl.iter().skip(1).product::<u64>();
        2 * elems(out) * per
    };
    match inst.opcode {
        Opcode::Convolution => conv(0, 2),
        // Input and filter gradients: two products of the forward's size.
        Opcode::ConvolutionGrad => 2 * conv(2, 1),
        Opcode::FullyConnected | Opcode::MatMul => {
            let (s, d) = (dims(1), dims(0));
            2 * s.iter().product::<u64>() * d.last().copied().unwrap_or(1)
        }
        Opcode::AllocActivation
        | Opcode::DeallocActivation
        | Opcode::TensorView
        | Opcode::Touch
        | Opcode::DebugPrint => 0,
        _ => inst
            .operands
            .iter()
            .filter(|o| o.kind.writes())
            .filter_map(|o| f.value_type(o.value))
            .map(|t| t.size())
            .sum(),
    }
}

/// What a recomputation keeps of the dropped values it recomputes on the
/// way (the two ends of Chen et al.'s trade-off; the pass tries both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Policy {
    /// Keep them for their own backward use: each segment between kept
    /// values is recomputed once (Chen's checkpoints).
    Segments,
    /// Free them after the chain: less memory, more recomputation.
    Chains,
}

/// The forward instructions' facts the rewrite needs.
struct Step {
    /// Position of the loss: instructions before it are forward.
    boundary: usize,
    /// The forward writer of each activation (origin) written once there.
    writer: HashMap<Value, InstId>,
}

fn analyse(f: &Function) -> Result<Step, String> {
    let order = f.layout.to_vec();
    let boundary = order
        .iter()
        .position(|&i| f.inst(i).opcode == Opcode::CrossEntropyLoss)
        .ok_or("the function has no crossentropyloss: remat works on a training step (run differentiate first)")?;
    let origins = Origins::compute(f);
    let mut writer = HashMap::default();
    let mut twice = Vec::new();
    for &i in &order[..boundary] {
        let inst = f.inst(i);
        if matches!(
            inst.opcode,
            Opcode::AllocActivation | Opcode::DeallocActivation | Opcode::TensorView
        ) {
            continue;
        }
        for o in inst.operands.iter().filter(|o| o.kind.writes()) {
            let x = origins.origin(o.value);
            if writer.insert(x, i).is_some() || o.kind == OperandKind::InOut {
                twice.push(x);
            }
        }
    }
    for x in twice {
        writer.remove(&x);
    }
    Ok(Step { boundary, writer })
}

/// Whether `x` can be recomputed by copying its writer: an activation
/// written once, by an instruction that writes only activations and reads
/// nothing it writes.
fn recomputable(f: &Function, origins: &Origins, step: &Step, x: Value) -> bool {
    let Some(&w) = step.writer.get(&x) else {
        return false;
    };
    let Value::Inst(a) = x else { return false };
    if f.inst(a).opcode != Opcode::AllocActivation {
        return false;
    }
    f.inst(w).operands.iter().all(|o| {
        let og = origins.origin(o.value);
        let act = matches!(og, Value::Inst(i) if f.inst(i).opcode == Opcode::AllocActivation);
        if o.kind.writes() {
            act && step.writer.get(&og) == Some(&w)
        } else {
            true
        }
    })
}

/// The step with every activation of `drop` recomputed before its first
/// backward use; returns it with the instructions added and their work.
fn rewrite(
    f: &Function,
    step: &Step,
    drop: &[Value],
    implicit: &HashSet<Value>,
    policy: Policy,
) -> (Function, u64, u64) {
    let mut g = f.clone();
    let origins = Origins::compute(&g);
    let order = g.layout.to_vec();
    let explicit: HashSet<Value> = drop.iter().copied().collect();
    // What a copy reads that nothing keeps for the backward pass is
    // recomputed too (a relu's copy needs the convolution before it).
    let dropped: HashSet<Value> = explicit.union(implicit).copied().collect();
    // Recomputed copy of each dropped origin.
    let mut copies: HashMap<Value, Value> = HashMap::default();
    let (mut added, mut work) = (0u64, 0u64);
    let mut new_allocs = Vec::new();
    for &b in &order[step.boundary..] {
        let reads: Vec<(usize, Value)> = g
            .inst(b)
            .operands
            .iter()
            .enumerate()
            .filter(|(_, o)| o.kind.reads())
            .map(|(k, o)| (k, o.value))
            .collect();
        for (k, v) in reads {
            if !explicit.contains(&origins.origin(v)) {
                continue;
            }
            let mut cx = Cx {
                origins: &origins,
                step,
                dropped: &dropped,
                explicit: &explicit,
                policy,
                copies: &mut copies,
                chain: HashMap::default(),
                added: &mut added,
                work: &mut work,
                new_allocs: &mut new_allocs,
            };
            let nv = cx.value(&mut g, b, v, true);
            g.inst_mut(b).operands[k].value = nv;
        }
    }
    let mut bld = Builder::new(&mut g);
    for a in new_allocs {
        let base = format!("{}.dealloc", bld.func().value_name(a));
        bld.dealloc(&base, a);
    }
    place_deallocs(&mut g);
    (g, added, work)
}

struct Cx<'a> {
    origins: &'a Origins,
    step: &'a Step,
    dropped: &'a HashSet<Value>,
    /// The dropped values the backward pass reads.
    explicit: &'a HashSet<Value>,
    policy: Policy,
    copies: &'a mut HashMap<Value, Value>,
    /// Copies made for one top-level recomputation only: inputs of the
    /// chain, freed right after it, so that a later block's recomputation
    /// does not keep an earlier block's copy alive until that block's turn.
    chain: HashMap<Value, Value>,
    added: &'a mut u64,
    work: &'a mut u64,
    new_allocs: &'a mut Vec<Value>,
}

impl Cx<'_> {
    /// `v` as the backward instruction `at` should read it: a dropped
    /// origin's copy (recomputed before `at` the first time), through the
    /// same views.
    fn value(&mut self, g: &mut Function, at: InstId, v: Value, top: bool) -> Value {
        if let Value::Inst(i) = v {
            if g.inst(i).opcode == Opcode::TensorView {
                let src = g.inst(i).operands[0].value;
                let ns = self.value(g, at, src, top);
                if ns == src {
                    return v;
                }
                let ty = g.inst(i).get(m::TY).cloned().expect("a view has a type");
                let offs = g
                    .inst(i)
                    .get(m::OFFSETS)
                    .map(<[i64]>::to_vec)
                    .unwrap_or_default();
                let base = format!("{}.remat", g.inst(i).name);
                return Builder::before(g, at).tensorview(&base, ns, ty, offs);
            }
        }
        if !self.dropped.contains(&v) {
            return v;
        }
        if let Some(&c) = self.copies.get(&v).or_else(|| self.chain.get(&v)) {
            return c;
        }
        let w = self.step.writer[&v];
        let old: InstData = g.inst(w).clone();
        // Inputs first, so the outputs' buffers are allocated only once the
        // chain before them is done (and its buffers freed).
        let mut ops: Vec<Value> = Vec::with_capacity(old.operands.len());
        for o in &old.operands {
            let v = if o.kind.writes() {
                o.value
            } else {
                self.value(g, at, o.value, false)
            };
            ops.push(v);
        }
        for (k, o) in old.operands.iter().enumerate() {
            if o.kind.writes() {
                let og = self.origins.origin(o.value);
                let ty = g.value_type(og).cloned().expect("an activation has a type");
                let base = format!("{}.remat", g.value_name(og));
                let c = Builder::before(g, at).alloc(&base, ty);
                self.new_allocs.push(c);
                // A value the backward pass reads keeps its copy for its own
                // use, which comes soon after (the backward pass runs in
                // reverse); what only the chain reads is freed after it.
                if top || (self.policy == Policy::Segments && self.explicit.contains(&og)) {
                    self.copies.insert(og, c);
                } else {
                    self.chain.insert(og, c);
                }
                ops[k] = c;
            }
        }
        let mut data = old.clone();
        for (slot, v) in data.operands.iter_mut().zip(ops) {
            slot.value = v;
        }
        data.name = g.fresh_name_with(&format!("{}.remat", old.name), "");
        let id = Builder::before(g, at).insert(data);
        *self.added += 1;
        *self.work += flops(g, id);
        match self.copies.get(&v) {
            Some(&c) => c,
            None => self.chain[&v],
        }
    }
}

impl Pass for Remat {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let err = |msg: String| {
            let d = Diagnostic::error(format!("remat: function `{}`: {msg}", f.name));
            vec![match f.spans.function {
                Some(s) => d.at(s),
                None => d,
            }]
        };
        let Some(budget) = self.budget else {
            return Err(err(
                "`remat` needs `budget=BYTES` (or glow-opt --memory-budget=BYTES)".into(),
            ));
        };
        let step = analyse(f).map_err(|m| err(m.to_string()))?;
        let (before, before_area) = peak(f);
        let step_flops: u64 = f.layout.iter().map(|i| flops(f, i)).sum();
        cx.bump("peak-before", before);
        cx.bump("step-flops", step_flops);
        if before <= budget {
            cx.bump("peak-after", before);
            return Ok(false);
        }
        let origins = Origins::compute(f);
        let order = f.layout.to_vec();
        // Candidates: forward activations the backward pass reads.
        let mut read_after = HashSet::new();
        for &b in &order[step.boundary..] {
            for o in f.inst(b).operands.iter().filter(|o| o.kind.reads()) {
                read_after.insert(origins.origin(o.value));
            }
        }
        let implicit: HashSet<Value> = step
            .writer
            .keys()
            .copied()
            .filter(|&x| !read_after.contains(&x) && recomputable(f, &origins, &step, x))
            .collect();
        // The work of recomputing x: its writer, and the implicit inputs.
        fn cost(
            f: &Function,
            origins: &Origins,
            step: &Step,
            implicit: &HashSet<Value>,
            x: Value,
            depth: u32,
        ) -> u64 {
            let w = step.writer[&x];
            let mut c = flops(f, w);
            if depth < 64 {
                for o in f
                    .inst(w)
                    .operands
                    .iter()
                    .filter(|o| o.kind == OperandKind::In)
                {
                    let y = origins.origin(o.value);
                    if implicit.contains(&y) {
                        c += cost(f, origins, step, implicit, y, depth + 1);
                    }
                }
            }
            c
        }
        let mut cands: Vec<(f64, Value)> = step
            .writer
            .keys()
            .copied()
            .filter(|&x| read_after.contains(&x) && recomputable(f, &origins, &step, x))
            .map(|x| {
                let bytes = f.value_type(x).map_or(1, |t| t.bytes()).max(1);
                (
                    cost(f, &origins, &step, &implicit, x, 0) as f64 / bytes as f64,
                    x,
                )
            })
            .collect();
        cands.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        // Greedy, cheapest first, under each policy; the cheaper result that
        // meets the budget wins (else the lower peak, to report).
        let mut results = Vec::new();
        for policy in [Policy::Segments, Policy::Chains] {
            let mut drop: Vec<Value> = Vec::new();
            let mut best = (before, f.clone(), 0u64, 0u64);
            let mut best_area = before_area;
            for &(_, x) in &cands {
                drop.push(x);
                let (g, added, work) = rewrite(f, &step, &drop, &implicit, policy);
                let (p, area) = peak(&g);
                if p < best.0 || (p == best.0 && area < best_area) {
                    best_area = area;
                    cx.debug(|| {
                        format!(
                            "{policy:?}: dropping %{} gives a peak of {p} bytes",
                            f.value_name(x)
                        )
                    });
                    best = (p, g, added, work);
                    if p <= budget {
                        break;
                    }
                } else {
                    drop.pop();
                }
            }
            results.push((best, drop));
        }
        results.sort_by_key(|((p, _, _, work), _)| {
            (*p > budget, if *p <= budget { *work } else { *p })
        });
        let ((p, g, added, work), drop) = results.swap_remove(0);
        if p > budget {
            return Err(err(format!(
                "the budget of {} bytes cannot be met: the least peak reached is {p} bytes (from {before}), recomputing {} activations at {work} extra FLOPs ({:.1}% of the step's {step_flops})",
                budget,
                drop.len(),
                100.0 * work as f64 / step_flops.max(1) as f64
            )));
        }
        *f = g;
        cx.bump("activations-recomputed", drop.len() as u64);
        cx.bump("instructions-added", added);
        cx.bump("extra-flops", work);
        cx.bump("peak-after", p);
        Ok(!drop.is_empty())
    }
}
