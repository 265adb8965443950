//! Quantized arithmetic, defined once (docs/quantization.md).
//!
//! A quantized value `q` of a type with scale `S` and offset `O` stands for
//! `S * (q - O)`. Every quantized kernel of both engines is integer-only:
//! products accumulate `(x - Ox) * (w - Ow)` in 64 bits and keep the low 32
//! bits (two's complement), and a result moves to another scale through a
//! [`Multiplier`] (an integer and a right shift) derived here, at compile
//! time, from the ratio of the scales. The interpreter calls these functions
//! and the C emitter writes the constants they return, so the two engines
//! agree bit for bit by construction.

use crate::activation::FusedActivation;
use crate::types::ElemKind;

/// The largest right shift a [`Multiplier`] uses.
pub const MAX_SHIFT: u32 = 62;

/// A non-negative real ratio `r` as `mult * 2^-shift`, `mult` below `2^31`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Multiplier {
    pub mult: i64,
    pub shift: u32,
}

/// `v * 2^-shift` rounded to nearest, ties toward positive infinity:
/// `(v + 2^(shift-1)) >> shift` with an arithmetic (flooring) shift.
pub fn round_shift(v: i64, shift: u32) -> i64 {
    if shift == 0 {
        v
    } else {
        (v + (1i64 << (shift - 1))) >> shift
    }
}

/// The exponent `e` with `2^e <= r < 2^(e+1)`, exactly (r finite, > 0).
fn exponent(r: f64) -> i32 {
    let bits = r.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i32;
    if e == 0 {
        // Subnormal: the leading one is in the mantissa.
        let man = bits & ((1u64 << 52) - 1);
        -1074 + (63 - man.leading_zeros() as i32)
    } else {
        e - 1023
    }
}

impl Multiplier {
    /// The multiplier of `r`: `mult = round(r * 2^shift)` with the largest
    /// shift (at most [`MAX_SHIFT`]) that keeps `mult` below `2^31`, so the
    /// relative error is at most `2^-31` when `r >= 2^-32`. `None` when `r`
    /// is negative, not finite, or at least `2^31`.
    pub fn from_ratio(r: f64) -> Option<Multiplier> {
        if !r.is_finite() || r < 0.0 || r >= 2f64.powi(31) {
            return None;
        }
        if r == 0.0 {
            return Some(Multiplier { mult: 0, shift: 0 });
        }
        // 2^30 <= r * 2^shift < 2^31.
        let shift = (30 - exponent(r)).clamp(0, MAX_SHIFT as i32) as u32;
        let mut m = (r * 2f64.powi(shift as i32)).round() as i64;
        let mut shift = shift;
        if m >= 1i64 << 31 {
            // Rounded up to 2^31: the same value with one bit less.
            m >>= 1;
            if shift == 0 {
                return None;
            }
            shift -= 1;
        }
        Some(Multiplier { mult: m, shift })
    }

    /// `acc * r`, rounded by [`round_shift`]. `acc` must fit 32 bits (signed)
    /// for the product to stay inside 64.
    pub fn apply(self, acc: i64) -> i64 {
        round_shift(acc * self.mult, self.shift)
    }

    /// The real value this multiplier stands for.
    pub fn value(self) -> f64 {
        self.mult as f64 * 2f64.powi(-(self.shift as i32))
    }
}

/// Two ratios sharing one shift (quantized `elementadd`/`elementsub`): each
/// side is scaled by its integer and the sum is shifted once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairMultiplier {
    pub a: i64,
    pub b: i64,
    pub shift: u32,
}

impl PairMultiplier {
    pub fn from_ratios(ra: f64, rb: f64) -> Option<PairMultiplier> {
        let m = Multiplier::from_ratio(ra.max(rb))?;
        Multiplier::from_ratio(ra.min(rb))?;
        let scaled = |r: f64| (r * 2f64.powi(m.shift as i32)).round() as i64;
        Some(PairMultiplier {
            a: scaled(ra),
            b: scaled(rb),
            shift: m.shift,
        })
    }

