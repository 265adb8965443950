//! C kernels of the recommendation instructions (docs/gir.md,
//! "Recommendation"); `interp/sparse.rs` computes in the same order. Sums
//! start at +0 and add `row * weight` (or `row`) in index order; an index
//! outside its table, or a length running past the indices, skips the row.

use super::KCtx;
use crate::elem::{bits_ctype, ctype, splat_bits};
use crate::error::BackendError;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type};

type R = Result<(), BackendError>;

pub fn emit(c: &mut KCtx) -> R {
    match c.inst.opcode {
        Opcode::LengthsSum => lengths_sum(c),
        Opcode::SparseLengthsSum | Opcode::SparseLengthsWeightedSum => sparse_lengths_sum(c),
        Opcode::Embedding => embedding(c),
        Opcode::EmbeddingBag => embedding_bag(c),
        Opcode::LengthsToRanges => lengths_to_ranges(c),
        Opcode::LengthsRangeFill => lengths_range_fill(c),
        Opcode::GatherRanges => gather_ranges(c),
        Opcode::SparseToDenseMask => sparse_to_dense_mask(c),
        Opcode::BatchSparseToDense => batch_sparse_to_dense(c),
        Opcode::FillExamplesWithIndicator => fill_examples(c),
        Opcode::SparseLabelSplit => sparse_label_split(c),
        Opcode::RowwiseQuantizedSparseLengthsWeightedSum => rowwise_sls(c),
        Opcode::FusedRowwiseQuantizedSparseLengthsWeightedSum
        | Opcode::FusedRowwiseQuantizedSparseLengthsSum
        | Opcode::EmbeddingBagByteRowwiseOffsets => fused(c),
        Opcode::BatchedUnaryEmbeddingsBags => unary_bags(c),
        Opcode::PermutePooledEmbeddings => permute_pooled(c),
        _ => Err(c.err("not a recommendation instruction")),
    }
}

/// Rows and elements per row (the dims after the first) of `t`.
fn rows(t: &Type) -> (u64, u64) {
    let r = t.dims[0];
    (r, t.size() / r.max(1))
}

/// Declares an index operand (index kinds only, as the interpreter reads them).
fn decl_index(c: &mut KCtx, name: &str) -> Result<Type, BackendError> {
    let t = c.ty(name)?;
    match t.elem {
        ElemKind::Index32 | ElemKind::Index64 => {
            c.decl(name, ctype(t.elem))?;
            Ok(t)
        }
        _ => Err(c.unsupported(&t)),
    }
}

/// Declares a float operand.
fn decl_f32(c: &mut KCtx, name: &str) -> Result<Type, BackendError> {
    let t = c.ty(name)?;
    c.require_f32(&t)?;
    c.decl(name, "float")?;
    Ok(t)
}

/// An `int64_t` C literal (the most negative one has no literal of its own).
pub(super) fn c_i64(v: i64) -> String {
    if v == i64::MIN {
        "(-9223372036854775807ll - 1)".into()
    } else {
        format!("{v}ll")
    }
}

fn zero_f32(c: &mut KCtx, name: &str, n: u64) {
    c.w.line(&format!(
        "for (size_t z = 0; z < {n}u; z++) {name}[z] = 0.0f;"
    ));
}

fn lengths_sum(c: &mut KCtx) -> R {
    let dt = decl_f32(c, "Dest")?;
    let data = decl_f32(c, "Data")?;
    let lt = decl_index(c, "Lengths")?;
    let (n, line) = rows(&data);
    zero_f32(c, "Dest", dt.size());
    c.w.line("size_t p = 0;");
    c.w.for_loop("s", lt.size());
    c.w.line("const int64_t len = (int64_t)Lengths[s];");
    c.w.open("for (int64_t j = 0; j < len; j++)");
    c.w.line(&format!("if (p >= {n}u) break;"));
    c.w.line(&format!(
        "for (size_t k = 0; k < {line}u; k++) Dest[s * {line}u + k] += Data[p * {line}u + k];"
    ));
    c.w.line("p++;");
    c.w.close();
    c.w.close();
    Ok(())
}

