//! Parse + verify + print throughput of `.gir` at 10k, 100k and 1M
//! instructions, in process and through the `glow-opt` binary, side by side
//! with LLVM's `opt -S` text round trip on a function of the same instruction
//! count when LLVM is installed (`LLVM_OPT=/path/to/opt` or
//! `/usr/lib/llvm-19/bin/opt`). Run: `cargo bench --bench ir_throughput`.

use glow_ir::printer::{print_module, PrintOptions};
use glow_ir::{parser, verifier};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A program of `n` instructions: blocks of alloc, add, relu, copy-out, dealloc.
fn gir_program(n: usize) -> String {
    let mut s = String::from("function bench\ndeclare {\n");
    s.push_str("  %a = WeightVar float<16 x 16> mutable\n  %b = WeightVar float<16 x 16> const\n");
    s.push_str("  %out = WeightVar float<16 x 16> mutable\n}\n\ncode {\n");
    let mut k = 0;
    let mut block = 0;
    while k + 5 <= n {
        let _ = writeln!(
            s,
            "  {} %t{block} = allocactivation {{ Ty: float<16 x 16> }}",
            k
        );
        let _ = writeln!(
            s,
            "  {} %add{block} = elementadd @out %t{block}, @in %a, @in %b",
            k + 1
        );
        let _ = writeln!(
            s,
            "  {} %relu{block} = relu @out %t{block}, @in %t{block}",
            k + 2
        );
        let _ = writeln!(s, "  {} %cp{block} = copy @out %out, @in %t{block}", k + 3);
        let _ = writeln!(
            s,
            "  {} %d{block} = deallocactivation @out %t{block}",
            k + 4
        );
        k += 5;
        block += 1;
    }
    while k < n {
        let _ = writeln!(s, "  {} %s{k} = splat @out %out {{ Value: 1.0 }}", k);
        k += 1;
    }
    s.push_str("}\n");
    s
}

/// An LLVM function of `n` instructions (a chain of float adds).
fn llvm_program(n: usize) -> String {
    let mut s = String::from(
        "define float @bench(float %a, float %b) {\nentry:\n  %v0 = fadd float %a, %b\n",
    );
    for i in 1..n.saturating_sub(1) {
        let _ = writeln!(s, "  %v{} = fadd float %v{}, %b", i, i - 1);
    }
    let _ = writeln!(s, "  ret float %v{}\n}}", n.saturating_sub(2));
    s
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .min()
        .expect("at least one run")
}

fn run_tool(cmd: &Path, args: &[&str]) -> Duration {
    // Best of five: the tools run for a fraction of a second, where one
    // scheduling hiccup would decide a best of three.
    best_of(5, || {
        let status = Command::new(cmd).args(args).status().expect("tool runs");
        assert!(status.success(), "{} failed", cmd.display());
    })
}

fn llvm_opt() -> Option<PathBuf> {
    let candidates = [
        std::env::var("LLVM_OPT").ok(),
        Some("/usr/lib/llvm-19/bin/opt".to_string()),
    ];
    candidates
        .into_iter()
        .flatten()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

fn main() {
    let sizes = [10_000usize, 100_000, 1_000_000];
    let dir = tempfile::tempdir().expect("temp dir");
    let glow_opt = PathBuf::from(env!("CARGO_BIN_EXE_glow-opt"));
    let opt = llvm_opt();
    println!(
        "{:>9} {:>10} {:>10} {:>10} {:>12} {:>14} {:>14}",
        "insts", "parse", "verify", "print", "in-proc i/s", "glow-opt i/s", "llvm opt i/s"
    );
    let mut base_rate = None;
    for &n in &sizes {
        let text = gir_program(n);
        let runs = if n >= 1_000_000 { 2 } else { 5 };
        let parse = best_of(runs, || {
            parser::parse(text.as_bytes()).expect("generated program parses")
        });
        let module = parser::parse(text.as_bytes()).expect("generated program parses");
        let verify = best_of(runs, || {
            let d = verifier::verify_module(&module);
            assert!(d.is_empty(), "generated program verifies");
        });
        let print = best_of(runs, || print_module(&module, PrintOptions::default()));
        let total = parse + verify + print;
        let rate = n as f64 / total.as_secs_f64();
        let gir_path = dir.path().join(format!("p{n}.gir"));
        std::fs::write(&gir_path, &text).expect("write program");
        let out = dir.path().join("out.gir");
        let tool = run_tool(
            &glow_opt,
            &[
                gir_path.to_str().expect("utf-8 path"),
                "-o",
                out.to_str().expect("utf-8 path"),
            ],
        );
        let tool_rate = n as f64 / tool.as_secs_f64();
        let llvm_rate = opt.as_ref().map(|opt| {
            let ll = dir.path().join(format!("p{n}.ll"));
            std::fs::write(&ll, llvm_program(n)).expect("write llvm program");
            let t = run_tool(
                opt,
                &["-S", ll.to_str().expect("utf-8 path"), "-o", "/dev/null"],
            );
            n as f64 / t.as_secs_f64()
        });
        println!(
            "{:>9} {:>9.1}ms {:>9.1}ms {:>9.1}ms {:>12.0} {:>14.0} {:>14}",
            n,
            parse.as_secs_f64() * 1e3,
            verify.as_secs_f64() * 1e3,
            print.as_secs_f64() * 1e3,
            rate,
            tool_rate,
            llvm_rate.map_or("n/a".to_string(), |r| format!("{r:.0}"))
        );
        if let Some(r) = llvm_rate {
            println!(
                "{:>9} glow-opt time / llvm opt -S time: {:.2} (below 1 = glow-opt is faster)",
                "",
                r / tool_rate
            );
        }
        let base = *base_rate.get_or_insert(rate);
        println!(
            "{:>9} in-process rate relative to 10k: {:.2} (1.00 = linear scaling)",
            "",
            rate / base
        );
    }
    if opt.is_none() {
        println!(
            "LLVM opt not found (set LLVM_OPT or apt-get install llvm-19): no side-by-side figure"
        );
    }
}
