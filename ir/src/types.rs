//! Tensor types: an element kind (with quantization parameters) and 1 to 8 dimensions.

use std::fmt;

/// The most dimensions a type may have.
pub const MAX_DIMS: usize = 8;

/// Element kinds. Quantized kinds carry `real = scale * (q - offset)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ElemKind {
    Float,
    Float16,
    BFloat16,
    Float64,
    Int8Q {
        scale: f32,
        offset: i32,
    },
    UInt8Q {
        scale: f32,
        offset: i32,
    },
    Int16Q {
        scale: f32,
        offset: i32,
    },
    Int32Q {
        scale: f32,
        offset: i32,
    },
    Index32,
    Index64,
    Bool,
    /// Plain signed 8-bit integers (ONNX INT8), not quantized.
    Int8,
    /// Plain unsigned 8-bit integers (ONNX UINT8), not quantized.
    UInt8,
    /// Glow's fused row-wise quantized storage (`ui8fused`, `ui8fusedfp16`,
    /// `ui4fused`, `ui4fusedfp16`): bytes whose rows end with their own scale
    /// and offset (docs/gir.md, "Types"). Not a quantized kind in the
    /// arithmetic sense: only the fused embedding instructions read it.
    Fused(Fused),
}

/// The layout of a fused row-wise quantized row: 8-bit values or two 4-bit
/// values per byte (low nibble first), then the row's scale and offset as
/// two `float`s (or two `float16`s). `scale` and `offset` are the type's
/// parameters, which Glow prints and ignores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fused {
    pub nibbles: bool,
    pub fp16: bool,
    pub scale: f32,
    pub offset: i32,
}

impl Fused {
    /// Bytes of scale and offset at the end of each row.
    pub fn extra_bytes(self) -> u64 {
        if self.fp16 {
            4
        } else {
            8
        }
    }
    /// Values per byte.
    pub fn per_byte(self) -> u64 {
        if self.nibbles {
            2
        } else {
            1
        }
    }
}

