//! `dead-alloc` (Glow's `deleteDeadAllocs`): erase the memory instructions
//! nothing needs.
//!
//! 1. Every `tensorview` with no users is erased. Erasing a view removes a
//!    use of its source, so a chain of views that ends unused disappears
//!    whole (the sweep runs bottom-up, views being defined above their users).
//! 2. Every `allocactivation` whose only users are its deallocs is erased,
//!    together with those deallocs.
//!
//! It never erases an alloc that any other instruction (including a view
//! that is still used) names, never touches weights, and never moves
//! anything. Linear: one bottom-up sweep with use counts.

use crate::edit::erase_marked;
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::{Diagnostic, Function, Opcode, Value};

pub static INFO: PassInfo = PassInfo {
    name: "dead-alloc",
    summary: "Erase unused tensorviews and allocs used only by their dealloc (with the dealloc)",
    options: &[],
    stats: &[
        ("views-erased", "Number of unused tensorviews erased"),
        ("allocs-erased", "Number of dead allocs erased"),
        (
            "deallocs-erased",
            "Number of deallocs erased with their alloc",
        ),
    ],
    counters: &[("dead-alloc", "Erasing one unused tensorview or allocation")],
    create: |_: &PassOptions| Ok(Box::new(DeadAlloc)),
};

struct DeadAlloc;

impl Pass for DeadAlloc {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let n = f.insts.len();
        // Users per instruction id, split into deallocs and everything else.
        let mut others = vec![0usize; n];
        let mut deallocs = vec![0usize; n];
        for id in &f.layout {
            let inst = f.inst(id);
            let is_dealloc = inst.opcode == Opcode::DeallocActivation;
            for op in &inst.operands {
                if let Value::Inst(x) = op.value {
                    if is_dealloc {
                        deallocs[x.index()] += 1;
                    } else {
                        others[x.index()] += 1;
                    }
                }
            }
        }
        let mut dead = vec![false; n];
        let (mut views, mut allocs) = (0u64, 0u64);
        // Bottom-up, so erasing a view can free its source view above it.
        for id in f.layout.iter().rev() {
            let inst = f.inst(id);
            if inst.opcode != Opcode::TensorView
                || others[id.index()] + deallocs[id.index()] > 0
                || !cx.should_execute("dead-alloc")
            {
                continue;
            }
            dead[id.index()] = true;
            views += 1;
            if let Some(Value::Inst(src)) = inst.operands.first().map(|o| o.value) {
                others[src.index()] = others[src.index()].saturating_sub(1);
            }
            cx.debug(|| format!("erasing %{}: a tensorview with no users", inst.name));
        }
        for id in &f.layout {
            let inst = f.inst(id);
            match inst.opcode {
                Opcode::AllocActivation
                    if others[id.index()] == 0 && cx.should_execute("dead-alloc") =>
                {
                    dead[id.index()] = true;
                    allocs += 1;
                    let d = deallocs[id.index()];
                    cx.debug(|| {
                        format!(
                            "erasing %{}: no instruction uses it{}",
                            inst.name,
                            if d > 0 { " except its dealloc" } else { "" }
                        )
                    });
                }
                Opcode::AllocActivation => cx.debug(|| {
                    format!(
                        "keeping %{}: {} user(s) besides its dealloc",
                        inst.name,
                        others[id.index()]
                    )
                }),
                _ => {}
            }
        }
        // Deallocs of erased allocs go with them.
        let mut dead_deallocs = 0u64;
        for id in &f.layout {
            let inst = f.inst(id);
            if inst.opcode != Opcode::DeallocActivation {
                continue;
            }
            if let Some(Value::Inst(a)) = inst.operands.first().map(|o| o.value) {
                if dead[a.index()] && f.inst(a).opcode == Opcode::AllocActivation {
                    dead[id.index()] = true;
                    dead_deallocs += 1;
                }
            }
        }
        let erased = erase_marked(f, &dead);
        cx.bump("views-erased", views);
        cx.bump("allocs-erased", allocs);
        cx.bump("deallocs-erased", dead_deallocs);
        Ok(erased > 0)
    }
}
