//! Functions: weights and instructions in dense tables indexed by small ids,
//! with program order kept apart from instruction data (as in Cranelift).

use crate::fxhash::FxHashMap as HashMap;
use crate::layout::Layout;
use crate::member::{self as m, Key, Kind, Member};
use crate::names::Names;
use crate::opcode::{Default, MemberType, Opcode, OperandDef, OperandKind};
use crate::span::SourceMap;
use crate::types::Type;

/// A weight, by its index in `Function::weights`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WeightId(pub u32);

/// An instruction, by its index in `Function::insts` (not its position).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstId(pub u32);

impl WeightId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}
impl InstId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// What an operand names: a weight or the result of an instruction
/// (an `allocactivation` or a `tensorview` in a valid function).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Value {
    Weight(WeightId),
    Inst(InstId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutability {
    /// Read-only constant contents (Glow `Constant`).
    Const,
    /// Inputs and outputs, observable from outside (Glow `Placeholder`).
    Mutable,
}

impl Mutability {
    pub fn as_str(self) -> &'static str {
        match self {
            Mutability::Const => "const",
            Mutability::Mutable => "mutable",
        }
    }
}

/// Inline contents of a weight.
#[derive(Clone, Debug, PartialEq)]
pub enum WeightInit {
    /// Every element has this value.
    Splat(f64),
    /// One value per element, for float element kinds.
    Floats(Vec<f64>),
    /// One value per element, for integer, quantized and bool kinds.
    Ints(Vec<i64>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct WeightData {
    pub name: String,
    pub ty: Type,
    pub mutability: Mutability,
    pub init: Option<WeightInit>,
}

/// A member value as written; the verifier checks it against the table.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    IntArray(Vec<i64>),
    FloatArray(Vec<f64>),
    Type(Type),
    Enum(String),
    Str(String),
}

impl MemberValue {
    /// The value a table default stands for.
    pub fn from_default(d: Default) -> Option<MemberValue> {
        Some(match d {
            Default::Required => return None,
            Default::Int(v) => MemberValue::Int(v),
            Default::Float(v) => MemberValue::Float(v),
            Default::Bool(v) => MemberValue::Bool(v),
            Default::IntArray(v) => MemberValue::IntArray(v.to_vec()),
            Default::FloatArray(v) => MemberValue::FloatArray(v.to_vec()),
            Default::Enum(v) => MemberValue::Enum(v.to_string()),
            Default::Str(v) => MemberValue::Str(v.to_string()),
        })
    }

