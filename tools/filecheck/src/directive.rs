//! Reading a check file into check strings (LLVM's `ReadCheckFile`).
//!
//! Finds prefixes anywhere in a line (not inside a word), classifies the
//! suffix, parses the pattern, and groups each positive directive with the
//! NOT and DAG directives written before it. Every malformed directive is an
//! error with its location; nothing here panics on user text.

use crate::pattern::{CheckKind, Names, Pattern};
use crate::source::{Kind, Loc, Sources};
use crate::Options;

/// A NOT or DAG directive owned by the next positive directive.
#[derive(Debug)]
pub struct DagNot {
    pub pat: Pattern,
    pub prefix: String,
    pub loc: Loc,
    /// `{LITERAL}` was given (affects only the description).
    pub literal: bool,
}

/// A positive directive with the NOT/DAG directives it owns.
#[derive(Debug)]
pub struct CheckString {
    pub pat: Pattern,
    pub prefix: String,
    pub loc: Loc,
    pub dag_nots: Vec<DagNot>,
    /// `{LITERAL}` was given (affects only the description).
    pub literal: bool,
}

impl CheckString {
    /// `CHECK-NEXT`, `CHECK-COUNT`, ... as used in messages.
    pub fn describe(prefix: &str, kind: CheckKind) -> String {
        format!("{}{}", prefix, kind.suffix())
    }
}

/// The result of reading a check file.
pub struct CheckFile {
    pub strings: Vec<CheckString>,
}

/// A directive found at some offset of the check text.
pub struct Found {
    /// Offset of the prefix.
    pub start: usize,
    pub prefix: String,
    pub kind: FoundKind,
    pub literal: bool,
    /// Offset just after the `:`.
    pub after: usize,
}

/// What follows a prefix.
pub enum FoundKind {
    Check(CheckKind),
    Comment,
    BadNot,
    BadCount,
    /// `CHECK_NEXT:` — LLVM's own misspelling error.
    Misspelled(CheckKind),
}

pub fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// Finds the next directive at or after `from`.
pub fn find_directive(
    text: &str,
    from: usize,
    prefixes: &[String],
    comments: &[String],
) -> Option<Found> {
    let b = text.as_bytes();
    let mut p = from;
    while p < b.len() {
        if p > 0 && is_word(b[p - 1]) {
            p += 1;
            continue;
        }
        // The longest prefix at this position wins, like a POSIX alternation.
        let best = prefixes
            .iter()
            .chain(comments.iter())
            .filter(|pr| b[p..].starts_with(pr.as_bytes()))
            .max_by_key(|pr| pr.len());
        if let Some(pr) = best {
            let is_comment = comments.contains(pr);
            if let Some(f) = classify(text, p, pr, is_comment) {
                return Some(f);
            }
        }
        p += 1;
    }
    None
}

fn classify(text: &str, start: usize, prefix: &str, is_comment: bool) -> Option<Found> {
    let rest = &text[start + prefix.len()..];
    let base = start + prefix.len();
    let mk = |kind, literal, consumed: usize| Found {
        start,
        prefix: prefix.to_string(),
        kind,
        literal,
        after: base + consumed,
    };
    if is_comment {
        return rest
            .starts_with(':')
            .then(|| mk(FoundKind::Comment, false, 1));
    }
    if rest.starts_with(':') {
        return Some(mk(FoundKind::Check(CheckKind::Plain), false, 1));
    }
    if rest.starts_with('{') {
        return parse_mods(rest, 0).map(|(n, lit)| mk(FoundKind::Check(CheckKind::Plain), lit, n));
    }
    let (misspelled, sfx) = if let Some(s) = rest.strip_prefix('_') {
        (true, s)
    } else if let Some(s) = rest.strip_prefix('-') {
        (false, s)
    } else {
        return None;
    };
    let used = rest.len() - sfx.len();
    if let Some(n) = sfx.strip_prefix("COUNT-") {
        let digits = n.bytes().take_while(u8::is_ascii_digit).count();
        let count: Option<usize> = n[..digits]
            .parse()
            .ok()
            .filter(|&c| c > 0 && c <= i32::MAX as usize);
        let next = n.as_bytes().get(digits);
        let Some(count) = count.filter(|_| matches!(next, Some(b':') | Some(b'{'))) else {
            return Some(mk(FoundKind::BadCount, false, used + 6 + digits));
        };
        let off = used + 6 + digits;
        return parse_mods(rest, off)
            .map(|(n, lit)| mk(wrap(misspelled, CheckKind::Count(count)), lit, n));
    }
    for combo in [
        "DAG-NOT:",
        "NOT-DAG:",
        "NEXT-NOT:",
        "NOT-NEXT:",
        "SAME-NOT:",
        "NOT-SAME:",
        "EMPTY-NOT:",
        "NOT-EMPTY:",
    ] {
        if sfx.starts_with(combo) {
            return Some(mk(FoundKind::BadNot, false, used));
        }
    }
    let kinds = [
        ("NEXT", CheckKind::Next),
        ("SAME", CheckKind::Same),
        ("NOT", CheckKind::Not),
        ("DAG", CheckKind::Dag),
        ("LABEL", CheckKind::Label),
        ("EMPTY", CheckKind::Empty),
    ];
    for (name, kind) in kinds {
        if sfx.starts_with(name) {
            let off = used + name.len();
            return parse_mods(rest, off).map(|(n, lit)| mk(wrap(misspelled, kind), lit, n));
        }
    }
    None
}

