//! `glow-smith`'s command line is clap's, like the other tools': `--help`
//! describes every option, and a bad argument is a usage error (exit 2).

use std::process::Command;

fn smith(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_glow-smith"))
        .args(args)
        .output()
        .expect("glow-smith runs")
}

#[test]
fn help_describes_every_option() {
    let out = smith(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).expect("utf-8");
    for flag in [
        "--count <N>",
        "--seed <S>",
        "--jobs <J>",
        "--no-c",
        "--batch <B>",
        "--sequences <K>",
        "--failures <DIR>",
        "--cflags <FLAGS>",
        "--no-reduce",
        "--print <SEED>",
        "--fails-like <KIND> <FILE>",
        "--version",
    ] {
        assert!(help.contains(flag), "--help lacks `{flag}`:\n{help}");
    }
    assert!(help.lines().count() > 10, "one line per option:\n{help}");
}

#[test]
fn bad_arguments_are_usage_errors() {
    assert_eq!(smith(&["--bogus"]).status.code(), Some(2));
    assert_eq!(smith(&["--count", "many"]).status.code(), Some(2));
    let out = smith(&["--print", "3"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("function "));
}
