//! The ONNX conformance runner: every test folder of a suite is imported,
//! verified, run with its stored inputs and compared with its stored outputs
//! (`|got - ref| <= atol + rtol * |ref|`, rtol 1e-3 and atol 1e-7 unless the
//! folder's `tolerance.json` says otherwise). Tests whose model uses an op
//! outside the importer's set are reported as unsupported, not hidden, and
//! the number passed has a floor, so a regression to unsupported fails.
//!
//! Two cases, run by a `harness = false` libtest-mimic main so that a case
//! whose data is absent is *ignored* (decided before running, with the
//! reason printed), never passed:
//! - `onnx_node_and_pytorch_tests`: the ONNX node and PyTorch-converted
//!   tests vendored in `testdata/onnx` (always runs; missing data fails);
//! - `e2e_models`: the whole models of `$GLOW_CORPUS/e2e` (default
//!   `../shared/corpus`), only with `GLOW_CONFORMANCE_E2E=1`; ignored
//!   otherwise or when the corpus is absent.
//!
//! Runs on the reference interpreter (`GLOW_CONFORMANCE_ENGINE=c` for the C
//! backend). `GLOW_CONFORMANCE_FILTER=substr` narrows the run; `--nocapture`
//! shows the per-test report.

mod runner;

use libtest_mimic::{Arguments, Failed, Trial};
use runner::{Outcome, Suite};
use std::path::{Path, PathBuf};

/// The vendored ONNX tests (testdata/NOTICE.md).
fn vendored() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/onnx")
}

/// The optional large corpus: `$GLOW_CORPUS`, else `../shared/corpus`
/// beside the repository.
fn corpus() -> PathBuf {
    std::env::var_os("GLOW_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus"))
}

/// Runs every test folder of the suites `names` under `root`; a suite
/// folder that cannot be read is an error, not an empty suite.
fn run_suites(root: &Path, names: &[&str]) -> Result<Vec<(String, Outcome)>, String> {
    let filter = std::env::var("GLOW_CONFORMANCE_FILTER").unwrap_or_default();
    let suite = Suite::new(false);
    let mut results = Vec::new();
    for name in names {
        let dir = root.join(name);
        let rd = std::fs::read_dir(&dir)
            .map_err(|e| format!("cannot read the suite {}: {e}", dir.display()))?;
        let mut tests: Vec<_> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.join("model.onnx").is_file())
            .collect();
        tests.sort();
        for t in tests {
            let label = format!(
                "{name}/{}",
                t.file_name().unwrap_or_default().to_string_lossy()
            );
            if !label.contains(&filter) {
                continue;
            }
            results.push((label, suite.run_test(&t)));
        }
    }
    Ok(results)
}

/// The per-test report with a summary line last, the labels of real
/// failures, and the number passed.
fn report(results: &[(String, Outcome)]) -> (String, Vec<String>, usize) {
    use std::fmt::Write;
    let mut text = String::new();
    let mut failed = Vec::new();
    let (mut passed, mut unsupported) = (0, 0);
    for (label, o) in results {
        let _ = match o {
            Outcome::Pass { max_err } => {
                passed += 1;
                writeln!(text, "PASS {label} (max error {max_err:.3e})")
            }
            Outcome::Unsupported(why) => {
                unsupported += 1;
                writeln!(text, "UNSUPPORTED {label}: {why}")
            }
            Outcome::Fail(why) => {
                failed.push(label.clone());
                writeln!(text, "FAIL {label}: {why}")
            }
        };
    }
    let _ = writeln!(
        text,
        "conformance: {passed} passed, {} failed, {unsupported} unsupported",
        failed.len()
    );
    (text, failed, passed)
}

/// How many tests a run must hold and pass: an emptied folder, or an op
/// that regresses to unsupported, fails the run.
struct Floor {
    tests: usize,
    passed: usize,
}

/// Runs the suites and fails on any failure, or when fewer tests ran or
/// passed than `floor`. The report is printed in full with `--nocapture` or
/// on failure, else its summary.
fn check(root: &Path, names: &[&str], floor: Floor, verbose: bool) -> Result<(), Failed> {
    let results = run_suites(root, names)?;
    let (text, failed, passed) = report(&results);
    if verbose {
        print!("{text}");
    } else if let Some(summary) = text.lines().last() {
        println!("{summary}");
    }
    let filtered = std::env::var("GLOW_CONFORMANCE_FILTER").is_ok_and(|f| !f.is_empty());
    if !filtered && results.len() < floor.tests {
        return Err(format!(
            "only {} tests under {} (expected at least {})",
            results.len(),
            root.display(),
            floor.tests
        )
        .into());
    }
    if !filtered && passed < floor.passed {
        return Err(format!(
            "{text}only {passed} tests passed under {} (expected at least {}; see the UNSUPPORTED \
             and FAIL lines)",
            root.display(),
            floor.passed
        )
        .into());
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{text}{} conformance failures: {failed:?}", failed.len()).into())
    }
}

fn main() {
    let args = Arguments::from_args();
    let verbose = args.nocapture;
    let corpus = corpus();
    let e2e_ignored = if std::env::var_os("GLOW_CONFORMANCE_E2E").is_none() {
        Some("set GLOW_CONFORMANCE_E2E=1 to run the e2e models".to_string())
    } else if !corpus.join("e2e").is_dir() {
        Some(format!(
            "no corpus at {} (set GLOW_CORPUS)",
            corpus.join("e2e").display()
        ))
    } else {
        None
    };
    if let Some(why) = &e2e_ignored {
        println!("ignored: e2e_models: {why}");
    }
    let trials = vec![
        // 138 node + 41 pytorch folders are vendored; all but one pass (a
        // zero-size input). Raise the floor when support grows.
        Trial::test("onnx_node_and_pytorch_tests", move || {
            let floor = Floor {
                tests: 179,
                passed: 178,
            };
            check(&vendored(), &["node", "pytorch"], floor, verbose)
        }),
        Trial::test("e2e_models", move || {
            let floor = Floor {
                tests: 1,
                passed: 0,
            };
            check(&corpus, &["e2e"], floor, verbose)
        })
        .with_ignored_flag(e2e_ignored.is_some()),
    ];
    libtest_mimic::run(&args, trials).exit();
}
