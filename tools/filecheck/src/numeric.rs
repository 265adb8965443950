//! Numeric substitution blocks: `[[#%x,VAR:]]`, `[[#VAR+1]]`, `[[#@LINE]]`.
//!
//! Parses the block body into an optional format, an optional definition and
//! an optional expression, and evaluates expressions over unbounded integers,
//! as LLVM 19 does (its `APInt` values widen on overflow).

use num_bigint::{BigInt, Sign};
use std::collections::BTreeMap;

/// A numeric variable's or expression's value.
pub type Num = BigInt;

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

    /// The format as LLVM names it in messages (`%x`).
    pub fn spec(&self) -> String {
        format!("%{}", self.kind)
    }

    /// The regex matching a value in this format.
    pub fn regex(&self) -> String {
        self.llvm_regex().replace('(', "(?:")
    }

    /// LLVM's `getWildcardRegex` text: with a precision, optional leading digits (not starting
    /// with 0) then exactly that many, in a capture group of its own.
    pub fn llvm_regex(&self) -> String {
        let (first, digits) = match self.kind {
            'x' => ("[1-9a-f]", "[0-9a-f]"),
            'X' => ("[1-9A-F]", "[0-9A-F]"),
            _ => ("[1-9]", "[0-9]"),
        };
        let sign = if self.kind == 'd' { "-?" } else { "" };
        let prefix = if self.alt { "0x" } else { "" };
        if self.precision > 0 {
            format!(
                "{prefix}{sign}({first}{digits}*)?{digits}{{{}}}",
                self.precision
            )
        } else {
            format!("{sign}{prefix}{digits}+")
        }
    }

    /// Prints a value in this format.
    pub fn render(&self, v: &Num) -> Result<String, String> {
        let negative = v.sign() == Sign::Minus;
        if negative && self.kind != 'd' {
            return Err(format!("value {v} is negative but the format is unsigned"));
        }
        let mag = v.magnitude();
        let digits = match self.kind {
            'x' => mag.to_str_radix(16),
            'X' => mag.to_str_radix(16).to_ascii_uppercase(),
            _ => mag.to_str_radix(10),
        };
        let padded = format!("{:0>width$}", digits, width = self.precision);
        let sign = if negative { "-" } else { "" };
        let prefix = if self.alt { "0x" } else { "" };
        Ok(format!("{sign}{prefix}{padded}"))
    }

    /// Parses a matched text back into a value.
    pub fn parse(&self, text: &str) -> Option<Num> {
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
        let v = Num::parse_bytes(rest.as_bytes(), radix)?;
        Some(if neg { -v } else { v })
    }
}

/// A numeric expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A literal and its text.
    Lit(Num, String),
    /// A variable and the offset of its name in the block text.
    Var(String, usize),
    Line,
    /// An operator, its operands, and the text and offset LLVM names it by in messages.
    Bin(char, Box<Expr>, Box<Expr>, String, usize),
    /// A call, its arguments, and (as LLVM) the text after the call as its name.
    Call(String, Vec<Expr>, String, usize),
}

impl Expr {
    /// Evaluates with `vars`; `line` is the value of `@LINE`.
    pub fn eval(&self, vars: &BTreeMap<String, (Num, Format)>, line: usize) -> Result<Num, String> {
        Ok(match self {
            Expr::Lit(v, _) => v.clone(),
            Expr::Line => Num::from(line),
            Expr::Var(n, _) => match vars.get(n) {
                Some((v, _)) => v.clone(),
                None => return Err(format!("undefined variable: {n}")),
            },
            Expr::Bin(op, a, b, ..) => {
                let (a, b) = (a.eval(vars, line)?, b.eval(vars, line)?);
                if *op == '+' {
                    a + b
                } else {
                    a - b
                }
            }
            Expr::Call(f, args, ..) => {
                let vals: Result<Vec<Num>, String> =
                    args.iter().map(|a| a.eval(vars, line)).collect();
                let mut v = vals?.into_iter();
                let (Some(a), Some(b)) = (v.next(), v.next()) else {
                    return Err(format!("function '{f}' takes 2 arguments"));
                };
                match f.as_str() {
                    "add" => a + b,
                    "sub" => a - b,
                    "mul" => a * b,
                    "div" if b.sign() == Sign::NoSign => return Err("division by zero".into()),
                    // Truncates toward zero, as APInt's sdiv.
                    "div" => a / b,
                    "max" => a.max(b),
                    _ => a.min(b),
                }
            }
        })
    }

