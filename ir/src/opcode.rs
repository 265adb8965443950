//! The instruction set, declared once. Every opcode's operands (with kinds),
//! members (with types and defaults), in-place pairs and shape rule live in
//! one table that drives the parser, printer, verifier, passes and backend.

use crate::member::{self as m, Key, Kind};
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
    /// A list of any number of operands of this kind (Glow's variable
    /// operands); only after the fixed ones (see [`OpcodeInfo::operand_defs`]).
    pub variadic: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct MemberDef {
    pub name: &'static str,
    pub ty: MemberType,
    pub default: Default,
    /// Printed only when different from the default (Glow's extras).
    pub elide_default: bool,
    /// What a well-typed value must also satisfy (checked by the verifier).
    pub rule: MemberRule,
}

/// Value rules of a member that do not depend on operand types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemberRule {
    Any,
    /// Two positive integers (window kernels, strides, dilations).
    TwoPositive,
    /// Four non-negative integers (top, left, bottom, right).
    Pads,
    /// Three positive integers (a 3-D window: temporal, height, width).
    ThreePositive,
    /// Six non-negative integers (Glow's `PaddingNFTBLR`: near, far, top,
    /// bottom, left, right).
    Pads3D,
    /// Two non-negative integers (a transposed convolution's output padding).
    TwoNonNegative,
    /// An integer of at least 1.
    AtLeastOne,
    NonNegative,
    /// An integer other than 0 (a divisor).
    NonZero,
    /// Glow's loss reduction code: 0 (none), 1 (mean) or 2 (sum).
    LossReduction,
}

impl MemberDef {
    /// The same member with a value rule.
    pub const fn rule(self, rule: MemberRule) -> MemberDef {
        MemberDef { rule, ..self }
    }
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
    /// Which kernel of each engine runs it.
    pub family: Family,
}

/// The kernel families: the engines (C emitter, interpreter) `match` on
/// these exhaustively, so a new family is a compile error wherever it needs
/// a kernel, and a new opcode of an existing family needs none of those
/// edits. Within a family, the operator tables (`ops.rs` in the backend)
/// say what each opcode computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// allocactivation, deallocactivation, tensorview, touch: no code.
    Memory,
    Copy,
    Splat,
    Transpose,
    Insert,
    Extract,
    /// Slices of `Data` along `Axis`, picked by `Indices`.
    Gather,
    /// `Dest[i] = Data[i with Indices[i] on Axis]`.
    GatherElements,
    /// Slices of `Data` at the index tuples in the last dimension of `Indices`.
    GatherND,
    /// `Data` with `Updates` written (or combined) at `Indices` along `Axis`.
    ScatterElements,
    /// `Data` with `Updates` slices written (or combined) at index tuples.
    ScatterND,
    /// `Dest` is `OnValue` where the `Axis` coordinate equals the index.
    OneHot,
    /// argmax, argmin: the index of the extreme element along `Axis`.
    ArgMinMax,
    /// `topk`: the `K` largest (or smallest) along the last dimension, in
    /// order, with their indices.
    TopK,
    /// Glow's rearranging and small indexing instructions (`pad`, the
    /// resizes, `spacetodepth`, `flip`, `cumsum`, `nonzero`, `mean`, `concat`, `bucketize`,
    /// `batchonehot`, `scatterdata`, `adaptiveavgpool`, `indexadd`); within
    /// the family the engines' `rearrange` modules pick the kernel by opcode.
    Rearrange,
    DebugPrint,
    /// Element-wise `Dest = LHS op RHS`.
    Binary,
    /// Element-wise `Dest = op(Src; float members)`.
    Unary,
    /// `Dest` (bool) = `LHS cmp RHS`.
    Compare,
    /// Boolean and/or/xor/not.
    Logical,
    Select,
    Quantization,
    /// `convertto`: each element to `Dest`'s kind (docs/gir.md).
    Convert,
    /// `intlookuptable`: each 8-bit element through a 256-entry table.
    LookupTable,
    BatchedAdd,
    Reduce,
    /// fullyconnected, matmul, batchmatmul.
    MatrixMultiply,
    /// softmax, logsoftmax over the rows of a 2-D `Src`.
    SoftMax,
    BatchNorm,
    /// Normalization over the last dimension (`layernormalization`).
    LayerNorm,
    Lrn,
    Convolution,
    /// `convolution3d`: NTHWC, the reference loop nest on both engines.
    Convolution3D,
    /// `convtranspose`: the gradient form of a convolution (scatter as gather).
    ConvTranspose,
    /// maxpool, avgpool.
    Pool,
    /// `convolutiongrad`: input, filter and bias gradients of a convolution.
    ConvolutionGrad,
    /// `maxpoolwithargmax`: a max pool that also writes where each maximum was.
    PoolWithArgmax,
    /// `maxpoolwithargmaxgrad`, `avgpoolgrad`: a pool's input gradient.
    PoolGrad,
    /// relugrad, sigmoidgrad, tanhgrad: `SrcGrad` from `Dest` and `DestGrad`.
    ActivationGrad,
    /// `softmaxgrad`: the gradient of softmax followed by cross-entropy.
    SoftMaxGrad,
    /// `crossentropyloss`: the mean negative log-probability of the labels.
    Loss,
    /// `crossentropylossgrad`.
    LossGrad,
    /// `sgd`: one stochastic gradient descent update of a weight in place.
    Sgd,
    /// `localresponsenormalizationgrad`: the input gradient of an LRN.
    LrnGrad,
    /// The recommendation instructions (segment sums, embedding bags and
    /// the index bookkeeping around them); within the family the engines'
    /// `sparse` modules pick the kernel by opcode.
    Sparse,
    /// Instructions no engine of this backend can run (Glow's runtime
    /// callbacks and external calls): parsed, printed, verified and planned,
    /// and a diagnostic when a function holding one is run or emitted.
    NoKernel,
    /// `batchnormalizationgrad`: input, scale and bias gradients of a batch
    /// normalization over the batch's own statistics.
    BatchNormGrad,
    /// Element-wise `Dest` (bool) = `pred(Src)` over float (`elementisnan`).
    Predicate,
    /// Element-wise `Dest = op(Src; integer members)` over plain integer
    /// kinds (`elementbitwisenot`, `modulo`).
    IntUnary,
    /// The binary cross-entropy losses over logits, element-wise or reduced.
    BceWithLogits,
    /// `batchedpairwisedotproduct`: the dot products of every pair of its
    /// variadic inputs, per batch row.
    PairwiseDot,
    /// `batchedpairwisedotproductgrad`: the inputs' gradients of it.
    PairwiseDotGrad,
    /// `thresholdgrad`: the gradient through a threshold.
    ThresholdGrad,
    /// The detection and audio instructions (`nonmaxsuppression`, `mfcc`,
    /// ...); within the family the engines' `detection` modules pick the
    /// kernel by opcode.
    Detection,
    /// `dynamicquantizedfullyconnected`, `dynamicrowwisequantizedfullyconnected`:
    /// a float product through int8, each input row quantized at run time.
    DynamicQuantized,
    /// `quantizationprofile`: a tensor's values added to a running range and
    /// histogram (`glow_ir::quant::profile_update`).
    Profile,
}

