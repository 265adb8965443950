//! Source positions, kept in side tables parallel to the entity tables so
//! the IR itself stays small (as Naga does).

/// A byte range in the source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// Spans of one weight or instruction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ItemSpans {
    /// The whole line.
    pub line: Span,
    /// The `%name`.
    pub name: Span,
    /// The opcode word (instructions) or the type (weights).
    pub head: Span,
    /// Each operand (`@in %x`), in order.
    pub operands: Vec<Span>,
    /// Each member by table index; `None` when not written.
    pub members: Vec<Option<Span>>,
}

/// Spans for a function, indexed like `Function::weights` and `Function::insts`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    pub function: Option<Span>,
    pub weights: Vec<ItemSpans>,
    pub insts: Vec<ItemSpans>,
}

impl SourceMap {
    /// Spans of weight `i`; `None` for weights that were not parsed.
    pub fn weight(&self, i: usize) -> Option<&ItemSpans> {
        self.weights.get(i).filter(|s| s.line != Span::default())
    }
    /// Spans of instruction `i`; `None` for instructions a pass created.
    pub fn inst(&self, i: usize) -> Option<&ItemSpans> {
        self.insts.get(i).filter(|s| s.line != Span::default())
    }
}

/// Line (1-based) and column (1-based, in bytes) of a byte offset.
pub fn line_col(source: &[u8], offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = &source[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    (line, offset - line_start + 1)
}
