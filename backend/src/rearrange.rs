//! The index arithmetic of the rearranging instructions (`pad`,
//! `resizenearest`, `resizebilinear`, `flip`), computed once for both
//! engines: per dimension, which source coordinate each output coordinate
//! reads. The interpreter walks these maps and the C kernels read them as
//! static tables, so the engines cannot disagree on an index or a weight.

use glow_ir::Type;

/// A map's entry for an output coordinate that reads no source element
/// (`pad`'s constant border).
pub const FILL: i64 = -1;

/// Source coordinate of output coordinate `o` of a dimension of `n`
/// elements padded by `before`, in padding mode `mode` (0 constant,
/// 1 reflect, 2 edge, 3 wrap), as numpy's `pad` computes it.
fn pad_coord(o: i64, n: i64, before: i64, mode: i64) -> i64 {
    let i = o - before;
    if (0..n).contains(&i) {
        return i;
    }
    match mode {
        // Reflect about the first and last elements (no repeat of them);
        // one element reflects onto itself.
        1 if n == 1 => 0,
        1 => {
            let period = 2 * (n - 1);
            let r = i.rem_euclid(period);
            if r < n {
                r
            } else {
                period - r
            }
        }
        2 => i.clamp(0, n - 1),
        3 => i.rem_euclid(n),
        _ => FILL,
    }
}

/// `pad`: per dimension of `dest`, the source coordinate of each output
/// coordinate (`FILL` for the constant border).
pub fn pad_maps(src: &Type, dest: &Type, pads: &[i64], mode: i64) -> Vec<Vec<i64>> {
    let r = src.dims.len();
    (0..r)
        .map(|k| {
            let n = src.dims[k] as i64;
            let before = pads.get(k).copied().unwrap_or(0);
            (0..dest.dims[k] as i64)
                .map(|o| pad_coord(o, n, before, mode))
                .collect()
        })
        .collect()
}

/// `flip`: the reversed coordinates on `axis`, the identity elsewhere.
pub fn flip_maps(t: &Type, axis: usize) -> Vec<Vec<i64>> {
    t.dims
        .iter()
        .enumerate()
        .map(|(k, &n)| {
            let n = n as i64;
            (0..n)
                .map(|o| if k == axis { n - 1 - o } else { o })
                .collect()
        })
        .collect()
}

/// Outer, along and inner extents of `Dim` (negative: from the end).
pub fn cumsum_extents(dims: &[u64], dim: i64) -> (u64, u64, u64) {
    let r = dims.len() as i64;
    let k = if dim < 0 { dim + r } else { dim }.clamp(0, r - 1) as usize;
    crate::emit::split(dims, k)
}

/// Dimensions as (extent, source stride) pairs.
pub type Axes = Vec<(u64, u64)>;

/// `mean`: the (extent, source stride) of each kept dimension and of each
/// averaged one, both in ascending dimension order, and the count of
/// averaged elements. A `Dest` element is the sum over the averaged
/// coordinates in row-major order (so in ascending source index) from
/// `+0.0f`, divided by the count; `Dest` is in the kept dimensions'
/// row-major order.
pub fn mean_axes(src: &Type, dims: &[i64]) -> (Axes, Axes, u64) {
    let st = src.strides();
    let (mut kept, mut avg) = (Vec::new(), Vec::new());
    for (k, (&n, &s)) in src.dims.iter().zip(&st).enumerate() {
        if dims.contains(&(k as i64)) {
            avg.push((n, s));
        } else {
            kept.push((n, s));
        }
    }
    let count = avg.iter().map(|&(n, _)| n).product();
    (kept, avg, count)
}

/// Glow's nearest source coordinate: `min(dim_t(o / scale), n - 1)`, the
/// division in `float`.
fn nearest(o: u64, scale: f32, n: u64) -> u64 {
    ((o as f32 / scale) as u64).min(n - 1)
}

/// `resizenearest`: per dimension, Glow's nearest source coordinate.
pub fn nearest_maps(src: &Type, dest: &Type, scale: &[f64]) -> Vec<Vec<i64>> {
    src.dims
        .iter()
        .zip(&dest.dims)
        .zip(scale)
        .map(|((&n, &m), &s)| (0..m).map(|o| nearest(o, s as f32, n) as i64).collect())
        .collect()
}

/// One output coordinate of `resizebilinear` along H or W: the two source
/// coordinates and the weight of the second (Glow's `ihf - ih`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lerp {
    pub i0: u64,
    pub i1: u64,
    pub frac: f32,
}

/// `resizebilinear` along one dimension of `n` source elements resized to
/// `m` by `scale`: `f = o / scale` in `float`, `i = dim_t(f)`, the two
/// neighbours clamped to the last element, the weight `f - i`.
pub fn lerps(n: u64, m: u64, scale: f64) -> Vec<Lerp> {
    (0..m)
        .map(|o| {
            let f = o as f32 / scale as f32;
            let i = f as u64;
            Lerp {
                i0: i.min(n - 1),
                i1: (i + 1).min(n - 1),
                frac: f - i as f32,
            }
        })
        .collect()
}

