//! Where every buffer lives: the three caller-owned regions of a bundle
//! (constant weights, mutable weights, one activation arena) and the byte
//! offset of every weight, activation and tensorview inside them.
//!
//! Both engines use this layout, so the interpreter sees exactly the aliasing
//! the generated C sees. Activations of a planned function (`plan-memory`
//! ran) sit at their `Offset`s; an unplanned function is planned here by the
//! same planner (`glow_planner::arena::arena_layout`), so there is
//! one placement algorithm and one lower bound. Regions and offsets are
//! `glow_ir::ALIGN`-aligned.

use crate::error::{inst_error, BackendError};
use glow_ir::member as m;
use glow_ir::{Function, InstId, Mutability, Opcode, Value, ALIGN};
use glow_planner::align_up;
use glow_planner::arena::arena_layout;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Region {
    Constant,
    Mutable,
    Activations,
}

impl Region {
    /// The entry point's parameter naming this region.
    pub fn param(self) -> &'static str {
        match self {
            Region::Constant => "constantWeight",
            Region::Mutable => "mutableWeight",
            Region::Activations => "activations",
        }
    }
}

/// A buffer's place: region and byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub region: Region,
    pub offset: u64,
}

/// The memory layout of one function.
#[derive(Clone, Debug, Default)]
pub struct MemoryLayout {
    pub constant_size: u64,
    pub mutable_size: u64,
    pub activations_size: u64,
    /// Sum of all activation sizes (what no reuse would need).
    pub naive_activations: u64,
    /// Largest total of simultaneously live activations.
    pub lower_bound: u64,
    weights: Vec<Place>,
    insts: BTreeMap<InstId, Place>,
}

fn align(v: u64) -> u64 {
    align_up(v, ALIGN)
}

impl MemoryLayout {
    /// Lays out a verified function.
    pub fn plan(f: &Function) -> Result<MemoryLayout, BackendError> {
        crate::limits::check_tensors(f)?;
        let mut m = MemoryLayout::default();
        for w in &f.weights {
            let size = align(w.ty.bytes());
            let (region, end) = match w.mutability {
                Mutability::Const => (Region::Constant, &mut m.constant_size),
                Mutability::Mutable => (Region::Mutable, &mut m.mutable_size),
            };
            m.weights.push(Place {
                region,
                offset: *end,
            });
            *end = end.saturating_add(size);
        }
        m.place_activations(f)?;
        crate::limits::check_layout(f, &m)?;
        Ok(m)
    }

    fn place_activations(&mut self, f: &Function) -> Result<(), BackendError> {
        for id in f.inst_ids() {
            let inst = f.inst(id);
            if inst.opcode == Opcode::AllocActivation && inst.get(m::TY).is_none() {
                return Err(inst_error(f, id, "allocactivation without a type"));
            }
        }
        let a = arena_layout(f, ALIGN);
        self.lower_bound = a.lower_bound;
        self.naive_activations = a
            .bufs
            .iter()
            .fold(0u64, |n, b| n.saturating_add(align_up(b.size, a.align)));
        self.activations_size = a.arena;
        for ((l, b), &offset) in a.lives.iter().zip(&a.bufs).zip(&a.offsets) {
            // A planned arena is checked by the verifier; this keeps every
            // buffer inside the region even so.
            // Saturates so that an offset past the limit is reported, not wrapped.
            self.activations_size = self.activations_size.max(offset.saturating_add(b.size));
            self.insts.insert(
                l.alloc,
                Place {
                    region: Region::Activations,
                    offset,
                },
            );
        }
        Ok(())
    }

