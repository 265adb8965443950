//! The interpreter's recommendation kernels (docs/gir.md, "Recommendation"),
//! in the operation order of the C kernels in `emit/sparse.rs`: sums start
//! at +0 and add `row * weight` (or `row`) in index order; an index outside
//! its table, or a length running past the indices, skips the row.

use super::Exec;
use crate::elem::splat_bits;
use crate::error::BackendError;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode};

type R = Result<(), BackendError>;

pub fn exec(x: &mut Exec) -> R {
    match x.opcode() {
        Opcode::LengthsSum => lengths_sum(x),
        Opcode::SparseLengthsSum | Opcode::SparseLengthsWeightedSum => sparse_lengths_sum(x),
        Opcode::Embedding => embedding(x),
        Opcode::EmbeddingBag => embedding_bag(x),
        Opcode::LengthsToRanges => lengths_to_ranges(x),
        Opcode::LengthsRangeFill => lengths_range_fill(x),
        Opcode::GatherRanges => gather_ranges(x),
        Opcode::SparseToDenseMask => sparse_to_dense_mask(x),
        Opcode::BatchSparseToDense => batch_sparse_to_dense(x),
        Opcode::FillExamplesWithIndicator => fill_examples(x),
        Opcode::SparseLabelSplit => sparse_label_split(x),
        Opcode::RowwiseQuantizedSparseLengthsWeightedSum => rowwise_sls(x),
        Opcode::FusedRowwiseQuantizedSparseLengthsWeightedSum
        | Opcode::FusedRowwiseQuantizedSparseLengthsSum
        | Opcode::EmbeddingBagByteRowwiseOffsets => fused(x),
        Opcode::BatchedUnaryEmbeddingsBags => unary_bags(x),
        Opcode::PermutePooledEmbeddings => permute_pooled(x),
        _ => Err(x.err("not a recommendation instruction")),
    }
}

/// Rows and the elements per row (the dims after the first) of `name`.
fn rows(x: &Exec, name: &str) -> Result<(usize, usize), BackendError> {
    let t = x.ty(name)?;
    let r = t.dims[0] as usize;
    Ok((r, t.size() as usize / r.max(1)))
}

/// Index operands as integers (index kinds only, as the C kernels declare them).
fn index(x: &Exec, name: &str) -> Result<Vec<i64>, BackendError> {
    let t = x.ty(name)?;
    match t.elem {
        ElemKind::Index32 | ElemKind::Index64 => x.ints(name),
        _ => Err(x.unsupported(&t)),
    }
}

/// `Dest[s] += Data[p]` over the consecutive rows of each segment.
fn lengths_sum(x: &mut Exec) -> R {
    let (n, line) = rows(x, "Data")?;
    let data = x.f32s("Data")?;
    let lengths = index(x, "Lengths")?;
    let mut out = vec![0f32; lengths.len() * line];
    let mut p = 0usize;
    for (s, &len) in lengths.iter().enumerate() {
        for _ in 0..len.max(0) {
            if p >= n {
                break;
            }
            for k in 0..line {
                out[s * line + k] += data[p * line + k];
            }
            p += 1;
        }
    }
    x.put_f32s("Dest", &out)
}

fn sparse_lengths_sum(x: &mut Exec) -> R {
    let weighted = x.opcode() == Opcode::SparseLengthsWeightedSum;
    let (r, line) = rows(x, "Data")?;
    let data = x.f32s("Data")?;
    let idx = index(x, "Indices")?;
    let lengths = index(x, "Lengths")?;
    let w = if weighted {
        Some(x.f32s("Weights")?)
    } else {
        None
    };
    let mut out = vec![0f32; lengths.len() * line];
    let mut cur = 0usize;
    for (s, &len) in lengths.iter().enumerate() {
        for _ in 0..len.max(0) {
            if cur >= idx.len() {
                break;
            }
            let i = idx[cur];
            let wt = w.as_ref().map(|w| w[cur]);
            cur += 1;
            if i < 0 || i as u64 >= r as u64 {
                continue;
            }
            let row = &data[i as usize * line..][..line];
            let o = &mut out[s * line..][..line];
            match wt {
                Some(wt) => o.iter_mut().zip(row).for_each(|(o, &d)| *o += d * wt),
                None => o.iter_mut().zip(row).for_each(|(o, &d)| *o += d),
            }
        }
    }
    x.put_f32s("Dest", &out)
}

