//! Live intervals per buffer origin (docs/passes/share-buffers.md, "Live intervals"), the analysis behind
//! `share-buffers` (and usable by `dse` and the memory planner).
//!
//! Instruction at program position `k` gets slot `4k` for its reads and
//! `4k + 2` for its writes. Every buffer origin (a weight or an
//! `allocactivation`; tensorviews are looked through) gets a sorted list of
//! disjoint intervals `[begin, end]` (both ends inclusive):
//! - a full `@out` write (the operand covers the whole origin) starts a new
//!   interval, which holds one value (`same_value`);
//! - a read extends the current interval; a read with no interval yet starts
//!   one at slot 0 (`live_in`: the value was there before the function ran,
//!   for example a weight's input contents);
//! - `@inout` operands and partial writes extend the current interval to the
//!   write slot and clear `same_value` (the value changes inside it); a
//!   partial write into a weight with no interval yet starts a live-in one
//!   (the rest of the weight keeps its input value);
//! - an `inserttensor` into an activation with no interval yet only writes
//!   (the verifier accepts it only as the start of inserts covering the
//!   buffer, a concatenation without its zero splat);
//! - alloc, dealloc and tensorview instructions are neither reads nor writes,
//!   and `copy %x <- %x` (same origin and offset) is only a read;
//! - every weight's last interval is extended to the function end
//!   ([`LiveIntervals::end_slot`]): weights are observable after the run.

use glow_ir::{Function, Opcode, OperandKind, Value};
use std::collections::BTreeMap;

/// The slot of the reads of the instruction at program position `pos`.
pub fn read_slot(pos: usize) -> usize {
    4 * pos
}

/// The slot of the writes of the instruction at program position `pos`.
pub fn write_slot(pos: usize) -> usize {
    4 * pos + 2
}

/// The slot an operand of kind `kind` of the instruction at `pos` occupies
/// for interval lookups: reads at the read slot, writes (also `@inout`,
/// whose interval reaches the write slot) at the write slot.
pub fn operand_slot(pos: usize, kind: OperandKind) -> usize {
    match kind {
        OperandKind::In => read_slot(pos),
        OperandKind::Out | OperandKind::InOut => write_slot(pos),
    }
}

/// One live interval of a buffer: slots `begin..=end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    pub begin: usize,
    pub end: usize,
    /// No write changes the value inside the interval (no `@inout`, no
    /// partial write): it holds the value of the write that starts it.
    pub same_value: bool,
    /// The interval starts with a read: it holds a value from before the
    /// function (it then begins at slot 0).
    pub live_in: bool,
}

impl Interval {
    pub fn contains(&self, slot: usize) -> bool {
        self.begin <= slot && slot <= self.end
    }
    pub fn overlaps(&self, other: &Interval) -> bool {
        self.begin.max(other.begin) <= self.end.min(other.end)
    }
    /// Whether `other` lies inside `self`.
    pub fn encloses(&self, other: &Interval) -> bool {
        self.begin <= other.begin && other.end <= self.end
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, {}]", self.begin, self.end)
    }
}

/// The live intervals of every buffer origin of a function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LiveIntervals {
    /// Per origin, sorted by `begin`, pairwise disjoint.
    map: BTreeMap<Value, Vec<Interval>>,
    /// Number of instructions numbered (the program length).
    num_insts: usize,
}

impl LiveIntervals {
    /// Computes the intervals of `f` over its current program order.
    pub fn compute(f: &Function) -> LiveIntervals {
        let mut lv = LiveIntervals {
            map: BTreeMap::new(),
            num_insts: f.layout.len(),
        };
        for (pos, id) in f.layout.iter().enumerate() {
            let inst = f.inst(id);
            if matches!(
                inst.opcode,
                Opcode::AllocActivation | Opcode::DeallocActivation | Opcode::TensorView
            ) {
                continue;
            }
            let mut accesses: Vec<Access> = inst
                .operands
                .iter()
                .filter_map(|op| Access::of(f, op.value, op.kind))
                .collect();
            // `copy %x <- %x` (same origin, same offset) changes nothing:
            // a read, not a new value.
            if inst.opcode == Opcode::Copy && is_self_copy(f, &inst.operands) {
                accesses.iter_mut().for_each(|a| a.kind = OperandKind::In);
            }
            // Reads before writes, so `relu @out %a, @in %a` ends one
            // interval at the read slot and starts the next at the write slot.
            // An insert into an activation nothing wrote yet starts a run
            // of inserts that covers it (the verifier's rule): a write only.
            let fresh = (inst.opcode == Opcode::InsertTensor)
                .then(|| f.origin(inst.operands[0].value).0)
                .filter(|o| matches!(o, Value::Inst(_)) && lv.intervals(*o).is_empty());
            for a in accesses.iter().filter(|a| a.kind.reads()) {
                if Some(a.origin) != fresh || a.kind != OperandKind::InOut {
                    lv.read(a.origin, read_slot(pos), a.kind == OperandKind::InOut);
                }
            }
            for a in accesses.iter().filter(|a| a.kind.writes()) {
                lv.write(
                    a.origin,
                    write_slot(pos),
                    a.full && a.kind == OperandKind::Out,
                );
            }
        }
        let end = lv.end_slot();
        for (v, list) in lv.map.iter_mut() {
            if let (Value::Weight(_), Some(last)) = (v, list.last_mut()) {
                last.end = last.end.max(end);
            }
        }
        lv
    }

