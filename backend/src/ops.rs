//! The element-wise operators, defined once for both engines: each entry
//! holds the C expression the emitter writes and the Rust function the
//! interpreter calls, side by side, so the two cannot drift apart unseen.
//!
//! Float operators work in f32 with the exact operation order of the C text
//! (no contraction: the driver compiles with `-ffp-contract=off`). Integer
//! (index) operators wrap like two's complement and define division by zero
//! as 0, so no input is undefined behaviour in C.
//!
//! This is the workspace's one definition of each operator's scalar
//! semantics: the interpreter calls the functions, the emitter writes the C
//! text, and the importer's constant folder (`glow-import`) calls the same
//! functions, so a folded constant has the bits a run gives. The edge cases
//! are the table's, not IEEE's or Rust's: `elementmax` is `a < b ? b : a`
//! (NaN on the left wins, on the right loses), `i64::MIN / -1` wraps to
//! `i64::MIN`, `x / 0` is 0. `import/tests/fold_edges.rs` checks fold,
//! interpreter and C on NaN, both zeros, infinities and integer extremes.

use glow_ir::{ElemKind, Opcode};

/// A binary element-wise operator.
pub struct BinOp {
    pub opcode: Opcode,
    /// C expression over `a` and `b` (floats).
    pub c_float: &'static str,
    pub float: fn(f32, f32) -> f32,
    /// C expression over `int64_t a, b`, giving an `int64_t` (wrapped later);
    /// empty when the operator has no integer form.
    pub c_int: &'static str,
    pub int: fn(i64, i64) -> i64,
}

pub static BINARY: &[BinOp] = &[
    BinOp {
        opcode: Opcode::ElementAdd,
        c_float: "a + b",
        float: |a, b| a + b,
        c_int: "(int64_t)((uint64_t)a + (uint64_t)b)",
        int: |a, b| a.wrapping_add(b),
    },
    BinOp {
        opcode: Opcode::ElementSub,
        c_float: "a - b",
        float: |a, b| a - b,
        c_int: "(int64_t)((uint64_t)a - (uint64_t)b)",
        int: |a, b| a.wrapping_sub(b),
    },
    BinOp {
        opcode: Opcode::ElementMul,
        c_float: "a * b",
        float: |a, b| a * b,
        c_int: "(int64_t)((uint64_t)a * (uint64_t)b)",
        int: |a, b| a.wrapping_mul(b),
    },
    BinOp {
        opcode: Opcode::ElementDiv,
        c_float: "a / b",
        float: |a, b| a / b,
        c_int: "(b == 0 ? 0 : b == -1 ? (int64_t)(0u - (uint64_t)a) : a / b)",
        int: |a, b| if b == 0 { 0 } else { a.wrapping_div(b) },
    },
    // libm's powf; on integers by squaring, wrapping (`ipow`).
    BinOp {
        opcode: Opcode::ElementPow,
        c_float: "powf(a, b)",
        float: |a, b| a.powf(b),
        c_int: "glow_ipow(a, b)",
        int: ipow,
    },
    // std::max / std::min as Glow's kernels use them.
    BinOp {
        opcode: Opcode::ElementMax,
        c_float: "(a < b ? b : a)",
        float: |a, b| if a < b { b } else { a },
        c_int: "(a < b ? b : a)",
        int: |a, b| if a < b { b } else { a },
    },
    BinOp {
        opcode: Opcode::ElementMin,
        c_float: "(b < a ? b : a)",
        float: |a, b| if b < a { b } else { a },
        c_int: "(b < a ? b : a)",
        int: |a, b| if b < a { b } else { a },
    },
    // Integer only (no float form): the bits of the two's-complement values.
    BinOp {
        opcode: Opcode::ElementBitwiseAnd,
        c_float: "",
        float: |_, _| 0.0,
        c_int: "a & b",
        int: |a, b| a & b,
    },
    BinOp {
        opcode: Opcode::ElementBitwiseOr,
        c_float: "",
        float: |_, _| 0.0,
        c_int: "a | b",
        int: |a, b| a | b,
    },
    BinOp {
        opcode: Opcode::ElementBitwiseXor,
        c_float: "",
        float: |_, _| 0.0,
        c_int: "a ^ b",
        int: |a, b| a ^ b,
    },
    // Shifts of the value widened to 64 bits, then wrapped to the width: a
    // left shift by the width or more gives 0 and a right shift the sign
    // (ONNX's BitShift rule), as does a shift by a negative count.
    BinOp {
        opcode: Opcode::ElementBitShiftLeft,
        c_float: "",
        float: |_, _| 0.0,
        c_int: "((b < 0 || b > 63) ? 0 : (int64_t)((uint64_t)a << b))",
        int: |a, b| {
            if (0..=63).contains(&b) {
                ((a as u64) << b) as i64
            } else {
                0
            }
        },
    },
    BinOp {
        opcode: Opcode::ElementBitShiftRight,
        c_float: "",
        float: |_, _| 0.0,
        c_int: "((b < 0 || b > 63) ? (a < 0 ? -1 : 0) : a < 0 ? ~(~a >> b) : a >> b)",
        int: |a, b| {
            if (0..=63).contains(&b) {
                a >> b
            } else if a < 0 {
                -1
            } else {
                0
            }
        },
    },
    // C's fmodf (exact); on integers C's truncating `%`, with 0 for a zero
    // divisor and for -1 (so `MIN % -1` is not undefined).
    BinOp {
        opcode: Opcode::ElementFmod,
        c_float: "fmodf(a, b)",
        float: |a, b| a % b,
        c_int: "((b == 0 || b == -1) ? 0 : a % b)",
        int: |a, b| if b == 0 || b == -1 { 0 } else { a % b },
    },
];

