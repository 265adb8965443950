//! `glow-filecheck`: the command-line front end of `glow_filecheck`,
//! compatible with LLVM FileCheck's command line.
//!
//! Accepts `--opt=value`, `--opt value` and LLVM's single-dash long forms
//! (`-check-prefix=X`, `-DVAR=VAL`); exits 0 on success, 1 when a check
//! fails and 2 on usage errors.

use glow_filecheck::check;
use glow_filecheck::cli::{self, Cli};
use std::io::{IsTerminal, Read};
use std::process::ExitCode;

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
           newline character
  - T:L    labels the only match result for either (1) a pattern of type T from
           line L of the check file if L is an integer or (2) the I-th implicit
           pattern if L is \"imp\" followed by an integer I (index origin one)
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
  - ...    indicates elided input lines and annotations, as specified by
           -dump-input-filter and -dump-input-context
  - colors success, error, fuzzy match, discarded match, unmatched input
";

/// The help text, with LLVM's colours under `--color`: each annotation form in bold, and the
/// colour names in their colours.
fn dump_help(color: bool) -> String {
    if !color {
        return DUMP_HELP.to_string();
    }
    const FORMS: &[&str] = &["L:", "T:L", "T:L'N", "^~~", "!~~", "X~~", "?", "..."];
    let mut out = String::new();
    let mut in_format = false;
    for line in DUMP_HELP.lines() {
        in_format |= line == "Input dump annotation format:";
        let form = line
            .strip_prefix("  - ")
            .and_then(|rest| rest.split(' ').next().map(|f| (f, &rest[f.len()..])))
            .filter(|(f, _)| in_format && FORMS.contains(f));
        if let Some((f, rest)) = form {
            out.push_str(&format!("  - \x1b[1m{f}\x1b[0m{rest}\n"));
        } else if line.starts_with("  - colors ") {
            out.push_str(concat!(
                "  - colors \x1b[0;1;32msuccess\x1b[0m, \x1b[0;1;31merror\x1b[0m, ",
                "\x1b[0;1;35mfuzzy match\x1b[0m, \x1b[0;1;36mdiscarded match\x1b[0m, ",
                "\x1b[0;1;46munmatched input\x1b[0m\n"
            ));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().collect();
    let command_line = raw.join(" ");
    let prog = raw
        .first()
        .map(|a| a.rsplit('/').next().unwrap_or(a).to_string())
        .unwrap_or_else(|| "glow-filecheck".into());
    let env_opts = std::env::var("FILECHECK_OPTS").ok();
    let cli = match cli::parse(env_opts.as_deref(), raw.get(1..).unwrap_or(&[])) {
        Ok(c) => c,
        Err(msg) => {
            // cl::ParseCommandLineOptions reports and exits 1.
            eprintln!("{}", cli::parse_error_text(&prog, &raw[0], &msg));
            return ExitCode::from(1);
        }
    };
    if cli.help {
        print!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    if cli.version {
        println!("glow-filecheck {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    match run(cli, command_line) {
        Ok(code) => ExitCode::from(code),
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::from(2)
        }
    }
}

const USAGE: &str = "OVERVIEW: LLVM FileCheck-compatible pattern checker

USAGE: glow-filecheck [options] <check-file>

Options (one or two dashes; --opt=value or --opt value):
  --input-file=F  --check-prefix=P  --check-prefixes=A,B  --comment-prefixes=A,B
  --allow-unused-prefixes  --strict-whitespace  --match-full-lines  --ignore-case
  --implicit-check-not=P  -DVAR=VALUE  -D#VAR=EXPR  --enable-var-scope  --allow-empty
  --allow-deprecated-dag-overlap  --dump-input=help|always|fail|never
  --dump-input-filter=all|annotation-full|annotation|error  --dump-input-context=N
  -v  -vv  --color  --diff  --allow-misspelled  --max-input-bytes=N  --version
Options are also read from FILECHECK_OPTS, before the command line.
";

fn run(cli: Cli, command_line: String) -> Result<u8, String> {
    let Some(dump_input) = cli.dump_input() else {
        let color = cli
            .color
            .unwrap_or_else(|| cli::auto_color(std::io::stdout().is_terminal()));
        print!("{}", dump_help(color));
        return Ok(0);
    };
    let Some(check_file) = cli.check_file.clone() else {
        return Err("<check-file> not specified".into());
    };
    let mut opts = cli.options(dump_input, command_line)?;
    opts.color = cli
        .color
        .unwrap_or_else(|| cli::auto_color(std::io::stderr().is_terminal()));
    let check_text = std::fs::read(&check_file).map_err(|e| {
        format!(
            "Could not open check file '{}': {}",
            check_file,
            io_reason(&e)
        )
    })?;
    let limit = cli.max_input_bytes.unwrap_or(DEFAULT_MAX_INPUT);
    if check_text.len() as u64 > limit {
        return Err(format!(
            "check file '{}' is larger than {limit} bytes (--max-input-bytes)",
            check_file
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
    let out = check(
        &check_file,
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
