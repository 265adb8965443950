//! The interpreter's spatial gradients (docs/training.md, "Spatial
//! gradients"), in the operation order of the C kernels in
//! `emit/grad.rs`.

use super::Exec;
use crate::emit::{ConvGradGeom, Window};
use crate::error::BackendError;
use glow_ir::member as m;
use glow_ir::ElemKind;

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
    let mut bias = vec![0f32; oc as usize];
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
    let mut fgrad = vec![0f32; filt.len()];
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
                                sum += dg[at(g.ds, [b, o, y, xx])]
                                    * src[at(g.ss, [b, c, ih as u64, iw as u64])];
                            }
                        }
                    }
                    fgrad[at(g.fs, [o, ky, kx, ic])] = sum;
                }
            }
        }
    }
    let mut sgrad = vec![0f32; src.len()];
    for b in 0..n {
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
                                sum +=
                                    dg[at(g.ds, [b, o, y, xx])] * filt[at(g.fs, [o, ky, kx, ic])];
                            }
                        }
                    }
                    sgrad[at(g.ss, [b, c, ih, iw])] = sum;
                }
            }
        }
    }
    x.put_f32s("BiasGrad", &bias)?;
    x.put_f32s("FilterGrad", &fgrad)?;
    x.put_f32s("SrcGrad", &sgrad)
}