/// `a` to the power `b` on integers, as `glow_ipow` in the C kernels:
/// square and multiply with wrapping; a negative exponent gives `1 / a^-b`
/// truncated (1 for 1, ±1 for -1, 0 otherwise).
pub fn ipow(a: i64, b: i64) -> i64 {
    if b < 0 {
        return match a {
            1 => 1,
            -1 => {
                if b & 1 != 0 {
                    -1
                } else {
                    1
                }
            }
            _ => 0,
        };
    }
    let (mut base, mut e, mut r) = (a as u64, b as u64, 1u64);
    while e != 0 {
        if e & 1 != 0 {
            r = r.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        e >>= 1;
    }
    r as i64
}

/// A reduction of the `Reduce` family over one axis, in index order: the
/// running value starts at `init` (or at the first element when `None`) and
/// takes each element with `c` (over `acc` and `x`) / `f`.
pub struct ReduceOp {
    pub opcode: Opcode,
    pub init: Option<f32>,
    pub c: &'static str,
    pub f: fn(f32, f32) -> f32,
}

pub static REDUCE: &[ReduceOp] = &[
    ReduceOp {
        opcode: Opcode::BatchedReduceAdd,
        init: Some(0.0),
        c: "acc + x",
        f: |acc, x| acc + x,
    },
    // std::max / std::min order, as elementmax / elementmin.
    ReduceOp {
        opcode: Opcode::BatchedReduceMax,
        init: None,
        c: "(acc < x ? x : acc)",
        f: |acc, x| if acc < x { x } else { acc },
    },
    ReduceOp {
        opcode: Opcode::BatchedReduceMin,
        init: None,
        c: "(x < acc ? x : acc)",
        f: |acc, x| if x < acc { x } else { acc },
    },
    ReduceOp {
        opcode: Opcode::BatchedReduceProd,
        init: Some(1.0),
        c: "acc * x",
        f: |acc, x| acc * x,
    },
];

/// A comparison of the `Compare` family: C operator, and its value on
/// floats (or dequantized values) and on index integers.
pub struct CmpOp {
    pub opcode: Opcode,
    pub c: &'static str,
    /// On the values as the interpreter reads them (f32 widened to f64).
    pub float: fn(f64, f64) -> bool,
    pub int: fn(i64, i64) -> bool,
}

pub static COMPARE: &[CmpOp] = &[
    CmpOp {
        opcode: Opcode::ElementCmpLTE,
        c: "<=",
        float: |a, b| a <= b,
        int: |a, b| a <= b,
    },
    CmpOp {
        opcode: Opcode::ElementCmpEQ,
        c: "==",
        float: |a, b| a == b,
        int: |a, b| a == b,
    },
    CmpOp {
        opcode: Opcode::ElementCmpNEQ,
        c: "!=",
        float: |a, b| a != b,
        int: |a, b| a != b,
    },
    CmpOp {
        opcode: Opcode::ElementCmpLT,
        c: "<",
        float: |a, b| a < b,
        int: |a, b| a < b,
    },
];

/// A boolean operator of the `Logical` family over 0/1 bytes (any nonzero
/// byte is true): the C expression over `a` (and `b`), and the function.
pub struct LogicOp {
    pub opcode: Opcode,
    pub c: &'static str,
    pub f: fn(bool, bool) -> bool,
}

pub static LOGICAL: &[LogicOp] = &[
    LogicOp {
        opcode: Opcode::ElementAnd,
        c: "(a != 0) & (b != 0)",
        f: |a, b| a & b,
    },
    LogicOp {
        opcode: Opcode::ElementOr,
        c: "(a != 0) | (b != 0)",
        f: |a, b| a | b,
    },
    LogicOp {
        opcode: Opcode::ElementXor,
        c: "(a != 0) ^ (b != 0)",
        f: |a, b| a ^ b,
    },
    LogicOp {
        opcode: Opcode::ElementNot,
        c: "a == 0",
        f: |a, _| !a,
    },
];

/// A unary float operator of the `Unary` family. Its parameters are the
/// opcode's `Float` members in table order (`Members::float_params`): `m[0]`,
/// `m[1]`, ... in the C expression over `x`, the same slice in `f`.
pub struct UnOp {
    pub opcode: Opcode,
    /// C expression over `x` and `m[k]`.
    pub c: &'static str,
    pub f: fn(f32, &[f32]) -> f32,
}

pub static UNARY: &[UnOp] = &[
    UnOp {
        opcode: Opcode::Relu,
        c: "(x > 0.0f ? x : 0.0f)",
        f: |x, _| relu(x),
    },
    UnOp {
        opcode: Opcode::Sigmoid,
        c: "(1.0f / (1.0f + expf(-x)))",
        f: |x, _| sigmoid(x),
    },
    UnOp {
        opcode: Opcode::Tanh,
        c: "tanhf(x)",
        f: |x, _| x.tanh(),
    },
    UnOp {
        opcode: Opcode::Clip,
        c: "(m[1] < (x < m[0] ? m[0] : x) ? m[1] : (x < m[0] ? m[0] : x))",
        f: |x, m| clip(x, m[0], m[1]),
    },
    // Glow's LeakyRelu: `x >= 0 ? x : alpha * x`, as the fused LEAKY_RELU.
    UnOp {
        opcode: Opcode::LeakyRelu,
        c: "(x >= 0.0f ? x : m[0] * x)",
        f: |x, m| if x >= 0.0 { x } else { m[0] * x },
    },
    // The math family (ONNX Exp, Log, ...): libm's functions in both engines;
    // `elementround` rounds half to even (ONNX Round), `elementsign` keeps
    // the sign of zero and NaN.
    UnOp {
        opcode: Opcode::ElementExp,
        c: "expf(x)",
        f: |x, _| x.exp(),
    },
    UnOp {
        opcode: Opcode::ElementLog,
        c: "logf(x)",
        f: |x, _| x.ln(),
    },
    UnOp {
        opcode: Opcode::ElementSqrt,
        c: "sqrtf(x)",
        f: |x, _| x.sqrt(),
    },
    UnOp {
        opcode: Opcode::ElementRsqrt,
        c: "(1.0f / sqrtf(x))",
        f: |x, _| 1.0 / x.sqrt(),
    },
    UnOp {
        opcode: Opcode::ElementReciprocal,
        c: "(1.0f / x)",
        f: |x, _| 1.0 / x,
    },
    UnOp {
        opcode: Opcode::ElementNeg,
        c: "(-x)",
        f: |x, _| -x,
    },
    UnOp {
        opcode: Opcode::ElementAbs,
        c: "fabsf(x)",
        f: |x, _| x.abs(),
    },
    UnOp {
        opcode: Opcode::ElementErf,
        c: "erff(x)",
        f: |x, _| erf(x),
    },
    UnOp {
        opcode: Opcode::ElementSin,
        c: "sinf(x)",
        f: |x, _| x.sin(),
    },
    UnOp {
        opcode: Opcode::ElementCos,
        c: "cosf(x)",
        f: |x, _| x.cos(),
    },
    UnOp {
        opcode: Opcode::ElementFloor,
        c: "floorf(x)",
        f: |x, _| x.floor(),
    },
    UnOp {
        opcode: Opcode::ElementCeil,
        c: "ceilf(x)",
        f: |x, _| x.ceil(),
    },
    UnOp {
        opcode: Opcode::ElementRound,
        c: "nearbyintf(x)",
        f: |x, _| x.round_ties_even(),
    },
    UnOp {
        opcode: Opcode::ElementSign,
        c: "(x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x)",
        f: |x, _| {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else {
                x
            }
        },
    },
    // The rest of libm's trigonometric and hyperbolic family. Rust's std
    // computes asinh, acosh and atanh itself, so both engines call libm's
    // symbols (through `extern "C"` on the Rust side) for all nine.
    UnOp {
        opcode: Opcode::ElementAcos,
        c: "acosf(x)",
        f: |x, _| libm::acos(x),
    },
    UnOp {
        opcode: Opcode::ElementAsin,
        c: "asinf(x)",
        f: |x, _| libm::asin(x),
    },
    UnOp {
        opcode: Opcode::ElementAtan,
        c: "atanf(x)",
        f: |x, _| libm::atan(x),
    },
    UnOp {
        opcode: Opcode::ElementAcosh,
        c: "acoshf(x)",
        f: |x, _| libm::acosh(x),
    },
    UnOp {
        opcode: Opcode::ElementAsinh,
        c: "asinhf(x)",
        f: |x, _| libm::asinh(x),
    },
    UnOp {
        opcode: Opcode::ElementAtanh,
        c: "atanhf(x)",
        f: |x, _| libm::atanh(x),
    },
    UnOp {
        opcode: Opcode::ElementCosh,
        c: "coshf(x)",
        f: |x, _| libm::cosh(x),
    },
    UnOp {
        opcode: Opcode::ElementSinh,
        c: "sinhf(x)",
        f: |x, _| libm::sinh(x),
    },
    UnOp {
        opcode: Opcode::ElementTan,
        c: "tanf(x)",
        f: |x, _| libm::tan(x),
    },
    // log(1 + e^x) without overflow: x + log1p(e^-x) for positive x.
    UnOp {
        opcode: Opcode::SoftPlus,
        c: "(x > 0.0f ? x + log1pf(expf(-x)) : log1pf(expf(x)))",
        f: |x, _| softplus(x),
    },
    // The exponential units use expm1 (as ONNX's reference does): e^x - 1
    // loses the low bits near zero.
    UnOp {
        opcode: Opcode::Elu,
        c: "(x > 0.0f ? x : m[0] * expm1f(x))",
        f: |x, m| if x > 0.0 { x } else { m[0] * x.exp_m1() },
    },
    UnOp {
        opcode: Opcode::Selu,
        c: "((x > 0.0f ? x : m[0] * expm1f(x)) * m[1])",
        f: |x, m| (if x > 0.0 { x } else { m[0] * x.exp_m1() }) * m[1],
    },
    // max(0, x) + min(0, Alpha * expm1(x / Alpha)): one of the two is 0.
    UnOp {
        opcode: Opcode::Celu,
        c: "(x > 0.0f ? x : m[0] * expm1f(x / m[0]))",
        f: |x, m| if x > 0.0 { x } else { m[0] * (x / m[0]).exp_m1() },
    },
    // m[0] is `Approximate` (1 = the tanh form).
    UnOp {
        opcode: Opcode::Gelu,
        c: "(m[0] != 0.0f ? 0.5f * x * (1.0f + tanhf(0.7978846f * (x + 0.044715f * x * x * x))) : 0.5f * x * (1.0f + erff(x * 0.70710677f)))",
        f: |x, m| gelu(x, m[0] != 0.0),
    },
    // Glow's constant-operand instructions: m[0] is the member `LHS`.
    UnOp {
        opcode: Opcode::ElementRsubConst,
        c: "(m[0] - x)",
        f: |x, m| m[0] - x,
    },
    UnOp {
        opcode: Opcode::ElementMulConst,
        c: "(m[0] * x)",
        f: |x, m| m[0] * x,
    },
    UnOp {
        opcode: Opcode::ElementTruncate,
        c: "truncf(x)",
        f: |x, _| x.trunc(),
    },
    // m[0], m[1], m[2]: `Nan`, `PosInf`, `NegInf`.
    UnOp {
        opcode: Opcode::NanToNum,
        c: "(isnan(x) ? m[0] : isinf(x) ? (x > 0.0f ? m[1] : m[2]) : x)",
        f: |x, m| nan_to_num(x, m[0], m[1], m[2]),
    },
    // Glow's lowering: `(x * min(max(x + 3, 0), 6)) * 0.166666667`, with
    // its max (`a < b ? b : a`) and min (`b < a ? b : a`).
    UnOp {
        opcode: Opcode::HardSwish,
        c: "(x * (6.0f < ((x + 3.0f) < 0.0f ? 0.0f : (x + 3.0f)) ? 6.0f : ((x + 3.0f) < 0.0f ? 0.0f : (x + 3.0f))) * 0.166666667f)",
        f: |x, _| hard_swish(x),
    },
];

/// `nantonum`: NaN, +inf and -inf replaced, other values kept.
pub fn nan_to_num(x: f32, nan: f32, pos: f32, neg: f32) -> f32 {
    if x.is_nan() {
        nan
    } else if x.is_infinite() {
        if x > 0.0 {
            pos
        } else {
            neg
        }
    } else {
        x
    }
}

/// `hardswish` as Glow lowers it (see `UNARY`).
pub fn hard_swish(x: f32) -> f32 {
    let a = x + 3.0;
    let r = if a < 0.0 { 0.0 } else { a };
    let r = if 6.0 < r { 6.0 } else { r };
    (x * r) * 0.166_666_67
}

/// A float predicate of the `Predicate` family: `Dest` (bool) = `f(Src)`;
/// the C expression over `x`.
pub struct PredOp {
    pub opcode: Opcode,
    pub c: &'static str,
    pub f: fn(f32) -> bool,
}

pub static PREDICATE: &[PredOp] = &[PredOp {
    opcode: Opcode::ElementIsNaN,
    c: "isnan(x)",
    f: |x| x.is_nan(),
}];

pub fn predicate(op: Opcode) -> Option<&'static PredOp> {
    PREDICATE.iter().find(|p| p.opcode == op)
}

