//! DeformConv (2-D) as ONNX's reference computes it: X sampled bilinearly
//! (GridSample's zeros padding) at each kernel tap moved by its run-time
//! offset, the samples scaled by the mask, and summed with W as a grouped
//! convolution. The samples of every tap and output point are read with
//! `grid.rs`'s `gather`s, one offset group at a time; the sum is one
//! `matmul` per group.

use super::compose::{attr_int, attr_ints, base_of, with};
use super::grid::{sample, table, Sampling};
use super::{dims_of, window, Attrs, Lowerer, Val};
use crate::error::Result;
use crate::onnx::NodeProto;
use crate::tensor::Tensor;

pub(super) fn deform_conv(l: &mut Lowerer, node: &NodeProto) -> Result<Vec<Val>> {
    let attrs = Attrs(&node.attribute);
    let (xd, wd, od) = (
        dims_of(&l.input(node, 0)?),
        dims_of(&l.input(node, 1)?),
        dims_of(&l.input(node, 2)?),
    );
    if xd.len() != 4 || wd.len() != 4 || od.len() != 4 {
        return Err(l.unsupported(format!(
            "DeformConv of X {xd:?}, W {wd:?} and offset {od:?} (2-D only)"
        )));
    }
    let (n, ic, ih, iw) = (xd[0], xd[1], xd[2], xd[3]);
    let (oc, icg, kh, kw) = (wd[0], wd[1], wd[2], wd[3]);
    if wd.contains(&0) || xd.contains(&0) {
        return Err(l.unsupported("DeformConv of an empty tensor"));
    }
    if let Some(k) = attrs.ints("kernel_shape") {
        if k != [kh as i64, kw as i64] {
            return Err(l.err(format!("kernel_shape {k:?} is not W's [{kh}, {kw}]")));
        }
    }
    let group = attrs.int("group", 1);
    let og = attrs.int("offset_group", 1);
    if group < 1
        || og < 1
        || ic != icg * group as u64
        || oc % group as u64 != 0
        || ic % og as u64 != 0
    {
        return Err(l.err(format!(
            "group {group} and offset_group {og} do not divide X's {ic} channels and W {wd:?}"
        )));
    }
    let (group, og) = (group as u64, og as u64);
    let strides = window::per_axis(l, &attrs, "strides", 2, 1, 1)?;
    let dil = window::per_axis(l, &attrs, "dilations", 2, 1, 1)?;
    let pads = window::pads(l, &attrs, 2)?.unwrap_or_else(|| vec![0; 4]);
    let out = |i: u64, k: u64, d: u64, s: u64, pb: u64, pe: u64| {
        (i + pb + pe)
            .checked_sub((k - 1) * d + 1)
            .map(|v| v / s + 1)
    };
    let (oh, ow) = (od[2], od[3]);
    let k = kh * kw;
    if out(ih, kh, dil[0], strides[0], pads[0], pads[2]) != Some(oh)
        || out(iw, kw, dil[1], strides[1], pads[1], pads[3]) != Some(ow)
        || od[0] != n
        || od[1] != og * k * 2
    {
        return Err(l.err(format!(
            "offset {od:?} does not fit X {xd:?}, W {wd:?}, the pads, strides and dilations"
        )));
    }
    // The reference normalizes the coordinates by `d - 1` for GridSample.
    if ih < 2 || iw < 2 {
        return Err(l.unsupported("DeformConv of an input with one row or column"));
    }
    let bias = l.opt_input(node, 3)?.is_some();
    let mask = l.opt_input(node, 4)?.is_some();
    if bias && dims_of(&l.input(node, 3)?) != [oc] {
        return Err(l.err(format!("B is not [{oc}]")));
    }
    if mask && dims_of(&l.input(node, 4)?) != [n, og * k, oh, ow] {
        return Err(l.err(format!("mask is not [{n}, {}, {oh}, {ow}]", og * k)));
    }
    let o = oh * ow;
    let p = k * o;
    // Each tap's place before its offset: [1, K, OH * OW] per axis.
    let place = |axis: usize| -> Tensor {
        let v = (0..k)
            .flat_map(|t| (0..o).map(move |q| (t, q)))
            .map(|(t, q)| {
                let (tap, at, pad) = if axis == 0 {
                    (t / kw, q / ow, pads[0])
                } else {
                    (t % kw, q % ow, pads[1])
                };
                (tap * dil[axis] + at * strides[axis]) as f32 - pad as f32
            })
            .collect();
        Tensor::f32(vec![1, k, o], v)
    };
    let names: Vec<&str> = node.input.iter().map(String::as_str).collect();
    let base = base_of(node);
    let y = with(l, &base, |c| {
        let off = c.reshape(names[2], &[n, og, k, 2, o])?;
        let masks = match mask {
            true => Some(c.reshape(names[4], &[n, og, p])?),
            false => None,
        };
        let (ph, pw) = (c.konst("place", place(0)), c.konst("place", place(1)));
        let cpg = ic / og;
        let mut cols = Vec::with_capacity(og as usize);
        for g in 0..og {
            let xg = if og == 1 {
                names[0].to_string()
            } else {
                c.slice(names[0], 1, g * cpg, (g + 1) * cpg)?
            };
            let rows = table(c, &xg, &[n, cpg, ih, iw])?;
            let og_off = c.pick(&off, 1, g)?;
            let mut coords = Vec::with_capacity(2);
            for (axis, place) in [(0, &ph), (1, &pw)] {
                let d = c.pick(&og_off, 2, axis)?;
                let at = c.op("Add", &[&d, place], vec![])?;
                coords.push(c.reshape(&at, &[n, p])?);
            }
            let mut v = sample(c, &rows, &coords, &[ih, iw], n, Sampling::BILINEAR_ZEROS)?;
            if let Some(m) = &masks {
                let mg = c.pick(m, 1, g)?;
                let at2 = c.ints(&[2]);
                let mg = c.op("Unsqueeze", &[&mg, &at2], vec![])?;
                v = c.op("Mul", &[&v, &mg], vec![])?;
            }
            cols.push(v);
        }
        let refs: Vec<&str> = cols.iter().map(String::as_str).collect();
        let all = if refs.len() == 1 {
            cols[0].clone()
        } else {
            c.op("Concat", &refs, vec![attr_int("axis", 2)])?
        };
        // [N, K, O, C] to rows of (C, K) per output point.
        let all = c.reshape(&all, &[n, k, o, ic])?;
        let all = c.op("Transpose", &[&all], vec![attr_ints("perm", &[0, 2, 3, 1])])?;
        let ocg = oc / group;
        let mut ys = Vec::with_capacity(group as usize);
        for gi in 0..group {
            let cg = if group == 1 {
                all.clone()
            } else {
                c.slice(&all, 2, gi * icg, (gi + 1) * icg)?
            };
            let cg = c.reshape(&cg, &[n * o, icg * k])?;
            let wg = if group == 1 {
                names[1].to_string()
            } else {
                c.slice(names[1], 0, gi * ocg, (gi + 1) * ocg)?
            };
            let wg = c.reshape(&wg, &[ocg, icg * k])?;
            let wt = c.op("Transpose", &[&wg], vec![attr_ints("perm", &[1, 0])])?;
            ys.push(c.op("MatMul", &[&cg, &wt], vec![])?);
        }
        let refs: Vec<&str> = ys.iter().map(String::as_str).collect();
        let y = if refs.len() == 1 {
            ys[0].clone()
        } else {
            c.op("Concat", &refs, vec![attr_int("axis", 1)])?
        };
        let y = c.reshape(&y, &[n, o, oc])?;
        let y = c.op("Transpose", &[&y], vec![attr_ints("perm", &[0, 2, 1])])?;
        let y = c.reshape(&y, &[n, oc, oh, ow])?;
        if bias {
            let b = c.reshape(names[3], &[oc, 1, 1])?;
            c.op("Add", &[&y, &b], vec![])
        } else {
            Ok(y)
        }
    })?;
    Ok(vec![l.vals[&y].clone()])
}
