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
/// Returns a message in LLVM's wording when the expression is invalid.
pub fn translate_regex(src: &str) -> Result<String, String> {
    if src.is_empty() {
        return Err("empty (sub)expression".into());
    }
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len() + 8);
    let mut i = 0;
    let mut depth = 0usize;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\\' => {
                let Some(&n) = chars.get(i + 1) else {
                    return Err("trailing backslash (\\)".into());
                };
                if n.is_ascii_digit() && n != '0' {
                    return Err("backreferences are not supported by glow-filecheck".into());
                }
                if n.is_ascii_alphanumeric() || n.is_ascii_punctuation() {
                    // Rust accepts `\d`, `\w`, `\n`, ... and escaped punctuation.
                    out.push('\\');
                    out.push(n);
                } else {
                    push_literal(&mut out, n);
                }
                i += 2;
            }
            '[' => {
                i = translate_bracket(&chars, i, &mut out)?;
            }
            '(' => {
                if chars.get(i + 1) == Some(&'?') {
                    return Err("repetition-operator operand invalid".into());
                }
                depth += 1;
                out.push('(');
                i += 1;
            }
            ')' => {
                if depth == 0 {
                    return Err("parentheses not balanced".into());
                }
                depth -= 1;
                out.push(')');
                i += 1;
            }
            '{' => {
                // An interval `{n}`, `{n,}` or `{n,m}`; anything else is invalid in ERE.
                let end = chars[i..].iter().position(|&c| c == '}').map(|p| p + i);
                let Some(end) = end else {
                    return Err("braces not balanced".into());
                };
                let body: String = chars[i + 1..end].iter().collect();
                let ok = !body.is_empty()
                    && body.chars().all(|c| c.is_ascii_digit() || c == ',')
                    && body.matches(',').count() <= 1
                    && !body.starts_with(',');
                if !ok {
                    return Err("invalid repetition count(s)".into());
                }
                out.push('{');
                out.push_str(&body);
                out.push('}');
                i = end + 1;
            }
            ']' | '}' => {
                out.push('\\');
                out.push(c);
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    if depth != 0 {
        return Err("parentheses not balanced".into());
    }
    Ok(out)
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
