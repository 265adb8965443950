//! The infer pipeline never changes an output bit: every valid function in
//! the lit suite (`test/`) runs on the interpreter before and after
//! `--mode=infer` with the same seeded inputs, and the outputs must be
//! bit-identical. Functions the backend does not support are counted, not run.

use glow_backend::run::{self, Comparison, RunError, RunOptions};
use glow_passes::cli::PipelineArgs;
use std::collections::BTreeMap;
use std::path::Path;

fn gir_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            gir_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "gir") {
            out.push(p);
        }
    }
}

#[test]
fn infer_pipeline_keeps_every_output_bit() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../test");
    let mut files = Vec::new();
    gir_files(&root, &mut files);
    let pipeline = PipelineArgs {
        mode: Some("infer".into()),
        ..PipelineArgs::default()
    }
    .pipeline(&glow_passes::PassRegistry::builtin())
    .expect("the infer pipeline exists");
    let opts = RunOptions::interpreter(3);
    let (mut compared, mut unsupported) = (0, 0);
    let mut failures = Vec::new();
    for file in &files {
        let Ok(text) = std::fs::read(file) else {
            continue;
        };
        // Split-input files: each chunk is its own module.
        for chunk in String::from_utf8_lossy(&text).split("// -----") {
            let Ok(m) = glow_ir::parser::parse(chunk.as_bytes()) else {
                continue;
            };
            if !glow_ir::verifier::verify_module(&m).is_empty() {
                continue;
            }
            for f in &m.functions {
                let Ok(weights) = run::resolve_weights(f, &BTreeMap::new(), &opts) else {
                    unsupported += 1;
                    continue;
                };
                let before = match run::run(f, &weights, &opts) {
                    Ok(o) => o,
                    Err(RunError::Diagnostic(_)) => {
                        unsupported += 1;
                        continue;
                    }
                    Err(RunError::Message(m)) => panic!("{}: {m}", file.display()),
                };
                let mut after = glow_ir::Module {
                    functions: vec![f.clone()],
                };
                if let Err(d) = glow_passes::run_pipeline(&mut after, &pipeline) {
                    failures.push(format!(
                        "{} `{}`: pipeline failed: {:?}",
                        file.display(),
                        f.name,
                        d
                    ));
                    continue;
                }
                let after_out = match run::run(&after.functions[0], &weights, &opts) {
                    Ok(o) => o,
                    Err(e) => {
                        failures.push(format!(
                            "{} `{}`: after the pipeline: {e:?}",
                            file.display(),
                            f.name
                        ));
                        continue;
                    }
                };
                compared += 1;
                if let Comparison::Different(p) = run::compare(&before, &after_out) {
                    failures.push(format!("{} `{}`: {}", file.display(), f.name, p.join("; ")));
                }
            }
        }
    }
    eprintln!("compared {compared} functions, {unsupported} not supported by the backend");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(compared > 10, "only {compared} functions compared");
}
