//! Linear-time analyses the passes share: origins of every buffer computed
//! once, dense per-buffer indices, use lists, and batch erasure.
//!
//! Edits go through `glow_ir::builder::Builder` (O(1) insertion at a cursor,
//! fresh names in O(1)) and `Function::erase` (O(1)).

use glow_ir::member as m;
use glow_ir::{Function, InstId, Opcode, Value};

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
        for id in &f.layout {
            let inst = f.inst(id);
            if inst.opcode == Opcode::TensorView {
                let local = match inst.operands.first() {
                    Some(src) => {
                        let (o, off) = match src.value {
                            Value::Inst(s) if done[s.index()] => table[s.index()],
                            v => f.origin(v),
                        };
                        let here = match (inst.get(m::OFFSETS), f.value_type(src.value)) {
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
/// from the program order. Returns how many were removed.
pub fn erase_marked(f: &mut Function, dead: &[bool]) -> usize {
    let mut n = 0;
    for (k, _) in dead.iter().enumerate().filter(|(_, &d)| d) {
        let id = InstId(k as u32);
        if f.layout.contains(id) {
            f.layout.remove(id);
            n += 1;
        }
    }
    n
}

/// Applies a batch of moves in one O(n) sweep: before each instruction of
/// the current order, the instructions `before[id]` lists are placed (in
/// list order), and instructions marked `dead` are left out (a moved
/// instruction is marked dead at its old place). Both tables are indexed by
/// instruction id; ids past their ends mean "nothing". New instructions are
/// better placed directly with `Builder::before`.
pub fn rebuild_layout(f: &mut Function, before: &[Vec<InstId>], dead: &[bool]) {
    let mut order = Vec::with_capacity(f.layout.len());
    for id in &f.layout {
        if let Some(list) = before.get(id.index()) {
            order.extend(list.iter().copied());
        }
        if !dead.get(id.index()).copied().unwrap_or(false) {
            order.push(id);
        }
    }
    f.layout.set_order(order);
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
        for id in &f.layout {
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
        for id in &f.layout {
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

/// Display name of a value with its sigil, for debug lines.
pub fn show(f: &Function, v: Value) -> String {
    format!("%{}", f.value_name(v))
}

/// The program order as a vector, and each instruction's position in it
/// (`usize::MAX` for instructions not in the order), for passes that match
/// patterns across positions.
pub fn order_and_positions(f: &Function) -> (Vec<InstId>, Vec<usize>) {
    let order = f.layout.to_vec();
    let mut pos = vec![usize::MAX; f.insts.len()];
    for (i, &id) in order.iter().enumerate() {
        pos[id.index()] = i;
    }
    (order, pos)
}
