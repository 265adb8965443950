//! What the server knows about a document's text: its chunks (split at
//! `// -----` lines as `glow-opt --split-input-file` does), each parsed and
//! verified as glow-opt would, and an index of every name, instruction and
//! member built from tokens, so navigation works on a file that does not
//! parse.

use glow_ir::lexer::Tok;
use glow_ir::parser::unquote_name;
use glow_ir::{parser, verifier, Diagnostic, Module, Span};
use logos::Logos;

/// One `%name` written in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub span: Span,
    /// The name it stands for (unquoted, without `%`).
    pub key: String,
    /// Whether this is the `%name =` of a declaration.
    pub def: bool,
}

/// One instruction line of a function's `code` block.
#[derive(Clone, Debug, Default)]
pub struct InstLine {
    /// The written index (`3` of `3 %x = ...`), if any.
    pub index: Option<Span>,
    /// The `%name`.
    pub name: Span,
    /// The opcode word, if the line has one.
    pub opcode: Option<(Span, String)>,
    /// Each member name written on the line.
    pub members: Vec<(Span, String)>,
    /// From the first token to the end of the last one.
    pub line: Span,
    /// Where the member braces open and close, when written.
    pub braces: Option<Span>,
}

/// One weight line of a function's `declare` block.
#[derive(Clone, Debug, Default)]
pub struct WeightLine {
    pub name: Span,
    pub line: Span,
}

/// A function as its tokens show it.
#[derive(Clone, Debug, Default)]
pub struct FuncIndex {
    pub name: String,
    pub name_span: Span,
    /// From `function` to the `}` closing `code` (or the chunk's end).
    pub span: Span,
    pub names: Vec<Occurrence>,
    pub weights: Vec<WeightLine>,
    pub insts: Vec<InstLine>,
    /// A comment lies inside the function (the printer would drop it).
    pub has_comment: bool,
}

impl FuncIndex {
    /// Every occurrence of the name `key`.
    pub fn occurrences<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Occurrence> + 'a {
        self.names.iter().filter(move |o| o.key == key)
    }

    /// The declaration of `key`, if written.
    pub fn definition(&self, key: &str) -> Option<&Occurrence> {
        self.names.iter().find(|o| o.def && o.key == key)
    }

    /// The occurrence at byte `offset` (its end included, so a cursor just
    /// after a name finds it).
    pub fn occurrence_at(&self, offset: usize) -> Option<&Occurrence> {
        self.names
            .iter()
            .find(|o| (o.span.start as usize..=o.span.end as usize).contains(&offset))
    }

    /// The instruction line holding byte `offset`.
    pub fn inst_at(&self, offset: usize) -> Option<(usize, &InstLine)> {
        self.insts
            .iter()
            .enumerate()
            .find(|(_, l)| (l.line.start as usize..=l.line.end as usize).contains(&offset))
    }
}

/// A `// -----` chunk of the document, with glow-opt's view of it.
#[derive(Debug)]
pub struct Chunk {
    /// Byte range in the document; spans in `module` and `diags` are
    /// document offsets (text outside the chunk is blanked, not cut).
    pub range: std::ops::Range<usize>,
    /// The parsed module, when the chunk parses.
    pub module: Option<Module>,
    /// Parser or verifier diagnostics, in source order.
    pub diags: Vec<Diagnostic>,
    /// The module verified without error.
    pub verified: bool,
    pub funcs: Vec<FuncIndex>,
}

impl Chunk {
    /// The function containing byte `offset`, with its index in the chunk.
    pub fn func_at(&self, offset: usize) -> Option<(usize, &FuncIndex)> {
        self.funcs
            .iter()
            .enumerate()
            .find(|(_, f)| (f.span.start as usize..=f.span.end as usize).contains(&offset))
    }

    /// The parsed function `k` of the chunk, when the token index and the
    /// parser agree on the functions.
    pub fn function(&self, k: usize) -> Option<&glow_ir::Function> {
        let m = self.module.as_ref()?;
        (m.functions.len() == self.funcs.len()).then(|| &m.functions[k])
    }
}

/// Everything about one version of a document.
#[derive(Debug)]
pub struct Analysis {
    pub chunks: Vec<Chunk>,
}

