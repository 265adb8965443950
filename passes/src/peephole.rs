//! `peephole` (Glow's `performPeepholeOptimizations`): local rewrites, in one
//! forward sweep.
//!
//! - **Identity view**: a `tensorview` whose type is its source's type (so
//!   its offsets are all zero) is the source: its users use the source
//!   instead and the view is erased. Skipped when the replacement would put
//!   one name in two operand slots the verifier forbids together.
//! - **Useless copy**: a `copy` whose source and destination have the same
//!   origin, the same offset in it and the same size is erased.
//! - **Transpose of a splat**: `transpose @out D, @in S` where the only
//!   instruction writing `S`'s buffer is a `splat` of the whole buffer, above
//!   the transpose, becomes `copy @out D, @in V` with `V` a `tensorview` of
//!   `S` typed like `D` (or `S` itself when the types agree). As in Glow, a
//!   copy of a view (not a new splat): every element is equal, so only the
//!   type changes, and `share-buffers` can then propagate the copy.
//! - **elementmax canonical form**: when only the LHS is a splat's buffer,
//!   the operands are swapped so the constant is the RHS (Glow's rule).
//!
//! It never changes what any weight holds at the end, never moves an
//! existing instruction, and never creates buffers.

use crate::edit::{self, dense, dense_len, elems, Origins};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::builder::Builder;
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, InstData, InstId, Opcode, OperandKind, Value};

pub static INFO: PassInfo = PassInfo {
    name: "peephole",
    summary: "Identity views, useless copies, transpose of a splat, elementmax operand order",
    options: &[],
    stats: &[
        (
            "views-folded",
            "Number of identity tensorviews replaced by their source",
        ),
        ("copies-erased", "Number of copies within one buffer erased"),
        (
            "transposes-of-splat",
            "Number of transposes of a splat turned into copies",
        ),
        (
            "elementmax-swapped",
            "Number of elementmax put in canonical operand order",
        ),
    ],
    counters: &[("peephole", "Applying one rewrite")],
    create: |_: &PassOptions| Ok(Box::new(Peephole)),
};

struct Peephole;

/// The single instruction writing each origin, when it is a full splat.
struct Writers {
    count: Vec<u32>,
    full_splat: Vec<Option<InstId>>,
}

impl Writers {
    fn compute(f: &Function, origins: &Origins) -> Writers {
        let mut count = vec![0u32; dense_len(f)];
        let mut full_splat = vec![None; dense_len(f)];
        for id in &f.layout {
            let inst = f.inst(id);
            if inst.opcode == Opcode::DeallocActivation {
                continue;
            }
            for op in inst.operands.iter().filter(|o| o.kind.writes()) {
                let o = origins.origin(op.value);
                let k = dense(f, o);
                count[k] += 1;
                if inst.opcode == Opcode::Splat && elems(f, op.value) == elems(f, o) {
                    full_splat[k] = Some(id);
                }
            }
        }
        Writers { count, full_splat }
    }

    /// The splat that is the only writer of `v`'s origin.
    fn splat_of(&self, f: &Function, origins: &Origins, v: Value) -> Option<InstId> {
        let k = dense(f, origins.origin(v));
        (self.count[k] == 1).then_some(self.full_splat[k]).flatten()
    }
}

