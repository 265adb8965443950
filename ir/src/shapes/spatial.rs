//! Shape rules of the spatial opcodes: `convolution`, `convtranspose`,
//! `maxpool`, `avgpool`. NHWC activations are `N x H x W x C`, NCHW ones
//! `N x C x H x W`; filters are `OutC x KH x KW x C/Group` (NHWC) or
//! `OutC x C/Group x KH x KW` (NCHW); a `convtranspose` filter (NHWC only)
//! is `C x KH x KW x OutC/Group`.

use super::*;
use crate::member as m;

/// The window members of a spatial opcode, checked for sanity.
struct Window {
    kernels: [i128; 2],
    strides: [i128; 2],
    /// top, left, bottom, right
    pads: [i128; 4],
    dilation: [i128; 2],
}

impl Window {
    /// `None` when a member is malformed (the verifier reported it).
    fn read(ctx: &ShapeCtx) -> Option<Window> {
        let dilation = match ctx.inst.get(m::DILATION) {
            Some(_) => pair(ctx, m::DILATION)?,
            None => [1, 1],
        };
        Some(Window {
            kernels: pair(ctx, m::KERNELS)?,
            strides: pair(ctx, m::STRIDES)?,
            pads: pads(ctx)?,
            dilation,
        })
    }

    /// Output size along axis `a` (0 = height, 1 = width) for input `input`,
    /// or an error when the dilated kernel does not fit the padded input.
    fn out_dim(&self, a: usize, input: u64) -> Result<u64, ShapeError> {
        let padded = input as i128 + self.pads[a] + self.pads[a + 2];
        let eff = (self.kernels[a] - 1) * self.dilation[a] + 1;
        let axis = ["height", "width"][a];
        if padded < eff {
            return Err(ShapeError::at_member(
                "Kernels",
                format!(
                    "the kernel {} (dilated to {}) is larger than the padded input {} {}",
                    axis, eff, axis, padded
                ),
            ));
        }
        dim((padded - eff) / self.strides[a] + 1).ok_or_else(|| {
            ShapeError::at_member("Kernels", format!("the output {axis} is too large"))
        })
    }
}

/// Whether the layout member says NCHW (NHWC otherwise).
fn is_nchw(ctx: &ShapeCtx) -> bool {
    ctx.inst.get(m::LAYOUT) == Some("NCHW")
}

/// `(N, C, H, W)` of a 4-D activation in the instruction's layout.
fn nchw_of(dims: &[u64], nchw: bool) -> (u64, u64, u64, u64) {
    if nchw {
        (dims[0], dims[1], dims[2], dims[3])
    } else {
        (dims[0], dims[3], dims[1], dims[2])
    }
}

/// Dims of a 4-D activation from `(N, C, H, W)` in the given layout.
fn activation_dims(n: u64, c: u64, h: u64, w: u64, nchw: bool) -> Vec<u64> {
    if nchw {
        vec![n, c, h, w]
    } else {
        vec![n, h, w, c]
    }
}

/// `convolution @out Dest, @in Src, @in Filter, @in Bias`.
pub fn convolution(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let mut errs = Vec::new();
    conv_kinds(ctx, &mut errs);
    conv_geometry(ctx, is_nchw(ctx), [0, 1, 2, 3], &mut errs);
    // An optional residual is added to the result before the activation,
    // element by element in `Dest`'s row-major order.
    let (dest, residual) = (0, 4);
    if ctx.types.len() > residual {
        let (r, d) = (ctx.ty(residual), ctx.ty(dest));
        if r.elem != d.elem || r.size() != d.size() {
            errs.push(ShapeError::at_operand(
                residual,
                format!(
                    "`Residual` has type {r} but must have the element kind and element count of `Dest` ({d})"
                ),
            ));
        } else if d.elem.is_quantized() {
            errs.push(ShapeError::at_operand(
                residual,
                "a quantized `convolution` takes no `Residual` (add it with a quantized `elementadd`)",
            ));
        }
    }
    errs
}

