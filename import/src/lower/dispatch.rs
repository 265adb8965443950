//! Lowering one node: its row of the op table (lower/ops.rs), the check of
//! its run-time input kinds against that row, the row's handler, and the
//! binding of its outputs.

use super::ops::{self, Kinds, OpDef};
use super::*;
use crate::error::Unsupported;

impl Lowerer<'_> {
    /// Lowers one node: its table row's handler, then bind the outputs.
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
        // Before the QDQ fold and the input checks, so that an op outside
        // the table is refused as such whatever its inputs.
        let def = self.op_def(node)?;
        // DequantizeLinear of an activation is deferred, and a float op
        // between dequantized inputs and a QuantizeLinear may fold into one
        // quantized instruction (lower/qdq.rs).
        if super::qdq::fold(self, node, def.qdq)? {
            return self.limit_error();
        }
        super::qdq::prepare_inputs(self, node);
        self.check_input_kinds(node, def.kinds)?;
        let outs = def.lower(self, node)?;
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

    /// The lowering of one node by its op type (the table's handler): the
    /// values of its outputs, in order (fewer when trailing ones are not
    /// produced).
    pub(super) fn dispatch(&mut self, node: &NodeProto) -> Result<Vec<Val>> {
        self.op_def(node)?.lower(self, node)
    }

    /// The table's row for the node's op type; an op outside the table is
    /// unsupported.
    fn op_def(&self, node: &NodeProto) -> Result<&'static OpDef> {
        ops::find(&node.op_type).ok_or_else(|| {
            Unsupported::Op {
                node: self.node.clone(),
                op: node.op_type.clone(),
            }
            .into()
        })
    }

    /// Non-float run-time inputs reach only the ops whose table row takes
    /// their kind; elsewhere an integer input after the first is a value
    /// the op needs at import time (a shape, axes, indices), and any other
    /// is unsupported. Bool buffers stored negated are made plain for every
    /// reader but those that read them as stored.
    fn check_input_kinds(&mut self, node: &NodeProto, kinds: Kinds) -> Result<()> {
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
            let plain = match kinds {
                Kinds::Any => kind == ElemKind::Bool,
                Kinds::AnyStoredBool => false,
                Kinds::FloatAndBoolAt(at) if at == i && kind == ElemKind::Bool => true,
                Kinds::Float | Kinds::FloatAndBoolAt(_) => {
                    return Err(self.refused_kind(node, i, kind));
                }
            };
            if plain {
                let p = self.plain_bool(&a);
                self.vals.insert(node.input[i].clone(), Val::Act(p));
            }
        }
        Ok(())
    }

    /// The error for run-time input `i` of a kind the op does not take.
    fn refused_kind(&self, node: &NodeProto, i: usize, kind: ElemKind) -> ImportError {
        if i > 0 && kind != ElemKind::Bool {
            return ImportError::NeedsConstant {
                node: self.node.clone(),
                op: self.op.clone(),
                input: node.input[i].clone(),
            };
        }
        self.unsupported(format!(
            "a run-time {kind} tensor (`{}`) as input {i} of {}",
            node.input[i], node.op_type
        ))
    }
}
