//! Training against torch: the corpus's `e2e/digits_cnn` (a CNN on the
//! scikit-learn digits) ships torch's loss and every parameter gradient for
//! one batch of 32 from its initial weights (`grads.npz`). The step the
//! `differentiate` pass builds must reproduce them within 1e-5 (relative
//! L2 per tensor), and the C engine's step must equal the interpreter's bit
//! for bit (a second test, ignored without `cc`).
//! Without the corpus (`$GLOW_CORPUS`, default `../shared/corpus`) the test
//! is ignored, saying so on its first output line.

use glow_backend::run::{self, Engine, RunOptions, Session};
use glow_backend::CcOptions;
use glow_ir::{Module, Mutability};
use libtest_mimic::{Arguments, Trial};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    std::env::var_os("GLOW_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"))
}

/// The entries of an uncompressed zip (numpy's `savez`), by name.
fn read_npz(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut out = BTreeMap::new();
    let mut at = 0usize;
    let u16_at = |p: usize| u16::from_le_bytes([bytes[p], bytes[p + 1]]) as usize;
    let u32_at = |p: usize| u32::from_le_bytes(bytes[p..p + 4].try_into().unwrap()) as usize;
    while at + 30 <= bytes.len() && bytes[at..at + 4] == [0x50, 0x4b, 3, 4] {
        let method = u16_at(at + 8);
        let mut size = u32_at(at + 18);
        let name_len = u16_at(at + 26);
        let extra = u16_at(at + 28);
        let name = String::from_utf8_lossy(&bytes[at + 30..at + 30 + name_len]).to_string();
        let data = at + 30 + name_len + extra;
        // Zip64 (numpy writes it): the sizes are in the extra field 0x0001.
        if size == 0xFFFF_FFFF {
            let mut e = at + 30 + name_len;
            while e + 4 <= data {
                let (id, n) = (u16_at(e), u16_at(e + 2));
                if id == 1 {
                    size = u64::from_le_bytes(bytes[e + 4..e + 12].try_into().unwrap()) as usize;
                }
                e += 4 + n;
            }
        }
        if method != 0 {
            return Err(format!("{name}: compressed entries are not read here"));
        }
        out.insert(
            name.trim_end_matches(".npy").to_string(),
            bytes[data..data + size].to_vec(),
        );
        at = data + size;
    }
    Ok(out)
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Our gradient in torch's layout: OHWI filters to OIHW, the FC's [in, out]
/// weights to [out, in].
fn to_torch(name: &str, v: &[f32], dims: &[u64]) -> Vec<f32> {
    let d: Vec<usize> = dims.iter().map(|&x| x as usize).collect();
    match d.as_slice() {
        [o, h, w, i] => {
            let mut out = vec![0.0; v.len()];
            for a in 0..*o {
                for y in 0..*h {
                    for x in 0..*w {
                        for c in 0..*i {
                            out[((a * i + c) * h + y) * w + x] = v[((a * h + y) * w + x) * i + c];
                        }
                    }
                }
            }
            out
        }
        [k, m] if name.contains("weight") => {
            let mut out = vec![0.0; v.len()];
            for r in 0..*k {
                for c in 0..*m {
                    out[c * k + r] = v[r * m + c];
                }
            }
            out
        }
        _ => v.to_vec(),
    }
}

fn rel_l2(a: &[f32], b: &[f32]) -> f64 {
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (*x as f64 - *y as f64).powi(2))
        .sum();
    let den: f64 = b.iter().map(|y| (*y as f64).powi(2)).sum();
    (num / den.max(1e-300)).sqrt()
}