fn embedding(x: &mut Exec) -> R {
    let (r, line) = rows(x, "Weights")?;
    let wts = x.bits("Weights")?;
    let idx = index(x, "Indices")?;
    let pad = x.m().get(m::PAD_IDX)?;
    let mut out = vec![0u64; idx.len() * line];
    for (k, &i) in idx.iter().enumerate() {
        if i == pad || i < 0 || i as u64 >= r as u64 {
            continue;
        }
        out[k * line..][..line].copy_from_slice(&wts[i as usize * line..][..line]);
    }
    x.put_bits("Dest", &out)
}

/// One bag's bounds in `Offsets`.
enum Bag {
    Empty,
    /// It ends before it starts: no more bags.
    Stop,
    Range(i64, i64),
}

/// Glow's bag bounds: `end` the next offset, or the index count `n` for the
/// last bag without an end offset (the C kernels' `open_bags`).
fn bag_bounds(off: &[i64], b: usize, bags: usize, has_end: bool, n: usize) -> Bag {
    let start = off[b];
    let end = if !has_end && b == bags - 1 {
        n as i64
    } else {
        off[b + 1]
    };
    match start.cmp(&end) {
        std::cmp::Ordering::Equal => Bag::Empty,
        std::cmp::Ordering::Greater => Bag::Stop,
        std::cmp::Ordering::Less => Bag::Range(start, end),
    }
}

/// Glow's order: the bags take indices from one running position, each bag
/// `Offsets[b]..end` long (end the next offset, or the index count for the
/// last bag without `HasEndOffset`); an empty bag is skipped, and a bag that
/// ends before it starts ends the instruction.
fn embedding_bag(x: &mut Exec) -> R {
    let (r, line) = rows(x, "Data")?;
    let data = x.f32s("Data")?;
    let w = x.f32s("Weights")?;
    let idx = index(x, "Indices")?;
    let off = index(x, "Offsets")?;
    let has_end = x.m().get(m::HAS_END_OFFSET)?;
    let bags = if has_end { off.len() - 1 } else { off.len() };
    let n = idx.len();
    let mut out = vec![0f32; bags * line];
    let mut cur = 0usize;
    for b in 0..bags {
        let (start, end) = match bag_bounds(&off, b, bags, has_end, n) {
            Bag::Empty => continue,
            Bag::Stop => break,
            Bag::Range(s, e) => (s, e),
        };
        // At most the indices left: `end - start` may be anything.
        let count = (end as i128 - start as i128).min((n - cur) as i128) as usize;
        for _ in 0..count {
            let (i, wt) = (idx[cur], w[cur]);
            cur += 1;
            if i < 0 || i as u64 >= r as u64 {
                continue;
            }
            let row = &data[i as usize * line..][..line];
            let o = &mut out[b * line..][..line];
            o.iter_mut().zip(row).for_each(|(o, &d)| *o += d * wt);
        }
    }
    x.put_f32s("Dest", &out)
}

fn lengths_to_ranges(x: &mut Exec) -> R {
    let lengths = index(x, "Lengths")?;
    index(x, "Dest")?;
    let mut out = Vec::with_capacity(lengths.len() * 2);
    let mut offset = 0i64;
    for &len in &lengths {
        out.push(offset);
        out.push(len);
        offset = offset.wrapping_add(len);
    }
    x.put_ints("Dest", &out)
}

fn lengths_range_fill(x: &mut Exec) -> R {
    let lengths = index(x, "Lengths")?;
    let n = index(x, "Dest")?.len();
    let mut out = vec![0i64; n];
    let mut cur = 0usize;
    'all: for &len in &lengths {
        for j in 0..len.max(0) {
            if cur >= n {
                break 'all;
            }
            out[cur] = j;
            cur += 1;
        }
    }
    x.put_ints("Dest", &out)
}

