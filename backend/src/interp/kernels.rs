//! The interpreter's kernels: one function per opcode family, each a plain
//! loop nest with the operation order of the matching C kernel in `emit/`.

use super::index::unravel;
use super::Exec;
use crate::elem::{dequantize, quantize, splat_bits};
use crate::emit::{split, Window};
use crate::error::BackendError;
use crate::ops;
use glow_ir::activation::FusedActivation;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode, Type};

type R = Result<(), BackendError>;

/// The kernel of each family (the table's `family` column); exhaustive, so
/// a new family must get a kernel here.
pub fn exec(x: &mut Exec) -> R {
    use glow_ir::opcode::Family::*;
    match x.opcode().info().family {
        Memory => Ok(()),
        Copy => {
            let v = x.bits("Src")?;
            x.put_bits("Dest", &v)
        }
        Splat => splat(x),
        Transpose => transpose(x),
        Insert => insert(x),
        Extract => extract(x),
        Gather => gather(x),
        GatherElements => super::index::gather_elements(x),
        GatherND => super::index::gather_nd(x),
        ScatterElements => super::index::scatter_elements(x),
        ScatterND => super::index::scatter_nd(x),
        OneHot => super::index::one_hot(x),
        ArgMinMax => super::index::arg_min_max(x),
        TopK => super::sort::topk(x),
        Rearrange => super::rearrange::exec(x),
        DebugPrint => debugprint(x),
        Binary if quantized(x) && crate::quant::has_integer_binary(x.opcode()) => {
            super::quant::binary(x)
        }
        Binary => binary(x),
        Compare => cmplte(x),
        Logical => logical(x),
        Select => select(x),
        Unary if quantized(x) && matches!(x.opcode(), Opcode::Relu | Opcode::Clip) => {
            super::quant::activation(x)
        }
        Unary => unary(x),
        Quantization if x.opcode() == Opcode::RescaleQuantized => super::quant::activation(x),
        Quantization => quantization(x),
        Convert => convert(x),
        LookupTable => lookup_table(x),
        BatchedAdd if quantized(x) => super::quant::binary(x),
        BatchedAdd => batched_add(x),
        Reduce => batched_reduce_add(x),
        MatrixMultiply if quantized(x) => super::quant::matrix_multiply(x),
        MatrixMultiply => match x.opcode() {
            Opcode::FullyConnected => fully_connected(x),
            Opcode::BatchMatMul => batch_matmul(x),
            _ => matmul(x),
        },
        SoftMax => softmax(x),
        BatchNorm => batchnorm(x),
        LayerNorm => layernorm(x),
        Lrn => lrn(x),
        Convolution if quantized(x) => super::quant::convolution(x),
        Convolution => convolution(x),
        Convolution3D => convolution3d(x),
        ConvTranspose => conv_transpose(x),
        Pool if quantized(x) => super::quant::pool(x),
        Pool => pool(x),
        ActivationGrad => super::loss::activation_grad(x),
        SoftMaxGrad => super::loss::softmax_grad(x),
        Loss => super::loss::cross_entropy_loss(x),
        LossGrad => super::loss::cross_entropy_loss_grad(x),
        Sgd => super::loss::sgd(x),
        ConvolutionGrad => super::grad::convolution_grad(x),
        PoolWithArgmax => super::grad::max_pool_with_argmax(x),
        PoolGrad => super::grad::pool_grad(x),
        LrnGrad => super::norm_grad::lrn_grad(x),
        Sparse => super::sparse::exec(x),
        Detection => super::detection::exec(x),
        NoKernel => Err(x.err(crate::error::NO_KERNEL)),
        BatchNormGrad => super::norm_grad::batch_norm_grad(x),
        Predicate => predicate(x),
        IntUnary => int_unary(x),
        BceWithLogits => super::loss::bce_with_logits(x),
        PairwiseDot => super::pairwise::pairwise_dot(x),
        PairwiseDotGrad => super::pairwise::pairwise_dot_grad(x),
        ThresholdGrad => super::pairwise::threshold_grad(x),
        DynamicQuantized => super::quant::dynamic_fully_connected(x),
        Profile => super::quant::quantization_profile(x),
    }
}

/// Whether the instruction computes on quantized values.
fn quantized(x: &Exec) -> bool {
    crate::quant::is_quantized(x.f, x.id)
}

