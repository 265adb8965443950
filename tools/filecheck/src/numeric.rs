//! Numeric substitution blocks: `[[#%x,VAR:]]`, `[[#VAR+1]]`, `[[#@LINE]]`.
//!
//! Parses the block body into an optional format, an optional definition and
//! an optional expression, and evaluates expressions over 128-bit integers so
//! that overflow is an error instead of a panic.

use std::collections::BTreeMap;

/// How a numeric value is printed and matched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    /// One of `u`, `d`, `x`, `X`.
    pub kind: char,
    /// Minimum number of digits (`%.8x`).
    pub precision: usize,
    /// `%#x`: a `0x` prefix.
    pub alt: bool,
}

impl Format {
    pub const UNSIGNED: Format = Format {
        kind: 'u',
        precision: 0,
        alt: false,
    };

    /// The regex matching a value in this format.
    pub fn regex(&self) -> String {
        let digits = match self.kind {
            'x' => "[0-9a-f]",
            'X' => "[0-9A-F]",
            _ => "[0-9]",
        };
        let sign = if self.kind == 'd' { "-?" } else { "" };
        let prefix = if self.alt { "0x" } else { "" };
        if self.precision > 0 {
            format!("{sign}{prefix}{digits}{{{},}}", self.precision)
        } else {
            format!("{sign}{prefix}{digits}+")
        }
    }

    /// Prints a value in this format.
    pub fn render(&self, v: i128) -> Result<String, String> {
        if v < 0 && self.kind != 'd' {
            return Err(format!("value {v} is negative but the format is unsigned"));
        }
        let mag = v.unsigned_abs();
        let digits = match self.kind {
            'x' => format!("{mag:x}"),
            'X' => format!("{mag:X}"),
            _ => format!("{mag}"),
        };
        let padded = format!("{:0>width$}", digits, width = self.precision);
        let sign = if v < 0 { "-" } else { "" };
        let prefix = if self.alt { "0x" } else { "" };
        Ok(format!("{sign}{prefix}{padded}"))
    }

    /// Parses a matched text back into a value.
    pub fn parse(&self, text: &str) -> Option<i128> {
        let (neg, rest) = match text.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, text),
        };
        let rest = rest.strip_prefix("0x").unwrap_or(rest);
        let radix = if matches!(self.kind, 'x' | 'X') {
            16
        } else {
            10
        };
        let v = i128::from_str_radix(rest, radix).ok()?;
        Some(if neg { -v } else { v })
    }
}

/// A numeric expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    Lit(i128),
    Var(String),
    Line,
    Bin(char, Box<Expr>, Box<Expr>),
    Call(String, Vec<Expr>),
}

impl Expr {
    /// Evaluates with `vars`; `line` is the value of `@LINE`.
    pub fn eval(
        &self,
        vars: &BTreeMap<String, (i128, Format)>,
        line: usize,
    ) -> Result<i128, String> {
        Ok(match self {
            Expr::Lit(v) => *v,
            Expr::Line => line as i128,
            Expr::Var(n) => match vars.get(n) {
                Some((v, _)) => *v,
                None => return Err(format!("undefined variable: {n}")),
            },
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(vars, line)?, b.eval(vars, line)?);
                let r = if *op == '+' {
                    a.checked_add(b)
                } else {
                    a.checked_sub(b)
                };
                r.ok_or("unable to represent numeric value")?
            }
            Expr::Call(f, args) => {
                let vals: Result<Vec<i128>, String> =
                    args.iter().map(|a| a.eval(vars, line)).collect();
                let v = vals?;
                let (a, b) = (v[0], v[1]);
                let r = match f.as_str() {
                    "add" => a.checked_add(b),
                    "sub" => a.checked_sub(b),
                    "mul" => a.checked_mul(b),
                    "div" => a.checked_div(b),
                    "max" => Some(a.max(b)),
                    _ => Some(a.min(b)),
                };
                r.ok_or("unable to represent numeric value")?
            }
        })
    }

    /// The implicit format: that of the first variable used, else unsigned.
    pub fn implicit_format(&self, vars: &BTreeMap<String, (i128, Format)>) -> Format {
        match self {
            Expr::Var(n) => vars.get(n).map_or(Format::UNSIGNED, |v| v.1),
            Expr::Bin(_, a, b) => {
                let fa = a.implicit_format(vars);
                if fa != Format::UNSIGNED {
                    fa
                } else {
                    b.implicit_format(vars)
                }
            }
            Expr::Call(_, args) => args
                .first()
                .map_or(Format::UNSIGNED, |a| a.implicit_format(vars)),
            _ => Format::UNSIGNED,
        }
    }

    /// Variables this expression reads.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Expr::Var(n) => out.push(n.clone()),
            Expr::Bin(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.vars(out)),
            _ => {}
        }
    }
}

/// A parsed `[[#...]]` body.
#[derive(Clone, Debug)]
pub struct Block {
    pub format: Option<Format>,
    pub def: Option<String>,
    pub expr: Option<Expr>,
}

