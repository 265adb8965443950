//! The verifier: checks a function against every rule of docs/gir.md
//! §7–§8 and reports *all* broken rules, in program order (within an
//! instruction: operands in order, then members, then shapes).
//!
//! Rules: operand count and kinds; every operand names a weight, an
//! `allocactivation` or a `tensorview` defined above its use; no write to a
//! const weight; the same value twice in one instruction only if both are
//! `@in` or the pair is in-place; members present, well-typed and sane;
//! liveness (a dealloc names a live alloc, no use outside alloc..dealloc,
//! every alloc is deallocated, no read before a write); unique names; and
//! the opcode's shape rule (`crate::shapes`, which also checks that a
//! tensorview's window lies inside its source).
//!
//! The verifier never panics, also on functions built with dangling ids.

mod arena;
mod error;
mod liveness;
mod members;

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_rules;

pub use error::{Loc, VerifyError};

use crate::diag::Diagnostic;
use crate::function::{Function, InstId, Module, Mutability, Value};
use crate::fxhash::FxHashMap as HashMap;
use crate::opcode::Opcode;
use crate::shapes::ShapeCtx;
use liveness::Liveness;

/// Verifies one function; an empty result means it is valid.
pub fn verify(f: &Function) -> Vec<Diagnostic> {
    verify_errors(f)
        .iter()
        .map(|e| e.to_diagnostic(f))
        .collect()
}

/// Whether the arena plan of `f` holds (true when it has none): every
/// allocation placed, aligned, inside the arena, and no two live ones
/// sharing a byte.
pub fn plan_holds(f: &Function) -> bool {
    let mut errors = Vec::new();
    arena::check(f, &mut errors);
    errors.is_empty()
}

/// Verifies every function of a module, in order.
pub fn verify_module(m: &Module) -> Vec<Diagnostic> {
    m.functions.iter().flat_map(verify).collect()
}

/// The typed errors of a function, in program order.
pub fn verify_errors(f: &Function) -> Vec<VerifyError> {
    let mut c = Checker::new(f);
    c.check_layout();
    c.check_names();
    for (p, i) in f.layout.iter().enumerate() {
        // Skips ids that do not exist and repeated entries (both reported).
        if c.pos.get(i.index()).copied().flatten() == Some(p) {
            c.check_inst(i, p);
        }
    }
    let mut errors = Vec::new();
    c.live.finish(&c, &mut errors);
    arena::check(f, &mut errors);
    errors.splice(0..0, std::mem::take(&mut c.errors));
    // A stable sort keeps each instruction's errors in the order found.
    let pos = c.pos;
    errors.sort_by_key(|e| sort_key(&pos, e.primary().0));
    errors
}

/// Program order of a location: function-level, then weights, then
/// instructions by position.
fn sort_key(pos: &[Option<usize>], loc: Loc) -> (u8, usize) {
    let inst = |i: InstId| {
        (
            2,
            pos.get(i.index()).copied().flatten().unwrap_or(usize::MAX),
        )
    };
    match loc {
        Loc::Function => (0, 0),
        Loc::Weight(w) | Loc::Name(Value::Weight(w)) => (1, w.index()),
        Loc::Name(Value::Inst(i))
        | Loc::Line(i)
        | Loc::Head(i)
        | Loc::Operand(i, _)
        | Loc::Member(i, _) => inst(i),
    }
}

/// A resolved buffer operand: the value and the buffer at the end of its
/// view chain (a weight or an alloc), when the chain is well formed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buf {
    value: Value,
    origin: Option<Value>,
}

pub(crate) struct Checker<'f> {
    f: &'f Function,
    /// Program position of each instruction, by table index.
    pos: Vec<Option<usize>>,
    errors: Vec<VerifyError>,
    live: Liveness,
}

