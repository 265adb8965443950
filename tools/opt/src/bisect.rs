//! `glow-run --bisect=PIPELINE`: find the pass execution after which the
//! interpreter's outputs first differ from the input program's, then the
//! first instruction whose written buffer differs between the program
//! before that pass and after it (instructions matched by name and
//! operand), with the differing elements. A library function so that tests
//! (and downstream tools) can bisect their own passes.
//!
//! `glow-run --bisect-engines`: the first instruction whose written buffer
//! differs between the C engine and the interpreter on the same program.

use glow_backend::run::{self, Comparison, RunOptions, Written};
use glow_ir::printer::{print_function, PrintOptions};
use glow_ir::{ElemKind, Function, Module};
use glow_passes::{Instrumentation, PassManager, Pipeline};
use std::collections::BTreeMap;
use std::fmt::Write;

/// What the bisection found.
#[derive(Debug)]
pub struct Finding {
    /// 1-based index of the pass execution in the pipeline, and its name.
    pub step: usize,
    pub pass: &'static str,
    /// The first differing written buffer: before and after the pass.
    pub first: Option<(Written, Written)>,
    /// The instruction lines of `first`, before and after.
    pub lines: Option<(String, String)>,
}

fn interp() -> RunOptions {
    RunOptions::interpreter(1)
}

fn err(e: run::RunError) -> String {
    match e {
        run::RunError::Diagnostic(d) => d.message,
        run::RunError::Message(m) => m,
    }
}

/// Bisects `pipeline` on `f` with the weight contents `weights`; `None`
/// when no pass execution changes the outputs.
pub fn bisect(
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    pipeline: &Pipeline,
) -> Result<Option<Finding>, String> {
    let opts = interp();
    let base = run::run(f, weights, &opts).map_err(err)?;
    let mut before = f.clone();
    for (k, step) in pipeline.steps.iter().enumerate() {
        let mut m = Module {
            functions: vec![before.clone()],
        };
        let one = Pipeline {
            steps: vec![step.clone()],
        };
        PassManager::new(one, Instrumentation::default())
            .run(&mut m)
            .map_err(|e| {
                let msg = e
                    .diagnostics
                    .first()
                    .map_or(String::new(), |d| d.message.clone());
                format!("pass ({}) {} failed: {msg}", k + 1, step.pass.name)
            })?;
        let after = m.functions.remove(0);
        let out = run::run(&after, weights, &opts).map_err(err)?;
        if let Comparison::Different(_) = run::compare(&base, &out) {
            let (first, lines) = match first_difference(&before, &after, weights)? {
                Some((a, b)) => {
                    let lines = (line_at(&before, a.position), line_at(&after, b.position));
                    (Some((a, b)), Some(lines))
                }
                None => (None, None),
            };
            return Ok(Some(Finding {
                step: k + 1,
                pass: step.pass.name,
                first,
                lines,
            }));
        }
        before = after;
    }
    Ok(None)
}

/// The first buffer written by an instruction of `after` whose contents
/// differ from those the same-named instruction wrote in `before`.
fn first_difference(
    before: &Function,
    after: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
) -> Result<Option<(Written, Written)>, String> {
    let old = run::trace(before, weights).map_err(err)?;
    let new = run::trace(after, weights).map_err(err)?;
    let mut used = vec![false; old.len()];
    for w in new {
        let Some(k) = (0..old.len())
            .find(|&k| !used[k] && old[k].inst == w.inst && old[k].operand == w.operand)
        else {
            continue;
        };
        used[k] = true;
        if old[k].data != w.data {
            return Ok(Some((old[k].clone(), w)));
        }
    }
    Ok(None)
}

/// The printed instruction at `position`.
fn line_at(f: &Function, position: usize) -> String {
    let text = print_function(f, PrintOptions::default());
    text.lines()
        .skip_while(|l| !l.starts_with("code {"))
        .nth(position + 1)
        .unwrap_or("")
        .trim()
        .to_string()
}

/// The first buffer written differently by the C engine than by the
/// interpreter on `f` (interpreter's, C engine's), if any; `opts` gives
/// the compiler and the C engine's code generation.
pub fn bisect_engines(
    f: &Function,
    weights: &BTreeMap<String, Vec<u8>>,
    opts: &RunOptions,
) -> Result<Option<(Written, Written)>, String> {
    let reference = run::trace(f, weights).map_err(err)?;
    let c = run::trace_c(f, weights, opts).map_err(err)?;
    Ok(reference.into_iter().zip(c).find(|(a, b)| a.data != b.data))
}

