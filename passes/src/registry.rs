//! The pass registry: a value holding the built-in passes plus any the
//! caller adds, so a downstream crate can build its own opt tool. Names
//! typed on the command line are looked up here; Rust code names a pass by
//! its `INFO` static instead.

use crate::pass::PassInfo;
use crate::pipeline::{Mode, Pipeline, INFER, TRAIN_SKIPS};
use glow_ir::diag::did_you_mean;

/// Every built-in pass, in the order `--list-passes` prints them. A new
/// in-tree pass adds its `INFO` here (and to `pipeline::INFER` if `-O`
/// should run it).
pub static BUILTIN: &[&PassInfo] = &[
    &crate::alloc_sinking::INFO,
    &crate::dead_alloc::INFO,
    &crate::dealloc_sinking::INFO,
    &crate::differentiate::INFO,
    &crate::dse::INFO,
    &crate::fold_batchnorm::INFO,
    &crate::fuse_activations::INFO,
    &crate::fuse_residual::INFO,
    &crate::inplace::INFO,
    &crate::instrument_profile::INFO,
    &crate::make_weights_const::INFO,
    &crate::optimize_extracts::INFO,
    &crate::optimize_inserts::INFO,
    &crate::peephole::INFO,
    &crate::plan_memory::INFO,
    &crate::quantize::INFO,
    &crate::remat::INFO,
    &crate::share_buffers::INFO,
    &crate::verify::INFO,
];

/// The passes a tool knows by name, in registration order, and the
/// pipeline its `-O` runs.
#[derive(Clone, Debug)]
pub struct PassRegistry {
    passes: Vec<&'static PassInfo>,
    /// What `-O` and `--mode=infer` run, in order ([`INFER`] to start with).
    infer: Vec<&'static PassInfo>,
    /// What `--mode=train` leaves out of `infer`.
    train_skips: Vec<&'static PassInfo>,
}

/// Where [`PassRegistry::add_to_pipeline`] puts a pass in `-O`.
#[derive(Clone, Copy, Debug)]
pub enum Place {
    /// Right before the first run of this pass.
    Before(&'static PassInfo),
    /// Right after the last run of this pass.
    After(&'static PassInfo),
}

impl Default for PassRegistry {
    fn default() -> PassRegistry {
        PassRegistry::empty()
    }
}

impl PassRegistry {
    /// A registry with no passes; `-O` still runs [`INFER`].
    pub fn empty() -> PassRegistry {
        PassRegistry {
            passes: Vec::new(),
            infer: INFER.to_vec(),
            train_skips: TRAIN_SKIPS.to_vec(),
        }
    }

    /// The built-in passes (what `glow-opt` knows).
    pub fn builtin() -> PassRegistry {
        PassRegistry {
            passes: BUILTIN.to_vec(),
            ..PassRegistry::empty()
        }
    }

    /// Makes `-O` (and `--mode=infer`, `--mode=train`) run `pass` at
    /// `place`. The pass must be registered, so a reproducer that names it
    /// replays, and the anchor must be in the pipeline. Training runs it
    /// too unless [`PassRegistry::skip_in_train`] says otherwise.
    pub fn add_to_pipeline(&mut self, pass: &'static PassInfo, place: Place) -> Result<(), String> {
        if !self.lookup(pass.name).is_some_and(|p| p.is(pass)) {
            return Err(format!(
                "pass `{}` joins -O only once it is registered",
                pass.name
            ));
        }
        let at = match place {
            Place::Before(anchor) => self.infer.iter().position(|p| p.is(anchor)),
            Place::After(anchor) => self.infer.iter().rposition(|p| p.is(anchor)).map(|i| i + 1),
        };
        let anchor = match place {
            Place::Before(a) | Place::After(a) => a,
        };
        let Some(at) = at else {
            return Err(format!(
                "cannot place `{}` next to `{}`: -O does not run it",
                pass.name, anchor.name
            ));
        };
        self.infer.insert(at, pass);
        Ok(())
    }

    /// Makes `--mode=train` leave `pass` out of the `-O` pipeline (as it
    /// does the passes that merge buffers gradients need apart).
    pub fn skip_in_train(&mut self, pass: &'static PassInfo) -> Result<(), String> {
        if !self.infer.iter().any(|p| p.is(pass)) {
            return Err(format!("-O does not run `{}`", pass.name));
        }
        if !self.train_skips.iter().any(|p| p.is(pass)) {
            self.train_skips.push(pass);
        }
        Ok(())
    }

    /// The passes a mode runs, in order.
    pub fn mode_passes(&self, mode: Mode) -> Vec<&'static PassInfo> {
        match mode {
            Mode::None => Vec::new(),
            Mode::Train => self
                .infer
                .iter()
                .copied()
                .filter(|p| !self.train_skips.iter().any(|s| s.is(p)))
                .collect(),
            Mode::Infer => self.infer.clone(),
        }
    }

    /// The pipeline of a mode.
    pub fn pipeline_for(&self, mode: Mode) -> Pipeline {
        Pipeline::of(&self.mode_passes(mode))
    }

    /// Adds a pass. Its name must be kebab-case and not taken, and its
    /// summary not empty: a pass that could not be named on the command
    /// line, or would hide another, is a programming error to report early.
    pub fn register(&mut self, pass: &'static PassInfo) -> Result<(), String> {
        let name = pass.name;
        let kebab = !name.is_empty()
            && !name.starts_with('-')
            && !name.ends_with('-')
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !kebab {
            return Err(format!("pass name `{name}` is not kebab-case"));
        }
        if self.lookup(name).is_some() {
            return Err(format!("a pass named `{name}` is already registered"));
        }
        if pass.summary.trim().is_empty() {
            return Err(format!("pass `{name}` has no summary"));
        }
        self.passes.push(pass);
        Ok(())
    }

    /// The registered passes, in registration order.
    pub fn passes(&self) -> &[&'static PassInfo] {
        &self.passes
    }

    /// The registered pass called `name`.
    pub fn lookup(&self, name: &str) -> Option<&'static PassInfo> {
        self.passes.iter().copied().find(|p| p.name == name)
    }

