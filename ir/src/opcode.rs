//! The instruction set, declared once. Every opcode's operands (with kinds),
//! members (with types and defaults), in-place pairs and shape rule live in
//! one table that drives the parser, printer, verifier, passes and backend.

use crate::shapes;
use crate::shapes::ShapeRule;

/// How an instruction uses an operand's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OperandKind {
    /// Reads the whole operand.
    In,
    /// Writes the whole operand.
    Out,
    /// Reads, then writes.
    InOut,
}

impl OperandKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OperandKind::In => "@in",
            OperandKind::Out => "@out",
            OperandKind::InOut => "@inout",
        }
    }
    pub fn reads(self) -> bool {
        matches!(self, OperandKind::In | OperandKind::InOut)
    }
    pub fn writes(self) -> bool {
        matches!(self, OperandKind::Out | OperandKind::InOut)
    }
}

/// The type of a member's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberType {
    Type,
    Int,
    Float,
    Bool,
    IntArray,
    FloatArray,
    /// One of the listed identifiers.
    Enum(&'static [&'static str]),
    Str,
}

impl MemberType {
    pub fn describe(self) -> String {
        match self {
            MemberType::Type => "a type".into(),
            MemberType::Int => "an integer".into(),
            MemberType::Float => "a float".into(),
            MemberType::Bool => "`true` or `false`".into(),
            MemberType::IntArray => "an integer array".into(),
            MemberType::FloatArray => "a float array".into(),
            MemberType::Enum(vals) => format!("one of {}", vals.join(", ")),
            MemberType::Str => "a string".into(),
        }
    }
}

