//! Output files: the safetensors encoding of the weights (deterministic:
//! safetensors orders tensors by dtype then name, and no metadata is added)
//! and atomic writes (a temporary file in the target's folder, then a rename,
//! so a failed import never leaves a half-written file behind).

use crate::error::{ImportError, Result};
use crate::WeightFile;
use glow_ir::ElemKind;
use safetensors::{Dtype, View};
use std::borrow::Cow;
use std::path::Path;

/// A weight as a safetensors view (little-endian bytes, dims of the `.gir` type).
struct BytesView<'a> {
    dtype: Dtype,
    shape: Vec<usize>,
    data: &'a [u8],
}

impl View for BytesView<'_> {
    fn dtype(&self) -> Dtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.data)
    }
    fn data_len(&self) -> usize {
        self.data.len()
    }
}

/// The safetensors dtype of the element kinds the importer writes.
fn dtype_of(k: ElemKind) -> Option<Dtype> {
    Some(match k {
        ElemKind::Float => Dtype::F32,
        ElemKind::Index64 => Dtype::I64,
        ElemKind::Index32 => Dtype::I32,
        ElemKind::Int8 | ElemKind::Int8Q { .. } => Dtype::I8,
        ElemKind::UInt8 | ElemKind::UInt8Q { .. } => Dtype::U8,
        ElemKind::Int16Q { .. } => Dtype::I16,
        ElemKind::Int32Q { .. } => Dtype::I32,
        ElemKind::Bool => Dtype::BOOL,
        _ => return None,
    })
}

/// The weights as a safetensors file.
pub fn safetensors_bytes(weights: &[WeightFile]) -> Result<Vec<u8>> {
    let mut views = Vec::with_capacity(weights.len());
    for w in weights {
        let dtype = dtype_of(w.ty.elem).ok_or_else(|| {
            ImportError::model(format!(
                "weight `{}`: no safetensors dtype for {}",
                w.name, w.ty
            ))
        })?;
        views.push((
            w.name.clone(),
            BytesView {
                dtype,
                shape: w.ty.dims.iter().map(|&d| d as usize).collect(),
                data: &w.bytes,
            },
        ));
    }
    safetensors::serialize(views, None)
        .map_err(|e| ImportError::model(format!("cannot encode the weights: {e}")))
}

/// Writes `bytes` to `path` without a partial file or a replaced device
/// (`glow_ir::output::write_file`).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    glow_ir::output::write_file(path, bytes).map_err(|e| ImportError::Io {
        path: path.display().to_string(),
        msg: e.to_string(),
    })
}
