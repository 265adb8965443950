//! `glow-run --dump-profile`: runs a float function on the interpreter over
//! a calibration set and records, per activation buffer and per mutable
//! weight (by IR name; a view's writes count for the buffer it views), the
//! range and histogram of the values it held (`glow_passes::profile`).
//! Inputs (mutable weights the function reads before writing them) are
//! recorded as given; every other buffer after each instruction that
//! writes it.
//!
//! A calibration directory holds either `NAME.npy` per input weight `%NAME`
//! with a leading batch dimension that is iterated (a file of shape
//! `[N, d1, ...]` for a weight `<d0 x d1 x ...>` gives `N / d0` samples of
//! `d0` rows each; `[N, d0, d1, ...]` gives `N` samples), or subdirectories
//! (in name order), each holding `NAME.npy` of exactly the weight's shape,
//! or ONNX's `input_K.pb` (a `test_data_set_*` folder: the tensor of the
//! input it names, else of the K-th input in declaration order).
//! Inputs without a file keep their `--input`/`Data`/seeded contents.

use glow_backend::npy;
use glow_backend::run::{self, RunError};
use glow_ir::{ElemKind, Function, Opcode};
use glow_passes::profile::{function_hash, BufferProfile, Profile};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// One calibration sample: contents by weight name.
pub type Sample = BTreeMap<String, Vec<u8>>;

pub use glow_passes::profile::inputs;

fn read_npy(path: &Path) -> Result<npy::Npy, String> {
    let bytes =
        std::fs::read(path).map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
    npy::read(&bytes).map_err(|e| format!("'{}': {e}", path.display()))
}

/// Decodes a serialized ONNX `TensorProto` into its name and contents (the
/// caller brings the decoder: this crate does not depend on the importer).
pub type PbReader<'a> = &'a dyn Fn(&[u8]) -> Result<(String, npy::Npy), String>;

