//! The C backend of glow-rs: turns a verified `.gir` function into a Glow
//! style AOT bundle (`NAME.c`, `NAME.h`, `NAME.weights.bin`), and runs
//! functions either through the system C compiler or the reference
//! interpreter, which has the same semantics with plain loops.
//!
//! - `namer`: IR names to safe, unique C identifiers.
//! - `memory`: the three regions and every buffer's offset (the planner's arena).
//! - `emit`: one C kernel emitter per opcode family; `ops`: the element-wise
//!   operators shared by both engines.
//! - `bundle`: `emit_bundle` and `Bundle::write_to`.
//! - `interp`: the reference interpreter; `cc`: the generated driver and
//!   compiler invocation; `run`: both engines behind one call.
//! - `quant`: the quantized kernels' integer parameters, derived once for
//!   both engines (docs/quantization.md).
//! - `npy`, `text`: tensor file and text formats; `weights`: safetensors.

pub mod bundle;
pub mod cc;
pub mod elem;
pub mod emit;
pub mod error;
pub mod interp;
pub mod limits;
pub mod members;
pub mod memory;
pub mod namer;
pub mod npy;
pub mod ops;
pub mod quant;
mod rearrange;
pub mod run;
pub mod text;
pub mod weights;

pub use bundle::{emit_bundle, Bundle, BundleOptions, CodegenOptions, MutableWeight};
pub use cc::CcOptions;
pub use interp::Memory;
pub use memory::MemoryLayout;
pub use run::{compare, resolve_weights, run, Comparison, Engine, Outputs, RunError, RunOptions};
pub use safetensors;
