//! The RUN-line shell's lexer and parser.
//!
//! Supported: words with `'single'`, `"double"` quotes and backslash escapes; `|` (pipefail),
//! `&&`, `||`, `;`; redirections `> >> < N> N>> N>&M &> &>>`. Everything else that a POSIX shell
//! would treat specially (`$(...)`, backticks, `$VAR`, globs, `|&`, heredocs, subshells,
//! background `&`) is rejected with an error naming the construct, never passed on literally.

/// How a pipeline connects to the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connector {
    /// First pipeline, or after `;`: always runs.
    Seq,
    /// After `&&`: runs when the previous status is 0.
    And,
    /// After `||`: runs when the previous status is non-zero.
    Or,
}

/// A redirection, applied in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// `N> file` / `N>> file` (N is 1 or 2).
    Out {
        fd: u8,
        append: bool,
        target: String,
    },
    /// `N>&M`: fd N becomes a copy of fd M.
    Dup { fd: u8, to: u8 },
    /// `&> file` / `&>> file`.
    Both { append: bool, target: String },
    /// `< file`.
    In { target: String },
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Command {
    pub args: Vec<String>,
    pub redirects: Vec<Redirect>,
}

/// Commands joined by `|`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pipeline {
    pub commands: Vec<Command>,
}

/// A whole command line: pipelines with their connectors, left to right.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CommandLine {
    pub items: Vec<(Connector, Pipeline)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Word(String),
    Pipe,
    And,
    Or,
    Semi,
    Redir(RedirTok),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum RedirTok {
    Out { fd: u8, append: bool },
    Dup { fd: u8, to: u8 },
    Both { append: bool },
    In,
}

/// Parses one command line.
pub fn parse(text: &str) -> Result<CommandLine, String> {
    let tokens = lex(text)?;
    let mut line = CommandLine::default();
    let mut connector = Connector::Seq;
    let mut pipeline = Pipeline::default();
    let mut cmd = Command::default();
    let mut iter = tokens.into_iter().peekable();
    while let Some(tok) = iter.next() {
        match tok {
            Tok::Word(w) => cmd.args.push(w),
            Tok::Redir(r) => {
                let redirect = match r {
                    RedirTok::Dup { fd, to } => Redirect::Dup { fd, to },
                    other => {
                        let target = match iter.next() {
                            Some(Tok::Word(w)) => w,
                            _ => return Err("missing file name after redirection".into()),
                        };
                        match other {
                            RedirTok::Out { fd, append } => Redirect::Out { fd, append, target },
                            RedirTok::Both { append } => Redirect::Both { append, target },
                            _ => Redirect::In { target },
                        }
                    }
                };
                cmd.redirects.push(redirect);
            }
            Tok::Pipe => {
                if cmd.args.is_empty() {
                    return Err("empty command before `|`".into());
                }
                pipeline.commands.push(std::mem::take(&mut cmd));
            }
            Tok::And | Tok::Or | Tok::Semi => {
                let name = match tok {
                    Tok::And => "&&",
                    Tok::Or => "||",
                    _ => ";",
                };
                if cmd.args.is_empty() {
                    return Err(format!("empty command before `{name}`"));
                }
                pipeline.commands.push(std::mem::take(&mut cmd));
                line.items.push((connector, std::mem::take(&mut pipeline)));
                connector = match tok {
                    Tok::And => Connector::And,
                    Tok::Or => Connector::Or,
                    _ => Connector::Seq,
                };
            }
        }
    }
    if cmd.args.is_empty() {
        if !cmd.redirects.is_empty() || !pipeline.commands.is_empty() || connector != Connector::Seq
        {
            return Err("command line ends without a command".into());
        }
    } else {
        pipeline.commands.push(cmd);
        line.items.push((connector, pipeline));
    }
    if line.items.is_empty() {
        return Err("empty command line".into());
    }
    for (_, p) in &line.items {
        for c in &p.commands {
            let n = prefix_depth(&c.args);
            if n > super::exec::MAX_PREFIX_DEPTH {
                return Err(format!(
                    "{n} nested `not`/`env` prefixes; at most {} are supported",
                    super::exec::MAX_PREFIX_DEPTH
                ));
            }
        }
    }
    Ok(line)
}