impl<'f> Checker<'f> {
    fn new(f: &'f Function) -> Checker<'f> {
        Checker {
            f,
            pos: vec![None; f.insts.len()],
            errors: Vec::new(),
            live: Liveness::new(f.insts.len()),
        }
    }

    /// Every layout entry names an existing instruction (the layout holds
    /// each id at most once by construction).
    fn check_layout(&mut self) {
        for (p, i) in self.f.layout.iter().enumerate() {
            match self.pos.get_mut(i.index()) {
                None => self.errors.push(VerifyError::MissingInst { index: i.0 }),
                Some(slot) => *slot = Some(p),
            }
        }
    }

    /// Weights and instructions have distinct names.
    fn check_names(&mut self) {
        let mut seen: HashMap<&str, Value> = HashMap::default();
        seen.reserve(self.f.weights.len() + self.f.layout.len());
        let weights = self.f.weight_ids().map(Value::Weight);
        let insts = self.f.layout.iter().enumerate();
        let insts = insts
            .filter(|&(p, i)| self.pos.get(i.index()).copied().flatten() == Some(p))
            .map(|(_, i)| Value::Inst(i));
        for v in weights.chain(insts) {
            let name = self.f.value_name(v);
            match seen.entry(name) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    self.errors.push(VerifyError::DuplicateName {
                        name: name.to_string(),
                        first: *e.get(),
                        second: v,
                    })
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(v);
                }
            }
        }
    }

    /// Position of a value's definition; weights come before everything.
    fn def_pos(&self, v: Value) -> Option<Option<usize>> {
        match v {
            Value::Weight(w) => (w.index() < self.f.weights.len()).then_some(None),
            Value::Inst(i) => self.pos.get(i.index()).copied().flatten().map(Some),
        }
    }

    /// The weight or alloc at the end of `v`'s view chain, if well formed.
    fn origin(&self, mut v: Value) -> Option<Value> {
        for _ in 0..=self.f.insts.len() {
            match v {
                Value::Weight(w) => return (w.index() < self.f.weights.len()).then_some(v),
                Value::Inst(i) => {
                    let inst = self.f.insts.get(i.index())?;
                    match inst.opcode {
                        Opcode::AllocActivation => return Some(v),
                        Opcode::TensorView => v = inst.operands.first()?.value,
                        _ => return None,
                    }
                }
            }
        }
        None
    }

    fn name(&self, v: Value) -> String {
        self.f.value_name(v).to_string()
    }

    /// "`%v`" or "`%v` (a view of `%a`)".
    fn describe(&self, b: &Buf, origin: Value) -> String {
        if b.value == origin {
            format!("`%{}`", self.name(b.value))
        } else {
            format!(
                "`%{}` (a view of `%{}`)",
                self.name(b.value),
                self.name(origin)
            )
        }
    }

    fn check_inst(&mut self, i: InstId, p: usize) {
        let inst = self.f.inst(i);
        let info = inst.opcode.info();
        let mut count_ok = info.accepts_operand_count(inst.operands.len());
        if !count_ok {
            self.errors.push(VerifyError::OperandCount {
                inst: i,
                opcode: info.name,
                expected: info.required_operands(),
                max: info.max_operands().unwrap_or(usize::MAX),
                found: inst.operands.len(),
            });
        } else if info.is_variadic() {
            // The variadic lists take runs of their kinds; an operand that
            // joins none is reported at itself.
            if let Err((k, Some(d))) = info.operand_defs(inst.operands.iter().map(|o| o.kind)) {
                count_ok = false;
                self.errors.push(VerifyError::OperandKind {
                    inst: i,
                    k,
                    opcode: info.name,
                    operand: info.operands[d].name,
                    expected: info.operands[d].kind.as_str(),
                    found: inst.operands[k].kind.as_str(),
                });
            }
        }
        let mut bufs = Vec::with_capacity(inst.operands.len());
        for k in 0..inst.operands.len() {
            let b = self.check_operand(i, p, k);
            self.check_alias(i, k);
            if let Some(b) = &b {
                let mut live = std::mem::take(&mut self.live);
                live.check_use(self, i, k, b);
                self.live = live;
            }
            bufs.push(b);
        }
        let mut live = std::mem::take(&mut self.live);
        live.commit(self, i, &bufs);
        self.live = live;
        let members_ok = members::check(self.f, i, &mut self.errors);
        if members_ok && count_ok {
            self.check_shape(i, &bufs);
        }
    }

    /// Operand `k` of `i`: it exists, has the table's kind, names a buffer
    /// defined above, and does not write a const weight.
    fn check_operand(&mut self, i: InstId, p: usize, k: usize) -> Option<Buf> {
        let inst = self.f.inst(i);
        let op = inst.operands[k];
        let info = inst.opcode.info();
        // A variadic list's kinds are checked with the split (`check_inst`).
        if let Some(def) = info.operands.get(k).filter(|d| !d.variadic) {
            // `convolutiongrad`'s SrcGrad may be @inout: the sums are added
            // to it (docs/training.md).
            let accumulates = inst.opcode == crate::Opcode::ConvolutionGrad
                && k == 3
                && op.kind == crate::OperandKind::InOut;
            if def.kind != op.kind && !accumulates {
                self.errors.push(VerifyError::OperandKind {
                    inst: i,
                    k,
                    opcode: info.name,
                    operand: def.name,
                    expected: if inst.opcode == crate::Opcode::ConvolutionGrad && k == 3 {
                        "@out` or `@inout"
                    } else {
                        def.kind.as_str()
                    },
                    found: op.kind.as_str(),
                });
            }
        }
        let Some(def_pos) = self.def_pos(op.value) else {
            self.errors
                .push(VerifyError::DanglingOperand { inst: i, k });
            return None;
        };
        if let (Value::Inst(d), Some(dp)) = (op.value, def_pos) {
            if dp >= p {
                self.errors.push(VerifyError::UseBeforeDef {
                    inst: i,
                    k,
                    name: self.name(op.value),
                    def: d,
                });
                return None;
            }
        }
        let is_dealloc = inst.opcode == Opcode::DeallocActivation && k == 0;
        let def_opcode = match op.value {
            Value::Weight(_) => None,
            Value::Inst(d) => Some((d, self.f.inst(d).opcode)),
        };
        if is_dealloc {
            let what = match def_opcode {
                Some((_, Opcode::AllocActivation)) => None,
                None => Some("a weight".to_string()),
                Some((_, Opcode::TensorView)) => Some("a tensorview".to_string()),
                Some((_, o)) => Some(format!("the result of `{}`", o.name())),
            };
            if let Some(what) = what {
                self.errors.push(VerifyError::DeallocNotAlloc {
                    inst: i,
                    name: self.name(op.value),
                    what,
                });
                return None;
            }
        } else if let Some((d, o)) = def_opcode {
            if !matches!(o, Opcode::AllocActivation | Opcode::TensorView) {
                self.errors.push(VerifyError::NotABuffer {
                    inst: i,
                    k,
                    name: self.name(op.value),
                    def: d,
                    def_opcode: o.name(),
                });
                return None;
            }
        }
        let b = Buf {
            value: op.value,
            origin: self.origin(op.value),
        };
        if let Some(Value::Weight(w)) = b.origin {
            let weight = self.f.weight(w);
            if op.kind.writes() && !is_dealloc && weight.mutability == Mutability::Const {
                self.errors.push(VerifyError::WriteToConst {
                    inst: i,
                    k,
                    what: if b.value == Value::Weight(w) {
                        format!("the const weight `%{}`", weight.name)
                    } else {
                        format!(
                            "`%{}`, a view of the const weight `%{}`",
                            self.name(b.value),
                            weight.name
                        )
                    },
                    kind: op.kind.as_str(),
                    weight: w,
                });
            }
        }
        Some(b)
    }

    /// The value of operand `k` appears in an earlier slot only if both are
    /// `@in` or the pair is in-place (`copy` is exempt).
    fn check_alias(&mut self, i: InstId, k: usize) {
        let inst = self.f.inst(i);
        let info = inst.opcode.info();
        let op = inst.operands[k];
        let Some(j) = (0..k).find(|&j| inst.operands[j].value == op.value) else {
            return;
        };
        let both_in = inst.operands[j].kind == crate::opcode::OperandKind::In
            && op.kind == crate::opcode::OperandKind::In;
        if both_in || info.is_inplace_pair(j, k) || inst.opcode == Opcode::Copy {
            return;
        }
        let slot = |k: usize| inst.operand_name(k).unwrap_or("operand");
        self.errors.push(VerifyError::Alias {
            inst: i,
            first: j,
            second: k,
            name: self.name(op.value),
            first_name: slot(j),
            second_name: slot(k),
            opcode: info.name,
        });
    }

    /// Runs the opcode's shape rule when every operand is a typed buffer.
    fn check_shape(&mut self, i: InstId, bufs: &[Option<Buf>]) {
        let inst = self.f.inst(i);
        let mut types = Vec::with_capacity(bufs.len());
        for b in bufs {
            match b.and_then(|b| self.f.value_type(b.value)) {
                Some(t) => types.push(t),
                None => return,
            }
        }
        let info = inst.opcode.info();
        let ctx = ShapeCtx { inst, types };
        for e in (info.shape)(&ctx) {
            self.errors.push(VerifyError::Shape {
                inst: i,
                operand: e.operand,
                member: e.member.and_then(|m| info.member_index(m)),
                message: e.message,
            });
        }
    }
}