    /// `round_shift(da * a + db * b, shift)`; `da`, `db` fit 17 bits.
    pub fn apply(self, da: i64, db: i64) -> i64 {
        round_shift(da * self.a + db * self.b, self.shift)
    }
}

/// The low 32 bits of `v`, sign-extended: the accumulator's wrap-around.
pub fn wrap32(v: i64) -> i64 {
    v as i32 as i64
}

/// `v` clamped to `[lo, hi]`.
pub fn saturate(v: i64, lo: i64, hi: i64) -> i64 {
    v.clamp(lo, hi)
}

/// `q = clamp(round_half_even(x / scale) + offset)`, the division in f32 and
/// the sum in f64 (exact); NaN gives the lowest value. As ONNX's
/// QuantizeLinear.
pub fn quantize(x: f32, scale: f32, offset: i32, range: (i64, i64)) -> i64 {
    let r = ((x / scale) as f64).round_ties_even() + offset as f64;
    if r > range.1 as f64 {
        range.1
    } else if r >= range.0 as f64 {
        r as i64
    } else {
        range.0
    }
}

/// `real = scale * (q - offset)` in f32.
pub fn dequantize(q: i64, scale: f32, offset: i32) -> f32 {
    scale * ((q - offset as i64) as f32)
}

/// Glow's symmetric widening of a range `[min, max]` that holds 0 (the
/// `Symmetric` schema of `chooseQuantizationParams`): the end that reaches
/// its bound of `qmin..qmax` sooner fixes the scale and the other end moves
/// so that 0 maps to 0. The ratios in f64, the moved end rounded to f32.
pub fn symmetric_range(min: f32, max: f32, qmin: i64, qmax: i64) -> (f32, f32) {
    let rmin = min as f64 / qmin as f64;
    let rmax = max as f64 / qmax as f64;
    if rmin > rmax {
        (min, (rmin * qmax as f64) as f32)
    } else {
        ((rmax * qmin as f64) as f32, max)
    }
}

/// The `i8` scale Glow's dynamic quantization gives a row of float values
/// (`chooseQuantizationParams` with the `Symmetric` schema; the offset is
/// 0): the row's range without NaN, extended to hold 0, widened by
/// [`symmetric_range`], its ends clamped to finite values, then
/// `(max - min) / 255` in f64 rounded to f32 (0.1 when that is 0).
/// The C kernel `glow_qdyn_scale` computes the same, step by step.
pub fn dynamic_scale(row: &[f32]) -> f32 {
    let (mut lo, mut hi) = (0f32, 0f32);
    for &x in row {
        // NaN compares false and is left out.
        if x < lo {
            lo = x;
        }
        if x > hi {
            hi = x;
        }
    }
    let (lo, hi) = symmetric_range(lo, hi, -128, 127);
    let (lo, hi) = (lo.max(f32::MIN), hi.min(f32::MAX));
    // 0.1 also when a subnormal row's scale rounds to 0 in f32 (Glow
    // tests the f64 and would divide by 0).
    let s = ((hi as f64 - lo as f64) / 255.0) as f32;
    if s == 0.0 {
        0.1
    } else {
        s
    }
}

