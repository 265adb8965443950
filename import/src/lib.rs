//! `glow-import`: ONNX models into `.gir` functions and safetensors weights.
//!
//! [`import_model`] decodes an ONNX file (hand-declared prost messages, see
//! [`onnx`]), reads its constants ([`tensor`]), infers shapes while lowering
//! each node (module `lower`) and returns a verified [`glow_ir::Function`] plus the
//! weights that go to a safetensors file. Guarantees: no panic on any input
//! (every problem is an [`ImportError`]); the same model and options give
//! byte-identical `.gir` text and weights.

pub mod error;
mod lower;
pub mod onnx;
pub mod tensor;
mod write;

pub use error::{ImportError, Result, Unsupported};
pub use lower::ops::{supported_ops, Kinds, OpDef, Qdq, QdqFold, OPS};
pub use write::{safetensors_bytes, write_atomic};

use glow_ir::printer::{print_function, PrintOptions};
use glow_ir::Function;
use std::path::PathBuf;
use tensor::StrippedPolicy;

/// How 4-D activations are laid out in the emitted instructions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Glow's convention: NHWC activations, transposes at the edges.
    #[default]
    Nhwc,
    /// ONNX order kept: spatial instructions carry `Layout: NCHW`.
    Nchw,
}

/// Import options (the command-line flags).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Override the first dimension of every graph input (symbolic batch
    /// dimensions default to 1).
    pub batch: Option<u64>,
    pub layout: Layout,
    /// Fill stripped tensors with seeded values instead of failing.
    pub fill_stripped: Option<u64>,
    /// Put every constant inline as `Data:` instead of into `weights`.
    pub inline_weights: bool,
    /// The model's folder, for tensors with external data.
    pub base_dir: Option<PathBuf>,
    /// Graph inputs given fixed values: they become constants (as Glow's
    /// loader does for weights fed as inputs), e.g. a Conv filter or a
    /// Reshape shape that a test passes as an input.
    pub frozen_inputs: Vec<(String, tensor::Tensor)>,
    /// A smaller budget for the constants the importer holds than
    /// `glow_ir::limits::MAX_TOTAL_BYTES` (the default and the maximum).
    pub max_constant_bytes: Option<u64>,
}

/// One const weight destined for the safetensors file: its `.gir` type
/// and its elements as little-endian bytes in `.gir` layout.
#[derive(Clone, Debug, PartialEq)]
pub struct WeightFile {
    pub name: String,
    pub ty: glow_ir::Type,
    pub bytes: Vec<u8>,
}

/// The result of an import.
#[derive(Debug)]
pub struct Imported {
    pub function: Function,
    /// Weights without inline data, in declaration order.
    pub weights: Vec<WeightFile>,
    /// Things to tell the user on stderr (e.g. stripped tensors filled).
    pub notes: Vec<String>,
    /// Graph outputs whose row count depends on the data (NonMaxSuppression's
    /// selections): (output, weight). The output has a fixed capacity of
    /// rows; the one-element `index64` weight, written by the same run,
    /// holds how many of the first rows are valid (the rest are -1).
    pub row_counts: Vec<(String, String)>,
}

impl Imported {
    /// The canonical `.gir` text.
    pub fn gir_text(&self) -> String {
        print_function(&self.function, PrintOptions::default())
    }
}

