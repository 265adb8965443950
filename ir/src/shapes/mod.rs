//! Per-opcode shape and element-type rules, referenced from the opcode table
//! (`OpcodeInfo::shape`). They follow Glow's verifier (`lib/IR/Instrs.cpp`,
//! the nodes' `verify`).
//!
//! A rule only runs when the verifier has already checked the operand count,
//! that every operand is a typed buffer and that every member is present and
//! of the right type; it still never panics and never overflows: member
//! values are checked again (bad ones were reported by the verifier, so the
//! rule just skips what depends on them) and all arithmetic is in `i128`.
//!
//! Element-type decisions (the "kinds" each opcode accepts):
//! - float only (`float`, `float16`, `bfloat16`, `float64`): `sigmoid`, `tanh`,
//!   `softmax`, `logsoftmax`, `batchnormalization`, `localresponsenormalization`,
//!   and the `Src` of `argmax`/`argmin` (whose `Dest` is an index kind).
//! - float or quantized: `convolution`, `maxpool`, `avgpool`,
//!   `fullyconnected`, `matmul`, `batchmatmul`, `batchedadd`,
//!   `batchedreduceadd`, `relu`, `clip`. Inputs and output share the base kind;
//!   quantization parameters may differ (Glow rescales), and a quantized bias
//!   (`convolution`, `fullyconnected`) or slice (`batchedadd`) may be any
//!   quantized kind (Glow uses `i32` biases).
//! - float, quantized or index: the binary arithmetic ops (`elementadd` ...
//!   `elementmin`) and the inputs of `elementcmplte` (whose `Dest` is `bool`).
//!   All operands share shape and base kind; quantization parameters may mix
//!   (docs/gir.md §8, "Verifier rules").
//! - any kind, including `bool`: `copy` (identical types), `transpose`,
//!   `inserttensor`, `extracttensor`, `gatherelements`, `gathernd`,
//!   `scatterelements`, `scatternd`, `onehot` (same element type exactly:
//!   they move data; indices are `index32` or `index64`), `elementselect`
//!   (`Cond` is `bool`; `LHS`, `RHS`, `Dest` share a base kind), `splat`, `touch`, `debugprint`, `tensorview`.
//! - `quantize`: float → quantized; `dequantize`: quantized → float;
//!   `rescalequantized`: quantized → quantized of the same base kind.
//! - A `tensorview` may change the element kind (a reinterpretation, as Glow
//!   allows): its *byte* range must lie inside the source buffer.

mod detection;
mod grad;
mod index;
mod linalg;
mod movement;
mod quant;
mod rearrange;
mod sort;
mod sparse;
mod spatial;

pub use detection::{bbox_transform, mfcc, non_max_suppression, roi_align};
pub use grad::{
    activation_grad, avg_pool_grad, batch_norm_grad, bce_with_logits, convolution_grad,
    cross_entropy_loss, cross_entropy_loss_grad, lrn_grad, max_pool_with_argmax,
    max_pool_with_argmax_grad, pairwise_dot, pairwise_dot_grad, sgd, softmax_grad, threshold_grad,
};
pub use index::{arg_min_max, gather_elements, gather_nd, one_hot, scatter_elements, scatter_nd};
pub use linalg::dynamic_fully_connected;
pub use linalg::{
    batch_matmul, batch_normalization, batched_add, batched_reduce_add, fully_connected,
    layer_normalization, lrn, matmul, rowwise_fully_connected, softmax,
};
pub use movement::{extract_tensor, insert_tensor, tensorview, transpose};
pub use rearrange::{
    adaptive_avg_pool, batch_one_hot, bucketize, concat, cumsum, flip, gaussian_fill, index_add,
    mean, nonzero, pad, resize, scatter_data, space_to_depth, PADDING_MODES,
};
pub use sort::topk;
pub use sparse::{
    batch_sparse_to_dense, batched_unary_embeddings_bags, embedding, embedding_bag,
    fill_examples_with_indicator, fused_sls, gather_ranges, lengths_range_fill, lengths_sum,
    lengths_to_ranges, permute_pooled_embeddings, pruned_array_lookup, rowwise_quantized_sls,
    sparse_label_split, sparse_lengths_sum, sparse_to_dense_mask,
};
pub use spatial::{channelwise_convolution, conv_transpose, convolution, convolution3d, pool};

