//! Running tests: one test file to one [`TestResult`], and many in parallel with results handed
//! back in discovery order whatever order they finish in.
//!
//! A test is UNRESOLVED when it has no RUN line or a RUN line does not parse, UNSUPPORTED when its
//! directory or its `REQUIRES:`/`UNSUPPORTED:` say so, and otherwise PASS/FAIL (XFAIL/XPASS when an
//! `XFAIL:` applies) from the RUN lines' status, or TIMEOUT when the time limit killed it.

use crate::discovery::TestFile;
use crate::script::{checker_warning, Script, Substitutions, Xfail};
use crate::shell::{parse, Shell, Tools};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A test's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResultCode {
    Pass,
    Fail,
    Xfail,
    Xpass,
    Unsupported,
    Unresolved,
    Timeout,
}

impl ResultCode {
    /// lit's spelling, e.g. `PASS`.
    pub fn name(self) -> &'static str {
        match self {
            ResultCode::Pass => "PASS",
            ResultCode::Fail => "FAIL",
            ResultCode::Xfail => "XFAIL",
            ResultCode::Xpass => "XPASS",
            ResultCode::Unsupported => "UNSUPPORTED",
            ResultCode::Unresolved => "UNRESOLVED",
            ResultCode::Timeout => "TIMEOUT",
        }
    }

    /// Whether this verdict makes the run fail.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            ResultCode::Fail | ResultCode::Xpass | ResultCode::Unresolved | ResultCode::Timeout
        )
    }
}

/// The outcome of one test.
#[derive(Debug, Clone)]
pub struct TestResult {
    pub code: ResultCode,
    /// The lit-style transcript (RUN lines, commands, their output) or the reason for the verdict.
    pub output: String,
    /// Status of the failing RUN line (0 when none failed).
    pub exit_code: i32,
    pub elapsed: Duration,
    /// Lint findings, e.g. CHECK lines that nothing checks.
    pub warnings: Vec<String>,
}

/// What every test of a run shares.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// Tool name to executable.
    pub tools: Tools,
    /// Features available to all tests (added to the suite's and directory's).
    pub features: BTreeSet<String>,
    /// Per-test time limit.
    pub timeout: Option<Duration>,
    /// Where `%t` paths and working directories are made.
    pub output_dir: PathBuf,
}

