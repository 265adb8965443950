//! Offset planning for one activation arena (crate `glow-planner`, used by
//! the `plan-memory` pass and by the backend for unplanned functions).
//!
//! Input: buffers as `(size, first, last)` with closed lifetimes over
//! instruction indices. Output: a byte offset per buffer and the arena size,
//! such that two buffers whose lifetimes overlap never share a byte, every
//! offset is a multiple of the alignment, and the arena is never below the
//! max-live lower bound (`bound::lower_bound`).
//!
//! `plan` runs the heuristics of `docs/memory.md` as best-of and
//! stops as soon as one reaches the bound: greedy-by-size best-fit (B),
//! greedy by lifetime (B'), max-live-first by size and by lifetime (C), then
//! a deterministic order search (D) seeded from the best greedy order.
//! Everything is deterministic: no clocks, no hash-map order.

pub mod arena;
pub mod bound;
pub mod maxlive;
pub mod place;
pub mod search;
pub mod trace;

#[cfg(test)]
mod tests;

pub use bound::{align_up, lower_bound};

/// One buffer to place: `size` bytes live over instructions `first..=last`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub size: u64,
    pub first: u32,
    pub last: u32,
}

impl Buffer {
    pub fn new(size: u64, first: u32, last: u32) -> Buffer {
        // A reversed interval is treated as the interval it spans.
        Buffer {
            size,
            first: first.min(last),
            last: first.max(last),
        }
    }

    /// Whether the two lifetimes share an instruction.
    pub fn overlaps_in_time(&self, o: &Buffer) -> bool {
        self.first <= o.last && o.first <= self.last
    }
}

/// Planner settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlanOptions {
    /// Offsets are multiples of this and sizes are rounded up to it; 0 and 1
    /// both mean "no alignment".
    pub align: u64,
    /// Number of candidate orders the search (D) may try.
    pub search_budget: u32,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions {
            align: glow_ir::ALIGN,
            search_budget: 4000,
        }
    }
}

/// The heuristic that produced a plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Nothing to place.
    Empty,
    /// B: size descending, best fit.
    GreedyBySize,
    /// B': lifetime descending, best fit.
    GreedyByLifetime,
    /// C: max-live first, largest buffer first.
    MaxLiveSize,
    /// C: max-live first, longest-lived buffer first.
    MaxLiveLifetime,
    /// D: order search from B.
    OrderSearch,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Empty => "empty",
            Algorithm::GreedyBySize => "greedy-by-size",
            Algorithm::GreedyByLifetime => "greedy-by-lifetime",
            Algorithm::MaxLiveSize => "max-live-size",
            Algorithm::MaxLiveLifetime => "max-live-lifetime",
            Algorithm::OrderSearch => "order-search",
        }
    }
}

/// A placement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Byte offset of each input buffer, in input order.
    pub offsets: Vec<u64>,
    /// Bytes the arena needs: max of offset + aligned size.
    pub arena: u64,
    /// The max-live bound with aligned sizes.
    pub lower_bound: u64,
    pub algorithm: Algorithm,
}

impl Plan {
    /// `arena / lower_bound` (1.0 when both are zero).
    pub fn ratio(&self) -> f64 {
        if self.lower_bound == 0 {
            1.0
        } else {
            self.arena as f64 / self.lower_bound as f64
        }
    }
}

/// Checks that every aligned size and their sum (what any plan's arena is
/// at most) fit in 64 bits, so no offset can wrap or saturate; the error
/// names the first buffer past it, or the total.
pub fn check_sizes(bufs: &[Buffer], align: u64) -> Result<(), String> {
    let mut total: u128 = 0;
    for (i, b) in bufs.iter().enumerate() {
        let aligned = match b.size % align.max(1) {
            0 => Some(b.size),
            r => b.size.checked_add(align - r),
        };
        let Some(aligned) = aligned else {
            return Err(format!(
                "buffer {i}: {} bytes aligned to {align} do not fit in 64 bits",
                b.size
            ));
        };
        total += aligned as u128;
    }
    if total > u64::MAX as u128 {
        return Err(format!(
            "the buffers need {total} bytes aligned to {align}, more than 2^64: offsets would overflow"
        ));
    }
    Ok(())
}

