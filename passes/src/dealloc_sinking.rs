//! `dealloc-sinking` (Glow's `hoistDealloc`): every `deallocactivation`
//! moves to right after the last instruction that uses its buffer, directly
//! or through a tensorview (creating a view counts as a use). A buffer with
//! no users gets its dealloc right after its alloc.
//!
//! Deallocs move up (hoist, the usual case for IRGen output, which frees
//! everything at the end) or down (sink, after `share-buffers` extended a
//! lifetime). Several deallocs after the same instruction keep their
//! original relative order, so the pass is deterministic and idempotent.
//! Nothing but deallocs moves; nothing is created or erased.
//! The work is done by [`crate::placement::place_deallocs`].

use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use crate::placement::{place_deallocs, Dir};
use glow_ir::{Diagnostic, Function};

pub static INFO: PassInfo = PassInfo {
    name: "dealloc-sinking",
    summary: "Move each dealloc to right after the last use of its buffer (up or down)",
    options: &[],
    stats: &[
        ("deallocs-hoisted", "Number of deallocs moved earlier"),
        ("deallocs-sunk", "Number of deallocs moved later"),
    ],
    counters: &[],
    create: |_: &PassOptions| Ok(Box::new(DeallocSinking)),
};

struct DeallocSinking;

impl Pass for DeallocSinking {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let placement = place_deallocs(f);
        let (mut up, mut down) = (0, 0);
        for m in &placement.moves {
            let (d, a) = (&f.inst(m.inst).name, &f.inst(m.anchor).name);
            match m.dir {
                Dir::Up => up += 1,
                Dir::Down => down += 1,
                Dir::Stay => {}
            }
            cx.debug(|| match m.dir {
                Dir::Up => format!("%{d}: last use is %{a}; hoisted up to right after it"),
                Dir::Down => format!("%{d}: last use is %{a}; sunk down to right after it"),
                Dir::Stay => format!("%{d}: already right after its last use %{a}"),
            });
        }
        cx.bump("deallocs-hoisted", up);
        cx.bump("deallocs-sunk", down);
        Ok(placement.changed)
    }
}
