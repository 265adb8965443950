//! One conformance test: import the folder's `model.onnx`, run it through
//! `glow-run` with `test_data_set_0/input_*.pb`, compare with `output_*.pb`.
//! Also a minimal `.npy` reader/writer for exchanging tensors with glow-run.

use glow_import::onnx::{decode_model, decode_tensor};
use glow_import::tensor::{decode, StrippedPolicy, Tensor};
use glow_import::{import_model, safetensors_bytes, ImportError, Options};
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug)]
pub enum Outcome {
    Pass {
        max_err: f64,
    },
    /// Imported and verified, not run (no glow-run available).
    Imported,
    Unsupported(String),
    Fail(String),
}

pub struct Suite {
    glow_run: Option<PathBuf>,
}

impl Suite {
    pub fn new() -> Suite {
        let glow_run = std::env::var_os("GLOW_RUN").map(PathBuf::from).or_else(|| {
            // target/<profile>/deps/conformance-xxx -> target/<profile>/glow-run
            let exe = std::env::current_exe().ok()?;
            let p = exe.parent()?.parent()?.join("glow-run");
            p.is_file().then_some(p)
        });
        Suite { glow_run }
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
            if !float {
                opts.frozen_inputs.push((
                    vi.name.clone(),
                    read_tensor(&data.join(format!("input_{i}.pb")))?,
                ));
            }
        }
        let imported = loop {
            match import_model(&bytes, &opts) {
                Err(ImportError::NeedsConstant { input, .. })
                    if !opts.frozen_inputs.iter().any(|(n, _)| *n == input) =>
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
            Err(e @ ImportError::Unsupported { .. }) => {
                return Ok(Outcome::Unsupported(e.to_string()))
            }
            Err(e @ ImportError::Node { .. }) if e.to_string().contains("unsupported:") => {
                return Ok(Outcome::Unsupported(e.to_string()))
            }
            Err(e) => return Err(format!("import: {e}")),
        };
        let Some(glow_run) = &self.glow_run else {
            return Ok(Outcome::Imported);
        };
        let inputs: Vec<(usize, &str)> = all_inputs
            .iter()
            .enumerate()
            .map(|(i, vi)| (i, vi.name.as_str()))
            .filter(|(_, n)| !opts.frozen_inputs.iter().any(|(f, _)| f == n))
            .collect();
        let outputs: Vec<&str> = graph.output.iter().map(|o| o.name.as_str()).collect();
        let (rtol, atol) = tolerance(dir);

        let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
        let gir = tmp.path().join("model.gir");
        std::fs::write(&gir, imported.gir_text()).map_err(|e| e.to_string())?;
        let weights = tmp.path().join("weights.safetensors");
        let wbytes = safetensors_bytes(&imported.weights).map_err(|e| e.to_string())?;
        std::fs::write(&weights, wbytes).map_err(|e| e.to_string())?;
        let mut cmd = Command::new(glow_run);
        cmd.arg(&gir).arg("--weights").arg(&weights);
        for &(i, name) in &inputs {
            let (dims, vals) = read_pb(&data.join(format!("input_{i}.pb")))?;
            let npy = tmp.path().join(format!("input_{i}.npy"));
            write_npy(&npy, &dims, &vals).map_err(|e| e.to_string())?;
            cmd.arg("--input").arg(format!("{name}={}", npy.display()));
        }
        let out_dir = tmp.path().join("out");
        cmd.arg("--output-dir").arg(&out_dir);
        let res = cmd
            .output()
            .map_err(|e| format!("cannot start glow-run: {e}"))?;
        if !res.status.success() {
            let err = String::from_utf8_lossy(&res.stderr);
            return Err(format!(
                "glow-run failed: {}",
                err.lines().take(3).collect::<Vec<_>>().join(" | ")
            ));
        }
        let mut max_err = 0f64;
        for (i, name) in outputs.iter().enumerate() {
            let (_, want) = read_pb(&data.join(format!("output_{i}.pb")))?;
            let got = read_npy(&out_dir.join(format!("{}.npy", npy_name(name))))?;
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
                let ok = err <= atol + rtol * w.abs() || (g.is_nan() && w.is_nan());
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

/// The output file name glow-run uses for a weight name.
fn npy_name(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
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

fn read_pb(path: &Path) -> Result<(Vec<u64>, Vec<f32>), String> {
    let t = read_tensor(path)?;
    Ok((t.dims.clone(), t.to_f32()))
}

pub fn write_npy(path: &Path, dims: &[u64], vals: &[f32]) -> std::io::Result<()> {
    let shape: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    let shape = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!("({})", shape.join(", ")),
    };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    for v in vals {
        out.extend(v.to_le_bytes());
    }
    std::fs::write(path, out)
}

pub fn read_npy(path: &Path) -> Result<Vec<f32>, String> {
    let b = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
        return Err(format!("{}: not a .npy file", path.display()));
    }
    let (hlen, start) = if b[6] == 1 {
        (u16::from_le_bytes([b[8], b[9]]) as usize, 10)
    } else {
        (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12)
    };
    let header = String::from_utf8_lossy(b.get(start..start + hlen).ok_or("short header")?);
    if !header.contains("'<f4'") {
        return Err(format!("{}: not float32: {header}", path.display()));
    }
    Ok(b[start + hlen..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}
