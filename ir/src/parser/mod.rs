//! Parsing `.gir` text: bytes → tokens → syntax tree → `Module`, with every
//! syntax and name error reported as a `Diagnostic` with a span.

use crate::ast::*;
use crate::builder::Builder;
use crate::diag::{did_you_mean, Diagnostic};
use crate::function::*;
use crate::fxhash::{FxHashMap as HashMap, FxHashSet as HashSet};
use crate::grammar::FileParser;
use crate::lexer::{LexError, Lexer, Tok};
use crate::opcode::{Opcode, OperandKind};
use crate::span::{ItemSpans, Span};
use crate::types::Type;
use lalrpop_util::ParseError;
use std::borrow::Cow;
use values::*;

mod fast;
mod values;

/// Parses a whole file. On any error, returns every diagnostic found.
pub fn parse(source: &[u8]) -> Result<Module, Vec<Diagnostic>> {
    let text = match std::str::from_utf8(source) {
        Ok(t) => t,
        Err(e) => {
            let at = e.valid_up_to();
            return Err(vec![Diagnostic::error("invalid UTF-8 in input")
                .at_labelled(
                    Span::new(at, at + 1),
                    "this byte is not valid UTF-8",
                )]);
        }
    };
    let mut recovered = Vec::new();
    let issues = std::cell::RefCell::new(Vec::new());
    let fast_issues = std::cell::RefCell::new(Vec::new());
    let result = match fast::parse_file(text, &fast_issues) {
        Some(funcs) => Ok(funcs),
        None => FileParser::new().parse(&mut recovered, Lexer::with_issues(text, &issues)),
    };
    let issues = issues.take();
    let had_syntax_errors = !recovered.is_empty() || !issues.is_empty();
    let mut diags: Vec<Diagnostic> = recovered
        .into_iter()
        .map(|r| syntax_error(r.error, text))
        .collect();
    diags.extend(issues.iter().map(lex_issue));
    let funcs = match result {
        Ok(funcs) => funcs,
        Err(e) => {
            diags.push(syntax_error(e, text));
            diags.sort_by_key(|d| d.primary.as_ref().map_or(0, |l| l.span.start));
            return Err(diags);
        }
    };
    let mut module = Module::default();
    let mut fn_names: HashMap<String, usize> = HashMap::default();
    for f in &funcs {
        let name = unquote_text(&f.name);
        if let Some(&prev) = fn_names.get(&name) {
            diags.push(
                Diagnostic::error(format!("function `{name}` is defined twice"))
                    .at(span(&f.name))
                    .with_secondary(Span::new(prev, prev), "first defined here"),
            );
        }
        fn_names.insert(name, f.name.start);
        let mut lowerer = Lowerer::default();
        if had_syntax_errors {
            lowerer.broken = defined_names(&text[f.start..f.end]);
        }
        module.functions.push(lowerer.lower(f, &mut diags));
    }
    // Report in source order, whichever stage found the problem.
    diags.sort_by_key(|d| d.primary.as_ref().map_or(0, |l| l.span.start));
    if diags.iter().any(Diagnostic::is_error) {
        Err(diags)
    } else {
        Ok(module)
    }
}

/// A line the lexer left out: an unknown character or an unterminated quote.
fn lex_issue(issue: &crate::lexer::LexIssue) -> Diagnostic {
    if issue.bad_escape {
        let what = match issue.text.as_str() {
            "\\u" => {
                "unsupported escape `\\u` in a quoted name or string (write the character itself)"
                    .to_string()
            }
            t => format!(
                "unknown escape `\\{}` in a quoted name or string",
                t.get(1..).unwrap_or("").escape_debug()
            ),
        };
        Diagnostic::error(what).at_labelled(issue.span, "the escapes are \\\", \\\\, \\n and \\t")
    } else if issue.unterminated {
        Diagnostic::error("unterminated quoted name or string")
            .at_labelled(issue.span, "no closing `\"` on this line")
    } else {
        Diagnostic::error(format!(
            "unexpected character `{}`",
            issue.text.escape_debug()
        ))
        .at(issue.span)
    }
}

fn span<T>(t: &Spanned<T>) -> Span {
    Span::new(t.start, t.end)
}

