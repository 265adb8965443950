//! `glow-opt`: reads `.gir`, verifies it, runs a pipeline of the built-in
//! passes on it and prints it in canonical form. Exit 0 on success, 1 on an
//! input error (read, parse, verify, pass failure), 2 on a usage error. The
//! driver is the library `glow_opt_driver`, which out-of-tree tools share.

use std::process::ExitCode;

fn main() -> ExitCode {
    let registry = glow_passes::PassRegistry::builtin();
    ExitCode::from(glow_opt_driver::opt_main(
        "glow-opt",
        &registry,
        std::env::args_os(),
    ))
}
