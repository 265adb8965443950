//! `--explain-sharing=%a,%b` (glow-opt) and the same in glow-lsp's hover:
//! why two buffers share memory or do not, from the deciders' own
//! reasoning rather than a re-derivation:
//! - the planner (`plan-memory`, `glow_planner::arena`): the two
//!   allocations' lifetimes, the instruction where both are live, the
//!   offsets of the plan (the function's own when planned), alignment;
//! - `share-buffers` and `inplace`, run on a copy of the function with
//!   their `--debug-only` trace on: each line where they considered the
//!   pair (types or sizes differ, a const weight, overlapping intervals, an
//!   aliasing instruction, or the share they made);
//! - the training mode, which leaves both passes out (`TRAIN_SKIPS`).

use crate::pass::{PassContext, PassInfo, PassOptions, Stats};
use crate::pipeline::TRAIN_SKIPS;
use glow_ir::{Function, Opcode, Value, ALIGN};
use glow_planner::arena::{arena_layout, lifetimes};

/// `%name`, as the passes write names in their traces.
fn pct(f: &Function, v: Value) -> String {
    format!("%{}", f.value_name(v))
}

/// "instruction 3 (`%x = relu`)".
fn inst_at(f: &Function, order: &[glow_ir::InstId], p: usize) -> String {
    match order.get(p) {
        Some(&i) => format!("{p} (`%{} = {}`)", f.inst(i).name, f.inst(i).opcode.name()),
        None => p.to_string(),
    }
}

/// What `v` is: a weight, an alloc or a view of one.
fn describe(f: &Function, v: Value) -> String {
    let name = pct(f, v);
    match v {
        Value::Weight(w) => {
            let wd = f.weight(w);
            format!(
                "{name}: a {} weight, {} ({} bytes)",
                wd.mutability.as_str(),
                wd.ty,
                wd.ty.bytes()
            )
        }
        Value::Inst(i) => {
            let inst = f.inst(i);
            let ty = f.value_type(v);
            match (inst.opcode, ty) {
                (Opcode::TensorView, Some(t)) => {
                    let (o, off) = f.origin(v);
                    format!(
                        "{name}: a view {t} of {} at element {off}; its memory is {}'s",
                        pct(f, o),
                        pct(f, o)
                    )
                }
                (_, Some(t)) => format!("{name}: an allocation, {t} ({} bytes)", t.bytes()),
                (o, None) => format!("{name}: not a buffer (the result of `{}`)", o.name()),
            }
        }
    }
}

/// Whether `line` names `%name` as a whole word.
fn mentions(line: &str, name: &str) -> bool {
    let word = format!("%{name}");
    line.match_indices(&word).any(|(i, _)| {
        let after = line[i + word.len()..].chars().next();
        !after.is_some_and(|c| c.is_ascii_alphanumeric() || "_.$-".contains(c))
    })
}

/// The trace lines of `info`'s pass, run on a copy of `f`, that concern
/// both buffers. A share-buffers line `replaced %x's interval .. by %y`
/// moves `x`'s value into `y`, so from then on `y` stands for it too: the
/// pass's later reasons about `y` are about the pair.
fn trace(f: &Function, info: &'static PassInfo, a: &str, b: &str) -> Result<Vec<String>, String> {
    let mut copy = f.clone();
    let mut pass = (info.create)(&PassOptions::default())?;
    let mut stats = Stats::default();
    let mut log = String::new();
    let mut cx = PassContext::for_pass(info, &mut stats, Some(&mut log));
    pass.run(&mut copy, &mut cx).map_err(|d| {
        d.first()
            .map_or_else(|| format!("{} failed", info.name), |d| d.message.clone())
    })?;
    let mut names_a = vec![a.to_string()];
    let mut names_b = vec![b.to_string()];
    let mut out = Vec::new();
    for l in log.lines() {
        let in_a = names_a.iter().any(|n| mentions(l, n));
        let in_b = names_b.iter().any(|n| mentions(l, n));
        if let Some((from, to)) = replaced(l) {
            for names in [&mut names_a, &mut names_b] {
                if names.contains(&from) && !names.contains(&to) {
                    names.push(to.clone());
                }
            }
        }
        let moved = replaced(l).is_some_and(|(from, _)| from == a || from == b);
        if (in_a && in_b) || moved {
            out.push(l.to_string());
        }
        // Once both live in one buffer the pair is shared; later lines are
        // about that buffer and others.
        if names_a.iter().any(|n| names_b.contains(n)) {
            break;
        }
    }
    Ok(out)
}