    /// Whether the value has the member type `ty`.
    pub fn has_type(&self, ty: MemberType) -> bool {
        match (self, ty) {
            (MemberValue::Int(_), MemberType::Int)
            | (MemberValue::Float(_), MemberType::Float)
            | (MemberValue::Bool(_), MemberType::Bool)
            | (MemberValue::IntArray(_), MemberType::IntArray)
            | (MemberValue::FloatArray(_), MemberType::FloatArray)
            | (MemberValue::Type(_), MemberType::Type)
            | (MemberValue::Str(_), MemberType::Str) => true,
            (MemberValue::Enum(v), MemberType::Enum(vals)) => vals.contains(&v.as_str()),
            _ => false,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            MemberValue::Int(v) => Some(*v),
            _ => None,
        }
    }
    pub fn as_float(&self) -> Option<f64> {
        match self {
            MemberValue::Float(v) => Some(*v),
            MemberValue::Int(v) => Some(*v as f64),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            MemberValue::Bool(v) => Some(*v),
            _ => None,
        }
    }
    pub fn as_ints(&self) -> Option<&[i64]> {
        match self {
            MemberValue::IntArray(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_floats(&self) -> Option<&[f64]> {
        match self {
            MemberValue::FloatArray(v) => Some(v),
            _ => None,
        }
    }
    pub fn as_type(&self) -> Option<&Type> {
        match self {
            MemberValue::Type(t) => Some(t),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            MemberValue::Enum(s) | MemberValue::Str(s) => Some(s),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub kind: OperandKind,
    pub value: Value,
}

/// One instruction. `members` is indexed like the opcode's member table;
/// `None` means a required member is missing (the verifier reports it).
#[derive(Clone, Debug, PartialEq)]
pub struct InstData {
    pub name: String,
    pub opcode: Opcode,
    pub operands: Vec<Operand>,
    pub members: Vec<Option<MemberValue>>,
}

impl InstData {
    /// An instruction of `opcode`: operand kinds from the table, members at
    /// their defaults, then `members` set.
    ///
    /// Panics when the opcode has no such member, or when the operands are
    /// more than the table has or fewer than it requires: the code that
    /// built it is wrong, and the verifier could not tell later.
    pub fn new(
        name: impl Into<String>,
        opcode: Opcode,
        operands: &[Value],
        members: &[Member],
    ) -> InstData {
        let info = opcode.info();
        assert!(
            info.accepts_operand_count(operands.len()),
            "`{}` takes {} operands, {} given",
            info.name,
            info.operands.len(),
            operands.len()
        );
        // Operands past the fixed ones join the one variadic list; with two
        // lists their kinds cannot be told from values (`with_operands`).
        let lists: Vec<&OperandDef> = info.operands.iter().filter(|d| d.variadic).collect();
        assert!(
            lists.len() < 2 || operands.len() == info.required_operands(),
            "`{}` has two operand lists: build it with `InstData::with_operands`",
            info.name
        );
        let operands = operands
            .iter()
            .enumerate()
            .map(|(k, &value)| Operand {
                kind: info.operands.get(k).filter(|d| !d.variadic).map_or_else(
                    || lists.first().map_or(OperandKind::In, |d| d.kind),
                    |d| d.kind,
                ),
                value,
            })
            .collect();
        InstData::build(name.into(), opcode, operands, members)
    }

    /// An instruction with operands of the given kinds (the one way to
    /// build an opcode with two variadic lists, whose split the kinds say);
    /// panics, as `new` does, when they fit no split of the table.
    pub fn with_operands(
        name: impl Into<String>,
        opcode: Opcode,
        operands: &[Operand],
        members: &[Member],
    ) -> InstData {
        let info = opcode.info();
        if let Err((k, _)) = info.operand_defs(operands.iter().map(|o| o.kind)) {
            panic!(
                "`{}`: operand {k} fits none of its operand lists",
                info.name
            );
        }
        InstData::build(name.into(), opcode, operands.to_vec(), members)
    }

    fn build(name: String, opcode: Opcode, operands: Vec<Operand>, members: &[Member]) -> InstData {
        let mut data = InstData {
            name,
            opcode,
            operands,
            members: opcode
                .info()
                .members
                .iter()
                .map(|m| MemberValue::from_default(m.default))
                .collect(),
        };
        for m in members {
            data.set_member(m.name, m.value.clone());
        }
        data
    }

    /// The operand the opcode table calls `name`, if the instruction has it
    /// (a fixed operand; a variadic list is [`InstData::operand_list`]).
    pub fn operand_named(&self, name: &str) -> Option<&Operand> {
        let k = self.opcode.info().operand_index(name)?;
        if self.opcode.info().operands[k].variadic {
            return None;
        }
        self.operands.get(k)
    }

    /// The table's definition of each operand, `None` for the operands past
    /// the ones the table (and its variadic lists' kinds) can place.
    pub fn operand_defs(&self) -> Vec<Option<&'static OperandDef>> {
        let info = self.opcode.info();
        let kinds = self.operands.iter().map(|o| o.kind);
        let defs = match info.operand_defs(kinds) {
            Ok(d) => d,
            Err((k, _)) => info
                .operand_defs(self.operands[..k].iter().map(|o| o.kind))
                .unwrap_or_default(),
        };
        (0..self.operands.len())
            .map(|k| defs.get(k).map(|&d| &info.operands[d]))
            .collect()
    }

    /// The table's name of operand `k` (a variadic list's name for each of
    /// its operands), `None` past what the table places.
    pub fn operand_name(&self, k: usize) -> Option<&'static str> {
        let info = self.opcode.info();
        if !info.is_variadic() {
            return info.operands.get(k).map(|d| d.name);
        }
        self.operand_defs()
            .get(k)
            .copied()
            .flatten()
            .map(|d| d.name)
    }

    /// The positions of the operands of the table's operand `name`: a
    /// variadic list's run (maybe empty), or the one position of a fixed
    /// operand the instruction has.
    pub fn operand_list(&self, name: &str) -> Option<std::ops::Range<usize>> {
        let info = self.opcode.info();
        let d = info.operand_index(name)?;
        if !info.operands[d].variadic {
            return (d < self.operands.len()).then_some(d..d + 1);
        }
        let defs = info
            .operand_defs(self.operands.iter().map(|o| o.kind))
            .ok()?;
        let start = defs.iter().position(|&x| x >= d).unwrap_or(defs.len());
        let end = defs.iter().position(|&x| x > d).unwrap_or(defs.len());
        Some(start..end)
    }

    /// A member's value, if the opcode has it and it is set.
    pub fn get<K: Kind>(&self, key: Key<K>) -> Option<K::Out<'_>> {
        K::read(self.member_by_name(key.name())?)
    }

    /// Sets a member; panics when the opcode has no such member.
    pub fn set<K: Kind>(&mut self, key: Key<K>, value: impl Into<K::Arg>) {
        self.set_member(key.name(), K::wrap(value.into()));
    }

    /// A member by the name the table gives it, for code that walks the
    /// table (printer, verifier, reducer); other code uses [`InstData::get`].
    pub fn member_by_name(&self, name: &str) -> Option<&MemberValue> {
        let i = self.opcode.info().member_index(name)?;
        self.members.get(i)?.as_ref()
    }

    /// `FusedActivation` and its arguments (`NONE`, `[]` when absent).
    pub fn fused_activation(&self) -> (&str, &[f64]) {
        (
            self.get(m::FUSED_ACTIVATION).unwrap_or("NONE"),
            self.get(m::FUSED_ACTIVATION_ARGS).unwrap_or(&[]),
        )
    }

    /// Sets a member by the table's name; panics when the opcode has none.
    pub fn set_member(&mut self, name: &str, value: MemberValue) {
        match self.opcode.info().member_index(name) {
            Some(i) => self.members[i] = Some(value),
            None => panic!("`{}` has no member `{name}`", self.opcode.name()),
        }
    }
}

/// A function: weights, an instruction table and the program order.
#[derive(Clone, Debug, Default)]
pub struct Function {
    pub name: String,
    pub weights: Vec<WeightData>,
    /// Every instruction ever created; erased ones stay here but leave `layout`.
    pub insts: Vec<InstData>,
    /// Program order: O(1) insert and erase (see `layout.rs`).
    pub layout: Layout,
    /// Source spans of parsed entities; others have none.
    pub spans: SourceMap,
    /// Taken names, for `fresh_name`; kept current by the builder.
    names: Names,
    /// The activation arena, once `plan-memory` placed every
    /// `allocactivation` at its `Offset`; printed `function f { Arena: N }`.
    pub memory: Option<ArenaPlan>,
}

/// A planned activation arena: its size and the alignment of its offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArenaPlan {
    /// Bytes of the arena (every buffer ends at or below it).
    pub size: u64,
    /// Offsets are multiples of this (`ALIGN` unless written `Align: N`).
    pub align: u64,
}

/// The one alignment of the workspace, in bytes: of the memory regions and
/// of every buffer in them (bundles, interpreter, planner), and what an arena
/// header without `Align:` means. Glow uses the same.
pub const ALIGN: u64 = 64;

impl Function {
    pub fn new(name: impl Into<String>) -> Function {
        Function {
            name: name.into(),
            ..Function::default()
        }
    }

