//! Hover texts: a value (type, bytes, definition, live range, arena offset
//! and the buffers sharing its memory), an opcode or a member (the
//! instruction table's entry and the row of docs/gir.md that documents it).

use glow_ir::function::Use;
use glow_ir::opcode::{Default as MemberDefault, MemberDef, MemberRule, OpcodeInfo};
use glow_ir::printer::write_member_value;
use glow_ir::{Function, MemberValue, Opcode, Value};
use glow_planner::arena::{arena_layout, ArenaLayout};

const GIR_DOC: &str = include_str!("../../../docs/gir.md");

/// `%name` as the printer spells it.
pub fn spelled(name: &str) -> String {
    let mut s = String::new();
    glow_ir::printer::write_name(name, &mut s);
    s
}

/// "instruction 3 (`%conv = convolution`)".
fn at(f: &Function, positions: &[glow_ir::InstId], p: usize) -> String {
    match positions.get(p) {
        Some(&i) => format!(
            "{p} (`{} = {}`)",
            spelled(&f.inst(i).name),
            f.inst(i).opcode.name()
        ),
        None => p.to_string(),
    }
}

/// The hover text of value `v` of a parsed function; `verified` says
/// whether the arena may be planned (the planner needs a valid function).
pub fn value_hover(f: &Function, v: Value, verified: bool) -> String {
    let order = f.layout.to_vec();
    let pos_of = |i: glow_ir::InstId| order.iter().position(|&x| x == i);
    let uses = f.uses();
    let name = spelled(f.value_name(v));
    let mut out = String::new();
    match v {
        Value::Weight(w) => {
            let wd = f.weight(w);
            out.push_str(&format!(
                "**{name}**: `WeightVar {} {}`, {} bytes\n\n",
                wd.ty,
                wd.mutability.as_str(),
                wd.ty.bytes()
            ));
            out.push_str("declared in `declare` (a weight: outside the activation arena, live for the whole function)\n");
        }
        Value::Inst(i) => {
            let inst = f.inst(i);
            let p = pos_of(i);
            match f.value_type(v) {
                Some(ty) => out.push_str(&format!("**{name}**: `{ty}`, {} bytes\n\n", ty.bytes())),
                None => out.push_str(&format!(
                    "**{name}**: the result of `{}` (not a buffer)\n\n",
                    inst.opcode.name()
                )),
            }
            if let Some(p) = p {
                out.push_str(&format!("defined by instruction {}\n", at(f, &order, p)));
            }
            if inst.opcode == Opcode::TensorView {
                let (origin, offset) = f.origin(v);
                out.push_str(&format!(
                    "\na view of {} at element offset {offset}\n",
                    spelled(f.value_name(origin))
                ));
            }
        }
    }
    let users: &[Use] = uses.users(v);
    let positions: Vec<usize> = users.iter().filter_map(|u| pos_of(u.inst)).collect();
    match (positions.iter().min(), positions.iter().max()) {
        (Some(&a), Some(&b)) => out.push_str(&format!(
            "\nlive range: first use {}, last use {} ({} use{})\n",
            at(f, &order, a),
            at(f, &order, b),
            users.len(),
            if users.len() == 1 { "" } else { "s" }
        )),
        _ => out.push_str("\nno uses\n"),
    }
    let (origin, _) = f.origin(v);
    if let (Value::Inst(a), true) = (origin, verified) {
        if f.inst(a).opcode == Opcode::AllocActivation {
            out.push_str(&arena_text(f, a, &order));
        }
    }
    out
}

/// Where the arena puts alloc `a` and which buffers share its bytes.
fn arena_text(f: &Function, a: glow_ir::InstId, order: &[glow_ir::InstId]) -> String {
    let layout: ArenaLayout = arena_layout(f, glow_ir::ALIGN);
    let Some(k) = layout.lives.iter().position(|l| l.alloc == a) else {
        return String::new();
    };
    let life = layout.lives[k];
    let (off, size) = (layout.offsets[k], layout.bufs[k].size);
    let end = off + size;
    let mut out = format!(
        "\nlifetime in the arena: allocated at {}, freed at {}\n",
        at(f, order, life.first),
        at(f, order, life.last)
    );
    out.push_str(&format!(
        "\narena offset {off} (bytes {off}..{end} of {}, {})\n",
        layout.arena,
        if layout.planned {
            "planned by `plan-memory`"
        } else {
            "as `plan-memory` would plan it"
        }
    ));
    let sharing: Vec<String> = (0..layout.lives.len())
        .filter(|&j| j != k)
        .filter(|&j| {
            let (o, s) = (layout.offsets[j], layout.bufs[j].size);
            s > 0 && size > 0 && o < end && off < o + s
        })
        .map(|j| format!("`{}`", spelled(&f.inst(layout.lives[j].alloc).name)))
        .collect();
    if sharing.is_empty() {
        out.push_str("\nshares its memory with no other buffer\n");
    } else {
        out.push_str(&format!(
            "\nshares its memory with {}\n",
            sharing.join(", ")
        ));
    }
    out
}

