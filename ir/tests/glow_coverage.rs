//! Coverage of Glow's instruction set as a figure: the names of
//! `tools/ClassGen/InstrGen.cpp` (checked in as `data/glow-instructions.txt`)
//! against the opcode table. The count may only grow (`FLOOR`), and
//! docs/gir.md ("Glow instructions not in the table") lists exactly the
//! missing ones, so neither the figure nor the page can drift.

use glow_ir::Opcode;
use std::path::Path;

/// How many of Glow's instructions the table defines; raise it when adding one.
const FLOOR: usize = 152;

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Glow's instruction names, in InstrGen.cpp's order.
fn glow_names() -> Vec<String> {
    read("tests/data/glow-instructions.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.trim().to_string())
        .collect()
}

/// (defined, missing) among Glow's names: an opcode is Glow's name in lowercase.
fn split() -> (Vec<String>, Vec<String>) {
    glow_names()
        .into_iter()
        .partition(|n| Opcode::from_name(&n.to_lowercase()).is_some())
}

#[test]
fn the_list_is_glows_157_distinct_instructions() {
    let names = glow_names();
    assert_eq!(names.len(), 157);
    let mut sorted = names.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "a name is listed twice");
}

#[test]
fn coverage_does_not_fall() {
    let (defined, missing) = split();
    println!(
        "Glow instructions in the opcode table: {} of {} ({} missing)",
        defined.len(),
        defined.len() + missing.len(),
        missing.len()
    );
    assert!(
        defined.len() >= FLOOR,
        "only {} of Glow's instructions are in the table, fewer than the floor {FLOOR}; missing: {missing:?}",
        defined.len()
    );
}

#[test]
fn the_reference_lists_exactly_the_missing_instructions() {
    let doc = read("../docs/gir.md");
    let start = doc
        .find("### Glow instructions not in the table")
        .expect("docs/gir.md has the section");
    let section = &doc[start..];
    let end = section[4..].find("\n#").map_or(section.len(), |e| e + 4);
    // Each listed name is written `Name` in the first column of a table row.
    let mut listed: Vec<String> = section[..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .map(str::to_string)
        .collect();
    listed.sort();
    let (_, mut missing) = split();
    missing.sort();
    assert_eq!(
        listed, missing,
        "docs/gir.md's list of missing Glow instructions is out of date"
    );
}
