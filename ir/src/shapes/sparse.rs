//! Shape rules of the recommendation instructions (`sparselengthssum`,
//! `embeddingbag`, `gatherranges`, ...). Index operands (indices, lengths,
//! offsets, ranges) are `index32` or `index64`; the rules fix every shape,
//! so that the kernels never address outside a buffer whatever the index
//! values are (an index out of range, or lengths summing past the indices,
//! are defined at run time: docs/gir.md, "Recommendation").

use super::*;
use crate::member as m;

/// Operand `k` is 1-D and of an index kind.
fn index_vector(ctx: &ShapeCtx, k: usize, errs: &mut Vec<ShapeError>) -> Option<u64> {
    let kind_ok = check_kind(ctx, k, Kinds::Index, errs);
    let rank_ok = check_rank(ctx, k, 1, errs);
    (kind_ok && rank_ok).then(|| ctx.ty(k).dims[0])
}

/// `dest` has exactly `src`'s element type (the kernel moves or sums them).
fn same_elem(ctx: &ShapeCtx, dest: usize, src: usize, errs: &mut Vec<ShapeError>) {
    check_same_elem(ctx, dest, src, Same::Exact, errs);
}

/// `Dest` is `rows` followed by `Data`'s dims after the first.
fn rows_of_data(ctx: &ShapeCtx, dest: usize, data: usize, rows: u64, errs: &mut Vec<ShapeError>) {
    let mut want = vec![rows];
    want.extend_from_slice(&ctx.ty(data).dims[1..]);
    check_dims(ctx, dest, &want, "produces", errs);
}

/// `lengthssum @out Dest, @in Data, @in Lengths`: float `Data` `[N, ...]`,
/// `Lengths` `[S]`, `Dest` `[S, ...]`.
pub fn lengths_sum(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, lengths) = (0, 1, 2);
    let mut errs = Vec::new();
    check_kind(ctx, data, Kinds::Float, &mut errs);
    same_elem(ctx, dest, data, &mut errs);
    if let Some(s) = index_vector(ctx, lengths, &mut errs) {
        rows_of_data(ctx, dest, data, s, &mut errs);
    }
    errs
}

/// `sparselengthssum @out Dest, @in Data, @in Indices, @in Lengths` and
/// `sparselengthsweightedsum` (with `@in Weights` after `Data`, one float
/// per index): float `Data` `[R, ...]`, `Indices` `[N]`, `Lengths` `[S]`,
/// `Dest` `[S, ...]`.
pub fn sparse_lengths_sum(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let weighted = ctx.types.len() == 5;
    let (dest, data) = (0, 1);
    let (idx, lengths) = if weighted { (3, 4) } else { (2, 3) };
    let mut errs = Vec::new();
    check_kind(ctx, data, Kinds::Float, &mut errs);
    same_elem(ctx, dest, data, &mut errs);
    let n = index_vector(ctx, idx, &mut errs);
    if weighted {
        same_elem(ctx, 2, data, &mut errs);
        if let Some(n) = n {
            check_dims(ctx, 2, &[n], "expects", &mut errs);
        }
    }
    if let Some(s) = index_vector(ctx, lengths, &mut errs) {
        rows_of_data(ctx, dest, data, s, &mut errs);
    }
    errs
}

/// `embedding @out Dest, @in Weights, @in Indices { PadIdx, Scale, Sparse }`:
/// `Weights` `[R, D]`, `Indices` of any dims, `Dest` = `Indices`' dims then
/// `D`. `Scale` and `Sparse` must be false (as Glow's interpreter demands).
pub fn embedding(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, weights, idx) = (0, 1, 2);
    let mut errs = Vec::new();
    same_elem(ctx, dest, weights, &mut errs);
    check_kind(ctx, idx, Kinds::Index, &mut errs);
    for key in [m::SCALE, m::SPARSE] {
        if ctx.get(key) == Some(true) {
            errs.push(ShapeError::at_member(
                key.name(),
                format!(
                    "`embedding` supports only `{}: false` (Glow's interpreter asserts it)",
                    key.name()
                ),
            ));
        }
    }
    if check_rank(ctx, weights, 2, &mut errs) {
        let mut want = ctx.ty(idx).dims.clone();
        want.push(ctx.ty(weights).dims[1]);
        if want.len() <= crate::types::MAX_DIMS {
            check_dims(ctx, dest, &want, "produces", &mut errs);
        } else {
            errs.push(ShapeError::at_operand(
                idx,
                format!(
                    "`Indices` has type {} but `embedding` adds a dimension and types have at most {} dimensions",
                    ctx.ty(idx),
                    crate::types::MAX_DIMS
                ),
            ));
        }
    }
    errs
}