/// Adds one tensor's values to a running profile, Glow's
/// `generateTensorHistogram` (lib/Quantization/Base/Profile.cpp): `hist`
/// holds counts in equal bins over `[min, max]`; `min > max` means nothing
/// was seen yet (Glow starts at `[f32::MAX, f32::MIN]`), and the first
/// tensor sets the range. A tensor outside the range widens it and re-bins
/// the counts into as many bins over the new range (each old bin's count
/// split over the at most two new bins it overlaps, in proportion, rounded
/// half away from zero); then each value adds 1 to bin `(x - min) / width`
/// (the last bin closed). NaN and infinities are left out (Glow asserts
/// there are none). Every step is f32 arithmetic in this order; the C
/// kernel `glow_qprofile` is the same steps.
pub fn profile_update(values: &[f32], hist: &mut [f32], min: &mut f32, max: &mut f32) {
    // Plain comparisons throughout (not f32::min, whose choice between
    // -0.0 and 0.0 is unspecified), as the C kernel's.
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &x in values.iter().filter(|x| x.is_finite()) {
        if x < lo {
            lo = x;
        }
        if x > hi {
            hi = x;
        }
    }
    if lo > hi {
        return;
    }
    let n = hist.len();
    if *min > *max {
        *min = lo;
        *max = hi;
    } else if lo < *min || hi > *max {
        let new_min = if lo < *min { lo } else { *min };
        let new_max = if hi > *max { hi } else { *max };
        if n > 0 {
            let out = rebin(hist, *min, *max, new_min, new_max);
            hist.copy_from_slice(&out);
        }
        *min = new_min;
        *max = new_max;
    }
    if n == 0 {
        return;
    }
    let width = (*max - *min) / n as f32;
    for &x in values.iter().filter(|x| x.is_finite()) {
        hist[profile_bin(n, width, *min, x)] += 1.0;
    }
}

/// The bin of `x` among `n` of `width` from `min`: 0 for a zero width or a
/// quotient below 0 or NaN, at most `n - 1`.
fn profile_bin(n: usize, width: f32, min: f32, x: f32) -> usize {
    if width == 0.0 {
        return 0;
    }
    let r = (x - min) / width;
    // Below 0 and NaN: bin 0 (`as` saturates).
    if r > 0.0 {
        (r as usize).min(n - 1)
    } else {
        0
    }
}

/// Glow's re-binning when the range grows (`generateTensorHistogram`).
fn rebin(h: &[f32], min: f32, max: f32, new_min: f32, new_max: f32) -> Vec<f32> {
    let n = h.len();
    let dest_w = (new_max - new_min) / n as f32;
    let src_w = (max - min) / n as f32;
    let mut out = vec![0f32; n];
    for (i, &count) in h.iter().enumerate() {
        if count == 0.0 {
            continue;
        }
        let src_begin = min + src_w * i as f32;
        let dest_bin = profile_bin(n, dest_w, new_min, src_begin);
        let dest_end = new_min + dest_w * (dest_bin + 1) as f32;
        let part = if src_w == 0.0 {
            count
        } else {
            let p = ((dest_end - src_begin) / src_w * count).round();
            if p < count {
                p
            } else {
                count
            }
        };
        out[dest_bin] += part;
        if part < count {
            out[profile_bin(n, dest_w, new_min, src_begin + dest_w)] += count - part;
        }
    }
    out
}

/// The quantized kinds the arithmetic kernels compute on (`i8`, `ui8`);
/// `i32` is a bias kind, `i16` only converts.
pub fn is_compute_kind(k: ElemKind) -> bool {
    matches!(k, ElemKind::Int8Q { .. } | ElemKind::UInt8Q { .. })
}

/// Whether a binary opcode has an integer quantized kernel (the others
/// compute in float on dequantized values); the verifier and both engines ask.
pub fn has_integer_binary(op: crate::opcode::Opcode) -> bool {
    use crate::opcode::Opcode;
    matches!(
        op,
        Opcode::ElementAdd
            | Opcode::ElementSub
            | Opcode::ElementMul
            | Opcode::ElementMax
            | Opcode::ElementMin
            | Opcode::BatchedAdd
    )
}

/// Scale, offset and stored range of a quantized kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QParams {
    pub scale: f32,
    pub offset: i64,
    pub lo: i64,
    pub hi: i64,
}

impl QParams {
    pub fn of(k: ElemKind) -> Result<QParams, String> {
        let (Some((scale, offset)), Some((lo, hi))) = (k.quant(), k.quant_range()) else {
            return Err(format!("{k} is not a quantized element type"));
        };
        if !(scale.is_finite() && scale > 0.0) {
            return Err(format!(
                "{k} has scale {scale}: a scale must be positive and finite"
            ));
        }
        Ok(QParams {
            scale,
            offset: offset as i64,
            lo,
            hi,
        })
    }