impl Analysis {
    pub fn new(text: &str) -> Analysis {
        let ranges = chunk_ranges(text);
        let single = ranges.len() == 1;
        let chunks = ranges
            .into_iter()
            .map(|range| {
                if single {
                    analyze(text, range)
                } else {
                    analyze(&blank_outside(text, &range), range)
                }
            })
            .collect();
        Analysis { chunks }
    }

    pub fn chunk_at(&self, offset: usize) -> Option<&Chunk> {
        self.chunks
            .iter()
            .find(|c| c.range.contains(&offset) || c.range.end == offset)
    }

    pub fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.chunks.iter().flat_map(|c| &c.diags)
    }
}

/// Byte ranges between `// -----` lines (the whole text when there is none).
fn chunk_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim() == "// -----" {
            out.push(start..at);
            start = at + line.len();
        }
        at += line.len();
    }
    out.push(start..text.len());
    out
}

/// `text` with every byte outside `range` a space (newlines kept), so the
/// chunk parses alone at the offsets and lines it has in the document.
fn blank_outside(text: &str, range: &std::ops::Range<usize>) -> String {
    let blank = |s: &str| -> String {
        s.chars()
            .map(|c| if c == '\n' { '\n' } else { ' ' })
            .collect()
    };
    let mut out = blank(&text[..range.start]);
    out.push_str(&text[range.clone()]);
    out.push_str(&blank(&text[range.end..]));
    out
}

/// Parses and verifies a chunk as glow-opt does (`process` in the driver):
/// the verifier runs only on a module that parses.
fn analyze(text: &str, range: std::ops::Range<usize>) -> Chunk {
    let (module, diags, verified) = match parser::parse(text.as_bytes()) {
        Err(diags) => (None, diags, false),
        Ok(m) => {
            let diags = verifier::verify_module(&m);
            let ok = !diags.iter().any(Diagnostic::is_error);
            (Some(m), diags, ok)
        }
    };
    Chunk {
        funcs: index_functions(text, range.clone()),
        range,
        module,
        diags,
        verified,
    }
}

