//! The placement core shared by every heuristic: aligned sizes, the
//! conflict graph (buffers whose lifetimes overlap), placement orders and
//! best-fit / lowest-fit placement of one buffer among placed neighbours.

use super::{align_up, Buffer};
use std::cmp::Reverse;

/// Sentinel for "not placed yet".
pub const UNPLACED: u64 = u64::MAX;

/// Buffers with aligned sizes and their conflict graph in CSR form.
pub struct Problem {
    pub bufs: Vec<Buffer>,
    sizes: Vec<u64>,
    adj_start: Vec<u32>,
    adj: Vec<u32>,
}

impl Problem {
    pub fn new(bufs: &[Buffer], align: u64) -> Problem {
        let sizes: Vec<u64> = bufs.iter().map(|b| align_up(b.size, align)).collect();
        let n = bufs.len();
        let mut by_first: Vec<u32> = (0..n as u32).collect();
        by_first.sort_by_key(|&i| (bufs[i as usize].first, i));
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
        let mut active: Vec<u32> = Vec::new();
        for &i in &by_first {
            let b = bufs[i as usize];
            active.retain(|&j| bufs[j as usize].last >= b.first);
            for &j in &active {
                lists[i as usize].push(j);
                lists[j as usize].push(i);
            }
            active.push(i);
        }
        let mut adj_start = Vec::with_capacity(n + 1);
        let mut adj = Vec::new();
        adj_start.push(0);
        for mut l in lists {
            l.sort_unstable();
            adj.extend_from_slice(&l);
            adj_start.push(adj.len() as u32);
        }
        Problem {
            bufs: bufs.to_vec(),
            sizes,
            adj_start,
            adj,
        }
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
    pub fn neighbours(&self, i: usize) -> &[u32] {
        &self.adj[self.adj_start[i] as usize..self.adj_start[i + 1] as usize]
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
        for &j in self.neighbours(i) {
            let o = offsets[j as usize];
            if o != UNPLACED && self.sizes[j as usize] > 0 {
                scratch.push((o, o.saturating_add(self.sizes[j as usize])));
            }
        }
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
