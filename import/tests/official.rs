//! The official ONNX node suite, run the way a user runs a model: every
//! test of `$GLOW_CORPUS/onnx/official-in-scope.json` (default corpus
//! `../shared/corpus`) is imported from its `model.onnx` as `glow-import`
//! does, every graph input that is not an initializer is fed at run time
//! (never bound as a constant), and the outputs are compared with ONNX's
//! rule `|got - ref| <= atol + rtol * |ref|` (rtol 1e-3, atol 1e-7).
//!
//! In process through the libraries, one test at a time, each on a thread
//! with a time limit so a hang or a panic is a failure that names the test
//! rather than the end of the run. Prints `N passed, N failed, N
//! unsupported` and a per-op table (each test counts once for every op type
//! its graph uses).
//!
//! Only with `GLOW_CONFORMANCE_OFFICIAL=1` (minutes in release, much longer
//! in debug); ignored otherwise or when the corpus is absent.
//! `GLOW_CONFORMANCE_ENGINE=c` runs the C engine, `GLOW_CONFORMANCE_FILTER`
//! narrows the run, `GLOW_OFFICIAL_REPORT=FILE` writes the per-test report,
//! `GLOW_OFFICIAL_TIMEOUT` is the limit per test in seconds (default 120).
//! The case fails on a panic, a time-out, a listed test missing from the
//! corpus, or fewer passes than `MIN_PASSED` (the recorded figure).
//!
//! `GLOW_CONFORMANCE_BIND=1` runs the suite as a user who freezes
//! shape-setting inputs with `glow-import --bind`: an input the importer
//! needs as a constant (a Reshape shape, Resize scales, reduction axes) is
//! bound to the test's value. Its figure is reported apart (the suite's
//! count stays the run-time one) and `MIN_PASSED` does not apply to it.

mod runner;

use glow_import::onnx::decode_model;
use libtest_mimic::{Arguments, Failed, Trial};
use runner::{Outcome, Suite};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Passes recorded for the interpreter on the whole in-scope list; the run
/// fails below it so a regression cannot go unnoticed.
const MIN_PASSED: usize = 1115;

fn corpus() -> PathBuf {
    std::env::var_os("GLOW_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"))
}

/// The in-scope test names (a JSON array of strings).
fn in_scope(corpus: &Path) -> Result<Vec<String>, String> {
    let path = corpus.join("onnx/official-in-scope.json");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The distinct op types of a model's graph, `?` when it does not decode.
fn op_types(dir: &Path) -> BTreeSet<String> {
    let ops = std::fs::read(dir.join("model.onnx"))
        .ok()
        .and_then(|b| decode_model(&b).ok())
        .and_then(|m| m.graph)
        .map(|g| g.node.into_iter().map(|n| n.op_type).collect());
    ops.unwrap_or_else(|| BTreeSet::from(["?".to_string()]))
}

/// One test on its own thread: a panic or a time-out becomes a failure.
fn run_one(dir: PathBuf, timeout: Duration) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let spawned = std::thread::Builder::new()
        .stack_size(64 << 20)
        .spawn(move || {
            let bind = std::env::var("GLOW_CONFORMANCE_BIND").is_ok_and(|v| v == "1");
            let suite = Suite::new(!bind);
            let _ = tx.send(suite.run_test(&dir));
        });
    if let Err(e) = spawned {
        return Outcome::Fail(format!("cannot start a thread: {e}"));
    }
    match rx.recv_timeout(timeout) {
        Ok(o) => o,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            Outcome::Fail(format!("CRASH: timed out after {}s", timeout.as_secs()))
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => Outcome::Fail("CRASH: panicked".into()),
    }
}

#[derive(Default)]
struct Counts {
    passed: usize,
    failed: usize,
    unsupported: usize,
}

fn check(corpus: &Path, verbose: bool) -> Result<(), Failed> {
    let names = in_scope(corpus)?;
    let root = corpus.join("onnx/official");
    let filter = std::env::var("GLOW_CONFORMANCE_FILTER").unwrap_or_default();
    let timeout = std::env::var("GLOW_OFFICIAL_TIMEOUT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    let timeout = Duration::from_secs(timeout);
    let mut text = String::new();
    let mut total = Counts::default();
    let mut per_op: BTreeMap<String, Counts> = BTreeMap::new();
    let mut crashes = Vec::new();
    let mut missing = Vec::new();
    for name in names.iter().filter(|n| n.contains(&filter)) {
        let dir = root.join(name);
        if !dir.join("model.onnx").is_file() {
            missing.push(name.clone());
            continue;
        }
        let ops = op_types(&dir);
        let list = ops.iter().cloned().collect::<Vec<_>>().join(",");
        let o = run_one(dir, timeout);
        let pick = |c: &mut Counts| match &o {
            Outcome::Pass { .. } => c.passed += 1,
            Outcome::Fail(_) => c.failed += 1,
            Outcome::Unsupported(_) => c.unsupported += 1,
        };
        pick(&mut total);
        for op in &ops {
            pick(per_op.entry(op.clone()).or_default());
        }
        let _ = match &o {
            Outcome::Pass { max_err } => {
                writeln!(text, "PASS {name} [{list}] (max error {max_err:.3e})")
            }
            Outcome::Unsupported(why) => writeln!(text, "UNSUPPORTED {name} [{list}]: {why}"),
            Outcome::Fail(why) => {
                if why.starts_with("CRASH") {
                    crashes.push(name.clone());
                }
                writeln!(text, "FAIL {name} [{list}]: {why}")
            }
        };
    }
    let mut table = String::from("op type                          passed  failed  unsupported\n");
    for (op, c) in &per_op {
        let _ = writeln!(
            table,
            "{op:<32} {:>6}  {:>6}  {:>11}",
            c.passed, c.failed, c.unsupported
        );
    }
    let summary = format!(
        "official: {} passed, {} failed, {} unsupported (of {} in scope)",
        total.passed,
        total.failed,
        total.unsupported,
        names.len()
    );
    if let Some(path) = std::env::var_os("GLOW_OFFICIAL_REPORT") {
        std::fs::write(&path, format!("{text}\n{table}\n{summary}\n"))
            .map_err(|e| format!("{}: {e}", Path::new(&path).display()))?;
    }
    if verbose {
        print!("{text}\n{table}\n");
    }
    println!("{summary}");
    if !missing.is_empty() {
        return Err(format!("{} listed tests are missing: {missing:?}", missing.len()).into());
    }
    if !crashes.is_empty() {
        return Err(format!("{} tests crashed or hung: {crashes:?}", crashes.len()).into());
    }
    let bind = std::env::var("GLOW_CONFORMANCE_BIND").is_ok_and(|v| v == "1");
    if filter.is_empty() && !bind && total.passed < MIN_PASSED {
        return Err(format!("{summary}: fewer than the recorded {MIN_PASSED} passes").into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let verbose = args.nocapture;
    let corpus = corpus();
    let ignored = if std::env::var_os("GLOW_CONFORMANCE_OFFICIAL").is_none() {
        Some("set GLOW_CONFORMANCE_OFFICIAL=1 to run the official ONNX suite".to_string())
    } else if !corpus.join("onnx/official-in-scope.json").is_file() {
        Some(format!(
            "no official suite at {} (set GLOW_CORPUS)",
            corpus.join("onnx/official").display()
        ))
    } else {
        None
    };
    if let Some(why) = &ignored {
        println!("ignored: official_suite: {why}");
    }
    let trials = vec![
        Trial::test("official_suite", move || check(&corpus, verbose))
            .with_ignored_flag(ignored.is_some()),
    ];
    libtest_mimic::run(&args, trials).exit();
}
