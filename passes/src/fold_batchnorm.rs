//! `fold-batchnorm`: an inference `batchnormalization` of a convolution's
//! result is folded into the convolution's filter and bias (onnxruntime's
//! Conv+BatchNormalization fusion, Glow's `foldBatchNormalization`), when
//! the filter, the bias and the four normalization tensors are constant
//! weights with inline `Data`.
//!
//! The folded numbers, in f32 with round-to-nearest after every operation,
//! in this order, per output channel `o`:
//!
//! ```text
//! s[o]       = (1 / sqrtf(Var[o] + Epsilon)) * Scale[o]
//! Filter'[o] = Filter[o] * s[o]                  (every element of the channel)
//! Bias'[o]   = (Bias[o] - Mean[o]) * s[o] + BnBias[o]
//! ```
//!
//! This regroups the batchnorm's arithmetic, so outputs change in the last
//! bits: the pass is not in `-O` (which never changes an output bit); run it
//! with `--pass=fold-batchnorm`. The folded program is then what both
//! engines run, so they still agree bit for bit.

use crate::conv_fusion::{aliases_inputs, allocated_dest, dest_hoist, AllocatedDest};
use crate::edit::{rebuild_layout, Origins, Uses};
use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::member as m;
use glow_ir::{
    Diagnostic, ElemKind, Function, InstId, Mutability, Opcode, Value, WeightData, WeightId,
    WeightInit,
};

pub static INFO: PassInfo = PassInfo {
    name: "fold-batchnorm",
    summary: "Fold an inference batchnormalization into the preceding convolution's constant filter and bias",
    options: &[],
    stats: &[("folded", "Number of batchnormalizations folded into a convolution")],
    counters: &[("fold-batchnorm", "Folding one batchnormalization into a convolution")],
    create: |_: &PassOptions| Ok(Box::new(FoldBatchNorm)),
};

struct FoldBatchNorm;

/// The f32 values of a constant float weight with inline data.
fn const_values(f: &Function, v: Value) -> Option<Vec<f32>> {
    let Value::Weight(w) = v else { return None };
    let wd = f.weight(w);
    if wd.mutability != Mutability::Const || wd.ty.elem != ElemKind::Float {
        return None;
    }
    let n = wd.ty.size() as usize;
    match wd.init.as_ref()? {
        WeightInit::Splat(x) => Some(vec![*x as f32; n]),
        WeightInit::Floats(v) if v.len() == n => Some(v.iter().map(|&x| x as f32).collect()),
        _ => None,
    }
}

fn add_weight(f: &mut Function, name: String, like: WeightId, values: Vec<f32>) -> Value {
    let ty = f.weight(like).ty.clone();
    Value::Weight(f.push_weight(WeightData {
        name,
        ty,
        mutability: Mutability::Const,
        init: Some(WeightInit::Floats(
            values.into_iter().map(f64::from).collect(),
        )),
    }))
}

impl Pass for FoldBatchNorm {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let uses = Uses::compute(f);
        let origins = Origins::compute(f);
        let n = f.insts.len();
        let (order, pos) = crate::edit::order_and_positions(f);
        let mut dead = vec![false; n];
        type Fold = (InstId, InstId, Value, Option<InstId>, Vec<InstId>);
        let mut folds: Vec<Fold> = Vec::new();
        let mut before: Vec<Vec<InstId>> = vec![Vec::new(); n];
        for &c in &order {
            let is_bn = |i: InstId| f.inst(i).opcode == Opcode::BatchNormalization;
            let Some(AllocatedDest {
                consumer: b,
                deallocs,
                ..
            }) = allocated_dest(f, &uses, c, is_bn)
            else {
                continue;
            };
            let conv = f.inst(c);
            let nchw = conv.get(m::LAYOUT) == Some("NCHW");
            let channel = if nchw { 1 } else { 3 };
            if f.inst(b).get(m::CHANNEL_IDX) != Some(channel) {
                continue;
            }
            let y = f.inst(b).operands[0].value;
            let (pc, pb) = (pos[c.index()], pos[b.index()]);
            // Nothing between the two touches the batchnorm's output, which
            // must not alias what the convolution reads.
            let oy = origins.origin(y);
            if aliases_inputs(f, &origins, c, y)
                || order[pc + 1..pb].iter().any(|&i| {
                    f.inst(i)
                        .operands
                        .iter()
                        .any(|o| origins.origin(o.value) == oy)
                        && Value::Inst(i) != y
                })
            {
                continue;
            }
            // The batchnorm's output must exist where the convolution writes:
            // defined above it, or an alloc between the two that moves up.
            let Some(hoist) = dest_hoist(f, &pos, c, b, y) else {
                continue;
            };
            if !cx.should_execute("fold-batchnorm") {
                continue;
            }
            folds.push((c, b, y, hoist, deallocs));
        }
        let mut folded = 0u64;
        // Adding weights renumbers dense value indices: `uses` is not read below.
        for (c, b, y, hoist, deallocs) in folds {
            let (filter, bias) = (f.inst(c).operands[2].value, f.inst(c).operands[3].value);
            let bn_ops: Vec<Value> = f.inst(b).operands[2..6].iter().map(|o| o.value).collect();
            let (Some(w), Some(bv)) = (const_values(f, filter), const_values(f, bias)) else {
                continue;
            };
            let vals: Option<Vec<Vec<f32>>> = bn_ops.iter().map(|&v| const_values(f, v)).collect();
            let Some(vals) = vals else { continue };
            let (scale, beta, mean, var) = (&vals[0], &vals[1], &vals[2], &vals[3]);
            let oc = bv.len();
            if [scale, beta, mean, var].iter().any(|v| v.len() != oc) || oc == 0 {
                continue;
            }
            let eps = f.inst(b).get(m::EPSILON).unwrap_or(1e-5) as f32;
            let s: Vec<f32> = (0..oc)
                .map(|o| (1.0f32 / (var[o] + eps).sqrt()) * scale[o])
                .collect();
            // Filters are [oc][...] in both layouts: channel o is one block.
            let per = w.len() / oc;
            let w2: Vec<f32> = w.iter().enumerate().map(|(i, &v)| v * s[i / per]).collect();
            let b2: Vec<f32> = (0..oc)
                .map(|o| (bv[o] - mean[o]) * s[o] + beta[o])
                .collect();
            let (Value::Weight(fw), Value::Weight(bw)) = (filter, bias) else {
                continue;
            };
            let fname = f.fresh_name(&format!("{}.folded", f.weight(fw).name));
            let bname = f.fresh_name(&format!("{}.folded", f.weight(bw).name));
            let nf = add_weight(f, fname, fw, w2);
            let nb = add_weight(f, bname, bw, b2);
            cx.debug(|| format!("folding %{} into %{}", f.inst(b).name, f.inst(c).name));
            let x = f.inst(c).operands[0].value;
            let inst = f.inst_mut(c);
            inst.operands[0].value = y;
            inst.operands[2].value = nf;
            inst.operands[3].value = nb;
            dead[b.index()] = true;
            if let Some(yd) = hoist {
                dead[yd.index()] = true;
                before[c.index()].push(yd);
            }
            if let Value::Inst(xi) = x {
                dead[xi.index()] = true;
            }
            for d in deallocs {
                dead[d.index()] = true;
            }
            folded += 1;
        }
        if folded == 0 {
            return Ok(false);
        }
        cx.bump("folded", folded);
        rebuild_layout(f, &before, &dead);
        Ok(true)
    }
}
