//! `glow_filecheck`: an LLVM FileCheck-compatible checker as a library.
//!
//! [`check`] reads a check file (directives such as `CHECK:`, `CHECK-NEXT:`,
//! `CHECK-NOT:`), matches them against an input text with LLVM's semantics,
//! and returns the exit code and the diagnostics FileCheck would print. It
//! never panics on malformed input: bad check files yield exit code 2 and a
//! `file:line:col: error: ...` message. Output is deterministic.
//!
//! ```
//! use glow_filecheck::{check, Options};
//! let out = check("t.txt", "CHECK: hello\nCHECK-NEXT: world\n", "<stdin>",
//!                 "hello\nworld\n", &Options::default());
//! assert_eq!(out.exit_code, 0);
//! ```

pub mod cli;
mod diag;
mod diff;
mod directive;
mod dump;
mod matcher;
mod numeric;
mod pattern;
mod regex_dialect;
mod source;
mod spell;

#[cfg(test)]
mod tests;

pub use regex_dialect::translate_regex;

/// When to print the annotated input dump after the diagnostics.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DumpInput {
    /// Never dump the input.
    Never,
    /// Dump only when a check failed (LLVM's default).
    Fail,
    /// Dump even when all checks passed.
    Always,
}

/// Which input lines the dump shows besides their context (`--dump-input-filter`), from
/// fewest to most: LLVM takes the largest value given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DumpFilter {
    /// Lines where an error annotation starts.
    Error,
    /// Lines where an annotation starts.
    Annotation,
    /// Lines with any part of an annotation.
    AnnotationFull,
    /// Every line.
    All,
}

/// Checker options; the fields mirror FileCheck's command line.
#[derive(Clone, Debug)]
pub struct Options {
    /// Check prefixes (`--check-prefix`, `--check-prefixes`); empty means `CHECK`.
    pub check_prefixes: Vec<String>,
    /// Comment prefixes (`--comment-prefixes`); `None` means `COM,RUN`.
    pub comment_prefixes: Option<Vec<String>>,
    /// Do not canonicalise horizontal whitespace runs (`--strict-whitespace`).
    pub strict_whitespace: bool,
    /// Positive patterns must match whole lines (`--match-full-lines`).
    pub match_full_lines: bool,
    /// Match case-insensitively (`--ignore-case`).
    pub ignore_case: bool,
    /// Patterns that must not occur anywhere (`--implicit-check-not`).
    pub implicit_check_not: Vec<String>,
    /// Variable definitions from `-D VAR=VALUE` (string) or `-D#VAR=EXPR` (numeric,
    /// given here with the `#` kept at the front of the name).
    pub defines: Vec<(String, String)>,
    /// Clear local variables at each `CHECK-LABEL` (`--enable-var-scope`).
    pub enable_var_scope: bool,
    /// Do not complain about prefixes that no directive uses.
    pub allow_unused_prefixes: bool,
    /// Accept an empty input (`--allow-empty`).
    pub allow_empty: bool,
    /// When to print the annotated input dump.
    pub dump_input: DumpInput,
    /// Context lines around the lines the filter keeps (`--dump-input-context`).
    pub dump_input_context: usize,
    /// `--dump-input-filter`; `None` is LLVM's default: `all` for `--dump-input=always`,
    /// `error` otherwise.
    pub dump_input_filter: Option<DumpFilter>,
    /// Glow extension: print a unified diff of expected vs actual on failure.
    pub diff: bool,
    /// `-v`: also report successful matches.
    pub verbose: bool,
    /// `-vv`: also report discarded DAG matches and passing NOTs.
    pub verbose_verbose: bool,
    /// Glow extension: reject misspelled directives (on by default).
    pub reject_misspelled: bool,
    /// The command line, echoed in the "is empty" error (like LLVM does).
    pub command_line: String,
    /// `--allow-deprecated-dag-overlap`: DAG matches of one group may overlap.
    pub allow_deprecated_dag_overlap: bool,
    /// `--color`: messages and the input dump in LLVM's colours (ANSI escape sequences).
    pub color: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            check_prefixes: Vec::new(),
            comment_prefixes: None,
            strict_whitespace: false,
            match_full_lines: false,
            ignore_case: false,
            implicit_check_not: Vec::new(),
            defines: Vec::new(),
            enable_var_scope: false,
            allow_unused_prefixes: false,
            allow_empty: false,
            dump_input: DumpInput::Fail,
            dump_input_context: 5,
            dump_input_filter: None,
            diff: false,
            verbose: false,
            verbose_verbose: false,
            reject_misspelled: true,
            command_line: String::from("glow-filecheck"),
            allow_deprecated_dag_overlap: false,
            color: false,
        }
    }
}

/// The result of one check run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// 0 when all checks passed, 1 when a check failed, 2 on a usage error.
    pub exit_code: i32,
    /// Everything FileCheck would have written to stderr.
    pub stderr: String,
}

impl Outcome {
    /// True when every check passed.
    pub fn passed(&self) -> bool {
        self.exit_code == 0
    }
}

/// Checks `input_text` against the directives in `check_text`.
///
/// `check_file_name` and `input_name` only appear in messages.
pub fn check(
    check_file_name: &str,
    check_text: &str,
    input_name: &str,
    input_text: &str,
    opts: &Options,
) -> Outcome {
    matcher::run(check_file_name, check_text, input_name, input_text, opts)
}

/// Convenience for tests: panics with the diagnostics when the check fails.
///
/// Meant for `#[test]` functions, where a panic is the failure report.
pub fn assert_matches(check_text: &str, input_text: &str) {
    let out = check(
        "<check>",
        check_text,
        "<input>",
        input_text,
        &Options::default(),
    );
    assert!(out.passed(), "FileCheck failed:\n{}", out.stderr);
}
