//! Member rules: every member of the opcode's table is present and of the
//! right type, and the values that do not depend on operand types are sane
//! (window members positive, pads non-negative, counts at least 1, fused
//! activation arguments of the right length). Type-dependent members
//! (`Shuffle`, `Offsets`, `Axis`, `ChannelIdx`) are checked by the shape rules.

use super::VerifyError;
use crate::function::{Function, InstId, MemberValue};
use crate::member as m;
use crate::opcode::MemberRule;
use crate::printer::write_member_value;

/// Checks the members of `i`; true when all are present and well-typed
/// (so the shape rule may read them).
pub(super) fn check(f: &Function, i: InstId, errors: &mut Vec<VerifyError>) -> bool {
    let inst = f.inst(i);
    let info = inst.opcode.info();
    let mut ok = true;
    for (m, def) in info.members.iter().enumerate() {
        let Some(v) = inst.members.get(m).and_then(Option::as_ref) else {
            ok = false;
            errors.push(VerifyError::MissingMember {
                inst: i,
                member: m,
                opcode: info.name,
                member_name: def.name,
            });
            continue;
        };
        if !v.has_type(def.ty) {
            ok = false;
            let mut found = String::new();
            write_member_value(v, &mut found);
            errors.push(VerifyError::MemberType {
                inst: i,
                member: m,
                member_name: def.name,
                expected: def.ty.describe(),
                found,
            });
            continue;
        }
        if let Some(message) = sanity(def.name, def.rule, v) {
            errors.push(VerifyError::MemberValue {
                inst: i,
                member: m,
                message,
            });
        }
    }
    if inst.members.len() > info.members.len() {
        ok = false;
        errors.push(VerifyError::ExtraMembers {
            inst: i,
            opcode: info.name,
            expected: info.members.len(),
            found: inst.members.len(),
        });
    }
    if let Some(message) = fused_args(inst) {
        let member = info.member_index("FusedActivationArgs").unwrap_or(0);
        errors.push(VerifyError::MemberValue {
            inst: i,
            member,
            message,
        });
    }
    ok
}

/// The problem with a well-typed member value, by the table's rule.
fn sanity(name: &str, rule: MemberRule, v: &MemberValue) -> Option<String> {
    match (rule, v) {
        (MemberRule::TwoPositive, MemberValue::IntArray(a)) => (a.len() != 2
            || a.iter().any(|&x| x <= 0))
        .then(|| format!("`{name}` must have 2 positive elements, found {a:?}")),
        (MemberRule::TwoNonNegative, MemberValue::IntArray(a)) => (a.len() != 2
            || a.iter().any(|&x| x < 0))
        .then(|| format!("`{name}` must have 2 non-negative elements, found {a:?}")),
        (MemberRule::Pads, MemberValue::IntArray(a)) => (a.len() != 4 || a.iter().any(|&x| x < 0))
            .then(|| {
                format!(
                "`{name}` must have 4 non-negative elements (top, left, bottom, right), found {a:?}"
            )
            }),
        (MemberRule::ThreePositive, MemberValue::IntArray(a)) => (a.len() != 3
            || a.iter().any(|&x| x <= 0))
        .then(|| format!("`{name}` must have 3 positive elements, found {a:?}")),
        (MemberRule::Pads3D, MemberValue::IntArray(a)) => (a.len() != 6
            || a.iter().any(|&x| x < 0))
        .then(|| {
            format!(
                "`{name}` must have 6 non-negative elements (near, far, top, bottom, left, right), found {a:?}"
            )
        }),
        (MemberRule::AtLeastOne, MemberValue::Int(x)) => {
            (*x < 1).then(|| format!("`{name}` must be at least 1, found {x}"))
        }
        (MemberRule::NonNegative, MemberValue::Int(x)) => {
            (*x < 0).then(|| format!("`{name}` must not be negative, found {x}"))
        }
        (MemberRule::NonZero, MemberValue::Int(x)) => {
            (*x == 0).then(|| format!("`{name}` must not be 0"))
        }
        (MemberRule::LossReduction, MemberValue::Int(x)) => (!(0..=2).contains(x))
            .then(|| format!("`{name}` must be 0 (none), 1 (mean) or 2 (sum), found {x}")),
        _ => None,
    }
}

/// `FusedActivationArgs` has as many values as `FusedActivation` takes.
fn fused_args(inst: &crate::function::InstData) -> Option<String> {
    let act = inst.get(m::FUSED_ACTIVATION)?;
    let args = inst.get(m::FUSED_ACTIVATION_ARGS)?;
    let want = crate::activation::FusedActivation::from_name(act).map_or(0, |a| a.arg_count());
    (args.len() != want).then(|| {
        format!(
            "`FusedActivation: {act}` takes {want} value(s) in `FusedActivationArgs`, found {}",
            args.len()
        )
    })
}
