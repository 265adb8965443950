//! The parameters of the quantized kernels, derived once per instruction
//! from its types (and a channel-wise convolution's constant per-channel
//! vectors) through `glow_ir::quant`. The interpreter applies them; the C
//! emitter writes the same numbers as constants, so both engines compute
//! one definition (docs/quantization.md).

use crate::error::{inst_error, BackendError};
use glow_ir::quant::{self, Add, Average, Mul, Product, Rescale};
use glow_ir::{ElemKind, Function, InstId, Opcode, Type};

/// Whether an instruction of a float-or-quantized family computes on
/// quantized values (its first input is quantized).
pub fn is_quantized(f: &Function, id: InstId) -> bool {
    let inst = f.inst(id);
    inst.operands
        .iter()
        .skip(1)
        .find(|o| o.kind.reads())
        .and_then(|o| f.value_type(o.value))
        .is_some_and(|t| t.elem.is_quantized())
}

fn ty(f: &Function, id: InstId, name: &str) -> Result<Type, BackendError> {
    let inst = f.inst(id);
    inst.operand_named(name)
        .and_then(|o| f.value_type(o.value))
        .cloned()
        .ok_or_else(|| inst_error(f, id, format!("missing operand {name}")))
}

fn fused(f: &Function, id: InstId) -> (&str, &[f64]) {
    f.inst(id).fused_activation()
}

/// A channel-wise convolution's per-channel filter and bias parameters.
#[derive(Clone, Debug, Default)]
pub struct ChannelParams {
    pub filter_scales: Vec<f32>,
    pub filter_offsets: Vec<i64>,
    pub bias_scales: Vec<f32>,
    pub bias_offsets: Vec<i64>,
}

/// The product parameters of each of `channels` output channels of a
/// quantized `convolution`, `channelwisequantizedconvolution`,
/// `fullyconnected`, `matmul` or `batchmatmul`.
pub fn products(
    f: &Function,
    id: InstId,
    channels: u64,
    per_channel: Option<&ChannelParams>,
) -> Result<Vec<Product>, BackendError> {
    let inst = f.inst(id);
    let err = |e: String| inst_error(f, id, e);
    let (src, w) = match inst.opcode {
        Opcode::MatMul | Opcode::BatchMatMul => ("LHS", "RHS"),
        Opcode::FullyConnected => ("Src", "Weights"),
        _ => ("Src", "Filter"),
    };
    let (s, wt, d) = (ty(f, id, src)?, ty(f, id, w)?, ty(f, id, "Dest")?);
    let bias = if inst.operand_named("Bias").is_some() {
        Some(ty(f, id, "Bias")?.elem)
    } else {
        None
    };
    match per_channel {
        None => {
            let p = quant::product(s.elem, wt.elem, bias, d.elem, fused(f, id)).map_err(err)?;
            Ok(vec![p; channels as usize])
        }
        Some(cp) => {
            let n = channels as usize;
            let lens = [
                cp.filter_scales.len(),
                cp.filter_offsets.len(),
                cp.bias_scales.len(),
                cp.bias_offsets.len(),
            ];
            if lens.iter().any(|&l| l != n) {
                return Err(err(format!(
                    "the per-channel parameters have {lens:?} entries for {n} channels"
                )));
            }
            let bk = bias.unwrap_or(ElemKind::Int32Q {
                scale: 1.0,
                offset: 0,
            });
            (0..n)
                .map(|c| {
                    quant::product_with(
                        s.elem,
                        (cp.filter_scales[c], cp.filter_offsets[c]),
                        Some((bk, Some((cp.bias_scales[c], cp.bias_offsets[c])))),
                        d.elem,
                        fused(f, id),
                    )
                    .map_err(|e| err(format!("output channel {c}: {e}")))
                })
                .collect()
        }
    }
}

