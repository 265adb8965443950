//! The interpreter's detection kernels (docs/gir.md, "Detection"), in the
//! operation order of the C functions in `emit/detection.c`.

use super::Exec;
use crate::error::BackendError;
use glow_ir::member as m;
use glow_ir::Opcode;

type R = Result<(), BackendError>;

pub fn exec(x: &mut Exec) -> R {
    match x.opcode() {
        Opcode::NonMaxSuppression => nms(x),
        Opcode::RoiAlign => roi_align(x),
        _ => Err(x.err("not a detection instruction")),
    }
}

/// C's `a < b ? b : a` and `b < a ? b : a` (std::max, std::min).
fn max(a: f32, b: f32) -> f32 {
    if a < b {
        b
    } else {
        a
    }
}
fn min(a: f32, b: f32) -> f32 {
    if b < a {
        b
    } else {
        a
    }
}

/// Glow's `maxMin`: (min, max) of two coordinates.
fn min_max(l: f32, r: f32) -> (f32, f32) {
    if l >= r {
        (r, l)
    } else {
        (l, r)
    }
}

/// Box `s` (selected) suppresses box `c` (candidate): the intersection is
/// more than `iou` times the union (Glow's `doIOU`).
fn suppresses(s: &[f32], c: &[f32], center: bool, iou: f32) -> bool {
    let (xs0, ys0, xs1, ys1, xc0, yc0, xc1, yc1);
    if !center {
        (xs0, xs1) = min_max(s[0], s[2]);
        (ys0, ys1) = min_max(s[1], s[3]);
        (xc0, xc1) = min_max(c[0], c[2]);
        (yc0, yc1) = min_max(c[1], c[3]);
    } else {
        let (hws, hhs) = (s[2] / 2.0, s[3] / 2.0);
        let (hwc, hhc) = (c[2] / 2.0, c[3] / 2.0);
        (xs0, ys0, xs1, ys1) = (s[0] - hws, s[1] - hhs, s[0] + hws, s[1] + hhs);
        (xc0, yc0, xc1, yc1) = (c[0] - hwc, c[1] - hhc, c[0] + hwc, c[1] + hhc);
    }
    let (x0, y0) = (max(xs0, xc0), max(ys0, yc0));
    let (x1, y1) = (min(xs1, xc1), min(ys1, yc1));
    let inter = max(0.0, x1 - x0) * max(0.0, y1 - y0);
    if inter == 0.0 {
        return false;
    }
    let sa = (xs1 - xs0) * (ys1 - ys0);
    let ca = (xc1 - xc0) * (yc1 - yc0);
    let union = sa + ca - inter;
    inter > iou * union
}

/// The shape and limits of one `nonmaxsuppression`.
struct Nms {
    batches: usize,
    classes: usize,
    boxes: usize,
    v4: bool,
    center: bool,
    /// Selections per class; `None`: no limit.
    limit: Option<usize>,
    iou: f32,
    score: f32,
    rows: usize,
    compact: bool,
}