/// The report `glow-run --bisect-engines` prints (`tool` names the tool).
pub fn engines_report(tool: &str, f: &Function, a: &Written, b: &Written) -> String {
    let mut s = format!(
        "{tool}: first instruction whose written buffer differs between the interpreter and the C engine: %{} ({} %{})\n",
        b.inst, b.operand, b.value
    );
    let _ = writeln!(s, "  {}", line_at(f, a.position));
    differing_elements(&mut s, a, b, ("interpreter", "C engine"));
    s
}

/// The report `glow-run --bisect` prints (`tool` names the tool).
pub fn report(tool: &str, finding: &Finding, pipeline: &str) -> String {
    let mut s = format!(
        "{tool}: outputs first differ after pass ({}) {} of `{pipeline}`\n",
        finding.step, finding.pass
    );
    let (Some((a, b)), Some((la, lb))) = (&finding.first, &finding.lines) else {
        let _ = writeln!(
            s,
            "{tool}: no instruction of both programs writes a different buffer"
        );
        return s;
    };
    let _ = writeln!(
        s,
        "{tool}: first instruction whose written buffer differs: %{} ({} %{})",
        b.inst, b.operand, b.value
    );
    let _ = writeln!(s, "  before: {la}");
    let _ = writeln!(s, "  after:  {lb}");
    differing_elements(&mut s, a, b, ("before", "after"));
    s
}

/// Up to four differing elements of `a` and `b` (labelled by `names`), then
/// how many differ.
fn differing_elements(s: &mut String, a: &Written, b: &Written, names: (&str, &str)) {
    let n = a.ty.size() as usize;
    let width = a.ty.elem.bytes() as usize;
    let differ: Vec<usize> = (0..n)
        .filter(|&i| {
            a.data.get(i * width..(i + 1) * width) != b.data.get(i * width..(i + 1) * width)
        })
        .collect();
    for &i in differ.iter().take(4) {
        let show = |d: &[u8]| -> String {
            match a.ty.elem {
                ElemKind::Float => {
                    let mut t = String::new();
                    let v = glow_backend::elem::read_f32(d, i);
                    glow_ir::types::format_float(f64::from(v), &mut t);
                    t
                }
                _ => d[i * width..(i + 1) * width]
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect(),
            }
        };
        let _ = writeln!(
            s,
            "  element {i}: {} {}, {} {}",
            show(&a.data),
            names.0,
            show(&b.data),
            names.1
        );
    }
    let _ = writeln!(s, "  {} of {n} elements differ", differ.len());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_passes::BUMP_SPLATS;
    use glow_passes::{PassOptions, Step};

    const SRC: &str = "function f
declare {
  %in = WeightVar float<4> mutable { Data: [1, 2, 3, 4] }
  %out = WeightVar float<4> mutable
}

code {
  0 %a = allocactivation { Ty: float<4> }
  1 %r = relu @out %a, @in %in
  2 %s = splat @out %out { Value: 1 }
  3 %sum = elementadd @out %out, @in %out, @in %a
  4 %da = deallocactivation @out %a
}
";

    #[test]
    fn names_the_pass_and_the_first_instruction_it_broke() {
        let m = glow_ir::parser::parse(SRC.as_bytes()).expect("parses");
        let f = &m.functions[0];
        let weights = run::resolve_weights(f, &BTreeMap::new(), &interp()).expect("weights");
        let registry = glow_passes::PassRegistry::builtin();
        let mut pipeline = Pipeline::parse(&registry, "dead-alloc,dse").expect("pipeline");
        pipeline.steps.insert(
            1,
            Step {
                pass: &BUMP_SPLATS,
                options: PassOptions::default(),
            },
        );
        let found = bisect(f, &weights, &pipeline)
            .expect("runs")
            .expect("a miscompile");
        assert_eq!((found.step, found.pass), (2, "test-bump-splats"));
        let text = report("glow-run", &found, "dead-alloc,test-bump-splats,dse");
        assert!(
            text.contains("first instruction whose written buffer differs: %s (Dest %out)"),
            "{text}"
        );
        assert!(
            text.contains("before: 2 %s = splat @out %out { Value: 1.0 }"),
            "{text}"
        );
        assert!(
            text.contains("after:  2 %s = splat @out %out { Value: 2.0 }"),
            "{text}"
        );
        assert!(text.contains("element 0: 1.0 before, 2.0 after"), "{text}");
        assert!(text.contains("4 of 4 elements differ"), "{text}");
    }

    #[test]
    fn a_pipeline_that_keeps_the_outputs_finds_nothing() {
        let m = glow_ir::parser::parse(SRC.as_bytes()).expect("parses");
        let f = &m.functions[0];
        let weights = run::resolve_weights(f, &BTreeMap::new(), &interp()).expect("weights");
        let registry = glow_passes::PassRegistry::builtin();
        let pipeline = Pipeline::for_mode(glow_passes::pipeline::Mode::Infer);
        let _ = &registry;
        assert!(bisect(f, &weights, &pipeline).expect("runs").is_none());
    }
}
