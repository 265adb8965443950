//! `dse` (Glow's `eliminateDeadStores`): dead store elimination in one
//! bottom-up sweep over the single block.
//!
//! For every buffer origin (weights and allocs, looking through tensorviews)
//! the sweep remembers whether the value currently held is read later. An
//! instruction is removed when it writes at least one operand and *every*
//! operand it writes (`@out` or `@inout`) holds a value nobody reads: it is
//! overwritten by a later full write first, or the buffer is deallocated (or
//! the function ends) first. Rules:
//!
//! - Weights are observable: each weight counts as read at the function's
//!   end, so the last write into a weight is always kept.
//! - Only a full write kills: a write through a view smaller than its origin
//!   (a partial write) neither hides earlier writes nor starts a new value.
//!   The exception is a run of `inserttensor`s into the buffer itself whose
//!   windows are disjoint and together cover it, with no read of the buffer
//!   in between (a concatenation's inserts after its zero `splat`): the run
//!   kills like a full write. An insert keeps the rest of its destination,
//!   so it reads only what the run leaves uncovered, which here is nothing.
//! - A removed instruction's reads do not count, so a chain of dead
//!   computations disappears in one run.
//! - Instructions that write nothing (`debugprint`) are never removed;
//!   `allocactivation`, `deallocactivation` and `tensorview` are skipped.

use crate::edit::{dense, dense_len, elems, erase_marked, show, Origins};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::function::{insert_window, windows_cover};
use glow_ir::{Diagnostic, Function, InstId, Opcode, OperandKind};

pub static INFO: PassInfo = PassInfo {
    name: "dse",
    summary: "Remove instructions whose every written buffer is overwritten or dies unread",
    options: &[],
    stats: &[("instructions-removed", "Number of dead stores removed")],
    counters: &[("dse", "Removing one dead store")],
    create: |_: &PassOptions| Ok(Box::new(Dse)),
};

struct Dse;

/// Who reads the value a buffer holds at the current point of the sweep.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reader {
    /// Nobody: the value is dead.
    None,
    /// The function's end (weights are observable).
    End,
    Inst(InstId),
}

#[derive(Clone, Copy)]
struct State {
    reader: Reader,
    /// The next full write, which killed the value (for debug output).
    killer: Option<InstId>,
}

impl Pass for Dse {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let origins = Origins::compute(f);
        let mut state = vec![
            State {
                reader: Reader::None,
                killer: None
            };
            dense_len(f)
        ];
        for w in f.weight_ids() {
            state[w.index()].reader = Reader::End;
        }
        // Per origin, the windows of the inserts that follow with no read between.
        let mut cover: Vec<Vec<Vec<(u64, u64)>>> = vec![Vec::new(); dense_len(f)];
        let mut dead = vec![false; f.insts.len()];
        let mut removed = 0u64;
        for id in f.layout.iter().rev() {
            let inst = f.inst(id);
            if matches!(
                inst.opcode,
                Opcode::AllocActivation | Opcode::DeallocActivation | Opcode::TensorView
            ) {
                continue;
            }
            let (mut mutated, mut unread) = (0, 0);
            let mut why = Vec::new();
            for op in &inst.operands {
                if !op.kind.writes() {
                    continue;
                }
                let origin = origins.origin(op.value);
                let st = &mut state[dense(f, origin)];
                mutated += 1;
                match st.reader {
                    Reader::None => {
                        unread += 1;
                        if cx.debugging() {
                            why.push(match st.killer {
                                Some(k) => format!(
                                    "{} is overwritten by %{} before any read",
                                    show(f, origin),
                                    f.inst(k).name
                                ),
                                None => format!("{} is never read afterwards", show(f, origin)),
                            });
                        }
                    }
                    Reader::End if cx.debugging() => why.push(format!(
                        "{} is a weight and this is its last write (observable)",
                        show(f, origin)
                    )),
                    Reader::Inst(r) if cx.debugging() => why.push(format!(
                        "{} is read by %{}",
                        show(f, origin),
                        f.inst(r).name
                    )),
                    _ => {}
                }
                // Only a full write starts a new value, or a run of inserts
                // that covers the buffer.
                let slot = &mut cover[dense(f, origin)];
                if let Some(w) = insert_window(f, id).filter(|_| op.value == origin) {
                    slot.push(w);
                    let dims = f.value_type(origin).map(|t| t.dims.as_slice());
                    if dims.is_some_and(|d| windows_cover(d, slot)) {
                        st.reader = Reader::None;
                        st.killer = Some(id);
                        slot.clear();
                    }
                } else if elems(f, op.value) >= elems(f, origin) {
                    st.reader = Reader::None;
                    st.killer = Some(id);
                    slot.clear();
                }
            }
            if mutated > 0 && mutated == unread && cx.should_execute("dse") {
                dead[id.index()] = true;
                removed += 1;
                cx.debug(|| format!("removing %{}: {}", inst.name, why.join("; ")));
                continue;
            }
            if mutated > 0 {
                cx.debug(|| format!("keeping %{}: {}", inst.name, why.join("; ")));
            }
            let insert = insert_window(f, id).is_some();
            for (i, op) in inst.operands.iter().enumerate() {
                let origin = origins.origin(op.value);
                // An insert's own destination is a partial write, read only
                // where the run leaves it uncovered: the later reader stays.
                if insert && i == 0 && op.value == origin {
                    continue;
                }
                if op.kind != OperandKind::Out {
                    state[dense(f, origin)].reader = Reader::Inst(id);
                    cover[dense(f, origin)].clear();
                }
            }
        }
        erase_marked(f, &dead);
        cx.bump("instructions-removed", removed);
        Ok(removed > 0)
    }
}
