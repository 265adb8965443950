//! Glow extension: misspelled-directive detection (`CHECK-NXT:`, `CHEK:`,
//! `CHECK :`, `CHECK-DAG-SAME:`, `CHECK-NEXT` without its colon).
//!
//! LLVM silently ignores such lines, so a typo turns a check into a comment.
//! To keep false positives rare, only a token at the start of a line (after
//! an optional comment leader such as `//`, `;` or `#`) is considered, it
//! must be written in the case of the prefixes, and lines that hold a real
//! directive are skipped. Prefixes that the file's own RUN lines pass with
//! `--check-prefix(es)` count as valid, so `CHECK-A:` in a file tested with
//! two prefix sets is not a typo.

use crate::diag::edit_distance;
use crate::directive::find_directive;

/// A suspicious line.
#[derive(Debug, PartialEq, Eq)]
pub struct Misspelling {
    /// Offset of the token in the check text.
    pub offset: usize,
    /// The token as written, with its colon when it had one.
    pub written: String,
    /// The directive it most likely meant, with a colon.
    pub suggestion: String,
}

const SUFFIXES: [&str; 6] = ["NEXT", "SAME", "NOT", "DAG", "LABEL", "EMPTY"];

/// Words that are lit or prose markers, never misspelled directives.
const KEYWORDS: [&str; 12] = [
    "RUN",
    "REQUIRES",
    "UNSUPPORTED",
    "XFAIL",
    "WHY",
    "NOTE",
    "TODO",
    "FIXME",
    "ALLOW_RETRIES",
    "END",
    "XXX",
    "BUG",
];

/// Scans `text` for lines that look like misspelled directives.
pub fn find_misspellings(text: &str, prefixes: &[String], comments: &[String]) -> Vec<Misspelling> {
    let mentioned = mentioned_prefixes(text);
    let lines: Vec<(usize, &str)> = line_spans(text);
    let real: Vec<bool> = lines
        .iter()
        .map(|(_, l)| find_directive(l, 0, prefixes, comments).is_some())
        .collect();
    let any_lower = prefixes
        .iter()
        .chain(comments)
        .any(|p| p.bytes().any(|c| c.is_ascii_lowercase()));
    let mut out = Vec::new();
    for (idx, (start, line)) in lines.iter().enumerate() {
        if real[idx] {
            continue;
        }
        let Some(tok) = token(line) else { continue };
        if !any_lower && tok.name.bytes().any(|c| c.is_ascii_lowercase()) {
            continue;
        }
        if KEYWORDS.contains(&tok.name) || tok.name.len() < 2 {
            continue;
        }
        let offset = start + tok.offset;
        if !tok.colon {
            // `CHECK-NEXT foo` next to real directives: a forgotten colon.
            let is_directive = prefixes.iter().any(|p| {
                tok.name
                    .strip_prefix(p.as_str())
                    .and_then(|r| r.strip_prefix('-'))
                    .is_some_and(|s| SUFFIXES.contains(&s))
            });
            let near = (idx > 0 && real[idx - 1]) || real.get(idx + 1).copied().unwrap_or(false);
            // Prose after the token ("CHECK-NOT lines below ...") is not a pattern.
            let rest = &line[tok.offset + tok.name.len()..];
            let pattern_like =
                rest.contains("{{") || rest.contains("[[") || rest.split_whitespace().count() <= 3;
            if is_directive && near && tok.followed_by_text && pattern_like {
                out.push(Misspelling {
                    offset,
                    written: tok.name.to_string(),
                    suggestion: format!("{}:", tok.name),
                });
            }
            continue;
        }
        if let Some(s) = judge(
            tok.name,
            tok.space_before_colon,
            prefixes,
            comments,
            &mentioned,
        ) {
            let written = format!(
                "{}{}:",
                tok.name,
                if tok.space_before_colon { " " } else { "" }
            );
            out.push(Misspelling {
                offset,
                written,
                suggestion: s,
            });
        }
    }
    out
}