/// An operator of the `IntUnary` family over a plain integer `x` widened to
/// 64 bits and the opcode's integer and bool members `m[0]`, `m[1]`, ...
/// (bools as 0/1); the result wraps to `Dest`'s width. The C expression is
/// over `int64_t x` and `const int64_t m[]`.
pub struct IntUnOp {
    pub opcode: Opcode,
    pub c: &'static str,
    pub f: fn(i64, &[i64]) -> i64,
}

pub static INT_UNARY: &[IntUnOp] = &[
    IntUnOp {
        opcode: Opcode::ElementBitwiseNot,
        c: "~x",
        f: |x, _| !x,
    },
    // m[0] `Divisor`, m[1] `SignFollowDivisor`.
    IntUnOp {
        opcode: Opcode::Modulo,
        c: "glow_modulo(x, m[0], m[1])",
        f: |x, m| modulo(x, m[0], m[1] != 0),
    },
];

pub fn int_unary(op: Opcode) -> Option<&'static IntUnOp> {
    INT_UNARY.iter().find(|o| o.opcode == op)
}

/// Glow's `modulo`: C's truncating `x % d` (0 for `d` = -1, where
/// `MIN % -1` would overflow), plus `d` when `follow` and the remainder is
/// negative (Glow adds it whatever the divisor's sign), wrapping. The
/// verifier rejects `d` = 0; it gives 0 here.
pub fn modulo(x: i64, d: i64, follow: bool) -> i64 {
    let r = if d == 0 || d == -1 { 0 } else { x % d };
    if follow && r < 0 {
        r.wrapping_add(d)
    } else {
        r
    }
}

