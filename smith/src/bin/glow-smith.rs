//! `glow-smith`: generates random valid `.gir` programs and runs the
//! differential oracle on them (docs/fuzzing.md).
//!
//! `glow-smith --count N --seed S` checks the programs of seeds S..S+N and
//! ends with `P passed, F failed` (exit 1 when F > 0), on `--jobs J` threads
//! (default: the cores), with the same report for any J; `--print SEED` writes
//! one program to stdout. Each failing program is written to the failures
//! directory and reduced there by `glow-reduce` (unless `--no-reduce`), with
//! `glow-smith --fails-like KIND FILE` as the interestingness test: the
//! candidate still fails the oracle with a message of the same kind.

use glow_smith::oracle::{check_text, failure_kind, run_seeds_parallel, Config, Failure};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const USAGE: &str = "usage: glow-smith [--count N] [--seed S] [--jobs J] [--no-c] [--batch B] [--sequences K] [--failures DIR] [--cflags FLAGS] [--no-reduce] | --print SEED | [--no-c] [--cflags FLAGS] --fails-like KIND FILE";

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
    let mut reduce = true;
    let mut jobs = std::thread::available_parallelism().map_or(1, |n| n.get());
    let num = |v: Option<String>, flag: &str| -> Result<u64, String> {
        v.and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{flag} needs a number"))
    };
    while let Some(a) = args.next() {
        match a.as_str() {
            "--count" => count = num(args.next(), "--count")?,
            "--seed" => seed = num(args.next(), "--seed")?,
            "--jobs" | "-j" => jobs = (num(args.next(), "--jobs")? as usize).max(1),
            "--no-c" => cfg.c_engine = false,
            "--batch" => cfg.batch = num(args.next(), "--batch")? as usize,
            "--sequences" => cfg.sequences = num(args.next(), "--sequences")? as usize,
            "--failures" => {
                cfg.failure_dir = PathBuf::from(args.next().ok_or("--failures needs a directory")?)
            }
            "--cflags" => cfg.cflags = args.next().ok_or("--cflags needs flags")?,
            "--no-reduce" => reduce = false,
            "--fails-like" => {
                let kind = args.next().ok_or("--fails-like needs a failure kind")?;
                let file = args.next().ok_or("--fails-like needs a file")?;
                let text = std::fs::read_to_string(&file)
                    .map_err(|e| format!("cannot read {file}: {e}"))?;
                let same = matches!(check_text(&text, &cfg), Err(m) if failure_kind(&m) == kind);
                return Ok(if same {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(1)
                });
            }
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
    let report = run_seeds_parallel(seed..end, jobs, &cfg, |f| {
        eprintln!("glow-smith: seed {} FAILED: {}", f.seed, f.message);
        if let Some(p) = &f.file {
            eprintln!("glow-smith: program written to {}", p.display());
        }
    });
    if reduce {
        for f in &report.failures {
            reduce_failure(f, &cfg);
        }
    }
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

/// Reduces a failing program with `glow-reduce` (beside this executable)
/// into `seed-N.reduced.gir`, keeping the failure's kind.
fn reduce_failure(f: &Failure, cfg: &Config) {
    let Some(file) = &f.file else { return };
    let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf))
    else {
        return;
    };
    let (reducer, me) = (dir.join("glow-reduce"), dir.join("glow-smith"));
    let out = file.with_extension("reduced.gir");
    let kind = failure_kind(&f.message);
    if !reducer.is_file() {
        eprintln!(
            "glow-smith: glow-reduce is not beside glow-smith; reduce with: glow-reduce {} --test=glow-smith --test-arg=--fails-like --test-arg='{kind}' -o {}",
            file.display(),
            out.display()
        );
        return;
    }
    let mut cmd = Command::new(&reducer);
    cmd.arg(file).arg(format!("--test={}", me.display()));
    if !cfg.c_engine {
        cmd.arg("--test-arg=--no-c");
    }
    cmd.arg("--test-arg=--cflags")
        .arg(format!("--test-arg={}", cfg.cflags));
    cmd.arg("--test-arg=--fails-like")
        .arg(format!("--test-arg={kind}"));
    cmd.arg("-o").arg(&out);
    match cmd.output() {
        Ok(o) if o.status.success() => {
            eprintln!("glow-smith: seed {} reduced to {}", f.seed, out.display())
        }
        Ok(o) => eprintln!(
            "glow-smith: seed {}: glow-reduce failed: {}",
            f.seed,
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => eprintln!("glow-smith: seed {}: cannot run glow-reduce: {e}", f.seed),
    }
}
