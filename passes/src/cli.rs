//! Command-line flags shared by the tools that run pipelines (`glow-opt`,
//! `glow-run`): the pipeline itself and the debugging instrumentation.

use crate::counter::DebugCounters;
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

/// Rewrites LLVM's single-dash long flags (`-passes=dse`, `-print-changed`,
/// `-print-after-all`) to clap's `--` form, so `opt` habits work. Only a word
/// whose name (before any `=`) is a long flag or alias of `command` is
/// rewritten: `-o out.gir` and `-O` keep their meaning. Nothing after `--`
/// and no value of `--cflags` is touched.
pub fn llvm_single_dash(
    args: Vec<std::ffi::OsString>,
    command: &clap::Command,
) -> Vec<std::ffi::OsString> {
    let longs: Vec<&str> = command
        .get_arguments()
        .flat_map(|a| {
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
        })
        .chain(["help", "version"])
        .collect();
    let mut out: Vec<std::ffi::OsString> = Vec::with_capacity(args.len());
    let mut after_dashdash = false;
    for (i, a) in args.into_iter().enumerate() {
        let after_cflags = out.last().is_some_and(|p| p == "--cflags");
        let rewrite = a.to_str().and_then(|s| {
            let name = s.strip_prefix('-').filter(|r| !r.starts_with('-'))?;
            let key = name.split_once('=').map_or(name, |(k, _)| k);
            (key.len() > 1 && longs.contains(&key)).then(|| format!("-{s}"))
        });
        if a == "--" {
            after_dashdash = true;
        }
        match rewrite {
            Some(long) if i > 0 && !after_dashdash && !after_cflags => out.push(long.into()),
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
    /// Pipeline mode: none, train (infer without the fusions, inplace and buffer sharing) or
    /// infer (Glow's default order).
    #[arg(long, value_name = "MODE")]
    pub mode: Option<String>,
    /// Alignment in bytes of the activation arena (`plan-memory` steps without their own `align`).
    #[arg(long, value_name = "BYTES")]
    pub align: Option<u64>,
    /// Peak bytes `remat` steps without their own `budget` must reach.
    #[arg(long, value_name = "BYTES")]
    pub memory_budget: Option<u64>,
    /// The profile the `quantize` pass reads (written by glow-run --dump-profile).
    #[arg(long, value_name = "P.yaml")]
    pub load_profile: Option<String>,
    /// `quantize`: asymmetric (default), symmetric, symmetric_with_uint8, symmetric_with_power2_scale.
    #[arg(long, value_name = "SCHEMA")]
    pub quantization_schema: Option<String>,
    /// `quantize`: none (default) or KL.
    #[arg(long, value_name = "CALIBRATION")]
    pub quantization_calibration: Option<String>,
    /// `quantize`: quantize convolution filters per output channel.
    #[arg(long)]
    pub enable_channelwise: bool,
    /// `quantize`: quantize fullyconnected weights per row (rowwisequantizedfullyconnected).
    #[arg(long)]
    pub enable_rowwise: bool,
    /// `quantize`: opcodes to keep in float (comma-separated).
    #[arg(long, value_name = "OPCODE,...")]
    pub keep_original_precision_for: Option<String>,
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
                    "unknown optimization level `-O{other}`; expected -O0 (no passes) or -O \
                     (the infer pipeline; -O1, -O2 and -O3 are accepted as -O)"
                ))
            }
            (None, None) => Mode::None,
        };
        let mut pipeline = registry.pipeline_for(mode);
        for list in &self.passes {
            pipeline
                .steps
                .extend(Pipeline::parse(registry, list)?.steps);
        }
        if let Some(align) = self.align {
            if !align.is_power_of_two() {
                return Err(format!("--align must be a power of two, not {align}"));
            }
            for step in &mut pipeline.steps {
                if step.pass.is(&plan_memory::INFO) && step.options.get("align").is_none() {
                    step.options
                        .values
                        .insert("align".into(), align.to_string());
                }
            }
        }
        if let Some(budget) = self.memory_budget {
            for step in &mut pipeline.steps {
                if step.pass.is(&crate::remat::INFO) && step.options.get("budget").is_none() {
                    step.options
                        .values
                        .insert("budget".into(), budget.to_string());
                }
            }
        }
        self.quantize_options(&mut pipeline)?;
        Ok(pipeline)
    }

    /// Gives the quantization flags to every `quantize` step that does not
    /// set the option itself; they are errors without a `quantize` step.
    fn quantize_options(&self, pipeline: &mut Pipeline) -> Result<(), String> {
        let keep = self
            .keep_original_precision_for
            .as_ref()
            .map(|k| k.replace(',', ":"));
        let flags: [(&str, Option<String>, &str); 6] = [
            ("profile", self.load_profile.clone(), "--load-profile"),
            (
                "schema",
                self.quantization_schema.clone(),
                "--quantization-schema",
            ),
            (
                "calibration",
                self.quantization_calibration.clone(),
                "--quantization-calibration",
            ),
            (
                "channelwise",
                self.enable_channelwise.then(|| "true".to_string()),
                "--enable-channelwise",
            ),
            (
                "rowwise",
                self.enable_rowwise.then(|| "true".to_string()),
                "--enable-rowwise",
            ),
            ("keep", keep, "--keep-original-precision-for"),
        ];
        let mut any = false;
        for step in &mut pipeline.steps {
            if !step.pass.is(&crate::quantize::INFO) {
                continue;
            }
            any = true;
            for (key, value, _) in &flags {
                if let Some(v) = value {
                    if step.options.get(key).is_none() {
                        step.options.values.insert(key.to_string(), v.clone());
                    }
                }
            }
            if step.options.get("profile").is_none() {
                return Err(
                    "the quantize pass needs a profile: give --load-profile=P.yaml (or quantize{profile=P.yaml})"
                        .into(),
                );
            }
            (crate::quantize::INFO.create)(&step.options)
                .map_err(|e| format!("pass `quantize`: {e}"))?;
        }
        if !any {
            if let Some((_, _, flag)) = flags.iter().find(|(_, v, _)| v.is_some()) {
                return Err(format!(
                    "{flag} is an option of the quantize pass: add --pass=quantize"
                ));
            }
        }
        Ok(())
    }
}