/// A gradient of the `ActivationGrad` family (docs/training.md): `SrcGrad`
/// from the forward output `d` (`Dest`) and its gradient `g` (`DestGrad`).
pub struct GradOp {
    pub opcode: Opcode,
    /// C expression over `d` and `g`.
    pub c: &'static str,
    pub f: fn(f32, f32) -> f32,
}

pub static ACTIVATION_GRAD: &[GradOp] = &[
    // Glow's ReluGrad: a NaN `Dest` is not above 0, so it gives 0.
    GradOp {
        opcode: Opcode::ReluGrad,
        c: "(d > 0.0f ? g : 0.0f)",
        f: |d, g| if d > 0.0 { g } else { 0.0 },
    },
    // Glow's order: (g * d) * (1 - d).
    GradOp {
        opcode: Opcode::SigmoidGrad,
        c: "((g * d) * (1.0f - d))",
        f: |d, g| (g * d) * (1.0 - d),
    },
    GradOp {
        opcode: Opcode::TanhGrad,
        c: "(g * (1.0f - d * d))",
        f: |d, g| g * (1.0 - d * d),
    },
];

pub fn activation_grad(op: Opcode) -> Option<&'static GradOp> {
    ACTIVATION_GRAD.iter().find(|g| g.opcode == op)
}

