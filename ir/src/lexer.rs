//! The `.gir` lexer (logos). Newlines are tokens because the grammar is
//! line-based; runs of blank or comment-only lines collapse into one.

use crate::span::Span;
use logos::Logos;

/// A token; text-carrying tokens borrow from the source.
// Clippy reads the two `skip(..., allow_greedy = true)` lines as one
// attribute given twice; to logos they are two skip patterns.
#[allow(clippy::duplicated_attributes)]
#[derive(Logos, Clone, Copy, Debug, PartialEq)]
#[logos(skip r"[ \t\r\f\u{FEFF}]+")]
#[logos(skip(r"//[^\n]*", allow_greedy = true))]
#[logos(skip(r";[^\n]*", allow_greedy = true))]
pub enum Tok<'a> {
    #[token("\n")]
    Newline,
    #[token("function")]
    Function,
    #[token("declare")]
    Declare,
    #[token("code")]
    Code,
    #[token("WeightVar")]
    WeightVar,
    #[token("const")]
    Const,
    #[token("mutable")]
    Mutable,
    #[token("x", priority = 5)]
    X,
    #[regex(r"%[A-Za-z0-9_.$\-]+")]
    Name(&'a str),
    #[regex(r#"%"([^"\\\n]|\\.)*""#)]
    QuotedName(&'a str),
    #[regex(r"@[A-Za-z_]+")]
    OperandKind(&'a str),
    #[regex(r"[A-Za-z_][A-Za-z0-9_]*")]
    Ident(&'a str),
    #[regex(r"-?[0-9]+", priority = 3)]
    Int(&'a str),
    #[regex(r"-?[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?")]
    #[regex(r"-?[0-9]+[eE][+-]?[0-9]+")]
    #[regex(r"-?(inf|nan)", priority = 10)]
    Float(&'a str),
    #[regex(r#""([^"\\\n]|\\.)*""#)]
    Str(&'a str),
    #[token("=")]
    Eq,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("...")]
    Ellipsis,
    /// A quoted name or string whose closing quote is missing on its line;
    /// the lexer leaves such a line out (see `Lexer`).
    #[regex(r#"%?"([^"\\\n]|\\.)*"#)]
    Unterminated(&'a str),
}

impl Tok<'_> {
    /// How the token reads in a diagnostic.
    pub fn describe(&self) -> String {
        match self {
            Tok::Newline => "end of line".into(),
            Tok::Name(s) | Tok::QuotedName(s) => format!("value name `{s}`"),
            Tok::OperandKind(s) => format!("`{s}`"),
            Tok::Ident(s) => format!("identifier `{s}`"),
            Tok::Int(s) => format!("integer `{s}`"),
            Tok::Float(s) => format!("float `{s}`"),
            Tok::Str(s) => format!("string {s}"),
            Tok::Unterminated(_) => "an unterminated quote".into(),
            other => format!("`{}`", other.text()),
        }
    }

    fn text(&self) -> &'static str {
        match self {
            Tok::Function => "function",
            Tok::Declare => "declare",
            Tok::Code => "code",
            Tok::WeightVar => "WeightVar",
            Tok::Const => "const",
            Tok::Mutable => "mutable",
            Tok::X => "x",
            Tok::Eq => "=",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Lt => "<",
            Tok::Gt => ">",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::Ellipsis => "...",
            _ => "",
        }
    }
}

/// A character that starts no token.
#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    pub span: Span,
}

/// A line the lexer left out because it holds a token that cannot be
/// lexed: an unknown character or an unterminated quote.
#[derive(Clone, Debug, PartialEq)]
pub struct LexIssue {
    pub span: Span,
    /// The offending text.
    pub text: String,
    pub unterminated: bool,
    /// The issue is an escape other than `\"`, `\\`, `\n`, `\t` in a
    /// quoted name or string; `span` covers the backslash and its character.
    pub bad_escape: bool,
}

/// Byte offset and length of the first escape in quoted `text` that is not
/// one of `\"`, `\\`, `\n`, `\t` (what the printer writes).
pub fn bad_escape(text: &str) -> Option<(usize, usize)> {
    let mut it = text.char_indices();
    while let Some((i, c)) = it.next() {
        if c == '\\' {
            match it.next() {
                Some((_, '"' | '\\' | 'n' | 't')) => {}
                Some((_, other)) => return Some((i, 1 + other.len_utf8())),
                None => return Some((i, 1)),
            }
        }
    }
    None
}

/// The token stream the grammar consumes: `(start, token, end)` triples,
/// one line at a time, with blank lines folded and a final newline
/// guaranteed. A line with a token that cannot be lexed is reported to
/// `issues` and left out whole, so the parser never sees it and recovers
/// nothing: every other line still parses.
pub struct Lexer<'a> {
    inner: logos::SpannedIter<'a, Tok<'a>>,
    pending: std::collections::VecDeque<(usize, Tok<'a>, usize)>,
    issues: Option<&'a std::cell::RefCell<Vec<LexIssue>>>,
    done: bool,
    len: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(source: &'a str) -> Lexer<'a> {
        Lexer {
            inner: Tok::lexer(source).spanned(),
            pending: std::collections::VecDeque::new(),
            issues: None,
            done: false,
            len: source.len(),
        }
    }

    /// A lexer that reports left-out lines to `issues`.
    pub fn with_issues(
        source: &'a str,
        issues: &'a std::cell::RefCell<Vec<LexIssue>>,
    ) -> Lexer<'a> {
        Lexer {
            issues: Some(issues),
            ..Lexer::new(source)
        }
    }

    /// Reads the next line into `pending` (empty on entry); false at the
    /// end of input. Tokens go straight into `pending`, which a left-out
    /// line clears again: no buffer per line.
    fn fill(&mut self) -> bool {
        debug_assert!(self.pending.is_empty());
        let mut bad: Option<LexIssue> = None;
        loop {
            match self.inner.next() {
                Some((Ok(Tok::Newline), span)) => {
                    if let Some(issue) = bad {
                        self.pending.clear();
                        if let Some(issues) = self.issues {
                            issues.borrow_mut().push(issue);
                        }
                    } else if !self.pending.is_empty() {
                        self.pending.push_back((span.start, Tok::Newline, span.end));
                    }
                    return true;
                }
                Some((tok, span)) => {
                    let unknown = tok.is_err();
                    let unterminated = matches!(tok, Ok(Tok::Unterminated(_)));
                    if (unknown || unterminated) && bad.is_none() {
                        bad = Some(LexIssue {
                            span: Span::new(span.start, span.end),
                            text: self.inner.slice().to_string(),
                            unterminated,
                            bad_escape: false,
                        });
                    }
                    if let Ok(Tok::QuotedName(q) | Tok::Str(q)) = &tok {
                        if let (None, Some((at, len))) = (&bad, bad_escape(q)) {
                            let start = span.start + at;
                            bad = Some(LexIssue {
                                span: Span::new(start, start + len),
                                text: q[at..at + len].to_string(),
                                unterminated: false,
                                bad_escape: true,
                            });
                        }
                    }
                    if let Ok(t) = tok {
                        if bad.is_none() {
                            self.pending.push_back((span.start, t, span.end));
                        }
                    }
                }
                None => {
                    if let Some(issue) = bad {
                        self.pending.clear();
                        if let Some(issues) = self.issues {
                            issues.borrow_mut().push(issue);
                        }
                    } else if !self.pending.is_empty() {
                        self.pending.push_back((self.len, Tok::Newline, self.len));
                    }
                    self.done = true;
                    return false;
                }
            }
        }
    }
}

impl<'a> Iterator for Lexer<'a> {
    type Item = Result<(usize, Tok<'a>, usize), LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        while self.pending.is_empty() {
            if self.done || !self.fill() && self.pending.is_empty() {
                return None;
            }
        }
        self.pending.pop_front().map(Ok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        Lexer::new(s).map(|t| t.unwrap().1).collect()
    }

    #[test]
    fn lexes_a_line() {
        let t = toks("  0 %conv.res = allocactivation { Ty: float<8 x 2>} // size: 4\n\n; c\n");
        assert_eq!(
            t,
            vec![
                Tok::Int("0"),
                Tok::Name("%conv.res"),
                Tok::Eq,
                Tok::Ident("allocactivation"),
                Tok::LBrace,
                Tok::Ident("Ty"),
                Tok::Colon,
                Tok::Ident("float"),
                Tok::Lt,
                Tok::Int("8"),
                Tok::X,
                Tok::Int("2"),
                Tok::Gt,
                Tok::RBrace,
                Tok::Newline,
            ]
        );
    }

    #[test]
    fn numbers_and_names() {
        assert_eq!(
            toks(r#"-3 0.5 1e-3 -inf nan %"a b" @in ..."#),
            vec![
                Tok::Int("-3"),
                Tok::Float("0.5"),
                Tok::Float("1e-3"),
                Tok::Float("-inf"),
                Tok::Float("nan"),
                Tok::QuotedName(r#"%"a b""#),
                Tok::OperandKind("@in"),
                Tok::Ellipsis,
                Tok::Newline,
            ]
        );
    }
}
