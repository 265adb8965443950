//! Translation of FileCheck's POSIX ERE dialect into Rust `regex` syntax.
//!
//! LLVM compiles `{{...}}` with POSIX extended regexes and `REG_NEWLINE`:
//! `.` and negated bracket expressions never match a newline, and a
//! backslash inside brackets is an ordinary character. This module keeps
//! those meanings when handing the text to the `regex` crate. Differences
//! that cannot be bridged (no backreferences; leftmost-first instead of
//! leftmost-longest alternation) are documented in `docs/filecheck.md`.

/// Translates one POSIX ERE into Rust regex syntax.
///
/// Returns a message in LLVM's wording when the expression is invalid. The
/// parse follows LLVM's `regcomp` (`p_ere` / `p_ere_exp`) so that the first
/// error found, and so its message, is the one LLVM reports.
pub fn translate_regex(src: &str) -> Result<String, String> {
    let mut p = Ere {
        chars: src.chars().collect(),
        i: 0,
        out: String::with_capacity(src.len() + 8),
    };
    p.ere(None)?;
    Ok(p.out)
}

/// Largest repetition count `regcomp` accepts (`DUPMAX`).
const DUPMAX: u32 = 255;

struct Ere {
    chars: Vec<char>,
    i: usize,
    out: String,
}

impl Ere {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn peek2(&self) -> Option<char> {
        self.chars.get(self.i + 1).copied()
    }

    /// Alternatives up to `stop` (a `)`), each nonempty.
    fn ere(&mut self, stop: Option<char>) -> Result<(), String> {
        loop {
            let before = self.i;
            while let Some(c) = self.peek() {
                if c == '|' || Some(c) == stop {
                    break;
                }
                self.exp()?;
            }
            if self.i == before {
                return Err("empty (sub)expression".into());
            }
            if self.peek() != Some('|') {
                return Ok(());
            }
            self.i += 1;
            self.out.push('|');
        }
    }

    /// Whether the next characters start a repetition (`{` only before a digit).
    fn at_repetition(&self) -> bool {
        match self.peek() {
            Some('*' | '+' | '?') => true,
            Some('{') => self.peek2().is_some_and(|d| d.is_ascii_digit()),
            _ => false,
        }
    }

    /// One atom and its optional repetition.
    fn exp(&mut self) -> Result<(), String> {
        let c = self.chars[self.i];
        self.i += 1;
        let mut was_caret = false;
        match c {
            '(' => {
                if self.peek().is_none() {
                    return Err("parentheses not balanced".into());
                }
                self.out.push('(');
                if self.peek() != Some(')') {
                    self.ere(Some(')'))?;
                }
                if self.peek() != Some(')') {
                    return Err("parentheses not balanced".into());
                }
                self.i += 1;
                self.out.push(')');
            }
            ')' => return Err("parentheses not balanced".into()),
            '^' => {
                self.out.push('^');
                was_caret = true;
            }
            // Grouped so a repetition after it (`$*`) stays valid Rust.
            '$' => self.out.push_str("(?:$)"),
            '|' => return Err("empty (sub)expression".into()),
            '*' | '+' | '?' => return Err("repetition-operator operand invalid".into()),
            '.' => self.out.push('.'),
            '[' => {
                // `[[:<:]]` and `[[:>:]]`: the start and the end of a word.
                let rest: String = self.chars[self.i..].iter().take(6).collect();
                if rest == "[:<:]]" || rest == "[:>:]]" {
                    let edge = if rest == "[:<:]]" { "start" } else { "end" };
                    self.out.push_str(&format!("\\b{{{edge}}}"));
                    self.i += 6;
                } else {
                    self.i = translate_bracket(&self.chars, self.i - 1, &mut self.out)?;
                }
            }
            '\\' => {
                let Some(n) = self.peek() else {
                    return Err("trailing backslash (\\)".into());
                };
                self.i += 1;
                if n.is_ascii_digit() && n != '0' {
                    return Err("backreferences are not supported by glow-filecheck".into());
                }
                if n.is_ascii_alphanumeric() || n.is_ascii_punctuation() {
                    // Rust accepts `\d`, `\w`, `\n`, ... and escaped punctuation.
                    self.out.push('\\');
                    self.out.push(n);
                } else {
                    push_literal(&mut self.out, n);
                }
            }
            '{' => {
                // An ordinary character unless a digit follows.
                if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                    return Err("repetition-operator operand invalid".into());
                }
                self.out.push_str("\\{");
            }
            _ => push_literal(&mut self.out, c),
        }
        if !self.at_repetition() {
            return Ok(());
        }
        let op = self.chars[self.i];
        self.i += 1;
        if was_caret {
            return Err("repetition-operator operand invalid".into());
        }
        // Group the atom so the operator binds to all of it (`^`, `$` included).
        match op {
            '{' => {
                let lo = self.count()?;
                let hi = if self.peek() == Some(',') {
                    self.i += 1;
                    if self.peek().is_some_and(|d| d.is_ascii_digit()) {
                        let hi = self.count()?;
                        if lo > hi {
                            return Err("invalid repetition count(s)".into());
                        }
                        Some(Some(hi))
                    } else {
                        Some(None)
                    }
                } else {
                    None
                };
                if self.peek() != Some('}') {
                    return Err(if self.chars[self.i..].contains(&'}') {
                        "invalid repetition count(s)"
                    } else {
                        "braces not balanced"
                    }
                    .into());
                }
                self.i += 1;
                match hi {
                    None => self.out.push_str(&format!("{{{lo}}}")),
                    Some(None) => self.out.push_str(&format!("{{{lo},}}")),
                    Some(Some(hi)) => self.out.push_str(&format!("{{{lo},{hi}}}")),
                }
            }
            _ => self.out.push(op),
        }
        if self.at_repetition() {
            return Err("repetition-operator operand invalid".into());
        }
        Ok(())
    }

    /// A repetition count: one or more digits, at most `DUPMAX`.
    fn count(&mut self) -> Result<u32, String> {
        let mut n = 0u32;
        let mut digits = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            if n > DUPMAX {
                break;
            }
            n = n * 10 + d;
            digits += 1;
            self.i += 1;
        }
        if digits == 0 || n > DUPMAX {
            return Err("invalid repetition count(s)".into());
        }
        Ok(n)
    }
}

