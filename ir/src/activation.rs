//! The fused activations of a convolution (Glow's `FusedActivation`),
//! defined once: the name the text uses, how many `FusedActivationArgs` each
//! takes, and the f32 function both engines compute. The backend generates
//! the C kernels' `glow_act` from [`FusedActivation::ALL`]: one case per
//! [`FusedActivation::code`], computing [`FusedActivation::apply`].

use crate::opcode::Opcode;
use std::fmt;

/// A convolution's `FusedActivation`, in the order of its C code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FusedActivation {
    None,
    Relu,
    Clip,
    Tanh,
    Sigmoid,
    LeakyRelu,
}

impl FusedActivation {
    pub const ALL: [FusedActivation; 6] = [
        FusedActivation::None,
        FusedActivation::Relu,
        FusedActivation::Clip,
        FusedActivation::Tanh,
        FusedActivation::Sigmoid,
        FusedActivation::LeakyRelu,
    ];
    /// The member's values, indexed like [`FusedActivation::ALL`].
    pub const NAMES: [&'static str; 6] = ["NONE", "RELU", "CLIP", "TANH", "SIGMOID", "LEAKY_RELU"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn from_name(name: &str) -> Option<FusedActivation> {
        let i = Self::NAMES.iter().position(|&n| n == name)?;
        Some(Self::ALL[i])
    }

    /// The `act` argument of the C kernels.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// How many values `FusedActivationArgs` holds: CLIP min and max,
    /// LEAKY_RELU alpha.
    pub fn arg_count(self) -> usize {
        match self {
            FusedActivation::Clip => 2,
            FusedActivation::LeakyRelu => 1,
            _ => 0,
        }
    }

    /// The standalone activation `fuse-activations` folds into a
    /// convolution as this one (`leakyrelu` is not fused).
    pub fn of_opcode(op: Opcode) -> Option<FusedActivation> {
        Some(match op {
            Opcode::Relu => FusedActivation::Relu,
            Opcode::Clip => FusedActivation::Clip,
            Opcode::Tanh => FusedActivation::Tanh,
            Opcode::Sigmoid => FusedActivation::Sigmoid,
            _ => return None,
        })
    }

    /// The two f32 arguments of [`FusedActivation::apply`], with the
    /// defaults where `args` lacks them (CLIP: the f32 range; LEAKY_RELU:
    /// 0.01); zero where unused.
    pub fn resolve(self, args: &[f64]) -> (f32, f32) {
        let arg = |i: usize, d: f32| args.get(i).map(|&v| v as f32).unwrap_or(d);
        match self {
            FusedActivation::Clip => (arg(0, f32::MIN), arg(1, f32::MAX)),
            FusedActivation::LeakyRelu => (arg(0, 0.01), 0.0),
            _ => (0.0, 0.0),
        }
    }

    /// The activation of `x` with the arguments of [`FusedActivation::resolve`].
    pub fn apply(self, x: f32, a0: f32, a1: f32) -> f32 {
        match self {
            FusedActivation::None => x,
            FusedActivation::Relu => relu(x),
            FusedActivation::Clip => clip(x, a0, a1),
            FusedActivation::Tanh => x.tanh(),
            FusedActivation::Sigmoid => sigmoid(x),
            FusedActivation::LeakyRelu => {
                if x >= 0.0 {
                    x
                } else {
                    a0 * x
                }
            }
        }
    }
}

impl fmt::Display for FusedActivation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

pub fn relu(x: f32) -> f32 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// `std::min(std::max(x, lo), hi)`.
pub fn clip(x: f32, lo: f32, hi: f32) -> f32 {
    let m = if x < lo { lo } else { x };
    if hi < m {
        hi
    } else {
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_in_code_order() {
        for (i, a) in FusedActivation::ALL.iter().enumerate() {
            assert_eq!(a.code() as usize, i);
            assert_eq!(FusedActivation::from_name(a.name()), Some(*a));
        }
        assert_eq!(FusedActivation::from_name("relu"), None);
    }
}
