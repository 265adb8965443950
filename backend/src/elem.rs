//! Element kinds as both engines see them: C type names, little-endian
//! encoding of values, inline `Data:` contents as bytes, and the one
//! definition of quantization (round half to even, clamp) that the C
//! kernels reproduce.

use glow_ir::{ElemKind, Type, WeightInit};

/// The C type that stores one element of `kind` (`bool` is one byte 0/1,
/// 16-bit floats are stored as their bits).
pub fn ctype(kind: ElemKind) -> &'static str {
    match kind {
        ElemKind::Float => "float",
        ElemKind::Float64 => "double",
        ElemKind::Float16 | ElemKind::BFloat16 => "uint16_t",
        ElemKind::Int8Q { .. } | ElemKind::Int8 => "int8_t",
        ElemKind::UInt8Q { .. } | ElemKind::Bool | ElemKind::UInt8 | ElemKind::Fused(_) => {
            "uint8_t"
        }
        ElemKind::Int16Q { .. } => "int16_t",
        ElemKind::Int32Q { .. } | ElemKind::Index32 => "int32_t",
        ElemKind::Index64 => "int64_t",
    }
}

/// The unsigned C type of an element's size, used by kernels that only move data.
pub fn bits_ctype(kind: ElemKind) -> &'static str {
    match kind.bytes() {
        1 => "uint8_t",
        2 => "uint16_t",
        4 => "uint32_t",
        _ => "uint64_t",
    }
}

/// Integer kinds: quantized and plain integer kinds, and bool, stored as integers.
pub fn is_integer(kind: ElemKind) -> bool {
    kind.is_quantized() || kind.is_plain_int() || kind == ElemKind::Bool
}

/// Reads element `i` of an integer-stored kind, sign-extended.
pub fn read_int(kind: ElemKind, bytes: &[u8], i: usize) -> i64 {
    let n = kind.bytes() as usize;
    let b = &bytes[i * n..i * n + n];
    match kind {
        ElemKind::Int8Q { .. } | ElemKind::Int8 => b[0] as i8 as i64,
        ElemKind::UInt8Q { .. } | ElemKind::Bool | ElemKind::UInt8 => b[0] as i64,
        ElemKind::Int16Q { .. } => i16::from_le_bytes([b[0], b[1]]) as i64,
        ElemKind::Int32Q { .. } | ElemKind::Index32 => {
            i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64
        }
        _ => {
            let mut a = [0u8; 8];
            a[..n].copy_from_slice(b);
            i64::from_le_bytes(a)
        }
    }
}

/// Writes element `i` of an integer-stored kind (truncating to its size).
pub fn write_int(kind: ElemKind, bytes: &mut [u8], i: usize, v: i64) {
    let n = kind.bytes() as usize;
    bytes[i * n..i * n + n].copy_from_slice(&v.to_le_bytes()[..n]);
}

/// `v` as a store of `kind` keeps it (wrapped to the kind's width).
pub fn wrap(kind: ElemKind, v: i64) -> i64 {
    let mut b = [0u8; 8];
    write_int(kind, &mut b, 0, v);
    read_int(kind, &b, 0)
}

pub fn read_f32(bytes: &[u8], i: usize) -> f32 {
    let b = &bytes[i * 4..i * 4 + 4];
    f32::from_le_bytes([b[0], b[1], b[2], b[3]])
}

pub fn write_f32(bytes: &mut [u8], i: usize, v: f32) {
    bytes[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
}

pub use glow_ir::quant::{dequantize, quantize};

/// The stored bits of `v` in `kind` (what `splat` writes), or `None` for
/// 16-bit floats. Quantized kinds quantize the real value; index kinds
/// truncate toward zero and saturate; bool is `v != 0`.
pub fn splat_bits(kind: ElemKind, v: f64) -> Option<u64> {
    Some(match kind {
        ElemKind::Float => (v as f32).to_bits() as u64,
        ElemKind::Float64 => v.to_bits(),
        ElemKind::Float16 | ElemKind::BFloat16 => return None,
        ElemKind::Bool => (v != 0.0) as u64,
        ElemKind::Index32 => (v as i32) as u32 as u64,
        ElemKind::Index64 => (v as i64) as u64,
        ElemKind::Int8 => (v as i8) as u8 as u64,
        ElemKind::UInt8 => (v as u8) as u64,
        // A fused row is raw bytes (data, then its scale and offset).
        ElemKind::Fused(_) => (v as u8) as u64,
        k => {
            let (s, o) = k.quant()?;
            let q = quantize(v as f32, s, o, k.quant_range()?);
            (q as u64) & mask(k.bytes())
        }
    })
}

/// All ones in the low `bytes` bytes.
pub fn mask(bytes: u64) -> u64 {
    if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    }
}

/// The bytes of a weight's inline data, or `None` for 16-bit floats.
pub fn init_bytes(ty: &Type, init: &WeightInit) -> Option<Vec<u8>> {
    let n = ty.size() as usize;
    let eb = ty.elem.bytes() as usize;
    let mut out = vec![0u8; n * eb];
    let put = |out: &mut Vec<u8>, i: usize, bits: u64| {
        out[i * eb..i * eb + eb].copy_from_slice(&bits.to_le_bytes()[..eb]);
    };
    match init {
        WeightInit::Splat(v) => {
            let bits = splat_bits(ty.elem, *v)?;
            for i in 0..n {
                put(&mut out, i, bits);
            }
        }
        WeightInit::Floats(vs) => {
            for (i, v) in vs.iter().enumerate().take(n) {
                let bits = match ty.elem {
                    ElemKind::Float => (*v as f32).to_bits() as u64,
                    ElemKind::Float64 => v.to_bits(),
                    _ => return None,
                };
                put(&mut out, i, bits);
            }
        }
        WeightInit::Ints(vs) => {
            for (i, v) in vs.iter().enumerate().take(n) {
                let bits = match ty.elem {
                    ElemKind::Float => (*v as f32).to_bits() as u64,
                    ElemKind::Float64 => (*v as f64).to_bits(),
                    ElemKind::Float16 | ElemKind::BFloat16 => return None,
                    _ => *v as u64,
                };
                put(&mut out, i, bits);
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_rounds_half_to_even_and_clamps() {
        let r = (-128, 127);
        assert_eq!(quantize(0.5, 1.0, 0, r), 0);
        assert_eq!(quantize(1.5, 1.0, 0, r), 2);
        assert_eq!(quantize(-2.5, 1.0, 0, r), -2);
        assert_eq!(quantize(1000.0, 1.0, 0, r), 127);
        assert_eq!(quantize(-1000.0, 1.0, 0, r), -128);
        assert_eq!(quantize(f32::NAN, 1.0, 0, r), -128);
        assert_eq!(quantize(1.0, 0.5, 3, r), 5);
        assert_eq!(dequantize(5, 0.5, 3), 1.0);
    }

    #[test]
    fn splat_bits_per_kind() {
        assert_eq!(splat_bits(ElemKind::Bool, 2.0), Some(1));
        assert_eq!(splat_bits(ElemKind::Index32, -1.0), Some(0xffff_ffff));
        let q = ElemKind::Int8Q {
            scale: 0.5,
            offset: 0,
        };
        assert_eq!(splat_bits(q, -1.0), Some(0xfe));
    }
}