impl RunConfig {
    /// A config with the standard features of this machine and the given tools; `FileCheck` is
    /// made an alias of `glow-filecheck`, and `llvm-filecheck` is added when LLVM's is installed;
    /// each optional tool given is a feature.
    pub fn new(mut tools: Tools, output_dir: PathBuf) -> RunConfig {
        let mut features: BTreeSet<String> = ["glow-filecheck", "glow-lit"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if let Some(fc) = tools.get("glow-filecheck").cloned() {
            tools.entry("FileCheck".into()).or_insert(fc);
        }
        if let Some(llvm) = crate::features::find_llvm_filecheck() {
            features.insert("llvm-filecheck".into());
            tools.entry("llvm-filecheck".into()).or_insert(llvm);
        }
        if crate::features::find_on_path("cc").is_some() {
            features.insert("system-cc".into());
        }
        if crate::features::find_on_path("dot").is_some() {
            features.insert("graphviz".into());
        }
        for name in crate::OPTIONAL_TOOL_NAMES {
            if tools.contains_key(name) {
                features.insert(name.to_string());
            }
        }
        RunConfig {
            tools,
            features,
            timeout: None,
            output_dir,
        }
    }

    /// The features a given test sees.
    pub fn features_for(&self, test: &TestFile) -> BTreeSet<String> {
        self.features.union(&test.features).cloned().collect()
    }
}

/// Decides, without running anything, whether a test would be UNSUPPORTED; returns the reason.
pub fn unsupported_reason(test: &TestFile, script: &Script, cfg: &RunConfig) -> Option<String> {
    if test.unsupported {
        return Some("Test is in a directory marked unsupported".into());
    }
    let features = cfg.features_for(test);
    let missing: Vec<&str> = script
        .requires
        .iter()
        .filter(|(_, e)| !e.eval(&features))
        .map(|(s, _)| s.as_str())
        .collect();
    if !missing.is_empty() {
        return Some(format!(
            "Test requires the following unavailable features: {}",
            missing.join(", ")
        ));
    }
    let hit: Vec<&str> = script
        .unsupported
        .iter()
        .filter(|(_, e)| e.eval(&features))
        .map(|(s, _)| s.as_str())
        .collect();
    if !hit.is_empty() {
        return Some(format!(
            "Test does not support the following features: {}",
            hit.join(", ")
        ));
    }
    None
}

/// Reads and parses a test's directives.
pub fn load_script(test: &TestFile) -> Result<(String, Script), String> {
    let bytes = std::fs::read(&test.path)
        .map_err(|e| format!("cannot read {}: {e}", test.path.display()))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let script = Script::parse(&text)?;
    Ok((text, script))
}

/// Runs one test.
pub fn run_test(test: &TestFile, cfg: &RunConfig) -> TestResult {
    let start = Instant::now();
    let mut r = run_inner(test, cfg, start);
    r.elapsed = start.elapsed();
    r
}

fn verdict(code: ResultCode, output: String) -> TestResult {
    TestResult {
        code,
        output,
        exit_code: 0,
        elapsed: Duration::ZERO,
        warnings: Vec::new(),
    }
}

fn run_inner(test: &TestFile, cfg: &RunConfig, start: Instant) -> TestResult {
    let (text, script) = match load_script(test) {
        Ok(x) => x,
        Err(e) => {
            return verdict(
                ResultCode::Unresolved,
                format!("Test has a malformed directive: {e}\n"),
            )
        }
    };
    if let Some(reason) = unsupported_reason(test, &script, cfg) {
        return verdict(ResultCode::Unsupported, format!("{reason}\n"));
    }
    if script.run_lines.is_empty() {
        return verdict(ResultCode::Unresolved, "Test has no 'RUN:' line\n".into());
    }
    let features = cfg.features_for(test);
    let xfail = script.xfail.iter().any(|x| match x {
        Xfail::Always => true,
        Xfail::When(_, e) => e.eval(&features),
    });
    let warnings = checker_warning(&text, &script.run_lines)
        .into_iter()
        .collect();

    // %t lives in a mirror of the suite tree; the commands run in its directory.
    let temp = cfg.output_dir.join(format!("{}.tmp", test.rel));
    let subs = Substitutions::new(&test.path, &temp);
    let cwd = temp
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| cfg.output_dir.clone());
    if let Err(e) = std::fs::create_dir_all(&cwd) {
        return verdict(
            ResultCode::Unresolved,
            format!("cannot create {}: {e}\n", cwd.display()),
        );
    }
    let mut lines = Vec::new();
    for run in &script.run_lines {
        let expanded = subs.apply(&run.text);
        match parse(&expanded) {
            Ok(l) => lines.push((run.line, expanded, l)),
            Err(e) => {
                let msg = format!(
                    "shell parser error on RUN line {}: {e}\n  {expanded}\n",
                    run.line
                );
                let mut r = verdict(ResultCode::Unresolved, msg);
                r.warnings = warnings;
                return r;
            }
        }
    }
    let deadline = cfg.timeout.map(|t| start + t);
    let mut shell = Shell::new(cwd, &cfg.tools, deadline);
    let mut exit_code = 0;
    for (lineno, expanded, line) in &lines {
        shell
            .log
            .push_str(&format!("# RUN: at line {lineno}\n{expanded}\n"));
        let st = shell.run(line);
        if shell.timed_out {
            let secs = cfg.timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0);
            shell
                .log
                .push_str(&format!("\nReached timeout of {secs} seconds\n"));
            exit_code = st.code;
            break;
        }
        if !st.success() {
            exit_code = st.code;
            break;
        }
    }
    let code = match (shell.timed_out, exit_code == 0, xfail) {
        (true, _, _) => ResultCode::Timeout,
        (false, true, false) => ResultCode::Pass,
        (false, true, true) => ResultCode::Xpass,
        (false, false, false) => ResultCode::Fail,
        (false, false, true) => ResultCode::Xfail,
    };
    TestResult {
        code,
        output: shell.log,
        exit_code,
        elapsed: Duration::ZERO,
        warnings,
    }
}

/// Runs `tests` on `jobs` threads. `on_result(index, test, result)` is called in index order, as
/// soon as every earlier test has finished, so streaming output is deterministic.
pub fn run_all(
    tests: &[TestFile],
    cfg: &RunConfig,
    jobs: usize,
    mut on_result: impl FnMut(usize, &TestFile, &TestResult),
) -> Vec<TestResult> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, TestResult)>();
    let mut done: Vec<Option<TestResult>> = vec![None; tests.len()];
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, tests.len().max(1)) {
            let tx = tx.clone();
            let next = &next;
            s.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(test) = tests.get(i) else { break };
                // A bug in the runner must not take the whole run down: report it on the test.
                let r =
                    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_test(test, cfg)))
                        .unwrap_or_else(|_| {
                            verdict(
                                ResultCode::Unresolved,
                                "internal error in glow-lit (panic)\n".into(),
                            )
                        });
                if tx.send((i, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut emitted = 0;
        for (i, r) in rx {
            done[i] = Some(r);
            while let Some(Some(r)) = done.get(emitted) {
                on_result(emitted, &tests[emitted], r);
                emitted += 1;
            }
        }
    });
    done.into_iter()
        .map(|r| r.unwrap_or_else(|| verdict(ResultCode::Unresolved, "test did not run\n".into())))
        .collect()
}