    /// A registered pass by name, or an error naming the closest ones.
    pub fn lookup_or_suggest(&self, name: &str) -> Result<&'static PassInfo, String> {
        self.lookup(name).ok_or_else(|| {
            let names = self.passes.iter().map(|p| p.name);
            match did_you_mean(name, names) {
                Some(s) => format!(
                    "unknown pass `{name}`; did you mean `{s}`? (--list-passes lists them all)"
                ),
                None => format!(
                    "unknown pass `{name}`; known passes: {}",
                    self.passes
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        })
    }

    /// Every debug counter the registered passes declare.
    pub fn counter_names(&self) -> Vec<&'static str> {
        self.passes
            .iter()
            .flat_map(|p| p.counters.iter().map(|c| c.0))
            .collect()
    }

    /// The `--list-passes` text: one line per pass with its summary, then
    /// one indented line per option it takes (`name{key=value}`) and per
    /// debug counter (`--debug-counter=NAME`).
    pub fn list_text(&self) -> String {
        let width = self.passes.iter().map(|p| p.name.len()).max().unwrap_or(0);
        let width = width.max(20);
        // Option and counter keys share one column, wide enough for all.
        let keys = self.passes.iter().flat_map(|p| {
            let counters = p.counters.iter().map(|c| c.0.len() + 9);
            p.options.iter().map(|o| o.name.len() + 6).chain(counters)
        });
        let kw = keys.max().unwrap_or(0).max(width - 4);
        let mut out = String::new();
        for p in &self.passes {
            out.push_str(&format!("  {:<width$} {}\n", p.name, p.summary));
            for o in p.options {
                let key = format!("{{{}=...}}", o.name);
                out.push_str(&format!("      {key:<kw$} {}\n", o.help));
            }
            for (c, help) in p.counters {
                let key = format!("counter {c}");
                out.push_str(&format!("      {key:<kw$} {help}\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pass::PassOptions;

    #[test]
    fn builtin_names_are_unique_kebab_case() {
        let mut r = PassRegistry::empty();
        for p in BUILTIN {
            r.register(p).expect("a built-in pass registers");
        }
        assert_eq!(r.passes().len(), BUILTIN.len());
    }

    static EXTRA: PassInfo = PassInfo {
        name: "extra-pass",
        summary: "does nothing",
        options: &[],
        stats: &[],
        counters: &[],
        create: |_: &PassOptions| Err("not for running".into()),
    };
    static CLASH: PassInfo = PassInfo {
        name: "dse",
        summary: "another dse",
        options: &[],
        stats: &[],
        counters: &[],
        create: |_: &PassOptions| Err("not for running".into()),
    };
    static BAD_NAME: PassInfo = PassInfo {
        name: "Bad_Name",
        summary: "x",
        options: &[],
        stats: &[],
        counters: &[],
        create: |_: &PassOptions| Err("not for running".into()),
    };

    #[test]
    fn a_registered_pass_joins_o_where_asked_and_train_can_skip_it() {
        use crate::pipeline::Mode;
        let mut r = PassRegistry::builtin();
        assert_eq!(
            r.add_to_pipeline(&EXTRA, Place::After(&crate::dse::INFO)),
            Err("pass `extra-pass` joins -O only once it is registered".into())
        );
        r.register(&EXTRA).expect("registers");
        // After the last dse (it runs twice), before the first peephole.
        r.add_to_pipeline(&EXTRA, Place::After(&crate::dse::INFO))
            .expect("dse is in -O");
        r.add_to_pipeline(&EXTRA, Place::Before(&crate::peephole::INFO))
            .expect("peephole is in -O");
        let infer = r.mode_passes(Mode::Infer);
        assert_eq!(infer.len(), INFER.len() + 2);
        assert!(infer[0].is(&EXTRA));
        let last_dse = infer.iter().rposition(|p| p.is(&crate::dse::INFO));
        assert!(infer[last_dse.expect("dse") + 1].is(&EXTRA));
        assert_eq!(
            r.mode_passes(Mode::Train)
                .iter()
                .filter(|p| p.is(&EXTRA))
                .count(),
            2
        );
        r.skip_in_train(&EXTRA).expect("in -O");
        assert!(!r.mode_passes(Mode::Train).iter().any(|p| p.is(&EXTRA)));
        // The built-in registry's pipeline is unchanged.
        assert_eq!(
            PassRegistry::builtin().mode_passes(Mode::Infer).len(),
            INFER.len()
        );
        assert_eq!(
            r.add_to_pipeline(&EXTRA, Place::Before(&crate::quantize::INFO)),
            Err("cannot place `extra-pass` next to `quantize`: -O does not run it".into())
        );
        assert_eq!(
            r.skip_in_train(&crate::quantize::INFO),
            Err("-O does not run `quantize`".into())
        );
    }

    #[test]
    fn registering_adds_after_the_builtins_and_rejects_clashes() {
        let mut r = PassRegistry::builtin();
        r.register(&EXTRA).expect("a new name registers");
        assert!(r.lookup("extra-pass").is_some_and(|p| p.is(&EXTRA)));
        assert!(r.passes().last().is_some_and(|p| p.is(&EXTRA)));
        assert!(r
            .list_text()
            .ends_with("extra-pass           does nothing\n"));
        assert_eq!(
            r.register(&EXTRA),
            Err("a pass named `extra-pass` is already registered".into())
        );
        assert_eq!(
            r.register(&CLASH),
            Err("a pass named `dse` is already registered".into())
        );
        assert_eq!(
            r.register(&BAD_NAME),
            Err("pass name `Bad_Name` is not kebab-case".into())
        );
        assert!(PassRegistry::builtin().lookup("extra-pass").is_none());
    }

    #[test]
    fn unknown_names_get_a_suggestion() {
        let r = PassRegistry::builtin();
        let e = r.lookup_or_suggest("peepole").unwrap_err();
        assert!(e.contains("did you mean `peephole`?"), "{e}");
    }
}

/// Every builtin pass, on every input of the lit suite's pass tests, uses
/// only the statistics and debug counters its `PassInfo` declares (the
/// context asserts it in debug builds).
#[cfg(all(test, debug_assertions))]
mod declared {
    use super::BUILTIN;
    use crate::counter::DebugCounters;
    use crate::pass::{Pass, PassContext, PassInfo, PassOptions, Stats};
    use glow_ir::{Diagnostic, Function};
    use std::path::{Path, PathBuf};

    fn gir_files(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                gir_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "gir") {
                out.push(p);
            }
        }
    }

    #[test]
    fn builtin_passes_use_only_declared_names() {
        let mut files = Vec::new();
        gir_files(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../test/passes"),
            &mut files,
        );
        files.sort();
        let mut functions = Vec::new();
        for path in &files {
            let text = std::fs::read(path).expect("test file reads");
            let Ok(m) = glow_ir::parser::parse(&text) else {
                continue;
            };
            functions.extend(
                m.functions
                    .into_iter()
                    .filter(|f| glow_ir::verifier::verify(f).is_empty()),
            );
        }
        assert!(functions.len() > 50, "{} functions", functions.len());
        let mut runs = 0;
        for info in BUILTIN {
            let Ok(mut pass) = (info.create)(&PassOptions::default()) else {
                continue;
            };
            for f in &functions {
                let mut f = f.clone();
                let (mut stats, mut counters) = (Stats::default(), DebugCounters::default());
                let mut cx =
                    PassContext::for_pass(info, &mut stats, None).with_counters(&mut counters);
                let _ = pass.run(&mut f, &mut cx);
                runs += 1;
            }
        }
        assert!(runs > BUILTIN.len() * 50, "{runs} runs");
    }

    struct Undeclared;
    impl Pass for Undeclared {
        fn run(&mut self, _: &mut Function, cx: &mut PassContext) -> Result<bool, Vec<Diagnostic>> {
            cx.bump("typo", 1);
            Ok(false)
        }
    }
    static UNDECLARED: PassInfo = PassInfo {
        name: "test-undeclared",
        summary: "bumps a statistic it does not declare",
        options: &[],
        stats: &[("declared", "A statistic it declares")],
        counters: &[],
        create: |_: &PassOptions| Ok(Box::new(Undeclared)),
    };

    #[test]
    #[should_panic(expected = "bumps statistic `typo`, which its PassInfo.stats does not declare")]
    fn an_undeclared_statistic_is_caught() {
        let mut f = glow_ir::parser::parse(b"function f\ndeclare {\n}\ncode {\n}\n")
            .expect("parses")
            .functions
            .remove(0);
        let mut stats = Stats::default();
        let mut cx = PassContext::for_pass(&UNDECLARED, &mut stats, None);
        let _ = Undeclared.run(&mut f, &mut cx);
    }
}