/// `gather`, as the C kernel: negative indices from the end, out of range
/// gives zeros.
fn gather(x: &mut Exec) -> R {
    let (d, data) = (x.ty("Dest")?, x.ty("Data")?);
    let axis = x.m().get(m::AXIS)?.max(0) as usize;
    let (outer, at, inner) = crate::emit::split(&data.dims, axis);
    let src = x.bits("Data")?;
    let idx = x.ints("Indices")?;
    let (n, inner, at) = (idx.len(), inner as usize, at as usize);
    let mut out = x.scratch(d.size() as usize, 0u64)?;
    for o in 0..outer as usize {
        for (k, &i) in idx.iter().enumerate() {
            let i = if i < 0 { i + at as i64 } else { i };
            if i < 0 || i >= at as i64 {
                continue;
            }
            let from = (o * at + i as usize) * inner;
            let to = (o * n + k) * inner;
            out[to..to + inner].copy_from_slice(&src[from..from + inner]);
        }
    }
    x.put_bits("Dest", &out)
}

fn splat(x: &mut Exec) -> R {
    let d = x.ty("Dest")?;
    let bits = splat_bits(d.elem, x.m().get(m::VALUE)?).ok_or_else(|| x.unsupported(&d))?;
    x.put_bits("Dest", &x.scratch(d.size() as usize, bits)?)
}

fn ravel(idx: &[u64], dims: &[u64]) -> usize {
    let mut lin = 0u64;
    for (k, &d) in dims.iter().enumerate() {
        lin = lin * d + idx[k];
    }
    lin as usize
}

fn transpose(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let shuffle = x.m().get(m::SHUFFLE)?.to_vec();
    let src = x.bits("Src")?;
    let mut out = x.scratch(d.size() as usize, 0u64)?;
    for (i, o) in out.iter_mut().enumerate() {
        let di = unravel(i as u64, &d.dims);
        let mut si = x.scratch(s.dims.len(), 0u64)?;
        for (k, &p) in shuffle.iter().enumerate() {
            si[p as usize] = di[k];
        }
        *o = src[ravel(&si, &s.dims)];
    }
    x.put_bits("Dest", &out)
}

fn extract(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let offs = x.m().get(m::OFFSETS)?.to_vec();
    let src = x.bits("Src")?;
    let mut out = x.scratch(d.size() as usize, 0u64)?;
    for (i, o) in out.iter_mut().enumerate() {
        let mut si = unravel(i as u64, &d.dims);
        for (k, v) in si.iter_mut().enumerate() {
            *v += offs[k] as u64;
        }
        *o = src[ravel(&si, &s.dims)];
    }
    x.put_bits("Dest", &out)
}

fn insert(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let offs = x.m().get(m::OFFSETS)?.to_vec();
    let count = x.m().get(m::COUNT)?.max(0) as u64;
    let axis = x.m().get(m::AXIS)?.max(0) as usize;
    let src = x.bits("Src")?;
    let mut out = x.bits("Dest")?;
    for c in 0..count {
        for (i, v) in src.iter().enumerate() {
            let mut di = unravel(i as u64, &s.dims);
            for (k, e) in di.iter_mut().enumerate() {
                *e += offs[k] as u64;
                if k == axis {
                    *e += c * s.dims[axis];
                }
            }
            out[ravel(&di, &d.dims)] = *v;
        }
    }
    x.put_bits("Dest", &out)
}

fn debugprint(x: &mut Exec) -> R {
    let s = x.ty("Src")?;
    let mut name = String::new();
    glow_ir::printer::write_name(x.f.value_name(x.inst.operands[0].value), &mut name);
    let vals: Vec<String> = match s.elem {
        ElemKind::Float => x
            .f32s("Src")?
            .iter()
            .map(|v| crate::text::g9(*v as f64))
            .collect(),
        // The C code prints float64 with the same `%.9g`.
        ElemKind::Float64 => x
            .bits("Src")?
            .iter()
            .map(|&b| crate::text::g9(f64::from_bits(b)))
            .collect(),
        k if crate::elem::is_integer(k) => x.ints("Src")?.iter().map(|v| v.to_string()).collect(),
        _ => return Err(x.unsupported(&s)),
    };
    x.stdout
        .push_str(&format!("{name} = {s} [{}]\n", vals.join(", ")));
    Ok(())
}

/// Plain integer kinds (index32/index64/int8/uint8), computed in i64.
fn is_index(t: &Type) -> bool {
    t.elem.is_plain_int()
}

