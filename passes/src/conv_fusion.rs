//! The matching that the convolution fusions (`fuse-activations`,
//! `fuse-residual`, `fold-batchnorm`) share: a convolution with nothing
//! fused yet, the one instruction that reads its allocated Dest, and where
//! that instruction's output may take the Dest's place.

use crate::edit::{Origins, Uses};
use glow_ir::member as m;
use glow_ir::{Function, InstId, Opcode, Value};

/// A `convolution` with `FusedActivation: NONE`.
pub(crate) fn is_unfused_conv(f: &Function, c: InstId) -> bool {
    let conv = f.inst(c);
    conv.opcode == Opcode::Convolution && conv.get(m::FUSED_ACTIVATION) == Some("NONE")
}

/// The convolution `c`'s Dest `x`, an `allocactivation` read by one other
/// instruction (at its first input, accepted by `accept`) and deallocated.
pub(crate) struct AllocatedDest {
    pub x: InstId,
    pub consumer: InstId,
    pub deallocs: Vec<InstId>,
}

/// `c`'s allocated Dest and its one consumer, when `c` is an unfused
/// convolution whose Dest has no other user.
pub(crate) fn allocated_dest(
    f: &Function,
    uses: &Uses,
    c: InstId,
    accept: impl Fn(InstId) -> bool,
) -> Option<AllocatedDest> {
    if !is_unfused_conv(f, c) {
        return None;
    }
    let Value::Inst(x) = f.inst(c).operands[0].value else {
        return None;
    };
    if f.inst(x).opcode != Opcode::AllocActivation {
        return None;
    }
    let mut consumer = None;
    let mut deallocs = Vec::new();
    let mut ok = true;
    for u in uses.users(f, Value::Inst(x)) {
        match f.inst(u.inst).opcode {
            _ if u.inst == c && u.operand == 0 => {}
            Opcode::DeallocActivation => deallocs.push(u.inst),
            _ if u.operand == 1 && consumer.is_none() && accept(u.inst) => consumer = Some(u.inst),
            _ => ok = false,
        }
    }
    Some(AllocatedDest {
        x,
        consumer: consumer.filter(|_| ok)?,
        deallocs,
    })
}

/// Whether `y` shares a buffer with what the convolution `c` reads (it
/// reads them while writing its Dest, so `y` cannot become the Dest).
pub(crate) fn aliases_inputs(f: &Function, origins: &Origins, c: InstId, y: Value) -> bool {
    let oy = origins.origin(y);
    f.inst(c).operands[1..]
        .iter()
        .any(|o| origins.origin(o.value) == oy)
}

/// Where `y`, the output of `consumer`, can be written by the convolution
/// `c` above it: `Some(None)` when it is defined above `c`, `Some(Some(alloc))`
/// when it is an alloc between the two that must move above `c`, else `None`.
pub(crate) fn dest_hoist(
    f: &Function,
    pos: &[usize],
    c: InstId,
    consumer: InstId,
    y: Value,
) -> Option<Option<InstId>> {
    let Value::Inst(yd) = y else {
        return Some(None);
    };
    if pos[yd.index()] <= pos[c.index()] {
        return Some(None);
    }
    if f.inst(yd).opcode != Opcode::AllocActivation || pos[yd.index()] > pos[consumer.index()] {
        return None;
    }
    Some(Some(yd))
}