/// Whether `a` is `b` with two neighbouring letters swapped (`NXET` for
/// `NEXT`), the commonest typo, which the edit distance counts as two.
fn one_swap(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
    diff.len() == 2
        && diff[1] == diff[0] + 1
        && a[diff[0]] == b[diff[1]]
        && a[diff[1]] == b[diff[0]]
}

/// Decides whether `name` (written before a colon) is a typo; returns the suggestion.
fn judge(
    name: &str,
    spaced: bool,
    prefixes: &[String],
    comments: &[String],
    mentioned: &[String],
) -> Option<String> {
    let valid_for = |p: &String| {
        name == p
            || name
                .strip_prefix(p)
                .and_then(|r| r.strip_prefix('-'))
                .is_some_and(|s| {
                    SUFFIXES.contains(&s)
                        || s.strip_prefix("COUNT-")
                            .is_some_and(|n| n.bytes().all(|c| c.is_ascii_digit()))
                })
    };
    let active = || prefixes.iter().chain(comments);
    if active().chain(mentioned).any(valid_for) {
        // A valid name: only `CHECK :` (space before the colon) is wrong.
        return (spaced && active().any(valid_for)).then(|| format!("{name}:"));
    }
    // Directives of prefixes that only other RUN lines use are theirs to judge.
    if mentioned
        .iter()
        .any(|m| name.starts_with(m.as_str()) && !active().any(|p| p == m))
    {
        return None;
    }
    for p in active() {
        // `XCHECK:` (a disabled check) and `CHECK2:` (another prefix) are deliberate.
        let extended = name.len() > p.len()
            && (name.ends_with(p.as_str())
                || (name.starts_with(p.as_str())
                    && name.as_bytes()[p.len()] != b'-'
                    && !SUFFIXES.contains(&&name[p.len()..])));
        if extended {
            return None;
        }
    }
    // `P-X` where X is no near-suffix: most likely another prefix, unless X
    // chains two suffixes (`DAG-SAME`).
    for p in active() {
        if let Some(x) = name
            .strip_prefix(p.as_str())
            .and_then(|r| r.strip_prefix('-'))
        {
            let chained = x.split('-').filter(|s| SUFFIXES.contains(s)).count() >= 2;
            let near_suffix = SUFFIXES
                .iter()
                .any(|s| edit_distance(x.as_bytes(), s.as_bytes()) <= 1 || one_swap(x, s))
                || x.starts_with("COUNT");
            if chained {
                let first = x.split('-').next().unwrap_or("");
                return Some(format!("{p}-{first}:"));
            }
            if !near_suffix {
                return None;
            }
        }
    }
    let mut best: Option<(usize, String)> = None;
    for p in prefixes {
        // In a prefix of one or two letters any edit makes another prefix
        // (`B-DAG:` beside `A`), not a typo of this one.
        if p.len() <= 2 && !name.starts_with(p.as_str()) {
            continue;
        }
        let mut names = vec![p.clone()];
        names.extend(SUFFIXES.iter().map(|s| format!("{p}-{s}")));
        if let Some(pos) = name.find("COUNT") {
            names.push(format!("{p}-{}", &name[pos..]));
        }
        for n in names {
            let d = edit_distance(name.as_bytes(), n.as_bytes());
            if best.as_ref().is_none_or(|b| d < b.0) {
                best = Some((d, n));
            }
        }
    }
    for c in comments {
        let d = edit_distance(name.as_bytes(), c.as_bytes());
        if best.as_ref().is_none_or(|b| d < b.0) {
            best = Some((d, c.clone()));
        }
    }
    let (d, n) = best?;
    let limit = if n.len() <= 4 { 1 } else { 2 };
    (d > 0 && d <= limit).then(|| format!("{n}:"))
}

struct Token<'a> {
    offset: usize,
    name: &'a str,
    colon: bool,
    space_before_colon: bool,
    followed_by_text: bool,
}

