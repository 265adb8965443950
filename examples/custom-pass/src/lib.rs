//! Two passes that live outside glow-rs, and the registry of `custom-opt`.
//!
//! Everything here uses only the public API of `glow-ir` and `glow-passes`:
//! this is the shape of a downstream crate (docs/writing-a-pass.md).

pub mod count_flops;
pub mod strip_debugprint;

use glow_passes::registry::Place;
use glow_passes::PassRegistry;

/// The built-in passes plus this crate's, as `custom-opt` knows them.
/// `-O` strips debug prints first, so no later pass works around them.
pub fn registry() -> Result<PassRegistry, String> {
    let mut registry = PassRegistry::builtin();
    registry.register(&strip_debugprint::INFO)?;
    registry.register(&count_flops::INFO)?;
    registry.add_to_pipeline(
        &strip_debugprint::INFO,
        Place::Before(&glow_passes::info::PEEPHOLE),
    )?;
    Ok(registry)
}