/// The product parameters of each row of a `rowwisequantizedfullyconnected`
/// from its `Scales` and `Offsets` values.
pub fn rowwise_products(
    f: &Function,
    id: InstId,
    scales: &[f32],
    offsets: &[i64],
) -> Result<Vec<Product>, BackendError> {
    let err = |e: String| inst_error(f, id, e);
    let (s, b, d) = (ty(f, id, "Src")?, ty(f, id, "Bias")?, ty(f, id, "Dest")?);
    let n = d.dims.get(1).copied().unwrap_or(0) as usize;
    if scales.len() != n || offsets.len() != n {
        return Err(err(format!(
            "`Scales` and `Offsets` have {} and {} entries for {n} rows",
            scales.len(),
            offsets.len()
        )));
    }
    (0..n)
        .map(|j| {
            quant::product_rowwise(s.elem, (scales[j], offsets[j]), b.elem, d.elem)
                .map_err(|e| err(format!("row {j}: {e}")))
        })
        .collect()
}

/// The weight offset of each of the `cols` columns of a dynamic
/// fullyconnected: the `Weights` type's (`dynamicquantizedfullyconnected`)
/// or `Offsets` (the row-wise form, its values from `read`), which must be a constant weight (the C
/// engine packs `w - offset` at compile time) with values in -128..127 (so
/// each difference fits the kernels' int16).
pub fn dynamic_offsets(
    f: &Function,
    id: InstId,
    cols: usize,
    read: impl FnOnce() -> Result<Vec<i64>, BackendError>,
) -> Result<Vec<i64>, BackendError> {
    let err = |e: String| inst_error(f, id, e);
    if f.inst(id).opcode != Opcode::DynamicRowwiseQuantizedFullyConnected {
        let (_, o) = ty(f, id, "Weights")?.elem.quant().unwrap_or((1.0, 0));
        return Ok(vec![o as i64; cols]);
    }
    let constant = f
        .inst(id)
        .operand_named("Offsets")
        .is_some_and(|o| match o.value {
            glow_ir::Value::Weight(w) => f.weight(w).mutability == glow_ir::Mutability::Const,
            _ => false,
        });
    if !constant {
        return Err(err(
            "`Offsets` must be a constant weight (the weights are packed with them at compile time)"
                .into(),
        ));
    }
    let of = read()?;
    if of.len() != cols {
        return Err(err(format!(
            "`Offsets` has {} entries for {cols} columns",
            of.len()
        )));
    }
    if let Some((j, v)) = of
        .iter()
        .enumerate()
        .find(|(_, v)| !(-128..=127).contains(*v))
    {
        return Err(err(format!(
            "`Offsets[{j}]` is {v}, outside the i8 range -128..127"
        )));
    }
    Ok(of)
}

/// The most `Histogram` bins a `quantizationprofile` may have: the C kernel
/// re-bins on the stack.
pub const MAX_PROFILE_BINS: u64 = 1 << 16;

/// A `quantizationprofile` the engines can run: at most
/// [`MAX_PROFILE_BINS`] bins, and its three operands in different buffers
/// (the state is updated in place while the input is read).
pub fn check_profile(f: &Function, id: InstId) -> Result<(), BackendError> {
    let err = |e: String| inst_error(f, id, e);
    let bins = ty(f, id, "Histogram")?.size();
    if bins > MAX_PROFILE_BINS {
        return Err(err(format!(
            "`Histogram` has {bins} bins; the engines take at most {MAX_PROFILE_BINS}"
        )));
    }
    let ops = &f.inst(id).operands;
    for a in 0..ops.len() {
        for b in a + 1..ops.len() {
            if f.origin(ops[a].value).0 == f.origin(ops[b].value).0 {
                return Err(err(
                    "`InputTensor`, `Histogram` and `ComputationInfo` must be three different buffers"
                        .into(),
                ));
            }
        }
    }
    Ok(())
}

/// A quantized element-wise binary operator.
#[derive(Clone, Copy, Debug)]
pub enum Binary {
    Add(Add),
    Mul(Mul),
    /// Both sides rescaled to `Dest`, then the larger (`max`) or smaller.
    MinMax {
        l: Rescale,
        r: Rescale,
        max: bool,
    },
}

