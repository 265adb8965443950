//! The pass manager: runs a pipeline over every function of a module with
//! the debugging hooks users of LLVM's opt expect. Everything it reports goes
//! to its `log` (stderr in the tools); the IR itself is never touched by it.

use crate::analysis::memory::{memory_report_aligned, MemoryReport};
use crate::counter::DebugCounters;
use crate::pass::{PassContext, Stats};
use crate::pipeline::Pipeline;
use glow_ir::printer::{print_function, print_module, PrintOptions};
use glow_ir::{Diagnostic, Function, Module};
use std::fmt::Write;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemReport {
    Text,
    Json,
}

/// Which hooks run around the passes.
#[derive(Clone, Debug)]
pub struct Instrumentation {
    pub verify_each: bool,
    pub print_before: Vec<String>,
    pub print_after: Vec<String>,
    pub print_before_all: bool,
    pub print_after_all: bool,
    pub print_changed: bool,
    pub stats: bool,
    pub time_passes: bool,
    pub bisect_limit: Option<usize>,
    pub debug_only: Vec<String>,
    pub crash_reproducer: Option<std::path::PathBuf>,
    /// Input flags a replay needs (e.g. `--no-verify`), recorded in reproducers.
    pub reproducer_flags: Vec<String>,
    /// Write a reproducer to the temp directory on an internal failure even
    /// without `crash_reproducer` (off while replaying one, so a replay does
    /// not leave another file behind).
    pub auto_reproducer: bool,
    /// The tool a reproducer note tells the user to replay with: a
    /// downstream opt tool knows passes `glow-opt` does not.
    pub tool: &'static str,
    pub mem_report: Option<MemReport>,
    /// Where `--mem-timeline` writes the SVG of the arena after the pipeline.
    pub mem_timeline: Option<std::path::PathBuf>,
    /// `--ir-dump-dir`: one numbered file per function input and per pass
    /// execution, with the function after it.
    pub ir_dump_dir: Option<std::path::PathBuf>,
    /// `--debug-counter`: which decisions the passes may take.
    pub debug_counters: DebugCounters,
    /// `--print-debug-counter`: report every counter after the pipeline.
    pub print_debug_counter: bool,
}

impl Default for Instrumentation {
    fn default() -> Self {
        Instrumentation {
            verify_each: true,
            print_before: Vec::new(),
            print_after: Vec::new(),
            print_before_all: false,
            print_after_all: false,
            print_changed: false,
            stats: false,
            time_passes: false,
            bisect_limit: None,
            debug_only: Vec::new(),
            crash_reproducer: None,
            reproducer_flags: Vec::new(),
            auto_reproducer: true,
            tool: "glow-opt",
            mem_report: None,
            mem_timeline: None,
            ir_dump_dir: None,
            debug_counters: DebugCounters::default(),
            print_debug_counter: false,
        }
    }
}

/// A failed pipeline: the diagnostics to render, and where a reproducer
/// was written if one was.
#[derive(Debug)]
pub struct RunFailure {
    pub diagnostics: Vec<Diagnostic>,
    pub reproducer: Option<std::path::PathBuf>,
    /// A crash or a pass breaking the IR: a bug in a pass, not in the
    /// input, so a reproducer is written even when none was asked for.
    pub internal: bool,
}

/// Runs one pipeline.
pub struct PassManager {
    pipeline: Pipeline,
    inst: Instrumentation,
    /// Everything the hooks print, in order.
    pub log: String,
    pub stats: Stats,
    times: Vec<(&'static str, Duration)>,
    executions: usize,
    /// Files written to `ir_dump_dir` so far (their number prefix).
    dumps: usize,
}

impl PassManager {
    pub fn new(pipeline: Pipeline, inst: Instrumentation) -> PassManager {
        PassManager {
            pipeline,
            inst,
            log: String::new(),
            stats: Stats::default(),
            times: Vec::new(),
            executions: 0,
            dumps: 0,
        }
    }

