//! Program order of a function's instructions: a doubly linked list over
//! `InstId` (as Cranelift's `Layout`), so inserting before or after an
//! instruction and removing one are O(1), and iterating in order follows
//! `next` links through one dense table.
//!
//! Every instruction in the list carries a sequence number that grows in
//! program order, so "does `a` come before `b`" is O(1) too. Inserting
//! between two numbers that leave no gap renumbers a few successors, and
//! the whole list only when that local renumbering runs too far.

use crate::function::InstId;
use std::cmp::Ordering;

const NONE: u32 = u32::MAX;
/// The gap between sequence numbers after appending or renumbering.
const STRIDE: u64 = 1 << 16;
/// Successors a local renumbering may touch before renumbering all.
const LOCAL_LIMIT: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    prev: u32,
    next: u32,
    /// 0 while the instruction is not in the list.
    seq: u64,
}

const EMPTY: Node = Node {
    prev: NONE,
    next: NONE,
    seq: 0,
};

/// The program order: which instructions are in the function, in order.
#[derive(Clone, Debug)]
pub struct Layout {
    /// Indexed by instruction id; grows on demand.
    nodes: Vec<Node>,
    first: u32,
    last: u32,
    len: usize,
}

fn opt(x: u32) -> Option<InstId> {
    (x != NONE).then_some(InstId(x))
}

impl Layout {
    pub fn new() -> Layout {
        Layout {
            nodes: Vec::new(),
            first: NONE,
            last: NONE,
            len: 0,
        }
    }

    /// A layout holding `order`, in that order.
    pub fn from_order(order: impl IntoIterator<Item = InstId>) -> Layout {
        let mut l = Layout::new();
        for i in order {
            l.append(i);
        }
        l
    }

    /// Replaces the whole order (for passes that compute a new order at once).
    pub fn set_order(&mut self, order: impl IntoIterator<Item = InstId>) {
        self.clear();
        for i in order {
            self.append(i);
        }
    }

    /// Room for instruction ids below `ids` without reallocating.
    pub fn reserve(&mut self, ids: usize) {
        self.nodes.reserve(ids.saturating_sub(self.nodes.len()));
    }

    /// Removes every instruction.
    pub fn clear(&mut self) {
        self.nodes.clear();
        self.first = NONE;
        self.last = NONE;
        self.len = 0;
    }

