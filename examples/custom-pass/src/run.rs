//! `custom-run`: `glow-run` with this crate's passes registered, so
//! `--compare-passes`, `--bisect` and the pipeline flags know them. Every
//! flag of glow-run comes from `glow_opt_driver::run::run_main`.

use std::process::ExitCode;

fn main() -> ExitCode {
    let registry = match custom_pass::registry() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("custom-run: error: {e}");
            return ExitCode::from(2);
        }
    };
    ExitCode::from(glow_opt_driver::run::run_main(
        "custom-run",
        &registry,
        std::env::args_os(),
    ))
}