impl OpcodeInfo {
    /// Operands every instruction of this opcode has (the optional ones and
    /// the variadic lists follow).
    pub fn required_operands(&self) -> usize {
        self.operands
            .iter()
            .filter(|o| !o.optional && !o.variadic)
            .count()
    }
    /// Whether the opcode ends with variadic operand lists.
    pub fn is_variadic(&self) -> bool {
        self.operands.iter().any(|o| o.variadic)
    }
    /// The most operands an instruction may have (`None`: no limit).
    pub fn max_operands(&self) -> Option<usize> {
        (!self.is_variadic()).then_some(self.operands.len())
    }
    /// Whether an instruction may have `n` operands.
    pub fn accepts_operand_count(&self, n: usize) -> bool {
        n >= self.required_operands() && self.max_operands().is_none_or(|m| n <= m)
    }
    /// The definition each of an instruction's operands (given by their
    /// kinds) belongs to, as indices into `operands`: the fixed operands by
    /// position, then each variadic list takes the run of operands of its
    /// kind that follows (adjacent lists differ in kind, so the split is
    /// the one the kinds say). `Err((k, d))`: operand `k` fits no
    /// definition (too many operands, or a kind no remaining list has);
    /// `d` is the last variadic list, which it could not join (`None`
    /// for an opcode without one).
    pub fn operand_defs(
        &self,
        kinds: impl IntoIterator<Item = OperandKind>,
    ) -> Result<Vec<usize>, (usize, Option<usize>)> {
        let mut out = Vec::new();
        let mut d = 0;
        for (k, kind) in kinds.into_iter().enumerate() {
            // Leave each variadic list whose kind this operand is not.
            while d < self.operands.len()
                && self.operands[d].variadic
                && self.operands[d].kind != kind
            {
                d += 1;
            }
            match self.operands.get(d) {
                Some(def) if def.variadic => out.push(d),
                // A fixed operand of the wrong kind is the verifier's
                // operand-kind error, not a wrong split.
                Some(_) => {
                    out.push(d);
                    d += 1;
                }
                None => return Err((k, self.operands.iter().rposition(|o| o.variadic))),
            }
        }
        Ok(out)
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
        variadic: false,
    }
}
/// A trailing operand that may be left out.
const fn opt_op(name: &'static str, kind: OperandKind) -> OperandDef {
    OperandDef {
        name,
        kind,
        optional: true,
        variadic: false,
    }
}
/// A list of any number of operands of one kind, after the fixed operands.
const fn var_op(name: &'static str, kind: OperandKind) -> OperandDef {
    OperandDef {
        name,
        kind,
        optional: false,
        variadic: true,
    }
}
const fn req<K: Kind>(key: Key<K>) -> MemberDef {
    MemberDef {
        name: key.name(),
        ty: key.ty(),
        default: Default::Required,
        elide_default: false,
        rule: MemberRule::Any,
    }
}
const fn opt<K: Kind>(key: Key<K>, default: Default) -> MemberDef {
    MemberDef {
        name: key.name(),
        ty: key.ty(),
        default,
        elide_default: false,
        rule: MemberRule::Any,
    }
}
const fn extra<K: Kind>(key: Key<K>, default: Default) -> MemberDef {
    MemberDef {
        name: key.name(),
        ty: key.ty(),
        default,
        elide_default: true,
        rule: MemberRule::Any,
    }
}

use MemberRule as R;
use OperandKind::{In, InOut, Out};

/// Tensor layouts of the spatial instructions.
pub const LAYOUTS: &[&str] = &["NHWC", "NCHW"];
/// Fused activations of a convolution (Glow's `FusedActivation`).
pub const FUSED_ACTIVATIONS: &[&str] = &crate::activation::FusedActivation::NAMES;

/// How a scatter combines an update with the element it lands on (ONNX's `reduction`).
pub const REDUCTIONS: &[&str] = &["none", "add", "mul", "max", "min"];

/// Glow's `LengthsMode`.
pub const LENGTHS_MODES: &[&str] = &["Variable", "AllOne"];
/// Glow's `InstrumentKind`: before or after the observed instruction.
pub const INSTRUMENT_KINDS: &[&str] = &["Before", "After"];
/// `roialign`'s `Mode`: Glow's `PoolingMode` (the mean or the maximum of a
/// bin's bilinear samples) and ONNX's max (of each sample's four weighted
/// corners).
pub const ROI_ALIGN_MODES: &[&str] = &["AVG", "MAX", "ONNX_MAX"];
/// Glow's `LUTOperator`: what a `lookuptable`'s table was made for.
pub const LUT_OPERATORS: &[&str] = &[
    "NONE",
    "RELU",
    "CLIP",
    "TANH",
    "SIGMOID",
    "LEAKY_RELU",
    "EXP",
];

const BINARY_INPLACE: &[(usize, usize)] = &[(0, 1), (0, 2)];

macro_rules! opcodes {
    ($( $variant:ident = $name:literal, [$($ops:tt)*], [$($mems:tt)*], $inplace:expr, $shape:expr, $family:ident; )*) => {
        /// An opcode; `Opcode::info` gives its table entry.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode { $($variant,)* }

        static TABLE: &[OpcodeInfo] = &[$(OpcodeInfo {
            name: $name,
            operands: &[$($ops)*],
            members: &[$($mems)*],
            inplace: $inplace,
            shape: $shape,
            family: Family::$family,
        },)*];

        impl Opcode {
            /// Every opcode, in table order.
            pub const ALL: &'static [Opcode] = &[$(Opcode::$variant,)*];
        }
    };
}

