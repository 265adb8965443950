//! Choosing quantization parameters from a profiled range: Glow's
//! `chooseQuantizationParams` (lib/Quantization/Base/Base.cpp) with its four
//! schemas, and its KL-divergence calibration (`optimizeKL`,
//! lib/Quantization/Base/Calibration.cpp) over a histogram re-binned to the
//! chosen range (`rescaleHistogram`, Profile.cpp). The arithmetic follows
//! Glow's, f32 where Glow computes in f32 and f64 where it uses `double`.

use glow_ir::ElemKind;

/// How a range becomes a scale and an offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schema {
    /// `[min, max]` (extended to hold 0) onto -128..127, any offset.
    Asymmetric,
    /// Centred at 0: offset 0, the range widened to `[-m, m]`-like.
    Symmetric,
    /// Symmetric, but a range with `min >= 0` uses `ui8` (offset 0, 0..255).
    SymmetricWithUint8,
    /// Symmetric with the scale rounded up to a power of two.
    SymmetricWithPower2Scale,
}

impl Schema {
    pub const NAMES: &'static [&'static str] = &[
        "asymmetric",
        "symmetric",
        "symmetric_with_uint8",
        "symmetric_with_power2_scale",
    ];

    pub fn parse(s: &str) -> Result<Schema, String> {
        Ok(match s {
            "asymmetric" => Schema::Asymmetric,
            "symmetric" => Schema::Symmetric,
            "symmetric_with_uint8" => Schema::SymmetricWithUint8,
            "symmetric_with_power2_scale" => Schema::SymmetricWithPower2Scale,
            _ => {
                return Err(format!(
                    "unknown quantization schema `{s}`; expected one of {}",
                    Schema::NAMES.join(", ")
                ))
            }
        })
    }
}

/// Whether the range is narrowed by KL minimization over the histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Calibration {
    None,
    KL,
}

impl Calibration {
    pub fn parse(s: &str) -> Result<Calibration, String> {
        match s {
            "none" => Ok(Calibration::None),
            "KL" | "kl" => Ok(Calibration::KL),
            _ => Err(format!(
                "unknown quantization calibration `{s}`; expected none or KL"
            )),
        }
    }
}

/// A chosen quantization: scale, offset and whether it is `ui8`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chosen {
    pub scale: f32,
    pub offset: i32,
    pub unsigned: bool,
}

impl Chosen {
    pub fn kind(self) -> ElemKind {
        if self.unsigned {
            ElemKind::UInt8Q {
                scale: self.scale,
                offset: self.offset,
            }
        } else {
            ElemKind::Int8Q {
                scale: self.scale,
                offset: self.offset,
            }
        }
    }
}

/// Glow's `chooseQuantizationParams` for an 8-bit kind: `i8` (-128..127),
/// or `ui8` (0..255) under `SymmetricWithUint8` when `min >= 0`.
/// `histogram` (over `[min, max]`) is used only by KL calibration.
pub fn choose(
    min: f32,
    max: f32,
    histogram: &[f32],
    schema: Schema,
    calibration: Calibration,
) -> Chosen {
    let (prof_min, prof_max) = (min, max);
    let (mut qmin, mut qmax) = (-128i64, 127i64);
    let mut min = min.min(0.0);
    let mut max = max.max(0.0);
    let mut schema = schema;
    let mut unsigned = false;
    if schema == Schema::SymmetricWithUint8 {
        if min >= 0.0 {
            unsigned = true;
            qmin = 0;
            qmax = 255;
        } else {
            schema = Schema::Symmetric;
        }
    }
    if matches!(schema, Schema::Symmetric | Schema::SymmetricWithPower2Scale) {
        (min, max) = glow_ir::quant::symmetric_range(min, max, qmin, qmax);
    }
    min = min.max(f32::MIN);
    max = max.min(f32::MAX);
    if prof_min != prof_max && min != max && calibration == Calibration::KL {
        let rescaled = rescale_histogram(histogram, prof_min, prof_max, min, max);
        let symmetric = matches!(schema, Schema::Symmetric | Schema::SymmetricWithPower2Scale);
        let (lo, hi) = optimize_kl(&rescaled, min, max, 255, symmetric);
        min = lo;
        max = hi;
    }
    let mut scale = (max as f64 - min as f64) / (qmax - qmin) as f64;
    if scale == 0.0 {
        scale = 0.1;
    }
    let zp_min = qmin as f64 - min as f64 / scale;
    let zp_max = qmax as f64 - max as f64 / scale;
    let err_min = (qmin as f64).abs() + (min as f64 / scale).abs();
    let err_max = (qmax as f64).abs() + (max as f64 / scale).abs();
    let mut zp = if err_min < err_max { zp_min } else { zp_max };
    if (max + min).abs() <= f32::EPSILON {
        zp = 0.0;
    }
    let offset = if zp < qmin as f64 {
        qmin
    } else if zp > qmax as f64 {
        qmax
    } else {
        zp.round() as i64
    };
    if schema == Schema::SymmetricWithPower2Scale {
        scale = scale.log2().ceil().exp2();
    }
    // The symmetric schemas map 0 to 0 (Glow asserts it); the clamp above
    // can only move an offset that was already 0 or at a bound.
    let offset =
        if matches!(schema, Schema::Symmetric | Schema::SymmetricWithPower2Scale) || unsigned {
            if unsigned {
                0
            } else {
                offset.clamp(qmin, qmax)
            }
        } else {
            offset
        };
    Chosen {
        scale: scale as f32,
        offset: offset as i32,
        unsigned,
    }
}

