//! The max-live lower bound: the largest sum of aligned sizes live at one
//! instruction. No placement can beat it for a fixed schedule.

use super::Buffer;

/// `size` rounded up to a multiple of `align` (0 and 1 mean none);
/// saturates instead of overflowing.
pub fn align_up(size: u64, align: u64) -> u64 {
    if align <= 1 {
        return size;
    }
    match size % align {
        0 => size,
        r => size.saturating_add(align - r),
    }
}

/// Sweep over `+size` at `first` and `-size` after `last`; the maximum of
/// the running sum. `O(n log n)`.
pub fn lower_bound(bufs: &[Buffer], align: u64) -> u64 {
    // (time, is_start, size): ends at `last + 1` sort before starts at the
    // same time, since a buffer freed at t-1 is not live at t.
    let mut events: Vec<(u64, bool, u64)> = Vec::with_capacity(bufs.len() * 2);
    for b in bufs {
        let s = align_up(b.size, align);
        events.push((b.first as u64, true, s));
        events.push((b.last as u64 + 1, false, s));
    }
    events.sort_unstable();
    let (mut live, mut peak) = (0u128, 0u128);
    for (_, start, s) in events {
        if start {
            live += s as u128;
            peak = peak.max(live);
        } else {
            live -= s as u128;
        }
    }
    peak.min(u64::MAX as u128) as u64
}
