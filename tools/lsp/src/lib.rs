//! `glow-lsp`, a language server for `.gir` (docs/lsp.md): the parser's and
//! verifier's diagnostics as you type (glow-opt's messages and spans, every
//! error), hover (a value's type, bytes, definition, live range, arena
//! offset and sharing; an opcode's or member's table entry), go to
//! definition, references, rename, document symbols, completion, code
//! actions (did-you-mean fixes, renumbering, CHECK lines) and formatting by
//! the printer, over incremental document sync.
//!
//! The transport is `lsp-server` over stdio; [`lit_test`] is the
//! `-lit-test` mode of mlir-lsp-server: JSON-RPC messages separated by
//! `// -----` lines, Content-Length computed, responses printed as JSON.

pub mod analysis;
pub mod document;
pub mod features;
pub mod hover;
pub mod server;

use lsp_server::{Connection, Message};
pub use server::Server;

/// Serves on stdin/stdout until `exit`; returns the exit code (0 after a
/// `shutdown`, 1 otherwise, as the protocol asks).
pub fn serve_stdio() -> u8 {
    let (conn, io) = Connection::stdio();
    let code = serve(&conn);
    drop(conn);
    if io.join().is_err() {
        return 1;
    }
    code
}

/// Serves over a connection until `exit` or the end of input.
pub fn serve(conn: &Connection) -> u8 {
    let mut server = Server::new();
    for msg in &conn.receiver {
        for out in server.handle(msg) {
            if conn.sender.send(out).is_err() {
                return 1;
            }
        }
        if server.exited {
            break;
        }
    }
    if server.clean_exit() {
        0
    } else {
        1
    }
}

/// The messages of a `-lit-test` input: text between `// -----` lines,
/// other `//` lines left out (they hold RUN and CHECK lines).
pub fn lit_messages(input: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in input.lines() {
        let t = line.trim();
        if t == "// -----" {
            out.push(std::mem::take(&mut current));
        } else if !t.starts_with("//") {
            current.push_str(line);
            current.push('\n');
        }
    }
    out.push(current);
    out.into_iter().filter(|m| !m.trim().is_empty()).collect()
}

/// A message as the lit mode prints it: a `Content-Length` header and the
/// JSON body with sorted keys, indented.
pub fn render(msg: &Message) -> String {
    let mut v = serde_json::to_value(msg).unwrap_or(serde_json::Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("jsonrpc".into(), "2.0".into());
    }
    let body = serde_json::to_string_pretty(&v).unwrap_or_default();
    format!("Content-Length: {}\n\n{body}\n", body.len())
}

/// Runs the server over the messages of `input`; returns what it sends and
/// the exit code (1 when a message is not JSON-RPC).
pub fn lit_test(input: &str) -> (String, u8) {
    let mut server = Server::new();
    let mut out = String::new();
    let mut code = 0;
    for (k, text) in lit_messages(input).iter().enumerate() {
        let msg: Message = match serde_json::from_str(text) {
            Ok(m) => m,
            Err(e) => {
                out.push_str(&format!(
                    "glow-lsp: error: message {} is not a JSON-RPC message: {e}\n",
                    k + 1
                ));
                code = 1;
                continue;
            }
        };
        for reply in server.handle(msg) {
            out.push_str(&render(&reply));
        }
        if server.exited {
            break;
        }
    }
    (out, code)
}