use crate::function::InstData;
use crate::member::{self as m, Ints, Key, Kind};
use crate::types::{ElemKind, Type};

/// What a shape rule sees: the instruction and each operand's type.
pub struct ShapeCtx<'a> {
    pub inst: &'a InstData,
    pub types: Vec<&'a Type>,
}

/// A broken shape rule, pointing at an operand or a member when it can.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    pub operand: Option<usize>,
    pub member: Option<&'static str>,
    pub message: String,
}

pub type ShapeRule = fn(&ShapeCtx) -> Vec<ShapeError>;

impl ShapeError {
    pub fn at_operand(k: usize, message: impl Into<String>) -> ShapeError {
        ShapeError {
            operand: Some(k),
            member: None,
            message: message.into(),
        }
    }
    pub fn at_member(name: &'static str, message: impl Into<String>) -> ShapeError {
        ShapeError {
            operand: None,
            member: Some(name),
            message: message.into(),
        }
    }
}

impl<'a> ShapeCtx<'a> {
    /// Type of operand `k` (rules run only with one type per operand).
    fn ty(&self, k: usize) -> &'a Type {
        self.types[k]
    }
    /// The table name of operand `k` (`Dest`, `Src`, ...).
    fn name(&self, k: usize) -> &'static str {
        self.inst.operand_name(k).unwrap_or("operand")
    }
    fn opcode(&self) -> &'static str {
        self.inst.opcode.name()
    }
    fn get<K: Kind>(&self, key: Key<K>) -> Option<K::Out<'a>> {
        self.inst.get(key)
    }
}

/// Which element kinds an operand accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kinds {
    Float,
    /// `float` (32-bit) only: the training instructions.
    F32,
    FloatOrQuantized,
    Numeric,
    Quantized,
    Bool,
    /// index32 or index64.
    Index,
    /// `float`, a plain integer kind or `bool` (what `convertto` converts).
    Plain,
    /// A plain integer kind: index32, index64, int8, uint8.
    Int,
    /// `float` or a plain integer kind.
    FloatOrInt,
    /// Plain `int8` or `uint8`: per-axis quantized values.
    Byte,
    Any,
}

impl Kinds {
    fn accepts(self, e: ElemKind) -> bool {
        match self {
            Kinds::Float => e.is_float(),
            Kinds::F32 => e == ElemKind::Float,
            Kinds::FloatOrQuantized => e.is_float() || e.is_quantized(),
            Kinds::Numeric => e != ElemKind::Bool,
            Kinds::Quantized => e.is_quantized(),
            Kinds::Bool => e == ElemKind::Bool,
            Kinds::Index => matches!(e, ElemKind::Index32 | ElemKind::Index64),
            Kinds::Plain => e == ElemKind::Float || e.is_plain_int() || e == ElemKind::Bool,
            Kinds::Int => e.is_plain_int(),
            Kinds::FloatOrInt => e == ElemKind::Float || e.is_plain_int(),
            Kinds::Byte => matches!(e, ElemKind::Int8 | ElemKind::UInt8),
            Kinds::Any => true,
        }
    }
    fn describe(self) -> &'static str {
        match self {
            Kinds::Float => "float element types",
            Kinds::F32 => "`float`",
            Kinds::FloatOrQuantized => "float or quantized element types",
            Kinds::Numeric => "float, quantized or index element types",
            Kinds::Quantized => "quantized element types",
            Kinds::Bool => "`bool`",
            Kinds::Index => "`index32` or `index64`",
            Kinds::Plain => "`float`, `index32`, `index64`, `int8`, `uint8` or `bool`",
            Kinds::Int => "`index32`, `index64`, `int8` or `uint8`",
            Kinds::FloatOrInt => "`float`, `index32`, `index64`, `int8` or `uint8`",
            Kinds::Byte => "`int8` or `uint8` (per-axis parameters are operands)",
            Kinds::Any => "any element type",
        }
    }
}

