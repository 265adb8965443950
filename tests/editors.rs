//! The editor grammars under `editors/` know every opcode of the table, so
//! a new opcode that is not highlighted fails here.

use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).expect("readable")
}

/// The opcode names listed in the grammar's opcode alternation: the text
/// between `start` and the next `end`, split on `|` or whitespace.
fn listed(text: &str, start: &str, end: &str) -> Vec<String> {
    let from = text.find(start).expect("the grammar has an opcode list") + start.len();
    let to = from + text[from..].find(end).expect("the opcode list ends");
    text[from..to]
        .split(|c: char| c == '|' || c.is_whitespace())
        // Vim continues a long line with a leading `\`.
        .filter(|w| !w.is_empty() && *w != "\\")
        .map(str::to_string)
        .collect()
}

/// The alternation of the TextMate rule scoped `keyword.operator.opcode.gir`.
fn textmate_opcodes(text: &str) -> Vec<String> {
    let line = text
        .lines()
        .find(|l| l.contains("\"keyword.operator.opcode.gir\""))
        .expect("the grammar has an opcode rule");
    listed(line, "(", ")")
}

#[test]
fn both_grammars_list_exactly_the_opcodes_of_the_table() {
    let mut want: Vec<String> = glow_ir::Opcode::ALL
        .iter()
        .map(|o| o.info().name.to_string())
        .collect();
    want.sort();
    let tm = read("editors/vscode-gir/syntaxes/gir.tmLanguage.json");
    let vim = read("editors/vim/syntax/gir.vim");
    for (file, mut got) in [
        ("gir.tmLanguage.json", textmate_opcodes(&tm)),
        ("gir.vim", listed(&vim, "syn keyword girOpcode", "\n\n")),
    ] {
        got.sort();
        let missing: Vec<&String> = want.iter().filter(|o| !got.contains(o)).collect();
        let extra: Vec<&String> = got.iter().filter(|o| !want.contains(o)).collect();
        assert!(
            missing.is_empty() && extra.is_empty(),
            "{file}: missing opcodes {missing:?}, unknown ones {extra:?}\nthe table: {}",
            want.join(" ")
        );
    }
}

#[test]
fn the_textmate_grammar_is_json_with_the_scope_vscode_loads() {
    let pkg = read("editors/vscode-gir/package.json");
    let tm = read("editors/vscode-gir/syntaxes/gir.tmLanguage.json");
    assert!(pkg.contains("\"scopeName\": \"source.gir\""));
    assert!(pkg.contains("\"path\": \"./syntaxes/gir.tmLanguage.json\""));
    assert!(tm.contains("\"scopeName\": \"source.gir\""));
    // Balanced braces and brackets outside strings: a cheap JSON sanity check.
    let (mut depth, mut in_str, mut esc) = (0i32, false, false);
    for c in tm.chars() {
        match (in_str, esc, c) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (true, false, '"') => in_str = false,
            (false, _, '"') => in_str = true,
            (false, _, '{' | '[') => depth += 1,
            (false, _, '}' | ']') => depth -= 1,
            _ => {}
        }
        assert!(depth >= 0);
    }
    assert_eq!((depth, in_str), (0, false));
}

/// Strings highlight everywhere (Vim's `girString` is not `contained`),
/// and both grammars know Glow's `;` comments.
#[test]
fn strings_are_top_level_and_semicolon_comments_are_known() {
    let vim = read("editors/vim/syntax/gir.vim");
    let string = vim
        .lines()
        .find(|l| l.starts_with("syn region girString"))
        .expect("gir.vim defines girString");
    assert!(
        !string.contains("contained"),
        "girString is contained in no group, so it must not be `contained`: {string}"
    );
    assert!(
        vim.contains("syn match girComment \";.*$\""),
        "gir.vim: `;` comments"
    );
    let tm = read("editors/vscode-gir/syntaxes/gir.tmLanguage.json");
    assert!(
        tm.contains("\"begin\": \"//|;\""),
        "gir.tmLanguage.json: `;` comments"
    );
}

/// What Vim highlights, at positions of a line with `//` inside a string and
/// a line with a `;` comment.
#[test]
#[ignore = "needs vim on PATH: cargo test --test editors -- --ignored"]
fn vim_highlights_strings_and_both_comment_kinds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gir = dir.path().join("hl.gir");
    std::fs::write(
        &gir,
        "  0 %p = debugprint @in %x { Format: \"a//b\", FileName: \"\" } // c\n  \
         %w = WeightVar float<2> const ; size = 8\n",
    )
    .expect("writes");
    let out = dir.path().join("probe.out");
    let syntax = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/vim/syntax/gir.vim");
    let probe = format!(
        "source {}\nlet r = []\nfor [l, c] in [[1, 38], [1, 41], [1, 62], [2, 35]]\n  \
         call add(r, synIDattr(synID(l, c, 1), 'name'))\nendfor\n\
         call writefile(r, '{}')\nqa!\n",
        syntax.display(),
        out.display()
    );
    let script = dir.path().join("probe.vim");
    std::fs::write(&script, probe).expect("writes");
    let status = std::process::Command::new("vim")
        .args(["-Nu", "NONE", "-i", "NONE", "-es", "-S"])
        .arg(&script)
        .arg(&gir)
        .status()
        .expect("vim runs");
    assert!(status.success());
    let got = std::fs::read_to_string(&out).expect("vim wrote the probe");
    assert_eq!(
        got.lines().collect::<Vec<_>>(),
        ["girString", "girString", "girComment", "girComment"]
    );
}

/// The VS Code extension starts glow-lsp: package.json is JSON naming the
/// entry point, the activation on `.gir` files, the language client and a
/// server path setting whose default is the binary's name; extension.js
/// reads that setting.
#[test]
fn the_vscode_extension_starts_glow_lsp() {
    let pkg: serde_json::Value = serde_json::from_str(&read("editors/vscode-gir/package.json"))
        .expect("package.json is JSON");
    assert_eq!(pkg["main"], "./extension.js");
    assert_eq!(pkg["activationEvents"][0], "onLanguage:gir");
    assert!(pkg["dependencies"]["vscode-languageclient"].is_string());
    let setting = &pkg["contributes"]["configuration"]["properties"]["gir.server.path"];
    assert_eq!(setting["default"], "glow-lsp");
    let js = read("editors/vscode-gir/extension.js");
    assert!(
        js.contains("config.get(\"server.path\", \"glow-lsp\")"),
        "{js}"
    );
    assert!(js.contains("vscode-languageclient/node"), "{js}");
    assert!(js.contains("language: \"gir\""), "{js}");
}
