//! `optimize-extracts` (Glow's `optimizeExtracts`): an `extracttensor` of a
//! contiguous slice becomes a `tensorview` of its source, so a slice costs
//! no copy.
//!
//! `extracttensor @out D, @in S { Offsets: O }` is rewritten when
//! - `D`'s shape is a contiguous window of `S`'s at `O` (see
//!   [`crate::optimize_inserts::is_slice_contiguous`]);
//! - `D` is an `allocactivation` written only by the extract (every other
//!   user reads it or deallocates it) and used only below the extract;
//! - `S`'s buffer is written by at most one instruction, above the extract
//!   (so it holds the same value for all of `D`'s readers), and, when it is
//!   an alloc, is deallocated only after `D`'s last reader.
//!
//! Then `V = tensorview S { Ty: type(D), Offsets: O }` takes the extract's
//! place, every reader of `D` reads `V`, and the extract is erased. `D`, now
//! used only by its dealloc, is left for `dead-alloc`. Never touches strided
//! windows, destinations that are weights, or sources written twice.

use crate::edit::{self, dense, dense_len, Origins};
use crate::optimize_inserts::is_slice_contiguous;
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::builder::Builder;
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, InstId, Opcode, OperandKind, Value};

pub static INFO: PassInfo = PassInfo {
    name: "optimize-extracts",
    summary: "Turn contiguous extracttensor into a tensorview of its source",
    options: &[],
    stats: &[(
        "extracts-to-views",
        "Number of extracttensor turned into tensorviews",
    )],
    counters: &[("optimize-extracts", "Replacing one extracttensor by a view")],
    create: |_: &PassOptions| Ok(Box::new(OptimizeExtracts)),
};

struct OptimizeExtracts;

impl Pass for OptimizeExtracts {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let origins = Origins::compute(f);
        let uses = edit::Uses::compute(f);
        let mut pos = vec![usize::MAX; f.insts.len()];
        for (p, id) in f.layout.iter().enumerate() {
            pos[id.index()] = p;
        }
        // Writers of each origin (deallocs aside), counted per instruction.
        let mut writers = vec![0u32; dense_len(f)];
        let mut first_writer = vec![usize::MAX; dense_len(f)];
        let mut dealloc_at = vec![usize::MAX; dense_len(f)];
        for (p, id) in f.layout.iter().enumerate() {
            let inst = f.inst(id);
            let mut seen: Vec<usize> = Vec::new();
            for op in inst.operands.iter().filter(|o| o.kind.writes()) {
                let k = dense(f, origins.origin(op.value));
                if inst.opcode == Opcode::DeallocActivation {
                    dealloc_at[k] = p;
                } else if !seen.contains(&k) {
                    seen.push(k);
                    writers[k] += 1;
                    first_writer[k] = first_writer[k].min(p);
                }
            }
        }
        // The views this pass adds, with their origins: a later extract may
        // read one (an extract of an extract), and the tables above predate it.
        let mut new_origins: Vec<(InstId, Value)> = Vec::new();
        let mut dead = vec![false; f.insts.len()];
        let mut done = 0u64;
        let order = f.layout.to_vec();
        for (p, &id) in order.iter().enumerate() {
            let inst = f.inst(id);
            if inst.opcode != Opcode::ExtractTensor {
                continue;
            }
            let (Some(d), Some(s)) = (
                inst.operands.first().map(|o| o.value),
                inst.operands.get(1).map(|o| o.value),
            ) else {
                continue;
            };
            let why_not = |msg: &str| format!("keeping %{}: {msg}", inst.name);
            let (Some(dty), Some(sty)) = (f.value_type(d), f.value_type(s)) else {
                continue;
            };
            if !is_slice_contiguous(&dty.dims, &sty.dims) {
                cx.debug(|| why_not("the window is not contiguous in the source"));
                continue;
            }
            let Value::Inst(did) = d else {
                cx.debug(|| why_not("the destination is a weight"));
                continue;
            };
            if f.inst(did).opcode != Opcode::AllocActivation {
                cx.debug(|| why_not("the destination is not an allocactivation"));
                continue;
            }
            if writers[dense(f, d)] != 1 {
                cx.debug(|| why_not("the destination has other writers"));
                continue;
            }
            let s_origin = match new_origins.iter().find(|n| Value::Inst(n.0) == s) {
                Some(&(_, o)) => o,
                None => origins.origin(s),
            };
            let ks = dense(f, s_origin);
            if writers[ks] > 1 || (writers[ks] == 1 && first_writer[ks] >= p) {
                cx.debug(|| why_not("the source is written more than once or after the extract"));
                continue;
            }
            // Readers of D: all below the extract; the last one before S dies.
            let mut last = p;
            let mut ok = true;
            for u in uses.users(f, d) {
                let ui = f.inst(u.inst);
                if u.inst == id || ui.opcode == Opcode::DeallocActivation {
                    continue;
                }
                let up = pos[u.inst.index()];
                if up <= p || ui.operands[u.operand].kind != OperandKind::In {
                    ok = false;
                }
                last = last.max(up);
            }
            if !ok {
                cx.debug(|| why_not("the destination is used above the extract or written"));
                continue;
            }
            if dealloc_at[ks] != usize::MAX && dealloc_at[ks] <= last {
                cx.debug(|| why_not("the source is deallocated before the last reader"));
                continue;
            }
            if !cx.should_execute("optimize-extracts") {
                continue;
            }
            let offsets = inst.get(m::OFFSETS).unwrap_or(&[]).to_vec();
            let (iname, ty) = (inst.name.clone(), dty.clone());
            let view =
                Builder::before(f, id).tensorview(&format!("{iname}.tv.src"), s, ty, offsets);
            let Value::Inst(v) = view else {
                unreachable!("a tensorview is an instruction")
            };
            new_origins.push((v, s_origin));
            for u in uses.users(f, d) {
                if u.inst != id && f.inst(u.inst).opcode != Opcode::DeallocActivation {
                    f.inst_mut(u.inst).operands[u.operand].value = Value::Inst(v);
                }
            }
            dead[id.index()] = true;
            done += 1;
            cx.debug(|| format!("%{iname}: its readers now read a view of the source"));
        }
        edit::erase_marked(f, &dead);
        cx.bump("extracts-to-views", done);
        Ok(done > 0)
    }
}
