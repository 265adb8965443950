//! ConvTranspose (1-D and 2-D) onto `convtranspose`: the input is brought
//! channels-last, the filter (`C x M/group x k...`, a constant or an
//! activation) becomes `C x KH x KW x M/group`, and the ONNX padding rules
//! (`pads`, `auto_pad`, `output_padding`, `output_shape`) become begin and
//! end crops of the full output. An output larger than the full extent
//! (a negative end crop) is the instruction's `OutputPadding`.

use super::window::{self, ints, AutoPad};
use super::{Act, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use glow_ir::member as m;
use glow_ir::Opcode;

/// Begin pad, end pad and output padding of one axis.
struct Axis {
    /// The output extent.
    out: u64,
    begin: u64,
    end: u64,
    out_pad: u64,
}

/// The crops of every axis from the ONNX attributes (the reference
/// implementation's rules: `output_shape` keeps the begin pads and sets the
/// end; `SAME_*` splits the total padding, the odd one at the end for
/// `SAME_UPPER`).
fn axes(l: &Lowerer, attrs: &Attrs, input: &[u64], kernel: &[u64]) -> Result<Vec<Axis>> {
    let nd = input.len();
    let max = glow_ir::limits::MAX_TENSOR_BYTES as i64;
    let s = window::per_axis(l, attrs, "strides", nd, 1, 1)?;
    let d = window::per_axis(l, attrs, "dilations", nd, 1, 1)?;
    let op = window::per_axis(l, attrs, "output_padding", nd, 0, 0)?;
    let pads = window::pads(l, attrs, nd)?;
    let shape = match attrs.ints("output_shape") {
        // Either the spatial extents or the whole output shape.
        Some(v) if v.len() == nd || v.len() == nd + 2 => Some(v[v.len() - nd..].to_vec()),
        Some(v) => return Err(l.err(format!("bad `output_shape`: {v:?}"))),
        None => None,
    };
    if let Some(x) = shape.iter().flatten().find(|&&x| x < 1 || x > max) {
        return Err(l.err(format!("bad `output_shape` value {x}")));
    }
    let auto = AutoPad::read(l, attrs)?;
    let same = auto.is_same() && pads.is_none();
    let mut out = Vec::with_capacity(nd);
    for i in 0..nd {
        // In i128: every factor is below the tensor limit, so nothing overflows.
        let (inp, k) = (input[i] as i128, kernel[i] as i128);
        let (s, d, op) = (s[i] as i128, d[i] as i128, op[i] as i128);
        let full = (inp - 1) * s + (k - 1) * d + 1;
        let (begin, target) = if same {
            let target = shape.as_ref().map_or(inp * s, |v| v[i] as i128);
            let total = full + op - target;
            let begin = if auto == AutoPad::SameUpper {
                total.div_euclid(2)
            } else {
                total - total.div_euclid(2)
            };
            (begin, target)
        } else {
            let p = pads.clone().unwrap_or_else(|| vec![0; 2 * nd]);
            let (pb, pe) = if auto == AutoPad::Valid {
                (0, 0)
            } else {
                (p[i] as i128, p[i + nd] as i128)
            };
            let target = shape.as_ref().map_or(full + op - pb - pe, |v| v[i] as i128);
            (pb, target)
        };
        if begin < 0 {
            return Err(l.unsupported(format!(
                "ConvTranspose whose output starts before the full output on axis {i} (begin pad {begin})"
            )));
        }
        if target < 1 || target > max as i128 {
            return Err(l.err(format!(
                "output extent {target} on axis {i} is out of range"
            )));
        }
        // The end crop; negative when the output reaches past the full extent.
        let end = full - begin - target;
        out.push(Axis {
            out: target as u64,
            begin: begin as u64,
            end: end.max(0) as u64,
            out_pad: (-end).max(0) as u64,
        });
    }
    Ok(out)
}

pub(super) fn conv_transpose(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let out = node.output.first().cloned().unwrap_or_default();
    let x = l.input(node, 0)?;
    let a = l.act(&x);
    let r = a.dims.len();
    if r != 3 && r != 4 {
        return Err(l.unsupported(format!(
            "ConvTranspose on a {}-D input {:?} (only 1-D and 2-D are lowered)",
            r.saturating_sub(2),
            a.dims
        )));
    }
    let a = l.to_cl(&a, &out);
    let (n, c) = (a.dims[0], a.dims[1]);
    let spatial: Vec<u64> = a.dims[2..].to_vec();
    let src = if r == 3 {
        l.view(&format!("{out}.2d"), a.v, &[n, 1, spatial[0], c])
    } else {
        a.v
    };
    let attrs = Attrs(&node.attribute);
    let wval = l.input(node, 1)?;
    let wdims = match &wval {
        Val::Const { t, .. } => t.dims.clone(),
        Val::Act(a) => a.dims.clone(),
    };
    let group = attrs.int("group", 1);
    if wdims.len() != r || group < 1 || wdims[0] != c || c % group as u64 != 0 {
        return Err(l.err(format!(
            "filter dims {wdims:?} with group {group} do not fit {c} input channels"
        )));
    }
    let group = group as u64;
    let mg = wdims[1];
    let kernel = wdims[2..].to_vec();
    if let Some(k) = attrs.ints("kernel_shape") {
        if k.iter().map(|&v| v as u64).ne(kernel.iter().copied()) {
            return Err(l.err(format!(
                "kernel_shape {k:?} differs from the filter {wdims:?}"
            )));
        }
    }
    let ax = axes(l, &attrs, &spatial, &kernel)?;
    let s = window::per_axis(l, &attrs, "strides", kernel.len(), 1, 1)?;
    let d = window::per_axis(l, &attrs, "dilations", kernel.len(), 1, 1)?;
    // 1-D runs as 2-D with a height-1 kernel.
    let lift = |v: &[u64], one: u64| -> [u64; 2] {
        if v.len() == 1 {
            [one, v[0]]
        } else {
            [v[0], v[1]]
        }
    };
    let (k2, s2, d2) = (lift(&kernel, 1), lift(&s, 1), lift(&d, 1));
    let pads = if r == 3 {
        [0, ax[0].begin, 0, ax[0].end]
    } else {
        [ax[0].begin, ax[1].begin, ax[0].end, ax[1].end]
    };
    let op2 = lift(&ax.iter().map(|a| a.out_pad).collect::<Vec<_>>(), 0);
    let oc = mg * group;
    // Filter: C x M/g x KH x KW (ONNX) -> C x KH x KW x M/g.
    let cmkk = [c, mg, k2[0], k2[1]];
    let wname = node.input[1].clone();
    let filter = match &wval {
        Val::Const { t, .. } => {
            let w4 = t.reshaped(cmkk.to_vec()).permuted(&[0, 2, 3, 1]);
            l.const_weight(&wname, &w4)
        }
        Val::Act(w) => {
            let p = l.to_plain(w, &out);
            let v = l.view(&format!("{wname}.cmhw"), p.v, &cmkk);
            let t = l.alloc(&format!("{wname}.chwm"), &[c, k2[0], k2[1], mg]);
            l.transpose(&wname, t, v, vec![0, 2, 3, 1]);
            t
        }
    };
    let bias = super::nn::conv_bias(l, node, &out, &wname, oc)?;
    let (oh, ow) = if r == 3 {
        (1, ax[0].out)
    } else {
        (ax[0].out, ax[1].out)
    };
    let dest = l.alloc(&out, &[n, oh, ow, oc]);
    let mut members = vec![
        m::KERNELS.to(ints(&k2)),
        m::STRIDES.to(ints(&s2)),
        m::PADS.to(ints(&pads)),
        m::GROUP.to(group as i64),
        m::DILATION.to(ints(&d2)),
    ];
    if op2 != [0, 0] {
        members.push(m::OUTPUT_PADDING.to(ints(&op2)));
    }
    let base = if node.name.is_empty() {
        out.clone()
    } else {
        node.name.clone()
    };
    l.inst(
        &base,
        Opcode::ConvTranspose,
        &[dest, src, filter, bias],
        &members,
    );
    if r == 3 {
        let v = l.view(&format!("{out}.1d"), dest, &[n, ow, oc]);
        return Ok(vec![Val::Act(Act {
            v,
            dims: vec![n, oc, ow],
            cl: true,
        })]);
    }
    Ok(vec![Val::Act(Act {
        v: dest,
        dims: vec![n, oc, oh, ow],
        cl: true,
    })])
}
