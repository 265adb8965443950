//! `remat`: rematerialization of a training step (docs/passes/remat.md).
//! Forward activations that the backward pass reads are dropped after
//! their last forward use and recomputed right before their first backward
//! use, by a copy of the instruction that wrote them (recursively, when its
//! inputs are dropped too), until the step's max-live peak is within
//! `budget` bytes. A recomputed activation is the same instruction on the
//! same inputs, so it has the kept one's bits and the step computes exactly
//! what it computed before.
//!
//! The choice is a search over each candidate's mode (keep, segment,
//! chain): greedy seeds cheapest first and Chen's checkpoints, then a local
//! search that lowers the bytes above the budget, then the work. When no
//! choice meets the budget, the pass fails and says the least peak it
//! reached and at what extra work. Backward instructions are then sunk to
//! their first dependent, so a gradient is not live across a recomputation
//! it does not take part in.

mod dp;

use crate::edit::rebuild_layout;
use crate::edit::Origins;
use crate::pass::{Pass, PassContext, PassInfo, PassOption, PassOptions, Stats};
use crate::placement::{place_before_first_use, place_deallocs};
use crate::plan_memory;
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
/// and the bytes above `budget` summed over the positions where the live
/// bytes exceed it (which guides the search: it falls whenever one of
/// several equal peaks does, where the peak itself does not move).
/// Also the activations live where the live bytes are highest.
fn peak(f: &Function, budget: u64) -> (u64, u128, HashSet<Value>) {
    let lives = lifetimes(f);
    let bufs = planner_buffers(f, &lives);
    let n = f.layout.len() + 1;
    let mut delta = vec![0i128; n + 1];
    for b in &bufs {
        let s = crate::planner::align_up(b.size, glow_ir::ALIGN) as i128;
        delta[(b.first as usize).min(n)] += s;
        delta[(b.last as usize + 1).min(n)] -= s;
    }
    let (mut live, mut excess, mut top) = (0i128, 0u128, (0i128, 0usize));
    for (t, d) in delta.into_iter().enumerate() {
        live += d;
        excess += (live - budget as i128).max(0) as u128;
        if live > top.0 {
            top = (live, t);
        }
    }
    let at_peak = lives
        .iter()
        .filter(|l| l.first <= top.1 && top.1 <= l.last)
        .map(|l| Value::Inst(l.alloc))
        .collect();
    (
        crate::planner::lower_bound(&bufs, glow_ir::ALIGN),
        excess,
        at_peak,
    )
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

/// What the step does with one candidate activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Kept from the forward pass to its backward use.
    Keep,
    /// Dropped; a recomputation that passes through it keeps the copy for
    /// its own backward use, so each segment between kept values is
    /// recomputed once (Chen et al.'s checkpoints).
    Segment,
    /// Dropped; a recomputation that passes through it frees the copy after
    /// the chain, and its own backward use recomputes it again (less memory,
    /// more work).
    Chain,
}

/// Sweeps of the local search at most (each tries every candidate's other
/// modes once; it usually settles in two or three).
const MAX_SWEEPS: usize = 8;

/// Bounds the search for the dynamic program's bound measures at most.
const DP_PROBES: usize = 16;

/// One choice of modes, rewritten and measured.
#[derive(Clone)]
struct Trial {
    peak: u64,
    /// Bytes above the budget summed over positions.
    excess: u128,
    work: u64,
    added: u64,
    g: Function,
    modes: Vec<Mode>,
    /// The activations live at the peak.
    at_peak: HashSet<Value>,
}

impl Trial {
    /// Within the budget, less work wins; above it, fewer bytes above the
    /// budget over time (then a lower peak, then less work).
    fn better_than(&self, o: &Trial, budget: u64) -> bool {
        let (a, b) = (self.peak <= budget, o.peak <= budget);
        if a != b {
            return a;
        }
        if a {
            (self.work, self.peak) < (o.work, o.peak)
        } else {
            (self.excess, self.peak, self.work) < (o.excess, o.peak, o.work)
        }
    }
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
    plan: &[(Value, Mode)],
    implicit: &HashSet<Value>,
) -> (Function, u64, u64) {
    let mut g = f.clone();
    let origins = Origins::compute(&g);
    let order = g.layout.to_vec();
    let explicit: HashSet<Value> = plan
        .iter()
        .filter(|(_, m)| *m != Mode::Keep)
        .map(|(x, _)| *x)
        .collect();
    let segment: HashSet<Value> = plan
        .iter()
        .filter(|(_, m)| *m == Mode::Segment)
        .map(|(x, _)| *x)
        .collect();
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
                segment: &segment,
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
    sink(&mut g, step.boundary);
    place_deallocs(&mut g);
    (g, added, work)
}

