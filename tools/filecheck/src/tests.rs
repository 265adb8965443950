//! Unit tests for the tricky semantics: NOT/DAG ownership, LABEL blocks,
//! whitespace canonicalisation, NEXT counting, variables and usage errors.

use crate::{check, DumpInput, Options};

fn run_with(check_text: &str, input: &str, opts: &Options) -> i32 {
    check("t.txt", check_text, "<stdin>", input, opts).exit_code
}

fn run(check_text: &str, input: &str) -> i32 {
    let opts = Options {
        dump_input: DumpInput::Never,
        ..Options::default()
    };
    run_with(check_text, input, &opts)
}

#[test]
fn not_is_owned_by_the_next_positive_directive() {
    // The NOT covers only the gap between `a` and `c`.
    assert_eq!(run("CHECK: a\nCHECK-NOT: x\nCHECK: c\n", "a\nb\nc\nx\n"), 0);
    assert_eq!(run("CHECK: a\nCHECK-NOT: x\nCHECK: c\n", "a\nx\nc\n"), 1);
    // A leading NOT covers the input up to the first match.
    assert_eq!(run("CHECK-NOT: x\nCHECK: a\n", "x\na\n"), 1);
    // A trailing NOT runs to the end of the input.
    assert_eq!(run("CHECK: a\nCHECK-NOT: x\n", "a\nb\nx\n"), 1);
}

#[test]
fn dag_groups_match_in_any_order_without_overlap() {
    assert_eq!(
        run("CHECK-DAG: b\nCHECK-DAG: a\nCHECK: c\n", "a\nb\nc\n"),
        0
    );
    assert_eq!(run("CHECK-DAG: a\nCHECK-DAG: a\n", "a\n"), 1);
    assert_eq!(run("CHECK-DAG: a\nCHECK-DAG: a\n", "a a\n"), 0);
    // The positive check after a group starts at the group's end.
    assert_eq!(run("CHECK-DAG: b\nCHECK-DAG: a\nCHECK: a\n", "a\nb\n"), 1);
    // NOTs between two DAG groups cover only the gap between them.
    assert_eq!(
        run("CHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: b\n", "a\nx\nb\n"),
        1
    );
    assert_eq!(
        run("CHECK-DAG: a\nCHECK-NOT: x\nCHECK-DAG: b\n", "x\na\nb\n"),
        0
    );
}

#[test]
fn labels_split_the_input_into_blocks() {
    let c = "CHECK-LABEL: f1\nCHECK: x\nCHECK-LABEL: f2\nCHECK: y\n";
    assert_eq!(run(c, "f1\nx\nf2\ny\n"), 0);
    // `y` exists only in the f1 block, `x` only in f2: both checks fail.
    assert_eq!(run(c, "f1\ny\nf2\nx\n"), 1);
    // A missing label fails at once.
    assert_eq!(run(c, "f1\nx\n"), 1);
}

#[test]
fn next_counts_exactly_one_newline() {
    assert_eq!(run("CHECK: a\nCHECK-NEXT: b\n", "a\nb\n"), 0);
    assert_eq!(run("CHECK: a\nCHECK-NEXT: b\n", "a b\n"), 1);
    assert_eq!(run("CHECK: a\nCHECK-NEXT: b\n", "a\n\nb\n"), 1);
    assert_eq!(run("CHECK: a\nCHECK-NEXT: b\n", "a\r\nb\r\n"), 0);
    assert_eq!(run("CHECK: a\nCHECK-SAME: b\n", "a b\n"), 0);
    assert_eq!(
        run("CHECK: a\nCHECK-EMPTY:\nCHECK-NEXT: b\n", "a\n\nb\n"),
        0
    );
    assert_eq!(run("CHECK: a\nCHECK-EMPTY:\n", "a\nb\n\n"), 1);
}

#[test]
fn whitespace_is_canonicalised_unless_strict() {
    assert_eq!(run("CHECK: a b\n", "a \t  b\n"), 0);
    assert_eq!(run("CHECK: a    b\n", "a b\n"), 0);
    let strict = Options {
        strict_whitespace: true,
        dump_input: DumpInput::Never,
        ..Options::default()
    };
    assert_eq!(run_with("CHECK: a b\n", "a  b\n", &strict), 1);
    let full = Options {
        match_full_lines: true,
        dump_input: DumpInput::Never,
        ..Options::default()
    };
    assert_eq!(run_with("CHECK: a b\n", "  a b  \n", &full), 0);
    assert_eq!(run_with("CHECK: a\n", "a b\n", &full), 1);
}

