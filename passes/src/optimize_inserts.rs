//! `optimize-inserts` (Glow's `optimizeInserts`): an `inserttensor` that
//! copies a contiguous slice makes its source's writer write straight into
//! the destination through a `tensorview`, so a concat costs no copy.
//!
//! `inserttensor @inout D, @in A { Offsets: O, Count: 1 }` is rewritten when
//! - `Count` is 1 and `A`'s shape is a contiguous window of `D`'s at `O`
//!   (leading dimensions of `A` equal to 1, then one free dimension, then
//!   dimensions equal to `D`'s: the window is one range of the row-major
//!   buffer, see [`is_slice_contiguous`]);
//! - `A` is an `allocactivation` whose only users are the insert, one writer
//!   `W` above it that writes `A` whole as its only written operand, and
//!   deallocs (the IRGen pattern of a concat);
//! - nothing between `W` and the insert writes or deallocates a buffer `W`
//!   reads (so `W` may run later).
//!
//! Then a view `V = tensorview D { Ty: type(A), Offsets: O }` and `W`
//! (writing `V` instead of `A`) take the insert's place, and the insert is
//! erased. `A`, now used only by its dealloc, is left for `dead-alloc`.
//! `D`'s contents at every point are unchanged. Never touches inserts with
//! `Count > 1`, strided windows, weights as sources, or sources read by
//! anything else.

use crate::edit::{self, dense, dense_len, Origins};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::builder::Builder;
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, Opcode, Value};

pub static INFO: PassInfo = PassInfo {
    name: "optimize-inserts",
    summary: "Turn contiguous inserttensor into a tensorview its source's writer writes into",
    options: &[],
    stats: &[(
        "inserts-to-views",
        "Number of inserttensor turned into tensorviews",
    )],
    counters: &[("optimize-inserts", "Replacing one inserttensor by a view")],
    create: |_: &PassOptions| Ok(Box::new(OptimizeInserts)),
};

struct OptimizeInserts;

/// Whether a `slice`-shaped window is one contiguous range of a row-major
/// `tensor`: after the leading 1s of the slice, one dimension may be
/// smaller, and all later ones must be whole.
pub fn is_slice_contiguous(slice: &[u64], tensor: &[u64]) -> bool {
    if slice.len() != tensor.len() {
        return false;
    }
    let first = slice.iter().position(|&d| d != 1).unwrap_or(slice.len());
    slice
        .iter()
        .zip(tensor)
        .skip(first + 1)
        .all(|(s, t)| s == t)
}

/// Positions of every write (and dealloc) of each origin, ascending.
pub(crate) fn write_positions(f: &Function, origins: &Origins) -> Vec<Vec<usize>> {
    let mut writes = vec![Vec::new(); dense_len(f)];
    for (p, id) in f.layout.iter().enumerate() {
        for op in f.inst(id).operands.iter().filter(|o| o.kind.writes()) {
            let k = dense(f, origins.origin(op.value));
            if writes[k].last() != Some(&p) {
                writes[k].push(p);
            }
        }
    }
    writes
}

/// Whether a sorted position list has an entry strictly between `a` and `b`.
pub(crate) fn any_between(list: &[usize], a: usize, b: usize) -> bool {
    let i = list.partition_point(|&x| x <= a);
    list.get(i).is_some_and(|&x| x < b)
}

impl Pass for OptimizeInserts {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let origins = Origins::compute(f);
        let writes = write_positions(f, &origins);
        let uses = edit::Uses::compute(f);
        let mut pos = vec![usize::MAX; f.insts.len()];
        for (p, id) in f.layout.iter().enumerate() {
            pos[id.index()] = p;
        }
        let mut skip = vec![false; f.insts.len()];
        let mut done = 0u64;
        let order = f.layout.to_vec();
        for (p, &id) in order.iter().enumerate() {
            let inst = f.inst(id);
            if inst.opcode != Opcode::InsertTensor {
                continue;
            }
            let (Some(d), Some(a)) = (
                inst.operands.first().map(|o| o.value),
                inst.operands.get(1).map(|o| o.value),
            ) else {
                continue;
            };
            let why_not = |msg: &str| format!("keeping %{}: {msg}", inst.name);
            if inst.get(m::COUNT) != Some(1) {
                cx.debug(|| why_not("Count is not 1"));
                continue;
            }
            let (Some(dty), Some(aty)) = (f.value_type(d), f.value_type(a)) else {
                continue;
            };
            if !is_slice_contiguous(&aty.dims, &dty.dims) {
                cx.debug(|| why_not("the window is not contiguous in the destination"));
                continue;
            }
            let Value::Inst(aid) = a else {
                cx.debug(|| why_not("the source is a weight"));
                continue;
            };
            if f.inst(aid).opcode != Opcode::AllocActivation {
                cx.debug(|| why_not("the source is not an allocactivation"));
                continue;
            }
            // Users of A: this insert, one writer, deallocs.
            let mut writer = None;
            let mut ok = true;
            for u in uses.users(f, a) {
                let ui = f.inst(u.inst);
                if u.inst == id || ui.opcode == Opcode::DeallocActivation {
                    continue;
                }
                let only_write = ui.operands.iter().filter(|o| o.kind.writes()).count() == 1
                    && ui.operands[u.operand].kind == glow_ir::OperandKind::Out
                    && ui.operands.iter().filter(|o| o.value == a).count() == 1;
                if writer.is_some() || !only_write || pos[u.inst.index()] >= p {
                    ok = false;
                }
                writer = Some(u.inst);
            }
            let Some(w) = writer.filter(|_| ok) else {
                cx.debug(|| why_not("the source has other users than one writer above the insert"));
                continue;
            };
            let pw = pos[w.index()];
            let clobbered = f.inst(w).operands.iter().any(|o| {
                o.kind.reads() && any_between(&writes[dense(f, origins.origin(o.value))], pw, p)
            });
            if clobbered {
                let wn = &f.inst(w).name;
                cx.debug(|| why_not(&format!("an input of %{wn} changes before the insert")));
                continue;
            }
            if !cx.should_execute("optimize-inserts") {
                continue;
            }
            let offsets = inst.get(m::OFFSETS).unwrap_or(&[]).to_vec();
            let (iname, wname) = (inst.name.clone(), f.inst(w).name.clone());
            let ty = aty.clone();
            // The view, then the writer moved after it, replace the insert.
            f.layout.remove(w);
            let view =
                Builder::before(f, id).tensorview(&format!("{iname}.tv.dest"), d, ty, offsets);
            f.layout.insert_before(w, id);
            let Value::Inst(v) = view else {
                unreachable!("a tensorview is an instruction")
            };
            for o in &mut f.inst_mut(w).operands {
                if o.value == a {
                    o.value = Value::Inst(v);
                }
            }
            skip[id.index()] = true;
            done += 1;
            cx.debug(|| format!("%{iname}: %{wname} now writes a view of the destination"));
        }
        edit::erase_marked(f, &skip);
        cx.bump("inserts-to-views", done);
        Ok(done > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contiguous_slices() {
        assert!(is_slice_contiguous(&[1, 4], &[3, 4]));
        assert!(is_slice_contiguous(&[2, 4], &[3, 4]));
        assert!(is_slice_contiguous(&[1, 1, 2, 5], &[2, 3, 4, 5]));
        assert!(!is_slice_contiguous(&[3, 2], &[3, 4]));
        assert!(!is_slice_contiguous(&[1, 2, 2, 5], &[2, 3, 4, 5]));
        assert!(any_between(&[1, 5, 9], 1, 6));
        assert!(!any_between(&[1, 5, 9], 5, 9));
    }
}
