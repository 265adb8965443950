//! The new-opcode recipe (docs/architecture.md) is checked, not trusted: a
//! table entry without its docs, its example, its engines case or its lit
//! test fails here, naming the place it lacks. The editor grammars and
//! glow-smith have their own checks (`tests/editors.rs`, `smith/tests/oracle.rs`).

use glow_ir::opcode::Family;
use glow_ir::Opcode;
use regex::Regex;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// The text of every file under `rel`.
fn tree_text(rel: &str) -> String {
    let mut out = String::new();
    for e in walkdir::WalkDir::new(root().join(rel)) {
        let e = e.expect("the tree is readable");
        if e.file_type().is_file() {
            out.push_str(&std::fs::read_to_string(e.path()).unwrap_or_default());
            out.push('\n');
        }
    }
    out
}

fn names_word(text: &str, word: &str) -> bool {
    Regex::new(&format!(r"\b{}\b", regex::escape(word)))
        .expect("a valid pattern")
        .is_match(text)
}

#[test]
fn every_opcode_has_each_place_of_the_recipe() {
    let gir = read("docs/gir.md");
    let engines = read("backend/tests/engines.rs");
    let lit = tree_text("test/backend") + &tree_text("test/passes");
    let mut missing = Vec::new();
    for &op in Opcode::ALL {
        let name = op.name();
        let mut lacks = Vec::new();
        if !gir.contains(&format!("`{name}`")) {
            lacks.push("an entry in docs/gir.md");
        }
        if !Path::new(&root().join(format!("test/ir/opcodes/{name}.gir"))).exists() {
            lacks.push("test/ir/opcodes/NAME.gir");
        }
        // Lifetime markers and the no-kernel instructions have nothing to
        // compare (the lit test shows the no-kernel diagnostic).
        let kernel = !matches!(op.info().family, Family::Memory | Family::NoKernel);
        if kernel && !names_word(&engines, name) {
            lacks.push("a case in backend/tests/engines.rs");
        }
        if !names_word(&lit, name) {
            lacks.push("a lit test under test/backend/ or test/passes/");
        }
        if !lacks.is_empty() {
            missing.push(format!("`{name}` lacks {}", lacks.join(", ")));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
