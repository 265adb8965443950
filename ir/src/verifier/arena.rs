//! The rule for planned functions (`function f { Arena: N }`): every
//! `allocactivation` has an `Offset` that is a multiple of the alignment,
//! its bytes end at or below the arena, and no two allocations whose
//! lifetimes (alloc position ..= dealloc position, or the function's end)
//! overlap share a byte. An unplanned function must not carry `Offset`s.

use super::VerifyError;
use crate::function::{Function, InstId, Value};
use crate::member as m;
use crate::opcode::Opcode;

/// Appends the arena errors of `f`.
pub(super) fn check(f: &Function, errors: &mut Vec<VerifyError>) {
    let Some(member) = Opcode::AllocActivation.info().member_index("Offset") else {
        return;
    };
    // (alloc, first, last, offset, bytes) of each placed alloc.
    let mut placed: Vec<(InstId, usize, usize, u64, u64)> = Vec::new();
    // Per alloc id: its entry in `placed` while not yet deallocated (dense,
    // so a function with thousands of live buffers stays linear).
    let mut open: Vec<Option<usize>> = vec![None; f.insts.len()];
    let end = f.layout.len().saturating_sub(1);
    for (pos, id) in f.layout.iter().enumerate() {
        let Some(inst) = f.insts.get(id.index()) else {
            continue;
        };
        match inst.opcode {
            Opcode::AllocActivation => {
                let offset = inst.get(m::OFFSET).unwrap_or(-1);
                let bytes = inst.get(m::TY).map_or(0, |t| t.bytes());
                let bad = |message: String| VerifyError::MemberValue {
                    inst: id,
                    member,
                    message,
                };
                let Some(plan) = f.memory else {
                    if offset != -1 {
                        errors.push(bad(format!(
                            "`Offset` is set but the function has no planned arena \
                             (`function {} {{ Arena: N }}`)",
                            f.name
                        )));
                    }
                    continue;
                };
                if offset < 0 {
                    errors.push(bad(format!(
                        "`%{}` has no `Offset` in a function with a planned arena",
                        inst.name
                    )));
                    continue;
                }
                let offset = offset as u64;
                let elem = inst.get(m::TY).map_or(1, |t| t.elem.bytes());
                if plan.align < elem {
                    errors.push(bad(format!(
                        "the arena alignment {} is smaller than the {elem}-byte elements of `%{}`",
                        plan.align, inst.name
                    )));
                }
                if !offset.is_multiple_of(plan.align.max(1)) {
                    errors.push(bad(format!(
                        "`Offset` {offset} is not a multiple of the arena alignment {}",
                        plan.align
                    )));
                }
                if offset.saturating_add(bytes) > plan.size {
                    errors.push(bad(format!(
                        "`%{}` ends at byte {}, beyond the arena of {} bytes",
                        inst.name,
                        offset.saturating_add(bytes),
                        plan.size
                    )));
                }
                open[id.index()] = Some(placed.len());
                placed.push((id, pos, end, offset, bytes));
            }
            Opcode::DeallocActivation => {
                if let Some(Value::Inst(a)) = inst.operands.first().map(|o| o.value) {
                    if let Some(k) = open.get_mut(a.index()).and_then(Option::take) {
                        placed[k].2 = pos;
                    }
                }
            }
            _ => {}
        }
    }
    overlaps(f, &placed, errors);
}

/// Pairs live together and overlapping in bytes; `placed` is in alloc order,
/// so a sweep keeps only the allocations still live.
fn overlaps(
    f: &Function,
    placed: &[(InstId, usize, usize, u64, u64)],
    errors: &mut Vec<VerifyError>,
) {
    let mut active: Vec<usize> = Vec::new();
    for (k, &(id, first, _, off, bytes)) in placed.iter().enumerate() {
        active.retain(|&j| placed[j].2 >= first);
        for &j in &active {
            let (other, _, _, o2, b2) = placed[j];
            if bytes > 0 && b2 > 0 && off < o2.saturating_add(b2) && o2 < off.saturating_add(bytes)
            {
                let name = |i: InstId| f.insts.get(i.index()).map_or("?", |d| d.name.as_str());
                errors.push(VerifyError::ArenaOverlap {
                    inst: id,
                    other,
                    message: format!(
                        "`%{}` (bytes {off}..{}) overlaps `%{}` (bytes {o2}..{}), which is live at the same time",
                        name(id),
                        off.saturating_add(bytes),
                        name(other),
                        o2.saturating_add(b2)
                    ),
                });
            }
        }
        active.push(k);
    }
}

