//! `alloc-sinking` (Glow's `sinkAllocas`, plus its `sinkTensorViews`):
//! every `allocactivation` moves down to right before the first instruction
//! that uses it, and (unless `views=false`) every `tensorview` moves down to
//! right before its first user, first, so a view created early does not pin
//! its alloc early. A view of an alloc counts as a use of the alloc, and so
//! does the dealloc: an alloc used only by its dealloc lands right before it.
//!
//! Only allocs and views move, and only down (sink) in a valid function: a
//! view always stays after its source and before its users. Several
//! instructions placed before the same user keep their original relative
//! order (deterministic, idempotent). An instruction with no users at all
//! stays where it is (`dead-alloc` erases it).
//! The work is done by [`crate::placement::place_before_first_use`].

use crate::pass::{Pass, PassContext, PassInfo, PassOption, PassOptions};
use crate::placement::{place_before_first_use, Dir};
use glow_ir::{Diagnostic, Function, Opcode};

pub static INFO: PassInfo = PassInfo {
    name: "alloc-sinking",
    summary: "Move each alloc (and tensorview) down to right before its first user",
    options: &[PassOption {
        name: "views",
        help: "also sink tensorviews to their first user (default true)",
    }],
    stats: &[
        ("allocs-sunk", "Number of allocs moved later"),
        ("views-sunk", "Number of tensorviews moved later"),
    ],
    counters: &[],
    create: |o: &PassOptions| {
        Ok(Box::new(AllocSinking {
            views: o.get_bool("views", true)?,
        }))
    },
};

struct AllocSinking {
    views: bool,
}

impl Pass for AllocSinking {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let placement = place_before_first_use(f, true, self.views);
        let (mut allocs, mut views) = (0, 0);
        for m in &placement.moves {
            let inst = f.inst(m.inst);
            let (x, a) = (&inst.name, &f.inst(m.anchor).name);
            if m.dir != Dir::Stay {
                if inst.opcode == Opcode::AllocActivation {
                    allocs += 1;
                } else {
                    views += 1;
                }
            }
            cx.debug(|| match m.dir {
                Dir::Down => format!("%{x}: first use is %{a}; sunk down to right before it"),
                Dir::Up => format!("%{x}: first use is %{a}; moved up to right before it"),
                Dir::Stay => format!("%{x}: already right before its first use %{a}"),
            });
        }
        cx.bump("allocs-sunk", allocs);
        cx.bump("views-sunk", views);
        Ok(placement.changed)
    }
}
