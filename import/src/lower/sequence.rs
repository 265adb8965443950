//! Ops that move elements along a sequence axis by positions known at run
//! time, whose results keep a static shape: ReverseSequence (each element's
//! source along the time axis, `t < len[b] ? len[b] - 1 - t : t`) and
//! TensorScatter (a cache with each batch's update written from its write
//! index on). The source positions are computed in int64 and read with
//! `gatherelements`.

use super::compose::{attr_int, base_of, with, Composer};
use super::{dims_of, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;

/// `data`'s elements at the positions `src` (broadcast to `dims`) along `axis`.
fn gather_along(
    c: &mut Composer,
    data: &str,
    src: &str,
    dims: &[u64],
    axis: usize,
) -> Result<String> {
    let full: Vec<i64> = dims.iter().map(|&v| v as i64).collect();
    let full = c.ints(&full);
    let idx = c.op("Expand", &[src, &full], vec![])?;
    c.op(
        "GatherElements",
        &[data, &idx],
        vec![attr_int("axis", axis as i64)],
    )
}

pub(super) fn reverse_sequence(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let (batch, time) = (attrs.int("batch_axis", 1), attrs.int("time_axis", 0));
    let d = dims_of(&l.input(node, 0)?);
    let ld = dims_of(&l.input(node, 1)?);
    let (ba, ta) = match (batch, time) {
        (0, 1) => (0, 1),
        (1, 0) => (1, 0),
        _ => {
            return Err(l.err(format!(
                "batch_axis {batch} and time_axis {time} are not 0 and 1 in some order"
            )))
        }
    };
    if d.len() < 2 || ld != [d[ba]] {
        return Err(l.err(format!(
            "input {d:?} and sequence_lens {ld:?} are not [.., .., ...] and [batch]"
        )));
    }
    let (x, lens) = (node.input[0].as_str(), node.input[1].as_str());
    let base = base_of(node);
    let y = with(l, &base, |c| {
        // Lengths along the batch axis and positions along the time axis,
        // broadcast over the other.
        let mut bd = vec![1u64; d.len()];
        bd[ba] = d[ba];
        let shape: Vec<i64> = bd.iter().map(|&v| v as i64).collect();
        let shape = c.ints(&shape);
        let lens = c.op("Cast", &[lens], vec![attr_int("to", 7)])?;
        let lb = c.op("Reshape", &[&lens, &shape], vec![])?;
        let mut td = vec![1u64; d.len()];
        td[ta] = d[ta];
        let t = c.konst("i", Tensor::i64(td, (0..d[ta] as i64).collect()));
        let inside = c.op("Less", &[&t, &lb], vec![])?;
        let one = c.konst("i", Tensor::i64(vec![], vec![1]));
        let last = c.op("Sub", &[&lb, &one], vec![])?;
        let back = c.op("Sub", &[&last, &t], vec![])?;
        let src = c.op("Where", &[&inside, &back, &t], vec![])?;
        gather_along(c, x, &src, &d, ta)
    })?;
    Ok(vec![l.vals[&y].clone()])
}

pub(super) fn tensor_scatter(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let circular = match attrs.string("mode").as_deref() {
        None | Some("linear") => false,
        Some("circular") => true,
        Some(other) => return Err(l.unsupported(format!("TensorScatter mode `{other}`"))),
    };
    let (pd, ud) = (dims_of(&l.input(node, 0)?), dims_of(&l.input(node, 1)?));
    let r = pd.len();
    let axis = super::norm_axis(l, attrs.int("axis", -2), r)?;
    let fits = ud.len() == r
        && (0..r).all(|i| {
            if i == axis {
                ud[i] <= pd[i]
            } else {
                ud[i] == pd[i]
            }
        });
    if axis == 0 || !fits {
        return Err(l.err(format!(
            "update {ud:?} does not fit cache {pd:?} along axis {axis} (not the batch axis)"
        )));
    }
    let indices = l.opt_input(node, 2)?.is_some();
    if indices && dims_of(&l.input(node, 2)?) != [pd[0]] {
        return Err(l.err(format!("write_indices are not [{}]", pd[0])));
    }
    let names: Vec<&str> = node.input.iter().map(String::as_str).collect();
    let base = base_of(node);
    let y = with(l, &base, |c| {
        let (len, upd) = (pd[axis] as i64, ud[axis] as i64);
        let mut at = vec![1u64; r];
        at[axis] = pd[axis];
        let p = c.konst("i", Tensor::i64(at, (0..len).collect()));
        // Each cache position's index into the update: p - w, modulo the
        // length when circular; positions outside the update keep the cache.
        let rel = if indices {
            let mut wd = vec![1i64; r];
            wd[0] = pd[0] as i64;
            let shape = c.ints(&wd);
            let w = c.op("Cast", &[names[2]], vec![attr_int("to", 7)])?;
            let w = c.op("Reshape", &[&w, &shape], vec![])?;
            c.op("Sub", &[&p, &w], vec![])?
        } else {
            p
        };
        let rel = if circular {
            let m = c.konst("i", Tensor::i64(vec![], vec![len]));
            c.op("Mod", &[&rel, &m], vec![])?
        } else {
            rel
        };
        let (zero, top) = (
            c.konst("i", Tensor::i64(vec![], vec![0])),
            c.konst("i", Tensor::i64(vec![], vec![upd])),
        );
        let low = c.op("GreaterOrEqual", &[&rel, &zero], vec![])?;
        let high = c.op("Less", &[&rel, &top], vec![])?;
        let inside = c.op("And", &[&low, &high], vec![])?;
        let src = c.op("Where", &[&inside, &rel, &zero], vec![])?;
        let got = gather_along(c, names[1], &src, &pd, axis)?;
        c.op("Where", &[&inside, &got, names[0]], vec![])
    })?;
    Ok(vec![l.vals[&y].clone()])
}
