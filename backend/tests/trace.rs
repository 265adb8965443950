//! The C engine's trace (`run::trace_c`, behind `glow-run --bisect-engines`)
//! records the same slots as the interpreter's, in the same order, with the
//! same bytes, across body chunks and threads.

use glow_backend::run::{self, Engine, RunOptions};
use glow_backend::CcOptions;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Over 64 computing instructions (so the body is split into chunks), with
/// a view, an activation written in place and a mutable output.
fn program() -> String {
    let mut s = String::from(
        "function f\ndeclare {\n  %in = WeightVar float<2 x 3> mutable\n  %out = WeightVar float<2 x 3> mutable\n}\ncode {\n  %a = allocactivation { Ty: float<2 x 3> }\n  %s = splat @out %a { Value: 0.25 }\n",
    );
    for k in 0..70 {
        let _ = writeln!(s, "  %add{k} = elementadd @out %a, @in %a, @in %in");
    }
    s.push_str("  %v = tensorview @in %a { Ty: float<6>, Offsets: [0, 0] }\n");
    s.push_str("  %r = relu @out %out, @in %a\n  %d = deallocactivation @out %a\n}\n");
    s
}

#[test]
#[cfg_attr(not(has_cc), ignore = "no `cc` on PATH")]
fn c_trace_equals_interpreter_trace() {
    let text = program();
    let m = glow_ir::parser::parse(text.as_bytes()).unwrap_or_else(|d| panic!("{d:?}"));
    assert!(glow_ir::verifier::verify_module(&m).is_empty());
    let f = &m.functions[0];
    for threads in [1, 2] {
        let opts = RunOptions {
            engine: Engine::C,
            cc: CcOptions::new(Some("cc"), "-O1"),
            seed: 3,
            strict_constants: false,
            repeat: None,
            build_dir: None,
            codegen: glow_backend::CodegenOptions {
                threads,
                ..Default::default()
            },
        };
        let weights = run::resolve_weights(f, &BTreeMap::new(), &opts).expect("weights");
        let reference = run::trace(f, &weights).expect("interpreter trace");
        let c = run::trace_c(f, &weights, &opts).expect("C trace");
        // splat, 70 adds and the relu: one slot each; the view writes nothing.
        assert_eq!(reference.len(), 72);
        assert_eq!(reference, c, "threads {threads}");
        assert_ne!(reference[1].data, reference[2].data, "the adds change %a");
    }
}
