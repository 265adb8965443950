//! Pools the 2-D instructions reach only by composition: 3-D MaxPool and
//! AveragePool, LpPool (1-D to 3-D), and AveragePool with `ceil_mode` and
//! `count_include_pad` together. The input is brought channels-last.
//!
//! A 3-D window is separable: the pool over (h, w) of every depth slice,
//! then the pool over depth of the result (viewed as `N x D x OH*OW x C`).
//! Max is exact that way; the average divides by the per-axis counts, whose
//! product is the 3-D count, so it is the same mean (rounded twice).
//! LpPool is `(sum |x|^p)^(1/p)`: `elementabs`, `elementpow`, a depthwise
//! `convolution` with a filter of ones for the window sum (zero padding
//! adds nothing), `elementpow` by `1/p`. MaxUnpool scatters the values to
//! their flat indices in a zero tensor of the inferred shape.

use super::window::{self, ints, AutoPad};
use super::{Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::member as m;
use glow_ir::{Opcode, Value};

/// One spatial axis of a window: kernel, stride, dilation, begin and end
/// pads, the extra end padding of `ceil_mode`, and the output extent.
#[derive(Clone, Copy, Debug)]
struct Axis {
    k: u64,
    s: u64,
    d: u64,
    pb: u64,
    pe: u64,
    ext: u64,
    out: u64,
}

/// Resolves kernel, strides, dilations, pads, auto_pad and ceil_mode per axis.
fn axes(l: &Lowerer, attrs: &Attrs, input: &[u64]) -> Result<Vec<Axis>> {
    let nd = input.len();
    let kernel = match attrs.ints("kernel_shape") {
        Some(_) => window::per_axis(l, attrs, "kernel_shape", nd, 1, 1)?,
        None => return Err(l.err("missing `kernel_shape`")),
    };
    let s = window::per_axis(l, attrs, "strides", nd, 1, 1)?;
    let d = window::per_axis(l, attrs, "dilations", nd, 1, 1)?;
    let pads = window::pads(l, attrs, nd)?.unwrap_or_else(|| vec![0; 2 * nd]);
    let auto = AutoPad::read(l, attrs)?;
    let ceil = attrs.int("ceil_mode", 0) != 0;
    let mut out = Vec::with_capacity(nd);
    for i in 0..nd {
        let eff = (kernel[i] - 1) * d[i] + 1;
        let (pb, pe) = auto.pads((pads[i], pads[i + nd]), input[i], s[i], eff);
        let padded = input[i] + pb + pe;
        if padded < eff {
            return Err(l.err(format!(
                "kernel {eff} is larger than the padded input {padded}"
            )));
        }
        let (mut o, mut ext) = ((padded - eff) / s[i] + 1, 0);
        if ceil {
            // The last window must start inside the input or its begin pad.
            o = (padded - eff).div_ceil(s[i]) + 1;
            if (o - 1) * s[i] >= input[i] + pb {
                o -= 1;
            }
            ext = ((o - 1) * s[i] + eff).saturating_sub(padded);
        }
        out.push(Axis {
            k: kernel[i],
            s: s[i],
            d: d[i],
            pb,
            pe,
            ext,
            out: o,
        });
    }
    Ok(out)
}

/// What one 2-D pass computes.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Max,
    Avg {
        include: bool,
    },
    /// The window sum (a depthwise convolution with ones).
    Sum,
}

