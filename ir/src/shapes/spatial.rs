//! Shape rules of the spatial opcodes: `convolution`, `convtranspose`,
//! `maxpool`, `avgpool`. NHWC activations are `N x H x W x C`, NCHW ones
//! `N x C x H x W`; filters are `OutC x KH x KW x C/Group` (NHWC) or
//! `OutC x C/Group x KH x KW` (NCHW); a `convtranspose` filter (NHWC only)
//! is `C x KH x KW x OutC/Group`.

use super::*;

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
        let dilation = match ctx.inst.member("Dilation") {
            Some(_) => pair(ctx, "Dilation")?,
            None => [1, 1],
        };
        Some(Window {
            kernels: pair(ctx, "Kernels")?,
            strides: pair(ctx, "Strides")?,
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
    ctx.inst.member_str("Layout") == Some("NCHW")
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
    let (dest, src, filter, bias) = (0, 1, 2, 3);
    let mut errs = Vec::new();
    conv_kinds(ctx, &mut errs);
    let ranks = [(src, 4), (filter, 4), (bias, 1), (dest, 4)];
    let mut ranks_ok = true;
    for (k, r) in ranks {
        ranks_ok &= check_rank(ctx, k, r, &mut errs);
    }
    let Some(win) = Window::read(ctx) else {
        return errs;
    };
    let Some(group) = ctx.int("Group").filter(|&g| g > 0) else {
        return errs;
    };
    if !ranks_ok {
        return errs;
    }
    let nchw = is_nchw(ctx);
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
        check_dims(ctx, filter, &want, "expects", &mut errs);
    }
    check_dims(ctx, bias, &[out_c], "expects", &mut errs);
    match (win.out_dim(0, h), win.out_dim(1, w)) {
        (Ok(oh), Ok(ow)) => {
            let want = activation_dims(n, out_c, oh, ow, nchw);
            check_dims(ctx, dest, &want, "produces", &mut errs);
        }
        (a, b) => errs.extend(a.err().into_iter().chain(b.err())),
    }
    // An optional residual is added to the result before the activation,
    // element by element in `Dest`'s row-major order.
    let residual = 4;
    if ctx.types.len() > residual {
        let (r, d) = (ctx.ty(residual), ctx.ty(dest));
        if r.elem != d.elem || r.size() != d.size() {
            errs.push(ShapeError::at_operand(
                residual,
                format!(
                    "`Residual` has type {r} but must have the element kind and element count of `Dest` ({d})"
                ),
            ));
        }
    }
    errs
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
    let Some(group) = ctx.int("Group").filter(|&g| g > 0) else {
        return errs;
    };
    let out_pad = match ctx.ints("OutputPadding") {
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
/// quantized (`Dest`, `Src`, `Filter` share the base kind, `Bias` is any
/// quantized kind).
fn conv_kinds(ctx: &ShapeCtx, errs: &mut Vec<ShapeError>) {
    let (dest, src, filter, bias) = (0, 1, 2, 3);
    if !check_kind(ctx, src, Kinds::FloatOrQuantized, errs) {
        return;
    }
    let quantized = ctx.ty(src).elem.is_quantized();
    for k in [filter, bias, dest] {
        let kinds = if quantized {
            Kinds::Quantized
        } else {
            Kinds::Float
        };
        if check_kind(ctx, k, kinds, errs) && (k != bias || !quantized) {
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
        check_same_elem(ctx, dest, src, Same::Base, &mut errs);
    }
    let ranks_ok = check_rank(ctx, src, 4, &mut errs) & check_rank(ctx, dest, 4, &mut errs);
    let Some(win) = Window::read(ctx) else {
        return errs;
    };
    if !ranks_ok {
        return errs;
    }
    let nchw = is_nchw(ctx);
    let (n, c, h, w) = nchw_of(&ctx.ty(src).dims, nchw);
    match (win.out_dim(0, h), win.out_dim(1, w)) {
        (Ok(oh), Ok(ow)) => {
            let want = activation_dims(n, c, oh, ow, nchw);
            check_dims(ctx, dest, &want, "produces", &mut errs);
        }
        (a, b) => errs.extend(a.err().into_iter().chain(b.err())),
    }
    errs
}
