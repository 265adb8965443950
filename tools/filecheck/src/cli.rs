//! FileCheck's command line, parsed the way LLVM's `cl::opt` parses it.
//!
//! Every option takes one or two dashes (`-check-prefix=X`, `--check-prefix X`); a scalar option
//! given twice keeps the last value; list options (`--check-prefix`, `--check-prefixes`, `-D`,
//! `--implicit-check-not`, `--comment-prefixes`) accumulate; `-dump-input*` keep the most verbose
//! value given. `FILECHECK_OPTS` is split like a shell line and read before the real arguments,
//! so the command line wins.

pub use crate::DumpFilter;
use crate::{DumpInput, Options};

/// What the command line asks for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Cli {
    pub check_file: Option<String>,
    pub input_file: Option<String>,
    pub check_prefixes: Vec<String>,
    pub comment_prefixes: Vec<String>,
    pub strict_whitespace: bool,
    pub match_full_lines: bool,
    pub ignore_case: bool,
    pub implicit_check_not: Vec<String>,
    /// `-D` values as written (`VAR=VALUE`, `#VAR=EXPR`).
    pub defines: Vec<String>,
    pub enable_var_scope: bool,
    pub allow_unused_prefixes: bool,
    pub allow_empty: bool,
    pub allow_deprecated_dag_overlap: bool,
    /// Every `-dump-input` value given.
    pub dump_input: Vec<DumpValue>,
    /// Every `-dump-input-filter` value given.
    pub dump_input_filter: Vec<DumpFilter>,
    /// Every `-dump-input-context` value given.
    pub dump_input_context: Vec<usize>,
    pub verbose: bool,
    pub verbose_verbose: bool,
    /// `--color`: `None` is "detect" ([`auto_color`]).
    pub color: Option<bool>,
    pub diff: bool,
    pub allow_misspelled: bool,
    pub max_input_bytes: Option<u64>,
    pub help: bool,
    pub version: bool,
}

/// `-dump-input` values, least to most verbose (LLVM takes the largest given).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DumpValue {
    Never,
    Fail,
    Always,
    Help,
}

impl Cli {
    /// The effective `-dump-input` (default `fail`); `None` for `help`.
    pub fn dump_input(&self) -> Option<DumpInput> {
        match self.dump_input.iter().max() {
            None | Some(DumpValue::Fail) => Some(DumpInput::Fail),
            Some(DumpValue::Never) => Some(DumpInput::Never),
            Some(DumpValue::Always) => Some(DumpInput::Always),
            Some(DumpValue::Help) => None,
        }
    }

    /// The effective `-dump-input-filter`: the largest given, else `all` when the dump is
    /// `always` and `error` otherwise (LLVM's defaults).
    pub fn dump_input_filter(&self) -> DumpFilter {
        match self.dump_input_filter.iter().max() {
            Some(f) => *f,
            None if self.dump_input() == Some(DumpInput::Always) => DumpFilter::All,
            None => DumpFilter::Error,
        }
    }

    /// The effective `-dump-input-context`: the largest given, default 5.
    pub fn dump_input_context(&self) -> usize {
        self.dump_input_context.iter().copied().max().unwrap_or(5)
    }