/// The logarithm of `crossentropyloss`: `elementlog`'s operator, so both
/// engines call libm's `logf` (C text over `x`).
pub fn loss_log() -> &'static UnOp {
    // ElementLog is in UNARY; the test below pins it.
    unary(Opcode::ElementLog).unwrap_or(&UNARY[0])
}

/// `sgd`'s members converted to f32 once, for both engines; a step is
/// applied only when its member asks for it (BatchSize > 1, a decay != 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdParams {
    pub learning_rate: f32,
    pub momentum: f32,
    pub l1_decay: Option<f32>,
    pub l2_decay: Option<f32>,
    pub batch_size: Option<f32>,
}

impl SgdParams {
    pub fn read(m: &crate::members::Members) -> Result<SgdParams, crate::error::BackendError> {
        use glow_ir::member as k;
        let nonzero = |v: f64| Some(v as f32).filter(|&v| v != 0.0);
        let bs = m.get(k::BATCH_SIZE)?;
        Ok(SgdParams {
            learning_rate: m.get(k::LEARNING_RATE)? as f32,
            momentum: m.get(k::MOMENTUM)? as f32,
            l1_decay: nonzero(m.get(k::L1_DECAY)?),
            l2_decay: nonzero(m.get(k::L2_DECAY)?),
            batch_size: (bs > 1).then_some(bs as f32),
        })
    }

