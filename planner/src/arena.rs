//! From a function to the planner and back: each `allocactivation`'s
//! lifetime (alloc ..= dealloc position, or the last position), the
//! planner's buffers, and `arena_layout`, the one place that decides where a
//! function's activations go.

use crate::{Buffer, PlanOptions};
use glow_ir::function::ArenaPlan;
use glow_ir::member as m;
use glow_ir::{Function, InstId, Opcode, Value};

/// An activation's lifetime: alloc and dealloc positions (closed; the
/// last position when it is never deallocated).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lifetime {
    pub alloc: InstId,
    pub first: usize,
    pub last: usize,
}

/// Lifetimes of every `allocactivation`, in program order.
pub fn lifetimes(f: &Function) -> Vec<Lifetime> {
    let last_pos = f.layout.len().saturating_sub(1);
    let mut out: Vec<Lifetime> = Vec::new();
    // Per alloc id: its entry in `out` until deallocated (dense: linear
    // however many buffers are live).
    let mut open: Vec<Option<usize>> = vec![None; f.insts.len()];
    for (pos, id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        match inst.opcode {
            Opcode::AllocActivation => {
                open[id.index()] = Some(out.len());
                out.push(Lifetime {
                    alloc: id,
                    first: pos,
                    last: last_pos,
                });
            }
            Opcode::DeallocActivation => {
                if let Some(Value::Inst(a)) = inst.operands.first().map(|o| o.value) {
                    if let Some(b) = open.get_mut(a.index()).and_then(Option::take) {
                        out[b].last = pos;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The planner's input for these lifetimes.
pub fn planner_buffers(f: &Function, lives: &[Lifetime]) -> Vec<Buffer> {
    lives
        .iter()
        .map(|l| {
            let bytes = f.inst(l.alloc).get(m::TY).map_or(0, |t| t.bytes());
            let clamp = |p: usize| u32::try_from(p).unwrap_or(u32::MAX);
            Buffer::new(bytes, clamp(l.first), clamp(l.last))
        })
        .collect()
}

/// Where a function's activations go: the function's own plan when
/// `plan-memory` ran, otherwise the planner's. The one place that decides
/// (the backend and the memory report both use it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArenaLayout {
    /// Every `allocactivation`, in program order.
    pub lives: Vec<Lifetime>,
    /// The planner's view of `lives` (same order).
    pub bufs: Vec<Buffer>,
    /// Byte offset of each buffer (same order).
    pub offsets: Vec<u64>,
    pub align: u64,
    pub arena: u64,
    /// Max-live bound of `bufs` with aligned sizes.
    pub lower_bound: u64,
    /// Whether offsets and arena come from the function.
    pub planned: bool,
}

/// The arena layout of `f`; `align` applies when `f` is not planned (a
/// planned function uses its own).
pub fn arena_layout(f: &Function, align: u64) -> ArenaLayout {
    let lives = lifetimes(f);
    let bufs = planner_buffers(f, &lives);
    let align = f.memory.map_or(align, |m: ArenaPlan| m.align);
    let planned_offsets: Option<Vec<u64>> = f.memory.and_then(|_| {
        lives
            .iter()
            .map(|l| u64::try_from(f.inst(l.alloc).get(m::OFFSET)?).ok())
            .collect()
    });
    let (offsets, arena, planned) = match (planned_offsets, f.memory) {
        (Some(o), Some(m)) => (o, m.size, true),
        _ => {
            let p = crate::plan(
                &bufs,
                &PlanOptions {
                    align,
                    ..PlanOptions::default()
                },
            );
            (p.offsets, p.arena, false)
        }
    };
    ArenaLayout {
        lower_bound: crate::lower_bound(&bufs, align),
        lives,
        bufs,
        offsets,
        align,
        arena,
        planned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifetimes_end_at_the_dealloc_or_the_last_position() {
        let src = "function f\ndeclare {\n  %o = WeightVar float<4> mutable\n}\n\ncode {\n  0 %a = allocactivation { Ty: float<4> }\n  1 %b = allocactivation { Ty: float<16> }\n  2 %s = splat @out %a { Value: 1.0 }\n  3 %t = splat @out %b { Value: 2.0 }\n  4 %d = deallocactivation @out %a\n  5 %c = copy @out %o, @in %b\n}\n";
        let m = glow_ir::parser::parse(src.as_bytes()).expect("parses");
        let f = &m.functions[0];
        let lives = lifetimes(f);
        let spans: Vec<(usize, usize)> = lives.iter().map(|l| (l.first, l.last)).collect();
        assert_eq!(spans, [(0, 4), (1, 5)]);
        let a = arena_layout(f, glow_ir::ALIGN);
        assert!(!a.planned);
        assert_eq!(a.bufs[1].size, 64);
        assert_eq!(a.lower_bound, 128);
        assert_eq!(a.arena, 128);
    }
}
