//! The interpreter's spatial gradients (docs/training.md, "Spatial
//! gradients"), in the operation order of the C kernels in
//! `emit/grad.rs`.

use super::kernels::for_window;
use super::Exec;
use crate::emit::{ConvGradGeom, Window};
use crate::error::BackendError;
use glow_ir::member as m;
use glow_ir::{ElemKind, Opcode};

type R = Result<(), BackendError>;

fn at(st: [u64; 4], i: [u64; 4]) -> usize {
    (0..4).map(|k| st[k] * i[k]).sum::<u64>() as usize
}

/// `convolutiongrad`: bias, filter and input gradients, each in gather
/// form.
pub fn convolution_grad(x: &mut Exec) -> R {
    let (s, dgt) = (x.ty("Src")?, x.ty("DestGrad")?);
    for n in ["Filter", "SrcGrad", "FilterGrad", "BiasGrad"] {
        let t = x.ty(n)?;
        if t.elem != ElemKind::Float {
            return Err(x.unsupported(&t));
        }
    }
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let group = x.m().get(m::GROUP)?.max(1) as u64;
    let g = ConvGradGeom::new(win, &s.dims, &dgt.dims, group);
    let (src, filt, dg) = (x.f32s("Src")?, x.f32s("Filter")?, x.f32s("DestGrad")?);
    let [n, ch, h, w] = g.src;
    let [_, oc, oh, ow] = g.dest;
    let [kh, kw] = g.win.kernels;
    let (st, dil, pads) = (g.win.strides, g.win.dilation, g.win.pads);
    let (cg, ocg) = (g.cg, g.ocg);
    let mut bias = x.scratch(oc as usize, 0f32)?;
    for o in 0..oc {
        let mut sum = 0f32;
        for b in 0..n {
            for y in 0..oh {
                for xx in 0..ow {
                    sum += dg[at(g.ds, [b, o, y, xx])];
                }
            }
        }
        bias[o as usize] = sum;
    }
    let mut fgrad = x.scratch(filt.len(), 0f32)?;
    with_fma!({
        for o in 0..oc {
            for ky in 0..kh {
                for kx in 0..kw {
                    for ic in 0..cg {
                        let c = (o / ocg) * cg + ic;
                        let mut sum = 0f32;
                        for b in 0..n {
                            for y in 0..oh {
                                let ih = (y * st[0] + ky * dil[0]) as i64 - pads[0] as i64;
                                if ih < 0 || ih >= h as i64 {
                                    continue;
                                }
                                for xx in 0..ow {
                                    let iw = (xx * st[1] + kx * dil[1]) as i64 - pads[1] as i64;
                                    if iw < 0 || iw >= w as i64 {
                                        continue;
                                    }
                                    let d = dg[at(g.ds, [b, o, y, xx])];
                                    sum =
                                        d.mul_add(src[at(g.ss, [b, c, ih as u64, iw as u64])], sum);
                                }
                            }
                        }
                        fgrad[at(g.fs, [o, ky, kx, ic])] = sum;
                    }
                }
            }
        }
    });
    let mut sgrad = x.scratch(src.len(), 0f32)?;
    let compute_src = x.inst.get(m::COMPUTE_SRC_GRAD).unwrap_or(true);
    with_fma!({
        for b in (0..n).filter(|_| compute_src) {
            for c in 0..ch {
                let (gi, ic) = (c / cg, c % cg);
                for ih in 0..h {
                    for iw in 0..w {
                        let mut sum = 0f32;
                        for ky in 0..kh {
                            let Some(y) = g.tap(ih, ky, 0) else {
                                continue;
                            };
                            for kx in 0..kw {
                                let Some(xx) = g.tap(iw, kx, 1) else {
                                    continue;
                                };
                                for og in 0..ocg {
                                    let o = gi * ocg + og;
                                    let d = dg[at(g.ds, [b, o, y, xx])];
                                    sum = d.mul_add(filt[at(g.fs, [o, ky, kx, ic])], sum);
                                }
                            }
                        }
                        sgrad[at(g.ss, [b, c, ih, iw])] = sum;
                    }
                }
            }
        }
    });
    x.put_f32s("BiasGrad", &bias)?;
    x.put_f32s("FilterGrad", &fgrad)?;
    // An @inout SrcGrad gets the sums added (none without ComputeSrcGrad).
    if x.inst.operands[3].kind == glow_ir::OperandKind::InOut {
        if !compute_src {
            return Ok(());
        }
        let prev = x.f32s("SrcGrad")?;
        for (s, p) in sgrad.iter_mut().zip(prev.iter()) {
            // prev + sum (f32 addition commutes).
            *s += *p;
        }
    }
    x.put_f32s("SrcGrad", &sgrad)
}