    /// The slot standing for "after the last instruction".
    pub fn end_slot(&self) -> usize {
        4 * self.num_insts
    }

    /// Number of instructions the numbering covers.
    pub fn num_insts(&self) -> usize {
        self.num_insts
    }

    /// Every origin with intervals, in a deterministic order.
    pub fn origins(&self) -> impl Iterator<Item = Value> + '_ {
        self.map.keys().copied()
    }

    /// The intervals of `origin`, sorted by `begin` (empty when unused).
    pub fn intervals(&self, origin: Value) -> &[Interval] {
        self.map.get(&origin).map(Vec::as_slice).unwrap_or(&[])
    }

    /// The index in `intervals(origin)` of the interval containing `slot`.
    pub fn index_at(&self, origin: Value, slot: usize) -> Option<usize> {
        self.intervals(origin).iter().position(|i| i.contains(slot))
    }

    /// The interval of `origin` containing `slot`.
    pub fn interval_at(&self, origin: Value, slot: usize) -> Option<&Interval> {
        self.intervals(origin).iter().find(|i| i.contains(slot))
    }

    /// Whether any interval of `origin` overlaps `interval`.
    pub fn overlaps_any(&self, origin: Value, interval: &Interval) -> bool {
        self.intervals(origin).iter().any(|i| i.overlaps(interval))
    }

    /// The first interval of `origin` overlapping `interval`.
    pub fn first_overlap(&self, origin: Value, interval: &Interval) -> Option<&Interval> {
        self.intervals(origin).iter().find(|i| i.overlaps(interval))
    }

    /// Whether `idx` is the last interval of `origin`.
    pub fn is_last(&self, origin: Value, idx: usize) -> bool {
        idx + 1 == self.intervals(origin).len()
    }

    /// Removes and returns interval `idx` of `origin`.
    pub fn take(&mut self, origin: Value, idx: usize) -> Option<Interval> {
        let list = self.map.get_mut(&origin)?;
        (idx < list.len()).then(|| list.remove(idx))
    }

    /// Adds `interval` to `origin`'s list: merged into an interval that
    /// encloses it or that it encloses, otherwise inserted in order.
    pub fn insert(&mut self, origin: Value, interval: Interval) {
        let list = self.map.entry(origin).or_default();
        if let Some(host) = list
            .iter_mut()
            .find(|i| i.encloses(&interval) || interval.encloses(i))
        {
            host.begin = host.begin.min(interval.begin);
            host.end = host.end.max(interval.end);
            host.same_value &= interval.same_value;
            return;
        }
        let at = list.partition_point(|i| i.begin < interval.begin);
        list.insert(at, interval);
    }

    /// Replaces interval `idx` of `origin` (for merges that keep it in place).
    pub fn set(&mut self, origin: Value, idx: usize, interval: Interval) {
        if let Some(slot) = self.map.get_mut(&origin).and_then(|l| l.get_mut(idx)) {
            *slot = interval;
        }
    }

    fn read(&mut self, origin: Value, slot: usize, inout: bool) {
        let list = self.map.entry(origin).or_default();
        match list.last_mut() {
            Some(cur) => {
                cur.end = cur.end.max(slot);
                cur.same_value &= !inout;
            }
            // Read before any write: the value comes from before the run.
            None => list.push(Interval {
                begin: 0,
                end: slot,
                same_value: !inout,
                live_in: true,
            }),
        }
    }

    /// A write at `slot`; `full` for an `@out` covering the whole origin.
    fn write(&mut self, origin: Value, slot: usize, full: bool) {
        let list = self.map.entry(origin).or_default();
        match list.last_mut() {
            // A second full write at the same slot changes nothing new,
            // but two writers make the value unknown.
            Some(cur) if cur.begin == slot => cur.same_value &= !full,
            Some(cur) if !full => {
                cur.end = cur.end.max(slot);
                cur.same_value = false;
            }
            // A partial write into a weight not accessed yet keeps the rest
            // of its input value: live-in, like a read.
            None if !full && matches!(origin, Value::Weight(_)) => list.push(Interval {
                begin: 0,
                end: slot,
                same_value: false,
                live_in: true,
            }),
            _ => list.push(Interval {
                begin: slot,
                end: slot,
                same_value: full,
                live_in: false,
            }),
        }
    }
}

/// Whether two operands name the same memory (origin and element offset).
fn is_self_copy(f: &Function, ops: &[glow_ir::Operand]) -> bool {
    match ops {
        [d, s] => f.origin(d.value) == f.origin(s.value),
        _ => false,
    }
}

