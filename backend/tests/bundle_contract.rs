//! The bundle contract as a user meets it: the minimal C `main` from
//! docs/backend.md is compiled (warnings as errors) against a bundle written
//! by `emit_bundle` + `write_to`, and run. Also: the bundle is deterministic.
//! Ignored, with the reason, when `cc` is not installed.

use glow_backend::{emit_bundle, BundleOptions, CcOptions};
use std::process::Command;

const NET: &str = "function net
declare {
  %x = WeightVar float<4> mutable
  %w = WeightVar float<4> const { Data: [2, 2, 0.5, 0.5] }
  %y = WeightVar float<4> mutable
}

code {
  0 %t = allocactivation { Ty: float<4> }
  1 %m = elementmul @out %t, @in %x, @in %w
  2 %r = relu @out %y, @in %t
  3 %d = deallocactivation @out %t
}
";

/// The first ```c block of docs/backend.md.
fn doc_main() -> String {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/backend.md"))
        .expect("docs/backend.md exists");
    let start = doc.find("```c\n").expect("a C block in docs/backend.md") + 5;
    let len = doc[start..].find("```").expect("the C block ends");
    doc[start..start + len].to_string()
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn documented_main_builds_and_runs() {
    let m = glow_ir::parser::parse(NET.as_bytes()).expect("parses");
    assert!(glow_ir::verifier::verify_module(&m).is_empty());
    let bundle = emit_bundle(&m.functions[0], &BundleOptions::default()).expect("bundle");
    let dir = tempfile::tempdir().expect("temp dir");
    bundle.write_to(dir.path()).expect("writes");
    for f in ["net.c", "net.h", "net.weights.bin"] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
    std::fs::write(dir.path().join("main.c"), doc_main()).expect("main.c");
    let out = CcOptions::new(Some("cc"), "")
        .run(
            dir.path(),
            [
                "-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-o", "prog", "main.c", "net.c",
                "-lm",
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(dir.path().join("prog"))
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout), "2 0 1.5 0\n");
}

#[test]
fn bundles_are_deterministic_and_report_sizes() {
    let m = glow_ir::parser::parse(NET.as_bytes()).expect("parses");
    let a = emit_bundle(&m.functions[0], &BundleOptions::default()).expect("bundle");
    let b = emit_bundle(&m.functions[0], &BundleOptions::default()).expect("bundle");
    assert_eq!(a.c_source, b.c_source);
    assert_eq!(a.header, b.header);
    assert_eq!(a.weights, b.weights);
    assert!(a.header.contains("#define net_ACTIVATIONS_MEM_SIZE 64\n"));
    assert!(a.header.contains("#define net_MUTABLE_MEM_SIZE 128\n"));
    assert!(a.header.contains("#define net_x 0\n#define net_y 64\n"));
    assert_eq!(a.weights.len(), 64);
}

#[test]
fn missing_constant_is_an_error_naming_it() {
    let src = NET.replace(" { Data: [2, 2, 0.5, 0.5] }", "");
    let m = glow_ir::parser::parse(src.as_bytes()).expect("parses");
    let err = emit_bundle(&m.functions[0], &BundleOptions::default()).expect_err("no data");
    assert!(err.message.contains("`%w`"), "{}", err.message);
    let ok = BundleOptions {
        zero_missing_weights: true,
        ..BundleOptions::default()
    };
    assert!(emit_bundle(&m.functions[0], &ok).is_ok());
}