    /// Region and byte offset of any buffer value (following tensorviews,
    /// whose element offsets count in the *source's* element size).
    pub fn place(&self, f: &Function, v: Value) -> Option<Place> {
        let mut v = v;
        let mut extra = 0u64;
        for _ in 0..=f.insts.len() {
            match v {
                Value::Weight(w) => {
                    let p = *self.weights.get(w.index())?;
                    return Some(Place {
                        offset: p.offset + extra,
                        ..p
                    });
                }
                Value::Inst(i) => {
                    let inst = f.inst(i);
                    if inst.opcode == Opcode::TensorView {
                        let src = inst.operands.first()?.value;
                        let src_ty = f.value_type(src)?;
                        let offs = inst.get(m::OFFSETS)?;
                        let lin = glow_ir::function::linear_offset(offs, &src_ty.dims);
                        extra += lin * src_ty.elem.bytes();
                        v = src;
                    } else {
                        let p = *self.insts.get(&i)?;
                        return Some(Place {
                            offset: p.offset + extra,
                            ..p
                        });
                    }
                }
            }
        }
        None
    }

    /// The place of every weight, in declaration order.
    pub fn weight_place(&self, index: usize) -> Place {
        self.weights[index]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activations_reuse_dead_space() {
        let src = "function f\ndeclare {\n  %o = WeightVar float<4> mutable\n}\n\ncode {\n  0 %a = allocactivation { Ty: float<4> }\n  1 %s = splat @out %a { Value: 1.0 }\n  2 %c = copy @out %o, @in %a\n  3 %d = deallocactivation @out %a\n  4 %b = allocactivation { Ty: float<4> }\n  5 %t = splat @out %b { Value: 1.0 }\n  6 %e = deallocactivation @out %b\n}\n";
        let m = glow_ir::parser::parse(src.as_bytes()).expect("parses");
        let f = &m.functions[0];
        let l = MemoryLayout::plan(f).expect("plans");
        assert_eq!(l.activations_size, 64);
        assert_eq!(l.naive_activations, 128);
        assert_eq!(l.lower_bound, 64);
        assert_eq!(l.mutable_size, 64);
    }

    const OVERLAP: &str = "declare {\n  %o = WeightVar float<4> mutable\n}\n\ncode {\n  0 %a = allocactivation { Ty: float<4>OA }\n  1 %b = allocactivation { Ty: float<16>OB }\n  2 %s = splat @out %a { Value: 1.0 }\n  3 %t = splat @out %b { Value: 2.0 }\n  4 %c = copy @out %o, @in %a\n  5 %d = deallocactivation @out %a\n  6 %e = deallocactivation @out %b\n}\n";

    fn layout_of(src: &str) -> (glow_ir::Function, MemoryLayout) {
        let m = glow_ir::parser::parse(src.as_bytes()).expect("parses");
        let f = m.functions.into_iter().next().expect("one function");
        let l = MemoryLayout::plan(&f).expect("plans");
        (f, l)
    }

    fn offset(f: &glow_ir::Function, l: &MemoryLayout, name: &str) -> u64 {
        let v = f.lookup(name).expect("defined");
        l.place(f, v).expect("placed").offset
    }

    #[test]
    fn unplanned_functions_are_placed_by_the_planner() {
        let src = format!(
            "function f\n{}",
            OVERLAP.replace("OA", "").replace("OB", "")
        );
        let (f, l) = layout_of(&src);
        // Both live at once: side by side, at the bound.
        let (a, b) = (offset(&f, &l, "a"), offset(&f, &l, "b"));
        assert!(a + 16 <= b || b + 64 <= a, "a at {a}, b at {b}");
        assert_eq!(l.activations_size, 128);
        assert_eq!(l.lower_bound, 128);
        let plan = arena_layout(&f, ALIGN);
        assert_eq!(plan.offsets, [a, b]);
        assert_eq!(plan.arena, l.activations_size);
        assert_eq!(plan.lower_bound, l.lower_bound);
    }

    #[test]
    fn planned_functions_keep_their_offsets() {
        let src = format!(
            "function f {{ Arena: 256 }}\n{}",
            OVERLAP
                .replace("OA", ", Offset: 128")
                .replace("OB", ", Offset: 0")
        );
        let (f, l) = layout_of(&src);
        assert_eq!(offset(&f, &l, "a"), 128);
        assert_eq!(offset(&f, &l, "b"), 0);
        assert_eq!(l.activations_size, 256);
        assert_eq!(l.lower_bound, 128);
    }
}