/// `plan` after `check_sizes`: an error instead of a saturated arena.
pub fn try_plan(bufs: &[Buffer], opts: &PlanOptions) -> Result<Plan, String> {
    check_sizes(bufs, opts.align)?;
    Ok(plan(bufs, opts))
}

/// Plans `bufs`: best of B, B', C (two variants) and D, stopping early at
/// the lower bound. Sizes past 64 bits saturate; see `try_plan`.
pub fn plan(bufs: &[Buffer], opts: &PlanOptions) -> Plan {
    let lb = lower_bound(bufs, opts.align);
    if bufs.is_empty() {
        return Plan {
            offsets: Vec::new(),
            arena: 0,
            lower_bound: 0,
            algorithm: Algorithm::Empty,
        };
    }
    let p = place::Problem::new(bufs, opts.align);
    let mut best: Option<(Vec<u64>, u64, Algorithm)> = None;
    let take =
        |offsets: Vec<u64>, alg: Algorithm, best: &mut Option<(Vec<u64>, u64, Algorithm)>| {
            let arena = p.arena(&offsets);
            if best.as_ref().is_none_or(|b| arena < b.1) {
                *best = Some((offsets, arena, alg));
            }
            arena <= lb
        };
    let size_order = p.order_by_size();
    let candidates: [(&dyn Fn() -> Vec<u64>, Algorithm); 4] = [
        (&|| p.place_best_fit(&size_order), Algorithm::GreedyBySize),
        (
            &|| p.place_best_fit(&p.order_by_lifetime()),
            Algorithm::GreedyByLifetime,
        ),
        (&|| maxlive::place(&p, false), Algorithm::MaxLiveSize),
        (&|| maxlive::place(&p, true), Algorithm::MaxLiveLifetime),
    ];
    for (run, alg) in candidates {
        if take(run(), alg, &mut best) {
            return finish(best, lb);
        }
    }
    let incumbent = best.as_ref().map_or(u64::MAX, |b| b.1);
    if let Some(offs) = search::search(&p, &size_order, lb, incumbent, opts.search_budget) {
        take(offs, Algorithm::OrderSearch, &mut best);
    }
    finish(best, lb)
}

fn finish(best: Option<(Vec<u64>, u64, Algorithm)>, lb: u64) -> Plan {
    let (offsets, arena, algorithm) = best.unwrap_or((Vec::new(), 0, Algorithm::Empty));
    Plan {
        offsets,
        arena,
        lower_bound: lb,
        algorithm,
    }
}

/// Checks a plan against its buffers: returns the first problem found
/// (misaligned offset, or two buffers overlapping in time and bytes), or
/// `None`. Used by tests and tools; `O(n log n + conflicts)`.
pub fn check(bufs: &[Buffer], offsets: &[u64], align: u64) -> Option<String> {
    if bufs.len() != offsets.len() {
        return Some(format!(
            "{} buffers but {} offsets",
            bufs.len(),
            offsets.len()
        ));
    }
    let a = align.max(1);
    for (i, &o) in offsets.iter().enumerate() {
        if o % a != 0 {
            return Some(format!("buffer {i}: offset {o} is not a multiple of {a}"));
        }
    }
    let p = place::Problem::new(bufs, align);
    for i in 0..bufs.len() {
        for j in p.neighbours(i) {
            let j = j as usize;
            if j <= i || p.size(i) == 0 || p.size(j) == 0 {
                continue;
            }
            let (oi, oj) = (offsets[i], offsets[j]);
            if oi < oj.saturating_add(p.size(j)) && oj < oi.saturating_add(p.size(i)) {
                return Some(format!(
                    "buffers {i} and {j} are live together and overlap in bytes ({oi}+{} vs {oj}+{})",
                    p.size(i),
                    p.size(j)
                ));
            }
        }
    }
    None
}
