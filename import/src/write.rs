//! Output files: the safetensors encoding of the weights (deterministic:
//! safetensors orders tensors by dtype then name, and no metadata is added)
//! and atomic writes (a temporary file in the target's folder, then a rename,
//! so a failed import never leaves a half-written file behind).

use crate::error::{ImportError, Result};
use crate::WeightFile;
use safetensors::{Dtype, View};
use std::borrow::Cow;
use std::path::Path;

/// A weight as a safetensors view (f32 little-endian, dims of the `.gir` type).
struct F32View<'a> {
    shape: Vec<usize>,
    data: &'a [f32],
}

impl View for F32View<'_> {
    fn dtype(&self) -> Dtype {
        Dtype::F32
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.data.iter().flat_map(|x| x.to_le_bytes()).collect())
    }
    fn data_len(&self) -> usize {
        self.data.len() * 4
    }
}

/// The weights as a safetensors file.
pub fn safetensors_bytes(weights: &[WeightFile]) -> Result<Vec<u8>> {
    let views = weights.iter().map(|w| {
        (
            w.name.clone(),
            F32View {
                shape: w.dims.iter().map(|&d| d as usize).collect(),
                data: &w.data,
            },
        )
    });
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