    /// The range of `q - offset`, whose magnitude the kernels rely on.
    fn centred_fits(&self, bits: u32) -> bool {
        let m = 1i64 << bits;
        self.lo - self.offset >= -m && self.hi - self.offset <= m
    }
}

/// Checks what every quantized kernel relies on: a positive finite scale and
/// an offset inside the stored range.
pub fn check_kind(k: ElemKind) -> Result<QParams, String> {
    let p = QParams::of(k)?;
    if p.offset < p.lo || p.offset > p.hi {
        return Err(format!(
            "{k} has offset {} outside its range [{}, {}]",
            p.offset, p.lo, p.hi
        ));
    }
    Ok(p)
}

fn multiplier(r: f64, what: &str) -> Result<Multiplier, String> {
    Multiplier::from_ratio(r).ok_or_else(|| {
        format!(
            "the scale ratio of {what} is {r:e}, outside the integer multipliers' range [0, 2^31)"
        )
    })
}

/// A result moved to an output scale and clamped: `clamp(O + m(acc))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Requant {
    pub m: Multiplier,
    pub offset: i64,
    pub lo: i64,
    pub hi: i64,
}

impl Requant {
    pub fn apply(&self, acc: i64) -> i64 {
        saturate(self.offset + self.m.apply(acc), self.lo, self.hi)
    }

    fn new(ratio: f64, out: QParams, what: &str) -> Result<Requant, String> {
        Ok(Requant {
            m: multiplier(ratio, what)?,
            offset: out.offset,
            lo: out.lo,
            hi: out.hi,
        })
    }
}

/// The output clamp of a fused activation on a quantized result: RELU
/// clamps at the output's zero, CLIP at the quantized bounds; others are
/// not defined on quantized results.
pub fn activation_clamp(act: &str, args: &[f64], out: QParams) -> Result<(i64, i64), String> {
    let q = |v: f64| quantize(v as f32, out.scale, out.offset as i32, (out.lo, out.hi));
    match act {
        "NONE" => Ok((out.lo, out.hi)),
        "RELU" => Ok((out.offset.max(out.lo), out.hi)),
        "CLIP" => {
            let lo = args.first().map_or(out.lo, |&a| q(a));
            let hi = args.get(1).map_or(out.hi, |&b| q(b));
            Ok((lo.max(out.lo), hi.min(out.hi).max(lo.max(out.lo))))
        }
        a if FusedActivation::from_name(a).is_some() => Err(format!(
            "fused activation {a} is not defined on a quantized result (RELU and CLIP are)"
        )),
        a => Err(format!("unknown fused activation {a}")),
    }
}

/// The parameters of a quantized product (`convolution`, `fullyconnected`,
/// `matmul`, `batchmatmul`): `acc = wrap32(sum (x - x_off)(w - w_off) +
/// bias.apply(b))`, then `out.apply(acc)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Product {
    pub x_off: i64,
    pub w_off: i64,
    /// The bias rescaled to the accumulator's scale `Sx * Sw`.
    pub bias: Option<Multiplier>,
    pub out: Requant,
}

impl Product {
    /// Bias contribution of a stored bias value.
    pub fn bias_term(&self, b: i64) -> i64 {
        self.bias.map_or(0, |m| m.apply(b))
    }
}

/// The parameters of a quantized product, per output channel when the
/// filter's scales and offsets are given per channel (`channelwise`).
pub fn product(
    src: ElemKind,
    w: ElemKind,
    bias: Option<ElemKind>,
    dest: ElemKind,
    act: (&str, &[f64]),
) -> Result<Product, String> {
    let wq = check_kind(w)?;
    product_with(
        src,
        (wq.scale, wq.offset),
        bias.map(|b| (b, None)),
        dest,
        act,
    )
}

/// [`product`] with the filter's scale and offset given as numbers (one
/// channel of a channel-wise product) and an optional bias scale overriding
/// the bias type's.
pub fn product_with(
    src: ElemKind,
    w: (f32, i64),
    bias: Option<(ElemKind, Option<(f32, i64)>)>,
    dest: ElemKind,
    act: (&str, &[f64]),
) -> Result<Product, String> {
    product_impl(src, w, bias, dest, act, false)
}

