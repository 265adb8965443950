//! A hand-written parser for well-formed files, tried before the lalrpop
//! grammar: it builds the syntax tree the grammar builds, from the same
//! tokens, and gives up at the first token it does not expect. Then the
//! grammar parses the file again and reports every broken line, so the
//! grammar stays the definition of the syntax and of its diagnostics; this
//! only saves the table-driven parser's cost (a third of parse time) on the
//! files that parse. `tests/roundtrip.rs` checks both agree on every file of
//! the test suite.

// The syntax tree boxes lines and members (see `grammar.lalrpop`: the LR
// stack moves them); this parser builds the same types.
#![allow(clippy::vec_box)]

use crate::ast::*;
use crate::lexer::{LexIssue, Lexer, Tok};
use std::cell::RefCell;

type Triple<'a> = (usize, Tok<'a>, usize);

/// The syntax tree of `text`, or `None` if anything is off (the caller
/// then parses with the grammar). `issues` collects the lines the lexer
/// left out.
pub(super) fn parse_file<'a>(
    text: &'a str,
    issues: &'a RefCell<Vec<LexIssue>>,
) -> Option<Vec<Box<FuncAst<'a>>>> {
    let mut p = Fast {
        lexer: Lexer::with_issues(text, issues),
        peeked: None,
        last_end: 0,
    };
    let funcs = p.file();
    // A line the lexer left out is an error the grammar path reports.
    if !issues.borrow().is_empty() {
        return None;
    }
    funcs
}

struct Fast<'a> {
    lexer: Lexer<'a>,
    peeked: Option<Option<Triple<'a>>>,
    /// End of the last consumed token (lalrpop's `@R`).
    last_end: usize,
}