/// The table's signature of an opcode: `name @out Dest, @in Src { M: ty }`.
fn signature(info: &OpcodeInfo) -> String {
    let mut s = info.name.to_string();
    for (k, o) in info.operands.iter().enumerate() {
        s.push_str(if k == 0 { " " } else { ", " });
        if o.optional {
            s.push('[');
        }
        s.push_str(&format!("{} {}", o.kind.as_str(), o.name));
        if o.variadic {
            s.push_str("...");
        }
        if o.optional {
            s.push(']');
        }
    }
    s
}

/// A member's default as `.gir` text, `None` when it is required.
pub fn default_text(d: &MemberDef) -> Option<String> {
    if d.default == MemberDefault::Required {
        return None;
    }
    let v: MemberValue = MemberValue::from_default(d.default)?;
    let mut s = String::new();
    write_member_value(&v, &mut s);
    Some(s)
}

fn member_line(d: &MemberDef) -> String {
    let mut s = format!("- `{}`: {}", d.name, d.ty.describe());
    match default_text(d) {
        Some(t) => s.push_str(&format!(", default `{t}`")),
        None => s.push_str(", required"),
    }
    if d.elide_default {
        s.push_str(" (printed only when set)");
    }
    let rule = match d.rule {
        MemberRule::Any => None,
        MemberRule::TwoPositive => Some("two positive integers"),
        MemberRule::Pads => Some("four non-negative integers (top, left, bottom, right)"),
        MemberRule::ThreePositive => Some("three positive integers"),
        MemberRule::Pads3D => {
            Some("six non-negative integers (near, far, top, bottom, left, right)")
        }
        MemberRule::TwoNonNegative => Some("two non-negative integers"),
        MemberRule::AtLeastOne => Some("at least 1"),
        MemberRule::NonNegative => Some("non-negative"),
        MemberRule::NonZero => Some("not 0"),
        MemberRule::LossReduction => Some("0 (none), 1 (mean) or 2 (sum)"),
    };
    if let Some(r) = rule {
        s.push_str(&format!("; {r}"));
    }
    s
}

/// The rows of docs/gir.md's opcode tables that name `opcode`.
fn doc_rows(opcode: &str) -> Vec<&'static str> {
    let word = format!("`{opcode}`");
    GIR_DOC
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter(|l| l.split('|').nth(1).is_some_and(|c| c.contains(&word)))
        .collect()
}

pub fn opcode_hover(o: Opcode) -> String {
    let info = o.info();
    let mut out = format!(
        "```\n{}\n```\n\nfamily `{:?}`\n",
        signature(info),
        info.family
    );
    if !info.members.is_empty() {
        out.push_str("\nmembers:\n");
        for d in info.members {
            out.push_str(&member_line(d));
            out.push('\n');
        }
    }
    if !info.inplace.is_empty() {
        let pairs: Vec<String> = info
            .inplace
            .iter()
            .map(|&(d, s)| format!("{},{}", info.operands[d].name, info.operands[s].name))
            .collect();
        out.push_str(&format!(
            "\nin-place pairs (may share memory): {}\n",
            pairs.join("; ")
        ));
    }
    let rows = doc_rows(info.name);
    if !rows.is_empty() {
        out.push_str(
            "\nits row in docs/gir.md:\n\n| opcode | operands | members | P |\n|---|---|---|---|\n",
        );
        for r in rows {
            out.push_str(r);
            out.push('\n');
        }
    }
    out
}

pub fn member_hover(o: Opcode, member: &str) -> Option<String> {
    let info = o.info();
    let d = info.members.iter().find(|d| d.name == member)?;
    Some(format!("member of `{}`\n\n{}\n", info.name, member_line(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opcode_hover_has_table_and_doc_row() {
        let h = opcode_hover(Opcode::LeakyRelu);
        assert!(h.contains("leakyrelu @out Dest, @in Src"), "{h}");
        assert!(h.contains("- `Alpha`: a float, default `0.01`"), "{h}");
        assert!(h.contains("Glow's `LeakyRelu`"), "{h}");
        let c = opcode_hover(Opcode::Convolution);
        assert!(c.contains("[@in Residual]"), "{c}");
    }
}
