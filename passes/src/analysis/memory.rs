//! Memory figures of a function's activations: each buffer's size and
//! lifetime (its alloc and dealloc positions), the naive total (every buffer
//! its own memory) and the peak of simultaneously live bytes.

use glow_ir::{Function, InstId, Opcode, Value};
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
}

/// The memory report of one function.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    pub function: String,
    pub buffers: Vec<BufferReport>,
    pub naive_bytes: u64,
    pub peak_live_bytes: u64,
}

/// Computes the report from alloc/dealloc placement.
pub fn memory_report(f: &Function) -> MemoryReport {
    let mut buffers = Vec::new();
    let last_pos = f.layout.len().saturating_sub(1);
    let mut open: Vec<(InstId, usize)> = Vec::new();
    for (pos, &id) in f.layout.iter().enumerate() {
        let inst = f.inst(id);
        match inst.opcode {
            Opcode::AllocActivation => {
                open.push((id, buffers.len()));
                let ty = inst.member_type("Ty");
                buffers.push(BufferReport {
                    name: inst.name.clone(),
                    ty: ty.map(|t| t.to_string()).unwrap_or_default(),
                    bytes: ty.map_or(0, |t| t.bytes()),
                    first: pos,
                    last: last_pos,
                });
            }
            Opcode::DeallocActivation => {
                if let Some(Value::Inst(a)) = inst.operands.first().map(|o| o.value) {
                    if let Some(k) = open.iter().position(|&(i, _)| i == a) {
                        let (_, b) = open.remove(k);
                        buffers[b].last = pos;
                    }
                }
            }
            _ => {}
        }
    }
    let naive_bytes = buffers.iter().map(|b| b.bytes).sum();
    // Sweep: +bytes at the alloc, -bytes after the dealloc.
    let mut delta = vec![0i128; f.layout.len() + 1];
    for b in &buffers {
        delta[b.first] += b.bytes as i128;
        delta[b.last + 1] -= b.bytes as i128;
    }
    let mut live = 0i128;
    let mut peak = 0i128;
    for d in delta {
        live += d;
        peak = peak.max(live);
    }
    MemoryReport {
        function: f.name.clone(),
        buffers,
        naive_bytes,
        peak_live_bytes: peak as u64,
    }
}

impl MemoryReport {
    /// Human-readable table.
    pub fn to_text(&self) -> String {
        let mut s = format!("memory report for function {}\n", self.function);
        let _ = writeln!(
            s,
            "  {:<24} {:<28} {:>12} {:>6} {:>6}",
            "buffer", "type", "bytes", "first", "last"
        );
        for b in &self.buffers {
            let _ = writeln!(
                s,
                "  {:<24} {:<28} {:>12} {:>6} {:>6}",
                b.name, b.ty, b.bytes, b.first, b.last
            );
        }
        let _ = writeln!(s, "  naive bytes: {}", self.naive_bytes);
        let _ = writeln!(s, "  peak live bytes: {}", self.peak_live_bytes);
        s
    }

    /// One JSON object: `naive_bytes`, `peak_live_bytes`, `buffers`.
    pub fn to_json(&self) -> String {
        let buffers: Vec<String> = self
            .buffers
            .iter()
            .map(|b| {
                format!(
                    "{{\"name\": {}, \"type\": {}, \"bytes\": {}, \"first\": {}, \"last\": {}}}",
                    json_string(&b.name),
                    json_string(&b.ty),
                    b.bytes,
                    b.first,
                    b.last
                )
            })
            .collect();
        format!(
            "{{\"function\": {}, \"naive_bytes\": {}, \"peak_live_bytes\": {}, \"buffers\": [{}]}}",
            json_string(&self.function),
            self.naive_bytes,
            self.peak_live_bytes,
            buffers.join(", ")
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