fn syntax_error(e: ParseError<usize, Tok<'_>, LexError>, text: &str) -> Diagnostic {
    match e {
        ParseError::InvalidToken { location } => {
            Diagnostic::error("unexpected character").at(Span::new(location, location + 1))
        }
        ParseError::UnrecognizedEof { location, expected } => {
            Diagnostic::error("unexpected end of file")
                .at(Span::new(location, location))
                .with_note(expected_note(&expected))
        }
        ParseError::UnrecognizedToken {
            token: (l, tok, r),
            expected,
        } => {
            let found = tok.describe();
            let mut d = Diagnostic::error(format!(
                "expected {}, found {}",
                expected_short(&expected),
                found
            ))
            .at_labelled(Span::new(l, r.max(l + 1)), "unexpected here");
            if clean(&expected).len() > 4 {
                d = d.with_note(expected_note(&expected));
            }
            if tok == Tok::Ellipsis {
                d = d.with_note("Glow's dump cuts arrays after 4 elements; write every element");
            }
            d
        }
        ParseError::ExtraToken { token: (l, tok, r) } => {
            Diagnostic::error(format!("unexpected {}", tok.describe())).at(Span::new(l, r))
        }
        ParseError::User { error } => {
            let bad = text.get(error.span.range()).unwrap_or("");
            let ch = bad
                .chars()
                .next()
                .map(|c| format!(" `{}`", c.escape_debug()))
                .unwrap_or_default();
            Diagnostic::error(format!("unexpected character{ch}")).at(error.span)
        }
    }
}