/// Imports an ONNX model from its bytes.
pub fn import_model(bytes: &[u8], opts: &Options) -> Result<Imported> {
    let model = onnx::decode_model(bytes).map_err(|e| ImportError::Decode(e.to_string()))?;
    let graph = model
        .graph
        .as_ref()
        .ok_or_else(|| ImportError::model("the model has no graph"))?;
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map_or(1, |o| o.version);
    let mut notes = Vec::new();

    // Constants first: a stripped tensor without --fill-stripped is an error
    // naming it and counting all of them.
    let stripped: Vec<&str> = graph
        .initializer
        .iter()
        .filter(|t| tensor::is_stripped(t))
        .map(|t| t.name.as_str())
        .collect();
    if let Some(first) = stripped.first() {
        match opts.fill_stripped {
            None => {
                return Err(ImportError::Stripped {
                    name: first.to_string(),
                    count: stripped.len(),
                })
            }
            Some(seed) => notes.push(format!(
                "note: filled {} stripped tensor(s) with seeded (seed {seed}) normal values of \
                 their recorded mean and std; outputs are not meaningful",
                stripped.len()
            )),
        }
    }

    let inits: std::collections::HashSet<&str> =
        graph.initializer.iter().map(|t| t.name.as_str()).collect();
    let inputs: Vec<&onnx::ValueInfoProto> = graph
        .input
        .iter()
        .filter(|i| !inits.contains(i.name.as_str()))
        .collect();
    // A frozen input must be a graph input whose declared shape it has.
    for (name, t) in &opts.frozen_inputs {
        let Some(vi) = inputs.iter().find(|vi| vi.name == *name) else {
            let names: Vec<&str> = inputs.iter().map(|vi| vi.name.as_str()).collect();
            return Err(ImportError::model(format!(
                "cannot bind `{name}`: the model has no graph input of that name (its inputs: {})",
                names.join(", ")
            )));
        };
        let elem = vi
            .r#type
            .as_ref()
            .and_then(|t| t.tensor_type.as_ref())
            .map(|t| t.elem_type);
        if let Some(elem) = elem {
            // FLOAT, FLOAT16, DOUBLE, BFLOAT16.
            let float_input = matches!(elem, 1 | 10 | 11 | 16);
            let float_value = matches!(t.data, tensor::Data::F32(_));
            if float_input != float_value {
                return Err(ImportError::model(format!(
                    "cannot bind `{name}`: the value holds {}, the graph input is {}",
                    if float_value { "floats" } else { "integers" },
                    onnx::dtype::name(elem)
                )));
            }
        }
        if let Some(declared) = declared_dims(vi) {
            let fits = declared.len() == t.dims.len()
                && declared
                    .iter()
                    .zip(&t.dims)
                    .all(|(d, &g)| d.is_none_or(|d| d == g));
            if !fits {
                let shown: Vec<String> = declared
                    .iter()
                    .map(|d| d.map_or("?".to_string(), |d| d.to_string()))
                    .collect();
                return Err(ImportError::model(format!(
                    "cannot bind `{name}`: the value has shape {:?}, the graph input is declared [{}]",
                    t.dims,
                    shown.join(", ")
                )));
            }
        }
    }
    // Outputs keep their declared element type (an integer or bool result
    // is a weight of the matching IR kind).
    let mut outputs = Vec::new();
    for o in &graph.output {
        let elem = o
            .r#type
            .as_ref()
            .and_then(|t| t.tensor_type.as_ref())
            .map_or(onnx::dtype::FLOAT, |t| t.elem_type);
        let kind = lower::elem_of_dtype(elem).ok_or_else(|| Unsupported::Graph {
            edge: format!("graph output `{}`", o.name),
            what: format!(
                "element type {} is not supported ({} are)",
                onnx::dtype::name(elem),
                lower::RUNTIME_DTYPES
            ),
        })?;
        outputs.push((o.name.clone(), kind));
    }
    let mut reserved: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    reserved.extend(outputs.iter().map(|(n, _)| n.clone()));
    let name = if graph.name.is_empty() {
        "main"
    } else {
        &graph.name
    };
    let mut l = lower::Lowerer::new(name, opts, opset, &reserved);

    for vi in &inputs {
        if let Some((_, t)) = opts.frozen_inputs.iter().find(|(n, _)| *n == vi.name) {
            // Its declared type, as for an initializer (a bool stays a bool).
            if let Some(tt) = vi.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()) {
                l.dtypes.insert(vi.name.clone(), tt.elem_type);
            }
            l.bind(
                &vi.name,
                lower::Val::Const {
                    name: vi.name.clone(),
                    t: t.clone().into(),
                },
            );
            continue;
        }
        if let Some(t) = empty_input(vi) {
            // A graph input with no elements has no run-time value to feed:
            // it is the empty constant (an `axes` of `[]`, an empty set).
            if let Some(tt) = vi.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()) {
                l.dtypes.insert(vi.name.clone(), tt.elem_type);
            }
            l.bind(
                &vi.name,
                lower::Val::Const {
                    name: vi.name.clone(),
                    t: t.into(),
                },
            );
            continue;
        }
        let (dims, kind) = input_dims(vi, opts)?;
        glow_ir::limits::check_tensor(
            &format!("graph input `{}`", vi.name),
            &glow_ir::Type::float(&dims),
        )
        .map_err(ImportError::model)?;
        let v = l.placeholder(&vi.name, &dims, kind);
        l.bind(&vi.name, lower::Val::Act(lower::Act { v, dims, cl: false }));
    }
    let policy = StrippedPolicy {
        fill_seed: opts.fill_stripped,
    };
    for t in &graph.initializer {
        let (_, n) = tensor::checked_dims(&t.name, &t.dims)?;
        l.reserve_const(&t.name, 4 * n)?;
        let value = tensor::decode(t, opts.base_dir.as_deref(), policy)?;
        l.dtypes.insert(t.name.clone(), t.data_type);
        l.bind(
            &t.name,
            lower::Val::Const {
                name: t.name.clone(),
                t: value.into(),
            },
        );
    }
    l.limit_error()?;
    l.needed = graph
        .node
        .iter()
        .flat_map(|n| n.input.iter().cloned())
        .chain(outputs.iter().map(|(n, _)| n.clone()))
        .collect();
    l.nodes = &graph.node;
    for (i, node) in graph.node.iter().enumerate() {
        for input in node.input.iter().filter(|n| !n.is_empty()) {
            l.consumers.entry(input.clone()).or_default().push(i);
        }
    }
    l.graph_outputs = outputs.iter().map(|(n, _)| n.clone()).collect();
    for (i, node) in graph.node.iter().enumerate() {
        l.cur = i;
        l.lower_node(node)?;
    }
    l.finish(&outputs)?;

    let diags = glow_ir::verifier::verify(&l.f);
    if !diags.is_empty() {
        let text: Vec<String> = diags.iter().map(|d| format!("  {}", d.message)).collect();
        return Err(ImportError::Verify(text.join("\n")));
    }
    for (out, count) in &l.row_counts {
        notes.push(format!(
            "note: output `{out}` has a fixed capacity of rows; the number of valid rows is in `{count}`"
        ));
    }
    let imported = Imported {
        function: l.f,
        weights: l.weights,
        notes,
        row_counts: l.row_counts,
    };
    reread(&imported)?;
    Ok(imported)
}