/// The debugging flags (docs/glow-opt.md, "Debugging one pass").
#[derive(Args, Clone, Debug, Default)]
pub struct DebugArgs {
    /// Do not verify the IR after each pass (verification is on by default).
    #[arg(long)]
    pub no_verify_each: bool,
    /// Verify after each pass (the default; accepted for opt compatibility).
    #[arg(long, conflicts_with = "no_verify_each")]
    pub verify_each: bool,
    /// Print the IR before pass P (repeatable) on stderr.
    #[arg(
        long = "print-ir-before",
        visible_alias = "print-before",
        value_name = "P"
    )]
    pub print_ir_before: Vec<String>,
    /// Print the IR after pass P (repeatable) on stderr.
    #[arg(
        long = "print-ir-after",
        visible_alias = "print-after",
        value_name = "P"
    )]
    pub print_ir_after: Vec<String>,
    /// Print the IR before every pass.
    #[arg(long, visible_alias = "print-before-all")]
    pub print_ir_before_all: bool,
    /// Print the IR after every pass.
    #[arg(long, visible_alias = "print-after-all")]
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
    /// Run only the first N pass executions (-1: run all, listing each).
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
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
    /// Write each function before the pipeline and after every pass execution to
    /// DIR/NNN-FUNCTION-PASS.gir, numbered in order.
    #[arg(long, value_name = "DIR")]
    pub ir_dump_dir: Option<std::path::PathBuf>,
    /// Select which decisions of a pass happen (LLVM's -debug-counter):
    /// NAME=CHUNKS (`share-buffers=0-2:5`, occurrences from 0) or
    /// NAME-skip=N / NAME-count=N; comma-separated, repeatable. `--list-passes`
    /// names each pass's counters.
    #[arg(long, value_name = "SPEC")]
    pub debug_counter: Vec<String>,
    /// After the pipeline, print each debug counter: how often it was asked,
    /// how many decisions were skipped, and its selection.
    #[arg(long)]
    pub print_debug_counter: bool,
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
        // As in LLVM, -1 runs every pass but still prints each BISECT line.
        let bisect_limit = match self.opt_bisect_limit {
            None => None,
            Some(-1) => Some(usize::MAX),
            Some(n) => Some(usize::try_from(n).map_err(|_| {
                format!("--opt-bisect-limit={n}: expected -1 (run and list every pass) or a count")
            })?),
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
            ir_dump_dir: self.ir_dump_dir.clone(),
            debug_counters: DebugCounters::parse(&self.debug_counter, &registry.counter_names())?,
            print_debug_counter: self.print_debug_counter,
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

    #[derive(clap::Parser)]
    struct Probe {
        #[command(flatten)]
        pipeline: PipelineArgs,
        #[command(flatten)]
        debug: DebugArgs,
        #[arg(short = 'o')]
        output: Option<String>,
        #[arg(long, allow_hyphen_values = true)]
        cflags: Option<String>,
    }

    fn dash(args: &[&str]) -> Vec<String> {
        let command = <Probe as clap::CommandFactory>::command();
        llvm_single_dash(args.iter().map(|a| a.into()).collect(), &command)
            .into_iter()
            .map(|a| a.into_string().expect("utf-8"))
            .collect()
    }

    #[test]
    fn llvm_single_dash_flags_become_long_flags() {
        assert_eq!(
            dash(&[
                "opt",
                "-passes=dse",
                "-print-changed",
                "-print-after-all",
                "x.gir"
            ]),
            [
                "opt",
                "--passes=dse",
                "--print-changed",
                "--print-after-all",
                "x.gir"
            ]
        );
        // Short flags, unknown words, values of --cflags and words after `--` stay.
        assert_eq!(
            dash(&[
                "opt",
                "-o",
                "-stats",
                "-ostats.gir",
                "-O",
                "-x",
                "--cflags",
                "-stats",
                "--",
                "-stats"
            ]),
            [
                "opt",
                "-o",
                "--stats",
                "-ostats.gir",
                "-O",
                "-x",
                "--cflags",
                "-stats",
                "--",
                "-stats"
            ]
        );
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