impl<'a> Fast<'a> {
    fn peek(&mut self) -> Option<Tok<'a>> {
        if self.peeked.is_none() {
            let next = self.lexer.next().and_then(Result::ok);
            self.peeked = Some(next);
        }
        self.peeked.flatten().map(|t| t.1)
    }

    /// Start of the next token (lalrpop's `@L`).
    fn next_start(&mut self) -> Option<usize> {
        self.peek()?;
        self.peeked.flatten().map(|t| t.0)
    }

    fn bump(&mut self) -> Option<Triple<'a>> {
        self.peek();
        let t = self.peeked.take().flatten()?;
        self.last_end = t.2;
        Some(t)
    }

    /// Consumes `tok` (compared without its text).
    fn expect(&mut self, tok: Tok<'a>) -> Option<Triple<'a>> {
        let next = self.peek()?;
        (std::mem::discriminant(&next) == std::mem::discriminant(&tok)).then_some(())?;
        self.bump()
    }

    fn at(&mut self, tok: Tok<'a>) -> bool {
        self.peek()
            .is_some_and(|t| std::mem::discriminant(&t) == std::mem::discriminant(&tok))
    }

    fn text(t: Triple<'a>, value: &'a str) -> Text<'a> {
        Spanned {
            value,
            start: t.0,
            end: t.2,
        }
    }

    fn file(&mut self) -> Option<Vec<Box<FuncAst<'a>>>> {
        if self.at(Tok::Newline) {
            self.bump();
        }
        let mut funcs = Vec::new();
        while self.peek().is_some() {
            funcs.push(self.function()?);
        }
        Some(funcs)
    }

    fn function(&mut self) -> Option<Box<FuncAst<'a>>> {
        let start = self.expect(Tok::Function)?.0;
        let t = self.bump()?;
        let name = match t.1 {
            Tok::Ident(v) | Tok::Str(v) | Tok::Name(v) => Self::text(t, v),
            _ => return None,
        };
        let members = if self.at(Tok::LBrace) {
            self.members()?
        } else {
            Vec::new()
        };
        self.expect(Tok::Newline)?;
        self.expect(Tok::Declare)?;
        let weights = self.body(Self::weight)?;
        self.expect(Tok::Newline)?;
        self.expect(Tok::Code)?;
        let insts = self.body(Self::inst)?;
        let end = self.last_end;
        self.expect(Tok::Newline)?;
        Some(Box::new(FuncAst {
            name,
            start,
            end,
            weights,
            insts,
            members,
        }))
    }

    /// `{` NL (line NL)* `}` or `{` `}`.
    fn body<L>(&mut self, line: fn(&mut Self) -> Option<L>) -> Option<Vec<L>> {
        self.expect(Tok::LBrace)?;
        let mut lines = Vec::new();
        if self.at(Tok::RBrace) {
            self.bump();
            return Some(lines);
        }
        self.expect(Tok::Newline)?;
        while !self.at(Tok::RBrace) {
            lines.push(line(self)?);
            self.expect(Tok::Newline)?;
        }
        self.bump();
        Some(lines)
    }

    fn value_name(&mut self) -> Option<Text<'a>> {
        let t = self.bump()?;
        match t.1 {
            Tok::Name(v) | Tok::QuotedName(v) => Some(Self::text(t, v)),
            _ => None,
        }
    }

    fn ident(&mut self) -> Option<Text<'a>> {
        let t = self.bump()?;
        match t.1 {
            Tok::Ident(v) => Some(Self::text(t, v)),
            _ => None,
        }
    }

    fn weight(&mut self) -> Option<Box<WeightAst<'a>>> {
        let start = self.next_start()?;
        let name = self.value_name()?;
        self.expect(Tok::Eq)?;
        self.expect(Tok::WeightVar)?;
        let elem = self.ident()?;
        let ty = self.ty(elem)?;
        let t = self.bump()?;
        let mutable = match t.1 {
            Tok::Const => Self::text(t, "const"),
            Tok::Mutable => Self::text(t, "mutable"),
            _ => return None,
        };
        let members = if self.at(Tok::LBrace) {
            self.members()?
        } else {
            Vec::new()
        };
        Some(Box::new(WeightAst {
            start,
            end: self.last_end,
            name,
            ty,
            mutable,
            members,
        }))
    }

    fn inst(&mut self) -> Option<Box<InstAst<'a>>> {
        let start = self.next_start()?;
        if self.at(Tok::Int("")) {
            self.bump();
        }
        let name = self.value_name()?;
        self.expect(Tok::Eq)?;
        let opcode = self.ident()?;
        let mut operands = Vec::new();
        if self.at(Tok::OperandKind("")) {
            loop {
                let t = self.expect(Tok::OperandKind(""))?;
                let Tok::OperandKind(k) = t.1 else {
                    return None;
                };
                let name = self.value_name()?;
                operands.push(OperandAst {
                    kind: Self::text(t, k),
                    name,
                });
                if !self.at(Tok::Comma) {
                    break;
                }
                self.bump();
            }
        }
        let members = if self.at(Tok::LBrace) {
            self.members()?
        } else {
            Vec::new()
        };
        Some(Box::new(InstAst {
            start,
            end: self.last_end,
            name,
            opcode,
            operands,
            members,
        }))
    }

    /// `{` (member `,`)* member? `}`.
    fn members(&mut self) -> Option<Vec<Box<MemberAst<'a>>>> {
        self.expect(Tok::LBrace)?;
        let mut members = Vec::new();
        while self.at(Tok::Ident("")) {
            let name = self.ident()?;
            self.expect(Tok::Colon)?;
            let value = self.value()?;
            members.push(Box::new(MemberAst {
                name,
                value,
                end: self.last_end,
            }));
            if !self.at(Tok::Comma) {
                break;
            }
            self.bump();
        }
        self.expect(Tok::RBrace)?;
        Some(members)
    }

    fn num(&mut self) -> Option<Spanned<Num<'a>>> {
        let t = self.bump()?;
        let value = match t.1 {
            Tok::Int(v) => Num::Int(v),
            Tok::Float(v) => Num::Float(v),
            _ => return None,
        };
        Some(Spanned {
            value,
            start: t.0,
            end: t.2,
        })
    }

    fn at_num(&mut self) -> bool {
        matches!(self.peek(), Some(Tok::Int(_) | Tok::Float(_)))
    }

    fn value(&mut self) -> Option<ValueAst<'a>> {
        match self.peek()? {
            Tok::Int(_) | Tok::Float(_) => Some(ValueAst::Num(self.num()?)),
            Tok::Str(v) => {
                let t = self.bump()?;
                Some(ValueAst::Str(Self::text(t, v)))
            }
            Tok::LBracket => {
                let start = self.bump()?.0;
                let mut elems = Vec::new();
                loop {
                    if self.at_num() {
                        elems.push(ValueAst::Num(self.num()?));
                    } else if self.at(Tok::Ident("")) {
                        elems.push(ValueAst::Ident(self.ident()?));
                    } else {
                        break;
                    }
                    if !self.at(Tok::Comma) {
                        break;
                    }
                    self.bump();
                }
                let truncated = if self.at(Tok::Ellipsis) {
                    let t = self.bump()?;
                    Some((t.0, t.2))
                } else {
                    None
                };
                let end = self.expect(Tok::RBracket)?.2;
                Some(ValueAst::Array {
                    elems,
                    truncated,
                    start,
                    end,
                })
            }
            Tok::Ident(_) => {
                let id = self.ident()?;
                match self.peek() {
                    Some(Tok::LBracket | Tok::Lt) => Some(ValueAst::Type(self.ty(id)?)),
                    Some(Tok::LParen) => {
                        self.bump();
                        let arg = self.num()?;
                        let end = self.expect(Tok::RParen)?.2;
                        Some(ValueAst::Call { func: id, arg, end })
                    }
                    _ => Some(ValueAst::Ident(id)),
                }
            }
            _ => None,
        }
    }

    /// The rest of a type after its element kind: `[S:.. O:..]`, a
    /// `[min, max]` range, then `<d x d ...>`.
    fn ty(&mut self, elem: Text<'a>) -> Option<Box<TypeAst<'a>>> {
        let mut quant = Vec::new();
        let mut range_next = false;
        if self.at(Tok::LBracket) {
            self.bump();
            if self.at_num() {
                range_next = true;
            } else {
                while self.at(Tok::Ident("")) {
                    let k = self.ident()?;
                    self.expect(Tok::Colon)?;
                    quant.push((k, self.num()?));
                }
                self.expect(Tok::RBracket)?;
                if self.at(Tok::LBracket) {
                    self.bump();
                    range_next = true;
                }
            }
        }
        if range_next {
            self.num()?;
            self.expect(Tok::Comma)?;
            self.num()?;
            self.expect(Tok::RBracket)?;
        }
        self.expect(Tok::Lt)?;
        let mut dims = Vec::new();
        loop {
            let t = self.expect(Tok::Int(""))?;
            let Tok::Int(v) = t.1 else { return None };
            dims.push(Self::text(t, v));
            if !self.at(Tok::X) {
                break;
            }
            self.bump();
        }
        let end = self.expect(Tok::Gt)?.2;
        Some(Box::new(TypeAst {
            start: elem.start,
            end,
            elem,
            quant,
            dims,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::FileParser;
    use std::path::Path;

    /// The grammar's tree when the grammar accepts `text` without recovery.
    fn grammar<'a>(
        text: &'a str,
        issues: &'a RefCell<Vec<LexIssue>>,
    ) -> Option<Vec<Box<FuncAst<'a>>>> {
        let mut recovered = Vec::new();
        let r = FileParser::new().parse(&mut recovered, Lexer::with_issues(text, issues));
        let clean = recovered.is_empty() && issues.borrow().is_empty();
        r.ok().filter(|_| clean)
    }

    /// Both parsers accept `text` or both reject it, with the same tree.
    fn agree(text: &str) -> Result<(), String> {
        let issues = RefCell::new(Vec::new());
        let fast = parse_file(text, &issues);
        let slow_issues = RefCell::new(Vec::new());
        let slow = grammar(text, &slow_issues);
        match (fast, slow) {
            (None, None) => Ok(()),
            (Some(a), Some(b)) if a == b => Ok(()),
            (Some(_), Some(_)) => Err("different trees".into()),
            (Some(_), None) => Err("only the fast parser accepts".into()),
            (None, Some(_)) => Err("only the grammar accepts".into()),
        }
    }

    fn gir_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                gir_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "gir") {
                out.push(p);
            }
        }
    }

    #[test]
    fn small_cases_agree() {
        let cases = [
            "function f\ndeclare {\n}\n\ncode {\n}\n",
            "function f { Arena: 64, Align: 16 }\ndeclare {}\ncode {}\n",
            "function \"a b\"\ndeclare {\n  %x = WeightVar i8[S:0.5 O:-1][-1, 2]<2 x 3> const { Data: [1, 2, ...] }\n}\ncode {\n  %t = allocactivation { Ty: float<2 x 3>, }\n  %r = relu @out %t, @in %x\n  %s = splat @out %t { Value: splat(1.5) }\n  %d = deallocactivation @out %t\n}\n",
            "function f\ndeclare {\n  %x = WeightVar float<2> mutable\n}\ncode {\n  0 %a = copy @out %x @in %x\n}\n",
            "function f\ndeclare {\n  %x = WeightVar float<2 x> mutable\n}\ncode {\n}\n",
            "function f\ndeclare {\n  %x = WeightVar float<2> mutable { Data: [1 ...] }\n}\ncode {\n}\n",
            "function f\ndeclare {\n  %x = WeightVar float<2> mutable { Data: [,] }\n}\ncode {\n}\n",
            "function f\ndeclare {\n}\ncode {\n  %a = touch { A: 1 B: 2 }\n}\n",
            "function f\ndeclare {\n}\ncode {\n  %a = touch { A: x, B: NHWC, C: \"s\", D: 1e-3, E: float[]<1> }\n}\n",
            "function f\ndeclare {\n}\ncode {\n}\nfunction g\ndeclare {\n}\ncode {\n}\n",
        ];
        for c in cases {
            agree(c).unwrap_or_else(|e| panic!("{e} on:\n{c}"));
        }
    }

    #[test]
    fn the_test_suite_and_its_mutations_agree() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../test");
        let mut files = Vec::new();
        gir_files(&root, &mut files);
        files.sort();
        assert!(!files.is_empty(), "no .gir files under {}", root.display());
        let mut accepted = 0;
        for path in &files {
            // Some tests hold invalid UTF-8 on purpose; the parser rejects
            // those before either grammar runs.
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            for chunk in text.split("\n// -----\n") {
                agree(chunk).unwrap_or_else(|e| panic!("{e}: {}", path.display()));
                accepted += grammar(chunk, &RefCell::new(Vec::new())).is_some() as usize;
                // Deterministic mutations: drop or double one byte.
                let bytes = chunk.as_bytes();
                for k in (0..bytes.len()).step_by(97) {
                    for m in [
                        [&bytes[..k], &bytes[k + 1..]].concat(),
                        [&bytes[..=k], &bytes[k..]].concat(),
                    ] {
                        if let Ok(m) = std::str::from_utf8(&m) {
                            agree(m).unwrap_or_else(|e| {
                                panic!("{e}: {} mutated at byte {k}:\n{m}", path.display())
                            });
                        }
                    }
                }
            }
        }
        assert!(accepted > 100, "only {accepted} chunks parse");
    }
}
