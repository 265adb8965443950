//! The pass manager and Glow's IR optimizer passes.
//!
//! A pass is a `Pass` with a `PassInfo` static beside it (kebab-case name,
//! summary, options, statistics, constructor); a `PassRegistry` is the set of
//! passes a tool knows by name (`registry::BUILTIN` plus any a downstream
//! crate registers); a `Pipeline` is a list of pass invocations built from
//! `--pass`/`--passes`/`-O`/`--mode`; the `PassManager` runs it with the
//! debugging hooks of `Instrumentation` (verify-each, IR dumps, stats, timing,
//! bisection, debug output, debug counters, crash reproducers, memory reports).

pub mod analysis;
pub mod cli;
mod conv_fusion;
pub mod counter;
pub mod edit;
pub mod explain;
pub mod manager;
pub mod pass;
pub mod pipeline;
pub mod placement;
/// The memory planner (crate `glow-planner`) and the SVG timeline of its
/// memory reports.
pub mod planner {
    pub use glow_planner::*;
    pub mod timeline;
}
pub mod registry;

pub mod alloc_sinking;
pub mod dead_alloc;
pub mod dealloc_sinking;
pub mod differentiate;
pub mod dse;
pub mod fold_batchnorm;
pub mod fuse_activations;
pub mod fuse_residual;
pub mod inplace;
pub mod make_weights_const;
pub mod optimize_extracts;
pub mod optimize_inserts;
pub mod peephole;
pub mod plan_memory;
pub mod quantize;
pub mod remat;
pub mod share_buffers;
pub mod verify;

pub use counter::DebugCounters;
pub use manager::{Instrumentation, PassManager, RunFailure};
pub use pass::{Pass, PassContext, PassInfo, PassOption, PassOptions};
pub use pipeline::{Pipeline, Step};
pub use registry::PassRegistry;

use glow_ir::{Diagnostic, Module};

/// Runs a pipeline on every function of a module with default
/// instrumentation (verify-each on); the simple entry point for tools.
pub fn run_pipeline(module: &mut Module, pipeline: &Pipeline) -> Result<(), Vec<Diagnostic>> {
    let mut pm = PassManager::new(pipeline.clone(), Instrumentation::default());
    pm.run(module).map(|_| ()).map_err(|f| f.diagnostics)
}
