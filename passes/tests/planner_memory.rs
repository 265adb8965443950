//! The planner's memory is near-linear in the buffers even when they are
//! all live together (their conflict graph is quadratic: 10,000 such
//! buffers took 0.9 GB, 50,000 took 20.7 GB). A counting allocator bounds
//! the peak heap of every heuristic on 3,000 simultaneously live buffers,
//! where a stored conflict graph alone is about 70 MB.

use glow_passes::planner::{self, maxlive, place::Problem, Buffer, PlanOptions};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
        PEAK.fetch_max(now, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::SeqCst);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Peak heap growth (bytes) while running `f`.
fn peak_of(f: impl FnOnce()) -> usize {
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    f();
    PEAK.load(Ordering::SeqCst) - base
}

#[test]
fn all_live_buffers_plan_in_near_linear_memory() {
    let n = 3000u32;
    // Allocated one per step, all freed at the end, sizes varying.
    let bufs: Vec<Buffer> = (0..n)
        .map(|i| Buffer::new(64 * (1 + (i % 16) as u64), i, 2 * n - i))
        .collect();
    let limit = 4 << 20;
    let opts = PlanOptions::default();
    let mut plan = None;
    let peak = peak_of(|| plan = Some(planner::plan(&bufs, &opts)));
    let plan = plan.expect("planned");
    assert!(peak < limit, "plan: peak heap {peak} bytes");
    assert_eq!(plan.arena, plan.lower_bound);
    let p = Problem::new(&bufs, 64);
    for by_lifetime in [false, true] {
        let mut offsets = Vec::new();
        let peak = peak_of(|| offsets = maxlive::place(&p, by_lifetime));
        assert!(peak < limit, "max-live: peak heap {peak} bytes");
        assert_eq!(planner::check(&bufs, &offsets, 64), None);
    }
    let peak = peak_of(|| assert_eq!(planner::check(&bufs, &plan.offsets, 64), None));
    assert!(peak < limit, "check: peak heap {peak} bytes");
}