/// Imports `init.onnx` at batch 32, builds the step (lr 0, so the weights
/// stay) and runs it on the batch of `grads.npz`; returns every mutable
/// weight after the step.
fn step_outputs(dir: &Path, engine: Engine) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let model = std::fs::read(dir.join("init.onnx")).map_err(|e| e.to_string())?;
    let opts = glow_import::Options {
        batch: Some(32),
        ..Default::default()
    };
    let imported = glow_import::import_model(&model, &opts).map_err(|e| e.to_string())?;
    let mut m = Module {
        functions: vec![imported.function],
    };
    let registry = glow_passes::PassRegistry::builtin();
    let pipeline = glow_passes::cli::PipelineArgs {
        passes: vec!["differentiate{lr=0}".into()],
        ..Default::default()
    }
    .pipeline(&registry)?;
    glow_passes::run_pipeline(&mut m, &pipeline).map_err(|d| format!("{d:?}"))?;
    let f = &m.functions[0];
    let npz = read_npz(&std::fs::read(dir.join("grads.npz")).map_err(|e| e.to_string())?)?;
    let mut given: BTreeMap<String, Vec<u8>> = imported
        .weights
        .into_iter()
        .map(|w| (w.name, w.bytes))
        .collect();
    let x = glow_backend::npy::read(&npz["x"])?;
    let y = glow_backend::npy::read(&npz["y"])?;
    given.insert("input".into(), x.data);
    given.insert("labels".into(), y.data);
    for w in &f.weights {
        if w.mutability == Mutability::Mutable && !given.contains_key(&w.name) {
            given.insert(w.name.clone(), vec![0; w.ty.bytes() as usize]);
        }
    }
    let ro = RunOptions {
        engine,
        cc: CcOptions::new(None, "-O1"),
        ..RunOptions::interpreter(0)
    };
    let weights = run::resolve_weights(f, &given, &ro)?;
    let mut s = Session::new(f, &weights, &ro).map_err(|e| format!("{e:?}"))?;
    s.run().map_err(|e| format!("{e:?}"))?;
    let mut out = BTreeMap::new();
    for w in &f.weights {
        if let Some(b) = s.get(&w.name) {
            out.insert(w.name.clone(), b.to_vec());
        }
    }
    let _ = run::written_weights;
    Ok(out)
}

fn check(dir: &Path) -> Result<(), libtest_mimic::Failed> {
    let npz = read_npz(&std::fs::read(dir.join("grads.npz")).map_err(|e| e.to_string())?)?;
    let interp = step_outputs(dir, Engine::Interp)?;
    let torch_loss = f32s(&glow_backend::npy::read(&npz["loss"])?.data)[0];
    let loss = f32s(&interp["loss"])[0];
    let rel = ((loss - torch_loss) / torch_loss).abs();
    println!("loss: ours {loss:.7}, torch {torch_loss:.7}, relative {rel:.2e}");
    if rel > 1e-5 {
        return Err(format!("loss {loss} differs from torch's {torch_loss} by {rel:.2e}").into());
    }
    let dims: BTreeMap<&str, Vec<u64>> = [
        ("0.weight", vec![8, 3, 3, 1]),
        ("3.weight", vec![16, 3, 3, 8]),
        ("7.weight", vec![64, 10]),
    ]
    .into_iter()
    .collect();
    for (torch, ours) in [
        ("0_weight", "0.weight"),
        ("0_bias", "0.bias"),
        ("3_weight", "3.weight"),
        ("3_bias", "3.bias"),
        ("7_weight", "7.weight"),
        ("7_bias", "7.bias"),
    ] {
        let want = f32s(&glow_backend::npy::read(&npz[torch])?.data);
        let g = f32s(&interp[&format!("{ours}.grad")]);
        let g = to_torch(ours, &g, dims.get(ours).map_or(&[][..], |d| d));
        let e = rel_l2(&g, &want);
        println!("{ours}.grad: relative L2 error {e:.2e} against torch's {torch}");
        if e > 1e-5 {
            return Err(
                format!("{ours}.grad differs from torch's {torch}: relative L2 {e:.2e}").into(),
            );
        }
    }
    Ok(())
}

/// The step on the C engine writes the interpreter's bytes.
fn check_c(dir: &Path) -> Result<(), libtest_mimic::Failed> {
    let interp = step_outputs(dir, Engine::Interp)?;
    let c = step_outputs(dir, Engine::C)?;
    if c != interp {
        let bad: Vec<&String> = c.keys().filter(|k| c.get(*k) != interp.get(*k)).collect();
        return Err(format!("the C engine and the interpreter differ in {bad:?}").into());
    }
    println!("the C engine's step is bit-identical to the interpreter's");
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let dir = corpus().join("e2e/digits_cnn");
    let missing = !dir.join("grads.npz").is_file();
    if missing {
        println!(
            "ignored: digits_gradients_match_torch: no {} (set GLOW_CORPUS)",
            dir.display()
        );
    }
    let has_cc = glow_backend::CcOptions::new(Some("cc"), "").found();
    if !missing && !has_cc {
        println!("ignored: digits_step_is_identical_on_c: no `cc` on PATH");
    }
    let d2 = dir.clone();
    let trials = vec![
        Trial::test("digits_gradients_match_torch", move || check(&dir)).with_ignored_flag(missing),
        Trial::test("digits_step_is_identical_on_c", move || check_c(&d2))
            .with_ignored_flag(missing || !has_cc),
    ];
    libtest_mimic::run(&args, trials).exit();
}
