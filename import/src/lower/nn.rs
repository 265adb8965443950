//! Spatial and normalization ops: Conv, MaxPool, AveragePool,
//! GlobalAveragePool, GlobalMaxPool, BatchNormalization, LRN. 1-D forms
//! (`N x C x L`) run as 2-D with height 1. In the default NHWC mode inputs
//! are brought channels-last and filters permuted at import time to
//! `OutC x KH x KW x C/G`; in NCHW mode the instructions carry `Layout: NCHW`.

use super::window::{self, ints, AutoPad};
use super::{layout_is_nchw, Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;
use glow_ir::member as m;
use glow_ir::{Opcode, Value};

/// Window attributes resolved to 2-D: kernel, strides, pads (t, l, b, r), dilation.
pub(super) struct Window {
    pub k: [u64; 2],
    pub s: [u64; 2],
    pub pads: [u64; 4],
    pub d: [u64; 2],
}

/// A spatial input viewed as 4-D in the instruction layout.
pub(super) struct Spatial {
    pub v: Value,
    /// Logical N, C, H, W.
    pub n: u64,
    pub c: u64,
    pub h: u64,
    pub w: u64,
    pub one_d: bool,
    pub nchw: bool,
}

fn spatial_input(l: &mut Lowerer, node: &NodeProto, out: &str) -> Result<Spatial> {
    let x = l.input(node, 0)?;
    let a = l.act(&x);
    spatial_act(l, a, out)
}

/// A spatial activation (of any element kind) in the instruction layout.
pub(super) fn spatial_act(l: &mut Lowerer, a: Act, out: &str) -> Result<Spatial> {
    let r = a.dims.len();
    if r != 3 && r != 4 {
        return Err(l.unsupported(format!(
            "{}-D input {:?} (only 1-D and 2-D spatial ops are lowered)",
            r.saturating_sub(2),
            a.dims
        )));
    }
    let nchw = layout_is_nchw(l);
    let a = if nchw {
        l.to_plain(&a, out)
    } else {
        l.to_cl(&a, out)
    };
    let (n, c) = (a.dims[0], a.dims[1]);
    let (h, w) = if r == 3 {
        (1, a.dims[2])
    } else {
        (a.dims[2], a.dims[3])
    };
    let v = if r == 3 {
        let dims = if nchw { [n, c, h, w] } else { [n, h, w, c] };
        l.view(&format!("{out}.2d"), a.v, &dims)
    } else {
        a.v
    };
    Ok(Spatial {
        v,
        n,
        c,
        h,
        w,
        one_d: r == 3,
        nchw,
    })
}

impl Spatial {
    pub fn dims(&self, c: u64, h: u64, w: u64) -> Vec<u64> {
        if self.nchw {
            vec![self.n, c, h, w]
        } else {
            vec![self.n, h, w, c]
        }
    }
    /// The output activation for a 4-D result buffer `v` of (c, h, w).
    pub fn output(&self, l: &mut Lowerer, v: Value, c: u64, h: u64, w: u64, out: &str) -> Val {
        if !self.one_d {
            return Val::Act(Act {
                v,
                dims: vec![self.n, c, h, w],
                cl: !self.nchw,
            });
        }
        let phys = if self.nchw {
            vec![self.n, c, w]
        } else {
            vec![self.n, w, c]
        };
        let v = l.view(&format!("{out}.1d"), v, &phys);
        Val::Act(Act {
            v,
            dims: vec![self.n, c, w],
            cl: !self.nchw,
        })
    }
    pub fn layout(&self) -> &'static str {
        if self.nchw {
            "NCHW"
        } else {
            "NHWC"
        }
    }
}

