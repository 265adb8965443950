//! Placement of the memory-management instructions, shared by
//! `dealloc-sinking`, `alloc-sinking` and `share-buffers` (which calls them
//! to repair the IR after it extends or shrinks lifetimes).
//!
//! - [`place_deallocs`]: every `deallocactivation` goes right after the last
//!   instruction that uses its buffer, directly or through a tensorview (a
//!   view's creation counts as a use); a buffer with no users gets its
//!   dealloc right after its alloc. Deallocs move up (hoist) or down (sink).
//! - [`place_before_first_use`]: every selected `allocactivation` and/or
//!   `tensorview` goes right before the first instruction that uses it (a
//!   view of an alloc is a use of it; the dealloc is a use too). Nothing
//!   else moves, so this only ever sinks in a valid function.
//! - [`repair_buffers`]: only for the given buffers, hoists an alloc above
//!   a use that now precedes it and sinks a dealloc below a use that now
//!   follows it (what `share-buffers` needs after moving intervals).
//!
//! Both are linear: one sweep computes the targets, one sweep rebuilds the
//! program order. Several instructions placed at the same point keep their
//! original relative order, so the result is deterministic and running a
//! placement twice changes nothing the second time.

use crate::edit::Origins;
use glow_ir::{Function, InstId, Opcode, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Which way an instruction moved, counting only the instructions that
/// stay fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    /// Moved earlier (hoisted).
    Up,
    /// Moved later (sunk).
    Down,
    /// Same place relative to the fixed instructions.
    Stay,
}

/// One placed instruction and the fixed instruction it was placed against
/// (after it for deallocs, before it for allocs and views).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    pub inst: InstId,
    pub anchor: InstId,
    pub dir: Dir,
}

/// What a placement did.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// Every placed instruction in original program order.
    pub moves: Vec<Move>,
    /// Whether the program order changed.
    pub changed: bool,
}

impl Placement {
    /// How many instructions moved up or down.
    pub fn moved(&self) -> usize {
        self.moves.iter().filter(|m| m.dir != Dir::Stay).count()
    }
}

/// Moves every dealloc to right after the last user of its buffer (see the
/// module docs). A dealloc whose operand is not an alloc stays where it is.
pub fn place_deallocs(f: &mut Function) -> Placement {
    let origins = Origins::compute(f);
    let order = f.layout.to_vec();
    let n = order.len();
    // Position of the last non-dealloc user of each alloc (by instruction id).
    let mut last_user: Vec<Option<usize>> = vec![None; f.insts.len()];
    for (p, id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        match inst.opcode {
            Opcode::DeallocActivation => {}
            Opcode::AllocActivation => last_user[id.index()] = Some(p),
            _ => {
                for op in &inst.operands {
                    if let Value::Inst(a) = origins.origin(op.value) {
                        if f.inst(a).opcode == Opcode::AllocActivation {
                            last_user[a.index()] = Some(p);
                        }
                    }
                }
            }
        }
    }
    // Attach each movable dealloc after its anchor, in original order.
    let mut after: Vec<Vec<InstId>> = vec![Vec::new(); n];
    let mut movable = vec![false; f.insts.len()];
    let mut placed = Vec::new();
    for (p, id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        if inst.opcode != Opcode::DeallocActivation {
            continue;
        }
        let Some(Value::Inst(a)) = inst.operands.first().map(|o| origins.origin(o.value)) else {
            continue;
        };
        if let Some(q) = last_user.get(a.index()).copied().flatten() {
            after[q].push(id);
            movable[id.index()] = true;
            placed.push((id, p, q));
        }
    }
    // fixed_before[p] = number of fixed instructions strictly before p.
    let fixed_before = prefix_fixed(f, &movable);
    let mut moves = Vec::with_capacity(placed.len());
    for (id, old, q) in placed {
        let dir = direction(fixed_before[old], fixed_before[q] + 1);
        moves.push(Move {
            inst: id,
            anchor: order[q],
            dir,
        });
    }
    let mut layout = Vec::with_capacity(n);
    for (p, id) in f.layout.iter().enumerate() {
        if !movable[id.index()] {
            layout.push(id);
        }
        layout.extend(after[p].iter().copied());
    }
    let changed = layout != order;
    f.layout.set_order(layout);
    Placement { moves, changed }
}

