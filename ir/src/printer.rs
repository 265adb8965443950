//! The canonical `.gir` printer. Output is deterministic, contains every
//! value in full, and reads back to the same function (`print ∘ parse` is a
//! fixed point). `annotate` adds Glow-style `// size:` and `// Users:` comments.

use crate::function::*;
use crate::opcode::Opcode;
use crate::types::{format_f32, format_float, ElemKind};
use std::fmt::Write;

#[derive(Clone, Copy, Debug, Default)]
pub struct PrintOptions {
    /// Add `// size: N // Users: ...` comments (off by default so that output
    /// never contains comments).
    pub annotate: bool,
}

/// Prints every function, separated by blank lines.
pub fn print_module(m: &Module, opts: PrintOptions) -> String {
    let mut out = String::new();
    for (i, f) in m.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        print_function_into(f, opts, &mut out);
    }
    out
}

pub fn print_function(f: &Function, opts: PrintOptions) -> String {
    let mut out = String::new();
    print_function_into(f, opts, &mut out);
    out
}

fn print_function_into(f: &Function, opts: PrintOptions, out: &mut String) {
    let uses = if opts.annotate { Some(f.uses()) } else { None };
    let positions = f.positions();
    out.push_str("function ");
    if is_plain_ident(&f.name) && !is_keyword(&f.name) {
        out.push_str(&f.name);
    } else {
        write_quoted(&f.name, out);
    }
    if let Some(m) = f.memory {
        let _ = write!(out, " {{ Arena: {}", m.size);
        if m.align != crate::function::ALIGN {
            let _ = write!(out, ", Align: {}", m.align);
        }
        out.push_str(" }");
    }
    out.push_str("\ndeclare {\n");
    for (i, w) in f.weights.iter().enumerate() {
        out.push_str("  ");
        write_name(&w.name, out);
        let _ = write!(out, " = WeightVar {} {}", w.ty, w.mutability.as_str());
        if let Some(init) = &w.init {
            out.push_str(" { Data: ");
            write_init(init, w.ty.elem, out);
            out.push_str(" }");
        }
        if let Some(uses) = &uses {
            annotate(
                f,
                uses,
                &positions,
                Value::Weight(WeightId(i as u32)),
                w.ty.bytes(),
                out,
            );
        }
        out.push('\n');
    }
    out.push_str("}\n\ncode {\n");
    for (pos, id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        let _ = write!(out, "  {} ", pos);
        write_name(&inst.name, out);
        let _ = write!(out, " = {}", inst.opcode.name());
        for (k, op) in inst.operands.iter().enumerate() {
            out.push_str(if k == 0 { " " } else { ", " });
            out.push_str(op.kind.as_str());
            out.push(' ');
            write_name(f.value_name(op.value), out);
        }
        write_members(inst, out);
        if let Some(uses) = &uses {
            if matches!(inst.opcode, Opcode::AllocActivation | Opcode::TensorView) {
                let bytes = f.value_type(Value::Inst(id)).map_or(0, |t| t.bytes());
                annotate(f, uses, &positions, Value::Inst(id), bytes, out);
            }
        }
        out.push('\n');
    }
    out.push_str("}\n");
}

fn write_members(inst: &InstData, out: &mut String) {
    let info = inst.opcode.info();
    let mut first = true;
    for (def, value) in info.members.iter().zip(&inst.members) {
        let Some(value) = value else { continue };
        if def.elide_default && MemberValue::from_default(def.default).as_ref() == Some(value) {
            continue;
        }
        out.push_str(if first { " { " } else { ", " });
        first = false;
        out.push_str(def.name);
        out.push_str(": ");
        write_member_value(value, out);
    }
    if !first {
        out.push_str(" }");
    }
}

/// Writes a member value as `.gir` text.
pub fn write_member_value(v: &MemberValue, out: &mut String) {
    match v {
        MemberValue::Int(i) => {
            let _ = write!(out, "{}", i);
        }
        MemberValue::Float(x) => format_float(*x, out),
        MemberValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        MemberValue::IntArray(v) => write_list(v.iter(), out, |x, o| {
            let _ = write!(o, "{}", x);
        }),
        MemberValue::FloatArray(v) => write_list(v.iter(), out, |x, o| format_float(*x, o)),
        MemberValue::Type(t) => {
            let _ = write!(out, "{}", t);
        }
        MemberValue::Enum(s) => out.push_str(s),
        MemberValue::Str(s) => write_quoted(s, out),
    }
}

fn write_list<T>(
    items: impl Iterator<Item = T>,
    out: &mut String,
    mut f: impl FnMut(T, &mut String),
) {
    out.push('[');
    for (i, x) in items.enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        f(x, out);
    }
    out.push(']');
}

fn write_elem_float(x: f64, elem: ElemKind, out: &mut String) {
    if elem == ElemKind::Float64 {
        format_float(x, out)
    } else {
        format_f32(x as f32, out)
    }
}

fn write_init(init: &WeightInit, elem: ElemKind, out: &mut String) {
    match init {
        WeightInit::Splat(x) => {
            out.push_str("splat(");
            if elem.is_float() {
                write_elem_float(*x, elem, out);
            } else if x.fract() == 0.0 && x.abs() <= (1u64 << 53) as f64 {
                // An integer kind's splat reads back only as an integer.
                let _ = write!(out, "{}", *x as i64);
            } else {
                format_float(*x, out);
            }
            out.push(')');
        }
        WeightInit::Floats(v) => write_list(v.iter(), out, |x, o| write_elem_float(*x, elem, o)),
        WeightInit::Ints(v) => write_list(v.iter(), out, |x, o| {
            if elem == ElemKind::Bool {
                o.push_str(if *x != 0 { "true" } else { "false" });
            } else {
                let _ = write!(o, "{}", x);
            }
        }),
    }
}

fn annotate(
    f: &Function,
    uses: &UseLists,
    positions: &crate::fxhash::FxHashMap<InstId, usize>,
    v: Value,
    bytes: u64,
    out: &mut String,
) {
    let _ = write!(out, " // size: {} // Users: ", bytes);
    for (k, u) in uses.users(v).iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        let kind = f.inst(u.inst).operands[u.operand].kind;
        let _ = write!(
            out,
            "{} {}",
            kind.as_str(),
            positions.get(&u.inst).copied().unwrap_or(0)
        );
    }
}

fn is_plain_ident(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !s.as_bytes()[0].is_ascii_digit()
}

fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "function" | "declare" | "code" | "WeightVar" | "const" | "mutable" | "x"
    )
}

/// Writes `%name`, quoting when the name has characters outside `[A-Za-z0-9_.$-]`.
pub fn write_name(name: &str, out: &mut String) {
    out.push('%');
    let plain = !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.$-".contains(&b));
    if plain {
        out.push_str(name);
    } else {
        write_quoted(name, out);
    }
}

fn write_quoted(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
}
