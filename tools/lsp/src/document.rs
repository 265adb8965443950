//! An open document: its text, the conversion between byte offsets and the
//! protocol's UTF-16 positions, and incremental edits.

use lsp_types::{Position, Range, TextDocumentContentChangeEvent};

/// Line starts of a text, for offset ↔ position conversion.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// The position of byte `offset` (clamped to the text, and down to a
    /// character boundary).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let start = self.starts[line];
        let character = text[start..offset].encode_utf16().count();
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of `pos`; a column past the line's end is its end,
    /// a line past the last is the end of the text.
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return text.len();
        };
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map_or(text.len(), |&e| e - 1);
        let mut units = 0u32;
        for (i, c) in text[start..end].char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }

    pub fn range(&self, text: &str, span: glow_ir::Span) -> Range {
        Range::new(
            self.position(text, span.start as usize),
            self.position(text, span.end as usize),
        )
    }
}

/// The text of one open document.
#[derive(Clone, Debug)]
pub struct Document {
    pub text: String,
    pub version: i32,
    pub lines: LineIndex,
}

impl Document {
    pub fn new(text: String, version: i32) -> Document {
        let lines = LineIndex::new(&text);
        Document {
            text,
            version,
            lines,
        }
    }

    /// Applies the changes of one `didChange`, in order (each range is in
    /// the text as the previous change left it).
    pub fn apply(&mut self, changes: Vec<TextDocumentContentChangeEvent>, version: i32) {
        for c in changes {
            match c.range {
                None => self.text = c.text,
                Some(r) => {
                    let start = self.lines.offset(&self.text, r.start);
                    let end = self.lines.offset(&self.text, r.end).max(start);
                    self.text.replace_range(start..end, &c.text);
                }
            }
            self.lines = LineIndex::new(&self.text);
        }
        self.version = version;
    }

    pub fn position(&self, offset: usize) -> Position {
        self.lines.position(&self.text, offset)
    }

    pub fn offset(&self, pos: Position) -> usize {
        self.lines.offset(&self.text, pos)
    }

    pub fn range(&self, span: glow_ir::Span) -> Range {
        self.lines.range(&self.text, span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let text = "ab\n%\"é𝄞x\" = 1\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap();
        // `%`, `"`, `é` (1 unit), `𝄞` (2 units).
        assert_eq!(idx.position(text, x), Position::new(1, 5));
        assert_eq!(idx.offset(text, Position::new(1, 5)), x);
        assert_eq!(idx.offset(text, Position::new(1, 99)), text.len() - 1);
        assert_eq!(idx.offset(text, Position::new(9, 0)), text.len());
    }

    #[test]
    fn incremental_changes_apply_in_order() {
        let mut d = Document::new("one\ntwo\n".into(), 1);
        let change = |l0, c0, l1, c1, t: &str| TextDocumentContentChangeEvent {
            range: Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
            range_length: None,
            text: t.into(),
        };
        d.apply(
            vec![change(1, 0, 1, 3, "three"), change(0, 3, 1, 0, " ")],
            2,
        );
        assert_eq!(d.text, "one three\n");
        assert_eq!(d.version, 2);
    }
}
