//! ReverseSequence with lengths known at run time: each element's source
//! along the time axis, `t < len[b] ? len[b] - 1 - t : t`, is computed in
//! int64 and read with `gatherelements`, so the result's shape stays the
//! input's whatever the lengths.

use super::compose::{attr_int, base_of, with};
use super::{dims_of, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;

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
        let full: Vec<i64> = d.iter().map(|&v| v as i64).collect();
        let full = c.ints(&full);
        let idx = c.op("Expand", &[&src, &full], vec![])?;
        c.op(
            "GatherElements",
            &[x, &idx],
            vec![attr_int("axis", ta as i64)],
        )
    })?;
    Ok(vec![l.vals[&y].clone()])
}