    /// One element: `(w, v)` after the step from weight `w`, gradient `g`
    /// and velocity `v`, in the order of [`SgdParams::c_body`].
    pub fn step(&self, w: f32, g: f32, v: f32) -> (f32, f32) {
        let mut g = g;
        if let Some(b) = self.batch_size {
            g /= b;
        }
        if let Some(l2) = self.l2_decay {
            g += l2 * w;
        }
        if let Some(l1) = self.l1_decay {
            g += l1 * if w >= 0.0 { 1.0 } else { -1.0 };
        }
        let v = self.momentum * v + g;
        (w - self.learning_rate * v, v)
    }

    /// C statements over `float w, g, v` doing [`SgdParams::step`].
    pub fn c_body(&self) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(b) = self.batch_size {
            out.push(format!("g = g / {};", c_float(b)));
        }
        if let Some(l2) = self.l2_decay {
            out.push(format!("g = g + {} * w;", c_float(l2)));
        }
        if let Some(l1) = self.l1_decay {
            out.push(format!(
                "g = g + {} * (w >= 0.0f ? 1.0f : -1.0f);",
                c_float(l1)
            ));
        }
        out.push(format!("v = {} * v + g;", c_float(self.momentum)));
        out.push(format!("w = w - {} * v;", c_float(self.learning_rate)));
        out
    }
}

/// libm's float functions that Rust's std does not call (or computes
/// itself), so the interpreter gets the C engine's bits.
mod libm {
    extern "C" {
        fn acosf(x: f32) -> f32;
        fn asinf(x: f32) -> f32;
        fn atanf(x: f32) -> f32;
        fn acoshf(x: f32) -> f32;
        fn asinhf(x: f32) -> f32;
        fn atanhf(x: f32) -> f32;
        fn coshf(x: f32) -> f32;
        fn sinhf(x: f32) -> f32;
        fn tanf(x: f32) -> f32;
    }
    macro_rules! wrap {
        ($($name:ident = $sym:ident;)*) => {$(
            pub fn $name(x: f32) -> f32 {
                // SAFETY: a pure libm function of one float.
                unsafe { $sym(x) }
            }
        )*};
    }
    wrap! {
        acos = acosf;
        asin = asinf;
        atan = atanf;
        acosh = acoshf;
        asinh = asinhf;
        atanh = atanhf;
        cosh = coshf;
        sinh = sinhf;
        tan = tanf;
    }
}

/// `log(1 + e^x)` as the `softplus` kernel computes it.
pub fn softplus(x: f32) -> f32 {
    if x > 0.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// GELU: `x/2 * (1 + erf(x / sqrt 2))`, or the tanh approximation.
pub fn gelu(x: f32, tanh: bool) -> f32 {
    if tanh {
        0.5 * x * (1.0 + (0.797_884_6 * (x + 0.044715 * x * x * x)).tanh())
    } else {
        0.5 * x * (1.0 + erf(x * 0.707_106_77))
    }
}

// The system libm's erff: Rust's std has no f32 erf, and the C engine calls
// this same function.
extern "C" {
    fn erff(x: f32) -> f32;
}

/// `erff` of the system libm.
pub fn erf(x: f32) -> f32 {
    // SAFETY: erff is a pure libm function of one float.
    unsafe { erff(x) }
}

// The fused activations compute the same functions (one definition).
pub use glow_ir::activation::{clip, relu, sigmoid};

/// How `convertto` turns one element of its source kind into its
/// destination kind, defined once for both engines (docs/gir.md): to `bool`
/// anything non-zero (NaN too) is true; integers and bools become the
/// nearest `float`; a `float` becomes an integer by truncation toward zero,
/// saturated to the kind's range, NaN giving 0; integers wrap to the
/// destination's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conversion {
    Same,
    FloatToBool,
    FloatToInt { lo: i64, hi: i64 },
    IntToFloat,
    IntToBool,
    IntToInt,
}

