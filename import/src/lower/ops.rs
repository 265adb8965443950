//! The importer's op table: every ONNX op it lowers, with the function that
//! lowers it, the IR instruction it becomes when it is one, the element
//! kinds its run-time inputs may have and what the QDQ folds do with it.
//! The dispatch, the supported-ops list of the error message, the
//! input-kind check, the QDQ fold and the docs checks all read this table,
//! so an op is added in one place.

use super::{
    attention, compose, convtranspose, deform, detection, dft, elementwise, fold, grid, index,
    integer, linalg, math, nn, norm, pool, qdq, recurrence, recurrent, rotary, scan, select,
    sequence, shape, sort, static_shape, Lowerer, Val,
};
use crate::error::Result;
use crate::onnx::NodeProto;
use glow_ir::Opcode;

/// Lowers one node: the values of its outputs, in order (fewer when
/// trailing ones are not produced).
type Handler = fn(&mut Lowerer<'_>, &NodeProto) -> Result<Vec<Val>>;

/// Which element kinds an op's run-time (activation) inputs may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kinds {
    /// Float only. A non-float run-time input after the first must be an
    /// import-time constant (a shape, axes, indices); any other is unsupported.
    Float,
    /// Float, and a run-time bool at this input, made plain (Attention's mask).
    FloatAndBoolAt(usize),
    /// Any kind; a bool buffer stored negated is made plain first.
    Any,
    /// Any kind, bools read as stored: the op takes a negated buffer as
    /// such (Where swaps its arms, Not flips the flag).
    AnyStoredBool,
}

/// What lower/qdq.rs does with a node before its handler runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qdq {
    /// A DequantizeLinear of an activation waits for its readers.
    Defer,
    /// With constant parameters and weights, the quantized instruction.
    Quantized,
    /// A float op between dequantized inputs and a QuantizeLinear folds
    /// into one quantized instruction of this kind.
    Fold(QdqFold),
}

/// The quantized instruction a QDQ group folds into (docs/import.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QdqFold {
    /// `convolution` or `channelwisequantizedconvolution`.
    Conv,
    /// `fullyconnected`, `matmul`, `batchmatmul` or a 1x1 channelwise convolution.
    Gemm,
    /// `elementadd`, `elementsub`, `elementmul`.
    Binary,
    /// `maxpool`, `avgpool`.
    Pool,
    /// `relu`, `clip`, rescaled.
    Activation,
    /// `intlookuptable`.
    Lookup,
    /// The op's own lowering on the quantized elements, then a rescale.
    Movement,
}

/// One row of the table.
#[derive(Debug)]
pub struct OpDef {
    /// The ONNX op type (default domain).
    pub name: &'static str,
    /// The one IR instruction a float activation (of any shape) becomes,
    /// when the lowering is exactly that; `None` for composed lowerings.
    pub opcode: Option<Opcode>,
    pub kinds: Kinds,
    pub qdq: Option<Qdq>,
    lower: Handler,
}

impl OpDef {
    pub(super) fn lower(&self, l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
        (self.lower)(l, node)
    }
}

const fn op(name: &'static str, lower: Handler, opcode: Option<Opcode>, kinds: Kinds) -> OpDef {
    OpDef {
        name,
        opcode,
        kinds,
        qdq: None,
        lower,
    }
}

impl OpDef {
    /// The same row with a QDQ stage.
    const fn qdq(self, qdq: Qdq) -> OpDef {
        OpDef {
            qdq: Some(qdq),
            ..self
        }
    }
}

/// The table order: case-insensitive, ties broken by the exact bytes so
/// that the order is total and a lookup stays case-sensitive.
fn order(a: &str, b: &str) -> std::cmp::Ordering {
    let lower = |s: &str| {
        s.bytes()
            .map(|c| c.to_ascii_lowercase())
            .collect::<Vec<_>>()
    };
    lower(a).cmp(&lower(b)).then_with(|| a.cmp(b))
}

/// The row of ONNX op type `name`.
pub(crate) fn find(name: &str) -> Option<&'static OpDef> {
    OPS.binary_search_by(|d| order(d.name, name))
        .ok()
        .map(|i| &OPS[i])
}

/// The supported op types, comma-separated in table order.
pub fn supported_ops() -> String {
    OPS.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
}

