//! Source buffers and LLVM `SourceMgr`-shaped messages.
//!
//! A message is `name:line:col: kind: text`, then the source line and a caret
//! line (with `~` under an optional range), exactly as LLVM prints them, so
//! that eyes and editors trained on FileCheck output find their way.

use std::fmt::Write;

/// Index of a buffer in [`Sources`].
pub type BufId = usize;

/// A location: a byte offset in one buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Loc {
    pub buf: BufId,
    pub offset: usize,
}

/// One named text (check file, input, or an implicit pattern).
pub struct Buffer {
    pub name: String,
    pub text: String,
    /// Byte offsets where each line starts.
    line_starts: Vec<usize>,
}

impl Buffer {
    pub fn new(name: &str, text: String) -> Self {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        Buffer {
            name: name.to_string(),
            text,
            line_starts,
        }
    }

    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        (line + 1, offset - self.line_starts[line] + 1)
    }

    /// Byte range of the 1-based line `line`, without its newline.
    pub fn line_range(&self, line: usize) -> (usize, usize) {
        let start = self.line_starts[line - 1];
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |i| start + i);
        (start, end)
    }

    /// Number of lines as LLVM's dump counts them.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

/// All buffers of one run.
#[derive(Default)]
pub struct Sources {
    pub bufs: Vec<Buffer>,
    /// Messages in LLVM's colours (`--color`): bold location and message, a coloured kind, a
    /// green caret line.
    pub color: bool,
}

/// The escape sequences of LLVM's `raw_ostream` colours.
pub mod ansi {
    pub const RESET: &str = "\x1b[0m";
    /// `SAVEDCOLOR` with bold: bold text in the current colour.
    pub const BOLD: &str = "\x1b[1m";
    pub const BLACK: &str = "\x1b[0;1;30m";
    pub const RED: &str = "\x1b[0;1;31m";
    pub const GREEN: &str = "\x1b[0;1;32m";
    pub const BLUE: &str = "\x1b[0;1;34m";
    pub const MAGENTA: &str = "\x1b[0;1;35m";
    pub const CYAN: &str = "\x1b[0;1;36m";
    /// Bold on a cyan background: input no good match covers, under `-v`.
    pub const CYAN_BG: &str = "\x1b[0;1;46m";
}

/// Message severity.
#[derive(Clone, Copy)]
pub enum Kind {
    Error,
    Remark,
    Note,
}

impl Sources {
    pub fn add(&mut self, name: &str, text: String) -> BufId {
        self.bufs.push(Buffer::new(name, text));
        self.bufs.len() - 1
    }

    /// Appends one message (with source line and caret) to `out`.
    pub fn print(
        &self,
        out: &mut String,
        loc: Loc,
        kind: Kind,
        msg: &str,
        range: Option<(usize, usize)>,
    ) {
        let buf = &self.bufs[loc.buf];
        let (line, col) = buf.line_col(loc.offset);
        let (kind, kind_color) = match kind {
            Kind::Error => ("error", ansi::RED),
            Kind::Remark => ("remark", ansi::BLUE),
            Kind::Note => ("note", ansi::BLACK),
        };
        let paint = |code: &'static str| if self.color { code } else { "" };
        let _ = writeln!(
            out,
            "{}{}:{}:{}: {}{}{}: {}{}{}",
            paint(ansi::BOLD),
            buf.name,
            line,
            col,
            paint(ansi::RESET),
            paint(kind_color),
            kind,
            paint(ansi::RESET),
            paint(ansi::BOLD),
            msg
        );
        out.push_str(paint(ansi::RESET));
        let (ls, le) = buf.line_range(line);
        let src = &buf.text[ls..le];
        // SourceMgr prints no caret line under a line with non-ASCII text: its columns
        // would not line up.
        if !src.is_ascii() {
            let _ = writeln!(out, "{}", src);
            return;
        }
        // The caret line is built per byte, then tabs are expanded in both.
        let width = src.len() + 1;
        let mut caret = vec![b' '; width];
        if let Some((rs, re)) = range {
            let rs = rs.max(ls);
            let re = re.min(le);
            for i in rs..re.max(rs) {
                if i - ls < width {
                    caret[i - ls] = b'~';
                }
            }
        }
        if loc.offset >= ls && loc.offset - ls < width {
            caret[loc.offset - ls] = b'^';
        }
        let mut src_out = String::new();
        let mut caret_out = String::new();
        for (i, ch) in src.char_indices() {
            let c = caret[i] as char;
            if ch == '\t' {
                // Expand to the next multiple of 8, as SourceMgr does.
                loop {
                    src_out.push(' ');
                    caret_out.push(if caret_out.is_empty() || c != '~' {
                        c
                    } else {
                        '~'
                    });
                    if src_out.chars().count().is_multiple_of(8) {
                        break;
                    }
                }
            } else {
                src_out.push(ch);
                caret_out.push(c);
                // Multi-byte characters occupy one column; skip their tail bytes.
            }
        }
        caret_out.push(caret[src.len()] as char);
        let _ = writeln!(out, "{}", src_out);
        let _ = writeln!(out, "{}{}", paint(ansi::GREEN), caret_out.trim_end());
        out.push_str(paint(ansi::RESET));
    }
}

/// Canonicalises a buffer like FileCheck: drops the `\r` of `\r\n` and, unless
/// `strict`, folds each run of spaces and tabs into one space.
pub fn canonicalize(text: &str, strict: bool) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\r' && bytes.get(i + 1) == Some(&b'\n') {
            continue;
        }
        if strict || (c != ' ' && c != '\t') {
            out.push(c);
            continue;
        }
        out.push(' ');
        while let Some(&(_, n)) = chars.peek() {
            if n == ' ' || n == '\t' {
                chars.next();
            } else {
                break;
            }
        }
    }
    out
}