/// One row of a `rowwisequantizedfullyconnected` (Glow's): the row's
/// weight scale and offset, and the bias type's own scale in any ratio to
/// the row's accumulator scale (the one bias type serves every row).
pub fn product_rowwise(
    src: ElemKind,
    w: (f32, i64),
    bias: ElemKind,
    dest: ElemKind,
) -> Result<Product, String> {
    product_impl(src, w, Some((bias, None)), dest, ("NONE", &[]), true)
}

fn product_impl(
    src: ElemKind,
    (w_scale, w_off): (f32, i64),
    bias: Option<(ElemKind, Option<(f32, i64)>)>,
    dest: ElemKind,
    act: (&str, &[f64]),
    any_bias_scale: bool,
) -> Result<Product, String> {
    let x = check_kind(src)?;
    let out = check_kind(dest)?;
    if !is_compute_kind(src) || !is_compute_kind(dest) {
        return Err("quantized products compute on `i8` and `ui8`".into());
    }
    if !(w_scale.is_finite() && w_scale > 0.0) {
        return Err(format!(
            "the filter scale {w_scale} must be positive and finite"
        ));
    }
    if !(-255..=255).contains(&w_off) {
        return Err(format!("the filter offset {w_off} is outside [-255, 255]"));
    }
    let acc_scale = x.scale as f64 * w_scale as f64;
    let bias = match bias {
        None => None,
        Some((bk, over)) => {
            let (bs, bo) = match over {
                Some(p) => p,
                None => {
                    let p = check_kind(bk)?;
                    (p.scale, p.offset)
                }
            };
            if bo != 0 {
                return Err(format!(
                    "the bias has offset {bo}: a quantized bias must have offset 0"
                ));
            }
            let ratio = bs as f64 / acc_scale;
            if !any_bias_scale
                && !(0.5..2.0).contains(&ratio)
                && matches!(bk, ElemKind::Int32Q { .. })
            {
                return Err(format!(
                    "the bias scale {bs:e} must be the input scale times the filter scale ({acc_scale:e})"
                ));
            }
            Some(multiplier(ratio, "the bias")?)
        }
    };
    let (lo, hi) = activation_clamp(act.0, act.1, out)?;
    let mut rq = Requant::new(acc_scale / out.scale as f64, out, "the product")?;
    rq.lo = lo;
    rq.hi = hi;
    Ok(Product {
        x_off: x.offset,
        w_off,
        bias,
        out: rq,
    })
}

/// `rescalequantized`, `relu`, `clip`, `maxpool` and the sides of
/// `elementmax`/`elementmin`: `clamp(Oo + m(q - Oi))` with the ratio
/// `Si / So`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rescale {
    pub in_off: i64,
    pub out: Requant,
}

impl Rescale {
    pub fn new(src: ElemKind, dest: ElemKind) -> Result<Rescale, String> {
        let (i, o) = (check_kind(src)?, check_kind(dest)?);
        Ok(Rescale {
            in_off: i.offset,
            out: Requant::new(i.scale as f64 / o.scale as f64, o, "the rescale")?,
        })
    }

    pub fn apply(&self, q: i64) -> i64 {
        self.out.apply(q - self.in_off)
    }
}

/// The per-channel rescales of a per-axis `rescalequantized`: channel c of
/// the plain `int8`/`uint8` source has scale `scales[c]` and offset
/// `offsets[c]`; each is rescaled to `dest` as per tensor.
pub fn rescale_per_axis(
    src: ElemKind,
    scales: &[f32],
    offsets: &[i64],
    dest: ElemKind,
) -> Result<Vec<Rescale>, String> {
    scales
        .iter()
        .zip(offsets)
        .enumerate()
        .map(|(c, (&scale, &o))| {
            let offset = i32::try_from(o).map_err(|_| format!("offset {o} of channel {c}"))?;
            let k = if src == ElemKind::UInt8 {
                ElemKind::UInt8Q { scale, offset }
            } else {
                ElemKind::Int8Q { scale, offset }
            };
            Rescale::new(k, dest).map_err(|e| format!("channel {c}: {e}"))
        })
        .collect()
}