/// The `input_K.pb` files of `dir`, by K.
fn pb_inputs(dir: &Path) -> Vec<(usize, std::path::PathBuf)> {
    let mut out: Vec<(usize, std::path::PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let k = name
                .strip_prefix("input_")?
                .strip_suffix(".pb")?
                .parse()
                .ok()?;
            Some((k, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// The samples of a calibration directory (module comment); `pb` reads
/// `input_K.pb` files (without it they are left out).
pub fn calibration_set(
    f: &Function,
    dir: &Path,
    pb: Option<PbReader>,
) -> Result<Vec<Sample>, String> {
    let names = inputs(f);
    let ty_of = |n: &str| f.weights.iter().find(|w| w.name == n).map(|w| w.ty.clone());
    let mut subdirs: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| {
            format!(
                "cannot read the calibration directory '{}': {e}",
                dir.display()
            )
        })?
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    let direct: Vec<&String> = names
        .iter()
        .filter(|n| dir.join(npy::file_name(n)).is_file())
        .collect();
    let mut samples = Vec::new();
    if !direct.is_empty() {
        let mut per_input: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
        for name in direct {
            let ty = ty_of(name).expect("an input weight");
            let path = dir.join(npy::file_name(name));
            let arr = read_npy(&path)?;
            let (rows, per) = if arr.shape.len() == ty.dims.len() + 1
                && arr.shape[1..] == ty.dims[..]
            {
                (arr.shape[0] as usize, 1usize)
            } else if !arr.shape.is_empty()
                && arr.shape.len() == ty.dims.len()
                && arr.shape[1..] == ty.dims[1..]
            {
                (arr.shape[0] as usize, ty.dims[0].max(1) as usize)
            } else {
                return Err(format!(
                    "'{}' has shape {:?}: expected a leading batch dimension over `%{name}`'s {:?} ({ty})",
                    path.display(),
                    arr.shape,
                    ty.dims
                ));
            };
            let one = npy::Npy {
                descr: arr.descr.clone(),
                shape: ty.dims.clone(),
                data: Vec::new(),
            };
            // The dtype check of `npy::expect`, on an empty tensor of the right kind.
            let probe = npy::Npy {
                data: vec![0; ty.bytes() as usize],
                ..one
            };
            npy::expect(&probe, &ty).map_err(|e| format!("'{}' {e}", path.display()))?;
            let sample_bytes = ty.bytes() as usize;
            if arr.data.len() < rows / per * sample_bytes {
                return Err(format!("'{}' is truncated", path.display()));
            }
            let chunks = (0..rows / per)
                .map(|k| arr.data[k * sample_bytes..(k + 1) * sample_bytes].to_vec())
                .collect();
            per_input.push((name.clone(), chunks));
        }
        let n = per_input.iter().map(|(_, c)| c.len()).min().unwrap_or(0);
        if let Some((a, ca)) = per_input.iter().find(|(_, c)| c.len() != n) {
            return Err(format!(
                "the calibration files disagree on the number of samples: `%{a}` has {}, another {n}",
                ca.len()
            ));
        }
        for k in 0..n {
            samples.push(
                per_input
                    .iter()
                    .map(|(name, c)| (name.clone(), c[k].clone()))
                    .collect(),
            );
        }
    } else {
        for sub in &subdirs {
            let mut s = Sample::new();
            for name in &names {
                let path = sub.join(npy::file_name(name));
                if path.is_file() {
                    let ty = ty_of(name).expect("an input weight");
                    let arr = read_npy(&path)?;
                    let data =
                        npy::expect(&arr, &ty).map_err(|e| format!("'{}' {e}", path.display()))?;
                    s.insert(name.clone(), data);
                }
            }
            if let (true, Some(read)) = (s.is_empty(), pb) {
                for (k, path) in pb_inputs(sub) {
                    let bytes = std::fs::read(&path)
                        .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
                    let (tname, arr) =
                        read(&bytes).map_err(|e| format!("'{}': {e}", path.display()))?;
                    let name = if names.contains(&tname) {
                        tname
                    } else {
                        names.get(k).cloned().ok_or_else(|| {
                            format!(
                                "'{}': the function has {} input(s), so no input {k}",
                                path.display(),
                                names.len()
                            )
                        })?
                    };
                    let ty = ty_of(&name).expect("an input weight");
                    let data = npy::expect(&arr, &ty)
                        .map_err(|e| format!("'{}' (input `%{name}`) {e}", path.display()))?;
                    s.insert(name, data);
                }
            }
            if !s.is_empty() {
                samples.push(s);
            }
        }
    }
    if samples.is_empty() {
        let list: Vec<String> = names.iter().map(|n| npy::file_name(n)).collect();
        return Err(format!(
            "the calibration directory '{}' has no sample: expected {} (with a leading batch dimension) or subdirectories holding them",
            dir.display(),
            if list.is_empty() { "input files".to_string() } else { list.join(", ") }
        ));
    }
    Ok(samples)
}

fn floats(data: &[u8]) -> Vec<f32> {
    data.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Runs `f` once per sample (over `base`, the contents of every weight)
/// and returns the profile.
pub fn collect(
    f: &Function,
    base: &BTreeMap<String, Vec<u8>>,
    samples: &[Sample],
    bins: usize,
) -> Result<Profile, RunError> {
    let mut buffers: Vec<BufferProfile> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    // Value name -> the name of the buffer it lies in.
    let mut origin_name: HashMap<String, String> = HashMap::new();
    for i in f.inst_ids() {
        for o in &f.inst(i).operands {
            let name = f.value_name(o.value).to_string();
            let org = f.origin(o.value).0;
            let float = f.value_type(org).is_some_and(|t| t.elem == ElemKind::Float);
            if float && !origin_name.contains_key(&name) {
                origin_name.insert(name, f.value_name(org).to_string());
            }
        }
    }
    let input_names = inputs(f);
    let slot = |name: &str,
                index: &mut HashMap<String, usize>,
                buffers: &mut Vec<BufferProfile>|
     -> usize {
        *index.entry(name.to_string()).or_insert_with(|| {
            buffers.push(BufferProfile::new(name, bins));
            buffers.len() - 1
        })
    };
    for name in &input_names {
        let w = f
            .weights
            .iter()
            .find(|w| &w.name == name)
            .expect("an input");
        if w.ty.elem == ElemKind::Float {
            slot(name, &mut index, &mut buffers);
        }
    }
    for s in samples {
        let mut weights = base.clone();
        for (k, v) in s {
            weights.insert(k.clone(), v.clone());
        }
        for name in &input_names {
            if let Some(&k) = index.get(name) {
                buffers[k].add(&floats(&weights[name]));
            }
        }
        for w in run::trace(f, &weights)? {
            if w.ty.elem != ElemKind::Float {
                continue;
            }
            let Some(org) = origin_name.get(&w.value) else {
                continue;
            };
            let k = slot(org, &mut index, &mut buffers);
            buffers[k].add(&floats(&w.data));
        }
    }
    Ok(Profile {
        function: f.name.clone(),
        hash: function_hash(f),
        samples: samples.len() as u64,
        bins,
        buffers,
    })
}

/// The same profile Glow's way: the `instrument-profile` pass adds a
/// `quantizationprofile` after every float buffer write, the instrumented
/// function runs once per sample on the interpreter with each buffer's
/// `Histogram` and `ComputationInfo` carried from one run to the next, and
/// the profile is read from them at the end. Every update is
/// `glow_ir::quant::profile_update` on the tensors [`collect`] records, in
/// the same order, so the two profiles are equal
/// (`test/passes/instrument-profile/same-profile.gir`).
pub fn collect_instrumented(
    f: &Function,
    base: &BTreeMap<String, Vec<u8>>,
    samples: &[Sample],
    bins: usize,
) -> Result<Profile, RunError> {
    use glow_passes::pass::{PassContext, PassOptions, Stats};
    let info = &glow_passes::info::INSTRUMENT_PROFILE;
    let mut g = f.clone();
    let mut opts = PassOptions::default();
    opts.values.insert("bins".to_string(), bins.to_string());
    let mut pass = (info.create)(&opts).map_err(RunError::Message)?;
    let mut stats = Stats::default();
    pass.run(&mut g, &mut PassContext::for_pass(info, &mut stats, None))
        .map_err(|d| {
            RunError::Message(
                d.iter()
                    .map(|d| d.message.clone())
                    .collect::<Vec<_>>()
                    .join("; "),
            )
        })?;
    // Each profiled buffer and its state weights, in the order of the first
    // profile of each (the order `collect` meets the buffers in).
    let mut order: Vec<(String, String, String)> = Vec::new();
    for i in g.inst_ids() {
        let inst = g.inst(i);
        if inst.opcode != Opcode::QuantizationProfile {
            continue;
        }
        let name = |k: usize| g.value_name(inst.operands[k].value).to_string();
        let buffer = g.value_name(g.origin(inst.operands[0].value).0).to_string();
        if !order.iter().any(|(b, _, _)| *b == buffer) {
            order.push((buffer, name(1), name(2)));
        }
    }
    let mut state: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for (_, h, c) in &order {
        state.insert(h.clone(), vec![0; bins * 4]);
        let start: Vec<u8> = [f32::INFINITY, f32::NEG_INFINITY]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        state.insert(c.clone(), start);
    }
    let opts = run::RunOptions::interpreter(0);
    for s in samples {
        let mut weights = base.clone();
        weights.extend(s.iter().map(|(k, v)| (k.clone(), v.clone())));
        weights.extend(state.iter().map(|(k, v)| (k.clone(), v.clone())));
        let out = run::run(&g, &weights, &opts)?;
        for t in out.mutable {
            if let Some(v) = state.get_mut(&t.name) {
                *v = t.data;
            }
        }
    }
    let buffers = order
        .iter()
        .map(|(b, h, c)| {
            let info = floats(&state[c]);
            BufferProfile {
                name: b.clone(),
                min: info[0],
                max: info[1],
                histogram: floats(&state[h]),
            }
        })
        .collect();
    Ok(Profile {
        function: f.name.clone(),
        hash: function_hash(f),
        samples: samples.len() as u64,
        bins,
        buffers,
    })
}