/// The bags of index vector `offsets`: one per element, or one fewer with
/// `HasEndOffset` (which needs two elements at least).
fn bag_count(ctx: &ShapeCtx, offsets: usize, errs: &mut Vec<ShapeError>) -> Option<u64> {
    let o = index_vector(ctx, offsets, errs)?;
    if !ctx.get(m::HAS_END_OFFSET).unwrap_or(false) {
        return Some(o);
    }
    if o < 2 {
        errs.push(ShapeError::at_operand(
            offsets,
            "`Offsets` has one element but `HasEndOffset: true` needs at least two (one bag and its end)",
        ));
        return None;
    }
    Some(o - 1)
}

/// `embeddingbag @out Dest, @in Data, @in Weights, @in Indices, @in Offsets
/// { HasEndOffset }`: float `Data` `[R, ...]`, `Weights` and `Indices`
/// `[N]`, `Offsets` `[B]` (`[B + 1]` with `HasEndOffset`), `Dest` `[B, ...]`.
pub fn embedding_bag(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, weights, idx, offsets) = (0, 1, 2, 3, 4);
    let mut errs = Vec::new();
    check_kind(ctx, data, Kinds::Float, &mut errs);
    same_elem(ctx, dest, data, &mut errs);
    same_elem(ctx, weights, data, &mut errs);
    if let Some(n) = index_vector(ctx, idx, &mut errs) {
        check_dims(ctx, weights, &[n], "expects", &mut errs);
    }
    if let Some(bags) = bag_count(ctx, offsets, &mut errs) {
        rows_of_data(ctx, dest, data, bags, &mut errs);
    }
    errs
}

/// `lengthstoranges @out Dest, @in Lengths`: `Lengths` `[S]`, `Dest` `[S, 2]`
/// (offset, length), both of index kinds.
pub fn lengths_to_ranges(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    check_kind(ctx, 0, Kinds::Index, &mut errs);
    if let Some(s) = index_vector(ctx, 1, &mut errs) {
        check_dims(ctx, 0, &[s, 2], "produces", &mut errs);
    }
    errs
}

/// `lengthsrangefill @out Dest, @in Lengths`: 1-D index operands; `Dest`
/// holds the concatenated ranges `0..Lengths[i]` (as many as fit).
pub fn lengths_range_fill(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    index_vector(ctx, 0, &mut errs);
    index_vector(ctx, 1, &mut errs);
    errs
}

/// `gatherranges @out Output, @out Lengths, @in Data, @in Ranges`: 1-D
/// `Data` and `Output` of one element type, `Ranges` `[E, R, 2]` (start,
/// length), `Lengths` `[E]` of `Ranges`' kind.
pub fn gather_ranges(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (output, lengths, data, ranges) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    same_elem(ctx, output, data, &mut errs);
    check_rank(ctx, output, 1, &mut errs);
    check_rank(ctx, data, 1, &mut errs);
    let kind_ok = check_kind(ctx, ranges, Kinds::Index, &mut errs);
    if kind_ok {
        same_elem(ctx, lengths, ranges, &mut errs);
    }
    if check_rank(ctx, ranges, 3, &mut errs) {
        let r = &ctx.ty(ranges).dims;
        if r[2] != 2 {
            errs.push(ShapeError::at_operand(
                ranges,
                format!(
                    "`Ranges` has type {} but its last dimension must be 2 (start, length)",
                    ctx.ty(ranges)
                ),
            ));
        }
        check_dims(ctx, lengths, &[r[0]], "produces", &mut errs);
    }
    errs
}

