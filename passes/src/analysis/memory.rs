//! Memory figures of a function's activations: each buffer's size,
//! lifetime (its alloc and dealloc positions) and arena offset, the naive
//! total (every buffer its own memory), the peak of simultaneously live
//! bytes, the max-live lower bound with aligned sizes, and the arena: the
//! planned one when `plan-memory` ran, otherwise the one the planner would
//! reach (so a report before the pipeline already shows the potential).

use crate::planner::{self, align_up};
use glow_ir::member as m;
use glow_ir::Function;
pub use glow_planner::arena::{arena_layout, lifetimes, planner_buffers, ArenaLayout, Lifetime};
use std::fmt::Write;

/// One activation buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferReport {
    pub name: String,
    pub ty: String,
    pub bytes: u64,
    /// Position of the alloc.
    pub first: usize,
    /// Position of the dealloc (the last position when there is none).
    pub last: usize,
    /// `bytes` rounded up to the report's alignment.
    pub aligned_bytes: u64,
    /// Byte offset in the arena (planned, or what the planner would pick).
    pub offset: u64,
}

/// The memory report of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    pub function: String,
    pub buffers: Vec<BufferReport>,
    pub naive_bytes: u64,
    pub peak_live_bytes: u64,
    /// Alignment of sizes and offsets.
    pub align: u64,
    /// Max-live bound with aligned sizes.
    pub lower_bound_bytes: u64,
    pub arena_bytes: u64,
    /// Whether the offsets and arena come from the function (`plan-memory`).
    pub planned: bool,
}

/// Computes the report with the default 64-byte alignment.
pub fn memory_report(f: &Function) -> MemoryReport {
    memory_report_aligned(f, glow_ir::ALIGN)
}

/// Computes the report; `align` applies when the function is not planned
/// (a planned function uses its own).
pub fn memory_report_aligned(f: &Function, align: u64) -> MemoryReport {
    let a = arena_layout(f, align);
    let buffers: Vec<BufferReport> = a
        .lives
        .iter()
        .zip(&a.bufs)
        .zip(&a.offsets)
        .map(|((l, b), &offset)| {
            let ty = f.inst(l.alloc).get(m::TY);
            BufferReport {
                name: f.inst(l.alloc).name.clone(),
                ty: ty.map(|t| t.to_string()).unwrap_or_default(),
                bytes: b.size,
                first: l.first,
                last: l.last,
                aligned_bytes: align_up(b.size, a.align),
                offset,
            }
        })
        .collect();
    MemoryReport {
        function: f.name.clone(),
        naive_bytes: a.bufs.iter().map(|b| b.size).fold(0, u64::saturating_add),
        peak_live_bytes: planner::lower_bound(&a.bufs, 1),
        align: a.align,
        lower_bound_bytes: a.lower_bound,
        arena_bytes: a.arena,
        planned: a.planned,
        buffers,
    }
}

impl MemoryReport {
    /// `arena / lower bound` (1 when both are zero).
    pub fn ratio(&self) -> f64 {
        if self.lower_bound_bytes == 0 {
            1.0
        } else {
            self.arena_bytes as f64 / self.lower_bound_bytes as f64
        }
    }

    /// Human-readable table.
    pub fn to_text(&self) -> String {
        let mut s = format!("memory report for function {}\n", self.function);
        // Columns as wide as their longest entry: ONNX names run long. An
        // unplanned function has no offsets, so it gets no offset column.
        let name_w = self
            .buffers
            .iter()
            .map(|b| b.name.len())
            .max()
            .unwrap_or(0)
            .max(6);
        let ty_w = self
            .buffers
            .iter()
            .map(|b| b.ty.len())
            .max()
            .unwrap_or(0)
            .max(4);
        let row = |name: &str, ty: &str, bytes: &str, first: &str, last: &str, offset: &str| {
            let mut line =
                format!("  {name:<name_w$}  {ty:<ty_w$}  {bytes:>12}  {first:>6}  {last:>6}");
            if self.planned {
                line.push_str(&format!("  {offset:>12}"));
            }
            line
        };
        let _ = writeln!(
            s,
            "{}",
            row("buffer", "type", "bytes", "first", "last", "offset")
        );
        for b in &self.buffers {
            let _ = writeln!(
                s,
                "{}",
                row(
                    &b.name,
                    &b.ty,
                    &b.bytes.to_string(),
                    &b.first.to_string(),
                    &b.last.to_string(),
                    &b.offset.to_string()
                )
            );
        }
        let _ = writeln!(s, "  naive bytes: {}", self.naive_bytes);
        let _ = writeln!(s, "  peak live bytes: {}", self.peak_live_bytes);
        let _ = writeln!(
            s,
            "  lower bound bytes ({}-byte aligned): {}",
            self.align, self.lower_bound_bytes
        );
        let _ = writeln!(
            s,
            "  arena bytes{}: {} ({:.4} x lower bound)",
            if self.planned { "" } else { " (if planned)" },
            self.arena_bytes,
            self.ratio()
        );
        s
    }

    /// One JSON object: the original `naive_bytes`, `peak_live_bytes`,
    /// `buffers` keys, then `align`, `lower_bound_bytes`, `arena_bytes`,
    /// `ratio`, `planned`; buffers add `aligned_bytes` and `offset`.
    pub fn to_json(&self) -> String {
        let buffers: Vec<String> = self
            .buffers
            .iter()
            .map(|b| {
                format!(
                    "{{\"name\": {}, \"type\": {}, \"bytes\": {}, \"first\": {}, \"last\": {}, \"aligned_bytes\": {}, \"offset\": {}}}",
                    json_string(&b.name),
                    json_string(&b.ty),
                    b.bytes,
                    b.first,
                    b.last,
                    b.aligned_bytes,
                    b.offset
                )
            })
            .collect();
        format!(
            "{{\"function\": {}, \"naive_bytes\": {}, \"peak_live_bytes\": {}, \"buffers\": [{}], \"align\": {}, \"lower_bound_bytes\": {}, \"arena_bytes\": {}, \"ratio\": {:.4}, \"planned\": {}}}",
            json_string(&self.function),
            self.naive_bytes,
            self.peak_live_bytes,
            buffers.join(", "),
            self.align,
            self.lower_bound_bytes,
            self.arena_bytes,
            self.ratio(),
            self.planned
        )
    }
}

/// A JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