impl ElemKind {
    /// Size of one element in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            ElemKind::Float | ElemKind::Int32Q { .. } | ElemKind::Index32 => 4,
            ElemKind::Float16 | ElemKind::BFloat16 | ElemKind::Int16Q { .. } => 2,
            ElemKind::Float64 | ElemKind::Index64 => 8,
            ElemKind::Int8Q { .. }
            | ElemKind::UInt8Q { .. }
            | ElemKind::Bool
            | ElemKind::Int8
            | ElemKind::UInt8
            | ElemKind::Fused(_) => 1,
        }
    }

    /// The base name as written in `.gir` (`i8` for `i8[S:.. O:..]`).
    pub fn base_name(self) -> &'static str {
        match self {
            ElemKind::Float => "float",
            ElemKind::Float16 => "float16",
            ElemKind::BFloat16 => "bfloat16",
            ElemKind::Float64 => "float64",
            ElemKind::Int8Q { .. } => "i8",
            ElemKind::UInt8Q { .. } => "ui8",
            ElemKind::Int16Q { .. } => "i16",
            ElemKind::Int32Q { .. } => "i32",
            ElemKind::Index32 => "index32",
            ElemKind::Index64 => "index64",
            ElemKind::Bool => "bool",
            ElemKind::Int8 => "int8",
            ElemKind::UInt8 => "uint8",
            ElemKind::Fused(f) => match (f.nibbles, f.fp16) {
                (false, false) => "ui8fused",
                (false, true) => "ui8fusedfp16",
                (true, false) => "ui4fused",
                (true, true) => "ui4fusedfp16",
            },
        }
    }

    /// All base names, for "expected one of" notes.
    pub const BASE_NAMES: &'static [&'static str] = &[
        "float",
        "float16",
        "bfloat16",
        "float64",
        "i8",
        "ui8",
        "i16",
        "i32",
        "index32",
        "index64",
        "bool",
        "int8",
        "uint8",
        "ui8fused",
        "ui8fusedfp16",
        "ui4fused",
        "ui4fusedfp16",
    ];

    /// Base names that carry `[S:scale O:offset]` when written.
    pub fn takes_params(name: &str) -> bool {
        matches!(
            name,
            "i8" | "ui8"
                | "i16"
                | "i32"
                | "ui8fused"
                | "ui8fusedfp16"
                | "ui4fused"
                | "ui4fusedfp16"
        )
    }

    /// The written parameters: quantization's, or a fused kind's.
    pub fn params(self) -> Option<(f32, i32)> {
        match self {
            ElemKind::Fused(f) => Some((f.scale, f.offset)),
            k => k.quant(),
        }
    }

    /// Builds a kind from its base name; quantized kinds need `quant`.
    pub fn from_name(name: &str, quant: Option<(f32, i32)>) -> Option<ElemKind> {
        let (scale, offset) = quant.unwrap_or((1.0, 0));
        let kind = match name {
            "float" => ElemKind::Float,
            "float16" => ElemKind::Float16,
            "bfloat16" => ElemKind::BFloat16,
            "float64" => ElemKind::Float64,
            "i8" => ElemKind::Int8Q { scale, offset },
            "ui8" => ElemKind::UInt8Q { scale, offset },
            "i16" => ElemKind::Int16Q { scale, offset },
            "i32" => ElemKind::Int32Q { scale, offset },
            "index32" => ElemKind::Index32,
            "index64" => ElemKind::Index64,
            "bool" => ElemKind::Bool,
            "int8" => ElemKind::Int8,
            "uint8" => ElemKind::UInt8,
            "ui8fused" | "ui8fusedfp16" | "ui4fused" | "ui4fusedfp16" => ElemKind::Fused(Fused {
                nibbles: name.starts_with("ui4"),
                fp16: name.ends_with("fp16"),
                scale,
                offset,
            }),
            _ => return None,
        };
        Some(kind)
    }

    /// Quantization parameters, for quantized kinds.
    pub fn quant(self) -> Option<(f32, i32)> {
        match self {
            ElemKind::Int8Q { scale, offset }
            | ElemKind::UInt8Q { scale, offset }
            | ElemKind::Int16Q { scale, offset }
            | ElemKind::Int32Q { scale, offset } => Some((scale, offset)),
            _ => None,
        }
    }

    pub fn is_quantized(self) -> bool {
        self.quant().is_some()
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemKind::Float | ElemKind::Float16 | ElemKind::BFloat16 | ElemKind::Float64
        )
    }

    /// Integer range of a quantized kind's stored values.
    pub fn quant_range(self) -> Option<(i64, i64)> {
        match self {
            ElemKind::Int8Q { .. } => Some((i8::MIN as i64, i8::MAX as i64)),
            ElemKind::UInt8Q { .. } => Some((0, u8::MAX as i64)),
            ElemKind::Int16Q { .. } => Some((i16::MIN as i64, i16::MAX as i64)),
            ElemKind::Int32Q { .. } => Some((i32::MIN as i64, i32::MAX as i64)),
            _ => None,
        }
    }

    /// Plain (not quantized) integer kinds: `index32`, `index64`, `int8`,
    /// `uint8`. Arithmetic on them wraps; `bool` is not one of them.
    pub fn is_plain_int(self) -> bool {
        matches!(
            self,
            ElemKind::Index32 | ElemKind::Index64 | ElemKind::Int8 | ElemKind::UInt8
        )
    }

    /// The range of a plain integer kind (`None` for others).
    pub fn int_range(self) -> Option<(i64, i64)> {
        match self {
            ElemKind::Int8 => Some((i8::MIN as i64, i8::MAX as i64)),
            ElemKind::UInt8 => Some((0, u8::MAX as i64)),
            ElemKind::Index32 => Some((i32::MIN as i64, i32::MAX as i64)),
            ElemKind::Index64 => Some((i64::MIN, i64::MAX)),
            _ => None,
        }
    }

    /// Same kind ignoring quantization parameters.
    pub fn same_base(self, other: ElemKind) -> bool {
        std::mem::discriminant(&self) == std::mem::discriminant(&other)
    }
}

