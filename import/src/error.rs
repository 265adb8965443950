//! The importer's typed errors. Every failure of the importer is one of
//! these (never a panic); the binary prints it and exits 1.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum ImportError {
    #[error("not a valid ONNX model: {0}")]
    Decode(String),
    #[error("{path}: {msg}")]
    Io { path: String, msg: String },
    #[error("{0}")]
    Model(String),
    #[error("tensor `{name}`: {msg}")]
    Tensor { name: String, msg: String },
    #[error(
        "tensor `{name}` is stripped (data_location EXTERNAL, location `__stripped__`): its \
         values are unknown; {count} stripped tensor(s) in this model. Pass `--fill-stripped SEED` \
         to fill them with seeded random values of their recorded mean and std"
    )]
    Stripped { name: String, count: usize },
    /// What glow-import does not lower, as opposed to a model it cannot
    /// read or an importer bug: runners count it apart from failures.
    #[error(transparent)]
    Unsupported(#[from] Unsupported),
    #[error(
        "node `{node}` ({op}): input `{input}` must be a constant (an initializer or a Constant \
         node), but it is computed or a graph input: glow-import compiles static shapes, so \
         the shapes, axes, indices and bounds an op takes must be known at import time"
    )]
    NeedsConstant {
        node: String,
        op: String,
        input: String,
    },
    #[error("node `{node}` ({op}): {msg}")]
    Node {
        node: String,
        op: String,
        msg: String,
    },
    #[error("the imported function does not verify (an importer bug):\n{0}")]
    Verify(String),
}

/// Something the importer does not lower, with where it was met.
#[derive(Debug, Error)]
pub enum Unsupported {
    /// An op type outside the op table (or outside the default domain).
    #[error(
        "node `{node}`: op type `{op}` is not supported by glow-import (supported: {})",
        crate::supported_ops()
    )]
    Op { node: String, op: String },
    /// A feature of a supported op: an attribute value, an input kind, a
    /// rank, an output the lowering does not produce.
    #[error("node `{node}` ({op}): unsupported: {what}")]
    Feature {
        node: String,
        op: String,
        what: String,
    },
    /// A graph input or output the IR has no form for (its element type,
    /// a zero dimension, its rank); `edge` names it.
    #[error("{edge}: {what}")]
    Graph { edge: String, what: String },
}

impl ImportError {
    pub fn model(msg: impl Into<String>) -> ImportError {
        ImportError::Model(msg.into())
    }
    pub fn tensor(name: &str, msg: impl Into<String>) -> ImportError {
        ImportError::Tensor {
            name: name.to_string(),
            msg: msg.into(),
        }
    }
}

pub type Result<T, E = ImportError> = std::result::Result<T, E>;
