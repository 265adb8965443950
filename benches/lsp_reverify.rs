//! glow-lsp's re-verify latency (issue 24's 50 ms goal): a 10,000-instruction
//! file is opened, then edited one word at a time through incremental
//! `didChange` notifications; each is timed from the notification to the
//! published diagnostics (apply the edit, parse, verify, index the tokens,
//! convert the diagnostics). Prints the median, best and worst of each kind
//! of edit. Run: `cargo bench --bench lsp_reverify`.

use glow_lsp::Server;
use lsp_server::{Message, Notification};
use serde_json::json;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// `n` instructions: blocks of alloc, add, relu, copy-out, dealloc.
fn program(n: usize) -> String {
    let mut s = String::from("function bench\ndeclare {\n");
    s.push_str("  %a = WeightVar float<16 x 16> mutable\n  %b = WeightVar float<16 x 16> const\n");
    s.push_str("  %out = WeightVar float<16 x 16> mutable\n}\n\ncode {\n");
    for b in 0..n / 5 {
        let k = 5 * b;
        let _ = writeln!(s, "  {k} %t{b} = allocactivation {{ Ty: float<16 x 16> }}");
        let _ = writeln!(
            s,
            "  {} %add{b} = elementadd @out %t{b}, @in %a, @in %b",
            k + 1
        );
        let _ = writeln!(s, "  {} %relu{b} = relu @out %t{b}, @in %t{b}", k + 2);
        let _ = writeln!(s, "  {} %cp{b} = copy @out %out, @in %t{b}", k + 3);
        let _ = writeln!(s, "  {} %d{b} = deallocactivation @out %t{b}", k + 4);
    }
    s.push_str("}\n");
    s
}

fn note(method: &str, params: serde_json::Value) -> Message {
    Message::Notification(Notification::new(method.into(), params))
}

/// A `didChange` replacing `len` UTF-16 units at `line:col` by `text`.
fn change(version: i32, line: u32, col: u32, len: u32, text: &str) -> Message {
    note(
        "textDocument/didChange",
        json!({
            "textDocument": {"uri": "file:///bench.gir", "version": version},
            "contentChanges": [{
                "range": {"start": {"line": line, "character": col},
                          "end": {"line": line, "character": col + len}},
                "text": text
            }]
        }),
    )
}

fn stats(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{name:<44} median {:7.2} ms   best {:7.2} ms   worst {:7.2} ms   ({} edits)",
        ms(times[times.len() / 2]),
        ms(times[0]),
        ms(times[times.len() - 1]),
        times.len()
    );
}

fn main() {
    let n = 10_000;
    let text = program(n);
    let mut server = Server::new();
    server.handle(note(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": "file:///bench.gir", "languageId": "gir", "version": 1, "text": text}}),
    ));
    // Line of the middle block's `elementadd` (7 header lines, 5 per block).
    let block = n / 10;
    let line = (7 + 5 * block + 1) as u32;
    let col = format!("  {} %add{block} = ", 5 * block + 1).len() as u32;
    let rounds = 40;
    let mut valid = Vec::new();
    let mut broken = Vec::new();
    let mut version = 1;
    for r in 0..rounds {
        // elementadd <-> elementmul: the file stays valid, so it is parsed and verified.
        let (from, to) = if r % 2 == 0 {
            ("elementadd", "elementmul")
        } else {
            ("elementmul", "elementadd")
        };
        version += 1;
        let t = Instant::now();
        let out = server.handle(change(version, line, col, from.len() as u32, to));
        valid.push(t.elapsed());
        assert_eq!(out.len(), 1, "one publishDiagnostics");
    }
    for r in 0..rounds {
        // relu -> relux and back: an unknown opcode every other edit (the
        // fast parser gives up and the grammar reparses the file).
        let rline = line + 1;
        let rcol = format!("  {} %relu{block} = ", 5 * block + 2).len() as u32;
        let (len, to) = if r % 2 == 0 {
            (4, "relux")
        } else {
            (5, "relu")
        };
        version += 1;
        let t = Instant::now();
        server.handle(change(version, rline, rcol, len, to));
        broken.push(t.elapsed());
    }
    println!(
        "glow-lsp re-verify latency, {n} instructions ({} bytes)",
        program(n).len()
    );
    stats("valid edit (parse + verify + publish)", valid);
    stats("edit toggling an unknown opcode", broken);
}