    /// The implicit format (LLVM's getImplicitFormat): that of the variables used, `None` for
    /// literals only; two operands with different formats are a conflict.
    pub fn implicit_format(
        &self,
        var_format: &dyn Fn(&str) -> Format,
    ) -> Result<Option<Format>, (usize, String)> {
        match self {
            Expr::Lit(..) => Ok(None),
            Expr::Line => Ok(Some(Format::UNSIGNED)),
            Expr::Var(n, _) => Ok(Some(var_format(n))),
            Expr::Bin(_, a, b, _, at) => Self::join(a, b, *at, var_format),
            Expr::Call(_, args, _, at) => Self::join(&args[0], &args[1], *at, var_format),
        }
    }

    fn join(
        a: &Expr,
        b: &Expr,
        at: usize,
        var_format: &dyn Fn(&str) -> Format,
    ) -> Result<Option<Format>, (usize, String)> {
        let (fa, fb) = (
            a.implicit_format(var_format)?,
            b.implicit_format(var_format)?,
        );
        match (fa, fb) {
            (Some(x), Some(y)) if x != y => Err((
                at,
                format!(
                    "implicit format conflict between '{}' ({}) and '{}' ({}), need an explicit format specifier",
                    a.text(),
                    x.spec(),
                    b.text(),
                    y.spec()
                ),
            )),
            (Some(x), _) => Ok(Some(x)),
            _ => Ok(fb),
        }
    }

    /// The source text LLVM shows for this expression.
    pub fn text(&self) -> &str {
        match self {
            Expr::Lit(_, t) | Expr::Var(t, _) | Expr::Bin(.., t, _) | Expr::Call(_, _, t, _) => t,
            Expr::Line => "@LINE",
        }
    }

    /// Variables this expression reads.
    pub fn vars(&self, out: &mut Vec<String>) {
        match self {
            Expr::Var(n, _) => out.push(n.clone()),
            Expr::Bin(_, a, b, ..) => {
                a.vars(out);
                b.vars(out);
            }
            Expr::Call(_, args, ..) => args.iter().for_each(|a| a.vars(out)),
            _ => {}
        }
    }

    /// Every variable read that has no value, in source order, with its offset in the block
    /// text: LLVM reports them all, not only the first.
    pub fn undefined<'e>(
        &'e self,
        vars: &BTreeMap<String, (Num, Format)>,
        out: &mut Vec<(usize, &'e str)>,
    ) {
        match self {
            Expr::Var(n, at) if !vars.contains_key(n) => out.push((*at, n)),
            Expr::Bin(_, a, b, ..) => {
                a.undefined(vars, out);
                b.undefined(vars, out);
            }
            Expr::Call(_, args, ..) => args.iter().for_each(|a| a.undefined(vars, out)),
            _ => {}
        }
    }
}

/// A parsed `[[#...]]` body.
#[derive(Clone, Debug)]
pub struct Block {
    /// The expression's format: explicit, else implicit, else unsigned (with any precision).
    pub format: Format,
    /// The variable defined and the offset of its name.
    pub def: Option<(String, usize)>,
    /// `None` for `[[#]]` and `[[#VAR:]]`.
    pub expr: Option<Expr>,
}

/// What the parser needs to know about variables seen so far.
pub trait Scope {
    /// The format of a numeric variable defined or used before (unsigned when unknown).
    fn num_format(&self, name: &str) -> Option<Format>;
    /// True when `name` was defined earlier in the same directive.
    fn defined_here(&self, name: &str) -> bool;
    /// True when a string variable `name` exists.
    fn is_string(&self, name: &str) -> bool;
}

/// A parse error: the offset in the body and LLVM's message.
pub type Error = (usize, String);

