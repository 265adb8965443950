//! Regression test over Glow's 79 allocator traces, vendored in
//! `testdata/glow-traces` (testdata/NOTICE.md): every model must plan
//! validly, never above the arena recorded in `glow_traces.expected`, and
//! within the time budget. The data is part of the repository, so a missing
//! file fails the test. `GLOW_BLESS=1` rewrites the expected file.

use glow_passes::planner::{self, trace, PlanOptions};
use std::path::PathBuf;
use std::time::Instant;

fn traces() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/glow-traces/MemoryAllocatorTestModels.txt")
}

#[test]
fn glow_traces_plan_no_worse_than_expected() {
    let path = traces();
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read the vendored traces {}: {e}", path.display()));
    let models = trace::parse(&text).expect("the vendored trace parses");
    assert_eq!(models.len(), 79);
    let expected_path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/glow_traces.expected");
    let expected_text = std::fs::read_to_string(&expected_path).unwrap_or_default();
    let expected: Vec<(&str, u64)> = expected_text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (m, a) = l.rsplit_once(' ')?;
            Some((m, a.parse().ok()?))
        })
        .collect();
    let mut blessed = String::from(
        "# Arena bytes per model of testdata/glow-traces (64-byte alignment) as planned\n\
         # when this file was last blessed (GLOW_BLESS=1). The test fails if any model plans worse.\n",
    );
    let mut failures = Vec::new();
    let mut at_bound = 0;
    for m in &models {
        let opts = PlanOptions {
            align: m.align,
            ..PlanOptions::default()
        };
        let t0 = Instant::now();
        let plan = planner::plan(&m.buffers, &opts);
        let secs = t0.elapsed().as_secs_f64();
        assert_eq!(
            planner::check(&m.buffers, &plan.offsets, opts.align),
            None,
            "{}",
            m.name
        );
        at_bound += usize::from(plan.arena == plan.lower_bound);
        blessed += &format!("{} {}\n", m.name, plan.arena);
        // Generous: debug builds on a loaded 2-core machine.
        if secs > 5.0 {
            failures.push(format!("{}: planning took {secs:.2} s", m.name));
        }
        match expected.iter().find(|(n, _)| *n == m.name) {
            Some(&(_, want)) if plan.arena > want => failures.push(format!(
                "{}: arena {} is worse than the expected {want} (bound {})",
                m.name, plan.arena, plan.lower_bound
            )),
            Some(_) => {}
            None => failures.push(format!("{}: missing from glow_traces.expected", m.name)),
        }
    }
    if std::env::var_os("GLOW_BLESS").is_some() {
        std::fs::write(&expected_path, blessed).expect("write the expected file");
        return;
    }
    eprintln!("{at_bound} of {} models at the lower bound", models.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
