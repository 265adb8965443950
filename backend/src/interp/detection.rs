//! The interpreter's detection kernels (docs/gir.md, "Detection"), in the
//! operation order of the C functions in `emit/detection.c`.

// NaN decides these branches: `!(a < b)` is not `a >= b`, and the negated
// comparisons are the ones the C text makes.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::Exec;
use crate::error::BackendError;
use glow_ir::member as m;
use glow_ir::Opcode;

type R = Result<(), BackendError>;

pub fn exec(x: &mut Exec) -> R {
    match x.opcode() {
        Opcode::NonMaxSuppression => nms(x),
        Opcode::RoiAlign => roi_align(x),
        Opcode::BBoxTransform => bbox_transform(x),
        Opcode::Mfcc => mfcc(x),
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
            y_ref = -ht / 2.0;
            x_ref = -wd / 2.0;
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

/// A float truncated toward zero to an integer, saturating, NaN to 0 (as
/// Rust's `as` and `glow_det_trunc` in C).
fn trunc(v: f32) -> i64 {
    v as i64
}

/// `bboxtransform`'s bound on the log-space width and height deltas:
/// `ln(1000 / 16)` as f32 (Glow's `std::log(1000.0 / 16.0)`).
pub const BBOX_XFORM_CLIP: f32 = f32::from_bits(0x4084_5349);

/// The members of one `bboxtransform`.
struct BBox {
    weights: [f32; 4],
    apply_scale: bool,
    rotated: bool,
    bound_on: bool,
    bound_lo: i64,
    bound_hi: i64,
    thresh: f32,
    plus: f32,
}

/// One image's parameters: `1 / scale`, the scale the results take, its
/// sides.
struct Image {
    sbi: f32,
    scale_after: f32,
    ih: i64,
    iw: i64,
}

impl BBox {
    /// `d0 / w0`, `d1 / w1` and the size deltas bounded by
    /// [`BBOX_XFORM_CLIP`].
    fn deltas(&self, d: &[f32]) -> [f32; 4] {
        let q = |i: usize| d[i] / self.weights[i];
        [
            q(0),
            q(1),
            min(q(2), BBOX_XFORM_CLIP),
            min(q(3), BBOX_XFORM_CLIP),
        ]
    }

    /// Glow's `bbox_transform_upright` then `clip_boxes_upright` of one row
    /// (`r`: the roi's 4 values, `d` the class's deltas, `o` its output).
    fn upright(&self, r: &[f32], d: &[f32], o: &mut [f32], im: &Image) {
        let (p, sbi) = (self.plus, im.sbi);
        let w = r[2] * sbi - r[0] * sbi + p;
        let h = r[3] * sbi - r[1] * sbi + p;
        let cx = r[0] * sbi + 0.5 * w;
        let cy = r[1] * sbi + 0.5 * h;
        let [dx, dy, dw, dh] = self.deltas(d);
        let (pcx, pcy) = (dx * w + cx, dy * h + cy);
        let (pw, ph) = (dw.exp() * w, dh.exp() * h);
        let v = [
            pcx - 0.5 * pw,
            pcy - 0.5 * ph,
            pcx + 0.5 * pw - p,
            pcy + 0.5 * ph - p,
        ];
        let (wl, hl) = ((im.iw - p as i64) as f32, (im.ih - p as i64) as f32);
        for (j, lim) in [wl, hl, wl, hl].into_iter().enumerate() {
            o[j] = im.scale_after * max(min(v[j], lim), 0.0);
        }
    }

    /// Glow's `bbox_transform_rotated` then `clip_boxes_rotated` of one row.
    fn rotated(&self, r: &[f32], d: &[f32], o: &mut [f32], im: &Image) {
        let (p, sbi) = (self.plus, im.sbi);
        let pi = std::f32::consts::PI;
        let [dx, dy, dw, dh] = self.deltas(d);
        let da = d[4] * 180.0 / pi;
        o[0] = dx * r[2] * sbi + r[0] * sbi;
        o[1] = dy * r[3] * sbi + r[1] * sbi;
        o[2] = dw.exp() * r[2] * sbi;
        o[3] = dh.exp() * r[3] * sbi;
        o[4] = da + r[4];
        if self.bound_on {
            let period = self.bound_hi.wrapping_sub(self.bound_lo);
            let a = trunc(o[4]);
            if a < self.bound_lo {
                o[4] += period as f32;
            } else if a > self.bound_hi {
                o[4] -= period as f32;
            }
        }
        if o[4].abs() <= self.thresh {
            let (cx, cy, w, h) = (o[0], o[1], o[2], o[3]);
            let c = [
                cx - (w - p) / 2.0,
                cy - (h - p) / 2.0,
                cx + (w - p) / 2.0,
                cy + (h - p) / 2.0,
            ];
            let (wl, hl) = ((im.iw - p as i64) as f32, (im.ih - p as i64) as f32);
            let mut k = [0f32; 4];
            for (j, lim) in [wl, hl, wl, hl].into_iter().enumerate() {
                k[j] = 1.0 * max(min(c[j], lim), 0.0);
            }
            o[0] = (k[0] + k[2]) / 2.0;
            o[1] = (k[1] + k[3]) / 2.0;
            o[2] = k[2] - k[0] + p;
            o[3] = k[3] - k[1] + p;
        }
        for v in &mut o[..4] {
            *v *= im.scale_after;
        }
    }
}

/// An image side from `ImInfo`: `side / scale + 0.5` (in f64, as Glow),
/// truncated; NaN or negative is 0, at most `i32::MAX` (Glow's `int`).
fn image_side(side: f32, scale: f32) -> i64 {
    let v = (side / scale) as f64 + 0.5;
    if !(v >= 0.0) {
        0
    } else if v >= i32::MAX as f64 {
        i32::MAX as i64
    } else {
        v as i64
    }
}

/// Glow's BBoxTransform (docs/gir.md, "Detection"): per image, its rois
/// (consecutive rows, counted by their batch number) transformed by each
/// class's deltas and clipped to the image.
fn bbox_transform(x: &mut Exec) -> R {
    let weights = x.m().get(m::WEIGHTS)?;
    let k = BBox {
        weights: [0, 1, 2, 3].map(|i| weights.get(i).copied().unwrap_or(1.0) as f32),
        apply_scale: x.m().get(m::APPLY_SCALE)?,
        rotated: x.m().get(m::ROTATED)?,
        bound_on: x.m().get(m::ANGLE_BOUND_ON)?,
        bound_lo: x.m().get(m::ANGLE_BOUND_LO)?,
        bound_hi: x.m().get(m::ANGLE_BOUND_HI)?,
        thresh: x.m().get(m::CLIP_ANGLE_THRESH)? as f32,
        plus: if x.m().get(m::LEGACY_PLUS_ONE)? {
            1.0
        } else {
            0.0
        },
    };
    let (rt, dt, it) = (x.ty("Rois")?, x.ty("Deltas")?, x.ty("ImInfo")?);
    let d = if k.rotated { 5 } else { 4 };
    let (n, rc, dc, nb) = (
        rt.dims[0] as usize,
        rt.dims[1] as usize,
        dt.dims[1] as usize,
        it.dims[0] as usize,
    );
    let classes = dc / d;
    let (rois, deltas, info) = (x.f32s("Rois")?, x.f32s("Deltas")?, x.f32s("ImInfo")?);
    let mut counts = x.scratch(nb, 0usize)?;
    if rc == d {
        if let Some(c) = counts.first_mut() {
            *c = n;
        }
    } else {
        for i in 0..n {
            let id = trunc(rois[i * rc]);
            if id >= 0 && (id as u64) < nb as u64 {
                counts[id as usize] += 1;
            }
        }
    }
    let first = if rc == d { 0 } else { 1 };
    let mut out = x.scratch(n * dc, 0f32)?;
    let mut offset = 0usize;
    for (b, &rows) in counts.iter().enumerate() {
        let scale = info[b * 3 + 2];
        let im = Image {
            sbi: 1.0 / scale,
            scale_after: if k.apply_scale { scale } else { 1.0 },
            ih: image_side(info[b * 3], scale),
            iw: image_side(info[b * 3 + 1], scale),
        };
        for c in 0..classes {
            for i in offset..offset + rows {
                let r = &rois[i * rc + first..i * rc + first + d];
                let dl = &deltas[i * dc + c * d..i * dc + c * d + d];
                let o = &mut out[i * dc + c * d..i * dc + c * d + d];
                if k.rotated {
                    k.rotated(r, dl, o, &im);
                } else {
                    k.upright(r, dl, o, &im);
                }
            }
        }
        offset += rows;
    }
    let splits: Vec<f32> = counts.iter().map(|&c| c as f32).collect();
    x.put_f32s("BoxOut", &out)?;
    x.put_f32s("RoiBatchSplits", &splits)
}

/// `mfcc`'s logarithm of a zero power: that of the smallest normal float
/// (computed here, and given to the C kernel as this constant).
pub fn mfcc_log_zero() -> f32 {
    f32::MIN_POSITIVE.ln()
}

/// Glow's MFCC (docs/gir.md, "Audio"): per window, each mel bin's power
/// `sum sqrt(spectrogram[f]) * weight` over its frequency range (the
/// weights consumed in order across the bins), its `logf` (of the smallest
/// normal float for 0), then the DCT rows' sums of products, all from 0 in
/// index order. A frequency outside the row, or a weight past the end,
/// adds nothing (its weight is still consumed).
fn mfcc(x: &mut Exec) -> R {
    let (st, ot) = (x.ty("Spectrogram")?, x.ty("Coefficients")?);
    let (nw, ns) = (st.dims[0] as usize, st.dims[1] as usize);
    let nc = ot.dims[1] as usize;
    let spec = x.f32s("Spectrogram")?;
    let weights = x.f32s("MelWeights")?;
    let ranges = x.ints("MelRanges")?;
    let dct = x.f32s("DctMat")?;
    let f = ranges.len() / 2;
    let log_zero = mfcc_log_zero();
    let mut out = x.scratch(nw * nc, 0f32)?;
    let mut mel = x.scratch(f, 0f32)?;
    for w in 0..nw {
        let row = &spec[w * ns..(w + 1) * ns];
        let mut wi = 0usize;
        for (b, m) in mel.iter_mut().enumerate() {
            let (lo, hi) = (ranges[2 * b], ranges[2 * b + 1]);
            let mut p = 0f32;
            // Only the frequencies inside the row are visited; the weight
            // of frequency q is wi + (q - lo).
            for q in lo.max(0)..=hi.min(ns as i64 - 1) {
                let at = wi as i64 + (q - lo);
                if (at as u64) < weights.len() as u64 {
                    p += row[q as usize].sqrt() * weights[at as usize];
                }
            }
            if hi >= lo {
                wi += (hi - lo + 1) as usize;
            }
            *m = if p == 0.0 { log_zero } else { p.ln() };
        }
        for k in 0..nc {
            let mut acc = 0f32;
            for (n, &m) in mel.iter().enumerate() {
                acc += dct[k * f + n] * m;
            }
            out[w * nc + k] = acc;
        }
    }
    x.put_f32s("Coefficients", &out)
}
