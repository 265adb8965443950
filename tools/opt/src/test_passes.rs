//! Passes that miscompile on purpose, for the tests of the bisector and
//! the reducer.

use glow_ir::{Diagnostic, Function, InstId, MemberValue, Opcode};
use glow_passes::{Pass, PassContext, PassInfo, PassOptions};

/// Adds one to the value of every splat.
struct BumpSplats;
impl Pass for BumpSplats {
    fn run(&mut self, f: &mut Function, _: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let ids: Vec<InstId> = f.layout.to_vec();
        for i in ids {
            let inst = f.inst_mut(i);
            if inst.opcode != Opcode::Splat {
                continue;
            }
            let k = Opcode::Splat
                .info()
                .member_index("Value")
                .expect("splat has Value");
            let v = inst.members[k]
                .as_ref()
                .and_then(MemberValue::as_float)
                .unwrap_or(0.0);
            inst.members[k] = Some(MemberValue::Float(v + 1.0));
        }
        Ok(true)
    }
}

pub static BUMP_SPLATS: PassInfo = PassInfo {
    name: "test-bump-splats",
    summary: "miscompiles splats",
    options: &[],
    stats: &[],
    counters: &[],
    create: |_: &PassOptions| Ok(Box::new(BumpSplats)),
};