/// Ranges copied in order into `Output` (zeros after the last); elements
/// outside `Data` read as zero, those past `Output`'s end are dropped, and a
/// negative length counts as 0.
fn gather_ranges(x: &mut Exec) -> R {
    let data = x.bits("Data")?;
    let ranges = index(x, "Ranges")?;
    let rt = x.ty("Ranges")?;
    let (e, per) = (rt.dims[0] as usize, rt.dims[1] as usize);
    let m = x.ty("Output")?.size() as usize;
    let mut out = vec![0u64; m];
    let mut lengths = vec![0i64; e];
    let mut p = 0usize;
    for (ex, total) in lengths.iter_mut().enumerate() {
        for r in 0..per {
            let start = ranges[(ex * per + r) * 2];
            let len = ranges[(ex * per + r) * 2 + 1].max(0);
            *total = total.wrapping_add(len);
            let count = (len as u64).min((m - p) as u64) as usize;
            for t in 0..count {
                let s = start as i128 + t as i128;
                if s >= 0 && s < data.len() as i128 {
                    out[p] = data[s as usize];
                }
                p += 1;
            }
        }
    }
    x.put_bits("Output", &out)?;
    x.put_ints("Lengths", &lengths)
}

fn sparse_to_dense_mask(x: &mut Exec) -> R {
    let idx = index(x, "Indices")?;
    let values = x.bits("Values")?;
    let default = x.bits("DefaultValue")?;
    let lengths = index(x, "Lengths")?;
    let mask = x.m().get(m::MASK)?.to_vec();
    let line = default.len();
    let mut out = Vec::with_capacity(lengths.len() * mask.len() * line);
    let mut pos = 0usize;
    for &len in &lengths {
        let base = out.len();
        for _ in 0..mask.len() {
            out.extend_from_slice(&default);
        }
        for _ in 0..len.max(0) {
            if pos >= idx.len() {
                break;
            }
            if let Some(to) = mask.iter().position(|&id| id == idx[pos]) {
                out[base + to * line..][..line].copy_from_slice(&values[pos * line..][..line]);
            }
            pos += 1;
        }
    }
    x.put_bits("Dest", &out)
}

fn batch_sparse_to_dense(x: &mut Exec) -> R {
    let dt = x.ty("Dest")?;
    let dense = dt.dims[1] as usize;
    let lengths = index(x, "Lengths")?;
    let idx = index(x, "Indices")?;
    let values = x.bits("Values")?;
    let fill =
        splat_bits(dt.elem, x.m().get(m::DEFAULT_VALUE)?).ok_or_else(|| x.unsupported(&dt))?;
    let mut out = vec![fill; dt.size() as usize];
    let mut k = 0usize;
    for (b, &len) in lengths.iter().enumerate() {
        for _ in 0..len.max(0) {
            if k >= idx.len() {
                break;
            }
            let i = idx[k];
            if i >= 0 && (i as u64) < dense as u64 {
                out[b * dense + i as usize] = values[k];
            }
            k += 1;
        }
    }
    x.put_bits("Dest", &out)
}

fn fill_examples(x: &mut Exec) -> R {
    let (k, line) = rows(x, "Data")?;
    let data = x.bits("Data")?;
    let ind = x.ints("Indicator")?;
    let mut out = vec![0u64; ind.len() * line];
    let mut p = 0usize;
    for (b, &on) in ind.iter().enumerate() {
        if on != 0 {
            if p < k {
                out[b * line..][..line].copy_from_slice(&data[p * line..][..line]);
            }
            p += 1;
        }
    }
    x.put_bits("Dest", &out)
}

/// Each value goes to its label's row at the next free column; a label out
/// of range, or one whose row is full, drops the value (offset -1).
fn sparse_label_split(x: &mut Exec) -> R {
    let lengths = index(x, "Lengths")?;
    let idx = index(x, "Indices")?;
    let values = x.bits("Values")?;
    let lt = x.ty("LabelValues")?;
    let (labels, per) = (lt.dims[0] as usize, lt.dims[1] as usize);
    index(x, "ExampleIds")?;
    index(x, "GradientOffsetMap")?;
    let mut lv = vec![0u64; labels * per];
    let mut ei = vec![0i64; labels * per];
    let mut gom = vec![0i64; idx.len()];
    let mut count = vec![0usize; labels];
    let mut pos = 0usize;
    'all: for (ex, &len) in lengths.iter().enumerate() {
        for _ in 0..len.max(0) {
            if pos >= idx.len() {
                break 'all;
            }
            let l = idx[pos];
            gom[pos] = -1;
            if l >= 0 && (l as u64) < labels as u64 && count[l as usize] < per {
                let (l, c) = (l as usize, count[l as usize]);
                count[l] += 1;
                gom[pos] = c as i64;
                lv[l * per + c] = values[pos];
                ei[l * per + c] = ex as i64;
            }
            pos += 1;
        }
    }
    x.put_bits("LabelValues", &lv)?;
    x.put_ints("ExampleIds", &ei)?;
    x.put_ints("GradientOffsetMap", &gom)
}

