//! Linear-time helpers the passes share to read and edit a function:
//! origins of every buffer computed once, dense per-buffer indices, fresh
//! names, batch erasure and instructions created outside the program order.
//!
//! `Function::erase` and `Builder` are O(n) per call; a pass that edits many
//! instructions collects its edits and applies them here in one sweep, so the
//! passes stay near-linear on million-instruction functions.

use glow_ir::{Function, InstData, InstId, Opcode, Value};
use std::collections::HashSet;

/// The origin (buffer at the end of the tensorview chain) and element
/// offset of every value, computed in one forward sweep.
pub struct Origins {
    /// Per instruction id: origin and offset; the instruction itself for
    /// anything that is not a tensorview.
    table: Vec<(Value, u64)>,
}

impl Origins {
    /// Computes the table. Views are defined above their users in a valid
    /// function, so one sweep in program order suffices; a view whose source
    /// comes later (invalid IR) falls back to `Function::origin`.
    pub fn compute(f: &Function) -> Origins {
        let mut table: Vec<(Value, u64)> = (0..f.insts.len() as u32)
            .map(|i| (Value::Inst(InstId(i)), 0))
            .collect();
        let mut done = vec![false; f.insts.len()];
        for &id in &f.layout {
            let inst = f.inst(id);
            if inst.opcode == Opcode::TensorView {
                let local = match inst.operands.first() {
                    Some(src) => {
                        let (o, off) = match src.value {
                            Value::Inst(s) if done[s.index()] => table[s.index()],
                            v => f.origin(v),
                        };
                        let here = match (inst.member_ints("Offsets"), f.value_type(src.value)) {
                            (Some(offs), Some(ty)) => {
                                glow_ir::function::linear_offset(offs, &ty.dims)
                            }
                            _ => 0,
                        };
                        (o, off + here)
                    }
                    None => (Value::Inst(id), 0),
                };
                table[id.index()] = local;
            }
            done[id.index()] = true;
        }
        Origins { table }
    }

    /// The origin of `v` and the element offset of `v` inside it.
    pub fn of(&self, v: Value) -> (Value, u64) {
        match v {
            Value::Weight(_) => (v, 0),
            Value::Inst(i) => self.table.get(i.index()).copied().unwrap_or((v, 0)),
        }
    }

    /// The origin of `v`.
    pub fn origin(&self, v: Value) -> Value {
        self.of(v).0
    }
}

/// A dense index for every value: weights first, then instructions.
pub fn dense(f: &Function, v: Value) -> usize {
    match v {
        Value::Weight(w) => w.index(),
        Value::Inst(i) => f.weights.len() + i.index(),
    }
}

/// The number of dense indices (`dense` is always below it).
pub fn dense_len(f: &Function) -> usize {
    f.weights.len() + f.insts.len()
}

/// Number of elements of a buffer value (0 when it has no type).
pub fn elems(f: &Function, v: Value) -> u64 {
    f.value_type(v).map_or(0, |t| t.size())
}

/// Removes every instruction marked in `dead` (indexed by instruction id)
/// from the program order, in one sweep. Returns how many were removed.
pub fn erase_marked(f: &mut Function, dead: &[bool]) -> usize {
    let before = f.layout.len();
    f.layout
        .retain(|i| !dead.get(i.index()).copied().unwrap_or(false));
    before - f.layout.len()
}

/// Fresh, unique names for instructions a pass creates. The set of taken
/// names is built on the first request only, so a pass that creates
/// nothing pays nothing.
#[derive(Default)]
pub struct Names {
    taken: Option<HashSet<String>>,
}

impl Names {
    /// Every weight and instruction name of `f`, collected now.
    pub fn of(f: &Function) -> Names {
        let mut n = Names::default();
        n.collect(f);
        n
    }

    fn collect(&mut self, f: &Function) -> &mut HashSet<String> {
        self.taken.get_or_insert_with(|| {
            f.weights
                .iter()
                .map(|w| w.name.clone())
                .chain(f.insts.iter().map(|i| i.name.clone()))
                .collect()
        })
    }

