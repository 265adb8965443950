//! Boolean feature expressions for `REQUIRES:`, `UNSUPPORTED:` and `XFAIL:`, as in LLVM lit.
//!
//! Grammar: `or := and ('||' and)*`, `and := not ('&&' not)*`, `not := '!' not | '(' or ')' | NAME`,
//! where NAME is a run of `[A-Za-z0-9_.+=/:-]` (plus the literals `true` and `false`). Also here:
//! detection of the environment features (`llvm-filecheck`, `system-cc`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// A parsed feature expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    Feature(String),
    Const(bool),
    Not(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// Parses one expression; the error says what was expected where.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let tokens = tokenize(text)?;
        if tokens.is_empty() {
            return Err("empty feature expression".into());
        }
        let mut p = Parser {
            tokens: &tokens,
            pos: 0,
            depth: 0,
        };
        let e = p.or()?;
        match p.tokens.get(p.pos) {
            None => Ok(e),
            Some(t) => Err(format!(
                "unexpected `{}` in feature expression `{}`",
                t.show(),
                text.trim()
            )),
        }
    }

    /// Evaluates against the set of available features.
    pub fn eval(&self, features: &BTreeSet<String>) -> bool {
        match self {
            Expr::Feature(f) => features.contains(f),
            Expr::Const(b) => *b,
            Expr::Not(e) => !e.eval(features),
            Expr::And(a, b) => a.eval(features) && b.eval(features),
            Expr::Or(a, b) => a.eval(features) || b.eval(features),
        }
    }
}

/// Parses a comma-separated list of expressions (one directive line).
pub fn parse_list(text: &str) -> Result<Vec<(String, Expr)>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| Expr::parse(s).map(|e| (s.to_string(), e)))
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Not,
    And,
    Or,
    LParen,
    RParen,
}

impl Tok {
    fn show(&self) -> &str {
        match self {
            Tok::Name(n) => n,
            Tok::Not => "!",
            Tok::And => "&&",
            Tok::Or => "||",
            Tok::LParen => "(",
            Tok::RParen => ")",
        }
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.+=/:-".contains(c)
}

fn tokenize(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            c if c.is_whitespace() => {}
            '!' => out.push(Tok::Not),
            '(' => out.push(Tok::LParen),
            ')' => out.push(Tok::RParen),
            '&' | '|' => {
                if chars.peek().map(|&(_, n)| n) != Some(c) {
                    return Err(format!(
                        "expected `{c}{c}` in feature expression `{}`",
                        text.trim()
                    ));
                }
                chars.next();
                out.push(if c == '&' { Tok::And } else { Tok::Or });
            }
            c if is_name_char(c) => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, n)) = chars.peek() {
                    if !is_name_char(n) {
                        break;
                    }
                    end = j + n.len_utf8();
                    chars.next();
                }
                out.push(Tok::Name(text[i..end].to_string()));
            }
            other => {
                return Err(format!(
                    "unexpected character `{other}` in feature expression `{}`",
                    text.trim()
                ))
            }
        }
    }
    Ok(out)
}

/// How deep `(` and `!` may nest in a feature expression: the parser
/// recurses per level, and a stack overflow would abort the whole run.
pub const MAX_DEPTH: usize = 100;

struct Parser<'a> {
    tokens: &'a [Tok],
    pos: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut e = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            e = Expr::Or(Box::new(e), Box::new(self.and()?));
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut e = self.not()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            e = Expr::And(Box::new(e), Box::new(self.not()?));
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr, String> {
        self.depth += 1;
        let e = self.not_inner();
        self.depth -= 1;
        e
    }

    fn not_inner(&mut self) -> Result<Expr, String> {
        if self.depth > MAX_DEPTH {
            return Err(format!(
                "feature expression nested more than {MAX_DEPTH} deep (`(` and `!`)"
            ));
        }
        let tok = self.peek().cloned();
        self.pos += 1;
        match tok {
            Some(Tok::Not) => Ok(Expr::Not(Box::new(self.not()?))),
            Some(Tok::LParen) => {
                let e = self.or()?;
                if self.peek() != Some(&Tok::RParen) {
                    return Err("expected `)` in feature expression".into());
                }
                self.pos += 1;
                Ok(e)
            }
            Some(Tok::Name(n)) if n == "true" => Ok(Expr::Const(true)),
            Some(Tok::Name(n)) if n == "false" => Ok(Expr::Const(false)),
            Some(Tok::Name(n)) => Ok(Expr::Feature(n)),
            Some(t) => Err(format!("expected a feature name, found `{}`", t.show())),
            None => Err("expected a feature name at end of expression".into()),
        }
    }
}

/// Where LLVM's FileCheck lives, when installed (for the `llvm-filecheck` feature and tool).
pub fn find_llvm_filecheck() -> Option<PathBuf> {
    let fixed = Path::new("/usr/lib/llvm-19/bin/FileCheck");
    if fixed.is_file() {
        return Some(fixed.to_path_buf());
    }
    find_on_path("FileCheck")
}

/// Searches `$PATH` for an executable file named `name`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

/// Whether `p` is a file someone may execute.
pub(crate) fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(fs: &[&str]) -> BTreeSet<String> {
        fs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn nesting_is_limited() {
        let f = set(&["a"]);
        let ok = format!("{}a{}", "(".repeat(99), ")".repeat(99));
        assert!(Expr::parse(&ok).unwrap().eval(&f));
        assert!(Expr::parse(&format!("{}a", "!".repeat(98)))
            .unwrap()
            .eval(&f));
        let deep = format!("{}a{}", "(".repeat(5000), ")".repeat(5000));
        let e = Expr::parse(&deep).unwrap_err();
        assert!(e.contains("nested more than 100 deep"), "{e}");
        assert!(Expr::parse(&"!".repeat(10_000)).is_err());
    }

    #[test]
    fn precedence_and_grouping() {
        let f = set(&["a", "b"]);
        let eval = |s: &str| Expr::parse(s).unwrap().eval(&f);
        assert!(eval("a"));
        assert!(!eval("c"));
        assert!(eval("!c"));
        assert!(eval("a && b"));
        assert!(eval("c || a && b"));
        assert!(!eval("(c || a) && !b"));
        assert!(eval("!(c && a)"));
        assert!(eval("true"));
        assert!(!eval("false || c"));
        assert!(eval("llvm-filecheck || a"));
    }

    #[test]
    fn errors_are_reported_not_panicked() {
        for bad in [
            "", "a &&", "a & b", "(a", "a)", "&& a", "a b", "!", "a | b", "é",
        ] {
            assert!(Expr::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_split_on_commas() {
        let l = parse_list("a, b && c ,").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].0, "b && c");
    }
}