fn binary(x: &mut Exec) -> R {
    let op = ops::binary(x.opcode()).ok_or_else(|| x.err("not a binary operator"))?;
    let (d, l, r) = (x.ty("Dest")?, x.ty("LHS")?, x.ty("RHS")?);
    for t in [&l, &r] {
        if t.elem != d.elem {
            return Err(x.unsupported(t));
        }
    }
    if let (ElemKind::Float, Some(float)) = (d.elem, op.float_form()) {
        let (a, b) = (x.f32s("LHS")?, x.f32s("RHS")?);
        let out: Vec<f32> = a.iter().zip(&b).map(|(&a, &b)| float(a, b)).collect();
        x.put_f32s("Dest", &out)
    } else if let (true, Some(int)) = (is_index(&d), op.int_form()) {
        let (a, b) = (x.ints("LHS")?, x.ints("RHS")?);
        let out: Vec<i64> = a.iter().zip(&b).map(|(&a, &b)| int(a, b)).collect();
        x.put_ints("Dest", &out)
    } else {
        Err(x.unsupported(&d))
    }
}

/// Comparable values: floats as f64 (exact), index values as they are,
/// quantized values dequantized in f32 (as the C kernel does).
fn comparable(x: &Exec, name: &str) -> Result<Vec<f64>, BackendError> {
    let t = x.ty(name)?;
    match t.elem {
        ElemKind::Float => Ok(x.f32s(name)?.iter().map(|&v| v as f64).collect()),
        k if k.is_plain_int() => Ok(x.ints(name)?.iter().map(|&v| v as f64).collect()),
        k => {
            let (s, o) = k.quant().ok_or_else(|| x.unsupported(&t))?;
            Ok(x.ints(name)?
                .iter()
                .map(|&q| dequantize(q, s, o) as f64)
                .collect())
        }
    }
}

/// The `Compare` family (`ops::COMPARE`).
fn cmplte(x: &mut Exec) -> R {
    let op = ops::compare(x.opcode()).ok_or_else(|| x.err("not a comparison"))?;
    let d = x.ty("Dest")?;
    let (l, r) = (x.ty("LHS")?, x.ty("RHS")?);
    // 64-bit index values compare exactly as integers.
    let out: Vec<i64> = if is_index(&l) && is_index(&r) {
        let (a, b) = (x.ints("LHS")?, x.ints("RHS")?);
        a.iter()
            .zip(&b)
            .map(|(&a, &b)| (op.int)(a, b) as i64)
            .collect()
    } else {
        let (a, b) = (comparable(x, "LHS")?, comparable(x, "RHS")?);
        a.iter()
            .zip(&b)
            .map(|(&a, &b)| (op.float)(a, b) as i64)
            .collect()
    };
    if d.elem != ElemKind::Bool {
        return Err(x.unsupported(&d));
    }
    x.put_ints("Dest", &out)
}

/// The `Logical` family (`ops::LOGICAL`) over bool bytes.
fn logical(x: &mut Exec) -> R {
    let op = ops::logical(x.opcode()).ok_or_else(|| x.err("not a logical operator"))?;
    let out: Vec<i64> = if x.inst.opcode.info().operand_index("Src").is_some() {
        let a = x.bits("Src")?;
        a.iter().map(|&a| (op.f)(a != 0, false) as i64).collect()
    } else {
        let (a, b) = (x.bits("LHS")?, x.bits("RHS")?);
        a.iter()
            .zip(&b)
            .map(|(&a, &b)| (op.f)(a != 0, b != 0) as i64)
            .collect()
    };
    x.put_ints("Dest", &out)
}

fn select(x: &mut Exec) -> R {
    let (d, l, r) = (x.ty("Dest")?, x.ty("LHS")?, x.ty("RHS")?);
    for t in [&l, &r] {
        if t.elem != d.elem {
            return Err(x.unsupported(t));
        }
    }
    let cond = x.bits("Cond")?;
    let (a, b) = (x.bits("LHS")?, x.bits("RHS")?);
    let out: Vec<u64> = (0..a.len())
        .map(|i| if cond[i] != 0 { a[i] } else { b[i] })
        .collect();
    x.put_bits("Dest", &out)
}

/// The `Unary` family: `ops::UNARY`'s function with the opcode's float
/// members as its parameters.
fn unary(x: &mut Exec) -> R {
    let op = ops::unary(x.opcode()).ok_or_else(|| x.err("not a unary operator"))?;
    let d = x.ty("Dest")?;
    if d.elem != ElemKind::Float {
        return Err(x.unsupported(&d));
    }
    let m = x.m().float_params()?;
    // The input is the second operand (`Src`; `RHS` of the constant forms).
    let src = x.opcode().info().operands[1].name;
    let out: Vec<f32> = x.f32s(src)?.iter().map(|&v| (op.f)(v, &m)).collect();
    x.put_f32s("Dest", &out)
}