/// Glow's `rescaleHistogram`: redistributes `src` (over `[src_min, src_max]`)
/// into as many bins over `[dest_min, dest_max]`, by overlap, in whole counts.
pub fn rescale_histogram(
    src: &[f32],
    src_min: f32,
    src_max: f32,
    dest_min: f32,
    dest_max: f32,
) -> Vec<f32> {
    let n = src.len();
    if n == 0 || (src_min == dest_min && src_max == dest_max) {
        return src.to_vec();
    }
    if !(src_min < src_max && dest_min < dest_max) {
        return src.to_vec();
    }
    let src_w = (src_max - src_min) / n as f32;
    let dest_w = (dest_max - dest_min) / n as f32;
    let mut dest = vec![0f32; n];
    for (i, &val) in src.iter().enumerate() {
        if val == 0.0 {
            continue;
        }
        let s_start = src_min + i as f32 * src_w;
        let s_stop = src_min + (i + 1) as f32 * src_w;
        let d_start = ((s_start - dest_min) / dest_w).floor().max(0.0) as usize;
        let d_stop = ((s_stop - dest_min) / dest_w).ceil().max(0.0) as usize;
        let d_start = d_start.min(n - 1);
        let d_stop = d_stop.min(n - 1);
        let mut rem = val;
        for (d, slot) in dest.iter_mut().enumerate().take(d_stop + 1).skip(d_start) {
            let b_start = dest_min + d as f32 * dest_w;
            let b_stop = dest_min + (d + 1) as f32 * dest_w;
            let ov = (s_stop.min(b_stop) - s_start.max(b_start)) / src_w;
            let ov = ov.clamp(0.0, 1.0);
            let v = (ov * val).round().min(rem);
            *slot += v;
            rem -= v;
        }
    }
    dest
}

/// Glow's `conditionHistogram`: zero bins get `eps`, the others give it back.
fn condition(h: &mut [f32]) {
    const EPS_ZERO: f32 = 0.0001;
    let zeros = h.iter().filter(|&&x| x == 0.0).count();
    if h.is_empty() || zeros == h.len() {
        return;
    }
    let eps_nz = EPS_ZERO * zeros as f32 / (h.len() - zeros) as f32;
    if eps_nz >= 1.0 {
        return;
    }
    for x in h.iter_mut() {
        if *x == 0.0 {
            *x += EPS_ZERO;
        } else {
            *x -= eps_nz;
        }
    }
}

/// Glow's `computeKL`: the relative entropy of P to Q, both normalized.
fn kl(p: &mut [f32], q: &mut [f32]) -> f32 {
    let sp: f32 = p.iter().sum();
    let sq: f32 = q.iter().sum();
    if sp == 0.0 || sq == 0.0 {
        return 0.0;
    }
    let mut d = 0f32;
    for (a, b) in p.iter_mut().zip(q.iter_mut()) {
        *a /= sp;
        *b /= sq;
        if *a > 0.0 && *b > 0.0 {
            d += *a * (*a / *b).ln();
        }
    }
    d
}

