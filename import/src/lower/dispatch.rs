//! Lowering one node: the element kinds its run-time inputs may have, the
//! dispatch on the op type to the module that lowers it, and the binding of
//! its outputs.

use super::*;
use crate::error::Unsupported;

/// Ops that read run-time tensors of any element kind (the others take
/// float activations only).
const ANY_KIND_OPS: &[&str] = &[
    "Cast",
    "CastLike",
    "Where",
    "Not",
    "Identity",
    "Shape",
    "Size",
    "Equal",
    "Less",
    "Greater",
    "LessOrEqual",
    "GreaterOrEqual",
    "And",
    "Or",
    "Xor",
    "Add",
    "Sub",
    "Mul",
    "Div",
    "Sum",
    "Max",
    "Min",
    // Indices and data of any kind (lower/index.rs).
    "GatherElements",
    "GatherND",
    "Scatter",
    "ScatterElements",
    "ScatterND",
    "OneHot",
    "NegativeLogLikelihoodLoss",
    "SoftmaxCrossEntropyLoss",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Concat",
    "Slice",
    "Split",
    "Gather",
    "Expand",
    "Tile",
    "Pad",
    "DepthToSpace",
    "SpaceToDepth",
    "Trilu",
    // Quantized ONNX (lower/qdq.rs).
    "QuantizeLinear",
    "DequantizeLinear",
    "QLinearConv",
    "QLinearMatMul",
    "ConvInteger",
    "MatMulInteger",
];