/// Reads kernel/strides/pads/dilations/auto_pad for a 1-D or 2-D window.
pub(super) fn window(l: &Lowerer, attrs: &Attrs, x: &Spatial, kernel: &[u64]) -> Result<Window> {
    let nd = kernel.len();
    let s = window::per_axis(l, attrs, "strides", nd, 1, 1)?;
    let d = window::per_axis(l, attrs, "dilations", nd, 1, 1)?;
    let max = glow_ir::limits::MAX_TENSOR_BYTES;
    if let Some(x) = kernel.iter().find(|&&x| x > max) {
        return Err(l.err(format!("`kernel` value {x} is above the limit of {max}")));
    }
    let given = window::pads(l, attrs, nd)?.unwrap_or_else(|| vec![0; 2 * nd]);
    let inputs: Vec<u64> = if nd == 1 { vec![x.w] } else { vec![x.h, x.w] };
    let auto = AutoPad::read(l, attrs)?;
    let mut pads = vec![0; 2 * nd];
    for i in 0..nd {
        let eff = (kernel[i] - 1) * d[i] + 1;
        (pads[i], pads[i + nd]) = auto.pads((given[i], given[i + nd]), inputs[i], s[i], eff);
    }
    // 1-D windows run as 2-D with a height-1 kernel.
    Ok(if nd == 1 {
        Window {
            k: [1, kernel[0]],
            s: [1, s[0]],
            pads: [0, pads[0], 0, pads[1]],
            d: [1, d[0]],
        }
    } else {
        Window {
            k: [kernel[0], kernel[1]],
            s: [s[0], s[1]],
            pads: [pads[0], pads[1], pads[2], pads[3]],
            d: [d[0], d[1]],
        }
    })
}

/// The bias of a convolution (input 2) as a `[oc]` buffer: a run-time
/// tensor viewed flat, a constant weight, or zeros named after the filter.
pub(super) fn conv_bias(
    l: &mut Lowerer,
    node: &NodeProto,
    out: &str,
    wname: &str,
    oc: u64,
) -> Result<Value> {
    Ok(match l.opt_input(node, 2)? {
        Some(Val::Act(b)) => {
            if b.dims.iter().product::<u64>() != oc {
                return Err(l.err(format!("bias dims {:?} for {oc} channels", b.dims)));
            }
            let p = l.to_plain(&b, out);
            l.view(&format!("{}.1d", node.input[2]), p.v, &[oc])
        }
        Some(Val::Const { t: b, .. }) => {
            if b.len() as u64 != oc {
                return Err(l.err(format!("bias has {} values for {oc} channels", b.len())));
            }
            l.const_weight(&node.input[2], &b.reshaped(vec![oc]))
        }
        None => l.const_weight(
            &format!("{wname}.bias"),
            &Tensor::f32(vec![oc], vec![0.0; oc as usize]),
        ),
    })
}

/// Output height and width of `win` over `x`.
pub(super) fn out_hw(l: &Lowerer, x: &Spatial, win: &Window) -> Result<(u64, u64)> {
    let axis = |i: usize, n: u64| {
        let (k, s, d) = (win.k[i], win.s[i], win.d[i]);
        out_size(l, n, k, s, win.pads[i], win.pads[i + 2], d)
    };
    Ok((axis(0, x.h)?, axis(1, x.w)?))
}

/// Output size along one axis, or an error when the window does not fit.
fn out_size(l: &Lowerer, input: u64, k: u64, s: u64, pb: u64, pe: u64, d: u64) -> Result<u64> {
    let eff = (k - 1) * d + 1;
    let padded = input + pb + pe;
    if padded < eff {
        return Err(l.err(format!(
            "kernel {eff} is larger than the padded input {padded}"
        )));
    }
    Ok((padded - eff) / s + 1)
}