/// A member's default, when it may be omitted.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Default {
    Required,
    Int(i64),
    Float(f64),
    Bool(bool),
    IntArray(&'static [i64]),
    FloatArray(&'static [f64]),
    Enum(&'static str),
    Str(&'static str),
}

#[derive(Clone, Copy, Debug)]
pub struct OperandDef {
    pub name: &'static str,
    pub kind: OperandKind,
    /// May be left out; only trailing operands are optional.
    pub optional: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct MemberDef {
    pub name: &'static str,
    pub ty: MemberType,
    pub default: Default,
    /// Printed only when different from the default (Glow's extras).
    pub elide_default: bool,
}

/// Everything the tools know about one opcode.
#[derive(Debug)]
pub struct OpcodeInfo {
    pub name: &'static str,
    pub operands: &'static [OperandDef],
    pub members: &'static [MemberDef],
    /// (dest, src) operand index pairs whose memory may be shared.
    pub inplace: &'static [(usize, usize)],
    pub shape: ShapeRule,
}

impl OpcodeInfo {
    /// Operands every instruction of this opcode has (the optional ones follow).
    pub fn required_operands(&self) -> usize {
        self.operands.iter().filter(|o| !o.optional).count()
    }
    pub fn operand_index(&self, name: &str) -> Option<usize> {
        self.operands.iter().position(|o| o.name == name)
    }
    pub fn member_index(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name == name)
    }
    pub fn is_inplace_pair(&self, a: usize, b: usize) -> bool {
        self.inplace
            .iter()
            .any(|&(d, s)| (d, s) == (a, b) || (d, s) == (b, a))
    }
}

const fn op(name: &'static str, kind: OperandKind) -> OperandDef {
    OperandDef {
        name,
        kind,
        optional: false,
    }
}
/// A trailing operand that may be left out.
const fn opt_op(name: &'static str, kind: OperandKind) -> OperandDef {
    OperandDef {
        name,
        kind,
        optional: true,
    }
}
const fn req(name: &'static str, ty: MemberType) -> MemberDef {
    MemberDef {
        name,
        ty,
        default: Default::Required,
        elide_default: false,
    }
}
const fn opt(name: &'static str, ty: MemberType, default: Default) -> MemberDef {
    MemberDef {
        name,
        ty,
        default,
        elide_default: false,
    }
}
const fn extra(name: &'static str, ty: MemberType, default: Default) -> MemberDef {
    MemberDef {
        name,
        ty,
        default,
        elide_default: true,
    }
}

use MemberType as M;
use OperandKind::{In, InOut, Out};

const LAYOUTS: &[&str] = &["NHWC", "NCHW"];
/// Fused activations of a convolution (Glow's `FusedActivation`).
pub const FUSED_ACTIVATIONS: &[&str] = &["NONE", "RELU", "CLIP", "TANH", "SIGMOID", "LEAKY_RELU"];

const BINARY_INPLACE: &[(usize, usize)] = &[(0, 1), (0, 2)];

macro_rules! opcodes {
    ($( $variant:ident = $name:literal, [$($ops:tt)*], [$($mems:tt)*], $inplace:expr, $shape:expr; )*) => {
        /// An opcode; `Opcode::info` gives its table entry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode { $($variant,)* }

        static TABLE: &[OpcodeInfo] = &[$(OpcodeInfo {
            name: $name,
            operands: &[$($ops)*],
            members: &[$($mems)*],
            inplace: $inplace,
            shape: $shape,
        },)*];

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];
        }
    };
}

opcodes! {
    AllocActivation = "allocactivation", [], [req("Ty", M::Type), extra("Offset", M::Int, Default::Int(-1))], &[], shapes::none;
    DeallocActivation = "deallocactivation", [op("Src", Out)], [], &[], shapes::none;
    TensorView = "tensorview", [op("Src", In)], [req("Ty", M::Type), req("Offsets", M::IntArray)], &[], shapes::tensorview;
    Copy = "copy", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::same_type;
    Splat = "splat", [op("Dest", Out)], [req("Value", M::Float)], &[], shapes::none;
    Touch = "touch", [op("Dest", Out)], [], &[], shapes::none;
    Convolution = "convolution",
        [op("Dest", Out), op("Src", In), op("Filter", In), op("Bias", In), opt_op("Residual", In)],
        [req("Kernels", M::IntArray),
         opt("Strides", M::IntArray, Default::IntArray(&[1, 1])),
         opt("Pads", M::IntArray, Default::IntArray(&[0, 0, 0, 0])),
         opt("Group", M::Int, Default::Int(1)),
         opt("Dilation", M::IntArray, Default::IntArray(&[1, 1])),
         opt("Layout", M::Enum(LAYOUTS), Default::Enum("NHWC")),
         extra("FusedActivation", M::Enum(FUSED_ACTIVATIONS), Default::Enum("NONE")),
         extra("FusedActivationArgs", M::FloatArray, Default::FloatArray(&[]))],
        &[], shapes::convolution;
    MaxPool = "maxpool", [op("Dest", Out), op("Src", In)],
        [req("Kernels", M::IntArray),
         opt("Strides", M::IntArray, Default::IntArray(&[1, 1])),
         opt("Pads", M::IntArray, Default::IntArray(&[0, 0, 0, 0])),
         opt("Layout", M::Enum(LAYOUTS), Default::Enum("NHWC"))],
        &[], shapes::pool;
    AvgPool = "avgpool", [op("Dest", Out), op("Src", In)],
        [req("Kernels", M::IntArray),
         opt("Strides", M::IntArray, Default::IntArray(&[1, 1])),
         opt("Pads", M::IntArray, Default::IntArray(&[0, 0, 0, 0])),
         opt("Layout", M::Enum(LAYOUTS), Default::Enum("NHWC")),
         opt("CountIncludePads", M::Bool, Default::Bool(true))],
        &[], shapes::pool;
    FullyConnected = "fullyconnected",
        [op("Dest", Out), op("Src", In), op("Weights", In), op("Bias", In)], [], &[], shapes::fully_connected;
    MatMul = "matmul", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::matmul;
    BatchMatMul = "batchmatmul", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::batch_matmul;
    BatchedAdd = "batchedadd", [op("Dest", Out), op("Batch", In), op("Slice", In)], [], &[(0, 1)], shapes::batched_add;
    BatchedReduceAdd = "batchedreduceadd", [op("Dest", Out), op("Batch", In)], [req("Axis", M::Int)], &[], shapes::batched_reduce_add;
    ElementAdd = "elementadd", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise;
    ElementSub = "elementsub", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise;
    ElementMul = "elementmul", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise;
    ElementDiv = "elementdiv", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise;
    ElementMax = "elementmax", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise;
    ElementMin = "elementmin", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise;
    ElementCmpLTE = "elementcmplte", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::compare;
    ElementSelect = "elementselect", [op("Dest", Out), op("Cond", In), op("LHS", In), op("RHS", In)], [], &[(0, 2), (0, 3)], shapes::select;
    Relu = "relu", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::activation;
    Sigmoid = "sigmoid", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary;
    Tanh = "tanh", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary;
    Clip = "clip", [op("Dest", Out), op("Src", In)], [req("Min", M::Float), req("Max", M::Float)], &[(0, 1)], shapes::activation;
    SoftMax = "softmax", [op("Dest", Out), op("Src", In)], [], &[], shapes::softmax;
    Transpose = "transpose", [op("Dest", Out), op("Src", In)], [req("Shuffle", M::IntArray)], &[], shapes::transpose;
    InsertTensor = "inserttensor", [op("Dest", InOut), op("Src", In)],
        [req("Offsets", M::IntArray), opt("Count", M::Int, Default::Int(1)), opt("Axis", M::Int, Default::Int(0))],
        &[], shapes::insert_tensor;
    ExtractTensor = "extracttensor", [op("Dest", Out), op("Src", In)], [req("Offsets", M::IntArray)], &[], shapes::extract_tensor;
    BatchNormalization = "batchnormalization",
        [op("Dest", Out), op("Src", In), op("Scale", In), op("Bias", In), op("Mean", In), op("Var", In)],
        [opt("ChannelIdx", M::Int, Default::Int(3)),
         opt("Epsilon", M::Float, Default::Float(1e-5)),
         opt("Momentum", M::Float, Default::Float(0.9))],
        &[], shapes::batch_normalization;
    LocalResponseNormalization = "localresponsenormalization",
        [op("Dest", Out), op("Src", In), op("Scale", Out)],
        [req("HalfWindowSize", M::Int), opt("Alpha", M::Float, Default::Float(1e-4)),
         opt("Beta", M::Float, Default::Float(0.75)), opt("K", M::Float, Default::Float(2.0))],
        &[], shapes::lrn;
    Quantize = "quantize", [op("Dest", Out), op("Src", In)], [], &[], shapes::quantize;
    Dequantize = "dequantize", [op("Dest", Out), op("Src", In)], [], &[], shapes::dequantize;
    RescaleQuantized = "rescalequantized", [op("Dest", Out), op("Src", In)], [], &[], shapes::rescale_quantized;
    DebugPrint = "debugprint", [op("Src", In)],
        [opt("Format", M::Str, Default::Str("console")), opt("FileName", M::Str, Default::Str(""))],
        &[], shapes::none;
}

impl Opcode {
    /// The table entry of this opcode.
    pub fn info(self) -> &'static OpcodeInfo {
        &TABLE[self as usize]
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Looks an opcode up by its `.gir` name.
    pub fn from_name(name: &str) -> Option<Opcode> {
        Opcode::ALL.iter().copied().find(|o| o.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_lines_up_with_enum() {
        for (i, &o) in Opcode::ALL.iter().enumerate() {
            assert_eq!(o as usize, i);
            assert_eq!(Opcode::from_name(o.name()), Some(o));
        }
    }

    #[test]
    fn inplace_pairs_point_at_operands() {
        for &o in Opcode::ALL {
            let info = o.info();
            for &(d, s) in info.inplace {
                assert!(info.operands[d].kind.writes(), "{}", info.name);
                assert!(info.operands[s].kind.reads(), "{}", info.name);
            }
        }
    }
}