/// `(x, y)` of a share-buffers trace line `replaced %x's interval .. by %y`.
fn replaced(line: &str) -> Option<(String, String)> {
    let rest = &line[line.find("replaced %")? + "replaced %".len()..];
    let from = &rest[..rest.find("'s interval")?];
    let after = &rest[rest.find(" by %")? + " by %".len()..];
    let end = after
        .find(|c: char| !(c.is_ascii_alphanumeric() || "_.$-".contains(c)))
        .unwrap_or(after.len());
    Some((from.to_string(), after[..end].to_string()))
}

/// In-place pairs of instructions that name a view of `oa` and one of `ob`.
fn inplace_pairs(f: &Function, oa: Value, ob: Value) -> Vec<String> {
    let order = f.layout.to_vec();
    let mut out = Vec::new();
    for (p, &i) in order.iter().enumerate() {
        let inst = f.inst(i);
        let info = inst.opcode.info();
        for &(d, s) in info.inplace {
            let (Some(x), Some(y)) = (inst.operands.get(d), inst.operands.get(s)) else {
                continue;
            };
            let (ox, oy) = (f.origin(x.value).0, f.origin(y.value).0);
            if (ox, oy) == (oa, ob) || (ox, oy) == (ob, oa) {
                out.push(format!(
                    "{}: {},{}",
                    inst_at(f, &order, p),
                    info.operands[d].name,
                    info.operands[s].name
                ));
            }
        }
    }
    out
}

/// Why `a` and `b` of `f` share memory or do not, one reason a line.
pub fn explain_sharing(f: &Function, a: Value, b: Value) -> String {
    let mut out = format!(
        "explain-sharing {}, {} in function `{}`:\n",
        pct(f, a),
        pct(f, b),
        f.name
    );
    let line = |out: &mut String, s: String| {
        out.push_str("  ");
        out.push_str(&s);
        out.push('\n');
    };
    line(&mut out, describe(f, a));
    line(&mut out, describe(f, b));
    if f.value_type(a).is_none() || f.value_type(b).is_none() {
        line(&mut out, "only buffers have memory to share".into());
        return out;
    }
    let (oa, ob) = (f.origin(a).0, f.origin(b).0);
    if oa == ob {
        line(&mut out, format!("same memory: both are {}", pct(f, oa)));
        return out;
    }
    let order = f.layout.to_vec();
    // The planner: lifetimes and offsets.
    match (oa, ob) {
        (Value::Weight(_), _) | (_, Value::Weight(_)) => {
            let w = if matches!(oa, Value::Weight(_)) {
                oa
            } else {
                ob
            };
            line(
                &mut out,
                format!(
                    "planner: {} is a weight; weights are not in the activation arena, so \
                     plan-memory never gives it other bytes (only share-buffers can put a \
                     value in a weight's memory)",
                    pct(f, w)
                ),
            );
        }
        (Value::Inst(ia), Value::Inst(ib)) => {
            let lives = lifetimes(f);
            let la = lives.iter().position(|l| l.alloc == ia);
            let lb = lives.iter().position(|l| l.alloc == ib);
            if let (Some(ka), Some(kb)) = (la, lb) {
                out.push_str(&planner_reason(f, &order, oa, ob, ka, kb));
            }
        }
    }
    // share-buffers and inplace, by their own traces.
    for info in [&crate::share_buffers::INFO, &crate::inplace::INFO] {
        match trace(f, info, f.value_name(oa), f.value_name(ob)) {
            Err(e) => line(&mut out, format!("{}: did not run: {e}", info.name)),
            Ok(lines) if lines.is_empty() => line(
                &mut out,
                format!("{}: did not consider the pair", info.name),
            ),
            Ok(lines) => {
                for l in lines {
                    line(&mut out, l);
                }
            }
        }
    }
    let pairs = inplace_pairs(f, oa, ob);
    if pairs.is_empty() {
        line(
            &mut out,
            "no instruction has them as an in-place pair of the opcode table, which is what \
             share-buffers and inplace merge"
                .into(),
        );
    } else {
        line(&mut out, format!("in-place pairs: {}", pairs.join("; ")));
    }
    let skipped: Vec<&str> = TRAIN_SKIPS.iter().map(|p| p.name).collect();
    line(
        &mut out,
        format!(
            "--mode=train leaves out {}: a training step keeps every buffer distinct, so only \
             the planner shares memory there",
            skipped.join(", ")
        ),
    );
    out
}

