//! `share-buffers`: reuse the buffer of one operand of an in-place pair for
//! the other where their live intervals allow it (Glow's interval-based
//! `shareBuffers`; docs/passes/share-buffers.md).
//!
//! Instructions are visited bottom-up. For an in-place operand pair (dest,
//! src) with identical operand types and origins of the same byte size and
//! element width, the live interval of one origin is handed to the other:
//! its uses *inside that interval only* are rewritten to the other buffer at
//! the same element offset, through a new `tensorview` where the operand's
//! type or offset differs from the new buffer's. An interval may move when
//! it is not the last interval of a weight (observable) and does not overlap
//! any interval of the other buffer; a `copy` whose dest interval starts at
//! the copy, lies inside the src interval and both hold one value is copy
//! propagation (the overlap is fine). A live-in interval (a weight's input
//! value, read before any write) moves only with a fix-up copy that puts the
//! value into the new buffer first. At most one share per instruction.
//!
//! Guarantees: const weights are never shared (they would be written); no
//! instruction ends up with the same memory in two operands unless both are
//! `@in` or they form an in-place pair at the same offset; afterwards every
//! buffer that gained uses gets its alloc hoisted before its first use and
//! its dealloc sunk after its last use (views count), so the IR verifies.
//! Replaced buffers keep their alloc/dealloc for `dead-alloc`; the copies
//! that become `copy @out %x, @in %x` are left for `peephole`.

use crate::analysis::liveness::{operand_slot, read_slot, write_slot, Interval, LiveIntervals};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::member as m;
use glow_ir::{
    Diagnostic, Function, InstData, InstId, Mutability, Opcode, OperandKind, Type, Value,
};
use std::collections::{BTreeMap, BTreeSet};

pub static INFO: PassInfo = PassInfo {
    name: "share-buffers",
    summary: "Reuse buffers: give one operand of an in-place pair the other's memory where their live intervals do not overlap (inference only)",
    options: &[],
    stats: &[
        ("buffers-shared", "Number of live intervals moved into another buffer"),
        ("copies-propagated", "Number of shares that were copy propagation"),
        ("casts-inserted", "Number of tensorview casts inserted"),
        ("fixup-copies-inserted", "Number of fix-up copies inserted for live-in values"),
        ("allocs-hoisted", "Number of allocs moved before a new first use"),
        ("deallocs-sunk", "Number of deallocs moved after a new last use"),
    ],
    counters: &[(
        "share-buffers",
        "Sharing one buffer interval with another buffer",
    )],
    create: |_: &PassOptions| Ok(Box::new(ShareBuffers)),
};

struct ShareBuffers;

impl Pass for ShareBuffers {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let mut st = Sharer {
            order: f.layout.to_vec(),
            lv: LiveIntervals::compute(f),
            pending: BTreeMap::new(),
            targets: BTreeSet::new(),
        };
        for pos in (0..st.order.len()).rev() {
            st.share_for_inst(f, cx, pos);
        }
        if st.targets.is_empty() {
            return Ok(false);
        }
        st.commit_layout(f);
        let (hoisted, sunk) = crate::placement::repair_buffers(f, &st.targets);
        cx.bump("allocs-hoisted", hoisted);
        cx.bump("deallocs-sunk", sunk);
        Ok(true)
    }
}

/// The state of one run.
struct Sharer {
    /// The program order the numbering refers to (position = number).
    order: Vec<InstId>,
    lv: LiveIntervals,
    /// New instructions (casts, fix-up copies) to put before the original
    /// instruction at a position, in order.
    pending: BTreeMap<usize, Vec<InstId>>,
    /// Buffers that received uses (their alloc/dealloc may need to move).
    targets: BTreeSet<Value>,
}

/// Which interval moves into which buffer.
#[derive(Clone, Copy, Debug)]
struct Move {
    from: Value,
    index: usize,
    interval: Interval,
    to: Value,
    /// A `copy` whose two intervals hold one value: the moved interval is
    /// merged with this interval of `to` (the copy becomes `copy %x, %x`).
    merge_with: Option<usize>,
}

/// One operand to rewrite: it uses the replaced buffer inside the interval.
struct Rewrite {
    pos: usize,
    inst: InstId,
    operand: usize,
    ty: Type,
    offset: u64,
}