/// How much of the element type operands must share.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Same {
    /// Same kind, quantization parameters may differ.
    Base,
    /// Same kind and quantization parameters.
    Exact,
}

/// Operand `k` must have exactly the element kind `want` (a parameter
/// operand: `float` scales, `index32` offsets).
fn exact_kind(ctx: &ShapeCtx, k: usize, want: ElemKind, errs: &mut Vec<ShapeError>) -> bool {
    let e = ctx.ty(k).elem;
    if e != want {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has element type {e} but must be `{want}`",
                ctx.name(k)
            ),
        ));
    }
    e == want
}

/// Operand `k` must have an element kind in `kinds`.
fn check_kind(ctx: &ShapeCtx, k: usize, kinds: Kinds, errs: &mut Vec<ShapeError>) -> bool {
    let e = ctx.ty(k).elem;
    if kinds.accepts(e) {
        return true;
    }
    errs.push(ShapeError::at_operand(
        k,
        format!(
            "`{}` has element type {} but `{}` accepts {} here",
            ctx.name(k),
            e,
            ctx.opcode(),
            kinds.describe()
        ),
    ));
    false
}

/// Operand `k` must share the element type of operand `r`.
fn check_same_elem(ctx: &ShapeCtx, k: usize, r: usize, same: Same, errs: &mut Vec<ShapeError>) {
    let (a, b) = (ctx.ty(k).elem, ctx.ty(r).elem);
    let ok = match same {
        Same::Base => a.same_base(b),
        Same::Exact => a == b,
    };
    if !ok {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has element type {} but `{}` has {}",
                ctx.name(k),
                a,
                ctx.name(r),
                b
            ),
        ));
    }
}

/// Operand `k` must have the dims of operand `r`.
fn check_same_shape(ctx: &ShapeCtx, k: usize, r: usize, errs: &mut Vec<ShapeError>) {
    if !ctx.ty(k).same_shape(ctx.ty(r)) {
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has type {} but `{}` has type {}: `{}` needs the same shape",
                ctx.name(k),
                ctx.ty(k),
                ctx.name(r),
                ctx.ty(r),
                ctx.opcode()
            ),
        ));
    }
}

/// Operand `k` must have `dims`; `verb` is "produces" for outputs and
/// "expects" for inputs.
fn check_dims(ctx: &ShapeCtx, k: usize, dims: &[u64], verb: &str, errs: &mut Vec<ShapeError>) {
    let t = ctx.ty(k);
    if t.dims != dims {
        let want = Type::new(t.elem, dims);
        errs.push(ShapeError::at_operand(
            k,
            format!(
                "`{}` has type {} but `{}` {} {}",
                ctx.name(k),
                t,
                ctx.opcode(),
                verb,
                want
            ),
        ));
    }
}

/// Operand `k` must have rank `rank`.
fn check_rank(ctx: &ShapeCtx, k: usize, rank: usize, errs: &mut Vec<ShapeError>) -> bool {
    let t = ctx.ty(k);
    if t.rank() == rank {
        return true;
    }
    errs.push(ShapeError::at_operand(
        k,
        format!(
            "`{}` must be {}-D for `{}`, found {}",
            ctx.name(k),
            rank,
            ctx.opcode(),
            t
        ),
    ));
    false
}

/// The common element-wise pattern: every operand in `ops` accepts `kinds`,
/// shares the base kind and the shape of the first one.
fn uniform(ctx: &ShapeCtx, ops: &[usize], kinds: Kinds, errs: &mut Vec<ShapeError>) {
    let Some(&r) = ops.first() else { return };
    let ref_ok = check_kind(ctx, r, kinds, errs);
    for &k in &ops[1..] {
        if check_kind(ctx, k, kinds, errs) && ref_ok {
            check_same_elem(ctx, k, r, Same::Base, errs);
        }
        check_same_shape(ctx, k, r, errs);
    }
}

