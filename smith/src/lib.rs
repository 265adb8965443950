//! glow-smith: random valid `.gir` programs ([`gen`]), the differential
//! oracle that runs each through both engines, every pass and pipeline
//! ([`oracle`]), and the entry points of the fuzz targets ([`targets`]).

pub mod gen;
pub mod oracle;
pub mod rng;
pub mod targets;

pub use gen::{generate, generate_from, Program};
pub use rng::Rng;
