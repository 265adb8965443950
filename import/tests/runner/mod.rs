//! One conformance test: import the folder's `model.onnx`, run it through
//! the backend (`glow_backend::run`, the interpreter or the C engine) with
//! `test_data_set_0/input_*.pb`, compare with `output_*.pb`.
//!
//! Two ways to feed the graph inputs: the vendored-suite mode binds the
//! inputs the importer needs as constants (filters, shapes: Glow's loader
//! does so for weights), the user mode feeds every graph input that is not
//! an initializer as a run-time input, as `glow-run --input` does.

use glow_backend::elem::{read_int, write_int};
use glow_backend::run::{resolve_weights, run, Engine, RunError, RunOptions};
use glow_backend::CcOptions;
use glow_import::onnx::{decode_model, decode_tensor};
use glow_import::tensor::{decode, StrippedPolicy, Tensor};
use glow_import::{import_model, ImportError, Options};
use glow_ir::ElemKind;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug)]
pub enum Outcome {
    Pass { max_err: f64 },
    Unsupported(String),
    Fail(String),
}

pub struct Suite {
    engine: Engine,
    /// Never bind a graph input as a constant.
    user: bool,
}

impl Suite {
    /// The reference interpreter by default; `GLOW_CONFORMANCE_ENGINE=c`
    /// compiles each model with the C backend instead. `user`: feed every
    /// graph input at run time.
    pub fn new(user: bool) -> Suite {
        let c = std::env::var("GLOW_CONFORMANCE_ENGINE").is_ok_and(|e| e == "c");
        Suite {
            engine: if c { Engine::C } else { Engine::Interp },
            user,
        }
    }

    pub fn run_test(&self, dir: &Path) -> Outcome {
        match self.try_run(dir) {
            Ok(o) => o,
            Err(e) => Outcome::Fail(e),
        }
    }