/// Operand indices `0..n`.
fn all_operands(ctx: &ShapeCtx) -> Vec<usize> {
    (0..ctx.types.len()).collect()
}

/// No shape constraints (`allocactivation`, `splat`, `touch`, ...).
pub fn none(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}

/// `copy`: `Dest` and `Src` have identical types.
pub fn same_type(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    if ctx.types.len() == 2 && ctx.ty(0) != ctx.ty(1) {
        errs.push(ShapeError::at_operand(
            1,
            format!(
                "`Src` has type {} but `Dest` has type {}: `{}` needs identical types",
                ctx.ty(1),
                ctx.ty(0),
                ctx.opcode()
            ),
        ));
    }
    errs
}

/// Binary arithmetic: same shape and base kind; float, quantized or index.
/// Quantized operands may mix `i8` and `ui8` and their parameters
/// (`quant::binary`).
pub fn elementwise(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    if ctx.types.len() == 3 && ctx.types.iter().any(|t| t.elem.is_quantized()) {
        quant::binary(ctx, [0, 1, 2], &mut errs);
        check_same_shape(ctx, 1, 0, &mut errs);
        check_same_shape(ctx, 2, 0, &mut errs);
        return errs;
    }
    uniform(ctx, &all_operands(ctx), Kinds::Numeric, &mut errs);
    errs
}

/// The bitwise and shift instructions: same shape and kind, a plain
/// integer kind.
pub fn int_elementwise(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    uniform(ctx, &all_operands(ctx), Kinds::Int, &mut errs);
    errs
}

/// `elementisnan`: `Dest` is `bool` of the shape of the `float` `Src`.
pub fn float_predicate(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    check_kind(ctx, 0, Kinds::Bool, &mut errs);
    check_kind(ctx, 1, Kinds::Float, &mut errs);
    check_same_shape(ctx, 1, 0, &mut errs);
    errs
}

/// `elementfmod`: same shape and kind, `float` or a plain integer kind.
pub fn plain_elementwise(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    uniform(ctx, &all_operands(ctx), Kinds::FloatOrInt, &mut errs);
    errs
}

/// `relu`, `clip`: same shape and base kind; float or quantized (a
/// quantized `Dest` may have other parameters: the result is rescaled).
pub fn activation(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    if ctx.types.len() == 2 && ctx.ty(1).elem.is_quantized() {
        if check_kind(ctx, 0, Kinds::Quantized, &mut errs) {
            quant::rescale(ctx, &mut errs);
        }
        check_same_shape(ctx, 0, 1, &mut errs);
        return errs;
    }
    uniform(ctx, &all_operands(ctx), Kinds::FloatOrQuantized, &mut errs);
    errs
}

/// `sigmoid`, `tanh`: same shape and kind; float only.
pub fn float_unary(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    uniform(ctx, &all_operands(ctx), Kinds::Float, &mut errs);
    errs
}

/// `elementcmplte`: `Dest` is `bool` of the inputs' shape; inputs agree.
pub fn compare(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    check_kind(ctx, 0, Kinds::Bool, &mut errs);
    uniform(ctx, &[1, 2], Kinds::Numeric, &mut errs);
    check_same_shape(ctx, 0, 1, &mut errs);
    errs
}