/// One 2-D pass over `src` (`[n, h, w, c]`, NHWC) with the windows of axes
/// `a` (height) and `b` (width); `None` is a unit axis.
fn pass(
    l: &mut Lowerer,
    base: &str,
    kind: Kind,
    src: Value,
    dims: [u64; 4],
    a: Option<Axis>,
    b: Option<Axis>,
) -> (Value, [u64; 4]) {
    let unit = Axis {
        k: 1,
        s: 1,
        d: 1,
        pb: 0,
        pe: 0,
        ext: 0,
        out: 1,
    };
    let (ah, aw) = (
        a.unwrap_or(Axis {
            out: dims[1],
            ..unit
        }),
        b.unwrap_or(Axis {
            out: dims[2],
            ..unit
        }),
    );
    let [n, _, _, c] = dims;
    let od = [n, ah.out, aw.out, c];
    let dest = l.alloc(base, &od);
    let mut members = vec![
        m::KERNELS.to(ints(&[ah.k, aw.k])),
        m::STRIDES.to(ints(&[ah.s, aw.s])),
        m::PADS.to(ints(&[ah.pb, aw.pb, ah.pe + ah.ext, aw.pe + aw.ext])),
    ];
    let dil = [ah.d, aw.d];
    match kind {
        Kind::Sum => {
            let ones = Tensor::f32(
                vec![c, ah.k, aw.k, 1],
                vec![1.0; (c * ah.k * aw.k) as usize],
            );
            let filter = l.const_weight(&format!("{base}.ones"), &ones);
            let zeros = Tensor::f32(vec![c], vec![0.0; c as usize]);
            let bias = l.const_weight(&format!("{base}.bias"), &zeros);
            members.push(m::GROUP.to(c as i64));
            members.push(m::DILATION.to(ints(&dil)));
            l.inst(
                base,
                Opcode::Convolution,
                &[dest, src, filter, bias],
                &members,
            );
        }
        Kind::Max | Kind::Avg { .. } => {
            let op = if let Kind::Avg { include } = kind {
                members.push(m::COUNT_INCLUDE_PADS.to(include));
                Opcode::AvgPool
            } else {
                Opcode::MaxPool
            };
            if dil != [1, 1] {
                members.push(m::DILATION.to(ints(&dil)));
            }
            l.inst(base, op, &[dest, src], &members);
        }
    }
    (dest, od)
}

/// `src` (channels-last `[n, spatial..., c]`) with its real pads written as
/// zeros, so an average that counts them can skip the `ceil_mode` extension.
fn zero_pad(
    l: &mut Lowerer,
    out: &str,
    src: Value,
    phys: &[u64],
    ax: &mut [Axis],
) -> (Value, Vec<u64>) {
    let mut dims = phys.to_vec();
    let mut offsets = vec![0i64; phys.len()];
    for (i, a) in ax.iter_mut().enumerate() {
        dims[i + 1] += a.pb + a.pe;
        offsets[i + 1] = a.pb as i64;
        *a = Axis { pb: 0, pe: 0, ..*a };
    }
    let padded = l.splat_buffer(&format!("{out}.padded"), &dims, 0.0);
    l.inst(
        &format!("{out}.pad"),
        Opcode::InsertTensor,
        &[padded, src],
        &[m::OFFSETS.to(offsets)],
    );
    (padded, dims)
}

/// The window passes over a channels-last `[n, spatial..., c]` buffer.
fn separable(
    l: &mut Lowerer,
    out: &str,
    kind: Kind,
    src: Value,
    phys: &[u64],
    ax: &[Axis],
) -> Value {
    let (n, c) = (phys[0], phys[phys.len() - 1]);
    match ax {
        [w] => {
            let v = l.view(&format!("{out}.2d"), src, &[n, 1, phys[1], c]);
            pass(l, out, kind, v, [n, 1, phys[1], c], None, Some(*w)).0
        }
        [h, w] => {
            pass(
                l,
                out,
                kind,
                src,
                [n, phys[1], phys[2], c],
                Some(*h),
                Some(*w),
            )
            .0
        }
        [d, h, w] => {
            let dims = [n * phys[1], phys[2], phys[3], c];
            let v = l.view(&format!("{out}.hw"), src, &dims);
            let (hw, [_, oh, ow, _]) =
                pass(l, &format!("{out}.hw"), kind, v, dims, Some(*h), Some(*w));
            let dims = [n, phys[1], oh * ow, c];
            let v = l.view(&format!("{out}.d"), hw, &dims);
            pass(l, out, kind, v, dims, Some(*d), None).0
        }
        _ => unreachable!("callers pass 1 to 3 axes"),
    }
}

/// Whether a MaxPool or AveragePool takes the composed lowering: a 3-D
/// window, or an average counting pads in `ceil_mode`.
pub(super) fn composed(l: &Lowerer, node: &NodeProto) -> Result<bool> {
    let rank = match l.input(node, 0)? {
        Val::Const { t, .. } => t.dims.len(),
        Val::Act(a) => a.dims.len(),
    };
    let attrs = Attrs(&node.attribute);
    let avg_ceil = node.op_type == "AveragePool"
        && attrs.int("count_include_pad", 0) != 0
        && attrs.int("ceil_mode", 0) != 0;
    Ok(rank == 5 || avg_ceil)
}

