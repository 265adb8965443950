//! Sets `cfg(has_cc)` for the tests that compile C (see ../build/tool_cfg.rs).
#[path = "../build/tool_cfg.rs"]
mod tool_cfg;

fn main() {
    tool_cfg::detect("has_cc", &["cc"]);
}