/// How many `not` / `env` prefixes (each a level of the executor) start `args`.
fn prefix_depth(args: &[String]) -> usize {
    let (mut i, mut n) = (0, 0);
    loop {
        match args.get(i).map(String::as_str) {
            Some("not") => {
                i += 1;
                if args.get(i).is_some_and(|a| a == "--crash") {
                    i += 1;
                }
            }
            Some("env") => {
                i += 1;
                while let Some(a) = args.get(i) {
                    if a == "-u" {
                        i += 2;
                    } else if a.split_once('=').is_some_and(|(k, _)| !k.is_empty()) {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            _ => return n,
        }
        n += 1;
    }
}

fn unsupported(what: &str) -> String {
    format!("unsupported shell construct: {what}")
}

/// Splits the text into tokens, resolving quotes and escapes.
fn lex(text: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        // An fd number glued to a redirection operator, e.g. `2>`.
        if c.is_ascii_digit() {
            let mut j = i;
            while j < chars.len() && chars[j].is_ascii_digit() {
                j += 1;
            }
            if j < chars.len() && (chars[j] == '>' || chars[j] == '<') {
                let fd: String = chars[i..j].iter().collect();
                let (tok, next) = lex_redirect(&chars, j, Some(&fd))?;
                out.push(tok);
                i = next;
                continue;
            }
        }
        match c {
            '|' => match chars.get(i + 1) {
                Some('|') => {
                    out.push(Tok::Or);
                    i += 2;
                }
                Some('&') => return Err(unsupported("`|&` (pipe stderr); use `2>&1 |`")),
                _ => {
                    out.push(Tok::Pipe);
                    i += 1;
                }
            },
            '&' => match chars.get(i + 1) {
                Some('&') => {
                    out.push(Tok::And);
                    i += 2;
                }
                Some('>') => {
                    let append = chars.get(i + 2) == Some(&'>');
                    out.push(Tok::Redir(RedirTok::Both { append }));
                    i += if append { 3 } else { 2 };
                }
                _ => return Err(unsupported("`&` (background job)")),
            },
            ';' => {
                out.push(Tok::Semi);
                i += 1;
            }
            '>' | '<' => {
                let (tok, next) = lex_redirect(&chars, i, None)?;
                out.push(tok);
                i = next;
            }
            '(' | ')' => return Err(unsupported("`(...)` (subshell)")),
            _ => {
                let (word, next) = lex_word(&chars, i)?;
                out.push(Tok::Word(word));
                i = next;
            }
        }
    }
    Ok(out)
}

/// Lexes a redirection operator starting at `chars[i]` (`>` or `<`).
fn lex_redirect(chars: &[char], i: usize, fd: Option<&str>) -> Result<(Tok, usize), String> {
    let fd_num = match fd {
        None => None,
        Some("0") => Some(0),
        Some("1") => Some(1),
        Some("2") => Some(2),
        Some(other) => {
            return Err(unsupported(&format!(
                "redirection of file descriptor {other}"
            )))
        }
    };
    if chars[i] == '<' {
        return match chars.get(i + 1) {
            Some('<') => Err(unsupported("`<<` (here-document)")),
            Some('(') => Err(unsupported("`<(...)` (process substitution)")),
            Some('&') => Err(unsupported("`<&` (input duplication)")),
            _ if fd_num.is_some_and(|n| n != 0) => {
                Err(unsupported("input redirection of fd 1 or 2"))
            }
            _ => Ok((Tok::Redir(RedirTok::In), i + 1)),
        };
    }
    let fd = match fd_num {
        Some(0) => return Err(unsupported("output redirection of fd 0")),
        Some(n) => n,
        None => 1,
    };
    match chars.get(i + 1) {
        Some('>') => Ok((Tok::Redir(RedirTok::Out { fd, append: true }), i + 2)),
        Some('&') => match chars.get(i + 2) {
            Some(d @ ('1' | '2')) if !chars.get(i + 3).is_some_and(|c| c.is_ascii_digit()) => {
                let to = if *d == '1' { 1 } else { 2 };
                Ok((Tok::Redir(RedirTok::Dup { fd, to }), i + 3))
            }
            _ => Err(unsupported("`>&` other than `>&1` / `>&2`")),
        },
        Some('(') => Err(unsupported("`>(...)` (process substitution)")),
        Some('|') => Err(unsupported("`>|` (clobber)")),
        _ => Ok((Tok::Redir(RedirTok::Out { fd, append: false }), i + 1)),
    }
}

/// Lexes one word (which may mix quoted and unquoted parts) starting at `chars[i]`.
fn lex_word(chars: &[char], mut i: usize) -> Result<(String, usize), String> {
    let mut word = String::new();
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => break,
            '|' | '&' | ';' | '<' | '>' | '(' | ')' => break,
            '\'' => {
                let end = (i + 1..chars.len())
                    .find(|&j| chars[j] == '\'')
                    .ok_or("unterminated single quote")?;
                word.extend(&chars[i + 1..end]);
                i = end + 1;
            }
            '"' => {
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err("unterminated double quote".into()),
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => {
                            match chars.get(i + 1) {
                                Some(n @ ('"' | '\\' | '$' | '`')) => word.push(*n),
                                Some(n) => {
                                    word.push('\\');
                                    word.push(*n);
                                }
                                None => return Err("unterminated double quote".into()),
                            }
                            i += 2;
                        }
                        Some('`') => return Err(unsupported("backticks (command substitution)")),
                        Some('$') if chars.get(i + 1) == Some(&'(') => {
                            return Err(unsupported("`$(...)` (command substitution)"))
                        }
                        Some(other) => {
                            word.push(*other);
                            i += 1;
                        }
                    }
                }
            }
            '\\' => {
                match chars.get(i + 1) {
                    Some(n) => word.push(*n),
                    None => word.push('\\'),
                }
                i += 2;
            }
            '`' => return Err(unsupported("backticks (command substitution)")),
            '$' => match chars.get(i + 1) {
                Some('(') => return Err(unsupported("`$(...)` (command substitution)")),
                Some('{') => return Err(unsupported("`${...}` (variable expansion)")),
                Some(n) if n.is_ascii_alphanumeric() || *n == '_' || *n == '?' => {
                    return Err(unsupported("`$NAME` (variable expansion)"))
                }
                _ => {
                    word.push('$');
                    i += 1;
                }
            },
            '*' | '?' => {
                return Err(unsupported(&format!(
                    "`{c}` (glob); quote it if meant literally"
                )))
            }
            _ => {
                word.push(c);
                i += 1;
            }
        }
    }
    Ok((word, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &CommandLine, p: usize, c: usize) -> Vec<&str> {
        line.items[p].1.commands[c]
            .args
            .iter()
            .map(String::as_str)
            .collect()
    }

    #[test]
    fn words_and_quotes() {
        let l = parse(r#"echo 'a b' "c \"d\" \n" e\ f g"h"'i'"#).unwrap();
        assert_eq!(
            words(&l, 0, 0),
            vec!["echo", "a b", "c \"d\" \\n", "e f", "ghi"]
        );
        let l = parse("echo '' \"\"").unwrap();
        assert_eq!(words(&l, 0, 0), vec!["echo", "", ""]);
    }

    #[test]
    fn operators() {
        let l = parse("a | b && c || d ; e").unwrap();
        let conns: Vec<_> = l.items.iter().map(|(c, _)| *c).collect();
        assert_eq!(
            conns,
            vec![
                Connector::Seq,
                Connector::And,
                Connector::Or,
                Connector::Seq
            ]
        );
        assert_eq!(l.items[0].1.commands.len(), 2);
        assert!(parse("a;").is_ok());
    }

    #[test]
    fn redirections() {
        let l = parse("a > x 2>&1 >> y < z 2> w &> v 2>>u >&2").unwrap();
        let r = &l.items[0].1.commands[0].redirects;
        assert_eq!(
            r[0],
            Redirect::Out {
                fd: 1,
                append: false,
                target: "x".into()
            }
        );
        assert_eq!(r[1], Redirect::Dup { fd: 2, to: 1 });
        assert_eq!(
            r[2],
            Redirect::Out {
                fd: 1,
                append: true,
                target: "y".into()
            }
        );
        assert_eq!(r[3], Redirect::In { target: "z".into() });
        assert_eq!(
            r[4],
            Redirect::Out {
                fd: 2,
                append: false,
                target: "w".into()
            }
        );
        assert_eq!(
            r[5],
            Redirect::Both {
                append: false,
                target: "v".into()
            }
        );
        assert_eq!(
            r[6],
            Redirect::Out {
                fd: 2,
                append: true,
                target: "u".into()
            }
        );
        assert_eq!(r[7], Redirect::Dup { fd: 1, to: 2 });
        // A digit inside a word is not an fd.
        let l = parse("echo a2>x").unwrap();
        assert_eq!(words(&l, 0, 0), vec!["echo", "a2"]);
    }

    #[test]
    fn rejects_unsupported_constructs_by_name() {
        for (text, needle) in [
            ("echo $(ls)", "$(...)"),
            ("echo `ls`", "backticks"),
            ("echo $HOME", "$NAME"),
            ("echo ${X}", "${...}"),
            ("ls *.gir", "glob"),
            ("a |& b", "|&"),
            ("cat <<EOF", "here-document"),
            ("(a)", "subshell"),
            ("a &", "background"),
            ("a 3> x", "file descriptor 3"),
            ("echo \"$(x)\"", "$(...)"),
        ] {
            let err = parse(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }

    #[test]
    fn prefix_depth_is_limited() {
        let ok = format!("{}true", "not ".repeat(100));
        assert!(parse(&ok).is_ok());
        let deep = format!("{}true", "not env X=1 ".repeat(60));
        let e = parse(&deep).unwrap_err();
        assert!(
            e.contains("120 nested `not`/`env` prefixes; at most 100"),
            "{e}"
        );
        let deep = format!("{}true", "not ".repeat(10_000));
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn rejects_malformed_lines() {
        for text in [
            "", "| a", "a |", "a &&", "&& a", "a > ", "echo 'x", "echo \"x", "a ; ; b",
        ] {
            assert!(parse(text).is_err(), "{text}");
        }
    }
}
