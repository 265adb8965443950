//! Check patterns: parsing `{{regex}}`, `[[VAR:re]]`, `[[VAR]]`, `[[#...]]`
//! and matching them against a slice of the input.
//!
//! A pattern is kept as pieces and turned into one Rust regex at match time,
//! once the values of the variables it uses are known. A use of a string
//! variable defined earlier in the same pattern (a backreference in LLVM) is
//! emulated by matching the definition's regex again and rejecting matches
//! whose two captures differ.

use crate::numeric::{self, Expr, Format};
use crate::regex_dialect::{escape, translate_regex};
use regex::Regex;
use std::cell::OnceCell;
use std::collections::BTreeMap;

/// Directive kinds, as LLVM's `Check::FileCheckType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckKind {
    Plain,
    Next,
    Same,
    Not,
    Dag,
    Label,
    Empty,
    /// `CHECK-COUNT-n`.
    Count(usize),
    /// The implicit end-of-input check owning trailing NOT/DAG directives.
    Eof,
}

impl CheckKind {
    /// The `-SUFFIX` used in messages (`CHECK-NEXT`).
    pub fn suffix(self) -> &'static str {
        match self {
            CheckKind::Plain => "",
            CheckKind::Next => "-NEXT",
            CheckKind::Same => "-SAME",
            CheckKind::Not => "-NOT",
            CheckKind::Dag => "-DAG",
            CheckKind::Label => "-LABEL",
            CheckKind::Empty => "-EMPTY",
            // LLVM describes a count of one as a plain directive.
            CheckKind::Count(n) if n > 1 => "-COUNT",
            CheckKind::Count(_) => "",
            CheckKind::Eof => "-EOF",
        }
    }

    /// The label used in the input dump (`check`, `next`, ...).
    pub fn abbrev(self) -> &'static str {
        match self {
            CheckKind::Plain => "check",
            CheckKind::Next => "next",
            CheckKind::Same => "same",
            CheckKind::Not => "not",
            CheckKind::Dag => "dag",
            CheckKind::Label => "label",
            CheckKind::Empty => "empty",
            CheckKind::Count(n) if n > 1 => "count",
            CheckKind::Count(_) => "check",
            CheckKind::Eof => "eof",
        }
    }
}

/// One piece of a pattern.
#[derive(Clone, Debug)]
pub enum Piece {
    Lit(String),
    /// `{{...}}` (or the wildcard of `[[#]]`): the translated regex, the text LLVM keeps in
    /// its regex string (shown by the fuzzy matcher), and whether LLVM wraps it in a group
    /// (it does when the rest of the pattern has a `|`).
    Regex {
        re: String,
        src: String,
        wrapped: bool,
    },
    StrDef {
        name: String,
        regex: String,
        /// The regex as written.
        src: String,
    },
    StrUse {
        name: String,
        at: usize,
    },
    NumDef {
        name: String,
        format: Option<Format>,
        expr: Option<Expr>,
        /// The block text after `#`, as LLVM names the substitution in notes.
        text: String,
        at: usize,
    },
    NumUse {
        text: String,
        expr: Expr,
        format: Option<Format>,
        at: usize,
    },
}

/// A parsed pattern.
#[derive(Debug)]
pub struct Pattern {
    pub pieces: Vec<Piece>,
    pub kind: CheckKind,
    /// Line of the directive in the check file (the value of `@LINE`).
    pub line: usize,
    pub full_lines: bool,
    pub ignore_case: bool,
    pub strict_ws: bool,
    cache: OnceCell<Option<Regex>>,
}

/// Variable values.
#[derive(Clone, Default, Debug)]
pub struct Env {
    pub strings: BTreeMap<String, String>,
    pub nums: BTreeMap<String, (crate::numeric::Num, Format)>,
}

impl Env {
    /// Drops variables not starting with `$` (`--enable-var-scope`).
    pub fn clear_locals(&mut self) {
        self.strings.retain(|k, _| k.starts_with('$'));
        self.nums.retain(|k, _| k.starts_with('$'));
    }
}