/// Opens the walk of `segs` segments of `Lengths` over `n` indices, in
/// Glow's order: inside it `s` is the segment, `i` the in-range row (rows
/// outside `0..rows` are skipped, the walk stops when the indices run out)
/// and, when `weighted`, `w` its weight. The caller closes two blocks.
fn open_segments(c: &mut KCtx, segs: u64, n: u64, rows: u64, weighted: bool) {
    c.w.line("size_t cur = 0;");
    c.w.for_loop("s", segs);
    c.w.line("const int64_t len = (int64_t)Lengths[s];");
    c.w.open("for (int64_t j = 0; j < len; j++)");
    c.w.line(&format!("if (cur >= {n}u) break;"));
    c.w.line("const int64_t i = (int64_t)Indices[cur];");
    if weighted {
        c.w.line("const float w = Weights[cur];");
    }
    c.w.line("cur++;");
    c.w.line(&format!("if (i < 0 || i >= {rows}ll) continue;"));
}

fn sparse_lengths_sum(c: &mut KCtx) -> R {
    let weighted = c.inst.opcode == Opcode::SparseLengthsWeightedSum;
    let dt = decl_f32(c, "Dest")?;
    let data = decl_f32(c, "Data")?;
    if weighted {
        decl_f32(c, "Weights")?;
    }
    let it = decl_index(c, "Indices")?;
    let lt = decl_index(c, "Lengths")?;
    let (r, line) = rows(&data);
    let n = it.size();
    zero_f32(c, "Dest", dt.size());
    open_segments(c, lt.size(), n, r, weighted);
    let term = if weighted {
        format!("Data[(size_t)i * {line}u + k] * w")
    } else {
        format!("Data[(size_t)i * {line}u + k]")
    };
    c.w.line(&format!(
        "for (size_t k = 0; k < {line}u; k++) Dest[s * {line}u + k] += {term};"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

fn embedding(c: &mut KCtx) -> R {
    let dt = c.ty("Dest")?;
    let wt = c.ty("Weights")?;
    let bt = bits_ctype(dt.elem);
    c.decl("Dest", bt)?;
    c.decl("Weights", bt)?;
    let it = decl_index(c, "Indices")?;
    let pad = c.member(m::PAD_IDX)?;
    let (r, line) = rows(&wt);
    c.w.for_loop("k", it.size());
    c.w.line("const int64_t i = (int64_t)Indices[k];");
    c.w.line(&format!(
        "const int skip = i == {} || i < 0 || i >= {r}ll;",
        c_i64(pad)
    ));
    c.w.line(&format!(
        "for (size_t e = 0; e < {line}u; e++) Dest[k * {line}u + e] = skip ? ({bt})0 : Weights[(size_t)i * {line}u + e];"
    ));
    c.w.close();
    Ok(())
}

fn embedding_bag(c: &mut KCtx) -> R {
    let dt = decl_f32(c, "Dest")?;
    let data = decl_f32(c, "Data")?;
    decl_f32(c, "Weights")?;
    let it = decl_index(c, "Indices")?;
    let ot = decl_index(c, "Offsets")?;
    let has_end = c.member(m::HAS_END_OFFSET)?;
    let bags = if has_end { ot.size() - 1 } else { ot.size() };
    let (r, line) = rows(&data);
    let n = it.size();
    zero_f32(c, "Dest", dt.size());
    c.w.line("size_t cur = 0;");
    open_bags(c, "b", bags, has_end, n);
    c.w.line("const uint64_t span = (uint64_t)end - (uint64_t)start;");
    c.w.line(&format!("const uint64_t left = {n}u - cur;"));
    c.w.line("const uint64_t count = span < left ? span : left;");
    c.w.open("for (uint64_t j = 0; j < count; j++)");
    c.w.line("const int64_t i = (int64_t)Indices[cur];");
    c.w.line("const float w = Weights[cur];");
    c.w.line("cur++;");
    c.w.line(&format!("if (i < 0 || i >= {r}ll) continue;"));
    c.w.line(&format!(
        "for (size_t k = 0; k < {line}u; k++) Dest[b * {line}u + k] += Data[(size_t)i * {line}u + k] * w;"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

/// Opens the loop over `bags` bags (variable `b`) with `start` and `end`,
/// Glow's bag bounds: `end` the next offset, or the index count `n` for the
/// last bag without an end offset; an empty bag is skipped and one that
/// ends before it starts ends the loop. The caller closes it.
fn open_bags(c: &mut KCtx, b: &str, bags: u64, has_end: bool, n: u64) {
    c.w.for_loop(b, bags);
    c.w.line(&format!("const int64_t start = (int64_t)Offsets[{b}];"));
    if has_end {
        c.w.line(&format!("const int64_t end = (int64_t)Offsets[{b} + 1];"));
    } else {
        c.w.line(&format!(
            "const int64_t end = {b} == {}u ? {n}ll : (int64_t)Offsets[{b} + 1];",
            bags - 1
        ));
    }
    c.w.line("if (start == end) continue;");
    c.w.line("if (start > end) break;");
}

fn lengths_to_ranges(c: &mut KCtx) -> R {
    let dt = decl_index(c, "Dest")?;
    let lt = decl_index(c, "Lengths")?;
    let ct = ctype(dt.elem);
    c.w.line("uint64_t offset = 0;");
    c.w.for_loop("s", lt.size());
    c.w.line("const int64_t len = (int64_t)Lengths[s];");
    c.w.line(&format!("Dest[2 * s] = ({ct})(int64_t)offset;"));
    c.w.line(&format!("Dest[2 * s + 1] = ({ct})len;"));
    c.w.line("offset += (uint64_t)len;");
    c.w.close();
    Ok(())
}

fn lengths_range_fill(c: &mut KCtx) -> R {
    let dt = decl_index(c, "Dest")?;
    let lt = decl_index(c, "Lengths")?;
    let (ct, n) = (ctype(dt.elem), dt.size());
    c.w.line(&format!("for (size_t z = 0; z < {n}u; z++) Dest[z] = 0;"));
    c.w.line("size_t cur = 0;");
    c.w.for_loop("s", lt.size());
    c.w.line("const int64_t len = (int64_t)Lengths[s];");
    c.w.open(&format!("for (int64_t j = 0; j < len && cur < {n}u; j++)"));
    c.w.line(&format!("Dest[cur++] = ({ct})j;"));
    c.w.close();
    c.w.close();
    Ok(())
}

fn gather_ranges(c: &mut KCtx) -> R {
    let ot = c.ty("Output")?;
    let data = c.ty("Data")?;
    let bt = bits_ctype(ot.elem);
    c.decl("Output", bt)?;
    let lt = decl_index(c, "Lengths")?;
    c.decl("Data", bt)?;
    let rt = decl_index(c, "Ranges")?;
    let (e, per) = (rt.dims[0], rt.dims[1]);
    let (m, d) = (ot.size(), data.size());
    let lct = ctype(lt.elem);
    c.w.line(&format!("for (size_t z = 0; z < {m}u; z++) Output[z] = 0;"));
    c.w.line("size_t p = 0;");
    c.w.for_loop("ex", e);
    c.w.line("uint64_t total = 0;");
    c.w.for_loop("r", per);
    c.w.line(&format!(
        "const int64_t start = (int64_t)Ranges[(ex * {per}u + r) * 2];"
    ));
    c.w.line(&format!(
        "int64_t len = (int64_t)Ranges[(ex * {per}u + r) * 2 + 1];"
    ));
    c.w.line("if (len < 0) len = 0;");
    c.w.line("total += (uint64_t)len;");
    c.w.line(&format!("const uint64_t left = {m}u - p;"));
    c.w.line("const uint64_t count = (uint64_t)len < left ? (uint64_t)len : left;");
    c.w.open("for (uint64_t t = 0; t < count; t++)");
    // Wrapping arithmetic: start + t is inside Data exactly when this is below its size.
    c.w.line("const uint64_t s = (uint64_t)start + t;");
    c.w.line(&format!("if (s < {d}u) Output[p] = Data[s];"));
    c.w.line("p++;");
    c.w.close();
    c.w.close();
    c.w.line(&format!("Lengths[ex] = ({lct})(int64_t)total;"));
    c.w.close();
    Ok(())
}

fn sparse_to_dense_mask(c: &mut KCtx) -> R {
    let vt = c.ty("Values")?;
    let def = c.ty("DefaultValue")?;
    let bt = bits_ctype(vt.elem);
    c.decl("Dest", bt)?;
    let it = decl_index(c, "Indices")?;
    c.decl("Values", bt)?;
    c.decl("DefaultValue", bt)?;
    let lt = decl_index(c, "Lengths")?;
    let mask = c.member(m::MASK)?.to_vec();
    let line = def.size();
    let (mk, n) = (mask.len(), it.size());
    let ids: Vec<String> = mask.iter().map(|&v| c_i64(v)).collect();
    c.w.line(&format!(
        "static const int64_t mask[{mk}] = {{{}}};",
        ids.join(", ")
    ));
    c.w.line("size_t pos = 0;");
    c.w.for_loop("b", lt.size());
    c.w.line(&format!("{bt} *out = Dest + b * {}u;", mk as u64 * line));
    c.w.line(&format!(
        "for (size_t z = 0; z < {}u; z++) out[z] = DefaultValue[z % {line}u];",
        mk as u64 * line
    ));
    c.w.line("const int64_t len = (int64_t)Lengths[b];");
    c.w.open(&format!(
        "for (int64_t j = 0; j < len && pos < {n}u; j++, pos++)"
    ));
    c.w.line("const int64_t id = (int64_t)Indices[pos];");
    c.w.line("size_t to = 0;");
    c.w.line(&format!("while (to < {mk}u && mask[to] != id) to++;"));
    c.w.line(&format!(
        "if (to < {mk}u) for (size_t k = 0; k < {line}u; k++) out[to * {line}u + k] = Values[pos * {line}u + k];"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

fn batch_sparse_to_dense(c: &mut KCtx) -> R {
    let dt = c.ty("Dest")?;
    let bt = bits_ctype(dt.elem);
    let fill =
        splat_bits(dt.elem, c.member(m::DEFAULT_VALUE)?).ok_or_else(|| c.unsupported(&dt))?;
    c.decl("Dest", bt)?;
    let lt = decl_index(c, "Lengths")?;
    let it = decl_index(c, "Indices")?;
    c.decl("Values", bt)?;
    let dense = dt.dims[1];
    let n = it.size();
    c.w.line(&format!(
        "for (size_t z = 0; z < {}u; z++) Dest[z] = ({bt}){fill}ull;",
        dt.size()
    ));
    c.w.line("size_t k = 0;");
    c.w.for_loop("b", lt.size());
    c.w.line("const int64_t len = (int64_t)Lengths[b];");
    c.w.open(&format!(
        "for (int64_t j = 0; j < len && k < {n}u; j++, k++)"
    ));
    c.w.line("const int64_t i = (int64_t)Indices[k];");
    c.w.line(&format!(
        "if (i >= 0 && i < {dense}ll) Dest[b * {dense}u + (size_t)i] = Values[k];"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

fn fill_examples(c: &mut KCtx) -> R {
    let dt = c.ty("Dest")?;
    let data = c.ty("Data")?;
    let ind = c.ty("Indicator")?;
    let bt = bits_ctype(dt.elem);
    c.decl("Dest", bt)?;
    c.decl("Data", bt)?;
    c.decl("Indicator", ctype(ind.elem))?;
    let (k, line) = rows(&data);
    c.w.line(&format!(
        "for (size_t z = 0; z < {}u; z++) Dest[z] = 0;",
        dt.size()
    ));
    c.w.line("size_t p = 0;");
    c.w.for_loop("b", ind.size());
    c.w.line("if (Indicator[b] == 0) continue;");
    c.w.line(&format!(
        "if (p < {k}u) for (size_t e = 0; e < {line}u; e++) Dest[b * {line}u + e] = Data[p * {line}u + e];"
    ));
    c.w.line("p++;");
    c.w.close();
    Ok(())
}

fn sparse_label_split(c: &mut KCtx) -> R {
    let lv = c.ty("LabelValues")?;
    let bt = bits_ctype(lv.elem);
    c.decl("LabelValues", bt)?;
    let ei = decl_index(c, "ExampleIds")?;
    let gom = decl_index(c, "GradientOffsetMap")?;
    let lt = decl_index(c, "Lengths")?;
    let it = decl_index(c, "Indices")?;
    c.decl("Values", bt)?;
    let (labels, per) = (lv.dims[0], lv.dims[1]);
    let n = it.size();
    let (ect, gct) = (ctype(ei.elem), ctype(gom.elem));
    c.w.line(&format!(
        "for (size_t z = 0; z < {}u; z++) {{ LabelValues[z] = 0; ExampleIds[z] = 0; }}",
        labels * per
    ));
    c.w.line(&format!(
        "for (size_t z = 0; z < {n}u; z++) GradientOffsetMap[z] = 0;"
    ));
    c.w.line(&format!("size_t count[{labels}] = {{0}};"));
    c.w.line("size_t pos = 0;");
    c.w.for_loop("ex", lt.size());
    c.w.line("const int64_t len = (int64_t)Lengths[ex];");
    c.w.open(&format!(
        "for (int64_t j = 0; j < len && pos < {n}u; j++, pos++)"
    ));
    c.w.line("const int64_t l = (int64_t)Indices[pos];");
    c.w.line(&format!("GradientOffsetMap[pos] = ({gct})-1;"));
    c.w.line(&format!(
        "if (l < 0 || l >= {labels}ll || count[l] >= {per}u) continue;"
    ));
    c.w.line("const size_t col = count[l]++;");
    c.w.line(&format!("GradientOffsetMap[pos] = ({gct})col;"));
    c.w.line(&format!(
        "LabelValues[(size_t)l * {per}u + col] = Values[pos];"
    ));
    c.w.line(&format!(
        "ExampleIds[(size_t)l * {per}u + col] = ({ect})ex;"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

fn rowwise_sls(c: &mut KCtx) -> R {
    let dt = decl_f32(c, "Dest")?;
    let data = c.ty("Data")?;
    if !matches!(data.elem, ElemKind::UInt8Q { .. }) {
        return Err(c.unsupported(&data));
    }
    c.decl("Data", "uint8_t")?;
    decl_f32(c, "Scales")?;
    decl_f32(c, "Offsets")?;
    decl_f32(c, "Weights")?;
    let it = decl_index(c, "Indices")?;
    let lt = decl_index(c, "Lengths")?;
    let (r, line) = rows(&data);
    let n = it.size();
    zero_f32(c, "Dest", dt.size());
    open_segments(c, lt.size(), n, r, true);
    c.w.line("const float scale = Scales[i], offset = Offsets[i];");
    c.w.open(&format!("for (size_t k = 0; k < {line}u; k++)"));
    c.w.line(&format!(
        "const float d = (float)Data[(size_t)i * {line}u + k] * scale + offset;"
    ));
    c.w.line(&format!("Dest[s * {line}u + k] += d * w;"));
    c.w.close();
    c.w.close();
    c.w.close();
    Ok(())
}

fn unary_bags(c: &mut KCtx) -> R {
    let dt = decl_f32(c, "Dest")?;
    let wt = decl_f32(c, "Weights")?;
    let to = decl_index(c, "TableOffsets")?;
    let ot = decl_index(c, "Offsets")?;
    let it = decl_index(c, "Indices")?;
    let tables = to.size() - 1;
    let batches = (ot.size() - 1) / tables;
    let (tasks, n, size) = (wt.dims[0], it.size(), wt.size());
    let _ = dt;
    c.w.line(&format!(
        "const uint64_t sum_table = (uint64_t)(int64_t)TableOffsets[{tables}];"
    ));
    c.w.for_loop("n", tasks);
    c.w.for_loop("b", batches);
    c.w.for_loop("t", tables);
    c.w.line(&format!(
        "int64_t start = (int64_t)Offsets[t * {batches}u + b], end = (int64_t)Offsets[t * {batches}u + b + 1];"
    ));
    c.w.line("if (start < 0) start = 0;");
    c.w.line(&format!("if (end > {n}ll) end = {n}ll;"));
    c.w.line("float sum = 0.0f;");
    c.w.open("for (int64_t i = start; i < end; i++)");
    c.w.line(
        "const uint64_t at = (uint64_t)n * sum_table + (uint64_t)(int64_t)TableOffsets[t] + (uint64_t)(int64_t)Indices[i];",
    );
    c.w.line(&format!("if (at < {size}u) sum += Weights[at];"));
    c.w.close();
    c.w.line(&format!(
        "Dest[(n * {batches}u + b) * {tables}u + t] = sum;"
    ));
    c.w.close();
    c.w.close();
    c.w.close();
    Ok(())
}

fn permute_pooled(c: &mut KCtx) -> R {
    let pt = c.ty("PooledEmbeddings")?;
    let bt = bits_ctype(pt.elem);
    c.decl("Dest", bt)?;
    c.decl("PooledEmbeddings", bt)?;
    let ot = decl_index(c, "OffsetDimList")?;
    let pl = decl_index(c, "PermuteList")?;
    let (b, d) = (pt.dims[0], pt.dims[1]);
    c.w.line(&format!(
        "for (size_t z = 0; z < {}u; z++) Dest[z] = 0;",
        b * d
    ));
    c.w.line("size_t o = 0;");
    c.w.open(&format!(
        "for (size_t q = 0; q < {}u && o < {d}u; q++)",
        pl.size()
    ));
    c.w.line("const int64_t p = (int64_t)PermuteList[q];");
    c.w.line(&format!(
        "if (p < 0 || (uint64_t)p + 1 >= {}u) continue;",
        ot.size()
    ));
    c.w.line("const int64_t to = (int64_t)OffsetDimList[p + 1];");
    c.w.open(&format!(
        "for (int64_t j = (int64_t)OffsetDimList[p]; j < to && o < {d}u; j++, o++)"
    ));
    c.w.line(&format!(
        "if (j >= 0 && j < {d}ll) for (size_t r = 0; r < {b}u; r++) Dest[r * {d}u + o] = PooledEmbeddings[r * {d}u + (size_t)j];"
    ));
    c.w.close();
    c.w.close();
    Ok(())
}

fn fused(c: &mut KCtx) -> R {
    let op = c.inst.opcode;
    let dt = decl_f32(c, "Dest")?;
    let data = c.ty("Data")?;
    let ElemKind::Fused(f) = data.elem else {
        return Err(c.unsupported(&data));
    };
    if f.fp16 {
        return Err(c.unsupported(&data));
    }
    c.decl("Data", "uint8_t")?;
    let weighted = op != Opcode::FusedRowwiseQuantizedSparseLengthsSum;
    if weighted {
        decl_f32(c, "Weights")?;
    }
    let it = decl_index(c, "Indices")?;
    let (r, width) = (data.dims[0], data.dims[1]);
    let line = dt.size() / dt.dims[0];
    let n = it.size();
    zero_f32(c, "Dest", dt.size());
    // One row into one segment: `j` the index position, `s` the segment.
    let row_body = |c: &mut KCtx| {
        c.w.line("const int64_t i = (int64_t)Indices[j];");
        c.w.line(&format!("if (i < 0 || i >= {r}ll) continue;"));
        if weighted {
            c.w.line("const float w = Weights[j];");
        }
        c.w.line(&format!(
            "const uint8_t *row = Data + (size_t)i * {width}u;"
        ));
        c.w.line("float scale, offset;");
        c.w.line(&format!("memcpy(&scale, row + {}u, 4);", width - 8));
        c.w.line(&format!("memcpy(&offset, row + {}u, 4);", width - 4));
        c.w.open(&format!("for (size_t k = 0; k < {line}u; k++)"));
        if f.nibbles {
            c.w.line("const uint8_t q = (uint8_t)((row[k / 2] >> (4 * (k % 2))) & 0x0f);");
        } else {
            c.w.line("const uint8_t q = row[k];");
        }
        c.w.line("const float d = (float)q * scale + offset;");
        let term = if weighted { "d * w" } else { "d" };
        c.w.line(&format!("Dest[s * {line}u + k] += {term};"));
        c.w.close();
    };
    if op == Opcode::EmbeddingBagByteRowwiseOffsets {
        let ot = decl_index(c, "Offsets")?;
        let has_end = c.member(m::HAS_END_OFFSET)?;
        let bags = dt.dims[0];
        debug_assert_eq!(bags, if has_end { ot.size() - 1 } else { ot.size() });
        open_bags(c, "s", bags, has_end, n);
        c.w.line("const int64_t from = start < 0 ? 0 : start;");
        c.w.line(&format!("const int64_t to = end > {n}ll ? {n}ll : end;"));
        c.w.open("for (int64_t j = from; j < to; j++)");
        row_body(c);
        c.w.close();
        c.w.close();
    } else {
        let lt = decl_index(c, "Lengths")?;
        c.w.line("size_t j = 0;");
        c.w.for_loop("s", lt.size());
        c.w.line("const int64_t len = (int64_t)Lengths[s];");
        c.w.open(&format!(
            "for (int64_t l = 0; l < len && j < {n}u; l++, j++)"
        ));
        row_body(c);
        c.w.close();
        c.w.close();
    }
    Ok(())
}
