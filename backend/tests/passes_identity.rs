//! The infer pipeline never changes an output bit: every valid function in
//! the lit suite (`test/`) runs on the interpreter before and after
//! `--mode=infer` with the same seeded inputs, and the outputs must be
//! bit-identical. What is not compared is counted and printed: chunks that
//! do not parse or verify (the diagnostics tests' inputs), functions the
//! backend does not run (those holding an instruction without a kernel on
//! this backend, `Family::NoKernel`, apart: no engine runs them by design),
//! and functions whose buffers exceed `BUDGET` (the
//! emitter's 2 GiB limit tests, which took 8 GB and a minute here).

use glow_backend::run::{self, Comparison, RunError, RunOptions};
use glow_passes::cli::PipelineArgs;
use std::collections::BTreeMap;
use std::path::Path;

/// Bytes of weights and activations one function may need to be run here.
const BUDGET: u128 = 64 << 20;

/// The suite held 249 comparable functions when this floor was set.
const MIN_COMPARED: usize = 240;

/// Bytes of every weight and activation of `f`, saturating.
fn buffer_bytes(f: &glow_ir::Function) -> u128 {
    let bytes = |t: &glow_ir::Type| {
        t.dims
            .iter()
            .fold(t.elem.bytes() as u128, |a, &d| a.saturating_mul(d as u128))
    };
    let weights = f.weights.iter().map(|w| bytes(&w.ty));
    let activations = f.inst_ids().filter_map(|i| {
        let inst = f.inst(i);
        (inst.opcode == glow_ir::Opcode::AllocActivation)
            .then(|| inst.get(glow_ir::member::TY).map(bytes))
            .flatten()
    });
    weights
        .chain(activations)
        .fold(0u128, |a, b| a.saturating_add(b))
}

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
    let (mut compared, mut unparsed, mut unverified) = (0, 0, 0);
    let (mut unsupported, mut too_large) = (Vec::new(), Vec::new());
    let mut no_kernel = Vec::new();
    let mut failures = Vec::new();
    for file in &files {
        let text = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let short = file.strip_prefix(&root).unwrap_or(file).display();
        // Split-input files: each chunk is its own module.
        for chunk in String::from_utf8_lossy(&text).split("// -----") {
            let Ok(m) = glow_ir::parser::parse(chunk.as_bytes()) else {
                unparsed += 1;
                continue;
            };
            if !glow_ir::verifier::verify_module(&m).is_empty() {
                unverified += 1;
                continue;
            }
            for f in &m.functions {
                if buffer_bytes(f) > BUDGET {
                    too_large.push(format!("{short} `{}`", f.name));
                    continue;
                }
                let Ok(weights) = run::resolve_weights(f, &BTreeMap::new(), &opts) else {
                    unsupported.push(format!("{short} `{}`", f.name));
                    continue;
                };
                let before = match run::run(f, &weights, &opts) {
                    Ok(o) => o,
                    Err(RunError::Diagnostic(d)) => {
                        let by_design = f.inst_ids().any(|i| {
                            f.inst(i).opcode.info().family == glow_ir::opcode::Family::NoKernel
                        });
                        if by_design {
                            // Refused as designed: with the no-kernel diagnostic.
                            assert!(
                                d.message.contains(glow_backend::error::NO_KERNEL),
                                "{short} `{}`: {}",
                                f.name,
                                d.message
                            );
                            no_kernel.push(format!("{short} `{}`", f.name));
                        } else {
                            unsupported.push(format!("{short} `{}`", f.name));
                        }
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
    eprintln!(
        "compared {compared} functions of {} files; not compared: {unparsed} chunks that do not \
         parse and {unverified} that do not verify, {} functions the backend does not run ({}), \
         {} with an instruction that has no kernel on this backend ({}), \
         {} over {} MiB of buffers ({})",
        files.len(),
        unsupported.len(),
        unsupported.join(", "),
        no_kernel.len(),
        no_kernel.join(", "),
        too_large.len(),
        BUDGET >> 20,
        too_large.join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        compared >= MIN_COMPARED,
        "only {compared} functions compared (at least {MIN_COMPARED})"
    );
    // Nearly every runnable function: a run path that starts refusing shows here.
    assert!(
        unsupported.len() * 20 <= compared,
        "{} functions not run: {}",
        unsupported.len(),
        unsupported.join(", ")
    );
}
