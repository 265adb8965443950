//! The builder: the one way the parser, the passes and the importer add
//! weights and instructions to a function.
//!
//! A builder is a cursor into a function's layout. Every instruction it
//! makes is placed at the cursor in O(1), so instructions come out in the
//! order they were built:
//!
//! - [`Builder::new`] appends at the end of the function;
//! - [`Builder::before`] places each new instruction right before an anchor;
//! - [`Builder::after`] places the first one right after an anchor, the
//!   next one after that, and so on.
//!
//! [`Builder::inst`] takes a base name and makes it unique in O(1) (`t`,
//! `t1`, `t2`, ...; [`Builder::with_separator`] gives `t.1`); operand kinds
//! and member defaults come from the opcode table. [`Builder::insert`] places
//! ready-made [`InstData`] with its name as is (the parser, which reports
//! duplicate names itself). Weights keep the exact name given.
//!
//! Erasing is `f.layout.remove(id)` (or `Function::erase`), also O(1); a
//! rewritten instruction is `*f.inst_mut(id) = InstData::new(..)`. Spans live
//! in `f.spans`, and what a builder makes has none.
//!
//! ```
//! use glow_ir::builder::Builder;
//! use glow_ir::{Function, Mutability, Opcode, Type};
//! let mut f = Function::new("f");
//! let mut b = Builder::new(&mut f);
//! let x = b.weight("x", Type::float(&[4]), Mutability::Mutable);
//! let t = b.alloc("t", Type::float(&[4]));
//! let relu = b.inst("relu", Opcode::Relu, &[t, x], &[]);
//! b.dealloc("t.dealloc", t);
//! // Later, from a pass: a splat right before the relu.
//! Builder::before(&mut f, relu).splat("zero", t, 0.0);
//! ```

use crate::function::*;
use crate::member::{self as m, Member};
use crate::opcode::Opcode;
use crate::types::Type;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cursor {
    End,
    Before(InstId),
    After(InstId),
}

/// Places new instructions at a cursor in a function's layout.
pub struct Builder<'f> {
    func: &'f mut Function,
    cursor: Cursor,
    sep: &'static str,
}