/// The planner's view of allocations `ka` and `kb` of `lifetimes(f)`.
fn planner_reason(
    f: &Function,
    order: &[glow_ir::InstId],
    oa: Value,
    ob: Value,
    ka: usize,
    kb: usize,
) -> String {
    let layout = arena_layout(f, ALIGN);
    let (la, lb) = (layout.lives[ka], layout.lives[kb]);
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str("  ");
        out.push_str(&s);
        out.push('\n');
    };
    line(format!(
        "planner: {} lives over instructions {}..{}, {} over {}..{}",
        pct(f, oa),
        la.first,
        la.last,
        pct(f, ob),
        lb.first,
        lb.last
    ));
    let from = la.first.max(lb.first);
    let to = la.last.min(lb.last);
    let (offa, offb) = (layout.offsets[ka], layout.offsets[kb]);
    let (sa, sb) = (layout.bufs[ka].size, layout.bufs[kb].size);
    let source = if layout.planned {
        "the function's plan (plan-memory ran)".to_string()
    } else {
        "the plan plan-memory would make".to_string()
    };
    if from <= to {
        line(format!(
            "planner: both are live at instructions {from}..{to} (first at {}), so their \
             bytes must not overlap",
            inst_at(f, order, from)
        ));
    } else if offa < offb + sb && offb < offa + sa && sa > 0 && sb > 0 {
        let (s, e) = (offa.max(offb), (offa + sa).min(offb + sb));
        line(format!(
            "planner: never live together; in {source} they share bytes {s}..{e}"
        ));
    } else {
        line(format!(
            "planner: never live together, so they may share bytes, but {source} puts them \
             at offsets {offa} and {offb}: the arena ({} bytes, lower bound {}) is no smaller \
             with them together",
            layout.arena, layout.lower_bound
        ));
    }
    line(format!(
        "planner: offsets {offa} and {offb} in an arena of {} bytes",
        layout.arena
    ));
    let align = layout.align.max(1);
    for (v, size) in [(oa, sa), (ob, sb)] {
        let rounded = size.div_ceil(align) * align;
        if rounded != size {
            line(format!(
                "alignment: {}'s {size} bytes take {rounded} in the arena (offsets are \
                 multiples of {align})",
                pct(f, v)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn func(src: &str) -> Function {
        glow_ir::parser::parse(src.as_bytes())
            .expect("parses")
            .functions
            .remove(0)
    }

    #[test]
    fn replacements_are_read_from_the_trace() {
        let l = "[share-buffers] copy %c: Dest %o [22, 32] / Src %b [14, 20]: replaced %b's interval [14, 20] by %o (copy propagation)";
        assert_eq!(replaced(l), Some(("b".into(), "o".into())));
        assert_eq!(replaced("relu %r: rejected"), None);
    }

    #[test]
    fn mentions_whole_names_only() {
        assert!(mentions("relu %r: Dest %a / Src %b", "a"));
        assert!(!mentions("relu %r: Dest %ab / Src %b", "a"));
        assert!(!mentions("x %a.b", "a") && mentions("x %a, y", "a"));
    }

    #[test]
    fn overlapping_lifetimes_name_the_first_common_instruction() {
        let f = func(
            "function f\ndeclare {\n  %o = WeightVar float<4> mutable\n}\n\ncode {\n  0 %a = allocactivation { Ty: float<4> }\n  1 %b = allocactivation { Ty: float<4> }\n  2 %s = splat @out %a { Value: 1.0 }\n  3 %t = elementadd @out %b, @in %a, @in %a\n  4 %c = copy @out %o, @in %b\n  5 %da = deallocactivation @out %a\n  6 %db = deallocactivation @out %b\n}\n",
        );
        let a = f.lookup("a").unwrap();
        let b = f.lookup("b").unwrap();
        let text = explain_sharing(&f, a, b);
        assert!(
            text.contains(
                "both are live at instructions 1..5 (first at 1 (`%b = allocactivation`))"
            ),
            "{text}"
        );
    }
}