/// A successful match, relative to the searched slice.
#[derive(Debug)]
pub struct Found {
    pub start: usize,
    pub end: usize,
    pub str_defs: Vec<(String, String)>,
    pub num_defs: Vec<(String, crate::numeric::Num, Format)>,
    /// Each variable defined by the match and the range it captured, in input order.
    pub captures: Vec<(String, usize, usize)>,
}

/// Why a match could not even be attempted.
#[derive(Debug)]
pub struct SubstError {
    /// Offset in the pattern text of the offending block.
    pub at: usize,
    pub msg: String,
}

/// A parse error at an offset of the pattern text.
pub type ParseError = (usize, String);

/// Variables seen while parsing the check file (LLVM's parse-time tables): numeric variables
/// defined or used, with their formats, and string variables defined, -D ones included.
#[derive(Clone, Default, Debug)]
pub struct Names {
    pub nums: BTreeMap<String, Format>,
    pub strs: std::collections::BTreeSet<String>,
}

impl Names {
    /// The names of the variables defined in `env` (from -D).
    pub fn from_env(env: &Env) -> Names {
        Names {
            nums: env.nums.iter().map(|(k, v)| (k.clone(), v.1)).collect(),
            strs: env.strings.keys().cloned().collect(),
        }
    }
}

struct BlockScope<'a> {
    names: &'a Names,
    here: &'a [String],
}

impl numeric::Scope for BlockScope<'_> {
    fn num_format(&self, name: &str) -> Option<Format> {
        self.names.nums.get(name).copied()
    }
    fn defined_here(&self, name: &str) -> bool {
        self.here.iter().any(|n| n == name)
    }
    fn is_string(&self, name: &str) -> bool {
        self.names.strs.contains(name)
    }
}

impl Pattern {
    /// Parses `text` (already whitespace-canonicalised) for a directive of `kind`.
    // The parse-time variable tables travel with the options; a struct would only rename them.
    #[allow(clippy::too_many_arguments)]
    pub fn parse(
        text: &str,
        kind: CheckKind,
        literal: bool,
        line: usize,
        full_lines: bool,
        ignore_case: bool,
        strict_ws: bool,
        names: &mut Names,
    ) -> Result<Pattern, ParseError> {
        let mut pieces = Vec::new();
        if kind != CheckKind::Empty && kind != CheckKind::Eof {
            parse_pieces(text, literal, &mut pieces, names)?;
        }
        // LLVM matches a {LITERAL} pattern as a fixed string, whole lines or not.
        let full_lines = full_lines && kind != CheckKind::Not && !literal;
        let p = Pattern {
            pieces,
            kind,
            line,
            full_lines,
            ignore_case,
            strict_ws,
            cache: OnceCell::new(),
        };
        // A pattern without variables compiles now, so a regex past the
        // engine's size limit is this directive's error (exit 2).
        if !p.has_variables() && kind != CheckKind::Eof {
            if let Ok((re_text, _, _)) = p.build(&Env::default()) {
                match Regex::new(&re_text) {
                    Ok(re) => {
                        let _ = p.cache.set(Some(re));
                    }
                    Err(e) => {
                        return Err((0, format!("invalid regex: {}", first_line(&e.to_string()))))
                    }
                }
            }
        }
        Ok(p)
    }

    /// True when the pattern defines or uses variables.
    pub fn has_variables(&self) -> bool {
        self.pieces
            .iter()
            .any(|p| !matches!(p, Piece::Lit(_) | Piece::Regex { .. }))
    }