/// MaxPool and AveragePool through the separable passes.
pub(super) fn pool(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let max = node.op_type == "MaxPool";
    let attrs = Attrs(&node.attribute);
    let include = attrs.int("count_include_pad", 0) != 0;
    let kind = if max {
        Kind::Max
    } else {
        Kind::Avg { include }
    };
    lower(l, node, kind, None)
}

/// LpPool: `(sum over the window of |x|^p)^(1/p)`.
pub(super) fn lp_pool(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let p = Attrs(&node.attribute).int("p", 2);
    if !(1..=64).contains(&p) {
        return Err(l.unsupported(format!("LpPool with p = {p} (only 1 to 64)")));
    }
    lower(l, node, Kind::Sum, Some(p as f64))
}

fn lower(l: &mut Lowerer, node: &NodeProto, kind: Kind, p: Option<f64>) -> Result<Vec<Val>> {
    if node.output.get(1).is_some_and(|o| !o.is_empty()) {
        return Err(l.unsupported("the Indices output of MaxPool"));
    }
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let a = l.act(&x);
    let r = a.dims.len();
    if !(3..=5).contains(&r) {
        return Err(l.unsupported(format!(
            "{} on a {}-D input {:?} (only 1-D to 3-D)",
            node.op_type,
            r.saturating_sub(2),
            a.dims
        )));
    }
    let attrs = Attrs(&node.attribute);
    let mut ax = axes(l, &attrs, &a.dims[2..])?;
    let a = l.to_cl(&a, &out);
    let phys = a.phys();
    let mut src = a.v;
    let mut dims_in = phys.clone();
    let mut kind = kind;
    if let Some(p) = p {
        let abs = l.alloc(&format!("{out}.abs"), &phys);
        l.inst(&format!("{out}.abs"), Opcode::ElementAbs, &[abs, src], &[]);
        src = pow(l, &format!("{out}.pow"), abs, &phys, p);
    }
    if kind == (Kind::Avg { include: true }) && ax.iter().any(|a| a.ext > 0) {
        // The extension is not counted, the real pads are: make them data.
        (src, dims_in) = zero_pad(l, &out, src, &phys, &mut ax);
        kind = Kind::Avg { include: false };
    }
    let mut v = separable(l, &out, kind, src, &dims_in, &ax);
    let mut odims = vec![phys[0]];
    odims.extend(ax.iter().map(|a| a.out));
    odims.push(phys[phys.len() - 1]);
    if ax.len() != 2 {
        v = l.view(&format!("{out}.nd"), v, &odims);
    }
    if let Some(p) = p {
        v = pow(l, &format!("{out}.root"), v, &odims, 1.0 / p);
    }
    let mut dims = vec![a.dims[0], a.dims[1]];
    dims.extend(ax.iter().map(|a| a.out));
    Ok(vec![Val::Act(Act { v, dims, cl: true })])
}

/// `src` (IR dims `dims`) to the power `e`, element by element.
fn pow(l: &mut Lowerer, base: &str, src: Value, dims: &[u64], e: f64) -> Value {
    let rhs = l.splat_buffer(&format!("{base}.exp"), dims, e);
    let dest = l.alloc(base, dims);
    l.inst(base, Opcode::ElementPow, &[dest, src, rhs], &[]);
    dest
}

