//! The verifier's typed errors, each naming the entity it concerns, and the
//! one place that turns them into `Diagnostic`s with spans.

use crate::diag::Diagnostic;
use crate::function::{Function, InstId, Value, WeightId};
use crate::span::Span;
use thiserror::Error;

/// Where an error points: an entity and the part of its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loc {
    /// A weight's whole line.
    Weight(WeightId),
    /// The `%name` of a weight or instruction.
    Name(Value),
    /// An instruction's whole line.
    Line(InstId),
    /// An instruction's opcode word.
    Head(InstId),
    /// Operand `k` of an instruction.
    Operand(InstId, usize),
    /// Member `m` (table index) of an instruction.
    Member(InstId, usize),
    /// The function as a whole.
    Function,
}

/// One broken rule. Names are stored without `%`; messages add it.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum VerifyError {
    #[error("`%{name}` is defined twice")]
    DuplicateName {
        name: String,
        first: Value,
        second: Value,
    },
    #[error("the program order names instruction #{index}, which does not exist")]
    MissingInst { index: u32 },
    #[error("`{opcode}` takes {} operand(s), found {found}", count_range(*expected, *max))]
    OperandCount {
        inst: InstId,
        opcode: &'static str,
        expected: usize,
        /// More than `expected` when trailing operands are optional;
        /// `usize::MAX` for variadic operand lists.
        max: usize,
        found: usize,
    },
    #[error("operand `{operand}` of `{opcode}` must be `{expected}`, found `{found}`")]
    OperandKind {
        inst: InstId,
        k: usize,
        opcode: &'static str,
        operand: &'static str,
        expected: &'static str,
        found: &'static str,
    },
    #[error("operand {k} refers to a value that does not exist")]
    DanglingOperand { inst: InstId, k: usize },
    #[error(
        "`%{name}` is not a buffer: it is the result of `{def_opcode}`; operands must name \
         a weight, an `allocactivation` or a `tensorview`"
    )]
    NotABuffer {
        inst: InstId,
        k: usize,
        name: String,
        def: InstId,
        def_opcode: &'static str,
    },
    #[error("`%{name}` is used before its definition")]
    UseBeforeDef {
        inst: InstId,
        k: usize,
        name: String,
        def: InstId,
    },
    #[error("`{kind}` writes {what}")]
    WriteToConst {
        inst: InstId,
        k: usize,
        what: String,
        kind: &'static str,
        weight: WeightId,
    },
    #[error(
        "the same buffer `%{name}` is passed as `{first_name}` and `{second_name}`, \
         which `{opcode}` does not allow to share memory"
    )]
    Alias {
        inst: InstId,
        first: usize,
        second: usize,
        name: String,
        first_name: &'static str,
        second_name: &'static str,
        opcode: &'static str,
    },
    #[error("`deallocactivation` must name an `allocactivation`, but `%{name}` is {what}")]
    DeallocNotAlloc {
        inst: InstId,
        name: String,
        what: String,
    },
    #[error("`%{name}` is deallocated twice")]
    DoubleDealloc {
        inst: InstId,
        name: String,
        first: InstId,
    },
    #[error("{what} is used after its deallocation")]
    UseAfterDealloc {
        inst: InstId,
        k: usize,
        what: String,
        dealloc: InstId,
    },
    #[error("`%{name}` is never deallocated")]
    NeverDeallocated { alloc: InstId, name: String },
    #[error("{what} is read before anything writes it")]
    UseBeforeWrite {
        inst: InstId,
        k: usize,
        what: String,
    },
    #[error("`{opcode}` is missing the required member `{member_name}`")]
    MissingMember {
        inst: InstId,
        member: usize,
        opcode: &'static str,
        member_name: &'static str,
    },
    #[error("expected {expected} for `{member_name}`, found `{found}`")]
    MemberType {
        inst: InstId,
        member: usize,
        member_name: &'static str,
        expected: String,
        found: String,
    },
    #[error("`{opcode}` has {found} members but its table defines {expected}")]
    ExtraMembers {
        inst: InstId,
        opcode: &'static str,
        expected: usize,
        found: usize,
    },
    #[error("{message}")]
    MemberValue {
        inst: InstId,
        member: usize,
        message: String,
    },
    #[error("{message}")]
    ArenaOverlap {
        inst: InstId,
        other: InstId,
        message: String,
    },
    #[error("{message}")]
    Shape {
        inst: InstId,
        operand: Option<usize>,
        member: Option<usize>,
        message: String,
    },
}