#[cfg(test)]
mod tests {
    use crate::verifier::tests::errors;

    fn planned(header: &str, code: &[&str]) -> String {
        let mut s = format!(
            "function f{header}\ndeclare {{\n  %in = WeightVar float<16> mutable\n}}\n\ncode {{\n"
        );
        for c in code {
            s.push_str(&format!("  {c}\n"));
        }
        s + "}\n"
    }

    const CODE: [&str; 6] = [
        "%a = allocactivation { Ty: float<16>, Offset: 0 }",
        "%c = copy @out %a, @in %in",
        "%b = allocactivation { Ty: float<16>, Offset: OFF }",
        "%d = copy @out %b, @in %a",
        "%x = deallocactivation @out %a",
        "%y = deallocactivation @out %b",
    ];

    fn code(off: &str) -> Vec<String> {
        CODE.iter().map(|l| l.replace("OFF", off)).collect()
    }

    fn check(header: &str, off: &str) -> Vec<(usize, String)> {
        let c = code(off);
        errors(&planned(
            header,
            &c.iter().map(String::as_str).collect::<Vec<_>>(),
        ))
    }

    #[test]
    fn valid_plan() {
        assert_eq!(check(" { Arena: 128 }", "64"), vec![]);
        assert_eq!(check(" { Arena: 128, Align: 16 }", "64"), vec![]);
    }

    #[test]
    fn overlap_misalignment_and_bounds() {
        let e = check(" { Arena: 128 }", "32");
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(
            e[0].1,
            "`Offset` 32 is not a multiple of the arena alignment 64"
        );
        assert_eq!(
            e[1].1,
            "`%b` (bytes 32..96) overlaps `%a` (bytes 0..64), which is live at the same time"
        );
        let e = check(" { Arena: 100 }", "64");
        assert_eq!(
            e[0].1,
            "`%b` ends at byte 128, beyond the arena of 100 bytes"
        );
    }

    #[test]
    fn planned_needs_offsets_and_unplanned_forbids_them() {
        let e = check("", "64");
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0]
            .1
            .starts_with("`Offset` is set but the function has no planned arena"));
        let c: Vec<String> = code("0")
            .iter()
            .map(|l| l.replace(", Offset: 0", ""))
            .collect();
        let e = errors(&planned(
            " { Arena: 128 }",
            &c.iter().map(String::as_str).collect::<Vec<_>>(),
        ));
        assert_eq!(
            e[0].1,
            "`%a` has no `Offset` in a function with a planned arena"
        );
    }

    #[test]
    fn reuse_after_dealloc_is_fine() {
        let c = [
            "%a = allocactivation { Ty: float<16>, Offset: 0 }",
            "%c = copy @out %a, @in %in",
            "%x = deallocactivation @out %a",
            "%b = allocactivation { Ty: float<16>, Offset: 0 }",
            "%d = copy @out %b, @in %in",
            "%y = deallocactivation @out %b",
        ];
        assert_eq!(errors(&planned(" { Arena: 64 }", &c)), vec![]);
    }

    #[test]
    fn header_round_trips_and_rejects_bad_members() {
        let src = planned(" { Arena: 128, Align: 16 }", &[]);
        let m = crate::parser::parse(src.as_bytes()).expect("parses");
        let printed = crate::printer::print_module(&m, Default::default());
        assert!(
            printed.starts_with("function f { Arena: 128, Align: 16 }\n"),
            "{printed}"
        );
        let m2 = crate::parser::parse(printed.as_bytes()).expect("reparses");
        assert_eq!(
            crate::printer::print_module(&m2, Default::default()),
            printed
        );
        for (h, msg) in [
            (" { Arena: -1 }", "`Arena` must be non-negative, found -1"),
            (
                " { Arena: 64, Align: 0 }",
                "`Align` must be positive, found 0",
            ),
            (" { Arean: 64 }", "unknown function member `Arean`"),
            (" { Align: 64 }", "`Align` needs `Arena`"),
            (" { Arena: 1, Arena: 2 }", "member `Arena` is given twice"),
            (" { Arena: foo }", "expected an integer"),
        ] {
            let d = crate::parser::parse(planned(h, &[]).as_bytes()).expect_err(h);
            assert_eq!(d[0].message, msg);
        }
    }
}