/// Parses the body of a `[[#...]]` block (without the `#`).
pub fn parse_block(body: &str) -> Result<Block, String> {
    let mut rest = body.trim();
    let mut format = None;
    if let Some(r) = rest.strip_prefix('%') {
        let comma = r
            .find(',')
            .ok_or("invalid matching format specification in expression")?;
        format = Some(parse_format(&r[..comma])?);
        rest = r[comma + 1..].trim();
    }
    let mut def = None;
    if let Some(colon) = rest.find(':') {
        let name = rest[..colon].trim();
        if !is_numeric_name(name) {
            return Err("invalid variable name".into());
        }
        def = Some(name.to_string());
        rest = rest[colon + 1..].trim();
    } else if let Some(r) = rest.strip_prefix("==") {
        rest = r.trim();
    }
    let expr = if rest.is_empty() {
        if def.is_none() {
            return Err(
                "empty numeric expression should be followed by a variable definition".into(),
            );
        }
        None
    } else {
        let mut p = Parser {
            s: rest.as_bytes(),
            i: 0,
            depth: 0,
            nodes: 0,
        };
        let e = p.expr()?;
        p.ws();
        if p.i != p.s.len() {
            let c = rest[p.i..].chars().next().unwrap_or(' ');
            if c.is_ascii_punctuation() && c != ')' {
                return Err(format!("unsupported operation '{c}'"));
            }
            return Err(format!(
                "unexpected characters at end of expression '{}'",
                &rest[p.i..]
            ));
        }
        Some(e)
    };
    Ok(Block { format, def, expr })
}

fn parse_format(spec: &str) -> Result<Format, String> {
    let bad = || "invalid format specifier in expression".to_string();
    let mut s = spec.trim();
    let mut alt = false;
    if let Some(r) = s.strip_prefix('#') {
        alt = true;
        s = r;
    }
    let mut precision = 0;
    if let Some(r) = s.strip_prefix('.') {
        let n = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        precision = r[..n].parse().map_err(|_| bad())?;
        if precision > MAX_PRECISION {
            return Err(format!(
                "format precision {} is more than {MAX_PRECISION}",
                &r[..n]
            ));
        }
        s = &r[n..];
    }
    let kind = match s {
        "u" | "d" | "x" | "X" => s.chars().next().ok_or_else(bad)?,
        _ => return Err(bad()),
    };
    if alt && !matches!(kind, 'x' | 'X') {
        return Err("alternate form only supported for hex values".into());
    }
    Ok(Format {
        kind,
        precision,
        alt,
    })
}

fn is_numeric_name(name: &str) -> bool {
    let n = name.strip_prefix('$').unwrap_or(name);
    let mut it = n.chars();
    matches!(it.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && it.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// How deep function calls may nest in a numeric expression, and how many
/// operands and operators it may have: parsing and evaluation recurse, and
/// a stack overflow would abort the checker.
pub const MAX_DEPTH: usize = 100;
pub const MAX_NODES: usize = 1000;

/// The largest precision of a numeric format (`%.N`): the width is padded
/// into every printed value and into the matching regex.
pub const MAX_PRECISION: usize = 1024;

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
    nodes: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && (self.s[self.i] == b' ' || self.s[self.i] == b'\t') {
            self.i += 1;
        }
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let mut lhs = self.atom()?;
        loop {
            self.ws();
            match self.s.get(self.i) {
                Some(&c) if c == b'+' || c == b'-' => {
                    self.i += 1;
                    let rhs = self.atom()?;
                    lhs = Expr::Bin(c as char, Box::new(lhs), Box::new(rhs));
                }
                _ => return Ok(lhs),
            }
        }
    }

    fn atom(&mut self) -> Result<Expr, String> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(format!(
                "numeric expression has more than {MAX_NODES} operands"
            ));
        }
        self.ws();
        let start = self.i;
        if self.s.get(self.i) == Some(&b'@') {
            self.i += 1;
            let id = self.ident();
            if id != "LINE" {
                return Err(format!("invalid pseudo numeric variable '@{id}'"));
            }
            return Ok(Expr::Line);
        }
        if self.s.get(self.i).is_some_and(|c| c.is_ascii_digit()) {
            while self
                .s
                .get(self.i)
                .is_some_and(|c| c.is_ascii_alphanumeric())
            {
                self.i += 1;
            }
            let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
            let v = match text.strip_prefix("0x") {
                Some(h) => i128::from_str_radix(h, 16),
                None => text.parse::<i128>(),
            };
            return v
                .map(Expr::Lit)
                .map_err(|_| format!("invalid operand format '{text}'"));
        }
        let id = self.ident();
        if id.is_empty() {
            let rest = String::from_utf8_lossy(&self.s[self.i..]);
            return Err(format!("invalid operand format '{rest}'"));
        }
        self.ws();
        if self.s.get(self.i) == Some(&b'(') {
            if !matches!(id.as_str(), "add" | "sub" | "mul" | "div" | "max" | "min") {
                return Err(format!("call to undefined function '{id}'"));
            }
            self.i += 1;
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(format!(
                    "function calls nested more than {MAX_DEPTH} deep in numeric expression"
                ));
            }
            let a = self.expr()?;
            self.ws();
            if self.s.get(self.i) != Some(&b',') {
                return Err(format!("function '{id}' takes 2 arguments"));
            }
            self.i += 1;
            let b = self.expr()?;
            self.depth -= 1;
            self.ws();
            if self.s.get(self.i) != Some(&b')') {
                return Err("missing ')' at end of call expression".into());
            }
            self.i += 1;
            return Ok(Expr::Call(id, vec![a, b]));
        }
        Ok(Expr::Var(id))
    }

    fn ident(&mut self) -> String {
        let start = self.i;
        if self.s.get(self.i) == Some(&b'$') {
            self.i += 1;
        }
        while self
            .s
            .get(self.i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }
}
