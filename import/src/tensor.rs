//! Constant tensors: decoding `TensorProto`s (raw_data, typed fields,
//! external data, the corpus's stripped tensors), and the few whole-tensor
//! operations the importer does at import time (permute, reshape). Every
//! size is checked, so a hostile file yields an error, never a panic or a
//! huge allocation from a lying header.

use crate::error::{ImportError, Result};
use crate::onnx::{dtype, TensorProto};
use std::path::Path;

/// Element data of a constant. Floats (FLOAT, DOUBLE) become `F32`; integer
/// and bool kinds become `I64` (they only ever feed shapes and attributes).
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    I64(Vec<i64>),
}

/// A constant known at import time. `dims` may be empty (a scalar).
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    pub dims: Vec<u64>,
    pub data: Data,
}

/// How to treat stripped tensors.
#[derive(Clone, Copy, Debug, Default)]
pub struct StrippedPolicy {
    /// `Some(seed)`: fill with seeded normal values of the recorded mean/std.
    pub fill_seed: Option<u64>,
}

/// Largest tensor the importer will materialize (elements): the tensor
/// limit of `glow_ir::limits` in f32 elements (what every tensor becomes),
/// a guard against headers that claim absurd sizes.
const MAX_ELEMS: u64 = glow_ir::limits::MAX_TENSOR_BYTES / 4;