impl Conversion {
    /// The conversion between two kinds `convertto` accepts.
    pub fn between(src: ElemKind, dest: ElemKind) -> Option<Conversion> {
        let int = |k: ElemKind| k.is_plain_int() || k == ElemKind::Bool;
        Some(match (src, dest) {
            (s, d) if s == d => Conversion::Same,
            (ElemKind::Float, ElemKind::Bool) => Conversion::FloatToBool,
            (ElemKind::Float, d) if d.is_plain_int() => {
                let (lo, hi) = d.int_range()?;
                Conversion::FloatToInt { lo, hi }
            }
            (s, ElemKind::Float) if int(s) => Conversion::IntToFloat,
            (s, ElemKind::Bool) if int(s) => Conversion::IntToBool,
            (s, d) if int(s) && d.is_plain_int() => Conversion::IntToInt,
            _ => return None,
        })
    }

    /// One element converted, as the number the destination holds (an
    /// integer or bool as i64, which the store wraps to its width); `None`
    /// when the source is of the other side (a float for `IntTo*`).
    pub fn float(self, x: f32) -> Option<Scalar> {
        Some(match self {
            Conversion::Same => Scalar::F(x),
            Conversion::FloatToBool => Scalar::I((x != 0.0) as i64),
            Conversion::FloatToInt { lo, hi } => Scalar::I(Self::float_to_int(x, lo, hi)),
            _ => return None,
        })
    }

    /// `float` for an integer or bool source element.
    pub fn int(self, x: i64) -> Option<Scalar> {
        Some(match self {
            Conversion::Same | Conversion::IntToInt => Scalar::I(x),
            Conversion::IntToFloat => Scalar::F(x as f32),
            Conversion::IntToBool => Scalar::I((x != 0) as i64),
            _ => return None,
        })
    }

    /// A float to an integer of range `lo..=hi`.
    pub fn float_to_int(x: f32, lo: i64, hi: i64) -> i64 {
        if x.is_nan() {
            0
        } else if x <= lo as f32 {
            lo
        } else if x >= hi as f32 {
            hi
        } else {
            x as i64
        }
    }

    /// The C expression over the source element `x` (of its C type) that
    /// the emitter casts to the destination's C type.
    pub fn c_expr(self) -> String {
        match self {
            Conversion::Same => "x".into(),
            Conversion::FloatToBool | Conversion::IntToBool => "(x != 0)".into(),
            Conversion::FloatToInt { lo, hi } => format!(
                "(x != x ? 0 : x <= {} ? {} : x >= {} ? {} : (int64_t)x)",
                c_float(lo as f32),
                c_int(lo),
                c_float(hi as f32),
                c_int(hi)
            ),
            Conversion::IntToFloat => "(float)(int64_t)x".into(),
            Conversion::IntToInt => "(int64_t)x".into(),
        }
    }
}

/// One element's value: a float, or an integer or bool (0/1) widened to i64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    F(f32),
    I(i64),
}

/// A C integer literal of type `int64_t` (the minimum has no literal).
pub fn c_int(v: i64) -> String {
    if v == i64::MIN {
        "INT64_MIN".into()
    } else {
        format!("INT64_C({v})")
    }
}

impl BinOp {
    /// The integer form, `None` for a float-only operator (`c_int` empty).
    pub fn int_form(&self) -> Option<fn(i64, i64) -> i64> {
        (!self.c_int.is_empty()).then_some(self.int)
    }
    /// The float form, `None` for an integer-only operator (`c_float` empty).
    pub fn float_form(&self) -> Option<fn(f32, f32) -> f32> {
        (!self.c_float.is_empty()).then_some(self.float)
    }
}

pub fn binary(op: Opcode) -> Option<&'static BinOp> {
    BINARY.iter().find(|b| b.opcode == op)
}

pub fn compare(op: Opcode) -> Option<&'static CmpOp> {
    COMPARE.iter().find(|c| c.opcode == op)
}

pub fn logical(op: Opcode) -> Option<&'static LogicOp> {
    LOGICAL.iter().find(|o| o.opcode == op)
}

pub fn unary(op: Opcode) -> Option<&'static UnOp> {
    UNARY.iter().find(|u| u.opcode == op)
}