impl Pass for Peephole {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let origins = Origins::compute(f);
        let writers = Writers::compute(f, &origins);
        let uses = edit::Uses::compute(f);
        let mut pos = vec![usize::MAX; f.insts.len()];
        for (p, id) in f.layout.iter().enumerate() {
            pos[id.index()] = p;
        }
        let mut dead = vec![false; f.insts.len()];
        let (mut views, mut copies, mut transposes, mut swaps) = (0, 0, 0, 0);
        let order = f.layout.to_vec();
        for (p, &id) in order.iter().enumerate() {
            let inst = f.inst(id);
            match inst.opcode {
                Opcode::TensorView => {
                    let Some(src) = inst.operands.first().map(|o| o.value) else {
                        continue;
                    };
                    let same = inst.get(m::TY) == f.value_type(src)
                        && inst
                            .get(m::OFFSETS)
                            .is_some_and(|o| o.iter().all(|&x| x == 0));
                    if !same {
                        continue;
                    }
                    let users = uses.users(f, Value::Inst(id));
                    let clash = users
                        .iter()
                        .find(|u| clashes(f.inst(u.inst), u.operand, src));
                    if let Some(u) = clash {
                        let user = &f.inst(u.inst).name;
                        cx.debug(|| {
                            format!(
                                "keeping identity view %{}: %{user} also uses its source",
                                inst.name
                            )
                        });
                        continue;
                    }
                    if !cx.should_execute("peephole") {
                        continue;
                    }
                    cx.debug(|| format!("folding %{} into its source: same type", inst.name));
                    for u in users {
                        f.inst_mut(u.inst).operands[u.operand].value = src;
                    }
                    dead[id.index()] = true;
                    views += 1;
                }
                Opcode::Copy => {
                    let [d, s] = [0, 1].map(|k| inst.operands.get(k).map(|o| o.value));
                    let (Some(d), Some(s)) = (d, s) else { continue };
                    if origins.of(d) == origins.of(s)
                        && elems(f, d) == elems(f, s)
                        && cx.should_execute("peephole")
                    {
                        cx.debug(|| format!("erasing %{}: copies a buffer onto itself", inst.name));
                        dead[id.index()] = true;
                        copies += 1;
                    }
                }
                Opcode::Transpose => {
                    let [d, s] = [0, 1].map(|k| inst.operands.get(k).map(|o| o.value));
                    let (Some(d), Some(s)) = (d, s) else { continue };
                    let Some(w) = writers.splat_of(f, &origins, s) else {
                        continue;
                    };
                    if pos[w.index()] >= p {
                        continue;
                    }
                    let (Some(dty), Some(sty)) = (f.value_type(d).cloned(), f.value_type(s)) else {
                        continue;
                    };
                    if !cx.should_execute("peephole") {
                        continue;
                    }
                    let name = inst.name.clone();
                    let wname = f.inst(w).name.clone();
                    let mut src = s;
                    if sty != &dty {
                        let rank = sty.dims.len();
                        src = Builder::before(f, id).tensorview(
                            &format!("{name}.tv"),
                            s,
                            dty,
                            vec![0; rank],
                        );
                    }
                    *f.inst_mut(id) = InstData::new(name.clone(), Opcode::Copy, &[d, src], &[]);
                    f.spans.clear_inst(id.index());
                    cx.debug(|| format!("%{name}: transpose of the splat %{wname} becomes a copy"));
                    transposes += 1;
                }
                Opcode::ElementMax => {
                    let [l, r] = [1, 2].map(|k| inst.operands.get(k).map(|o| o.value));
                    let (Some(l), Some(r)) = (l, r) else { continue };
                    let is_splat = |v| {
                        writers
                            .splat_of(f, &origins, v)
                            .is_some_and(|w| pos[w.index()] < p)
                    };
                    if is_splat(l) && !is_splat(r) && cx.should_execute("peephole") {
                        cx.debug(|| format!("%{}: splat operand moved to the RHS", inst.name));
                        f.inst_mut(id).operands.swap(1, 2);
                        swaps += 1;
                    }
                }
                _ => {}
            }
        }
        edit::erase_marked(f, &dead);
        cx.bump("views-folded", views);
        cx.bump("copies-erased", copies);
        cx.bump("transposes-of-splat", transposes);
        cx.bump("elementmax-swapped", swaps);
        Ok(views + copies + transposes + swaps > 0)
    }
}

/// Whether putting `src` into operand `k` of `inst` would name one buffer
/// in two slots the verifier forbids together (not both `@in`, not an
/// in-place pair, not a copy).
fn clashes(inst: &InstData, k: usize, src: Value) -> bool {
    if inst.opcode == Opcode::Copy {
        return false;
    }
    let info = inst.opcode.info();
    let kind = inst.operands[k].kind;
    inst.operands.iter().enumerate().any(|(j, o)| {
        j != k
            && o.value == src
            && !(kind == OperandKind::In && o.kind == OperandKind::In)
            && !info.is_inplace_pair(k, j)
    })
}