/// Reads the `.gir` text back and verifies it, so glow-import never writes
/// a file that glow-opt rejects; a failure is an importer bug, reported
/// with the offending line (whose names are the ONNX node's).
fn reread(imported: &Imported) -> Result<()> {
    let text = imported.gir_text();
    let diags = match glow_ir::parser::parse(text.as_bytes()) {
        Ok(m) => glow_ir::verifier::verify_module(&m),
        Err(d) => d,
    };
    if diags.iter().any(glow_ir::Diagnostic::is_error) {
        let shown = glow_ir::diag::render_all(&diags, "<imported .gir>", text.as_bytes());
        return Err(ImportError::Verify(shown.trim_end().to_string()));
    }
    Ok(())
}

/// The empty tensor a graph input with a zero dimension (and no symbolic
/// one) always holds; `None` for any other input.
fn empty_input(vi: &onnx::ValueInfoProto) -> Option<tensor::Tensor> {
    let tt = vi.r#type.as_ref()?.tensor_type.as_ref()?;
    let kind = lower::elem_of_dtype(tt.elem_type)?;
    let mut dims = Vec::new();
    for d in &tt.shape.as_ref()?.dim {
        match &d.value {
            Some(onnx::DimValue::DimValue(v)) if *v >= 0 => dims.push(*v as u64),
            _ => return None,
        }
    }
    if !dims.contains(&0) {
        return None;
    }
    Some(if kind == glow_ir::ElemKind::Float {
        tensor::Tensor::f32(dims, Vec::new())
    } else {
        tensor::Tensor::i64(dims, Vec::new())
    })
}

/// Dims and IR element kind of a graph input: symbolic or unknown first
/// dims take the batch.
/// A graph input's declared dimensions (`None` for a symbolic one), if it
/// declares a shape at all.
fn declared_dims(vi: &onnx::ValueInfoProto) -> Option<Vec<Option<u64>>> {
    let shape = vi.r#type.as_ref()?.tensor_type.as_ref()?.shape.as_ref()?;
    Some(
        shape
            .dim
            .iter()
            .map(|d| match &d.value {
                Some(onnx::DimValue::DimValue(v)) if *v >= 0 => Some(*v as u64),
                _ => None,
            })
            .collect(),
    )
}