impl Sharer {
    /// Tries the in-place pairs of the instruction at `pos`; at most one share.
    fn share_for_inst(&mut self, f: &mut Function, cx: &mut PassContext, pos: usize) {
        let Some(&id) = self.order.get(pos) else {
            return;
        };
        let inst = f.inst(id);
        let info = inst.opcode.info();
        let n = inst.operands.len().min(info.operands.len());
        for first in 0..n {
            for second in first + 1..n {
                if !info.is_inplace_pair(first, second) {
                    continue;
                }
                // The table lists (dest, src); dest is the written operand.
                let (d, s) = if info.inplace.contains(&(first, second)) {
                    (first, second)
                } else {
                    (second, first)
                };
                match self.try_pair(f, cx, pos, id, d, s) {
                    PairOutcome::Shared | PairOutcome::AlreadyShared => return,
                    PairOutcome::Rejected => {}
                }
            }
        }
    }

    fn try_pair(
        &mut self,
        f: &mut Function,
        cx: &mut PassContext,
        pos: usize,
        id: InstId,
        d: usize,
        s: usize,
    ) -> PairOutcome {
        let inst = f.inst(id);
        let info = inst.opcode.info();
        let (dop, sop) = (inst.operands[d], inst.operands[s]);
        let head = format!(
            "{} %{}: {} %{} / {} %{}",
            info.name,
            inst.name,
            info.operands[d].name,
            f.value_name(dop.value),
            info.operands[s].name,
            f.value_name(sop.value)
        );
        let reject = |cx: &mut PassContext, why: String| {
            cx.debug(|| format!("{head}: {why}"));
            PairOutcome::Rejected
        };
        let (Some(dty), Some(sty)) = (f.value_type(dop.value), f.value_type(sop.value)) else {
            return reject(cx, "an operand is not a buffer".into());
        };
        if dty != sty {
            return reject(cx, format!("operand types differ ({dty} vs {sty})"));
        }
        let (dorig, _) = f.origin(dop.value);
        let (sorig, _) = f.origin(sop.value);
        if dorig == sorig {
            cx.debug(|| format!("{head}: already the same buffer %{}", f.value_name(dorig)));
            return PairOutcome::AlreadyShared;
        }
        let (Some(dbuf), Some(sbuf)) = (buffer_type(f, dorig), buffer_type(f, sorig)) else {
            return reject(cx, "an origin is not a weight or an alloc".into());
        };
        if dbuf.bytes() != sbuf.bytes() || dbuf.elem.bytes() != sbuf.elem.bytes() {
            return reject(
                cx,
                format!(
                    "buffer sizes differ (%{}: {dbuf}, %{}: {sbuf})",
                    f.value_name(dorig),
                    f.value_name(sorig)
                ),
            );
        }
        for v in [dorig, sorig] {
            if is_const_weight(f, v) {
                return reject(
                    cx,
                    format!("%{} is a const weight (read-only)", f.value_name(v)),
                );
            }
        }
        if matches!((dorig, sorig), (Value::Weight(_), Value::Weight(_))) {
            return reject(cx, "both buffers are weights (observable)".into());
        }
        let (Some(di), Some(si)) = (
            self.lv.index_at(dorig, operand_slot(pos, dop.kind)),
            self.lv.index_at(sorig, operand_slot(pos, sop.kind)),
        ) else {
            return reject(cx, "no live interval at this instruction".into());
        };
        let dint = self.lv.intervals(dorig)[di];
        let sint = self.lv.intervals(sorig)[si];
        let head = format!(
            "{} %{}: {} %{} {} / {} %{} {}",
            info.name,
            inst.name,
            info.operands[d].name,
            f.value_name(dorig),
            dint,
            info.operands[s].name,
            f.value_name(sorig),
            sint
        );
        // After a full copy both buffers hold one value until either changes.
        let same_value_copy = inst.opcode == Opcode::Copy
            && dint.same_value
            && sint.same_value
            && dint.begin == write_slot(pos);
        // Copy propagation: dest may take src's buffer although they overlap.
        let copy_prop = same_value_copy && sint.encloses(&dint);
        let dest_move = Move {
            from: dorig,
            index: di,
            interval: dint,
            to: sorig,
            merge_with: same_value_copy.then_some(si),
        };
        let src_move = Move {
            from: sorig,
            index: si,
            interval: sint,
            to: dorig,
            merge_with: same_value_copy.then_some(di),
        };
        let dest_block = self.blocker(f, dorig, di, sorig, &dint, copy_prop);
        let src_block = self.blocker(f, sorig, si, dorig, &sint, false);
        let candidates: Vec<Move> = match (&dest_block, &src_block) {
            (None, None) => {
                let prefer_src = self.prefer_src_buffer(dorig, sorig);
                if prefer_src {
                    vec![dest_move, src_move]
                } else {
                    vec![src_move, dest_move]
                }
            }
            (None, Some(_)) => vec![dest_move],
            (Some(_), None) => vec![src_move],
            (Some(db), Some(sb)) => {
                return reject_with(
                    cx,
                    &head,
                    format!(
                        "%{}'s interval {db}; %{}'s interval {sb}",
                        f.value_name(dorig),
                        f.value_name(sorig)
                    ),
                );
            }
        };
        let mut why = Vec::new();
        for mv in candidates {
            match self.plan(f, &mv) {
                Ok(_) if !cx.should_execute("share-buffers") => {
                    return reject_with(cx, &head, "skipped by --debug-counter".into());
                }
                Ok(rewrites) => {
                    let fixup = self.apply(f, cx, &mv, rewrites);
                    cx.bump("buffers-shared", 1);
                    cx.bump("copies-propagated", mv.merge_with.is_some() as u64);
                    cx.debug(|| {
                        let mut line = format!(
                            "{head}: replaced %{}'s interval {} by %{}",
                            f.value_name(mv.from),
                            mv.interval,
                            f.value_name(mv.to)
                        );
                        if mv.merge_with.is_some() {
                            line.push_str(" (copy propagation)");
                        }
                        if let Some(c) = fixup {
                            line.push_str(&format!(", fix-up copy %{}", f.inst(c).name));
                        }
                        for w in &why {
                            line.push_str(&format!("; {w}"));
                        }
                        line
                    });
                    return PairOutcome::Shared;
                }
                Err(e) => why.push(format!(
                    "%{}'s interval cannot move to %{}: {e}",
                    f.value_name(mv.from),
                    f.value_name(mv.to)
                )),
            }
        }
        if let Some(db) = dest_block {
            why.insert(0, format!("%{}'s interval {db}", f.value_name(dorig)));
        }
        if let Some(sb) = src_block {
            why.insert(0, format!("%{}'s interval {sb}", f.value_name(sorig)));
        }
        reject_with(cx, &head, why.join("; "))
    }

