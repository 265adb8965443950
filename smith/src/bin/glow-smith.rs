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

use clap::Parser;
use glow_smith::oracle::{check_text, failure_kind, run_seeds_parallel, Config, Failure};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

#[derive(Parser, Debug)]
#[command(
    name = "glow-smith",
    version,
    about = "Generate random valid .gir programs and run the differential oracle on them \
             (both engines, every pass, random pipelines; docs/fuzzing.md)"
)]
struct Cli {
    /// How many programs to check: the seeds S..S+N.
    #[arg(long, value_name = "N", default_value_t = 100)]
    count: u64,
    /// The first seed.
    #[arg(long, value_name = "S", default_value_t = 0)]
    seed: u64,
    /// Threads (default: the cores); the report is the same for any J.
    #[arg(long, short = 'j', value_name = "J")]
    jobs: Option<usize>,
    /// Run only the interpreter, not the C engine.
    #[arg(long)]
    no_c: bool,
    /// Programs per C build.
    #[arg(long, value_name = "B")]
    batch: Option<usize>,
    /// Random pass sequences per program.
    #[arg(long, value_name = "K")]
    sequences: Option<usize>,
    /// Where failing programs are written.
    #[arg(long, value_name = "DIR")]
    failures: Option<PathBuf>,
    /// Flags for the C compiler.
    #[arg(long, value_name = "FLAGS", allow_hyphen_values = true)]
    cflags: Option<String>,
    /// Do not reduce failing programs with glow-reduce.
    #[arg(long)]
    no_reduce: bool,
    /// Write the program of SEED to stdout and exit.
    #[arg(long, value_name = "SEED", conflicts_with = "fails_like")]
    print: Option<u64>,
    /// glow-reduce's interestingness test: exit 0 when FILE fails the oracle
    /// with a message of KIND, else 1.
    #[arg(long, num_args = 2, value_names = ["KIND", "FILE"])]
    fails_like: Option<Vec<String>>,
}

fn main() -> ExitCode {
    match real_main(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("glow-smith: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main(cli: Cli) -> Result<ExitCode, String> {
    let mut cfg = Config {
        c_engine: !cli.no_c,
        ..Config::default()
    };
    if let Some(b) = cli.batch {
        cfg.batch = b;
    }
    if let Some(k) = cli.sequences {
        cfg.sequences = k;
    }
    if let Some(d) = cli.failures {
        cfg.failure_dir = d;
    }
    if let Some(f) = cli.cflags {
        cfg.cflags = f;
    }
    let reduce = !cli.no_reduce;
    let jobs = cli
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let (count, seed) = (cli.count, cli.seed);
    if let Some(kf) = &cli.fails_like {
        let (kind, file) = (&kf[0], &kf[1]);
        let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {file}: {e}"))?;
        let same = matches!(check_text(&text, &cfg), Err(m) if failure_kind(&m) == *kind);
        return Ok(if same {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }
    if let Some(s) = cli.print {
        print!("{}", glow_smith::generate(s).text);
        return Ok(ExitCode::SUCCESS);
    }
    let end = seed
        .checked_add(count)
        .ok_or("--seed plus --count overflows")?;
    let failed = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let report = std::thread::scope(|s| {
        // A line every 10 s while it runs, so a long campaign shows progress.
        s.spawn(|| {
            let mut last = u64::MAX;
            let mut ticks = 0u32;
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(250));
                ticks += 1;
                let n = cfg.checked.load(Ordering::Relaxed);
                if ticks.is_multiple_of(40) && n != last {
                    last = n;
                    eprintln!(
                        "glow-smith: {n}/{count} seeds checked, {} failed so far",
                        failed.load(Ordering::Relaxed)
                    );
                }
            }
        });
        let report = run_seeds_parallel(seed..end, jobs, &cfg, |f| {
            failed.fetch_add(1, Ordering::Relaxed);
            eprintln!("glow-smith: seed {} FAILED: {}", f.seed, f.message);
            if let Some(p) = &f.file {
                eprintln!("glow-smith: program written to {}", p.display());
            }
        });
        done.store(true, Ordering::Relaxed);
        report
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
