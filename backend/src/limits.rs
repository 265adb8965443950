//! The resource limits of both engines and of `--emit=c` (see
//! docs/backend.md, limits): every weight and activation at most
//! `MAX_TENSOR_BYTES`, the three regions together at most `MAX_TOTAL_BYTES`.
//! Checked before anything is allocated.

use crate::error::{inst_error, BackendError};
use crate::memory::MemoryLayout;
use glow_ir::limits::{check_tensor, check_total};
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, Opcode};

pub use glow_ir::limits::{MAX_TENSOR_BYTES, MAX_TOTAL_BYTES};

/// Every weight and `allocactivation` of `f` within the tensor limit; the
/// error names the tensor and points at its line.
pub fn check_tensors(f: &Function) -> Result<(), BackendError> {
    for (i, w) in f.weights.iter().enumerate() {
        if let Err(msg) = check_tensor(&format!("weight `%{}`", w.name), &w.ty) {
            let d = Diagnostic::error(msg);
            return Err(match (f.spans.weight(i), f.spans.function) {
                (Some(s), _) => d.at(s.line),
                (None, Some(s)) => d.at(s),
                (None, None) => d,
            });
        }
    }
    for id in f.inst_ids() {
        let inst = f.inst(id);
        if inst.opcode != Opcode::AllocActivation {
            continue;
        }
        if let Some(ty) = inst.get(m::TY) {
            check_tensor("the activation", ty).map_err(|msg| inst_error(f, id, msg))?;
        }
    }
    Ok(())
}

/// The regions of `layout` together within the total limit.
pub fn check_layout(f: &Function, layout: &MemoryLayout) -> Result<(), BackendError> {
    let total = layout
        .constant_size
        .checked_add(layout.mutable_size)
        .and_then(|n| n.checked_add(layout.activations_size));
    check_total(&f.name, total).map_err(|msg| {
        let d = Diagnostic::error(msg);
        match f.spans.function {
            Some(s) => d.at(s),
            None => d,
        }
    })?;
    Ok(())
}
