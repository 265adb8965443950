//! The fuzz targets as plain `fn(&[u8])` entry points: cargo-fuzz
//! (`fuzz/`) calls them under libFuzzer, and `tests/replay.rs` runs them
//! over their seed corpora and the regression files in every `cargo test`.
//! Each must return normally on any input; a panic is the finding.

use glow_ir::diag::render_all;
use glow_ir::printer::{print_module, PrintOptions};
use glow_ir::{parser, verifier, Diagnostic};

/// A fuzz target's entry point.
pub type Target = fn(&[u8]);

/// Every target, by the name its corpus directory and cargo-fuzz use.
pub const TARGETS: &[(&str, Target)] = &[
    ("gir", gir),
    ("onnx", onnx),
    ("filecheck", filecheck),
    ("lit", lit),
    ("trace", trace),
    ("smith", smith),
];

/// The `.gir` reader, verifier and printer: diagnostics render, and a
/// verified module prints to a fixed point that verifies again.
pub fn gir(data: &[u8]) {
    let m = match parser::parse(data) {
        Ok(m) => m,
        Err(d) => {
            render_all(&d, "fuzz.gir", data);
            return;
        }
    };
    let d = verifier::verify_module(&m);
    render_all(&d, "fuzz.gir", data);
    let once = print_module(&m, PrintOptions::default());
    print_module(&m, PrintOptions { annotate: true });
    if d.iter().any(Diagnostic::is_error) {
        return;
    }
    let again = parser::parse(once.as_bytes())
        .unwrap_or_else(|d| panic!("printed text does not parse: {d:?}\n{once}"));
    let d2 = verifier::verify_module(&again);
    assert!(
        !d2.iter().any(Diagnostic::is_error),
        "printed text does not verify: {d2:?}\n{once}"
    );
    assert_eq!(once, print_module(&again, PrintOptions::default()));
}

/// The importer's options under fuzzing: the constants may take 64 MiB,
/// enough for every seed, so the budget is what a huge constant meets
/// rather than the fuzzer's memory limit.
pub fn onnx_options() -> glow_import::Options {
    glow_import::Options {
        max_constant_bytes: Some(64 << 20),
        ..glow_import::Options::default()
    }
}

/// The ONNX reader and importer: the `.gir` of a successful import
/// verifies.
pub fn onnx(data: &[u8]) {
    let Ok(imported) = glow_import::import_model(data, &onnx_options()) else {
        return;
    };
    let text = imported.gir_text();
    let m = parser::parse(text.as_bytes())
        .unwrap_or_else(|d| panic!("imported text does not parse: {d:?}\n{text}"));
    let d = verifier::verify_module(&m);
    assert!(
        !d.iter().any(Diagnostic::is_error),
        "imported text does not verify: {}\n{text}",
        render_all(&d, "import.gir", text.as_bytes())
    );
}

/// Splits fuzzer bytes into two texts at the first NUL (the whole input
/// twice when there is none).
fn two_texts(data: &[u8]) -> (String, String) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (
            String::from_utf8_lossy(&data[..i]).into_owned(),
            String::from_utf8_lossy(&data[i + 1..]).into_owned(),
        ),
        None => {
            let t = String::from_utf8_lossy(data).into_owned();
            (t.clone(), t)
        }
    }
}

/// FileCheck's directive and pattern parser and matcher: check text, NUL,
/// input text.
pub fn filecheck(data: &[u8]) {
    let (check, input) = two_texts(data);
    let opts = glow_filecheck::Options::default();
    let out = glow_filecheck::check("check.txt", &check, "input", &input, &opts);
    assert!(
        matches!(out.exit_code, 0..=2),
        "exit code {}",
        out.exit_code
    );
}

/// The lit script reader (RUN, REQUIRES, UNSUPPORTED, XFAIL) and the
/// RUN-line shell parser, on the file and on each of its lines.
pub fn lit(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(script) = glow_lit::script::Script::parse(&text) {
        for r in &script.run_lines {
            let _ = glow_lit::shell::parse(&r.text);
        }
    }
    for line in text.lines().take(64) {
        let _ = glow_lit::shell::parse(line);
    }
}

/// The Glow allocation-trace reader; a trace that reads is planned, and
/// the plan checked.
pub fn trace(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(models) = glow_passes::planner::trace::parse(&text) else {
        return;
    };
    for m in models {
        // Planning is quadratic in the live buffers; keep executions short.
        if m.buffers.len() > 2000 || m.align == 0 {
            continue;
        }
        let opts = glow_passes::planner::PlanOptions {
            align: m.align,
            ..Default::default()
        };
        let plan = glow_passes::planner::plan(&m.buffers, &opts);
        if let Some(e) = glow_passes::planner::check(&m.buffers, &plan.offsets, m.align) {
            panic!("the planner's offsets overlap on trace `{}`: {e}", m.name);
        }
    }
}

/// The generator driven by fuzzer bytes: the program verifies, and the
/// interpreter-side oracle (every pass, both pipelines) passes.
pub fn smith(data: &[u8]) {
    let p = crate::gen::generate_from(&mut crate::rng::Rng::from_bytes(data));
    let cfg = crate::oracle::Config {
        c_engine: false,
        sequences: 1,
        ..crate::oracle::Config::default()
    };
    if let Err(e) = crate::oracle::check_one(&p.text, &cfg) {
        panic!("{e}\n{}", p.text);
    }
}