    /// Runs the pipeline on every function, in order.
    pub fn run(&mut self, module: &mut Module) -> Result<(), RunFailure> {
        // Reports plan the arena, so only compute them when asked for.
        let before: Vec<MemoryReport> = match self.inst.mem_report {
            Some(_) => module.functions.iter().map(|f| self.report(f)).collect(),
            None => Vec::new(),
        };
        if self.inst.print_changed {
            let _ = write!(
                self.log,
                "// *** IR Dump At Start ***\n{}",
                print_module(module, PrintOptions::default())
            );
        }
        // Kept for a reproducer; an empty pipeline cannot fail, so skip it.
        let input = if self.pipeline.steps.is_empty() {
            String::new()
        } else {
            print_module(module, PrintOptions::default())
        };
        for f in &mut module.functions {
            if let Err(mut failure) = self.run_function(f) {
                failure.reproducer = self.write_reproducer(&input, failure.internal);
                if let Some(path) = &failure.reproducer {
                    failure.diagnostics.push(Diagnostic {
                        severity: glow_ir::Severity::Note,
                        ..Diagnostic::error(format!(
                            "a reproducer was written to {}; replay it with `{} --run-reproducer {}`",
                            path.display(),
                            self.inst.tool,
                            path.display()
                        ))
                    });
                }
                return Err(failure);
            }
        }
        self.finish(&before, module);
        self.write_timeline(module)
    }

    /// The memory report at the alignment of the pipeline's last
    /// `plan-memory` step (64 by default).
    fn report(&self, f: &Function) -> MemoryReport {
        let align = self
            .pipeline
            .steps
            .iter()
            .rev()
            .find(|s| s.pass.is(&crate::plan_memory::INFO))
            .and_then(|s| s.options.get_u64("align", 0).ok())
            .filter(|&a| a > 0)
            .unwrap_or(glow_ir::ALIGN);
        memory_report_aligned(f, align)
    }

    /// `--mem-timeline`: one SVG panel per function, after the pipeline.
    fn write_timeline(&self, module: &Module) -> Result<(), RunFailure> {
        let Some(path) = &self.inst.mem_timeline else {
            return Ok(());
        };
        let reports: Vec<MemoryReport> = module.functions.iter().map(|f| self.report(f)).collect();
        glow_ir::output::write_file(path, crate::planner::timeline::svg(&reports).as_bytes())
            .map_err(|e| RunFailure {
                diagnostics: vec![Diagnostic::error(format!(
                    "cannot write the memory timeline to {}: {e}",
                    path.display()
                ))],
                reproducer: None,
                internal: false,
            })
    }

