//! `glow-run`: the run tool over the built-in passes; the driver is
//! `glow_opt_driver::run::run_main`.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(glow_opt_driver::run::run_main(
        "glow-run",
        &glow_passes::PassRegistry::builtin(),
        std::env::args_os(),
    ))
}