/// Moves each backward instruction down to right before the first later
/// instruction it depends on (one that touches what it writes or writes what
/// it reads), but not past the last reader of an activation it reads, so no
/// input lives longer; its output's buffer is then allocated later. A
/// residual's gradient copy then waits until the branch's first gradient is
/// done, instead of living across the branch's recomputation.
fn sink(f: &mut Function, boundary: usize) {
    let order = f.layout.to_vec();
    let n = order.len();
    let origins = Origins::compute(f);
    let is_act =
        |v: Value| matches!(v, Value::Inst(i) if f.inst(i).opcode == Opcode::AllocActivation);
    // Per origin, the positions that read it and those that write it.
    let mut reads: HashMap<Value, Vec<usize>> = HashMap::default();
    let mut writes: HashMap<Value, Vec<usize>> = HashMap::default();
    for (p, &i) in order.iter().enumerate() {
        let inst = f.inst(i);
        if matches!(inst.opcode, Opcode::AllocActivation | Opcode::TensorView) {
            continue;
        }
        for o in &inst.operands {
            let og = origins.origin(o.value);
            if o.kind.reads() {
                reads.entry(og).or_default().push(p);
            }
            if o.kind.writes() {
                writes.entry(og).or_default().push(p);
            }
        }
    }
    let next = |list: Option<&Vec<usize>>, p: usize| {
        list.and_then(|l| l.get(l.partition_point(|&q| q <= p)).copied())
            .unwrap_or(n)
    };
    let mut before: Vec<Vec<InstId>> = vec![Vec::new(); f.insts.len()];
    let mut dead = vec![false; f.insts.len()];
    for (p, &i) in order.iter().enumerate().skip(boundary + 1) {
        let inst = f.inst(i);
        if matches!(
            inst.opcode,
            Opcode::AllocActivation | Opcode::DeallocActivation | Opcode::TensorView
        ) {
            continue;
        }
        let mut limit = n;
        for o in &inst.operands {
            let og = origins.origin(o.value);
            if o.kind.writes() {
                limit = limit
                    .min(next(reads.get(&og), p))
                    .min(next(writes.get(&og), p));
            }
            if o.kind.reads() {
                limit = limit.min(next(writes.get(&og), p));
                if is_act(og) {
                    let last = reads.get(&og).and_then(|l| l.last().copied()).unwrap_or(p);
                    limit = limit.min(last.max(p));
                }
            }
        }
        if limit < n && limit > p + 1 {
            before[order[limit].index()].push(i);
            dead[i.index()] = true;
        }
    }
    rebuild_layout(f, &before, &dead);
    place_before_first_use(f, true, true);
}

