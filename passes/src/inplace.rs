//! `inplace`: an element-wise instruction whose input buffer dies there
//! writes its result into that input's buffer instead of a fresh one.
//!
//! For `I = op @out %c, @in %a, ...` where `(dest, src)` is an in-place pair
//! of the opcode table, the rewrite applies when: `%c` is an
//! `allocactivation` first used by `I` (only its alloc comes before);
//! `%a`'s origin `A` is another alloc whose last use (views and their
//! creation count, its dealloc does not) is `I`; the source covers all of
//! `A` from offset 0 with the same byte size as `%c`; and every other
//! operand of `I` on `A` is also in-place paired with the dest. Then every
//! use of `%c` becomes `A` (or, when the types differ, a new
//! `tensorview` of `A` with `%c`'s type, placed just before `I`), `%c`'s
//! alloc is erased, and `A`'s dealloc takes the place of the last dealloc
//! of the buffers merged into it. Chains (`relu` of `add` of ...) merge
//! into one buffer in a single forward sweep. Linear apart from sorting.

use crate::edit::{erase_marked, Origins};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::builder::Builder;
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, InstId, Opcode, OperandKind, Value};

pub static INFO: PassInfo = PassInfo {
    name: "inplace",
    summary: "Write an element-wise result into an input buffer that dies there (in-place pairs of the opcode table)",
    options: &[],
    stats: &[
        ("rewritten", "Number of instructions made in-place"),
        ("views-created", "Number of tensorviews created for equal-size casts"),
    ],
    counters: &[("inplace", "Making one result live in its operand's buffer")],
    create: |_: &PassOptions| Ok(Box::new(Inplace)),
};

struct Inplace;

/// Per alloc id: first and last use position (`usize::MAX`/0 when unused).
struct Uses {
    first: Vec<usize>,
    last: Vec<usize>,
}

fn uses(f: &Function, origins: &Origins) -> Uses {
    let n = f.insts.len();
    let mut u = Uses {
        first: vec![usize::MAX; n],
        last: vec![0; n],
    };
    for (pos, id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        if inst.opcode == Opcode::DeallocActivation {
            continue;
        }
        for op in &inst.operands {
            if let Value::Inst(a) = origins.origin(op.value) {
                if let (Some(first), Some(last)) =
                    (u.first.get_mut(a.index()), u.last.get_mut(a.index()))
                {
                    *first = (*first).min(pos);
                    *last = (*last).max(pos);
                }
            }
        }
    }
    u
}

fn is_alloc(f: &Function, v: Value) -> Option<InstId> {
    match v {
        Value::Inst(i) if f.insts.get(i.index())?.opcode == Opcode::AllocActivation => Some(i),
        _ => None,
    }
}

fn bytes(f: &Function, v: Value) -> Option<u64> {
    f.value_type(v).map(|t| t.bytes())
}

impl Pass for Inplace {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let origins = Origins::compute(f);
        let mut u = uses(f, &origins);
        let n = f.insts.len();
        // Union-find over alloc ids: a merged alloc points at its buffer.
        let mut root: Vec<u32> = (0..n as u32).collect();
        let find = |root: &Vec<u32>, mut i: usize| {
            while root[i] as usize != i {
                i = root[i] as usize;
            }
            i
        };
        // (merged alloc C, buffer A, position of I) in program order.
        let mut merges: Vec<(InstId, InstId, usize)> = Vec::new();
        for (pos, id) in f.layout.iter().enumerate() {
            let inst = f.inst(id);
            let info = inst.opcode.info();
            for &(d, s) in info.inplace {
                let (Some(dop), Some(sop)) = (inst.operands.get(d), inst.operands.get(s)) else {
                    continue;
                };
                let Some(c) = is_alloc(f, dop.value) else {
                    continue;
                };
                if dop.kind != OperandKind::Out
                    || find(&root, c.index()) != c.index()
                    || u.first[c.index()] != pos
                {
                    continue;
                }
                let (src_origin, src_off) = origins.of(sop.value);
                let Some(a0) = is_alloc(f, src_origin) else {
                    continue;
                };
                let a = find(&root, a0.index());
                let size_c = bytes(f, dop.value);
                if a == c.index()
                    || u.last[a] != pos
                    || src_off != 0
                    || size_c.is_none()
                    || size_c != bytes(f, sop.value)
                    || size_c != bytes(f, Value::Inst(InstId(a as u32)))
                {
                    continue;
                }
                // Every other operand on A or C must be in-place with the dest.
                let clash = inst.operands.iter().enumerate().any(|(k, op)| {
                    let Value::Inst(o) = origins.origin(op.value) else {
                        return false;
                    };
                    let o = find(&root, o.index());
                    k != d && (o == c.index() || o == a) && !info.is_inplace_pair(d, k)
                });
                if clash || !cx.should_execute("inplace") {
                    continue;
                }
                root[c.index()] = a as u32;
                u.last[a] = u.last[c.index()];
                merges.push((c, InstId(a as u32), pos));
                break;
            }
        }
        if merges.is_empty() {
            return Ok(false);
        }
        apply(f, &merges, &root, cx);
        Ok(true)
    }
}

