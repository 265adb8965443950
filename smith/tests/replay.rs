//! Every fuzz target over its seed corpus (the files of `test/` and
//! `testdata/`) and over its regression inputs in `fuzz/regressions/TARGET/`
//! (each crash a fuzzer found, kept as a file), so `cargo test` replays
//! them all.

use glow_smith::targets;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files(dir: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if keep(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn ext(e: &'static str) -> impl Fn(&Path) -> bool {
    move |p: &Path| p.extension().is_some_and(|x| x == e)
}

/// The seed corpus of a target (also what `scripts/fuzz.sh` copies in).
fn corpus(target: &str) -> Vec<PathBuf> {
    let r = root();
    match target {
        "gir" => files(&r.join("test"), &ext("gir")),
        "onnx" => files(&r.join("testdata/onnx"), &ext("onnx")),
        "filecheck" => files(&r.join("test/filecheck"), &|_| true),
        "lit" => files(&r.join("test"), &|_| true),
        "trace" => files(&r.join("testdata/glow-traces"), &ext("txt")),
        _ => Vec::new(),
    }
}

fn replay(target: &str, min_seeds: usize) {
    let f = targets::TARGETS
        .iter()
        .find(|t| t.0 == target)
        .map(|t| t.1)
        .unwrap();
    let seeds = corpus(target);
    assert!(
        seeds.len() >= min_seeds,
        "{target}: only {} seed files",
        seeds.len()
    );
    let regressions = files(&root().join("fuzz/regressions").join(target), &|_| true);
    for p in seeds.iter().chain(&regressions) {
        let data = std::fs::read(p).unwrap();
        let r = std::panic::catch_unwind(|| f(&data));
        assert!(r.is_ok(), "{target}: {} panics", p.display());
    }
}

#[test]
fn gir_reader_verifier_printer() {
    replay("gir", 100);
}

#[test]
fn onnx_reader_importer() {
    replay("onnx", 100);
}

#[test]
fn the_onnx_target_holds_constants_to_its_budget() {
    // A fuzzed ConstantOfShape of 2^28 floats feeding a Reshape: under the
    // target's budget it is refused before anything is allocated.
    let p = root().join("fuzz/regressions/onnx/oom-constantofshape-reshape");
    let data = std::fs::read(p).unwrap();
    let e = glow_import::import_model(&data, &targets::onnx_options())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("(ConstantOfShape): constant") && e.contains("limit of 67108864 bytes"),
        "{e}"
    );
}

#[test]
fn filecheck_parser() {
    replay("filecheck", 20);
}

#[test]
fn lit_script_and_shell_parser() {
    replay("lit", 100);
}

#[test]
fn glow_trace_reader() {
    replay("trace", 1);
}

#[test]
fn smith_from_bytes() {
    replay("smith", 0);
    for i in 0u32..20 {
        targets::smith(&i.to_le_bytes());
    }
}

#[test]
fn every_target_is_replayed() {
    let names: Vec<&str> = targets::TARGETS.iter().map(|t| t.0).collect();
    assert_eq!(names, ["gir", "onnx", "filecheck", "lit", "trace", "smith"]);
}
