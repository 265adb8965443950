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
    counters: &[("strip-debugprint", "Erasing one debugprint")],
    create: |_: &PassOptions| Ok(Box::new(StripDebugPrint)),
};

struct StripDebugPrint;

impl Pass for StripDebugPrint {
    fn run(&mut self, f: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
        let mut dead = vec![false; f.insts.len()];
        for i in f.inst_ids() {
            if f.inst(i).opcode == Opcode::DebugPrint && cx.should_execute("strip-debugprint") {
                dead[i.index()] = true;
                cx.debug(|| format!("erasing %{}", f.inst(i).name));
            }
        }
        let removed = erase_marked(f, &dead);
        cx.bump("debugprints-removed", removed as u64);
        Ok(removed > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glow_passes::{Instrumentation, PassManager, Pipeline};

    const SRC: &str = "function f\ndeclare {\n  %x = WeightVar float<2> mutable\n}\ncode {\n  0 %p = debugprint @in %x\n  1 %s = splat @out %x { Value: 1 }\n  2 %q = debugprint @in %x\n}\n";

    #[test]
    fn erases_every_debugprint_and_counts_them() {
        let mut m = glow_ir::parser::parse(SRC.as_bytes()).expect("parses");
        let mut pm = PassManager::new(Pipeline::of(&[&INFO]), Instrumentation::default());
        pm.run(&mut m).expect("the pass succeeds");
        let f = &m.functions[0];
        let left: Vec<&str> = f.inst_ids().map(|i| f.inst(i).name.as_str()).collect();
        assert_eq!(left, ["s"]);
        assert_eq!(
            pm.stats
                .counters
                .get(&("strip-debugprint", "debugprints-removed")),
            Some(&2)
        );
    }

    #[test]
    fn reports_no_change_when_there_is_nothing_to_erase() {
        let mut m = glow_ir::parser::parse(SRC.as_bytes()).expect("parses");
        let f = &mut m.functions[0];
        let mut stats = Default::default();
        let mut pass = (INFO.create)(&PassOptions::default()).expect("no options");
        let mut cx = PassContext::new(INFO.name, &mut stats, None);
        assert_eq!(pass.run(f, &mut cx), Ok(true));
        assert_eq!(pass.run(f, &mut cx), Ok(false));
    }
}