/// Parses the body of a `[[#...]]` block (after the `#`), or of a legacy `[[@LINE+N]]` block
/// (`legacy`), as LLVM's parseNumericSubstitutionBlock; error offsets are into `body`.
pub fn parse_block(body: &str, legacy: bool, scope: &dyn Scope) -> Result<Block, Error> {
    let b = body.as_bytes();
    let mut explicit = None;
    let mut precision = 0;
    let mut start = 0;
    // A comma before any '(' ends a format specifier ("," also separates call arguments).
    let comma = body.find(',');
    if let Some(c) = comma.filter(|&c| body.find('(').is_none_or(|p| c < p)) {
        let mut i = skip_ws(b, 0);
        let end = trim_end(b, i, c);
        let bad_spec = |at| {
            Err((
                at,
                "invalid matching format specification in expression".into(),
            ))
        };
        if b.get(i) != Some(&b'%') || i >= end {
            return bad_spec(i);
        }
        let pct = i;
        i += 1;
        let alt_at = i;
        let alt = b.get(i) == Some(&b'#') && i < end;
        if alt {
            i += 1;
        }
        if i < end && b[i] == b'.' {
            i += 1;
            let digits = b[i..end].iter().take_while(|c| c.is_ascii_digit()).count();
            if digits == 0 {
                return Err((i, "invalid precision in format specifier".into()));
            }
            let text = &body[i..i + digits];
            precision = text.parse().unwrap_or(usize::MAX);
            if precision > MAX_PRECISION {
                return Err((
                    pct,
                    format!("format precision {text} is more than {MAX_PRECISION}"),
                ));
            }
            i += digits;
        }
        if i < end {
            let kind = b[i] as char;
            if !matches!(kind, 'u' | 'd' | 'x' | 'X') {
                return Err((i, "invalid format specifier in expression".into()));
            }
            explicit = Some(Format {
                kind,
                precision,
                alt,
            });
            i += 1;
        }
        if alt && !explicit.is_some_and(|f| matches!(f.kind, 'x' | 'X')) {
            return Err((
                alt_at,
                "alternate form only supported for hex values".into(),
            ));
        }
        let i = skip_ws(b, i);
        if i < end {
            return bad_spec(i);
        }
        start = c + 1;
    }
    // The definition, up to the first ':'.
    let colon = body[start..].find(':').map(|c| start + c);
    let (def_range, mut i) = match colon {
        Some(c) => (Some((start, c)), c + 1),
        None => (None, start),
    };
    i = skip_ws(b, i);
    let constraint = b[i..].starts_with(b"==");
    if constraint {
        i += 2;
    }
    i = skip_ws(b, i);
    let mut p = Parser {
        s: &b[..trim_end(b, i, b.len())],
        i,
        depth: 0,
        nodes: 0,
        scope,
    };
    let expr = if i == b.len() {
        if constraint {
            return Err((
                i,
                "empty numeric expression should not have a constraint".into(),
            ));
        }
        None
    } else {
        let outer = p.i;
        let first = if legacy {
            Allowed::LineVar
        } else {
            Allowed::Any
        };
        let mut e = p.operand(first, !constraint)?;
        while p.i < p.s.len() {
            e = p.binop(outer, e, legacy)?;
            if legacy && p.i < p.s.len() {
                let rest = String::from_utf8_lossy(&p.s[p.i..]);
                return Err((
                    p.i,
                    format!("unexpected characters at end of expression '{rest}'"),
                ));
            }
        }
        Some(e)
    };
    let format = match (explicit, &expr) {
        (Some(f), _) => Some(f),
        (None, Some(e)) => {
            e.implicit_format(&|n| scope.num_format(n).unwrap_or(Format::UNSIGNED))?
        }
        (None, None) => None,
    }
    .unwrap_or(Format {
        precision,
        ..Format::UNSIGNED
    });
    let def = match def_range {
        None => None,
        Some((ds, de)) => {
            let ds = skip_ws(b, ds);
            let (name, after) = parse_variable(body, ds, de)?;
            if name.starts_with('@') {
                return Err((
                    ds,
                    "definition of pseudo numeric variable unsupported".into(),
                ));
            }
            if scope.is_string(&name) {
                return Err((
                    ds,
                    format!("string variable with name '{name}' already exists"),
                ));
            }
            let rest = skip_ws(b, after);
            if rest < de {
                return Err((
                    rest,
                    "unexpected characters after numeric variable name".into(),
                ));
            }
            if scope.num_format(&name).is_some_and(|f| f != format) {
                return Err((
                    de,
                    "format different from previous variable definition".into(),
                ));
            }
            Some((name, ds))
        }
    };
    Ok(Block { format, def, expr })
}