    /// Number of instructions in the order.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn contains(&self, i: InstId) -> bool {
        self.nodes.get(i.index()).is_some_and(|n| n.seq != 0)
    }

    pub fn first(&self) -> Option<InstId> {
        opt(self.first)
    }

    pub fn last(&self) -> Option<InstId> {
        opt(self.last)
    }

    /// The instruction after `i` (`None` at the end or if `i` is not placed).
    pub fn next(&self, i: InstId) -> Option<InstId> {
        self.nodes.get(i.index()).and_then(|n| opt(n.next))
    }

    /// The instruction before `i`.
    pub fn prev(&self, i: InstId) -> Option<InstId> {
        self.nodes.get(i.index()).and_then(|n| opt(n.prev))
    }

    /// Instructions in program order (reversible).
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            layout: self,
            front: self.first,
            back: self.last,
            remaining: self.len,
        }
    }

    /// The order as a vector, for position-indexed work.
    pub fn to_vec(&self) -> Vec<InstId> {
        self.iter().collect()
    }

    /// Program order of two placed instructions, in O(1).
    pub fn cmp(&self, a: InstId, b: InstId) -> Ordering {
        self.seq(a).cmp(&self.seq(b))
    }

    /// Whether `a` comes strictly before `b` (both placed).
    pub fn precedes(&self, a: InstId, b: InstId) -> bool {
        self.cmp(a, b) == Ordering::Less
    }

    fn seq(&self, i: InstId) -> u64 {
        let s = self.nodes.get(i.index()).map_or(0, |n| n.seq);
        assert!(s != 0, "instruction #{} is not in the layout", i.0);
        s
    }

    fn slot(&mut self, i: InstId) -> &mut Node {
        let k = i.index();
        if k >= self.nodes.len() {
            self.nodes.resize(k + 1, EMPTY);
        }
        assert!(
            self.nodes[k].seq == 0,
            "instruction #{} is already in the layout",
            i.0
        );
        &mut self.nodes[k]
    }

    /// Places `i` at the end.
    pub fn append(&mut self, i: InstId) {
        let last = self.last;
        let seq = match opt(last) {
            Some(l) => self.nodes[l.index()].seq + STRIDE,
            None => STRIDE,
        };
        *self.slot(i) = Node {
            prev: last,
            next: NONE,
            seq,
        };
        match opt(last) {
            Some(l) => self.nodes[l.index()].next = i.0,
            None => self.first = i.0,
        }
        self.last = i.0;
        self.len += 1;
    }

    /// Places `i` right before the placed instruction `before`.
    pub fn insert_before(&mut self, i: InstId, before: InstId) {
        assert!(self.contains(before), "anchor is not in the layout");
        let prev = self.nodes[before.index()].prev;
        *self.slot(i) = Node {
            prev,
            next: before.0,
            seq: 0,
        };
        self.nodes[before.index()].prev = i.0;
        match opt(prev) {
            Some(p) => self.nodes[p.index()].next = i.0,
            None => self.first = i.0,
        }
        self.len += 1;
        self.number(i);
    }

    /// Places `i` right after the placed instruction `after`.
    pub fn insert_after(&mut self, i: InstId, after: InstId) {
        match self.next(after) {
            Some(n) => self.insert_before(i, n),
            None => {
                assert!(self.contains(after), "anchor is not in the layout");
                self.append(i)
            }
        }
    }

    /// Takes `i` out of the order (its id stays valid in the tables).
    pub fn remove(&mut self, i: InstId) {
        assert!(
            self.contains(i),
            "instruction #{} is not in the layout",
            i.0
        );
        let Node { prev, next, .. } = self.nodes[i.index()];
        match opt(prev) {
            Some(p) => self.nodes[p.index()].next = next,
            None => self.first = next,
        }
        match opt(next) {
            Some(n) => self.nodes[n.index()].prev = prev,
            None => self.last = prev,
        }
        self.nodes[i.index()] = EMPTY;
        self.len -= 1;
    }

    /// Gives the freshly linked `i` a number between its neighbours'.
    fn number(&mut self, i: InstId) {
        let n = self.nodes[i.index()];
        let lo = opt(n.prev).map_or(0, |p| self.nodes[p.index()].seq);
        let hi = opt(n.next).map_or(lo + 2 * STRIDE, |x| self.nodes[x.index()].seq);
        if hi - lo >= 2 {
            self.nodes[i.index()].seq = lo + (hi - lo) / 2;
            return;
        }
        // No gap: push successors up until one already lies above.
        let mut seq = lo + STRIDE / 64;
        self.nodes[i.index()].seq = seq;
        let mut cur = n.next;
        for _ in 0..LOCAL_LIMIT {
            if cur == NONE || self.nodes[cur as usize].seq > seq {
                return;
            }
            seq += STRIDE / 64;
            self.nodes[cur as usize].seq = seq;
            cur = self.nodes[cur as usize].next;
        }
        if cur != NONE && self.nodes[cur as usize].seq <= seq {
            self.renumber();
        }
    }

    fn renumber(&mut self) {
        let mut seq = 0;
        let mut cur = self.first;
        while cur != NONE {
            seq += STRIDE;
            self.nodes[cur as usize].seq = seq;
            cur = self.nodes[cur as usize].next;
        }
    }
}

impl Default for Layout {
    fn default() -> Layout {
        Layout::new()
    }
}