    pub fn weight(&self, w: WeightId) -> &WeightData {
        &self.weights[w.index()]
    }

    pub fn inst(&self, i: InstId) -> &InstData {
        &self.insts[i.index()]
    }

    pub fn inst_mut(&mut self, i: InstId) -> &mut InstData {
        &mut self.insts[i.index()]
    }

    pub fn weight_ids(&self) -> impl Iterator<Item = WeightId> + '_ {
        (0..self.weights.len() as u32).map(WeightId)
    }

    /// Instructions in program order.
    pub fn inst_ids(&self) -> crate::layout::Iter<'_> {
        self.layout.iter()
    }

    /// Room for `weights` more weights and `insts` more instructions.
    pub fn reserve(&mut self, weights: usize, insts: usize) {
        self.weights.reserve(weights);
        self.insts.reserve(insts);
        self.layout.reserve(self.insts.len() + insts);
        self.spans.reserve(weights, insts);
    }

    /// Adds a weight to the table (names are the caller's business; the
    /// builder is the usual way).
    pub fn push_weight(&mut self, data: WeightData) -> WeightId {
        self.names.note(&data.name);
        self.weights.push(data);
        WeightId(self.weights.len() as u32 - 1)
    }

    /// Adds an instruction to the table without placing it in the layout.
    pub fn push_inst(&mut self, data: InstData) -> InstId {
        self.names.note(&data.name);
        self.insts.push(data);
        InstId(self.insts.len() as u32 - 1)
    }

    fn build_names(&mut self) {
        if !self.names.is_built() {
            let (weights, insts) = (&self.weights, &self.insts);
            self.names.build(|| {
                let w = weights.iter().map(|w| w.name.as_str());
                w.chain(insts.iter().map(|i| i.name.as_str())).collect()
            });
        }
    }
    /// Drops the arena plan: no `Arena`, no `Offset`s (a pass whose change
    /// broke the plan leaves the function unplanned; `plan-memory` plans it
    /// again). True when there was a plan.
    pub fn drop_plan(&mut self) -> bool {
        if self.memory.take().is_none() {
            return false;
        }
        for i in self.layout.to_vec() {
            if self.inst(i).opcode == crate::opcode::Opcode::AllocActivation {
                self.inst_mut(i).set(crate::member::OFFSET, -1);
            }
        }
        true
    }

