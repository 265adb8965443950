//! Rendering results the way LLVM lit does: one `CODE: suite :: path (i of n)` line per test,
//! the `*** TEST '...' FAILED ***` blocks, the summary block, the `--time-tests` report, and the
//! closing `N passed, N failed[, N skipped]` line.

use crate::discovery::TestFile;
use crate::runner::{ResultCode, TestResult};
use std::fmt::Write;
use std::time::Duration;

/// `PASS: glow :: a/b.gir (3 of 120)`.
pub fn result_line(test: &TestFile, r: &TestResult, index: usize, total: usize) -> String {
    format!(
        "{}: {} ({} of {})",
        r.code.name(),
        test.display_name(),
        index + 1,
        total
    )
}

/// The detailed block shown by `-v` for a failure (or by `-a` for any test).
pub fn detail_block(test: &TestFile, r: &TestResult) -> String {
    let mut s = String::new();
    let name = test.display_name();
    let what = if r.code.is_failure() {
        "FAILED"
    } else {
        r.code.name()
    };
    let _ = writeln!(
        s,
        "******************** TEST '{name}' {what} ********************"
    );
    if matches!(
        r.code,
        ResultCode::Fail
            | ResultCode::Xfail
            | ResultCode::Timeout
            | ResultCode::Xpass
            | ResultCode::Pass
    ) {
        let _ = writeln!(s, "Exit Code: {}\n", r.exit_code);
        let _ = writeln!(s, "Command Output (stdout):\n--");
        s.push_str(&r.output);
        let _ = writeln!(s, "--\n");
    } else {
        s.push_str(&r.output);
    }
    let _ = writeln!(s, "********************");
    s
}

/// Tallies for the summary.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub pass: usize,
    pub fail: usize,
    pub xfail: usize,
    pub xpass: usize,
    pub unsupported: usize,
    pub unresolved: usize,
    pub timeout: usize,
}

impl Counts {
    /// Counts the results.
    pub fn of(results: &[TestResult]) -> Counts {
        let mut c = Counts::default();
        for r in results {
            *match r.code {
                ResultCode::Pass => &mut c.pass,
                ResultCode::Fail => &mut c.fail,
                ResultCode::Xfail => &mut c.xfail,
                ResultCode::Xpass => &mut c.xpass,
                ResultCode::Unsupported => &mut c.unsupported,
                ResultCode::Unresolved => &mut c.unresolved,
                ResultCode::Timeout => &mut c.timeout,
            } += 1;
        }
        c
    }

    /// Whether the run failed (FAIL, XPASS, UNRESOLVED or TIMEOUT).
    pub fn failed(&self) -> bool {
        self.fail + self.xpass + self.unresolved + self.timeout > 0
    }

    /// The closing line: `N passed, N failed` plus `, N skipped` when some were skipped.
    /// Expected failures count as passed; every failing verdict counts as failed.
    pub fn final_line(&self) -> String {
        let passed = self.pass + self.xfail;
        let failed = self.fail + self.xpass + self.unresolved + self.timeout;
        let mut s = format!("{passed} passed, {failed} failed");
        if self.unsupported > 0 {
            let _ = write!(s, ", {} skipped", self.unsupported);
        }
        s
    }
}

/// lit's summary: lists of failing tests by kind, testing time, and the per-verdict counts.
pub fn summary(
    tests: &[TestFile],
    results: &[TestResult],
    elapsed: Duration,
    show_unsupported: bool,
) -> String {
    let mut s = String::new();
    let total = results.len();
    let mut lists = vec![
        (ResultCode::Timeout, "Timed Out Tests"),
        (ResultCode::Unresolved, "Unresolved Tests"),
        (ResultCode::Xpass, "Unexpectedly Passed Tests"),
        (ResultCode::Fail, "Failed Tests"),
    ];
    if show_unsupported {
        lists.insert(0, (ResultCode::Unsupported, "Unsupported Tests"));
    }
    for (code, title) in lists {
        let names: Vec<String> = tests
            .iter()
            .zip(results)
            .filter(|(_, r)| r.code == code)
            .map(|(t, _)| t.display_name())
            .collect();
        if names.is_empty() {
            continue;
        }
        let _ = writeln!(s, "********************\n{title} ({}):", names.len());
        for n in names {
            let _ = writeln!(s, "  {n}");
        }
        s.push('\n');
    }
    let _ = writeln!(s, "\nTesting Time: {:.2}s\n", elapsed.as_secs_f64());
    let _ = writeln!(s, "Total Discovered Tests: {total}");
    let c = Counts::of(results);
    let rows = [
        ("Unsupported", c.unsupported),
        ("Passed", c.pass),
        ("Expectedly Failed", c.xfail),
        ("Unresolved", c.unresolved),
        ("Timed Out", c.timeout),
        ("Failed", c.fail),
        ("Unexpectedly Passed", c.xpass),
    ];
    let width = rows
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(l, _)| l.len())
        .max()
        .unwrap_or(0);
    for (label, n) in rows {
        if n > 0 {
            let pct = 100.0 * n as f64 / total.max(1) as f64;
            let _ = writeln!(s, "  {label:<width$}: {n} ({pct:.2}%)");
        }
    }
    s
}

/// The `--time-tests` report: the slowest tests and a histogram of test times.
pub fn time_report(tests: &[TestFile], results: &[TestResult]) -> String {
    let mut s = String::new();
    let mut timed: Vec<(f64, String)> = tests
        .iter()
        .zip(results)
        .map(|(t, r)| (r.elapsed.as_secs_f64(), t.display_name()))
        .collect();
    // Slowest first; ties by name so the report is stable.
    timed.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let rule = "-".repeat(74);
    let _ = writeln!(s, "Slowest Tests:\n{rule}");
    for (t, name) in timed.iter().take(20) {
        let _ = writeln!(s, "{t:.4}s: {name}");
    }
    if timed.is_empty() {
        return s;
    }
    let max = timed[0].0.max(1e-6);
    const BUCKETS: usize = 10;
    let mut counts = [0usize; BUCKETS];
    for (t, _) in &timed {
        let b = ((t / max) * BUCKETS as f64) as usize;
        counts[b.min(BUCKETS - 1)] += 1;
    }
    let most = counts.iter().copied().max().unwrap_or(1).max(1);
    let _ = writeln!(s, "\nTests Times:\n{rule}");
    let _ = writeln!(s, "[    Range    ] :: [{:^40}] :: [Count]", "Percentage");
    let _ = writeln!(s, "{rule}");
    for (i, n) in counts.iter().enumerate() {
        let lo = max * i as f64 / BUCKETS as f64;
        let hi = max * (i + 1) as f64 / BUCKETS as f64;
        let bar = "*".repeat((n * 40).div_ceil(most));
        let _ = writeln!(
            s,
            "[{lo:>5.3}s,{hi:>5.3}s) :: [{bar:<40}] :: [{n:>5}/{:>5}]",
            timed.len()
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(code: ResultCode) -> TestResult {
        TestResult {
            code,
            output: String::new(),
            exit_code: 0,
            elapsed: Duration::ZERO,
            warnings: vec![],
        }
    }

    #[test]
    fn final_line_counts() {
        let c = Counts::of(&[
            r(ResultCode::Pass),
            r(ResultCode::Xfail),
            r(ResultCode::Fail),
        ]);
        assert_eq!(c.final_line(), "2 passed, 1 failed");
        assert!(c.failed());
        let c = Counts::of(&[r(ResultCode::Pass), r(ResultCode::Unsupported)]);
        assert_eq!(c.final_line(), "1 passed, 0 failed, 1 skipped");
        assert!(!c.failed());
    }
}
