//! Per-opcode shape and element-type rules, referenced from the opcode table.

use crate::function::InstData;
use crate::types::Type;

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

pub fn none(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn tensorview(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn same_type(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn convolution(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn pool(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn fully_connected(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn matmul(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn batch_matmul(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn batched_add(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn batched_reduce_add(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn elementwise(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn compare(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn select(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn softmax(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn transpose(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn insert_tensor(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn extract_tensor(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn batch_normalization(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn lrn(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn quantize(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn dequantize(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
pub fn rescale_quantized(_: &ShapeCtx) -> Vec<ShapeError> {
    Vec::new()
}