/// `maxpoolwithargmax`: `maxpool`'s value and the flat index in `Src` of
/// the element chosen (-1 for a window all in padding).
pub fn max_pool_with_argmax(x: &mut Exec) -> R {
    let (d, s, am) = (x.ty("Dest")?, x.ty("Src")?, x.ty("Argmax")?);
    if !matches!(am.elem, ElemKind::Index32 | ElemKind::Index64) {
        return Err(x.unsupported(&am));
    }
    if d.elem != ElemKind::Float {
        return Err(x.unsupported(&d));
    }
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let src = x.f32s("Src")?;
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    let (ss, ds) = (win.act_strides(&s.dims), win.act_strides(&d.dims));
    let mut out = x.scratch(d.size() as usize, 0f32)?;
    let mut arg = x.scratch(d.size() as usize, -1i64)?;
    for b in 0..n {
        for y in 0..oh {
            for xx in 0..ow {
                for c in 0..ch {
                    let (mut acc, mut first, mut best) = (0f32, true, -1i64);
                    for_window(&win, y, xx, h, w, |_, _, p, q| {
                        let i = at(ss, [b, c, p, q]);
                        let v = src[i];
                        if first || v > acc {
                            acc = v;
                            best = i as i64;
                            first = false;
                        }
                    });
                    let o = at(ds, [b, c, y, xx]);
                    out[o] = acc;
                    arg[o] = best;
                }
            }
        }
    }
    x.put_f32s("Dest", &out)?;
    x.put_ints("Argmax", &arg)
}

/// `maxpoolwithargmaxgrad` and `avgpoolgrad`, as `emit::grad::pool_grad`.
pub fn pool_grad(x: &mut Exec) -> R {
    let (d, s) = (x.ty("Dest")?, x.ty("Src")?);
    for t in [&d, &s] {
        if t.elem != ElemKind::Float {
            return Err(x.unsupported(t));
        }
    }
    let dg = x.f32s("DestGrad")?;
    let mut sg = x.scratch(x.ty("SrcGrad")?.size() as usize, 0f32)?;
    if x.opcode() == Opcode::MaxPoolWithArgmaxGrad {
        let am = x.ty("Argmax")?;
        if !matches!(am.elem, ElemKind::Index32 | ElemKind::Index64) {
            return Err(x.unsupported(&am));
        }
        let arg = x.ints("Argmax")?;
        for (&a, &v) in arg.iter().zip(&dg) {
            if a >= 0 && (a as u64) < sg.len() as u64 {
                sg[a as usize] += v;
            }
        }
        return x.put_f32s("SrcGrad", &sg);
    }
    let win = Window::read(x.inst).ok_or_else(|| x.err("malformed window members"))?;
    let include = x.inst.get(m::COUNT_INCLUDE_PADS).unwrap_or(true);
    let [n, ch, h, w] = win.nchw_of(&s.dims);
    let [_, _, oh, ow] = win.nchw_of(&d.dims);
    let (ss, ds) = (win.act_strides(&s.dims), win.act_strides(&d.dims));
    let area = (win.kernels[0] * win.kernels[1]) as f32;
    // Dest's row-major order: channels innermost in NHWC, outside the rows in NCHW.
    let mut order = Vec::with_capacity(d.size() as usize);
    for b in 0..n {
        if win.nchw {
            for c in 0..ch {
                for y in 0..oh {
                    for xx in 0..ow {
                        order.push([b, c, y, xx]);
                    }
                }
            }
        } else {
            for y in 0..oh {
                for xx in 0..ow {
                    for c in 0..ch {
                        order.push([b, c, y, xx]);
                    }
                }
            }
        }
    }
    for [b, c, y, xx] in order {
        let v = dg[at(ds, [b, c, y, xx])];
        let gr = if include {
            v / area
        } else {
            let mut cnt = 0u64;
            for_window(&win, y, xx, h, w, |_, _, _, _| cnt += 1);
            if cnt > 0 {
                v / cnt as f32
            } else {
                0.0
            }
        };
        for_window(&win, y, xx, h, w, |_, _, p, q| {
            sg[at(ss, [b, c, p, q])] += gr;
        });
    }
    x.put_f32s("SrcGrad", &sg)
}