/// `gather @out Dest, @in Data, @in Indices { Axis }`: `Dest` is `Data`
/// with the `Axis` dimension replaced by `Indices`' dimensions; the same
/// element type; indices are index32 or index64.
pub fn gather(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, indices) = (0, 1, 2);
    let mut errs = Vec::new();
    check_kind(ctx, indices, Kinds::Index, &mut errs);
    if ctx.ty(dest).elem != ctx.ty(data).elem {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has element type {} but `Data` has {}",
                ctx.ty(dest).elem,
                ctx.ty(data).elem
            ),
        ));
    }
    let dims = &ctx.ty(data).dims;
    let Some(axis) = linalg::axis_in_range(ctx, m::AXIS, dims.len(), data, &mut errs) else {
        return errs;
    };
    let mut want: Vec<u64> = dims[..axis].to_vec();
    want.extend(&ctx.ty(indices).dims);
    want.extend(&dims[axis + 1..]);
    check_dims(ctx, dest, &want, "produces", &mut errs);
    errs
}

/// `elementand`/`or`/`xor`/`not`: every operand is `bool` of one shape.
pub fn logical(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    uniform(ctx, &all_operands(ctx), Kinds::Bool, &mut errs);
    errs
}

/// `elementselect`: `Cond` is `bool`; everything has `Dest`'s shape.
pub fn select(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    check_kind(ctx, 1, Kinds::Bool, &mut errs);
    check_same_shape(ctx, 1, 0, &mut errs);
    uniform(ctx, &[0, 2, 3], Kinds::Any, &mut errs);
    errs
}

/// `quantize`: float `Src` → quantized `Dest` of the same shape; per axis
/// (`Scales`, `Offsets`), `Dest` is plain `int8`/`uint8`.
pub fn quantize(ctx: &ShapeCtx) -> Vec<ShapeError> {
    if ctx.types.len() > 2 {
        return per_axis(ctx, 0);
    }
    let mut errs = convert(ctx, Kinds::Float, Kinds::Quantized);
    if errs.is_empty() {
        quant::params(ctx, 0, &mut errs);
    }
    errs
}

/// `dequantize`: quantized `Src` → float `Dest` of the same shape; per axis
/// (`Scales`, `Offsets`), `Src` is plain `int8`/`uint8`.
pub fn dequantize(ctx: &ShapeCtx) -> Vec<ShapeError> {
    if ctx.types.len() > 2 {
        return per_axis(ctx, 1);
    }
    let mut errs = convert(ctx, Kinds::Quantized, Kinds::Float);
    if errs.is_empty() {
        quant::params(ctx, 1, &mut errs);
    }
    errs
}

/// The per-axis form of `quantize`/`dequantize`/`rescalequantized`: operand
/// `q` (Dest or Src) holds the bytes, the other side is float (quantized for
/// `rescalequantized`); `Scales` (float) and `Offsets`
/// (index32) both given, each with one value per index along `Axis`.
fn per_axis(ctx: &ShapeCtx, q: usize) -> Vec<ShapeError> {
    let mut errs = if ctx.inst.opcode == crate::opcode::Opcode::RescaleQuantized {
        let mut errs = convert(ctx, Kinds::Byte, Kinds::Quantized);
        if errs.is_empty() {
            quant::params(ctx, 0, &mut errs);
        }
        errs
    } else if q == 0 {
        convert(ctx, Kinds::Float, Kinds::Byte)
    } else {
        convert(ctx, Kinds::Byte, Kinds::Float)
    };
    if ctx.types.len() < 4 {
        errs.push(ShapeError::at_operand(
            2,
            format!(
                "`{}` per axis takes `Scales` and `Offsets`; `Offsets` is missing",
                ctx.opcode()
            ),
        ));
        return errs;
    }
    let dims = &ctx.ty(q).dims;
    let Some(axis) = linalg::axis_in_range(ctx, m::AXIS, dims.len(), q, &mut errs) else {
        return errs;
    };
    let n = dims[axis];
    for (k, want) in [(2, ElemKind::Float), (3, ElemKind::Index32)] {
        if exact_kind(ctx, k, want, &mut errs) {
            check_dims(ctx, k, &[n], "expects", &mut errs);
        }
    }
    errs
}

