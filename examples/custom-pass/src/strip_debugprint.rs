//! `strip-debugprint`: erase every `debugprint` instruction, as a release
//! build of a model wants. A `debugprint` writes nothing the function
//! computes and no instruction names its result, so erasing it changes no
//! output.

use glow_ir::{Diagnostic, Function, Opcode};
use glow_passes::edit::erase_marked;
use glow_passes::{Pass, PassContext, PassInfo, PassOptions};

pub static INFO: PassInfo = PassInfo {
    name: "strip-debugprint",
    summary: "Erase every debugprint instruction",
    options: &[],
    stats: &[(
        "debugprints-removed",
        "Number of debugprint instructions erased",
    )],
    create: |_: &PassOptions| Ok(Box::new(StripDebugPrint)),
};

struct StripDebugPrint;

impl Pass for StripDebugPrint {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let mut dead = vec![false; f.insts.len()];
        for i in f.inst_ids() {
            if f.inst(i).opcode == Opcode::DebugPrint {
                dead[i.index()] = true;
                cx.debug(|| format!("erasing %{}", f.inst(i).name));
            }
        }
        let removed = erase_marked(f, &dead);
        cx.bump("debugprints-removed", removed as u64);
        Ok(removed > 0)
    }
}