/// `sparsetodensemask @out Dest, @in Indices, @in Values, @in DefaultValue,
/// @in Lengths { Mask }`: `Indices` `[N]`, `Values` `[N, ...]`,
/// `DefaultValue` `Values`' dims after the first (`<1>` for 1-D `Values`),
/// `Lengths` `[B]`, `Dest` `[B, len(Mask), ...]`; `Mask` ids distinct.
pub fn sparse_to_dense_mask(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, idx, values, default, lengths) = (0, 1, 2, 3, 4);
    let mut errs = Vec::new();
    same_elem(ctx, dest, values, &mut errs);
    same_elem(ctx, default, values, &mut errs);
    let n = index_vector(ctx, idx, &mut errs);
    let inner: Vec<u64> = ctx.ty(values).dims[1..].to_vec();
    if let Some(n) = n {
        if ctx.ty(values).dims[0] != n {
            errs.push(ShapeError::at_operand(
                values,
                format!(
                    "`Values` has type {} but `Indices` has {n} elements: one value slice per index",
                    ctx.ty(values)
                ),
            ));
        }
    }
    let want_default = if inner.is_empty() {
        vec![1]
    } else {
        inner.clone()
    };
    check_dims(ctx, default, &want_default, "expects", &mut errs);
    let mask = ctx.get(m::MASK).unwrap_or(&[]);
    let mut seen = mask.to_vec();
    seen.sort_unstable();
    seen.dedup();
    if mask.is_empty() || seen.len() != mask.len() {
        errs.push(ShapeError::at_member(
            "Mask",
            "`Mask` must list at least one id, each once",
        ));
        return errs;
    }
    if let Some(b) = index_vector(ctx, lengths, &mut errs) {
        let mut want = vec![b, mask.len() as u64];
        want.extend(inner);
        if want.len() <= crate::types::MAX_DIMS {
            check_dims(ctx, dest, &want, "produces", &mut errs);
        }
    }
    errs
}

/// `batchsparsetodense @out Dest, @in Lengths, @in Indices, @in Values
/// { DefaultValue, DenseLastDim }`: `Lengths` `[B]`, `Indices` and `Values`
/// `[N]`, `Dest` `[B, DenseLastDim]` of `Values`' float or integer kind.
pub fn batch_sparse_to_dense(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, lengths, idx, values) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    check_kind(ctx, values, Kinds::Plain, &mut errs);
    same_elem(ctx, dest, values, &mut errs);
    if let Some(n) = index_vector(ctx, idx, &mut errs) {
        check_dims(ctx, values, &[n], "expects", &mut errs);
    }
    let d = ctx.get(m::DENSE_LAST_DIM).unwrap_or(0);
    if let (Some(b), true) = (index_vector(ctx, lengths, &mut errs), d > 0) {
        check_dims(ctx, dest, &[b, d as u64], "produces", &mut errs);
    }
    errs
}

/// `fillexampleswithindicator @out Dest, @in Data, @in Indicator`:
/// `Indicator` `[B]` (index or bool), `Data` `[K, ...]`, `Dest` `[B, ...]`
/// of `Data`'s element type.
pub fn fill_examples_with_indicator(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, ind) = (0, 1, 2);
    let mut errs = Vec::new();
    same_elem(ctx, dest, data, &mut errs);
    let e = ctx.ty(ind).elem;
    if !(Kinds::Index.accepts(e) || e == ElemKind::Bool) {
        errs.push(ShapeError::at_operand(
            ind,
            format!(
                "`Indicator` has element type {e} but `fillexampleswithindicator` accepts `index32`, `index64` or `bool` here"
            ),
        ));
    }
    if check_rank(ctx, ind, 1, &mut errs) {
        rows_of_data(ctx, dest, data, ctx.ty(ind).dims[0], &mut errs);
    }
    errs
}

/// `sparselabelsplit @out LabelValues, @out ExampleIds, @out
/// GradientOffsetMap, @in Lengths, @in Indices, @in Values { NumLabels }`:
/// `Indices` and `Values` `[N]`, `N` a multiple of `NumLabels`; `LabelValues`
/// (`Values`' kind) and `ExampleIds` `[NumLabels, N / NumLabels]`,
/// `GradientOffsetMap` `[N]`.
pub fn sparse_label_split(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (lv, ei, gom, lengths, idx, values) = (0, 1, 2, 3, 4, 5);
    let mut errs = Vec::new();
    index_vector(ctx, lengths, &mut errs);
    check_kind(ctx, ei, Kinds::Index, &mut errs);
    same_elem(ctx, lv, values, &mut errs);
    let Some(n) = index_vector(ctx, idx, &mut errs) else {
        return errs;
    };
    if index_vector(ctx, gom, &mut errs).is_some() {
        check_dims(ctx, gom, &[n], "produces", &mut errs);
    }
    check_dims(ctx, values, &[n], "expects", &mut errs);
    let labels = ctx.get(m::NUM_LABELS).unwrap_or(0);
    if labels <= 0 {
        return errs;
    }
    let labels = labels as u64;
    if n % labels != 0 {
        errs.push(ShapeError::at_member(
            "NumLabels",
            format!("`Indices` has {n} elements, not a multiple of `NumLabels: {labels}`"),
        ));
        return errs;
    }
    check_dims(ctx, lv, &[labels, n / labels], "produces", &mut errs);
    check_dims(ctx, ei, &[labels, n / labels], "produces", &mut errs);
    errs
}

