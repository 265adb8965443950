//! The placement core shared by every heuristic: aligned sizes, the
//! conflict graph (buffers whose lifetimes overlap), placement orders and
//! best-fit / lowest-fit placement of one buffer among placed neighbours.

use super::{align_up, Buffer};
use std::cmp::Reverse;

/// Sentinel for "not placed yet".
pub const UNPLACED: u64 = u64::MAX;

/// Buffers with aligned sizes and an index of their lifetimes. The
/// conflict graph (buffers whose lifetimes overlap) is not stored: it can be
/// quadratic (50,000 buffers live together have 1.25e9 conflicts), so
/// neighbours are enumerated from the index, in `O(n)` memory.
pub struct Problem {
    pub bufs: Vec<Buffer>,
    sizes: Vec<u64>,
    /// Buffer indices by (first, index).
    by_first: Vec<u32>,
    /// `first` of `by_first[k]`.
    firsts: Vec<u32>,
    /// Segment tree (leaves from `leaves`) of the largest `last` over
    /// positions of `by_first`.
    max_last: Vec<u32>,
    leaves: usize,
}

impl Problem {
    pub fn new(bufs: &[Buffer], align: u64) -> Problem {
        let sizes: Vec<u64> = bufs.iter().map(|b| align_up(b.size, align)).collect();
        let n = bufs.len();
        let mut by_first: Vec<u32> = (0..n as u32).collect();
        by_first.sort_by_key(|&i| (bufs[i as usize].first, i));
        let firsts: Vec<u32> = by_first.iter().map(|&i| bufs[i as usize].first).collect();
        let leaves = n.next_power_of_two().max(1);
        let mut max_last = vec![0u32; 2 * leaves];
        for (k, &i) in by_first.iter().enumerate() {
            max_last[leaves + k] = bufs[i as usize].last;
        }
        for v in (1..leaves).rev() {
            max_last[v] = max_last[2 * v].max(max_last[2 * v + 1]);
        }
        Problem {
            bufs: bufs.to_vec(),
            sizes,
            by_first,
            firsts,
            max_last,
            leaves,
        }
    }

    /// Calls `f` with every buffer whose lifetime overlaps `i`'s (not `i`),
    /// in order of start: `O((k + 1) log n)` for `k` neighbours.
    pub fn each_neighbour(&self, i: usize, mut f: impl FnMut(usize)) {
        let b = self.bufs[i];
        // Candidates start no later than `b.last`; of those, the ones that
        // end no earlier than `b.first` overlap.
        let k = self.firsts.partition_point(|&x| x <= b.last);
        if k == 0 {
            return;
        }
        self.visit(1, 0, self.leaves, k, b.first, i, &mut f);
    }

    #[allow(clippy::too_many_arguments)]
    fn visit(
        &self,
        v: usize,
        lo: usize,
        hi: usize,
        k: usize,
        first: u32,
        i: usize,
        f: &mut impl FnMut(usize),
    ) {
        if lo >= k || self.max_last[v] < first {
            return;
        }
        if hi - lo == 1 {
            let j = self.by_first[lo] as usize;
            if j != i {
                f(j);
            }
            return;
        }
        let mid = (lo + hi) / 2;
        self.visit(2 * v, lo, mid, k, first, i, f);
        self.visit(2 * v + 1, mid, hi, k, first, i, f);
    }

    pub fn len(&self) -> usize {
        self.bufs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// Aligned size of buffer `i`.
    pub fn size(&self, i: usize) -> u64 {
        self.sizes[i]
    }

    /// Buffers whose lifetimes overlap `i`'s, ascending.
    pub fn neighbours(&self, i: usize) -> Vec<u32> {
        let mut v = Vec::new();
        self.each_neighbour(i, |j| v.push(j as u32));
        v.sort_unstable();
        v
    }

    fn span(&self, i: usize) -> u32 {
        self.bufs[i].last - self.bufs[i].first
    }

    /// B's order: size desc, then longer lifetime, earlier start, index.
    pub fn order_by_size(&self) -> Vec<u32> {
        let mut o: Vec<u32> = (0..self.len() as u32).collect();
        o.sort_by_key(|&i| {
            let i = i as usize;
            (
                Reverse(self.sizes[i]),
                Reverse(self.span(i)),
                self.bufs[i].first,
                i,
            )
        });
        o
    }

    /// B' (XLA temporal): lifetime desc, then size desc, start, index.
    pub fn order_by_lifetime(&self) -> Vec<u32> {
        let mut o: Vec<u32> = (0..self.len() as u32).collect();
        o.sort_by_key(|&i| {
            let i = i as usize;
            (
                Reverse(self.span(i)),
                Reverse(self.sizes[i]),
                self.bufs[i].first,
                i,
            )
        });
        o
    }

    /// Arena of a complete placement: max of offset + size.
    pub fn arena(&self, offsets: &[u64]) -> u64 {
        offsets
            .iter()
            .zip(&self.sizes)
            .filter(|(&o, _)| o != UNPLACED)
            .map(|(&o, &s)| o.saturating_add(s))
            .max()
            .unwrap_or(0)
    }

    /// Places every buffer in `order`, each in the smallest gap among its
    /// placed neighbours that fits it (lowest such gap on ties), else on top.
    pub fn place_best_fit(&self, order: &[u32]) -> Vec<u64> {
        let mut offsets = vec![UNPLACED; self.len()];
        let mut scratch = Vec::new();
        for &i in order {
            offsets[i as usize] = self.fit(i as usize, &offsets, true, &mut scratch);
        }
        offsets
    }

    /// The offset for `i` among the placed neighbours: best fit when
    /// `best`, otherwise the lowest offset that fits.
    pub fn fit(&self, i: usize, offsets: &[u64], best: bool, scratch: &mut Vec<(u64, u64)>) -> u64 {
        let size = self.sizes[i];
        if size == 0 {
            return 0;
        }
        scratch.clear();
        self.each_neighbour(i, |j| {
            let o = offsets[j];
            if o != UNPLACED && self.sizes[j] > 0 {
                scratch.push((o, o.saturating_add(self.sizes[j])));
            }
        });
        scratch.sort_unstable();
        let mut cur = 0u64;
        let mut chosen: Option<(u64, u64)> = None; // (gap, offset)
        for &(lo, hi) in scratch.iter() {
            if lo > cur {
                let gap = lo - cur;
                if gap >= size {
                    if !best {
                        return cur;
                    }
                    if chosen.is_none_or(|(g, _)| gap < g) {
                        chosen = Some((gap, cur));
                    }
                }
            }
            cur = cur.max(hi);
        }
        chosen.map_or(cur, |(_, o)| o)
    }
}
