//! The CI slice of the differential oracle: 150 programs on two threads
//! through every pass, both pipelines and random sequences on the
//! interpreter, the first 16 of them (before and after -O) also through the
//! C engine (ignored, with the reason, without `cc`).
//! `glow-smith --count N` runs more (docs/fuzzing.md).

use glow_smith::oracle::{run_seeds, run_seeds_parallel, Config};

#[test]
fn a_bounded_differential_run_passes() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        c_engine: false,
        failure_dir: dir.path().to_path_buf(),
        batch: 8,
        ..Config::default()
    };
    // Two threads over halves of the seeds.
    let report = run_seeds_parallel(0..150, 2, &cfg, |_| {});
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|f| format!("seed {}: {}", f.seed, f.message))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(report.passed, 150);
    // Every opcode of the table goes through the oracle, but those no
    // engine runs (docs/gir.md, "Instrumentation and escape hatches"). A
    // rare one these seeds missed runs in the first later program that
    // holds it, so the check does not depend on luck with 150 seeds.
    let mut seen = report.opcodes.clone();
    let missing = |seen: &std::collections::BTreeSet<&str>| -> Vec<&'static str> {
        glow_ir::Opcode::ALL
            .iter()
            .filter(|o| o.info().family != glow_ir::opcode::Family::NoKernel)
            .map(|o| o.name())
            .filter(|n| !seen.contains(n))
            .collect()
    };
    for seed in 150..5000 {
        let want = missing(&seen);
        if want.is_empty() {
            break;
        }
        let program = glow_smith::gen::generate(seed);
        if want.iter().any(|n| program.opcodes.contains(n)) {
            let extra = run_seeds(seed..seed + 1, &cfg, |_| {});
            assert_eq!(
                extra.passed,
                1,
                "seed {seed}: {:?}",
                extra.failures.first().map(|f| &f.message)
            );
            seen.extend(extra.opcodes);
        }
    }
    assert_eq!(
        missing(&seen),
        Vec::<&str>::new(),
        "no program of seeds 0..5000 uses these"
    );
}

/// The first 16 programs of the bounded run, before and after -O, also
/// through the C engine.
#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn the_c_engine_agrees_on_the_first_programs() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        c_engine: true,
        c_limit: 16,
        batch: 8,
        failure_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let report = run_seeds_parallel(0..16, 2, &cfg, |_| {});
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|f| format!("seed {}: {}", f.seed, f.message))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(report.passed, 16);
    assert_eq!(report.c_runs, 32);
}

#[test]
fn the_report_does_not_depend_on_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config {
        c_engine: false,
        failure_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let one = run_seeds(100..112, &cfg, |_| {});
    for jobs in [3, 40] {
        let many = run_seeds_parallel(100..112, jobs, &cfg, |_| {});
        assert_eq!(many.passed, one.passed, "{jobs} threads");
        assert_eq!(many.opcodes, one.opcodes, "{jobs} threads");
        assert_eq!(many.passes_run, one.passes_run, "{jobs} threads");
        assert_eq!(many.passes_changed, one.passes_changed, "{jobs} threads");
    }
    assert_eq!(one.passed, 12);
    assert_eq!(run_seeds_parallel(5..5, 2, &cfg, |_| {}).passed, 0);
}

#[test]
fn a_difference_is_reported() {
    // The comparison must see one flipped bit, and treat NaNs as equal.
    use glow_backend::run::{Outputs, Tensor};
    let t = |bytes: [u8; 4]| Outputs {
        mutable: vec![Tensor {
            name: "y".into(),
            ty: glow_ir::Type::float(&[1]),
            data: bytes.to_vec(),
        }],
        ..Outputs::default()
    };
    let one = 1f32.to_le_bytes();
    let mut flipped = one;
    flipped[0] ^= 1;
    assert!(glow_smith::oracle::differ(&t(one), &t(flipped)).is_some());
    assert!(glow_smith::oracle::differ(&t(one), &t(one)).is_none());
    let (n1, n2) = (f32::NAN.to_le_bytes(), (-f32::NAN).to_le_bytes());
    assert!(glow_smith::oracle::differ(&t(n1), &t(n2)).is_none());
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn a_seeded_engine_miscompile_is_found_and_reduced() {
    // `-Dexpf=exp2f` miscompiles every exponential of the C engine; the
    // failing programs are written and reduced by glow-reduce to a program
    // that still fails the same way.
    let smith = std::path::Path::new(env!("CARGO_BIN_EXE_glow-smith"));
    let reducer = smith.with_file_name("glow-reduce");
    let dir = tempfile::tempdir().unwrap();
    let flags = "-O1 -Dexpf=exp2f";
    // From the first seed whose program writes an exponential straight to
    // an output weight (one into a buffer nothing reads shows nothing), so
    // the test does not depend on which programs the generator makes.
    let first = (0u64..)
        .find(|&s| {
            glow_smith::generate(s)
                .text
                .contains(" = elementexp @out %out")
        })
        .unwrap()
        .to_string();
    let out = std::process::Command::new(smith)
        .args([
            "--count",
            "4",
            "--seed",
            &first,
            "--cflags",
            flags,
            "--failures",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("passed, ") && !stdout.contains(" 0 failed"),
        "{stdout}"
    );
    let failed: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.to_string_lossy().ends_with(".reduced.gir"))
        .collect();
    assert!(!failed.is_empty(), "{stderr}");
    for f in failed {
        let reduced = f.with_extension("reduced.gir");
        if !reducer.is_file() {
            // `cargo test -p glow-smith` alone does not build glow-reduce.
            assert!(
                stderr.contains("glow-reduce is not beside glow-smith"),
                "{stderr}"
            );
            continue;
        }
        let small = std::fs::read_to_string(&reduced)
            .unwrap_or_else(|e| panic!("{}: {e}\n{stderr}", reduced.display()));
        let big = std::fs::read_to_string(&f).unwrap();
        let count = |t: &str| {
            t.lines()
                .filter(|l| l.contains(" = ") && !l.contains("WeightVar"))
                .count()
        };
        assert!(count(&small) < count(&big), "{small}");
        let kind = big.lines().nth(1).unwrap().trim_start_matches("// ");
        let kind = glow_smith::oracle::failure_kind(kind);
        let again = std::process::Command::new(smith)
            .args(["--cflags", flags, "--fails-like", kind])
            .arg(&reduced)
            .status()
            .unwrap();
        assert!(
            again.success(),
            "{} no longer fails like `{kind}`:\n{small}",
            reduced.display()
        );
    }
}