fn clean(expected: &[String]) -> Vec<String> {
    let mut v: Vec<String> = expected
        .iter()
        .map(|e| {
            let inner = e
                .strip_prefix('"')
                .and_then(|e| e.strip_suffix('"'))
                .unwrap_or(e);
            let inner = inner.replace("\\\"", "\"");
            match inner.as_str() {
                "end of line" | "integer" | "float" | "string" | "identifier" => inner,
                "%name" | "%\"quoted name\"" => "a value name".into(),
                "@in, @out or @inout" => "an operand (`@in %x`)".into(),
                other => format!("`{other}`"),
            }
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

fn expected_short(expected: &[String]) -> String {
    let v = clean(expected);
    match v.len() {
        0 => "something else".into(),
        1 => v[0].clone(),
        2..=4 => format!("{} or {}", v[..v.len() - 1].join(", "), v[v.len() - 1]),
        _ => "one of several tokens".into(),
    }
}

fn expected_note(expected: &[String]) -> String {
    format!("expected one of {}", clean(expected).join(", "))
}

/// The name a `%name` or `%"quoted"` token stands for.
/// The name `raw` (`%x` or `%"x y"`) stands for, borrowed when unquoted.
fn name_key(raw: &str) -> Cow<'_, str> {
    let body = raw.strip_prefix('%').unwrap_or(raw);
    if body.starts_with('"') {
        Cow::Owned(unescape(&body[1..body.len() - 1]))
    } else {
        Cow::Borrowed(body)
    }
}

pub fn unquote_name(raw: &str) -> String {
    let body = raw.strip_prefix('%').unwrap_or(raw);
    if body.starts_with('"') {
        unescape(&body[1..body.len() - 1])
    } else {
        body.to_string()
    }
}

fn unquote_text(t: &Text) -> String {
    if t.value.starts_with('"') {
        unescape(&t.value[1..t.value.len() - 1])
    } else {
        unquote_name(t.value)
    }
}

fn unescape(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Every name a line defines (`[N] %name =`), found from tokens alone, so a
/// line that failed to parse still counts as defining its name.
fn defined_names(text: &str) -> HashSet<String> {
    let mut names = HashSet::default();
    // Raw tokens, so lines the lexer leaves out still count.
    let toks: Vec<Tok> = logos::Logos::lexer(text).filter_map(Result::ok).collect();
    let mut line_start = true;
    for (i, t) in toks.iter().enumerate() {
        match t {
            Tok::Newline => line_start = true,
            Tok::Int(_) if line_start => {}
            Tok::Name(n) | Tok::QuotedName(n) if line_start => {
                if toks.get(i + 1) == Some(&Tok::Eq) {
                    names.insert(unquote_name(n));
                }
                line_start = false;
            }
            _ => line_start = false,
        }
    }
    names
}

#[derive(Default)]
struct Lowerer<'a> {
    /// Borrowed from the source when the name is written unquoted.
    names: HashMap<Cow<'a, str>, (Value, usize)>,
    /// Names defined on lines that did not parse; uses of them are not
    /// reported again.
    broken: HashSet<String>,
    /// The name of the instruction being lowered.
    current: Option<String>,
    func: Function,
    /// Per undefined name, the two closest defined names (`did_you_mean`'s
    /// rule), so repeated uses cost one lookup.
    suggestions: std::cell::RefCell<HashMap<String, Vec<String>>>,
    /// Defined names compared so far; past `SUGGESTION_BUDGET` no new
    /// suggestions are computed, so diagnostics stay linear in the file.
    compared: std::cell::Cell<usize>,
}

/// How many (undefined name, defined name) pairs suggestions may compare.
const SUGGESTION_BUDGET: usize = 1_000_000;

impl<'a> Lowerer<'a> {
    fn lower(mut self, f: &FuncAst<'a>, diags: &mut Vec<Diagnostic>) -> Function {
        self.func.name = unquote_text(&f.name);
        self.func.spans.function = Some(span(&f.name));
        self.func.memory = lower_header(&f.members, diags);
        // Sized once: growing these tables cost a tenth of parse time.
        self.names.reserve(f.weights.len() + f.insts.len());
        self.func.reserve(f.weights.len(), f.insts.len());
        // Names first, so operands may name values defined later (the verifier
        // reports the use-before-definition with a better message).
        for (i, w) in f.weights.iter().enumerate() {
            self.define(&w.name, Value::Weight(WeightId(i as u32)), diags);
        }
        for (i, inst) in f.insts.iter().enumerate() {
            self.define(&inst.name, Value::Inst(InstId(i as u32)), diags);
        }
        // Ids follow source order, as `define` assumed above.
        for w in &f.weights {
            let (data, spans) = self.lower_weight(w, diags);
            let id = self.func.push_weight(data);
            self.func.spans.set_weight(id.index(), spans);
        }
        for inst in &f.insts {
            self.current = Some(unquote_name(inst.name.value));
            let (data, spans) = self.lower_inst(inst, diags);
            let id = Builder::new(&mut self.func).insert(data);
            self.func.spans.set_inst(id.index(), spans);
        }
        self.func
    }

    fn define(&mut self, name: &Text<'a>, v: Value, diags: &mut Vec<Diagnostic>) {
        use std::collections::hash_map::Entry;
        match self.names.entry(name_key(name.value)) {
            Entry::Vacant(e) => {
                e.insert((v, name.start));
            }
            Entry::Occupied(e) => {
                let prev = e.get().1;
                diags.push(
                    Diagnostic::error(format!("`%{}` is defined twice", e.key()))
                        .at_labelled(span(name), "redefined here")
                        .with_secondary(
                            Span::new(prev, prev + name.value.len()),
                            "first defined here",
                        ),
                );
            }
        }
    }

    fn resolve(&self, name: &Text, diags: &mut Vec<Diagnostic>) -> Option<Value> {
        // Most names are unquoted: look them up without allocating.
        let plain = name.value.strip_prefix('%').filter(|b| !b.starts_with('"'));
        if let Some(&(v, _)) = plain.and_then(|p| self.names.get(p)) {
            return Some(v);
        }
        let n = unquote_name(name.value);
        if let Some(&(v, _)) = self.names.get(n.as_str()) {
            return Some(v);
        }
        if self.broken.contains(&n) {
            return None;
        }
        let mut d = Diagnostic::error(format!("use of undefined value `%{}`", n)).at(span(name));
        // An instruction never names its own result as an operand.
        let own = self.current.as_deref();
        if let Some(s) = self
            .closest(&n)
            .into_iter()
            .find(|c| Some(c.as_str()) != own)
        {
            d = d.with_note(format!("did you mean `%{}`?", s));
        }
        diags.push(d);
        None
    }

    /// The two defined names closest to `word`, best first (memoized; none
    /// once the comparison budget is spent).
    fn closest(&self, word: &str) -> Vec<String> {
        if let Some(v) = self.suggestions.borrow().get(word) {
            return v.clone();
        }
        if self.compared.get() > SUGGESTION_BUDGET {
            return Vec::new();
        }
        self.compared.set(self.compared.get() + self.names.len());
        let mut best: Vec<&str> = Vec::new();
        let mut rest: Vec<&str> = self.names.keys().map(|k| k.as_ref()).collect();
        rest.sort_unstable();
        for _ in 0..2 {
            let Some(c) = did_you_mean(word, rest.iter().copied()) else {
                break;
            };
            best.push(c);
            rest.retain(|&r| r != c);
        }
        let v: Vec<String> = best.into_iter().map(str::to_string).collect();
        self.suggestions
            .borrow_mut()
            .insert(word.to_string(), v.clone());
        v
    }

    fn lower_weight(&self, w: &WeightAst, diags: &mut Vec<Diagnostic>) -> (WeightData, ItemSpans) {
        let ty = lower_type(&w.ty, diags).unwrap_or_else(|| Type::float(&[1]));
        let mutability = if w.mutable.value == "const" {
            Mutability::Const
        } else {
            Mutability::Mutable
        };
        let mut init = None;
        let mut seen = false;
        for m in &w.members {
            if m.name.value != "Data" {
                let mut d = Diagnostic::error(format!("unknown weight member `{}`", m.name.value))
                    .at(span(&m.name))
                    .with_note("a weight has one member, `Data`");
                if did_you_mean(m.name.value, ["Data"]).is_some() {
                    d = d.with_note("did you mean `Data`?");
                }
                diags.push(d);
                continue;
            }
            if seen {
                diags.push(Diagnostic::error("member `Data` is given twice").at(span(&m.name)));
                continue;
            }
            seen = true;
            init = lower_data(&m.value, &ty, diags);
        }
        let spans = ItemSpans {
            line: Span::new(w.start, w.end),
            name: span(&w.name),
            head: Span::new(w.ty.start, w.ty.end),
            operands: Vec::new(),
            members: Vec::new(),
        };
        (
            WeightData {
                name: unquote_name(w.name.value),
                ty,
                mutability,
                init,
            },
            spans,
        )
    }

    fn lower_inst(&self, inst: &InstAst, diags: &mut Vec<Diagnostic>) -> (InstData, ItemSpans) {
        let mut spans = ItemSpans {
            line: Span::new(inst.start, inst.end),
            name: span(&inst.name),
            head: span(&inst.opcode),
            operands: Vec::with_capacity(inst.operands.len()),
            members: Vec::new(),
        };
        let opcode = match Opcode::from_name(inst.opcode.value) {
            Some(o) => o,
            None => {
                let mut d = Diagnostic::error(format!("unknown opcode `{}`", inst.opcode.value))
                    .at(span(&inst.opcode));
                if let Some(s) =
                    did_you_mean(inst.opcode.value, Opcode::ALL.iter().map(|o| o.name()))
                {
                    d = d.with_note(format!("did you mean `{}`?", s));
                }
                diags.push(d);
                Opcode::Touch
            }
        };
        let info = opcode.info();
        let mut operands = Vec::with_capacity(inst.operands.len());
        for o in &inst.operands {
            let kind = match o.kind.value {
                "@in" => OperandKind::In,
                "@out" => OperandKind::Out,
                "@inout" => OperandKind::InOut,
                other => {
                    let mut d = Diagnostic::error(format!("unknown operand kind `{}`", other))
                        .at(span(&o.kind));
                    if let Some(s) = did_you_mean(other, ["@in", "@out", "@inout"]) {
                        d = d.with_note(format!("did you mean `{}`?", s));
                    }
                    diags.push(d.with_note("operand kinds are `@in`, `@out` and `@inout`"));
                    continue;
                }
            };
            if let Some(value) = self.resolve(&o.name, diags) {
                operands.push(Operand { kind, value });
                spans.operands.push(Span::new(o.kind.start, o.name.end));
            }
        }
        let mut members: Vec<Option<MemberValue>> = info
            .members
            .iter()
            .map(|m| MemberValue::from_default(m.default))
            .collect();
        for m in &inst.members {
            let Some(idx) = info.member_index(m.name.value) else {
                let mut d =
                    Diagnostic::error(format!("`{}` has no member `{}`", info.name, m.name.value))
                        .at(span(&m.name));
                let names: Vec<&str> = info.members.iter().map(|d| d.name).collect();
                if let Some(s) = did_you_mean(m.name.value, names.iter().copied()) {
                    d = d.with_note(format!("did you mean `{}`?", s));
                } else if names.is_empty() {
                    d = d.with_note(format!("`{}` takes no members", info.name));
                } else {
                    d = d.with_note(format!("its members are {}", names.join(", ")));
                }
                diags.push(d);
                continue;
            };
            // Allocated only when a member is written: most lines have none.
            if spans.members.is_empty() {
                spans.members = vec![None; info.members.len()];
            }
            if spans.members[idx].is_some() {
                diags.push(
                    Diagnostic::error(format!("member `{}` is given twice", m.name.value))
                        .at(span(&m.name)),
                );
                continue;
            }
            spans.members[idx] = Some(Span::new(m.name.start, m.end));
            if let Some(v) = lower_member(&m.value, info.members[idx].ty, diags) {
                members[idx] = Some(v);
            }
        }
        let data = InstData {
            name: unquote_name(inst.name.value),
            opcode,
            operands,
            members,
        };
        (data, spans)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Thousands of distinct undefined names cost a bounded number of
    /// suggestion comparisons, not one per (use, defined name) pair.
    #[test]
    fn undefined_name_suggestions_are_bounded() {
        let n = 6000;
        let mut src =
            String::from("function f\ndeclare {\n  %x = WeightVar float<2> mutable\n}\n\ncode {\n");
        for i in 0..n {
            src.push_str(&format!("  %e{i} = relu @out %x, @in %nope{i}\n"));
        }
        src.push_str("}\n");
        crate::diag::EDIT_DISTANCES.with(|c| c.set(0));
        let diags = parse(src.as_bytes()).expect_err("undefined names");
        assert_eq!(diags.len(), n);
        let calls = crate::diag::EDIT_DISTANCES.with(|c| c.get());
        // Quadratic would be about n * 5000 = 30M.
        assert!(calls <= 3 * SUGGESTION_BUDGET, "{calls} edit distances");
        // The same undefined name many times is compared once.
        let mut src = String::from(
            "function f\ndeclare {\n  %nope = WeightVar float<2> mutable\n}\n\ncode {\n",
        );
        for i in 0..n {
            src.push_str(&format!("  %e{i} = relu @out %nope, @in %nopx\n"));
        }
        src.push_str("}\n");
        crate::diag::EDIT_DISTANCES.with(|c| c.set(0));
        let diags = parse(src.as_bytes()).expect_err("undefined names");
        let last = diags.last().expect("diagnostics");
        assert!(
            last.notes
                .iter()
                .any(|m| m.contains("did you mean `%nope`")),
            "{last:?}"
        );
        assert!(crate::diag::EDIT_DISTANCES.with(|c| c.get()) <= 3 * n);
    }
    use crate::printer::{print_module, PrintOptions};

    const LENET: &str = include_str!("../../../examples/lenet.gir");

    fn round(s: &str) -> String {
        match parse(s.as_bytes()) {
            Ok(m) => print_module(&m, PrintOptions::default()),
            Err(d) => panic!("{}", crate::diag::render_all(&d, "t.gir", s.as_bytes())),
        }
    }

    #[test]
    fn print_parse_is_a_fixed_point() {
        let once = round(LENET);
        assert_eq!(round(&once), once);
        assert!(
            once.contains("1 %conv = convolution @out %conv.res, @in %input"),
            "{once}"
        );
    }

    #[test]
    fn errors_are_collected_per_line() {
        let src = "function f\ndeclare {\n  %a = WeightVar float<2> cnst\n  %b = WeightVar float<2 x> const\n}\n\ncode {\n}\n";
        let diags = parse(src.as_bytes()).unwrap_err();
        assert_eq!(diags.len(), 2, "{diags:#?}");
    }
}
