//! A builder for passes and tests: adds weights and instructions with the
//! operand kinds and member defaults taken from the opcode table.

use crate::function::*;
use crate::opcode::Opcode;
use crate::span::ItemSpans;
use crate::types::Type;

/// Inserts instructions into a function at a cursor position.
pub struct Builder<'f> {
    func: &'f mut Function,
    /// Position in the program order where the next instruction goes.
    pos: usize,
}

impl<'f> Builder<'f> {
    /// A builder that appends at the end of the function.
    pub fn new(func: &'f mut Function) -> Builder<'f> {
        let pos = func.layout.len();
        Builder { func, pos }
    }

    /// A builder that inserts before program position `pos`.
    pub fn at(func: &'f mut Function, pos: usize) -> Builder<'f> {
        let pos = pos.min(func.layout.len());
        Builder { func, pos }
    }

    pub fn func(&mut self) -> &mut Function {
        self.func
    }

    /// Adds a weight.
    pub fn weight(&mut self, name: &str, ty: Type, mutability: Mutability) -> Value {
        let id = WeightId(self.func.weights.len() as u32);
        self.func.weights.push(WeightData {
            name: name.to_string(),
            ty,
            mutability,
            init: None,
        });
        if !self.func.spans.weights.is_empty() {
            self.func.spans.weights.push(ItemSpans::default());
        }
        Value::Weight(id)
    }

    /// A name not used yet in the function, derived from `base`.
    pub fn unique_name(&self, base: &str) -> String {
        let taken = |n: &str| {
            self.func.weights.iter().any(|w| w.name == n)
                || self.func.insts.iter().any(|i| i.name == n)
        };
        if !taken(base) {
            return base.to_string();
        }
        (1..)
            .map(|k| format!("{base}{k}"))
            .find(|n| !taken(n))
            .expect("some suffix is free")
    }

    /// Adds an instruction; operand kinds come from the table, members not
    /// given take their defaults.
    pub fn inst(
        &mut self,
        name: &str,
        opcode: Opcode,
        operands: &[Value],
        members: &[(&str, MemberValue)],
    ) -> InstId {
        let info = opcode.info();
        let operands = operands
            .iter()
            .enumerate()
            .map(|(k, &value)| Operand {
                kind: info
                    .operands
                    .get(k)
                    .map_or(crate::opcode::OperandKind::In, |d| d.kind),
                value,
            })
            .collect();
        let mut data = InstData {
            name: self.unique_name(name),
            opcode,
            operands,
            members: info
                .members
                .iter()
                .map(|m| MemberValue::from_default(m.default))
                .collect(),
        };
        for (n, v) in members {
            data.set_member(n, v.clone());
        }
        let id = InstId(self.func.insts.len() as u32);
        self.func.insts.push(data);
        if !self.func.spans.insts.is_empty() {
            self.func.spans.insts.push(ItemSpans::default());
        }
        self.func.layout.insert(self.pos, id);
        self.pos += 1;
        id
    }

    pub fn alloc(&mut self, name: &str, ty: Type) -> Value {
        Value::Inst(self.inst(
            name,
            Opcode::AllocActivation,
            &[],
            &[("Ty", MemberValue::Type(ty))],
        ))
    }

    pub fn dealloc(&mut self, name: &str, buffer: Value) -> InstId {
        self.inst(name, Opcode::DeallocActivation, &[buffer], &[])
    }

    pub fn tensorview(&mut self, name: &str, src: Value, ty: Type, offsets: Vec<i64>) -> Value {
        let members = [
            ("Ty", MemberValue::Type(ty)),
            ("Offsets", MemberValue::IntArray(offsets)),
        ];
        Value::Inst(self.inst(name, Opcode::TensorView, &[src], &members))
    }

    pub fn copy(&mut self, name: &str, dest: Value, src: Value) -> InstId {
        self.inst(name, Opcode::Copy, &[dest, src], &[])
    }

    pub fn splat(&mut self, name: &str, dest: Value, value: f64) -> InstId {
        self.inst(
            name,
            Opcode::Splat,
            &[dest],
            &[("Value", MemberValue::Float(value))],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::printer::{print_function, PrintOptions};

    #[test]
    fn builds_a_function_that_prints() {
        let mut f = Function::new("f");
        let mut b = Builder::new(&mut f);
        let x = b.weight("x", Type::float(&[4]), Mutability::Mutable);
        let y = b.weight("y", Type::float(&[4]), Mutability::Mutable);
        let t = b.alloc("t", Type::float(&[4]));
        b.inst("add", Opcode::ElementAdd, &[t, x, x], &[]);
        b.copy("cp", y, t);
        b.dealloc("d", t);
        let text = print_function(&f, PrintOptions::default());
        assert!(
            text.contains("  1 %add = elementadd @out %t, @in %x, @in %x\n"),
            "{text}"
        );
        assert_eq!(f.uses().num_users(t), 3);
        assert_eq!(Builder::new(&mut f).unique_name("t"), "t1");
    }

    #[test]
    fn inserts_at_a_position() {
        let mut f = Function::new("f");
        let mut b = Builder::new(&mut f);
        let x = b.weight("x", Type::float(&[2]), Mutability::Mutable);
        b.splat("s2", x, 2.0);
        let mut b = Builder::at(&mut f, 0);
        let first = b.splat("s1", x, 1.0);
        assert_eq!(f.layout[0], first);
    }
}