/// Moves every alloc (when `allocs`) and every tensorview (when `views`) to
/// right before its first user (see the module docs). An instruction with no
/// users stays where it is.
pub fn place_before_first_use(f: &mut Function, allocs: bool, views: bool) -> Placement {
    let order = f.layout.to_vec();
    let n = order.len();
    let mut placed: Vec<bool> = f
        .insts
        .iter()
        .map(|i| match i.opcode {
            Opcode::AllocActivation => allocs,
            Opcode::TensorView => views,
            _ => false,
        })
        .collect();
    // Bottom-up: an instruction's anchor is the earliest position among its
    // users, where a placed user counts at its own anchor.
    let mut anchor: Vec<Option<usize>> = vec![None; f.insts.len()];
    for p in (0..n).rev() {
        let id = order[p];
        let here = if placed[id.index()] {
            if anchor[id.index()].is_none() {
                // No users: it stays, and its sources see it as fixed here.
                placed[id.index()] = false;
                Some(p)
            } else {
                anchor[id.index()]
            }
        } else {
            Some(p)
        };
        for op in &f.inst(id).operands {
            if let Value::Inst(x) = op.value {
                if placed.get(x.index()).copied().unwrap_or(false) {
                    let a = &mut anchor[x.index()];
                    *a = match (*a, here) {
                        (Some(a), Some(h)) => Some(a.min(h)),
                        (a, h) => a.or(h),
                    };
                }
            }
        }
    }
    let fixed_before = prefix_fixed(f, &placed);
    let mut before: Vec<Vec<InstId>> = vec![Vec::new(); n];
    let mut moves = Vec::new();
    for (p, id) in f.layout.iter().enumerate() {
        if !placed[id.index()] {
            continue;
        }
        let Some(q) = anchor[id.index()] else {
            continue;
        };
        before[q].push(id);
        moves.push(Move {
            inst: id,
            anchor: order[q],
            dir: direction(fixed_before[p], fixed_before[q]),
        });
    }
    let mut layout = Vec::with_capacity(n);
    for (p, id) in f.layout.iter().enumerate() {
        if placed[id.index()] && anchor[id.index()].is_some() {
            continue;
        }
        layout.extend(before[p].iter().copied());
        layout.push(id);
    }
    let changed = layout != order;
    f.layout.set_order(layout);
    Placement { moves, changed }
}

/// `out[p]` = how many instructions before position `p` are not `moving`.
fn prefix_fixed(f: &Function, moving: &[bool]) -> Vec<usize> {
    let mut out = Vec::with_capacity(f.layout.len() + 1);
    let mut count = 0;
    for id in &f.layout {
        out.push(count);
        if !moving.get(id.index()).copied().unwrap_or(false) {
            count += 1;
        }
    }
    out.push(count);
    out
}

fn direction(old_fixed_before: usize, new_fixed_before: usize) -> Dir {
    use std::cmp::Ordering::*;
    match new_fixed_before.cmp(&old_fixed_before) {
        Less => Dir::Up,
        Greater => Dir::Down,
        Equal => Dir::Stay,
    }
}

/// Moves the alloc of every buffer in `targets` right before its first use
/// when a use now precedes it, and its dealloc right after its last use
/// (through views) when a use now follows it. Nothing else moves. Returns
/// how many allocs were hoisted and how many deallocs sunk. (share-buffers
/// repairs only the buffers it gave new uses.)
pub fn repair_buffers(f: &mut Function, targets: &BTreeSet<Value>) -> (u64, u64) {
    let (mut hoisted, mut sunk) = (0, 0);
    // first/last user position and the dealloc of each target alloc.
    let mut first: BTreeMap<Value, usize> = BTreeMap::new();
    let mut last: BTreeMap<Value, usize> = BTreeMap::new();
    let mut dealloc: BTreeMap<Value, usize> = BTreeMap::new();
    let mut alloc: BTreeMap<Value, usize> = BTreeMap::new();
    for (pos, id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        if targets.contains(&Value::Inst(id)) {
            alloc.entry(Value::Inst(id)).or_insert(pos);
        }
        for op in &inst.operands {
            let (o, _) = f.origin(op.value);
            if !targets.contains(&o) {
                continue;
            }
            if inst.opcode == Opcode::DeallocActivation {
                dealloc.entry(o).or_insert(pos);
                continue;
            }
            if op.value == o {
                first.entry(o).or_insert(pos);
            }
            last.insert(o, pos);
        }
    }
    let mut before: BTreeMap<usize, Vec<InstId>> = BTreeMap::new();
    let mut after: BTreeMap<usize, Vec<InstId>> = BTreeMap::new();
    let mut moved: BTreeSet<usize> = BTreeSet::new();
    let order = f.layout.to_vec();
    for (&buf, &apos) in &alloc {
        if let Some(&fu) = first.get(&buf).filter(|&&fu| fu < apos) {
            before.entry(fu).or_default().push(order[apos]);
            moved.insert(apos);
            hoisted += 1;
        }
        if let (Some(&dpos), Some(&lu)) = (dealloc.get(&buf), last.get(&buf)) {
            if lu > dpos {
                after.entry(lu).or_default().push(order[dpos]);
                moved.insert(dpos);
                sunk += 1;
            }
        }
    }
    if moved.is_empty() {
        return (0, 0);
    }
    let mut layout = Vec::with_capacity(order.len());
    for (pos, &id) in order.iter().enumerate() {
        if let Some(list) = before.get(&pos) {
            layout.extend_from_slice(list);
        }
        if !moved.contains(&pos) {
            layout.push(id);
        }
        if let Some(list) = after.get(&pos) {
            layout.extend_from_slice(list);
        }
    }
    f.layout.set_order(layout);
    (hoisted, sunk)
}