/// The value of `glow-import --bind NAME=FILE`: a `.npy` file (told by its
/// magic) or an ONNX `TensorProto` (a test data set's `input_0.pb`). Floats
/// become f32; integers and bools i64, as every constant the importer holds.
pub fn read_bound_tensor(bytes: &[u8]) -> std::result::Result<tensor::Tensor, String> {
    if bytes.starts_with(b"\x93NUMPY") {
        let npy = glow_backend::npy::read(bytes)?;
        let n = npy.shape.iter().product::<u64>() as usize;
        let descr = npy.descr.trim_start_matches(['<', '|', '=']);
        let width = match descr {
            "f4" | "i4" | "u4" => 4,
            "f8" | "i8" | "u8" => 8,
            "i2" | "u2" => 2,
            "i1" | "u1" | "b1" => 1,
            _ => return Err(format!("unsupported .npy element type `{}`", npy.descr)),
        };
        if npy.data.len() != n * width {
            return Err(format!(
                "the .npy data holds {} bytes, its shape {:?} needs {}",
                npy.data.len(),
                npy.shape,
                n * width
            ));
        }
        let chunks = npy.data.chunks_exact(width);
        let arr = |c: &[u8]| -> [u8; 8] {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            b
        };
        let t = match descr {
            "f4" => tensor::Tensor::f32(
                npy.shape,
                chunks
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect(),
            ),
            "f8" => tensor::Tensor::f32(
                npy.shape,
                chunks.map(|c| f64::from_le_bytes(arr(c)) as f32).collect(),
            ),
            _ => {
                let signed = descr.starts_with('i');
                let v = chunks
                    .map(|c| {
                        let raw = u64::from_le_bytes(arr(c));
                        let bits = 8 * width as u32;
                        if signed && bits < 64 {
                            // Sign-extend from the element's width.
                            ((raw << (64 - bits)) as i64) >> (64 - bits)
                        } else {
                            raw as i64
                        }
                    })
                    .collect();
                tensor::Tensor::i64(npy.shape, v)
            }
        };
        return Ok(t);
    }
    let proto = onnx::decode_tensor(bytes)
        .map_err(|e| format!("neither a .npy file nor an ONNX TensorProto: {e}"))?;
    tensor::decode(&proto, None, tensor::StrippedPolicy::default()).map_err(|e| e.to_string())
}

fn input_dims(vi: &onnx::ValueInfoProto, opts: &Options) -> Result<(Vec<u64>, glow_ir::ElemKind)> {
    let bad = |msg: String| ImportError::model(format!("graph input `{}`: {msg}", vi.name));
    let unsupported = |what: String| Unsupported::Graph {
        edge: format!("graph input `{}`", vi.name),
        what,
    };
    let tt = vi
        .r#type
        .as_ref()
        .and_then(|t| t.tensor_type.as_ref())
        .ok_or_else(|| bad("not a tensor".into()))?;
    let kind = lower::elem_of_dtype(tt.elem_type).ok_or_else(|| {
        unsupported(format!(
            "element type {} is not supported ({} are)",
            onnx::dtype::name(tt.elem_type),
            lower::RUNTIME_DTYPES
        ))
    })?;
    let shape = tt.shape.as_ref().ok_or_else(|| bad("no shape".into()))?;
    let mut dims = Vec::new();
    for (i, d) in shape.dim.iter().enumerate() {
        let known = match &d.value {
            Some(onnx::DimValue::DimValue(v)) if *v > 0 => Some(*v as u64),
            _ => None,
        };
        let v = match (i, known, opts.batch) {
            // A zero dimension is a size, not a symbolic batch.
            _ if matches!(d.value, Some(onnx::DimValue::DimValue(0))) => {
                return Err(unsupported(format!(
                    "unsupported: dimension {i} is zero (zero-size tensors)"
                ))
                .into())
            }
            (0, _, Some(b)) => b,
            (_, Some(v), _) => v,
            (0, None, None) => 1,
            _ => return Err(bad(format!("dimension {i} is symbolic"))),
        };
        dims.push(v);
    }
    if dims.len() > glow_ir::types::MAX_DIMS {
        return Err(unsupported(format!(
            "unsupported: rank {} is above the IR's {}",
            dims.len(),
            glow_ir::types::MAX_DIMS
        ))
        .into());
    }
    Ok((dims, kind))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glow_ir::builder::Builder;
    use glow_ir::{Mutability, Type};

    /// A function the in-memory verifier accepts but whose text glow-opt
    /// rejects (rank 9) is an error, not a written file.
    #[test]
    fn reread_rejects_text_the_verifier_rejects() {
        let mut f = Function::new("m");
        Builder::new(&mut f).weight("x", Type::float(&[1; 9]), Mutability::Mutable);
        let imported = Imported {
            function: f,
            weights: Vec::new(),
            notes: Vec::new(),
            row_counts: Vec::new(),
        };
        let e = reread(&imported).unwrap_err().to_string();
        assert!(e.contains("does not verify"), "{e}");
        assert!(e.contains("<imported .gir>:3:"), "{e}");
        assert!(e.contains("at most 8 dimensions"), "{e}");
        let mut ok = Function::new("m");
        Builder::new(&mut ok).weight("x", Type::float(&[2]), Mutability::Mutable);
        let fine = Imported {
            function: ok,
            weights: Vec::new(),
            notes: Vec::new(),
            row_counts: Vec::new(),
        };
        assert!(reread(&fine).is_ok());
    }
}