/// `convolution3d @out Dest, @in Src, @in Filter, @in Bias { Kernels,
/// Strides, Pads, Group }` (Glow's Convolution3D): `Src [N, T, H, W, C]`,
/// `Filter [OC, KT, KH, KW, C/Group]`, `Bias [OC]`, `Dest [N, OT, OH, OW,
/// OC]` with `O = (I + pad before + pad after - K) / stride + 1` on each
/// axis; `Pads` is Glow's near, far, top, bottom, left, right. `Dest`,
/// `Src` and `Filter` share the base kind (float or quantized), and `Bias`
/// is of that family too.
pub fn convolution3d(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, filter, bias) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    if check_kind(ctx, src, Kinds::FloatOrQuantized, &mut errs) {
        let quantized = ctx.ty(src).elem.is_quantized();
        for k in [filter, dest] {
            check_same_elem(ctx, k, src, Same::Base, &mut errs);
        }
        let want = if quantized {
            Kinds::Quantized
        } else {
            Kinds::Float
        };
        check_kind(ctx, bias, want, &mut errs);
    }
    let mut ranks_ok = true;
    for (k, r) in [(src, 5), (filter, 5), (bias, 1), (dest, 5)] {
        ranks_ok &= check_rank(ctx, k, r, &mut errs);
    }
    let three = |v: Option<&[i64]>| match v {
        Some(&[a, b, c]) if a > 0 && b > 0 && c > 0 => Some([a as i128, b as i128, c as i128]),
        _ => None,
    };
    let (Some(kernels), Some(strides)) = (three(ctx.get(m::KERNELS)), three(ctx.get(m::STRIDES)))
    else {
        return errs;
    };
    let pads: [i128; 6] = match ctx.get(m::PADS) {
        Some(p) if p.len() == 6 && p.iter().all(|&x| x >= 0) => {
            std::array::from_fn(|i| p[i] as i128)
        }
        _ => return errs,
    };
    let Some(group) = ctx.get(m::GROUP).filter(|&g| g > 0) else {
        return errs;
    };
    if !ranks_ok {
        return errs;
    }
    let sd = &ctx.ty(src).dims;
    let (n, c) = (sd[0], sd[4]);
    let out_c = ctx.ty(filter).dims[0];
    let group = group as u64;
    let mut group_ok = true;
    if !c.is_multiple_of(group) {
        group_ok = false;
        errs.push(ShapeError::at_member(
            "Group",
            format!("`Group: {group}` does not divide the {c} input channels of `Src`"),
        ));
    }
    if !out_c.is_multiple_of(group) {
        group_ok = false;
        errs.push(ShapeError::at_member(
            "Group",
            format!("`Group: {group}` does not divide the {out_c} output channels of `Filter`"),
        ));
    }
    let [kt, kh, kw] = kernels.map(|k| k as u64);
    if group_ok {
        check_dims(
            ctx,
            filter,
            &[out_c, kt, kh, kw, c / group],
            "expects",
            &mut errs,
        );
    }
    check_dims(ctx, bias, &[out_c], "expects", &mut errs);
    let mut out = vec![n];
    for (a, axis) in ["temporal", "height", "width"].iter().enumerate() {
        let padded = sd[a + 1] as i128 + pads[2 * a] + pads[2 * a + 1];
        if padded < kernels[a] {
            errs.push(ShapeError::at_member(
                "Kernels",
                format!(
                    "the kernel {axis} {} is larger than the padded input {axis} {padded}",
                    kernels[a]
                ),
            ));
            return errs;
        }
        match dim((padded - kernels[a]) / strides[a] + 1) {
            Some(o) => out.push(o),
            None => {
                errs.push(ShapeError::at_member(
                    "Kernels",
                    format!("the output {axis} is too large"),
                ));
                return errs;
            }
        }
    }
    out.push(out_c);
    check_dims(ctx, dest, &out, "produces", &mut errs);
    errs
}

