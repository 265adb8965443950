//! The window attributes Conv, ConvTranspose and the pools share: integers
//! per spatial axis checked against the tensor limit (past it no output
//! fits, and below it the window arithmetic cannot overflow), `pads`,
//! `auto_pad`, and the `SAME_*` split of a forward window's padding.

use super::{Attrs, Lowerer};
use crate::error::Result;

const MAX: u64 = glow_ir::limits::MAX_TENSOR_BYTES;

/// An attribute of one value per spatial axis, each at least `lo`, or
/// `default` on each axis when absent.
pub(super) fn per_axis(
    l: &Lowerer,
    attrs: &Attrs,
    name: &str,
    nd: usize,
    default: u64,
    lo: u64,
) -> Result<Vec<u64>> {
    match attrs.ints(name) {
        Some(v) if v.len() == nd => checked(l, name, v, lo),
        Some(v) => Err(l.err(format!("`{name}` has {} values for {nd} axes", v.len()))),
        None => Ok(vec![default; nd]),
    }
}

/// `pads` (begins, then ends), when given.
pub(super) fn pads(l: &Lowerer, attrs: &Attrs, nd: usize) -> Result<Option<Vec<u64>>> {
    match attrs.ints("pads") {
        Some(p) if p.len() == 2 * nd => checked(l, "pads", p, 0).map(Some),
        Some(p) => Err(l.err(format!("bad `pads`: {p:?}"))),
        None => Ok(None),
    }
}

fn checked(l: &Lowerer, name: &str, v: &[i64], lo: u64) -> Result<Vec<u64>> {
    v.iter()
        .map(|&x| match u64::try_from(x) {
            Ok(x) if x > MAX => {
                Err(l.err(format!("`{name}` value {x} is above the limit of {MAX}")))
            }
            Ok(x) if x >= lo => Ok(x),
            _ => Err(l.err(format!("bad `{name}`: {v:?}"))),
        })
        .collect()
}

/// ONNX's `auto_pad`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AutoPad {
    NotSet,
    Valid,
    SameUpper,
    SameLower,
}

impl AutoPad {
    pub(super) fn read(l: &Lowerer, attrs: &Attrs) -> Result<AutoPad> {
        Ok(
            match attrs.string("auto_pad").unwrap_or_default().as_str() {
                "" | "NOTSET" => AutoPad::NotSet,
                "VALID" => AutoPad::Valid,
                "SAME_UPPER" => AutoPad::SameUpper,
                "SAME_LOWER" => AutoPad::SameLower,
                other => return Err(l.err(format!("unknown auto_pad `{other}`"))),
            },
        )
    }

    pub(super) fn is_same(self) -> bool {
        matches!(self, AutoPad::SameUpper | AutoPad::SameLower)
    }

    /// Splits `total` padding into (begin, end): the odd one at the end for
    /// `SAME_UPPER`, at the begin otherwise.
    pub(super) fn split(self, total: u64) -> (u64, u64) {
        let small = total / 2;
        if self == AutoPad::SameUpper {
            (small, total - small)
        } else {
            (total - small, small)
        }
    }

    /// The (begin, end) pads of a forward window on one axis: `given` as
    /// written, none for `VALID`, and for `SAME_*` what makes the output
    /// `ceil(input / stride)` long.
    pub(super) fn pads(self, given: (u64, u64), input: u64, stride: u64, eff: u64) -> (u64, u64) {
        match self {
            AutoPad::NotSet => given,
            AutoPad::Valid => (0, 0),
            AutoPad::SameUpper | AutoPad::SameLower => {
                let out = input.div_ceil(stride);
                self.split(((out - 1) * stride + eff).saturating_sub(input))
            }
        }
    }
}

/// A member of one integer per axis.
pub(super) fn ints(v: &[u64]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}
