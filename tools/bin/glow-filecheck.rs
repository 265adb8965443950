//! `glow-filecheck`: the command-line front end of `glow_filecheck`,
//! compatible with LLVM FileCheck's command line.
//!
//! Accepts `--opt=value`, `--opt value` and LLVM's single-dash long forms
//! (`-check-prefix=X`, `-DVAR=VAL`); exits 0 on success, 1 when a check
//! fails and 2 on usage errors.

use clap::Parser;
use glow_filecheck::{check, DumpInput, Options};
use std::io::Read;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "glow-filecheck",
    version,
    about = "LLVM FileCheck-compatible pattern checker"
)]
struct Cli {
    /// The file with the CHECK directives.
    check_file: String,
    /// Read the input from this file instead of stdin (`-` is stdin).
    #[arg(long = "input-file", value_name = "F")]
    input_file: Option<String>,
    /// The most bytes of input (and of the check file) read; more is an error.
    #[arg(long = "max-input-bytes", value_name = "N", default_value_t = DEFAULT_MAX_INPUT)]
    max_input_bytes: u64,
    /// A check prefix (repeatable).
    #[arg(long = "check-prefix", value_name = "P")]
    check_prefix: Vec<String>,
    /// Comma-separated check prefixes (repeatable).
    #[arg(long = "check-prefixes", value_name = "A,B", value_delimiter = ',')]
    check_prefixes: Vec<String>,
    /// Comma-separated comment prefixes (default COM,RUN).
    #[arg(long = "comment-prefixes", value_name = "A,B", value_delimiter = ',')]
    comment_prefixes: Option<Vec<String>>,
    /// Do not canonicalise horizontal whitespace.
    #[arg(long = "strict-whitespace")]
    strict_whitespace: bool,
    /// Require positive patterns to match whole lines.
    #[arg(long = "match-full-lines")]
    match_full_lines: bool,
    /// Match case-insensitively.
    #[arg(long = "ignore-case")]
    ignore_case: bool,
    /// A pattern that must not occur anywhere in the input (repeatable).
    #[arg(long = "implicit-check-not", value_name = "PAT")]
    implicit_check_not: Vec<String>,
    /// Define a variable: `-D VAR=VALUE`, `-D#VAR=EXPR`.
    #[arg(short = 'D', value_name = "VAR=VALUE")]
    defines: Vec<String>,
    /// Clear local variables at each CHECK-LABEL.
    #[arg(long = "enable-var-scope")]
    enable_var_scope: bool,
    /// Do not complain about unused check prefixes.
    #[arg(long = "allow-unused-prefixes", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    allow_unused_prefixes: Option<bool>,
    /// Accept an empty input.
    #[arg(long = "allow-empty")]
    allow_empty: bool,
    /// When to dump the annotated input: help, always, fail, never.
    #[arg(long = "dump-input", value_name = "WHEN")]
    dump_input: Option<String>,
    /// Context lines around errors in the dump.
    #[arg(long = "dump-input-context", value_name = "N")]
    dump_input_context: Option<usize>,
    /// Accepted for compatibility; glow shows error lines with context.
    #[arg(long = "dump-input-filter", value_name = "KIND")]
    dump_input_filter: Option<String>,
    /// Glow extension: print a unified diff of expected vs actual on failure.
    #[arg(long = "diff")]
    diff: bool,
    /// Glow extension: do not reject misspelled directives.
    #[arg(long = "allow-misspelled")]
    allow_misspelled: bool,
    /// Verbose: annotate successful matches in the dump.
    #[arg(short = 'v')]
    verbose: bool,
    /// Extra verbose: also discarded DAG matches and passing NOTs.
    #[arg(long = "vv")]
    verbose_verbose: bool,
    /// Accepted for compatibility (colors are never used).
    #[arg(long = "color", num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    color: Option<String>,
    /// Accepted for compatibility; overlapping DAG matches are rejected.
    #[arg(long = "allow-deprecated-dag-overlap")]
    allow_deprecated_dag_overlap: bool,
}

const DUMP_HELP: &str = "The following description was requested by -dump-input=help to
explain the input dump printed by FileCheck.

Related command-line options:

  - -dump-input=<value> enables or disables the input dump
  - -dump-input-filter=<value> filters the input lines
  - -dump-input-context=<N> adjusts the context of filtered lines
  - -v and -vv add more annotations
  - -color forces colors to be enabled both in the dump and below
  - -help documents the above options in more detail

These options can also be set via FILECHECK_OPTS.  For example, for
maximum debugging output on failures:

  $ FILECHECK_OPTS='-dump-input-filter=all -vv -color' ninja check

Input dump annotation format:

  - L:     labels line number L of the input file
           An extra space is added after each input line to represent the
           newline character.
  - T:L    labels the only match result for either (1) a pattern of type T
           from line L of the check file if L is an integer or (2) the
           I-th implicit pattern if L is \"imp\" followed by an integer I
  - T:L'N  labels the Nth match result for such a pattern
  - ^~~    marks good match (reported if -v)
  - !~~    marks bad match, such as:
           - CHECK-NEXT on same line as previous match (error)
           - CHECK-NOT found (error)
           - CHECK-DAG overlapping match (discarded, reported if -vv)
  - X~~    marks search range when no match is found, such as:
           - CHECK-NEXT not found (error)
           - CHECK-NOT not found (success, reported if -vv)
           - CHECK-DAG not found after discarded matches (error)
  - ?      marks fuzzy match when no match is found
  - ~~~    marks search range continued onto the next line
  - .      marks elided lines
