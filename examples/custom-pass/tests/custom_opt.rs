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
    // From the registry, so a pass added to this crate needs no edit here.
    let registry = custom_pass::registry().expect("the passes register");
    let want: Vec<&str> = registry.passes().iter().map(|p| p.name).collect();
    assert_eq!(names, want);
    let builtin = glow_passes::registry::BUILTIN.len();
    assert_eq!(
        want[..builtin],
        glow_passes::registry::BUILTIN
            .iter()
            .map(|p| p.name)
            .collect::<Vec<_>>()[..],
        "the built-in passes come first, in glow-opt's order"
    );
    assert!(
        want.len() > builtin,
        "custom-opt adds passes of its own: {want:?}"
    );
}

#[test]
fn the_registry_rejects_a_second_registration() {
    let mut r = custom_pass::registry().expect("the passes register");
    assert!(r.register(&custom_pass::strip_debugprint::INFO).is_err());
}
