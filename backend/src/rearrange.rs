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
    fn nearest_clamps_to_the_last_element() {
        assert_eq!(nearest(5, 2.0, 3), 2);
        assert_eq!(nearest(5, 1.5, 3), 2);
        assert_eq!(nearest(1, 0.5, 4), 2);
    }
}
