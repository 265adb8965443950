//! Sets `cfg(has_rsvg_convert)` for the timeline render test (see
//! ../build/tool_cfg.rs).
#[path = "../build/tool_cfg.rs"]
mod tool_cfg;

fn main() {
    tool_cfg::detect("has_rsvg_convert", &["rsvg-convert"]);
}