    /// The text the fuzzy matcher compares against (LLVM: FixedStr, else
    /// RegExStr without the substituted values).
    pub fn example(&self) -> String {
        if self.pieces.iter().all(|p| matches!(p, Piece::Lit(_))) && !self.full_lines {
            return self
                .pieces
                .iter()
                .map(|p| {
                    if let Piece::Lit(s) = p {
                        s.as_str()
                    } else {
                        ""
                    }
                })
                .collect();
        }
        let mut re = String::new();
        if self.full_lines {
            re.push_str(if self.strict_ws { "^" } else { "^ *" });
        }
        // LLVM's regex string: substitutions are left out, a same-line use is `\N`.
        let mut group = 1;
        let mut defs: BTreeMap<&str, usize> = BTreeMap::new();
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => re.push_str(&regex_escape(s)),
                Piece::Regex {
                    re: r,
                    src,
                    wrapped,
                } => {
                    if *wrapped {
                        re.push('(');
                        group += 1;
                    }
                    re.push_str(src);
                    group += count_groups(r);
                    if *wrapped {
                        re.push(')');
                    }
                }
                Piece::StrDef { name, regex, src } => {
                    defs.insert(name, group);
                    group += 1 + count_groups(regex);
                    re.push('(');
                    re.push_str(src);
                    re.push(')');
                }
                Piece::NumDef { format, expr, .. } => {
                    group += num_def_groups(*format, expr);
                    re.push('(');
                    // With an expression, its value is substituted at match time.
                    if expr.is_none() {
                        re.push_str(&format.unwrap_or(Format::UNSIGNED).llvm_regex());
                    }
                    re.push(')');
                }
                Piece::StrUse { name, .. } => {
                    if let Some(g) = defs.get(name.as_str()) {
                        re.push_str(&format!("\\{g}"));
                    }
                }
                Piece::NumUse { .. } => {}
            }
        }
        if self.full_lines {
            re.push_str(if self.strict_ws { "$" } else { " *$" });
        }
        re
    }

    /// LLVM's `printSubstitutions`: a note `with "FROM" equal to "value"` for each substitution
    /// whose value is known, in order. A string value is shown as LLVM 19 does, regex-escaped
    /// and then escaped for printing (`a.b` is `"a\\.b"`).
    pub fn substitution_notes(&self, env: &Env) -> Vec<String> {
        let mut out = Vec::new();
        let mut local = Vec::new();
        let note = |from: &str, value: &str| {
            format!(
                "with \"{}\" equal to \"{}\"",
                write_escaped(from),
                write_escaped(value)
            )
        };
        for p in &self.pieces {
            match p {
                Piece::StrDef { name, .. } => local.push(name.clone()),
                Piece::StrUse { name, .. } if !local.contains(name) => {
                    if let Some(v) = env.strings.get(name) {
                        out.push(note(name, &regex_escape(v)));
                    }
                }
                Piece::NumUse {
                    text, expr, format, ..
                }
                | Piece::NumDef {
                    text,
                    expr: Some(expr),
                    format,
                    ..
                } => {
                    let f = format.unwrap_or(Format::UNSIGNED);
                    if let Some(shown) = expr
                        .eval(&env.nums, self.line)
                        .ok()
                        .and_then(|v| f.render(&v).ok())
                    {
                        out.push(note(text, &shown));
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Searches `hay` for the first match.
    /// Searches `hay` for the first match. Every substitution that fails (each undefined
    /// variable, each overflow) is one error, as LLVM reports them all.
    pub fn find(&self, hay: &str, env: &Env) -> Result<Option<Found>, Vec<SubstError>> {
        if self.kind == CheckKind::Eof {
            return Ok(Some(Found {
                start: hay.len(),
                end: hay.len(),
                str_defs: vec![],
                num_defs: vec![],
                captures: vec![],
            }));
        }
        let (re_text, groups, backrefs) = self.build(env)?;
        let compiled;
        let one = |msg: String| vec![SubstError { at: 0, msg }];
        let re = if self.has_variables() {
            compiled = Regex::new(&re_text).map_err(|e| one(format!("invalid regex: {e}")))?;
            &compiled
        } else {
            let cached = self.cache.get_or_init(|| Regex::new(&re_text).ok());
            match cached {
                Some(r) => r,
                None => return Err(one("invalid regex".into())),
            }
        };
        let mut pos = 0;
        while pos <= hay.len() {
            let Some(caps) = re.captures_at(hay, pos) else {
                return Ok(None);
            };
            let m = caps.get(0).expect("group 0 always participates in a match");
            let ok = backrefs
                .iter()
                .all(|(a, b)| caps.get(*a).map(|x| x.as_str()) == caps.get(*b).map(|x| x.as_str()));
            if !ok {
                // Retry from the next character, like a backtracking engine would.
                pos = next_char(hay, m.start());
                continue;
            }
            let mut found = Found {
                start: m.start(),
                end: m.end(),
                str_defs: vec![],
                num_defs: vec![],
                captures: vec![],
            };
            if self.kind == CheckKind::Empty {
                // The required newline is consumed but not part of the match.
                found.start += 1;
            }
            for g in &groups {
                let (text, cs, ce) = caps.get(g.group).map_or(("", m.start(), m.start()), |x| {
                    (x.as_str(), x.start(), x.end())
                });
                match &g.num {
                    None => found.str_defs.push((g.name.clone(), text.to_string())),
                    Some(f) => {
                        let v = f.parse(text).ok_or_else(|| {
                            one(format!("unable to represent numeric value '{text}'"))
                        })?;
                        found.num_defs.push((g.name.clone(), v, *f));
                    }
                }
                found.captures.push((g.name.clone(), cs, ce));
            }
            found.captures.sort_by_key(|c| c.1);
            return Ok(Some(found));
        }
        Ok(None)
    }

    /// Builds the regex text, the capture groups to record and the
    /// (use, def) group pairs that must capture equal text.
    #[allow(clippy::type_complexity)]
    fn build(
        &self,
        env: &Env,
    ) -> Result<(String, Vec<Group>, Vec<(usize, usize)>), Vec<SubstError>> {
        let mut errors = Vec::new();
        let mut re = String::from("(?m)");
        if self.ignore_case {
            re.push_str("(?i)");
        }
        if self.kind == CheckKind::Empty {
            re.push_str("(\n$)");
            return Ok((re, vec![], vec![]));
        }
        if self.full_lines {
            re.push('^');
            if !self.strict_ws {
                re.push_str(" *");
            }
        }
        let mut groups = Vec::new();
        let mut backrefs = Vec::new();
        let mut local: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
        let mut next_group = 1;
        for p in &self.pieces {
            match p {
                Piece::Lit(s) => re.push_str(&escape(s)),
                Piece::Regex { re: r, .. } => {
                    re.push_str("(?:");
                    re.push_str(r);
                    re.push(')');
                    next_group += count_groups(r);
                }
                Piece::StrDef { name, regex, .. } => {
                    let g = next_group;
                    re.push('(');
                    re.push_str(regex);
                    re.push(')');
                    next_group += 1 + count_groups(regex);
                    local.insert(name, (g, regex));
                    groups.push(Group {
                        group: g,
                        name: name.clone(),
                        num: None,
                    });
                }
                Piece::StrUse { name, at } => {
                    if let Some((g, regex)) = local.get(name.as_str()) {
                        backrefs.push((next_group, *g));
                        re.push('(');
                        re.push_str(regex);
                        re.push(')');
                        next_group += 1 + count_groups(regex);
                    } else if let Some(v) = env.strings.get(name) {
                        re.push_str(&escape(v));
                    } else {
                        errors.push(SubstError {
                            at: *at,
                            msg: format!("undefined variable: {name}"),
                        });
                    }
                }
                Piece::NumDef {
                    name,
                    format,
                    expr,
                    at,
                    ..
                } => {
                    let f = format.unwrap_or(Format::UNSIGNED);
                    re.push('(');
                    match expr {
                        Some(e) => {
                            if let Some(s) = self.substitute(e, f, *at, env, &mut errors) {
                                re.push_str(&escape(&s));
                            }
                        }
                        None => re.push_str(&f.regex()),
                    }
                    re.push(')');
                    groups.push(Group {
                        group: next_group,
                        name: name.clone(),
                        num: Some(f),
                    });
                    next_group += 1;
                }
                Piece::NumUse {
                    expr, format, at, ..
                } => {
                    let f = format.unwrap_or(Format::UNSIGNED);
                    if let Some(s) = self.substitute(expr, f, *at, env, &mut errors) {
                        re.push_str(&escape(&s));
                    }
                }
            }
        }
        if self.full_lines {
            if !self.strict_ws {
                re.push_str(" *");
            }
            re.push('$');
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok((re, groups, backrefs))
    }

    /// The text a numeric expression stands for, or its errors: each undefined variable at
    /// its name, anything else (a negative value in an unsigned format, a division by zero)
    /// as LLVM's overflow error at the expression.
    fn substitute(
        &self,
        expr: &Expr,
        f: Format,
        at: usize,
        env: &Env,
        errors: &mut Vec<SubstError>,
    ) -> Option<String> {
        let mut undefined = Vec::new();
        expr.undefined(&env.nums, &mut undefined);
        if !undefined.is_empty() {
            errors.extend(undefined.into_iter().map(|(off, name)| SubstError {
                at: at + off,
                msg: format!("undefined variable: {name}"),
            }));
            return None;
        }
        let value = expr
            .eval(&env.nums, self.line)
            .ok()
            .and_then(|v| f.render(&v).ok());
        if value.is_none() {
            errors.push(SubstError {
                at,
                msg: "unable to substitute variable or numeric expression: overflow error".into(),
            });
        }
        value
    }
}

struct Group {
    group: usize,
    name: String,
    num: Option<Format>,
}

fn next_char(s: &str, i: usize) -> usize {
    s[i..].chars().next().map_or(i + 1, |c| i + c.len_utf8())
}

/// Counts capturing groups in translated regex text.
fn count_groups(r: &str) -> usize {
    regex::Regex::new(r).map_or(0, |re| re.captures_len() - 1)
}

/// LLVM's `Regex::escape`: a backslash before each regex metacharacter, and before NUL
/// (it looks characters up with `strchr`, which finds the terminator).
fn regex_escape(v: &str) -> String {
    let mut out = String::new();
    for c in v.chars() {
        if "()^$|*+?.[]\\{}\0".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// LLVM's `raw_ostream::write_escaped`: `\\`, `\t`, `\n`, `\"`, and three octal digits for
/// every other byte that is not printable ASCII.
pub fn write_escaped(v: &str) -> String {
    let mut out = String::new();
    for &b in v.as_bytes() {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'"' => out.push_str("\\\""),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{:03o}", b)),
        }
    }
    out
}

/// Splits pattern text into pieces.
fn parse_pieces(
    text: &str,
    literal: bool,
    pieces: &mut Vec<Piece>,
    names: &mut Names,
) -> Result<(), ParseError> {
    if literal {
        pieces.push(Piece::Lit(text.to_string()));
        return Ok(());
    }
    let mut lit = String::new();
    let mut i = 0;
    let mut num_defined: Vec<String> = Vec::new();
    while i < text.len() {
        let rest = &text[i..];
        if let Some(body_and_more) = rest.strip_prefix("{{") {
            let Some(end) = body_and_more.find("}}") else {
                return Err((i, "found start of regex string with no end '}}'".into()));
            };
            let body = &body_and_more[..end];
            let tr = translate_regex(body).map_err(|m| (i + 2, format!("invalid regex: {m}")))?;
            if let Err(e) = Regex::new(&tr) {
                return Err((
                    i + 2,
                    format!("invalid regex: {}", first_line(&e.to_string())),
                ));
            }
            flush(&mut lit, pieces);
            pieces.push(Piece::Regex {
                re: tr,
                src: body.to_string(),
                wrapped: rest.contains('|'),
            });
            i += 2 + end + 2;
            continue;
        }
        // LLVM takes the first `[` of `[[[` literally: `[[[REG]]]` is `[` then `[[REG]]`.
        if let Some(after) = rest.strip_prefix("[[").filter(|a| !a.starts_with('[')) {
            let Some(end) = var_end(after) else {
                return Err((i, "Invalid substitution block, no ]] found".into()));
            };
            let body = &after[..end.0];
            if let Some(e) = end.1 {
                return Err((i + 2 + e, "missing closing \"]\" for regex variable".into()));
            }
            let at = i + 2;
            flush(&mut lit, pieces);
            pieces.push(
                parse_block(body, at, &mut num_defined, names).map_err(|(o, m)| {
                    // LLVM prints these few itself; the others are logged errors, which end
                    // with a blank line.
                    let printed = m == "unexpected whitespace"
                        || m.starts_with("invalid regex: ")
                        || m.starts_with("invalid name in string variable")
                        || (m.starts_with("numeric variable with name ")
                            && m.ends_with(" already exists"));
                    (o, if printed { m } else { m + "\n" })
                })?,
            );
            i += 2 + end.0 + 2;
            continue;
        }
        let c = rest
            .chars()
            .next()
            .expect("rest is non-empty inside the loop");
        lit.push(c);
        i += c.len_utf8();
    }
    flush(&mut lit, pieces);
    backref_limit(pieces)
}

/// The capture groups LLVM counts for a numeric definition: its own, and the one inside a
/// wildcard with a precision.
fn num_def_groups(format: Option<Format>, expr: &Option<Expr>) -> usize {
    let precise = expr.is_none() && format.is_some_and(|f| f.precision > 0);
    1 + usize::from(precise)
}

/// LLVM's regex engine has back-references `\1` to `\9` only: a use of a variable defined
/// earlier in the same pattern is an error when the definition's group (counted as LLVM
/// counts them: each definition one, plus the groups inside regexes) is past 9.
fn backref_limit(pieces: &[Piece]) -> Result<(), ParseError> {
    let mut group = 1;
    let mut defs: BTreeMap<&str, usize> = BTreeMap::new();
    for p in pieces {
        match p {
            Piece::Regex { re, wrapped, .. } => group += usize::from(*wrapped) + count_groups(re),
            Piece::StrDef { name, regex, .. } => {
                defs.insert(name, group);
                group += 1 + count_groups(regex);
            }
            Piece::NumDef { format, expr, .. } => group += num_def_groups(*format, expr),
            Piece::StrUse { name, at } if defs.get(name.as_str()).is_some_and(|&g| g > 9) => {
                return Err((*at, "Can't back-reference more than 9 variables".into()));
            }
            _ => {}
        }
    }
    Ok(())
}

fn first_line(s: &str) -> String {
    s.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(s)
        .trim()
        .trim_start_matches("error: ")
        .to_string()
}

fn flush(lit: &mut String, pieces: &mut Vec<Piece>) {
    if !lit.is_empty() {
        pieces.push(Piece::Lit(std::mem::take(lit)));
    }
}

/// Finds the `]]` closing a substitution block, skipping nested brackets
/// and backslash escapes (LLVM's `FindRegexVarEnd`). The second value reports
/// an unbalanced `]`.
fn var_end(s: &str) -> Option<(usize, Option<usize>)> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut depth = 0usize;
    while i < b.len() {
        if depth == 0 && b[i..].starts_with(b"]]") {
            return Some((i, None));
        }
        match b[i] {
            b'\\' => i += 1,
            b'[' => depth += 1,
            b']' => {
                if depth == 0 {
                    return Some((i, Some(i)));
                }
                depth -= 1;
            }
            _ => {}
        }
        i += 1;
    }
    None
}

fn parse_block(
    body: &str,
    at: usize,
    nums: &mut Vec<String>,
    names: &mut Names,
) -> Result<Piece, ParseError> {
    // LLVM's parsePattern for `[[NAME]]`, `[[NAME:regex]]` and `[[@LINE+N]]`, with its
    // messages and columns: no blank before the first ':'.
    if !body.starts_with('#') {
        let colon = body.find(':');
        if let Some(sp) = body[..colon.unwrap_or(body.len())].find([' ', '\t']) {
            return Err((at + sp, "unexpected whitespace".into()));
        }
    }
    // `[[#...]]`, or a legacy `[[@LINE+N]]`.
    let numeric_body = body
        .strip_prefix('#')
        .or_else(|| (body.starts_with('@') && !body.contains(':')).then_some(body));
    if let Some(nb) = numeric_body {
        let legacy = !body.starts_with('#');
        let off = if legacy { at } else { at + 1 };
        let scope = BlockScope { names, here: nums };
        let block = numeric::parse_block(nb, legacy, &scope).map_err(|(o, m)| (off + o, m))?;
        let mut used = Vec::new();
        if let Some(e) = &block.expr {
            e.vars(&mut used);
        }
        // A use makes the name numeric for the rest of the file, as in LLVM.
        for v in used {
            names.nums.entry(v).or_insert(Format::UNSIGNED);
        }
        // LLVM reuses a variable known before this definition (from an earlier line, or from
        // this block's own expression, which is parsed first), whose value is the old one
        // until this match: only a new one cannot be used later in the same directive.
        let new_def = block
            .def
            .as_ref()
            .is_some_and(|(name, _)| !names.nums.contains_key(name));
        return Ok(match (block.def, block.expr) {
            (Some((name, _)), expr) => {
                if new_def {
                    nums.push(name.clone());
                }
                names.nums.entry(name.clone()).or_insert(block.format);
                // The format's regex is part of the pattern: a failure is
                // this directive's error, not a match-time one.
                if let Err(e) = Regex::new(&block.format.regex()) {
                    return Err((
                        off,
                        format!("invalid regex: {}", first_line(&e.to_string())),
                    ));
                }
                Piece::NumDef {
                    name,
                    format: Some(block.format),
                    expr,
                    text: nb.trim().to_string(),
                    at: off,
                }
            }
            // `[[#]]` and `[[#%x,]]` match any number in the format.
            (None, None) => Piece::Regex {
                re: block.format.regex(),
                src: block.format.llvm_regex(),
                wrapped: false,
            },
            (None, Some(expr)) => Piece::NumUse {
                text: nb.trim().to_string(),
                expr,
                format: Some(block.format),
                at: off,
            },
        });
    }
    let colon = body.find(':');
    let sigil = usize::from(body.starts_with(['$', '@']));
    if body.is_empty() {
        return Err((at, "empty variable name".into()));
    }
    if sigil == body.len() {
        let what = if body.starts_with('@') {
            "pseudo"
        } else {
            "global"
        };
        return Err((at + sigil, format!("empty {what} variable name")));
    }
    let first = body.as_bytes()[sigil];
    if !(first.is_ascii_alphabetic() || first == b'_') {
        return Err((at, "invalid variable name".into()));
    }
    let name_len = body[sigil..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(body.len(), |n| n + sigil);
    let name = &body[..name_len];
    let rest = &body[name_len..];
    if colon.is_some() {
        if name.starts_with('@') || !rest.starts_with(':') {
            return Err((at, "invalid name in string variable definition".into()));
        }
        let r = &rest[1..];
        if names.nums.contains_key(name) {
            return Err((
                at,
                format!("numeric variable with name '{name}' already exists"),
            ));
        }
        // LLVM takes an empty definition (`[[X:]]`) as matching the empty string.
        let tr = if r.is_empty() {
            String::new()
        } else {
            translate_regex(r).map_err(|m| (at + name.len() + 1, format!("invalid regex: {m}")))?
        };
        if let Err(e) = Regex::new(&tr) {
            return Err((
                at + name.len() + 1,
                format!("invalid regex: {}", first_line(&e.to_string())),
            ));
        }
        names.strs.insert(name.to_string());
        return Ok(Piece::StrDef {
            name: name.to_string(),
            regex: tr,
            src: r.to_string(),
        });
    }
    if name.starts_with('@') {
        return Err((at, format!("invalid pseudo numeric variable '{name}'")));
    }
    if !rest.is_empty() {
        return Err((at, "invalid name in string variable use".into()));
    }
    Ok(Piece::StrUse {
        name: name.to_string(),
        at,
    })
}
