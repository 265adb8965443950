//! `custom-opt`: `glow-opt` with this crate's passes registered. Every flag
//! of glow-opt comes from `glow_opt_driver::opt_main`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let registry = match custom_pass::registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("custom-opt: error: {e}");
            return ExitCode::from(2);
        }
    };
    ExitCode::from(glow_opt_driver::opt_main(
        "custom-opt",
        &registry,
        std::env::args_os(),
    ))
}
