//! Unit tests of the shell executor: builtins, pipes, pipefail, connectors, redirections.

use super::*;
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("glow-lit-sh-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// Runs `text` in a fresh shell in `dir`; returns the status and the transcript.
fn sh(dir: &std::path::Path, text: &str) -> (Status, String) {
    let tools = Tools::new();
    let mut shell = Shell::new(dir.to_path_buf(), &tools, None);
    let st = shell.run(&parse(text).expect("parses"));
    (st, shell.log)
}

#[test]
fn echo_and_pipes() {
    let d = scratch("echo");
    let (st, log) = sh(&d, "echo hello world | cat");
    assert!(st.success());
    assert!(log.contains("# | hello world"), "{log}");
    let (_, log) = sh(&d, "echo -e 'a\\tb' | cat");
    assert!(log.contains("# | a\tb"), "{log}");
}

#[test]
fn pipefail_and_connectors() {
    let d = scratch("conn");
    assert!(!sh(&d, "false | true").0.success());
    assert!(!sh(&d, "true | false").0.success());
    assert!(sh(&d, "false || true").0.success());
    assert!(!sh(&d, "false && true").0.success());
    assert!(sh(&d, "false && false || true").0.success());
    assert!(sh(&d, "false ; true").0.success());
    assert!(sh(&d, "not false").0.success());
    assert!(!sh(&d, "not true").0.success());
    assert!(sh(&d, "not not true").0.success());
    assert!(!sh(&d, "not --crash false").0.success());
}

#[test]
fn redirections_and_files() {
    let d = scratch("redir");
    let (st, _) = sh(
        &d,
        "mkdir -p a/b && echo one > a/b/f && echo two >> a/b/f && cat < a/b/f > g",
    );
    assert!(st.success());
    assert_eq!(std::fs::read_to_string(d.join("g")).unwrap(), "one\ntwo\n");
    let (st, _) = sh(&d, "cat missing 2> err; cat err > out2");
    assert!(st.success());
    assert!(std::fs::read_to_string(d.join("out2"))
        .unwrap()
        .contains("No such file"));
    let (st, _) = sh(&d, "cat missing > both 2>&1");
    assert!(!st.success());
    assert!(std::fs::read_to_string(d.join("both"))
        .unwrap()
        .contains("missing"));
    let (st, _) = sh(&d, "rm -rf a && not cat a/b/f && rm -f nothing");
    assert!(st.success());
    assert!(!sh(&d, "rm nothing").0.success());
}

#[test]
fn cd_persists_and_diff_compares() {
    let d = scratch("cd");
    let tools = Tools::new();
    let mut shell = Shell::new(d.clone(), &tools, None);
    assert!(shell
        .run(&parse("mkdir sub && cd sub && echo x > f").unwrap())
        .success());
    assert!(shell.run(&parse("echo x | diff f -").unwrap()).success());
    assert!(!shell.run(&parse("echo y | diff f -").unwrap()).success());
    assert!(d.join("sub/f").is_file());
}

#[test]
fn unknown_commands_and_externals() {
    let d = scratch("ext");
    let (st, log) = sh(&d, "glow-no-such-tool --x");
    assert_eq!(st.code, 127);
    assert!(
        log.contains("command not found: glow-no-such-tool"),
        "{log}"
    );
    // An external program from $PATH, fed by a builtin.
    let (st, log) = sh(&d, "echo abc | wc -c");
    assert!(st.success());
    assert!(log.contains("4"), "{log}");
}

#[test]
fn deadline_kills_children() {
    let d = scratch("timeout");
    let tools = Tools::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
    let mut shell = Shell::new(d, &tools, Some(deadline));
    let start = std::time::Instant::now();
    let st = shell.run(&parse("sleep 5").unwrap());
    assert!(!st.success());
    assert!(shell.timed_out);
    assert!(start.elapsed() < std::time::Duration::from_secs(3));
}