/// Each `ui8` element becomes `q * Scales[row] + Offsets[row]` (Glow's
/// `dequantizeWithFloatOffset`), then the weighted segment sum.
fn rowwise_sls(x: &mut Exec) -> R {
    let dt = x.ty("Data")?;
    if !matches!(dt.elem, ElemKind::UInt8Q { .. }) {
        return Err(x.unsupported(&dt));
    }
    let (r, line) = rows(x, "Data")?;
    let data = x.ints("Data")?;
    let (scales, offsets) = (x.f32s("Scales")?, x.f32s("Offsets")?);
    let w = x.f32s("Weights")?;
    let idx = index(x, "Indices")?;
    let lengths = index(x, "Lengths")?;
    let mut out = vec![0f32; lengths.len() * line];
    let mut cur = 0usize;
    for (s, &len) in lengths.iter().enumerate() {
        for _ in 0..len.max(0) {
            if cur >= idx.len() {
                break;
            }
            let (i, wt) = (idx[cur], w[cur]);
            cur += 1;
            if i < 0 || i as u64 >= r as u64 {
                continue;
            }
            let i = i as usize;
            let (scale, offset) = (scales[i], offsets[i]);
            for k in 0..line {
                let d = data[i * line + k] as f32 * scale + offset;
                out[s * line + k] += d * wt;
            }
        }
    }
    x.put_f32s("Dest", &out)
}

/// Glow's order: per task, batch and table, the sum from +0 of the
/// `Weights` elements at `task * TableOffsets[T] + TableOffsets[t] + index`
/// (64-bit wrapping arithmetic) for the indices `Offsets[t * B + b]` up to
/// the next offset; positions outside `Indices` and elements outside
/// `Weights` are skipped.
fn unary_bags(x: &mut Exec) -> R {
    let wts = x.f32s("Weights")?;
    let tasks = x.ty("Weights")?.dims[0] as usize;
    let to = index(x, "TableOffsets")?;
    let off = index(x, "Offsets")?;
    let idx = index(x, "Indices")?;
    let tables = to.len() - 1;
    let batches = (off.len() - 1) / tables;
    let sum_table = to[tables] as u64;
    let mut out = vec![0f32; tasks * batches * tables];
    for n in 0..tasks {
        for b in 0..batches {
            for t in 0..tables {
                let start = off[t * batches + b].max(0) as u64;
                let end = (off[t * batches + b + 1].max(0) as u64).min(idx.len() as u64);
                let mut sum = 0f32;
                for i in start..end.max(start) {
                    let at = (n as u64)
                        .wrapping_mul(sum_table)
                        .wrapping_add(to[t] as u64)
                        .wrapping_add(idx[i as usize] as u64);
                    if at < wts.len() as u64 {
                        sum += wts[at as usize];
                    }
                }
                out[(n * batches + b) * tables + t] = sum;
            }
        }
    }
    x.put_f32s("Dest", &out)
}

/// The column ranges `OffsetDimList[p]..OffsetDimList[p + 1]` of each
/// permuted embedding `p` in `PermuteList` order, side by side from column
/// 0; a `p` out of range adds nothing, a column outside the input reads
/// zero, and columns past the end are dropped (the rest is zero).
fn permute_pooled(x: &mut Exec) -> R {
    let pt = x.ty("PooledEmbeddings")?;
    let (b, d) = (pt.dims[0] as usize, pt.dims[1] as usize);
    let pe = x.bits("PooledEmbeddings")?;
    let offs = index(x, "OffsetDimList")?;
    let perm = index(x, "PermuteList")?;
    let mut out = vec![0u64; b * d];
    let mut o = 0usize;
    'all: for &p in &perm {
        if p < 0 || p as u64 + 1 >= offs.len() as u64 {
            continue;
        }
        let (from, to) = (offs[p as usize], offs[p as usize + 1]);
        let mut j = from;
        while j < to {
            if o >= d {
                break 'all;
            }
            if j >= 0 && (j as u64) < d as u64 {
                for r in 0..b {
                    out[r * d + o] = pe[r * d + j as usize];
                }
            }
            o += 1;
            j += 1;
        }
    }
    x.put_bits("Dest", &out)
}