/// `channelwisequantizedconvolution @out Dest, @in Src, @in Filter, @in Bias,
/// @in FilterScales, @in FilterOffsets, @in BiasScales, @in BiasOffsets`
/// (NHWC): a quantized convolution whose filter and bias parameters are given
/// per output channel (the `Filter` and `Bias` types' own parameters are
/// ignored); the parameter operands are `float` / `index32` vectors of the
/// output channels, and the engines need them as constant weights.
pub fn channelwise_convolution(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, filter, bias) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    let mut ok = quant::compute(ctx, src, &mut errs);
    ok &= quant::compute(ctx, dest, &mut errs);
    if check_kind(ctx, filter, Kinds::Quantized, &mut errs)
        && !crate::quant::is_compute_kind(ctx.ty(filter).elem)
    {
        errs.push(ShapeError::at_operand(
            filter,
            format!(
                "`Filter` has element type {} but a quantized filter is `i8` or `ui8`",
                ctx.ty(filter).elem
            ),
        ));
    }
    if check_kind(ctx, bias, Kinds::Quantized, &mut errs)
        && !matches!(ctx.ty(bias).elem, ElemKind::Int32Q { .. })
    {
        errs.push(ShapeError::at_operand(
            bias,
            format!(
                "`Bias` has element type {} but a channel-wise bias is `i32`",
                ctx.ty(bias).elem
            ),
        ));
    }
    if let (true, Ok(out)) = (ok, crate::quant::QParams::of(ctx.ty(dest).elem)) {
        let (act, args) = ctx.inst.fused_activation();
        if let Err(e) = crate::quant::activation_clamp(act, args, out) {
            errs.push(ShapeError::at_member("FusedActivation", e));
        }
    }
    let out_c = ctx.ty(filter).dims.first().copied().unwrap_or(0);
    for (k, kinds) in [
        (4, Kinds::Float),
        (5, Kinds::Index),
        (6, Kinds::Float),
        (7, Kinds::Index),
    ] {
        if k >= ctx.types.len() {
            continue;
        }
        let kinds_ok = if kinds == Kinds::Index {
            let e = ctx.ty(k).elem;
            if e != ElemKind::Index32 {
                errs.push(ShapeError::at_operand(
                    k,
                    format!(
                        "`{}` has element type {e} but must be `index32`",
                        ctx.name(k)
                    ),
                ));
            }
            e == ElemKind::Index32
        } else {
            check_kind(ctx, k, Kinds::Float, &mut errs) && {
                let e = ctx.ty(k).elem;
                if e != ElemKind::Float {
                    errs.push(ShapeError::at_operand(
                        k,
                        format!("`{}` has element type {e} but must be `float`", ctx.name(k)),
                    ));
                }
                e == ElemKind::Float
            }
        };
        if kinds_ok && ctx.ty(filter).rank() == 4 {
            check_dims(ctx, k, &[out_c], "expects", &mut errs);
        }
    }
    conv_geometry(ctx, false, [0, 1, 2, 3], &mut errs);
    errs
}

/// The shapes of `Src`, `Filter`, `Bias` and `Dest` of a convolution, at
/// operands `[dest, src, filter, bias]` (a gradient has them elsewhere).
pub(super) fn conv_geometry(
    ctx: &ShapeCtx,
    nchw: bool,
    [dest, src, filter, bias]: [usize; 4],
    errs: &mut Vec<ShapeError>,
) {
    let ranks = [(src, 4), (filter, 4), (bias, 1), (dest, 4)];
    let mut ranks_ok = true;
    for (k, r) in ranks {
        ranks_ok &= check_rank(ctx, k, r, errs);
    }
    let Some(win) = Window::read(ctx) else {
        return;
    };
    let Some(group) = ctx.get(m::GROUP).filter(|&g| g > 0) else {
        return;
    };
    if !ranks_ok {
        return;
    }
    let (n, c, h, w) = nchw_of(&ctx.ty(src).dims, nchw);
    let out_c = ctx.ty(filter).dims[0];
    let group = group as u64;
    let mut group_ok = true;
    if !c.is_multiple_of(group) {
        group_ok = false;
        errs.push(ShapeError::at_member(
            "Group",
            format!("`Group: {group}` does not divide the {c} input channels of `Src`"),
        ));
    }
    if !out_c.is_multiple_of(group) {
        group_ok = false;
        errs.push(ShapeError::at_member(
            "Group",
            format!("`Group: {group}` does not divide the {out_c} output channels of `Filter`"),
        ));
    }
    let (kh, kw) = (win.kernels[0] as u64, win.kernels[1] as u64);
    if group_ok {
        let per_group = c / group;
        let want = if nchw {
            [out_c, per_group, kh, kw]
        } else {
            [out_c, kh, kw, per_group]
        };
        check_dims(ctx, filter, &want, "expects", errs);
    }
    check_dims(ctx, bias, &[out_c], "expects", errs);
    match (win.out_dim(0, h), win.out_dim(1, w)) {
        (Ok(oh), Ok(ow)) => {
            let want = activation_dims(n, out_c, oh, ow, nchw);
            check_dims(ctx, dest, &want, "produces", errs);
        }
        (a, b) => errs.extend(a.err().into_iter().chain(b.err())),
    }
}