/// `adaptiveavgpool` along one dimension of `n` inputs pooled to `m`:
/// each output's first input and window length, PyTorch's
/// `floor(a * n / m)` to `ceil((a + 1) * n / m)` with the products in
/// integers and the quotients in `float`, as Glow computes them.
pub fn adaptive_windows(m: u64, n: u64) -> Vec<(u64, u64)> {
    (0..m)
        .map(|a| {
            // Clamped so float rounding never leaves the input or empties a window.
            let start = (((a * n) as f32 / m as f32).floor() as u64).min(n - 1);
            let end = ((((a + 1) * n) as f32 / m as f32).ceil() as u64).clamp(start + 1, n);
            (start, end - start)
        })
        .collect()
}

/// splitmix64's finalizer.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `k`-th uniform number in (0, 1] of `seed`: the top 24 bits of
/// splitmix64 at counter `k + 1`, plus one, over 2^24 (exact in `float`).
pub fn uniform(seed: u64, k: u64) -> f32 {
    let r = mix(seed.wrapping_add(k.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    ((r >> 40) + 1) as f32 / 16_777_216.0
}

/// The seed of `gaussianfill`: `Seed`'s integer part, as two's complement.
pub fn seed_of(seed: f64) -> u64 {
    seed.trunc() as i64 as u64
}

/// Element `i` of `gaussianfill`: Box-Muller over the uniform pair
/// `2 * (i / 2)`, `2 * (i / 2) + 1` (cosine for even `i`, sine for odd),
/// in `float` with libm's `logf`, `cosf`, `sinf` as the C kernel calls them.
pub fn gaussian(seed: u64, i: u64, mean: f32, scale: f32) -> f32 {
    let p = i / 2 * 2;
    let (u1, u2) = (uniform(seed, p), uniform(seed, p + 1));
    let r = (-2.0f32 * u1.ln()).sqrt();
    let t = TWO_PI * u2;
    let z = if i % 2 == 1 { r * t.sin() } else { r * t.cos() };
    mean + scale * z
}

/// 2π in `float`.
pub const TWO_PI: f32 = std::f32::consts::TAU;

/// The C text of [`mix`] and [`gaussian`] (per instruction, so names are local).
pub const GAUSSIAN_C: &str = "const uint64_t p = i / 2u * 2u; \
     uint64_t z1 = seed + (p + 1u) * 0x9E3779B97F4A7C15ull, z2 = seed + (p + 2u) * 0x9E3779B97F4A7C15ull; \
     z1 = (z1 ^ (z1 >> 30)) * 0xBF58476D1CE4E5B9ull; z1 = (z1 ^ (z1 >> 27)) * 0x94D049BB133111EBull; z1 ^= z1 >> 31; \
     z2 = (z2 ^ (z2 >> 30)) * 0xBF58476D1CE4E5B9ull; z2 = (z2 ^ (z2 >> 27)) * 0x94D049BB133111EBull; z2 ^= z2 >> 31; \
     const float u1 = (float)((z1 >> 40) + 1u) / 16777216.0f, u2 = (float)((z2 >> 40) + 1u) / 16777216.0f; \
     const float r = sqrtf(-2.0f * logf(u1)), t = TWO_PI * u2; \
     Dest[i] = mean + scale * ((i & 1u) ? r * sinf(t) : r * cosf(t));";

/// Glow's bilinear blend of the four neighbours, in its order of
/// operations: along H first (`v00 + (v10 - v00) * fh`), then along W.
pub fn blend(v00: f32, v01: f32, v10: f32, v11: f32, fh: f32, fw: f32) -> f32 {
    let hd = v00 + (v10 - v00) * fh;
    let hw = v01 + (v11 - v01) * fh;
    hd + (hw - hd) * fw
}

/// The C text of [`blend`] over the same names.
pub const BLEND_C: &str = "const float hd = v00 + (v10 - v00) * fh; \
     const float hw = v01 + (v11 - v01) * fh; \
     Dest[o] = hd + (hw - hd) * fw;";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_modes_follow_numpy() {
        // np.pad([0, 1, 2], 4, mode=...) source indices.
        let coords = |mode| {
            (0..11)
                .map(|o| pad_coord(o, 3, 4, mode))
                .collect::<Vec<_>>()
        };
        assert_eq!(coords(0), [-1, -1, -1, -1, 0, 1, 2, -1, -1, -1, -1]);
        assert_eq!(coords(1), [0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2]);
        assert_eq!(coords(2), [0, 0, 0, 0, 0, 1, 2, 2, 2, 2, 2]);
        assert_eq!(coords(3), [2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]);
        // Negative pads crop.
        assert_eq!(pad_coord(0, 5, -2, 0), 2);
    }

    #[test]
    fn gaussian_samples_have_the_asked_moments() {
        let n = 100_000u64;
        let v: Vec<f64> = (0..n).map(|i| gaussian(5, i, 2.0, 3.0) as f64).collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 2.0).abs() < 0.05, "{mean}");
        assert!((var.sqrt() - 3.0).abs() < 0.05, "{}", var.sqrt());
        // About 68% within one deviation, as a normal distribution has.
        let within = v.iter().filter(|x| (**x - 2.0).abs() < 3.0).count() as f64 / n as f64;
        assert!((within - 0.6827).abs() < 0.01, "{within}");
        assert_ne!(gaussian(5, 0, 0.0, 1.0), gaussian(6, 0, 0.0, 1.0));
        assert_eq!(seed_of(-1.5), u64::MAX);
    }

    #[test]
    fn nearest_clamps_to_the_last_element() {
        assert_eq!(nearest(5, 2.0, 3), 2);
        assert_eq!(nearest(5, 1.5, 3), 2);
        assert_eq!(nearest(1, 0.5, 4), 2);
    }
}
