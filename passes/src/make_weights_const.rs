//! `make-weights-const`: a check, as in Glow today: no `const` weight is ever
//! written. Read-only `mutable` weights stay mutable, because they are inputs
//! that the caller fills.

use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::{Diagnostic, Function, Mutability, Value};

pub static INFO: PassInfo = PassInfo {
    name: "make-weights-const",
    summary: "Check that no const weight is written (read-only mutable weights stay mutable)",
    options: &[],
    stats: &[("const-weights-checked", "Number of const weights checked")],
    counters: &[],
    create: |_: &PassOptions| Ok(Box::new(MakeWeightsConst)),
};

struct MakeWeightsConst;

impl Pass for MakeWeightsConst {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let mut errors = Vec::new();
        for id in &f.layout {
            let inst = f.inst(id);
            for (k, op) in inst.operands.iter().enumerate() {
                let (Value::Weight(w), _) = f.origin(op.value) else {
                    continue;
                };
                let weight = f.weight(w);
                if weight.mutability == Mutability::Const && op.kind.writes() {
                    let mut d = Diagnostic::error(format!(
                        "const weight `%{}` is written by `%{}`",
                        weight.name, inst.name
                    ));
                    if let Some(s) = f.spans.inst(id.index()).and_then(|s| s.operands.get(k)) {
                        d = d.at_labelled(*s, "written here");
                    }
                    errors.push(d.with_note(
                        "const weights are read-only; declare it `mutable` to write it",
                    ));
                }
            }
        }
        let consts = f
            .weights
            .iter()
            .filter(|w| w.mutability == Mutability::Const)
            .count();
        cx.bump("const-weights-checked", consts as u64);
        if errors.is_empty() {
            Ok(false)
        } else {
            Err(errors)
        }
    }
}