impl Tensor {
    pub fn f32(dims: Vec<u64>, v: Vec<f32>) -> Tensor {
        Tensor {
            dims,
            data: Data::F32(v),
        }
    }
    pub fn i64(dims: Vec<u64>, v: Vec<i64>) -> Tensor {
        Tensor {
            dims,
            data: Data::I64(v),
        }
    }
    pub fn len(&self) -> usize {
        match &self.data {
            Data::F32(v) => v.len(),
            Data::I64(v) => v.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Values as f32 (integers converted).
    pub fn to_f32(&self) -> Vec<f32> {
        match &self.data {
            Data::F32(v) => v.clone(),
            Data::I64(v) => v.iter().map(|&x| x as f32).collect(),
        }
    }
    /// Values as i64 (floats truncated).
    pub fn to_i64(&self) -> Vec<i64> {
        match &self.data {
            Data::F32(v) => v.iter().map(|&x| x as i64).collect(),
            Data::I64(v) => v.clone(),
        }
    }
    /// The same data with other dims (same element count, checked by caller).
    pub fn reshaped(&self, dims: Vec<u64>) -> Tensor {
        Tensor {
            dims,
            data: self.data.clone(),
        }
    }
    /// `Some(v)` when every element is `v` (and there is at least one).
    pub fn splat_value(&self) -> Option<f64> {
        match &self.data {
            Data::F32(v) => {
                let first = *v.first()?;
                v.iter()
                    .all(|x| x.to_bits() == first.to_bits())
                    .then_some(first as f64)
            }
            Data::I64(v) => {
                let first = *v.first()?;
                v.iter().all(|&x| x == first).then_some(first as f64)
            }
        }
    }
    /// Transposes: result dim `i` is source dim `perm[i]`.
    pub fn permuted(&self, perm: &[usize]) -> Tensor {
        let dims: Vec<u64> = perm.iter().map(|&p| self.dims[p]).collect();
        let data = match &self.data {
            Data::F32(v) => Data::F32(permute(v, &self.dims, perm)),
            Data::I64(v) => Data::I64(permute(v, &self.dims, perm)),
        };
        Tensor { dims, data }
    }
}

/// `v` (of `dims`) transposed so that result dim `i` is source dim `perm[i]`.
fn permute<T: Copy>(v: &[T], dims: &[u64], perm: &[usize]) -> Vec<T> {
    let src_strides = strides(dims);
    let out_dims: Vec<u64> = perm.iter().map(|&p| dims[p]).collect();
    let step: Vec<u64> = perm.iter().map(|&p| src_strides[p]).collect();
    let mut out = Vec::with_capacity(v.len());
    let mut idx = vec![0u64; out_dims.len()];
    let mut off = 0u64;
    for _ in 0..v.len() {
        out.push(v[off as usize]);
        // Odometer increment, keeping the source offset in step.
        for k in (0..idx.len()).rev() {
            idx[k] += 1;
            off += step[k];
            if idx[k] < out_dims[k] {
                break;
            }
            off -= step[k] * idx[k];
            idx[k] = 0;
        }
    }
    out
}

/// Row-major strides of `dims`.
pub fn strides(dims: &[u64]) -> Vec<u64> {
    let mut s = vec![1u64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        s[k] = s[k + 1] * dims[k + 1];
    }
    s
}

/// Element count of `dims`, or an error when negative or too large.
pub fn checked_dims(name: &str, dims: &[i64]) -> Result<(Vec<u64>, u64)> {
    let mut out = Vec::with_capacity(dims.len());
    let mut n: u64 = 1;
    for &d in dims {
        let d = u64::try_from(d).map_err(|_| ImportError::tensor(name, "negative dimension"))?;
        n = n.saturating_mul(d);
        out.push(d);
    }
    if n > MAX_ELEMS {
        return Err(ImportError::tensor(
            name,
            format!(
                "{} elements ({} bytes as float) is more than the limit of {} bytes per tensor",
                if n == u64::MAX {
                    "more than 2^64".to_string()
                } else {
                    n.to_string()
                },
                if n == u64::MAX {
                    "more than 2^64".to_string()
                } else {
                    n.saturating_mul(4).to_string()
                },
                glow_ir::limits::MAX_TENSOR_BYTES
            ),
        ));
    }
    Ok((out, n))
}

/// Whether a tensor is one of the corpus's stripped tensors.
pub fn is_stripped(t: &TensorProto) -> bool {
    t.data_location == 1
        && t.external_data
            .iter()
            .any(|e| e.key == "location" && e.value == "__stripped__")
}

/// Decodes a tensor; `base` is the model's folder (for external data).
pub fn decode(t: &TensorProto, base: Option<&Path>, policy: StrippedPolicy) -> Result<Tensor> {
    let name = t.name.as_str();
    let (dims, n) = checked_dims(name, &t.dims)?;
    if is_stripped(t) {
        let Some(seed) = policy.fill_seed else {
            return Err(ImportError::Stripped {
                name: name.to_string(),
                count: 1,
            });
        };
        return Ok(Tensor::f32(dims, fill_stripped(t, n as usize, seed)));
    }
    let code = t.data_type;
    let external;
    let raw: &[u8] = if t.data_location == 1 {
        external = read_external(t, base)?;
        &external
    } else {
        &t.raw_data
    };
    let n = n as usize;
    let data = if !raw.is_empty() || t.data_location == 1 {
        from_raw(name, code, raw, n)?
    } else {
        from_typed(t, n)?
    };
    let got = match &data {
        Data::F32(v) => v.len(),
        Data::I64(v) => v.len(),
    };
    if got != n {
        return Err(ImportError::tensor(
            name,
            format!("has {got} values but its dims {dims:?} need {n}"),
        ));
    }
    Ok(Tensor { dims, data })
}

fn elem_size(name: &str, code: i32) -> Result<usize> {
    Ok(match code {
        dtype::FLOAT | dtype::INT32 | 12 => 4,
        dtype::DOUBLE | dtype::INT64 | 13 => 8,
        dtype::INT8 | dtype::UINT8 | dtype::BOOL => 1,
        4 | 5 => 2,
        _ => {
            return Err(ImportError::tensor(
                name,
                format!("element type {} is not supported", dtype::name(code)),
            ))
        }
    })
}

fn from_raw(name: &str, code: i32, raw: &[u8], n: usize) -> Result<Data> {
    let size = elem_size(name, code)?;
    if raw.len() != n * size {
        return Err(ImportError::tensor(
            name,
            format!(
                "raw data has {} bytes but {n} elements of {} need {}",
                raw.len(),
                dtype::name(code),
                n * size
            ),
        ));
    }
    let chunks = raw.chunks_exact(size);
    let arr4 = |c: &[u8]| [c[0], c[1], c[2], c[3]];
    let arr8 = |c: &[u8]| [c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]];
    Ok(match code {
        dtype::FLOAT => Data::F32(chunks.map(|c| f32::from_le_bytes(arr4(c))).collect()),
        dtype::DOUBLE => Data::F32(chunks.map(|c| f64::from_le_bytes(arr8(c)) as f32).collect()),
        dtype::INT32 => Data::I64(chunks.map(|c| i32::from_le_bytes(arr4(c)) as i64).collect()),
        12 => Data::I64(chunks.map(|c| u32::from_le_bytes(arr4(c)) as i64).collect()),
        dtype::INT64 => Data::I64(chunks.map(|c| i64::from_le_bytes(arr8(c))).collect()),
        13 => Data::I64(chunks.map(|c| u64::from_le_bytes(arr8(c)) as i64).collect()),
        dtype::INT8 => Data::I64(chunks.map(|c| c[0] as i8 as i64).collect()),
        dtype::UINT8 | dtype::BOOL => Data::I64(chunks.map(|c| c[0] as i64).collect()),
        4 => Data::I64(
            chunks
                .map(|c| u16::from_le_bytes([c[0], c[1]]) as i64)
                .collect(),
        ),
        _ => Data::I64(
            chunks
                .map(|c| i16::from_le_bytes([c[0], c[1]]) as i64)
                .collect(),
        ),
    })
}

fn from_typed(t: &TensorProto, n: usize) -> Result<Data> {
    let name = t.name.as_str();
    Ok(match t.data_type {
        dtype::FLOAT => Data::F32(t.float_data.clone()),
        dtype::DOUBLE => Data::F32(t.double_data.iter().map(|&x| x as f32).collect()),
        dtype::INT64 => Data::I64(t.int64_data.clone()),
        dtype::INT32 | dtype::INT8 | dtype::UINT8 | dtype::BOOL | 4 | 5 => {
            Data::I64(t.int32_data.iter().map(|&x| x as i64).collect())
        }
        12 | 13 => Data::I64(t.uint64_data.iter().map(|&x| x as i64).collect()),
        code => {
            // An empty tensor of an unknown type is harmless (optional inputs).
            if n == 0 {
                return Ok(Data::F32(Vec::new()));
            }
            return Err(ImportError::tensor(
                name,
                format!("element type {} is not supported", dtype::name(code)),
            ));
        }
    })
}

/// Reads the bytes of a tensor stored in an external file next to the model.
fn read_external(t: &TensorProto, base: Option<&Path>) -> Result<Vec<u8>> {
    let name = t.name.as_str();
    let get = |k: &str| {
        t.external_data
            .iter()
            .find(|e| e.key == k)
            .map(|e| &e.value)
    };
    let loc = get("location")
        .ok_or_else(|| ImportError::tensor(name, "external data without a location"))?;
    let rel = Path::new(loc);
    if rel.is_absolute() || rel.components().any(|c| c.as_os_str() == "..") {
        return Err(ImportError::tensor(
            name,
            format!("external data location `{loc}` must be a relative path below the model"),
        ));
    }
    let path = base.unwrap_or(Path::new(".")).join(rel);
    let bytes = std::fs::read(&path).map_err(|e| ImportError::Io {
        path: path.display().to_string(),
        msg: format!("external data of tensor `{name}`: {e}"),
    })?;
    let parse = |k: &str| -> Result<Option<usize>> {
        get(k)
            .map(|v| {
                v.parse::<usize>()
                    .map_err(|_| ImportError::tensor(name, format!("bad external `{k}`: {v}")))
            })
            .transpose()
    };
    let offset = parse("offset")?.unwrap_or(0);
    let len = parse("length")?.unwrap_or(bytes.len().saturating_sub(offset));
    let end = offset.checked_add(len).filter(|&e| e <= bytes.len());
    match end {
        Some(end) => Ok(bytes[offset..end].to_vec()),
        None => Err(ImportError::tensor(
            name,
            format!(
                "external range {offset}+{len} is outside `{}` ({} bytes)",
                path.display(),
                bytes.len()
            ),
        )),
    }
}

/// Seeded normal values with the mean/std recorded in the doc_string. The
/// seed is mixed with the tensor name so values do not depend on order.
fn fill_stripped(t: &TensorProto, n: usize, seed: u64) -> Vec<f32> {
    let stats: serde_json::Value = serde_json::from_str(&t.doc_string).unwrap_or_default();
    let num = |k: &str| stats.get(k).and_then(|v| v.as_f64());
    let mean = num("mean").unwrap_or(0.0);
    let std = num("std").unwrap_or(0.0).abs();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in t.name.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = SplitMix(seed ^ h);
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        // Box-Muller: two uniform draws give two independent normals.
        let u1 = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let u2 = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
        let r = (-2.0 * (1.0 - u1).ln()).sqrt();
        let a = std::f64::consts::TAU * u2;
        out.push((mean + std * r * a.cos()) as f32);
        if out.len() < n {
            out.push((mean + std * r * a.sin()) as f32);
        }
    }
    out
}

