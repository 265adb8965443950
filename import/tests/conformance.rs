//! The ONNX conformance runner: every test folder under
//! `../shared/corpus/onnx/node`, `onnx/pytorch` and `e2e` is imported,
//! verified, run with its stored inputs and compared with its stored outputs
//! (`|got - ref| <= atol + rtol * |ref|`, rtol 1e-3 and atol 1e-7 unless the
//! folder's `tolerance.json` says otherwise). Tests whose model uses an op
//! outside the importer's set are reported as unsupported, not hidden.
//!
//! Runs on the reference interpreter (`GLOW_CONFORMANCE_ENGINE=c` for the C
//! backend). The node and
//! pytorch suites run in `cargo test`; e2e models only with
//! `GLOW_CONFORMANCE_E2E=1 cargo test -p glow-import --test conformance -- --nocapture`.
//! `GLOW_CONFORMANCE_FILTER=substr` narrows the run.

mod runner;

use runner::{Outcome, Suite};

fn corpus() -> Option<std::path::PathBuf> {
    let root = std::env::var_os("GLOW_CORPUS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus")
        });
    root.is_dir().then_some(root)
}

fn run_suites(names: &[&str]) -> Vec<(String, Outcome)> {
    let Some(root) = corpus() else {
        eprintln!("conformance: no corpus found (set GLOW_CORPUS); skipped");
        return Vec::new();
    };
    let filter = std::env::var("GLOW_CONFORMANCE_FILTER").unwrap_or_default();
    let suite = Suite::new();
    let mut results = Vec::new();
    for name in names {
        let dir = root.join(name);
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
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
    results
}

/// Prints the report; returns the labels of real failures.
fn report(results: &[(String, Outcome)]) -> Vec<String> {
    let mut failed = Vec::new();
    let (mut passed, mut unsupported) = (0, 0);
    for (label, o) in results {
        match o {
            Outcome::Pass { max_err } => {
                passed += 1;
                println!("PASS {label} (max error {max_err:.3e})");
            }
            Outcome::Unsupported(why) => {
                unsupported += 1;
                println!("UNSUPPORTED {label}: {why}");
            }
            Outcome::Fail(why) => {
                failed.push(label.clone());
                println!("FAIL {label}: {why}");
            }
        }
    }
    if !failed.is_empty() {
        println!("failures:");
        for (label, o) in results {
            if let Outcome::Fail(why) = o {
                println!("  {label}: {why}");
            }
        }
    }
    println!(
        "conformance: {passed} passed, {} failed, {unsupported} unsupported",
        failed.len()
    );
    failed
}

#[test]
fn onnx_node_and_pytorch_tests() {
    let results = run_suites(&["onnx/node", "onnx/pytorch"]);
    let failed = report(&results);
    assert!(
        failed.is_empty(),
        "{} conformance failures: {failed:?}",
        failed.len()
    );
}

#[test]
fn e2e_models() {
    if std::env::var_os("GLOW_CONFORMANCE_E2E").is_none() {
        eprintln!("e2e models skipped: set GLOW_CONFORMANCE_E2E=1");
        return;
    }
    let results = run_suites(&["e2e"]);
    let failed = report(&results);
    assert!(
        failed.is_empty(),
        "{} e2e failures: {failed:?}",
        failed.len()
    );
}