#[test]
fn variables_and_numeric_expressions() {
    assert_eq!(run("CHECK: [[X:[a-z]+]] = [[X]]\n", "ab = b = b\n"), 0);
    assert_eq!(run("CHECK: [[X:[a-z]+]] = [[X]]\n", "ab = cd\n"), 1);
    assert_eq!(
        run("CHECK: v [[#N:]]\nCHECK: w [[#N*2]]\n", "v 3\nw 6\n"),
        2
    );
    assert_eq!(
        run("CHECK: v [[#N:]]\nCHECK: w [[#mul(N,2)]]\n", "v 3\nw 6\n"),
        0
    );
    assert_eq!(run("CHECK: [[#%x,A:]]\nCHECK: [[#A+1]]\n", "ff\n100\n"), 0);
    assert_eq!(run("CHECK: [[@LINE]] [[#@LINE+1]]\n", "1 2\n"), 0);
    assert_eq!(run("CHECK: [[UNDEF]]\n", "x\n"), 1);
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run("CHECK-NEXT: a\n", "a\n"), 2);
    assert_eq!(run("CHECK:\n", "a\n"), 2);
    assert_eq!(run("nothing\n", "a\n"), 2);
    assert_eq!(run("CHECK: a\n", ""), 2);
    assert_eq!(run("CHECK: {{(}}\n", "a\n"), 2);
    assert_eq!(run("CHECK: [[\n", "a\n"), 2);
    assert_eq!(run("CHECK-COUNT-0: a\n", "a\n"), 2);
    assert_eq!(run("CHECK-NXT: a\n", "a\n"), 2);
}

/// Limits that keep a pattern from overflowing the stack or the regex
/// engine are directive errors: exit 2, not a crash or a match failure.
#[test]
fn pattern_limits_exit_2() {
    let nested = format!(
        "CHECK: x [[#{}1{}]]\n",
        "add(".repeat(20_000),
        ",1)".repeat(20_000)
    );
    assert_eq!(run(&nested, "x 2\n"), 2);
    let ok = format!("CHECK: x [[#{}1{}]]\n", "add(".repeat(99), ",1)".repeat(99));
    assert_eq!(run(&ok, "x 100\n"), 0);
    let chain = format!("CHECK: x [[#1{}]]\n", "+1".repeat(5000));
    assert_eq!(run(&chain, "x 5001\n"), 2);
    assert_eq!(run("CHECK: next [[#%.999999999x,N:]]\n", "next 5\n"), 2);
    assert_eq!(
        run("CHECK: next [[#%.18446744073709551615x,N:]]\n", "next 5\n"),
        2
    );
    assert_eq!(run("CHECK: next [[#%.3x,N:]]\n", "next 005\n"), 0);
    // Each piece compiles, the whole pattern is past the regex size limit.
    assert_eq!(run("CHECK: {{\\w{30}x}}\n", "x\n"), 1);
    let big = format!("CHECK: {}\n", ["{{\\w{30}x}}"; 20].join(" "));
    assert_eq!(run(&big, "x\n"), 2);
}

#[test]
fn malformed_inputs_never_panic() {
    let nasty = [
        "CHECK: [[",
        "CHECK: [[#",
        "CHECK: [[#%",
        "CHECK: [[#%.x,]]",
        "CHECK: {{",
        "CHECK: [[A:[]]",
        "CHECK: [[A:\\]]",
        "CHECK: [[#A:B:]]",
        "CHECK: [[#1+]]",
        "CHECK-COUNT-99999999999999: a",
        "CHECK{LITERAL: a",
        "CHECK{: a",
        "CHECK: \u{e9}\u{1F600}",
        "CHECK: [[#add(1)]]",
        "CHECK: [[@LINE+x]]",
        "CHECK: {{[[:nope:]]}}",
        "CHECK: {{a{1,}}}",
        "CHECK: {{\\1}}",
    ];
    for c in nasty {
        let out = check("t", c, "<stdin>", "a\u{e9}\u{1F600}\n", &Options::default());
        assert!(out.exit_code <= 2, "{c}");
    }
}

#[test]
fn dump_is_deterministic_and_llvm_shaped() {
    let out = check(
        "c",
        "CHECK: foo\nCHECK-NEXT: baz\n",
        "<stdin>",
        "foo\nbar\nbaz\n",
        &Options::default(),
    );
    assert_eq!(out.exit_code, 1);
    assert!(out
        .stderr
        .starts_with("c:2:13: error: CHECK-NEXT: is not on the line after the previous match\n"));
    assert!(out
        .stderr
        .contains("next:2     !~~  error: match on wrong line\n"));
    let again = check(
        "c",
        "CHECK: foo\nCHECK-NEXT: baz\n",
        "<stdin>",
        "foo\nbar\nbaz\n",
        &Options::default(),
    );
    assert_eq!(out, again);
}
