//! glow-lit: runs the lit-style regression suite (see docs/testing.md).
//!
//! Thin command-line layer over the `glow_lit` library: argument parsing, tool lookup next to this
//! executable, streaming per-test lines in discovery order, the summary, and the exit code
//! (0 all good, 1 some test FAILED/XPASSED/UNRESOLVED/TIMED OUT, 2 usage or discovery error).

use anyhow::{bail, Context, Result};
use clap::Parser;
use glow_lit::report::{detail_block, result_line, summary, time_report, Counts};
use glow_lit::{discover, run_all, tools_in_dir, RunConfig};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Run lit-style tests (RUN lines + FileCheck) with a built-in shell.
#[derive(Parser, Debug)]
#[command(name = "glow-lit", version)]
struct Args {
    /// Test files or directories (default: the current directory).
    paths: Vec<PathBuf>,
    /// Number of tests to run in parallel (default: available cores).
    #[arg(short = 'j', long = "workers")]
    jobs: Option<usize>,
    /// Show the RUN lines and output of failing tests.
    #[arg(short, long)]
    verbose: bool,
    /// Show the RUN lines and output of every test.
    #[arg(short = 'a', long = "show-all")]
    all: bool,
    /// Only print failures and the summary.
    #[arg(short, long)]
    quiet: bool,
    /// Only run tests whose name (`suite :: path`) matches this regular expression.
    #[arg(long)]
    filter: Option<String>,
    /// Skip tests whose name matches this regular expression.
    #[arg(long, value_name = "RE")]
    filter_out: Option<String>,
    /// Per-test time limit in seconds (0 = none).
    #[arg(long, value_name = "S")]
    timeout: Option<f64>,
    /// Write a JUnit-style XML report to this file.
    #[arg(long, value_name = "F")]
    xunit_xml_output: Option<PathBuf>,
    /// Print the slowest tests and a histogram of test times.
    #[arg(long)]
    time_tests: bool,
    /// List the unsupported tests in the summary.
    #[arg(long)]
    show_unsupported: bool,
    /// Where `%t` files go (default: `lit-output` beside the directory of this executable).
    #[arg(long, value_name = "DIR")]
    output_dir: Option<PathBuf>,
    /// Use this executable for a tool name, e.g. `--tool glow-filecheck=/path/FileCheck`.
    #[arg(long, value_name = "NAME=PATH")]
    tool: Vec<String>,
    /// Instead of running the tests, rerun each test whose RUN lines name glow-opt passes once
    /// per pass with that pass left out, and report the tests that still pass (docs/testing.md).
    #[arg(long)]
    check_sensitivity: bool,
}

fn main() {
    let args = Args::parse();
    match run(args) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            err_line(&format!("glow-lit: error: {e:#}"));
            std::process::exit(2);
        }
    }
}

fn run(args: Args) -> Result<i32> {
    let exe = std::env::current_exe().context("cannot locate the glow-lit executable")?;
    let bin_dir = exe.parent().map(PathBuf::from).unwrap_or_default();
    let mut tools = tools_in_dir(&bin_dir);
    for t in &args.tool {
        let Some((name, path)) = t.split_once('=') else {
            bail!("--tool expects NAME=PATH, got `{t}`");
        };
        tools.insert(name.to_string(), std::path::absolute(path)?);
    }
    // Running old binaries would report results for code that is gone.
    for stale in glow_lit::stale::stale_tools(&tools) {
        err_line(&stale.warning());
    }
    let output_dir = match &args.output_dir {
        Some(d) => std::path::absolute(d)?,
        None => bin_dir.parent().unwrap_or(&bin_dir).join("lit-output"),
    };
    let mut cfg = RunConfig::new(tools, output_dir);
    cfg.timeout = args
        .timeout
        .filter(|t| *t > 0.0)
        .map(Duration::from_secs_f64);

    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let mut tests = discover(&paths)?;
    let discovered = tests.len();
    if let Some(f) = &args.filter {
        let re = regex::Regex::new(f).with_context(|| format!("invalid --filter regex `{f}`"))?;
        tests.retain(|t| re.is_match(&t.display_name()));
    }
    if let Some(f) = &args.filter_out {
        let re =
            regex::Regex::new(f).with_context(|| format!("invalid --filter-out regex `{f}`"))?;
        tests.retain(|t| !re.is_match(&t.display_name()));
    }
    if tests.is_empty() && discovered > 0 {
        err_line(&format!(
            "glow-lit: error: filter did not match any tests (of {discovered} discovered)"
        ));
        out_line("0 passed, 0 failed");
        return Ok(1);
    }
    if tests.is_empty() {
        err_line("glow-lit: error: did not discover any tests for the provided path(s)");
        out_line("0 passed, 0 failed");
        return Ok(1);
    }
    if args.check_sensitivity {
        return Ok(check_sensitivity(&tests, &cfg));
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    let total = tests.len();
    let stdout = std::io::stdout();
    if !args.quiet {
        out_line(&format!(
            "-- Testing: {total} tests, {} workers --",
            jobs.min(total)
        ));
    }
    let start = Instant::now();
    let results = run_all(&tests, &cfg, jobs, |i, test, r| {
        let mut out = stdout.lock();
        for w in &r.warnings {
            err_line(&format!("glow-lit: warning: {}: {w}", test.display_name()));
        }
        let failed = r.code.is_failure();
        if !args.quiet || failed {
            let _ = writeln!(out, "{}", result_line(test, r, i, total));
        }
        if args.all || (args.verbose && failed) {
            let _ = write!(out, "{}", detail_block(test, r));
        }
        let _ = out.flush();
    });
    let elapsed = start.elapsed();
    if let Some(path) = &args.xunit_xml_output {
        glow_ir::output::write_file(
            path,
            glow_lit::xunit::render(&tests, &results, elapsed).as_bytes(),
        )
        .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.time_tests {
        out_line(&time_report(&tests, &results));
    }
    out_text(&summary(&tests, &results, elapsed, args.show_unsupported));
    let counts = Counts::of(&results);
    out_line(&format!("\n{}", counts.final_line()));
    Ok(if counts.failed() { 1 } else { 0 })
}

/// `--check-sensitivity`: the findings of each test in order, then the
/// summary; 1 when a test is insensitive and not exempt.
fn check_sensitivity(tests: &[glow_lit::TestFile], cfg: &RunConfig) -> i32 {
    use glow_lit::sensitivity::{check_test, report_line, Finding};
    let (mut with_passes, mut mutants, mut insensitive, mut exempt) = (0, 0, 0, 0);
    for t in tests {
        match check_test(t, cfg) {
            Err(e) => err_line(&format!("glow-lit: error: {}: {e}", t.rel)),
            Ok((findings, n)) => {
                with_passes += (n > 0) as usize;
                mutants += n;
                for f in &findings {
                    match f {
                        Finding::Insensitive { .. } => insensitive += 1,
                        Finding::Exempt { .. } => exempt += 1,
                    }
                    out_line(&report_line(&t.rel, f));
                }
            }
        }
    }
    out_line(&format!(
        "sensitivity: {with_passes} tests with named passes, {mutants} mutants, {insensitive} insensitive, {exempt} exempt"
    ));
    (insensitive > 0) as i32
}

/// Writes to stdout, ignoring errors: a closed pipe (`glow-lit | head`) must not panic.
fn out_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn out_line(text: &str) {
    out_text(&format!("{text}\n"));
}

fn err_line(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
