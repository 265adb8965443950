//! `glow-reduce`: llvm-reduce for `.gir` over the built-in passes; the
//! whole tool is `glow_opt_driver::reduce::reduce_main`. Manual:
//! docs/glow-opt.md, "Reducing a test case".

fn main() -> std::process::ExitCode {
    let registry = glow_passes::PassRegistry::builtin();
    std::process::ExitCode::from(glow_opt_driver::reduce::reduce_main(
        "glow-reduce",
        &registry,
        std::env::args_os(),
    ))
}
