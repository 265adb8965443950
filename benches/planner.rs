//! Planning time: on Glow's 79 allocation traces (vendored in testdata/)
//! and on synthetic programs of 1k, 10k and 100k buffers, with the arena
//! against the lower bound and the growth from one size to the next.
//! Run: `cargo bench --bench planner`.

use glow_passes::planner::search::XorShift;
use glow_passes::planner::{plan, trace, Buffer, PlanOptions};
use std::path::Path;
use std::time::{Duration, Instant};

/// A CNN-shaped schedule: each layer's output lives until the next layer
/// or two; every few layers a residual input stays alive across a block;
/// sizes vary by a factor of 16.
fn synthetic(n: usize, seed: u64) -> Vec<Buffer> {
    let mut rng = XorShift(seed);
    let mut bufs = Vec::with_capacity(n);
    let mut t = 0u32;
    while bufs.len() < n {
        let size = 1024 * (1 + rng.below(16) as u64) * 64;
        let span = 1 + rng.below(3) as u32;
        bufs.push(Buffer::new(size, t, t + span));
        if bufs.len() % 8 == 0 && bufs.len() < n {
            // A residual connection across the next block.
            bufs.push(Buffer::new(size / 2, t, t + 8 + rng.below(8) as u32));
        }
        t += 1;
    }
    bufs
}

fn timed(bufs: &[Buffer], align: u64) -> (glow_passes::planner::Plan, Duration) {
    let start = Instant::now();
    let p = plan(
        bufs,
        &PlanOptions {
            align,
            ..PlanOptions::default()
        },
    );
    (p, start.elapsed())
}

fn main() {
    let traces = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/glow-traces/MemoryAllocatorTestModels.txt");
    match std::fs::read_to_string(&traces) {
        Ok(text) => match trace::parse(&text) {
            Ok(models) => {
                let mut total = Duration::ZERO;
                let mut slowest = (Duration::ZERO, String::new());
                let mut at_bound = 0;
                for m in &models {
                    let (p, d) = timed(&m.buffers, m.align);
                    total += d;
                    if d > slowest.0 {
                        slowest = (d, m.name.clone());
                    }
                    at_bound += (p.arena == p.lower_bound) as usize;
                }
                println!(
                    "glow traces: {} models, {} at the lower bound, total {:.1} ms, slowest {:.1} ms ({})",
                    models.len(),
                    at_bound,
                    total.as_secs_f64() * 1e3,
                    slowest.0.as_secs_f64() * 1e3,
                    slowest.1
                );
            }
            Err(e) => {
                eprintln!(
                    "glow traces: cannot parse {}: {} errors",
                    traces.display(),
                    e.len()
                );
                std::process::exit(1);
            }
        },
        // The traces are part of the repository: their absence is an error.
        Err(e) => {
            eprintln!("glow traces: cannot read {}: {e}", traces.display());
            std::process::exit(1);
        }
    }
    println!(
        "{:>8} {:>12} {:>14} {:>14} {:>8} {:>20} {:>8}",
        "buffers", "time", "lower bound", "arena", "ratio", "algorithm", "growth"
    );
    let mut prev: Option<Duration> = None;
    for n in [1_000usize, 10_000, 100_000] {
        let bufs = synthetic(n, 0x5eed + n as u64);
        let (p, d) = timed(&bufs, PlanOptions::default().align);
        let growth = prev.map_or("-".to_string(), |pd| {
            format!("{:.1}x", d.as_secs_f64() / pd.as_secs_f64())
        });
        println!(
            "{:>8} {:>10.1}ms {:>14} {:>14} {:>8.4} {:>20} {:>8}",
            bufs.len(),
            d.as_secs_f64() * 1e3,
            p.lower_bound,
            p.arena,
            p.ratio(),
            p.algorithm.name(),
            growth
        );
        prev = Some(d);
    }
}
