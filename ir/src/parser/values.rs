//! Lowering of written values: numbers, types, member values, weight data
//! and the function header, each checked against what its place expects.

use super::{span, unescape};
use crate::ast::*;
use crate::diag::{did_you_mean, Diagnostic};
use crate::function::*;
use crate::opcode::MemberType;
use crate::span::Span;
use crate::types::{ElemKind, Type, MAX_DIMS};

pub(super) fn num_span(n: &Spanned<Num>) -> Span {
    Span::new(n.start, n.end)
}

/// `function f { Arena: N, Align: A }`: the planned arena. `Align`
/// defaults to 64 and needs `Arena`; both are non-negative, `Align` > 0.
pub(super) fn lower_header(
    members: &[Box<MemberAst>],
    diags: &mut Vec<Diagnostic>,
) -> Option<ArenaPlan> {
    const NAMES: [&str; 2] = ["Arena", "Align"];
    let mut vals: [Option<u64>; 2] = [None, None];
    for m in members {
        let Some(k) = NAMES.iter().position(|&n| n == m.name.value) else {
            let mut d = Diagnostic::error(format!("unknown function member `{}`", m.name.value))
                .at(span(&m.name))
                .with_note("a function has the members `Arena` and `Align`");
            if let Some(s) = did_you_mean(m.name.value, NAMES) {
                d = d.with_note(format!("did you mean `{s}`?"));
            }
            diags.push(d);
            continue;
        };
        if vals[k].is_some() {
            diags.push(
                Diagnostic::error(format!("member `{}` is given twice", NAMES[k]))
                    .at(span(&m.name)),
            );
            continue;
        }
        let (s, e) = m.value.span();
        let v = match &m.value {
            ValueAst::Num(n) => parse_int(n, diags),
            _ => {
                diags.push(Diagnostic::error("expected an integer").at(Span::new(s, e)));
                continue;
            }
        };
        match v {
            // Offsets are multiples of the alignment: only a power of two keeps every
            // element aligned.
            Some(v) if k == 1 && v > 0 && !(v as u64).is_power_of_two() => diags.push(
                Diagnostic::error(format!("`Align` must be a power of two, found {v}"))
                    .at(Span::new(s, e)),
            ),
            Some(v) if v >= 0 && (k == 0 || v > 0) => vals[k] = Some(v as u64),
            Some(v) => diags.push(
                Diagnostic::error(format!(
                    "`{}` must be {}, found {v}",
                    NAMES[k],
                    ["non-negative", "positive"][k]
                ))
                .at(Span::new(s, e)),
            ),
            None => {}
        }
    }
    match vals {
        [Some(size), align] => Some(ArenaPlan {
            size,
            align: align.unwrap_or(crate::function::ALIGN),
        }),
        [None, Some(_)] => {
            let m = members.iter().find(|m| m.name.value == "Align")?;
            diags.push(Diagnostic::error("`Align` needs `Arena`").at(span(&m.name)));
            None
        }
        [None, None] => None,
    }
}

pub(super) fn parse_int(n: &Spanned<Num>, diags: &mut Vec<Diagnostic>) -> Option<i64> {
    match n.value {
        Num::Int(s) => match s.parse::<i64>() {
            Ok(v) => Some(v),
            Err(_) => {
                diags.push(Diagnostic::error("integer out of range").at(num_span(n)));
                None
            }
        },
        Num::Float(s) => {
            diags.push(
                Diagnostic::error(format!("expected an integer, found float `{}`", s))
                    .at(num_span(n)),
            );
            None
        }
    }
}

pub(super) fn parse_float(n: &Spanned<Num>) -> f64 {
    let s = match n.value {
        Num::Int(s) | Num::Float(s) => s,
    };
    // The lexer only produces digits, `inf` and `nan`, so this parses.
    s.parse::<f64>().unwrap_or(f64::NAN)
}