    /// Why interval `idx` of `origin` may not move into `other`, if it may not.
    fn blocker(
        &self,
        f: &Function,
        origin: Value,
        idx: usize,
        other: Value,
        interval: &Interval,
        copy_prop: bool,
    ) -> Option<String> {
        if matches!(origin, Value::Weight(_)) && self.lv.is_last(origin, idx) {
            return Some("is the last of a weight (observable)".into());
        }
        if copy_prop {
            return None;
        }
        self.lv
            .first_overlap(other, interval)
            .map(|o| format!("overlaps %{}'s {o}", f.value_name(other)))
    }

    /// With no restriction, whether dest's interval should take src's
    /// buffer (rather than src's interval dest's buffer): keep the weight's
    /// buffer, else empty a buffer that has a single interval.
    fn prefer_src_buffer(&self, dorig: Value, sorig: Value) -> bool {
        match (dorig, sorig) {
            (Value::Inst(_), Value::Weight(_)) => return true,
            (Value::Weight(_), Value::Inst(_)) => return false,
            _ => {}
        }
        let (nd, ns) = (
            self.lv.intervals(dorig).len(),
            self.lv.intervals(sorig).len(),
        );
        !(ns == 1 && nd != 1)
    }

    /// The operands to rewrite for `mv`, or why the move would break an
    /// instruction (the same memory in two operands that may not alias).
    fn plan(&self, f: &Function, mv: &Move) -> Result<Vec<Rewrite>, String> {
        let iv = mv.interval;
        let last = self.order.len().saturating_sub(1);
        let mut rewrites = Vec::new();
        for pos in iv.begin / 4..=(iv.end / 4).min(last) {
            let id = self.order[pos];
            let inst = f.inst(id);
            if is_memory_op(inst.opcode) {
                continue;
            }
            for (k, op) in inst.operands.iter().enumerate() {
                let (o, offset) = f.origin(op.value);
                if o != mv.from || !iv.contains(operand_slot(pos, op.kind)) {
                    continue;
                }
                let Some(ty) = f.value_type(op.value) else {
                    return Err(format!("operand {k} of %{} has no type", inst.name));
                };
                rewrites.push(Rewrite {
                    pos,
                    inst: id,
                    operand: k,
                    ty: ty.clone(),
                    offset,
                });
            }
        }
        if rewrites.is_empty() {
            return Err("no use inside the interval".into());
        }
        let mut insts: Vec<InstId> = rewrites.iter().map(|r| r.inst).collect();
        insts.dedup();
        for id in insts {
            check_aliasing(f, id, mv, &rewrites)?;
        }
        Ok(rewrites)
    }