/// Escapes literal text for the `regex` crate.
pub fn escape(text: &str) -> String {
    regex::escape(text)
}

fn push_literal(out: &mut String, c: char) {
    let mut b = [0u8; 4];
    out.push_str(&regex::escape(c.encode_utf8(&mut b)));
}

/// Translates the bracket expression starting at `chars[start] == '['`;
/// returns the index after its closing `]`.
fn translate_bracket(chars: &[char], start: usize, out: &mut String) -> Result<usize, String> {
    let mut i = start + 1;
    let mut negated = false;
    if chars.get(i) == Some(&'^') {
        negated = true;
        i += 1;
    }
    let mut items = String::new();
    let mut first = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("brackets ([ ]) not balanced".into());
        };
        if c == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        if c == '[' && matches!(chars.get(i + 1), Some(':') | Some('.') | Some('=')) {
            let kind = chars[i + 1];
            let close = find_seq(chars, i + 2, kind, ']');
            let Some(close) = close else {
                return Err("brackets ([ ]) not balanced".into());
            };
            let name: String = chars[i + 2..close].iter().collect();
            match kind {
                ':' => {
                    if !is_posix_class(&name) {
                        return Err("invalid character class".into());
                    }
                    items.push_str(&format!("[:{}:]", name));
                }
                _ => {
                    // Collating elements and equivalence classes: single characters only.
                    let mut it = name.chars();
                    match (it.next(), it.next()) {
                        (Some(ch), None) => push_class_char(&mut items, ch),
                        _ => return Err("invalid collating element".into()),
                    }
                }
            }
            i = close + 2;
            continue;
        }
        if c == '-' {
            // A dash is a range operator only between two items.
            let at_edge = items.is_empty() || chars.get(i + 1) == Some(&']');
            if at_edge {
                items.push_str("\\-");
            } else {
                items.push('-');
            }
            i += 1;
            continue;
        }
        push_class_char(&mut items, c);
        i += 1;
    }
    out.push('[');
    if negated {
        out.push('^');
        // REG_NEWLINE: a non-matching list never matches a newline.
        out.push_str("\\n");
    }
    out.push_str(&items);
    out.push(']');
    Ok(i)
}

fn push_class_char(items: &mut String, c: char) {
    match c {
        // Special inside Rust classes but literal in POSIX brackets.
        '\\' | '[' | ']' | '&' | '~' | '^' => {
            items.push('\\');
            items.push(c);
        }
        _ => items.push(c),
    }
}

fn find_seq(chars: &[char], from: usize, a: char, b: char) -> Option<usize> {
    (from..chars.len().saturating_sub(1)).find(|&j| chars[j] == a && chars[j + 1] == b)
}

fn is_posix_class(name: &str) -> bool {
    matches!(
        name,
        "alnum"
            | "alpha"
            | "blank"
            | "cntrl"
            | "digit"
            | "graph"
            | "lower"
            | "print"
            | "punct"
            | "space"
            | "upper"
            | "xdigit"
    )
}

#[cfg(test)]
mod unit {
    use super::*;

    #[test]
    fn classes_and_brackets() {
        assert_eq!(translate_regex("[[:space:]]+").unwrap(), "[[:space:]]+");
        assert_eq!(translate_regex("[^a]").unwrap(), "[^\\na]");
        assert_eq!(translate_regex("[]a]").unwrap(), "[\\]a]");
        assert_eq!(translate_regex("[a-]").unwrap(), "[a\\-]");
        assert_eq!(translate_regex("[\\.]").unwrap(), "[\\\\.]");
        assert!(translate_regex("a(").is_err());
        assert!(translate_regex("").is_err());
        assert!(translate_regex("(a)\\1").is_err());
        assert_eq!(translate_regex("a{2,3}").unwrap(), "a{2,3}");
    }
}
