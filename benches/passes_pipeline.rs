//! The infer pipeline (`-O`) on generated IRGen-style programs of 10k, 100k
//! and 1M instructions: time per instruction, per-pass times at the largest
//! size, and the growth from 100k to 1M (10.0x is linear). Then a memory
//! table on the example networks the suite ships: naive bytes and peak-live
//! bytes before and after the pipeline.
//! Run: `cargo bench --bench passes_pipeline` (`-- --quick` skips 1M).

use glow_ir::parser;
use glow_passes::analysis::memory::memory_report;
use glow_passes::pipeline::{Mode, Pipeline};
use glow_passes::{Instrumentation, PassManager};
use std::fmt::Write;
use std::time::{Duration, Instant};

/// One segment: 8 allocs on top, a dead splat into the output, a chain of 8
/// element-wise ops, a copy out, an unused view, then every dealloc: 27
/// instructions with work for every pass of the pipeline.
fn program(n: usize) -> String {
    let mut s = String::from("function bench\ndeclare {\n");
    s.push_str("  %in = WeightVar float<8 x 32> mutable\n  %c = WeightVar float<8 x 32> const\n");
    s.push_str("  %out = WeightVar float<8 x 32> mutable\n}\n\ncode {\n");
    let ops = [
        "elementadd",
        "relu",
        "elementmul",
        "tanh",
        "elementmax",
        "sigmoid",
        "elementsub",
        "relu",
    ];
    let (mut k, mut seg) = (0usize, 0usize);
    while k + 27 <= n.max(27) {
        let mut line = |s: &mut String, text: String| {
            let _ = writeln!(s, "  {k} {text}");
            k += 1;
        };
        for j in 0..8 {
            line(
                &mut s,
                format!("%t{seg}_{j} = allocactivation {{ Ty: float<8 x 32> }}"),
            );
        }
        line(&mut s, format!("%z{seg} = splat @out %out {{ Value: 0 }}"));
        for (j, op) in ops.iter().enumerate() {
            let src = if j == 0 {
                "%in".to_string()
            } else {
                format!("%t{seg}_{}", j - 1)
            };
            let binary = op.starts_with("element");
            let rhs = if binary { ", @in %c" } else { "" };
            line(
                &mut s,
                format!("%o{seg}_{j} = {op} @out %t{seg}_{j}, @in {src}{rhs}"),
            );
        }
        line(
            &mut s,
            format!("%v{seg} = tensorview @in %t{seg}_7 {{ Ty: float<256>, Offsets: [0, 0] }}"),
        );
        line(&mut s, format!("%cp{seg} = copy @out %out, @in %t{seg}_7"));
        for j in 0..8 {
            line(
                &mut s,
                format!("%d{seg}_{j} = deallocactivation @out %t{seg}_{j}"),
            );
        }
        seg += 1;
    }
    s.push_str("}\n");
    s
}

fn run_infer(text: &str, time_passes: bool) -> (Duration, usize, String) {
    let mut module = match parser::parse(text.as_bytes()) {
        Ok(m) => m,
        Err(d) => panic!("generated program does not parse: {:?}", d.first()),
    };
    let insts = module.functions.iter().map(|f| f.layout.len()).sum();
    let inst = Instrumentation {
        verify_each: false,
        time_passes,
        ..Instrumentation::default()
    };
    let mut pm = PassManager::new(Pipeline::for_mode(Mode::Infer), inst);
    let start = Instant::now();
    if let Err(e) = pm.run(&mut module) {
        panic!(
            "pipeline failed: {:?}",
            e.diagnostics.first().map(|d| &d.message)
        );
    }
    (start.elapsed(), insts, pm.log)
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let sizes: &[usize] = if quick {
        &[10_000, 100_000]
    } else {
        &[10_000, 100_000, 1_000_000]
    };
    println!(
        "infer pipeline ({} passes), verify-each off",
        Pipeline::for_mode(Mode::Infer).steps.len()
    );
    println!("{:>10} {:>12} {:>14}", "insts", "time", "ns/inst");
    let mut per = Vec::new();
    let mut last_log = String::new();
    for &n in sizes {
        let text = program(n);
        let biggest = n == *sizes.last().unwrap_or(&n);
        let (t, insts, log) = run_infer(&text, biggest);
        let ns = t.as_nanos() as f64 / insts as f64;
        println!("{:>10} {:>10.3} s {:>14.1}", insts, t.as_secs_f64(), ns);
        per.push((insts, t));
        if biggest {
            last_log = log;
        }
    }
    if let [.., (n1, t1), (n2, t2)] = per[..] {
        println!(
            "growth {}k -> {}k: {:.1}x time for {:.1}x instructions",
            n1 / 1000,
            n2 / 1000,
            t2.as_secs_f64() / t1.as_secs_f64(),
            n2 as f64 / n1 as f64
        );
    }
    println!("\nper pass at the largest size:\n{last_log}");
    println!("memory (infer pipeline), bytes:");
    println!(
        "{:<28} {:>12} {:>14} {:>14}",
        "program", "naive", "peak before", "peak after"
    );
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/");
    for name in [
        "lenet-full.gir",
        "resnet-blocks.gir",
        "mobilenet-blocks.gir",
    ] {
        let Ok(text) = std::fs::read(format!("{root}{name}")) else {
            println!("{name:<28} (missing)");
            continue;
        };
        let Ok(mut module) = parser::parse(&text) else {
            println!("{name:<28} (does not parse)");
            continue;
        };
        let before: Vec<_> = module.functions.iter().map(memory_report).collect();
        let mut pm = PassManager::new(Pipeline::for_mode(Mode::Infer), Instrumentation::default());
        if pm.run(&mut module).is_err() {
            println!("{name:<28} (pipeline failed)");
            continue;
        }
        for (b, f) in before.iter().zip(&module.functions) {
            let a = memory_report(f);
            println!(
                "{:<28} {:>12} {:>14} {:>14}",
                name, b.naive_bytes, b.peak_live_bytes, a.peak_live_bytes
            );
        }
    }
}