";

/// Rewrites LLVM's single-dash long options (`-check-prefix=X`) to `--` form.
fn normalise(args: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_dashdash = false;
    for (i, a) in args.into_iter().enumerate() {
        let single_long = i > 0
            && !after_dashdash
            && a.len() > 2
            && a.starts_with('-')
            && !a.starts_with("--")
            && !a.starts_with("-D")
            && a.as_bytes()[1].is_ascii_alphabetic();
        if a == "--" {
            after_dashdash = true;
        }
        out.push(if single_long { format!("-{a}") } else { a });
    }
    out
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().collect();
    let command_line = raw.join(" ");
    let cli = match Cli::try_parse_from(normalise(raw)) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            let code = if e.use_stderr() { 2 } else { 0 };
            return ExitCode::from(code);
        }
    };
    match run(cli, command_line) {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli, command_line: String) -> Result<u8, String> {
    let dump_input = match cli.dump_input.as_deref() {
        None | Some("fail") => DumpInput::Fail,
        Some("always") => DumpInput::Always,
        Some("never") => DumpInput::Never,
        Some("help") => {
            eprint!("{DUMP_HELP}");
            return Ok(0);
        }
        Some(other) => {
            return Err(format!(
                "error: invalid -dump-input value '{other}' (help, always, fail, never)"
            ))
        }
    };
    let mut defines = Vec::new();
    for d in &cli.defines {
        let Some((k, v)) = d.split_once('=') else {
            return Err(format!(
                "Missing equal sign in command-line definition '-D{d}'"
            ));
        };
        if k.is_empty() || k == "#" {
            return Err(format!(
                "Missing variable name in command-line definition '-D{d}'"
            ));
        }
        defines.push((k.to_string(), v.to_string()));
    }
    let check_text = std::fs::read(&cli.check_file).map_err(|e| {
        format!(
            "Could not open check file '{}': {}",
            cli.check_file,
            io_reason(&e)
        )
    })?;
    let limit = cli.max_input_bytes;
    if check_text.len() as u64 > limit {
        return Err(format!(
            "check file '{}' is larger than {limit} bytes (--max-input-bytes)",
            cli.check_file
        ));
    }
    let (input_name, input) = match cli.input_file.as_deref() {
        None | Some("-") => {
            let buf = read_bounded(std::io::stdin().lock(), limit)
                .map_err(|e| format!("Could not read stdin: {e}"))?;
            ("<stdin>".to_string(), buf)
        }
        Some(f) => {
            let file = std::fs::File::open(f)
                .map_err(|e| format!("Could not open input file '{}': {}", f, io_reason(&e)))?;
            let bytes = read_bounded(file, limit)
                .map_err(|e| format!("Could not read input file '{}': {}", f, io_reason(&e)))?;
            (f.to_string(), bytes)
        }
    };
    let Some(input) = input else {
        return Err(format!(
            "input '{}' is larger than {limit} bytes (--max-input-bytes); stopped reading there",
            cli.input_file.as_deref().unwrap_or("<stdin>")
        ));
    };
    let mut check_prefixes = cli.check_prefix.clone();
    check_prefixes.extend(cli.check_prefixes.iter().cloned());
    let opts = Options {
        check_prefixes,
        comment_prefixes: cli.comment_prefixes.clone(),
        strict_whitespace: cli.strict_whitespace,
        match_full_lines: cli.match_full_lines,
        ignore_case: cli.ignore_case,
        implicit_check_not: cli.implicit_check_not.clone(),
        defines,
        enable_var_scope: cli.enable_var_scope,
        allow_unused_prefixes: cli.allow_unused_prefixes.unwrap_or(false),
        allow_empty: cli.allow_empty,
        dump_input,
        dump_input_context: cli.dump_input_context.unwrap_or(5),
        diff: cli.diff,
        verbose: cli.verbose || cli.verbose_verbose,
        verbose_verbose: cli.verbose_verbose,
        reject_misspelled: !cli.allow_misspelled,
        command_line,
    };
    let _ = (
        &cli.dump_input_filter,
        &cli.color,
        cli.allow_deprecated_dag_overlap,
    );
    let out = check(
        &cli.check_file,
        &String::from_utf8_lossy(&check_text),
        &input_name,
        &String::from_utf8_lossy(&input),
        &opts,
    );
    eprint!("{}", out.stderr);
    Ok(out.exit_code as u8)
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "No such file or directory".into(),
        _ => e.to_string(),
    }
}

/// Default of `--max-input-bytes`: 1 GiB, so an endless producer (`yes |
/// glow-filecheck`) is an error instead of exhausting memory.
const DEFAULT_MAX_INPUT: u64 = 1 << 30;

/// Reads all of `r` when it has at most `limit` bytes (`None` past it,
/// after reading `limit + 1`).
fn read_bounded(r: impl Read, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
    let mut buf = Vec::new();
    r.take(limit.saturating_add(1)).read_to_end(&mut buf)?;
    Ok((buf.len() as u64 <= limit).then_some(buf))
}
