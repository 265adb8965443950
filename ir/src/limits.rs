//! Resource limits shared by the tools that allocate tensors: glow-run
//! (both engines), `glow-opt --emit=c` and glow-import. Every size counts
//! bytes with checked arithmetic and is checked before anything is
//! allocated, so a huge type is an error naming the tensor, never an abort.

use crate::types::Type;

/// The largest tensor, in bytes (2 GiB).
pub const MAX_TENSOR_BYTES: u64 = 1 << 31;

/// The largest total of a function's memory regions (constant weights,
/// mutable weights and the activation arena), in bytes (4 GiB).
pub const MAX_TOTAL_BYTES: u64 = 1 << 32;

/// The byte size of `ty`, or `None` when it does not fit in a `u64`.
pub fn type_bytes(ty: &Type) -> Option<u64> {
    ty.dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))?
        .checked_mul(ty.elem.bytes())
}

/// The byte size of tensor `what` of type `ty` when it is at most
/// `MAX_TENSOR_BYTES`, else the message saying so.
pub fn check_tensor(what: &str, ty: &Type) -> Result<u64, String> {
    match type_bytes(ty) {
        Some(n) if n <= MAX_TENSOR_BYTES => Ok(n),
        Some(n) => Err(format!(
            "{what} of type `{ty}` has {n} bytes, more than the limit of {MAX_TENSOR_BYTES} bytes per tensor"
        )),
        None => Err(format!(
            "{what} of type `{ty}` has more than 2^64 bytes, more than the limit of {MAX_TENSOR_BYTES} bytes per tensor"
        )),
    }
}

/// The message when a function's regions need `total` bytes (`None`: more
/// than 2^64) past `MAX_TOTAL_BYTES`.
pub fn check_total(function: &str, total: Option<u64>) -> Result<u64, String> {
    match total {
        Some(n) if n <= MAX_TOTAL_BYTES => Ok(n),
        Some(n) => Err(format!(
            "function `{function}` needs {n} bytes of memory, more than the limit of {MAX_TOTAL_BYTES} bytes"
        )),
        None => Err(format!(
            "function `{function}` needs more than 2^64 bytes of memory, more than the limit of {MAX_TOTAL_BYTES} bytes"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ElemKind;

    #[test]
    fn counts_bytes_not_elements() {
        let t = Type::new(ElemKind::Float64, &[(1 << 28) + 1]);
        assert!(check_tensor("weight `%x`", &t)
            .unwrap_err()
            .contains("2147483656 bytes"));
        let t = Type::new(ElemKind::Float64, &[1 << 28]);
        assert_eq!(check_tensor("weight `%x`", &t), Ok(1 << 31));
        let t = Type::new(ElemKind::Float, &[1 << 32, 1 << 31]);
        assert!(check_tensor("w", &t)
            .unwrap_err()
            .contains("more than 2^64"));
    }

    #[test]
    fn total_limit() {
        assert_eq!(check_total("f", Some(MAX_TOTAL_BYTES)), Ok(MAX_TOTAL_BYTES));
        assert!(check_total("f", Some(MAX_TOTAL_BYTES + 1)).is_err());
        assert!(check_total("f", None).unwrap_err().contains("2^64"));
    }
}