/// Glow's `optimizeKL`: shrinks the window `[start, stop]` of `hist` (over
/// `[min, max]`) while it holds at least `qbins` bins, saturating what falls
/// outside into its end bins (P), comparing with the window merged into
/// `qbins` bins and expanded back (Q), and returns the thresholds of the
/// window with the smallest KL(P||Q). Symmetric windows shrink from both
/// ends; asymmetric ones from the end that loses the fewest counts. A
/// histogram with fewer than `qbins` bins keeps its range.
pub fn optimize_kl(hist: &[f32], min: f32, max: f32, qbins: usize, symmetric: bool) -> (f32, f32) {
    let n = hist.len();
    if n == 0 || n < qbins || qbins == 0 || min >= max {
        return (min, max);
    }
    let width = (max - min) / n as f32;
    let mut best = f32::INFINITY;
    let (mut lo, mut hi) = (min, max);
    let (mut start, mut stop) = (0usize, n - 1);
    while stop >= start && stop - start + 1 >= qbins {
        let size = stop - start + 1;
        let win = &hist[start..=stop];
        let mut p = vec![0f32; size];
        p[0] += hist[..=start].iter().sum::<f32>();
        p[1..size - 1].copy_from_slice(&hist[start + 1..stop]);
        p[size - 1] += hist[stop..].iter().sum::<f32>();
        let merged = size / qbins;
        let mut q = vec![0f32; size];
        for k in 0..qbins {
            let a = k * merged;
            let b = if k < qbins - 1 { a + merged } else { size };
            let sum: f32 = win[a..b].iter().sum();
            let norm = win[a..b].iter().filter(|&&x| x != 0.0).count();
            if norm != 0 {
                for idx in a..b {
                    if p[idx] != 0.0 {
                        q[idx] = sum / norm as f32;
                    }
                }
            }
        }
        condition(&mut p);
        condition(&mut q);
        let d = kl(&mut p, &mut q);
        if d < best {
            best = d;
            lo = min + start as f32 * width;
            hi = min + (stop + 1) as f32 * width;
        }
        if symmetric {
            start += 1;
            if stop == 0 {
                break;
            }
            stop -= 1;
        } else {
            let symm = hist[start] + hist[stop];
            let left = hist[start] + hist[start + 1];
            let right = hist[stop] + hist[stop - 1];
            // `min_element`: the first of equal losses.
            if symm <= left && symm <= right {
                start += 1;
                stop -= 1;
            } else if left <= right {
                start += 2;
            } else {
                stop -= 2;
            }
        }
    }
    if symmetric && min < 0.0 && max > 0.0 && lo < 0.0 && hi > 0.0 {
        let rmin = lo as f64 / min as f64;
        let rmax = hi as f64 / max as f64;
        if rmin > rmax {
            hi = (rmin * max as f64) as f32;
        } else {
            lo = (rmax * min as f64) as f32;
        }
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(min: f32, max: f32, s: Schema) -> Chosen {
        choose(min, max, &[], s, Calibration::None)
    }

    #[test]
    fn asymmetric_extends_the_range_to_zero() {
        // [0.5, 2.55] becomes [0, 2.55]: scale 0.01, 0 at -128.
        let p = c(0.5, 2.55, Schema::Asymmetric);
        assert!((p.scale - 0.01).abs() < 1e-7, "{p:?}");
        assert_eq!((p.offset, p.unsigned), (-128, false));
        // [-1, 1]: min == -max, so the offset is forced to 0.
        let p = c(-1.0, 1.0, Schema::Asymmetric);
        assert_eq!(p.offset, 0);
        assert!((p.scale - 2.0 / 255.0).abs() < 1e-7);
        // [-3, 1]: scale 4/255, 0 at 127 - 1/scale = 63.25 -> 63.
        let p = c(-3.0, 1.0, Schema::Asymmetric);
        assert!((p.scale - 4.0 / 255.0).abs() < 1e-7);
        assert_eq!(p.offset, 63);
    }

    #[test]
    fn symmetric_centres_at_zero() {
        // max/127 > min/-128: min = -128/127 * 2.54; scale = 2.54/127 = 0.02.
        let p = c(-1.0, 2.54, Schema::Symmetric);
        assert!((p.scale - 0.02).abs() < 1e-6, "{p:?}");
        assert_eq!(p.offset, 0);
        // All negative: [-2.56, 0] -> max = 2.56 * 127/128, scale 0.02.
        let p = c(-2.56, -1.0, Schema::Symmetric);
        assert!((p.scale - 0.02).abs() < 1e-6, "{p:?}");
        assert_eq!(p.offset, 0);
    }

    #[test]
    fn symmetric_with_uint8_uses_ui8_for_non_negative_ranges() {
        let p = c(0.0, 2.55, Schema::SymmetricWithUint8);
        assert!(p.unsigned);
        assert_eq!(p.offset, 0);
        assert!((p.scale - 0.01).abs() < 1e-7);
        assert!(matches!(p.kind(), ElemKind::UInt8Q { .. }));
        // A negative minimum falls back to symmetric i8.
        let p = c(-0.1, 2.54, Schema::SymmetricWithUint8);
        assert!(!p.unsigned);
        assert_eq!(p.offset, 0);
    }

    #[test]
    fn power2_rounds_the_scale_up() {
        let p = c(-1.0, 2.54, Schema::SymmetricWithPower2Scale);
        assert_eq!(p.scale, 0.03125); // 0.02 -> 2^-5
        assert_eq!(p.offset, 0);
    }

    #[test]
    fn an_all_zero_range_gets_scale_point_one() {
        let p = c(0.0, 0.0, Schema::Asymmetric);
        assert_eq!(p.scale, 0.1f32);
    }

    #[test]
    fn rescaling_keeps_the_total_count() {
        let h: Vec<f32> = (0..100).map(|i| (i % 7) as f32).collect();
        let total: f32 = h.iter().sum();
        // Glow distributes whole counts only, so a split bin may lose its
        // rounding remainder; never more than it had.
        let r = rescale_histogram(&h, -1.0, 3.0, -2.0, 4.0);
        let sum = r.iter().sum::<f32>();
        assert!(sum <= total && sum >= 0.95 * total, "{sum} {total}");
        // Same bin width, shifted by whole bins: exact.
        let r = rescale_histogram(&[1.0, 2.0, 3.0, 4.0], 0.0, 4.0, -1.0, 3.0);
        assert_eq!(r, vec![0.0, 1.0, 2.0, 3.0]);
        // Doubling the range moves bin i's counts to about bin i/2 + offset.
        let r = rescale_histogram(&[0.0, 0.0, 0.0, 8.0], 0.0, 4.0, 0.0, 8.0);
        assert_eq!(r, vec![0.0, 8.0, 0.0, 0.0]);
    }

    #[test]
    fn kl_keeps_a_uniform_range_and_clips_a_long_tail() {
        // Any histogram: the window stays inside the range and holds at
        // least `qbins` bins.
        let h: Vec<f32> = (0..1000).map(|i| ((i * 37) % 11) as f32).collect();
        let (lo, hi) = optimize_kl(&h, 0.0, 10.0, 255, false);
        assert!(
            lo >= 0.0 && hi <= 10.0 && hi - lo >= 2.55 - 1e-4,
            "{lo} {hi}"
        );
        // Mass in [0, 1] that varies from bin to bin and a single outlier at
        // 10: 255 quantized bins over the whole range merge 3 bins each and
        // lose the variation, so the range is clipped to a window of at
        // most 510 bins (where each bin keeps its own count).
        let mut h = vec![0.0f32; 1000];
        for (i, x) in h.iter_mut().take(100).enumerate() {
            *x = 100.0 + 400.0 * (i % 3) as f32;
        }
        h[999] = 1.0;
        let (lo, hi) = optimize_kl(&h, 0.0, 10.0, 255, false);
        assert_eq!(lo, 0.0);
        assert!(hi <= 5.1, "{hi}");
        // A uniform block is represented exactly at any width: KL keeps the
        // first (widest) window, as Glow does.
        let mut h = vec![0.0f32; 1000];
        for x in h.iter_mut().take(99) {
            *x = 1000.0;
        }
        h[999] = 1.0;
        assert_eq!(optimize_kl(&h, 0.0, 10.0, 255, false), (0.0, 10.0));
        // Fewer bins than quantized bins: the range is kept.
        assert_eq!(optimize_kl(&[1.0; 10], -1.0, 1.0, 255, true), (-1.0, 1.0));
    }

    #[test]
    fn kl_symmetric_keeps_the_ratio_of_the_ends() {
        let mut h = vec![0.0f32; 2000];
        for (i, x) in h.iter_mut().enumerate() {
            let c = (i as f32 - 1000.0) / 60.0;
            *x = (1e4 * (-c * c / 2.0).exp()).round();
        }
        h[0] = 1.0;
        h[1999] = 1.0;
        let (lo, hi) = optimize_kl(&h, -10.0, 10.0, 255, true);
        assert!(hi < 9.0 && hi > 0.5, "{hi}");
        assert!((lo + hi).abs() < 1e-4, "{lo} {hi}");
        let p = choose(-10.0, 10.0, &h, Schema::Symmetric, Calibration::KL);
        assert!(p.scale < 10.0 / 127.0, "{p:?}");
    }
}
