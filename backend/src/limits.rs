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

/// A zero-filled buffer of `bytes`, or "cannot allocate 2.0 GiB for
/// {what}" when the allocator refuses: a size the input chose must not
/// abort the process.
pub fn zeroed(bytes: u64, what: impl FnOnce() -> String) -> Result<Vec<u8>, String> {
    let mut v = Vec::new();
    usize::try_from(bytes)
        .ok()
        .and_then(|n| v.try_reserve_exact(n).ok().map(|_| n))
        .map(|n| {
            v.resize(n, 0);
            v
        })
        .ok_or_else(|| format!("cannot allocate {} for {}", human_bytes(bytes), what()))
}

/// `2.0 GiB`, `512 bytes`: a size for a message.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let (mut v, mut unit) = (bytes as f64 / 1024.0, 0);
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod alloc_tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(2147483648), "2.0 GiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        let e = zeroed(u64::MAX, || "the test".into()).unwrap_err();
        assert!(
            e.starts_with("cannot allocate ") && e.ends_with(" for the test"),
            "{e}"
        );
        assert_eq!(zeroed(3, || unreachable!()).unwrap(), vec![0; 3]);
    }
}
