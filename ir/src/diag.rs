//! The one diagnostic type and the one place that renders it
//! (codespan-reporting, reshaped to `file:line:col: error: message`).

use crate::span::{line_col, Span};
use codespan_reporting::diagnostic as cs;
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// A labelled span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// A diagnostic about a source file: a message, a primary span with an
/// optional label, secondary labels and notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub primary: Option<Label>,
    pub secondary: Vec<Label>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            primary: None,
            secondary: Vec::new(),
            notes: Vec::new(),
        }
    }
    pub fn warning(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message)
        }
    }
    pub fn at(mut self, span: Span) -> Diagnostic {
        self.primary = Some(Label {
            span,
            message: String::new(),
        });
        self
    }
    pub fn at_labelled(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.primary = Some(Label {
            span,
            message: label.into(),
        });
        self
    }
    pub fn with_secondary(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.secondary.push(Label {
            span,
            message: label.into(),
        });
        self
    }
    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// 1-based line of the primary span, if any.
    pub fn line(&self, source: &[u8]) -> Option<usize> {
        self.primary
            .as_ref()
            .map(|l| line_col(source, l.span.start as usize).0)
    }

    /// Renders as `file:line:col: error: message`, the source line with a
    /// caret underline and label, then `= note:` lines.
    pub fn render(&self, file_name: &str, source: &[u8]) -> String {
        self.render_in(&Source::new(file_name, source))
    }

    /// `render` against a prepared source, so many diagnostics of one file
    /// cost one pass over it (`render_all`).
    pub fn render_in(&self, src: &Source) -> String {
        let file_name = src.file.name();
        let Some(primary) = &self.primary else {
            let mut out = format!(
                "{}: {}: {}\n",
                file_name,
                self.severity.as_str(),
                self.message
            );
            for n in &self.notes {
                out.push_str(&format!("  = note: {}\n", n));
            }
            return out;
        };
        let text = src.file.source().as_str();
        let clamp = |s: Span| {
            let len = text.len();
            let start = (s.start as usize).min(len);
            let end = (s.end as usize).clamp(start, len);
            let start = floor_char(text, start);
            start..ceil_char(text, end)
        };
        let file = &src.file;
        let severity = match self.severity {
            Severity::Error => cs::Severity::Error,
            Severity::Warning => cs::Severity::Warning,
            Severity::Note => cs::Severity::Note,
        };
        let mut labels =
            vec![cs::Label::primary((), clamp(primary.span)).with_message(&primary.message)];
        for l in &self.secondary {
            labels.push(cs::Label::secondary((), clamp(l.span)).with_message(&l.message));
        }
        let diag = cs::Diagnostic::new(severity)
            .with_message(&self.message)
            .with_labels(labels)
            .with_notes(self.notes.iter().map(|n| format!("note: {n}")).collect());
        let config = term::Config {
            chars: term::Chars::ascii(),
            ..term::Config::default()
        };
        let mut buf = term::termcolor::NoColor::new(Vec::new());
        if term::emit(&mut buf, &config, file, &diag).is_err() {
            return format!(
                "{}: {}: {}\n",
                file_name,
                self.severity.as_str(),
                self.message
            );
        }
        let rendered = String::from_utf8_lossy(&buf.into_inner()).into_owned();
        let (line, col) = src.line_col(primary.span.start as usize);
        let mut out = format!(
            "{}:{}:{}: {}: {}\n",
            file_name,
            line,
            col,
            self.severity.as_str(),
            self.message
        );
        // Drop codespan's own header and `--> file:line:col` lines.
        for l in rendered.lines().skip(2) {
            out.push_str(l.trim_end());
            out.push('\n');
        }
        out
    }
}

/// A source file prepared for rendering: its text and line starts,
/// computed once for all of its diagnostics.
pub struct Source<'a> {
    file: SimpleFile<&'a str, String>,
    raw: &'a [u8],
    line_starts: Vec<usize>,
}