    fn run_function(&mut self, f: &mut Function) -> Result<(), RunFailure> {
        // Input read with --no-verify may be invalid already; verify-each
        // then must not blame the first pass for it.
        let valid_before = !self.inst.verify_each
            || self.pipeline.steps.is_empty()
            || !glow_ir::verifier::verify(f)
                .iter()
                .any(Diagnostic::is_error);
        self.dump(f, "input")?;
        for step in self.pipeline.steps.clone() {
            let name = step.pass.name;
            self.executions += 1;
            if let Some(limit) = self.inst.bisect_limit {
                let run = self.executions <= limit;
                let verb = if run { "running" } else { "NOT running" };
                let _ = writeln!(
                    self.log,
                    "BISECT: {} pass ({}) {} on function ({})",
                    verb, self.executions, name, f.name
                );
                if !run {
                    continue;
                }
            }
            if self.inst.print_before_all || self.inst.print_before.iter().any(|p| p == name) {
                let _ = write!(
                    self.log,
                    "// *** IR Dump Before {} ***\n{}",
                    name,
                    print_function(f, PrintOptions::default())
                );
            }
            let text_before = self
                .inst
                .print_changed
                .then(|| print_function(f, PrintOptions::default()));
            let debug_on = self.inst.debug_only.iter().any(|p| p == name);
            let mut debug_text = String::new();
            let start = Instant::now();
            let mut pass = (step.pass.create)(&step.options).map_err(|e| RunFailure {
                diagnostics: vec![Diagnostic::error(format!("pass `{name}`: {e}"))],
                reproducer: None,
                internal: false,
            })?;
            let stats = &mut self.stats;
            let counters = &mut self.inst.debug_counters;
            let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
                let mut cx =
                    PassContext::for_pass(step.pass, stats, debug_on.then_some(&mut debug_text))
                        .with_counters(counters);
                pass.run(f, &mut cx)
            }));
            self.times.push((name, start.elapsed()));
            self.log.push_str(&debug_text);
            let changed = match result {
                Ok(Ok(changed)) => changed,
                Ok(Err(diags)) => {
                    return Err(RunFailure {
                        diagnostics: diags,
                        reproducer: None,
                        internal: false,
                    })
                }
                Err(panic) => {
                    let msg = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    return Err(RunFailure {
                        diagnostics: vec![Diagnostic::error(format!(
                            "internal error: pass `{name}` crashed on function `{}`: {msg}",
                            f.name
                        ))],
                        reproducer: None,
                        internal: true,
                    });
                }
            };
            // A pass that merged, moved or resized buffers of a planned
            // function may break its plan: the function is then unplanned
            // (plan-memory, last in -O, plans it again). plan-memory's own
            // result is checked, not dropped.
            if changed
                && f.memory.is_some()
                && !step.pass.is(&crate::plan_memory::INFO)
                && !glow_ir::verifier::plan_holds(f)
            {
                f.drop_plan();
                let _ = writeln!(
                    self.log,
                    "glow-opt: note: pass `{name}` broke the arena plan of `{}`; it is unplanned now (run plan-memory to plan it again)",
                    f.name
                );
            }
            if self.inst.verify_each {
                let diags = glow_ir::verifier::verify(f);
                if diags.iter().any(Diagnostic::is_error) && !valid_before {
                    let mut all = vec![Diagnostic::error(format!(
                        "the IR of function `{}` was invalid before the pipeline and still is after pass `{name}`",
                        f.name
                    ))
                    .with_note("the input was read with --no-verify; --no-verify-each runs the passes on it anyway")];
                    all.extend(diags);
                    return Err(RunFailure {
                        diagnostics: all,
                        reproducer: None,
                        internal: false,
                    });
                }
                if diags.iter().any(Diagnostic::is_error) {
                    let mut all = vec![Diagnostic::error(format!(
                        "the IR of function `{}` is invalid after pass `{name}`",
                        f.name
                    ))
                    .with_note(format!(
                        "the function after `{name}`:\n{}",
                        print_function(f, PrintOptions::default())
                    ))];
                    all.extend(diags);
                    return Err(RunFailure {
                        diagnostics: all,
                        reproducer: None,
                        internal: true,
                    });
                }
            }
            if self.inst.print_after_all || self.inst.print_after.iter().any(|p| p == name) {
                let _ = write!(
                    self.log,
                    "// *** IR Dump After {} ***\n{}",
                    name,
                    print_function(f, PrintOptions::default())
                );
            }
            self.dump(f, name)?;
            if let Some(before) = text_before {
                let after = print_function(f, PrintOptions::default());
                if changed || before != after {
                    let _ = write!(
                        self.log,
                        "// *** IR Dump After {} on function {} (changed) ***\n{}",
                        name,
                        f.name,
                        renumber_blind_diff(&before, &after)
                    );
                } else {
                    let _ = writeln!(
                        self.log,
                        "// *** IR Dump After {} on function {} omitted because no change ***",
                        name, f.name
                    );
                }
            }
        }
        Ok(())
    }

    /// `--ir-dump-dir`: writes `f` as `DIR/NNN-FUNCTION-WHAT.gir`, numbered
    /// in the order written (MLIR's `--mlir-print-ir-tree-dir`, LLVM's
    /// `-ir-dump-directory`), so `ls` lists the pipeline in order and any two
    /// files diff.
    fn dump(&mut self, f: &Function, what: &str) -> Result<(), RunFailure> {
        let Some(dir) = &self.inst.ir_dump_dir else {
            return Ok(());
        };
        let stem: String = f
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("{:03}-{stem}-{what}.gir", self.dumps));
        self.dumps += 1;
        let text = print_function(f, PrintOptions::default());
        glow_ir::output::create_output_dir(dir)
            .and_then(|()| glow_ir::output::write_file(&path, text.as_bytes()))
            .map_err(|e| RunFailure {
                diagnostics: vec![Diagnostic::error(format!(
                    "--ir-dump-dir: cannot write {}: {e}",
                    path.display()
                ))],
                reproducer: None,
                internal: false,
            })
    }

    fn finish(&mut self, before: &[MemoryReport], module: &Module) {
        if self.inst.stats {
            self.log.push_str(&self.stats_text());
        }
        if self.inst.time_passes {
            self.log.push_str(&self.time_text());
        }
        if self.inst.print_debug_counter {
            self.log.push_str(&self.inst.debug_counters.report());
        }
        if let Some(format) = self.inst.mem_report {
            let after: Vec<MemoryReport> =
                module.functions.iter().map(|f| self.report(f)).collect();
            for (b, a) in before.iter().zip(&after) {
                match format {
                    MemReport::Text => {
                        let _ = write!(
                            self.log,
                            "// *** Memory before the pipeline ***\n{}",
                            b.to_text()
                        );
                        let _ = write!(
                            self.log,
                            "// *** Memory after the pipeline ***\n{}",
                            a.to_text()
                        );
                    }
                    MemReport::Json => {
                        let _ = writeln!(
                            self.log,
                            "{{\"before\": {}, \"after\": {}}}",
                            b.to_json(),
                            a.to_json()
                        );
                    }
                }
            }
        }
    }

    /// LLVM's `-stats` block.
    pub fn stats_text(&self) -> String {
        let rule =
            "===-------------------------------------------------------------------------===";
        let mut s =
            format!("{rule}\n                          ... Statistics Collected ...\n{rule}\n\n");
        for ((pass, counter), n) in &self.stats.counters {
            let desc = self
                .pipeline
                .steps
                .iter()
                .find(|s| s.pass.name == *pass)
                .and_then(|s| s.pass.stats.iter().find(|(c, _)| c == counter))
                .map_or(*counter, |(_, d)| *d);
            // The counter's name is what the pass pages document.
            let _ = writeln!(s, "{:>8} {} - {} [{}]", n, pass, desc, counter);
        }
        s.push('\n');
        s
    }

    fn time_text(&self) -> String {
        let total: Duration = self.times.iter().map(|(_, d)| *d).sum();
        let mut s = String::from(
            "===-------------------------------------------------------------------------===\n",
        );
        s.push_str("                      ... Pass execution timing report ...\n");
        s.push_str(
            "===-------------------------------------------------------------------------===\n",
        );
        let _ = writeln!(
            s,
            "  Total Execution Time: {:.4} seconds\n",
            total.as_secs_f64()
        );
        s.push_str("   ---Wall Time---  --- Name ---\n");
        for (name, d) in &self.times {
            let pct = if total.is_zero() {
                0.0
            } else {
                100.0 * d.as_secs_f64() / total.as_secs_f64()
            };
            let _ = writeln!(s, "   {:.4} ({:5.1}%)  {}", d.as_secs_f64(), pct, name);
        }
        let _ = writeln!(s, "   {:.4} (100.0%)  Total\n", total.as_secs_f64());
        s
    }

    /// Writes the input and the pipeline so `--run-reproducer` replays them:
    /// to `--crash-reproducer`'s file, or for an internal failure to a file
    /// in the temp directory (unless `auto_reproducer` is off).
    fn write_reproducer(&self, input: &str, internal: bool) -> Option<std::path::PathBuf> {
        let path =
            match &self.inst.crash_reproducer {
                Some(p) => p.clone(),
                None if internal && self.inst.auto_reproducer => std::env::temp_dir().join(
                    format!("{}-reproducer-{}.gir", self.inst.tool, std::process::id()),
                ),
                None => return None,
            };
        let mut header = format!("{REPRODUCER_HEADER}{}", self.pipeline.to_text());
        for flag in &self.inst.reproducer_flags {
            header.push(' ');
            header.push_str(flag);
        }
        glow_ir::output::write_file(&path, format!("{header}\n{input}").as_bytes()).ok()?;
        Some(path)
    }
}