    /// A name no weight or instruction has or had, derived from `base`:
    /// `base`, else `base1`, `base2`, ...; O(1) after the first call.
    pub fn fresh_name(&mut self, base: &str) -> String {
        self.fresh_name_with(base, "")
    }

    /// Like `fresh_name`, with `sep` between base and counter (`x.1`).
    pub fn fresh_name_with(&mut self, base: &str, sep: &str) -> String {
        self.build_names();
        self.names.fresh(base, sep)
    }

    /// Claims `name` so fresh names avoid it; false if it is taken.
    pub fn reserve_name(&mut self, name: &str) -> bool {
        self.build_names();
        self.names.reserve(name)
    }

    /// The name of a value.
    pub fn value_name(&self, v: Value) -> &str {
        match v {
            Value::Weight(w) => &self.weight(w).name,
            Value::Inst(i) => &self.inst(i).name,
        }
    }

    /// The type of a buffer value: a weight's type, an alloc's or view's `Ty`.
    pub fn value_type(&self, v: Value) -> Option<&Type> {
        match v {
            Value::Weight(w) => Some(&self.weight(w).ty),
            Value::Inst(i) => {
                let inst = self.inst(i);
                match inst.opcode {
                    Opcode::AllocActivation | Opcode::TensorView => inst.get(m::TY),
                    _ => None,
                }
            }
        }
    }

    /// The buffer at the end of a tensorview chain, with the element offset
    /// of `v` inside it.
    pub fn origin(&self, mut v: Value) -> (Value, u64) {
        let mut offset = 0u64;
        // Bounded by the instruction count so a malformed cycle cannot hang.
        for _ in 0..=self.insts.len() {
            let Value::Inst(i) = v else { break };
            let inst = self.inst(i);
            if inst.opcode != Opcode::TensorView {
                break;
            }
            let Some(src) = inst.operands.first() else {
                break;
            };
            if let (Some(offs), Some(src_ty)) = (inst.get(m::OFFSETS), self.value_type(src.value)) {
                offset += linear_offset(offs, &src_ty.dims);
            }
            v = src.value;
        }
        (v, offset)
    }

    /// Position of every instruction in program order (erased ones absent).
    pub fn positions(&self) -> HashMap<InstId, usize> {
        self.layout
            .iter()
            .enumerate()
            .map(|(p, i)| (i, p))
            .collect()
    }

    /// Looks a value up by name.
    pub fn lookup(&self, name: &str) -> Option<Value> {
        if let Some(w) = self.weights.iter().position(|w| w.name == name) {
            return Some(Value::Weight(WeightId(w as u32)));
        }
        self.layout
            .iter()
            .find(|&i| self.inst(i).name == name)
            .map(Value::Inst)
    }

    /// Use lists of every value, computed over the program order.
    pub fn uses(&self) -> UseLists {
        let mut uses: HashMap<Value, Vec<Use>> = HashMap::default();
        for i in &self.layout {
            for (k, op) in self.inst(i).operands.iter().enumerate() {
                uses.entry(op.value).or_default().push(Use {
                    inst: i,
                    operand: k,
                });
            }
        }
        UseLists { uses }
    }

    /// Removes an instruction from the program order, in O(1).
    pub fn erase(&mut self, i: InstId) {
        self.layout.remove(i);
    }
}

/// Row-major linear index of `offsets` in a tensor of `dims`.
pub fn linear_offset(offsets: &[i64], dims: &[u64]) -> u64 {
    let mut lin = 0u64;
    for (k, &o) in offsets.iter().enumerate() {
        let stride: u64 = dims.iter().skip(k + 1).product();
        lin = lin.saturating_add((o.max(0) as u64).saturating_mul(stride));
    }
    lin
}

