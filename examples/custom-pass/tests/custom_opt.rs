//! The `custom-opt` binary as a user runs it. Besides checking it, this test
//! makes `cargo test --workspace` build `custom-opt` before any test runs,
//! which the lit files under `test/custom-pass/` need (docs/testing.md).

use std::process::Command;

fn custom_opt(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_custom-opt"))
        .args(args)
        .output()
        .expect("custom-opt runs")
}

#[test]
fn list_passes_shows_every_builtin_pass_then_this_crates() {
    let out = custom_opt(&["--list-passes"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let names: Vec<&str> = text
        .lines()
        // Option lines are indented further than pass lines.
        .filter(|l| !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut want: Vec<&str> = glow_passes::registry::BUILTIN
        .iter()
        .map(|p| p.name)
        .collect();
    want.extend(["strip-debugprint", "count-flops"]);
    assert_eq!(names, want);
}

#[test]
fn the_registry_rejects_a_second_registration() {
    let mut r = custom_pass::registry().expect("the passes register");
    assert!(r.register(&custom_pass::strip_debugprint::INFO).is_err());
}
