//! `count-flops`: an analysis that counts the floating-point operations
//! of each instruction, reports them one line per instruction under
//! `--debug-only=count-flops` and adds them to the `flops` statistic
//! (`--stats`). It never changes the function.
//!
//! The cost model, per instruction (one multiply-add counts as two):
//! - `matmul`, `batchmatmul`: 2 * (Dest elements) * K, K the inner dimension;
//! - `fullyconnected`: 2 * (Dest elements) * (Src elements per row);
//! - `convolution`: 2 * (Dest elements) * (kernel area) * (input channels / Group);
//! - `maxpool`, `avgpool`: (Dest elements) * (kernel area);
//! - `batchedreduceadd`: the elements of Batch;
//! - element-wise arithmetic, activations, comparisons, selects,
//!   `batchedadd`, `softmax`, normalizations: one per Dest element;
//! - memory and data movement (alloc, view, copy, splat, transpose,
//!   insert/extract, quantize, `debugprint`, ...): none.

use glow_ir::member as m;
use glow_ir::{Diagnostic, Function, InstId, Opcode};
use glow_passes::{Pass, PassContext, PassInfo, PassOptions};

pub static INFO: PassInfo = PassInfo {
    name: "count-flops",
    summary: "Count the floating-point operations of each instruction (--debug-only, --stats)",
    options: &[],
    stats: &[
        ("flops", "Floating-point operations of the function"),
        (
            "instructions-counted",
            "Instructions that perform arithmetic",
        ),
    ],
    counters: &[],
    create: |_: &PassOptions| Ok(Box::new(CountFlops)),
};

struct CountFlops;

impl Pass for CountFlops {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let mut total = 0u64;
        for i in f.inst_ids() {
            let n = flops(f, i);
            if n > 0 {
                total = total.saturating_add(n);
                cx.bump("instructions-counted", 1);
                cx.debug(|| {
                    let inst = f.inst(i);
                    format!("%{} = {}: {n} FLOPs", inst.name, inst.opcode.name())
                });
            }
        }
        cx.bump("flops", total);
        cx.debug(|| format!("function {}: {total} FLOPs", f.name));
        Ok(false)
    }
}

/// The dimensions of the operand the opcode table calls `name`.
fn dims<'f>(f: &'f Function, i: InstId, name: &str) -> &'f [u64] {
    f.inst(i)
        .operand_named(name)
        .and_then(|op| f.value_type(op.value))
        .map_or(&[], |t| t.dims.as_slice())
}

fn elems(f: &Function, i: InstId, name: &str) -> u64 {
    let d = dims(f, i, name);
    if d.is_empty() {
        0
    } else {
        d.iter().product()
    }
}

/// The product of a `Kernels` member (1 when absent).
fn kernel_area(f: &Function, i: InstId) -> u64 {
    let k = f.inst(i).get(m::KERNELS).unwrap_or(&[]);
    k.iter().map(|&v| v.max(0) as u64).product()
}

/// The operations of instruction `i` under the model of the module doc.
/// Verified functions have consistent shapes; saturating arithmetic keeps
/// absurd ones from overflowing.
pub fn flops(f: &Function, i: InstId) -> u64 {
    let inst = f.inst(i);
    let dest = || elems(f, i, "Dest");
    match inst.opcode {
        Opcode::MatMul | Opcode::BatchMatMul => {
            let k = dims(f, i, "LHS").last().copied().unwrap_or(0);
            2u64.saturating_mul(dest()).saturating_mul(k)
        }
        Opcode::FullyConnected => {
            let src = dims(f, i, "Src");
            let row = src.iter().skip(1).product::<u64>();
            2u64.saturating_mul(dest()).saturating_mul(row)
        }
        Opcode::Convolution => {
            let src = dims(f, i, "Src");
            let channels = match inst.get(m::LAYOUT) {
                Some("NCHW") => src.get(1),
                _ => src.last(),
            }
            .copied()
            .unwrap_or(0);
            let group = inst.get(m::GROUP).unwrap_or(1).max(1) as u64;
            2u64.saturating_mul(dest())
                .saturating_mul(kernel_area(f, i))
                .saturating_mul(channels / group)
        }
        Opcode::MaxPool | Opcode::AvgPool => dest().saturating_mul(kernel_area(f, i)),
        Opcode::BatchedReduceAdd => elems(f, i, "Batch"),
        Opcode::ElementAdd
        | Opcode::ElementSub
        | Opcode::ElementMul
        | Opcode::ElementDiv
        | Opcode::ElementMax
        | Opcode::ElementMin
        | Opcode::ElementCmpLTE
        | Opcode::ElementSelect
        | Opcode::BatchedAdd
        | Opcode::Relu
        | Opcode::Sigmoid
        | Opcode::Tanh
        | Opcode::Clip
        | Opcode::SoftMax
        | Opcode::BatchNormalization
        | Opcode::LocalResponseNormalization => dest(),
        _ => 0,
    }
}
