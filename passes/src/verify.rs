//! `verify`: runs the IR verifier as a pass (Glow's `IRVerify`).

use crate::pass::{Pass, PassContext, PassInfo, PassOptions};
use glow_ir::{Diagnostic, Function};

pub static INFO: PassInfo = PassInfo {
    name: "verify",
    summary: "Run the IR verifier; fail with its diagnostics if the function is invalid",
    options: &[],
    stats: &[],
    counters: &[],
    create: |_: &PassOptions| Ok(Box::new(Verify)),
};

struct Verify;

impl Pass for Verify {
    fn run(&mut self, f: &mut Function, _cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let diags = glow_ir::verifier::verify(f);
        if diags.iter().any(Diagnostic::is_error) {
            Err(diags)
        } else {
            Ok(false)
        }
    }
}