/// A unified diff of two printed functions that ignores the instruction
/// index column: erasing one instruction renumbers every later one, and a
/// diff of those lines would hide the real change. Lines are compared with
/// their index removed; unchanged lines are shown as they read after.
pub fn renumber_blind_diff(before: &str, after: &str) -> String {
    let old: Vec<&str> = before.lines().collect();
    let new: Vec<&str> = after.lines().collect();
    let old_keys: Vec<&str> = old.iter().map(|l| without_index(l)).collect();
    let new_keys: Vec<&str> = new.iter().map(|l| without_index(l)).collect();
    let diff = similar::TextDiff::configure().diff_slices(&old_keys, &new_keys);
    let mut out = String::from("--- before\n+++ after\n");
    for group in diff.grouped_ops(3) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let o_len = last.old_range().end - o;
        let n_len = last.new_range().end - n;
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            hunk_range(o, o_len),
            hunk_range(n, n_len)
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                let (sign, line) = match change.tag() {
                    similar::ChangeTag::Equal => (' ', new[change.new_index().unwrap_or(0)]),
                    similar::ChangeTag::Delete => ('-', old[change.old_index().unwrap_or(0)]),
                    similar::ChangeTag::Insert => ('+', new[change.new_index().unwrap_or(0)]),
                };
                let _ = writeln!(out, "{sign}{line}");
            }
        }
    }
    out
}

