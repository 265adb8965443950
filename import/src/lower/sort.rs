//! TopK: one `topk` over the last dimension of the ONNX-order buffer, the
//! axis moved last (and back) by transposes when it is not; `K` is an
//! import-time constant (input 1, or the `k` attribute before opset 10).

use super::{dims_of, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode};

pub(super) fn topk(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let out = node.output.first().cloned().unwrap_or_default();
    let idx_out = node
        .output
        .get(1)
        .cloned()
        .unwrap_or_else(|| format!("{out}.indices"));
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let x = l.input(node, 0)?;
    let d = dims_of(&x);
    let r = d.len();
    let axis = norm_axis(l, attrs.int("axis", -1), r)?;
    let k = if l.opt_input(node, 1)?.is_some() {
        let t = l.const_input(node, 1)?.to_i64();
        *t.first().ok_or_else(|| l.err("an empty K"))?
    } else {
        attrs.int("k", 0)
    };
    if k < 1 || k as u64 > d[axis] {
        return Err(l.unsupported(format!(
            "TopK with K = {k} on an axis of {} (1 to the axis' size)",
            d[axis]
        )));
    }
    let largest = attrs.int("largest", 1) != 0;
    let a = l.act(&x);
    let a = l.to_plain(&a, &out);
    // The axis last.
    let mut perm: Vec<usize> = (0..r).filter(|&i| i != axis).collect();
    perm.push(axis);
    let moved = axis != r - 1;
    let src = if moved {
        let td: Vec<u64> = perm.iter().map(|&p| d[p]).collect();
        let t = l.alloc(&format!("{out}.last"), &td);
        l.transpose(&base, t, a.v, perm.iter().map(|&p| p as i64).collect());
        t
    } else {
        a.v
    };
    let mut kd: Vec<u64> = perm.iter().map(|&p| d[p]).collect();
    *kd.last_mut().expect("rank >= 1") = k as u64;
    let vals = l.alloc(&format!("{out}.k"), &kd);
    let inds = l.alloc_kind(&format!("{idx_out}.k"), &kd, ElemKind::Index64);
    let mut members = vec![m::K.to(k as f64)];
    if !largest {
        members.push(m::LARGEST.to(false));
    }
    l.inst(&base, Opcode::TopK, &[vals, inds, src], &members);
    let mut od = d.clone();
    od[axis] = k as u64;
    let (vals, inds) = if moved {
        // The inverse permutation brings the axis back.
        let mut inv = vec![0i64; r];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i as i64;
        }
        let v2 = l.alloc(&out, &od);
        l.transpose(&base, v2, vals, inv.clone());
        let i2 = l.alloc_kind(&idx_out, &od, ElemKind::Index64);
        l.transpose(&base, i2, inds, inv);
        (v2, i2)
    } else {
        (vals, inds)
    };
    Ok(vec![
        Val::Act(Act {
            v: vals,
            dims: od.clone(),
            cl: false,
        }),
        Val::Act(Act {
            v: inds,
            dims: od,
            cl: false,
        }),
    ])
}