/// MaxUnpool: `scatterelements` of X to the flat indices (MaxPool's
/// `Indices`, over the whole output) in zeros of the inferred shape
/// `(in - 1) * stride - pads + kernel`, then zeros after it up to a
/// constant `output_shape`. Indices out of range skip their value.
pub(super) fn max_unpool(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    use super::compose::{attr_int, base_of, with};
    let attrs = Attrs(&node.attribute);
    let xd = super::dims_of(&l.input(node, 0)?);
    let id = super::dims_of(&l.input(node, 1)?);
    if let Val::Act(a) = l.input(node, 0)? {
        if l.kind(&a) != glow_ir::ElemKind::Float {
            return Err(l.unsupported(format!("MaxUnpool of a run-time {} tensor", l.kind(&a))));
        }
    }
    let nd = xd.len().saturating_sub(2);
    if nd == 0 || id != xd {
        return Err(l.err(format!("X {xd:?} and I {id:?} are not [N, C, D...] alike")));
    }
    let kernel = window::per_axis(l, &attrs, "kernel_shape", nd, 0, 1)?;
    if !attrs.has("kernel_shape") {
        return Err(l.err("MaxUnpool without kernel_shape"));
    }
    let strides = window::per_axis(l, &attrs, "strides", nd, 1, 1)?;
    let pads = window::pads(l, &attrs, nd)?.unwrap_or_else(|| vec![0; 2 * nd]);
    if xd.contains(&0) {
        return Err(l.unsupported("MaxUnpool of an empty tensor"));
    }
    let mut dims = xd[..2].to_vec();
    for a in 0..nd {
        // Each factor is below 2^31 (the tensor and window limits), so this fits.
        let full = (xd[a + 2] - 1) * strides[a] + kernel[a];
        let cut = pads[a] + pads[a + nd];
        if cut >= full {
            return Err(l.err(format!("pads {pads:?} leave no output on axis {a}")));
        }
        dims.push(full - cut);
    }
    let wanted = match l.opt_input(node, 2)? {
        Some(_) => {
            let t = l.const_input(node, 2)?.to_i64();
            let ok = t.len() == dims.len() && t.iter().zip(&dims).all(|(&w, &d)| w >= d as i64);
            if !ok {
                return Err(l.err(format!(
                    "output_shape {t:?} is not at least the inferred {dims:?}"
                )));
            }
            Some(t)
        }
        None => None,
    };
    l.reserve_dims(&node.output.first().cloned().unwrap_or_default(), &dims)?;
    let total: u64 = dims.iter().product();
    let (x, i) = (node.input[0].as_str(), node.input[1].as_str());
    let base = base_of(node);
    let y = with(l, &base, |c| {
        let zeros = c.konst("zeros", Tensor::f32(vec![total], vec![0.0; total as usize]));
        let n: u64 = xd.iter().product();
        let xf = c.reshape(x, &[n])?;
        let idx = c.op("Cast", &[i], vec![attr_int("to", 7)])?;
        let idx = c.reshape(&idx, &[n])?;
        let flat = c.op(
            "ScatterElements",
            &[&zeros, &idx, &xf],
            vec![attr_int("axis", 0)],
        )?;
        let y = c.reshape(&flat, &dims)?;
        match &wanted {
            Some(w) => {
                let mut p = vec![0i64; dims.len()];
                p.extend(w.iter().zip(&dims).map(|(&w, &d)| w - d as i64));
                let p = c.ints(&p);
                c.op("Pad", &[&y, &p], vec![])
            }
            None => Ok(y),
        }
    })?;
    Ok(vec![l.vals[&y].clone()])
}

/// MaxPool of a run-time int8 or uint8 tensor: in float and back, exact
/// (every such value is a float, and a maximum picks one of them); `None`
/// for a float input. Other kinds are unsupported.
pub(super) fn small_int_max_pool(l: &mut Lowerer, node: &NodeProto) -> Result<Option<Vec<Val>>> {
    use super::compose::{attr_int, base_of, with};
    let Val::Act(a) = l.input(node, 0)? else {
        return Ok(None);
    };
    let to = match l.kind(&a) {
        glow_ir::ElemKind::Float => return Ok(None),
        glow_ir::ElemKind::UInt8 => 2,
        glow_ir::ElemKind::Int8 => 3,
        other => {
            return Err(l.unsupported(format!(
                "a run-time {other} tensor (`{}`) as input 0 of MaxPool",
                node.input[0]
            )))
        }
    };
    if node.output.get(1).is_some_and(|o| !o.is_empty()) {
        return Err(l.unsupported("the Indices output of MaxPool"));
    }
    let base = base_of(node);
    let x = node.input[0].as_str();
    let y = with(l, &base, |c| {
        let f = c.op("Cast", &[x], vec![attr_int("to", 1)])?;
        let p = c.op("MaxPool", &[&f], node.attribute.clone())?;
        c.op("Cast", &[&p], vec![attr_int("to", to)])
    })?;
    Ok(Some(vec![l.vals[&y].clone()]))
}
