//! Command-line flags shared by the tools that run pipelines (`glow-opt`,
//! `glow-run`): the pipeline itself and the debugging instrumentation.

use crate::manager::{Instrumentation, MemReport};
use crate::pipeline::{Mode, Pipeline};
use crate::plan_memory;
use crate::registry::PassRegistry;
use clap::Args;

/// Rewrites `-O0`, `-O2`, ... to `-O=N` before clap sees them: `-O` takes its
/// level only with `=` so that `glow-opt -O in.gir` does not read the file
/// name as a level, and clap then rejects the attached form. The value of a
/// `--cflags` flag is left alone.
pub fn normalize_opt_levels(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut out: Vec<std::ffi::OsString> = Vec::new();
    for a in args {
        let after_cflags = out.last().is_some_and(|p| p == "--cflags");
        let level = a
            .to_str()
            .and_then(|s| s.strip_prefix("-O"))
            .filter(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()));
        match level {
            Some(l) if !after_cflags => out.push(format!("-O={l}").into()),
            _ => out.push(a),
        }
    }
    out
}

/// `--pass`, `--passes`, `-O`, `-O0`, `--mode`.
#[derive(Args, Clone, Debug, Default)]
pub struct PipelineArgs {
    /// Run pass P (repeatable, in order); `--passes=a,b{key=value},c` runs a list.
    #[arg(long = "pass", visible_alias = "passes", value_name = "P")]
    pub passes: Vec<String>,
    /// Optimize: run the default (infer) pipeline before any --pass (`-O0`: none).
    #[arg(short = 'O', value_name = "LEVEL", num_args = 0..=1, default_missing_value = "1", require_equals = true)]
    pub opt_level: Option<String>,
    /// Pipeline mode: none, train (no buffer sharing) or infer (Glow's default order).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Alignment in bytes of the activation arena (`plan-memory` steps without their own `align`).
    #[arg(long, value_name = "BYTES")]
    pub align: Option<u64>,
}

impl PipelineArgs {
    /// The pipeline the flags describe: the mode's passes, then every
    /// `--pass`/`--passes` in command-line order, named from `registry`.
    pub fn pipeline(&self, registry: &PassRegistry) -> Result<Pipeline, String> {
        let mode = match (&self.mode, self.opt_level.as_deref()) {
            (Some(m), _) => Mode::parse(m)?,
            (None, Some("0")) => Mode::None,
            (None, Some("1" | "2" | "3")) => Mode::Infer,
            (None, Some(other)) => {
                return Err(format!(
                    "unknown optimization level `-O{other}`; expected -O0 or -O"
                ))
            }
            (None, None) => Mode::None,
        };
        let mut pipeline = Pipeline::for_mode(mode);
        for list in &self.passes {
            pipeline
                .steps
                .extend(Pipeline::parse(registry, list)?.steps);
        }
        if let Some(align) = self.align {
            if align == 0 {
                return Err("--align must be positive".into());
            }
            for step in &mut pipeline.steps {
                if step.pass.is(&plan_memory::INFO) && step.options.get("align").is_none() {
                    step.options
                        .values
                        .insert("align".into(), align.to_string());
                }
            }
        }
        Ok(pipeline)
    }
}

/// The debugging flags of passes.md §5.
#[derive(Args, Clone, Debug, Default)]
pub struct DebugArgs {
    /// Do not verify the IR after each pass (verification is on by default).
    #[arg(long)]
    pub no_verify_each: bool,
    /// Verify after each pass (the default; accepted for opt compatibility).
    #[arg(long, conflicts_with = "no_verify_each")]
    pub verify_each: bool,
    /// Print the IR before pass P (repeatable) on stderr.
    #[arg(long = "print-ir-before", value_name = "P")]
    pub print_ir_before: Vec<String>,
    /// Print the IR after pass P (repeatable) on stderr.
    #[arg(long = "print-ir-after", value_name = "P")]
    pub print_ir_after: Vec<String>,
    /// Print the IR before every pass.
    #[arg(long)]
    pub print_ir_before_all: bool,
    /// Print the IR after every pass.
    #[arg(long)]
    pub print_ir_after_all: bool,
    /// Print the input, then a unified diff after each pass that changed the IR.
    #[arg(long)]
    pub print_changed: bool,
    /// Print the statistics counters of the passes.
    #[arg(long)]
    pub stats: bool,
    /// Print the time taken by each pass.
    #[arg(long)]
    pub time_passes: bool,
    /// Run only the first N pass executions.
    #[arg(long, value_name = "N")]
    pub opt_bisect_limit: Option<i64>,
    /// Let the named passes (comma-separated) explain their decisions on stderr.
    #[arg(long, value_name = "PASS", value_delimiter = ',')]
    pub debug_only: Vec<String>,
    /// Where to write a crash reproducer when a pass fails or breaks the IR.
    #[arg(long, value_name = "FILE")]
    pub crash_reproducer: Option<std::path::PathBuf>,
    /// Memory report before and after the pipeline on stderr: `text` (default) or `json`.
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, default_missing_value = "text", require_equals = true)]
    pub mem_report: Option<String>,
    /// Draw the activation arena after the pipeline as an SVG timeline into FILE.
    #[arg(long, value_name = "FILE.svg")]
    pub mem_timeline: Option<std::path::PathBuf>,
}

impl DebugArgs {
    /// The instrumentation these flags ask for; names that are not passes
    /// of `registry` are errors.
    pub fn instrumentation(&self, registry: &PassRegistry) -> Result<Instrumentation, String> {
        for name in self
            .print_ir_before
            .iter()
            .chain(&self.print_ir_after)
            .chain(&self.debug_only)
        {
            registry.lookup_or_suggest(name)?;
        }
        let mem_report = match self.mem_report.as_deref() {
            None => None,
            Some("text") => Some(MemReport::Text),
            Some("json") => Some(MemReport::Json),
            Some(other) => {
                return Err(format!(
                    "unknown --mem-report format `{other}`; expected text or json"
                ))
            }
        };
        let bisect_limit = match self.opt_bisect_limit {
            Some(n) if n >= 0 => Some(n as usize),
            _ => None,
        };
        Ok(Instrumentation {
            verify_each: !self.no_verify_each,
            print_before: self.print_ir_before.clone(),
            print_after: self.print_ir_after.clone(),
            print_before_all: self.print_ir_before_all,
            print_after_all: self.print_ir_after_all,
            print_changed: self.print_changed,
            stats: self.stats,
            time_passes: self.time_passes,
            bisect_limit,
            debug_only: self.debug_only.clone(),
            crash_reproducer: self.crash_reproducer.clone(),
            reproducer_flags: Vec::new(),
            auto_reproducer: true,
            tool: "glow-opt",
            mem_report,
            mem_timeline: self.mem_timeline.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize_opt_levels(args.iter().map(|a| a.into()))
            .into_iter()
            .map(|a| a.into_string().expect("utf-8"))
            .collect()
    }

    #[test]
    fn opt_levels_take_their_value_attached_only() {
        assert_eq!(
            norm(&["glow-opt", "-O0", "x.gir"]),
            ["glow-opt", "-O=0", "x.gir"]
        );
        assert_eq!(
            norm(&["glow-opt", "-O", "x.gir"]),
            ["glow-opt", "-O", "x.gir"]
        );
        assert_eq!(
            norm(&["glow-run", "--cflags", "-O2", "-O3"]),
            ["glow-run", "--cflags", "-O2", "-O=3"]
        );
    }
}
