//! `--verify-diagnostics`: checks the diagnostics a file produces against the
//! `// expected-error {{...}}` annotations written in it (MLIR's idiom), so
//! negative tests are ordinary lit tests.

use crate::diag::{Diagnostic, Severity};
use crate::span::Span;

/// Splits a `--split-input-file` input at `// -----` lines into independent
/// chunks. Each chunk is padded with the newlines of the lines before it, so
/// diagnostics keep the line numbers of the whole file.
pub fn split_input(source: &[u8]) -> Vec<Vec<u8>> {
    let mut chunks = Vec::new();
    let mut current: Vec<u8> = Vec::new();
    for (index, line) in source.split_inclusive(|&b| b == b'\n').enumerate() {
        if String::from_utf8_lossy(line).trim() == "// -----" {
            chunks.push(std::mem::take(&mut current));
            current = vec![b'\n'; index + 1];
            continue;
        }
        current.extend_from_slice(line);
    }
    chunks.push(current);
    chunks
}

/// One `expected-<severity>[@+N|@-N] {{text}}` annotation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    pub severity: Severity,
    /// 1-based line the diagnostic must be reported on.
    pub line: usize,
    pub text: String,
    /// Where the annotation is written, for "not produced" reports.
    pub span: Span,
}

/// Finds every annotation in `source`. Malformed annotations are returned as
/// diagnostics.
pub fn expectations(source: &[u8]) -> (Vec<Expectation>, Vec<Diagnostic>) {
    let text = String::from_utf8_lossy(source);
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut offset = 0;
    let total_lines = text.lines().count();
    for (idx, line) in text.split('\n').enumerate() {
        let line_no = idx + 1;
        let mut search = 0;
        while let Some(pos) = line[search..].find("expected-") {
            let at = search + pos;
            let start = offset + at;
            search = at + "expected-".len();
            let rest = &line[search..];
            let (severity, len) = if rest.starts_with("error") {
                (Severity::Error, 5)
            } else if rest.starts_with("warning") {
                (Severity::Warning, 7)
            } else if rest.starts_with("note") {
                (Severity::Note, 4)
            } else {
                continue;
            };
            let mut rest = &rest[len..];
            let mut target = line_no as i64;
            if let Some(r) = rest.strip_prefix('@') {
                let digits_end = r
                    .char_indices()
                    .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '+' || c == '-'))))
                    .map_or(r.len(), |(i, _)| i);
                match r[..digits_end].parse::<i64>() {
                    Ok(n) if r.starts_with(['+', '-']) => target += n,
                    _ => {
                        errors.push(
                            Diagnostic::error("expected `@+N` or `@-N` after the annotation")
                                .at(Span::new(start, start + 9 + len + 1)),
                        );
                        break;
                    }
                }
                rest = &r[digits_end..];
            }
            let body = rest.trim_start();
            let (Some(open), Some(close)) = (body.strip_prefix("{{"), body.find("}}")) else {
                errors.push(
                    Diagnostic::error("expected `{{message}}` after the annotation")
                        .at(Span::new(start, start + 9 + len)),
                );
                break;
            };
            let msg = &open[..close - 2];
            if target < 1 || target as usize > total_lines.max(1) {
                errors.push(
                    Diagnostic::error("the annotation's line offset points outside the file")
                        .at(Span::new(start, start + 9 + len)),
                );
                continue;
            }
            out.push(Expectation {
                severity,
                line: target as usize,
                text: msg.to_string(),
                span: Span::new(start, start + 9 + len),
            });
        }
        offset += line.len() + 1;
    }
    (out, errors)
}

/// Matches produced diagnostics against the annotations; returns the
/// mismatches as diagnostics (empty when everything matched).
pub fn check(source: &[u8], produced: &[Diagnostic]) -> Vec<Diagnostic> {
    let (mut expected, mut problems) = expectations(source);
    let mut matched = vec![false; expected.len()];
    // Expectations by line and one line index: linear in the diagnostics.
    let mut by_line: std::collections::HashMap<usize, Vec<usize>> = Default::default();
    for (i, e) in expected.iter().enumerate() {
        by_line.entry(e.line).or_default().push(i);
    }
    let mut take = |sev: Severity, line: usize, msg: &str| -> bool {
        for &i in by_line.get(&line).map_or(&[][..], Vec::as_slice) {
            let e = &expected[i];
            if !matched[i] && e.severity == sev && msg.contains(&e.text) {
                matched[i] = true;
                return true;
            }
        }
        false
    };
    let index = crate::diag::Source::new("", source);
    for d in produced {
        let line = d
            .primary
            .as_ref()
            .map(|l| index.line_col(l.span.start as usize).0);
        let ok = match line {
            Some(line) => take(d.severity, line, &d.message),
            None => false,
        };
        if !ok {
            let mut u =
                Diagnostic::error(format!("unexpected {}: {}", d.severity.as_str(), d.message));
            if let Some(p) = &d.primary {
                u = u.at(p.span);
            }
            problems.push(u);
        }
        // Notes belong to the line of their diagnostic; unmatched notes are fine.
        if let Some(line) = line {
            for n in &d.notes {
                take(Severity::Note, line, n);
            }
        }
    }
    for (e, m) in expected.drain(..).zip(matched) {
        if !m {
            problems.push(
                Diagnostic::error(format!(
                    "expected {} \"{}\" was not produced on line {}",
                    e.severity.as_str(),
                    e.text,
                    e.line
                ))
                .at(e.span),
            );
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_chunks_keep_line_numbers() {
        let chunks = split_input(b"a\n// -----\nb\nc\n  // -----  \nd");
        assert_eq!(
            chunks,
            vec![
                b"a\n".to_vec(),
                b"\n\nb\nc\n".to_vec(),
                b"\n\n\n\n\nd".to_vec()
            ]
        );
    }

    #[test]
    fn finds_annotations_with_offsets() {
        let src = b"a // expected-error {{bad}}\n// expected-warning@+1 {{w}}\nb\n";
        let (e, errs) = expectations(src);
        assert!(errs.is_empty());
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].line, e[0].text.as_str()), (1, "bad"));
        assert_eq!((e[1].line, e[1].severity), (3, Severity::Warning));
    }

    #[test]
    fn reports_missing_and_unexpected() {
        let src = b"x // expected-error {{oops}}\ny\n";
        let produced = vec![Diagnostic::error("other thing").at(Span::new(30, 31))];
        let problems = check(src, &produced);
        assert_eq!(problems.len(), 2);
        let ok = check(
            src,
            &[Diagnostic::error("big oops here").at(Span::new(0, 1))],
        );
        assert!(ok.is_empty());
    }
}
