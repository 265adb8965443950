//! glow-update-checks end to end: a test without CHECK lines becomes one
//! that passes under glow-lit (with glow-filecheck, and with LLVM's
//! FileCheck when installed) and fails once its pass is removed from the
//! RUN line; and every generated test in `test/` regenerates identically.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const UPDATE: &str = env!("CARGO_BIN_EXE_glow-update-checks");
const LIT: &str = env!("CARGO_BIN_EXE_glow-lit");

const INPUT: &str = "// RUN: glow-opt %s --pass=dead-alloc | glow-filecheck %s
function f
declare {
  %in = WeightVar float<4> mutable
  %out = WeightVar float<4> mutable
}

code {
  0 %dead = allocactivation { Ty: float<8> }
  1 %a = allocactivation { Ty: float<4> }
  2 %ra = relu @out %a, @in %in
  3 %rc = relu @out %out, @in %a
  4 %dd = deallocactivation @out %dead
  5 %da = deallocactivation @out %a
}
";

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("the tool runs")
}

fn suite(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp suite");
    std::fs::write(
        dir.join("lit.toml"),
        "name = \"gen\"\nsuffixes = [\".gir\"]\n",
    )
    .expect("lit.toml");
    dir
}

fn lit(dir: &Path, extra: &[&str]) -> Output {
    run(Command::new(LIT)
        .arg(dir)
        .arg("-v")
        .arg("--output-dir")
        .arg(dir.join("out"))
        .args(extra))
}

#[test]
fn a_file_without_checks_gets_checks_that_catch_a_missing_pass() {
    let dir = suite("update-checks-e2e");
    let file = dir.join("dead-alloc.gir");
    std::fs::write(&file, INPUT).expect("write");
    let out = run(Command::new(UPDATE).arg(&file));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&file).expect("read");
    assert!(text.contains("// CHECK-LABEL: function f"), "{text}");
    assert!(
        text.contains("// CHECK-NEXT: {{[0-9]+}} %a = allocactivation"),
        "{text}"
    );
    assert!(
        !text
            .lines()
            .any(|l| l.contains("CHECK") && l.contains("%dead")),
        "dead-alloc erased %dead, so no check names it: {text}"
    );

    let pass = lit(&dir, &[]);
    assert!(
        pass.status.success(),
        "{}",
        String::from_utf8_lossy(&pass.stdout)
    );
    let llvm = Path::new("/usr/lib/llvm-19/bin/FileCheck");
    if llvm.exists() {
        let tool = format!("glow-filecheck={}", llvm.display());
        let with_llvm = lit(&dir, &["--tool", &tool]);
        assert!(
            with_llvm.status.success(),
            "{}",
            String::from_utf8_lossy(&with_llvm.stdout)
        );
    }

    // The same checks with the pass gone from the RUN line must fail.
    std::fs::write(&file, text.replace(" --pass=dead-alloc", "")).expect("write");
    let fail = lit(&dir, &[]);
    assert!(
        !fail.status.success(),
        "the checks do not depend on the pass"
    );
    let report = String::from_utf8_lossy(&fail.stdout);
    assert!(report.contains("FAIL: gen :: dead-alloc.gir"), "{report}");
}

#[test]
fn every_generated_test_regenerates_identically() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test");
    let mut checked = 0;
    for e in walkdir::WalkDir::new(&root) {
        let e = e.expect("readable");
        if !e.file_type().is_file() || e.path().components().any(|c| c.as_os_str() == "Inputs") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        for prefix in glow_lit::update_checks::generated_prefixes(&text) {
            let out = run(Command::new(UPDATE)
                .arg("--check")
                .arg(format!("--check-prefix={prefix}"))
                .arg(e.path()));
            assert!(
                out.status.success(),
                "{}: {}",
                e.path().display(),
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "test/ has generated tests ({checked} found)");
}