/// Lowers a written type, checking the element kind and dimensions.
pub(super) fn lower_type(t: &TypeAst, diags: &mut Vec<Diagnostic>) -> Option<Type> {
    let base = t.elem.value;
    let quantized = ElemKind::takes_params(base);
    let mut quant = None;
    if quantized {
        let (mut scale, mut offset) = (None, None);
        for (k, v) in &t.quant {
            match k.value {
                "S" => {
                    let x = parse_float(v) as f32;
                    if x.is_finite() && x > 0.0 {
                        scale = Some(x);
                    } else {
                        diags.push(
                            Diagnostic::error(
                                "a quantization scale must be a positive finite number",
                            )
                            .at(Span::new(v.start, v.end)),
                        );
                        return None;
                    }
                }
                // Any 32-bit zero point is allowed, as in Glow (it need not lie
                // in the stored range).
                "O" => offset = parse_int(v, diags).and_then(|o| i32::try_from(o).ok()),
                other => diags.push(
                    Diagnostic::error(format!("unknown quantization parameter `{}`", other))
                        .at(span(k))
                        .with_note("quantization parameters are `S:scale O:offset`"),
                ),
            }
        }
        match (scale, offset) {
            (Some(s), Some(o)) => quant = Some((s, o)),
            _ => {
                diags.push(
                    Diagnostic::error(format!(
                        "quantized type `{}` needs `[S:scale O:offset]`",
                        base
                    ))
                    .at(span(&t.elem)),
                );
                return None;
            }
        }
    } else if let Some((k, _)) = t.quant.first() {
        diags.push(
            Diagnostic::error(format!(
                "`{}` is not a quantized type and takes no parameters",
                base
            ))
            .at(span(k)),
        );
    }
    let Some(elem) = ElemKind::from_name(base, quant) else {
        let mut d = Diagnostic::error(format!("unknown element type `{}`", base)).at(span(&t.elem));
        if let Some(s) = did_you_mean(base, ElemKind::BASE_NAMES.iter().copied()) {
            d = d.with_note(format!("did you mean `{}`?", s));
        } else {
            d = d.with_note(format!(
                "element types are {}",
                ElemKind::BASE_NAMES.join(", ")
            ));
        }
        diags.push(d);
        return None;
    };
    let mut dims = Vec::new();
    let mut ok = true;
    for d in &t.dims {
        match d.value.parse::<u64>() {
            Ok(v) if v > 0 => dims.push(v),
            // All digits but past u64: say it is too large, not that it is not a number.
            Err(_) if !d.value.is_empty() && d.value.bytes().all(|b| b.is_ascii_digit()) => {
                diags.push(
                    Diagnostic::error(format!(
                        "dimension `{}` is too large (at most {})",
                        d.value,
                        u64::MAX
                    ))
                    .at(span(d)),
                );
                ok = false;
            }
            _ => {
                diags.push(Diagnostic::error("a dimension must be a positive integer").at(span(d)));
                ok = false;
            }
        }
    }
    if dims.len() > MAX_DIMS {
        diags.push(
            Diagnostic::error(format!(
                "a type has at most {} dimensions, found {}",
                MAX_DIMS,
                dims.len()
            ))
            .at(Span::new(t.start, t.end)),
        );
        ok = false;
    }
    let ty = Type { elem, dims };
    if ok
        && ty
            .dims
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .is_none_or(|n| n.checked_mul(8).is_none())
    {
        diags.push(Diagnostic::error("type is too large").at(Span::new(t.start, t.end)));
        ok = false;
    }
    ok.then_some(ty)
}

/// Lowers a member value, coercing where the member's type allows it
/// (integers for floats, `1`/`0` for bools). A value of another type is kept
/// as written; the verifier reports the mismatch.
pub(super) fn lower_member(
    v: &ValueAst,
    ty: MemberType,
    diags: &mut Vec<Diagnostic>,
) -> Option<MemberValue> {
    Some(match v {
        ValueAst::Num(n) => match (&n.value, ty) {
            (Num::Int(_), MemberType::Float) | (Num::Float(_), _) => {
                MemberValue::Float(parse_float(n))
            }
            (Num::Int(s), MemberType::Bool) if *s == "0" || *s == "1" => {
                MemberValue::Bool(*s == "1")
            }
            (Num::Int(_), _) => MemberValue::Int(parse_int(n, diags)?),
        },
        ValueAst::Ident(t) => match t.value {
            "true" => MemberValue::Bool(true),
            "false" => MemberValue::Bool(false),
            other => MemberValue::Enum(other.to_string()),
        },
        ValueAst::Str(t) => MemberValue::Str(unescape(&t.value[1..t.value.len() - 1])),
        ValueAst::Type(t) => MemberValue::Type(lower_type(t, diags)?),
        ValueAst::Array {
            elems, truncated, ..
        } => {
            if let Some((l, r)) = truncated {
                diags.push(truncated_error(*l, *r));
                return None;
            }
            let mut nums = Vec::new();
            for e in elems {
                match e {
                    ValueAst::Num(n) => nums.push(n),
                    other => {
                        let (l, r) = other.span();
                        diags.push(
                            Diagnostic::error("expected a number in this array")
                                .at(Span::new(l, r)),
                        );
                        return None;
                    }
                }
            }
            let all_int = nums.iter().all(|n| matches!(n.value, Num::Int(_)));
            if ty == MemberType::FloatArray || !all_int {
                MemberValue::FloatArray(nums.iter().map(|n| parse_float(n)).collect())
            } else {
                let mut ints = Vec::new();
                for n in nums {
                    ints.push(parse_int(n, diags)?);
                }
                MemberValue::IntArray(ints)
            }
        }
        ValueAst::Call { func, .. } => {
            diags.push(
                Diagnostic::error(format!(
                    "`{}(...)` is only allowed in a weight's `Data`",
                    func.value
                ))
                .at(span(func)),
            );
            return None;
        }
    })
}