impl Binary {
    pub fn of(f: &Function, id: InstId) -> Result<Binary, BackendError> {
        let inst = f.inst(id);
        let err = |e: String| inst_error(f, id, e);
        let (ln, rn) = if inst.opcode == Opcode::BatchedAdd {
            ("Batch", "Slice")
        } else {
            ("LHS", "RHS")
        };
        let (l, r, d) = (
            ty(f, id, ln)?.elem,
            ty(f, id, rn)?.elem,
            ty(f, id, "Dest")?.elem,
        );
        Ok(match inst.opcode {
            Opcode::ElementAdd | Opcode::BatchedAdd => {
                Binary::Add(Add::new(l, r, d, false).map_err(err)?)
            }
            Opcode::ElementSub => Binary::Add(Add::new(l, r, d, true).map_err(err)?),
            Opcode::ElementMul => Binary::Mul(Mul::new(l, r, d).map_err(err)?),
            Opcode::ElementMax | Opcode::ElementMin => Binary::MinMax {
                l: Rescale::new(l, d).map_err(err)?,
                r: Rescale::new(r, d).map_err(err)?,
                max: inst.opcode == Opcode::ElementMax,
            },
            op => {
                return Err(err(format!(
                    "`{}` has no integer quantized kernel",
                    op.name()
                )))
            }
        })
    }

    pub fn apply(&self, l: i64, r: i64) -> i64 {
        match self {
            Binary::Add(a) => a.apply(l, r),
            Binary::Mul(m) => m.apply(l, r),
            Binary::MinMax { l: a, r: b, max } => {
                let (x, y) = (a.apply(l), b.apply(r));
                if *max {
                    x.max(y)
                } else {
                    x.min(y)
                }
            }
        }
    }
}

pub use glow_ir::quant::{has_integer_binary, rescale_per_axis};

/// `rescalequantized`, `relu`, `clip`, `maxpool`: a rescale to `Dest`, then
/// `relu`'s and `clip`'s clamp.
#[derive(Clone, Copy, Debug)]
pub struct Activation {
    pub rescale: Rescale,
    pub lo: i64,
    pub hi: i64,
}

impl Activation {
    pub fn of(f: &Function, id: InstId) -> Result<Activation, BackendError> {
        let inst = f.inst(id);
        let err = |e: String| inst_error(f, id, e);
        let (s, d) = (ty(f, id, "Src")?.elem, ty(f, id, "Dest")?.elem);
        let rescale = Rescale::new(s, d).map_err(err)?;
        let out = quant::QParams::of(d).map_err(err)?;
        let (lo, hi) = match inst.opcode {
            Opcode::Relu => quant::activation_clamp("RELU", &[], out).map_err(err)?,
            Opcode::Clip => {
                let at = crate::members::Members::new(f, id);
                let args = [at.get(glow_ir::member::MIN)?, at.get(glow_ir::member::MAX)?];
                quant::activation_clamp("CLIP", &args, out).map_err(err)?
            }
            _ => (out.lo, out.hi),
        };
        Ok(Activation { rescale, lo, hi })
    }

    pub fn apply(&self, q: i64) -> i64 {
        self.rescale.apply(q).clamp(self.lo, self.hi)
    }
}

/// `avgpool`'s per-count multipliers.
pub fn average(f: &Function, id: InstId, max_count: u64) -> Result<Average, BackendError> {
    let (s, d) = (ty(f, id, "Src")?.elem, ty(f, id, "Dest")?.elem);
    Average::new(s, d, max_count).map_err(|e| inst_error(f, id, e))
}

/// The C text of `glow_rq`: [`glow_ir::quant::round_shift`] of `acc * m`.
pub const C_HELPERS: &str = "\
#if (-1 >> 1) != -1
#error \"the quantized kernels need an arithmetic right shift\"
#endif
/* acc * m * 2^-s rounded to nearest, ties up (glow_ir::quant::Multiplier). */
static inline int64_t glow_rq(int64_t acc, int64_t m, int s) {
  return s ? (acc * m + ((int64_t)1 << (s - 1))) >> s : acc * m;
}
static inline int64_t glow_clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
/* The low 32 bits, sign-extended: the accumulator's wrap-around. */
static inline int64_t glow_wrap32(int64_t v) {
  uint32_t u = (uint32_t)(uint64_t)v;
  return u >= 0x80000000u ? (int64_t)u - 0x100000000ll : (int64_t)u;
}
";