opcodes! {
    AllocActivation = "allocactivation", [], [req(m::TY), extra(m::OFFSET, Default::Int(-1))], &[], shapes::none, Memory;
    DeallocActivation = "deallocactivation", [op("Src", Out)], [], &[], shapes::none, Memory;
    TensorView = "tensorview", [op("Src", In)], [req(m::TY), req(m::OFFSETS)], &[], shapes::tensorview, Memory;
    Copy = "copy", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::same_type, Copy;
    Splat = "splat", [op("Dest", Out)], [req(m::VALUE)], &[], shapes::none, Splat;
    Touch = "touch", [op("Dest", Out)], [], &[], shapes::none, Memory;
    Convolution = "convolution",
        [op("Dest", Out), op("Src", In), op("Filter", In), op("Bias", In), opt_op("Residual", In)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::GROUP, Default::Int(1)).rule(R::AtLeastOne),
         opt(m::DILATION, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::LAYOUT, Default::Enum("NHWC")),
         extra(m::FUSED_ACTIVATION, Default::Enum("NONE")),
         extra(m::FUSED_ACTIVATION_ARGS, Default::FloatArray(&[]))],
        &[(0, 4)], shapes::convolution, Convolution;
    ChannelwiseQuantizedConvolution = "channelwisequantizedconvolution",
        [op("Dest", Out), op("Src", In), op("Filter", In), op("Bias", In),
         op("FilterScales", In), op("FilterOffsets", In), op("BiasScales", In), op("BiasOffsets", In)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::GROUP, Default::Int(1)).rule(R::AtLeastOne),
         opt(m::DILATION, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         extra(m::FUSED_ACTIVATION, Default::Enum("NONE")),
         extra(m::FUSED_ACTIVATION_ARGS, Default::FloatArray(&[]))],
        &[], shapes::channelwise_convolution, Convolution;
    // Glow's Convolution3D: NTHWC, filter [OC][KT][KH][KW][C/G], `Pads`
    // in Glow's PaddingNFTBLR order (near, far, top, bottom, left, right).
    Convolution3D = "convolution3d",
        [op("Dest", Out), op("Src", In), op("Filter", In), op("Bias", In)],
        [req(m::KERNELS).rule(R::ThreePositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1, 1])).rule(R::ThreePositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0, 0, 0])).rule(R::Pads3D),
         opt(m::GROUP, Default::Int(1)).rule(R::AtLeastOne)],
        &[], shapes::convolution3d, Convolution3D;
    ConvTranspose = "convtranspose",
        [op("Dest", Out), op("Src", In), op("Filter", In), op("Bias", In)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::GROUP, Default::Int(1)).rule(R::AtLeastOne),
         opt(m::DILATION, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         extra(m::OUTPUT_PADDING, Default::IntArray(&[0, 0])).rule(R::TwoNonNegative)],
        &[], shapes::conv_transpose, ConvTranspose;
    MaxPool = "maxpool", [op("Dest", Out), op("Src", In)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::LAYOUT, Default::Enum("NHWC")),
         extra(m::DILATION, Default::IntArray(&[1, 1])).rule(R::TwoPositive)],
        &[], shapes::pool, Pool;
    AvgPool = "avgpool", [op("Dest", Out), op("Src", In)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::LAYOUT, Default::Enum("NHWC")),
         opt(m::COUNT_INCLUDE_PADS, Default::Bool(true)),
         extra(m::DILATION, Default::IntArray(&[1, 1])).rule(R::TwoPositive)],
        &[], shapes::pool, Pool;
    FullyConnected = "fullyconnected",
        [op("Dest", Out), op("Src", In), op("Weights", In), op("Bias", In)], [], &[], shapes::fully_connected, MatrixMultiply;
    RowwiseQuantizedFullyConnected = "rowwisequantizedfullyconnected",
        [op("Dest", Out), op("Src", In), op("Weights", In), op("Bias", In),
         op("Scales", In), op("Offsets", In)], [], &[], shapes::rowwise_fully_connected, MatrixMultiply;
    // Float in and out, the input quantized per row at run time (Glow's).
    DynamicQuantizedFullyConnected = "dynamicquantizedfullyconnected",
        [op("Dest", Out), op("Src", In), op("Weights", In), op("Bias", In)],
        [opt(m::IS_SYMMETRIC, Default::Bool(true)), opt(m::IS_PER_BATCH_ELEMENT, Default::Bool(true))],
        &[], shapes::dynamic_fully_connected, DynamicQuantized;
    DynamicRowwiseQuantizedFullyConnected = "dynamicrowwisequantizedfullyconnected",
        [op("Dest", Out), op("Src", In), op("Weights", In), op("Bias", In),
         op("Scales", In), op("Offsets", In)],
        [opt(m::IS_SYMMETRIC, Default::Bool(true)), opt(m::IS_PER_BATCH_ELEMENT, Default::Bool(true))],
        &[], shapes::dynamic_fully_connected, DynamicQuantized;
    MatMul = "matmul", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::matmul, MatrixMultiply;
    BatchMatMul = "batchmatmul", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::batch_matmul, MatrixMultiply;
    BatchedAdd = "batchedadd", [op("Dest", Out), op("Batch", In), op("Slice", In)], [], &[(0, 1)], shapes::batched_add, BatchedAdd;
    BatchedReduceAdd = "batchedreduceadd", [op("Dest", Out), op("Batch", In)], [req(m::AXIS)], &[], shapes::batched_reduce_add, Reduce;
    BatchedReduceMax = "batchedreducemax", [op("Dest", Out), op("Batch", In)], [req(m::AXIS)], &[], shapes::batched_reduce_add, Reduce;
    BatchedReduceMin = "batchedreducemin", [op("Dest", Out), op("Batch", In)], [req(m::AXIS)], &[], shapes::batched_reduce_add, Reduce;
    BatchedReduceProd = "batchedreduceprod", [op("Dest", Out), op("Batch", In)], [req(m::AXIS)], &[], shapes::batched_reduce_add, Reduce;
    ElementAdd = "elementadd", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise, Binary;
    ElementSub = "elementsub", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise, Binary;
    ElementMul = "elementmul", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise, Binary;
    ElementDiv = "elementdiv", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise, Binary;
    ElementMax = "elementmax", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise, Binary;
    ElementPow = "elementpow", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise, Binary;
    ElementMin = "elementmin", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::elementwise, Binary;
    // Integer element-wise operators (Glow's bitwise instructions, its
    // `elementfmod`, and two shifts of our own for ONNX's BitShift).
    ElementBitwiseAnd = "elementbitwiseand", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::int_elementwise, Binary;
    ElementBitwiseOr = "elementbitwiseor", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::int_elementwise, Binary;
    ElementBitwiseXor = "elementbitwisexor", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::int_elementwise, Binary;
    ElementBitShiftLeft = "elementbitshiftleft", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::int_elementwise, Binary;
    ElementBitShiftRight = "elementbitshiftright", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::int_elementwise, Binary;
    ElementFmod = "elementfmod", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::plain_elementwise, Binary;
    ElementCmpLTE = "elementcmplte", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::compare, Compare;
    ElementCmpEQ = "elementcmpeq", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::compare, Compare;
    ElementCmpNEQ = "elementcmpneq", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::compare, Compare;
    ElementCmpLT = "elementcmplt", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], &[], shapes::compare, Compare;
    ElementAnd = "elementand", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::logical, Logical;
    ElementOr = "elementor", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::logical, Logical;
    ElementXor = "elementxor", [op("Dest", Out), op("LHS", In), op("RHS", In)], [], BINARY_INPLACE, shapes::logical, Logical;
    ElementNot = "elementnot", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::logical, Logical;
    ElementSelect = "elementselect", [op("Dest", Out), op("Cond", In), op("LHS", In), op("RHS", In)], [], &[(0, 2), (0, 3)], shapes::select, Select;
    Relu = "relu", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::activation, Unary;
    Sigmoid = "sigmoid", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    Tanh = "tanh", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    Clip = "clip", [op("Dest", Out), op("Src", In)], [req(m::MIN), req(m::MAX)], &[(0, 1)], shapes::activation, Unary;
    LeakyRelu = "leakyrelu", [op("Dest", Out), op("Src", In)], [opt(m::ALPHA, Default::Float(0.01))], &[(0, 1)], shapes::float_unary, Unary;
    ElementExp = "elementexp", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementLog = "elementlog", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementSqrt = "elementsqrt", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementRsqrt = "elementrsqrt", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementReciprocal = "elementreciprocal", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementNeg = "elementneg", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementAbs = "elementabs", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementErf = "elementerf", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementSin = "elementsin", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementCos = "elementcos", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementFloor = "elementfloor", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementCeil = "elementceil", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementRound = "elementround", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementSign = "elementsign", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementAcos = "elementacos", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementAsin = "elementasin", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementAtan = "elementatan", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementAcosh = "elementacosh", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementAsinh = "elementasinh", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementAtanh = "elementatanh", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementCosh = "elementcosh", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementSinh = "elementsinh", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementTan = "elementtan", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    SoftPlus = "softplus", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    Elu = "elu", [op("Dest", Out), op("Src", In)], [opt(m::ALPHA, Default::Float(1.0))], &[(0, 1)], shapes::float_unary, Unary;
    Selu = "selu", [op("Dest", Out), op("Src", In)],
        [opt(m::ALPHA, Default::Float(1.6732631921768188)), opt(m::GAMMA, Default::Float(1.0507010221481323))],
        &[(0, 1)], shapes::float_unary, Unary;
    Celu = "celu", [op("Dest", Out), op("Src", In)], [opt(m::ALPHA, Default::Float(1.0))], &[(0, 1)], shapes::float_unary, Unary;
    Gelu = "gelu", [op("Dest", Out), op("Src", In)], [opt(m::APPROXIMATE, Default::Bool(false))], &[(0, 1)], shapes::float_unary, Unary;
    // Glow's element-wise instructions with a constant operand (`LHS - RHS`,
    // `LHS * RHS` with the float member `LHS`), truncation, NaN and
    // infinity replacement and hard swish (its lowering's arithmetic).
    ElementRsubConst = "elementrsubconst", [op("Dest", Out), op("RHS", In)], [req(m::LHS)], &[(0, 1)], shapes::float_unary, Unary;
    ElementMulConst = "elementmulconst", [op("Dest", Out), op("RHS", In)], [req(m::LHS)], &[(0, 1)], shapes::float_unary, Unary;
    ElementTruncate = "elementtruncate", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    NanToNum = "nantonum", [op("Dest", Out), op("Src", In)],
        [opt(m::NAN, Default::Float(0.0)),
         opt(m::POS_INF, Default::Float(f32::MAX as f64)),
         opt(m::NEG_INF, Default::Float(f32::MIN as f64))],
        &[(0, 1)], shapes::float_unary, Unary;
    HardSwish = "hardswish", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::float_unary, Unary;
    ElementIsNaN = "elementisnan", [op("Dest", Out), op("Src", In)], [], &[], shapes::float_predicate, Predicate;
    ElementBitwiseNot = "elementbitwisenot", [op("Dest", Out), op("Src", In)], [], &[(0, 1)], shapes::int_elementwise, IntUnary;
    Modulo = "modulo", [op("Dest", Out), op("Src", In)],
        [req(m::DIVISOR).rule(R::NonZero), opt(m::SIGN_FOLLOW_DIVISOR, Default::Bool(false))],
        &[(0, 1)], shapes::int_elementwise, IntUnary;
    SoftMax = "softmax", [op("Dest", Out), op("Src", In)], [], &[], shapes::softmax, SoftMax;
    LogSoftMax = "logsoftmax", [op("Dest", Out), op("Src", In)], [], &[], shapes::softmax, SoftMax;
    Gather = "gather", [op("Dest", Out), op("Data", In), op("Indices", In)], [opt(m::AXIS, Default::Int(0))], &[], shapes::gather, Gather;
    GatherElements = "gatherelements", [op("Dest", Out), op("Data", In), op("Indices", In)],
        [opt(m::AXIS, Default::Int(0))], &[], shapes::gather_elements, GatherElements;
    GatherND = "gathernd", [op("Dest", Out), op("Data", In), op("Indices", In)],
        [opt(m::BATCH_DIMS, Default::Int(0)).rule(R::NonNegative)], &[], shapes::gather_nd, GatherND;
    ScatterElements = "scatterelements", [op("Dest", Out), op("Data", In), op("Indices", In), op("Updates", In)],
        [opt(m::AXIS, Default::Int(0)), opt(m::REDUCTION, Default::Enum("none"))],
        &[], shapes::scatter_elements, ScatterElements;
    ScatterND = "scatternd", [op("Dest", Out), op("Data", In), op("Indices", In), op("Updates", In)],
        [opt(m::REDUCTION, Default::Enum("none"))], &[], shapes::scatter_nd, ScatterND;
    OneHot = "onehot", [op("Dest", Out), op("Indices", In)],
        [req(m::AXIS), opt(m::OFF_VALUE, Default::Float(0.0)), opt(m::ON_VALUE, Default::Float(1.0))],
        &[], shapes::one_hot, OneHot;
    ArgMax = "argmax", [op("Dest", Out), op("Src", In)],
        [req(m::AXIS), opt(m::KEEP_DIMS, Default::Bool(true)), extra(m::SELECT_LAST_INDEX, Default::Bool(false))],
        &[], shapes::arg_min_max, ArgMinMax;
    ArgMin = "argmin", [op("Dest", Out), op("Src", In)],
        [req(m::AXIS), opt(m::KEEP_DIMS, Default::Bool(true)), extra(m::SELECT_LAST_INDEX, Default::Bool(false))],
        &[], shapes::arg_min_max, ArgMinMax;
    // Glow's TopK (without its Scratch operand); `K` shares LRN's float
    // member and must be a whole number; `Largest` is ours (ONNX's smallest).
    TopK = "topk", [op("Values", Out), op("Indices", Out), op("Input", In)],
        [req(m::K), extra(m::LARGEST, Default::Bool(true))], &[], shapes::topk, TopK;
    // Glow's rearranging instructions (docs/gir.md, "Rearranging").
    Pad = "pad", [op("Dest", Out), op("Src", In)],
        [req(m::PAD), opt(m::PADDING_MODE, Default::Int(0)), opt(m::VALUE, Default::Float(0.0))],
        &[], shapes::pad, Rearrange;
    ResizeNearest = "resizenearest", [op("Dest", Out), op("Src", In)], [req(m::RESIZE_SCALE)], &[], shapes::resize, Rearrange;
    ResizeBilinear = "resizebilinear", [op("Dest", Out), op("Src", In)], [req(m::RESIZE_SCALE)], &[], shapes::resize, Rearrange;
    SpaceToDepth = "spacetodepth", [op("Dest", Out), op("Src", In)],
        [req(m::BLOCK_SIZE).rule(R::AtLeastOne)], &[], shapes::space_to_depth, Rearrange;
    Flip = "flip", [op("Dest", Out), op("Src", In)], [req(m::AXIS)], &[], shapes::flip, Rearrange;
    // Glow's CumSum; its in-place pair is left out (a sum reads other elements).
    CumSum = "cumsum", [op("Dest", Out), op("Input", In)],
        [opt(m::DIM, Default::Int(0)), opt(m::EXCLUSIVE, Default::Bool(false)), opt(m::REVERSE, Default::Bool(false))],
        &[], shapes::cumsum, Rearrange;
    NonZero = "nonzero", [op("Dest", Out), op("Cond", In)], [], &[], shapes::nonzero, Rearrange;
    // Glow's Mean (its interpreter has none; ours sums in index order from
    // +0, then divides by the count).
    Mean = "mean", [op("Dest", Out), op("Src", In)], [req(m::MEAN_DIMS)], &[], shapes::mean, Rearrange;
    Bucketize = "bucketize", [op("Dest", Out), op("Src", In)], [req(m::BOUNDARIES)], &[], shapes::bucketize, Rearrange;
    BatchOneHot = "batchonehot", [op("Dest", Out), op("Data", In), op("Lengths", In), op("Values", In)],
        [], &[], shapes::batch_one_hot, Rearrange;
    ScatterData = "scatterdata", [op("Data", InOut), op("Indices", In), op("Slices", In)],
        [opt(m::CUMULATIVE, Default::Bool(false))], &[], shapes::scatter_data, Rearrange;
    AdaptiveAvgPool = "adaptiveavgpool", [op("Dest", Out), op("Src", In)], [], &[], shapes::adaptive_avg_pool, Rearrange;
    // PyTorch's index_add (Glow's interpreter has no kernel): Dest = Input,
    // then Alpha times each Source slice added at the slot Index names.
    // Glow's GaussianFill with our documented generator (docs/gir.md).
    GaussianFill = "gaussianfill", [op("Dest", Out), op("Input", In)],
        [opt(m::MEAN, Default::Float(0.0)), opt(m::FILL_SCALE, Default::Float(1.0)), opt(m::SEED, Default::Float(0.0))],
        &[], shapes::gaussian_fill, Rearrange;
    IndexAdd = "indexadd", [op("Dest", Out), op("Input", In), op("Index", In), op("Source", In)],
        [opt(m::DIM, Default::Int(0)), opt(m::ALPHA, Default::Float(1.0))], &[], shapes::index_add, Rearrange;
    // Glow's Concat with its inputs as a list (Glow's backends add them).
    Concat = "concat", [op("Dest", Out), var_op("Inputs", In)], [req(m::AXIS)], &[], shapes::concat, Rearrange;
    Transpose = "transpose", [op("Dest", Out), op("Src", In)], [req(m::SHUFFLE)], &[], shapes::transpose, Transpose;
    InsertTensor = "inserttensor", [op("Dest", InOut), op("Src", In)],
        [req(m::OFFSETS), opt(m::COUNT, Default::Int(1)).rule(R::AtLeastOne), opt(m::AXIS, Default::Int(0))],
        &[], shapes::insert_tensor, Insert;
    ExtractTensor = "extracttensor", [op("Dest", Out), op("Src", In)], [req(m::OFFSETS)], &[], shapes::extract_tensor, Extract;
    BatchNormalization = "batchnormalization",
        [op("Dest", Out), op("Src", In), op("Scale", In), op("Bias", In), op("Mean", In), op("Var", In)],
        [opt(m::CHANNEL_IDX, Default::Int(3)),
         opt(m::EPSILON, Default::Float(1e-5)),
         opt(m::MOMENTUM, Default::Float(0.9))],
        &[], shapes::batch_normalization, BatchNorm;
    LayerNormalization = "layernormalization",
        [op("Dest", Out), op("Src", In), op("Scale", In), op("Bias", In)],
        [opt(m::EPSILON, Default::Float(1e-5))],
        &[], shapes::layer_normalization, LayerNorm;
    LocalResponseNormalization = "localresponsenormalization",
        [op("Dest", Out), op("Src", In), op("Scale", Out)],
        [req(m::HALF_WINDOW_SIZE).rule(R::NonNegative), opt(m::ALPHA, Default::Float(1e-4)),
         opt(m::BETA, Default::Float(0.75)), opt(m::K, Default::Float(2.0))],
        &[], shapes::lrn, Lrn;
    // Per tensor (the quantized type's parameters), or per axis: `Scales`
    // (float) and `Offsets` (index32) of each index along `Axis`, the
    // quantized side then plain `int8`/`uint8` (docs/quantization.md).
    Quantize = "quantize", [op("Dest", Out), op("Src", In), opt_op("Scales", In), opt_op("Offsets", In)],
        [extra(m::AXIS, Default::Int(0))], &[], shapes::quantize, Quantization;
    Dequantize = "dequantize", [op("Dest", Out), op("Src", In), opt_op("Scales", In), opt_op("Offsets", In)],
        [extra(m::AXIS, Default::Int(0))], &[], shapes::dequantize, Quantization;
    // Per axis: `Scales`/`Offsets` give the plain int8/uint8 `Src`'s
    // parameters along `Axis` (constants: the multipliers are derived when compiling).
    RescaleQuantized = "rescalequantized", [op("Dest", Out), op("Src", In), opt_op("Scales", In), opt_op("Offsets", In)],
        [extra(m::AXIS, Default::Int(0))], &[], shapes::rescale_quantized, Quantization;
    ConvertTo = "convertto", [op("Dest", Out), op("Src", In)], [], &[], shapes::convert_to, Convert;
    IntLookupTable = "intlookuptable", [op("Dest", Out), op("Src", In), op("Mapping", In)], [], &[], shapes::int_lookup_table, LookupTable;
    // Runtime profiling state, updated in place (Glow's): min, max and a histogram.
    QuantizationProfile = "quantizationprofile",
        [op("InputTensor", In), op("Histogram", InOut), op("ComputationInfo", InOut)],
        [], &[], shapes::quantization_profile, Profile;
    // Training (docs/training.md): Glow's gradient instructions, with the
    // original operands first (read) and the gradients after.
    ConvolutionGrad = "convolutiongrad",
        [op("Src", In), op("Filter", In), op("DestGrad", In),
         op("SrcGrad", Out), op("FilterGrad", Out), op("BiasGrad", Out)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::GROUP, Default::Int(1)).rule(R::AtLeastOne),
         opt(m::DILATION, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::LAYOUT, Default::Enum("NHWC")),
         opt(m::COMPUTE_SRC_GRAD, Default::Bool(true))],
        &[], shapes::convolution_grad, ConvolutionGrad;
    MaxPoolWithArgmax = "maxpoolwithargmax", [op("Dest", Out), op("Src", In), op("Argmax", Out)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::LAYOUT, Default::Enum("NHWC"))],
        &[], shapes::max_pool_with_argmax, PoolWithArgmax;
    MaxPoolWithArgmaxGrad = "maxpoolwithargmaxgrad",
        [op("Dest", In), op("Src", In), op("Argmax", In), op("DestGrad", In), op("SrcGrad", Out)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::LAYOUT, Default::Enum("NHWC"))],
        &[], shapes::max_pool_with_argmax_grad, PoolGrad;
    AvgPoolGrad = "avgpoolgrad",
        [op("Dest", In), op("Src", In), op("DestGrad", In), op("SrcGrad", Out)],
        [req(m::KERNELS).rule(R::TwoPositive),
         opt(m::STRIDES, Default::IntArray(&[1, 1])).rule(R::TwoPositive),
         opt(m::PADS, Default::IntArray(&[0, 0, 0, 0])).rule(R::Pads),
         opt(m::LAYOUT, Default::Enum("NHWC")),
         opt(m::COUNT_INCLUDE_PADS, Default::Bool(true))],
        &[], shapes::avg_pool_grad, PoolGrad;
    ReluGrad = "relugrad", [op("Dest", In), op("DestGrad", In), op("SrcGrad", Out)], [], &[(2, 1)], shapes::activation_grad, ActivationGrad;
    SigmoidGrad = "sigmoidgrad", [op("Dest", In), op("DestGrad", In), op("SrcGrad", Out)], [], &[(2, 1)], shapes::activation_grad, ActivationGrad;
    TanhGrad = "tanhgrad", [op("Dest", In), op("DestGrad", In), op("SrcGrad", Out)], [], &[(2, 1)], shapes::activation_grad, ActivationGrad;
    SoftMaxGrad = "softmaxgrad",
        [op("OrigDest", In), op("OrigSrc", In), op("Selected", In), op("SrcGrad", Out)], [], &[], shapes::softmax_grad, SoftMaxGrad;
    CrossEntropyLoss = "crossentropyloss", [op("P", In), op("Labels", In), op("CE", Out)], [], &[], shapes::cross_entropy_loss, Loss;
    CrossEntropyLossGrad = "crossentropylossgrad",
        [op("CEGrad", In), op("P", In), op("Labels", In), op("Pgrad", Out), op("Labelsgrad", Out)],
        [], &[], shapes::cross_entropy_loss_grad, LossGrad;
    // Variadic operands: Glow's pairwise dot products take their inputs
    // (and the gradient its input gradients, then the inputs) as lists.
    BatchedPairwiseDotProduct = "batchedpairwisedotproduct",
        [op("Dest", Out), var_op("Inputs", In)],
        [req(m::NUM_INPUTS).rule(R::AtLeastOne), req(m::VECTOR_SIZE).rule(R::AtLeastOne)],
        &[], shapes::pairwise_dot, PairwiseDot;
    BatchedPairwiseDotProductGrad = "batchedpairwisedotproductgrad",
        [op("DestGrad", In), var_op("SrcGrads", Out), var_op("Srcs", In)],
        [req(m::NUM_INPUTS).rule(R::AtLeastOne), req(m::VECTOR_SIZE).rule(R::AtLeastOne)],
        &[], shapes::pairwise_dot_grad, PairwiseDotGrad;
    // PyTorch's threshold_backward: `Input <= Threshold ? 0 : Grad`.
    ThresholdGrad = "thresholdgrad", [op("Dest", Out), op("Grad", In), op("Input", In)],
        [req(m::THRESHOLD)], &[(0, 1)], shapes::threshold_grad, ThresholdGrad;
    // Glow's binary cross-entropy losses over logits (torch's
    // binary_cross_entropy_with_logits); `Reduction` is Glow's unsigned
    // code (0 none, 1 mean, 2 sum), a key of its own beside the scatters'
    // enum of the same name (docs/gir.md, "Members").
    SimpleBinaryCrossEntropyWithLogits = "simplebinarycrossentropywithlogits",
        [op("Dest", Out), op("Input", In), op("Target", In)],
        [req(m::LOSS_REDUCTION).rule(R::LossReduction)], &[], shapes::bce_with_logits, BceWithLogits;
    WeightBinaryCrossEntropyWithLogits = "weightbinarycrossentropywithlogits",
        [op("Dest", Out), op("Input", In), op("Target", In), op("Weight", In)],
        [req(m::LOSS_REDUCTION).rule(R::LossReduction)], &[], shapes::bce_with_logits, BceWithLogits;
    PosWeightBinaryCrossEntropyWithLogits = "posweightbinarycrossentropywithlogits",
        [op("Dest", Out), op("Input", In), op("Target", In), op("PosWeight", In)],
        [req(m::LOSS_REDUCTION).rule(R::LossReduction)], &[], shapes::bce_with_logits, BceWithLogits;
    BinaryCrossEntropyWithLogits = "binarycrossentropywithlogits",
        [op("Dest", Out), op("Input", In), op("Target", In), op("Weight", In), op("PosWeight", In)],
        [req(m::LOSS_REDUCTION).rule(R::LossReduction)], &[], shapes::bce_with_logits, BceWithLogits;
    LocalResponseNormalizationGrad = "localresponsenormalizationgrad",
        [op("Dest", In), op("Src", In), op("Scale", In), op("DestGrad", In), op("SrcGrad", Out)],
        [req(m::HALF_WINDOW_SIZE).rule(R::NonNegative), opt(m::ALPHA, Default::Float(1e-4)),
         opt(m::BETA, Default::Float(0.75)), opt(m::K, Default::Float(2.0))],
        &[], shapes::lrn_grad, LrnGrad;
    BatchNormalizationGrad = "batchnormalizationgrad",
        [op("Src", In), op("Scale", In), op("Mean", In), op("Var", In), op("DestGrad", In),
         op("SrcGrad", Out), op("ScaleGrad", Out), op("BiasGrad", Out)],
        [opt(m::CHANNEL_IDX, Default::Int(3)), opt(m::EPSILON, Default::Float(1e-5))],
        &[], shapes::batch_norm_grad, BatchNormGrad;
    Sgd = "sgd", [op("Weight", InOut), op("Gradient", In), op("Velocity", InOut)],
        [req(m::LEARNING_RATE),
         opt(m::MOMENTUM, Default::Float(0.0)),
         opt(m::L1_DECAY, Default::Float(0.0)),
         opt(m::L2_DECAY, Default::Float(0.0)),
         opt(m::BATCH_SIZE, Default::Int(1)).rule(R::AtLeastOne)],
        &[], shapes::sgd, Sgd;
    // Recommendation (docs/gir.md, "Recommendation"): Glow's operand order;
    // out-of-range indices and overlong lengths are defined (the rows skipped).
    LengthsSum = "lengthssum", [op("Dest", Out), op("Data", In), op("Lengths", In)], [], &[], shapes::lengths_sum, Sparse;
    SparseLengthsSum = "sparselengthssum",
        [op("Dest", Out), op("Data", In), op("Indices", In), op("Lengths", In)],
        [opt(m::LENGTHS_MODE, Default::Enum("Variable")), opt(m::AVG_LENGTH, Default::Float(f64::NAN))],
        &[], shapes::sparse_lengths_sum, Sparse;
    SparseLengthsWeightedSum = "sparselengthsweightedsum",
        [op("Dest", Out), op("Data", In), op("Weights", In), op("Indices", In), op("Lengths", In)],
        [opt(m::LENGTHS_MODE, Default::Enum("Variable")), opt(m::AVG_LENGTH, Default::Float(f64::NAN))],
        &[], shapes::sparse_lengths_sum, Sparse;
    Embedding = "embedding", [op("Dest", Out), op("Weights", In), op("Indices", In)],
        [opt(m::PAD_IDX, Default::Int(-1)), opt(m::SCALE, Default::Bool(false)), opt(m::SPARSE, Default::Bool(false))],
        &[], shapes::embedding, Sparse;
    EmbeddingBag = "embeddingbag",
        [op("Dest", Out), op("Data", In), op("Weights", In), op("Indices", In), op("Offsets", In)],
        [opt(m::HAS_END_OFFSET, Default::Bool(false)), opt(m::LENGTHS_MODE, Default::Enum("Variable")),
         opt(m::AVG_LENGTH, Default::Float(f64::NAN))],
        &[], shapes::embedding_bag, Sparse;
    LengthsToRanges = "lengthstoranges", [op("Dest", Out), op("Lengths", In)], [], &[], shapes::lengths_to_ranges, Sparse;
    LengthsRangeFill = "lengthsrangefill", [op("Dest", Out), op("Lengths", In)], [], &[], shapes::lengths_range_fill, Sparse;
    GatherRanges = "gatherranges", [op("Output", Out), op("Lengths", Out), op("Data", In), op("Ranges", In)],
        [], &[], shapes::gather_ranges, Sparse;
    SparseToDenseMask = "sparsetodensemask",
        [op("Dest", Out), op("Indices", In), op("Values", In), op("DefaultValue", In), op("Lengths", In)],
        [req(m::MASK)], &[], shapes::sparse_to_dense_mask, Sparse;
    BatchSparseToDense = "batchsparsetodense",
        [op("Dest", Out), op("Lengths", In), op("Indices", In), op("Values", In)],
        [opt(m::DEFAULT_VALUE, Default::Float(0.0)), req(m::DENSE_LAST_DIM).rule(R::AtLeastOne)],
        &[], shapes::batch_sparse_to_dense, Sparse;
    FillExamplesWithIndicator = "fillexampleswithindicator", [op("Dest", Out), op("Data", In), op("Indicator", In)],
        [], &[], shapes::fill_examples_with_indicator, Sparse;
    SparseLabelSplit = "sparselabelsplit",
        [op("LabelValues", Out), op("ExampleIds", Out), op("GradientOffsetMap", Out),
         op("Lengths", In), op("Indices", In), op("Values", In)],
        [req(m::NUM_LABELS).rule(R::AtLeastOne)], &[], shapes::sparse_label_split, Sparse;
    RowwiseQuantizedSparseLengthsWeightedSum = "rowwisequantizedsparselengthsweightedsum",
        [op("Dest", Out), op("Data", In), op("Scales", In), op("Offsets", In), op("Weights", In),
         op("Indices", In), op("Lengths", In)],
        [opt(m::USE_FP16_ACCUMULATION, Default::Bool(false)), opt(m::LENGTHS_MODE, Default::Enum("Variable")),
         opt(m::AVG_LENGTH, Default::Float(f64::NAN))],
        &[], shapes::rowwise_quantized_sls, Sparse;
    FusedRowwiseQuantizedSparseLengthsWeightedSum = "fusedrowwisequantizedsparselengthsweightedsum",
        [op("Dest", Out), op("Data", In), op("Weights", In), op("Indices", In), op("Lengths", In)],
        [opt(m::USE_FP16_ACCUMULATION, Default::Bool(false)), opt(m::LENGTHS_MODE, Default::Enum("Variable")),
         opt(m::AVG_LENGTH, Default::Float(f64::NAN))],
        &[], shapes::fused_sls, Sparse;
    FusedRowwiseQuantizedSparseLengthsSum = "fusedrowwisequantizedsparselengthssum",
        [op("Dest", Out), op("Data", In), op("Indices", In), op("Lengths", In)],
        [opt(m::USE_FP16_ACCUMULATION, Default::Bool(false)), opt(m::LENGTHS_MODE, Default::Enum("Variable")),
         opt(m::AVG_LENGTH, Default::Float(f64::NAN))],
        &[], shapes::fused_sls, Sparse;
    EmbeddingBagByteRowwiseOffsets = "embeddingbagbyterowwiseoffsets",
        [op("Dest", Out), op("Data", In), op("Weights", In), op("Indices", In), op("Offsets", In)],
        [opt(m::USE_FP16_ACCUMULATION, Default::Bool(false)), opt(m::HAS_END_OFFSET, Default::Bool(false)),
         opt(m::LENGTHS_MODE, Default::Enum("Variable")), opt(m::AVG_LENGTH, Default::Float(f64::NAN))],
        &[], shapes::fused_sls, Sparse;
    BatchedUnaryEmbeddingsBags = "batchedunaryembeddingsbags",
        [op("Dest", Out), op("Weights", In), op("TableOffsets", In), op("Offsets", In), op("Indices", In)],
        [], &[], shapes::batched_unary_embeddings_bags, Sparse;
    PermutePooledEmbeddings = "permutepooledembeddings",
        [op("Dest", Out), op("PooledEmbeddings", In), op("OffsetDimList", In), op("PermuteList", In),
         op("InvOffsetDimList", In), op("InvPermuteList", In)],
        [], &[], shapes::permute_pooled_embeddings, Sparse;
    BoundsCheckIndices = "boundscheckindices",
        [op("RowsPerTable", In), op("Indices", In), op("Offsets", In), op("Warning", Out), op("Weights", In)],
        [opt(m::BOUNDS_CHECK_MODE, Default::Int(0))], &[], shapes::none, NoKernel;
    // Glow's generic table lookup: Glow verifies nothing and its interpreter
    // has no kernel (the table layout is a backend's own), so no kernel here.
    LookupTable = "lookuptable",
        [op("Dest", Out), op("Src", In), op("Table", In), op("TableIdx", In)],
        [req(m::OPERATOR), opt(m::OPERATOR_ARGS, Default::FloatArray(&[]))], &[], shapes::none, NoKernel;
    // Glow's IndexPut, PrunedArrayLookup and SumWithZeroPadding, with Glow's
    // operands and members: Glow's interpreter has no kernel for any of them
    // (llvm_unreachable), so none here. SumWithZeroPadding's inputs, which
    // Glow's backends add, are a variadic list.
    IndexPut = "indexput", [op("Dest", Out), op("Input", In), op("Values", In)],
        [req(m::ACCUMULATE), req(m::NUM_INDICES)], &[(0, 1)], shapes::none, NoKernel;
    PrunedArrayLookup = "prunedarraylookup",
        [op("Dest", Out), op("Indices", In), op("Offsets", In), op("IndexRemapping", In),
         op("IndexRemappingOffsets", In)],
        [], &[], shapes::pruned_array_lookup, NoKernel;
    SumWithZeroPadding = "sumwithzeropadding", [op("Dest", Out), var_op("Inputs", In)],
        [], &[], shapes::none, NoKernel;
    // Instrumentation and escape hatches: no kernel on this backend.
    Instrument = "instrument", [op("OperandsInfo", Out)],
        [opt(m::INSTR_REF, Default::Str("")), opt(m::ID, Default::Int(0)), opt(m::INSTRUMENT_KIND, Default::Enum("Before"))],
        &[], shapes::none, NoKernel;
    TraceEvent = "traceevent", [op("Data", In)], [opt(m::INDEX, Default::Int(0))], &[], shapes::none, NoKernel;
    ExternalFunctionCall = "externalfunctioncall", [op("Dest", Out)],
        [opt(m::FUNCTION_NAME, Default::Str("")), opt(m::FUNCTION_IMPL, Default::Str("")), opt(m::FUNCTION_KIND, Default::Str(""))],
        &[], shapes::none, NoKernel;
    // A TensorFlow Lite custom operator: its outputs and inputs are lists;
    // no kernel can exist (the operator is code outside the IR).
    TFLiteCustomOperator = "tflitecustomoperator",
        [op("OperandsInfo", Out), var_op("Outputs", Out), var_op("Inputs", In)],
        [opt(m::OPERATOR_TYPE, Default::Str("")), opt(m::OPERATOR_OPTIONS, Default::Str(""))],
        &[], shapes::none, NoKernel;
    // Detection (docs/gir.md, "Detection"): Glow's operands, then optional
    // run-time limits of our own (ONNX feeds them as tensors).
    NonMaxSuppression = "nonmaxsuppression",
        [op("Indices", Out), op("NumberOfSelectedIndices", Out), op("Boxes", In), op("Scores", In),
         opt_op("MaxOutputIn", In), opt_op("IouThresholdIn", In), opt_op("ScoreThresholdIn", In)],
        [opt(m::CENTER_POINT_BOX, Default::Int(0)), opt(m::MAX_OUTPUT_BOXES_PER_CLASS, Default::Int(0)),
         opt(m::IOU_THRESHOLD, Default::Float(0.0)), opt(m::SCORE_THRESHOLD, Default::Float(0.0)),
         opt(m::IS_TF_VERSION4, Default::Bool(false)), extra(m::COMPACT, Default::Bool(false))],
        &[], shapes::non_max_suppression, Detection;
    RoiAlign = "roialign",
        [op("Result", Out), op("FeatureMap", In), op("Boxes", In), op("BatchIndices", In)],
        [opt(m::MODE, Default::Enum("AVG")), req(m::OUTPUT_HEIGHT).rule(R::AtLeastOne),
         req(m::OUTPUT_WIDTH).rule(R::AtLeastOne), opt(m::SAMPLING_RATIO, Default::Int(0)).rule(R::NonNegative),
         opt(m::SPATIAL_SCALE, Default::Float(1.0)), opt(m::ALIGNED, Default::Bool(false)),
         opt(m::ROTATED, Default::Bool(false))],
        &[], shapes::roi_align, Detection;
    BBoxTransform = "bboxtransform",
        [op("BoxOut", Out), op("RoiBatchSplits", Out), op("Rois", In), op("Deltas", In), op("ImInfo", In)],
        [opt(m::WEIGHTS, Default::FloatArray(&[1.0, 1.0, 1.0, 1.0])), opt(m::APPLY_SCALE, Default::Bool(true)),
         opt(m::ROTATED, Default::Bool(false)), opt(m::ANGLE_BOUND_ON, Default::Bool(true)),
         opt(m::ANGLE_BOUND_LO, Default::Int(-90)), opt(m::ANGLE_BOUND_HI, Default::Int(90)),
         opt(m::CLIP_ANGLE_THRESH, Default::Float(1.0)), opt(m::LEGACY_PLUS_ONE, Default::Bool(true))],
        &[], shapes::bbox_transform, Detection;
    // Glow's MFCC without its Scratch operand (the C kernel needs none).
    Mfcc = "mfcc",
        [op("Coefficients", Out), op("Spectrogram", In), op("MelWeights", In), op("MelRanges", In), op("DctMat", In)],
        [req(m::SAMPLE_RATE), req(m::LOWER_FREQUENCY), req(m::UPPER_FREQUENCY),
         req(m::FILTER_BANK_COUNT).rule(R::AtLeastOne), req(m::NUM_COEFFICIENTS).rule(R::AtLeastOne)],
        &[], shapes::mfcc, Detection;
    DebugPrint = "debugprint", [op("Src", In)],
        [opt(m::FORMAT, Default::Str("console")), opt(m::FILE_NAME, Default::Str(""))],
        &[], shapes::none, DebugPrint;
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
    fn variadic_lists_follow_the_fixed_operands() {
        for &o in Opcode::ALL {
            let ops = o.info().operands;
            let Some(first) = ops.iter().position(|d| d.variadic) else {
                continue;
            };
            assert!(ops[first..].iter().all(|d| d.variadic), "{}", o.name());
            assert!(!ops.iter().any(|d| d.optional), "{}", o.name());
            for w in ops[first..].windows(2) {
                assert_ne!(
                    w[0].kind,
                    w[1].kind,
                    "{}: adjacent lists of one kind",
                    o.name()
                );
            }
            for &(d, s) in o.info().inplace {
                assert!(d < first && s < first, "{}", o.name());
            }
        }
    }

    #[test]
    fn variadic_operands_split_by_kind() {
        let info = Opcode::TFLiteCustomOperator.info();
        assert_eq!(info.operand_defs([Out, Out, Out, In]), Ok(vec![0, 1, 1, 2]));
        assert_eq!(info.operand_defs([Out, In, In]), Ok(vec![0, 2, 2]));
        assert_eq!(info.operand_defs([Out]), Ok(vec![0]));
        // An output after an input joins no list.
        assert_eq!(info.operand_defs([Out, In, Out]), Err((2, Some(2))));
        let fixed = Opcode::Copy.info();
        assert_eq!(fixed.operand_defs([Out, In, In]), Err((2, None)));
        assert!(!fixed.accepts_operand_count(3) && info.accepts_operand_count(9));
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