/// The `Predicate` family: `ops::PREDICATE`'s test of each float element.
fn predicate(x: &mut Exec) -> R {
    let op = ops::predicate(x.opcode()).ok_or_else(|| x.err("not a predicate"))?;
    let out: Vec<i64> = x.f32s("Src")?.iter().map(|&v| (op.f)(v) as i64).collect();
    x.put_ints("Dest", &out)
}

/// The `IntUnary` family: `ops::INT_UNARY`'s function with the opcode's
/// integer members, each result wrapped to `Dest`'s width.
fn int_unary(x: &mut Exec) -> R {
    let op = ops::int_unary(x.opcode()).ok_or_else(|| x.err("not an integer operator"))?;
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    for t in [&d, &s] {
        if !t.elem.is_plain_int() {
            return Err(x.unsupported(t));
        }
    }
    let m = x.m().int_params()?;
    let out: Vec<i64> = x.ints("Src")?.iter().map(|&v| (op.f)(v, &m)).collect();
    x.put_ints("Dest", &out)
}

fn quantization(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    if x.inst.operand_named("Scales").is_some() {
        return quantization_per_axis(x, &d);
    }
    let reals: Vec<f32> = if x.opcode() == Opcode::Quantize {
        x.f32s("Src")?
    } else {
        let (sc, o) = s.elem.quant().ok_or_else(|| x.unsupported(&s))?;
        x.ints("Src")?
            .iter()
            .map(|&q| dequantize(q, sc, o))
            .collect()
    };
    if x.opcode() == Opcode::Dequantize {
        return x.put_f32s("Dest", &reals);
    }
    let (sc, o) = d.elem.quant().ok_or_else(|| x.unsupported(&d))?;
    let range = d.elem.quant_range().ok_or_else(|| x.unsupported(&d))?;
    let out: Vec<i64> = reals.iter().map(|&v| quantize(v, sc, o, range)).collect();
    x.put_ints("Dest", &out)
}

/// Per-axis `quantize`/`dequantize`: element i takes the scale and offset
/// of its index along `Axis`, `(i / inner) % n`; the byte side is plain
/// `int8` (-128..127) or `uint8` (0..255).
fn quantization_per_axis(x: &mut Exec, d: &Type) -> R {
    let axis = x.m().get(m::AXIS)? as usize;
    let dims = &d.dims;
    let n = dims.get(axis).copied().unwrap_or(1).max(1) as usize;
    let inner = dims.iter().skip(axis + 1).product::<u64>().max(1) as usize;
    let (scales, offsets) = (x.f32s("Scales")?, x.ints("Offsets")?);
    let at = |i: usize| (scales[(i / inner) % n], offsets[(i / inner) % n] as i32);
    if x.opcode() == Opcode::Dequantize {
        let src = x.ints("Src")?;
        let out: Vec<f32> = (0..src.len())
            .map(|i| {
                let (sc, o) = at(i);
                dequantize(src[i], sc, o)
            })
            .collect();
        return x.put_f32s("Dest", &out);
    }
    let range = if d.elem == ElemKind::Int8 {
        (-128, 127)
    } else {
        (0, 255)
    };
    let src = x.f32s("Src")?;
    let out: Vec<i64> = (0..src.len())
        .map(|i| {
            let (sc, o) = at(i);
            quantize(src[i], sc, o, range)
        })
        .collect();
    x.put_ints("Dest", &out)
}

/// `intlookuptable`: `Mapping[q - lowest]` (the table's bits as stored).
fn lookup_table(x: &mut Exec) -> R {
    let s = x.ty("Src")?;
    let lowest = s.elem.quant_range().ok_or_else(|| x.unsupported(&s))?.0;
    let (src, table) = (x.ints("Src")?, x.bits("Mapping")?);
    let out: Vec<u64> = src
        .iter()
        .map(|&q| table[((q - lowest) as usize).min(table.len().saturating_sub(1))])
        .collect();
    x.put_bits("Dest", &out)
}

/// `convertto` by `ops::Conversion`.
fn convert(x: &mut Exec) -> R {
    use ops::Conversion as C;
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let conv = C::between(s.elem, d.elem).ok_or_else(|| x.unsupported(&d))?;
    match conv {
        C::Same => {
            let v = x.bits("Src")?;
            x.put_bits("Dest", &v)
        }
        C::FloatToBool | C::FloatToInt { .. } => {
            let v: Vec<i64> = x
                .f32s("Src")?
                .iter()
                .map(|&f| int_of(conv.float(f)))
                .collect();
            x.put_ints("Dest", &v)
        }
        C::IntToFloat => {
            let v: Vec<f32> = x
                .ints("Src")?
                .iter()
                .map(|&i| float_of(conv.int(i)))
                .collect();
            x.put_f32s("Dest", &v)
        }
        C::IntToBool | C::IntToInt => {
            let v: Vec<i64> = x
                .ints("Src")?
                .iter()
                .map(|&i| int_of(conv.int(i)))
                .collect();
            x.put_ints("Dest", &v)
        }
    }
}