    /// Rewrites the uses, inserts casts and the fix-up copy, updates the
    /// intervals. Returns the fix-up copy, if one was inserted.
    fn apply(
        &mut self,
        f: &mut Function,
        cx: &mut PassContext,
        mv: &Move,
        rewrites: Vec<Rewrite>,
    ) -> Option<InstId> {
        let to_ty = buffer_type(f, mv.to).cloned()?;
        let first_pos = rewrites.first().map_or(0, |r| r.pos);
        let mut casts: Vec<(Type, u64, Value)> = Vec::new();
        for rw in &rewrites {
            let new = if rw.ty == to_ty && rw.offset == 0 {
                mv.to
            } else if let Some(&(_, _, v)) = casts
                .iter()
                .find(|(t, o, _)| *t == rw.ty && *o == rw.offset)
            {
                v
            } else {
                let offsets = unravel(rw.offset, &to_ty.dims);
                let v = self.detached_view(f, rw.pos, mv.to, rw.ty.clone(), offsets);
                cx.bump("casts-inserted", 1);
                casts.push((rw.ty.clone(), rw.offset, v));
                v
            };
            f.inst_mut(rw.inst).operands[rw.operand].value = new;
        }
        let mut moved = mv.interval;
        let mut fixup = None;
        if mv.interval.live_in {
            // The interval holds a value from before the function: copy it
            // into the new buffer right before its first use.
            let from_ty = buffer_type(f, mv.from).cloned();
            let src = match from_ty {
                Some(t) if t == to_ty => mv.from,
                _ => {
                    cx.bump("casts-inserted", 1);
                    let zeros = vec![0; f.value_type(mv.from).map_or(1, |t| t.rank())];
                    self.detached_view_front(f, first_pos, mv.from, to_ty.clone(), zeros)
                }
            };
            let name = f.fresh_name(&format!("{}.fixup", f.inst(self.order[first_pos]).name));
            let copy = f.push_inst(InstData::new(name, Opcode::Copy, &[mv.to, src], &[]));
            self.pending
                .entry(first_pos)
                .or_default()
                .insert(usize::from(src != mv.from), copy);
            cx.bump("fixup-copies-inserted", 1);
            fixup = Some(copy);
            // The new buffer is written just before the first use.
            moved.begin = read_slot(first_pos).saturating_sub(1);
            moved.live_in = false;
        }
        if self.lv.take(mv.from, mv.index).is_some() {
            let host = mv
                .merge_with
                .and_then(|k| self.lv.intervals(mv.to).get(k).copied());
            match (mv.merge_with, host) {
                // Both hold the copied value: one interval from the first
                // write to the last read of either.
                (Some(k), Some(h)) => self.lv.set(
                    mv.to,
                    k,
                    Interval {
                        begin: h.begin.min(moved.begin),
                        end: h.end.max(moved.end),
                        same_value: true,
                        live_in: h.live_in && h.begin <= moved.begin,
                    },
                ),
                _ => self.lv.insert(mv.to, moved),
            }
        }
        self.targets.insert(mv.to);
        fixup
    }

    /// A new `tensorview` placed before the instruction at `pos`.
    fn detached_view(
        &mut self,
        f: &mut Function,
        pos: usize,
        src: Value,
        ty: Type,
        offs: Vec<i64>,
    ) -> Value {
        let name = f.fresh_name(&format!("{}.view", f.value_name(src)));
        let members = [m::TY.to(ty), m::OFFSETS.to(offs)];
        let v = f.push_inst(InstData::new(name, Opcode::TensorView, &[src], &members));
        self.pending.entry(pos).or_default().push(v);
        Value::Inst(v)
    }

    /// Like `detached_view`, but first among the instructions before `pos`.
    fn detached_view_front(
        &mut self,
        f: &mut Function,
        pos: usize,
        src: Value,
        ty: Type,
        offs: Vec<i64>,
    ) -> Value {
        let v = self.detached_view(f, pos, src, ty, offs);
        if let (Some(list), Value::Inst(i)) = (self.pending.get_mut(&pos), v) {
            list.retain(|&x| x != i);
            list.insert(0, i);
        }
        v
    }

    /// Puts the pending instructions into the program order, in O(1) each.
    fn commit_layout(&mut self, f: &mut Function) {
        for (&pos, list) in &self.pending {
            for &id in list {
                f.layout.insert_before(id, self.order[pos]);
            }
        }
    }
}

