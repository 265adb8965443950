//! C: max-live-first placement (Glow's `allocateAll`). Repeatedly take the
//! instruction with the largest live size still unplaced, and place its
//! largest (or, as a variant, longest-lived) unplaced buffer at the lowest
//! offset that clears every placed buffer it conflicts with.
//!
//! Times are compressed to the distinct buffer starts (the live set only
//! grows there); a lazy segment tree keeps the unplaced live size per time,
//! so the whole placement is `O(n log n + coverage + conflicts)`.

use super::place::{Problem, UNPLACED};

/// Offsets from max-live-first placement; `by_lifetime` picks the
/// longest-lived buffer at the peak instead of the largest.
pub fn place(p: &Problem, by_lifetime: bool) -> Vec<u64> {
    let n = p.len();
    let mut offsets = vec![UNPLACED; n];
    let mut times: Vec<u32> = p.bufs.iter().map(|b| b.first).collect();
    times.sort_unstable();
    times.dedup();
    let t = times.len();
    // Buffers live at each compressed time, best candidate first.
    let mut live: Vec<Vec<u32>> = vec![Vec::new(); t];
    let mut range = vec![(0usize, 0usize); n];
    let mut tree = MaxTree::new(t);
    for (i, b) in p.bufs.iter().enumerate() {
        if p.size(i) == 0 {
            offsets[i] = 0;
            continue;
        }
        let k0 = times.partition_point(|&x| x < b.first);
        let k1 = times.partition_point(|&x| x <= b.last) - 1;
        range[i] = (k0, k1);
        for l in &mut live[k0..=k1] {
            l.push(i as u32);
        }
        tree.add(k0, k1, p.size(i) as i128);
    }
    let key = |i: u32| {
        let (b, s) = (p.bufs[i as usize], p.size(i as usize));
        let span = b.last - b.first;
        if by_lifetime {
            (std::cmp::Reverse(span as u64), std::cmp::Reverse(s), i)
        } else {
            (std::cmp::Reverse(s), std::cmp::Reverse(span as u64), i)
        }
    };
    for l in &mut live {
        l.sort_by_key(|&i| key(i));
    }
    let mut cursor = vec![0usize; t];
    let mut scratch = Vec::new();
    loop {
        let (peak, k) = tree.max();
        if peak <= 0 {
            break;
        }
        let l = &live[k];
        while cursor[k] < l.len() && offsets[l[cursor[k]] as usize] != UNPLACED {
            cursor[k] += 1;
        }
        let Some(&i) = l.get(cursor[k]) else { break };
        let i = i as usize;
        offsets[i] = p.fit(i, &offsets, false, &mut scratch);
        let (k0, k1) = range[i];
        tree.add(k0, k1, -(p.size(i) as i128));
    }
    // Defensive: anything left (cannot happen while sums are exact) goes
    // through lowest-fit so the result is always complete and valid.
    for i in 0..n {
        if offsets[i] == UNPLACED {
            offsets[i] = p.fit(i, &offsets, false, &mut scratch);
        }
    }
    offsets
}

/// Range add, global max with its lowest index.
struct MaxTree {
    n: usize,
    max: Vec<i128>,
    arg: Vec<usize>,
    lazy: Vec<i128>,
}

impl MaxTree {
    fn new(n: usize) -> MaxTree {
        let size = 4 * n.max(1);
        let mut t = MaxTree {
            n: n.max(1),
            max: vec![0; size],
            arg: vec![0; size],
            lazy: vec![0; size],
        };
        t.build(1, 0, t.n - 1);
        t
    }

    fn build(&mut self, node: usize, lo: usize, hi: usize) {
        self.arg[node] = lo;
        if lo < hi {
            let mid = (lo + hi) / 2;
            self.build(2 * node, lo, mid);
            self.build(2 * node + 1, mid + 1, hi);
        }
    }

    fn max(&self) -> (i128, usize) {
        (self.max[1], self.arg[1])
    }

    fn add(&mut self, l: usize, r: usize, v: i128) {
        self.add_in(1, 0, self.n - 1, l, r, v);
    }

    fn add_in(&mut self, node: usize, lo: usize, hi: usize, l: usize, r: usize, v: i128) {
        if r < lo || hi < l {
            return;
        }
        if l <= lo && hi <= r {
            self.max[node] += v;
            self.lazy[node] += v;
            return;
        }
        let mid = (lo + hi) / 2;
        self.add_in(2 * node, lo, mid, l, r, v);
        self.add_in(2 * node + 1, mid + 1, hi, l, r, v);
        let (a, b) = (2 * node, 2 * node + 1);
        // Ties go to the earlier instruction.
        let (m, g) = if self.max[a] >= self.max[b] {
            (self.max[a], self.arg[a])
        } else {
            (self.max[b], self.arg[b])
        };
        self.max[node] = m + self.lazy[node];
        self.arg[node] = g;
    }
}