/// SplitMix64: small, fast, and the same on every platform.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permute_nchw_to_nhwc() {
        let t = Tensor::f32(vec![1, 2, 1, 3], (0..6).map(|x| x as f32).collect());
        let p = t.permuted(&[0, 2, 3, 1]);
        assert_eq!(p.dims, vec![1, 1, 3, 2]);
        assert_eq!(p.to_f32(), vec![0., 3., 1., 4., 2., 5.]);
    }

    #[test]
    fn raw_and_typed_agree() {
        let raw = TensorProto {
            dims: vec![2],
            data_type: dtype::FLOAT,
            raw_data: [1f32, 2.].iter().flat_map(|x| x.to_le_bytes()).collect(),
            ..Default::default()
        };
        let typed = TensorProto {
            dims: vec![2],
            data_type: dtype::FLOAT,
            float_data: vec![1., 2.],
            ..Default::default()
        };
        let p = StrippedPolicy::default();
        assert_eq!(
            decode(&raw, None, p).unwrap(),
            decode(&typed, None, p).unwrap()
        );
    }

    #[test]
    fn lying_sizes_are_errors() {
        let t = TensorProto {
            dims: vec![1 << 40, 1 << 40],
            data_type: dtype::FLOAT,
            ..Default::default()
        };
        assert!(decode(&t, None, StrippedPolicy::default()).is_err());
        let t = TensorProto {
            dims: vec![3],
            data_type: dtype::FLOAT,
            raw_data: vec![0; 5],
            ..Default::default()
        };
        assert!(decode(&t, None, StrippedPolicy::default()).is_err());
    }

    #[test]
    fn stripped_fill_is_seeded() {
        let t = TensorProto {
            name: "w".into(),
            dims: vec![1000],
            data_type: dtype::FLOAT,
            data_location: 1,
            doc_string: r#"{"stripped": true, "mean": 2.0, "std": 0.5}"#.into(),
            external_data: vec![crate::onnx::StringStringEntryProto {
                key: "location".into(),
                value: "__stripped__".into(),
            }],
            ..Default::default()
        };
        assert!(decode(&t, None, StrippedPolicy::default()).is_err());
        let p = StrippedPolicy { fill_seed: Some(7) };
        let a = decode(&t, None, p).unwrap().to_f32();
        assert_eq!(a, decode(&t, None, p).unwrap().to_f32());
        let mean = a.iter().sum::<f32>() / a.len() as f32;
        assert!((mean - 2.0).abs() < 0.1, "{mean}");
    }
}
