//! `fuse-activations`: a `relu`, `clip`, `sigmoid` or `tanh` that reads a
//! convolution's result becomes the convolution's `FusedActivation`
//! (Glow's `FusedActivation` on `ConvolutionInst`), so the result is written
//! once instead of written, read and written again.
//!
//! The pattern, with `%x` an `allocactivation`:
//!
//! ```text
//! %c = convolution @out %x, ... { FusedActivation: NONE }
//! %a = relu @out %y, @in %x
//! ```
//!
//! where `%x` has no other user than the two and its deallocs, `%y` has the
//! type of `%x`, and no instruction between the two uses `%y` (its alloc
//! excepted, which moves above the convolution). The convolution then writes
//! `%y` with the activation fused; the activation, `%x` and its deallocs are
//! erased. `%y` must not alias the convolution's inputs (the convolution
//! reads them while writing). Exact: the fused kernel applies the same f32
//! function to the same value `sum + bias` that the activation read.

use crate::conv_fusion::{aliases_inputs, allocated_dest, dest_hoist, AllocatedDest};
use crate::edit::{rebuild_layout, Origins, Uses};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::activation::FusedActivation;
use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, InstId, Value};

pub static INFO: PassInfo = PassInfo {
    name: "fuse-activations",
    summary: "Fuse a relu/clip/sigmoid/tanh of a convolution's result into the convolution",
    options: &[],
    stats: &[("fused", "Number of activations fused into a convolution")],
    counters: &[(
        "fuse-activations",
        "Fusing one activation into a convolution",
    )],
    create: |_: &PassOptions| Ok(Box::new(FuseActivations)),
};

struct FuseActivations;

/// The `FusedActivation` (and its arguments) an activation instruction becomes.
fn fused_form(f: &Function, a: InstId) -> Option<(FusedActivation, Vec<f64>)> {
    let inst = f.inst(a);
    let act = FusedActivation::of_opcode(inst.opcode)?;
    let args = match act {
        FusedActivation::Clip => vec![inst.get(m::MIN)?, inst.get(m::MAX)?],
        _ => vec![],
    };
    Some((act, args))
}

impl Pass for FuseActivations {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let uses = Uses::compute(f);
        let origins = Origins::compute(f);
        let n = f.insts.len();
        let (order, pos) = crate::edit::order_and_positions(f);
        let mut dead = vec![false; n];
        let mut before: Vec<Vec<InstId>> = vec![Vec::new(); n];
        // (convolution, new dest, activation form)
        let mut rewrites = Vec::new();
        for &c in &order {
            if dead[c.index()] {
                continue;
            }
            let Some(AllocatedDest {
                x,
                consumer: a,
                deallocs,
            }) = allocated_dest(f, &uses, c, |a| fused_form(f, a).is_some())
            else {
                continue;
            };
            if pos[a.index()] < pos[c.index()] || dead[a.index()] {
                continue;
            }
            let y = f.inst(a).operands[0].value;
            if y == Value::Inst(x) || f.value_type(y) != f.value_type(Value::Inst(x)) {
                continue;
            }
            if aliases_inputs(f, &origins, c, y) {
                continue;
            }
            let oy = origins.origin(y);
            // %y is defined above the convolution, or is an alloc between
            // the two that can move up; nothing between uses it otherwise.
            let Some(hoist) = dest_hoist(f, &pos, c, a, y) else {
                continue;
            };
            let between =
                |i: InstId| pos[i.index()] > pos[c.index()] && pos[i.index()] < pos[a.index()];
            if uses.users(f, y).iter().any(|u| between(u.inst)) {
                continue;
            }
            // Writes to %y's buffer through another view in between also count.
            if order[pos[c.index()] + 1..pos[a.index()]].iter().any(|&i| {
                f.inst(i)
                    .operands
                    .iter()
                    .any(|o| o.value != y && origins.origin(o.value) == oy && o.kind.writes())
            }) {
                continue;
            }
            if !cx.should_execute("fuse-activations") {
                continue;
            }
            let (form, args) = fused_form(f, a).expect("checked above");
            cx.debug(|| {
                format!(
                    "fusing %{} into %{} as {form}",
                    f.inst(a).name,
                    f.inst(c).name
                )
            });
            dead[a.index()] = true;
            dead[x.index()] = true;
            for d in deallocs {
                dead[d.index()] = true;
            }
            if let Some(yd) = hoist {
                dead[yd.index()] = true;
                before[c.index()].push(yd);
            }
            rewrites.push((c, y, form, args));
        }
        if rewrites.is_empty() {
            return Ok(false);
        }
        cx.bump("fused", rewrites.len() as u64);
        for (c, y, form, args) in rewrites {
            let inst = f.inst_mut(c);
            inst.operands[0].value = y;
            inst.set(m::FUSED_ACTIVATION, form.name());
            if !args.is_empty() {
                inst.set(m::FUSED_ACTIVATION_ARGS, args);
            }
        }
        rebuild_layout(f, &before, &dead);
        Ok(true)
    }
}
