//! CumSum and CumProd along a constant axis: CumSum is one `cumsum`;
//! CumProd, which has no instruction, is the running product of the axis'
//! slices (`extracttensor`, `elementmul`, `inserttensor`; wrapping on
//! integers). A run-time axis (a graph input, as in ONNX's own tests) is
//! any of the input's dimensions: the scans along each are written side by
//! side into one `[rank, ...]` buffer and `gather` picks the one the axis
//! names (its negative indices count from the end, as ONNX's axes do).

use super::{dims_of, norm_axis, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type, Value};

/// The longest axis CumProd unrolls (one product per element of it).
const MAX_PRODUCT_STEPS: u64 = 4096;

/// One scan of the input along an axis.
struct Scan<'a> {
    prod: bool,
    exclusive: bool,
    reverse: bool,
    base: &'a str,
    out: &'a str,
    dims: &'a [u64],
    kind: ElemKind,
}

impl Scan<'_> {
    /// Writes the scan of `src` along `axis` into `dest`, a buffer of the
    /// input's dims (for CumProd one that holds values already, as its
    /// slices are inserted).
    fn along(&self, l: &mut Lowerer, src: Value, axis: usize, dest: Value) {
        if !self.prod {
            let members = [
                m::DIM.to(axis as i64),
                m::EXCLUSIVE.to(self.exclusive),
                m::REVERSE.to(self.reverse),
            ];
            l.inst(self.base, Opcode::CumSum, &[dest, src], &members);
            return;
        }
        let d = self.dims;
        let (outer, n, inner) = (
            d[..axis].iter().product::<u64>(),
            d[axis],
            d[axis + 1..].iter().product::<u64>(),
        );
        let src3 = l.view(&format!("{}.src", self.out), src, &[outer, n, inner]);
        let dest3 = l.view(&format!("{}.rows", self.out), dest, &[outer, n, inner]);
        let piece = [outer, 1, inner];
        let at = |p: u64| [m::OFFSETS.to(vec![0, p as i64, 0])];
        let order: Vec<u64> = if self.reverse {
            (0..n).rev().collect()
        } else {
            (0..n).collect()
        };
        let mut acc: Option<Value> = None;
        for p in order {
            let x = l.alloc_kind(&format!("{}.slice", self.out), &piece, self.kind);
            l.inst(self.base, Opcode::ExtractTensor, &[x, src3], &at(p));
            let next = match acc {
                None => x,
                Some(a) => {
                    let t = l.alloc_kind(&format!("{}.prod", self.out), &piece, self.kind);
                    l.inst(self.base, Opcode::ElementMul, &[t, a, x], &[]);
                    t
                }
            };
            // Exclusive: the product before this slice (1 for the first).
            let written = match (self.exclusive, acc) {
                (false, _) => next,
                (true, Some(a)) => a,
                (true, None) => {
                    l.splat_buffer_kind(&format!("{}.one", self.out), &piece, 1.0, self.kind)
                }
            };
            l.inst(self.base, Opcode::InsertTensor, &[dest3, written], &at(p));
            acc = Some(next);
        }
    }

    /// A buffer of the input's dims for one scan.
    fn dest(&self, l: &mut Lowerer) -> Value {
        if self.prod {
            l.splat_buffer_kind(self.out, self.dims, 0.0, self.kind)
        } else {
            l.alloc_kind(self.out, self.dims, self.kind)
        }
    }
}

pub(super) fn cumsum(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let op = node.op_type.as_str();
    let prod = op == "CumProd";
    let out = node.output.first().cloned().unwrap_or_default();
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    let x = l.input(node, 0)?;
    let Val::Act(a) = &x else {
        return Err(l.unsupported(format!("{op} of a constant input")));
    };
    let a = l.to_plain(a, &out);
    let kind = l.kind(&a);
    if !(kind == ElemKind::Float || kind.is_plain_int()) {
        return Err(l.unsupported(format!("{op} of a {kind} tensor")));
    }
    let d = dims_of(&x);
    let r = d.len();
    if r == 0 {
        return Err(l.unsupported(format!("{op} of a scalar")));
    }
    let scan = Scan {
        prod,
        exclusive: attrs.int("exclusive", 0) != 0,
        reverse: attrs.int("reverse", 0) != 0,
        base: &base,
        out: &out,
        dims: &d,
        kind,
    };
    let axis_val = l.input(node, 1)?;
    let axes: Vec<usize> = match &axis_val {
        Val::Const { t, .. } => {
            let axis = *t.to_i64().first().ok_or_else(|| l.err("an empty axis"))?;
            vec![norm_axis(l, axis, r)?]
        }
        Val::Act(_) => (0..r).collect(),
    };
    if prod {
        if let Some(&big) = axes.iter().find(|&&ax| d[ax] > MAX_PRODUCT_STEPS) {
            return Err(l.unsupported(format!(
                "CumProd along an axis of {} elements (at most {MAX_PRODUCT_STEPS} are unrolled)",
                d[big]
            )));
        }
    }
    let result = match axis_val {
        Val::Const { .. } => {
            let dest = scan.dest(l);
            scan.along(l, a.v, axes[0], dest);
            dest
        }
        Val::Act(ax) => {
            let ak = l.kind(&ax);
            if !matches!(ak, ElemKind::Index32 | ElemKind::Index64) {
                return Err(l.unsupported(format!("a {ak} {op} axis")));
            }
            let mut sd = vec![r as u64];
            sd.extend(&d);
            let name = format!("{out}.each");
            // CumProd's slices are inserted, which reads the buffer first.
            let stacked = if prod {
                l.splat_buffer_kind(&name, &sd, 0.0, kind)
            } else {
                l.alloc_kind(&name, &sd, kind)
            };
            for k in 0..r {
                let mut offs = vec![0i64; sd.len()];
                offs[0] = k as i64;
                let ty = Type::new(kind, &d);
                let slot = l
                    .b()
                    .tensorview(&format!("{out}.dim{k}"), stacked, ty, offs);
                scan.along(l, a.v, k, slot);
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