    /// `base` if free (erased instructions included, as the builder does, so
    /// a name is never reused), else `base1`, `base2`, ...; reserved. Needs
    /// the names collected by [`Names::of`].
    pub fn fresh(&mut self, base: &str) -> String {
        let taken = self.taken.get_or_insert_with(HashSet::new);
        let mut name = base.to_string();
        let mut k = 1u64;
        while taken.contains(&name) {
            name = format!("{base}{k}");
            k += 1;
        }
        taken.insert(name.clone());
        name
    }

    /// Like [`Names::fresh`], collecting `f`'s names on the first call.
    pub fn fresh_in(&mut self, f: &Function, base: &str) -> String {
        self.collect(f);
        self.fresh(base)
    }
}

/// Use lists of every value in dense arrays (no hash map, two sweeps):
/// the users of a value in program order.
pub struct Uses {
    start: Vec<u32>,
    list: Vec<glow_ir::function::Use>,
}

impl Uses {
    pub fn compute(f: &Function) -> Uses {
        let mut start = vec![0u32; dense_len(f) + 1];
        for &id in &f.layout {
            for op in &f.inst(id).operands {
                start[dense(f, op.value) + 1] += 1;
            }
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut fill = start.clone();
        let total = start.last().copied().unwrap_or(0) as usize;
        let mut list = vec![
            glow_ir::function::Use {
                inst: InstId(0),
                operand: 0
            };
            total
        ];
        for &id in &f.layout {
            for (k, op) in f.inst(id).operands.iter().enumerate() {
                let slot = &mut fill[dense(f, op.value)];
                list[*slot as usize] = glow_ir::function::Use {
                    inst: id,
                    operand: k,
                };
                *slot += 1;
            }
        }
        Uses { start, list }
    }

    /// The uses of `v` (computed before any edit), in program order.
    pub fn users(&self, f: &Function, v: Value) -> &[glow_ir::function::Use] {
        let k = dense(f, v);
        match (self.start.get(k), self.start.get(k + 1)) {
            (Some(&a), Some(&b)) => &self.list[a as usize..b as usize],
            _ => &[],
        }
    }
}

/// Adds an instruction to the table without placing it in the program
/// order (the caller rebuilds `layout`); keeps the span table parallel.
pub fn push_inst(f: &mut Function, data: InstData) -> InstId {
    let id = InstId(f.insts.len() as u32);
    f.insts.push(data);
    if !f.spans.insts.is_empty() {
        f.spans.insts.push(Default::default());
    }
    id
}

/// A new instruction of `opcode` with the table's operand kinds and member
/// defaults, then `members` set by name.
pub fn new_inst(
    name: String,
    opcode: Opcode,
    operands: &[Value],
    members: Vec<(&str, glow_ir::MemberValue)>,
) -> InstData {
    let info = opcode.info();
    let mut data = InstData {
        name,
        opcode,
        operands: operands
            .iter()
            .enumerate()
            .map(|(k, &value)| glow_ir::Operand {
                kind: info
                    .operands
                    .get(k)
                    .map_or(glow_ir::OperandKind::In, |d| d.kind),
                value,
            })
            .collect(),
        members: info
            .members
            .iter()
            .map(|m| glow_ir::MemberValue::from_default(m.default))
            .collect(),
    };
    for (n, v) in members {
        data.set_member(n, v);
    }
    data
}

/// Rebuilds the program order: before each instruction of the current
/// order, the instructions `before[id]` lists are placed (in list order),
/// and instructions marked `dead` are left out. Both tables are indexed by
/// instruction id; ids past their ends mean "nothing".
pub fn rebuild_layout(f: &mut Function, before: &[Vec<InstId>], dead: &[bool]) {
    let mut layout = Vec::with_capacity(f.layout.len() + before.len());
    for &id in &f.layout {
        if let Some(list) = before.get(id.index()) {
            layout.extend(list.iter().copied());
        }
        if !dead.get(id.index()).copied().unwrap_or(false) {
            layout.push(id);
        }
    }
    f.layout = layout;
}

/// Display name of a value with its sigil, for debug lines.
pub fn show(f: &Function, v: Value) -> String {
    format!("%{}", f.value_name(v))
}
