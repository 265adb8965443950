//! C: max-live-first placement (Glow's `allocateAll`). Repeatedly take the
//! instruction with the largest live size still unplaced, and place its
//! largest (or, as a variant, longest-lived) unplaced buffer at the lowest
//! offset that clears every placed buffer it conflicts with.
//!
//! Times are compressed to the distinct buffer starts (the live set only
//! grows there); a lazy segment tree keeps the unplaced live size per time.
//! Each buffer is listed at the `O(log t)` canonical nodes of its time range
//! (not at every time it covers, which is quadratic memory when many
//! buffers live together); the best unplaced buffer live at a time is the
//! best head among the lists on that time's root-to-leaf path. So the
//! placement is `O(n log n + conflicts)` time and `O(n log n)` memory.

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
    let leaves = t.next_power_of_two().max(1);
    // Buffers by canonical segment-tree node of their time range.
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); 2 * leaves];
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
        canonical(leaves, k0, k1 + 1, |v| lists[v].push(i as u32));
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
    for l in &mut lists {
        l.sort_by_key(|&i| key(i));
    }
    let mut cursor = vec![0usize; 2 * leaves];
    let mut scratch = Vec::new();
    loop {
        let (peak, k) = tree.max();
        if peak <= 0 {
            break;
        }
        // The best unplaced buffer live at time `k`.
        let mut best: Option<u32> = None;
        let mut v = leaves + k;
        while v >= 1 {
            let l = &lists[v];
            while cursor[v] < l.len() && offsets[l[cursor[v]] as usize] != UNPLACED {
                cursor[v] += 1;
            }
            if let Some(&i) = l.get(cursor[v]) {
                if best.is_none_or(|b| key(i) < key(b)) {
                    best = Some(i);
                }
            }
            v /= 2;
        }
        let Some(i) = best else { break };
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

/// Calls `f` with the canonical nodes of positions `lo..hi` in a bottom-up
/// segment tree with `leaves` leaves (node 1 is the root).
fn canonical(leaves: usize, lo: usize, hi: usize, mut f: impl FnMut(usize)) {
    let (mut l, mut r) = (lo + leaves, hi + leaves);
    while l < r {
        if l & 1 == 1 {
            f(l);
            l += 1;
        }
        if r & 1 == 1 {
            r -= 1;
            f(r);
        }
        l /= 2;
        r /= 2;
    }
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
