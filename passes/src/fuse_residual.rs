//! `fuse-residual`: an `elementadd` (or a `batchedadd` with one batch) of a
//! convolution's result and another tensor becomes the convolution's
//! optional `Residual` operand (onnxruntime's Conv+Add fusion), so the sum
//! is formed in the convolution's epilogue instead of a pass over memory.
//!
//! ```text
//! %c = convolution @out %x, @in %in, @in %w, @in %b
//! %a = elementadd @out %y, @in %x, @in %r        (or @in %r, @in %x)
//! ```
//!
//! becomes `%c = convolution @out %y, @in %in, @in %w, @in %b, @in %r`. The
//! operands may be full-size views of their buffers at offset 0 (the
//! importer writes the add through views). Conditions: the convolution has
//! no residual and `FusedActivation: NONE` (a following activation fuses
//! afterwards, see `fuse-activations`); `%x` is an `allocactivation` used
//! only by the convolution, the add (directly or through full views used
//! only by the add) and its deallocs; `%r` and `%y` hold as many elements of
//! the same kind as `%x`; their definitions are above the convolution or are
//! allocs and views between the two that can move above it; nothing between
//! the two touches `%y`'s buffer or writes `%r`'s; `%y` does not alias the
//! convolution's inputs and `%r` does not alias `%x`; `%y` has the dims of
//! the convolution's result (not only its element count: an add through a
//! reshaping view of `%x` stays an add).
//!
//! Exact: the kernel computes `(sum + bias) + r`, the same two roundings as
//! the convolution followed by the add (f32 addition commutes), then the
//! activation.

use crate::conv_fusion::{aliases_inputs, is_unfused_conv};
use crate::edit::{rebuild_layout, Origins, Uses};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::{Diagnostic, Function, InstId, Opcode, Operand, OperandKind, Value};

pub static INFO: PassInfo = PassInfo {
    name: "fuse-residual",
    summary: "Fuse an elementadd of a convolution's result into the convolution's Residual operand",
    options: &[],
    stats: &[("fused", "Number of additions fused into a convolution")],
    counters: &[("fuse-residual", "Fusing one elementadd into a convolution")],
    create: |_: &PassOptions| Ok(Box::new(FuseResidual)),
};

struct FuseResidual;

struct Fusion {
    conv: InstId,
    add: InstId,
    dest: Value,
    residual: Value,
    dead: Vec<InstId>,
    hoist: Vec<InstId>,
}

impl Pass for FuseResidual {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let uses = Uses::compute(f);
        let origins = Origins::compute(f);
        let n = f.insts.len();
        let (order, pos) = crate::edit::order_and_positions(f);
        let mut taken = vec![false; n];
        let mut fusions = Vec::new();
        for &c in &order {
            let found = candidate(f, c, &uses, &origins, &order, &pos, &taken);
            if let Some(fu) = found.filter(|_| cx.should_execute("fuse-residual")) {
                for &i in fu.dead.iter().chain(&fu.hoist).chain([&fu.add, &fu.conv]) {
                    taken[i.index()] = true;
                }
                fusions.push(fu);
            }
        }
        if fusions.is_empty() {
            return Ok(false);
        }
        cx.bump("fused", fusions.len() as u64);
        let mut dead = vec![false; n];
        let mut before: Vec<Vec<InstId>> = vec![Vec::new(); n];
        for fu in fusions {
            cx.debug(|| {
                format!(
                    "fusing %{} into %{} as its residual",
                    f.inst(fu.add).name,
                    f.inst(fu.conv).name
                )
            });
            for &d in fu.dead.iter().chain([&fu.add]) {
                dead[d.index()] = true;
            }
            for &h in &fu.hoist {
                dead[h.index()] = true;
                before[fu.conv.index()].push(h);
            }
            let inst = f.inst_mut(fu.conv);
            inst.operands[0].value = fu.dest;
            inst.operands.push(Operand {
                kind: OperandKind::In,
                value: fu.residual,
            });
        }
        rebuild_layout(f, &before, &dead);
        Ok(true)
    }
}

fn elems(f: &Function, v: Value) -> Option<(glow_ir::ElemKind, u64)> {
    f.value_type(v).map(|t| (t.elem, t.size()))
}

/// A view of its whole origin at offset 0 (or the buffer itself).
fn full_view(f: &Function, origins: &Origins, v: Value) -> bool {
    let (o, off) = origins.of(v);
    off == 0 && elems(f, o) == elems(f, v)
}