// Quantization scales compare bitwise so that equality is reflexive.
impl Eq for ElemKind {}

/// A tensor type: element kind plus dimensions (row-major).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Type {
    pub elem: ElemKind,
    pub dims: Vec<u64>,
}

impl Type {
    pub fn new(elem: ElemKind, dims: &[u64]) -> Type {
        Type {
            elem,
            dims: dims.to_vec(),
        }
    }

    pub fn float(dims: &[u64]) -> Type {
        Type::new(ElemKind::Float, dims)
    }

    /// Number of elements.
    pub fn size(&self) -> u64 {
        self.dims.iter().product()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> u64 {
        self.size() * self.elem.bytes()
    }

    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Same dims, maybe a different element kind.
    pub fn same_shape(&self, other: &Type) -> bool {
        self.dims == other.dims
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<u64> {
        let mut strides = vec![1; self.dims.len()];
        for i in (0..self.dims.len().saturating_sub(1)).rev() {
            strides[i] = strides[i + 1] * self.dims[i + 1];
        }
        strides
    }
}

/// Writes a float in the shortest text that reads back bit-exactly, always
/// with a `.`, an exponent, `inf` or `nan` so it never reads as an integer.
pub fn format_float(v: f64, out: &mut String) {
    write_shortest(v, v.abs(), out)
}

/// `format_float` for an f32 value (printed with f32's shortest form).
pub fn format_f32(v: f32, out: &mut String) {
    write_shortest(v, v.abs(), out)
}

fn write_shortest<T>(v: T, abs: T, out: &mut String)
where
    T: fmt::Display + fmt::LowerExp + Into<f64> + Copy,
{
    let a: f64 = abs.into();
    if a.is_nan() {
        out.push_str("nan");
        return;
    }
    if a.is_infinite() {
        out.push_str(if v.into() < 0.0 { "-inf" } else { "inf" });
        return;
    }
    // Exponent form only where plain decimals would be long.
    let text = if a != 0.0 && !(1e-5..1e16).contains(&a) {
        format!("{:e}", v)
    } else {
        format!("{}", v)
    };
    out.push_str(&text);
    if !text.contains(['.', 'e', 'E']) {
        out.push_str(".0");
    }
}

impl fmt::Display for ElemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.base_name())?;
        if let Some((scale, offset)) = self.params() {
            let mut s = String::new();
            format_f32(scale, &mut s);
            write!(f, "[S:{} O:{}]", s, offset)?;
        }
        Ok(())
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}<", self.elem)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(" x ")?;
            }
            write!(f, "{}", d)?;
        }
        f.write_str(">")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_strides() {
        let t = Type::float(&[2, 3, 4]);
        assert_eq!(t.size(), 24);
        assert_eq!(t.bytes(), 96);
        assert_eq!(t.strides(), vec![12, 4, 1]);
        let q = Type::new(
            ElemKind::Int8Q {
                scale: 0.5,
                offset: -3,
            },
            &[4],
        );
        assert_eq!(q.bytes(), 4);
        assert_eq!(q.to_string(), "i8[S:0.5 O:-3]<4>");
    }

    #[test]
    fn floats_round_trip() {
        for v in [
            0.1f64,
            1.0,
            -2.5,
            1e-30,
            3.4e38,
            0.0,
            -0.0,
            123456789.0,
            1e16,
        ] {
            let mut s = String::new();
            format_float(v, &mut s);
            assert_eq!(s.parse::<f64>().unwrap().to_bits(), v.to_bits(), "{s}");
            assert!(s.contains(['.', 'e']), "{s}");
        }
        let mut s = String::new();
        format_f32(0.1, &mut s);
        assert_eq!(s, "0.1");
    }
}
