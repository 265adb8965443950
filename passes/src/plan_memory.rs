//! `plan-memory`: places every activation in one arena. Each
//! `allocactivation` gets an `Offset` (bytes into the arena) and the
//! function records the arena size (`function f { Arena: N }`), so that two
//! buffers whose lifetimes (alloc ..= dealloc) overlap never share a byte.
//! Run it last: any later pass that moves allocs or deallocs would
//! invalidate the plan (the verifier would then reject it).

use crate::analysis::memory::{lifetimes, planner_buffers};
use crate::pass::{Pass, PassContext, PassInfo, PassOption, PassOptions};
use crate::planner::{self, PlanOptions};
use glow_ir::function::ArenaPlan;
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function};

pub static INFO: PassInfo = PassInfo {
    name: "plan-memory",
    summary: "Give every activation an arena Offset and record the arena size (best of greedy, max-live-first and order search)",
    options: &[
        PassOption {
            name: "align",
            help: "Alignment of offsets and sizes in bytes: a power of two, at least the largest element (default 64)",
        },
        PassOption {
            name: "budget",
            help: "Moves the order search may try (default 4000)",
        },
    ],
    stats: &[
        ("buffers-planned", "Number of activations given an offset"),
        ("arena-bytes", "Bytes of the planned arenas"),
        ("lower-bound-bytes", "Max-live lower bound of those arenas"),
        ("functions-at-bound", "Number of functions planned at the lower bound"),
    ],
    counters: &[],
    create: |o: &PassOptions| {
        let align = o.get_u64("align", glow_ir::ALIGN)?;
        if !align.is_power_of_two() {
            return Err(format!("option `align` must be a power of two, not {align}"));
        }
        let budget = o.get_u64("budget", PlanOptions::default().search_budget as u64)?;
        Ok(Box::new(PlanMemory {
            opts: PlanOptions {
                align,
                search_budget: u32::try_from(budget).unwrap_or(u32::MAX),
            },
        }))
    },
};

struct PlanMemory {
    opts: PlanOptions,
}

impl Pass for PlanMemory {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let lives = lifetimes(f);
        // An offset that is a multiple of the alignment must align every element.
        for l in &lives {
            let inst = f.inst(l.alloc);
            let elem = inst.get(m::TY).map_or(1, |t| t.elem.bytes());
            if elem > self.opts.align {
                let d = Diagnostic::error(format!(
                    "function `{}`: the arena alignment {} is smaller than the {elem}-byte \
                     elements of `%{}`",
                    f.name, self.opts.align, inst.name
                ));
                return Err(vec![match f.spans.inst(l.alloc.index()) {
                    Some(s) => d.at(s.head),
                    None => d,
                }]);
            }
        }
        let bufs = planner_buffers(f, &lives);
        let plan = planner::try_plan(&bufs, &self.opts).map_err(|msg| {
            let d = Diagnostic::error(format!("function `{}`: {msg}", f.name));
            vec![match f.spans.function {
                Some(s) => d.at(s),
                None => d,
            }]
        })?;
        if plan.arena > i64::MAX as u64 {
            return Err(vec![Diagnostic::error(format!(
                "function `{}`: the activation arena ({} bytes) does not fit a 64-bit offset",
                f.name, plan.arena
            ))]);
        }
        let mut changed = false;
        for (l, &off) in lives.iter().zip(&plan.offsets) {
            let inst = f.inst_mut(l.alloc);
            let v = off as i64;
            if inst.get(m::OFFSET) != Some(v) {
                inst.set(m::OFFSET, v);
                changed = true;
            }
        }
        let memory = Some(ArenaPlan {
            size: plan.arena,
            align: self.opts.align,
        });
        changed |= f.memory != memory;
        f.memory = memory;
        cx.bump("buffers-planned", bufs.len() as u64);
        cx.bump("arena-bytes", plan.arena);
        cx.bump("lower-bound-bytes", plan.lower_bound);
        cx.bump(
            "functions-at-bound",
            u64::from(plan.arena == plan.lower_bound),
        );
        cx.debug(|| {
            format!(
                "function {}: {} buffers, lower bound {} B, arena {} B ({:.4}x) by {}",
                f.name,
                bufs.len(),
                plan.lower_bound,
                plan.arena,
                plan.ratio(),
                plan.algorithm.name()
            )
        });
        Ok(changed)
    }
}
