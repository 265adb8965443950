//! Sets `cfg(has_llvm_filecheck)` for the differential test against LLVM's
//! FileCheck (see ../../build/tool_cfg.rs).
#[path = "../../build/tool_cfg.rs"]
mod tool_cfg;

fn main() {
    tool_cfg::detect("has_llvm_filecheck", &["/usr/lib/llvm-19/bin/FileCheck"]);
}