struct Cx<'a> {
    origins: &'a Origins,
    step: &'a Step,
    dropped: &'a HashSet<Value>,
    /// The dropped values that keep a copy made on a chain for their own
    /// backward use.
    segment: &'a HashSet<Value>,
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
                if top || self.segment.contains(&og) {
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

/// One sweep of the local search from `cur`: each candidate's other modes
/// are tried in turn and a better result stays. With `pin`, that candidate
/// is given that mode first and the sweep returns at the first other change
/// that makes the pair better than `cur` (else `cur`).
fn sweep(
    mut cur: Trial,
    cands: &[Value],
    budget: u64,
    eval: &dyn Fn(&[Mode]) -> Trial,
    pin: Option<(usize, Mode)>,
    cx: &mut PassContext,
    f: &Function,
) -> Trial {
    let mut base = cur.modes.clone();
    if let Some((x, m)) = pin {
        base[x] = m;
    }
    for _ in 0..MAX_SWEEPS {
        let mut changed = false;
        for i in 0..cands.len() {
            for alt in [Mode::Keep, Mode::Segment, Mode::Chain] {
                if alt == base[i] || pin.is_some_and(|(x, _)| x == i) {
                    continue;
                }
                let mut modes = base.clone();
                modes[i] = alt;
                let t = eval(&modes);
                if t.better_than(&cur, budget) {
                    cx.debug(|| {
                        format!(
                            "search: %{} {:?} -> {alt:?}{} gives a peak of {} bytes at {} extra FLOPs",
                            f.value_name(cands[i]),
                            base[i],
                            match pin {
                                Some((x, m)) => format!(" with %{} {m:?}", f.value_name(cands[x])),
                                None => String::new(),
                            },
                            t.peak,
                            t.work
                        )
                    });
                    base = modes;
                    cur = t;
                    changed = true;
                    if pin.is_some() {
                        return cur;
                    }
                    break;
                }
            }
        }
        if !changed || pin.is_some() {
            break;
        }
    }
    cur
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
        let (before, before_excess, before_at_peak) = peak(f, budget);
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
        let cands: Vec<Value> = cands.into_iter().map(|(_, x)| x).collect();
        let eval = |modes: &[Mode]| {
            let plan: Vec<(Value, Mode)> =
                cands.iter().copied().zip(modes.iter().copied()).collect();
            let (g, added, work) = rewrite(f, &step, &plan, &implicit);
            let (peak, excess, at_peak) = peak(&g, budget);
            Trial {
                peak,
                excess,
                work,
                added,
                g,
                modes: modes.to_vec(),
                at_peak,
            }
        };
        let keep_all = Trial {
            peak: before,
            excess: before_excess,
            work: 0,
            added: 0,
            g: f.clone(),
            modes: vec![Mode::Keep; cands.len()],
            at_peak: before_at_peak,
        };
        // Seeds: greedy, cheapest first, one mode for every drop; a drop
        // stays when it lowers the bytes above the budget.
        let greedy = |mode: Mode, cx: &mut PassContext| {
            let mut cur = keep_all.clone();
            for i in 0..cands.len() {
                let mut modes = cur.modes.clone();
                modes[i] = mode;
                let t = eval(&modes);
                if t.better_than(&cur, budget) {
                    cx.debug(|| {
                        format!(
                            "greedy {mode:?}: dropping %{} gives a peak of {} bytes",
                            f.value_name(cands[i]),
                            t.peak
                        )
                    });
                    cur = t;
                    if cur.peak <= budget {
                        break;
                    }
                }
            }
            cur
        };
        // Chen et al.'s checkpoints: walking the forward pass, a candidate
        // is kept once the bytes dropped since the last kept one pass a
        // segment size; sizes from the whole to 1/256 of it by factors of
        // √2, every other candidate in one mode.
        let pos: HashMap<InstId, usize> = order.iter().enumerate().map(|(p, &i)| (i, p)).collect();
        let mut fwd: Vec<usize> = (0..cands.len()).collect();
        fwd.sort_by_key(|&i| pos[&step.writer[&cands[i]]]);
        let bytes = |i: usize| f.value_type(cands[i]).map_or(0, |t| t.bytes());
        let total: u64 = (0..cands.len()).map(bytes).sum();
        let mut chen: Option<Trial> = None;
        for k in 0..=16u32 {
            let seg = (total as f64 / 2f64.powf(k as f64 / 2.0)) as u64;
            for mode in [Mode::Segment, Mode::Chain] {
                let mut modes = vec![mode; cands.len()];
                let mut acc = 0u64;
                for &i in &fwd {
                    acc += bytes(i);
                    if acc > seg {
                        modes[i] = Mode::Keep;
                        acc = 0;
                    }
                }
                let t = eval(&modes);
                if chen.as_ref().is_none_or(|c| t.better_than(c, budget)) {
                    cx.debug(|| {
                        format!(
                            "checkpoints every {seg} bytes, {mode:?}: a peak of {} bytes at {} extra FLOPs",
                            t.peak, t.work
                        )
                    });
                    chen = Some(t);
                }
            }
        }
        // The exact program on the forward order (dp.rs): for a bound on
        // its model, the least-work checkpoints, the rest in segment mode.
        // The model leaves out the gradients and what is not a candidate,
        // so the bound that meets the budget is searched by measuring: the
        // largest whose step fits (the peak grows with the bound).
        let sizes: Vec<u64> = fwd
            .iter()
            .map(|&i| crate::planner::align_up(bytes(i), glow_ir::ALIGN))
            .collect();
        let works: Vec<u64> = fwd
            .iter()
            .map(|&i| cost(f, &origins, &step, &implicit, cands[i], 0))
            .collect();
        // The earliest candidate each one's recomputation reads (through
        // the values recomputed with it): a segment is one only when each
        // of its candidates reads nothing before its kept start.
        let at: HashMap<Value, usize> = fwd
            .iter()
            .enumerate()
            .map(|(k, &i)| (cands[i], k + 1))
            .collect();
        fn earliest(
            f: &Function,
            origins: &Origins,
            step: &Step,
            implicit: &HashSet<Value>,
            at: &HashMap<Value, usize>,
            x: Value,
            depth: u32,
        ) -> usize {
            let mut e = usize::MAX;
            for o in f
                .inst(step.writer[&x])
                .operands
                .iter()
                .filter(|o| o.kind == OperandKind::In)
            {
                let y = origins.origin(o.value);
                if let Some(&p) = at.get(&y) {
                    e = e.min(p);
                } else if implicit.contains(&y) && depth < 64 {
                    e = e.min(earliest(f, origins, step, implicit, at, y, depth + 1));
                }
            }
            e
        }
        let reads: Vec<usize> = fwd
            .iter()
            .map(|&i| earliest(f, &origins, &step, &implicit, &at, cands[i], 0))
            .collect();
        let dp_trial = |m: u64, cx: &mut PassContext| {
            let s = dp::solve(&sizes, &works, &reads, m)?;
            let mut modes = vec![Mode::Keep; cands.len()];
            for (k, &i) in fwd.iter().enumerate() {
                if !s.keep[k] {
                    modes[i] = Mode::Segment;
                }
            }
            let t = eval(&modes);
            cx.debug(|| {
                format!(
                    "program within {m} bytes{}: keeps {} of {}, a peak of {} bytes at {} extra FLOPs",
                    if s.exact { "" } else { " (fronts thinned)" },
                    s.keep.iter().filter(|&&k| k).count(),
                    s.keep.len(),
                    t.peak,
                    t.work
                )
            });
            Some(t)
        };
        let (lo, hi) = (
            dp::least_bound(&sizes, &works, &reads),
            sizes.iter().sum::<u64>(),
        );
        let mut program = dp_trial(lo, cx);
        if program.as_ref().is_some_and(|t| t.peak <= budget) {
            let (mut a, mut b) = (lo, hi);
            for _ in 0..DP_PROBES {
                if b - a <= (hi - lo) / 256 + 1 {
                    break;
                }
                let mid = a + (b - a) / 2;
                let Some(t) = dp_trial(mid, cx) else { break };
                if t.peak <= budget {
                    a = mid;
                } else {
                    b = mid;
                }
                if program.as_ref().is_none_or(|p| t.better_than(p, budget)) {
                    program = Some(t);
                }
            }
        }
        let seeds = [
            greedy(Mode::Segment, cx),
            greedy(Mode::Chain, cx),
            chen.unwrap_or_else(|| keep_all.clone()),
            program.unwrap_or_else(|| keep_all.clone()),
        ];
        let mut finals = Vec::new();
        for mut cur in seeds {
            // From each seed, local search over each candidate's mode: a
            // change stays when it lowers the bytes above the budget, or the
            // work within it (so drops the budget does not need are undone).
            for _round in 0..MAX_SWEEPS {
                cur = sweep(cur, &cands, budget, &eval, None, cx, f);
                if cur.peak <= budget {
                    break;
                }
                // Stuck above the budget: one kept activation at the peak
                // dropped together with any other change (one of several
                // equal peaks falls only with two).
                let mut moved = false;
                for x in 0..cands.len() {
                    if cur.modes[x] != Mode::Keep || !cur.at_peak.contains(&cands[x]) {
                        continue;
                    }
                    for mx in [Mode::Segment, Mode::Chain] {
                        let t = sweep(cur.clone(), &cands, budget, &eval, Some((x, mx)), cx, f);
                        if t.better_than(&cur, budget) {
                            cur = t;
                            moved = true;
                            break;
                        }
                    }
                    if moved {
                        break;
                    }
                }
                if !moved {
                    break;
                }
            }
            finals.push(cur);
        }
        // Within the budget the cheapest; above it, the least peak (to say).
        let best = finals.into_iter().reduce(|a, b| {
            let better = if a.peak <= budget || b.peak <= budget {
                b.better_than(&a, budget)
            } else {
                (b.peak, b.work) < (a.peak, a.work)
            };
            if better {
                b
            } else {
                a
            }
        });
        let best = best.unwrap_or(keep_all);
        let Trial {
            peak: p,
            work,
            added,
            mut g,
            modes,
            ..
        } = best;
        let recomputed = modes.iter().filter(|&&m| m != Mode::Keep).count();
        if p > budget {
            return Err(err(format!(
                "the budget of {} bytes cannot be met: the least peak reached is {p} bytes (from {before}), recomputing {recomputed} activations at {work} extra FLOPs ({:.1}% of the step's {step_flops})",
                budget,
                100.0 * work as f64 / step_flops.max(1) as f64
            )));
        }
        // A planned step stays planned: its new buffers get offsets.
        if let Some(plan) = &f.memory {
            let mut opts = PassOptions::default();
            opts.values.insert("align".into(), plan.align.to_string());
            let mut stats = Stats::default();
            let mut sub = PassContext::new(plan_memory::INFO.name, &mut stats, None);
            (plan_memory::INFO.create)(&opts)
                .map_err(|e| err(e.to_string()))?
                .run(&mut g, &mut sub)?;
        }
        *f = g;
        cx.bump("activations-recomputed", recomputed as u64);
        cx.bump("instructions-added", added);
        cx.bump("extra-flops", work);
        cx.bump("peak-after", p);
        Ok(recomputed > 0)
    }
}