impl Nms {
    /// Glow's per-class greedy selection: candidates above the score
    /// threshold in the order higher score, then lower box index; each is
    /// kept unless a box already kept for its class suppresses it. Glow's
    /// layout: batch `b` owns rows `b * R/B ..`, padded with its lowest-
    /// scoring class's last selection; `Compact`: all selections from row 0,
    /// the rest -1. A batch (compact: the run) stops when its rows are full.
    fn run(&self, boxes: &[f32], scores: &[f32], idx: &mut [i64], count: &mut [i64]) {
        let w = if self.v4 { 1 } else { 3 };
        let (nb, nc, n) = (self.batches, self.classes, self.boxes);
        idx.fill(if self.compact { -1 } else { 0 });
        count.fill(0);
        let per = if self.compact {
            self.rows
        } else {
            self.rows / nb.max(1)
        };
        let mut out = 0usize;
        let mut total = 0i64;
        for b in 0..nb {
            if !self.compact {
                out = b * per;
            }
            let end = if self.compact {
                self.rows
            } else {
                (b + 1) * per
            };
            let bx = |j: usize| {
                let o = if self.v4 { j * 4 } else { (b * n + j) * 4 };
                &boxes[o..o + 4]
            };
            let first_score = scores.get(b * nc * n).copied().unwrap_or(0.0);
            let (mut min_score, mut min_class, mut min_box) = (first_score, 0i64, 0i64);
            let mut detected = 0i64;
            let mut full = false;
            for c in 0..nc {
                let s = &scores[(b * nc + c) * n..][..n];
                let first = out;
                let mut t = min_score;
                let mut picked = 0usize;
                let mut prev: Option<usize> = None;
                while self.limit.is_none_or(|l| picked < l) {
                    let mut best: Option<usize> = None;
                    for i in 0..n {
                        if !(s[i] > self.score) {
                            continue;
                        }
                        if let Some(p) = prev {
                            if !(s[i] < s[p] || (s[i] == s[p] && i > p)) {
                                continue;
                            }
                        }
                        if best.is_none_or(|q| s[i] > s[q] || (s[i] == s[q] && i < q)) {
                            best = Some(i);
                        }
                    }
                    let Some(cand) = best else { break };
                    prev = Some(cand);
                    let kept = (first..out).all(|r| {
                        let j = idx[r * w + w - 1] as usize;
                        !suppresses(bx(j), bx(cand), self.center, self.iou)
                    });
                    if !kept {
                        continue;
                    }
                    if out >= end {
                        full = true;
                        break;
                    }
                    if self.v4 {
                        idx[out] = cand as i64;
                    } else {
                        idx[out * 3..out * 3 + 3].copy_from_slice(&[
                            b as i64,
                            c as i64,
                            cand as i64,
                        ]);
                    }
                    out += 1;
                    picked += 1;
                    detected += 1;
                    t = s[cand];
                }
                if t < min_score {
                    min_score = t;
                    min_class = c as i64;
                    min_box = idx[(out - 1) * w + w - 1];
                }
                if full {
                    break;
                }
            }
            total += detected;
            if !self.compact {
                while out < end {
                    if self.v4 {
                        idx[out] = min_box;
                    } else {
                        idx[out * 3..out * 3 + 3].copy_from_slice(&[b as i64, min_class, min_box]);
                    }
                    out += 1;
                }
                let share = count.len() / nb.max(1);
                count[b * share..(b + 1) * share].fill(detected);
            } else if full {
                break;
            }
        }
        if self.compact {
            count.fill(total);
        }
    }
}

fn nms(x: &mut Exec) -> R {
    let v4 = x.m().get(m::IS_TF_VERSION4)?;
    let (bt, st, it) = (x.ty("Boxes")?, x.ty("Scores")?, x.ty("Indices")?);
    let (batches, classes, boxes) = if v4 {
        (1, 1, bt.dims[0] as usize)
    } else {
        (
            bt.dims[0] as usize,
            st.dims[1] as usize,
            bt.dims[1] as usize,
        )
    };
    let limit = if x.inst.operand_named("MaxOutputIn").is_some() {
        Some(x.ints("MaxOutputIn")?[0].max(0) as usize)
    } else {
        let l = x.m().get(m::MAX_OUTPUT_BOXES_PER_CLASS)?;
        (l > 0).then_some(l as usize)
    };
    let threshold = |x: &Exec, name: &str, member| -> Result<f32, BackendError> {
        if x.inst.operand_named(name).is_some() {
            Ok(x.f32s(name)?[0])
        } else {
            Ok(x.m().get(member)? as f32)
        }
    };
    let k = Nms {
        batches,
        classes,
        boxes,
        v4,
        center: x.m().get(m::CENTER_POINT_BOX)? != 0,
        limit,
        iou: threshold(x, "IouThresholdIn", m::IOU_THRESHOLD)?,
        score: threshold(x, "ScoreThresholdIn", m::SCORE_THRESHOLD)?,
        rows: it.dims[0] as usize,
        compact: x.m().get(m::COMPACT)?,
    };
    let (b, s) = (x.f32s("Boxes")?, x.f32s("Scores")?);
    let mut idx = x.scratch(it.size() as usize, 0i64)?;
    let mut count = x.scratch(x.ty("NumberOfSelectedIndices")?.size() as usize, 0i64)?;
    k.run(&b, &s, &mut idx, &mut count);
    x.put_ints("Indices", &idx)?;
    x.put_ints("NumberOfSelectedIndices", &count)
}