pub(super) fn conv(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let x = spatial_input(l, node, &out)?;
    let attrs = Attrs(&node.attribute);
    // The filter is a constant (permuted at import time) or an activation
    // (a graph input or computed: transposed by an instruction).
    let wval = l.input(node, 1)?;
    let wdims = match &wval {
        Val::Const { t, .. } => t.dims.clone(),
        Val::Act(a) => a.dims.clone(),
    };
    let wname = node.input[1].clone();
    let group = attrs.int("group", 1);
    let nd = if x.one_d { 1 } else { 2 };
    if wdims.len() != nd + 2 || group < 1 {
        return Err(l.err(format!("filter dims {wdims:?} / group {group} do not fit")));
    }
    let group = group as u64;
    let (oc, icg) = (wdims[0], wdims[1]);
    if icg * group != x.c || oc % group != 0 {
        return Err(l.err(format!(
            "filter {wdims:?} with group {group} does not fit {} input channels",
            x.c
        )));
    }
    let kernel = wdims[2..].to_vec();
    let win = window(l, &attrs, &x, &kernel)?;
    let oihw = [oc, icg, win.k[0], win.k[1]];
    let filter = match &wval {
        // Filter: OIHW (ONNX) -> OHWI (NHWC) at import time.
        Val::Const { t, .. } => {
            let w4 = t.reshaped(oihw.to_vec());
            let w4 = if x.nchw {
                w4
            } else {
                w4.permuted(&[0, 2, 3, 1])
            };
            l.const_weight(&wname, &w4)
        }
        Val::Act(a) => {
            let p = l.to_plain(a, &out);
            let v = l.view(&format!("{wname}.oihw"), p.v, &oihw);
            if x.nchw {
                v
            } else {
                let ohwi = [oc, win.k[0], win.k[1], icg];
                let t = l.alloc(&format!("{wname}.ohwi"), &ohwi);
                l.transpose(&wname, t, v, vec![0, 2, 3, 1]);
                t
            }
        }
    };
    let bias = conv_bias(l, node, &out, &wname, oc)?;
    let (oh, ow) = out_hw(l, &x, &win)?;
    let dest = l.alloc(&out, &x.dims(oc, oh, ow));
    let members = [
        m::KERNELS.to(ints(&win.k)),
        m::STRIDES.to(ints(&win.s)),
        m::PADS.to(ints(&win.pads)),
        m::GROUP.to(group as i64),
        m::DILATION.to(ints(&win.d)),
        m::LAYOUT.to(x.layout()),
    ];
    let base = node_base(node, &out);
    l.inst(
        &base,
        Opcode::Convolution,
        &[dest, x.v, filter, bias],
        &members,
    );
    Ok(vec![x.output(l, dest, oc, oh, ow, &out)])
}

pub(super) fn node_base(node: &NodeProto, out: &str) -> String {
    if node.name.is_empty() {
        out.to_string()
    } else {
        node.name.clone()
    }
}

/// MaxPool, AveragePool and their global forms.
pub(super) fn pool(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    if node.output.len() > 1 && node.output.get(1).is_some_and(|o| !o.is_empty()) {
        return Err(l.unsupported("the Indices output of MaxPool"));
    }
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let a = l.act(&x);
    pool_of(l, node, a, &out, glow_ir::ElemKind::Float)
}

/// A pool of activation `a` into a buffer of `kind` named `out` (float, or
/// a quantized kind for the QDQ fold).
pub(super) fn pool_of(
    l: &mut Lowerer,
    node: &NodeProto,
    a: Act,
    out: &str,
    kind: glow_ir::ElemKind,
) -> Result<Vec<Val>> {
    let out = out.to_string();
    let x = spatial_act(l, a, &out)?;
    let attrs = Attrs(&node.attribute);
    let global = node.op_type.starts_with("Global");
    let max = node.op_type.ends_with("MaxPool");
    let (win, oh, ow) = if global {
        let win = Window {
            k: [x.h, x.w],
            s: [1, 1],
            pads: [0; 4],
            d: [1, 1],
        };
        (win, 1, 1)
    } else {
        let kernel: Vec<u64> = attrs
            .ints("kernel_shape")
            .unwrap_or(&[])
            .iter()
            .map(|&k| u64::try_from(k).unwrap_or(0))
            .collect();
        let nd = if x.one_d { 1 } else { 2 };
        if kernel.len() != nd || kernel.contains(&0) {
            return Err(l.err(format!("bad kernel_shape {kernel:?}")));
        }
        let mut win = window(l, &attrs, &x, &kernel)?;
        let (mut oh, mut ow) = out_hw(l, &x, &win)?;
        if attrs.int("ceil_mode", 0) != 0 {
            // Ceil mode: grow the end pads so the floor rule gives the ceil size.
            oh = ceil_extend(x.h, &mut win, 0);
            ow = ceil_extend(x.w, &mut win, 1);
        }
        (win, oh, ow)
    };
    let dest = l.alloc_kind(&out, &x.dims(x.c, oh, ow), kind);
    let mut members = vec![
        m::KERNELS.to(ints(&win.k)),
        m::STRIDES.to(ints(&win.s)),
        m::PADS.to(ints(&win.pads)),
        m::LAYOUT.to(x.layout()),
    ];
    let op = if max {
        Opcode::MaxPool
    } else {
        let include = attrs.int("count_include_pad", 0) != 0;
        members.push(m::COUNT_INCLUDE_PADS.to(include));
        Opcode::AvgPool
    };
    if win.d != [1, 1] {
        members.push(m::DILATION.to(ints(&win.d)));
    }
    let base = node_base(node, &out);
    l.inst(&base, op, &[dest, x.v], &members);
    Ok(vec![x.output(l, dest, x.c, oh, ow, &out)])
}