impl<'f> Builder<'f> {
    /// A builder that appends at the end of the function.
    pub fn new(func: &'f mut Function) -> Builder<'f> {
        Builder {
            func,
            cursor: Cursor::End,
            sep: "",
        }
    }

    /// A builder that places each new instruction right before `inst`.
    pub fn before(func: &'f mut Function, inst: InstId) -> Builder<'f> {
        Builder {
            func,
            cursor: Cursor::Before(inst),
            sep: "",
        }
    }

    /// A builder that places new instructions after `inst`, in build order.
    pub fn after(func: &'f mut Function, inst: InstId) -> Builder<'f> {
        Builder {
            func,
            cursor: Cursor::After(inst),
            sep: "",
        }
    }

    /// Fresh names put `sep` between base and counter (`x.1` for `"."`).
    pub fn with_separator(mut self, sep: &'static str) -> Builder<'f> {
        self.sep = sep;
        self
    }

    pub fn func(&mut self) -> &mut Function {
        self.func
    }

    /// A name not used yet in the function, derived from `base`; taken.
    pub fn fresh(&mut self, base: &str) -> String {
        self.func.fresh_name_with(base, self.sep)
    }

    /// Adds a weight named exactly `name`.
    pub fn weight(&mut self, name: &str, ty: Type, mutability: Mutability) -> Value {
        Value::Weight(self.func.push_weight(WeightData {
            name: name.to_string(),
            ty,
            mutability,
            init: None,
        }))
    }

    /// Places `data` at the cursor, its name as is.
    pub fn insert(&mut self, data: InstData) -> InstId {
        let id = self.func.push_inst(data);
        let layout = &mut self.func.layout;
        match self.cursor {
            Cursor::End => layout.append(id),
            Cursor::Before(anchor) => layout.insert_before(id, anchor),
            Cursor::After(anchor) => {
                layout.insert_after(id, anchor);
                self.cursor = Cursor::After(id);
            }
        }
        id
    }

    /// Adds an instruction named after `base` (made unique); operand kinds
    /// come from the table, members not given take their defaults.
    pub fn inst(
        &mut self,
        base: &str,
        opcode: Opcode,
        operands: &[Value],
        members: &[Member],
    ) -> InstId {
        let name = self.fresh(base);
        self.insert(InstData::new(name, opcode, operands, members))
    }

    pub fn alloc(&mut self, name: &str, ty: Type) -> Value {
        Value::Inst(self.inst(name, Opcode::AllocActivation, &[], &[m::TY.to(ty)]))
    }

    pub fn dealloc(&mut self, name: &str, buffer: Value) -> InstId {
        self.inst(name, Opcode::DeallocActivation, &[buffer], &[])
    }

    pub fn tensorview(&mut self, name: &str, src: Value, ty: Type, offsets: Vec<i64>) -> Value {
        let members = [m::TY.to(ty), m::OFFSETS.to(offsets)];
        Value::Inst(self.inst(name, Opcode::TensorView, &[src], &members))
    }

    pub fn copy(&mut self, name: &str, dest: Value, src: Value) -> InstId {
        self.inst(name, Opcode::Copy, &[dest, src], &[])
    }

    pub fn splat(&mut self, name: &str, dest: Value, value: f64) -> InstId {
        self.inst(name, Opcode::Splat, &[dest], &[m::VALUE.to(value)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::printer::{print_function, PrintOptions};

    fn names(f: &Function) -> Vec<&str> {
        f.layout.iter().map(|i| f.inst(i).name.as_str()).collect()
    }

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
        assert_eq!(Builder::new(&mut f).fresh("t"), "t1");
        assert!(f.spans.inst(0).is_none());
    }

    #[test]
    fn cursors_place_in_build_order() {
        let mut f = Function::new("f");
        let mut b = Builder::new(&mut f);
        let x = b.weight("x", Type::float(&[2]), Mutability::Mutable);
        let a = b.splat("a", x, 1.0);
        let z = b.splat("z", x, 9.0);
        let mut b = Builder::before(&mut f, a);
        b.splat("p", x, 0.0);
        b.splat("q", x, 0.5);
        let mut b = Builder::after(&mut f, a);
        b.splat("b", x, 2.0);
        b.splat("c", x, 3.0);
        Builder::before(&mut f, z).splat("y", x, 8.0);
        Builder::after(&mut f, z).splat("end", x, 10.0);
        assert_eq!(names(&f), ["p", "q", "a", "b", "c", "y", "z", "end"]);
        Builder::new(&mut f).splat("last", x, 11.0);
        assert_eq!(
            f.layout.last().map(|i| f.inst(i).name.as_str()),
            Some("last")
        );
    }

    #[test]
    fn names_are_made_unique_in_constant_time_per_name() {
        let mut f = Function::new("f");
        let mut b = Builder::new(&mut f);
        let x = b.weight("x", Type::float(&[2]), Mutability::Mutable);
        for _ in 0..1000 {
            b.splat("s", x, 1.0);
        }
        b.splat("x", x, 1.0);
        let n = names(&f);
        assert_eq!(n[0], "s");
        assert_eq!(n[999], "s999");
        assert_eq!(n[1000], "x1");
        let mut dotted = Builder::new(&mut f).with_separator(".");
        assert_eq!(dotted.fresh("s"), "s.1");
        // Exact names from `insert` are seen by later fresh names.
        dotted.insert(InstData::new("k", Opcode::Splat, &[x], &[]));
        assert_eq!(dotted.fresh("k"), "k.1");
    }

    #[test]
    fn erase_and_rewrite() {
        let mut f = Function::new("f");
        let mut b = Builder::new(&mut f);
        let x = b.weight("x", Type::float(&[2]), Mutability::Mutable);
        let y = b.weight("y", Type::float(&[2]), Mutability::Mutable);
        let a = b.splat("a", x, 1.0);
        let c = b.copy("c", y, x);
        f.erase(a);
        *f.inst_mut(c) = InstData::new("c", Opcode::Copy, &[x, y], &[]);
        assert_eq!(names(&f), ["c"]);
        assert_eq!(f.inst(c).operands[0].value, x);
        // An erased instruction's name stays taken.
        assert_eq!(Builder::new(&mut f).fresh("a"), "a1");
    }
}