/// The most samples per bin side `roialign` takes from a box's size.
pub const MAX_SAMPLES: usize = 1024;

/// Samples per bin side from a box side: `ceil(side / bins)`, 0 for NaN or
/// less, at most [`MAX_SAMPLES`].
fn samples(side: f32, bins: usize) -> usize {
    let r = (side / bins as f32).ceil();
    if !(r > 0.0) {
        0
    } else if r > MAX_SAMPLES as f32 {
        MAX_SAMPLES
    } else {
        r as usize
    }
}

/// One bilinear sample: the four corners (row, column) and weights
/// (top, left, bottom, right); all zero outside the map (Glow's zero pad).
#[derive(Clone, Copy, Default)]
struct Sample {
    top: usize,
    left: usize,
    bottom: usize,
    right: usize,
    tw: f32,
    lw: f32,
    bw: f32,
    rw: f32,
}

fn sample(y: f32, x: f32, h: usize, w: usize) -> Sample {
    if !(y >= -1.0 && y <= h as f32 && x >= -1.0 && x <= w as f32) {
        return Sample::default();
    }
    let y = min(max(y, 0.0), (h - 1) as f32);
    let x = min(max(x, 0.0), (w - 1) as f32);
    let (top, left) = (y.floor() as usize, x.floor() as usize);
    let (bottom, right) = ((top + 1).min(h - 1), (left + 1).min(w - 1));
    let (bw, rw) = (y - top as f32, x - left as f32);
    Sample {
        top,
        left,
        bottom,
        right,
        tw: 1.0 - bw,
        lw: 1.0 - rw,
        bw,
        rw,
    }
}

