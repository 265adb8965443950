//! glow-lsp against the tools it mirrors: its diagnostics are glow-opt's
//! (message, line and column) on every `.gir` in `test/`; its "insert CHECK
//! lines" action writes what glow-update-checks writes; and the stdio
//! transport answers a real framed session with the protocol's exit codes.

use glow_lsp::analysis::Analysis;
use glow_lsp::document::Document;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const OPT: &str = env!("CARGO_BIN_EXE_glow-opt");
const LSP: &str = env!("CARGO_BIN_EXE_glow-lsp");
const UPDATE: &str = env!("CARGO_BIN_EXE_glow-update-checks");

fn gir_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("test");
    let mut out: Vec<PathBuf> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "gir"))
        .collect();
    out.sort();
    out
}

/// `L:C: severity: message` of each error header glow-opt prints.
fn opt_headers(path: &Path, split: bool) -> Vec<String> {
    let mut cmd = Command::new(OPT);
    cmd.arg(path).stdout(Stdio::null());
    if split {
        cmd.arg("--split-input-file");
    }
    let out = cmd.output().expect("glow-opt runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let prefix = format!("{}:", path.display());
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(str::to_string)
        .collect()
}

/// The same headers from the server's LSP diagnostics, with the protocol's
/// UTF-16 positions turned back into glow-opt's byte columns.
fn lsp_headers(text: &str) -> Vec<String> {
    let doc = Document::new(text.to_string(), 0);
    let an = Analysis::new(text);
    let uri: lsp_types::Uri = "file:///t.gir".parse().expect("uri");
    glow_lsp::features::diagnostics(&doc, &an, &uri)
        .iter()
        .map(|d| {
            let offset = doc.offset(d.range.start);
            let (line, col) = glow_ir::span::line_col(text.as_bytes(), offset);
            let severity = match d.severity {
                Some(lsp_types::DiagnosticSeverity::WARNING) => "warning",
                Some(lsp_types::DiagnosticSeverity::INFORMATION) => "note",
                _ => "error",
            };
            let message = d.message.split("\nnote: ").next().unwrap_or("");
            format!("{line}:{col}: {severity}: {message}")
        })
        .collect()
}

#[test]
fn diagnostics_are_glow_opts_on_every_test_file() {
    let mut compared = 0;
    let mut with_errors = 0;
    for path in gir_files() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let split = text.lines().any(|l| l.trim() == "// -----");
        let opt = opt_headers(&path, split);
        let lsp = lsp_headers(&text);
        assert_eq!(lsp, opt, "{}", path.display());
        compared += 1;
        with_errors += (!opt.is_empty()) as usize;
    }
    assert!(
        compared > 100 && with_errors > 20,
        "{compared} files, {with_errors} with errors"
    );
}

#[test]
fn insert_checks_action_writes_what_glow_update_checks_writes() {
    let body = "function f\ndeclare {\n  %in = WeightVar float<4> mutable\n  %out = WeightVar float<4> mutable\n}\n\ncode {\n  7 %a = allocactivation { Ty: float<4> }\n  %r = relu @out %a, @in %in\n  2 %c = copy @out %out, @in %a\n  3 %d = deallocactivation @out %a\n}\n";
    let text = format!("// RUN: glow-opt %s | glow-filecheck %s\n{body}");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("lsp-update-checks");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("t.gir");
    std::fs::write(&file, &text).expect("write");
    let out = Command::new(UPDATE)
        .arg(&file)
        .args(["--tool", &format!("glow-opt={OPT}")])
        .output()
        .expect("glow-update-checks runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let updated = std::fs::read_to_string(&file).expect("read");
    let expected: Vec<&str> = updated
        .lines()
        .filter(|l| l.starts_with("// CHECK"))
        .collect();
    let doc = Document::new(text.clone(), 0);
    let an = Analysis::new(&text);
    let uri: lsp_types::Uri = "file:///t.gir".parse().expect("uri");
    let at = lsp_types::Position::new(8, 4);
    let actions = glow_lsp::features::code_actions(&doc, &an, &uri, lsp_types::Range::new(at, at));
    let inserted = actions
        .iter()
        .find_map(|a| match a {
            lsp_types::CodeActionOrCommand::CodeAction(a)
                if a.title.starts_with("Insert CHECK") =>
            {
                let edits = a.edit.as_ref()?.changes.as_ref()?.get(&uri)?;
                Some(edits[0].new_text.clone())
            }
            _ => None,
        })
        .expect("an insert-checks action");
    let got: Vec<&str> = inserted.lines().collect();
    assert_eq!(got, expected);
}

/// Frames a message as the protocol does.
fn frame(json: &str) -> String {
    format!("Content-Length: {}\r\n\r\n{json}", json.len())
}

#[test]
fn stdio_session_answers_and_exits_cleanly() {
    let mut child = Command::new(LSP)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("glow-lsp starts");
    let session = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"uri":"file:///s.gir","languageId":"gir","version":1,"text":"function f\ndeclare {\n}\n\ncode {\n  0 %a = nope\n}\n"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#,
        r#"{"jsonrpc":"2.0","method":"exit"}"#,
    ];
    let input: String = session.iter().map(|m| frame(m)).collect();
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("glow-lsp exits");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("Content-Length: "), "{stdout}");
    assert!(stdout.contains(r#""name":"glow-lsp""#), "{stdout}");
    assert!(stdout.contains("unknown opcode `nope`"), "{stdout}");
    assert!(stdout.contains(r#""id":2,"result":null"#), "{stdout}");
    // `exit` without `shutdown` is exit code 1, as the protocol says.
    let mut child = Command::new(LSP)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("glow-lsp starts");
    let input = frame(session[0]) + &frame(session[4]);
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write");
    assert_eq!(child.wait().expect("exits").code(), Some(1));
}

#[test]
fn lit_mode_rejects_a_message_that_is_not_json_rpc() {
    let mut child = Command::new(LSP)
        .arg("-lit-test")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("glow-lsp starts");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(
            b"{\"jsonrpc\": 2\n// -----\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"shutdown\"}\n",
        )
        .expect("write");
    let out = child.wait_with_output().expect("exits");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("glow-lsp: error: message 1 is not a JSON-RPC message"),
        "{stdout}"
    );
    assert!(stdout.contains("\"id\": 1,"), "{stdout}");
}