/// The integer a conversion to an integer or bool kind gives.
fn int_of(s: Option<ops::Scalar>) -> i64 {
    match s {
        Some(ops::Scalar::I(i)) => i,
        _ => unreachable!("a conversion to an integer kind gives an integer"),
    }
}

/// The float a conversion to `float` gives.
fn float_of(s: Option<ops::Scalar>) -> f32 {
    match s {
        Some(ops::Scalar::F(f)) => f,
        _ => unreachable!("a conversion to float gives a float"),
    }
}

fn batched_add(x: &mut Exec) -> R {
    let b = x.f32s("Batch")?;
    let s = x.f32s("Slice")?;
    let out: Vec<f32> = b
        .iter()
        .enumerate()
        .map(|(i, &v)| v + s[i % s.len()])
        .collect();
    x.put_f32s("Dest", &out)
}

/// The `Reduce` family (`ops::REDUCE`) over `Axis`.
fn batched_reduce_add(x: &mut Exec) -> R {
    let op = ops::REDUCE
        .iter()
        .find(|o| o.opcode == x.opcode())
        .ok_or_else(|| x.err("not a reduction"))?;
    let t = x.ty("Batch")?;
    let axis = x.m().get(m::AXIS)?.max(0) as usize;
    let b = x.f32s("Batch")?;
    let (outer, at, inner) = split(&t.dims, axis);
    let (outer, at, inner) = (outer as usize, at as usize, inner as usize);
    let mut out = x.scratch(outer * inner, 0f32)?;
    for o in 0..outer {
        for n in 0..inner {
            let at_k = |a: usize| b[o * at * inner + a * inner + n];
            let (mut acc, first) = match op.init {
                Some(v) => (v, 0),
                None if at > 0 => (at_k(0), 1),
                None => (0.0, 0),
            };
            for a in first..at {
                acc = (op.f)(acc, at_k(a));
            }
            out[o * inner + n] = acc;
        }
    }
    x.put_f32s("Dest", &out)
}

/// `(batches, rows, inner, cols)` product: each sum over `inner` in order
/// from 0.0 with one fused multiply-add per product, `bias` added after it.
fn matmul_core(
    l: &[f32],
    r: &[f32],
    dims: (usize, usize, usize, usize),
    bias: Option<&[f32]>,
) -> Vec<f32> {
    let (nb, rows, inner, cols) = dims;
    let mut out = vec![0f32; nb * rows * cols];
    with_fma!({
        for b in 0..nb {
            for i in 0..rows {
                for j in 0..cols {
                    let mut sum = 0f32;
                    for k in 0..inner {
                        let (x, w) = (
                            l[b * rows * inner + i * inner + k],
                            r[b * inner * cols + k * cols + j],
                        );
                        sum = x.mul_add(w, sum);
                    }
                    out[b * rows * cols + i * cols + j] = match bias {
                        Some(bias) => sum + bias[j],
                        None => sum,
                    };
                }
            }
        }
    });
    out
}

fn fully_connected(x: &mut Exec) -> R {
    let (s, w) = (x.ty("Src")?, x.ty("Weights")?);
    let n = s.dims[0] as usize;
    let k = s.size() as usize / n.max(1);
    let m = w.dims.get(1).copied().unwrap_or(1) as usize;
    let bias = x.f32s("Bias")?;
    let out = matmul_core(
        &x.f32s("Src")?,
        &x.f32s("Weights")?,
        (1, n, k, m),
        Some(&bias),
    );
    x.put_f32s("Dest", &out)
}

fn matmul(x: &mut Exec) -> R {
    let (l, r) = (x.ty("LHS")?, x.ty("RHS")?);
    let dims = (
        1,
        l.dims[0] as usize,
        l.dims[1] as usize,
        r.dims[1] as usize,
    );
    let out = matmul_core(&x.f32s("LHS")?, &x.f32s("RHS")?, dims, None);
    x.put_f32s("Dest", &out)
}

fn batch_matmul(x: &mut Exec) -> R {
    let (l, r) = (x.ty("LHS")?, x.ty("RHS")?);
    let d = |t: &Type, i: usize| t.dims[i] as usize;
    let dims = (d(&l, 0), d(&l, 1), d(&l, 2), d(&r, 2));
    let out = matmul_core(&x.f32s("LHS")?, &x.f32s("RHS")?, dims, None);
    x.put_f32s("Dest", &out)
}

