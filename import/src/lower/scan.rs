//! CumSum: one `cumsum` along a constant axis. A run-time axis (a graph
//! input, as in ONNX's own tests) is any of the input's dimensions: the
//! sums along each are written side by side into one `[rank, ...]` buffer
//! and `gather` picks the one the axis names (its negative indices count
//! from the end, as ONNX's axes do).

use super::{dims_of, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type};

pub(super) fn cumsum(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let out = node.output.first().cloned().unwrap_or_default();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let x = l.input(node, 0)?;
    let Val::Act(a) = &x else {
        return Err(l.unsupported("CumSum of a constant input"));
    };
    let a = l.to_plain(a, &out);
    let kind = l.kind(&a);
    if !(kind == ElemKind::Float || kind.is_plain_int()) {
        return Err(l.unsupported(format!("CumSum of a {kind} tensor")));
    }
    let d = dims_of(&x);
    let r = d.len();
    let members = |dim: i64| {
        vec![
            m::DIM.to(dim),
            m::EXCLUSIVE.to(attrs.int("exclusive", 0) != 0),
            m::REVERSE.to(attrs.int("reverse", 0) != 0),
        ]
    };
    if r == 0 {
        return Err(l.unsupported("CumSum of a scalar"));
    }
    let result = match l.input(node, 1)? {
        Val::Const { t, .. } => {
            let axis = *t.to_i64().first().ok_or_else(|| l.err("an empty axis"))?;
            let axis = norm_axis(l, axis, r)?;
            let dest = l.alloc_kind(&out, &d, kind);
            l.inst(&base, Opcode::CumSum, &[dest, a.v], &members(axis as i64));
            dest
        }
        Val::Act(ax) => {
            let ak = l.kind(&ax);
            if !matches!(ak, ElemKind::Index32 | ElemKind::Index64) {
                return Err(l.unsupported(format!("a {ak} CumSum axis")));
            }
            let mut sd = vec![r as u64];
            sd.extend(&d);
            let stacked = l.alloc_kind(&format!("{out}.each"), &sd, kind);
            for k in 0..r {
                let mut offs = vec![0i64; sd.len()];
                offs[0] = k as i64;
                let ty = Type::new(kind, &d);
                let slot = l
                    .b()
                    .tensorview(&format!("{out}.dim{k}"), stacked, ty, offs);
                l.inst(&base, Opcode::CumSum, &[slot, a.v], &members(k as i64));
            }
            let mut gd = vec![1u64];
            gd.extend(&d);
            let picked = l.alloc_kind(&format!("{out}.picked"), &gd, kind);
            let idx = l.view(&format!("{out}.axis"), ax.v, &[1]);
            l.inst(
                &base,
                Opcode::Gather,
                &[picked, stacked, idx],
                &[m::AXIS.to(0)],
            );
            l.view(&out, picked, &d)
        }
    };
    Ok(vec![Val::Act(Act {
        v: result,
        dims: d,
        cl: false,
    })])
}