/// `elementadd`/`elementsub`/`batchedadd`: `clamp(Oo + round_shift((l - Ol)
/// * a +- (r - Or) * b, shift))` with `a/2^shift = Sl/So`, `b/2^shift = Sr/So`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Add {
    pub l_off: i64,
    pub r_off: i64,
    pub m: PairMultiplier,
    pub offset: i64,
    pub lo: i64,
    pub hi: i64,
    pub sub: bool,
}

impl Add {
    pub fn new(l: ElemKind, r: ElemKind, dest: ElemKind, sub: bool) -> Result<Add, String> {
        let (lp, rp, o) = (check_kind(l)?, check_kind(r)?, check_kind(dest)?);
        for p in [lp, rp] {
            if !p.centred_fits(16) {
                return Err("quantized addition takes 8- or 16-bit inputs".into());
            }
        }
        let so = o.scale as f64;
        let m = PairMultiplier::from_ratios(lp.scale as f64 / so, rp.scale as f64 / so)
            .ok_or_else(|| "the scale ratios of the addition are outside [0, 2^31)".to_string())?;
        Ok(Add {
            l_off: lp.offset,
            r_off: rp.offset,
            m,
            offset: o.offset,
            lo: o.lo,
            hi: o.hi,
            sub,
        })
    }

    pub fn apply(&self, l: i64, r: i64) -> i64 {
        let dr = r - self.r_off;
        let dr = if self.sub { -dr } else { dr };
        saturate(
            self.offset + self.m.apply(l - self.l_off, dr),
            self.lo,
            self.hi,
        )
    }
}

/// `elementmul`: `clamp(Oo + m((l - Ol)(r - Or)))`, ratio `Sl * Sr / So`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mul {
    pub l_off: i64,
    pub r_off: i64,
    pub out: Requant,
}

impl Mul {
    pub fn new(l: ElemKind, r: ElemKind, dest: ElemKind) -> Result<Mul, String> {
        let (lp, rp, o) = (check_kind(l)?, check_kind(r)?, check_kind(dest)?);
        for p in [lp, rp] {
            if !p.centred_fits(8) {
                return Err("quantized multiplication takes 8-bit inputs".into());
            }
        }
        let ratio = lp.scale as f64 * rp.scale as f64 / o.scale as f64;
        Ok(Mul {
            l_off: lp.offset,
            r_off: rp.offset,
            out: Requant::new(ratio, o, "the multiplication")?,
        })
    }

    pub fn apply(&self, l: i64, r: i64) -> i64 {
        self.out.apply((l - self.l_off) * (r - self.r_off))
    }
}

/// `avgpool`: `clamp(Oo + m_count(sum (q - Oi)))` with one multiplier per
/// count of summed elements, `Si / (So * count)`; `table[count - 1]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Average {
    pub in_off: i64,
    pub table: Vec<Requant>,
}

impl Average {
    pub fn new(src: ElemKind, dest: ElemKind, max_count: u64) -> Result<Average, String> {
        let (i, o) = (check_kind(src)?, check_kind(dest)?);
        if max_count == 0 || max_count > 1 << 20 {
            return Err(format!(
                "a quantized average over {max_count} elements is not supported"
            ));
        }
        let table = (1..=max_count)
            .map(|n| {
                Requant::new(
                    i.scale as f64 / (o.scale as f64 * n as f64),
                    o,
                    "the average",
                )
            })
            .collect::<Result<_, _>>()?;
        Ok(Average {
            in_off: i.offset,
            table,
        })
    }

