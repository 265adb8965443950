//! The exact dynamic program on the forward order (docs/passes/remat.md,
//! "The dynamic program"): Chen et al.'s segment model solved exactly.
//!
//! The candidates in forward order have sizes `s` and recomputation work
//! `w`. A choice keeps some of them; the others are recomputed once, a
//! segment (a run of dropped candidates between two kept ones) at a time,
//! and a segment's copies live together during its backward pass, with every
//! kept candidate before it. So a choice fits `m` bytes when
//!
//! - for each segment, the kept bytes up to it plus its own bytes are at most
//!   `m`, and
//! - all kept bytes are at most `m` (the end of the forward pass);
//!
//! and it costs the work of the dropped candidates. A segment is one only
//! when its recomputation starts at its kept start: each of its candidates
//! reads (`reads`: the earliest candidate, 1-based, that its writer or what
//! is recomputed with it reads) nothing before that start. On a chain every
//! candidate reads the one before it, so every choice is allowed; a residual
//! network's block output reads the previous block's, so the program keeps a
//! block's start or drops the blocks together. [`solve`] finds the least cost
//! of an allowed choice that fits. Minimising work
//! under a byte bound is a knapsack, so the program keeps, at each kept
//! candidate, the Pareto front of (kept bytes so far, work so far): every
//! state that no other beats on both. The fronts are exact up to
//! [`FRONT_CAP`] states; a larger front is thinned to that many, evenly over
//! its bytes, and [`Solution::exact`] says so.

/// States a front keeps at most.
pub const FRONT_CAP: usize = 4096;

/// The program's answer for one bound.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Solution {
    /// Per candidate, whether it is kept.
    pub keep: Vec<bool>,
    /// The dropped candidates' work.
    pub work: u64,
    /// The largest bytes the model gives the choice.
    pub peak: u64,
    /// No front was thinned.
    pub exact: bool,
}

#[derive(Clone, Copy)]
struct State {
    /// Kept bytes up to and including this candidate.
    kept: u64,
    work: u64,
    /// The largest constraint's bytes so far.
    peak: u64,
    /// Previous kept position and its state's index.
    from: (usize, usize),
}

/// The model's largest bytes for a choice (what [`solve`] bounds).
#[cfg(test)]
fn model_peak(sizes: &[u64], keep: &[bool]) -> u64 {
    let (mut kept, mut seg, mut peak) = (0u64, 0u64, 0u64);
    for (&s, &k) in sizes.iter().zip(keep) {
        if k {
            peak = peak.max(kept + seg);
            kept += s;
            seg = 0;
        } else {
            seg += s;
        }
    }
    peak.max(kept + seg).max(kept)
}

/// The least-work allowed choice whose model peak is at most `m`, or
/// `None` when none is (a candidate larger than `m` can be neither kept
/// nor dropped). `reads[k]` is candidate `k`'s earliest read (1-based,
/// `usize::MAX` for none).
pub fn solve(sizes: &[u64], works: &[u64], reads: &[usize], m: u64) -> Option<Solution> {
    let n = sizes.len();
    // Positions: 0 is the step's input (kept, no bytes), 1..=n the
    // candidates, n + 1 the end of the forward pass (kept, no bytes).
    let size = |j: usize| {
        if (1..=n).contains(&j) {
            sizes[j - 1]
        } else {
            0
        }
    };
    let mut ps = vec![0u64; n + 1];
    let mut pw = vec![0u64; n + 1];
    for j in 0..n {
        ps[j + 1] = ps[j] + sizes[j];
        pw[j + 1] = pw[j] + works[j];
    }
    // Bytes and work of candidates i+1 ..= j-1 (positions), dropped.
    let between = |i: usize, j: usize| (ps[j - 1] - ps[i], pw[j - 1] - pw[i]);
    let mut fronts: Vec<Vec<State>> = vec![Vec::new(); n + 2];
    fronts[0].push(State {
        kept: 0,
        work: 0,
        peak: 0,
        from: (0, 0),
    });
    let mut exact = true;
    for j in 1..=n + 1 {
        let mut cands: Vec<State> = Vec::new();
        // The earliest read of candidates i+1 ..= j-1.
        let mut first = usize::MAX;
        for i in (0..j).rev() {
            if i + 1 < j {
                first = first.min(reads[i]);
            }
            let (seg, w) = between(i, j);
            if seg > m {
                break;
            }
            if first < i {
                continue;
            }
            for (k, st) in fronts[i].iter().enumerate() {
                let need = st.kept + seg;
                let kept = st.kept + size(j);
                if need > m || kept > m {
                    continue;
                }
                cands.push(State {
                    kept,
                    work: st.work + w,
                    peak: st.peak.max(need).max(kept),
                    from: (i, k),
                });
            }
        }
        // The Pareto front over (kept bytes, work); among equals the lower
        // peak, then the earlier predecessor (deterministic).
        cands.sort_by_key(|s| (s.kept, s.work, s.peak, s.from));
        let mut front: Vec<State> = Vec::new();
        for s in cands {
            if front.last().is_none_or(|l| s.work < l.work) {
                front.push(s);
            }
        }
        if front.len() > FRONT_CAP {
            exact = false;
            let step = front.len() as f64 / FRONT_CAP as f64;
            front = (0..FRONT_CAP)
                .map(|k| front[(k as f64 * step) as usize])
                .collect();
        }
        fronts[j] = front;
    }
    // At the end, the least work (then the least peak).
    let (k, end) = fronts[n + 1]
        .iter()
        .enumerate()
        .min_by_key(|(_, s)| (s.work, s.peak))?;
    let (work, peak) = (end.work, end.peak);
    let mut keep = vec![false; n];
    let (mut j, mut k) = (n + 1, k);
    while j > 0 {
        let st = fronts[j][k];
        if (1..=n).contains(&j) {
            keep[j - 1] = true;
        }
        (j, k) = st.from;
    }
    Some(Solution {
        keep,
        work,
        peak,
        exact,
    })
}

