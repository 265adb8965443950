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