/// One operand's effect on its origin buffer.
struct Access {
    origin: Value,
    kind: OperandKind,
    /// The operand covers the whole origin (same element count, offset 0).
    full: bool,
}

impl Access {
    fn of(f: &Function, v: Value, kind: OperandKind) -> Option<Access> {
        let (origin, offset) = f.origin(v);
        let origin_ty = match origin {
            Value::Weight(_) => f.value_type(origin)?,
            Value::Inst(i) if f.inst(i).opcode == Opcode::AllocActivation => {
                f.value_type(origin)?
            }
            // Not a buffer (malformed IR): no liveness.
            Value::Inst(_) => return None,
        };
        let ty = f.value_type(v)?;
        Some(Access {
            origin,
            kind,
            full: offset == 0 && ty.size() == origin_ty.size(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glow_ir::parser::parse;

    fn func(body: &str) -> Function {
        let text = format!(
            "function f\ndeclare {{\n  %in = WeightVar float<4> const\n  %out = WeightVar float<4> mutable\n}}\n\ncode {{\n{body}}}\n"
        );
        let mut m = parse(text.as_bytes()).expect("test input parses");
        m.functions.remove(0)
    }

    fn spans(lv: &LiveIntervals, f: &Function, name: &str) -> Vec<(usize, usize, bool, bool)> {
        let v = f.lookup(name).expect("name exists");
        lv.intervals(v)
            .iter()
            .map(|i| (i.begin, i.end, i.same_value, i.live_in))
            .collect()
    }

    #[test]
    fn full_writes_start_intervals_and_reads_extend_them() {
        let f = func(
            "  %a = allocactivation { Ty: float<4> }\n\
             %s = splat @out %a { Value: 1.0 }\n\
             %r = relu @out %a, @in %a\n\
             %c = copy @out %out, @in %a\n\
             %d = deallocactivation @out %a\n",
        );
        let lv = LiveIntervals::compute(&f);
        // splat at 1 writes slot 6; relu at 2 reads 8, writes 10; copy at 3 reads 12.
        assert_eq!(
            spans(&lv, &f, "a"),
            vec![(6, 8, true, false), (10, 12, true, false)]
        );
        // The last interval of a weight reaches the end (5 instructions: 20).
        assert_eq!(spans(&lv, &f, "out"), vec![(14, 20, true, false)]);
        // A weight read before any write is live-in from slot 0.
        assert!(spans(&lv, &f, "in").is_empty());
    }

    #[test]
    fn live_in_inout_and_partial_writes() {
        let f = func(
            "  %a = allocactivation { Ty: float<2 x 2> }\n\
             %v = tensorview @in %a { Ty: float<2>, Offsets: [1, 0] }\n\
             %w = tensorview @in %a { Ty: float<4>, Offsets: [0, 0] }\n\
             %s = splat @out %v { Value: 1.0 }\n\
             %t = splat @out %w { Value: 2.0 }\n\
             %r = relu @out %out, @in %in\n\
             %i = inserttensor @inout %a, @in %v { Offsets: [0, 0] }\n\
             %d = deallocactivation @out %a\n",
        );
        let lv = LiveIntervals::compute(&f);
        // Partial write at 3 starts a not-same-value interval; the full write
        // through the view at 4 starts a new one; the inout at 6 reads (24)
        // and writes (26).
        assert_eq!(
            spans(&lv, &f, "a"),
            vec![(14, 14, false, false), (18, 26, false, false)]
        );
        assert_eq!(spans(&lv, &f, "in"), vec![(0, 32, true, true)]);
        let a = f.lookup("a").unwrap();
        assert_eq!(lv.index_at(a, 20), Some(1));
        assert_eq!(lv.index_at(a, 16), None);
        assert!(lv.is_last(a, 1));
    }

    #[test]
    fn partial_write_into_an_untouched_weight_is_live_in() {
        let f = func(
            "  %v = tensorview @in %out { Ty: float<2>, Offsets: [2] }\n\
             %s = splat @out %v { Value: 1.0 }\n",
        );
        let lv = LiveIntervals::compute(&f);
        assert_eq!(spans(&lv, &f, "out"), vec![(0, 8, false, true)]);
    }

    #[test]
    fn overlap_and_insert() {
        let i = |b, e| Interval {
            begin: b,
            end: e,
            same_value: true,
            live_in: false,
        };
        assert!(i(2, 8).overlaps(&i(8, 12)));
        assert!(!i(2, 8).overlaps(&i(10, 12)));
        assert!(i(0, 20).encloses(&i(6, 12)));
        let mut lv = LiveIntervals::default();
        let v = Value::Weight(glow_ir::WeightId(0));
        lv.insert(v, i(10, 12));
        lv.insert(v, i(2, 4));
        lv.insert(v, i(10, 11));
        assert_eq!(lv.intervals(v), &[i(2, 4), i(10, 12)]);
        assert!(lv.overlaps_any(v, &i(4, 6)));
        assert_eq!(lv.take(v, 0), Some(i(2, 4)));
        assert_eq!(lv.interval_at(v, 11), Some(&i(10, 12)));
    }
}
