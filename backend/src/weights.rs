//! Constant weights from a safetensors file, checked against the function's
//! weight types, as raw little-endian bytes by weight name.

use glow_ir::{ElemKind, Function, Mutability};
use std::collections::BTreeMap;
use std::path::Path;

/// Reads the contents of const weights from `path`: every one without
/// inline `Data` must be there; one with `Data` takes the file's tensor when
/// the file has it (trained weights from glow-train replace the initial
/// ones). A missing or mis-shaped tensor is an error naming it.
pub fn load_safetensors(f: &Function, path: &Path) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
    let st = safetensors::SafeTensors::deserialize(&bytes)
        .map_err(|e| format!("'{}' is not a safetensors file: {e}", path.display()))?;
    let mut out = BTreeMap::new();
    for w in f
        .weights
        .iter()
        .filter(|w| w.mutability == Mutability::Const)
    {
        let Ok(t) = st.tensor(&w.name) else {
            if w.init.is_some() {
                continue;
            }
            return Err(format!(
                "weight `%{}` ({}) is missing from '{}'",
                w.name,
                w.ty,
                path.display()
            ));
        };
        let shape: Vec<u64> = t.shape().iter().map(|&d| d as u64).collect();
        let dt = format!("{:?}", t.dtype());
        let want = safetensors_dtype(w.ty.elem);
        if shape != w.ty.dims || dt != want {
            return Err(format!(
                "weight `%{}` in '{}' is {dt} {:?}, but `{}` needs {want} {:?}",
                w.name,
                path.display(),
                shape,
                w.ty,
                w.ty.dims
            ));
        }
        out.insert(w.name.clone(), t.data().to_vec());
    }
    Ok(out)
}

/// The safetensors dtype name (as `Dtype`'s Debug prints it) for an element kind.
pub fn safetensors_dtype(k: ElemKind) -> &'static str {
    use ElemKind::*;
    match k {
        Float => "F32",
        Float16 => "F16",
        BFloat16 => "BF16",
        Float64 => "F64",
        Int8Q { .. } | Int8 => "I8",
        UInt8Q { .. } | UInt8 | Fused(_) => "U8",
        Int16Q { .. } => "I16",
        Int32Q { .. } | Index32 => "I32",
        Index64 => "I64",
        Bool => "BOOL",
    }
}
