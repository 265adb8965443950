//! `cargo test` entry for the lit suite under `test/`: one libtest trial per test file.
//!
//! Trial names come from the path relative to `test/`: `/` becomes `::`, `-` and `.` become `_`
//! and the extension is dropped, so `test/passes/share-buffers/basic.gir` is
//! `passes::share_buffers::basic` and `cargo test share_buffers` or `cargo test --test lit
//! filecheck::` select files. UNSUPPORTED files are ignored trials; a failure shows the same report
//! as `glow-lit -v`. One more trial, `lit_binary::self_tests`, drives the `glow-lit` executable
//! itself over `test/lit`.

use glow_lit::report::detail_block;
use glow_lit::runner::{load_script, unsupported_reason};
use glow_lit::{discover, run_test, tools_in_dir, RunConfig, TestFile, Tools};
use libtest_mimic::{Arguments, Failed, Trial};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn main() {
    let args = Arguments::from_args();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test");
    let cfg = Arc::new(run_config());
    let tests = match discover(std::slice::from_ref(&root)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("lit suite discovery failed: {e}");
            std::process::exit(101);
        }
    };
    let names = trial_names(&tests);
    let mut trials: Vec<Trial> = tests
        .into_iter()
        .zip(names)
        .map(|(test, name)| {
            let ignored = load_script(&test)
                .ok()
                .and_then(|(_, s)| unsupported_reason(&test, &s, &cfg))
                .is_some();
            let cfg = Arc::clone(&cfg);
            Trial::test(name, move || run_one(&test, &cfg)).with_ignored_flag(ignored)
        })
        .collect();
    trials.push(Trial::test("lit_binary::self_tests", move || {
        self_tests(&root)
    }));
    libtest_mimic::run(&args, trials).exit();
}

fn run_config() -> RunConfig {
    let lit = PathBuf::from(env!("CARGO_BIN_EXE_glow-lit"));
    // Every tool built next to glow-lit (glow-run etc. once they exist), then the known ones.
    let mut tools: Tools = lit.parent().map(tools_in_dir).unwrap_or_default();
    tools.insert("glow-opt".into(), env!("CARGO_BIN_EXE_glow-opt").into());
    tools.insert(
        "glow-filecheck".into(),
        env!("CARGO_BIN_EXE_glow-filecheck").into(),
    );
    tools.insert("glow-lit".into(), lit);
    tools.insert(
        "glow-reduce".into(),
        env!("CARGO_BIN_EXE_glow-reduce").into(),
    );
    tools.insert("glow-train".into(), env!("CARGO_BIN_EXE_glow-train").into());
    tools.insert("glow-lsp".into(), env!("CARGO_BIN_EXE_glow-lsp").into());
    tools.insert(
        "glow-update-checks".into(),
        env!("CARGO_BIN_EXE_glow-update-checks").into(),
    );
    // Developer override, e.g. to run the suite with LLVM's checker: GLOW_LIT_FILECHECK=/path/FileCheck.
    if let Some(fc) = std::env::var_os("GLOW_LIT_FILECHECK") {
        tools.insert("glow-filecheck".into(), fc.clone().into());
        tools.insert("FileCheck".into(), fc.into());
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lit-output");
    let mut cfg = RunConfig::new(tools, out);
    let secs = std::env::var("GLOW_LIT_TIMEOUT")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(120.0);
    cfg.timeout = (secs > 0.0).then(|| Duration::from_secs_f64(secs));
    cfg
}

fn run_one(test: &TestFile, cfg: &RunConfig) -> Result<(), Failed> {
    let r = run_test(test, cfg);
    for w in &r.warnings {
        eprintln!("warning: {}: {w}", test.display_name());
    }
    if r.code.is_failure() {
        return Err(format!(
            "{}: {}\n{}",
            r.code.name(),
            test.display_name(),
            detail_block(test, &r)
        )
        .into());
    }
    Ok(())
}

/// `a/b-c/d.gir` -> `a::b_c::d`; the extension stays (as `_gir`) only where dropping it would make
/// two files share a name.
fn trial_names(tests: &[TestFile]) -> Vec<String> {
    let short = |rel: &str| {
        let stem = match rel.rsplit_once('.') {
            Some((s, _)) if !s.ends_with('/') && !s.is_empty() => s,
            _ => rel,
        };
        mangle(stem)
    };
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for t in tests {
        *seen.entry(short(&t.rel)).or_default() += 1;
    }
    tests
        .iter()
        .map(|t| {
            let s = short(&t.rel);
            if seen[&s] > 1 {
                mangle(&t.rel)
            } else {
                s
            }
        })
        .collect()
}

fn mangle(path: &str) -> String {
    path.split('/')
        .map(|p| p.replace(['-', '.'], "_"))
        .collect::<Vec<_>>()
        .join("::")
}

/// Runs the glow-lit executable over the runner's own tests, as a user would.
fn self_tests(root: &Path) -> Result<(), Failed> {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lit-self");
    let result = std::process::Command::new(env!("CARGO_BIN_EXE_glow-lit"))
        .arg(root.join("lit"))
        .args(["-q", "-v", "--timeout", "120", "--output-dir"])
        .arg(&out)
        .output()
        .map_err(|e| format!("cannot run glow-lit: {e}"))?;
    if result.status.success() {
        Ok(())
    } else {
        Err(format!(
            "glow-lit {} exited with {}\n{}{}",
            root.join("lit").display(),
            result.status,
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        )
        .into())
    }
}