    /// The result of `sum` (already centred) over `count` elements.
    pub fn apply(&self, sum: i64, count: u64) -> i64 {
        let n = (count as usize).clamp(1, self.table.len());
        self.table[n - 1].apply(sum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplier_is_close_and_normalised() {
        for r in [1.0, 0.5, 0.3, 1e-5, 3.7e-3, 123.456, 1e9, 2.5e-10, 0.999999] {
            let m = Multiplier::from_ratio(r).unwrap();
            assert!(m.mult < 1 << 31 && m.mult >= 1 << 30, "{r}: {m:?}");
            assert!((m.value() - r).abs() <= r * 2f64.powi(-30), "{r}: {m:?}");
        }
        assert_eq!(
            Multiplier::from_ratio(1.0).unwrap(),
            Multiplier {
                mult: 1 << 30,
                shift: 30
            }
        );
        assert_eq!(Multiplier::from_ratio(0.0).unwrap().apply(12345), 0);
        assert!(Multiplier::from_ratio(2f64.powi(31)).is_none());
        assert!(Multiplier::from_ratio(-1.0).is_none());
        assert!(Multiplier::from_ratio(f64::NAN).is_none());
        // Tiny ratios keep the largest shift.
        let m = Multiplier::from_ratio(1e-30).unwrap();
        assert_eq!(m.shift, MAX_SHIFT);
    }

    #[test]
    fn ratio_one_is_exact() {
        let m = Multiplier::from_ratio(1.0).unwrap();
        for v in [-(1i64 << 31), -7, -1, 0, 1, 7, (1 << 31) - 1] {
            assert_eq!(m.apply(v), v);
        }
    }

    #[test]
    fn rounding_is_half_up() {
        let m = Multiplier::from_ratio(0.5).unwrap();
        assert_eq!(m.apply(3), 2); // 1.5 -> 2
        assert_eq!(m.apply(-3), -1); // -1.5 -> -1
        assert_eq!(m.apply(5), 3); // 2.5 -> 3
        assert_eq!(m.apply(-5), -2);
        assert_eq!(round_shift(-1, 1), 0);
    }

    #[test]
    fn quantize_rounds_half_even() {
        let r = (-128, 127);
        assert_eq!(quantize(2.5, 1.0, 0, r), 2);
        assert_eq!(quantize(3.5, 1.0, 0, r), 4);
        assert_eq!(quantize(-2.5, 1.0, 3, r), 1);
        assert_eq!(quantize(1e9, 1.0, 0, r), 127);
        assert_eq!(quantize(f32::NAN, 1.0, 0, r), -128);
    }

    #[test]
    fn add_matches_real_arithmetic() {
        let l = ElemKind::Int8Q {
            scale: 0.1,
            offset: 3,
        };
        let r = ElemKind::UInt8Q {
            scale: 0.05,
            offset: 128,
        };
        let d = ElemKind::Int8Q {
            scale: 0.2,
            offset: -5,
        };
        let a = Add::new(l, r, d, false).unwrap();
        for (ql, qr) in [(10, 200), (-128, 0), (127, 255), (3, 128)] {
            let real = 0.1 * (ql - 3) as f64 + 0.05 * (qr - 128) as f64;
            let want = (real / 0.2 + -5.0).round().clamp(-128.0, 127.0) as i64;
            assert!((a.apply(ql, qr) - want).abs() <= 1, "{ql} {qr}");
        }
    }

    #[test]
    fn kind_rules() {
        let bad = ElemKind::Int8Q {
            scale: 0.0,
            offset: 0,
        };
        assert!(check_kind(bad).unwrap_err().contains("positive"));
        let off = ElemKind::UInt8Q {
            scale: 1.0,
            offset: 300,
        };
        assert!(check_kind(off).unwrap_err().contains("outside its range"));
    }

    #[test]
    fn relu_and_clip_clamps() {
        let o = QParams::of(ElemKind::UInt8Q {
            scale: 0.1,
            offset: 10,
        })
        .unwrap();
        assert_eq!(activation_clamp("RELU", &[], o).unwrap(), (10, 255));
        assert_eq!(activation_clamp("CLIP", &[0.0, 6.0], o).unwrap(), (10, 70));
        assert!(activation_clamp("TANH", &[], o).is_err());
    }
}