/// `softmax`, or `logsoftmax` with the same max and sum.
fn softmax(x: &mut Exec) -> R {
    let log = x.opcode() == Opcode::LogSoftMax;
    let t = x.ty("Src")?;
    let cols = t.dims[1] as usize;
    let src = x.f32s("Src")?;
    let mut out = x.scratch(src.len(), 0f32)?;
    for (row, y) in src.chunks(cols).zip(out.chunks_mut(cols)) {
        let mut mx = row[0];
        for &v in row {
            if mx < v {
                mx = v;
            }
        }
        let mut sum = 0f32;
        for (j, &v) in row.iter().enumerate() {
            let e = (v - mx).exp();
            y[j] = e;
            sum += e;
        }
        if log {
            // ONNX's order: (x - max) - log(sum).
            let ls = sum.ln();
            for (j, &v) in row.iter().enumerate() {
                y[j] = (v - mx) - ls;
            }
        } else {
            for v in y.iter_mut() {
                *v /= sum;
            }
        }
    }
    x.put_f32s("Dest", &out)
}

fn batchnorm(x: &mut Exec) -> R {
    let t = x.ty("Src")?;
    let ch = x.m().get(m::CHANNEL_IDX)?.max(0) as usize;
    let eps = x.m().get(m::EPSILON)? as f32;
    let (outer, at, inner) = split(&t.dims, ch);
    let (src, scale, bias) = (x.f32s("Src")?, x.f32s("Scale")?, x.f32s("Bias")?);
    let (mean, var) = (x.f32s("Mean")?, x.f32s("Var")?);
    let mut out = x.scratch(src.len(), 0f32)?;
    for o in 0..outer as usize {
        for c in 0..at as usize {
            let inv = 1.0f32 / (var[c] + eps).sqrt();
            for n in 0..inner as usize {
                let i = o * (at * inner) as usize + c * inner as usize + n;
                out[i] = (src[i] - mean[c]) * inv * scale[c] + bias[c];
            }
        }
    }
    x.put_f32s("Dest", &out)
}

/// `layernormalization`, in the C kernel's order.
fn layernorm(x: &mut Exec) -> R {
    let t = x.ty("Src")?;
    let eps = x.m().get(m::EPSILON)? as f32;
    let cols = *t.dims.last().unwrap_or(&1) as usize;
    let (src, scale, bias) = (x.f32s("Src")?, x.f32s("Scale")?, x.f32s("Bias")?);
    let n = cols as f32;
    let mut out = x.scratch(src.len(), 0f32)?;
    for (row, y) in src.chunks(cols.max(1)).zip(out.chunks_mut(cols.max(1))) {
        let mut sum = 0f32;
        for &v in row {
            sum += v;
        }
        let mean = sum / n;
        let mut sq = 0f32;
        for &v in row {
            let d = v - mean;
            sq = d.mul_add(d, sq);
        }
        let inv = 1.0f32 / (sq / n + eps).sqrt();
        for j in 0..row.len() {
            y[j] = (row[j] - mean) * inv * scale[j] + bias[j];
        }
    }
    x.put_f32s("Dest", &out)
}

fn lrn(x: &mut Exec) -> R {
    let t = x.ty("Src")?;
    let h = x.m().get(m::HALF_WINDOW_SIZE)?.max(0) as usize;
    let norm = x.m().get(m::ALPHA)? as f32 / (2 * h + 1) as f32;
    let beta = -(x.m().get(m::BETA)? as f32);
    let k = x.m().get(m::K)? as f32;
    let cols = *t.dims.last().unwrap_or(&1) as usize;
    let src = x.f32s("Src")?;
    let mut out = x.scratch(src.len(), 0f32)?;
    let mut scale = x.scratch(src.len(), 0f32)?;
    for (r, row) in src.chunks(cols).enumerate() {
        for j in 0..cols {
            let (lo, hi) = (j.saturating_sub(h), (j + h).min(cols - 1));
            let mut ss = 0f32;
            for v in &row[lo..=hi] {
                ss = v.mul_add(*v, ss);
            }
            let sc = k + norm * ss;
            scale[r * cols + j] = sc;
            out[r * cols + j] = row[j] * sc.powf(beta);
        }
    }
    x.put_f32s("Scale", &scale)?;
    x.put_f32s("Dest", &out)
}

