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

mod alloc_sinking;
mod dead_alloc;
mod dealloc_sinking;
mod differentiate;
mod dse;
mod fold_batchnorm;
mod fuse_activations;
mod fuse_residual;
mod inplace;
mod instrument_profile;
mod make_weights_const;
mod optimize_extracts;
mod optimize_inserts;
mod peephole;
mod plan_memory;
mod quantize;
mod remat;
mod share_buffers;
mod verify;

/// Each built-in pass's `PassInfo`, for code that runs or places one
/// (`Pipeline::of(&[&info::DSE])`, `PassRegistry::add_to_pipeline`). The
/// passes themselves stay private: a tool reaches them through these and
/// the registry.
pub mod info {
    pub use crate::alloc_sinking::INFO as ALLOC_SINKING;
    pub use crate::dead_alloc::INFO as DEAD_ALLOC;
    pub use crate::dealloc_sinking::INFO as DEALLOC_SINKING;
    pub use crate::differentiate::INFO as DIFFERENTIATE;
    pub use crate::dse::INFO as DSE;
    pub use crate::fold_batchnorm::INFO as FOLD_BATCHNORM;
    pub use crate::fuse_activations::INFO as FUSE_ACTIVATIONS;
    pub use crate::fuse_residual::INFO as FUSE_RESIDUAL;
    pub use crate::inplace::INFO as INPLACE;
    pub use crate::instrument_profile::INFO as INSTRUMENT_PROFILE;
    pub use crate::make_weights_const::INFO as MAKE_WEIGHTS_CONST;
    pub use crate::optimize_extracts::INFO as OPTIMIZE_EXTRACTS;
    pub use crate::optimize_inserts::INFO as OPTIMIZE_INSERTS;
    pub use crate::peephole::INFO as PEEPHOLE;
    pub use crate::plan_memory::INFO as PLAN_MEMORY;
    pub use crate::quantize::INFO as QUANTIZE;
    pub use crate::remat::INFO as REMAT;
    pub use crate::share_buffers::INFO as SHARE_BUFFERS;
    pub use crate::verify::INFO as VERIFY;
}

/// The quantization profile `glow-run --dump-profile` writes and the
/// `quantize` pass reads.
pub use quantize::profile;

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