fn wrap(misspelled: bool, k: CheckKind) -> FoundKind {
    if misspelled {
        FoundKind::Misspelled(k)
    } else {
        FoundKind::Check(k)
    }
}

/// Parses `:` or `{LITERAL}:` at `rest[off..]`; returns the bytes consumed
/// (counted from the start of `rest`) and whether LITERAL was given.
fn parse_mods(rest: &str, off: usize) -> Option<(usize, bool)> {
    let r = &rest[off..];
    if r.starts_with(':') {
        return Some((off + 1, false));
    }
    let mut r = r.strip_prefix('{')?;
    loop {
        r = r.trim_start();
        r = r.strip_prefix("LITERAL")?;
        r = r.trim_start();
        match r.strip_prefix(',') {
            Some(x) => r = x,
            None => break,
        }
    }
    let r = r.strip_prefix("}:")?;
    Some((rest.len() - r.len(), true))
}

/// Reads the check file in buffer `buf`; on error appends messages to `err`.
// The parse-time variable tables travel with the options; a struct would only rename them.
#[allow(clippy::too_many_arguments)]
pub fn read_check_file(
    sources: &Sources,
    buf: usize,
    opts: &Options,
    prefixes: &[String],
    comments: &[String],
    implicit: &[usize],
    names: &mut Names,
    err: &mut String,
) -> Result<(CheckFile, Vec<String>), ()> {
    let text = &sources.bufs[buf].text;
    let mut strings: Vec<CheckString> = Vec::new();
    let mut pending: Vec<DagNot> = implicit_nots(implicit, opts);
    let mut used: Vec<String> = Vec::new();
    let mut pos = 0;
    let loc = |offset| Loc { buf, offset };
    while let Some(f) = find_directive(text, pos, prefixes, comments) {
        let eol = text[f.after..]
            .find('\n')
            .map_or(text.len(), |i| f.after + i);
        pos = eol;
        let kind = match f.kind {
            FoundKind::Comment => continue,
            FoundKind::BadNot => {
                // LLVM points at the suffix, just after `PREFIX-`.
                sources.print(
                    err,
                    loc(f.after),
                    Kind::Error,
                    &format!("unsupported -NOT combo on prefix '{}'", f.prefix),
                    None,
                );
                return Err(());
            }
            FoundKind::BadCount => {
                let msg = format!(
                    "invalid count in -COUNT specification on prefix '{}'",
                    f.prefix
                );
                sources.print(err, loc(f.after), Kind::Error, &msg, None);
                return Err(());
            }
            FoundKind::Misspelled(k) => {
                let written = &text[f.start..f.after];
                let right = format!("{}{}:", f.prefix, k.suffix());
                let msg = format!("misspelled directive '{written}'");
                sources.print(err, loc(f.start), Kind::Error, &msg, None);
                if opts.reject_misspelled {
                    let _ = std::fmt::Write::write_fmt(
                        err,
                        format_args!("note: did you mean '{right}'?\n"),
                    );
                }
                return Err(());
            }
            FoundKind::Check(k) => k,
        };
        if !used.contains(&f.prefix) {
            used.push(f.prefix.clone());
        }
        let keep_ws = opts.strict_whitespace && opts.match_full_lines;
        let mut pstart = f.after;
        if !keep_ws {
            while pstart < eol && matches!(text.as_bytes()[pstart], b' ' | b'\t') {
                pstart += 1;
            }
        }
        let mut ptext = &text[pstart..eol];
        if !keep_ws {
            ptext = ptext.trim_end_matches([' ', '\t']);
        }
        let (line, _) = sources.bufs[buf].line_col(f.start);
        if ptext.is_empty() && kind != CheckKind::Empty {
            let msg = format!("found empty check string with prefix '{}:'", f.prefix);
            sources.print(err, loc(pstart), Kind::Error, &msg, None);
            return Err(());
        }
        if !ptext.is_empty() && kind == CheckKind::Empty {
            let msg = format!(
                "found non-empty check string for empty check with prefix '{}:'",
                f.prefix
            );
            sources.print(err, loc(pstart), Kind::Error, &msg, None);
            return Err(());
        }
        let pat = match Pattern::parse(
            ptext,
            kind,
            f.literal,
            line,
            opts.match_full_lines,
            opts.ignore_case,
            opts.strict_whitespace,
            names,
        ) {
            Ok(p) => p,
            Err((off, msg)) => {
                // Substitution-block errors are followed by a blank line, as in LLVM.
                sources.print(err, loc(pstart + off), Kind::Error, msg.trim_end(), None);
                if msg.ends_with('\n') {
                    err.push('\n');
                }
                return Err(());
            }
        };
        if kind == CheckKind::Label && pat.has_variables() {
            let msg = format!(
                "found '{}-LABEL:' with variable definition or use",
                f.prefix
            );
            sources.print(err, loc(f.start), Kind::Error, &msg, None);
            return Err(());
        }
        if matches!(kind, CheckKind::Next | CheckKind::Same | CheckKind::Empty)
            && strings.is_empty()
        {
            let ty = &kind.suffix()[1..];
            let msg = format!(
                "found '{}-{}' without previous '{}: line",
                f.prefix, ty, f.prefix
            );
            sources.print(err, loc(f.start), Kind::Error, &msg, None);
            return Err(());
        }
        if matches!(kind, CheckKind::Not | CheckKind::Dag) {
            pending.push(DagNot {
                pat,
                prefix: f.prefix,
                loc: loc(pstart),
                literal: f.literal,
            });
            continue;
        }
        strings.push(CheckString {
            pat,
            prefix: f.prefix,
            loc: loc(pstart),
            dag_nots: std::mem::replace(&mut pending, implicit_nots(implicit, opts)),
            literal: f.literal,
        });
    }
    if !pending.is_empty() {
        let line = sources.bufs[buf].line_count();
        let pat = Pattern::parse("", CheckKind::Eof, false, line, false, false, false, names)
            .map_err(|_| ())?;
        strings.push(CheckString {
            pat,
            prefix: prefixes[0].clone(),
            // LLVM's buffer pointer after the last directive: the end of its line.
            loc: loc(pos),
            dag_nots: pending,
            literal: false,
        });
    }
    Ok((CheckFile { strings }, used))
}

fn implicit_nots(implicit: &[usize], opts: &Options) -> Vec<DagNot> {
    implicit
        .iter()
        .enumerate()
        .map(|(i, buf)| DagNot {
            pat: Pattern::parse(
                &opts.implicit_check_not[i],
                CheckKind::Not,
                false,
                1,
                false,
                opts.ignore_case,
                opts.strict_whitespace,
                &mut Names::default(),
            )
            .unwrap_or_else(|_| {
                Pattern::parse(
                    "",
                    CheckKind::Eof,
                    false,
                    1,
                    false,
                    false,
                    false,
                    &mut Names::default(),
                )
                .expect("EOF patterns always parse")
            }),
            prefix: "IMPLICIT-CHECK".into(),
            literal: false,
            loc: Loc {
                buf: *buf,
                offset: 21,
            },
        })
        .collect()
}