impl<'a> Source<'a> {
    pub fn new(file_name: &'a str, source: &'a [u8]) -> Source<'a> {
        // Lossy text keeps byte offsets for valid UTF-8; invalid bytes only
        // appear before the first error, which is reported at that byte.
        let text = String::from_utf8_lossy(source).into_owned();
        let mut line_starts = vec![0];
        line_starts.extend(
            source
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        Source {
            file: SimpleFile::new(file_name, text),
            raw: source,
            line_starts,
        }
    }

    /// Line and column (1-based, bytes) of a byte offset, as `line_col`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.raw.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        (line, offset - self.line_starts[line - 1] + 1)
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Renders a list of diagnostics, one after another.
pub fn render_all(diags: &[Diagnostic], file_name: &str, source: &[u8]) -> String {
    let src = Source::new(file_name, source);
    diags.iter().map(|d| d.render_in(&src)).collect()
}

/// The candidate closest to `word` by edit distance, if close enough to be
/// a plausible typo.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    // Suggestions are for typos in names a person types; the distance table
    // is quadratic, so very long words get none.
    const MAX_LEN: usize = 64;
    let len = word.chars().count();
    if len > MAX_LEN {
        return None;
    }
    let limit = (len / 3).max(1);
    candidates
        .into_iter()
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .map(|c| (edit_distance(word, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// Edit distance over chars where an adjacent transposition counts as one
/// edit (optimal string alignment), so `flaot` is one edit from `float`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    #[cfg(test)]
    EDIT_DISTANCES.with(|c| c.set(c.get() + 1));
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = (a[i - 1] != b[j - 1]) as usize;
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
thread_local! {
    /// Calls of `edit_distance` on this thread, for tests that bound work.
    pub(crate) static EDIT_DISTANCES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_all_matches_render_per_diagnostic() {
        let src = b"function f\ndeclare {\n  %x = bad\n}\n\xff\n";
        let ds = [
            Diagnostic::error("a").at(Span::new(28, 31)),
            Diagnostic::error("b").at(Span::new(0, 8)).with_note("n"),
            Diagnostic::warning("c"),
            Diagnostic::error("d").at(Span::new(34, 35)),
            Diagnostic::error("e").at(Span::new(1000, 1001)),
        ];
        let one: String = ds.iter().map(|d| d.render("t.gir", src)).collect();
        assert_eq!(render_all(&ds, "t.gir", src), one);
        assert!(one.contains("t.gir:3:8: error: a"), "{one}");
        assert!(one.contains("t.gir:5:1: error: d"), "{one}");
        let s = Source::new("t", src);
        for off in 0..src.len() + 3 {
            assert_eq!(s.line_col(off), crate::span::line_col(src, off), "{off}");
        }
    }

    #[test]
    fn renders_file_line_col_and_caret() {
        let src = b"function f\ndeclare {\n  %x = bad\n}\n";
        let d = Diagnostic::error("unknown thing")
            .at_labelled(Span::new(28, 31), "here")
            .with_note("a note");
        let out = d.render("t.gir", src);
        assert!(
            out.starts_with("t.gir:3:8: error: unknown thing\n"),
            "{out}"
        );
        assert!(out.contains("3 |   %x = bad"), "{out}");
        assert!(out.contains("^^^ here"), "{out}");
        assert!(out.contains("= note: a note"), "{out}");
    }

    #[test]
    fn suggestions() {
        assert_eq!(did_you_mean("relux", ["relu", "tanh"]), Some("relu"));
        assert_eq!(did_you_mean("zzzz", ["relu", "tanh"]), None);
        // A long near-miss gets no suggestion instead of a huge table.
        let long = "a".repeat(100_000);
        let near = format!("{long}x");
        assert_eq!(did_you_mean(&near, [long.as_str()]), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("flaot", "float"), 1);
    }
}
