//! D: deterministic order search. Starting from greedy-by-size's order,
//! swap two positions of the placement order, re-place the changed suffix
//! with best fit, and keep the swap unless the arena grew. Moves favour a
//! buffer that touches the arena top (swapped with one of its conflict
//! neighbours or any earlier buffer); every fourth move is a random swap.
//! A fixed-seed xorshift drives the choices, so results never vary.

use super::place::{Problem, UNPLACED};

/// Most buffer placements one search may do (about a second).
const WORK_CAP: u64 = 4_000_000;

/// Searches up to `budget` moves; returns offsets strictly better than
/// `incumbent`, or `None`. Stops as soon as the arena reaches `lb`.
pub fn search(
    p: &Problem,
    start: &[u32],
    lb: u64,
    incumbent: u64,
    budget: u32,
) -> Option<Vec<u64>> {
    let n = p.len();
    if n < 2 {
        return None;
    }
    let mut order = start.to_vec();
    let mut pos = vec![0usize; n];
    for (k, &i) in order.iter().enumerate() {
        pos[i as usize] = k;
    }
    let mut offsets = p.place_best_fit(&order);
    let mut arena = p.arena(&offsets);
    let mut best = arena;
    let mut best_offsets: Option<Vec<u64>> = (arena < incumbent).then(|| offsets.clone());
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let mut trial = offsets.clone();
    let mut scratch = Vec::new();
    // Work cap in buffer placements, so huge programs stay fast.
    let mut work: u64 = 0;
    for step in 0..budget {
        if best <= lb || work > WORK_CAP {
            break;
        }
        let (a, b) = pick_move(p, &order, &pos, &offsets, arena, step, &mut rng);
        if a == b {
            continue;
        }
        let (lo, hi) = (a.min(b), a.max(b));
        order.swap(lo, hi);
        // Re-place the suffix from the first changed position.
        trial.copy_from_slice(&offsets);
        for &i in &order[lo..] {
            trial[i as usize] = UNPLACED;
        }
        for &i in &order[lo..] {
            trial[i as usize] = p.fit(i as usize, &trial, true, &mut scratch);
        }
        work += (n - lo + n) as u64;
        let t = p.arena(&trial);
        if t <= arena {
            pos[order[lo] as usize] = lo;
            pos[order[hi] as usize] = hi;
            std::mem::swap(&mut offsets, &mut trial);
            arena = t;
            if t < best {
                best = t;
                if t < incumbent {
                    best_offsets = Some(offsets.clone());
                }
            }
        } else {
            order.swap(lo, hi);
        }
    }
    best_offsets
}

/// Two order positions to swap.
fn pick_move(
    p: &Problem,
    order: &[u32],
    pos: &[usize],
    offsets: &[u64],
    arena: u64,
    step: u32,
    rng: &mut XorShift,
) -> (usize, usize) {
    let n = order.len();
    if step % 4 == 3 {
        return (rng.below(n), rng.below(n));
    }
    // A buffer ending at the arena top: one such, chosen at random.
    let tops: Vec<usize> = (0..n)
        .filter(|&i| offsets[i] != UNPLACED && offsets[i].saturating_add(p.size(i)) == arena)
        .collect();
    if tops.is_empty() {
        return (rng.below(n), rng.below(n));
    }
    let t = tops[rng.below(tops.len())];
    let nb = p.neighbours(t);
    let other = if !nb.is_empty() && rng.below(2) == 0 {
        pos[nb[rng.below(nb.len())] as usize]
    } else {
        rng.below(pos[t] + 1)
    };
    (pos[t], other)
}

/// xorshift64*: small, fast, and the same on every machine.
pub struct XorShift(pub u64);

impl XorShift {
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform-ish in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}
