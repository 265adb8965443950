//! Pipelines: the lists of pass invocations that `--pass`, `--passes`, `-O`
//! and `--mode` describe.

use crate::pass::{PassInfo, PassOptions};
use crate::registry::PassRegistry;
use crate::{
    alloc_sinking, dead_alloc, dealloc_sinking, dse, fuse_activations, fuse_residual, inplace,
    make_weights_const, optimize_extracts, optimize_inserts, peephole, plan_memory, share_buffers,
};
use glow_ir::diag::did_you_mean;

/// One pass invocation with its options.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub pass: &'static PassInfo,
    pub options: PassOptions,
}

/// An ordered list of pass invocations.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pipeline {
    pub steps: Vec<Step>,
}

/// Optimization modes (the seed commit's `OptimizationMode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    None,
    Train,
    Infer,
}

/// Glow's default order, as typed entries: renaming or removing a pass is a
/// compile error here, not a step that silently drops out of `-O`. A new
/// pass joins `-O` by adding its `INFO` at the right place, with a comment
/// saying why there. Each constraint on the order:
pub static INFER: &[&PassInfo] = &[
    // Simplify first, so later passes see canonical views and copies.
    &peephole::INFO,
    // Drop dead writes before they extend lifetimes.
    &dse::INFO,
    // Residual additions, then activations, into their convolution, before
    // anything shares the intermediate buffers that fusing erases; the
    // residual first, since the activation follows the addition.
    &fuse_residual::INFO,
    &fuse_activations::INFO,
    // Turn contiguous insert/extract into views before sharing looks at them.
    &optimize_inserts::INFO,
    &optimize_extracts::INFO,
    // Element-wise results take over an input buffer that dies there, before
    // sharing: in-place is exact (no lifetime test), sharing merges the rest.
    &inplace::INFO,
    // The heart: reuse buffers whose live intervals do not overlap.
    &share_buffers::INFO,
    // Sharing leaves copies with equal source and dest; erase them.
    &peephole::INFO,
    // Shrink lifetimes to the uses that remain after sharing.
    &dealloc_sinking::INFO,
    &alloc_sinking::INFO,
    // Sharing can make more writes dead.
    &dse::INFO,
    // Remove the allocs sharing emptied, and unused views.
    &dead_alloc::INFO,
    // A check that nothing wrote a const weight.
    &make_weights_const::INFO,
    // Last: offsets follow the final alloc/dealloc positions, which any
    // later pass could move.
    &plan_memory::INFO,
];

/// What training leaves out of [`INFER`]: gradients need every buffer
/// distinct, and the pre-activation results that fusing erases. The arena
/// plan stays: it only follows the explicit lifetimes.
pub static TRAIN_SKIPS: &[&PassInfo] = &[
    &share_buffers::INFO,
    &inplace::INFO,
    &fuse_residual::INFO,
    &fuse_activations::INFO,
];

/// The names of the modes, as `--mode`, `--compare-passes` and
/// `glow-reduce --miscompile` take them.
pub const MODE_NAMES: [&str; 3] = ["none", "train", "infer"];

impl Mode {
    pub fn parse(s: &str) -> Result<Mode, String> {
        match s {
            "none" => Ok(Mode::None),
            "train" => Ok(Mode::Train),
            "infer" => Ok(Mode::Infer),
            other => {
                let hint = did_you_mean(other, MODE_NAMES)
                    .map(|m| format!("did you mean `{m}`? "))
                    .unwrap_or_default();
                Err(format!(
                    "unknown mode `{other}`; {hint}expected none, train or infer"
                ))
            }
        }
    }

    /// The passes this mode runs with the built-in registry, in order (a
    /// registry can add passes: [`PassRegistry::mode_passes`]).
    pub fn passes(self) -> Vec<&'static PassInfo> {
        PassRegistry::empty().mode_passes(self)
    }
}

/// An unknown pass name that is (close to) a mode says so: `--passes=infer`
/// is a common slip for `-O`, and `infr` in a pipeline that takes modes is
/// a misspelled mode more likely than a pass.
fn mode_hint(registry: &PassRegistry, name: &str, err: String) -> String {
    if MODE_NAMES.contains(&name) {
        return format!(
            "`{name}` is a mode, not a pass: use --mode={name}{}",
            if name == "infer" { " or -O" } else { "" }
        );
    }
    let near_pass = did_you_mean(name, registry.passes().iter().map(|p| p.name)).is_some();
    match did_you_mean(name, MODE_NAMES) {
        Some(m) if !near_pass => format!(
            "unknown pass or mode `{name}`; did you mean the mode `{m}`? (modes: {}; \
             --list-passes lists the passes)",
            MODE_NAMES.join(", ")
        ),
        _ => err,
    }
}

impl Pipeline {
    /// The pipeline of a mode with the built-in registry.
    pub fn for_mode(mode: Mode) -> Pipeline {
        Pipeline::of(&mode.passes())
    }