/// The directive-like token at the start of `line`, after an optional comment leader.
fn token(line: &str) -> Option<Token<'_>> {
    let b = line.as_bytes();
    let mut i = 0;
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    let lead_start = i;
    while i < b.len()
        && b[i].is_ascii_punctuation()
        && !matches!(b[i], b'_' | b'[' | b'{' | b'"' | b'\'' | b'(')
    {
        i += 1;
    }
    if i > lead_start {
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
    }
    let start = i;
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'-') {
        i += 1;
    }
    if i == start || !b[start].is_ascii_alphabetic() {
        return None;
    }
    let name = &line[start..i];
    let mut j = i;
    while j < b.len() && b[j] == b' ' {
        j += 1;
    }
    let colon = b.get(j) == Some(&b':') && j - i <= 1;
    let followed_by_text = j > i && j < b.len();
    Some(Token {
        offset: start,
        name,
        colon,
        space_before_colon: colon && j > i,
        followed_by_text,
    })
}

fn line_spans(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split('\n') {
        out.push((start, line));
        start += line.len() + 1;
    }
    out
}

/// Prefixes named by `--check-prefix(es)` anywhere in the file (RUN lines).
fn mentioned_prefixes(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for key in ["check-prefixes", "check-prefix"] {
        let mut rest = text;
        while let Some(i) = rest.find(key) {
            rest = &rest[i + key.len()..];
            let r = rest.trim_start_matches(['=', ' ']);
            let list: String = r
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ','))
                .collect();
            out.extend(
                list.split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::to_string),
            );
        }
    }
    out
}

#[cfg(test)]
mod unit {
    use super::*;

    fn find(text: &str) -> Vec<String> {
        find_misspellings(text, &["CHECK".into()], &["COM".into(), "RUN".into()])
            .into_iter()
            .map(|m| format!("{}->{}", m.written, m.suggestion))
            .collect()
    }

    #[test]
    fn typos_are_found() {
        assert_eq!(find("// CHECK-NXT: a\n"), ["CHECK-NXT:->CHECK-NEXT:"]);
        assert_eq!(find("; CHEK: a\n"), ["CHEK:->CHECK:"]);
        assert_eq!(find("CHECK : a\n"), ["CHECK :->CHECK:"]);
        assert_eq!(
            find("# CHECK-DAG-SAME: a\n"),
            ["CHECK-DAG-SAME:->CHECK-DAG:"]
        );
        assert_eq!(
            find("// CHECK: a\n// CHECK-NEXT b\n"),
            ["CHECK-NEXT->CHECK-NEXT:"]
        );
    }

    #[test]
    fn prose_and_other_prefixes_are_not() {
        assert!(find("// CHECKS are done here.\n").is_empty());
        assert!(find("// CHECK_FOO: x\n").is_empty());
        assert!(find("// Check: lower case prose\n").is_empty());
        assert!(
            find("// RUN: x --check-prefixes=CHECK,CHECK-A\n// CHECK-A: a\n// CHECK-B: b\n")
                .is_empty()
        );
        assert!(find("// NOTE: something\n// TODO: later\n").is_empty());
        assert!(find("// CHECK-NOT lines below make sure of it\n").is_empty());
    }

    #[test]
    fn short_prefixes_have_no_near_misses() {
        // LLVM's check-dag-multi-prefix-2.txt: `B-DAG:` beside the prefix `A`.
        let one = |text: &str| {
            find_misspellings(text, &["A".into()], &["COM".into()])
                .into_iter()
                .map(|m| m.written)
                .collect::<Vec<_>>()
        };
        assert!(one("; B-DAG: foo
; A-DAG: x
")
        .is_empty());
        assert!(one("; B: foo
")
        .is_empty());
        assert_eq!(
            one("; A-NXT: foo
"),
            ["A-NXT:"]
        );
    }
}