pub(super) fn truncated_error(l: usize, r: usize) -> Diagnostic {
    Diagnostic::error("this array was truncated by a Glow dump and cannot be read back")
        .at_labelled(Span::new(l, r), "elements are missing here")
        .with_note("Glow's dump prints only the first elements of an array; write every element")
}

/// Lowers a weight's `Data`: `splat(v)` or one value per element.
pub(super) fn lower_data(
    v: &ValueAst,
    ty: &Type,
    diags: &mut Vec<Diagnostic>,
) -> Option<WeightInit> {
    match v {
        ValueAst::Call { func, arg, .. } if func.value == "splat" => {
            if ty.elem.is_float() {
                return Some(WeightInit::Splat(parse_float(arg)));
            }
            // The same checks as one value of an array.
            let v = parse_int(arg, diags)?;
            fits(v, ty.elem, num_span(arg), diags)?;
            // A splat holds an f64: an integer it cannot hold exactly would change.
            if v as f64 as i64 != v || v == i64::MAX {
                diags.push(
                    Diagnostic::error(format!(
                        "{v} cannot be a `splat` value (splats hold an f64, exact only to 2^53); \
                         write the values out"
                    ))
                    .at(num_span(arg)),
                );
                return None;
            }
            Some(WeightInit::Splat(v as f64))
        }
        ValueAst::Array {
            elems,
            truncated,
            start,
            end,
        } => {
            if let Some((l, r)) = truncated {
                diags.push(truncated_error(*l, *r));
                return None;
            }
            if elems.len() as u64 != ty.size() {
                diags.push(
                    Diagnostic::error(format!(
                        "`Data` has {} values but the type `{}` has {} elements",
                        elems.len(),
                        ty,
                        ty.size()
                    ))
                    .at(Span::new(*start, *end)),
                );
                return None;
            }
            if ty.elem.is_float() {
                let mut out = Vec::with_capacity(elems.len());
                for e in elems {
                    match e {
                        ValueAst::Num(n) => out.push(parse_float(n)),
                        other => {
                            let (l, r) = other.span();
                            diags.push(Diagnostic::error("expected a number").at(Span::new(l, r)));
                            return None;
                        }
                    }
                }
                Some(WeightInit::Floats(out))
            } else {
                let mut out = Vec::with_capacity(elems.len());
                for e in elems {
                    let v = match e {
                        ValueAst::Num(n) => parse_int(n, diags)?,
                        ValueAst::Ident(t) if ty.elem == ElemKind::Bool && t.value == "true" => 1,
                        ValueAst::Ident(t) if ty.elem == ElemKind::Bool && t.value == "false" => 0,
                        other => {
                            let (l, r) = other.span();
                            diags.push(
                                Diagnostic::error(format!(
                                    "expected an integer for `{}` data",
                                    ty.elem.base_name()
                                ))
                                .at(Span::new(l, r)),
                            );
                            return None;
                        }
                    };
                    let (l, r) = e.span();
                    fits(v, ty.elem, Span::new(l, r), diags)?;
                    out.push(v);
                }
                Some(WeightInit::Ints(out))
            }
        }
        other => {
            let (l, r) = other.span();
            diags.push(
                Diagnostic::error("`Data` must be an array of values or `splat(value)`")
                    .at(Span::new(l, r)),
            );
            None
        }
    }
}

/// `Some(())` when `v` fits in `elem`, else an error at `at`.
fn fits(v: i64, elem: ElemKind, at: Span, diags: &mut Vec<Diagnostic>) -> Option<()> {
    match int_range(elem) {
        Some((lo, hi)) if v < lo || v > hi => {
            diags.push(
                Diagnostic::error(format!(
                    "{v} does not fit in `{}` (from {lo} to {hi})",
                    elem.base_name()
                ))
                .at(at),
            );
            None
        }
        _ => Some(()),
    }
}

/// The values an integer element kind can hold (stored values for quantized
/// kinds); `None` for 64-bit indices, which any parsed integer fits.
fn int_range(k: ElemKind) -> Option<(i64, i64)> {
    match k {
        ElemKind::Bool => Some((0, 1)),
        ElemKind::Index64 => None,
        // Fused rows are bytes (their scale and offset included).
        ElemKind::Fused(_) => Some((0, 255)),
        k if k.is_plain_int() => k.int_range(),
        other => other.quant_range(),
    }
}
