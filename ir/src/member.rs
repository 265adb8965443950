//! Typed member keys: every member name of the opcode table, declared once
//! with its type.
//!
//! The table (`opcode.rs`) names its members through these keys, and code
//! that builds or reads an instruction does too, so a misspelled member is a
//! compile error and a value of the wrong type does not type-check:
//!
//! ```
//! use glow_ir::member as m;
//! use glow_ir::builder::Builder;
//! use glow_ir::{Function, Mutability, Opcode, Type};
//! let mut f = Function::new("f");
//! let mut b = Builder::new(&mut f);
//! let x = b.weight("x", Type::float(&[1, 4, 4, 1]), Mutability::Mutable);
//! let y = b.weight("y", Type::float(&[1, 2, 2, 1]), Mutability::Mutable);
//! let pool = b.inst("pool", Opcode::MaxPool, &[y, x], &[m::KERNELS.to([2, 2]), m::STRIDES.to([2, 2])]);
//! assert_eq!(f.inst(pool).get(m::KERNELS), Some(&[2, 2][..]));
//! assert_eq!(f.inst(pool).get(m::LAYOUT), Some("NHWC"));
//! ```
//!
//! Giving an opcode a member it does not have (`m::AXIS` to a `maxpool`)
//! panics at once, naming both: it is a bug in the pass or importer that
//! built it, and the verifier could not see it later.
//!
//! A misspelled member does not compile:
//!
//! ```compile_fail
//! let _ = glow_ir::member::KERNLES.to([3, 3]);
//! ```
//!
//! nor does a value of the wrong type:
//!
//! ```compile_fail
//! let _ = glow_ir::member::GROUP.to(1.5);
//! ```

use std::marker::PhantomData;

use crate::function::MemberValue;
use crate::opcode::{
    MemberType, FUSED_ACTIVATIONS, INSTRUMENT_KINDS, LAYOUTS, LENGTHS_MODES, LUT_OPERATORS,
    REDUCTIONS, ROI_ALIGN_MODES,
};
use crate::types::Type;

/// The Rust side of a member type: what a builder passes and a reader gets.
pub trait Kind {
    /// What a builder gives (`i64`, `Vec<i64>`, `Type`, ...).
    type Arg;
    /// What a reader gets back (`i64`, `&[i64]`, `&Type`, ...).
    type Out<'a>;
    /// The table's member type (enums carry their values in the key).
    const TY: MemberType;
    fn wrap(arg: Self::Arg) -> MemberValue;
    fn read<'a>(value: &'a MemberValue) -> Option<Self::Out<'a>>;
}

macro_rules! kinds {
    ($($(#[$doc:meta])* $kind:ident: $arg:ty => $out:ty, $ty:expr, $variant:ident, $read:ident;)*) => {$(
        $(#[$doc])*
        #[derive(Clone, Copy, Debug)]
        pub struct $kind;
        #[allow(clippy::needless_lifetimes)]
        impl Kind for $kind {
            type Arg = $arg;
            type Out<'a> = $out;
            const TY: MemberType = $ty;
            fn wrap(arg: $arg) -> MemberValue {
                MemberValue::$variant(arg)
            }
            fn read<'a>(value: &'a MemberValue) -> Option<$out> {
                value.$read()
            }
        }
    )*};
}

kinds! {
    /// An integer member.
    Int: i64 => i64, MemberType::Int, Int, as_int;
    /// A float member (an integer literal reads as a float too).
    Float: f64 => f64, MemberType::Float, Float, as_float;
    /// `true` or `false`.
    Bool: bool => bool, MemberType::Bool, Bool, as_bool;
    /// An integer array.
    Ints: Vec<i64> => &'a [i64], MemberType::IntArray, IntArray, as_ints;
    /// A float array.
    Floats: Vec<f64> => &'a [f64], MemberType::FloatArray, FloatArray, as_floats;
    /// A type (`Ty` of an allocation or a view).
    Ty: Type => &'a Type, MemberType::Type, Type, as_type;
    /// A string.
    Str: String => &'a str, MemberType::Str, Str, as_str;
    /// One identifier of a fixed list (the key holds the list).
    Enum: String => &'a str, MemberType::Enum(&[]), Enum, as_str;
}

/// A member name with its type. Only this module makes keys.
#[derive(Debug)]
pub struct Key<K> {
    name: &'static str,
    ty: MemberType,
    kind: PhantomData<K>,
}

impl<K> Clone for Key<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Key<K> {}

impl<K: Kind> Key<K> {
    const fn new(name: &'static str) -> Key<K> {
        Key {
            name,
            ty: K::TY,
            kind: PhantomData,
        }
    }

    /// The member's `.gir` name.
    pub const fn name(self) -> &'static str {
        self.name
    }

    /// The member's type in the table.
    pub const fn ty(self) -> MemberType {
        self.ty
    }

    /// This member set to `value`, for `InstData::new` and `Builder::inst`.
    pub fn to(self, value: impl Into<K::Arg>) -> Member {
        Member {
            name: self.name,
            value: K::wrap(value.into()),
        }
    }
}

