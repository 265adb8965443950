//! `glow-smith`: generates random valid `.gir` programs and runs the
//! differential oracle on them (docs/fuzzing.md).
//!
//! `glow-smith --count N --seed S` checks the programs of seeds S..S+N and
//! ends with `P passed, F failed` (exit 1 when F > 0); `--print SEED` writes
//! one program to stdout.

use glow_smith::oracle::{run_seeds, Config};
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "usage: glow-smith [--count N] [--seed S] [--no-c] [--batch B] [--sequences K] [--failures DIR] [--cflags FLAGS] | --print SEED";

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("glow-smith: error: {e}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<ExitCode, String> {
    let mut args = std::env::args().skip(1);
    let (mut count, mut seed) = (100u64, 0u64);
    let mut cfg = Config::default();
    let num = |v: Option<String>, flag: &str| -> Result<u64, String> {
        v.and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{flag} needs a number"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--count" => count = num(args.next(), "--count")?,
            "--seed" => seed = num(args.next(), "--seed")?,
            "--no-c" => cfg.c_engine = false,
            "--batch" => cfg.batch = num(args.next(), "--batch")? as usize,
            "--sequences" => cfg.sequences = num(args.next(), "--sequences")? as usize,
            "--failures" => {
                cfg.failure_dir = PathBuf::from(args.next().ok_or("--failures needs a directory")?)
            }
            "--cflags" => cfg.cflags = args.next().ok_or("--cflags needs flags")?,
            "--print" => {
                let s = num(args.next(), "--print")?;
                print!("{}", glow_smith::generate(s).text);
                return Ok(ExitCode::SUCCESS);
            }
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(ExitCode::SUCCESS);
            }
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    let end = seed
        .checked_add(count)
        .ok_or("--seed plus --count overflows")?;
    let report = run_seeds(seed..end, &cfg, |f| {
        eprintln!("glow-smith: seed {} FAILED: {}", f.seed, f.message);
        if let Some(p) = &f.file {
            eprintln!("glow-smith: program written to {}", p.display());
        }
    });
    println!(
        "opcodes used: {} ({})",
        report.opcodes.len(),
        report.opcodes.iter().copied().collect::<Vec<_>>().join(" ")
    );
    println!(
        "passes run: {}; passes that changed a program: {} ({})",
        report.passes_run.len(),
        report.passes_changed.len(),
        report
            .passes_changed
            .iter()
            .copied()
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("C engine runs: {}", report.c_runs);
    println!("{} passed, {} failed", report.passed, report.failures.len());
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