enum PairOutcome {
    Shared,
    AlreadyShared,
    Rejected,
}

fn reject_with(cx: &mut PassContext, head: &str, why: String) -> PairOutcome {
    cx.debug(|| format!("{head}: rejected: {why}"));
    PairOutcome::Rejected
}

/// Rejects a move that would leave the same memory in two operands of one
/// instruction when they may not alias (only `@in` pairs, or an in-place
/// pair at the same offset, may).
fn check_aliasing(f: &Function, id: InstId, mv: &Move, rewrites: &[Rewrite]) -> Result<(), String> {
    let inst = f.inst(id);
    let info = inst.opcode.info();
    // (operand, kind, offset, size) of every operand in `mv.to` afterwards.
    let mut ops = Vec::new();
    for (k, op) in inst.operands.iter().enumerate() {
        let size = f.value_type(op.value).map_or(0, |t| t.size());
        if let Some(r) = rewrites.iter().find(|r| r.inst == id && r.operand == k) {
            ops.push((k, op.kind, r.offset, size));
        } else {
            let (o, offset) = f.origin(op.value);
            if o == mv.to {
                ops.push((k, op.kind, offset, size));
            }
        }
    }
    for (x, &(i, ki, oi, si)) in ops.iter().enumerate() {
        for &(j, kj, oj, sj) in &ops[x + 1..] {
            let disjoint = oi + si <= oj || oj + sj <= oi;
            let reads = ki == OperandKind::In && kj == OperandKind::In;
            let inplace = info.is_inplace_pair(i, j) && oi == oj && si == sj;
            if !(disjoint || reads || inplace) {
                return Err(format!(
                    "{} %{} would use it as both {} and {}",
                    info.name,
                    inst.name,
                    inst.operand_name(i).unwrap_or("?"),
                    inst.operand_name(j).unwrap_or("?")
                ));
            }
        }
    }
    Ok(())
}

/// The type of a buffer origin: a weight's or an alloc's.
fn buffer_type(f: &Function, v: Value) -> Option<&Type> {
    match v {
        Value::Weight(_) => f.value_type(v),
        Value::Inst(i) if f.inst(i).opcode == Opcode::AllocActivation => f.value_type(v),
        Value::Inst(_) => None,
    }
}

fn is_const_weight(f: &Function, v: Value) -> bool {
    matches!(v, Value::Weight(w) if f.weight(w).mutability == Mutability::Const)
}

/// Instructions that are neither reads nor writes.
fn is_memory_op(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::AllocActivation | Opcode::DeallocActivation | Opcode::TensorView
    )
}

/// The row-major indices of linear element `offset` in a tensor of `dims`.
fn unravel(mut offset: u64, dims: &[u64]) -> Vec<i64> {
    let mut out = vec![0i64; dims.len()];
    for k in (0..dims.len()).rev() {
        let d = dims[k].max(1);
        out[k] = (offset % d) as i64;
        offset /= d;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unravels_row_major() {
        assert_eq!(unravel(0, &[2, 3]), vec![0, 0]);
        assert_eq!(unravel(5, &[2, 3]), vec![1, 2]);
        assert_eq!(unravel(7, &[2, 2, 2]), vec![1, 1, 1]);
    }
}

/// End to end: on every input of the lit suite the pass's output verifies
/// and prints to a fixed point.
#[cfg(test)]
mod suite {
    use crate::pass::{Pass, PassContext, Stats};
    use glow_ir::parser::parse;
    use glow_ir::printer::{print_module, PrintOptions};

    #[test]
    fn outputs_verify_and_round_trip() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../test/passes");
        let mut files = Vec::new();
        for dir in ["share-buffers", "pipeline"] {
            if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
                files.extend(rd.flatten().map(|e| e.path()));
            }
        }
        files.sort();
        assert!(!files.is_empty());
        for path in files {
            let text = std::fs::read(&path).expect("test file reads");
            let Ok(mut m) = parse(&text) else { continue };
            for f in &mut m.functions {
                if !glow_ir::verifier::verify(f).is_empty() {
                    continue;
                }
                let mut stats = Stats::default();
                let mut cx = PassContext::for_pass(&super::INFO, &mut stats, None);
                let _ = super::ShareBuffers.run(f, &mut cx);
                let errors = glow_ir::verifier::verify(f);
                assert!(errors.is_empty(), "{}: {:?}", path.display(), errors);
            }
            let once = print_module(&m, PrintOptions::default());
            let again = parse(once.as_bytes()).expect("output parses");
            assert_eq!(once, print_module(&again, PrintOptions::default()));
        }
    }
}