/// A table operand `k` of the wrong element kind.
fn table_kind(ctx: &ShapeCtx, k: usize, wants: &str) -> ShapeError {
    ShapeError::at_operand(
        k,
        format!(
            "`{}` has element type {} but `{}` takes {wants}",
            ctx.name(k),
            ctx.ty(k).elem,
            ctx.opcode()
        ),
    )
}

/// `UseFP16Accumulation` needs a `float16` `Dest` (Glow's rule), which no
/// engine here computes.
fn no_fp16_accumulation(ctx: &ShapeCtx, errs: &mut Vec<ShapeError>) {
    if ctx.get(m::USE_FP16_ACCUMULATION) == Some(true) {
        errs.push(ShapeError::at_member(
            "UseFP16Accumulation",
            "`UseFP16Accumulation: true` needs a `float16` `Dest`, which this backend does not compute",
        ));
    }
}

/// `rowwisequantizedsparselengthsweightedsum @out Dest, @in Data, @in
/// Scales, @in Offsets, @in Weights, @in Indices, @in Lengths`: `ui8` `Data`
/// `[R, ...]` (its type's own scale and offset unused) with one float scale
/// and offset per row, float `Weights` and index `Indices` `[N]`, `Lengths`
/// `[S]`, float `Dest` `[S, ...]`. `UseFP16Accumulation` needs a `float16`
/// `Dest` (Glow's rule), so it must be false here.
pub fn rowwise_quantized_sls(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, data, scales, offsets, weights, idx, lengths) = (0, 1, 2, 3, 4, 5, 6);
    let mut errs = Vec::new();
    if !matches!(ctx.ty(data).elem, ElemKind::UInt8Q { .. }) {
        errs.push(table_kind(ctx, data, "`ui8` rows"));
    }
    check_kind(ctx, dest, Kinds::Float, &mut errs);
    for k in [scales, offsets, weights] {
        same_elem(ctx, k, dest, &mut errs);
    }
    let r = ctx.ty(data).dims[0];
    check_dims(ctx, scales, &[r], "expects", &mut errs);
    check_dims(ctx, offsets, &[r], "expects", &mut errs);
    if let Some(n) = index_vector(ctx, idx, &mut errs) {
        check_dims(ctx, weights, &[n], "expects", &mut errs);
    }
    if let Some(s) = index_vector(ctx, lengths, &mut errs) {
        rows_of_data(ctx, dest, data, s, &mut errs);
    }
    no_fp16_accumulation(ctx, &mut errs);
    errs
}

/// `batchedunaryembeddingsbags @out Dest, @in Weights, @in TableOffsets,
/// @in Offsets, @in Indices`: float `Weights` `[tasks, ...]`, `TableOffsets`
/// `[T + 1]`, `Offsets` `[T * B + 1]`, `Indices` `[N]` (one index kind),
/// `Dest` `[tasks, B, T]`.
pub fn batched_unary_embeddings_bags(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, weights, table_offsets, offsets, idx) = (0, 1, 2, 3, 4);
    let mut errs = Vec::new();
    check_kind(ctx, weights, Kinds::Float, &mut errs);
    same_elem(ctx, dest, weights, &mut errs);
    let t = index_vector(ctx, table_offsets, &mut errs);
    let o = index_vector(ctx, offsets, &mut errs);
    if index_vector(ctx, idx, &mut errs).is_some() {
        same_elem(ctx, offsets, idx, &mut errs);
        same_elem(ctx, table_offsets, idx, &mut errs);
    }
    let (Some(t), Some(o)) = (t, o) else {
        return errs;
    };
    let tables = t - 1;
    if tables == 0 || (o - 1) % tables != 0 || o == 1 {
        errs.push(ShapeError::at_operand(
            offsets,
            format!(
                "`Offsets` has {o} elements but `{}` needs `T * B + 1` of them with {tables} tables (`TableOffsets` has T + 1) and B at least 1",
                ctx.opcode()
            ),
        ));
        return errs;
    }
    let batches = (o - 1) / tables;
    let tasks = ctx.ty(weights).dims[0];
    check_dims(ctx, dest, &[tasks, batches, tables], "produces", &mut errs);
    errs
}