/// The token index of each function in `range` of `text`.
pub fn index_functions(text: &str, range: std::ops::Range<usize>) -> Vec<FuncIndex> {
    let body = &text[range.clone()];
    let base = range.start;
    let toks: Vec<(Tok, Span)> = Tok::lexer(body)
        .spanned()
        .filter_map(|(t, r)| Some((t.ok()?, Span::new(r.start + base, r.end + base))))
        .collect();
    let mut funcs: Vec<FuncIndex> = Vec::new();
    let mut depth = 0usize;
    // Brace depth inside `code {` (None outside it), and whether the
    // current function's block has closed.
    let mut code_depth: Option<usize> = None;
    let mut declare_depth: Option<usize> = None;
    let mut closed = true;
    let mut line_start = true;
    let mut prev_end = base;
    let mut i = 0;
    while i < toks.len() {
        let (tok, span) = toks[i];
        if !closed {
            let gap = &text[prev_end..span.start as usize];
            if gap.contains("//") || gap.contains(';') {
                if let Some(f) = funcs.last_mut() {
                    f.has_comment = true;
                }
            }
        }
        prev_end = span.end as usize;
        let next = toks.get(i + 1).map(|t| t.0);
        match tok {
            Tok::Newline => {
                line_start = true;
                i += 1;
                continue;
            }
            Tok::Function => {
                let mut f = FuncIndex {
                    span,
                    ..FuncIndex::default()
                };
                if let Some((Tok::Ident(n) | Tok::Str(n), s)) = toks.get(i + 1).copied() {
                    f.name = unquote_name(n);
                    f.name_span = s;
                }
                funcs.push(f);
                depth = 0;
                code_depth = None;
                declare_depth = None;
                closed = false;
            }
            Tok::Code if next == Some(Tok::LBrace) => code_depth = Some(depth + 1),
            Tok::Declare if next == Some(Tok::LBrace) => declare_depth = Some(depth + 1),
            Tok::LBrace => {
                depth += 1;
                if let (Some(cd), Some(f)) = (code_depth, funcs.last_mut()) {
                    if depth == cd + 1 {
                        if let Some(l) = f.insts.last_mut() {
                            l.braces = Some(span);
                        }
                    }
                }
            }
            Tok::RBrace => {
                if let (Some(cd), Some(f)) = (code_depth, funcs.last_mut()) {
                    if depth == cd + 1 {
                        if let Some(l) = f.insts.last_mut() {
                            l.braces = l.braces.map(|b| b.to(span));
                        }
                    }
                    if depth == cd && !closed {
                        f.span = f.span.to(span);
                        closed = true;
                        code_depth = None;
                    }
                }
                if declare_depth == Some(depth) {
                    declare_depth = None;
                }
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
        let Some(f) = funcs.last_mut() else {
            i += 1;
            line_start = false;
            continue;
        };
        if !closed {
            f.span = f.span.to(span);
        }
        // A declaration: `[N] %name =` at the start of a line.
        if line_start {
            let (index, at) = match tok {
                Tok::Int(_) => (Some(span), i + 1),
                _ => (None, i),
            };
            if let (Some((Tok::Name(n) | Tok::QuotedName(n), name)), Some((Tok::Eq, _))) =
                (toks.get(at).copied(), toks.get(at + 1).copied())
            {
                f.names.push(Occurrence {
                    span: name,
                    key: unquote_name(n),
                    def: true,
                });
                let line_end = toks[at..]
                    .iter()
                    .take_while(|t| t.0 != Tok::Newline)
                    .last()
                    .map_or(name, |t| t.1);
                let line = index.unwrap_or(name).to(line_end);
                if code_depth == Some(depth) {
                    let opcode = match toks.get(at + 2) {
                        Some(&(Tok::Ident(o), s)) => Some((s, o.to_string())),
                        _ => None,
                    };
                    f.insts.push(InstLine {
                        index,
                        name,
                        opcode,
                        line,
                        ..InstLine::default()
                    });
                } else if declare_depth == Some(depth) {
                    f.weights.push(WeightLine { name, line });
                }
                line_start = false;
                i = at + 2;
                continue;
            }
        }
        line_start = false;
        match tok {
            Tok::Name(n) | Tok::QuotedName(n) => f.names.push(Occurrence {
                span,
                key: unquote_name(n),
                def: false,
            }),
            Tok::Ident(m)
                if next == Some(Tok::Colon) && code_depth.is_some_and(|d| depth == d + 1) =>
            {
                if let Some(l) = f.insts.last_mut() {
                    l.members.push((span, m.to_string()));
                }
            }
            _ => {}
        }
        i += 1;
    }
    funcs
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: &str = "function f\ndeclare {\n  %x = WeightVar float<4> mutable\n  %\"y z\" = WeightVar float<4> mutable\n}\n\ncode {\n  0 %a = allocactivation { Ty: float<4> }\n  %r = relu @out %a, @in %x\n  2 %c = copy @out %\"y z\", @in %a\n  3 %d = deallocactivation @out %a\n}\n";

    #[test]
    fn index_finds_declarations_uses_and_members() {
        let funcs = index_functions(SRC, 0..SRC.len());
        assert_eq!(funcs.len(), 1);
        let f = &funcs[0];
        assert_eq!(f.name, "f");
        assert_eq!(f.weights.len(), 2);
        assert_eq!(f.insts.len(), 4);
        assert!(f.insts[1].index.is_none());
        assert_eq!(f.insts[0].members[0].1, "Ty");
        assert_eq!(f.insts[1].opcode.as_ref().unwrap().1, "relu");
        assert_eq!(f.occurrences("a").count(), 4);
        assert_eq!(f.occurrences("y z").count(), 2);
        assert!(f.definition("y z").is_some());
        assert_eq!(f.span.end as usize, SRC.trim_end().len());
        assert!(!f.has_comment);
    }

    #[test]
    fn chunks_keep_document_offsets() {
        let text = format!("{SRC}// -----\n{SRC}");
        let a = Analysis::new(&text);
        assert_eq!(a.chunks.len(), 2);
        let second = &a.chunks[1];
        assert!(second.verified, "{:?}", second.diags);
        assert_eq!(second.funcs[0].span.start as usize, SRC.len() + 9);
        let f = second.function(0).unwrap();
        assert_eq!(f.spans.function.unwrap().start as usize, SRC.len() + 18);
    }
}