fn convolution(x: &mut Exec) -> R {
    let (d, s, fl) = (x.ty("Dest")?, x.ty("Src")?, x.ty("Filter")?);
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let group = x.m().get(m::GROUP)?.max(1) as u64;
    let (act, args) = x.inst.fused_activation();
    let act = FusedActivation::from_name(act)
        .ok_or_else(|| x.err(format!("unknown fused activation {act}")))?;
    let (a0, a1) = act.resolve(args);
    let fused = |v: f32| act.apply(v, a0, a1);
    let (src, filt, bias) = (x.f32s("Src")?, x.f32s("Filter")?, x.f32s("Bias")?);
    // The optional residual, added after the bias and before the activation.
    let residual = match x.inst.operand_named("Residual") {
        Some(_) => Some(x.f32s("Residual")?),
        None => None,
    };
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, oc, oh, ow] = win.nchw_of(&d.dims);
    let (cg, ocg) = (ch / group, oc / group);
    let [kh, kw] = win.kernels;
    let (ss, ds) = (win.act_strides(&s.dims), win.act_strides(&d.dims));
    let fs = if win.nchw {
        [cg * kh * kw, kw, 1, kh * kw]
    } else {
        [kh * kw * cg, kw * cg, cg, 1]
    };
    let _ = fl;
    let at = |st: [u64; 4], i: [u64; 4]| (0..4).map(|k| st[k] * i[k]).sum::<u64>() as usize;
    let mut out = x.scratch(d.size() as usize, 0f32)?;
    with_fma!({
        for b in 0..n {
            for y in 0..oh {
                for xx in 0..ow {
                    for o in 0..oc {
                        let g = o / ocg;
                        let mut sum = 0f32;
                        for_window(&win, y, xx, h, w, |a, r, p, q| {
                            for c in 0..cg {
                                let (x, f) = (
                                    src[at(ss, [b, g * cg + c, p, q])],
                                    filt[at(fs, [o, a, r, c])],
                                );
                                sum = x.mul_add(f, sum);
                            }
                        });
                        let i = at(ds, [b, o, y, xx]);
                        let v = sum + bias[o as usize];
                        out[i] = fused(match &residual {
                            Some(r) => v + r[i],
                            None => v,
                        });
                    }
                }
            }
        }
    });
    x.put_f32s("Dest", &out)
}

/// `convolution3d` (NTHWC, Glow's loop order within an output element):
/// from +0 over (kt, kh, kw, input channel of the group) one fused
/// multiply-add per product, window positions outside the input skipped,
/// then the bias; as `emit/spatial.rs` writes it.
fn convolution3d(x: &mut Exec) -> R {
    let mut t = Vec::with_capacity(4);
    for name in ["Dest", "Src", "Filter", "Bias"] {
        let ty = x.ty(name)?;
        if ty.elem != ElemKind::Float {
            return Err(x.unsupported(&ty));
        }
        t.push(ty);
    }
    let geo = crate::emit::Conv3d::read(x.inst, &t[0], &t[1])
        .ok_or_else(|| x.err("malformed convolution3d members"))?;
    let (src, filt, bias) = (x.f32s("Src")?, x.f32s("Filter")?, x.f32s("Bias")?);
    let crate::emit::Conv3d {
        input: [n, it, ih, iw, ic],
        output: [_, ot, oh, ow, oc],
        kernels: [kt, kh, kw],
        strides,
        before,
        group,
    } = geo;
    let (cg, ocg) = (ic / group, oc / group);
    // The input coordinate of output `o` at tap `k` on axis `a`, if inside.
    let tap = |a: usize, o: u64, k: u64, lim: u64| -> Option<u64> {
        let p = (o * strides[a] + k) as i64 - before[a] as i64;
        (p >= 0 && (p as u64) < lim).then_some(p as u64)
    };
    let mut out = x.scratch(t[0].size() as usize, 0f32)?;
    with_fma!({
        for b in 0..n {
            for at in 0..ot {
                for ay in 0..oh {
                    for ax in 0..ow {
                        for o in 0..oc {
                            let g = o / ocg;
                            let mut sum = 0f32;
                            for ft in 0..kt {
                                let Some(pt) = tap(0, at, ft, it) else {
                                    continue;
                                };
                                for fy in 0..kh {
                                    let Some(py) = tap(1, ay, fy, ih) else {
                                        continue;
                                    };
                                    for fx in 0..kw {
                                        let Some(px) = tap(2, ax, fx, iw) else {
                                            continue;
                                        };
                                        let si =
                                            (((b * it + pt) * ih + py) * iw + px) * ic + g * cg;
                                        let fi = (((o * kt + ft) * kh + fy) * kw + fx) * cg;
                                        for c in 0..cg {
                                            sum = src[(si + c) as usize]
                                                .mul_add(filt[(fi + c) as usize], sum);
                                        }
                                    }
                                }
                            }
                            let i = (((b * ot + at) * oh + ay) * ow + ax) * oc + o;
                            out[i as usize] = sum + bias[o as usize];
                        }
                    }
                }
            }
        }
    });
    x.put_f32s("Dest", &out)
}