impl VerifyError {
    /// The primary location and its label.
    pub fn primary(&self) -> (Loc, &'static str) {
        use VerifyError::*;
        match *self {
            DuplicateName { second, .. } => (Loc::Name(second), "redefined here"),
            MissingInst { .. } => (Loc::Function, ""),
            OperandCount { inst, .. } => (Loc::Head(inst), "wrong number of operands"),
            OperandKind { inst, k, .. } => (Loc::Operand(inst, k), "wrong operand kind"),
            DanglingOperand { inst, k } => (Loc::Operand(inst, k), ""),
            NotABuffer { inst, k, .. } => (Loc::Operand(inst, k), "not a buffer"),
            UseBeforeDef { inst, k, .. } => (Loc::Operand(inst, k), "used here"),
            WriteToConst { inst, k, .. } => (Loc::Operand(inst, k), "written here"),
            Alias { inst, second, .. } => (Loc::Operand(inst, second), "second use"),
            DeallocNotAlloc { inst, .. } => (Loc::Operand(inst, 0), "not an allocation"),
            DoubleDealloc { inst, .. } => (Loc::Operand(inst, 0), "deallocated again"),
            UseAfterDealloc { inst, k, .. } => (Loc::Operand(inst, k), "used here"),
            NeverDeallocated { alloc, .. } => (Loc::Line(alloc), "allocated here"),
            UseBeforeWrite { inst, k, .. } => (Loc::Operand(inst, k), "read here"),
            MissingMember { inst, .. } => (Loc::Head(inst), "member missing"),
            MemberType { inst, member, .. } | MemberValue { inst, member, .. } => {
                (Loc::Member(inst, member), "")
            }
            ExtraMembers { inst, .. } => (Loc::Head(inst), ""),
            ArenaOverlap { inst, .. } => (Loc::Line(inst), "overlapping buffer"),
            Shape {
                inst,
                operand,
                member,
                ..
            } => match (operand, member) {
                (Some(k), _) => (Loc::Operand(inst, k), ""),
                (None, Some(m)) => (Loc::Member(inst, m), ""),
                (None, None) => (Loc::Line(inst), ""),
            },
        }
    }

    /// A secondary location (a definition, an earlier use), if any.
    pub fn secondary(&self) -> Option<(Loc, &'static str)> {
        use VerifyError::*;
        match *self {
            DuplicateName { first, .. } => Some((Loc::Name(first), "first defined here")),
            NotABuffer { def, .. } => Some((Loc::Line(def), "defined here")),
            UseBeforeDef { def, .. } => Some((Loc::Line(def), "defined here")),
            WriteToConst { weight, .. } => Some((Loc::Weight(weight), "declared const here")),
            Alias { inst, first, .. } => Some((Loc::Operand(inst, first), "first use")),
            DoubleDealloc { first, .. } => Some((Loc::Line(first), "first deallocated here")),
            UseAfterDealloc { dealloc, .. } => Some((Loc::Line(dealloc), "deallocated here")),
            ArenaOverlap { other, .. } => Some((Loc::Line(other), "live at the same time")),
            _ => None,
        }
    }

    /// A note to add, if any.
    fn note(&self) -> Option<String> {
        match self {
            VerifyError::NeverDeallocated { name, .. } => Some(format!(
                "add `deallocactivation @out %{name}` after its last use"
            )),
            _ => None,
        }
    }

    /// The diagnostic for this error, with spans from `f.spans`; without
    /// spans, the message names the entity instead (`in `%conv`: ...`).
    pub fn to_diagnostic(&self, f: &Function) -> Diagnostic {
        let (loc, label) = self.primary();
        let mut d = match resolve(f, loc) {
            Some(span) => Diagnostic::error(self.to_string()).at_labelled(span, label),
            None => Diagnostic::error(format!("in {}: {}", subject(f, loc), self)),
        };
        if let Some((loc, label)) = self.secondary() {
            if let Some(span) = resolve(f, loc) {
                d = d.with_secondary(span, label);
            }
        }
        if let Some(n) = self.note() {
            d = d.with_note(n);
        }
        d
    }
}

/// The span a location stands for, falling back to the opcode word and the
/// line when the precise part was not written.
fn resolve(f: &Function, loc: Loc) -> Option<Span> {
    let inst = |i: InstId| f.spans.inst(i.index());
    match loc {
        Loc::Weight(w) => f.spans.weight(w.index()).map(|s| s.line),
        Loc::Name(Value::Weight(w)) => f.spans.weight(w.index()).map(|s| s.name),
        Loc::Name(Value::Inst(i)) => inst(i).map(|s| s.name),
        Loc::Line(i) => inst(i).map(|s| s.line),
        Loc::Head(i) => inst(i).map(|s| s.head),
        Loc::Operand(i, k) => inst(i).map(|s| s.operands.get(k).copied().unwrap_or(s.head)),
        Loc::Member(i, m) => inst(i).map(|s| s.members.get(m).copied().flatten().unwrap_or(s.head)),
        Loc::Function => f.spans.function,
    }
}

/// How a message names the entity of a location that has no span.
fn subject(f: &Function, loc: Loc) -> String {
    let name = |v: Value| match v {
        Value::Weight(w) => f.weights.get(w.index()).map(|w| w.name.as_str()),
        Value::Inst(i) => f.insts.get(i.index()).map(|i| i.name.as_str()),
    };
    let v = match loc {
        Loc::Weight(w) | Loc::Name(Value::Weight(w)) => Value::Weight(w),
        Loc::Name(Value::Inst(i))
        | Loc::Line(i)
        | Loc::Head(i)
        | Loc::Operand(i, _)
        | Loc::Member(i, _) => Value::Inst(i),
        Loc::Function => return format!("function `{}`", f.name),
    };
    match name(v) {
        Some(n) => format!("`%{n}`"),
        None => format!("function `{}`", f.name),
    }
}

/// `4`, or `4 or 5` when operands are optional.
fn count_range(min: usize, max: usize) -> String {
    if max == usize::MAX {
        // An opcode with variadic operand lists.
        return format!("at least {min}");
    }
    match max - min.min(max) {
        0 => min.to_string(),
        1 => format!("{min} or {max}"),
        _ => format!("{min} to {max}"),
    }
}