/// Glow's ROIAlign (docs/gir.md, "Detection"): per box, its reference
/// corner and size (scaled, shifted by half a pixel when `Aligned`, at
/// least 1 x 1 otherwise), a grid of samples per output bin, each a
/// bilinear interpolation; the bin's mean or maximum. A box whose batch is
/// outside the map gives zeros.
fn roi_align(x: &mut Exec) -> R {
    let (rt, ft, bt) = (x.ty("Result")?, x.ty("FeatureMap")?, x.ty("Boxes")?);
    let mode = x.m().get(m::MODE)?;
    let aligned = x.m().get(m::ALIGNED)?;
    let rotated = x.m().get(m::ROTATED)?;
    let ratio = x.m().get(m::SAMPLING_RATIO)?.max(0) as usize;
    let scale = x.m().get(m::SPATIAL_SCALE)? as f32;
    let (n, h, w, c) = (
        ft.dims[0] as usize,
        ft.dims[1] as usize,
        ft.dims[2] as usize,
        ft.dims[3] as usize,
    );
    let (k, oh, ow) = (
        rt.dims[0] as usize,
        rt.dims[1] as usize,
        rt.dims[2] as usize,
    );
    let cols = bt.dims[1] as usize;
    let map = x.f32s("FeatureMap")?;
    let boxes = x.f32s("Boxes")?;
    let batch = x.ints("BatchIndices")?;
    let offset = if aligned { 0.5f32 } else { 0.0 };
    let mut out = x.scratch(rt.size() as usize, 0f32)?;
    for b in 0..k {
        let bx = &boxes[b * cols..(b + 1) * cols];
        let n_b: i64 = if cols == 4 && !rotated {
            batch[b]
        } else {
            // Truncated toward zero; NaN and out-of-range values are no batch.
            let v = bx[0];
            if v > -1.0 && v < n as f32 {
                v as i64
            } else {
                -1
            }
        };
        if n_b < 0 || n_b as u64 >= n as u64 || h == 0 || w == 0 {
            continue;
        }
        let first = if cols == 4 && !rotated { 0 } else { 1 };
        let (y_ref, x_ref, bh, bw);
        let (mut sin, mut cos, mut cy, mut cx) = (0f32, 0f32, 0f32, 0f32);
        if rotated {
            cx = bx[1] * scale - offset;
            cy = bx[2] * scale - offset;
            let (mut wd, mut ht) = (bx[3] * scale, bx[4] * scale);
            let theta = bx[5] * std::f32::consts::PI / 180.0;
            if !aligned {
                ht = max(ht, 1.0);
                wd = max(wd, 1.0);
            }
            (sin, cos) = (theta.sin(), theta.cos());
            y_ref = (-1.0 * ht) / 2.0;
            x_ref = (-1.0 * wd) / 2.0;
            (bh, bw) = (ht, wd);
        } else {
            let c0 = bx[first] * scale - offset;
            let c1 = bx[first + 1] * scale - offset;
            let mut c2 = bx[first + 2] * scale - offset;
            let mut c3 = bx[first + 3] * scale - offset;
            if !aligned {
                c2 = max(c2, c0 + 1.0);
                c3 = max(c3, c1 + 1.0);
            }
            y_ref = c1;
            x_ref = c0;
            (bh, bw) = (c3 - c1, c2 - c0);
        }
        let sh = if ratio > 0 { ratio } else { samples(bh, oh) };
        let sw = if ratio > 0 { ratio } else { samples(bw, ow) };
        let (bin_h, bin_w) = (bh / oh as f32, bw / ow as f32);
        let (step_h, step_w) = (bin_h / sh as f32, bin_w / sw as f32);
        let base = n_b as usize * h * w * c;
        let mut grid = x.room(sh * sw)?;
        for py in 0..oh {
            for px in 0..ow {
                grid.clear();
                for gy in 0..sh {
                    for gx in 0..sw {
                        let mut iy = y_ref + py as f32 * bin_h + (gy as f32 + 0.5) * step_h;
                        let mut ix = x_ref + px as f32 * bin_w + (gx as f32 + 0.5) * step_w;
                        if rotated {
                            let (yy, xx) = (iy, ix);
                            iy = yy * cos - xx * sin + cy;
                            ix = xx * cos + yy * sin + cx;
                        }
                        grid.push(sample(iy, ix, h, w));
                    }
                }
                for ch in 0..c {
                    let at = |r: usize, col: usize| map[base + (r * w + col) * c + ch];
                    let mut acc = 0f32;
                    for (i, g) in grid.iter().enumerate() {
                        let (tl, tr) = (at(g.top, g.left), at(g.top, g.right));
                        let (bl, br) = (at(g.bottom, g.left), at(g.bottom, g.right));
                        let v = match mode {
                            "ONNX_MAX" => {
                                let p = [
                                    tl * (g.tw * g.lw),
                                    tr * (g.tw * g.rw),
                                    bl * (g.bw * g.lw),
                                    br * (g.bw * g.rw),
                                ];
                                p[1..].iter().fold(p[0], |m, &q| if q > m { q } else { m })
                            }
                            _ => {
                                tl * (g.tw * g.lw)
                                    + tr * (g.tw * g.rw)
                                    + bl * (g.bw * g.lw)
                                    + br * (g.bw * g.rw)
                            }
                        };
                        acc = match mode {
                            "AVG" => acc + v,
                            "MAX" if i > 0 && !(acc < v) => acc,
                            "ONNX_MAX" if i > 0 && !(v > acc) => acc,
                            _ => v,
                        };
                    }
                    if mode == "AVG" {
                        acc = if grid.is_empty() {
                            0.0
                        } else {
                            acc / grid.len() as f32
                        };
                    }
                    out[((b * oh + py) * ow + px) * c + ch] = acc;
                }
            }
        }
    }
    x.put_f32s("Result", &out)
}