    /// The checker options this command line asks for, with `dump_input` (from
    /// [`Cli::dump_input`]) and the command line echoed in the "is empty" error. A `-D`
    /// without `=` or without a name is LLVM's error (exit 2).
    pub fn options(&self, dump_input: DumpInput, command_line: String) -> Result<Options, String> {
        let mut defines = Vec::new();
        let mut errors = Vec::new();
        for d in &self.defines {
            match d.split_once('=') {
                None => errors.push(format!(
                    "Missing equal sign in command-line definition '-D{d}'"
                )),
                Some(("", _)) => errors.push(format!(
                    "Missing variable name in command-line definition '-D{d}'"
                )),
                Some((k, v)) => defines.push((k.to_string(), v.to_string())),
            }
        }
        if !errors.is_empty() {
            return Err(errors.join("\n"));
        }
        Ok(Options {
            check_prefixes: self.check_prefixes.clone(),
            comment_prefixes: (!self.comment_prefixes.is_empty())
                .then(|| self.comment_prefixes.clone()),
            strict_whitespace: self.strict_whitespace,
            match_full_lines: self.match_full_lines,
            ignore_case: self.ignore_case,
            implicit_check_not: self.implicit_check_not.clone(),
            defines,
            enable_var_scope: self.enable_var_scope,
            allow_unused_prefixes: self.allow_unused_prefixes,
            allow_empty: self.allow_empty,
            dump_input,
            dump_input_context: self.dump_input_context(),
            dump_input_filter: self.dump_input_filter.iter().max().copied(),
            diff: self.diff,
            verbose: self.verbose || self.verbose_verbose,
            verbose_verbose: self.verbose_verbose,
            reject_misspelled: !self.allow_misspelled,
            command_line,
            allow_deprecated_dag_overlap: self.allow_deprecated_dag_overlap,
            // Detection is the caller's: it knows where the output goes.
            color: self.color.unwrap_or(false),
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Flag,
    Value,
    /// `-D`: the value is part of the same argument.
    Prefix,
}

const OPTIONS: &[(&str, Kind)] = &[
    ("input-file", Kind::Value),
    ("check-prefix", Kind::Value),
    ("check-prefixes", Kind::Value),
    ("comment-prefixes", Kind::Value),
    ("strict-whitespace", Kind::Flag),
    ("match-full-lines", Kind::Flag),
    ("ignore-case", Kind::Flag),
    ("implicit-check-not", Kind::Value),
    ("enable-var-scope", Kind::Flag),
    ("allow-unused-prefixes", Kind::Flag),
    ("allow-empty", Kind::Flag),
    ("allow-deprecated-dag-overlap", Kind::Flag),
    ("dump-input", Kind::Value),
    ("dump-input-filter", Kind::Value),
    ("dump-input-context", Kind::Value),
    ("v", Kind::Flag),
    ("vv", Kind::Flag),
    ("color", Kind::Flag),
    ("diff", Kind::Flag),
    ("allow-misspelled", Kind::Flag),
    ("max-input-bytes", Kind::Value),
    ("help", Kind::Flag),
    ("version", Kind::Flag),
    ("D", Kind::Prefix),
];

/// The option LLVM's `Did you mean` names for an unknown `arg`: the table's
/// name nearest to the argument's name (edit distance, first in the table on
/// a tie), spelled with `-` for a one-letter name and `--` otherwise, and
/// with the argument's `=value` kept.
pub fn nearest_option(arg: &str) -> Option<String> {
    let body = arg.trim_start_matches('-');
    let (name, value) = match body.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (body, None),
    };
    let best = OPTIONS
        .iter()
        .map(|(n, _)| *n)
        .min_by_key(|n| edit_distance(n, name))?;
    let dashes = if best.len() == 1 { "-" } else { "--" };
    Some(match value {
        Some(v) => format!("{dashes}{best}={v}"),
        None => format!("{dashes}{best}"),
    })
}

/// Levenshtein distance (insertions, deletions and replacements cost one).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (row[j + 1] + 1)
                .min(row[j] + 1)
                .min(diag + usize::from(ca != *cb));
            diag = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// LLVM's colour detection for a stream without `--color`: a terminal whose `TERM` is set
/// and not `dumb` (LLVM asks terminfo; this is its common answer).
pub fn auto_color(is_terminal: bool) -> bool {
    is_terminal && std::env::var("TERM").is_ok_and(|t| !t.is_empty() && t != "dumb")
}

/// Splits `FILECHECK_OPTS` as LLVM's `TokenizeGNUCommandLine` does: blanks separate words,
/// quotes group, a backslash escapes the next character.
pub fn tokenize(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' | '\r' => {
                if in_word {
                    out.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '\'' | '"' => {
                in_word = true;
                while let Some(n) = chars.next() {
                    if n == c {
                        break;
                    }
                    if n == '\\' && c == '"' {
                        if let Some(&e) = chars.peek() {
                            if e == '"' || e == '\\' {
                                cur.push(e);
                                chars.next();
                                continue;
                            }
                        }
                    }
                    cur.push(n);
                }
            }
            _ => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        out.push(cur);
    }
    out
}

fn parse_bool(opt: &str, v: &str) -> Result<bool, String> {
    match v {
        "" | "true" | "TRUE" | "True" | "1" => Ok(true),
        "false" | "FALSE" | "False" | "0" => Ok(false),
        _ => Err(format!(
            "for the --{opt} option: '{v}' is invalid value for boolean argument! Try 0 or 1"
        )),
    }
}

/// What LLVM's `cl` prints for a command-line error `msg` of [`parse`] (the caller exits 1):
/// `prog` is the program's file name, `argv0` the path it was started by.
pub fn parse_error_text(prog: &str, argv0: &str, msg: &str) -> String {
    let mut msg = msg.to_string();
    if msg.starts_with("Too many positional arguments") {
        msg.push_str(&format!(": See: {argv0} --help"));
    }
    // Where to look, then the nearest option.
    let unknown = msg
        .strip_prefix("Unknown command line argument '")
        .and_then(|rest| rest.strip_suffix("'."))
        .map(str::to_string);
    if let Some(arg) = unknown {
        msg.push_str(&format!("  Try: '{argv0} --help'"));
        if let Some(near) = nearest_option(&arg) {
            msg.push_str(&format!("\n{prog}: Did you mean '{near}'?"));
        }
    }
    format!("{prog}: {msg}")
}

/// Parses `args` (without the program name). Errors are LLVM's messages without the
/// `PROGRAM: ` at the front.
pub fn parse(env_opts: Option<&str>, args: &[String]) -> Result<Cli, String> {
    let mut all: Vec<String> = env_opts.map(tokenize).unwrap_or_default();
    all.extend(args.iter().cloned());
    let mut cli = Cli::default();
    let mut positional = Vec::new();
    let mut i = 0;
    let mut only_positional = false;
    while i < all.len() {
        let arg = all[i].clone();
        i += 1;
        if only_positional || arg == "-" || !arg.starts_with('-') {
            positional.push(arg);
            continue;
        }
        if arg == "--" {
            only_positional = true;
            continue;
        }
        let body = arg.strip_prefix("--").unwrap_or(&arg[1..]);
        let (name, inline) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let (name, kind, inline) = match OPTIONS.iter().find(|(n, _)| *n == name) {
            // `-D=1`: an always-prefix option's value is everything after its name.
            Some(&(n, Kind::Prefix)) => (n, Kind::Prefix, Some(body[1..].to_string())),
            Some(&(n, k)) => (n, k, inline),
            // `-DVAR=VALUE`: the prefix option takes the rest of the argument.
            None if body.starts_with('D') => ("D", Kind::Prefix, Some(body[1..].to_string())),
            // `-vvv`: LLVM's `-v` groups with itself (`-v -v -v`); `-vv` is its own option.
            None if name.len() > 2 && name.bytes().all(|b| b == b'v') => ("v", Kind::Flag, inline),
            None => return Err(format!("Unknown command line argument '{arg}'.")),
        };
        let value = match kind {
            Kind::Flag => inline.unwrap_or_default(),
            Kind::Prefix => match inline {
                Some(v) if !v.is_empty() => v,
                _ => return Err(format!("for the -{name} option: requires a value!")),
            },
            Kind::Value => match inline {
                Some(v) => v,
                None if i < all.len() => {
                    i += 1;
                    all[i - 1].clone()
                }
                None => return Err(format!("for the --{name} option: requires a value!")),
            },
        };
        set(&mut cli, name, value)?;
    }
    if positional.len() > 1 {
        return Err(
            "Too many positional arguments specified!\nCan specify at most 1 positional arguments"
                .into(),
        );
    }
    cli.check_file = positional.pop();
    Ok(cli)
}

fn set(cli: &mut Cli, name: &str, v: String) -> Result<(), String> {
    let comma = |v: &str| v.split(',').map(str::to_string).collect::<Vec<_>>();
    match name {
        "input-file" => cli.input_file = Some(v),
        "check-prefix" => cli.check_prefixes.push(v),
        "check-prefixes" => cli.check_prefixes.extend(comma(&v)),
        "comment-prefixes" => cli.comment_prefixes.extend(comma(&v)),
        "implicit-check-not" => cli.implicit_check_not.push(v),
        "D" => cli.defines.push(v),
        "strict-whitespace" => cli.strict_whitespace = parse_bool(name, &v)?,
        "match-full-lines" => cli.match_full_lines = parse_bool(name, &v)?,
        "ignore-case" => cli.ignore_case = parse_bool(name, &v)?,
        "enable-var-scope" => cli.enable_var_scope = parse_bool(name, &v)?,
        "allow-unused-prefixes" => cli.allow_unused_prefixes = parse_bool(name, &v)?,
        "allow-empty" => cli.allow_empty = parse_bool(name, &v)?,
        "allow-deprecated-dag-overlap" => cli.allow_deprecated_dag_overlap = parse_bool(name, &v)?,
        "v" => cli.verbose = parse_bool(name, &v)?,
        "vv" => cli.verbose_verbose = parse_bool(name, &v)?,
        "diff" => cli.diff = parse_bool(name, &v)?,
        "allow-misspelled" => cli.allow_misspelled = parse_bool(name, &v)?,
        "help" => cli.help = parse_bool(name, &v)?,
        "version" => cli.version = parse_bool(name, &v)?,
        "color" => {
            cli.color = if v.is_empty() {
                Some(true)
            } else {
                Some(parse_bool(name, &v)?)
            }
        }
        "dump-input" => cli.dump_input.push(match v.as_str() {
            "help" => DumpValue::Help,
            "always" => DumpValue::Always,
            "fail" => DumpValue::Fail,
            "never" => DumpValue::Never,
            _ => return Err(cannot_find(name, &v)),
        }),
        "dump-input-filter" => cli.dump_input_filter.push(match v.as_str() {
            "all" => DumpFilter::All,
            "annotation-full" => DumpFilter::AnnotationFull,
            "annotation" => DumpFilter::Annotation,
            "error" => DumpFilter::Error,
            _ => return Err(cannot_find(name, &v)),
        }),
        "dump-input-context" => cli.dump_input_context.push(v.parse().map_err(|_| {
            format!("for the --{name} option: '{v}' value invalid for uint argument!")
        })?),
        "max-input-bytes" => {
            cli.max_input_bytes = Some(v.parse().map_err(|_| {
                format!("for the --{name} option: '{v}' value invalid for uint argument!")
            })?)
        }
        _ => unreachable!("every name in OPTIONS is handled"),
    }
    Ok(())
}

fn cannot_find(name: &str, v: &str) -> String {
    format!("for the --{name} option: Cannot find option named '{v}'!")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Cli, String> {
        parse(
            None,
            &args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn scalar_options_take_the_last_value() {
        let c = p(&[
            "--allow-unused-prefixes=false",
            "-allow-unused-prefixes=true",
            "f",
        ])
        .unwrap();
        assert!(c.allow_unused_prefixes);
        let c = p(&["--input-file", "a", "f", "-input-file=b"]).unwrap();
        assert_eq!(c.input_file.as_deref(), Some("b"));
        assert_eq!(c.check_file.as_deref(), Some("f"));
    }

    #[test]
    fn lists_accumulate() {
        let c = p(&[
            "-check-prefix=A",
            "--check-prefixes",
            "B,C",
            "-DX=1",
            "--DY=2",
            "-D#Z=3",
            "f",
        ])
        .unwrap();
        assert_eq!(c.check_prefixes, ["A", "B", "C"]);
        assert_eq!(c.defines, ["X=1", "Y=2", "#Z=3"]);
    }

    #[test]
    fn dump_options_keep_the_most_verbose() {
        let c = p(&[
            "-dump-input=never",
            "-dump-input=always",
            "-dump-input=fail",
            "f",
        ])
        .unwrap();
        assert_eq!(c.dump_input(), Some(DumpInput::Always));
        assert_eq!(c.dump_input_filter(), DumpFilter::All);
        let c = p(&[
            "-dump-input-filter=error",
            "-dump-input-filter=annotation",
            "f",
        ])
        .unwrap();
        assert_eq!(c.dump_input_filter(), DumpFilter::Annotation);
        let c = p(&[
            "-dump-input-context=2",
            "-dump-input-context=7",
            "-dump-input-context=3",
        ])
        .unwrap();
        assert_eq!(c.dump_input_context(), 7);
    }

    #[test]
    fn env_options_come_first() {
        let args = vec!["--dump-input=never".to_string(), "f".to_string()];
        let c = parse(Some("-v --match-full-lines -dump-input=always"), &args).unwrap();
        assert!(c.verbose && c.match_full_lines);
        assert_eq!(c.dump_input(), Some(DumpInput::Always));
        assert_eq!(
            tokenize(r#"-DA='x y' "-DB=\"q\"" c\ d"#),
            ["-DA=x y", "-DB=\"q\"", "c d"]
        );
    }

    #[test]
    fn nearest_option_is_llvms_suggestion() {
        assert_eq!(
            nearest_option("--match-ful-lines").as_deref(),
            Some("--match-full-lines")
        );
        assert_eq!(
            nearest_option("--dump-inpt=always").as_deref(),
            Some("--dump-input=always")
        );
        assert_eq!(nearest_option("-x").as_deref(), Some("-v"));
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn repeated_v_is_verbose() {
        let c = p(&["-vvv", "f"]).unwrap();
        assert!(c.verbose && !c.verbose_verbose);
        assert!(p(&["--vvvv", "f"]).unwrap().verbose);
        assert!(p(&["-vx", "f"]).is_err());
    }

    #[test]
    fn errors_are_llvms() {
        assert_eq!(
            p(&["--foo", "f"]).unwrap_err(),
            "Unknown command line argument '--foo'."
        );
        assert_eq!(
            p(&["-D", "X=1"]).unwrap_err(),
            "for the -D option: requires a value!"
        );
        assert!(p(&["a", "b"])
            .unwrap_err()
            .starts_with("Too many positional arguments"));
        assert_eq!(
            p(&["--allow-empty=maybe"]).unwrap_err(),
            "for the --allow-empty option: 'maybe' is invalid value for boolean argument! Try 0 or 1"
        );
        assert_eq!(
            p(&["-dump-input-filter=x"]).unwrap_err(),
            "for the --dump-input-filter option: Cannot find option named 'x'!"
        );
    }
}