/// `convtranspose @out Dest, @in Src, @in Filter, @in Bias` (NHWC, float):
/// output extent `(in - 1) * stride + (kernel - 1) * dilation + 1 - pads +
/// OutputPadding` per axis; `OutC = Group x` the filter's last dimension.
pub fn conv_transpose(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src, filter, bias) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    if check_kind(ctx, src, Kinds::Float, &mut errs) {
        for k in [filter, bias, dest] {
            if check_kind(ctx, k, Kinds::Float, &mut errs) {
                check_same_elem(ctx, k, src, Same::Base, &mut errs);
            }
        }
    }
    let mut ranks_ok = true;
    for (k, r) in [(src, 4), (filter, 4), (bias, 1), (dest, 4)] {
        ranks_ok &= check_rank(ctx, k, r, &mut errs);
    }
    let Some(win) = Window::read(ctx) else {
        return errs;
    };
    let Some(group) = ctx.get(m::GROUP).filter(|&g| g > 0) else {
        return errs;
    };
    let out_pad = match ctx.get(m::OUTPUT_PADDING) {
        Some(&[a, b]) if a >= 0 && b >= 0 => [a as i128, b as i128],
        Some(_) => return errs,
        None => [0, 0],
    };
    if !ranks_ok {
        return errs;
    }
    let (n, c, h, w) = nchw_of(&ctx.ty(src).dims, false);
    let group = group as u64;
    if !c.is_multiple_of(group) {
        errs.push(ShapeError::at_member(
            "Group",
            format!("`Group: {group}` does not divide the {c} input channels of `Src`"),
        ));
        return errs;
    }
    let (kh, kw) = (win.kernels[0] as u64, win.kernels[1] as u64);
    let per_group = ctx.ty(filter).dims[3];
    check_dims(ctx, filter, &[c, kh, kw, per_group], "expects", &mut errs);
    let Some(out_c) = per_group.checked_mul(group) else {
        return errs;
    };
    check_dims(ctx, bias, &[out_c], "expects", &mut errs);
    let mut out = [0u64; 2];
    for (a, input) in [h, w].into_iter().enumerate() {
        let full =
            (input as i128 - 1) * win.strides[a] + (win.kernels[a] - 1) * win.dilation[a] + 1;
        let size = full - win.pads[a] - win.pads[a + 2] + out_pad[a];
        let axis = ["height", "width"][a];
        match dim(size) {
            Some(d) => out[a] = d,
            None => {
                errs.push(ShapeError::at_member(
                    "Pads",
                    format!("the pads leave no output {axis} (the full output {axis} is {full})"),
                ));
                return errs;
            }
        }
    }
    let want = activation_dims(n, out_c, out[0], out[1], false);
    check_dims(ctx, dest, &want, "produces", &mut errs);
    errs
}

/// Element kinds of a convolution: float (all four share the kind) or
/// quantized (the rules of `quant::product`).
fn conv_kinds(ctx: &ShapeCtx, errs: &mut Vec<ShapeError>) {
    let (dest, src, filter, bias) = (0, 1, 2, 3);
    if !check_kind(ctx, src, Kinds::FloatOrQuantized, errs) {
        return;
    }
    if ctx.ty(src).elem.is_quantized() {
        quant::product(ctx, [dest, src, filter], Some(bias), errs);
        return;
    }
    for k in [filter, bias, dest] {
        if check_kind(ctx, k, Kinds::Float, errs) {
            check_same_elem(ctx, k, src, Same::Base, errs);
        }
    }
}

/// `maxpool`/`avgpool @out Dest, @in Src`: the spatial rule with the
/// channels preserved.
pub fn pool(ctx: &ShapeCtx) -> Vec<ShapeError> {
    let (dest, src) = (0, 1);
    let mut errs = Vec::new();
    if check_kind(ctx, src, Kinds::FloatOrQuantized, &mut errs)
        && check_kind(ctx, dest, Kinds::FloatOrQuantized, &mut errs)
    {
        if ctx.ty(src).elem.is_quantized() {
            quant::pool(ctx, &mut errs);
        } else {
            check_same_elem(ctx, dest, src, Same::Base, &mut errs);
        }
    }
    pool_geometry(ctx, dest, src, &mut errs);
    errs
}

/// The shapes of a pool's `Src` and `Dest` (channels preserved).
pub(super) fn pool_geometry(ctx: &ShapeCtx, dest: usize, src: usize, errs: &mut Vec<ShapeError>) {
    let ranks_ok = check_rank(ctx, src, 4, errs) & check_rank(ctx, dest, 4, errs);
    let Some(win) = Window::read(ctx) else {
        return;
    };
    if !ranks_ok {
        return;
    }
    let nchw = is_nchw(ctx);
    let (n, c, h, w) = nchw_of(&ctx.ty(src).dims, nchw);
    match (win.out_dim(0, h), win.out_dim(1, w)) {
        (Ok(oh), Ok(ow)) => {
            let want = activation_dims(n, c, oh, ow, nchw);
            check_dims(ctx, dest, &want, "produces", errs);
        }
        (a, b) => errs.extend(a.err().into_iter().chain(b.err())),
    }
}