impl Lowerer<'_> {
    /// Lowers one node: dispatch on the op type, then bind the outputs.
    pub fn lower_node(&mut self, node: &NodeProto) -> Result<()> {
        // A QuantizeLinear that a fold already lowered with its producer.
        if self.skip.contains(&self.cur) {
            return Ok(());
        }
        self.node = if node.name.is_empty() {
            node.output.first().cloned().unwrap_or_default()
        } else {
            node.name.clone()
        };
        self.op = node.op_type.clone();
        if !node.domain.is_empty() && node.domain != "ai.onnx" {
            return Err(Unsupported::Op {
                node: self.node.clone(),
                op: format!("{}::{}", node.domain, node.op_type),
            }
            .into());
        }
        // DequantizeLinear of an activation is deferred, and a float op
        // between dequantized inputs and a QuantizeLinear may fold into one
        // quantized instruction (lower/qdq.rs).
        if super::qdq::fold(self, node)? {
            return self.limit_error();
        }
        super::qdq::prepare_inputs(self, node);
        self.check_input_kinds(node)?;
        let outs = self.dispatch(node)?;
        if node.op_type == "Constant" {
            super::qdq::record_constant_dtype(self, node);
        }
        self.limit_error()?;
        // An output the lowering does not produce (a Dropout mask, training
        // statistics) is refused here rather than missed later.
        if let Some((i, name)) = node
            .output
            .iter()
            .enumerate()
            .skip(outs.len())
            .find(|(_, n)| !n.is_empty() && self.needed.contains(*n))
        {
            return Err(self.unsupported(format!("output {i} (`{name}`) of {}", node.op_type)));
        }
        for (name, v) in node.output.iter().zip(outs) {
            if !name.is_empty() {
                self.bind(name, v);
            }
        }
        Ok(())
    }

    /// The lowering of one node by its op type: the values of its outputs,
    /// in order (fewer when trailing ones are not produced).
    pub(super) fn dispatch(&mut self, node: &NodeProto) -> Result<Vec<Val>> {
        Ok(match node.op_type.as_str() {
            "Relu" | "Sigmoid" | "Tanh" | "LeakyRelu" | "Clip" | "Dropout" | "HardSigmoid"
            | "HardSwish" | "Sqrt" | "Exp" | "Log" | "Erf" | "Sin" | "Cos" | "Floor" | "Ceil"
            | "Round" | "Acos" | "Asin" | "Atan" | "Acosh" | "Asinh" | "Atanh" | "Cosh"
            | "Sinh" | "Tan" | "Softplus" | "Elu" | "Selu" | "Celu" | "Gelu" | "Mish" => {
                elementwise::unary(self, node)?
            }
            "Add" | "Sub" | "Mul" | "Div" | "Sum" | "Pow" => elementwise::binary(self, node)?,
            "Neg" | "Abs" | "Reciprocal" | "Sign" | "ThresholdedRelu" | "Shrink" | "Softsign"
            | "Swish" | "Identity" => math::unary(self, node)?,
            "PRelu" => math::prelu(self, node)?,
            "IsNaN" | "IsInf" => {
                let out = node.output.first().cloned().unwrap_or_default();
                vec![select::is_special(self, node, &out)?]
            }
            "Trilu" => select::trilu(self, node)?,
            "ReduceSum" | "ReduceMean" | "ReduceMax" | "ReduceMin" | "ReduceProd" => {
                static_shape::reduce(self, node)?
            }
            "Expand" | "Tile" => static_shape::expand_tile(self, node)?,
            "Resize" | "Upsample" => static_shape::resize(self, node)?,
            "Pad" => static_shape::pad(self, node)?,
            "Shape" | "Size" | "Cast" | "CastLike" | "Range" | "Equal" | "Less" | "Greater"
            | "LessOrEqual" | "GreaterOrEqual" | "And" | "Or" | "Xor" | "Not" | "Mod" | "Where"
            | "Gather" | "Slice" | "Split" | "DepthToSpace" | "SpaceToDepth" => {
                fold::lower(self, node)?
            }
            "Max" | "Min" | "Mean" => math::variadic(self, node)?,
            "Conv" => nn::conv(self, node)?,
            "ConvTranspose" => convtranspose::conv_transpose(self, node)?,
            "MaxPool" | "AveragePool" if pool::composed(self, node)? => pool::pool(self, node)?,
            "MaxPool" | "AveragePool" | "GlobalAveragePool" | "GlobalMaxPool" => {
                nn::pool(self, node)?
            }
            "LpPool" => pool::lp_pool(self, node)?,
            "BatchNormalization" => nn::batchnorm(self, node)?,
            "LRN" => nn::lrn(self, node)?,
            "Attention" => attention::attention(self, node)?,
            "LayerNormalization" => norm::layer_norm(self, node)?,
            "RMSNormalization" => norm::rms_norm(self, node)?,
            "SwiGLU" => norm::swiglu(self, node)?,
            "Gemm" => linalg::gemm(self, node)?,
            "MatMul" => linalg::matmul(self, node)?,
            "Softmax" | "LogSoftmax" => linalg::softmax(self, node)?,
            "ArgMax"
            | "ArgMin"
            | "Hardmax"
            | "GatherElements"
            | "GatherND"
            | "Scatter"
            | "ScatterElements"
            | "ScatterND"
            | "OneHot"
            | "NegativeLogLikelihoodLoss"
            | "SoftmaxCrossEntropyLoss" => index::lower(self, node)?,
            "Transpose" | "Reshape" | "Flatten" | "Squeeze" | "Unsqueeze" | "Concat"
            | "Constant" | "ConstantOfShape" => shape::lower(self, node)?,
            "LpNormalization"
            | "MeanVarianceNormalization"
            | "InstanceNormalization"
            | "GroupNormalization" => compose::normalization(self, node)?,
            "Det" => compose::det(self, node)?,
            "QuantizeLinear" => qdq::quantize_linear(self, node)?,
            "DequantizeLinear" => qdq::dequantize_linear(self, node)?,
            "QLinearConv" | "QLinearMatMul" => qdq::qlinear(self, node)?,
            "ConvInteger" | "MatMulInteger" => qdq::integer(self, node)?,
            "DynamicQuantizeLinear" => qdq::dynamic_quantize_linear(self, node)?,
            "RNN" | "GRU" | "LSTM" => recurrent::lower(self, node)?,
            _ => {
                return Err(Unsupported::Op {
                    node: self.node.clone(),
                    op: node.op_type.clone(),
                }
                .into())
            }
        })
    }

    /// Non-float run-time inputs reach only the ops that handle their kind
    /// (`ANY_KIND_OPS`); elsewhere an integer input after the first is a
    /// value the op needs at import time (a shape, axes, indices), and any
    /// other is unsupported. Bool buffers stored negated are made plain for
    /// every reader but Where and Not.
    fn check_input_kinds(&mut self, node: &NodeProto) -> Result<()> {
        let op = node.op_type.as_str();
        for i in 0..node.input.len() {
            if !self.is_act(node, i) {
                continue;
            }
            let Some(Val::Act(a)) = self.opt_input(node, i)? else {
                continue;
            };
            let kind = self.kind(&a);
            if kind == ElemKind::Float {
                continue;
            }
            if ANY_KIND_OPS.contains(&op) {
                if kind == ElemKind::Bool && !matches!(op, "Where" | "Not") {
                    let p = self.plain_bool(&a);
                    self.vals.insert(node.input[i].clone(), Val::Act(p));
                }
                continue;
            }
            // Gather takes run-time integer indices (`gather`).
            if op == "Gather" && i == 1 && matches!(kind, ElemKind::Index64 | ElemKind::Index32) {
                continue;
            }
            // Attention takes a run-time bool mask (selected into a bias).
            if op == "Attention" && i == 3 && kind == ElemKind::Bool {
                let p = self.plain_bool(&a);
                self.vals.insert(node.input[i].clone(), Val::Act(p));
                continue;
            }
            if i > 0 && kind != ElemKind::Bool {
                return Err(ImportError::NeedsConstant {
                    node: self.node.clone(),
                    op: self.op.clone(),
                    input: node.input[i].clone(),
                });
            }
            return Err(self.unsupported(format!(
                "a run-time {kind} tensor (`{}`) as input {i} of {op}",
                node.input[i]
            )));
        }
        Ok(())
    }
}