impl Key<Enum> {
    const fn one_of(name: &'static str, values: &'static [&'static str]) -> Key<Enum> {
        Key {
            name,
            ty: MemberType::Enum(values),
            kind: PhantomData,
        }
    }
}

/// A member given to a constructor: a key's name and a value of its type.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub(crate) name: &'static str,
    pub(crate) value: MemberValue,
}

impl Member {
    pub fn name(&self) -> &'static str {
        self.name
    }
    pub fn value(&self) -> &MemberValue {
        &self.value
    }
}

macro_rules! keys {
    ($($(#[$doc:meta])* $key:ident: $kind:ident = $name:literal $(in $values:expr)?;)*) => {
        $($(#[$doc])* pub const $key: Key<$kind> = keys!(@make $kind, $name $(, $values)?);)*
        /// Every key: its name and type, for the test that the table uses no other.
        pub const ALL: &[(&str, MemberType)] = &[$(($name, $key.ty),)*];
    };
    (@make $kind:ident, $name:literal) => { Key::<$kind>::new($name) };
    (@make $kind:ident, $name:literal, $values:expr) => { Key::one_of($name, $values) };
}

keys! {
    /// The type of an allocation or a view.
    TY: Ty = "Ty";
    /// An allocation's place in a planned arena (-1: not planned).
    OFFSET: Int = "Offset";
    /// Where a view, insert or extract starts, per dimension.
    OFFSETS: Ints = "Offsets";
    /// A splat's value.
    VALUE: Float = "Value";
    KERNELS: Ints = "Kernels";
    STRIDES: Ints = "Strides";
    PADS: Ints = "Pads";
    GROUP: Int = "Group";
    DILATION: Ints = "Dilation";
    LAYOUT: Enum = "Layout" in LAYOUTS;
    FUSED_ACTIVATION: Enum = "FusedActivation" in FUSED_ACTIVATIONS;
    FUSED_ACTIVATION_ARGS: Floats = "FusedActivationArgs";
    OUTPUT_PADDING: Ints = "OutputPadding";
    COUNT_INCLUDE_PADS: Bool = "CountIncludePads";
    /// `convolutiongrad`: false sets `SrcGrad` to zeros instead (the
    /// gradient of a step's input, which nothing reads).
    COMPUTE_SRC_GRAD: Bool = "ComputeSrcGrad";
    AXIS: Int = "Axis";
    KEEP_DIMS: Bool = "KeepDims";
    SELECT_LAST_INDEX: Bool = "SelectLastIndex";
    /// `topk`: the largest (true) or the smallest `K`.
    LARGEST: Bool = "Largest";
    /// `pad`: the pads before each dimension, then after (Glow's `Pad`).
    PAD: Ints = "Pad";
    /// `pad`: 0 constant, 1 reflect, 2 edge (Glow's `PaddingMode`), 3 wrap.
    PADDING_MODE: Int = "PaddingMode";
    /// `resizenearest`, `resizebilinear`: one scale per dimension. The
    /// name is also `embedding`'s bool `Scale` (a key per name and type).
    RESIZE_SCALE: Floats = "Scale";
    /// `spacetodepth`: the side of the square block moved into channels.
    BLOCK_SIZE: Int = "BlockSize";
    /// `cumsum`: the dimension summed along (negative: from the end).
    DIM: Int = "Dim";
    /// `cumsum`: each sum leaves out its own element.
    EXCLUSIVE: Bool = "Exclusive";
    /// `cumsum`: sums run from the end of the dimension.
    REVERSE: Bool = "Reverse";
    /// `mean`: the dimensions averaged over (distinct, any order).
    MEAN_DIMS: Ints = "MeanDims";
    /// `bucketize`: the ascending bucket boundaries.
    BOUNDARIES: Floats = "Boundaries";
    /// `scatterdata`: add the slices instead of writing them.
    CUMULATIVE: Bool = "Cumulative";
    /// `gaussianfill`: the normal distribution's mean.
    MEAN: Float = "Mean";
    /// `gaussianfill`: the standard deviation (Glow's `Scale`; a third type
    /// of the name).
    FILL_SCALE: Float = "Scale";
    /// `gaussianfill`: the generator's seed (a float in Glow's dumps; its
    /// integer part is used).
    SEED: Float = "Seed";
    MIN: Float = "Min";
    MAX: Float = "Max";
    ALPHA: Float = "Alpha";
    BETA: Float = "Beta";
    GAMMA: Float = "Gamma";
    K: Float = "K";
    APPROXIMATE: Bool = "Approximate";
    BATCH_DIMS: Int = "BatchDims";
    REDUCTION: Enum = "Reduction" in REDUCTIONS;
    OFF_VALUE: Float = "OffValue";
    ON_VALUE: Float = "OnValue";
    SHUFFLE: Ints = "Shuffle";
    COUNT: Int = "Count";
    CHANNEL_IDX: Int = "ChannelIdx";
    EPSILON: Float = "Epsilon";
    MOMENTUM: Float = "Momentum";
    HALF_WINDOW_SIZE: Int = "HalfWindowSize";
    LEARNING_RATE: Float = "LearningRate";
    L1_DECAY: Float = "L1Decay";
    L2_DECAY: Float = "L2Decay";
    BATCH_SIZE: Int = "BatchSize";
    FORMAT: Str = "Format";
    FILE_NAME: Str = "FileName";
    // The recommendation, instrumentation and escape-hatch instructions.
    /// `AllOne` promises every length is 1 (a hint; the kernels read `Lengths` anyway).
    LENGTHS_MODE: Enum = "LengthsMode" in LENGTHS_MODES;
    /// The average segment length, a hint for backends (NaN: unknown).
    AVG_LENGTH: Float = "AvgLength";
    /// An embedding row index whose output row is zeros (-1: none).
    PAD_IDX: Int = "PadIdx";
    SCALE: Bool = "Scale";
    SPARSE: Bool = "Sparse";
    /// `Offsets` ends with the end of the last bag.
    HAS_END_OFFSET: Bool = "HasEndOffset";
    USE_FP16_ACCUMULATION: Bool = "UseFP16Accumulation";
    /// The dynamic fullyconnected's input quantization: symmetric (the only form).
    IS_SYMMETRIC: Bool = "IsSymmetric";
    /// The dynamic fullyconnected's input parameters per row (the only form).
    IS_PER_BATCH_ELEMENT: Bool = "IsPerBatchElement";
    DEFAULT_VALUE: Float = "DefaultValue";
    DENSE_LAST_DIM: Int = "DenseLastDim";
    MASK: Ints = "Mask";
    NUM_LABELS: Int = "NumLabels";
    BOUNDS_CHECK_MODE: Int = "BoundsCheckMode";
    /// The element of a trace buffer an event writes.
    INDEX: Int = "Index";
    /// The name of the instruction an `instrument` observes.
    INSTR_REF: Str = "InstrRef";
    ID: Int = "ID";
    INSTRUMENT_KIND: Enum = "InstrumentKind" in INSTRUMENT_KINDS;
    /// `lookuptable`: the operator its table stands for (Glow's `LUTOperator`).
    OPERATOR: Enum = "Operator" in LUT_OPERATORS;
    OPERATOR_ARGS: Floats = "OperatorArgs";
    /// `indexput`: add the values instead of writing them (Glow's).
    ACCUMULATE: Bool = "Accumulate";
    /// `indexput`: how many index tensors Glow's node had.
    NUM_INDICES: Int = "NumIndices";
    FUNCTION_NAME: Str = "FunctionName";
    FUNCTION_IMPL: Str = "FunctionImpl";
    FUNCTION_KIND: Str = "FunctionKind";
    /// The constant left operand of `elementrsubconst` and `elementmulconst`.
    LHS: Float = "LHS";
    /// `modulo`'s divisor.
    DIVISOR: Int = "Divisor";
    /// `modulo`: a negative remainder has the divisor added.
    SIGN_FOLLOW_DIVISOR: Bool = "SignFollowDivisor";
    /// `nantonum`'s replacements for NaN, +inf and -inf.
    NAN: Float = "Nan";
    POS_INF: Float = "PosInf";
    NEG_INF: Float = "NegInf";
    /// The binary cross-entropy losses' `Reduction`, Glow's unsigned code
    /// (0 none, 1 mean, 2 sum). The name is `REDUCTION`'s too: a name may
    /// have one key per type, and each opcode's table row picks one.
    LOSS_REDUCTION: Int = "Reduction";
    /// `batchedpairwisedotproduct(grad)`: how many inputs, and their width.
    NUM_INPUTS: Int = "NumInputs";
    VECTOR_SIZE: Int = "VectorSize";
    /// `thresholdgrad`: inputs at or below it pass no gradient.
    THRESHOLD: Float = "Threshold";
    /// `tflitecustomoperator`: the operator's name and its options.
    OPERATOR_TYPE: Str = "OperatorType";
    OPERATOR_OPTIONS: Str = "OperatorOptions";
    /// `nonmaxsuppression`: boxes as (x, y, w, h) centres when nonzero.
    CENTER_POINT_BOX: Int = "CenterPointBox";
    /// `nonmaxsuppression`: the selections per class (0 or less: no limit).
    MAX_OUTPUT_BOXES_PER_CLASS: Int = "MaxOutputBoxesPerClass";
    IOU_THRESHOLD: Float = "IouThreshold";
    SCORE_THRESHOLD: Float = "ScoreThreshold";
    /// `nonmaxsuppression`: TensorFlow's one-batch, one-class form.
    IS_TF_VERSION4: Bool = "IsTFVersion4";
    /// `nonmaxsuppression`: the selections of all batches in consecutive
    /// rows from the first, the rest -1 (ours, for ONNX).
    COMPACT: Bool = "Compact";
    /// `roialign`: how a bin's samples combine (Glow's `PoolingMode`, and
    /// ONNX's max of weighted corners).
    MODE: Enum = "Mode" in ROI_ALIGN_MODES;
    OUTPUT_HEIGHT: Int = "OutputHeight";
    OUTPUT_WIDTH: Int = "OutputWidth";
    /// `roialign`: samples per bin side (0: from the box size).
    SAMPLING_RATIO: Int = "SamplingRatio";
    SPATIAL_SCALE: Float = "SpatialScale";
    /// `roialign`: box coordinates shifted by half a pixel.
    ALIGNED: Bool = "Aligned";
    ROTATED: Bool = "Rotated";
    /// `bboxtransform`: the divisors of the deltas (x, y, w, h).
    WEIGHTS: Floats = "Weights";
    APPLY_SCALE: Bool = "ApplyScale";
    ANGLE_BOUND_ON: Bool = "AngleBoundOn";
    ANGLE_BOUND_LO: Int = "AngleBoundLo";
    ANGLE_BOUND_HI: Int = "AngleBoundHi";
    CLIP_ANGLE_THRESH: Float = "ClipAngleThresh";
    /// `bboxtransform`: Caffe2's legacy `+ 1` in box widths and heights.
    LEGACY_PLUS_ONE: Bool = "LegacyPlusOne";
    /// `mfcc`: the parameters its constant operands were built for.
    SAMPLE_RATE: Float = "SampleRate";
    LOWER_FREQUENCY: Float = "LowerFrequency";
    UPPER_FREQUENCY: Float = "UpperFrequency";
    FILTER_BANK_COUNT: Int = "FilterBankCount";
    NUM_COEFFICIENTS: Int = "NumCoefficients";
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcode::Opcode;

    #[test]
    fn keys_are_distinct_by_name_and_type() {
        for (i, (n, t)) in ALL.iter().enumerate() {
            for (m, u) in &ALL[..i] {
                assert!(
                    n != m || t != u,
                    "key `{n}` is declared twice with one type"
                );
            }
        }
    }

    #[test]
    fn enum_keys_carry_their_values() {
        for (name, ty) in ALL {
            if let MemberType::Enum(values) = ty {
                assert!(!values.is_empty(), "enum key `{name}` lists no values");
            }
        }
    }

    #[test]
    fn the_table_types_each_member_as_its_key_does() {
        for o in Opcode::ALL {
            for m in o.info().members {
                let key = ALL.iter().find(|(n, t)| *n == m.name && *t == m.ty);
                assert!(
                    key.is_some(),
                    "{}.{}: no key of that name and type",
                    o.name(),
                    m.name
                );
            }
        }
    }

    #[test]
    #[should_panic(expected = "`maxpool` has no member `Axis`")]
    fn a_member_the_opcode_lacks_is_an_error_at_once() {
        let x = crate::Value::Weight(crate::WeightId(0));
        crate::InstData::new("p", Opcode::MaxPool, &[x, x], &[AXIS.to(1)]);
    }

    #[test]
    #[should_panic(expected = "`copy` takes 2 operands, 3 given")]
    fn too_many_operands_are_an_error_at_once() {
        let x = crate::Value::Weight(crate::WeightId(0));
        crate::InstData::new("c", Opcode::Copy, &[x, x, x], &[]);
    }

    #[test]
    fn one_name_read_through_the_key_of_its_type() {
        let x = crate::Value::Weight(crate::WeightId(0));
        let scatter = crate::InstData::new(
            "s",
            Opcode::ScatterND,
            &[x, x, x, x],
            &[REDUCTION.to("add")],
        );
        let loss = crate::InstData::new(
            "l",
            Opcode::SimpleBinaryCrossEntropyWithLogits,
            &[x, x, x],
            &[LOSS_REDUCTION.to(2)],
        );
        assert_eq!(scatter.get(REDUCTION), Some("add"));
        assert_eq!(loss.get(LOSS_REDUCTION), Some(2));
        // The other type's key reads as absent.
        assert_eq!(scatter.get(LOSS_REDUCTION), None);
        assert_eq!(loss.get(REDUCTION), None);
    }

    #[test]
    fn typed_reads_and_writes() {
        let x = crate::Value::Weight(crate::WeightId(0));
        let mut i = crate::InstData::new("s", Opcode::Splat, &[x], &[VALUE.to(2.5)]);
        assert_eq!(i.get(VALUE), Some(2.5));
        i.set(VALUE, -1.0);
        assert_eq!(i.get(VALUE), Some(-1.0));
        // A key of another opcode reads as absent.
        assert_eq!(i.get(AXIS), None);
    }

    #[test]
    fn every_key_is_used_by_the_table() {
        for (name, _) in ALL {
            assert!(
                Opcode::ALL
                    .iter()
                    .any(|o| o.info().members.iter().any(|m| m.name == *name)),
                "key `{name}` names no member of the table"
            );
        }
    }
}