/// `convtranspose` in gather form, in the C kernel's order: per output,
/// over (kh, kw, input channel of its group) from 0.0, then the bias.
fn conv_transpose(x: &mut Exec) -> R {
    let (d, s, f) = (x.ty("Dest")?, x.ty("Src")?, x.ty("Filter")?);
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let group = x.m().get(m::GROUP)?.max(1) as u64;
    let (src, filt, bias) = (x.f32s("Src")?, x.f32s("Filter")?, x.f32s("Bias")?);
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, oc, oh, ow] = win.nchw_of(&d.dims);
    let (cg, ocg) = (ch / group, f.dims[3]);
    let [kh, kw] = win.kernels;
    // The input position a tap reads, if the tap lands on this output.
    let source = |out: u64, k: u64, a: usize, lim: u64| -> Option<u64> {
        let full = out as i64 + win.pads[a] as i64 - (k * win.dilation[a]) as i64;
        let st = win.strides[a] as i64;
        if full < 0 || full % st != 0 {
            return None;
        }
        let i = (full / st) as u64;
        (i < lim).then_some(i)
    };
    let mut out = x.scratch(d.size() as usize, 0f32)?;
    with_fma!({
        for b in 0..n {
            for oy in 0..oh {
                for ox in 0..ow {
                    for o in 0..oc {
                        let (g, og) = (o / ocg, o % ocg);
                        let mut sum = 0f32;
                        for ky in 0..kh {
                            let Some(iy) = source(oy, ky, 0, h) else {
                                continue;
                            };
                            for kx in 0..kw {
                                let Some(ix) = source(ox, kx, 1, w) else {
                                    continue;
                                };
                                for ci in 0..cg {
                                    let ic = g * cg + ci;
                                    let si = b * h * w * ch + iy * w * ch + ix * ch + ic;
                                    let fi = ic * kh * kw * ocg + ky * kw * ocg + kx * ocg + og;
                                    sum = src[si as usize].mul_add(filt[fi as usize], sum);
                                }
                            }
                        }
                        out[(b * oh * ow * oc + oy * ow * oc + ox * oc + o) as usize] =
                            sum + bias[o as usize];
                    }
                }
            }
        }
    });
    x.put_f32s("Dest", &out)
}

/// Calls `body(kh, kw, ih, iw)` for every window position inside the input.
pub(super) fn for_window(
    win: &Window,
    oh: u64,
    ow: u64,
    h: u64,
    w: u64,
    mut body: impl FnMut(u64, u64, u64, u64),
) {
    for a in 0..win.kernels[0] {
        let ih = (oh * win.strides[0] + a * win.dilation[0]) as i64 - win.pads[0] as i64;
        if ih < 0 || ih >= h as i64 {
            continue;
        }
        for r in 0..win.kernels[1] {
            let iw = (ow * win.strides[1] + r * win.dilation[1]) as i64 - win.pads[1] as i64;
            if iw < 0 || iw >= w as i64 {
                continue;
            }
            body(a, r, ih as u64, iw as u64);
        }
    }
}

fn pool(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let is_max = x.opcode() == Opcode::MaxPool;
    let include = x.inst.get(m::COUNT_INCLUDE_PADS).unwrap_or(true);
    let src = x.f32s("Src")?;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    let (ss, ds) = (win.act_strides(&s.dims), win.act_strides(&d.dims));
    let at = |st: [u64; 4], i: [u64; 4]| (0..4).map(|k| st[k] * i[k]).sum::<u64>() as usize;
    let area = (win.kernels[0] * win.kernels[1]) as f32;
    let mut out = x.scratch(d.size() as usize, 0f32)?;
    for b in 0..n {
        for y in 0..oh {
            for xx in 0..ow {
                for c in 0..ch {
                    let (mut acc, mut first, mut cnt) = (0f32, true, 0u64);
                    for_window(&win, y, xx, h, w, |_, _, p, q| {
                        let v = src[at(ss, [b, c, p, q])];
                        if is_max {
                            if first || v > acc {
                                acc = v;
                                first = false;
                            }
                        } else {
                            acc += v;
                            cnt += 1;
                        }
                    });
                    out[at(ds, [b, c, y, xx])] = if is_max {
                        acc
                    } else if include {
                        acc / area
                    } else if cnt > 0 {
                        acc / cnt as f32
                    } else {
                        0.0
                    };
                }
            }
        }
    }
    x.put_f32s("Dest", &out)
}