/// A C float constant that reads back bit-exactly (hex float for finite
/// values; `INFINITY`/`NAN` otherwise).
pub fn c_float(v: f32) -> String {
    if v.is_nan() {
        "NAN".to_string()
    } else if v.is_infinite() {
        if v > 0.0 { "INFINITY" } else { "(-INFINITY)" }.to_string()
    } else {
        // C99 hex float: exact.
        let bits = v.to_bits();
        let sign = if bits >> 31 != 0 { "-" } else { "" };
        let exp = ((bits >> 23) & 0xff) as i32;
        let man = bits & 0x7f_ffff;
        if exp == 0 && man == 0 {
            format!("{sign}0.0f")
        } else if exp == 0 {
            format!("{sign}0x0.{:06x}p-126f", man << 1)
        } else {
            format!("{sign}0x1.{:06x}p{}f", man << 1, exp - 127)
        }
    }
}

/// The operator a scatter's `Reduction` combines with (`old op update`);
/// `None` for `none`, where the update replaces the element.
pub fn scatter_op(reduction: &str) -> Option<&'static BinOp> {
    let opcode = match reduction {
        "add" => Opcode::ElementAdd,
        "mul" => Opcode::ElementMul,
        "max" => Opcode::ElementMax,
        "min" => Opcode::ElementMin,
        _ => return None,
    };
    binary(opcode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_opcode_is_unique() {
        for (i, b) in BINARY.iter().enumerate() {
            assert!(BINARY[i + 1..].iter().all(|c| c.opcode != b.opcode));
        }
    }

    #[test]
    fn the_loss_logarithm_is_logf() {
        assert_eq!(loss_log().opcode, Opcode::ElementLog);
        assert_eq!(loss_log().c, "logf(x)");
    }

    #[test]
    fn every_activation_gradient_has_an_operator() {
        for &op in Opcode::ALL {
            let family = op.info().family == glow_ir::opcode::Family::ActivationGrad;
            assert_eq!(activation_grad(op).is_some(), family, "{}", op.name());
        }
    }

    #[test]
    fn hex_floats() {
        assert_eq!(c_float(1.0), "0x1.000000p0f");
        assert_eq!(c_float(-0.5), "-0x1.000000p-1f");
        assert_eq!(c_float(0.0), "0.0f");
        assert_eq!(c_float(f32::MIN_POSITIVE / 2.0), "0x0.800000p-126f");
    }
}

/// The f32 constants of `localresponsenormalizationgrad`, read once for both
/// engines so the C literals and the interpreter's values are the same bits.
#[derive(Clone, Copy, Debug)]
pub struct LrnGradParams {
    /// The window reaches this many channels each side (clamped to the row).
    pub half: u64,
    /// `-Beta`, the exponent of `Scale`.
    pub neg_beta: f32,
    /// `(2 * (Alpha / (2 * HalfWindowSize + 1))) * Beta`.
    pub coef: f32,
}

impl LrnGradParams {
    pub fn read(m: &crate::members::Members) -> Result<LrnGradParams, crate::error::BackendError> {
        use glow_ir::member as k;
        let half = m.get(k::HALF_WINDOW_SIZE)?.max(0) as u64;
        // The forward's normalized alpha, computed as `lrn` computes it.
        let norm = m.get(k::ALPHA)? as f32 / (2 * half + 1) as f32;
        let beta = m.get(k::BETA)? as f32;
        Ok(LrnGradParams {
            half,
            neg_beta: -beta,
            coef: 2.0f32 * norm * beta,
        })
    }
}

/// The shape and f32 constants of `batchnormalizationgrad`, read once for
/// both engines so the C literals and the interpreter's values are the same
/// bits: `Src` seen as `[outer, C, inner]` around `ChannelIdx`, `N = outer *
/// inner` elements per channel.
#[derive(Clone, Copy, Debug)]
pub struct BatchNormGradParams {
    pub outer: u64,
    pub channels: u64,
    pub inner: u64,
    /// `Epsilon` as f32.
    pub eps: f32,
    /// `N` as f32.
    pub n: f32,
    /// `1 / N`, divided in f64 and rounded once to f32 (Glow's `invNSplat`).
    pub inv_n: f32,
}

impl BatchNormGradParams {
    pub fn read(
        m: &crate::members::Members,
        dims: &[u64],
    ) -> Result<BatchNormGradParams, crate::error::BackendError> {
        use glow_ir::member as k;
        let ch = m.get(k::CHANNEL_IDX)?.max(0) as usize;
        let (outer, channels, inner) = crate::emit::split(dims, ch);
        let count = outer.saturating_mul(inner);
        Ok(BatchNormGradParams {
            outer,
            channels,
            inner,
            eps: m.get(k::EPSILON)? as f32,
            n: count as f32,
            inv_n: (1.0f64 / count as f64) as f32,
        })
    }
}