/// `rescalequantized`: quantized → quantized of the same shape, any kinds
/// (`i32` accumulators to `i8`, `ui8` to `i8`, ...).
pub fn rescale_quantized(ctx: &ShapeCtx) -> Vec<ShapeError> {
    if ctx.types.len() > 2 {
        return per_axis(ctx, 1);
    }
    let mut errs = convert(ctx, Kinds::Quantized, Kinds::Quantized);
    if errs.is_empty() {
        quant::rescale(ctx, &mut errs);
    }
    errs
}

fn convert(ctx: &ShapeCtx, src: Kinds, dest: Kinds) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    check_kind(ctx, 0, dest, &mut errs);
    check_kind(ctx, 1, src, &mut errs);
    check_same_shape(ctx, 0, 1, &mut errs);
    errs
}

/// `convertto`: `Src` → `Dest` of the same shape, each `float`, a plain
/// integer kind or `bool`.
pub fn convert_to(ctx: &ShapeCtx) -> Vec<ShapeError> {
    convert(ctx, Kinds::Plain, Kinds::Plain)
}

/// `intlookuptable`: `Src` and `Dest` are 8-bit quantized kinds of one
/// shape, `Mapping` holds 256 elements of `Dest`'s element type; `Dest[i] =
/// Mapping[Src[i] - lowest]` (the stored value's rank in its kind, 0..255).
pub fn int_lookup_table(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, mapping) = (0, 1, 2);
    let mut errs = Vec::new();
    for k in [dest, src] {
        quant::compute(ctx, k, &mut errs);
    }
    check_same_shape(ctx, dest, src, &mut errs);
    let (m, d) = (ctx.ty(mapping), ctx.ty(dest));
    if m.elem != d.elem || m.dims != [256] {
        errs.push(ShapeError::at_operand(
            mapping,
            format!(
                "`Mapping` has type {m} but must be {}",
                Type::new(d.elem, &[256])
            ),
        ));
    }
    errs
}

/// `quantizationprofile` (Glow's `QuantizationProfile`): a `float`
/// `InputTensor` of any shape, a `float` `Histogram` of one dimension (its
/// bins) and `ComputationInfo` `float<2>` (the running min and max), the
/// last two updated in place.
pub fn quantization_profile(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (input, hist, info) = (0, 1, 2);
    let mut errs = Vec::new();
    let e = ctx.ty(input).elem;
    if e != ElemKind::Float {
        errs.push(ShapeError::at_operand(
            input,
            format!("`InputTensor` has element type {e} but must be `float`"),
        ));
    }
    let h = ctx.ty(hist);
    if h.elem != ElemKind::Float || h.rank() != 1 {
        errs.push(ShapeError::at_operand(
            hist,
            format!("`Histogram` has type {h} but must be `float<N>` (its N bins)"),
        ));
    }
    let c = ctx.ty(info);
    if c.elem != ElemKind::Float || c.dims != [2] {
        errs.push(ShapeError::at_operand(
            info,
            format!("`ComputationInfo` has type {c} but must be `float<2>` (min, max)"),
        ));
    }
    errs
}

/// An `i64` member value as a positive `i128`, for checked arithmetic.
fn positive(v: i64) -> Option<i128> {
    (v > 0).then_some(v as i128)
}

/// A 2-element array member of positive values (`Kernels`, `Strides`, ...).
fn pair(ctx: &ShapeCtx, member: Key<Ints>) -> Option<[i128; 2]> {
    match ctx.get(member)? {
        &[a, b] => Some([positive(a)?, positive(b)?]),
        _ => None,
    }
}

/// The 4 non-negative `Pads` (top, left, bottom, right).
fn pads(ctx: &ShapeCtx) -> Option<[i128; 4]> {
    match ctx.get(m::PADS)? {
        &[t, l, b, r] if [t, l, b, r].iter().all(|&p| p >= 0) => {
            Some([t as i128, l as i128, b as i128, r as i128])
        }
        _ => None,
    }
}

/// An `i128` back to a dimension, if it is one.
fn dim(v: i128) -> Option<u64> {
    u64::try_from(v).ok().filter(|&d| d > 0)
}

#[cfg(test)]
mod tests;