/// A fused table: its bytes, row width, layout; `float` scales only.
struct FusedTable {
    bytes: Vec<u8>,
    width: usize,
    rows: usize,
    f: glow_ir::types::Fused,
}

impl FusedTable {
    fn read(x: &Exec) -> Result<FusedTable, BackendError> {
        let t = x.ty("Data")?;
        let ElemKind::Fused(f) = t.elem else {
            return Err(x.unsupported(&t));
        };
        if f.fp16 {
            return Err(x.unsupported(&t));
        }
        let bytes = x.bits("Data")?.into_iter().map(|b| b as u8).collect();
        Ok(FusedTable {
            bytes,
            width: t.dims[1] as usize,
            rows: t.dims[0] as usize,
            f,
        })
    }

    /// Adds `q * scale + offset` of each value of row `r`, times `w` when
    /// weighted, to `out` (the C kernel's order).
    fn add_row(&self, r: usize, w: Option<f32>, out: &mut [f32]) {
        let row = &self.bytes[r * self.width..][..self.width];
        let e = self.width - 8;
        let scale = f32::from_le_bytes([row[e], row[e + 1], row[e + 2], row[e + 3]]);
        let offset = f32::from_le_bytes([row[e + 4], row[e + 5], row[e + 6], row[e + 7]]);
        for (k, o) in out.iter_mut().enumerate() {
            let q = if self.f.nibbles {
                (row[k / 2] >> (4 * (k % 2))) & 0x0f
            } else {
                row[k]
            };
            let d = q as f32 * scale + offset;
            match w {
                Some(w) => *o += d * w,
                None => *o += d,
            }
        }
    }
}

/// The fused row-wise sums: as `sparselengths(weighted)sum`, or (for
/// `embeddingbagbyterowwiseoffsets`) each bag the index positions
/// `Offsets[b]..end` themselves, as Glow's kernel reads them.
fn fused(x: &mut Exec) -> R {
    let table = FusedTable::read(x)?;
    let dt = x.ty("Dest")?;
    let line = (dt.size() / dt.dims[0]) as usize;
    let idx = index(x, "Indices")?;
    let weighted = x.opcode() != Opcode::FusedRowwiseQuantizedSparseLengthsSum;
    let w = if weighted {
        Some(x.f32s("Weights")?)
    } else {
        None
    };
    let n = idx.len();
    let mut out = vec![0f32; dt.size() as usize];
    let add = |s: usize, j: usize, out: &mut Vec<f32>| {
        let i = idx[j];
        if i >= 0 && (i as u64) < table.rows as u64 {
            let wt = w.as_ref().map(|w| w[j]);
            table.add_row(i as usize, wt, &mut out[s * line..][..line]);
        }
    };
    if x.opcode() == Opcode::EmbeddingBagByteRowwiseOffsets {
        let off = index(x, "Offsets")?;
        let has_end = x.m().get(m::HAS_END_OFFSET)?;
        let bags = dt.dims[0] as usize;
        for b in 0..bags {
            let (start, end) = match bag_bounds(&off, b, bags, has_end, n) {
                Bag::Empty => continue,
                Bag::Stop => break,
                Bag::Range(s, e) => (s, e),
            };
            for j in start.max(0)..end.min(n as i64) {
                add(b, j as usize, &mut out);
            }
        }
    } else {
        let lengths = index(x, "Lengths")?;
        let mut cur = 0usize;
        for (s, &len) in lengths.iter().enumerate() {
            for _ in 0..len.max(0) {
                if cur >= n {
                    break;
                }
                add(s, cur, &mut out);
                cur += 1;
            }
        }
    }
    x.put_f32s("Dest", &out)
}