/// `permutepooledembeddings @out Dest, @in PooledEmbeddings, @in
/// OffsetDimList, @in PermuteList, @in InvOffsetDimList, @in InvPermuteList`:
/// `PooledEmbeddings` `[B, D]` and `Dest` of its type; `index64` lists,
/// `OffsetDimList` one longer than `PermuteList` (the inverse lists are
/// read by a gradient, not here).
pub fn permute_pooled_embeddings(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, pooled, offs, perm, inv_offs, inv_perm) = (0, 1, 2, 3, 4, 5);
    let mut errs = Vec::new();
    if ctx.ty(dest) != ctx.ty(pooled) {
        errs.push(ShapeError::at_operand(
            dest,
            format!(
                "`Dest` has type {} but `PooledEmbeddings` has {}: `{}` needs identical types",
                ctx.ty(dest),
                ctx.ty(pooled),
                ctx.opcode()
            ),
        ));
    }
    check_rank(ctx, pooled, 2, &mut errs);
    let mut lens = Vec::new();
    for k in [offs, perm, inv_offs, inv_perm] {
        if ctx.ty(k).elem != ElemKind::Index64 {
            errs.push(ShapeError::at_operand(
                k,
                format!(
                    "`{}` has element type {} but `{}` takes `index64` lists",
                    ctx.name(k),
                    ctx.ty(k).elem,
                    ctx.opcode()
                ),
            ));
        }
        lens.push(check_rank(ctx, k, 1, &mut errs).then(|| ctx.ty(k).dims[0]));
    }
    if let (Some(o), Some(p)) = (lens[0], lens[1]) {
        if o != p + 1 {
            errs.push(ShapeError::at_operand(
                offs,
                format!(
                    "`OffsetDimList` has {o} elements but `PermuteList` has {p}: it needs one more"
                ),
            ));
        }
    }
    errs
}

/// The fused row-wise forms: `fusedrowwisequantizedsparselengthsweightedsum
/// @out Dest, @in Data, @in Weights, @in Indices, @in Lengths`, the same
/// without `Weights` (`...sparselengthssum`), and
/// `embeddingbagbyterowwiseoffsets @out Dest, @in Data, @in Weights, @in
/// Indices, @in Offsets { HasEndOffset }`. `Data` is a fused kind `[R, W]`,
/// `Dest` float `[S, (W - extra) * per_byte]` (`S` segments, or bags as
/// `embeddingbag` counts them), `Weights` float like `Indices` `[N]`.
pub fn fused_sls(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let op = ctx.inst.opcode;
    let bag = op == crate::opcode::Opcode::EmbeddingBagByteRowwiseOffsets;
    let weighted = ctx.types.len() == 5;
    let (dest, data) = (0, 1);
    let (idx, lengths) = if weighted { (3, 4) } else { (2, 3) };
    let mut errs = Vec::new();
    check_kind(ctx, dest, Kinds::F32, &mut errs);
    if weighted {
        same_elem(ctx, 2, dest, &mut errs);
    }
    let ElemKind::Fused(fused) = ctx.ty(data).elem else {
        let what = "fused rows (`ui8fused`, `ui8fusedfp16`, `ui4fused`, `ui4fusedfp16`)";
        errs.push(table_kind(ctx, data, what));
        return errs;
    };
    no_fp16_accumulation(ctx, &mut errs);
    let n = index_vector(ctx, idx, &mut errs);
    if let (true, Some(n)) = (weighted, n) {
        check_dims(ctx, 2, &[n], "expects", &mut errs);
    }
    let segments = if bag {
        bag_count(ctx, lengths, &mut errs)
    } else {
        index_vector(ctx, lengths, &mut errs)
    };
    let Some(segments) = segments else {
        return errs;
    };
    if !check_rank(ctx, data, 2, &mut errs) {
        return errs;
    }
    let width = ctx.ty(data).dims[1];
    if width <= fused.extra_bytes() {
        errs.push(ShapeError::at_operand(
            data,
            format!(
                "`Data` has type {} but its rows need more than {} bytes (the values, then the scale and offset)",
                ctx.ty(data),
                fused.extra_bytes()
            ),
        ));
        return errs;
    }
    let line = (width - fused.extra_bytes()) * fused.per_byte();
    check_dims(ctx, dest, &[segments, line], "produces", &mut errs);
    errs
}

/// `prunedarraylookup @out Dest, @in Indices, @in Offsets, @in IndexRemapping,
/// @in IndexRemappingOffsets` (no kernel): Glow's element types, `index32`
/// but `IndexRemappingOffsets` `index64`; Glow has no shape rule.
pub fn pruned_array_lookup(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    for (k, want) in [
        (1, ElemKind::Index32),
        (2, ElemKind::Index32),
        (3, ElemKind::Index32),
        (4, ElemKind::Index64),
    ] {
        let e = ctx.ty(k).elem;
        if e != want {
            errs.push(ShapeError::at_operand(
                k,
                format!(
                    "`{}` has element type {e} but `{}` reads {want}",
                    ctx.name(k),
                    ctx.opcode()
                ),
            ));
        }
    }
    errs
}