/// The least bound [`solve`] can meet: the least model peak of any choice.
pub fn least_bound(sizes: &[u64], works: &[u64], reads: &[usize]) -> u64 {
    let total: u64 = sizes.iter().sum();
    let (mut lo, mut hi) = (sizes.iter().copied().max().unwrap_or(0), total);
    // Keeping everything fits `total`; the least fitting bound is found by
    // halving (feasibility grows with the bound).
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if solve(sizes, works, reads, mid).is_some() {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every choice, tried: the least work whose model peak fits.
    fn brute(sizes: &[u64], works: &[u64], reads: &[usize], m: u64) -> Option<(u64, u64)> {
        let n = sizes.len();
        let mut best: Option<(u64, u64)> = None;
        for mask in 0u32..(1 << n) {
            let keep: Vec<bool> = (0..n).map(|i| mask >> i & 1 == 1).collect();
            // Allowed: a dropped candidate reads nothing before the last
            // kept one before it (position 0 is the step's input).
            let mut start = 0;
            let mut allowed = true;
            for t in 0..n {
                if keep[t] {
                    start = t + 1;
                } else if reads[t] < start {
                    allowed = false;
                }
            }
            if !allowed {
                continue;
            }
            let peak = model_peak(sizes, &keep);
            if peak > m {
                continue;
            }
            let work = (0..n).filter(|&i| !keep[i]).map(|i| works[i]).sum();
            if best.is_none_or(|b| (work, peak) < b) {
                best = Some((work, peak));
            }
        }
        best
    }

    /// A small deterministic generator (no dependency for a test).
    fn next(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    #[test]
    fn the_program_equals_trying_every_choice() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..400 {
            let n = 1 + (next(&mut seed) % 11) as usize;
            let sizes: Vec<u64> = (0..n).map(|_| 1 + next(&mut seed) % 64).collect();
            let works: Vec<u64> = (0..n).map(|_| next(&mut seed) % 100).collect();
            // Half the cases a chain (each reads the one before); else any
            // earlier candidate or nothing.
            let chain = case % 2 == 0;
            let reads: Vec<usize> = (0..n)
                .map(|k| match next(&mut seed) % 4 {
                    _ if chain || k == 0 => k.max(1),
                    0 => usize::MAX,
                    _ => 1 + (next(&mut seed) as usize) % k,
                })
                .collect();
            let total: u64 = sizes.iter().sum();
            let m = next(&mut seed) % (total + 2);
            let got = solve(&sizes, &works, &reads, m);
            let want = brute(&sizes, &works, &reads, m);
            assert_eq!(
                got.as_ref().map(|s| s.work),
                want.map(|w| w.0),
                "case {case}: sizes {sizes:?} works {works:?} bound {m}"
            );
            if let Some(s) = got {
                assert!(s.exact);
                assert_eq!(model_peak(&sizes, &s.keep), s.peak, "case {case}");
                assert!(s.peak <= m, "case {case}");
                let w: u64 = (0..n).filter(|&i| !s.keep[i]).map(|i| works[i]).sum();
                assert_eq!(w, s.work, "case {case}");
            }
        }
    }

    #[test]
    fn equal_layers_reach_chens_square_root() {
        // 16 equal layers within 5: segments of 5, 4, 3, 2, 1 between
        // kept ones (each with the kept before it) cover 15 + 5 kept; within
        // 4 they cover only 10 + 4, so 5 is the least (about sqrt(2n)).
        let sizes = vec![1u64; 16];
        let works = vec![1u64; 16];
        let reads: Vec<usize> = (0..16).map(|k: usize| k.max(1)).collect();
        let least = least_bound(&sizes, &works, &reads);
        assert_eq!(least, 5);
        let s = solve(&sizes, &works, &reads, least).unwrap();
        assert_eq!(s.peak, 5);
        assert_eq!(s.keep.iter().filter(|&&k| k).count(), 5);
        assert!(solve(&sizes, &works, &reads, least - 1).is_none());
        // With all the bytes allowed, nothing is recomputed.
        assert_eq!(solve(&sizes, &works, &reads, 16).unwrap().work, 0);
    }

    #[test]
    fn a_skip_connection_keeps_segments_whole() {
        // Candidate 3 reads candidate 1: dropping it with 2 kept would
        // recompute from before 2, so only choices without that are allowed.
        let sizes = vec![4u64, 4, 4];
        let works = vec![10u64, 10, 1];
        let reads = vec![usize::MAX, 1, 1];
        // Within 8, keeping 1 and 2 and dropping the cheap 3 would read 1
        // from before its start 2; the least allowed work is 10.
        let s = solve(&sizes, &works, &reads, 8).unwrap();
        assert_eq!(s.work, 10);
        assert_eq!(brute(&sizes, &works, &reads, 8).unwrap().0, 10);
    }
}
