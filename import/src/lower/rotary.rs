//! RotaryEmbedding as ONNX's reference computes it, composed of other ops:
//! the input as `[batch, seq, heads, head_size]`, the cos and sin rows of
//! each position (a run-time `gather` by `position_ids`, or the caches as
//! given), the rotated part split in halves or interleaved pairs, `real =
//! cos x1 - sin x2`, `imag = sin x1 + cos x2`, joined back and followed by
//! the part that is not rotated.

use super::compose::{attr_int, attr_ints, base_of, with};
use super::{dims_of, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use glow_ir::ElemKind;

pub(super) fn rotary_embedding(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    for i in 0..3 {
        if let Val::Act(a) = l.input(node, i)? {
            if l.kind(&a) != ElemKind::Float {
                return Err(l.unsupported(format!(
                    "a run-time {} tensor (`{}`) as input {i} of RotaryEmbedding",
                    l.kind(&a),
                    node.input[i]
                )));
            }
        }
    }
    let xd = dims_of(&l.input(node, 0)?);
    let interleaved = attrs.int("interleaved", 0) != 0;
    let heads = attrs.int("num_heads", 0);
    let (b, s, h, d) = match *xd.as_slice() {
        [b, h, s, d] => (b, s, h, d),
        [b, s, hidden] if heads > 0 && hidden % heads as u64 == 0 => {
            (b, s, heads as u64, hidden / heads as u64)
        }
        _ => {
            return Err(l.err(format!(
                "input {xd:?} is not [batch, heads, seq, head_size], or [batch, seq, hidden] \
                 with num_heads ({heads}) dividing hidden"
            )))
        }
    };
    let rd = match attrs.int("rotary_embedding_dim", 0) {
        0 => d,
        r if r > 0 && r as u64 <= d && r % 2 == 0 => r as u64,
        r => {
            return Err(l.err(format!(
                "rotary_embedding_dim {r} is not even and at most the head size {d}"
            )))
        }
    };
    let half = rd / 2;
    let positions = l.opt_input(node, 3)?.is_some();
    let cache_dims = dims_of(&l.input(node, 1)?);
    let want: Vec<u64> = if positions {
        vec![cache_dims.first().copied().unwrap_or(0), half]
    } else {
        vec![b, s, half]
    };
    if cache_dims != want || dims_of(&l.input(node, 2)?) != want {
        return Err(l.err(format!(
            "cos_cache {cache_dims:?} and sin_cache must be {want:?} (the last dimension half \
             the rotary dimension {rd})"
        )));
    }
    let names: Vec<&str> = node.input.iter().map(String::as_str).collect();
    let base = base_of(node);
    let y = with(l, &base, |c| {
        let x = if xd.len() == 4 {
            c.op(
                "Transpose",
                &[names[0]],
                vec![attr_ints("perm", &[0, 2, 1, 3])],
            )?
        } else {
            c.reshape(names[0], &[b, s, h, d])?
        };
        let (mut cos, mut sin) = (names[1].to_string(), names[2].to_string());
        if positions {
            cos = c.op("Gather", &[&cos, names[3]], vec![attr_int("axis", 0)])?;
            sin = c.op("Gather", &[&sin, names[3]], vec![attr_int("axis", 0)])?;
        }
        let at2 = c.ints(&[2]);
        let cos = c.op("Unsqueeze", &[&cos, &at2], vec![])?;
        let sin = c.op("Unsqueeze", &[&sin, &at2], vec![])?;
        let rot = if rd < d {
            c.slice(&x, 3, 0, rd)?
        } else {
            x.clone()
        };
        let (x1, x2) = if interleaved {
            // Even and odd elements: the pairs as a last axis of two.
            let pairs = c.reshape(&rot, &[b, s, h, half, 2])?;
            (c.pick(&pairs, 4, 0)?, c.pick(&pairs, 4, 1)?)
        } else {
            (c.slice(&rot, 3, 0, half)?, c.slice(&rot, 3, half, rd)?)
        };
        let (c1, s2) = (
            c.op("Mul", &[&cos, &x1], vec![])?,
            c.op("Mul", &[&sin, &x2], vec![])?,
        );
        let real = c.op("Sub", &[&c1, &s2], vec![])?;
        let (s1, c2) = (
            c.op("Mul", &[&sin, &x1], vec![])?,
            c.op("Mul", &[&cos, &x2], vec![])?,
        );
        let imag = c.op("Add", &[&s1, &c2], vec![])?;
        let rotated = if interleaved {
            let st = c.stack(&[real, imag], 4)?;
            c.reshape(&st, &[b, s, h, rd])?
        } else {
            c.op("Concat", &[&real, &imag], vec![attr_int("axis", 3)])?
        };
        let all = if rd < d {
            let rest = c.slice(&x, 3, rd, d)?;
            c.op("Concat", &[&rotated, &rest], vec![attr_int("axis", 3)])?
        } else {
            rotated
        };
        if xd.len() == 4 {
            c.op("Transpose", &[&all], vec![attr_ints("perm", &[0, 2, 1, 3])])
        } else {
            c.reshape(&all, &xd)
        }
    })?;
    Ok(vec![l.vals[&y].clone()])
}
