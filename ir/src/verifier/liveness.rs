//! Liveness rules, checked in one walk over the program order: a dealloc
//! names a live alloc, no buffer is used after its dealloc, every alloc is
//! deallocated, and nothing is read before it is written. Writes are tracked
//! per origin buffer (through tensorviews); weights count as written
//! (mutable ones are inputs, const ones have contents). A tensorview is
//! neither a read nor a write.

use super::{Buf, Checker, VerifyError};
use crate::function::{insert_window, windows_cover, InstId, Value};
use crate::fxhash::FxHashSet as HashSet;
use crate::opcode::Opcode;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum AllocState {
    #[default]
    NotSeen,
    Live,
    Dead(InstId),
}

/// The liveness state of the walk so far.
#[derive(Debug, Default)]
pub(super) struct Liveness {
    /// Per instruction table index.
    state: Vec<AllocState>,
    /// Origin buffers written so far.
    written: HashSet<Value>,
    /// Buffers already reported as read before written (reported once).
    reported: HashSet<Value>,
}

impl Liveness {
    pub(super) fn new(insts: usize) -> Liveness {
        Liveness {
            state: vec![AllocState::NotSeen; insts],
            ..Liveness::default()
        }
    }

    fn state(&self, v: Value) -> AllocState {
        match v {
            Value::Inst(i) => self.state.get(i.index()).copied().unwrap_or_default(),
            Value::Weight(_) => AllocState::NotSeen,
        }
    }

    /// Checks operand `k` of `i` against the state before `i`.
    pub(super) fn check_use(&mut self, c: &mut Checker, i: InstId, k: usize, b: &Buf) {
        let Some(origin) = b.origin else { return };
        let inst = c.f.inst(i);
        if inst.opcode == Opcode::DeallocActivation && k == 0 {
            if let AllocState::Dead(first) = self.state(origin) {
                c.errors.push(VerifyError::DoubleDealloc {
                    inst: i,
                    name: c.name(origin),
                    first,
                });
            }
            return;
        }
        if let AllocState::Dead(dealloc) = self.state(origin) {
            c.errors.push(VerifyError::UseAfterDealloc {
                inst: i,
                k,
                what: c.describe(b, origin),
                dealloc,
            });
            return;
        }
        let reads = inst.operands[k].kind.reads() && inst.opcode != Opcode::TensorView;
        if reads
            && matches!(origin, Value::Inst(_))
            && !self.written.contains(&origin)
            && !(k == 0 && covering_inserts(c, i, origin))
            && self.reported.insert(origin)
        {
            c.errors.push(VerifyError::UseBeforeWrite {
                inst: i,
                k,
                what: c.describe(b, origin),
            });
        }
    }

    /// Applies the effects of `i`: allocation, deallocation, writes.
    pub(super) fn commit(&mut self, c: &Checker, i: InstId, bufs: &[Option<Buf>]) {
        let inst = c.f.inst(i);
        match inst.opcode {
            Opcode::AllocActivation => self.state[i.index()] = AllocState::Live,
            Opcode::DeallocActivation => {
                if let Some(Some(Buf {
                    origin: Some(Value::Inst(a)),
                    ..
                })) = bufs.first()
                {
                    if self.state[a.index()] == AllocState::Live {
                        self.state[a.index()] = AllocState::Dead(i);
                    }
                }
            }
            _ => {
                for (op, b) in inst.operands.iter().zip(bufs) {
                    if let Some(Buf {
                        origin: Some(o), ..
                    }) = b
                    {
                        if op.kind.writes() {
                            self.written.insert(*o);
                        }
                    }
                }
            }
        }
    }

    /// Reports every alloc still live at the end, at its line.
    pub(super) fn finish(&self, c: &Checker, errors: &mut Vec<VerifyError>) {
        for (p, i) in c.f.layout.iter().enumerate() {
            let here = c.pos.get(i.index()).copied().flatten() == Some(p);
            if here && self.state[i.index()] == AllocState::Live {
                errors.push(VerifyError::NeverDeallocated {
                    alloc: i,
                    name: c.name(Value::Inst(i)),
                });
            }
        }
    }
}

/// Whether `i` starts a run of inserts into `origin` itself whose windows
/// cover it before any other instruction touches it: such inserts read
/// nothing of the unwritten buffer (a concatenation without its zero splat).
fn covering_inserts(c: &Checker, i: InstId, origin: Value) -> bool {
    let (Some(p), Some(ty)) = (
        c.pos.get(i.index()).copied().flatten(),
        c.f.value_type(origin),
    ) else {
        return false;
    };
    let mut windows = Vec::new();
    for id in c.f.layout.iter().skip(p) {
        let inst = c.f.inst(id);
        let into = inst.operands.first().is_some_and(|o| o.value == origin);
        if let Some(w) = insert_window(c.f, id).filter(|_| into) {
            windows.push(w);
            if windows_cover(&ty.dims, &windows) {
                return true;
            }
        } else if inst.opcode != Opcode::AllocActivation
            && inst
                .operands
                .iter()
                .any(|o| c.f.origin(o.value).0 == origin)
        {
            return false;
        }
    }
    false
}