/// Ceil-mode output size along axis `a`; extends the end pad to match. The
/// last window must start inside the input or its begin padding (ONNX rule).
fn ceil_extend(input: u64, win: &mut Window, a: usize) -> u64 {
    let (s, pb, pe) = (win.s[a], win.pads[a], win.pads[a + 2]);
    // The dilated window's extent.
    let k = (win.k[a] - 1) * win.d[a] + 1;
    let span = (input + pb + pe).saturating_sub(k);
    let mut out = span.div_ceil(s) + 1;
    if (out - 1) * s >= input + pb {
        out -= 1;
    }
    let need = ((out - 1) * s + k).saturating_sub(input + pb);
    win.pads[a + 2] = need.max(pe);
    out
}

/// BatchNormalization (inference form; training outputs are not produced).
pub(super) fn batchnorm(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    if l.opset >= 14 && Attrs(&node.attribute).int("training_mode", 0) != 0 {
        return super::compose::batchnorm_training(l, node);
    }
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let a = l.act(&x);
    if a.dims.len() < 2 {
        return Err(l.err(format!("input {:?} has no channel axis", a.dims)));
    }
    let c = a.dims[1];
    let attrs = Attrs(&node.attribute);
    let mut params = Vec::new();
    for i in 1..5 {
        let t = l.input(node, i)?;
        let pa = l.act(&t);
        if pa.dims.iter().product::<u64>() != c {
            return Err(l.err(format!("input {i} has dims {:?}, expected [{c}]", pa.dims)));
        }
        params.push(if pa.dims == [c] {
            pa.v
        } else {
            l.view(&format!("{out}.param"), pa.v, &[c])
        });
    }
    let phys = a.phys();
    let ch = if a.cl { phys.len() - 1 } else { 1 };
    let dest = l.alloc(&out, &phys);
    let members = [
        m::CHANNEL_IDX.to(ch as i64),
        m::EPSILON.to(attrs.float("epsilon", 1e-5) as f64),
        m::MOMENTUM.to(attrs.float("momentum", 0.9) as f64),
    ];
    let ops = [dest, a.v, params[0], params[1], params[2], params[3]];
    l.inst(
        &node_base(node, &out),
        Opcode::BatchNormalization,
        &ops,
        &members,
    );
    Ok(vec![Val::Act(Act {
        v: dest,
        dims: a.dims,
        cl: a.cl,
    })])
}

/// LRN across channels; the instruction normalizes over the last dim, so the
/// input is brought channels-last whatever the layout mode.
pub(super) fn lrn(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let a = l.act(&x);
    if a.dims.len() < 3 {
        return Err(l.err(format!("input {:?} must have spatial dims", a.dims)));
    }
    let a = l.to_cl(&a, &out);
    let attrs = Attrs(&node.attribute);
    let size = attrs.int("size", 0);
    if size < 1 || size % 2 == 0 {
        return Err(l.unsupported(format!("LRN size {size} (only odd sizes are lowered)")));
    }
    let phys = a.phys();
    let dest = l.alloc(&out, &phys);
    let scale = l.alloc(&format!("{out}.scale"), &phys);
    // ONNX scales alpha by 1/size; so does the instruction (by the window).
    let members = [
        m::HALF_WINDOW_SIZE.to((size - 1) / 2),
        m::ALPHA.to(attrs.float("alpha", 1e-4) as f64),
        m::BETA.to(attrs.float("beta", 0.75) as f64),
        m::K.to(attrs.float("bias", 1.0) as f64),
    ];
    let base = node_base(node, &out);
    l.inst(
        &base,
        Opcode::LocalResponseNormalization,
        &[dest, a.v, scale],
        &members,
    );
    Ok(vec![Val::Act(Act {
        v: dest,
        dims: a.dims,
        cl: true,
    })])
}
