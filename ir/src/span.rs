//! Source positions, kept in a side table keyed by entity id so the IR
//! itself stays small (as Naga does).

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
    /// Each member by table index; `None` when not written, and empty when
    /// the line writes no member.
    pub members: Vec<Option<Span>>,
}

/// Spans for a function, a side table keyed by weight and instruction id.
/// An entity without an entry has no span: instructions a pass creates need
/// no bookkeeping, and only the parser writes entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    pub function: Option<Span>,
    weights: Vec<Option<ItemSpans>>,
    insts: Vec<Option<ItemSpans>>,
}

fn set(table: &mut Vec<Option<ItemSpans>>, i: usize, spans: Option<ItemSpans>) {
    if i >= table.len() {
        if spans.is_none() {
            return;
        }
        table.resize(i + 1, None);
    }
    table[i] = spans;
}

impl SourceMap {
    /// Spans of weight `i`; `None` for weights that were not parsed.
    pub fn weight(&self, i: usize) -> Option<&ItemSpans> {
        self.weights.get(i)?.as_ref()
    }
    /// Spans of instruction `i`; `None` for instructions a pass created.
    pub fn inst(&self, i: usize) -> Option<&ItemSpans> {
        self.insts.get(i)?.as_ref()
    }
    /// Room for `weights` and `insts` more entries.
    pub fn reserve(&mut self, weights: usize, insts: usize) {
        self.weights.reserve(weights);
        self.insts.reserve(insts);
    }
    pub fn set_weight(&mut self, i: usize, spans: ItemSpans) {
        set(&mut self.weights, i, Some(spans));
    }
    pub fn set_inst(&mut self, i: usize, spans: ItemSpans) {
        set(&mut self.insts, i, Some(spans));
    }
    /// Forgets the spans of instruction `i` (a pass rewrote it).
    pub fn clear_inst(&mut self, i: usize) {
        set(&mut self.insts, i, None);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_default_to_no_span() {
        let mut m = SourceMap::default();
        assert!(m.inst(0).is_none());
        let spans = ItemSpans {
            line: Span::new(3, 9),
            ..ItemSpans::default()
        };
        m.set_inst(2, spans.clone());
        assert_eq!(m.inst(2), Some(&spans));
        assert!(m.inst(1).is_none() && m.inst(3).is_none() && m.weight(2).is_none());
        m.clear_inst(2);
        assert!(m.inst(2).is_none());
        // Clearing past the end allocates nothing.
        m.clear_inst(1000);
        assert_eq!(m.insts.len(), 3);
    }
}
