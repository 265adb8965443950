//! Where every buffer lives: the three caller-owned regions of a bundle
//! (constant weights, mutable weights, one activation arena) and the byte
//! offset of every weight, activation and tensorview inside them.
//!
//! Both engines use this layout, so the interpreter sees exactly the aliasing
//! the generated C sees. Activations are placed first-fit over the
//! alloc/dealloc order (64-byte aligned) so no two simultaneously live
//! buffers overlap, unless an `allocactivation` carries an `Offset` member.

use crate::error::{inst_error, BackendError};
use glow_ir::{Function, InstId, Mutability, Opcode, Value};
use std::collections::BTreeMap;

/// Alignment of every region and of every buffer inside one.
pub const MEM_ALIGN: u64 = 64;

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
    v.div_ceil(MEM_ALIGN) * MEM_ALIGN
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
        // Live intervals as (offset, size, alloc), ordered by offset.
        let mut live: Vec<(u64, u64, InstId)> = Vec::new();
        let mut live_bytes = 0u64;
        for id in f.inst_ids() {
            let inst = f.inst(id);
            match inst.opcode {
                Opcode::AllocActivation => {
                    let ty = inst
                        .member_type("Ty")
                        .ok_or_else(|| inst_error(f, id, "allocactivation without a type"))?;
                    let size = align(ty.bytes()).max(MEM_ALIGN);
                    let offset = match inst.member_int("Offset") {
                        Some(o) if o >= 0 => o as u64,
                        _ => first_fit(&live, size),
                    };
                    live.push((offset, size, id));
                    live.sort();
                    live_bytes += size;
                    self.lower_bound = self.lower_bound.max(live_bytes);
                    self.naive_activations = self.naive_activations.saturating_add(size);
                    // Saturates so that an offset past the limit is reported, not wrapped.
                    self.activations_size = self.activations_size.max(offset.saturating_add(size));
                    self.insts.insert(
                        id,
                        Place {
                            region: Region::Activations,
                            offset,
                        },
                    );
                }
                Opcode::DeallocActivation => {
                    if let Some(Value::Inst(a)) = inst.operands.first().map(|o| o.value) {
                        if let Some(k) = live.iter().position(|l| l.2 == a) {
                            live_bytes -= live[k].1;
                            live.remove(k);
                        }
                    }
                }
                _ => {}
            }
        }
        // A planned function's arena has the planned size.
        if let Some(plan) = &f.memory {
            self.activations_size = self.activations_size.max(plan.size);
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
                        let offs = inst.member_ints("Offsets")?;
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

/// Lowest offset where `size` bytes overlap none of `live` (sorted by offset).
fn first_fit(live: &[(u64, u64, InstId)], size: u64) -> u64 {
    let mut candidate = 0u64;
    for &(off, sz, _) in live {
        if candidate + size <= off {
            return candidate;
        }
        candidate = candidate.max(align(off + sz));
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_fit_fills_gaps() {
        let i = InstId(0);
        assert_eq!(first_fit(&[], 64), 0);
        assert_eq!(first_fit(&[(0, 64, i)], 64), 64);
        assert_eq!(first_fit(&[(128, 64, i)], 64), 0);
        assert_eq!(first_fit(&[(0, 64, i), (128, 64, i)], 64), 64);
        assert_eq!(first_fit(&[(0, 64, i), (128, 64, i)], 128), 192);
    }

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
}