/// LLVM's parseVariable on `s[at..end]`: the name (with its `$` or `@`) and where it ends.
fn parse_variable(s: &str, at: usize, end: usize) -> Result<(String, usize), Error> {
    let b = &s.as_bytes()[..end];
    if at >= b.len() {
        return Err((at, "empty variable name".into()));
    }
    let pseudo = b[at] == b'@';
    let mut i = at + usize::from(pseudo || b[at] == b'$');
    if i == b.len() {
        let what = if pseudo { "pseudo" } else { "global" };
        return Err((i, format!("empty {what} variable name")));
    }
    if !(b[i].is_ascii_alphabetic() || b[i] == b'_') {
        return Err((at, "invalid variable name".into()));
    }
    while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
        i += 1;
    }
    Ok((s[at..i].to_string(), i))
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

fn trim_end(b: &[u8], start: usize, mut end: usize) -> usize {
    while end > start && matches!(b[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    end
}

/// How deep calls and parentheses may nest in a numeric expression, and how many operands it
/// may have: parsing and evaluation recurse, and a stack overflow would abort the checker.
pub const MAX_DEPTH: usize = 100;
pub const MAX_NODES: usize = 1000;

/// The largest precision of a numeric format (`%.N`): the width is padded
/// into every printed value and into the matching regex.
pub const MAX_PRECISION: usize = 1024;

/// Which operands LLVM accepts at a position (its AllowedOperand).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Allowed {
    /// The first operand of a legacy `[[@LINE+N]]`.
    LineVar,
    /// The second operand of a legacy `[[@LINE+N]]`: a decimal literal.
    LegacyLiteral,
    Any,
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
    nodes: usize,
    scope: &'a dyn Scope,
}

impl Parser<'_> {
    fn ws(&mut self) {
        self.i = skip_ws(self.s, self.i);
    }

    fn text(&self, from: usize, to: usize) -> String {
        String::from_utf8_lossy(&self.s[from..to]).into_owned()
    }

    fn operand(&mut self, allowed: Allowed, maybe_constraint: bool) -> Result<Expr, Error> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err((
                self.i,
                format!("numeric expression has more than {MAX_NODES} operands"),
            ));
        }
        if self.s.get(self.i) == Some(&b'(') {
            if allowed != Allowed::Any {
                return Err((self.i, "parenthesized expression not permitted here".into()));
            }
            return self.paren();
        }
        if allowed != Allowed::LegacyLiteral {
            let s = std::str::from_utf8(self.s).unwrap_or("");
            match parse_variable(s, self.i, self.s.len()) {
                Ok((name, end)) => {
                    let at = self.i;
                    self.i = end;
                    if skip_ws(self.s, end) < self.s.len() && self.s[skip_ws(self.s, end)] == b'(' {
                        if allowed != Allowed::Any {
                            return Err((at, "unexpected function call".into()));
                        }
                        return self.call(name, at);
                    }
                    if name.starts_with('@') {
                        if name != "@LINE" {
                            return Err((at, format!("invalid pseudo numeric variable '{name}'")));
                        }
                        return Ok(Expr::Line);
                    }
                    if self.scope.defined_here(&name) {
                        return Err((
                            at,
                            format!("numeric variable '{name}' defined earlier in the same CHECK directive"),
                        ));
                    }
                    return Ok(Expr::Var(name, at));
                }
                Err(e) if allowed == Allowed::LineVar => return Err(e),
                Err(_) => {}
            }
        }
        let start = self.i;
        let neg = self.s.get(self.i) == Some(&b'-');
        let mut j = start + usize::from(neg);
        let radix = if allowed == Allowed::LegacyLiteral {
            10
        } else {
            auto_radix(self.s, &mut j)
        };
        let digits_at = j;
        while self.s.get(j).is_some_and(|&c| (c as char).is_digit(radix)) {
            j += 1;
        }
        if j == digits_at {
            let what = if maybe_constraint {
                "matching constraint or "
            } else {
                ""
            };
            return Err((start, format!("invalid {what}operand format")));
        }
        let v = Num::parse_bytes(&self.s[digits_at..j], radix)
            .ok_or((start, "invalid operand format".to_string()))?;
        self.i = j;
        Ok(Expr::Lit(if neg { -v } else { v }, self.text(start, j)))
    }

    fn binop(&mut self, outer: usize, lhs: Expr, legacy: bool) -> Result<Expr, Error> {
        self.ws();
        let Some(&op) = self.s.get(self.i) else {
            return Ok(lhs);
        };
        if op != b'+' && op != b'-' {
            let c = String::from_utf8_lossy(&self.s[self.i..])
                .chars()
                .next()
                .unwrap_or(' ');
            return Err((self.i, format!("unsupported operation '{c}'")));
        }
        self.i += 1;
        self.ws();
        if self.i == self.s.len() {
            return Err((self.i, "missing operand in expression".into()));
        }
        let allowed = if legacy {
            Allowed::LegacyLiteral
        } else {
            Allowed::Any
        };
        let rhs = self.operand(allowed, false)?;
        let text = self.text(outer, self.i);
        Ok(Expr::Bin(
            op as char,
            Box::new(lhs),
            Box::new(rhs),
            text,
            outer,
        ))
    }

    fn nest(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            // Our own limit: reported at the block, not deep inside it.
            return Err((
                0,
                format!("function calls nested more than {MAX_DEPTH} deep in numeric expression"),
            ));
        }
        Ok(())
    }

    fn paren(&mut self) -> Result<Expr, Error> {
        self.nest()?;
        self.i += 1;
        self.ws();
        if self.i == self.s.len() {
            return Err((self.i, "missing operand in expression".into()));
        }
        let mut e = self.operand(Allowed::Any, false)?;
        self.ws();
        while self.i < self.s.len() && self.s[self.i] != b')' {
            let orig = self.i;
            e = self.binop(orig, e, false)?;
            self.ws();
        }
        if self.s.get(self.i) != Some(&b')') {
            return Err((self.i, "missing ')' at end of nested expression".into()));
        }
        self.i += 1;
        self.depth -= 1;
        Ok(e)
    }

    fn call(&mut self, name: String, at: usize) -> Result<Expr, Error> {
        if !matches!(name.as_str(), "add" | "sub" | "mul" | "div" | "max" | "min") {
            return Err((at, format!("call to undefined function '{name}'")));
        }
        self.nest()?;
        self.ws();
        self.i += 1;
        self.ws();
        let mut args = Vec::new();
        while self.i < self.s.len() && self.s[self.i] != b')' {
            if self.s[self.i] == b',' {
                return Err((self.i, "missing argument".into()));
            }
            let outer = self.i;
            let mut arg = self.operand(Allowed::Any, false)?;
            while self.i < self.s.len() {
                self.ws();
                if matches!(self.s.get(self.i), Some(b',' | b')')) {
                    break;
                }
                arg = self.binop(outer, arg, false)?;
            }
            args.push(arg);
            self.ws();
            if self.s.get(self.i) != Some(&b',') {
                break;
            }
            self.i += 1;
            self.ws();
            if self.s.get(self.i) == Some(&b')') {
                return Err((self.i, "missing argument".into()));
            }
        }
        if self.s.get(self.i) != Some(&b')') {
            return Err((self.i, "missing ')' at end of call expression".into()));
        }
        self.i += 1;
        self.depth -= 1;
        if args.len() != 2 {
            return Err((
                at,
                format!(
                    "function '{name}' takes 2 arguments but {} given",
                    args.len()
                ),
            ));
        }
        let text = self.text(self.i, self.s.len());
        Ok(Expr::Call(name, args, text, self.i))
    }
}

/// LLVM's getAutoSenseRadix: `0x` hex, `0b` binary, `0o` or a leading `0` octal.
fn auto_radix(s: &[u8], j: &mut usize) -> u32 {
    let rest = &s[*j..];
    let lower = |k: usize| rest.get(k).map(|c| c.to_ascii_lowercase());
    if rest.first() == Some(&b'0') {
        match lower(1) {
            Some(b'x') => {
                *j += 2;
                return 16;
            }
            Some(b'b') => {
                *j += 2;
                return 2;
            }
            Some(b'o') if rest[1] == b'o' => {
                *j += 2;
                return 8;
            }
            Some(c) if c.is_ascii_digit() => {
                *j += 1;
                return 8;
            }
            _ => {}
        }
    }
    10
}