/// Renames every merged alloc to its buffer (through a view when the types
/// differ), erases the merged allocs and keeps one dealloc per buffer, at
/// the latest position among the merged deallocs.
fn apply(f: &mut Function, merges: &[(InstId, InstId, usize)], root: &[u32], cx: &mut PassContext) {
    let n = f.insts.len();
    let find = |mut i: usize| {
        while root[i] as usize != i {
            i = root[i] as usize;
        }
        i
    };
    let order = f.layout.to_vec();
    let mut replacement: Vec<Option<Value>> = vec![None; n];
    let mut dead = vec![false; n];
    for &(c, a, pos) in merges {
        let a = InstId(find(a.index()) as u32);
        let cty = f.inst(c).get(m::TY).cloned();
        let aty = f.inst(a).get(m::TY).cloned();
        let value = match (cty, aty) {
            (Some(ct), Some(at)) if ct != at => {
                let base = format!("{}.inplace", f.inst(c).name);
                let offsets = vec![0i64; at.dims.len()];
                let view =
                    Builder::before(f, order[pos]).tensorview(&base, Value::Inst(a), ct, offsets);
                cx.bump("views-created", 1);
                view
            }
            _ => Value::Inst(a),
        };
        replacement.resize(f.insts.len(), None);
        replacement[c.index()] = Some(value);
        dead[c.index()] = true;
        let (cn, an) = (f.inst(c).name.clone(), f.inst(a).name.clone());
        cx.debug(|| format!("%{cn} now lives in %{an}"));
    }
    cx.bump("rewritten", merges.len() as u64);
    // One dealloc per buffer: the last one in program order survives and
    // deallocates the buffer; the others go.
    let mut involved = vec![false; n];
    for &(c, a, _) in merges {
        involved[c.index()] = true;
        involved[a.index()] = true;
    }
    let mut last_dealloc: Vec<Option<InstId>> = vec![None; n];
    let mut erased_deallocs: Vec<(usize, InstId)> = Vec::new();
    for id in &f.layout {
        let inst = f.inst(id);
        if inst.opcode != Opcode::DeallocActivation {
            continue;
        }
        if let Some(Value::Inst(b)) = inst.operands.first().map(|o| o.value) {
            if involved.get(b.index()).copied().unwrap_or(false) {
                let r = find(b.index());
                if let Some(prev) = last_dealloc[r].replace(id) {
                    dead[prev.index()] = true;
                    erased_deallocs.push((r, prev));
                }
            }
        }
    }
    for (r, d) in last_dealloc.iter().enumerate() {
        if let Some(d) = d {
            dead[d.index()] = false;
            f.inst_mut(*d).operands[0].value = Value::Inst(InstId(r as u32));
            // `%c.dealloc` now frees `%a`: it takes the name of `%a`'s own
            // (erased) dealloc, so names keep saying what they free and
            // stay unique in the instruction table.
            let wanted = format!("{}.dealloc", f.inst(InstId(r as u32)).name);
            if f.inst(*d).name != wanted {
                let erased = erased_deallocs
                    .iter()
                    .find(|&&(root, e)| root == r && f.inst(e).name == wanted);
                if let Some(&(_, e)) = erased {
                    let name = std::mem::take(&mut f.inst_mut(*d).name);
                    f.inst_mut(*d).name = std::mem::replace(&mut f.inst_mut(e).name, name);
                }
            }
        }
    }
    dead.resize(f.insts.len(), false);
    for inst in f.insts.iter_mut() {
        for op in inst.operands.iter_mut() {
            if let Value::Inst(x) = op.value {
                if let Some(Some(v)) = replacement.get(x.index()) {
                    op.value = *v;
                }
            }
        }
    }
    erase_marked(f, &dead);
}
