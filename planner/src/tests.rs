//! Planner invariants on seeded random lifetimes: no two buffers overlap in
//! time and bytes, offsets are aligned, arena >= bound, arena == bound on
//! chains; plus the trace parser's diagnostics.

use super::search::XorShift;
use super::*;

fn random_buffers(rng: &mut XorShift, n: usize, horizon: u32, max_size: u64) -> Vec<Buffer> {
    (0..n)
        .map(|_| {
            let first = rng.below(horizon as usize) as u32;
            let len = rng.below(1 + horizon as usize / 4) as u32;
            let size = rng.below(max_size as usize + 1) as u64;
            Buffer::new(size, first, first.saturating_add(len))
        })
        .collect()
}

fn assert_valid(bufs: &[Buffer], plan: &Plan, align: u64) {
    assert_eq!(check(bufs, &plan.offsets, align), None);
    assert!(
        plan.arena >= plan.lower_bound,
        "{} < {}",
        plan.arena,
        plan.lower_bound
    );
    let p = place::Problem::new(bufs, align);
    assert_eq!(plan.arena, p.arena(&plan.offsets));
    // Brute-force overlap check, independent of the conflict graph.
    for i in 0..bufs.len() {
        for j in i + 1..bufs.len() {
            let (si, sj) = (align_up(bufs[i].size, align), align_up(bufs[j].size, align));
            if si == 0 || sj == 0 || !bufs[i].overlaps_in_time(&bufs[j]) {
                continue;
            }
            let (oi, oj) = (plan.offsets[i], plan.offsets[j]);
            assert!(oi + si <= oj || oj + sj <= oi, "{i} and {j} overlap");
        }
    }
}

#[test]
fn random_lifetimes_plan_validly() {
    let mut rng = XorShift(42);
    for round in 0..300 {
        let n = 1 + rng.below(60);
        let align = [1, 8, 64, 100][round % 4];
        let bufs = random_buffers(&mut rng, n, 40, 5000);
        let opts = PlanOptions {
            align,
            search_budget: 200,
        };
        let plan = plan(&bufs, &opts);
        assert_valid(&bufs, &plan, align);
        for (off, name) in [
            (p_offsets(&bufs, align, 0), "size"),
            (p_offsets(&bufs, align, 1), "lifetime"),
            (
                maxlive::place(&place::Problem::new(&bufs, align), false),
                "ml-size",
            ),
            (
                maxlive::place(&place::Problem::new(&bufs, align), true),
                "ml-life",
            ),
        ] {
            assert_eq!(check(&bufs, &off, align), None, "{name}");
        }
    }
}

fn p_offsets(bufs: &[Buffer], align: u64, which: u8) -> Vec<u64> {
    let p = place::Problem::new(bufs, align);
    let order = if which == 0 {
        p.order_by_size()
    } else {
        p.order_by_lifetime()
    };
    p.place_best_fit(&order)
}

#[test]
fn chains_reach_the_bound() {
    // A chain: buffer k lives over [k, k+1], so only neighbours overlap.
    let mut rng = XorShift(7);
    for _ in 0..200 {
        let n = 1 + rng.below(50);
        let bufs: Vec<Buffer> = (0..n)
            .map(|k| Buffer::new(1 + rng.below(100_000) as u64, k as u32, k as u32 + 1))
            .collect();
        let plan = plan(&bufs, &PlanOptions::default());
        assert_valid(&bufs, &plan, 64);
        assert_eq!(plan.arena, plan.lower_bound);
    }
}

#[test]
fn bound_examples() {
    let b = |s, f, l| Buffer::new(s, f, l);
    assert_eq!(lower_bound(&[], 64), 0);
    assert_eq!(lower_bound(&[b(1, 0, 0), b(1, 1, 1)], 64), 64);
    assert_eq!(lower_bound(&[b(1, 0, 1), b(1, 1, 1)], 64), 128);
    assert_eq!(
        lower_bound(&[b(100, 0, 5), b(30, 2, 3), b(30, 3, 9)], 1),
        160
    );
    assert_eq!(align_up(0, 64), 0);
    assert_eq!(align_up(65, 64), 128);
    assert_eq!(align_up(u64::MAX, 64), u64::MAX);
    assert_eq!(align_up(7, 0), 7);
}

#[test]
fn degenerate_inputs_do_not_panic() {
    let opts = PlanOptions::default();
    assert_eq!(plan(&[], &opts).arena, 0);
    let zero = [Buffer::new(0, 0, 3), Buffer::new(0, 1, 1)];
    let p = plan(&zero, &opts);
    assert_eq!((p.arena, p.offsets.clone()), (0, vec![0, 0]));
    let huge = [Buffer::new(u64::MAX, 0, 1), Buffer::new(u64::MAX, 1, 2)];
    let p = plan(&huge, &opts);
    assert!(p.arena >= p.lower_bound);
    let rev = [Buffer::new(10, 5, 2)];
    assert_eq!(plan(&rev, &opts).arena, 64);
    assert_eq!(plan(&[Buffer::new(3, u32::MAX, u32::MAX)], &opts).arena, 64);
}

#[test]
fn deterministic() {
    let mut rng = XorShift(99);
    let bufs = random_buffers(&mut rng, 200, 100, 1 << 20);
    let opts = PlanOptions {
        search_budget: 300,
        ..PlanOptions::default()
    };
    assert_eq!(plan(&bufs, &opts), plan(&bufs, &opts));
}

#[test]
fn trace_parses_lifetimes() {
    let t = "# c\nMODEL m\nALIGN 64\nALLOC 1 100\nALLOC 2 10\nFREE 1\nALLOC 3 5\nFREE 2\nFREE 3\nMEM 192\nEFF 1.0\n";
    let m = trace::parse(t).unwrap();
    assert_eq!(m.len(), 1);
    assert_eq!(m[0].glow_mem, Some(192));
    assert_eq!(
        m[0].buffers,
        vec![
            Buffer::new(100, 0, 2),
            Buffer::new(10, 1, 4),
            Buffer::new(5, 3, 5)
        ]
    );
    let p = plan(&m[0].buffers, &PlanOptions::default());
    assert_eq!((p.lower_bound, p.arena), (192, 192));
}

#[test]
fn trace_errors_have_positions() {
    let t = "ALLOC 1 2\nMODEL m\nALLOC 1 x\nFREE 9\nBOGUS\nALLOC 2 4\nALLOC 2 4 5\nFREE\n";
    let e = trace::parse(t).unwrap_err();
    let got: Vec<(usize, usize, &str)> = e
        .iter()
        .map(|e| (e.line, e.col, e.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (1, 1, "`ALLOC` before the first MODEL record"),
            (3, 9, "expected a size in bytes, found `x`"),
            (4, 6, "buffer `9` is freed but was never allocated"),
            (
                5,
                1,
                "unknown record `BOGUS`; expected MODEL, ALIGN, ALLOC, FREE, MEM or EFF"
            ),
            (6, 1, "buffer `2` is allocated but never freed"),
            (7, 11, "unexpected `5` after `ALLOC` record"),
            (8, 5, "`FREE` expects a buffer id"),
        ]
    );
}