    /// The given passes in order, each with default options.
    pub fn of(passes: &[&'static PassInfo]) -> Pipeline {
        let steps = passes
            .iter()
            .map(|&pass| Step {
                pass,
                options: PassOptions::default(),
            })
            .collect();
        Pipeline { steps }
    }

    /// Parses `a,b{key=value,k2=v2},c`, naming passes of `registry`.
    pub fn parse(registry: &PassRegistry, text: &str) -> Result<Pipeline, String> {
        let mut steps = Vec::new();
        for item in split_top_level(text)? {
            let item = item.trim();
            if item.is_empty() {
                return Err(format!("empty pass name in `{text}`"));
            }
            let (name, opts) = match item.find('{') {
                Some(open) => {
                    let Some(body) = item[open + 1..].strip_suffix('}') else {
                        return Err(format!("unterminated options in `{item}`"));
                    };
                    (item[..open].trim(), parse_options(body)?)
                }
                None => (item, PassOptions::default()),
            };
            let pass = registry
                .lookup_or_suggest(name)
                .map_err(|e| mode_hint(registry, name, e))?;
            for key in opts.values.keys() {
                if !pass.options.iter().any(|o| o.name == key) {
                    let known: Vec<&str> = pass.options.iter().map(|o| o.name).collect();
                    let hint = match did_you_mean(key, known.iter().copied()) {
                        Some(s) => format!("; did you mean `{s}`?"),
                        None if known.is_empty() => format!("; `{}` takes no options", pass.name),
                        None => format!("; its options are {}", known.join(", ")),
                    };
                    return Err(format!("pass `{}` has no option `{key}`{hint}", pass.name));
                }
            }
            (pass.create)(&opts).map_err(|e| format!("pass `{}`: {e}", pass.name))?;
            steps.push(Step {
                pass,
                options: opts,
            });
        }
        Ok(Pipeline { steps })
    }

    /// `a,b{k=v}` text of this pipeline (used by crash reproducers).
    pub fn to_text(&self) -> String {
        let items: Vec<String> = self
            .steps
            .iter()
            .map(|s| {
                if s.options.values.is_empty() {
                    s.pass.name.to_string()
                } else {
                    let kv: Vec<String> = s
                        .options
                        .values
                        .iter()
                        .map(|(k, v)| format!("{k}={v}"))
                        .collect();
                    format!("{}{{{}}}", s.pass.name, kv.join(","))
                }
            })
            .collect();
        items.join(",")
    }
}

fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut items = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced `}}` in `{text}`"));
                }
            }
            ',' if depth == 0 => {
                items.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced `{{` in `{text}`"));
    }
    items.push(&text[start..]);
    Ok(items)
}

fn parse_options(body: &str) -> Result<PassOptions, String> {
    let mut opts = PassOptions::default();
    for kv in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(format!("expected `key=value`, found `{kv}`"));
        };
        opts.values
            .insert(k.trim().to_string(), v.trim().to_string());
    }
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn train_is_infer_without_the_sharing_passes() {
        let train = Mode::Train.passes();
        assert_eq!(train.len(), INFER.len() - TRAIN_SKIPS.len());
        for skipped in TRAIN_SKIPS {
            assert!(INFER.iter().any(|p| p.is(skipped)));
            assert!(!train.iter().any(|p| p.is(skipped)));
        }
        assert!(Mode::Infer
            .passes()
            .iter()
            .any(|p| p.is(&share_buffers::INFO)));
        assert!(Mode::None.passes().is_empty());
    }

    #[test]
    fn every_infer_step_is_a_builtin_and_the_text_round_trips() {
        let registry = PassRegistry::builtin();
        let infer = Pipeline::for_mode(Mode::Infer);
        for step in &infer.steps {
            assert!(registry
                .lookup(step.pass.name)
                .is_some_and(|p| p.is(step.pass)));
        }
        assert_eq!(
            Pipeline::parse(&registry, &infer.to_text()).expect("parses"),
            infer
        );
        assert!(infer
            .steps
            .last()
            .is_some_and(|s| s.pass.is(&plan_memory::INFO)));
    }

    #[test]
    fn unknown_options_and_passes_are_errors() {
        let registry = PassRegistry::builtin();
        let e = Pipeline::parse(&registry, "dse{x=1}").unwrap_err();
        assert_eq!(e, "pass `dse` has no option `x`; `dse` takes no options");
        let e = Pipeline::parse(&registry, "dse,nothing").unwrap_err();
        assert!(e.starts_with("unknown pass `nothing`"), "{e}");
        // Modes are not passes; a near-miss of a mode suggests it.
        let e = Pipeline::parse(&registry, "infer").unwrap_err();
        assert!(e.contains("is a mode, not a pass"), "{e}");
        let e = Pipeline::parse(&registry, "trian").unwrap_err();
        assert!(e.contains("did you mean the mode `train`?"), "{e}");
        // A near-miss of a pass keeps the pass suggestion.
        let e = Pipeline::parse(&registry, "dsee").unwrap_err();
        assert!(e.contains("did you mean `dse`?"), "{e}");
    }
}