impl PartialEq for Layout {
    /// Same instructions in the same order (sequence numbers aside).
    fn eq(&self, other: &Layout) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<'a> IntoIterator for &'a Layout {
    type Item = InstId;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Instructions in program order; see [`Layout::iter`].
#[derive(Clone)]
pub struct Iter<'a> {
    layout: &'a Layout,
    front: u32,
    back: u32,
    remaining: usize,
}

impl Iterator for Iter<'_> {
    type Item = InstId;
    fn next(&mut self) -> Option<InstId> {
        if self.remaining == 0 {
            return None;
        }
        let i = self.front;
        self.front = self.layout.nodes[i as usize].next;
        self.remaining -= 1;
        Some(InstId(i))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<InstId> {
        if self.remaining == 0 {
            return None;
        }
        let i = self.back;
        self.back = self.layout.nodes[i as usize].prev;
        self.remaining -= 1;
        Some(InstId(i))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(l: &Layout) -> Vec<u32> {
        l.iter().map(|i| i.0).collect()
    }

    /// The order and the sequence numbers agree, forwards and backwards.
    fn check(l: &Layout) {
        let fwd = l.to_vec();
        let mut back: Vec<InstId> = l.iter().rev().collect();
        back.reverse();
        assert_eq!(fwd, back);
        assert_eq!(fwd.len(), l.len());
        for w in fwd.windows(2) {
            assert!(l.precedes(w[0], w[1]), "{:?} before {:?}", w[0], w[1]);
            assert_eq!(l.next(w[0]), Some(w[1]));
            assert_eq!(l.prev(w[1]), Some(w[0]));
        }
        assert_eq!(l.first(), fwd.first().copied());
        assert_eq!(l.last(), fwd.last().copied());
    }

    #[test]
    fn append_insert_remove() {
        let mut l = Layout::from_order([InstId(0), InstId(1), InstId(2)]);
        l.insert_before(InstId(3), InstId(0));
        l.insert_after(InstId(4), InstId(2));
        l.insert_after(InstId(5), InstId(0));
        assert_eq!(ids(&l), [3, 0, 5, 1, 2, 4]);
        check(&l);
        l.remove(InstId(3));
        l.remove(InstId(4));
        l.remove(InstId(1));
        assert_eq!(ids(&l), [0, 5, 2]);
        assert!(!l.contains(InstId(1)));
        check(&l);
        // A removed instruction can be placed again.
        l.insert_before(InstId(1), InstId(0));
        assert_eq!(ids(&l), [1, 0, 5, 2]);
        check(&l);
        assert_eq!(
            l.iter().rev().map(|i| i.0).collect::<Vec<_>>(),
            [2, 5, 0, 1]
        );
    }

    #[test]
    fn remove_everything_then_refill() {
        let mut l = Layout::from_order((0..4).map(InstId));
        for i in 0..4 {
            l.remove(InstId(i));
        }
        assert!(l.is_empty());
        assert_eq!(l.first(), None);
        l.append(InstId(2));
        assert_eq!(ids(&l), [2]);
        check(&l);
    }

    #[test]
    #[should_panic(expected = "already in the layout")]
    fn placing_twice_panics() {
        let mut l = Layout::from_order([InstId(0), InstId(1)]);
        l.insert_before(InstId(1), InstId(0));
    }

    #[test]
    fn crowded_insertions_renumber_and_keep_order() {
        // Always inserting right after the same instruction halves one gap
        // until it closes, which forces local and then full renumbering.
        let mut l = Layout::from_order([InstId(0), InstId(1)]);
        let mut model = vec![0u32, 1];
        for k in 2..400u32 {
            l.insert_after(InstId(k), InstId(0));
            model.insert(1, k);
        }
        assert_eq!(ids(&l), model);
        check(&l);
        // And before the first, repeatedly.
        for k in 400..500u32 {
            let first = l.first().unwrap();
            l.insert_before(InstId(k), first);
            model.insert(0, k);
        }
        assert_eq!(ids(&l), model);
        check(&l);
    }

    #[test]
    fn random_edits_match_a_vector() {
        // A fixed linear congruential sequence: the test is deterministic.
        let mut state = 12345u64;
        let mut rand = |n: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            (state >> 33) as usize % n
        };
        let mut l = Layout::new();
        let mut model: Vec<u32> = Vec::new();
        let mut next_id = 0u32;
        for _ in 0..3000 {
            match if model.is_empty() { 0 } else { rand(4) } {
                0 => {
                    l.append(InstId(next_id));
                    model.push(next_id);
                    next_id += 1;
                }
                1 => {
                    let p = rand(model.len());
                    l.insert_before(InstId(next_id), InstId(model[p]));
                    model.insert(p, next_id);
                    next_id += 1;
                }
                2 => {
                    let p = rand(model.len());
                    l.insert_after(InstId(next_id), InstId(model[p]));
                    model.insert(p + 1, next_id);
                    next_id += 1;
                }
                _ => {
                    let p = rand(model.len());
                    l.remove(InstId(model.remove(p)));
                }
            }
        }
        assert_eq!(ids(&l), model);
        check(&l);
    }

    #[test]
    fn equality_ignores_numbering() {
        let a = Layout::from_order([InstId(0), InstId(1), InstId(2)]);
        let mut b = Layout::from_order([InstId(0), InstId(2)]);
        b.insert_before(InstId(1), InstId(2));
        assert_eq!(a, b);
        b.remove(InstId(1));
        assert_ne!(a, b);
    }
}