fn candidate(
    f: &Function,
    c: InstId,
    uses: &Uses,
    origins: &Origins,
    order: &[InstId],
    pos: &[usize],
    taken: &[bool],
) -> Option<Fusion> {
    let conv = f.inst(c);
    if !is_unfused_conv(f, c) || conv.operands.len() != 4 || taken[c.index()] {
        return None;
    }
    let dv = conv.operands[0].value;
    let Value::Inst(x) = origins.origin(dv) else {
        return None;
    };
    if f.inst(x).opcode != Opcode::AllocActivation || !full_view(f, origins, dv) {
        return None;
    }
    let shape = elems(f, dv)?;
    // A quantized convolution has no residual form: its sum is requantized
    // before the add (docs/quantization.md).
    if shape.0.is_quantized() {
        return None;
    }
    // Users of %x: the convolution (maybe through a view), full views used
    // only by the add, deallocs, and the add itself.
    let mut dead = vec![x];
    let mut add: Option<(InstId, usize)> = None;
    let mut note_add = |i: InstId, k: usize| -> bool {
        match add {
            None => {
                add = Some((i, k));
                true
            }
            Some(_) => false,
        }
    };
    for u in uses.users(f, Value::Inst(x)) {
        let ui = f.inst(u.inst);
        match ui.opcode {
            _ if u.inst == c => {}
            Opcode::DeallocActivation => dead.push(u.inst),
            Opcode::TensorView if Value::Inst(u.inst) == dv => {
                dead.push(u.inst);
            }
            Opcode::TensorView => {
                if !full_view(f, origins, Value::Inst(u.inst)) {
                    return None;
                }
                dead.push(u.inst);
                for vu in uses.users(f, Value::Inst(u.inst)) {
                    if !note_add(vu.inst, vu.operand) {
                        return None;
                    }
                }
            }
            _ => {
                if !note_add(u.inst, u.operand) {
                    return None;
                }
            }
        }
    }
    // Users of a view the convolution writes through: only the convolution.
    if let Value::Inst(dvi) = dv {
        if dvi != x && uses.users(f, dv).iter().any(|u| u.inst != c) {
            return None;
        }
    }
    let (a, k) = add?;
    let ai = f.inst(a);
    let ok_opcode = match ai.opcode {
        Opcode::ElementAdd => true,
        // One batch: the slice covers the whole result.
        Opcode::BatchedAdd => f
            .value_type(ai.operands[1].value)
            .is_some_and(|t| t.dims.first() == Some(&1)),
        _ => false,
    };
    if !ok_opcode || !(k == 1 || k == 2) || pos[a.index()] < pos[c.index()] || taken[a.index()] {
        return None;
    }
    let rv = ai.operands[3 - k].value;
    let yv = ai.operands[0].value;
    // %y becomes the convolution's Dest, which must have the convolution's dims: an add that
    // read %x through a reshaping view has the count but not the dims. The residual is read
    // element by element, so its count is enough (a one-batch batchedadd's slice has no batch).
    let dims = |v: Value| f.value_type(v).map(|t| t.dims.clone());
    if elems(f, rv) != Some(shape) || elems(f, yv) != Some(shape) || dims(yv) != dims(dv) {
        return None;
    }
    let (oy, or) = (origins.origin(yv), origins.origin(rv));
    if or == Value::Inst(x) || aliases_inputs(f, origins, c, yv) {
        return None;
    }
    let (pc, pa) = (pos[c.index()], pos[a.index()]);
    // Definitions of %y and %r (and the views between) move above the
    // convolution when they are between the two.
    let mut hoist = Vec::new();
    let mut need = vec![yv, rv];
    while let Some(v) = need.pop() {
        let Value::Inst(d) = v else { continue };
        let p = pos[d.index()];
        if p < pc {
            continue;
        }
        if p > pa
            || !matches!(
                f.inst(d).opcode,
                Opcode::AllocActivation | Opcode::TensorView
            )
        {
            return None;
        }
        if !hoist.contains(&d) {
            hoist.push(d);
        }
        if let Some(src) = f.inst(d).operands.first() {
            need.push(src.value);
        }
    }
    hoist.sort_by_key(|d| pos[d.index()]);
    // Between the two: nothing touches %y's buffer or writes %r's.
    for &i in &order[pc + 1..pa] {
        if hoist.contains(&i) || dead.contains(&i) {
            continue;
        }
        for o in &f.inst(i).operands {
            let oo = origins.origin(o.value);
            if oo == oy || (oo == or && o.kind.writes()) {
                return None;
            }
        }
    }
    Some(Fusion {
        conv: c,
        add: a,
        dest: yv,
        residual: rv,
        dead,
        hoist,
    })
}