/// `start,len` of a hunk header, 1-based as in `diff -u` (an empty range
/// names the line before it).
fn hunk_range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

/// An instruction line without its leading index (`  3 %x = ...` →
/// `%x = ...`); other lines as they are.
fn without_index(line: &str) -> &str {
    let rest = line.trim_start();
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && rest[digits..].starts_with(' ') {
        rest[digits..].trim_start()
    } else {
        line
    }
}

const REPRODUCER_HEADER: &str = "// glow-opt reproducer: --passes=";

/// What a reproducer's first line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reproducer {
    /// The pipeline, as `--passes` text.
    pub passes: String,
    /// Further input flags, e.g. `--no-verify`.
    pub flags: Vec<String>,
}

/// Reads a reproducer's first line: `// glow-opt reproducer: --passes=P [FLAGS]`.
pub fn read_reproducer(text: &str) -> Result<Reproducer, String> {
    let first = text.lines().next().unwrap_or("");
    let rest = first.strip_prefix(REPRODUCER_HEADER).ok_or_else(|| {
        format!("not a glow-opt reproducer: its first line must be `{REPRODUCER_HEADER}...`")
    })?;
    let mut words = rest.split_whitespace();
    let passes = words.next().unwrap_or("").to_string();
    Ok(Reproducer {
        passes,
        flags: words.map(str::to_string).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::{Pass, PassInfo, PassOptions};
    use crate::pipeline::Step;

    /// Erases the first instruction: breaks the IR of any function whose
    /// first instruction is an alloc.
    struct Breaker;
    impl Pass for Breaker {
        fn run(&mut self, f: &mut Function, _: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
            let first = f.layout.first().expect("a non-empty function");
            f.erase(first);
            Ok(true)
        }
    }
    static BREAKER: PassInfo = PassInfo {
        name: "test-breaker",
        summary: "breaks the IR",
        options: &[],
        stats: &[],
        counters: &[],
        create: |_: &PassOptions| Ok(Box::new(Breaker)),
    };

    struct Crasher;
    impl Pass for Crasher {
        fn run(&mut self, _: &mut Function, _: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
            panic!("boom")
        }
    }
    static CRASHER: PassInfo = PassInfo {
        name: "test-crasher",
        summary: "panics",
        options: &[],
        stats: &[],
        counters: &[],
        create: |_: &PassOptions| Ok(Box::new(Crasher)),
    };

    const SRC: &[u8] = b"function f\ndeclare {\n  %x = WeightVar float<2> mutable\n}\ncode {\n  0 %t = allocactivation { Ty: float<2> }\n  1 %c = copy @out %t, @in %x\n  2 %d = copy @out %x, @in %t\n  3 %e = deallocactivation @out %t\n}\n";

    fn run(pass: &'static PassInfo, inst: Instrumentation) -> RunFailure {
        let mut module = glow_ir::parser::parse(SRC).expect("test input parses");
        let pipeline = Pipeline {
            steps: vec![Step {
                pass,
                options: PassOptions::default(),
            }],
        };
        PassManager::new(pipeline, inst)
            .run(&mut module)
            .expect_err("the pass fails")
    }

    #[test]
    fn renumbering_alone_is_no_change_in_a_diff() {
        let before = "code {\n  0 %a = x\n  1 %b = y\n  2 %c = z\n}\n";
        let after = "code {\n  0 %b = y\n  1 %c = z\n}\n";
        let d = renumber_blind_diff(before, after);
        assert_eq!(
            d,
            "--- before\n+++ after\n@@ -1,5 +1,4 @@\n code {\n-  0 %a = x\n   0 %b = y\n   1 %c = z\n }\n"
        );
        assert_eq!(renumber_blind_diff(after, after), "--- before\n+++ after\n");
    }

    #[test]
    fn verify_each_names_the_pass_and_writes_a_reproducer() {
        let failure = run(&BREAKER, Instrumentation::default());
        assert!(failure.internal);
        assert!(failure.diagnostics[0]
            .message
            .contains("invalid after pass `test-breaker`"));
        let path = failure
            .reproducer
            .expect("an internal failure always writes a reproducer");
        let text = std::fs::read_to_string(&path).expect("reproducer is readable");
        let _ = std::fs::remove_file(&path);
        let header = read_reproducer(&text).expect("header parses");
        assert_eq!(header.passes, "test-breaker");
        assert!(text.contains("1 %c = copy @out %t, @in %x"));
    }

    #[test]
    fn without_auto_reproducer_an_internal_failure_writes_none() {
        let inst = Instrumentation {
            auto_reproducer: false,
            ..Instrumentation::default()
        };
        let failure = run(&BREAKER, inst);
        assert!(failure.internal);
        assert_eq!(failure.reproducer, None);
        assert!(failure
            .diagnostics
            .iter()
            .all(|d| !d.message.contains("reproducer was written")));
    }

    #[test]
    fn the_reproducer_note_names_the_tool() {
        let inst = Instrumentation {
            tool: "custom-opt",
            ..Instrumentation::default()
        };
        let failure = run(&CRASHER, inst);
        let path = failure.reproducer.expect("written to the temp directory");
        let _ = std::fs::remove_file(&path);
        assert!(path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("custom-opt-reproducer-")));
        let note = &failure.diagnostics.last().expect("a note").message;
        assert!(
            note.contains("replay it with `custom-opt --run-reproducer"),
            "{note}"
        );
    }

    #[test]
    fn a_panicking_pass_is_an_error_not_a_crash() {
        let dir = std::env::temp_dir().join(format!("glow-crash-{}.gir", std::process::id()));
        let inst = Instrumentation {
            crash_reproducer: Some(dir.clone()),
            reproducer_flags: vec!["--no-verify".into()],
            ..Instrumentation::default()
        };
        let failure = run(&CRASHER, inst);
        assert!(failure.diagnostics[0]
            .message
            .contains("pass `test-crasher` crashed on function `f`: boom"));
        let text = std::fs::read_to_string(&dir).expect("reproducer written where asked");
        let _ = std::fs::remove_file(&dir);
        assert_eq!(
            read_reproducer(&text).expect("parses").flags,
            vec!["--no-verify".to_string()]
        );
    }
}