/// An `inserttensor`'s window in its destination (per dimension, start and
/// end), or `None` for any other instruction and for an insert whose source
/// lies in its destination (that one reads what it overwrites).
pub fn insert_window(f: &Function, id: InstId) -> Option<Vec<(u64, u64)>> {
    let inst = f.inst(id);
    if inst.opcode != Opcode::InsertTensor {
        return None;
    }
    let (dest, src) = (inst.operands.first()?.value, inst.operands.get(1)?.value);
    if f.origin(src).0 == f.origin(dest).0 {
        return None;
    }
    let s = &f.value_type(src)?.dims;
    let offs = inst.get(m::OFFSETS)?;
    let count = inst.get(m::COUNT).unwrap_or(1).max(1) as u64;
    let axis = inst.get(m::AXIS).unwrap_or(0).max(0) as usize;
    (offs.len() == s.len()).then(|| {
        let at = |i: usize| offs[i].max(0) as u64;
        (0..s.len())
            .map(|i| (at(i), at(i) + if i == axis { count * s[i] } else { s[i] }))
            .collect()
    })
}

/// Whether windows inside `dims` are pairwise disjoint and add up to all of
/// it: a run of inserts that overwrites its whole destination.
pub fn windows_cover(dims: &[u64], ws: &[Vec<(u64, u64)>]) -> bool {
    let inside = |w: &Vec<(u64, u64)>| {
        w.len() == dims.len() && w.iter().zip(dims).all(|(r, &d)| r.0 <= r.1 && r.1 <= d)
    };
    let volume = |w: &Vec<(u64, u64)>| w.iter().map(|r| r.1 - r.0).product::<u64>();
    let overlap = |a: &Vec<(u64, u64)>, b: &Vec<(u64, u64)>| {
        a.iter().zip(b).all(|(x, y)| x.0 < y.1 && y.0 < x.1)
    };
    ws.iter().all(inside)
        && (0..ws.len()).all(|i| (0..i).all(|j| !overlap(&ws[i], &ws[j])))
        && ws.iter().map(volume).sum::<u64>() == dims.iter().product::<u64>()
}

/// One use of a value: instruction and operand index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Use {
    pub inst: InstId,
    pub operand: usize,
}

/// Users of each value, in program order.
#[derive(Clone, Debug, Default)]
pub struct UseLists {
    uses: HashMap<Value, Vec<Use>>,
}

impl UseLists {
    /// The uses of `v`, in program order.
    pub fn users(&self, v: Value) -> &[Use] {
        self.uses.get(&v).map(Vec::as_slice).unwrap_or(&[])
    }
    pub fn num_users(&self, v: Value) -> usize {
        self.users(v).len()
    }
}

/// A parsed file: its functions in order.
#[derive(Clone, Debug, Default)]
pub struct Module {
    pub functions: Vec<Function>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_structs_stay_small() {
        assert_eq!(std::mem::size_of::<Value>(), 8);
        assert_eq!(std::mem::size_of::<Operand>(), 12);
        assert!(std::mem::size_of::<InstData>() <= 80);
    }

    #[test]
    fn fresh_names_skip_taken_and_erased_names() {
        let mut f = Function::new("f");
        f.push_weight(WeightData {
            name: "t".into(),
            ty: Type::float(&[1]),
            mutability: Mutability::Mutable,
            init: None,
        });
        let a = f.push_inst(InstData::new(
            "t1",
            Opcode::Touch,
            &[Value::Weight(WeightId(0))],
            &[],
        ));
        f.layout.append(a);
        f.erase(a);
        assert_eq!(f.fresh_name("t"), "t2");
        assert_eq!(f.fresh_name("t"), "t3");
        assert_eq!(f.fresh_name("u"), "u");
        assert_eq!(f.fresh_name_with("u", "."), "u.1");
        assert!(f.reserve_name("t5"));
        assert!(!f.reserve_name("t5"));
        assert_eq!(f.fresh_name("t"), "t4");
        assert_eq!(f.fresh_name("t"), "t6");
        // Names added after the set was built are seen too.
        f.push_inst(InstData::new(
            "v",
            Opcode::Touch,
            &[Value::Weight(WeightId(0))],
            &[],
        ));
        assert_eq!(f.fresh_name("v"), "v1");
    }

    #[test]
    fn new_inst_takes_kinds_and_defaults_from_the_table() {
        let d = InstData::new(
            "c",
            Opcode::Copy,
            &[Value::Weight(WeightId(0)), Value::Weight(WeightId(1))],
            &[],
        );
        assert_eq!(d.operands[0].kind, OperandKind::Out);
        assert_eq!(d.operands[1].kind, OperandKind::In);
        let s = InstData::new(
            "s",
            Opcode::Splat,
            &[Value::Weight(WeightId(0))],
            &[m::VALUE.to(2.0)],
        );
        assert_eq!(s.get(m::VALUE), Some(2.0));
    }

    #[test]
    fn linear_offsets() {
        assert_eq!(linear_offset(&[1, 2], &[3, 4]), 6);
        assert_eq!(linear_offset(&[0, 0, 1], &[2, 2, 2]), 1);
    }
}