/// IsNaN and IsInf produce one value.
fn is_special(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    Ok(vec![select::is_special(l, node, &out)?])
}

/// MaxPool and AveragePool cases with no single instruction (3-D, or
/// `ceil_mode` with `count_include_pad`) are composed in pool.rs, as is
/// MaxPool of int8 and uint8 tensors.
fn max_average_pool(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    if node.op_type == "MaxPool" {
        if let Some(v) = pool::small_int_max_pool(l, node)? {
            return Ok(v);
        }
    }
    if pool::composed(l, node)? {
        pool::pool(l, node)
    } else {
        nn::pool(l, node)
    }
}

/// A Constant's ONNX dtype is kept for the QDQ folds of its readers.
fn constant(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let outs = shape::lower(l, node)?;
    qdq::record_constant_dtype(l, node);
    Ok(outs)
}

use Kinds::{Any, AnyStoredBool, Float, FloatAndBoolAt};
use Opcode as O;
use Qdq::{Defer, Fold, Quantized};
use QdqFold::{Activation, Binary, Conv, Gemm, Lookup, Movement, Pool};

/// Every op the importer lowers, in `order` (a test keeps it so; `find`
/// searches it by halves).
pub static OPS: &[OpDef] = &[
    op("Abs", math::unary, None, Float),
    op("Acos", elementwise::unary, Some(O::ElementAcos), Float),
    op("Acosh", elementwise::unary, Some(O::ElementAcosh), Float),
    op("Add", elementwise::binary, Some(O::ElementAdd), Any).qdq(Fold(Binary)),
    op("And", fold::lower, Some(O::ElementAnd), Any),
    op("ArgMax", index::lower, None, Float),
    op("ArgMin", index::lower, None, Float),
    op("Asin", elementwise::unary, Some(O::ElementAsin), Float),
    op("Asinh", elementwise::unary, Some(O::ElementAsinh), Float),
    op("Atan", elementwise::unary, Some(O::ElementAtan), Float),
    op("Atanh", elementwise::unary, Some(O::ElementAtanh), Float),
    op("Attention", attention::attention, None, FloatAndBoolAt(3)),
    op("AveragePool", max_average_pool, None, Float).qdq(Fold(Pool)),
    op("BatchNormalization", nn::batchnorm, None, Float),
    op("BitCast", fold::lower, None, Any),
    op("BitShift", integer::bitwise, None, Any),
    op(
        "BitwiseAnd",
        integer::bitwise,
        Some(O::ElementBitwiseAnd),
        Any,
    ),
    op("BitwiseNot", integer::bitwise_not, None, Any),
    op(
        "BitwiseOr",
        integer::bitwise,
        Some(O::ElementBitwiseOr),
        Any,
    ),
    op(
        "BitwiseXor",
        integer::bitwise,
        Some(O::ElementBitwiseXor),
        Any,
    ),
    op("Cast", fold::lower, None, Any),
    op("CastLike", fold::lower, None, Any),
    op("CausalConvWithState", recurrence::causal_conv, None, Float),
    op("Ceil", elementwise::unary, Some(O::ElementCeil), Float),
    op("Celu", elementwise::unary, Some(O::Celu), Float),
    op("Clip", elementwise::unary, Some(O::Clip), Any).qdq(Fold(Activation)),
    op("Concat", shape::lower, None, Any).qdq(Fold(Movement)),
    op("Constant", constant, None, Float),
    op("ConstantOfShape", shape::lower, None, Float),
    op("Conv", nn::conv, None, Float).qdq(Fold(Conv)),
    op("ConvInteger", qdq::integer, None, Any),
    op("ConvTranspose", convtranspose::conv_transpose, None, Float),
    op("Cos", elementwise::unary, Some(O::ElementCos), Float).qdq(Fold(Lookup)),
    op("Cosh", elementwise::unary, Some(O::ElementCosh), Float),
    op("CumProd", scan::cumsum, None, Any),
    op("CumSum", scan::cumsum, None, Any),
    op("DeformConv", deform::deform_conv, None, Float),
    op("DepthToSpace", fold::lower, None, Any),
    op("DequantizeLinear", qdq::dequantize_linear, None, Any).qdq(Defer),
    op("Det", compose::det, None, Float),
    op("DFT", dft::dft, None, Float),
    op("Div", elementwise::binary, Some(O::ElementDiv), Any),
    op("Dropout", elementwise::unary, None, Float),
    op(
        "DynamicQuantizeLinear",
        qdq::dynamic_quantize_linear,
        None,
        Float,
    ),
    op("Elu", elementwise::unary, Some(O::Elu), Float),
    op("Equal", fold::lower, Some(O::ElementCmpEQ), Any),
    op("Erf", elementwise::unary, Some(O::ElementErf), Float).qdq(Fold(Lookup)),
    op("Exp", elementwise::unary, Some(O::ElementExp), Float).qdq(Fold(Lookup)),
    op("Expand", static_shape::expand_tile, None, Any),
    op("EyeLike", integer::eye_like, None, Any),
    op("Flatten", shape::lower, None, Any).qdq(Fold(Movement)),
    op("Floor", elementwise::unary, Some(O::ElementFloor), Float),
    op("Gather", fold::lower, None, Any),
    op("GatherElements", index::lower, None, Any),
    op("GatherND", index::lower, None, Any),
    op("Gelu", elementwise::unary, Some(O::Gelu), Float),
    op("Gemm", linalg::gemm, None, Float).qdq(Fold(Gemm)),
    op("GlobalAveragePool", nn::pool, None, Float).qdq(Fold(Pool)),
    op("GlobalMaxPool", nn::pool, None, Float).qdq(Fold(Pool)),
    op("Greater", fold::lower, Some(O::ElementCmpLT), Any),
    op("GreaterOrEqual", fold::lower, Some(O::ElementCmpLTE), Any),
    op("GridSample", grid::grid_sample, None, Float),
    op("GroupNormalization", compose::normalization, None, Float),
    op("GRU", recurrent::lower, None, Float),
    op("Hardmax", index::lower, None, Float),
    op("HardSigmoid", elementwise::unary, None, Float),
    op("HardSwish", elementwise::unary, None, Float),
    op("Identity", math::unary, None, Any).qdq(Fold(Movement)),
    op("InstanceNormalization", compose::normalization, None, Float),
    op("IsInf", is_special, None, Float),
    op("IsNaN", is_special, Some(O::ElementIsNaN), Float),
    op("LayerNormalization", norm::layer_norm, None, Float),
    op("LeakyRelu", elementwise::unary, Some(O::LeakyRelu), Float),
    op("Less", fold::lower, Some(O::ElementCmpLT), Any),
    op("LessOrEqual", fold::lower, Some(O::ElementCmpLTE), Any),
    op("LinearAttention", recurrence::linear_attention, None, Float),
    op("Log", elementwise::unary, Some(O::ElementLog), Float).qdq(Fold(Lookup)),
    op("LogSoftmax", linalg::softmax, Some(O::LogSoftMax), Float),
    op("LpNormalization", compose::normalization, None, Float),
    op("LpPool", pool::lp_pool, None, Float),
    op("LRN", nn::lrn, None, Float),
    op("LSTM", recurrent::lower, None, Float),
    op("MatMul", linalg::matmul, None, Float).qdq(Fold(Gemm)),
    op("MatMulInteger", qdq::integer, None, Any),
    op("Max", math::variadic, Some(O::ElementMax), Any).qdq(Fold(Binary)),
    op("MaxPool", max_average_pool, None, Any).qdq(Fold(Pool)),
    op("MaxUnpool", pool::max_unpool, None, Any),
    op("Mean", math::variadic, None, Float),
    op(
        "MeanVarianceNormalization",
        compose::normalization,
        None,
        Float,
    ),
    op("Min", math::variadic, Some(O::ElementMin), Any).qdq(Fold(Binary)),
    op("Mish", elementwise::unary, None, Float),
    op("Mod", integer::modulo, None, Any),
    op("Mul", elementwise::binary, Some(O::ElementMul), Any).qdq(Fold(Binary)),
    op("Neg", math::unary, None, Float),
    op("NegativeLogLikelihoodLoss", index::lower, None, Any),
    op("NonMaxSuppression", detection::nms, None, Any),
    op("Not", fold::lower, None, AnyStoredBool),
    op("OneHot", index::lower, None, Any),
    op("Or", fold::lower, Some(O::ElementOr), Any),
    op("Pad", static_shape::pad, None, Any),
    op("Pow", integer::pow, Some(O::ElementPow), Any),
    op("PRelu", math::prelu, None, Float),
    op("QLinearConv", qdq::qlinear, None, Any).qdq(Quantized),
    op("QLinearMatMul", qdq::qlinear, None, Any).qdq(Quantized),
    op("QuantizeLinear", qdq::quantize_linear, None, Any),
    op("Range", fold::lower, None, Float),
    op("Reciprocal", math::unary, None, Float),
    op("ReduceL1", static_shape::reduce, None, Float),
    op("ReduceL2", static_shape::reduce, None, Float),
    op("ReduceLogSum", static_shape::reduce, None, Float),
    op("ReduceLogSumExp", static_shape::reduce, None, Float),
    op("ReduceMax", static_shape::reduce, None, Float),
    op("ReduceMean", static_shape::reduce, None, Float),
    op("ReduceMin", static_shape::reduce, None, Float),
    op("ReduceProd", static_shape::reduce, None, Float),
    op("ReduceSum", static_shape::reduce, None, Float),
    op("ReduceSumSquare", static_shape::reduce, None, Float),
    op("Relu", elementwise::unary, Some(O::Relu), Float).qdq(Fold(Activation)),
    op("Reshape", shape::lower, None, Any).qdq(Fold(Movement)),
    op("Resize", static_shape::resize, None, Float),
    op("ReverseSequence", sequence::reverse_sequence, None, Any),
    op("RMSNormalization", norm::rms_norm, None, Float),
    op("RNN", recurrent::lower, None, Float),
    op("RoiAlign", detection::roi_align, None, Any),
    op("RotaryEmbedding", rotary::rotary_embedding, None, Any),
    op("Round", elementwise::unary, Some(O::ElementRound), Float),
    op("Scatter", index::lower, None, Any),
    op("ScatterElements", index::lower, None, Any),
    op("ScatterND", index::lower, None, Any),
    op("Selu", elementwise::unary, Some(O::Selu), Float),
    op("Shape", fold::lower, None, Any),
    op("Shrink", math::unary, None, Float),
    op("Sigmoid", elementwise::unary, Some(O::Sigmoid), Float).qdq(Fold(Lookup)),
    op("Sign", math::unary, None, Float),
    op("Sin", elementwise::unary, Some(O::ElementSin), Float).qdq(Fold(Lookup)),
    op("Sinh", elementwise::unary, Some(O::ElementSinh), Float),
    op("Size", fold::lower, None, Any),
    op("Slice", fold::lower, None, Any),
    op("Softmax", linalg::softmax, Some(O::SoftMax), Float),
    op("SoftmaxCrossEntropyLoss", index::lower, None, Any),
    op("Softplus", elementwise::unary, Some(O::SoftPlus), Float).qdq(Fold(Lookup)),
    op("Softsign", math::unary, None, Float),
    op("SpaceToDepth", fold::lower, None, Any),
    op("Split", fold::lower, None, Any),
    op("Sqrt", elementwise::unary, Some(O::ElementSqrt), Float).qdq(Fold(Lookup)),
    op("Squeeze", shape::lower, None, Any).qdq(Fold(Movement)),
    op("Sub", elementwise::binary, Some(O::ElementSub), Any).qdq(Fold(Binary)),
    op("Sum", elementwise::binary, Some(O::ElementAdd), Any),
    op("SwiGLU", norm::swiglu, None, Float),
    op("Swish", math::unary, None, Float),
    op("Tan", elementwise::unary, Some(O::ElementTan), Float),
    op("Tanh", elementwise::unary, Some(O::Tanh), Float).qdq(Fold(Lookup)),
    op("TensorScatter", sequence::tensor_scatter, None, Any),
    op("ThresholdedRelu", math::unary, None, Float),
    op("Tile", static_shape::expand_tile, None, Any),
    op("TopK", sort::topk, None, Float),
    op("Transpose", shape::lower, None, Any).qdq(Fold(Movement)),
    op("Trilu", select::trilu, None, Any),
    op("Unsqueeze", shape::lower, None, Any).qdq(Fold(Movement)),
    op("Upsample", static_shape::resize, None, Float),
    op("Where", fold::lower, None, AnyStoredBool),
    op("Xor", fold::lower, Some(O::ElementXor), Any),
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn the_table_is_in_order_without_repeats() {
        for w in OPS.windows(2) {
            assert_eq!(
                order(w[0].name, w[1].name),
                std::cmp::Ordering::Less,
                "`{}` must come after `{}` (or is listed twice)",
                w[0].name,
                w[1].name
            );
        }
    }

    #[test]
    fn find_gives_each_row_and_is_case_sensitive() {
        for d in OPS {
            assert_eq!(find(d.name).map(|f| f.name), Some(d.name));
        }
        assert!(find("relu").is_none() && find("RELU").is_none() && find("Unique").is_none());
    }

    /// The op-set table of docs/import.md: each row's first cell and the
    /// whole row.
    fn doc_rows() -> Vec<(String, String)> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/import.md");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let (_, rest) = text
            .split_once("\n## The op set\n")
            .expect("docs/import.md has no `## The op set` section");
        rest.lines()
            .skip_while(|l| !l.starts_with('|'))
            .take_while(|l| l.starts_with('|'))
            .skip(2)
            .map(|l| {
                let first = l.trim_start_matches('|').split('|').next().unwrap_or("");
                (first.to_string(), l.to_string())
            })
            .collect()
    }

    /// The op names of a first cell: `Cast (`to`), CastLike` or `And, Or,
    /// Xor on run-time bools` name the ops before any parenthesis or word.
    fn names_in(cell: &str) -> Vec<String> {
        let mut plain = String::new();
        let (mut tick, mut depth) = (false, 0);
        for c in cell.chars() {
            match c {
                '`' => tick = !tick,
                '(' if !tick => depth += 1,
                ')' if !tick => depth -= 1,
                _ if !tick && depth == 0 => plain.push(c),
                _ => {}
            }
        }
        plain
            .split(',')
            .filter_map(|p| p.split_whitespace().next())
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn the_docs_list_exactly_the_table() {
        let documented: BTreeSet<String> = doc_rows()
            .iter()
            .flat_map(|(cell, _)| names_in(cell))
            .collect();
        let table: BTreeSet<String> = OPS.iter().map(|d| d.name.to_string()).collect();
        let missing: Vec<_> = table.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&table).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "docs/import.md's op set and lower/ops.rs disagree: not documented {missing:?}, \
             documented but not in the table {extra:?}"
        );
    }

    /// The float ops of the QDQ fold table in docs/import.md: the middle
    /// of each `DQ ... -> Op/Op -> Q` pattern.
    fn doc_folds() -> BTreeSet<String> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/import.md");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let (_, rest) = text
            .split_once("| pattern | instruction |")
            .expect("docs/import.md has no QDQ fold table");
        let mut ops = BTreeSet::new();
        for row in rest
            .lines()
            .skip(2)
            .take_while(|l| l.trim_start().starts_with('|'))
        {
            let pattern = row.trim_start().trim_start_matches('|');
            let pattern = pattern.split('|').next().unwrap_or("");
            for code in pattern.split('`').skip(1).step_by(2) {
                let parts: Vec<&str> = code.split("->").collect();
                for mid in parts.iter().skip(1).take(parts.len().saturating_sub(2)) {
                    ops.extend(mid.split('/').map(|s| s.trim().to_string()));
                }
            }
        }
        ops
    }

    #[test]
    fn the_docs_list_exactly_the_qdq_folds() {
        let documented = doc_folds();
        let table: BTreeSet<String> = OPS
            .iter()
            .filter(|d| matches!(d.qdq, Some(Qdq::Fold(_))))
            .map(|d| d.name.to_string())
            .collect();
        let missing: Vec<_> = table.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&table).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "docs/import.md's QDQ folds and lower/ops.rs disagree: not documented {missing:?}, \
             documented but not folded {extra:?}"
        );
    }

    #[test]
    fn the_docs_name_each_ops_instruction() {
        let rows = doc_rows();
        let mut wrong = Vec::new();
        for d in OPS {
            let Some(opcode) = d.opcode else { continue };
            let want = format!("`{}`", opcode.name());
            let named = rows.iter().any(|(cell, row)| {
                names_in(cell).iter().any(|n| n == d.name) && row.contains(&want)
            });
            if !named {
                wrong.push(format!("{} ({want})", d.name));
            }
        }
        assert!(
            wrong.is_empty(),
            "docs/import.md's rows for these ops do not name their instruction: {wrong:?}"
        );
    }
}