    fn try_run(&self, dir: &Path) -> Result<Outcome, String> {
        let bytes = std::fs::read(dir.join("model.onnx")).map_err(|e| e.to_string())?;
        let model = decode_model(&bytes).map_err(|e| e.to_string())?;
        let graph = model.graph.ok_or("no graph")?;
        let inits: Vec<&str> = graph.initializer.iter().map(|t| t.name.as_str()).collect();
        let all_inputs: Vec<&glow_import::onnx::ValueInfoProto> = graph
            .input
            .iter()
            .filter(|i| !inits.contains(&i.name.as_str()))
            .collect();
        let data = dir.join("test_data_set_0");
        let mut opts = Options {
            base_dir: Some(dir.to_path_buf()),
            ..Options::default()
        };
        // Non-float inputs (shapes) are frozen up front; inputs the importer
        // needs as constants (filters, clip bounds) when it asks for them.
        for (i, vi) in all_inputs.iter().enumerate() {
            let float = vi
                .r#type
                .as_ref()
                .and_then(|t| t.tensor_type.as_ref())
                .map(|t| t.elem_type)
                == Some(1);
            if !float && !self.user {
                opts.frozen_inputs.push((
                    vi.name.clone(),
                    read_tensor(&data.join(format!("input_{i}.pb")))?,
                ));
            }
        }
        let imported = loop {
            match import_model(&bytes, &opts) {
                Err(ImportError::NeedsConstant { input, .. })
                    if !self.user && !opts.frozen_inputs.iter().any(|(n, _)| *n == input) =>
                {
                    let Some(i) = all_inputs.iter().position(|vi| vi.name == input) else {
                        return Ok(Outcome::Unsupported(format!(
                            "`{input}` must be a constant"
                        )));
                    };
                    opts.frozen_inputs
                        .push((input, read_tensor(&data.join(format!("input_{i}.pb")))?));
                }
                other => break other,
            }
        };
        let imported = match imported {
            Ok(i) => i,
            Err(e @ (ImportError::Unsupported(_) | ImportError::NeedsConstant { .. })) => {
                return Ok(Outcome::Unsupported(e.to_string()))
            }
            Err(e) => return Err(format!("import: {e}")),
        };
        let f = &imported.function;
        let (rtol, atol) = tolerance(dir);
        let mut given: BTreeMap<String, Vec<u8>> = imported
            .weights
            .iter()
            .map(|w| (w.name.clone(), w.bytes.clone()))
            .collect();
        for (i, vi) in all_inputs.iter().enumerate() {
            if opts.frozen_inputs.iter().any(|(n, _)| *n == vi.name) {
                continue;
            }
            let t = read_tensor(&data.join(format!("input_{i}.pb")))?;
            // An input with no elements is the importer's empty constant.
            if t.is_empty() && f.weights.iter().all(|w| w.name != vi.name) {
                continue;
            }
            let ty = weight_type(f, &vi.name)?;
            given.insert(vi.name.clone(), typed_bytes(&t, ty.elem)?);
        }
        let ropts = RunOptions {
            engine: self.engine,
            cc: CcOptions::new(None, "-O1"),
            strict_constants: true,
            ..RunOptions::interpreter(1)
        };
        let weights = resolve_weights(f, &given, &ropts)?;
        let outs = run(f, &weights, &ropts).map_err(|e| match e {
            RunError::Diagnostic(d) => format!("run: {}", d.message),
            RunError::Message(m) => format!("run: {m}"),
        })?;
        let outputs: Vec<&str> = graph.output.iter().map(|o| o.name.as_str()).collect();
        let mut max_err = 0f64;
        for (i, name) in outputs.iter().enumerate() {
            let want_t = read_tensor(&data.join(format!("output_{i}.pb")))?;
            let t = outs
                .tensors
                .iter()
                .find(|t| t.name == *name)
                .ok_or_else(|| format!("output `{name}` was not written"))?;
            let kind = weight_type(f, name)?.elem;
            if kind != ElemKind::Float {
                // Integer and bool outputs compare exactly.
                let want = want_t.to_i64();
                let mut n = t.data.len() / kind.bytes() as usize;
                // A fixed-capacity output: only its valid rows count.
                if let Some((_, count)) = imported.row_counts.iter().find(|(o, _)| o == name) {
                    let c = outs
                        .tensors
                        .iter()
                        .find(|t| t.name == *count)
                        .ok_or_else(|| format!("the row count `{count}` was not written"))?;
                    let rows = read_int(ElemKind::Index64, &c.data, 0);
                    let ty = weight_type(f, name)?;
                    let per_row = ty.size() / ty.dims[0].max(1);
                    if rows < 0 || rows as u64 > ty.dims[0] {
                        return Err(format!("output `{name}`: row count {rows} out of range"));
                    }
                    n = (rows as u64 * per_row) as usize;
                }
                if n != want.len() {
                    return Err(format!(
                        "output `{name}`: {n} values, expected {}",
                        want.len()
                    ));
                }
                for (k, &w) in want.iter().enumerate() {
                    let g = read_int(kind, &t.data, k);
                    let w = if kind == ElemKind::Bool {
                        (w != 0) as i64
                    } else {
                        w
                    };
                    if g != w {
                        return Err(format!(
                            "output `{name}` differs at element {k} (got {g}, expected {w})"
                        ));
                    }
                }
                continue;
            }
            let want = want_t.to_f32();
            let got: Vec<f32> = t
                .data
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            if got.len() != want.len() {
                return Err(format!(
                    "output `{name}`: {} values, expected {}",
                    got.len(),
                    want.len()
                ));
            }
            let mut worst = (0f64, 0usize, true);
            for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let (g, w) = (g as f64, w as f64);
                let err = (g - w).abs();
                // Equal infinities match (numpy's allclose), as do two NaNs.
                let ok = err <= atol + rtol * w.abs() || g == w || (g.is_nan() && w.is_nan());
                if (!ok && worst.2) || err > worst.0 {
                    worst = (err, k, ok && worst.2);
                }
            }
            max_err = max_err.max(worst.0);
            if !worst.2 {
                return Err(format!(
                    "output `{name}` differs: largest error {:.3e} at element {} (got {}, expected {})",
                    worst.0, worst.1, got[worst.1], want[worst.1]
                ));
            }
        }
        Ok(Outcome::Pass { max_err })
    }
}

/// The type of the weight `name` of the imported function.
fn weight_type<'f>(f: &'f glow_ir::Function, name: &str) -> Result<&'f glow_ir::Type, String> {
    f.weights
        .iter()
        .find(|w| w.name == name)
        .map(|w| &w.ty)
        .ok_or_else(|| format!("no weight `{name}` in the imported function"))
}

/// A test tensor as the little-endian bytes of `kind` (its real type).
fn typed_bytes(t: &Tensor, kind: ElemKind) -> Result<Vec<u8>, String> {
    if kind == ElemKind::Float {
        return Ok(t.to_f32().iter().flat_map(|x| x.to_le_bytes()).collect());
    }
    if !kind.is_plain_int() && kind != ElemKind::Bool {
        return Err(format!("no test encoding for {kind}"));
    }
    let v = t.to_i64();
    let mut out = vec![0u8; v.len() * kind.bytes() as usize];
    for (i, &x) in v.iter().enumerate() {
        let x = if kind == ElemKind::Bool {
            (x != 0) as i64
        } else {
            x
        };
        write_int(kind, &mut out, i, x);
    }
    Ok(out)
}

fn tolerance(dir: &Path) -> (f64, f64) {
    let text = std::fs::read_to_string(dir.join("tolerance.json")).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let get = |k: &str, d: f64| v.get(k).and_then(|x| x.as_f64()).unwrap_or(d);
    (get("rtol", 1e-3), get("atol", 1e-7))
}

fn read_tensor(path: &Path) -> Result<Tensor, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let tp = decode_tensor(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    decode(&tp, None, StrippedPolicy::default()).map_err(|e| e.to_string())
}
